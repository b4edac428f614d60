"""The user's text -> typed values: the command line's flags (and the environment's overrides) parsed into a
RequestInput, the one place InputError is raised for what the user typed about a request. Each error is one line:
what was wrong, what is accepted, the closest match.

Text read from a probe or a log (an installed version, a log's Python) goes through the same parsers at that
edge: `read_version`, `read_python`, `read_driver`, `read_cc` and `read_os` give None (and why) instead of
raising, so what cannot be read is a finding or unknown, never bad input. A compute capability and a driver are
read by their value's one parser (model/values.py), which the probes, a lock and a fleet file use too.
"""

from __future__ import annotations

import re
from typing import TYPE_CHECKING

from packaging.specifiers import InvalidSpecifier, SpecifierSet
from packaging.version import Version

from stackresolve.model.enums import Arch, Framework, Os, Vendor
from stackresolve.model.numbers import NUMBER, has_oversized_number, quoted
from stackresolve.model.record import record
from stackresolve.model.values import ComputeCapability, DriverVersion, ValueTextError
from stackresolve.request.build import (
    PYTHON_RELEASES,
    GpuTarget,
    InputError,
    Request,
    RequestInput,
    build_request,
    gpu_from_cc,
    known_releases,
)

if TYPE_CHECKING:  # pragma: no cover
    from stackresolve.model.accelerator import AcceleratorTarget
    from stackresolve.model.machine import Machine
    from stackresolve.knowledge.base import KnowledgeBase

VENDOR_CHOICES = ("any", *Vendor.names())


# -- one value at a time -------------------------------------------------------------------------------------
_OPERATORS = ("==", "!=", "<=", ">=", "~=", "<", ">", "===")


_EXAMPLES = {Framework.TENSORFLOW: "1.15, 2, 2.3.4, '>=2.4,<2.8'", Framework.PYTORCH: "2.5, 2, 2.5.1, '>=2.4,<2.8'",
             Framework.JAX: "0.4, 0.4.35, '>=0.4.30,<0.5'"}


def parse_version_spec(text: str, framework: Framework = Framework.TENSORFLOW) -> SpecifierSet:
    """'1.15' -> ==1.15.*, '2' -> ==2.*, '2.3.4' -> ==2.3.4, '>=2.4,<2.8' as written, 'latest' -> any.
    A fourth component names one release exactly (jax 0.9.0.1)."""
    value = text.strip()
    flag, examples = framework.flag, _EXAMPLES[framework]
    if value.lower() in ("latest", "newest", "*", ""):
        return SpecifierSet()
    if value.startswith(_OPERATORS):
        try:
            if has_oversized_number(value):
                raise InvalidSpecifier(value)
            return SpecifierSet(value)
        except InvalidSpecifier:
            raise InputError(f"{flag} {quoted(text)}: not a version specifier; use e.g. {examples} or latest")
    if not re.fullmatch(rf"{NUMBER}(\.{NUMBER}){{0,3}}(\.\*)?", value):
        raise InputError(f"{flag} {quoted(text)}: not a {framework.display} version; use e.g. {examples} or latest")
    if value.endswith(".*") or value.count(".") >= 2:
        return SpecifierSet(f"=={value}")
    return SpecifierSet(f"=={value}.*")


def parse_tf_spec(text: str) -> SpecifierSet:
    return parse_version_spec(text, Framework.TENSORFLOW)


def parse_python(text: str) -> str:
    value = text.strip()
    match = re.fullmatch(rf"(?:python|py|cp)?\s*([0-9])\.?([0-9]{{1,2}})(?:\.{NUMBER})?", value, re.IGNORECASE)
    if not match:
        raise InputError(f"--python {quoted(text)}: not a Python version; use major.minor, e.g. 3.7")
    version = f"{match.group(1)}.{match.group(2)}"
    if version not in PYTHON_RELEASES:
        newest = PYTHON_RELEASES[-1]
        raise InputError(f"--python {quoted(text)}: there is no Python {version}; CPython releases are 2.0 ... 2.7 and "
                         f"3.0 ... {newest}")
    return version


