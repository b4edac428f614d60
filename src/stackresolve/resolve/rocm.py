"""PyTorch on AMD GPUs (ROCm) and Intel GPUs (XPU): the torch release and wheel variant that runs on the request's
GPUs, chosen from constraints/amd.toml and intel.toml, as a Resolution like the CUDA resolver's.

No CUDA, cuDNN or NVIDIA driver takes part (PyTorch's ROCm and XPU wheels bundle their runtime or take it from
Intel's), so there is nothing for resolvelib to search: the choice is a walk over releases (newest first) and
their variants (newest ROCm first), a build taken when its wheel carries every GPU's gfx target (officially, or
through AMD's unofficial HSA_OVERRIDE_GFX_VERSION when no release carries it) and has a wheel for the Python.
Pure: no I/O, deterministic."""

from __future__ import annotations

from dataclasses import replace

from packaging.specifiers import SpecifierSet
from packaging.version import Version

from stackresolve.knowledge.accelerators import TorchRocm, TorchXpu
from stackresolve.knowledge.base import KnowledgeBase
from stackresolve.knowledge.python_sources import python_sources
from stackresolve.knowledge.rules import override_into, variant_carries
from stackresolve.model.accelerator import AMD, INTEL
from stackresolve.model.enums import Arch, Framework, GpuSupport, Os, Severity, Vendor
from stackresolve.model.finding import Finding
from stackresolve.model.stack import Alternative, FrameworkPin, GpuPin, PythonPin, Resolution, Stack
from stackresolve.request.build import Request

ROCM_PERMISSIONS_SOURCE = ("https://rocm.docs.amd.com/projects/install-on-linux/en/latest/install/prerequisites.html "
                           "(Configuring permissions for GPU access: the render and video groups)")
ROCM_LINUX_SOURCE = "https://pytorch.org/get-started/locally/ (Compute Platform ROCm: Linux only)"


# -- resolving ---------------------------------------------------------------------------------------------
def resolve_accelerated(kb: KnowledgeBase, request: Request, with_alternatives: bool = True,
                        index_data: str = "") -> Resolution:
    """The Resolution of a request for AMD or Intel GPUs; without a stack, the alternatives on these GPUs (the
    caller adds the CPU build's: resolve/__init__.py)."""
    findings = [Finding(Severity.INFO, "assumed", a) for a in request.assumptions]
    stack, more, problem = (_amd if request.accelerator_vendor == AMD else _intel)(kb, request)
    findings += more
    if stack is not None:
        return Resolution(request, stack, tuple(findings), (), kb.version, index_data)
    findings.append(problem)
    alternatives = _alternatives(kb, request) if with_alternatives else ()
    return Resolution(request, None, tuple(findings), tuple(alternatives), kb.version, index_data)


def accelerated_stack(kb: KnowledgeBase, request: Request) -> Stack | None:
    """The stack alone (matrices, alternatives)."""
    return (_amd if request.accelerator_vendor == AMD else _intel)(kb, request)[0]


def _platform_problem(request: Request) -> Finding | None:
    vendor = request.accelerator_vendor
    if request.framework is not Framework.PYTORCH:
        return Finding(Severity.ERROR, "accelerator-framework",
                       f"{request.framework.display} on {'AMD' if vendor == AMD else 'Intel'} GPUs is not planned: "
                       f"stackresolve plans PyTorch on AMD (ROCm) and Intel (XPU) GPUs",
                       fix="use --torch VERSION, or --cpu for a CPU-only plan")
    if vendor == AMD and (request.os is not Os.LINUX or request.arch is not Arch.X86_64):
        return Finding(Severity.ERROR, "rocm-linux-only",
                       f"PyTorch's ROCm builds are for Linux x86_64, not {request.os.value} {request.arch.value}",
                       fix=("plan with --os linux" if request.os is not Os.LINUX else "plan with --arch x86_64")
                       + " (on Windows, AMD documents its own WSL2 and Windows wheels)",
                       source=ROCM_LINUX_SOURCE)
    if vendor == INTEL and (request.arch is not Arch.X86_64 or request.os not in (Os.LINUX, Os.WINDOWS)):
        return Finding(Severity.ERROR, "xpu-platform",
                       f"PyTorch's XPU builds are for Linux and Windows on x86_64 (the platforms its XPU page "
                       f"documents), not {request.os.value} {request.arch.value}",
                       fix="plan with --arch x86_64" if request.os in (Os.LINUX, Os.WINDOWS) else
                       "plan with --os linux or windows")
    return None


