"""Doctor's checks for AMD (ROCm) and Intel (XPU) GPUs: small functions over the detected Machine, each returning the
findings it makes (issue 36).

The facts are detect's (Machine.amd_gpus, intel_gpus, rocm, gpu_devices, level_zero, frameworks); a check whose
facts were not probed (an empty gpu_devices, no rocm) says nothing. The rules are knowledge/rules.py's: which gfx
targets PyTorch's ROCm wheels carry, the unofficial HSA_OVERRIDE_GFX_VERSION practice, ROCm's major.
"""

from __future__ import annotations

from stackresolve.knowledge.rules import (
    ROCM_MAJOR_SOURCE,
    TORCH_ROCM_GFX_SOURCE,
    gfx_override,
    rocm_major,
    torch_rocm_carries,
    torch_rocm_gfx,
    variant_carries,
)
from stackresolve.model.enums import Severity
from stackresolve.model.finding import Finding

E, W, I = Severity.ERROR, Severity.WARNING, Severity.INFO
KFD = "/dev/kfd"
ROCMINFO = "ROCm/rocminfo:rocminfo.cc@ab4cd8d654cfe7e7fce9355a88a1557f71625452 (tag rocm-6.2.2)"
GROUPS_SOURCE = ("https://rocm.docs.amd.com/projects/install-on-linux/en/latest/install/prerequisites.html (Setting "
                 f"permissions for groups) ; {ROCMINFO} (CheckInitialState: /dev/kfd read-write, the group owning it)")
DOCKER_DOC = "https://rocm.docs.amd.com/projects/install-on-linux/en/latest/how-to/docker.html"
CONTAINER_SOURCE = f"{DOCKER_DOC} (Accessing GPUs in containers: --device /dev/kfd --device /dev/dri)"
XPU_SOURCE = ("https://docs.pytorch.org/docs/stable/notes/get_start_xpu.html (Software Prerequisite: install the Intel "
              "GPUs driver first) ; pytorch/pytorch:c10/xpu/XPUFunctions.cpp@0a8c88b6086e7f845479e377e828e0f2a44f68fe "
              "(devices are enumerated through the Level Zero backend only)")
GROUPS_FIX = "`sudo usermod -aG render,video $USER`, then log out and in again (or reboot) so the groups apply"
CONTAINER_FIX = "`docker run --device=/dev/kfd --device=/dev/dri --group-add video --group-add render ...`"


def check_amd_intel(machine, accelerators) -> list[Finding]:
    """Every AMD and Intel check, in the order a user fixes them: the devices, then the GPUs' targets and builds.
    `accelerators`: returns the knowledge base's AMD and Intel facts (loaded only when an AMD GPU is checked)."""
    return [*container_devices(machine), *device_access(machine), *gfx_support(machine, accelerators),
            *torch_rocm_build(machine), *xpu_driver(machine), *plan_pointer(machine)]


def plan_pointer(machine) -> list[Finding]:
    """Where no PyTorch ROCm or XPU build is installed on a machine whose GPU is AMD's (or an Intel GPU the XPU table
    knows): the plan that uses it (the rest of doctor's report is about TensorFlow's CPU build there)."""
    if _torch_rocm(machine) or _uses_xpu(machine):
        return []
    if machine.amd_gpus:
        gpu = machine.amd_gpus[0]
        label, flag, what = f"{gpu.name or 'AMD GPU'} ({gpu.gfx})", f"--gpu-gfx {gpu.gfx}", "ROCm"
        source = "constraints/amd.toml [[torch_rocm]]"
    elif any(g.name for g in machine.intel_gpus):
        gpu = next(g for g in machine.intel_gpus if g.name)
        label, flag, what = gpu.name, "", "XPU"
        source = "constraints/intel.toml [[torch_xpu]]"
    else:
        return []
    return [Finding(I, "accelerator-plan",
                    f"this machine's GPU is {label}: stackresolve plans PyTorch's {what} build on it (TensorFlow and "
                    f"JAX there are not planned, so doctor's TensorFlow target here is the CPU build)",
                    f"`stackresolve plan --torch latest{' ' + flag if flag else ''}`", source)]


def _kfd(machine):
    return next((d for d in machine.gpu_devices if d.path == KFD), None)


def _render_nodes(machine) -> list:
    return [d for d in machine.gpu_devices if d.path.startswith("/dev/dri/render")]


def _in_container(machine) -> bool:
    return bool(getattr(machine.os, "container", False))


