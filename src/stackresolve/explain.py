"""Explain an error message or a whole log: which known errors it contains, what they mean, the likely
cause, the fix, and every version the text reveals; and turn that into the typed request for a fix
(`fix_request`).

Pure functions, no I/O: the knowledge (constraints/errors.toml, parsed by
stackresolve.knowledge.errors; TensorFlow's tested builds and compiled architectures, from the
knowledge base) is passed in. Output contract: `Explanation.to_json_dict()` is the
"stackresolve/explain@1" shape of shared/DESIGN.md (extra fields are additions, never renames).

A whole multi-megabyte log is searched quickly: each pattern is first narrowed to the lines around
the literal text every match of it must contain (derived from the pattern itself), and only those
lines are searched with the full regular expression.
"""

from __future__ import annotations

import re
from dataclasses import dataclass, field
from functools import lru_cache
from typing import Iterable, Iterator, Protocol, Sequence

from packaging.specifiers import InvalidSpecifier, SpecifierSet
from packaging.version import Version

from stackresolve.knowledge.errors import (
    COMPONENTS,
    FRAMEWORK_NAMES,
    SEVERITIES,
    Cause,
    ErrorKnowledge,
    KnownError,
    LibraryName,
    VersionHint,
    cached_regex,
    group_component,
    placeholder_regex,
)

SCHEMA = "stackresolve/explain@1"

# Compiled on first use (see cached_regex): importing this module compiles nothing.
# Terminal escape sequences a log may carry (ECMA-48): CSI (colours), OSC (window title, clipboard writes) ended by
# BEL or ST, and two-character escapes; they are noise to the scan and must never be printed back.
_ANSI = r"\x1b(?:\[[0-?]*[ -/]*[@-~]|\][^\x07\x1b]*(?:\x07|\x1b\\)?|[@-Z\\-_])"
# Any token that looks like a library file TF dlopens; only names in the [[library]] table count.
_LIBRARY_TOKEN = r"(?i)(?<![\w.])(?:lib[A-Za-z0-9_]+\.so(?:\.\d+)+|[A-Za-z0-9_]+64_\d+\.dll|nvcuda\.dll)(?![\w])"
_EVIDENCE_MAX = 240


@dataclass(frozen=True)
class Match:
    """One known error found in the text, with everything the text tells about it."""

    code: str
    category: str
    severity: str
    wanted: dict[str, str]
    found: dict[str, str]
    meaning: str
    cause: str
    causes: tuple[str, ...]
    fix: str
    source: str
    evidence: str  # the first line that matched (trimmed)
    line: int  # 1-based line number of that line
    count: int  # how many times the message occurs
    libraries: tuple[str, ...] = ()
    pins: tuple[str, ...] = ()
    rank: int = 50
    framework: str = "any"  # who prints the message: tensorflow, pytorch, jax, or any
    spans: tuple[tuple[int, int], ...] = ()  # where each occurrence lies in the cleaned text

    def covered_by(self, other: "Match") -> bool:
        """Every occurrence lies inside a longer one of `other`, of the same kind of problem: the same
        message, read by a more specific record (a multi-line PyTorch traceback around a loader error)."""
        return other.category == self.category and other.code != self.code and all(
            any(o_start <= start and end <= o_end and (o_end - o_start) > (end - start)
                for o_start, o_end in other.spans)
            for start, end in self.spans)

    def to_json_dict(self) -> dict:
        return {
            "code": self.code,
            "category": self.category,
            "wanted": dict(self.wanted),
            "found": dict(self.found),
            "meaning": self.meaning,
            "cause": self.cause,
            "fix": self.fix,
            "source": self.source,
            "severity": self.severity,
            "causes": list(self.causes),
            "evidence": self.evidence,
            "line": self.line,
            "count": self.count,
            "libraries": list(self.libraries),
            "pins": list(self.pins),
            "framework": self.framework,
        }


@dataclass(frozen=True)
class Explanation:
    matches: tuple[Match, ...]
    versions_seen: dict[str, tuple[str, ...]] = field(default_factory=dict)

    @property
    def known(self) -> bool:
        """True when at least one known message was recognised."""
        return bool(self.matches)

    @property
    def has_problem(self) -> bool:
        """True when something other than harmless noise was recognised."""
        return any(m.severity != "info" for m in self.matches)

    @property
    def problems(self) -> tuple[Match, ...]:
        """The matches that are not harmless noise, most serious first."""
        return tuple(m for m in self.matches if m.severity != "info")

    @property
    def framework(self) -> str | None:
        """The framework the text comes from (tensorflow, pytorch, jax), None when it does not say."""
        return log_framework(self)

    def to_json_dict(self) -> dict:
        return {
            "schema": SCHEMA,
            "matches": [m.to_json_dict() for m in self.matches],
            "versions_seen": {k: list(v) for k, v in self.versions_seen.items()},
        }


# ----------------------------------------------------------------------------------------------
# searching a long text quickly
# ----------------------------------------------------------------------------------------------

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


# ----------------------------------------------------------------------------------------------
# versions
# ----------------------------------------------------------------------------------------------


def normalize_version(component: str, value: str) -> str:
    """Canonical spelling of a version read from a log.

    cuDNN integers as old TensorFlow prints them (7201) become 7.2.1; compute capabilities written
    without a dot (86, from sm_86) become 8.6.
    """
    value = value.strip()
    if component == "gpu":  # a name; nvidia-smi marks one it cut short with "..."
        return value
    value = value.rstrip(".")
    if component == "cudnn" and value.isdigit() and len(value) == 4:  # cuDNN <= 8: major*1000 + minor*100 + patch
        n = int(value)
        return f"{n // 1000}.{(n % 1000) // 100}.{n % 100}"
    if component == "cudnn" and value.isdigit() and len(value) == 5:  # cuDNN >= 9: major*10000 + minor*100 + patch
        n = int(value)
        return f"{n // 10000}.{(n % 10000) // 100}.{n % 100}"
    if component in ("cuda", "driver_cuda") and value.isdigit() and len(value) in (4, 5):
        n = int(value)  # CUDA's own integer: major*1000 + minor*10 (12080 is 12.8)
        return f"{n // 1000}.{(n % 1000) // 10}"
    if component == "cc" and value.isdigit() and len(value) in (2, 3):
        return f"{value[:-1]}.{value[-1]}"
    if component == "sm" and value.isdigit():
        return f"sm_{value}"
    if component in ("torch", "jax", "jaxlib", "jax_plugin"):
        return value.replace("%2B", "+").replace("%2b", "+")  # a wheel's URL spells + as %2B
    if component == "sm_supported":
        return " ".join(value.split())
    return value


