"""CUDA toolkits, cuDNN, the Python/TensorFlow probe and the OS probe on fake trees."""

from __future__ import annotations

import json
import os
import re
import subprocess
import sys

import pytest
from detect_helpers import FakeRunner, fixture_text, is_, make_tree

from stackresolve.detect import LocalFS, detect_machine, toolkit
from stackresolve.detect import _pyprobe, pyenv
from stackresolve.detect.osinfo import parse_os_release, probe_os

# File contents built for these trees (not captures): the shapes of version.json / version.txt / headers.
VERSION_JSON_118 = json.dumps({"cuda": {"name": "CUDA SDK", "version": "11.8.0"},
                               "cuda_nvcc": {"name": "CUDA NVCC", "version": "11.8.89"}})
CUDNN_V8_HEADER = "#define CUDNN_MAJOR 8\n#define CUDNN_MINOR 9\n#define CUDNN_PATCHLEVEL 7\n"
OLD_CUDNN_H = ("#if !defined(CUDNN_H_)\n#define CUDNN_H_\n\n#define CUDNN_MAJOR 7\n#define CUDNN_MINOR 6\n"
               "#define CUDNN_PATCHLEVEL 5\n\n#define CUDNN_VERSION (CUDNN_MAJOR * 1000 + CUDNN_MINOR * 100 + "
               "CUDNN_PATCHLEVEL)\n")


def run_toolkits(tmp_path, files, env, runner=None, system="linux", pip_dists=()):
    make_tree(tmp_path, files)
    fs = LocalFS(tmp_path)
    records, findings = [], []
    runner = runner or FakeRunner()
    tks = toolkit.probe_toolkits(fs, env, system, runner, [], list(pip_dists), records, findings)
    return tks, findings, runner


# --- CUDA toolkits ------------------------------------------------------------------------------------------------
def test_linux_toolkits_all_found(tmp_path):
    files = {
        "/usr/local/cuda-11.8/version.json": VERSION_JSON_118,
        "/usr/local/cuda-11.8/bin/nvcc": "",
        "/usr/local/cuda": "->/usr/local/cuda-11.8",
        "/usr/local/cuda-10.0/version.txt": "CUDA Version 10.0.130\n",
        "/usr/local/cuda-11.1/bin/nvcc": "",  # no version file: nvcc is run
    }
    runner = FakeRunner().on(is_("nvcc"), (0, fixture_text("nvcc-version-11.1.txt"), ""))
    tks, findings, runner = run_toolkits(tmp_path, files, {"PATH": "/usr/local/cuda/bin:/usr/bin",
                                                           "CUDA_HOME": "/opt/nowhere"}, runner)
    got = sorted((t.version, t.full_version, t.path, t.source, t.on_path) for t in tks)
    assert got == [
        ("10.0", "10.0.130", "/usr/local/cuda-10.0", "version.txt", False),
        ("11.1", "11.1.105", "/usr/local/cuda-11.1", "nvcc", False),
        ("11.8", "11.8.0", "/usr/local/cuda-11.8", "version.json", True),  # nvcc on PATH, via the symlink
    ]
    assert [a for a, _ in runner.calls] == [["/usr/local/cuda-11.1/bin/nvcc", "--version"]]
    assert [f.code for f in findings] == ["env-path-missing"]


def test_nvcc_on_path_outside_known_dirs(tmp_path):
    files = {"/opt/tools/bin/nvcc": ""}
    runner = FakeRunner().on(is_("nvcc"), (0, fixture_text("nvcc-version-10.1.txt"), ""))
    tks, _, _ = run_toolkits(tmp_path, files, {"PATH": "/opt/tools/bin"}, runner)
    assert [(t.version, t.path, t.source, t.on_path) for t in tks] == [("10.1", "/opt/tools", "nvcc", True)]


def test_windows_toolkits(tmp_path):
    base = "C:\\Program Files\\NVIDIA GPU Computing Toolkit\\CUDA"
    files = {base + "\\v11.8\\version.json": VERSION_JSON_118, base + "\\v10.1\\bin": None}
    env = {"PATH": "C:\\Windows", "CUDA_PATH": base + "\\v11.8", "CUDA_PATH_V11_8": base + "\\v11.8",
           "CUDA_PATH_V10_1": base + "\\v10.1", "ProgramFiles": "C:\\Program Files"}
    tks, _, _ = run_toolkits(tmp_path, files, env, system="windows")
    got = sorted((t.version, t.source, t.path) for t in tks)
    assert got == [("10.1", "env:CUDA_PATH_V10_1", base + "\\v10.1"),
                   ("11.8", "version.json", base + "\\v11.8")]


