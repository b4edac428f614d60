"""The resolved stack: one typed value per component, each with the reason and the fact behind it.

The resolver builds a Stack once; the install plans, every emitter, the lock, `check`, `doctor`, `matrix` and
`explain` only read it. `to_json()` keeps the "stackresolve/plan@1" shape (fields are only ever added): a value
(a compute capability) prints as the text it was read from.

The model layer imports nothing above it, type-only imports included: what the stack holds of the knowledge base
(a pip pin, the CUDA code in a build) and the request it answers are named by the little they are read for, as
Protocols a type checker sees (knowledge.model.Pitfall, knowledge.model.CompiledArch and request.Request have
those attributes)."""

from __future__ import annotations

from dataclasses import field
from typing import TYPE_CHECKING

from stackresolve.model.enums import Delivery, Framework, GpuSupport, Severity, Vendor
from stackresolve.model.finding import Finding
from stackresolve.model.record import record
from stackresolve.model.values import ComputeCapability

if TYPE_CHECKING:  # pragma: no cover
    from typing import Protocol

    class PipPin(Protocol):
        """A pip requirement the stack adds (knowledge.model.Pitfall)."""

        requirement: str
        why: str
        source: str

    class CompiledCode(Protocol):
        """The CUDA code a build carries (knowledge.model.CompiledArch): "8.6"-style compute capabilities."""

        sass: tuple[str, ...]
        ptx: tuple[str, ...]
        source: str

    class AskedRequest(Protocol):
        """The request a resolution answers (request.Request), as the plan document prints it."""

        def to_json(self) -> dict: ...


@record
class FrameworkPin:
    name: str  # the framework: "tensorflow", "pytorch", "jax"
    version: str  # as installed: "1.15.5", "1.15.5+nv22.12"
    distribution: str | None  # the pip project: "tensorflow-gpu", "nvidia-tensorflow"; None for a container
    line: str  # "1.15"
    vendor: Vendor
    why: str
    source: str
    extras: tuple[str, ...] = ()  # ("and-cuda",), ("horovod",)
    base_version: str = ""  # the upstream TensorFlow release a vendor build is based on ("1.15.5")
    index: str | None = None  # None: the default package index; else how the other index is reached
    container: str | None = None  # an image to run instead of installing (NGC)
    vendor_release: str | None = None  # NVIDIA's release month ("22.12")
    bundled_requirements: tuple[str, ...] = ()  # what the extra pulls in (Requires-Dist), for checking an install
    variant: str | None = None  # PyTorch's CUDA variant ("cu124", "cpu")
    index_url: str | None = None  # the index or find-links page it installs from (None: the default index)
    index_option: str | None = None  # --index-url | --extra-index-url | --find-links
    local_version: str = ""  # "+cu111": the local version label the pin carries
    companions: tuple[str, ...] = ()  # requirements installed with it: torchvision, jaxlib, tensorflow-metal
    macos_min: str = ""  # the macOS its Metal build needs ("14.0"; "" where none is recorded)

    @property
    def upstream_version(self) -> str:
        return self.base_version or self.version

    @property
    def pip_package(self) -> str | None:
        """What follows `pip install` before the version: "tensorflow[and-cuda]"; None for a container."""
        if self.distribution is None:
            return None
        return self.distribution + (f"[{','.join(self.extras)}]" if self.extras else "")

    @property
    def requirement(self) -> str | None:
        return f"{self.pip_package}=={self.version}{self.local_version}" if self.pip_package else None

    @property
    def label(self) -> str:
        return self.requirement or f"container {self.container} (TensorFlow {self.upstream_version})"

    @property
    def framework(self) -> Framework:
        """The framework as the enum (`name` keeps the JSON spelling)."""
        return Framework(self.name)

    @property
    def display(self) -> str:
        """"PyTorch 2.5": the framework and its release line."""
        return f"{self.framework.display} {self.line}"

    @property
    def index_args(self) -> tuple[str, ...]:
        """The pip options that reach the build's index: ("--index-url", URL), or ()."""
        return (self.index_option, self.index_url) if self.index_url and self.index_option else ()

    def to_json(self) -> dict:
        doc = {"name": self.name, "version": self.version, "pip_package": self.pip_package, "line": self.line,
               "vendor": self.vendor.value, "index": self.index or self.index_url or "default",
               "distribution": self.distribution, "extras": list(self.extras), "variant": self.variant,
               "index_url": self.index_url, "index_option": self.index_option,
               "companions": list(self.companions)}
        if self.vendor is Vendor.NVIDIA:
            doc.update({"tf_base": self.base_version, "ngc_release": self.vendor_release})
        if self.container:
            doc["container"] = self.container
        if self.macos_min:
            doc["macos_min"] = self.macos_min
        return {**doc, "why": self.why, "source": self.source}


