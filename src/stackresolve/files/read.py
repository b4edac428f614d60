"""The one way stackresolve reads a file it did not write itself into memory: a regular file (or standard input
when the user names `-`), never more than a limit, decoded with replacement.

A FIFO, a device or a directory is refused rather than read (reading a FIFO with no writer blocks forever; a
device like /dev/zero never ends); a file larger than the limit is refused, or for a log its last part is read
and the caller is told so.

`parse_structured` is the one way such a text becomes data when it is JSON, TOML or YAML: bounded in size and
depth, every failure one line."""

from __future__ import annotations

import os
import re
import stat
import sys

from stackresolve.model.record import record

MIB = 1024 * 1024


class InputTooLarge(ValueError):
    pass


class NotARegularFile(ValueError):
    pass


@record
class TextInput:
    text: str
    name: str  # as the user named it ("-" for standard input)
    truncated: bool = False  # only the last `limit` bytes were read
    encoding_note: str = ""  # "" for UTF-8; otherwise how the bytes were decoded


def read_regular_bytes(path: str | os.PathLike, limit: int) -> bytes:
    """The bytes of a regular file of at most `limit` bytes. Raises OSError (missing, unreadable),
    NotARegularFile, or InputTooLarge."""
    fd = os.open(path, os.O_RDONLY | getattr(os, "O_NONBLOCK", 0) | getattr(os, "O_CLOEXEC", 0))
    try:
        info = os.fstat(fd)
        if not stat.S_ISREG(info.st_mode):
            raise NotARegularFile(_kind(info.st_mode))
        if info.st_size > limit:
            raise InputTooLarge(f"{info.st_size} bytes, more than the {limit // MIB} MiB accepted")
        chunks, total = [], 0
        while True:
            chunk = os.read(fd, min(1 << 20, limit + 1 - total))
            if not chunk:
                break
            chunks.append(chunk)
            total += len(chunk)
            if total > limit:  # grew while we read it
                raise InputTooLarge(f"more than the {limit // MIB} MiB accepted")
        return b"".join(chunks)
    finally:
        os.close(fd)


def read_text(name: str, limit: int, *, keep_tail: bool = False, stdin=None) -> TextInput:
    """A text input as the user named it: a path to a regular file, or "-" for standard input. With
    `keep_tail`, an input over the limit is not refused: its last `limit` bytes are read (logs end with the
    error), from the start of a line. Raises OSError, NotARegularFile, InputTooLarge."""
    if name == "-":
        stream = stdin if stdin is not None else sys.stdin
        data = _read_stream(getattr(stream, "buffer", None) or _Encoded(stream), limit, keep_tail)
    else:
        try:
            data = read_regular_bytes(name, limit)
        except InputTooLarge:
            if not keep_tail:
                raise
            data = _tail(name, limit)
    truncated = len(data) > limit
    if truncated:
        data = data[-limit:]
        newline = data.find(b"\n")
        if 0 <= newline < 4096:
            data = data[newline + 1:]
    text, note = decode(data)
    return TextInput(text, name, truncated, note)


class _Encoded:
    """A text stream read as UTF-8 bytes (test runners give text-only stdin)."""

    def __init__(self, stream):
        self.stream = stream

    def read(self, size: int) -> bytes:
        return self.stream.read(size).encode("utf-8", "replace")


def decode(data: bytes) -> tuple[str, str]:
    """(text, note): UTF-8 (with or without a byte-order mark); UTF-16 where the content is UTF-16; else UTF-8
    with undecodable bytes replaced, said in the note.

    The encoding is read from the content, not from a byte-order mark alone: FF FE may be junk before an ASCII
    log, and a Windows log written by PowerShell `>` (UTF-16 with a mark) and then appended by cmd `>>` (one byte
    a character) holds both. Each part is decoded as what it is (see _utf16_parts)."""
    if data.startswith(b"\xef\xbb\xbf"):
        data = data[3:]
    if b"\x00" in data:
        parts = _utf16_parts(data)
        if any(is_utf16 for is_utf16, _ in parts):
            big_endian = data.startswith(b"\xfe\xff")
            texts, bad = [], False
            for is_utf16, chunk in parts:
                if is_utf16:
                    texts.append(chunk.decode("utf-16-be" if big_endian else "utf-16-le", "replace"))
                else:
                    try:
                        texts.append(chunk.decode("utf-8").replace("\x00", ""))
                    except UnicodeDecodeError:
                        texts.append(chunk.decode("utf-8", "replace").replace("\x00", ""))
                        bad = True
            text = "".join(texts).removeprefix("\ufeff")
            kinds = {is_utf16 for is_utf16, chunk in parts if chunk.strip(b"\x00")}
            if kinds == {True}:
                return text, "decoded as UTF-16"
            return text, ("decoded part by part: UTF-16 and UTF-8 parts (a log written by PowerShell and appended "
                          "by another program?)" + ("; undecodable bytes were replaced" if bad else ""))
    try:
        return data.decode("utf-8"), ""
    except UnicodeDecodeError as exc:
        note = f"not UTF-8 (first bad byte at offset {exc.start}): undecodable bytes were replaced"
        if data.startswith((b"\xff\xfe", b"\xfe\xff")):
            note = "starts with a UTF-16 byte-order mark but is not UTF-16: read as UTF-8, " + note
        return data.decode("utf-8", "replace"), note


