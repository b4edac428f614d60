"""Hostile input, round three (issue 33, and issue 32's install items): a lock cannot run code (wheels only, but the
sdists the knowledge base names), cannot pick the host (the stack's index is the knowledge base's; plain http is
refused), cannot nest its way to a traceback (one depth and size rule for JSON, TOML and YAML), two installs into
one folder exclude each other, a planted marker proves nothing, the machine is checked before anything is made, and
a full lock keeps the user's own uv settings. Commands run as real processes, offline (local wheels and sdists
built here, --no-index --find-links); each case asserts the exit code, the message and what must not happen."""

from __future__ import annotations

import hashlib
import io
import json
import os
import subprocess
import sys
import tarfile
import time
from pathlib import Path

import pytest

from install.wheels import HERE_PYTHON, TF_FOR_PYTHON, uv_available, wheels_for
from test_hostile import run

FULL_LOCK_HEADER = f"# resolved by uv for Python {HERE_PYTHON} on x86_64-manylinux_2_28, with hashes; install with\n"

# A build backend that leaves a file behind when it runs, wherever a build frontend (pip, uv) calls it: what any
# sdist can do, since building it runs its code.
EVIL_BACKEND = '''import os, pathlib
def _ran():
    pathlib.Path(os.environ["EVIL_MARK"]).write_text("the build backend ran")
def get_requires_for_build_wheel(config_settings=None):
    _ran(); return []
def prepare_metadata_for_build_wheel(directory, config_settings=None):
    _ran(); raise SystemExit(1)
def build_wheel(directory, config_settings=None, metadata_directory=None):
    _ran(); raise SystemExit(1)
def build_sdist(directory, config_settings=None):
    _ran(); raise SystemExit(1)
'''


def stackresolve(*args, env=None, timeout=600):
    done = run(*args, env={"STACKRESOLVE_CACHE_DIR": "", **(env or {})}, timeout=timeout)
    return subprocess.CompletedProcess(done.args, done.returncode, done.stdout.decode(), done.stderr.decode())


def build_sdist(folder: Path, name: str, version: str, backend: str = EVIL_BACKEND) -> Path:
    """`name-version.tar.gz` with an in-tree build backend (PEP 517 backend-path), so nothing is downloaded to
    build it."""
    base = f"{name}-{version}"
    files = {
        "pyproject.toml": f'[build-system]\nrequires = []\nbuild-backend = "backend"\nbackend-path = ["."]\n'
                          f'[project]\nname = "{name}"\nversion = "{version}"\n',
        "backend.py": backend,
        "PKG-INFO": f"Metadata-Version: 2.1\nName: {name}\nVersion: {version}\n",
    }
    folder.mkdir(parents=True, exist_ok=True)
    path = folder / f"{base}.tar.gz"
    with tarfile.open(path, "w:gz") as archive:
        for member, text in files.items():
            data = text.encode()
            info = tarfile.TarInfo(f"{base}/{member}")
            info.size = len(data)
            archive.addfile(info, io.BytesIO(data))
    return path


@pytest.fixture(scope="module")
def cpu_lock(tmp_path_factory) -> tuple[dict, Path]:
    """A TF CPU lock for this Python (as a document) and a folder with a wheel for each of its requirements."""
    if HERE_PYTHON not in TF_FOR_PYTHON:
        pytest.skip(f"no TensorFlow CPU line is planned here for Python {HERE_PYTHON}")
    folder = tmp_path_factory.mktemp("lock")
    lock = folder / "stackresolve.lock"
    done = stackresolve("plan", "--no-detect", "--tf", TF_FOR_PYTHON[HERE_PYTHON], "--cpu", "--os", "linux",
                        "--python", HERE_PYTHON, "--format", "lock", "-o", str(lock))
    assert done.returncode == 0, done.stderr
    doc = json.loads(lock.read_text())
    return doc, wheels_for([l for l in doc["pip"] if not l.startswith("-")], folder / "wheels")


def write(path: Path, doc) -> Path:
    path.write_text(json.dumps(doc) if isinstance(doc, dict) else doc)
    return path


