"""The readable plan summary: the stack, the reason behind each pin, findings and alternatives."""

from __future__ import annotations

from stackresolve.knowledge.python_sources import how_to_get_line
from stackresolve.model.enums import GpuSupport
from stackresolve.model.stack import Resolution, Stack

INSTALL_FORMATS = "pip, conda, apt, powershell, dockerfile, lock"


def _stack_rows(stack: Stack) -> list[tuple[str, str, str, str]]:
    fw, py = stack.framework, stack.python
    where = f" (index: {fw.index})" if fw.index else (f" ({fw.index_option} {fw.index_url})" if fw.index_url else "")
    rows = [(fw.name, fw.label + where, fw.why, fw.source)]
    if fw.companions:
        rows.append(("", "with " + ", ".join(fw.companions), "", ""))
    rows.append(("python", f"{py.recommended}  (builds: {py.available[0]} - {py.available[-1]})", py.why, py.source))
    if py.sources:
        rows.append(("", how_to_get_line(py.recommended, py.sources), "", ""))
    if stack.cuda:
        cuda, cudnn, drv = stack.cuda, stack.cudnn, stack.driver
        rows.append(("cuda", f"{cuda.version}  ({cuda.release}, {cuda.delivery})", cuda.why, cuda.source))
        if cudnn is None:
            rows.append(("cudnn", f"bundled with {fw.distribution} (version not recorded)", "", ""))
        elif cudnn.full_version:
            rows.append(("cudnn", f"{cudnn.version}  ({cudnn.full_version} for CUDA {cudnn.built_for_cuda}; "
                                  f"compiled with {cudnn.compiled})", cudnn.why, cudnn.source))
        else:
            rows.append(("cudnn", f"{cudnn.version} or newer  ({cudnn.rule})", cudnn.why, cudnn.source))
        if cudnn is not None and cudnn.also_works:
            rows.append(("", f"also works: cuDNN {', '.join(cudnn.also_works)}", cudnn.rule, ""))
        state = "not detected" if drv.detected is None else (
            f"{drv.detected} installed, " + ("ok" if drv.ok else "TOO OLD"))
        rows.append(("driver", f">= {drv.minimum}  ({state})", drv.why, drv.source))
    gpu = stack.gpu
    label = "CPU only" if gpu.support is GpuSupport.CPU_ONLY else \
        f"{gpu.name}: Metal" if gpu.support is GpuSupport.METAL else (
        f"{gpu.name or 'GPU'} cc {gpu.cc}: {gpu.support}" if gpu.cc else "any supported NVIDIA GPU")
    rows.append(("gpu", label, gpu.why, gpu.source))
    return rows


def render_stack(stack: Stack, indent: str = "  ") -> list[str]:
    out = []
    for name, value, why, source in _stack_rows(stack):
        out.append(f"{indent}{name:<11}{value}")
        if why:
            out.append(f"{indent}{'':<11}why: {why}")
        if source:
            out.append(f"{indent}{'':<11}source: {source}")
    return out


def render(resolution: Resolution) -> str:
    request = resolution.request
    data = f"; package index data {resolution.index_data}" if resolution.index_data else ""
    out = [f"stackresolve plan: {request.asked} on {request.os} "
           f"(knowledge base {resolution.kb_version}{data})",
           f"status: {resolution.status}", ""]
    if resolution.stack:
        out.append("Stack")
        out += render_stack(resolution.stack)
        out.append("")
    else:
        out += ["No consistent stack: these facts conflict", ""]
    if resolution.findings:
        out.append("Findings")
        for f in resolution.findings:
            out.append(f"  [{f.severity}] {f.code}: {f.message}")
            if f.fix:
                out.append(f"      fix: {f.fix}")
            if f.source:
                out.append(f"      source: {f.source}")
        out.append("")
    if resolution.alternatives:
        out.append("Nearest stacks that run natively" if resolution.stack else "Nearest stacks that work")
        for i, alt in enumerate(resolution.alternatives, 1):
            out.append(f"  {i}. {alt.stack.summary}")
            out.append(f"     why: {alt.why}")
        out.append("")
    if resolution.stack:
        out.append(f"Install plans: stackresolve plan {request.framework.flag} {request.version!r} ... --format "
                   f"({INSTALL_FORMATS})")
    return "\n".join(out) + "\n"
