"""File access for the probes, optionally rooted in a directory (tests build a fake machine under tmp_path).

Paths given to and returned by `LocalFS` are the machine's own paths ("/usr/local/cuda/version.json",
"C:\\Program Files\\NVIDIA GPU Computing Toolkit\\CUDA\\v11.8"). With `root` set, "/usr/x" lives at
`root/usr/x` and "C:\\x\\y" at `root/C/x/y`. Every method answers None / False / [] instead of raising.
"""

from __future__ import annotations

import os
import re

_DRIVE = re.compile(r"^([A-Za-z]):[\\/]*")


class LocalFS:
    def __init__(self, root: str | os.PathLike | None = None):
        self.root = os.path.abspath(os.fspath(root)) if root is not None else None

    # -- path mapping ---------------------------------------------------------------------------------
    def _map(self, path: str) -> str:
        if self.root is None:
            return path
        p = str(path).replace("\\", "/")
        m = _DRIVE.match(p)
        if m:
            p = m.group(1).upper() + "/" + p[m.end():]
        return os.path.join(self.root, p.lstrip("/"))

    def _unmap(self, real: str, like: str) -> str:
        """Turn a real path under root back into the machine path, in the style of `like`."""
        if self.root is None:
            return real
        rel = os.path.relpath(real, self.root).replace(os.sep, "/")
        like = str(like)
        m = _DRIVE.match(like.replace("\\", "/"))
        if m and rel.split("/", 1)[0].upper() == m.group(1).upper():
            rest = rel.split("/", 1)[1] if "/" in rel else ""
            return m.group(1).upper() + ":\\" + rest.replace("/", "\\")
        return "/" + rel if rel != "." else "/"

    # -- queries ----------------------------------------------------------------------------------------
    def read_text(self, path: str, limit: int = 1 << 20) -> str | None:
        try:
            with open(self._map(path), "rb") as fh:
                data = fh.read(limit)
        except (OSError, ValueError):
            return None
        return data.decode("utf-8", errors="replace")

    def read_bytes(self, path: str, limit: int = 8 << 20) -> bytes | None:
        try:
            with open(self._map(path), "rb") as fh:
                return fh.read(limit)
        except (OSError, ValueError):
            return None

    def exists(self, path: str) -> bool:
        try:
            return os.path.exists(self._map(path))
        except (OSError, ValueError):
            return False

    def is_file(self, path: str) -> bool:
        try:
            return os.path.isfile(self._map(path))
        except (OSError, ValueError):
            return False

    def is_dir(self, path: str) -> bool:
        try:
            return os.path.isdir(self._map(path))
        except (OSError, ValueError):
            return False

    def listdir(self, path: str) -> list[str]:
        try:
            return sorted(os.listdir(self._map(path)))
        except (OSError, ValueError):
            return []

    def glob(self, pattern: str) -> list[str]:
        """Machine paths matching `pattern` (wildcards anywhere), sorted."""
        # lazy: start-up (glob, only this path)
        import glob as _glob

        try:
            found = _glob.glob(self._map(pattern))
        except (OSError, ValueError):
            return []
        return sorted(self._unmap(p, pattern) for p in found)

    def realpath(self, path: str) -> str:
        try:
            real = os.path.realpath(self._map(path))
        except (OSError, ValueError):
            return path
        if self.root is not None and not (real == self.root or real.startswith(self.root + os.sep)):
            return path  # a link pointing outside the fake tree: keep the path as given
        return self._unmap(real, path)

    def can_open_rw(self, path: str) -> bool:
        """Whether this process may open `path` for reading and writing (os.access: real uid / gid)."""
        try:
            return os.access(self._map(path), os.R_OK | os.W_OK)
        except (OSError, ValueError):
            return False

    def group_name(self, path: str) -> str | None:
        """The name of the group owning `path` ("render", "video"); None when unknown (or not on POSIX)."""
        try:
            gid = os.stat(self._map(path)).st_gid
            # lazy: start-up (grp, only this path)
            import grp

            return grp.getgrgid(gid).gr_name
        except (OSError, ValueError, KeyError, ImportError):
            return None