def parse_driver(text: str, flag: str = "--driver") -> DriverVersion:
    """A driver version, or a bare branch ("580", as plans print a branch floor and --help offers), which stands
    for the branch's releases (knowledge.rules.driver_meets): DriverVersion.parse, the one reading of a driver
    that STACKRESOLVE_DRIVER, the probes, a lock and a fleet file use too."""
    try:
        return DriverVersion.parse(text)
    except ValueTextError as exc:
        raise InputError(f"{flag} {exc}") from None


def parse_cc(text: str, known: list[str] | None = None, flag: str = "--gpu-cc") -> ComputeCapability:
    """A compute capability ('8.6', 'sm_86'): ComputeCapability.parse, the one reading that
    STACKRESOLVE_GPU_CC, the probes, a lock and a fleet file use too. One no GPU in the table has is still
    planned, by the compatibility rules (knowledge.rules.unlisted_gpu_rule, issue 31): only a malformed value is
    bad input. `known` is kept for callers that name the nearest listed ones."""
    try:
        return ComputeCapability.parse(text)
    except ValueTextError as exc:
        raise InputError(f"{flag} {exc}") from None


def parse_os(text: str) -> Os:
    value = text.strip().lower()
    aliases = {"win": "windows", "win32": "windows", "darwin": "macos", "osx": "macos", "mac": "macos",
               "ubuntu": "linux", "wsl": "wsl2"}
    value = aliases.get(value, value)
    if value not in Os.names():
        raise InputError(f"--os {quoted(text)}: unknown operating system; use one of {', '.join(Os.names())}")
    return Os(value)


def parse_arch(text: str) -> Arch:
    value = {"amd64": "x86_64", "x64": "x86_64"}.get(text.strip().lower(), text.strip().lower())
    if value not in Arch.names():
        raise InputError(f"--arch {quoted(text)}: unknown architecture; use one of {', '.join(Arch.names())}")
    return Arch(value)


def parse_vendor(text: str) -> Vendor | None:
    value = text.strip().lower()
    if value not in VENDOR_CHOICES:
        raise InputError(f"--vendor {quoted(text)}: use one of {', '.join(VENDOR_CHOICES)}")
    return None if value == "any" else Vendor(value)


def parse_version_flag(text: str, flag: str) -> str:
    value = text.strip()
    if not re.fullmatch(rf"{NUMBER}(\.{NUMBER}){{1,3}}", value):
        raise InputError(f"{flag} {quoted(text)}: not a version; use e.g. 10.0 or 7.6.5")
    return value


def parse_cudnn_choice(kb: "KnowledgeBase", text: str) -> str:
    """--cudnn X.Y (or X.Y.Z): a cuDNN release the knowledge base knows."""
    value = parse_version_flag(text, "--cudnn")
    known = sorted({r.version for r in kb.cudnn}, key=Version)
    wanted = Version(value)
    if not any(Version(v).release[:len(wanted.release)] == wanted.release for v in known):
        minors = sorted({".".join(v.split(".")[:2]) for v in known}, key=Version)
        raise InputError(f"--cudnn {quoted(text)}: no cuDNN release {value} is known; known: {minors[0]} ... {minors[-1]}")
    return value


def validate_version(kb: "KnowledgeBase", framework: Framework, text: str) -> SpecifierSet:
    """The parsed version request; one that matches no known release is bad input: say which lines exist and
    which is closest."""
    spec = parse_version_spec(text, framework)
    if not str(spec):  # the newest: nothing to match
        return spec
    releases = known_releases(kb, framework)
    if any(spec.contains(v, prereleases=True) for v in releases):
        return spec
    lines = sorted(Version(l.version) for l in kb.lines) if framework is Framework.TENSORFLOW else \
        sorted({Version(f"{v.major}.{v.minor}") for v in releases})
    wanted = text.strip().lstrip("=<>!~ ").split(",")[0]
    try:
        target = Version(wanted)
        closest = min(lines, key=lambda l: (abs(l.major - target.major), abs(l.minor - target.minor)))
        hint = f"; closest: {closest}"
    except ValueError:
        hint = ""
    raise InputError(f"{framework.flag} {quoted(text)}: no {framework.display} release matches; known lines are "
                     f"{lines[0]} ... {lines[-1]}{hint}")


