"""The NVIDIA driver, decided once.

What the driver must meet comes from two sides: the request's GPUs and OS (root_driver_requirements: a GPU's first
driver, its architecture's last branch, CUDA on WSL2's Windows driver, the installed driver) and the chosen build's
CUDA (driver_dependencies). The provider makes the driver's one candidate from those requirements with
decide_driver, and that candidate carries the plan's driver with it: the minimum, the detected driver, whether it
is ok, why and the source (a DriverPin), and the findings about it. build_stack reads them from the resolved
candidate; nothing else decides them. The floors themselves are rules (knowledge/rules.py); this module looks up
their inputs in the knowledge base and the request."""

from __future__ import annotations

from stackresolve.knowledge import rules
from stackresolve.knowledge.base import KnowledgeBase
from stackresolve.knowledge.records import PlatformMinimum
from stackresolve.knowledge.rules import (
    branch_release_needed,
    driver_is_branch,
    driver_meets,
    minor_compat_floor,
    planned_driver_minimum,
)
from stackresolve.model.enums import Framework, Os, Severity
from stackresolve.model.finding import Finding
from stackresolve.model.stack import DriverPin
from stackresolve.model.values import ComputeCapability, DriverVersion
from stackresolve.request.build import Request
from stackresolve.resolve.cache import resolver_cache
from stackresolve.resolve.candidates import DriverCandidate, FrameworkCandidate, all_native, as_version, driver_candidate
from stackresolve.resolve.requirements import (
    DriverAtLeast,
    DriverInstalled,
    DriverPredatesGpu,
    DriverRequirement,
    DriverUnstated,
    LastBranch,
    NvidiaBuildDriver,
    Requirement,
)


def driver_text(driver) -> str | None:
    """The request's installed driver as NVIDIA prints it, or None: the one place that reads `Request.driver`'s
    type (text today; str() of a typed DriverVersion gives the same text)."""
    return str(driver) if driver else None


# -- the floors' inputs -------------------------------------------------------------------------------------
def compute_capability_driver_floor(kb: KnowledgeBase, cc: ComputeCapability, driver_os: Os):
    """(driver, why, source) of rules.compute_capability_driver_floor for compute capability `cc`, once per
    knowledge base."""
    return kb.memo(("gpu_driver_floor", cc, driver_os), lambda: rules.compute_capability_driver_floor(
        cc, kb.arch_support_for(cc), kb.first_toolkit_for(cc), driver_os))


def gpu_driver_floor(kb: KnowledgeBase, request: Request):
    """(driver, why, source) the requested GPUs need to be supported at all: the floor of the newest GPU's compute
    capability (compute_capability_driver_floor). None when no GPU is named or no toolkit is recorded. GPUs that
    carry their own machine's driver (a fleet) are held to it instead (own_driver_conflicts)."""
    shared = [g for g in request.gpus if g.driver is None]
    if not shared:
        return None
    newest = max(shared, key=lambda g: g.capability)
    return compute_capability_driver_floor(kb, newest.cc, request.driver_os)


def wsl_driver_floor(kb: KnowledgeBase, request: Request) -> PlatformMinimum | None:
    """On WSL2, the Windows driver CUDA needs whatever the stack (knowledge: platform_minimum "wsl2")."""
    return kb.platform_minimum("wsl2") if request.os is Os.WSL2 else None


def newest_supported_driver(kb: KnowledgeBase, request: Request):
    """The requested GPUs' architecture record with the oldest last driver branch (rules.newest_supported_driver),
    or None when none has one. Remembered per set of GPUs: the driver's candidate is made anew each time a driver
    requirement is added."""
    newest = resolver_cache(kb).newest_drivers
    ccs = tuple([g.cc for g in request.gpus])
    found = newest.get(ccs, newest)  # the table itself marks "not asked yet": None is an answer
    if found is newest:
        found = newest[ccs] = rules.newest_supported_driver(kb.arch_support_for(cc) for cc in ccs)
    return found


