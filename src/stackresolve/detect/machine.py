"""`detect_machine()`: run the probes, most robust first, merge their facts, apply the overrides.

GPU / driver probes, in order (each fills only what the ones before it left unknown):
  1. /sys/module/nvidia/version, /proc/driver/nvidia/version   (read first: no process, native Linux only)
  2. child process: NVML via nvidia-ml-py (only if importable there), then the CUDA driver API via ctypes;
     run only when a driver library is visible (ld.so.cache, the usual directories, System32)
  3. nvidia-smi --query-gpu=index,name,compute_cap,driver_version,memory.total --format=csv,noheader,nounits
     (again without compute_cap when the driver refuses it: R470)
  4. nvidia-smi --query -u -x   (only for the CUDA number, when still unknown)
  5. bare nvidia-smi, the banner (last resort)
Steps 2-5 share one budget of `timeout_total` seconds; a hung nvidia-smi is killed and not asked again.
Precedence when probes disagree: driver version nvml > nvidia-smi > sysfs > proc > nvidia-smi-xml > banner;
CUDA number nvml > libcuda > nvidia-smi-xml > banner; GPU list nvml > libcuda > nvidia-smi > banner.
"""

from __future__ import annotations

import os
import re
import time
from typing import Mapping

from . import gpuchild, kernel, paths, smi
from .fs import LocalFS
from .model import DriverInfo, Finding, GpuInfo, Machine, ProbeRecord
from .osinfo import normalize_system, probe_os
from .runner import CommandNotFound, CommandTimeout, Deadline, SubprocessRunner

ENV_KEYS = ("PATH", "LD_LIBRARY_PATH", "CUDA_HOME", "CUDA_PATH", "CUDNN_PATH", "CUDA_VISIBLE_DEVICES",
            "CUDA_DEVICE_ORDER", "CONDA_PREFIX", "CONDA_OVERRIDE_CUDA", "STACKRESOLVE_DRIVER", "STACKRESOLVE_GPU_CC")

DRIVER_PRIORITY = ("nvml", "nvidia-smi", "sysfs", "proc", "nvidia-smi-xml", "nvidia-smi-banner")
CUDA_PRIORITY = ("nvml", "libcuda", "nvidia-smi-xml", "nvidia-smi-banner")
GPU_PRIORITY = ("nvml", "libcuda", "nvidia-smi", "nvidia-smi-banner")

CHILD_SHARE = 0.6  # at most this share of the budget goes to the NVML/libcuda child
MIN_CALL = 0.05  # never start a command with less than this left

_VERSION_RE = re.compile(r"^\d+(?:\.\d+)+$")
_CC_RE = re.compile(r"^\d+\.\d+$")


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
                 "cc_source": primary_src if g.get("cc") else None, "truncated": g.get("truncated", False)}
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


def _probe_child(runner, deadline: Deadline, total: float, facts: _Facts, records: list, findings: list) -> None:
    t0 = time.monotonic()
    timeout = min(deadline.remaining(), max(CHILD_SHARE * total, MIN_CALL))
    if timeout < MIN_CALL:
        _record(records, "nvml+libcuda", "skipped", "no time left in the budget", t0)
        return
    stdout = ""
    try:
        rc, stdout, err = runner(gpuchild.child_argv(), timeout)
    except CommandTimeout as exc:
        stdout = exc.stdout or ""
        findings.append(Finding("warning", "probe-timeout",
                                f"NVML/CUDA driver probe gave no answer within {timeout:.2f} s (driver hang?)",
                                "check `dmesg` for NVIDIA errors; set STACKRESOLVE_DRIVER / STACKRESOLVE_GPU_CC to "
                                "skip detection", "libcuda"))
        _record(records, "nvml+libcuda", "timeout", str(exc), t0)
    except CommandNotFound as exc:
        _record(records, "nvml+libcuda", "failed", str(exc), t0)
        return
    except Exception as exc:
        _record(records, "nvml+libcuda", "failed", repr(exc), t0)
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
        timeout = self.deadline.remaining()
        if timeout < MIN_CALL:
            _record(self.records, name, "skipped", "no time left in the budget", t0)
            return None
        try:
            rc, out, err = self.runner(argv, timeout)
        except CommandTimeout as exc:
            self.dead = True
            _record(self.records, name, "timeout", str(exc), t0)
            self.findings.append(Finding(
                "warning", "probe-timeout", f"nvidia-smi gave no answer within {timeout:.2f} s (hung driver?)",
                "check `dmesg` for NVIDIA errors; set STACKRESOLVE_DRIVER and STACKRESOLVE_GPU_CC to skip detection",
                name))
            return None
        except CommandNotFound as exc:
            self.dead = True
            _record(self.records, name, "absent", str(exc), t0)
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
                                             "memory_mib": r.memory_mib} for r in rows]
                drv = next((r.driver_version for r in rows if r.driver_version), None)
                if drv:
                    facts.driver["nvidia-smi"] = drv
    if not facts.first(facts.cuda, CUDA_PRIORITY)[0]:
        res = s.run("nvidia-smi-xml", smi.xml_argv(exe))
        if res is not None:
            x = smi.parse_xml(res[1])
            if x.driver_version:
                facts.driver["nvidia-smi-xml"] = x.driver_version
            if x.cuda_version:
                facts.cuda["nvidia-smi-xml"] = x.cuda_version
    need_banner = (not facts.first(facts.driver, DRIVER_PRIORITY)[0] or not facts.first(facts.cuda, CUDA_PRIORITY)[0]
                   or not facts.merged_gpus())
    if need_banner:
        res = s.run("nvidia-smi-banner", smi.banner_argv(exe))
        if res is not None:
            _apply_banner(smi.parse_banner(res[1]), facts, findings)


