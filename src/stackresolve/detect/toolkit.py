"""Installed CUDA toolkits (all of them) and cuDNN copies, read from files; nvcc is run only where no version file
says the version."""

from __future__ import annotations

import json
import re
import time

from stackresolve.model.values import major_minor

from . import paths
from stackresolve.model.machine import CudnnInfo, Finding, ProbeRecord, ToolkitInfo
from .runner import CommandNotFound, CommandTimeout

NVCC_TIMEOUT = 3.0

_NVCC_RE = re.compile(r"release\s+([0-9]{1,9}\.[0-9]{1,9}),\s*V([0-9]{1,9}(?:\.[0-9]{1,9})+)(?![0-9])")
_VERSION_TXT_RE = re.compile(r"CUDA Version\s+([0-9]{1,9}(?:\.[0-9]{1,9})+)(?![0-9])")


# --- parsers -------------------------------------------------------------------------------------------
def parse_nvcc(text: str | None) -> tuple[str, str] | None:
    """`nvcc --version` -> ("11.1", "11.1.105") (release, nvcc's own V number)."""
    m = _NVCC_RE.search(text or "")
    return (m.group(1), m.group(2)) if m else None


def parse_version_json(text: str | None) -> tuple[str | None, str | None]:
    """version.json (CUDA >= 11.1) -> (toolkit version "11.5.2", nvcc component version "11.5.119")."""
    if not text:
        return None, None
    try:
        doc = json.loads(text)
        cuda = (doc.get("cuda") or {}).get("version")
        nvcc = (doc.get("cuda_nvcc") or {}).get("version")
        return (str(cuda) if cuda else None), (str(nvcc) if nvcc else None)
    except (ValueError, AttributeError):
        pass
    # excerpts / damaged files: fall back to the entries we need
    cuda = re.search(r'"cuda"\s*:\s*\{[^}]*?"version"\s*:\s*"([^"]+)"', text)
    nvcc = re.search(r'"cuda_nvcc"\s*:\s*\{[^}]*?"version"\s*:\s*"([^"]+)"', text)
    return (cuda.group(1) if cuda else None), (nvcc.group(1) if nvcc else None)


def parse_version_txt(text: str | None) -> str | None:
    """version.txt (CUDA <= 11.0): "CUDA Version 10.0.130" -> "10.0.130"."""
    m = _VERSION_TXT_RE.search(text or "")
    return m.group(1) if m else None


def parse_cudnn_header(text: str | None) -> str | None:
    """CUDNN_MAJOR / CUDNN_MINOR / CUDNN_PATCHLEVEL from cudnn_version.h (>= 8) or cudnn.h (older) -> "8.0.4"."""
    if not text:
        return None
    parts = []
    for name in ("CUDNN_MAJOR", "CUDNN_MINOR", "CUDNN_PATCHLEVEL"):
        m = re.search(r"#\s*define\s+" + name + r"\s+([0-9]{1,9})(?![0-9])", text)
        if not m:
            break
        parts.append(m.group(1))
    return ".".join(parts) if parts else None


def cudnn_from_lib_name(name: str) -> str | None:
    """libcudnn.so.8.9.7 -> "8.9.7", libcudnn.so.8 -> "8", cudnn64_8.dll -> "8"; None otherwise."""
    m = re.match(r"^libcudnn\.so\.([0-9]{1,9}(?:\.[0-9]{1,9})*)$", name)
    if m:
        return m.group(1)
    m = re.match(r"^cudnn64_([0-9]{1,9})\.dll$", name, re.IGNORECASE)
    if m:
        return m.group(1)
    m = re.match(r"^libcudnn\.([0-9]{1,9}(?:\.[0-9]{1,9})*)\.dylib$", name)
    return m.group(1) if m else None


def parse_conda_meta_name(filename: str) -> tuple[str, str, str] | None:
    """"cuda-version-12.4-h3060b56_3.json" -> ("cuda-version", "12.4", "h3060b56_3")."""
    base = filename[:-5] if filename.endswith(".json") else filename
    parts = base.rsplit("-", 2)
    if len(parts) != 3:
        return None
    return parts[0], parts[1], parts[2]


