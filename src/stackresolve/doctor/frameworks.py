"""Doctor's checks of an installed PyTorch or JAX: the build's GPU code against the machine's GPUs, its bundled CUDA
against the driver, a CPU-only build on a GPU machine. The facts are the knowledge base's (pytorch.toml variants
with their compiled architectures, jax.toml plugins and routes); the rules are the resolver's: whether the installed
build fits the driver is asked of the resolver with the framework pool narrowed to that build (installed.py), and
every fix is the plan the resolver makes for this machine."""

from __future__ import annotations

import re
import shlex
from dataclasses import dataclass, replace
from typing import Callable

from packaging.version import InvalidVersion, Version

from stackresolve.doctor.installed import resolve_installed
from stackresolve.doctor.machine import gpu_cc, gpu_label, os_of, unknown_cc_finding
from stackresolve.request.parse import override_problem, read_python, read_version
from stackresolve.knowledge.base import KnowledgeBase
from stackresolve.knowledge.records import CompiledArch
from stackresolve.knowledge.rules import classify_support
from stackresolve.model.enums import Framework, GpuSupport, Os, Severity
from stackresolve.model.finding import Finding
from stackresolve.model.stack import Resolution
from stackresolve.model.values import ComputeCapability, major_minor
from stackresolve.request.build import Request, RequestInput, build_request, machine_arch

E, W, I = Severity.ERROR, Severity.WARNING, Severity.INFO
PLAN_FORMATS = "pip|apt|conda|powershell"
# What the frameworks print (the texts explain's errors.toml recognises, from the frameworks' sources)
TORCH_NO_KERNEL = "CUDA error: no kernel image is available for execution on the device"
TORCH_NO_CUDA = "AssertionError: Torch not compiled with CUDA enabled"
JAX_NO_CUDA = ("An NVIDIA GPU may be present on this machine, but a CUDA-enabled jaxlib is not installed. "
               "Falling back to cpu.")


def installed_frameworks(machine) -> list:
    """The installed PyTorch and JAX (detect's FrameworkInfo records), PyTorch first."""
    return [f for name in (Framework.PYTORCH, Framework.JAX) for f in machine.frameworks if f.name == name and f.version]


def public_version(text: str | None) -> str | None:
    """"2.5.1+cu124" -> "2.5.1"; None when it is no version."""
    try:
        return Version(text).public if text else None
    except InvalidVersion:
        return None


def sm_name(cc: str) -> str:
    return ComputeCapability.parse(cc).sm


def _local(text: str | None) -> str:
    return text.split("+", 1)[1] if text and "+" in text else ""


@dataclass(frozen=True)
class InstalledBuild:
    """What the knowledge base records for the installed build, and how to find it among the resolver's
    candidates."""

    what: str  # "torch 2.5.1 cu124", "jax-cuda12-plugin 0.4.30"
    arch: CompiledArch | None
    arch_source: str
    keep: Callable[[object], bool]
    cc_min: str = ""  # JAX: the lowest compute capability its install guide supports
    cc_min_source: str = ""