def requested_framework(flags: "Flags") -> tuple[Framework, str]:
    """Which framework the flags ask for, and its version text: --torch or --jax, else --tf (one of them)."""
    chosen = [(f, v) for f, v in ((Framework.PYTORCH, flags.torch), (Framework.JAX, flags.jax)) if v is not None]
    if len(chosen) > 1 or (chosen and flags.tf != "latest"):
        raise InputError("give one of --tf, --torch and --jax: a plan is for one framework")
    return chosen[0] if chosen else (Framework.TENSORFLOW, flags.tf)


# Apple Silicon chips by name ("Apple M2", "m3 max"): their GPU runs the frameworks through Metal, not CUDA.
_APPLE_GPU = r"(?i)\s*(?:apple\s+)?m([1-9])(?:\s+(pro|max|ultra))?(?:\s+gpu)?\s*"
APPLE_SOURCE = ("https://developer.apple.com/metal/tensorflow-plugin (tensorflow-metal: Mac computers with Apple "
                "silicon); https://developer.apple.com/metal/pytorch/ (PyTorch's MPS backend)")


def apple_gpu_name(text: str) -> str | None:
    """'apple m2 max' -> 'Apple M2 Max'; None when the text names no Apple Silicon chip."""
    match = re.fullmatch(_APPLE_GPU, text)
    if not match:
        return None
    return f"Apple M{match.group(1)}" + (f" {match.group(2).capitalize()}" if match.group(2) else "")


def lookup_gpu(kb: "KnowledgeBase", name: str) -> GpuTarget:
    gpu = kb.find_gpu(name)
    if gpu is None:
        similar = kb.similar_gpu_names(name)
        hint = f"; did you mean {' or '.join(repr(s) for s in similar)}?" if similar else \
            "; use --gpu-cc X.Y to give its compute capability (stackresolve gpus lists known models)"
        raise InputError(f"--gpu {name!r}: unknown GPU model{hint}")
    return GpuTarget(name=gpu.name, cc=ComputeCapability.parse(gpu.cc), architecture=gpu.architecture,
                     source="flag --gpu")


# -- the command line's flags -> RequestInput -----------------------------------------------------------------
@record
class Flags:
    """What the user typed; None where a flag was left out."""

    tf: str = "latest"
    torch: str | None = None  # --torch: plan PyTorch instead of TensorFlow
    jax: str | None = None  # --jax: plan JAX
    os: str | None = None
    arch: str | None = None
    gpu: str | None = None
    gpu_cc: str | None = None
    driver: str | None = None
    python: str | None = None
    cudnn: str | None = None
    cpu: bool = False
    vendor: str = "any"
    with_driver: bool = False
    gpu_gfx: str | None = None  # --gpu-gfx: an AMD GPU by its gfx target
    gpu_gfx_env: str | None = None  # STACKRESOLVE_GPU_GFX, used when no flag names a GPU


def accelerator_by_name(kb: "KnowledgeBase", name: str) -> "AcceleratorTarget | None":
    """An AMD or Intel GPU model by its name or alias (constraints/amd.toml, intel.toml), None when neither knows it."""
    # lazy: start-up (only this path needs model.accelerator)
    from stackresolve.model.accelerator import AMD, INTEL, AcceleratorTarget

    amd = kb.accelerators.find_amd_gpu(name)
    if amd is not None:
        return AcceleratorTarget(AMD, amd.name, amd.gfx, "", amd.architecture, "flag --gpu")
    intel = kb.accelerators.find_intel_gpu(name)
    if intel is not None:
        return AcceleratorTarget(INTEL, intel.name, "", intel.family, intel.architecture, "flag --gpu")
    return None