def raised_minimum(kb: KnowledgeBase, request: Request, minimum: str, source: str) -> tuple[str, str, str, bool]:
    """rules.raised_minimum with this request's floors (WSL2's, the GPUs')."""
    return rules.raised_minimum(minimum, source, wsl_driver_floor(kb, request), gpu_driver_floor(kb, request))


def driver_floor(kb: KnowledgeBase, request: Request, fw: FrameworkCandidate) -> str | None:
    """The lowest driver a build runs on for this request (as NVIDIA prints it), ignoring minor-version
    compatibility; None for CPU builds or where NVIDIA gives no minimum."""
    if not fw.gpu:
        return None
    toolkit = kb.toolkit(fw.cuda)
    floor = fw.nvidia.driver_stated if fw.nvidia is not None else (
        toolkit.min_driver(request.driver_os) if toolkit else "")
    return raised_minimum(kb, request, floor, "")[0] or None


# -- the requirements ---------------------------------------------------------------------------------------
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


def root_driver_requirements(kb: KnowledgeBase, request: Request) -> list[Requirement]:
    """What the request's GPUs and OS ask of the driver, whatever the build (a GPU request only); made once per
    installed driver, OS and GPUs (a matrix asks it of every cell)."""
    installed = driver_text(request.driver)
    table = resolver_cache(kb).root_drivers
    key = (installed, request.os, tuple([(g.cc, g.driver, g.name) for g in request.gpus]))
    found = table.get(key)
    if found is None:
        found = table[key] = tuple(_root_driver_requirements(kb, request, installed))
    return list(found)


def _root_driver_requirements(kb: KnowledgeBase, request: Request, installed: str | None) -> list[Requirement]:
    reqs: list[Requirement] = []
    for gpu in request.gpus:
        support = kb.arch_support_for(gpu.cc)
        if support and support.last_branch and not installed:
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
    if installed:
        reqs.append(DriverInstalled(installed))
    return reqs


def driver_dependencies(kb: KnowledgeBase, request: Request, fw: FrameworkCandidate) -> list[Requirement]:
    """The driver a build's CUDA needs. NVIDIA's minor-version compatibility lets CUDA 11+ programs run on an
    older driver of the same major's floor (Table 2), but not PTX JIT: it is accepted for an installed driver
    only when the build carries machine code for every GPU. NVIDIA's builds state their own floor. Each names the
    build (`build`), whose driver the candidate made from them decides."""
    if fw.nvidia is not None:
        return [nvidia_driver_requirement(kb, request, fw)]
    toolkit = kb.toolkit(fw.cuda)
    text = planned_driver_minimum(toolkit, request.driver_os, fw.framework is Framework.TENSORFLOW,
                                  all_native(request, fw)) if toolkit is not None else ""
    if not text:
        return [DriverUnstated(fw)]  # NVIDIA prints no minimum for this OS; the stack says so
    minimum = as_version(text)
    compat_text = minor_compat_floor(toolkit, request.driver_os, all_native(request, fw))
    compat = as_version(compat_text) if compat_text and compat_text != text else None
    return [DriverAtLeast(minimum, f"CUDA {toolkit.version} needs an NVIDIA driver >= {text} on {request.driver_os}"
                          + (f" (or >= {compat_text} through minor-version compatibility)" if compat else ""),
                          toolkit.source, compat, fw)]


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
                             f"{build.driver_stated} or later" + extra, build.source, fw)


def compat_floors(requirement) -> tuple:
    """A driver requirement's minor-version compatibility floors: DriverAtLeast's one, NvidiaBuildDriver's
    forward-compatible branches, none for the others."""
    compat = getattr(requirement, "compat", None)
    return compat if isinstance(compat, tuple) else (compat,) if compat is not None else ()


