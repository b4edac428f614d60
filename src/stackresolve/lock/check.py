"""`stackresolve check stackresolve.lock`: does this machine match a committed lock? Pure comparison.

It compares the facts it has (detected, or given by flags) and lists the others as "not checked"; the rules are
the knowledge layer's (rules.py), the same ones the resolver used to make the lock. `--before-install` compares
only what exists before anything is installed: the OS, the GPUs and the driver.
"""

from __future__ import annotations

import json

from packaging.version import Version

from stackresolve.knowledge.base import KnowledgeBase
from stackresolve.knowledge.records import CompiledArch
from stackresolve.knowledge.rules import (branch_release_needed, classify_support, cuda_runtime_serves, cudnn_accepts,
                                          cudnn_rule_text, driver_meets)
from stackresolve.formats.lock_read import LockedStack
from stackresolve.model.enums import Delivery, GpuSupport
from stackresolve.model.record import record
from stackresolve.model.values import ComputeCapability
from stackresolve.request.build import machine_os

# What check can compare; a machine description says which of these it observed.
FACTS = ("os", "gpus", "driver", "python", "framework", "cuda", "cudnn")
# Before installing: the machine, and the Python the install will use (found as `install` finds it, or named).
BEFORE_INSTALL = ("os", "gpus", "driver", "python")


@record
class Difference:
    component: str
    expected: str
    found: str
    message: str

    def to_json(self) -> dict:
        return dict(self.__dict__)


@record
class CheckResult:
    differences: tuple[Difference, ...]
    not_checked: tuple[tuple[str, str], ...]  # (component, why)

    @property
    def matches(self) -> bool:
        return not self.differences


def check_lock(lock: LockedStack, kb: KnowledgeBase, machine, observed: frozenset[str],
               before_install: bool = False, python_missing: str | None = None,
               driver_missing: str = "no NVIDIA driver was found (pass --driver to check another machine)") -> CheckResult:
    """Compare a machine (stackresolve.detect.Machine) with a lock. `observed` names the facts the machine
    description really holds (detection observes all; flags only what they give). `python_missing`: before
    installing, why no Python for the lock was found and how to get one; `driver_missing`: what to say when no
    driver was found (install's own words: its --driver chooses a plan, it does not describe this machine)."""
    wanted = BEFORE_INSTALL if before_install else FACTS
    diffs: list[Difference] = []
    skipped: list[tuple[str, str]] = []

    def unknown(component: str, why: str = "not observed (no detection, and no flag gives it)") -> None:
        skipped.append((component, why))

    for component in FACTS:
        if component not in wanted:
            unknown(component, "--before-install: compared after installing")
        elif component not in observed:
            unknown(component)
    active = [c for c in wanted if c in observed]

    if "os" in active:
        found = machine_os(machine)
        if found is not None and found is not lock.os:
            diffs.append(Difference("os", lock.os.value, found.value, f"the lock was made for {lock.os}"))
    gpu_stack = lock.delivery is not None
    if "gpus" in active and gpu_stack:
        diffs += _check_gpus(lock, kb, machine)
    if "gpus" in active and lock.accelerator:
        diffs += _check_accelerator(lock, machine)
    if "driver" in active and gpu_stack and lock.driver_min:
        diffs += _check_driver(lock, machine, unknown, driver_missing)
    if "python" in active:
        python = machine.python.version if machine.python else None
        if python:
            have = Version(".".join(python.split(".")[:2]))
            if not Version(lock.python_min) <= have <= Version(lock.python_max):
                diffs.append(Difference("python", _python_range(lock), python,
                                        f"{lock.label} has no build for Python {have}"))
        elif before_install:
            diffs.append(Difference("python", _python_range(lock), "none on this machine",
                                    python_missing or f"{lock.label} needs Python {_python_range(lock)}"))
        else:
            unknown("python", "no Python was found")
    if "framework" in active:
        diffs += _check_framework(lock, machine)
    if lock.delivery is Delivery.SYSTEM:
        if "cuda" in active:
            diffs += _check_cuda(lock, machine)
        if "cudnn" in active:
            diffs += _check_cudnn(lock, machine)
    elif lock.delivery is not None:
        for component in ("cuda", "cudnn"):
            if component in active:
                unknown(component, f"CUDA and cuDNN come {DELIVERY_WORDS.get(lock.delivery, '')} with the "
                                   f"framework")
    return CheckResult(tuple(diffs), tuple(dict.fromkeys(skipped)))


def _python_range(lock: LockedStack) -> str:
    return lock.python_min if lock.python_min == lock.python_max else f"{lock.python_min} - {lock.python_max}"


DELIVERY_WORDS = {Delivery.PIP_WHEELS: "as pip wheels", Delivery.CONTAINER: "inside the container",
                  Delivery.BUNDLED: "inside the wheel"}


