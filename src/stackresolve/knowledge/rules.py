"""The compatibility rules, each written once, with the source that states it.

The resolver, the install plans, `check`, `doctor` and `explain` all ask these functions; none of them restates
a rule. Pure functions over versions and knowledge records.
"""

from __future__ import annotations

from functools import lru_cache
from typing import Iterable

from packaging.version import InvalidVersion, Version

from stackresolve.knowledge.records import ArchSupport, CompiledArch, CudaToolkit, DriverBranch, PlatformMinimum
from stackresolve.model.enums import GpuSupport, Os
from stackresolve.model.values import ComputeCapability, CudaLine, DriverVersion

CUDNN_RULE_SOURCE = (
    "tensorflow/tensorflow:tensorflow/stream_executor/cuda/cuda_dnn.cc (IsSourceCompatibleWithCudnnLibrary: "
    "same major, runtime minor >= compiled minor)"
)
# How TensorFlow names the libraries it opens. dso_loader.cc formats "lib<name>.so.<version>" (Linux) or
# "<name><version>.dll" (Windows) and opens that name alone; cuda_configure.bzl sets the versions.
DSO_SOURCE = ("tensorflow/tensorflow:tensorflow/stream_executor/platform/default/dso_loader.cc"
              "@026389f7f824d140f243c608984ce163eb6f5374 (GetDsoHandle: the file name is formatted from the "
              "version and opened by name)")
SONAME_SOURCE = ("tensorflow/tensorflow:third_party/gpus/cuda_configure.bzl@4f75a246ce8d340ff8d1cbc3b291ae75cb750c6e "
                 "(_get_cuda_config: 'x.y' for every library before CUDA 10.1; the major for cuBLAS, cuFFT, cuRAND, "
                 "cuSOLVER, cuSPARSE from 10.1; cudart '11.0' for every CUDA 11.x and the major from 12; "
                 "Windows '64_' plus the digits; cuDNN by its major)")
MINOR_COMPAT_SOURCE = ("NVIDIA CUDA Compatibility guide (minor version compatibility, CUDA >= 11): a newer 11.x/12.x "
                       "runtime keeps the soname of its major")
# CUDA >= 11 names each math library by that library's own major, which is not the CUDA major for all of them.
# Library majors as shipped in each CUDA major (NVIDIA's sonames; the same names appear in TensorFlow's
# "Could not load dynamic library" messages, e.g. tensorflow/tensorflow#45200 and NVIDIA/tensorflow#110).
LIBRARY_MAJORS = {
    11: {"cublas": "11", "cufft": "10", "curand": "10", "cusolver": "11", "cusparse": "11"},
    12: {"cublas": "12", "cufft": "11", "curand": "10", "cusolver": "11", "cusparse": "12"},
}


def parse_version(text: str | None) -> Version | None:
    if not text:
        return None
    try:
        return Version(text)
    except InvalidVersion:
        return None


# -- CUDA lines ----------------------------------------------------------------------------------------------
def cuda_line_fits(built_for: str, cuda: str) -> bool:
    """A package built for `built_for` ("10.0", or "12.x" for every 12 minor) serves CUDA line `cuda`."""
    if built_for.endswith(".x"):
        return cuda.split(".")[0] == built_for[:-2]
    return built_for == cuda


def cuda_runtime_serves(found: str, wanted: str) -> str:
    """"ok" | "older-minor" | "no": can an installed CUDA `found` runtime serve a build for `wanted`?

    Before CUDA 11 every library name carries major.minor, so only the same release loads; from 11 on the names
    carry the major alone and a newer minor of the same major serves (minor version compatibility)."""
    f, w = CudaLine.parse(found), CudaLine.parse(wanted)
    if w.major < 11:
        return "ok" if f == w else "no"
    if f.major != w.major:
        return "no"
    return "ok" if f >= w else "older-minor"


