"""The fix plan: what a fix must satisfy (FixRequest) -> one typed Request -> the one resolver.

explain decides no version here: the Request carries what the log says (the framework and its release, the OS,
Python, the driver, the GPU, the CUDA line its libraries ask for) and resolve() picks the stack, as `plan` does
for the same machine. PyTorch and JAX: the log's own build (its CUDA variant, its plugin's CUDA major) is kept
where a build of it fixes the error, judged by doctor's resolve_installed over the same resolver.
"""

from __future__ import annotations

import dataclasses
import re
from dataclasses import dataclass
from typing import TYPE_CHECKING

from packaging.version import Version

from stackresolve.explain.fix import GPU_CATEGORIES, FixRequest

if TYPE_CHECKING:  # pragma: no cover
    from stackresolve.model.machine import Machine
    from stackresolve.knowledge.base import KnowledgeBase
    from stackresolve.model.enums import Os
    from stackresolve.model.stack import Resolution
    from stackresolve.request.build import GpuTarget, Request


@dataclass(frozen=True)
class FixPlan:
    """The stack that fixes an explained error (None: none found), the log's build it keeps where `plan` has no
    option for it (else ""), and why the user's own release is not the one planned (else "")."""

    resolution: "Resolution | None"
    keeps: str = ""
    moved: str = ""


def fix_plan(kb: "KnowledgeBase", fix: FixRequest, machine: "Machine | None",
             category: str | None = None) -> FixPlan:
    """The fix plan of an explained error. The machine is the one the log comes from: its OS, GPU and driver as
    the log shows them, else as detected here (a log that shows a GPU problem is planned for a GPU even where
    this machine has none)."""
    # lazy: start-up (only this path needs request.parse, request.build)
    from stackresolve.request.parse import read_os
    from stackresolve.model.enums import Os
    from stackresolve.request.build import machine_os

    needs_gpu = category in (*GPU_CATEGORIES, "cpu-only-build") and category != "no-gpu-detected"
    if machine is not None and not machine.gpus and needs_gpu:
        machine = None
    detected_os = machine_os(machine) if machine is not None else None
    os_name = read_os(fix.os) or detected_os or Os.LINUX
    if fix.framework in ("pytorch", "jax"):
        return framework_fix_plan(kb, fix, machine, os_name)
    return tf_fix_plan(kb, fix, machine, os_name)


def log_gpus(kb: "KnowledgeBase", fix: FixRequest) -> tuple["GpuTarget", ...]:
    """The GPU the log shows, as a typed target: its compute capability where the log prints one (what a
    no-kernel-image error is about), else its model where the knowledge base knows the name; none otherwise."""
    # lazy: start-up (only this path needs request.build)
    from stackresolve.request.parse import read_cc
    from stackresolve.model.values import ComputeCapability
    from stackresolve.request.build import GpuTarget, gpu_from_cc

    cc = read_cc(fix.compute_capability)  # the log's text, read as --gpu-cc reads it
    if cc is not None:
        return (gpu_from_cc(kb, cc, fix.gpu or "", "the log"),)
    known = kb.find_gpu(fix.gpu) if fix.gpu else None
    if known is not None:
        return (GpuTarget(name=known.name, cc=ComputeCapability.parse(known.cc), architecture=known.architecture,
                          source="the log"),)
    return ()


def fix_request_for(kb: "KnowledgeBase", fix: FixRequest, machine: "Machine | None", os_name: "Os",
                    version: str, python: str | None) -> "Request":
    """The Request for one release (or range) of the log's framework, built from the log's typed values; the
    machine fills what the log leaves out, as `plan` does. `version` is one the knowledge base knows
    (`plannable`); what the log shows is read by the flags' parsers, and a Python, driver or OS they do not read
    is left to the machine."""
    # lazy: start-up (only this path needs request.parse, request.build)
    from stackresolve.request.parse import read_driver, read_python, read_version
    from stackresolve.model.enums import Framework
    from stackresolve.request.build import RequestInput, build_request

    framework = Framework(fix.framework) if fix.framework in ("pytorch", "jax") else Framework.TENSORFLOW
    driver = fix.driver or (driver_for_cuda(kb, fix.driver_cuda, os_name) if fix.driver_cuda else None)
    spec, _ = read_version(kb, framework, version)
    given = RequestInput(framework, version, spec, os=os_name, python=read_python(python),
                         driver=read_driver(driver))
    request = build_request(kb, given, machine)
    gpus = log_gpus(kb, fix)
    if gpus:  # the log's GPU wins over this machine's
        request = dataclasses.replace(request, gpus=gpus, cpu_only=False,
                                      assumptions=request.assumptions + (f"GPU {gpus[0].label}: from the log",))
    elif fix.gpu:
        request = dataclasses.replace(request, assumptions=request.assumptions + (
            f"GPU {fix.gpu!r} (from the log) is not in the knowledge base: planned without it",))
    return request


def plannable(kb: "KnowledgeBase", framework, version: str) -> bool:
    """Whether the knowledge base has a release of `framework` that `version` names ("latest" always)."""
    # lazy: start-up (only this path needs request.parse)
    from stackresolve.request.parse import read_version

    if version == "latest":
        return True
    spec, _ = read_version(kb, framework, version)  # what a log says is not always a version (a 5,000-digit one)
    return spec is not None