def _releases(kb: KnowledgeBase, request: Request, versions: list[str]) -> list[str]:
    """The versions the request's specifier admits, newest first."""
    return sorted((v for v in versions if request.spec.contains(Version(v), prereleases=True)), key=Version,
                  reverse=True)


def _pythons(kb: KnowledgeBase, version: str, listed: tuple[str, ...], request: Request) -> tuple[str, ...]:
    """The variant's Pythons that the release has wheels for on the platform (when the release is recorded), and
    the asked-for one."""
    release = kb.frameworks.torch_release(version)
    platform = "windows" if request.os is Os.WINDOWS else "linux"
    pythons = tuple(p for p in listed if release is None or not release.pythons.get(platform)
                    or p in release.pythons[platform])
    return tuple(p for p in pythons if request.python is None or p == request.python)


def _amd(kb: KnowledgeBase, request: Request):
    problem = _platform_problem(request)
    if problem is not None:
        return None, [], problem
    ak = kb.accelerators
    gfxs = tuple(dict.fromkeys(t.gfx for t in request.accelerators))
    label = ", ".join(t.label for t in request.accelerators)
    versions = _releases(kb, request, ak.torch_rocm_versions())
    if not versions:
        newest = _nearest_amd(kb, gfxs)
        nearest = f"; nearest that runs on {label}: torch {newest[0]} ({newest[1].name})" if newest else ""
        return None, [], Finding(
            Severity.ERROR, "rocm-no-build",
            f"PyTorch '{request.version}' has no ROCm build stackresolve knows (ROCm builds: torch "
            f"{ak.torch_rocm_versions()[0]} ... {ak.torch_rocm_versions()[-1]}){nearest}",
            fix=f"use --torch {newest[0]}" if newest else "", source="constraints/amd.toml [[torch_rocm]]")
    official, unofficial, python_misses = [], [], []
    for version in versions:
        for variant in ak.torch_rocm_of(version):
            pythons = _pythons(kb, version, variant.python, request)
            if not pythons:
                python_misses.append((version, variant))
                continue
            if all(variant_carries(variant, g) for g in gfxs):
                official.append((version, variant, pythons))
            elif all(variant_carries(variant, g) or override_into(ak, g, variant) for g in gfxs):
                unofficial.append((version, variant, pythons))
    chosen = (official or unofficial or [None])[0]
    if chosen is None:
        return None, [], _amd_problem(kb, request, gfxs, label, versions, python_misses)
    version, variant, pythons = chosen
    return _amd_stack(kb, request, version, variant, pythons, gfxs, unofficial=not official)


def _nearest_amd(kb: KnowledgeBase, gfxs: tuple[str, ...]):
    """The newest (release, variant) whose wheel carries every target (officially first), or None."""
    ak = kb.accelerators
    for allow_override in (False, True):
        for version in reversed(ak.torch_rocm_versions()):
            for variant in ak.torch_rocm_of(version):
                if all(variant_carries(variant, g) or (allow_override and override_into(ak, g, variant))
                       for g in gfxs):
                    return version, variant
    return None


