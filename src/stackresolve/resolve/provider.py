"""The resolvelib provider over five components (framework, python, cuda, cudnn, driver) and the requirements
each candidate and the request impose. Every requirement carries the fact behind it and its source, so a
conflict can name both sides."""

from __future__ import annotations

from typing import Callable

from packaging.version import Version
from resolvelib import AbstractProvider

from stackresolve.knowledge.base import KnowledgeBase
from stackresolve.knowledge.rules import (
    CUDNN_RULE_SOURCE,
    cudnn_accepts,
    cudnn_rule_text,
    minor_compat_floor,
)
from stackresolve.model.enums import Framework, GpuSupport, Os
from stackresolve.model.record import record
from stackresolve.model.values import ComputeCapability, DriverVersion
from stackresolve.request import Request
from stackresolve.resolve.candidates import (
    PYTHON_CANDIDATES,
    Candidate,
    CudnnCandidate,
    DriverCandidate,
    FrameworkCandidate,
    cuda_pool,
    cudnn_pool,
    requested_framework_candidates,
    support_on,
)

ORDER = ("framework", "python", "cuda", "cudnn", "driver")


@record(eq=False)
class Req:
    """A requirement on one component, with the fact behind it (shown when resolution fails)."""

    name: str
    test: Callable[[Candidate], bool]
    text: str
    source: str
    driver_min: Version | None = None  # driver requirements also carry bounds, to compute a minimum
    cuda: str | None = None  # set when the requirement only admits this CUDA line (cuda) or builds for it (cudnn)
    prefer: str | None = None  # cudnn: the version to try first (the policy's choice)
    channels: tuple[str, ...] | None = None  # cudnn: the install channels that carry it in the plans (None: all)


class StackProvider(AbstractProvider):
    """`keep`, when given, narrows the framework pool to the builds it accepts (doctor: the installed build;
    explain: the log's build where one fixes the error); every other rule is the same."""

    def __init__(self, kb: KnowledgeBase, request: Request, keep: Callable[[object], bool] | None = None):
        self.kb = kb
        self.request = request
        self.keep = keep

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
        elif identifier == "framework":
            pool = requested_framework_candidates(self.kb, self.request)
            if self.keep is not None:
                pool = [c for c in pool if self.keep(c)]
        elif identifier == "python":
            pool = PYTHON_CANDIDATES
        else:
            cuda = next((r.cuda for r in reqs if r.cuda), None)
            pool = cuda_pool(self.kb, cuda) if identifier == "cuda" else cudnn_pool(self.kb, cuda)
            if identifier == "cudnn":
                prefer = next((r.prefer for r in reqs if r.prefer), None)
                only = next((r.channels for r in reqs if r.channels is not None), None)
                if prefer and cuda:
                    channels = {name: versions for name, versions in
                                self.kb.cudnn_channels(cuda, self.request.os.value).items()
                                if only is None or name in only}
                    pool = self.kb.memo(("cudnn_order", cuda, prefer, self.request.os, only),
                                        lambda: preference_order(pool, prefer, channels))
        return [c for c in pool if c not in bad and all(r.test(c) for r in reqs)]

    def get_dependencies(self, candidate):
        if isinstance(candidate, FrameworkCandidate):
            return framework_dependencies(self.kb, self.request, candidate)
        return []

    def _driver_candidate(self, reqs: list[Req]) -> DriverCandidate:
        if self.request.driver:
            return DriverCandidate(detected=Version(self.request.driver), minimum=None)
        minimums = [r.driver_min for r in reqs if r.driver_min is not None]
        minimum = max(minimums) if minimums else None
        newest = newest_supported_driver(self.kb, self.request)
        if newest is not None and minimum is not None and minimum > Version(newest.last_version):
            # No driver named, and the stack's own minimum is past the newest driver every GPU supports (Kepler:
            # R470): plan for that driver, as if installed; minor-version compatibility may still carry the stack.
            return DriverCandidate(detected=Version(newest.last_version), minimum=None)
        return DriverCandidate(detected=None, minimum=minimum)


