"""Which shared libraries load, tried the way TensorFlow's loader would, in a child process.

TensorFlow opens its CUDA libraries by file name alone (dlopen("libcudart.so.10.0") on Linux, LoadLibrary
("cudart64_100.dll") on Windows: tensorflow/stream_executor/platform/default/dso_loader.cc, GetDsoHandle), so the
system loader searches: on Linux the calling library's RPATH, LD_LIBRARY_PATH, the ld.so cache and the default
folders; on Windows the standard DLL search order, PATH included. TensorFlow wheels that take CUDA from pip wheels
(tensorflow[and-cuda]) reach site-packages/nvidia/*/lib through their RPATH, which a child Python does not have,
so the caller passes such folders as `search_dirs`: the child tries `dir/name` there first, then the bare name.

Loading a broken library can hang or crash a process, so every attempt runs in a child with a timeout; a child that
dies takes one library's answer with it, and a new child carries on with the rest. Nothing here raises.
"""

from __future__ import annotations

import json
import sys
from typing import Iterable

from .runner import CommandNotFound, CommandTimeout, Deadline, SubprocessRunner, budget_seconds, json_objects

MARKER = "stackresolve-libload-probe"

# Stdlib only and valid on Python 2.7 / 3.5+: it may run in the target interpreter of an old TensorFlow.
# argv: -c SCRIPT MARKER <json: {"names": [...], "dirs": [...]}>; prints one JSON line per library, flushed.
CHILD_SCRIPT = r'''
import ctypes, json, os, sys

def emit(d):
    sys.stdout.write(json.dumps(d) + "\n")
    sys.stdout.flush()

WINDOWS = sys.platform.startswith("win")

def load(path):
    if WINDOWS and sys.version_info >= (3, 8):
        # winmode=0: the standard DLL search order (PATH included), as TensorFlow's LoadLibrary call gets
        return ctypes.CDLL(path, winmode=0)
    return ctypes.CDLL(path)

def where(name, lib):
    """The file a bare-name load found: /proc/self/maps on Linux, GetModuleFileNameW on Windows."""
    try:
        if WINDOWS:
            buf = ctypes.create_unicode_buffer(1024)
            if ctypes.windll.kernel32.GetModuleFileNameW(ctypes.c_void_p(lib._handle), buf, 1024):
                return buf.value
            return None
        stem = name.split(".so")[0] + ".so"
        best = None
        fh = open("/proc/self/maps")
        try:
            for line in fh:
                fields = line.split(None, 5)
                if len(fields) < 6:
                    continue
                path = fields[5].strip()
                base = os.path.basename(path)
                if base == name:
                    return path
                if best is None and base.startswith(stem):
                    best = path  # the soname link resolved to the real file (libcudart.so.10.0.130)
        finally:
            fh.close()
        return best
    except Exception:
        return None

req = json.loads(sys.argv[2])
for name in req["names"]:
    errors = []
    done = False
    for d in req["dirs"]:
        path = os.path.join(d, name)
        if not os.path.exists(path):
            continue
        try:
            load(path)
        except OSError as e:
            errors.append(str(e))
            continue
        emit({"name": name, "ok": True, "path": path, "how": "dir"})
        done = True
        break
    if done:
        continue
    try:
        lib = load(name)
    except OSError as e:
        errors.append(str(e))
        emit({"name": name, "ok": False, "error": "; ".join(errors)})
        continue
    emit({"name": name, "ok": True, "path": where(name, lib), "how": "search"})
'''


def child_argv(names: list[str], search_dirs: list[str], python: str | None = None) -> list[str]:
    return [python or sys.executable, "-c", CHILD_SCRIPT, MARKER,
            json.dumps({"names": list(names), "dirs": list(search_dirs)})]


def parse_child_output(stdout: str) -> dict[str, dict]:
    return {doc["name"]: doc for doc in json_objects(stdout) if isinstance(doc.get("name"), str) and "ok" in doc}


def _detail(doc: dict) -> str:
    if doc.get("ok"):
        path = doc.get("path")
        if doc.get("how") == "dir":
            return f"loads from {path}"
        return f"loads through the loader's search path ({path})" if path else \
            "loads through the loader's search path"
    return doc.get("error") or "does not load"


def probe_libraries(names: Iterable[str], search_dirs: Iterable[str] = (), *, runner=None,
                    python_exe: str | None = None, timeout_total: float | None = None,
                    deadline: Deadline | None = None) -> dict[str, tuple[bool, str]]:
    """{name: (loads, detail)} for each library name. `detail` names the file that loaded, or the loader's error
    ("libcudart.so.10.0: cannot open shared object file: No such file or directory").

    runner: callable(argv, timeout) -> (rc, stdout, stderr) (default: SubprocessRunner).
    python_exe: interpreter for the child (default: this one; any Python 2.7 / 3.5+ will do).
    timeout_total: seconds for all the libraries (default: the detection budget, STACKRESOLVE_DETECT_TIMEOUT or
        5 s); `deadline` instead shares one with detect_machine, so that detection and the loads together
        finish in one budget.
    """
    runner = runner if runner is not None else SubprocessRunner()
    pending = [n for n in dict.fromkeys(names) if n]
    dirs = [d for d in dict.fromkeys(search_dirs) if d]
    results: dict[str, tuple[bool, str]] = {}
    if deadline is None:
        # lazy: no start-up gain (already loaded by then); kept beside its use
        import os

        deadline = Deadline(budget_seconds(os.environ, timeout_total)[0])
    while pending:
        if deadline.expired(margin=0.05):
            for name in pending:
                results[name] = (False, "not tried: the library probe ran out of time")
            break
        stdout, failure = "", ""
        try:
            rc, stdout, err = runner(child_argv(pending, dirs, python_exe), deadline.remaining())
            if rc not in (0, None):
                failure = f"loading it ended the probe process (exit {rc})"
        except CommandTimeout as exc:
            stdout = exc.stdout or ""
            failure = "loading it did not finish within the time limit (hung loader or library constructor)"
        except CommandNotFound as exc:
            for name in pending:
                results[name] = (False, f"not tried: cannot start {exc.program}")
            break
        except Exception as exc:  # a probe never raises
            for name in pending:
                results[name] = (False, f"not tried: {exc!r}")
            break
        answered = parse_child_output(stdout)
        for name in pending:
            if name in answered:
                results[name] = (bool(answered[name].get("ok")), _detail(answered[name]))
        pending = [n for n in pending if n not in results]
        if pending:
            # the child stopped at the first unanswered library: blame it, retry the rest in a new child
            results[pending[0]] = (False, failure or "the probe process gave no answer for it")
            pending = pending[1:]
    return results
