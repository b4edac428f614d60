"""Doctor's checks: small functions over one immutable context, each returning the findings it makes.

Every rule they apply is the knowledge layer's (rules.py): the cuDNN major/minor rule, which installed CUDA serves
which build, the library file names TensorFlow opens."""

from __future__ import annotations

import posixpath
import re
from dataclasses import dataclass
from typing import Callable, Mapping

from packaging.specifiers import InvalidSpecifier, SpecifierSet
from packaging.version import InvalidVersion, Version

from stackresolve.doctor.machine import (
    gpu_cc, gpu_label, installed_tensorflow, norm_dir, path_entries, pathmod, unknown_cc_finding,
)
from stackresolve.doctor.report import Target
from stackresolve.knowledge.base import KnowledgeBase
from stackresolve.knowledge.rules import (
    CUDNN_RULE_SOURCE,
    DSO_SOURCE,
    MINOR_COMPAT_SOURCE,
    SONAME_SOURCE,
    classify_support,
    cuda_runtime_serves,
    cudnn_accepts,
    cudnn_rule_text,
    driver_branch,
    gpu_predates,
    library_file_name,
    parse_version,
)
from stackresolve.model.enums import GpuSupport, Os, Severity
from stackresolve.model.finding import Finding
from stackresolve.model.stack import Stack
from stackresolve.model.values import ComputeCapability

LibraryProber = Callable[[list, list], Mapping[str, tuple]]
E, W, I = Severity.ERROR, Severity.WARNING, Severity.INFO


@dataclass(frozen=True)
class Context:
    machine: object  # stackresolve.detect.Machine
    kb: KnowledgeBase
    target: Target
    stack: Stack
    system: str  # linux | windows | macos: path and library-name conventions
    os: Os
    python: str | None  # major.minor of the checked interpreter
    installed: object | None  # the installed TensorFlow (FrameworkInfo)


# Detection reports these as warnings; `import jax` raises RuntimeError for them (jax/_src/lib/__init__.py:
# check_jaxlib_version, and jaxlib missing altogether), so doctor judges them errors.
IMPORT_FAILS = ("jax-jaxlib-mismatch", "jax-without-jaxlib")


def carried_detection_findings(machine, kb: KnowledgeBase) -> list[Finding]:
    out = []
    for f in machine.findings:
        if f.code == "no-nvidia-gpu":
            continue  # judged against what the target needs
        if f.code == "compute-capability-unknown" and any(
                g.compute_capability is None and g.name and kb.find_gpu(g.name) for g in machine.gpus):
            continue  # the GPU table knows it
        severity = E if f.code in IMPORT_FAILS else f.severity
        out.append(Finding(severity, f.code, f.message, f.fix, f"detect: {f.source}" if f.source else "detect"))
    return out


def gpu_present(ctx: Context) -> list[Finding]:
    m, target = ctx.machine, ctx.target
    if m.gpus:
        return []
    package = ctx.installed.package if ctx.installed else ""
    gpu_only = bool(package and package.endswith("-gpu")) or any(
        t.source.startswith("pip:nvidia-cuda-runtime") for t in m.cuda_toolkits)
    return [Finding(E if gpu_only else W, "no-nvidia-gpu",
                    f"no NVIDIA GPU was found (probes: nvml, libcuda, nvidia-smi, /proc): {target.pip_package} "
                    f"{target.tf_version} will run on the CPU only",
                    "install the NVIDIA driver (a reboot after install loads its kernel module), or check that the "
                    "GPU is passed to this container/VM (docker run --gpus all)", "detect: nvml, libcuda, nvidia-smi")]