# -- 1. a lock cannot run code ----------------------------------------------------------------------------------
@pytest.mark.parametrize("installer", ["uv", "pip"])
def test_a_lock_naming_an_sdist_only_package_runs_no_build_backend(cpu_lock, tmp_path, installer):
    if installer == "uv" and not uv_available():
        pytest.skip("uv is not installed")
    doc, wheels = cpu_lock
    links, mark = tmp_path / "links", tmp_path / "the-backend-ran"
    build_sdist(links, "evilpkg", "1.0")
    lock = write(tmp_path / "evil.lock", {**doc, "pip": ["evilpkg==1.0"]})
    done = stackresolve("install", str(lock), "--venv", str(tmp_path / "venv"), "--installer", installer,
                        "--no-index", "--find-links", str(links), "--python-exe", sys.executable,
                        env={"EVIL_MARK": str(mark)})
    assert done.returncode == 1, done.stdout + done.stderr
    assert not mark.exists(), "the sdist's build backend ran"
    assert not (tmp_path / "venv").exists()


def test_a_hashed_full_lock_pinning_an_sdist_by_its_true_hash_runs_no_build_backend(tmp_path):
    links, mark = tmp_path / "links", tmp_path / "the-backend-ran"
    sdist = build_sdist(links, "evilpkg", "1.0")
    digest = hashlib.sha256(sdist.read_bytes()).hexdigest()
    lock = write(tmp_path / "requirements.lock", FULL_LOCK_HEADER + f"evilpkg==1.0 \\\n    --hash=sha256:{digest}\n")
    done = stackresolve("install", str(lock), "--venv", str(tmp_path / "venv"), "--installer", "pip", "--no-index",
                        "--find-links", str(links), "--python-exe", sys.executable, env={"EVIL_MARK": str(mark)})
    assert done.returncode == 1 and not mark.exists()


WHEEL_BACKEND = '''import base64, hashlib, os, pathlib, zipfile
NAME, VERSION = "{name}", "{version}"
def get_requires_for_build_wheel(config_settings=None):
    return []
def build_wheel(directory, config_settings=None, metadata_directory=None):
    pathlib.Path(os.environ["EVIL_MARK"] + "-" + NAME).write_text("built")
    dist = f"{{NAME}}-{{VERSION}}.dist-info"
    files = {{f"{{NAME}}.py": "", f"{{dist}}/METADATA": f"Metadata-Version: 2.1\\nName: {{NAME}}\\nVersion: {{VERSION}}\\n",
             f"{{dist}}/WHEEL": "Wheel-Version: 1.0\\nGenerator: test\\nRoot-Is-Purelib: true\\nTag: py3-none-any\\n"}}
    def line(path, text):
        digest = base64.urlsafe_b64encode(hashlib.sha256(text.encode()).digest()).rstrip(b"=").decode()
        return f"{{path}},sha256={{digest}},{{len(text)}}"
    files[f"{{dist}}/RECORD"] = "\\n".join([line(p, t) for p, t in files.items()] + [f"{{dist}}/RECORD,,"]) + "\\n"
    wheel = f"{{NAME}}-{{VERSION}}-py3-none-any.whl"
    with zipfile.ZipFile(os.path.join(directory, wheel), "w") as archive:
        for path, text in files.items():
            archive.writestr(path, text)
    return wheel
'''


@pytest.mark.parametrize("installer", ["uv", "pip"])
def test_only_the_sdists_the_knowledge_base_names_are_built(tmp_path, installer):
    """The installer options install() gives: --only-binary :all:, then --no-binary for each sdist the knowledge base
    names (pip reads them in order: --only-binary :all: clears the names given before it). Run through the real
    installers: the named sdist is built, an unnamed one is not."""
    from stackresolve.install.run import binary_options
    from stackresolve.knowledge.records import SourceBuild

    if installer == "uv" and not uv_available():
        pytest.skip("uv is not installed")
    links, mark = tmp_path / "links", tmp_path / "built"
    build_sdist(links, "termcolor", "1.1.0", WHEEL_BACKEND.format(name="termcolor", version="1.1.0"))
    build_sdist(links, "evilpkg", "1.0")
    venv = tmp_path / "venv"
    subprocess.run([sys.executable, "-m", "venv", str(venv)] + (["--without-pip"] if installer == "uv" else []),
                   check=True, timeout=300)
    python = venv / "bin" / "python"
    named = SourceBuild("termcolor", "1.1.0", ("2.6",), (), "why", "source")
    if installer == "uv":
        from stackresolve.lock.full import uv_binary

        base = [uv_binary(), "pip", "install", "--python", str(python), "--no-config"]
    else:
        base = [str(python), "-m", "pip", "install", "--disable-pip-version-check"]
    env = {**os.environ, "EVIL_MARK": str(mark)}
    allowed = subprocess.run([*base, "--no-index", "--find-links", str(links), *binary_options((named,)),
                              "termcolor==1.1.0"], capture_output=True, text=True, timeout=300, env=env)
    assert allowed.returncode == 0, allowed.stdout + allowed.stderr
    assert Path(f"{mark}-termcolor").exists()
    refused = subprocess.run([*base, "--no-index", "--find-links", str(links), *binary_options((named,)),
                              "evilpkg==1.0"], capture_output=True, text=True, timeout=300, env=env)
    assert refused.returncode != 0 and not mark.exists()