def _add(values: list[str], value: str) -> None:
    if value and value not in values:
        values.append(value)


def _version(value: str) -> Version | None:
    from stackresolve.model.numbers import parse_version

    return parse_version(value)  # None for what breaks the rule for numbers (a 5,000-digit "version" in a log)


def _line_of_version(line: str) -> SpecifierSet | None:
    """"11.x" (any minor of 11) or "2.4" (any 2.4 patch) as a specifier: ==11.*, ==2.4.*."""
    try:
        return SpecifierSet(f"=={line[:-2] if line.endswith('.x') else line}.*")
    except InvalidSpecifier:
        return None


def _less_specific(short: str, long: str) -> bool:
    """True when `short` only names a line `long` belongs to (2.4 vs 2.4.1, 11.x vs 11.2)."""
    if short == long or "|" in short or "|" in long:
        return False
    spec, version = _line_of_version(short), _version(long)
    return bool(spec is not None and version is not None and len(short.split(".")) < len(long.split(".")) and version in spec)


def _dedupe_versions(values: Iterable[str]) -> tuple[str, ...]:
    """Drop values another value makes more precise (2.4 when 2.4.1 is there)."""
    values = list(dict.fromkeys(values))
    return tuple(v for v in values if not any(_less_specific(v, other) for other in values))


def _compatible(a: str, b: str) -> bool:
    """Can one version be both? "11.x" and "11.2" can, "10.1" and "10.1.0" can, "10.1" and "10.2" cannot."""
    if a == b:
        return True
    if a.endswith(".x") and b.endswith(".x"):
        return False
    if a.endswith(".x") or b.endswith(".x"):
        line, exact = (a, b) if a.endswith(".x") else (b, a)
        spec, version = _line_of_version(line), _version(exact)
        return bool(spec is not None and version is not None and version in spec)
    va, vb = _version(a), _version(b)
    return va is not None and va == vb


def _meet(a: str, b: str) -> str:
    """The more specific of two compatible versions."""
    return b if a.endswith(".x") and not b.endswith(".x") else a


def intersect_candidates(left: Sequence[str], right: Sequence[str]) -> tuple[str, ...]:
    """Versions both candidate lists allow ("11.x" allows "11.2"), in the order of `left`."""
    out: list[str] = []
    for a in left:
        for b in right:
            if _compatible(a, b):
                _add(out, _meet(a, b))
    return tuple(out)


def _library_table(libraries: Sequence[LibraryName]) -> dict[str, LibraryName]:
    return {lib.name.lower(): lib for lib in libraries}


def library_candidates(names: Iterable[str], libraries: Sequence[LibraryName]) -> dict[str, tuple[str, ...]]:
    """Component -> candidate versions implied by library file names (intersected across names).

    Names the table does not know are ignored. If two names contradict each other, the
    candidates of all of them are kept (a log can show two CUDA lines on the loader path).
    """
    table = _library_table(libraries)
    per_component: dict[str, list[tuple[str, ...]]] = {}
    for name in names:
        lib = table.get(name.lower())
        if lib is None or not lib.versions:
            continue
        per_component.setdefault(lib.component, []).append(lib.versions)
    out: dict[str, tuple[str, ...]] = {}
    for component, lists in per_component.items():
        current: tuple[str, ...] = lists[0]
        for other in lists[1:]:
            met = intersect_candidates(current, other)
            if met:
                current = met
            else:  # contradiction: keep everything, most recent evidence last
                current = tuple(dict.fromkeys(current + other))
        out[component] = current
    return out


def _extract(scan: _Text, hints: Sequence[VersionHint], libraries: Sequence[LibraryName]) -> dict[str, tuple[str, ...]]:
    seen: dict[str, list[str]] = {}
    for hint in hints:
        # a hint with a fixed value says the same thing however often it matches: its first match will do
        found = (m for m in [scan.search(hint.regex)] if m) if hint.value else scan.finditer(hint.regex)
        for m in found:
            if hint.value:
                value = hint.value
            else:
                groups = m.groupdict()
                if groups.get("v"):
                    value = groups["v"]
                elif groups.get("v_major") and groups.get("v_minor"):
                    value = f"{groups['v_major']}.{groups['v_minor']}"
                else:
                    continue
            _add(seen.setdefault(hint.key, []), normalize_version(hint.key, value))
    if libraries:
        names = [m.group(0) for m in scan.finditer(cached_regex(_LIBRARY_TOKEN))]
        for component, candidates in library_candidates(names, libraries).items():
            seen[f"{component}_from_libraries"] = list(candidates)
    out: dict[str, tuple[str, ...]] = {}
    for key in sorted(seen):
        values = seen[key]
        keep_all = key in ("os", "gpu") or key.endswith("_from_libraries")
        out[key] = tuple(values) if keep_all else _dedupe_versions(values)
    return out


def extract_versions(
    text: str, hints: Sequence[VersionHint], libraries: Sequence[LibraryName] = ()
) -> dict[str, tuple[str, ...]]:
    """Every version the text reveals, by key (cuda, cudnn, cc, driver, tf, python, ...).

    `<component>_from_libraries` holds what the library file names mentioned anywhere in the text
    (loaded or not) imply, e.g. {"cuda_from_libraries": ("11.x",)}.
    """
    return _extract(_Text(_clean(text)), hints, libraries)


# ----------------------------------------------------------------------------------------------
# matching
# ----------------------------------------------------------------------------------------------


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


def _render(template: str, values: dict[str, str], *, strict: bool = False) -> str | None:
    """Fill {name} / {name|default} placeholders. With `strict`, a placeholder that has neither a
    value nor a default makes the whole text unknown (None) instead of "(unknown)"."""
    missing = False

    def sub(m: re.Match[str]) -> str:
        nonlocal missing
        value = values.get(m.group(1), "")
        if value:
            return value
        if m.group(2) is not None:
            return m.group(2)
        missing = True
        return "(unknown)"

    out = placeholder_regex().sub(sub, template)
    return None if strict and missing else out


