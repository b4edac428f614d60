"""Hostile input, round two (issue 23): a cache that cannot run code, a terminal that cannot be hijacked, numbers
that cannot crash, logs whose encoding is read from their content, output that keeps the file's permission.
Commands run as real processes; each case asserts the exit code, the one stderr line and what must not happen."""

from __future__ import annotations

import json
import os
import pickle
import stat
import subprocess
import sys
from pathlib import Path

import pytest

from test_hostile import PLAN, one_line, run


SHIPPED_PLAN = "tensorflow-gpu==1.15.5"


# -- the knowledge cache runs nothing ---------------------------------------------------------------------------
class RunsCode:
    """Unpickling this calls os.system: what a poisoned pickle snapshot would do."""

    def __init__(self, command: str):
        self.command = command

    def __reduce__(self):
        return os.system, (self.command,)


def cache_env(folder: Path) -> dict:
    return {"STACKRESOLVE_CACHE_DIR": str(folder), "STACKRESOLVE_NO_CACHE": ""}


def core_snapshot(folder: Path) -> Path:
    files = list(folder.glob("knowledge-core-*.snapshot"))
    assert len(files) == 1, files
    return files[0]


def reseal(raw: bytes, payload: bytes) -> bytes:
    """A snapshot with the header of `raw` and another payload, its checksum put right: what anyone who can write
    the cache folder can make."""
    from stackresolve.knowledge.snapshot import checksum

    header_end = raw.index(b"\n", raw.index(b"\n") + 1)
    fields = dict(part.split(b"=", 1) for part in raw[raw.index(b"\n") + 1:header_end].split(b" "))
    fields[b"payload"] = checksum(payload).encode()
    header = b" ".join(k + b"=" + fields[k] for k in sorted(fields))
    return raw[:raw.index(b"\n") + 1] + header + b"\n" + payload


def test_a_poisoned_snapshot_runs_no_code_and_the_plan_is_still_right(tmp_path):
    cache, marker = tmp_path / "cache", tmp_path / "pwned"
    assert run(*PLAN, "--format", "pip", env=cache_env(cache)).returncode == 0
    path = core_snapshot(cache)
    path.write_bytes(reseal(path.read_bytes(), pickle.dumps(RunsCode(f"touch {marker}"))))
    done = run(*PLAN, "--format", "pip", env=cache_env(cache))
    assert done.returncode == 0 and SHIPPED_PLAN in done.stdout.decode()
    assert not marker.exists(), "loading the snapshot ran code"


def snapshot_readable(folder: Path) -> bool:
    from stackresolve.knowledge import snapshot
    from stackresolve.knowledge.base import KnowledgeBase
    from stackresolve.knowledge.loader import _data_key

    return snapshot.load(_data_key(None), KnowledgeBase) is not None


@pytest.mark.parametrize("how", ["folder writable by all", "folder writable by the group", "file writable by all",
                                 "file owned by another user", "folder owned by another user"])
def test_a_cache_someone_else_can_write_is_not_read(cache, how):
    from stackresolve.knowledge.loader import load_knowledge

    load_knowledge()
    assert snapshot_readable(cache)
    path = core_snapshot(cache)
    {"folder writable by all": lambda: cache.chmod(0o777),
     "folder writable by the group": lambda: cache.chmod(0o770),
     "file writable by all": lambda: path.chmod(0o666),
     "file owned by another user": lambda: os.chown(path, 65534, -1),
     "folder owned by another user": lambda: os.chown(cache, 65534, -1)}[how]()
    assert not snapshot_readable(cache)
    assert load_knowledge().wheels  # still loads, from the TOML files


def test_no_snapshot_is_written_into_a_folder_others_can_write(cache):
    from stackresolve.knowledge.loader import load_knowledge

    cache.mkdir(mode=0o777)
    cache.chmod(0o777)
    load_knowledge()
    assert list(cache.iterdir()) == []