def test_a_tensorflow_2_6_lock_builds_only_its_named_sdists_pinned(kb, tmp_path):
    """TensorFlow 2.6 requires termcolor~=1.1.0, wrapt~=1.12.1 and clang~=5.0, each only an sdist on the index
    (constraints/tensorflow.toml [[source_build]]): the install pins exactly those and builds nothing else."""
    from stackresolve.install.run import binary_options, requirements_text
    from stackresolve.install.target import read_target, with_knowledge
    from stackresolve.model.enums import Os

    lock = tmp_path / "tf26.lock"
    assert stackresolve("plan", "--no-detect", "--tf", "2.6", "--cpu", "--os", "linux", "--format", "lock", "-o",
                        str(lock)).returncode == 0
    target = with_knowledge(read_target(lock.read_text(), str(lock), None, Os.LINUX), kb)
    sources = target.source_builds("3.9")
    assert sorted(b.requirement for b in sources) == ["clang==5.0", "termcolor==1.1.0", "wrapt==1.12.1"]
    text = requirements_text(target, "uv", sources)
    assert {"clang==5.0", "termcolor==1.1.0", "wrapt==1.12.1"} <= set(text.splitlines())
    assert binary_options(sources)[:2] == ["--only-binary", ":all:"]
    assert sorted(binary_options(sources)[3::2]) == ["clang", "termcolor", "wrapt"]
    # TensorFlow 2.15 has wheels all the way down: nothing is built
    lock215 = tmp_path / "tf215.lock"
    assert stackresolve("plan", "--no-detect", "--tf", "2.15", "--cpu", "--os", "linux", "--format", "lock", "-o",
                        str(lock215)).returncode == 0
    assert with_knowledge(read_target(lock215.read_text(), "l", None, Os.LINUX), kb).source_builds("3.11") == ()


# -- 2. a lock cannot pick the host -----------------------------------------------------------------------------
def test_a_json_locks_own_index_must_be_the_knowledge_bases_index_for_its_build(cpu_lock, tmp_path):
    doc, wheels = cpu_lock
    evil = "https://index.invalid/simple/"
    stack = {**doc["stack"], "framework": {**doc["stack"]["framework"], "index_url": evil,
                                           "index_option": "--extra-index-url"}}
    lock = write(tmp_path / "evil.lock", {**doc, "stack": stack, "pip": [f"--extra-index-url {evil}", *doc["pip"]]})
    venv = tmp_path / "venv"
    done = stackresolve("install", str(lock), "--venv", str(venv), "--no-index", "--find-links", str(wheels),
                        "--python-exe", sys.executable)
    assert done.returncode == 2 and done.stderr.count("\n") == 1, done.stdout + done.stderr
    assert "the knowledge base's index for that build is the default index" in done.stderr
    assert not venv.exists()
    exported = stackresolve("export", str(lock))
    assert exported.returncode == 2 and evil not in exported.stdout


def test_every_index_the_planner_writes_into_a_lock_is_the_knowledge_bases(kb, tmp_path):
    """The other side of the rule: the locks `plan` makes (NVIDIA's index, PyTorch's per-variant indexes and its
    find-links page, JAX's find-links page) install as they are."""
    from stackresolve.install.target import read_target, with_knowledge
    from stackresolve.model.enums import Os

    targets = [("--tf", "1.15", "--vendor", "nvidia", "--gpu", "RTX 4090", "--driver", "550.54"),
               ("--torch", "2.5", "--gpu", "RTX 4090", "--driver", "550.54"),
               ("--torch", "2.5", "--cpu"), ("--torch", "1.12", "--gpu", "RTX 3090", "--driver", "470.82"),
               ("--torch", "1.9", "--gpu", "RTX 3090", "--driver", "470.82"),
               ("--torch", "2.1", "--gpu", "GTX 1080", "--driver", "520.61"),
               ("--jax", "0.4.20", "--gpu", "RTX 4090", "--driver", "550.54"), ("--tf", "2.15", "--cpu")]
    seen = set()
    for args in targets:
        lock = tmp_path / "l.lock"
        assert stackresolve("plan", "--no-detect", "--os", "linux", *args, "--format", "lock", "-o",
                            str(lock)).returncode == 0, args
        target = with_knowledge(read_target(lock.read_text(), "l", None, Os.LINUX), kb)
        assert target.index_args == target.claimed_index, args
        seen.add(target.index_args[:1])
    assert seen == {(), ("--index-url",), ("--extra-index-url",), ("--find-links",)}


