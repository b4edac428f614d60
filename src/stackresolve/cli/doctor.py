"""`stackresolve doctor`."""

from typing import Optional

import typer

from stackresolve.cli.app import Choice, command_app, Exit, detect_machine, fail, fix_plan_formats, knowledge, output


doctor_app = command_app()


@doctor_app.command()
def doctor(
    tf: Optional[str] = typer.Option(None, "--tf", help="Check against this TensorFlow instead of the installed one."),
    python_exe: Optional[str] = typer.Option(None, "--python-exe", help="Interpreter whose environment to check."),
    fmt: str = typer.Option("text", "--format", "-f", click_type=Choice(fix_plan_formats, "--format"),
                            help="text, json, or the fix plan: pip, conda, apt, powershell, dockerfile."),
) -> None:
    """Diagnose the installed GPU stack; exit 0 when healthy, 1 when problems were found."""
    # lazy: start-up (a command imports only what it runs: detect, doctor, ...)
    import json

    import os

    from stackresolve.detect import Deadline, budget_seconds, probe_libraries
    from stackresolve.doctor import diagnose
    from stackresolve.request.build import InputError

    kb = knowledge()
    # Detection and the library loads share one time budget (STACKRESOLVE_DETECT_TIMEOUT).
    deadline = Deadline(budget_seconds(os.environ)[0])
    machine = detect_machine(python_exe=python_exe, deadline=deadline)

    def prober(names, dirs):
        return probe_libraries(names, dirs, python_exe=None, deadline=deadline)

    try:
        report = diagnose(machine, kb, tf=tf, probe_libraries=prober)
    except InputError as exc:
        fail(str(exc))
    if fmt == "text":
        output(report.render_text(), None)
    elif fmt == "json":
        output(json.dumps(report.to_json_dict(), indent=2) + "\n", None)
    elif report.resolution is None or report.resolution.stack is None:
        fail("no stack to plan a fix for; see `stackresolve doctor` for the findings", Exit.FAILED)
    else:
        # lazy: start-up (a command imports only what it runs: formats.render)
        from stackresolve.formats.render import FormatRefused, render_plan

        try:
            output(render_plan(fmt, report.resolution, kb), None)
        except FormatRefused as exc:
            fail(str(exc))
    raise typer.Exit(report.exit_code)
