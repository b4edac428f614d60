"""The short header every plan starts with: the stack, the request, the knowledge-base version."""

from __future__ import annotations

from stackresolve import __version__
from stackresolve.model.stack import Resolution


def header_lines(resolution: Resolution, kind: str) -> list[str]:
    request = resolution.request
    stack = resolution.stack
    wanted = [request.asked, f"os {request.os}"]
    if request.python:
        wanted.append(f"Python {request.python}")
    if request.apple_gpu:
        wanted.append(f"GPU {request.apple_gpu} (Metal)")
    if request.accelerators:
        wanted.append("GPU " + ", ".join(a.label for a in request.accelerators))
    if request.gpus:
        wanted.append("GPU " + ", ".join(f"{g.name or 'cc'} {g.cc}" for g in request.gpus))
    if request.driver:
        wanted.append(f"driver {request.driver}")
    if request.cudnn:
        wanted.append(f"cuDNN {request.cudnn}")
    if request.vendor:
        wanted.append(f"vendor {request.vendor}")
    if request.cpu_only and not request.apple_gpu and not request.accelerators:  # an Apple GPU request has no CUDA, but it is no CPU plan
        wanted.append("CPU only")
    return [f"stackresolve {kind} plan",
            f"stack: {stack.summary}" if stack else "stack: none (no consistent stack)",
            f"request: {', '.join(wanted)}",
            f"knowledge base {resolution.kb_version}, stackresolve {__version__}",
            # a line of its own: with a date per kind of data it is as long as the header's other lines together
            *([f"data: {resolution.index_data}"] if resolution.index_data else [])]


def one_line(text: str) -> str:
    """Control characters (a newline in a detected GPU name, say) must not end a comment inside a script."""
    return "".join(ch if ch.isprintable() else " " for ch in text)


def comment_header(resolution: Resolution, kind: str, prefix: str = "# ") -> str:
    return "".join(f"{prefix}{one_line(line)}\n" for line in header_lines(resolution, kind))
