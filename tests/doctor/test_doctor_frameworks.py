"""`stackresolve doctor` for an installed PyTorch or JAX (and NVIDIA's TensorFlow 1.15, Keras 3 beside TF >= 2.16).

The machines are detect.model records built here; the values in them are real captures:
- torch/version.py and jax/version.py: the files read from published wheels (tests/fixtures/detect/README.md,
  "Files read from wheels"), run through the real Python probe (`_pyprobe`) and `pyenv.frameworks`, in
  site-packages trees with the dist-info names those wheels have;
- GPU names, memory and drivers: the nvidia-smi / lspci captures in tests/fixtures/detect/ named at each machine
  (their compute capability is left to the GPU table, as for a banner-probed GPU).
Expected values come from pytorch.toml / jax.toml (the measured compiled architectures) and NVIDIA's tables, as
named at each assertion; the fix is whatever the resolver plans, checked against those facts."""

from __future__ import annotations

import json
from dataclasses import replace
from pathlib import Path

import pytest
from packaging.version import Version

from stackresolve.detect import _pyprobe, pyenv
from stackresolve.model.machine import DriverInfo, GpuInfo, Machine, OSInfo
from stackresolve.doctor import diagnose
import locations

FIXTURES = locations.FIXTURES / "detect"
SITE = "/opt/venv/lib/python3.11/site-packages"


def fixture_text(name: str) -> str:
    return (FIXTURES / name).read_text(encoding="utf-8")


@pytest.fixture(scope="module")
def kb():
    from stackresolve.knowledge.loader import load_knowledge

    return load_knowledge()


def installed(tmp_path: Path, dists: dict[str, tuple[str, str]], files: dict[str, str] | None = None):
    """(frameworks, detect findings, PythonInfo) of a site-packages tree: dists = {dist-info directory: (Name,
    Version)}, files = {path in the site: text}; read by the real probe, as `detect` reads a foreign interpreter."""
    tree = {f"{entry}/METADATA": f"Metadata-Version: 2.1\nName: {name}\nVersion: {version}\n"
            for entry, (name, version) in dists.items()}
    tree.update(files or {})
    for rel, text in tree.items():
        path = tmp_path / rel.lstrip("/")
        path.parent.mkdir(parents=True, exist_ok=True)
        path.write_text(text, encoding="utf-8")
    doc = pyenv.clean_probe_doc(json.loads(json.dumps(_pyprobe.probe(sys_path=[str(tmp_path)]))))
    findings: list = []
    frameworks = pyenv.frameworks(doc, findings)
    return frameworks, findings, pyenv.python_info(doc, "/opt/venv/bin/python")


def machine(tmp_path, os_info: OSInfo, driver: DriverInfo | None, gpus: list[GpuInfo], dists, files=None,
            python: str = "3.11.7") -> Machine:
    frameworks, findings, py = installed(tmp_path, dists, files)
    return Machine(os=os_info, driver=driver, gpus=tuple(gpus), python=replace(py, version=python),
                   frameworks=tuple(frameworks), findings=tuple(findings))


def codes(report, severity=None):
    return [f.code for f in report.findings if severity is None or f.severity == severity]


def finding(report, code):
    return next(f for f in report.findings if f.code == code)


LINUX = OSInfo("linux", arch="x86_64", distro="ubuntu", source="os-release")
# torch wheels (tests/fixtures/detect/README.md): the default index's Linux 2.5.1 (cu124) and 2.8.0 (cu128) wheels,
# the Windows 2.5.1 wheel (a CPU build), and a 2.13.0+cpu wheel with its local version in the dist-info name
TORCH_251 = ({"torch-2.5.1.dist-info": ("torch", "2.5.1")},
             {"torch/version.py": fixture_text("torch-2.5.1-manylinux1_x86_64-version.py.txt")})
TORCH_280 = ({"torch-2.8.0.dist-info": ("torch", "2.8.0")},
             {"torch/version.py": fixture_text("torch-2.8.0-manylinux_2_28_x86_64-version.py.txt")})
