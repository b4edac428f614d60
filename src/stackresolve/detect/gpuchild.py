"""NVML (nvidia-ml-py, when importable) and the CUDA driver API (ctypes) queried in a child process.

A driver that hangs or crashes takes the child down, not us: the child runs under the caller's runner with a
timeout. Before it loads anything the child removes CUDA_VISIBLE_DEVICES (an empty or invalid value makes cuInit
fail: conda/conda#11667) and sets CUDA_DEVICE_ORDER=PCI_BUS_ID so libcuda's device numbers match nvidia-smi's
and NVML's. It prints one JSON line per probe, flushed at once, so a hang in the second probe keeps the first.
"""

from __future__ import annotations

import sys

from .runner import json_objects
from .smi import clean_cc, cuda_from_int

MARKER = "stackresolve-gpu-probe"

CHILD_SCRIPT = r'''
import ctypes, json, os, sys
os.environ.pop("CUDA_VISIBLE_DEVICES", None)
os.environ["CUDA_DEVICE_ORDER"] = "PCI_BUS_ID"

def emit(d):
    sys.stdout.write(json.dumps(d) + "\n")
    sys.stdout.flush()

def text(v):
    return v.decode("utf-8", "replace") if isinstance(v, bytes) else str(v)

def nvml():
    try:
        import pynvml
    except Exception as e:
        emit({"probe": "nvml", "ok": False, "absent": True, "error": "nvidia-ml-py not importable"})
        return
    try:
        pynvml.nvmlInit()
    except Exception as e:
        emit({"probe": "nvml", "ok": False, "error": "nvmlInit: %s" % e})
        return
    out = {"probe": "nvml", "ok": True, "gpus": []}
    try:
        try:
            out["driver"] = text(pynvml.nvmlSystemGetDriverVersion())
        except Exception as e:
            out["driver_error"] = str(e)
        for fn in ("nvmlSystemGetCudaDriverVersion_v2", "nvmlSystemGetCudaDriverVersion"):
            f = getattr(pynvml, fn, None)
            if f is None:
                continue
            try:
                out["cuda"] = int(f())
                break
            except Exception:
                pass
        n = pynvml.nvmlDeviceGetCount()
        for i in range(n):
            g = {"index": i}
            try:
                h = pynvml.nvmlDeviceGetHandleByIndex(i)
            except Exception as e:
                g["error"] = str(e)
                out["gpus"].append(g)
                continue
            try:
                g["name"] = text(pynvml.nvmlDeviceGetName(h))
            except Exception:
                pass
            try:
                g["cc"] = list(pynvml.nvmlDeviceGetCudaComputeCapability(h))
            except Exception:
                pass
            try:
                g["memory_mib"] = int(pynvml.nvmlDeviceGetMemoryInfo(h).total // 1048576)
            except Exception:
                pass
            out["gpus"].append(g)
    except Exception as e:
        out["error"] = str(e)
    finally:
        try:
            pynvml.nvmlShutdown()
        except Exception:
            pass
    emit(out)

def libcuda():
    if sys.platform.startswith("win"):
        names = ["nvcuda.dll"]
    elif sys.platform == "darwin":
        names = ["libcuda.dylib", "/usr/local/cuda/lib/libcuda.dylib"]
    else:
        names = ["libcuda.so.1", "libcuda.so", "/usr/lib/wsl/lib/libcuda.so.1", "/usr/lib64/nvidia/libcuda.so.1",
                 "/usr/lib/x86_64-linux-gnu/libcuda.so.1", "/usr/lib/aarch64-linux-gnu/libcuda.so.1",
                 "/usr/lib/aarch64-linux-gnu/tegra/libcuda.so.1"]
    lib = None
    errors = []
    for name in names:
        try:
            lib = ctypes.CDLL(name)
            break
        except OSError as e:
            errors.append(str(e))
    if lib is None:
        emit({"probe": "libcuda", "ok": False, "absent": True, "error": "; ".join(errors[:2])})
        return
    out = {"probe": "libcuda", "ok": False, "lib": name, "gpus": []}
    v = ctypes.c_int(0)
    try:
        if lib.cuDriverGetVersion(ctypes.byref(v)) == 0:
            out["cuda"] = v.value
    except Exception as e:
        out["error"] = "cuDriverGetVersion: %s" % e
    rc = lib.cuInit(0)
    if rc != 0:
        out["error"] = "cuInit returned %d" % rc
        out["cuinit"] = rc
        emit(out)
        return
    n = ctypes.c_int(0)
    rc = lib.cuDeviceGetCount(ctypes.byref(n))
    if rc != 0:
        out["error"] = "cuDeviceGetCount returned %d" % rc
        emit(out)
        return
    total_mem = getattr(lib, "cuDeviceTotalMem_v2", None) or getattr(lib, "cuDeviceTotalMem", None)
    for i in range(n.value):
        g = {"index": i}
        dev = ctypes.c_int(0)
        if lib.cuDeviceGet(ctypes.byref(dev), i) != 0:
            out["gpus"].append(g)
            continue
        buf = ctypes.create_string_buffer(256)
        if lib.cuDeviceGetName(buf, 256, dev) == 0:
            g["name"] = buf.value.decode("utf-8", "replace")
        major, minor = ctypes.c_int(0), ctypes.c_int(0)
        if (lib.cuDeviceGetAttribute(ctypes.byref(major), 75, dev) == 0
                and lib.cuDeviceGetAttribute(ctypes.byref(minor), 76, dev) == 0):
            g["cc"] = [major.value, minor.value]
        if total_mem is not None:
            mem = ctypes.c_size_t(0)
            if total_mem(ctypes.byref(mem), dev) == 0:
                g["memory_mib"] = int(mem.value // 1048576)
        out["gpus"].append(g)
    out["ok"] = True
    emit(out)

for what in sys.argv[1:]:
    if what == "nvml":
        nvml()
    elif what == "libcuda":
        libcuda()
'''

