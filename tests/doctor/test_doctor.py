"""`stackresolve doctor`: scenarios on fake machines (a file tree under tmp_path, a fake `python` executable that
prints the probe's JSON, an env mapping), detected by the real detect_machine and diagnosed against the real
knowledge base. Expected values come from the sources named next to them (see tests/fixtures/doctor/README.md)."""

from __future__ import annotations

import json
import ntpath
import posixpath
import stat
import sys
from pathlib import Path

import pytest
from packaging.specifiers import SpecifierSet
from packaging.version import Version

from stackresolve.detect import LocalFS, SubprocessRunner, detect_machine
from stackresolve.detect import _pyprobe
from stackresolve.detect.libload import probe_libraries
from stackresolve.detect.runner import CommandTimeout
from stackresolve.doctor import SCHEMA, diagnose
from stackresolve.knowledge.rules import cuda_runtime_serves as _cuda_fit, tf_library_names
from stackresolve.request.build import InputError
import locations

FIXTURES = locations.FIXTURES
DETECT_FIXTURES = FIXTURES / "detect"
PROC_384 = (DETECT_FIXTURES / "proc-driver-nvidia-version-proprietary-384.98.txt").read_text(encoding="utf-8")
PROC_565 = (DETECT_FIXTURES / "proc-driver-nvidia-version-open-565.57.01.txt").read_text(encoding="utf-8")
CUDNN_804_DEFINES = (DETECT_FIXTURES / "cudnn-version-h-defines-8.0.4.txt").read_text(encoding="utf-8")
CUDNN_765_H = "#define CUDNN_MAJOR 7\n#define CUDNN_MINOR 6\n#define CUDNN_PATCHLEVEL 5\n"  # cudnn.h of 7.x holds them
TF115_BUILD_INFO = "is_rocm_build = False\nis_cuda_build = True\n"
TF215_BUILD_INFO = ("import collections\n\nbuild_info = collections.OrderedDict([('cuda_version', '12.2'), "
                    "('cudnn_version', '8'), ('is_cuda_build', True), ('is_rocm_build', False)])\n")

# TensorFlow 1.15 Linux GPU: CUDA 10.0 (tensorflow/docs site/en/install/source.md, tested builds); compiled with
# cuDNN 7.6, not the table's 7.4: the 1.15.0 wheel says "Loaded runtime CuDNN library: 7.4.1 but source was compiled
# with: 7.6.0" (tensorflow/tensorflow#35376);
# CUDA 10.0 needs driver >= 410.48 on Linux (NVIDIA CUDA release notes, Table 3).
TF115_CUDA_LIBS = ["libcudart.so.10.0", "libcublas.so.10.0", "libcufft.so.10.0", "libcurand.so.10.0",
                   "libcusolver.so.10.0", "libcusparse.so.10.0"]
# tensorflow[and-cuda]==2.15.1 pins (constraints/tensorflow_wheels.toml, from the wheel's METADATA)
AND_CUDA_2151 = {"nvidia-cublas-cu12": "12.2.5.6", "nvidia-cuda-cupti-cu12": "12.2.142",
                 "nvidia-cuda-nvcc-cu12": "12.2.140", "nvidia-cuda-nvrtc-cu12": "12.2.140",
                 "nvidia-cuda-runtime-cu12": "12.2.140", "nvidia-cudnn-cu12": "8.9.4.25",
                 "nvidia-cufft-cu12": "11.0.8.103", "nvidia-curand-cu12": "10.3.3.141",
                 "nvidia-cusolver-cu12": "11.5.2.141", "nvidia-cusparse-cu12": "12.1.2.141",
                 "nvidia-nccl-cu12": "2.16.5", "nvidia-nvjitlink-cu12": "12.2.140"}
# the libraries of those wheels, in the folders the wheels install them to
AND_CUDA_LIBS = {"cuda_runtime": ["libcudart.so.12"], "cublas": ["libcublas.so.12", "libcublasLt.so.12"],
                 "cufft": ["libcufft.so.11"], "curand": ["libcurand.so.10"], "cusolver": ["libcusolver.so.11"],
                 "cusparse": ["libcusparse.so.12"], "cudnn": ["libcudnn.so.8"]}
# TensorFlow 1.15's own requirements (its setup.py): numpy < 1.19, gast == 0.2.2, tensorboard / estimator 1.15
TF115_ENV = {"numpy": "1.18.5", "gast": "0.2.2", "h5py": "2.10.0", "protobuf": "3.19.6", "tensorboard": "1.15.0",
             "tensorflow_estimator": "1.15.1", "six": "1.16.0", "wrapt": "1.14.1"}
