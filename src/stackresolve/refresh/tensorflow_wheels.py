"""Fresh package-index data without a new release: the TensorFlow wheels on the index (which CPython versions
have a wheel per platform, yanked and stub releases, the `and-cuda` extra's pins from the wheel metadata), read
from the index's PEP 691 file lists and written as tensorflow_wheels.toml.

The same code serves the maintainer script (scripts/update_tf_wheels.py regenerates the shipped
constraints/tensorflow_wheels.toml) and `stackresolve refresh` (its tensorflow_wheels reader in
stackresolve.refresh.index builds the records with build_records and writes the user's copy into the cache
folder, which the knowledge loader then prefers over the shipped one when it is not older). Schema:
constraints/README.md.
"""

from __future__ import annotations

import datetime as _dt
import time
from collections.abc import Callable, Iterable, Mapping, Sequence
from concurrent.futures import ThreadPoolExecutor
from typing import Any

from packaging.utils import canonicalize_name, parse_wheel_filename
from packaging.version import Version

from stackresolve.index import simple as idx

PACKAGES: tuple[str, ...] = ("tensorflow", "tensorflow-gpu", "tensorflow-cpu", "tensorflow-intel")
AND_CUDA = "and-cuda"
KEY_ORDER = (
    "package", "version", *idx.PLATFORMS, "yanked", "stub", "and_cuda", "source", "note",
)

# Facts checked by hand that the file list alone cannot show. Appended to the generated note.
VERIFIED_NOTES: Mapping[tuple[str, str], str] = {
    ("tensorflow-gpu", "2.12.0"): (
        "the sdist's setup.py raises 'The \"tensorflow-gpu\" package has been removed! Please install "
        "\"tensorflow\" instead.' on install or bdist_wheel (sdist inspected 2026-11-22)"
    ),
    ("tensorflow-intel", "0.0.1"): (
        "the wheel's metadata Summary is 'A dummy package'; it contains no Python modules, only a "
        "requirements.txt data file (wheel inspected 2026-11-22)"
    ),
}


class UnclassifiedWheels(RuntimeError):
    pass


# --------------------------------------------------------------------------- building records


def group_releases(files: Iterable[idx.IndexFile]) -> dict[Version, list[idx.IndexFile]]:
    """Files by release version; pre-releases and unparseable filenames are left out."""
    out: dict[Version, list[idx.IndexFile]] = {}
    for f in files:
        parsed = idx.file_version(f.filename)
        if parsed is None:
            continue
        _, version = parsed
        if version.is_prerelease:  # a, b, rc and dev releases
            continue
        out.setdefault(version, []).append(f)
    return out


def _is_pure(f: idx.IndexFile) -> bool:
    _, _, _, tags = parse_wheel_filename(f.filename)
    return all(t.abi == "none" and t.platform == "any" for t in tags)


def build_record(
    package: str, version: Version, files: Sequence[idx.IndexFile], *, fetched: str
) -> dict[str, Any]:
    """One ``[[release]]`` record from the file list alone (``add_metadata_facts`` adds the rest)."""
    name = canonicalize_name(package)
    wheels = [f for f in files if f.is_wheel]
    platforms: dict[str, set[str]] = {p: set() for p in idx.PLATFORMS}
    unclassified: list[str] = []
    for w in wheels:
        for plat, pythons in idx.wheel_support(w.filename, w.requires_python).items():
            if not pythons:
                unclassified.append(w.filename)
            platforms[plat].update(pythons)
    if unclassified:
        raise UnclassifiedWheels(", ".join(sorted(set(unclassified))))

    notes: list[str] = []
    stub = False
    if not wheels:
        stub = True
        notes.append("no wheels on the package index, only " + ", ".join(sorted(f.filename for f in files)))
    elif all(_is_pure(w) for w in wheels):
        stub = True
        notes.append(
            "only pure-Python wheel(s) (" + ", ".join(sorted(w.filename for w in wheels))
            + "), no TensorFlow binaries: a placeholder"
        )
    yanked = bool(files) and all(f.yanked for f in files)
    reasons = sorted({f.yanked_reason for f in files if f.yanked and f.yanked_reason})
    if reasons:
        notes.append("yanked: " + "; ".join(reasons))
    verified = VERIFIED_NOTES.get((name, str(version)))
    if verified:
        notes.append(verified)

    record: dict[str, Any] = {"package": name, "version": str(version)}
    for plat in idx.PLATFORMS:
        record[plat] = sorted(platforms[plat], key=Version)
    record.update(
        yanked=yanked,
        stub=stub,
        and_cuda=[],
        source=f"package index /simple/{name}/ (PEP 691 JSON), fetched {fetched}",
    )
    if notes:
        record["note"] = "; ".join(notes)
    return record


