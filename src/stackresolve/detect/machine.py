"""`detect_machine()`: run the probes, most robust first, merge their facts, apply the overrides.

GPU / driver probes, in order (each fills only what the ones before it left unknown):
  1. /sys/module/nvidia/version, /proc/driver/nvidia/version   (read first: no process, native Linux only)
  2. child process: NVML via nvidia-ml-py (only if importable there), then the CUDA driver API via ctypes;
     run only when a driver library is visible (ld.so.cache, the usual directories, System32)
  3. nvidia-smi --query-gpu=index,pci.bus_id,name,compute_cap,driver_version,memory.total --format=csv,nounits
     (columns read by the header's names; again without compute_cap when the driver refuses it: R470)
  4. nvidia-smi --query -u -x   (only for the CUDA number, when still unknown)
  5. nvidia-smi -q              (when the XML failed, or GPU names are missing or cut short)
  6. bare nvidia-smi, the banner (last resort)
  7. the PCI bus (sysfs, `lspci -n`, Windows' Win32_VideoController): when no GPU was found (no driver) or a
     GPU's compute capability is still unknown; ids are named by the injected PCI table
Then every GPU whose compute capability no probe reported is looked up by name in the injected GPU table.

One budget (`timeout_total`, STACKRESOLVE_DETECT_TIMEOUT, default 5 s) covers every command detection runs:
the GPU probes get GPU_SHARE of it (all of it with gpu_only), the NVML/libcuda child CHILD_SHARE of that, and
the Python probe and nvcc what is left. A command that misses it is killed (with its whole process group) and
reported as timed out; one that would start with no time left is not started and reported the same way.
Precedence when probes disagree: driver version nvml > nvidia-smi > sysfs > proc > nvidia-smi-xml >
nvidia-smi-q > banner; CUDA number nvml > libcuda > nvidia-smi-xml > nvidia-smi-q > banner; GPU list nvml >
libcuda > nvidia-smi > nvidia-smi-q > banner > PCI.
"""

from __future__ import annotations

import os
import re
import time
from dataclasses import replace
from typing import Callable, Mapping

from stackresolve.model.numbers import NUMBER, quoted
from stackresolve.model.values import ComputeCapability, DriverVersion

from . import gpuchild, kernel, paths, smi
from .fs import LocalFS
from stackresolve.model.machine import DriverInfo, Finding, GpuInfo, Machine, ProbeRecord
from .osinfo import normalize_system, probe_os
from .runner import (BudgetedRunner, BudgetSpent, CommandNotFound, CommandOutputTooLarge,
                     CommandTimeout, Deadline, SubprocessRunner, budget_seconds)

# the environment variables a detect document keeps (TF_USE_LEGACY_KERAS: doctor's Keras 3 check)
ENV_KEYS = ("PATH", "LD_LIBRARY_PATH", "CUDA_HOME", "CUDA_PATH", "CUDNN_PATH", "CUDA_VISIBLE_DEVICES",
            "CUDA_DEVICE_ORDER", "CONDA_PREFIX", "CONDA_OVERRIDE_CUDA", "STACKRESOLVE_DRIVER", "STACKRESOLVE_GPU_CC",
            "STACKRESOLVE_DETECT_TIMEOUT", "TF_USE_LEGACY_KERAS", "ROCM_PATH", "HSA_OVERRIDE_GFX_VERSION",
            "HIP_VISIBLE_DEVICES", "ROCR_VISIBLE_DEVICES", "ZE_AFFINITY_MASK")

DRIVER_PRIORITY = ("nvml", "nvidia-smi", "sysfs", "proc", "nvidia-smi-xml", "nvidia-smi-q", "nvidia-smi-banner")
CUDA_PRIORITY = ("nvml", "libcuda", "nvidia-smi-xml", "nvidia-smi-q", "nvidia-smi-banner")
GPU_PRIORITY = ("nvml", "libcuda", "nvidia-smi", "nvidia-smi-q", "nvidia-smi-banner")

GPU_SHARE = 0.7  # of the budget for the GPU/driver probes when Python, TensorFlow and the toolkits follow
CHILD_SHARE = 0.6  # of the GPU probes' share for the NVML/libcuda child
GPU_TABLE = "gpus.toml"  # named in compute_capability_source when the injected GPU table gave the value

# GpuLookup: GPU name -> a record with `.name` and `.cc` (the knowledge base's Gpu), or None
GpuLookup = Callable[[str], object]
# PciTable: returns {PCI device id: pci.ids name}; called at most once, when an NVIDIA PCI device was found
PciTable = Callable[[], Mapping[int, str]]



