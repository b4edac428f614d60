"""`--format dockerfile`: a Dockerfile whose base image carries the stack's CUDA and cuDNN, plus the pip plan.

Base image, in order of preference (facts from constraints/docker.toml):
1. the official tensorflow/tensorflow GPU image of this exact release, then of the same release line: TensorFlow's
   own build, so its CUDA/cuDNN match by construction; the preinstalled TensorFlow is replaced by the exact pins;
2. an nvidia/cuda runtime+cuDNN image for the stack's CUDA line that NVIDIA still publishes, with the Python the
   stack needs (the distro python3, else the deadsnakes PPA) in a virtual environment;
3. the same for a tag NVIDIA has deleted, with a warning (such a plan cannot be pulled, only rebuilt from
   NVIDIA's container scripts).
Stacks that get CUDA and cuDNN as pip wheels (tensorflow[and-cuda]) and CPU stacks use python:<X.Y>-slim.
"""

from __future__ import annotations

import re
import shlex
from dataclasses import dataclass, replace

from packaging.requirements import Requirement
from packaging.version import Version

from stackresolve.emit.header import header_lines
from stackresolve.emit.pip import requirement_lines
from stackresolve.resolve import Resolution, Stack, resolve

PYTHON_IMAGE_SOURCE = "Docker Official Image python (library/python on Docker Hub), tag <X.Y>-slim"
_MINOR = re.compile(r"^\d+\.\d+$")


_CONTROL = re.compile(r"[\x00-\x1f\x7f\u2028\u2029\x85]+")


def one_line(text: str) -> str:
    """Comment text on one line: a newline inside a comment would start a new instruction."""
    return _CONTROL.sub(" ", text)


def safe_header(resolution: Resolution, kind: str) -> str:
    return "".join(f"# {one_line(line)}\n" for line in header_lines(resolution, kind))


@dataclass(frozen=True)
class Base:
    image: str  # what follows FROM
    kind: str  # "tensorflow" | "cuda" | "python"
    python: str  # the CPython minor the plan installs into
    why: str
    source: str
    warning: str = ""
    python_from_ppa: bool = False  # nvidia/cuda base: python comes from the deadsnakes PPA
    plan: Resolution | None = None  # whose pip lines to install, when the image's Python is not the stack's


def _for_python(resolution: Resolution, kb, python: str) -> Resolution | None:
    """The same stack resolved for another Python (the pip pins can depend on it), or None if it changes."""
    stack = resolution.stack
    if python == stack.python.value["recommended"]:
        return resolution
    other = resolve(kb, replace(resolution.request, python=python), with_alternatives=False)
    same_framework = other.stack is not None and all(
        other.stack.framework.value[k] == stack.framework.value[k] for k in ("pip_package", "version"))
    if not same_framework:
        return None
    if other.stack.cuda is None or other.stack.cuda.value["version"] != stack.cuda.value["version"]:
        return None
    return other


def _python_fits(stack: Stack, resolution: Resolution, python: str) -> bool:
    if resolution.request.python:
        return python == resolution.request.python
    return python in stack.candidate.pythons


def _cudnn_fits(stack: Stack, cudnn: str) -> bool:
    """TensorFlow loads a cuDNN of the major it was built with, at an equal or higher minor."""
    wanted = Version(stack.candidate.cudnn_min or stack.cudnn.value["version"])
    have = Version(cudnn)
    return have.major == wanted.major and have >= wanted


def choose_base(resolution: Resolution, kb) -> Base | None:
    stack = resolution.stack
    python = stack.python.value["recommended"]
    if not stack.cuda:
        return Base(f"python:{python}-slim", "python", python, "CPU-only stack: a plain Python image",
                    PYTHON_IMAGE_SOURCE)
    if stack.candidate.extra:
        return Base(f"python:{python}-slim", "python", python,
                    f"{stack.framework.value['pip_package']} brings CUDA {stack.cuda.value['version']} and cuDNN "
                    f"{stack.cudnn.value['version']} as pip wheels; the image needs only Python (the NVIDIA "
                    f"Container Toolkit maps the host driver in)", PYTHON_IMAGE_SOURCE)
    cuda = stack.cuda.value["version"]
    version = stack.tf_version
    line = stack.framework.value["line"]
    images = [i for i in kb.tf_images
              if i.cuda == cuda and _cudnn_fits(stack, i.cudnn) and _python_fits(stack, resolution, i.python)]
    exact = [i for i in images if i.version == version]
    same_line = sorted((i for i in images if i.line == line), key=lambda i: Version(i.version), reverse=True)
    for image in exact + same_line:
        plan = _for_python(resolution, kb, image.python)
        if plan is None:
            continue
        how = ("TensorFlow's own image of this release" if image.version == version else
               f"TensorFlow's own image of the {line} line ({image.version}); the plan replaces its TensorFlow "
               f"with {version}")
        return Base(image.image, "tensorflow", image.python,
                    f"{how}: CUDA {image.cuda}, cuDNN {image.cudnn}, Ubuntu {image.ubuntu}, Python {image.python}",
                    image.source, plan=plan)
    cuda_images = [i for i in kb.cuda_images if i.cuda == cuda and _cudnn_fits(stack, i.cudnn)]
    # Pullable tags first; among them one whose distro python3 fits, then the newest Ubuntu.
    cuda_images.sort(key=lambda i: (i.pullable, _python_fits(stack, resolution, i.python), Version(i.ubuntu)),
                     reverse=True)
    if not cuda_images:
        return None
    image = cuda_images[0]
    distro_python = _python_fits(stack, resolution, image.python)
    plan = _for_python(resolution, kb, image.python) if distro_python else None
    if plan is None:
        distro_python, plan = False, resolution
    wanted = image.python if distro_python else python
    why = (f"NVIDIA's CUDA {image.release} runtime image with cuDNN {image.cudnn} (Ubuntu {image.ubuntu}); "
           f"TensorFlow {line} needs cuDNN {Version(stack.candidate.cudnn_min).major}.x >= "
           f"{stack.candidate.cudnn_min}")
    warning = "" if image.pullable else (
        f"NVIDIA deleted the tag {image.tag} from Docker Hub (end of life); this FROM will not pull. Build the "
        f"base from NVIDIA's container scripts (gitlab.com/nvidia/container-images/cuda) or choose a newer "
        f"TensorFlow.")
    return Base(image.image, "cuda", wanted, why, image.source, warning, python_from_ppa=not distro_python,
                plan=plan)


