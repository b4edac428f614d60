"""The resolver: a resolvelib provider over framework, python, cuda, cudnn and driver.

Pure: takes a Request and a KnowledgeBase, returns a Resolution. No I/O, no printing, deterministic.
"""

from __future__ import annotations

import re
from dataclasses import dataclass, field, replace
from functools import cached_property, lru_cache
from typing import Callable, Iterable

from packaging.requirements import InvalidRequirement, Requirement as PipRequirement
from packaging.specifiers import SpecifierSet
from packaging.version import Version
from resolvelib import AbstractProvider, BaseReporter, ResolutionImpossible, Resolver
from resolvelib.resolvers import ResolutionTooDeep

from stackresolve.finding import Finding
from stackresolve.knowledge.base import KnowledgeBase
from stackresolve.knowledge.model import (
    CompiledArch,
    CudaToolkit,
    CudnnBuild,
    CudnnRelease,
    Pitfall,
    TensorFlowLine,
    TestedBuild,
    WheelRelease,
    cc_tuple,
)
from stackresolve.request import Request

# CPython minors a plan may recommend, oldest first.
KNOWN_PYTHONS = ("2.7", "3.3", "3.4", "3.5", "3.6", "3.7", "3.8", "3.9", "3.10", "3.11", "3.12", "3.13", "3.14")
ORDER = ("tensorflow", "python", "cuda", "cudnn", "driver")
SUPPORT_RANK = {"native": 0, "unknown": 1, "ptx-jit": 2, "unsupported": 3}
TF_CUDNN_RULE_SOURCE = (
    "tensorflow/tensorflow:tensorflow/stream_executor/cuda/cuda_dnn.cc (IsSourceCompatibleWithCudnnLibrary: "
    "same major, runtime minor >= compiled minor)"
)


# -- candidates ----
# Candidates are built once per knowledge base and request kind (memoized), so identity is their equality:
# hashing the nested frozen records on every resolver step was most of the resolver's time.--------------------------------------------------------------------------------
@dataclass(frozen=True, eq=False)
class FrameworkCandidate:
    release: WheelRelease
    line: TensorFlowLine
    build: TestedBuild | None  # None for CPU stacks without a table row
    gpu: bool
    pythons: tuple[str, ...]
    cuda: str | None
    cudnn_min: str | None  # the cuDNN the build was compiled with ("7.4")
    cudnn_pin: str | None  # exact cuDNN a pip extra pins (and-cuda), else None
    extra: str  # "and-cuda" or ""
    arch: CompiledArch | None = None  # the CUDA code in this release's wheels for the request's OS
    name: str = "tensorflow"

    @property
    def version(self) -> Version:
        return self.release.key


@dataclass(frozen=True, eq=False)
class PythonCandidate:
    version: str
    name: str = "python"


PYTHON_CANDIDATES = [PythonCandidate(p) for p in reversed(KNOWN_PYTHONS)]


@dataclass(frozen=True, eq=False)
class CudaCandidate:
    toolkit: CudaToolkit
    name: str = "cuda"


@dataclass(frozen=True, eq=False)
class CudnnCandidate:
    release: CudnnRelease
    build: CudnnBuild
    name: str = "cudnn"

    # Requirements test these thousands of times per matrix: computed once.
    @cached_property
    def key(self) -> Version:
        return self.release.key

    @cached_property
    def major(self) -> int:
        return self.release.key.major

    @cached_property
    def arch_min(self) -> tuple[int, int]:
        return cc_tuple(self.release.arch_min)


@dataclass(frozen=True)
class DriverCandidate:
    detected: Version | None  # the installed driver, when known
    minimum: Version | None  # otherwise: the lowest driver every requirement accepts
    name: str = "driver"


Candidate = FrameworkCandidate | PythonCandidate | CudaCandidate | CudnnCandidate | DriverCandidate


@dataclass(frozen=True, eq=False)
class Req:
    """A requirement on one component, with the fact behind it (shown when resolution fails)."""

    name: str
    test: Callable[[Candidate], bool]
    text: str
    source: str
    driver_min: Version | None = None  # driver requirements also carry bounds, to compute a minimum
    driver_max_branch: int | None = None
    cuda: str | None = None  # set when the requirement only admits this CUDA line (cuda) or builds for it (cudnn)


# -- GPU support -----------------------------------------------------------------------------------
@lru_cache(maxsize=4096)
def classify_support(arch: CompiledArch | None, cc: str) -> str:
    """native: SASS for this major at an equal or lower minor; ptx-jit: only PTX at or below cc."""
    if arch is None:
        return "unknown"
    gpu = cc_tuple(cc)
    if any(cc_tuple(s)[0] == gpu[0] and cc_tuple(s) <= gpu for s in arch.sass):
        return "native"
    if any(cc_tuple(p) <= gpu for p in arch.ptx):
        return "ptx-jit"
    return "unsupported"


