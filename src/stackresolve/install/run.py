"""`stackresolve install`: a virtual environment with the plan's Python, the plan's packages installed (uv when it is
there, pip otherwise), then proof: the framework imports in it and, for a GPU plan, sees a GPU; `check` agrees.

    report = install(target, options, runner=..., check=..., progress=...)

The folder: a new or empty one is made into the venv; one that holds a venv this user's stackresolve made there (its
marker file, whose proof only this user's install key can make: see made_here) is installed into again; any other
non-empty folder is refused unless --reuse names an existing venv. The marker `.stackresolve-install.json` is
written first with "complete": false and rewritten with "complete": true only after every check held, so an
interrupted or failed install never looks complete; a venv this run created is removed when the run fails or is
interrupted. One install at a time per folder: an advisory lock file beside it is held for the whole install.

Wheels only: the installer is told --only-binary :all:, except for the sdists the knowledge base names for the
build (pinned), so a lock cannot make it run a build backend.

Every subprocess goes through the injected runner (detect.runner's contract, with a timeout per step).
"""

from __future__ import annotations

import contextlib
import json
import os
import shutil
import tempfile
import time
from dataclasses import dataclass, field
from pathlib import Path
from typing import TYPE_CHECKING, Callable

from stackresolve.detect.runner import CommandNotFound, CommandOutputTooLarge, CommandTimeout
from stackresolve.install.python import NOT_RUN, FoundPython, download_python, find_python, interpreter
from stackresolve.install.target import InstallTarget, refuse_pip_first
from stackresolve.model.record import record
from stackresolve.request.build import InputError

if TYPE_CHECKING:
    from stackresolve.model.enums import Os

MARKER = ".stackresolve-install.json"
MARKER_SCHEMA = "stackresolve/install-marker@1"
TIMEOUTS = {"venv": 300.0, "pip_upgrade": 600.0, "install": 3600.0, "import": 600.0}
# Each request to an index that does not answer fails after this many seconds (pip's --timeout; uv's
# UV_HTTP_TIMEOUT, which the CLI sets unless the user did), so a dead index ends the install in minutes, not at
# the step's limit.
NETWORK_TIMEOUT = 60
PIP_DEADLINE = ("--timeout", str(NETWORK_TIMEOUT), "--retries", "2")
INSTALLERS = ("auto", "uv", "pip")
TAIL_LINES = 12
TAIL_WIDTH = 300


class InstallFailed(Exception):
    """A step failed: which one, what it said (one line), and the tool's own last lines."""

    def __init__(self, step: str, message: str, tail: tuple[str, ...] = (), code: int = 1):
        super().__init__(f"{step}: {message}")
        self.step = step
        self.message = message
        self.tail = tail
        self.code = code


@record
class InstallOptions:
    venv: Path
    installer: str = "auto"  # auto | uv | pip
    reuse: bool = False
    python: str | None = None  # --python X.Y: only this minor
    python_exe: str | None = None  # --python-exe: this interpreter
    python_download: bool = False  # uv may download a managed CPython
    index_url: str | None = None
    find_links: tuple[str, ...] = ()
    no_index: bool = False


@dataclass
class InstallReport:
    target: InstallTarget
    venv: Path
    python: FoundPython | None = None
    installer: str = ""
    seconds: dict[str, float] = field(default_factory=dict)
    imported: dict | None = None  # the import check's JSON
    check_ok: bool | None = None
    check_lines: tuple[str, ...] = ()
    findings: list[str] = field(default_factory=list)  # what does not hold, one line each
    source_builds: list[str] = field(default_factory=list)  # the sdists built (named by the knowledge base)
    lock_file: str = ""  # the advisory lock held for the whole install
    machine_check: list[dict] = field(default_factory=list)  # the differences the check before installing found

    @property
    def ok(self) -> bool:
        return not self.findings

    def to_json(self) -> dict:
        return {"schema": "stackresolve/install@1", "ok": self.ok, "target": self.target.label,
                "venv": str(self.venv), "installer": self.installer,
                "python": {"version": self.python.version, "executable": self.python.executable,
                           "found_by": self.python.how} if self.python else None,
                "import_check": self.imported, "gpu_stack": self.target.gpu,
                "check": {"ok": self.check_ok, "lines": list(self.check_lines)},
                "findings": list(self.findings), "seconds": {k: round(v, 2) for k, v in self.seconds.items()},
                "built_from_source": list(self.source_builds), "lock_file": self.lock_file,
                "machine_check": list(self.machine_check)}


