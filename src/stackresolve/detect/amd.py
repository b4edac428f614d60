"""AMD GPUs for ROCm: gfx targets, the ROCm install, the amdgpu driver, and whether this user can open the devices.

Where the facts come from (Linux only; nothing here runs on Windows or macOS):
  gfx targets  /sys/class/kfd/kfd/topology/nodes/<n>/properties, one "name value" line per property (decimal).
               A GPU agent has simd_count > 0 and a non-zero gfx_target_version; a CPU agent has neither.
               gfx_target_version is major * 10000 + minor * 100 + stepping, written "gfx" + major (decimal) +
               minor (hex) + stepping (hex): 90402 -> gfx942, 90010 -> gfx90a, 110000 -> gfx1100, as ROCm's own
               rocm_agent_enumerator reads it (ROCm/rocminfo:rocm_agent_enumerator, readFromKFD, at commit
               96eba87a) and LLVM's amdgpu-arch (llvm-project:clang/tools/amdgpu-arch/AMDGPUArchByKFD.cpp).
               vendor_id / device_id of the node give the PCI id. When no GPU node can be read (a container
               without /sys/class/kfd, an old kernel), `rocm_agent_enumerator` is asked, within the budget; its
               "gfx000" line is the CPU agent and is skipped.
  ROCm         <ROCM_PATH or /opt/rocm or /opt/rocm-X.Y.Z>/.info/version (or version-dev): "6.2.4-120" -> 6.2.4.
  amdgpu       /sys/module/amdgpu exists when the module is loaded; /sys/module/amdgpu/version only with AMD's
               DKMS driver (amdgpu-dkms), not the kernel's own.
  devices      /dev/kfd and /dev/dri/renderD*: ROCm opens both read-write (ROCm's install guide: the user must be
               in the groups owning them, `render` and `video`; a container needs them passed in with
               `--device /dev/kfd --device /dev/dri`, ROCm's "Running ROCm Docker containers").

Every value is checked against the shape it must have before it is kept: nothing a file holds reaches the
terminal as written.
"""

from __future__ import annotations

import re
import time
from typing import Callable

from stackresolve.model.machine import AmdGpuInfo, DeviceAccess, Finding, ProbeRecord, RocmInfo
from .runner import CommandNotFound, CommandTimeout

KFD_NODES = "/sys/class/kfd/kfd/topology/nodes"
AMD_VENDOR = 0x1002
AMDGPU_MODULE = "/sys/module/amdgpu"
KFD_DEVICE = "/dev/kfd"
RENDER_NODES = "/dev/dri/renderD*"
DEFAULT_ROCM = "/opt/rocm"
PROPERTIES_LIMIT = 64 << 10  # a real node's properties file is under 2 KiB
MAX_NODES = 256  # KFD numbers nodes 0..N-1; a listing longer than this is not a real topology
ENUMERATOR = "rocm_agent_enumerator"
ENUMERATOR_TIMEOUT = 3.0  # it is a Python script (it may start rocminfo): give it a little time, within the budget

ROCM_GROUPS_FIX = ("add this user to the groups owning the devices: `sudo usermod -a -G render,video $LOGNAME`, "
                   "then log out and back in (ROCm install guide: Configuring permissions for GPU access)")
CONTAINER_FIX = ("start the container with `--device=/dev/kfd --device=/dev/dri --group-add video` (and "
                 "`--group-add render` where the host has that group) (ROCm: Running ROCm Docker containers)")

_GFX = re.compile(r"^(gfx[0-9a-f]{3,5})(?::[A-Za-z0-9+\-:]*)?$")
_VERSION = re.compile(r"^\s*(\d{1,3}\.\d{1,3}(?:\.\d{1,5})?)(?:[-.~+][0-9A-Za-z.~+-]{0,40})?\s*$")
_MODULE_VERSION = re.compile(r"^[0-9][0-9A-Za-z.:+~_-]{0,63}$")
_GROUP = re.compile(r"^[A-Za-z_][A-Za-z0-9_.-]{0,31}$")
_PRINTABLE_PATH = re.compile(r"^/[^\x00-\x1f\x7f]{0,4095}$")