def unknown_gpu(kb: "KnowledgeBase", name: str) -> InputError:
    # lazy: no start-up gain (already loaded by then); kept beside its use
    import difflib

    wanted = name.strip().lower()
    # the closest of each table's close matches, by how close each is (NVIDIA's table is much the larger)
    similar = sorted(dict.fromkeys(kb.similar_gpu_names(name) + kb.accelerators.similar_names(name)),
                     key=lambda s: -difflib.SequenceMatcher(None, wanted, s.lower()).ratio())[:3]
    hint = f"; did you mean {' or '.join(repr(s) for s in similar)}?" if similar else \
        ("; use --gpu-cc X.Y (NVIDIA) or --gpu-gfx gfxNNNN (AMD) to give its architecture (stackresolve gpus lists "
         "known models)")
    return InputError(f"--gpu {name!r}: unknown GPU model{hint}")


def gfx_target(kb: "KnowledgeBase", text: str, flag: str, source: str) -> "AcceleratorTarget":
    # lazy: start-up (only this path needs model.accelerator)
    from stackresolve.model.accelerator import AMD, AcceleratorTarget, read_gfx

    gfx = read_gfx(text)
    if gfx is None:
        raise InputError(f"{flag} {quoted(text)}: not an AMD gfx target; use LLVM's name, e.g. gfx1100 or gfx942 "
                         f"(rocminfo and rocm_agent_enumerator print it)")
    models = kb.accelerators.amd_gpus_of_gfx(gfx)
    architecture = models[0].architecture if models else ""
    return AcceleratorTarget(AMD, models[0].name if len(models) == 1 else "", gfx, "", architecture, source)


def parse_accelerator_flags(kb: "KnowledgeBase", flags: Flags,
                            apple: str | None) -> tuple["AcceleratorTarget", ...]:
    """The AMD or Intel GPU the flags name (--gpu MODEL, --gpu-gfx, else STACKRESOLVE_GPU_GFX), () when they name
    none. One vendor per plan: an NVIDIA GPU or compute capability with an AMD or Intel one is bad input."""
    # lazy: start-up (only this path needs model.accelerator)
    from stackresolve.model.accelerator import INTEL

    named = None
    if flags.gpu and not apple and kb.find_gpu(flags.gpu) is None:
        named = accelerator_by_name(kb, flags.gpu)
        if named is None:
            raise unknown_gpu(kb, flags.gpu)
    gfx_text, flag, source = flags.gpu_gfx, "--gpu-gfx", "flag --gpu-gfx"
    if gfx_text is None and flags.gpu_gfx_env and not (flags.gpu or flags.gpu_cc or flags.cpu):
        gfx_text, flag, source = flags.gpu_gfx_env, "STACKRESOLVE_GPU_GFX", "env:STACKRESOLVE_GPU_GFX"
    if named is None and gfx_text is None:
        return ()
    if flags.cpu:
        raise InputError("--cpu plans without a GPU: drop --gpu/--gpu-gfx, or --cpu")
    if apple:
        raise InputError(f"--gpu {flags.gpu!r} is an Apple GPU: it has no AMD gfx target (drop --gpu-gfx)")
    what = f"--gpu {flags.gpu!r}" if named else f"{flag} {gfx_text}"
    if flags.gpu_cc:
        raise InputError(f"{what} is an {'Intel' if named and named.vendor == INTEL else 'AMD'} GPU and --gpu-cc an "
                         f"NVIDIA compute capability: a plan is for one GPU vendor; give one of them")
    if flags.driver:
        raise InputError(f"--driver {quoted(flags.driver)} is an NVIDIA driver version and {what} not an NVIDIA GPU: "
                         f"drop --driver (ROCm and Intel's drivers are not planned by version)")
    if flags.gpu and named is None:
        raise InputError(f"--gpu {flags.gpu!r} is an NVIDIA GPU and {flag} {gfx_text} an AMD target: a plan is for "
                         f"one GPU vendor; give one of them")
    if named is not None and named.vendor == INTEL and gfx_text is not None:
        raise InputError(f"--gpu {flags.gpu!r} is an Intel GPU: it has no AMD gfx target (drop {flag})")
    if gfx_text is not None:
        target = gfx_target(kb, gfx_text, flag, source)
        if named is not None and named.gfx != target.gfx:
            raise InputError(f"--gpu {flags.gpu!r} has gfx target {named.gfx}, not {target.gfx}; give one of them")
        named = named or target
    return (named,)


