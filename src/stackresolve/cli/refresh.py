"""`stackresolve refresh`."""

from typing import Optional

import typer

from stackresolve.cli.app import Exit, command_app, fail

refresh_app = command_app()


@refresh_app.command()
def refresh(
    index_url: Optional[str] = typer.Option(None, "--index-url", help="The package index (default: pip's)."),
    timeout: float = typer.Option(300.0, "--timeout", help="Seconds for the whole refresh."),
) -> None:
    """Re-read the package index's TensorFlow wheel lists into the user cache (used while newer than shipped)."""
    from stackresolve import index as idx
    from stackresolve.files import atomic_write_bytes
    from stackresolve.knowledge.loader import refreshed_wheels_path
    from stackresolve.refresh import RefreshTimeout, UnclassifiedWheels, fetch_wheels_toml

    path = refreshed_wheels_path()
    if path is None:
        fail("no cache folder to keep the refreshed data in (STACKRESOLVE_NO_CACHE is set, or the cache folder "
             "is not an absolute path)")
    try:
        text, records = fetch_wheels_toml(index_url, timeout=timeout, origin="refreshed")
    except idx.PackageIndexError as exc:
        fail(f"cannot read the package index ({exc}); the data in use stays as it was", Exit.FAILED)
    except (UnclassifiedWheels, RefreshTimeout) as exc:
        fail(f"refresh stopped: {exc}; the data in use stays as it was", Exit.FAILED)
    try:
        path.parent.mkdir(mode=0o700, parents=True, exist_ok=True)
        atomic_write_bytes(path, text.encode("utf-8"), mode=0o644)  # writable by no one else, or it is not used
    except OSError as exc:
        fail(f"cannot write {path} ({exc.strerror or exc})", Exit.NOT_WRITTEN)
    typer.echo(f"refreshed {len(records)} TensorFlow releases from the package index into {path}", err=True)
