"""`stackresolve schema`."""

import typer

from stackresolve.cli.app import Choice, command_app, output

schema_app = command_app()


def _names() -> tuple[str, ...]:
    # lazy: start-up (a command imports only what it runs: schemas)
    from stackresolve.schemas import DOCUMENTS

    return tuple(DOCUMENTS)


@schema_app.command()
def schema(
    name: str = typer.Argument(..., click_type=Choice(_names, "schema"), help="The document's name."),
) -> None:
    """Print the JSON Schema of one of the JSON documents stackresolve prints."""
    # lazy: start-up (a command imports only what it runs: schemas)
    import json

    from stackresolve.schemas import load

    output(json.dumps(load(name), indent=2) + "\n", None)
