"""The Windows plan: native Windows (TensorFlow <= 2.10 GPU, or CPU) with the CUDA installer, the cuDNN zip and
the Visual C++ runtime the stack needs; or the WSL2 route (Ubuntu in WSL, the Linux pip plan inside it) for WSL2
stacks and for native-Windows GPU requests that TensorFlow no longer serves."""

from __future__ import annotations

from dataclasses import replace

from stackresolve.knowledge.install_facts import CudaInstaller, CudnnZip, MsvcRuntime
from stackresolve.model.enums import Delivery, Framework, Os
from stackresolve.model.record import record
from stackresolve.model.stack import Resolution
from stackresolve.formats import PlanOptions, Refusal, environment_name, import_check_code
from stackresolve.formats import pip_decide as pip_plan

LAST_NATIVE_GPU_LINE = "2.10"
NATIVE_GPU_END_SOURCE = ("tensorflow/docs:site/en/install/pip.md@7c365021 (Windows native, Caution: 'TensorFlow 2.10 "
                         "was the last TensorFlow release that supported GPU on native-Windows')")


@record
class WindowsNativePlan:
    resolution: Resolution
    pip: pip_plan.PipPlan
    msvc: MsvcRuntime | None  # None: not recorded for this framework (TensorFlow's are)
    installer: CudaInstaller | None  # None: not recorded (the script sends the user to NVIDIA's archive)
    cudnn_zip: CudnnZip | None  # the stack's exact cuDNN for Windows, when recorded
    check_code: str
    script: "ScriptName"


@record
class WslPlan:
    resolution: Resolution  # what was asked (native Windows, or WSL2)
    inside: Resolution  # the stack that runs inside WSL2
    pip: pip_plan.PipPlan
    why: str
    check_code: str
    script: "ScriptName"

    @property
    def system_cuda(self) -> bool:
        return self.inside.stack.delivery is Delivery.SYSTEM


@record
class ScriptName:
    """The file the usage line runs: the one -o wrote, or install-<environment>.ps1 for a script printed to
    standard output or written under a name PowerShell will not run (-File takes only .ps1 files)."""

    run: str
    written: str | None = None  # -o's name when the script must be renamed to `run` first


def script_name(stack, script_file: str | None) -> ScriptName:
    default = f"install-{environment_name(stack)}.ps1"
    if not script_file:
        return ScriptName(default)
    if not script_file.isprintable():  # a name the usage comment could not show as it is
        return ScriptName(default, "".join(c if c.isprintable() else "?" for c in script_file))
    if script_file.lower().endswith(".ps1"):
        return ScriptName(script_file)
    return ScriptName(default, script_file)


def wsl_route(resolution: Resolution):
    """What the PowerShell plan sets up inside WSL2, with its .request and .stack (None: a native Windows plan, or
    none): a WSL2 request's own resolution, or, for a native-Windows request with no stack, the nearest WSL2
    alternative."""
    request, stack = resolution.request, resolution.stack
    if stack is None:
        wsl = next((a for a in resolution.alternatives if a.request.os is Os.WSL2), None)
        return wsl if request.os is Os.WINDOWS else None
    return resolution if request.os is Os.WSL2 else None


def decide(resolution: Resolution, kb=None, options: PlanOptions = PlanOptions()):
    """The PowerShell plan for a target the format's rule lets through (stackresolve.formats.registry: native Windows,
    or the WSL2 route), or why there is none (no Visual C++ runtime record)."""
    request, stack = resolution.request, resolution.stack
    tensorflow = request.framework is Framework.TENSORFLOW
    gone = (f"TensorFlow {LAST_NATIVE_GPU_LINE} was the last release with GPU support on native Windows; newer "
            f"releases run their Linux GPU build inside WSL2 on the Windows driver") if tensorflow else (
        f"{request.framework.display} has no GPU build for native Windows; its Linux GPU build runs inside WSL2 on "
        f"the Windows driver")
    if stack is None:  # the format's rule let it through: a native-Windows target WSL2 can serve
        wsl = wsl_route(resolution)
        inside = replace(resolution, request=wsl.request, stack=wsl.stack, findings=(), alternatives=())
        return _wsl(resolution, inside, gone, options)
    if request.os is Os.WSL2:
        native_gpu = request.framework is Framework.PYTORCH  # PyTorch still builds for native Windows
        return _wsl(resolution, resolution, "this stack targets WSL2: " + gone if stack.cuda and not native_gpu else
                    "this stack targets WSL2 (the Linux build inside Windows)", options)
    version = stack.framework.upstream_version
    msvc = next((m for m in kb.msvc_runtimes if m.applies_to(version)), None) if tensorflow else None
    if msvc is None and tensorflow:
        return Refusal(resolution, f"windows.toml has no Visual C++ runtime record for TensorFlow {version}")
    installer = cudnn_zip = None
    if stack.cuda and stack.delivery is Delivery.SYSTEM:
        installers = [i for i in kb.cuda_installers if i.version == stack.cuda.version]
        installer = next((i for i in installers if i.release == stack.cuda.release), installers[0] if installers
                         else None)
        cudnn_zip = next((z for z in kb.cudnn_zips if z.version == stack.cudnn.version
                          and z.fits(stack.cuda.version)), None)
    return WindowsNativePlan(resolution, pip_plan.decide(resolution), msvc, installer, cudnn_zip,
                             import_check_code(stack), script_name(stack, options.script_file))


def _wsl(resolution: Resolution, inside: Resolution, why: str, options: PlanOptions):
    stack = inside.stack
    return WslPlan(resolution, inside, pip_plan.decide(inside), why, import_check_code(stack),
                   script_name(stack, options.script_file))