@record
class PythonPin:
    available: tuple[str, ...]  # every CPython minor with an installable build, oldest first
    allowed: tuple[str, ...]  # of those, what the request allows
    recommended: str
    why: str
    source: str
    # where the recommended Python comes from when the machine lacks it (knowledge.python_sources); () for a
    # container, which carries its own. Derived from the Python, OS and architecture: not compared.
    sources: tuple = field(default=(), compare=False)

    @property
    def min(self) -> str:
        return self.allowed[0]

    @property
    def max(self) -> str:
        return self.allowed[-1]

    def to_json(self) -> dict:
        return {"min": self.min, "max": self.max, "recommended": self.recommended, "available": list(self.available),
                "why": self.why, "source": self.source, "how_to_get": [s.to_json() for s in self.sources]}


@record
class CudaPin:
    version: str  # the line, "10.0"
    release: str  # the exact release installed: toolkit "10.0.130", runtime wheel "12.2.140"
    delivery: Delivery
    why: str
    source: str

    def to_json(self) -> dict:
        return {"version": self.version, "release": self.release, "delivery": self.delivery.value, "why": self.why,
                "source": self.source}


@record
class CudnnPin:
    version: str  # what the plans install, "8.1.0"
    full_version: str  # "8.1.0.77"
    built_for_cuda: str  # "11.2" or "11.x"
    compiled: str  # the cuDNN the framework was compiled with ("8.1"): the floor of what it loads
    delivery: Delivery
    why: str
    source: str
    also_works: tuple[str, ...] = ()  # newer minors of the same major built for this CUDA (newest patch each)
    rule: str = ""  # why those also work, with its source

    def to_json(self) -> dict:
        return {"version": self.version, "full_version": self.full_version, "built_for_cuda": self.built_for_cuda,
                "compiled": self.compiled, "delivery": self.delivery.value, "also_works": list(self.also_works),
                "rule": self.rule, "why": self.why, "source": self.source}


@record
class DriverPin:
    minimum: str | None  # as NVIDIA prints it ("535.54.03"); None where NVIDIA gives no minimum
    detected: str | None
    ok: bool | None  # None: no driver known, or no minimum
    why: str
    source: str
    minor_compat_minimum: str | None = None  # the lower floor of minor-version compatibility, where it applies
    max_branch: int | None = None  # the newest driver branch that still supports every GPU (Kepler: 470)
    # decided by knowledge.rules.driver_meets where the stack was built (a branch, --driver 525, meets a minimum
    # inside it); None: compare the versions here
    below_own_minimum: bool | None = field(default=None, compare=False)

    @property
    def ok_through_minor_compat(self) -> bool:
        """The installed driver is below the CUDA line's own minimum and is ok only through NVIDIA's minor-version
        compatibility floor."""
        if not (self.ok and self.detected and self.minimum and self.minor_compat_minimum):
            return False
        if self.below_own_minimum is not None:
            return self.below_own_minimum
        # lazy: start-up (packaging.version, only this path)
        from packaging.version import InvalidVersion, Version

        try:
            return Version(self.detected) < Version(self.minimum)
        except InvalidVersion:
            return False

    def to_json(self) -> dict:
        return {"min": self.minimum, "detected": self.detected, "ok": self.ok,
                "minor_compat_min": self.minor_compat_minimum, "max_branch": self.max_branch, "why": self.why,
                "source": self.source}


@record
class GpuEntry:
    """One requested GPU and how the stack runs on it."""

    name: str | None
    cc: ComputeCapability
    architecture: str
    support: GpuSupport
    source: str

    def to_json(self) -> dict:
        return {"name": self.name, "compute_capability": str(self.cc), "architecture": self.architecture,
                "support": self.support.value, "source": self.source}


