"""`--format pip`: renders the pip plan as a requirements file, each pin with its reason."""

from __future__ import annotations

from stackresolve.emit.header import comment_header
from stackresolve.plan.pip import PipPlan


def render(plan: PipPlan) -> str:
    resolution, stack = plan.resolution, plan.resolution.stack
    out = [comment_header(resolution, "pip")]
    if not plan.lines:
        return "".join(out) + (f"# This stack is NVIDIA's NGC container {stack.framework.container}: it has no pip "
                               f"plan.\n# Use --format dockerfile, or run it directly:\n"
                               f"#   docker run --gpus all -it --rm {stack.framework.container}\n")
    if plan.cuda_note:
        out.append(f"# {plan.cuda_note}\n")
    py = plan.python
    python = stack.python
    out.append(f"# Python {py} (wheels exist for {python.min} - {python.max}):\n"
               f"#   python{py} -m venv .venv && .venv/bin/python -m pip install --upgrade pip\n")
    for package in plan.pre_install:
        out.append(f"#   .venv/bin/python -m pip install {package}   (first: it adds the index the next step "
                   f"needs)\n")
    out.append("#   .venv/bin/python -m pip install -r requirements.txt\n")
    framework, *pins = plan.lines
    out.append(f"{framework.requirement}\n")
    for pin in pins:
        out.append(f"# {pin.why} ({pin.source})\n{pin.requirement}\n")
    return "".join(out)
