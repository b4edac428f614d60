"""`stackresolve install` and `stackresolve export`."""

import contextlib
import os
import signal
import sys
from pathlib import Path
from typing import List, Optional

import typer

from stackresolve.cli.app import (Choice, Exit, command_app, detect_machine, fail, knowledge, output,
                                  progress_reporter, read_input)

LOCK_LIMIT = 16 * 1024 * 1024  # a full lock of a CUDA stack with hashes is a few hundred kilobytes

install_app = command_app()
export_app = command_app()


@install_app.command()
def install(
    lock_file: Optional[str] = typer.Argument(None, help="A lock (plan --format lock, or a full lock: --format pip "
                                                         "--lock / pylock); default stackresolve.lock when no "
                                                         "--tf/--torch/--jax is given."),
    venv: str = typer.Option(..., "--venv", help="The virtual environment to create (a new or empty folder)."),
    tf: Optional[str] = typer.Option(None, "--tf", help="Plan and install TensorFlow: 1.15, 2.15, latest, ..."),
    torch: Optional[str] = typer.Option(None, "--torch", help="Plan and install PyTorch: 2.5, latest, ..."),
    jax: Optional[str] = typer.Option(None, "--jax", help="Plan and install JAX: 0.4, latest, ..."),
    gpu: Optional[str] = typer.Option(None, "--gpu", help="Plan for this GPU model (default: detected)."),
    gpu_cc: Optional[str] = typer.Option(None, "--gpu-cc", help="Plan for this compute capability."),
    gpu_gfx: Optional[str] = typer.Option(None, "--gpu-gfx", help="Plan for this AMD gfx target, e.g. gfx1100."),
    driver: Optional[str] = typer.Option(None, "--driver", help="Plan for this driver (default: detected)."),
    python: Optional[str] = typer.Option(None, "--python", help="Use this Python minor, e.g. 3.11."),
    cpu: bool = typer.Option(False, "--cpu", help="Plan a CPU-only stack."),
    vendor: str = typer.Option("any", "--vendor", help="TF 1.15 builds: any (default), stock or nvidia."),
    python_exe: Optional[str] = typer.Option(None, "--python-exe", help="Make the venv from this interpreter."),
    python_download: bool = typer.Option(False, "--python-download",
                                         help="Let uv download the Python when this machine has none."),
    installer: str = typer.Option("auto", "--installer", help="auto (uv when found, else pip), uv or pip."),
    reuse: bool = typer.Option(False, "--reuse", help="Install into an existing venv stackresolve did not make "
                                                      "(or one whose marker it cannot prove it wrote)."),
    skip_machine_check: bool = typer.Option(False, "--skip-machine-check",
                                            help="Install even when this machine does not match the lock (the "
                                                 "check --before-install that runs first: GPUs, driver)."),
    index_url: Optional[str] = typer.Option(None, "--index-url", help="The package index (default: pip's)."),
    find_links: Optional[List[str]] = typer.Option(None, "--find-links", help="Also look for wheels here."),
    no_index: bool = typer.Option(False, "--no-index", help="Only --find-links, no index."),
    no_detect: bool = typer.Option(False, "--no-detect", help="Plan from flags only (the checks still run here)."),
    fmt: str = typer.Option("text", "--format", "-f", click_type=Choice(("text", "json"), "--format"),
                            help="text or json."),
) -> None:
    """Install a lock or a plan into a new virtual environment and prove it works: the framework imports and sees the
    GPU, and check agrees (exit 0 only then)."""
    # lazy: start-up (a command imports only what it runs: lock.full, install.run, ...)
    from stackresolve.cli.app import choice
    from stackresolve.lock.full import optional_uv
    from stackresolve.install.run import (INSTALLERS, NETWORK_TIMEOUT, InstallFailed, InstallOptions,
                                          install as run_install, render_text)
    from stackresolve.request.build import InputError

    installer = choice(installer, INSTALLERS, "--installer")
    if not venv.strip():
        fail("--venv '': name the folder for the virtual environment")
    kb = knowledge()
    alternatives: tuple[str, ...] = ()
    machine = None  # detected while planning (reused by the machine check)
    try:
        if tf or torch or jax:
            if lock_file is not None:
                fail(f"give a lock file ({lock_file!r}) or a target (--tf/--torch/--jax), not both")
            target, lock, alternatives, machine = _planned(kb, tf, torch, jax, gpu, gpu_cc, driver, python, cpu,
                                                           vendor, no_detect, gpu_gfx)
        else:
            if any((gpu, gpu_cc, gpu_gfx, driver, cpu)):
                fail("--gpu/--gpu-cc/--gpu-gfx/--driver/--cpu plan a target: give --tf, --torch or --jax with them (a lock "
                     "already holds its stack)")
            target, lock = _from_file(kb, lock_file or "stackresolve.lock", python)
        options = InstallOptions(venv=Path(venv), installer=installer, reuse=reuse, python=python,
                                 python_exe=python_exe, python_download=python_download, index_url=index_url,
                                 find_links=tuple(find_links or ()), no_index=no_index)
        uv = optional_uv()
        # lazy: start-up (a command imports only what it runs: detect.runner)
        from stackresolve.detect.runner import SubprocessRunner

        differences = () if skip_machine_check else machine_differences(kb, target, lock, machine)
        if differences:
            _refuse_machine(target, options, differences, fmt)
        os.environ.setdefault("UV_HTTP_TIMEOUT", str(NETWORK_TIMEOUT))  # uv's per-request deadline, for its children
        with terminate_as_interrupt():
            report = run_install(target, options, runner=SubprocessRunner(max_output=64 << 20), uv=uv, host=host(),
                                 check=_checker(kb, target, lock), progress=progress_reporter())
    except InputError as exc:
        fail(str(exc))
    except InstallFailed as exc:
        # lazy: start-up (a command imports only what it runs: formats.header)
        from stackresolve.formats.header import one_line

        sys.stderr.write(f"stackresolve: error: {one_line(str(exc))}\n")
        for line in exc.tail:
            sys.stderr.write(f"  | {one_line(line)}\n")
        hint = unreachable_index_hint(kb, target, exc, alternatives)
        if hint:
            sys.stderr.write(f"stackresolve: {one_line(hint)}\n")
        raise typer.Exit(exc.code)
    if fmt == "json":
        # lazy: no start-up gain (already loaded by then); kept beside its use
        import json

        output(json.dumps(report.to_json(), indent=2) + "\n", None)
    else:
        output(render_text(report), None)
    raise typer.Exit(Exit.OK if report.ok else Exit.FAILED)


