#!/usr/bin/env python3
"""Verify stackresolve's pip plans by installing them: plan, fresh venv, install as the plan says, smoke test.

    python scripts/verify_plans.py                       # the built-in targets (DEFAULT_TARGETS)
    python scripts/verify_plans.py 1.8@3.6 2.20@3.13     # TF line @ Python X.Y (Python left out: the plan's own)
    python scripts/verify_plans.py 1.12@3.6:cpu          # the CPU plan (`--cpu`), where the GPU package cannot
                                                         # be imported on a machine without CUDA
    python scripts/verify_plans.py 1.8@3.6 --add 'h5py<3'          # the plan plus a candidate pin
    python scripts/verify_plans.py 1.12@3.6 --drop h5py            # the plan without its h5py pin
    python scripts/verify_plans.py --list                          # print the built-in targets
    python scripts/verify_plans.py --lock                          # full locks (LOCK_TARGETS), see below
    python scripts/verify_plans.py --lock 2.15@3.11:cpu            # the full lock of one target

For each target (TensorFlow line, OS linux, Python X.Y) the script

1. runs the installed CLI: `stackresolve plan --no-detect --tf X --os linux --python P --format pip [--cpu]`;
2. creates a fresh venv with that CPython and installs the requirements exactly as the plan's own instruction
   line says (`pythonX.Y -m venv .venv && .venv/bin/python -m pip install -r requirements.txt`, with the paths
   made concrete). When that install fails, or pip had to compile packages from sdists (an old venv pip that does
   not know today's manylinux tags: Python 3.6's pip 18.1 builds grpcio from source), it records that run and runs
   the target again with the fix a user would apply (upgrade the venv's pip first, to the newest release that still
   supports that Python);
3. runs a smoke test in the venv, on the CPU, one fresh interpreter per step: import tensorflow; a tiny Keras
   model fit (1 epoch, random data); `.h5` save and reload; SavedModel save and load; a tf.Session run (TF 1.x)
   or a tf.summary write (TF 2.x); then the checks behind pitfalls.toml's records: an LSTM, AutoGraph, the
   TensorBoard entry point and server, a tf.Module holding a dict (TF 2.x), a tf.estimator training step;
4. appends one record per run to constraints/verified_installs.toml (its header documents the shape) and deletes
   the venv.

With --lock the script installs the target's full lock instead of its pip plan (`kind = "lock"` in the record):
`stackresolve plan ... --format pip --lock --index-url <pip's index>` (uv pip compile: every package of the
transitive set pinned with hashes for the plan's Python and platform); a fresh venv with the lock's Python; the
lock's own install line with --no-deps added (`.venv/bin/python -m pip install --require-hashes --no-deps -r
requirements.txt`, the lock file as requirements.txt): hash checking needs every package pinned, and --no-deps
proves the lock is complete, since pip then installs nothing the lock does not name. A `lock_check` step then
compares `pip freeze` with the lock (every pinned package installed at its pinned version) and runs `pip check`
(a dependency the lock left out shows there); the smoke test follows as for a plan.

pip runs with the package index from pip's own configuration (`stackresolve.index.simple.index_url`: PIP_INDEX_URL,
pip's config files, else pip's default), and with nothing else from this machine's pip settings:
PIP_CONFIG_FILE is the null device (no config file is read: no machine-wide constraint files, find-links or
extra indexes), every other PIP_* variable is removed except PIP_CERT / PIP_DEFAULT_TIMEOUT (TLS trust and
patience, which do not change what is resolved), and PIP_CONSTRAINT is set empty. pip's cache is a folder of
this script's own (`--cache-dir`, deleted at the end unless given), never the user's. Every subprocess has a
timeout; a venv is deleted once its run is recorded (`--keep-venvs` keeps them).

Needs Python >= 3.10 with `packaging` (the project's venv has it), the CPython versions of the targets (looked up
as $PYENV_ROOT/versions/X.Y.*/bin/python, then `pythonX.Y` on PATH, or given with --interpreter X.Y=PATH).
"""

from __future__ import annotations

import argparse
import datetime as _dt
import hashlib
import json
import os
import re
import shlex
import shutil
import signal
import subprocess
import sys
import tempfile
import time
from concurrent.futures import ThreadPoolExecutor, as_completed
from dataclasses import dataclass, field, replace
from pathlib import Path

try:
    import tomllib
except ModuleNotFoundError:  # Python < 3.11
    import tomli as tomllib

from packaging.requirements import InvalidRequirement, Requirement
from packaging.utils import canonicalize_name

ROOT = Path(__file__).resolve().parent.parent
RESULTS = ROOT / "constraints" / "verified_installs.toml"

# The TensorFlow lines verified by default, each with the Python its plan recommends (checked by
# tests/knowledge/test_verify_plans.py against the CLI). ":cpu": the GPU package of that release links CUDA at import
# (tensorflow-gpu <= 1.13 needs libcublas.so.9.0/10.0 to load), so on a machine without CUDA only the CPU plan
# (`--cpu`: the `tensorflow` package, same version, same Requires-Dist) can be smoke-tested.
DEFAULT_TARGETS: tuple[str, ...] = (
    "1.8@3.6:cpu", "1.10@3.6:cpu", "1.11@3.6:cpu", "1.12@3.6:cpu", "1.13@3.7:cpu", "1.14@3.7", "1.15@3.7",
    "2.0@3.7", "2.2@3.8", "2.3@3.8", "2.5@3.9", "2.8@3.10", "2.11@3.10", "2.13@3.11", "2.15@3.11", "2.16@3.12",
    "2.18@3.12", "2.20@3.13", "2.21@3.13",
)

# The full locks verified by default (--lock without targets): CPU stacks, small downloads, one per era of the
# lock's resolution (TF 1.x on 3.7, Keras 2 in TF 2.11 / 2.15, Keras 3 in 2.20).
LOCK_TARGETS: tuple[str, ...] = ("1.15@3.7:cpu", "2.11@3.10:cpu", "2.15@3.11:cpu", "2.20@3.12:cpu")

# pip releases that still install on old CPython (pip 21.0 dropped 2.7 and 3.5, 22.0 dropped 3.6, 24.1 dropped 3.7).
PIP_FOR_PYTHON = {"2.7": "pip<21", "3.5": "pip<21", "3.6": "pip<22", "3.7": "pip<24.1"}

# Packages whose installed version a record keeps (every nvidia-* distribution is kept as well).
KEY_PACKAGES: tuple[str, ...] = (
    "tensorflow", "tensorflow-gpu", "tensorflow-cpu", "tensorflow-intel", "tensorflow-estimator",
    "tensorflow-gpu-estimator", "tensorboard", "keras", "tf-keras", "keras-applications", "keras-preprocessing",
    "numpy", "protobuf", "h5py", "gast", "typing-extensions", "wrapt", "ml-dtypes", "grpcio", "six", "setuptools",
    "pip", "tensorflow-io-gcs-filesystem", "termcolor", "absl-py",
)

# Releases TensorFlow's metadata pins that exist only as pure-Python sdists (gast 0.2.2, termcolor 1.1.0, clang 5.0,
# html5lib 0.9999999 for TensorBoard 1.x; wrapt 1.12.1 falls back to pure Python without a compiler): building them
# is quick and needs no compiler.
PURE_SDISTS = frozenset({"gast", "termcolor", "clang", "wrapt", "html5lib"})