def test_conda_and_pip_toolkits(tmp_path):
    make_tree(tmp_path, {"/opt/conda/envs/tf/conda-meta/cudatoolkit-10.0.130-0.json": "{}",
                         "/opt/conda/envs/new/conda-meta/cuda-version-12.4-h3060b56_3.json": "{}",
                         "/opt/conda/bin/conda": ""})
    fs = LocalFS(tmp_path)
    from stackresolve.detect.machine import _conda_prefixes

    env = {"CONDA_PREFIX": "/opt/conda/envs/tf", "CONDA_EXE": "/opt/conda/bin/conda"}
    prefixes = _conda_prefixes(fs, env, "linux", None)
    assert prefixes == ["/opt/conda/envs/tf", "/opt/conda/envs/new"]
    dists = [{"name": "nvidia-cuda-runtime-cu12", "version": "12.3.101", "location": "/venv/site-packages"}]
    tks = toolkit.probe_toolkits(fs, env, "linux", FakeRunner(), prefixes, dists, [], [])
    assert sorted((t.version, t.source, t.path) for t in tks) == [
        ("10.0", "conda:cudatoolkit", "/opt/conda/envs/tf"),
        ("12.3", "pip:nvidia-cuda-runtime-cu12", "/venv/site-packages"),
        ("12.4", "conda:cuda-version", "/opt/conda/envs/new")]


# --- cuDNN ----------------------------------------------------------------------------------------------------------
def test_cudnn_linux_headers_and_libs(tmp_path):
    files = {
        "/usr/include/x86_64-linux-gnu/cudnn_version_v8.h": CUDNN_V8_HEADER,
        "/usr/include/cudnn_version.h": "->/usr/include/x86_64-linux-gnu/cudnn_version_v8.h",  # alternatives
        "/usr/lib/x86_64-linux-gnu/libcudnn.so.8.9.7": "",
        "/usr/lib/x86_64-linux-gnu/libcudnn.so.8": "->/usr/lib/x86_64-linux-gnu/libcudnn.so.8.9.7",
        "/usr/lib/x86_64-linux-gnu/libcudnn_ops_infer.so.8": "",
        "/usr/local/cuda-10.0/version.txt": "CUDA Version 10.0.130\n",
        "/usr/local/cuda-10.0/include/cudnn.h": OLD_CUDNN_H,
        "/usr/local/cuda-10.0/lib64/libcudnn.so.7": "",
        "/opt/conda/envs/tf/conda-meta/cudnn-8.9.2.26-cuda12_0.json": "{}",
    }
    make_tree(tmp_path, files)
    fs = LocalFS(tmp_path)
    tks = toolkit.probe_toolkits(fs, {"PATH": ""}, "linux", FakeRunner(), [], [], [], [])
    dists = [{"name": "nvidia-cudnn-cu11", "version": "8.6.0.163", "location": "/venv/lib/python3.10/site-packages"}]
    got = toolkit.probe_cudnn(fs, {"PATH": ""}, "linux", tks, ["/opt/conda/envs/tf"], dists, [])
    assert [(c.version, c.path, c.source) for c in got] == [
        ("8.9.7", "/usr/include/cudnn_version.h", "cudnn_version.h"),
        ("7.6.5", "/usr/local/cuda-10.0/include/cudnn.h", "cudnn.h"),
        ("8.9.7", "/usr/lib/x86_64-linux-gnu/libcudnn.so.8.9.7", "libcudnn.so"),
        ("7", "/usr/local/cuda-10.0/lib64/libcudnn.so.7", "libcudnn.so"),
        ("8.9.2", "/opt/conda/envs/tf", "conda:cudnn"),
        ("8.6.0", "/venv/lib/python3.10/site-packages/nvidia/cudnn", "pip:nvidia-cudnn-cu11"),
    ]


