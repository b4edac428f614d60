"""`--format dockerfile`: renders the Docker plan (plan/docker.py decides the base image and the pins)."""

from __future__ import annotations

import re
import shlex

from stackresolve.emit.header import header_lines
from stackresolve.plan.docker import DockerPlan

_MINOR = re.compile(r"^\d+\.\d+$")
_CONTROL = re.compile(r"[\x00-\x1f\x7f\u2028\u2029\x85]+")


def one_line(text: str) -> str:
    """Comment text on one line: a newline inside a comment would start a new instruction."""
    return _CONTROL.sub(" ", text)


def safe_header(resolution, kind: str) -> str:
    return "".join(f"# {one_line(line)}\n" for line in header_lines(resolution, kind))


def _run_pip(python: str, pip) -> str:
    """pip itself upgraded, what must come first, then the plan's lines (after its index option, if any)."""
    quoted = " \\\n        ".join(shlex.quote(line) for line in (*pip.index_args, *pip.requirements))
    out = f"RUN {python} -m pip install --no-cache-dir --upgrade pip \\\n"
    for package in pip.pre_install:
        out += f" && {python} -m pip install --no-cache-dir {shlex.quote(package)} \\\n"
    return out + f" && {python} -m pip install --no-cache-dir \\\n        {quoted}\n"


def render(plan) -> str:
    plan: DockerPlan
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
    run_flags = "--gpus all " if stack.cuda else ""
    out.append(f"#   docker run {run_flags}--rm {plan.tag} python -c \"{plan.check_code}\"\n")
    out.append(f"FROM {base.image}\n\n")
    if base.kind == "ngc":
        out.append("WORKDIR /workspace\n")
        return "".join(out)

    pip = plan.pip
    if pip.resolution is not resolution:
        out.append(f"# Python {base.python} is the image's: the pip pins below are the plan for Python {base.python}\n"
                   f"#   ({one_line(pip.resolution.stack.summary)}).\n")
    if plan.cudnn_packages:
        out.append("RUN apt-get update \\\n"
                   " && DEBIAN_FRONTEND=noninteractive apt-get install -y --no-install-recommends --allow-downgrades "
                   "--allow-change-held-packages \\\n        "
                   + " ".join(shlex.quote(p) for p in plan.cudnn_packages) + " \\\n"
                   " && rm -rf /var/lib/apt/lists/*\n")
    if base.kind == "tensorflow":
        out.append("# The image's preinstalled TensorFlow (tensorflow or tensorflow-gpu, depending on the release) is\n"
                   "# removed so that exactly one copy, the pinned one, is installed.\n"
                   "RUN python3 -m pip uninstall -y tensorflow tensorflow-gpu tensorflow-cpu\n")
        out.append(_run_pip("python3", pip))
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
    out.append(_run_pip("python", pip))
    return "".join(out)
