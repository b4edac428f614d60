"""Explain an error message or a whole log: which known errors it contains, what they mean, the likely
cause, the fix, and every version the text reveals.

Pure functions, no I/O: the knowledge (constraints/errors.toml, parsed by
stackresolve.knowledge.errors) is passed in. Output contract: `Explanation.to_json_dict()` is the
"stackresolve/explain@1" shape of shared/DESIGN.md (extra fields are additions, never renames).
"""

from __future__ import annotations

import re
from dataclasses import dataclass, field
from typing import Iterable, Sequence

from packaging.specifiers import InvalidSpecifier, SpecifierSet
from packaging.version import InvalidVersion, Version

from stackresolve.knowledge.errors import (
    COMPONENTS,
    PLACEHOLDER,
    SEVERITIES,
    Cause,
    ErrorKnowledge,
    KnownError,
    LibraryName,
    VersionHint,
)

SCHEMA = "stackresolve/explain@1"

_ANSI = re.compile(r"\x1b\[[0-9;]*[A-Za-z]")
# Any token that looks like a library file TF dlopens; only names in the [[library]] table count.
_LIBRARY_TOKEN = re.compile(r"(?i)(?<![\w.])(?:lib[A-Za-z0-9_]+\.so(?:\.\d+)+|[A-Za-z0-9_]+64_\d+\.dll|nvcuda\.dll)(?![\w])")
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

    def to_json_dict(self) -> dict:
        return {
            "schema": SCHEMA,
            "matches": [m.to_json_dict() for m in self.matches],
            "versions_seen": {k: list(v) for k, v in self.versions_seen.items()},
        }


# ----------------------------------------------------------------------------------------------
# versions
# ----------------------------------------------------------------------------------------------


def normalize_version(component: str, value: str) -> str:
    """Canonical spelling of a version read from a log.

    cuDNN integers as old TensorFlow prints them (7201) become 7.2.1; compute capabilities written
    without a dot (86, from sm_86) become 8.6.
    """
    value = value.strip().rstrip(".")
    if component == "cudnn" and re.fullmatch(r"\d{4,5}", value):
        n = int(value)
        return f"{n // 1000}.{(n % 1000) // 100}.{n % 100}"
    if component == "cc" and re.fullmatch(r"\d{2,3}", value):
        return f"{value[:-1]}.{value[-1]}"
    return value


def _add(values: list[str], value: str) -> None:
    if value and value not in values:
        values.append(value)


def _version(value: str) -> Version | None:
    try:
        return Version(value)
    except InvalidVersion:
        return None


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


def extract_versions(
    text: str, hints: Sequence[VersionHint], libraries: Sequence[LibraryName] = ()
) -> dict[str, tuple[str, ...]]:
    """Every version the text reveals, by key (cuda, cudnn, cc, driver, tf, python, ...).

    `<component>_from_libraries` holds what the library file names mentioned anywhere in the text
    (loaded or not) imply, e.g. {"cuda_from_libraries": ("11.x",)}.
    """
    text = _clean(text)
    seen: dict[str, list[str]] = {}
    for hint in hints:
        for m in hint.regex.finditer(text):
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
    names = [m.group(0) for m in _LIBRARY_TOKEN.finditer(text)]
    for component, candidates in library_candidates(names, libraries).items():
        seen[f"{component}_from_libraries"] = list(candidates)
    out: dict[str, tuple[str, ...]] = {}
    for key in sorted(seen):
        values = seen[key]
        keep_all = key in ("os", "gpu") or key.endswith("_from_libraries")
        out[key] = tuple(values) if keep_all else _dedupe_versions(values)
    return out


# ----------------------------------------------------------------------------------------------
# matching
# ----------------------------------------------------------------------------------------------


def _clean(text: str) -> str:
    return _ANSI.sub("", text.replace("\r\n", "\n").replace("\r", "\n"))


def _line_of(text: str, pos: int) -> tuple[str, int]:
    start = text.rfind("\n", 0, pos) + 1
    end = text.find("\n", pos)
    line = text[start : end if end != -1 else len(text)].strip()
    if len(line) > _EVIDENCE_MAX:
        line = line[: _EVIDENCE_MAX - 3] + "..."
    return line, text.count("\n", 0, pos) + 1


def _render(template: str, values: dict[str, str]) -> str:
    def sub(m: re.Match[str]) -> str:
        value = values.get(m.group(1), "")
        if value:
            return value
        return m.group(2) if m.group(2) is not None else "(unknown)"

    return PLACEHOLDER.sub(sub, template)


def _order_causes(error: KnownError, text: str) -> list[Cause]:
    """Causes whose `when` is in the text first, then the unconditional ones, then those with an
    unmatched `when`, and last those whose `unless` is in the text; file order within each."""

    def group(cause: Cause) -> int:
        if cause.unless is not None and cause.unless.search(text):
            return 3
        if cause.when is None:
            return 1
        return 0 if cause.when.search(text) else 2

    return sorted(error.causes, key=group)  # sorted() is stable