# TensorFlow 2.15.1's requirements (its METADATA): numpy < 2, ml-dtypes ~= 0.2.0, wrapt < 1.15, keras 2.15, ...
TF215_ENV = {"numpy": "1.26.4", "protobuf": "4.23.4", "ml_dtypes": "0.2.0", "wrapt": "1.14.1", "keras": "2.15.0",
             "tensorboard": "2.15.1", "tensorflow_estimator": "2.15.0", "typing_extensions": "4.5.0",
             "gast": "0.5.4", "h5py": "3.10.0"}


@pytest.fixture(scope="module")
def kb():
    from stackresolve.knowledge.loader import KnowledgeError, load_knowledge

    try:
        return load_knowledge()
    except KnowledgeError as exc:  # pragma: no cover - only while the knowledge base is being written
        pytest.skip(f"knowledge base incomplete: {exc}")


# --- fake machines ------------------------------------------------------------------------------------------------
def machine_path(root: Path, path: str) -> Path:
    p = path.replace("\\", "/")
    if len(p) > 1 and p[1] == ":":
        p = p[0].upper() + "/" + p[2:].lstrip("/")
    return root / p.lstrip("/")


def make_tree(root: Path, files: dict) -> None:
    for path, content in files.items():
        target = machine_path(root, path)
        target.parent.mkdir(parents=True, exist_ok=True)
        target.write_text(content, encoding="utf-8")


def fake_python(tmp_path: Path, root: Path, site: str, python: str, dists: dict[str, str],
                extra: dict[str, str] | None = None, system: str = "linux") -> str:
    """Write dist-info folders (and `extra` files) into the machine's site-packages, run the real probe scan over
    it, and make an executable that prints that JSON as the interpreter `python` would."""
    j = ntpath.join if system == "windows" else posixpath.join
    files = {j(site, f"{name}-{version}.dist-info", "METADATA"): f"Name: {name}\nVersion: {version}\n"
             for name, version in dists.items()}
    files.update({j(site, rel): text for rel, text in (extra or {}).items()})
    make_tree(root, files)
    real_site = str(machine_path(root, site))
    doc = _pyprobe.probe(sys_path=[real_site])
    prefix = site.split("lib")[0].rstrip("/\\") or site
    exe = j(prefix, "python.exe" if system == "windows" else "bin/python")
    doc.update(python=python, executable=exe, prefix=prefix)
    for entry in doc["dists"] + doc["packages"]:  # the machine's own paths, as the interpreter would print them
        entry["location"] = site
        if "build_info_path" in entry:
            entry["build_info_path"] = site + entry["build_info_path"][len(real_site):]
    doc["nvidia_lib_dirs"] = [site + d[len(real_site):] for d in doc["nvidia_lib_dirs"]]
    script = tmp_path / "bin" / "python"
    script.parent.mkdir(parents=True, exist_ok=True)
    script.write_text("#!/bin/sh\ncat <<'STACKRESOLVE_PROBE_JSON'\n" + json.dumps(doc) +
                      "\nSTACKRESOLVE_PROBE_JSON\n", encoding="utf-8")
    script.chmod(script.stat().st_mode | stat.S_IXUSR | stat.S_IXGRP | stat.S_IXOTH)
    return str(script)


def detect(root: Path, env: dict, python_exe: str, system: str = "linux"):
    return detect_machine(runner=SubprocessRunner(), fs=LocalFS(root), env=env, python_exe=python_exe,
                          system=system, timeout_total=2.0)


class FakeLoader:
    """Stands in for the dynamic loader (the injected `probe_libraries`): a library loads when its file exists in
    one of the searched folders of the fake tree, or in the loader's own default folders."""

    def __init__(self, root: Path, system: str = "linux", default_dirs=("/usr/lib/x86_64-linux-gnu", "/lib")):
        self.fs = LocalFS(root)
        self.join = ntpath.join if system == "windows" else posixpath.join
        self.system = system
        self.default_dirs = list(default_dirs)
        self.calls: list[tuple[list[str], list[str]]] = []

    def __call__(self, names, dirs):
        self.calls.append((list(names), list(dirs)))
        out = {}
        for name in names:
            for d in list(dirs) + self.default_dirs:
                path = self.join(d, name)
                if self.fs.is_file(path):
                    out[name] = (True, f"loads from {path}")
                    break
            else:
                out[name] = (False, f"{name} not found" if self.system == "windows" else
                             f"{name}: cannot open shared object file: No such file or directory")
        return out


LINUX_SITE = "/opt/venv/lib/python3.7/site-packages"
TF115_DISTS = {"tensorflow_gpu": "1.15.5", **TF115_ENV}
TF115_EXTRA = {"tensorflow_core/python/platform/build_info.py": TF115_BUILD_INFO}


