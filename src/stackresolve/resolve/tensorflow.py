"""TensorFlow's own builds as resolver candidates: the stock wheels per release and package (tensorflow,
tensorflow-gpu, tensorflow-cpu, tensorflow-intel), with the stack the tested-build tables or the and-cuda extra
name; on macOS arm64 Apple's builds (resolve/apple.py), and for 1.15 NVIDIA's (resolve/nvidia.py)."""

from __future__ import annotations

import re

from packaging.version import Version

from stackresolve.knowledge.base import KnowledgeBase
from stackresolve.knowledge.records import TensorFlowLine, TestedBuild, WheelRelease
from stackresolve.model.enums import Delivery, Os, Vendor
from stackresolve.request.build import Request
from stackresolve.resolve.candidates import FrameworkCandidate


# -- lines ----------------------------------------------------------------------------------------------------
def lines(kb: KnowledgeBase) -> list[TensorFlowLine]:
    """TensorFlow's release lines, newest first."""
    return sorted(kb.lines, key=lambda l: l.key, reverse=True)


def line_releases(kb: KnowledgeBase, line: str) -> list[Version]:
    return kb.memo(("line_releases", line), lambda: [w.key for w in kb.wheels_of_line(line)])


def line_candidates(kb: KnowledgeBase, request: Request, line: TensorFlowLine) -> list[FrameworkCandidate]:
    """The stock builds of a line; on macOS arm64 with Apple's, for 1.15 followed by NVIDIA's."""
    stock = stock_candidates(kb, request, line)
    if request.wheel_platform == "macos_arm64":
        # lazy: start-up (only this path needs resolve.apple)
        from stackresolve.resolve.apple import apple_tensorflow

        return apple_tensorflow(kb, request, line, stock)
    if line.version != "1.15":
        return stock
    # lazy: no start-up gain (already loaded by then); kept beside its use
    from stackresolve.resolve.nvidia import nvidia_candidates

    return stock + nvidia_candidates(kb, request)


# -- and-cuda pins ------------------------------------------------------------------------------------------
_CUDA_RUNTIME = re.compile(r"^nvidia-cuda-runtime-cu\d+$")
_CUDNN = re.compile(r"^nvidia-cudnn-cu\d+$")


def pinned_version(requirements: tuple[str, ...], pattern: re.Pattern) -> Version | None:
    """The exact version a Requires-Dist list pins for the first project matching `pattern`."""
    for text in requirements:
        # lazy: start-up (packaging.requirements ~8 ms)
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


# -- stock builds -------------------------------------------------------------------------------------------
def stock_candidates(kb: KnowledgeBase, request: Request, line: TensorFlowLine) -> list[FrameworkCandidate]:
    gpu = not request.cpu_only
    table_os = request.os.wheel_os
    if gpu:
        package = line.gpu_package_windows if request.os is Os.WINDOWS else (
            "" if request.os is Os.MACOS else line.gpu_package_linux)
        packages = [package] if package else []
    elif cpu_package_first(request, line):
        packages = ["tensorflow-cpu", "tensorflow"]
    else:
        packages = ["tensorflow", "tensorflow-cpu", "tensorflow-intel"]
    build = kb.tested_build(line.version, table_os, gpu)
    by_release: dict[str, list[FrameworkCandidate]] = {}
    for package in packages:
        for release in (w for w in kb.wheel_releases(package) if w.line == line.version):
            pythons = installable_pythons(kb, release, request.wheel_platform)
            if release.stub or not pythons:
                continue
            candidate = _stock_candidate(kb, request, line, build, release, pythons, gpu)
            if candidate is not None:
                by_release.setdefault(release.version, []).append(candidate)
        if not gpu and by_release and not cpu_package_first(request, line):
            break  # CPU stacks: the first package with wheels for this line serves
    # Per release, in the packages' order: the resolver tries the CPU package first and falls back to the other
    # where the CPU package has no wheel for the Python (the pool's sort by release is stable).
    return [c for candidates in by_release.values() for c in candidates]


def cpu_package_first(request: Request, line: TensorFlowLine) -> bool:
    """Whether a CPU stack should install tensorflow-cpu: where the line's GPU package for this OS is `tensorflow`
    itself (Linux from 2.1, Windows 2.1-2.10), that wheel carries the CUDA kernels (TensorFlow 2.15.1, cp311
    manylinux x86_64: 475 MB against tensorflow-cpu's 207 MB on the package index, 1.4 GB against 0.9 GB
    unpacked); tensorflow-cpu is the same TensorFlow without them. Where its wheels miss a platform or Python,
    tensorflow still serves."""
    if request.os is Os.MACOS:
        return False
    package = line.gpu_package_windows if request.os is Os.WINDOWS else line.gpu_package_linux
    return package == "tensorflow"


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
    # lazy: start-up (packaging.requirements ~8 ms)
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
