"""The requirements the resolver weighs, one small class per kind: which component it is on (`name`), which
candidates satisfy it (`is_satisfied_by`), and the fact behind it with its source (`text`, `source`), which a
conflict shows. A requirement's `key` names its test: two requirements with the same key accept the same
candidates, so the provider remembers per pool which candidates pass (a matrix meets the same requirements in
thousands of cells). Keys hold texts and numbers, which hash in C (they are hashed in every search).

The components' own base classes carry what the provider needs to find a component's candidates: the CUDA line a
CUDA or cuDNN requirement admits, the cuDNN the plans prefer and the channels that carry it, the lowest driver a
driver requirement accepts."""

from __future__ import annotations

from typing import ClassVar

from packaging.version import Version

from stackresolve.knowledge.rules import CUDNN_RULE_SOURCE, cuda_line_fits, cudnn_accepts, cudnn_rule_text
from stackresolve.model.enums import Framework, GpuSupport, Os
from stackresolve.model.values import DriverVersion
from stackresolve.request.build import GpuTarget
from stackresolve.resolve.candidates import (
    CudaCandidate,
    CudnnCandidate,
    DriverCandidate,
    FrameworkCandidate,
    PythonCandidate,
    support_on,
)

ARCH_SOURCES = {
    Framework.TENSORFLOW: "tensorflow.toml [[compiled_arch]] (CUDA code found in the official wheels per release "
                          "line)",
    Framework.PYTORCH: "pytorch.toml [[variant]] sass/ptx (CUDA code in torch's kernels per variant)",
    Framework.JAX: "jax.toml [[compiled_arch]] (CUDA code in the plugin wheels) and [[release]] cc_min",
}


# Not @record: an object of resolvelib's protocol with behaviour per subclass, made at every resolver step.
class Requirement:
    """A requirement on one component, with the fact behind it (shown when resolution fails)."""

    __slots__ = ("text", "source", "key")
    name: ClassVar[str]

    def __init__(self, text: str, source: str, key: tuple | None):
        self.text = text
        self.source = source
        self.key = key  # None: not worth remembering (the driver's one-candidate pool)

    def is_satisfied_by(self, candidate) -> bool:
        raise NotImplementedError

    def __repr__(self) -> str:
        return f"{type(self).__name__}({self.text!r})"


def _still_supports(gpu: GpuTarget, library: str, source: str) -> tuple[str, str, tuple]:
    """(text, source, key) of "this GPU needs a library that still supports it" (the record's arch_min)."""
    return (f"{gpu.label} needs a {library} that still supports compute capability {gpu.cc}", source,
            (library, gpu.cc))


# -- framework ------------------------------------------------------------------------------------------------
class FrameworkRequirement(Requirement):
    __slots__ = ()
    name = "framework"


class RequestedBuild(FrameworkRequirement):
    """The request itself: one of the builds that match its version, vendor and platform."""

    __slots__ = ("builds",)

    def __init__(self, builds: frozenset[FrameworkCandidate], text: str):
        self.builds = builds  # candidates are equal only to themselves
        super().__init__(text, "request", ("requested", self.builds))

    def is_satisfied_by(self, candidate: FrameworkCandidate) -> bool:
        return candidate in self.builds


class HasCodeFor(FrameworkRequirement):
    """A GPU needs a build with machine code (SASS) or PTX it can run."""

    __slots__ = ("cc",)

    def __init__(self, gpu: GpuTarget, framework: Framework):
        self.cc = gpu.capability
        super().__init__(f"{gpu.label} needs a {framework.display} build with SASS or PTX for it",
                         ARCH_SOURCES[framework], ("code-for", gpu.cc))

    def is_satisfied_by(self, candidate: FrameworkCandidate) -> bool:
        return support_on(candidate, self.cc) is not GpuSupport.UNSUPPORTED


# -- python ---------------------------------------------------------------------------------------------------
class PythonRequirement(Requirement):
    __slots__ = ("versions",)
    name = "python"

    def __init__(self, versions: tuple[str, ...], text: str, source: str):
        self.versions = versions
        super().__init__(text, source, ("python", versions))

    def is_satisfied_by(self, candidate: PythonCandidate) -> bool:
        return candidate.version in self.versions


class BuildPythons(PythonRequirement):
    """A build has wheels (or a container) for these Pythons only."""

    __slots__ = ()

    def __init__(self, fw: FrameworkCandidate, platform: str):
        super().__init__(fw.pythons, f"{fw.label} has {platform} builds for Python {', '.join(fw.pythons) or 'none'}",
                         fw.source)


