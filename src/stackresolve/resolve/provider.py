"""The resolvelib provider over five components (framework, python, cuda, cudnn, driver), and which requirements
(resolve/requirements.py) each candidate and the request impose. Every requirement carries the fact behind it and
its source, so a conflict can name both sides."""

from __future__ import annotations

from functools import cached_property
from typing import Callable

from resolvelib import AbstractProvider

from stackresolve.knowledge.base import KnowledgeBase
from stackresolve.knowledge.model import PlatformMinimum
from stackresolve.knowledge.rules import driver_floor_raises, driver_is_branch, minor_compat_floor
from stackresolve.model.enums import Framework, GpuSupport, Os
from stackresolve.model.values import ComputeCapability, DriverVersion
from stackresolve.request import Request
from stackresolve.resolve.candidates import (
    PYTHON_CANDIDATES,
    CudnnCandidate,
    DriverCandidate,
    FrameworkCandidate,
    as_version,
    cuda_pool,
    cudnn_pool,
    driver_candidate,
    support_on,
)
from stackresolve.resolve.pool import requested_framework_candidates
from stackresolve.resolve.requirements import (
    BuildCuda,
    BuildCudnn,
    BuildPythons,
    CompiledCudnn,
    CudaSupports,
    CudnnAsked,
    CudnnSupports,
    DriverAtLeast,
    DriverInstalled,
    DriverPredatesGpu,
    DriverRequirement,
    HasCodeFor,
    LastBranch,
    NvidiaBuildDriver,
    PythonAsked,
    RequestedBuild,
    Requirement,
)

ORDER = {"framework": 0, "python": 1, "cuda": 2, "cudnn": 3, "driver": 4}


