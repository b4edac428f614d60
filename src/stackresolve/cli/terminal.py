"""The one gate between stackresolve and the terminal: every character written to standard output or standard
error passes `safe`, so that nothing a probe, a log, a lock or a cache hands us can drive the terminal.

Control characters (C0 but tab and newline, DEL, C1: ESC, BEL, CSI, OSC, a bare carriage return) and the
bidirectional-override characters that reorder how a line reads (Trojan Source, CVE-2021-42574) are shown as
Python escapes (`\\x1b`, `\\u202e`), the style the streams already use for characters their encoding cannot hold.
In JSON output the same text is a JSON escape of the same character, so documents stay valid and mean the same.

After the gate, and only on a terminal that wants colour, our own words that say something went wrong are
coloured (`paint`): the escape sequences are ours, added to text that has already passed `safe`.
"""

from __future__ import annotations

import os
import re

_KEPT = {"\t", "\n"}
_BIDI = [*range(0x202A, 0x202F), *range(0x2066, 0x206A)]
ESCAPES = {code: ascii(chr(code))[1:-1] if code < 0x100 else f"\\u{code:04x}"
           for code in [*range(0x20), *range(0x7F, 0xA0), *_BIDI] if chr(code) not in _KEPT}


def safe(text: str) -> str:
    """`text` with every character that could act on a terminal written as a visible escape."""
    return text.translate(ESCAPES)


class SafeStream:
    """A text stream that writes through `safe`; everything else is the wrapped stream's."""

    def __init__(self, stream):
        self._stream = stream

    def write(self, text: str) -> int:
        self._stream.write(paint(safe(text), self._stream))
        return len(text)

    def writelines(self, lines) -> None:
        for line in lines:
            self.write(line)

    def __getattr__(self, name):
        return getattr(self._stream, name)


def guard_standard_streams() -> None:
    """Route sys.stdout and sys.stderr through `safe` (called once, by the program's entry point)."""
    # lazy: no start-up gain (already loaded by then); kept beside its use
    import sys

    for name in ("stdout", "stderr"):
        stream = getattr(sys, name)
        if stream is not None and not isinstance(stream, SafeStream):
            setattr(sys, name, SafeStream(stream))


# -- colour: the words that say something went wrong stand out, on a terminal only --------------------------
_ALARM = re.compile(r"(?m)(?<=^stackresolve: )(?:error|warning|note)(?=:)|(?<=\[)(?:error|warning)(?=\])"
                    r"|^(?:ERRORS?|WARNINGS?)(?= \(\d+\)$)")
_STYLES = {"error": "red", "warning": "yellow", "note": "cyan"}


def colour_wanted(stream) -> bool:
    """Colour only on a terminal, and never with NO_COLOR set (no-color.org) or TERM=dumb."""
    if os.environ.get("NO_COLOR") or os.environ.get("TERM") == "dumb":
        return False
    try:
        return stream.isatty()
    except (AttributeError, ValueError):
        return False


def paint(text: str, stream) -> str:
    """`text` with our error/warning words coloured where `stream` is a terminal that wants colour; else as is
    (and a JSON document always as is)."""
    if text.startswith("{") or not _ALARM.search(text) or not colour_wanted(stream):
        return text
    # lazy: no start-up gain (already loaded by then); kept beside its use
    import click

    return _ALARM.sub(lambda m: click.style(m.group(0), fg=_STYLES[m.group(0).lower().rstrip("s")], bold=True),
                      text)
