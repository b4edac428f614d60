"""The readable plan summary: the stack, the reason behind each pin, findings and alternatives."""

from __future__ import annotations

from stackresolve.resolve import Resolution, Stack

INSTALL_FORMATS = "pip, conda, apt, powershell, dockerfile, lock"


def _stack_rows(stack: Stack) -> list[tuple[str, str, str, str]]:
    fw = stack.framework.value
    py = stack.python.value
    rows = [("tensorflow", f"{fw['pip_package']}=={fw['version']}", stack.framework.why, stack.framework.source),
            ("python", f"{py['recommended']}  (wheels: {py['min']} - {py['max']})", stack.python.why,
             stack.python.source)]
    if stack.cuda:
        rows.append(("cuda", f"{stack.cuda.value['version']}  ({stack.cuda.value['release']})", stack.cuda.why,
                     stack.cuda.source))
        cudnn = stack.cudnn.value
        rows.append(("cudnn", f"{cudnn['version']}  ({cudnn['full_version']} for CUDA {cudnn['built_for_cuda']})",
                     stack.cudnn.why, stack.cudnn.source))
        drv = stack.driver.value
        state = "not detected" if drv["detected"] is None else (
            f"{drv['detected']} installed, " + ("ok" if drv["ok"] else "TOO OLD"))
        rows.append(("driver", f">= {drv['min']}  ({state})", stack.driver.why, stack.driver.source))
    gpu = stack.gpu.value
    label = "CPU only" if gpu["support"] == "cpu-only" else (
        f"{gpu['name'] or 'GPU'} cc {gpu['compute_capability']}: {gpu['support']}" if gpu["compute_capability"]
        else "any supported NVIDIA GPU")
    rows.append(("gpu", label, stack.gpu.why, stack.gpu.source))
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


def render(resolution: Resolution, kb=None) -> str:
    request = resolution.request
    out = [f"stackresolve plan: TensorFlow {request.tf} on {request.os} "
           f"(knowledge base {resolution.kb_version})",
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
        out.append("Nearest stacks that work")
        for i, alt in enumerate(resolution.alternatives, 1):
            out.append(f"  {i}. {alt.stack.summary}")
            out.append(f"     why: {alt.why}")
        out.append("")
    if resolution.stack:
        out.append(f"Install plans: stackresolve plan --tf {request.tf!r} ... --format ({INSTALL_FORMATS})")
    return "\n".join(out) + "\n"