def cuda_tree(version_txt: str, home: str, libs: list[str]) -> dict[str, str]:
    return {f"{home}/version.txt": version_txt, **{f"{home}/lib64/{lib}": "" for lib in libs}}


def codes(report, severity=None):
    return [f.code for f in report.findings if severity is None or f.severity == severity]


def finding(report, code):
    return next(f for f in report.findings if f.code == code)


def tf115_machine(tmp_path, *, proc=PROC_565, ld_library_path="/usr/local/cuda-10.0/lib64", dists=None,
                  cudnn_lib="libcudnn.so.7"):
    """TensorFlow 1.15.5 on CUDA 10.0 + cuDNN 7.6.5, the stack its tested-build row names."""
    root = tmp_path / "root"
    home = "/usr/local/cuda-10.0"
    make_tree(root, {"/proc/driver/nvidia/version": proc,
                     **cuda_tree("CUDA Version 10.0.130\n", home, TF115_CUDA_LIBS + [cudnn_lib]),
                     f"{home}/include/cudnn.h": CUDNN_765_H})
    exe = fake_python(tmp_path, root, LINUX_SITE, "3.7.12", dists or TF115_DISTS, TF115_EXTRA)
    env = {"PATH": "/usr/bin:/bin", "STACKRESOLVE_GPU_CC": "6.1"}
    if ld_library_path:
        env["LD_LIBRARY_PATH"] = ld_library_path
    return root, detect(root, env, exe)


# --- scenarios ------------------------------------------------------------------------------------------------------
def test_tf115_on_a_working_cuda_10_0_stack_is_healthy(tmp_path, kb):
    root, machine = tf115_machine(tmp_path)
    loader = FakeLoader(root)
    report = diagnose(machine, kb, probe_libraries=loader)
    t = report.target
    assert (t.tf_version, t.origin, t.cuda, t.cudnn_compiled, t.driver_min) == ("1.15.5", "installed", "10.0", "7.6",
                                                                                 "410.48")
    assert codes(report, "error") == [] and report.healthy and report.exit_code == 0
    assert [n for n, ok, _ in report.libraries if ok] == TF115_CUDA_LIBS + ["libcudnn.so.7"]
    # the loader was asked for exactly the names TensorFlow 1.15 opens, searching LD_LIBRARY_PATH
    assert loader.calls[0] == (TF115_CUDA_LIBS + ["libcudnn.so.7"], ["/usr/local/cuda-10.0/lib64"])


def test_cuda_10_2_toolkit_where_tf115_wants_10_0(tmp_path, kb):
    root = tmp_path / "root"
    home = "/usr/local/cuda-10.2"
    make_tree(root, {"/proc/driver/nvidia/version": PROC_565,
                     **cuda_tree("CUDA Version 10.2.89\n", home,
                                 ["libcudart.so.10.2", "libcublas.so.10", "libcudnn.so.7"]),
                     f"{home}/include/cudnn.h": CUDNN_765_H})
    exe = fake_python(tmp_path, root, LINUX_SITE, "3.7.12", TF115_DISTS, TF115_EXTRA)
    machine = detect(root, {"PATH": "/usr/bin", "LD_LIBRARY_PATH": f"{home}/lib64", "STACKRESOLVE_GPU_CC": "6.1"},
                     exe)
    report = diagnose(machine, kb, probe_libraries=FakeLoader(root))
    assert [t.version for t in machine.cuda_toolkits] == ["10.2"]
    f = finding(report, "cuda-version-mismatch")
    assert f.severity == "error" and "10.2" in f.message and "libcudart.so.10.0" in f.message
    assert "cuda_configure.bzl" in f.source
    # the loader fails on every CUDA 10.0 name; cuDNN 7 is there and loads. One finding explains them.
    assert [n for n, ok, _ in report.libraries if not ok] == TF115_CUDA_LIBS
    assert "library-missing" not in codes(report)
    assert "ld-library-path-other-cuda" in codes(report, "warning")
    assert not report.healthy and report.exit_code == 1