TIMEOUTS = {"plan": 120, "lock": 900, "venv": 300, "pip_upgrade": 600, "install": 2400, "freeze": 180, "step": 600}

# Variables that select hardware for `plan`; --no-detect ignores detection, these would still steer it.
_PLAN_ENV_DROP = ("STACKRESOLVE_DRIVER", "STACKRESOLVE_GPU_CC", "CONDA_OVERRIDE_CUDA")
# The PIP_* variables kept for pip: they change how pip talks to the index, not what it resolves.
_PIP_ENV_KEEP = ("PIP_CERT", "PIP_DEFAULT_TIMEOUT")


# --------------------------------------------------------------------------------------------------- targets
@dataclass(frozen=True)
class Target:
    tf: str                      # the TensorFlow line or version asked for ("1.8", "2.20")
    python: str = ""             # CPython X.Y; "" = the plan's recommended Python
    cpu: bool = False            # plan with --cpu
    os: str = "linux"
    drop: tuple[str, ...] = ()   # packages whose plan lines are left out (canonical names)
    add: tuple[str, ...] = ()    # requirement lines added to the plan's
    pip_upgrade: str = ""        # a pip requirement installed into the venv before the plan's install ("" = none)
    lock: bool = False           # install the full lock (`plan --format pip --lock`) instead of the pip plan

    @property
    def kind(self) -> str:
        return "lock" if self.lock else "plan"

    @property
    def label(self) -> str:
        return f"{self.tf}@{self.python or '?'}{':cpu' if self.cpu else ''}{' (lock)' if self.lock else ''}"

    @property
    def variant(self) -> str:
        """How the run differs from the plan (or lock) as written: "plan", "plan+pip<22", "plan-h5py",
        "plan+h5py<3", "lock", "lock+pip<24.1"."""
        parts = [self.kind]
        parts += [f"+{self.pip_upgrade}"] if self.pip_upgrade else []
        parts += [f"-{name}" for name in self.drop]
        parts += [f"+{line}" for line in self.add]
        return "".join(parts)


_TARGET = re.compile(r"(?P<tf>\d+\.\d+(?:\.\d+)?)(?:@(?P<py>\d\.\d+))?(?P<cpu>:cpu)?")


def parse_target(text: str, *, drop=(), add=(), pip_upgrade: str = "", lock: bool = False) -> Target:
    """`TF[@X.Y][:cpu]` -> Target. Raises ValueError on anything else (and on --drop/--add with a lock: a lock
    installed with --require-hashes cannot take a line without its hashes)."""
    m = _TARGET.fullmatch(text.strip())
    if not m:
        raise ValueError(f"bad target {text!r}: want TF[@X.Y][:cpu], e.g. 1.15@3.7 or 1.12@3.6:cpu")
    if lock and (drop or add):
        raise ValueError("--drop / --add change a pip plan; a full lock is installed as written (--require-hashes)")
    for line in add:
        Requirement(line)  # raises InvalidRequirement
    if pip_upgrade:
        Requirement(pip_upgrade)
    return Target(tf=m.group("tf"), python=m.group("py") or "", cpu=bool(m.group("cpu")),
                  drop=tuple(canonicalize_name(d) for d in drop), add=tuple(add), pip_upgrade=pip_upgrade,
                  lock=lock)


# --------------------------------------------------------------------------------------------------- the plan
@dataclass
class Plan:
    text: str
    requirements: list[str]      # the requirement lines, in order
    tf_requirement: str          # the first one (the TensorFlow pin)
    python: str                  # the Python X.Y the plan recommends
    instructions: list[str]      # the plan's install commands, split at "&&"


_PLAN_PYTHON = re.compile(r"^# Python (\d\.\d+)\b")


def parse_plan(text: str) -> Plan:
    """Read a `--format pip` plan: requirement lines, the recommended Python, and the instruction line(s) (the
    indented comment lines right after "# Python X.Y ...")."""
    requirements, instructions, python = [], [], ""
    in_howto = False
    for raw in text.splitlines():
        line = raw.rstrip()
        if not line:
            continue
        m = _PLAN_PYTHON.match(line)
        if m:
            python, in_howto = m.group(1), True
            continue
        if in_howto and line.startswith("#   "):
            instructions += [c.strip() for c in line[1:].split("&&") if c.strip()]
            continue
        in_howto = False
        if not line.startswith("#"):
            requirements.append(line.strip())
    if not requirements:
        raise ValueError("the plan has no requirement lines")
    if not instructions:
        raise ValueError("the plan has no install instructions (no '#   ...' line after '# Python X.Y')")
    return Plan(text=text, requirements=requirements, tf_requirement=requirements[0], python=python,
                instructions=instructions)


def adjust_requirements(lines: list[str], drop=(), add=()) -> list[str]:
    """The plan's lines without the pins on `drop` (never the first, TensorFlow line) and with `add` appended."""
    dropped = {canonicalize_name(d) for d in drop}
    out = [lines[0]] + [ln for ln in lines[1:] if canonicalize_name(Requirement(ln).name) not in dropped]
    return out + [a for a in add if a not in out]


# --------------------------------------------------------------------------------------------------- the full lock
@dataclass
class Lock:
    text: str                    # the file as the CLI wrote it (installed as requirements.txt)
    requirements: list[str]      # its pins, `name==version`, in order (no hashes)
    tf_requirement: str          # the TensorFlow pin
    python: str                  # the Python X.Y it was resolved for
    platform: str                # the platform it was resolved for (x86_64-manylinux_2_28)
    instructions: list[str]      # the lock's own install line(s), split at "&&"
    hashes: int                  # --hash options in the file
    cuda_wheels: dict[str, str]  # the NVIDIA wheels it pins


_LOCK_RESOLVED = re.compile(r"^# resolved by \S+ for Python (\d\.\d+) on (\S+?),")
_LOCK_PIN = re.compile(r"^([A-Za-z0-9][A-Za-z0-9._-]*)(\[[^\]]*\])?==([^\s;\\]+)")
_TF_PACKAGES = ("tensorflow", "tensorflow-cpu", "tensorflow-gpu", "tensorflow-intel")