class _Facts:
    """Facts collected so far, by source."""

    def __init__(self):
        self.driver: dict[str, str] = {}
        self.cuda: dict[str, str] = {}
        self.gpus: dict[str, list[dict]] = {}
        self.kernel_module: str | None = None
        self.smi_tool: str | None = None

    def first(self, table: dict, order) -> tuple[str | None, str | None]:
        for src in order:
            if table.get(src):
                return table[src], src
        return None, None

    def complete(self) -> bool:
        """Everything known: no need to spawn nvidia-smi."""
        if not self.first(self.driver, DRIVER_PRIORITY)[0] or not self.first(self.cuda, CUDA_PRIORITY)[0]:
            return False
        gpus = self.merged_gpus()
        return bool(gpus) and all(g["name"] and g["cc"] and g["memory_mib"] for g in gpus)

    def merged_gpus(self) -> list[dict]:
        primary_src = next((s for s in GPU_PRIORITY if self.gpus.get(s)), None)
        if primary_src is None:
            return []
        merged = []
        for g in self.gpus[primary_src]:
            m = {"index": g.get("index"), "name": g.get("name"), "cc": g.get("cc"),
                 "memory_mib": g.get("memory_mib"), "source": primary_src,
                 "cc_source": primary_src if g.get("cc") else None, "truncated": g.get("truncated", False),
                 "bus_id": g.get("bus_id")}
            for src in GPU_PRIORITY:
                if src == primary_src or not self.gpus.get(src):
                    continue
                other = next((o for o in self.gpus[src] if o.get("index") == m["index"]), None)
                if other is None or not _names_compatible(m["name"], other.get("name")):
                    continue
                if (not m["name"] or m["truncated"]) and other.get("name") and not other.get("truncated"):
                    m["name"], m["truncated"] = other["name"], False
                if not m["cc"] and other.get("cc"):
                    m["cc"], m["cc_source"] = other["cc"], src
                if not m["memory_mib"] and other.get("memory_mib"):
                    m["memory_mib"] = other["memory_mib"]
                if not m["bus_id"] and other.get("bus_id"):
                    m["bus_id"] = other["bus_id"]
            merged.append(m)
        return merged


def _names_compatible(a: str | None, b: str | None) -> bool:
    if not a or not b:
        return True
    x, y = a.rstrip(". ").lower(), b.rstrip(". ").lower()
    return x.startswith(y) or y.startswith(x)


def _record(records, name, status, detail, t0):
    records.append(ProbeRecord(name, status, detail, time.monotonic() - t0))


# --- probes ----------------------------------------------------------------------------------------------
def _probe_kernel_files(fs, facts: _Facts, records: list) -> None:
    t0 = time.monotonic()
    v = kernel.parse_sys_version(fs.read_text(kernel.SYS_VERSION, limit=256))
    if v:
        facts.driver["sysfs"] = v
    _record(records, "sysfs", "ok" if v else "absent", v or kernel.SYS_VERSION + " not readable", t0)
    t0 = time.monotonic()
    pv = kernel.parse_proc_version(fs.read_text(kernel.PROC_VERSION, limit=4096))
    if pv.version:
        facts.driver["proc"] = pv.version
        facts.kernel_module = pv.flavor
    _record(records, "proc", "ok" if pv.version else "absent",
            f"{pv.version} ({pv.flavor} kernel module)" if pv.version else kernel.PROC_VERSION + " not readable", t0)


def _probe_child(runner, timeout: float, facts: _Facts, records: list, findings: list) -> None:
    """`runner` is budgeted: it caps `timeout` at what is left and refuses to start with nothing left."""
    t0 = time.monotonic()
    stdout = ""
    try:
        rc, stdout, err = runner(gpuchild.child_argv(), timeout)
    except CommandTimeout as exc:
        stdout = exc.stdout or ""
        if isinstance(exc, BudgetSpent):
            message = "the NVML/CUDA driver probe was not started: the detection budget was spent"
        else:
            message = f"the NVML/CUDA driver probe timed out after {time.monotonic() - t0:.2f} s (driver hang?)"
        findings.append(Finding("warning", "probe-timeout", message,
                                "check `dmesg` for NVIDIA errors; set STACKRESOLVE_DRIVER / STACKRESOLVE_GPU_CC to "
                                "skip detection, or raise STACKRESOLVE_DETECT_TIMEOUT", "libcuda"))
        _record(records, "nvml+libcuda", "timeout", str(exc), t0)
    except CommandNotFound as exc:
        _record(records, "nvml+libcuda", "failed", str(exc), t0)
        return
    except Exception as exc:  # CommandOutputTooLarge, a runner's own bug: a failed probe, never a crash
        _record(records, "nvml+libcuda", "failed", str(exc) or repr(exc), t0)
        return
    else:
        if rc not in (0, None):
            _record(records, "nvml+libcuda", "failed", f"child exit {rc}: {(err or '').strip()[-200:]}", t0)
            findings.append(Finding("warning", "probe-crashed",
                                    f"the NVML/CUDA driver probe process ended with status {rc}"
                                    + (" after a partial answer" if stdout.strip() else ""),
                                    "a broken driver install can crash CUDA programs; reinstall the driver",
                                    "libcuda"))
            if not stdout.strip():
                return
    elapsed = time.monotonic() - t0
    docs = gpuchild.parse_child_output(stdout)
    nv = docs.get("nvml")
    if nv is not None:
        if nv.get("ok"):
            if smi.clean_version(nv.get("driver")):
                facts.driver["nvml"] = nv["driver"]
            cuda = gpuchild.cuda_string(nv.get("cuda"))
            if cuda:
                facts.cuda["nvml"] = cuda
            facts.gpus["nvml"] = [{"index": g.get("index"), "name": g.get("name"),
                                   "cc": gpuchild.cc_string(g.get("cc")), "memory_mib": g.get("memory_mib")}
                                  for g in nv.get("gpus", [])]
            detail = f"driver {nv.get('driver')}, CUDA {cuda}, {len(nv.get('gpus', []))} GPU(s)"
            records.append(ProbeRecord("nvml", "ok", detail, elapsed))
        else:
            records.append(ProbeRecord("nvml", "absent" if nv.get("absent") else "failed", nv.get("error", ""),
                                       elapsed))
    lc = docs.get("libcuda")
    if lc is not None:
        cuda = gpuchild.cuda_string(lc.get("cuda"))
        if cuda:
            facts.cuda["libcuda"] = cuda
        if lc.get("ok"):
            facts.gpus["libcuda"] = [{"index": g.get("index"), "name": g.get("name"),
                                      "cc": gpuchild.cc_string(g.get("cc")), "memory_mib": g.get("memory_mib")}
                                     for g in lc.get("gpus", [])]
            records.append(ProbeRecord("libcuda", "ok", f"CUDA {cuda}, {len(lc.get('gpus', []))} GPU(s)", elapsed))
        else:
            code = lc.get("cuinit")
            detail = lc.get("error", "")
            if code in gpuchild.CU_ERRORS:
                detail += " = " + gpuchild.CU_ERRORS[code]
            records.append(ProbeRecord("libcuda", "absent" if lc.get("absent") else "failed", detail, elapsed))
            if code == 34:
                findings.append(Finding("warning", "libcuda-stub",
                                        "the CUDA toolkit's stub libcuda.so was loaded instead of the driver's",
                                        "remove the toolkit's lib64/stubs directory from LD_LIBRARY_PATH", "libcuda"))
            elif code == 35:
                findings.append(Finding("error", "driver-too-old-for-libcuda",
                                        "libcuda reports CUDA_ERROR_INSUFFICIENT_DRIVER: the user-space driver "
                                        "library is newer than the kernel driver", "reinstall the driver, then reboot",
                                        "libcuda"))
            elif code not in (None, 100):
                findings.append(Finding("warning", "cuinit-failed", f"cuInit failed: {detail}",
                                        "check the driver install and device permissions (/dev/nvidia*)", "libcuda"))


