"""A small client for a Python package index (the "simple" repository API).

What it does:

- ``index_url()`` finds the index the way pip would: explicit argument, ``PIP_INDEX_URL``, pip's
  configuration files, pip's own built-in default. No host is written in this module.
- ``project_files()`` reads a project's file list as PEP 691 JSON
  (``Accept: application/vnd.pypi.simple.v1+json``) with retries (urllib3 ``Retry`` on a mounted
  ``HTTPAdapter``) and a timeout on every request.
- ``wheel_metadata()`` returns a wheel's core metadata: the PEP 658 ``.metadata`` file when the index
  offers it (PEP 714 ``core-metadata`` key, or the older ``data-dist-info-metadata``), otherwise the
  wheel's own ``*.dist-info/METADATA`` read through HTTP range requests (only the zip's central
  directory and that one member are transferred, a few MiB for a 500 MiB TensorFlow wheel).
- ``wheel_support()`` says which CPython versions a wheel installs on, per platform, using
  ``packaging.utils.parse_wheel_filename`` and the tag sets of ``packaging.tags``.

Reading pip's configuration: we read pip's config files ourselves with ``configparser`` rather than run
``python -m pip config get``. A subprocess costs a second interpreter start plus pip's import (hundreds
of milliseconds), needs pip installed in *that* interpreter, and ``pip config get`` cannot answer "install
section else global section" in one call. The files, their order and the rules below mirror pip 23-25
(``pip._internal.configuration``): files are read lowest precedence first (global, user, site, then
``PIP_CONFIG_FILE``); ``PIP_CONFIG_FILE`` pointing at an existing file disables the user files, and
pointing at ``os.devnull`` disables all files; within the merged result ``[install]`` beats ``[global]``;
empty values are ignored; key names are case-insensitive and ``_`` equals ``-``. The environment and the
file list are parameters, so tests (and callers) inject them. Not mirrored: pip's isolated mode.

``requests`` is imported inside the functions that use it, so importing this module is cheap.
"""

from __future__ import annotations

import io
import os
import re
import sys
from collections.abc import Iterable, Mapping, Sequence
from dataclasses import field
from functools import lru_cache
from pathlib import Path
from typing import TYPE_CHECKING, Any
from urllib.parse import urljoin

from packaging.utils import (
    InvalidSdistFilename,
    InvalidWheelFilename,
    canonicalize_name,
    parse_sdist_filename,
    parse_wheel_filename,
)
from packaging.version import Version

from stackresolve.model.record import record

if TYPE_CHECKING:  # pragma: no cover
    import email.message

    import requests
    from packaging.specifiers import SpecifierSet
    from packaging.tags import Tag

# configparser, email, hashlib, zipfile, packaging.tags/specifiers/requirements and requests are imported
# where they are used: importing this module stays cheap for commands that never touch the index.

__all__ = [
    "ACCEPT_JSON",
    "DEFAULT_TIMEOUT",
    "KNOWN_CPYTHON",
    "PLATFORMS",
    "PackageIndexError",
    "IndexFile",
    "MetadataUnavailable",
    "extra_requirements",
    "file_version",
    "index_url",
    "insecure_url",
    "make_session",
    "pip_config_files",
    "pip_config_index_url",
    "pip_default_index_url",
    "platform_buckets",
    "project_files",
    "project_url",
    "wheel_metadata",
    "wheel_support",
]

ACCEPT_JSON = "application/vnd.pypi.simple.v1+json"
# (connect, read) seconds, for every request this module makes.
DEFAULT_TIMEOUT: tuple[float, float] = (10.0, 60.0)

# The platforms the knowledge base tracks, in the order the records list them.
PLATFORMS: tuple[str, ...] = ("linux", "linux_aarch64", "windows", "macos_x86_64", "macos_arm64")

# CPython minors a wheel can be classified into. cp-tagged wheels name their minor; a py3/abi3 wheel is
# expanded over these (filtered by Requires-Python). 3.0-3.2 never had TensorFlow wheels and are left
# out. A wheel that matches none of these is reported by the caller, never silently dropped.
KNOWN_CPYTHON: tuple[str, ...] = ("2.7",) + tuple(f"3.{m}" for m in range(3, 15))