# Text of UTF-16 is a run of two-byte units whose high byte is 0 for every ASCII and Latin-1 character: "E\0r\0"
# (little-endian, Windows) or "\0E\0r" (big-endian). Eight such characters in a row do not happen in UTF-8 text.
_UTF16_RUNS = {False: r"(?:[^\x00]\x00){8,}", True: r"(?:\x00[^\x00]){8,}"}


def _utf16_parts(data: bytes) -> list[tuple[bool, bytes]]:
    """`data` cut into (is UTF-16, bytes) parts. The runs of UTF-16 are found by their zero bytes; a stretch
    outside them is UTF-16 too (characters beyond Latin-1: "中" is 2D 4E) when it has an even length and no
    one-byte line end, and one-byte text (UTF-8) otherwise: what cmd `>>` appends ends with its own line end."""
    # lazy: no start-up gain (already loaded by then); kept beside its use
    import re

    big_endian = data.startswith(b"\xfe\xff")
    body_start = 2 if data.startswith((b"\xff\xfe", b"\xfe\xff")) else 0
    runs = [m.span() for m in re.compile(_UTF16_RUNS[big_endian].encode()).finditer(data, body_start)]
    parts: list[tuple[bool, bytes]] = []
    position = body_start
    for start, end in [*runs, (len(data), len(data))]:
        gap = data[position:start]
        if gap:
            parts.append((len(gap) % 2 == 0 and b"\n" not in gap.replace(b"\n\x00", b""), gap))
        if end > start:
            parts.append((True, data[start:end]))
        position = end
    return parts


def _read_stream(stream, limit: int, keep_tail: bool) -> bytes:
    data = b""
    while True:
        chunk = stream.read(1 << 20)
        if not chunk:
            return data
        data += chunk
        if len(data) > limit:
            if not keep_tail:
                raise InputTooLarge(f"more than the {limit // MIB} MiB accepted")
            data = data[-(limit + 1):]  # keep one byte more, so the caller sees it was cut


def _tail(path: str, limit: int) -> bytes:
    fd = os.open(path, os.O_RDONLY | getattr(os, "O_NONBLOCK", 0))
    try:
        size = os.fstat(fd).st_size
        os.lseek(fd, max(0, size - limit - 1), os.SEEK_SET)
        chunks = []
        while True:
            chunk = os.read(fd, 1 << 20)
            if not chunk or sum(map(len, chunks)) > limit:
                break
            chunks.append(chunk)
        return b"".join(chunks)[-(limit + 1):]
    finally:
        os.close(fd)


def _kind(mode: int) -> str:
    if stat.S_ISDIR(mode):
        return "a directory"
    if stat.S_ISFIFO(mode):
        return "a FIFO (named pipe)"
    if stat.S_ISCHR(mode) or stat.S_ISBLK(mode):
        return "a device"
    if stat.S_ISSOCK(mode):
        return "a socket"
    return "not a regular file"


# -- structured documents (JSON, TOML, YAML) -----------------------------------------------------------------
# One rule for every document a user hands us (a lock, a pylock, a fleet inventory, a node list): at most
# MAX_DOCUMENT characters, containers nested at most MAX_DEPTH deep, at most MAX_EXPANSION values per character
# (only YAML's aliases can exceed one: a 400-byte "billion laughs" walks as 5 million values), and any parse failure
# is one line. The bounds are far above what the tool writes (a lock nests 5 deep, a kubectl node list
# about 12) and far below what would exhaust the interpreter: the parsers recurse (RecursionError near 1,000
# levels), and tomllib spends quadratic time on one long dotted key (8,000 parts: 1.1 s; 50,000: a minute).
MAX_DEPTH = 64
MAX_EXPANSION = 10
MAX_DOCUMENT = 64 * MIB
STRUCTURED_KINDS = ("JSON", "TOML", "YAML")
# MAX_DEPTH key parts joined by dots (bare or quoted), anywhere: a dotted key nests that deep. A string value with
# that many dotted words is refused too; no document of ours holds one.
_TOML_DOTTED_RUN = re.compile(r"""(?:(?:[A-Za-z0-9_-]+|"[^"\n]{0,200}"|'[^'\n]{0,200}')[ \t]*\.[ \t]*){%d}"""
                              % MAX_DEPTH)


