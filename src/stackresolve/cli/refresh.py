"""`stackresolve refresh`."""

from typing import List, Optional

import typer

from stackresolve.cli.app import Exit, command_app, fail

refresh_app = command_app()


@refresh_app.command()
def refresh(
    index_url: Optional[str] = typer.Option(None, "--index-url", help="The package index (default: pip's)."),
    timeout: float = typer.Option(300.0, "--timeout", help="Seconds for the whole refresh (one deadline)."),
    kind: Optional[List[str]] = typer.Option(None, "--kind", help="Refresh only this kind (repeatable)."),
    index_only: bool = typer.Option(False, "--index-only",
                                    help="Read the package index only, not NVIDIA's or PyTorch's documents."),
) -> None:
    """Re-read every kind of data a machine can read into the user cache, each with its own date (used while not
    older than shipped)."""
    # lazy: start-up (a command imports only what it runs: files.write, knowledge.refreshed, ...)
    import difflib

    from stackresolve.files.write import atomic_write_bytes
    from stackresolve.knowledge.refreshed import KINDS, cache_path
    from stackresolve.refresh import refresh as run

    names = [k.name for k in KINDS]
    for wanted in kind or ():
        if wanted not in names:
            close = difflib.get_close_matches(wanted, names, n=1)
            fail(f"--kind {wanted!r} is not a kind of data; accepted: {', '.join(names)}"
                 + (f" (did you mean {close[0]!r}?)" if close else ""))
    if timeout <= 0:
        fail(f"--timeout {timeout:g}: must be a positive number of seconds")
    if cache_path(names[0]) is None:
        fail("no cache folder to keep the refreshed data in (STACKRESOLVE_NO_CACHE is set, or the cache folder "
             "is not an absolute path)")
    results = run(index_url, kinds=kind or None, timeout=timeout, vendor=not index_only)
    refreshed = 0
    for result in results:
        if result.status != "refreshed":
            what = "not reachable" if result.status == "unreachable" else "not refreshed"
            typer.echo(f"stackresolve: refresh: {result.kind}: {what} ({_one_line(result.detail)}); the data in use "
                       f"stays as it was", err=True)
            continue
        path = cache_path(result.kind)
        try:
            path.parent.mkdir(mode=0o700, parents=True, exist_ok=True)
            # writable by no one else, or the loader does not use it
            atomic_write_bytes(path, result.text.encode("utf-8"), mode=0o644)
        except OSError as exc:
            fail(f"cannot write {path} ({exc.strerror or exc})", Exit.NOT_WRITTEN)
        refreshed += 1
        typer.echo(f"stackresolve: refresh: {result.kind}: refreshed, {result.records} records ({result.detail}) "
                   f"into {path}", err=True)
    if not refreshed:
        fail("nothing was refreshed; the data in use stays as it was", Exit.FAILED)


def _one_line(text: str) -> str:
    return " ".join("".join(ch if ch.isprintable() else " " for ch in str(text)).split())[:400]