def version_wanted_fits(provided: str, wanted: str, component: str) -> bool:
    """A build or table value `provided` meets what a log wants: `wanted` is what a library file name or a
    message names ("11.x": any 11 minor, "10.1", cuDNN "8": its major, "8.1.0"; "10.1|10.2": either), `provided`
    as the tested-build tables print it ("10" is CUDA 10.0 and cuDNN "7" any 7.x: a minimum within the major,
    tensorflow/docs site/en/install/source.md) or as a build names it ("11.2", "12.x")."""
    if not provided or not wanted:
        return False
    if "|" in wanted:
        return any(version_wanted_fits(provided, w, component) for w in wanted.split("|"))
    if "." not in provided:
        provided = f"{provided}.0" if component == "cuda" else f"{provided}.x"
    if component == "cudnn" and "." not in wanted:  # a library file name carries only cuDNN's major
        wanted = f"{wanted}.x"
    if wanted.endswith(".x") or provided.endswith(".x"):
        return wanted.split(".")[0] == provided.split(".")[0]
    # the same release line: 8.1 and 8.1.0 name one line, 10.0 and 10 too
    a, b = parse_version(wanted), parse_version(provided)
    if a is None or b is None:
        return False
    shorter = min(len(a.release), len(b.release))
    return a.release[:shorter] == b.release[:shorter]


# -- cuDNN ---------------------------------------------------------------------------------------------------
@lru_cache(maxsize=4096)  # the resolver asks it for the same few pairs thousands of times over a matrix
def cudnn_accepts(compiled: str, runtime: str) -> bool:
    """TensorFlow compiled with cuDNN `compiled` loads cuDNN `runtime`: same major, minor >= the compiled minor.
    A runtime known only by its major ("8", from libcudnn.so.8) passes on the major."""
    c, r = Version(compiled), Version(runtime)
    if c.major != r.major:
        return False
    if len(r.release) == 1:
        return True
    return r.release[:2] >= (c.major, c.minor)


@lru_cache(maxsize=256)
def cudnn_rule_text(compiled: str) -> str:
    """The accepted range in words: '8.x >= 8.1'."""
    c = Version(compiled)
    return f"{c.major}.x >= {c.major}.{c.minor}"


# -- GPU architectures ---------------------------------------------------------------------------------------
@lru_cache(maxsize=4096)
def classify_support(arch: CompiledArch | None, gpu: ComputeCapability) -> GpuSupport:
    """native: SASS for this major at an equal or lower minor; ptx-jit: only PTX at or below the GPU's."""
    if arch is None:
        return GpuSupport.UNKNOWN
    return _classify(tuple(arch.sass), tuple(arch.ptx), gpu)


@lru_cache(maxsize=4096)  # a matrix asks it of every build for every GPU; builds of a line share their lists
def _classify(sass: tuple[str, ...], ptx: tuple[str, ...], gpu: ComputeCapability) -> GpuSupport:
    parse = ComputeCapability.parse
    if any((s := parse(code)).major == gpu.major and s <= gpu for code in sass):
        return GpuSupport.NATIVE
    if any(parse(p) <= gpu for p in ptx):
        return GpuSupport.PTX_JIT
    return GpuSupport.UNSUPPORTED


BINARY_COMPAT_SOURCE = (
    "https://docs.nvidia.com/cuda/cuda-c-programming-guide/index.html (Binary Compatibility: a cubin for compute "
    "capability X.y runs on X.z for z >= y, architecture-specific 'a' targets excepted; PTX Compatibility: PTX "
    "is JIT-compiled by the driver for any GPU of an equal or higher compute capability); "
    "https://docs.nvidia.com/cuda/parallel-thread-execution/index.html (target ISA notes: sm_XYa code runs only on "
    "X.Y, sm_XYf code on the later GPUs of its family)")


def unlisted_gpu_rule(gpu: ComputeCapability, support: GpuSupport, arch: CompiledArch | None) -> str:
    """Which rule decided how a build runs on a GPU no table lists (a well-formed compute capability, issue 31):
    the words a plan's warning names it by. The rule itself is classify_support's; this says which branch of it
    applied. The architecture lists record plain sm_XY targets: family- or architecture-specific ones (sm_100a,
    sm_100f, CUDA 12.9+) are not forward compatible and are never counted here."""
    if support is GpuSupport.NATIVE and arch is not None:
        base = max((c for code in arch.sass if (c := ComputeCapability.parse(code)).major == gpu.major and c <= gpu),
                   default=None)
        return (f"binary compatibility within major {gpu.major}: the build's machine code for {base} ({base.sm}) "
                f"runs on compute capability {gpu}")
    if support is GpuSupport.PTX_JIT and arch is not None:
        ptx = max((c for code in arch.ptx if (c := ComputeCapability.parse(code)) <= gpu), default=None)
        return (f"PTX JIT: no machine code of major {gpu.major} in the build; the driver compiles its PTX for "
                f"{ptx} (compute_{ptx.major}{ptx.minor}) for this GPU at first start")
    if support is GpuSupport.UNSUPPORTED:
        return "no rule gives this GPU code from the build: no machine code of its major and no PTX at or below it"
    return "the build's GPU code is not recorded, so no rule could decide"


