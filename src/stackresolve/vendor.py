"""NVIDIA's maintained TensorFlow 1.15 builds as targets: the nvidia-tensorflow pip package and the NGC TF1
containers (issue 6). Pure, like the resolver: a Request and the knowledge base in, a Resolution out.

The stock tensorflow-gpu 1.15 wheels are built with CUDA 10.0 and cuDNN 7, which predate Ampere and newer GPUs;
NVIDIA's builds use CUDA 11/12. For a TF 1.15 target on a GPU the stock wheel does not run natively, the plan
offers NVIDIA's pip build first, then the NGC container, and keeps the stock wheel (with its warnings) as the
alternative; `--vendor stock` and `--vendor nvidia` force one.
"""

from __future__ import annotations

from dataclasses import replace

from packaging.version import Version

from stackresolve.knowledge.base import KnowledgeBase
from stackresolve.knowledge.model import NvidiaBuild, cc_tuple
from stackresolve.request import Request
from stackresolve.resolve import Alternative, Finding, Pin, Resolution, Stack

# Every TF1 container release note whose "GPU Requirements" was read says "CUDA compute capability 6.0 and later"
# (constraints/nvidia_tensorflow.toml header); the upper end is what the build's CUDA toolkit targets.
GPU_FLOOR = (6, 0)
INDEX_NOTE = ("nvidia-tensorflow is not on the default package index: NVIDIA hosts it. `pip install nvidia-pyindex` "
              "first adds NVIDIA's index to pip's configuration")


def is_tf1_target(request: Request) -> bool:
    return request.tf_spec.contains(Version("1.15.5"), prereleases=True)


def _unfit(kb: KnowledgeBase, build: NvidiaBuild, request: Request) -> str | None:
    """Why this build cannot serve the request (None when it can)."""
    if request.os not in ("linux", "wsl2") or request.arch not in ("x86_64",):
        return f"NVIDIA's TensorFlow 1.15 builds exist for Linux x86_64 only (WSL2 included), not {request.os}"
    if not request.tf_spec.contains(Version(build.tf_base), prereleases=True):
        return f"it is based on TensorFlow {build.tf_base}, outside '{request.tf}'"
    if build.kind == "pip" and request.python and request.python not in build.pythons:
        return f"its wheels are for Python {', '.join(build.pythons)}"
    toolkit = kb.toolkit(build.cuda_line)
    for gpu in request.gpus:
        if cc_tuple(gpu.cc) < GPU_FLOOR:
            return f"it needs compute capability 6.0 or later ({gpu.name or 'the GPU'} is {gpu.cc})"
        if toolkit and cc_tuple(gpu.cc) > cc_tuple(toolkit.arch_max):
            return f"its CUDA {build.cuda_line} predates compute capability {gpu.cc}"
    if request.driver and not driver_fits(build, request, kb):
        return f"it needs driver {build.driver_stated} or later"
    return None


def driver_fits(build: NvidiaBuild, request: Request, kb: KnowledgeBase) -> bool:
    driver = Version(request.driver)
    if driver >= Version(build.driver_stated):
        return True
    # Containers ship CUDA's forward-compatibility package, which NVIDIA supports on data-center GPUs with the
    # driver branches the release notes list.
    if build.kind != "container" or not request.gpus:
        return False
    datacenter = all((g := kb.find_gpu(t.name)) is not None and g.segment == "datacenter" for t in request.gpus)
    return datacenter and any(driver.release[0] == Version(c).release[0] and driver >= Version(c)
                              for c in build.driver_compat)


def stock_runs_natively(stock: Resolution) -> bool:
    if stock.stack is None:
        return False
    awkward = {"ptx-jit", "cuda-predates-gpu", "cudnn-predates-gpu", "arch-unknown"}
    return stock.stack.gpu.value["support"] == "native" and not any(f.code in awkward for f in stock.findings)


def nvidia_stack(kb: KnowledgeBase, build: NvidiaBuild, request: Request) -> Stack:
    pythons = list(build.pythons) if build.kind == "pip" else [build.pythons[0]] if build.pythons else []
    recommended = request.python if request.python in pythons else (pythons[-1] if pythons else None)
    verified = set(build.verified)
    unverified = "" if "cudnn" in verified else " (not verified in a primary source)"
    if build.kind == "pip":
        framework = Pin({"name": "tensorflow", "version": build.version, "pip_package": "nvidia-tensorflow[horovod]",
                         "line": "1.15", "vendor": "nvidia", "index": "nvidia (through nvidia-pyindex)",
                         "tf_base": build.tf_base, "ngc_release": build.release, "cuda_wheels": build.cuda_wheels},
                        f"NVIDIA's maintained TensorFlow {build.tf_base} build of release {build.release}, built with "
                        f"CUDA {build.cuda_line}", build.source)
    else:
        framework = Pin({"name": "tensorflow", "version": build.tf_base, "pip_package": None, "line": "1.15",
                         "vendor": "nvidia", "index": None, "container": build.tag, "ngc_release": build.release},
                        f"NVIDIA's NGC TensorFlow 1 container {build.release} (TensorFlow {build.tf_base}, CUDA "
                        f"{build.cuda})", build.source)
    python = Pin({"min": pythons[0] if pythons else None, "max": pythons[-1] if pythons else None,
                  "recommended": recommended},
                 f"NVIDIA's {build.release} wheels are for Python {', '.join(pythons)}" if build.kind == "pip" else
                 "the container carries its own Python", build.source)
    cuda = Pin({"version": build.cuda_line, "release": build.cuda},
               f"release {build.release} is built with CUDA {build.cuda}"
               + (" (pip wheels it depends on)" if build.cuda_wheels else ""), build.source)
    cudnn = Pin({"version": build.cudnn, "full_version": build.cudnn, "built_for_cuda": build.cuda_line},
                f"the cuDNN of release {build.release}{unverified}", build.source)
    compat = f"; data-center GPUs: {', '.join(build.driver_compat)} through forward compatibility" \
        if build.kind == "container" and build.driver_compat else ""
    driver = Pin({"min": build.driver_stated, "detected": request.driver,
                  "ok": None if request.driver is None else driver_fits(build, request, kb)},
                 f"release {build.release} needs driver {build.driver_stated} or later{compat}", build.source)
    weakest = min(request.gpus, key=lambda g: cc_tuple(g.cc)) if request.gpus else None
    gpu = Pin({"name": weakest.name or None if weakest else None,
               "compute_capability": weakest.cc if weakest else None, "support": "native"},
              f"NVIDIA's builds support compute capability 6.0 and later, up to what CUDA {build.cuda_line} targets",
              build.source)
    entries = tuple({"name": g.name or None, "compute_capability": g.cc, "architecture": g.architecture,
                     "support": "native", "source": g.source} for g in request.gpus)
    pins = tuple(kb.pitfalls_for(build.tf_base, "linux", recommended)) if build.kind == "pip" and recommended else ()
    return Stack(framework, python, cuda, cudnn, driver, gpu, entries, candidate=None, pip_pins=pins)