def _order_causes(error: KnownError, scan: _Text) -> list[Cause]:
    """Causes whose `when` is in the text first, then the unconditional ones, then those with an
    unmatched `when`, and last those whose `unless` is in the text; file order within each."""

    def group(cause: Cause) -> int:
        if cause.unless is not None and scan.search(cause.unless):
            return 3
        if cause.when is None:
            return 1
        return 0 if scan.search(cause.when) else 2

    return sorted(error.causes, key=group)  # sorted() is stable


def _seen_values(versions_seen: dict[str, tuple[str, ...]]) -> dict[str, str]:
    """seen_<key> placeholders: the single value the text shows for a key."""
    out: dict[str, str] = {}
    for key, values in versions_seen.items():
        plain = [v for v in values if "|" not in v]
        if len(plain) == 1:
            out[f"seen_{key}"] = plain[0]
    return out


def frameworks_seen(versions_seen: dict[str, tuple[str, ...]]) -> tuple[str, ...]:
    """The frameworks a text shows: their paths, imports and names ("framework" hints), and their
    versions (torch, jax/jaxlib, tf), in the order tensorflow, pytorch, jax."""
    named = set(versions_seen.get("framework", ()))
    if versions_seen.get("torch"):
        named.add("pytorch")
    if versions_seen.get("jax") or versions_seen.get("jaxlib"):
        named.add("jax")
    if versions_seen.get("tf"):
        named.add("tensorflow")
    return tuple(f for f in FRAMEWORK_NAMES if f in named)


def log_framework(explanation: Explanation) -> str | None:
    """The framework a log comes from. A message only one framework prints says it (the most serious
    such problem first), unless the text shows one other framework alone and a problem of that one too;
    without such a message, the one framework the text shows; None when it shows none or several."""
    specific = [m.framework for m in explanation.problems if m.framework in FRAMEWORK_NAMES]
    seen = frameworks_seen(explanation.versions_seen)
    if len(seen) == 1 and (not specific or seen[0] in specific):
        return seen[0]
    return specific[0] if specific else None


def _match_error(
    error: KnownError,
    scan: _Text,
    versions_seen: dict[str, tuple[str, ...]],
    libraries: Sequence[LibraryName],
) -> Match | None:
    found_matches = list(scan.finditer(error.regex))
    if not found_matches:
        return None
    text = scan.text
    groups: dict[str, str] = {}
    libs: list[str] = []
    for m in found_matches:
        for name, value in m.groupdict().items():
            if not value:
                continue
            if name == "lib":
                _add(libs, value)
            else:
                groups.setdefault(name, value)

    wanted: dict[str, str] = {}
    found: dict[str, str] = {}
    for name, value in groups.items():
        role, component = group_component(name)
        if role in ("wanted", "found") and component in COMPONENTS and component not in (wanted if role == "wanted" else found):
            (wanted if role == "wanted" else found)[component] = normalize_version(component, value)

    for component, candidates in library_candidates(libs, libraries).items():
        if component in wanted or component == "driver":
            continue
        elsewhere = versions_seen.get(f"{component}_from_libraries", ())
        narrowed = intersect_candidates(candidates, elsewhere) if elsewhere else ()
        wanted[component] = "|".join(narrowed or candidates)

    for key in error.context:
        values = versions_seen.get(key, ())
        if len(values) == 1 and key not in found:
            found[key] = values[0]

    values = dict(groups)
    for name, value in groups.items():  # name__2: the same name in another alternative of the pattern
        if "__" in name:
            values.setdefault(name.split("__", 1)[0], value)
    values.update(_seen_values(versions_seen))
    named = frameworks_seen(versions_seen)
    if len(named) == 1:
        values["framework_name"] = FRAMEWORK_NAMES[named[0]]
    for role, known in (("wanted", wanted), ("found", found)):
        for component, value in known.items():
            values[f"{role}_{component}"] = value.replace("|", " or ")
    # versions the record itself states for what the message does not name (protobuf <=3.20.x, ...)
    for role, known, templates in (("wanted", wanted, error.wanted), ("found", found, error.found)):
        for component, template in templates:
            if component in known:
                continue
            rendered = _render(template, values, strict=True)
            if rendered:
                known[component] = rendered
                values[f"{role}_{component}"] = rendered
    values["libs"] = ", ".join(libs)

    causes = _order_causes(error, scan)
    chosen = causes[0]
    evidence, line = _line_of(text, found_matches[0].start())
    return Match(
        code=error.code,
        category=error.category,
        severity=error.severity,
        wanted=wanted,
        found=found,
        meaning=_render(error.meaning, values) or "",
        cause=_render(chosen.text, values) or "",
        causes=tuple(_render(c.text, values) or "" for c in causes),
        fix=_render(chosen.fix or error.fix, values) or "",
        source=error.source,
        evidence=evidence,
        line=line,
        count=len(found_matches),
        libraries=tuple(libs),
        pins=error.pins,
        rank=error.rank,
        framework=error.framework,
        spans=tuple((m.start(), m.end()) for m in found_matches),
    )


def explain_text(
    text: str,
    errors: ErrorKnowledge | Sequence[KnownError],
    *,
    libraries: Sequence[LibraryName] | None = None,
    hints: Sequence[VersionHint] | None = None,
) -> Explanation:
    """Find every known error in `text` (one message or a whole log).

    `errors` is either the whole ErrorKnowledge (errors + library table + version hints) or just
    the KnownError records, with `libraries` and `hints` passed separately (without them library
    names are not turned into versions and versions_seen stays empty).

    Matches are de-duplicated by code, a match inside a longer one of the same category is left out, and
    the rest are ordered by severity (error, warning, info), then by rank
    (root causes before their consequences), then by position in the text: a real failure always
    comes before harmless noise. Text that contains no known message gives an Explanation with no
    matches (but still the versions seen).
    """
    if isinstance(errors, ErrorKnowledge):
        known, libs, version_hints = errors.errors, errors.libraries, errors.hints
    else:
        known, libs, version_hints = tuple(errors), (), ()
    if libraries is not None:
        libs = tuple(libraries)
    if hints is not None:
        version_hints = tuple(hints)

    scan = _Text(_clean(text))
    versions_seen = _extract(scan, version_hints, libs)
    matches = [m for e in known if (m := _match_error(e, scan, versions_seen, libs)) is not None]
    matches = [m for m in matches if not any(m.covered_by(other) for other in matches)]
    matches.sort(key=lambda m: (SEVERITIES.index(m.severity), m.rank, m.line, m.code))
    return Explanation(matches=tuple(matches), versions_seen=versions_seen)


