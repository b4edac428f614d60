"""What the user asked for: the parsing of user-facing strings, and Flags + a detected Machine -> a Request.

Pure: the caller passes the detected machine (or None); nothing here probes the system.
"""

from __future__ import annotations

import re
from dataclasses import field
from typing import TYPE_CHECKING

from packaging.specifiers import InvalidSpecifier, SpecifierSet
from packaging.version import Version

from stackresolve.model.enums import Arch, Framework, Os, Vendor
from stackresolve.model.numbers import NUMBER, has_oversized_number, quoted
from stackresolve.model.record import record
from stackresolve.model.values import ComputeCapability

if TYPE_CHECKING:  # pragma: no cover
    from stackresolve.detect.model import Machine
    from stackresolve.knowledge.base import KnowledgeBase

# CPython minor releases (python.org/downloads; 3.15.0 final on 2026-10-01 per PEP 790's schedule). A --python
# outside this list names no Python at all: bad input, not a conflict.
PYTHON_RELEASES = ("2.0", "2.1", "2.2", "2.3", "2.4", "2.5", "2.6", "2.7", "3.0", "3.1", "3.2", "3.3", "3.4", "3.5",
                   "3.6", "3.7", "3.8", "3.9", "3.10", "3.11", "3.12", "3.13", "3.14", "3.15")
VENDOR_CHOICES = ("any", *Vendor.names())


class InputError(ValueError):
    """Bad user input: the message is one line saying what was wrong and what is accepted."""


@record
class GpuTarget:
    name: str  # "" when only the compute capability is known
    cc: str
    architecture: str
    source: str  # "flag", "nvml", "nvidia-smi", "env:STACKRESOLVE_GPU_CC", ...
    # A request over many machines (fleet): the driver of the machines this GPU is in. Whether a driver is new
    # enough for a GPU's architecture is a fact of its own machine; the request's `driver` (the fleet's lowest)
    # still decides the CUDA a stack may use.
    driver: str | None = None

    @property
    def label(self) -> str:
        return f"{self.name or 'the GPU'} (compute capability {self.cc})"

    @property
    def capability(self) -> ComputeCapability:
        return ComputeCapability.parse(self.cc)  # parsed once per distinct text (cached)

    def to_json(self) -> dict:
        out = {"name": self.name or None, "compute_capability": self.cc, "architecture": self.architecture,
               "source": self.source}
        if self.driver is not None:
            out["driver"] = self.driver
        return out


@record
class Request:
    version: str  # the framework version as the user wrote it ("1.15", "latest", ">=2.4,<2.8")
    spec: SpecifierSet
    os: Os = Os.LINUX
    arch: Arch = Arch.X86_64
    python: str | None = None
    driver: str | None = None
    gpus: tuple[GpuTarget, ...] = ()  # empty with cpu_only False: an NVIDIA GPU of unknown model
    cpu_only: bool = False
    vendor: Vendor | None = None  # None: any vendor's build
    cudnn: str | None = None  # "8.6": the cuDNN minor the user chose (--cudnn)
    with_driver: bool = False  # install plans also install the driver branch (apt)
    container: bool | None = None  # True: only container builds, False: none (None: any, pip first)
    framework: Framework = Framework.TENSORFLOW
    apple_gpu: str | None = None  # "Apple M2": an Apple Silicon GPU (Metal), planned with cpu_only True (no CUDA)
    assumptions: tuple[str, ...] = field(default=(), compare=False)
    # explain: the CUDA line a log's libraries ask for ("11.x", "10.1", "10.1|10.2"): only builds that load it
    cuda_line: str | None = None

    @property
    def asked(self) -> str:
        """The request as the user typed it: "TensorFlow 1.15", "PyTorch latest"."""
        return f"{self.framework.display} {self.version}"

    @property
    def driver_os(self) -> Os:
        return self.os.driver_os

    @property
    def wheel_platform(self) -> str:
        """The key of tensorflow_wheels.toml whose wheels install here."""
        if self.os is Os.WINDOWS:
            return "windows"
        if self.os is Os.MACOS:
            return "macos_arm64" if self.arch.is_arm else "macos_x86_64"
        return "linux_aarch64" if self.arch.is_arm else "linux"

    def to_json(self) -> dict:
        tf = self.framework is Framework.TENSORFLOW
        return {
            "framework": self.framework.value,
            "version": self.version,
            "specifier": str(self.spec) or "*",
            "tf": self.version if tf else None,
            "tf_specifier": (str(self.spec) or "*") if tf else None,
            "apple_gpu": self.apple_gpu,
            "os": self.os.value,
            "arch": self.arch.value,
            "python": self.python,
            "driver": self.driver,
            "gpus": [g.to_json() for g in self.gpus],
            "cpu_only": self.cpu_only,
            "vendor": self.vendor.value if self.vendor else "any",
            "cudnn": self.cudnn,
            "with_driver": self.with_driver,
            "assumptions": list(self.assumptions),
        }