def metadata_wheel(files: Sequence[idx.IndexFile]) -> idx.IndexFile | None:
    """The Linux x86_64 wheel to read metadata from: the one for the newest CPython (deterministic)."""
    best: tuple[Version, str, idx.IndexFile] | None = None
    for f in files:
        if not f.is_wheel or f.yanked:
            continue
        pythons = idx.wheel_support(f.filename, f.requires_python).get("linux")
        if not pythons:
            continue
        key = (Version(pythons[-1]), f.filename, f)
        if best is None or key[:2] > best[:2]:
            best = key
    return best[2] if best else None


# A platform whose wheels are all at most this big holds metapackages, not TensorFlow builds (the real
# wheels are 50-600 MB; the metapackages about 2-8 KB).
METAPACKAGE_MAX_BYTES = 256 * 1024


def applicable_requirements(meta: Any, platform: str, python: str) -> list:
    """The Requires-Dist entries (packaging Requirements) that apply on ``platform`` with ``python`` and no extra
    (markers evaluated); entries packaging cannot read are skipped."""
    # lazy: start-up (packaging.requirements ~8 ms)
    from packaging.requirements import InvalidRequirement, Requirement

    env = idx.marker_environment(platform, python)
    out = []
    for raw in meta.get_all("Requires-Dist") or []:
        try:
            req = Requirement(str(raw))
        except InvalidRequirement:
            continue
        if req.marker is None or req.marker.evaluate(env):
            out.append(req)
    return out


def platform_requirements(meta: Any, platform: str, python: str) -> list[str]:
    """The Requires-Dist entries that apply on ``platform`` with ``python`` and no extra, without their
    markers (``tensorflow-intel==2.14.0``)."""
    out = []
    for req in applicable_requirements(meta, platform, python):
        req.marker = None
        out.append(str(req))
    return out


def _req_name(requirement: str) -> str:
    # lazy: start-up (packaging.requirements ~8 ms)
    from packaging.requirements import Requirement

    return Requirement(requirement).name


def add_metadata_facts(
    record: dict[str, Any],
    files: Sequence[idx.IndexFile],
    read_metadata: Callable[[idx.IndexFile], Any],
) -> None:
    """From wheel metadata: ``and_cuda`` (one Linux x86_64 wheel, when the release has that extra), and a
    note for each platform whose wheels are only metapackages (what they install there)."""
    if record["stub"]:
        return
    notes: list[str] = []
    for plat in idx.PLATFORMS:
        on_plat = [
            f for f in files
            if f.is_wheel and idx.wheel_support(f.filename, f.requires_python).get(plat)
        ]
        if not on_plat or any(f.size is None or f.size > METAPACKAGE_MAX_BYTES for f in on_plat):
            continue
        def newest_python(f: idx.IndexFile) -> Version:
            return Version(idx.wheel_support(f.filename, f.requires_python)[plat][-1])

        shim = max(on_plat, key=lambda f: (newest_python(f), f.filename))
        python = str(newest_python(shim))
        reqs = [
            r for r in platform_requirements(read_metadata(shim), plat, python)
            if canonicalize_name(_req_name(r)).startswith("tensorflow")
        ]
        biggest = max(f.size or 0 for f in on_plat)
        notes.append(
            f"{plat} wheels are metapackages (<= {biggest} bytes) that install "
            + (", ".join(reqs) if reqs else "no TensorFlow package")
            + f" (from {shim.filename})"
        )

    wheel = metadata_wheel(files)
    if wheel is not None and wheel.size is not None and wheel.size <= METAPACKAGE_MAX_BYTES:
        wheel = None  # a Linux x86_64 metapackage never happened; do not read extras from one
    if wheel is not None:
        meta = read_metadata(wheel)
        extras = {canonicalize_name(e) for e in (meta.get_all("Provides-Extra") or [])}
        pythons = idx.wheel_support(wheel.filename, wheel.requires_python).get("linux") or ("3.11",)
        reqs = idx.extra_requirements(meta, AND_CUDA, "linux", pythons[-1])
        if canonicalize_name(AND_CUDA) in extras or reqs:
            record["and_cuda"] = reqs
            how = "PEP 658 metadata file" if wheel.core_metadata else "its *.dist-info/METADATA, read with HTTP range requests"
            notes.append(f"and_cuda from {wheel.filename} ({how})")
    if notes:
        record["note"] = "; ".join(([record["note"]] if record.get("note") else []) + notes)