class PackageIndexError(RuntimeError):
    """The index could not be found, reached or understood (a one-line message)."""


class MetadataUnavailable(PackageIndexError):
    """Neither a PEP 658 metadata file nor a range-readable wheel was available."""


@record
class IndexFile:
    """One file of a project, as the PEP 691 JSON lists it (URL made absolute)."""

    filename: str
    url: str
    requires_python: str | None = None
    yanked: bool = False
    yanked_reason: str | None = None
    # PEP 658/714: the index serves ``url + ".metadata"``; the hashes of that file when given.
    core_metadata: bool = False
    core_metadata_hashes: Mapping[str, str] = field(default_factory=dict, hash=False, compare=False)
    hashes: Mapping[str, str] = field(default_factory=dict, hash=False, compare=False)
    size: int | None = None
    upload_time: str | None = None  # PEP 700 (simple API 1.1) "upload-time", ISO 8601, when the index gives it

    @property
    def is_wheel(self) -> bool:
        return self.filename.endswith(".whl")

    @classmethod
    def from_json(cls, entry: Mapping[str, Any], base_url: str) -> IndexFile:
        """Build from one entry of ``files`` in a PEP 691 project response."""
        yanked = entry.get("yanked", False)
        # PEP 714 renamed the key; indexes may send either (or both, with the same value).
        meta = entry.get("core-metadata", entry.get("data-dist-info-metadata", False))
        size = entry.get("size")
        return cls(
            filename=entry["filename"],
            url=urljoin(base_url, entry["url"]),
            requires_python=entry.get("requires-python") or None,
            yanked=bool(yanked),
            yanked_reason=yanked if isinstance(yanked, str) and yanked else None,
            core_metadata=bool(meta),
            core_metadata_hashes=dict(meta) if isinstance(meta, Mapping) else {},
            hashes=dict(entry.get("hashes") or {}),
            size=size if isinstance(size, int) else None,
            upload_time=entry.get("upload-time") if isinstance(entry.get("upload-time"), str) else None,
        )


# --------------------------------------------------------------------------- which index


def pip_default_index_url() -> str:
    """pip's built-in default index (read from pip itself; this project never writes the host)."""
    try:
        # lazy: optional: present only where that tool is installed
        from pip._internal.models.index import PyPI
    except Exception as exc:  # pip absent, or its internals moved
        raise PackageIndexError(
            "no package index configured and pip is not importable to supply its default: "
            "pass --index-url or set PIP_INDEX_URL"
        ) from exc
    return str(PyPI.simple_url)


def _expand(path: str, home: str) -> str:
    if path == "~" or path.startswith(("~/", "~\\")):
        return home + path[1:]
    return path


def pip_config_files(
    environ: Mapping[str, str] | None = None,
    *,
    platform: str | None = None,
    home: str | os.PathLike[str] | None = None,
    prefix: str | os.PathLike[str] | None = None,
) -> list[Path]:
    """pip's configuration files, lowest precedence first (files that do not exist are kept; the reader
    skips them). Mirrors ``pip._internal.configuration.get_configuration_files`` and
    ``Configuration.iter_config_files``."""
    env = os.environ if environ is None else environ
    plat = sys.platform if platform is None else platform
    home_s = str(home) if home is not None else os.path.expanduser("~")
    prefix_s = str(prefix) if prefix is not None else sys.prefix
    windows = plat.startswith("win")
    basename = "pip.ini" if windows else "pip.conf"
    join = (lambda *p: "\\".join(s.rstrip("\\/") for s in p)) if windows else os.path.join

    if windows:
        program_data = env.get("PROGRAMDATA") or env.get("ALLUSERSPROFILE") or "C:\\ProgramData"
        global_files = [join(program_data, "pip", basename)]
        appdata = env.get("APPDATA") or join(home_s, "AppData", "Roaming")
        user_files = [join(home_s, "pip", basename), join(appdata, "pip", basename)]
    elif plat == "darwin":
        global_files = [os.path.join("/Library/Application Support/pip", basename)]
        app_support = os.path.join(home_s, "Library", "Application Support", "pip")
        new_user_dir = app_support if os.path.isdir(app_support) else os.path.join(home_s, ".config", "pip")
        user_files = [os.path.join(home_s, ".pip", basename), os.path.join(new_user_dir, basename)]
    else:
        xdg_dirs = (env.get("XDG_CONFIG_DIRS") or "").strip() or "/etc/xdg"
        global_files = [
            os.path.join(_expand(d, home_s), "pip", basename) for d in xdg_dirs.split(os.pathsep) if d
        ] + [os.path.join("/etc", basename)]
        xdg_home = (env.get("XDG_CONFIG_HOME") or "").strip() or os.path.join(home_s, ".config")
        user_files = [
            os.path.join(home_s, ".pip", basename),
            os.path.join(_expand(xdg_home, home_s), "pip", basename),
        ]
    site_files = [os.path.join(prefix_s, basename) if not windows else join(prefix_s, basename)]

    env_file = env.get("PIP_CONFIG_FILE")
    if env_file is not None and env_file == os.devnull:
        return []
    load_user = not (env_file and os.path.exists(env_file))
    files = global_files + (user_files if load_user else []) + site_files
    if env_file:
        files.append(env_file)  # pip gives PIP_CONFIG_FILE precedence over every other file
    return [Path(f) for f in files]