class PythonAsked(PythonRequirement):
    __slots__ = ()

    def __init__(self, python: str):
        super().__init__((python,), f"Python {python} was asked for (--python)", "request")


# -- CUDA -----------------------------------------------------------------------------------------------------
class CudaRequirement(Requirement):
    __slots__ = ()
    name = "cuda"
    line: str | None = None  # the one CUDA line it admits, where it admits one


class BuildCuda(CudaRequirement):
    """A build loads (or its wheels bring) one CUDA line."""

    __slots__ = ("line",)

    def __init__(self, fw: FrameworkCandidate, os: Os):
        self.line = fw.cuda
        if fw.framework is Framework.PYTORCH:
            text, source = f"{fw.label} is built for CUDA {fw.cuda}", fw.source
        elif fw.framework is Framework.JAX:
            text = (f"{fw.label} [{','.join(fw.extras)}] installs CUDA {fw.cuda} or a newer "
                    f"{fw.cuda.split('.')[0]}.x as pip wheels")
            source = fw.source
        else:
            how = "pins" if fw.cuda_release and fw.extras else "uses"
            text = f"{fw.label} {how} CUDA {fw.cuda}" + ("" if fw.nvidia or fw.cuda_release else
                                                       f" (TensorFlow's tested build for {os.wheel_os})")
            source = fw.build.source if fw.build else fw.source
        super().__init__(text, source, ("cuda-line", fw.cuda))

    def is_satisfied_by(self, candidate: CudaCandidate) -> bool:
        return candidate.toolkit.version == self.line


class CudaSupports(CudaRequirement):
    """A GPU needs a CUDA toolkit that still supports its compute capability (arch_min)."""

    __slots__ = ("cc",)

    def __init__(self, gpu: GpuTarget):
        self.cc = gpu.capability
        super().__init__(*_still_supports(gpu, "CUDA toolkit", "cuda.toml [[toolkit]] arch_min (NVIDIA CUDA release "
                                                               "notes)"))

    def is_satisfied_by(self, candidate: CudaCandidate) -> bool:
        return candidate.toolkit.min_cc <= self.cc


# -- cuDNN ----------------------------------------------------------------------------------------------------
class CudnnRequirement(Requirement):
    __slots__ = ()
    name = "cudnn"
    cuda: str | None = None  # the CUDA line it needs a build for
    prefer: str | None = None  # the cuDNN to try first (the plans' choice)
    channels: tuple[str, ...] | None = None  # the install channels that carry it in the plans (None: all)


class BuildCudnn(CudnnRequirement):
    """A build brings one exact cuDNN (the and-cuda pin, NVIDIA's build, a container)."""

    __slots__ = ("version", "cuda", "prefer")

    def __init__(self, fw: FrameworkCandidate, prefer: str | None):
        self.version, self.cuda, self.prefer = Version(fw.cudnn_fixed), fw.cuda, prefer
        super().__init__(f"{fw.label} brings cuDNN {fw.cudnn_fixed}", fw.source,
                         ("cudnn-exact", fw.cudnn_fixed, fw.cuda))

    def is_satisfied_by(self, candidate: CudnnCandidate) -> bool:
        return candidate.key == self.version and cuda_line_fits(candidate.build.cuda, self.cuda)


class CompiledCudnn(CudnnRequirement):
    """TensorFlow loads the cuDNN it was compiled with, or a newer minor of its major (CUDNN_RULE_SOURCE)."""

    __slots__ = ("compiled", "cuda", "prefer", "channels")

    def __init__(self, fw: FrameworkCandidate, prefer: str | None):
        compiled = fw.cudnn_compiled
        self.compiled, self.cuda, self.prefer = compiled, fw.cuda, prefer
        # NVIDIA's wheels install with pip, not apt (formats/apt_decide.py refuses them): conda is their channel for cuDNN
        self.channels = ("conda",) if fw.nvidia else None
        source = fw.build.source if fw.build else fw.source
        super().__init__(f"TensorFlow {fw.line.version} was compiled with cuDNN {compiled}: it loads cuDNN "
                         f"{cudnn_rule_text(compiled)} built for CUDA {fw.cuda}", f"{source}; {CUDNN_RULE_SOURCE}",
                         ("cudnn-compiled", compiled, fw.cuda))

    def is_satisfied_by(self, candidate: CudnnCandidate) -> bool:
        return cudnn_accepts(self.compiled, candidate.release.version) and \
            cuda_line_fits(candidate.build.cuda, self.cuda)