# -- parsing user-facing strings ---------------------------------------------------------------------------
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


def parse_driver(text: str) -> str:
    """A driver version, or a bare branch ("580", as plans print a branch floor), which compares as the branch's
    first release: a floor inside the branch (580.65.06) then asks for the full version."""
    value = text.strip()
    if not re.fullmatch(r"[0-9]{2,4}\.[0-9]{1,3}(\.[0-9]{1,3})?|[0-9]{3}", value):
        raise InputError(f"--driver {quoted(text)}: not an NVIDIA driver version; use e.g. 470.82.01, 535.98 or a branch "
                         f"such as 580")
    return value


def parse_cc(text: str, known: list[str]) -> str:
    value = text.strip().removeprefix("sm_")
    if re.fullmatch(r"[0-9]{2,3}", value):  # "86" / "120" as in sm_86, sm_120
        value = f"{value[:-1]}.{value[-1]}"
    if not re.fullmatch(r"[0-9]{1,2}\.[0-9]", value):
        raise InputError(f"--gpu-cc {quoted(text)}: not a compute capability; use major.minor, e.g. 8.6")
    if value not in known:
        wanted = ComputeCapability.parse(value)
        lower = [c for c in known if ComputeCapability.parse(c) < wanted]
        higher = [c for c in known if ComputeCapability.parse(c) > wanted]
        near = ", ".join(x for x in (lower[-1:] + higher[:1]))
        raise InputError(f"--gpu-cc {value}: no NVIDIA GPU has this compute capability; nearest known: {near}")
    return value


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


# -- flags + machine -> request ----------------------------------------------------------------------------
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


def known_releases(kb: "KnowledgeBase", framework: Framework) -> list[Version]:
    """Every release of a framework the knowledge base knows."""
    if framework is Framework.PYTORCH:
        return [r.key for r in kb.frameworks.torch_releases]
    if framework is Framework.JAX:
        return [Version(v) for v in kb.frameworks.jax_versions()]
    return [w.key for w in kb.wheels]


def validate_version(kb: "KnowledgeBase", framework: Framework, text: str) -> SpecifierSet:
    """The parsed version request; one that matches no known release is bad input: say which lines exist and
    which is closest."""
    spec = parse_version_spec(text, framework)
    releases = known_releases(kb, framework)
    if not str(spec) or any(spec.contains(v, prereleases=True) for v in releases):
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


def validate_tf(kb: "KnowledgeBase", text: str) -> None:
    validate_version(kb, Framework.TENSORFLOW, text)


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
    return GpuTarget(name=gpu.name, cc=gpu.cc, architecture=gpu.architecture, source="flag --gpu")


def gpu_from_cc(kb: "KnowledgeBase", cc: str, name: str, source: str) -> GpuTarget:
    support = kb.arch_support_for(cc)
    representative = kb.representative_gpu(cc)
    architecture = support.architecture if support else (representative.architecture if representative else "")
    return GpuTarget(name=name, cc=cc, architecture=architecture, source=source)


def machine_os(machine: "Machine") -> Os | None:
    name = "wsl2" if machine.os.wsl else machine.os.system
    return Os(name) if name in Os.names() else None


