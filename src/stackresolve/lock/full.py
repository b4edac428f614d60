"""A full lock for a plan: every package of the transitive set pinned, with hashes, for the plan's Python, OS and
architecture, our constraints applied. A real resolver does it (uv's `pip compile`, the optional extra
`stackresolve[lock]`); this module only runs it, with a time limit, and reads back what it pinned.

    lock = compile_lock(pip_plan, fmt="requirements.txt" | "pylock.toml")
    lock.text          # the file to commit
    lock.cuda_wheels   # {"nvidia-cuda-runtime-cu12": "12.9.79", "nvidia-cudnn-cu12": "9.28.0.1", ...}

The index is the one asked for (--index-url), else the user's uv setting (UV_DEFAULT_INDEX, UV_INDEX_URL), else
pip's (PIP_INDEX_URL, pip's configuration, or pip's default), so the lock says what `pip install` would get there.
uv runs with the user's own settings but for the few that would change the pins unseen (UV_OVERRIDDEN); a re-lock
hands uv the previous lock so that its pins are kept where they still fit.
"""

from __future__ import annotations

import os
import re
import shutil
import subprocess
import tempfile
from dataclasses import field
from pathlib import Path

from stackresolve.model.enums import Arch, Os
from stackresolve.formats.pip_decide import PipPlan
from stackresolve.model.record import record

TIMEOUT = 600
FORMATS = ("requirements.txt", "pylock.toml")
# What uv calls the platform a plan is for. Linux targets manylinux_2_28 (glibc 2.28: Ubuntu 20.04, RHEL 8 and
# newer), which also takes every older manylinux wheel.
UV_PLATFORMS = {
    (Os.LINUX, Arch.X86_64): "x86_64-manylinux_2_28",
    (Os.LINUX, Arch.AARCH64): "aarch64-manylinux_2_28",
    (Os.WINDOWS, Arch.X86_64): "x86_64-pc-windows-msvc",
    (Os.MACOS, Arch.X86_64): "x86_64-apple-darwin",
    (Os.MACOS, Arch.ARM64): "aarch64-apple-darwin",
    (Os.MACOS, Arch.AARCH64): "aarch64-apple-darwin",
}
CUDA_WHEEL = re.compile(r"^(nvidia-[a-z0-9-]+-cu\d+)==([0-9][0-9.]*)", re.M)


class LockUnavailable(Exception):
    """No lock can be made here (uv is missing, the target has no platform uv knows, NVIDIA's own index)."""


class LockFailed(Exception):
    """uv ran and could not resolve (no consistent set, the index unreachable, the time limit)."""


@record
class FullLock:
    text: str
    fmt: str
    python: str
    platform: str
    cuda_wheels: dict[str, str] = field(default_factory=dict)  # the NVIDIA wheels the lock really pins
    overridden: tuple[str, ...] = ()  # the user's uv settings (environment variables) the lock had to set aside
    kept_pins: bool = False  # the previous lock's pins were offered to uv as preferences


# The user's uv settings stay (a cache folder, a proxy, certificates, extra indexes, UV_EXCLUDE_NEWER...): uv runs with
# the user's environment and configuration. What the lock fixes is on the command line, which uv ranks above its
# environment variables (the Python version, the platform, hashes, the format, the index). These variables would
# still change what the lock pins without being on that line, so they are set aside, and the plan says so: a lock
# is the newest consistent set of releases, under the plan's own constraints only.
UV_OVERRIDDEN = {
    "UV_RESOLUTION": "the lock takes the newest versions, not the lowest",
    "UV_PRERELEASE": "the lock takes releases, not pre-releases",
    "UV_CONSTRAINT": "the lock's constraints are the plan's",
    "UV_OVERRIDE": "the lock's constraints are the plan's",
    "UV_BUILD_CONSTRAINT": "the lock's constraints are the plan's",
    "UV_NO_DEPS": "the lock holds the whole transitive set",
}


def uv_binary(env=os.environ) -> str:
    """The uv executable: the `uv` Python package (stackresolve[lock]) or one on PATH."""
    try:
        # lazy: optional: present only where that tool is installed
        from uv import find_uv_bin

        return find_uv_bin()
    except (ImportError, FileNotFoundError):
        pass
    found = shutil.which("uv", path=env.get("PATH"))
    if found is None:
        raise LockUnavailable("a full lock needs uv: pip install 'stackresolve[lock]', or put uv on PATH")
    return found


def optional_uv() -> str | None:
    """uv when it is here (install's fast path), None otherwise."""
    try:
        return uv_binary()
    except LockUnavailable:
        return None


def uv_platform(os_name: Os, arch: Arch) -> str:
    key = (Os.LINUX if os_name is Os.WSL2 else os_name, arch)
    if key not in UV_PLATFORMS:
        raise LockUnavailable(f"no lock for {os_name} {arch}: uv resolves for {', '.join(sorted(UV_PLATFORMS.values()))}")
    return UV_PLATFORMS[key]