def _first3(v: str) -> str:
    return ".".join(v.split(".")[:3])


# --- CUDA toolkits -------------------------------------------------------------------------------------
def _run_nvcc(runner, nvcc: str, records: list, findings: list) -> tuple[str, str] | None:
    t0 = time.monotonic()
    try:
        rc, out, err = runner([nvcc, "--version"], NVCC_TIMEOUT)
    except CommandNotFound as exc:
        records.append(ProbeRecord(f"nvcc ({nvcc})", "absent", str(exc), time.monotonic() - t0))
        return None
    except CommandTimeout as exc:
        records.append(ProbeRecord(f"nvcc ({nvcc})", "timeout", str(exc), time.monotonic() - t0))
        findings.append(Finding("warning", "probe-timeout", str(exc), "", "nvcc"))
        return None
    except Exception as exc:  # never let a probe raise
        records.append(ProbeRecord(f"nvcc ({nvcc})", "failed", repr(exc), time.monotonic() - t0))
        return None
    parsed = parse_nvcc(out + "\n" + err)
    records.append(ProbeRecord(f"nvcc ({nvcc})", "ok" if parsed else "failed",
                               f"release {parsed[0]}" if parsed else f"exit {rc}, unparsable output",
                               time.monotonic() - t0))
    return parsed


def toolkit_dirs(fs, env, system: str) -> list[tuple[str, str]]:
    """Candidate toolkit directories with why each was looked at."""
    out: list[tuple[str, str]] = []
    if system == "windows":
        for key in sorted(env):
            if key.upper().startswith("CUDA_PATH_V") and env[key]:
                out.append((env[key], "env:" + key))
        for key in ("CUDA_PATH", "CUDA_HOME"):
            if env.get(key):
                out.append((env[key], "env:" + key))
        pf = env.get("ProgramFiles") or env.get("PROGRAMFILES") or "C:\\Program Files"
        for d in fs.glob(paths.join(system, pf, "NVIDIA GPU Computing Toolkit", "CUDA", "v*")):
            out.append((d, "glob"))
    else:
        for d in fs.glob("/usr/local/cuda") + fs.glob("/usr/local/cuda-*") + ["/opt/cuda"]:
            out.append((d, "glob"))
        for key in ("CUDA_HOME", "CUDA_PATH"):
            if env.get(key):
                out.append((env[key], "env:" + key))
    return out


