"""Matching the known messages (constraints/errors.toml, patterns and the templates of the code that prints them)
in a text, and filling in what each means, its likely cause and its fix, in the words of the log's framework
and OS. Output contract: `Explanation.to_json_dict()` is the "stackresolve/explain@1" shape of
shared/DESIGN.md (extra fields are additions, never renames).
"""

from __future__ import annotations

import re
from dataclasses import dataclass, field
from typing import Callable, Sequence

from stackresolve.explain.catalogue import LIBRARY_NAMES, StatusHit, find_statuses, status_code
from stackresolve.explain.scan import _DERIVE, _EVIDENCE_MAX, _Text, _clean_text, _line_of
from stackresolve.explain.versions import (
    _add,
    _extract,
    _seen_values,
    _single_os,
    frameworks_seen,
    intersect_candidates,
    library_candidates,
    normalize_version,
)
from stackresolve.knowledge.errors import (
    COMPONENTS,
    FRAMEWORK_NAMES,
    SEVERITIES,
    Cause,
    ErrorKnowledge,
    KnownError,
    LibraryName,
    VersionHint,
    group_component,
    placeholder_regex,
)
from stackresolve.model.enums import Os


SCHEMA = "stackresolve/explain@1"




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
    # a status of a library's error enum (error_catalogue.toml): library, enum, name, value
    status: tuple[tuple[str, str | int], ...] = ()
    via: str = ""  # the program the message came through (nvtop, docker, kubelet, ...), when recognised

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
            **({"library_status": dict(self.status)} if self.status else {}),
            **({"via": self.via} if self.via else {}),
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


def _render_first(alternatives: Sequence[str], values: dict[str, str]) -> str:
    """The first alternative whose placeholders all have a value (or a default); the last one otherwise."""
    for text in alternatives[:-1]:
        rendered = _render(text, values, strict=True)
        if rendered is not None:
            return rendered
    return _render(alternatives[-1], values) or ""


