"""From the resolver's mapping (one candidate per component) to the typed Stack and its findings.

Every decision a renderer needs is made here, once: the exact CUDA and cuDNN releases, how they are delivered,
the driver floor, the Python range and the one recommended, the pip pins."""

from __future__ import annotations

from dataclasses import replace

from packaging.version import Version

from stackresolve.knowledge.base import KnowledgeBase
from stackresolve.knowledge.model import CudaToolkit, CudnnRelease, cc_tuple
from stackresolve.knowledge.rules import (
    CUDNN_RULE_SOURCE,
    arch_predates,
    classify_support,
    cuda_line_fits,
    cudnn_accepts,
    cudnn_rule_text,
    minor_compat_floor,
    toolkit_predates,
    worst_support,
)
from stackresolve.model.enums import Delivery, GpuSupport, Os, Severity, Vendor
from stackresolve.model.finding import Finding
from stackresolve.model.stack import CudaPin, CudnnPin, DriverPin, FrameworkPin, GpuEntry, GpuPin, PythonPin, Stack
from stackresolve.request import Request
from stackresolve.resolve.candidates import (
    NVIDIA_INDEX,
    NVIDIA_INDEX_NOTE,
    CudnnCandidate,
    DriverCandidate,
    FrameworkCandidate,
    PythonCandidate,
    requested_framework_candidates,
)
from stackresolve.resolve.provider import all_native, nvidia_driver_requirement, preferred_cudnn

# Findings that mean a stack runs, but not natively on the requested GPUs.
DEGRADED = frozenset({"ptx-jit", "cuda-predates-gpu", "cudnn-predates-gpu", "arch-unknown"})


def build_stack(kb: KnowledgeBase, request: Request, mapping: dict) -> tuple[Stack, list[Finding]]:
    fw: FrameworkCandidate = mapping["tensorflow"]
    py: PythonCandidate = mapping["python"]
    findings: list[Finding] = [Finding(Severity.INFO, "assumed", a) for a in request.assumptions]

    framework = framework_pin(kb, request, fw)
    python, python_findings = python_pin(request, fw, py)
    findings += python_findings
    pins = () if fw.container else tuple(kb.pitfalls_for(framework.upstream_version, request.os.wheel_os.value,
                                                         py.version))
    entries = tuple(GpuEntry(g.name or None, g.cc, g.architecture, classify_support(fw.arch, g.cc), g.source)
                    for g in request.gpus)

    if not fw.gpu:
        why = "TensorFlow has no CUDA builds for macOS after 1.1" if request.os is Os.MACOS else \
            "CPU-only stack: no NVIDIA GPU in the request"
        gpu = GpuPin(None, None, GpuSupport.CPU_ONLY, why, fw.line.source if request.os is Os.MACOS else "request")
        return Stack(framework, python, None, None, None, gpu, entries, pins), findings

    toolkit = mapping["cuda"].toolkit
    cudnn_c: CudnnCandidate = mapping["cudnn"]
    cuda = cuda_pin(fw, toolkit)
    cudnn = cudnn_pin(kb, request, fw, cudnn_c)
    driver, driver_findings = driver_pin(kb, request, fw, toolkit)
    findings += driver_findings

    support = worst_support(e.support for e in entries)
    weakest = min(request.gpus, key=lambda g: cc_tuple(g.cc)) if request.gpus else None
    gpu = GpuPin(weakest.name or None if weakest else None, weakest.cc if weakest else None, support,
                 support_why(fw, support), fw.arch.source if fw.arch else "")
    findings += gpu_findings(request, fw, toolkit, cudnn_c.release)
    if fw.vendor is Vendor.STOCK and fw.line.and_cuda_blocker and request.os in (Os.LINUX, Os.WSL2):
        findings.append(Finding(Severity.INFO, "and-cuda-unusable",
                                f"tensorflow[and-cuda] {fw.line.version}: {fw.line.and_cuda_blocker}",
                                source=fw.line.source))
    if fw.vendor is Vendor.NVIDIA:
        findings += nvidia_findings(kb, request, fw)
    stack = Stack(framework, python, cuda, cudnn, driver, gpu, entries, pins, fw.arch)
    return stack, findings


