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
    torch: Optional[str] = typer.Option(None, "--torch", help="The PyTorch in use (a PyTorch fix plan), where the "
                                                               "log does not say it."),
    jax: Optional[str] = typer.Option(None, "--jax", help="The JAX in use (a JAX fix plan), where the log does not "
                                                           "say it."),
    gpu: Optional[str] = typer.Option(None, "--gpu", help="The GPU model, where the log does not say it."),
    driver: Optional[str] = typer.Option(None, "--driver", help="The NVIDIA driver, where the log does not say it."),
    os: Optional[str] = typer.Option(None, "--os", help="OS for the fix plan (default: from the text, or detected)."),
    no_detect: bool = typer.Option(False, "--no-detect", help="Do not probe this machine for the fix plan."),
) -> None:
    """Turn an error message into its meaning, likely cause and fix (exit 1 when the text is not recognised)."""
    from stackresolve.explain import NOT_FIXED_BY_A_STACK, FixOverrides, explain_text, fix_request, render_text
    from stackresolve.knowledge.loader import KnowledgeError, error_knowledge
    from stackresolve.model.enums import Framework
    from stackresolve.request import InputError, parse_driver, parse_os, parse_version_spec, validate_version

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
        if sum(v is not None for v in (tf, torch, jax)) > 1:
            raise InputError("give one of --tf, --torch and --jax: a fix plan is for one framework")
        for framework, value in ((Framework.PYTORCH, torch), (Framework.JAX, jax)):
            if value is not None:
                validate_version(kb, framework, value)
        if tf is not None:
            parse_version_spec(tf, Framework.TENSORFLOW)  # a version, whether or not a release has it
        overrides = FixOverrides(tf=tf, gpu=gpu, driver=parse_driver(driver) if driver else None,
                                 os=parse_os(os).value if os else None, torch=torch, jax=jax)
        explanation = explain_text(text, error_knowledge())
    except InputError as exc:
        fail(str(exc))
    except KnowledgeError as exc:
        fail(f"broken knowledge base: {exc}", Exit.FAILED)
    fix = fix_request(explanation, kb.tested_builds, overrides, kb.compiled_archs)
    top = explanation.problems[0].category if explanation.problems else None
    planned = explanation.has_problem and top not in NOT_FIXED_BY_A_STACK
    resolution, narrowed = fix_resolution(kb, fix, no_detect, top) if planned else (None, "")
    if fmt == "text":
        body = "".join(f"note: {n}\n" for n in notes) + render_text(explanation, fix)
        if resolution is not None and resolution.stack is not None:
            body += f"\nA stack that fixes it: {resolution.stack.summary}\n"
            if fix.framework is None:  # the message is CUDA's, cuDNN's or the loader's: any framework prints it
                body += "(the text names no framework, so this is TensorFlow's; --torch X or --jax X plans the " \
                        "fix for PyTorch or JAX)\n"
            if narrowed:  # `plan` has no option for the log's build: this command prints its plans
                body += f"Install plan: this command with --format pip|conda|apt|powershell|dockerfile (the plan " \
                        f"keeps {narrowed}; {plan_command(resolution)} alone plans the resolver's own pick)\n"
            else:
                body += f"Install plan: {plan_command(resolution)} --format pip|conda|apt|powershell|dockerfile\n"
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
            if narrowed:
                doc["fix_plan_keeps"] = narrowed
        output(json.dumps(doc, indent=2) + "\n", None)
    else:
        if resolution is None:
            if top in NOT_FIXED_BY_A_STACK:
                fail("this problem is fixed on the machine (its driver), not by another stack: `stackresolve "
                     "explain` without --format says how", Exit.FAILED)
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


def fix_resolution(kb, fix, no_detect: bool, category: str | None = None):
    """(the stack that fixes an explained error, or None; the log's build it keeps where `plan` has no option
    for it, else ""). TensorFlow: the user's own TensorFlow (exact where the log names the release), else the
    newest of the candidate lines the log's libraries point to that fits this machine. PyTorch and JAX: see
    framework_fix_resolution."""
    from stackresolve.request import machine_os

    machine = detect_machine(no_detect, gpu_only=True)
    detected_os = machine_os(machine) if machine is not None else None
    os_name = fix.os or (detected_os.value if detected_os else None) or "linux"
    from stackresolve.explain import GPU_CATEGORIES

    needs_gpu = category in (*GPU_CATEGORIES, "cpu-only-build") and category != "no-gpu-detected"
    if machine is not None and not machine.gpus and needs_gpu:
        machine = None  # the log comes from a GPU machine (a missing CUDA library, a driver, a kernel): plan for one
    if fix.framework in ("pytorch", "jax"):
        return framework_fix_resolution(kb, fix, machine, os_name)
    return tf_fix_resolution(kb, fix, machine, os_name), ""


