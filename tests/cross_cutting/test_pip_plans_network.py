"""The pip plans resolve against the real package index for their target Python and platform.

Run with `pytest --network`. Each plan is written by the CLI and handed to
`pip install --dry-run --ignore-installed --only-binary=:all: --python-version X.Y --platform P --target DIR`,
pip's own resolver. Cross-platform resolution only accepts wheels, so the few pure-Python requirements that
exist only as sdists (TensorFlow 1.15 pins gast==0.2.2, 2.5 wrapt~=1.12.1, 2.6 clang~=5.0) are built into
wheels first, exactly as pip would build them at install time, and offered with --find-links.
"""

import json
import os
import subprocess
import sys

import pytest
from packaging.requirements import Requirement
from packaging.utils import canonicalize_name
from packaging.version import Version

from stackresolve.index.simple import index_url

pytestmark = pytest.mark.network

LINUX = ["manylinux2014_x86_64", "manylinux2010_x86_64", "manylinux1_x86_64", "manylinux_2_17_x86_64",
         "manylinux_2_27_x86_64", "manylinux_2_28_x86_64"]
WINDOWS = ["win_amd64"]
SDIST_ONLY = ["gast==0.2.2", "termcolor==1.1.0", "wrapt==1.12.1", "clang==5.0"]

# (tf, os, python, gpu): TF 1.x, 2.0-2.10 (native Windows included) and >= 2.11, GPU and CPU.
TARGETS = [
    ("1.15", "linux", "3.7", "GTX 1080 Ti"), ("1.15", "windows", "3.7", "GTX 1080 Ti"),
    ("2.0", "linux", "3.7", "GTX 1080"), ("2.3", "windows", "3.8", "GTX 1080"), ("2.5", "linux", "3.9", "RTX 3090"),
    ("2.6", "linux", "3.9", "RTX 3090"), ("2.10", "windows", "3.10", "RTX 3090"), ("2.11", "linux", "3.10", "T4"),
    ("2.13", "linux", "3.11", "A100"), ("2.14", "linux", "3.11", "A100"), ("2.15", "linux", "3.11", "RTX 4090"),
    ("2.16", "linux", "3.12", "H100"), ("2.21", "linux", "3.13", "H100"), ("2.13", "windows", "3.9", None),
]
PIP_TIMEOUT = 600


def pip(*args, timeout=PIP_TIMEOUT, env_extra=None):
    # The machine's pip configuration (constraint files, extra indexes) is not the target's: leave it out,
    # but keep the index the user chose (PIP_INDEX_URL or pip's configuration, else pip's default).
    env = {**os.environ, "PIP_CONFIG_FILE": os.devnull, "PIP_DISABLE_PIP_VERSION_CHECK": "1", **(env_extra or {})}
    env.pop("PIP_CONSTRAINT", None)
    return subprocess.run([sys.executable, "-m", "pip", *args, "--index-url", index_url()], env=env,
                          capture_output=True, text=True, timeout=timeout)


@pytest.fixture(scope="module")
def wheelhouse(tmp_path_factory):
    folder = tmp_path_factory.mktemp("wheelhouse")
    # wrapt builds a pure-Python wheel when told not to compile its C extension.
    result = pip("wheel", "--no-deps", "-w", str(folder), *SDIST_ONLY, env_extra={"WRAPT_INSTALL_EXTENSIONS": "false"})
    assert result.returncode == 0, result.stderr[-2000:]
    return folder


@pytest.mark.parametrize("tf, os_name, python, gpu", TARGETS)
def test_pip_plan_resolves_on_the_real_index(tf, os_name, python, gpu, tmp_path, wheelhouse):
    plan_file = tmp_path / "requirements.txt"
    cli = [sys.executable, "-m", "stackresolve", "plan", "--no-detect", "--tf", tf, "--os", os_name,
           "--python", python, "--format", "pip", "-o", str(plan_file)]
    cli += ["--gpu", gpu] if gpu else ["--cpu"]
    made = subprocess.run(cli, capture_output=True, text=True, timeout=60)
    assert made.returncode == 0, made.stderr

    platforms = [arg for p in (WINDOWS if os_name == "windows" else LINUX) for arg in ("--platform", p)]
    report = tmp_path / "report.json"
    result = pip("install", "--dry-run", "--ignore-installed", "--only-binary=:all:", "--python-version", python,
                 *platforms, "--target", str(tmp_path / "target"), "--find-links", str(wheelhouse),
                 "--report", str(report), "-r", str(plan_file))
    assert result.returncode == 0, f"{tf} on {os_name} / Python {python}:\n{result.stderr[-3000:]}"

    installed = {canonicalize_name(item["metadata"]["name"]): Version(item["metadata"]["version"])
                 for item in json.loads(report.read_text())["install"]}
    for line in plan_file.read_text().splitlines():
        if line and not line.startswith("#"):
            requirement = Requirement(line)
            name = canonicalize_name(requirement.name)
            assert name in installed, f"{name} is in the plan but pip would not install it"
            assert requirement.specifier.contains(installed[name], prereleases=True), (line, installed[name])
