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

`write_into_folder(folder, files)` is how `-o DIR` writes several files: the user named the folder, not what is in
it, so nothing inside is followed. Each file is made as a new temporary file in the folder and renamed over its
name, both relative to the folder's own descriptor and without following a link (a rename replaces a link, never
its target); an entry that is already there as a link or as anything but a regular file is refused before any file
is written (RefusedEntry).
"""

from __future__ import annotations

import os
import secrets
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


class RefusedEntry(OSError):
    """An entry of the output folder that -o DIR will not replace: a link, a folder, a device, a FIFO."""


def write_into_folder(folder: str | os.PathLike, files: dict[str, bytes], executable=lambda name: False) -> None:
    """Create or replace each of `files` (plain names, no '/') inside `folder` (made if missing; a link the user
    named as the folder is followed), atomically and without following links inside it (module docstring)."""
    for name in files:
        if not name or name in (".", "..") or "/" in name or os.sep in name or (os.altsep and os.altsep in name):
            raise ValueError(f"not a plain file name: {name!r}")
    os.makedirs(folder, exist_ok=True)
    relative = os.open in os.supports_dir_fd and os.rename in os.supports_dir_fd and hasattr(os, "O_NOFOLLOW")
    dir_fd = os.open(folder, os.O_RDONLY | getattr(os, "O_DIRECTORY", 0) | getattr(os, "O_CLOEXEC", 0)) \
        if relative else None
    try:
        def where(name: str):  # (path, dir_fd) for os calls: relative to the folder's descriptor where possible
            return (name, dir_fd) if dir_fd is not None else (os.path.join(folder, name), None)

        modes = {}
        for name in files:  # every entry checked before any is written: a refusal leaves the folder as it was
            path, fd = where(name)
            try:
                info = os.stat(path, dir_fd=fd, follow_symlinks=False)
            except FileNotFoundError:
                continue
            if not stat.S_ISREG(info.st_mode):
                kind = "a symbolic link" if stat.S_ISLNK(info.st_mode) else \
                    "a folder" if stat.S_ISDIR(info.st_mode) else "not a regular file"
                raise RefusedEntry(17, f"{name} is already there and is {kind}; only regular files are replaced",
                                   os.path.join(folder, name))
            # a file of this user's keeps its permissions (less set-id bits); one someone else left there does not
            # pass its mode on to what this user writes (a world-writable script, a set-id bit)
            mine = not hasattr(os, "geteuid") or info.st_uid == os.geteuid()
            modes[name] = info.st_mode & 0o777 if mine else _new_file_mode(executable(name))
        for name, data in files.items():
            _replace_in_folder(where, name, data, modes.get(name, _new_file_mode(executable(name))))
        if dir_fd is not None:
            try:
                os.fsync(dir_fd)  # the renames themselves reach the disk
            except OSError:
                pass
    finally:
        if dir_fd is not None:
            os.close(dir_fd)


def _replace_in_folder(where, name: str, data: bytes, mode: int) -> None:
    flags = os.O_WRONLY | os.O_CREAT | os.O_EXCL | getattr(os, "O_NOFOLLOW", 0) | getattr(os, "O_CLOEXEC", 0) | \
        getattr(os, "O_BINARY", 0)
    while True:
        tmp = f".{name}.{secrets.token_hex(6)}.tmp"
        tmp_path, fd_dir = where(tmp)
        try:
            fd = os.open(tmp_path, flags, 0o600, dir_fd=fd_dir)
            break
        except FileExistsError:  # a name taken (or planted) since: another one
            continue
    try:
        with os.fdopen(fd, "wb") as handle:
            handle.write(data)
            handle.flush()
            if hasattr(os, "fchmod"):
                os.fchmod(handle.fileno(), mode)
            os.fsync(handle.fileno())
        if not hasattr(os, "fchmod"):  # Windows: only the read-only bit means anything
            os.chmod(tmp_path, mode)
        path, _ = where(name)
        os.replace(tmp_path, path, src_dir_fd=fd_dir, dst_dir_fd=fd_dir)
    except BaseException:
        try:
            os.unlink(tmp_path, dir_fd=fd_dir)
        except OSError:
            pass
        raise
