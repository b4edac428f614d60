"""`fix_request`: the typed request for a fix, read from the log, TensorFlow's tested builds and
compiled architectures (passed in, as the knowledge base holds them) and the command-line flags.
Also: searching multi-megabyte logs (fast, and finding exactly what a plain regex search finds), and
the wanted/found tables of errors.toml.

Expected versions come from TensorFlow's tested-build tables (tensorflow/docs site/en/install/source.md,
source_windows.md) and compiled-architecture facts, not from running stackresolve.
"""

from __future__ import annotations

import copy
import json
import os
import subprocess
import sys
from dataclasses import FrozenInstanceError, dataclass

import pytest

if sys.version_info >= (3, 11):
    import tomllib
else:  # pragma: no cover
    import tomli as tomllib

from stackresolve.explain import (
    SCHEMA,
    FixOverrides,
    FixRequest,
    _Text,
    explain_text,
    fix_request,
    pattern_needles,
    render_text,
    requested_stack,
)
from stackresolve.knowledge.errors import parse_error_knowledge, parse_errors
import locations

ROOT = locations.REPO
ERRORS_TOML = ROOT / "constraints" / "errors.toml"
FIXTURES = ROOT / "tests" / "fixtures" / "errors"

LOADER_WIN = "W tensorflow/stream_executor/platform/default/dso_loader.cc:64] Could not load dynamic library '{0}'; dlerror: {0} not found"


@pytest.fixture(scope="module")
def doc() -> dict:
    return tomllib.loads(ERRORS_TOML.read_text(encoding="utf-8"))


@pytest.fixture(scope="module")
def errors(doc):
    return parse_error_knowledge(doc)



def request(text: str, errors, kb, overrides: FixOverrides | None = None) -> FixRequest:
    return fix_request(explain_text(text, errors), kb, overrides)


# ----------------------------------------------------------------------------------------------
# the log's versions become the request
# ----------------------------------------------------------------------------------------------


def test_tf_2_9_1_on_windows_keeps_tf_and_gets_its_tested_cuda_and_cudnn(errors, kb):
    text = LOADER_WIN.format("cudart64_110.dll") + "\nTensorFlow version: 2.9.1\n"
    fix = request(text, errors, kb)
    # TF 2.9 on Windows: CUDA 11.2, cuDNN 8.1 (source_windows.md, tested build configurations)
    assert (fix.tf, fix.os, fix.cuda, fix.cudnn) == ("2.9.1", "windows", "11.2", "8.1")
    assert fix.tf_candidates == ("2.9",)
    assert any("2.9.1" in line and "keeps" in line for line in fix.evidence)


def test_library_names_without_a_tf_version_name_the_candidate_lines(errors, kb):
    text = LOADER_WIN.format("cudart64_110.dll") + "\n" + LOADER_WIN.format("cudnn64_8.dll")
    fix = request(text, errors, kb)
    # Windows, cudart 11.x and cuDNN 8: 2.4 (CUDA 11.0, cuDNN 8.0) and 2.5-2.10 (CUDA 11.2, cuDNN 8.1)
    assert fix.tf is None
    assert fix.tf_candidates == ("2.4", "2.5", "2.6", "2.7", "2.8", "2.9", "2.10")
    assert (fix.os, fix.cuda, fix.cudnn) == ("windows", "11.x", "8")
    said = " ".join(fix.evidence)
    assert "2.4-2.10" in said and "2.4: CUDA 11.0 + cuDNN 8.0" in said and "2.5-2.10: CUDA 11.2 + cuDNN 8.1" in said
    assert "cudart64_110.dll" in said and "cudnn64_8.dll" in said


