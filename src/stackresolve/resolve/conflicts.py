"""When a target cannot be met, or is met only in a degraded way: which facts conflict (both sides, each with its
source), and the nearest requests that resolve to a stack that runs."""

from __future__ import annotations

from dataclasses import replace

from packaging.specifiers import SpecifierSet
from packaging.version import Version
from resolvelib import ResolutionImpossible

from stackresolve.knowledge.base import KnowledgeBase
from stackresolve.knowledge.rules import driver_meets
from stackresolve.model.enums import Framework, GpuSupport, Os, Severity, Vendor
from stackresolve.model.finding import Finding
from stackresolve.model.stack import Alternative, ConflictCause, Stack
from stackresolve.model.values import DriverVersion
from stackresolve.model.versionlist import labels_span, version_span
from stackresolve.request.build import Request, known_releases
from stackresolve.resolve.build import DEGRADED
from stackresolve.resolve.candidates import (
    CudaCandidate,
    CudnnCandidate,
    FrameworkCandidate,
    PythonCandidate,
    as_version,
    cuda_pool,
    cudnn_pool,
)
from stackresolve.resolve.pool import release_lines, requested_framework_candidates
from stackresolve.resolve.driver import driver_floor, driver_text, installed_candidate, newest_supported_driver
from stackresolve.resolve.requirements import (
    CudaSupports,
    CudnnAsked,
    CudnnSupports,
    DriverInstalled,
    DriverUnstated,
    HasCodeFor,
    LastBranch,
    PythonAsked,
    RequestedBuild,
    Requirement,
)
from stackresolve.resolve.solve import UNSOLVABLE, resolve_with_findings, solve


# -- conflicts --------------------------------------------------------------------------------------------
def conflict_causes(request: Request, exc: Exception) -> list:
    """The requirements that really take part in a conflict (resolvelib's causes), leaving out the driver
    requirements the installed driver meets (they are not a side of it), judged as the resolver judges it
    (resolve/driver.installed_candidate: a branch, --driver 580, stands for the release inside it they need), and
    those every driver meets."""
    causes = getattr(exc, "causes", ())
    installed = driver_text(request.driver)
    judged = installed_candidate(installed, [i.requirement for i in causes if i.requirement.name == "driver"]) \
        if installed else None
    return [info for info in causes
            if not (info.requirement.name == "driver" and (isinstance(info.requirement, DriverUnstated) or (
                judged is not None and info.requirement.is_satisfied_by(judged))))]


def conflict_summary(request: Request, exc: Exception) -> tuple[ConflictCause, ...]:
    """The conflict's sides as data: which component, the requirement's words and source, and who required it."""
    return tuple(ConflictCause(info.requirement.name, info.requirement.text, info.requirement.source,
                               "the request" if info.parent is None else describe_candidate(info.parent))
                 for info in conflict_causes(request, exc))


def conflict_findings(kb: KnowledgeBase, request: Request, exc: Exception) -> list[Finding]:
    """Say which facts conflict, each with its source; where the request's side of a conflict is the only one
    resolvelib reports, name the other side from what the requested builds offer. The reason no driver can fix
    comes first (reason_rank): a user told to upgrade the driver of a GPU whose last driver branch cannot take the
    upgrade is sent the wrong way."""
    ranked: list[tuple[tuple, Finding]] = []
    if isinstance(exc, ResolutionImpossible):
        ceiling = newest_supported_driver(kb, request)
        by_component: dict[str, list] = {}
        for info in conflict_causes(request, exc):
            by_component.setdefault(info.requirement.name, []).append(info)
        for component, infos in by_component.items():
            infos = [i for i in infos if not _innocent(kb, i, infos)]
            requested = [i for i in infos if i.parent is None]
            derived = [i for i in infos if i.parent is not None]
            # The request against many builds: one line for the request, one summarising what the builds offer.
            summary = _pool_side(kb, request, component) if requested and len({i.requirement.text for i in derived}) != 1 \
                else None
            sides: list[tuple[tuple, Finding]] = [_ranked(info.requirement, info.requirement.text, ceiling)
                                                  for info in requested]
            by_text: dict[tuple[str, str], tuple[Requirement, list[str]]] = {}
            for info in ([] if summary else derived):
                key = (info.requirement.text, info.requirement.source)
                by_text.setdefault(key, (info.requirement, []))[1].append(describe_candidate(info.parent))
            for (text, _), (requirement, parents) in by_text.items():
                sides.append(_ranked(requirement, f"{text} (required by {labels_span(parents)})", ceiling))
            if summary is not None:
                sides.append(((1, NO_DRIVER), summary))
            # A conflict is as hard to fix as its hardest side; within it, the reason before the request's echo,
            # and the smallest driver upgrade first.
            hardest = min(key[0] for key, _ in sides)
            ranked += [((hardest, *key), finding) for key, finding in sides]
        hardest = [key[0] for key, _ in ranked]
        if 0 in hardest and 3 not in hardest:
            # the GPUs' own needs decide it and no driver upgrade fixes it: which builds lack code for them too
            ranked += [((0, 1, NO_DRIVER), f) for f in _without_code(kb, request, by_component)]
    else:
        ranked.append(((1, 1, NO_DRIVER), Finding(Severity.ERROR, "conflict",
                                                  "the search for a consistent stack gave up (too deep)")))
    ranked += [((1, 1, NO_DRIVER), f) for f in _why_no_framework(kb, request)]
    return [f for _, f in sorted(ranked, key=lambda pair: pair[0])]  # stable: within a rank, in the causes' order