def parse_lock(text: str) -> Lock:
    """Read a full lock (`plan --format pip --lock`): the `#` header (the Python and platform it was resolved for,
    the install line after "install with"), then `name==version \\` lines each followed by `--hash=sha256:...`
    lines and uv's `# via` comments. Raises ValueError when the text is not such a lock or a pin has no hash."""
    pins, instructions, python, platform = [], [], "", ""
    hashes, in_howto, current = 0, False, None
    no_hash = []
    for raw in text.splitlines():
        line = raw.rstrip()
        if not line.strip():
            continue
        m = _LOCK_RESOLVED.match(line)
        if m:
            python, platform = m.groups()
            in_howto = True
            continue
        if in_howto and line.startswith("#   "):
            instructions += [c.strip() for c in line[1:].split("&&") if c.strip()]
            continue
        in_howto = False
        stripped = line.strip()
        if stripped.startswith("#"):
            continue
        if stripped.startswith("--hash="):
            hashes += 1
            if current is not None:
                current[1] += 1
            continue
        m = _LOCK_PIN.match(line)
        if not m:
            raise ValueError(f"not a pinned lock line: {line[:80]!r}")
        current = [f"{m.group(1)}=={m.group(3)}", 0]
        pins.append(current)
    for pin, count in pins:
        if not count:
            no_hash.append(pin)
    if not pins:
        raise ValueError("the lock pins no package")
    if not python:
        raise ValueError("the lock does not say which Python it was resolved for ('# resolved by ... for Python X.Y')")
    if no_hash:
        raise ValueError(f"pins without a hash (pip --require-hashes refuses them): {', '.join(no_hash[:5])}")
    requirements = [p for p, _ in pins]
    names = {canonicalize_name(r.split("==")[0]): r for r in requirements}
    tf = next((names[n] for n in _TF_PACKAGES if n in names), "")
    if not tf:
        raise ValueError("the lock pins no TensorFlow package")
    cuda = {canonicalize_name(r.split("==")[0]): r.split("==")[1] for r in requirements
            if re.match(r"nvidia-[a-z0-9-]+-cu\d+$", canonicalize_name(r.split("==")[0]))}
    return Lock(text=text, requirements=requirements, tf_requirement=tf, python=python, platform=platform,
                instructions=instructions, hashes=hashes, cuda_wheels=cuda)


def lock_instructions(lock: Lock) -> list[str]:
    """The commands a lock run follows: a venv with the lock's Python, then the lock's own install line run with the
    venv's interpreter and --no-deps (pip installs only what the lock names, so a missing dependency shows)."""
    out = [f"python{lock.python} -m venv .venv"]
    for command in lock.instructions or ["python -m pip install --require-hashes -r requirements.txt"]:
        words = command.split()
        if words and _PYTHON_WORD.match(words[0]):
            words[0] = ".venv/bin/python"
        if "install" in words and "--no-deps" not in words:
            words.insert(words.index("-r") if "-r" in words else words.index("install") + 1, "--no-deps")
        out.append(" ".join(words))
    return out


def lock_mismatches(requirements: list[str], installed: dict[str, str]) -> list[str]:
    """The pins of a lock that `pip freeze` does not show at their version ("numpy: locked 1.18.5, installed
    1.19.5", "gast: locked 0.2.2, not installed")."""
    from packaging.version import InvalidVersion, Version

    out = []
    for pin in requirements:
        name, version = pin.split("==", 1)
        name = canonicalize_name(name.split("[")[0])
        got = installed.get(name)
        if got is None:
            out.append(f"{name}: locked {version}, not installed")
            continue
        try:
            same = Version(got) == Version(version)
        except InvalidVersion:
            same = got == version
        if not same:
            out.append(f"{name}: locked {version}, installed {got}")
    return out


_PYTHON_WORD = re.compile(r"^python(\d(\.\d+)?)?$")


def localize(command: str, *, python_exe: str, venv: Path, requirements: Path) -> list[str]:
    """One instruction of the plan as an argv for this machine: `pythonX.Y` -> the interpreter, `.venv...` -> the
    venv, `requirements.txt` -> the requirements file. Raises ValueError for anything a shell would interpret
    (pipes, redirections, variables): those are not instructions this script can follow word for word."""
    lexer = shlex.shlex(command, posix=True, punctuation_chars=True)
    lexer.whitespace_split = True
    words = list(lexer)
    if any(set(w) <= set("();<>|&") or "$" in w or "`" in w for w in words):
        raise ValueError(f"instruction needs a shell: {command!r}")
    argv = []
    for word in words:
        if _PYTHON_WORD.match(word):
            argv.append(python_exe)
        elif word == ".venv" or word.startswith(".venv/"):
            argv.append(str(venv) + word[len(".venv"):])
        elif word == "requirements.txt":
            argv.append(str(requirements))
        else:
            argv.append(word)
    return argv


# --------------------------------------------------------------------------------------------------- pip freeze
_FREEZE_LINE = re.compile(r"^([A-Za-z0-9][A-Za-z0-9._-]*)(?:\[[^\]]*\])?\s*(==|===|\s@\s)\s*(\S.*)$")


def parse_freeze(text: str) -> dict[str, str]:
    """`pip freeze --all` output -> {canonical name: version}. Direct-URL lines (`name @ url`) take the version
    from the file name in the URL; editable lines and comments are skipped."""
    out = {}
    for raw in text.splitlines():
        line = raw.strip()
        if not line or line.startswith(("#", "-e ", "--")):
            continue
        m = _FREEZE_LINE.match(line)
        if not m:
            continue
        name, op, rest = m.groups()
        if op.strip() == "@":
            rest = _version_from_url(rest)
        out[canonicalize_name(name)] = rest.strip()
    return out


def _version_from_url(url: str) -> str:
    """The version in a direct URL's file name (a wheel or an sdist), else the file name itself."""
    from packaging.utils import InvalidSdistFilename, InvalidWheelFilename, parse_sdist_filename, parse_wheel_filename

    name = url.split("#", 1)[0].rstrip("/").rsplit("/", 1)[-1]
    try:
        if name.endswith(".whl"):
            return str(parse_wheel_filename(name)[1])
        return str(parse_sdist_filename(name)[1])
    except (InvalidWheelFilename, InvalidSdistFilename):
        return name


def key_packages(installed: dict[str, str]) -> dict[str, str]:
    """The versions a record keeps: KEY_PACKAGES in that order, then every nvidia-* distribution."""
    keep = {n: installed[n] for n in KEY_PACKAGES if n in installed}
    keep.update({n: installed[n] for n in sorted(installed) if n.startswith("nvidia-")})
    return keep


# --------------------------------------------------------------------------------------------------- subprocesses
@dataclass
class Proc:
    rc: int                     # -1: timed out; -2: could not start
    out: str
    err: str
    seconds: float

    @property
    def ok(self) -> bool:
        return self.rc == 0


def run(argv: list[str], *, timeout: float, env: dict | None = None, cwd: str | Path | None = None) -> Proc:
    """Run argv with a timeout; on timeout the whole process group is killed (pip's build children too)."""
    start = time.monotonic()
    try:
        p = subprocess.Popen(argv, stdout=subprocess.PIPE, stderr=subprocess.PIPE, text=True, errors="replace",
                             env=env, cwd=cwd, start_new_session=True, stdin=subprocess.DEVNULL)
    except OSError as exc:
        return Proc(-2, "", f"cannot run {argv[0]}: {exc}", 0.0)
    try:
        out, err = p.communicate(timeout=timeout)
        return Proc(p.returncode, out, err, time.monotonic() - start)
    except subprocess.TimeoutExpired:
        try:
            os.killpg(p.pid, signal.SIGKILL)
        except ProcessLookupError:
            pass
        out, err = p.communicate()
        return Proc(-1, out, (err or "") + f"\ntimed out after {timeout:.0f} s", time.monotonic() - start)


_URL_HOST = re.compile(r"(https?|file)://[^/\s'\"<>]*", re.I)
_EXC_LINE = re.compile(r"^[A-Za-z_][\w.]*(Error|Exception|Exit|Interrupt|Warning)\b.*")


