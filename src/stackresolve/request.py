"""What the user asked for, and the parsing of user-facing version strings into it."""

from __future__ import annotations

import re
from dataclasses import dataclass, field

from packaging.specifiers import InvalidSpecifier, SpecifierSet

from stackresolve.knowledge.model import cc_tuple

OPERATING_SYSTEMS = ("linux", "windows", "macos", "wsl2")
ARCHES = ("x86_64", "aarch64", "arm64")
VENDORS = ("any", "stock", "nvidia")


class InputError(ValueError):
    """Bad user input: the message is one line saying what was wrong and what is accepted."""


@dataclass(frozen=True)
class GpuTarget:
    name: str  # "" when only the compute capability is known
    cc: str
    architecture: str
    source: str  # "flag", "nvml", "nvidia-smi", "env:STACKRESOLVE_GPU_CC", ...

    def to_json(self) -> dict:
        return {"name": self.name or None, "compute_capability": self.cc, "architecture": self.architecture,
                "source": self.source}


@dataclass(frozen=True)
class Request:
    tf: str  # as the user wrote it
    tf_spec: SpecifierSet
    os: str = "linux"
    arch: str = "x86_64"
    python: str | None = None
    driver: str | None = None
    gpus: tuple[GpuTarget, ...] = ()  # empty with cpu_only False: an NVIDIA GPU of unknown model
    cpu_only: bool = False
    vendor: str = "any"
    with_driver: bool = False  # install plans also install the driver branch (apt)
    assumptions: tuple[str, ...] = field(default=(), compare=False)

    @property
    def driver_os(self) -> str:
        """WSL2 runs on the Windows driver, so its version is compared with NVIDIA's Windows column."""
        return "windows" if self.os in ("windows", "wsl2") else "linux"

    @property
    def wheel_platform(self) -> str:
        if self.os == "windows":
            return "windows"
        if self.os == "macos":
            return "macos_arm64" if self.arch in ("arm64", "aarch64") else "macos_x86_64"
        return "linux_aarch64" if self.arch in ("arm64", "aarch64") else "linux"

    def to_json(self) -> dict:
        return {
            "tf": self.tf,
            "tf_specifier": str(self.tf_spec) or "*",
            "os": self.os,
            "arch": self.arch,
            "python": self.python,
            "driver": self.driver,
            "gpus": [g.to_json() for g in self.gpus],
            "cpu_only": self.cpu_only,
            "vendor": self.vendor,
            "with_driver": self.with_driver,
            "assumptions": list(self.assumptions),
        }


_OPERATORS = ("==", "!=", "<=", ">=", "~=", "<", ">", "===")


def parse_tf_spec(text: str) -> SpecifierSet:
    """'1.15' -> ==1.15.*, '2' -> ==2.*, '2.3.4' -> ==2.3.4, '>=2.4,<2.8' as written, 'latest' -> any."""
    value = text.strip()
    if value.lower() in ("latest", "newest", "*", ""):
        return SpecifierSet()
    if value.startswith(_OPERATORS):
        try:
            return SpecifierSet(value)
        except InvalidSpecifier:
            raise InputError(f"--tf {text!r}: not a version specifier; use e.g. 1.15, 2.3.4, '>=2.4,<2.8' or latest")
    if not re.fullmatch(r"\d+(\.\d+){0,2}(\.\*)?", value):
        raise InputError(f"--tf {text!r}: not a TensorFlow version; use e.g. 1.15, 2, 2.3.4, '>=2.4,<2.8' or latest")
    if value.endswith(".*") or value.count(".") == 2:
        return SpecifierSet(f"=={value}")
    return SpecifierSet(f"=={value}.*")


def parse_python(text: str) -> str:
    value = text.strip()
    match = re.fullmatch(r"(?:python|py|cp)?\s*(\d)\.?(\d{1,2})(?:\.\d+)?", value, re.IGNORECASE)
    if not match or match.group(1) not in ("2", "3"):
        raise InputError(f"--python {text!r}: not a Python version; use major.minor, e.g. 3.7")
    return f"{match.group(1)}.{match.group(2)}"


def parse_driver(text: str) -> str:
    value = text.strip()
    if not re.fullmatch(r"\d{2,4}\.\d{1,3}(\.\d{1,3})?", value):
        raise InputError(f"--driver {text!r}: not an NVIDIA driver version; use e.g. 470.82.01 or 535.98")
    return value


def parse_cc(text: str, known: list[str]) -> str:
    value = text.strip().removeprefix("sm_")
    if re.fullmatch(r"\d{2,3}", value):  # "86" / "120" as in sm_86, sm_120
        value = f"{value[:-1]}.{value[-1]}"
    if not re.fullmatch(r"\d{1,2}\.\d", value):
        raise InputError(f"--gpu-cc {text!r}: not a compute capability; use major.minor, e.g. 8.6")
    if value not in known:
        lower = [c for c in known if cc_tuple(c) < cc_tuple(value)]
        higher = [c for c in known if cc_tuple(c) > cc_tuple(value)]
        near = ", ".join(x for x in (lower[-1:] + higher[:1]))
        raise InputError(f"--gpu-cc {value}: no NVIDIA GPU has this compute capability; nearest known: {near}")
    return value


def parse_os(text: str) -> str:
    value = text.strip().lower()
    aliases = {"win": "windows", "win32": "windows", "darwin": "macos", "osx": "macos", "mac": "macos",
               "ubuntu": "linux", "wsl": "wsl2"}
    value = aliases.get(value, value)
    if value not in OPERATING_SYSTEMS:
        raise InputError(f"--os {text!r}: unknown operating system; use one of {', '.join(OPERATING_SYSTEMS)}")
    return value


def parse_arch(text: str) -> str:
    value = {"amd64": "x86_64", "x64": "x86_64", "arm64": "arm64"}.get(text.strip().lower(), text.strip().lower())
    if value not in ARCHES:
        raise InputError(f"--arch {text!r}: unknown architecture; use one of {', '.join(ARCHES)}")
    return value


def parse_vendor(text: str) -> str:
    value = text.strip().lower()
    if value not in VENDORS:
        raise InputError(f"--vendor {text!r}: use one of {', '.join(VENDORS)}")
    return value


def parse_version_flag(text: str, flag: str) -> str:
    value = text.strip()
    if not re.fullmatch(r"\d+(\.\d+){1,3}", value):
        raise InputError(f"{flag} {text!r}: not a version; use e.g. 10.0 or 7.6.5")
    return value