@dataclass(frozen=True)
class FrameworkCheck:
    """One installed PyTorch or JAX as doctor saw it, with the resolver's plan: the fix where something is wrong,
    else the plan for the installed release on this machine."""

    framework: Framework
    package: str
    version: str  # as its dist-info says ("2.5.1", "2.13.0+cpu")
    label: str  # "torch 2.5.1+cu124"
    variant: str | None
    cuda: str | None
    gpu_build: bool | None
    build: InstalledBuild | None = None
    driver_min: str | None = None  # the resolver's driver floor for the installed build on this machine
    resolution: Resolution | None = None
    plan_origin: str = ""  # "fix" | "installed"

    @property
    def needs(self) -> str:
        """One line for the report's head: "torch 2.5.1+cu124 needs: CUDA 12.4 (in its wheels), driver >= ..."."""
        if not self.gpu_build:
            kind = "a CPU-only build" if self.variant in (None, "cpu") else f"not a CUDA build ({self.variant})"
            return f"{self.label}: {kind}"
        cuda = self.cuda if self.cuda and "." in self.cuda else f"{self.cuda}.x"
        return f"{self.label} needs: CUDA {cuda} (in its wheels)" + (
            f", driver >= {self.driver_min}" if self.driver_min else "")

    @property
    def plan_command(self) -> str:
        stack = self.resolution.stack if self.resolution else None
        version = stack.framework.version if stack else self.version
        return f"stackresolve plan {self.framework.flag} {version} --format {PLAN_FORMATS}"

    def to_json_dict(self) -> dict:
        arch = self.build.arch if self.build else None
        stack = self.resolution.stack if self.resolution else None
        plan = None
        if stack is not None:
            # lazy: start-up (only this path needs formats.script, formats.pip_decide)
            from stackresolve.formats.script import requirement_lines
            from stackresolve.formats.pip_decide import decide

            pip = decide(self.resolution)
            plan = {"origin": self.plan_origin, "summary": stack.summary, "variant": stack.framework.variant,
                    "python": stack.python.recommended, "index_args": list(pip.index_args),
                    "requirements": list(requirement_lines(pip)), "command": self.plan_command}
        return {"name": self.framework.value, "package": self.package, "version": self.version,
                "label": self.label, "variant": self.variant, "cuda": self.cuda, "gpu_build": self.gpu_build,
                "compiled_arch": None if arch is None else {"sass": list(arch.sass), "ptx": list(arch.ptx),
                                                            "source": self.build.arch_source},
                "driver_min": self.driver_min, "plan": plan}


# -- the installed build in the knowledge base ------------------------------------------------------------------
def torch_build(kb: KnowledgeBase, inst, version: str, platform: str) -> InstalledBuild | None:
    """The pytorch.toml variant record of the installed torch: its release and variant (the local version, else
    derived from torch/version.py's cuda); the default index's record where the wheel came from there (no local
    version in its dist-info)."""
    variant = inst.variant or (f"cu{inst.cuda.replace('.', '')}" if inst.cuda else None)
    if not variant or not variant.startswith("cu"):
        return None
    records = [r for r in kb.frameworks.torch_variants_of(version, platform) if r.name == variant]
    if not records:
        return None
    release = kb.frameworks.torch_release(version)
    from_default = not _local(inst.version) and release is not None and \
        release.default_variant.get(platform) == variant
    record = next((r for r in records if r.default_index == from_default), records[0])
    arch = CompiledArch(line=".".join(version.split(".")[:2]), sass=record.sass, ptx=record.ptx,
                        source=record.source, note=record.arch_basis) if record.sass or record.ptx else None
    where = "the default index" if record.default_index else "PyTorch's index"
    source = f"pytorch.toml [[variant]] {record.name} ({where}): {record.source.split(';')[0]}"
    return InstalledBuild(f"torch {version} {variant}", arch, source,
                          keep=lambda c, v=variant: c.variant == v)


def jax_build(kb: KnowledgeBase, inst, version: str) -> InstalledBuild | None:
    """The jax.toml records of the installed JAX's CUDA code: the plugin's compiled architectures (or a GPU
    jaxlib's) and the release's cc_min."""
    fk = kb.frameworks
    if not inst.cuda:
        return None
    plugin = next((c for c in inst.companions if re.fullmatch(r"jax-cuda\d+-plugin", c.name)), None)
    jaxlib = next((c for c in inst.companions if c.name == "jaxlib"), None)
    if plugin is not None:
        package, package_version = plugin.name, public_version(plugin.version)
    else:
        package = "jaxlib"
        package_version = public_version(jaxlib.version if jaxlib else inst.version)
    compiled = None
    if package_version:
        compiled = fk.jax_compiled_of(package, package_version) or \
            fk.jax_compiled_of(package.replace("-plugin", "-pjrt"), package_version)
    route = fk.jax_route(version)
    arch = CompiledArch(line=".".join(version.split(".")[:2]), sass=compiled.sass, ptx=compiled.ptx,
                        source=compiled.source) if compiled else None
    source = f"jax.toml [[compiled_arch]] {compiled.package}: {compiled.source.split(';')[0]}" if compiled else \
        "jax.toml [[compiled_arch]]"
    # lazy: no start-up gain (already loaded by then); kept beside its use
    from stackresolve.knowledge.rules import cuda_line_fits

    every_minor = f"{inst.cuda.split('.')[0]}.x"  # jax's CUDA plugins are built per CUDA major
    return InstalledBuild(f"{package} {package_version}", arch, source,
                          keep=lambda c: c.gpu and bool(c.cuda) and cuda_line_fits(every_minor, c.cuda),
                          cc_min=route.cc_min if route else "",
                          cc_min_source=route.source if route else "")