def test_a_pylock_wheel_over_plain_http_is_refused(tmp_path):
    lock = write(tmp_path / "pylock.toml", FULL_LOCK_HEADER + 'lock-version = "1.0"\n[[packages]]\nname = "six"\n'
                 'version = "1.17.0"\n[[packages.wheels]]\nurl = "http://files.invalid/six-1.17.0-py2.py3-none-any.whl"'
                 '\nhashes = { sha256 = "' + "0" * 64 + '" }\n')
    done = stackresolve("install", str(lock), "--venv", str(tmp_path / "venv"), "--installer", "uv")
    assert done.returncode == 2 and "is not https" in done.stderr and done.stderr.count("\n") == 1
    assert not (tmp_path / "venv").exists()


@pytest.mark.parametrize("flag", ["--index-url", "--find-links"])
def test_a_plain_http_index_on_the_command_line_is_refused(cpu_lock, tmp_path, flag):
    doc, _ = cpu_lock
    lock = write(tmp_path / "l.lock", doc)
    done = stackresolve("install", str(lock), "--venv", str(tmp_path / "venv"), flag, "http://mirror.invalid/simple/",
                        "--python-exe", sys.executable)
    assert done.returncode == 2 and "plain http" in done.stderr and not (tmp_path / "venv").exists()


# -- 4. one rule for every structured input ---------------------------------------------------------------------
DEEP_TOML = "a = " + "[" * 3000 + "]" * 3000 + "\n"
LONG_DOTTED_KEY = ".".join(["a"] * 50_000) + " = 1\n"  # tomllib: about a minute, quadratic in the parts


@pytest.mark.parametrize("text", [DEEP_TOML, "a = " + "{b = " * 3000 + "1" + "}" * 3000 + "\n", LONG_DOTTED_KEY],
                         ids=["arrays", "inline-tables", "dotted-key"])
def test_deep_toml_is_one_line_and_exit_2_everywhere(tmp_path, text):
    pylock = write(tmp_path / "pylock.toml", text)
    started = time.monotonic()
    for args in (("install", str(pylock), "--venv", str(tmp_path / "venv"), "--python", HERE_PYTHON),
                 ("check", str(pylock), "--before-install", "--python", HERE_PYTHON),
                 ("plan", "--fleet", str(pylock), "--torch", "latest")):
        done = stackresolve(*args)
        assert done.returncode == 2, (args, done.stderr)
        assert done.stderr.count("\n") == 1 and "nested too deeply" in done.stderr, (args, done.stderr)
    assert time.monotonic() - started < 60  # three processes; the dotted key alone took tomllib a minute


@pytest.mark.parametrize("text, said", [
    ('{"schema": "stackresolve/lock@1", "x": ' + "1" * 5000 + "}", "not valid JSON"),
    ('{"a": ' * 100 + "1" + "}" * 100, "nested too deeply"),
])
def test_a_json_lock_that_cannot_be_read_is_one_line(tmp_path, text, said):
    lock = write(tmp_path / "bad.lock", text)
    for args in (("check", str(lock), "--no-detect"), ("install", str(lock), "--venv", str(tmp_path / "v")),
                 ("export", str(lock))):
        done = stackresolve(*args)
        assert done.returncode == 2 and done.stderr.count("\n") == 1 and said in done.stderr, (args, done.stderr)