# ----------------------------------------------------------------------------------------------
# the request for a fix
# ----------------------------------------------------------------------------------------------


class TestedBuildRecord(Protocol):
    """One row of TensorFlow's tested-build tables (stackresolve.knowledge.model.TestedBuild fits)."""

    __test__ = False  # not a pytest test class despite the name

    @property
    def line(self) -> str: ...  # "2.9"

    @property
    def os(self) -> str: ...  # linux | windows | macos

    @property
    def cuda(self) -> str: ...  # "11.2", "10" (as printed), "" for a CPU row

    @property
    def cudnn(self) -> str: ...  # "8.1", "7", "" for a CPU row


class CompiledArchRecord(Protocol):
    """The CUDA code in a line's wheels (stackresolve.knowledge.model.CompiledArch fits)."""

    @property
    def line(self) -> str: ...

    @property
    def sass(self) -> tuple[str, ...]: ...

    @property
    def os(self) -> str: ...  # "" for the line's record, "windows"/"linux" for an OS's exception


@dataclass(frozen=True)
class FixOverrides:
    """What the command line says (--tf, --torch, --jax, --gpu, --driver, --os); it wins over the log. One of
    --tf, --torch and --jax names the framework (and its version) whatever the log looks like."""

    tf: str | None = None
    gpu: str | None = None
    driver: str | None = None
    os: str | None = None
    torch: str | None = None
    jax: str | None = None

    @property
    def framework(self) -> str | None:
        """The framework a flag names: tensorflow, pytorch or jax; None without one."""
        if self.tf:
            return "tensorflow"
        if self.torch:
            return "pytorch"
        return "jax" if self.jax else None


@dataclass(frozen=True)
class FixRequest:
    """What a fix plan must satisfy, read from the log (and the command line): the TensorFlow to keep
    (or the candidate lines when the log names none), the OS, Python, the CUDA and cuDNN that
    TensorFlow wants, the driver and GPU seen, pip pins, and one line of evidence per decision."""

    tf: str | None = None
    tf_candidates: tuple[str, ...] = ()
    os: str | None = None
    python: str | None = None
    cuda: str | None = None
    cudnn: str | None = None
    driver: str | None = None
    gpu: str | None = None
    compute_capability: str | None = None
    pins: tuple[str, ...] = ()
    evidence: tuple[str, ...] = ()
    tensorrt: str | None = None
    # the framework the log comes from (tensorflow, pytorch, jax) and its version as the log shows it
    # (the fix request's own TensorFlow stays in `tf`); for PyTorch the build variant of a local version
    # label (2.5.1+cu124: "cu124"), for JAX the jaxlib version and its variant (cuda12.cudnn89), or the
    # CUDA plugin a message names (jax_cuda12_plugin: "cuda12", as detect names a plugin install); the
    # GPU's architecture and the architectures the installed build has code for (PyTorch's warning)
    framework: str | None = None
    framework_version: str | None = None
    variant: str | None = None
    jaxlib: str | None = None
    sm: str | None = None
    supported_sms: tuple[str, ...] = ()
    # PyTorch and JAX: the newest CUDA the driver supports, as the framework printed it ("found version 11040")
    driver_cuda: str | None = None

    def to_json_dict(self) -> dict:
        """The "requested" object of the explain JSON: only the fields that have a value."""
        out: dict = {}
        for key in ("tf", "os", "python", "cuda", "cudnn", "tensorrt", "compute_capability", "driver", "gpu"):
            value = getattr(self, key)
            if value:
                out[key] = value
        if self.tf_candidates:
            out["tf_candidates"] = list(self.tf_candidates)
        if self.pins:
            out["pins"] = list(self.pins)
        for key in ("framework", "framework_version", "variant", "jaxlib", "sm", "driver_cuda"):
            value = getattr(self, key)
            if value:
                out[key] = value
        if self.supported_sms:
            out["supported_sms"] = list(self.supported_sms)
        if self.evidence:
            out["evidence"] = list(self.evidence)
        return out


# Categories whose fix is about the GPU stack: only for these does the request carry CUDA and cuDNN.
GPU_CATEGORIES = (
    "missing-cuda-runtime", "missing-cudnn", "missing-cuda-lib", "cudnn-version-mismatch", "driver-too-old",
    "no-kernel-for-gpu", "cudnn-init-failure", "cublas-failure", "no-gpu-detected", "ptx-jit-slow",
)


# Categories whose fix is on the machine itself (reboot, load the driver, start the container with the GPU), not
# another stack: explain plans none for them.
NOT_FIXED_BY_A_STACK = ("driver-not-loaded",)


def _single(values: Sequence[str]) -> str | None:
    values = [v for v in values if "|" not in v]
    return values[0] if len(values) == 1 else None


def _major_minor(version: str) -> str:
    parsed = _version(version)
    if parsed is None:
        return version
    return ".".join(str(part) for part in (parsed.release + (0,))[:2])


def _line_key(line: str) -> tuple[int, ...]:
    parsed = _version(line)
    return parsed.release if parsed is not None else (0,)


