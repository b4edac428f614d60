"""detect_machine() end to end on fake machines: a tree under tmp_path, a scripted runner, an env mapping."""

from __future__ import annotations

import json

import pytest
from detect_helpers import LINUX_ENV, FakeRunner, fixture_text, is_, make_tree, smi_csv

from stackresolve.detect import LocalFS, detect_machine, render_text
from stackresolve.detect.runner import CommandTimeout

SMI = {"/usr/bin/nvidia-smi": ""}
LIBCUDA = {"/usr/lib/x86_64-linux-gnu/libcuda.so.1": ""}


def child_out(*docs) -> tuple[int, str, str]:
    return 0, "".join(json.dumps(d) + "\n" for d in docs), ""


def detect(tmp_path, files, runner, env=None, **kw):
    make_tree(tmp_path, files)
    kw.setdefault("python_exe", None)
    return detect_machine(runner=runner, fs=LocalFS(tmp_path), env=LINUX_ENV if env is None else env,
                          system=kw.pop("system", "linux"), **kw)


def codes(m):
    return [f.code for f in m.findings]


# --- the most robust probe answers everything ---------------------------------------------------------------
def test_nvml_answers_everything_and_nvidia_smi_is_not_run(tmp_path):
    runner = FakeRunner().on(is_("child"), child_out(
        {"probe": "nvml", "ok": True, "driver": "550.144.03", "cuda": 12040,
         "gpus": [{"index": 0, "name": "NVIDIA GeForce RTX 4090", "cc": [8, 9], "memory_mib": 24564},
                  {"index": 1, "name": "NVIDIA GeForce GTX 1080 Ti", "cc": [6, 1], "memory_mib": 11264}]},
        {"probe": "libcuda", "ok": True, "cuda": 12040, "gpus": []}))
    m = detect(tmp_path, {**SMI, **LIBCUDA}, runner)
    assert m.driver.version == "550.144.03" and m.driver.source == "nvml"
    assert m.driver.cuda_max == "12.4" and m.driver.cuda_max_source == "nvml"
    assert [(g.index, g.name, g.compute_capability, g.memory_mib, g.source) for g in m.gpus] == [
        (0, "NVIDIA GeForce RTX 4090", "8.9", 24564, "nvml"),
        (1, "NVIDIA GeForce GTX 1080 Ti", "6.1", 11264, "nvml")]
    assert "smi-csv-cc" not in runner.names()  # complete after NVML: no nvidia-smi
    assert "no-nvidia-gpu" not in codes(m)


def test_child_argv_runs_nvml_then_libcuda_without_cuda_visible_devices(tmp_path):
    from stackresolve.detect.gpuchild import CHILD_SCRIPT, child_argv

    argv = child_argv()
    assert argv[1] == "-c" and argv[3:5] == ["nvml", "libcuda"]
    assert 'os.environ.pop("CUDA_VISIBLE_DEVICES", None)' in CHILD_SCRIPT
    assert CHILD_SCRIPT.index("CUDA_VISIBLE_DEVICES") < CHILD_SCRIPT.index("import pynvml")


def test_libcuda_plus_sysfs_is_complete(tmp_path):
    runner = FakeRunner().on(is_("child"), child_out(
        {"probe": "nvml", "ok": False, "absent": True, "error": "nvidia-ml-py not importable"},
        {"probe": "libcuda", "ok": True, "cuda": 11040, "lib": "libcuda.so.1",
         "gpus": [{"index": 0, "name": "Tesla T4", "cc": [7, 5], "memory_mib": 15109}]}))
    m = detect(tmp_path, {**SMI, **LIBCUDA, "/sys/module/nvidia/version": "470.82.01\n"}, runner)
    assert (m.driver.version, m.driver.source) == ("470.82.01", "sysfs")
    assert (m.driver.cuda_max, m.driver.cuda_max_source) == ("11.4", "libcuda")
    assert [(g.name, g.compute_capability, g.source) for g in m.gpus] == [("Tesla T4", "7.5", "libcuda")]
    assert runner.names() == ["child"]


