"""The pip side of every plan: the exact requirement lines (the framework, then the constraints that keep it
importable, each with its reason) and the steps before `pip install -r`. The conda, apt, Docker and PowerShell
plans embed these same lines."""

from __future__ import annotations

from stackresolve.model.enums import Delivery
from stackresolve.model.record import record
from stackresolve.model.stack import Resolution


@record
class PipLine:
    requirement: str
    why: str
    source: str


@record
class PipPlan:
    resolution: Resolution
    python: str
    lines: tuple[PipLine, ...]  # the framework first; empty for a container stack
    pre_install: tuple[str, ...] = ()  # what `pip install` needs first, in a run of its own (none today)
    cuda_note: str = ""  # where CUDA and cuDNN come from
    index_args: tuple[str, ...] = ()  # ("--index-url", URL): where the framework's build is; pip gets them first

    @property
    def requirements(self) -> tuple[str, ...]:
        return tuple(line.requirement for line in self.lines)

    @property
    def index_line(self) -> str:
        """The index option as a requirements-file line ("--index-url https://..."), "" for the default index."""
        return " ".join(self.index_args)

    @property
    def index_lines(self) -> tuple[str, ...]:
        """The index option as the first lines of a requirements file: none for the default index."""
        return (self.index_line,) if self.index_args else ()

    @property
    def requirements_file(self) -> tuple[str, ...]:
        """A requirements file that installs the plan (pip reads the index option from the file)."""
        return (*self.index_lines, *self.requirements)


# Where the packages installed beside a framework come from (the long per-release sources are in the stack).
COMPANION_SOURCES = {
    "pytorch": "pytorch.toml [[release]] torchvision/torchaudio: their wheels' Requires-Dist pin this torch",
    "jax": "jax.toml [[pairing]] (jax's jaxlib requirement) and [[jaxlib_wheels]]",
    "tensorflow": "apple.toml [[tensorflow_metal]] (tensorflow-metal's own pairing table)",
}


def decide(resolution: Resolution, kb=None, options=None) -> PipPlan:
    stack = resolution.stack
    fw = stack.framework
    lines: list[PipLine] = []
    if fw.requirement:
        lines.append(PipLine(fw.requirement, fw.why, fw.source))
        lines += [PipLine(c, f"the release made for {fw.distribution} {fw.version}", COMPANION_SOURCES.get(
                      fw.name, fw.source)) for c in fw.companions]
        lines += [PipLine(p.requirement, p.why, p.source) for p in stack.pip_pins]
    # Nothing must be installed first: NVIDIA's index is named in the file (nvidia-pyindex, which only wrote it into
    # pip's configuration, fails to build on current pip). The field stays for the lock's `pip_first`.
    return PipPlan(resolution, stack.python.recommended, tuple(lines), (), cuda_note(resolution), fw.index_args)


def cuda_note(resolution: Resolution) -> str:
    stack = resolution.stack
    if stack.cuda is None:
        return ""
    cuda, cudnn = stack.cuda, stack.cudnn
    if cuda.delivery is Delivery.CONTAINER:
        return f"CUDA {cuda.release} and cuDNN {cudnn.version} are inside the container {stack.framework.container}."
    minimum = stack.driver.minimum if stack.driver else None
    driver = f"the NVIDIA driver (>= {minimum})" if minimum else "the NVIDIA driver"
    cudnn_text = f"cuDNN {cudnn.version}" if cudnn else "cuDNN"
    if cuda.delivery is Delivery.BUNDLED:
        return (f"CUDA {cuda.version} and {cudnn_text} come with the {stack.framework.distribution} wheel; only "
                f"{driver} comes from the system.")
    if cuda.delivery is Delivery.PIP_WHEELS:
        via = f"the [{','.join(stack.framework.extras)}] extra" if stack.framework.extras and \
            stack.framework.vendor.value == "stock" else f"{stack.framework.distribution}'s dependencies"
        return (f"CUDA {cuda.release} and {cudnn_text}{' or newer' if cudnn and not cudnn.full_version else ''} "
                f"come as pip wheels through {via}; only {driver} comes from the system.")
    return (f"CUDA {cuda.version} and cuDNN {cudnn.version} come from the system, not from pip: install them with "
            f"--format apt (Ubuntu), conda or powershell (Windows); {driver} too.")


def pip_upgrade(python: str) -> str:
    """What `pip install --upgrade` gets in a fresh venv: the newest pip, or the newest one that still runs on an
    old Python (its venv's bundled pip knows only manylinux1 wheels; measured: scripts/verify_plans.py runs in
    constraints/verified_installs.toml, TensorFlow 1.8-1.12 on Python 3.6)."""
    major, minor = (int(x) for x in python.split("."))
    if (major, minor) >= (3, 7):
        return "pip"
    return '"pip<22"' if (major, minor) == (3, 6) else '"pip<21"'
