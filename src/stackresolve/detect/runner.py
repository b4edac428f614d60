"""Running commands for the probes: a shared time budget, and no child left behind.

A runner is any callable `runner(argv, timeout) -> (returncode, stdout, stderr)` (text, not bytes) that raises
`CommandNotFound` when the program cannot be started, `CommandTimeout` when it ran past `timeout` seconds and
`CommandOutputTooLarge` when it printed more than the runner keeps. Tests pass their own runner;
`SubprocessRunner` is the real one, `BudgetedRunner` caps any runner by a `Deadline` shared by several probes.
"""

from __future__ import annotations

import json
import os
import time
from typing import Callable, Mapping, Sequence, Tuple

RunResult = Tuple[int, str, str]
Runner = Callable[[Sequence[str], float], RunResult]

DEFAULT_BUDGET = 5.0  # seconds for all of detection's probes together
BUDGET_ENV = "STACKRESOLVE_DETECT_TIMEOUT"
MAX_BUDGET = 600.0
MAX_OUTPUT = 4 << 20  # bytes kept per stream: nvidia-smi -q of a 16-GPU machine is well under 1 MiB
MIN_CALL = 0.05  # never start a command with less time than this left


class CommandNotFound(Exception):
    """The program could not be started (missing, not executable)."""

    def __init__(self, program: str, detail: str = ""):
        super().__init__(f"{program}: not found" + (f" ({detail})" if detail else ""))
        self.program = program


class CommandTimeout(Exception):
    """The program ran longer than its timeout and was killed. `stdout` holds what it printed before that."""

    def __init__(self, program: str, timeout: float, stdout: str = "", stderr: str = ""):
        super().__init__(f"{program}: timed out, no answer within {timeout:.2f} s")
        self.program = program
        self.timeout = timeout
        self.stdout = stdout
        self.stderr = stderr


class BudgetSpent(CommandTimeout):
    """Not started: the shared detection budget had run out (a timeout for every caller)."""

    def __init__(self, program: str, budget: float):
        CommandTimeout.__init__(self, program, 0.0)
        self.args = (f"{program}: not started, the detection budget of {budget:.2f} s was spent",)


class CommandOutputTooLarge(Exception):
    """The program printed more than the runner keeps; it was killed. `stdout` holds the first part."""

    def __init__(self, program: str, limit: int, stdout: str = "", stderr: str = ""):
        super().__init__(f"{program}: printed more than {limit} bytes, stopped")
        self.program = program
        self.limit = limit
        self.stdout = stdout
        self.stderr = stderr


def _decode(data: bytes | None) -> str:
    if not data:
        return ""
    return bytes(data).decode("utf-8", errors="replace")


class SubprocessRunner:
    """Runs a command with stdin closed, in its own session (POSIX), reading at most `max_output` bytes per stream.

    Whatever ends the wait (the timeout, too much output, Ctrl-C or any other exception) kills the command's whole
    process group before the exception goes on: a child started here never outlives the call. Ctrl-C does not
    reach the child by itself, because it runs in another session."""

    def __init__(self, max_output: int = MAX_OUTPUT):
        self.max_output = max_output

    def __call__(self, argv: Sequence[str], timeout: float) -> RunResult:
        # lazy: no start-up gain (already loaded by then); kept beside its use
        import subprocess

        argv = [str(a) for a in argv]
        kwargs: dict = {}
        if os.name == "posix":
            kwargs["start_new_session"] = True
        else:  # pragma: no cover - Windows
            kwargs["creationflags"] = getattr(subprocess, "CREATE_NO_WINDOW", 0) | \
                getattr(subprocess, "CREATE_NEW_PROCESS_GROUP", 0)
        # A Ctrl-C while Popen starts the child would leave it running with nobody holding its pid: until the
        # child and its readers are set up, a Ctrl-C is only noted, and raised just after (inside the try below)
        with _DeferredInterrupt() as interrupt:
            try:
                proc = subprocess.Popen(argv, stdin=subprocess.DEVNULL, stdout=subprocess.PIPE,
                                        stderr=subprocess.PIPE, **kwargs)
            except FileNotFoundError as exc:
                raise CommandNotFound(argv[0]) from exc
            except OSError as exc:  # permission denied, bad executable format, ...
                raise CommandNotFound(argv[0], exc.strerror or str(exc)) from exc
            reader = _Reader(proc, self.max_output)
        try:
            interrupt.raise_if_noted()
            outcome = reader.wait(max(timeout, 0.001))
        except BaseException:  # KeyboardInterrupt included: end the child, then let it propagate
            _kill_group(proc)
            reader.close()
            raise
        if outcome != "done":
            _kill_group(proc)
        reader.close()
        out, err = _decode(reader.out), _decode(reader.err)
        if outcome == "timeout":
            raise CommandTimeout(argv[0], timeout, out, err)
        if outcome == "overflow":
            raise CommandOutputTooLarge(argv[0], self.max_output, out, err)
        return proc.returncode, out, err


class _DeferredInterrupt:
    """Within the block, SIGINT is noted instead of raising KeyboardInterrupt (main thread, default handler only:
    elsewhere Python raises no KeyboardInterrupt, and a program's own handler is left alone)."""

    def __init__(self):
        self.noted = False
        self._previous = None

    def __enter__(self):
        # lazy: no start-up gain (already loaded by then); kept beside its use
        import signal
        import threading

        if threading.current_thread() is threading.main_thread() and \
                signal.getsignal(signal.SIGINT) is signal.default_int_handler:
            self._previous = signal.signal(signal.SIGINT, self._note)
        return self

    def _note(self, signum, frame):
        self.noted = True

    def __exit__(self, exc_type, exc, tb):
        if self._previous is not None:
            # lazy: no start-up gain (already loaded by then); kept beside its use
            import signal

            signal.signal(signal.SIGINT, self._previous)
        if self.noted and exc_type is not None:  # the start failed anyway: the interrupt wins
            raise KeyboardInterrupt
        return False

    def raise_if_noted(self) -> None:
        if self.noted:
            raise KeyboardInterrupt