TORCH_251_WIN = ({"torch-2.5.1.dist-info": ("torch", "2.5.1")},
                 {"torch/version.py": fixture_text("torch-2.5.1-win_amd64-version.py.txt")})
TORCH_2130_CPU = ({"torch-2.13.0+cpu.dist-info": ("torch", "2.13.0+cpu")},
                  {"torch/version.py": fixture_text("torch-2.13.0+cpu-manylinux_2_28_x86_64-version.py.txt")})
# what `pip install "jax[cuda12]==0.4.30"` leaves (jax's METADATA: jaxlib, jax-cuda12-plugin, jax-cuda12-pjrt at
# 0.4.30); jax/version.py read from jax-0.4.30-py3-none-any.whl
JAX_0430 = {"jax-0.4.30.dist-info": ("jax", "0.4.30"), "jaxlib-0.4.30.dist-info": ("jaxlib", "0.4.30")}
JAX_0430_CUDA12 = {**JAX_0430, "jax_cuda12_plugin-0.4.30.dist-info": ("jax-cuda12-plugin", "0.4.30"),
                   "jax_cuda12_pjrt-0.4.30.dist-info": ("jax-cuda12-pjrt", "0.4.30")}
JAX_FILES = {"jax/version.py": fixture_text("jax-0.4.30-version.py.txt")}

# GPUs and drivers as the captures print them
RTX5090_WSL2 = (OSInfo("linux", wsl=True, arch="x86_64", source="os-release"),  # smi-banner-wsl2-570.124.06-driver-572.70
                DriverInfo("572.70", "12.8", "nvidia-smi-banner", "nvidia-smi-banner"),
                [GpuInfo(0, "NVIDIA GeForce RTX 5090", None, 32607, "nvidia-smi-banner", bus_id="00000000:0B:00.0")])
GTX1080 = (DriverInfo("396.54", None, "nvidia-smi-q"),  # smi-q-396.54-gtx1080 (that driver prints no CUDA number)
           [GpuInfo(0, "GeForce GTX 1080", None, None, "nvidia-smi-q")])
TESLA_P4 = (DriverInfo("550.135", "12.4", "nvidia-smi-banner", "nvidia-smi-banner"),  # smi-banner-550.135-tesla-p4
            [GpuInfo(0, "Tesla P4", None, 7680, "nvidia-smi-banner")])
# lspci-nnk-2x-rtx3090 names the GPU (10de:2204); 470.82.01 is the R470 driver of NVIDIA/TensorRT-LLM#735
# (fixtures/detect/README.md, smi-csv-r470-compute-cap-invalid); R470 drivers support CUDA 11.4
RTX3090_R470 = (DriverInfo("470.82.01", "11.4", "nvidia-smi", "nvidia-smi"),
                [GpuInfo(0, "GeForce RTX 3090", None, None, "lspci", pci_id="10de:2204", bus_id="0000:05:00.0")])
K80 = (DriverInfo("410.104", "10.0", "nvidia-smi-banner", "nvidia-smi-banner"),  # smi-banner-410.104-tesla-k80
       [GpuInfo(0, "Tesla K80", None, 11441, "nvidia-smi-banner")])
RTX4070 = (DriverInfo("550.40.07", "12.4", "nvidia-smi-banner", "nvidia-smi-banner"),  # smi-banner-linux-550.40.07
           [GpuInfo(0, "NVIDIA GeForce RTX 4070", None, 12282, "nvidia-smi-banner")])
GTX1080TI_WIN = (OSInfo("windows", arch="x86_64", release="10", source="platform"),  # smi-q-442.92-windows
                 DriverInfo("442.92", "10.2", "nvidia-smi-q", "nvidia-smi-q"),
                 [GpuInfo(0, "GeForce GTX 1080 Ti", None, None, "nvidia-smi-q", bus_id="00000000:18:00.0")])


def fix_stack(report):
    check = report.frameworks[0]
    assert check.plan_origin == "fix"
    return check.resolution.stack


