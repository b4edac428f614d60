"""The target Python interpreter and the TensorFlow installed in it (through the stdlib-only `_pyprobe`)."""

from __future__ import annotations

import json
import os
import sys
import time

from .model import Finding, FrameworkInfo, PackageInfo, ProbeRecord, PythonInfo
from .runner import CommandNotFound, CommandTimeout

PYTHON_PROBE_TIMEOUT = 15.0
MARKER = "stackresolve-python-probe"


def probe_script() -> str:
    here = os.path.join(os.path.dirname(os.path.abspath(__file__)), "_pyprobe.py")
    with open(here, encoding="utf-8") as fh:
        return fh.read()


def python_argv(python_exe: str) -> list[str]:
    return [python_exe, "-c", probe_script(), MARKER]


def _same_interpreter(python_exe: str | None) -> bool:
    if not python_exe:
        return True
    try:
        return os.path.realpath(python_exe) == os.path.realpath(sys.executable) and \
            os.path.abspath(python_exe) == os.path.abspath(sys.executable)
    except OSError:
        return False


def run_python_probe(python_exe: str | None, runner, records: list, findings: list) -> dict | None:
    """The probe's JSON document, or None (with a finding) when it could not be had."""
    t0 = time.monotonic()
    if _same_interpreter(python_exe):
        from . import _pyprobe

        try:
            doc = _pyprobe.probe()
        except Exception as exc:  # pragma: no cover - defensive
            records.append(ProbeRecord("python (in-process)", "failed", repr(exc), time.monotonic() - t0))
            return None
        doc["_source"] = "in-process"
        records.append(ProbeRecord("python (in-process)", "ok", doc.get("python") or "", time.monotonic() - t0))
        return doc
    name = f"python ({python_exe})"
    try:
        rc, out, err = runner(python_argv(python_exe), PYTHON_PROBE_TIMEOUT)
    except CommandNotFound as exc:
        records.append(ProbeRecord(name, "failed", str(exc), time.monotonic() - t0))
        findings.append(Finding("error", "python-not-found", f"cannot run {python_exe}: {exc}",
                                "pass the path of an existing interpreter to --python-exe", "python-probe"))
        return None
    except CommandTimeout as exc:
        records.append(ProbeRecord(name, "timeout", str(exc), time.monotonic() - t0))
        findings.append(Finding("warning", "probe-timeout", f"the Python probe in {python_exe}: {exc}",
                                "raise STACKRESOLVE_DETECT_TIMEOUT if that interpreter is just slow to start",
                                "python-probe"))
        return None
    except Exception as exc:  # CommandOutputTooLarge, a runner's bug: a failed probe, never a crash
        records.append(ProbeRecord(name, "failed", str(exc) or repr(exc), time.monotonic() - t0))
        return None
    doc = None
    for line in out.splitlines():
        line = line.strip()
        if line.startswith("{"):
            try:
                cand = json.loads(line)
            except ValueError:
                continue
            if isinstance(cand, dict) and cand.get("probe") == "stackresolve-python":
                doc = cand
    if doc is None:
        tail = (err or out).strip().splitlines()[-1:] or [""]
        records.append(ProbeRecord(name, "failed", f"exit {rc}: {tail[0][:200]}", time.monotonic() - t0))
        findings.append(Finding("warning", "python-probe-failed",
                                f"the Python probe did not run in {python_exe} (exit {rc}): {tail[0][:200]}",
                                "check that the path is a Python 2.7 or 3.5+ interpreter", "python-probe"))
        return None
    doc = clean_probe_doc(doc)
    doc["_source"] = "probe"
    records.append(ProbeRecord(name, "ok", doc.get("python") or "", time.monotonic() - t0))
    return doc


def _text(value) -> str | None:
    return value if isinstance(value, str) and value.isprintable() else None


def clean_probe_doc(doc: dict) -> dict:
    """The probe document with every field of the type the probe writes (another interpreter printed it: a broken
    or foreign one may print anything after the marker); fields of another type are dropped."""
    def entries(items, keys):
        out = []
        for item in items if isinstance(items, list) else ():
            if not isinstance(item, dict) or not _text(item.get("name")):
                continue
            entry = {k: _text(item.get(k)) for k in keys}
            bi = item.get("build_info")
            if isinstance(bi, dict):
                entry["build_info"] = {"cuda_version": _text(bi.get("cuda_version")),
                                       "cudnn_version": _text(bi.get("cudnn_version")),
                                       "is_cuda_build": bi.get("is_cuda_build")
                                       if isinstance(bi.get("is_cuda_build"), bool) else None}
            out.append(entry)
        return out

    return {
        "probe": doc.get("probe"),
        "python": _text(doc.get("python")),
        "executable": _text(doc.get("executable")),
        "prefix": _text(doc.get("prefix")),
        "implementation": _text(doc.get("implementation")),
        "dists": entries(doc.get("dists"), ("name", "version", "location", "build_info_path")),
        "packages": entries(doc.get("packages"), ("name", "version", "location")),
        "nvidia_lib_dirs": [d for d in doc.get("nvidia_lib_dirs") or () if _text(d)]
        if isinstance(doc.get("nvidia_lib_dirs"), list) else [],
    }


def python_info(doc: dict | None, python_exe: str | None) -> PythonInfo | None:
    if doc is None:
        return PythonInfo(version=None, executable=python_exe, source="probe-failed") if python_exe else None
    packages = tuple(PackageInfo(name=str(p["name"]), version=p.get("version"), location=p.get("location"))
                     for p in doc.get("packages") or () if isinstance(p, dict) and p.get("name"))
    lib_dirs = tuple(str(d) for d in doc.get("nvidia_lib_dirs") or () if d)
    return PythonInfo(version=doc.get("python"), executable=doc.get("executable") or python_exe or sys.executable,
                      source=doc.get("_source", ""), prefix=doc.get("prefix"), packages=packages,
                      nvidia_lib_dirs=lib_dirs)


def frameworks(doc: dict | None, findings: list) -> list[FrameworkInfo]:
    if not doc:
        return []
    from ._pyprobe import TF_DISTS

    out = []
    tf = [d for d in doc.get("dists", []) if d.get("name") in TF_DISTS]
    for d in tf:
        bi = d.get("build_info") or {}
        name = d["name"]
        gpu = bi.get("is_cuda_build")
        if gpu is None:
            if name.endswith("-gpu"):
                gpu = True
            elif name.endswith("-cpu"):
                gpu = False
        source = "dist-info" + (" + build_info.py" if d.get("build_info_path") else "")
        out.append(FrameworkInfo(name="tensorflow", version=d.get("version"), cuda=bi.get("cuda_version") or None,
                                 cudnn=bi.get("cudnn_version") or None, gpu_build=gpu, package=name,
                                 path=d.get("location"), source=source))
    # tensorflow-intel is the Windows meta-dependency of tensorflow >= 2.11: not a conflict
    by_site: dict = {}
    for d in tf:
        if d["name"] != "tensorflow-intel":
            by_site.setdefault(d.get("location"), []).append(d)
    for site, real in by_site.items():
        if len(real) < 2:
            continue
        names = ", ".join(f"{d['name']} {d.get('version')}" for d in real)
        findings.append(Finding(
            "warning", "tensorflow-multiple-dists",
            f"several TensorFlow distributions are installed side by side in {site} ({names}); they write "
            f"the same `tensorflow` package, so the one installed last wins",
            "pip uninstall all of them, then install the one the plan names", "python-probe"))
    return out
