"""Operating system, flavour (WSL2, container), distribution and architecture."""

from __future__ import annotations

import platform
import re

from stackresolve.model.machine import OSInfo

_ARCH = {"amd64": "x86_64", "x86_64": "x86_64", "x64": "x86_64", "arm64": "aarch64", "aarch64": "aarch64",
         "i386": "x86", "i686": "x86", "x86": "x86", "ppc64le": "ppc64le", "s390x": "s390x"}


def normalize_system(name: str | None) -> str:
    n = (name or "").strip().lower()
    if n.startswith("win") or n.startswith("cygwin") or n.startswith("msys"):
        return "windows"
    if n in ("darwin", "macos", "mac", "osx"):
        return "macos"
    return n or "unknown"


def normalize_arch(machine: str | None) -> str | None:
    if not machine:
        return None
    return _ARCH.get(machine.lower(), machine.lower())


def parse_os_release(text: str | None) -> dict[str, str]:
    out: dict[str, str] = {}
    for line in (text or "").splitlines():
        m = re.match(r"^([A-Z_][A-Z0-9_]*)=(.*)$", line.strip())
        if not m:
            continue
        value = m.group(2).strip()
        if len(value) >= 2 and value[0] == value[-1] and value[0] in "\"'":
            value = value[1:-1]
        out[m.group(1)] = value
    return out


def is_wsl(fs, kernel: str | None = None) -> bool:
    proc = fs.read_text("/proc/version", limit=4096) or ""
    text = (proc + " " + (kernel or "")).lower()
    if "microsoft" in text or "wsl" in text:
        return True
    return fs.is_dir("/usr/lib/wsl/lib")


def in_container(fs, env) -> bool:
    if fs.exists("/.dockerenv") or fs.exists("/run/.containerenv"):
        return True
    if env.get("container"):  # systemd-nspawn, podman, flatpak set it
        return True
    cgroup = fs.read_text("/proc/1/cgroup", limit=16384) or ""
    return any(word in cgroup for word in ("docker", "kubepods", "containerd", "libpod"))


def probe_os(fs, env, system: str | None = None) -> OSInfo:
    real_system = normalize_system(platform.system())
    system = normalize_system(system) if system else real_system
    same = system == real_system
    if getattr(fs, "root", None) is not None:
        same = False  # a fake tree: facts of the host running the tests must not leak in
    arch = normalize_arch(platform.machine()) if same else None
    kernel = platform.release() if same else None
    if system == "linux":
        rel = parse_os_release(fs.read_text("/etc/os-release", limit=16384)
                               or fs.read_text("/usr/lib/os-release", limit=16384))
        wsl = is_wsl(fs, kernel)
        return OSInfo(system="linux", wsl=wsl, distro=(rel.get("ID") or None), release=rel.get("VERSION_ID"),
                      arch=arch, container=in_container(fs, env), kernel=kernel,
                      source="os-release" + (" + /proc/version" if wsl else ""))
    if system == "windows":
        release = version = None
        if same:
            release = platform.release() or None
            version = platform.version() or None
            try:  # Windows 11 still reports release "10" on older Pythons; the build number tells
                build = int((version or "0").split(".")[-1])
                if release == "10" and build >= 22000:
                    release = "11"
            except ValueError:
                pass
        return OSInfo(system="windows", release=release, version=version, arch=arch, source="platform")
    if system == "macos":
        release = platform.mac_ver()[0] if same else None
        return OSInfo(system="macos", release=release or None, arch=arch, source="platform")
    return OSInfo(system=system, arch=arch, kernel=kernel, source="platform")