def scrub(text: str) -> str:
    """Error text as a record may keep it: URLs lose their host (no registry host is written anywhere)."""
    return _URL_HOST.sub("<host>", text).replace("\x7f", "")


def error_text(proc: Proc, limit: int = 600) -> str:
    """The informative part of a failed command's output: a traceback's last exception line on stderr (with up to
    two indented continuation lines of its message), else pip's ERROR lines, else the last lines. No URL host."""
    if proc.rc == -1:
        return f"timed out after {proc.seconds:.0f} s"
    lines = [ln.rstrip() for ln in (proc.err + "\n" + proc.out).splitlines() if ln.strip()]
    err_lines = [ln.rstrip() for ln in proc.err.splitlines() if ln.strip()]
    excs = [i for i, ln in enumerate(err_lines) if _EXC_LINE.match(ln) and "Warning" not in ln.split(":")[0]]
    if excs:
        i = excs[-1]
        tail = []
        for ln in err_lines[i + 1:i + 3]:
            if not ln[:1].isspace() or ln.lstrip().startswith("File "):
                break
            tail.append(ln.strip())
        text = " ".join([err_lines[i].strip()] + tail)
    else:
        errors = [ln.strip() for ln in lines if re.search(r"\berror\b|could not|no matching", ln, re.I)]
        text = " | ".join(errors[-4:] if errors else lines[-3:])
    text = scrub(text)
    return text if len(text) <= limit else text[: limit - 3] + "..."


_BUILD_LINE = re.compile(r"(?:Building wheels? for|Running setup\.py (?:install|bdist_wheel) for) "
                         r"([A-Za-z0-9][A-Za-z0-9._-]*)")


def built_from_source(pip_output: str) -> list[str]:
    """The projects pip built from an sdist during an install (any pip from 9 to 25 words it one of these ways)."""
    seen = []
    for m in _BUILD_LINE.finditer(pip_output):
        name = canonicalize_name(m.group(1))
        if name not in seen and name not in ("collected", "packages"):
            seen.append(name)
    return seen


def pip_env(index: str, cache_dir: Path, base: dict | None = None) -> dict:
    """The environment pip runs in: the index from pip's configuration, no config file, no constraint files,
    no find-links or extra indexes; this run's cache."""
    base = dict(os.environ if base is None else base)
    env = {k: v for k, v in base.items() if not k.startswith("PIP_") or k in _PIP_ENV_KEEP}
    env.update(PIP_CONFIG_FILE=os.devnull, PIP_CONSTRAINT="", PIP_INDEX_URL=index, PIP_CACHE_DIR=str(cache_dir),
               PIP_DISABLE_PIP_VERSION_CHECK="1", PIP_NO_INPUT="1", PIP_PROGRESS_BAR="off")
    for k in ("PYTHONPATH", "PYTHONHOME", "VIRTUAL_ENV", "PYTHONNOUSERSITE"):
        env.pop(k, None)
    env["PYTHONNOUSERSITE"] = "1"
    return env


# --------------------------------------------------------------------------------------------------- interpreters
def find_python(version: str, explicit: dict[str, str] | None = None) -> str | None:
    """A CPython X.Y interpreter: --interpreter, then $PYENV_ROOT/versions/X.Y.*, then `pythonX.Y` on PATH."""
    if explicit and version in explicit:
        return explicit[version]
    root = Path(os.environ.get("PYENV_ROOT", Path.home() / ".pyenv")) / "versions"
    found = []
    if root.is_dir():
        for d in root.iterdir():
            m = re.fullmatch(re.escape(version) + r"\.(\d+)", d.name)
            if m and (d / "bin" / "python").exists():
                found.append((int(m.group(1)), str(d / "bin" / "python")))
    if found:
        return max(found)[1]
    return shutil.which(f"python{version}")


# --------------------------------------------------------------------------------------------------- smoke test
# Runs inside the target venv (CPython 3.6 ... 3.13, TF 1.x and 2.x): each step in a fresh interpreter.
SMOKE_PRELUDE = r'''
import glob, os, sys
os.environ.setdefault("TF_CPP_MIN_LOG_LEVEL", "2")
import numpy as np
import tensorflow as tf
TF2 = int(tf.__version__.split(".")[0]) >= 2
KERAS3 = str(getattr(tf.keras, "__version__", "2")).startswith("3")
TMP = sys.argv[1]
np.random.seed(0)
X = np.random.rand(32, 3).astype("float32")
Y = np.random.rand(32, 1).astype("float32")
NA = 3  # exit status: the step does not apply to this release

def model():  # tf.keras.models.Sequential: TF 1.4's tf.keras has no top-level Sequential
    L = tf.keras.layers
    if KERAS3:
        layers = [tf.keras.Input(shape=(3,)), L.Dense(4, activation="relu")]
    else:
        layers = [L.Dense(4, activation="relu", input_shape=(3,))]
    m = tf.keras.models.Sequential(layers + [L.Dense(1)])
    m.compile(optimizer="adam", loss="mean_squared_error")
    return m

def fitted():
    m = model()
    m.fit(X, Y, epochs=1, batch_size=8, verbose=0)
    return m

def close(a, b):
    a, b = np.asarray(a), np.asarray(b)
    if a.shape != b.shape or not np.allclose(a, b, atol=1e-5):
        raise AssertionError("outputs differ after reload: %r vs %r" % (a.ravel()[:3], b.ravel()[:3]))
'''

