"""`stackresolve explain`."""

import sys
from typing import Optional

import typer

from stackresolve.cli.app import (
    Exit,
    command_app,
    choice,
    detect_machine,
    emit_resolution,
    fail,
    fix_plan_formats,
    knowledge,
    output,
    read_input,
)

LOG_LIMIT = 8 * 1024 * 1024  # logs end with the error: past this, the last 8 MiB are read
explain_app = command_app()


@explain_app.command()
def explain(
    text: Optional[str] = typer.Argument(None, help="The error message; '-' (or a pipe) reads the log from stdin."),
    file: Optional[str] = typer.Option(None, "--file", help="Read the log from this file."),
    fmt: str = typer.Option("text", "--format", "-f",
                            help="text, json, or a fix plan: pip, conda, apt, powershell, dockerfile."),
    tf: Optional[str] = typer.Option(None, "--tf", help="The TensorFlow in use, where the log does not say it."),
    gpu: Optional[str] = typer.Option(None, "--gpu", help="The GPU model, where the log does not say it."),
    driver: Optional[str] = typer.Option(None, "--driver", help="The NVIDIA driver, where the log does not say it."),
    os: Optional[str] = typer.Option(None, "--os", help="OS for the fix plan (default: from the text, or detected)."),
    no_detect: bool = typer.Option(False, "--no-detect", help="Do not probe this machine for the fix plan."),
) -> None:
    """Turn an error message into its meaning, likely cause and fix (exit 1 when the text is not recognised)."""
    from stackresolve.explain import FixOverrides, explain_text, fix_request, render_text
    from stackresolve.knowledge.loader import KnowledgeError, error_knowledge
    from stackresolve.request import InputError, parse_driver, parse_os

    fmt = choice(fmt, fix_plan_formats(), "--format")
    notes: list[str] = []
    if file is not None or text == "-" or text is None:
        if file is None and text is None and (sys.stdin is None or sys.stdin.isatty()):
            fail("explain needs the error text: an argument, --file LOG, or '-' with the log on standard input")
        log = read_input(file if file is not None else "-", LOG_LIMIT, what="log", keep_tail=True)
        text = log.text
        if log.truncated:
            notes.append(f"the log is longer than {LOG_LIMIT // (1024 * 1024)} MiB: only its last part was read")
        if log.encoding_note:
            notes.append(f"the log is {log.encoding_note}")
    if not text.strip():
        fail("explain: the error text is empty")
    kb = knowledge()
    try:
        overrides = FixOverrides(tf=tf, gpu=gpu, driver=parse_driver(driver) if driver else None,
                                 os=parse_os(os).value if os else None)
        explanation = explain_text(text, error_knowledge())
    except InputError as exc:
        fail(str(exc))
    except KnowledgeError as exc:
        fail(f"broken knowledge base: {exc}", Exit.FAILED)
    fix = fix_request(explanation, kb.tested_builds, overrides, kb.compiled_archs)
    resolution = fix_resolution(kb, fix, no_detect) if explanation.has_problem else None
    if fmt == "text":
        body = "".join(f"note: {n}\n" for n in notes) + render_text(explanation, fix)
        if resolution is not None and resolution.stack is not None:
            body += f"\nA stack that fixes it: {resolution.stack.summary}\n"
            body += f"Install plan: stackresolve plan --tf {resolution.stack.framework.version} " \
                    f"--os {resolution.request.os} --format pip|conda|apt|powershell|dockerfile\n"
        output(body, None)
    elif fmt == "json":
        import json

        doc = explanation.to_json_dict()
        doc["requested"] = fix.to_json_dict()
        if notes:
            doc["input_notes"] = notes
        if resolution is not None:
            from stackresolve.emit import plan_document

            doc["fix_plan"] = plan_document.document(resolution, {})
        output(json.dumps(doc, indent=2) + "\n", None)
    else:
        if resolution is None:
            fail("the text names no TensorFlow or CUDA version to plan a fix for; use `stackresolve plan --tf X`",
                 Exit.FAILED)
        emit_resolution(resolution, kb, fmt, None)
    raise typer.Exit(Exit.OK if explanation.known else Exit.FAILED)


def fix_resolution(kb, fix, no_detect: bool):
    """The stack that fixes an explained error: the user's own TensorFlow (exact where the log names the
    release), else the newest of the candidate lines the log's libraries point to that fits this machine."""
    from stackresolve.request import Flags, InputError, build_request, machine_os
    from stackresolve.resolve import resolve

    machine = detect_machine(no_detect, gpu_only=True)
    detected_os = machine_os(machine) if machine is not None else None
    os_name = fix.os or (detected_os.value if detected_os else None) or "linux"
    targets = [fix.tf] if fix.tf else sorted(fix.tf_candidates, key=_version_key, reverse=True)
    for tf in targets:
        for gpu, gpu_cc in ((fix.gpu, None), (None, fix.compute_capability), (None, None)):
            flags = Flags(tf=tf, os=os_name, python=fix.python, gpu=gpu, gpu_cc=gpu_cc, driver=fix.driver)
            try:
                resolution = resolve(kb, build_request(kb, flags, machine))
            except InputError:
                continue  # a GPU name or version the knowledge base does not know: plan without it
            if resolution.stack is not None or tf is targets[-1]:
                return resolution
            break
    return None


def _version_key(version: str):
    from packaging.version import Version

    return Version(version)