class StackProvider(AbstractProvider):
    """`keep`, when given, narrows the framework pool to the builds it accepts (doctor: the installed build;
    explain: the log's build where one fixes the error); every other rule is the same."""

    def __init__(self, kb: KnowledgeBase, request: Request, keep: Callable[[object], bool] | None = None):
        self.kb = kb
        self.request = request
        self.keep = keep
        self.requested = requested_framework_candidates(kb, request)  # asked once: its memo key is long
        # {(pool, requirement key): the candidates of the pool that satisfy it}, and {(pool, the requirements'
        # keys): the matches}, for the knowledge base's life: the pools are the knowledge base's own memoized
        # lists, so their identity names them.
        self.passing: dict = kb.memo("requirement-passing", dict)
        self.matches: dict = kb.memo("requirement-matches", dict)
        self.pools = {"framework": self._framework_pool, "python": self._python_pool, "cuda": self._cuda_pool,
                      "cudnn": self._cudnn_pool, "driver": self._driver_pool}

    def identify(self, requirement_or_candidate):
        return requirement_or_candidate.name

    def get_preference(self, identifier, resolutions, candidates, information, backtrack_causes):
        return ORDER[identifier]

    def narrow_requirement_selection(self, identifiers, resolutions, candidates, information, backtrack_causes):
        # The preference is a fixed order: the first unsatisfied component is the one to pin (resolvelib then
        # asks no preference of the others).
        return (min(identifiers, key=ORDER.__getitem__),)

    def is_satisfied_by(self, requirement: Requirement, candidate) -> bool:
        return requirement.is_satisfied_by(candidate)

    def find_matches(self, identifier, requirements, incompatibilities):
        reqs = list(requirements[identifier])
        pool, remembered = self.pools[identifier](reqs)
        if remembered:
            key = (id(pool), frozenset([r.key for r in reqs]))
            matches = self.matches.get(key)
            if matches is None:
                matches = self.matches[key] = self._matching(pool, reqs)
        else:
            matches = tuple(c for c in pool if all(r.is_satisfied_by(c) for r in reqs))
        bad = list(incompatibilities[identifier])
        return [c for c in matches if c not in bad] if bad else matches

    def _matching(self, pool: list, reqs: list[Requirement]) -> tuple:
        """The candidates of a remembered pool that satisfy every requirement, in the pool's order."""
        sets = []
        for r in reqs:
            found = self.passing.get((id(pool), r.key))
            if found is None:
                found = self.passing[id(pool), r.key] = frozenset(c for c in pool if r.is_satisfied_by(c))
            sets.append(found)
        accepted = frozenset.intersection(*sets) if sets else frozenset(pool)
        return tuple(c for c in pool if c in accepted)

    # Each returns (the pool, in the order to try it; whether it is the knowledge base's memoized list)
    def _framework_pool(self, reqs):
        pool = self.requested
        if self.keep is None:
            return pool, True
        return [c for c in pool if self.keep(c)], False

    def _python_pool(self, reqs):
        return PYTHON_CANDIDATES, True

    def _cuda_pool(self, reqs):
        return cuda_pool(self.kb, next((r.line for r in reqs if r.line), None)), True

    def _cudnn_pool(self, reqs):
        cuda = next((r.cuda for r in reqs if r.cuda), None)
        pool = cudnn_pool(self.kb, cuda)
        prefer = next((r.prefer for r in reqs if r.prefer), None)
        only = next((r.channels for r in reqs if r.channels is not None), None)
        if prefer and cuda:
            os = self.request.os

            def order() -> list[CudnnCandidate]:
                channels = {name: versions for name, versions in self.kb.cudnn_channels(cuda, os.value).items()
                            if only is None or name in only}
                return preference_order(pool, prefer, channels)

            pool = self.kb.memo(("cudnn_order", cuda, prefer, os, only), order)
        return pool, True

    def _driver_pool(self, reqs):
        return [self._driver_candidate(reqs)], False

    def get_dependencies(self, candidate):
        if not isinstance(candidate, FrameworkCandidate):
            return ()
        # What a build requires depends on the request through these fields only (framework_dependencies): of the
        # GPUs, whether the build has machine code for all of them (minor-version compatibility), and for NVIDIA's
        # builds their names (forward compatibility on data-center GPUs).
        request = self.request
        key = ("framework_dependencies", candidate, request.os, request.wheel_platform, request.cudnn,
               all_native(request, candidate), tuple([g.name for g in request.gpus]) if candidate.nvidia else ())
        return self.kb.memo(key, lambda: tuple(framework_dependencies(self.kb, request, candidate)))

    def _driver_candidate(self, reqs: list[DriverRequirement]) -> DriverCandidate:
        if self.request.driver:
            installed = as_version(str(self.request.driver))  # the candidates are packaging Versions
            if driver_is_branch(self.request.driver):
                # A branch (--driver 525) stands for its releases (knowledge.rules.driver_meets): the candidate is
                # the release inside it that the stack needs, never one of a later branch; a minor-version
                # compatibility floor inside it counts as well (build.driver_pin reads both with driver_meets).
                inside = [v for r in reqs for v in (r.minimum, *compat_floors(r))
                          if v is not None and v.release[0] == installed.major]
                installed = max(inside, default=installed)
            return driver_candidate(installed, None)
        minimum = max((r.minimum for r in reqs if r.minimum is not None), default=None)
        if minimum is not None:
            newest = self.newest_driver
            if newest is not None and minimum > newest:
                # No driver named, and the stack's own minimum is past the newest driver every GPU supports
                # (Kepler: R470): plan for that driver, as if installed; minor-version compatibility may still
                # carry the stack.
                return driver_candidate(newest, None)
        return driver_candidate(None, minimum)

    @cached_property
    def newest_driver(self):
        """newest_supported_driver's last version, asked once per resolution (the driver pool is made each time a
        driver requirement is added)."""
        newest = newest_supported_driver(self.kb, self.request)
        return as_version(newest.last_version) if newest is not None else None


def preference_order(pool: list[CudnnCandidate], prefer: str,
                     channels: dict[str, frozenset[str]]) -> list[CudnnCandidate]:
    """The order cuDNN releases are tried in, so that every plan installs the same cuDNN: releases that every
    install channel of this OS carries come first; among them the preferred minor (the preferred release, then
    its newest sibling patch), then the nearest newer minor (its newest patch), then the nearest older one."""
    wanted = as_version(prefer)
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
    return min(records, key=lambda s: as_version(s.last_version)) if records else None


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


def framework_dependencies(kb: KnowledgeBase, request: Request, fw: FrameworkCandidate) -> list[Requirement]:
    deps: list[Requirement] = [BuildPythons(fw, "the container" if fw.container else request.wheel_platform)]
    if not fw.gpu:
        return deps
    # PyTorch and JAX bring CUDA and cuDNN in their wheels: the CUDA line decides the driver; there is no cuDNN to
    # choose (the plan names the one the wheels bring).
    deps.append(BuildCuda(fw, request.os))
    if fw.framework is Framework.TENSORFLOW:
        prefer, _ = preferred_cudnn(kb, request, fw)
        deps.append(BuildCudnn(fw, prefer) if fw.cudnn_fixed else CompiledCudnn(fw, prefer))
    # The driver last: resolvelib reports a build's first requirement that cannot be met, and one that no driver
    # can fix (a CUDA or cuDNN that no longer supports the GPU) is the reason to give before a driver minimum.
    return deps + driver_dependencies(kb, request, fw)