class _Smi:
    """nvidia-smi calls sharing the deadline; after a hang or a fatal message, nvidia-smi is not asked again."""

    def __init__(self, exe: str, runner, deadline: Deadline, records: list, findings: list):
        self.exe = exe
        self.runner = runner
        self.deadline = deadline
        self.records = records
        self.findings = findings
        self.dead = False

    def run(self, name: str, argv: list[str]) -> tuple[int, str, str] | None:
        if self.dead:
            return None
        t0 = time.monotonic()
        try:
            # the budgeted runner caps this at what is left of the GPU probes' share
            rc, out, err = self.runner(argv, self.deadline.remaining())
        except CommandTimeout as exc:
            self.dead = True
            _record(self.records, name, "timeout", str(exc), t0)
            if isinstance(exc, BudgetSpent):
                message = f"{name} was not started: the detection budget was spent"
            else:
                message = f"nvidia-smi timed out after {time.monotonic() - t0:.2f} s (hung driver?)"
            self.findings.append(Finding(
                "warning", "probe-timeout", message,
                "check `dmesg` for NVIDIA errors; set STACKRESOLVE_DRIVER and STACKRESOLVE_GPU_CC to skip detection, "
                "or raise STACKRESOLVE_DETECT_TIMEOUT", name))
            return None
        except CommandNotFound as exc:
            self.dead = True
            _record(self.records, name, "absent", str(exc), t0)
            return None
        except CommandOutputTooLarge as exc:
            self.dead = True
            _record(self.records, name, "failed", str(exc), t0)
            self.findings.append(Finding("warning", "probe-failed", f"{name}: {exc}",
                                         "run nvidia-smi by hand to see what it prints", name))
            return None
        except Exception as exc:
            self.dead = True
            _record(self.records, name, "failed", repr(exc), t0)
            return None
        text = (out or "") + "\n" + (err or "")
        if smi.MISMATCH_TEXT in text:
            self.dead = True
            _record(self.records, name, "failed", "Driver/library version mismatch", t0)
            self.findings.append(Finding(
                "error", "driver-library-mismatch",
                "nvidia-smi: Failed to initialize NVML: Driver/library version mismatch (the loaded kernel module "
                "and the installed user-space driver differ)", "reboot, or reinstall one driver version", name))
            return None
        if smi.NO_DRIVER_TEXT in text:
            self.dead = True
            _record(self.records, name, "failed", "nvidia-smi cannot communicate with the NVIDIA driver", t0)
            self.findings.append(Finding(
                "warning", "driver-not-loaded",
                "nvidia-smi is installed but cannot communicate with the NVIDIA driver",
                "install the driver (or load the kernel module: a reboot after install, or Secure Boot signing)",
                name))
            return None
        if smi.NO_DEVICES_TEXT in text:
            self.dead = True
            _record(self.records, name, "ok", "No devices were found", t0)
            return None
        _record(self.records, name, "ok" if rc == 0 else "failed", f"exit {rc}", t0)
        return rc, out or "", err or ""


