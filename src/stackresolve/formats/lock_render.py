"""`--format lock`: stackresolve.lock, the resolved stack as JSON for bootstrap scripts to commit (its typed reading:
stackresolve.lock).

The lock carries, besides the whole stack, the facts `check` compares ("check" section): the OS, the Python
range, the framework, where CUDA comes from, the CUDA line, the cuDNN the build was compiled with, the driver
floors and the compiled GPU code. `check` reads only those, so `plan` and `check` cannot disagree.

JSON rather than TOML: the standard library writes it, and every bootstrap language reads it.
"""

from __future__ import annotations

import json

from stackresolve import __version__
from stackresolve.formats.pip_decide import PipPlan
from stackresolve.formats.script import requirement_lines
from stackresolve.formats.lock_read import SCHEMA
from stackresolve.model.stack import Resolution


def render(plan: PipPlan) -> str:
    requirement_lines(plan)
    return json.dumps(document(plan.resolution, plan), indent=2, sort_keys=False) + "\n"


def document(resolution: Resolution, pip: PipPlan) -> dict:
    """The lock. `pip` is a requirements file's lines as the pip plan installs them (the index option of a build
    on another index first: `pip install -r` of them installs the stack); `pip_first` what must be installed in
    a pip run of its own before them (empty: NVIDIA's 1.15 builds name NVIDIA's index in `pip` instead of
    installing nvidia-pyindex; the field stays for readers of the schema)."""
    stack = resolution.stack
    fw = stack.framework
    return {
        "schema": SCHEMA,
        "generated_by": f"stackresolve {__version__}",
        "knowledge_base": resolution.kb_version,
        "request": resolution.request.to_json(),
        "stack": stack.to_json(),
        "pip_first": list(pip.pre_install),
        "pip": list(pip.requirements_file),
        "check": {
            "os": resolution.request.os.value,
            "python": {"min": stack.python.min, "max": stack.python.max},
            "framework": {"name": fw.name, "distribution": fw.distribution, "version": fw.version,
                          "line": fw.line, "label": fw.label, "variant": fw.variant},
            "delivery": stack.delivery.value if stack.delivery else None,
            "cuda": stack.cuda.version if stack.cuda else None,
            "cudnn": {"installs": stack.cudnn.version, "compiled": stack.cudnn.compiled} if stack.cudnn else None,
            "driver": {"min": stack.driver.minimum, "minor_compat_min": stack.driver.minor_compat_minimum}
            if stack.driver else None,
            "compiled_arch": {"sass": list(stack.compiled.sass), "ptx": list(stack.compiled.ptx)}
            if stack.compiled and stack.cuda else None,
        } | _accelerator_check(resolution),
    }



def _accelerator_check(resolution: Resolution) -> dict:
    """An AMD or Intel stack's GPU facts for `check` (resolve/rocm.py): the vendor, the gfx targets the wheel
    carries, the targets planned for and the unofficial override they need ({} for other stacks)."""
    gpu = resolution.stack.gpu
    if gpu.vendor not in ("amd", "intel"):
        return {}
    return {"accelerator": {"vendor": gpu.vendor, "compiled_gfx": list(gpu.compiled_gfx),
                            "targets": [a.gfx for a in resolution.request.accelerators if a.gfx],
                            "hsa_override": gpu.hsa_override or None, "name": gpu.name}}