def unlisted_cc_rule(gpu: ComputeCapability, listed: Iterable[ComputeCapability]) -> str:
    """The rule that decides a compute capability no table lists, before any build is chosen (`show gpu`):
    machine code of a listed lower minor of its major runs on it; a major no table knows runs only PTX."""
    listed = list(listed)
    same_major = [c for c in listed if c.major == gpu.major and c <= gpu]
    if listed and gpu < min(listed):  # PTX is compiled for its target or a newer GPU, never an older one
        return (f"which gives it no GPU code: it is older than every architecture the tables list (the oldest is "
                f"{min(listed)}); no build carries machine code for it and PTX runs only on newer GPUs")
    if same_major:
        base = max(same_major)
        return (f"binary compatibility within major {gpu.major}: machine code built for {base} ({base.sm}) or any "
                f"lower {gpu.major}.x runs on it (not architecture-specific {base.sm}a code)")
    return (f"PTX JIT: no architecture of major {gpu.major} is known, so no build carries its machine code; builds "
            f"run on it only through PTX, which the driver compiles at first start")


def worst_support(levels: Iterable[GpuSupport]) -> GpuSupport:
    return max(levels, key=lambda s: s.rank, default=GpuSupport.NATIVE)


def arch_predates(arch_max: ComputeCapability, gpu: ComputeCapability) -> bool:
    """A library whose newest architecture is `arch_max` has no machine code this GPU runs: it belongs to a newer
    major. Within a major, machine code for X.y runs on X.z for z >= y (NVIDIA CUDA C++ Programming Guide, Binary
    Compatibility), so an 8.0 library serves an 8.6 GPU."""
    return gpu.major > arch_max.major


def toolkit_predates(toolkit: CudaToolkit, gpu: ComputeCapability) -> bool:
    """The CUDA toolkit knows no architecture this GPU runs: its libraries (cuBLAS, cuFFT) carry no kernels for it."""
    return arch_predates(toolkit.max_cc, gpu)


def gpu_predates(release, gpu: ComputeCapability) -> bool:
    """A CUDA toolkit or cuDNN release builds for nothing older than its oldest architecture (`arch_min`): an
    older GPU gets no kernels from it (NVIDIA's release notes drop the architecture from that release on)."""
    return gpu < release.min_cc


# -- drivers -------------------------------------------------------------------------------------------------
def _driver(version: DriverVersion | str) -> DriverVersion:
    """A driver as a value: a request's comes typed; the knowledge base's minimums and a detection report's driver
    are text its loader or probe already read with DriverVersion.parse (a probe's in its tolerant mode, so that
    mode here: this is no edge, nothing new is refused)."""
    return version if type(version) is DriverVersion else DriverVersion.parse(version, tolerant=True)


def driver_branch(version: DriverVersion | str) -> int:
    """535 for '535.104.05'; a bare branch '580' is its own."""
    return _driver(version).branch


def driver_is_branch(version: DriverVersion | str) -> bool:
    """A bare branch ("525", as `--driver 525` gives it) rather than one release."""
    return len(_driver(version).release) == 1


def driver_meets(given: DriverVersion | str, minimum: DriverVersion | str) -> bool:
    """A driver meets a minimum. A release does when it is at least the minimum; a bare branch stands for its
    releases (issue 32), so R525 meets any minimum inside R525 (from 525.60.13 on) or below it, and none above:
    NVIDIA numbers a branch's releases <branch>.<minor>[.<patch>] and a later branch is a higher number."""
    have, need = _driver(given), _driver(minimum)
    if len(have.release) == 1:
        return need.branch <= have.branch
    return have >= need


def driver_order(version: DriverVersion | str) -> tuple:
    """The order of drivers by the minimums they meet (driver_meets), for "the lowest driver" of several machines:
    a release by its number; a bare branch after every release of it (it meets any minimum inside it), before the
    next branch."""
    parsed = _driver(version)
    return (parsed.branch, 1, ()) if len(parsed.release) == 1 else (parsed.branch, 0, parsed.release)


