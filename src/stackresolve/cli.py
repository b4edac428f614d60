"""The command line: parse flags, call the library, render. No logic of its own."""

from __future__ import annotations

import sys
from typing import Optional

import typer

from stackresolve import __version__

app = typer.Typer(
    add_completion=False,
    no_args_is_help=True,
    pretty_exceptions_enable=False,
    rich_markup_mode=None,
    help="Resolve a working NVIDIA driver + CUDA + cuDNN + Python + TensorFlow stack and print how to install it.",
)


def plan_formats() -> tuple[str, ...]:
    from stackresolve.emit import PLAN_EMITTERS

    return (*PLAN_EMITTERS, "json")


class Exit:
    OK = 0
    FAILED = 1  # no consistent stack / check failed
    BAD_INPUT = 2


def fail(message: str, code: int = Exit.BAD_INPUT) -> None:
    typer.echo(f"stackresolve: error: {message}", err=True)
    raise typer.Exit(code)


def knowledge():
    from stackresolve.knowledge.loader import KnowledgeError, knowledge as load

    try:
        return load()
    except KnowledgeError as exc:
        fail(f"broken knowledge base: {exc}", Exit.FAILED)


def output(text: str, path: Optional[str], executable: bool = False) -> None:
    if path is None or path == "-":
        sys.stdout.write(text)
        return
    from stackresolve.files import atomic_write

    try:
        atomic_write(path, text, executable=executable)
    except OSError as exc:
        fail(f"-o {path!r}: cannot write ({exc.strerror or exc})")
    typer.echo(f"wrote {path}", err=True)


def detected_facts(no_detect: bool):
    """Probe the local machine unless told not to; returns the facts a Request needs (or None)."""
    if no_detect:
        return None
    from stackresolve.machine import probe_machine_facts

    return probe_machine_facts()


def choice(value: str, allowed: tuple[str, ...], flag: str) -> str:
    if value not in allowed:
        from difflib import get_close_matches

        near = get_close_matches(value, allowed, n=1)
        fail(f"{flag} {value!r}: use one of {', '.join(allowed)}" + (f" (did you mean {near[0]}?)" if near else ""))
    return value


@app.command()
def plan(
    tf: str = typer.Option("latest", "--tf", help="TensorFlow version: 1.15, 2, 2.3.4, '>=2.4,<2.8' or latest."),
    os: Optional[str] = typer.Option(None, "--os", help="linux, windows, macos or wsl2 (default: detected)."),
    gpu: Optional[str] = typer.Option(None, "--gpu", help="GPU model, e.g. 'GTX 1080 Ti', 'A100', 'RTX 4090'."),
    gpu_cc: Optional[str] = typer.Option(None, "--gpu-cc", help="GPU compute capability, e.g. 8.6."),
    driver: Optional[str] = typer.Option(None, "--driver", help="Installed NVIDIA driver version, e.g. 535.104.05."),
    python: Optional[str] = typer.Option(None, "--python", help="Python version to use, e.g. 3.7."),
    arch: Optional[str] = typer.Option(None, "--arch", help="CPU architecture: x86_64 (default), aarch64, arm64."),
    cpu: bool = typer.Option(False, "--cpu", help="Plan a CPU-only stack."),
    vendor: str = typer.Option("any", "--vendor", help="TF 1.15 builds: any (default), stock or nvidia."),
    with_driver: bool = typer.Option(False, "--with-driver", help="apt plan: also install the driver branch."),
    env_name: Optional[str] = typer.Option(None, "--env-name", help="conda plan: the environment's name."),
    fmt: str = typer.Option("text", "--format", "-f",
                            help="Output: text, json, pip, conda, apt, powershell, dockerfile or lock."),
    out: Optional[str] = typer.Option(None, "-o", "--output", help="Write to this file instead of stdout."),
    no_detect: bool = typer.Option(False, "--no-detect", help="Do not probe this machine; use flags only."),
) -> None:
    """Resolve a consistent stack for a TensorFlow target and print the plan (exit 1 when none exists)."""
    from stackresolve.request import InputError
    from stackresolve.resolve import resolve
    from stackresolve.target import Flags, build_request

    fmt = choice(fmt, plan_formats(), "--format")
    kb = knowledge()
    flags = Flags(tf=tf, os=os, arch=arch, gpu=gpu, gpu_cc=gpu_cc, driver=driver, python=python, cpu=cpu,
                  vendor=vendor, with_driver=with_driver)
    try:
        if env_name is not None:
            from stackresolve.emit.conda import validate_env_name

            validate_env_name(env_name)
        request = build_request(kb, flags, detected_facts(no_detect))
    except InputError as exc:
        fail(str(exc))
    resolution = resolve(kb, request)
    emit_resolution(resolution, kb, fmt, out, env_name)