SMOKE_STEPS: dict[str, str] = {
    "import": r'''
print("tensorflow %s keras %s" % (tf.__version__, getattr(tf.keras, "__version__", "?")))
''',
    "keras_fit": r'''
h = model().fit(X, Y, epochs=1, batch_size=8, verbose=0)
assert np.isfinite(h.history["loss"][-1]), h.history
''',
    "h5_save_load": r'''
m = fitted()
p = os.path.join(TMP, "model.h5")
m.save(p)
m2 = tf.keras.models.load_model(p)
close(m.predict(X), m2.predict(X))
''',
    "savedmodel": r'''
d = os.path.join(TMP, "savedmodel")
if TF2:
    m = fitted()
    class Serve(tf.Module):
        def __init__(self, model):
            super(Serve, self).__init__()
            self.model = model
        @tf.function(input_signature=[tf.TensorSpec([None, 3], tf.float32)])
        def __call__(self, x):
            return self.model(x)
    tf.saved_model.save(Serve(m), d)
    loaded = tf.saved_model.load(d)
    close(m.predict(X), loaded(tf.constant(X)).numpy())
else:
    g = tf.Graph()
    with g.as_default():
        x = tf.placeholder(tf.float32, [None, 3], name="x")
        w = tf.Variable(tf.ones([3, 1]), name="w")
        y = tf.identity(tf.matmul(x, w), name="y")
        with tf.Session(graph=g) as s:
            s.run(tf.global_variables_initializer())
            # what simple_save (TF >= 1.6) does, spelled out so that TF 1.0-1.5 run it too
            sig = tf.saved_model.signature_def_utils.predict_signature_def(inputs={"x": x}, outputs={"y": y})
            b = tf.saved_model.builder.SavedModelBuilder(d)
            b.add_meta_graph_and_variables(s, [tf.saved_model.tag_constants.SERVING],
                                           signature_def_map={"serving_default": sig})
            b.save()
    with tf.Graph().as_default() as g2:
        with tf.Session(graph=g2) as s:
            tf.saved_model.loader.load(s, [tf.saved_model.tag_constants.SERVING], d)
            out = s.run("y:0", {"x:0": X})
    close(X.sum(axis=1, keepdims=True), out)
''',
    "session_run": r'''
if TF2:
    sys.exit(NA)
with tf.Graph().as_default():
    a = tf.constant([[1.0, 2.0]])
    b = tf.matmul(a, tf.transpose(a))
    with tf.Session() as s:
        assert abs(float(s.run(b)[0][0]) - 5.0) < 1e-6
''',
    "summary_write": r'''
if not TF2:
    sys.exit(NA)
d = os.path.join(TMP, "logs")
w = tf.summary.create_file_writer(d)
with w.as_default():
    tf.summary.scalar("loss", 0.5, step=1)
w.flush()
files = glob.glob(os.path.join(d, "events.out.tfevents.*"))
assert files and os.path.getsize(files[0]) > 0, "no event file written"
''',
    "lstm": r'''
L = tf.keras.layers
head = [tf.keras.Input(shape=(5, 3)), L.LSTM(4)] if KERAS3 else [L.LSTM(4, input_shape=(5, 3))]
m = tf.keras.models.Sequential(head + [L.Dense(1)])
m.compile(optimizer="adam", loss="mean_squared_error")
m.fit(np.random.rand(8, 5, 3).astype("float32"), np.random.rand(8, 1).astype("float32"), epochs=1, verbose=0)
''',
    "autograph": r'''
def f(n):
    s = tf.constant(0)
    for i in tf.range(n):
        s += i
    return s
if TF2:
    assert int(tf.function(f)(tf.constant(5))) == 10
else:
    ag = getattr(tf, "autograph", None)
    if ag is None:
        try:
            ag = tf.contrib.autograph
        except AttributeError:
            sys.exit(NA)
    with tf.Graph().as_default():
        g = tf.function(f) if hasattr(tf, "function") else ag.to_graph(f)
        ag.to_code(f)
        with tf.Session() as s:
            assert int(s.run(g(tf.constant(5)))) == 10
''',
    "tensorboard": r'''
try:
    import tensorboard
except ImportError:
    sys.exit(NA)
from tensorboard import main  # what the `tensorboard` command runs first
from tensorboard import program
if hasattr(getattr(program, "TensorBoard", None), "launch"):  # TensorBoard >= 1.12: start its server, ask it
    import json
    try:
        from urllib.request import urlopen
    except ImportError:
        from urllib2 import urlopen
    if TF2:
        w = tf.summary.create_file_writer(os.path.join(TMP, "run1"))
        with w.as_default():
            tf.summary.scalar("loss", 0.5, step=1)
        w.flush()
    tb = program.TensorBoard()
    tb.configure(argv=[None, "--logdir", TMP, "--port", "0", "--host", "127.0.0.1"])
    url = tb.launch()
    runs = json.loads(urlopen(url.rstrip("/") + "/data/runs", timeout=60).read().decode("utf-8"))
    assert not TF2 or runs == ["run1"], runs
    sys.stdout.flush()
    os._exit(0)  # the server thread would keep the interpreter alive
''',
    "estimator": r'''
try:
    est = tf.estimator
    est.LinearRegressor
except AttributeError:  # TF >= 2.16 has no tf.estimator
    sys.exit(NA)
e = est.LinearRegressor(feature_columns=[tf.feature_column.numeric_column("x", shape=(3,))],
                        model_dir=os.path.join(TMP, "est"))
e.train(lambda: tf.data.Dataset.from_tensor_slices(({"x": X}, Y)).batch(8), steps=2)
''',
    "module_dict": r'''
if not TF2:
    sys.exit(NA)
class M(tf.Module):
    def __init__(self):
        super(M, self).__init__()
        self.d = {"a": tf.Variable(2.0)}
    @tf.function
    def __call__(self, x):
        return x * self.d["a"]
m = M()
assert float(m(tf.constant(3.0))) == 6.0
@tf.function
def g(d):
    return d["a"] * 2.0
assert float(g(m.d)) == 4.0
''',
}
# The brief's smoke test; the other steps check the failures pitfalls.toml's records describe.
CORE_STEPS = ("import", "keras_fit", "h5_save_load", "savedmodel", "session_run", "summary_write")
NA_EXIT = 3


def smoke_env(base: dict | None = None) -> dict:
    env = {k: v for k, v in (os.environ if base is None else base).items()
           if k not in ("PYTHONPATH", "PYTHONHOME", "VIRTUAL_ENV")}
    env.update(CUDA_VISIBLE_DEVICES="", TF_CPP_MIN_LOG_LEVEL="2", PYTHONNOUSERSITE="1", PYTHONHASHSEED="0")
    return env


def run_smoke(python_exe: str, work: Path, timeout: float = TIMEOUTS["step"]) -> list[dict]:
    """Every smoke step in its own interpreter; after a failed import the rest are skipped."""
    steps = []
    env = smoke_env()
    for name, body in SMOKE_STEPS.items():
        if steps and steps[0]["status"] != "pass":
            steps.append(step_result(name, "skipped", 0.0, "import failed"))
            continue
        tmp = work / f"smoke-{name}"
        tmp.mkdir(parents=True, exist_ok=True)
        script = work / f"smoke_{name}.py"
        script.write_text(SMOKE_PRELUDE + body)
        proc = run([python_exe, str(script), str(tmp)], timeout=timeout, env=env, cwd=tmp)
        if proc.rc == NA_EXIT:
            steps.append(step_result(name, "n/a", proc.seconds, ""))
        else:
            steps.append(step_result(name, "pass" if proc.ok else "fail", proc.seconds,
                                     "" if proc.ok else error_text(proc)))
    return steps


def step_result(name: str, status: str, seconds: float, error: str = "") -> dict:
    return {"name": name, "status": status, "seconds": round(seconds, 1), "error": error}


# --------------------------------------------------------------------------------------------------- one run
def git_commit(root: Path = ROOT) -> str:
    """HEAD of the checkout the CLI's data come from; "+dirty" when src/ or constraints/ (other than the results
    file) have uncommitted changes."""
    head = run(["git", "-C", str(root), "rev-parse", "HEAD"], timeout=30)
    if not head.ok:
        return "unknown"
    dirty = run(["git", "-C", str(root), "status", "--porcelain", "--", "src", "constraints",
                 ":!constraints/verified_installs.toml"], timeout=30)
    return head.out.strip() + ("+dirty" if dirty.out.strip() else "")


@dataclass
class Context:
    cli: list[str]
    index: str
    cache_dir: Path
    work_dir: Path
    commit: str
    date: str
    interpreters: dict[str, str] = field(default_factory=dict)
    keep_venvs: bool = False


def plan_command(target: Target, python: str) -> list[str]:
    cmd = ["plan", "--no-detect", "--tf", target.tf, "--os", target.os]
    cmd += ["--python", python] if python else []
    return cmd + ["--format", "pip"] + (["--cpu"] if target.cpu else [])