@record
class GpuPin:
    """The weakest requested GPU and the worst support over all of them."""

    name: str | None
    cc: ComputeCapability | None
    support: GpuSupport
    why: str
    source: str
    vendor: str | None = None  # "amd" | "intel" (resolve/rocm.py); None: NVIDIA's when `cc` is known, else no GPU
    gfx: str | None = None  # AMD: the gfx target planned for ("gfx1100")
    unofficial: bool = False  # AMD: runs only through the unofficial HSA_OVERRIDE_GFX_VERSION
    compiled_gfx: tuple[str, ...] = ()  # AMD: the gfx targets compiled into the wheel (what `check` compares)
    hsa_override: str = ""  # AMD: the HSA_OVERRIDE_GFX_VERSION value an unofficial plan needs

    @property
    def override_env(self) -> str:
        """"HSA_OVERRIDE_GFX_VERSION=10.3.0" when this AMD GPU runs the wheel only through that unofficial override
        (what every plan of the stack must set before Python starts); "" otherwise."""
        return f"HSA_OVERRIDE_GFX_VERSION={self.hsa_override}" if self.unofficial and self.hsa_override else ""

    @property
    def override_note(self) -> str:
        """The one sentence the plans print beside the override ("" when there is none)."""
        if not self.override_env:
            return ""
        return (f"{self.gfx or 'This GPU'} is in no wheel's targets: these wheels run on it only with "
                f"{self.override_env} set before Python starts (unofficial: AMD does not support it; kernels its "
                f"family does not share can fail)")

    def to_json(self) -> dict:
        doc = {"name": self.name, "compute_capability": None if self.cc is None else str(self.cc),
               "support": self.support.value, "why": self.why, "source": self.source,
               "vendor": self.vendor or ("nvidia" if self.cc is not None else None)}
        if self.vendor == "amd":
            doc.update({"gfx": self.gfx, "unofficial": self.unofficial, "compiled_gfx": list(self.compiled_gfx),
                        "hsa_override": self.hsa_override or None})
        return doc


@record
class Stack:
    framework: FrameworkPin
    python: PythonPin
    cuda: CudaPin | None  # None: a CPU-only stack (and then cudnn and driver are None too)
    cudnn: CudnnPin | None
    driver: DriverPin | None
    gpu: GpuPin
    gpus: tuple[GpuEntry, ...] = ()
    pip_pins: tuple["PipPin", ...] = ()
    compiled: "CompiledCode | None" = field(default=None, compare=False)  # the CUDA code in the build

    @property
    def tf_version(self) -> str:  # the framework's version (TensorFlow's name kept for old callers)
        return self.framework.version

    @property
    def delivery(self) -> Delivery | None:
        return self.cuda.delivery if self.cuda else None

    @property
    def summary(self) -> str:
        parts = [self.framework.label, f"Python {self.python.recommended}"]
        if self.cuda:
            at_least = ">= " if self.cuda.release.endswith(".x") else ""  # JAX: the newest wheels of a range
            cudnn = "cuDNN (bundled, version not recorded)" if self.cudnn is None else \
                f"cuDNN {'>= ' if not self.cudnn.full_version else ''}{self.cudnn.version}"
            parts += [f"CUDA {at_least}{self.cuda.version}", cudnn]
            if self.driver is not None:
                parts.append(f"driver >= {self.driver.minimum or '(unknown)'}")
        elif self.gpu.support is GpuSupport.METAL:
            parts.append(f"{self.gpu.name} through Metal")
        elif self.gpu.vendor == "amd":
            rocm = (self.framework.variant or "").removeprefix("rocm")
            parts.append(f"{self.gpu.name or self.gpu.gfx} through ROCm {rocm}"
                         + (" (unofficial override)" if self.gpu.unofficial else ""))
        elif self.gpu.vendor == "intel":
            parts.append(f"{self.gpu.name} through XPU")
        else:
            parts.append("CPU only")
        return ", ".join(parts)

    def to_json(self) -> dict:
        return {
            "framework": self.framework.to_json(),
            "python": self.python.to_json(),
            "cuda": self.cuda.to_json() if self.cuda else None,
            "cudnn": self.cudnn.to_json() if self.cudnn else None,
            "driver": self.driver.to_json() if self.driver else None,
            "gpu": self.gpu.to_json(),
            "gpus": [g.to_json() for g in self.gpus],
            "pip": [{"requirement": p.requirement, "why": p.why, "source": p.source} for p in self.pip_pins],
            "compiled_arch": None if self.compiled is None else {
                "sass": list(self.compiled.sass), "ptx": list(self.compiled.ptx), "source": self.compiled.source},
        }


@record
class Alternative:
    stack: Stack
    why: str
    request: "AskedRequest"

    def to_json(self) -> dict:
        return {"stack": self.stack.to_json(), "why": self.why, "request": self.request.to_json()}


@record
class ConflictCause:
    """One side of a conflict the resolver reports, as data (resolvelib's causes): findings word them later."""

    component: str  # framework | python | cuda | cudnn | driver
    text: str  # the requirement as the resolver words it
    source: str
    required_by: str  # "the request", or the build that requires it


@record
class Resolution:
    request: "AskedRequest"
    stack: Stack | None
    findings: tuple[Finding, ...]
    alternatives: tuple[Alternative, ...]
    kb_version: str
    index_data: str = ""  # "TensorFlow wheels fetched 2026-11-22, shipped; ...": the age of each kind of data used
    causes: tuple["ConflictCause", ...] = ()  # no stack: the requirements that conflict, as data (rendered late)

    @property
    def status(self) -> str:
        if self.stack is None:
            return "impossible"
        return "warning" if any(f.severity is not Severity.INFO for f in self.findings) else "ok"
