"""Loads and validates constraints/*.toml. The only module that reads TOML."""

from __future__ import annotations

import re
import os
from functools import lru_cache, partial
from pathlib import Path


from stackresolve.knowledge.fields import Fields, KnowledgeError, records
from stackresolve.knowledge.records import (
    WHEEL_PLATFORMS,
    ArchSupport,
    CompiledArch,
    CudaToolkit,
    CudnnArtifact,
    CudnnBuild,
    CudnnRelease,
    DriverBranch,
    Gpu,
    NvidiaBuild,
    NvidiaProject,
    Pitfall,
    PlatformMinimum,
    SourceBuild,
    TensorFlowLine,
    TestedBuild,
    WheelRelease,
)


def constraints_dir() -> Path:
    # lazy: start-up (only this path needs constraints)
    import stackresolve.constraints

    return Path(stackresolve.constraints.__file__).parent


def _read_bytes(name: str, directory: Path | None) -> bytes:
    path = (directory or constraints_dir()) / name
    try:
        return path.read_bytes()
    except OSError as exc:
        raise KnowledgeError(f"{path}: cannot read the knowledge base ({exc.strerror})") from exc


def _parse(name: str, raw: bytes) -> dict:
    # tomli before the standard library's tomllib (the same parser): tomli's wheels are compiled (mypyc) and parse
    # the knowledge base about 2.5 x faster, and parsing is most of the first run after install (issue 24)
    # lazy: start-up (the TOML reader, only where TOML is read)
    try:
        import tomli as tomllib
    except ImportError:  # pragma: no cover - a Python 3.11+ install without tomli
        import tomllib

    try:
        return tomllib.loads(raw.decode("utf-8"))
    except (tomllib.TOMLDecodeError, UnicodeDecodeError, RecursionError, ValueError) as exc:
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
        lo, hi = _minor_pair(low), _minor_pair(high or low)
        if lo[0] != hi[0] or lo > hi:
            raise KnowledgeError(f"python column {text!r}: cannot read range {part!r}")
        versions += [f"{lo[0]}.{m}" for m in range(lo[1], hi[1] + 1)]
    return tuple(versions)


def _minor_pair(python: str) -> tuple[int, int]:
    """'3.7' -> (3, 7): a Python of the tested-build tables, ordered by (major, minor)."""
    major, minor = python.split(".")
    return int(major), int(minor)


def _table_version(text: str) -> str:
    """The tables print some versions as a bare major ("CUDA 9", "cuDNN 7"): that is X.0 and up."""
    return f"{text}.0" if text.isdigit() else text


def parse_tensorflow(doc: dict):
    f = "tensorflow.toml"
    lines = tuple(
        TensorFlowLine(
            version=r.version("version"),
            gpu_package_linux=r.text("gpu_package_linux", allow_empty=True),
            gpu_package_windows=r.text("gpu_package_windows", allow_empty=True),
            and_cuda_extra=r.flag("and_cuda_extra"),
            source=r.source(),
            note=r.note(),
            and_cuda_blocker=r.text("and_cuda_blocker", optional=True),
        )
        for r in records(doc, "line", f)
    )
    builds = tuple(
        TestedBuild(
            os=r.one_of("os", ("linux", "windows", "macos")),
            package=r.text("package"),
            version=r.version("version"),
            python=r.text("python"),
            python_versions=python_column(r.text("python")),
            compiler=r.text("compiler", optional=True),
            build_tools=r.text("build_tools", optional=True),
            cuda=_table_version(r.text("cuda", optional=True)),
            cudnn=_table_version(r.text("cudnn", optional=True)),
            source=r.source(),
            note=r.note(),
        )
        for r in records(doc, "tested_build", f)
    )
    archs = tuple(
        CompiledArch(
            line=r.version("line"),
            sass=r.ccs("sass"),
            ptx=r.ccs("ptx"),
            source=r.source(),
            note=r.note(),
            os=r.one_of("os", ("linux", "windows")) if table == "compiled_arch_override" else "",
            versions=r.versions("versions", optional=True),
        )
        for table in ("compiled_arch", "compiled_arch_override")
        for r in records(doc, table, f)
    )
    artifacts = tuple(
        CudnnArtifact(
            line=r.version("line"),
            os=r.one_of("os", ("linux", "windows")),
            cuda=r.version("cuda"),
            cudnn=r.version("cudnn"),
            full_version=r.version("full_version", allow_empty=True),
            how=r.one_of("how", ("dockerfile", "install-guide", "and-cuda-pin", "tested-table-only", "inferred")),
            source=r.source(),
            note=r.note(),
            compiled=r.version("compiled", optional=True),
        )
        for r in records(doc, "cudnn_artifact", f)
    )
    return lines, builds, archs, artifacts