# -- the resolver's plans ---------------------------------------------------------------------------------------
class Planner:
    """The resolver's requests for one installed framework on this machine."""

    def __init__(self, kb: KnowledgeBase, machine, framework: Framework):
        self.kb, self.machine, self.framework = kb, machine, framework
        self.python = major_minor(machine.python.version) if machine.python else None
        self.os = os_of(machine)
        self.arch = machine_arch(machine)

    def request(self, version: str, *, python: str | None = None, machine=None, cpu: bool = False) -> Request | None:
        """The request for a release of this framework on this machine (on `machine` where given); None where the
        version names no release the knowledge base knows, or an override of the machine's facts could not be
        read (detect's finding says which)."""
        machine = self.machine if machine is None else machine
        spec, _ = read_version(self.kb, self.framework, version)
        if spec is None or override_problem(machine):
            return None
        given = RequestInput(self.framework, version, spec, os=self.os, arch=self.arch, python=read_python(python),
                             cpu=cpu)
        return build_request(self.kb, given, machine)

    def fix(self, version: str | None) -> Resolution | None:
        """The plan that fixes the installed framework, the least change first: in this Python where one fits,
        else another; the installed release where one of its builds runs on this GPU, else the newest release
        that does; with this driver where one fits, else with a newer driver. Where nothing runs on this
        machine's GPU: the resolver's answer with its nearest stacks."""
        # lazy: no start-up gain (already loaded by then); kept beside its use
        from stackresolve.resolve import resolve

        machines = [self.machine]
        if self.machine.driver is not None and self.machine.driver.version:
            machines.append(replace(self.machine, driver=None))
        versions = [v for v in (version, "latest") if v]
        for python in dict.fromkeys((self.python, None)):
            for v in versions:
                for machine in machines:
                    request = self.request(v, python=python, machine=machine)
                    if request is None:
                        continue
                    resolution = resolve(self.kb, request, with_alternatives=False)
                    if fits(resolution):
                        return resolution
        request = self.request(versions[0], python=self.python)
        return resolve(self.kb, request) if request is not None else None

    def installed(self, version: str) -> Resolution | None:
        """The plan for the installed release on this machine (what `plan --torch X` says here)."""
        # lazy: no start-up gain (already loaded by then); kept beside its use
        from stackresolve.resolve import resolve

        for python in dict.fromkeys((self.python, None)):
            request = self.request(version, python=python)
            if request is None:
                return None
            resolution = resolve(self.kb, request, with_alternatives=False)
            if resolution.stack is not None:
                return resolution
        return None


def fits(resolution: Resolution) -> bool:
    """A stack, and one whose driver pin does not say the installed driver is too old (the pin's own verdict: the
    resolver can return a stack whose pin says so where NVIDIA prints no minimum for the OS)."""
    stack = resolution.stack
    return stack is not None and not (stack.driver is not None and stack.driver.ok is False)


