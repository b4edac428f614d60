"""`--format dockerfile`: renders the Docker plan (formats/dockerfile_decide.py decides the base image and the pins)."""

from __future__ import annotations

import re
import shlex

from stackresolve.formats.script import one_line, requirement_lines, safe_header, wrapped_comment
from stackresolve.formats.dockerfile_decide import DockerPlan

_MINOR = re.compile(r"^\d+\.\d+$")
# AMD's docker docs: a ROCm container gets the kernel driver's devices and the video group
ROCM_RUN_FLAGS = "--device=/dev/kfd --device=/dev/dri --group-add video "


def _run_pip(python: str, pip) -> str:
    """pip itself upgraded, then the plan's lines (after its index options, if any)."""
    # lazy: start-up (only this path needs formats.pip_render)
    from stackresolve.formats.pip_render import pip_upgrade

    quoted = " \\\n        ".join(shlex.quote(line) for line in (*pip.index_args, *requirement_lines(pip)))
    out = f"RUN {python} -m pip install --no-cache-dir --upgrade {pip_upgrade(pip.python)} \\\n"
    for package in pip.pre_install:
        out += f" && {python} -m pip install --no-cache-dir {shlex.quote(package)} \\\n"
    return out + f" && {python} -m pip install --no-cache-dir \\\n        {quoted}\n"


def _key_step(step) -> str:
    """NVIDIA's current repository key, before the first apt-get update (its notice: the cuda-keyring package, or
    the key file, in place of the retired key's source list)."""
    out = f"# {one_line(step.why)}\n#   source: {one_line(step.source)}\n"
    if step.method == "cuda-keyring":
        return out + (f"ADD {step.url} /tmp/cuda-keyring.deb\n"
                      "RUN rm -f /etc/apt/sources.list.d/cuda.list \\\n"
                      " && dpkg -i /tmp/cuda-keyring.deb \\\n"
                      " && rm -f /tmp/cuda-keyring.deb\n")
    return out + (f"ADD {step.url} /etc/apt/trusted.gpg.d/cuda-repository-key.asc\n"
                  "RUN chmod 0644 /etc/apt/trusted.gpg.d/cuda-repository-key.asc\n")


def _python_from_apt(base) -> str:
    """The stack's Python from Ubuntu's archive or the deadsnakes PPA, and a virtual environment on PATH."""
    py = f"python{base.python}"
    if base.python_from == "deadsnakes":
        out = (f"# Python {base.python} is not in Ubuntu {base.ubuntu}'s archive: it comes from the deadsnakes PPA.\n"
               "RUN apt-get update \\\n"
               " && apt-get install -y --no-install-recommends software-properties-common gpg-agent \\\n"
               " && add-apt-repository -y ppa:deadsnakes/ppa \\\n"
               f" && apt-get install -y --no-install-recommends {py} {py}-venv \\\n"
               " && rm -rf /var/lib/apt/lists/*\n")
    else:
        out = (f"# Python {base.python} from Ubuntu {base.ubuntu}'s archive.\n"
               "RUN apt-get update \\\n"
               f" && apt-get install -y --no-install-recommends {py} {py}-venv \\\n"
               " && rm -rf /var/lib/apt/lists/*\n")
    return out + f"RUN {py} -m venv /opt/venv\nENV PATH=/opt/venv/bin:$PATH\n"


def render(plan: DockerPlan) -> str:
    resolution, base, stack = plan.resolution, plan.base, plan.resolution.stack
    if not _MINOR.match(base.python):
        raise ValueError(f"not a Python version: {base.python!r}")
    out = [safe_header(resolution, "dockerfile"),
           f"# Base: {one_line(base.why)}\n#   source: {one_line(base.source)}\n"]
    if base.warning:
        out.append(f"# WARNING: {one_line(base.warning)}\n")
    if plan.cudnn_note:
        out.append(f"# {one_line(plan.cudnn_note)}\n")
    if stack.cuda:
        out.append(f"# Host: NVIDIA driver >= {stack.driver.minimum} and the NVIDIA Container Toolkit.\n")
    out.append(f"# Build and check:\n#   docker build -t {plan.tag} .\n")
    run_flags = "--gpus all " if stack.cuda else ROCM_RUN_FLAGS if stack.gpu.vendor == "amd" else ""
    out.append(f"#   docker run {run_flags}--rm {plan.tag} python -c \"{plan.check_code}\"\n")
    out.append(f"FROM {base.image}\n\n")
    if stack.gpu.override_note and re.fullmatch(r"HSA_OVERRIDE_GFX_VERSION=\d+\.\d+\.\d+", stack.gpu.override_env):
        out.append(wrapped_comment(stack.gpu.override_note) + f"ENV {stack.gpu.override_env}\n\n")
    if base.kind == "ngc":
        out.append("WORKDIR /workspace\n")
        return "".join(out)

    pip = plan.pip
    if base.kind in ("tensorflow", "cuda"):
        out.append("ENV DEBIAN_FRONTEND=noninteractive\n")
        if plan.runs_apt and base.key_step is not None:
            out.append(_key_step(base.key_step))
    if plan.cudnn_packages:
        out.append("RUN apt-get update \\\n"
                   " && apt-get install -y --no-install-recommends --allow-downgrades "
                   "--allow-change-held-packages \\\n        "
                   + " ".join(shlex.quote(p) for p in plan.cudnn_packages) + " \\\n"
                   " && rm -rf /var/lib/apt/lists/*\n")
    if base.kind == "tensorflow" and base.python_from == "image":
        out.append("# The image's preinstalled TensorFlow (tensorflow or tensorflow-gpu, depending on the release) is\n"
                   "# removed so that exactly one copy, the pinned one, is installed.\n"
                   "RUN python3 -m pip uninstall -y tensorflow tensorflow-gpu tensorflow-cpu\n")
        out.append(_run_pip("python3", pip))
        return "".join(out)
    if base.kind in ("tensorflow", "cuda"):
        out.append(_python_from_apt(base))
    out.append(_run_pip("python", pip))
    return "".join(out)