def machine_arch(machine: "Machine") -> Arch | None:
    arch = machine.os.arch
    return Arch(arch) if arch in Arch.names() else None


def detected_gpus(kb: "KnowledgeBase", machine: "Machine") -> tuple[list[GpuTarget], list[str]]:
    """The machine's GPUs as targets; a GPU whose compute capability no probe reported is looked up by name."""
    gpus, unknown = [], []
    for g in machine.gpus:
        probe = g.compute_capability_source or g.source
        if g.compute_capability is None:
            known = kb.find_gpu(g.name) if g.name else None
            if known is None:
                unknown.append(g.name or f"GPU {g.index}")
                continue
            gpus.append(GpuTarget(known.name, known.cc, known.architecture, f"{g.source} + gpus.toml"))
        else:
            gpus.append(gpu_from_cc(kb, g.compute_capability, g.name or "", probe))
    return gpus, unknown


def build_request(kb: "KnowledgeBase", flags: Flags, machine: "Machine | None") -> Request:
    """Flags win; what they leave out comes from the detected machine (None: nothing was detected)."""
    if machine is not None:
        bad = next((f.message for f in machine.findings if f.code == "bad-override"), None)
        if bad:
            raise InputError(bad)
    framework, version_text = requested_framework(flags)
    spec = validate_version(kb, framework, version_text)
    assumptions: list[str] = []
    detected_os = machine_os(machine) if machine is not None else None
    apple = apple_gpu_name(flags.gpu) if flags.gpu else None
    if apple and flags.gpu_cc:
        raise InputError(f"--gpu {flags.gpu!r} is an Apple GPU: it has no CUDA compute capability (drop --gpu-cc)")
    if apple and flags.os and parse_os(flags.os) is not Os.MACOS:
        raise InputError(f"--gpu {flags.gpu!r} is an Apple Silicon GPU: it runs macOS, not {flags.os}")

    if flags.os:
        os_name = parse_os(flags.os)
    elif apple:
        os_name = Os.MACOS
    elif detected_os is not None:
        os_name = detected_os
        assumptions.append(f"operating system {os_name}, detected")
    else:
        os_name = Os.LINUX
        assumptions.append("operating system linux (not given; pass --os linux|windows|macos|wsl2)")
    detected_arch = machine_arch(machine) if machine is not None else None
    arch = parse_arch(flags.arch) if flags.arch else (Arch.ARM64 if apple else detected_arch or Arch.X86_64)
    if apple and not arch.is_arm:
        raise InputError(f"--gpu {flags.gpu!r} is an Apple Silicon GPU: its Macs are arm64, not {arch}")
    python = parse_python(flags.python) if flags.python else None
    cudnn = parse_cudnn_choice(kb, flags.cudnn) if flags.cudnn else None
    vendor = parse_vendor(flags.vendor)
    if vendor is Vendor.NVIDIA and (framework is not Framework.TENSORFLOW
                                    or not spec.contains(Version("1.15.5"), prereleases=True)):
        raise InputError(f"--vendor nvidia: NVIDIA's maintained builds are TensorFlow 1.15 only, not "
                         f"{framework.display} '{version_text}'; use --tf 1.15")
    if os_name is Os.MACOS and arch.is_arm and not flags.cpu and not flags.gpu and not flags.gpu_cc \
            and (detected_os is Os.MACOS or flags.os):
        apple = "Apple Silicon GPU"
        assumptions.append("macOS on arm64: the Apple Silicon GPU, through Metal (pass --cpu for a CPU-only plan)")

    gpus: list[GpuTarget] = []
    if apple:
        pass
    elif flags.gpu and flags.gpu_cc:
        target = lookup_gpu(kb, flags.gpu)
        cc = parse_cc(flags.gpu_cc, kb.known_ccs())
        if cc != target.cc:
            raise InputError(f"--gpu {flags.gpu!r} has compute capability {target.cc}, not {cc}; give one of them")
        gpus.append(target)
    elif flags.gpu:
        gpus.append(lookup_gpu(kb, flags.gpu))
    elif flags.gpu_cc:
        gpus.append(gpu_from_cc(kb, parse_cc(flags.gpu_cc, kb.known_ccs()), "", "flag --gpu-cc"))
    elif machine is not None and machine.gpus and not flags.cpu:
        gpus, unknown = detected_gpus(kb, machine)
        assumptions += [f"GPU {name!r}: compute capability unknown; pass --gpu-cc X.Y" for name in unknown]
        names = ", ".join(f"{g.name} (compute capability {g.cc})" if g.name else
                          f"a GPU of compute capability {g.cc} ({g.source})" for g in gpus)
        if names:
            assumptions.append(f"GPU: {names}, detected")

    cpu_only = flags.cpu or apple is not None
    if flags.cpu:
        apple = None
    if not cpu_only and not gpus:
        if os_name is Os.MACOS:
            cpu_only = True
            assumptions.append(f"macOS: {framework.display} has no CUDA builds there, so the stack is CPU-only")
        elif machine is not None:
            cpu_only = True
            assumptions.append("no NVIDIA GPU found on this machine: CPU-only stack (pass --gpu NAME or "
                               "--gpu-cc X.Y to plan for a GPU elsewhere)")
        else:
            assumptions.append("GPU not given: any NVIDIA GPU the official build supports (pass --gpu NAME or "
                               "--gpu-cc X.Y to check yours, --cpu for a CPU-only stack)")
    if cpu_only and gpus:
        gpus = []

    if flags.driver:
        driver = parse_driver(flags.driver)
    elif machine is not None and machine.driver and machine.driver.version and not cpu_only:
        driver = machine.driver.version
        assumptions.append(f"driver {driver}, detected by {machine.driver.source}")
    else:
        driver = None

    gpus.sort(key=lambda g: g.capability)
    return Request(version=version_text, spec=spec, os=os_name, arch=arch, python=python, driver=driver,
                   gpus=tuple(gpus), cpu_only=cpu_only, vendor=vendor, cudnn=cudnn, with_driver=flags.with_driver,
                   framework=framework, apple_gpu=apple, assumptions=tuple(assumptions))