# --- PyTorch ----------------------------------------------------------------------------------------------------------
def test_rtx5090_with_torch_251_cu124_has_no_kernel_image(tmp_path, kb):
    os_info, driver, gpus = RTX5090_WSL2
    m = machine(tmp_path, os_info, driver, gpus, *TORCH_251)
    torch = m.frameworks[0]
    assert (torch.version, torch.module_version, torch.variant, torch.cuda) == ("2.5.1", "2.5.1+cu124", "cu124", "12.4")
    report = diagnose(m, kb)
    assert not report.healthy and report.exit_code == 1
    f = finding(report, "pytorch-gpu-not-supported")
    # pytorch.toml: torch 2.5.x cu124 measured sm_50 ... sm_90, no PTX; the RTX 5090 is compute capability 12.0
    assert f.severity == "error" and "no kernel image for sm_120" in f.message
    assert "sm_50 sm_60 sm_70 sm_75 sm_80 sm_86 sm_90, no PTX" in f.message
    assert "compute capability 12.0" in f.message and "pytorch.toml [[variant]] cu124" in f.source
    # the fix is the resolver's: a torch with sm_120 code, torch >= 2.7 from the cu128 index or >= 2.8
    stack = fix_stack(report)
    version, variant = Version(stack.framework.version), stack.framework.variant
    assert version >= Version("2.8") or (version >= Version("2.7") and variant == "cu128")
    assert stack.gpu.support == "native"
    assert f"torch=={stack.framework.version}" in f.fix
    assert f.fix.startswith("install NVIDIA driver") == (stack.driver.detected is None)  # the plan's own driver
    assert report.plan_hint().startswith(f"stackresolve plan --torch {stack.framework.version} ")


def test_gtx1080_with_torch_280_default_cu128_has_no_sm61(tmp_path, kb):
    m = machine(tmp_path, LINUX, *GTX1080, *TORCH_280)
    report = diagnose(m, kb)
    f = finding(report, "pytorch-gpu-not-supported")
    # torch 2.8.0 cu128 (the default index's Linux wheel): measured sm_70 ... sm_120; GTX 1080 is 6.1
    assert f.severity == "error" and "no kernel image for sm_61" in f.message and "sm_70" in f.message
    # the same release's cu126 variant has sm_60 code (runs on 6.x): reinstall it from PyTorch's index; pip keeps
    # an installed torch 2.8.0 for torch==2.8.0, so it is uninstalled first
    stack = fix_stack(report)
    assert (stack.framework.version, stack.framework.variant) == ("2.8.0", "cu126")
    assert "--index-url https://download.pytorch.org/whl/cu126" in f.fix
    assert "pip uninstall -y torch && pip install torch==2.8.0" in f.fix
    # driver 396.54 is older than every CUDA 12 build allows (minor-version compatibility: >= 525.60.13, CUDA 12.x
    # release notes Table 2): the plan says so
    assert stack.driver.minimum == kb.toolkit("12.6").compat_driver_linux == "525.60.13"
    assert f.fix.startswith("install NVIDIA driver 525.60.13 or newer, then pip uninstall")


def test_pascal_datacenter_gpu_gets_the_cu126_variant_for_its_driver(tmp_path, kb):
    # Tesla P4 is compute capability 6.1 too; with driver 550.135 the cu126 build fits as it is
    m = machine(tmp_path, LINUX, *TESLA_P4, *TORCH_280)
    report = diagnose(m, kb)
    f = finding(report, "pytorch-gpu-not-supported")
    assert f.fix.startswith("pip uninstall -y torch && pip install torch==2.8.0 ")
    assert f.fix.split("  [")[0].endswith("--index-url https://download.pytorch.org/whl/cu126")
    assert fix_stack(report).driver.ok is True


