"""The typer application, the exit codes and the helpers every command shares."""

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


def detect_machine(no_detect: bool = False, python_exe: Optional[str] = None, gpu_only: bool = False,
                   deadline=None):
    """Probe this machine unless told not to (None then). A GPU no probe gives a compute capability for is looked
    up by name in the knowledge base; one found only on the PCI bus (no driver yet) by its PCI id."""
    if no_detect:
        return None
    from stackresolve.detect import detect_machine as probe
    from stackresolve.knowledge.loader import nvidia_pci_ids

    return probe(python_exe=python_exe, gpu_only=gpu_only, deadline=deadline,
                 gpu_lookup=lambda name: knowledge().find_gpu(name), pci_table=nvidia_pci_ids)


def choice(value: str, allowed: tuple[str, ...], flag: str) -> str:
    if value not in allowed:
        from difflib import get_close_matches

        near = get_close_matches(value, allowed, n=1)
        fail(f"{flag} {value!r}: use one of {', '.join(allowed)}" + (f" (did you mean {near[0]}?)" if near else ""))
    return value


def plan_formats() -> tuple[str, ...]:
    from stackresolve.emit import PLAN_EMITTERS

    return (*PLAN_EMITTERS, "json")


def fix_plan_formats() -> tuple[str, ...]:
    """What explain and doctor can print: their own text or JSON, or a fix plan in an install format."""
    return ("text", "json", *[f for f in plan_formats() if f not in ("text", "json", "lock")])


def emit_resolution(resolution, kb, fmt: str, out: Optional[str], options=None) -> None:
    """Print (or write) one format of a resolution; an impossible target prints its explanation, exit 1."""
    from stackresolve.emit import NEEDS_STACK, all_plans, render_plan
    from stackresolve.plan import PlanOptions

    options = options or PlanOptions()
    if fmt == "json":
        from stackresolve.emit import plan_document

        output(plan_document.render(resolution, all_plans(resolution, kb, options)), out)
    elif resolution.stack is None and fmt in NEEDS_STACK:
        sys.stderr.write(render_plan("text", resolution, kb))
    else:
        output(render_plan(fmt, resolution, kb, options), out, executable=fmt in ("apt",))
    raise typer.Exit(Exit.FAILED if resolution.stack is None else Exit.OK)


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