def test_cudnn_windows_dll(tmp_path):
    base = "C:\\Program Files\\NVIDIA GPU Computing Toolkit\\CUDA\\v11.2"
    files = {base + "\\version.json": json.dumps({"cuda": {"version": "11.2.2"}}),
             base + "\\bin\\cudnn64_8.dll": "", base + "\\include\\cudnn_version.h": CUDNN_V8_HEADER.replace(
                 "MINOR 9", "MINOR 1").replace("PATCHLEVEL 7", "PATCHLEVEL 1")}
    make_tree(tmp_path, files)
    fs = LocalFS(tmp_path)
    env = {"PATH": base + "\\bin", "CUDA_PATH": base}
    tks = toolkit.probe_toolkits(fs, env, "windows", FakeRunner(), [], [], [], [])
    got = toolkit.probe_cudnn(fs, env, "windows", tks, [], [], [])
    assert [(c.version, c.source) for c in got] == [("8.1.1", "cudnn_version.h"), ("8", "cudnn64.dll")]


# --- Python and TensorFlow --------------------------------------------------------------------------------------------
def _fake_site(root, tf_files):
    make_tree(root, tf_files)
    return str(root)


GENERATED_BUILD_INFO = ("import collections\n\nbuild_info = collections.OrderedDict([('cuda_version', '12.2'), "
                        "('cudnn_version', '8'), ('is_cuda_build', True), ('is_rocm_build', False)])\n")


def test_pyprobe_scan(tmp_path):
    site1 = _fake_site(tmp_path / "site1", {
        "/tensorflow_gpu-1.15.5.dist-info/METADATA": "Name: tensorflow-gpu\nVersion: 1.15.5\n",
        "/tensorflow_core/python/platform/build_info.py": "is_rocm_build = False\nis_cuda_build = True\n",
        "/nvidia_cudnn_cu12-8.9.2.26.dist-info/METADATA": "Version: 8.9.2.26\n",
        "/numpy-1.26.4.dist-info/METADATA": "Version: 1.26.4\n",
    })
    site2 = _fake_site(tmp_path / "site2", {
        "/tensorflow-2.15.1.dist-info/METADATA": "Version: 2.15.1\n",
        "/tensorflow/python/platform/build_info.py": GENERATED_BUILD_INFO,
        "/tensorflow_gpu-1.14.0.dist-info/METADATA": "Version: 1.14.0\n",  # shadowed by site1
        "/tensorflow_cpu.egg-info/PKG-INFO": "Metadata-Version: 1.0\nName: tensorflow-cpu\nVersion: 2.4.0\n",
    })
    dists = _pyprobe.scan([site1, site2, str(tmp_path / "missing")])
    got = {d["name"]: (d["version"], d.get("build_info")) for d in dists}
    assert got == {
        "tensorflow-gpu": ("1.15.5", {"cuda_version": None, "cudnn_version": None, "is_cuda_build": True}),
        "nvidia-cudnn-cu12": ("8.9.2.26", None),
        "tensorflow": ("2.15.1", {"cuda_version": "12.2", "cudnn_version": "8", "is_cuda_build": True}),
        "tensorflow-cpu": ("2.4.0", {"cuda_version": "12.2", "cudnn_version": "8", "is_cuda_build": True}),
    }
    findings = []
    fws = pyenv.frameworks({"dists": dists}, findings)
    tf115 = next(f for f in fws if f.package == "tensorflow-gpu")
    assert (tf115.name, tf115.version, tf115.gpu_build, tf115.cuda) == ("tensorflow", "1.15.5", True, None)
    assert [f.code for f in findings] == ["tensorflow-multiple-dists"]  # tensorflow + tensorflow-cpu in site2


def test_pyprobe_script_runs_in_another_interpreter(tmp_path):
    """The probe text, run by `python -c` in a separate interpreter, finds TF on its sys.path."""
    site = _fake_site(tmp_path / "site", {
        "/tensorflow-2.15.1.dist-info/METADATA": "Version: 2.15.1\n",
        "/tensorflow/python/platform/build_info.py": GENERATED_BUILD_INFO,
    })
    env = dict(os.environ, PYTHONPATH=site)
    out = subprocess.run([sys.executable, "-c", pyenv.probe_script(), pyenv.MARKER], capture_output=True, text=True,
                         env=env, timeout=30).stdout
    doc = json.loads(out)
    assert doc["python"] == "%d.%d.%d" % sys.version_info[:3]
    tf = next(d for d in doc["dists"] if d["name"] == "tensorflow")
    assert tf["version"] == "2.15.1" and tf["build_info"]["cuda_version"] == "12.2"