def test_paths_and_the_nvidia_smi_banner(errors, kb):
    text = "\n".join([
        "| NVIDIA-SMI 470.82.01    Driver Version: 470.82.01    CUDA Version: 11.4     |",
        '  File "/home/u/venv/lib/python3.6/site-packages/tensorflow/python/client/session.py", line 1365',
        "2021-01-01 W dso_loader.cc:64] Could not load dynamic library 'libcudart.so.11.0'; dlerror: libcudart.so.11.0: cannot open shared object file: No such file or directory",
        "/usr/local/cuda-11.2/lib64",
        "pciBusID: 0000:01:00.0 name: GeForce RTX 2080 Ti computeCapability: 7.5",
    ])
    fix = request(text, errors, kb)
    assert fix.os == "linux"
    assert fix.python == "3.6"
    assert fix.driver == "470.82.01"
    assert fix.gpu == "GeForce RTX 2080 Ti"
    assert fix.compute_capability == "7.5"
    assert fix.cuda == "11.x"
    # Python 3.6 and CUDA 11: on Linux, the tested builds with CUDA 11 are 2.4-2.14
    assert fix.tf_candidates[0] == "2.4" and fix.tf_candidates[-1] == "2.14"


def test_flags_fill_what_the_log_leaves_out(errors, kb):
    text = LOADER_WIN.format("cudart64_110.dll")
    fix = request(text, errors, kb, FixOverrides(tf="2.10", gpu="RTX 3060", driver="512.15"))
    assert (fix.tf, fix.gpu, fix.driver) == ("2.10", "RTX 3060", "512.15")
    assert (fix.cuda, fix.cudnn) == ("11.2", "8.1")
    assert "TensorFlow 2.10 from --tf" in fix.evidence


def test_the_flag_wins_and_the_evidence_says_so(errors, kb):
    text = LOADER_WIN.format("cudart64_110.dll") + "\nTensorFlow version: 2.9.1\n" + \
        "| NVIDIA-SMI 456.71       Driver Version: 456.71       CUDA Version: 11.1     |"
    fix = request(text, errors, kb, FixOverrides(tf="2.10.1", os="linux", driver="470.82.01"))
    assert (fix.tf, fix.os, fix.driver) == ("2.10.1", "linux", "470.82.01")
    said = "\n".join(fix.evidence)
    assert "TensorFlow 2.10.1 from --tf (the log shows 2.9.1)" in said
    assert "OS linux from --os (the log looks like windows)" in said
    assert "driver 470.82.01 from --driver (the log shows 456.71)" in said


def test_no_kernel_image_names_the_first_line_with_machine_code(errors, kb):
    text = "\n".join([
        "TensorFlow version: 2.3.0",
        "pciBusID: 0000:01:00.0 name: GeForce GTX 750 Ti computeCapability: 5.0",
        "F .\\tensorflow/core/kernels/conv_2d_gpu.h:710] Non-OK-status: GpuLaunchKernel(...) status: Internal: no kernel image is available for execution on the device",
    ])
    fix = request(text, errors, kb)
    # TF 2.3 has machine code for 3.5, 3.7, 5.2, 6.0, 6.1, 7.0 (5.2 code does not run on 5.0); 2.4 adds 5.0
    assert fix.tf == "2.4"
    assert fix.compute_capability == "5.0"
    assert (fix.cuda, fix.cudnn) == ("11.0", "8.0")
    assert any("the first from 2.3 on is 2.4" in line for line in fix.evidence)


def test_a_gpu_below_the_minimum_gets_the_newest_line_with_code_for_it(errors, kb):
    text = ("Ignoring visible gpu device (device: 0, name: Quadro K2000M, pci bus id: 0000:01:00.0, compute capability: 3.0) "
            "with Cuda compute capability 3.0. The minimum required Cuda capability is 3.5.\n"
            "Could not load dynamic library 'libcudart.so.9.0'; dlerror: libcudart.so.9.0: cannot open shared object file")
    fix = request(text, errors, kb)
    # Linux wheels with sm_30 code: 1.0-1.4; the newest is 1.4
    assert fix.tf == "1.4"


def test_package_problems_keep_tf_and_pin_without_a_cuda_request(errors, kb):
    text = "pip install tensorflow==2.14.0 numpy==2.3.4\nA module that was compiled using NumPy 1.x cannot be run in\nNumPy 2.3.4 as it may crash."
    fix = request(text, errors, kb)
    assert fix.tf == "2.14.0"
    assert fix.pins == ("numpy<2",)
    assert fix.cuda is None and fix.cudnn is None


def test_no_matching_distribution_asks_for_a_python_with_wheels(errors, kb):
    text = "ERROR: Could not find a version that satisfies the requirement tensorflow==2.4.1 (from versions: none)\nPython 3.10.4"
    fix = request(text, errors, kb)
    # TensorFlow 2.4 is built for Python 3.6-3.8
    assert fix.tf == "2.4.1" and fix.python == "3.8"