def tf_fix_plan(kb: "KnowledgeBase", fix: FixRequest, machine: "Machine | None", os_name: "Os") -> FixPlan:
    """TensorFlow: the log's release where it names one; else the candidate lines its libraries point to, as one
    range, with the CUDA line those libraries ask for; the resolver picks the newest that fits the machine."""
    # lazy: start-up (only this path needs resolve)
    from stackresolve.resolve import resolve

    from stackresolve.model.enums import Framework

    moved = ""
    candidates = [line for line in fix.tf_candidates if plannable(kb, Framework.TENSORFLOW, line)]
    if fix.tf and plannable(kb, Framework.TENSORFLOW, fix.tf):
        version = fix.tf
    elif candidates:
        if fix.tf:
            moved = f"TensorFlow {fix.tf} is not a release the knowledge base knows: the fix plans the lines the " \
                    f"log's libraries point to"
        lines = sorted(candidates, key=Version)
        newest = Version(lines[-1])
        version = f">={lines[0]},<{newest.major}.{newest.minor + 1}"
    elif fix.tf:  # a release the knowledge base does not know, and no library of the log points elsewhere
        version = "latest"
        moved = f"TensorFlow {fix.tf[:40]} is not a release the knowledge base knows: the fix plans the newest"
    else:
        return FixPlan(None)
    request = fix_request_for(kb, fix, machine, os_name, version, fix.python)
    if not fix.tf and fix.cuda:
        request = dataclasses.replace(request, cuda_line=fix.cuda)
    resolution = resolve(kb, request)
    if resolution.stack is None and fix.python:  # the log's Python has no wheels of that release: any Python
        resolution = resolve(kb, dataclasses.replace(request, python=None))
    return FixPlan(resolution, "", moved)


def driver_for_cuda(kb: "KnowledgeBase", cuda: str, os_name: "Os") -> str | None:
    """The oldest driver that supports a CUDA version: what a framework's "found version 11040" (the driver
    supports CUDA up to 11.4) says of the driver, as NVIDIA's table gives each CUDA release's minimum."""
    toolkit = kb.toolkit(cuda)
    if toolkit is None:
        return None
    return toolkit.min_driver(os_name.driver_os) or None


def logged_build(fix: FixRequest):
    """The build the log names, as a filter of the resolver's candidates: PyTorch's CUDA variant (2.5.1+cu124),
    JAX's CUDA major (jax_cuda12_plugin, jaxlib 0.4.23+cuda12.cudnn89); None where the log names none."""
    variant = fix.variant or ""
    if fix.framework == "pytorch" and re.fullmatch(r"cu\d{2,3}", variant):
        return lambda c: c.variant == variant
    if fix.framework == "jax" and variant.startswith("cuda"):
        # lazy: start-up (only this path needs detect.pyenv)
        from stackresolve.detect.pyenv import jaxlib_cuda

        cuda, _ = jaxlib_cuda(f"0+{variant}")  # as detect reads a jaxlib's local version: cuda111 is CUDA 11.1
        if cuda:
            # lazy: no start-up gain (already loaded by then); kept beside its use
            from stackresolve.knowledge.rules import cuda_line_fits

            every_minor = f"{cuda.split('.')[0]}.x"  # a JAX CUDA plugin serves every minor of its major
            return lambda c: c.gpu and bool(c.cuda) and cuda_line_fits(every_minor, c.cuda)
    return None


def framework_fix_plan(kb: "KnowledgeBase", fix: FixRequest, machine: "Machine | None", os_name: "Os") -> FixPlan:
    """PyTorch or JAX: the user's release where the log (or --torch/--jax) names one and a build of it fixes
    the error, else the newest release that does; the log's own build (its CUDA variant or plugin) where that
    one fixes it, else the build the resolver picks; for the GPU the log names, on the driver it names (a driver
    known only by the newest CUDA it supports, "found version 11040", is taken as the oldest driver that
    supports that CUDA); the log's Python where a build fits it."""
    # lazy: start-up (only this path needs doctor.installed, resolve)
    from stackresolve.doctor.installed import resolve_installed
    from stackresolve.resolve import resolve

    from stackresolve.model.enums import Framework

    keep = logged_build(fix)
    framework = Framework(fix.framework)
    versions = [v for v in (fix.framework_version, "latest") if v and plannable(kb, framework, v)]
    first = None
    for python in dict.fromkeys((fix.python, None)):
        for version in dict.fromkeys(versions):
            request = fix_request_for(kb, fix, machine, os_name, version, python)
            # PyTorch's variant belongs to the logged release; JAX's CUDA major to any
            if keep is not None and (fix.framework == "jax" or version == fix.framework_version):
                verdict = resolve_installed(kb, request, keep)
                if verdict.fits:
                    plain = resolve(kb, request, with_alternatives=False).stack
                    kept = verdict.resolution.stack
                    same = plain is not None and plain.framework.requirement == kept.framework.requirement \
                        and plain.framework.index_url == kept.framework.index_url
                    return FixPlan(verdict.resolution, "" if same else f"the log's {fix.variant} build")
            resolution = resolve(kb, request)
            if resolution.stack is not None:
                return FixPlan(resolution, "", _moved(framework, fix.framework_version, version, first))
            first = first or resolution
    return FixPlan(first)


def _moved(framework, asked: str | None, planned: str, failed: "Resolution | None") -> str:
    """Why the plan is not for the user's own release (the resolver's first reason), "" where it is."""
    if not asked or planned == asked:
        return ""
    if failed is None:
        return f"{framework.display} {asked} is not a release the knowledge base knows: the fix plans the newest"
    errors = [f.message for f in failed.findings if f.severity == "error"]
    reason = errors[0] if errors else "no stack of it fits this machine"  # conflict_findings puts the reason first
    return f"{framework.display} {asked} cannot fix it here ({reason.rstrip('.')}): the fix plans the newest release"