def preference_order(pool: list[CudnnCandidate], prefer: str,
                     channels: dict[str, frozenset[str]]) -> list[CudnnCandidate]:
    """The order cuDNN releases are tried in, so that every plan installs the same cuDNN: releases that every
    install channel of this OS carries come first; among them the preferred minor (the preferred release, then
    its newest sibling patch), then the nearest newer minor (its newest patch), then the nearest older one."""
    wanted = Version(prefer)
    depth = len(wanted.release)

    def rank(c: CudnnCandidate):
        missing = sum(c.release.version not in versions for versions in channels.values())
        minor = c.key.release[:2]
        newest_first = tuple(-x for x in c.key.release)
        if minor == wanted.release[:2]:
            return (missing, 0, c.key.release[:depth] != wanted.release, (), newest_first)
        if c.key > wanted:
            return (missing, 1, False, minor, newest_first)
        return (missing, 2, False, tuple(-x for x in minor), newest_first)

    return sorted(pool, key=rank)


def newest_supported_driver(kb: KnowledgeBase, request: Request):
    """The ArchSupport record with the oldest last driver branch among the requested GPUs (its last_version is
    the newest driver that still supports every GPU: Kepler, R470, 470.256.02), or None when none has one."""
    records = [s for g in request.gpus if (s := kb.arch_support_for(g.cc)) is not None and s.last_branch]
    return min(records, key=lambda s: Version(s.last_version)) if records else None


def driver_at_least(candidate: DriverCandidate, minimum: Version) -> bool:
    if candidate.detected is not None:
        return candidate.detected >= minimum
    return candidate.minimum is not None and candidate.minimum >= minimum


def all_native(request: Request, fw: FrameworkCandidate) -> bool:
    return bool(request.gpus) and all(support_on(fw, g.capability) is GpuSupport.NATIVE for g in request.gpus)


def preferred_cudnn(kb: KnowledgeBase, request: Request, fw: FrameworkCandidate) -> tuple[str | None, str]:
    """The cuDNN plans install for a build, and why: what the build brings, else the user's --cudnn, else what
    TensorFlow's own release artifacts used for the line (the newest patch of the minor where the source names
    only a minor), else the minor it was compiled with."""
    if fw.cudnn_fixed:
        return fw.cudnn_fixed, "fixed"
    if fw.framework is not Framework.TENSORFLOW:
        return fw.cudnn_compiled, "wheels"  # the cuDNN the framework's pip wheels bring (a range for JAX)
    if request.cudnn:
        return request.cudnn, "request"
    artifact = kb.cudnn_artifact(fw.line.version, request.os)
    if artifact is not None and artifact.cuda == fw.cuda:
        return artifact.cudnn, "artifact"
    return fw.cudnn_compiled, "compiled"


def framework_dependencies(kb: KnowledgeBase, request: Request, fw: FrameworkCandidate) -> list[Req]:
    platform = "the container" if fw.container else request.wheel_platform
    deps = [Req("python", lambda c, ok=fw.pythons: c.version in ok,
                f"{fw.label} has {platform} builds for Python {', '.join(fw.pythons) or 'none'}", fw.source)]
    if not fw.gpu:
        return deps
    deps += driver_dependencies(kb, request, fw)
    source = fw.build.source if fw.build else fw.source
    if fw.framework is not Framework.TENSORFLOW:
        # PyTorch and JAX bring CUDA and cuDNN in their wheels: the CUDA line decides the driver; there is no
        # cuDNN to choose (the plan names the one the wheels bring).
        what = f"is built for CUDA {fw.cuda}" if fw.framework is Framework.PYTORCH else \
            f"[{','.join(fw.extras)}] installs CUDA {fw.cuda} or a newer {fw.cuda.split('.')[0]}.x as pip wheels"
        deps.append(Req("cuda", lambda c, v=fw.cuda: c.toolkit.version == v, f"{fw.label} {what}", fw.source,
                        cuda=fw.cuda))
        return deps
    how = "pins" if fw.cuda_release and fw.extras else "uses"
    deps.append(Req("cuda", lambda c, v=fw.cuda: c.toolkit.version == v,
                    f"{fw.label} {how} CUDA {fw.cuda}" + ("" if fw.nvidia or fw.cuda_release else
                                                         f" (TensorFlow's tested build for {request.os.wheel_os})"),
                    source, cuda=fw.cuda))
    prefer, _ = preferred_cudnn(kb, request, fw)
    if fw.cudnn_fixed:
        deps.append(Req("cudnn", lambda c, v=Version(fw.cudnn_fixed), cuda=fw.cuda: c.key == v and c.build.fits(cuda),
                        f"{fw.label} brings cuDNN {fw.cudnn_fixed}", fw.source, cuda=fw.cuda, prefer=prefer))
        return deps
    compiled = fw.cudnn_compiled
    deps.append(Req(
        "cudnn",
        lambda c, m=compiled, cuda=fw.cuda: cudnn_accepts(m, c.release.version) and c.build.fits(cuda),
        f"TensorFlow {fw.line.version} was compiled with cuDNN {compiled}: it loads cuDNN "
        f"{cudnn_rule_text(compiled)} built for CUDA {fw.cuda}",
        f"{source}; {CUDNN_RULE_SOURCE}", cuda=fw.cuda, prefer=prefer,
        # NVIDIA's wheels install with pip, not apt (plan/apt.py refuses them): conda is their channel for cuDNN
        channels=("conda",) if fw.nvidia else None))
    return deps