# --- nvidia-smi CSV, with the R470 retry ----------------------------------------------------------------------
def test_csv_probe_fills_driver_and_gpus(tmp_path):
    runner = (FakeRunner()
              .on(is_("smi-csv-cc"), (0, smi_csv("0, 00000000:01:00.0, NVIDIA GeForce RTX 4090, 8.9, 550.144.03, 24564",
                                                 "1, 00000000:02:00.0, NVIDIA GeForce RTX 4090, 8.9, 550.144.03, 24564"),
                                      ""))
              .on(is_("smi-xml"), (0, fixture_text("smi-q-x-535.86.05.xml").replace("535.86.05", "550.144.03")
                                   .replace("<cuda_version>12.2", "<cuda_version>12.4"), "")))
    m = detect(tmp_path, SMI, runner)
    assert (m.driver.version, m.driver.source, m.driver.cuda_max, m.driver.cuda_max_source) == (
        "550.144.03", "nvidia-smi", "12.4", "nvidia-smi-xml")
    assert [(g.index, g.compute_capability, g.memory_mib) for g in m.gpus] == [(0, "8.9", 24564), (1, "8.9", 24564)]
    assert runner.names() == ["smi-csv-cc", "smi-xml"]
    assert runner.calls[0][0] == ["/usr/bin/nvidia-smi",
                                  "--query-gpu=index,pci.bus_id,name,compute_cap,driver_version,memory.total",
                                  "--format=csv,nounits"]


def test_r470_refuses_compute_cap_retry_without_it(tmp_path):
    refusal = fixture_text("smi-csv-r470-compute-cap-invalid.txt")
    runner = (FakeRunner()
              .on(is_("smi-csv-cc"), (2, refusal, ""))
              .on(is_("smi-csv"), (0, smi_csv("0, 00000000:00:1E.0, Tesla V100-SXM2-16GB, 470.82.01, 16160", cc=False),
                                   ""))
              .on(is_("smi-xml"), (0, "<nvidia_smi_log><driver_version>470.82.01</driver_version>"
                                      "<cuda_version>11.4</cuda_version></nvidia_smi_log>", "")))
    m = detect(tmp_path, SMI, runner)
    assert runner.names() == ["smi-csv-cc", "smi-csv", "smi-xml"]
    assert runner.calls[1][0][1] == "--query-gpu=index,pci.bus_id,name,driver_version,memory.total"
    g = m.gpus[0]
    assert (g.name, g.compute_capability, g.memory_mib) == ("Tesla V100-SXM2-16GB", None, 16160)
    assert "compute-cap-field-unsupported" in codes(m)
    assert "compute-capability-unknown" in codes(m)  # the caller looks it up by name
    assert m.driver.version == "470.82.01" and m.driver.cuda_max == "11.4"


def test_libcuda_compute_capability_fills_csv_gaps(tmp_path):
    # libcuda knows the CC, nvidia-smi (R470) the driver: merged per GPU index
    runner = (FakeRunner()
              .on(is_("child"), child_out({"probe": "libcuda", "ok": True, "cuda": 11040,
                                           "gpus": [{"index": 0, "name": "Tesla V100-SXM2-16GB", "cc": [7, 0]}]}))
              .on(is_("smi-csv-cc"), (2, fixture_text("smi-csv-r470-compute-cap-invalid.txt"), ""))
              .on(is_("smi-csv"), (0, smi_csv("0, 00000000:00:1E.0, Tesla V100-SXM2-16GB, 470.82.01, 16160",
                                              cc=False), "")))
    m = detect(tmp_path, {**SMI, **LIBCUDA}, runner)
    g = m.gpus[0]
    assert (g.source, g.compute_capability, g.compute_capability_source, g.memory_mib) == ("libcuda", "7.0",
                                                                                           "libcuda", 16160)
    assert (m.driver.version, m.driver.source, m.driver.cuda_max) == ("470.82.01", "nvidia-smi", "11.4")
    assert "compute-capability-unknown" not in codes(m)


# --- the banner, last resort ------------------------------------------------------------------------------------
def _banner_only(fixture_name):
    return (FakeRunner()
            .on(is_("smi-csv-cc"), (9, "", "Unknown Error"))
            .on(is_("smi-xml"), (9, "", "Unknown Error"))
            .on(is_("smi-q"), (9, "", "Unknown Error"))
            .on(is_("smi-banner"), (0, fixture_text(fixture_name), "")))