def test_the_shared_reader_bounds_yaml_too():
    from stackresolve.files.read import StructuredInputError, parse_structured

    laughs = "a: &a [1, 2, 3, 4, 5, 6, 7, 8, 9]\n" + "".join(
        f"{chr(98 + i)}: &{chr(98 + i)} [{', '.join(['*' + chr(97 + i)] * 9)}]\n" for i in range(8))
    for text, said in ((laughs, "values per character"), ("[" * 5000 + "]" * 5000, "nested too deeply"),
                       ("a: !!python/object/apply:os.system [echo]", "not valid YAML")):
        with pytest.raises(StructuredInputError, match=said):
            parse_structured(text, "doc", "YAML")
    assert parse_structured("a: [1, {b: c}]", "doc", "YAML") == {"a": [1, {"b": "c"}]}


def test_a_pylock_of_the_wrong_shape_is_one_line(tmp_path):
    for body in ("packages = 5\n", 'packages = [1]\n',
                 '[[packages]]\nname = "six"\nversion = "1.17.0"\nwheels = [{ url = "https://x.invalid/s.whl" }]\n'):
        lock = write(tmp_path / "pylock.toml", FULL_LOCK_HEADER + body)
        done = stackresolve("install", str(lock), "--venv", str(tmp_path / "v"), "--installer", "uv")
        assert done.returncode == 2 and done.stderr.count("\n") == 1, (body, done.stderr)


# -- 6. one install at a time per folder ------------------------------------------------------------------------
def test_a_second_install_into_the_same_folder_is_refused_while_the_first_runs(cpu_lock, tmp_path):
    from stackresolve.install.run import folder_lock

    doc, wheels = cpu_lock
    lock = write(tmp_path / "l.lock", doc)
    venv = tmp_path / "venv"
    with folder_lock(venv) as held:  # install A, half way through
        assert held.exists()
        done = stackresolve("install", str(lock), "--venv", str(venv), "--no-index", "--find-links", str(wheels),
                            "--python-exe", sys.executable)
        assert done.returncode == 2 and f"another stackresolve install (process {os.getpid()})" in done.stderr
        assert not venv.exists()
    assert not held.exists()  # A is done: its lock file is gone, and B may go
    again = stackresolve("install", str(lock), "--venv", str(venv), "--no-index", "--find-links", str(wheels),
                         "--python-exe", sys.executable, "--format", "json")
    assert again.returncode == 0, again.stderr
    assert json.loads(again.stdout)["lock_file"].endswith(".venv.stackresolve-install.lock")


def test_a_planted_link_at_the_lock_path_writes_nothing_through_it(tmp_path):
    from stackresolve.install.run import folder_lock
    from stackresolve.request.build import InputError

    victim = tmp_path / "victim"
    victim.write_text("precious")
    (tmp_path / ".venv.stackresolve-install.lock").symlink_to(victim)
    with pytest.raises(InputError, match="cannot open the install lock"):
        with folder_lock(tmp_path / "venv"):
            pass
    assert victim.read_text() == "precious"


# -- 7. a planted marker proves nothing -------------------------------------------------------------------------
def planted_venv(folder: Path, ran: Path, marker: dict) -> None:
    """A venv as a cloned repository might hold one: a marker with the right schema, and a bin/python that leaves a
    file behind when it runs (and fails, so that nothing is installed through it into the interpreter running the
    tests, as it would if it went on as that Python)."""
    subprocess.run([sys.executable, "-m", "venv", "--without-pip", str(folder)], check=True, timeout=300)
    python = folder / "bin" / "python"
    python.unlink()
    python.write_text(f"#!/bin/sh\necho ran > {ran}\nexit 1\n")
    python.chmod(0o755)
    (folder / ".stackresolve-install.json").write_text(json.dumps(marker))


def test_a_planted_marker_does_not_make_install_run_the_folders_python(cpu_lock, tmp_path):
    from stackresolve.install.run import MARKER_SCHEMA

    doc, wheels = cpu_lock
    lock = write(tmp_path / "l.lock", doc)
    venv, ran = tmp_path / "clone" / ".venv", tmp_path / "ran"
    planted_venv(venv, ran, {"schema": MARKER_SCHEMA, "complete": True, "target": "x", "nonce": "0" * 32,
                             "proof": "0" * 64})
    done = stackresolve("install", str(lock), "--venv", str(venv), "--no-index", "--find-links", str(wheels),
                        "--python-exe", sys.executable)
    assert done.returncode == 2 and "pass --reuse" in done.stderr and "did not write here" in done.stderr
    assert not ran.exists(), "install ran the planted venv's python"