def test_cudnn_8_headers_where_tf115_wants_cudnn_7(tmp_path, kb):
    root = tmp_path / "root"
    home = "/usr/local/cuda-10.0"
    make_tree(root, {"/proc/driver/nvidia/version": PROC_565,
                     **cuda_tree("CUDA Version 10.0.130\n", home, TF115_CUDA_LIBS + ["libcudnn.so.8"]),
                     f"{home}/include/cudnn_version.h": CUDNN_804_DEFINES})
    exe = fake_python(tmp_path, root, LINUX_SITE, "3.7.12", TF115_DISTS, TF115_EXTRA)
    machine = detect(root, {"PATH": "/usr/bin", "LD_LIBRARY_PATH": f"{home}/lib64", "STACKRESOLVE_GPU_CC": "6.1"},
                     exe)
    report = diagnose(machine, kb, probe_libraries=FakeLoader(root))
    f = finding(report, "cudnn-version-mismatch")
    assert f.severity == "error" and "8.0.4" in f.message and "libcudnn.so.7" in f.message
    assert "cuda_dnn.cc" in f.source
    assert "cudnn 7.6.5" in f.fix.lower() or "7.x" in f.fix  # the resolver's cuDNN 7 for CUDA 10.0
    assert "cuda-version-mismatch" not in codes(report)
    assert [n for n, ok, _ in report.libraries if not ok] == ["libcudnn.so.7"]
    assert not report.healthy


def test_driver_too_old_for_cuda_10_0(tmp_path, kb):
    _, machine = tf115_machine(tmp_path, proc=PROC_384)
    assert machine.driver.version == "384.98"
    report = diagnose(machine, kb, probe_libraries=FakeLoader(tmp_path / "root"))
    f = finding(report, "driver-too-old")
    assert f.severity == "error" and "384.98" in f.message and "410.48" in f.message
    assert kb.toolkit("10.0").source in f.source
    assert codes(report, "error") == ["driver-too-old"]


def test_cuda_libraries_off_the_loader_path(tmp_path, kb):
    root, machine = tf115_machine(tmp_path, ld_library_path=None)
    report = diagnose(machine, kb, probe_libraries=FakeLoader(root))
    f = finding(report, "library-not-on-search-path")
    assert "/usr/local/cuda-10.0/lib64" in f.message and "libcudart.so.10.0" in f.message
    assert f.fix.startswith("export LD_LIBRARY_PATH=/usr/local/cuda-10.0/lib64:")
    assert "library-missing" not in codes(report)
    assert not report.healthy


def test_a_library_missing_from_the_toolkit(tmp_path, kb):
    root, machine = tf115_machine(tmp_path)
    (machine_path(root, "/usr/local/cuda-10.0/lib64/libcufft.so.10.0")).unlink()
    report = diagnose(machine, kb, probe_libraries=FakeLoader(root))
    f = finding(report, "library-missing")
    assert "cannot load libcufft.so.10.0 " in f.message
    assert "libcufft.so.10.0: cannot open shared object file" in f.message
    assert codes(report, "error") == ["library-missing"]


def test_doctor_on_this_host_describes_this_interpreter(kb):
    import importlib.metadata
    import platform

    from stackresolve.cli.app import detect_machine

    report = diagnose(detect_machine(), kb, probe_libraries=None)
    doc = json.loads(json.dumps(report.to_json_dict()))
    assert doc["machine"]["python"]["version"] == platform.python_version()
    assert doc["machine"]["os"] in ("linux", "wsl2", "windows", "macos")
    try:
        installed = importlib.metadata.version("tensorflow")
    except importlib.metadata.PackageNotFoundError:
        installed = None
    machine_frameworks = [f.name for f in report.frameworks]
    if installed is None and machine_frameworks:  # PyTorch or JAX alone: no TensorFlow is asked for
        assert report.target is None and "tensorflow-not-installed" not in [f.code for f in report.findings]
    elif installed is None:  # then doctor checks against the newest stack for this machine, and says why
        assert report.target.origin == "newest for this machine"
        assert "tensorflow-not-installed" in [f.code for f in report.findings] and report.exit_code == 0
    else:
        assert (report.target.origin, report.target.tf_version) == ("installed", installed)


def test_protobuf_4_in_a_tf115_environment(tmp_path, kb):
    pins = [p for p in kb.pitfalls_for("1.15.5", "linux", "3.7") if p.package == "protobuf"]
    if not pins:
        pytest.fail("pitfalls.toml has no protobuf pin for TensorFlow 1.15 (protobuf 4 breaks its generated code)")
    assert not SpecifierSet(pins[0].constraint).contains(Version("4.21.0"))
    root, machine = tf115_machine(tmp_path, dists={**TF115_DISTS, "protobuf": "4.21.0"})
    assert machine.python.package("protobuf").version == "4.21.0"
    report = diagnose(machine, kb, probe_libraries=FakeLoader(root))
    f = finding(report, "pitfall-protobuf")
    assert f.severity == "error" and "4.21.0" in f.message and pins[0].constraint in f.message
    assert f.fix == f"pip install 'protobuf{pins[0].constraint}'" and f.source == pins[0].source
    assert codes(report, "error") == ["pitfall-protobuf"]


