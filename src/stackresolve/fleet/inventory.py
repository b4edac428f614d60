"""The typed values of a fleet: machines as their inventory describes them, and groups of alike machines."""

from __future__ import annotations

from dataclasses import dataclass, field
from typing import Mapping

from stackresolve.model.enums import Arch, Os
from stackresolve.model.values import ComputeCapability, DriverVersion


def printable(text: str | None) -> str | None:
    """Text from an inventory as it may reach the terminal: control and other unprintable characters become '?'."""
    if text is None:
        return None
    return "".join(c if c.isprintable() else "?" for c in str(text))


class FleetInputError(ValueError):
    """Bad fleet input: one line per problem, each naming the file and the machine."""

    def __init__(self, problems: list[str]):
        super().__init__("; ".join(problems))
        self.problems = tuple(problems)


@dataclass(frozen=True)
class GpuFact:
    """One kind of GPU in a machine: the name the inventory gives and its compute capability."""

    name: str  # as reported: "Tesla-T4" (GFD label), "NVIDIA GeForce RTX 4090" (detect); "" when not given
    cc: ComputeCapability | None  # 7.5; None for an AMD or Intel GPU
    model: str = ""  # the knowledge base's model name, when the name was found there ("Tesla T4")
    vendor: str = "nvidia"  # "nvidia" | "amd" | "intel"
    gfx: str = ""  # an AMD GPU's LLVM target ("gfx942"); "" when unknown
    family: str = ""  # an Intel GPU's device family ("data-center-max", "arc-a"); "" when unknown

    def __post_init__(self) -> None:
        for name in ("name", "model", "gfx", "family"):
            object.__setattr__(self, name, printable(getattr(self, name)))

    @property
    def label(self) -> str:
        what = self.cc if self.vendor == "nvidia" else (self.gfx or self.family or f"{self.vendor}, target unknown")
        return f"{self.model or self.name or 'GPU'} ({what})"


@dataclass(frozen=True)
class Member:
    """One machine of the fleet."""

    name: str  # node name, report file name or inventory name
    origin: str  # the file it was read from ("standard input" for -)
    os: Os = Os.LINUX
    arch: Arch = Arch.X86_64
    gpus: tuple[GpuFact, ...] = ()  # one entry per kind of GPU; empty: a CPU machine
    driver: DriverVersion | None = None  # the NVIDIA driver version; None when the inventory does not say
    gpu_count: int | None = None
    distro: str | None = None  # os-release ID ("ubuntu")
    release: str | None = None  # os-release VERSION_ID ("22.04")
    labels: Mapping[str, str] | None = field(default=None, compare=False)  # Kubernetes node labels
    pool: str | None = None  # the node pool a managed Kubernetes labels its nodes with
    notes: tuple[str, ...] = ()  # what the reader assumed ("no GPU labels: a CPU machine")

    def __post_init__(self) -> None:  # what is shown of the input is printable (labels stay as they are)
        for name in ("name", "origin", "distro", "release", "pool"):
            object.__setattr__(self, name, printable(getattr(self, name)))

    @property
    def facts(self) -> tuple:
        """What decides a stack: machines with equal facts form one group. The GPUs in the order of their compute
        capabilities as values (8.6 before 10.0; an AMD or Intel GPU, without one, last), then names."""
        gpus = tuple(sorted({(g.cc, g.model or g.name, g.vendor, g.gfx, g.family) for g in self.gpus},
                            key=lambda fact: (fact[0] is None, fact)))
        return (self.os, self.arch, self.distro, self.release, gpus, self.driver)


@dataclass(frozen=True)
class Group:
    """Machines with the same facts; each group is one line of the answer."""

    name: str
    members: tuple[Member, ...]

    @property
    def first(self) -> Member:
        return self.members[0]

    @property
    def os(self) -> Os:
        return self.first.os

    @property
    def arch(self) -> Arch:
        return self.first.arch

    @property
    def gpus(self) -> tuple[GpuFact, ...]:
        return self.first.gpus

    @property
    def driver(self) -> DriverVersion | None:
        return self.first.driver

    @property
    def cpu(self) -> bool:
        return not self.gpus

    @property
    def vendor(self) -> str:
        """"nvidia", or the first other vendor among the group's GPUs ("amd", "intel")."""
        return next((g.vendor for g in self.gpus if g.vendor != "nvidia"), "nvidia")

    @property
    def gpu_text(self) -> str:
        return ", ".join(g.label for g in self.gpus) or "no NVIDIA GPU"

    @property
    def system_text(self) -> str:
        distro = f" {self.first.distro} {self.first.release or ''}".rstrip() if self.first.distro else ""
        return f"{self.os.value}{distro} {self.arch.value}"
