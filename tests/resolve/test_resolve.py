"""The resolver against the sources: TensorFlow's tested-build tables, the package index, NVIDIA's tables.

Expected values are typed here from the sources named in each block, not taken from the knowledge base, so
a transcription error in constraints/ and a resolver bug both show up.
"""

import pytest
from packaging.version import Version

from stackresolve.knowledge.rules import classify_support
from stackresolve.model.values import ComputeCapability
from stackresolve.resolve import resolve
from stackresolve.request.parse import Flags, request_from_flags



def plan(kb, **flags):
    return resolve(kb, request_from_flags(kb, Flags(**flags), None))


# tensorflow/docs site/en/install/source.md, "Tested build configurations", Linux GPU: (line, CUDA, cuDNN).
LINUX_GPU = [
    ("1.0", "8.0", "5.1"), ("1.4", "8.0", "6"), ("1.5", "9.0", "7"), ("1.12", "9.0", "7"),
    ("1.13", "10.0", "7.4"), ("1.14", "10.0", "7.4"), ("1.15", "10.0", "7.4"), ("2.0", "10.0", "7.4"),
    ("2.1", "10.1", "7.6"), ("2.2", "10.1", "7.6"), ("2.3", "10.1", "7.6"), ("2.4", "11.0", "8.0"),
    ("2.5", "11.2", "8.1"), ("2.6", "11.2", "8.1"), ("2.7", "11.2", "8.1"), ("2.8", "11.2", "8.1"),
    ("2.9", "11.2", "8.1"), ("2.10", "11.2", "8.1"), ("2.11", "11.2", "8.1"), ("2.12", "11.8", "8.6"),
    ("2.13", "11.8", "8.6"), ("2.14", "11.8", "8.7"), ("2.15", "12.2", "8.9"), ("2.16", "12.3", "8.9"),
    ("2.17", "12.3", "8.9"), ("2.18", "12.5", "9.3"), ("2.19", "12.5", "9.3"), ("2.20", "12.5", "9.3"),
    ("2.21", "12.5", "9.3"),
]
# tensorflow/docs site/en/install/source_windows.md, "Tested build configurations", GPU.
WINDOWS_GPU = [
    ("1.0", "8.0", "5.1"), ("1.4", "8.0", "6"), ("1.11", "9.0", "7"), ("1.12", "9.0", "7.2"), ("1.13", "10.0", "7.4"), ("1.14", "10.0", "7.4"), ("1.15", "10.0", "7.4"), ("2.0", "10.0", "7.4"),
    ("2.1", "10.1", "7.6"), ("2.2", "10.1", "7.6"), ("2.3", "10.1", "7.6"), ("2.4", "11.0", "8.0"),
    ("2.5", "11.2", "8.1"), ("2.6", "11.2", "8.1"), ("2.7", "11.2", "8.1"), ("2.8", "11.2", "8.1"),
    ("2.9", "11.2", "8.1"), ("2.10", "11.2", "8.1"),
]


def _assert_table_row(stack, cuda, cudnn):
    assert stack.cuda.version == cuda
    picked, compiled = Version(stack.cudnn.version), Version(cudnn)
    # TensorFlow loads a cuDNN of the same major with an equal or higher minor (cuda_dnn.cc).
    assert picked.major == compiled.major and picked >= compiled
    assert stack.cudnn.built_for_cuda in (cuda, f"{cuda.split('.')[0]}.x")


@pytest.mark.parametrize("line, cuda, cudnn", LINUX_GPU)
def test_linux_gpu_lines_follow_the_tested_build_table(kb, line, cuda, cudnn):
    resolution = plan(kb, tf=line, os="linux")
    assert resolution.stack is not None, [f.message for f in resolution.findings]
    assert resolution.stack.framework.line == line
    _assert_table_row(resolution.stack, cuda, cudnn)