def _apply_banner(b: smi.Banner, facts: _Facts, findings: list) -> None:
    if b.driver_version:
        facts.driver["nvidia-smi-banner"] = b.driver_version
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
                                            "memory_mib": g.memory_mib, "truncated": g.name_truncated}
                                           for g in b.gpus]


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
    v = (env.get("STACKRESOLVE_DRIVER") or "").strip()
    if v:
        if _VERSION_RE.match(v):
            if driver is None:
                driver = DriverInfo(version=v, cuda_max=None, source="env:STACKRESOLVE_DRIVER")
            else:
                driver = DriverInfo(version=v, cuda_max=driver.cuda_max, source="env:STACKRESOLVE_DRIVER",
                                    cuda_max_source=driver.cuda_max_source or driver.source,
                                    kernel_module=driver.kernel_module)
            findings.append(Finding("info", "override", f"driver version {v} from STACKRESOLVE_DRIVER", "",
                                    "env:STACKRESOLVE_DRIVER"))
        else:
            findings.append(Finding("error", "bad-override", f"STACKRESOLVE_DRIVER={v!r} is not a driver version",
                                    "use a version such as 535.104.05 or 572.60", "env:STACKRESOLVE_DRIVER"))
    if "CONDA_OVERRIDE_CUDA" in env:
        v = (env.get("CONDA_OVERRIDE_CUDA") or "").strip()
        if v and re.match(r"^\d+(\.\d+)?$", v):
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
        ccs = [c.strip() for c in v.split(",") if c.strip()]
        if ccs and all(_CC_RE.match(c) for c in ccs):
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
                    out.append(GpuInfo(index=g.index, name=g.name, compute_capability=c, memory_mib=g.memory_mib,
                                       source=g.source, compute_capability_source=src))
                gpus = out
            findings.append(Finding("info", "override", f"compute capability {', '.join(ccs)} from STACKRESOLVE_GPU_CC",
                                    "", src))
        else:
            findings.append(Finding("error", "bad-override",
                                    f"STACKRESOLVE_GPU_CC={v!r} is not a compute capability (X.Y, or X.Y,X.Y per GPU)",
                                    "use e.g. 8.6", "env:STACKRESOLVE_GPU_CC"))
    return driver, gpus


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