def test_windows_cuda_and_cudnn_folders_missing_from_path(tmp_path, kb):
    root = tmp_path / "root"
    cuda = "C:\\Program Files\\NVIDIA GPU Computing Toolkit\\CUDA\\v10.0"
    cudnn = "C:\\Program Files\\NVIDIA\\CUDNN\\v7.6"
    dlls = ["cudart64_100.dll", "cublas64_100.dll", "cufft64_100.dll", "curand64_100.dll", "cusolver64_100.dll",
            "cusparse64_100.dll"]
    make_tree(root, {f"{cuda}\\version.txt": "CUDA Version 10.0.130\n", **{f"{cuda}\\bin\\{d}": "" for d in dlls},
                     f"{cudnn}\\bin\\cudnn64_7.dll": "", f"{cudnn}\\include\\cudnn.h": CUDNN_765_H})
    site = "C:\\Python37\\Lib\\site-packages"
    exe = fake_python(tmp_path, root, site, "3.7.9", {"tensorflow_gpu": "1.15.0", **TF115_ENV},
                      {"tensorflow_core\\python\\platform\\build_info.py": TF115_BUILD_INFO}, system="windows")
    env = {"PATH": "C:\\Windows\\system32;C:\\Windows;C:\\Python37", "CUDA_PATH": cuda,
           "STACKRESOLVE_DRIVER": "441.22", "STACKRESOLVE_GPU_CC": "6.1"}
    machine = detect(root, env, exe, system="windows")
    assert [(t.version, t.path) for t in machine.cuda_toolkits][:1] == [("10.0", cuda)]
    loader = FakeLoader(root, "windows", default_dirs=("C:\\Windows\\System32",))
    report = diagnose(machine, kb, probe_libraries=loader)
    # tensorflow/docs site/en/install/source_windows.md: tensorflow_gpu-1.15.0, cuDNN 7.4, CUDA 10.0
    assert (report.target.cuda, report.target.cudnn_compiled) == ("10.0", "7.4")
    assert [n for _, n in report.target.libraries] == dlls + ["cudnn64_7.dll"]
    f = finding(report, "cuda-bin-not-on-path")
    assert f.fix.startswith(f"add {cuda}\\bin to PATH")
    g = finding(report, "cudnn-bin-not-on-path")
    assert f"{cudnn}\\bin" in g.message and g.fix.startswith(f"add {cudnn}\\bin to PATH")
    # the load check agrees and does not repeat them; every DLL exists, so none is reported missing
    assert [n for n, ok, _ in report.libraries if ok] == []
    assert "library-not-on-search-path" not in codes(report) and "library-missing" not in codes(report)
    assert sorted(codes(report, "error")) == ["cuda-bin-not-on-path", "cudnn-bin-not-on-path"]


def tf215_machine(tmp_path, *, proc=PROC_565, gpu_cc="8.6", nvidia=AND_CUDA_2151, env_extra=None):
    root = tmp_path / "root"
    site = "/opt/venv/lib/python3.11/site-packages"
    make_tree(root, {"/proc/driver/nvidia/version": proc} if proc else {})
    libs = {f"nvidia/{comp}/lib/{lib}": "" for comp, names in AND_CUDA_LIBS.items() for lib in names}
    libs.update({f"nvidia/{comp}/__init__.py": "" for comp in AND_CUDA_LIBS})
    exe = fake_python(tmp_path, root, site, "3.11.7",
                      {"tensorflow": "2.15.1", **TF215_ENV, **{n.replace("-", "_"): v for n, v in nvidia.items()}},
                      {"tensorflow/python/platform/build_info.py": TF215_BUILD_INFO, **(libs if nvidia else {})})
    env = {"PATH": "/usr/bin:/bin", **({"STACKRESOLVE_GPU_CC": gpu_cc} if gpu_cc else {}), **(env_extra or {})}
    return root, detect(root, env, exe)


def test_healthy_tf215_and_cuda_environment(tmp_path, kb):
    root, machine = tf215_machine(tmp_path)
    assert ("12.2", "pip:nvidia-cuda-runtime-cu12") in [(t.version, t.source) for t in machine.cuda_toolkits]
    loader = FakeLoader(root)
    report = diagnose(machine, kb, probe_libraries=loader)
    t = report.target
    assert (t.tf_version, t.pip_package, t.cuda, t.and_cuda) == ("2.15.1", "tensorflow[and-cuda]", "12.2", True)
    assert t.driver_min == kb.toolkit("12.2").driver_linux == "535.54.03"  # CUDA 12.2 GA, NVIDIA Table 3
    assert codes(report, "error") == [] and codes(report, "warning") == []
    assert report.healthy and report.exit_code == 0
    assert all(ok for _, ok, _ in report.libraries) and len(report.libraries) == 7
    # TF's RPATH reaches the wheels' folders: they are searched
    assert "/opt/venv/lib/python3.11/site-packages/nvidia/cudnn/lib" in loader.calls[0][1]


