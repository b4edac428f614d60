"""`stackresolve doctor`: check the installed GPU stack against what its TensorFlow needs.

    machine = detect_machine(python_exe=...)
    report = diagnose(machine, kb, tf=None, probe_libraries=stackresolve.detect.probe_libraries)
    print(report.render_text())          # or json.dumps(report.to_json_dict())
    sys.exit(report.exit_code)           # 0 healthy (warnings allowed), 1 problems found

`diagnose` is pure given its inputs: the detected Machine, the knowledge base, and the injected library prober
(`probe_libraries(names, search_dirs) -> {name: (loads, detail)}`; None skips the load check). The target it checks
against is the resolver's stack for the installed TensorFlow on this OS (or for `tf` when given), so every finding
cites the fact behind it: the stack pin's source, TensorFlow's build files, NVIDIA's tables, pitfalls.toml.
"""

from __future__ import annotations

import ntpath
import posixpath
import re
from dataclasses import dataclass, field, replace
from typing import Callable, Mapping

from packaging.specifiers import InvalidSpecifier, SpecifierSet
from packaging.version import InvalidVersion, Version

from stackresolve.knowledge.base import KnowledgeBase
from stackresolve.request import InputError
from stackresolve.resolve import Finding, Resolution, Stack, classify_support, resolve
from stackresolve.target import Flags, build_request

SCHEMA = "stackresolve/doctor@1"
SEVERITY_ORDER = ("error", "warning", "info")
PLAN_FORMATS = "pip|apt|conda|powershell"

LibraryProber = Callable[[list, list], Mapping[str, tuple]]

# How TensorFlow names the libraries it opens. dso_loader.cc formats "lib<name>.so.<version>" (Linux) or
# "<name><version>.dll" (Windows) and opens that name alone; cuda_configure.bzl sets the versions.
DSO_SOURCE = ("tensorflow/tensorflow:tensorflow/stream_executor/platform/default/dso_loader.cc"
              "@026389f7f824d140f243c608984ce163eb6f5374 (GetDsoHandle: the file name is formatted from the "
              "version and opened by name)")
SONAME_SOURCE = ("tensorflow/tensorflow:third_party/gpus/cuda_configure.bzl@4f75a246ce8d340ff8d1cbc3b291ae75cb750c6e "
                 "(_get_cuda_config: 'x.y' for every library before CUDA 10.1; the major for cuBLAS, cuFFT, cuRAND, "
                 "cuSOLVER, cuSPARSE from 10.1; cudart '11.0' for every CUDA 11.x and the major from 12; "
                 "Windows '64_' plus the digits; cuDNN by its major)")
# CUDA >= 11 names each math library by that library's own major, which is not the CUDA major for all of them.
# Library majors as shipped in each CUDA major (NVIDIA's sonames; the same names appear in TensorFlow's
# "Could not load dynamic library" messages, e.g. tensorflow/tensorflow#45200 and NVIDIA/tensorflow#110).
LIBRARY_MAJORS = {
    11: {"cublas": "11", "cufft": "10", "curand": "10", "cusolver": "11", "cusparse": "11"},
    12: {"cublas": "12", "cufft": "11", "curand": "10", "cusolver": "11", "cusparse": "12"},
}
CUDNN_RULE_SOURCE = ("tensorflow/tensorflow:tensorflow/stream_executor/cuda/cuda_dnn.cc "
                     "(IsSourceCompatibleWithCudnnLibrary: same major, runtime minor >= compiled minor)")
MINOR_COMPAT_SOURCE = ("NVIDIA CUDA Compatibility guide (minor version compatibility, CUDA >= 11): a newer 11.x/12.x "
                       "runtime keeps the soname of its major")


# -- library names ------------------------------------------------------------------------------------------
def _cuda_parts(cuda: str) -> tuple[int, int]:
    v = Version(cuda)
    return v.major, (v.minor if len(v.release) > 1 else 0)


def cuda_library_versions(cuda: str) -> dict[str, str]:
    """{library: the version in its file name} for a CUDA release, as TensorFlow's build configures it."""
    major, minor = _cuda_parts(cuda)
    if major >= 11:
        libs = dict(LIBRARY_MAJORS.get(major, {"cublas": str(major)}))
        if (major, minor) == (11, 0):
            libs["cusolver"] = "10"  # CUDA 11.0 still shipped cuSOLVER 10
        libs = {"cudart": "11.0" if major == 11 else str(major), **libs}
        return libs
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


# -- the report ------------------------------------------------------------------------------------------------
@dataclass(frozen=True)
class Target:
    """What the checked TensorFlow needs (from the resolver's stack, corrected by the wheel's own build_info)."""

    tf_version: str
    pip_package: str
    origin: str  # "installed" | "--tf" | "newest for this machine"
    python: str | None
    cuda: str | None
    cuda_source: str = ""
    cudnn_compiled: str | None = None  # "7.4": the cuDNN the build was compiled with
    cudnn_recommended: str | None = None  # a concrete release the plan would install ("7.6.5")
    cudnn_source: str = ""
    driver_min: str | None = None
    driver_source: str = ""
    and_cuda: bool = False  # CUDA and cuDNN come as pip wheels (tensorflow[and-cuda])
    libraries: tuple[tuple[str, str], ...] = ()

    def to_json_dict(self) -> dict:
        return {"tensorflow": self.tf_version, "pip_package": self.pip_package, "origin": self.origin,
                "python": self.python, "cuda": self.cuda, "cudnn_compiled": self.cudnn_compiled,
                "cudnn_recommended": self.cudnn_recommended, "driver_min": self.driver_min,
                "and_cuda": self.and_cuda, "libraries": [name for _, name in self.libraries]}