def parse_source_builds(doc: dict) -> tuple[SourceBuild, ...]:
    return tuple(
        SourceBuild(
            package=r.text("package", pattern=r"^[A-Za-z0-9][A-Za-z0-9._-]*$"),
            version=r.version("version"),
            lines=r.versions("lines"),
            pythons=r.versions("pythons", optional=True),
            why=r.text("why"),
            source=r.source(),
            sha256=r.texts("sha256", pattern=r"^[0-9a-f]{64}$"),
        )
        for r in records(doc, "source_build", "tensorflow.toml")
    )


def parse_wheels(doc: dict) -> tuple[WheelRelease, ...]:
    return tuple(
        WheelRelease(
            package=r.text("package"),
            version=r.version("version"),
            pythons={p: r.texts(p, optional=True) for p in WHEEL_PLATFORMS},
            yanked=r.flag("yanked", optional=True),
            stub=r.flag("stub", optional=True),
            and_cuda=r.texts("and_cuda", optional=True),
            source=r.source(),
        )
        for r in records(doc, "release", "tensorflow_wheels.toml")
    )


def parse_cuda(doc: dict) -> tuple[CudaToolkit, ...]:
    return tuple(
        CudaToolkit(
            version=r.version("version"),
            releases=r.versions("releases", optional=True),
            driver_linux=r.version("driver_linux", allow_empty=True),
            driver_windows=r.version("driver_windows", allow_empty=True),
            compat_driver_linux=r.version("compat_driver_linux", optional=True),
            compat_driver_windows=r.version("compat_driver_windows", optional=True),
            arch_min=r.cc("arch_min"),
            arch_max=r.cc("arch_max"),
            released=r.text("released", optional=True),
            source=r.source(),
            note=r.note(),
        )
        for r in records(doc, "toolkit", "cuda.toml")
    )


def parse_cudnn(doc: dict) -> tuple[CudnnRelease, ...]:
    known = {"version", "builds", "arch_min", "arch_max", "released", "source", "note"}
    releases = []
    for r in records(doc, "release", "cudnn.toml"):
        raw_builds = r.record.get("builds")
        if not isinstance(raw_builds, list) or not raw_builds:
            raise r.fail("`builds` must be a non-empty array of tables")
        builds = tuple(CudnnBuild(cuda=b.text("cuda"), full_version=b.version("full_version"))
                       for b in (Fields(b, f"{r.where} builds") for b in raw_builds))
        releases.append(CudnnRelease(
            version=r.version("version"),
            builds=builds,
            arch_min=r.cc("arch_min"),
            arch_max=r.cc("arch_max"),
            released=r.text("released", optional=True),
            source=r.source(),
            note=r.note(),
            extra={k: v for k, v in r.record.items() if k not in known},
        ))
    return tuple(releases)


def parse_gpus(doc: dict) -> tuple[Gpu, ...]:
    return tuple(
        Gpu(
            name=r.text("name"),
            cc=r.cc("cc"),
            architecture=r.text("architecture"),
            segment=r.text("segment"),
            aliases=r.texts("aliases", optional=True),
            source=r.source(),
            note=r.note(),
        )
        for r in records(doc, "gpu", "gpus.toml")
    )


def parse_drivers(doc: dict) -> tuple[tuple[ArchSupport, ...], tuple[PlatformMinimum, ...]]:
    f = "drivers.toml"
    support = tuple(
        ArchSupport(
            architecture=r.text("architecture"),
            cc=r.ccs("cc"),
            last_branch=r.text("last_branch", optional=True, pattern=r"\d{3,4}"),
            last_version=r.version("last_version", optional=True),
            source=r.source(),
            note=r.note(),
        )
        for r in records(doc, "arch_support", f)
    )
    minimums = tuple(
        PlatformMinimum(platform=r.text("platform"), driver=r.version("driver"), source=r.source(), note=r.note())
        for r in records(doc, "platform_minimum", f)
    )
    return support, minimums


