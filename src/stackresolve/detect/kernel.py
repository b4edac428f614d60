"""Driver version from the Linux kernel module's own files (native Linux only; absent in WSL2 and on Jetson).

/sys/module/nvidia/version holds the bare version. /proc/driver/nvidia/version reads

    NVRM version: NVIDIA UNIX x86_64 Kernel Module  384.98  Thu Oct 26 15:16:01 PDT 2017            (proprietary)
    NVRM version: NVIDIA UNIX Open Kernel Module for x86_64  565.57.01  Release Build  (...)  ...   (open)
"""

from __future__ import annotations

import re
from dataclasses import dataclass

from stackresolve.model.values import DriverVersion

SYS_VERSION = "/sys/module/nvidia/version"
PROC_VERSION = "/proc/driver/nvidia/version"

_PROC_RE = re.compile(r"NVRM version:.*?Kernel Module(?:\s+for\s+\S+)?\s+([0-9]+(?:\.[0-9]+)+)")


@dataclass
class ProcVersion:
    version: str | None
    flavor: str | None  # "open" | "proprietary" | None


def parse_proc_version(text: str | None) -> ProcVersion:
    if not text:
        return ProcVersion(None, None)
    m = _PROC_RE.search(text)
    if not m:
        return ProcVersion(None, None)
    head = text[:m.start(1)]
    flavor = "open" if "Open Kernel Module" in head else "proprietary"
    return ProcVersion(parse_sys_version(m.group(1)), flavor)


def parse_sys_version(text: str | None) -> str | None:
    if not text:
        return None
    try:  # the one driver parser, tolerant as for every probe
        return str(DriverVersion.parse(text, tolerant=True))
    except ValueError:
        return None