def venv_python(venv: Path) -> Path:
    return venv / "Scripts" / "python.exe" if os.name == "nt" else venv / "bin" / "python"


def read_marker(venv: Path) -> dict | None:
    try:
        doc = json.loads((venv / MARKER).read_text(encoding="utf-8"))
    except (OSError, ValueError, RecursionError):
        return None
    return doc if isinstance(doc, dict) and doc.get("schema") == MARKER_SCHEMA else None


# -- who made the venv ----------------------------------------------------------------------------------------
# A marker file anyone can write (a cloned repository's .venv can hold one) proves nothing by itself: running the
# venv's bin/python runs whatever is there. The marker therefore carries a proof only this user's stackresolve can
# make: HMAC-SHA256, keyed by a secret the command created (INSTALL_KEY in the user's cache folder, which must be
# the user's own and writable by no one else), over the venv's real path and a nonce made for that run. Without
# the key (no cache folder, a cleared cache, another user or machine), re-installing into the venv needs --reuse.
INSTALL_KEY = "install-key"


def install_key(create: bool) -> bytes | None:
    """This user's install key (32 random bytes), made when `create` and missing; None where there is none or its
    folder or file is not the user's alone."""
    # lazy: start-up (only this path needs knowledge.snapshot)
    import secrets
    import stat

    from stackresolve.knowledge.snapshot import cache_dir, trusted, trusted_cache_dir

    folder = cache_dir()
    if folder is None:
        return None
    if create:
        try:
            folder.mkdir(mode=0o700, parents=True, exist_ok=True)
        except OSError:
            return None
    if trusted_cache_dir() is None:
        return None
    path = folder / INSTALL_KEY
    nofollow = getattr(os, "O_NOFOLLOW", 0)
    try:
        fd = os.open(path, os.O_RDONLY | nofollow)
    except FileNotFoundError:
        if not create:
            return None
        try:
            fd = os.open(path, os.O_WRONLY | os.O_CREAT | os.O_EXCL | nofollow, 0o600)
            with os.fdopen(fd, "wb") as out:
                out.write(secrets.token_bytes(32))
        except FileExistsError:  # another install made it meanwhile
            pass
        except OSError:
            return None
        return install_key(create=False)
    except OSError:
        return None
    with os.fdopen(fd, "rb") as handle:
        info = os.fstat(handle.fileno())
        key = handle.read(64)
    if not stat.S_ISREG(info.st_mode) or not trusted(info) or info.st_mode & (stat.S_IRGRP | stat.S_IROTH) or \
            len(key) != 32:
        return None
    return key


def _proof(key: bytes, venv: Path, nonce: str) -> str:
    # lazy: start-up (hashlib, hmac, only this path)
    import hashlib
    import hmac

    return hmac.new(key, f"{os.path.realpath(venv)}\n{nonce}".encode("utf-8", "surrogateescape"),
                    hashlib.sha256).hexdigest()


def made_here(venv: Path, marker: dict | None) -> bool:
    """Whether `marker` is one this user's stackresolve wrote for this very folder (its proof checks out)."""
    # lazy: start-up (hmac, only this path)
    import hmac

    if marker is None:
        return False
    nonce, proof = marker.get("nonce"), marker.get("proof")
    if not isinstance(nonce, str) or not isinstance(proof, str) or not 16 <= len(nonce) <= 128:
        return False
    key = install_key(create=False)
    return key is not None and hmac.compare_digest(_proof(key, venv, nonce).encode(),
                                                   proof.encode("utf-8", "surrogateescape"))


def _write_marker(venv: Path, report: InstallReport, complete: bool) -> None:
    # lazy: start-up (only this path needs files.write)
    import secrets

    from stackresolve.files.write import atomic_write

    doc = {"schema": MARKER_SCHEMA, "complete": complete, "target": report.target.label,
           "python": report.python.version if report.python else None, "installer": report.installer,
           "finished": time.strftime("%Y-%m-%dT%H:%M:%SZ", time.gmtime()) if complete else None}
    key = install_key(create=True)
    if key is not None:  # without a key the marker proves nothing: the next install into it needs --reuse
        nonce = secrets.token_hex(16)
        doc.update(nonce=nonce, proof=_proof(key, venv, nonce))
    atomic_write(venv / MARKER, json.dumps(doc, indent=2) + "\n")