def parse_driver_branches(doc: dict) -> tuple[DriverBranch, ...]:
    """drivers.toml's [[data_center_compat]]: NVIDIA's driver branch lifecycle table."""
    return tuple(
        DriverBranch(
            branch=r.text("branch", pattern=r"\d{3,4}"),
            designation=r.one_of("designation", ("LTSB", "PB", "NFB")),
            end_of_life=r.text("end_of_life", optional=True, pattern=r"\d{4}-\d{2}"),
            native_cuda_major=r.text("native_cuda_major", pattern=r"\d{1,3}"),
            os=r.texts("os", optional=True),
            source=r.source(),
            note=r.note(),
        )
        for r in records(doc, "data_center_compat", "drivers.toml")
    )


def parse_pitfalls(doc: dict) -> tuple[Pitfall, ...]:
    # lazy: start-up (packaging.requirements ~8 ms)
    from packaging.requirements import InvalidRequirement, Requirement
    from packaging.specifiers import InvalidSpecifier, SpecifierSet

    pins = []
    for r in records(doc, "pin", "pitfalls.toml"):
        pin = Pitfall(
            package=r.text("package"),
            constraint=r.text("constraint"),
            tf=r.text("tf"),
            os=r.texts("os", optional=True),
            python=r.text("python", optional=True),
            why=r.text("why"),
            source=r.source(),
        )
        try:
            Requirement(pin.requirement)
            SpecifierSet(pin.tf)
            SpecifierSet(pin.python)
        except (InvalidRequirement, InvalidSpecifier) as exc:
            raise r.fail(str(exc)) from exc
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
        for r in records(doc, table, f):
            verified = r.texts("verified_fields", optional=True)
            if not needs <= set(verified):
                continue
            python = r.record.get("python", [])
            builds.append(NvidiaBuild(
                kind=kind,
                version=r.text("version" if kind == "pip" else "release"),
                tf_base=r.version("tf_base"),
                release=r.text("container", optional=True) or r.text("release", optional=True),
                pythons=r.texts("python") if isinstance(python, list) else (r.text("python"),),
                cuda=r.version("cuda"),
                cudnn=r.text("cudnn", optional=True),
                driver_stated=r.version("driver_stated"),
                driver_compat=r.versions("driver_compat", optional=True) if "driver_compat" in verified else (),
                tag=r.text("tag", optional=True),
                ubuntu=r.text("ubuntu", optional=True) if "ubuntu" in verified else "",
                cuda_wheels=bool(r.record.get("cuda_wheel_names")),
                verified=verified,
                source=r.source(),
                note=r.note(),
            ))
    return tuple(builds)


def parse_nvidia_project(doc: dict) -> NvidiaProject | None:
    f = "nvidia_tensorflow.toml"
    return next((NvidiaProject(maintained=r.flag("maintained"), last_release=r.text("last_release"),
                               deprecated=r.text("deprecated", optional=True, pattern=r"\d{4}-\d{2}-\d{2}"),
                               source=r.source(), note=r.note())
                 for r in records(doc, "project", f)), None)


CORE_FILES = ("meta.toml", "tensorflow.toml", "tensorflow_wheels.toml", "cuda.toml", "cudnn.toml", "gpus.toml",
              "drivers.toml", "pitfalls.toml", "nvidia_tensorflow.toml")
INSTALL_FILES = ("docker.toml", "windows.toml", "apt.toml", "conda.toml")
FRAMEWORK_FILES = ("pytorch.toml", "torch_companions.toml", "jax.toml", "apple.toml")
ACCELERATOR_FILES = ("amd.toml", "intel.toml")  # AMD and Intel GPUs (knowledge/accelerators.py)


WHEELS_FILE = "tensorflow_wheels.toml"
_GENERATED = re.compile(rb'^generated = "(\d{4}-\d{2}-\d{2})"', re.M)


def refreshed_wheels_path(env=os.environ) -> Path | None:
    """Where `stackresolve refresh` keeps the user's copy of tensorflow_wheels.toml (None: no cache folder)."""
    # lazy: start-up (only this path needs knowledge.snapshot)
    from stackresolve.knowledge.snapshot import cache_dir

    folder = cache_dir(env)
    return folder / "data" / WHEELS_FILE if folder is not None else None