def test_banner_wsl2_tool_differs_from_driver(tmp_path):
    runner = _banner_only("smi-banner-wsl2-570.124.06-driver-572.70.txt")
    files = {"/usr/lib/wsl/lib/nvidia-smi": "", "/proc/version":
             "Linux version 5.15.167.4-microsoft-standard-WSL2 (root@f9c826d3017f) (gcc (GCC) 11.2.0) #1 SMP\n"}
    m = detect(tmp_path, files, runner, env={"PATH": "/usr/bin"})
    assert m.os.wsl is True
    assert (m.driver.version, m.driver.cuda_max, m.driver.source) == ("572.70", "12.8", "nvidia-smi-banner")
    assert [(g.name, g.compute_capability, g.memory_mib) for g in m.gpus] == [("NVIDIA GeForce RTX 5090", None,
                                                                               32607)]
    assert {"nvidia-smi-version-differs", "wsl-windows-driver", "compute-capability-unknown"} <= set(codes(m))
    assert runner.calls[0][0][0] == "/usr/lib/wsl/lib/nvidia-smi"
    # WSL2 has no /proc/driver/nvidia: the kernel files are not read at all
    assert "sysfs" not in [p.name for p in m.probes]


def test_banner_cuda_err(tmp_path):
    m = detect(tmp_path, SMI, _banner_only("smi-banner-wsl2-cuda-err.txt"))
    assert m.driver.version == "546.80" and m.driver.cuda_max is None
    assert "cuda-version-err" in codes(m)


def test_banner_610_labels(tmp_path):
    m = detect(tmp_path, SMI, _banner_only("smi-banner-r610-kmd-umd.txt"))
    assert (m.driver.version, m.driver.cuda_max) == ("610.43.02", "13.3")
    assert [g.name for g in m.gpus] == ["NVIDIA B200", "NVIDIA B200"]


def test_banner_legacy_340(tmp_path):
    m = detect(tmp_path, SMI, _banner_only("smi-banner-legacy-340.108.txt"))
    assert (m.driver.version, m.driver.cuda_max) == ("340.108", None)
    assert [g.name for g in m.gpus] == ["GeForce 8400M GS"]


def test_banner_jetson(tmp_path):
    m = detect(tmp_path, SMI, _banner_only("smi-banner-jetson-orin-540.4.0.txt"))
    assert (m.driver.version, m.driver.cuda_max) == ("540.4.0", "12.6")
    assert [(g.name, g.memory_mib, g.compute_capability) for g in m.gpus] == [("Orin (nvgpu)", None, None)]


def test_windows_banner_and_paths(tmp_path):
    runner = _banner_only("smi-banner-windows-517.48.txt")
    files = {"C:\\Windows\\System32\\nvidia-smi.exe": ""}
    m = detect(tmp_path, files, runner, env={"PATH": "C:\\Windows\\System32", "SystemRoot": "C:\\Windows"},
               system="windows")
    assert m.os.system == "windows"
    assert runner.calls[0][0][0] == "C:\\Windows\\System32\\nvidia-smi.exe"
    assert (m.driver.version, m.driver.cuda_max) == ("517.48", "11.7")
    assert [g.memory_mib for g in m.gpus] == [11264, 11264]


# --- failures become findings -----------------------------------------------------------------------------------
def test_driver_not_loaded(tmp_path):
    runner = FakeRunner().on(is_("smi-csv-cc"), (9, fixture_text("smi-no-driver.txt"), ""))
    m = detect(tmp_path, SMI, runner)
    assert m.gpus == () and m.driver is None
    assert {"driver-not-loaded", "no-nvidia-gpu"} <= set(codes(m))
    assert runner.names() == ["smi-csv-cc"]  # not asked again


def test_driver_library_mismatch(tmp_path):
    runner = FakeRunner().on(is_("smi-csv-cc"), (18, fixture_text("smi-driver-library-mismatch.txt"), ""))
    m = detect(tmp_path, SMI, runner)
    f = next(f for f in m.findings if f.code == "driver-library-mismatch")
    assert f.severity == "error"


