"""Running commands for the probes, with a timeout that also ends the command's children.

A runner is any callable `runner(argv, timeout) -> (returncode, stdout, stderr)` (text, not bytes) that raises
`CommandNotFound` when the program cannot be started and `CommandTimeout` when it ran past `timeout` seconds.
Tests pass their own runner; `SubprocessRunner` is the real one.
"""

from __future__ import annotations

import json
import os
import time
from typing import Callable, Sequence, Tuple

RunResult = Tuple[int, str, str]
Runner = Callable[[Sequence[str], float], RunResult]


class CommandNotFound(Exception):
    """The program could not be started (missing, not executable)."""

    def __init__(self, program: str, detail: str = ""):
        super().__init__(f"{program}: not found" + (f" ({detail})" if detail else ""))
        self.program = program


class CommandTimeout(Exception):
    """The program ran longer than its timeout and was killed. `stdout` holds what it printed before that."""

    def __init__(self, program: str, timeout: float, stdout: str = "", stderr: str = ""):
        super().__init__(f"{program}: no answer within {timeout:.2f} s")
        self.program = program
        self.timeout = timeout
        self.stdout = stdout
        self.stderr = stderr


def _decode(data: bytes | None) -> str:
    if not data:
        return ""
    return data.decode("utf-8", errors="replace")


class SubprocessRunner:
    """Runs a command with stdin closed; on timeout kills its whole process group (POSIX) or the process."""

    def __call__(self, argv: Sequence[str], timeout: float) -> RunResult:
        import subprocess

        argv = [str(a) for a in argv]
        kwargs: dict = {}
        if os.name == "posix":
            kwargs["start_new_session"] = True
        else:  # pragma: no cover - Windows
            kwargs["creationflags"] = getattr(subprocess, "CREATE_NO_WINDOW", 0)
        try:
            proc = subprocess.Popen(argv, stdin=subprocess.DEVNULL, stdout=subprocess.PIPE,
                                    stderr=subprocess.PIPE, **kwargs)
        except FileNotFoundError as exc:
            raise CommandNotFound(argv[0]) from exc
        except OSError as exc:  # permission denied, bad executable format, ...
            raise CommandNotFound(argv[0], exc.strerror or str(exc)) from exc
        try:
            out, err = proc.communicate(timeout=max(timeout, 0.001))
        except subprocess.TimeoutExpired:
            self._kill(proc)
            try:
                out, err = proc.communicate(timeout=0.5)
            except subprocess.TimeoutExpired:  # a grandchild that left the group still holds the pipes
                out, err = b"", b""
                for stream in (proc.stdout, proc.stderr):
                    try:
                        stream.close()
                    except Exception:
                        pass
            raise CommandTimeout(argv[0], timeout, _decode(out), _decode(err)) from None
        return proc.returncode, _decode(out), _decode(err)

    @staticmethod
    def _kill(proc) -> None:
        if os.name == "posix":
            import signal

            try:
                os.killpg(proc.pid, signal.SIGKILL)
                return
            except (ProcessLookupError, PermissionError, OSError):
                pass
        try:
            proc.kill()
        except OSError:
            pass


class Deadline:
    """A time budget shared by several commands."""

    def __init__(self, seconds: float, clock: Callable[[], float] = time.monotonic):
        self._clock = clock
        self.total = float(seconds)
        self.start = clock()

    def remaining(self) -> float:
        return max(0.0, self.total - (self._clock() - self.start))

    def elapsed(self) -> float:
        return self._clock() - self.start

    def expired(self, margin: float = 0.0) -> bool:
        return self.remaining() <= margin


def json_objects(stdout: str | None):
    """The JSON objects a probe child printed, one per line; anything else on its output is skipped."""
    for line in (stdout or "").splitlines():
        line = line.strip()
        if not line.startswith("{"):
            continue
        try:
            doc = json.loads(line)
        except ValueError:
            continue
        if isinstance(doc, dict):
            yield doc