def _run_pip(python: str, lines: list[str]) -> str:
    for line in lines:
        Requirement(line)  # every line must be a requirement (it lands in a shell command)
    quoted = " \\\n        ".join(shlex.quote(line) for line in lines)
    return (f"RUN {python} -m pip install --no-cache-dir --upgrade pip \\\n"
            f" && {python} -m pip install --no-cache-dir \\\n        {quoted}\n")


def _gpu_check(stack: Stack) -> str:
    if stack.tf_version.startswith("1."):
        return "import tensorflow as tf; print(tf.test.is_gpu_available())"
    if Version(stack.tf_version) < Version("2.1"):
        return "import tensorflow as tf; print(tf.config.experimental.list_physical_devices('GPU'))"
    return "import tensorflow as tf; print(tf.config.list_physical_devices('GPU'))"


def render(resolution: Resolution, kb) -> str:
    out = [safe_header(resolution, "dockerfile")]
    stack = resolution.stack
    request = resolution.request
    if stack is None:
        out.append("# No consistent stack for this request, so there is nothing to build.\n"
                   "# Run `stackresolve plan` without --format for the conflicting facts and the nearest stacks.\n")
        return "".join(out)
    if request.os in ("windows", "macos"):
        out.append(f"# No Dockerfile: containers run Linux, and this stack was resolved for {request.os}.\n"
                   f"# Re-run with --os linux (or --os wsl2 on Windows) for a container plan.\n")
        return "".join(out)
    if stack.cuda and request.arch != "x86_64":
        out.append(f"# No Dockerfile: the recorded CUDA base images are x86_64 only (asked: {request.arch}).\n")
        return "".join(out)
    base = choose_base(resolution, kb)
    if base is None:
        out.append(f"# No Dockerfile: no recorded base image carries CUDA {stack.cuda.value['version']} with "
                   f"cuDNN {Version(stack.candidate.cudnn_min).major}.x >= {stack.candidate.cudnn_min}\n"
                   f"# (constraints/docker.toml). Use --format apt inside an Ubuntu image instead.\n")
        return "".join(out)
    if not _MINOR.match(base.python):
        raise ValueError(f"not a Python version: {base.python!r}")

    tag = f"tf-{stack.tf_version}"
    out.append(f"# Base: {one_line(base.why)}\n#   source: {one_line(base.source)}\n")
    if base.warning:
        out.append(f"# WARNING: {one_line(base.warning)}\n")
    if stack.cuda:
        out.append(f"# Host: NVIDIA driver >= {stack.driver.value['min']} and the NVIDIA Container Toolkit.\n")
    out.append(f"# Build and check:\n#   docker build -t {tag} .\n")
    run_flags = "--gpus all " if stack.cuda else ""
    check = _gpu_check(stack) if stack.cuda else "import tensorflow as tf; print(tf.__version__)"
    out.append(f"#   docker run {run_flags}--rm {tag} python -c \"{check}\"\n")
    out.append(f"FROM {base.image}\n\n")

    plan = base.plan or resolution
    lines = requirement_lines(plan)
    if plan is not resolution:
        out.append(f"# Python {base.python} is the image's: the pip pins below are the plan for Python {base.python}\n"
                   f"#   ({one_line(plan.stack.summary)}).\n")
    if base.kind == "tensorflow":
        out.append("# The image's preinstalled TensorFlow (tensorflow or tensorflow-gpu, depending on the release) is\n"
                   "# removed so that exactly one copy, the pinned one, is installed.\n"
                   "RUN python3 -m pip uninstall -y tensorflow tensorflow-gpu tensorflow-cpu\n")
        out.append(_run_pip("python3", lines))
        return "".join(out)
    if base.kind == "cuda":
        py = f"python{base.python}"
        out.append("ENV DEBIAN_FRONTEND=noninteractive\n")
        if base.python_from_ppa:
            out.append(f"# Python {base.python} is not Ubuntu's python3 here: it comes from the deadsnakes PPA.\n"
                       "RUN apt-get update \\\n"
                       " && apt-get install -y --no-install-recommends software-properties-common gpg-agent \\\n"
                       " && add-apt-repository -y ppa:deadsnakes/ppa \\\n"
                       f" && apt-get install -y --no-install-recommends {py} {py}-venv \\\n"
                       " && rm -rf /var/lib/apt/lists/*\n")
        else:
            out.append("RUN apt-get update \\\n"
                       f" && apt-get install -y --no-install-recommends {py} {py}-venv \\\n"
                       " && rm -rf /var/lib/apt/lists/*\n")
        out.append(f"RUN {py} -m venv /opt/venv\nENV PATH=/opt/venv/bin:$PATH\n")
        out.append(_run_pip("python", lines))
        return "".join(out)
    out.append(_run_pip("python", lines))
    return "".join(out)
