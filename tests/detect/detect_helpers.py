"""Helpers for the detection tests: real fixtures, a fake machine tree, and a scripted command runner."""

from __future__ import annotations

import os
import time
from pathlib import Path

from stackresolve.detect.runner import CommandNotFound, CommandTimeout

FIXTURES = Path(__file__).resolve().parents[1] / "fixtures" / "detect"


def fixture_text(name: str) -> str:
    return (FIXTURES / name).read_text(encoding="utf-8")


def make_tree(root: Path, files: dict[str, str | bytes | None]) -> Path:
    """Create machine paths under root: "/usr/bin/nvidia-smi" -> root/usr/bin/nvidia-smi; None = a directory;
    "C:\\x\\y" -> root/C/x/y. A value starting with "->" makes a symlink to the rest of the value (a machine
    path)."""
    def real(p: str) -> Path:
        p = p.replace("\\", "/")
        if len(p) > 1 and p[1] == ":":
            p = p[0].upper() + "/" + p[2:].lstrip("/")
        return root / p.lstrip("/")

    for path, content in files.items():
        target = real(path)
        if content is None:
            target.mkdir(parents=True, exist_ok=True)
            continue
        target.parent.mkdir(parents=True, exist_ok=True)
        if isinstance(content, str) and content.startswith("->"):
            dest = real(content[2:].strip())
            os.symlink(dest, target)
        elif isinstance(content, bytes):
            target.write_bytes(content)
        else:
            target.write_text(content, encoding="utf-8")
    return root


class FakeRunner:
    """Answers commands from a list of (matcher, response) rules; records every call with its timeout.

    A response is (rc, stdout, stderr), an exception instance to raise, or a callable(argv, timeout)."""

    def __init__(self, rules=None):
        self.rules = list(rules or [])
        self.calls: list[tuple[list[str], float]] = []

    def on(self, matcher, response):
        self.rules.append((matcher, response))
        return self

    def __call__(self, argv, timeout):
        argv = [str(a) for a in argv]
        self.calls.append((argv, timeout))
        for matcher, response in self.rules:
            if matcher(argv):
                if callable(response) and not isinstance(response, tuple):
                    return response(argv, timeout)
                if isinstance(response, BaseException):
                    raise response
                return response
        raise CommandNotFound(argv[0])

    def names(self) -> list[str]:
        return [describe(a) for a, _ in self.calls]


def describe(argv: list[str]) -> str:
    from stackresolve.detect.gpuchild import MARKER
    from stackresolve.detect.pyenv import MARKER as PY_MARKER

    if MARKER in argv:
        return "child"
    if PY_MARKER in argv:
        return "python"
    base = os.path.basename(argv[0].replace("\\", "/"))
    if base.startswith("nvidia-smi"):
        if len(argv) == 1:
            return "smi-banner"
        if argv[1].startswith("--query-gpu="):
            return "smi-csv-cc" if "compute_cap" in argv[1] else "smi-csv"
        if argv[1] == "--query":
            return "smi-xml"
        if argv[1] == "-q":
            return "smi-q"
    if base.startswith("nvcc"):
        return "nvcc"
    if base.startswith("powershell"):
        return "powershell"
    return base


def is_(kind):
    return lambda argv: describe(argv) == kind


def hang(argv, timeout):
    """A command that never answers: sleeps for its whole timeout, then times out like the real runner."""
    time.sleep(timeout)
    raise CommandTimeout(argv[0], timeout)


# env for a fake Linux machine with nvidia-smi in /usr/bin
LINUX_ENV = {"PATH": "/usr/local/bin:/usr/bin:/bin"}


def smi_csv(*rows: str, cc: bool = True) -> str:
    """Output of our CSV query in the shape nvidia-smi prints it (header line with units, ", " between values),
    built here: rows are "index, pci.bus_id, name, [compute_cap,] driver_version, memory.total"."""
    header = "index, pci.bus_id, name, " + ("compute_cap, " if cc else "") + "driver_version, memory.total [MiB]"
    return "\n".join((header,) + rows) + "\n"
