"""What the user asked for: a Request, built from typed values (a RequestInput) and the detected Machine.

The command line's text becomes a RequestInput in request/parse.py, the one place user text is rejected; doctor, explain
and fleet build their RequestInput from values they hold typed, or derive a request from a request
(`dataclasses.replace`). Pure: the caller passes the detected machine (or None); nothing here probes the system.
"""

from __future__ import annotations

from dataclasses import field
from typing import TYPE_CHECKING

from packaging.specifiers import SpecifierSet
from packaging.version import Version

from stackresolve.model.enums import Arch, Framework, Os, Vendor
from stackresolve.model.record import record
from stackresolve.model.values import ComputeCapability, DriverVersion

if TYPE_CHECKING:  # pragma: no cover
    from stackresolve.model.accelerator import AcceleratorTarget
    from stackresolve.model.machine import Machine
    from stackresolve.knowledge.base import KnowledgeBase

# CPython minor releases (python.org/downloads; 3.15.0 final on 2026-10-01 per PEP 790's schedule). A --python
# outside this list names no Python at all: bad input, not a conflict.
PYTHON_RELEASES = ("2.0", "2.1", "2.2", "2.3", "2.4", "2.5", "2.6", "2.7", "3.0", "3.1", "3.2", "3.3", "3.4", "3.5",
                   "3.6", "3.7", "3.8", "3.9", "3.10", "3.11", "3.12", "3.13", "3.14", "3.15")


class InputError(ValueError):
    """Bad user input: the message is one line saying what was wrong and what is accepted."""


@record
class GpuTarget:
    name: str  # "" when only the compute capability is known
    cc: ComputeCapability
    architecture: str
    source: str  # "flag", "nvml", "nvidia-smi", "env:STACKRESOLVE_GPU_CC", ...
    # A request over many machines (fleet): the driver of the machines this GPU is in. Whether a driver is new
    # enough for a GPU's architecture is a fact of its own machine; the request's `driver` (the fleet's lowest)
    # still decides the CUDA a stack may use.
    driver: DriverVersion | None = None

    def __post_init__(self) -> None:
        # typed values, parsed once where the text came in: a string here is a missed edge
        if type(self.cc) is not ComputeCapability or not (self.driver is None or type(self.driver) is DriverVersion):
            raise TypeError(f"GpuTarget takes a ComputeCapability and a DriverVersion, not {self.cc!r}, "
                            f"{self.driver!r}")

    @property
    def label(self) -> str:
        return f"{self.name or 'the GPU'} (compute capability {self.cc})"

    @property
    def capability(self) -> ComputeCapability:
        """`cc` (the name older callers use)."""
        return self.cc

    def to_json(self) -> dict:
        out = {"name": self.name or None, "compute_capability": str(self.cc), "architecture": self.architecture,
               "source": self.source, "vendor": "nvidia"}
        if self.driver is not None:
            out["driver"] = str(self.driver)
        return out


@record
class Request:
    version: str  # the framework version as the user wrote it ("1.15", "latest", ">=2.4,<2.8")
    spec: SpecifierSet
    os: Os = Os.LINUX
    arch: Arch = Arch.X86_64
    python: str | None = None
    driver: DriverVersion | None = None
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
    # AMD or Intel GPUs (one vendor; then gpus is empty and cpu_only True: no CUDA): planned by resolve/rocm.py
    accelerators: tuple[AcceleratorTarget, ...] = ()

    @property
    def accelerator_vendor(self) -> str | None:
        """"amd" | "intel" when the request targets AMD or Intel GPUs."""
        return self.accelerators[0].vendor if self.accelerators else None

    def __post_init__(self) -> None:
        if not (self.driver is None or type(self.driver) is DriverVersion):  # parsed where the text came in
            raise TypeError(f"Request takes a DriverVersion, not {self.driver!r}")

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
            "driver": None if self.driver is None else str(self.driver),
            "gpus": [g.to_json() for g in self.gpus],
            "cpu_only": self.cpu_only,
            "vendor": self.vendor.value if self.vendor else "any",
            "cudnn": self.cudnn,
            "with_driver": self.with_driver,
            "assumptions": list(self.assumptions),
        } | ({"accelerators": [a.to_json() for a in self.accelerators]} if self.accelerators else {})



