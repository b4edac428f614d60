"""The command line: parse flags, call the library, render. No decisions of its own.

Each command lives in its own small module and imports the library inside the command, so that a command pays
only for what it uses; the group builds only the command that runs (cli/app.py)."""

from stackresolve.cli.app import app


def main() -> None:
    app.main(prog_name="stackresolve")


__all__ = ["app", "main"]