def test_and_cuda_wheels_of_another_release(tmp_path, kb):
    nvidia = {**AND_CUDA_2151, "nvidia-cudnn-cu12": "8.9.7.29"}
    del nvidia["nvidia-nccl-cu12"]
    root, machine = tf215_machine(tmp_path, nvidia=nvidia)
    report = diagnose(machine, kb, probe_libraries=FakeLoader(root))
    assert "nvidia-cudnn-cu12 8.9.7.29" in finding(report, "and-cuda-pin-mismatch").message
    assert "nvidia-nccl-cu12==2.16.5" in finding(report, "and-cuda-wheel-missing").message
    assert report.healthy  # cuDNN 8.9.7 still satisfies TensorFlow's same-major, newer-minor rule


def test_no_gpu_machine_runs_tensorflow_on_the_cpu(tmp_path, kb):
    # `tensorflow` without its and-cuda wheels, no GPU: a CPU install, checked as one (issue 32, item 3)
    root, machine = tf215_machine(tmp_path, proc=None, gpu_cc=None, nvidia={})
    report = diagnose(machine, kb, probe_libraries=FakeLoader(root))
    f = finding(report, "and-cuda-not-installed")
    assert f.severity == "info" and "runs on the CPU" in f.message
    assert report.target.cuda is None and "no-nvidia-gpu" not in codes(report)
    assert report.healthy and report.exit_code == 0 and report.libraries == ()


def test_check_against_another_target_with_tf_flag(tmp_path, kb):
    root, machine = tf215_machine(tmp_path)
    report = diagnose(machine, kb, tf="1.15", probe_libraries=FakeLoader(root))
    assert report.target.origin == "--tf" and report.target.tf_version.startswith("1.15.")
    assert "tensorflow-differs-from-target" in codes(report, "warning")
    assert "python-unsupported" in codes(report, "error")  # TF 1.15 has no wheel for Python 3.11
    assert "cuda-version-mismatch" in codes(report, "error")  # CUDA 12.2 wheels, TF 1.15 wants 10.0


def test_bad_tf_flag_is_input_error(tmp_path, kb):
    _, machine = tf115_machine(tmp_path)
    with pytest.raises(InputError):
        diagnose(machine, kb, tf="0.1")


def test_without_a_library_prober_the_load_check_is_skipped(tmp_path, kb):
    _, machine = tf115_machine(tmp_path)
    report = diagnose(machine, kb)
    assert "library-check-skipped" in codes(report, "info") and report.libraries == ()


def test_json_and_text(tmp_path, kb):
    root, machine = tf115_machine(tmp_path, proc=PROC_384)
    report = diagnose(machine, kb, probe_libraries=FakeLoader(root))
    doc = report.to_json_dict()
    json.dumps(doc)
    assert doc["schema"] == SCHEMA == "stackresolve/doctor@1"
    assert doc["healthy"] is False and doc["target"]["tensorflow"] == "1.15.5" and doc["target"]["cuda"] == "10.0"
    assert doc["machine"]["driver"]["version"] == "384.98"
    assert doc["machine"]["packages"]["numpy"] == "1.18.5"
    for f in doc["findings"]:
        assert set(f) == {"severity", "code", "message", "fix", "source"}
    text = report.render_text()
    assert "ERROR (1)" in text and "[driver-too-old]" in text and "fix: install NVIDIA driver 410.48" in text
    assert text.rstrip().endswith("stackresolve plan --tf 1.15.5 --format pip|apt|conda|powershell")
    severities = [f.severity for f in report.findings]
    assert severities == sorted(severities, key=["error", "warning", "info"].index)


def test_every_pitfall_package_is_reported_by_the_probe(kb):
    named = {p.package.lower().replace("_", "-") for p in kb.pitfalls}
    assert named <= set(_pyprobe.PIP_PACKAGES) | {n for n in named if n.startswith("nvidia-")}


# --- library names --------------------------------------------------------------------------------------------------
def test_library_names_match_real_reports():
    records = json.loads((FIXTURES / "doctor" / "dlopen-names.json").read_text(encoding="utf-8"))
    for r in records:
        cuda = r.get("cuda")
        names = {n for _, n in tf_library_names(cuda or "10.0", r.get("cudnn"), r["os"])}
        wanted = set(r["names"]) if cuda else {n for n in r["names"] if "cudnn" in n}
        assert wanted <= names, r["source"]