# --- the public entry point ----------------------------------------------------------------------------------
def detect_machine(*, runner=None, fs=None, env: Mapping[str, str] | None = None, python_exe: str | None = None,
                   timeout_total: float = 5.0, system: str | None = None, gpu_only: bool = False) -> Machine:
    """Probe this machine (or the fake one that `runner`, `fs`, `env` describe). Never raises for a probe failure:
    each failure is a ProbeRecord and, where it matters, a Finding.

    runner: callable(argv, timeout) -> (returncode, stdout, stderr); raises CommandNotFound / CommandTimeout.
    fs: LocalFS-like file reader (default: the real root).
    env: environment mapping (default: os.environ).
    python_exe: interpreter whose TensorFlow to inspect (default: the one running stackresolve, in-process).
    timeout_total: seconds for the whole GPU/driver detection (NVML/libcuda child + every nvidia-smi call).
    system: "linux" | "windows" | "macos" to probe as (default: this host's).
    gpu_only: probe the OS, GPUs and driver only (what planning needs), not Python, TensorFlow, toolkits, cuDNN.
    """
    from . import pyenv, toolkit

    runner = runner if runner is not None else SubprocessRunner()
    fs = fs if fs is not None else LocalFS()
    env = dict(os.environ if env is None else env)
    system = normalize_system(system) if system else None
    records: list[ProbeRecord] = []
    findings: list[Finding] = []

    t0 = time.monotonic()
    try:
        os_info = probe_os(fs, env, system)
        _record(records, "os", "ok", f"{os_info.system} {os_info.distro or ''} {os_info.release or ''}".strip(), t0)
    except Exception as exc:  # pragma: no cover - defensive
        from .model import OSInfo

        os_info = OSInfo(system=system or "unknown", source="failed")
        _record(records, "os", "failed", repr(exc), t0)
    system = os_info.system

    # --- GPUs and driver, within the budget ---
    deadline = Deadline(timeout_total)
    facts = _Facts()
    try:
        if system == "linux" and not os_info.wsl:
            _probe_kernel_files(fs, facts, records)
        lib = gpuchild.driver_libs_visible(fs, env, system)
        if lib:
            _probe_child(runner, deadline, timeout_total, facts, records, findings)
        else:
            _record(records, "nvml+libcuda", "absent", "no NVIDIA driver library visible", time.monotonic())
        if not facts.complete():
            exe = _find_nvidia_smi(fs, env, system)
            if exe:
                _probe_smi(exe, runner, deadline, facts, records, findings)
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
    gpus = [GpuInfo(index=g["index"] if g["index"] is not None else i, name=g["name"], compute_capability=g["cc"],
                    memory_mib=g["memory_mib"], source=g["source"], compute_capability_source=g["cc_source"])
            for i, g in enumerate(facts.merged_gpus())]

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
    for g in gpus:
        if g.compute_capability is None:
            findings.append(Finding(
                "info", "compute-capability-unknown",
                f"GPU {g.index} ({g.name or 'unnamed'}): no probe reported its compute capability "
                f"({g.source} cannot); look it up by name", "or set STACKRESOLVE_GPU_CC=X.Y", g.source))
    if not gpus:
        findings.append(Finding("info", "no-nvidia-gpu", "no NVIDIA GPU found",
                                "pass --gpu / STACKRESOLVE_GPU_CC to plan for a GPU this machine cannot see",
                                "nvml, libcuda, nvidia-smi, proc"))

    env_view = {k: env[k] for k in ENV_KEYS if k in env}
    for k in sorted(env):
        if k.upper().startswith("CUDA_PATH_V"):
            env_view[k] = env[k]
    if gpu_only:
        return Machine(os=os_info, driver=driver, gpus=tuple(gpus), env=env_view, findings=tuple(findings),
                       probes=tuple(records))

    # --- Python, TensorFlow, toolkits, cuDNN ---
    doc = None
    try:
        doc = pyenv.run_python_probe(python_exe, runner, records, findings)
    except Exception as exc:  # pragma: no cover - defensive
        _record(records, "python", "failed", repr(exc), time.monotonic())
    py = pyenv.python_info(doc, python_exe)
    fws = pyenv.frameworks(doc, findings)
    pip_dists = (doc or {}).get("dists", [])
    toolkits, cudnn = [], []
    try:
        prefixes = _conda_prefixes(fs, env, system, (doc or {}).get("prefix"))
        toolkits = toolkit.probe_toolkits(fs, env, system, runner, prefixes, pip_dists, records, findings)
        cudnn = toolkit.probe_cudnn(fs, env, system, toolkits, prefixes, pip_dists, records)
    except Exception as exc:  # pragma: no cover - defensive
        _record(records, "toolkits", "failed", repr(exc), time.monotonic())

    return Machine(os=os_info, driver=driver, gpus=tuple(gpus), cuda_toolkits=tuple(toolkits), cudnn=tuple(cudnn),
                   python=py, frameworks=tuple(fws), env=env_view, findings=tuple(findings), probes=tuple(records))