def prepare_folder(options: InstallOptions) -> tuple[bool, bool]:
    """Check the folder before anything is touched: (this run creates the venv, the folder existed before). InputError
    (exit 2) for a folder it must not install into."""
    venv = options.venv
    if venv.exists() and not venv.is_dir():
        raise InputError(f"--venv {str(venv)!r}: exists and is not a folder")
    if not venv.exists():
        return True, False
    if not any(venv.iterdir()):
        return True, True
    marker = read_marker(venv)
    if made_here(venv, marker):
        return False, True  # a venv this user's stackresolve made here: installed into again
    if not (venv / "pyvenv.cfg").is_file():
        raise InputError(f"--venv {str(venv)!r}: the folder is not empty and is not a virtual environment; name a new "
                         f"or empty folder")
    if not options.reuse:
        why = ("holds a stackresolve marker this user's stackresolve did not write here (copied or cloned from "
               "elsewhere?)" if marker is not None else "holds a virtual environment stackresolve did not make")
        raise InputError(f"--venv {str(venv)!r}: the folder {why}; pass --reuse to install into it (its Python will "
                         f"run), or name a new folder")
    return False, True


# -- one install per folder at a time ---------------------------------------------------------------------------
@contextlib.contextmanager
def folder_lock(venv: Path):
    """Hold the advisory lock of the install into `venv` for the whole install: a lock file beside it
    (`.NAME.stackresolve-install.lock`, removed when done), locked with flock (POSIX) or msvcrt.locking (Windows).
    InputError (exit 2, nothing touched) when another install holds it. The file is opened without following
    links and must be a plain file with one link, so a planted link cannot make us write elsewhere."""
    # lazy: no start-up gain (already loaded by then); kept beside its use
    import stat

    real = Path(os.path.realpath(venv))  # one lock whatever name or link the folder is given by
    try:
        real.parent.mkdir(parents=True, exist_ok=True)
    except OSError as exc:
        raise InputError(f"--venv {str(venv)!r}: cannot make its parent folder ({exc.strerror or exc})") from None
    path = real.parent / f".{real.name}.stackresolve-install.lock"
    flags = os.O_RDWR | os.O_CREAT | getattr(os, "O_NOFOLLOW", 0) | getattr(os, "O_CLOEXEC", 0)
    while True:
        try:
            fd = os.open(path, flags, 0o600)
        except OSError as exc:
            raise InputError(f"--venv {str(venv)!r}: cannot open the install lock {str(path)!r} "
                             f"({exc.strerror or exc})") from None
        info = os.fstat(fd)
        if not stat.S_ISREG(info.st_mode) or info.st_nlink != 1:
            os.close(fd)
            raise InputError(f"--venv {str(venv)!r}: {str(path)!r} is not a plain file; remove it")
        if not _try_lock(fd):
            holder = os.read(fd, 32).decode("ascii", "replace").strip()
            os.close(fd)
            raise InputError(f"--venv {str(venv)!r}: another stackresolve install"
                             + (f" (process {holder})" if holder.isdigit() else "") + " is installing into this "
                             f"folder; wait for it to finish, or name another folder")
        try:  # the file we locked must still be the one at the path (a finished install removes its file)
            same = os.stat(path, follow_symlinks=False)
        except FileNotFoundError:
            same = None
        if same is not None and (same.st_ino, same.st_dev) == (info.st_ino, info.st_dev):
            break
        os.close(fd)
    try:
        os.ftruncate(fd, 0)
        os.write(fd, f"{os.getpid()}\n".encode())
        yield path
    finally:
        if os.name != "nt":
            try:
                os.unlink(path)  # still held: a waiting install finds the path gone and opens a new file
            except OSError:
                pass
        os.close(fd)  # closing releases the lock


def _try_lock(fd: int) -> bool:
    if os.name == "nt":  # pragma: no cover - Windows
        # lazy: one platform's module
        import msvcrt

        try:
            msvcrt.locking(fd, msvcrt.LK_NBLCK, 1)
        except OSError:
            return False
        return True
    # lazy: one platform's module
    import fcntl

    try:
        fcntl.flock(fd, fcntl.LOCK_EX | fcntl.LOCK_NB)
    except BlockingIOError:
        return False
    return True


