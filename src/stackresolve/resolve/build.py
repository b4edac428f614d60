"""From the resolver's mapping (one candidate per component) to the typed Stack and its findings.

Every decision a renderer needs is made here, once: the exact CUDA and cuDNN releases, how they are delivered,
the driver floor, the Python range and the one recommended, the pip pins."""

from __future__ import annotations

from dataclasses import replace

from stackresolve.knowledge.base import KnowledgeBase
from stackresolve.knowledge.records import CudaToolkit, CudnnRelease, Pitfall
from stackresolve.knowledge.python_sources import python_sources
from stackresolve.knowledge.rules import (
    BINARY_COMPAT_SOURCE,
    CUDNN_RULE_SOURCE,
    LIFECYCLE_UNLISTED_SOURCE,
    arch_predates,
    branch_lifecycle,
    classify_support,
    cuda_line_fits,
    cudnn_accepts,
    cudnn_rule_text,
    supported_branches,
    toolkit_predates,
    unlisted_gpu_rule,
    worst_support,
)
from stackresolve.model.enums import Delivery, Framework, GpuSupport, Os, Severity, Vendor
from stackresolve.model.finding import Finding
from stackresolve.model.stack import CudaPin, CudnnPin, FrameworkPin, GpuEntry, GpuPin, PythonPin, Stack
from stackresolve.model.versionlist import version_span
from stackresolve.request.build import Request
from stackresolve.resolve.candidates import (
    CudnnCandidate,
    FrameworkCandidate,
    PythonCandidate,
    as_version,
    support_on,
)
from stackresolve.resolve.nvidia import NVIDIA_INDEX, NVIDIA_INDEX_NOTE
from stackresolve.resolve.pool import requested_framework_candidates
from stackresolve.resolve.provider import preferred_cudnn

# Findings that mean a stack runs, but not natively on the requested GPUs.
DEGRADED = frozenset({"ptx-jit", "cuda-predates-gpu", "cudnn-predates-gpu", "arch-unknown"})


def build_stack(kb: KnowledgeBase, request: Request, mapping: dict) -> tuple[Stack, list[Finding]]:
    fw: FrameworkCandidate = mapping["framework"]
    py: PythonCandidate = mapping["python"]
    findings: list[Finding] = [Finding(Severity.INFO, "assumed", a) for a in request.assumptions]
    findings += [Finding(Severity.INFO, "build-note", f"{fw.label}: {note}.", source=fw.source) for note in fw.notes]
    if fw.arch_unverified and request.gpus and fw.arch is not None:
        ccs = ", ".join(f"sm_{c.replace('.', '')}" for c in fw.arch.sass)
        findings.append(Finding(
            Severity.WARNING, "arch-not-verified",
            f"{fw.label}: the GPU architectures compiled into this build were not verified (read neither in "
            f"PyTorch's build scripts at the release nor in the wheel); the plan assumes the list of the earlier "
            f"{fw.variant} builds ({ccs}), so machine code for " + ", ".join(f"compute capability {g.cc}"
                                                                         for g in request.gpus) + " is not certain.",
            fix="After installing, check: python -c \"import torch; print(torch.cuda.get_arch_list())\"",
            source=fw.source))

    # The pins below are made once per build and what they read of the request (a matrix meets the same builds
    # in hundreds of cells): candidates are immutable and equal only to themselves.
    framework = kb.memo(("framework_pin", fw, request.version, request.wheel_platform, request.python),
                        lambda: framework_pin(kb, request, fw))
    python, python_findings = kb.memo(
        ("python_pin", fw, py, request.python, request.wheel_platform, request.os, request.arch),
        lambda: python_pin(request, fw, py))
    findings += python_findings
    tensorflow = fw.framework is Framework.TENSORFLOW
    pins = () if fw.container or not tensorflow else kb.memo(
        ("pitfalls_for", framework.upstream_version, request.os.wheel_os, py.version),
        lambda: tuple(kb.pitfalls_for(framework.upstream_version, request.os.wheel_os.value, py.version)))
    pins += kb.memo(("floor_pins", fw), lambda: floor_pins(fw))
    if fw.framework is Framework.JAX:
        # lazy: start-up (only this path needs resolve.jax)
        from stackresolve.resolve.jax import jax_pins

        pins += jax_pins(kb, fw)
    entries = tuple(GpuEntry(g.name or None, g.cc, g.architecture, support_on(fw, g.capability), g.source)
                    for g in request.gpus)

    if not fw.gpu:
        return Stack(framework, python, None, None, None, cpu_gpu_pin(request, fw), entries, pins), findings

    toolkit = mapping["cuda"].toolkit
    cudnn_c: CudnnCandidate | None = mapping.get("cudnn")
    cuda = kb.memo(("cuda_pin", fw, toolkit), lambda: cuda_pin(fw, toolkit))  # a toolkit is equal only to itself
    cudnn = kb.memo(("cudnn_pin", fw, cudnn_c, request.cudnn, request.os, tuple([g.cc for g in request.gpus])),
                    lambda: cudnn_pin(kb, request, fw, cudnn_c) if cudnn_c is not None else wheel_cudnn_pin(fw))
    # The driver was decided with the resolver's driver candidate (resolve/driver.decide_driver): read, not redone.
    resolved_driver = mapping["driver"]
    driver = resolved_driver.pin
    findings += resolved_driver.findings

    support = worst_support(e.support for e in entries)
    weakest = min(request.gpus, key=lambda g: g.capability) if request.gpus else None
    gpu = GpuPin(weakest.name or None if weakest else None, weakest.cc if weakest else None, support,
                 support_why(fw, support), fw.arch.source if fw.arch else "")
    findings += gpu_findings(request, fw, toolkit, cudnn_c.release if cudnn_c else None)
    findings += unlisted_gpu_findings(kb, request, fw)
    findings += kb.memo(("driver_branch_findings", request.driver, request.driver_os,
                         tuple([g.cc for g in request.gpus])), lambda: driver_branch_findings(kb, request))
    if tensorflow and fw.vendor is Vendor.STOCK and fw.line.and_cuda_blocker and request.os in (Os.LINUX, Os.WSL2):
        findings.append(Finding(Severity.INFO, "and-cuda-unusable",
                                f"tensorflow[and-cuda] {fw.line.version}: {fw.line.and_cuda_blocker}",
                                source=fw.line.source))
    if fw.vendor is Vendor.NVIDIA:
        findings += nvidia_findings(kb, request, fw)
    stack = Stack(framework, python, cuda, cudnn, driver, gpu, entries, pins, fw.arch)
    return stack, findings