def test_no_devices_found(tmp_path):
    runner = FakeRunner().on(is_("smi-csv-cc"), (6, fixture_text("smi-no-devices.txt"), ""))
    m = detect(tmp_path, SMI, runner)
    assert m.gpus == () and "no-nvidia-gpu" in codes(m)


def test_kernel_module_older_than_user_space(tmp_path):
    runner = FakeRunner().on(is_("child"), child_out(
        {"probe": "nvml", "ok": True, "driver": "550.67", "cuda": 12040,
         "gpus": [{"index": 0, "name": "NVIDIA A10", "cc": [8, 6], "memory_mib": 23028}]}))
    m = detect(tmp_path, {**LIBCUDA, "/sys/module/nvidia/version": "550.54.14\n"}, runner)
    assert m.driver.version == "550.67"
    assert "driver-library-mismatch" in codes(m)


def test_libcuda_stub_and_no_device(tmp_path):
    runner = FakeRunner().on(is_("child"), child_out(
        {"probe": "libcuda", "ok": False, "cuda": 12020, "cuinit": 34, "error": "cuInit returned 34"}))
    m = detect(tmp_path, LIBCUDA, runner)
    assert "libcuda-stub" in codes(m)
    # the CUDA number from cuDriverGetVersion is still a fact
    assert m.driver.cuda_max == "12.2" and m.driver.version is None
    runner = FakeRunner().on(is_("child"), child_out(
        {"probe": "libcuda", "ok": False, "cuda": 12020, "cuinit": 100, "error": "cuInit returned 100"}))
    m = detect(tmp_path, LIBCUDA, runner)
    assert "cuinit-failed" not in codes(m) and "no-nvidia-gpu" in codes(m)


def test_child_timeout_keeps_what_it_printed(tmp_path):
    nvml = {"probe": "nvml", "ok": True, "driver": "535.104.05", "cuda": 12020,
            "gpus": [{"index": 0, "name": "NVIDIA L4", "cc": [8, 9], "memory_mib": 23034}]}
    runner = FakeRunner().on(is_("child"), CommandTimeout("python", 3.0, stdout=json.dumps(nvml) + "\n"))
    m = detect(tmp_path, LIBCUDA, runner, timeout_total=5.0)
    assert m.driver.version == "535.104.05" and m.gpus[0].compute_capability == "8.9"
    assert "probe-timeout" in codes(m)


def test_child_crash_is_a_finding(tmp_path):
    runner = FakeRunner().on(is_("child"), (-11, "", "Segmentation fault"))
    m = detect(tmp_path, LIBCUDA, runner)
    assert "probe-crashed" in codes(m) and m.gpus == ()


def test_runner_raising_anything_never_escapes(tmp_path):
    def boom(argv, timeout):
        raise RuntimeError("unexpected")

    runner = FakeRunner().on(lambda argv: True, boom)
    m = detect(tmp_path, {**SMI, **LIBCUDA, "/usr/local/cuda-11.8/bin/nvcc": ""}, runner)
    assert m.gpus == ()
    assert any(p.status == "failed" for p in m.probes)


# --- no GPU -------------------------------------------------------------------------------------------------------
def test_no_gpu_machine(tmp_path):
    runner = FakeRunner()
    m = detect(tmp_path, {"/etc/os-release": 'ID=ubuntu\nVERSION_ID="22.04"\n'}, runner)
    assert m.gpus == () and m.driver is None
    f = next(f for f in m.findings if f.code == "no-nvidia-gpu")
    assert (f.severity, f.message) == ("info", "no NVIDIA GPU found")
    assert runner.calls == []  # nothing to run: no driver library, no nvidia-smi
    assert m.to_json_dict()["gpus"] == []


def test_cuda_visible_devices_empty(tmp_path):
    m = detect(tmp_path, {}, FakeRunner(), env={"PATH": "/usr/bin", "CUDA_VISIBLE_DEVICES": ""})
    assert "cuda-visible-devices-hides-gpus" in codes(m)
    assert m.env["CUDA_VISIBLE_DEVICES"] == ""