def probe_toolkits(fs, env, system: str, runner, conda_prefixes, pip_dists, records: list,
                   findings: list) -> list[ToolkitInfo]:
    t0 = time.monotonic()
    found: list[dict] = []  # mutable while merging; frozen at the end
    by_real: dict[str, dict] = {}
    nvcc_runs = 0
    for d, why in toolkit_dirs(fs, env, system):
        if not fs.is_dir(d):
            if why.startswith("env:"):
                findings.append(Finding("warning", "env-path-missing", f"{why[4:]} points to {d}, which does not exist",
                                        f"fix or unset {why[4:]}", why))
            continue
        real = paths.norm(system, fs.realpath(d))
        if real in by_real:
            continue
        entry = None
        full, nvcc_v = parse_version_json(fs.read_text(paths.join(system, d, "version.json")))
        if full:
            entry = {"version": major_minor(full), "full_version": full, "source": "version.json", "nvcc": nvcc_v}
        else:
            txt = parse_version_txt(fs.read_text(paths.join(system, d, "version.txt")))
            if txt:
                entry = {"version": major_minor(txt), "full_version": txt, "source": "version.txt"}
        if entry is None:
            nvcc = paths.join(system, d, "bin", "nvcc.exe" if system == "windows" else "nvcc")
            if fs.is_file(nvcc) and nvcc_runs < 4:
                nvcc_runs += 1
                parsed = _run_nvcc(runner, nvcc, records, findings)
                if parsed:
                    entry = {"version": parsed[0], "full_version": parsed[1], "source": "nvcc", "nvcc": parsed[1]}
        if entry is None and why.upper().startswith("ENV:CUDA_PATH_V"):
            m = re.match(r"^CUDA_PATH_V([0-9]{1,9})_([0-9]{1,9})$", why[4:], re.IGNORECASE)
            if m:
                entry = {"version": f"{m.group(1)}.{m.group(2)}", "full_version": None, "source": why}
        if entry is None or not entry.get("version"):
            continue
        entry["path"] = fs.realpath(d)
        entry["on_path"] = False
        by_real[real] = entry
        found.append(entry)

    # the nvcc first on PATH
    nvcc = paths.which(fs, env, system, "nvcc")
    if nvcc:
        real_nvcc = fs.realpath(nvcc)
        home = paths.dirname(system, paths.dirname(system, real_nvcc))
        match = by_real.get(paths.norm(system, home))
        parsed = None
        if match is None:
            parsed = _run_nvcc(runner, nvcc, records, findings)
            if parsed:
                same = [e for e in found if e.get("nvcc") == parsed[1]]
                if len(same) == 1:
                    match = same[0]
                else:
                    match = {"version": parsed[0], "full_version": parsed[1], "source": "nvcc", "nvcc": parsed[1],
                             "path": home, "on_path": False}
                    found.append(match)
        if match is not None:
            match["on_path"] = True

    # conda environments
    for prefix in conda_prefixes:
        for pkg in ("cudatoolkit", "cuda-version"):
            for f in fs.glob(paths.join(system, prefix, "conda-meta", pkg + "-*.json")):
                parsed = parse_conda_meta_name(paths.basename(system, f))
                if not parsed or parsed[0] != pkg:
                    continue
                found.append({"version": major_minor(parsed[1]), "full_version": parsed[1],
                              "source": "conda:" + pkg, "path": prefix, "on_path": False})
    # pip wheels of the CUDA runtime in the target interpreter (tensorflow[and-cuda] brings them)
    for d in pip_dists:
        if d.get("name", "").startswith("nvidia-cuda-runtime-") and d.get("version"):
            found.append({"version": major_minor(d["version"]), "full_version": d["version"],
                          "source": "pip:" + d["name"], "path": d.get("location"), "on_path": False})

    out = [ToolkitInfo(version=e["version"], path=e.get("path"), source=e["source"],
                       full_version=e.get("full_version"), on_path=bool(e.get("on_path")))
           for e in found if e.get("version")]
    records.append(ProbeRecord("cuda-toolkits", "ok" if out else "absent",
                               ", ".join(f"{t.version} ({t.source})" for t in out), time.monotonic() - t0))
    return out


# --- cuDNN ---------------------------------------------------------------------------------------------
def _dedup(seq):
    seen = set()
    out = []
    for x in seq:
        if x and x not in seen:
            seen.add(x)
            out.append(x)
    return out