def _match_error(
    error: KnownError,
    text: str,
    versions_seen: dict[str, tuple[str, ...]],
    libraries: Sequence[LibraryName],
) -> Match | None:
    found_matches = list(error.regex.finditer(text))
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
            else:
                groups.setdefault(name, value)

    wanted: dict[str, str] = {}
    found: dict[str, str] = {}
    for name, value in groups.items():
        role, _, component = name.partition("_")
        if role in ("wanted", "found") and component in COMPONENTS:
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

    values = {name: value for name, value in groups.items()}
    for component, value in wanted.items():
        values[f"wanted_{component}"] = value.replace("|", " or ")
    for component, value in found.items():
        values[f"found_{component}"] = value.replace("|", " or ")
    values["libs"] = ", ".join(libs)

    causes = _order_causes(error, text)
    chosen = causes[0]
    evidence, line = _line_of(text, found_matches[0].start())
    return Match(
        code=error.code,
        category=error.category,
        severity=error.severity,
        wanted=wanted,
        found=found,
        meaning=_render(error.meaning, values),
        cause=_render(chosen.text, values),
        causes=tuple(_render(c.text, values) for c in causes),
        fix=_render(chosen.fix or error.fix, values),
        source=error.source,
        evidence=evidence,
        line=line,
        count=len(found_matches),
        libraries=tuple(libs),
        pins=error.pins,
        rank=error.rank,
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

    Matches are de-duplicated by code and ordered by severity (error, warning, info), then by rank
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

    text = _clean(text)
    versions_seen = extract_versions(text, version_hints, libs)
    matches = [m for e in known if (m := _match_error(e, text, versions_seen, libs)) is not None]
    matches.sort(key=lambda m: (SEVERITIES.index(m.severity), m.rank, m.line, m.code))
    return Explanation(matches=tuple(matches), versions_seen=versions_seen)


# ----------------------------------------------------------------------------------------------
# for the planner and the terminal
# ----------------------------------------------------------------------------------------------


def _single(values: Sequence[str]) -> str | None:
    values = [v for v in values if "|" not in v]
    return values[0] if len(values) == 1 else None


def _major_minor(version: str) -> str:
    parsed = _version(version)
    if parsed is None:
        return version
    return ".".join(str(part) for part in (parsed.release + (0,))[:2])


def requested_stack(explanation: Explanation) -> dict:
    """Target hints the planner can turn into a Request for a fix plan.

    Keys (each only when the text shows it unambiguously): tf ("2.3"), cuda ("10.0", or "11.x" for
    any 11 minor), cudnn ("7" from a library name, "8.9.4" as the minimum from a version-mismatch
    message: same major, equal or higher minor), tensorrt, compute_capability, driver, python,
    os, gpu, and pins (pip requirement specifiers such as "protobuf<=3.20.3").
    """
    out: dict = {}
    seen = explanation.versions_seen
    problems = [m for m in explanation.matches if m.severity != "info"]

    for m in problems:
        for component in ("cuda", "cudnn", "tensorrt"):
            value = m.wanted.get(component)
            if value and "|" not in value:
                out.setdefault(component, value)

    tf_values = list(seen.get("tf", ()))
    for m in explanation.matches:
        if "tf" in m.found:
            tf_values.append(m.found["tf"])
    tf = _single(_dedupe_versions(_major_minor(v) for v in tf_values if "|" not in v))
    if tf:
        out["tf"] = tf

    cc_values = [m.found["cc"] for m in explanation.matches if "cc" in m.found] or list(seen.get("cc", ()))
    cc = _single(tuple(dict.fromkeys(cc_values)))
    if cc:
        out["compute_capability"] = cc

    driver_values = [m.found["driver"] for m in explanation.matches if "driver" in m.found] or list(
        seen.get("driver", ())
    )
    driver = _single(_dedupe_versions(driver_values))
    if driver:
        out["driver"] = driver

    python = _single(_dedupe_versions(_major_minor(v) for v in seen.get("python", ())))
    if python:
        out["python"] = python
    for key in ("os", "gpu"):
        value = _single(seen.get(key, ()))
        if value:
            out[key] = value

    pins: list[str] = []
    for m in problems:
        for pin in m.pins:
            _add(pins, pin)
    if pins:
        out["pins"] = pins
    return out


_LABELS = {
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
    "gpu": "GPU",
    "os": "OS",
}


def _label(key: str) -> str:
    if key.endswith("_from_libraries"):
        base = key[: -len("_from_libraries")]
        return f"{_LABELS.get(base, base)} (from library names)"
    return _LABELS.get(key, key)


def _versions_line(versions: dict[str, str]) -> str:
    return ", ".join(f"{_label(k)} {v.replace('|', ' or ')}" for k, v in versions.items())


def render_text(explanation: Explanation) -> str:
    """Terminal rendering: most serious first, then the versions seen."""
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
    return "\n".join(lines) + "\n"