def compile_lock(pip: PipPlan, fmt: str = "requirements.txt", *, index: str | None = None, runner=None,
                 timeout: float = TIMEOUT, previous: str | None = None, upgrade: bool = False, env=None) -> FullLock:
    """Resolve the plan's requirements with uv for its Python and platform, with hashes. `previous`: the lock this
    one replaces (its text), handed to uv as its output file so that pins that still fit are kept (uv's own
    re-lock), unless `upgrade`. `env`: the environment (default os.environ), kept but for UV_OVERRIDDEN."""
    # lazy: start-up (only this path needs index.simple)
    from stackresolve.index.simple import index_url

    if not pip.requirements:
        raise LockUnavailable("this stack is a container: there is nothing to pip install")
    if pip.pre_install:
        raise LockUnavailable(f"{pip.requirements[0]} comes from NVIDIA's own index (through "
                              f"{', '.join(pip.pre_install)}), which a lock cannot name")
    # lazy: start-up (only this path needs formats.script)
    from stackresolve.formats.script import requirement_lines

    request = pip.resolution.request
    platform = uv_platform(request.os, request.arch)
    with tempfile.TemporaryDirectory(prefix="stackresolve-lock-") as scratch:
        requirements = Path(scratch) / "requirements.in"
        requirements.write_text("\n".join(requirement_lines(pip)) + "\n", encoding="utf-8")
        out = Path(scratch) / ("pylock.toml" if fmt == "pylock.toml" else "requirements.txt")
        if previous is not None and not upgrade:
            out.write_text(previous, encoding="utf-8")  # uv prefers the pins of an existing output file
        environ = os.environ if env is None else env
        # uv's `# via -r FILE` names the input as given: relative to the scratch folder it runs in, so the lock
        # does not carry a random temporary path (two locks of the same set are the same bytes).
        default_index = index or (environ.get("UV_DEFAULT_INDEX") or environ.get("UV_INDEX_URL") or "").strip() \
            or None  # the user's uv index setting, as uv itself would read it, else pip's
        argv = [uv_binary(environ), "pip", "compile", requirements.name, "--python-version", pip.python,
                "--python-platform", platform, "--generate-hashes", "--format", fmt,
                *index_options(pip, index_url(default_index)), *(["--upgrade"] if upgrade else []), "--no-header",
                "--quiet", "-o", str(out)]
        overridden = tuple(sorted(k for k in environ if k in UV_OVERRIDDEN and environ[k].strip()))
        # The platform is the plan's, macOS version included: the user's MACOSX_DEPLOYMENT_TARGET is for their builds.
        env = {k: v for k, v in environ.items() if k not in UV_OVERRIDDEN and k != "MACOSX_DEPLOYMENT_TARGET"}
        macos = macos_target(pip)
        if macos:
            # uv resolves a macOS platform for macOS 13.0 unless told otherwise (`uv pip compile --help`,
            # --python-platform): wheels tagged for a newer macOS (torch 2.15: macosx_14_0) need the plan's own.
            env["MACOSX_DEPLOYMENT_TARGET"] = macos
        try:
            done = (runner or subprocess.run)(argv, capture_output=True, text=True, timeout=timeout, env=env,
                                              stdin=subprocess.DEVNULL, cwd=scratch)
        except subprocess.TimeoutExpired:
            raise LockFailed(f"uv did not finish within {timeout:.0f} s") from None
        except OSError as exc:
            raise LockUnavailable(f"cannot run uv ({exc.strerror or exc})") from None
        if done.returncode != 0:
            detail = " ".join(l.strip() for l in (done.stderr or "").splitlines() if l.strip())[-600:]
            raise LockFailed(f"uv could not lock {pip.requirements[0]} for Python {pip.python} on {platform}: "
                             f"{detail or 'no message'}")
        text = out.read_text(encoding="utf-8")
    return FullLock(text, fmt, pip.python, platform, cuda_wheels(text), overridden,
                    kept_pins=previous is not None and not upgrade)


def macos_target(pip: PipPlan) -> str:
    """The macOS a macOS plan needs (its Metal build's minimum), "" for other plans or where none is recorded."""
    if pip.resolution.request.os is not Os.MACOS:
        return ""
    return pip.resolution.stack.framework.macos_min


def index_options(pip: PipPlan, default_index: str) -> list[str]:
    return uv_index_options(pip.index_args, default_index)


def uv_index_options(index_args: tuple[str, ...], default_index: str) -> list[str]:
    """uv's index options for a stack whose own index option is `index_args` (empty: the default index): the
    plan's own index in place of the default one (PyTorch's --index-url, which also serves the dependencies), or
    beside it (an --extra-index-url, a --find-links page)."""
    if not index_args:
        return ["--index-url", default_index]
    option, url = index_args[:2]
    if option == "--index-url":
        return ["--index-url", url]
    # Local versions (torch==1.12.1+cu113) are only on the extra index: uv must look at every index for them.
    return ["--index-url", default_index, option, url, "--index-strategy", "unsafe-best-match"]


def cuda_wheels(text: str) -> dict[str, str]:
    """The NVIDIA wheels a requirements.txt or pylock.toml lock pins."""
    found = dict(CUDA_WHEEL.findall(text))
    for name, version in re.findall(r'name = "(nvidia-[a-z0-9-]+-cu\d+)"\nversion = "([^"]+)"', text):
        found[name] = version
    return found