# CUresult values worth a sentence (cuda.h)
CU_ERRORS = {
    3: "CUDA_ERROR_NOT_INITIALIZED",
    34: "CUDA_ERROR_STUB_LIBRARY (the toolkit's stub libcuda, not the driver's, was loaded)",
    35: "CUDA_ERROR_INSUFFICIENT_DRIVER",
    100: "CUDA_ERROR_NO_DEVICE (no GPU visible to this process)",
    101: "CUDA_ERROR_INVALID_DEVICE",
    303: "CUDA_ERROR_SHARED_OBJECT_INIT_FAILED",
    804: "CUDA_ERROR_COMPAT_NOT_SUPPORTED_ON_DEVICE",
    999: "CUDA_ERROR_UNKNOWN",
}


def child_argv(python: str | None = None) -> list[str]:
    return [python or sys.executable, "-c", CHILD_SCRIPT, "nvml", "libcuda", MARKER]


def parse_child_output(stdout: str) -> dict[str, dict]:
    """{"nvml": {...}, "libcuda": {...}} from the child's JSON lines; garbage lines are ignored."""
    return {doc["probe"]: doc for doc in json_objects(stdout) if doc.get("probe") in ("nvml", "libcuda")}


def cc_string(cc) -> str | None:
    try:
        major, minor = int(cc[0]), int(cc[1])
    except (TypeError, ValueError, IndexError):
        return None
    if major <= 0:
        return None
    return clean_cc(f"{major}.{minor}")


def cuda_string(value) -> str | None:
    return cuda_from_int(value)


# Where the driver's user-space libraries live: the child only runs when one of them can be seen.
LINUX_LIB_DIRS = ("/usr/lib/x86_64-linux-gnu", "/usr/lib64", "/usr/lib", "/usr/lib64/nvidia",
                  "/usr/lib/aarch64-linux-gnu", "/usr/lib/aarch64-linux-gnu/tegra", "/usr/lib/wsl/lib",
                  "/usr/local/nvidia/lib64", "/usr/local/nvidia/lib")
LINUX_LIB_NAMES = ("libcuda.so.1", "libcuda.so", "libnvidia-ml.so.1")


def driver_libs_visible(fs, env, system: str) -> str | None:
    """Where a driver library was seen (a path or "ld.so.cache"), None when there is none to load."""
    if system == "windows":
        sysroot = env.get("SystemRoot") or env.get("SYSTEMROOT") or env.get("WINDIR") or "C:\\Windows"
        for name in ("nvcuda.dll", "nvml.dll"):
            p = sysroot.rstrip("\\/") + "\\System32\\" + name
            if fs.is_file(p):
                return p
        return None
    if system == "macos":
        return None
    cache = fs.read_bytes("/etc/ld.so.cache")
    if cache and (b"libcuda.so" in cache or b"libnvidia-ml.so" in cache):
        return "ld.so.cache"
    dirs = list(LINUX_LIB_DIRS)
    for d in (env.get("LD_LIBRARY_PATH") or "").split(":"):
        if d:
            dirs.append(d)
    for d in dirs:
        for name in LINUX_LIB_NAMES:
            p = d.rstrip("/") + "/" + name
            if fs.exists(p):
                return p
    return None