# -- components ---------------------------------------------------------------------------------------------
def floor_pins(fw: FrameworkCandidate) -> tuple[Pitfall, ...]:
    """The and-cuda extra's wheels pinned at the floors of its ranges (TensorFlow 2.20+), as pip pins with their
    reason: so the plan installs the CUDA and cuDNN it names."""
    why = (f"{fw.distribution}[{','.join(fw.extras)}] {fw.version} asks for this wheel as a range starting here, the "
           f"release it was built against; without the pin pip takes the newest of the range (a newer CUDA than "
           f"the stack names)")
    return tuple(Pitfall(package=text.split("==")[0], constraint="==" + text.split("==")[1], tf="", os=(),
                         python="", why=why, source=fw.source) for text in fw.wheel_floors)



def cpu_gpu_pin(request: Request, fw: FrameworkCandidate) -> GpuPin:
    """The GPU of a stack without CUDA: an Apple GPU through Metal, or none."""
    name = fw.framework.display
    if request.apple_gpu:
        if fw.metal:
            how = "tensorflow-metal" if fw.framework is Framework.TENSORFLOW else "PyTorch's MPS backend"
            return GpuPin(request.apple_gpu, None, GpuSupport.METAL,
                          f"{how} runs {name} on {request.apple_gpu} through Metal", fw.source)
        return GpuPin(request.apple_gpu, None, GpuSupport.CPU_ONLY,
                      f"{fw.label} has no Metal build for {request.apple_gpu}: it runs on the CPU", fw.source)
    if request.os is Os.MACOS:
        after = " after 1.1" if fw.framework is Framework.TENSORFLOW else ""
        return GpuPin(None, None, GpuSupport.CPU_ONLY, f"{name} has no CUDA builds for macOS{after}", fw.line.source)
    if fw.framework is Framework.JAX and request.os is Os.WINDOWS and not request.cpu_only:
        return GpuPin(None, None, GpuSupport.CPU_ONLY, "JAX has no CUDA builds for native Windows (its GPU "
                      "builds are Linux x86_64 and aarch64: use WSL2)", fw.source)
    return GpuPin(None, None, GpuSupport.CPU_ONLY, "CPU-only stack: no NVIDIA GPU in the request", "request")