@dataclass(frozen=True)
class DoctorReport:
    findings: tuple[Finding, ...]
    target: Target | None
    machine: dict  # a summary of the detected facts
    libraries: tuple[tuple[str, bool, str], ...] = ()  # (file name, loads, detail) when the load check ran
    resolution: Resolution | None = field(default=None, compare=False, repr=False)  # for --format pip|apt|...

    @property
    def healthy(self) -> bool:
        return not any(f.severity == "error" for f in self.findings)

    @property
    def exit_code(self) -> int:
        return 0 if self.healthy else 1

    def by_severity(self, severity: str) -> list[Finding]:
        return [f for f in self.findings if f.severity == severity]

    def plan_hint(self) -> str:
        version = self.target.tf_version if self.target else "VERSION"
        return f"stackresolve plan --tf {version} --format {PLAN_FORMATS}"

    def to_json_dict(self) -> dict:
        return {
            "schema": SCHEMA,
            "healthy": self.healthy,
            "target": self.target.to_json_dict() if self.target else None,
            "machine": self.machine,
            "libraries": [{"name": n, "loads": ok, "detail": d} for n, ok, d in self.libraries],
            "findings": [f.to_json() for f in self.findings],
            "plan_command": self.plan_hint(),
        }

    def render_text(self) -> str:
        lines = []
        t = self.target
        m = self.machine
        where = m.get("os") or "unknown OS"
        py = (m.get("python") or {}).get("version")
        if t:
            head = f"stackresolve doctor: {t.pip_package} {t.tf_version} ({t.origin}) on {where}"
            lines.append(head + (f", Python {py}" if py else ""))
            if t.cuda:
                needs = [f"CUDA {t.cuda}", f"cuDNN {t.cudnn_compiled.split('.')[0]}.x >= {t.cudnn_compiled}"
                         if t.cudnn_compiled else "cuDNN", f"driver >= {t.driver_min or '?'}"]
                lines.append("needs: " + ", ".join(needs) + (" (as pip wheels)" if t.and_cuda else ""))
            else:
                lines.append("needs: no CUDA (CPU-only TensorFlow)")
        else:
            lines.append(f"stackresolve doctor on {where}" + (f", Python {py}" if py else ""))
        if self.libraries:
            loads = sum(1 for _, ok, _ in self.libraries if ok)
            lines.append(f"libraries: {loads} of {len(self.libraries)} load "
                         f"({', '.join(n for n, ok, _ in self.libraries if not ok) or 'all good'}"
                         f"{' missing' if loads < len(self.libraries) else ''})")
        for severity in SEVERITY_ORDER:
            group = self.by_severity(severity)
            if not group:
                continue
            lines.append("")
            lines.append(f"{severity.upper()}S ({len(group)})" if len(group) > 1 else f"{severity.upper()} (1)")
            for f in group:
                lines.append(f"  [{f.code}] {f.message}")
                if f.fix:
                    lines.append(f"      fix: {f.fix}")
                if f.source:
                    lines.append(f"      source: {f.source}")
        lines.append("")
        errors, warnings = len(self.by_severity("error")), len(self.by_severity("warning"))
        if self.healthy:
            lines.append("healthy" + (f" ({warnings} warning{'s' if warnings != 1 else ''})" if warnings else ""))
        else:
            lines.append(f"problems found: {errors} error{'s' if errors != 1 else ''}"
                         + (f", {warnings} warning{'s' if warnings != 1 else ''}" if warnings else ""))
        lines.append(f"full fix plan: {self.plan_hint()}")
        return "\n".join(lines) + "\n"


# -- helpers ----------------------------------------------------------------------------------------------------
def _version(text: str | None) -> Version | None:
    if not text:
        return None
    try:
        return Version(text)
    except InvalidVersion:
        return None


def _major_minor(text: str | None) -> str | None:
    m = re.match(r"^(\d+)\.(\d+)", text or "")
    return f"{m.group(1)}.{m.group(2)}" if m else None


def _os_name(machine) -> str:
    if machine.os.wsl:
        return "wsl2"
    return machine.os.system if machine.os.system in ("linux", "windows", "macos") else "linux"


def _pathmod(system: str):
    return ntpath if system == "windows" else posixpath


def _path_entries(machine, system: str) -> list[str]:
    env = machine.env or {}
    if system == "windows":
        value = env.get("PATH") or env.get("Path") or ""
        return [p.strip().strip('"') for p in value.split(";") if p.strip()]
    return [p for p in (env.get("LD_LIBRARY_PATH") or "").split(":") if p]


def _norm_dir(system: str, path: str) -> str:
    mod = _pathmod(system)
    p = mod.normpath(path)
    return p.lower() if system == "windows" else p