def test_fix_request_is_frozen_and_typed():
    fix = FixRequest(tf="2.9.1")
    with pytest.raises(FrozenInstanceError):
        fix.tf = "2.10"  # type: ignore[misc]
    assert FixRequest().to_json_dict() == {}


def test_the_tested_builds_come_from_the_knowledge_base_it_is_given(errors):
    @dataclass(frozen=True)
    class Row:
        line: str
        os: str
        cuda: str
        cudnn: str

    class TwoRows:  # what fix_request asks of the knowledge base: its tested-build table
        tested_builds = [Row("2.9", "windows", "11.2", "8.1"), Row("2.4", "windows", "11.0", "8.0")]

    text = LOADER_WIN.format("cudart64_110.dll")
    fix = fix_request(explain_text(text, errors), TwoRows())
    assert fix.tf_candidates == ("2.4", "2.9")


def test_requested_stack_is_the_fix_request_as_a_dict(errors, kb):
    explanation = explain_text(LOADER_WIN.format("cudart64_110.dll") + "\nTensorFlow version: 2.9.1", errors)
    requested = requested_stack(explanation, kb)
    assert requested == fix_request(explanation, kb).to_json_dict()
    assert requested["tf"] == "2.9.1" and requested["cuda"] == "11.2" and requested["evidence"]
    json.dumps(requested)
    # without the knowledge base it still reads the log alone, as before
    assert requested_stack(explanation) == {"tf": "2.9.1", "os": "windows", "cuda": "11.x", "tf_candidates": ["2.9"],
                                            "framework": "tensorflow", "framework_version": "2.9.1",
                                            "evidence": ["OS windows: from the paths and library file names in the log",
                                                         "TensorFlow 2.9.1: from the log; the fix keeps it"]}


def test_render_text_shows_the_fix_request(errors, kb):
    explanation = explain_text(LOADER_WIN.format("cudart64_110.dll") + "\nTensorFlow version: 2.9.1", errors)
    out = render_text(explanation, fix_request(explanation, kb))
    assert "The fix asks for: TensorFlow 2.9.1; OS windows; CUDA 11.2; cuDNN 8.1" in out


# ----------------------------------------------------------------------------------------------
# wanted / found for every kind of problem
# ----------------------------------------------------------------------------------------------


@pytest.mark.parametrize(
    "text, wanted, found",
    [
        ("TypeError: Descriptors cannot not be created directly.", {"protobuf": "<=3.20.x"}, {"protobuf": ">=4.21"}),
        ("AttributeError: module 'tensorflow' has no attribute 'Session'\ntensorflow==2.3.0",
         {"tf": "1.x"}, {"tf": "2.3.0"}),
        ("NotImplementedError: Cannot convert a symbolic Tensor (lstm/strided_slice:0) to a numpy array.",
         {"numpy": "<1.20"}, {"numpy": ">=1.20"}),
        ("AttributeError: 'str' object has no attribute 'decode'", {"h5py": "<3"}, {"h5py": ">=3"}),
        ("AttributeError: _ARRAY_API not found", {"numpy": "<2"}, {"numpy": ">=2"}),
        ("Could not load dynamic library 'cudart64_101.dll'; dlerror: cudart64_101.dll not found\n"
         "RuntimeError: cudaGetDevice() failed. Status: CUDA driver version is insufficient for CUDA runtime version\n"
         "| NVIDIA-SMI 418.96       Driver Version: 418.96       CUDA Version: 10.1     |",
         {"driver_cuda": "10.1"}, {"driver": "418.96", "driver_cuda": "10.1"}),
        ("TypeError: Could not deserialize class 'Functional' because its parent module keras.src.engine.functional cannot be imported.",
         {"keras": "2.x"}, {"keras": "3.x"}),
    ],
)
def test_every_kind_of_problem_says_what_is_wanted_and_found(errors, text, wanted, found):
    problems = explain_text(text, errors).problems
    top = next(m for m in problems if m.category not in ("missing-cuda-runtime",)) if len(problems) > 1 else problems[0]
    for key, value in wanted.items():
        assert top.wanted.get(key) == value, top.wanted
    for key, value in found.items():
        assert top.found.get(key) == value, top.found