def framework_pin(kb: KnowledgeBase, request: Request, fw: FrameworkCandidate) -> FrameworkPin:
    if fw.framework is not Framework.TENSORFLOW or fw.companions or (fw.release is None and fw.nvidia is None):
        return companion_framework_pin(request, fw)
    if fw.nvidia is not None:
        build = fw.nvidia
        if fw.container:
            why = (f"NVIDIA's NGC TensorFlow 1 container {build.release} (TensorFlow {build.tf_base}, "
                   f"CUDA {build.cuda})")
        else:
            why = (f"NVIDIA's TensorFlow {build.tf_base} build of release {build.release}, built with "
                   f"CUDA {build.cuda_line}")
        return FrameworkPin("tensorflow", fw.version, fw.distribution, "1.15", Vendor.NVIDIA, why, fw.source,
                            extras=fw.extras, base_version=build.tf_base,
                            index=None if fw.container else NVIDIA_INDEX, container=fw.container,
                            vendor_release=build.release,
                            index_url=None if fw.container else kb.nvidia_index_url or None,
                            index_option=None if fw.container else "--extra-index-url")
    release = fw.release
    newer = kb.memo(("newer-wheels", release.package, fw.line.version, fw.key), lambda: [
        w for w in kb.wheel_releases(release.package) if w.line == fw.line.version and w.key > fw.key and not w.stub])
    why = f"newest {release.package} release matching '{request.version}' with a {request.wheel_platform} wheel"
    if request.python:
        why += f" for Python {request.python}"
    if newer:
        why += f" (newer {version_span(w.version for w in newer)}: no wheel for this request)"
    return FrameworkPin("tensorflow", fw.version, release.package, fw.line.version, Vendor.STOCK, why, fw.source,
                        extras=fw.extras, bundled_requirements=release.and_cuda if fw.extras else ())


def companion_framework_pin(request: Request, fw: FrameworkCandidate) -> FrameworkPin:
    """PyTorch and JAX builds (and TensorFlow with tensorflow-metal): the release, its variant or extra, the index
    it installs from and the packages installed with it."""
    where = f"PyTorch's index ({fw.index_url})" if fw.index_url and fw.framework is Framework.PYTORCH else \
        f"the find-links page {fw.index_url}" if fw.index_url else "the default package index"
    what = f"{fw.distribution} {fw.version}" + (f", variant {fw.variant}" if fw.variant else "") + \
        (f", extra [{','.join(fw.extras)}]" if fw.extras else "")
    why = f"newest {fw.framework.display} release matching '{request.version}' that runs here: {what}, from {where}"
    if request.python:
        why += f", for Python {request.python}"
    return FrameworkPin(fw.framework.value, fw.version, fw.distribution, fw.line.version, fw.vendor, why, fw.source,
                        extras=fw.extras, variant=fw.variant, index_url=fw.index_url, index_option=fw.index_option,
                        local_version=fw.local_version, companions=fw.companions, macos_min=fw.macos_min)


def python_pin(request: Request, fw: FrameworkCandidate,
               py: PythonCandidate) -> tuple[PythonPin, tuple[Finding, ...]]:
    available = tuple(sorted(fw.pythons, key=as_version))
    allowed = (request.python,) if request.python else available
    if fw.container:
        why = f"the container carries its own Python {py.version}"
    else:
        with_companions = f" with {', '.join(fw.companions)}" if fw.companions else ""
        why = (f"{fw.label}{with_companions} has {request.wheel_platform} wheels for Python {', '.join(available)}"
               + (f"; Python {request.python} was asked for" if request.python else
                  "; the newest of them is recommended"))
    findings = []
    if fw.build and set(fw.build.python_versions) != set(available) and not request.python and not fw.nvidia:
        findings.append(Finding(
            Severity.INFO, "python-table-differs",
            f"TensorFlow's tested-build table lists Python {fw.build.python} for {fw.line.version}; the package "
            f"index has {fw.version} wheels for {', '.join(available)} on {request.wheel_platform}. The index "
            f"decides.", source=f"{fw.build.source}; {fw.source}"))
    sources = () if fw.container else python_sources(py.version, request.os,
                                                      arm64_mac=request.os is Os.MACOS and request.arch.is_arm)
    return PythonPin(available, allowed, py.version, why, fw.source, sources), tuple(findings)


