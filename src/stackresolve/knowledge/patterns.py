"""What every match of a regular expression must contain: the literal strings ("needles") one of which each match
holds, read from the pattern's own parse. The scan of a log (explain/scan.py) looks for them before running the
pattern; the error knowledge derives them once, when it is built, and keeps them in its snapshot.
"""

from __future__ import annotations

import re
from functools import lru_cache
from typing import Iterable

_MIN_NEEDLE = 3  # shorter literals narrow nothing


def _sre_parser():
    # lazy: start-up (sre_parse, only this path)
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


def _prefix_spellings(items, parser) -> frozenset[str] | None:
    """The spellings of the longest spellable beginning of a sequence (None when it starts with no literal)."""
    out: frozenset[str] | None = None
    for index in range(1, len(items) + 1):
        spellings = _spellings(items[:index], parser)
        if spellings is None:
            break
        out = spellings
    return out if out and min(map(len, out)) > 0 else None


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
        if op is parser.SUBPATTERN:  # the run goes on into the group's spellable beginning ("python 3." of
            # python ?(?P<v>[23]\.\d+)): a longer literal, so a rarer one
            head = _prefix_spellings(list(av[-1]), parser)
            if head:
                extended = frozenset(a + b for a in run for b in head)
                if len(extended) <= _MAX_SPELLINGS:
                    consider(extended)
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
    # lazy: no start-up gain (already loaded by then); kept beside its use
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