def worst_support(levels: Iterable[str]) -> str:
    return max(levels, key=SUPPORT_RANK.__getitem__, default="native")


def driver_branch(version: Version) -> int:
    return version.release[0]


# -- and-cuda pins -----------------------------------------------------------------------------------
_CUDA_RUNTIME = re.compile(r"^nvidia-cuda-runtime-cu\d+$")
_CUDNN = re.compile(r"^nvidia-cudnn-cu\d+$")


def _pinned(requirements: tuple[str, ...], pattern: re.Pattern) -> Version | None:
    for text in requirements:
        try:
            req = PipRequirement(text)
        except InvalidRequirement:
            continue
        if pattern.match(req.name.lower()):
            pins = [s.version for s in req.specifier if s.operator in ("==", "===")]
            if pins:
                return Version(pins[0])
    return None


# -- the provider ---------------------------------------------------------------------------------
class StackProvider(AbstractProvider):
    def __init__(self, kb: KnowledgeBase, request: Request):
        self.kb = kb
        self.request = request

    def identify(self, requirement_or_candidate):
        return requirement_or_candidate.name

    def get_preference(self, identifier, resolutions, candidates, information, backtrack_causes):
        return ORDER.index(identifier)

    def is_satisfied_by(self, requirement: Req, candidate) -> bool:
        return requirement.test(candidate)

    def find_matches(self, identifier, requirements, incompatibilities):
        reqs = list(requirements[identifier])
        bad = list(incompatibilities[identifier])
        if identifier == "driver":
            pool = [self._driver_candidate(reqs)]
        else:
            cuda = next((r.cuda for r in reqs if r.cuda), None)
            pool = {
                "tensorflow": self.requested_framework_candidates,
                "python": lambda: PYTHON_CANDIDATES,
                "cuda": lambda: self.cuda_candidates(cuda),
                "cudnn": lambda: self.cudnn_candidates(cuda),
            }[identifier]()
        return [c for c in pool if c not in bad and all(r.test(c) for r in reqs)]

    def get_dependencies(self, candidate):
        if isinstance(candidate, FrameworkCandidate):
            return self._framework_dependencies(candidate)
        return []

    # candidates, newest first
    def requested_framework_candidates(self) -> list[FrameworkCandidate]:
        """The framework pool narrowed to the requested versions once, not on every resolver step."""
        request = self.request
        ccs = tuple(g.cc for g in request.gpus)
        key = ("requested_framework_candidates", request.os, request.wheel_platform, request.cpu_only,
               str(request.tf_spec))
        matching = self.kb.memo(key, lambda: [c for c in framework_candidates(self.kb, request)
                                              if request.tf_spec.contains(c.version, prereleases=True)])

        def narrowed() -> list[FrameworkCandidate]:
            pool = list(matching)
            # Newest line first; within a line, releases with machine code for these GPUs before those that
            # would JIT (tensorflow-gpu 1.12.2/1.12.3 carry only sm_37, 1.12.0 the full set), newest first.
            pool.sort(key=lambda c: c.version, reverse=True)
            pool.sort(key=lambda c: (-c.line.key.major, -c.line.key.minor,  # stable: newest stays first in a tie
                                     SUPPORT_RANK[worst_support(classify_support(c.arch, cc) for cc in ccs)]))
            return pool

        return self.kb.memo(key + ccs, narrowed)

    def cuda_candidates(self, cuda: str | None = None) -> list[CudaCandidate]:
        every = self.kb.memo("cuda_candidates", lambda: [
            CudaCandidate(t) for t in sorted(self.kb.toolkits, key=lambda t: Version(t.version), reverse=True)])
        if cuda is None:
            return every
        return self.kb.memo(("cuda_candidates", cuda), lambda: [c for c in every if c.toolkit.version == cuda])

    def cudnn_candidates(self, cuda: str | None = None) -> list[CudnnCandidate]:
        every = self.kb.memo("cudnn_candidates", lambda: [
            CudnnCandidate(release, build)
            for release in sorted(self.kb.cudnn, key=lambda r: r.key, reverse=True)
            for build in release.builds])
        if cuda is None:
            return every
        return self.kb.memo(("cudnn_candidates", cuda), lambda: [c for c in every if c.build.fits(cuda)])

    def _driver_candidate(self, reqs: list[Req]) -> DriverCandidate:
        if self.request.driver:
            return DriverCandidate(detected=Version(self.request.driver), minimum=None)
        minimums = [r.driver_min for r in reqs if r.driver_min is not None]
        return DriverCandidate(detected=None, minimum=max(minimums) if minimums else None)

    # dependencies
    def _framework_dependencies(self, fw: FrameworkCandidate) -> list[Req]:
        platform = self.request.wheel_platform
        deps = [
            Req("python", lambda c, ok=fw.pythons: c.version in ok,
                f"{fw.release.package} {fw.release.version} has {platform} wheels for Python "
                f"{', '.join(fw.pythons) or 'none'}", fw.release.source),
        ]
        if not fw.gpu:
            return deps
        deps += self._driver_dependencies(fw)
        build_source = fw.build.source if fw.build else fw.release.source
        if fw.cudnn_pin:
            deps.append(Req("cuda", lambda c, v=fw.cuda: c.toolkit.version == v,
                            f"{fw.release.package}[{fw.extra}] {fw.release.version} pins the CUDA {fw.cuda} "
                            f"runtime wheels", fw.release.source, cuda=fw.cuda))
            deps.append(Req("cudnn", lambda c, v=Version(fw.cudnn_pin), cuda=fw.cuda:
                            c.key == v and c.build.fits(cuda),
                            f"{fw.release.package}[{fw.extra}] {fw.release.version} pins cuDNN {fw.cudnn_pin}",
                            fw.release.source, cuda=fw.cuda))
            return deps
        deps.append(Req("cuda", lambda c, v=fw.cuda: c.toolkit.version == v,
                        f"TensorFlow {fw.line.version} GPU builds for {self.request.os} use CUDA {fw.cuda}",
                        build_source, cuda=fw.cuda))
        compiled = Version(fw.cudnn_min)
        deps.append(Req(
            "cudnn",
            lambda c, m=compiled, major=compiled.major, cuda=fw.cuda: (
                c.major == major and c.key >= m and c.build.fits(cuda)),
            f"TensorFlow {fw.line.version} was compiled with cuDNN {fw.cudnn_min}: it loads cuDNN "
            f"{compiled.major}.x >= {fw.cudnn_min} built for CUDA {fw.cuda}",
            f"{build_source}; {TF_CUDNN_RULE_SOURCE}", cuda=fw.cuda))
        return deps

    def _driver_dependencies(self, fw: FrameworkCandidate) -> list[Req]:
        """The driver a framework's CUDA needs. NVIDIA's minor-version compatibility lets CUDA 11+ programs run
        on an older driver of the same major's floor (Table 2), but not PTX JIT: it is accepted for an installed
        driver only when the wheels carry machine code for every GPU."""
        request = self.request
        toolkit = self.kb.toolkit(fw.cuda)
        if toolkit is None or not toolkit.min_driver(request.driver_os):
            return []  # NVIDIA prints no minimum for this OS; build_stack says so
        text = toolkit.min_driver(request.driver_os)
        minimum = Version(text)
        compat_text = minor_compat_minimum(toolkit, request, fw)
        compat = Version(compat_text) if compat_text else None
        return [Req("driver", lambda c, m=minimum, k=compat: driver_at_least(c, m) or (
                        k is not None and c.detected is not None and c.detected >= k),
                    f"CUDA {toolkit.version} needs an NVIDIA driver >= {text} on {request.driver_os}"
                    + (f" (or >= {compat_text} through minor-version compatibility)" if compat_text else ""),
                    toolkit.source, driver_min=minimum)]


