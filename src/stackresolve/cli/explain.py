"""`stackresolve explain`."""

import sys
from typing import Optional

import typer

from stackresolve.cli.app import (
    Exit,
    Choice,
    command_app,
    detect_machine,
    emit_resolution,
    fail,
    fix_plan_formats,
    knowledge,
    os_choice,
    output,
    read_input,
)

LOG_LIMIT = 8 * 1024 * 1024  # logs end with the error: past this, the last 8 MiB are read
explain_app = command_app()


@explain_app.command()
def explain(
    text: Optional[str] = typer.Argument(None, help="The error message; '-' (or a pipe) reads the log from stdin."),
    file: Optional[str] = typer.Option(None, "--file", help="Read the log from this file."),
    fmt: str = typer.Option("text", "--format", "-f", click_type=Choice(fix_plan_formats, "--format"),
                            help="text, json, or a fix plan: pip, conda, apt, powershell, dockerfile."),
    tf: Optional[str] = typer.Option(None, "--tf", help="The TensorFlow in use, where the log does not say it."),
    torch: Optional[str] = typer.Option(None, "--torch", help="The PyTorch in use (a PyTorch fix plan), where the "
                                                               "log does not say it."),
    jax: Optional[str] = typer.Option(None, "--jax", help="The JAX in use (a JAX fix plan), where the log does not "
                                                           "say it."),
    gpu: Optional[str] = typer.Option(None, "--gpu", help="The GPU model, where the log does not say it."),
    driver: Optional[str] = typer.Option(None, "--driver", help="The NVIDIA driver, where the log does not say it."),
    os: Optional[str] = typer.Option(None, "--os", click_type=os_choice(),
                                     help="OS for the fix plan (default: from the text, or detected)."),
    no_detect: bool = typer.Option(False, "--no-detect", help="Do not probe this machine for the fix plan."),
) -> None:
    """Turn an error message into its meaning, likely cause and fix (exit 1 when the text is not recognised)."""
    # lazy: start-up (a command imports only what it runs: explain, request.parse, ...)
    from stackresolve.explain import (
        NOT_FIXED_BY_A_STACK, NOT_PLANNED_BY_EXPLAIN, FixOverrides, explain_text, fix_request, render_text,
    )
    from stackresolve.request.parse import parse_driver, parse_fix_versions, parse_os
    from stackresolve.knowledge.loader import KnowledgeError, error_knowledge
    from stackresolve.request.build import InputError

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
        parse_fix_versions(kb, tf, torch, jax)
        # checked here, kept as text: a fix request holds what the log shows, and both are read by read_driver
        overrides = FixOverrides(tf=tf, gpu=gpu, driver=str(parse_driver(driver)) if driver else None,
                                 os=parse_os(os).value if os else None, torch=torch, jax=jax)
        # the flags' framework and OS word the explanation too, not only the fix plan
        explanation = explain_text(text, error_knowledge(), framework=overrides.framework, os_name=overrides.os)
    except InputError as exc:
        fail(str(exc))
    except KnowledgeError as exc:
        fail(f"broken knowledge base: {exc}", Exit.FAILED)
    fix = fix_request(explanation, kb, overrides)
    top = explanation.problems[0].category if explanation.problems else None
    planned = explanation.has_problem and top not in NOT_FIXED_BY_A_STACK + NOT_PLANNED_BY_EXPLAIN
    if planned:
        # lazy: start-up (a command imports only what it runs: explain.plan)
        from stackresolve.explain.plan import fix_plan

        planned_fix = fix_plan(kb, fix, detect_machine(no_detect, gpu_only=True), top)
        resolution, narrowed, moved = planned_fix.resolution, planned_fix.keeps, planned_fix.moved
    else:
        resolution, narrowed, moved = None, "", ""
    if fmt == "text":
        body = "".join(f"note: {n}\n" for n in notes) + render_text(explanation, fix)
        if resolution is not None and resolution.stack is not None:
            body += f"\nA stack that fixes it: {resolution.stack.summary}\n"
            if moved:
                body += f"({moved})\n"
            if fix.framework is None:  # the message is CUDA's, cuDNN's or the loader's: any framework prints it
                body += "(the text names no framework, so this is TensorFlow's; --torch X or --jax X plans the " \
                        "fix for PyTorch or JAX)\n"
            stated = fix.framework_version if fix.framework in ("pytorch", "jax") else fix.tf
            if not stated:  # say which release the fix assumes, and how to give the right one
                framework = resolution.request.framework
                body += f"(the log names no {framework.display} release: this fix assumes {framework.display} " \
                        f"{resolution.stack.framework.version}; {framework.flag} with yours plans for it)\n"
            # lazy: start-up (a command imports only what it runs: formats.registry)
            from stackresolve.formats.registry import BY_NAME, usable_install_formats

            # only the formats that print a plan for this stack: none for another OS (no PowerShell for a Linux log),
            # no apt or Dockerfile where the install facts record no repository or base image for its CUDA line
            formats = "|".join(name for name in usable_install_formats(resolution, kb) if BY_NAME[name].fix_plan)
            if narrowed:  # `plan` has no option for the log's build: this command prints its plans
                body += f"Install plan: this command with --format {formats} (the plan " \
                        f"keeps {narrowed}; {plan_command(resolution)} alone plans the resolver's own pick)\n"
            else:
                body += f"Install plan: {plan_command(resolution)} --format {formats}\n"
        output(body, None)
    elif fmt == "json":
        # lazy: no start-up gain (already loaded by then); kept beside its use
        import json

        doc = explanation.to_json_dict()
        doc["requested"] = fix.to_json_dict()
        if notes:
            doc["input_notes"] = notes
        if resolution is not None:
            # lazy: start-up (a command imports only what it runs: formats.json_render)
            from stackresolve.formats import json_render as plan_document

            doc["fix_plan"] = plan_document.document(resolution, {})
            if narrowed:
                doc["fix_plan_keeps"] = narrowed
            if moved:
                doc["fix_plan_moved"] = moved
        output(json.dumps(doc, indent=2) + "\n", None)
    else:
        if resolution is None:
            if top in NOT_FIXED_BY_A_STACK:
                fail("this problem is fixed on the machine (its driver, user groups or container options), not by "
                     "another stack: `stackresolve explain` without --format says how", Exit.FAILED)
            if top in NOT_PLANNED_BY_EXPLAIN:
                fail("the fix is a ROCm build for this AMD GPU, which explain does not plan: `stackresolve explain` "
                     "without --format names it; `stackresolve plan` with the GPU (--gpu) plans it", Exit.FAILED)
            if fix.framework in ("pytorch", "jax"):
                flag = "--torch" if fix.framework == "pytorch" else "--jax"
                fail(f"no fix plan could be made from this text; use `stackresolve plan {flag} X`", Exit.FAILED)
            fail("the text names no TensorFlow or CUDA version to plan a fix for; use `stackresolve plan --tf X`",
                 Exit.FAILED)
        emit_resolution(resolution, kb, fmt, None)
    raise typer.Exit(Exit.OK if explanation.known else Exit.FAILED)


def plan_command(resolution) -> str:
    """The `stackresolve plan` command that prints this fix plan in every format (PyTorch and JAX plans name the
    GPU, driver and Python they were made for)."""
    stack, request = resolution.stack, resolution.request
    command = f"stackresolve plan {request.framework.flag} {stack.framework.version}"
    if request.framework.value != "tensorflow":
        gpu = next(iter(request.gpus), None)
        if gpu is not None:
            command += f" --gpu '{gpu.name}'" if gpu.name else f" --gpu-cc {gpu.cc}"
        if request.driver:
            command += f" --driver {request.driver}"
        if request.python:
            command += f" --python {request.python}"
    return command + f" --os {request.os}"