def generated_date(raw: bytes) -> str:
    match = _GENERATED.search(raw[:16384])  # after the file's header comment
    return match.group(1).decode() if match else ""


def _data(directory: Path | None) -> dict[str, bytes]:
    """Every shipped core, install and framework file's bytes."""
    return {name: _read_bytes(name, directory)
            for name in CORE_FILES + INSTALL_FILES + FRAMEWORK_FILES + ACCELERATOR_FILES}


def _digest(raws: dict[str, bytes], used: dict[str, bytes]) -> str:
    """The digest of the data in use (printed with every plan and lock): the shipped files and the refreshed kinds
    laid over them."""
    # lazy: start-up (hashlib, only this path)
    import hashlib  # only when the knowledge base is built

    parts = [hashlib.sha256(raw).digest() for raw in raws.values()]
    parts += [hashlib.sha256(name.encode() + b"\0" + used[name]).digest() for name in sorted(used)]
    return hashlib.sha256(b"".join(parts)).hexdigest()


def _data_key(directory: Path | None, refreshed: dict[str, bytes] | None = None) -> str:
    """What the snapshot of the data files is keyed by: each packaged file's size and modification time (nothing
    read), and the checksum of each refreshed kind in the user's cache, read anyway to be checked."""
    # lazy: start-up (only this path needs knowledge.snapshot)
    from stackresolve.knowledge.snapshot import checksum, files_key

    folder = directory or constraints_dir()
    shipped = files_key(str(folder / name)
                        for name in CORE_FILES + INSTALL_FILES + FRAMEWORK_FILES + ACCELERATOR_FILES)
    extra = "".join(f"+{name}:{checksum(refreshed[name])}" for name in sorted(refreshed or {}))
    return shipped + extra


def _validators():
    """constraints file -> the check a merged document must pass (the file's own parser). The framework parsers
    are imported only when one is called: a TensorFlow plan never loads them."""

    def wheels(doc):
        if not parse_wheels(doc):
            raise KnowledgeError(f"{WHEELS_FILE}: holds no TensorFlow releases")

    def drivers(doc):
        parse_drivers(doc)
        for r in records(doc, "data_center_compat", "drivers.toml"):
            r.text("branch", pattern=r"\d{3,4}")
            r.text("designation")
            r.text("end_of_life", allow_empty=True)
            r.source()

    def framework(name):
        def check(doc):
            # lazy: start-up (only this path needs knowledge.frameworks)
            from stackresolve.knowledge import frameworks

            getattr(frameworks, name)(doc)
        return check

    return {WHEELS_FILE: wheels, "cuda.toml": parse_cuda, "cudnn.toml": parse_cudnn, "drivers.toml": drivers,
            "pytorch.toml": framework("parse_pytorch"), "torch_companions.toml": framework("parse_torch_companions"),
            "jax.toml": framework("parse_jax"), "apple.toml": framework("parse_apple")}


def _lay_over(docs: dict[str, dict], refreshed: dict[str, bytes],
              shipped_dates: dict[str, str]) -> tuple[dict[str, dict], list[str]]:
    """Each refreshed kind laid over its shipped file (when that file is in `docs`), checked by the file's own
    parser; a kind that does not pass is left out with a warning. Changes `docs` in place; returns {kind: its
    refreshed document} of the kinds in use, and the warnings."""
    # lazy: start-up (only this path needs knowledge.refreshed)
    from stackresolve.knowledge import refreshed as rk

    validators = _validators()
    used: dict[str, dict] = {}
    warnings: list[str] = []
    for kind in rk.KINDS:
        if kind.name not in refreshed or kind.target not in docs:
            continue
        doc, problem = rk.usable(refreshed[kind.name], shipped_dates.get(kind.target, ""),
                                 lambda raw, k=kind: _parse(k.target, raw))
        if doc is not None:
            try:
                merged = rk.merge(docs[kind.target], doc, kind)
                validators[kind.target](merged)
            except (KnowledgeError, ValueError, TypeError) as exc:
                problem = str(exc)
            else:
                docs[kind.target] = merged
                used[kind.name] = doc
                continue
        if problem:
            warnings.append(rk.fallback_warning(kind, rk.cache_path(kind.name), problem.removeprefix(f"{kind.target}: ")))
    return used, warnings