def minor_compat_minimum(toolkit: CudaToolkit, request: Request, fw: FrameworkCandidate) -> str:
    """The minor-version-compatibility driver floor when it applies to this request, else ""."""
    compat = toolkit.compat_driver_windows if request.driver_os == "windows" else toolkit.compat_driver_linux
    if not compat or not request.gpus:
        return ""
    native = all(classify_support(fw.arch, g.cc) == "native" for g in request.gpus)
    return compat if native else ""


def driver_at_least(candidate: DriverCandidate, minimum: Version) -> bool:
    if candidate.detected is not None:
        return candidate.detected >= minimum
    return candidate.minimum is not None and candidate.minimum >= minimum


def framework_candidates(kb: KnowledgeBase, request: Request) -> list[FrameworkCandidate]:
    """Every TensorFlow release that could serve this request's OS and stack kind, newest first."""
    key = ("framework_candidates", request.os, request.wheel_platform, request.cpu_only)
    return kb.memo(key, lambda: _framework_candidates(kb, request))


def _framework_candidates(kb: KnowledgeBase, request: Request) -> list[FrameworkCandidate]:
    gpu = not request.cpu_only
    table_os = "windows" if request.os == "windows" else ("macos" if request.os == "macos" else "linux")
    out: list[FrameworkCandidate] = []
    for line in sorted(kb.lines, key=lambda l: l.key, reverse=True):
        if gpu:
            package = line.gpu_package_windows if request.os == "windows" else (
                "" if request.os == "macos" else line.gpu_package_linux)
            packages = [package] if package else []
        else:
            packages = ["tensorflow", "tensorflow-cpu", "tensorflow-intel"]
        build = kb.tested_build(line.version, table_os, gpu)
        for package in packages:
            releases = [w for w in kb.wheel_releases(package) if w.line == line.version]
            for release in releases:
                pythons = installable_pythons(kb, release, request.wheel_platform)
                if release.stub or not pythons:
                    continue
                extra = "and-cuda" if (gpu and line.and_cuda_extra and not line.and_cuda_blocker and release.and_cuda
                                       and request.os in ("linux", "wsl2")) else ""
                cuda = cudnn_min = cudnn_pin = None
                runtime = _pinned(release.and_cuda, _CUDA_RUNTIME) if extra else None
                cudnn = _pinned(release.and_cuda, _CUDNN) if extra else None
                if runtime is not None and cudnn is not None:
                    # The extra pins exact wheels (2.14-2.19): those versions are the stack.
                    cuda = f"{runtime.major}.{runtime.minor}"
                    cudnn_pin = ".".join(str(p) for p in cudnn.release[:3])
                    cudnn_min = cudnn_pin
                elif gpu:
                    # No extra, or one with version ranges (2.20+): the tested configuration names the stack.
                    if build is None:
                        continue  # no tested GPU configuration for this line and OS
                    cuda, cudnn_min = build.cuda, build.cudnn
                arch = kb.compiled_arch(line.version, request.os, release.version)
                out.append(FrameworkCandidate(release, line, build, gpu, pythons, cuda, cudnn_min, cudnn_pin, extra,
                                              arch))
            if releases and not gpu and any(c.line is line for c in out):
                break  # CPU stacks: the first package with wheels for this line serves
    return out


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