# PciName: "1002:74a1" -> model name (the knowledge base's AMD / Intel table), or None
PciName = Callable[[str], "str | None"]


def gfx_target(version: int) -> str | None:
    """The LLVM target of a KFD gfx_target_version: 90402 -> "gfx942", 90010 -> "gfx90a", 110000 -> "gfx1100";
    None for 0 (a CPU agent) and for numbers that do not encode one (minor or stepping past one hex digit)."""
    if not 0 < version < 1_000_000:
        return None
    major, minor, stepping = version // 10000, (version // 100) % 100, version % 100
    if major == 0 or minor > 15 or stepping > 15:
        return None
    return f"gfx{major}{minor:x}{stepping:x}"


def parse_properties(text: str | None) -> dict[str, int]:
    """The "name value" lines of a KFD node's properties file whose value is a decimal number."""
    out: dict[str, int] = {}
    for line in (text or "").splitlines():
        parts = line.split()
        if len(parts) == 2 and parts[1].isascii() and parts[1].isdigit() and len(parts[1]) <= 20 \
                and parts[0].isascii() and parts[0].isidentifier():
            out.setdefault(parts[0], int(parts[1]))
    return out


def _node_number(name: str) -> int | None:
    return int(name) if name.isascii() and name.isdigit() and len(name) <= 6 else None


def scan_kfd(fs) -> tuple[list[tuple[str, str | None]], list[str]] | None:
    """GPU agents of the KFD topology in node order as (gfx, pci_id), and what was skipped as not a GPU target
    ("node 3: gfx_target_version 4294967295"); None when the topology cannot be read."""
    names = [n for n in fs.listdir(KFD_NODES) if _node_number(n) is not None]
    if not names:
        return None
    agents: list[tuple[str, str | None]] = []
    skipped: list[str] = []
    for name in sorted(names, key=lambda n: int(n))[:MAX_NODES]:
        props = parse_properties(fs.read_text(f"{KFD_NODES}/{name}/properties", limit=PROPERTIES_LIMIT))
        version = props.get("gfx_target_version", 0)
        if props.get("simd_count", 0) == 0 or version == 0:
            continue  # a CPU agent (or a node whose properties could not be read)
        gfx = gfx_target(version)
        if gfx is None:
            skipped.append(f"node {name}: gfx_target_version {version}")
            continue
        vendor, device = props.get("vendor_id"), props.get("device_id")
        pci_id = f"{vendor:04x}:{device:04x}" if vendor and device and vendor <= 0xFFFF and device <= 0xFFFF \
            else None
        agents.append((gfx, pci_id))
    return agents, skipped


def parse_agent_enumerator(stdout: str | None) -> list[str]:
    """The gfx targets `rocm_agent_enumerator` printed, one a line, without the CPU agent's "gfx000" (and without
    feature suffixes such as ":xnack-"); anything else on its output is skipped."""
    out = []
    for line in (stdout or "").splitlines()[:MAX_NODES]:
        m = _GFX.match(line.strip())
        if m and m.group(1) != "gfx000":
            out.append(m.group(1))
    return out


def _name(pci_name: PciName | None, pci_id: str | None) -> str | None:
    if pci_name is None or not pci_id:
        return None
    try:
        name = pci_name(pci_id)
    except Exception:  # an injected look-up must not take detection down
        return None
    return name if isinstance(name, str) and name.isprintable() and 0 < len(name) <= 200 else None


def _record(records: list, name: str, status: str, detail: str, t0: float) -> None:
    records.append(ProbeRecord(name, status, detail, time.monotonic() - t0))