# --- overrides ----------------------------------------------------------------------------------------------------
def test_overrides_on_a_machine_without_gpu(tmp_path):
    env = {"PATH": "/usr/bin", "STACKRESOLVE_DRIVER": "535.104.05", "STACKRESOLVE_GPU_CC": "8.6,7.5",
           "CONDA_OVERRIDE_CUDA": "12.2"}
    m = detect(tmp_path, {}, FakeRunner(), env=env)
    assert (m.driver.version, m.driver.source) == ("535.104.05", "env:STACKRESOLVE_DRIVER")
    assert (m.driver.cuda_max, m.driver.cuda_max_source) == ("12.2", "env:CONDA_OVERRIDE_CUDA")
    assert [(g.index, g.compute_capability, g.source) for g in m.gpus] == [
        (0, "8.6", "env:STACKRESOLVE_GPU_CC"), (1, "7.5", "env:STACKRESOLVE_GPU_CC")]
    assert "no-nvidia-gpu" not in codes(m)
    assert codes(m).count("override") == 3


def test_gpu_cc_override_replaces_detected_value(tmp_path):
    runner = _banner_only("smi-banner-linux-550.40.07.txt")
    m = detect(tmp_path, SMI, runner, env={"PATH": "/usr/bin", "STACKRESOLVE_GPU_CC": "8.9"})
    g = m.gpus[0]
    assert (g.name, g.compute_capability, g.compute_capability_source) == ("NVIDIA GeForce RTX 4070", "8.9",
                                                                           "env:STACKRESOLVE_GPU_CC")
    assert "compute-capability-unknown" not in codes(m)


def test_bad_overrides(tmp_path):
    env = {"PATH": "/usr/bin", "STACKRESOLVE_DRIVER": "latest", "STACKRESOLVE_GPU_CC": "banana",
           "CONDA_OVERRIDE_CUDA": "twelve"}
    m = detect(tmp_path, {}, FakeRunner(), env=env)
    assert codes(m).count("bad-override") == 3
    assert m.driver is None and m.gpus == ()


@pytest.mark.parametrize("name, value", [("STACKRESOLVE_GPU_CC", "8.12"), ("STACKRESOLVE_GPU_CC", "8.6,8.12"),
                                         ("STACKRESOLVE_DRIVER", "1.2"), ("STACKRESOLVE_DRIVER", "12")])
def test_overrides_refuse_what_the_flags_refuse(tmp_path, name, value):
    # Issue 32: one reading per fact. --gpu-cc 8.12 and --driver 1.2 are bad input, so the variables are too.
    m = detect(tmp_path, {}, FakeRunner(), env={"PATH": "/usr/bin", name: value})
    assert codes(m).count("bad-override") == 1
    assert m.driver is None and m.gpus == ()


def test_overrides_accept_what_the_flags_accept(tmp_path):
    # sm_86 and a bare branch read as --gpu-cc sm_86 and --driver 580 do
    env = {"PATH": "/usr/bin", "STACKRESOLVE_GPU_CC": "sm_86", "STACKRESOLVE_DRIVER": "580"}
    m = detect(tmp_path, {}, FakeRunner(), env=env)
    assert "bad-override" not in codes(m)
    assert [g.compute_capability for g in m.gpus] == ["8.6"] and m.driver.version == "580"


def test_conda_override_cuda_major_only(tmp_path):
    m = detect(tmp_path, {}, FakeRunner(), env={"PATH": "/usr/bin", "CONDA_OVERRIDE_CUDA": "12"})
    assert m.driver.cuda_max == "12.0" and m.driver.version is None