def test_rtx3090_with_torch_251_cu124_on_driver_470(tmp_path, kb):
    m = machine(tmp_path, LINUX, *RTX3090_R470, *TORCH_251)
    report = diagnose(m, kb)
    assert codes(report, "error") == ["pytorch-driver-too-old"]
    f = finding(report, "pytorch-driver-too-old")
    # CUDA 12.x runs on >= 525.60.13 through minor-version compatibility (the wheels carry sm_86 code); 470 is older
    assert "driver 470.82.01 is too old for torch 2.5.1+cu124, which needs >= 525.60.13" in f.message
    assert "found version 11040" in f.message  # R470 supports CUDA 11.4: PyTorch prints it as 11040
    assert "the resolver: CUDA 12.4 needs an NVIDIA driver >= 525.60.13" in f.source
    # fix: a newer driver, or the same release built for CUDA 11.8 (its floor 450.80.02 is below 470)
    assert f.fix.startswith("install NVIDIA driver 525.60.13 or newer, or keep this driver")
    stack = fix_stack(report)
    assert (stack.framework.version, stack.framework.variant, stack.cuda.version) == ("2.5.1", "cu118", "11.8")
    assert stack.driver.ok is True and kb.toolkit("11.8").compat_driver_linux == "450.80.02"
    assert "--index-url https://download.pytorch.org/whl/cu118" in f.fix
    assert report.frameworks[0].driver_min == "525.60.13"


def test_cpu_torch_on_a_gpu_machine(tmp_path, kb):
    m = machine(tmp_path, LINUX, *RTX4070, *TORCH_2130_CPU)
    assert (m.frameworks[0].variant, m.frameworks[0].gpu_build) == ("cpu", False)
    report = diagnose(m, kb)
    f = finding(report, "pytorch-cpu-build-with-gpu")
    assert f.severity == "warning" and "Torch not compiled with CUDA enabled" in f.message
    # the plan's pip lines: a CUDA build of the same release, from the index that has it, for driver 550.40.07
    stack = fix_stack(report)
    assert stack.framework.version == "2.13.0" and stack.cuda is not None and stack.driver.ok is True
    assert f.fix.startswith("pip uninstall -y torch && pip install torch==2.13.0 ")
    if stack.framework.index_url:
        assert f"--index-url {stack.framework.index_url}" in f.fix
    assert report.healthy  # a warning, as for TensorFlow's CPU build beside a GPU


def test_windows_cpu_torch_gets_pytorchs_cuda_index(tmp_path, kb):
    # `pip install torch` on Windows is the CPU build (torch-2.5.1 win_amd64: '2.5.1+cpu'); the CUDA builds are on
    # PyTorch's index only. Driver 442.92 (CUDA 10.2) is older than any of them needs.
    os_info, driver, gpus = GTX1080TI_WIN
    m = machine(tmp_path, os_info, driver, gpus, *TORCH_251_WIN)
    report = diagnose(m, kb)
    f = finding(report, "pytorch-cpu-build-with-gpu")
    stack = fix_stack(report)
    assert stack.framework.version == "2.5.1" and stack.framework.index_option == "--index-url"
    assert f"--index-url https://download.pytorch.org/whl/{stack.framework.variant}" in f.fix
    assert f.fix.startswith(f"install NVIDIA driver {stack.driver.minimum} or newer, then pip uninstall -y torch")


def test_healthy_torch_and_its_plan(tmp_path, kb):
    m = machine(tmp_path, LINUX, *RTX4070, *TORCH_251)
    report = diagnose(m, kb)
    assert report.findings == () and report.healthy
    check = report.frameworks[0]
    assert (check.plan_origin, check.label, check.driver_min) == ("installed", "torch 2.5.1+cu124", "525.60.13")
    text = report.render_text()
    assert text.startswith("stackresolve doctor: torch 2.5.1+cu124 on linux, Python 3.11.7\n")
    assert "torch 2.5.1+cu124 needs: CUDA 12.4 (in its wheels), driver >= 525.60.13" in text
    assert "tensorflow-not-installed" not in text  # a PyTorch machine is not asked for TensorFlow
    assert text.rstrip().endswith("stackresolve plan --torch 2.5.1 --format pip|apt|conda|powershell")
    assert report.resolution is check.resolution and report.resolution.stack.framework.version == "2.5.1"


