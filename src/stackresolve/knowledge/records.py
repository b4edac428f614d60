"""Typed, frozen records of the knowledge base (see constraints/README.md for the TOML shape).

Records are compared by identity (eq=False): nothing compares two records by value, and leaving out the generated
__eq__/__hash__ saves their construction at every start."""

from __future__ import annotations

from dataclasses import field
from functools import cached_property

from packaging.version import Version

from stackresolve.model.enums import Os
from stackresolve.model.record import record
from stackresolve.model.values import ComputeCapability

# Wheel platform keys of tensorflow_wheels.toml, in the order plans mention them.
WHEEL_PLATFORMS = ("linux", "linux_aarch64", "windows", "macos_x86_64", "macos_arm64")


@record(eq=False)
class SourceBuild:
    """A package a TensorFlow line's install builds from source: the version its requirements take is only an
    sdist on the package index (tensorflow.toml [[source_build]])."""

    package: str
    version: str
    lines: tuple[str, ...]
    pythons: tuple[str, ...]  # () = every Python
    why: str
    source: str
    sha256: tuple[str, ...] = ()  # the index's hashes of the release's files

    @property
    def requirement(self) -> str:
        return f"{self.package}=={self.version}"


@record(eq=False)
class TensorFlowLine:
    version: str
    gpu_package_linux: str
    gpu_package_windows: str
    and_cuda_extra: bool
    source: str
    note: str = ""
    and_cuda_blocker: str = ""  # why plans must not use the extra, when it does not install

    @cached_property
    def key(self) -> Version:
        return Version(self.version)


@record(eq=False)
class TestedBuild:
    """One row of TensorFlow's tested-build-configurations tables, as printed."""

    __test__ = False  # not a pytest test class despite the name

    os: str
    package: str
    version: str
    python: str
    python_versions: tuple[str, ...]
    compiler: str
    build_tools: str
    cuda: str
    cudnn: str
    source: str
    note: str = ""

    @cached_property
    def line(self) -> str:
        v = Version(self.version)
        return f"{v.major}.{v.minor}"

    @property
    def gpu(self) -> bool:
        return bool(self.cuda)


@record(eq=False)
class CompiledArch:
    line: str
    sass: tuple[str, ...]
    ptx: tuple[str, ...]
    source: str
    note: str = ""
    os: str = ""  # overrides only: the OS whose wheels differ from the line's record
    versions: tuple[str, ...] = ()  # overrides only: the releases it covers (empty: all of the line on `os`)


@record(eq=False)
class CudnnArtifact:
    """The cuDNN TensorFlow's own release artifacts used for a line on an OS (GPU Dockerfile, install guide,
    the and-cuda pin): what plans install by default."""

    line: str
    os: str  # linux | windows
    cuda: str
    cudnn: str  # "8.1.0", or "7.4" where the sources name only a minor
    full_version: str
    how: str  # dockerfile | install-guide | and-cuda-pin | tested-table-only | inferred
    source: str
    note: str = ""
    compiled: str = ""  # the cuDNN the wheel says it was compiled with, where that overrides the tested table


@record(eq=False)
class WheelRelease:
    """What the package index holds for one (package, version): CPython versions with a wheel per platform."""

    package: str
    version: str
    pythons: dict[str, tuple[str, ...]] = field(compare=False, hash=False)  # platform -> ("3.6", "3.7")
    yanked: bool = False
    stub: bool = False
    and_cuda: tuple[str, ...] = ()
    source: str = ""

    @cached_property
    def key(self) -> Version:
        return Version(self.version)

    @cached_property
    def line(self) -> str:
        v = self.key
        return f"{v.major}.{v.minor}"


class _ArchRange:
    """A record's arch_min / arch_max (the compute capabilities it supports, as the TOML writes them), parsed
    once, when first compared."""

    arch_min: str
    arch_max: str

    @cached_property
    def min_cc(self) -> ComputeCapability:
        return ComputeCapability.parse(self.arch_min)

    @cached_property
    def max_cc(self) -> ComputeCapability:
        return ComputeCapability.parse(self.arch_max)