def test_library_names_per_cuda_release():
    # tensorflow/tensorflow:third_party/gpus/cuda_configure.bzl@4f75a246 (_get_cuda_config)
    assert tf_library_names("10.0", "7", "linux")[:2] == [("cuda", "libcudart.so.10.0"), ("cuda", "libcublas.so.10.0")]
    assert tf_library_names("10.1", "7", "linux")[:2] == [("cuda", "libcudart.so.10.1"), ("cuda", "libcublas.so.10")]
    assert tf_library_names("11.2", "8", "linux")[:2] == [("cuda", "libcudart.so.11.0"), ("cuda", "libcublas.so.11")]
    assert tf_library_names("12.2", "8", "linux")[0] == ("cuda", "libcudart.so.12")
    assert tf_library_names("12.3", "9", "linux")[-1] == ("cudnn", "libcudnn.so.9")
    assert [n for _, n in tf_library_names("10.1", "7", "windows")][:2] == ["cudart64_101.dll", "cublas64_10.dll"]
    assert [n for _, n in tf_library_names("11.2", "8", "windows")][:2] == ["cudart64_110.dll", "cublas64_11.dll"]
    assert tf_library_names("10.0", "7", "windows")[-1] == ("cudnn", "cudnn64_7.dll")
    assert tf_library_names("10.0", "7", "macos") == []


def test_cuda_runtime_fit():
    assert _cuda_fit("10.0", "10.0") == "ok" and _cuda_fit("10.2", "10.0") == "no" and _cuda_fit("10.1", "10.2") == "no"
    assert _cuda_fit("11.8", "11.2") == "ok"  # same soname (libcudart.so.11.0), newer minor
    assert _cuda_fit("11.0", "11.2") == "older-minor" and _cuda_fit("12.2", "11.2") == "no"


# --- the probe extension ----------------------------------------------------------------------------------------------
def test_pyprobe_reports_every_package_and_nvidia_folders(tmp_path):
    site = tmp_path / "site"
    for rel in ("protobuf-3.20.3.dist-info/METADATA", "typing_extensions-4.9.0.dist-info/METADATA",
                "nvidia_cudnn_cu12-8.9.4.25.dist-info/METADATA", "requests-2.31.0.dist-info/METADATA",
                "nvidia/cudnn/lib/libcudnn.so.8", "nvidia/cublas/lib/libcublas.so.12", "nvidia/nvtx/include/x.h"):
        (site / rel).parent.mkdir(parents=True, exist_ok=True)
        (site / rel).write_text("Version: 0\n")
    (site / "h5py.egg-info").write_text("Metadata-Version: 1.0\nName: h5py\nVersion: 2.10.0\n")
    doc = _pyprobe.probe(sys_path=[str(site)])
    assert {(p["name"], p["version"]) for p in doc["packages"]} == {
        ("protobuf", "3.20.3"), ("typing-extensions", "4.9.0"), ("nvidia-cudnn-cu12", "8.9.4.25"),
        ("h5py", "2.10.0"), ("requests", "2.31.0")}  # every package: `check` compares full locks with them
    assert doc["nvidia_lib_dirs"] == [str(site / "nvidia" / "cublas" / "lib"), str(site / "nvidia" / "cudnn" / "lib")]


# --- the real library loader --------------------------------------------------------------------------------------------
@pytest.mark.skipif(not sys.platform.startswith("linux"), reason="loads Linux shared libraries")
def test_probe_libraries_loads_for_real(tmp_path):
    import ctypes.util

    libm = ctypes.util.find_library("m")  # "libm.so.6" on glibc
    out = probe_libraries([libm, "libcudart.so.0.0"], [str(tmp_path)])
    assert out[libm][0] is True and "search path" in out[libm][1]
    assert out["libcudart.so.0.0"] == (False, "libcudart.so.0.0: cannot open shared object file: No such file or "
                                              "directory")


def test_probe_libraries_survives_a_crashing_child():
    calls = []

    def runner(argv, timeout):
        asked = json.loads(argv[-1])["names"]
        calls.append(asked)
        if asked[0] == "liba.so":  # answers for liba, then dies loading libb (a segfault: exit -11)
            return -11, json.dumps({"name": "liba.so", "ok": True, "path": "/x/liba.so", "how": "dir"}) + "\n", ""
        return 0, "".join(json.dumps({"name": n, "ok": False, "error": f"{n}: nope"}) + "\n" for n in asked), ""

    out = probe_libraries(["liba.so", "libb.so", "libc.so"], ["/x"], runner=runner)
    assert out == {"liba.so": (True, "loads from /x/liba.so"),
                   "libb.so": (False, "loading it ended the probe process (exit -11)"),
                   "libc.so": (False, "libc.so: nope")}
    assert calls == [["liba.so", "libb.so", "libc.so"], ["libc.so"]]


