"""`stackresolve doctor` on AMD (ROCm) and Intel (XPU) machines (issue 36): doctor/amd_intel.py's checks over fake
detect.model Machines.

The machines are built here (no AMD or Intel GPU was at hand, and h36-detect's probes that fill these fields are
merged separately); their values are real: gfx targets and device ids from AMD's and Intel's tables as the reports
cited show them (RX 6700 XT gfx1031, RX 7900 XTX gfx1100 1002:744c, RX 580 gfx803, MI300X gfx942 1002:74a1, Arc A770
8086:56a0), the torch 2.5.1+rocm6.2 version values (hip '6.2.41133-dd7f95766') as tests/fixtures/detect/README.md
records them. Expected findings follow the sources the checks cite: the targets of PyTorch's ROCm wheels
(pytorch/pytorch .ci/docker/libtorch/build.sh), AMD's group and container documentation, PyTorch's XPU prerequisites.
"""

from __future__ import annotations

import pytest

from stackresolve.model.machine import (
    AmdGpuInfo,
    DeviceAccess,
    FrameworkInfo,
    IntelGpuInfo,
    Machine,
    OSInfo,
    RocmInfo,
)
from stackresolve.doctor import amd_intel, diagnose
from stackresolve.knowledge.loader import knowledge

LINUX = OSInfo(system="linux", distro="ubuntu", release="22.04", arch="x86_64", source="test")
CONTAINER = OSInfo(system="linux", distro="ubuntu", release="22.04", arch="x86_64", container=True, source="test")
ROCM_624 = RocmInfo(version="6.2.4", path="/opt/rocm", source="test")
KFD_OK = DeviceAccess("/dev/kfd", exists=True, usable=True, group="render")
RENDER_OK = DeviceAccess("/dev/dri/renderD128", exists=True, usable=True, group="render")
TORCH_ROCM62 = FrameworkInfo(name="pytorch", version="2.5.1", cuda=None, cudnn=None, gpu_build=False, package="torch",
                             variant="rocm6.2", module_version="2.5.1+rocm6.2", hip="6.2.41133-dd7f95766")
RX7900XTX = AmdGpuInfo(index=0, gfx="gfx1100", source="kfd-topology", name="AMD Radeon RX 7900 XTX", pci_id="1002:744c")
RX6700XT = AmdGpuInfo(index=0, gfx="gfx1031", source="kfd-topology", name="AMD Radeon RX 6700 XT")
RX580 = AmdGpuInfo(index=0, gfx="gfx803", source="kfd-topology", name="AMD Radeon RX 580")
A770 = IntelGpuInfo(index=0, pci_id="8086:56a0", source="sysfs-pci", name="Intel Arc A770", kernel_driver="i915",
                    bus_id="0000:03:00.0")
LEVEL_ZERO = "/usr/lib/x86_64-linux-gnu/libze_loader.so.1"


def ACCELERATORS():  # noqa: N802 (as doctor passes it: the shipped amd.toml and intel.toml, read on first use)
    return knowledge().accelerators


def amd_machine(*gpus, os=LINUX, devices=(KFD_OK, RENDER_OK), rocm=ROCM_624, frameworks=(), env=None) -> Machine:
    return Machine(os=os, driver=None, amd_gpus=tuple(gpus), gpu_devices=tuple(devices), rocm=rocm,
                   frameworks=tuple(frameworks), env=env or {})


def codes(findings) -> list[str]:
    return [f.code for f in findings]


def test_a_healthy_rocm_machine_has_nothing_to_say():
    assert amd_intel.check_amd_intel(amd_machine(RX7900XTX, frameworks=[TORCH_ROCM62]), ACCELERATORS) == []


def test_a_user_outside_the_render_group():
    machine = amd_machine(RX7900XTX, devices=(DeviceAccess("/dev/kfd", True, False, "render"),
                                              DeviceAccess("/dev/dri/renderD128", True, False, "render")))
    (finding,) = amd_intel.device_access(machine)
    assert finding.code == "rocm-device-access" and finding.severity.value == "error"
    assert "/dev/kfd (group render)" in finding.message
    assert "sudo usermod -aG render,video $USER" in finding.fix and "log out and in again" in finding.fix
    assert "rocm.docs.amd.com" in finding.source