class RequestInput:
    """What was asked, as typed values; None (or empty) where the detected machine, else a default, decides.

    An immutable plain class with __slots__, not a dataclass: every plan makes one, and defining a frozen dataclass
    of 13 fields costs milliseconds at import (model/values.py says how that was measured)."""

    __slots__ = ("framework", "version", "spec", "os", "arch", "gpus", "apple_gpu", "driver", "python", "cudnn",
                 "cpu", "vendor", "with_driver", "accelerators")

    def __init__(self, framework: Framework = Framework.TENSORFLOW, version: str = "latest",
                 spec: SpecifierSet | None = None, *, os: Os | None = None, arch: Arch | None = None,
                 gpus: tuple[GpuTarget, ...] = (), apple_gpu: str | None = None, driver: DriverVersion | None = None,
                 python: str | None = None, cudnn: str | None = None, cpu: bool = False, vendor: Vendor | None = None,
                 with_driver: bool = False, accelerators: tuple["AcceleratorTarget", ...] = ()) -> None:
        values = {
            "framework": framework,
            "version": version,  # as the user wrote it (the Request keeps it: "TensorFlow 1.15")
            "spec": SpecifierSet() if spec is None else spec,  # the releases `version` names
            "os": os,
            "arch": arch,
            "gpus": gpus,  # NVIDIA GPUs given (by model or compute capability)
            "apple_gpu": apple_gpu,  # "Apple M2": an Apple Silicon GPU given by name
            "driver": driver,
            "python": python,  # a CPython minor release, "3.7"
            "cudnn": cudnn,  # a cuDNN release the knowledge base knows, "8.6"
            "cpu": cpu,
            "vendor": vendor,  # None: any vendor's build
            "with_driver": with_driver,
            "accelerators": accelerators,  # AMD or Intel GPUs given (by model or gfx target)
        }
        for name, value in values.items():
            object.__setattr__(self, name, value)

    def _values(self) -> dict:
        return {name: getattr(self, name) for name in self.__slots__}

    def replace(self, **changes) -> "RequestInput":
        """This input with some values changed (as dataclasses.replace)."""
        return RequestInput(**{**self._values(), **changes})

    def __setattr__(self, name, value):
        raise AttributeError("RequestInput is immutable")

    def __eq__(self, other):
        return self._values() == other._values() if type(other) is RequestInput else NotImplemented

    __hash__ = None  # compared, never a key

    def __repr__(self) -> str:
        return "RequestInput(" + ", ".join(f"{name}={value!r}" for name, value in self._values().items()) + ")"


def known_releases(kb: "KnowledgeBase", framework: Framework) -> list[Version]:
    """Every release of a framework the knowledge base knows."""
    if framework is Framework.PYTORCH:
        return [r.key for r in kb.frameworks.torch_releases]
    if framework is Framework.JAX:
        return [Version(v) for v in kb.frameworks.jax_versions()]
    return [w.key for w in kb.wheels]


def gpu_from_cc(kb: "KnowledgeBase", cc: ComputeCapability, name: str, source: str) -> GpuTarget:
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
    """The machine's GPUs as targets; a GPU whose compute capability no probe reported is looked up by name.
    The detected report holds text its probes already read with ComputeCapability.parse; the table's too."""
    gpus, unknown = [], []
    for g in machine.gpus:
        probe = g.compute_capability_source or g.source
        if g.compute_capability is None:
            known = kb.find_gpu(g.name) if g.name else None
            if known is None:
                unknown.append(g.name or f"GPU {g.index}")
                continue
            gpus.append(GpuTarget(known.name, ComputeCapability.parse(known.cc), known.architecture,
                                  f"{g.source} + gpus.toml"))
        else:
            gpus.append(gpu_from_cc(kb, ComputeCapability.parse(g.compute_capability), g.name or "", probe))
    return gpus, unknown


def detected_accelerators(kb: "KnowledgeBase", machine: "Machine",
                          framework: Framework) -> tuple[tuple[AcceleratorTarget, ...], list[str]]:
    """The machine's AMD GPUs (else its Intel GPUs) as targets, with the assumptions that say so. A GPU no PyTorch
    build can use (a gfx target no wheel carries nor reaches through the override, an Intel GPU of unknown or
    undocumented family, any framework but PyTorch) leaves the plan CPU-only, as before AMD and Intel were known:
    an integrated GPU must not turn a CPU plan into an impossible one."""
    # lazy: start-up (only this path needs model.accelerator)
    from stackresolve.model.accelerator import AMD, INTEL, AcceleratorTarget

    ak = kb.accelerators
    if machine.amd_gpus:
        targets = []
        for g in machine.amd_gpus:
            model = ak.amd_gpu_by_pci(g.pci_id.split(":")[-1]) if g.pci_id else None
            name = g.name or (model.name if model else "")
            models = ak.amd_gpus_of_gfx(g.gfx)
            architecture = model.architecture if model else (models[0].architecture if models else "")
            target = AcceleratorTarget(AMD, name, g.gfx, "", architecture, g.source)
            if target not in targets:
                targets.append(target)
        label = ", ".join(t.label for t in targets)
        if framework is not Framework.PYTORCH:
            return (), [f"AMD GPU {label} detected: stackresolve plans PyTorch on ROCm only, so this "
                        f"{framework.display} plan is CPU-only"]
        reachable = {t for v in ak.torch_rocm for t in v.gfx}
        lost = [t for t in targets if t.gfx not in reachable and
                not (ak.override_for(t.gfx) and ak.override_for(t.gfx).runs_as in reachable)]
        if lost:
            return (), [f"AMD GPU {', '.join(t.label for t in lost)} detected: no PyTorch ROCm wheel carries its "
                        f"target, so the plan is CPU-only (pass --gpu-gfx {lost[0].gfx} to see why)"]
        return tuple(targets), [f"GPU: {label}, detected (ROCm)"]
    known = []
    for g in machine.intel_gpus:
        model = ak.intel_gpu_by_pci(g.pci_id.split(":")[-1])
        if model is not None and any(model.family in x.families for x in ak.torch_xpu):
            target = AcceleratorTarget(INTEL, model.name, "", model.family, model.architecture, g.source)
            if target not in known:
                known.append(target)
    if not known:
        return (), ["Intel GPU detected, of no family PyTorch's XPU builds document: CPU-only stack (pass --gpu "
                    "'Arc A770' or another model stackresolve gpus lists)"]
    if framework is not Framework.PYTORCH:
        return (), [f"Intel GPU {known[0].label} detected: stackresolve plans PyTorch on XPU only, so this "
                    f"{framework.display} plan is CPU-only"]
    return tuple(known[:1]), [f"GPU: {known[0].label}, detected (XPU)"]