def _amd_problem(kb, request, gfxs, label, versions, python_misses) -> Finding:
    ak = kb.accelerators
    carrying = [(v, x) for v in versions for x in ak.torch_rocm_of(v) if all(g in x.gfx for g in gfxs)]
    if carrying and python_misses:
        version, variant = carrying[0]
        return Finding(Severity.ERROR, "python-unavailable",
                       f"torch {version} {variant.name} has wheels for Python {', '.join(variant.python)}, not "
                       f"{request.python}", fix=f"use --python {variant.python[-1]}", source=variant.source)
    missing = [g for g in gfxs if not any(g in x.gfx for v in versions for x in ak.torch_rocm_of(v))]
    newest = versions[0]
    variants = ak.torch_rocm_of(newest)
    carried = f"; torch {newest} {variants[0].name} carries {', '.join(variants[0].gfx)}" if variants else ""
    nearest = _nearest_amd(kb, gfxs)
    if nearest is not None:
        fix = f"use --torch {nearest[0]} (its {nearest[1].name} wheel carries {', '.join(missing)})"
    else:
        fix = ("no PyTorch ROCm wheel of any release stackresolve knows carries it: plan the CPU build (--cpu), or "
               "build PyTorch from source with PYTORCH_ROCM_ARCH=" + ";".join(missing))
    return Finding(Severity.ERROR, "gfx-unsupported",
                   f"{label}: no PyTorch ROCm wheel of torch '{request.version}' carries {', '.join(missing)} (a "
                   f"wheel without the GPU's target fails with hipErrorNoBinaryForGpu){carried}", fix=fix,
                   source="; ".join(dict.fromkeys(x.source for x in variants)) or "constraints/amd.toml")


def _torch_pin(kb: KnowledgeBase, request: Request, version: str, name: str, index_url: str, why: str,
               source: str) -> FrameworkPin:
    # lazy: start-up (only this path needs resolve.pytorch)
    from stackresolve.resolve.pytorch import TORCH_INDEX_SOURCE, _companions, _torch_index

    release = kb.frameworks.torch_release(version)
    if release is None:  # a release amd.toml lists that pytorch.toml does not: no companions recorded
        option, url, local = ("--index-url", index_url, "")
        companions: tuple[str, ...] = ()
    else:
        option, url, local = _torch_index(release, index_url, name)
        companions = _companions(kb.frameworks, release, "windows" if request.os is Os.WINDOWS else "linux", local)
    return FrameworkPin("pytorch", version, "torch", ".".join(version.split(".")[:2]), Vendor.STOCK, why,
                        f"{source}; {TORCH_INDEX_SOURCE}", variant=name, index_url=url, index_option=option,
                        local_version=local, companions=companions)


def _python_pin(request: Request, label: str, pythons: tuple[str, ...], source: str) -> PythonPin:
    available = tuple(sorted(pythons, key=Version))
    recommended = request.python or available[-1]
    why = (f"{label} has wheels for Python {', '.join(available)}"
           + (f"; Python {request.python} was asked for" if request.python else "; the newest of them is recommended"))
    return PythonPin(available, (request.python,) if request.python else available, recommended, why, source,
                     python_sources(recommended, request.os))