def test_a_genuine_marker_copied_elsewhere_proves_nothing_there(cpu_lock, tmp_path):
    doc, wheels = cpu_lock
    lock = write(tmp_path / "l.lock", doc)
    cache = {"STACKRESOLVE_CACHE_DIR": str(tmp_path / "cache")}
    mine = tmp_path / "mine"
    made = stackresolve("install", str(lock), "--venv", str(mine), "--no-index", "--find-links", str(wheels),
                        "--python-exe", sys.executable, env=cache)
    assert made.returncode == 0, made.stderr
    again = stackresolve("install", str(lock), "--venv", str(mine), "--no-index", "--find-links", str(wheels), env=cache)
    assert again.returncode == 0, again.stderr  # this user's own venv: installed into again without --reuse
    copied, ran = tmp_path / "copied", tmp_path / "ran"
    planted_venv(copied, ran, json.loads((mine / ".stackresolve-install.json").read_text()))
    done = stackresolve("install", str(lock), "--venv", str(copied), "--no-index", "--find-links", str(wheels),
                        env=cache)
    assert done.returncode == 2 and "pass --reuse" in done.stderr and not ran.exists()
    # and without this user's key (another user, a cleared cache) the first venv needs --reuse too
    other = stackresolve("install", str(lock), "--venv", str(mine), "--no-index", "--find-links", str(wheels),
                         env={"STACKRESOLVE_CACHE_DIR": str(tmp_path / "other-cache")})
    assert other.returncode == 2 and "pass --reuse" in other.stderr


# -- issue 32, 4: the machine is checked first ------------------------------------------------------------------
def test_a_gpu_lock_on_a_machine_without_a_gpu_stops_before_anything_is_made(tmp_path):
    from stackresolve.detect import detect_machine

    if detect_machine(gpu_only=True).gpus:
        pytest.skip("this machine has an NVIDIA GPU")
    lock = tmp_path / "rtx4090.lock"
    assert stackresolve("plan", "--no-detect", "--torch", "2.5", "--gpu", "RTX 4090", "--driver", "550.54", "--os",
                        "linux", "--format", "lock", "-o", str(lock)).returncode == 0
    empty = tmp_path / "empty"
    empty.mkdir()
    venv = tmp_path / "venv"
    started = time.monotonic()
    done = stackresolve("install", str(lock), "--venv", str(venv), "--no-index", "--find-links", str(empty))
    assert done.returncode == 1, done.stderr
    assert "does not match the lock (nothing was installed): gpu: expected an NVIDIA GPU, found none" in done.stderr
    assert "--skip-machine-check" in done.stderr and not venv.exists()
    # install's --driver chooses a plan, it does not describe this machine: no advice to pass it here
    assert "no NVIDIA driver was found on this machine" in done.stderr and "pass --driver" not in done.stderr
    assert time.monotonic() - started < 30
    forced = stackresolve("install", str(lock), "--venv", str(venv), "--no-index", "--find-links", str(empty),
                          "--skip-machine-check", "--python-download")
    assert "does not match the lock" not in forced.stderr


def test_when_nvidias_index_cannot_be_reached_the_alternatives_are_named(kb):
    from types import SimpleNamespace

    from stackresolve.cli.install import unreachable_index_hint
    from stackresolve.install.run import InstallFailed

    target = SimpleNamespace(index_args=("--extra-index-url", kb.nvidia_index_url))
    failed = InstallFailed("installing with uv", "uv exited with 2",
                           ("error: Failed to fetch: `https://pypi.ngc.nvidia.com/nvidia-tensorflow/`",
                            "Caused by: dns error: failed to lookup address information"))
    hint = unreachable_index_hint(kb, target, failed, ())
    assert "could not be reached" in hint and "NGC" in hint and "--vendor stock" in hint
    planned = unreachable_index_hint(kb, target, failed, ("container nvcr.io/nvidia/tensorflow:23.03-tf1-py3 (NGC)",))
    assert "nvcr.io/nvidia/tensorflow:23.03-tf1-py3" in planned
    other = SimpleNamespace(index_args=())
    assert unreachable_index_hint(kb, other, failed, ()) == ""