def test_a_container_user_outside_the_group_is_told_to_pass_the_groups():
    machine = amd_machine(RX7900XTX, os=CONTAINER, devices=(DeviceAccess("/dev/kfd", True, False, "render"),
                                                            RENDER_OK))
    (finding,) = amd_intel.device_access(machine)
    assert "--group-add video --group-add render" in finding.fix


def test_a_closed_render_node_of_an_intel_or_nvidia_machine_is_not_rocms():
    machine = Machine(os=LINUX, driver=None, gpu_devices=(DeviceAccess("/dev/dri/renderD128", True, False, "render"),))
    assert amd_intel.device_access(machine) == []


def test_a_container_started_without_the_devices():
    # sysfs shows the GPU in a container; /dev/kfd is only there with --device=/dev/kfd (AMD's docker how-to)
    machine = amd_machine(RX7900XTX, os=CONTAINER, devices=(DeviceAccess("/dev/kfd", exists=False, usable=False),))
    (finding,) = amd_intel.container_devices(machine)
    assert finding.code == "rocm-container-devices"
    assert "/dev/kfd and no /dev/dri/renderD*" in finding.message
    assert "--device=/dev/kfd --device=/dev/dri --group-add video --group-add render" in finding.fix


def test_a_host_without_kfd_has_no_kernel_driver():
    machine = amd_machine(RX7900XTX, devices=(DeviceAccess("/dev/kfd", exists=False, usable=False),))
    (finding,) = amd_intel.container_devices(machine)
    assert finding.code == "rocm-kernel-driver-not-loaded" and "modprobe amdgpu" in finding.fix


def test_unprobed_devices_say_nothing():
    assert amd_intel.container_devices(amd_machine(RX7900XTX, devices=())) == []
    assert amd_intel.device_access(amd_machine(RX7900XTX, devices=())) == []


def test_an_rdna2_gpu_the_wheels_leave_out_gets_the_unofficial_override():
    # gfx1031 is in no PyTorch ROCm wheel's PYTORCH_ROCM_ARCH; users run it as gfx1030 (ROCm/rocALUTION#197)
    unsupported, override = amd_intel.gfx_support(amd_machine(RX6700XT, frameworks=[TORCH_ROCM62]), ACCELERATORS)
    assert unsupported.code == "gfx-unsupported" and unsupported.severity.value == "warning"
    assert "gfx1031" in unsupported.message and "PYTORCH_ROCM_ARCH=gfx1031" in unsupported.fix
    assert override.code == "gfx-override-unofficial" and "unofficial" in override.message
    assert "HSA_OVERRIDE_GFX_VERSION=10.3.0" in override.fix and "gfx1030" in override.message


def test_the_override_already_set_is_information():
    machine = amd_machine(RX6700XT, frameworks=[TORCH_ROCM62], env={"HSA_OVERRIDE_GFX_VERSION": "10.3.0"})
    override = amd_intel.gfx_support(machine, ACCELERATORS)[1]
    assert override.severity.value == "info" and "is set to 10.3.0" in override.message and override.fix == ""


def test_polaris_has_no_wheel_and_no_override():
    # RX 580 (gfx803): no PyTorch ROCm wheel carries it, and no override family applies
    (finding,) = amd_intel.gfx_support(amd_machine(RX580, frameworks=[TORCH_ROCM62]), ACCELERATORS)
    assert finding.code == "gfx-unsupported" and finding.severity.value == "error"
    assert "HSA_OVERRIDE" not in finding.fix


@pytest.mark.parametrize("gfx", ["gfx942", "gfx90a", "gfx1100", "gfx1030", "gfx90a:sramecc+:xnack-"])
def test_carried_targets_are_fine(gfx):
    gpu = AmdGpuInfo(index=0, gfx=gfx, source="rocm_agent_enumerator")
    assert amd_intel.gfx_support(amd_machine(gpu, frameworks=[TORCH_ROCM62]), ACCELERATORS) == []


