"""The facts `detect` reports: frozen dataclasses and their JSON shape (schema "stackresolve/detect@1").

Every fact carries the probe that found it (`source`). Source names used by the probes:

    nvml               NVIDIA Management Library through nvidia-ml-py (pynvml), in a child process
    libcuda            CUDA driver API (libcuda.so.1 / nvcuda.dll) through ctypes, in the same child process
    nvidia-smi         `nvidia-smi --query-gpu=... --format=csv,nounits` (columns read by the header's names)
    nvidia-smi-xml     `nvidia-smi --query -u -x` (driver and CUDA numbers only)
    nvidia-smi-q       `nvidia-smi -q` (driver, CUDA number, GPU names, bus ids, memory)
    nvidia-smi-banner  the box printed by a bare `nvidia-smi` (last resort)
    sysfs              /sys/module/nvidia/version
    proc               /proc/driver/nvidia/version
    pci-sysfs          /sys/bus/pci/devices/*/{vendor,device,class}: an NVIDIA GPU, named by the PCI table
    lspci              `lspci -n`, where that folder cannot be read
    kfd-topology       /sys/class/kfd/kfd/topology/nodes/*/properties: AMD GPU agents (detect/amd.py)
    rocm_agent_enumerator  its output, where the KFD topology cannot be read
    sysfs-pci          /sys/bus/pci/devices/*: Intel GPUs, with the bound kernel driver (detect/intel.py)
    win32-videocontroller  PowerShell's Win32_VideoController PNPDeviceID (Windows)
    env:NAME           an override or a value read from environment variable NAME
A compute_capability_source "<probe> + gpus.toml" means the probe named the GPU and the GPU table gave the
value (through the look-up the caller passes to detect_machine).

Lists are tuples (the dataclasses are frozen); `to_json_dict()` turns them into lists.
"""

from __future__ import annotations

from dataclasses import field
from typing import Any, Mapping

SCHEMA = "stackresolve/detect@1"

from stackresolve.model.finding import Finding  # noqa: F401 (the probes import it from here)
from stackresolve.model.record import record


@record
class OSInfo:
    system: str  # linux | windows | macos (or platform.system().lower() for anything else)
    wsl: bool = False
    distro: str | None = None  # os-release ID on Linux ("ubuntu"), None elsewhere
    release: str | None = None  # os-release VERSION_ID, Windows release ("10"), macOS version ("14.4")
    arch: str | None = None  # x86_64 | aarch64 | ... (AMD64 -> x86_64, arm64 -> aarch64)
    container: bool = False
    kernel: str | None = None  # platform.release() on Linux/WSL (e.g. "5.15.146.1-microsoft-standard-WSL2")
    version: str | None = None  # Windows build ("10.0.22631") when known
    source: str = ""

    def to_json_dict(self) -> dict[str, Any]:
        return {"system": self.system, "wsl": self.wsl, "distro": self.distro, "release": self.release,
                "arch": self.arch, "container": self.container, "kernel": self.kernel,
                "version": self.version, "source": self.source}


@record
class DriverInfo:
    version: str | None  # "550.144.03", "572.60" (2 parts on Windows/WSL2); None when only cuda_max is known
    cuda_max: str | None  # highest CUDA version the driver supports ("12.4"); None when no probe reported it
    source: str  # probe that found `version` (or cuda_max when version is None)
    cuda_max_source: str | None = None  # probe that found cuda_max
    kernel_module: str | None = None  # "open" | "proprietary" when /proc/driver/nvidia/version says so

    def to_json_dict(self) -> dict[str, Any]:
        return {"version": self.version, "cuda_max": self.cuda_max, "source": self.source,
                "cuda_max_source": self.cuda_max_source, "kernel_module": self.kernel_module}


@record
class GpuInfo:
    index: int
    name: str | None  # as the probe printed it; banner names can be truncated ("NVIDIA GeForce ...")
    compute_capability: str | None  # "8.9"; None when no probe could report it (R470 nvidia-smi, banner):
    #                                 look it up from `name` in the GPU table
    memory_mib: int | None
    source: str
    compute_capability_source: str | None = None
    model: str | None = None  # the GPU table's model name, when the compute capability was looked up there
    pci_id: str | None = None  # "10de:1b06" when the PCI bus was read
    bus_id: str | None = None  # "0000:01:00.0" (sysfs / lspci), "00000000:01:00.0" (nvidia-smi), as printed

    def to_json_dict(self) -> dict[str, Any]:
        return {"index": self.index, "name": self.name, "compute_capability": self.compute_capability,
                "memory_mib": self.memory_mib, "source": self.source,
                "compute_capability_source": self.compute_capability_source, "model": self.model,
                "pci_id": self.pci_id, "bus_id": self.bus_id}