def get_plan(ctx: Context, target: Target) -> tuple[Plan | None, str, Proc]:
    """The plan for a target (with --python once the Python is known)."""
    env = {k: v for k, v in os.environ.items() if k not in _PLAN_ENV_DROP}
    python = target.python
    if not python:  # learn the recommended Python first
        proc = run(ctx.cli + plan_command(target, ""), timeout=TIMEOUTS["plan"], env=env)
        if not proc.ok:
            return None, "", proc
        python = parse_plan(proc.out).python
    proc = run(ctx.cli + plan_command(target, python), timeout=TIMEOUTS["plan"], env=env)
    if not proc.ok:
        return None, python, proc
    try:
        return parse_plan(proc.out), python, proc
    except ValueError as exc:
        return None, python, Proc(1, proc.out, str(exc), proc.seconds)


def get_lock(ctx: Context, target: Target) -> tuple[Lock | None, str, Proc]:
    """The full lock for a target, resolved against the index pip installs from (the plan's Python first, when the
    target names none)."""
    python = target.python
    if not python:
        _, python, proc = get_plan(ctx, replace(target, lock=False))
        if not python:
            return None, "", proc
    env = {k: v for k, v in os.environ.items() if k not in _PLAN_ENV_DROP}
    argv = ctx.cli + plan_command(target, python) + ["--lock", "--index-url", ctx.index]
    proc = run(argv, timeout=TIMEOUTS["lock"], env=env)
    if not proc.ok:
        return None, python, proc
    try:
        lock = parse_lock(proc.out)
    except ValueError as exc:
        return None, python, Proc(1, proc.out, str(exc), proc.seconds)
    if lock.python != python:
        return None, python, Proc(1, proc.out, f"asked for a lock for Python {python}, got one for {lock.python}",
                                  proc.seconds)
    return lock, python, proc


def step_name(command: str, index: int) -> str:
    """What an instruction does: venv, pip_upgrade, install (the requirements file), else instruction_N."""
    words = command.split()
    if "venv" in words and "-m" in words:
        return "venv"
    if "install" in words and "-r" in words:
        return "install"
    if "install" in words and any(w.strip("'\"").startswith("pip") for w in words[words.index("install") + 1:]):
        return "pip_upgrade"
    return f"instruction_{index + 1}"


def display(command: str) -> str:
    return " ".join(command.split())


def verify(ctx: Context, target: Target) -> dict:
    """One run: plan (or full lock), venv, install, [lock_check], smoke test. Returns the record (see
    build_record)."""
    started = time.monotonic()
    steps: list[dict] = []
    plan, python, proc = get_lock(ctx, target) if target.lock else get_plan(ctx, target)
    target = replace(target, python=python or target.python)
    steps.append(step_result("plan", "pass" if plan else "fail", proc.seconds, "" if plan else error_text(proc)))
    facts = {"target": target, "plan": plan, "python_full": "", "pip_version": "", "installed": {},
             "pip_check": "", "requirements": [], "instructions": [], "built_from_source": []}
    if plan is None:
        return build_record(ctx, facts, steps, time.monotonic() - started)
    if target.lock:
        requirements = list(plan.requirements)
        instructions = lock_instructions(plan)
        requirements_text = plan.text  # with its hashes
    else:
        requirements = adjust_requirements(plan.requirements, target.drop, target.add)
        instructions = list(plan.instructions)
        requirements_text = "\n".join(requirements) + "\n"
    if target.pip_upgrade:  # the user's fix: a pip that can install the plan, right after the venv is made
        instructions.insert(1, f".venv/bin/python -m pip install --upgrade {shlex.quote(target.pip_upgrade)}")
    facts.update(requirements=requirements, instructions=[display(c) for c in instructions])

    exe = find_python(target.python, ctx.interpreters)
    work = Path(tempfile.mkdtemp(prefix=f"verify-{target.tf}-py{target.python}-", dir=ctx.work_dir))
    try:
        req_file = work / "requirements.txt"
        req_file.write_text(requirements_text)
        venv = work / ".venv"
        if exe is None:
            steps.append(step_result("venv", "fail", 0.0, f"no CPython {target.python} on this machine"))
            return build_record(ctx, facts, steps, time.monotonic() - started)
        env = pip_env(ctx.index, ctx.cache_dir)
        for i, command in enumerate(instructions):
            name = step_name(command, i)
            try:
                argv = localize(command, python_exe=exe, venv=venv, requirements=req_file)
            except ValueError as exc:
                steps.append(step_result(name, "fail", 0.0, str(exc)))
                break
            proc = run(argv, timeout=TIMEOUTS.get(name, TIMEOUTS["install"]), env=env, cwd=work)
            built = built_from_source(proc.out + "\n" + proc.err)
            if name == "install":
                facts["built_from_source"] = built
            error = "" if proc.ok else error_text(proc)
            if error and built:
                error = f"{error} (pip was building from source: {', '.join(built)})"
            steps.append(step_result(name, "pass" if proc.ok else "fail", proc.seconds, error))
            if not proc.ok:
                break
        vpy = venv / "bin" / "python"
        if vpy.exists():
            info = run([str(vpy), "-c", "import sys; print(sys.version.split()[0])"], timeout=60)
            facts["python_full"] = info.out.strip()
            pv = run([str(vpy), "-m", "pip", "--version"], timeout=TIMEOUTS["freeze"], env=env)
            facts["pip_version"] = pv.out.split()[1] if pv.ok and len(pv.out.split()) > 1 else ""
            freeze = run([str(vpy), "-m", "pip", "freeze", "--all"], timeout=TIMEOUTS["freeze"], env=env)
            everything = parse_freeze(freeze.out) if freeze.ok else {}
            facts["installed"] = key_packages(everything)
            if all(s["status"] == "pass" for s in steps):
                check = run([str(vpy), "-m", "pip", "check"], timeout=TIMEOUTS["freeze"], env=env)
                facts["pip_check"] = "ok" if check.ok else scrub(" | ".join(
                    ln.strip() for ln in check.out.splitlines() if ln.strip())[:600])
                if target.lock:  # the lock is what got installed, and it is complete
                    problems = lock_mismatches(requirements, everything) if freeze.ok else [
                        f"pip freeze failed: {error_text(freeze)}"]
                    if facts["pip_check"] != "ok":
                        problems.append(f"pip check: {facts['pip_check']}")
                    steps.append(step_result("lock_check", "fail" if problems else "pass", check.seconds,
                                             scrub("; ".join(problems))[:600]))
        if all(s["status"] == "pass" for s in steps if s["name"] != "lock_check"):
            steps += run_smoke(str(vpy), work)
        else:
            steps += [step_result(n, "skipped", 0.0, "install failed") for n in SMOKE_STEPS]
    finally:
        if not ctx.keep_venvs:
            shutil.rmtree(work, ignore_errors=True)
    return build_record(ctx, facts, steps, time.monotonic() - started)


