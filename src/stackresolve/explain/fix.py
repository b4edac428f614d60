"""What a fix must satisfy, read from the explanation (and the command line): the typed request for a fix plan.

The versions themselves are decided by the resolver; here the log's evidence becomes the request.
"""

from __future__ import annotations

import re
from dataclasses import dataclass
from typing import TYPE_CHECKING, Iterable, Sequence

from stackresolve.explain.match import Explanation, log_framework
from stackresolve.explain.versions import _add, _dedupe_versions, _single_os, _version
from stackresolve.knowledge.errors import FRAMEWORK_NAMES
from stackresolve.knowledge.rules import version_wanted_fits
from stackresolve.model.values import release_line

if TYPE_CHECKING:  # pragma: no cover
    from stackresolve.knowledge.base import KnowledgeBase


@dataclass(frozen=True)
class FixOverrides:
    """What the command line says (--tf, --torch, --jax, --gpu, --driver, --os); it wins over the log. One of
    --tf, --torch and --jax names the framework (and its version) whatever the log looks like."""

    tf: str | None = None
    gpu: str | None = None
    driver: str | None = None
    os: str | None = None
    torch: str | None = None
    jax: str | None = None

    @property
    def framework(self) -> str | None:
        """The framework a flag names: tensorflow, pytorch or jax; None without one."""
        if self.tf:
            return "tensorflow"
        if self.torch:
            return "pytorch"
        return "jax" if self.jax else None


@dataclass(frozen=True)
class FixRequest:
    """What a fix plan must satisfy, read from the log (and the command line): the TensorFlow to keep
    (or the candidate lines when the log names none), the OS, Python, the CUDA and cuDNN that
    TensorFlow wants, the driver and GPU seen, pip pins, and one line of evidence per decision."""

    tf: str | None = None
    tf_candidates: tuple[str, ...] = ()
    os: str | None = None
    python: str | None = None
    cuda: str | None = None
    cudnn: str | None = None
    driver: str | None = None
    gpu: str | None = None
    compute_capability: str | None = None
    pins: tuple[str, ...] = ()
    evidence: tuple[str, ...] = ()
    tensorrt: str | None = None
    # the framework the log comes from (tensorflow, pytorch, jax) and its version as the log shows it
    # (the fix request's own TensorFlow stays in `tf`); for PyTorch the build variant of a local version
    # label (2.5.1+cu124: "cu124"), for JAX the jaxlib version and its variant (cuda12.cudnn89), or the
    # CUDA plugin a message names (jax_cuda12_plugin: "cuda12", as detect names a plugin install); the
    # GPU's architecture and the architectures the installed build has code for (PyTorch's warning)
    framework: str | None = None
    framework_version: str | None = None
    variant: str | None = None
    jaxlib: str | None = None
    sm: str | None = None
    supported_sms: tuple[str, ...] = ()
    # PyTorch and JAX: the newest CUDA the driver supports, as the framework printed it ("found version 11040")
    driver_cuda: str | None = None

    def to_json_dict(self) -> dict:
        """The "requested" object of the explain JSON: only the fields that have a value."""
        out: dict = {}
        for key in ("tf", "os", "python", "cuda", "cudnn", "tensorrt", "compute_capability", "driver", "gpu"):
            value = getattr(self, key)
            if value:
                out[key] = value
        if self.tf_candidates:
            out["tf_candidates"] = list(self.tf_candidates)
        if self.pins:
            out["pins"] = list(self.pins)
        for key in ("framework", "framework_version", "variant", "jaxlib", "sm", "driver_cuda"):
            value = getattr(self, key)
            if value:
                out[key] = value
        if self.supported_sms:
            out["supported_sms"] = list(self.supported_sms)
        if self.evidence:
            out["evidence"] = list(self.evidence)
        return out


