"""Scanning a long log quickly: each pattern is first narrowed to the lines around the literal text every
match of it must contain (derived from the pattern itself), and only those lines are searched with the full
regular expression. The text is cleaned first (terminal escapes removed).

The decoding of the log's bytes happens before (cli: read_input); what reaches here is text.
"""

from __future__ import annotations

import re
from functools import lru_cache
from typing import Iterable, Iterator, Sequence

from stackresolve.knowledge.errors import cached_regex

_EVIDENCE_MAX = 240  # characters of a matched line shown as evidence


# Compiled on first use (see cached_regex): importing this module compiles nothing.
_ANSI = r"\x1b\[[0-9;]*[A-Za-z]"


# Any token that looks like a library file TF dlopens; only names in the [[library]] table count.
_LIBRARY_TOKEN = r"(?i)(?<![\w.])(?:lib[A-Za-z0-9_]+\.so(?:\.\d+)+|[A-Za-z0-9_]+64_\d+\.dll|nvcuda\.dll)(?![\w])"


_LINES_BEFORE = 3  # lines searched before the line holding a pattern's literal (patterns spanning lines)


_LINES_AFTER = 4


_MIN_NEEDLE = 3  # shorter literals narrow nothing


_MAX_HITS = 400  # more occurrences than this: search the whole text at once


def _sre_parser():
    try:
        import re._parser as parser  # Python >= 3.11
    except ImportError:  # pragma: no cover - Python 3.10
        import sre_parse as parser  # type: ignore[no-redef]
    return parser


_MAX_SPELLINGS = 32  # a literal run with alternatives ([-_], (?:a|b), x?) is kept while it has this few spellings


def _spellings(items, parser) -> frozenset[str] | None:
    """All strings the parsed sequence can match, when it is made only of literals, small literal
    classes ([-_]), alternatives of such and optional parts; None otherwise."""
    out = frozenset({""})
    for op, av in items:
        if op is parser.LITERAL:
            parts = frozenset({chr(av)})
        elif op is parser.AT:
            continue
        elif op is parser.IN and av and all(o is parser.LITERAL for o, _ in av) and len(av) <= 4:
            parts = frozenset(chr(a) for _, a in av)
        elif op is parser.SUBPATTERN:
            parts = _spellings(list(av[-1]), parser)
        elif op is parser.BRANCH:
            alternatives = [_spellings(list(alt), parser) for alt in av[1]]
            if not all(a is not None for a in alternatives):
                return None
            parts = frozenset().union(*alternatives)  # type: ignore[arg-type]
        elif op is parser.MAX_REPEAT and av[0] in (0, 1) and av[1] == 1:
            sub = _spellings(list(av[2]), parser)
            if sub is None:
                return None
            parts = sub | ({""} if av[0] == 0 else set())
        else:
            return None
        if parts is None:
            return None
        out = frozenset(a + b for a in out for b in parts)
        if len(out) > _MAX_SPELLINGS:
            return None
    return out


def _required_literals(items, parser) -> frozenset[str] | None:
    """The best set of literal strings one of which every match of the parsed sequence contains."""
    best: frozenset[str] | None = None
    run: frozenset[str] = frozenset({""})

    def consider(candidate: frozenset[str] | None) -> None:
        nonlocal best
        if candidate and min(map(len, candidate)) > 0 and (best is None or min(map(len, candidate)) > min(map(len, best))):
            best = candidate

    def flush() -> None:
        nonlocal run
        consider(run)
        run = frozenset({""})

    for op, av in items:
        if op is parser.AT:  # \b, ^, $ consume nothing: the run goes on
            continue
        spellings = _spellings([(op, av)], parser)
        if spellings is not None:
            extended = frozenset(a + b for a in run for b in spellings)
            if len(extended) <= _MAX_SPELLINGS:
                run = extended
                continue
            flush()
            run = spellings
            continue
        flush()
        if op is parser.SUBPATTERN:
            consider(_required_literals(list(av[-1]), parser))
        elif op in (parser.MAX_REPEAT, parser.MIN_REPEAT) or op is getattr(parser, "POSSESSIVE_REPEAT", None):
            low, _high, sub = av
            if low >= 1:
                consider(_required_literals(list(sub), parser))
        elif op is parser.BRANCH:
            alternatives = [_required_literals(list(alt), parser) for alt in av[1]]
            if alternatives and all(alternatives):
                consider(frozenset().union(*alternatives))  # type: ignore[arg-type]
    flush()
    return best