def _check_framework(lock: LockedStack, machine) -> list[Difference]:
    """The installed framework against the lock's: the release (public version; a local label such as +cu124
    only where the lock pins one) and PyTorch's CUDA variant."""
    name = lock.framework_name
    installed = next((f for f in machine.frameworks if f.name == name and f.version), None)
    if installed is None:
        return [Difference(name, lock.version, "not installed", f"{lock.label} is not installed")]
    want, have = Version(lock.version), Version(installed.version)
    same = want == have if want.local else want.public == have.public
    if not same:
        return [Difference(name, lock.version, installed.version, f"a different {lock.framework} is installed")]
    variant = getattr(installed, "variant", None)
    if lock.variant and variant and variant != lock.variant:
        return [Difference(name, lock.variant, variant, f"{lock.label} is the {lock.variant} build; the installed "
                                                         f"one is {variant}")]
    return []


def _gpu_cc(kb: KnowledgeBase, gpu) -> str | None:
    if gpu.compute_capability:
        return gpu.compute_capability
    known = kb.find_gpu(gpu.name) if gpu.name else None
    return known.cc if known else None


def _check_gpus(lock: LockedStack, kb: KnowledgeBase, machine) -> list[Difference]:
    if not machine.gpus:
        return [Difference("gpu", "an NVIDIA GPU", "none", f"{lock.label} is a GPU stack; no NVIDIA GPU was found")]
    if lock.sass is None:
        return []
    arch = CompiledArch(line=lock.line, sass=lock.sass, ptx=lock.ptx or (), source="lock")
    diffs = []
    for gpu in machine.gpus:
        cc = _gpu_cc(kb, gpu)
        name = gpu.name or f"GPU {gpu.index}"
        if cc is None:
            continue
        if classify_support(arch, ComputeCapability.parse(cc)) is GpuSupport.UNSUPPORTED:
            diffs.append(Difference("gpu", f"a GPU {lock.label} has kernels for", f"{name} ({cc})",
                                    f"{lock.label} has no kernels for compute capability {cc}"))
    return diffs


def _check_accelerator(lock: LockedStack, machine) -> list[Difference]:
    """An AMD stack against the machine's gfx targets (the wheel carries each, or the lock planned it through the
    unofficial override); an Intel stack needs an Intel GPU."""
    if lock.accelerator == "intel":
        if getattr(machine, "intel_gpus", ()):
            return []
        return [Difference("gpu", "an Intel GPU", "none", f"{lock.label} is an XPU stack; no Intel GPU was found")]
    gpus = getattr(machine, "amd_gpus", ())
    if not gpus:
        return [Difference("gpu", "an AMD GPU", "none", f"{lock.label} is a ROCm stack; no AMD GPU was found")]
    diffs = []
    for gpu in gpus:
        if gpu.gfx in lock.override_targets and gpu.gfx not in lock.compiled_gfx:
            # it runs the wheel only through the unofficial override: the variable must be set where Python starts
            # (the environment is a detected fact: without detection, --no-detect, it was not observed)
            wanted, found = lock.hsa_override, (getattr(machine, "env", None) or {}).get("HSA_OVERRIDE_GFX_VERSION")
            if getattr(machine, "probes", ()) and found != wanted:
                diffs.append(Difference(
                    "gpu", f"HSA_OVERRIDE_GFX_VERSION={wanted}", f"{found!r}" if found else "not set",
                    f"{gpu.name or f'GPU {gpu.index}'} ({gpu.gfx}) runs {lock.label} only with "
                    f"HSA_OVERRIDE_GFX_VERSION={wanted} set (unofficial): export it before Python starts"))
            continue
        if gpu.gfx in lock.compiled_gfx:
            continue
        diffs.append(Difference("gpu", f"a gfx target {lock.label} carries ({', '.join(lock.compiled_gfx)})",
                                f"{gpu.name or f'GPU {gpu.index}'} ({gpu.gfx})",
                                f"{lock.label} has no code for {gpu.gfx}: it would fail with hipErrorNoBinaryForGpu"))
    return diffs


def _check_driver(lock: LockedStack, machine, unknown, missing: str) -> list[Difference]:
    driver = machine.driver.version if machine.driver else None
    if driver is None:
        return [Difference("driver", f">= {lock.driver_min}", "none detected", missing)]
    # The plan's rule (rules.driver_meets): a bare branch (--driver 525, STACKRESOLVE_DRIVER=525) stands for its
    # releases, so the plan it made and this check agree; which release of the branch is installed is not known.
    # NVIDIA's minor-version compatibility: the lock records its minimum only where the build is native
    minimums = [m for m in (lock.driver_min, lock.driver_minor_compat_min) if m]
    met = next((m for m in minimums if driver_meets(driver, m)), None)
    if met is None:
        return [Difference("driver", f">= {lock.driver_min}", driver, f"CUDA {lock.cuda} needs a newer driver")]
    release = branch_release_needed(driver, met)
    if release:
        unknown("driver", f"R{driver} stands for its releases: the lock needs {release} or a later release of it, "
                          f"which a branch number does not show (`nvidia-smi --query-gpu=driver_version "
                          f"--format=csv,noheader` does)")
    return []