def _undo(venv: Path, existed: bool) -> None:
    """Remove what this run made: the venv, or only its contents when the folder was the user's (empty) one."""
    if not existed:
        shutil.rmtree(venv, ignore_errors=True)
        return
    for child in venv.iterdir() if venv.is_dir() else ():
        if child.is_dir() and not child.is_symlink():
            shutil.rmtree(child, ignore_errors=True)
        else:
            child.unlink(missing_ok=True)


def _tail(*texts: str) -> tuple[str, ...]:
    """A tool's last lines, each cut to TAIL_WIDTH characters (a tool may print one huge line)."""
    lines = [line.rstrip() for text in texts for line in (text or "").splitlines() if line.strip()]
    return tuple(line if len(line) <= TAIL_WIDTH else line[:TAIL_WIDTH] + " ..." for line in lines[-TAIL_LINES:])


def _run(runner, step: str, argv: list[str], timeout: float) -> str:
    """Run one step's command; InstallFailed with the command's last lines when it fails."""
    try:
        rc, out, err = runner(argv, timeout)
    except CommandNotFound as exc:
        raise InstallFailed(step, f"cannot start {Path(argv[0]).name} ({exc})") from None
    except CommandTimeout as exc:
        raise InstallFailed(step, f"{Path(argv[0]).name} did not finish within {timeout:.0f} s",
                            _tail(exc.stdout, exc.stderr)) from None
    except CommandOutputTooLarge as exc:
        raise InstallFailed(step, f"{Path(argv[0]).name} printed more than {exc.limit} bytes; stopped",
                            _tail(exc.stdout, exc.stderr)) from None
    if rc != 0:
        raise InstallFailed(step, f"{Path(argv[0]).name} exited with {rc}", _tail(out, err))
    return out


def choose_installer(options: InstallOptions, uv: str | None) -> str:
    if options.installer == "uv" and uv is None:
        raise InputError("--installer uv: uv was not found; pip install 'stackresolve[install]' or put uv on PATH, "
                         "or use --installer pip")
    return "uv" if options.installer in ("auto", "uv") and uv else "pip"


def uv_index_options(target: InstallTarget, options: InstallOptions) -> list[str]:
    """uv reads no pip configuration: the index is named on the command line (the stack's own, or pip's)."""
    # lazy: start-up (only this path needs lock.full)
    from stackresolve.lock.full import uv_index_options as stack_index

    if options.no_index:
        return ["--no-index", *[w for f in options.find_links for w in ("--find-links", f)]]
    # lazy: start-up (only this path needs index.simple)
    from stackresolve.index.simple import index_url

    argv = stack_index(target.index_args, index_url(options.index_url))
    return [*argv, *[w for f in options.find_links for w in ("--find-links", f)]]


def pip_index_options(options: InstallOptions) -> list[str]:
    """pip reads its own configuration and the requirements file's index lines; only what was asked is added."""
    argv = ["--no-index"] if options.no_index else (["--index-url", options.index_url] if options.index_url else [])
    return [*argv, *[w for f in options.find_links for w in ("--find-links", f)]]


def requirements_text(target: InstallTarget, installer: str, source_builds=()) -> str:
    """The file the installer reads: a full lock as it is; otherwise the plan's lines (pip gets the stack's index
    option in the file, as the pip plan writes it; uv gets it on the command line), then the pins of the sdists the
    knowledge base lets this build compile (so only that version can be built)."""
    if target.hashed:
        return target.file_text
    # lazy: start-up (packaging.requirements ~8 ms)
    from packaging.requirements import Requirement
    from packaging.utils import canonicalize_name

    index = [" ".join(target.index_args[i:i + 2]) for i in range(0, len(target.index_args), 2)] \
        if installer == "pip" else []
    named = {canonicalize_name(Requirement(line).name) for line in target.requirements}
    pins = [b.requirement for b in source_builds if canonicalize_name(b.package) not in named]
    return "\n".join([*index, *target.requirements, *pins]) + "\n"


def binary_options(source_builds=()) -> list[str]:
    """Wheels only: a build backend is code, and a lock must not be able to run code. The exceptions are the sdists
    the knowledge base names for the build (pinned in the requirements). pip and uv read these alike; the order
    matters to pip (`--only-binary :all:` clears the `--no-binary` names given before it)."""
    return ["--only-binary", ":all:", *[w for b in source_builds for w in ("--no-binary", b.package)]]