class StructuredInputError(ValueError):
    """A document that cannot be read: the message is one line naming the document. `syntax`: it does not parse
    (rather than being too large or too deep), so the caller may try another kind."""

    def __init__(self, message: str, syntax: bool = False):
        super().__init__(message)
        self.syntax = syntax


def parse_structured(text: str, name: str, kind: str):
    """The value of a JSON, TOML or YAML document `text` (called `name` in messages). Raises
    StructuredInputError, one line, for a document that does not parse, is larger than MAX_DOCUMENT, nests deeper
    than MAX_DEPTH or expands to more than MAX_EXPANSION values per character; nothing else escapes (RecursionError,
    a too-long integer, a YAML tag are all one line)."""
    if kind not in STRUCTURED_KINDS:
        raise ValueError(f"unknown document kind {kind!r}")
    if len(text) > MAX_DOCUMENT:
        raise StructuredInputError(f"{name}: larger than the {MAX_DOCUMENT // MIB} MiB accepted for a {kind} "
                                   f"document")
    if kind == "TOML" and _deep_dotted_key(text):
        raise StructuredInputError(f"{name}: TOML nested too deeply (a dotted key of more than {MAX_DEPTH} "
                                   f"parts)")
    try:
        value = _PARSERS[kind](text)
    except RecursionError:
        raise StructuredInputError(f"{name}: {kind} nested too deeply (more than {MAX_DEPTH} levels)") from None
    except StructuredInputError:
        raise
    except Exception as exc:  # noqa: BLE001 - every parser's own error (and ValueError for a 5,000-digit number)
        raise StructuredInputError(f"{name}: not valid {kind} ({_one_line(exc)})", syntax=True) from None
    _check_shape(value, name, kind, MAX_EXPANSION * len(text) + 1000)
    return value


def _deep_dotted_key(text: str) -> bool:
    """A TOML key of more than MAX_DEPTH dotted parts. A key never spans lines, so only the lines with that many
    dots are searched (a 7 MB pylock: 0.1 s instead of 2.7 s for the whole text)."""
    if text.count(".") < MAX_DEPTH:
        return False
    return any(line.count(".") >= MAX_DEPTH and _TOML_DOTTED_RUN.search(line) for line in text.splitlines())


def _one_line(exc: Exception) -> str:
    text = " ".join(str(exc).split())
    cleaned = "".join(c if c.isprintable() else "?" for c in text)
    return cleaned if len(cleaned) <= 160 else cleaned[:157] + "..."


def _parse_json(text: str):
    # lazy: no start-up gain (already loaded by then); kept beside its use
    import json

    return json.loads(text)


def _parse_toml(text: str):
    # lazy: start-up (the TOML reader, only where TOML is read)
    if sys.version_info >= (3, 11):
        import tomllib
    else:  # pragma: no cover - Python 3.10
        import tomli as tomllib

    return tomllib.loads(text)


def _parse_yaml(text: str):
    # lazy: start-up (PyYAML ~10 ms)
    import yaml

    # The pure-Python safe loader: plain data only, and its recursion ends in RecursionError (libyaml's compiled
    # composer has no such guard).
    return yaml.load(text, Loader=yaml.SafeLoader)  # noqa: S506


_PARSERS = {"JSON": _parse_json, "TOML": _parse_toml, "YAML": _parse_yaml}


def _check_shape(value, name: str, kind: str, max_nodes: int) -> None:
    """Depth and size of a parsed document, walked without recursion (each YAML alias walked again, as a reader
    would)."""
    stack = [(value, 1)]
    nodes = 0
    while stack:
        item, depth = stack.pop()
        nodes += 1
        if nodes > max_nodes:
            raise StructuredInputError(f"{name}: {kind} expands to more than {MAX_EXPANSION} values per character "
                                       f"(aliases of aliases?)")
        if isinstance(item, dict):
            children = item.values()
        elif isinstance(item, list):
            children = item
        else:
            continue
        if depth > MAX_DEPTH:
            raise StructuredInputError(f"{name}: {kind} nested too deeply (more than {MAX_DEPTH} levels)")
        stack.extend((child, depth + 1) for child in children)