def driver_dependencies(kb: KnowledgeBase, request: Request, fw: FrameworkCandidate) -> list[Req]:
    """The driver a build's CUDA needs. NVIDIA's minor-version compatibility lets CUDA 11+ programs run on an
    older driver of the same major's floor (Table 2), but not PTX JIT: it is accepted for an installed driver
    only when the build carries machine code for every GPU. NVIDIA's builds state their own floor."""
    if fw.nvidia is not None:
        return [nvidia_driver_requirement(kb, request, fw)]
    toolkit = kb.toolkit(fw.cuda)
    text = planned_driver_minimum(request, fw, toolkit) if toolkit is not None else ""
    if not text:
        return []  # NVIDIA prints no minimum for this OS; the stack says so
    minimum = Version(text)
    compat_text = minor_compat_floor(toolkit, request.driver_os, all_native(request, fw))
    compat = Version(compat_text) if compat_text and compat_text != text else None
    return [Req("driver", lambda c, m=minimum, k=compat: driver_at_least(c, m) or (
                    k is not None and c.detected is not None and c.detected >= k),
                f"CUDA {toolkit.version} needs an NVIDIA driver >= {text} on {request.driver_os}"
                + (f" (or >= {compat_text} through minor-version compatibility)" if compat else ""),
                toolkit.source, driver_min=minimum)]


def toolkit_driver(toolkit, driver_os: Os) -> str:
    """A toolkit's own driver minimum; where NVIDIA prints none for this OS (Windows, CUDA 13.x: N/A), the
    minor-version-compatibility floor it gives for the major (13.x >= 580)."""
    compat = toolkit.compat_driver_windows if driver_os is Os.WINDOWS else toolkit.compat_driver_linux
    return toolkit.min_driver(driver_os) or compat


def planned_driver_minimum(request: Request, fw: FrameworkCandidate, toolkit) -> str:
    """The driver a plan asks for. PyTorch and JAX carry their CUDA runtime in their wheels, and their makers
    state the minor-version-compatibility floor as the requirement (JAX's install guide: >= 525.60.13 for CUDA 12;
    PyTorch: a cu128 build runs on 550, pytorch/pytorch#155141), so for a build with machine code for every GPU
    that floor is the minimum; otherwise, and for TensorFlow, the toolkit's own minimum."""
    own = toolkit_driver(toolkit, request.driver_os)
    if fw.framework is Framework.TENSORFLOW:
        return own
    return minor_compat_floor(toolkit, request.driver_os, all_native(request, fw)) or own