def pip_config_index_url(files: Iterable[str | os.PathLike[str]]) -> str | None:
    """``index-url`` from pip config files given lowest precedence first: ``[install]`` beats
    ``[global]``; a later file beats an earlier one within a section; empty values are ignored."""
    # lazy: start-up (configparser, only this path)
    import configparser
    import locale

    found: dict[str, str] = {}
    encoding = locale.getpreferredencoding(False)  # what pip reads its config files with
    for f in files:
        path = Path(f)
        if not path.is_file():
            continue
        parser = configparser.RawConfigParser()
        try:
            parser.read(path, encoding=encoding)
        except (configparser.Error, UnicodeDecodeError) as exc:
            raise PackageIndexError(f"cannot read pip configuration file {path}: {exc}") from exc
        for section in ("global", "install"):
            if not parser.has_section(section):
                continue
            for key, value in parser.items(section):
                if key.lower().replace("_", "-") == "index-url" and value.strip():
                    found[section] = value.strip()
    return found.get("install") or found.get("global")


def insecure_url(url: str) -> bool:
    """Whether fetching `url` could be changed on the way: anything but https, a local file, or plain http to this
    machine itself (pip's own secure origins: localhost, 127.0.0.0/8, ::1; pip refuses other plain-http hosts
    unless told --trusted-host)."""
    # lazy: no start-up gain (already loaded by then); kept beside its use
    import ipaddress
    from urllib.parse import urlsplit

    try:
        parts = urlsplit(url)
        host = parts.hostname or ""
    except ValueError:
        return True
    scheme = parts.scheme.lower()
    if scheme in ("https", "file"):
        return False
    if scheme != "http":
        return True
    if host == "localhost":
        return False
    try:
        return not ipaddress.ip_address(host).is_loopback
    except ValueError:
        return True


def index_url(
    explicit: str | None = None,
    *,
    environ: Mapping[str, str] | None = None,
    config_files: Sequence[str | os.PathLike[str]] | None = None,
) -> str:
    """The simple-API base URL: ``explicit``, else ``PIP_INDEX_URL``, else pip's config files
    (``index-url`` in ``[install]`` or ``[global]``), else pip's built-in default.

    ``environ`` defaults to ``os.environ``; ``config_files`` (lowest precedence first) defaults to
    ``pip_config_files(environ)``."""
    if explicit and explicit.strip():
        return explicit.strip()
    env = os.environ if environ is None else environ
    from_env = (env.get("PIP_INDEX_URL") or "").strip()
    if from_env:
        return from_env
    files = pip_config_files(env) if config_files is None else config_files
    from_config = pip_config_index_url(files)
    if from_config:
        return from_config
    return pip_default_index_url()


# --------------------------------------------------------------------------- HTTP


