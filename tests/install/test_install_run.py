"""`stackresolve install` end to end, offline: a real lock (`plan --format lock`), wheels the test builds, a fresh venv
made by uv and by pip, the import check and `check` inside it; the folder rules; failures and Ctrl-C leave nothing
that looks complete; `export` prints the lock's requirements."""

from __future__ import annotations

import json
import os
import subprocess
import sys
from pathlib import Path

import pytest

from stackresolve.install.run import MARKER, Host, InstallFailed, InstallOptions, install, read_marker
from stackresolve.install.target import read_target
from stackresolve.model.enums import Os

from .wheels import HERE_PYTHON, TF_FOR_PYTHON, uv_available, wheels_for

CLI = [sys.executable, "-c", "import sys; from stackresolve.cli import main; sys.argv[0] = 'stackresolve'; main()"]


def stackresolve(*args: str, cwd=None) -> subprocess.CompletedProcess:
    env = {k: v for k, v in os.environ.items() if not k.startswith("STACKRESOLVE_")}
    return subprocess.run([*CLI, *args], capture_output=True, text=True, timeout=600, cwd=cwd, env=env)


@pytest.fixture(scope="module")
def cpu_lock(tmp_path_factory) -> tuple[Path, Path]:
    """A TF CPU lock for this Python, and a folder of wheels for every requirement it names."""
    if HERE_PYTHON not in TF_FOR_PYTHON:
        pytest.skip(f"no TensorFlow CPU line is planned here for Python {HERE_PYTHON}")
    folder = tmp_path_factory.mktemp("lock")
    lock = folder / "stackresolve.lock"
    done = stackresolve("plan", "--no-detect", "--tf", TF_FOR_PYTHON[HERE_PYTHON], "--cpu", "--os", "linux",
                        "--python", HERE_PYTHON, "--format", "lock", "-o", str(lock))
    assert done.returncode == 0, done.stderr
    lines = [l for l in json.loads(lock.read_text())["pip"] if not l.startswith("-")]
    return lock, wheels_for(lines, folder / "wheels")


@pytest.mark.parametrize("installer", ["uv", "pip"])
def test_a_lock_installs_into_a_fresh_venv_and_is_verified(cpu_lock, tmp_path, installer):
    if installer == "uv" and not uv_available():
        pytest.skip("uv is not installed (pip install 'stackresolve[install]')")
    lock, wheels = cpu_lock
    venv = tmp_path / "venv"
    done = stackresolve("install", str(lock), "--venv", str(venv), "--installer", installer, "--no-index",
                        "--find-links", str(wheels), "--python-exe", sys.executable, "--format", "json")
    assert done.returncode == 0, done.stdout + done.stderr
    report = json.loads(done.stdout)
    version = json.loads(lock.read_text())["stack"]["framework"]["version"]
    assert report["ok"] and report["installer"] == installer
    assert report["import_check"]["version"] == version and report["import_check"]["gpus"] == []
    assert report["check"] == {"ok": True, "lines": ["this machine matches the lock"]}
    assert read_marker(venv)["complete"] is True
    # the venv really holds the planned TensorFlow
    python = venv / "bin" / "python"
    out = subprocess.run([str(python), "-c", "import tensorflow; print(tensorflow.__version__)"], capture_output=True,
                         text=True, timeout=60)
    assert out.stdout.strip() == version
    # the text report says what was verified; without a terminal no progress lines reach stderr
    again = stackresolve("install", str(lock), "--venv", str(venv), "--installer", installer, "--no-index",
                         "--find-links", str(wheels), "--python-exe", sys.executable)
    assert again.returncode == 0, again.stderr
    assert f"TensorFlow {version} imports" in again.stdout and "no GPU visible: a CPU plan, as planned" in again.stdout
    assert again.stderr == ""


def test_a_folder_that_is_not_a_venv_is_refused_before_anything_is_touched(cpu_lock, tmp_path):
    lock, wheels = cpu_lock
    folder = tmp_path / "project"
    folder.mkdir()
    (folder / "notes.txt").write_text("mine")
    done = stackresolve("install", str(lock), "--venv", str(folder), "--no-index", "--find-links", str(wheels))
    assert done.returncode == 2
    assert done.stderr.count("\n") == 1 and "not empty and is not a virtual environment" in done.stderr
    assert sorted(p.name for p in folder.iterdir()) == ["notes.txt"]