def _amd_stack(kb, request, version, variant: TorchRocm, pythons, gfxs, unofficial: bool):
    what = "officially" if not unofficial else "only through AMD's unofficial HSA_OVERRIDE_GFX_VERSION"
    why = (f"newest PyTorch release matching '{request.version}' whose ROCm wheel carries {', '.join(gfxs)} "
           f"{what}: torch {version}, variant {variant.name} (ROCm {variant.rocm}), from PyTorch's index "
           f"({variant.index_url})")
    framework = _torch_pin(kb, request, version, variant.name, variant.index_url, why, variant.source)
    findings = []
    if variant.arch_basis == "not verified":
        findings.append(Finding(
            Severity.WARNING, "arch-not-verified",
            f"torch {version} {variant.name}: the gfx targets compiled into this wheel were not verified (read "
            f"neither in PyTorch's build scripts at the release nor in the wheel); the plan assumes "
            f"{', '.join(variant.gfx)}",
            fix="After installing, check: python -c \"import torch; print(torch.cuda.get_arch_list())\"",
            source=variant.source))
    elif variant.arch_basis != "measured":
        findings.append(Finding(Severity.INFO, "build-note",
                                f"torch {version} {variant.name}: its gfx targets are taken from the "
                                f"{variant.arch_basis}; the wheel itself was not measured.", source=variant.source))
    overrides = [(g, override_into(kb.accelerators, g, variant)) for g in gfxs if not variant_carries(variant, g)]
    for gfx, override in overrides:
        findings.append(Finding(
            Severity.WARNING, "gfx-override-unofficial",
            f"no PyTorch ROCm wheel carries {gfx}; torch {version} {variant.name} runs on it only through AMD's "
            f"unofficial HSA_OVERRIDE_GFX_VERSION={override.hsa_override}, which loads {override.runs_as}'s code "
            f"({override.status}: AMD does not support it)",
            fix=f"export HSA_OVERRIDE_GFX_VERSION={override.hsa_override} before starting Python",
            source=override.source))
    findings.append(Finding(
        Severity.INFO, "rocm-prerequisites",
        f"torch {version} {variant.name} bundles the ROCm {variant.rocm} user-space libraries; the machine needs the "
        f"amdgpu kernel driver and this user read-write access to /dev/kfd and /dev/dri/renderD* (the render and "
        f"video groups); a container needs --device=/dev/kfd --device=/dev/dri",
        fix="sudo usermod -aG render,video $USER (then log in again)", source=ROCM_PERMISSIONS_SOURCE))
    first = request.accelerators[0]
    support = GpuSupport.UNKNOWN if overrides else GpuSupport.NATIVE
    gpu_why = (f"torch {version} {variant.name} carries {', '.join(g for g in gfxs if variant_carries(variant, g))}"
               if not overrides else
               f"torch {version} {variant.name} carries {overrides[0][1].runs_as}, which "
               f"HSA_OVERRIDE_GFX_VERSION={overrides[0][1].hsa_override} loads on {overrides[0][0]} (unofficial)")
    gpu = GpuPin(first.name or None, None, support, gpu_why, variant.source, vendor=AMD, gfx=first.gfx,
                 unofficial=bool(overrides), compiled_gfx=variant.gfx,
                 hsa_override=overrides[0][1].hsa_override if overrides else "")
    python = _python_pin(request, f"torch {version} {variant.name}", pythons, variant.source)
    return Stack(framework, python, None, None, None, gpu), findings, None


def _intel(kb: KnowledgeBase, request: Request):
    problem = _platform_problem(request)
    if problem is not None:
        return None, [], problem
    ak = kb.accelerators
    target = request.accelerators[0]
    platform = "windows" if request.os is Os.WINDOWS else "linux"
    versions = _releases(kb, request, ak.torch_xpu_versions())
    if not versions:
        known = ak.torch_xpu_versions()
        return None, [], Finding(
            Severity.ERROR, "xpu-no-build",
            f"PyTorch '{request.version}' has no XPU build (PyTorch's XPU builds start at torch {known[0]}; "
            f"stackresolve knows {known[0]} ... {known[-1]})", fix=f"use --torch {known[-1]}",
            source="constraints/intel.toml [[torch_xpu]]")
    reasons = []
    for version in versions:
        build: TorchXpu = ak.torch_xpu_of(version)
        if platform not in build.platforms:
            reasons.append(f"torch {version} xpu has no {request.os.value} build")
            continue
        if target.family not in build.families:
            reasons.append(f"PyTorch documents torch {version} xpu for {', '.join(build.families)}, not "
                           f"{target.family or 'this GPU'}")
            continue
        pythons = _pythons(kb, version, build.python, request)
        if not pythons:
            reasons.append(f"torch {version} xpu has wheels for Python {', '.join(build.python)}, not {request.python}")
            continue
        return _intel_stack(kb, request, version, build, pythons), [
            Finding(Severity.INFO, "xpu-prerequisites",
                    f"torch {version} xpu needs {build.driver}" +
                    ("; Intel's deep-learning runtime is installed apart from pip for this release"
                     if build.runtime == "separate" else "; Intel's runtime comes as pip dependencies of the wheel")
                    + f"; PyTorch lists {', '.join(build.os)} for Linux",
                    fix="python -c \"import torch; print(torch.xpu.is_available())\" after installing",
                    source=build.source)], None
    return None, [], Finding(Severity.ERROR, "xpu-unsupported", f"{target.label}: " + "; ".join(reasons[:2]),
                             source="constraints/intel.toml [[torch_xpu]]")