def gpu_driver_floor(kb: KnowledgeBase, request: Request):
    """(driver, why, source) the requested GPUs need to be supported at all: the driver of the first CUDA
    toolkit that targets the newest GPU's compute capability (see compute_capability_driver_floor). None when no
    GPU is named or no toolkit is recorded. GPUs that carry their own machine's driver (a fleet) are held to it
    instead (own_driver_conflicts)."""
    shared = [g for g in request.gpus if g.driver is None]
    if not shared:
        return None
    newest = max(shared, key=lambda g: g.capability)
    return compute_capability_driver_floor(kb, newest.cc, request.driver_os)


def compute_capability_driver_floor(kb: KnowledgeBase, cc: str, driver_os: Os):
    """The driver of the first CUDA toolkit that targets compute capability `cc`, not its architecture's first:
    sm_86 came with CUDA 11.1, a year after Ampere's sm_80 in 11.0, so an RTX 3090 needs 11.1's 455.23 / 456.38
    (CUDA 11.1 release notes, Table 3; NVIDIA's CUDA Toolkit, Driver and Architecture Matrix). A driver older than
    that predates the GPU. A lower bound: single boards came later (RTX 3060: R460)."""
    support = kb.arch_support_for(cc)
    name = f"compute capability {cc}" + (f" ({support.architecture.capitalize()})" if support else "")

    def compute():
        gpu = ComputeCapability.parse(cc)
        fitting = [t for t in kb.toolkits if t.max_cc >= gpu]
        if not fitting:
            return None
        first = min(fitting, key=lambda t: Version(t.version))
        driver = toolkit_driver(first, driver_os)
        if not driver:
            return None
        return (driver, f"{name} GPUs need a driver that supports them: >= {driver}, the driver of CUDA "
                        f"{first.version}, the first toolkit for compute capability {cc}",
                f"{first.source}; https://docs.nvidia.com/datacenter/tesla/drivers/cuda-toolkit-driver-and-"
                f"architecture-matrix.html (first CUDA toolkit per architecture)")

    return kb.memo(("gpu_driver_floor", cc, driver_os), compute)


def own_driver_conflicts(kb: KnowledgeBase, request: Request) -> list[Req]:
    """A GPU whose own machine's driver predates its compute capability: a requirement nothing satisfies."""
    reqs = []
    for gpu in request.gpus:
        if gpu.driver is None:
            continue
        floor = compute_capability_driver_floor(kb, gpu.cc, request.driver_os)
        if floor is not None and DriverVersion.parse(gpu.driver) < DriverVersion.parse(floor[0]):
            reqs.append(Req("driver", lambda c: False, f"{floor[1]}; {gpu.label} runs on driver {gpu.driver}",
                            floor[2]))
    return reqs


def driver_floor(kb: KnowledgeBase, request: Request, fw: FrameworkCandidate) -> str | None:
    """The lowest driver a build runs on for this request (as NVIDIA prints it), ignoring minor-version
    compatibility; None for CPU builds or where NVIDIA gives no minimum."""
    if not fw.gpu:
        return None
    toolkit = kb.toolkit(fw.cuda)
    floor = fw.nvidia.driver_stated if fw.nvidia is not None else (
        toolkit.min_driver(request.driver_os) if toolkit else "")
    wsl = kb.platform_minimum("wsl2") if request.os is Os.WSL2 else None
    if wsl and (not floor or DriverVersion.parse(wsl.driver) > DriverVersion.parse(floor)):
        floor = wsl.driver
    gpu = gpu_driver_floor(kb, request)
    if gpu and (not floor or Version(gpu[0]) > Version(floor)):
        floor = gpu[0]
    return floor or None


def nvidia_driver_requirement(kb: KnowledgeBase, request: Request, fw: FrameworkCandidate) -> Req:
    build = fw.nvidia
    stated = Version(build.driver_stated)
    # Containers ship CUDA's forward-compatibility package, which NVIDIA supports on data-center GPUs with the
    # driver branches the release notes list.
    datacenter = build.kind == "container" and bool(request.gpus) and all(
        (g := kb.find_gpu(t.name)) is not None and g.segment == "datacenter" for t in request.gpus if t.name) \
        and all(t.name for t in request.gpus)
    compat = tuple(Version(c) for c in build.driver_compat) if datacenter else ()

    def fits(c: DriverCandidate) -> bool:
        if driver_at_least(c, stated):
            return True
        return c.detected is not None and any(
            c.detected.release[0] == k.release[0] and c.detected >= k for k in compat)

    extra = f"; data-center GPUs: {', '.join(build.driver_compat)} through forward compatibility" if compat else ""
    return Req("driver", fits, f"{fw.label} (release {build.release}) needs driver {build.driver_stated} or later"
               + extra, build.source, driver_min=stated)