# Categories whose fix is about the GPU stack: only for these does the request carry CUDA and cuDNN.
GPU_CATEGORIES = (
    "missing-cuda-runtime", "missing-cudnn", "missing-cuda-lib", "cudnn-version-mismatch", "driver-too-old",
    "no-kernel-for-gpu", "cudnn-init-failure", "cublas-failure", "no-gpu-detected", "ptx-jit-slow",
)


# Categories whose fix is on the machine itself (reboot, load the driver, start the container with the GPU), not
# another stack: explain plans none for them.
NOT_FIXED_BY_A_STACK = ("driver-not-loaded", "nccl-failure", "gpu-device-access")
# Categories whose fix is an AMD ROCm build: explain's fix plans are CUDA stacks, so it plans none for them; `plan`
# with the AMD GPU plans the ROCm wheel (issue 36).
NOT_PLANNED_BY_EXPLAIN = ("gfx-not-in-build",)


def _single(values: Sequence[str]) -> str | None:
    values = [v for v in values if "|" not in v]
    return values[0] if len(values) == 1 else None


def _major_minor(version: str) -> str:
    """The release line of a version from the log ("2" is line 2.0); a text that is no version under the number
    rule is kept as it is."""
    return release_line(version) if _version(version) is not None else version


def _line_key(line: str) -> tuple[int, ...]:
    parsed = _version(line)
    return parsed.release if parsed is not None else (0,)


def _printed(value: str, component: str) -> str:
    """A tested-build value as a version: CUDA "10" is 10.0."""
    return f"{value}.0" if component == "cuda" and value and "." not in value else value


def _span(lines: Sequence[str]) -> str:
    return lines[0] if len(lines) == 1 else f"{lines[0]}-{lines[-1]}"