def driver(ctx: Context) -> list[Finding]:
    d, target = ctx.machine.driver, ctx.target
    wanted = target.cuda
    if d is None or (d.version is None and d.cuda_max is None):
        return [Finding(E, "no-driver", f"no NVIDIA driver was found; CUDA {wanted} needs >= {target.driver_min}",
                        f"install NVIDIA driver {target.driver_min} or newer", target.driver_source)]
    if d.version is None:
        cuda_max = parse_version(d.cuda_max)
        if cuda_max and cuda_max < Version(wanted):
            return [Finding(E, "driver-too-old",
                            f"the driver supports CUDA up to {d.cuda_max}; TensorFlow {target.tf_version} uses "
                            f"CUDA {wanted}", f"install NVIDIA driver {target.driver_min} or newer",
                            f"{d.cuda_max_source or d.source}; {target.driver_source}")]
        return []
    have, need = parse_version(d.version), parse_version(target.driver_min)
    if have is None or need is None or have >= need:
        return []
    compat = ctx.stack.driver.minor_compat_minimum if ctx.stack.driver else None
    driver_os = ctx.os.driver_os
    if compat and have >= Version(compat):
        return [Finding(W, "driver-minor-compat",
                        f"driver {d.version} is older than the {need} CUDA {wanted} ships with, but meets the "
                        f"{compat} minimum of CUDA minor version compatibility: CUDA runs, PTX JIT compilation does "
                        f"not", f"install NVIDIA driver {target.driver_min} or newer",
                        f"{d.source}; {ctx.stack.driver.source}")]
    return [Finding(E, "driver-too-old",
                    f"driver {d.version} is too old for CUDA {wanted} (TensorFlow {target.tf_version}), which needs "
                    f">= {target.driver_min} on {driver_os}: TensorFlow fails with \"CUDA driver version is "
                    f"insufficient for CUDA runtime version\"",
                    f"install NVIDIA driver {target.driver_min} or newer, or choose a TensorFlow built for an older "
                    f"CUDA (stackresolve plan --driver {d.version})", f"detect: {d.source}; {target.driver_source}")]


def gpu_support(ctx: Context) -> list[Finding]:
    target, stack, kb = ctx.target, ctx.stack, ctx.kb
    line = stack.framework.line
    arch = stack.compiled
    toolkit = kb.toolkit(target.cuda) if target.cuda else None
    out = []
    for g in ctx.machine.gpus:
        cc, cc_source = gpu_cc(kb, g)
        label = gpu_label(g)
        if cc is None:
            out.append(unknown_cc_finding(g, f"TensorFlow {line}"))
            continue
        label += f", compute capability {cc})"
        capability = ComputeCapability.parse(cc)
        level = classify_support(arch, capability)
        arch_source = arch.source if arch else "tensorflow.toml [[compiled_arch]]"
        if level is GpuSupport.UNSUPPORTED:
            out.append(Finding(E, "gpu-not-supported",
                               f"{label}: TensorFlow {line} wheels carry no kernels for it (\"no kernel image is "
                               f"available for execution on the device\")",
                               f"use a TensorFlow release compiled for this GPU (stackresolve plan --gpu-cc {cc}), "
                               f"or build TensorFlow from source", f"{cc_source}; {arch_source}"))
        elif level is GpuSupport.PTX_JIT:
            out.append(Finding(W, "ptx-jit",
                               f"{label}: TensorFlow {line} carries only PTX for it; the driver JIT-compiles every "
                               f"kernel at first start (minutes)",
                               "set CUDA_CACHE_MAXSIZE=4294967296 to keep the JIT cache", f"{cc_source}; {arch_source}"))
        elif level is GpuSupport.UNKNOWN:
            out.append(Finding(I, "arch-unknown",
                               f"the CUDA architectures compiled into TensorFlow {line} are not recorded; {label} is "
                               f"unchecked", "", arch_source))
        if toolkit and gpu_predates(toolkit, capability):
            out.append(Finding(E, "gpu-too-old-for-cuda",
                               f"{label}: CUDA {toolkit.version} supports compute capability >= {toolkit.arch_min}",
                               f"choose a TensorFlow built with an older CUDA (stackresolve plan --gpu-cc {cc})",
                               toolkit.source))
        support = kb.arch_support_for(cc)
        if support and support.last_branch and target.driver_min and \
                driver_branch(target.driver_min) > int(support.last_branch):
            out.append(Finding(E, "gpu-driver-branch-ended",
                               f"{label}: {support.architecture.capitalize()} GPUs are supported by drivers up to "
                               f"R{support.last_branch}, but CUDA {target.cuda} needs driver >= {target.driver_min}",
                               f"choose a TensorFlow built for a CUDA that R{support.last_branch} runs "
                               f"(stackresolve plan --gpu-cc {cc})", support.source))
    return out