def install(target: InstallTarget, options: InstallOptions, *, runner, uv: str | None, host: Host,
            check: Callable[[str], tuple[bool, tuple[str, ...]]] | None = None,
            progress: Callable[[str], None] = lambda _msg: None, env=None) -> InstallReport:
    """Install `target` into options.venv on this machine (`host`) and verify it. Raises InputError (bad input:
    nothing touched), InstallFailed (a step failed: the venv this run created is removed), KeyboardInterrupt
    (likewise). A venv whose verification fails is kept for diagnosis, its marker saying "complete": false. The
    folder's lock (folder_lock) is held from before the folder is looked at until the report is made."""
    refuse_pip_first(target)
    if target.os.wheel_os is not host.os.wheel_os:
        raise InputError(f"the lock is for {target.os}; this machine runs {host.os} (make a lock for it with "
                         f"`stackresolve plan --format lock`)")
    if target.file_kind == "pylock.toml" and options.installer == "pip":
        raise InputError("--installer pip: pip cannot install a pylock.toml; use uv (--installer uv)")
    # lazy: start-up (only this path needs index.simple)
    from stackresolve.index.simple import insecure_url

    for folder in options.find_links:
        if "://" not in folder and not Path(folder).is_dir():
            raise InputError(f"--find-links {folder!r}: no such folder")
    for flag, url in [("--index-url", options.index_url), *(("--find-links", f) for f in options.find_links)]:
        if url and "://" in url and insecure_url(url):
            raise InputError(f"{flag} {url!r}: plain http can be changed on the way; use https (pip refuses it too, "
                             f"unless told --trusted-host)")
    installer = choose_installer(options, uv)
    if target.file_kind == "pylock.toml" and installer != "uv":
        raise InputError("a pylock.toml is installed with uv, which was not found: pip install 'stackresolve[install]'")
    with folder_lock(options.venv) as lock_path:
        report = InstallReport(target, options.venv, installer=installer, lock_file=str(lock_path))
        return _install_held(report, options, runner=runner, uv=uv, host=host, check=check, progress=progress,
                             env=env)


def _install_held(report: InstallReport, options: InstallOptions, *, runner, uv, host, check, progress, env
                  ) -> InstallReport:
    """install() once the folder's lock is held: the folder is checked, and everything else done, under it."""
    # lazy: start-up (only this path needs formats.pip_decide)
    from stackresolve.formats.pip_decide import pip_upgrade

    target, installer = report.target, report.installer
    created, existed = prepare_folder(options)
    started = time.monotonic()

    def timed(name: str, since: float) -> float:
        now = time.monotonic()
        report.seconds[name] = now - since
        return now

    python = venv_python(options.venv)
    progress(f"finding Python {options.python or target.python_range}")
    if created:
        report.python = python_to_use(target, options, runner, uv, host, env)
    else:  # the venv's own Python is the one that counts
        report.python = _venv_interpreter(target, options, runner, python)
    t = timed("python", started)
    try:
        if created:
            progress(f"creating {options.venv} with Python {report.python.version} ({installer})")
            argv = [uv, "venv", "--python", report.python.executable, "--no-config", str(options.venv)] \
                if installer == "uv" else [report.python.executable, "-m", "venv", str(options.venv)]
            _run(runner, "creating the venv", argv, TIMEOUTS["venv"])
            if not python.exists():
                raise InstallFailed("creating the venv", f"{python} was not made")
        _write_marker(options.venv, report, complete=False)
        t = timed("venv", t)
        progress(f"installing {target.label} ({installer})")
        sources = target.source_builds(report.python.minor)
        report.source_builds = [b.requirement for b in sources]
        if sources:
            progress("wheels only, except what the knowledge base names for this build: " +
                     "; ".join(f"{b.requirement} from source ({b.why})" for b in sources))
        with tempfile.TemporaryDirectory(prefix="stackresolve-install-") as scratch:
            name = "pylock.toml" if target.file_kind == "pylock.toml" else "requirements.txt"
            requirements = Path(scratch) / name
            requirements.write_text(requirements_text(target, installer, sources), encoding="utf-8")
            hashed = ["--require-hashes", "--no-deps"] if target.file_kind == "requirements.txt" else []
            if installer == "uv":
                argv = [uv, "pip", "install", "--python", str(python), "--no-config",
                        *uv_index_options(target, options), *hashed, *binary_options(sources), "-r",
                        str(requirements)]
            else:
                pip = [str(python), "-m", "pip", "install", "--disable-pip-version-check", *PIP_DEADLINE,
                       *pip_index_options(options)]
                if not created and _runs(runner, [str(python), "-m", "pip", "--version"]) is False:
                    _run(runner, "adding pip to the venv", [str(python), "-m", "ensurepip"], TIMEOUTS["venv"])
                upgrade = pip_upgrade(report.python.minor).strip('"')
                _run(runner, "upgrading pip in the venv", [*pip, *binary_options(), "--upgrade", upgrade],
                     TIMEOUTS["pip_upgrade"])
                argv = [*pip, *hashed, *binary_options(sources), "-r", str(requirements)]
            _run(runner, f"installing with {installer}", argv, TIMEOUTS["install"])
        t = timed("install", t)
    except BaseException:
        if created:
            _undo(options.venv, existed)
        raise
    try:
        _verify(report, runner, python, check, progress)
    except KeyboardInterrupt:  # interrupted while proving it: nothing half-checked stays behind either
        if created:
            _undo(options.venv, existed)
        raise
    timed("verify", t)
    if report.ok:
        _write_marker(options.venv, report, complete=True)
    report.seconds["total"] = time.monotonic() - started
    return report