ARCH_SOURCES = {
    Framework.TENSORFLOW: "tensorflow.toml [[compiled_arch]] (CUDA code found in the official wheels per release "
                          "line)",
    Framework.PYTORCH: "pytorch.toml [[variant]] sass/ptx (CUDA code in torch's kernels per variant)",
    Framework.JAX: "jax.toml [[compiled_arch]] (CUDA code in the plugin wheels) and [[release]] cc_min",
}


def root_requirements(kb: KnowledgeBase, request: Request) -> list[Req]:
    # The provider's pool is already narrowed to the requested versions; this root requirement names the
    # request in conflict explanations and holds the resolver to that pool.
    requested = {id(c) for c in requested_framework_candidates(kb, request)}
    vendor = f" ({request.vendor} builds)" if request.vendor else ""
    reqs = [Req("framework", lambda c: id(c) in requested,
                f"{request.asked}{vendor} was asked for ({request.framework.flag})", "request")]
    if request.python:
        reqs.append(Req("python", lambda c, p=request.python: c.version == p,
                        f"Python {request.python} was asked for (--python)", "request"))
    if request.cpu_only:
        return reqs
    tensorflow = request.framework is Framework.TENSORFLOW
    if request.cudnn and tensorflow:
        wanted = Version(request.cudnn)
        reqs.append(Req("cudnn", lambda c, w=wanted: c.key.release[:len(w.release)] == w.release,
                        f"cuDNN {request.cudnn} was asked for (--cudnn)", "request"))
    for gpu in request.gpus:
        label = gpu.label
        reqs.append(Req(
            "framework",
            lambda c, cc=gpu.capability: support_on(c, cc) is not GpuSupport.UNSUPPORTED,
            f"{label} needs a {request.framework.display} build with SASS or PTX for it",
            ARCH_SOURCES[request.framework]))
        reqs.append(Req("cuda", lambda c, cc=gpu.capability: c.toolkit.min_cc <= cc,
                        f"{label} needs a CUDA toolkit that still supports compute capability {gpu.cc}",
                        "cuda.toml [[toolkit]] arch_min (NVIDIA CUDA release notes)"))
        if tensorflow:
            reqs.append(Req("cudnn", lambda c, cc=gpu.capability: c.arch_min <= cc,
                            f"{label} needs a cuDNN that still supports compute capability {gpu.cc}",
                            "cudnn.toml [[release]] arch_min (NVIDIA cuDNN support matrix)"))
        support = kb.arch_support_for(gpu.cc)
        if support and support.last_branch and not request.driver:
            branch = int(support.last_branch)
            reqs.append(Req("driver", lambda c, b=branch: c.minimum is None or c.minimum.release[0] <= b,
                            f"{support.architecture.capitalize()} GPUs are supported by drivers up to the "
                            f"R{branch} branch", support.source))
    floor = gpu_driver_floor(kb, request)
    if floor is not None:
        minimum = Version(floor[0])
        reqs.append(Req("driver", lambda c, m=minimum: driver_at_least(c, m), floor[1], floor[2],
                        driver_min=minimum))
    reqs += own_driver_conflicts(kb, request)
    if request.os is Os.WSL2:
        wsl = kb.platform_minimum("wsl2")
        if wsl:
            minimum = Version(wsl.driver)
            reqs.append(Req("driver", lambda c, m=minimum: driver_at_least(c, m),
                            f"CUDA on WSL2 needs a Windows driver >= {wsl.driver}", wsl.source, driver_min=minimum))
    if request.driver:
        reqs.append(Req("driver", lambda c: True, f"driver {request.driver} is installed", "request"))
    return reqs