def probe_gpus(fs, env, system: str, run, rocm: RocmInfo | None, records: list, findings: list,
               pci_name: PciName | None = None) -> list[AmdGpuInfo]:
    """AMD GPU agents: the KFD topology, else `rocm_agent_enumerator` (only when one can be found: PATH, then
    <rocm>/bin). `run` is the budgeted runner."""
    t0 = time.monotonic()
    scanned = scan_kfd(fs)
    if scanned is not None:
        agents, skipped = scanned
        detail = f"{len(agents)} GPU agent(s)" + (f"; not a gfx target: {', '.join(skipped)}" if skipped else "")
        _record(records, "kfd-topology", "ok", detail, t0)
        if agents:
            return [AmdGpuInfo(index=i, gfx=gfx, source="kfd-topology", name=_name(pci_name, pci_id),
                               pci_id=pci_id) for i, (gfx, pci_id) in enumerate(agents)]
    else:
        _record(records, "kfd-topology", "absent", KFD_NODES + " not readable", t0)
    # lazy: start-up (only this path needs detect.paths)
    from . import paths

    extra = [rocm.path.rstrip("/") + "/bin"] if rocm is not None and rocm.path else []
    exe = paths.which(fs, env, system, ENUMERATOR, extra + [DEFAULT_ROCM + "/bin"])
    if not exe:
        _record(records, ENUMERATOR, "absent", "not on PATH or in the ROCm folder", time.monotonic())
        return []
    t0 = time.monotonic()
    try:
        rc, out, _err = run([exe], ENUMERATOR_TIMEOUT)
    except CommandTimeout as exc:
        _record(records, ENUMERATOR, "timeout", str(exc), t0)
        findings.append(Finding("warning", "probe-timeout", f"{ENUMERATOR}: {exc}",
                                "raise STACKRESOLVE_DETECT_TIMEOUT", ENUMERATOR))
        return []
    except CommandNotFound as exc:
        _record(records, ENUMERATOR, "absent", str(exc), t0)
        return []
    except Exception as exc:  # CommandOutputTooLarge, a runner's bug: a failed probe, never a crash
        _record(records, ENUMERATOR, "failed", str(exc) or repr(exc), t0)
        return []
    targets = parse_agent_enumerator(out) if rc == 0 else []
    _record(records, ENUMERATOR, "ok" if rc == 0 else "failed", f"exit {rc}, {len(targets)} GPU agent(s)", t0)
    return [AmdGpuInfo(index=i, gfx=gfx, source=ENUMERATOR) for i, gfx in enumerate(targets)]


def _rocm_version(fs, path: str) -> str | None:
    for leaf in (".info/version", ".info/version-dev"):
        m = _VERSION.match(fs.read_text(f"{path}/{leaf}", limit=256) or "")
        if m:
            return m.group(1)
    return None


def _version_key(path: str) -> tuple:
    m = re.search(r"rocm-(\d+)\.(\d+)(?:\.(\d+))?$", path)
    return tuple(int(x or 0) for x in m.groups()) if m else (-1,)