def branch_release_needed(given: DriverVersion | str, minimum: str) -> str | None:
    """For a driver given as a branch: the release inside it a minimum asks for ("525.60.13" for R525 and
    minimum 525.60.13), None when the minimum is below the branch (any of its releases will do) or `given` is a
    release."""
    have, need = _driver(given), _driver(minimum)
    if len(have.release) == 1 and need.branch == have.branch and len(need.release) > 1:
        return minimum
    return None


LIFECYCLE_UNLISTED_SOURCE = (
    "https://docs.nvidia.com/datacenter/tesla/drivers/620/supported-drivers-and-cuda-toolkit-versions.html "
    "(Table 2 'CUDA and Drivers': only Long Term Support and Production branches are listed; New Feature Branches "
    "are short-lived; the earlier editions: every branch not in the table is end of life)")


def branch_lifecycle(branches: tuple[DriverBranch, ...], branch: int, as_of: str) -> tuple[str, DriverBranch | None]:
    """Where a driver branch stands in NVIDIA's lifecycle table on the date `as_of` ("2026-11-28"):
    ("supported" | "end-of-life" | "newer" | "unlisted-older", the record or the branch that decides).
    - listed with an end of life before `as_of`'s month: "end-of-life" (the record);
    - listed otherwise: "supported" (the record);
    - not listed and newer than every listed branch: "newer": planned by its number, as the newest listed branch
      (the record of that branch): NVIDIA numbers branches upward;
    - not listed and older than the newest: "unlisted-older": NVIDIA lists every older branch it does not print
      as end of life, or as a short-lived New Feature Branch (the newest listed branch is returned)."""
    record = next((b for b in branches if b.number == branch), None)
    if record is not None:
        ended = bool(record.end_of_life) and record.end_of_life < as_of[:7]
        return ("end-of-life" if ended else "supported"), record
    if not branches:
        return "unlisted-older", None
    newest = max(branches, key=lambda b: b.number)
    return ("newer" if branch > newest.number else "unlisted-older"), newest


def supported_branches(branches: tuple[DriverBranch, ...], as_of: str) -> list[DriverBranch]:
    """The Long Term Support and Production branches still supported on `as_of`, newest first."""
    return sorted((b for b in branches if b.designation in ("LTSB", "PB")
                   and branch_lifecycle(branches, b.number, as_of)[0] == "supported"),
                  key=lambda b: b.number, reverse=True)


def driver_floor_raises(floor: str, minimum: str | None) -> bool:
    """Driver minimums combine by the highest: a floor that holds whatever the stack (CUDA on WSL2's Windows
    driver, a GPU's first driver) raises a stack's minimum when the stack has none or a lower one."""
    return not minimum or DriverVersion.parse(floor) > DriverVersion.parse(minimum)


def minor_compat_floor(toolkit: CudaToolkit, driver_os: Os, all_native: bool) -> str:
    """NVIDIA's minor-version-compatibility driver floor (CUDA >= 11, Table 2), or "" where it does not apply.
    It does not cover PTX JIT, so it only counts when the build carries machine code for every GPU."""
    compat = toolkit.compat_driver(driver_os)
    return compat if compat and all_native else ""


# -- driver floors: the driver a stack needs (resolve/driver.py decides a stack's driver from these, once) ---------
ARCH_MATRIX_SOURCE = ("https://docs.nvidia.com/datacenter/tesla/drivers/cuda-toolkit-driver-and-architecture-"
                      "matrix.html (first CUDA toolkit per architecture)")


def toolkit_driver(toolkit: CudaToolkit, driver_os: Os) -> str:
    """A toolkit's own driver minimum; where NVIDIA prints none for this OS (Windows, CUDA 13.x: N/A), the
    minor-version-compatibility floor it gives for the major (13.x >= 580)."""
    return toolkit.min_driver(driver_os) or toolkit.compat_driver(driver_os)


