"""The readable plan summary: the stack, the reason behind each pin, findings and alternatives."""

from __future__ import annotations

from stackresolve.formats.findings import finding_lines
from stackresolve.knowledge.python_sources import how_to_get_line
from stackresolve.model.enums import GpuSupport
from stackresolve.model.stack import Resolution, Stack
from stackresolve.formats.text_decide import TextPlan


def _stack_rows(stack: Stack) -> list[tuple[str, str, str, str]]:
    fw, py = stack.framework, stack.python
    where = f" ({fw.index_option} {fw.index_url})" if fw.index_url else (f" (index: {fw.index})" if fw.index else "")
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
            f"{drv.detected} installed, " + (f"ok through minor-version compatibility (>= {drv.minor_compat_minimum})"
                                             if drv.ok_through_minor_compat else "ok" if drv.ok else "TOO OLD"))
        rows.append(("driver", f">= {drv.minimum}  ({state})", drv.why, drv.source))
    gpu = stack.gpu
    label = f"{gpu.name or gpu.gfx}: {'ROCm' if gpu.vendor == 'amd' else 'XPU'} ({gpu.support})" \
        if gpu.vendor in ("amd", "intel") else "CPU only" if gpu.support is GpuSupport.CPU_ONLY else \
        f"{gpu.name}: Metal" if gpu.support is GpuSupport.METAL else (
        f"{gpu.name or 'GPU'} cc {gpu.cc}: {gpu.support}" if gpu.cc else "any supported NVIDIA GPU")
    rows.append(("gpu", label, gpu.why, gpu.source))
    return rows


class SourceList:
    """Each source once: a row or finding names its sources by number ("[2] [5]"); the list closes the plan. A
    composite source ("A; B (x; y); C") is split at its top-level semicolons, so shared parts share a number."""

    def __init__(self):
        self.entries: list[str] = []
        self._numbers: dict[str, int] = {}

    def refs(self, source: str) -> str:
        numbers = []
        for part in split_sources(source):
            if part not in self._numbers:
                self.entries.append(part)
                self._numbers[part] = len(self.entries)
            if self._numbers[part] not in numbers:
                numbers.append(self._numbers[part])
        return " ".join(f"[{n}]" for n in numbers)

    def render(self) -> list[str]:
        if not self.entries:
            return []
        return ["Sources", *(f"  [{n}] {entry}" for n, entry in enumerate(self.entries, 1)), ""]


def split_sources(source: str) -> list[str]:
    parts, depth, current = [], 0, []
    for ch in source:
        depth += ch in "([{"
        depth -= ch in ")]}" and depth > 0
        if ch == ";" and depth == 0:
            parts.append("".join(current))
            current = []
        else:
            current.append(ch)
    parts.append("".join(current))
    return [p.strip() for p in parts if p.strip()]


def render_stack(stack: Stack, sources: SourceList, indent: str = "  ") -> list[str]:
    out = []
    for name, value, why, source in _stack_rows(stack):
        out.append(f"{indent}{name:<11}{value}")
        if why:
            out.append(f"{indent}{'':<11}why: {why}")
        if source:
            out.append(f"{indent}{'':<11}sources: {sources.refs(source)}")
    return out


def alternatives_heading(resolution: Resolution) -> str:
    # lazy: start-up (only this path needs resolve.conflicts)
    from stackresolve.resolve.conflicts import degraded

    if resolution.stack is None:
        return "Nearest stacks that work"
    # only a stack that does not run natively is followed by stacks that do; otherwise they are other routes
    return "Nearest stacks that run natively" if degraded(resolution.stack, resolution.findings) else \
        "Other stacks for this request"


def render(plan: TextPlan) -> str:
    """The closing line repeats plan.command, the user's plan command without --format and -o (else the request's
    framework and version)."""
    resolution, command = plan.resolution, plan.command
    request = resolution.request
    data = f"; data: {resolution.index_data}" if resolution.index_data else ""
    sources = SourceList()
    out = [f"stackresolve plan: {request.asked} on {request.os} "
           f"(knowledge base {resolution.kb_version}{data})",
           f"status: {resolution.status}", ""]
    if resolution.stack:
        out.append("Stack")
        out += render_stack(resolution.stack, sources)
        out.append("")
    else:
        out += ["No consistent stack: these facts conflict", ""]
    if resolution.findings:
        out.append("Findings")
        for f in resolution.findings:
            out += finding_lines(f, f"[{f.severity}] {f.code}:", sources.refs(f.source) if f.source else "",
                                 "sources")
        out.append("")
    if resolution.alternatives:
        out.append(alternatives_heading(resolution))
        for i, alt in enumerate(resolution.alternatives, 1):
            out.append(f"  {i}. {alt.stack.summary}")
            out.append(f"     why: {alt.why}")
        out.append("")
    if resolution.stack:
        if not command:
            # lazy: start-up (shlex, only this path)
            import shlex

            command = f"stackresolve plan {request.framework.flag} {shlex.quote(request.version)}"
        out.append(f"Install plans: {command} --format {'|'.join(plan.install_formats)}")
        out.append("")
    out += sources.render()
    return "\n".join(out).rstrip("\n") + "\n"
