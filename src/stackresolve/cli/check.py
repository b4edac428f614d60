"""`stackresolve check`."""

from pathlib import Path
from typing import Optional

import typer

from stackresolve.cli.app import (Choice, command_app, Exit, detect_machine, fail, knowledge, os_choice, output,
                                  read_input)

LOCK_LIMIT = 4 * 1024 * 1024  # a lock is a few kilobytes


check_app = command_app()


@check_app.command()
def check(
    lock_file: str = typer.Argument("stackresolve.lock", help="The lock file written by `plan --format lock`."),
    os: Optional[str] = typer.Option(None, "--os", click_type=os_choice(),
                                     help="Check as if on this OS (default: detected)."),
    driver: Optional[str] = typer.Option(None, "--driver", help="Check against this driver (default: detected)."),
    gpu: Optional[str] = typer.Option(None, "--gpu", help="Check against this GPU model (default: detected)."),
    gpu_cc: Optional[str] = typer.Option(None, "--gpu-cc", help="Check against this compute capability."),
    gpu_gfx: Optional[str] = typer.Option(None, "--gpu-gfx", help="Check against this AMD gfx target, e.g. gfx1100."),
    python: Optional[str] = typer.Option(None, "--python", help="Check against this Python (default: detected)."),
    cuda: Optional[str] = typer.Option(None, "--cuda", help="Installed CUDA toolkit version (default: detected)."),
    cudnn: Optional[str] = typer.Option(None, "--cudnn", help="Installed cuDNN version (default: detected)."),
    python_exe: Optional[str] = typer.Option(None, "--python-exe", help="Interpreter whose packages to check."),
    before_install: bool = typer.Option(False, "--before-install",
                                        help="Compare only what exists before installing: OS, GPUs, driver, and the "
                                             "Python the install will use (--python, --python-exe, or found)."),
    no_detect: bool = typer.Option(False, "--no-detect", help="Do not probe this machine; use flags only."),
    fmt: str = typer.Option("text", "--format", "-f", click_type=Choice(("text", "json"), "--format"),
                            help="text or json."),
) -> None:
    """Compare this machine with a lock file: exit 0 when it matches, 1 with the differences."""
    # lazy: start-up (a command imports only what it runs: lock.check, request.parse, ...)
    from stackresolve.lock.check import FACTS, check_lock, render_json, render_text
    from stackresolve.request.parse import MachineFlags, apply_flags
    from stackresolve.formats.lock_read import parse_lock
    from stackresolve.request.build import InputError

    text = read_input(lock_file, LOCK_LIMIT, what="lock file").text
    if not text.lstrip().startswith(("{", "[", '"')):  # a full lock (plan --format pip --lock): the packages
        if before_install:
            check_full_lock_python(text, lock_file, python, python_exe, fmt)
        check_packages(text, lock_file, python_exe, fmt)
    kb = knowledge()
    flags = MachineFlags(os=os, driver=driver, gpu=gpu, gpu_cc=gpu_cc, python=python, cuda=cuda, cudnn=cudnn,
                         gpu_gfx=gpu_gfx)
    missing = None
    try:
        lock = parse_lock(text, lock_file)
        if no_detect:
            machine, observed = apply_flags(kb, None, flags)
        else:
            machine, _ = apply_flags(kb, detect_machine(python_exe=python_exe, gpu_only=before_install), flags)
            observed = frozenset(FACTS)
            if before_install and not python:
                machine, missing = _python_to_be_used(machine, text, lock_file, python_exe)
        result = check_lock(lock, kb, machine, observed, before_install=before_install, python_missing=missing)
    except InputError as exc:
        fail(str(exc))
    output(render_json(result) if fmt == "json" else render_text(lock, result), None)
    raise typer.Exit(Exit.OK if result.matches else Exit.FAILED)