def emit_resolution(resolution, kb, fmt: str, out: Optional[str], env_name: Optional[str] = None) -> None:
    """Print (or write) one format of a resolution; an impossible target prints its explanation, exit 1."""
    from stackresolve.emit import NEEDS_STACK, all_plans, render_plan

    if fmt == "json":
        from stackresolve.emit import json as json_emitter

        output(json_emitter.render(resolution, all_plans(resolution, kb, env_name)), out)
    elif resolution.stack is None and fmt in NEEDS_STACK:
        sys.stderr.write(render_plan("text", resolution, kb))
    else:
        output(render_plan(fmt, resolution, kb, env_name), out, executable=fmt in ("apt",))
    raise typer.Exit(Exit.FAILED if resolution.stack is None else Exit.OK)


@app.command()
def detect(
    fmt: str = typer.Option("text", "--format", "-f", help="text or json."),
    python_exe: Optional[str] = typer.Option(None, "--python-exe", help="Interpreter to inspect (default: this one)."),
) -> None:
    """Show what this machine has: GPUs, compute capability, driver, CUDA, cuDNN, Python, TensorFlow, OS."""
    import json

    from stackresolve.detect import render_text
    from stackresolve.machine import detect as detect_here

    fmt = choice(fmt, ("text", "json"), "--format")
    machine = detect_here(python_exe)
    output(json.dumps(machine.to_json_dict(), indent=2) + "\n" if fmt == "json" else render_text(machine), None)


@app.command()
def matrix(
    gpu: Optional[str] = typer.Option(None, "--gpu", help="GPU model."),
    gpu_cc: Optional[str] = typer.Option(None, "--gpu-cc", help="GPU compute capability."),
    os: Optional[str] = typer.Option(None, "--os", help="linux, windows, macos or wsl2 (default: linux and windows)."),
    driver: Optional[str] = typer.Option(None, "--driver", help="Installed NVIDIA driver version."),
    fmt: str = typer.Option("text", "--format", "-f", help="text or json."),
) -> None:
    """For every TensorFlow release line: whether and how it runs on this GPU and OS."""
    from stackresolve.matrix import build_matrix, render_json, render_text
    from stackresolve.request import InputError, parse_os
    from stackresolve.target import Flags, build_request

    fmt = choice(fmt, ("text", "json"), "--format")
    kb = knowledge()
    try:
        systems = [parse_os(os)] if os else ["linux", "windows"]
        request = build_request(kb, Flags(gpu=gpu, gpu_cc=gpu_cc, driver=driver, os=systems[0]), None)
    except InputError as exc:
        fail(str(exc))
    rows = build_matrix(kb, request, systems)
    output(render_json(rows, request) if fmt == "json" else render_text(rows, request), None)


@app.command()
def gpus(
    search: Optional[str] = typer.Argument(None, help="Only models whose name or alias contains this text."),
    fmt: str = typer.Option("text", "--format", "-f", help="text or json."),
) -> None:
    """List the GPU models the knowledge base knows, with compute capability."""
    from stackresolve.browse import gpus_json, gpus_text

    fmt = choice(fmt, ("text", "json"), "--format")
    kb = knowledge()
    output(gpus_json(kb, search) if fmt == "json" else gpus_text(kb, search), None)


