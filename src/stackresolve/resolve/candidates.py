"""Every build the resolver can choose, as candidates: the stock TensorFlow wheels per release and package,
NVIDIA's maintained TensorFlow 1.15 builds (the nvidia-tensorflow pip releases and the NGC TF1 containers), and the
PyTorch and JAX builds (resolve/frameworks.py) - one kind of candidate for all three frameworks.

Candidates are built once per knowledge base and request kind (memoized), so identity is their equality: hashing
the nested frozen records on every resolver step was most of the resolver's time."""

from __future__ import annotations

import re
from functools import cached_property

from packaging.version import Version

from stackresolve.knowledge.base import KnowledgeBase
from stackresolve.knowledge.model import (
    CompiledArch,
    CudaToolkit,
    CudnnBuild,
    CudnnRelease,
    NvidiaBuild,
    TensorFlowLine,
    TestedBuild,
    WheelRelease,
)
from stackresolve.knowledge.rules import classify_support, toolkit_predates, version_wanted_fits
from stackresolve.model.enums import Delivery, Framework, GpuSupport, Os, Vendor
from stackresolve.model.record import record
from stackresolve.model.values import ComputeCapability
from stackresolve.request import PYTHON_RELEASES, Request

# NVIDIA's TF1 release notes ("GPU Requirements") say "CUDA compute capability 6.0 and later" for every release
# read (constraints/nvidia_tensorflow.toml header); the upper end is what the build's CUDA toolkit targets.
NVIDIA_GPU_FLOOR = ComputeCapability(6, 0)
NVIDIA_INDEX = "nvidia"
NVIDIA_INDEX_NOTE = ("nvidia-tensorflow is not on the default package index (only placeholder 0.0.1.dev releases "
                     "are): NVIDIA hosts it on its own index, {url}, the one nvidia-pyindex adds to pip's "
                     "configuration. The plans name that index with --extra-index-url (nvidia-pyindex itself no "
                     "longer builds on current pip: NVIDIA/tensorflow#74); the exact pin keeps the placeholders out, "
                     "and uv needs --index-strategy unsafe-best-match to look past the first index that has a name")
# Pythons a plan may recommend, oldest first (older ones have no wheels of anything we plan).
PLANNABLE_PYTHONS = PYTHON_RELEASES[PYTHON_RELEASES.index("2.7"):]


@record
class ReleaseLine:
    """A PyTorch or JAX release line ("2.5", "0.4"): what a TensorFlowLine is for TensorFlow."""

    version: str
    source: str

    @cached_property
    def key(self) -> Version:
        return Version(self.version)


@record(eq=False)
class FrameworkCandidate:
    vendor: Vendor
    distribution: str | None  # pip project; None for a container
    version: str  # as installed ("1.15.5", "1.15.5+nv22.12"; a container: its TensorFlow)
    line: TensorFlowLine | ReleaseLine
    pythons: tuple[str, ...]
    gpu: bool
    source: str
    cuda: str | None = None  # the CUDA line the build loads
    cuda_release: str | None = None  # exact release where the build fixes it (wheel pin, container)
    cudnn_compiled: str | None = None  # the cuDNN the build was compiled with ("7.4")
    cudnn_fixed: str | None = None  # the exact cuDNN the build brings (and-cuda pin, NVIDIA's build)
    delivery: Delivery | None = None
    extras: tuple[str, ...] = ()
    arch: CompiledArch | None = None  # the CUDA code in this build for the request's OS
    build: TestedBuild | None = None  # the tested-build table row (stock builds)
    release: WheelRelease | None = None  # stock builds: the index's file list
    nvidia: NvidiaBuild | None = None  # NVIDIA's builds
    framework: Framework = Framework.TENSORFLOW
    variant: str | None = None  # PyTorch: "cu124", "cpu"
    index_url: str | None = None  # the index the build installs from (None: the default package index)
    index_option: str | None = None  # how pip reaches it: --index-url | --extra-index-url | --find-links
    local_version: str = ""  # "+cu111": the local version label a pin needs on a find-links page or extra index
    companions: tuple[str, ...] = ()  # pip requirements installed with it (torchvision, jaxlib, tensorflow-metal)
    cc_min: str = ""  # the lowest compute capability the framework's docs support (JAX), "" when none is stated
    cudnn_full: str = ""  # PyTorch: the full cuDNN release its variant brings ("9.1.0.70")
    cudnn_range: str = ""  # JAX: the cuDNN range its plugin's wheels accept (">=9.8,<10.0")
    preference: tuple = ()  # within a release: which build to try first (smaller first)
    metal: bool = False  # runs on an Apple GPU through Metal (tensorflow-metal, MPS)
    macos_min: str = ""  # the macOS the Metal build needs ("14.0"): a macOS lock resolves for it
    arch_unverified: bool = False  # its GPU architecture list is carried over, read neither at the release nor in it
    notes: tuple[str, ...] = ()  # facts about the build a plan must say (a finding each)
    wheel_floors: tuple[str, ...] = ()  # "nvidia-cudnn-cu12==9.3.0.75": an extra's ranges pinned at their floors
    name: str = "framework"

    @cached_property
    def key(self) -> Version:
        return Version(self.nvidia.tf_base) if self.nvidia else Version(self.version)

    @property
    def display(self) -> str:
        """"TensorFlow 2.15", "PyTorch 2.5": the framework and its line."""
        return f"{self.framework.display} {self.line.version}"

    @property
    def container(self) -> str | None:
        return self.nvidia.tag if self.nvidia and self.nvidia.kind == "container" else None

    @property
    def label(self) -> str:
        if self.container:
            return f"NVIDIA's container {self.container}"
        variant = f" ({self.variant})" if self.variant else ""
        return f"{self.distribution} {self.version}{variant}"