def test_cuda_torch_without_a_gpu(tmp_path, kb):
    m = machine(tmp_path, LINUX, None, [], *TORCH_251)
    report = diagnose(m, kb)
    assert codes(report) == ["no-nvidia-gpu"] and "torch 2.5.1+cu124 will run on the CPU only" in \
        finding(report, "no-nvidia-gpu").message
    assert report.healthy


def test_a_torch_release_the_knowledge_base_does_not_know(tmp_path, kb):
    # torch 2.5.0.dev20240720+cu124, a nightly (pytorch/pytorch#131312; tests/fixtures/errors/real/INDEX.toml)
    m = machine(tmp_path, LINUX, *RTX4070, {"torch-2.5.0.dev20240720+cu124.dist-info":
                                            ("torch", "2.5.0.dev20240720+cu124")})
    assert (m.frameworks[0].variant, m.frameworks[0].cuda) == ("cu124", "12.4")  # read off the local version
    report = diagnose(m, kb)
    f = finding(report, "pytorch-unknown-release")
    assert f.severity == "warning" and "2.5.0.dev20240720" in f.message
    assert report.frameworks[0].resolution is None and report.healthy


# --- JAX --------------------------------------------------------------------------------------------------------------
def test_k80_with_jax_0430_cuda12_is_below_jaxs_minimum(tmp_path, kb):
    m = machine(tmp_path, LINUX, *K80, JAX_0430_CUDA12, JAX_FILES)
    assert (m.frameworks[0].variant, m.frameworks[0].cuda) == ("cuda12", "12")
    report = diagnose(m, kb)
    f = finding(report, "jax-gpu-not-supported")
    # jax.toml: jax 0.4.30's install guide supports compute capability >= 5.2; the K80 is 3.7
    assert kb.frameworks.jax_route("0.4.30").cc_min == "5.2"
    assert f.severity == "error" and ">= 5.2" in f.message and "sm_37" in f.message
    assert "jax-cuda12-plugin 0.4.30" in f.message
    # no JAX build runs on it: the resolver says why, and its nearest stack is the CPU build (the CUDA plugin goes)
    assert "Tesla K80 (compute capability 3.7) needs a JAX build with SASS or PTX for it" in f.fix
    assert "pip uninstall -y jax-cuda12-pjrt jax-cuda12-plugin && pip install jax==0.4.30" in f.fix
    assert codes(report, "error") == ["jax-gpu-not-supported"]


def test_cpu_jaxlib_on_a_gpu_machine(tmp_path, kb):
    m = machine(tmp_path, LINUX, *RTX4070, JAX_0430, JAX_FILES)
    report = diagnose(m, kb)
    f = finding(report, "jax-cpu-build-with-gpu")
    assert "a CUDA-enabled jaxlib is not installed" in f.message
    assert f.fix.startswith("pip install 'jax[cuda12]==0.4.30'")  # the resolver's plan: jax[cuda12] at 0.4.30


def test_jax_version_mismatches_surface_in_doctor(tmp_path, kb):
    # jax 0.4.30's jax/version.py: _minimum_jaxlib_version = "0.4.27"; `import jax` refuses jaxlib 0.4.26
    old = {k: v for k, v in JAX_0430_CUDA12.items() if not k.startswith("jaxlib")}
    old["jaxlib-0.4.26.dist-info"] = ("jaxlib", "0.4.26")
    report = diagnose(machine(tmp_path / "a", LINUX, *RTX4070, old, JAX_FILES), kb)
    f = finding(report, "jax-jaxlib-mismatch")
    assert f.severity == "error" and "requires jaxlib >= 0.4.27" in f.message and not report.healthy
    # jax[cuda12] pins the plugin at the jaxlib version
    plug = {k: v for k, v in JAX_0430_CUDA12.items() if not k.startswith("jax_cuda12_plugin")}
    plug["jax_cuda12_plugin-0.4.29.dist-info"] = ("jax-cuda12-plugin", "0.4.29")
    report = diagnose(machine(tmp_path / "b", LINUX, *RTX4070, plug, JAX_FILES), kb)
    f = finding(report, "jax-cuda-plugin-mismatch")
    assert f.severity == "warning" and f.fix == 'pip install "jax[cuda12]==0.4.30"'