def test_a_new_cache_folder_and_snapshot_are_private(cache):
    from stackresolve.knowledge.loader import load_knowledge

    load_knowledge()
    assert stat.S_IMODE(cache.stat().st_mode) == 0o700
    assert stat.S_IMODE(core_snapshot(cache).stat().st_mode) == 0o600


def test_a_snapshot_keeps_records_shared_and_rebuilds_the_look_up_tables(cache):
    from stackresolve.knowledge.loader import load_knowledge

    built = load_knowledge()
    loaded = load_knowledge()
    assert loaded is not built
    gpu = loaded.find_gpu("GeForce GTX 1080")
    assert gpu is not None and any(gpu is g for g in loaded.gpus)  # the index points at the records themselves
    assert [w.version for w in loaded.wheels] == [w.version for w in built.wheels]
    assert loaded.install.apt.cuda_repos and loaded.frameworks.torch_releases  # parts load on first use


# -- a refreshed wheel list that is broken -----------------------------------------------------------------------
def refreshed(folder: Path) -> Path:
    path = folder / "data" / "tensorflow_wheels.toml"
    path.parent.mkdir(parents=True, mode=0o700)
    folder.chmod(0o700)
    return path


@pytest.mark.parametrize("content, problem", [
    ('generated = "2099-01-01"\norigin = "refreshed"\n[[release]\n', "not valid TOML"),
    ('generated = "2099-01-01"\norigin = "refreshed"\n', "holds no TensorFlow releases"),
])
def test_a_broken_refreshed_wheel_list_falls_back_to_the_shipped_one(tmp_path, content, problem):
    cache = tmp_path / "cache"
    path = refreshed(cache)
    path.write_text(content)
    done = run(*PLAN, "--format", "pip", env=cache_env(cache))
    assert done.returncode == 0 and SHIPPED_PLAN in done.stdout.decode()
    line = one_line(done)
    assert line.startswith(f"stackresolve: warning: {path}: {problem}")
    assert line.endswith("using the wheel lists shipped with stackresolve (`stackresolve refresh` rebuilds it)")


def test_a_refreshed_wheel_list_others_can_write_is_not_used(tmp_path):
    from stackresolve.knowledge.loader import constraints_dir

    cache = tmp_path / "cache"
    path = refreshed(cache)
    text = (constraints_dir() / "tensorflow_wheels.toml").read_text()
    path.write_text(text.replace('generated = "', 'generated = "2099-01-01"\norigin = "refreshed"\n# was "', 1))
    path.chmod(0o644)
    assert "2099-01-01, refreshed" in run(*PLAN, env=cache_env(cache)).stdout.decode()  # used while trusted
    path.chmod(0o666)
    done = run(*PLAN, env=cache_env(cache))
    assert done.returncode == 0
    assert "2099-01-01" not in done.stdout.decode() and "shipped" in done.stdout.decode()
    assert one_line(done) == (f"stackresolve: warning: {path}: not used: {path} is owned or writable by another "
                              f"user; using the wheel lists shipped with stackresolve (`stackresolve refresh` "
                              f"rebuilds it)")
import locations

# -- terminal escapes ---------------------------------------------------------------------------------------------
FIXTURES = locations.FIXTURES / "detect"
OSC_TITLE, OSC_CLIPBOARD = "\x1b]0;pwned\x07", "\x1b]52;c;ZXZpbA==\x07"


def assert_no_raw_escapes(done) -> None:
    for stream in (done.stdout, done.stderr):
        text = stream.decode("utf-8", "replace")
        assert not any(ch in text for ch in "\x1b\x07\x9b\x9d"), text


def fake_smi(tmp_path: Path, banner: str, csv_rc: int = 9) -> dict:
    """PATH with an nvidia-smi that prints `banner` when run bare and fails every query (the banner is then
    what detection reads)."""
    bindir = tmp_path / "bin"
    bindir.mkdir()
    (tmp_path / "banner.txt").write_text(banner)
    smi = bindir / "nvidia-smi"
    smi.write_text(f"#!/bin/sh\n[ $# -eq 0 ] || exit {csv_rc}\ncat '{tmp_path / 'banner.txt'}'\n")
    smi.chmod(0o755)
    return {"PATH": f"{bindir}{os.pathsep}{os.environ.get('PATH', '')}", "STACKRESOLVE_DETECT_TIMEOUT": "10"}