def make_session(*, retries: int = 5, backoff_factor: float = 0.5,
                 deadline: float | None = None) -> requests.Session:
    """A ``requests.Session`` that retries connection errors and 429/5xx answers (honouring
    Retry-After) through urllib3's ``Retry`` on a mounted ``HTTPAdapter``. With a ``deadline`` (a
    ``time.monotonic()`` value) no retry starts, and no wait between retries lasts, past it."""
    # lazy: start-up (requests and urllib3, only for the network)
    import requests
    from requests.adapters import HTTPAdapter

    retry = _retry_class()(
        deadline=deadline,
        total=retries,
        connect=retries,
        read=retries,
        status=retries,
        backoff_factor=backoff_factor,
        status_forcelist=(429, 500, 502, 503, 504),
        allowed_methods=frozenset({"GET", "HEAD"}),
        respect_retry_after_header=True,
        raise_on_status=False,  # the final 5xx comes back as a response; raise_for_status reports it
    )
    session = requests.Session()
    adapter = HTTPAdapter(max_retries=retry, pool_maxsize=16)
    session.mount("https://", adapter)
    session.mount("http://", adapter)
    return session


@lru_cache(maxsize=1)
def _retry_class():
    """urllib3's Retry, stopped by a deadline (urllib3 copies a Retry for every attempt through ``new``)."""
    # lazy: start-up (requests and urllib3, only for the network)
    import time

    from urllib3.util.retry import Retry

    class DeadlineRetry(Retry):
        def __init__(self, *args, deadline: float | None = None, **kwargs):
            super().__init__(*args, **kwargs)
            self.deadline = deadline

        def new(self, **kwargs):
            kwargs.setdefault("deadline", self.deadline)
            return super().new(**kwargs)

        def _left(self) -> float:
            return float("inf") if self.deadline is None else self.deadline - time.monotonic()

        def is_exhausted(self) -> bool:
            return super().is_exhausted() or self._left() <= 0

        def sleep(self, response=None) -> None:
            after = self.get_retry_after(response) if self.respect_retry_after_header and response else None
            time.sleep(max(0.0, min(after or self.get_backoff_time(), self._left())))

    return DeadlineRetry


def request_timeout(deadline: float | None) -> tuple[float, float]:
    """The (connect, read) timeout of one request: the default, cut to what is left before `deadline`.
    Raises TimeoutError when nothing is left."""
    if deadline is None:
        return DEFAULT_TIMEOUT
    # lazy: no start-up gain (already loaded by then); kept beside its use
    import time

    left = deadline - time.monotonic()
    if left <= 0:
        raise TimeoutError("the deadline has passed")
    return (min(DEFAULT_TIMEOUT[0], left), min(DEFAULT_TIMEOUT[1], left))


def project_url(name: str, index: str) -> str:
    """``<index>/<normalized-name>/`` as PEP 503 defines it."""
    return index.rstrip("/") + "/" + canonicalize_name(name) + "/"


def _describe(exc: BaseException) -> str:
    return f"{type(exc).__name__}: {exc}"


def project_files(
    name: str,
    *,
    index: str | None = None,
    session: requests.Session | None = None,
    timeout: float | tuple[float, float] = DEFAULT_TIMEOUT,
) -> list[IndexFile]:
    """All files of project ``name`` from the index's PEP 691 JSON page, in the index's order."""
    # lazy: start-up (requests and urllib3, only for the network)
    import requests

    base = index_url(index)
    url = project_url(name, base)
    sess = session if session is not None else make_session()
    try:
        resp = sess.get(url, headers={"Accept": ACCEPT_JSON}, timeout=timeout)
        if resp.status_code == 404:
            raise PackageIndexError(f"project {canonicalize_name(name)!r} not found on the package index")
        resp.raise_for_status()
    except requests.RequestException as exc:
        raise PackageIndexError(f"cannot read /simple/{canonicalize_name(name)}/: {_describe(exc)}") from exc
    ctype = resp.headers.get("Content-Type", "").split(";")[0].strip().lower()
    if ctype != ACCEPT_JSON:
        raise PackageIndexError(
            f"the package index answered /simple/{canonicalize_name(name)}/ with {ctype or 'no content type'}, "
            f"not PEP 691 JSON ({ACCEPT_JSON})"
        )
    try:
        data = resp.json()
        api = str(data["meta"]["api-version"])
        entries = data["files"]
    except (ValueError, KeyError, TypeError) as exc:
        raise PackageIndexError(f"malformed PEP 691 JSON for /simple/{canonicalize_name(name)}/") from exc
    if api.split(".")[0] != "1":
        raise PackageIndexError(f"unsupported simple API version {api} (this client speaks 1.x)")
    page = resp.url or url
    return [IndexFile.from_json(e, page) for e in entries]


