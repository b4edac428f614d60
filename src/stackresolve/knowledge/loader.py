"""Loads and validates constraints/*.toml. The only module that reads TOML."""

from __future__ import annotations

import hashlib
import marshal
import os
import sys
from functools import lru_cache
from pathlib import Path

if sys.version_info >= (3, 11):
    import tomllib
else:  # pragma: no cover - exercised on Python 3.10 only
    import tomli as tomllib

from packaging.version import InvalidVersion, Version

from stackresolve.knowledge.model import (
    WHEEL_PLATFORMS,
    ArchSupport,
    CompiledArch,
    CudaToolkit,
    CudnnBuild,
    CudnnRelease,
    Gpu,
    NvidiaBuild,
    Pitfall,
    PlatformMinimum,
    TensorFlowLine,
    TestedBuild,
    WheelRelease,
    cc_tuple,
)


class KnowledgeError(ValueError):
    """A constraints file does not have the documented shape."""


def constraints_dir() -> Path:
    import stackresolve.constraints

    return Path(stackresolve.constraints.__file__).parent


def _read_bytes(name: str, directory: Path | None) -> bytes:
    path = (directory or constraints_dir()) / name
    try:
        return path.read_bytes()
    except OSError as exc:
        raise KnowledgeError(f"{path}: cannot read the knowledge base ({exc.strerror})") from exc


def _parse(name: str, raw: bytes) -> dict:
    try:
        return tomllib.loads(raw.decode("utf-8"))
    except (tomllib.TOMLDecodeError, UnicodeDecodeError) as exc:
        raise KnowledgeError(f"{name}: not valid TOML ({exc})") from exc


def read_toml(name: str, directory: Path | None = None) -> tuple[dict, bytes]:
    raw = _read_bytes(name, directory)
    return _parse(name, raw), raw


def python_column(text: str) -> tuple[str, ...]:
    """Expand a tested-build Python column ("2.7, 3.3-3.7") into minors ("2.7", "3.3", ..., "3.7")."""
    versions: list[str] = []
    for part in text.replace(" ", "").split(","):
        if not part:
            continue
        low, _, high = part.partition("-")
        lo, hi = cc_tuple(low), cc_tuple(high or low)
        if lo[0] != hi[0] or lo > hi:
            raise KnowledgeError(f"python column {text!r}: cannot read range {part!r}")
        versions += [f"{lo[0]}.{m}" for m in range(lo[1], hi[1] + 1)]
    return tuple(versions)


def _need(record: dict, key: str, where: str, kind=str):
    if key not in record:
        raise KnowledgeError(f"{where}: missing `{key}`")
    value = record[key]
    if not isinstance(value, kind):
        raise KnowledgeError(f"{where}: `{key}` must be {kind.__name__}, got {value!r}")
    return value


def _source(record: dict, where: str) -> str:
    source = record.get("source")
    if not isinstance(source, str) or not source.strip():
        raise KnowledgeError(f"{where}: record has no `source`")
    return source


def _version(text: str, where: str) -> str:
    try:
        Version(text)
    except InvalidVersion as exc:
        raise KnowledgeError(f"{where}: {text!r} is not a version") from exc
    return text


def _table_version(text: str) -> str:
    """The tables print some versions as a bare major ("CUDA 9", "cuDNN 7"): that is X.0 and up."""
    return f"{text}.0" if text.isdigit() else text


def _optional_version(text: str, where: str) -> str:
    return _version(text, where) if text else ""


def _cc(text: str, where: str) -> str:
    try:
        cc_tuple(text)
    except ValueError as exc:
        raise KnowledgeError(f"{where}: {text!r} is not a compute capability X.Y") from exc
    return text


def _records(doc: dict, table: str, file: str) -> list[tuple[dict, str]]:
    rows = doc.get(table, [])
    if not isinstance(rows, list):
        raise KnowledgeError(f"{file}: `{table}` must be an array of tables")
    return [(row, f"{file} [[{table}]] #{i + 1}") for i, row in enumerate(rows)]