def fix_request(
    explanation: Explanation,
    kb: "KnowledgeBase | None" = None,
    overrides: FixOverrides | None = None,
) -> FixRequest:
    """The request a fix plan must satisfy, from everything the text says.

    - The log's own versions become the request, and the fix keeps the user's TensorFlow: a
      "TensorFlow version: 2.9.1" line, "python3.6" in a path, a Windows path or DLL name (OS), the
      nvidia-smi banner (driver, GPU), the compute capability TensorFlow printed.
    - With a TensorFlow version, CUDA and cuDNN are those of TensorFlow's tested build for it on that
      OS (the knowledge base's tested-build table; without `kb` the log alone).
      Without one, the library file names narrow it: `tf_candidates` are the lines whose tested build
      loads them (cudart64_110.dll + cudnn64_8.dll on Windows: 2.4-2.10).
    - "No kernel image" (no machine code for the GPU): the TensorFlow to use is the first line, from
      the user's on, whose wheels carry machine code for the GPU (the knowledge base's compiled
      architectures, judged by knowledge.rules.classify_support).
    - `overrides` (--tf/--gpu/--driver/--os) fill what the log leaves out; where both speak the flag
      wins and the evidence says so.
    """
    overrides = overrides or FixOverrides()
    seen = explanation.versions_seen
    problems = explanation.problems
    top = problems[0] if problems else None
    evidence: list[str] = []

    # -- OS --------------------------------------------------------------------------------------
    os_log = _single_os(seen)
    os_name = os_log
    if overrides.os:
        if os_log and os_log != overrides.os:
            evidence.append(f"OS {overrides.os} from --os (the log looks like {os_log})")
        elif not os_log:
            evidence.append(f"OS {overrides.os} from --os")
        os_name = overrides.os
    elif os_log:
        evidence.append(f"OS {os_log}: from the paths and library file names in the log")

    # -- the framework: a PyTorch or JAX log asks nothing of TensorFlow ------------------------------
    framework = overrides.framework or log_framework(explanation)
    tf_world = framework in (None, "tensorflow")

    # -- TensorFlow in the log ---------------------------------------------------------------------
    tf_values = list(seen.get("tf", ())) if tf_world else []
    for m in explanation.matches:
        if tf_world and "tf" in m.found and _version(m.found["tf"]) is not None:
            tf_values.append(m.found["tf"])
    path_lines = [v for v in tf_values if "|" in v]  # tensorflow_core in a path: one of 1.15, 2.0, 2.1
    exact = _dedupe_versions(v for v in tf_values if "|" not in v)
    tf_log: str | None = exact[0] if len(exact) == 1 else None
    if tf_log is None and exact:
        lines = {_major_minor(v) for v in exact}
        if len(lines) == 1:
            tf_log = lines.pop()
    tf = tf_log
    if overrides.tf:
        if tf_log and _major_minor(tf_log) != _major_minor(overrides.tf):
            evidence.append(f"TensorFlow {overrides.tf} from --tf (the log shows {tf_log})")
        elif not tf_log:
            evidence.append(f"TensorFlow {overrides.tf} from --tf")
        tf = overrides.tf
    elif tf_log:
        evidence.append(f"TensorFlow {tf_log}: from the log; the fix keeps it")

    # -- what the libraries and messages want ------------------------------------------------------
    def wanted(component: str) -> str | None:
        for m in problems:
            value = m.wanted.get(component)
            if value:
                return value
        libs = seen.get(f"{component}_from_libraries", ())
        return "|".join(libs) if libs else None

    lib_cuda, lib_cudnn = wanted("cuda"), wanted("cudnn")
    gpu_problem = any(m.category in GPU_CATEGORIES for m in problems) or bool(lib_cuda or lib_cudnn)
    tested_builds = kb.tested_builds if kb is not None else ()
    gpu_rows = [b for b in tested_builds if b.cuda]
    row_os = os_name if os_name in ("linux", "windows", "macos") else "linux"

    def rows_fitting(rows: Iterable) -> list:
        out = []
        for b in rows:
            if lib_cuda and not version_wanted_fits(b.cuda, lib_cuda, "cuda"):
                continue
            if lib_cudnn and not version_wanted_fits(b.cudnn, lib_cudnn, "cudnn"):
                continue
            out.append(b)
        return out

    candidates: list[str] = []
    if tf is None and tf_world and (lib_cuda or lib_cudnn):
        rows = [b for b in gpu_rows if os_name is None or b.os == row_os]
        fitting = rows_fitting(rows)
        candidates = sorted({b.line for b in fitting}, key=_line_key)
        if path_lines:
            allowed = set(path_lines[0].split("|"))
            candidates = [c for c in candidates if c in allowed] or candidates
        if candidates:
            libs_named = list(dict.fromkeys(lib for m in problems for lib in m.libraries))
            names = " + ".join(libs_named) if libs_named else "the library names"
            # ordered by CUDA, then cuDNN: two combos of one CUDA line must not come out in the set's (hash-seeded) order
            combos = sorted({(_printed(b.cuda, "cuda"), b.cudnn) for b in fitting if b.line in candidates},
                            key=lambda c: (_line_key(c[0]), _line_key(c[1])))
            per_combo = "; ".join(
                f"{_span([b for b in candidates if any(r.line == b and (_printed(r.cuda, 'cuda'), r.cudnn) == c for r in fitting)])}: "
                f"CUDA {c[0]} + cuDNN {c[1]}"
                for c in combos
            )
            where = f" on {os_name}" if os_name else ""
            evidence.append(f"no TensorFlow version in the log; {names}{where} means TensorFlow "
                            f"{_span(candidates)} ({per_combo})")
    elif tf is None and path_lines:
        candidates = sorted(set(path_lines[0].split("|")), key=_line_key)
        evidence.append(f"tensorflow_core in a path: TensorFlow {_span(candidates)}")

    # -- no machine code for this GPU: the TensorFlow that has it ------------------------------------
    tf_changed = False
    cc_values = [m.found["cc"] for m in explanation.matches if "cc" in m.found] or list(seen.get("cc", ()))
    cc = _single(tuple(dict.fromkeys(cc_values)))
    if tf_world and top is not None and top.category in ("no-kernel-for-gpu", "ptx-jit-slow") and cc and kb is not None:
        with_code = kb.lines_with_native_code(cc, os_name or "linux")
        user_line = _major_minor(tf) if tf else (candidates[-1] if candidates else None)
        choice = None
        if with_code:
            if top.code == "gpu-below-minimum-capability" or (
                user_line and all(_line_key(line) < _line_key(user_line) for line in with_code)
            ):
                older = [line for line in with_code if not user_line or _line_key(line) <= _line_key(user_line)]
                choice = (older or with_code)[-1]
                why = "the newest"
            else:
                newer = [line for line in with_code if not user_line or _line_key(line) >= _line_key(user_line)]
                choice = (newer or with_code)[0]
                why = "the first" + (f" from {user_line} on" if user_line else "")
            evidence.append(
                f"compute capability {cc}: TensorFlow {_span(with_code)} carry machine code for it"
                f"{' on ' + os_name if os_name else ''}; {why} is {choice}"
                + (f" (TensorFlow {tf} does not)" if tf else "")
            )
        if choice is not None and top.category == "ptx-jit-slow" and tf:
            evidence.append(f"it runs (slowly, after a JIT compile): the fix keeps TensorFlow {tf}; "
                            f"TensorFlow {choice} would start without the JIT")
        elif choice is not None:
            tf_changed = tf is None or _major_minor(tf) != choice
            tf, candidates = choice, with_code
        else:
            evidence.append(f"compute capability {cc}: no TensorFlow release carries machine code for it")

    # -- CUDA and cuDNN for the fix ----------------------------------------------------------------
    cuda = cudnn = None
    if tf and gpu_problem:
        line = _major_minor(tf)
        row = kb.tested_build(line, row_os, gpu=True) if kb is not None else None
        if row is not None:
            row_cuda, row_cudnn = _printed(row.cuda, "cuda"), row.cudnn
            cuda, cudnn = row_cuda, row_cudnn
            if lib_cuda and not tf_changed and not version_wanted_fits(row.cuda, lib_cuda, "cuda"):
                cuda = lib_cuda
                evidence.append(f"the libraries want CUDA {lib_cuda.replace('|', ' or ')}, not the CUDA {row_cuda} "
                                f"of TensorFlow {line}'s tested build: not a stock build; the fix follows the libraries")
            if lib_cudnn and not tf_changed and not version_wanted_fits(row.cudnn, lib_cudnn, "cudnn"):
                cudnn = lib_cudnn
            evidence.append(f"TensorFlow {line} on {row_os}: tested build with CUDA {row_cuda} and cuDNN {row_cudnn}")
        elif tested_builds and row_os == "windows" and _line_key(line) > (2, 10):
            evidence.append(f"TensorFlow {line} has no native Windows GPU build (the last is 2.10): "
                            "use TensorFlow 2.10 or WSL2")
    if cuda is None and candidates and tf is None and gpu_problem:
        rows = [b for b in rows_fitting(gpu_rows) if b.line in candidates and (os_name is None or b.os == row_os)]
        cudas = {_printed(b.cuda, "cuda") for b in rows}
        cudnns = {b.cudnn for b in rows}
        if len(cudas) == 1:
            cuda = cudas.pop()
        if len(cudnns) == 1:
            cudnn = cudnns.pop()
    if cuda is None and lib_cuda and "|" not in lib_cuda:
        cuda = lib_cuda
    if cudnn is None and lib_cudnn and "|" not in lib_cudnn:
        cudnn = lib_cudnn
    # a message that names the exact cuDNN the build was compiled with (8.1.0) is more precise than
    # the tested-build table (8.1)
    if cudnn and lib_cudnn and "|" not in lib_cudnn and not tf_changed and version_wanted_fits(cudnn, lib_cudnn, "cudnn") \
            and len(lib_cudnn.split(".")) > len(cudnn.split(".")):
        cudnn = lib_cudnn
    installed = _single(seen.get("cuda", ()))
    if installed and cuda and gpu_problem and not version_wanted_fits(cuda, installed, "cuda"):
        evidence.append(f"the log shows CUDA {installed} installed; the fix wants CUDA {cuda.replace('|', ' or ')}")
    tensorrt = wanted("tensorrt")
    if tensorrt and "|" in tensorrt:
        tensorrt = None

    # -- Python -------------------------------------------------------------------------------------
    python = _single(_dedupe_versions(_major_minor(v) for v in seen.get("python", ())))
    python_is_the_problem = any(m.category == "no-matching-distribution" for m in problems)
    supported: list[str] = []
    if tf and tested_builds:
        rows = [b for b in tested_builds if b.line == _major_minor(tf) and b.os == row_os]
        supported = sorted({p for b in rows for p in getattr(b, "python_versions", ())}, key=_line_key)
    if supported and python and python not in supported:
        span = f"{supported[0]}-{supported[-1]}"
        if python_is_the_problem:
            evidence.append(f"Python {python} (from the log) has no TensorFlow {_major_minor(tf)} wheels (it supports "
                            f"Python {span}): Python {supported[-1]}")
            python = supported[-1]
        else:
            evidence.append(f"Python {python}: from the log (TensorFlow {_major_minor(tf)}'s tested builds list {span})")
    elif python:
        evidence.append(f"Python {python}: from the log")
    elif supported and python_is_the_problem:
        python = supported[-1]
        evidence.append(f"TensorFlow {_major_minor(tf)} has wheels for Python {supported[0]}-{supported[-1]}: "
                        f"Python {python}")

    # -- driver, GPU, compute capability --------------------------------------------------------------
    driver_values = [m.found["driver"] for m in explanation.matches if "driver" in m.found] or list(seen.get("driver", ()))
    driver_log = _single(_dedupe_versions(driver_values))
    driver = driver_log
    if overrides.driver:
        if driver_log and driver_log != overrides.driver:
            evidence.append(f"driver {overrides.driver} from --driver (the log shows {driver_log})")
        driver = overrides.driver
    elif driver_log:
        evidence.append(f"driver {driver_log}: from the log")

    gpus = [g for g in seen.get("gpu", ()) if not g.endswith("...")]
    if not gpus:  # a GPU named by the message itself (PyTorch's capability warning)
        gpus = list(dict.fromkeys(m.found["gpu"] for m in explanation.matches if m.found.get("gpu")))
    gpu_log = _single(gpus)
    gpu = gpu_log
    if overrides.gpu:
        if gpu_log and gpu_log != overrides.gpu:
            evidence.append(f"GPU {overrides.gpu} from --gpu (the log shows {gpu_log})")
        gpu = overrides.gpu
    elif gpu_log:
        evidence.append(f"GPU {gpu_log}: from the log")
    if cc:
        evidence.append(f"compute capability {cc}: from the log")

    pins: list[str] = []
    for m in problems:
        for pin in m.pins:
            _add(pins, pin)

    # -- the framework's own versions, and the GPU architecture a PyTorch build lacks ---------------------
    if not problems and not overrides.framework:  # nothing to fix: the request names no framework either
        framework = None
    framework_version = variant = jaxlib = driver_cuda = None
    if framework == "tensorflow":
        framework_version = tf_log
    elif framework == "pytorch":
        framework_version, variant = _framework_version(seen, explanation, "torch")
    elif framework == "jax":
        framework_version, _ = _framework_version(seen, explanation, "jax")
        jaxlib, variant = _framework_version(seen, explanation, "jaxlib")
    if framework in ("pytorch", "jax"):
        name = FRAMEWORK_NAMES[framework]
        flag_version = overrides.torch if framework == "pytorch" else overrides.jax
        if flag_version:
            if framework_version and framework_version != flag_version:
                evidence.append(f"{name} {flag_version} from --{'torch' if framework == 'pytorch' else 'jax'} "
                                f"(the log shows {framework_version})")
            else:
                evidence.append(f"{name} {flag_version} from --{'torch' if framework == 'pytorch' else 'jax'}")
            framework_version = flag_version
        elif framework_version:
            evidence.append(f"{name} {framework_version}{'+' + variant if variant and not jaxlib else ''}: from the log")
        if jaxlib:
            evidence.append(f"jaxlib {jaxlib}{'+' + variant if variant else ''}: from the log")
        if not framework_version and not jaxlib:
            evidence.append(f"{name}: from the messages and paths in the log (no version shown)")
    if framework == "jax" and variant is None:  # the CUDA plugin a message names ("JAX plugin jax_cuda12_plugin")
        plugins = {m.group(1) for p in problems for m in _JAX_PLUGIN.finditer(p.evidence)}
        if len(plugins) == 1:
            variant = f"cuda{plugins.pop()}"
            evidence.append(f"the CUDA {variant[4:]} plugin (jax-{variant}-plugin): from the log")
    sm = next((m.found["sm"] for m in explanation.matches if m.found.get("sm")), None)
    supported_sms = next((tuple(m.found["sm_supported"].split()) for m in explanation.matches
                          if m.found.get("sm_supported")), ())
    if sm and supported_sms:
        evidence.append(f"the GPU is {sm}; the installed build has code for {' '.join(supported_sms)} only")
    if framework in ("pytorch", "jax"):
        driver_cuda = _single(tuple(dict.fromkeys(m.found["driver_cuda"] for m in problems if m.found.get("driver_cuda"))))
        if driver_cuda:
            evidence.append(f"the driver supports CUDA up to {driver_cuda}: from the log")

    tf_candidates = tuple(candidates) if candidates else ((_major_minor(tf),) if tf else ())
    return FixRequest(
        tf=tf,
        tf_candidates=tf_candidates,
        os=os_name,
        python=python,
        cuda=cuda,
        cudnn=cudnn,
        driver=driver,
        gpu=gpu,
        compute_capability=cc,
        pins=tuple(pins),
        evidence=tuple(evidence),
        tensorrt=tensorrt,
        framework=framework,
        framework_version=framework_version,
        variant=variant,
        jaxlib=jaxlib,
        sm=sm,
        supported_sms=supported_sms,
        driver_cuda=driver_cuda,
    )


