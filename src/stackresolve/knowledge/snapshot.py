"""The knowledge snapshot: the validated knowledge base, ready to use, cached in the user's cache folder so that a
start loads it in milliseconds instead of parsing and validating the TOML again.

A snapshot is data and loading it runs nothing (issue 23): the records are flattened into plain values (str, int,
tuples, dicts, frozensets) written with `marshal`, and rebuilt by the loader from an allow-list of the knowledge
base's own record classes; no name in the file is ever looked up or called. (A pickle would call whatever its
payload names.) On POSIX the cache folder and the file must also belong to the user (or root) and be writable by
no one else, as ssh does with ~/.ssh: a folder someone else can write is not used at all (see trusted_cache_dir).

A snapshot cannot lie: its name and its header carry the package version, the code that defines its records and
the data files it was built from (each file's size and modification time, as a .pyc names its source: reading and
hashing 1.3 MB of TOML on every start cost 8-10 ms, and loading OpenSSL's hashlib 5-6 ms more), and the Python
version; its payload carries its own checksum; a file that is missing, foreign, truncated, edited or from another
version is ignored and rebuilt, never trusted and never an error. (A checksum, not a cryptographic hash: whoever
can write the file can write its header too; the trust rules below and marshal's inert data are the defence.) It is
written atomically, and only under an absolute cache folder:
- STACKRESOLVE_CACHE_DIR (absolute paths only), else the platform's user cache folder (platformdirs; on Linux
  $XDG_CACHE_HOME when it is absolute, as the XDG spec says, else ~/.cache);
- STACKRESOLVE_NO_CACHE=1 (or `stackresolve --no-cache ...`) turns it off.
"""

from __future__ import annotations

import gc
import marshal
import os
import stat
import sys
import zlib
from dataclasses import fields, is_dataclass
from pathlib import Path

from stackresolve import __version__

FORMAT = 3  # 1: pickle; 2: marshal of plain data, records rebuilt from an allow-list; 3: keyed by file stats
MAGIC = b"stackresolve knowledge snapshot\n"
MAX_BYTES = 64 * 1024 * 1024


def cache_dir(env=os.environ) -> Path | None:
    """Where snapshots live, or None when caching is off or no absolute folder is known."""
    if (env.get("STACKRESOLVE_NO_CACHE") or "").strip() not in ("", "0"):
        return None
    explicit = (env.get("STACKRESOLVE_CACHE_DIR") or "").strip()
    if explicit:
        return Path(explicit) if os.path.isabs(explicit) else None
    if sys.platform.startswith("linux") or sys.platform.startswith("freebsd"):
        xdg = (env.get("XDG_CACHE_HOME") or "").strip()
        base = Path(xdg) if os.path.isabs(xdg) else Path.home() / ".cache"
        return base / "stackresolve"
    # lazy: start-up (platformdirs, only where the cache is read)
    import platformdirs  # the per-OS conventions (Windows LOCALAPPDATA, macOS ~/Library/Caches)

    folder = Path(platformdirs.user_cache_dir("stackresolve", appauthor=False))
    return folder if folder.is_absolute() else None


def trusted(info: os.stat_result) -> bool:
    """A cache entry this user may rely on: owned by the user or root, writable by no one else (POSIX)."""
    getuid = getattr(os, "getuid", None)
    if getuid is None:  # Windows: no owner bits; the snapshot format alone keeps a foreign file harmless
        return True
    return info.st_uid in (getuid(), 0) and not info.st_mode & (stat.S_IWGRP | stat.S_IWOTH)


def trusted_cache_dir(env=os.environ) -> Path | None:
    """The cache folder when it is safe to read from it: it exists, is a real folder (not a link) and is
    `trusted`. None otherwise, and then nothing in it is read."""
    folder = cache_dir(env)
    if folder is None:
        return None
    try:
        info = os.lstat(folder)
    except OSError:
        return None
    return folder if stat.S_ISDIR(info.st_mode) and trusted(info) else None


def untrusted_reason(path: Path, env=os.environ) -> str:
    """Why a file in the cache folder is not used ("" when it is trusted or absent)."""
    folder = cache_dir(env)
    if folder is None:
        return ""
    chain = [path, *(p for p in path.parents if p == folder or folder in p.parents)]  # the file up to the folder
    for candidate in reversed(chain):
        try:
            info = os.lstat(candidate)
        except OSError:
            return ""
        if stat.S_ISLNK(info.st_mode) and candidate != path:
            return f"{candidate} is a symbolic link"
        if not trusted(info):
            return f"{candidate} is owned or writable by another user"
    return ""


# The modules that define the snapshot's classes: a snapshot is only read by the very code that wrote it (the
# package version alone does not change while the code is being developed).
RECORD_MODULES = ("stackresolve.knowledge.base", "stackresolve.knowledge.records", "stackresolve.knowledge.snapshot")
INSTALL_RECORD_MODULES = ("stackresolve.knowledge.install", "stackresolve.knowledge.channels",
                          "stackresolve.knowledge.install_facts")