def _python_install_would_use(text: str, lock_file: str, python_exe: Optional[str]):
    """(target, the interpreter `install` would make the venv from or None, why none) for a lock: install's own
    python_to_use (--python-exe, else the first of the lock's Pythons this machine has)."""
    # lazy: start-up (a command imports only what it runs: cli.install, detect.runner, ...)
    from stackresolve.cli.install import host
    from stackresolve.detect.runner import SubprocessRunner
    from stackresolve.lock.full import optional_uv
    from stackresolve.install.run import InstallFailed, InstallOptions, PythonMismatch, python_to_use
    from stackresolve.install.target import read_target
    from stackresolve.request.build import InputError

    here = host()
    try:
        target = read_target(text, lock_file, None, here.os)
        options = InstallOptions(venv=Path("."), python_exe=python_exe)
        return target, python_to_use(target, options, SubprocessRunner(), optional_uv(), here), None
    except PythonMismatch as exc:  # it runs, outside the lock's range: a difference, compared as any Python is
        return target, exc.found, None
    except InputError as exc:
        fail(str(exc))
    except InstallFailed as exc:
        return target, None, exc.message


def _python_to_be_used(machine, text: str, lock_file: str, python_exe: Optional[str]):
    """Before installing, the Python is the one `install` would use; none: check says so, with how to get one."""
    # lazy: start-up (a command imports only what it runs: detect.model)
    from dataclasses import replace

    from stackresolve.model.machine import PythonInfo

    _target, found, missing = _python_install_would_use(text, lock_file, python_exe)
    python = PythonInfo(found.version, found.executable, found.how) if found else None
    return replace(machine, python=python), missing


def check_full_lock_python(text: str, lock_file: str, python: Optional[str], python_exe: Optional[str],
                           fmt: str) -> None:
    """Before installing a full lock, the one thing to compare is the Python it was resolved for: named with
    --python, or the one `install` would use."""
    if python:
        # lazy: start-up (a command imports only what it runs: cli.install, install.target, ...)
        from stackresolve.cli.install import host
        from stackresolve.install.target import read_target
        from stackresolve.request.build import InputError

        try:
            target = read_target(text, lock_file, None, host().os)
        except InputError as exc:
            fail(str(exc))
        ok, found = python == target.pythons[0], f"{python} (--python)"
    else:
        target, chosen, missing = _python_install_would_use(text, lock_file, python_exe)
        ok = chosen is not None and chosen.minor == target.pythons[0]
        found = f"{chosen.version} ({chosen.how}: {chosen.executable})" if chosen else missing
    if fmt == "json":
        # lazy: start-up (a command imports only what it runs: lock.check)
        from stackresolve.lock.check import CheckResult, Difference, render_json

        differences = () if ok else (Difference("python", target.pythons[0], found, found),)
        output(render_json(CheckResult(differences, (("packages", "--before-install: compared after installing"),))),
               None)
    else:
        output(f"stackresolve check: {target.label} ({lock_file}, resolved for Python {target.pythons[0]})\n"
               + (f"this machine has the Python it needs: {found}\n" if ok else
                  f"1 difference(s):\n  python: {found}\n")
               + "not checked:\n  packages: --before-install: compared after installing\n", None)
    raise typer.Exit(Exit.OK if ok else Exit.FAILED)


def check_packages(text: str, lock_file: str, python_exe: Optional[str], fmt: str) -> None:
    # lazy: start-up (a command imports only what it runs: lock.check, request.build)
    from stackresolve.lock.check import check_full_lock, parse_full_lock, render_json
    from stackresolve.request.build import InputError

    try:
        pins = parse_full_lock(text, lock_file)
    except InputError as exc:
        fail(str(exc))
    result = check_full_lock(pins, detect_machine(python_exe=python_exe))
    if fmt == "json":
        output(render_json(result), None)
    else:
        lines = [f"stackresolve check: {len(pins)} packages pinned by {lock_file}"]
        lines += ["every pinned package is installed at its version"] if result.matches else \
            [f"{len(result.differences)} difference(s):"] + \
            [f"  {d.component}: expected {d.expected}, found {d.found}" for d in result.differences]
        lines += [f"not checked: {c}: {w}" for c, w in result.not_checked]
        output("\n".join(lines) + "\n", None)
    raise typer.Exit(Exit.OK if result.matches and not result.not_checked else Exit.FAILED)