def _check_cuda(lock: LockedStack, machine) -> list[Difference]:
    found = [t.full_version or t.version for t in machine.cuda_toolkits]
    if any(cuda_runtime_serves(v, lock.cuda) == "ok" for v in found):
        return []
    return [Difference("cuda", lock.cuda, ", ".join(found) or "none detected",
                       f"{lock.label} loads the CUDA {lock.cuda} libraries")]


def _check_cudnn(lock: LockedStack, machine) -> list[Difference]:
    found = [c.version for c in machine.cudnn]
    if any(cudnn_accepts(lock.cudnn_compiled, v) for v in found):
        return []
    return [Difference("cudnn", cudnn_rule_text(lock.cudnn_compiled), ", ".join(found) or "none detected",
                       f"{lock.label} was compiled with cuDNN {lock.cudnn_compiled}; the lock installs "
                       f"{lock.cudnn_installs}")]


def render_text(lock: LockedStack, result: CheckResult) -> str:
    head = f"stackresolve check: {lock.label} (lock from knowledge base {lock.knowledge_base})"
    lines = [head]
    if result.matches:
        lines.append("this machine matches the lock" + (" in every fact checked" if result.not_checked else ""))
    else:
        lines.append(f"{len(result.differences)} difference(s):")
        lines += [f"  {d.component}: expected {d.expected}, found {d.found}: {d.message}" for d in result.differences]
    if result.not_checked:
        lines.append("not checked:")
        lines += [f"  {component}: {why}" for component, why in result.not_checked]
    return "\n".join(lines) + "\n"


def render_json(result: CheckResult) -> str:
    """The stackresolve/check@1 document (a JSON lock's check, a full lock's, or a full lock's Python before
    installing)."""
    return json.dumps({"schema": "stackresolve/check@1", "matches": result.matches,
                       "differences": [d.to_json() for d in result.differences],
                       "not_checked": [{"component": c, "why": w} for c, w in result.not_checked]},
                      indent=2) + "\n"


# -- full locks (plan --format pip --lock) -------------------------------------------------------------------
def parse_full_lock(text: str, name: str) -> dict[str, str]:
    """{project: version} of a requirements.txt full lock (`name==version` lines, hashes and comments aside)."""
    # lazy: start-up (packaging.requirements ~8 ms)
    from packaging.requirements import InvalidRequirement, Requirement
    from packaging.utils import canonicalize_name

    from stackresolve.model.numbers import MAX_PIN_DIGITS, parse_version
    from stackresolve.request.build import InputError

    pins: dict[str, str] = {}
    logical = text.replace("\\\n", " ")
    for number, line in enumerate(logical.splitlines(), 1):
        line = line.split("#", 1)[0].strip()
        if not line or line.startswith("-"):
            continue
        requirement = line.split(" --hash", 1)[0].strip()
        try:
            req = Requirement(requirement)
        except InvalidRequirement:
            raise InputError(f"{name}: not a stackresolve lock file (neither the JSON lock of `plan --format lock` nor "
                             f"a full lock of `plan --format pip --lock`: line {number} is not a requirement)") from None
        exact = [s.version for s in req.specifier if s.operator == "=="]
        if len(exact) != 1:
            raise InputError(f"{name}: line {number} does not pin one version ({requirement[:80]!r}); a full lock "
                             f"pins every package with ==")
        if parse_version(exact[0], MAX_PIN_DIGITS) is None:
            raise InputError(f"{name}: line {number} pins no version ({requirement[:80]!r})")
        pins[canonicalize_name(req.name)] = exact[0]
    if not pins:
        raise InputError(f"{name}: no pinned requirement found; make a full lock with `stackresolve plan --format pip "
                         f"--lock`")
    return pins


def check_full_lock(pins: dict[str, str], machine) -> CheckResult:
    """Every pinned package installed at exactly its version (in the interpreter detection inspected)."""
    if machine.python is None:
        return CheckResult((), (("packages", "no Python was inspected"),))
    installed = {p.name: p.version for p in machine.python.packages}
    diffs = []
    for name, version in pins.items():
        have = installed.get(name)
        if have is None:
            diffs.append(Difference(name, version, "not installed", "the lock pins it"))
        elif Version(have) != Version(version):
            diffs.append(Difference(name, version, have, "another version is installed"))
    return CheckResult(tuple(diffs), ())
