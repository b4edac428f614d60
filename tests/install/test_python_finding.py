"""Finding the plan's Python (injected runner, fake interpreters, a fake pyenv tree) and the ways to get one that
plans and `install` print (the facts of knowledge/python_sources.py, from their sources)."""

from __future__ import annotations

import json
import os
import subprocess
import sys

from stackresolve.detect.runner import CommandNotFound
from stackresolve.install.python import find_python, interpreter
from stackresolve.knowledge.python_sources import python_sources
from stackresolve.model.enums import Os


class FakePythons:
    """A runner whose interpreters are a table: argv[0] (or 'py -X.Y') -> (version, executable, is_venv), or an
    exit code for a broken one (a pyenv shim of a version that is not active exits 127)."""

    def __init__(self, table):
        self.table = table
        self.calls = []

    def __call__(self, argv, timeout):
        self.calls.append(list(argv))
        key = " ".join(argv[:2]) if argv[0] == "py" else argv[0]
        if key not in self.table:
            raise CommandNotFound(argv[0])
        entry = self.table[key]
        if isinstance(entry, int):
            return entry, "", "pyenv: python3.7: command not found"
        version, executable, venv = entry
        return 0, f"{version}\n{executable}\n{int(venv)}\n", ""


def which_from(mapping):
    return lambda name, path=None: mapping.get(name)


def test_a_pyenv_shim_that_fails_is_passed_over_for_pyenvs_own_interpreter(tmp_path):
    real = tmp_path / "pyenv" / "versions" / "3.7.16" / "bin" / "python3.7"
    real.parent.mkdir(parents=True)
    real.write_text("")
    runner = FakePythons({"/shims/python3.7": 127, str(real): ("3.7.16", str(real), False)})
    found = find_python(("3.7",), Os.LINUX, runner, env={"PATH": "/shims", "PYENV_ROOT": str(tmp_path / "pyenv")},
                        which=which_from({"python3.7": "/shims/python3.7"}))
    assert found is not None and (found.version, found.executable, found.how) == ("3.7.16", str(real), "pyenv")


def test_a_virtual_environment_is_never_the_base_of_the_new_one():
    runner = FakePythons({"/work/.venv/bin/python3.11": ("3.11.7", "/work/.venv/bin/python3.11", True)})
    assert find_python(("3.11",), Os.LINUX, runner, env={"PATH": "/work/.venv/bin", "HOME": "/nonexistent"},
                       which=which_from({"python3.11": "/work/.venv/bin/python3.11"})) is None
    # named with --python-exe, it is taken as it is
    assert interpreter(runner, "/work/.venv/bin/python3.11").version == "3.11.7"


def test_a_candidate_of_another_minor_is_not_taken_and_the_preferred_version_comes_first():
    runner = FakePythons({"/usr/bin/python3.8": ("3.8.10", "/usr/bin/python3.8", False),
                          "/usr/bin/python3.7": ("3.6.9", "/usr/bin/python3.7", False)})  # a mislabelled link
    found = find_python(("3.7", "3.8"), Os.LINUX, runner, env={"PATH": "/usr/bin", "HOME": "/nonexistent"},
                        which=which_from({"python3.7": "/usr/bin/python3.7", "python3.8": "/usr/bin/python3.8"}))
    assert found.version == "3.8.10"


def test_windows_asks_the_py_launcher_first():
    runner = FakePythons({"py -3.10": ("3.10.11", r"C:\Python310\python.exe", False)})
    found = find_python(("3.10",), Os.WINDOWS, runner, env={"PATH": "", "HOME": "/nonexistent"}, which=which_from({}))
    assert found.how == "py launcher" and found.executable == r"C:\Python310\python.exe"
    assert runner.calls[0][:2] == ["py", "-3.10"]


def test_a_uv_managed_python_is_found_through_uv_and_verified():
    runner = FakePythons({"/uv/cpython-3.12/bin/python3.12": ("3.12.7", "/uv/cpython-3.12/bin/python3.12", False)})
    original = runner.__call__

    def with_uv(argv, timeout):
        if argv[:3] == ["uv", "python", "find"]:
            assert "--managed-python" in argv and "--no-python-downloads" in argv  # never a silent download
            return 0, "/uv/cpython-3.12/bin/python3.12\n", ""
        return original(argv, timeout)

    found = find_python(("3.12",), Os.LINUX, with_uv, env={"PATH": "", "HOME": "/nonexistent"}, which=which_from({}),
                        uv="uv")
    assert (found.version, found.how) == ("3.12.7", "uv")


