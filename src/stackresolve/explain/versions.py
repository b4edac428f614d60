"""Versions and context a text reveals: the [[version_hint]] keys (CUDA, cuDNN, driver, GPU, compute capability,
Python, the frameworks and their builds, the OS including WSL2), and the versions library file names stand for.
"""

from __future__ import annotations

from typing import Iterable, Sequence

from packaging.specifiers import InvalidSpecifier, SpecifierSet
from packaging.version import Version

from stackresolve.explain.scan import _LIBRARY_TOKEN, _Text, _clean
from stackresolve.knowledge.errors import FRAMEWORK_NAMES, LibraryName, VersionHint, cached_regex


def normalize_version(component: str, value: str) -> str:
    """Canonical spelling of a version read from a log.

    cuDNN integers as old TensorFlow prints them (7201) become 7.2.1; compute capabilities written
    without a dot (86, from sm_86) become 8.6.
    """
    value = value.strip()
    if component == "gpu":  # a name; nvidia-smi marks one it cut short with "..."
        return value
    if component == "gfx":  # a target name, not a number
        return value.lower()
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
    # lazy: no start-up gain (already loaded by then); kept beside its use
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
        keep_all = key in ("os", "gpu", "gfx") or key.endswith("_from_libraries")
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


def _single_os(versions_seen: dict[str, tuple[str, ...]]) -> str | None:
    """The OS a text shows: WSL2 where it shows WSL2's own paths (it also shows Linux's: the more specific
    wins), else the one OS it shows, else None."""
    values = set(v for v in versions_seen.get("os", ()) if "|" not in v)
    if "wsl2" in values and values <= {"wsl2", "linux"}:
        return "wsl2"
    return values.pop() if len(values) == 1 else None