# -- the decision -------------------------------------------------------------------------------------------
def installed_candidate(installed: str, reqs) -> DriverCandidate:
    """The candidate of an installed driver. A branch (--driver 525) stands for its releases
    (knowledge.rules.driver_meets): the candidate is the release inside it that the requirements need, never one of
    a later branch; a minor-version compatibility floor inside it counts as well."""
    version = as_version(installed)
    if driver_is_branch(installed):
        inside = [v for r in reqs for v in (r.minimum, *compat_floors(r))
                  if v is not None and v.release[0] == version.major]
        version = max(inside, default=version)
    return driver_candidate(version, None)


def decide_driver(kb: KnowledgeBase, request: Request, reqs: list[DriverRequirement]) -> DriverCandidate:
    """The driver's one candidate under these requirements, and, once a build's requirement is among them, the
    plan's driver for that build (the candidate's `pin` and `findings`).

    Installed: that driver (installed_candidate). Otherwise the highest minimum, unless it is past the newest driver
    every GPU supports (Kepler: R470): then that driver, as if installed; minor-version compatibility may still
    carry the stack."""
    installed = driver_text(request.driver)
    if installed:
        judged = installed_candidate(installed, reqs)
    else:
        minimum = max((r.minimum for r in reqs if r.minimum is not None), default=None)
        newest = newest_supported_driver(kb, request) if minimum is not None else None
        if newest is not None and minimum > as_version(newest.last_version):
            judged = driver_candidate(as_version(newest.last_version), None)
        else:
            judged = driver_candidate(None, minimum)
    build = next((r.build for r in reqs if r.build is not None), None)
    if build is None:
        return judged
    facts = resolver_cache(kb).driver_facts
    key = (build, judged.detected, judged.minimum, installed, request.os,
           tuple([(g.cc, g.driver, g.name) for g in request.gpus]))
    decided = facts.get(key)
    if decided is None:
        pin, findings = driver_fact(kb, request, build, judged)
        decided = facts[key] = DriverCandidate(judged.detected, judged.minimum, pin=pin, findings=findings)
    return decided