def test_the_real_interpreter_running_the_tests_is_found_by_its_path():
    found = interpreter(__import__("stackresolve.detect.runner", fromlist=["x"]).SubprocessRunner(), sys.executable)
    assert found.minor == f"{sys.version_info[0]}.{sys.version_info[1]}"


# -- the ways to get a Python, from their sources ----------------------------------------------------------------
def commands(sources):
    return {s.method: s.command for s in sources}


def test_python_3_7_on_ubuntu_22_04_comes_from_deadsnakes_not_from_uv():
    # deadsnakes' PPA description: "Ubuntu 22.04 (jammy) Python3.7 - Python3.9, Python3.11 - Python3.13"; uv's
    # downloads start at 3.8 (astral-sh/setup-uv#772)
    got = commands(python_sources("3.7", Os.LINUX, ubuntu="22.04"))
    assert "uv" not in got and "ppa:deadsnakes/ppa" in got["deadsnakes"] and "python3.7-venv" in got["deadsnakes"]
    assert got["conda"] == "conda create -n py37 python=3.7"


def test_the_system_python_of_a_release_comes_from_ubuntu_itself():
    # jammy's python3 is 3.10, which deadsnakes does not build for jammy
    got = commands(python_sources("3.10", Os.LINUX, ubuntu="22.04"))
    assert got["apt"] == "Ubuntu 22.04: sudo apt install python3.10 python3.10-venv" and "deadsnakes" not in got


def test_python_3_8_on_ubuntu_24_04_has_no_apt_route():
    got = commands(python_sources("3.8", Os.LINUX, ubuntu="24.04"))
    assert "apt" not in got and "deadsnakes" not in got and got["uv"] == "uv python install 3.8"


def test_windows_names_the_last_python_org_installer_of_the_minor():
    got = commands(python_sources("3.7", Os.WINDOWS))
    assert "3.7.9" in got["python.org"] and "py -3.7" in got["python.org"] and "pyenv" not in got


def test_conda_forge_has_no_python_before_3_8_for_apple_silicon():
    assert "conda" not in commands(python_sources("3.7", Os.MACOS, arm64_mac=True))
    assert "conda" in commands(python_sources("3.8", Os.MACOS, arm64_mac=True))


CLI = [sys.executable, "-c", "import sys; from stackresolve.cli import main; sys.argv[0] = 'stackresolve'; main()"]


def test_every_plan_says_how_to_get_its_python():
    """JSON carries it as data; the pip plan prints it beside its venv line."""
    env = {k: v for k, v in os.environ.items() if not k.startswith("STACKRESOLVE_")}
    doc = json.loads(subprocess.run([*CLI, "plan", "--no-detect", "--tf", "1.15", "--gpu", "GTX 1080", "--os",
                                     "linux", "--format", "json"], capture_output=True, text=True, env=env,
                                    timeout=120).stdout)
    how = doc["stack"]["python"]["how_to_get"]
    assert doc["stack"]["python"]["recommended"] == "3.7"
    assert {h["method"] for h in how} >= {"deadsnakes", "conda"} and all(h["source"] for h in how)
    assert "No Python 3.7 here? to get Python 3.7:" in doc["plans"]["pip"]


def test_check_before_install_compares_the_python_that_will_be_used(tmp_path):
    """TF 2.15 has no cp312 wheels: `check --before-install --python 3.12` fails (it passed before)."""
    env = {k: v for k, v in os.environ.items() if not k.startswith("STACKRESOLVE_")}
    lock = tmp_path / "stackresolve.lock"
    subprocess.run([*CLI, "plan", "--no-detect", "--tf", "2.15", "--cpu", "--os", "linux", "--format", "lock", "-o",
                    str(lock)], check=True, capture_output=True, env=env, timeout=120)
    base = [*CLI, "check", str(lock), "--before-install", "--no-detect", "--os", "linux"]
    outside = subprocess.run([*base, "--python", "3.12"], capture_output=True, text=True, env=env, timeout=120)
    assert outside.returncode == 1
    assert "python: expected 3.9 - 3.11, found 3.12" in outside.stdout
    inside = subprocess.run([*base, "--python", "3.11"], capture_output=True, text=True, env=env, timeout=120)
    assert inside.returncode == 0, inside.stdout