# What the request itself says: one side of a conflict, never its reason.
_ECHOES = (RequestedBuild, PythonAsked, CudnnAsked, DriverInstalled)
# What a GPU needs whatever the driver: a build with code for it, a CUDA and a cuDNN that still support it, a
# driver no newer than its architecture's last branch.
_GPU_BOUND = (HasCodeFor, CudaSupports, CudnnSupports, LastBranch)


def reason_rank(requirement: Requirement, past_last_branch: bool = False) -> int:
    """The order a conflict's facts are told in: 0, what no driver can fix (the GPU's own needs, and a driver
    minimum past the GPUs' last branch); 1, what the builds offer; 2, what the request says; 3, a driver minimum
    an upgrade meets."""
    if isinstance(requirement, _GPU_BOUND) or past_last_branch:
        return 0
    if isinstance(requirement, _ECHOES):
        return 2
    return 3 if requirement.name == "driver" else 1


NO_DRIVER = Version("0")  # the order key of a side that names no driver minimum


def _innocent(kb: KnowledgeBase, info, infos: list) -> bool:
    """A GPU's need of a CUDA or cuDNN (CudaSupports, CudnnSupports) that every release the conflict's other sides
    accept meets: resolvelib lists every requirement on the component, but this one excludes none of them, so it
    is not a reason (TF 2.21 brings cuDNN 9.3.0, --cudnn 9.28.0 asks another, and both support an A100)."""
    if not isinstance(info.requirement, (CudaSupports, CudnnSupports)):
        return False
    pool = cuda_pool(kb, None) if isinstance(info.requirement, CudaSupports) else cudnn_pool(kb, None)
    others = [i.requirement for i in infos if not isinstance(i.requirement, (CudaSupports, CudnnSupports))]
    accepted = [c for c in pool if any(r.is_satisfied_by(c) for r in others)]
    return bool(accepted) and all(info.requirement.is_satisfied_by(c) for c in accepted)


def _ranked(requirement: Requirement, message: str, ceiling) -> tuple[tuple[int, Version], Finding]:
    """A conflict's side as a finding with its order key (its rank, the driver minimum it names); a driver
    minimum past the GPUs' last driver branch says so."""
    source = requirement.source
    minimum = getattr(requirement, "minimum", None) if requirement.name == "driver" else None
    # the lowest driver it accepts: through minor-version compatibility where it allows that (DriverAtLeast)
    compat = getattr(requirement, "compat", None)
    lowest = min(minimum, compat) if isinstance(compat, Version) and minimum is not None else minimum
    past = ceiling is not None and lowest is not None and lowest > as_version(ceiling.last_version)
    if past:
        message += (f"; {ceiling.architecture.capitalize()} GPUs are supported by drivers up to the "
                    f"R{ceiling.last_branch} branch ({ceiling.last_version}), so no driver this GPU takes meets it")
        source = f"{source}; {ceiling.source}"
    return (reason_rank(requirement, past), minimum or NO_DRIVER), Finding(Severity.ERROR, "conflict", message,
                                                                          source=source)