def _fits(tested: str, wanted: str, component: str) -> bool:
    """Does a tested-build value ("11.2", "10" as printed, cuDNN "7" = any 7.x) satisfy what the text
    wants ("11.x", "10.0", cuDNN "8" = major 8, "8.1.0")?"""
    if not tested or not wanted:
        return False
    if "|" in wanted:
        return any(_fits(tested, w, component) for w in wanted.split("|"))
    if "." not in tested:  # the table prints a bare major: CUDA "10" is 10.0, cuDNN "7" is any 7.x
        tested = f"{tested}.0" if component == "cuda" else f"{tested}.x"
    if component == "cudnn" and "." not in wanted:  # a library name carries only cuDNN's major
        wanted = f"{wanted}.x"
    if wanted.endswith(".x") or tested.endswith(".x"):
        a = wanted[:-2] if wanted.endswith(".x") else wanted
        b = tested[:-2] if tested.endswith(".x") else tested
        return a.split(".")[0] == b.split(".")[0]
    spec, version = _line_of_version(tested), _version(wanted)
    if spec is not None and version is not None and version in spec:
        return True
    spec, version = _line_of_version(wanted), _version(tested)
    return bool(spec is not None and version is not None and version in spec)


def _printed(value: str, component: str) -> str:
    """A tested-build value as a version: CUDA "10" is 10.0."""
    return f"{value}.0" if component == "cuda" and value and "." not in value else value


def _row_for(builds: Sequence[TestedBuildRecord], line: str, os_name: str, *, gpu: bool = True) -> TestedBuildRecord | None:
    rows = [b for b in builds if b.line == line and b.os == os_name and bool(b.cuda) == gpu]
    if not rows:
        return None
    return min(rows, key=lambda b: _line_key(getattr(b, "version", b.line)))


def _sass_covers(sass: Iterable[str], cc: str) -> bool:
    """Machine code for X.Y runs on X.Z with Z >= Y (same major)."""
    gpu = _line_key(cc)
    return any(_line_key(s)[:1] == gpu[:1] and _line_key(s) <= gpu for s in sass)


def _arch_for(archs: Sequence[CompiledArchRecord], line: str, os_name: str | None) -> CompiledArchRecord | None:
    wheel_os = "windows" if os_name == "windows" else "linux"
    exceptions = [a for a in archs if a.line == line and a.os == wheel_os and not getattr(a, "versions", ())]
    if exceptions:
        return exceptions[0]
    return next((a for a in archs if a.line == line and not a.os), None)


def _lines_with_code(archs: Sequence[CompiledArchRecord], cc: str, os_name: str | None) -> list[str]:
    lines = sorted({a.line for a in archs}, key=_line_key)
    out = []
    for line in lines:
        arch = _arch_for(archs, line, os_name)
        if arch is not None and _sass_covers(arch.sass, cc):
            out.append(line)
    return out


def _span(lines: Sequence[str]) -> str:
    return lines[0] if len(lines) == 1 else f"{lines[0]}-{lines[-1]}"