def test_driver_wants_the_cuda_of_the_toolkit_when_no_library_names_it(errors):
    text = ("cudatoolkit               10.0.130                      0\n"
            "cudaGetDevice() failed. Status: CUDA driver version is insufficient for CUDA runtime version")
    assert explain_text(text, errors).problems[0].wanted == {"driver_cuda": "10.0"}


def test_out_of_memory_names_memory_growth_a_limit_and_the_batch_size(errors):
    fix = explain_text("ResourceExhaustedError: OOM when allocating tensor with shape[64,372,32,32]", errors).problems[0].fix
    for words in ("set_memory_growth", "allow_growth", "memory_limit", "batch size"):
        assert words in fix


def test_keras3_legacy_h5_metrics(errors):
    text = ("TypeError: Could not locate function 'mse'. Make sure custom classes are decorated with "
            "`@keras.saving.register_keras_serializable()`.")
    top = explain_text(text, errors).problems[0]
    assert top.category == "keras3-legacy-model"
    assert "compile=False" in top.fix and "tf_keras" in top.fix and "TF_USE_LEGACY_KERAS=1" in top.fix
    assert "compiled loss or metrics" in top.cause


def test_wanted_found_tables_are_validated(doc):
    broken = copy.deepcopy(doc)
    broken["error"][0]["wanted"] = {"gpus": "1"}
    with pytest.raises(ValueError, match="unknown component"):
        parse_errors(broken)
    broken = copy.deepcopy(doc)
    broken["error"][0]["found"] = {"tf": "{not_a_placeholder}"}
    with pytest.raises(ValueError, match="not_a_placeholder"):
        parse_errors(broken)
    broken = copy.deepcopy(doc)
    broken["error"][0]["wanted"] = {"tf": ["1.x", 2]}
    with pytest.raises(ValueError, match="non-empty string"):
        parse_errors(broken)


# ----------------------------------------------------------------------------------------------
# long logs
# ----------------------------------------------------------------------------------------------


def _fixture_logs() -> str:
    parts = []
    for path in sorted(FIXTURES.rglob("*.log")):
        parts.append(path.read_text(encoding="utf-8").partition("\n")[2])
    return "\n".join(parts)


def _padded(text: str, size: int) -> str:
    noise = ("2023-05-01 12:17:26.167599: I tensorflow/core/common_runtime/gpu/gpu_device.cc:1720] "
             "step 12 loss 0.1234 accuracy 0.98 val_loss 0.2 - python3 cuda Tensor\n")
    half = (size - len(text)) // 2 // len(noise)
    return noise * half + text + noise * half


def test_the_fast_search_finds_what_a_plain_search_finds(errors):
    scan = _Text(_padded(_fixture_logs(), 600_000))
    regexes = [e.regex for e in errors.errors] + [h.regex for h in errors.hints]
    regexes += [c.when for e in errors.errors for c in e.causes if c.when is not None]
    for regex in regexes:
        fast = [(m.start(), m.end()) for m in scan.finditer(regex)]
        plain = [(m.start(), m.end()) for m in regex.finditer(scan.text)]
        assert fast == plain, regex.pattern


def test_a_padded_log_explains_like_the_log_itself(errors):
    text = _fixture_logs()
    small = explain_text(text, errors)
    big = explain_text(_padded(text, 2_000_000), errors)
    assert [(m.code, m.count, m.wanted, m.found) for m in big.matches] == \
        [(m.code, m.count, m.wanted, m.found) for m in small.matches]
    assert big.versions_seen == small.versions_seen


# The time an 8 MiB log takes is a budget of scripts/bench.py (timed tests fail under load).


def test_needles_are_literals_every_match_contains():
    assert pattern_needles(r"Could not load dynamic library '(?P<lib>\w+)'")[0] == ("Could not load dynamic library '",)
    every, fewer, ignore_case = pattern_needles(r"(?i)tensorflow[-_]gpu|cudnn64")
    assert ignore_case and set(every) == {"tensorflow-gpu", "tensorflow_gpu", "cudnn64"}
    assert pattern_needles(r"\d+\.\d+") is None  # nothing literal: searched whole