def _without_code(kb: KnowledgeBase, request: Request, by_component: dict) -> list[Finding]:
    """Where the builds left after the GPUs' code test failed for another reason: the requested builds that test
    removed (resolvelib does not name them), as a range."""
    if "framework" in by_component and any(isinstance(i.requirement, HasCodeFor)
                                           for i in by_component["framework"]):
        return []  # the test removed them all: its own conflict line says so
    pool = [c for c in requested_framework_candidates(kb, request) if c.gpu]
    out = []
    for gpu in request.gpus:
        test = HasCodeFor(gpu, request.framework)
        removed = [c.version for c in pool if not test.is_satisfied_by(c)]
        if removed and len(removed) < len(pool):
            out.append(Finding(Severity.ERROR, "conflict",
                               f"no other {request.framework.display} build ({version_span(removed, inner=True)}) has "
                               f"SASS or PTX for {gpu.label}", source=test.source))
    return out


def _pool_side(kb: KnowledgeBase, request: Request, component: str) -> Finding | None:
    """The framework side of a conflict with the request, summarised over every requested build."""
    pool = requested_framework_candidates(kb, request)
    if not pool:
        return None
    if component == "python":
        pythons = sorted({p for c in pool for p in c.pythons}, key=Version)
        span = version_span((c.version for c in pool), inner=True)
        return Finding(Severity.ERROR, "conflict",
                       f"{request.asked} ({span}) has {request.wheel_platform} builds for Python "
                       f"{', '.join(pythons)} only", source=pool[0].source)
    return None


def _why_no_framework(kb: KnowledgeBase, request: Request) -> list[Finding]:
    """When no release at all survives the request's own filters, say which filter removed them."""
    if requested_framework_candidates(kb, request):
        return []
    if request.framework is not Framework.TENSORFLOW:
        return _why_no_build(kb, request)
    spec = request.spec
    matching = kb.memo(("wheels-matching", str(spec)),
                       lambda: [w for w in kb.wheels if spec.contains(w.key, prereleases=True)])
    if not matching:
        return [Finding(Severity.ERROR, "no-such-release", f"no TensorFlow release matches '{request.version}'",
                        source="tensorflow_wheels.toml (the package index)")]
    out = []
    for line_version in sorted({w.line for w in matching}, key=Version):
        line = kb.line(line_version)
        if line is None:
            continue
        if not request.cpu_only and request.os is Os.WINDOWS and not line.gpu_package_windows:
            out.append(Finding(Severity.ERROR, "no-windows-gpu",
                               f"TensorFlow {line_version} has no GPU build for native Windows",
                               fix="Use WSL2 (--os wsl2), or TensorFlow <= 2.10 for native Windows GPU.",
                               source=line.source))
        elif request.vendor is Vendor.NVIDIA and (request.os not in (Os.LINUX, Os.WSL2)
                                                  or request.arch.value != "x86_64"):
            out.append(Finding(Severity.ERROR, "no-nvidia-build",
                               f"NVIDIA's TensorFlow 1.15 builds exist for Linux x86_64 only (WSL2 included), not "
                               f"{request.os} {request.arch}", fix="Use WSL2 (--os wsl2) on Windows.",
                               source="nvidia_tensorflow.toml"))
        elif not request.cpu_only and request.os is Os.MACOS:
            out.append(Finding(Severity.ERROR, "no-macos-gpu", f"TensorFlow {line_version} has no CUDA build for macOS",
                               source=line.source))
        else:
            out.append(Finding(Severity.ERROR, "no-wheel",
                               f"no TensorFlow {line_version} wheel for {request.wheel_platform}"
                               + ("" if request.cpu_only else " with a tested GPU configuration")
                               + (f" from {request.vendor} builds" if request.vendor else ""),
                               source="tensorflow_wheels.toml (the package index); tensorflow.toml"))
    return out[:3]