def fix_request(
    explanation: Explanation,
    tested_builds: Sequence[TestedBuildRecord] = (),
    overrides: FixOverrides | None = None,
    compiled_archs: Sequence[CompiledArchRecord] = (),
) -> FixRequest:
    """The request a fix plan must satisfy, from everything the text says.

    - The log's own versions become the request, and the fix keeps the user's TensorFlow: a
      "TensorFlow version: 2.9.1" line, "python3.6" in a path, a Windows path or DLL name (OS), the
      nvidia-smi banner (driver, GPU), the compute capability TensorFlow printed.
    - With a TensorFlow version, CUDA and cuDNN are those of TensorFlow's tested build for it on that
      OS (`tested_builds`: records with line, os, cuda, cudnn; the knowledge base's TestedBuild fits).
      Without one, the library file names narrow it: `tf_candidates` are the lines whose tested build
      loads them (cudart64_110.dll + cudnn64_8.dll on Windows: 2.4-2.10).
    - "No kernel image" (no machine code for the GPU): the TensorFlow to use is the first line, from
      the user's on, whose wheels carry machine code for the GPU (`compiled_archs`: records with line,
      sass, os).
    - `overrides` (--tf/--gpu/--driver/--os) fill what the log leaves out; where both speak the flag
      wins and the evidence says so.
    """
    overrides = overrides or FixOverrides()
    seen = explanation.versions_seen
    problems = explanation.problems
    top = problems[0] if problems else None
    evidence: list[str] = []

    # -- OS --------------------------------------------------------------------------------------
    os_log = _single(seen.get("os", ()))
    os_name = os_log
    if overrides.os:
        if os_log and os_log != overrides.os:
            evidence.append(f"OS {overrides.os} from --os (the log looks like {os_log})")
        elif not os_log:
            evidence.append(f"OS {overrides.os} from --os")
        os_name = overrides.os
    elif os_log:
        evidence.append(f"OS {os_log}: from the paths and library file names in the log")

    # -- the framework: a PyTorch or JAX log asks nothing of TensorFlow ------------------------------
    framework = overrides.framework or log_framework(explanation)
    tf_world = framework in (None, "tensorflow")

    # -- TensorFlow in the log ---------------------------------------------------------------------
    tf_values = list(seen.get("tf", ())) if tf_world else []
    for m in explanation.matches:
        if tf_world and "tf" in m.found and _version(m.found["tf"]) is not None:
            tf_values.append(m.found["tf"])
    path_lines = [v for v in tf_values if "|" in v]  # tensorflow_core in a path: one of 1.15, 2.0, 2.1
    exact = _dedupe_versions(v for v in tf_values if "|" not in v)
    tf_log: str | None = exact[0] if len(exact) == 1 else None
    if tf_log is None and exact:
        lines = {_major_minor(v) for v in exact}
        if len(lines) == 1:
            tf_log = lines.pop()
    tf = tf_log
    if overrides.tf:
        if tf_log and _major_minor(tf_log) != _major_minor(overrides.tf):
            evidence.append(f"TensorFlow {overrides.tf} from --tf (the log shows {tf_log})")
        elif not tf_log:
            evidence.append(f"TensorFlow {overrides.tf} from --tf")
        tf = overrides.tf
    elif tf_log:
        evidence.append(f"TensorFlow {tf_log}: from the log; the fix keeps it")

    # -- what the libraries and messages want ------------------------------------------------------
    def wanted(component: str) -> str | None:
        for m in problems:
            value = m.wanted.get(component)
            if value:
                return value
        libs = seen.get(f"{component}_from_libraries", ())
        return "|".join(libs) if libs else None

    lib_cuda, lib_cudnn = wanted("cuda"), wanted("cudnn")
    gpu_problem = any(m.category in GPU_CATEGORIES for m in problems) or bool(lib_cuda or lib_cudnn)
    gpu_rows = [b for b in tested_builds if b.cuda]
    row_os = os_name if os_name in ("linux", "windows", "macos") else "linux"

    def rows_fitting(rows: Iterable[TestedBuildRecord]) -> list[TestedBuildRecord]:
        out = []
        for b in rows:
            if lib_cuda and not _fits(b.cuda, lib_cuda, "cuda"):
                continue
            if lib_cudnn and not _fits(b.cudnn, lib_cudnn, "cudnn"):
                continue
            out.append(b)
        return out

    candidates: list[str] = []
    if tf is None and tf_world and (lib_cuda or lib_cudnn):
        rows = [b for b in gpu_rows if os_name is None or b.os == row_os]
        fitting = rows_fitting(rows)
        candidates = sorted({b.line for b in fitting}, key=_line_key)
        if path_lines:
            allowed = set(path_lines[0].split("|"))
            candidates = [c for c in candidates if c in allowed] or candidates
        if candidates:
            libs_named = list(dict.fromkeys(lib for m in problems for lib in m.libraries))
            names = " + ".join(libs_named) if libs_named else "the library names"
            combos = sorted({(_printed(b.cuda, "cuda"), b.cudnn) for b in fitting if b.line in candidates},
                            key=lambda c: _line_key(c[0]))
            per_combo = "; ".join(
                f"{_span([b for b in candidates if any(r.line == b and (_printed(r.cuda, 'cuda'), r.cudnn) == c for r in fitting)])}: "
                f"CUDA {c[0]} + cuDNN {c[1]}"
                for c in combos
            )
            where = f" on {os_name}" if os_name else ""
            evidence.append(f"no TensorFlow version in the log; {names}{where} means TensorFlow "
                            f"{_span(candidates)} ({per_combo})")
    elif tf is None and path_lines:
        candidates = sorted(set(path_lines[0].split("|")), key=_line_key)
        evidence.append(f"tensorflow_core in a path: TensorFlow {_span(candidates)}")

    # -- no machine code for this GPU: the TensorFlow that has it ------------------------------------
    tf_changed = False
    cc_values = [m.found["cc"] for m in explanation.matches if "cc" in m.found] or list(seen.get("cc", ()))
    cc = _single(tuple(dict.fromkeys(cc_values)))
    if tf_world and top is not None and top.category in ("no-kernel-for-gpu", "ptx-jit-slow") and cc and compiled_archs:
        with_code = _lines_with_code(compiled_archs, cc, os_name)
        user_line = _major_minor(tf) if tf else (candidates[-1] if candidates else None)
        choice = None
        if with_code:
            if top.code == "gpu-below-minimum-capability" or (
                user_line and all(_line_key(line) < _line_key(user_line) for line in with_code)
            ):
                older = [line for line in with_code if not user_line or _line_key(line) <= _line_key(user_line)]
                choice = (older or with_code)[-1]
                why = "the newest"
            else:
                newer = [line for line in with_code if not user_line or _line_key(line) >= _line_key(user_line)]
                choice = (newer or with_code)[0]
                why = "the first" + (f" from {user_line} on" if user_line else "")
            evidence.append(
                f"compute capability {cc}: TensorFlow {_span(with_code)} carry machine code for it"
                f"{' on ' + os_name if os_name else ''}; {why} is {choice}"
                + (f" (TensorFlow {tf} does not)" if tf else "")
            )
        if choice is not None and top.category == "ptx-jit-slow" and tf:
            evidence.append(f"it runs (slowly, after a JIT compile): the fix keeps TensorFlow {tf}; "
                            f"TensorFlow {choice} would start without the JIT")
        elif choice is not None:
            tf_changed = tf is None or _major_minor(tf) != choice
            tf, candidates = choice, with_code
        else:
            evidence.append(f"compute capability {cc}: no TensorFlow release carries machine code for it")

    # -- CUDA and cuDNN for the fix ----------------------------------------------------------------
    cuda = cudnn = None
    if tf and gpu_problem:
        line = _major_minor(tf)
        row = _row_for(tested_builds, line, row_os)
        if row is not None:
            row_cuda, row_cudnn = _printed(row.cuda, "cuda"), row.cudnn
            cuda, cudnn = row_cuda, row_cudnn
            if lib_cuda and not tf_changed and not _fits(row.cuda, lib_cuda, "cuda"):
                cuda = lib_cuda
                evidence.append(f"the libraries want CUDA {lib_cuda.replace('|', ' or ')}, not the CUDA {row_cuda} "
                                f"of TensorFlow {line}'s tested build: not a stock build; the fix follows the libraries")
            if lib_cudnn and not tf_changed and not _fits(row.cudnn, lib_cudnn, "cudnn"):
                cudnn = lib_cudnn
            evidence.append(f"TensorFlow {line} on {row_os}: tested build with CUDA {row_cuda} and cuDNN {row_cudnn}")
        elif tested_builds and row_os == "windows" and _line_key(line) > (2, 10):
            evidence.append(f"TensorFlow {line} has no native Windows GPU build (the last is 2.10): "
                            "use TensorFlow 2.10 or WSL2")
    if cuda is None and candidates and tf is None and gpu_problem:
        rows = [b for b in rows_fitting(gpu_rows) if b.line in candidates and (os_name is None or b.os == row_os)]
        cudas = {_printed(b.cuda, "cuda") for b in rows}
        cudnns = {b.cudnn for b in rows}
        if len(cudas) == 1:
            cuda = cudas.pop()
        if len(cudnns) == 1:
            cudnn = cudnns.pop()
    if cuda is None and lib_cuda and "|" not in lib_cuda:
        cuda = lib_cuda
    if cudnn is None and lib_cudnn and "|" not in lib_cudnn:
        cudnn = lib_cudnn
    # a message that names the exact cuDNN the build was compiled with (8.1.0) is more precise than
    # the tested-build table (8.1)
    if cudnn and lib_cudnn and "|" not in lib_cudnn and not tf_changed and _fits(cudnn, lib_cudnn, "cudnn") \
            and len(lib_cudnn.split(".")) > len(cudnn.split(".")):
        cudnn = lib_cudnn
    installed = _single(seen.get("cuda", ()))
    if installed and cuda and gpu_problem and not _fits(cuda, installed, "cuda"):
        evidence.append(f"the log shows CUDA {installed} installed; the fix wants CUDA {cuda.replace('|', ' or ')}")
    tensorrt = wanted("tensorrt")
    if tensorrt and "|" in tensorrt:
        tensorrt = None

    # -- Python -------------------------------------------------------------------------------------
    python = _single(_dedupe_versions(_major_minor(v) for v in seen.get("python", ())))
    python_is_the_problem = any(m.category == "no-matching-distribution" for m in problems)
    supported: list[str] = []
    if tf and tested_builds:
        rows = [b for b in tested_builds if b.line == _major_minor(tf) and b.os == row_os]
        supported = sorted({p for b in rows for p in getattr(b, "python_versions", ())}, key=_line_key)
    if supported and python and python not in supported:
        span = f"{supported[0]}-{supported[-1]}"
        if python_is_the_problem:
            evidence.append(f"Python {python} (from the log) has no TensorFlow {_major_minor(tf)} wheels (it supports "
                            f"Python {span}): Python {supported[-1]}")
            python = supported[-1]
        else:
            evidence.append(f"Python {python}: from the log (TensorFlow {_major_minor(tf)}'s tested builds list {span})")
    elif python:
        evidence.append(f"Python {python}: from the log")
    elif supported and python_is_the_problem:
        python = supported[-1]
        evidence.append(f"TensorFlow {_major_minor(tf)} has wheels for Python {supported[0]}-{supported[-1]}: "
                        f"Python {python}")

    # -- driver, GPU, compute capability --------------------------------------------------------------
    driver_values = [m.found["driver"] for m in explanation.matches if "driver" in m.found] or list(seen.get("driver", ()))
    driver_log = _single(_dedupe_versions(driver_values))
    driver = driver_log
    if overrides.driver:
        if driver_log and driver_log != overrides.driver:
            evidence.append(f"driver {overrides.driver} from --driver (the log shows {driver_log})")
        driver = overrides.driver
    elif driver_log:
        evidence.append(f"driver {driver_log}: from the log")

    gpus = [g for g in seen.get("gpu", ()) if not g.endswith("...")]
    if not gpus:  # a GPU named by the message itself (PyTorch's capability warning)
        gpus = list(dict.fromkeys(m.found["gpu"] for m in explanation.matches if m.found.get("gpu")))
    gpu_log = _single(gpus)
    gpu = gpu_log
    if overrides.gpu:
        if gpu_log and gpu_log != overrides.gpu:
            evidence.append(f"GPU {overrides.gpu} from --gpu (the log shows {gpu_log})")
        gpu = overrides.gpu
    elif gpu_log:
        evidence.append(f"GPU {gpu_log}: from the log")
    if cc:
        evidence.append(f"compute capability {cc}: from the log")

    pins: list[str] = []
    for m in problems:
        for pin in m.pins:
            _add(pins, pin)

    # -- the framework's own versions, and the GPU architecture a PyTorch build lacks ---------------------
    if not problems and not overrides.framework:  # nothing to fix: the request names no framework either
        framework = None
    framework_version = variant = jaxlib = driver_cuda = None
    if framework == "tensorflow":
        framework_version = tf_log
    elif framework == "pytorch":
        framework_version, variant = _framework_version(seen, explanation, "torch")
    elif framework == "jax":
        framework_version, _ = _framework_version(seen, explanation, "jax")
        jaxlib, variant = _framework_version(seen, explanation, "jaxlib")
    if framework in ("pytorch", "jax"):
        name = FRAMEWORK_NAMES[framework]
        flag_version = overrides.torch if framework == "pytorch" else overrides.jax
        if flag_version:
            if framework_version and framework_version != flag_version:
                evidence.append(f"{name} {flag_version} from --{'torch' if framework == 'pytorch' else 'jax'} "
                                f"(the log shows {framework_version})")
            else:
                evidence.append(f"{name} {flag_version} from --{'torch' if framework == 'pytorch' else 'jax'}")
            framework_version = flag_version
        elif framework_version:
            evidence.append(f"{name} {framework_version}{'+' + variant if variant and not jaxlib else ''}: from the log")
        if jaxlib:
            evidence.append(f"jaxlib {jaxlib}{'+' + variant if variant else ''}: from the log")
        if not framework_version and not jaxlib:
            evidence.append(f"{name}: from the messages and paths in the log (no version shown)")
    if framework == "jax" and variant is None:  # the CUDA plugin a message names ("JAX plugin jax_cuda12_plugin")
        plugins = {m.group(1) for p in problems for m in _JAX_PLUGIN.finditer(p.evidence)}
        if len(plugins) == 1:
            variant = f"cuda{plugins.pop()}"
            evidence.append(f"the CUDA {variant[4:]} plugin (jax-{variant}-plugin): from the log")
    sm = next((m.found["sm"] for m in explanation.matches if m.found.get("sm")), None)
    supported_sms = next((tuple(m.found["sm_supported"].split()) for m in explanation.matches
                          if m.found.get("sm_supported")), ())
    if sm and supported_sms:
        evidence.append(f"the GPU is {sm}; the installed build has code for {' '.join(supported_sms)} only")
    if framework in ("pytorch", "jax"):
        driver_cuda = _single(tuple(dict.fromkeys(m.found["driver_cuda"] for m in problems if m.found.get("driver_cuda"))))
        if driver_cuda:
            evidence.append(f"the driver supports CUDA up to {driver_cuda}: from the log")

    tf_candidates = tuple(candidates) if candidates else ((_major_minor(tf),) if tf else ())
    return FixRequest(
        tf=tf,
        tf_candidates=tf_candidates,
        os=os_name,
        python=python,
        cuda=cuda,
        cudnn=cudnn,
        driver=driver,
        gpu=gpu,
        compute_capability=cc,
        pins=tuple(pins),
        evidence=tuple(evidence),
        tensorrt=tensorrt,
        framework=framework,
        framework_version=framework_version,
        variant=variant,
        jaxlib=jaxlib,
        sm=sm,
        supported_sms=supported_sms,
        driver_cuda=driver_cuda,
    )