def test_a_venv_stackresolve_did_not_make_needs_reuse(cpu_lock, tmp_path):
    lock, wheels = cpu_lock
    venv = tmp_path / "venv"
    subprocess.run([sys.executable, "-m", "venv", "--without-pip", str(venv)], check=True, timeout=120)
    refused = stackresolve("install", str(lock), "--venv", str(venv), "--no-index", "--find-links", str(wheels),
                           "--python-exe", sys.executable)
    assert refused.returncode == 2 and "pass --reuse" in refused.stderr
    if not uv_available():
        pytest.skip("the install itself needs uv here (the venv has no pip)")
    reused = stackresolve("install", str(lock), "--venv", str(venv), "--reuse", "--no-index", "--find-links",
                          str(wheels), "--python-exe", sys.executable, "--installer", "uv")
    assert reused.returncode == 0, reused.stdout + reused.stderr


def test_a_failed_install_names_its_step_and_removes_the_venv_it_made(cpu_lock, tmp_path):
    lock, _ = cpu_lock
    empty = tmp_path / "no-wheels"
    empty.mkdir()
    venv = tmp_path / "venv"
    done = stackresolve("install", str(lock), "--venv", str(venv), "--no-index", "--find-links", str(empty),
                        "--python-exe", sys.executable)
    assert done.returncode == 1
    first, *tail = done.stderr.splitlines()
    assert first.startswith("stackresolve: error: installing with ") and "exited with" in first
    assert tail and all(line.startswith("  | ") for line in tail)  # the installer's own last lines
    assert "Traceback" not in done.stderr
    assert not venv.exists()


class InterruptingRunner:
    """The real runner, except that the install step is interrupted (Ctrl-C) as it starts."""

    def __init__(self):
        from stackresolve.detect.runner import SubprocessRunner

        self.real = SubprocessRunner()

    def __call__(self, argv, timeout):
        if "install" in argv and ("pip" in argv or "-m" in argv):
            raise KeyboardInterrupt
        return self.real(argv, timeout)


def test_ctrl_c_leaves_nothing_that_looks_complete(cpu_lock, tmp_path):
    lock, wheels = cpu_lock
    target = read_target(lock.read_text(), str(lock), None, Os.LINUX)
    fresh = tmp_path / "fresh"
    options = InstallOptions(venv=fresh, installer="pip", python_exe=sys.executable, no_index=True,
                             find_links=(str(wheels),))
    with pytest.raises(KeyboardInterrupt):
        install(target, options, runner=InterruptingRunner(), uv=None, host=Host(Os.LINUX))
    assert not fresh.exists()  # the venv this run created is gone
    # a venv that is reused stays, but its marker says the install did not complete
    reused = tmp_path / "reused"
    subprocess.run([sys.executable, "-m", "venv", "--without-pip", str(reused)], check=True, timeout=120)
    options = InstallOptions(venv=reused, installer="pip", reuse=True, python_exe=sys.executable, no_index=True,
                             find_links=(str(wheels),))
    with pytest.raises(KeyboardInterrupt):
        install(target, options, runner=InterruptingRunner(), uv=None, host=Host(Os.LINUX))
    assert (reused / MARKER).exists() and read_marker(reused)["complete"] is False


def test_export_prints_the_lock_requirements_file(cpu_lock):
    lock, _ = cpu_lock
    done = stackresolve("export", str(lock))
    assert done.returncode == 0, done.stderr
    doc = json.loads(lock.read_text())
    lines = done.stdout.splitlines()
    # a CPU lock for Linux x86_64 pins TensorFlow's CPU package (tensorflow_wheels.toml: tensorflow-cpu has
    # manylinux x86_64 wheels for every line TF_FOR_PYTHON names)
    assert lines[0].startswith("# tensorflow-cpu==") and f"for Python {HERE_PYTHON}" in lines[0]
    assert lines[1:] == doc["pip"]


def test_export_refuses_what_is_not_a_lock(tmp_path):
    junk = tmp_path / "junk.lock"
    junk.write_text('{"schema": "something/else"}')
    done = stackresolve("export", str(junk))
    assert done.returncode == 2 and done.stderr.count("\n") == 1 and "not a stackresolve lock" in done.stderr