def _why_no_build(kb: KnowledgeBase, request: Request) -> list[Finding]:
    """PyTorch or JAX: why no build of the requested releases serves this platform."""
    name = request.framework.display
    spec = request.spec
    if not any(spec.contains(v, prereleases=True) for v in known_releases(kb, request.framework)):
        return [Finding(Severity.ERROR, "no-such-release", f"no {name} release matches '{request.version}'",
                        source=f"{request.framework.value}.toml (the package index)")]
    if request.framework is Framework.JAX and not request.cpu_only and request.os is Os.WINDOWS:
        platform = kb.frameworks.jax_platform("windows", "x86_64")
        return [Finding(Severity.ERROR, "no-windows-gpu", "JAX has no CUDA build for native Windows",
                        fix="Use WSL2 (--os wsl2), or --cpu for the CPU build.",
                        source=platform.source if platform else "jax.toml")]
    if not request.cpu_only and request.os is Os.MACOS:
        return [Finding(Severity.ERROR, "no-macos-gpu", f"{name} has no CUDA build for macOS",
                        fix="Plan for the Apple GPU (--gpu 'Apple M2') or the CPU (--cpu).", source="request")]
    if request.framework is Framework.JAX:
        # lazy: start-up (only this path needs resolve.jax)
        from stackresolve.resolve.jax import jaxlib_off_index  # JAX's module: not loaded for TensorFlow

        asked = [v for v in known_releases(kb, Framework.JAX) if spec.contains(v, prereleases=True)]
        deleted = [off for v in asked if (pairing := kb.frameworks.jax_pairing(str(v)))
                   and (off := jaxlib_off_index(kb.frameworks, pairing))]
        if deleted and len(deleted) == len(asked):  # otherwise another reason stands for the rest
            jaxlibs = sorted({v for versions, _ in deleted for v in versions}, key=Version)
            wheels = deleted[-1][1]
            which = f"jaxlib {version_span(str(v) for v in jaxlibs)}"
            return [Finding(Severity.ERROR, "not-on-index",
                            f"JAX {request.version} needs {which}, which the JAX team deleted from the package "
                            f"index",
                            fix="Use a newer JAX; or install the old wheels by hand from JAX's own release page "
                                "(-f), which stackresolve does not plan or check.", source=wheels.source)]
    what = "" if request.cpu_only else " GPU"
    return [Finding(Severity.ERROR, "no-wheel", f"no {name} {request.version}{what} build for "
                    f"{request.wheel_platform} in the knowledge base",
                    source=f"{request.framework.value}.toml (the package index and the vendor's release files)")]


def describe_candidate(candidate) -> str:
    if isinstance(candidate, FrameworkCandidate):
        return candidate.label
    if isinstance(candidate, CudaCandidate):
        return f"CUDA {candidate.toolkit.version}"
    if isinstance(candidate, CudnnCandidate):
        return f"cuDNN {candidate.release.version}"
    if isinstance(candidate, PythonCandidate):
        return f"Python {candidate.version}"
    return "driver"


# -- alternatives -----------------------------------------------------------------------------------------
def _spec(text: str) -> SpecifierSet:
    return SpecifierSet(text)


def find_alternatives(kb: KnowledgeBase, request: Request, limit: int = 4) -> list[Alternative]:
    """The nearest requests that do resolve, most specific relaxation first."""
    tries: list[tuple[Request, str]] = []
    if request.python:
        tries.append((replace(request, python=None), f"Python {request.python} has no fitting build; "
                                                         f"use the Python this stack names"))
    if request.cudnn:
        tries.append((replace(request, cudnn=None), f"cuDNN {request.cudnn} does not fit; use the cuDNN this "
                                                       f"stack names"))
    if request.vendor is not None:
        tries.append((replace(request, vendor=None), f"--vendor {request.vendor} has no build that fits"))
    name = request.framework.display
    if request.os is Os.WINDOWS and not request.cpu_only and request.framework is not Framework.PYTORCH:
        why = "native Windows GPU support ended with TensorFlow 2.10" if request.framework is Framework.TENSORFLOW \
            else "JAX has no native Windows GPU build"
        tries.append((replace(request, os=Os.WSL2), f"{why}; WSL2 runs the Linux GPU build on the Windows driver"))
    spec_versions = [v for v in known_releases(kb, request.framework) if request.spec.contains(v, prereleases=True)]
    if str(request.spec):
        if spec_versions:
            lowest = min(spec_versions)
            older = f"<{lowest.major}.{lowest.minor}"
            tries.append((replace(request, version=older, spec=_spec(older)),
                          f"the newest older {name} that fits this machine"))
        tries += _oldest_newer(kb, request, max(spec_versions))
        tries.append((replace(request, version="latest", spec=SpecifierSet()),
                      f"the newest {name} that fits this machine"))
    if not request.cpu_only:
        tries.append((replace(request, gpus=(), driver=None, cpu_only=True), "a CPU-only stack (no CUDA needed)"))
    out = _first_distinct(kb, tries[:1], limit)
    upgrade = driver_upgrade(kb, request, lambda stack, findings: True, {a.stack.summary for a in out})
    return (out + ([upgrade] if upgrade else []) + _first_distinct(kb, tries[1:], limit,
                                                                    seen={a.stack.summary for a in out}
                                                                    | ({upgrade.stack.summary} if upgrade else set())
                                                                    ))[:limit]