def test_healthy_jax_cuda12(tmp_path, kb):
    report = diagnose(machine(tmp_path, LINUX, *RTX4070, JAX_0430_CUDA12, JAX_FILES), kb)
    assert report.findings == ()
    # JAX's install guide for 0.4.30: driver >= 525.60.13 (CUDA 12 minor-version compatibility)
    assert report.frameworks[0].driver_min == "525.60.13"


# --- TensorFlow beside them, NVIDIA's TensorFlow, Keras 3 ------------------------------------------------------------------
NV_BUILD_INFO = ('\n"""Generates a Python module containing information about the build."""\n'  # as in detect's test
                 "from __future__ import absolute_import\nfrom __future__ import division\n"
                 "from __future__ import print_function\n\nis_rocm_build = False\nis_cuda_build = True\n\n"
                 "cuda_version_number = '12.1'\ncudnn_version_number = '8'\n")


def test_nvidia_tensorflow_is_its_own_release(tmp_path, kb):
    # nvidia_tensorflow-1.15.5+nv23.03 (NVIDIA/tensorflow#85); nvidia_tensorflow.toml: release 23.03, CUDA 12.1
    m = machine(tmp_path, LINUX, *RTX4070, {"nvidia_tensorflow-1.15.5+nv23.03.dist-info":
                                            ("nvidia-tensorflow", "1.15.5+nv23.03")},
                {"tensorflow/__init__.py": "", "tensorflow_core/python/platform/build_info.py": NV_BUILD_INFO},
                python="3.8.10")
    report = diagnose(m, kb)
    assert "tensorflow-unknown-release" not in codes(report)
    t = report.target
    assert (t.tf_version, t.origin, t.cuda) == ("1.15.5+nv23.03", "installed", "12.1")
    assert t.pip_package.startswith("nvidia-tensorflow")
    assert report.plan_hint().startswith("stackresolve plan --tf 1.15.5 --vendor nvidia ")
    # an older release is checked against itself, not the newest NVIDIA build (22.12: CUDA 11.8)
    old = machine(tmp_path / "old", LINUX, *RTX4070, {"nvidia_tensorflow-1.15.5+nv22.12.dist-info":
                                                      ("nvidia-tensorflow", "1.15.5+nv22.12")}, python="3.8.10")
    t = diagnose(old, kb).target
    assert (t.tf_version, t.cuda) == ("1.15.5+nv22.12", "11.8")

    # NVIDIA's releases before 20.09 are based on TensorFlow 1.15.2 / 1.15.3 (nvidia_tensorflow.toml tf_base, from
    # NVIDIA/tensorflow setup.py@r1.15.3+nv20.07): still NVIDIA's own release, checked against its CUDA 11.0.194
    older = machine(tmp_path / "older", LINUX, *RTX4070, {"nvidia_tensorflow-1.15.3+nv20.07.dist-info":
                                                          ("nvidia-tensorflow", "1.15.3+nv20.07")}, python="3.6.9")
    report = diagnose(older, kb)
    assert "tensorflow-unknown-release" not in codes(report)
    assert (report.target.tf_version, report.target.origin, report.target.cuda) == ("1.15.3+nv20.07", "installed",
                                                                                     "11.0")


