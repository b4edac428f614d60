"""The Docker plan: a base image that carries the stack's CUDA and cuDNN, plus the pip plan.

Base image, in order of preference (facts from constraints/docker.toml):
1. the official tensorflow/tensorflow GPU image of this exact release, then of the same release line: TensorFlow's
   own build, so its CUDA/cuDNN match by construction; the preinstalled TensorFlow is replaced by the exact pins;
2. an nvidia/cuda runtime+cuDNN image for the stack's CUDA line that NVIDIA still publishes, with the Python the
   stack needs (the distro python3, else the deadsnakes PPA) in a virtual environment;
3. the same for a tag NVIDIA has deleted, with a warning (such a plan cannot be pulled, only rebuilt from
   NVIDIA's container scripts).
Where the image's cuDNN is not the stack's, the plan installs the stack's exact libcudnn package from NVIDIA's
repository (which these images have configured). Stacks that get CUDA and cuDNN as pip wheels, and CPU stacks,
use python:<X.Y>-slim; NVIDIA's NGC stacks use their container.
"""

from __future__ import annotations

from dataclasses import dataclass, replace

from packaging.version import Version

from stackresolve.knowledge.rules import cudnn_accepts, cudnn_rule_text
from stackresolve.model.enums import Delivery, Os
from stackresolve.model.stack import Resolution, Stack
from stackresolve.plan import PlanOptions, Refusal, environment_name, import_check_code
from stackresolve.plan import pip as pip_plan
from stackresolve.plan.apt import choose_cudnn

PYTHON_IMAGE_SOURCE = "Docker Official Image python (library/python on Docker Hub), tag <X.Y>-slim"


@dataclass(frozen=True)
class Base:
    image: str  # what follows FROM
    kind: str  # "tensorflow" | "cuda" | "python" | "ngc"
    python: str  # the CPython minor the plan installs into
    why: str
    source: str
    warning: str = ""
    python_from_ppa: bool = False  # nvidia/cuda base: python comes from the deadsnakes PPA
    cudnn: str | None = None  # the cuDNN the image carries (major.minor.patch)
    ubuntu: str | None = None


@dataclass(frozen=True)
class DockerPlan:
    resolution: Resolution
    base: Base
    pip: pip_plan.PipPlan  # the pip plan for the image's Python (the stack's, re-resolved if the image's differs)
    cudnn_packages: tuple[str, ...] = ()  # apt pins that replace the image's cuDNN with the stack's
    cudnn_note: str = ""
    check_code: str = ""

    @property
    def tag(self) -> str:
        return environment_name(self.resolution.stack)


def _same_cudnn(stack: Stack, image_cudnn: str) -> bool:
    return Version(image_cudnn).release[:3] == Version(stack.cudnn.version).release[:3]


def _for_python(resolution: Resolution, kb, python: str) -> Resolution | None:
    """The same stack resolved for another Python (the pip pins can depend on it), or None if it changes."""
    from stackresolve.resolve import resolve

    stack = resolution.stack
    if python == stack.python.recommended:
        return resolution
    other = resolve(kb, replace(resolution.request, python=python), with_alternatives=False)
    if other.stack is None or other.stack.framework.requirement != stack.framework.requirement:
        return None
    if other.stack.cuda is None or other.stack.cuda.version != stack.cuda.version:
        return None
    if other.stack.cudnn.version != stack.cudnn.version:
        return None
    return other


def _python_fits(stack: Stack, resolution: Resolution, python: str) -> bool:
    if resolution.request.python:
        return python == resolution.request.python
    return python in stack.python.available


def _cudnn_packages(kb, stack: Stack, ubuntu: str) -> tuple[str, ...] | None:
    """The apt pins of the stack's exact cuDNN for an Ubuntu release, or None when the data has none."""
    apt = getattr(kb, "apt", None)
    if apt is None:
        return None
    candidates = [p for p in apt.cudnn_for(stack.cuda.version) if ubuntu in p.ubuntu]
    choice = choose_cudnn(candidates, stack.cudnn.version, stack.cudnn.compiled, stack.cuda.version, ubuntu)
    if choice is None or choice.why:
        return None
    return choice.package.packages