def _installed_tensorflow(machine):
    fws = [f for f in machine.frameworks if f.name == "tensorflow" and f.version]
    # on Windows, tensorflow >= 2.11 is a metapackage over tensorflow-intel: report the one the user installed
    return next((f for f in fws if f.package != "tensorflow-intel"), fws[0] if fws else None)


def _gpu_cc(kb: KnowledgeBase, gpu) -> tuple[str | None, str]:
    if gpu.compute_capability:
        return gpu.compute_capability, gpu.compute_capability_source or gpu.source
    known = kb.find_gpu(gpu.name) if gpu.name else None
    return (known.cc, f"{gpu.source} + gpus.toml ({known.source})") if known else (None, gpu.source)


def _cuda_fit(found: str, wanted: str) -> str:
    """"ok" | "older-minor" | "no": can a CUDA `found` runtime serve a build for `wanted`?
    Before CUDA 11 every library name carries major.minor, so only the same release loads; from 11 on the names
    carry the major alone and a newer minor of the same major serves (minor version compatibility)."""
    f, w = _cuda_parts(found), _cuda_parts(wanted)
    if w[0] < 11:
        return "ok" if f == w else "no"
    if f[0] != w[0]:
        return "no"
    return "ok" if f[1] >= w[1] else "older-minor"


# -- diagnosis ----------------------------------------------------------------------------------------------
def machine_summary(machine) -> dict:
    tf = _installed_tensorflow(machine)
    py = machine.python
    return {
        "os": _os_name(machine),
        "arch": machine.os.arch,
        "driver": ({"version": machine.driver.version, "cuda_max": machine.driver.cuda_max,
                    "source": machine.driver.source} if machine.driver else None),
        "gpus": [{"name": g.name, "compute_capability": g.compute_capability, "source": g.source}
                 for g in machine.gpus],
        "python": ({"version": py.version, "executable": py.executable} if py else None),
        "tensorflow": ({"package": tf.package, "version": tf.version, "cuda": tf.cuda, "cudnn": tf.cudnn,
                        "gpu_build": tf.gpu_build} if tf else None),
        "cuda_toolkits": [{"version": t.version, "path": t.path, "source": t.source} for t in machine.cuda_toolkits],
        "cudnn": [{"version": c.version, "path": c.path, "source": c.source} for c in machine.cudnn],
        "packages": {p.name: p.version for p in (py.packages if py else ())},
    }