# -- results ------------------------------------------------------------------------------------------
@dataclass(frozen=True)
class Pin:
    """One resolved component with the reason and the fact behind it."""

    value: dict
    why: str
    source: str

    def to_json(self) -> dict:
        return {**self.value, "why": self.why, "source": self.source}


@dataclass(frozen=True)
class Stack:
    framework: Pin
    python: Pin
    cuda: Pin | None
    cudnn: Pin | None
    driver: Pin | None
    gpu: Pin
    gpus: tuple[dict, ...]
    candidate: FrameworkCandidate | None = field(compare=False, repr=False)  # None: an NVIDIA build
    pip_pins: tuple[Pitfall, ...] = ()

    @property
    def tf_version(self) -> str:
        return self.framework.value["version"]

    @property
    def summary(self) -> str:
        fw = self.framework.value
        parts = [f"{fw['pip_package']}=={self.tf_version}" if fw.get("pip_package") else
                 f"container {fw.get('container')} (TensorFlow {self.tf_version})",
                 f"Python {self.python.value['recommended']}"]
        if self.cuda:
            parts += [f"CUDA {self.cuda.value['version']}", f"cuDNN {self.cudnn.value['version']}"]
            parts.append(f"driver >= {self.driver.value['min']}")
        else:
            parts.append("CPU only")
        return ", ".join(parts)

    def to_json(self) -> dict:
        return {
            "framework": self.framework.to_json(),
            "python": self.python.to_json(),
            "cuda": self.cuda.to_json() if self.cuda else None,
            "cudnn": self.cudnn.to_json() if self.cudnn else None,
            "driver": self.driver.to_json() if self.driver else None,
            "gpu": self.gpu.to_json(),
            "gpus": list(self.gpus),
            "pip": [{"requirement": p.requirement, "why": p.why, "source": p.source} for p in self.pip_pins],
        }


@dataclass(frozen=True)
class Alternative:
    stack: Stack
    why: str
    request: Request

    def to_json(self) -> dict:
        return {"stack": self.stack.to_json(), "why": self.why, "request": self.request.to_json()}


@dataclass(frozen=True)
class Resolution:
    request: Request
    stack: Stack | None
    findings: tuple[Finding, ...]
    alternatives: tuple[Alternative, ...]
    kb_version: str

    @property
    def status(self) -> str:
        if self.stack is None:
            return "impossible"
        return "warning" if any(f.severity in ("warning", "error") for f in self.findings) else "ok"


