"""Hostile input and faulty output (issue 16): files that are not what they claim, outputs that cannot be
written, streams that cannot hold the text. Every case ends in one clear line and a documented exit code, never
a traceback, a hang or a replaced file. Commands run as real processes, with real streams."""

from __future__ import annotations

import json
import os
import stat
import subprocess
import sys
import threading
from pathlib import Path

import pytest

PLAN = ["plan", "--no-detect", "--tf", "1.15", "--os", "linux", "--gpu-cc", "6.1"]


def run(*args, stdout=subprocess.PIPE, env=None, input=None, timeout=60):
    done = subprocess.run([sys.executable, "-m", "stackresolve", *args], stdout=stdout, stderr=subprocess.PIPE,
                          input=input, timeout=timeout, env={**os.environ, **(env or {})})
    assert b"Traceback" not in done.stderr, done.stderr.decode()
    return done


def one_line(done) -> str:
    lines = [l for l in done.stderr.decode().splitlines() if l.strip()]
    assert len(lines) == 1, lines
    return lines[0]


# -- command-line syntax ------------------------------------------------------------------------------------
@pytest.mark.parametrize("args, said", [
    (("plan", "--tff", "1.15"), "No such option '--tff'. Did you mean '--tf'? ('stackresolve plan --help'"),
    (("plan", "--tf"), "Option '--tf' requires an argument. ('stackresolve plan --help'"),
    (("matrix", "--no-detect"), "No such option '--no-detect'. ('stackresolve matrix --help'"),
    (("pln",), "No such command 'pln'. Did you mean 'plan'?"),
])
def test_a_usage_error_is_one_line_that_names_the_help(args, said):
    done = run(*args)
    assert done.returncode == 2
    assert said in one_line(done)


# -- -o ---------------------------------------------------------------------------------------------------
def test_o_replaces_a_regular_file_atomically_and_keeps_its_mode(tmp_path):
    target = tmp_path / "requirements.txt"
    target.write_text("old\n")
    target.chmod(0o600)
    done = run(*PLAN, "--format", "pip", "-o", str(target))
    assert done.returncode == 0
    assert "tensorflow-gpu==1.15.5" in target.read_text()
    assert stat.S_IMODE(target.stat().st_mode) == 0o600
    assert [p.name for p in tmp_path.iterdir()] == ["requirements.txt"]  # no temporary left behind


def test_o_through_a_symlink_replaces_the_target_and_keeps_the_link(tmp_path):
    real = tmp_path / "real.txt"
    real.write_text("old\n")
    link = tmp_path / "link.txt"
    link.symlink_to(real)
    assert run(*PLAN, "--format", "pip", "-o", str(link)).returncode == 0
    assert link.is_symlink() and "tensorflow-gpu==1.15.5" in real.read_text()


def test_o_writes_straight_into_a_fifo(tmp_path):
    fifo = tmp_path / "pipe"
    os.mkfifo(fifo)
    received = []
    reader = threading.Thread(target=lambda: received.append(fifo.read_text()), daemon=True)
    reader.start()
    assert run(*PLAN, "--format", "pip", "-o", str(fifo)).returncode == 0
    reader.join(timeout=30)
    assert "tensorflow-gpu==1.15.5" in received[0]
    assert stat.S_ISFIFO(fifo.stat().st_mode)  # still a FIFO, not a file renamed over it


def test_o_dev_null_stays_a_device():
    assert run(*PLAN, "--format", "pip", "-o", "/dev/null").returncode == 0
    assert stat.S_ISCHR(os.stat("/dev/null").st_mode)


def test_o_dev_stdout_is_standard_output():
    done = run(*PLAN, "--format", "pip", "-o", "/dev/stdout")
    assert done.returncode == 0 and b"tensorflow-gpu==1.15.5" in done.stdout


@pytest.mark.skipif(not os.path.exists("/dev/full"), reason="needs /dev/full")
def test_o_on_a_full_device_is_one_line_and_exit_3():
    done = run(*PLAN, "--format", "pip", "-o", "/dev/full")
    assert done.returncode == 3 and "No space left on device" in one_line(done)


def test_o_a_directory_is_refused(tmp_path):
    done = run(*PLAN, "--format", "pip", "-o", str(tmp_path))
    assert done.returncode == 3 and "directory" in one_line(done)


@pytest.mark.skipif(os.geteuid() == 0 if hasattr(os, "geteuid") else True, reason="root writes anywhere")
def test_o_without_permission_is_one_line(tmp_path):
    locked = tmp_path / "locked"
    locked.mkdir()
    locked.chmod(0o500)
    done = run(*PLAN, "--format", "pip", "-o", str(locked / "x.txt"))
    assert done.returncode == 3 and "Permission denied" in one_line(done)


# -- standard output ----------------------------------------------------------------------------------------
@pytest.mark.skipif(not os.path.exists("/dev/full"), reason="needs /dev/full")
def test_stdout_on_a_full_disk():
    with open("/dev/full", "wb") as full:
        done = run(*PLAN, "--format", "json", stdout=full)
    assert done.returncode == 3 and "cannot write standard output" in one_line(done)


def test_stdout_closed_early():
    process = subprocess.Popen([sys.executable, "-m", "stackresolve", *PLAN, "--format", "json"],
                               stdout=subprocess.PIPE, stderr=subprocess.PIPE)
    process.stdout.close()  # the reader went away (`| head -0`)
    _, err = process.communicate(timeout=60)
    assert b"Traceback" not in err and process.returncode != 0