def parse_flags(kb: "KnowledgeBase", flags: Flags) -> RequestInput:
    """The flags as typed values, each checked against the knowledge base (a known release, GPU, compute
    capability, cuDNN) and against the others (one framework; an Apple GPU has no compute capability and runs
    macOS on arm64; NVIDIA's builds are TensorFlow 1.15). Checked in the order the flags are read, so the first
    problem is the one reported."""
    framework, version_text = requested_framework(flags)
    spec = validate_version(kb, framework, version_text)
    apple = apple_gpu_name(flags.gpu) if flags.gpu else None
    if apple and flags.gpu_cc:
        raise InputError(f"--gpu {flags.gpu!r} is an Apple GPU: it has no CUDA compute capability (drop --gpu-cc)")
    if apple and flags.os and parse_os(flags.os) is not Os.MACOS:
        raise InputError(f"--gpu {flags.gpu!r} is an Apple Silicon GPU: it runs macOS, not {flags.os}")
    os_name = parse_os(flags.os) if flags.os else None
    arch = parse_arch(flags.arch) if flags.arch else None
    if apple and arch is not None and not arch.is_arm:
        raise InputError(f"--gpu {flags.gpu!r} is an Apple Silicon GPU: its Macs are arm64, not {arch}")
    python = parse_python(flags.python) if flags.python else None
    cudnn = parse_cudnn_choice(kb, flags.cudnn) if flags.cudnn else None
    vendor = parse_vendor(flags.vendor)
    if vendor is Vendor.NVIDIA and (framework is not Framework.TENSORFLOW
                                    or not spec.contains(Version("1.15.5"), prereleases=True)):
        raise InputError(f"--vendor nvidia: NVIDIA's builds (no longer maintained) are TensorFlow 1.15 only, not "
                         f"{framework.display} '{version_text}'; use --tf 1.15")
    accelerators = parse_accelerator_flags(kb, flags, apple)
    if accelerators and framework is Framework.TENSORFLOW and version_text == "latest" and flags.torch is None \
            and flags.jax is None:
        # no framework named (--tf latest is the default): PyTorch, the one framework planned on AMD and Intel GPUs
        framework, version_text = Framework.PYTORCH, "latest"
        spec = validate_version(kb, framework, version_text)
    if accelerators and framework is not Framework.PYTORCH:
        what = "AMD (ROCm)" if accelerators[0].vendor == "amd" else "Intel (XPU)"
        raise InputError(f"{framework.flag} with an {what} GPU: stackresolve plans PyTorch on AMD and Intel GPUs "
                         f"(--torch VERSION); {framework.display} there is not planned yet (use --cpu for its CPU "
                         f"build)")
    gpus: tuple[GpuTarget, ...] = ()
    if apple or accelerators:
        pass
    elif flags.gpu and flags.gpu_cc:
        target = lookup_gpu(kb, flags.gpu)
        cc = parse_cc(flags.gpu_cc)
        if cc != target.cc:
            raise InputError(f"--gpu {flags.gpu!r} has compute capability {target.cc}, not {cc}; give one of them")
        gpus = (target,)
    elif flags.gpu:
        gpus = (lookup_gpu(kb, flags.gpu),)
    elif flags.gpu_cc:
        gpus = (gpu_from_cc(kb, parse_cc(flags.gpu_cc), "", "flag --gpu-cc"),)
    driver = parse_driver(flags.driver) if flags.driver else None
    return RequestInput(framework=framework, version=version_text, spec=spec, os=os_name, arch=arch, gpus=gpus,
                        apple_gpu=apple, driver=driver, python=python, cudnn=cudnn, cpu=flags.cpu, vendor=vendor,
                        with_driver=flags.with_driver, accelerators=accelerators)


