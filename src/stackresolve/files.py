"""Writing files so that nothing is ever left half-written."""

from __future__ import annotations

import os
import tempfile
from pathlib import Path


def atomic_write(path: str | os.PathLike, text: str, *, executable: bool = False) -> None:
    """Write `text` to a temporary file beside `path`, flush it to disk, then rename it over `path`."""
    atomic_write_bytes(path, text.encode("utf-8"), executable=executable)


def atomic_write_bytes(path: str | os.PathLike, data: bytes, *, executable: bool = False) -> None:
    target = Path(path)
    fd, tmp = tempfile.mkstemp(prefix=f".{target.name}.", suffix=".tmp", dir=target.parent or ".")
    try:
        with os.fdopen(fd, "wb") as handle:
            handle.write(data)
            handle.flush()
            os.fsync(handle.fileno())
        os.chmod(tmp, 0o755 if executable else 0o644)
        os.replace(tmp, target)
    except BaseException:
        try:
            os.unlink(tmp)
        except OSError:
            pass
        raise
