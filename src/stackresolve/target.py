"""Turns command-line flags and (optionally) a detected machine into a validated Request.

Pure: the caller passes the detected machine (or None); nothing here probes the system.
"""

from __future__ import annotations

from dataclasses import dataclass

from packaging.version import Version

from stackresolve.knowledge.base import KnowledgeBase
from stackresolve.knowledge.model import cc_tuple
from stackresolve.request import (
    GpuTarget,
    InputError,
    Request,
    parse_arch,
    parse_cc,
    parse_driver,
    parse_os,
    parse_python,
    parse_tf_spec,
    parse_vendor,
)


@dataclass(frozen=True)
class Flags:
    """What the user typed; None where a flag was left out."""

    tf: str = "latest"
    os: str | None = None
    arch: str | None = None
    gpu: str | None = None
    gpu_cc: str | None = None
    driver: str | None = None
    python: str | None = None
    cpu: bool = False
    vendor: str = "any"
    with_driver: bool = False


@dataclass(frozen=True)
class MachineFacts:
    """The subset of detection a request needs (filled from stackresolve.detect)."""

    os: str | None = None  # linux | windows | macos | wsl2
    arch: str | None = None
    driver: str | None = None
    driver_source: str = ""
    gpus: tuple[tuple[str, str | None, str], ...] = ()  # (name, compute capability or None, probe)
    probed_gpus: bool = False  # True when GPU probes ran (so an empty list means "no NVIDIA GPU")
    bad_overrides: tuple[str, ...] = ()  # STACKRESOLVE_* / CONDA_OVERRIDE_CUDA values detection could not read


def validate_tf(kb: KnowledgeBase, text: str) -> None:
    """An unknown TensorFlow version is bad input: say which lines exist and which is closest."""
    spec = parse_tf_spec(text)
    if not str(spec) or any(spec.contains(w.key, prereleases=True) for w in kb.wheels):
        return
    lines = sorted((l.version for l in kb.lines), key=Version)
    wanted = text.strip().lstrip("=<>!~ ").split(",")[0]
    try:
        target = Version(wanted)
        closest = min(lines, key=lambda l: (abs(Version(l).major - target.major),
                                            abs(Version(l).minor - target.minor)))
        hint = f"; closest: {closest}"
    except ValueError:
        hint = ""
    raise InputError(f"--tf {text!r}: no TensorFlow release matches; known lines are {lines[0]} ... "
                     f"{lines[-1]}{hint}")


def lookup_gpu(kb: KnowledgeBase, name: str) -> GpuTarget:
    gpu = kb.find_gpu(name)
    if gpu is None:
        similar = kb.similar_gpu_names(name)
        hint = f"; did you mean {' or '.join(repr(s) for s in similar)}?" if similar else \
            "; use --gpu-cc X.Y to give its compute capability (stackresolve gpus lists known models)"
        raise InputError(f"--gpu {name!r}: unknown GPU model{hint}")
    return GpuTarget(name=gpu.name, cc=gpu.cc, architecture=gpu.architecture, source="flag --gpu")


def _gpu_from_cc(kb: KnowledgeBase, cc: str, name: str, source: str) -> GpuTarget:
    support = kb.arch_support_for(cc)
    representative = kb.representative_gpu(cc)
    architecture = support.architecture if support else (representative.architecture if representative else "")
    return GpuTarget(name=name, cc=cc, architecture=architecture, source=source)


