"""Finding the CPython a plan needs on this machine: the `py` launcher (Windows), `pythonX.Y` on PATH, pyenv's
versions, a uv-managed Python, conda's environments; and, only when the user asks, a download by uv.

Every candidate is run (`-c` of a line valid on Python 2.7 and 3.x) and kept only when it reports the minor
version asked for: a pyenv shim or a broken link on PATH answers with an error and is passed over. The runner is
injected (`runner(argv, timeout) -> (rc, stdout, stderr)`, detect.runner's contract), so tests use fake ones.
"""

from __future__ import annotations

import glob
import os
import shutil
from typing import Callable, Iterable, Mapping, Sequence

from stackresolve.detect.runner import CommandNotFound, CommandOutputTooLarge, CommandTimeout
from stackresolve.model.enums import Os
from stackresolve.model.record import record
from stackresolve.model.values import major_minor

# What a command that could not be asked, or gave no usable answer, raises through the runner.
NOT_RUN = (CommandNotFound, CommandTimeout, CommandOutputTooLarge, OSError)
PROBE_TIMEOUT = 10.0  # seconds for one candidate to print its version (a cold start of an old Python: < 1 s)
DOWNLOAD_TIMEOUT = 600.0
# Valid on Python 2.7 and 3.x: the version, the real executable (a launcher or a shim resolves to it), and
# whether it runs inside a virtual environment (a venv is never the base of another: its packages would leak in
# with --system-site-packages, and its base may be removed under it).
VERSION_CODE = ("import sys; print('%d.%d.%d' % sys.version_info[:3]); print(sys.executable); "
                "print(int(getattr(sys, 'base_prefix', sys.prefix) != sys.prefix or hasattr(sys, 'real_prefix')))")


@record
class FoundPython:
    executable: str
    version: str  # "3.7.16"
    how: str  # "python3.7 on PATH", "pyenv", "py launcher", "uv-managed", "conda", "--python-exe"

    @property
    def minor(self) -> str:
        return major_minor(self.version)


def _ask(runner, argv: Sequence[str], allow_venv: bool = False) -> tuple[str, str] | None:
    """(version, executable) that `argv` reports, or None when it is no working Python (or a venv's)."""
    try:
        rc, out, _err = runner([*argv, "-c", VERSION_CODE], PROBE_TIMEOUT)
    except NOT_RUN:
        return None
    lines = [line.strip() for line in (out or "").splitlines() if line.strip()]
    if rc != 0 or len(lines) < 3 or not all(p.isascii() and p.isdigit() for p in lines[0].split(".")):
        return None
    if lines[2] == "1" and not allow_venv:
        return None
    return lines[0], lines[1]


def interpreter(runner, executable: str, how: str = "--python-exe") -> FoundPython | None:
    """What a named interpreter is (None: it does not run as Python)."""
    answer = _ask(runner, [executable], allow_venv=True)  # named by the user: taken as it is
    return FoundPython(answer[1] or executable, answer[0], how) if answer else None


def _candidates(version: str, os_name: Os, env: Mapping[str, str], which, uv: str | None, runner
                ) -> Iterable[tuple[list[str], str]]:
    """(argv, how) for each place CPython `version` may be, most specific first; found lazily."""
    windows = os_name is Os.WINDOWS
    if windows:
        yield ["py", f"-{version}"], "py launcher"
    name = f"python{version}"
    on_path = which(name, path=env.get("PATH"))
    if on_path:
        yield [on_path], f"{name} on PATH"
    pyenv_root = env.get("PYENV_ROOT") or os.path.join(env.get("HOME") or os.path.expanduser("~"), ".pyenv")
    for home in sorted(glob.glob(os.path.join(glob.escape(pyenv_root), "versions", f"{version}.*")), reverse=True):
        exe = os.path.join(home, "python.exe" if windows else os.path.join("bin", name))
        if os.path.exists(exe):
            yield [exe], "pyenv"
    managed = _uv_managed(uv, version, runner) if uv else None
    if managed:
        yield [managed], "uv"
    for root in _conda_roots(env):
        pattern = os.path.join(glob.escape(root), "python.exe") if windows else \
            os.path.join(glob.escape(root), "bin", name)
        for exe in sorted(glob.glob(pattern)):
            yield [exe], "conda"


def _conda_roots(env: Mapping[str, str]) -> list[str]:
    """The active conda environment and every environment beside conda's own installation."""
    roots = []
    if env.get("CONDA_PREFIX"):
        roots.append(env["CONDA_PREFIX"])
    conda_exe = env.get("CONDA_EXE")
    if conda_exe:
        base = os.path.dirname(os.path.dirname(conda_exe))
        roots += [base, *sorted(glob.glob(os.path.join(glob.escape(base), "envs", "*")))]
    return list(dict.fromkeys(roots))


def find_python(versions: Sequence[str], os_name: Os, runner, *, env: Mapping[str, str] | None = None,
                which: Callable = shutil.which, uv: str | None = None) -> FoundPython | None:
    """The first working interpreter of the first of `versions` ("3.11", ...) that this machine has."""
    env = os.environ if env is None else env
    for version in versions:
        seen: set[str] = set()
        for argv, how in _candidates(version, os_name, env, which, uv, runner):
            if argv[0] in seen:
                continue
            seen.add(argv[0])
            answer = _ask(runner, argv)
            if answer and major_minor(answer[0]) == version:
                return FoundPython(answer[1] or argv[0], answer[0], how)
    return None


def download_python(version: str, uv: str, runner) -> tuple[FoundPython | None, str]:
    """`uv python install X.Y` (asked for with --python-download), then the interpreter it installed; or None and
    uv's last line saying why not."""
    try:
        rc, out, err = runner([uv, "python", "install", version], DOWNLOAD_TIMEOUT)
    except NOT_RUN as exc:
        return None, str(exc)
    if rc != 0:
        last = [line.strip() for line in f"{out}\n{err}".splitlines() if line.strip()]
        return None, (last[-1][:300] if last else f"uv exited with {rc}")
    managed = _uv_managed(uv, version, runner)
    found = interpreter(runner, managed, "uv download") if managed else None
    return found, "" if found else "uv installed it but does not find it"


def _uv_managed(uv: str, version: str, runner) -> str | None:
    """The uv-managed CPython `version` (never downloaded by this question), or None."""
    try:
        rc, out, _ = runner([uv, "python", "find", "--managed-python", "--no-python-downloads", version],
                            PROBE_TIMEOUT)
    except NOT_RUN:
        return None
    lines = (out or "").strip().splitlines()
    return lines[-1].strip() if rc == 0 and lines else None
