"""The command line: parse flags, call the library, render. No decisions of its own.

Each command lives in its own small module and imports the library inside the command, so that a command pays
only for what it uses; the group builds only the command that runs (cli/app.py)."""

import os
import sys

from stackresolve.cli.app import COMMANDS, Exit, app, one_line


def main() -> None:
    """The `stackresolve` program: exit 0 success, 1 no stack / check failed, 2 bad input, 3 output not written
    (or a bug), 130 interrupted; never a Python traceback (STACKRESOLVE_DEBUG=1 shows one for a bug)."""
    # lazy: no start-up gain (already loaded by then); kept beside its use
    import click

    for stream in (sys.stdout, sys.stderr):
        try:  # what the terminal's encoding cannot hold is escaped, never a UnicodeEncodeError
            stream.reconfigure(errors="backslashreplace")
        except (AttributeError, ValueError):
            pass
    # lazy: start-up (a command imports only what it runs: cli.terminal)
    from stackresolve.cli.terminal import guard_standard_streams

    guard_standard_streams()  # nothing from a probe, a log or a file reaches the terminal as control characters
    try:
        code = app.main(prog_name="stackresolve", standalone_mode=False)
    except click.exceptions.Exit as exc:
        code = exc.exit_code
    except click.UsageError as exc:  # an unknown option, a missing value: one line, like our own bad-input errors
        # click gives no context for an option missing its value: the command is the first known word then
        command = next((a for a in sys.argv[1:] if a in COMMANDS), None) if exc.ctx is None else None
        where = exc.ctx.command_path if exc.ctx is not None else " ".join(filter(None, ("stackresolve", command)))
        sys.stderr.write(f"stackresolve: error: {one_line(exc.format_message())} ('{where} --help' lists what is "
                         f"accepted)\n")
        code = exc.exit_code
    except click.ClickException as exc:
        exc.show()
        code = exc.exit_code
    except (click.exceptions.Abort, KeyboardInterrupt):
        sys.stderr.write("stackresolve: interrupted\n")
        code = Exit.INTERRUPTED
    except BrokenPipeError:
        # lazy: no start-up gain (already loaded by then); kept beside its use
        from stackresolve.cli.app import _silence_stdout

        _silence_stdout()
        code = Exit.NOT_WRITTEN
    except Exception as exc:  # a bug: one line, and the traceback only when asked for
        if os.environ.get("STACKRESOLVE_DEBUG"):
            raise
        sys.stderr.write(f"stackresolve: internal error: {type(exc).__name__}: {exc} (STACKRESOLVE_DEBUG=1 shows "
                         f"the traceback; please report it)\n")
        code = Exit.NOT_WRITTEN
    sys.exit(code or 0)


__all__ = ["app", "main"]