def probe_cudnn(fs, env, system: str, toolkits, conda_prefixes, pip_dists, records: list) -> list[CudnnInfo]:
    t0 = time.monotonic()
    out: list[CudnnInfo] = []
    seen_files: set[str] = set()
    tk_paths = [t.path for t in toolkits if t.path and not t.source.startswith(("conda:", "pip:"))]
    j = lambda *p: paths.join(system, *p)  # noqa: E731

    if system == "windows":
        pf = env.get("ProgramFiles") or env.get("PROGRAMFILES") or "C:\\Program Files"
        inc = [j(t, "include") for t in tk_paths]
        inc += fs.glob(j(pf, "NVIDIA", "CUDNN", "v*", "include")) + fs.glob(j(pf, "NVIDIA", "CUDNN", "v*", "include", "*"))
        for key in ("CUDNN_PATH", "CUDA_PATH", "CUDA_HOME"):
            if env.get(key):
                inc += [env[key], j(env[key], "include")]
        inc += [j(p, "Library", "include") for p in conda_prefixes]
        libdirs = [j(t, "bin") for t in tk_paths]
        libdirs += fs.glob(j(pf, "NVIDIA", "CUDNN", "v*", "bin")) + fs.glob(j(pf, "NVIDIA", "CUDNN", "v*", "bin", "*"))
        for key in ("CUDNN_PATH", "CUDA_PATH"):
            if env.get(key):
                libdirs.append(j(env[key], "bin"))
        libdirs += paths.split_path_var(system, env.get("PATH") or env.get("Path"))
        libdirs += [j(p, "Library", "bin") for p in conda_prefixes]
        lib_patterns = ("cudnn64_*.dll",)
    else:
        inc = ["/usr/include"] + fs.glob("/usr/include/*-linux-gnu")
        for t in tk_paths:
            inc.append(j(t, "include"))
            inc += fs.glob(j(t, "targets", "*", "include"))
        for key in ("CUDNN_PATH", "CUDNN_HOME", "CUDA_HOME"):
            if env.get(key):
                inc += [env[key], j(env[key], "include")]
        inc += [j(p, "include") for p in conda_prefixes]
        libdirs = fs.glob("/usr/lib/*-linux-gnu") + ["/usr/lib64", "/usr/lib"]
        for t in tk_paths:
            libdirs += [j(t, "lib64"), j(t, "lib")] + fs.glob(j(t, "targets", "*", "lib"))
        libdirs += paths.split_path_var(system, env.get("LD_LIBRARY_PATH"))
        for key in ("CUDNN_PATH", "CUDNN_HOME"):
            if env.get(key):
                libdirs += [j(env[key], "lib"), j(env[key], "lib64")]
        libdirs += [j(p, "lib") for p in conda_prefixes]
        lib_patterns = ("libcudnn.so.*", "libcudnn.*.dylib") if system == "macos" else ("libcudnn.so.*",)

    # headers: cudnn_version.h (cuDNN >= 8), then cudnn.h (older: it holds the defines itself; from 8 on it only
    # includes cudnn_version.h); Debian alternatives add _v8 suffixes. A real file is read once.
    for d in _dedup(inc):
        if not fs.is_dir(d):
            continue
        candidates = [j(d, "cudnn_version.h")] + fs.glob(j(d, "cudnn_version_v*.h")) + [j(d, "cudnn.h")] + \
            fs.glob(j(d, "cudnn_v*.h"))
        for h in candidates:
            if not fs.is_file(h):
                continue
            real = paths.norm(system, fs.realpath(h))
            if real in seen_files:
                continue
            seen_files.add(real)
            v = parse_cudnn_header(fs.read_text(h, limit=256 * 1024))
            if v:
                out.append(CudnnInfo(version=v, path=h, source=paths.basename(system, h)))

    # libraries: the most specific name per real file
    for d in _dedup(libdirs):
        if not fs.is_dir(d):
            continue
        for pat in lib_patterns:
            for lib in fs.glob(j(d, pat)):
                real = fs.realpath(lib)
                key = paths.norm(system, real)
                if key in seen_files:
                    continue
                seen_files.add(key)
                v = cudnn_from_lib_name(paths.basename(system, real)) or cudnn_from_lib_name(
                    paths.basename(system, lib))
                if v:
                    src = "cudnn64.dll" if system == "windows" else "libcudnn.so"
                    out.append(CudnnInfo(version=v, path=real, source=src))

    for prefix in conda_prefixes:
        for f in fs.glob(j(prefix, "conda-meta", "cudnn-*.json")):
            parsed = parse_conda_meta_name(paths.basename(system, f))
            if parsed and parsed[0] == "cudnn":
                out.append(CudnnInfo(version=_first3(parsed[1]), path=prefix, source="conda:cudnn",
                                     full_version=parsed[1]))
    for d in pip_dists:
        if d.get("name", "").startswith("nvidia-cudnn-") and d.get("version"):
            loc = d.get("location")
            out.append(CudnnInfo(version=_first3(d["version"]), path=j(loc, "nvidia", "cudnn") if loc else None,
                                 source="pip:" + d["name"], full_version=d["version"]))
    records.append(ProbeRecord("cudnn", "ok" if out else "absent",
                               ", ".join(f"{c.version} ({c.source})" for c in out), time.monotonic() - t0))
    return out