@lru_cache(maxsize=None)
def pattern_needles(pattern: str) -> tuple[tuple[str, ...], tuple[str, ...], bool] | None:
    """Literal strings one of which every match of `pattern` contains (all of them, and a smaller set
    of parts they share that gates the same text in fewer passes), and whether the pattern ignores
    case (then the strings are lower-cased, to be looked for in the lower-cased text); None when no
    useful literal can be derived (the pattern is then searched in the whole text)."""
    parser = _sre_parser()
    try:
        parsed = parser.parse(pattern)
    except Exception:  # noqa: BLE001 - any parse failure just means "no shortcut"
        return None
    ignore_case = bool(parsed.state.flags & re.IGNORECASE) or "(?i" in pattern
    needles = _required_literals(list(parsed), parser)
    if not needles or min(map(len, needles)) < _MIN_NEEDLE:
        return None
    if ignore_case:
        needles = frozenset(n.lower() for n in needles)
    return tuple(sorted(needles)), tuple(sorted(_fewer(needles))), ignore_case


def _fewer(needles: frozenset[str]) -> frozenset[str]:
    """Fewer needles for the same gate: spellings sharing a long enough beginning or end are looked for
    by that part (one pass over the text instead of one per spelling)."""
    import os.path

    def merge(items: set[str], key, common) -> set[str]:
        groups: dict[str, set[str]] = {}
        for item in items:
            groups.setdefault(key(item), set()).add(item)
        out: set[str] = set()
        for members in groups.values():
            shared = common(members)
            out |= {shared} if len(members) > 1 and len(shared) >= 5 else members
        return out

    reduced = merge(set(needles), lambda n: n[:5], lambda m: os.path.commonprefix(sorted(m)))
    reduced = merge(reduced, lambda n: n[-5:], lambda m: os.path.commonprefix([x[::-1] for x in m])[::-1])
    if len(reduced) > 1:
        common = _common_substring(reduced)
        if len(common) >= max(_MIN_NEEDLE, min(map(len, reduced)) // 2) or (len(common) >= _MIN_NEEDLE and len(reduced) > 6):
            return frozenset({common})
    return frozenset(reduced)


def _common_substring(strings: Iterable[str]) -> str:
    """The longest string contained in all of `strings`."""
    strings = sorted(strings, key=len)
    shortest, others = strings[0], strings[1:]
    for size in range(len(shortest), 0, -1):
        for start in range(len(shortest) - size + 1):
            part = shortest[start : start + size]
            if all(part in other for other in others):
                return part
    return ""


class _Text:
    """A cleaned text with the look-ups that make searching it fast: its lower-cased copy (made once,
    when a case-insensitive pattern needs it) and the positions of the literals patterns need."""

    def __init__(self, text: str) -> None:
        self.text = text
        self._lower: str | None = None
        self._hits: dict[tuple[str, bool], list[int] | None] = {}

    @property
    def lower(self) -> str:
        if self._lower is None:
            lowered = self.text.lower()
            # a few characters change length when lower-cased; positions would then not line up
            self._lower = lowered if len(lowered) == len(self.text) else self.text
        return self._lower

    def _positions(self, needle: str, ignore_case: bool) -> list[int] | None:
        """Where `needle` occurs (at most _MAX_HITS + 1 positions; None: more than that)."""
        key = (needle, ignore_case)
        if key not in self._hits:
            haystack = self.lower if ignore_case else self.text
            found: list[int] | None = []
            i = haystack.find(needle)
            while i != -1:
                found.append(i)  # type: ignore[union-attr]
                if len(found) > _MAX_HITS:  # type: ignore[arg-type]
                    found = None
                    break
                i = haystack.find(needle, i + 1)
            self._hits[key] = found
        return self._hits[key]

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

    def finditer(self, regex: re.Pattern[str]) -> Iterator[re.Match[str]]:
        """Every match of `regex` in the text, in order (as regex.finditer(text) would find them)."""
        info = pattern_needles(regex.pattern)
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

    def search(self, regex: re.Pattern[str]) -> re.Match[str] | None:
        return next(self.finditer(regex), None)



def _clean(text: str) -> str:
    if "\r" in text:
        text = text.replace("\r\n", "\n").replace("\r", "\n")
    if "\x1b" in text:
        text = cached_regex(_ANSI).sub("", text)
    return text


def _line_of(text: str, pos: int) -> tuple[str, int]:
    start = text.rfind("\n", 0, pos) + 1
    end = text.find("\n", pos)
    line = text[start : end if end != -1 else len(text)].strip()
    if len(line) > _EVIDENCE_MAX:
        line = line[: _EVIDENCE_MAX - 3] + "..."
    return line, text.count("\n", 0, pos) + 1