@app.command()
def show(
    component: str = typer.Argument(..., help="What to show: tf."),
    version: str = typer.Argument(..., help="Release line or version, e.g. 1.15."),
    fmt: str = typer.Option("text", "--format", "-f", help="text or json."),
) -> None:
    """Show what the knowledge base says about a release, with sources."""
    from stackresolve.browse import show_tf_json, show_tf_text
    from stackresolve.request import InputError

    choice(component, ("tf",), "component")
    fmt = choice(fmt, ("text", "json"), "--format")
    kb = knowledge()
    try:
        output(show_tf_json(kb, version) if fmt == "json" else show_tf_text(kb, version), None)
    except InputError as exc:
        fail(str(exc))


@app.command()
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
    no_detect: bool = typer.Option(False, "--no-detect", help="Do not probe this machine; use flags only."),
    fmt: str = typer.Option("text", "--format", "-f", help="text or json."),
) -> None:
    """Compare this machine with a lock file: exit 0 when it matches, 1 with the differences."""
    from dataclasses import replace

    from stackresolve.check import CheckFacts, check_lock, parse_lock, render_json, render_text
    from stackresolve.request import (InputError, parse_cc, parse_driver, parse_os, parse_python,
                                      parse_version_flag)
    from stackresolve.target import lookup_gpu

    fmt = choice(fmt, ("text", "json"), "--format")
    try:
        with open(lock_file, encoding="utf-8") as handle:
            text = handle.read()
    except OSError as exc:
        fail(f"{lock_file}: cannot read ({exc.strerror or exc})")
    kb = knowledge()
    try:
        lock = parse_lock(text, lock_file)
        if no_detect:
            facts = CheckFacts()
        else:
            from stackresolve.machine import check_facts_from_machine, detect

            facts = check_facts_from_machine(detect(python_exe))
        if os:
            facts = replace(facts, os=parse_os(os))
        if driver:
            facts = replace(facts, driver=parse_driver(driver))
        if python:
            facts = replace(facts, python=parse_python(python))
        if cuda:
            facts = replace(facts, cuda_toolkits=(parse_version_flag(cuda, "--cuda"),))
        if cudnn:
            facts = replace(facts, cudnn=(parse_version_flag(cudnn, "--cudnn"),))
        if gpu:
            target = lookup_gpu(kb, gpu)
            facts = replace(facts, gpus=((target.name, target.cc),))
        elif gpu_cc:
            facts = replace(facts, gpus=(("GPU", parse_cc(gpu_cc, kb.known_ccs())),))
        differences = check_lock(lock, kb, facts)
    except InputError as exc:
        fail(str(exc))
    output(render_json(lock, differences) if fmt == "json" else render_text(lock, differences), None)
    raise typer.Exit(Exit.FAILED if differences else Exit.OK)


@app.command()
def explain(
    text: Optional[str] = typer.Argument(None, help="The error message (or pass --file, or pipe a log in)."),
    file: Optional[str] = typer.Option(None, "--file", help="Read the log from this file."),
    fmt: str = typer.Option("text", "--format", "-f",
                            help="text, json, or a fix plan: pip, conda, apt, powershell, dockerfile."),
    os: Optional[str] = typer.Option(None, "--os", help="OS for the fix plan (default: from the text, or detected)."),
    no_detect: bool = typer.Option(False, "--no-detect", help="Do not probe this machine for the fix plan."),
) -> None:
    """Turn an error message into its meaning, likely cause and fix (exit 1 when the text is not recognised)."""
    from stackresolve.explain import explain_text, render_text, requested_stack
    from stackresolve.knowledge.loader import KnowledgeError, error_knowledge

    fmt = choice(fmt, ("text", "json", *[f for f in plan_formats() if f not in ("text", "json", "lock")]),
                 "--format")
    if file is not None:
        try:
            with open(file, encoding="utf-8", errors="replace") as handle:
                text = handle.read()
        except OSError as exc:
            fail(f"--file {file!r}: cannot read ({exc.strerror or exc})")
    elif text is None:
        if sys.stdin is None or sys.stdin.isatty():
            fail("explain needs the error text: an argument, --file LOG, or a log on standard input")
        text = sys.stdin.read()
    if not text.strip():
        fail("explain: the error text is empty")
    try:
        explanation = explain_text(text, error_knowledge())
    except KnowledgeError as exc:
        fail(f"broken knowledge base: {exc}", Exit.FAILED)
    hints = requested_stack(explanation)
    resolution = fix_resolution(hints, os, no_detect) if explanation.has_problem else None
    if fmt == "text":
        body = render_text(explanation)
        if resolution is not None and resolution.stack is not None:
            body += f"\nA stack that fixes it: {resolution.stack.summary}\n"
            body += f"Install plan: stackresolve plan --tf {resolution.stack.framework.value['line']} " \
                    f"--os {resolution.request.os} --format pip|conda|apt|powershell|dockerfile\n"
        output(body, None)
    elif fmt == "json":
        import json

        doc = explanation.to_json_dict()
        doc["requested"] = hints
        if resolution is not None:
            from stackresolve.emit import json as json_emitter

            doc["fix_plan"] = json_emitter.document(resolution, {})
        output(json.dumps(doc, indent=2) + "\n", None)
    else:
        if resolution is None:
            fail("the text names no TensorFlow or CUDA version to plan a fix for; use `stackresolve plan --tf X`",
                 Exit.FAILED)
        emit_resolution(resolution, knowledge(), fmt, None)
    raise typer.Exit(Exit.OK if explanation.known else Exit.FAILED)


