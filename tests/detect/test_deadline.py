"""One deadline for all of detection, with real processes: fake nvidia-smi / python / nvcc scripts that hang, flood
their output, print binary garbage or exit oddly. Detection must return within its budget plus one second,
report what timed out, print no traceback, and leave no process behind."""

from __future__ import annotations

import os
import signal
import stat
import subprocess
import sys
import threading
import time
from pathlib import Path

import pytest
from detect_helpers import make_tree

from stackresolve.detect import LocalFS, SubprocessRunner, detect_machine
from stackresolve.detect.gpuchild import MARKER
from stackresolve.detect.runner import CommandOutputTooLarge, CommandTimeout

pytestmark = pytest.mark.skipif(os.name != "posix", reason="POSIX shell scripts stand in for the programs")

# A hung program the way a hung driver hangs a tool: it starts a child and waits for it, so killing only the
# direct child would leave the grandchild holding the pipes. Both pids go to PIDFILE.
HANG = """#!/bin/sh
echo $$ >> "{pidfile}"
sleep 60 &
echo $! >> "{pidfile}"
wait
"""


def script(path: Path, body: str) -> Path:
    path.parent.mkdir(parents=True, exist_ok=True)
    path.write_text(body, encoding="utf-8")
    path.chmod(path.stat().st_mode | stat.S_IXUSR | stat.S_IXGRP | stat.S_IXOTH)
    return path


def gone(pid: int) -> bool:
    """No such process, or a zombie (killed, waiting for an init that does not reap: nothing left running)."""
    try:
        os.kill(pid, 0)
    except ProcessLookupError:
        return True
    try:
        with open(f"/proc/{pid}/stat", encoding="utf-8") as fh:
            return fh.read().rsplit(")", 1)[1].split()[0] == "Z"
    except OSError:
        return True


def pids_in(pidfile: Path) -> list[int]:
    if not pidfile.exists():
        return []
    return [int(x) for x in pidfile.read_text().split()]


def wait_gone(pids: list[int], seconds: float = 2.0) -> list[int]:
    end = time.monotonic() + seconds
    alive = [p for p in pids if not gone(p)]
    while alive and time.monotonic() < end:
        time.sleep(0.02)
        alive = [p for p in alive if not gone(p)]
    return alive


class MappedRunner:
    """The real SubprocessRunner, for a machine that lives under `root`: machine paths ("/usr/bin/nvidia-smi")
    run as root/usr/bin/nvidia-smi, and the NVML/libcuda child runs `child` instead of this interpreter."""

    def __init__(self, root: Path, child: Path | None = None):
        self.root = root
        self.child = child
        self.real = SubprocessRunner()
        self.calls: list[tuple[list[str], float]] = []

    def __call__(self, argv, timeout):
        argv = [str(a) for a in argv]
        self.calls.append((argv, timeout))
        if MARKER in argv:
            argv = [str(self.child)] if self.child else argv
        elif argv[0].startswith("/") and (self.root / argv[0].lstrip("/")).exists():
            argv = [str(self.root / argv[0].lstrip("/"))] + argv[1:]
        return self.real(argv, timeout)


def hung_machine(tmp_path: Path) -> tuple[Path, Path, MappedRunner]:
    """A Linux machine where every probe that runs a program hangs: the NVML/libcuda child, nvidia-smi, the
    target interpreter's Python probe and nvcc (a toolkit without a version file)."""
    root = tmp_path / "root"
    pidfile = tmp_path / "pids"
    make_tree(root, {"/usr/lib/x86_64-linux-gnu/libcuda.so.1": "", "/usr/local/cuda-11.8/bin/.keep": ""})
    for path in ("usr/bin/nvidia-smi", "opt/py/bin/python", "usr/local/cuda-11.8/bin/nvcc", "child"):
        script(root / path, HANG.format(pidfile=pidfile))
    return root, pidfile, MappedRunner(root, child=root / "child")


def test_everything_hung_returns_within_the_budget_and_leaves_nothing_behind(tmp_path, capfd):
    root, pidfile, runner = hung_machine(tmp_path)
    budget = 1.5
    t0 = time.monotonic()
    m = detect_machine(runner=runner, fs=LocalFS(root), env={"PATH": "/usr/bin"}, system="linux",
                       python_exe="/opt/py/bin/python", timeout_total=budget)
    elapsed = time.monotonic() - t0
    assert elapsed < budget + 1.0, elapsed
    status = {p.name: p.status for p in m.probes}
    assert status["nvml+libcuda"] == "timeout"
    assert status["nvidia-smi"] == "timeout"
    assert status["python (/opt/py/bin/python)"] == "timeout"
    assert status["nvcc (/usr/local/cuda-11.8/bin/nvcc)"] == "timeout"
    assert all(timeout <= budget for _, timeout in runner.calls)
    timeouts = [f for f in m.findings if f.code == "probe-timeout"]
    assert len(timeouts) == 4 and all("timed out" in f.message or "not started" in f.message for f in timeouts)
    pids = pids_in(pidfile)
    assert len(pids) >= 4  # each hung program and its sleeping child
    assert wait_gone(pids) == []
    out, err = capfd.readouterr()
    assert "Traceback" not in out + err