def override_problem(machine: "Machine | None") -> str | None:
    """What is wrong with an override the environment gave detection (STACKRESOLVE_GPU_CC=banana), as detect
    reported it; None when there is none. Such an override is the user's text too."""
    if machine is None:
        return None
    # the one line says what is accepted too (the finding's fix), as a flag's refusal does
    return next((f"{f.message}; {f.fix}" if f.fix else f.message for f in machine.findings
                 if f.code == "bad-override"), None)


def reject_bad_overrides(machine: "Machine | None") -> None:
    """Bad input where a request takes its facts from the machine: an override detection could not read."""
    problem = override_problem(machine)
    if problem:
        raise InputError(problem)


def request_from_flags(kb: "KnowledgeBase", flags: Flags, machine: "Machine | None") -> Request:
    """The command line's request: its flags parsed, what they leave out taken from the detected machine (None:
    nothing was detected). InputError for bad input, the environment's overrides first."""
    reject_bad_overrides(machine)
    return build_request(kb, parse_flags(kb, flags), machine)


def parse_fix_versions(kb: "KnowledgeBase", tf: str | None, torch: str | None, jax: str | None) -> None:
    """explain's --tf, --torch and --jax: one of them; --torch and --jax a release the knowledge base knows, --tf
    a version whether or not a release has it (the log's TensorFlow; a fix moves off an unknown one)."""
    if sum(v is not None for v in (tf, torch, jax)) > 1:
        raise InputError("give one of --tf, --torch and --jax: a fix plan is for one framework")
    for framework, value in ((Framework.PYTORCH, torch), (Framework.JAX, jax)):
        if value is not None:
            validate_version(kb, framework, value)
    if tf is not None:
        parse_version_spec(tf, Framework.TENSORFLOW)


# -- text read from a probe or a log ---------------------------------------------------------------------------
def read_version(kb: "KnowledgeBase", framework: Framework, text: str) -> tuple[SpecifierSet | None, str]:
    """A version an installed package or a log shows: the release request it names, or None and why not (the
    words bad input would print)."""
    try:
        return validate_version(kb, framework, text), ""
    except InputError as exc:
        return None, str(exc)


def read_python(text: str | None) -> str | None:
    """A Python version a probe or a log shows, as a CPython minor release ("3.11"); None when it names none."""
    try:
        return parse_python(text) if text else None
    except InputError:
        return None


def read_driver(text: str | None) -> DriverVersion | None:
    """A driver version a log shows (or a table gives); None when it is no NVIDIA driver version."""
    try:
        return parse_driver(text) if text else None
    except InputError:
        return None


def read_cc(text: str | None) -> ComputeCapability | None:
    """A compute capability a log shows; None when it names none ("8.12")."""
    try:
        return parse_cc(text) if text else None
    except InputError:
        return None


def read_os(text: str | None) -> Os | None:
    """An operating system a log points to ("linux", "windows", or an alias); None when it names none."""
    try:
        return parse_os(text) if text else None
    except InputError:
        return None


# -- flags -> the machine to check ---------------------------------------------------------------------------
@record
class MachineFlags:
    """Facts about a machine given on the command line (check): each replaces what detection found."""

    os: str | None = None
    driver: str | None = None
    gpu: str | None = None
    gpu_cc: str | None = None
    python: str | None = None
    cuda: str | None = None
    cudnn: str | None = None
    gpu_gfx: str | None = None  # an AMD GPU by its gfx target


