"""Adapters from the detection layer (stackresolve.detect.Machine) to what planning and checking need."""

from __future__ import annotations

from stackresolve.check import CheckFacts
from stackresolve.target import MachineFacts


def _os_name(machine) -> str | None:
    name = "wsl2" if machine.os.wsl else machine.os.system
    return name if name in ("linux", "windows", "macos", "wsl2") else None


def facts_from_machine(machine) -> MachineFacts:
    """Keep what planning needs from a detected Machine: OS, arch, driver and each GPU's compute capability."""
    arch = machine.os.arch
    driver = machine.driver
    return MachineFacts(
        os=_os_name(machine),
        arch=arch if arch in ("x86_64", "aarch64", "arm64") else None,
        driver=driver.version if driver else None,
        driver_source=driver.source if driver else "",
        gpus=tuple((g.name or "", g.compute_capability, g.compute_capability_source or g.source)
                   for g in machine.gpus),
        probed_gpus=True,
        bad_overrides=tuple(f.message for f in machine.findings if f.code == "bad-override"),
    )


def check_facts_from_machine(machine) -> CheckFacts:
    tensorflow = next((f.version for f in machine.frameworks if f.name == "tensorflow" and f.version), None)
    return CheckFacts(
        os=_os_name(machine),
        driver=machine.driver.version if machine.driver else None,
        gpus=tuple((g.name or "GPU", g.compute_capability) for g in machine.gpus),
        python=machine.python.version if machine.python else None,
        tensorflow=tensorflow,
        cuda_toolkits=tuple(t.full_version or t.version for t in machine.cuda_toolkits),
        cudnn=tuple(c.version for c in machine.cudnn),
    )


def detect(python_exe: str | None = None, gpu_only: bool = False):
    from stackresolve.detect import detect_machine

    return detect_machine(python_exe=python_exe, gpu_only=gpu_only)


def probe_machine_facts() -> MachineFacts:
    """Planning needs the OS, the GPUs and the driver: the other probes (toolkits, Python) are skipped."""
    return facts_from_machine(detect(gpu_only=True))
