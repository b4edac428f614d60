"""Where a CPython X.Y comes from on each OS, when the machine does not have it: the table behind every plan's
"how to get this Python" and behind `stackresolve install` when it finds no interpreter.

Pure data and one query; every row names its source. Checked 2026-11-26.
"""

from __future__ import annotations

from functools import lru_cache

from stackresolve.model.enums import Os
from stackresolve.model.record import record

# uv's managed CPython downloads (python-build-standalone) start at 3.8: `uv python list --all-versions
# --only-downloads` of uv 0.13.9 lists 3.8.x to 3.15.x for linux-x86_64-gnu, no 3.7 (uv removed its 3.7
# downloads on purpose: astral-sh/uv#13022, "Omit Python 3.7 downloads from managed versions", 2025-04-21).
UV_DOWNLOADS = ("3.8", "3.9", "3.10", "3.11", "3.12", "3.13", "3.14", "3.15")
UV_SOURCE = "uv 0.13.9 `uv python list --all-versions --only-downloads` (3.8-3.15); astral-sh/uv#13022 (no 3.7)"

# The deadsnakes PPA per Ubuntu LTS release. 22.04: the PPA's own description ("Supported Ubuntu and Python
# Versions", quoted in deadsnakes/issues#266): "Ubuntu 22.04 (jammy) Python3.7 - Python3.9, Python3.11 -
# Python3.13". 24.04: Python3.7 - Python3.11, Python3.13 (deadsnakes/issues#284 corrects the description, which
# copied jammy's line; #337: no 3.12 on noble, Ubuntu ships it). 20.04 is gone: the PPA deletes a release's
# packages once it reaches end of life (deadsnakes/issues#251; focal's standard support ended 2025-05-31). The
# release's own python3 (3.10 on jammy, 3.12 on noble) comes from Ubuntu itself. 3.14 is not listed: not confirmed.
DEADSNAKES = {
    "22.04": ("3.7", "3.8", "3.9", "3.11", "3.12", "3.13"),
    "24.04": ("3.7", "3.8", "3.9", "3.10", "3.11", "3.13"),
}
DEADSNAKES_SOURCE = "launchpad.net/~deadsnakes/+archive/ubuntu/ppa 'Supported Ubuntu and Python Versions' " \
                    "(deadsnakes/issues#266 for jammy, #284 for noble; #251: end-of-life releases are deleted)"
# Ubuntu's own python3 per LTS release (packages.ubuntu.com, package python3: focal 3.8.2, jammy 3.10.6, noble 3.12.3).
UBUNTU_PYTHON = {"20.04": "3.8", "22.04": "3.10", "24.04": "3.12"}
UBUNTU_SOURCE = "packages.ubuntu.com python3 (focal 3.8, jammy 3.10, noble 3.12)"

# python.org's Windows installers: security-only releases are source only, so each minor's last installer is its
# last bugfix release (python.org/downloads/windows; PEP 537, 569, 596, 619, 664, 693 release schedules).
WINDOWS_LAST_INSTALLER = {"3.5": "3.5.4", "3.6": "3.6.8", "3.7": "3.7.9", "3.8": "3.8.10", "3.9": "3.9.13",
                          "3.10": "3.10.11", "3.11": "3.11.9", "3.12": "3.12.10"}
WINDOWS_SOURCE = "python.org/downloads/windows (last installer per minor: its last bugfix release)"

# conda-forge (named with -c: a default channel may not carry old Pythons) builds CPython 3.6 and newer for
# linux-64, win-64 and osx-64, and 3.8 and newer for osx-arm64 (the platform started in 2020 with 3.8:
# anaconda.org/conda-forge/python files per platform).
CONDA_SOURCE = "anaconda.org/conda-forge/python (files per platform: 3.6+ on linux-64/win-64/osx-64, 3.8+ osx-arm64)"


@record
class PythonSource:
    """One way to get CPython `version` on an OS: what to run (or do), and the fact it rests on."""

    method: str  # "uv", "apt", "deadsnakes", "python.org", "conda", "pyenv"
    command: str
    source: str

    def __repr__(self) -> str:
        return f"PythonSource({self.method!r}, {self.command!r}, {self.source!r})"

    def to_json(self) -> dict:
        return {"method": self.method, "command": self.command, "source": self.source}


def _minor(version: str) -> tuple[int, int]:
    major, minor = version.split(".")[:2]
    return int(major), int(minor)


@lru_cache(maxsize=256)  # pure; a matrix asks it of every stack
def python_sources(version: str, os_name: Os, *, ubuntu: str | None = None, arm64_mac: bool = False
                   ) -> tuple[PythonSource, ...]:
    """The ways to get CPython `version` ("3.7") on `os_name`, most convenient first. `ubuntu` narrows the apt
    routes to one Ubuntu release ("22.04"); without it every LTS release that carries the version is named."""
    tag = version.replace(".", "")
    found: list[PythonSource] = []
    if os_name is Os.WINDOWS:
        found.append(PythonSource("python.org", f"install Python {WINDOWS_LAST_INSTALLER.get(version, version)} from "
                                                f"python.org/downloads/windows, then `py -{version}` runs it",
                                  WINDOWS_SOURCE))
    if version in UV_DOWNLOADS:
        found.append(PythonSource("uv", f"uv python install {version}", UV_SOURCE))
    if os_name in (Os.LINUX, Os.WSL2):
        releases = [ubuntu] if ubuntu else sorted(set(UBUNTU_PYTHON) | set(DEADSNAKES))
        system = [r for r in releases if UBUNTU_PYTHON.get(r) == version]
        ppa = [r for r in releases if version in DEADSNAKES.get(r, ()) and r not in system]
        if system:
            found.append(PythonSource("apt", f"Ubuntu {', '.join(system)}: sudo apt install python{version} "
                                             f"python{version}-venv", UBUNTU_SOURCE))
        if ppa:
            found.append(PythonSource("deadsnakes", f"Ubuntu {', '.join(ppa)}: sudo add-apt-repository "
                                                    f"ppa:deadsnakes/ppa && sudo apt install python{version} "
                                                    f"python{version}-venv", DEADSNAKES_SOURCE))
    if os_name is Os.MACOS:
        found.append(PythonSource("python.org", f"install Python {version} from python.org/downloads/macos",
                                  "python.org/downloads/macos"))
    if _minor(version) >= ((3, 8) if arm64_mac else (3, 6)):
        found.append(PythonSource("conda", f"conda create -n py{tag} -c conda-forge python={version}", CONDA_SOURCE))
    if os_name is not Os.WINDOWS:
        found.append(PythonSource("pyenv", f"pyenv install {version}",
                                  "github.com/pyenv/pyenv (builds any CPython release from source)"))
    return tuple(found)


def how_to_get_line(version: str, sources: tuple[PythonSource, ...]) -> str:
    """One line: 'Python 3.7: conda create -n py37 python=3.7 | Ubuntu 22.04: sudo add-apt-repository ...'."""
    return f"to get Python {version}: " + " | ".join(s.command for s in sources)