def build_records(
    files_by_package: Mapping[str, Sequence[idx.IndexFile]],
    *,
    fetched: str,
    read_metadata: Callable[[idx.IndexFile], Any] | None = None,
    workers: int = 6,
) -> list[dict[str, Any]]:
    """All records, sorted by package then version. ``read_metadata`` None skips what needs wheel
    metadata (``and_cuda`` stays empty, no metapackage notes)."""
    jobs: list[tuple[dict[str, Any], list[idx.IndexFile]]] = []
    problems: list[str] = []
    for package, files in files_by_package.items():
        for version, rel_files in group_releases(files).items():
            try:
                jobs.append((build_record(package, version, rel_files, fetched=fetched), rel_files))
            except UnclassifiedWheels as exc:
                problems.append(f"{package} {version}: {exc}")
    if problems:
        raise UnclassifiedWheels(
            "wheels on a tracked platform match no CPython in KNOWN_CPYTHON: " + " | ".join(problems)
        )
    if read_metadata is not None:
        with ThreadPoolExecutor(max_workers=max(1, workers)) as pool:
            list(pool.map(lambda job: add_metadata_facts(job[0], job[1], read_metadata), jobs))
    records = [r for r, _ in jobs]
    records.sort(key=lambda r: (r["package"], Version(r["version"])))
    return records


# --------------------------------------------------------------------------- TOML (this shape only)


def render_toml(generated: str, records: Sequence[Mapping[str, Any]], origin: str = "") -> str:
    """The file's text: a header comment, then the records in KEY_ORDER, written by tomli-w. `origin` is
    "refreshed" for a user's copy (`stackresolve refresh`), absent for the shipped file."""
    # lazy: start-up (tomli-w, only where TOML is written)
    import tomli_w

    ordered = [{k: r[k] for k in [k for k in KEY_ORDER if k in r] + sorted(k for k in r if k not in KEY_ORDER)}
               for r in records]
    header = ("# Generated from the package index by stackresolve.refresh.tensorflow_wheels (scripts/update_tf_wheels.py, or "
              "`stackresolve refresh`); do not edit by hand.\n# Schema: constraints/README.md "
              "(tensorflow_wheels.toml).\n")
    document: dict[str, Any] = {"generated": generated}
    if origin:
        document["origin"] = origin
    document["release"] = ordered
    return header + tomli_w.dumps(document, multiline_strings=False)


class RefreshTimeout(RuntimeError):
    pass


def fetch_wheels_toml(index: str | None = None, *, timeout: float = 300.0, workers: int = 6,
                      today: str | None = None, origin: str = "") -> tuple[str, list[dict[str, Any]]]:
    """Read the index and return (the tensorflow_wheels.toml text, its records). Raises
    idx.PackageIndexError (unreachable, refused), UnclassifiedWheels, RefreshTimeout."""
    # One deadline for the whole refresh: every request's timeout is cut to what is left, and retries stop at it.
    deadline = time.monotonic() + timeout
    fetched = today or _dt.datetime.now(_dt.timezone.utc).date().isoformat()
    base = idx.index_url(index)
    session = idx.make_session(deadline=deadline)

    def within(what: str, read):
        try:
            return read(idx.request_timeout(deadline))
        except (TimeoutError, idx.PackageIndexError):
            if time.monotonic() >= deadline:
                raise RefreshTimeout(f"stopped after {timeout:g} s (while reading {what})") from None
            raise

    files = {}
    for package in PACKAGES:
        files[package] = within(f"/simple/{package}/", lambda limit, package=package: idx.project_files(
            package, index=base, session=session, timeout=limit))

    def read_metadata(file: idx.IndexFile):
        return within(file.filename, lambda limit: idx.wheel_metadata(file, session=session, timeout=limit))

    records = build_records(files, fetched=fetched, read_metadata=read_metadata, workers=workers)
    return render_toml(fetched, records, origin), records
