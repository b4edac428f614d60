"""`stackresolve check`."""

from typing import Optional

import typer

from stackresolve.cli.app import command_app, Exit, choice, detect_machine, fail, knowledge, output, read_input

LOCK_LIMIT = 4 * 1024 * 1024  # a lock is a few kilobytes


check_app = command_app()


@check_app.command()
def check(
    lock_file: str = typer.Argument("stackresolve.lock", help="The lock file written by `plan --format lock`."),
    os: Optional[str] = typer.Option(None, "--os", help="Check as if on this OS (default: detected)."),
    driver: Optional[str] = typer.Option(None, "--driver", help="Check against this driver (default: detected)."),
    gpu: Optional[str] = typer.Option(None, "--gpu", help="Check against this GPU model (default: detected)."),
    gpu_cc: Optional[str] = typer.Option(None, "--gpu-cc", help="Check against this compute capability."),
    python: Optional[str] = typer.Option(None, "--python", help="Check against this Python (default: detected)."),
    cuda: Optional[str] = typer.Option(None, "--cuda", help="Installed CUDA toolkit version (default: detected)."),
    cudnn: Optional[str] = typer.Option(None, "--cudnn", help="Installed cuDNN version (default: detected)."),
    python_exe: Optional[str] = typer.Option(None, "--python-exe", help="Interpreter whose packages to check."),
    before_install: bool = typer.Option(False, "--before-install",
                                        help="Compare only what exists before installing: OS, GPUs, driver, and the "
                                             "Python the install will use (--python, --python-exe, or found)."),
    no_detect: bool = typer.Option(False, "--no-detect", help="Do not probe this machine; use flags only."),
    fmt: str = typer.Option("text", "--format", "-f", help="text or json."),
) -> None:
    """Compare this machine with a lock file: exit 0 when it matches, 1 with the differences."""
    from stackresolve.check import FACTS, check_lock, render_json, render_text
    from stackresolve.lock import parse_lock
    from stackresolve.request import InputError, MachineFlags, apply_flags

    fmt = choice(fmt, ("text", "json"), "--format")
    text = read_input(lock_file, LOCK_LIMIT, what="lock file").text
    if not text.lstrip().startswith(("{", "[", '"')):  # a full lock (plan --format pip --lock): the packages
        check_packages(text, lock_file, python_exe, fmt)
    kb = knowledge()
    flags = MachineFlags(os=os, driver=driver, gpu=gpu, gpu_cc=gpu_cc, python=python, cuda=cuda, cudnn=cudnn)
    try:
        lock = parse_lock(text, lock_file)
        if no_detect:
            machine, observed = apply_flags(kb, None, flags)
        else:
            machine, _ = apply_flags(kb, detect_machine(python_exe=python_exe, gpu_only=before_install), flags)
            observed = frozenset(FACTS)
            if before_install and not python:
                machine = _python_to_be_used(machine, text, lock_file, python_exe)
        result = check_lock(lock, kb, machine, observed, before_install=before_install)
    except InputError as exc:
        fail(str(exc))
    output(render_json(lock, result) if fmt == "json" else render_text(lock, result), None)
    raise typer.Exit(Exit.OK if result.matches else Exit.FAILED)


def _python_to_be_used(machine, text: str, lock_file: str, python_exe: Optional[str]):
    """Before installing, the Python is the one `install` would use: --python-exe, else the first the lock's range
    finds on this machine (none: check says so, with how to get one)."""
    from dataclasses import replace

    from stackresolve.detect.model import PythonInfo
    from stackresolve.detect.runner import SubprocessRunner
    from stackresolve.install.python import find_python, interpreter
    from stackresolve.install.target import read_target

    runner = SubprocessRunner()
    if python_exe:
        found = interpreter(runner, python_exe)
        if found is None:
            fail(f"--python-exe {python_exe!r}: does not run as Python")
    else:
        from stackresolve.cli.install import _this_os
        from stackresolve.fulllock import LockUnavailable, uv_binary

        try:
            uv = uv_binary()
        except LockUnavailable:
            uv = None
        target = read_target(text, lock_file, None, _this_os())
        found = find_python(target.pythons, target.os, runner, uv=uv)
    return replace(machine, python=PythonInfo(found.version, found.executable, found.how) if found else None)


def check_packages(text: str, lock_file: str, python_exe: Optional[str], fmt: str) -> None:
    import json

    from stackresolve.check import check_full_lock, parse_full_lock
    from stackresolve.request import InputError

    try:
        pins = parse_full_lock(text, lock_file)
    except InputError as exc:
        fail(str(exc))
    result = check_full_lock(pins, detect_machine(python_exe=python_exe))
    if fmt == "json":
        output(json.dumps({"schema": "stackresolve/check@1", "matches": result.matches,
                           "differences": [d.to_json() for d in result.differences],
                           "not_checked": [{"component": c, "why": w} for c, w in result.not_checked]},
                          indent=2) + "\n", None)
    else:
        lines = [f"stackresolve check: {len(pins)} packages pinned by {lock_file}"]
        lines += ["every pinned package is installed at its version"] if result.matches else \
            [f"{len(result.differences)} difference(s):"] + \
            [f"  {d.component}: expected {d.expected}, found {d.found}" for d in result.differences]
        lines += [f"not checked: {c}: {w}" for c, w in result.not_checked]
        output("\n".join(lines) + "\n", None)
    raise typer.Exit(Exit.OK if result.matches and not result.not_checked else Exit.FAILED)