# --------------------------------------------------------------------------- metadata


def _parse_metadata(data: bytes) -> email.message.Message:
    # lazy: start-up (the email package, only to read wheel metadata)
    import email.parser
    import email.policy

    return email.parser.BytesParser(policy=email.policy.compat32).parsebytes(data)


def _check_hashes(data: bytes, hashes: Mapping[str, str], what: str) -> None:
    # lazy: start-up (hashlib, only this path)
    import hashlib

    for algo, expected in hashes.items():
        if algo not in hashlib.algorithms_guaranteed:
            continue
        got = hashlib.new(algo, data).hexdigest()
        if got != expected.lower():
            raise PackageIndexError(f"{algo} of {what} is {got}, the index says {expected}")
        return  # one verified hash is enough


class _HTTPRangeFile(io.RawIOBase):
    """A read-only, seekable view of a remote file that fetches byte ranges on demand (enough for
    ``zipfile`` to read the central directory and one member)."""

    MIN_FETCH = 64 * 1024

    def __init__(self, url: str, session: requests.Session, timeout: float | tuple[float, float]):
        super().__init__()
        self._url, self._session, self._timeout = url, session, timeout
        self._pos = 0
        self._spans: list[tuple[int, bytes]] = []
        self.requests = 0
        # A suffix range gives the tail (where the zip directory ends) and the total size at once.
        start, body, total = self._get(f"bytes=-{self.MIN_FETCH}")
        self._size = total
        self._spans.append((start, body))

    def _get(self, byte_range: str) -> tuple[int, bytes, int]:
        self.requests += 1
        resp = self._session.get(
            self._url, headers={"Range": byte_range, "Accept-Encoding": "identity"},
            timeout=self._timeout, stream=True,
        )
        try:
            if resp.status_code != 206:
                raise MetadataUnavailable(
                    f"the file server does not answer range requests (HTTP {resp.status_code})"
                )
            m = re.fullmatch(r"bytes (\d+)-(\d+)/(\d+)", resp.headers.get("Content-Range", "").strip())
            if not m:
                raise MetadataUnavailable("range answer without a usable Content-Range header")
            body = resp.content
        finally:
            resp.close()
        return int(m.group(1)), body, int(m.group(3))

    def readable(self) -> bool:
        return True

    def seekable(self) -> bool:
        return True

    def tell(self) -> int:
        return self._pos

    def seek(self, offset: int, whence: int = io.SEEK_SET) -> int:
        base = {io.SEEK_SET: 0, io.SEEK_CUR: self._pos, io.SEEK_END: self._size}[whence]
        self._pos = max(0, base + offset)
        return self._pos

    def readinto(self, buffer: Any) -> int:
        n = min(len(buffer), max(0, self._size - self._pos))
        if n == 0:
            return 0
        end = self._pos + n
        for start, body in self._spans:
            if start <= self._pos and end <= start + len(body):
                buffer[:n] = body[self._pos - start : end - start]
                self._pos = end
                return n
        fetch_end = min(self._size, max(end, self._pos + self.MIN_FETCH)) - 1
        start, body, _ = self._get(f"bytes={self._pos}-{fetch_end}")
        self._spans.append((start, body))
        buffer[:n] = body[self._pos - start : end - start]
        self._pos = end
        return n


def _metadata_from_wheel_ranges(
    file: IndexFile, session: requests.Session, timeout: float | tuple[float, float]
) -> bytes:
    # lazy: start-up (zipfile, only this path)
    import zipfile

    name, version, _, _ = parse_wheel_filename(file.filename)
    with _HTTPRangeFile(file.url, session, timeout) as raw:
        with zipfile.ZipFile(io.BufferedReader(raw, buffer_size=8192)) as zf:
            candidates = [
                n for n in zf.namelist()
                if n.count("/") == 1 and n.endswith(".dist-info/METADATA")
                and canonicalize_name(n.split("-")[0]) == name
            ]
            if len(candidates) != 1:
                raise MetadataUnavailable(f"{file.filename}: expected one *.dist-info/METADATA, found {candidates}")
            return zf.read(candidates[0])