def cuda_pin(fw: FrameworkCandidate, toolkit: CudaToolkit) -> CudaPin:
    build_source = fw.build.source if fw.build else fw.source
    if fw.framework is Framework.PYTORCH:
        how = "as nvidia-* pip wheels it depends on" if fw.delivery is Delivery.PIP_WHEELS else \
            "inside the wheel (or the wheels it depends on from PyTorch's index)"
        return CudaPin(toolkit.version, fw.cuda_release or toolkit.version, fw.delivery,
                       f"torch {fw.version} {fw.variant} brings the CUDA {toolkit.version} runtime {how}", fw.source)
    if fw.framework is Framework.JAX:
        major = toolkit.version.split(".")[0]
        return CudaPin(toolkit.version, f"{major}.x", fw.delivery,
                       f"jax[{','.join(fw.extras)}] {fw.version} installs the newest CUDA {major}.x runtime wheels, "
                       f">= {toolkit.version} (JAX's install guide)", fw.source)
    if fw.delivery is Delivery.CONTAINER:
        return CudaPin(toolkit.version, fw.cuda_release, fw.delivery,
                       f"release {fw.nvidia.release} is built with CUDA {fw.cuda_release} (inside the container)",
                       fw.source)
    if fw.nvidia is not None:
        wheels = " (pip wheels it depends on)" if fw.delivery is Delivery.PIP_WHEELS else ""
        return CudaPin(toolkit.version, fw.cuda_release, fw.delivery,
                       f"release {fw.nvidia.release} is built with CUDA {fw.cuda_release}{wheels}", fw.source)
    if fw.cuda_release:  # an and-cuda extra that pins exact wheels, or ranges the plan pins at their floors
        floor = " (the floor of its range, pinned by the plan)" if fw.wheel_floors else ""
        return CudaPin(toolkit.version, fw.cuda_release, fw.delivery,
                       f"{fw.distribution}[{','.join(fw.extras)}] {fw.version} installs the CUDA {fw.cuda_release} "
                       f"runtime as pip wheels{floor}", fw.source)
    if fw.delivery is Delivery.PIP_WHEELS:
        return CudaPin(toolkit.version, toolkit.newest_release, fw.delivery,
                       f"{fw.distribution}[{','.join(fw.extras)}] installs CUDA runtime wheels within ranges; "
                       f"TensorFlow {fw.line.version} was tested with CUDA {toolkit.version}",
                       f"{build_source}; {fw.source}")
    return CudaPin(toolkit.version, toolkit.newest_release, Delivery.SYSTEM,
                   f"TensorFlow {fw.line.version} {fw.build.os if fw.build else ''} GPU builds were tested with "
                   f"CUDA {toolkit.version}; {toolkit.newest_release} is its newest release", build_source)


def cudnn_pin(kb: KnowledgeBase, request: Request, fw: FrameworkCandidate, chosen: CudnnCandidate) -> CudnnPin:
    prefer, kind = preferred_cudnn(kb, request, fw)
    version = chosen.release.version
    compiled = fw.cudnn_compiled or version
    build_source = fw.build.source if fw.build else fw.source
    rule = f"TensorFlow loads cuDNN {cudnn_rule_text(compiled)} ({CUDNN_RULE_SOURCE})"
    if kind == "fixed":
        what = f"{fw.label} brings cuDNN {fw.cudnn_fixed}"
        why = what + (" as a pip wheel" if fw.delivery is Delivery.PIP_WHEELS else
                      " inside the container" if fw.delivery is Delivery.CONTAINER else "")
        source = fw.source
    elif kind == "request":
        why = f"cuDNN {request.cudnn} was asked for (--cudnn); {version} is its newest release built for CUDA {fw.cuda}"
        source = f"request; {chosen.release.source}; {CUDNN_RULE_SOURCE}"
    elif kind == "artifact":
        artifact = kb.cudnn_artifact(fw.line.version, request.os)
        why = (f"the cuDNN TensorFlow's own release artifacts used for {fw.line.version} "
               f"({artifact.how}: cuDNN {artifact.cudnn})")
        source = artifact.source
    else:
        why = f"TensorFlow {fw.line.version} was built with cuDNN {compiled}"
        source = f"{build_source}; {chosen.release.source}"
    if prefer and kind != "fixed":
        why += _fallback_why(kb, request, fw.cuda, prefer, version, compiled)
    also = also_works(kb, request, compiled, version, fw.cuda) if fw.delivery is Delivery.SYSTEM else ()
    return CudnnPin(version, chosen.build.full_version, chosen.build.cuda, compiled,
                    fw.delivery or Delivery.SYSTEM, why, source, also, rule)