def test_probe_libraries_hung_child_is_bounded():
    def runner(argv, timeout):
        raise CommandTimeout(argv[0], timeout, stdout="")

    out = probe_libraries(["liba.so", "libb.so"], [], runner=runner, timeout_total=1.0)
    assert out["liba.so"][0] is False and "time limit" in out["liba.so"][1]
    assert out["libb.so"][0] is False


def test_probe_libraries_child_script_is_old_python_compatible():
    import ast

    from stackresolve.detect.libload import CHILD_SCRIPT

    tree = ast.parse(CHILD_SCRIPT, feature_version=(3, 4))
    assert not any(isinstance(n, (ast.JoinedStr, ast.AnnAssign, ast.NamedExpr)) for n in ast.walk(tree))


def test_an_empty_environment_names_every_framework_doctor_knows(tmp_path, kb):
    # No TensorFlow, PyTorch or JAX in the interpreter: the error says so for all three, and how to plan each.
    root = tmp_path / "root"
    python = fake_python(tmp_path, root, LINUX_SITE, "3.11.7", {"numpy": "1.26.4"})
    report = diagnose(detect(root, {"PATH": "/usr/bin"}, python), kb, probe_libraries=FakeLoader(root))
    f = finding(report, "tensorflow-not-installed")
    assert "nor PyTorch or JAX" in f.message
    assert "--torch VERSION" in f.fix and "--jax VERSION" in f.fix


def test_an_empty_environment_is_not_an_error_it_says_what_is_missing_and_the_plan(tmp_path, kb):
    # Issue 32, item 3: nothing installed is nothing broken. A GPU machine (compute capability 8.6, driver
    # 565.57.01) with no framework: what the newest TensorFlow needs and lacks is information; exit 0 (DESIGN.md:
    # 1 is for problems found).
    root = tmp_path / "root"
    make_tree(root, {"/proc/driver/nvidia/version": PROC_565})
    python = fake_python(tmp_path, root, LINUX_SITE, "3.11.7", {"numpy": "1.26.4"})
    report = diagnose(detect(root, {"PATH": "/usr/bin", "STACKRESOLVE_GPU_CC": "8.6"}, python), kb,
                      probe_libraries=FakeLoader(root))
    assert report.exit_code == 0 and codes(report, "error") == []
    assert finding(report, "tensorflow-not-installed").severity == "info"
    # what is missing: the CUDA runtime and cuDNN the plan brings, said as such
    missing = finding(report, "cudnn-missing")
    assert missing.severity == "info" and missing.message.startswith("not installed yet: ")
    text = report.render_text()
    assert "nothing installed yet: the plan below installs tensorflow[and-cuda] " in text
    assert "full fix plan: stackresolve plan --tf " in text and "problems found" not in text


def test_a_cpu_only_tensorflow_2_15_venv_is_described_as_installed(tmp_path, kb):
    # Issue 32, item 3: `pip install tensorflow==2.15.1` without the [and-cuda] extra installs no NVIDIA wheel
    # (the extra's Requires-Dist lists them: tensorflow 2.15.1 METADATA); on a machine without an NVIDIA GPU that
    # venv is a CPU install: no CUDA is needed and none is missing.
    root, machine = tf215_machine(tmp_path, proc=None, gpu_cc=None, nvidia={})
    report = diagnose(machine, kb, probe_libraries=FakeLoader(root))
    t = report.target
    assert (t.pip_package, t.tf_version, t.origin, t.cuda) == ("tensorflow", "2.15.1", "installed", None)
    assert report.exit_code == 0 and codes(report, "error") == []
    assert "tensorflow[and-cuda]" not in report.render_text().splitlines()[0]
    assert finding(report, "and-cuda-not-installed").severity == "info"


def test_the_same_venv_on_a_gpu_machine_is_a_warning_with_the_gpu_fix(tmp_path, kb):
    root, machine = tf215_machine(tmp_path, nvidia={})
    report = diagnose(machine, kb, probe_libraries=FakeLoader(root))
    f = finding(report, "and-cuda-not-installed")
    assert f.severity == "warning" and "runs on the CPU" in f.message
    assert f.fix == "for the GPU: pip install 'tensorflow[and-cuda]==2.15.1'"
    assert report.exit_code == 0 and report.target.cuda is None