def parse_tensorflow(doc: dict):
    f = "tensorflow.toml"
    lines = tuple(
        TensorFlowLine(
            version=_version(_need(r, "version", w), w),
            gpu_package_linux=_need(r, "gpu_package_linux", w),
            gpu_package_windows=_need(r, "gpu_package_windows", w),
            and_cuda_extra=_need(r, "and_cuda_extra", w, bool),
            source=_source(r, w),
            note=r.get("note", ""),
            and_cuda_blocker=r.get("and_cuda_blocker", ""),
        )
        for r, w in _records(doc, "line", f)
    )
    builds = tuple(
        TestedBuild(
            os=_need(r, "os", w),
            package=_need(r, "package", w),
            version=_version(_need(r, "version", w), w),
            python=_need(r, "python", w),
            python_versions=python_column(_need(r, "python", w)),
            compiler=r.get("compiler", ""),
            build_tools=r.get("build_tools", ""),
            cuda=_table_version(r.get("cuda", "")),
            cudnn=_table_version(r.get("cudnn", "")),
            source=_source(r, w),
            note=r.get("note", ""),
        )
        for r, w in _records(doc, "tested_build", f)
    )
    archs = tuple(
        CompiledArch(
            line=_need(r, "line", w),
            sass=tuple(_cc(c, w) for c in _need(r, "sass", w, list)),
            ptx=tuple(_cc(c, w) for c in _need(r, "ptx", w, list)),
            source=_source(r, w),
            note=r.get("note", ""),
            os=_need(r, "os", w) if table == "compiled_arch_override" else "",
            versions=tuple(_version(v, w) for v in r.get("versions", ())),
        )
        for table in ("compiled_arch", "compiled_arch_override")
        for r, w in _records(doc, table, f)
    )
    for b in builds:
        if b.os not in ("linux", "windows", "macos"):
            raise KnowledgeError(f"{f}: tested_build {b.version}: unknown os {b.os!r}")
    return lines, builds, archs


def parse_wheels(doc: dict) -> tuple[WheelRelease, ...]:
    f = "tensorflow_wheels.toml"
    releases = []
    for r, w in _records(doc, "release", f):
        releases.append(
            WheelRelease(
                package=_need(r, "package", w),
                version=_version(_need(r, "version", w), w),
                pythons={p: tuple(r.get(p, ())) for p in WHEEL_PLATFORMS},
                yanked=bool(r.get("yanked", False)),
                stub=bool(r.get("stub", False)),
                and_cuda=tuple(r.get("and_cuda", ())),
                source=_source(r, w),
            )
        )
    return tuple(releases)


def parse_cuda(doc: dict) -> tuple[CudaToolkit, ...]:
    f = "cuda.toml"
    return tuple(
        CudaToolkit(
            version=_version(_need(r, "version", w), w),
            releases=tuple(_version(v, w) for v in r.get("releases", [])),
            driver_linux=_optional_version(_need(r, "driver_linux", w), w),
            driver_windows=_optional_version(_need(r, "driver_windows", w), w),
            compat_driver_linux=r.get("compat_driver_linux", ""),
            compat_driver_windows=r.get("compat_driver_windows", ""),
            arch_min=_cc(_need(r, "arch_min", w), w),
            arch_max=_cc(_need(r, "arch_max", w), w),
            released=r.get("released", ""),
            source=_source(r, w),
            note=r.get("note", ""),
        )
        for r, w in _records(doc, "toolkit", f)
    )


def parse_cudnn(doc: dict) -> tuple[CudnnRelease, ...]:
    f = "cudnn.toml"
    known = {"version", "builds", "arch_min", "arch_max", "released", "source", "note"}
    releases = []
    for r, w in _records(doc, "release", f):
        builds = tuple(
            CudnnBuild(cuda=_need(b, "cuda", w), full_version=_need(b, "full_version", w))
            for b in _need(r, "builds", w, list)
        )
        releases.append(
            CudnnRelease(
                version=_version(_need(r, "version", w), w),
                builds=builds,
                arch_min=_cc(_need(r, "arch_min", w), w),
                arch_max=_cc(_need(r, "arch_max", w), w),
                released=r.get("released", ""),
                source=_source(r, w),
                note=r.get("note", ""),
                extra={k: v for k, v in r.items() if k not in known},
            )
        )
    return tuple(releases)


def parse_gpus(doc: dict) -> tuple[Gpu, ...]:
    f = "gpus.toml"
    return tuple(
        Gpu(
            name=_need(r, "name", w),
            cc=_cc(_need(r, "cc", w), w),
            architecture=_need(r, "architecture", w),
            segment=_need(r, "segment", w),
            aliases=tuple(r.get("aliases", ())),
            source=_source(r, w),
            note=r.get("note", ""),
        )
        for r, w in _records(doc, "gpu", f)
    )


def parse_drivers(doc: dict) -> tuple[tuple[ArchSupport, ...], tuple[PlatformMinimum, ...]]:
    f = "drivers.toml"
    support = tuple(
        ArchSupport(
            architecture=_need(r, "architecture", w),
            cc=tuple(_cc(c, w) for c in _need(r, "cc", w, list)),
            last_branch=r.get("last_branch", ""),
            last_version=r.get("last_version", ""),
            source=_source(r, w),
            note=r.get("note", ""),
        )
        for r, w in _records(doc, "arch_support", f)
    )
    minimums = tuple(
        PlatformMinimum(
            platform=_need(r, "platform", w),
            driver=_version(_need(r, "driver", w), w),
            source=_source(r, w),
            note=r.get("note", ""),
        )
        for r, w in _records(doc, "platform_minimum", f)
    )
    return support, minimums