def wheel_cudnn_pin(fw: FrameworkCandidate) -> CudnnPin | None:
    """The cuDNN PyTorch's or JAX's wheels bring (None where it is not recorded)."""
    if not fw.cudnn_compiled:
        return None
    major = fw.cuda.split(".")[0]
    if fw.framework is Framework.JAX:
        low, high = fw.cudnn_range.removeprefix(">=").split(",<")
        return CudnnPin(fw.cudnn_compiled, "", f"{major}.x", fw.cudnn_compiled, fw.delivery,
                        f"jax[{','.join(fw.extras)}] installs the newest nvidia-cudnn-cu{major} wheel >= {low}, "
                        f"< {high}", fw.source, rule=f"JAX needs cuDNN >= {low}, < {high}")
    return CudnnPin(fw.cudnn_fixed, fw.cudnn_full or fw.cudnn_fixed, f"{major}.x", fw.cudnn_fixed, fw.delivery,
                    f"torch {fw.version} {fw.variant} brings cuDNN {fw.cudnn_full or fw.cudnn_fixed}", fw.source)


def _fallback_why(kb: KnowledgeBase, request: Request, cuda: str, prefer: str, chosen: str, compiled: str) -> str:
    """Why the chosen cuDNN is not literally the preferred one ("" when it is)."""
    wanted, got = as_version(prefer), as_version(chosen)
    if got.release[:len(wanted.release)] == wanted.release:
        return "" if got.release == wanted.release else f"; {chosen} is the newest {prefer} patch built for CUDA {cuda}"
    if got.release[:2] == wanted.release[:2]:
        channels = kb.cudnn_channels(cuda, request.os.value)
        lacking = [name for name, versions in channels.items() if prefer not in versions]
        if lacking:
            return (f"; {chosen} instead, the newest {got.major}.{got.minor} patch that every install channel "
                    f"({', '.join(channels)}) carries for CUDA {cuda}: {', '.join(lacking)} has no {prefer}")
    return (f"; no cuDNN {prefer} built for CUDA {cuda} fits this request, so {chosen} (the nearest that TensorFlow "
            f"accepts: {cudnn_rule_text(compiled)})")


def also_works(kb: KnowledgeBase, request: Request, compiled: str, chosen: str, cuda: str) -> tuple[str, ...]:
    """Newer minors of the chosen major that TensorFlow also loads, built for this CUDA and supporting every
    requested GPU: the newest patch of each."""
    ccs = tuple(g.capability for g in request.gpus)
    return kb.memo(("also_works", compiled, chosen, cuda, ccs), lambda: _also_works(kb, ccs, compiled, chosen, cuda))


def _also_works(kb: KnowledgeBase, ccs: tuple, compiled: str, chosen: str, cuda: str) -> tuple[str, ...]:
    newest: dict[tuple[int, int], CudnnRelease] = {}
    for release in _newer_loadable(kb, compiled, chosen, cuda):
        if any(release.min_cc > cc for cc in ccs):
            continue
        minor = release.key.release[:2]
        if minor not in newest or release.key > newest[minor].key:
            newest[minor] = release
    return tuple(newest[m].version for m in sorted(newest))


def _newer_loadable(kb: KnowledgeBase, compiled: str, chosen: str, cuda: str) -> tuple[CudnnRelease, ...]:
    """The cuDNN releases of newer minors of the chosen major that TensorFlow loads and that are built for this
    CUDA, whatever the GPUs (asked once, then narrowed per GPU set)."""
    def compute() -> tuple[CudnnRelease, ...]:
        base = as_version(chosen).release
        return tuple(release for release in kb.cudnn
                     if release.key.release[0] == base[0] and release.key.release[:2] > base[:2]
                     and cudnn_accepts(compiled, release.version)
                     and any(cuda_line_fits(b.cuda, cuda) for b in release.builds))

    return kb.memo(("newer_loadable_cudnn", compiled, chosen, cuda), compute)