def hostile_banner() -> str:
    # smi-banner-linux-550.40.07.txt (a real capture) with an OSC window-title sequence in the GPU name
    banner = (FIXTURES / "smi-banner-linux-550.40.07.txt").read_text()
    return banner.replace("NVIDIA GeForce RTX 4070       ", "NVIDIA GeForce RTX 4070" + OSC_TITLE)


@pytest.mark.skipif(os.name != "posix", reason="a shell script stands in for nvidia-smi")
@pytest.mark.parametrize("args", [("detect",), ("detect", "--format", "json"), ("plan", "--tf", "2.15"),
                                  ("doctor",)])
def test_a_gpu_name_with_a_terminal_escape_never_reaches_the_terminal(tmp_path, args):
    done = run(*args, env=fake_smi(tmp_path, hostile_banner()))
    assert done.returncode in (0, 1)
    assert_no_raw_escapes(done)
    assert "pwned" not in done.stdout.decode()  # the name is no name: nvidia-smi's values pass one gate


def test_a_banner_name_with_control_characters_is_no_name():
    from stackresolve.detect.smi import parse_banner

    gpus = parse_banner(hostile_banner()).gpus
    assert len(gpus) == 1 and gpus[0].name is None and gpus[0].memory_mib == 12282


@pytest.mark.parametrize("fmt", ["text", "json"])
def test_osc_sequences_in_a_log_are_not_printed_back(tmp_path, fmt):
    log = tmp_path / "train.log"
    log.write_text(f"tensorflow 2.4.1 {OSC_TITLE} {OSC_CLIPBOARD}\nCould not load dynamic library "
                   f"'libcudart.so.11.0{OSC_TITLE}'; dlerror: libcudart.so.11.0: cannot open shared object file\n")
    done = run("explain", "--file", str(log), "--no-detect", "--format", fmt)
    assert done.returncode == 0
    assert_no_raw_escapes(done)
    assert "pwned" not in done.stdout.decode() and "ZXZpbA" not in done.stdout.decode()
    if fmt == "text":
        assert "seen:    Could not load dynamic library 'libcudart.so.11.0';" in done.stdout.decode()


def test_whatever_reaches_the_streams_passes_the_terminal_gate():
    from stackresolve.cli.terminal import safe

    assert safe("GPU\x1b]0;x\x07 \x9b31m \u202eevil\r\n\tok") == "GPU\\x1b]0;x\\x07 \\x9b31m \\u202eevil\\r\n\tok"
    assert safe("plain text\n\ttabbed, ümlaut, 中文") == "plain text\n\ttabbed, ümlaut, 中文"


def test_an_escape_in_a_lock_is_not_printed_raw(tmp_path):
    lock = tmp_path / "stackresolve.lock"
    assert run(*PLAN, "--format", "lock", "-o", str(lock)).returncode == 0
    doc = json.loads(lock.read_text())
    doc["check"]["framework"]["label"] = "tensorflow-gpu" + OSC_TITLE
    lock.write_text(json.dumps(doc))
    done = run("check", str(lock), "--no-detect", "--os", "linux", "--gpu-cc", "6.1", "--driver", "440.33")
    assert_no_raw_escapes(done)


# -- numbers that cannot crash -------------------------------------------------------------------------------------
HUGE = "1" * 5000  # past int()'s 4300-digit limit
NO_DETECT = ("--no-detect", "--os", "linux", "--gpu-cc", "6.1")