# -- entry points ---------------------------------------------------------------------------------------
def root_requirements(kb: KnowledgeBase, request: Request) -> list[Req]:
    # The provider's pool is already narrowed to the requested versions; this root requirement names the
    # request in conflict explanations and holds the resolver to that pool.
    requested = {id(c) for c in StackProvider(kb, request).requested_framework_candidates()}
    reqs = [Req("tensorflow", lambda c: id(c) in requested,
                f"TensorFlow {request.tf} was asked for (--tf)", "request")]
    if request.python:
        reqs.append(Req("python", lambda c, p=request.python: c.version == p,
                        f"Python {request.python} was asked for", "request"))
    if request.cpu_only:
        return reqs
    for gpu in request.gpus:
        label = f"{gpu.name or 'the GPU'} (compute capability {gpu.cc})"
        reqs.append(Req(
            "tensorflow",
            lambda c, cc=gpu.cc: classify_support(c.arch, cc) != "unsupported",
            f"{label} needs a TensorFlow build with SASS or PTX for it",
            "tensorflow.toml [[compiled_arch]] (CUDA code found in the official wheels per release line)"))
        reqs.append(Req("cuda", lambda c, cc=gpu.cc: cc_tuple(c.toolkit.arch_min) <= cc_tuple(cc),
                        f"{label} needs a CUDA toolkit that still supports compute capability {gpu.cc}",
                        "cuda.toml [[toolkit]] arch_min (NVIDIA CUDA release notes)"))
        reqs.append(Req("cudnn", lambda c, cc=cc_tuple(gpu.cc): c.arch_min <= cc,
                        f"{label} needs a cuDNN that still supports compute capability {gpu.cc}",
                        "cudnn.toml [[release]] arch_min (NVIDIA cuDNN support matrix)"))
        support = kb.arch_support_for(gpu.cc)
        if support and support.last_branch and not request.driver:
            branch = int(support.last_branch)
            reqs.append(Req("driver", lambda c, b=branch: c.minimum is None or driver_branch(c.minimum) <= b,
                            f"{support.architecture.capitalize()} GPUs are supported by drivers up to the "
                            f"R{branch} branch", support.source, driver_max_branch=branch))
    if request.os == "wsl2":
        wsl = kb.platform_minimum("wsl2")
        if wsl:
            minimum = Version(wsl.driver)
            reqs.append(Req("driver", lambda c, m=minimum: driver_at_least(c, m),
                            f"CUDA on WSL2 needs a Windows driver >= {wsl.driver}", wsl.source, driver_min=minimum))
    if request.driver:
        reqs.append(Req("driver", lambda c: True, f"driver {request.driver} is installed", "request"))
    return reqs


def _solve(kb: KnowledgeBase, request: Request):
    provider = StackProvider(kb, request)
    resolver = Resolver(provider, BaseReporter())
    return resolver.resolve(root_requirements(kb, request), max_rounds=500)


def resolve(kb: KnowledgeBase, request: Request, *, with_alternatives: bool = True) -> Resolution:
    try:
        result = _solve(kb, request)
    except (ResolutionImpossible, ResolutionTooDeep) as exc:
        findings = conflict_findings(kb, request, exc)
        alternatives = find_alternatives(kb, request) if with_alternatives else ()
        stock = Resolution(request, None, tuple(findings), tuple(alternatives), kb.version)
    else:
        stack, findings = build_stack(kb, request, result.mapping)
        stock = Resolution(request, stack, tuple(findings), (), kb.version)
    from stackresolve.vendor import with_nvidia_builds  # NVIDIA's TF 1.15 builds, where they serve better

    return with_nvidia_builds(kb, request, stock)


def resolve_stack(kb: KnowledgeBase, request: Request) -> Stack | None:
    """The stack alone (no alternatives, no conflict analysis): for matrices and alternatives."""
    try:
        result = _solve(kb, request)
    except (ResolutionImpossible, ResolutionTooDeep):
        return None
    return build_stack(kb, request, result.mapping)[0]