def fix_resolution(hints: dict, os_flag: Optional[str], no_detect: bool):
    """Resolve the stack an explained error points to (the TF it names, else one built for the CUDA it wants)."""
    from stackresolve.request import InputError
    from stackresolve.resolve import resolve
    from stackresolve.target import Flags, build_request, tf_line_for_cuda

    kb = knowledge()
    machine = detected_facts(no_detect)
    os_name = os_flag or hints.get("os") or (machine.os if machine else None) or "linux"
    tf = hints.get("tf")
    if not tf and hints.get("cuda"):
        tf = tf_line_for_cuda(kb, hints["cuda"], os_name)
    if not tf:
        return None
    flags = Flags(tf=tf, os=os_name, python=hints.get("python"), gpu_cc=hints.get("compute_capability"))
    try:
        return resolve(kb, build_request(kb, flags, machine))
    except InputError:
        return None


@app.command()
def doctor(
    tf: Optional[str] = typer.Option(None, "--tf", help="Check against this TensorFlow instead of the installed one."),
    python_exe: Optional[str] = typer.Option(None, "--python-exe", help="Interpreter whose environment to check."),
    fmt: str = typer.Option("text", "--format", "-f",
                            help="text, json, or the fix plan: pip, conda, apt, powershell, dockerfile."),
) -> None:
    """Diagnose the installed GPU stack; exit 0 when healthy, 1 when problems were found."""
    import json

    from stackresolve.doctor import doctor as run_doctor
    from stackresolve.request import InputError

    fmt = choice(fmt, ("text", "json", *[f for f in plan_formats() if f not in ("text", "json", "lock")]),
                 "--format")
    kb = knowledge()
    try:
        report = run_doctor(python_exe=python_exe, tf=tf, kb=kb)
    except InputError as exc:
        fail(str(exc))
    if fmt == "text":
        output(report.render_text(), None)
    elif fmt == "json":
        output(json.dumps(report.to_json_dict(), indent=2) + "\n", None)
    elif report.resolution is None or report.resolution.stack is None:
        fail("no stack to plan a fix for; see `stackresolve doctor` for the findings", Exit.FAILED)
    else:
        from stackresolve.emit import render_plan

        output(render_plan(fmt, report.resolution, kb), None)
    raise typer.Exit(report.exit_code)


def version_callback(value: bool) -> None:
    if value:
        typer.echo(f"stackresolve {__version__}")
        raise typer.Exit()


@app.callback()
def common(
    version: bool = typer.Option(False, "--version", callback=version_callback, is_eager=True,
                                 help="Print the version and exit."),
) -> None:
    """stackresolve: a GPU deep-learning stack that works on this machine."""


def main() -> None:
    app()


if __name__ == "__main__":
    main()
