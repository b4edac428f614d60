"""Intel GPUs for PyTorch's XPU builds: the PCI functions, their kernel driver, and the Level Zero loader.

Where the facts come from (Linux only):
  GPUs        /sys/bus/pci/devices/<domain:bus:dev.fn>/{vendor,device,class}: vendor 0x8086 and a display
              controller (PCI base class 0x03: VGA 0x0300, 3D 0x0302, other 0x0380)
  driver      the function's `driver` link: .../bus/pci/drivers/i915 or .../drivers/xe (the two kernel drivers
              Intel's compute runtime runs on); no link when no driver is bound
  Level Zero  libze_loader.so.1, the loader PyTorch's XPU build dlopens (Intel's oneAPI Level Zero): in the
              ld.so cache (its path read from the cache's string table) or in the usual library folders and
              LD_LIBRARY_PATH, as the NVIDIA driver libraries are looked for (gpuchild.LINUX_LIB_DIRS)
"""

from __future__ import annotations

import re
import time

from .amd import PciName, _name
from stackresolve.model.machine import Finding, IntelGpuInfo, ProbeRecord

INTEL_VENDOR = 0x8086
SYSFS_DEVICES = "/sys/bus/pci/devices"
DISPLAY_BASE_CLASS = 0x03
COMPUTE_DRIVERS = ("i915", "xe")
LEVEL_ZERO = "libze_loader.so.1"
MAX_DEVICES = 1024

_BUS_ID = re.compile(r"^[0-9a-fA-F]{4,8}:[0-9a-fA-F]{2}:[0-9a-fA-F]{2}\.[0-7]$")
_DRIVER = re.compile(r"^[A-Za-z0-9_.-]{1,64}$")
_CACHED_PATH = re.compile(rb"(/[\x21-\x7e]{0,4000}/" + re.escape(LEVEL_ZERO.encode()) + rb")\x00")

DRIVER_FIX = ("install Intel's GPU driver packages for this distribution (Intel's client / data-center GPU "
              "driver installation guide), so that i915 or xe binds to the GPU; PyTorch's XPU getting-started "
              "page lists them as the prerequisite")
LEVEL_ZERO_FIX = ("install the Level Zero loader and Intel's compute runtime (packages libze1 / level-zero and "
                  "intel-level-zero-gpu / libze-intel-gpu1, from Intel's GPU driver repository)")


def _hex(text: str | None) -> int | None:
    text = (text or "").strip()
    if not re.match(r"^(0x)?[0-9a-fA-F]{1,8}$", text):
        return None
    return int(text, 16)


def scan_pci(fs, pci_name: PciName | None = None) -> list[IntelGpuInfo] | None:
    """Intel display functions under /sys/bus/pci/devices in bus order; None when the folder cannot be read."""
    entries = [e for e in fs.listdir(SYSFS_DEVICES) if _BUS_ID.match(e)]
    if not entries:
        return None
    out: list[IntelGpuInfo] = []
    for entry in entries[:MAX_DEVICES]:
        base = f"{SYSFS_DEVICES}/{entry}"
        if _hex(fs.read_text(base + "/vendor", limit=64)) != INTEL_VENDOR:
            continue
        cls = _hex(fs.read_text(base + "/class", limit=64))
        device = _hex(fs.read_text(base + "/device", limit=64))
        if cls is None or device is None or device > 0xFFFF or (cls >> 16) != DISPLAY_BASE_CLASS:
            continue
        driver = None
        if fs.exists(base + "/driver"):
            bound = fs.realpath(base + "/driver").replace("\\", "/").rstrip("/").rsplit("/", 1)[-1]
            driver = bound if _DRIVER.match(bound) and bound != "driver" else None
        pci_id = f"{INTEL_VENDOR:04x}:{device:04x}"
        out.append(IntelGpuInfo(index=len(out), pci_id=pci_id, source="sysfs-pci", name=_name(pci_name, pci_id),
                                kernel_driver=driver, bus_id=entry))
    return out


def find_level_zero(fs, env) -> str | None:
    """Where libze_loader.so.1 is: its path (from the ld.so cache or a library folder), None when not found."""
    # lazy: start-up (only this path needs detect.gpuchild)
    from .gpuchild import LINUX_LIB_DIRS

    cache = fs.read_bytes("/etc/ld.so.cache")
    if cache and LEVEL_ZERO.encode() in cache:
        m = _CACHED_PATH.search(cache)
        return m.group(1).decode("ascii") if m else "ld.so.cache"
    dirs = list(LINUX_LIB_DIRS) + [d for d in (env.get("LD_LIBRARY_PATH") or "").split(":") if d]
    for d in dirs:
        p = d.rstrip("/") + "/" + LEVEL_ZERO
        if fs.exists(p) and p.isprintable():
            return p
    return None


def probe(fs, env, records: list, findings: list, pci_name: PciName | None = None
          ) -> tuple[list[IntelGpuInfo], str | None]:
    """Intel GPUs and the Level Zero loader (looked for only when there is an Intel GPU), with the findings."""
    t0 = time.monotonic()
    gpus = scan_pci(fs, pci_name)
    if gpus is None:
        records.append(ProbeRecord("intel-pci", "absent", SYSFS_DEVICES + " not readable", time.monotonic() - t0))
        return [], None
    records.append(ProbeRecord("intel-pci", "ok", f"{len(gpus)} Intel display device(s)", time.monotonic() - t0))
    if not gpus:
        return [], None
    t0 = time.monotonic()
    loader = find_level_zero(fs, env)
    records.append(ProbeRecord("level-zero", "ok" if loader else "absent", loader or LEVEL_ZERO + " not found",
                               time.monotonic() - t0))
    for g in gpus:
        if g.kernel_driver not in COMPUTE_DRIVERS:
            bound = f"bound to {g.kernel_driver}" if g.kernel_driver else "no kernel driver bound"
            findings.append(Finding("warning", "xpu-driver-missing",
                                    f"Intel GPU {g.index} ({g.name or g.pci_id}, {g.bus_id}): {bound}, not i915 "
                                    "or xe: PyTorch's XPU build cannot use it", DRIVER_FIX, "sysfs-pci"))
    if loader is None and any(g.kernel_driver in COMPUTE_DRIVERS for g in gpus):
        findings.append(Finding("info", "xpu-driver-missing",
                                f"no Level Zero loader ({LEVEL_ZERO}) found: PyTorch's XPU build needs it for "
                                "the Intel GPU", LEVEL_ZERO_FIX, "level-zero"))
    return gpus, loader
