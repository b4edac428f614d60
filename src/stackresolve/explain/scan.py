"""Scanning a long log quickly: each pattern is first narrowed to the lines around the literal text every
match of it must contain (derived from the pattern itself), and only those lines are searched with the full
regular expression. The text is cleaned first (terminal escapes removed).

The decoding of the log's bytes happens before (cli: read_input); what reaches here is text.
"""

from __future__ import annotations

import re
from functools import lru_cache
from bisect import bisect_right
from itertools import accumulate
from typing import Iterator, Sequence

from stackresolve.knowledge.errors import cached_regex
from stackresolve.knowledge.patterns import pattern_needles

_EVIDENCE_MAX = 240  # characters of a matched line shown as evidence
_DIGITS_AS_ZERO = bytes.maketrans(b"123456789", b"000000000")
_DIGITS_AS_ZERO_STR = str.maketrans("123456789", "000000000")


# Compiled on first use (see cached_regex): importing this module compiles nothing.
# Terminal escape sequences a log may carry (ECMA-48): CSI (colours), OSC (window title, clipboard writes) ended by
# BEL or ST, and two-character escapes; they are noise to the scan and must never be printed back.
_ANSI = r"\x1b(?:\[[0-?]*[ -/]*[@-~]|\][^\x07\x1b]*(?:\x07|\x1b\\)?|[@-Z\\-_])"


# Any token that looks like a library file TF dlopens; only names in the [[library]] table count.
_LIBRARY_TOKEN = r"(?i)(?<![\w.])(?:lib[A-Za-z0-9_]+\.so(?:\.\d+)+|[A-Za-z0-9_]+64_\d+\.dll|nvcuda\.dll)(?![\w])"


_LINES_BEFORE = 3  # lines searched before the line holding a pattern's literal (patterns spanning lines)


_LINES_AFTER = 4


_MAX_HITS = 400  # more occurrences than this: search the whole text at once


_DERIVE = object()  # finditer's needles: derive them from the pattern