@pytest.mark.parametrize("line, cuda, cudnn", WINDOWS_GPU)
def test_windows_gpu_lines_follow_the_tested_build_table(kb, line, cuda, cudnn):
    resolution = plan(kb, tf=line, os="windows")
    assert resolution.stack is not None, [f.message for f in resolution.findings]
    _assert_table_row(resolution.stack, cuda, cudnn)


def test_tf_1_15_on_a_pascal_card(kb):
    # tensorflow-gpu 1.15.5 (wheels for CPython 3.6-3.7 only, package index), CUDA 10.0, driver >= 410.48 (CUDA
    # 10.0.130, NVIDIA release notes Table 3). cuDNN: TensorFlow's guide pinned 7.6.2 (site/en/install/gpu.md@af7601ea:
    # libcudnn7=7.6.2.24-1+cuda10.0), which no conda channel has for CUDA 10.0 (conda-forge/cudnn-feedstock builds
    # 7.6.5; defaults 7.3.1, 7.6.0, 7.6.4, 7.6.5): 7.6.5 is the 7.6 patch every channel installs.
    stack = plan(kb, tf="1.15", os="linux", gpu="GeForce GTX 1080 Ti").stack
    assert stack.framework.pip_package == "tensorflow-gpu"
    assert stack.framework.version == "1.15.5"
    assert (stack.python.min, stack.python.max, stack.python.recommended) == \
        ("3.6", "3.7", "3.7")
    assert stack.cuda.version == "10.0"
    assert stack.cudnn.version == "7.6.5"
    assert stack.driver.minimum == "410.48"
    assert stack.gpu.support == "native"


def test_the_newest_patch_that_has_a_wheel_for_the_requested_python(kb):
    # tensorflow-gpu 1.15.4 still has cp35 wheels; 1.15.5 does not (package index file lists).
    stack = plan(kb, tf="1.15", os="linux", python="3.5", gpu="GTX 1080").stack
    assert stack.framework.version == "1.15.4"
    assert stack.python.recommended == "3.5"


def test_python_without_any_wheel_is_impossible_and_suggests_a_python(kb):
    resolution = plan(kb, tf="1.15", os="linux", python="3.8", gpu="GTX 1080", vendor="stock")
    assert resolution.stack is None
    conflict = " ".join(f.message for f in resolution.findings if f.severity == "error")
    assert "3.8" in conflict
    assert any(a.stack.framework.line == "1.15" and a.stack.python.recommended == "3.7"
               for a in resolution.alternatives)


def test_python_3_8_for_tf_1_15_is_served_by_nvidias_build(kb):
    # No stock tensorflow-gpu 1.15 wheel has cp38 (package index); NVIDIA's 1.15.5 builds from 20.12 on are
    # Python 3.8 (their branch READMEs). The stock Python 3.7 stack stays as an alternative.
    resolution = plan(kb, tf="1.15", os="linux", python="3.8", gpu="GTX 1080")
    assert resolution.stack.framework.vendor == "nvidia"
    assert resolution.stack.python.recommended == "3.8"
    assert any(a.stack.framework.vendor == "stock" and a.stack.python.recommended == "3.7"
               for a in resolution.alternatives)


def test_tf_2_3_on_windows_with_a_gtx_1080(kb):
    # source_windows.md: tensorflow_gpu-2.3.0, CUDA 10.1, cuDNN 7.6; CUDA 10.1 (10.1.105) needs Windows driver
    # >= 418.96 (NVIDIA Table 3). From 2.1 the `tensorflow` package carries GPU support.
    stack = plan(kb, tf="2.3", os="windows", gpu="GTX 1080").stack
    assert stack.framework.pip_package == "tensorflow"
    assert stack.framework.version == "2.3.4"
    assert stack.cuda.version == "10.1"
    assert stack.cudnn.version == "7.6.5"
    assert stack.driver.minimum == "418.96"