def test_pyprobe_source_is_old_python_compatible():
    src = pyenv.probe_script()
    assert "from __future__ import print_function" in src
    # no f-strings, annotations, walrus, async, keyword-only arguments (Python 2.7 / 3.5 must parse it)
    import ast

    tree = ast.parse(src, feature_version=(3, 4))
    for node in ast.walk(tree):
        assert not isinstance(node, (ast.JoinedStr, ast.AnnAssign, ast.NamedExpr, ast.AsyncFunctionDef)), node
        if isinstance(node, ast.FunctionDef):
            a = node.args
            assert node.returns is None and not a.kwonlyargs and not a.posonlyargs
            assert all(x.annotation is None for x in a.args)
    assert not re.search(r"\bprint [^(]", src)


def test_python_probe_through_runner_in_another_interpreter(tmp_path):
    link = tmp_path / "python"
    os.symlink(sys.executable, link)
    from stackresolve.detect import SubprocessRunner

    records, findings = [], []
    doc = pyenv.run_python_probe(str(link), SubprocessRunner(), records, findings)
    assert doc is not None and doc["_source"] == "probe" and findings == []
    info = pyenv.python_info(doc, str(link))
    assert info.version == "%d.%d.%d" % sys.version_info[:3] and info.source == "probe"


def test_python_exe_missing(tmp_path):
    m = detect_machine(runner=FakeRunner(), fs=LocalFS(tmp_path), env={"PATH": ""}, system="linux",
                       python_exe=str(tmp_path / "nope" / "python"))
    assert "python-not-found" in [f.code for f in m.findings]
    assert m.python.version is None and m.python.executable.endswith("python")


def test_python_probe_garbage_output(tmp_path):
    runner = FakeRunner().on(lambda a: pyenv.MARKER in a, (1, "", "SyntaxError: invalid syntax\n"))
    m = detect_machine(runner=runner, fs=LocalFS(tmp_path), env={"PATH": ""}, system="linux",
                       python_exe="/usr/bin/python2.6")
    assert "python-probe-failed" in [f.code for f in m.findings]


def test_python_probe_reports_frameworks(tmp_path):
    doc = {"probe": "stackresolve-python", "python": "3.7.12", "executable": "/envs/tf1/bin/python",
           "prefix": "/envs/tf1", "dists": [{"name": "tensorflow-gpu", "version": "1.15.5",
                                             "location": "/envs/tf1/lib/python3.7/site-packages",
                                             "build_info": {"cuda_version": None, "cudnn_version": None,
                                                            "is_cuda_build": True}}]}
    runner = FakeRunner().on(lambda a: pyenv.MARKER in a, (0, json.dumps(doc) + "\n", ""))
    m = detect_machine(runner=runner, fs=LocalFS(tmp_path), env={"PATH": ""}, system="linux",
                       python_exe="/envs/tf1/bin/python")
    assert (m.python.version, m.python.executable) == ("3.7.12", "/envs/tf1/bin/python")
    assert [(f.name, f.version, f.gpu_build, f.package) for f in m.frameworks] == [
        ("tensorflow", "1.15.5", True, "tensorflow-gpu")]
    assert m.to_json_dict()["frameworks"][0]["cuda"] is None


# --- OS -----------------------------------------------------------------------------------------------------------------
def test_os_release_and_container(tmp_path):
    make_tree(tmp_path, {"/etc/os-release": 'NAME="Ubuntu"\nID=ubuntu\nVERSION_ID="22.04"\n', "/.dockerenv": ""})
    o = probe_os(LocalFS(tmp_path), {}, "linux")
    assert (o.system, o.distro, o.release, o.wsl, o.container) == ("linux", "ubuntu", "22.04", False, True)