def _shipped_dates(raws: dict[str, bytes], kb_date: str) -> dict[str, str]:
    return {name: generated_date(raw) or kb_date for name, raw in raws.items()}


def _build(directory: Path | None, refreshed: dict[str, bytes]):
    """(knowledge base, install facts, framework facts or None) built from the shipped files with the refreshed
    kinds laid over them. The framework facts are built at once only when a refreshed kind changes them (so
    that the label a plan prints is never "refreshed" for data that then failed to load)."""
    # lazy: start-up (only this path needs knowledge.refreshed)
    from stackresolve.knowledge import refreshed as rk

    raws = _data(directory)
    framework_kinds = any(rk.BY_NAME[name].target in FRAMEWORK_FILES for name in refreshed)
    shipped = {name: _parse(name, raw) for name, raw in raws.items()
               if name not in FRAMEWORK_FILES or framework_kinds}
    kb_date = str(shipped["meta.toml"].get("date", ""))
    dates = _shipped_dates(raws, kb_date)
    docs = dict(shipped)
    used, problems = _lay_over(docs, refreshed, dates)
    try:
        return _assemble(docs, raws, refreshed, used, dates, problems)
    except KnowledgeError as exc:
        if not used:
            raise
        # The kinds passed their own files' checks but not the knowledge base's cross-checks: none is used.
        problems += [rk.fallback_warning(rk.BY_NAME[name], rk.cache_path(name), f"not used ({exc})") for name in used]
        return _assemble(shipped, raws, refreshed, {}, dates, problems)


def _assemble(docs, raws, refreshed, used, dates, problems):
    # lazy: start-up (only this path needs knowledge.refreshed)
    from stackresolve.knowledge import refreshed as rk

    install = _build_install(docs)
    kb = build_knowledge(docs, _digest(raws, {name: refreshed[name] for name in used}), install, None, None,
                         rk.data_kinds(dates, used), tuple(problems))
    frameworks = None
    if any(rk.BY_NAME[name].target in FRAMEWORK_FILES for name in used):
        # lazy: start-up (only this path needs knowledge.frameworks)
        from stackresolve.knowledge.frameworks import build_frameworks

        frameworks = build_frameworks({name: docs[name] for name in FRAMEWORK_FILES})
    return kb, install, frameworks


def load_knowledge(directory: Path | None = None, *, use_snapshot: bool = True):
    """The validated knowledge base: from its snapshot when one was built from these very files (by this code
    and Python), else parsed, validated and snapshotted. Its install facts (docker, windows, apt, conda) and the
    PyTorch/JAX/Apple facts load on first use. Refreshed kinds in the user's cache (knowledge/refreshed.py) are
    laid over the shipped files; one that is broken is left out, with a warning in `load_warnings`. Raises
    KnowledgeError on a malformed packaged file."""
    # lazy: start-up (only this path needs knowledge.refreshed, knowledge.snapshot, ...)
    from stackresolve.knowledge import refreshed as rk
    from stackresolve.knowledge import snapshot
    from stackresolve.knowledge.base import KnowledgeBase

    refreshed, warnings = rk.read_cached() if directory is None else ({}, [])
    data_key = _data_key(directory, refreshed)
    kb = snapshot.load(data_key, KnowledgeBase) if use_snapshot else None
    if kb is None:
        kb, install, frameworks = _build(directory, refreshed)
        if use_snapshot:
            snapshot.store(data_key, kb)
            snapshot.store(data_key, install, kind="install")
            if frameworks is not None:
                snapshot.store(data_key, frameworks, kind="frameworks")
        object.__setattr__(kb, "_install", install)
        if frameworks is not None:
            object.__setattr__(kb, "_frameworks", frameworks)
    # The snapshot holds data only: the loaders of the parts read on first use are attached again, with the kinds
    # that are in use (the frameworks' files get the same ones laid over them).
    in_use = {name: raw for name, raw in refreshed.items() if kb.data_kinds.get(name, ("", "", ""))[1] == "refreshed"}
    object.__setattr__(kb, "install_loader", partial(load_install, directory, data_key, use_snapshot))
    object.__setattr__(kb, "frameworks_loader", partial(load_frameworks, directory, data_key, use_snapshot, in_use))
    object.__setattr__(kb, "accelerators_loader", partial(load_accelerators, directory, data_key, use_snapshot))
    warnings += list(kb.refresh_problems)
    if warnings:
        object.__setattr__(kb, "load_warnings", tuple(dict.fromkeys(warnings)))
    return kb