# -- building the answer ---------------------------------------------------------------------------------
def build_stack(kb: KnowledgeBase, request: Request, mapping: dict) -> tuple[Stack, list[Finding]]:
    fw: FrameworkCandidate = mapping["tensorflow"]
    py: PythonCandidate = mapping["python"]
    findings: list[Finding] = [Finding("info", "assumed", a) for a in request.assumptions]

    package = fw.release.package + (f"[{fw.extra}]" if fw.extra else "")
    newest_patch = kb.wheel_releases(fw.release.package)
    newer = [w for w in newest_patch if w.line == fw.line.version and w.key > fw.version and not w.stub]
    why_fw = f"newest {fw.release.package} release matching '{request.tf}' with a {request.wheel_platform} wheel"
    if request.python:
        why_fw += f" for Python {request.python}"
    if newer:
        why_fw += f" (newer {', '.join(w.version for w in newer)}: no wheel for this request)"
    framework = Pin({"name": "tensorflow", "version": fw.release.version, "pip_package": package,
                     "line": fw.line.version, "vendor": "stock", "index": "default"},
                    why_fw, fw.release.source)

    allowed = [p for p in fw.pythons if p == request.python] if request.python else list(fw.pythons)
    python = Pin({"min": min(allowed, key=Version), "max": max(allowed, key=Version), "recommended": py.version},
                 f"{fw.release.package} {fw.release.version} has {request.wheel_platform} wheels for Python "
                 f"{', '.join(fw.pythons)}" + (f"; Python {request.python} was asked for" if request.python else
                                               "; the newest of them is recommended"),
                 fw.release.source)
    if fw.build and set(fw.build.python_versions) != set(fw.pythons) and not request.python:
        findings.append(Finding(
            "info", "python-table-differs",
            f"TensorFlow's tested-build table lists Python {fw.build.python} for {fw.line.version}; the package "
            f"index has {fw.release.version} wheels for {', '.join(fw.pythons)} on {request.wheel_platform}. "
            f"The index decides.", source=f"{fw.build.source}; {fw.release.source}"))

    pins = tuple(kb.pitfalls_for(fw.release.version, "linux" if request.os == "wsl2" else request.os, py.version))

    gpu_entries = []
    for gpu in request.gpus:
        arch = fw.arch
        gpu_entries.append({"name": gpu.name or None, "compute_capability": gpu.cc,
                            "architecture": gpu.architecture, "support": classify_support(arch, gpu.cc),
                            "source": gpu.source})

    if not fw.gpu:
        gpu_pin = Pin({"name": None, "compute_capability": None, "support": "cpu-only"},
                      "CPU-only stack: no NVIDIA GPU in the request", "request")
        if request.os == "macos":
            gpu_pin = Pin(gpu_pin.value, "TensorFlow has no CUDA builds for macOS after 1.1", fw.line.source)
        return Stack(framework, python, None, None, None, gpu_pin, tuple(gpu_entries), fw, pins), findings

    cuda_c: CudaCandidate = mapping["cuda"]
    cudnn_c: CudnnCandidate = mapping["cudnn"]
    toolkit = cuda_c.toolkit
    build_source = fw.build.source if fw.build else fw.release.source
    if fw.cudnn_pin:
        why_cuda = f"{package} installs the CUDA {toolkit.version} runtime as pip wheels"
        why_cudnn = f"{package} pins cuDNN {fw.cudnn_pin} as a pip wheel"
        cuda_source = cudnn_source = fw.release.source
    elif fw.extra:
        why_cuda = (f"{package} installs CUDA runtime wheels within ranges; TensorFlow {fw.line.version} was tested "
                    f"with CUDA {toolkit.version}")
        why_cudnn = (f"{package} installs a cuDNN wheel within a range; the tested build used cuDNN {fw.cudnn_min} and "
                     f"{cudnn_c.release.version} is the newest such cuDNN built for CUDA {toolkit.version}")
        cuda_source = f"{build_source}; {fw.release.source}"
        cudnn_source = f"{build_source}; {fw.release.source}; {cudnn_c.release.source}"
    else:
        why_cuda = f"TensorFlow {fw.line.version} {request.os} GPU builds were tested with CUDA {toolkit.version}"
        why_cudnn = (f"built with cuDNN {fw.cudnn_min}; TensorFlow accepts the same major with an equal or higher "
                     f"minor, and {cudnn_c.release.version} is the newest such cuDNN built for CUDA {toolkit.version}")
        cuda_source = build_source
        cudnn_source = f"{build_source}; {cudnn_c.release.source}; {TF_CUDNN_RULE_SOURCE}"
    cuda = Pin({"version": toolkit.version, "release": toolkit.newest_release}, why_cuda, cuda_source)
    cudnn = Pin({"version": cudnn_c.release.version, "full_version": cudnn_c.build.full_version,
                 "built_for_cuda": cudnn_c.build.cuda}, why_cudnn, cudnn_source)

    # Driver versions are kept as NVIDIA prints them ("535.54.03"); Version() is only for comparing.
    minimum = toolkit.min_driver(request.driver_os)
    driver_source = toolkit.source
    if not minimum:
        findings.append(Finding("warning", "driver-minimum-unknown",
                                f"NVIDIA's table gives no minimum {request.driver_os} driver for CUDA {toolkit.version}",
                                source=toolkit.source))
    wsl = kb.platform_minimum("wsl2") if request.os == "wsl2" else None
    if wsl and (not minimum or Version(wsl.driver) > Version(minimum)):
        minimum, driver_source = wsl.driver, wsl.source
    detected = request.driver
    compat = minor_compat_minimum(toolkit, request, fw)
    if detected and minimum and Version(detected) < Version(minimum) and compat:
        findings.append(Finding(
            "warning", "driver-minor-compat",
            f"driver {detected} is older than CUDA {toolkit.version}'s own minimum {minimum} but meets NVIDIA's "
            f"minor-version-compatibility minimum {compat}: TensorFlow's kernels run (the wheels carry machine code "
            f"for this GPU); features that need the newer driver, such as PTX JIT, do not.",
            fix=f"Upgrade the driver to >= {minimum} to lift the limits.", source=toolkit.source))
    driver = Pin({"min": minimum or None, "detected": detected,
                  "ok": None if detected is None or not minimum else (
                      Version(detected) >= Version(minimum) or bool(compat and Version(detected) >= Version(compat))),
                  "minor_compat_min": compat or None},
                 f"CUDA {toolkit.version} needs driver >= {minimum or '(unknown)'} on {request.driver_os}"
                 + (" (CUDA on WSL2 needs at least this Windows driver)" if driver_source is not toolkit.source
                    else ""), driver_source)
    if detected is None and minimum:
        findings.append(Finding(
            "info", "driver-unknown",
            f"No NVIDIA driver was detected or given; this stack needs >= {minimum}.",
            fix="Check with `nvidia-smi`, or pass --driver VERSION.", source=driver_source))

    support = worst_support(e["support"] for e in gpu_entries)
    weakest = min(request.gpus, key=lambda g: cc_tuple(g.cc)) if request.gpus else None
    gpu_pin = Pin({"name": weakest.name or None if weakest else None,
                   "compute_capability": weakest.cc if weakest else None, "support": support},
                  _support_why(fw, support), fw.arch.source if fw.arch else "")
    findings += gpu_findings(kb, request, fw, toolkit, cudnn_c.release)
    if fw.line.and_cuda_blocker and request.os in ("linux", "wsl2"):
        findings.append(Finding("info", "and-cuda-unusable",
                                f"tensorflow[and-cuda] {fw.line.version}: {fw.line.and_cuda_blocker}",
                                source=fw.line.source))
    stack = Stack(framework, python, cuda, cudnn, driver, gpu_pin, tuple(gpu_entries), fw, pins)
    return stack, findings