class CudnnAsked(CudnnRequirement):
    """--cudnn 8.6: a release of that minor (or exactly that release)."""

    __slots__ = ("wanted",)

    def __init__(self, cudnn: str):
        self.wanted = Version(cudnn).release
        super().__init__(f"cuDNN {cudnn} was asked for (--cudnn)", "request", ("cudnn-asked", self.wanted))

    def is_satisfied_by(self, candidate: CudnnCandidate) -> bool:
        return candidate.key.release[:len(self.wanted)] == self.wanted


class CudnnSupports(CudnnRequirement):
    """A GPU needs a cuDNN that still supports its compute capability (arch_min)."""

    __slots__ = ("cc",)

    def __init__(self, gpu: GpuTarget):
        self.cc = gpu.capability
        super().__init__(*_still_supports(gpu, "cuDNN", "cudnn.toml [[release]] arch_min (NVIDIA cuDNN support "
                                                        "matrix)"))

    def is_satisfied_by(self, candidate: CudnnCandidate) -> bool:
        return candidate.arch_min <= self.cc


# -- driver ---------------------------------------------------------------------------------------------------
def driver_at_least(candidate: DriverCandidate, minimum: Version) -> bool:
    if candidate.detected is not None:
        return candidate.detected >= minimum
    return candidate.minimum is not None and candidate.minimum >= minimum


class DriverRequirement(Requirement):
    """The driver's pool is one candidate, made from the requirements (resolve/driver.decide_driver): nothing to
    remember per pool."""

    __slots__ = ()
    name = "driver"
    minimum: Version | None = None  # the lowest driver it accepts, where it states one
    build: FrameworkCandidate | None = None  # the build whose CUDA asks it (resolve/driver.driver_dependencies)

    def __init__(self, text: str, source: str):
        super().__init__(text, source, None)


class DriverAtLeast(DriverRequirement):
    """A driver of at least `minimum`; an installed driver of at least `compat` too, where minor-version
    compatibility carries the stack."""

    __slots__ = ("minimum", "compat", "build")

    def __init__(self, minimum: Version, text: str, source: str, compat: Version | None = None,
                 build: FrameworkCandidate | None = None):
        self.minimum, self.compat, self.build = minimum, compat, build
        super().__init__(text, source)

    def is_satisfied_by(self, candidate: DriverCandidate) -> bool:
        return driver_at_least(candidate, self.minimum) or (
            self.compat is not None and candidate.detected is not None and candidate.detected >= self.compat)


class NvidiaBuildDriver(DriverRequirement):
    """NVIDIA's TF 1.15 builds state their own driver floor; its containers run on the forward-compatible
    branches the release notes list, on data-center GPUs."""

    __slots__ = ("minimum", "compat", "build")

    def __init__(self, minimum: Version, compat: tuple[Version, ...], text: str, source: str,
                 build: FrameworkCandidate):
        self.minimum, self.compat, self.build = minimum, compat, build
        super().__init__(text, source)

    def is_satisfied_by(self, candidate: DriverCandidate) -> bool:
        if driver_at_least(candidate, self.minimum):
            return True
        return candidate.detected is not None and any(
            candidate.detected.release[0] == k.release[0] and candidate.detected >= k for k in self.compat)


class LastBranch(DriverRequirement):
    """An architecture's last driver branch: a planned driver no newer than it."""

    __slots__ = ("branch",)

    def __init__(self, branch: int, text: str, source: str):
        self.branch = branch
        super().__init__(text, source)

    def is_satisfied_by(self, candidate: DriverCandidate) -> bool:
        return candidate.minimum is None or candidate.minimum.release[0] <= self.branch


class DriverPredatesGpu(DriverRequirement):
    """A machine's own driver predates its GPU: nothing satisfies it."""

    __slots__ = ()

    def is_satisfied_by(self, candidate: DriverCandidate) -> bool:
        return False


class DriverUnstated(DriverRequirement):
    """A GPU build whose CUDA has no driver minimum NVIDIA prints for this OS: it asks nothing of the driver, and
    names the build whose plan says the minimum is unknown. Never a side of a conflict (every driver meets it)."""

    __slots__ = ("build",)

    def __init__(self, build: FrameworkCandidate):
        self.build = build
        super().__init__(f"NVIDIA gives no driver minimum for CUDA {build.cuda} here", build.source)

    def is_satisfied_by(self, candidate: DriverCandidate) -> bool:
        return True


class DriverInstalled(DriverRequirement):
    """The installed driver, named in conflicts: every candidate (the installed one) satisfies it."""

    __slots__ = ()

    def __init__(self, driver: DriverVersion):
        super().__init__(f"driver {driver} is installed", "request")

    def is_satisfied_by(self, candidate: DriverCandidate) -> bool:
        return True