class Stream:
    def __init__(self, tty: bool):
        self.tty, self.text = tty, ""

    def isatty(self):
        return self.tty

    def write(self, text):
        self.text += text

    def flush(self):
        pass


def test_progress_lines_reach_a_terminal_only_and_carry_no_control_characters():
    from stackresolve.cli.app import progress_reporter

    pipe = Stream(False)
    progress_reporter(pipe)("installing tensorflow==2.15.1 (uv)")
    assert pipe.text == ""
    terminal = Stream(True)
    progress_reporter(terminal)("against https://index.invalid/\x1b]0;owned\x07simple")
    assert terminal.text.startswith("stackresolve: [") and terminal.text.endswith(" ...\n")
    assert "\x1b" not in terminal.text and "\x07" not in terminal.text


def test_an_installed_framework_that_sees_no_gpu_fails_a_gpu_plan(tmp_path):
    """The import check's answer decides: a GPU stack with no visible GPU is a finding and exit 1; a CPU stack is
    fine (the check runs in the venv; here a fake interpreter answers as TensorFlow would on a machine with no GPU)."""
    from stackresolve.install.run import InstallReport, _verify
    from stackresolve.install.target import InstallTarget
    from stackresolve.model.enums import Framework

    answer = {"framework": "tensorflow", "python": "3.11.7", "version": "2.15.1", "cuda": "12.2", "cudnn": "8",
              "gpus": [], "error": None}

    def runner(argv, timeout):
        return 0, "some warning\nstackresolve-import-check:" + json.dumps(answer) + "\n", ""

    for gpu, findings in ((True, 1), (False, 0)):
        target = InstallTarget("tensorflow[and-cuda]==2.15.1", (), (), ("3.11",), Os.LINUX, Framework.TENSORFLOW, gpu)
        report = InstallReport(target, tmp_path)
        _verify(report, runner, tmp_path / "bin" / "python", None, lambda _m: None)
        assert len(report.findings) == findings
        if gpu:
            assert "imports but sees no GPU; this is a GPU plan" in report.findings[0]


def test_a_system_cuda_stack_that_fails_to_load_says_where_cuda_comes_from(tmp_path):
    """tensorflow-gpu 1.15 loads CUDA 10.0 and cuDNN 7 from the system (TensorFlow's tested builds table): a failed
    import after a pip install names them and the formats that install them."""
    from stackresolve.install.run import InstallReport, _verify
    from stackresolve.install.target import read_target

    lock = tmp_path / "tf115.lock"
    subprocess.run([*CLI, "plan", "--no-detect", "--tf", "1.15", "--gpu", "GTX 1080", "--os", "linux", "--format",
                    "lock", "-o", str(lock)], check=True, capture_output=True, timeout=120)
    target = read_target(lock.read_text(), str(lock), None, Os.LINUX)
    assert target.system_cuda == "CUDA 10.0 and cuDNN 7.6.5"
    answer = {"framework": "tensorflow", "version": None, "gpus": [],
              "error": "ImportError: libcudart.so.10.0: cannot open shared object file: No such file or directory"}

    def runner(argv, timeout):
        return 0, "stackresolve-import-check:" + json.dumps(answer) + "\n", ""

    report = InstallReport(target, tmp_path)
    _verify(report, runner, tmp_path / "bin" / "python", None, lambda _m: None)
    assert report.findings == [
        "TensorFlow does not import: ImportError: libcudart.so.10.0: cannot open shared object file: No such file or "
        "directory; this stack loads CUDA 10.0 and cuDNN 7.6.5 from the system, which pip does not install: install "
        "them with the plan's --format apt (Ubuntu), conda or powershell (Windows)"]