def _pip_command(kb: KnowledgeBase, resolution: Resolution, check_version: str, package: str,
                 installed_companions: tuple) -> str:
    """`pip install` of the plan's lines with its index option; first the uninstall pip needs: an installed
    torch 2.8.0 satisfies `torch==2.8.0` whatever index pip is given, and a JAX CUDA plugin stays loaded by a
    CPU-only jax."""
    # lazy: start-up (only this path needs formats.script, formats.pip_decide)
    from stackresolve.formats.script import requirement_lines
    from stackresolve.formats.pip_decide import decide

    stack = resolution.stack
    plan = decide(resolution, kb)
    command = "pip install " + " ".join(shlex.quote(r) for r in requirement_lines(plan))
    if plan.index_args:
        command += " " + " ".join(plan.index_args)
    fw = stack.framework
    remove = []
    if fw.framework is Framework.PYTORCH and public_version(fw.version) == check_version:
        remove = [package] + [c.name for c in installed_companions if c.name in ("torchvision", "torchaudio")]
    elif fw.framework is Framework.JAX and stack.cuda is None:
        remove = [c.name for c in installed_companions if re.fullmatch(r"jax-cuda\d+-(plugin|pjrt)", c.name)]
    return f"pip uninstall -y {' '.join(remove)} && {command}" if remove else command


def plan_fix_text(kb: KnowledgeBase, resolution: Resolution | None, check_version: str, package: str,
                  machine, installed_companions: tuple = ()) -> str:
    """The fix a plan gives, as the commands to run: the plan's pip lines with its index option; where no build
    runs here, the resolver's reasons and its nearest stack that works."""
    if resolution is None:
        return "no plan could be made for this machine (see the findings)"
    stack = resolution.stack
    request = resolution.request
    if stack is None:
        conflicts = "; ".join(f.message for f in resolution.findings if f.severity is E)
        text = f"no {request.framework.display} build runs here (the resolver: {conflicts})"
        if resolution.alternatives:
            alt = resolution.alternatives[0]
            nearest = Resolution(alt.request, alt.stack, (), (), resolution.kb_version)
            text += f"; the nearest stack that works is {alt.stack.summary} ({alt.why}): " + \
                _pip_command(kb, nearest, check_version, package, installed_companions)
        return text
    fw = stack.framework
    command = _pip_command(kb, resolution, check_version, package, installed_companions)
    steps = []
    python = major_minor(machine.python.version) if machine.python else None
    if python and stack.python.recommended != python and request.python is None:
        steps.append(f"in a Python {stack.python.recommended} environment (no build for Python {python}):")
    detected = machine.driver.version if machine.driver else None
    if detected and request.driver is None and stack.driver and stack.driver.minimum:
        steps.append(f"install NVIDIA driver {stack.driver.minimum} or newer, then")
    build = fw.label + (f" ({fw.variant})" if fw.variant and fw.variant not in fw.label else "")
    flag = request.framework.flag
    return " ".join(steps + [command]) + (f"  [{build}: {stack.summary}; the whole plan: stackresolve plan {flag} "
                                          f"{fw.version} --format pip]")


