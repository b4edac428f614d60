"""Closed sets of values, as str-valued enums: they compare equal to their JSON spelling ("linux"), so the JSON
documents keep their shape while code gets a checked type."""

from __future__ import annotations

from enum import Enum


class _Named(str, Enum):
    def __str__(self) -> str:  # f-strings and str() give the JSON spelling, not "Os.LINUX"
        return self.value

    @classmethod
    def names(cls) -> tuple[str, ...]:
        return tuple(m.value for m in cls)


class Os(_Named):
    LINUX = "linux"
    WINDOWS = "windows"
    MACOS = "macos"
    WSL2 = "wsl2"

    @property
    def driver_os(self) -> "Os":
        """WSL2 runs on the Windows driver, so its version is compared with NVIDIA's Windows column."""
        return Os.WINDOWS if self in (Os.WINDOWS, Os.WSL2) else Os.LINUX

    @property
    def wheel_os(self) -> "Os":
        """Which OS's wheels install: WSL2 is Linux user space."""
        return Os.LINUX if self is Os.WSL2 else self

    @property
    def table_os(self) -> "Os":
        """Which column of the Linux/Windows tables (TensorFlow's tested builds, its wheels' compiled
        architectures and cuDNN artifacts, conda's CUDA packages) answers for this OS: Windows its own, every
        other OS Linux's (WSL2 is Linux user space; macOS has no CUDA column)."""
        return Os.WINDOWS if self is Os.WINDOWS else Os.LINUX


class Arch(_Named):
    X86_64 = "x86_64"
    AARCH64 = "aarch64"
    ARM64 = "arm64"

    @property
    def is_arm(self) -> bool:
        return self in (Arch.AARCH64, Arch.ARM64)


class Severity(_Named):
    ERROR = "error"
    WARNING = "warning"
    INFO = "info"

    @property
    def rank(self) -> int:
        """Most serious first."""
        return _SEVERITY_RANK[self]


_SEVERITY_RANK = {Severity.ERROR: 0, Severity.WARNING: 1, Severity.INFO: 2}


class GpuSupport(_Named):
    """How a framework build runs on a GPU: machine code for it, PTX the driver compiles at first start, no code
    at all, or a CPU-only stack."""

    NATIVE = "native"
    UNKNOWN = "unknown"
    PTX_JIT = "ptx-jit"
    UNSUPPORTED = "unsupported"
    CPU_ONLY = "cpu-only"
    METAL = "metal"  # an Apple GPU through Metal (tensorflow-metal, PyTorch's MPS backend)

    @property
    def rank(self) -> int:
        """Best first: native < unknown < ptx-jit < unsupported."""
        return _SUPPORT_RANK[self]


_SUPPORT_RANK = {GpuSupport.NATIVE: 0, GpuSupport.CPU_ONLY: 0, GpuSupport.METAL: 0, GpuSupport.UNKNOWN: 1, GpuSupport.PTX_JIT: 2,
                 GpuSupport.UNSUPPORTED: 3}


class Delivery(_Named):
    """Where CUDA and cuDNN come from for a stack."""

    SYSTEM = "system"  # installed on the machine (apt, conda, the Windows installer), loaded by soname
    PIP_WHEELS = "pip-wheels"  # NVIDIA's pip wheels the framework depends on (tensorflow[and-cuda], nvidia-tensorflow)
    CONTAINER = "container"  # inside the image (NGC containers)
    BUNDLED = "bundled"  # inside the framework's own wheel (PyTorch's Windows and 1.x Linux wheels)


class Vendor(_Named):
    STOCK = "stock"  # the framework's own builds on the default package index
    NVIDIA = "nvidia"  # NVIDIA's TF 1.15 builds (nvidia-tensorflow, NGC containers; no longer maintained)


class Framework(_Named):
    """The deep-learning framework a stack is planned for."""

    TENSORFLOW = "tensorflow"
    PYTORCH = "pytorch"
    JAX = "jax"

    @property
    def display(self) -> str:
        return _DISPLAY[self]

    @property
    def flag(self) -> str:
        """The plan option that asks for it."""
        return _FLAG[self]

    @property
    def distribution(self) -> str:
        """The pip project of its stock builds."""
        return _DISTRIBUTION[self]


_DISPLAY = {Framework.TENSORFLOW: "TensorFlow", Framework.PYTORCH: "PyTorch", Framework.JAX: "JAX"}
_FLAG = {Framework.TENSORFLOW: "--tf", Framework.PYTORCH: "--torch", Framework.JAX: "--jax"}
_DISTRIBUTION = {Framework.TENSORFLOW: "tensorflow", Framework.PYTORCH: "torch", Framework.JAX: "jax"}
