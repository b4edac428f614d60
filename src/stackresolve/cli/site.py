"""`stackresolve site`."""

import typer

from stackresolve.cli.app import Exit, command_app, fail, knowledge

site_app = command_app()


@site_app.command()
def site(
    out: str = typer.Option(..., "-o", "--output", help="The folder to write the page into (made if missing)."),
) -> None:
    """Write a static page that shows the matrix's answers for any GPU, driver and OS (open index.html from disk
    or any static host)."""
    # lazy: no start-up gain (already loaded by then); kept beside its use
    import os

    if not out.strip():
        fail(f"-o {out!r}: no folder named; give the folder to write the page into")
    if os.path.exists(out) and not os.path.isdir(out):
        fail(f"-o {out!r}: is a file, not a folder; give a folder (it is made if missing)")
    # lazy: start-up (a command imports only what it runs: site)
    from stackresolve.site import site_files, write_site

    kb = knowledge()
    files = site_files(kb)
    try:
        written = write_site(out, files)
    except OSError as exc:
        fail(f"-o {out!r}: cannot write ({exc.strerror or exc})", Exit.NOT_WRITTEN)
    size = sum(len(data) for data in files.values())
    typer.echo(f"wrote {len(written)} files ({size / 1024:.0f} KiB) to {out}; open {os.path.join(out, 'index.html')}",
               err=True)