# -- the checks -------------------------------------------------------------------------------------------------
def check_installed(kb: KnowledgeBase, machine, inst, earlier_codes: set[str]) -> tuple[list[Finding],
                                                                                         FrameworkCheck]:
    framework = Framework(inst.name)
    prefix = framework.value
    display = framework.display
    version = public_version(inst.version)
    label = f"{inst.package or framework.distribution} {inst.version}"
    if framework is Framework.PYTORCH and inst.module_version and inst.module_version != inst.version:
        label = f"torch {inst.module_version}"  # torch.__version__: "2.5.1+cu124" where the dist-info says 2.5.1
    elif framework is Framework.JAX and inst.variant:
        label += f" ({inst.variant})"
    check = FrameworkCheck(framework, inst.package or framework.distribution, inst.version, label, inst.variant,
                           inst.cuda, inst.gpu_build)
    planner = Planner(kb, machine, framework)
    source = f"python-probe ({inst.source or 'dist-info'})"
    findings: list[Finding] = []
    request = None
    if version is None:
        findings.append(Finding(W, f"{prefix}-unknown-release", f"the installed {label} has no readable version",
                                "", source))
    else:
        _, problem = read_version(kb, framework, version)
        if problem:
            findings.append(Finding(W, f"{prefix}-unknown-release",
                                    f"the installed {label} is not in the knowledge base ({problem}); its GPU code "
                                    f"and driver needs are unchecked", f"check a known release: stackresolve plan "
                                    f"{framework.flag} latest", f"{prefix}.toml"))
        else:
            request = planner.request(version)  # None where an override is bad: detect reported it
    macos = os_of(machine) is Os.MACOS
    cuda_build = inst.gpu_build is True
    # (severity, code, message, source, how the fix reads) of what the plan must fix
    pending: list[tuple[Severity, str, str, str, str]] = []
    build = None
    if not cuda_build and machine.gpus and not macos:
        what = f"{label} is a ROCm build" if inst.hip or (inst.variant or "").startswith("rocm") else \
            f"{label} is a CPU-only build"
        printed = TORCH_NO_CUDA if framework is Framework.PYTORCH else JAX_NO_CUDA
        effect = ("torch.cuda.is_available() is False and .cuda() raises" if framework is Framework.PYTORCH
                  else "JAX prints")
        pending.append((W, f"{prefix}-cpu-build-with-gpu",
                        f"{what} but this machine has an NVIDIA GPU: {display} runs on the CPU ({effect} "
                        f"\"{printed}\")", source, "plan"))
    elif cuda_build and not machine.gpus:
        if "no-nvidia-gpu" not in earlier_codes:
            findings.append(Finding(W, "no-nvidia-gpu",
                                    f"no NVIDIA GPU was found (probes: nvml, libcuda, nvidia-smi, /proc): {label} "
                                    f"will run on the CPU only",
                                    "install the NVIDIA driver (a reboot after install loads its kernel module), or "
                                    "check that the GPU is passed to this container/VM (docker run --gpus all)",
                                    "detect: nvml, libcuda, nvidia-smi"))
    elif cuda_build and request is not None:
        platform = request.wheel_platform
        build = torch_build(kb, inst, version, platform) if framework is Framework.PYTORCH else \
            jax_build(kb, inst, version)
        unsupported = False
        for g in machine.gpus:
            cc, cc_source = gpu_cc(kb, g)
            gpu = gpu_label(g)
            if cc is None:
                findings.append(unknown_cc_finding(g, label))
                continue
            gpu += f", compute capability {cc}, {sm_name(cc)})"
            capability = ComputeCapability.parse(cc)
            if build is not None and build.cc_min and capability < ComputeCapability.parse(build.cc_min):
                unsupported = True
                pending.append((E, f"{prefix}-gpu-not-supported",
                                f"{gpu}: {display} {version} supports compute capability >= {build.cc_min} only (its "
                                f"install guide), so {build.what} has no kernel image for {sm_name(cc)}",
                                f"{cc_source}; jax.toml [[release]] cc_min: {build.cc_min_source}", "plan"))
                continue
            level = classify_support(build.arch if build else None, capability)
            arch = build.arch if build else None
            code = ""
            if arch is not None:
                code = " ".join(sm_name(s) for s in arch.sass)
                code += (" and PTX " + " ".join(f"compute_{sm_name(p)[3:]}" for p in arch.ptx)) if arch.ptx else \
                    ", no PTX"
            arch_source = build.arch_source if build else f"{prefix}.toml"
            if level is GpuSupport.UNSUPPORTED:
                unsupported = True
                said = (f" (PyTorch warns \"{g.name or 'the GPU'} with CUDA capability {sm_name(cc)} is not "
                        f"compatible with the current PyTorch installation\"; its kernels fail with "
                        f"\"{TORCH_NO_KERNEL}\")" if framework is Framework.PYTORCH else
                        " (XLA fails to compile or launch its kernels)")
                pending.append((E, f"{prefix}-gpu-not-supported",
                                f"{gpu}: no kernel image for {sm_name(cc)} in {label}: {build.what} carries code "
                                f"for {code}{said}", f"{cc_source}; {arch_source}", "plan"))
            elif level is GpuSupport.PTX_JIT:
                pending.append((W, f"{prefix}-ptx-jit",
                                f"{gpu}: {build.what} carries only PTX for it ({code}); the driver JIT-compiles "
                                f"every kernel at first start (minutes)", f"{cc_source}; {arch_source}", "ptx"))
            elif level is GpuSupport.UNKNOWN:
                findings.append(Finding(I, f"{prefix}-arch-unknown",
                                        f"the CUDA architectures compiled into {label} are not in the knowledge "
                                        f"base; {gpu} is unchecked", "", arch_source))
        if build is not None and not unsupported:
            driver_finding, check = _driver(kb, machine, planner, version, request, build, label, check,
                                            earlier_codes)
            if driver_finding is not None:
                pending.append(driver_finding)
    if build is not None:
        check = replace(check, build=build)
    if pending:
        fix = planner.fix(version)
        check = replace(check, resolution=fix, plan_origin="fix")
        text = plan_fix_text(kb, fix, version, check.package, machine, inst.companions)
        for severity, code, message, why_source, how in pending:
            if how == "ptx":
                fix_text = "set CUDA_CACHE_MAXSIZE=4294967296 to keep the JIT cache"
                if fix is not None and fix.stack is not None and fix.stack.framework.variant != inst.variant:
                    fix_text += f", or install a build with machine code for it: {text}"
            elif how.startswith("driver:"):
                kept = fix is not None and fix.stack is not None and fix.request.driver is not None
                fix_text = (f"install NVIDIA driver {how[7:]} or newer, or keep this driver and install the build "
                            f"the resolver finds for it: {text}") if kept else text
            else:
                fix_text = text
            findings.append(Finding(severity, code, message, fix_text, why_source))
    elif version is not None:
        check = replace(check, resolution=planner.installed(version), plan_origin="installed")
    return findings, check


