"""What doctor reads off the detected machine: its OS, search paths, installed TensorFlow, GPUs."""

from __future__ import annotations


from stackresolve.detect.paths import pathmod
from stackresolve.knowledge.base import KnowledgeBase
from stackresolve.model.enums import Os, Severity
from stackresolve.model.finding import Finding
from stackresolve.request.build import machine_os


def os_of(machine) -> Os:
    return machine_os(machine) or Os.LINUX


def system_of(machine) -> str:
    """The OS whose conventions paths and library names follow: linux | windows | macos."""
    return machine.os.system


def path_entries(machine, system: str) -> list[str]:
    """PATH on Windows, LD_LIBRARY_PATH elsewhere: where the loader looks for the libraries TensorFlow opens."""
    env = machine.env or {}
    if system == "windows":
        value = env.get("PATH") or env.get("Path") or ""
        return [p.strip().strip('"') for p in value.split(";") if p.strip()]
    return [p for p in (env.get("LD_LIBRARY_PATH") or "").split(":") if p]


def norm_dir(system: str, path: str) -> str:
    p = pathmod(system).normpath(path)
    return p.lower() if system == "windows" else p


def installed_tensorflow(machine):
    fws = [f for f in machine.frameworks if f.name == "tensorflow" and f.version]
    # on Windows, tensorflow >= 2.11 is a metapackage over tensorflow-intel: report the one the user installed
    return next((f for f in fws if f.package != "tensorflow-intel"), fws[0] if fws else None)


def gpu_cc(kb: KnowledgeBase, gpu) -> tuple[str | None, str]:
    """A GPU's compute capability and where it came from; looked up by name where no probe reported it."""
    if gpu.compute_capability:
        return gpu.compute_capability, gpu.compute_capability_source or gpu.source
    known = kb.find_gpu(gpu.name) if gpu.name else None
    return (known.cc, f"{gpu.source} + gpus.toml ({known.source})") if known else (None, gpu.source)


def gpu_label(gpu) -> str:
    """How findings name a GPU: its index and name, without the closing parenthesis (callers add facts)."""
    return f"GPU {gpu.index} ({gpu.name or 'unnamed'}"


def unknown_cc_finding(gpu, framework: str) -> Finding:
    """The warning for a GPU whose compute capability neither a probe nor the GPU table gives."""
    return Finding(Severity.WARNING, "compute-capability-unknown",
                   f"{gpu_label(gpu)}): compute capability unknown, so its support by {framework} is unchecked",
                   "set STACKRESOLVE_GPU_CC=X.Y", gpu.source)


def machine_summary(machine) -> dict:
    tf = installed_tensorflow(machine)
    py = machine.python
    return {
        "os": os_of(machine).value,
        "arch": machine.os.arch,
        "driver": ({"version": machine.driver.version, "cuda_max": machine.driver.cuda_max,
                    "source": machine.driver.source} if machine.driver else None),
        "gpus": [{"name": g.name, "compute_capability": g.compute_capability, "source": g.source}
                 for g in machine.gpus],
        "python": ({"version": py.version, "executable": py.executable} if py else None),
        "tensorflow": ({"package": tf.package, "version": tf.version, "cuda": tf.cuda, "cudnn": tf.cudnn,
                        "gpu_build": tf.gpu_build} if tf else None),
        "pytorch": _framework_summary(machine, "pytorch"),
        "jax": _framework_summary(machine, "jax"),
        "cuda_toolkits": [{"version": t.version, "path": t.path, "source": t.source} for t in machine.cuda_toolkits],
        "cudnn": [{"version": c.version, "path": c.path, "source": c.source} for c in machine.cudnn],
        "packages": {p.name: p.version for p in (py.packages if py else ())},
    }


def _framework_summary(machine, name: str) -> dict | None:
    f = next((x for x in machine.frameworks if x.name == name and x.version), None)
    if f is None:
        return None
    return {"package": f.package, "version": f.version, "variant": f.variant, "cuda": f.cuda,
            "gpu_build": f.gpu_build}