KIND_MODULES = {"install": INSTALL_RECORD_MODULES, "frameworks": ("stackresolve.knowledge.frameworks",),
                "accelerators": ("stackresolve.knowledge.accelerators",),
                "errors": ("stackresolve.knowledge.errors", "stackresolve.knowledge.patterns")}


def checksum(data: bytes) -> str:
    """Two independent 32-bit checksums (CRC-32 and Adler-32, zlib's, in C) as 16 hex digits."""
    return f"{zlib.crc32(data):08x}{zlib.adler32(data):08x}"


def files_key(paths) -> str:
    """The files as they are on disk, the way a .pyc names its source: each one's size and modification time (in
    nanoseconds); a file that cannot be read counts as missing. Any write changes it; nothing is read or hashed."""
    parts = []
    for path in paths:
        try:
            info = os.stat(path)
        except OSError:
            parts.append(f"{path}:-")
        else:
            parts.append(f"{path}:{info.st_size}:{info.st_mtime_ns}")
    return checksum("\n".join(parts).encode("utf-8", "surrogateescape"))


def code_key(kind: str = "core") -> str:
    names = RECORD_MODULES + KIND_MODULES.get(kind, ())
    return files_key((sys.modules.get(name) or __import__(name, fromlist=["_"])).__file__ for name in names)


def key(data_key: str, kind: str = "core") -> dict:
    return {"format": FORMAT, "kind": kind, "package": __version__, "code": code_key(kind), "data": data_key,
            "python": f"{sys.version_info[0]}.{sys.version_info[1]}"}


def header_line(fields: dict) -> bytes:
    """The header as one line of `name=value` pairs (no JSON: a text plan does not import it)."""
    return " ".join(f"{k}={fields[k]}" for k in sorted(fields)).encode("ascii")


def path_for(folder: Path, fields: dict) -> Path:
    """The file of the snapshot with this key (two keys that share a name only cost a rebuild: the header is
    compared whole)."""
    return folder / f"knowledge-{fields['kind']}-{checksum(header_line(fields))}.snapshot"


def load(data_key: str, expected_type: type, env=os.environ, kind: str = "core"):
    """The cached knowledge base for these data files, or None (absent, foreign, damaged, or caching off)."""
    folder = trusted_cache_dir(env)
    if folder is None:
        return None
    # lazy: start-up (only this path needs files.read)
    from stackresolve.files.read import NotARegularFile, InputTooLarge, read_regular_bytes

    fields = key(data_key, kind)
    path = path_for(folder, fields)
    try:
        if not trusted(os.lstat(path)):
            return None
        raw = read_regular_bytes(path, MAX_BYTES)
    except (OSError, NotARegularFile, InputTooLarge):
        return None
    if not raw.startswith(MAGIC):
        return None
    header_end = raw.find(b"\n", len(MAGIC))
    payload = raw[header_end + 1:]
    expected = dict(fields, payload=checksum(payload))
    if header_end < 0 or raw[len(MAGIC):header_end] != header_line(expected):
        return None
    enabled = gc.isenabled()
    gc.disable()  # a few hundred thousand small objects: no collection passes while they are created
    try:
        value = _Codec(kind).decode(_plain_values(payload))
    except Exception:  # a payload that does not decode into records is a damaged snapshot, whatever the exception
        return None
    finally:
        if enabled:
            gc.enable()
    return value if isinstance(value, expected_type) else None


def store(data_key: str, value, env=os.environ, kind: str = "core") -> None:
    """Write the snapshot atomically; failures (a read-only home, a full disk) only cost the next start time."""
    folder = cache_dir(env)
    if folder is None:
        return
    # lazy: start-up (only this path needs files.write)
    from stackresolve.files.write import atomic_write_bytes

    try:
        payload = marshal.dumps(_Codec(kind).encode(value)[0])
    except (TypeError, ValueError):  # a record class outside the allow-list: no snapshot (test_snapshot notices)
        return
    fields = key(data_key, kind)
    header = dict(fields, payload=checksum(payload))
    try:
        folder.mkdir(mode=0o700, parents=True, exist_ok=True)
        if trusted_cache_dir(env) is None:  # not writing where someone else could have put or could edit a file
            return
        atomic_write_bytes(path_for(folder, fields), MAGIC + header_line(header) + b"\n" + payload,
                           mode=0o600)
    except OSError:
        pass


def _is_ref(encoded) -> bool:
    return type(encoded) is list and encoded[0] == REF


def _plain_values(payload: bytes):
    if sys.version_info >= (3, 13):
        return marshal.loads(payload, allow_code=False)  # not even an inert code object
    return marshal.loads(payload)