@record(eq=False)
class PythonCandidate:
    version: str
    name: str = "python"


PYTHON_CANDIDATES = [PythonCandidate(p) for p in reversed(PLANNABLE_PYTHONS)]


@record(eq=False)
class CudaCandidate:
    toolkit: CudaToolkit
    name: str = "cuda"


@record(eq=False)
class CudnnCandidate:
    release: CudnnRelease
    build: CudnnBuild
    name: str = "cudnn"

    # Requirements test these thousands of times per matrix: computed once.
    @cached_property
    def key(self) -> Version:
        return self.release.key

    @cached_property
    def arch_min(self) -> ComputeCapability:
        return self.release.min_cc


@record
class DriverCandidate:
    detected: Version | None  # the installed driver, when known
    minimum: Version | None  # otherwise: the lowest driver every requirement accepts
    name: str = "driver"


Candidate = FrameworkCandidate | PythonCandidate | CudaCandidate | CudnnCandidate | DriverCandidate


# -- and-cuda pins ------------------------------------------------------------------------------------------
_CUDA_RUNTIME = re.compile(r"^nvidia-cuda-runtime-cu\d+$")
_CUDNN = re.compile(r"^nvidia-cudnn-cu\d+$")


def pinned_version(requirements: tuple[str, ...], pattern: re.Pattern) -> Version | None:
    """The exact version a Requires-Dist list pins for the first project matching `pattern`."""
    for text in requirements:
        from packaging.requirements import InvalidRequirement, Requirement as PipRequirement

        try:
            req = PipRequirement(text)
        except InvalidRequirement:
            continue
        if pattern.match(req.name.lower()):
            pins = [s.version for s in req.specifier if s.operator in ("==", "===")]
            if pins:
                return Version(pins[0])
    return None


# -- the pool -----------------------------------------------------------------------------------------------
def support_on(candidate: FrameworkCandidate, gpu: ComputeCapability) -> GpuSupport:
    """How a build runs on a GPU of compute capability `cc`: from the architectures compiled into it, and below
    the lowest compute capability its framework's docs support, not at all."""
    if candidate.cc_min and gpu < ComputeCapability.parse(candidate.cc_min):
        return GpuSupport.UNSUPPORTED
    return classify_support(candidate.arch, gpu)


def fit_rank(kb: KnowledgeBase, candidate: FrameworkCandidate, ccs: tuple[ComputeCapability, ...]) -> int:
    """How well a build runs on the request's GPUs, best 0: machine code for every GPU, then unknown code,
    then PTX only or a CUDA that predates a GPU (its libraries carry no kernels for it), then nothing."""
    if not candidate.gpu or not ccs:
        return 0
    rank = max(support_on(candidate, cc).rank for cc in ccs)
    toolkit = kb.toolkit(candidate.cuda) if candidate.cuda else None
    if toolkit is not None and any(toolkit_predates(toolkit, cc) for cc in ccs):
        rank = max(rank, GpuSupport.PTX_JIT.rank)
    return rank


