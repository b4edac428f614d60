"""explain for AMD ROCm (HIP) and Intel XPU messages (issue 36): each recognised from the words of the code that prints
it, with the fix for that GPU.

The texts are real: the lines as the reports cited next to each test show them (the whole reports are in the corpus,
tests/fixtures/errors/real/, batch "issue-36"). Expected values come from the reports and from the emitting sources
(ROCm/clr hip_code_object.cpp, ROCm/rocminfo rocminfo.cc, PyTorch's c10/xpu), never from explain's output.
"""

from __future__ import annotations

import json

import pytest
from click.testing import CliRunner

from stackresolve.cli import app
from stackresolve.explain import explain_text
from stackresolve.knowledge.loader import error_knowledge

# ROCm/ROCm#2429's log (AMD_LOG_LEVEL=3): an RX 7900 XT (gfx1100), a torch wheel without gfx1100 code objects
NO_BINARY_GFX1100 = """hipErrorNoBinaryForGpu: Unable to find code object for all current devices!
  Devices:
    amdgcn-amd-amdhsa--gfx1100 - [Not Found]
  Bundled Code Objects:
    host-x86_64-unknown-linux-- - [Unsupported]
    hipv4-amdgcn-amd-amdhsa--gfx1030 - [code object targetID is amdgcn-amd-amdhsa--gfx1030]
"""
# the same message for an RX 6700 (gfx1031), in the shape ROCm/clr:hipamd/src/hip_code_object.cpp@rocm-6.2.2 prints it
NO_BINARY_GFX1031 = NO_BINARY_GFX1100.replace("gfx1100", "gfx1031")


@pytest.fixture(scope="module")
def errors():
    return error_knowledge()


def top(text: str, errors):
    explanation = explain_text(text, errors)
    assert explanation.problems, text
    return explanation.problems[0], explanation


def test_no_binary_reads_the_device_target_not_the_bundled_ones(errors):
    match, explanation = top(NO_BINARY_GFX1100, errors)
    assert (match.code, match.category) == ("hip-no-binary-for-gpu", "gfx-not-in-build")
    assert match.found == {"gfx": "gfx1100"}
    assert explanation.versions_seen["gfx"] == ("gfx1100",)  # not the build's gfx1030
    assert "gfx1100" in match.meaning
    # gfx1100 has no unofficial override: the fix is a build that carries it
    assert "PYTORCH_ROCM_ARCH=gfx1100" in match.fix and "HSA_OVERRIDE_GFX_VERSION" not in match.fix


def test_a_target_the_wheels_leave_out_gets_the_unofficial_override_marked_as_such(errors):
    # RX 6700 (gfx1031): 10.3.0 runs it as gfx1030 (https://github.com/ROCm/rocALUTION/issues/197, AMD: gfx1031 is
    # not supported; the override fixed it)
    match, _ = top(NO_BINARY_GFX1031, errors)
    assert match.found == {"gfx": "gfx1031"}
    assert "HSA_OVERRIDE_GFX_VERSION=10.3.0" in match.fix and "gfx1030" in match.fix
    assert "gfx-override-unofficial" in match.fix and "does not support" in match.fix
    assert "PYTORCH_ROCM_ARCH=gfx1031" in match.fix  # the supported way is named too


def test_rdna3_targets_get_11_0_0(errors):
    # amd.toml's [[gfx_override]] row for RDNA3 (sourced): gfx1101, gfx1102 -> 11.0.0 (gfx1100)
    match, _ = top(NO_BINARY_GFX1100.replace("gfx1100", "gfx1102"), errors)
    assert "HSA_OVERRIDE_GFX_VERSION=11.0.0" in match.fix and "gfx1100" in match.fix


def test_rocminfo_names_the_target_when_the_message_does_not(errors):
    # ROCm/ROCm#1525: the message, then rocminfo's agent (gfx1012, Navi 14: AMD does not support it)
    text = ('ERROR："hipErrorNoBinaryForGpu: Unable to find code object for all current devices!"\n'
            "Name:                            gfx1012                            \n"
            "Marketing Name:          Navi 14 [Radeon RX 5500/5500M / Pro 5500M]\n")
    match, _ = top(text, errors)
    assert match.found == {"gfx": "gfx1012"}
    assert "PYTORCH_ROCM_ARCH=gfx1012" in match.fix and "HSA_OVERRIDE_GFX_VERSION" not in match.fix


