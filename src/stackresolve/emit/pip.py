"""`--format pip`: a requirements file with exact pins plus the constraints that keep it importable."""

from __future__ import annotations

from stackresolve.emit.header import comment_header
from stackresolve.resolve import Resolution


def requirement_lines(resolution: Resolution) -> list[str]:
    """The requirement lines alone (also used inside the conda, PowerShell and Docker plans)."""
    stack = resolution.stack
    fw = stack.framework.value
    if not fw.get("pip_package"):  # an NGC container: nothing to pip install
        return []
    lines = [f"{fw['pip_package']}=={fw['version']}"]
    lines += [p.requirement for p in stack.pip_pins]
    return lines


def render(resolution: Resolution, kb=None) -> str:
    stack = resolution.stack
    out = [comment_header(resolution, "pip")]
    py = stack.python.value["recommended"]
    if stack.cuda and not stack.candidate.extra:
        out.append(f"# CUDA {stack.cuda.value['version']} and cuDNN {stack.cudnn.value['version']} come from the "
                   f"system, not from pip: install them with --format apt (Ubuntu), conda or powershell (Windows).\n")
    elif stack.cuda:
        out.append(f"# CUDA {stack.cuda.value['version']} and cuDNN {stack.cudnn.value['version']} come as pip "
                   f"wheels through the [{stack.candidate.extra}] extra; only the NVIDIA driver comes from the "
                   f"system.\n")
    out.append(f"# Python {py} (wheels exist for {stack.python.value['min']} - {stack.python.value['max']}):\n"
               f"#   python{py} -m venv .venv && .venv/bin/python -m pip install -r requirements.txt\n")
    fw = stack.framework.value
    out.append(f"{fw['pip_package']}=={fw['version']}\n")
    for pin in stack.pip_pins:
        out.append(f"# {pin.why} ({pin.source})\n{pin.requirement}\n")
    return "".join(out)