@pytest.mark.parametrize("args, said", [
    (("plan", "--tf", f"2.{HUGE}", *NO_DETECT), f"--tf '2.{'1' * 38}'... (5002 characters): "
                                                "not a TensorFlow version"),
    (("plan", "--tf", f">=2.{HUGE}", *NO_DETECT), "(5004 characters): not a version specifier"),
    (("plan", "--tf", "2.15", "--cudnn", f"8.{HUGE}", *NO_DETECT), "--cudnn '8.111"),
    (("plan", "--torch", f"2.{HUGE}", *NO_DETECT), "(5002 characters): not a PyTorch version"),
    (("plan", "--tf", "2.15", "--driver", f"535.{HUGE}", *NO_DETECT), "not an NVIDIA driver version"),
    (("show", "tf", f"2.{HUGE}"), "show tf '2.111"),
    (("show", "jax", f"0.{HUGE}"), "(5002 characters): not a version"),
    (("plan", "--tf", "２.１０", *NO_DETECT), "--tf '２.１０': not a TensorFlow version; use e.g. 1.15"),
    (("plan", "--torch", "２.５", *NO_DETECT), "--torch '２.５': not a PyTorch version"),
    (("plan", "--jax", "０.４", *NO_DETECT), "--jax '０.４': not a JAX version"),
    (("plan", "--tf", "2.15", "--driver", "５３５.１", *NO_DETECT), "--driver '５３５.１': not an NVIDIA driver version"),
    (("plan", "--tf", "2.15", "--cudnn", "８.６", *NO_DETECT), "--cudnn '８.６': not a version"),
    (("plan", "--tf", "2.15", "--no-detect", "--gpu-cc", "８.６"), "--gpu-cc '８.６': not a compute capability; use "
                                                                   "major.minor, e.g. 8.6"),
    (("plan", "--tf", "2.15", "--python", "３.１０", *NO_DETECT), "--python '３.１０': not a Python version"),
    (("matrix", "--gpu-cc", "８.６"), "--gpu-cc '８.６': not a compute capability"),
    (("show", "tf", "２.１"), "show tf '２.１': not a version"),
])
def test_a_number_no_version_has_is_one_line_and_exit_2(args, said):
    done = run(*args)
    assert done.returncode == 2
    line = one_line(done)
    assert line.startswith("stackresolve: error: ") and said in line
    assert len(line) < 300  # the 5,000 digits are not echoed back


def plan_lock(tmp_path: Path) -> dict:
    path = tmp_path / "stackresolve.lock"
    assert run(*PLAN, "--format", "lock", "-o", str(path)).returncode == 0
    return json.loads(path.read_text())


@pytest.mark.parametrize("value, shown", [(f"410.{HUGE}", f"'410.{'1' * 36}'... (5004 characters)"),
                                          ("４１０.４８", "'４１０.４８'")])
def test_a_lock_whose_driver_minimum_is_no_version_is_one_line(tmp_path, value, shown):
    doc = plan_lock(tmp_path)
    doc["check"]["driver"]["min"] = value
    lock = tmp_path / "hostile.lock"
    lock.write_text(json.dumps(doc))
    done = run("check", str(lock), "--no-detect", "--driver", "440.33")
    assert done.returncode == 2
    # read by the driver's one parser (issue 35), which says what is accepted
    assert one_line(done) == (f"stackresolve: error: {lock}: lock field `check.driver.min` is not an NVIDIA driver "
                              f"version ({shown}); use e.g. 470.82.01, 535.98 or a branch such as 580 (re-create the "
                              f"lock with `stackresolve plan --format lock`)")


@pytest.mark.parametrize("value", ["１０.０", f"10.{HUGE}"])
def test_check_cuda_takes_ascii_digits_only(tmp_path, value):
    lock = tmp_path / "stackresolve.lock"
    lock.write_text(json.dumps(plan_lock(tmp_path)))
    done = run("check", str(lock), "--no-detect", "--cuda", value)
    assert done.returncode == 2 and "--cuda '" in one_line(done) and "not a version; use e.g. 10.0" in one_line(done)


def test_a_huge_driver_in_the_environment_is_one_line():
    done = run("plan", "--tf", "2.15", env={"STACKRESOLVE_DRIVER": f"535.{HUGE}"})
    assert done.returncode == 2
    assert one_line(done) == (f"stackresolve: error: STACKRESOLVE_DRIVER='535.{'1' * 36}'... (5004 characters) is "
                              f"not a driver version; use e.g. 470.82.01, 535.98 or a branch such as 580")