def test_keras3_beside_tensorflow_216(tmp_path, kb):
    # TensorFlow 2.16's release notes: Keras 3 is tf.keras; Keras 2 code needs tf-keras~=2.16 + TF_USE_LEGACY_KERAS=1
    dists = {"tensorflow-2.16.1.dist-info": ("tensorflow", "2.16.1"), "keras-3.3.3.dist-info": ("keras", "3.3.3")}
    report = diagnose(machine(tmp_path / "a", LINUX, *RTX4070, dists), kb)
    f = finding(report, "keras3-legacy-models")
    assert f.severity == "info" and "tensorflow 2.16.1 with keras 3.3.3" in f.message
    assert "pip install 'tf-keras~=2.16' and set TF_USE_LEGACY_KERAS=1" in f.fix
    assert "releases/tag/v2.16.1" in f.source
    # tf-keras installed and switched on: nothing to say
    m = machine(tmp_path / "b", LINUX, *RTX4070, {**dists, "tf_keras-2.16.0.dist-info": ("tf-keras", "2.16.0")})
    assert "keras3-legacy-models" not in codes(diagnose(replace(m, env={"TF_USE_LEGACY_KERAS": "1"}), kb))
    # Keras 2 (TF 2.15 pins keras 2.15): nothing to say
    m = machine(tmp_path / "c", LINUX, *RTX4070, {"tensorflow-2.15.1.dist-info": ("tensorflow", "2.15.1"),
                                                  "keras-2.15.0.dist-info": ("keras", "2.15.0")})
    assert "keras3-legacy-models" not in codes(diagnose(m, kb))


def test_tensorflow_and_torch_side_by_side(tmp_path, kb):
    # torch 2.5.1 from the default index brings NVIDIA's CUDA 12 wheels (its METADATA: nvidia-cuda-runtime-cu12
    # ==12.4.127, ...), which TensorFlow 2.15.1 then finds: it is checked as a GPU install
    dists = {"tensorflow-2.15.1.dist-info": ("tensorflow", "2.15.1"), **TORCH_251[0],
             "nvidia_cuda_runtime_cu12-12.4.127.dist-info": ("nvidia-cuda-runtime-cu12", "12.4.127")}
    report = diagnose(machine(tmp_path, LINUX, *RTX3090_R470, dists, TORCH_251[1]), kb)
    assert report.target.tf_version == "2.15.1"  # the TensorFlow report is as it was
    assert report.plan_hint().startswith("stackresolve plan --tf 2.15.1 ")
    assert "pytorch-driver-too-old" in codes(report, "error") and "driver-too-old" in codes(report, "error")
    assert "also installed: torch 2.5.1+cu124 needs: CUDA 12.4" in report.render_text()


def test_json_is_additive(tmp_path, kb):
    os_info, driver, gpus = RTX5090_WSL2
    doc = json.loads(json.dumps(diagnose(machine(tmp_path, os_info, driver, gpus, *TORCH_251), kb).to_json_dict()))
    assert set(doc) == {"schema", "healthy", "target", "machine", "libraries", "findings", "plan_command",
                        "frameworks"}
    assert doc["schema"] == "stackresolve/doctor@1" and doc["target"] is None
    assert doc["machine"]["pytorch"] == {"package": "torch", "version": "2.5.1", "variant": "cu124", "cuda": "12.4",
                                         "gpu_build": True}
    (fw,) = doc["frameworks"]
    assert (fw["name"], fw["variant"], fw["compiled_arch"]["sass"][-1]) == ("pytorch", "cu124", "9.0")
    assert fw["plan"]["origin"] == "fix" and fw["plan"]["requirements"][0].startswith("torch==")
    for f in doc["findings"]:
        assert set(f) == {"severity", "code", "message", "fix", "source"}


def test_doctor_cli_prints_the_torch_fix_plan(tmp_path, kb, monkeypatch):
    from click.testing import CliRunner

    from stackresolve.cli import app
    from stackresolve.cli import doctor as doctor_cli

    m = machine(tmp_path, LINUX, *TESLA_P4, *TORCH_280)
    monkeypatch.setattr(doctor_cli, "detect_machine", lambda **_: m)
    result = CliRunner().invoke(app, ["doctor", "--format", "pip"])
    assert result.exit_code == 1, result.output  # problems found
    lines = [line for line in result.stdout.splitlines() if line and not line.startswith("#")]
    assert lines[:2] == ["--index-url https://download.pytorch.org/whl/cu126", "torch==2.8.0"]