def probe_rocm(fs, env, records: list) -> RocmInfo | None:
    """The ROCm install ($ROCM_PATH, else /opt/rocm, else the newest /opt/rocm-X.Y.Z) and the amdgpu module;
    None when there is neither."""
    t0 = time.monotonic()
    candidates: list[tuple[str, str]] = []
    given = (env.get("ROCM_PATH") or "").strip()
    if given and _PRINTABLE_PATH.match(given):
        candidates.append((given.rstrip("/") or "/", "env:ROCM_PATH"))
    candidates.append((DEFAULT_ROCM, "rocm-path"))
    versioned = [p for p in fs.glob(DEFAULT_ROCM + "-*") if _PRINTABLE_PATH.match(p)]
    candidates += [(p, "rocm-path") for p in sorted(versioned, key=_version_key, reverse=True)]
    path = version = None
    source = "sysfs"
    for candidate, where in candidates:
        if fs.is_dir(candidate):
            path, source, version = candidate, where, _rocm_version(fs, candidate)
            break
    loaded = fs.is_dir(AMDGPU_MODULE)
    raw = (fs.read_text(AMDGPU_MODULE + "/version", limit=256) or "").strip()
    amdgpu_version = raw if _MODULE_VERSION.match(raw) else None
    if path is None and not loaded:
        _record(records, "rocm", "absent", "no ROCm folder, amdgpu module not loaded", t0)
        return None
    bits = [f"ROCm {version or 'of unknown version'} at {path}" if path else "no ROCm folder"]
    bits.append("amdgpu " + (f"{amdgpu_version} (DKMS)" if amdgpu_version else "loaded (in-tree)") if loaded
                else "amdgpu module not loaded")
    _record(records, "rocm", "ok", ", ".join(bits), t0)
    return RocmInfo(version=version, path=path, source=source, amdgpu_version=amdgpu_version)


def _render_number(path: str) -> int:
    m = re.search(r"renderD(\d+)$", path)
    return int(m.group(1)) if m else 1 << 30


def probe_devices(fs, with_kfd: bool, records: list) -> list[DeviceAccess]:
    """/dev/kfd (when `with_kfd`) and every /dev/dri/renderD* node, as this process may use them."""
    t0 = time.monotonic()
    found = [p for p in fs.glob(RENDER_NODES) if re.search(r"/renderD\d{1,5}$", p)]
    paths = ([KFD_DEVICE] if with_kfd else []) + sorted(found, key=_render_number)[:64]
    out = []
    for path in paths:
        exists = fs.exists(path)
        group = fs.group_name(path) if exists else None
        out.append(DeviceAccess(path=path, exists=exists, usable=exists and fs.can_open_rw(path),
                                group=group if group and _GROUP.match(group) else None))
    detail = ", ".join(f"{d.path} " + ("usable" if d.usable else "not usable" if d.exists else "missing")
                       for d in out)
    _record(records, "gpu-devices", "ok" if out else "absent", detail or "no /dev/kfd, no render node", t0)
    return out


def device_findings(devices: list[DeviceAccess], container: bool, gpus_seen: bool, rocm_installed: bool
                    ) -> list[Finding]:
    """rocm-device-access: a device ROCm needs exists but this user cannot open it (an error where ROCm is
    installed, else a warning: an AMD integrated GPU on a machine that computes elsewhere); rocm-container-devices:
    in a container that was not given /dev/kfd or any render node, where an AMD GPU or ROCm was seen."""
    kfd = next((d for d in devices if d.path == KFD_DEVICE), None)
    renders = [d for d in devices if d.path != KFD_DEVICE]
    missing = [p for p, absent in ((KFD_DEVICE, kfd is None or not kfd.exists),
                                   ("/dev/dri/renderD*", not any(d.exists for d in renders))) if absent]
    out = []
    if container and missing and gpus_seen:
        out.append(Finding("error", "rocm-container-devices",
                           f"this container has no {' and no '.join(missing)}: ROCm cannot reach any AMD GPU",
                           CONTAINER_FIX, "gpu-devices"))
    kfd_blocked = kfd is not None and kfd.exists and not kfd.usable
    renders_blocked = any(d.exists for d in renders) and not any(d.usable for d in renders)
    if kfd_blocked or renders_blocked:
        blocked = [d for d in devices if d.exists and not d.usable]
        listed = ", ".join(d.path + (f" (group {d.group})" if d.group else "") for d in blocked)
        out.append(Finding("error" if rocm_installed else "warning", "rocm-device-access",
                           f"this user cannot open {listed} read-write: ROCm programs find no GPU"
                           + (" (rocminfo: \"Unable to open /dev/kfd read-write: Permission denied\")"
                              if kfd_blocked else ""),
                           ROCM_GROUPS_FIX, "gpu-devices"))
    return out