def test_no_python_for_the_lock_stops_before_anything_is_made(tmp_path):
    """TF 1.15.5 has wheels for Python 3.6-3.7 only; a machine with neither gets the ways to get 3.7, exit 1."""
    lock = tmp_path / "tf115.lock"
    done = stackresolve("plan", "--no-detect", "--tf", "1.15", "--cpu", "--os", "linux", "--format", "lock", "-o",
                        str(lock))
    assert done.returncode == 0, done.stderr
    target = read_target(lock.read_text(), str(lock), None, Os.LINUX)
    assert target.pythons == ("3.7", "3.6")
    venv = tmp_path / "venv"

    def nothing_runs(argv, timeout):
        from stackresolve.detect.runner import CommandNotFound

        raise CommandNotFound(argv[0])

    with pytest.raises(InstallFailed) as failed:
        install(target, InstallOptions(venv=venv), runner=nothing_runs, uv=None, env={"PATH": str(tmp_path)},
                host=Host(Os.LINUX, "22.04"))
    message = str(failed.value)
    assert failed.value.step == "finding Python" and "no Python 3.7 or 3.6 on this machine" in message
    assert "conda create -n py37 -c conda-forge python=3.7" in message and "uv python install" not in message
    assert "deadsnakes" in message  # Ubuntu 22.04 carries 3.7 there
    assert not venv.exists()


def _hostile_lock(lock: Path, tmp_path: Path, **changes) -> Path:
    doc = json.loads(lock.read_text())
    for key, value in changes.items():
        doc[key] = value(doc) if callable(value) else value
    out = tmp_path / "hostile.lock"
    out.write_text(json.dumps(doc))
    return out


@pytest.mark.parametrize("line", ["-e /tmp/project", "--extra-index-url https://index.invalid/simple",
                                  "-r /etc/passwd", "--trusted-host index.invalid", "tensorflow==2.15.1\n-e .",
                                  "evil @ https://index.invalid/evil.whl", "\x1b]0;title\x07tensorflow"])
def test_a_lock_line_that_is_not_a_plain_requirement_is_refused_before_anything_is_touched(cpu_lock, tmp_path, line):
    """A requirements file runs options (-e builds and runs a project's setup.py; an index option switches where
    packages come from): a lock's `pip` list holds requirements only, plus the stack's own index line."""
    lock, wheels = cpu_lock
    hostile = _hostile_lock(lock, tmp_path, pip=lambda d: [*d["pip"], line])
    venv = tmp_path / "venv"
    done = stackresolve("install", str(hostile), "--venv", str(venv), "--no-index", "--find-links", str(wheels),
                        "--python-exe", sys.executable)
    assert done.returncode == 2 and done.stderr.count("\n") == 1, done.stderr
    assert "lock field `pip[" in done.stderr and "\x1b" not in done.stderr
    assert not venv.exists()
    assert stackresolve("export", str(hostile)).returncode == 2


@pytest.mark.parametrize("change", [{"stack": [1, 2]}, {"pip_first": 5}, {"pip_first": "abc"},
                                    {"stack": lambda d: {**d["stack"], "python": [1]}},
                                    {"stack": lambda d: {**d["stack"], "python": {**d["stack"]["python"],
                                                                                  "available": ["3.x"]}}}])
def test_a_lock_with_wrong_types_is_one_line_and_exit_2(cpu_lock, tmp_path, change):
    lock, _ = cpu_lock
    done = stackresolve("install", str(_hostile_lock(lock, tmp_path, **change)), "--venv", str(tmp_path / "v"))
    assert done.returncode == 2 and done.stderr.count("\n") == 1 and "Traceback" not in done.stderr, done.stderr


def test_a_lock_for_another_os_is_refused(tmp_path):
    lock = tmp_path / "win.lock"
    made = stackresolve("plan", "--no-detect", "--tf", "2.10", "--cpu", "--os", "windows", "--format", "lock", "-o",
                        str(lock))
    assert made.returncode == 0, made.stderr
    done = stackresolve("install", str(lock), "--venv", str(tmp_path / "v"), "--no-index")
    assert done.returncode == 2 and "the lock is for windows; this machine runs linux" in done.stderr
    assert not (tmp_path / "v").exists()