@record
class ToolkitInfo:
    version: str  # major.minor ("11.8")
    path: str | None
    source: str
    full_version: str | None = None  # "11.8.0" (version.json), "10.0.130" (version.txt), "11.8.89" (nvcc V)
    on_path: bool = False  # this toolkit's nvcc is the first `nvcc` on PATH

    def to_json_dict(self) -> dict[str, Any]:
        return {"version": self.version, "path": self.path, "source": self.source,
                "full_version": self.full_version, "on_path": self.on_path}


@record
class CudnnInfo:
    version: str  # "8.9.7"; only the major ("8") when the probe knows no more (libcudnn.so.8, cudnn64_8.dll)
    path: str | None
    source: str
    full_version: str | None = None  # "8.9.2.26" for pip / conda packages

    def to_json_dict(self) -> dict[str, Any]:
        return {"version": self.version, "path": self.path, "source": self.source,
                "full_version": self.full_version}


@record
class PackageInfo:
    """An installed distribution of the target interpreter, read from its dist-info / egg-info (never imported)."""

    name: str  # normalized ("typing-extensions", "nvidia-cudnn-cu12")
    version: str | None
    location: str | None = None  # site directory

    def to_json_dict(self) -> dict[str, Any]:
        return {"name": self.name, "version": self.version, "location": self.location}


@record
class PythonInfo:
    version: str | None
    executable: str
    source: str = ""  # "in-process" or "probe" (the stdlib-only script run in the target interpreter)
    prefix: str | None = None
    packages: tuple[PackageInfo, ...] = ()  # the pitfall packages and every nvidia-* wheel (_pyprobe.PIP_PACKAGES)
    nvidia_lib_dirs: tuple[str, ...] = ()  # site-packages/nvidia/<component>/lib (bin on Windows) that exist

    def package(self, name: str) -> PackageInfo | None:
        """The installed distribution called `name` (any spelling: "typing_extensions", "Typing-Extensions")."""
        # lazy: no start-up gain (already loaded by then); kept beside its use
        import re

        wanted = re.sub(r"[-_.]+", "-", name).lower()
        return next((p for p in self.packages if p.name == wanted), None)

    def to_json_dict(self) -> dict[str, Any]:
        return {"version": self.version, "executable": self.executable, "source": self.source,
                "prefix": self.prefix, "packages": [p.to_json_dict() for p in self.packages],
                "nvidia_lib_dirs": list(self.nvidia_lib_dirs)}


@record
class FrameworkInfo:
    """An installed deep-learning framework, read from its metadata and build files (never imported).

    `name` is "tensorflow", "pytorch" or "jax". What `cuda` holds, by framework:
      tensorflow  the CUDA of build_info.py ("11.2"; None when the build info does not say, as in TF 1.x on Linux)
      pytorch     `cuda` of torch/version.py as written there ("12.4"; None for a CPU or ROCm build); only when
                  that file cannot be read, the CUDA named by a "+cuXYZ" local version
      jax         the CUDA major of the CUDA plugin (jax-cuda12-plugin: "12"), or of a GPU jaxlib
                  ("0.4.23+cuda12.cudnn89": "12"; the old "+cuda111": "11.1")
    `gpu_build` says whether it is a CUDA (NVIDIA) build; a ROCm PyTorch is not (its `hip` and `variant` say ROCm).
    """

    name: str  # "tensorflow" | "pytorch" | "jax"
    version: str | None  # the distribution's version, as its metadata says ("2.5.1", "1.15.5+nv23.03")
    cuda: str | None  # CUDA it was built with (see above); None when its files do not say
    cudnn: str | None  # cuDNN it was built with (TF build_info.py, a GPU jaxlib's "cudnn89" -> "8.9"); else None
    gpu_build: bool | None  # a CUDA build; None when unknown
    package: str | None = None  # the installed distribution ("tensorflow-gpu", "torch", "jax")
    path: str | None = None  # site directory it was found in
    source: str = ""
    variant: str | None = None  # the build variant: PyTorch "cu124" | "cpu" | "rocm6.2" | "xpu" (the local version
    #                             "+cu124" when there is one, else derived from torch/version.py); JAX "cuda12" |
    #                             "cuda13" (the plugin), "cuda12.cudnn89" (a GPU jaxlib's local version) or "cpu"
    module_version: str | None = None  # the version the module itself reports, read from its version.py:
    #                                    torch.__version__ "2.5.1+cu124" where the dist-info says "2.5.1"
    git_version: str | None = None  # torch/version.py git_version (the commit it was built from)
    hip: str | None = None  # torch/version.py hip: the HIP (ROCm) version of a ROCm build ("6.2.41133-dd7f95766")
    companions: tuple[PackageInfo, ...] = ()  # the distributions that go with it: torchvision and torchaudio;
    #                                           jaxlib and the jax-cudaNN-plugin / -pjrt wheels

    def to_json_dict(self) -> dict[str, Any]:
        return {"name": self.name, "version": self.version, "cuda": self.cuda, "cudnn": self.cudnn,
                "gpu_build": self.gpu_build, "package": self.package, "path": self.path,
                "source": self.source, "variant": self.variant, "module_version": self.module_version,
                "git_version": self.git_version, "hip": self.hip,
                "companions": [c.to_json_dict() for c in self.companions]}


