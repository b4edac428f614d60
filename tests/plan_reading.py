"""Reading rendered plans the way their users' tools see them: which image a Dockerfile builds FROM, and which
Python it installs the plan with, and the pip lines every plan installs. Shared by the plan formats' and coherence
tests."""

from __future__ import annotations

import re


def from_image(text: str) -> str | None:
    found = re.findall(r"^FROM (\S+)\s*$", text, re.MULTILINE)
    assert len(found) <= 1, found
    return found[0] if found else None


def base_record(kb, image: str):
    """The docker.toml record behind a FROM image."""
    repo, tag = image.split(":", 1)
    pool = kb.tf_images if repo == "tensorflow/tensorflow" else kb.cuda_images if repo == "nvidia/cuda" else ()
    return next((r for r in pool if r.tag == tag), None)


def python_run_by(kb, text: str) -> str:
    """The CPython minor a Dockerfile installs the plan with: the venv's interpreter, else the base image's own
    python3 (docker.toml; NVIDIA's release notes for NGC containers), else the python:<X.Y>-slim tag."""
    venv = re.search(r"^RUN python(\d+\.\d+) -m venv /opt/venv$", text, re.M)
    if venv:
        return venv.group(1)
    image = from_image(text)
    if image.startswith("python:"):
        return image.split(":")[1].removesuffix("-slim")
    if image.startswith("nvcr.io/nvidia/tensorflow:"):
        return next(b.pythons[0] for b in kb.nvidia_builds if b.kind == "container" and b.tag == image)
    record = base_record(kb, image)
    assert record is not None and "RUN python3 -m pip install" in text, image
    return record.python


def requirement_lines(resolution) -> list[str]:
    """The pip plan's requirement lines: what the pip, conda, apt, Docker and PowerShell plans all install."""
    from stackresolve.formats import pip_decide as pip_plan

    return list(pip_plan.decide(resolution).requirements)