def _probe_smi(exe: str, runner, deadline: Deadline, facts: _Facts, records: list, findings: list) -> None:
    s = _Smi(exe, runner, deadline, records, findings)
    res = s.run("nvidia-smi", smi.csv_argv(exe))
    if res is not None:
        rc, out, err = res
        bad = smi.invalid_field(out + "\n" + err)
        fields = smi.CSV_FIELDS
        if bad:
            findings.append(Finding("info", "compute-cap-field-unsupported",
                                    f'this nvidia-smi refuses the "{bad}" query field (R470-era drivers): compute '
                                    "capability comes from another probe or the GPU table", "", "nvidia-smi"))
            fields = smi.CSV_FIELDS_NO_CC
            res = s.run("nvidia-smi (without compute_cap)", smi.csv_argv(exe, fields))
        if res is not None and res[0] == 0:
            rows = smi.parse_csv(res[1], fields)
            if rows:
                facts.gpus["nvidia-smi"] = [{"index": r.index, "name": r.name, "cc": r.compute_capability,
                                             "memory_mib": r.memory_mib, "bus_id": r.bus_id} for r in rows]
                drv = next((r.driver_version for r in rows if r.driver_version), None)
                if drv:
                    facts.driver["nvidia-smi"] = drv
                _not_a_version(next((r.driver_raw for r in rows if r.driver_raw), None), "nvidia-smi", findings)
    xml_ok = False
    if not facts.first(facts.cuda, CUDA_PRIORITY)[0]:
        res = s.run("nvidia-smi-xml", smi.xml_argv(exe))
        if res is not None:
            x = smi.parse_xml(res[1])
            xml_ok = bool(x.driver_version)  # a driver without a CUDA number (< R410) prints none anywhere
            if x.driver_version:
                facts.driver["nvidia-smi-xml"] = x.driver_version
            if x.cuda_version:
                facts.cuda["nvidia-smi-xml"] = x.cuda_version
    if _still_missing(facts, xml_ok):
        res = s.run("nvidia-smi-q", smi.query_argv(exe))
        if res is not None:
            q = smi.parse_query(res[1])
            if q.driver_version:
                facts.driver["nvidia-smi-q"] = q.driver_version
            if q.cuda_version:
                facts.cuda["nvidia-smi-q"] = q.cuda_version
            if q.gpus:
                facts.gpus["nvidia-smi-q"] = [{"index": g.index, "name": g.name, "cc": None,
                                               "memory_mib": g.memory_mib, "bus_id": g.bus_id} for g in q.gpus]
            xml_ok = xml_ok or bool(q.driver_version)
    if _still_missing(facts, xml_ok):
        res = s.run("nvidia-smi-banner", smi.banner_argv(exe))
        if res is not None:
            _apply_banner(smi.parse_banner(res[1]), facts, findings)


def _still_missing(facts: _Facts, header_read: bool) -> bool:
    """Something another nvidia-smi call could still tell: the driver; the CUDA number (unless a header that
    carries it when the driver has one was already read); the GPUs or their full names."""
    if not facts.first(facts.driver, DRIVER_PRIORITY)[0]:
        return True
    if not header_read and not facts.first(facts.cuda, CUDA_PRIORITY)[0]:
        return True
    gpus = facts.merged_gpus()
    return not gpus or any(not g["name"] or g["truncated"] for g in gpus)


def _not_a_version(raw: str | None, probe: str, findings: list) -> None:
    """A probe that prints something else where the driver version belongs is a finding, once per run."""
    if raw is None or any(f.code == "driver-version-unreadable" for f in findings):
        return
    findings.append(Finding("warning", "driver-version-unreadable",
                            f"{probe} printed the driver version as {quoted(raw)}, which is not a version: the "
                            "driver version is taken as unknown",
                            "check the NVIDIA driver install (nvidia-smi, dmesg); or set STACKRESOLVE_DRIVER",
                            probe))


def _apply_banner(b: smi.Banner, facts: _Facts, findings: list) -> None:
    if b.driver_version:
        facts.driver["nvidia-smi-banner"] = b.driver_version
    else:
        _not_a_version(smi.rejected(b.driver_raw), "nvidia-smi-banner", findings)
    if b.cuda_version:
        facts.cuda["nvidia-smi-banner"] = b.cuda_version
    elif b.cuda_raw and b.cuda_raw.upper().startswith("ERR"):
        findings.append(Finding("warning", "cuda-version-err",
                                f"nvidia-smi printed \"{b.cuda_label}: {b.cuda_raw}\": the driver could not report "
                                "the CUDA version it supports (seen on WSL2 with mismatched driver files)",
                                "update the Windows NVIDIA driver and run `wsl --update`; or set CONDA_OVERRIDE_CUDA",
                                "nvidia-smi-banner"))
    if b.tool_version:
        facts.smi_tool = b.tool_version
    if b.gpus:
        facts.gpus["nvidia-smi-banner"] = [{"index": g.index, "name": g.name, "cc": None,
                                            "memory_mib": g.memory_mib, "truncated": g.name_truncated,
                                            "bus_id": g.bus_id} for g in b.gpus]


def _find_nvidia_smi(fs, env, system: str) -> str | None:
    if system == "windows":
        sysroot = env.get("SystemRoot") or env.get("SYSTEMROOT") or env.get("WINDIR") or "C:\\Windows"
        pf = env.get("ProgramFiles") or env.get("PROGRAMFILES") or "C:\\Program Files"
        extra = [paths.join(system, sysroot, "System32"), paths.join(system, pf, "NVIDIA Corporation", "NVSMI")]
    elif system == "macos":
        return None
    else:
        extra = ["/usr/bin", "/usr/lib/wsl/lib"]
    return paths.which(fs, env, system, "nvidia-smi", extra)