def _support_why(fw: FrameworkCandidate, support: str) -> str:
    return {
        "native": f"TensorFlow {fw.line.version} wheels carry machine code (SASS) for this GPU",
        "ptx-jit": f"TensorFlow {fw.line.version} wheels carry only PTX for this GPU: the driver compiles it at "
                   f"first start",
        "unknown": f"the CUDA architectures compiled into TensorFlow {fw.line.version} are not in the knowledge base",
        "unsupported": f"TensorFlow {fw.line.version} has no kernels for this GPU",
    }[support]


def gpu_findings(kb: KnowledgeBase, request: Request, fw: FrameworkCandidate, toolkit: CudaToolkit,
                 cudnn: CudnnRelease) -> list[Finding]:
    findings = []
    arch = fw.arch
    for gpu in request.gpus:
        label = f"{gpu.name or 'GPU'} (compute capability {gpu.cc})"
        level = classify_support(arch, gpu.cc)
        if level == "ptx-jit":
            findings.append(Finding(
                "warning", "ptx-jit",
                f"TensorFlow {fw.line.version} has no machine code for {label}, only PTX "
                f"({', '.join('compute_' + p.replace('.', '') for p in arch.ptx)}): the first start JIT-compiles "
                f"every kernel, which can take many minutes.",
                fix="Set CUDA_CACHE_MAXSIZE=4294967296 so the JIT cache survives, or use a TensorFlow release "
                    "built for this GPU.", source=arch.source))
        elif level == "unknown":
            findings.append(Finding(
                "warning", "arch-unknown",
                f"The CUDA architectures compiled into TensorFlow {fw.line.version} are not recorded; {label} "
                f"support is unverified.", source="tensorflow.toml [[compiled_arch]]"))
        if cc_tuple(gpu.cc) > cc_tuple(toolkit.arch_max):
            findings.append(Finding(
                "warning", "cuda-predates-gpu",
                f"CUDA {toolkit.version} predates {label} (its newest architecture is {toolkit.arch_max}): cuBLAS "
                f"and cuDNN from this toolkit carry no kernels for it and may fail at run time.",
                fix="Prefer a TensorFlow release built with a CUDA that knows this GPU.", source=toolkit.source))
        elif cc_tuple(gpu.cc) > cc_tuple(cudnn.arch_max):
            findings.append(Finding(
                "warning", "cudnn-predates-gpu",
                f"cuDNN {cudnn.version} predates {label} (newest supported architecture {cudnn.arch_max}).",
                source=cudnn.source))
    return findings