def driver_dependencies(kb: KnowledgeBase, request: Request, fw: FrameworkCandidate) -> list[Requirement]:
    """The driver a build's CUDA needs. NVIDIA's minor-version compatibility lets CUDA 11+ programs run on an
    older driver of the same major's floor (Table 2), but not PTX JIT: it is accepted for an installed driver
    only when the build carries machine code for every GPU. NVIDIA's builds state their own floor."""
    if fw.nvidia is not None:
        return [nvidia_driver_requirement(kb, request, fw)]
    toolkit = kb.toolkit(fw.cuda)
    text = planned_driver_minimum(request, fw, toolkit) if toolkit is not None else ""
    if not text:
        return []  # NVIDIA prints no minimum for this OS; the stack says so
    minimum = as_version(text)
    compat_text = minor_compat_floor(toolkit, request.driver_os, all_native(request, fw))
    compat = as_version(compat_text) if compat_text and compat_text != text else None
    return [DriverAtLeast(minimum, f"CUDA {toolkit.version} needs an NVIDIA driver >= {text} on {request.driver_os}"
                          + (f" (or >= {compat_text} through minor-version compatibility)" if compat else ""),
                          toolkit.source, compat)]


def toolkit_driver(toolkit, driver_os: Os) -> str:
    """A toolkit's own driver minimum; where NVIDIA prints none for this OS (Windows, CUDA 13.x: N/A), the
    minor-version-compatibility floor it gives for the major (13.x >= 580)."""
    return toolkit.min_driver(driver_os) or toolkit.compat_driver(driver_os)


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


def compat_floors(requirement) -> tuple:
    """A driver requirement's minor-version compatibility floors: DriverAtLeast's one, NvidiaBuildDriver's
    forward-compatible branches, none for the others."""
    compat = getattr(requirement, "compat", None)
    return compat if isinstance(compat, tuple) else (compat,) if compat is not None else ()


def compute_capability_driver_floor(kb: KnowledgeBase, cc: ComputeCapability, driver_os: Os):
    """The driver of the first CUDA toolkit that targets compute capability `cc`, not its architecture's first:
    sm_86 came with CUDA 11.1, a year after Ampere's sm_80 in 11.0, so an RTX 3090 needs 11.1's 455.23 / 456.38
    (CUDA 11.1 release notes, Table 3; NVIDIA's CUDA Toolkit, Driver and Architecture Matrix). A driver older than
    that predates the GPU. A lower bound: single boards came later (RTX 3060: R460)."""
    support = kb.arch_support_for(cc)
    name = f"compute capability {cc}" + (f" ({support.architecture.capitalize()})" if support else "")

    def compute():
        first = kb.first_toolkit_for(cc)
        if first is None:
            return None
        driver = toolkit_driver(first, driver_os)
        if not driver:
            return None
        return (driver, f"{name} GPUs need a driver that supports them: >= {driver}, the driver of CUDA "
                        f"{first.version}, the first toolkit for compute capability {cc}",
                f"{first.source}; https://docs.nvidia.com/datacenter/tesla/drivers/cuda-toolkit-driver-and-"
                f"architecture-matrix.html (first CUDA toolkit per architecture)")

    return kb.memo(("gpu_driver_floor", cc, driver_os), compute)


def own_driver_conflicts(kb: KnowledgeBase, request: Request) -> list[Requirement]:
    """A GPU whose own machine's driver predates its compute capability: a requirement nothing satisfies."""
    reqs = []
    for gpu in request.gpus:
        if gpu.driver is None:
            continue
        floor = compute_capability_driver_floor(kb, gpu.cc, request.driver_os)
        if floor is not None and gpu.driver < DriverVersion.parse(floor[0]):
            reqs.append(DriverPredatesGpu(f"{floor[1]}; {gpu.label} runs on driver {gpu.driver}", floor[2]))
    return reqs


def driver_floor(kb: KnowledgeBase, request: Request, fw: FrameworkCandidate) -> str | None:
    """The lowest driver a build runs on for this request (as NVIDIA prints it), ignoring minor-version
    compatibility; None for CPU builds or where NVIDIA gives no minimum."""
    if not fw.gpu:
        return None
    toolkit = kb.toolkit(fw.cuda)
    floor = fw.nvidia.driver_stated if fw.nvidia is not None else (
        toolkit.min_driver(request.driver_os) if toolkit else "")
    return raised_minimum(kb, request, floor, "")[0] or None