# --- shape --------------------------------------------------------------------------------------------------------
def test_json_shape(tmp_path):
    runner = FakeRunner().on(is_("child"), child_out(
        {"probe": "nvml", "ok": True, "driver": "550.144.03", "cuda": 12040,
         "gpus": [{"index": 0, "name": "NVIDIA GeForce RTX 4090", "cc": [8, 9], "memory_mib": 24564}]}))
    m = detect(tmp_path, {**LIBCUDA, "/etc/os-release": 'ID=ubuntu\nVERSION_ID="22.04"\n'}, runner)
    doc = m.to_json_dict()
    json.dumps(doc)  # serialisable
    assert doc["schema"] == "stackresolve/detect@1"
    assert list(doc) == ["schema", "os", "driver", "gpus", "cuda_toolkits", "cudnn", "python", "frameworks",
                         "findings", "env", "probes", "amd_gpus", "intel_gpus", "rocm", "gpu_devices", "level_zero"]
    assert {"system", "wsl", "distro", "release", "arch"} <= set(doc["os"])
    assert (doc["os"]["system"], doc["os"]["distro"], doc["os"]["release"]) == ("linux", "ubuntu", "22.04")
    assert {"version", "cuda_max", "source"} <= set(doc["driver"])
    assert doc["gpus"][0]["compute_capability"] == "8.9"
    assert {"index", "name", "compute_capability", "memory_mib", "source"} <= set(doc["gpus"][0])
    assert {"version", "executable"} <= set(doc["python"])
    for f in doc["findings"]:
        assert set(f) == {"severity", "code", "message", "fix", "source"}
        assert f["severity"] in ("error", "warning", "info")


def test_render_text_names_the_probes(tmp_path):
    runner = _banner_only("smi-banner-linux-550.40.07.txt")
    m = detect(tmp_path, SMI, runner)
    text = render_text(m)
    assert "550.40.07  [nvidia-smi-banner]" in text
    assert "NVIDIA GeForce RTX 4070" in text and "compute capability unknown" in text
    assert "Probes:" in text and "Findings:" in text


def test_render_text_no_gpu(tmp_path):
    text = render_text(detect(tmp_path, {}, FakeRunner()))
    assert "no NVIDIA GPU found" in text


@pytest.mark.parametrize("cvd", ["0", "1,2"])
def test_cuda_visible_devices_normal_values_are_quiet(tmp_path, cvd):
    m = detect(tmp_path, {}, FakeRunner(), env={"PATH": "/usr/bin", "CUDA_VISIBLE_DEVICES": cvd})
    assert "cuda-visible-devices-hides-gpus" not in codes(m)


def test_gpu_cc_override_count_mismatch(tmp_path):
    runner = _banner_only("smi-banner-r610-kmd-umd.txt")  # two B200
    m = detect(tmp_path, SMI, runner, env={"PATH": "/usr/bin", "STACKRESOLVE_GPU_CC": "10.0,10.0,10.0"})
    assert [g.compute_capability for g in m.gpus] == ["10.0", "10.0"]
    assert "override-gpu-count" in codes(m)


def test_gpu_only_skips_python_toolkit_and_cudnn_probes(tmp_path):
    # `plan` asks only for the OS, GPUs and driver: no interpreter is started and no nvcc is run.
    runner = FakeRunner().on(is_("smi-csv-cc"), (0, smi_csv("0, 00000000:01:00.0, NVIDIA GeForce RTX 4090, 8.9, "
                                                            "550.144.03, 24564"), ""))
    files = {**SMI, "/usr/local/cuda-12.4/bin/nvcc": "", "/usr/local/cuda-12.4/version.json": "{}"}
    m = detect(tmp_path, files, runner, python_exe="/usr/bin/python3", gpu_only=True)
    assert [(g.name, g.compute_capability) for g in m.gpus] == [("NVIDIA GeForce RTX 4090", "8.9")]
    assert m.driver.version == "550.144.03"
    assert m.cuda_toolkits == () and m.cudnn == () and m.python is None
    assert "python" not in runner.names() and "nvcc" not in runner.names()


def test_unknown_gpu_keeps_the_probes_compute_capability(tmp_path):
    # Issue 31: a GPU no table names (a next-generation board) keeps what nvidia-smi reports; planning decides it
    # by rule (tests/resolve/test_tables_end_by_rule.py). The row is built in nvidia-smi's CSV shape.
    runner = FakeRunner().on(is_("smi-csv-cc"), (0, smi_csv("0, 00000000:01:00.0, NVIDIA Next-Gen Board, 10.7, "
                                                            "615.71.09, 196608"), ""))
    m = detect(tmp_path, SMI, runner, gpu_only=True)
    assert [(g.name, g.compute_capability) for g in m.gpus] == [("NVIDIA Next-Gen Board", "10.7")]
    assert "compute-capability-unknown" not in codes(m)