def test_budget_from_the_environment(tmp_path):
    root, pidfile, runner = hung_machine(tmp_path)
    t0 = time.monotonic()
    m = detect_machine(runner=runner, fs=LocalFS(root), env={"PATH": "/usr/bin", "STACKRESOLVE_DETECT_TIMEOUT": "0.8"},
                       system="linux", gpu_only=True)
    assert time.monotonic() - t0 < 0.8 + 1.0
    assert all(timeout <= 0.8 for _, timeout in runner.calls)
    assert m.env["STACKRESOLVE_DETECT_TIMEOUT"] == "0.8"
    assert wait_gone(pids_in(pidfile)) == []


@pytest.mark.parametrize("value", ["soon", "-1", "0", "1e9", "nan"])
def test_unusable_budget_is_a_finding_and_the_default_applies(tmp_path, value):
    m = detect_machine(runner=lambda argv, t: (0, "", ""), fs=LocalFS(tmp_path), system="linux", gpu_only=True,
                       env={"PATH": "/usr/bin", "STACKRESOLVE_DETECT_TIMEOUT": value})
    f = next(f for f in m.findings if f.code == "bad-override")
    assert "STACKRESOLVE_DETECT_TIMEOUT" in f.message and "using 5 s" in f.message


def _smi_machine(tmp_path: Path, body: str) -> tuple[Path, MappedRunner]:
    root = tmp_path / "root"
    script(root / "usr/bin/nvidia-smi", body)
    return root, MappedRunner(root)


def test_flooding_nvidia_smi_is_cut_off(tmp_path):
    # prints CSV lines for ever: what is kept is capped, the program is killed, the probe failed
    pidfile = tmp_path / "pids"
    root, runner = _smi_machine(tmp_path, f'#!/bin/sh\necho $$ >> "{pidfile}"\n'
                                          'exec yes "0, 00000000:01:00.0, NVIDIA GeForce RTX 4090, 8.9, 550.144.03, 24564"\n')
    runner.real = SubprocessRunner(max_output=1 << 20)
    t0 = time.monotonic()
    m = detect_machine(runner=runner, fs=LocalFS(root), env={"PATH": "/usr/bin"}, system="linux", gpu_only=True,
                       timeout_total=5.0)
    assert time.monotonic() - t0 < 3.0
    rec = next(p for p in m.probes if p.name == "nvidia-smi")
    assert rec.status == "failed" and "more than 1048576 bytes" in rec.detail
    assert "probe-failed" in [f.code for f in m.findings]
    assert len(runner.calls) == 1  # not asked again
    assert wait_gone(pids_in(pidfile)) == []


def test_binary_garbage_and_odd_exit_codes(tmp_path):
    # every call prints bytes that are not UTF-8, NULs and half a banner, then dies of SIGSEGV
    root, runner = _smi_machine(tmp_path, "#!/bin/sh\nprintf '\\377\\376\\000| NVIDIA-SMI \\001\\n\\200\\201, , ,\\n"
                                          "Driver Version: \\377\\n'\nkill -SEGV $$\n")
    m = detect_machine(runner=runner, fs=LocalFS(root), env={"PATH": "/usr/bin"}, system="linux", gpu_only=True,
                       timeout_total=5.0)
    assert m.driver is None and m.gpus == ()
    smi_records = [p for p in m.probes if p.name.startswith("nvidia-smi")]
    assert smi_records and all(p.status == "failed" for p in smi_records)
    assert "exit -11" in smi_records[0].detail


@pytest.mark.parametrize("code", [1, 2, 6, 9, 15, 255])
def test_odd_exit_codes_with_plausible_output_are_not_trusted_for_csv(tmp_path, code):
    root, runner = _smi_machine(tmp_path, "#!/bin/sh\necho 'index, pci.bus_id, name, compute_cap, driver_version, "
                                          "memory.total [MiB]'\necho '0, 00000000:01:00.0, X, 8.9, 550.1, 1'\n"
                                          f"exit {code}\n")
    m = detect_machine(runner=runner, fs=LocalFS(root), env={"PATH": "/usr/bin"}, system="linux", gpu_only=True,
                       timeout_total=5.0)
    assert not any(g.source == "nvidia-smi" for g in m.gpus)


