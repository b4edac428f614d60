"""The validated knowledge base and the look-ups the resolver and the CLI need."""

from __future__ import annotations

import difflib
import re
from dataclasses import field

from packaging.version import Version

from stackresolve.knowledge.records import (
    ArchSupport,
    CompiledArch,
    CudaToolkit,
    CudnnArtifact,
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
from stackresolve.model.enums import Os
from stackresolve.model.record import record
from stackresolve.model.values import ComputeCapability


_ABSENT = object()
# the refresh kinds (knowledge/refreshed.py KINDS) behind each kind `fetched` is asked about
_REFRESHED_KINDS = {"cuda": ("cuda", "nvidia_cuda"), "cudnn": ("cudnn", "nvidia_cudnn"), "drivers": ("nvidia_drivers",)}


def normalize_gpu_name(name: str) -> str:
    text = re.sub(r"\s+", " ", name.strip().lower())
    return text.removeprefix("nvidia ").strip()


@record(eq=False, repr=False)
class KnowledgeBase:
    date: str
    digest: str
    wheels_fetched: str  # when the package index's wheel lists were read (tensorflow_wheels.toml `generated`)
    wheels_origin: str  # "shipped" with the package, or "refreshed" by `stackresolve refresh`
    lines: tuple[TensorFlowLine, ...]
    tested_builds: tuple[TestedBuild, ...]
    compiled_archs: tuple[CompiledArch, ...]
    wheels: tuple[WheelRelease, ...]
    toolkits: tuple[CudaToolkit, ...]
    cudnn: tuple[CudnnRelease, ...]
    gpus: tuple[Gpu, ...]
    arch_support: tuple[ArchSupport, ...]
    platform_minimums: tuple[PlatformMinimum, ...]
    pitfalls: tuple[Pitfall, ...] = ()
    driver_branches: tuple[DriverBranch, ...] = ()  # NVIDIA's data-center branch lifecycle table
    nvidia_builds: tuple[NvidiaBuild, ...] = ()
    cudnn_artifacts: tuple[CudnnArtifact, ...] = ()
    nvidia_project: NvidiaProject | None = None  # whether NVIDIA still maintains its TF1 builds
    nvidia_index: str = ""  # the source saying how NVIDIA's index is reached (nvidia-pyindex)
    nvidia_index_url: str = ""  # NVIDIA's own package index, as nvidia-pyindex configures it
    source_builds: tuple[SourceBuild, ...] = ()  # the sdists a stock TensorFlow line's install builds
    # Per kind of data (knowledge/refreshed.py KINDS): (fetched date, "shipped" | "refreshed", source).
    data_kinds: dict = field(default_factory=dict, repr=False, compare=False)
    # Refreshed kinds in the user's cache that were left out, and why (one line each; printed as warnings).
    refresh_problems: tuple[str, ...] = field(default=(), repr=False, compare=False)
    # What the install channels carry, computed from the install facts when the knowledge base is built (see
    # knowledge/install.py): the resolver needs these tables, not the install facts themselves.
    cudnn_tables: dict = field(default_factory=dict, repr=False, compare=False)
    # The install facts, loaded on first use by `install` (a callable, so the snapshot does not hold them).
    install_loader: object = field(default=None, repr=False, compare=False, metadata={"snapshot": False})
    _install: object = field(default=None, init=False, repr=False, compare=False, metadata={"snapshot": False})
    # PyTorch, JAX and Apple facts (knowledge/frameworks.py), loaded on first use by `frameworks`.
    frameworks_loader: object = field(default=None, repr=False, compare=False, metadata={"snapshot": False})
    _frameworks: object = field(default=None, init=False, repr=False, compare=False, metadata={"snapshot": False})
    # AMD and Intel GPU facts (knowledge/accelerators.py), loaded on first use by `accelerators`.
    accelerators_loader: object = field(default=None, repr=False, compare=False, metadata={"snapshot": False})
    _accelerators: object = field(default=None, init=False, repr=False, compare=False, metadata={"snapshot": False})
    # What went wrong with the user's cached data while loading (a broken refreshed wheel list that was left out):
    # one line each, for the command line to print as warnings.
    load_warnings: tuple[str, ...] = field(default=(), repr=False, compare=False, metadata={"snapshot": False})
    _gpu_index: dict = field(default_factory=dict, init=False, repr=False, compare=False)
    _arch_by_line: dict = field(default_factory=dict, init=False, repr=False, compare=False)
    _wheels_by_package: dict = field(default_factory=dict, init=False, repr=False, compare=False)
    _wheels_by_line: dict = field(default_factory=dict, init=False, repr=False, compare=False)
    _memo: dict = field(default_factory=dict, init=False, repr=False, compare=False, metadata={"snapshot": False})

    def __post_init__(self) -> None:
        # Look-up tables built once: the resolver asks these questions thousands of times in a matrix.
        gpu_index: dict[str, Gpu] = {}
        for gpu in self.gpus:
            for spelling in (gpu.name, *gpu.aliases):
                gpu_index.setdefault(normalize_gpu_name(spelling), gpu)
        wheels: dict[str, list[WheelRelease]] = {}
        by_line: dict[str, list[WheelRelease]] = {}
        for release in self.wheels:
            wheels.setdefault(release.package, []).append(release)
            by_line.setdefault(release.line, []).append(release)
        for releases in wheels.values():
            releases.sort(key=lambda w: w.key, reverse=True)
        object.__setattr__(self, "_gpu_index", gpu_index)
        object.__setattr__(self, "_arch_by_line", {a.line: a for a in self.compiled_archs if not a.os})
        object.__setattr__(self, "_wheels_by_package", wheels)
        object.__setattr__(self, "_wheels_by_line", by_line)

    def kinds_used_by(self, framework: str, macos: bool = False) -> list[tuple[str, str, str, str]]:
        """(kind, label, fetched date, origin) of each machine-read kind of data a plan for `framework`
        ("tensorflow", "pytorch", "jax"; `macos`: on a Mac) rests on, in KINDS order; a kind read from two sources (the index and
        NVIDIA's manifests) is listed once per source."""
        # lazy: start-up (only this path needs knowledge.refreshed)
        from stackresolve.knowledge.refreshed import KINDS

        out = []
        for kind in KINDS:
            if kind.macos and not macos:
                continue
            if "" not in kind.frameworks and framework not in kind.frameworks and not (macos and "macos" in kind.frameworks):
                continue
            fetched, origin, _ = self.data_kinds.get(kind.name, ("", "shipped", ""))
            if kind.index or origin == "refreshed":  # NVIDIA's and PyTorch's documents count once refreshed
                out.append((kind.name, kind.label, fetched, origin))
        return out

    def nvidia_index_source(self) -> str:
        return self.nvidia_index

    def memo(self, key, compute):
        """Cache a derived value for the life of this (immutable) knowledge base."""
        found = self._memo.get(key, _ABSENT)  # one look-up: a matrix hashes its long keys tens of thousands of times
        if found is _ABSENT:
            found = self._memo[key] = compute()
        return found

    @property
    def version(self) -> str:
        """Identifies this knowledge base in plans and lock files: review date + content digest."""
        return f"{self.date}+{self.digest}"

    # -- TensorFlow ---------------------------------------------------------------------------------
    def source_builds_for(self, line: str, python: str) -> tuple[SourceBuild, ...]:
        """The packages the stock build of TensorFlow `line` builds from source on CPython `python` (X.Y), each
        pinned: every other package is installed from a wheel."""
        return tuple(b for b in self.source_builds if line in b.lines and (not b.pythons or python in b.pythons))

    def line(self, version: str) -> TensorFlowLine | None:
        return next((l for l in self.lines if l.version == version), None)

    def tested_build(self, line: str, os: str, gpu: bool) -> TestedBuild | None:
        """The table row for a release line (x.y.0 row, else the first row of the line) on an OS."""
        def first() -> TestedBuild | None:
            rows = [b for b in self.tested_builds if b.line == line and b.os == os and b.gpu == gpu]
            rows.sort(key=lambda b: Version(b.version))
            return rows[0] if rows else None

        return self.memo(("tested_build", line, os, gpu), first)

    def compiled_arch(self, line: str, os: str | None = None, version: str | None = None) -> CompiledArch | None:
        """The CUDA code in a line's official wheels; for an OS ("windows", "linux"; WSL2 is linux) and a
        release, the measured exception where that release's wheels differ from the line's record."""
        if os is not None:
            table_os = Os(os).table_os
            for arch in self.compiled_archs:
                if arch.os == table_os and arch.line == line and (not arch.versions or version in arch.versions):
                    return arch
        return self._arch_by_line.get(line)

    def lines_with_native_code(self, cc: str, os: str | None) -> list[str]:
        """The TensorFlow lines whose official wheels carry machine code for compute capability `cc` on an OS,
        oldest first (rules.classify_support over the compiled architectures)."""
        # lazy: start-up (only this path needs knowledge.rules)
        from stackresolve.knowledge.rules import classify_support
        from stackresolve.model.enums import GpuSupport

        lines = sorted({a.line for a in self.compiled_archs}, key=lambda l: Version(l))
        gpu = ComputeCapability.parse(cc)
        return [l for l in lines if classify_support(self.compiled_arch(l, os), gpu) is GpuSupport.NATIVE]

    def cudnn_artifact(self, line: str, os: str) -> CudnnArtifact | None:
        """The cuDNN TensorFlow's own artifacts used for a line on an OS ("wsl2" is linux)."""
        def find() -> CudnnArtifact | None:
            table_os = Os(os).table_os
            return next((a for a in self.cudnn_artifacts if a.line == line and a.os == table_os), None)

        return self.memo(("cudnn_artifact", line, os), find)

    def cudnn_channels(self, cuda: str, os: str) -> dict[str, frozenset[str]]:
        """Per install channel whose packages a plan for this OS pins, the cuDNN versions it carries for CUDA line
        `cuda` (channels with none for that line are left out): NVIDIA's apt repositories on Linux/WSL2, and conda
        (its channels' cudnn packages, and the nvidia-cudnn wheels known on the package index). On Windows the
        cuDNN comes from NVIDIA's archive, which has every release, so it restricts nothing."""
        return self.cudnn_tables.get("channels", {}).get((cuda, os), {})

    def cudnn_wheels(self, cuda: str) -> dict[str, str]:
        """{cuDNN version: pip requirement} of the nvidia-cudnn-cuXX wheels known to be on the package index for a
        CUDA line's major (pinned by TensorFlow's and-cuda extras or its conda instructions), CUDA >= 11 only."""
        return self.cudnn_tables.get("wheels", {}).get(cuda.split(".")[0], {})

    # -- install facts (loaded on first use) ----------------------------------------------------------
    @property
    def install(self):
        if self._install is None:
            object.__setattr__(self, "_install", self.install_loader())
        return self._install

    @property
    def frameworks(self):
        """The PyTorch, JAX and Apple knowledge (FrameworkKnowledge), loaded on first use."""
        if self._frameworks is None:
            object.__setattr__(self, "_frameworks", self.frameworks_loader())
        return self._frameworks

    @property
    def accelerators(self):
        """The AMD and Intel GPU knowledge (AcceleratorKnowledge), loaded on first use."""
        if self._accelerators is None:
            object.__setattr__(self, "_accelerators", self.accelerators_loader())
        return self._accelerators

    @property
    def apt(self):
        return self.install.apt

    @property
    def conda(self):
        return self.install.conda

    @property
    def tf_images(self):
        return self.install.tf_images

    @property
    def cuda_images(self):
        return self.install.cuda_images

    @property
    def key_rotation(self):
        return self.install.key_rotation

    def ubuntu_pythons(self, release: str) -> tuple[str, ...]:
        """The CPython minors Ubuntu `release`'s own archive carries (empty when not recorded)."""
        return next((u.pythons for u in self.install.ubuntu_pythons if u.ubuntu == release), ())

    @property
    def cuda_installers(self):
        return self.install.cuda_installers

    @property
    def cudnn_zips(self):
        return self.install.cudnn_zips

    @property
    def msvc_runtimes(self):
        return self.install.msvc_runtimes

    def wheel_releases(self, package: str) -> list[WheelRelease]:
        """Every release of a package on the index, newest first."""
        return self._wheels_by_package.get(package, [])

    def wheels_of_line(self, line: str) -> list[WheelRelease]:
        """Every release of every TensorFlow package in a release line ("1.15")."""
        return self._wheels_by_line.get(line, [])

    def wheel_release(self, package: str, version: str) -> WheelRelease | None:
        def index() -> dict:
            table: dict = {}
            for w in self.wheels:
                table.setdefault((w.package, w.key), w)  # the first in file order, as a scan would find it
            return table

        return self.memo("wheel_release", index).get((package, Version(version)))

    # -- CUDA, cuDNN, drivers -----------------------------------------------------------------------
    def toolkit(self, version: str) -> CudaToolkit | None:
        table = self.memo("toolkit", lambda: {t.version: t for t in reversed(self.toolkits)})  # the first wins
        return table.get(version)

    def first_toolkit_for(self, gpu: ComputeCapability) -> CudaToolkit | None:
        """The first CUDA toolkit whose architectures reach compute capability `gpu` (it targets it or a newer
        one): what a GPU's driver floor and `show gpu` name."""
        return min((t for t in self.toolkits if t.max_cc >= gpu), key=lambda t: Version(t.version), default=None)

    def arch_support_for(self, cc: ComputeCapability | str) -> ArchSupport | None:
        text = str(cc)  # the tables spell compute capabilities as NVIDIA prints them
        return self.memo(("arch_support_for", text),
                         lambda: next((a for a in self.arch_support if text in a.cc), None))

    def platform_minimum(self, platform: str) -> PlatformMinimum | None:
        return next((p for p in self.platform_minimums if p.platform == platform), None)

    def pitfalls_for(self, tf_version: str, os: str, python: str) -> list[Pitfall]:
        """The pip constraints a TensorFlow release needs on an OS and Python, in file order."""
        tf, py = Version(tf_version), Version(python)
        return [p for p in self.pitfalls
                if p.tf_specifier.contains(tf, prereleases=True)
                and (not p.os or os in p.os)
                and p.python_specifier.contains(py, prereleases=True)]

    # -- GPUs ---------------------------------------------------------------------------------------
    def find_gpu(self, name: str) -> Gpu | None:
        return self._gpu_index.get(normalize_gpu_name(name))

    def similar_gpu_names(self, name: str, n: int = 3) -> list[str]:
        matches = difflib.get_close_matches(normalize_gpu_name(name), list(self._gpu_index), n=n * 3, cutoff=0.5)
        names: list[str] = []
        for match in matches:
            gpu_name = self._gpu_index[match].name
            if gpu_name not in names:
                names.append(gpu_name)
        return names[:n]

    def driver_branch(self, branch: int) -> DriverBranch | None:
        """The lifecycle record of a driver branch (580), None where NVIDIA's table does not list it."""
        return next((b for b in self.driver_branches if b.number == branch), None)

    def fetched(self, kind: str) -> str:
        """The date the data of one kind ("cuda", "cudnn", "drivers", "gpus", "wheels", ...) was read from its
        sources. The shipped data has one review date for every kind but the package index's wheel lists; a
        kind `refresh` read (from the index or NVIDIA's documents) carries its own, the newer of its sources."""
        if kind == "wheels":
            return self.wheels_fetched or self.date
        refreshed = [fetched for name in _REFRESHED_KINDS.get(kind, ())
                     for fetched, origin, _ in (self.data_kinds.get(name, ("", "shipped", "")),)
                     if origin == "refreshed" and fetched]
        return max([self.date, *refreshed])

    def is_listed_cc(self, cc: ComputeCapability | str) -> bool:
        """Whether a GPU table (gpus.toml, drivers.toml's architectures) lists this compute capability."""
        return str(cc) in self.memo("known_cc_set", lambda: frozenset(self.known_ccs()))

    def known_ccs(self) -> list[str]:
        ccs = {g.cc for g in self.gpus} | {c for a in self.arch_support for c in a.cc}
        return sorted(ccs, key=ComputeCapability.parse)

    def representative_gpu(self, cc: ComputeCapability | str) -> Gpu | None:
        text = str(cc)
        return next((g for g in self.gpus if g.cc == text), None)