_JAX_PLUGIN = re.compile(r"\bjax[_-]cuda(\d+)[_-](?:plugin|pjrt)\b")


_JAX_PLUGIN_VARIANT = re.compile(r"cuda\d{2}")  # a plugin's CUDA major; jaxlib's own are cuda111, cuda12.cudnn89


def _framework_version(seen: dict[str, tuple[str, ...]], explanation: Explanation, key: str) -> tuple[str | None, str | None]:
    """The one version of a framework package the log shows (2.5.1+cu124 and 2.5.1 are one), split into
    the public version and the local label of its build variant: ("2.5.1", "cu124"); (None, None) when
    the log shows none or several."""
    values = list(seen.get(key, ()))
    values += [m.found[key] for m in explanation.matches if m.found.get(key)]
    parsed = [(v, _version(v)) for v in dict.fromkeys(values)]
    parsed = [(v, p) for v, p in parsed if p is not None]
    publics = _dedupe_versions(p.public for _, p in parsed)
    if len(publics) != 1:
        return None, None
    public = publics[0]
    local = next((p.local for _, p in parsed if p.local and p.public == public), None)
    return public, local


def requested_stack(
    explanation: Explanation,
    kb: "KnowledgeBase | None" = None,
    overrides: FixOverrides | None = None,
) -> dict:
    """The "requested" object of the explain JSON: `fix_request(...)` as a dict of the fields that
    have a value (tf, tf_candidates, os, python, cuda, cudnn, tensorrt, compute_capability, driver,
    gpu, pins, evidence)."""
    return fix_request(explanation, kb, overrides).to_json_dict()
