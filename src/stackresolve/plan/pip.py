"""The pip side of every plan: the exact requirement lines (the framework, then the constraints that keep it
importable, each with its reason) and the steps before `pip install -r`. The conda, apt, Docker and PowerShell
plans embed these same lines."""

from __future__ import annotations

from dataclasses import dataclass

from stackresolve.model.enums import Delivery
from stackresolve.model.stack import Resolution


@dataclass(frozen=True)
class PipLine:
    requirement: str
    why: str
    source: str


@dataclass(frozen=True)
class PipPlan:
    resolution: Resolution
    python: str
    lines: tuple[PipLine, ...]  # the framework first; empty for a container stack
    pre_install: tuple[str, ...] = ()  # what `pip install` needs first (nvidia-pyindex adds NVIDIA's index)
    cuda_note: str = ""  # where CUDA and cuDNN come from

    @property
    def requirements(self) -> tuple[str, ...]:
        return tuple(line.requirement for line in self.lines)


def decide(resolution: Resolution, kb=None, options=None) -> PipPlan:
    stack = resolution.stack
    fw = stack.framework
    lines: list[PipLine] = []
    if fw.requirement:
        lines.append(PipLine(fw.requirement, fw.why, fw.source))
        lines += [PipLine(p.requirement, p.why, p.source) for p in stack.pip_pins]
    from packaging.requirements import Requirement

    for line in lines:
        Requirement(line.requirement)  # every line is a requirement and nothing else (it lands in scripts)
    pre = ("nvidia-pyindex",) if fw.index is not None else ()
    return PipPlan(resolution, stack.python.recommended, tuple(lines), pre, cuda_note(resolution))


def cuda_note(resolution: Resolution) -> str:
    stack = resolution.stack
    if stack.cuda is None:
        return ""
    cuda, cudnn = stack.cuda, stack.cudnn
    if cuda.delivery is Delivery.CONTAINER:
        return f"CUDA {cuda.release} and cuDNN {cudnn.version} are inside the container {stack.framework.container}."
    minimum = stack.driver.minimum if stack.driver else None
    driver = f"the NVIDIA driver (>= {minimum})" if minimum else "the NVIDIA driver"
    if cuda.delivery is Delivery.PIP_WHEELS:
        via = f"the [{','.join(stack.framework.extras)}] extra" if stack.framework.extras and \
            stack.framework.vendor.value == "stock" else f"{stack.framework.distribution}'s dependencies"
        return (f"CUDA {cuda.release} and cuDNN {cudnn.version} come as pip wheels through {via}; only {driver} "
                f"comes from the system.")
    return (f"CUDA {cuda.version} and cuDNN {cudnn.version} come from the system, not from pip: install them with "
            f"--format apt (Ubuntu), conda or powershell (Windows); {driver} too.")