def _intel_stack(kb, request, version, build: TorchXpu, pythons) -> Stack:
    target = request.accelerators[0]
    why = (f"newest PyTorch release matching '{request.version}' with an XPU build PyTorch documents for "
           f"{target.family}: torch {version}, variant xpu, from PyTorch's index ({build.index_url})")
    framework = _torch_pin(kb, request, version, "xpu", build.index_url, why, build.source)
    gpu = GpuPin(target.name or None, None, GpuSupport.NATIVE,
                 f"PyTorch documents torch {version} xpu for {', '.join(build.families)}", build.source,
                 vendor=INTEL)
    python = _python_pin(request, f"torch {version} xpu", pythons, build.source)
    return Stack(framework, python, None, None, None, gpu)


def _alternatives(kb: KnowledgeBase, request: Request) -> list[Alternative]:
    """The nearest that works on these GPUs: the newest release whose build runs on them (any version)."""
    out = []
    if request.framework is Framework.PYTORCH and _platform_problem(request) is None:
        if request.accelerator_vendor == AMD:
            gfxs = tuple(dict.fromkeys(t.gfx for t in request.accelerators))
            nearest = _nearest_amd(kb, gfxs)
            versions = [nearest[0]] if nearest else []
        else:
            versions = kb.accelerators.torch_xpu_versions()[::-1]
        for version in versions:
            other = replace(request, version=version, spec=SpecifierSet(f"=={version}"), python=None)
            stack = accelerated_stack(kb, other)
            if stack is not None:
                out.append(Alternative(stack, f"torch {version} ({stack.framework.variant}) runs on "
                                              f"{request.accelerators[0].label}", other))
                break
    return out


def cpu_request(request: Request) -> Request:
    """The request for the CPU build, an AMD or Intel request's last alternative."""
    return replace(request, accelerators=(), cpu_only=True, python=None)


# -- what the install formats can express ------------------------------------------------------------------
CONDA_FORGE_PYTORCH = ("https://github.com/conda-forge/pytorch-cpu-feedstock (recipe/meta.yaml: the CPU and CUDA "
                       "builds; no ROCm or XPU variant)")


def format_refusal(stack: Stack, name: str) -> str:
    """Why a format cannot express a stack for AMD or Intel GPUs ("" when it can)."""
    amd = stack.gpu.vendor == AMD
    runtime = f"PyTorch's {stack.framework.variant} build"
    if name == "conda":
        return (f"conda-forge's pytorch has no ROCm or XPU build ({CONDA_FORGE_PYTORCH}): {runtime} installs "
                f"with pip from PyTorch's index.")
    if name == "apt":
        return (f"the apt plan installs NVIDIA's CUDA packages; {runtime} brings its "
                f"{'ROCm' if amd else 'XPU'} libraries in the wheel and needs no apt packages beyond the GPU driver.")
    if name == "powershell":
        return ("PyTorch's ROCm builds are Linux only: no PowerShell plan." if amd else
                "the PowerShell plan sets up NVIDIA's CUDA stack; the XPU build installs with pip (--format pip).")
    if name == "dockerfile" and not amd:
        return "no Dockerfile for XPU stacks yet: Intel's base images are not recorded."
    return ""


# A ROCm stack's Docker image: PyTorch's ROCm wheels carry the ROCm user-space libraries (the build copies them
# into the wheel), so a plain Python image runs them, given the GPU devices at run time; AMD's own images
# (rocm/dev-ubuntu-*, rocm/pytorch) bring a system ROCm and their own Python and PyTorch, which the plan's wheel
# would not use.
ROCM_IMAGE_WHY = ("PyTorch's ROCm wheel brings the ROCm user-space libraries; the image needs only Python, and the "
                  "container the GPU devices: docker run --device=/dev/kfd --device=/dev/dri --group-add video")
ROCM_IMAGE_SOURCE = ("pytorch/builder:manywheel/build_rocm.sh (ROCM_SO_FILES: libamdhip64, librocblas, libMIOpen ... "
                     "copied into the wheel); https://rocm.docs.amd.com/projects/install-on-linux/en/latest/how-to/"
                     "docker.html (Running ROCm Docker containers: --device=/dev/kfd --device=/dev/dri, "
                     "--group-add video)")