@pytest.mark.parametrize("name, value, accepted", [("STACKRESOLVE_DRIVER", "abc", "or a branch such as 580"),
                                                   ("CONDA_OVERRIDE_CUDA", "x", "use a version such as 12.2")])
def test_a_bad_override_says_what_is_accepted_as_the_flag_does(name, value, accepted):
    # the brief's one line: what was wrong and what is accepted (the finding's fix used to be dropped)
    done = run("plan", "--tf", "2.15", env={name: value})
    assert done.returncode == 2 and one_line(done).endswith(accepted)


def smi_reporting_driver(tmp_path: Path, driver: str) -> dict:
    """An nvidia-smi whose CSV query and banner both print `driver` (the banner: a real capture, edited)."""
    banner = (FIXTURES / "smi-banner-linux-550.40.07.txt").read_text().replace("550.40.07     ", driver)
    env = fake_smi(tmp_path, banner)
    smi = tmp_path / "bin" / "nvidia-smi"
    smi.write_text(f"""#!/bin/sh
case "$1" in
  --query-gpu=*) echo "index, pci.bus_id, name, compute_cap, driver_version, memory.total [MiB]"
     echo "0, 00000000:01:00.0, NVIDIA GeForce RTX 4090, 8.9, {driver}, 24564" ;;
  "") cat '{tmp_path / "banner.txt"}' ;;
  *) exit 2 ;;
esac
""")
    return env


@pytest.mark.skipif(os.name != "posix", reason="a shell script stands in for nvidia-smi")
@pytest.mark.parametrize("args", [("detect",), ("plan", "--tf", "2.15"), ("doctor",)])
@pytest.mark.parametrize("driver", [f"535.{HUGE}", "５３５.１０４.０５"])
def test_a_probe_reporting_a_driver_that_is_no_version_is_a_finding(tmp_path, args, driver):
    done = run(*args, env=smi_reporting_driver(tmp_path, driver))
    assert done.returncode in (0, 1)  # doctor: 1, the driver being unknown
    out = done.stdout.decode()
    if args[0] != "plan":
        assert "driver-version-unreadable" in out and "which is not a version" in out
    else:
        assert "driver-unknown" in out


# -- logs whose encoding is read from their content ------------------------------------------------------------
CUDART_ERROR = ("Could not load dynamic library 'cudart64_110.dll'; dlerror: cudart64_110.dll not found\r\n")
POWERSHELL_PART = ("PS C:\\work> python train.py\r\n2021-03-01 12:00:00.000000: I tensorflow/core/platform/"
                   "cpu_feature_guard.cc:142] This TensorFlow binary is optimized\r\n")


@pytest.mark.parametrize("content, note", [
    (b"\xff\xfe" + CUDART_ERROR.encode("ascii"), "starts with a UTF-16 byte-order mark but is not UTF-16"),
    (b"\xff\xfe" + POWERSHELL_PART.encode("utf-16-le") + CUDART_ERROR.encode("cp1252"), "decoded part by part"),
    (b"\xff\xfe" + CUDART_ERROR.encode("utf-16-le") + "C:\\work> echo done\r\n".encode("cp1252"),
     "decoded part by part"),
    (b"\xff\xfe" + ("错误 " + CUDART_ERROR).encode("utf-16-le"), "decoded as UTF-16"),
])
def test_a_log_is_decoded_from_its_content_not_from_its_first_two_bytes(tmp_path, content, note):
    log = tmp_path / "train.log"
    log.write_bytes(content)
    done = run("explain", "--file", str(log), "--no-detect", "--format", "json")
    assert done.returncode == 0
    doc = json.loads(done.stdout)
    assert doc["matches"][0]["category"] == "missing-cuda-runtime"
    assert any(note in n for n in doc["input_notes"]), doc["input_notes"]