def test_no_native_windows_gpu_after_2_10(kb):
    # tensorflow.org/install/pip: "TensorFlow 2.10 was the last TensorFlow release that supported GPU on
    # native-Windows"; the way forward is WSL2.
    resolution = plan(kb, tf="2.11", os="windows", gpu="RTX 3080")
    assert resolution.stack is None
    assert any(f.code == "no-windows-gpu" for f in resolution.findings)
    wsl = [a for a in resolution.alternatives if a.request.os == "wsl2"]
    assert wsl and wsl[0].stack.framework.line == "2.11"
    older = [a for a in resolution.alternatives if a.request.os == "windows" and a.stack.cuda]
    assert older and older[0].stack.framework.line == "2.10"


def test_partial_targets_pick_the_newest_fitting_release(kb):
    stack = plan(kb, tf=">=2.4,<2.8", os="linux", gpu="RTX 3090").stack
    assert stack.framework.line == "2.7"
    newest_27 = max((w.key for w in kb.wheel_releases("tensorflow") if w.line == "2.7" and w.pythons["linux"]))
    assert Version(stack.framework.version) == newest_27


def test_linux_and_cuda_extra_from_2_14(kb):
    # tensorflow 2.15.0.post1's `and-cuda` extra pins nvidia-cudnn-cu12==8.9.4.25 and the CUDA 12.2 runtime
    # wheels (the wheel's METADATA on the package index).
    stack = plan(kb, tf="2.15", os="linux", gpu="RTX 4090").stack
    assert stack.framework.pip_package == "tensorflow[and-cuda]"
    assert stack.cuda.version == "12.2"
    assert stack.cudnn.version == "8.9.4"


def test_driver_too_old_conflicts_with_the_fact_and_its_source(kb):
    # CUDA 10.0 needs >= 410.48 on Linux (NVIDIA Table 3); a 390 driver cannot run TF 1.15's GPU build.
    resolution = plan(kb, tf="1.15", os="linux", gpu="GTX 1080", driver="390.157")
    assert resolution.stack is None
    messages = [f for f in resolution.findings if f.severity == "error"]
    assert any("410.48" in f.message and "docs.nvidia.com" in f.source for f in messages)
    assert any(a.stack.cuda is None for a in resolution.alternatives)  # CPU-only still works


def test_kepler_cannot_use_cuda_12(kb):
    # CUDA 12.0 dropped Kepler (arch_min 5.0, NVIDIA release notes); the K80 (cc 3.7) is Kepler.
    resolution = plan(kb, tf="latest", os="linux", gpu="Tesla K80")
    assert resolution.stack is not None
    assert Version(resolution.stack.cuda.version) < Version("12.0")


def test_support_classification():
    from stackresolve.knowledge.records import CompiledArch

    arch = CompiledArch(line="x", sass=("3.5", "5.2", "6.0", "7.0"), ptx=("7.0",), source="test")
    assert classify_support(arch, ComputeCapability.parse("6.1")) == "native"  # sm_60 SASS runs on 6.1 (same major, lower minor)
    assert classify_support(arch, ComputeCapability.parse("8.6")) == "ptx-jit"  # only compute_70 PTX, JIT-compiled by the driver
    assert classify_support(arch, ComputeCapability.parse("3.0")) == "unsupported"
    assert classify_support(None, ComputeCapability.parse("8.6")) == "unknown"


def detected(gpus=(), findings=()):
    """A machine as detection reports it: Linux x86_64 with these (name, compute capability, probe) GPUs."""
    from stackresolve.model.machine import GpuInfo, Machine, OSInfo

    return Machine(os=OSInfo(system="linux", arch="x86_64"), driver=None,
                   gpus=tuple(GpuInfo(i, name, cc, None, probe) for i, (name, cc, probe) in enumerate(gpus)),
                   findings=tuple(findings))