def build_request(kb: KnowledgeBase, flags: Flags, machine: MachineFacts | None) -> Request:
    if machine and machine.bad_overrides:
        raise InputError(machine.bad_overrides[0])
    validate_tf(kb, flags.tf)
    spec = parse_tf_spec(flags.tf)
    assumptions: list[str] = []

    if flags.os:
        os_name = parse_os(flags.os)
    elif machine and machine.os:
        os_name = machine.os
        assumptions.append(f"operating system {os_name}, detected")
    else:
        os_name = "linux"
        assumptions.append("operating system linux (not given; pass --os linux|windows|macos|wsl2)")
    arch = parse_arch(flags.arch) if flags.arch else (machine.arch if machine and machine.arch else "x86_64")
    python = parse_python(flags.python) if flags.python else None
    vendor = parse_vendor(flags.vendor)
    if vendor == "nvidia" and not spec.contains(Version("1.15.5"), prereleases=True):
        raise InputError(f"--vendor nvidia: NVIDIA's maintained builds are TensorFlow 1.15 only, not '{flags.tf}'; "
                         f"use --tf 1.15")

    gpus: list[GpuTarget] = []
    if flags.gpu and flags.gpu_cc:
        target = lookup_gpu(kb, flags.gpu)
        cc = parse_cc(flags.gpu_cc, kb.known_ccs())
        if cc != target.cc:
            raise InputError(f"--gpu {flags.gpu!r} has compute capability {target.cc}, not {cc}; give one of them")
        gpus.append(target)
    elif flags.gpu:
        gpus.append(lookup_gpu(kb, flags.gpu))
    elif flags.gpu_cc:
        cc = parse_cc(flags.gpu_cc, kb.known_ccs())
        gpus.append(_gpu_from_cc(kb, cc, "", "flag --gpu-cc"))
    elif machine and machine.gpus and not flags.cpu:
        for name, cc, probe in machine.gpus:
            if cc is None:  # probes that cannot report it (R470 nvidia-smi): the model table knows
                known = kb.find_gpu(name)
                if known is None:
                    assumptions.append(f"GPU {name!r}: compute capability unknown; pass --gpu-cc X.Y")
                    continue
                gpus.append(GpuTarget(known.name, known.cc, known.architecture, f"{probe} + gpus.toml"))
            else:
                gpus.append(_gpu_from_cc(kb, cc, name, probe))
        names = ", ".join(f"{g.name} (compute capability {g.cc})" if g.name else
                          f"a GPU of compute capability {g.cc} ({g.source})" for g in gpus)
        if names:
            assumptions.append(f"GPU: {names}, detected")

    cpu_only = flags.cpu
    if not cpu_only and not gpus:
        if os_name == "macos":
            cpu_only = True
            assumptions.append("macOS: TensorFlow has no CUDA builds there, so the stack is CPU-only")
        elif machine and machine.probed_gpus:
            cpu_only = True
            assumptions.append("no NVIDIA GPU found on this machine: CPU-only stack (pass --gpu NAME or "
                               "--gpu-cc X.Y to plan for a GPU elsewhere)")
        else:
            assumptions.append("GPU not given: any NVIDIA GPU the official build supports (pass --gpu NAME or "
                               "--gpu-cc X.Y to check yours, --cpu for a CPU-only stack)")
    if cpu_only and gpus:
        gpus = []

    if flags.driver:
        driver = parse_driver(flags.driver)
    elif machine and machine.driver and not cpu_only:
        driver = machine.driver
        assumptions.append(f"driver {driver}, detected by {machine.driver_source}")
    else:
        driver = None

    gpus.sort(key=lambda g: cc_tuple(g.cc))
    return Request(tf=flags.tf, tf_spec=spec, os=os_name, arch=arch, python=python, driver=driver,
                   gpus=tuple(gpus), cpu_only=cpu_only, vendor=vendor, with_driver=flags.with_driver,
                   assumptions=tuple(assumptions))


def tf_line_for_cuda(kb: KnowledgeBase, cuda: str, os_name: str) -> str | None:
    """The newest TensorFlow line whose tested GPU build on this OS uses a CUDA version ("10.0", "11.x")."""
    table_os = "windows" if os_name == "windows" else "linux"
    major = cuda[:-2] if cuda.endswith(".x") else None
    lines = [b.line for b in kb.tested_builds if b.os == table_os and b.gpu
             and (b.cuda == cuda or (major is not None and b.cuda.split(".")[0] == major))]
    return max(lines, key=Version) if lines else None