def test_rocm_3_9s_wording_is_known(errors):
    # ROCm/hip#2187 (ROCm 3.9, RX 5700): the runtime's guarantee() of that time
    text = ('/src/external/hip-on-vdi/rocclr/hip_code_object.cpp:120: guarantee(false && "hipErrorNoBinaryForGpu: '
            "Coudn't find binary for current devices!\")")
    assert top(text, errors)[0].code == "hip-no-binary-for-gpu"


def test_without_a_target_the_fix_says_how_to_find_it_and_lists_the_override_practice(errors):
    # ROCm/ROCm#2061 (RX 6600): the log names no target
    match, _ = top("hipErrorNoBinaryForGpu: Unable to find code object for all current devices!", errors)
    assert "rocminfo | grep gfx" in match.fix
    assert "HSA_OVERRIDE_GFX_VERSION=10.3.0 for gfx1031, gfx1032" in match.fix
    assert "HSA_OVERRIDE_GFX_VERSION=11.0.0 for gfx1101, gfx1102" in match.fix
    assert "gfx-override-unofficial" in match.fix


def test_hips_invalid_device_function_is_not_read_as_cudas(errors):
    # pytorch/pytorch#132570 (RX 5700 XT, gfx1010)
    text = ("RuntimeError: HIP error: invalid device function\n"
            "HIP kernel errors might be asynchronously reported at some other API call, so the stacktrace below might "
            "be incorrect.\n")
    match, explanation = top(text, errors)
    assert (match.code, match.category) == ("hip-invalid-device-function", "gfx-not-in-build")
    codes = {m.code for m in explanation.matches}
    assert "cuda-invalid-device-function" not in codes
    assert not any(code.startswith("cuda-runtime.") for code in codes)  # the CUDA status of the same words
    assert "ROCm" in match.fix and "CUDA" not in match.fix


def test_an_amd_log_level_trace_names_the_status(errors):
    # ROCm/ROCm#2527 (gfx1010, ROCm 6.1): hipLaunchKernel's status in the runtime's trace
    text = (":3:hip_module.cpp           :669 : 14629861947 us: [pid:31113 tid:0x7fa5a37fe700] hipLaunchKernel: "
            "Returned hipErrorInvalidDeviceFunction : \n")
    assert top(text, errors)[0].code == "hip-invalid-device-function"


def test_kfd_permission_denied_is_the_groups(errors):
    # ROCm/ROCm#1549: rocminfo's own diagnosis (ROCm/rocminfo:rocminfo.cc@rocm-6.2.2, CheckInitialState)
    text = ("ROCk module is loaded\nUnable to open /dev/kfd read-write: Permission denied\n"
            'root is not member of "video" group, the default DRM access group. Users must be a member of the '
            '"video" group or another DRM access group in order for ROCm applications to run successfully.\n')
    match, explanation = top(text, errors)
    assert (match.code, match.category) == ("rocm-device-access", "gpu-device-access")
    assert "(video" in match.meaning  # the group rocminfo named
    assert "sudo usermod -aG render,video $USER" in match.fix and "log out and in again" in match.fix
    assert [m.code for m in explanation.problems].count("rocm-device-access") == 1


def test_operation_not_permitted_is_the_same_problem(errors):
    # ROCm/ROCm#1211 (Pop!_OS)
    assert top("Unable to open /dev/kfd read-write: Operation not permitted", errors)[0].code == "rocm-device-access"


def test_a_container_without_the_devices(errors):
    # ROCm/ROCm#1798: rocminfo in a container started without --device=/dev/kfd
    text = ("root@101acc334128:/var/lib/jenkins# /opt/rocm-5.2.0/bin/rocminfo\nROCk module is loaded\n"
            "Unable to open /dev/kfd read-write: No such file or directory\n")
    match, _ = top(text, errors)
    assert (match.code, match.category) == ("rocm-container-devices", "gpu-device-access")
    assert "--device=/dev/kfd --device=/dev/dri --group-add video --group-add render" in match.fix
    assert match.cause.startswith("A container started without AMD's GPU devices")


def test_no_hip_gpus_with_visible_devices_set_blames_the_variable(errors):
    # a constructed line: HIP indexes the GPUs ROCR_VISIBLE_DEVICES leaves, so a stale index finds none
    text = "HIP_VISIBLE_DEVICES=4 python bench.py\nRuntimeError: No HIP GPUs are available\n"
    match, _ = top(text, errors)
    assert match.code == "rocm-container-devices"
    assert "VISIBLE_DEVICES" in match.cause and match.fix.startswith("Unset HIP_VISIBLE_DEVICES")