# -- findings -----------------------------------------------------------------------------------------------
def support_why(fw: FrameworkCandidate, support: GpuSupport) -> str:
    if fw.nvidia is not None:
        return (f"NVIDIA's builds support compute capability 6.0 and later, up to what CUDA {fw.cuda} targets")
    build = fw.display + (f" {fw.variant}" if fw.variant else "")
    return {
        GpuSupport.NATIVE: f"{build} wheels carry machine code (SASS) for this GPU",
        GpuSupport.PTX_JIT: f"{build} wheels carry only PTX for this GPU: the driver compiles it at first start",
        GpuSupport.UNKNOWN: f"the CUDA architectures compiled into {build} are not in the knowledge base",
        GpuSupport.UNSUPPORTED: f"{build} has no kernels for this GPU",
    }[support]


def gpu_findings(request: Request, fw: FrameworkCandidate, toolkit: CudaToolkit,
                 cudnn: CudnnRelease | None) -> list[Finding]:
    findings = []
    arch = fw.arch
    name = fw.display
    for gpu in request.gpus:
        label = f"{gpu.name or 'GPU'} (compute capability {gpu.cc})"
        level = support_on(fw, gpu.capability)
        if level is GpuSupport.PTX_JIT:
            findings.append(Finding(
                Severity.WARNING, "ptx-jit",
                f"{name} has no machine code for {label}, only PTX "
                f"({', '.join('compute_' + p.replace('.', '') for p in arch.ptx)}): the first start JIT-compiles "
                f"every kernel, which can take many minutes.",
                fix=f"Set CUDA_CACHE_MAXSIZE=4294967296 so the JIT cache survives, or use a {fw.framework.display} "
                    f"release built for this GPU.", source=arch.source))
        elif level is GpuSupport.UNKNOWN:
            findings.append(Finding(
                Severity.WARNING, "arch-unknown",
                f"The CUDA architectures compiled into {name} are not recorded; {label} support is unverified.",
                source=fw.source))
        if toolkit_predates(toolkit, gpu.capability):
            findings.append(Finding(
                Severity.WARNING, "cuda-predates-gpu",
                f"CUDA {toolkit.version} predates {label} (its newest architecture is {toolkit.arch_max}): cuBLAS "
                f"and cuDNN from this toolkit carry no kernels for it and may fail at run time.",
                fix=f"Prefer a {fw.framework.display} release built with a CUDA that knows this GPU.",
                source=toolkit.source))
        elif cudnn is not None and arch_predates(cudnn.max_cc, gpu.capability):
            findings.append(Finding(
                Severity.WARNING, "cudnn-predates-gpu",
                f"cuDNN {cudnn.version} predates {label} (newest supported architecture {cudnn.arch_max}).",
                source=cudnn.source))
    return findings


def unlisted_gpu_findings(kb: KnowledgeBase, request: Request, fw: FrameworkCandidate) -> list[Finding]:
    """A GPU whose compute capability no table lists is planned by the compatibility rules: say so, and which
    rule decided (issue 31)."""
    findings = []
    for gpu in request.gpus:
        if kb.is_listed_cc(gpu.cc):
            continue
        rule = unlisted_gpu_rule(gpu.capability, support_on(fw, gpu.capability), fw.arch)
        findings.append(Finding(
            Severity.WARNING, "gpu-unlisted",
            f"compute capability {gpu.cc} is in no GPU table of the knowledge base (gpus.toml, from NVIDIA's CUDA GPU "
            f"list): planned by rule, {rule}.",
            fix="Check after installing that the framework sees the GPU and runs a kernel on it.",
            source=BINARY_COMPAT_SOURCE))
    return findings


