"""The knowledge snapshot: the validated knowledge base, ready to use, cached in the user's cache folder so that a
start loads it in milliseconds instead of parsing and validating the TOML again.

A snapshot cannot lie: its name and its header carry the package version, the digest of the code that defines
its records, the digest of the data files it was built from and the Python version; its payload carries its own SHA-256; a file that is missing, foreign,
truncated, edited or from another version is ignored and rebuilt, never trusted and never an error. It is
written atomically, and only under an absolute cache folder:
- STACKRESOLVE_CACHE_DIR (absolute paths only), else the platform's user cache folder (platformdirs; on Linux
  $XDG_CACHE_HOME when it is absolute, as the XDG spec says, else ~/.cache);
- STACKRESOLVE_NO_CACHE=1 (or `stackresolve --no-cache ...`) turns it off.
"""

from __future__ import annotations

import gc
import hashlib
import os
import pickle
import sys
from pathlib import Path

from stackresolve import __version__

FORMAT = 1
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
    import platformdirs  # the per-OS conventions (Windows LOCALAPPDATA, macOS ~/Library/Caches)

    folder = Path(platformdirs.user_cache_dir("stackresolve", appauthor=False))
    return folder if folder.is_absolute() else None


# The modules that define the snapshot's classes: a snapshot is only read by the very code that wrote it (the
# package version alone does not change while the code is being developed).
RECORD_MODULES = ("stackresolve.knowledge.base", "stackresolve.knowledge.model", "stackresolve.knowledge.snapshot")
INSTALL_RECORD_MODULES = ("stackresolve.knowledge.install", "stackresolve.knowledge.channels",
                          "stackresolve.knowledge.install_facts")
KIND_MODULES = {"install": INSTALL_RECORD_MODULES, "frameworks": ("stackresolve.knowledge.frameworks",)}


def code_digest(kind: str = "core") -> str:
    digest = hashlib.sha256()
    for name in RECORD_MODULES + KIND_MODULES.get(kind, ()):
        module = sys.modules.get(name) or __import__(name, fromlist=["_"])
        with open(module.__file__, "rb") as handle:
            digest.update(handle.read())
    return digest.hexdigest()[:16]


def key(data_digest: str, kind: str = "core") -> dict:
    return {"format": FORMAT, "kind": kind, "package": __version__, "code": code_digest(kind), "data": data_digest,
            "python": f"{sys.version_info[0]}.{sys.version_info[1]}"}


def header_line(fields: dict) -> bytes:
    """The header as one line of `name=value` pairs (no JSON: a text plan does not import it)."""
    return " ".join(f"{k}={fields[k]}" for k in sorted(fields)).encode("ascii")


def path_for(folder: Path, data_digest: str, kind: str = "core") -> Path:
    name = hashlib.sha256(header_line(key(data_digest, kind))).hexdigest()[:32]
    return folder / f"knowledge-{kind}-{name}.snapshot"


def load(data_digest: str, expected_type: type, env=os.environ, kind: str = "core"):
    """The cached knowledge base for these data files, or None (absent, foreign, damaged, or caching off)."""
    folder = cache_dir(env)
    if folder is None:
        return None
    from stackresolve.inputs import NotARegularFile, InputTooLarge, read_regular_bytes

    try:
        raw = read_regular_bytes(path_for(folder, data_digest, kind), MAX_BYTES)
    except (OSError, NotARegularFile, InputTooLarge):
        return None
    if not raw.startswith(MAGIC):
        return None
    header_end = raw.find(b"\n", len(MAGIC))
    payload = raw[header_end + 1:]
    expected = dict(key(data_digest, kind), payload_sha256=hashlib.sha256(payload).hexdigest())
    if header_end < 0 or raw[len(MAGIC):header_end] != header_line(expected):
        return None
    enabled = gc.isenabled()
    gc.disable()  # a few hundred thousand small objects: no collection passes while they are created
    try:
        value = pickle.loads(payload)
    except Exception:  # a payload that does not unpickle is a damaged snapshot, whatever the exception
        return None
    finally:
        if enabled:
            gc.enable()
    return value if isinstance(value, expected_type) else None


def store(data_digest: str, value, env=os.environ, kind: str = "core") -> None:
    """Write the snapshot atomically; failures (a read-only home, a full disk) only cost the next start time."""
    folder = cache_dir(env)
    if folder is None:
        return
    from stackresolve.files import atomic_write_bytes

    payload = pickle.dumps(value, protocol=pickle.HIGHEST_PROTOCOL)
    header = dict(key(data_digest, kind), payload_sha256=hashlib.sha256(payload).hexdigest())
    try:
        folder.mkdir(parents=True, exist_ok=True)
        atomic_write_bytes(path_for(folder, data_digest, kind), MAGIC + header_line(header) + b"\n" + payload)
    except OSError:
        pass