def requested_framework_candidates(kb: KnowledgeBase, request: Request) -> list[FrameworkCandidate]:
    """The builds that match the request's version, OS and vendor, in the order the resolver should try them:
    newest line first; within a line, builds that run natively on these GPUs first, stock before NVIDIA's, pip
    before a container, newest release first."""
    ccs = tuple(g.capability for g in request.gpus)
    key = ("requested_framework_candidates", request.framework, request.os, request.arch, request.wheel_platform,
           request.cpu_only, request.apple_gpu is not None, str(request.spec), request.vendor, request.container,
           request.cuda_line)

    def matching() -> list[FrameworkCandidate]:
        lines = [l for l in release_lines(kb, request.framework) if _line_may_match(kb, request, l)]
        return [c for line in lines for c in line_candidates(kb, request, line)
                if request.spec.contains(c.key, prereleases=True)
                and (request.vendor is None or c.vendor is request.vendor)
                and (request.container is None or (c.container is not None) is request.container)
                and (request.cuda_line is None or bool(c.cuda and version_wanted_fits(c.cuda, request.cuda_line,
                                                                                      "cuda")))]

    pool = kb.memo(key, matching)

    def ordered() -> list[FrameworkCandidate]:
        out = sorted(pool, key=lambda c: c.key, reverse=True)
        # An Apple GPU: builds that use it (through Metal) before newer ones that would run on the CPU.
        out.sort(key=lambda c: (request.apple_gpu is not None and not c.metal,
                                -c.line.key.major, -c.line.key.minor, fit_rank(kb, c, ccs),
                                c.vendor is not Vendor.STOCK, c.container is not None, c.preference))
        return out

    return kb.memo(key + ("ordered",) + ccs, ordered)  # "ordered": without GPUs the key would be the pool's


def release_lines(kb: KnowledgeBase, framework: Framework) -> list:
    """The release lines of a framework, newest first."""
    if framework is Framework.TENSORFLOW:
        return sorted(kb.lines, key=lambda l: l.key, reverse=True)
    from stackresolve.resolve.frameworks import framework_lines

    return framework_lines(kb, framework)


def _line_may_match(kb: KnowledgeBase, request: Request, line) -> bool:
    """Whether any release of a line falls in the request's version range (so its candidates are worth
    building)."""
    if request.framework is Framework.TENSORFLOW:
        versions = [w.key for w in kb.wheels_of_line(line.version)]
    else:
        from stackresolve.resolve.frameworks import line_releases

        versions = line_releases(kb, request.framework, line.version)
    return any(request.spec.contains(v, prereleases=True) for v in versions)


def line_candidates(kb: KnowledgeBase, request: Request, line) -> list[FrameworkCandidate]:
    """Every build of one release line that could serve this request's OS and stack kind, newest first; built on
    first use (a plan for one line builds that line's candidates only)."""
    key = ("line_candidates", request.framework, line.version, request.os, request.arch, request.wheel_platform,
           request.cpu_only, request.apple_gpu is not None)
    if request.framework is not Framework.TENSORFLOW:
        from stackresolve.resolve.frameworks import framework_line_candidates

        return kb.memo(key, lambda: framework_line_candidates(kb, request, line))
    if request.wheel_platform == "macos_arm64":
        from stackresolve.resolve.frameworks import apple_tensorflow

        return kb.memo(key, lambda: apple_tensorflow(kb, request, line, _stock_candidates(kb, request, line)))
    return kb.memo(key, lambda: _stock_candidates(kb, request, line) + (
        _nvidia_candidates(kb, request) if line.version == "1.15" else []))


def framework_candidates(kb: KnowledgeBase, request: Request) -> list[FrameworkCandidate]:
    """Every build that could serve this request's OS and stack kind, newest line first."""
    return [c for line in release_lines(kb, request.framework) for c in line_candidates(kb, request, line)]