_JAX_PLUGIN = re.compile(r"\bjax[_-]cuda(\d+)[_-](?:plugin|pjrt)\b")
_JAX_PLUGIN_VARIANT = re.compile(r"cuda\d{2}")  # a plugin's CUDA major; jaxlib's own are cuda111, cuda12.cudnn89


def _framework_version(seen: dict[str, tuple[str, ...]], explanation: Explanation, key: str) -> tuple[str | None, str | None]:
    """The one version of a framework package the log shows (2.5.1+cu124 and 2.5.1 are one), split into
    the public version and the local label of its build variant: ("2.5.1", "cu124"); (None, None) when
    the log shows none or several."""
    values = list(seen.get(key, ()))
    values += [m.found[key] for m in explanation.matches if m.found.get(key)]
    parsed = [(v, _version(v)) for v in dict.fromkeys(values)]
    parsed = [(v, p) for v, p in parsed if p is not None]
    publics = _dedupe_versions(p.public for _, p in parsed)
    if len(publics) != 1:
        return None, None
    public = publics[0]
    local = next((p.local for _, p in parsed if p.local and p.public == public), None)
    return public, local


def requested_stack(
    explanation: Explanation,
    tested_builds: Sequence[TestedBuildRecord] = (),
    overrides: FixOverrides | None = None,
    compiled_archs: Sequence[CompiledArchRecord] = (),
) -> dict:
    """The "requested" object of the explain JSON: `fix_request(...)` as a dict of the fields that
    have a value (tf, tf_candidates, os, python, cuda, cudnn, tensorrt, compute_capability, driver,
    gpu, pins, evidence)."""
    return fix_request(explanation, tested_builds, overrides, compiled_archs).to_json_dict()