def _flag_accelerator(kb: "KnowledgeBase", flags: MachineFlags) -> "AcceleratorTarget | None":
    """The AMD or Intel GPU check's --gpu or --gpu-gfx names (None: an NVIDIA GPU, or none)."""
    named = None
    if flags.gpu and kb.find_gpu(flags.gpu) is None:
        named = accelerator_by_name(kb, flags.gpu)
        if named is None:
            raise unknown_gpu(kb, flags.gpu)
    if flags.gpu_gfx is None:
        return named
    if flags.gpu_cc or (flags.gpu and named is None):
        raise InputError(f"--gpu-gfx {flags.gpu_gfx} is an AMD target and --gpu/--gpu-cc an NVIDIA GPU: one of them")
    target = gfx_target(kb, flags.gpu_gfx, "--gpu-gfx", "flag --gpu-gfx")
    if named is not None and named.gfx != target.gfx:
        raise InputError(f"--gpu {flags.gpu!r} has gfx target {named.gfx or '(none: an Intel GPU)'}, not {target.gfx}")
    return named or target


def apply_flags(kb: "KnowledgeBase", machine: "Machine | None",
                flags: MachineFlags) -> tuple["Machine", frozenset[str]]:
    """The machine with the flags' facts in place of detected ones (an empty machine when nothing was detected),
    and the facts the flags gave."""
    # lazy: start-up (only this path needs detect.model)
    from dataclasses import replace

    from stackresolve.model.machine import CudnnInfo, DriverInfo, GpuInfo, Machine, OSInfo, PythonInfo, ToolkitInfo

    if machine is None:
        machine = Machine(os=OSInfo(system="unknown"), driver=None)
    given: set[str] = set()
    if flags.os:
        os_name = parse_os(flags.os)
        system = "linux" if os_name is Os.WSL2 else os_name.value
        machine = replace(machine, os=replace(machine.os, system=system, wsl=os_name is Os.WSL2))
        given.add("os")
    if flags.driver:
        machine = replace(machine, driver=DriverInfo(str(parse_driver(flags.driver)), None, "flag --driver"))
        given.add("driver")
    accelerator = _flag_accelerator(kb, flags) if flags.gpu or flags.gpu_gfx else None
    if accelerator is not None:
        # lazy: start-up (only this path needs model.machine)
        from stackresolve.model.machine import AmdGpuInfo, IntelGpuInfo

        if accelerator.vendor == "amd":
            machine = replace(machine, gpus=(), amd_gpus=(AmdGpuInfo(0, accelerator.gfx, "flag",
                                                                      accelerator.name or None),))
        else:
            machine = replace(machine, gpus=(), intel_gpus=(IntelGpuInfo(0, "8086:0000", "flag", accelerator.name),))
        given.add("gpus")
    elif flags.gpu or flags.gpu_cc:
        target = lookup_gpu(kb, flags.gpu) if flags.gpu else None
        cc = target.cc if target else parse_cc(flags.gpu_cc)
        name = target.name if target else None
        # the machine is a detection report: its facts are text, as a probe reads them
        machine = replace(machine, gpus=(GpuInfo(0, name, str(cc), None, "flag", "flag"),))
        given.add("gpus")
    if flags.python:
        machine = replace(machine, python=PythonInfo(parse_python(flags.python), "", "flag --python"))
        given.add("python")
    if flags.cuda:
        version = parse_version_flag(flags.cuda, "--cuda")
        machine = replace(machine, cuda_toolkits=(ToolkitInfo(".".join(version.split(".")[:2]), None, "flag --cuda",
                                                              full_version=version),))
        given.add("cuda")
    if flags.cudnn:
        machine = replace(machine, cudnn=(CudnnInfo(parse_version_flag(flags.cudnn, "--cudnn"), None, "flag --cudnn"),))
        given.add("cudnn")
    return machine, frozenset(given)