def wheel_metadata(
    file: IndexFile,
    *,
    session: requests.Session | None = None,
    timeout: float | tuple[float, float] = DEFAULT_TIMEOUT,
    range_fallback: bool = True,
) -> email.message.Message:
    """The core metadata of a wheel: the PEP 658 ``.metadata`` file when the index offers it (verified
    against the hash the index gives), else (``range_fallback``) the wheel's ``*.dist-info/METADATA``
    read through HTTP range requests."""
    # lazy: start-up (requests and urllib3, only for the network)
    import zipfile

    import requests

    if not file.is_wheel:
        raise MetadataUnavailable(f"{file.filename} is not a wheel")
    sess = session if session is not None else make_session()
    try:
        if file.core_metadata:
            resp = sess.get(file.url + ".metadata", timeout=timeout)
            resp.raise_for_status()
            _check_hashes(resp.content, file.core_metadata_hashes, file.filename + ".metadata")
            return _parse_metadata(resp.content)
        if not range_fallback:
            raise MetadataUnavailable(f"the package index offers no metadata file for {file.filename}")
        return _parse_metadata(_metadata_from_wheel_ranges(file, sess, timeout))
    except requests.RequestException as exc:
        raise PackageIndexError(f"cannot read the metadata of {file.filename}: {_describe(exc)}") from exc
    except (zipfile.BadZipFile, KeyError) as exc:
        raise MetadataUnavailable(f"{file.filename}: {_describe(exc)}") from exc


# Marker environments for the tracked platforms (what pip on that machine would evaluate, PEP 508).
MARKER_ENVIRONMENTS: dict[str, dict[str, str]] = {
    "linux": {"platform_system": "Linux", "platform_machine": "x86_64", "sys_platform": "linux", "os_name": "posix"},
    "linux_aarch64": {"platform_system": "Linux", "platform_machine": "aarch64", "sys_platform": "linux",
                      "os_name": "posix"},
    "windows": {"platform_system": "Windows", "platform_machine": "AMD64", "sys_platform": "win32", "os_name": "nt"},
    "macos_x86_64": {"platform_system": "Darwin", "platform_machine": "x86_64", "sys_platform": "darwin",
                     "os_name": "posix"},
    "macos_arm64": {"platform_system": "Darwin", "platform_machine": "arm64", "sys_platform": "darwin",
                    "os_name": "posix"},
}


def marker_environment(platform: str, python: str, extra: str = "") -> dict[str, str]:
    return dict(MARKER_ENVIRONMENTS[platform], python_version=python, python_full_version=f"{python}.0",
                implementation_name="cpython", platform_python_implementation="CPython", extra=extra)


def extra_requirements(metadata: email.message.Message, extra: str, platform: str = "linux",
                       python: str = "3.11") -> list[str]:
    """What ``pip install name[extra]`` adds on a platform and Python: the ``Requires-Dist`` entries whose marker
    holds with the extra and not without it (packaging.markers evaluates them), without their markers, in
    metadata order, deduplicated (``nvidia-cudnn-cu12==8.9.4.25``)."""
    # lazy: start-up (packaging.requirements ~8 ms)
    from packaging.requirements import InvalidRequirement, Requirement

    with_extra = marker_environment(platform, python, canonicalize_name(extra))
    without = marker_environment(platform, python)
    out: list[str] = []
    for raw in metadata.get_all("Requires-Dist") or []:
        try:
            req = Requirement(str(raw))
        except InvalidRequirement:
            continue
        if req.marker is None or not req.marker.evaluate(with_extra) or req.marker.evaluate(without):
            continue
        req.marker = None
        if str(req) not in out:
            out.append(str(req))
    return out


# --------------------------------------------------------------------------- wheel classification