def _runs(runner, argv: list[str]) -> bool | None:
    """Whether a command exits 0 (None: it could not be asked)."""
    try:
        rc, _out, _err = runner(argv, 60.0)
    except NOT_RUN:
        return None
    return rc == 0


def _venv_interpreter(target: InstallTarget, options: InstallOptions, runner, python: Path) -> FoundPython:
    """The Python of a venv installed into again: it must fit the lock (and --python), or nothing is touched."""
    found = interpreter(runner, str(python), "the venv's own")
    if found is None:
        raise InputError(f"--venv {str(options.venv)!r}: {python} does not run; name a new folder")
    if found.minor not in target.pythons or (options.python and found.minor != options.python):
        wanted = options.python or target.python_range
        raise InputError(f"--venv {str(options.venv)!r} is a Python {found.version} venv; {target.label} needs Python "
                         f"{wanted}: name a new folder")
    return found


class PythonMismatch(InputError):
    """A named interpreter that runs but is outside the target's Pythons: bad input for install; for
    `check --before-install` the difference it reports."""

    def __init__(self, message: str, found: FoundPython):
        super().__init__(message)
        self.found = found


@record
class Host:
    """This machine, as install needs it (detected by the caller: install itself reads no system file)."""

    os: "Os"
    ubuntu: str | None = None  # "22.04" on Ubuntu: only the apt route that works here is named


def python_to_use(target: InstallTarget, options: InstallOptions, runner, uv: str | None, host: Host, env=None
                  ) -> FoundPython:
    """The interpreter a new venv is made from: --python-exe, else the first of the target's Pythons (or
    --python) this machine has, else one uv downloads when asked. InputError for a named one that does not fit;
    InstallFailed naming how to get one when there is none (nothing was touched yet). `check --before-install`
    asks the same."""
    wanted = (options.python,) if options.python else target.pythons
    if options.python and options.python not in target.pythons:
        raise InputError(f"--python {options.python}: {target.label} has wheels for Python {target.python_range}")
    if options.python_exe:
        found = interpreter(runner, options.python_exe)
        if found is None:
            raise InputError(f"--python-exe {options.python_exe!r}: does not run as Python")
        if found.minor not in wanted:
            raise PythonMismatch(f"--python-exe {options.python_exe!r} is Python {found.version}; {target.label} "
                                 f"needs Python {options.python or target.python_range}", found)
        return found
    found = find_python(wanted, host.os, runner, env=env, uv=uv)
    failed_download = ""
    if found is None and options.python_download and uv:
        for version in wanted:
            found, failed_download = download_python(version, uv, runner)
            if found:
                break
    if found is None:
        raise InstallFailed("finding Python", missing_python(wanted, target, host, uv, failed_download))
    return found