def container_devices(machine) -> list[Finding]:
    """An AMD GPU the container sees in sysfs, but no /dev/kfd or render node to open: started without the devices
    (on a host the same facts mean the amdgpu driver is not loaded)."""
    kfd = _kfd(machine)
    if not machine.amd_gpus or kfd is None:  # no AMD GPU, or the device nodes were not probed
        return []
    missing = [KFD] if not kfd.exists else []
    if not any(d.exists for d in _render_nodes(machine)):
        missing.append("/dev/dri/renderD*")
    if not missing:
        return []
    gpus = ", ".join(sorted({g.gfx for g in machine.amd_gpus}))
    if _in_container(machine):
        return [Finding(E, "rocm-container-devices",
                        f"this container sees AMD GPUs ({gpus}) but has no {' and no '.join(missing)}: it was "
                        "started without AMD's GPU devices, so ROCm and PyTorch find no GPU",
                        f"start the container with {CONTAINER_FIX} (the NVIDIA options, --gpus all, do nothing for "
                        "AMD GPUs)", CONTAINER_SOURCE)]
    return [Finding(E, "rocm-kernel-driver-not-loaded",
                    f"this machine has AMD GPUs ({gpus}) but no {' and no '.join(missing)}: the amdgpu kernel driver "
                    "is not loaded (or loaded without its compute interface)",
                    "load it (`sudo modprobe amdgpu`; `dmesg | grep -i amdgpu` says why it fails) or install AMD's "
                    "amdgpu-dkms for the running kernel (amdgpu-install --usecase=rocm) and reboot",
                    f"{ROCMINFO} (CheckInitialState: /sys/module/amdgpu, /dev/kfd) ; {DOCKER_DOC} (Prerequisites: the "
                    "ROCm kernel-mode driver on the host)")]


def device_access(machine) -> list[Finding]:
    """/dev/kfd or a render node exists but this user may not open it: the render/video groups. Only where ROCm is
    in play (an AMD GPU, or /dev/kfd): a closed render node of another vendor's GPU is not ROCm's."""
    kfd = _kfd(machine)
    if not machine.amd_gpus and not (kfd is not None and kfd.exists):
        return []
    closed = [d for d in machine.gpu_devices
              if d.exists and not d.usable and (d.path == KFD or d.path.startswith("/dev/dri/render"))]
    if not closed:
        return []
    nodes = ", ".join(f"{d.path} (group {d.group})" if d.group else d.path for d in closed)
    fix = f"add the user to the render and video groups, as AMD's install guide says: {GROUPS_FIX}"
    if _in_container(machine):
        fix += f"; in a container pass the groups: {CONTAINER_FIX}"
    return [Finding(E, "rocm-device-access",
                    f"this user may not open {nodes}: ROCm needs /dev/kfd and a render node read-write, so no ROCm "
                    "program sees the GPU", fix, GROUPS_SOURCE)]


def gfx_support(machine, accelerators) -> list[Finding]:
    """AMD GPUs whose gfx target the installed PyTorch ROCm wheel does not carry (its variant's targets, from the
    knowledge base), or, with no known build installed, that no PyTorch ROCm wheel carries; the unofficial override
    where users apply one. Only where ROCm is in use (ROCm installed, or a PyTorch ROCm build): a Ryzen's integrated
    GPU beside an NVIDIA card is no problem of the machine's stack. An error where a PyTorch ROCm build is installed
    and no override applies."""
    torch_rocm = _torch_rocm(machine)
    if (machine.rocm is None and not torch_rocm) or not machine.amd_gpus:
        return []
    amd = accelerators()
    build = _installed_variant(machine, amd)
    which = (f"the installed torch {build.releases[0] if len(build.releases) == 1 else machine_torch(machine)} "
             f"{build.name} wheel" if build else "no PyTorch ROCm wheel")
    out: list[Finding] = []
    for gpu in machine.amd_gpus:
        if (variant_carries(build, gpu.gfx) if build else torch_rocm_carries(amd, gpu.gfx)):
            continue
        label = f"AMD GPU {gpu.index} ({gpu.name + ', ' if gpu.name else ''}{gpu.gfx})"
        override = gfx_override(amd, gpu.gfx)
        if build and torch_rocm_carries(amd, gpu.gfx):
            fix = f"install a PyTorch ROCm build that carries {gpu.gfx} (`stackresolve plan --torch latest --gpu-gfx {gpu.gfx}`)"
        else:
            fix = (f"use a GPU whose target a wheel carries ({', '.join(torch_rocm_gfx(amd))}), or build PyTorch from "
                   f"source with PYTORCH_ROCM_ARCH={gpu.gfx}")
        if len(machine.amd_gpus) > 1:
            fix += f"; if another GPU is the one to use, hide this one (HIP_VISIBLE_DEVICES without index {gpu.index})"
        out.append(Finding(E if torch_rocm and not override else W, "gfx-unsupported",
                           f"{label}: {which} carries code objects for {gpu.gfx} (hipErrorNoBinaryForGpu "
                           "or 'invalid device function' on it)", fix, build.source if build else TORCH_ROCM_GFX_SOURCE))
        if override:
            value, runs_as = override.hsa_override, override.runs_as
            set_to = (machine.env or {}).get("HSA_OVERRIDE_GFX_VERSION")
            state = (f"HSA_OVERRIDE_GFX_VERSION is set to {set_to}" if set_to else
                     f"set HSA_OVERRIDE_GFX_VERSION={value} before starting Python")
            out.append(Finding(I if set_to == value else W, "gfx-override-unofficial",
                               f"{label} runs the wheels' {runs_as} code objects with HSA_OVERRIDE_GFX_VERSION="
                               f"{value}: unofficial (AMD does not support it; kernels the family does not share can "
                               f"fail); {state}",
                               "" if set_to == value else f"`export HSA_OVERRIDE_GFX_VERSION={value}` (unofficial)",
                               override.source))
    return out