def test_text_the_terminal_cannot_hold_is_escaped():
    log = "Could not load dynamic library 'libcudart.so.10.0'; dlerror: fichier \u00e9 \u2014 introuvable\n"
    done = run("explain", "-", "--no-detect", env={"PYTHONIOENCODING": "ascii"}, input=log.encode())
    assert done.returncode == 0
    assert b"\\xe9" in done.stdout or b"\\u2014" in done.stdout


# -- input files ---------------------------------------------------------------------------------------------
@pytest.fixture
def lock(tmp_path) -> Path:
    path = tmp_path / "stackresolve.lock"
    assert run(*PLAN, "--format", "lock", "-o", str(path)).returncode == 0
    return path


@pytest.mark.parametrize("content, said", [
    (b"\x89PNG\r\n\x1a\n\x00\x00binary", "not a stackresolve lock file"),
    ("[1, 2, 3]".encode(), "not a stackresolve lock file"),
    ('"a string"'.encode(), "not a stackresolve lock file"),
    (("[" * 5000 + "]" * 5000).encode(), "nested too deep"),
    ('{"schema": "stackresolve/lock@1", "check": {"os": "linux", "python": {"min": "3.6", "max": "3.7"}, '
     '"framework": {"version": "1.15.5", "line": "1.15"}}}'.encode(), "check.framework.label` is missing"),
    ('{"schema": "stackresolve/lock@1", "check": {"os": "linux", "python": {"min": "three", "max": "3.7"}, '
     '"framework": {"version": "1.15.5", "line": "1.15", "label": "x"}}}'.encode(),
     "`check.python.min` is not a version"),
])
def test_a_lock_that_is_not_what_it_claims(tmp_path, content, said):
    path = tmp_path / "bad.lock"
    path.write_bytes(content)
    done = run("check", str(path), "--no-detect")
    assert done.returncode == 2 and said in one_line(done)


def test_a_fifo_as_lock_or_log_is_refused_without_hanging(tmp_path):
    fifo = tmp_path / "fifo"
    os.mkfifo(fifo)
    for args in (["check", str(fifo), "--no-detect"], ["explain", "--file", str(fifo), "--no-detect"]):
        done = run(*args, timeout=20)
        assert done.returncode == 2 and "FIFO" in one_line(done)


def test_an_endless_device_as_log_is_refused():
    done = run("explain", "--file", "/dev/zero", "--no-detect", timeout=20)
    assert done.returncode == 2 and "device" in one_line(done)


def test_a_huge_lock_is_refused(tmp_path):
    big = tmp_path / "big.lock"
    with open(big, "wb") as handle:
        handle.truncate(50 * 1024 * 1024)
    done = run("check", str(big), "--no-detect")
    assert done.returncode == 2 and "too large" in one_line(done)


def test_a_huge_log_is_read_from_its_end(tmp_path):
    log = tmp_path / "train.log"
    with open(log, "w") as handle:
        handle.write("epoch 1/100 loss 0.5\n" * 600_000)  # about 12 MB of noise, then the error
        handle.write("Could not load dynamic library 'libcudart.so.10.0'; dlerror: libcudart.so.10.0: cannot open "
                     "shared object file\n")
    done = run("explain", "--file", str(log), "--no-detect", "--format", "json", timeout=120)
    assert done.returncode == 0
    doc = json.loads(done.stdout)
    assert any("only its last part was read" in n for n in doc["input_notes"])
    assert doc["matches"][0]["category"] == "missing-cuda-runtime"


def test_a_log_that_is_not_utf8_is_read_and_said_so(tmp_path):
    log = tmp_path / "windows.log"
    log.write_bytes("Could not load dynamic library 'cudart64_110.dll'; Fehler: Datei nicht gefunden \xe4\n"
                    .encode("cp1252"))
    done = run("explain", "--file", str(log), "--no-detect", "--format", "json")
    assert done.returncode == 0
    assert any("not UTF-8" in n for n in json.loads(done.stdout)["input_notes"])


# -- detection under one deadline ------------------------------------------------------------------------
@pytest.mark.skipif(os.name != "posix", reason="a shell script stands in for nvidia-smi")
@pytest.mark.parametrize("command", ["detect", "doctor"])
def test_a_hung_nvidia_smi_costs_one_deadline_at_most(tmp_path, command):
    import time

    bindir = tmp_path / "bin"
    bindir.mkdir()
    smi = bindir / "nvidia-smi"
    smi.write_text("#!/bin/sh\nsleep 60\n")
    smi.chmod(0o755)
    env = {"PATH": f"{bindir}{os.pathsep}{os.environ.get('PATH', '')}", "STACKRESOLVE_DETECT_TIMEOUT": "1.5"}
    start = time.monotonic()
    done = run(command, "--format", "json", env=env, timeout=60)
    elapsed = time.monotonic() - start
    assert done.returncode in (0, 1)
    assert elapsed < 1.5 + 1.0 + 2.0  # the deadline, a second of slack, and the interpreter's own start-up
    doc = json.loads(done.stdout)
    probes = doc["probes"] if command == "detect" else []
    assert command == "doctor" or any(p["status"] == "timeout" for p in probes)