def cuda_fix(target: Target) -> str:
    if target.and_cuda:
        return f"pip install '{target.pip_package}=={target.tf_version}' (brings the CUDA {target.cuda} wheels)"
    return (f"install CUDA {target.cuda} (it installs beside other versions), or conda install "
            f"cudatoolkit={target.cuda} into this environment; the plan command below prints the steps")


def cuda(ctx: Context) -> list[Finding]:
    target = ctx.target
    wanted = target.cuda
    found = list(ctx.machine.cuda_toolkits)
    fits = [(t, cuda_runtime_serves(t.version, wanted)) for t in found]
    libs = ", ".join(n for c, n in target.libraries if c == "cuda" and "cudart" in n)
    if any(fit == "ok" for _, fit in fits):
        return []
    older = [t for t, fit in fits if fit == "older-minor"]
    if older:
        t = older[0]
        return [Finding(W, "cuda-older-minor",
                        f"TensorFlow {target.tf_version} was built with CUDA {wanted}; the installed CUDA {t.version} "
                        f"({t.path or t.source}) has the same library names ({libs}) but is older",
                        cuda_fix(target), f"{target.cuda_source}; {MINOR_COMPAT_SOURCE}")]
    listing = ", ".join(f"{t.version} ({t.path or t.source})" for t in found)
    if found:
        return [Finding(E, "cuda-version-mismatch",
                        f"TensorFlow {target.tf_version} loads the CUDA {wanted} runtime ({libs}); installed: "
                        f"CUDA {listing}" + (" - their library names differ, so none of them is used"
                                             if Version(wanted).major < 11 else ""),
                        cuda_fix(target), f"{target.cuda_source}; {SONAME_SOURCE}")]
    return [Finding(E, "cuda-runtime-missing",
                    f"TensorFlow {target.tf_version} needs the CUDA {wanted} runtime ({libs}); no CUDA toolkit, "
                    "conda cudatoolkit or nvidia-cuda-runtime wheel was found", cuda_fix(target), target.cuda_source)]


def and_cuda_pins(ctx: Context) -> list[Finding]:
    target, py = ctx.target, ctx.machine.python
    bundled = ctx.stack.framework.bundled_requirements
    if not target.and_cuda or py is None or not bundled:
        return []
    if not [p for p in py.packages if p.name.startswith("nvidia-")]:
        return []  # CUDA from the system: the CUDA check judged it
    # lazy: start-up (packaging.requirements ~8 ms)
    from packaging.requirements import InvalidRequirement, Requirement

    wrong, missing = [], []
    for text in bundled:
        try:
            req = Requirement(text)
        except InvalidRequirement:
            continue
        if not req.name.lower().startswith("nvidia-"):
            continue
        have = py.package(req.name)
        if have is None or not have.version:
            missing.append(str(req))
        elif parse_version(have.version) is None or not req.specifier.contains(Version(have.version),
                                                                                prereleases=True):
            wrong.append(f"{have.name} {have.version} (wants {req.specifier})")
    fix = f"pip install '{target.pip_package}=={target.tf_version}'"
    source = ctx.stack.framework.source + " (Requires-Dist of the and-cuda extra)"
    out = []
    if wrong:
        out.append(Finding(W, "and-cuda-pin-mismatch",
                           f"{target.pip_package} {target.tf_version} pins other NVIDIA wheels than installed: "
                           + "; ".join(wrong), fix, source))
    if missing:
        out.append(Finding(W, "and-cuda-wheel-missing",
                           f"NVIDIA wheels of {target.pip_package} {target.tf_version} are missing: "
                           + ", ".join(missing), fix, source))
    return out