def _stock_candidates(kb: KnowledgeBase, request: Request, line: TensorFlowLine) -> list[FrameworkCandidate]:
    gpu = not request.cpu_only
    table_os = request.os.wheel_os
    out: list[FrameworkCandidate] = []
    if gpu:
        package = line.gpu_package_windows if request.os is Os.WINDOWS else (
            "" if request.os is Os.MACOS else line.gpu_package_linux)
        packages = [package] if package else []
    else:
        packages = ["tensorflow", "tensorflow-cpu", "tensorflow-intel"]
    build = kb.tested_build(line.version, table_os, gpu)
    for package in packages:
        for release in (w for w in kb.wheel_releases(package) if w.line == line.version):
            pythons = installable_pythons(kb, release, request.wheel_platform)
            if release.stub or not pythons:
                continue
            candidate = _stock_candidate(kb, request, line, build, release, pythons, gpu)
            if candidate is not None:
                out.append(candidate)
        if not gpu and any(c.line is line for c in out):
            break  # CPU stacks: the first package with wheels for this line serves
    return out


def _stock_candidate(kb: KnowledgeBase, request: Request, line: TensorFlowLine, build: TestedBuild | None,
                     release: WheelRelease, pythons: tuple[str, ...], gpu: bool) -> FrameworkCandidate | None:
    common = dict(vendor=Vendor.STOCK, distribution=release.package, version=release.version, line=line,
                  pythons=pythons, gpu=gpu, source=release.source, build=build, release=release)
    if not gpu:
        return FrameworkCandidate(**common)
    arch = kb.compiled_arch(line.version, request.os, release.version)
    use_extra = (line.and_cuda_extra and not line.and_cuda_blocker and release.and_cuda
                 and request.os in (Os.LINUX, Os.WSL2))
    runtime = pinned_version(release.and_cuda, _CUDA_RUNTIME) if use_extra else None
    cudnn = pinned_version(release.and_cuda, _CUDNN) if use_extra else None
    if runtime is not None and cudnn is not None:
        # The extra pins exact wheels (2.14-2.19): those versions are the stack.
        pin = ".".join(str(p) for p in cudnn.release[:3])
        return FrameworkCandidate(**common, cuda=f"{runtime.major}.{runtime.minor}", cuda_release=str(runtime),
                                  cudnn_compiled=build.cudnn if build else pin, cudnn_fixed=pin,
                                  delivery=Delivery.PIP_WHEELS, extras=("and-cuda",), arch=arch)
    if build is None:
        return None  # no tested GPU configuration for this line and OS
    # No extra, or one with version ranges (2.20+): the tested configuration names the stack; the wheel's own
    # "compiled with" cuDNN, where recorded, corrects the table's.
    artifact = kb.cudnn_artifact(line.version, request.os)
    compiled = artifact.compiled if artifact and artifact.compiled and artifact.cuda == build.cuda else build.cudnn
    floors = range_floors(release.and_cuda) if use_extra else ()
    runtime_floor = pinned_version(floors, _CUDA_RUNTIME)
    cudnn_floor = pinned_version(floors, _CUDNN)
    return FrameworkCandidate(**common, cuda=build.cuda, cudnn_compiled=compiled,
                              delivery=Delivery.PIP_WHEELS if use_extra else Delivery.SYSTEM,
                              extras=("and-cuda",) if use_extra else (), arch=arch,
                              cuda_release=str(runtime_floor) if runtime_floor else None,
                              cudnn_fixed=".".join(str(p) for p in cudnn_floor.release[:3]) if cudnn_floor else None,
                              wheel_floors=floors)


def range_floors(requirements: tuple[str, ...]) -> tuple[str, ...]:
    """An extra's version ranges pinned at their lower bounds ("nvidia-cudnn-cu12>=9.3.0.75,<10" ->
    "nvidia-cudnn-cu12==9.3.0.75"): the wheels TensorFlow declared as its minimum, i.e. what it was built and
    tested against. Unpinned, pip takes the newest in each range (CUDA 12.9 wheels for TF 2.20 when measured),
    which is not the stack the plan names."""
    from packaging.requirements import InvalidRequirement, Requirement as PipRequirement

    out = []
    for text in requirements:
        try:
            req = PipRequirement(text)
        except InvalidRequirement:
            continue
        floors = [s.version for s in req.specifier if s.operator == ">="]
        if floors and not any(s.operator in ("==", "===") for s in req.specifier):
            out.append(f"{req.name}=={floors[0]}")
    return tuple(out)