def driver_branch_findings(kb: KnowledgeBase, request: Request) -> tuple[Finding, ...]:
    """Where the given Linux driver's branch stands in NVIDIA's data-center lifecycle table (drivers.toml), on
    the knowledge base's date: past its end of life, or not listed (planned by its number). Windows drivers are
    numbered apart from the table's branches, so only Linux's are judged."""
    if not request.driver or request.driver_os is not Os.LINUX:
        return ()
    branch = request.driver.branch
    state, record = branch_lifecycle(kb.driver_branches, branch, kb.date)
    supported = supported_branches(kb.driver_branches, kb.date)
    names = ", ".join(f"R{b.branch} ({b.designation}, end of life {b.end_of_life})" for b in supported)
    move = f"Move to a supported branch: {names}." if supported else ""
    ends = [s for g in request.gpus if (s := kb.arch_support_for(g.cc)) is not None and s.last_branch]
    last = min(ends, key=lambda s: int(s.last_branch), default=None)
    if last is not None and supported and int(last.last_branch) < min(b.number for b in supported):
        move = (f"{last.architecture.capitalize()} GPUs end with the R{last.last_branch} branch: no supported branch "
                f"runs them, so only a newer GPU leaves this branch.")
    if state == "end-of-life":
        return (Finding(Severity.WARNING, "driver-branch-eol",
                        f"driver {request.driver} is on the R{branch} branch, past its end of life "
                        f"({record.end_of_life}, NVIDIA's data-center driver lifecycle): no more fixes or security "
                        f"updates.", fix=move, source=record.source),)
    if state == "newer" and record is not None:
        return (Finding(Severity.WARNING, "driver-branch-unlisted",
                        f"driver branch R{branch} is not in the knowledge base's lifecycle table: planned by its "
                        f"number, as a branch newer than R{record.branch}, which runs CUDA {record.native_cuda_major} "
                        f"natively; its own minimums are compared by number.", source=record.source),)
    if state == "unlisted-older" and record is not None:
        return (Finding(Severity.INFO, "driver-branch-unlisted",
                        f"driver branch R{branch} is not in NVIDIA's data-center lifecycle table, which lists "
                        f"Long Term Support and Production branches only (newest R{record.branch}): an older branch "
                        f"it does not print is end of life or a short-lived New Feature Branch.", fix=move,
                        source=LIFECYCLE_UNLISTED_SOURCE),)
    return ()


def nvidia_findings(kb: KnowledgeBase, request: Request, fw: FrameworkCandidate) -> list[Finding]:
    build = fw.nvidia
    name = f"nvidia-tensorflow {fw.version}" if not fw.container else fw.container
    stock_problem = stock_shortfall(kb, request)
    reason = stock_problem or ("--vendor nvidia was asked for" if request.vendor is Vendor.NVIDIA else
                               "the stock wheels do not fit this request")
    findings = [Finding(Severity.INFO, "nvidia-build", f"NVIDIA's build {name} is chosen: {reason}",
                        source=build.source)]
    project = kb.nvidia_project
    if project is not None and not project.maintained:
        notice = f"; NVIDIA deprecated the project on {project.deprecated}" if project.deprecated else ""
        findings.append(Finding(
            Severity.WARNING, "nvidia-build-unmaintained",
            f"NVIDIA's TensorFlow 1.15 builds are no longer maintained: release {project.last_release} was the last"
            f"{notice} (no fixes for new GPUs, drivers or security issues).",
            fix="Plan to move the code to TensorFlow 2 (tf.compat.v1 runs most TF1 graphs) or another framework.",
            source=project.source))
    if not fw.container:
        findings.append(Finding(Severity.INFO, "nvidia-index", NVIDIA_INDEX_NOTE.format(url=kb.nvidia_index_url) + ".",
                                fix="pip install -r requirements.txt (its first line names NVIDIA's index); with "
                                    "uv: uv pip install --index-strategy unsafe-best-match -r requirements.txt",
                                source=kb.nvidia_index_source()))
    return findings


def stock_shortfall(kb: KnowledgeBase, request: Request) -> str:
    """Why the stock 1.15 wheels do not run natively on the requested GPUs ("" when they do)."""
    stock = [c for c in requested_framework_candidates(kb, replace(request, vendor=Vendor.STOCK))
             if c.line.version == "1.15"]
    if not stock or not request.gpus:
        return ""
    best = stock[0]
    toolkit = kb.toolkit(best.cuda) if best.cuda else None
    problems = []
    for gpu in request.gpus:
        level = classify_support(best.arch, gpu.capability)
        if level is not GpuSupport.NATIVE:
            problems.append(f"the stock {best.label} wheels carry {'only PTX' if level is GpuSupport.PTX_JIT else 'no code'}"
                            f" for {gpu.label}")
        if toolkit is not None and toolkit_predates(toolkit, gpu.capability):
            problems.append(f"their CUDA {toolkit.version} predates compute capability {gpu.cc}")
    return "; ".join(dict.fromkeys(problems))