def build_record(ctx: Context, facts: dict, steps: list[dict], seconds: float) -> dict:
    """The record for one run (the shape verified_installs.toml documents)."""
    target: Target = facts["target"]
    plan: Plan | None = facts["plan"]
    failed = [s for s in steps if s["status"] in ("fail",)]
    rec = {
        "id": "",  # given by assign_id
        "date": ctx.date,
        "kind": target.kind,
        "target": {"tf": target.tf, "os": target.os, "python": target.python, "cpu": target.cpu},
        "variant": target.variant,
        "result": "fail" if failed else "pass",
        "failed_step": failed[0]["name"] if failed else "",
        "error": failed[0]["error"] if failed else "",
        "tf_requirement": plan.tf_requirement if plan else "",
        "plan_requirements": plan.requirements if plan else [],
        "requirements": facts["requirements"],
        "instructions": facts["instructions"],
        "python": facts["python_full"],
        "pip": facts["pip_version"],
        "installed": facts["installed"],
        "built_from_source": facts["built_from_source"],
        "pip_check": facts["pip_check"],
        "stackresolve_commit": ctx.commit,
        "seconds": round(seconds),
        "source": f"scripts/verify_plans.py at stackresolve commit {ctx.commit}: installed for real on Linux "
                  f"x86_64 from the package index, {ctx.date}",
        "step": steps,
    }
    if target.lock:
        lock: Lock | None = plan  # type: ignore[assignment]
        rec["lock"] = {"platform": lock.platform if lock else "", "pins": len(lock.requirements) if lock else 0,
                       "hashes": lock.hashes if lock else 0,
                       "sha256": hashlib.sha256(lock.text.encode()).hexdigest() if lock else "",
                       "cuda_wheels": dict(lock.cuda_wheels) if lock else {}}
        rec["source"] = rec["source"].replace("installed for real", "full lock installed for real (--require-hashes "
                                              "--no-deps)")
    return rec


def assign_id(record: dict, taken: set[str]) -> str:
    """`<date>-tf<line>-py<X.Y>[-cpu]-<variant>`, made unique with -2, -3, ..."""
    t = record["target"]
    variant = record["variant"]
    for a, b in (("<=", "le"), (">=", "ge"), ("==", "eq"), ("!=", "ne"), ("<", "lt"), (">", "gt"), ("~=", "ce")):
        variant = variant.replace(a, b)
    variant = re.sub(r"[^A-Za-z0-9.+-]+", "-", variant).strip("-")
    base = f"{record['date']}-tf{t['tf']}-py{t['python']}{'-cpu' if t['cpu'] else ''}-{variant}"
    rid, n = base, 1
    while rid in taken:
        n += 1
        rid = f"{base}-{n}"
    return rid


def needs_pip_fix(record: dict) -> bool:
    """The plan as written failed at its install command (not in the smoke test), or pip had to build packages
    from source, and no pip upgrade was tried: an old pip that cannot use today's wheel tags (pip 18.1 knows
    manylinux1 only) falls back to sdists, which fail without a compiler or take many minutes with one."""
    tried = "+pip" in record["variant"]
    compiled = set(record.get("built_from_source", ())) - PURE_SDISTS
    return not tried and (record["failed_step"] == "install" or bool(compiled))


# --------------------------------------------------------------------------------------------------- TOML out
HEADER = """\
# Verified installs: what happened when stackresolve's pip plans were installed for real.
# Written by scripts/verify_plans.py (one [[run]] per run, appended; never edit a run by hand). pitfalls.toml
# records cite these ids in `verified_by`.
#
#   [[run]]
#   id = "2026-11-24-tf1.12-py3.6-cpu-plan"   # <date>-tf<line>-py<X.Y>[-cpu]-<variant>, unique
#   date = "2026-11-24"
#   kind = "plan"                    # "plan": the pip plan installed; "lock": its full lock (`--format pip --lock`,
#                                    # installed with --require-hashes --no-deps); runs without `kind` are plans
#   target = { tf = "1.12", os = "linux", python = "3.6", cpu = true }   # cpu: the plan was made with --cpu
#   variant = "plan"                 # "plan": the plan as written; "+pip<22": the venv's pip upgraded first;
#                                    # "-h5py": the plan without its h5py pin; "+h5py<3": a pin added;
#                                    # "lock" / "lock+pip<24.1": the full lock as written / after a pip upgrade
#   result = "pass"                  # pass: every step passed (or does not apply); fail: see failed_step
#   failed_step = ""                 # the first step that failed
#   error = ""                       # its error text (URLs without their host)
#   tf_requirement = "tensorflow==1.12.3"
#   plan_requirements = [...]        # the plan's requirement lines (a lock: its pins, name==version, no hashes)
#   requirements = [...]             # what was installed (differs from the plan only in variants)
#   instructions = [...]             # the commands run (the plan's instruction line, split at &&)
#   python = "3.6.15"                # the venv's interpreter
#   pip = "21.3.1"                   # the venv's pip after the instructions
#   installed = { tensorflow = "1.12.3", numpy = "1.19.5", ... }   # key packages from `pip freeze --all`
#   built_from_source = ["gast"]    # sdists pip built during the install (slow; needs a compiler for C code)
#   pip_check = "ok"                 # `pip check` in the venv (or its complaints)
#   stackresolve_commit = "..."      # the checkout the plan came from ("+dirty": src/ or constraints/ changed)
#   seconds = 95
#   source = "..."
#   lock = { platform = "x86_64-manylinux_2_28", pins = 26, hashes = 310, sha256 = "...", cuda_wheels = {} }
#                                    # kind = "lock" only: what uv resolved for, how many pins and hashes, the
#                                    # lock file's sha256, the nvidia-*-cuXX wheels it pins
#   [[run.step]]                     # in order: plan, venv, [pip_upgrade], install, [lock_check], the smoke test
#   name = "install"
#   status = "pass"                  # pass | fail | n/a (does not apply to this release) | skipped
#   seconds = 41.2
#   error = ""
#
# lock_check (kind = "lock"): every pin of the lock installed at its version (`pip freeze`) and `pip check` clean,
# i.e. the lock installed with --no-deps is complete and consistent; the smoke test runs whatever it says.
# The smoke test runs on the CPU, each step in a fresh interpreter: import; keras_fit (1 epoch, random data);
# h5_save_load; savedmodel (TF 2: a tf.Module around the model, tf.saved_model.save/load; TF 1: SavedModelBuilder and
# loader.load in a tf.Session); session_run (TF 1) or summary_write (TF 2); then lstm, autograph, tensorboard
# (`from tensorboard import main`; from TensorBoard 1.12 the server is started on the venv's TF and asked for its
# runs), module_dict (TF 2: a tf.Module holding a dict, inside and passed to tf.function) and estimator (a
# LinearRegressor trained 2 steps, where tf.estimator exists): the failures pitfalls.toml's records describe.
"""


def toml_value(value) -> str:
    if isinstance(value, bool):
        return "true" if value else "false"
    if isinstance(value, (int, float)):
        return repr(value)
    if isinstance(value, str):
        return json.dumps(value, ensure_ascii=False).replace("\x7f", "\\u007f")
    if isinstance(value, (list, tuple)):
        return "[" + ", ".join(toml_value(v) for v in value) + "]"
    if isinstance(value, dict):
        return "{ " + ", ".join(f"{toml_key(k)} = {toml_value(v)}" for k, v in value.items()) + " }" \
            if value else "{}"
    raise TypeError(f"cannot write {type(value).__name__} to TOML")