# -- issue 32, 6: the user's own uv settings ---------------------------------------------------------------------
def test_a_full_lock_keeps_the_users_uv_settings_and_says_what_it_set_aside(kb):
    from stackresolve.request.parse import Flags, request_from_flags
    from stackresolve.lock.full import compile_lock
    from stackresolve.formats import pip_decide as pip_plan
    from stackresolve.resolve import resolve

    seen = {}

    def runner(argv, **kwargs):
        out = Path(argv[argv.index("-o") + 1])
        seen.update(argv=argv, env=kwargs["env"], previous=out.read_text() if out.exists() else None)
        out.write_text("six==1.17.0 \\\n    --hash=sha256:" + "1" * 64 + "\n")
        return subprocess.CompletedProcess(argv, 0, "", "")

    pip = pip_plan.decide(resolve(kb, request_from_flags(kb, Flags(tf="2.15", os="linux", cpu=True), None)))
    env = {"PATH": os.environ.get("PATH", ""), "UV_CACHE_DIR": "/my/cache", "HTTPS_PROXY": "http://proxy.invalid:3128",
           "UV_EXTRA_INDEX_URL": "https://extra.invalid/simple/", "UV_DEFAULT_INDEX": "https://mirror.invalid/simple/",
           "UV_RESOLUTION": "lowest", "UV_PRERELEASE": "allow"}
    lock = compile_lock(pip, runner=runner, env=env)
    for kept in ("UV_CACHE_DIR", "HTTPS_PROXY", "UV_EXTRA_INDEX_URL"):
        assert seen["env"][kept] == env[kept]
    assert "UV_RESOLUTION" not in seen["env"] and "UV_PRERELEASE" not in seen["env"]
    assert lock.overridden == ("UV_PRERELEASE", "UV_RESOLUTION")
    argv = seen["argv"]
    assert argv[argv.index("--index-url") + 1] == "https://mirror.invalid/simple/"  # the user's uv index
    assert seen["previous"] is None and not lock.kept_pins
    # a re-lock: uv gets the previous lock as its output file (its pins are preferred), unless --upgrade
    compile_lock(pip, runner=runner, env=env, previous="# resolved by uv ...\nsix==1.16.0\n")
    assert seen["previous"] == "# resolved by uv ...\nsix==1.16.0\n" and "--upgrade" not in seen["argv"]
    compile_lock(pip, runner=runner, env=env, previous="six==1.16.0\n", upgrade=True)
    assert seen["previous"] is None and "--upgrade" in seen["argv"]


def test_plan_offers_only_its_own_previous_full_lock_to_uv(tmp_path):
    from stackresolve.cli.plan import previous_full_lock

    ours = write(tmp_path / "requirements.txt", "# stackresolve full lock\n" + FULL_LOCK_HEADER + "six==1.16.0\n")
    assert previous_full_lock(str(ours)) == ours.read_text()
    other = write(tmp_path / "other.txt", "-e ./somewhere\n")
    assert previous_full_lock(str(other)) is None
    assert previous_full_lock(str(tmp_path / "missing.txt")) is None and previous_full_lock("-") is None


def test_a_hashed_full_lock_builds_a_named_sdist_only_from_the_index_s_own_file(kb):
    """A full lock that pins termcolor 1.1.0 beside TensorFlow 2.6 may build it, but only the file the index
    serves (the knowledge base keeps its hash): a lock's own sdist under that name, with its own true hash, is not
    built."""
    from stackresolve.install.target import from_full_lock, with_knowledge
    from stackresolve.model.enums import Os

    real = next(b for b in kb.source_builds if b.package == "termcolor").sha256[0]
    body = FULL_LOCK_HEADER + "tensorflow==2.6.5 \\\n    --hash=sha256:" + "0" * 64 + "\ntermcolor==1.1.0 \\\n" \
        "    --hash=sha256:{}\n"
    genuine = with_knowledge(from_full_lock(body.format(real), "requirements.lock", None, Os.LINUX), kb)
    assert [b.requirement for b in genuine.source_builds(HERE_PYTHON)] == ["termcolor==1.1.0"]
    planted = with_knowledge(from_full_lock(body.format("e" * 64), "requirements.lock", None, Os.LINUX), kb)
    assert planted.source_builds(HERE_PYTHON) == ()


@pytest.mark.parametrize("marker", [{"nonce": "n" * 32, "proof": "é" * 64}, {"nonce": "n" * 32, "proof": 7},
                                    {"nonce": ["x"], "proof": "0" * 64}, {"proof": "0" * 64}])
def test_a_marker_of_any_shape_proves_nothing_and_raises_nothing(tmp_path, marker):
    from stackresolve.install.run import made_here

    assert made_here(tmp_path, marker) is False