@record(eq=False)
class CudaToolkit(_ArchRange):
    version: str
    releases: tuple[str, ...]
    driver_linux: str
    driver_windows: str
    compat_driver_linux: str
    compat_driver_windows: str
    arch_min: str
    arch_max: str
    released: str
    source: str
    note: str = ""

    def min_driver(self, driver_os: Os) -> str:
        """NVIDIA's minimum driver for this toolkit on an OS's driver ("" where NVIDIA prints none)."""
        return self.driver_windows if driver_os is Os.WINDOWS else self.driver_linux

    def compat_driver(self, driver_os: Os) -> str:
        """NVIDIA's minor-version-compatibility driver floor for this toolkit's major ("" before CUDA 11)."""
        return self.compat_driver_windows if driver_os is Os.WINDOWS else self.compat_driver_linux

    @cached_property
    def newest_release(self) -> str:
        return max(self.releases, key=Version) if self.releases else self.version


@record(eq=False)
class CudnnBuild:
    cuda: str  # "10.0" (that toolkit line) or "11.x" (every minor of major 11)
    full_version: str


@record(eq=False)
class CudnnRelease(_ArchRange):
    version: str
    builds: tuple[CudnnBuild, ...]
    arch_min: str
    arch_max: str
    released: str
    source: str
    note: str = ""
    extra: dict = field(default_factory=dict, compare=False, hash=False)

    @cached_property
    def key(self) -> Version:
        return Version(self.version)


@record(eq=False)
class Gpu:
    name: str
    cc: str
    architecture: str
    segment: str
    aliases: tuple[str, ...]
    source: str
    note: str = ""


@record(eq=False)
class ArchSupport:
    architecture: str
    cc: tuple[str, ...]
    last_branch: str
    last_version: str
    source: str
    note: str = ""


@record(eq=False)
class DriverBranch:
    """A data-center driver branch in NVIDIA's lifecycle table (drivers.toml [[data_center_compat]])."""

    branch: str  # "580"
    designation: str  # LTSB | PB | NFB
    end_of_life: str  # "2028-06" ("" where NVIDIA gives none: New Feature Branches)
    native_cuda_major: str  # the CUDA major it runs without the forward-compatibility package
    os: tuple[str, ...]
    source: str
    note: str = ""

    @property
    def number(self) -> int:
        return int(self.branch)


@record(eq=False)
class PlatformMinimum:
    platform: str
    driver: str
    source: str
    note: str = ""


@record(eq=False)
class Pitfall:
    """A pip constraint that keeps a TensorFlow release importable today (constraints/pitfalls.toml)."""

    package: str
    constraint: str  # PEP 440 specifier for `package`
    tf: str  # PEP 440 specifier over the TensorFlow version
    os: tuple[str, ...]  # empty: every OS
    python: str  # PEP 440 specifier over the Python version, "" for all
    why: str
    source: str

    @property
    def requirement(self) -> str:
        return f"{self.package}{self.constraint}"

    @cached_property
    def tf_specifier(self):
        # lazy: start-up (packaging.specifiers, only this path)
        from packaging.specifiers import SpecifierSet

        return SpecifierSet(self.tf)

    @cached_property
    def python_specifier(self):
        # lazy: start-up (packaging.specifiers, only this path)
        from packaging.specifiers import SpecifierSet

        return SpecifierSet(self.python)


@record(eq=False)
class NvidiaProject:
    """The state of NVIDIA's TensorFlow 1.15 project as a whole (nvidia_tensorflow.toml [[project]])."""

    maintained: bool
    last_release: str  # "23.03"
    deprecated: str  # "2025-07-31", "" where no notice was read
    source: str
    note: str = ""


@record(eq=False)
class NvidiaBuild:
    """One nvidia-tensorflow pip release or NGC TF1 container (constraints/nvidia_tensorflow.toml).

    Only fields named in `verified` were read in a primary source; the loader keeps a record only when the
    fields planning relies on are among them."""

    kind: str  # "pip" | "container"
    version: str  # "1.15.5+nv22.12" (pip) or the release "22.12" (container)
    tf_base: str
    release: str  # NGC release month, "22.12"
    pythons: tuple[str, ...]
    cuda: str  # full as printed ("11.8" pip, "11.8.0" container)
    cudnn: str
    driver_stated: str  # "520" (release 520 or later) or a full version
    driver_compat: tuple[str, ...]  # data-center branches accepted through CUDA forward compatibility
    tag: str  # container image, "" for pip
    ubuntu: str
    cuda_wheels: bool  # the pip package brings CUDA/cuDNN as wheels (22.01 and later)
    verified: tuple[str, ...]
    source: str
    note: str = ""

    @property
    def cuda_line(self) -> str:
        parts = self.cuda.split(".")
        return f"{parts[0]}.{parts[1]}"