def tf_line_for_cuda(kb: "KnowledgeBase", cuda: str, os_name: str) -> str | None:
    """The newest TensorFlow line whose tested GPU build on this OS uses a CUDA version ("10.0", "11.x")."""
    table_os = Os(os_name).table_os
    major = cuda[:-2] if cuda.endswith(".x") else None
    lines = [b.line for b in kb.tested_builds if b.os == table_os and b.gpu
             and (b.cuda == cuda or (major is not None and b.cuda.split(".")[0] == major))]
    return max(lines, key=Version) if lines else None


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


def apply_flags(kb: "KnowledgeBase", machine: "Machine | None",
                flags: MachineFlags) -> tuple["Machine", frozenset[str]]:
    """The machine with the flags' facts in place of detected ones (an empty machine when nothing was detected),
    and the facts the flags gave."""
    from dataclasses import replace

    from stackresolve.detect.model import CudnnInfo, DriverInfo, GpuInfo, Machine, OSInfo, PythonInfo, ToolkitInfo

    if machine is None:
        machine = Machine(os=OSInfo(system="unknown"), driver=None)
    given: set[str] = set()
    if flags.os:
        os_name = parse_os(flags.os)
        system = "linux" if os_name is Os.WSL2 else os_name.value
        machine = replace(machine, os=replace(machine.os, system=system, wsl=os_name is Os.WSL2))
        given.add("os")
    if flags.driver:
        machine = replace(machine, driver=DriverInfo(parse_driver(flags.driver), None, "flag --driver"))
        given.add("driver")
    if flags.gpu or flags.gpu_cc:
        target = lookup_gpu(kb, flags.gpu) if flags.gpu else None
        cc = target.cc if target else parse_cc(flags.gpu_cc, kb.known_ccs())
        name = target.name if target else None
        machine = replace(machine, gpus=(GpuInfo(0, name, cc, None, "flag", "flag"),))
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