def _planned(kb, tf, torch, jax, gpu, gpu_cc, driver, python, cpu, vendor, no_detect, gpu_gfx=None):
    """Plan flags: resolve as `plan` does; no stack is exit 1 with the plan's own explanation."""
    # lazy: start-up (a command imports only what it runs: request.parse, install.target, ...)
    from stackresolve.request.parse import Flags, request_from_flags
    from stackresolve.install.target import from_resolution, with_knowledge
    from stackresolve.resolve import resolve

    from stackresolve.cli.plan import environ_gfx

    flags = Flags(tf=tf or "latest", torch=torch, jax=jax, gpu=gpu, gpu_cc=gpu_cc, driver=driver, python=python,
                  cpu=cpu, vendor=vendor, gpu_gfx=gpu_gfx, gpu_gfx_env=environ_gfx())
    machine = detect_machine(no_detect, gpu_only=True)
    request = request_from_flags(kb, flags, machine)
    resolution = resolve(kb, request)
    if resolution.stack is None:
        # lazy: start-up (a command imports only what it runs: formats.render)
        from stackresolve.formats.render import render_plan

        sys.stderr.write(render_plan("text", resolution, kb))
        raise typer.Exit(Exit.FAILED)
    target = with_knowledge(from_resolution(resolution), kb)
    alternatives = tuple(f"{a.stack.framework.label} ({a.why})" for a in resolution.alternatives if a.stack)
    return target, target.lock, alternatives, machine


def _from_file(kb, name: str, python: Optional[str]):
    # lazy: start-up (a command imports only what it runs: install.target)
    from stackresolve.install.target import read_target, with_knowledge

    text = read_input(name, LOCK_LIMIT, what="lock file").text
    target = with_knowledge(read_target(text, name, python, host().os), kb)
    return target, target.lock


def machine_differences(kb, target, lock, machine=None) -> tuple:
    """What `check --before-install` reports for this machine, before anything is made: the lock's GPUs and driver
    (a full lock records only whether it is a GPU stack). The OS and the Python are install's own first steps."""
    # lazy: start-up (a command imports only what it runs: lock.check)
    from stackresolve.lock.check import Difference, check_lock

    machine = machine or detect_machine(gpu_only=True)
    if lock is not None:
        return check_lock(lock, kb, machine, frozenset(("gpus", "driver")), before_install=True,
                          driver_missing="no NVIDIA driver was found on this machine").differences
    if target.gpu and not machine.gpus:
        return (Difference("gpu", "an NVIDIA GPU", "none", f"{target.label} is a GPU stack (the lock's header says "
                                                           f"CUDA); no NVIDIA GPU was found"),)
    return ()


def _refuse_machine(target, options, differences, fmt: str) -> None:
    """Exit 1 with the machine check's differences; nothing was made."""
    # lazy: start-up (a command imports only what it runs: install.run)
    from stackresolve.install.run import InstallReport

    report = InstallReport(target, options.venv)
    report.findings = [f"this machine does not match the lock (nothing was installed): {d.component}: expected "
                       f"{d.expected}, found {d.found}: {d.message}" for d in differences] + \
        ["pass --skip-machine-check to install anyway (`stackresolve check --before-install` shows the same)"]
    report.machine_check = [d.to_json() for d in differences]
    if fmt == "json":
        # lazy: no start-up gain (already loaded by then); kept beside its use
        import json

        output(json.dumps(report.to_json(), indent=2) + "\n", None)
    else:
        # lazy: start-up (a command imports only what it runs: formats.header)
        from stackresolve.formats.header import one_line

        for line in report.findings:
            sys.stderr.write(f"stackresolve: error: {one_line(line)}\n")
    raise typer.Exit(Exit.FAILED)