# -- components ---------------------------------------------------------------------------------------------
def framework_pin(kb: KnowledgeBase, request: Request, fw: FrameworkCandidate) -> FrameworkPin:
    if fw.nvidia is not None:
        build = fw.nvidia
        if fw.container:
            why = (f"NVIDIA's NGC TensorFlow 1 container {build.release} (TensorFlow {build.tf_base}, "
                   f"CUDA {build.cuda})")
        else:
            why = (f"NVIDIA's maintained TensorFlow {build.tf_base} build of release {build.release}, built with "
                   f"CUDA {build.cuda_line}")
        return FrameworkPin("tensorflow", fw.version, fw.distribution, "1.15", Vendor.NVIDIA, why, fw.source,
                            extras=fw.extras, base_version=build.tf_base,
                            index=None if fw.container else NVIDIA_INDEX, container=fw.container,
                            vendor_release=build.release)
    release = fw.release
    newer = [w for w in kb.wheel_releases(release.package)
             if w.line == fw.line.version and w.key > fw.key and not w.stub]
    why = f"newest {release.package} release matching '{request.tf}' with a {request.wheel_platform} wheel"
    if request.python:
        why += f" for Python {request.python}"
    if newer:
        why += f" (newer {', '.join(w.version for w in newer)}: no wheel for this request)"
    return FrameworkPin("tensorflow", fw.version, release.package, fw.line.version, Vendor.STOCK, why, fw.source,
                        extras=fw.extras, bundled_requirements=release.and_cuda if fw.extras else ())


def python_pin(request: Request, fw: FrameworkCandidate, py: PythonCandidate) -> tuple[PythonPin, list[Finding]]:
    available = tuple(sorted(fw.pythons, key=Version))
    allowed = (request.python,) if request.python else available
    if fw.container:
        why = f"the container carries its own Python {py.version}"
    else:
        why = (f"{fw.label} has {request.wheel_platform} wheels for Python {', '.join(available)}"
               + (f"; Python {request.python} was asked for" if request.python else
                  "; the newest of them is recommended"))
    findings = []
    if fw.build and set(fw.build.python_versions) != set(available) and not request.python and not fw.nvidia:
        findings.append(Finding(
            Severity.INFO, "python-table-differs",
            f"TensorFlow's tested-build table lists Python {fw.build.python} for {fw.line.version}; the package "
            f"index has {fw.version} wheels for {', '.join(available)} on {request.wheel_platform}. The index "
            f"decides.", source=f"{fw.build.source}; {fw.source}"))
    return PythonPin(available, allowed, py.version, why, fw.source), findings


def cuda_pin(fw: FrameworkCandidate, toolkit: CudaToolkit) -> CudaPin:
    build_source = fw.build.source if fw.build else fw.source
    if fw.delivery is Delivery.CONTAINER:
        return CudaPin(toolkit.version, fw.cuda_release, fw.delivery,
                       f"release {fw.nvidia.release} is built with CUDA {fw.cuda_release} (inside the container)",
                       fw.source)
    if fw.nvidia is not None:
        wheels = " (pip wheels it depends on)" if fw.delivery is Delivery.PIP_WHEELS else ""
        return CudaPin(toolkit.version, fw.cuda_release, fw.delivery,
                       f"release {fw.nvidia.release} is built with CUDA {fw.cuda_release}{wheels}", fw.source)
    if fw.cuda_release:  # an and-cuda extra that pins exact wheels
        return CudaPin(toolkit.version, fw.cuda_release, fw.delivery,
                       f"{fw.distribution}[{','.join(fw.extras)}] {fw.version} installs the CUDA {fw.cuda_release} "
                       f"runtime as pip wheels", fw.source)
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


