"""`--format pip`: renders the pip plan as a requirements file, each pin with its reason."""

from __future__ import annotations

from stackresolve.formats.header import comment_header
from stackresolve.formats.script import one_line, requirement_lines, wrapped_comment
from stackresolve.formats.pip_decide import PipPlan, pip_upgrade


def render(plan: PipPlan) -> str:
    resolution, stack = plan.resolution, plan.resolution.stack
    out = [comment_header(resolution, "pip")]
    requirement_lines(plan)
    if not plan.lines:
        return "".join(out) + (f"# This stack is NVIDIA's NGC container {stack.framework.container}: it has no pip "
                               f"plan.\n# Use --format dockerfile, or run it directly:\n"
                               f"#   docker run --gpus all -it --rm {stack.framework.container}\n")
    if plan.cuda_note:
        out.append(wrapped_comment(plan.cuda_note))
    if stack.gpu.override_note:
        out.append(wrapped_comment(stack.gpu.override_note) + f"#   export {stack.gpu.override_env}\n")
    py = plan.python
    python = stack.python
    windows = resolution.request.os.value == "windows"
    venv_python = r".venv\Scripts\python" if windows else ".venv/bin/python"
    make_venv = f"py -{py} -m venv .venv" if windows else f"python{py} -m venv .venv"
    upgrade = pip_upgrade(py)
    out.append(f"# Python {py} (wheels exist for {python.available[0]} - {python.available[-1]}):\n"
               f"#   {make_venv} && {venv_python} -m pip install --upgrade {upgrade}\n")
    if upgrade != "pip":
        out.append(wrapped_comment(f"(the venv's own pip is too old for today's wheels: it would build packages such "
                                   f"as grpcio from source; {upgrade} is the newest pip for Python {py})"))
    for package in plan.pre_install:
        out.append(f"#   {venv_python} -m pip install {package}   (first: it adds the index the next step "
                   f"needs)\n")
    out.append(f"#   {venv_python} -m pip install -r requirements.txt\n")
    if python.sources:
        # one command a line (the " | " list of how_to_get_line ran to 250 characters), marked "- ": a "#   "
        # line is one of the plan's own instructions
        out.append(f"# No Python {py} here? to get Python {py}:\n"
                   + "".join(f"# - {one_line(source.command)}\n" for source in python.sources))
    if plan.index_args:
        fw = stack.framework
        where = "find-links page" if fw.index_option == "--find-links" else "index"
        build = f"{fw.distribution} {fw.version}" + (f" ({fw.variant})" if fw.variant else "")
        out.append(f"# {build} installs from this {where} (pip reads the option from this file):\n")
        if fw.index_option == "--extra-index-url":
            # uv's default strategy takes each name from the first index that has it (uv docs, "Index strategy")
            out.append("# with uv: uv pip install --index-strategy unsafe-best-match -r requirements.txt\n")
        out.append(f"{plan.index_line}\n")
    framework, *pins = plan.lines
    out.append(f"{framework.requirement}\n")
    for pin in pins:
        out.append(f"{wrapped_comment(f'{pin.why} ({pin.source})')}{pin.requirement}\n")
    return "".join(out)