def cudnn(ctx: Context) -> list[Finding]:
    target, system = ctx.target, ctx.system
    compiled = target.cudnn_compiled
    found = list(ctx.machine.cudnn)
    if any(parse_version(c.version) is not None and cudnn_accepts(compiled, c.version) for c in found):
        return []
    major = Version(compiled).major
    same_major = [c for c in found if (v := parse_version(c.version)) is not None and v.major == major]
    fix = (f"pip install '{target.pip_package}=={target.tf_version}' (brings cuDNN {target.cudnn_recommended})"
           if target.and_cuda else
           f"install cuDNN {target.cudnn_recommended} for CUDA {target.cuda} (any {cudnn_rule_text(compiled)} built "
           f"for CUDA {target.cuda} works)")
    source = target.cudnn_source if CUDNN_RULE_SOURCE in target.cudnn_source else \
        f"{target.cudnn_source}; {CUDNN_RULE_SOURCE}"
    listing = ", ".join(f"{c.version} ({c.path or c.source})" for c in found)
    if same_major:
        c = same_major[0]
        return [Finding(E, "cudnn-too-old",
                        f"cuDNN {c.version} is installed but TensorFlow {target.tf_version} was compiled with cuDNN "
                        f"{compiled}: it refuses an older minor (\"Loaded runtime CuDNN library: {c.version} but "
                        f"source was compiled with: {compiled}\")", fix, source)]
    if found:
        return [Finding(E, "cudnn-version-mismatch",
                        f"TensorFlow {target.tf_version} loads cuDNN {major} "
                        f"({library_file_name('cudnn', str(major), system)}); installed: cuDNN {listing}", fix,
                        source)]
    return [Finding(E, "cudnn-missing",
                    f"TensorFlow {target.tf_version} needs cuDNN {cudnn_rule_text(compiled)}; none was found "
                    "(headers, libraries, conda or pip)", fix, source)]


def search_path(ctx: Context) -> list[Finding]:
    """PATH on Windows (CUDA bin and cuDNN bin folders), LD_LIBRARY_PATH on Linux: entries that hurt."""
    target, m, system = ctx.target, ctx.machine, ctx.system
    entries = {norm_dir(system, p) for p in path_entries(m, system)}
    mod = pathmod(system)
    out = []
    if system == "windows":
        toolkits = [t for t in m.cuda_toolkits if t.path and not t.source.startswith(("pip:", "conda:"))
                    and cuda_runtime_serves(t.version, target.cuda) == "ok"]
        if toolkits and not any(norm_dir("windows", mod.join(t.path, "bin")) in entries for t in toolkits):
            bin_dir = mod.join(toolkits[0].path, "bin")
            dlls = [n for c, n in target.libraries if c == "cuda"]
            out.append(Finding(E, "cuda-bin-not-on-path",
                               f"CUDA {toolkits[0].version} is installed at {toolkits[0].path} but its bin folder is "
                               f"not on PATH, so TensorFlow cannot load {', '.join(dlls[:2])}",
                               f"add {bin_dir} to PATH, then open a new terminal", DSO_SOURCE))
        major = target.cudnn_compiled.split(".")[0] if target.cudnn_compiled else None
        dll_dirs = [mod.dirname(c.path) for c in m.cudnn
                    if c.source == "cudnn64.dll" and c.path and c.version.split(".")[0] == major]
        if dll_dirs and not any(norm_dir("windows", d) in entries for d in dll_dirs):
            out.append(Finding(E, "cudnn-bin-not-on-path",
                               f"cudnn64_{major}.dll is in {dll_dirs[0]}, which is not on PATH: TensorFlow cannot "
                               "load it (installing cuDNN is a separate step from CUDA, and its folder must be on "
                               "PATH too)",
                               f"add {dll_dirs[0]} to PATH (or copy the cuDNN bin, include and lib files into the CUDA "
                               f"{target.cuda} folders), then open a new terminal", DSO_SOURCE))
        cuda_path = (m.env or {}).get("CUDA_PATH")
        if cuda_path and not any(norm_dir("windows", t.path) == norm_dir("windows", cuda_path) for t in toolkits):
            out.append(Finding(I, "cuda-path-other-version",
                               f"CUDA_PATH={cuda_path} is not the CUDA {target.cuda} TensorFlow uses (TensorFlow "
                               "itself only searches PATH; build tools read CUDA_PATH)",
                               f"set CUDA_PATH to the CUDA {target.cuda} folder if you build CUDA code",
                               "env:CUDA_PATH"))
        return out
    for entry in path_entries(m, system):
        found = re.search(r"cuda-(\d+\.\d+)", entry)
        if found and cuda_runtime_serves(found.group(1), target.cuda) == "no":
            out.append(Finding(W, "ld-library-path-other-cuda",
                               f"LD_LIBRARY_PATH names {entry} (CUDA {found.group(1)}); TensorFlow "
                               f"{target.tf_version} loads CUDA {target.cuda} libraries",
                               f"replace it with the CUDA {target.cuda} lib64 folder", "env:LD_LIBRARY_PATH"))
        if posixpath.basename(posixpath.normpath(entry)) == "stubs":
            out.append(Finding(W, "ld-library-path-stubs",
                               f"LD_LIBRARY_PATH names {entry}: the toolkit's stub libcuda.so there shadows the "
                               "driver's (cuInit fails with CUDA_ERROR_STUB_LIBRARY)",
                               f"remove {entry} from LD_LIBRARY_PATH", "env:LD_LIBRARY_PATH"))
    return out