def missing_python(wanted, target: InstallTarget, host: Host, uv: str | None, failed_download: str = "") -> str:
    """One line: which Python is missing, why it is needed, and how to get it on this machine."""
    # lazy: start-up (only this path needs knowledge.python_sources)
    from stackresolve.knowledge.python_sources import how_to_get_line, python_sources

    sources = python_sources(wanted[0], host.os, ubuntu=host.ubuntu)
    if failed_download:
        download = f" (uv could not download it: {failed_download})"
    elif uv and any(s.method == "uv" for s in sources):
        download = " (or let uv download it: --python-download)"
    else:
        download = ""
    return (f"no Python {' or '.join(wanted)} on this machine ({target.label} has wheels for Python "
            f"{target.python_range}); {how_to_get_line(wanted[0], sources)}{download}; then run this again, or name "
            f"it with --python-exe")


def _verify(report: InstallReport, runner, python: Path, check, progress) -> None:
    """The framework imports (and sees a GPU, for a GPU stack); then `check` against the venv's interpreter."""
    # lazy: start-up (only this path needs install._importcheck)
    from stackresolve.install import _importcheck

    target = report.target
    if target.framework is not None:
        progress(f"checking that {target.framework.display} imports")
        code = Path(_importcheck.__file__).read_text(encoding="utf-8")
        out = _run(runner, "the import check", [str(python), "-c", code, target.framework.value], TIMEOUTS["import"])
        line = next((l for l in reversed(out.splitlines()) if l.startswith(_importcheck.MARKER)), None)
        try:
            report.imported = json.loads(line[len(_importcheck.MARKER):]) if line else None
        except ValueError:
            report.imported = None
        if not isinstance(report.imported, dict):
            report.findings.append(f"the import check printed no result ({_tail(out)[-1:] or 'no output'})")
        elif report.imported.get("error"):
            report.findings.append(f"{target.framework.display} does not import: {report.imported['error']}"
                                   + _system_cuda_hint(target))
        elif target.gpu and not report.imported.get("gpus"):
            report.findings.append(f"{target.framework.display} imports but sees no GPU; this is a GPU plan (is the "
                                   f"driver loaded? `stackresolve doctor --python-exe {python}` says why)"
                                   + _system_cuda_hint(target))
    if check is not None:
        progress("checking the venv against the lock")
        report.check_ok, report.check_lines = check(str(python))
        if not report.check_ok:
            report.findings.append("check: the venv does not match the lock")


def _system_cuda_hint(target: InstallTarget) -> str:
    if not target.system_cuda:
        return ""
    return (f"; this stack loads {target.system_cuda} from the system, which pip does not install: install them "
            f"with the plan's --format apt (Ubuntu), conda or powershell (Windows)")


def render_text(report: InstallReport) -> str:
    # lazy: start-up (only this path needs formats.header)
    from stackresolve.formats.header import one_line as printable  # tool text never reaches the terminal raw

    py = report.python
    lines = [printable(f"stackresolve install: {report.target.label} into {report.venv}")]
    if py:
        lines.append(f"  python    {py.version} ({py.how}: {printable(py.executable)})")
    lines.append(f"  installer {report.installer}" + (f", {report.seconds['install']:.1f} s"
                                                      if "install" in report.seconds else ""))
    imported = report.imported
    if imported and not imported.get("error"):
        build = ", ".join(f"{k} {imported[k]}" for k in ("cuda", "cudnn") if imported.get(k)) or "no CUDA build info"
        gpus = imported.get("gpus") or []
        seen = f"sees {len(gpus)} GPU(s): {printable(', '.join(map(str, gpus)))}" if gpus else \
            ("no GPU visible" + (": a CPU plan, as planned" if not report.target.gpu else ""))
        lines.append(f"  import    {report.target.framework.display} {printable(str(imported.get('version')))} "
                     f"imports ({build}); {seen}")
    for line in report.check_lines:
        lines.append(f"  check     {printable(line)}")
    for finding in report.findings:
        lines.append(f"error: {printable(finding)}")
    if report.ok:
        # lazy: start-up (shlex, only this path)
        import shlex

        activate = report.venv / ("Scripts\\activate" if os.name == "nt" else "bin/activate")
        lines.append(printable(f"verified in {report.seconds.get('total', 0):.1f} s; activate with: "
                               + (f'"{activate}"' if os.name == "nt" else f"source {shlex.quote(str(activate))}")))
    return "\n".join(lines) + "\n"