def build_request(kb: "KnowledgeBase", given: RequestInput, machine: "Machine | None") -> Request:
    """What `given` says wins; what it leaves out comes from the detected machine (None: nothing was detected),
    each such fact named in the request's assumptions."""
    assumptions: list[str] = []
    detected_os = machine_os(machine) if machine is not None else None
    apple = given.apple_gpu
    if given.os is not None:
        os_name = given.os
    elif apple:
        os_name = Os.MACOS
    elif detected_os is not None:
        os_name = detected_os
        assumptions.append(f"operating system {os_name}, detected")
    else:
        os_name = Os.LINUX
        assumptions.append("operating system linux (not given; pass --os linux|windows|macos|wsl2)")
    detected_arch = machine_arch(machine) if machine is not None else None
    arch = given.arch or (Arch.ARM64 if apple else detected_arch or Arch.X86_64)
    if os_name is Os.MACOS and arch.is_arm and not given.cpu and not given.gpus and not apple \
            and (detected_os is Os.MACOS or given.os is not None):
        apple = "Apple Silicon GPU"
        assumptions.append("macOS on arm64: the Apple Silicon GPU, through Metal (pass --cpu for a CPU-only plan)")

    gpus: list[GpuTarget] = []
    accelerators: tuple["AcceleratorTarget", ...] = ()
    if apple:
        pass
    elif given.gpus:
        gpus = list(given.gpus)
    elif given.accelerators and not given.cpu:
        accelerators = given.accelerators
    elif machine is not None and not machine.gpus and not given.cpu and \
            (getattr(machine, "amd_gpus", ()) or getattr(machine, "intel_gpus", ())):
        accelerators, notes = detected_accelerators(kb, machine, given.framework)
        assumptions += notes
    elif machine is not None and machine.gpus and not given.cpu:
        gpus, unknown = detected_gpus(kb, machine)
        assumptions += [f"GPU {name!r}: compute capability unknown; pass --gpu-cc X.Y" for name in unknown]
        names = ", ".join(f"{g.name} (compute capability {g.cc})" if g.name else
                          f"a GPU of compute capability {g.cc} ({g.source})" for g in gpus)
        if names:
            assumptions.append(f"GPU: {names}, detected")
        if getattr(machine, "amd_gpus", ()):  # one vendor per plan: the NVIDIA GPUs, as before AMD was known
            assumptions.append(f"an AMD GPU ({', '.join(g.gfx for g in machine.amd_gpus)}) is here too: this plan is "
                               f"for the NVIDIA GPUs (pass --gpu or --gpu-gfx to plan for the AMD one)")

    cpu_only = given.cpu or apple is not None or bool(accelerators)
    if given.cpu:
        apple = None
    if not cpu_only and not gpus:
        if os_name is Os.MACOS:
            cpu_only = True
            assumptions.append(f"macOS: {given.framework.display} has no CUDA builds there, so the stack is CPU-only")
        elif machine is not None:
            cpu_only = True
            assumptions.append("no NVIDIA GPU found on this machine: CPU-only stack (pass --gpu NAME or "
                               "--gpu-cc X.Y to plan for a GPU elsewhere)")
        else:
            assumptions.append("GPU not given: any NVIDIA GPU the official build supports (pass --gpu NAME or "
                               "--gpu-cc X.Y to check yours, --cpu for a CPU-only stack)")
    if cpu_only and gpus:
        gpus = []

    if given.driver is not None:
        driver = given.driver
    elif machine is not None and machine.driver and machine.driver.version and not cpu_only:
        # read by the probe's tolerant reading (detect/machine.py), so it parses here
        driver = DriverVersion.parse(machine.driver.version, tolerant=True)
        assumptions.append(f"driver {driver}, detected by {machine.driver.source}")
    else:
        driver = None

    gpus.sort(key=lambda g: g.cc)
    return Request(version=given.version, spec=given.spec, os=os_name, arch=arch, python=given.python,
                   driver=driver, gpus=tuple(gpus), cpu_only=cpu_only, vendor=given.vendor, cudnn=given.cudnn,
                   with_driver=given.with_driver, framework=given.framework, apple_gpu=apple,
                   assumptions=tuple(assumptions), accelerators=accelerators)