def with_nvidia_builds(kb: KnowledgeBase, request: Request, stock: Resolution) -> Resolution:
    """The resolution to show for a TF 1.15 target: NVIDIA's build where it fits and is needed, else the stock one
    with NVIDIA's options (or why they do not fit) added."""
    if request.vendor == "stock" or request.cpu_only or not is_tf1_target(request):
        return stock
    if request.vendor == "any" and (not request.gpus or stock_runs_natively(stock)):
        return stock
    ordered = sorted(kb.nvidia_builds, key=lambda b: (b.kind != "pip", [-int(x) for x in b.release.split(".")]))
    fitting = [b for b in ordered if _unfit(kb, b, request) is None]
    why_not = {b.kind: _unfit(kb, b, request) for b in reversed(ordered)}  # the newest build's reason per kind
    reason = _stock_problem(stock)
    if not fitting:
        finding = Finding("warning" if stock.stack else "error", "nvidia-build-unfit",
                          "NVIDIA's TensorFlow 1.15 builds do not fit: pip: " + (why_not.get("pip") or "none") +
                          "; container: " + (why_not.get("container") or "none"),
                          source="nvidia_tensorflow.toml")
        return replace(stock, findings=stock.findings + (finding,),
                       alternatives=tuple(_ways_to_nvidia(kb, request, ordered)) + stock.alternatives)
    chosen = fitting[0]
    findings = [Finding("info", "assumed", a) for a in request.assumptions]
    findings.append(Finding("info", "nvidia-build",
                            f"NVIDIA's build {'nvidia-tensorflow ' + chosen.version if chosen.kind == 'pip' else chosen.tag}"
                            f" is chosen: {reason}" if reason else "--vendor nvidia was asked for",
                            source=chosen.source))
    if chosen.kind == "pip":
        findings.append(Finding("info", "nvidia-index", INDEX_NOTE + ".",
                                fix="pip install nvidia-pyindex, then pip install -r requirements.txt",
                                source=kb.nvidia_index_source()))
    alternatives = [Alternative(nvidia_stack(kb, b, request), f"NVIDIA's NGC container {b.release} (Docker)", request)
                    for b in fitting if b.kind == "container" and chosen.kind == "pip"][:1]
    if stock.stack is not None:
        alternatives.append(Alternative(stock.stack, f"the stock tensorflow-gpu wheel: {reason or 'runs natively'}",
                                        replace(request, vendor="stock")))
    else:
        alternatives += stock.alternatives  # the nearest stock stacks (another Python, CPU only, ...)
    return Resolution(request, nvidia_stack(kb, chosen, request), tuple(findings), tuple(alternatives),
                      stock.kb_version)


def _ways_to_nvidia(kb: KnowledgeBase, request: Request, ordered: list[NvidiaBuild]) -> list[Alternative]:
    """When no NVIDIA build fits as asked: the nearest request that one fits (WSL2 instead of native Windows,
    the smallest driver upgrade)."""
    out = []
    if request.os == "windows":
        wsl = replace(request, os="wsl2")
        build = next((b for b in ordered if _unfit(kb, b, wsl) is None), None)
        if build is not None:
            out.append(Alternative(nvidia_stack(kb, build, wsl), "WSL2 runs NVIDIA's Linux build of TensorFlow 1.15 "
                                   "on the Windows driver (there is no native Windows build)", wsl))
    if request.driver:
        any_driver = replace(request, driver=None)
        candidates = [b for b in ordered if _unfit(kb, b, any_driver) is None]
        if candidates:
            lowest = min(candidates, key=lambda b: (Version(b.driver_stated), b.kind != "pip"))
            newest_at_lowest = next(b for b in candidates if Version(b.driver_stated) == Version(lowest.driver_stated)
                                    and b.kind == lowest.kind)
            out.append(Alternative(nvidia_stack(kb, newest_at_lowest, request),
                                   f"upgrade the driver to {newest_at_lowest.driver_stated} or later for NVIDIA's "
                                   f"build of release {newest_at_lowest.release}", any_driver))
    return out


def _stock_problem(stock: Resolution) -> str:
    if stock.stack is None:
        return "no stock TensorFlow 1.15 stack fits this machine"
    problems = [f.message for f in stock.findings if f.code in ("ptx-jit", "cuda-predates-gpu", "cudnn-predates-gpu")]
    return problems[-1] if problems else ""
