"""`stackresolve detect`."""

from typing import Optional

import typer

from stackresolve.cli.app import Choice, command_app, detect_machine, output


detect_app = command_app()


@detect_app.command()
def detect(
    fmt: str = typer.Option("text", "--format", "-f", click_type=Choice(("text", "json"), "--format"),
                            help="text or json."),
    python_exe: Optional[str] = typer.Option(None, "--python-exe", help="Interpreter to inspect (default: this one)."),
) -> None:
    """Show what this machine has: GPUs, compute capability, driver, CUDA, cuDNN, Python, TensorFlow, PyTorch, JAX,
    OS."""
    # lazy: start-up (a command imports only what it runs: detect)
    import json

    from stackresolve.detect import render_text

    machine = detect_machine(python_exe=python_exe)
    output(json.dumps(machine.to_json_dict(), indent=2) + "\n" if fmt == "json" else render_text(machine), None)
