"""Path helpers in the style of the machine being probed (POSIX or Windows), independent of the host."""

from __future__ import annotations

import ntpath
import posixpath


def pathmod(system: str):
    return ntpath if system == "windows" else posixpath


def join(system: str, *parts: str) -> str:
    return pathmod(system).join(*parts)


def dirname(system: str, path: str) -> str:
    return pathmod(system).dirname(path)


def basename(system: str, path: str) -> str:
    return pathmod(system).basename(path)


def norm(system: str, path: str) -> str:
    p = pathmod(system).normpath(path)
    return p.lower() if system == "windows" else p


def split_path_var(system: str, value: str | None) -> list[str]:
    sep = ";" if system == "windows" else ":"
    return [p.strip().strip('"') for p in (value or "").split(sep) if p.strip()]


def which(fs, env, system: str, name: str, extra_dirs: tuple[str, ...] | list[str] = ()) -> str | None:
    """First `name` (name.exe on Windows) in PATH, then in `extra_dirs`, as seen through `fs`."""
    names = [name + ".exe", name] if system == "windows" else [name]
    for d in split_path_var(system, env.get("PATH") or env.get("Path")) + list(extra_dirs):
        for n in names:
            p = join(system, d, n)
            if fs.is_file(p):
                return p
    return None