def _build_install(docs: dict[str, dict]):
    # lazy: start-up (only this path needs knowledge.install)
    from stackresolve.knowledge.install import build_install

    return build_install(docs)


def _load_part(kind: str, files: tuple[str, ...], directory: Path | None, data_key: str, use_snapshot: bool,
               expected_type: type, build):
    """A part of the knowledge base loaded on first use: from its own snapshot, else parsed and snapshotted."""
    # lazy: start-up (only this path needs knowledge.snapshot)
    from stackresolve.knowledge import snapshot

    if use_snapshot:
        cached = snapshot.load(data_key, expected_type, kind=kind)
        if cached is not None:
            return cached
    part = build({name: _parse(name, _read_bytes(name, directory)) for name in files})
    if use_snapshot:
        snapshot.store(data_key, part, kind=kind)
    return part


def load_install(directory: Path | None, data_key: str, use_snapshot: bool = True):
    """The install facts of the knowledge base whose data files are `data_key` (see _data_key)."""
    # lazy: start-up (only this path needs knowledge.install)
    from stackresolve.knowledge.install import InstallKnowledge

    return _load_part("install", INSTALL_FILES, directory, data_key, use_snapshot, InstallKnowledge,
                      _build_install)


def load_frameworks(directory: Path | None, data_key: str, use_snapshot: bool = True,
                    refreshed: dict[str, bytes] | None = None):
    """The PyTorch, JAX and Apple facts of the knowledge base whose data files are `data_key` (see _data_key), with
    the refreshed kinds the knowledge base uses laid over them."""
    # lazy: start-up (only this path needs knowledge.frameworks)
    from stackresolve.knowledge.frameworks import FrameworkKnowledge, build_frameworks

    def build(docs):
        if refreshed:
            dates = _shipped_dates({name: _read_bytes(name, directory) for name in FRAMEWORK_FILES}, "")
            _lay_over(docs, refreshed, dates)
        return build_frameworks(docs)

    return _load_part("frameworks", FRAMEWORK_FILES, directory, data_key, use_snapshot, FrameworkKnowledge, build)


def load_accelerators(directory: Path | None, data_key: str, use_snapshot: bool = True):
    """The AMD and Intel GPU facts (amd.toml, intel.toml) of the knowledge base whose data files are `data_key`."""
    # lazy: start-up (only this path needs knowledge.accelerators)
    from stackresolve.knowledge.accelerators import AcceleratorKnowledge, build_accelerators

    return _load_part("accelerators", ACCELERATOR_FILES, directory, data_key, use_snapshot, AcceleratorKnowledge,
                      build_accelerators)


@lru_cache(maxsize=1)
def accelerator_knowledge(use_snapshot: bool = True):
    """The shipped AMD and Intel GPU facts on their own, for explain and for naming detected GPUs (which load no
    other part of the knowledge base): from their own snapshot when one was built from these very files; once per
    process, as error_knowledge (a fleet names every AMD node through it, explain every ROCm match)."""
    # lazy: start-up (only this path needs knowledge.snapshot)
    from stackresolve.knowledge import snapshot

    data_key = snapshot.files_key(str(constraints_dir() / name) for name in ACCELERATOR_FILES)
    return load_accelerators(None, data_key, use_snapshot)