def platform_buckets(platform_tag: str) -> frozenset[str]:
    """Which of ``PLATFORMS`` a wheel platform tag (``Tag.platform``) installs on.

    manylinux (every policy) x86_64 -> linux, aarch64 -> linux_aarch64; win_amd64 -> windows; a macOS tag
    -> the architectures whose pip accepts it (packaging.tags.mac_platforms); ``any`` -> all."""
    if platform_tag == "any":
        return frozenset(PLATFORMS)
    if platform_tag == "win_amd64":
        return frozenset({"windows"})
    if platform_tag.startswith("manylinux"):
        if platform_tag.endswith("_x86_64"):
            return frozenset({"linux"})
        if platform_tag.endswith("_aarch64"):
            return frozenset({"linux_aarch64"})
        return frozenset()
    if platform_tag.startswith("macosx_"):
        return frozenset(p for p, tags in _mac_platform_tags().items() if platform_tag in tags)
    return frozenset()


@lru_cache(maxsize=1)
def _mac_platform_tags() -> dict[str, frozenset[str]]:
    """Every macOS platform tag pip accepts on each CPU, from packaging.tags (macOS 10.0 ... 30)."""
    # lazy: no start-up gain (already loaded by then); kept beside its use
    from packaging.tags import mac_platforms

    return {"macos_x86_64": frozenset(mac_platforms((30, 0), "x86_64")),
            "macos_arm64": frozenset(mac_platforms((30, 0), "arm64"))}


def _abis(version: str) -> list[str]:
    major, minor = (int(p) for p in version.split("."))
    nodot = f"{major}{minor}"
    if (major, minor) < (3, 0):
        return [f"cp{nodot}mu", f"cp{nodot}m"]  # wide (Linux) and narrow (macOS, Windows) unicode
    if (major, minor) < (3, 8):
        return [f"cp{nodot}m"]  # pymalloc builds, what every official CPython < 3.8 is
    return [f"cp{nodot}"]  # free-threaded (cp313t) builds are not counted as the plain minor


@lru_cache(maxsize=None)
def _supported_tags(version: str, platform_tag: str) -> frozenset[Tag]:
    # lazy: no start-up gain (already loaded by then); kept beside its use
    from packaging.tags import compatible_tags, cpython_tags

    major, minor = (int(p) for p in version.split("."))
    pv = (major, minor)
    return frozenset(cpython_tags(pv, abis=_abis(version), platforms=[platform_tag])) | frozenset(
        compatible_tags(pv, interpreter=f"cp{major}{minor}", platforms=[platform_tag])
    )


def _allows(spec: SpecifierSet | None, version: str) -> bool:
    if spec is None:
        return True
    # A minor is allowed when some patch of it satisfies Requires-Python (">=3.7.1" allows 3.7).
    return any(spec.contains(f"{version}.{patch}", prereleases=True) for patch in range(0, 40))


def wheel_support(
    filename: str,
    requires_python: str | None = None,
    *,
    pythons: Sequence[str] = KNOWN_CPYTHON,
) -> dict[str, tuple[str, ...]]:
    """``{platform: (python, ...)}`` for one wheel: the CPython versions (from ``pythons``) on which pip
    would install it on each of ``PLATFORMS``, honouring the file's Requires-Python. Platforms the wheel
    does not cover are absent. Raises ``packaging.utils.InvalidWheelFilename`` for a bad name."""
    # lazy: start-up (packaging.specifiers, only this path)
    from packaging.specifiers import InvalidSpecifier, SpecifierSet

    _, _, _, tags = parse_wheel_filename(filename)
    try:
        spec = SpecifierSet(requires_python) if requires_python else None
    except InvalidSpecifier:
        spec = None  # like pip: an unparsable Requires-Python does not exclude the file
    found: dict[str, set[str]] = {}
    for tag in tags:
        buckets = platform_buckets(tag.platform)
        if not buckets:
            continue
        for version in pythons:
            if tag in _supported_tags(version, tag.platform) and _allows(spec, version):
                for bucket in buckets:
                    found.setdefault(bucket, set()).add(version)
        for bucket in buckets:
            found.setdefault(bucket, set())
    return {
        b: tuple(sorted(found[b], key=Version)) for b in PLATFORMS if b in found
    }


def file_version(filename: str) -> tuple[str, Version] | None:
    """``(normalized project name, version)`` of a wheel or sdist filename; None when it is neither."""
    try:
        if filename.endswith(".whl"):
            name, version, _, _ = parse_wheel_filename(filename)
        else:
            name, version = parse_sdist_filename(filename)
    except (InvalidWheelFilename, InvalidSdistFilename):
        return None
    return str(name), version