def _nvidia_candidates(kb: KnowledgeBase, request: Request) -> list[FrameworkCandidate]:
    """NVIDIA's TF 1.15 builds: Linux x86_64 (WSL2 included) GPU stacks only."""
    if request.cpu_only or request.os not in (Os.LINUX, Os.WSL2) or request.arch.value != "x86_64":
        return []
    line = kb.line("1.15")
    if line is None:
        return []
    out = []
    for build in sorted(kb.nvidia_builds, key=lambda b: [int(x) for x in b.release.split(".")], reverse=True):
        toolkit = kb.toolkit(build.cuda_line)
        if toolkit is None:
            continue
        pythons = build.pythons if build.kind == "pip" else build.pythons[:1]
        cudnn = ".".join(build.cudnn.split(".")[:3]) if build.cudnn else None
        delivery = (Delivery.CONTAINER if build.kind == "container" else
                    Delivery.PIP_WHEELS if build.cuda_wheels else Delivery.SYSTEM)
        # A container or the CUDA wheels bring exactly NVIDIA's cuDNN; a wheel that takes cuDNN from the system
        # loads any cuDNN TensorFlow's rule accepts (same major, minor not older), so the plan chooses one every
        # install channel carries, as for the stock builds.
        fixed = None if delivery is Delivery.SYSTEM else cudnn
        out.append(FrameworkCandidate(
            vendor=Vendor.NVIDIA,
            distribution="nvidia-tensorflow" if build.kind == "pip" else None,
            version=build.version if build.kind == "pip" else build.tf_base,
            line=line, pythons=tuple(p for p in pythons if p in PLANNABLE_PYTHONS), gpu=True, source=build.source,
            cuda=build.cuda_line, cuda_release=build.cuda, cudnn_compiled=cudnn, cudnn_fixed=fixed,
            delivery=delivery,
            extras=("horovod",) if build.kind == "pip" else (),
            arch=nvidia_arch(kb, build, toolkit), nvidia=build))
    return out


def nvidia_arch(kb: KnowledgeBase, build: NvidiaBuild, toolkit: CudaToolkit) -> CompiledArch:
    """NVIDIA's builds run on compute capability 6.0 up to what their CUDA targets (no PTX beyond it)."""
    ccs = tuple(c for c in kb.known_ccs()
                if NVIDIA_GPU_FLOOR <= ComputeCapability.parse(c) <= toolkit.max_cc)
    return CompiledArch(line="1.15", sass=ccs, ptx=(), source=build.source,
                        note="NVIDIA's release notes: compute capability 6.0 and later, up to the CUDA toolkit's "
                             "newest architecture")


def installable_pythons(kb: KnowledgeBase, release: WheelRelease, platform: str) -> tuple[str, ...]:
    """CPython versions for which `pip install package==version` really installs on a platform.

    On Windows, tensorflow / tensorflow-cpu 2.10-2.18.0 wheels are metapackages that install
    tensorflow-intel of the same version, so only Pythons both have wheels for will install
    (e.g. tensorflow 2.13.1 has a cp38 metapackage but tensorflow-intel 2.13.1 starts at cp39).
    """
    pythons = release.pythons.get(platform, ())
    if platform == "windows" and release.package in ("tensorflow", "tensorflow-cpu"):
        intel = kb.wheel_release("tensorflow-intel", release.version)
        if intel is not None and not intel.stub:
            pythons = tuple(p for p in pythons if p in intel.pythons.get("windows", ()))
    return pythons


def cudnn_pool(kb: KnowledgeBase, cuda: str | None) -> list[CudnnCandidate]:
    every = kb.memo("cudnn_candidates", lambda: [
        CudnnCandidate(release, build)
        for release in sorted(kb.cudnn, key=lambda r: r.key, reverse=True)
        for build in release.builds])
    if cuda is None:
        return every
    return kb.memo(("cudnn_candidates", cuda), lambda: [c for c in every if c.build.fits(cuda)])


def cuda_pool(kb: KnowledgeBase, cuda: str | None) -> list[CudaCandidate]:
    every = kb.memo("cuda_candidates", lambda: [
        CudaCandidate(t) for t in sorted(kb.toolkits, key=lambda t: Version(t.version), reverse=True)])
    if cuda is None:
        return every
    return kb.memo(("cuda_candidates", cuda), lambda: [c for c in every if c.toolkit.version == cuda])