# -- -o obeys the file's own permission ----------------------------------------------------------------------------
# Tests run as root, who may write anything: the command runs as `nobody` in a child that first runs it once as
# root (into a scratch file: every module it needs is then imported, since nobody cannot read this interpreter's
# standard library under /root) and then drops to nobody's user and group ids for the run that counts.
AS_NOBODY = """
import os, sys
from stackresolve.cli import main

def call(argv):
    sys.argv = ["stackresolve", *argv]
    try:
        main()
    except SystemExit as exc:
        return exc.code

scratch, target, argv = sys.argv[1], sys.argv[2], sys.argv[3:]
call([scratch if a == target else a for a in argv])
sys.stderr.flush()
sys.stderr.write("---\\n")
os.setgroups([])
os.setgid(65534)
os.setuid(65534)
sys.exit(call(argv))
"""


def run_as_nobody(tmp_path: Path, target: Path, *args):
    if os.geteuid() != 0:
        pytest.skip("needs root, to run the command as another user")
    scratch = tmp_path / "root-only" / "warm.txt"
    scratch.parent.mkdir()
    done = subprocess.run([sys.executable, "-c", AS_NOBODY, str(scratch), str(target), *args], capture_output=True,
                          timeout=120, env={**os.environ, "STACKRESOLVE_NO_CACHE": "1"})
    assert b"Traceback" not in done.stderr, done.stderr.decode()
    done.stderr = done.stderr.split(b"---\n", 1)[1]
    return done


@pytest.fixture
def shared_folder():
    """A world-writable folder with the sticky bit, like /tmp, that `nobody` can reach (pytest's own temporary
    folders are root's alone)."""
    import shutil
    import tempfile

    folder = Path(tempfile.mkdtemp(prefix="stackresolve-shared-"))
    folder.chmod(0o1777)
    yield folder
    shutil.rmtree(folder)


@pytest.mark.parametrize("owner, mode", [("root", 0o644), ("nobody", 0o444)])
def test_o_does_not_replace_a_file_the_user_may_not_write(tmp_path, shared_folder, owner, mode):
    target = shared_folder / "requirements.txt"
    target.write_text("precious\n")
    if owner == "nobody":
        os.chown(target, 65534, 65534)
    target.chmod(mode)
    before = target.stat()
    done = run_as_nobody(tmp_path, target, *PLAN, "--format", "pip", "-o", str(target))
    assert done.returncode == 3
    assert one_line(done) == f"stackresolve: error: -o '{target}': cannot write (Permission denied)"
    after = target.stat()
    assert target.read_text() == "precious\n"
    assert (after.st_ino, after.st_uid, stat.S_IMODE(after.st_mode)) == (before.st_ino, before.st_uid, mode)
    assert [p.name for p in target.parent.iterdir()] == ["requirements.txt"]  # no temporary left behind


def test_o_still_writes_a_file_the_user_may_write(tmp_path, shared_folder):
    target = shared_folder / "requirements.txt"
    target.write_text("old\n")
    os.chown(target, 65534, 65534)
    done = run_as_nobody(tmp_path, target, *PLAN, "--format", "pip", "-o", str(target))
    assert done.returncode == 0 and SHIPPED_PLAN in target.read_text()
    assert target.stat().st_uid == 65534


def test_o_as_root_keeps_the_owner_of_the_file_it_replaces(tmp_path):
    if os.geteuid() != 0:
        pytest.skip("only root can give a file to another user")
    target = tmp_path / "requirements.txt"
    target.write_text("old\n")
    os.chown(target, 65534, 65534)
    assert run(*PLAN, "--format", "pip", "-o", str(target)).returncode == 0
    assert (target.stat().st_uid, target.stat().st_gid) == (65534, 65534)  # as `>` leaves it


@pytest.mark.parametrize("name", ["", " "])
def test_o_naming_no_file_is_bad_input(name):
    done = run(*PLAN, "--format", "pip", "-o", name)
    assert done.returncode == 2
    assert one_line(done) == f"stackresolve: error: -o {name!r}: no file named; give a file, or '-' for standard output"


