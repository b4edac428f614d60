"""A full lock for a plan: every package of the transitive set pinned, with hashes, for the plan's Python, OS and
architecture, our constraints applied. A real resolver does it (uv's `pip compile`, the optional extra
`stackresolve[lock]`); this module only runs it, with a time limit, and reads back what it pinned.

    lock = compile_lock(pip_plan, fmt="requirements.txt" | "pylock.toml")
    lock.text          # the file to commit
    lock.cuda_wheels   # {"nvidia-cuda-runtime-cu12": "12.9.79", "nvidia-cudnn-cu12": "9.28.0.1", ...}

The index is pip's (--index-url, PIP_INDEX_URL, pip's configuration, or pip's default), so the lock says what
`pip install` would get there.
"""

from __future__ import annotations

import os
import re
import shutil
import subprocess
import tempfile
from dataclasses import dataclass, field
from pathlib import Path

from stackresolve.model.enums import Arch, Os
from stackresolve.plan.pip import PipPlan

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


@dataclass(frozen=True)
class FullLock:
    text: str
    fmt: str
    python: str
    platform: str
    cuda_wheels: dict[str, str] = field(default_factory=dict)  # the NVIDIA wheels the lock really pins


def uv_binary(env=os.environ) -> str:
    """The uv executable: the `uv` Python package (stackresolve[lock]) or one on PATH."""
    try:
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
                 timeout: float = TIMEOUT) -> FullLock:
    """Resolve the plan's requirements with uv for its Python and platform, with hashes."""
    from stackresolve.index import index_url

    if not pip.requirements:
        raise LockUnavailable("this stack is a container: there is nothing to pip install")
    if pip.pre_install:
        raise LockUnavailable(f"{pip.requirements[0]} comes from NVIDIA's own index (through "
                              f"{', '.join(pip.pre_install)}), which a lock cannot name")
    from stackresolve.emit.script import requirement_lines

    request = pip.resolution.request
    platform = uv_platform(request.os, request.arch)
    with tempfile.TemporaryDirectory(prefix="stackresolve-lock-") as scratch:
        requirements = Path(scratch) / "requirements.in"
        requirements.write_text("\n".join(requirement_lines(pip)) + "\n", encoding="utf-8")
        out = Path(scratch) / ("pylock.toml" if fmt == "pylock.toml" else "requirements.txt")
        # uv's `# via -r FILE` names the input as given: relative to the scratch folder it runs in, so the lock
        # does not carry a random temporary path (two locks of the same set are the same bytes).
        argv = [uv_binary(), "pip", "compile", requirements.name, "--python-version", pip.python,
                "--python-platform", platform, "--generate-hashes", "--format", fmt,
                *index_options(pip, index_url(index)), "--no-header", "--quiet", "-o", str(out)]
        env = {k: v for k, v in os.environ.items() if not k.startswith(("UV_", "PIP_", "MACOSX_"))}
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
    return FullLock(text, fmt, pip.python, platform, cuda_wheels(text))


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