@pytest.mark.parametrize("started", [1, 2])  # 1: Ctrl-C while the child is still being started
def test_ctrl_c_kills_the_process_group_and_propagates(tmp_path, started):
    pidfile = tmp_path / "pids"
    hung = script(tmp_path / "hang", HANG.format(pidfile=pidfile))
    main = threading.main_thread().ident

    def interrupt():
        end = time.monotonic() + 5
        while len(pids_in(pidfile)) < started and time.monotonic() < end:
            time.sleep(0.001)
        signal.pthread_kill(main, signal.SIGINT)

    threading.Thread(target=interrupt, daemon=True).start()
    t0 = time.monotonic()
    with pytest.raises(KeyboardInterrupt):
        SubprocessRunner()([str(hung)], 30)
    assert time.monotonic() - t0 < 5
    pids = pids_in(pidfile)
    assert len(pids) >= started and wait_gone(pids) == []


def test_timeout_kills_the_grandchild_holding_the_pipes(tmp_path):
    pidfile = tmp_path / "pids"
    hung = script(tmp_path / "hang", HANG.format(pidfile=pidfile))
    t0 = time.monotonic()
    with pytest.raises(CommandTimeout):
        SubprocessRunner()([str(hung)], 0.3)
    assert time.monotonic() - t0 < 1.5
    assert wait_gone(pids_in(pidfile)) == []


def test_closed_output_but_still_running_is_a_timeout(tmp_path):
    closes = script(tmp_path / "closes", "#!/bin/sh\nexec >&- 2>&-\nsleep 30\n")
    t0 = time.monotonic()
    with pytest.raises(CommandTimeout):
        SubprocessRunner()([str(closes)], 0.3)
    assert time.monotonic() - t0 < 1.5


def test_output_cap_keeps_the_first_part():
    with pytest.raises(CommandOutputTooLarge) as exc:
        SubprocessRunner(max_output=1000)(["yes", "abc"], 5)
    assert exc.value.stdout == ("abc\n" * 250)


def test_cli_with_hung_nvidia_smi_prints_no_traceback(tmp_path):
    pidfile = tmp_path / "pids"
    bindir = tmp_path / "bin"
    script(bindir / "nvidia-smi", HANG.format(pidfile=pidfile))
    env = {**os.environ, "PATH": f"{bindir}{os.pathsep}{os.environ.get('PATH', '')}",
           "STACKRESOLVE_DETECT_TIMEOUT": "1"}
    t0 = time.monotonic()
    proc = subprocess.run([sys.executable, "-m", "stackresolve", "detect", "--format", "json"], env=env,
                          capture_output=True, text=True, timeout=60)
    elapsed = time.monotonic() - t0
    assert proc.returncode == 0, proc.stderr
    assert "Traceback" not in proc.stderr
    assert '"status": "timeout"' in proc.stdout
    assert elapsed < 1.0 + 1.0 + 3.0  # the budget, the second allowed, and the interpreter's start-up
    assert wait_gone(pids_in(pidfile)) == []


def test_cli_ctrl_c_leaves_no_nvidia_smi_behind(tmp_path):
    pidfile = tmp_path / "pids"
    bindir = tmp_path / "bin"
    script(bindir / "nvidia-smi", HANG.format(pidfile=pidfile))
    env = {**os.environ, "PATH": f"{bindir}{os.pathsep}{os.environ.get('PATH', '')}",
           "STACKRESOLVE_DETECT_TIMEOUT": "30"}
    proc = subprocess.Popen([sys.executable, "-m", "stackresolve", "detect"], env=env, stdout=subprocess.PIPE,
                            stderr=subprocess.PIPE, text=True)
    try:
        end = time.monotonic() + 20
        while len(pids_in(pidfile)) < 2 and time.monotonic() < end:  # nvidia-smi and its child are running
            time.sleep(0.02)
        assert len(pids_in(pidfile)) == 2
        proc.send_signal(signal.SIGINT)  # what Ctrl-C sends (to the foreground group: our command only)
        out, err = proc.communicate(timeout=10)
    finally:
        if proc.poll() is None:
            proc.kill()
            proc.wait()
    assert proc.returncode != 0
    assert "Traceback" not in err
    assert wait_gone(pids_in(pidfile)) == []
