"""The resolver's candidates, one kind per component: FrameworkCandidate (every build of every framework: the
family modules build them, resolve/tensorflow.py, nvidia.py, apple.py, pytorch.py, jax.py, and resolve/pool.py
gathers them for a request), PythonCandidate, CudaCandidate, CudnnCandidate and DriverCandidate, with the pools of
the last ones. Nothing here imports a family module.

Candidates are built once per knowledge base and request kind (memoized), so identity is their equality: hashing
the nested frozen records on every resolver step was most of the resolver's time."""

from __future__ import annotations

from dataclasses import field
from functools import cached_property, lru_cache
from typing import Iterable

from packaging.version import Version

from stackresolve.knowledge.base import KnowledgeBase
from stackresolve.knowledge.records import (
    CompiledArch,
    CudaToolkit,
    CudnnBuild,
    CudnnRelease,
    NvidiaBuild,
    TensorFlowLine,
    TestedBuild,
    WheelRelease,
)
from stackresolve.knowledge.rules import classify_support, cuda_line_fits
from stackresolve.model.enums import Delivery, Framework, GpuSupport, Vendor
from stackresolve.model.finding import Finding
from stackresolve.model.record import record
from stackresolve.model.stack import DriverPin
from stackresolve.model.values import ComputeCapability
from stackresolve.request.build import PYTHON_RELEASES, Request

@lru_cache(maxsize=2048)
def as_version(text: str) -> Version:
    """packaging's Version of a version the knowledge base or the request holds, parsed once per text (a Version
    is immutable): the resolver compares the same drivers and releases in every cell of a matrix."""
    return Version(text)


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
    """The driver's one candidate (resolve/driver.decide_driver): the versions the requirements judge, and, once
    the build is chosen, the plan's driver decided with them (build_stack reads `pin` and `findings`)."""

    detected: Version | None  # the installed driver, when known (a branch: the release inside it needed)
    minimum: Version | None  # otherwise: the lowest driver every requirement accepts
    name: str = "driver"
    pin: DriverPin | None = field(default=None, compare=False)  # None until a build's driver requirement is met
    findings: tuple[Finding, ...] = field(default=(), compare=False)


@lru_cache(maxsize=1024)
def driver_candidate(detected: Version | None, minimum: Version | None) -> DriverCandidate:
    """The driver candidate of these versions, made once: the driver's pool is made anew each time a driver
    requirement is added, several times in every resolution."""
    return DriverCandidate(detected, minimum)


Candidate = FrameworkCandidate | PythonCandidate | CudaCandidate | CudnnCandidate | DriverCandidate

def plannable(pythons) -> tuple[str, ...]:
    return tuple(p for p in pythons if p in PLANNABLE_PYTHONS)


def newest_lines_first(lines: Iterable[tuple[str, str]]) -> list[ReleaseLine]:
    """ReleaseLines from (line, source) pairs, the first source of each line, newest line first."""
    sources: dict[str, str] = {}
    for line, source in lines:
        sources.setdefault(line, source)
    return sorted((ReleaseLine(v, s) for v, s in sources.items()), key=lambda l: l.key, reverse=True)


@lru_cache(maxsize=8192)
def support_on(candidate: FrameworkCandidate, gpu: ComputeCapability) -> GpuSupport:
    """How a build runs on a GPU of compute capability `cc`: from the architectures compiled into it, and below
    the lowest compute capability its framework's docs support, not at all. Remembered per build (candidates are
    immutable and equal only to themselves): the resolver asks it of every build in every cell of a matrix."""
    if candidate.cc_min and gpu < ComputeCapability.parse(candidate.cc_min):
        return GpuSupport.UNSUPPORTED
    return classify_support(candidate.arch, gpu)


def all_native(request: Request, fw: FrameworkCandidate) -> bool:
    """Every requested GPU runs the build's machine code (none needs PTX JIT): what minor-version compatibility
    asks."""
    return bool(request.gpus) and all(support_on(fw, g.capability) is GpuSupport.NATIVE for g in request.gpus)


def cudnn_pool(kb: KnowledgeBase, cuda: str | None) -> list[CudnnCandidate]:
    every = kb.memo("cudnn_candidates", lambda: [
        CudnnCandidate(release, build)
        for release in sorted(kb.cudnn, key=lambda r: r.key, reverse=True)
        for build in release.builds])
    if cuda is None:
        return every
    return kb.memo(("cudnn_candidates", cuda), lambda: [c for c in every if cuda_line_fits(c.build.cuda, cuda)])


def cuda_pool(kb: KnowledgeBase, cuda: str | None) -> list[CudaCandidate]:
    every = kb.memo("cuda_candidates", lambda: [
        CudaCandidate(t) for t in sorted(kb.toolkits, key=lambda t: Version(t.version), reverse=True)])
    if cuda is None:
        return every
    return kb.memo(("cuda_candidates", cuda), lambda: [c for c in every if c.toolkit.version == cuda])