class _Doctor:
    def __init__(self, machine, kb: KnowledgeBase, tf: str | None, prober: LibraryProber | None):
        self.m = machine
        self.kb = kb
        self.tf_flag = tf
        self.prober = prober
        self.system = "windows" if machine.os.system == "windows" else machine.os.system
        self.os = _os_name(machine)
        self.findings: list[Finding] = []
        self.libraries: list[tuple[str, bool, str]] = []
        self.path_dirs_reported: set[str] = set()  # folders a PATH finding already names
        self.explained: set[str] = set()  # components ("cuda", "cudnn") whose absence a finding already explains
        self.installed = _installed_tensorflow(machine)
        py = machine.python.version if machine.python else None
        self.python = _major_minor(py)

    def add(self, severity, code, message, fix="", source=""):
        self.findings.append(Finding(severity, code, message, fix, source))

    # -- target ------------------------------------------------------------------------------------------
    def _request(self, tf: str, *, python: str | None, cpu: bool, with_machine: bool):
        from stackresolve.machine import facts_from_machine

        facts = facts_from_machine(self.m)
        if not with_machine:
            # the driver and GPU are what we check, not constraints of the target: resolve without them
            facts = replace(facts, driver=None, driver_source="", gpus=(), probed_gpus=False)
        return build_request(self.kb, Flags(tf=tf, python=python, cpu=cpu), facts)

    def resolve_target(self) -> tuple[Resolution | None, str]:
        if self.tf_flag:
            tf, origin = self.tf_flag, "--tf"
        elif self.installed:
            tf, origin = self.installed.version, "installed"
        else:
            tf, origin = "latest", "newest for this machine"
            where = self.m.python.executable if self.m.python else "the target Python"
            self.add("error", "tensorflow-not-installed", f"no TensorFlow is installed in {where}",
                     "install the stack this report checks against (see the plan command below), or pass --tf "
                     "VERSION to check this machine for another release", "python-probe (dist-info)")
        cpu = self.os == "macos" or (origin == "installed" and self.installed.gpu_build is False)
        with_machine = origin == "newest for this machine"
        try:
            request = self._request(tf, python=self.python, cpu=cpu, with_machine=with_machine)
        except InputError as exc:
            if origin == "installed":
                self.add("warning", "tensorflow-unknown-release",
                         f"the installed TensorFlow {tf} is not in the knowledge base ({exc}); only the checks "
                         "that need no target ran", "check a known release with --tf VERSION",
                         "tensorflow_wheels.toml (the package index)")
                return None, origin
            raise
        resolution = resolve(self.kb, request, with_alternatives=False)
        if resolution.stack is None and self.python:
            retry = resolve(self.kb, self._request(tf, python=None, cpu=cpu, with_machine=with_machine),
                            with_alternatives=False)
            if retry.stack is not None:
                py = retry.stack.python
                self.add("error", "python-unsupported",
                         f"{py.value.get('min')}-{py.value.get('max')} are the Python versions with "
                         f"{retry.stack.framework.value['pip_package']} {retry.stack.tf_version} wheels for "
                         f"{request.wheel_platform}; this environment runs Python {self.python}",
                         f"create an environment with Python {py.value.get('recommended')}", py.source)
                resolution = retry
        if resolution.stack is None and not cpu:
            cpu_resolution = resolve(self.kb, self._request(tf, python=self.python, cpu=True,
                                                            with_machine=with_machine), with_alternatives=False)
            if cpu_resolution.stack is not None:
                for f in resolution.findings:
                    if f.severity == "error":
                        self.add("warning" if f.code != "conflict" else "info", f.code,
                                 f.message + " (TensorFlow runs on the CPU here)", f.fix, f.source)
                resolution = cpu_resolution
        if resolution.stack is None:
            for f in resolution.findings:
                self.add(f.severity, f.code, f.message, f.fix, f.source)
        return resolution, origin

    def make_target(self, stack: Stack, origin: str) -> Target:
        fw = stack.framework.value
        cand = stack.candidate
        if stack.cuda is None:
            return Target(fw["version"], fw["pip_package"], origin, stack.python.value.get("recommended"), None)
        cuda, cuda_source = stack.cuda.value["version"], stack.cuda.source
        compiled = cand.cudnn_min or stack.cudnn.value["version"]
        cudnn_major = str(Version(compiled).major)
        cudnn_source = stack.cudnn.source
        inst = self.installed
        if origin == "installed" and inst and inst.cuda and _major_minor(inst.cuda) != cuda:
            # the wheel's own build_info says what it dlopens: it wins over the table
            self.add("info", "build-info-differs",
                     f"the installed TensorFlow says it was built with CUDA {inst.cuda}; the tested-build table "
                     f"for {fw['version']} says CUDA {cuda}. Checking against the wheel's own build info.",
                     "", f"{inst.path or ''} tensorflow/python/platform/build_info.py; {cuda_source}")
            cuda, cuda_source = _major_minor(inst.cuda) or inst.cuda, "build_info.py of the installed wheel"
        if origin == "installed" and inst and inst.cudnn and inst.cudnn.split(".")[0] != cudnn_major:
            cudnn_major = inst.cudnn.split(".")[0]
            compiled = inst.cudnn if "." in inst.cudnn else f"{cudnn_major}.0"
            cudnn_source = "build_info.py of the installed wheel"
        libraries = tuple(tf_library_names(cuda, cudnn_major, self.system))
        return Target(fw["version"], fw["pip_package"], origin, stack.python.value.get("recommended"), cuda,
                      cuda_source, compiled, stack.cudnn.value["version"], cudnn_source,
                      stack.driver.value.get("min") if stack.driver else None,
                      stack.driver.source if stack.driver else "", bool(cand.extra), libraries)

    # -- checks ----------------------------------------------------------------------------------------------
    def carry_detection_findings(self) -> None:
        for f in self.m.findings:
            if f.code == "no-nvidia-gpu":
                continue  # judged below against what the target needs
            if f.code == "compute-capability-unknown":
                gpu = next((g for g in self.m.gpus if g.compute_capability is None and g.name
                            and self.kb.find_gpu(g.name)), None)
                if gpu is not None:
                    continue  # the GPU table knows it
            self.add(f.severity, f.code, f.message, f.fix, f"detect: {f.source}" if f.source else "detect")

    def check_gpu_present(self, target: Target) -> bool:
        if self.m.gpus:
            return True
        package = self.installed.package if self.installed else ""
        gpu_only = bool(package and package.endswith("-gpu")) or any(
            t.source.startswith("pip:nvidia-cuda-runtime") for t in self.m.cuda_toolkits)
        self.add("error" if gpu_only else "warning", "no-nvidia-gpu",
                 f"no NVIDIA GPU was found (probes: nvml, libcuda, nvidia-smi, /proc): {target.pip_package} "
                 f"{target.tf_version} will run on the CPU only",
                 "install the NVIDIA driver (a reboot after install loads its kernel module), or check that the "
                 "GPU is passed to this container/VM (docker run --gpus all)", "detect: nvml, libcuda, nvidia-smi")
        return False

    def check_driver(self, target: Target) -> None:
        d = self.m.driver
        wanted = target.cuda
        if d is None or (d.version is None and d.cuda_max is None):
            self.add("error", "no-driver", f"no NVIDIA driver was found; CUDA {wanted} needs >= {target.driver_min}",
                     f"install NVIDIA driver {target.driver_min} or newer", target.driver_source)
            return
        if d.version is None:
            if _version(d.cuda_max) and _version(d.cuda_max) < Version(wanted):
                self.add("error", "driver-too-old",
                         f"the driver supports CUDA up to {d.cuda_max}; TensorFlow {target.tf_version} uses "
                         f"CUDA {wanted}", f"install NVIDIA driver {target.driver_min} or newer",
                         f"{d.cuda_max_source or d.source}; {target.driver_source}")
            return
        have, need = _version(d.version), _version(target.driver_min)
        if have is None or need is None or have >= need:
            return
        toolkit = self.kb.toolkit(wanted)
        driver_os = "windows" if self.os in ("windows", "wsl2") else "linux"
        compat = (toolkit.compat_driver_windows if driver_os == "windows" else toolkit.compat_driver_linux) \
            if toolkit else ""
        if compat and have >= Version(compat):
            self.add("warning", "driver-minor-compat",
                     f"driver {d.version} is older than the {need} CUDA {wanted} ships with, but meets the "
                     f"{compat} minimum of CUDA minor version compatibility: CUDA runs, PTX JIT compilation does not",
                     f"install NVIDIA driver {target.driver_min} or newer", f"{d.source}; {toolkit.source}")
            return
        self.add("error", "driver-too-old",
                 f"driver {d.version} is too old for CUDA {wanted} (TensorFlow {target.tf_version}), which needs "
                 f">= {target.driver_min} on {driver_os}: TensorFlow fails with \"CUDA driver version is "
                 f"insufficient for CUDA runtime version\"",
                 f"install NVIDIA driver {target.driver_min} or newer, or choose a TensorFlow built for an older "
                 f"CUDA (stackresolve plan --driver {d.version})", f"detect: {d.source}; {target.driver_source}")

    def check_gpu_support(self, target: Target) -> None:
        line = ".".join(target.tf_version.split(".")[:2])
        arch = self.kb.compiled_arch(line)
        toolkit = self.kb.toolkit(target.cuda) if target.cuda else None
        for g in self.m.gpus:
            cc, cc_source = _gpu_cc(self.kb, g)
            label = f"GPU {g.index} ({g.name or 'unnamed'}"
            if cc is None:
                self.add("warning", "compute-capability-unknown",
                         f"{label}): compute capability unknown, so its support by TensorFlow {line} is unchecked",
                         "set STACKRESOLVE_GPU_CC=X.Y", g.source)
                continue
            label += f", compute capability {cc})"
            level = classify_support(arch, cc)
            arch_source = arch.source if arch else "tensorflow.toml [[compiled_arch]]"
            if level == "unsupported":
                self.add("error", "gpu-not-supported",
                         f"{label}: TensorFlow {line} wheels carry no kernels for it (\"no kernel image is "
                         f"available for execution on the device\")",
                         "use a TensorFlow release compiled for this GPU (stackresolve plan --gpu-cc "
                         f"{cc}), or build TensorFlow from source", f"{cc_source}; {arch_source}")
            elif level == "ptx-jit":
                self.add("warning", "ptx-jit",
                         f"{label}: TensorFlow {line} carries only PTX for it; the driver JIT-compiles every kernel "
                         f"at first start (minutes)", "set CUDA_CACHE_MAXSIZE=4294967296 to keep the JIT cache",
                         f"{cc_source}; {arch_source}")
            elif level == "unknown":
                self.add("info", "arch-unknown",
                         f"the CUDA architectures compiled into TensorFlow {line} are not recorded; {label} is "
                         f"unchecked", "", arch_source)
            if toolkit and Version(cc) < Version(toolkit.arch_min):
                self.add("error", "gpu-too-old-for-cuda",
                         f"{label}: CUDA {toolkit.version} supports compute capability >= {toolkit.arch_min}",
                         "choose a TensorFlow built with an older CUDA (stackresolve plan --gpu-cc " f"{cc})",
                         toolkit.source)
            support = self.kb.arch_support_for(cc)
            if support and support.last_branch and target.driver_min and \
                    int(target.driver_min.split(".")[0]) > int(support.last_branch):
                self.add("error", "gpu-driver-branch-ended",
                         f"{label}: {support.architecture.capitalize()} GPUs are supported by drivers up to "
                         f"R{support.last_branch}, but CUDA {target.cuda} needs driver >= {target.driver_min}",
                         f"choose a TensorFlow built for a CUDA that R{support.last_branch} runs "
                         f"(stackresolve plan --gpu-cc {cc})", support.source)

    def check_cuda(self, target: Target) -> None:
        wanted = target.cuda
        found = list(self.m.cuda_toolkits)
        fits = [(t, _cuda_fit(t.version, wanted)) for t in found]
        libs = ", ".join(n for c, n in target.libraries if c == "cuda" and "cudart" in n)
        if any(fit == "ok" for _, fit in fits):
            return
        older = [t for t, fit in fits if fit == "older-minor"]
        if older:
            t = older[0]
            self.add("warning", "cuda-older-minor",
                     f"TensorFlow {target.tf_version} was built with CUDA {wanted}; the installed CUDA {t.version} "
                     f"({t.path or t.source}) has the same library names ({libs}) but is older",
                     self._cuda_fix(target), f"{target.cuda_source}; {MINOR_COMPAT_SOURCE}")
            return
        listing = ", ".join(f"{t.version} ({t.path or t.source})" for t in found)
        self.explained.add("cuda")
        if found:
            self.add("error", "cuda-version-mismatch",
                     f"TensorFlow {target.tf_version} loads the CUDA {wanted} runtime ({libs}); installed: "
                     f"CUDA {listing}" + (" - their library names differ, so none of them is used"
                                          if _cuda_parts(wanted)[0] < 11 else ""),
                     self._cuda_fix(target), f"{target.cuda_source}; {SONAME_SOURCE}")
        else:
            self.add("error", "cuda-runtime-missing",
                     f"TensorFlow {target.tf_version} needs the CUDA {wanted} runtime ({libs}); no CUDA toolkit, "
                     "conda cudatoolkit or nvidia-cuda-runtime wheel was found", self._cuda_fix(target),
                     target.cuda_source)

    def _cuda_fix(self, target: Target) -> str:
        if target.and_cuda:
            return f"pip install '{target.pip_package}=={target.tf_version}' (brings the CUDA {target.cuda} wheels)"
        return (f"install CUDA {target.cuda} (it installs beside other versions), or conda install "
                f"cudatoolkit={target.cuda} into this environment; the plan command below prints the steps")

    def check_and_cuda_pins(self, target: Target, stack: Stack) -> None:
        py = self.m.python
        if not target.and_cuda or py is None:
            return
        nvidia = [p for p in py.packages if p.name.startswith("nvidia-")]
        if not nvidia:
            return  # CUDA from the system: check_cuda judged it
        from packaging.requirements import InvalidRequirement, Requirement

        wrong, missing = [], []
        for text in stack.candidate.release.and_cuda:
            try:
                req = Requirement(text)
            except InvalidRequirement:
                continue
            if not req.name.lower().startswith("nvidia-"):
                continue
            have = py.package(req.name)
            if have is None or not have.version:
                missing.append(str(req))
            elif _version(have.version) is None or not req.specifier.contains(Version(have.version),
                                                                               prereleases=True):
                wrong.append(f"{have.name} {have.version} (wants {req.specifier})")
        fix = f"pip install '{target.pip_package}=={target.tf_version}'"
        source = stack.candidate.release.source + " (Requires-Dist of the and-cuda extra)"
        if wrong:
            self.add("warning", "and-cuda-pin-mismatch",
                     f"{target.pip_package} {target.tf_version} pins other NVIDIA wheels than installed: "
                     + "; ".join(wrong), fix, source)
        if missing:
            self.add("warning", "and-cuda-wheel-missing",
                     f"NVIDIA wheels of {target.pip_package} {target.tf_version} are missing: " + ", ".join(missing),
                     fix, source)

    def check_cudnn(self, target: Target) -> None:
        compiled = Version(target.cudnn_compiled)
        found = list(self.m.cudnn)
        same_major = []
        for c in found:
            v = _version(c.version)
            if v is None or v.major != compiled.major:
                continue
            if len(v.release) == 1 or v.minor >= compiled.minor:
                return  # same major and a new enough minor (only the major is known for libcudnn.so.N)
            same_major.append(c)
        major = compiled.major
        fix = (f"pip install '{target.pip_package}=={target.tf_version}' (brings cuDNN {target.cudnn_recommended})"
               if target.and_cuda else
               f"install cuDNN {target.cudnn_recommended} for CUDA {target.cuda} (any {major}.x >= "
               f"{compiled.major}.{compiled.minor} built for CUDA {target.cuda} works)")
        source = f"{target.cudnn_source}" if CUDNN_RULE_SOURCE in target.cudnn_source else \
            f"{target.cudnn_source}; {CUDNN_RULE_SOURCE}"
        listing = ", ".join(f"{c.version} ({c.path or c.source})" for c in found)
        self.explained.add("cudnn")
        if same_major:
            c = same_major[0]
            self.add("error", "cudnn-too-old",
                     f"cuDNN {c.version} is installed but TensorFlow {target.tf_version} was compiled with cuDNN "
                     f"{target.cudnn_compiled}: it refuses an older minor (\"Loaded runtime CuDNN library: "
                     f"{c.version} but source was compiled with: {target.cudnn_compiled}\")", fix, source)
        elif found:
            self.add("error", "cudnn-version-mismatch",
                     f"TensorFlow {target.tf_version} loads cuDNN {major} ({library_file_name('cudnn', str(major), self.system)}); "
                     f"installed: cuDNN {listing}", fix, source)
        else:
            self.add("error", "cudnn-missing",
                     f"TensorFlow {target.tf_version} needs cuDNN {major}.x >= {target.cudnn_compiled}; none was found "
                     "(headers, libraries, conda or pip)", fix, source)

    def _candidate_dirs(self, target: Target) -> list[str]:
        """Folders where CUDA / cuDNN files may lie although TensorFlow's loader does not look there."""
        mod = _pathmod(self.system)
        dirs: list[str] = []
        for t in self.m.cuda_toolkits:
            if not t.path or t.source.startswith("pip:"):
                continue
            if self.system == "windows":
                dirs += [mod.join(t.path, "bin"), mod.join(t.path, "Library", "bin")]
            else:
                dirs += [mod.join(t.path, "lib64"), mod.join(t.path, "lib"),
                         mod.join(t.path, "targets", "x86_64-linux", "lib")]
        for c in self.m.cudnn:
            if not c.path:
                continue
            if c.source.startswith(("cudnn64.dll", "libcudnn.so")):
                dirs.append(mod.dirname(c.path))
            elif c.source.endswith(".h"):  # <root>/include/cudnn.h -> <root>/lib64, <root>/lib, <root>/bin
                root = mod.dirname(mod.dirname(c.path))
                dirs += [mod.join(root, "bin")] if self.system == "windows" else \
                    [mod.join(root, "lib64"), mod.join(root, "lib")]
        if self.m.python and not target.and_cuda:
            dirs += list(self.m.python.nvidia_lib_dirs)
        return list(dict.fromkeys(dirs))

    def check_libraries(self, target: Target) -> None:
        names = [n for _, n in target.libraries]
        if not names:
            return
        if self.prober is None:
            self.add("info", "library-check-skipped",
                     f"the libraries TensorFlow opens ({', '.join(names)}) were not test-loaded", "", DSO_SOURCE)
            return
        search = (list(self.m.python.nvidia_lib_dirs) if target.and_cuda and self.m.python else []) + \
            _path_entries(self.m, self.system)
        results = dict(self.prober(names, search))
        self.libraries = [(n, bool(results.get(n, (False, ""))[0]), str(results.get(n, (False, "not tried"))[1]))
                          for n in names]
        failing = [n for n, ok, _ in self.libraries if not ok]
        if not failing:
            return
        candidates = self._candidate_dirs(target)
        elsewhere = dict(self.prober(failing, candidates)) if candidates else {}
        by_dir: dict[str, list[str]] = {}
        missing = []
        mod = _pathmod(self.system)
        for n in failing:
            ok, detail = elsewhere.get(n, (False, ""))
            # the prober's detail names the file that loaded: find which candidate folder holds it
            found_in = next((d for d in candidates if mod.join(d, n) in str(detail)), None) if ok else None
            if found_in:
                by_dir.setdefault(found_in, []).append(n)
            else:
                missing.append(n)
        var = "PATH" if self.system == "windows" else "LD_LIBRARY_PATH"
        for d, libs in by_dir.items():
            if _norm_dir(self.system, d) in self.path_dirs_reported:
                continue
            fix = (f"add {d} to PATH (System Properties > Environment Variables), then open a new terminal"
                   if self.system == "windows" else f"export LD_LIBRARY_PATH={d}:$LD_LIBRARY_PATH (or add {d} to "
                                                    f"/etc/ld.so.conf.d/ and run ldconfig)")
            self.add("error", "library-not-on-search-path",
                     f"{', '.join(libs)} exist in {d} but TensorFlow's loader does not search there ({var}): "
                     f"TensorFlow logs \"Could not load dynamic library '{libs[0]}'\" and runs on the CPU",
                     fix, DSO_SOURCE)
        component = dict((n, c) for c, n in target.libraries)
        unexplained = [n for n in missing if component.get(n) not in self.explained]
        if unexplained:
            why = {n: d for n, _, d in self.libraries}
            first = why[unexplained[0]]
            cuda_missing = [n for n in unexplained if component.get(n) == "cuda"]
            fix = self._cuda_fix(target) if cuda_missing else \
                f"install cuDNN {target.cudnn_recommended} for CUDA {target.cuda}"
            self.add("error", "library-missing",
                     f"TensorFlow {target.tf_version} cannot load {', '.join(unexplained)} (it logs \"Could not load "
                     f"dynamic library\" and runs on the CPU); the loader says: {first}", fix,
                     f"{DSO_SOURCE}; {SONAME_SOURCE}")

    def check_search_path(self, target: Target) -> None:
        """PATH on Windows (CUDA bin and cuDNN bin folders), LD_LIBRARY_PATH on Linux: entries that hurt."""
        entries = {_norm_dir(self.system, p) for p in _path_entries(self.m, self.system)}
        mod = _pathmod(self.system)
        if self.system == "windows":
            toolkits = [t for t in self.m.cuda_toolkits if t.path and not t.source.startswith(("pip:", "conda:"))
                        and _cuda_fit(t.version, target.cuda) == "ok"]
            if toolkits and not any(_norm_dir("windows", mod.join(t.path, "bin")) in entries for t in toolkits):
                bin_dir = mod.join(toolkits[0].path, "bin")
                self.path_dirs_reported.add(_norm_dir("windows", bin_dir))
                dlls = [n for c, n in target.libraries if c == "cuda"]
                self.add("error", "cuda-bin-not-on-path",
                         f"CUDA {toolkits[0].version} is installed at {toolkits[0].path} but its bin folder is not "
                         f"on PATH, so TensorFlow cannot load {', '.join(dlls[:2])}",
                         f"add {bin_dir} to PATH, then open a new terminal", DSO_SOURCE)
            major = target.cudnn_compiled.split(".")[0] if target.cudnn_compiled else None
            dll_dirs = [mod.dirname(c.path) for c in self.m.cudnn
                        if c.source == "cudnn64.dll" and c.path and c.version.split(".")[0] == major]
            if dll_dirs and not any(_norm_dir("windows", d) in entries for d in dll_dirs):
                self.path_dirs_reported.add(_norm_dir("windows", dll_dirs[0]))
                self.add("error", "cudnn-bin-not-on-path",
                         f"cudnn64_{major}.dll is in {dll_dirs[0]}, which is not on PATH: TensorFlow cannot load "
                         "it (installing cuDNN is a separate step from CUDA, and its folder must be on PATH too)",
                         f"add {dll_dirs[0]} to PATH (or copy the cuDNN bin, include and lib files into the CUDA "
                         f"{target.cuda} folders), then open a new terminal", DSO_SOURCE)
            cuda_path = (self.m.env or {}).get("CUDA_PATH")
            if cuda_path and not any(_norm_dir("windows", t.path) == _norm_dir("windows", cuda_path)
                                     for t in toolkits):
                self.add("info", "cuda-path-other-version",
                         f"CUDA_PATH={cuda_path} is not the CUDA {target.cuda} TensorFlow uses (TensorFlow itself "
                         "only searches PATH; build tools read CUDA_PATH)",
                         f"set CUDA_PATH to the CUDA {target.cuda} folder if you build CUDA code", "env:CUDA_PATH")
            return
        for entry in _path_entries(self.m, self.system):
            m = re.search(r"cuda-(\d+\.\d+)", entry)
            if m and _cuda_fit(m.group(1), target.cuda) == "no":
                self.add("warning", "ld-library-path-other-cuda",
                         f"LD_LIBRARY_PATH names {entry} (CUDA {m.group(1)}); TensorFlow {target.tf_version} loads "
                         f"CUDA {target.cuda} libraries", f"replace it with the CUDA {target.cuda} lib64 folder",
                         "env:LD_LIBRARY_PATH")
            if posixpath.basename(posixpath.normpath(entry)) == "stubs":
                self.add("warning", "ld-library-path-stubs",
                         f"LD_LIBRARY_PATH names {entry}: the toolkit's stub libcuda.so there shadows the driver's "
                         "(cuInit fails with CUDA_ERROR_STUB_LIBRARY)", f"remove {entry} from LD_LIBRARY_PATH",
                         "env:LD_LIBRARY_PATH")

    def check_pitfalls(self, target: Target) -> None:
        py = self.m.python
        if py is None or not py.packages or not self.python:
            return
        os_name = "linux" if self.os == "wsl2" else self.os
        try:
            pins = self.kb.pitfalls_for(target.tf_version, os_name, self.python)
        except (InvalidVersion, InvalidSpecifier):
            return
        for pin in pins:
            have = py.package(pin.package)
            if have is None or not have.version:
                continue
            version = _version(have.version)
            if version is None or SpecifierSet(pin.constraint).contains(version, prereleases=True):
                continue
            self.add("error", f"pitfall-{have.name}",
                     f"{have.name} {have.version} is installed; TensorFlow {target.tf_version} needs "
                     f"{pin.requirement}: {pin.why}", f"pip install '{pin.requirement}'", pin.source)

    def check_installed_vs_target(self, target: Target) -> None:
        inst = self.installed
        if target.origin != "--tf" or inst is None:
            return
        if _version(inst.version) != _version(target.tf_version):
            self.add("warning", "tensorflow-differs-from-target",
                     f"{inst.package} {inst.version} is installed; this report checks the machine for "
                     f"{target.pip_package} {target.tf_version}",
                     f"pip install '{target.pip_package}=={target.tf_version}'", "python-probe (dist-info)")

    def check_cpu_build(self, target: Target) -> None:
        inst = self.installed
        if self.m.gpus and inst and inst.gpu_build is False and target.origin == "installed":
            self.add("warning", "cpu-build-with-gpu",
                     f"{inst.package} {inst.version} is a CPU-only build but this machine has an NVIDIA GPU",
                     "install the GPU build the plan command names", inst.source or "python-probe")

    # -- all of it ---------------------------------------------------------------------------------------------
    def run(self) -> DoctorReport:
        self.carry_detection_findings()
        resolution, origin = self.resolve_target()
        stack = resolution.stack if resolution else None
        target = self.make_target(stack, origin) if stack else None
        if target is not None:
            self.check_installed_vs_target(target)
            if target.cuda:
                if self.check_gpu_present(target):
                    self.check_driver(target)
                    self.check_gpu_support(target)
                    self.check_cuda(target)
                    self.check_and_cuda_pins(target, stack)
                    self.check_cudnn(target)
                    self.check_search_path(target)
                    self.check_libraries(target)
            else:
                self.check_cpu_build(target)
            if origin != "newest for this machine":
                self.check_pitfalls(target)
        order = {s: i for i, s in enumerate(SEVERITY_ORDER)}
        findings = sorted(self.findings, key=lambda f: order.get(f.severity, 3))  # stable: keeps check order
        return DoctorReport(tuple(findings), target, machine_summary(self.m), tuple(self.libraries), resolution)


def diagnose(machine, kb: KnowledgeBase, *, tf: str | None = None,
             probe_libraries: LibraryProber | None = None) -> DoctorReport:
    """Check a detected machine against what its installed TensorFlow (or `tf`) needs.

    Raises stackresolve.request.InputError for a bad `tf` (the CLI prints it and exits 2)."""
    return _Doctor(machine, kb, tf, probe_libraries).run()


def doctor(*, python_exe: str | None = None, tf: str | None = None, kb: KnowledgeBase | None = None,
           load_libraries: bool = True) -> DoctorReport:
    """Detect this machine and diagnose it, loading the libraries for real (what `stackresolve doctor` runs)."""
    from stackresolve.detect import detect_machine
    from stackresolve.detect import probe_libraries as real_probe

    if kb is None:
        from stackresolve.knowledge.loader import knowledge

        kb = knowledge()
    machine = detect_machine(python_exe=python_exe)

    def prober(names, dirs):
        return real_probe(names, dirs, python_exe=None)

    return diagnose(machine, kb, tf=tf, probe_libraries=prober if load_libraries else None)