def _fallback_why(kb: KnowledgeBase, request: Request, cuda: str, prefer: str, chosen: str, compiled: str) -> str:
    """Why the chosen cuDNN is not literally the preferred one ("" when it is)."""
    wanted, got = Version(prefer), Version(chosen)
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
    base = Version(chosen)
    newest: dict[tuple[int, int], CudnnRelease] = {}
    for release in kb.cudnn:
        key = release.key
        if key.major != base.major or key.release[:2] <= base.release[:2] or not cudnn_accepts(compiled, release.version):
            continue
        if not any(cuda_line_fits(b.cuda, cuda) for b in release.builds):
            continue
        if any(cc_tuple(release.arch_min) > cc_tuple(g.cc) for g in request.gpus):
            continue
        minor = key.release[:2]
        if minor not in newest or key > newest[minor].key:
            newest[minor] = release
    return tuple(newest[m].version for m in sorted(newest))


def driver_pin(kb: KnowledgeBase, request: Request, fw: FrameworkCandidate,
               toolkit: CudaToolkit) -> tuple[DriverPin, list[Finding]]:
    findings: list[Finding] = []
    detected = request.driver
    branches = [int(s.last_branch) for g in request.gpus
                if (s := kb.arch_support_for(g.cc)) is not None and s.last_branch]
    max_branch = min(branches) if branches else None
    if fw.nvidia is not None:
        build = fw.nvidia
        req = nvidia_driver_requirement(kb, request, fw)
        ok = None if detected is None else req.test(DriverCandidate(Version(detected), None))
        pin = DriverPin(build.driver_stated, detected, ok,
                        req.text.replace(f"{fw.label} (release {build.release}) needs",
                                         f"release {build.release} needs"), build.source, max_branch=max_branch)
        if detected is None:
            findings.append(driver_unknown(build.driver_stated, build.source))
        return pin, findings
    # Driver versions are kept as NVIDIA prints them ("535.54.03"); Version() is only for comparing.
    minimum = toolkit.min_driver(request.driver_os)
    source = toolkit.source
    if not minimum:
        findings.append(Finding(Severity.WARNING, "driver-minimum-unknown",
                                f"NVIDIA's table gives no minimum {request.driver_os} driver for CUDA "
                                f"{toolkit.version}", source=toolkit.source))
    wsl = kb.platform_minimum("wsl2") if request.os is Os.WSL2 else None
    if wsl and (not minimum or Version(wsl.driver) > Version(minimum)):
        minimum, source = wsl.driver, wsl.source
    compat = minor_compat_floor(toolkit, request.driver_os, all_native(request, fw))
    ok = None
    if detected and minimum:
        ok = Version(detected) >= Version(minimum) or bool(compat and Version(detected) >= Version(compat))
        if Version(detected) < Version(minimum) and ok:
            findings.append(Finding(
                Severity.WARNING, "driver-minor-compat",
                f"driver {detected} is older than CUDA {toolkit.version}'s own minimum {minimum} but meets NVIDIA's "
                f"minor-version-compatibility minimum {compat}: TensorFlow's kernels run (the wheels carry machine "
                f"code for this GPU); features that need the newer driver, such as PTX JIT, do not.",
                fix=f"Upgrade the driver to >= {minimum} to lift the limits.", source=toolkit.source))
    why = f"CUDA {toolkit.version} needs driver >= {minimum or '(unknown)'} on {request.driver_os}"
    if source is not toolkit.source:
        why += " (CUDA on WSL2 needs at least this Windows driver)"
    if detected is None and minimum:
        findings.append(driver_unknown(minimum, source))
    return DriverPin(minimum or None, detected, ok, why, source, compat or None, max_branch), findings


def driver_unknown(minimum: str, source: str) -> Finding:
    return Finding(Severity.INFO, "driver-unknown", f"No NVIDIA driver was detected or given; this stack needs "
                   f">= {minimum}.", fix="Check with `nvidia-smi`, or pass --driver VERSION.", source=source)


