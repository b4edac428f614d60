"""The command line: parse flags, call the library, render. No decisions of its own.

Each command lives in its own small module and imports the library inside the command, so that a command pays
only for what it uses."""

from stackresolve.cli import browse, check, detect, doctor, explain, plan  # noqa: F401  (they register themselves)
from stackresolve.cli.app import app


def main() -> None:
    app()


__all__ = ["app", "main"]