# --- overrides -----------------------------------------------------------------------------------------------
def _apply_overrides(env, driver: DriverInfo | None, gpus: list[GpuInfo], findings: list):
    # The overrides are read by the parsers the flags use (model.values): one reading per fact, so a value
    # --driver or --gpu-cc refuses is refused here too.
    v = (env.get("STACKRESOLVE_DRIVER") or "").strip()
    if v:
        if _reads(DriverVersion.parse, v):
            if driver is None:
                driver = DriverInfo(version=v, cuda_max=None, source="env:STACKRESOLVE_DRIVER")
            else:
                driver = DriverInfo(version=v, cuda_max=driver.cuda_max, source="env:STACKRESOLVE_DRIVER",
                                    cuda_max_source=driver.cuda_max_source or driver.source,
                                    kernel_module=driver.kernel_module)
            findings.append(Finding("info", "override", f"driver version {v} from STACKRESOLVE_DRIVER", "",
                                    "env:STACKRESOLVE_DRIVER"))
        else:
            findings.append(Finding("error", "bad-override", f"STACKRESOLVE_DRIVER={quoted(v)} is not a driver version",
                                    DriverVersion.ACCEPTED, "env:STACKRESOLVE_DRIVER"))
    if "CONDA_OVERRIDE_CUDA" in env:
        v = (env.get("CONDA_OVERRIDE_CUDA") or "").strip()
        if v and re.fullmatch(rf"{NUMBER}(\.{NUMBER})?", v):
            v = v if "." in v else v + ".0"
            if driver is None:
                driver = DriverInfo(version=None, cuda_max=v, source="env:CONDA_OVERRIDE_CUDA",
                                    cuda_max_source="env:CONDA_OVERRIDE_CUDA")
            else:
                driver = DriverInfo(version=driver.version, cuda_max=v, source=driver.source,
                                    cuda_max_source="env:CONDA_OVERRIDE_CUDA", kernel_module=driver.kernel_module)
            findings.append(Finding("info", "override", f"highest CUDA version {v} from CONDA_OVERRIDE_CUDA", "",
                                    "env:CONDA_OVERRIDE_CUDA"))
        elif v:
            findings.append(Finding("error", "bad-override", f"CONDA_OVERRIDE_CUDA={v!r} is not a CUDA version",
                                    "use a version such as 12.2", "env:CONDA_OVERRIDE_CUDA"))
    v = (env.get("STACKRESOLVE_GPU_CC") or "").strip()
    if v:
        read = [_reads(ComputeCapability.parse, c) for c in v.split(",") if c.strip()]
        ccs = [str(c) for c in read if c is not None]
        if ccs and len(ccs) == len(read):
            src = "env:STACKRESOLVE_GPU_CC"
            if not gpus:
                gpus = [GpuInfo(index=i, name=None, compute_capability=c, memory_mib=None, source=src,
                                compute_capability_source=src) for i, c in enumerate(ccs)]
            else:
                if len(ccs) not in (1, len(gpus)):
                    findings.append(Finding(
                        "warning", "override-gpu-count",
                        f"STACKRESOLVE_GPU_CC gives {len(ccs)} values for {len(gpus)} detected GPUs: applied in "
                        "order, GPUs without a value keep the detected one", "give one value, or one per GPU", src))
                out = []
                for i, g in enumerate(gpus):
                    c = ccs[0] if len(ccs) == 1 else (ccs[i] if i < len(ccs) else None)
                    if c is None:
                        out.append(g)
                        continue
                    out.append(replace(g, compute_capability=c, compute_capability_source=src))
                gpus = out
            findings.append(Finding("info", "override", f"compute capability {', '.join(ccs)} from STACKRESOLVE_GPU_CC",
                                    "", src))
        else:
            findings.append(Finding("error", "bad-override",
                                    f"STACKRESOLVE_GPU_CC={quoted(v)} is not a compute capability (one per GPU, "
                                    f"separated by commas)", ComputeCapability.ACCEPTED, "env:STACKRESOLVE_GPU_CC"))
    return driver, gpus


def _reads(parse, text: str):
    """`parse(text)` (a value's one parser), or None where it refuses the text."""
    try:
        return parse(text)
    except ValueError:
        return None


# --- conda ---------------------------------------------------------------------------------------------------
def _conda_prefixes(fs, env, system: str, python_prefix: str | None) -> list[str]:
    cands: list[str] = []
    for key in ["CONDA_PREFIX"] + [f"CONDA_PREFIX_{i}" for i in range(1, 10)]:
        if env.get(key):
            cands.append(env[key])
    exe = env.get("CONDA_EXE")
    if exe:
        base = paths.dirname(system, paths.dirname(system, exe))
        cands.append(base)
        cands += fs.glob(paths.join(system, base, "envs", "*"))[:50]
    if python_prefix:
        cands.append(python_prefix)
    out, seen = [], set()
    for c in cands:
        key = paths.norm(system, c)
        if key in seen:
            continue
        seen.add(key)
        if fs.is_dir(paths.join(system, c, "conda-meta")):
            out.append(c)
    return out


# --- the PCI bus and the GPU table ------------------------------------------------------------------------
PCI_TIMEOUT = 3.0  # lspci or PowerShell (a cold PowerShell takes a second or two)


def _probe_pci(system: str, fs, run, records: list, findings: list):
    """(probe name, [PciGpu]) from sysfs, `lspci -n` or PowerShell; None when there is nothing to read."""
    # lazy: start-up (only this path needs detect.pci)
    from . import pci

    t0 = time.monotonic()
    if system == "linux":
        found = pci.scan_sysfs(fs)
        if found is not None:
            _record(records, "pci-sysfs", "ok", f"{len(found)} NVIDIA display device(s)", t0)
            return "pci-sysfs", found
        _record(records, "pci-sysfs", "absent", pci.SYSFS_DEVICES + " not readable", t0)
        if not fs.exists("/proc/bus/pci"):  # lspci reads one of the two: without either it has nothing to show
            return None
        name, argv, parse = "lspci", pci.lspci_argv(), pci.parse_lspci
    elif system == "windows":
        name, argv, parse = "win32-videocontroller", pci.powershell_argv(), pci.parse_windows_adapters
    else:
        return None
    t0 = time.monotonic()
    try:
        rc, out, err = run(argv, PCI_TIMEOUT)
    except CommandTimeout as exc:
        _record(records, name, "timeout", str(exc), t0)
        findings.append(Finding("warning", "probe-timeout", f"{name}: {exc}", "raise STACKRESOLVE_DETECT_TIMEOUT",
                                name))
        return None
    except CommandNotFound as exc:
        _record(records, name, "absent", str(exc), t0)
        return None
    except Exception as exc:  # CommandOutputTooLarge, a runner's bug
        _record(records, name, "failed", str(exc) or repr(exc), t0)
        return None
    found = parse(out)
    _record(records, name, "ok" if rc == 0 else "failed", f"exit {rc}, {len(found)} NVIDIA display device(s)", t0)
    return name, found