@record
class ProbeRecord:
    """What one probe did: ok | absent (nothing to run or read) | failed | timeout | skipped. "timeout" also
    covers a command not started because the detection budget was spent (the detail says which)."""

    name: str
    status: str
    detail: str = ""
    seconds: float = 0.0

    def to_json_dict(self) -> dict[str, Any]:
        return {"name": self.name, "status": self.status, "detail": self.detail,
                "seconds": round(self.seconds, 4)}


@record
class AmdGpuInfo:
    """One AMD GPU agent: a KFD topology node with SIMDs (CPU agents skipped) or one rocm_agent_enumerator line."""

    index: int
    gfx: str  # LLVM target, "gfx942" (KFD gfx_target_version 90402 -> gfx942; 100300 -> gfx1030)
    source: str  # "kfd-topology" | "rocm_agent_enumerator"
    name: str | None = None  # model name from constraints/amd.toml, when the PCI device id is known
    pci_id: str | None = None  # "1002:74a1" (vendor:device, lowercase hex)


@record
class IntelGpuInfo:
    """One Intel GPU: a PCI function of class 0x03xxxx and vendor 0x8086."""

    index: int
    pci_id: str  # "8086:56a0"
    source: str  # "sysfs-pci"
    name: str | None = None  # model name from constraints/intel.toml, when the PCI device id is known
    kernel_driver: str | None = None  # "i915" | "xe"; None when no driver is bound
    bus_id: str | None = None  # "0000:03:00.0"


@record
class RocmInfo:
    """The ROCm user-space install and the amdgpu kernel driver."""

    version: str | None  # "6.2.4" from <path>/.info/version (or version-dev), None when unreadable
    path: str | None  # "/opt/rocm" (or $ROCM_PATH); None when only the kernel driver was found
    source: str
    amdgpu_version: str | None = None  # /sys/module/amdgpu/version (AMD's DKMS driver); None: in-tree driver


@record
class DeviceAccess:
    """Whether this user can open a GPU device node (ROCm needs /dev/kfd and a /dev/dri/renderD* node)."""

    path: str  # "/dev/kfd", "/dev/dri/renderD128"
    exists: bool
    usable: bool  # exists and this process may open it read-write
    group: str | None = None  # owning group name ("render", "video") when readable


@record
class Machine:
    os: OSInfo
    driver: DriverInfo | None
    gpus: tuple[GpuInfo, ...] = ()
    cuda_toolkits: tuple[ToolkitInfo, ...] = ()
    cudnn: tuple[CudnnInfo, ...] = ()
    python: PythonInfo | None = None
    frameworks: tuple[FrameworkInfo, ...] = ()
    env: Mapping[str, str] = field(default_factory=dict)
    findings: tuple[Finding, ...] = ()
    probes: tuple[ProbeRecord, ...] = ()
    amd_gpus: tuple[AmdGpuInfo, ...] = ()
    intel_gpus: tuple[IntelGpuInfo, ...] = ()
    rocm: RocmInfo | None = None
    gpu_devices: tuple[DeviceAccess, ...] = ()  # /dev/kfd and /dev/dri/renderD* as this user sees them
    level_zero: str | None = None  # path of the Level Zero loader (libze_loader.so.1 / ze_loader.dll) when found

    def to_json_dict(self) -> dict[str, Any]:
        """The `stackresolve/detect@1` document (plus the added fields "env", "probes" and the AMD / Intel ones)."""
        return {
            "schema": SCHEMA,
            "os": self.os.to_json_dict(),
            "driver": self.driver.to_json_dict() if self.driver is not None else None,
            "gpus": [g.to_json_dict() for g in self.gpus],
            "cuda_toolkits": [t.to_json_dict() for t in self.cuda_toolkits],
            "cudnn": [c.to_json_dict() for c in self.cudnn],
            "python": self.python.to_json_dict() if self.python is not None else None,
            "frameworks": [f.to_json_dict() for f in self.frameworks],
            "findings": [f.to_json() for f in self.findings],
            "env": dict(self.env),
            "probes": [p.to_json_dict() for p in self.probes],
            "amd_gpus": [_fields_json(g) for g in self.amd_gpus],
            "intel_gpus": [_fields_json(g) for g in self.intel_gpus],
            "rocm": _fields_json(self.rocm) if self.rocm is not None else None,
            "gpu_devices": [_fields_json(d) for d in self.gpu_devices],
            "level_zero": self.level_zero,
        }


def _fields_json(rec) -> dict[str, Any]:
    """The JSON object of a record whose fields are all plain values (the AMD / Intel records): field -> value."""
    # lazy: no start-up gain (already loaded by then); kept beside its use
    from dataclasses import fields

    return {f.name: getattr(rec, f.name) for f in fields(rec)}