def parse_pitfalls(doc: dict) -> tuple[Pitfall, ...]:
    from packaging.requirements import InvalidRequirement, Requirement
    from packaging.specifiers import InvalidSpecifier, SpecifierSet

    f = "pitfalls.toml"
    pins = []
    for r, w in _records(doc, "pin", f):
        pin = Pitfall(
            package=_need(r, "package", w),
            constraint=_need(r, "constraint", w),
            tf=_need(r, "tf", w),
            os=tuple(r.get("os", ())),
            python=r.get("python", ""),
            why=_need(r, "why", w),
            source=_source(r, w),
        )
        try:
            Requirement(pin.requirement)
            SpecifierSet(pin.tf)
            SpecifierSet(pin.python)
        except (InvalidRequirement, InvalidSpecifier) as exc:
            raise KnowledgeError(f"{w}: {exc}") from exc
        pins.append(pin)
    return tuple(pins)


# What planning relies on in an NVIDIA build record: it is left out unless all of these were read in a source.
NVIDIA_PIP_NEEDS = {"tf_base", "python", "cuda", "driver_stated"}
NVIDIA_CONTAINER_NEEDS = {"tf_base", "cuda", "driver_stated"}


def parse_nvidia_builds(doc: dict) -> tuple[NvidiaBuild, ...]:
    f = "nvidia_tensorflow.toml"
    builds = []
    for kind, table, needs in (("pip", "pip_release", NVIDIA_PIP_NEEDS),
                               ("container", "container", NVIDIA_CONTAINER_NEEDS)):
        for r, w in _records(doc, table, f):
            verified = tuple(r.get("verified_fields", ()))
            if not needs <= set(verified):
                continue
            python = r.get("python", [])
            builds.append(NvidiaBuild(
                kind=kind,
                version=_need(r, "version" if kind == "pip" else "release", w),
                tf_base=_version(_need(r, "tf_base", w), w),
                release=r.get("container", r.get("release", "")),
                pythons=tuple(python) if isinstance(python, list) else (python,),
                cuda=_version(_need(r, "cuda", w), w),
                cudnn=r.get("cudnn", ""),
                driver_stated=_version(_need(r, "driver_stated", w), w),
                driver_compat=tuple(r.get("driver_compat", ()) if "driver_compat" in verified else ()),
                tag=r.get("tag", ""),
                ubuntu=r.get("ubuntu", "") if "ubuntu" in verified else "",
                cuda_wheels=bool(r.get("cuda_wheel_names")),
                verified=verified,
                source=_source(r, w),
                note=r.get("note", ""),
            ))
    return tuple(builds)


CORE_FILES = ("meta.toml", "tensorflow.toml", "tensorflow_wheels.toml", "cuda.toml", "cudnn.toml", "gpus.toml",
              "drivers.toml", "pitfalls.toml", "docker.toml", "windows.toml", "apt.toml", "conda.toml", "nvidia_tensorflow.toml")


def cache_dir(env=os.environ) -> Path | None:
    """Where parsed knowledge is cached: STACKRESOLVE_CACHE_DIR, else the platform's user cache folder.
    STACKRESOLVE_NO_CACHE=1 turns the cache off."""
    if env.get("STACKRESOLVE_NO_CACHE"):
        return None
    if env.get("STACKRESOLVE_CACHE_DIR"):
        return Path(env["STACKRESOLVE_CACHE_DIR"])
    if sys.platform == "win32" and env.get("LOCALAPPDATA"):
        return Path(env["LOCALAPPDATA"]) / "stackresolve" / "cache"
    base = env.get("XDG_CACHE_HOME") or (Path.home() / ".cache")
    return Path(base) / "stackresolve"


def _parsed_documents(directory: Path | None) -> tuple[dict[str, dict], str]:
    """Every core file parsed, and the digest of their bytes.

    Parsing the TOML is most of a cold start, so the parsed documents are cached under the digest of the
    files' bytes: an edited file has another digest, so a stale cache is never read. marshal (the format of
    .pyc files) is only readable by the same Python version, hence the version in the name."""
    raws = {name: _read_bytes(name, directory) for name in CORE_FILES}
    digest = hashlib.sha256(b"".join(hashlib.sha256(raw).digest() for raw in raws.values())).hexdigest()
    folder = cache_dir()
    cached = folder / f"knowledge-{digest[:24]}-py{sys.version_info[0]}{sys.version_info[1]}.marshal" \
        if folder else None
    if cached is not None:
        try:
            docs = marshal.loads(cached.read_bytes())
            if isinstance(docs, dict) and set(docs) == set(CORE_FILES):
                return docs, digest
        except (OSError, ValueError, EOFError, TypeError):
            pass  # absent or unreadable: parse, and try to write it again
    docs = {name: _parse(name, raw) for name, raw in raws.items()}
    if cached is not None:
        try:
            from stackresolve.files import atomic_write_bytes

            cached.parent.mkdir(parents=True, exist_ok=True)
            atomic_write_bytes(cached, marshal.dumps(docs))
        except (OSError, ValueError):
            pass  # a read-only home or a value marshal cannot store: the cache is only an optimisation
    return docs, digest