class _Reader:
    """Reads a command's stdout and stderr in two threads, keeping at most `limit` bytes of each. The calling
    thread only waits on an event, so Ctrl-C interrupts it at once (on POSIX and Windows alike)."""

    def __init__(self, proc, limit: int):
        # lazy: no start-up gain (already loaded by then); kept beside its use
        import threading

        self.proc = proc
        self.limit = limit
        self.out = bytearray()
        self.err = bytearray()
        self.overflow = False
        self._open = 2
        self._lock = threading.Lock()
        self._event = threading.Event()
        self._threads = [threading.Thread(target=self._pump, args=(stream, buf), daemon=True)
                         for stream, buf in ((proc.stdout, self.out), (proc.stderr, self.err))]
        for t in self._threads:
            t.start()

    def _pump(self, stream, buf: bytearray) -> None:
        try:
            read = getattr(stream, "read1", stream.read)
            while True:
                chunk = read(65536)
                if not chunk:
                    break
                room = self.limit - len(buf)
                if len(chunk) > room:
                    buf += chunk[:max(room, 0)]
                    self.overflow = True
                    break
                buf += chunk
        except (OSError, ValueError):
            pass
        finally:
            with self._lock:
                self._open -= 1
                if self._open == 0 or self.overflow:
                    self._event.set()

    def wait(self, timeout: float) -> str:
        """"done" (exited, output read), "timeout" or "overflow"."""
        # lazy: no start-up gain (already loaded by then); kept beside its use
        import subprocess

        end = time.monotonic() + timeout
        if not self._event.wait(max(end - time.monotonic(), 0.0)):
            return "timeout"
        if self.overflow:
            return "overflow"
        try:  # both pipes closed, but the command may still run (it closed its output): it has the same time
            self.proc.wait(timeout=max(end - time.monotonic(), 0.001))
        except subprocess.TimeoutExpired:
            return "timeout"
        return "done"

    def close(self) -> None:
        """Let the readers finish, then close the pipes. A reader still blocked (a process that left the group
        holds the pipe) keeps its pipe: closing a pipe another thread reads from can block this one."""
        for t in self._threads:
            t.join(0.5)
        for t, stream in zip(self._threads, (self.proc.stdout, self.proc.stderr)):
            if stream is not None and not t.is_alive():
                try:
                    stream.close()
                except OSError:
                    pass


def _kill_group(proc) -> None:
    """Kill the command and everything it started in its session, then reap it. Never raises."""
    if os.name == "posix":
        # lazy: no start-up gain (already loaded by then); kept beside its use
        import signal

        try:
            os.killpg(proc.pid, signal.SIGKILL)
        except (ProcessLookupError, PermissionError, OSError):
            pass
    else:  # pragma: no cover - Windows: the whole tree through taskkill, bounded like every other command
        # lazy: no start-up gain (already loaded by then); kept beside its use
        import subprocess

        try:
            subprocess.run(["taskkill", "/F", "/T", "/PID", str(proc.pid)], stdin=subprocess.DEVNULL,
                           stdout=subprocess.DEVNULL, stderr=subprocess.DEVNULL, timeout=2)
        except (OSError, subprocess.SubprocessError):
            pass
    try:
        proc.kill()
    except OSError:
        pass
    try:
        proc.wait(timeout=1.0)
    except Exception:  # a process stuck in the kernel (D state) cannot be reaped: do not wait for it
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

    def share(self, seconds: float) -> "Deadline":
        """A deadline inside this one: `seconds` from now, or what is left of this one if that is less."""
        return Deadline(min(float(seconds), self.remaining()), self._clock)


class BudgetedRunner:
    """Wraps a runner so that no command outlives `deadline`: each call gets at most what is left of it, and a
    call with less than MIN_CALL seconds left is not started (BudgetSpent, a CommandTimeout)."""

    def __init__(self, runner, deadline: Deadline):
        self.runner = runner
        self.deadline = deadline

    def __call__(self, argv: Sequence[str], timeout: float) -> RunResult:
        left = self.deadline.remaining()
        if left < MIN_CALL:
            raise BudgetSpent(str(argv[0]) if argv else "?", self.deadline.total)
        return self.runner(argv, min(float(timeout), left))


def budget_seconds(env: Mapping[str, str], given: float | None = None) -> tuple[float, str | None]:
    """The detection budget: `given` when not None, else STACKRESOLVE_DETECT_TIMEOUT, else DEFAULT_BUDGET.
    Returns (seconds, problem): problem is a sentence when the variable could not be used (the default applies)."""
    if given is not None:
        return max(float(given), 0.0), None
    text = (env.get(BUDGET_ENV) or "").strip()
    if not text:
        return DEFAULT_BUDGET, None
    try:
        value = float(text)
    except ValueError:
        value = float("nan")
    if not (0 < value <= MAX_BUDGET):
        return DEFAULT_BUDGET, (f"{BUDGET_ENV}={text!r} is not a number of seconds between 0 and {MAX_BUDGET:g}; "
                                f"using {DEFAULT_BUDGET:g} s")
    return value, None


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