def _oldest_newer(kb: KnowledgeBase, request: Request, newest_asked: Version,
                  most: int = 6) -> list[tuple[Request, str]]:
    """The request for the oldest release above the ones asked for that resolves here (the nearest upgrade,
    where only "latest" would otherwise be offered); at most `most` releases with a build for this platform
    are tried."""
    above = f">{newest_asked}"
    pool = requested_framework_candidates(kb, replace(request, version=above, spec=_spec(above), python=None))
    for version in sorted({c.key for c in pool})[:most]:
        upgraded = replace(request, version=str(version), spec=_spec(f"=={version}"))
        if resolve_with_findings(kb, upgraded)[0] is not None:
            return [(upgraded, f"the oldest newer {request.framework.display} that fits this machine")]
    return []


def driver_upgrade(kb: KnowledgeBase, request: Request, keep, seen: set[str]) -> Alternative | None:
    """The smallest driver upgrade that opens a stack for this request (one `keep` accepts)."""
    if not request.driver or request.cpu_only:
        return None
    current = request.driver
    pool = requested_framework_candidates(kb, replace(request, driver=None))
    # a fix the machine can take: no driver past the GPUs' last branch (Kepler: R470); a branch (--driver 525)
    # already stands for its later releases, so only a later branch is an upgrade
    newest = newest_supported_driver(kb, request)
    ceiling = DriverVersion.parse(newest.last_version) if newest is not None else None
    floors = sorted({v for c in pool if (f := driver_floor(kb, request, c)) and (v := DriverVersion.parse(f)) > current
                     and not driver_meets(current, v) and (ceiling is None or v <= ceiling)})
    for floor in floors:
        upgraded = replace(request, driver=floor)
        stack, findings = resolve_with_findings(kb, upgraded)
        if stack is not None and stack.summary not in seen and keep(stack, findings):
            return Alternative(stack, f"driver {request.driver} is too old for it: upgrade the driver to {floor} "
                                      f"or later for {stack.framework.label}", upgraded)
    return None


def _first_distinct(kb: KnowledgeBase, tries: list[tuple[Request, str]], limit: int,
                    keep=lambda stack, findings: True, seen: set[str] | None = None) -> list[Alternative]:
    out: list[Alternative] = []
    seen = set() if seen is None else seen
    for alt_request, why in tries:
        stack, findings = resolve_with_findings(kb, alt_request)
        if stack is None or stack.summary in seen or not keep(stack, findings):
            continue
        seen.add(stack.summary)
        out.append(Alternative(stack, why, alt_request))
        if len(out) >= limit:
            break
    return out


def degraded(stack: Stack, findings) -> bool:
    """A GPU stack that runs, but not natively on every requested GPU."""
    if stack.cuda is None or not stack.gpus:
        return False
    return stack.gpu.support is not GpuSupport.NATIVE or any(f.code in DEGRADED for f in findings)


def runs_natively(stack: Stack, findings) -> bool:
    return stack.cuda is not None and not degraded(stack, findings)