def _driver(kb: KnowledgeBase, machine, planner: Planner, version: str, request, build: InstalledBuild,
            label: str, check: FrameworkCheck, earlier_codes: set[str]):
    """Ask the resolver whether the installed build fits this driver; the finding the plan must fix, if any.
    Without a driver the resolver's stack for the installed build names its floor."""
    prefix = check.framework.value
    bare = resolve_installed(kb, planner.request(version, machine=replace(machine, driver=None)), build.keep)
    pin = bare.resolution.stack.driver if bare.fits else None
    if pin is not None:
        check = replace(check, driver_min=pin.minimum)
    d = machine.driver
    if d is None or (d.version is None and d.cuda_max is None):
        if pin is None or not pin.minimum or "no-driver" in earlier_codes:
            return None, check
        return (E, f"{prefix}-no-driver", f"no NVIDIA driver was found; {label} needs >= {pin.minimum} ({pin.why})",
                pin.source, f"driver:{pin.minimum}"), check
    if request.driver is None:
        return None, check  # only the driver's CUDA number is known
    verdict = resolve_installed(kb, request, build.keep)
    against = verdict.conflicts_on("driver")
    if verdict.fits or not against:
        return None, check
    said = "; ".join(f"{c.text}" + (f" (required by {c.required_by})" if c.required_by != "the request" else "")
                     for c in against)
    minimum = pin.minimum if pin is not None else None
    found = ""
    if d.cuda_max:
        major, minor = (d.cuda_max.split(".") + ["0"])[:2]
        found = f" (found version {int(major) * 1000 + int(minor) * 10})"
    printed = (f"; PyTorch says \"The NVIDIA driver on your system is too old{found}\"" if
               check.framework is Framework.PYTORCH else "; JAX falls back to the CPU")
    message = f"driver {d.version} is too old for {label}" + (f", which needs >= {minimum}" if minimum else "") + \
        f": {pin.why if pin is not None else said}{printed}"
    source = f"detect: {d.source}; the resolver: {said}" + (f"; {pin.source}" if pin is not None else "")
    return (E, f"{prefix}-driver-too-old", message, source, f"driver:{minimum or 'a newer one'}"), check


def check_frameworks(kb: KnowledgeBase, machine, earlier_codes: set[str]) -> tuple[list[Finding],
                                                                                    list[FrameworkCheck]]:
    findings: list[Finding] = []
    checks: list[FrameworkCheck] = []
    for inst in installed_frameworks(machine):
        found, check = check_installed(kb, machine, inst, earlier_codes | {f.code for f in findings})
        findings += found
        checks.append(check)
    return findings, checks