def wsl_driver_floor(kb: KnowledgeBase, request: Request) -> PlatformMinimum | None:
    """On WSL2, the Windows driver CUDA needs whatever the stack (knowledge: platform_minimum "wsl2")."""
    return kb.platform_minimum("wsl2") if request.os is Os.WSL2 else None


def raised_minimum(kb: KnowledgeBase, request: Request, minimum: str, source: str) -> tuple[str, str, str, bool]:
    """A stack's driver minimum raised to the floors that hold whatever the stack, CUDA on WSL2's and the
    requested GPUs' (gpu_driver_floor): (minimum, its source, why where the GPUs' floor decides or "", whether
    WSL2's floor decides)."""
    by_wsl, gpu_why = False, ""
    wsl = wsl_driver_floor(kb, request)
    if wsl and driver_floor_raises(wsl.driver, minimum):
        minimum, source, by_wsl = wsl.driver, wsl.source, True
    gpu = gpu_driver_floor(kb, request)
    if gpu and driver_floor_raises(gpu[0], minimum):
        minimum, source, gpu_why, by_wsl = gpu[0], gpu[2], gpu[1], False
    return minimum, source, gpu_why, by_wsl


def nvidia_driver_requirement(kb: KnowledgeBase, request: Request, fw: FrameworkCandidate) -> NvidiaBuildDriver:
    build = fw.nvidia
    stated = as_version(build.driver_stated)
    # Containers ship CUDA's forward-compatibility package, which NVIDIA supports on data-center GPUs with the
    # driver branches the release notes list.
    datacenter = build.kind == "container" and bool(request.gpus) and all(
        (g := kb.find_gpu(t.name)) is not None and g.segment == "datacenter" for t in request.gpus if t.name) \
        and all(t.name for t in request.gpus)
    compat = tuple(as_version(c) for c in build.driver_compat) if datacenter else ()
    extra = f"; data-center GPUs: {', '.join(build.driver_compat)} through forward compatibility" if compat else ""
    return NvidiaBuildDriver(stated, compat, f"{fw.label} (release {build.release}) needs driver "
                             f"{build.driver_stated} or later" + extra, build.source)


def as_set(kb: KnowledgeBase, pool: list) -> frozenset:
    """A pool as a set, made once per pool: {id: (the pool, its set)} (holding the pool keeps its id its own)."""
    sets = kb.memo("pool-sets", dict)
    entry = sets.get(id(pool))
    if entry is None or entry[0] is not pool:
        entry = sets[id(pool)] = (pool, frozenset(pool))
    return entry[1]


def root_requirements(kb: KnowledgeBase, request: Request,
                      requested: list[FrameworkCandidate] | None = None) -> list[Requirement]:
    # The provider's pool is already narrowed to the requested versions; this root requirement names the
    # request in conflict explanations and holds the resolver to that pool.
    if requested is None:
        requested = requested_framework_candidates(kb, request)
    vendor = f" ({request.vendor} builds)" if request.vendor else ""
    reqs: list[Requirement] = [RequestedBuild(as_set(kb, requested), f"{request.asked}{vendor} was asked for "
                                                      f"({request.framework.flag})")]
    if request.python:
        reqs.append(PythonAsked(request.python))
    if request.cpu_only:
        return reqs
    tensorflow = request.framework is Framework.TENSORFLOW
    if request.cudnn and tensorflow:
        reqs.append(CudnnAsked(request.cudnn))
    for gpu in request.gpus:
        reqs.append(HasCodeFor(gpu, request.framework))
        reqs.append(CudaSupports(gpu))
        if tensorflow:
            reqs.append(CudnnSupports(gpu))
        support = kb.arch_support_for(gpu.cc)
        if support and support.last_branch and not request.driver:
            branch = int(support.last_branch)
            reqs.append(LastBranch(branch, f"{support.architecture.capitalize()} GPUs are supported by drivers up "
                                           f"to the R{branch} branch", support.source))
    floor = gpu_driver_floor(kb, request)
    if floor is not None:
        reqs.append(DriverAtLeast(as_version(floor[0]), floor[1], floor[2]))
    reqs += own_driver_conflicts(kb, request)
    wsl = wsl_driver_floor(kb, request)
    if wsl:
        reqs.append(DriverAtLeast(as_version(wsl.driver), f"CUDA on WSL2 needs a Windows driver >= {wsl.driver}",
                                  wsl.source))
    if request.driver:
        reqs.append(DriverInstalled(request.driver))
    return reqs