def build_knowledge(docs: dict[str, dict], digest_text: str, install, install_loader, frameworks_loader=None,
                    data_kinds: dict | None = None, refresh_problems: tuple[str, ...] = ()):
    """Validate the parsed documents into a KnowledgeBase."""
    # lazy: start-up (only this path needs knowledge.base, knowledge.install)
    from stackresolve.knowledge.base import KnowledgeBase
    from stackresolve.knowledge.install import cudnn_channel_table

    lines, builds, archs, artifacts = parse_tensorflow(docs["tensorflow.toml"])
    support, minimums = parse_drivers(docs["drivers.toml"])
    toolkits = parse_cuda(docs["cuda.toml"])
    wheels = parse_wheels(docs["tensorflow_wheels.toml"])
    return KnowledgeBase(
        date=str(docs["meta.toml"].get("date", "")),
        wheels_fetched=(data_kinds or {}).get("tensorflow_wheels", (str(docs[WHEELS_FILE].get("generated", "")),))[0],
        wheels_origin=(data_kinds or {}).get("tensorflow_wheels", ("", "shipped"))[1],
        digest=digest_text[:12],
        lines=lines,
        tested_builds=builds,
        source_builds=parse_source_builds(docs["tensorflow.toml"]),
        compiled_archs=archs,
        cudnn_artifacts=artifacts,
        wheels=wheels,
        toolkits=toolkits,
        cudnn=parse_cudnn(docs["cudnn.toml"]),
        gpus=parse_gpus(docs["gpus.toml"]),
        arch_support=support,
        platform_minimums=minimums,
        driver_branches=parse_driver_branches(docs["drivers.toml"]),
        pitfalls=parse_pitfalls(docs["pitfalls.toml"]),
        nvidia_builds=parse_nvidia_builds(docs["nvidia_tensorflow.toml"]),
        nvidia_project=parse_nvidia_project(docs["nvidia_tensorflow.toml"]),
        nvidia_index=next((r.source() for r in records(docs["nvidia_tensorflow.toml"], "index",
                                                        "nvidia_tensorflow.toml")), ""),
        nvidia_index_url=next((r.text("url", pattern=r"^https://[A-Za-z0-9.-]+/?$") for r in records(
            docs["nvidia_tensorflow.toml"], "index", "nvidia_tensorflow.toml")), ""),
        cudnn_tables=cudnn_channel_table(install, [t.version for t in toolkits], wheels),
        install_loader=install_loader,
        frameworks_loader=frameworks_loader,
        data_kinds=data_kinds or {},
        refresh_problems=refresh_problems,
    )


@lru_cache(maxsize=1)
def knowledge():
    """The packaged knowledge base, loaded once per process."""
    return load_knowledge()


ERROR_FILES = ("errors.toml", "error_catalogue.toml", "cuda.toml")


@lru_cache(maxsize=1)
def error_knowledge(use_snapshot: bool = True):
    """constraints/errors.toml (known error messages, library names, version hints, outer programs) and
    error_catalogue.toml (every status of the CUDA libraries), loaded on first use: only `explain` and `doctor` need
    them. From their own snapshot when one was built from these very files (parsing and validating 2,600 lines of
    records and their 300 patterns on every run cost explain more than reading a log), else parsed and snapshotted."""
    # lazy: start-up (only this path needs knowledge.snapshot, knowledge.errors)
    from stackresolve.knowledge import snapshot
    from stackresolve.knowledge.errors import ErrorKnowledge

    data_key = _error_data_key()
    if use_snapshot:
        cached = snapshot.load(data_key, ErrorKnowledge, kind="errors")
        if cached is not None:
            return cached
    knowledge = build_error_knowledge()
    if use_snapshot:
        snapshot.store(data_key, knowledge, kind="errors")
    return knowledge


def _error_data_key() -> str:
    # lazy: start-up (only this path needs knowledge.snapshot)
    from stackresolve.knowledge import snapshot

    return snapshot.files_key(str(constraints_dir() / name) for name in ERROR_FILES)


def build_error_knowledge(directory: Path | None = None):
    """The error knowledge parsed and validated from its TOML files."""
    # lazy: start-up (only this path needs knowledge.errors)
    from stackresolve.knowledge.errors import parse_error_knowledge

    import dataclasses

    doc, _ = read_toml("errors.toml", directory)
    catalogue, _ = read_toml("error_catalogue.toml", directory)
    cuda, _ = read_toml("cuda.toml", directory)
    try:
        drivers = tuple((t["version"], t.get("driver_linux", ""), t.get("driver_windows", ""))
                        for t in cuda.get("toolkit", []))
        return dataclasses.replace(parse_error_knowledge(doc, catalogue), drivers=drivers)
    except (ValueError, KeyError, TypeError) as exc:
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
