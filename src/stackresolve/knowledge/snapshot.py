"""The knowledge snapshot: the validated knowledge base, ready to use, cached in the user's cache folder so that a
start loads it in milliseconds instead of parsing and validating the TOML again.

A snapshot cannot lie: its name and its header carry the package version, the digest of the data files it was
built from and the Python version; its payload carries its own SHA-256; a file that is missing, foreign,
truncated, edited or from another version is ignored and rebuilt, never trusted and never an error. It is
written atomically, and only under an absolute cache folder:
- STACKRESOLVE_CACHE_DIR (absolute paths only), else the platform's user cache folder (platformdirs; on Linux
  $XDG_CACHE_HOME when it is absolute, as the XDG spec says, else ~/.cache);
- STACKRESOLVE_NO_CACHE=1 (or `stackresolve --no-cache ...`) turns it off.
"""

from __future__ import annotations

import gc
import hashlib
import json
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


def key(data_digest: str) -> dict:
    return {"format": FORMAT, "package": __version__, "data": data_digest,
            "python": f"{sys.version_info[0]}.{sys.version_info[1]}"}


def path_for(folder: Path, data_digest: str) -> Path:
    name = hashlib.sha256(json.dumps(key(data_digest), sort_keys=True).encode()).hexdigest()[:32]
    return folder / f"knowledge-{name}.snapshot"


def load(data_digest: str, expected_type: type, env=os.environ):
    """The cached knowledge base for these data files, or None (absent, foreign, damaged, or caching off)."""
    folder = cache_dir(env)
    if folder is None:
        return None
    from stackresolve.inputs import NotARegularFile, InputTooLarge, read_regular_bytes

    try:
        raw = read_regular_bytes(path_for(folder, data_digest), MAX_BYTES)
    except (OSError, NotARegularFile, InputTooLarge):
        return None
    if not raw.startswith(MAGIC):
        return None
    header_end = raw.find(b"\n", len(MAGIC))
    try:
        header = json.loads(raw[len(MAGIC):header_end])
    except ValueError:
        return None
    payload = raw[header_end + 1:]
    if not isinstance(header, dict) or {k: header.get(k) for k in key(data_digest)} != key(data_digest) \
            or header.get("payload_sha256") != hashlib.sha256(payload).hexdigest():
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


def store(data_digest: str, value, env=os.environ) -> None:
    """Write the snapshot atomically; failures (a read-only home, a full disk) only cost the next start time."""
    folder = cache_dir(env)
    if folder is None:
        return
    from stackresolve.files import atomic_write_bytes

    payload = pickle.dumps(value, protocol=pickle.HIGHEST_PROTOCOL)
    header = dict(key(data_digest), payload_sha256=hashlib.sha256(payload).hexdigest())
    try:
        folder.mkdir(parents=True, exist_ok=True)
        atomic_write_bytes(path_for(folder, data_digest), MAGIC + json.dumps(header).encode() + b"\n" + payload)
    except OSError:
        pass