def _order_causes(error: KnownError, scan: _Text, framework: str | None = None, os_name: str | None = None
                  ) -> list[Cause]:
    """Causes whose `when` is in the text first, then the unconditional ones, then those with an
    unmatched `when`, and last those whose `unless` is in the text; file order within each. A cause about
    one framework is left out of a log of another framework or of none (and one about an OS out of a log of
    another OS), unless nothing else is left."""

    def group(cause: Cause) -> int:
        if cause.unless_pattern and scan.search(cause.unless_pattern):
            return 3
        if not cause.when_pattern:
            return 1
        return 0 if scan.search(cause.when_pattern) else 2

    # a cause about one framework is left out of a log of another framework; a log that names none, where every
    # cause is about one, gets TensorFlow's (what the fix plan assumes for such a log, and says so)
    causes = next((kept for assumed in (framework, "tensorflow")
                   if (kept := tuple(c for c in error.causes if not c.framework or c.framework == assumed))),
                  error.causes)
    if os_name:
        causes = tuple(c for c in causes if not c.os or os_name in c.os) or causes
    return sorted(causes, key=group)  # sorted() is stable


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
    framework: str | None = None,
    driver_for: Callable[[str], tuple[str, str] | None] | None = None,
    occurrences: Sequence[re.Match[str]] | None = None,
    os_name: str | None = None,
) -> Match | None:
    """The record's match in the text, its texts filled in; `framework` is the log's (when known), which
    picks the fix worded for it (with the OS the text shows)."""
    found_matches = list(occurrences) if occurrences is not None else _occurrences(error, scan)
    if not found_matches:
        return None
    groups: dict[str, str] = {}
    libs: list[str] = []
    for m in found_matches:
        for name, value in m.groupdict().items():
            if not value:
                continue
            if name == "lib":
                _add(libs, value)
            elif group_component(name)[0] in ("wanted", "found") and not value.isascii():
                continue  # the number rule (model/numbers.py): a version of other scripts' digits is no version
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
    if framework in FRAMEWORK_NAMES:
        values["framework_name"] = FRAMEWORK_NAMES[framework]
    elif len(named) == 1:
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
    # an AMD GPU users run as another target of its family (unofficial; constraints/amd.toml [[gfx_override]])
    if error.category == "gfx-not-in-build":
        # lazy: start-up (only a ROCm message needs the AMD facts and their rules)
        from stackresolve.knowledge.loader import accelerator_knowledge
        from stackresolve.knowledge.rules import gfx_override, gfx_override_summary

        amd = accelerator_knowledge()
        gfx = found.get("gfx", "")
        override = gfx_override(amd, gfx) if gfx and "|" not in gfx else None
        if override:
            values["gfx_override"], values["gfx_runs_as"] = override.hsa_override, override.runs_as
        values["gfx_overrides"] = gfx_override_summary(amd)
    # the driver the CUDA a "driver too old" message wants needs (NVIDIA's table, constraints/cuda.toml)
    cuda_wanted = wanted.get("cuda") or wanted.get("driver_cuda") or ""
    floors = driver_for(cuda_wanted) if driver_for and error.category == "driver-too-old" and cuda_wanted \
        and "|" not in cuda_wanted and "x" not in cuda_wanted else None
    if floors:
        os_name = os_name or _single_os(versions_seen)
        linux, windows = floors
        # the driver's own OS (Os.driver_os): WSL2 runs on the Windows driver, so NVIDIA's Windows minimum applies
        driver_os = Os(os_name).driver_os if os_name in ("linux", "windows", "wsl2") else None
        values["wanted_driver"] = windows if driver_os is Os.WINDOWS else linux if driver_os is Os.LINUX \
            else f"{linux} (Linux) / {windows} (Windows)"

    log_os = os_name or _single_os(versions_seen)
    causes = _order_causes(error, scan, framework or (named[0] if len(named) == 1 else None), log_os)
    chosen = causes[0]
    evidence, line = _line_of(scan, found_matches[0].start())
    false_alarm = error.false_alarm_when_met and _met(found, wanted)
    return Match(
        code=error.code,
        category="harmless" if false_alarm else error.category,
        severity="info" if false_alarm else error.severity,
        wanted=wanted,
        found=found,
        meaning=(_render(error.meaning, values) or "") + (
            " The version it found is not older than the one it asks for, so this warning is wrong and harmless."
            if false_alarm else ""),
        cause=_FALSE_ALARM_CAUSE if false_alarm else _render(chosen.text, values) or "",
        causes=(_FALSE_ALARM_CAUSE,) if false_alarm else tuple(_render(c.text, values) or "" for c in causes),
        fix=_FALSE_ALARM_FIX if false_alarm else _render(chosen.fix, values) if chosen.fix else
        _render_first(error.fix_in(framework or _framework_key(error, named), log_os), values),
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


_FALSE_ALARM_CAUSE = ("The check that printed it compares the versions wrongly: the version found is not older than "
                      "the one wanted.")
_FALSE_ALARM_FIX = ("Nothing to fix: the warning can be ignored (a later release of the program that printed it "
                    "corrects the check).")


def _met(found: dict[str, str], wanted: dict[str, str]) -> bool:
    """Whether every component found in a version is at least the one wanted (all of them readable versions)."""
    # lazy: no start-up gain (already loaded by then); kept beside its use
    from stackresolve.model.numbers import parse_version

    pairs = [(parse_version(found[c]), parse_version(wanted[c])) for c in found if c in wanted]
    return bool(pairs) and all(f is not None and w is not None and f >= w for f, w in pairs)


def _status_match(hit: StatusHit, scan: _Text, versions_seen: dict[str, tuple[str, ...]]) -> Match:
    """A catalogued status as a match: the header's description, the curated cause and fix (on the host when it came
    through a container runtime), the versions of the driver the text shows for a driver problem."""
    status = hit.status
    evidence, line = _line_of(scan, hit.spans[0][0])
    start, end = hit.spans[0]
    if "\n" in scan.text[start:end]:  # a text wrapped onto the next line: both lines shown, as one
        evidence = f"{evidence} {_line_of(scan, end - 1)[0]}"
        if len(evidence) > _EVIDENCE_MAX:
            evidence = evidence[: _EVIDENCE_MAX - 3] + "..."
    described = status.description or (f'"{status.text}"' if status.text else "")
    meaning = f"{LIBRARY_NAMES[status.library]} reported {status.name} ({status.enum} {status.value})" + (
        f": {described}" if described else ".")
    if not meaning.endswith("."):
        meaning += "."
    if hit.via:
        meaning += f" Seen through {hit.via}, which only passes the library's error on."
    fix = status.fix
    if hit.container and status.category in ("driver-not-loaded", "driver-too-old", "no-gpu-detected"):
        fix = f"On the host, not in the image (the container uses the host's driver): {fix[0].lower()}{fix[1:]}"
    found: dict[str, str] = {}
    if status.category in ("driver-too-old", "driver-not-loaded"):
        for key in ("driver", "driver_cuda"):
            values = [v for v in versions_seen.get(key, ()) if "|" not in v]
            if len(values) == 1:
                found[key] = values[0]
    source = status.source + (f" ; {status.evidence}" if status.evidence else "")
    return Match(
        code=status_code(status), category=status.category, severity="error", wanted={}, found=found,
        meaning=meaning, cause=status.cause, causes=(status.cause,), fix=fix, source=source, evidence=evidence,
        line=line, count=len(hit.spans), rank=45, framework="any", spans=hit.spans,
        status=(("library", status.library), ("enum", status.enum), ("name", status.name), ("value", status.value)),
        via=hit.via,
    )


def _occurrences(error: KnownError, scan: _Text) -> list[re.Match[str]]:
    return list(scan.finditer(error.pattern, _DERIVE if error.needles is None else error.needles))


def _overlaps(spans: Sequence[tuple[int, int]], others: Sequence[tuple[int, int]]) -> bool:
    """Whether a span of `spans` overlaps one of `others` (sorted by start, none inside another's)."""
    # lazy: no start-up gain (already loaded by then); kept beside its use
    from bisect import bisect_left

    starts = [start for start, _ in others]
    for start, end in spans:
        i = bisect_left(starts, end)  # the spans that start before this one ends; the last of them may overlap
        if i and others[i - 1][1] > start:
            return True
    return False


def _disjoint(spans) -> list[tuple[int, int]]:
    """The spans merged where they overlap, sorted by start."""
    out: list[tuple[int, int]] = []
    for start, end in sorted(spans):
        if out and start < out[-1][1]:
            out[-1] = (out[-1][0], max(out[-1][1], end))
        else:
            out.append((start, end))
    return out


_LARGE_TEXT = 1 << 20  # a text longer than this: versions are read from a bounded number of lines per line shape
_LINES_PER_SHAPE = 3  # of the lines that differ only in their numbers, the first few are read for versions


def _version_area(scan: _Text) -> _Text:
    """Where versions are read from. A short text: all of it. A long one (a CI log): the first few lines of each line
    shape (the lines lower-cased, digits read as 0), in the text's order: a progress or step line repeated a hundred
    thousand times with other numbers is read three times, every line that says something else at least once, so
    the work grows with what the log says, not with its length."""
    text = scan.text
    if len(text) <= _LARGE_TEXT:
        return scan
    _joined, _at, groups, starts = scan._line_shapes()
    numbers = sorted(n for lines in groups for n in lines[:_LINES_PER_SHAPE])
    pieces = []
    for number in numbers:
        start = starts[number]
        end = text.find("\n", start)
        pieces.append(text[start:end if end != -1 else len(text)])
    return _Text("\n".join(pieces))


def _framework_key(error: KnownError, named: Sequence[str]) -> str | None:
    """Whose fix a record gives when the caller does not know the log's framework: the record's own
    framework, else the one framework the text shows, else "other" (a text that shows none)."""
    if error.framework in FRAMEWORK_NAMES:
        return error.framework
    if len(named) == 1:
        return named[0]
    return "other" if not named else None


def explain_text(
    text: str,
    errors: ErrorKnowledge | Sequence[KnownError],
    *,
    libraries: Sequence[LibraryName] | None = None,
    hints: Sequence[VersionHint] | None = None,
    framework: str | None = None,
    os_name: str | None = None,
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

    `framework` and `os_name` are what the command line says (--torch, --os ...): they win over what the text
    shows when the texts are worded and their causes chosen.
    """
    if isinstance(errors, ErrorKnowledge):
        known, libs, version_hints = errors.errors, errors.libraries, errors.hints
        driver_for = errors.driver_for if errors.drivers else None
        statuses, outer = errors.statuses, errors.outer
    else:
        known, libs, version_hints, driver_for = tuple(errors), (), (), None
        statuses, outer = (), ()
    if libraries is not None:
        libs = tuple(libraries)
    if hints is not None:
        version_hints = tuple(hints)

    scan = _Text(*_clean_text(text))
    # where each message occurs, then the versions (of a long log, read from a few lines of each line shape)
    occurrences = {e.code: found for e in known if (found := _occurrences(e, scan))}
    status_hits = find_statuses(scan, statuses, outer)
    versions_seen = _extract(_version_area(scan), version_hints, libs)
    found = [(e, m) for e in known if e.code in occurrences and (m := _match_error(
        e, scan, versions_seen, libs, framework, driver_for, occurrences[e.code], os_name)) is not None]
    found = [(e, m) for e, m in found if not any(m.covered_by(other) for _, other in found)]
    # a library's status wherever it sits, unless a record of the message around it already read it
    record_spans = _disjoint(span for _, m in found for span in m.spans)
    found += [(None, _status_match(hit, scan, versions_seen)) for hit in status_hits
              if not _overlaps(hit.spans, record_spans)]
    found.sort(key=lambda pair: (SEVERITIES.index(pair[1].severity), pair[1].rank, pair[1].line, pair[1].code))
    first = Explanation(matches=tuple(m for _, m in found), versions_seen=versions_seen)
    framework = framework or log_framework(first)
    if framework is None:
        return first
    # the log's framework is known (a message only it prints, or its paths): every text in its words
    matches = [(_match_error(e, scan, versions_seen, libs, framework, driver_for, occurrences[e.code], os_name)
                if e is not None else None) or m for e, m in found]
    return Explanation(matches=tuple(matches), versions_seen=versions_seen)