def conflict_findings(kb: KnowledgeBase, request: Request, exc: Exception) -> list[Finding]:
    """Say which facts conflict, each with its source."""
    findings: list[Finding] = []
    if isinstance(exc, ResolutionImpossible):
        seen = set()
        for info in exc.causes:
            req: Req = info.requirement
            parent = info.parent
            by = "" if parent is None else f" (required by {_describe(parent)})"
            key = (req.text, by)
            if key in seen:
                continue
            seen.add(key)
            findings.append(Finding("error", "conflict", req.text + by, source=req.source))
    else:
        findings.append(Finding("error", "conflict", "the search for a consistent stack gave up (too deep)"))
    findings += _why_no_framework(kb, request)
    return findings


def _why_no_framework(kb: KnowledgeBase, request: Request) -> list[Finding]:
    """When no TensorFlow release at all survives the request's own filters, say which filter removed them."""
    if StackProvider(kb, request).requested_framework_candidates():
        return []
    spec = request.tf_spec
    matching = [w for w in kb.wheels if spec.contains(w.key, prereleases=True)]
    if not matching:
        return [Finding("error", "no-such-release", f"no TensorFlow release matches '{request.tf}'",
                        source="tensorflow_wheels.toml (the package index)")]
    lines = sorted({w.line for w in matching}, key=Version)
    out = []
    for line_version in lines:
        line = kb.line(line_version)
        if line is None:
            continue
        if not request.cpu_only and request.os == "windows" and not line.gpu_package_windows:
            out.append(Finding("error", "no-windows-gpu",
                               f"TensorFlow {line_version} has no GPU build for native Windows",
                               fix="Use WSL2 (--os wsl2), or TensorFlow <= 2.10 for native Windows GPU.",
                               source=line.source))
        elif not request.cpu_only and request.os == "macos":
            out.append(Finding("error", "no-macos-gpu", f"TensorFlow {line_version} has no CUDA build for macOS",
                               source=line.source))
        else:
            out.append(Finding("error", "no-wheel",
                               f"no TensorFlow {line_version} wheel for {request.wheel_platform}"
                               + ("" if request.cpu_only else " with a tested GPU configuration"),
                               source="tensorflow_wheels.toml (the package index); tensorflow.toml"))
    return out[:3]


def _describe(candidate) -> str:
    if isinstance(candidate, FrameworkCandidate):
        return f"{candidate.release.package} {candidate.release.version}"
    if isinstance(candidate, CudaCandidate):
        return f"CUDA {candidate.toolkit.version}"
    if isinstance(candidate, CudnnCandidate):
        return f"cuDNN {candidate.release.version}"
    if isinstance(candidate, PythonCandidate):
        return f"Python {candidate.version}"
    return "driver"


def find_alternatives(kb: KnowledgeBase, request: Request, limit: int = 4) -> list[Alternative]:
    """The nearest requests that do resolve, most specific relaxation first."""
    tries: list[tuple[Request, str]] = []
    if request.python:
        tries.append((replace(request, python=None), f"Python {request.python} has no fitting wheel; "
                                                         f"use the Python this stack names"))
    if request.os == "windows" and not request.cpu_only:
        tries.append((replace(request, os="wsl2"),
                      "native Windows GPU support ended with TensorFlow 2.10; WSL2 runs the Linux GPU build on "
                      "the Windows driver"))
    if request.driver:
        tries.append((replace(request, driver=None), f"driver {request.driver} is too old for this target: "
                                                     f"upgrade the driver"))
    spec_versions = [w.key for w in kb.wheels if request.tf_spec.contains(w.key, prereleases=True)]
    if str(request.tf_spec):
        if spec_versions:
            lowest = min(spec_versions)
            tries.append((replace(request, tf=f"<{lowest.major}.{lowest.minor}",
                                  tf_spec=SpecifierSet(f"<{lowest.major}.{lowest.minor}")),
                          "the newest older TensorFlow that fits this machine"))
        tries.append((replace(request, tf="latest", tf_spec=SpecifierSet()),
                      "the newest TensorFlow that fits this machine"))
    if not request.cpu_only:
        tries.append((replace(request, gpus=(), driver=None, cpu_only=True), "a CPU-only stack (no CUDA needed)"))
    out: list[Alternative] = []
    seen: set[str] = set()
    for alt_request, why in tries:
        stack = resolve_stack(kb, alt_request)
        if stack is None or stack.summary in seen:
            continue
        seen.add(stack.summary)
        out.append(Alternative(stack, why, alt_request))
        if len(out) >= limit:
            break
    return out