def unreachable_index_hint(kb, target, exc, alternatives: tuple[str, ...]) -> str:
    """When the installer could not reach NVIDIA's index (the stack's own), the other ways to this stack: the
    plan's own alternatives where install planned it, else the two the knowledge base always has (NVIDIA's NGC
    container, the stock build)."""
    # lazy: no start-up gain (already loaded by then); kept beside its use
    import re

    if not kb.nvidia_index_url or kb.nvidia_index_url not in target.index_args or \
            not exc.step.startswith("installing"):
        return ""
    text = " ".join(exc.tail).lower()
    if not re.search(r"connect|resolve|dns|timed? ?out|unreachable|network|failed to fetch|max retries|ssl|"
                     r"temporary failure|name or service", text):
        return ""
    others = "; ".join(alternatives) or ("NVIDIA's NGC TensorFlow 1 container (`stackresolve plan --tf 1.15 "
                                         "--vendor nvidia --format dockerfile`), or the stock build (`--vendor stock`)")
    return (f"NVIDIA's index ({kb.nvidia_index_url}) could not be reached; the other ways to this stack: {others}")


def host():
    """This machine for install: its OS (WSL2 included) and Ubuntu release, from detect's os-release reader."""
    # lazy: start-up (a command imports only what it runs: detect.fs, detect.osinfo, ...)
    from stackresolve.detect.fs import LocalFS
    from stackresolve.detect.osinfo import probe_os
    from stackresolve.install.run import Host
    from stackresolve.model.enums import Os

    info = probe_os(LocalFS(), os.environ)
    name = "wsl2" if info.wsl else info.system
    return Host(Os(name) if name in Os.names() else Os.LINUX,
                info.release if info.distro == "ubuntu" and info.release else None)


@contextlib.contextmanager
def terminate_as_interrupt():
    """SIGTERM and SIGHUP (a CI job cancelled, a closed terminal, `timeout`) end the install as Ctrl-C does: the
    installer's process group is killed and the venv this run made is removed."""
    def interrupt(_signum, _frame):
        raise KeyboardInterrupt

    previous = {}
    for name in ("SIGTERM", "SIGHUP"):
        number = getattr(signal, name, None)
        if number is not None:
            previous[number] = signal.signal(number, interrupt)
    try:
        yield
    finally:
        for number, handler in previous.items():
            signal.signal(number, handler)


def _checker(kb, target, lock):
    """`check` of the new venv: the lock's facts against this machine, with the venv's interpreter inspected (a
    full lock: every pinned package at its version)."""

    def run(python_exe: str):
        # lazy: start-up (a command imports only what it runs: lock.check)
        from stackresolve.lock.check import FACTS, check_full_lock, check_lock
        from stackresolve.lock.check import render_text as check_text

        machine = detect_machine(python_exe=python_exe)
        if lock is None:
            result = check_full_lock(target.pins, machine)
            ok = result.matches and not result.not_checked
            lines = [f"{d.component}: expected {d.expected}, found {d.found}" for d in result.differences] or \
                [f"every one of the {len(target.pins)} pinned packages is installed at its version"]
            return ok, tuple(lines)
        result = check_lock(lock, kb, machine, frozenset(FACTS))
        return result.matches, tuple(line.strip() for line in check_text(lock, result).splitlines()[1:])

    return run


@export_app.command()
def export(
    lock_file: str = typer.Argument("stackresolve.lock", help="The lock file written by `plan --format lock`."),
    out: Optional[str] = typer.Option(None, "-o", "--output", help="Write to this file instead of stdout."),
) -> None:
    """Print a lock's requirements file (index option first), for `pip install -r` or `uv pip install -r`."""
    # lazy: start-up (a command imports only what it runs: formats.header, install.run, ...)
    from stackresolve.formats.header import one_line
    from stackresolve.install.run import requirements_text
    from stackresolve.install.target import from_lock_document, refuse_pip_first, with_knowledge
    from stackresolve.formats.lock_read import parse_lock
    from stackresolve.request.build import InputError

    text = read_input(lock_file, LOCK_LIMIT, what="lock file").text
    try:
        locked = parse_lock(text, lock_file)  # a full lock or anything else: its own one-line message
        # lazy: no start-up gain (already loaded by then); kept beside its use
        import json

        target = with_knowledge(from_lock_document(json.loads(text), text, lock_file), knowledge())
        refuse_pip_first(target)  # its requirements alone would not install
    except InputError as exc:
        fail(str(exc))
    header = f"# {locked.label}: the requirements of {lock_file} for Python {target.python_range} (stackresolve export)"
    output(f"{one_line(header)}\n" + "".join(f"{one_line(l)}\n" for l in
                                            requirements_text(target, "pip").splitlines()), out)
    raise typer.Exit(Exit.OK)