def _candidate_dirs(ctx: Context) -> list[str]:
    """Folders where CUDA / cuDNN files may lie although TensorFlow's loader does not look there."""
    m, system = ctx.machine, ctx.system
    mod = pathmod(system)
    dirs: list[str] = []
    for t in m.cuda_toolkits:
        if not t.path or t.source.startswith("pip:"):
            continue
        if system == "windows":
            dirs += [mod.join(t.path, "bin"), mod.join(t.path, "Library", "bin")]
        else:
            dirs += [mod.join(t.path, "lib64"), mod.join(t.path, "lib"),
                     mod.join(t.path, "targets", "x86_64-linux", "lib")]
    for c in m.cudnn:
        if not c.path:
            continue
        if c.source.startswith(("cudnn64.dll", "libcudnn.so")):
            dirs.append(mod.dirname(c.path))
        elif c.source.endswith(".h"):  # <root>/include/cudnn.h -> <root>/lib64, <root>/lib, <root>/bin
            root = mod.dirname(mod.dirname(c.path))
            dirs += [mod.join(root, "bin")] if system == "windows" else [mod.join(root, "lib64"), mod.join(root, "lib")]
    if m.python and not ctx.target.and_cuda:
        dirs += list(m.python.nvidia_lib_dirs)
    return list(dict.fromkeys(dirs))


EXPLAINS = {"cuda-version-mismatch": "cuda", "cuda-runtime-missing": "cuda", "cudnn-too-old": "cudnn",
            "cudnn-version-mismatch": "cudnn", "cudnn-missing": "cudnn"}
NAMES_A_FOLDER = ("cuda-bin-not-on-path", "cudnn-bin-not-on-path")