def _table_model(gpu_lookup, name: str | None):
    """(model name, cc) of a GPU name in the injected GPU table, or None."""
    if gpu_lookup is None or not name or name.endswith("..."):
        return None
    # lazy: start-up (only this path needs detect.pci)
    from .pci import _lookup

    return _lookup(gpu_lookup, name)


def _identify(gpus: list[GpuInfo], pci_found, pci_table, gpu_lookup, records: list
              ) -> tuple[list[GpuInfo], list[tuple[GpuInfo, str]]]:
    """Fill compute capabilities from the GPU table (by name, then by PCI id) and add the GPUs only the PCI bus
    shows. Returns the GPUs and, for those still without a compute capability, why (for the finding)."""
    # lazy: start-up (only this path needs detect.pci)
    from . import pci

    why: dict[int, str] = {}
    out = []
    for g in gpus:
        if g.compute_capability is None:
            hit = _table_model(gpu_lookup, g.name)
            if hit is not None:
                g = replace(g, compute_capability=hit[1], compute_capability_source=f"{g.source} + {GPU_TABLE}",
                            model=hit[0])
        out.append(g)
    if pci_found is None:
        return out, [(g, why.get(i, "")) for i, g in enumerate(out) if g.compute_capability is None]
    probe, found = pci_found
    table = None
    if found and pci_table is not None:
        t0 = time.monotonic()
        try:
            table = pci_table()
        except Exception as exc:  # a broken data file: the GPUs stay unnamed, detection goes on
            _record(records, "pci table", "failed", str(exc) or repr(exc), t0)
    models = pci.resolve(found, table, gpu_lookup)
    if not out:  # no driver answered: the PCI bus is all there is
        for i, (p, m) in enumerate(zip(found, models)):
            out.append(GpuInfo(index=i, name=m.name, compute_capability=m.cc, memory_mib=None, source=probe,
                               compute_capability_source=f"{probe} + {GPU_TABLE}" if m.cc else None,
                               model=m.model, pci_id=p.pci_id, bus_id=p.bus_id))
            if m.note:
                why[i] = m.note
    else:
        by_bus = {smi.parse_bus_id(p.bus_id): (p, m) for p, m in zip(found, models) if p.bus_id}
        for i, g in enumerate(out):
            bus = smi.parse_bus_id(g.bus_id)
            if bus is None or bus not in by_bus:
                continue
            p, m = by_bus[bus]
            g = replace(g, pci_id=p.pci_id, name=g.name or m.name)
            if g.compute_capability is None:
                if m.cc:
                    g = replace(g, compute_capability=m.cc, compute_capability_source=f"{probe} + {GPU_TABLE}",
                                model=m.model)
                elif m.note:
                    why[i] = m.note
            out[i] = g
    return out, [(g, why.get(i, "")) for i, g in enumerate(out) if g.compute_capability is None]


def _probe_amd_intel(fs, env, os_info, run, records: list, findings: list, vendor_gpu_name) -> dict:
    """AMD GPUs, ROCm and the device nodes (detect/amd.py); Intel GPUs and Level Zero (detect/intel.py): the
    Machine fields they fill. Native Linux only (WSL2 has neither KFD nor the Intel PCI functions)."""
    if os_info.system != "linux" or os_info.wsl:
        return {}
    # lazy: start-up (only this path needs detect.amd, detect.intel)
    from . import amd, intel

    out: dict = {}
    try:
        rocm = amd.probe_rocm(fs, env, records)
        amd_gpus = amd.probe_gpus(fs, env, os_info.system, run, rocm, records, findings, vendor_gpu_name)
        intel_gpus, level_zero = intel.probe(fs, env, records, findings, vendor_gpu_name)
        # the devices matter where ROCm could run: an AMD GPU, a ROCm install or /dev/kfd; render nodes also
        # for an Intel GPU (Level Zero opens them too)
        rocm_signal = bool(amd_gpus) or rocm is not None or fs.exists(amd.KFD_DEVICE)
        devices = amd.probe_devices(fs, rocm_signal, records) if rocm_signal or intel_gpus else []
        if rocm_signal:
            installed = rocm is not None and rocm.path is not None
            findings.extend(amd.device_findings(devices, os_info.container, bool(amd_gpus) or installed, installed))
        out = {"amd_gpus": tuple(amd_gpus), "intel_gpus": tuple(intel_gpus), "rocm": rocm,
               "gpu_devices": tuple(devices), "level_zero": level_zero}
    except Exception as exc:  # a bug in a probe must not take detect down
        _record(records, "amd-intel-probes", "failed", repr(exc), time.monotonic())
    return out