def machine_torch(machine) -> str:
    """The installed torch's release ("2.5.1"), without its local version."""
    fw = next((fw for fw in machine.frameworks if fw.name == "pytorch"), None)
    return (fw.version or "").split("+", 1)[0] if fw else ""


def _installed_variant(machine, amd):
    """The knowledge base's record of the installed PyTorch ROCm wheel (its release and variant), or None."""
    fw = next((fw for fw in machine.frameworks if fw.name == "pytorch" and (fw.variant or "").startswith("rocm")),
              None)
    if fw is None or not fw.version:
        return None
    return next((v for v in amd.torch_rocm_of(machine_torch(machine)) if v.name == fw.variant), None)


def torch_rocm_build(machine) -> list[Finding]:
    """An installed PyTorch ROCm build of another ROCm major than the installed ROCm."""
    installed = rocm_major(machine.rocm.version) if machine.rocm else None
    if installed is None:
        return []
    out = []
    for fw in machine.frameworks:
        if fw.name != "pytorch":
            continue
        variant = fw.variant if fw.variant and fw.variant.startswith("rocm") else None
        built = rocm_major(variant or fw.hip)
        if built is None or built == installed:
            continue
        build = variant or f"HIP {fw.hip}"
        out.append(Finding(W, "torch-rocm-mismatch",
                           f"PyTorch {fw.version or ''} is a {build} build (ROCm {built}), the installed ROCm is "
                           f"{machine.rocm.version} (ROCm {installed}): the wheel runs on its own ROCm libraries, but "
                           "extensions compiled here against the installed ROCm (bitsandbytes, flash-attention, custom "
                           "ops) do not load beside it",
                           f"install the PyTorch ROCm wheel of the installed ROCm's line (the /whl/rocm{installed}.x "
                           f"index matching {machine.rocm.version}), or install ROCm {built}.x to build extensions",
                           ROCM_MAJOR_SOURCE))
    return out


def xpu_driver(machine) -> list[Finding]:
    """An Intel GPU without the i915/xe kernel driver bound, or without the Level Zero loader PyTorch's XPU build
    enumerates devices through."""
    if not machine.intel_gpus:
        return []
    unbound = [g for g in machine.intel_gpus if not g.kernel_driver]
    problems = []
    if unbound:
        problems.append("no i915/xe kernel driver is bound to " + ", ".join(
            f"{g.name or g.pci_id}{' at ' + g.bus_id if g.bus_id else ''}" for g in unbound))
    if not machine.level_zero:
        problems.append("the Level Zero loader (libze_loader.so.1) was not found")
    if not problems:
        return []
    names = ", ".join(sorted({g.name or g.pci_id for g in machine.intel_gpus}))
    return [Finding(E if unbound or _uses_xpu(machine) else W, "xpu-driver-missing",
                    f"Intel GPU ({names}): {'; '.join(problems)}, so PyTorch's XPU build finds no device ('No XPU "
                    "devices are available')",
                    "install the Intel GPU driver as PyTorch's XPU prerequisites say ('Intel GPUs Driver "
                    "Installation'; on Ubuntu the client GPU packages libze1, libze-intel-gpu1 (intel-level-zero-gpu) "
                    "and intel-opencl-icd), then log in again as a member of the render group",
                    XPU_SOURCE)]


def _torch_rocm(machine) -> bool:
    return any(fw.name == "pytorch" and ((fw.variant or "").startswith("rocm") or fw.hip) for fw in machine.frameworks)


def _uses_xpu(machine) -> bool:
    return any(fw.name == "pytorch" and fw.variant == "xpu" for fw in machine.frameworks)