# -- findings -----------------------------------------------------------------------------------------------
def support_why(fw: FrameworkCandidate, support: GpuSupport) -> str:
    if fw.nvidia is not None:
        return (f"NVIDIA's builds support compute capability 6.0 and later, up to what CUDA {fw.cuda} targets")
    return {
        GpuSupport.NATIVE: f"TensorFlow {fw.line.version} wheels carry machine code (SASS) for this GPU",
        GpuSupport.PTX_JIT: f"TensorFlow {fw.line.version} wheels carry only PTX for this GPU: the driver compiles "
                            f"it at first start",
        GpuSupport.UNKNOWN: f"the CUDA architectures compiled into TensorFlow {fw.line.version} are not in the "
                            f"knowledge base",
        GpuSupport.UNSUPPORTED: f"TensorFlow {fw.line.version} has no kernels for this GPU",
    }[support]


def gpu_findings(request: Request, fw: FrameworkCandidate, toolkit: CudaToolkit,
                 cudnn: CudnnRelease) -> list[Finding]:
    findings = []
    arch = fw.arch
    for gpu in request.gpus:
        label = f"{gpu.name or 'GPU'} (compute capability {gpu.cc})"
        level = classify_support(arch, gpu.cc)
        if level is GpuSupport.PTX_JIT:
            findings.append(Finding(
                Severity.WARNING, "ptx-jit",
                f"TensorFlow {fw.line.version} has no machine code for {label}, only PTX "
                f"({', '.join('compute_' + p.replace('.', '') for p in arch.ptx)}): the first start JIT-compiles "
                f"every kernel, which can take many minutes.",
                fix="Set CUDA_CACHE_MAXSIZE=4294967296 so the JIT cache survives, or use a TensorFlow release "
                    "built for this GPU.", source=arch.source))
        elif level is GpuSupport.UNKNOWN:
            findings.append(Finding(
                Severity.WARNING, "arch-unknown",
                f"The CUDA architectures compiled into TensorFlow {fw.line.version} are not recorded; {label} "
                f"support is unverified.", source="tensorflow.toml [[compiled_arch]]"))
        if toolkit_predates(toolkit, gpu.cc):
            findings.append(Finding(
                Severity.WARNING, "cuda-predates-gpu",
                f"CUDA {toolkit.version} predates {label} (its newest architecture is {toolkit.arch_max}): cuBLAS "
                f"and cuDNN from this toolkit carry no kernels for it and may fail at run time.",
                fix="Prefer a TensorFlow release built with a CUDA that knows this GPU.", source=toolkit.source))
        elif arch_predates(cudnn.arch_max, gpu.cc):
            findings.append(Finding(
                Severity.WARNING, "cudnn-predates-gpu",
                f"cuDNN {cudnn.version} predates {label} (newest supported architecture {cudnn.arch_max}).",
                source=cudnn.source))
    return findings


def nvidia_findings(kb: KnowledgeBase, request: Request, fw: FrameworkCandidate) -> list[Finding]:
    build = fw.nvidia
    name = f"nvidia-tensorflow {fw.version}" if not fw.container else fw.container
    stock_problem = stock_shortfall(kb, request)
    reason = stock_problem or ("--vendor nvidia was asked for" if request.vendor is Vendor.NVIDIA else
                               "the stock wheels do not fit this request")
    findings = [Finding(Severity.INFO, "nvidia-build", f"NVIDIA's build {name} is chosen: {reason}",
                        source=build.source)]
    if not fw.container:
        findings.append(Finding(Severity.INFO, "nvidia-index", NVIDIA_INDEX_NOTE + ".",
                                fix="pip install nvidia-pyindex, then pip install -r requirements.txt",
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
        level = classify_support(best.arch, gpu.cc)
        if level is not GpuSupport.NATIVE:
            problems.append(f"the stock {best.label} wheels carry {'only PTX' if level is GpuSupport.PTX_JIT else 'no code'}"
                            f" for {gpu.label}")
        if toolkit is not None and toolkit_predates(toolkit, gpu.cc):
            problems.append(f"their CUDA {toolkit.version} predates compute capability {gpu.cc}")
    return "; ".join(dict.fromkeys(problems))