# Encoded form: a value that is not a list is plain data, used as it is (it holds no record and no list). A list
# is tagged by its first item: a class number >= 0 is a record [n, values, i, j, ...] whose values at the indexes
# i, j, ... are themselves encoded (the others are plain); REF is [REF, k], the k-th record already rebuilt (a
# record met twice stays one object); TUPLE, LIST and DICT are containers holding records; REFS_TUPLE, REFS_LIST
# ([tag, k, ...]) and REFS_DICT ([tag, keys, k, ...]) hold only records already rebuilt (the look-up tables).
TUPLE, LIST, DICT, REF, REFS_TUPLE, REFS_LIST, REFS_DICT = -1, -2, -3, -4, -5, -6, -7
PLAIN = (str, int, float, bool, type(None), bytes, frozenset)


class _Codec:
    """Flattens a knowledge-base part into plain values, and rebuilds it from them, using only the record
    classes defined in the modules whose code the snapshot's key covers. Rebuilding calls no constructor: each
    record gets its stored fields (its look-up tables included), and the fields marked
    `metadata={"snapshot": False}` (memos, loaders) their defaults."""

    def __init__(self, kind: str):
        self.classes: list[type] = []
        for name in RECORD_MODULES + KIND_MODULES.get(kind, ()):
            module = sys.modules.get(name) or __import__(name, fromlist=["_"])
            self.classes += [value for _, value in sorted(vars(module).items())
                             if isinstance(value, type) and is_dataclass(value) and value.__module__ == name]
        self.numbers = {cls: number for number, cls in enumerate(self.classes)}
        self.stored: dict[type, tuple[str, ...]] = {}
        self.defaults: dict[type, tuple[tuple[str, object, object], ...]] = {}
        for cls in self.classes:
            kept = [f for f in fields(cls) if f.metadata.get("snapshot", True)]
            left = [f for f in fields(cls) if not f.metadata.get("snapshot", True)]
            self.stored[cls] = tuple(f.name for f in kept)
            self.defaults[cls] = tuple((f.name, f.default, f.default_factory) for f in left)
        self.records: list = []  # rebuilt so far, for REF
        self.seen: dict[int, int] = {}  # id(record) -> its number, while encoding

    def encode(self, value) -> tuple[object, bool]:
        """(encoded value, whether it had to be tagged)."""
        kind = type(value)
        if kind in PLAIN:
            return value, False
        if kind is tuple or kind is list:
            items = [self.encode(item) for item in value]
            if kind is tuple and not any(tagged for _, tagged in items):
                return value, False
            if items and all(_is_ref(item) for item, _ in items):
                return [REFS_TUPLE if kind is tuple else REFS_LIST, *(item[1] for item, _ in items)], True
            return [TUPLE if kind is tuple else LIST, *(item for item, _ in items)], True
        if kind is dict:
            pairs = [(self.encode(k), self.encode(v)) for k, v in value.items()]
            if not any(k[1] or v[1] for k, v in pairs):
                return value, False
            if not any(k[1] for k, _ in pairs) and all(_is_ref(v[0]) for _, v in pairs):
                return [REFS_DICT, tuple(k[0] for k, _ in pairs), *(v[0][1] for _, v in pairs)], True
            return [DICT, *(part for k, v in pairs for part in (k[0], v[0]))], True
        number = self.numbers.get(kind)
        if number is None:
            raise TypeError(f"the knowledge snapshot cannot hold a {kind.__name__}")
        if id(value) in self.seen:
            return [REF, self.seen[id(value)]], True
        self.seen[id(value)] = len(self.seen)
        self.records.append(value)  # keeps it alive, so that its id is not reused while encoding
        values = [self.encode(getattr(value, name)) for name in self.stored[kind]]
        return [number, tuple(v for v, _ in values), *(i for i, (_, tagged) in enumerate(values) if tagged)], True

    def decode(self, value):
        if type(value) is not list:
            return value
        tag = value[0]
        if tag >= 0:
            cls = self.classes[tag]
            names = self.stored[cls]
            values = value[1]
            if type(values) is not tuple or len(values) != len(names):
                raise ValueError("a record of another shape")
            record = object.__new__(cls)
            self.records.append(record)
            if len(value) > 2:
                values = list(values)
                for index in value[2:]:
                    values[index] = self.decode(values[index])
            state = record.__dict__
            state.update(zip(names, values))
            for name, default, factory in self.defaults[cls]:
                state[name] = factory() if callable(factory) else default
            return record
        if tag == REF:
            return self.records[value[1]]
        if tag == REFS_TUPLE:
            return tuple(map(self.records.__getitem__, value[1:]))
        if tag == REFS_LIST:
            return list(map(self.records.__getitem__, value[1:]))
        if tag == REFS_DICT:
            return dict(zip(value[1], map(self.records.__getitem__, value[2:])))
        items = map(self.decode, value[1:])
        if tag == TUPLE:
            return tuple(items)
        if tag == LIST:
            return list(items)
        if tag == DICT:
            return dict(zip(items, items))
        raise ValueError(f"unknown tag {tag}")