def test_a_venv_of_another_python_is_not_installed_into(cpu_lock, tmp_path):
    """A venv installed into again brings its own Python: one outside the lock's range is refused, untouched."""
    lock, wheels = cpu_lock
    old = "/root/.pyenv/versions/3.7.16/bin/python3.7"
    if not Path(old).exists():
        pytest.skip("needs a Python 3.7 at " + old)
    venv = tmp_path / "venv37"
    subprocess.run([old, "-m", "venv", "--without-pip", str(venv)], check=True, timeout=120)
    done = stackresolve("install", str(lock), "--venv", str(venv), "--reuse", "--no-index", "--find-links",
                        str(wheels))
    assert done.returncode == 2 and "is a Python 3.7" in done.stderr and "needs Python" in done.stderr
    assert not (venv / MARKER).exists()


def test_the_users_empty_folder_survives_a_failed_install(cpu_lock, tmp_path):
    lock, _ = cpu_lock
    empty_wheels = tmp_path / "none"
    empty_wheels.mkdir()
    folder = tmp_path / "mine"
    folder.mkdir()
    done = stackresolve("install", str(lock), "--venv", str(folder), "--no-index", "--find-links", str(empty_wheels),
                        "--python-exe", sys.executable)
    assert done.returncode == 1
    assert folder.is_dir() and list(folder.iterdir()) == []


def test_a_full_lock_without_hashes_is_refused(tmp_path):
    lock = tmp_path / "requirements.lock"
    lock.write_text(f"# resolved by uv for Python {HERE_PYTHON} on x86_64-manylinux_2_28, with hashes; install with\n"
                    "tensorflow==2.15.1\n")
    done = stackresolve("install", str(lock), "--venv", str(tmp_path / "v"))
    assert done.returncode == 2 and "line 2 has no --hash" in done.stderr


def test_check_before_install_of_a_full_lock_compares_only_its_python(tmp_path):
    """A full lock says the Python it was resolved for; before installing, that is all there is to compare (the
    packages of stackresolve's own interpreter are not the project's)."""
    lock = tmp_path / "requirements.lock"
    lock.write_text(f"# resolved by uv for Python {HERE_PYTHON} on x86_64-manylinux_2_28, with hashes; install with\n"
                    "tensorflow==2.15.1 \\\n    --hash=sha256:" + "0" * 64 + "\n")
    here = stackresolve("check", str(lock), "--before-install", "--python-exe", sys.executable)
    assert here.returncode == 0, here.stdout + here.stderr
    assert "this machine has the Python it needs" in here.stdout and "packages: --before-install" in here.stdout
    other = "3.9" if HERE_PYTHON != "3.9" else "3.10"
    elsewhere = stackresolve("check", str(lock), "--before-install", "--python", other)
    assert elsewhere.returncode == 1 and "1 difference(s)" in elsewhere.stdout


def test_check_before_install_reports_a_named_python_outside_the_range_as_a_difference(cpu_lock):
    """--python-exe that runs but is outside the lock's range is a difference (exit 1), as --python X.Y is."""
    lock, _ = cpu_lock
    other = next((p for p in ("/root/.pyenv/versions/3.7.16/bin/python3.7", "/usr/bin/python3.7") if Path(p).exists()),
                 None)
    if other is None:
        pytest.skip("needs a Python 3.7 outside every TF 2.15+ lock's range")
    done = stackresolve("check", str(lock), "--before-install", "--python-exe", other, "--format", "json")
    assert done.returncode == 1, done.stderr
    python = [d for d in json.loads(done.stdout)["differences"] if d["component"] == "python"]
    assert python and python[0]["found"].startswith("3.7")


def test_an_old_lock_that_installs_nvidia_pyindex_first_is_refused_by_install_and_export(cpu_lock, tmp_path):
    """Locks made before NVIDIA's index was named directly carry pip_first = [nvidia-pyindex], which no longer
    installs with current pip (NVIDIA/tensorflow#74): neither install nor export drops it silently."""
    lock, _ = cpu_lock
    old = _hostile_lock(lock, tmp_path, pip_first=["nvidia-pyindex"])
    for args in (["install", str(old), "--venv", str(tmp_path / "v")], ["export", str(old)]):
        done = stackresolve(*args)
        assert done.returncode == 2 and "nvidia-pyindex first" in done.stderr, done.stderr
    assert not (tmp_path / "v").exists()
