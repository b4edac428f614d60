"""The one gate between stackresolve and the terminal: every character written to standard output or standard
error passes `safe`, so that nothing a probe, a log, a lock or a cache hands us can drive the terminal.

Control characters (C0 but tab and newline, DEL, C1: ESC, BEL, CSI, OSC, a bare carriage return) and the
bidirectional-override characters that reorder how a line reads (Trojan Source, CVE-2021-42574) are shown as
Python escapes (`\\x1b`, `\\u202e`), the style the streams already use for characters their encoding cannot hold.
In JSON output the same text is a JSON escape of the same character, so documents stay valid and mean the same.
"""

from __future__ import annotations

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
        self._stream.write(safe(text))
        return len(text)

    def writelines(self, lines) -> None:
        for line in lines:
            self.write(line)

    def __getattr__(self, name):
        return getattr(self._stream, name)


def guard_standard_streams() -> None:
    """Route sys.stdout and sys.stderr through `safe` (called once, by the program's entry point)."""
    import sys

    for name in ("stdout", "stderr"):
        stream = getattr(sys, name)
        if stream is not None and not isinstance(stream, SafeStream):
            setattr(sys, name, SafeStream(stream))
