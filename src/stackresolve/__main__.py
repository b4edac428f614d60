"""The `stackresolve` executable (and `python -m stackresolve`): the command line, started and ended for speed.

Two things a one-shot command need not pay for, both measured (issue 24, docs/performance.md):
- the cyclic garbage collector is off for the whole process: the start alone ran about 45 collections (tens of
  milliseconds under load) over objects that live until exit anyway, and the peak memory of the largest runs
  (explain of an 8 MiB log, a 500-node fleet plan, the matrix) stayed the same without it;
- the process ends with os._exit once the command is done and the standard streams are flushed, instead of through
  the interpreter's teardown, which frees every module and object one by one (15-17 ms). Every file a command
  writes is written and closed inside the command (files.write_output and `with` blocks). Where a flush fails (a
  closed pipe), a thread still runs or the status is not a number, the ordinary exit runs instead, so exit codes
  and messages stay as they were.
`stackresolve.cli.main` itself raises SystemExit, for callers in-process, and leaves the collector alone."""

import gc
import os
import sys


def program() -> None:
    gc.disable()
    # lazy: no start-up gain (already loaded by then); kept beside its use
    from stackresolve.cli import main

    try:
        main()
    except SystemExit as exc:
        code = 0 if exc.code is None else exc.code
        if type(code) is not int or _threads_running():
            raise
        try:
            for stream in (sys.stdout, sys.stderr):
                if stream is not None:  # None where the descriptor was closed when Python started
                    stream.flush()
        except (OSError, ValueError):
            raise exc from None
        os._exit(code)


def _threads_running() -> bool:
    """Another thread still runs (the interpreter would wait for it at exit)."""
    threading = sys.modules.get("threading")
    return threading is not None and threading.active_count() > 1


if __name__ == "__main__":
    program()