def load_knowledge(directory: Path | None = None):
    """Read and validate the core knowledge base. Raises KnowledgeError on a malformed file."""
    from stackresolve.knowledge.base import KnowledgeBase

    docs, digest_text = _parsed_documents(directory)
    from stackresolve.knowledge.install_facts import InstallFactsError, parse_docker, parse_windows

    lines, builds, archs = parse_tensorflow(docs["tensorflow.toml"])
    support, minimums = parse_drivers(docs["drivers.toml"])
    try:
        tf_images, cuda_images = parse_docker(docs["docker.toml"])
        cuda_installers, cudnn_zips, msvc_runtimes = parse_windows(docs["windows.toml"])
    except InstallFactsError as exc:
        raise KnowledgeError(str(exc)) from exc
    from stackresolve.knowledge.channels import parse_apt, parse_conda

    try:
        apt, conda = parse_apt(docs["apt.toml"]), parse_conda(docs["conda.toml"])
    except ValueError as exc:
        raise KnowledgeError(str(exc)) from exc
    return KnowledgeBase(
        date=str(docs["meta.toml"].get("date", "")),
        digest=digest_text[:12],
        lines=lines,
        tested_builds=builds,
        compiled_archs=archs,
        wheels=parse_wheels(docs["tensorflow_wheels.toml"]),
        toolkits=parse_cuda(docs["cuda.toml"]),
        cudnn=parse_cudnn(docs["cudnn.toml"]),
        gpus=parse_gpus(docs["gpus.toml"]),
        arch_support=support,
        platform_minimums=minimums,
        pitfalls=parse_pitfalls(docs["pitfalls.toml"]),
        tf_images=tf_images,
        cuda_images=cuda_images,
        cuda_installers=cuda_installers,
        cudnn_zips=cudnn_zips,
        msvc_runtimes=msvc_runtimes,
        apt=apt,
        conda=conda,
        nvidia_builds=parse_nvidia_builds(docs["nvidia_tensorflow.toml"]),
        nvidia_index=next((_source(r, w) for r, w in _records(docs["nvidia_tensorflow.toml"], "index",
                                                               "nvidia_tensorflow.toml")), ""),
    )


@lru_cache(maxsize=1)
def knowledge():
    """The packaged knowledge base, loaded once per process."""
    return load_knowledge()


@lru_cache(maxsize=1)
def error_knowledge():
    """constraints/errors.toml (known error messages, library names, version hints), loaded on first use:
    only `explain` and `doctor` need it."""
    from stackresolve.knowledge.errors import parse_error_knowledge

    doc, _ = read_toml("errors.toml")
    try:
        return parse_error_knowledge(doc)
    except ValueError as exc:
        raise KnowledgeError(f"errors.toml: {exc}") from exc


@lru_cache(maxsize=4)
def nvidia_pci_ids(directory: Path | None = None) -> dict[int, str]:
    """constraints/pci_ids.toml: NVIDIA PCI device id -> pci.ids name ("GP102 [GeForce GTX 1080 Ti]"), read on
    first use: only detection of a GPU that no driver names needs it. Raises KnowledgeError on a malformed file."""
    name = "pci_ids.toml"
    doc, _ = read_toml(name, directory)
    source, devices = doc.get("source"), doc.get("devices")
    if not isinstance(source, dict) or not str(source.get("version", "")).strip():
        raise KnowledgeError(f"{name}: [source] must say which pci.ids version the table comes from")
    if not isinstance(devices, dict) or not devices:
        raise KnowledgeError(f"{name}: [devices] must map PCI device ids to names")
    table: dict[int, str] = {}
    for key, value in devices.items():
        if len(key) != 4 or not all(c in "0123456789abcdef" for c in key):
            raise KnowledgeError(f"{name}: device id {key!r} is not 4 lowercase hex digits")
        if not isinstance(value, str) or not value.strip():
            raise KnowledgeError(f"{name}: device {key} has no name")
        table[int(key, 16)] = value
    return table