class _Text:
    """A cleaned text with the look-ups that make searching it fast: its lower-cased copy (made once,
    when a case-insensitive pattern needs it) and the positions of the literals patterns need.

    A long log repeats itself: progress lines, per-step lines that differ in their numbers only. The literals
    are looked for in the distinct line shapes (the lines lower-cased, every digit read as 0), each found once
    however often its lines repeat, and stand for every line of that shape: a superset of the lines that hold
    the literal, which the regular expression then checks."""

    def __init__(self, text: str, carriage_returns: Sequence[int] = ()) -> None:
        self.text = text
        # where a lone carriage return (a progress bar redrawing its line) was read as a line break: the scan sees
        # the redrawn lines apart, and line numbers count newlines only, as editors do
        self.carriage_returns = carriage_returns
        self._lower: str | None = None
        self._hits: dict[bytes, list[int] | None] = {}
        self._shapes: tuple[str, list[int], list[list[int]], list[int]] | None = None

    @property
    def lower(self) -> str:
        if self._lower is None:
            lowered = self.text.lower()
            # a few characters change length when lower-cased; positions would then not line up
            self._lower = lowered if len(lowered) == len(self.text) else self.text
        return self._lower

    def _line_shapes(self) -> tuple[bytes, list[int], list[list[int]], list[int]]:
        """(the distinct shapes joined by newlines, where each starts there, the lines of each shape, where
        each line starts in the text). Shapes are UTF-8 bytes, lower-cased and their digits read as 0 by bytes'
        own table look-ups in C (a str copy of a log with one non-ASCII character takes 4 bytes a character);
        a newline byte is a newline in UTF-8."""
        if self._shapes is None:
            encoded = self.text.encode("utf-8", "surrogatepass").lower().translate(_DIGITS_AS_ZERO)
            ascii_only = len(encoded) == len(self.text)  # then a byte offset is a character offset
            lines = encoded.split(b"\n")
            del encoded
            lengths = (len(line) for line in lines) if ascii_only else \
                (len(line.decode("utf-8", "surrogatepass")) for line in lines)
            starts = [0, *accumulate(length + 1 for length in lengths)][:len(lines)]
            groups: dict[bytes, list[int]] = {}
            for number, line in enumerate(lines):
                groups.setdefault(line, []).append(number)
            del lines
            shapes = list(groups)
            at = [0, *accumulate(len(shape) + 1 for shape in shapes[:-1])]
            self._shapes = (b"\n".join(shapes), at, list(groups.values()), starts)
        return self._shapes

    def line_number(self, pos: int) -> int:
        """The 1-based line of a position, counting newlines only (as an editor numbers the log's lines)."""
        return bisect_right(self._line_shapes()[3], pos) - bisect_right(self.carriage_returns, pos)

    def _positions(self, needle: str, ignore_case: bool) -> list[int] | None:
        """Where the lines holding `needle` start (at most _MAX_HITS + 1 lines; None: more than that). Lower-case
        and digits read as 0 whatever the pattern's case: a superset of the lines, which the pattern checks."""
        key = needle.lower().encode("utf-8", "surrogatepass").translate(_DIGITS_AS_ZERO)
        if key not in self._hits:
            if b"\n" in key or not key.isascii():  # the shapes lower-case ASCII letters only
                self._hits[key] = self._plain_positions(needle, ignore_case)
                return self._hits[key]
            joined, at, groups, starts = self._line_shapes()
            lines: set[int] = set()
            i = joined.find(key)
            while i != -1:
                shape = bisect_right(at, i) - 1
                lines.update(groups[shape])
                if len(lines) > _MAX_HITS:
                    break
                i = joined.find(key, at[shape + 1] if shape + 1 < len(at) else len(joined))
            self._hits[key] = None if len(lines) > _MAX_HITS else [starts[n] for n in lines]
        return self._hits[key]

    def _plain_positions(self, needle: str, ignore_case: bool) -> list[int] | None:
        haystack = self.lower if ignore_case else self.text
        found: list[int] = []
        i = haystack.find(needle)
        while i != -1:
            found.append(i)
            if len(found) > _MAX_HITS:
                return None
            i = haystack.find(needle, i + 1)
        return found

    def _all_positions(self, needles: Sequence[str], ignore_case: bool) -> list[int] | None:
        positions: list[int] = []
        for needle in needles:
            hits = self._positions(needle, ignore_case)
            if hits is None:
                return None
            positions += hits
        return positions

    def _windows(self, positions: list[int]) -> list[tuple[int, int]]:
        text = self.text
        out: list[tuple[int, int]] = []
        for pos in sorted(positions):
            start = text.rfind("\n", 0, pos)
            for _ in range(_LINES_BEFORE):
                if start <= 0:
                    break
                start = text.rfind("\n", 0, start)
            start = max(start + 1, 0)
            end = pos
            for _ in range(_LINES_AFTER + 1):
                end = text.find("\n", end + 1)
                if end == -1:
                    end = len(text)
                    break
            if out and start <= out[-1][1]:
                out[-1] = (out[-1][0], max(out[-1][1], end))
            else:
                out.append((start, end))
        return out

    def finditer(self, regex: re.Pattern[str] | str, needles=_DERIVE) -> Iterator[re.Match[str]]:
        """Every match of `regex` in the text, in order (as regex.finditer(text) would find them). A pattern given as
        text is compiled only when a line holds one of its literals; `needles` are its pattern_needles when known
        (kept in the knowledge snapshot), derived from the pattern otherwise."""
        info = pattern_needles(regex if isinstance(regex, str) else regex.pattern) if needles is _DERIVE else needles
        if isinstance(regex, str):
            if info is not None and not self._any_hit(info):
                return
            regex = cached_regex(regex)
        if info is None:
            yield from regex.finditer(self.text)
            return
        every, fewer, ignore_case = info
        positions = self._all_positions(fewer, ignore_case)
        if positions is None and every != fewer:  # a shared part is too common: try the full spellings
            positions = self._all_positions(every, ignore_case)
        if positions is None:  # a very common literal: one pass over the whole text is cheaper
            yield from regex.finditer(self.text)
            return
        if not positions:
            return
        windows = self._windows(positions)
        if sum(end - start for start, end in windows) * 3 > len(self.text):
            yield from regex.finditer(self.text)
            return
        for start, end in windows:
            yield from regex.finditer(self.text, start, end)

    def search(self, regex: re.Pattern[str] | str, needles=_DERIVE) -> re.Match[str] | None:
        return next(self.finditer(regex, needles), None)

    def finditer_in_shapes(self, shape_pattern: bytes, regex: re.Pattern[str] | str, continued: tuple[str, ...] = ()
                           ) -> Iterator[re.Match[str]]:
        """The matches of `regex` on the lines whose shape (lower-cased, digits read as 0) matches `shape_pattern`:
        the shapes are searched once, however many lines share them, and only their lines with the regex (a dense
        log's thousands of lines that differ in their numbers cost one search). With `continued` (lower-case words),
        the regex reads such a line and the next, where the next one, its indentation left out, starts with one of
        them (a text wrapped onto the next line). A regex given as text is compiled only when some line may hold it."""
        joined, at, groups, starts = self._line_shapes()
        found: set[int] = set()
        for m in _bytes_regex(shape_pattern).finditer(joined):
            found.update(groups[bisect_right(at, m.start()) - 1])
        text = self.text
        for number in sorted(found):
            start = starts[number]
            end = text.find("\n", start)
            if end == -1:
                end = len(text)
            elif continued:
                after = text.find("\n", end + 1)
                after = len(text) if after == -1 else after
                if not text[end + 1:min(after, end + 200)].lstrip(" \t").lower().startswith(continued):
                    continue
                end = after
            if isinstance(regex, str):
                regex = cached_regex(regex)
            yield from regex.finditer(text, start, end)

    def _any_hit(self, info) -> bool:
        """Whether some line may hold a match (the look-ups are remembered for the search that follows)."""
        every, fewer, ignore_case = info
        positions = self._all_positions(fewer, ignore_case)
        if positions is None and every != fewer:
            positions = self._all_positions(every, ignore_case)
        return positions is None or bool(positions)



@lru_cache(maxsize=None)
def _bytes_regex(pattern: bytes) -> re.Pattern[bytes]:
    return re.compile(pattern)


def shape_of(text: str) -> str:
    """A text as the line shapes spell it: lower-cased, its digits read as 0."""
    return text.lower().translate(_DIGITS_AS_ZERO_STR)


def _clean(text: str) -> str:
    return _clean_text(text)[0]


def _clean_text(text: str) -> tuple[str, list[int]]:
    """The text without terminal escapes, its line breaks as newlines, and where a lone carriage return (a
    progress bar's redraw) became one (for line numbers that count newlines only)."""
    if "\x1b" in text:
        text = cached_regex(_ANSI).sub("", text)
    returns: list[int] = []
    if "\r" in text:
        text = text.replace("\r\n", "\n")
        i = text.find("\r")
        while i != -1:
            returns.append(i)
            i = text.find("\r", i + 1)
        text = text.replace("\r", "\n")
    return text, returns


def _line_of(scan: _Text, pos: int) -> tuple[str, int]:
    text = scan.text
    start = text.rfind("\n", 0, pos) + 1
    end = text.find("\n", pos)
    line = text[start : end if end != -1 else len(text)].strip()
    if len(line) > _EVIDENCE_MAX:
        line = line[: _EVIDENCE_MAX - 3] + "..."
    return line, scan.line_number(pos)