def libraries(ctx: Context, prober: LibraryProber | None,
              earlier: list[Finding]) -> tuple[list[Finding], list[tuple[str, bool, str]]]:
    """Test-load the libraries TensorFlow opens; explain each that fails unless an earlier finding already does
    (a missing cuDNN, a folder not on PATH)."""
    target, m, system = ctx.target, ctx.machine, ctx.system
    names = [n for _, n in target.libraries]
    if not names:
        return [], []
    if prober is None:
        return [Finding(I, "library-check-skipped",
                        f"the libraries TensorFlow opens ({', '.join(names)}) were not test-loaded", "",
                        DSO_SOURCE)], []
    explained = {EXPLAINS[f.code] for f in earlier if f.code in EXPLAINS}
    reported = {norm_dir(system, d) for f in earlier if f.code in NAMES_A_FOLDER
                for d in re.findall(r"add (.+?) to PATH", f.fix)}
    search = (list(m.python.nvidia_lib_dirs) if target.and_cuda and m.python else []) + path_entries(m, system)
    results = dict(prober(names, search))
    loaded = [(n, bool(results.get(n, (False, ""))[0]), str(results.get(n, (False, "not tried"))[1])) for n in names]
    failing = [n for n, ok, _ in loaded if not ok]
    if not failing:
        return [], loaded
    candidates = _candidate_dirs(ctx)
    elsewhere = dict(prober(failing, candidates)) if candidates else {}
    by_dir: dict[str, list[str]] = {}
    missing = []
    mod = pathmod(system)
    for n in failing:
        ok, detail = elsewhere.get(n, (False, ""))
        # the prober's detail names the file that loaded: find which candidate folder holds it
        found_in = next((d for d in candidates if mod.join(d, n) in str(detail)), None) if ok else None
        if found_in:
            by_dir.setdefault(found_in, []).append(n)
        else:
            missing.append(n)
    var = "PATH" if system == "windows" else "LD_LIBRARY_PATH"
    out = []
    for d, libs in by_dir.items():
        if norm_dir(system, d) in reported:
            continue
        fix = (f"add {d} to PATH (System Properties > Environment Variables), then open a new terminal"
               if system == "windows" else f"export LD_LIBRARY_PATH={d}:$LD_LIBRARY_PATH (or add {d} to "
                                           f"/etc/ld.so.conf.d/ and run ldconfig)")
        out.append(Finding(E, "library-not-on-search-path",
                           f"{', '.join(libs)} exist in {d} but TensorFlow's loader does not search there ({var}): "
                           f"TensorFlow logs \"Could not load dynamic library '{libs[0]}'\" and runs on the CPU",
                           fix, DSO_SOURCE))
    component = dict((n, c) for c, n in target.libraries)
    unexplained = [n for n in missing if component.get(n) not in explained]
    if unexplained:
        why = {n: d for n, _, d in loaded}
        cuda_missing = [n for n in unexplained if component.get(n) == "cuda"]
        fix = cuda_fix(target) if cuda_missing else f"install cuDNN {target.cudnn_recommended} for CUDA {target.cuda}"
        out.append(Finding(E, "library-missing",
                           f"TensorFlow {target.tf_version} cannot load {', '.join(unexplained)} (it logs \"Could not "
                           f"load dynamic library\" and runs on the CPU); the loader says: {why[unexplained[0]]}", fix,
                           f"{DSO_SOURCE}; {SONAME_SOURCE}"))
    return out, loaded


# What the environment lacks that installing the plan brings (CUDA, cuDNN and their libraries): in an environment
# with no framework installed these say what is missing, they are not faults.
PLAN_INSTALLS = ("cuda-version-mismatch", "cuda-runtime-missing", "cuda-older-minor", "cudnn-too-old",
                 "cudnn-version-mismatch", "cudnn-missing", "and-cuda-pin-mismatch", "and-cuda-wheel-missing",
                 "library-not-on-search-path", "library-missing")


def to_install(f: Finding) -> Finding:
    """A finding of PLAN_INSTALLS as information: what the plan will install."""
    if f.code not in PLAN_INSTALLS or f.severity is I:
        return f
    return Finding(I, f.code, f"not installed yet: {f.message}", f.fix, f.source)