def native_alternatives(kb: KnowledgeBase, request: Request, stack: Stack, limit: int = 4) -> list[Alternative]:
    """For a degraded stack: the nearest stacks that run natively on the requested GPUs: NVIDIA's build or WSL2
    for the same line where they exist, the first newer line with machine code for the GPUs, the newest line,
    and the nearest older one."""
    line = Version(stack.framework.line)
    ccs = ", ".join(str(cc) for cc in sorted({g.cc for g in request.gpus}))  # by value: 8.6 before 10.0
    tries: list[tuple[Request, str]] = []
    if request.vendor is Vendor.STOCK:
        tries.append((replace(request, vendor=None), "NVIDIA's build of the same line (no longer maintained) runs "
                                                     "natively"))
    if request.os is Os.WINDOWS:
        tries.append((replace(request, os=Os.WSL2), "WSL2 runs the Linux build of the same line on the Windows "
                                                    "driver"))
    name = request.framework.display
    lines = sorted(Version(l.version) for l in release_lines(kb, request.framework))
    newer = [l for l in lines if l > line]
    older = [l for l in reversed(lines) if l < line]
    for candidate in newer:
        tries.append((replace(request, version=f"{candidate.major}.{candidate.minor}",
                              spec=_spec(f"=={candidate.major}.{candidate.minor}.*"), python=None, vendor=None),
                      f"{name} {candidate.major}.{candidate.minor}: the first newer line with machine code for "
                      f"compute capability {ccs}"))
    keep = runs_natively
    out = _first_distinct(kb, [t for t in tries if t[0].version == request.version], limit, keep)
    seen = {a.stack.summary for a in out} | {stack.summary}
    upgrade = driver_upgrade(kb, request, keep, seen)
    if upgrade is not None:
        out.append(upgrade)
        seen.add(upgrade.stack.summary)
    first_newer = _first_distinct(kb, [t for t in tries if t[0].version != request.version], 1, keep, seen)
    out += first_newer
    newest = (replace(request, version="latest", spec=SpecifierSet(), python=None, vendor=None),
              f"the newest {name} with machine code for compute capability {ccs}"
              + (" on native Windows" if request.os is Os.WINDOWS else ""))
    out += _first_distinct(kb, [newest], 1, keep, seen)
    older_tries = [(replace(request, version=f"{o.major}.{o.minor}", spec=_spec(f"=={o.major}.{o.minor}.*"),
                            python=None, vendor=None),
                    f"{name} {o.major}.{o.minor}: the nearest older line with machine code for compute capability "
                    f"{ccs}") for o in older]
    out += _first_distinct(kb, older_tries, 1, keep, seen)
    return out[:limit]


def vendor_alternatives(kb: KnowledgeBase, request: Request, stack: Stack) -> list[Alternative]:
    """When a vendor's build was chosen: its container where a pip build was chosen, and the stock wheel with the
    reason it was not chosen."""
    # lazy: no start-up gain (already loaded by then); kept beside its use
    from stackresolve.resolve.build import stock_shortfall

    seen = {stack.summary}
    out = []
    if stack.framework.container is None:
        out += _first_distinct(kb, [(replace(request, container=True), "NVIDIA's NGC container (Docker)")], 1,
                               seen=seen)
    if request.vendor is None:
        reason = stock_shortfall(kb, request) or "runs natively"
        why = f"the stock tensorflow-gpu wheel: {reason}"
        stock = replace(request, vendor=Vendor.STOCK)
        out += _first_distinct(kb, [(stock, why), (replace(stock, python=None), why)], 1, seen=seen)
    return out


def nvidia_unfit(kb: KnowledgeBase, request: Request, stack: Stack) -> Finding | None:
    """For a degraded stock TensorFlow 1.15 stack: why NVIDIA's builds, which would run natively, do
    not fit this request. Each reason is a question put to the resolver: no build for this OS at all, or one
    that fits with a newer driver or another Python."""
    if stack.framework.line != "1.15" or stack.framework.vendor is not Vendor.STOCK or request.vendor is not None:
        return None
    nvidia = replace(request, vendor=Vendor.NVIDIA)
    try:
        solve(kb, nvidia)
        return None
    except UNSOLVABLE as exc:
        conflicts = conflict_findings(kb, nvidia, exc)
    reasons = [f.message for f in conflicts if f.code != "conflict"]
    if not reasons:
        upgrade = driver_upgrade(kb, nvidia, lambda s, f: True, set())
        if upgrade is not None:
            reasons.append(f"driver {request.driver} is older than {upgrade.request.driver}, the lowest any of them "
                           f"needs ({upgrade.stack.framework.label})")
        elif request.python and resolve_with_findings(kb, replace(nvidia, python=None))[0] is not None:
            pythons = sorted({p for c in requested_framework_candidates(kb, nvidia) for p in c.pythons}, key=Version)
            reasons.append(f"their builds are for Python {', '.join(pythons)}, not {request.python}")
        else:
            reasons += [f.message for f in conflicts if "was asked for" not in f.message][:2]
    return Finding(Severity.WARNING, "nvidia-build-unfit",
                   "NVIDIA's TensorFlow 1.15 builds (which run natively on this GPU) do not fit: "
                   + "; ".join(dict.fromkeys(reasons)), source="nvidia_tensorflow.toml")
