"""Detection of the machine: GPUs, compute capability, driver, CUDA toolkits, cuDNN, Python, TensorFlow, PyTorch,
JAX, OS.

    from stackresolve.detect import detect_machine, render_text
    m = detect_machine()                 # Machine (frozen dataclass)
    m.to_json_dict()                     # the "stackresolve/detect@1" document
    print(render_text(m))

    # with the knowledge base's tables (detect reads no TOML itself; the caller passes look-ups):
    from stackresolve.knowledge.loader import knowledge, nvidia_pci_ids
    m = detect_machine(gpu_lookup=lambda name: knowledge().find_gpu(name), pci_table=nvidia_pci_ids)

One budget covers every command detection runs (STACKRESOLVE_DETECT_TIMEOUT seconds, default 5, or
`timeout_total=`): a probe that misses it is killed with its process group and reported as timed out.

Overrides read by detect_machine (recorded with source "env:NAME"):
    STACKRESOLVE_DRIVER=535.104.05    driver version
    STACKRESOLVE_GPU_CC=8.6[,7.5]     compute capability (one for all GPUs, or one per GPU); creates GPUs when none
                                      was detected (docker build, CI)
    CONDA_OVERRIDE_CUDA=12.2          highest CUDA version the driver supports (conda's convention)

A GPU's compute_capability is None when no probe could report it (nvidia-smi of R470 drivers refuses the
compute_cap field; the banner never shows it) and the injected `gpu_lookup` does not know its name; with the
look-up, the value comes from the GPU table and compute_capability_source says "<probe> + gpus.toml".

`probe_libraries(names, search_dirs)` tries to load shared libraries (libcudart.so.10.0, cudnn64_7.dll) the way
TensorFlow's loader would, in a child process with a timeout, and says which load and from where.

Submodules are imported on first use, so `import stackresolve.detect` costs almost nothing.
"""

from __future__ import annotations

from typing import TYPE_CHECKING

__all__ = [
    "detect_machine", "render_text", "Machine", "OSInfo", "DriverInfo", "GpuInfo", "ToolkitInfo", "CudnnInfo",
    "PythonInfo", "PackageInfo", "FrameworkInfo", "Finding", "ProbeRecord", "LocalFS", "SubprocessRunner",
    "CommandNotFound", "CommandTimeout", "CommandOutputTooLarge", "Deadline", "BudgetedRunner", "budget_seconds",
    "SCHEMA", "probe_libraries",
]

_WHERE = {
    "detect_machine": "machine",
    "render_text": "render",
    "LocalFS": "fs",
    "SubprocessRunner": "runner",
    "CommandNotFound": "runner",
    "CommandTimeout": "runner",
    "CommandOutputTooLarge": "runner",
    "Deadline": "runner",
    "BudgetedRunner": "runner",
    "budget_seconds": "runner",
    "probe_libraries": "libload",
}
_MODEL = {"Machine", "OSInfo", "DriverInfo", "GpuInfo", "ToolkitInfo", "CudnnInfo", "PythonInfo", "PackageInfo",
          "FrameworkInfo", "Finding", "ProbeRecord", "SCHEMA"}

if TYPE_CHECKING:  # pragma: no cover
    from .fs import LocalFS
    from .libload import probe_libraries
    from .machine import detect_machine
    from stackresolve.model.machine import (SCHEMA, CudnnInfo, DriverInfo, Finding, FrameworkInfo, GpuInfo, Machine, OSInfo,
                        PackageInfo, ProbeRecord, PythonInfo, ToolkitInfo)
    from .render import render_text
    from .runner import (BudgetedRunner, CommandNotFound, CommandOutputTooLarge, CommandTimeout, Deadline,
                         SubprocessRunner, budget_seconds)


def __getattr__(name: str):
    # lazy: no start-up gain (already loaded by then); kept beside its use
    import importlib

    if name in _MODEL:
        mod = importlib.import_module(".model", __name__)
    elif name in _WHERE:
        mod = importlib.import_module("." + _WHERE[name], __name__)
    else:
        raise AttributeError(f"module {__name__!r} has no attribute {name!r}")
    value = getattr(mod, name)
    globals()[name] = value
    return value