def driver_fact(kb: KnowledgeBase, request: Request, fw: FrameworkCandidate,
                judged: DriverCandidate) -> tuple[DriverPin, tuple[Finding, ...]]:
    """The plan's driver for build `fw` and the findings about it; `judged` is the candidate the resolver judges
    the requirements with (NVIDIA's builds are ok exactly when their requirement accepts it)."""
    toolkit = kb.toolkit(fw.cuda)
    findings: list[Finding] = []
    detected = driver_text(request.driver)
    branches = [int(s.last_branch) for g in request.gpus
                if (s := kb.arch_support_for(g.cc)) is not None and s.last_branch]
    max_branch = min(branches) if branches else None
    if fw.nvidia is not None:
        build = fw.nvidia
        req = nvidia_driver_requirement(kb, request, fw)
        ok = None if detected is None else req.is_satisfied_by(judged)
        pin = DriverPin(build.driver_stated, detected, ok,
                        req.text.replace(f"{fw.label} (release {build.release}) needs",
                                         f"release {build.release} needs"), build.source, max_branch=max_branch)
        if detected is None:
            findings.append(driver_unknown(build.driver_stated, build.source))
        return pin, tuple(findings)
    # Driver versions are kept as NVIDIA prints them ("535.54.03"); as_version() is only for comparing.
    native = all_native(request, fw)
    planned = planned_driver_minimum(toolkit, request.driver_os, fw.framework is Framework.TENSORFLOW, native)
    source = toolkit.source
    if not planned:
        findings.append(Finding(Severity.WARNING, "driver-minimum-unknown",
                                f"NVIDIA's table gives no minimum {request.driver_os} driver for CUDA "
                                f"{toolkit.version}", source=toolkit.source))
    minimum, source, gpu_why, by_wsl = raised_minimum(kb, request, planned, source)
    compat = minor_compat_floor(toolkit, request.driver_os, native)
    ok = None
    newest = newest_supported_driver(kb, request) if detected is None else None
    if newest is not None and minimum and compat and not gpu_why and \
            as_version(minimum) > as_version(newest.last_version) >= as_version(compat):
        # No driver named and the toolkit's own minimum is past the GPUs' last branch: the plan is for that
        # branch (the candidate is its newest driver, as if installed), through minor-version compatibility.
        findings.append(Finding(
            Severity.WARNING, "driver-newest-branch",
            f"No driver was given: {newest.architecture.capitalize()} GPUs are supported up to the "
            f"R{newest.last_branch} branch ({newest.last_version}), older than CUDA {toolkit.version}'s own minimum "
            f"{minimum}; this plan is for that branch, through NVIDIA's minor-version compatibility (>= {compat}): "
            f"{fw.framework.display}'s kernels run (the wheels carry machine code for this GPU); features that "
            f"need the newer driver, such as PTX JIT, do not.",
            fix=f"Install the R{newest.last_branch} driver {newest.last_version} (the newest for this GPU).",
            source=f"{newest.source}; {toolkit.source}"))
        own_minimum, minimum = minimum, compat
        why = (f"{newest.architecture.capitalize()} GPUs end with the R{newest.last_branch} driver branch; CUDA "
               f"{toolkit.version} (own minimum {own_minimum}) runs on it through minor-version compatibility "
               f"(>= {compat})")
        return DriverPin(minimum, None, None, why, toolkit.source, compat, max_branch), tuple(findings)
    if detected and minimum:
        meets = driver_meets(detected, minimum)
        ok = meets or bool(compat and driver_meets(detected, compat) and not gpu_why)
        needed = branch_release_needed(detected, minimum if meets else compat) if ok else None
        if needed:
            findings.append(Finding(
                Severity.WARNING, "driver-branch-release",
                f"driver given as the R{detected} branch: this stack needs {needed} or later within it "
                f"(R{detected} from {needed} on).",
                fix=f"Check the installed release with `nvidia-smi --query-gpu=driver_version --format=csv,noheader`; "
                    f"below {needed}, update within the branch.", source=source))
        if not meets and ok:
            findings.append(Finding(
                Severity.WARNING, "driver-minor-compat",
                f"driver {detected} is older than CUDA {toolkit.version}'s own minimum {minimum} but meets NVIDIA's "
                f"minor-version-compatibility minimum {compat}: {fw.framework.display}'s kernels run (the wheels carry "
                f"machine code for this GPU); features that need the newer driver, such as PTX JIT, do not.",
                fix=f"Upgrade the driver to >= {minimum} to lift the limits.", source=toolkit.source))
    own = toolkit.min_driver(request.driver_os)
    if gpu_why:
        why = gpu_why + f" (CUDA {toolkit.version} alone needs >= {planned})"
    elif minimum and own and minimum != own and source is toolkit.source:
        why = (f"{fw.framework.display}'s CUDA {toolkit.version} runtime comes in its wheels: it runs on driver >= "
               f"{minimum} through NVIDIA's minor-version compatibility (the GPU has machine code in the build; "
               f"CUDA {toolkit.version}'s own minimum is {own})")
    else:
        why = f"CUDA {toolkit.version} needs driver >= {minimum or '(unknown)'} on {request.driver_os}"
    if by_wsl:
        why += " (CUDA on WSL2 needs at least this Windows driver)"
    if detected is None and minimum:
        findings.append(driver_unknown(minimum, source))
    below = (not driver_meets(detected, minimum)) if detected and minimum else None
    return DriverPin(minimum or None, detected, ok, why, source, compat or None, max_branch,
                     below_own_minimum=below), tuple(findings)


def driver_unknown(minimum: str, source: str) -> Finding:
    return Finding(Severity.INFO, "driver-unknown", f"No NVIDIA driver was detected or given; this stack needs "
                   f">= {minimum}.", fix="Check with `nvidia-smi`, or pass --driver VERSION.", source=source)