def test_an_integrated_gpu_beside_nvidia_is_not_judged_without_rocm():
    # a Ryzen's gfx1036 iGPU on a machine with no ROCm and no ROCm PyTorch: not this machine's problem
    igpu = AmdGpuInfo(index=0, gfx="gfx1036", source="kfd-topology")
    assert amd_intel.gfx_support(amd_machine(igpu, rocm=None), ACCELERATORS) == []


def test_a_second_gpu_the_wheels_leave_out_is_named_with_how_to_hide_it():
    igpu = AmdGpuInfo(index=1, gfx="gfx1036", source="kfd-topology")
    findings = amd_intel.gfx_support(amd_machine(RX7900XTX, igpu, frameworks=[TORCH_ROCM62]), ACCELERATORS)
    # amd.toml's sourced [[gfx_override]] rows name gfx1031/gfx1032 and gfx1101/gfx1102, not gfx1036
    assert codes(findings) == ["gfx-unsupported"]
    assert "HIP_VISIBLE_DEVICES without index 1" in findings[0].fix


def test_a_torch_rocm_build_of_another_rocm_major():
    machine = amd_machine(RX7900XTX, rocm=RocmInfo(version="5.7.1", path="/opt/rocm", source="test"),
                          frameworks=[TORCH_ROCM62])
    (finding,) = amd_intel.torch_rocm_build(machine)
    assert finding.code == "torch-rocm-mismatch" and "rocm6.2" in finding.message and "5.7.1" in finding.message
    assert "/whl/rocm5" in finding.fix


def test_the_same_rocm_major_is_fine_and_no_rocm_says_nothing():
    assert amd_intel.torch_rocm_build(amd_machine(RX7900XTX, frameworks=[TORCH_ROCM62])) == []
    assert amd_intel.torch_rocm_build(amd_machine(RX7900XTX, rocm=None, frameworks=[TORCH_ROCM62])) == []


def test_an_intel_gpu_without_level_zero():
    machine = Machine(os=LINUX, driver=None, intel_gpus=(A770,), level_zero=None)
    (finding,) = amd_intel.xpu_driver(machine)
    assert finding.code == "xpu-driver-missing" and "Level Zero loader" in finding.message
    assert "Intel GPU driver" in finding.fix and "get_start_xpu" in finding.source


def test_an_intel_gpu_without_a_kernel_driver_is_an_error():
    unbound = IntelGpuInfo(index=0, pci_id="8086:56a0", source="sysfs-pci", name="Intel Arc A770",
                           bus_id="0000:03:00.0")
    machine = Machine(os=LINUX, driver=None, intel_gpus=(unbound,), level_zero=LEVEL_ZERO)
    (finding,) = amd_intel.xpu_driver(machine)
    assert finding.severity.value == "error"
    assert "no i915/xe kernel driver is bound to Intel Arc A770" in finding.message


def test_a_ready_intel_gpu_says_nothing():
    machine = Machine(os=LINUX, driver=None, intel_gpus=(A770,), level_zero=LEVEL_ZERO)
    assert amd_intel.xpu_driver(machine) == []


def test_diagnose_reports_the_amd_findings():
    from stackresolve.knowledge.loader import load_knowledge

    machine = amd_machine(RX6700XT, os=CONTAINER, devices=(DeviceAccess("/dev/kfd", True, False, "render"), RENDER_OK),
                          frameworks=[TORCH_ROCM62])
    report = diagnose(machine, load_knowledge())
    found = codes(report.findings)
    assert {"rocm-device-access", "gfx-unsupported", "gfx-override-unofficial"} <= set(found)
    assert report.exit_code == 1


def test_a_machine_whose_gpu_is_amd_is_pointed_at_the_pytorch_rocm_plan():
    # nothing installed: doctor's TensorFlow target is the CPU build there, so it names the plan that uses the GPU
    (pointer,) = amd_intel.plan_pointer(amd_machine(RX7900XTX))
    assert pointer.code == "accelerator-plan" and "gfx1100" in pointer.message
    assert pointer.fix == "`stackresolve plan --torch latest --gpu-gfx gfx1100`"
    assert amd_intel.plan_pointer(amd_machine(RX7900XTX, frameworks=[TORCH_ROCM62])) == []  # already installed