def pitfalls(ctx: Context) -> list[Finding]:
    py = ctx.machine.python
    if py is None or not py.packages or not ctx.python:
        return []
    try:
        pins = ctx.kb.pitfalls_for(ctx.stack.framework.upstream_version, ctx.os.wheel_os.value, ctx.python)
    except (InvalidVersion, InvalidSpecifier):
        return []
    out = []
    for pin in pins:
        have = py.package(pin.package)
        if have is None or not have.version:
            continue
        version = parse_version(have.version)
        if version is None or SpecifierSet(pin.constraint).contains(version, prereleases=True):
            continue
        out.append(Finding(E, f"pitfall-{have.name}",
                           f"{have.name} {have.version} is installed; TensorFlow {ctx.target.tf_version} needs "
                           f"{pin.requirement}: {pin.why}", f"pip install '{pin.requirement}'", pin.source))
    return out


def installed_vs_target(ctx: Context) -> list[Finding]:
    inst, target = ctx.installed, ctx.target
    if target.origin != "--tf" or inst is None:
        return []
    if parse_version(inst.version) != parse_version(target.tf_version):
        return [Finding(W, "tensorflow-differs-from-target",
                        f"{inst.package} {inst.version} is installed; this report checks the machine for "
                        f"{target.pip_package} {target.tf_version}",
                        f"pip install '{target.pip_package}=={target.tf_version}'", "python-probe (dist-info)")]
    return []


def cpu_build(ctx: Context) -> list[Finding]:
    inst = ctx.installed
    if ctx.machine.gpus and inst and inst.gpu_build is False and ctx.target.origin == "installed":
        return [Finding(W, "cpu-build-with-gpu",
                        f"{inst.package} {inst.version} is a CPU-only build but this machine has an NVIDIA GPU",
                        "install the GPU build the plan command names", inst.source or "python-probe")]
    return []


KERAS3_SOURCE = ("https://github.com/tensorflow/tensorflow/releases/tag/v2.16.1 (Release 2.16.1, Breaking Changes: "
                 "\"Keras 3.0 will be the default Keras version\"; to continue using Keras 2.0, install tf-keras via "
                 "pip install tf-keras~=2.16 and set TF_USE_LEGACY_KERAS=1); "
                 "https://keras.io/guides/migrating_to_keras_3 (Migrating Keras 2 code to multi-backend Keras 3)")


def keras3(machine) -> list[Finding]:
    """TensorFlow >= 2.16 with Keras 3: tf.keras is Keras 3, which does not run all Keras 2 code and does not load
    a legacy SavedModel with load_model; Keras 2 stays available as tf-keras behind TF_USE_LEGACY_KERAS=1."""
    tf, py = installed_tensorflow(machine), machine.python
    if tf is None or py is None:
        return []
    tf_version, keras = parse_version(tf.version), py.package("keras")
    keras_version = parse_version(keras.version) if keras else None
    if tf_version is None or keras_version is None or tf_version.release[:2] < (2, 16) or keras_version.major < 3:
        return []
    legacy = py.package("tf-keras")
    switched = (machine.env or {}).get("TF_USE_LEGACY_KERAS", "").strip().lower() in ("1", "true")
    if legacy is not None and switched:
        return []
    line = f"{tf_version.major}.{tf_version.minor}"
    have = f"; tf-keras {legacy.version} is installed, TF_USE_LEGACY_KERAS is not set" if legacy else ""
    fix = ("set TF_USE_LEGACY_KERAS=1 before TensorFlow is imported" if legacy else
           f"pip install 'tf-keras~={line}' and set TF_USE_LEGACY_KERAS=1 before TensorFlow is imported")
    return [Finding(I, "keras3-legacy-models",
                    f"{tf.package} {tf.version} with keras {keras.version}: tf.keras is Keras 3. Code written for "
                    f"Keras 2 (tf.keras) may fail, and loading a Keras 2 SavedModel with load_model does not work "
                    f"(Keras 3 reads .keras and legacy .h5 files only){have}",
                    f"for legacy Keras 2 .h5/SavedModel code: {fix} (or migrate the code to Keras 3)",
                    KERAS3_SOURCE)]