def test_wsl_detected_from_proc_version_or_lib_dir(tmp_path):
    make_tree(tmp_path / "a", {"/proc/version": "Linux version 5.15.146.1-microsoft-standard-WSL2 (root@65c7) #1\n"})
    assert probe_os(LocalFS(tmp_path / "a"), {}, "linux").wsl is True
    make_tree(tmp_path / "b", {"/usr/lib/wsl/lib/libcuda.so.1": ""})
    assert probe_os(LocalFS(tmp_path / "b"), {}, "linux").wsl is True
    make_tree(tmp_path / "c", {"/proc/version": "Linux version 6.8.0-45-generic (buildd@lcy02-amd64-115)\n"})
    assert probe_os(LocalFS(tmp_path / "c"), {}, "linux").wsl is False


def test_container_from_podman_marker(tmp_path):
    make_tree(tmp_path, {"/run/.containerenv": ""})
    assert probe_os(LocalFS(tmp_path), {}, "linux").container is True


def test_macos_runs_no_gpu_probe(tmp_path):
    make_tree(tmp_path, {"/usr/bin/nvidia-smi": ""})
    runner = FakeRunner()
    m = detect_machine(runner=runner, fs=LocalFS(tmp_path), env={"PATH": "/usr/bin"}, system="macos")
    assert m.os.system == "macos" and runner.calls == [] and m.gpus == ()


def test_parse_os_release_quotes():
    assert parse_os_release("ID='rhel'\nVERSION_ID=\"9.4\"\n# comment\nBAD LINE\n") == {"ID": "rhel",
                                                                                       "VERSION_ID": "9.4"}


# --- import cost ----------------------------------------------------------------------------------------------------------
def test_import_is_cheap():
    code = ("import sys, time; t = time.perf_counter(); import stackresolve.detect as d; "
            "dt = time.perf_counter() - t; "
            "print(dt, [m for m in ('subprocess', 'ctypes', 'pynvml', 'json') if m in sys.modules])")
    src = os.path.join(os.path.dirname(__file__), "..", "..", "src")
    env = dict(os.environ, PYTHONPATH=os.path.abspath(src) + os.pathsep + os.environ.get("PYTHONPATH", ""))
    out = subprocess.run([sys.executable, "-c", code], capture_output=True, text=True, env=env, timeout=30).stdout
    dt, heavy = out.split(" ", 1)
    assert float(dt) < 0.2
    assert heavy.strip() == "[]"


def _old_pythons():
    """Interpreters older than 3.8 on this host (PATH or pyenv), for the probe's compatibility test."""
    import glob
    import shutil

    cands = [shutil.which(n) for n in ("python2.7", "python2", "python3.5", "python3.6", "python3.7")]
    for pat in ("2.7*", "3.5*", "3.6*", "3.7*"):
        cands += sorted(glob.glob(os.path.expanduser(f"~/.pyenv/versions/{pat}/bin/python")))
    found = {}
    for c in cands:
        if not c or os.sep + "shims" + os.sep in c:  # pyenv shims are slow scripts: the real binaries come below
            continue
        try:
            out = subprocess.run([c, "-c", "import sys; print('%d.%d' % sys.version_info[:2])"],
                                 capture_output=True, text=True, timeout=10).stdout.strip()
        except (OSError, subprocess.SubprocessError):
            continue
        if out and tuple(int(x) for x in out.split(".")) < (3, 8):
            found.setdefault(out, c)
    return sorted(found.items())


@pytest.mark.parametrize("version, python", _old_pythons() or [pytest.param(None, None, marks=pytest.mark.skip(
    reason="no Python < 3.8 on this host"))])
def test_pyprobe_on_old_interpreters(tmp_path, version, python):
    site = _fake_site(tmp_path / "site", {
        "/tensorflow_gpu-1.15.5.dist-info/METADATA": "Version: 1.15.5\n",
        "/tensorflow_core/python/platform/build_info.py": "is_rocm_build = False\nis_cuda_build = True\n",
    })
    env = dict(os.environ, PYTHONPATH=site)
    env.pop("PYTHONHOME", None)
    res = subprocess.run([python, "-c", pyenv.probe_script(), pyenv.MARKER], capture_output=True, text=True,
                         env=env, timeout=30)
    doc = json.loads(res.stdout)
    assert doc["python"].startswith(version + ".")
    assert [(d["name"], d["version"], d["build_info"]["is_cuda_build"]) for d in doc["dists"]] == [
        ("tensorflow-gpu", "1.15.5", True)]