def planned_driver_minimum(toolkit: CudaToolkit, driver_os: Os, tensorflow: bool, all_native: bool) -> str:
    """The driver a plan asks for. PyTorch and JAX carry their CUDA runtime in their wheels, and their makers
    state the minor-version-compatibility floor as the requirement (JAX's install guide: >= 525.60.13 for CUDA 12;
    PyTorch: a cu128 build runs on 550, pytorch/pytorch#155141), so for a build with machine code for every GPU
    (`all_native`) that floor is the minimum; otherwise, and for TensorFlow, the toolkit's own minimum."""
    own = toolkit_driver(toolkit, driver_os)
    if tensorflow:
        return own
    return minor_compat_floor(toolkit, driver_os, all_native) or own


def compute_capability_driver_floor(cc: str, support: ArchSupport | None, first: CudaToolkit | None,
                                    driver_os: Os) -> tuple[str, str, str] | None:
    """(driver, why, source): the driver of the first CUDA toolkit that targets compute capability `cc` (`first`),
    not its architecture's first: sm_86 came with CUDA 11.1, a year after Ampere's sm_80 in 11.0, so an RTX 3090
    needs 11.1's 455.23 / 456.38 (CUDA 11.1 release notes, Table 3; NVIDIA's CUDA Toolkit, Driver and Architecture
    Matrix). A driver older than that predates the GPU. A lower bound: single boards came later (RTX 3060: R460).
    None where no toolkit reaches it or NVIDIA prints no driver for it."""
    name = f"compute capability {cc}" + (f" ({support.architecture.capitalize()})" if support else "")
    if first is None:
        return None
    driver = toolkit_driver(first, driver_os)
    if not driver:
        return None
    return (driver, f"{name} GPUs need a driver that supports them: >= {driver}, the driver of CUDA "
                    f"{first.version}, the first toolkit for compute capability {cc}",
            f"{first.source}; {ARCH_MATRIX_SOURCE}")


def newest_supported_driver(supports: Iterable[ArchSupport | None]) -> ArchSupport | None:
    """Of the GPUs' architecture records, the one with the oldest last driver branch (its last_version is the
    newest driver that still supports every GPU: Kepler, R470, 470.256.02), or None when none has one."""
    records = [s for s in supports if s is not None and s.last_branch]
    return min(records, key=lambda s: Version(s.last_version)) if records else None


def raised_minimum(minimum: str, source: str, wsl: PlatformMinimum | None,
                   gpu: tuple[str, str, str] | None) -> tuple[str, str, str, bool]:
    """A stack's driver minimum raised to the floors that hold whatever the stack: CUDA on WSL2's Windows driver
    (`wsl`) and the requested GPUs' first driver (`gpu`, compute_capability_driver_floor): (minimum, its source,
    why where the GPUs' floor decides or "", whether WSL2's floor decides)."""
    by_wsl, gpu_why = False, ""
    if wsl and driver_floor_raises(wsl.driver, minimum):
        minimum, source, by_wsl = wsl.driver, wsl.source, True
    if gpu and driver_floor_raises(gpu[0], minimum):
        minimum, source, gpu_why, by_wsl = gpu[0], gpu[2], gpu[1], False
    return minimum, source, gpu_why, by_wsl


# -- library file names --------------------------------------------------------------------------------------
def cuda_library_versions(cuda: str) -> dict[str, str]:
    """{library: the version in its file name} for a CUDA release, as TensorFlow's build configures it."""
    line = CudaLine.parse(cuda)
    major, minor = line.major, line.minor
    if major >= 11:
        libs = dict(LIBRARY_MAJORS.get(major, {"cublas": str(major)}))
        if (major, minor) == (11, 0):
            libs["cusolver"] = "10"  # CUDA 11.0 still shipped cuSOLVER 10
        return {"cudart": "11.0" if major == 11 else str(major), **libs}
    if (major, minor) >= (10, 1):
        return {"cudart": f"{major}.{minor}", **{n: str(major) for n in
                                                 ("cublas", "cufft", "curand", "cusolver", "cusparse")}}
    return {n: f"{major}.{minor}" for n in ("cudart", "cublas", "cufft", "curand", "cusolver", "cusparse")}


def library_file_name(name: str, version: str, system: str) -> str:
    if system == "windows":
        return f"{name}64_{version.replace('.', '')}.dll"
    return f"lib{name}.so.{version}"


