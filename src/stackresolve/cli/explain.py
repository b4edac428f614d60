"""`stackresolve explain`."""

import sys
from typing import Optional

import typer

from stackresolve.cli.app import command_app, Exit, choice, detect_machine, emit_resolution, fail, fix_plan_formats, \
    knowledge, output


explain_app = command_app()


@explain_app.command()
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

    fmt = choice(fmt, fix_plan_formats(), "--format")
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
            body += f"Install plan: stackresolve plan --tf {resolution.stack.framework.line} " \
                    f"--os {resolution.request.os} --format pip|conda|apt|powershell|dockerfile\n"
        output(body, None)
    elif fmt == "json":
        import json

        doc = explanation.to_json_dict()
        doc["requested"] = hints
        if resolution is not None:
            from stackresolve.emit import plan_document

            doc["fix_plan"] = plan_document.document(resolution, {})
        output(json.dumps(doc, indent=2) + "\n", None)
    else:
        if resolution is None:
            fail("the text names no TensorFlow or CUDA version to plan a fix for; use `stackresolve plan --tf X`",
                 Exit.FAILED)
        emit_resolution(resolution, knowledge(), fmt, None)
    raise typer.Exit(Exit.OK if explanation.known else Exit.FAILED)


def fix_resolution(hints: dict, os_flag: Optional[str], no_detect: bool):
    """Resolve the stack an explained error points to (the TF it names, else one built for the CUDA it wants)."""
    from stackresolve.request import Flags, InputError, build_request, machine_os, tf_line_for_cuda
    from stackresolve.resolve import resolve

    kb = knowledge()
    machine = detect_machine(no_detect, gpu_only=True)
    detected_os = machine_os(machine) if machine is not None else None
    os_name = os_flag or hints.get("os") or (detected_os.value if detected_os else None) or "linux"
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