def test_detected_machine_without_gpu_gives_a_cpu_plan(kb):
    facts = detected()
    resolution = resolve(kb, request_from_flags(kb, Flags(tf="1.15"), facts))
    assert resolution.stack.cuda is None
    assert resolution.stack.gpu.support == "cpu-only"
    assert any("no NVIDIA GPU found" in a for a in resolution.request.assumptions)


def test_several_gpus_must_all_run_the_stack(kb):
    facts = detected(gpus=(("Tesla K80", "3.7", "nvidia-smi"), ("NVIDIA A100-SXM4-40GB", "8.0", "nvidia-smi")))
    request = request_from_flags(kb, Flags(tf="latest"), facts)
    stack = resolve(kb, request).stack
    assert [str(g.cc) for g in stack.gpus] == ["3.7", "8.0"]
    assert Version(stack.cuda.version) < Version("12.0")  # the K80 rules out CUDA 12


def test_a_release_whose_wheels_lack_the_gpus_code_is_skipped(kb):
    # tensorflow-gpu 1.12.2 and 1.12.3 Linux wheels carry only sm_37/compute_37 while 1.12.0 carries SASS for
    # 3.5-7.0 (fatbin headers of the wheels on the package index): a K40 (cc 3.5) must get 1.12.0, and a
    # GTX 1080 (6.1) gets 1.12.0's machine code rather than a PTX JIT.
    k40 = plan(kb, tf="1.12", os="linux", gpu="Tesla K40c").stack
    assert k40.framework.version == "1.12.0" and k40.gpu.support == "native"
    gtx = plan(kb, tf="1.12", os="linux", gpu="GTX 1080").stack
    assert gtx.framework.version == "1.12.0" and gtx.gpu.support == "native"


def test_windows_wheels_of_1_11_run_pascal_only_through_ptx(kb):
    # tensorflow_gpu-1.11.0-cp36-cp36m-win_amd64.whl carries only sm_37/compute_37 (and #22594 reports it).
    stack = plan(kb, tf="1.11", os="windows", gpu="GTX 1080").stack
    assert stack.gpu.support == "ptx-jit"
    assert plan(kb, tf="1.11", os="windows", gpu="Tesla K40c").stack is None


def test_minor_version_compatibility_lets_a_535_driver_run_cuda_12_5_builds(kb):
    # NVIDIA Table 2: CUDA 12.x runs on Linux drivers >= 525.60.13 through minor-version compatibility, except
    # PTX JIT; TensorFlow 2.21 wheels carry sm_89 SASS (measured), so an RTX 4090 needs no JIT.
    resolution = plan(kb, tf="latest", os="linux", gpu="RTX 4090", driver="535.104.05")
    assert resolution.stack.framework.line == "2.21"
    assert resolution.stack.driver.ok is True
    assert any(f.code == "driver-minor-compat" for f in resolution.findings)


def test_minor_version_compatibility_is_not_used_when_the_gpu_needs_ptx_jit(kb):
    # A100-era CUDA 11.8 builds (TF 2.12) carry sm_80 SASS but only compute_80 PTX for Hopper: an H100 would JIT,
    # which minor-version compatibility does not allow, so a 470 driver cannot take TF 2.12 there.
    resolution = plan(kb, tf="2.12", os="linux", gpu="H100", driver="470.82.01")
    assert resolution.stack is None
    # (CUDA 11.8, Hopper's first toolkit, also sets the floor for the GPU itself: 520.61.05 either way)
    assert any("520.61.05" in f.message for f in resolution.findings)


def test_an_unreadable_override_is_bad_input_not_a_cpu_plan(kb):
    from stackresolve.request.build import InputError

    from stackresolve.model.finding import Finding

    facts = detected(findings=(Finding("error", "bad-override",
                                       "STACKRESOLVE_GPU_CC='banana' is not a compute capability"),))
    with pytest.raises(InputError, match="STACKRESOLVE_GPU_CC"):
        request_from_flags(kb, Flags(tf="1.15"), facts)