# --- the public entry point ----------------------------------------------------------------------------------
def detect_machine(*, runner=None, fs=None, env: Mapping[str, str] | None = None, python_exe: str | None = None,
                   timeout_total: float | None = None, system: str | None = None, gpu_only: bool = False,
                   gpu_lookup: GpuLookup | None = None, pci_table: PciTable | None = None,
                   deadline: Deadline | None = None, vendor_gpu_name=None) -> Machine:
    """Probe this machine (or the fake one that `runner`, `fs`, `env` describe). Never raises for a probe failure:
    each failure is a ProbeRecord and, where it matters, a Finding.

    runner: callable(argv, timeout) -> (returncode, stdout, stderr); raises CommandNotFound / CommandTimeout.
    fs: LocalFS-like file reader (default: the real root).
    env: environment mapping (default: os.environ).
    python_exe: interpreter whose TensorFlow to inspect (default: the one running stackresolve, in-process).
    timeout_total: seconds for all of detection's commands together (default: STACKRESOLVE_DETECT_TIMEOUT, else
        5); detection returns within about that, whatever hangs.
    system: "linux" | "windows" | "macos" to probe as (default: this host's).
    gpu_only: probe the OS, GPUs and driver only (what planning needs), not Python, TensorFlow, toolkits, cuDNN.
    gpu_lookup: name -> GPU table record (`.name`, `.cc`) or None; gives the compute capability of GPUs whose
        probe could not report it (banner, R470, Jetson, PCI). Without it they stay "unknown".
    pci_table: () -> {PCI device id: pci.ids name}; names GPUs found on the PCI bus (no driver installed).
    deadline: a Deadline to share with what the caller runs next (doctor's library loads); overrides
        timeout_total.
    vendor_gpu_name: PCI id ("1002:74a1", "8086:56a0") -> model name of an AMD or Intel GPU, or None.
    """
    # lazy: start-up (only this path needs detect.pyenv, detect.toolkit)
    from . import pyenv, toolkit

    fs = fs if fs is not None else LocalFS()
    env = dict(os.environ if env is None else env)
    system = normalize_system(system) if system else None
    records: list[ProbeRecord] = []
    findings: list[Finding] = []
    total, problem = budget_seconds(env, timeout_total)
    if deadline is None:
        deadline = Deadline(total)
    else:
        total = deadline.remaining()
    if problem:
        findings.append(Finding("error", "bad-override", problem, "give the detection budget in seconds, e.g. 10",
                                "env:STACKRESOLVE_DETECT_TIMEOUT"))
    base = runner if runner is not None else SubprocessRunner()
    run = BudgetedRunner(base, deadline)

    t0 = time.monotonic()
    try:
        os_info = probe_os(fs, env, system)
        _record(records, "os", "ok", f"{os_info.system} {os_info.distro or ''} {os_info.release or ''}".strip(), t0)
    except Exception as exc:  # pragma: no cover - defensive
        # lazy: no start-up gain (already loaded by then); kept beside its use
        from stackresolve.model.machine import OSInfo

        os_info = OSInfo(system=system or "unknown", source="failed")
        _record(records, "os", "failed", repr(exc), t0)
    system = os_info.system

    # --- GPUs and driver, within their share of the budget ---
    gpu_deadline = deadline if gpu_only else deadline.share(GPU_SHARE * total)
    facts = _Facts()
    lib = exe = None
    try:
        if system == "linux" and not os_info.wsl:
            _probe_kernel_files(fs, facts, records)
        lib = gpuchild.driver_libs_visible(fs, env, system)
        if lib:
            child_deadline = gpu_deadline.share(CHILD_SHARE * gpu_deadline.total)
            _probe_child(BudgetedRunner(base, child_deadline), child_deadline.total, facts, records, findings)
        else:
            _record(records, "nvml+libcuda", "absent", "no NVIDIA driver library visible", time.monotonic())
        if not facts.complete():
            exe = _find_nvidia_smi(fs, env, system)
            if exe:
                _probe_smi(exe, BudgetedRunner(base, gpu_deadline), gpu_deadline, facts, records, findings)
            else:
                _record(records, "nvidia-smi", "absent", "not on PATH", time.monotonic())
    except Exception as exc:  # a bug in a probe must not take detect down
        _record(records, "gpu-probes", "failed", repr(exc), time.monotonic())

    drv_v, drv_src = facts.first(facts.driver, DRIVER_PRIORITY)
    cuda_v, cuda_src = facts.first(facts.cuda, CUDA_PRIORITY)
    driver = None
    if drv_v or cuda_v:
        driver = DriverInfo(version=drv_v, cuda_max=cuda_v, source=drv_src or cuda_src, cuda_max_source=cuda_src,
                            kernel_module=facts.kernel_module)
    merged = facts.merged_gpus()
    gpus = [GpuInfo(index=g["index"] if g["index"] is not None else i, name=g["name"], compute_capability=g["cc"],
                    memory_mib=g["memory_mib"], source=g["source"], compute_capability_source=g["cc_source"],
                    bus_id=g.get("bus_id"))
            for i, g in enumerate(merged)]
    unknown: list[tuple[GpuInfo, str]] = []
    try:
        gpus, unknown = _identify(gpus, None, None, gpu_lookup, records)
        # the PCI bus: a GPU no driver answers for, or one whose compute capability is still unknown (Windows'
        # PowerShell costs a second or two, so only when no GPU was found at all)
        if not os_info.wsl and (not gpus or (unknown and system == "linux")):
            pci_found = _probe_pci(system, fs, run, records, findings)
            if pci_found is not None:
                gpus, unknown = _identify(gpus, pci_found, pci_table, gpu_lookup, records)
                if pci_found[1] and not merged and not (lib or exe or facts.driver or facts.cuda):
                    listed = ", ".join(f"{g.name or 'NVIDIA GPU'} ({g.pci_id})" for g in gpus)
                    findings.append(Finding(
                        "warning", "nvidia-driver-missing",
                        f"NVIDIA GPU on the PCI bus but no NVIDIA driver installed (no nvidia-smi, no driver "
                        f"library): {listed}",
                        "install the NVIDIA driver; `stackresolve plan --with-driver` names a driver branch for this "
                        "GPU", pci_found[0]))
    except Exception as exc:  # a bug here must not take detect down
        _record(records, "gpu-identification", "failed", repr(exc), time.monotonic())

    # consistency findings
    kern = facts.driver.get("sysfs") or facts.driver.get("proc")
    user = facts.driver.get("nvml") or facts.driver.get("nvidia-smi")
    if kern and user and kern != user:
        findings.append(Finding("error", "driver-library-mismatch",
                                f"the loaded kernel module is {kern} but the user-space driver is {user}",
                                "reboot so the new kernel module loads (or reinstall one driver version)",
                                "sysfs/proc vs nvml/nvidia-smi"))
    if facts.smi_tool and drv_v and facts.smi_tool != drv_v:
        findings.append(Finding("info", "nvidia-smi-version-differs",
                                f"nvidia-smi is version {facts.smi_tool} but the driver is {drv_v}"
                                + (" (normal on WSL2: the driver is the Windows one)" if os_info.wsl else
                                   " (a stale nvidia-smi from a snap or container image?)"),
                                "", "nvidia-smi-banner"))
    if os_info.wsl and drv_v:
        findings.append(Finding("info", "wsl-windows-driver",
                                f"WSL2: driver {drv_v} is the Windows host driver; compare it with the Windows "
                                "minimum driver versions", "", drv_src or ""))
    cvd = env.get("CUDA_VISIBLE_DEVICES")
    if cvd is not None and cvd.strip() in ("", "-1", "NoDevFiles", "none", "void"):
        findings.append(Finding("warning", "cuda-visible-devices-hides-gpus",
                                f"CUDA_VISIBLE_DEVICES={cvd!r} hides every GPU from CUDA programs (TensorFlow included)",
                                "unset CUDA_VISIBLE_DEVICES or set it to the GPU indices to use", "env:CUDA_VISIBLE_DEVICES"))

    driver, gpus = _apply_overrides(env, driver, gpus, findings)
    notes = {g.index: note for g, note in unknown}
    for g in gpus:
        if g.compute_capability is None:
            if notes.get(g.index):
                why = notes[g.index]
            elif gpu_lookup is None:
                why = f"{g.source} cannot; look it up by name"
            elif g.name and g.name.endswith("..."):
                why = f"{g.source} printed a shortened name"
            else:
                why = f"{g.source} cannot, and the GPU table has no model of that name"
            findings.append(Finding(
                "info", "compute-capability-unknown",
                f"GPU {g.index} ({g.name or 'unnamed'}): no probe reported its compute capability ({why})",
                "or set STACKRESOLVE_GPU_CC=X.Y", g.source))
    nvidia_probes = ", ".join(r.name for r in records if r.name not in ("os", "sysfs", "proc"))
    vendor = _probe_amd_intel(fs, env, os_info, run, records, findings, vendor_gpu_name)
    if not gpus and not (vendor.get("amd_gpus") or any(g.name for g in vendor.get("intel_gpus", ()))):
        # an AMD GPU, or an Intel GPU the XPU table knows, is this machine's GPU: no hint to name an NVIDIA one (an
        # unknown Intel id is an integrated display GPU: the hint stays)
        findings.append(Finding("info", "no-nvidia-gpu", "no NVIDIA GPU found",
                                "pass --gpu / STACKRESOLVE_GPU_CC to plan for a GPU this machine cannot see",
                                nvidia_probes))

    env_view = {k: env[k] for k in ENV_KEYS if k in env}
    for k in sorted(env):
        if k.upper().startswith("CUDA_PATH_V"):
            env_view[k] = env[k]
    if gpu_only:
        return Machine(os=os_info, driver=driver, gpus=tuple(gpus), env=env_view, findings=tuple(findings),
                       probes=tuple(records), **vendor)

    # --- Python, TensorFlow, toolkits, cuDNN ---
    doc = None
    try:
        doc = pyenv.run_python_probe(python_exe, run, records, findings)
    except Exception as exc:  # pragma: no cover - defensive
        _record(records, "python", "failed", repr(exc), time.monotonic())
    py, fws = None, []
    try:
        py = pyenv.python_info(doc, python_exe)
        fws = pyenv.frameworks(doc, findings)
    except Exception as exc:  # pragma: no cover - defensive: the document is cleaned, this is a last guard
        _record(records, "python", "failed", repr(exc), time.monotonic())
    pip_dists = (doc or {}).get("dists", [])
    toolkits, cudnn = [], []
    try:
        prefixes = _conda_prefixes(fs, env, system, (doc or {}).get("prefix"))
        toolkits = toolkit.probe_toolkits(fs, env, system, run, prefixes, pip_dists, records, findings)
        cudnn = toolkit.probe_cudnn(fs, env, system, toolkits, prefixes, pip_dists, records)
    except Exception as exc:  # pragma: no cover - defensive
        _record(records, "toolkits", "failed", repr(exc), time.monotonic())

    return Machine(os=os_info, driver=driver, gpus=tuple(gpus), cuda_toolkits=tuple(toolkits), cudnn=tuple(cudnn),
                   python=py, frameworks=tuple(fws), env=env_view, findings=tuple(findings), probes=tuple(records),
                   **vendor)