def tf_library_names(cuda: str, cudnn_major: str | None, system: str) -> list[tuple[str, str]]:
    """[(component, file name)] TensorFlow opens for a CUDA / cuDNN build: ("cuda", "libcudart.so.10.0"), ..."""
    if system == "macos":
        return []
    names = [("cuda", library_file_name(lib, v, system)) for lib, v in cuda_library_versions(cuda).items()]
    if cudnn_major:
        names.append(("cudnn", library_file_name("cudnn", cudnn_major, system)))
    return names


# ----------------------------------------------------------------------------------------------
# AMD ROCm (issue 36): the gfx targets of PyTorch's ROCm wheels and the unofficial HSA_OVERRIDE_GFX_VERSION
# ----------------------------------------------------------------------------------------------
# The facts are constraints/amd.toml's ([[torch_rocm]]: the gfx targets of each wheel variant; [[gfx_override]]: the
# users' practice), read through knowledge.accelerators.AcceleratorKnowledge; these rules only ask them.
TORCH_ROCM_GFX_SOURCE = "constraints/amd.toml [[torch_rocm]] (each variant's PYTORCH_ROCM_ARCH, with its source)"


def _processor(gfx: str) -> str:
    """A target with features ("gfx90a:sramecc+:xnack-") is its processor's."""
    return gfx.split(":", 1)[0].lower()


def torch_rocm_gfx(amd) -> tuple[str, ...]:
    """Every gfx target some PyTorch ROCm wheel carries (`amd`: AcceleratorKnowledge), in LLVM's order."""
    return tuple(sorted({g for variant in amd.torch_rocm for g in variant.gfx}, key=lambda g: (len(g), g)))


def variant_carries(variant, gfx: str) -> bool:
    """Whether this PyTorch ROCm wheel variant ([[torch_rocm]]) carries code objects for the gfx target."""
    return _processor(gfx) in variant.gfx


def torch_rocm_carries(amd, gfx: str) -> bool:
    """Whether some PyTorch ROCm wheel carries code objects for this gfx target."""
    return any(variant_carries(variant, gfx) for variant in amd.torch_rocm)


def override_into(amd, gfx: str, variant):
    """The [[gfx_override]] row through which this wheel variant runs on a GPU whose own target it does not carry (the
    override's target is one the wheel carries), or None. Unofficial: say so wherever it is used."""
    override = gfx_override(amd, gfx)
    return override if override is not None and variant_carries(variant, override.runs_as) else None


def gfx_override(amd, gfx: str):
    """The [[gfx_override]] row (hsa_override, runs_as, source) for a GPU that users run as another target of its
    family where no wheel carries its own; None where that practice does not apply. Unofficial: say so wherever it is
    shown."""
    return amd.override_for(_processor(gfx))


def gfx_override_summary(amd) -> str:
    """The whole practice in one line, for a text that knows no target: "HSA_OVERRIDE_GFX_VERSION=10.3.0 for gfx1031,
    gfx1032 (run as gfx1030); ...". Unofficial: the caller says so."""
    return "; ".join(f"HSA_OVERRIDE_GFX_VERSION={o.hsa_override} for {', '.join(o.gfx)} (run as {o.runs_as})"
                     for o in amd.gfx_overrides)


# A PyTorch ROCm wheel carries its own ROCm libraries, built with the ROCm of its variant (rocm6.2); what is compiled
# on the machine against the installed ROCm (/opt/rocm: hipcc, the headers of an extension such as bitsandbytes or
# flash-attention) must be of the same ROCm major to load beside it: ROCm's majors break the ABI (libamdhip64.so.5,
# .so.6, .so.7).
ROCM_MAJOR_SOURCE = (
    "https://github.com/ROCm/bitsandbytes/issues/82 (an extension built against another ROCm than torch's does not "
    "work) ; PyTorch's install matrix (each /whl/rocmX.Y index is built for one ROCm release) ; sonames: "
    "libamdhip64.so.<major> (ROCm/clr:hipamd/CMakeLists.txt@65d174c3e35423bf25c9c369513780c9d9ca760c (tag "
    "rocm-6.2.2), HIP_LIB_VERSION_MAJOR)")


def rocm_major(version: str | None) -> int | None:
    """The major of a ROCm version or of a PyTorch ROCm variant ("6.2.4", "rocm6.2", "6.2.41133-dd7f95766" -> 6)."""
    if not version:
        return None
    text = version.strip().lower().removeprefix("rocm")
    major = text.split(".", 1)[0]
    return int(major) if major.isdigit() else None