def toml_key(key: str) -> str:
    return key if re.fullmatch(r"[A-Za-z0-9_-]+", key) else json.dumps(key)


def render_record(record: dict) -> str:
    lines = ["[[run]]"]
    for k, v in record.items():
        if k == "step":
            continue
        if k in ("plan_requirements", "requirements", "instructions") and len(toml_value(v)) > 100:
            lines.append(f"{k} = [\n" + "".join(f"  {toml_value(x)},\n" for x in v) + "]")
        else:
            lines.append(f"{k} = {toml_value(v)}")
    for s in record.get("step", []):
        lines.append("[[run.step]]")
        lines += [f"{k} = {toml_value(v)}" for k, v in s.items()]
    return "\n".join(lines) + "\n"


def load_results(path: Path) -> list[dict]:
    if not path.exists():
        return []
    with open(path, "rb") as f:
        return tomllib.load(f).get("run", [])


def append_records(path: Path, records: list[dict]) -> None:
    """Append records (ids already assigned) to the results file, writing the header first if it is new. The
    whole file is re-parsed before it is replaced, so a broken write never lands."""
    import fcntl

    # several invocations may append at once; the lock lives outside the repository
    digest = hashlib.sha1(str(path.resolve()).encode()).hexdigest()[:12]
    lock_file = Path(tempfile.gettempdir()) / f"verify_plans-{digest}.lock"
    with open(lock_file, "w") as lock:
        fcntl.flock(lock, fcntl.LOCK_EX)
        old = path.read_text(encoding="utf-8") if path.exists() else HEADER
        taken = {r["id"] for r in tomllib.loads(old).get("run", [])}
        for r in records:
            if r["id"] in taken:  # another invocation wrote the same id meanwhile
                r["id"] = assign_id(r, taken)
            taken.add(r["id"])
        new = old.rstrip("\n") + "\n" + "".join("\n" + render_record(r) for r in records)
        tomllib.loads(new)
        tmp = path.with_name(path.name + ".tmp")
        tmp.write_text(new, encoding="utf-8")
        os.replace(tmp, path)


# --------------------------------------------------------------------------------------------------- main
def summary_line(rec: dict) -> str:
    t = rec["target"]
    steps = " ".join(f"{s['name']}={s['status']}" for s in rec["step"] if s["status"] != "pass")
    what = f"{rec['failed_step']}: {rec['error']}" if rec["result"] == "fail" else (steps or "all steps pass")
    return (f"{rec['id']}: {rec['tf_requirement'] or t['tf']} py{rec['python'] or t['python']} "
            f"{rec['result'].upper()} ({rec['seconds']} s) {what}")


def default_cli() -> list[str]:
    here = Path(sys.executable).parent / "stackresolve"
    if here.exists():
        return [str(here)]
    found = shutil.which("stackresolve")
    return [found] if found else [sys.executable, "-m", "stackresolve"]


def index_from_pip() -> str:
    try:
        from stackresolve.index.simple import index_url
    except ImportError:  # a checkout without the package installed
        sys.path.insert(0, str(ROOT / "src"))
        from stackresolve.index.simple import index_url
    return index_url()


def main(argv: list[str] | None = None) -> int:
    ap = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    ap.add_argument("targets", nargs="*", help="TF[@X.Y][:cpu] (default: the built-in list)")
    ap.add_argument("--drop", action="append", default=[], metavar="PKG", help="leave the plan's PKG pin out")
    ap.add_argument("--add", action="append", default=[], metavar="REQ", help="add a requirement line")
    ap.add_argument("--pip-upgrade", default="", metavar="REQ",
                    help="upgrade the venv's pip to REQ before the plan's install (e.g. 'pip<22')")
    ap.add_argument("--lock", action="store_true",
                    help="install each target's full lock (plan --format pip --lock) with --require-hashes "
                         "--no-deps instead of its pip plan (default targets: LOCK_TARGETS)")
    ap.add_argument("--no-pip-fix", action="store_true",
                    help="do not rerun a failed install with the venv's pip upgraded")
    ap.add_argument("--results", type=Path, default=RESULTS, help="results file (default: %(default)s)")
    ap.add_argument("--no-write", action="store_true", help="print the records, write nothing")
    ap.add_argument("--jobs", type=int, default=1, help="targets run at the same time")
    ap.add_argument("--cache-dir", type=Path, help="pip cache for these runs (default: a temporary folder)")
    ap.add_argument("--work-dir", type=Path, help="where the venvs are made (default: the temp folder)")
    ap.add_argument("--keep-venvs", action="store_true")
    ap.add_argument("--interpreter", action="append", default=[], metavar="X.Y=PATH")
    ap.add_argument("--cli", help="the stackresolve command (default: the one next to this interpreter)")
    ap.add_argument("--list", action="store_true", help="print the built-in targets and exit")
    args = ap.parse_args(argv)
    defaults = LOCK_TARGETS if args.lock else DEFAULT_TARGETS
    if args.list:
        print("\n".join(defaults))
        return 0
    try:
        targets = [parse_target(t, drop=args.drop, add=args.add, pip_upgrade=args.pip_upgrade, lock=args.lock)
                   for t in (args.targets or defaults)]
        interpreters = dict(i.split("=", 1) for i in args.interpreter)
    except (ValueError, InvalidRequirement) as exc:
        print(f"error: {exc}", file=sys.stderr)
        return 2
    cache = args.cache_dir or Path(tempfile.mkdtemp(prefix="verify-pip-cache-"))
    cache.mkdir(parents=True, exist_ok=True)
    ctx = Context(cli=shlex.split(args.cli) if args.cli else default_cli(), index=index_from_pip(),
                  cache_dir=cache, work_dir=args.work_dir, commit=git_commit(),
                  date=_dt.date.today().isoformat(), interpreters=interpreters, keep_venvs=args.keep_venvs)
    if args.work_dir:
        args.work_dir.mkdir(parents=True, exist_ok=True)
    taken = {r["id"] for r in load_results(args.results)}
    failed = 0

    def job(target: Target) -> list[dict]:
        first = verify(ctx, target)
        out = [first]
        if not args.no_pip_fix and needs_pip_fix(first):
            fix = PIP_FOR_PYTHON.get(first["target"]["python"], "pip")
            out.append(verify(ctx, replace(target, python=first["target"]["python"], pip_upgrade=fix)))
        return out

    try:
        with ThreadPoolExecutor(max(1, args.jobs)) as ex:
            futures = [ex.submit(job, t) for t in targets]
            for fut in as_completed(futures):
                records = fut.result()
                for rec in records:
                    rec["id"] = assign_id(rec, taken)
                    taken.add(rec["id"])
                if args.no_write:
                    print("".join(render_record(r) for r in records))
                else:
                    append_records(args.results, records)
                for rec in records:
                    print(summary_line(rec), flush=True)
                    failed += rec["result"] != "pass"
    finally:
        if not args.cache_dir:
            shutil.rmtree(cache, ignore_errors=True)
    return 1 if failed else 0


if __name__ == "__main__":
    sys.exit(main())
