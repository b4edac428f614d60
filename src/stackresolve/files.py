"""Writing output so that nothing is ever left half-written, and nothing the user did not name is replaced.

`write_output(path, data)` is how `-o` writes:
- a regular file, or a path that does not exist yet: written to a temporary file beside it, flushed to disk and
  renamed over it (atomic), keeping the mode of the file it replaces (a new file gets 0644, or 0755 for an
  executable script, less the umask);
- a symlink: followed, and its target is what gets replaced (the link stays a link);
- anything else (a device such as /dev/null, a FIFO, /dev/stdout, a terminal): written straight into it, since
  renaming a file over it would replace the device node or break the pipe;
- a directory: refused; a file this user may not write (a read-only file, another user's file in a shared folder):
  refused, as `>` would refuse it, though the folder would allow the rename.
Write errors (a full disk, a closed pipe, no permission) are OSError for the caller to turn into one line.
"""

from __future__ import annotations

import os
import stat
import tempfile
from pathlib import Path


def atomic_write(path: str | os.PathLike, text: str, *, executable: bool = False) -> None:
    atomic_write_bytes(path, text.encode("utf-8"), executable=executable)


def atomic_write_bytes(path: str | os.PathLike, data: bytes, *, executable: bool = False,
                       mode: int | None = None, owner: tuple[int, int] | None = None) -> None:
    """Write `data` to a temporary file beside `path`, flush it to disk, then rename it over `path` (with the
    owner and group of the file it replaces where this user may give them, as `>` would leave them)."""
    target = Path(path)
    fd, tmp = tempfile.mkstemp(prefix=f".{target.name}.", suffix=".tmp", dir=target.parent or ".")
    try:
        with os.fdopen(fd, "wb") as handle:
            handle.write(data)
            handle.flush()
            os.fsync(handle.fileno())
        if owner is not None and hasattr(os, "chown"):
            try:
                os.chown(tmp, *owner)
            except OSError:  # not root: the file becomes this user's, as a new file would
                pass
        os.chmod(tmp, mode if mode is not None else _new_file_mode(executable))
        os.replace(tmp, target)
    except BaseException:
        try:
            os.unlink(tmp)
        except OSError:
            pass
        raise


def write_output(path: str | os.PathLike, data: bytes, *, executable: bool = False) -> None:
    """Write `data` where the user pointed `-o` (see the module docstring)."""
    try:
        info = os.stat(path)  # follows symlinks: what the name really is
    except FileNotFoundError:
        info = None
    if info is not None and stat.S_ISDIR(info.st_mode):
        raise IsADirectoryError(21, "is a directory", str(path))
    if info is not None and not stat.S_ISREG(info.st_mode):
        with open(path, "wb") as handle:  # a device, FIFO or terminal: straight in, nothing renamed over it
            handle.write(data)
            handle.flush()
        return
    target = os.path.realpath(path)  # a symlink's target is replaced, not the link
    keep = stat.S_IMODE(info.st_mode) if info is not None else None
    if info is not None:
        # The rename needs only the folder's permission; the file's own is what `>` obeys (a read-only file, another
        # user's file in a shared folder). Opening it for writing, without truncating it, asks that very question.
        os.close(os.open(target, os.O_WRONLY | getattr(os, "O_NONBLOCK", 0) | getattr(os, "O_CLOEXEC", 0)))
    atomic_write_bytes(target, data, executable=executable, mode=keep,
                       owner=(info.st_uid, info.st_gid) if info is not None else None)


def _new_file_mode(executable: bool) -> int:
    umask = os.umask(0)
    os.umask(umask)
    return (0o755 if executable else 0o644) & ~umask