def choose_base(resolution: Resolution, kb) -> tuple[Base, Resolution, tuple[str, ...]] | None:
    """(base image, the resolution whose pip lines to install, apt pins that set the stack's cuDNN)."""
    stack = resolution.stack
    python = stack.python.recommended
    if stack.cuda is None or stack.delivery in (Delivery.PIP_WHEELS, Delivery.BUNDLED):
        cudnn = f"cuDNN {stack.cudnn.version}" if stack.cudnn else "cuDNN"
        how = "inside its wheel" if stack.delivery is Delivery.BUNDLED else "as pip wheels"
        why = "CPU-only stack: a plain Python image" if stack.cuda is None else (
            f"{stack.framework.pip_package} brings CUDA {stack.cuda.release} and {cudnn} {how}; the image needs "
            f"only Python (the NVIDIA Container Toolkit maps the host driver in)")
        return Base(f"python:{python}-slim", "python", python, why, PYTHON_IMAGE_SOURCE), resolution, ()
    cuda = stack.cuda.version
    version = stack.framework.version
    line = stack.framework.line
    images = [i for i in kb.tf_images
              if i.cuda == cuda and cudnn_accepts(stack.cudnn.compiled, i.cudnn)
              and _python_fits(stack, resolution, i.python)]
    exact = [i for i in images if i.version == version]
    same_line = sorted((i for i in images if i.line == line), key=lambda i: Version(i.version), reverse=True)
    for image in exact + same_line:
        plan = _for_python(resolution, kb, image.python)
        pins = () if _same_cudnn(stack, image.cudnn) else _cudnn_packages(kb, stack, image.ubuntu)
        if plan is None or pins is None:
            continue
        how = ("TensorFlow's own image of this release" if image.version == version else
               f"TensorFlow's own image of the {line} line ({image.version}); the plan replaces its TensorFlow "
               f"with {version}")
        base = Base(image.image, "tensorflow", image.python,
                    f"{how}: CUDA {image.cuda}, cuDNN {image.cudnn}, Ubuntu {image.ubuntu}, Python {image.python}",
                    image.source, cudnn=image.cudnn, ubuntu=image.ubuntu)
        return base, plan, pins
    cuda_images = [i for i in kb.cuda_images if i.cuda == cuda and cudnn_accepts(stack.cudnn.compiled, i.cudnn)]
    # Pullable tags first; among them one that carries the stack's cuDNN, one whose distro python3 fits, then the
    # newest Ubuntu.
    cuda_images.sort(key=lambda i: (i.pullable, _same_cudnn(stack, i.cudnn), _python_fits(stack, resolution, i.python),
                                    Version(i.ubuntu)), reverse=True)
    for image in cuda_images:
        pins = () if _same_cudnn(stack, image.cudnn) else _cudnn_packages(kb, stack, image.ubuntu)
        if pins is None:
            continue
        distro_python = _python_fits(stack, resolution, image.python)
        plan = _for_python(resolution, kb, image.python) if distro_python else None
        if plan is None:
            distro_python, plan = False, resolution
        why = (f"NVIDIA's CUDA {image.release} runtime image with cuDNN {image.cudnn} (Ubuntu {image.ubuntu}); "
               f"TensorFlow {line} loads cuDNN {cudnn_rule_text(stack.cudnn.compiled)}")
        warning = "" if image.pullable else (
            f"NVIDIA deleted the tag {image.tag} from Docker Hub (end of life); this FROM will not pull. Build the "
            f"base from NVIDIA's container scripts (gitlab.com/nvidia/container-images/cuda) or choose a newer "
            f"TensorFlow.")
        base = Base(image.image, "cuda", image.python if distro_python else stack.python.recommended, why,
                    image.source, warning, python_from_ppa=not distro_python, cudnn=image.cudnn, ubuntu=image.ubuntu)
        return base, plan, pins
    return None


def decide(resolution: Resolution, kb=None, options: PlanOptions = PlanOptions()) -> DockerPlan | Refusal:
    stack = resolution.stack
    request = resolution.request
    if stack is None:
        return Refusal(resolution, "No consistent stack for this request, so there is nothing to build.",
                       "Run `stackresolve plan` without --format for the conflicting facts and the nearest stacks.")
    if request.os in (Os.WINDOWS, Os.MACOS):
        return Refusal(resolution, f"No Dockerfile: containers run Linux, and this stack was resolved for "
                                   f"{request.os}.", "Re-run with --os linux (or --os wsl2 on Windows).")
    if stack.cuda and request.arch.is_arm and stack.delivery is Delivery.SYSTEM:
        return Refusal(resolution, f"No Dockerfile: the recorded CUDA base images are x86_64 only (asked: "
                                   f"{request.arch}).")
    check = import_check_code(stack)
    if stack.delivery is Delivery.CONTAINER:
        fw = stack.framework
        base = Base(fw.container, "ngc", stack.python.recommended,
                    f"NVIDIA's NGC TensorFlow 1 container {fw.vendor_release}: TensorFlow {fw.upstream_version} with "
                    f"CUDA {stack.cuda.release} and cuDNN {stack.cudnn.version}", fw.source)
        return DockerPlan(resolution, base, pip_plan.decide(resolution), check_code=check)
    if stack.framework.index is not None:
        # NVIDIA's pip build: its release's NGC container carries the same TensorFlow, CUDA and cuDNN.
        release = stack.framework.vendor_release
        same = next((b for b in kb.nvidia_builds if b.kind == "container" and b.release == release), None)
        if same is None:
            return Refusal(resolution, f"No Dockerfile: no NGC container of release {release} is recorded.",
                           "Use --format pip.")
        base = Base(same.tag, "ngc", stack.python.recommended,
                    f"NVIDIA's NGC TensorFlow 1 container of the same release {release}: TensorFlow "
                    f"{same.tf_base} with CUDA {same.cuda} and cuDNN {same.cudnn}, as the pip build", same.source)
        return DockerPlan(resolution, base, pip_plan.decide(resolution), check_code=check)
    chosen = choose_base(resolution, kb)
    if chosen is None:
        return Refusal(resolution, f"No Dockerfile: no recorded base image carries CUDA {stack.cuda.version} with "
                                   f"cuDNN {stack.cudnn.version} or an apt package for it (constraints/docker.toml, "
                                   f"apt.toml).", "Use --format apt inside an Ubuntu image instead.")
    base, plan, pins = chosen
    note = ""
    if pins:
        note = (f"The image carries cuDNN {base.cudnn}; the stack's cuDNN {stack.cudnn.version} replaces it "
                f"({' '.join(pins)} from NVIDIA's repository, which the image has configured).")
    return DockerPlan(resolution, base, pip_plan.decide(plan), pins, note, check)