def test_docker_on_a_host_without_kfd(errors):
    # ROCm/ROCm#1893: Docker Desktop on Windows has no /dev/kfd to pass
    text = ('docker: Error response from daemon: error gathering device information while adding custom device '
            '"/dev/kfd": no such file or directory.\n')
    match, _ = top(text, errors)
    assert match.code == "rocm-container-devices" and "host" in match.fix and "amdgpu" in match.fix


def test_rocminfo_without_the_kernel_driver(errors):
    match, _ = top("ROCk module is NOT loaded, possibly no GPU devices", errors)
    assert (match.code, match.category) == ("rocm-kernel-driver-not-loaded", "driver-not-loaded")
    assert "modprobe amdgpu" in match.fix


@pytest.mark.parametrize("text", [
    "RuntimeError: No XPU devices are available.",  # vladmandic/sdnext#3808, c10/xpu/XPUFunctions.cpp
    "[W Device.cpp:127] Warning: XPU Device count is zero! (function initGlobalDevicePoolState)",  # sdnext#3201
    "UserWarning: Failed to initialize XPU devices. The driver may not be installed, installed incorrectly, or "
    "incompatible with the current setup. Please refer to the guideline",  # pytorch/pytorch#147226
    "ImportError: libze_loader.so.1: cannot open shared object file: No such file or directory",
])
def test_xpu_initialisation_errors_are_the_intel_driver(errors, text):
    match, _ = top(text, errors)
    assert (match.code, match.category) == ("xpu-driver-missing", "driver-not-loaded")
    assert "Intel GPU driver" in match.fix and "libze1" in match.fix


def test_the_loader_is_named_when_it_is_the_missing_piece(errors):
    match, _ = top("OSError: libze_loader.so.1: cannot open shared object file: No such file or directory", errors)
    assert match.cause.startswith("The Level Zero loader") and "libze_loader.so.1" in match.meaning


def test_amd_and_intel_messages_stay_silent_on_nvidia_logs(errors):
    text = ("RuntimeError: CUDA error: invalid device function\nRuntimeError: No CUDA GPUs are available\n"
            "Failed to initialize NVML: Driver/library version mismatch\n")
    codes = {m.code for m in explain_text(text, errors).matches}
    assert not codes & {"hip-no-binary-for-gpu", "hip-invalid-device-function", "rocm-device-access",
                        "rocm-container-devices", "rocm-kernel-driver-not-loaded", "xpu-driver-missing"}


# ----------------------------------------------------------------------------------------------
# the command: no CUDA fix plan for an AMD or Intel problem
# ----------------------------------------------------------------------------------------------


def run(*args):
    return CliRunner().invoke(app, list(args))


def test_explain_plans_no_cuda_stack_for_a_rocm_problem():
    result = run("explain", "--no-detect", NO_BINARY_GFX1031)
    assert result.exit_code == 0
    assert "HSA_OVERRIDE_GFX_VERSION=10.3.0" in result.stdout
    assert "A stack that fixes it" not in result.stdout


@pytest.mark.parametrize("text, words", [
    (NO_BINARY_GFX1031, "ROCm build"),
    ("Unable to open /dev/kfd read-write: Permission denied", "user groups"),
    ("RuntimeError: No XPU devices are available.", "fixed on the machine"),
])
def test_a_fix_plan_is_refused_in_one_line(text, words):
    result = run("explain", "--no-detect", "--format", "pip", text)
    assert result.exit_code == 1
    lines = [line for line in result.stderr.splitlines() if line.strip()]
    assert len(lines) == 1 and words in lines[0] and "Traceback" not in result.output


def test_the_json_document_carries_the_gfx():
    result = run("explain", "--no-detect", "--format", "json", NO_BINARY_GFX1031)
    doc = json.loads(result.stdout)  # conftest validates it against schemas/explain.schema.json
    match = doc["matches"][0]
    assert (match["code"], match["category"], match["found"]) == (
        "hip-no-binary-for-gpu", "gfx-not-in-build", {"gfx": "gfx1031"})
    assert doc["versions_seen"]["gfx"] == ["gfx1031"] and "fix_plan" not in doc