# ----------------------------------------------------------------------------------------------
# for the terminal
# ----------------------------------------------------------------------------------------------

_LABELS = {
    "compute_capability": "compute capability",
    "pins": "pip pins",
    "cuda": "CUDA",
    "cudnn": "cuDNN",
    "cc": "compute capability",
    "driver": "driver",
    "driver_cuda": "driver supports CUDA up to",
    "tf": "TensorFlow",
    "python": "Python",
    "numpy": "NumPy",
    "protobuf": "protobuf",
    "h5py": "h5py",
    "tensorrt": "TensorRT",
    "keras": "Keras",
    "gpu": "GPU",
    "os": "OS",
    "torch": "PyTorch",
    "jax": "JAX",
    "jaxlib": "jaxlib",
    "jax_plugin": "JAX CUDA plugin",
    "sm": "GPU architecture",
    "sm_supported": "architectures of the installed build",
    "framework": "framework",
}


def _label(key: str) -> str:
    if key.endswith("_from_libraries"):
        base = key[: -len("_from_libraries")]
        return f"{_LABELS.get(base, base)} (from library names)"
    return _LABELS.get(key, key)


def _versions_line(versions: dict[str, str]) -> str:
    return ", ".join(f"{_label(k)} {v.replace('|', ' or ')}" for k, v in versions.items())


def render_text(explanation: Explanation, fix: FixRequest | None = None) -> str:
    """Terminal rendering: most serious first, then the versions seen (and the fix request, if given)."""
    lines: list[str] = []
    if not explanation.matches:
        lines.append("No known error message found in this text.")
    else:
        problems = sum(1 for m in explanation.matches if m.severity != "info")
        noise = len(explanation.matches) - problems
        summary = f"{problems} problem{'s' if problems != 1 else ''}"
        if noise:
            summary += f" and {noise} harmless message{'s' if noise != 1 else ''}"
        lines.append(f"Found {summary} (most serious first).")
        for i, m in enumerate(explanation.matches, 1):
            lines.append("")
            times = f", {m.count} times" if m.count > 1 else ""
            lines.append(f"{i}. [{m.severity}] {m.code} ({m.category}{times}, line {m.line})")
            lines.append(f"   seen:    {m.evidence}")
            lines.append(f"   means:   {m.meaning}")
            if m.wanted:
                lines.append(f"   wanted:  {_versions_line(m.wanted)}")
            if m.found:
                lines.append(f"   found:   {_versions_line(m.found)}")
            lines.append(f"   cause:   {m.cause}")
            for other in m.causes[1:]:
                lines.append(f"            or: {other}")
            lines.append(f"   fix:     {m.fix}")
            lines.append(f"   source:  {m.source}")
    if explanation.versions_seen:
        lines.append("")
        lines.append("Versions seen in the text:")
        for key, values in explanation.versions_seen.items():
            lines.append(f"   {_label(key)}: {', '.join(v.replace('|', ' or ') for v in values)}")
    if fix is not None and explanation.has_problem:
        request = fix.to_json_dict()
        request.pop("evidence", None)
        # the framework is said once, by name: TensorFlow's own version is the `tf` entry
        for key in ("framework", "framework_version", "variant", "jaxlib", "supported_sms"):
            request.pop(key, None)
        parts: list[str] = []
        if fix.framework in ("pytorch", "jax"):
            version = f" {fix.framework_version}" if fix.framework_version else ""
            plugin = fix.framework == "jax" and bool(fix.variant) and _JAX_PLUGIN_VARIANT.fullmatch(fix.variant)
            variant = f" ({fix.variant})" if fix.variant and (not fix.jaxlib or plugin) else ""
            parts.append(f"{FRAMEWORK_NAMES[fix.framework]}{version}{variant}")
            if fix.jaxlib:
                parts.append(f"jaxlib {fix.jaxlib}" + (f" ({fix.variant})" if fix.variant and not plugin else ""))
        if request or parts:
            lines.append("")
            if "tf" in request:
                request.pop("tf_candidates", None)
            parts += [f"{_label(k) if k != 'tf_candidates' else 'one of the TensorFlow lines'} "
                      f"{', '.join(v) if isinstance(v, list) else v}" for k, v in request.items()]
            lines.append("The fix asks for: " + "; ".join(parts))
            for why in fix.evidence:
                lines.append(f"   - {why}")
    return "\n".join(lines) + "\n"