def test_importing_explain_compiles_no_pattern():
    code = (
        "import stackresolve.explain as e, stackresolve.knowledge.errors as k\n"
        "print(k.cached_regex.cache_info().currsize, e.pattern_needles.cache_info().currsize)"
    )  # one regex cache serves both modules
    out = subprocess.run([sys.executable, "-c", code], capture_output=True, text=True, check=True).stdout.split()
    assert out == ["0", "0"]


def test_json_contract_is_unchanged(errors):
    data = explain_text(LOADER_WIN.format("cudart64_110.dll"), errors).to_json_dict()
    assert data["schema"] == SCHEMA == "stackresolve/explain@1"
    assert set(data) == {"schema", "matches", "versions_seen"}
    assert set(data["matches"][0]) >= {"code", "category", "wanted", "found", "meaning", "cause", "fix", "source"}


def test_the_nvidia_smi_banner_gives_driver_gpu_and_the_driver_cuda_not_a_toolkit(errors, kb):
    text = "\n".join([
        "| NVIDIA-SMI 410.72       Driver Version: 410.72       CUDA Version: 10.0     |",
        "|   0  Tesla K80           Off  | 00000000:00:04.0 Off |                    0 |",
        "|   1  GeForce GTX 108... WDDM  | 00000000:01:00.0 Off |                  N/A |",
    ])
    seen = explain_text(text, errors).versions_seen
    assert seen["driver"] == ("410.72",) and seen["driver_cuda"] == ("10.0",)
    assert "cuda" not in seen  # "CUDA Version" is the newest CUDA the driver supports, not an installed toolkit
    assert seen["gpu"] == ("Tesla K80", "GeForce GTX 108...")
    fix = request(text + "\nCUDA driver version is insufficient for CUDA runtime version", errors, kb)
    assert (fix.driver, fix.gpu) == ("410.72", "Tesla K80")  # a name nvidia-smi cut short is not used


def test_the_installed_cuda_is_evidence_not_the_request(errors, kb):
    text = "CUDA version: 9.1\nImportError: libcublas.so.9.0: cannot open shared object file: No such file or directory"
    fix = request(text, errors, kb)
    assert fix.cuda == "9.0"
    assert "the log shows CUDA 9.1 installed; the fix wants CUDA 9.0" in fix.evidence


def test_a_ptx_jit_warning_keeps_the_tf_and_names_the_line_with_machine_code(errors, kb):
    text = ("TensorFlow version: 2.14.0\nW gpu_device.cc:2052] TensorFlow was not built with CUDA kernel binaries "
            "compatible with compute capability 9.0. CUDA kernels will be jit-compiled from PTX, which could take 30 minutes or longer.")
    fix = request(text, errors, kb)
    assert fix.tf == "2.14.0" and fix.compute_capability == "9.0"
    # sm_90 machine code arrives in the 2.16 wheels
    assert any("TensorFlow 2.16 would start without the JIT" in line for line in fix.evidence)


def test_the_evidence_is_the_same_whatever_the_hash_seed():
    """Two tested builds of one CUDA line (TensorFlow 2.12-2.13: CUDA 11.8 + cuDNN 8.6; 2.14: CUDA 11.8 + cuDNN 8.7,
    tensorflow/docs site/en/install/source.md, Linux GPU) come out in version order in every process, not in the
    order a set of strings happens to iterate in (seeds 2, 3 and 4 swapped them)."""
    log = locations.FIXTURES / "errors" / "nvidia-tf-libcusolver-nvjitlink.log"
    outputs = set()
    for seed in ("0", "2"):
        done = subprocess.run([sys.executable, "-m", "stackresolve", "explain", "--no-detect", "--file", str(log)],
                              capture_output=True, text=True, timeout=120,
                              env={**os.environ, "PYTHONHASHSEED": seed, "STACKRESOLVE_NO_CACHE": "1"})
        outputs.add(done.stdout)
    assert len(outputs) == 1
    assert "2.12-2.13: CUDA 11.8 + cuDNN 8.6; 2.14: CUDA 11.8 + cuDNN 8.7" in outputs.pop()