@pytest.mark.parametrize("name", ["-n", "--prefix", ".hidden"])
def test_an_env_name_conda_would_read_as_an_option_is_refused(name):
    done = run(*PLAN, "--format", "conda", "--env-name", name)
    assert done.returncode == 2
    assert one_line(done) == (f"stackresolve: error: --env-name {name!r}: use letters, digits, '-', '_' and '.' only, "
                              f"starting with a letter, digit or '_'")
    assert b"conda activate" not in done.stdout


# -- refresh --timeout is one deadline ---------------------------------------------------------------------------
@pytest.fixture
def silent_index():
    """A local server that accepts connections and never answers (no network involved)."""
    import socket
    import threading

    server = socket.socket()
    server.bind(("127.0.0.1", 0))
    server.listen(64)
    held = []

    def accept():
        while True:
            try:
                held.append(server.accept()[0])
            except OSError:
                return

    threading.Thread(target=accept, daemon=True).start()
    yield f"http://127.0.0.1:{server.getsockname()[1]}/simple"
    server.close()
    for connection in held:
        connection.close()


@pytest.fixture
def busy_index():
    """A local server that answers every request 503 with `Retry-After: 60`."""
    import threading
    from http.server import BaseHTTPRequestHandler, ThreadingHTTPServer

    class Busy(BaseHTTPRequestHandler):
        def do_GET(self):
            self.send_response(503)
            self.send_header("Retry-After", "60")
            self.send_header("Content-Length", "0")
            self.end_headers()

        def log_message(self, *args):
            pass

    server = ThreadingHTTPServer(("127.0.0.1", 0), Busy)
    threading.Thread(target=server.serve_forever, daemon=True).start()
    yield f"http://127.0.0.1:{server.server_address[1]}/simple"
    server.shutdown()


@pytest.mark.parametrize("index", ["silent_index", "busy_index"])
def test_refresh_timeout_is_one_deadline_for_the_whole_command(tmp_path, index, request):
    import time

    url = request.getfixturevalue(index)
    started = time.monotonic()
    done = run("refresh", "--index-url", url, "--timeout", "3", "--index-only", env=cache_env(tmp_path / "cache"),
               timeout=60)
    elapsed = time.monotonic() - started
    assert done.returncode == 1
    lines = done.stderr.decode().splitlines()
    # every package-index kind stopped by the one deadline, each said on its own line; nothing refreshed
    assert ("stackresolve: refresh: tensorflow_wheels: not reachable (stopped after 3 s (the overall deadline passed "
            "while reading /simple/tensorflow/)); the data in use stays as it was") in lines
    from stackresolve.knowledge.refreshed import KINDS

    assert all("not reachable" in line for line in lines[:-1]) and len(lines) == len(KINDS) + 1  # one per kind
    assert lines[-1] == "stackresolve: error: nothing was refreshed; the data in use stays as it was"
    assert elapsed < 3 + 4  # the deadline and the interpreter's start-up, not 60 s x 5 retries
    assert not (tmp_path / "cache" / "data").exists()


# -- fuzzing --------------------------------------------------------------------------------------------------
def test_a_seeded_slice_of_the_input_fuzzer_finds_nothing():
    """scripts/fuzz_inputs.py, 200 runs: plan/check/explain/show/matrix and STACKRESOLVE_DRIVER/GPU_CC with other
    scripts' digits, huge numbers and control characters end in exit 0, 1 or 2, one line for 2, no traceback and
    no control character on the streams."""
    import importlib.util

    spec = importlib.util.spec_from_file_location("fuzz_inputs", locations.REPO / "scripts" /
                                                  "fuzz_inputs.py")
    fuzz_inputs = importlib.util.module_from_spec(spec)
    spec.loader.exec_module(fuzz_inputs)
    codes, failures = fuzz_inputs.fuzz(200, seed=2023)
    assert not failures, failures[:5]
    assert codes.get(2, 0) > 50 and codes.get(0, 0) > 20  # it did try hostile and ordinary input alike