def tf_fix_resolution(kb, fix, machine, os_name: str):
    """TensorFlow's fix plan: the log's release (or the newest candidate line) with its GPU, else without it."""
    from stackresolve.request import Flags, InputError, build_request
    from stackresolve.resolve import resolve

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


def driver_for_cuda(kb, cuda: str, os_name: str) -> str | None:
    """The oldest driver that supports a CUDA version: what a framework's "found version 11040" (the driver
    supports CUDA up to 11.4) says of the driver, as NVIDIA's table gives each CUDA release's minimum."""
    toolkit = kb.toolkit(cuda)
    if toolkit is None:
        return None
    return (toolkit.driver_windows if os_name in ("windows", "wsl2") else toolkit.driver_linux) or None


def logged_build(fix):
    """The build the log names, as a filter of the resolver's candidates: PyTorch's CUDA variant (2.5.1+cu124),
    JAX's CUDA major (jax_cuda12_plugin, jaxlib 0.4.23+cuda12.cudnn89); None where the log names none."""
    import re

    variant = fix.variant or ""
    if fix.framework == "pytorch" and re.fullmatch(r"cu\d{2,3}", variant):
        return lambda c: c.variant == variant
    if fix.framework == "jax" and variant.startswith("cuda"):
        from stackresolve.detect.pyenv import jaxlib_cuda

        cuda, _ = jaxlib_cuda(f"0+{variant}")  # as detect reads a jaxlib's local version: cuda111 is CUDA 11.1
        if cuda:
            major = cuda.split(".")[0]
            return lambda c: c.gpu and bool(c.cuda) and c.cuda.split(".")[0] == major
    return None


def framework_fix_resolution(kb, fix, machine, os_name: str):
    """(resolution, the log's build where it was kept and `plan` would pick another) for PyTorch or JAX: the user's release where the log (or --torch/--jax) names one and a build of it fixes the
    error, else the newest release that does; the log's own build (its CUDA variant or plugin) where that one
    fixes it, else the build the resolver picks; for the GPU the log names (its compute capability first: a
    no-kernel-image error is fixed by a build with code for it), on the driver it names (a driver known only by
    the newest CUDA it supports, "found version 11040", is taken as the oldest driver that supports that CUDA)."""
    from stackresolve.doctor.installed import resolve_installed
    from stackresolve.request import Flags, InputError, build_request
    from stackresolve.resolve import resolve

    key = "torch" if fix.framework == "pytorch" else "jax"
    versions = [v for v in (fix.framework_version, "latest") if v]
    driver = fix.driver or (driver_for_cuda(kb, fix.driver_cuda, os_name) if fix.driver_cuda else None)
    keep = logged_build(fix)
    gpus = []
    if fix.compute_capability:
        gpus.append((None, fix.compute_capability))
    if fix.gpu:
        gpus.append((fix.gpu, None))
    if not gpus:
        gpus.append((None, None))
    first = None
    for python in dict.fromkeys((fix.python, None)):  # the log's Python where a build fits it
        for version in versions:
            for gpu, gpu_cc in gpus:
                flags = Flags(**{key: version}, os=os_name, python=python, gpu=gpu, gpu_cc=gpu_cc, driver=driver)
                try:
                    request = build_request(kb, flags, machine)
                except InputError:
                    continue  # a GPU name or version the knowledge base does not know
                # PyTorch's variant belongs to the logged release; JAX's CUDA major to any
                if keep is not None and (key == "jax" or version == fix.framework_version):
                    verdict = resolve_installed(kb, request, keep)
                    if verdict.fits:
                        plain = resolve(kb, request, with_alternatives=False).stack
                        same = plain is not None and plain.framework.requirement == \
                            verdict.resolution.stack.framework.requirement and \
                            plain.framework.index_url == verdict.resolution.stack.framework.index_url
                        return verdict.resolution, "" if same else f"the log's {fix.variant} build"
                resolution = resolve(kb, request)
                if resolution.stack is not None:
                    return resolution, ""
                first = first or resolution
    return first, ""


def _version_key(version: str):
    from packaging.version import Version

    return Version(version)
