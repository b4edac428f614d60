"""`stackresolve explain`: known error messages (constraints/errors.toml) and their explanation.

The fixtures under tests/fixtures/errors/ are real logs from public reports (first line: the URL;
README.md lists them). Every expected version below was read from the log by hand.
"""

from __future__ import annotations

import copy
import json
import re
import sys

import pytest

if sys.version_info >= (3, 11):
    import tomllib
else:  # pragma: no cover
    import tomli as tomllib

from stackresolve.explain import (
    SCHEMA,
    Explanation,
    explain_text,
    extract_versions,
    intersect_candidates,
    library_candidates,
    normalize_version,
    render_text,
    requested_stack,
)
from stackresolve.knowledge.errors import (
    CATEGORIES,
    ErrorKnowledge,
    KnownError,
    parse_error_knowledge,
    parse_errors,
    parse_libraries,
    parse_version_hints,
)
import locations

ROOT = locations.REPO
ERRORS_TOML = ROOT / "constraints" / "errors.toml"
FIXTURES = ROOT / "tests" / "fixtures" / "errors"
SOURCE_LINE = re.compile(r"^# source: (https://github\.com/\S+)$")


@pytest.fixture(scope="module")
def doc() -> dict:
    return tomllib.loads(ERRORS_TOML.read_text(encoding="utf-8"))


@pytest.fixture(scope="module")
def knowledge(doc) -> ErrorKnowledge:
    return parse_error_knowledge(doc)


def fixture_text(name: str) -> str:
    first, _, rest = (FIXTURES / name).read_text(encoding="utf-8").partition("\n")
    assert SOURCE_LINE.match(first), f"{name}: first line must be '# source: URL'"
    return rest


def codes(explanation: Explanation) -> list[str]:
    return [m.code for m in explanation.matches]


# ----------------------------------------------------------------------------------------------
# the knowledge file
# ----------------------------------------------------------------------------------------------


def test_parse_errors_gives_known_errors(doc):
    errors = parse_errors(doc)
    assert isinstance(errors, tuple) and all(isinstance(e, KnownError) for e in errors)
    assert len(errors) >= 35
    assert len({e.code for e in errors}) == len(errors)
    assert {e.category for e in errors} <= set(CATEGORIES)
    for e in errors:
        assert e.source.strip(), e.code
        assert e.causes, e.code


def test_every_example_matches_its_own_pattern(knowledge):
    for e in knowledge.errors:
        assert e.regex.search(e.example), e.code
    for h in knowledge.hints:
        assert h.regex.search(h.example), h.pattern


def test_every_example_is_recognised_as_its_own_code(knowledge):
    for e in knowledge.errors:
        found = codes(explain_text(e.example, knowledge))
        assert e.code in found, (e.code, found)


def test_harmless_records_are_info(knowledge):
    for e in knowledge.errors:
        if e.category == "harmless":
            assert e.severity == "info", e.code


def test_library_table_is_unique_and_versioned(knowledge):
    names = [lib.name.lower() for lib in knowledge.libraries]
    assert len(names) == len(set(names))
    assert knowledge.library("CUDART64_101.DLL").versions == ("10.1",)
    assert knowledge.library("libcudart.so.11.0").versions == ("11.x",)
    assert knowledge.library("cublas64_11.dll").versions == ("11.x",)
    assert knowledge.library("cudnn64_7.dll").component == "cudnn"
    assert knowledge.library("libcuda.so.1").component == "driver"


@pytest.mark.parametrize(
    "mutate, message",
    [
        (lambda d: d["error"].append(copy.deepcopy(d["error"][0])), "duplicate code"),
        (lambda d: d["error"][0].update(category="gpu-on-fire"), "category"),
        (lambda d: d["error"][0].update(severity="fatal"), "severity"),
        (lambda d: d["error"][0].update(pattern="Could not (load"), "does not compile"),
        (lambda d: d["error"][0].update(example="nothing to see here"), "does not match"),
        (lambda d: d["error"][0].update(source=""), "`source`"),
        (lambda d: d["error"][0].update(code="Not Kebab"), "kebab-case"),
        (lambda d: d["error"][0].update(fix="Install CUDA {wanted_gpus}"), "wanted_gpus"),
        (lambda d: d["error"][0].update(causes=[]), "causes"),
        (lambda d: d["error"][0].update(spelling="oops"), "unknown keys"),
        (lambda d: d["error"][0].update(pattern="(?P<wanted_gpus>x)", example="x"), "unknown component"),
        (lambda d: d["error"][0].update(category="harmless"), "requires severity `info`"),
    ],
)
def test_parse_errors_rejects_bad_records(doc, mutate, message):
    broken = copy.deepcopy(doc)
    mutate(broken)
    with pytest.raises(ValueError) as info:
        parse_errors(broken)
    assert message in str(info.value)
    assert "error[" in str(info.value)  # names the record


def test_parse_libraries_and_hints_reject_bad_records(doc):
    broken = copy.deepcopy(doc)
    broken["library"].append({"names": ["cudart64_101.dll"], "component": "cuda", "versions": ["10.1"], "source": "x"})
    with pytest.raises(ValueError, match="already in library"):
        parse_libraries(broken)
    broken = copy.deepcopy(doc)
    broken["library"][0]["versions"] = ["ten"]
    with pytest.raises(ValueError, match="versions"):
        parse_libraries(broken)
    broken = copy.deepcopy(doc)
    broken["version_hint"][0]["example"] = "no version here"
    with pytest.raises(ValueError, match="does not match"):
        parse_version_hints(broken)


# ----------------------------------------------------------------------------------------------
# messages the issue names, one by one (lines in the formats TensorFlow prints them)
# ----------------------------------------------------------------------------------------------

LOADER = "W tensorflow/stream_executor/platform/default/dso_loader.cc:55] Could not load dynamic library '{0}'; dlerror: {0}: cannot open shared object file: No such file or directory"
LOADER_WIN = "W tensorflow/stream_executor/platform/default/dso_loader.cc:55] Could not load dynamic library '{0}'; dlerror: {0} not found"


@pytest.mark.parametrize(
    "line, category, wanted",
    [
        (LOADER.format("libcudart.so.10.0"), "missing-cuda-runtime", {"cuda": "10.0"}),
        (LOADER.format("libcudart.so.11.0"), "missing-cuda-runtime", {"cuda": "11.x"}),
        (LOADER.format("libcudnn.so.7"), "missing-cudnn", {"cudnn": "7"}),
        (LOADER.format("libcudnn.so.8"), "missing-cudnn", {"cudnn": "8"}),
        (LOADER.format("libcublas.so.10"), "missing-cuda-lib", {"cuda": "10.1|10.2"}),
        (LOADER_WIN.format("cudart64_100.dll"), "missing-cuda-runtime", {"cuda": "10.0"}),
        (LOADER_WIN.format("cudart64_101.dll"), "missing-cuda-runtime", {"cuda": "10.1"}),
        (LOADER_WIN.format("cudart64_110.dll"), "missing-cuda-runtime", {"cuda": "11.x"}),
        (LOADER_WIN.format("cublas64_11.dll"), "missing-cuda-lib", {"cuda": "11.x"}),
        (LOADER_WIN.format("cudnn64_7.dll"), "missing-cudnn", {"cudnn": "7"}),
        (LOADER_WIN.format("cudnn64_8.dll"), "missing-cudnn", {"cudnn": "8"}),
    ],
)
def test_library_name_tells_the_version(knowledge, line, category, wanted):
    top = explain_text(line, knowledge).matches[0]
    assert top.category == category
    assert top.wanted == wanted


def test_library_names_narrow_each_other(knowledge):
    # cufft64_10.dll alone is 10.1, 10.2 or 11.x; next to cudart64_101.dll it can only be 10.1
    text = LOADER_WIN.format("cufft64_10.dll") + "\n" + LOADER_WIN.format("cudart64_101.dll")
    by_code = {m.code: m for m in explain_text(text, knowledge).matches}
    assert by_code["dso-missing-cuda-lib"].wanted == {"cuda": "10.1"}
    assert by_code["dso-missing-cudart"].wanted == {"cuda": "10.1"}
    alone = explain_text(LOADER_WIN.format("cufft64_10.dll"), knowledge).matches[0]
    assert alone.wanted == {"cuda": "10.1|10.2|11.x"}


@pytest.mark.parametrize(
    "text, code, category, wanted, found",
    [
        (
            "Loaded runtime CuDNN library: 8.0.5 but source was compiled with: 8.1.0.  CuDNN library needs to have matching major version and equal or higher minor version.",
            "cudnn-version-mismatch", "cudnn-version-mismatch", {"cudnn": "8.1.0"}, {"cudnn": "8.0.5"},
        ),
        ("CUDA driver version is insufficient for CUDA runtime version", "driver-insufficient-for-runtime", "driver-too-old", {}, {}),
        (
            "tensorflow.python.framework.errors_impl.InternalError: cudaGetDevice() failed. Status: CUDA driver version is insufficient for CUDA runtime version",
            "cudagetdevice-driver-insufficient", "driver-too-old", {}, {},
        ),
        ("RuntimeError: CUDA error: no kernel image is available for execution on the device", "torch-no-kernel-image", "no-kernel-for-gpu", {}, {}),
        ("CUDA_ERROR_NO_BINARY_FOR_GPU", "cuda-error-no-binary-for-gpu", "no-kernel-for-gpu", {}, {}),
        (
            "TensorFlow was not built with CUDA kernel binaries compatible with compute capability 8.6. CUDA kernels will be jit-compiled from PTX, which could take 30 minutes or longer.",
            "ptx-jit-compile", "ptx-jit-slow", {}, {"cc": "8.6"},
        ),
        (
            "Unknown: Failed to get convolution algorithm. This is probably because cuDNN failed to initialize, so try looking to see if a warning log message was printed above.",
            "failed-to-get-convolution-algorithm", "cudnn-init-failure", {}, {},
        ),
        ("E cuda_dnn.cc:329] Could not create cudnn handle: CUDNN_STATUS_INTERNAL_ERROR", "cudnn-handle-internal-error", "cudnn-init-failure", {}, {}),
        ("E cuda_dnn.cc:385] could not create cudnn handle: CUDNN_STATUS_NOT_INITIALIZED", "cudnn-handle-not-initialized", "cudnn-init-failure", {}, {}),
        ("failed to query event: CUDA_ERROR_LAUNCH_FAILED: unspecified launch failure tensorflow/stream_executor/dnn.cc:613] CUDNN_STATUS_INTERNAL_ERROR", "cudnn-handle-internal-error", "cudnn-init-failure", {}, {}),
        ("RuntimeError: CUDNN_STATUS_NOT_INITIALIZED", "cudnn-handle-not-initialized", "cudnn-init-failure", {}, {}),
        ("E dnn.cc:613] CUDNN_STATUS_EXECUTION_FAILED", "cudnn-status-execution-failed", "cudnn-init-failure", {}, {}),
        ("E cuda_blas.cc:428] failed to run cuBLAS routine: CUBLAS_STATUS_EXECUTION_FAILED", "cublas-execution-failed", "cublas-failure", {}, {}),
        ("ImportError: DLL load failed: The specified module could not be found.", "dll-load-failed", "dll-load-failed-windows", {}, {}),
        ("ImportError: DLL load failed while importing _pywrap_tensorflow_internal: The specified module could not be found.", "dll-load-failed", "dll-load-failed-windows", {}, {}),
        ("TypeError: Descriptors cannot not be created directly.", "protobuf-descriptors-cannot-be-created", "protobuf-incompatible", {"protobuf": "<=3.20.x"}, {"protobuf": ">=4.21"}),
        ("TypeError: Descriptors cannot be created directly.", "protobuf-descriptors-cannot-be-created", "protobuf-incompatible", {"protobuf": "<=3.20.x"}, {"protobuf": ">=4.21"}),
        ("AttributeError: module 'tensorflow' has no attribute 'Session'", "tf1-api-attribute", "tf1-api-on-tf2", {"tf": "1.x"}, {"tf": "2.x"}),
        ("I tensorflow/tsl/cuda/cudart_stub.cc:28] Could not find cuda drivers on your machine, GPU will not be used.", "no-cuda-drivers-found", "no-gpu-detected", {}, {}),
        ("W gpu_device.cc:1850] Cannot dlopen some GPU libraries. Please make sure the missing libraries mentioned above are installed properly", "cannot-dlopen-gpu-libraries", "missing-cuda-lib", {}, {}),
        (
            "Ignoring visible gpu device (device: 0, name: GRID K520, pci bus id: 0000:00:03.0, compute capability: 3.0) with Cuda compute capability 3.0. The minimum required Cuda capability is 3.5.",
            "gpu-below-minimum-capability", "no-kernel-for-gpu", {"cc": "3.5"}, {"cc": "3.0"},
        ),
        ("ResourceExhaustedError: OOM when allocating tensor with shape[100,4096,32]", "oom-allocating-tensor", "out-of-memory", {}, {}),
        ("ImportError: numpy.core.multiarray failed to import", "numpy-multiarray-failed", "numpy-incompatible", {}, {}),
        ("A module that was compiled using NumPy 1.x cannot be run in\nNumPy 2.0.0 as it may crash.", "numpy2-abi", "numpy-incompatible", {"numpy": "<2"}, {"numpy": "2.0.0"}),
        ("AttributeError: 'str' object has no attribute 'decode'", "h5py3-str-decode", "h5py-incompatible", {"h5py": "<3"}, {"h5py": ">=3"}),
        ("Illegal instruction (core dumped)", "illegal-instruction", "other", {}, {}),
        ("E cuda_driver.cc:924] failed to allocate 1.51G (1617277696 bytes) from device: CUDA_ERROR_OUT_OF_MEMORY", "cuda-error-out-of-memory", "out-of-memory", {}, {}),
        ("E tensorflow/stream_executor/cuda/cuda_driver.cc:300] failed call to cuInit: CUDA_ERROR_UNKNOWN: unknown error", "cuinit-unknown-error", "no-gpu-detected", {}, {}),
        ("E cuda_driver.cc:314] failed call to cuInit: CUDA_ERROR_NO_DEVICE: no CUDA-capable device is detected", "cuinit-no-device", "no-gpu-detected", {}, {}),
        ("W tensorflow/stream_executor/cuda/cuda_driver.cc:269] failed call to cuInit: UNKNOWN ERROR (303)", "cuinit-unknown-error-303", "no-gpu-detected", {}, {}),
        ("W op_kernel.cc:1830] OP_REQUIRES failed at xla_ops.cc:446 : INTERNAL: libdevice not found at ./libdevice.10.bc", "libdevice-not-found", "missing-cuda-lib", {}, {}),
        ("W asm_compiler.cc:80] Couldn't get ptxas version string: INTERNAL: Couldn't invoke ptxas --version", "couldnt-invoke-ptxas", "missing-cuda-lib", {}, {}),
        ("Loaded runtime CuDNN library: 5005 (compatibility version 5000) but source was compiled with 5110 (compatibility version 5100).", "cudnn-compat-version-mismatch", "cudnn-version-mismatch", {"cudnn": "5.1.10"}, {"cudnn": "5.0.5"}),
    ],
)
def test_issue_messages_are_recognised(knowledge, text, code, category, wanted, found):
    top = explain_text(text, knowledge).matches[0]
    assert (top.code, top.category) == (code, category)
    assert top.wanted == wanted
    for key, value in found.items():
        assert top.found[key] == value


@pytest.mark.parametrize(
    "text",
    [
        "I tensorflow/core/platform/cpu_feature_guard.cc:142] Your CPU supports instructions that this TensorFlow binary was not compiled to use: AVX2 FMA",
        "I tensorflow/stream_executor/cuda/cuda_gpu_executor.cc:937] successful NUMA node read from SysFS had negative value (-1), but there must be at least one NUMA node, so returning NUMA node zero",
        "W tensorflow/compiler/tf2tensorrt/utils/py_utils.cc:38] TF-TRT Warning: Could not find TensorRT",
        "I tensorflow/core/platform/cpu_feature_guard.cc:182] This TensorFlow binary is optimized to use available CPU instructions in performance-critical operations.",
    ],
)
def test_noise_is_harmless(knowledge, text):
    explanation = explain_text(text, knowledge)
    assert explanation.matches and all(m.category == "harmless" for m in explanation.matches)
    assert not explanation.has_problem


def test_unrelated_text_gives_no_match(knowledge):
    for text in (
        "",
        "Hello world. The build finished in 3.2 seconds.",
        'Traceback (most recent call last):\n  File "main.py", line 3, in <module>\n    print(d["x"])\nKeyError: \'x\'',
        "pip install requests==2.31.0\nSuccessfully installed requests-2.31.0",
    ):
        explanation = explain_text(text, knowledge)
        assert explanation.matches == ()
        assert not explanation.known
        assert render_text(explanation).startswith("No known error message found")
        assert explanation.to_json_dict()["matches"] == []


def test_unknown_text_still_reports_versions(knowledge):
    explanation = explain_text("Segmentation fault with tensorflow==2.11.0 on CUDA 11.2, driver Driver Version: 470.82.01", knowledge)
    assert not explanation.known
    assert explanation.versions_seen["tf"] == ("2.11.0",)
    assert explanation.versions_seen["cuda"] == ("11.2",)
    assert explanation.versions_seen["driver"] == ("470.82.01",)
    assert "2.11.0" in render_text(explanation)


# ----------------------------------------------------------------------------------------------
# real logs
# ----------------------------------------------------------------------------------------------

# fixture, first code, its category, its wanted, a subset of its found, versions_seen subset,
# requested_stack subset, codes that must also be present
REAL_LOGS = [
    (
        "win-cudart64_101-gtx960m.log", "dso-missing-cudart", "missing-cuda-runtime", {"cuda": "10.1"}, {},
        {"cc": ("5.0",), "gpu": ("GeForce GTX 960M",), "os": ("windows",)},
        {"cuda": "10.1", "compute_capability": "5.0", "os": "windows"}, ["cudart-dlerror-hint"],
    ),
    (
        "win-cublas64_10-gtx1080ti.log", "dso-missing-cudart", "missing-cuda-runtime", {"cuda": "10.1"}, {},
        {"cc": ("6.1",), "cuda_from_libraries": ("10.1",)},
        {"cuda": "10.1", "compute_capability": "6.1"}, ["dso-missing-cuda-lib"],
    ),
    (
        "win-cudart64_110-rtx4060.log", "dso-missing-cudart", "missing-cuda-runtime", {"cuda": "11.x"}, {},
        {"cc": ("8.9",), "gpu": ("NVIDIA GeForce RTX 4060 Laptop GPU",)},
        {"cuda": "11.x", "compute_capability": "8.9", "os": "windows"}, [],
    ),
    (
        "linux-libcudnn8-libcusolver11.log", "dso-missing-cudnn", "missing-cudnn", {"cudnn": "8"}, {},
        {"cudnn_from_libraries": ("8",), "python": ("3.7",), "os": ("linux",)},
        {"cudnn": "8", "os": "linux"}, ["dso-missing-cuda-lib", "cannot-dlopen-gpu-libraries", "skipping-gpu-devices", "numa-node-negative"],
    ),
    (
        "nvidia-tf-libcusolver-nvjitlink.log", "dso-missing-cuda-lib", "missing-cuda-lib", {"cuda": "11.x"}, {},
        {"cuda_from_libraries": ("11.x",), "cudnn_from_libraries": ("8",)},
        {"cuda": "11.x"}, ["cannot-dlopen-gpu-libraries"],
    ),
    (
        "importerror-libcublas-so-10.0.log", "importerror-missing-cuda-so", "missing-cuda-runtime", {"cuda": "10.0"}, {},
        {"cuda_from_libraries": ("10.0",)}, {"cuda": "10.0", "os": "linux"}, ["native-runtime-failed"],
    ),
    (
        "selfcheck-cudart64_100-tf2beta.log", "selfcheck-missing-cuda-dll", "missing-cuda-runtime", {"cuda": "10.0"}, {},
        {"cuda": ("10.0",), "tf": ("2.0.0",)}, {"cuda": "10.0", "tf": "2.0.0", "os": "windows"}, [],
    ),
    (
        "cudnn-mismatch-8.7.0-vs-8.9.4.log", "cudnn-version-mismatch", "cudnn-version-mismatch", {"cudnn": "8.9.4"}, {"cudnn": "8.7.0"},
        {"cudnn": ("8.7.0", "8.9.4")}, {"cudnn": "8.9.4"}, [],
    ),
    (
        "cudnn-legacy-7201-vs-7004.log", "cudnn-compat-version-mismatch", "cudnn-version-mismatch", {"cudnn": "7.0.4"}, {"cudnn": "7.2.1"},
        {}, {"cudnn": "7.0.4"}, [],
    ),
    (
        "driver-insufficient-cudagetdevice.log", "cudagetdevice-driver-insufficient", "driver-too-old", {}, {"driver": "451.48", "driver_cuda": "11.0"},
        {"driver": ("451.48",), "driver_cuda": ("11.0",), "tf": ("2.2.0",), "cudnn": ("7.6.4",), "python": ("3.7",)},
        {"tf": "2.2.0", "driver": "451.48", "python": "3.7"}, [],
    ),
    (
        "cudnn-not-initialized-driver-384.log", "cudnn-handle-not-initialized", "cudnn-init-failure", {}, {"driver": "384.69.0"},
        {"driver": ("384.69.0",), "tf": ("1.5.0",)}, {"tf": "1.5.0", "driver": "384.69.0"}, ["possibly-insufficient-driver"],
    ),
    (
        "no-kernel-image-gtx750ti.log", "no-kernel-image", "no-kernel-for-gpu", {}, {"cc": "5.0"},
        {"cc": ("5.0",), "driver": ("451.67",), "cuda": ("10.1",), "cudnn": ("7.6.5",)},
        {"compute_capability": "5.0", "driver": "451.67"}, [],
    ),
    (
        "cuda-error-no-binary-for-gpu.log", "cuda-error-no-binary-for-gpu", "no-kernel-for-gpu", {}, {},
        {"cuda": ("12.1",)}, {}, [],
    ),
    (
        "ptx-jit-h100.log", "ptx-jit-compile", "ptx-jit-slow", {}, {"cc": "9.0"},
        {"cc": ("9.0",), "tf": ("2.14.0",)}, {"compute_capability": "9.0", "tf": "2.14.0"}, [],
    ),
    (
        "ignoring-gpu-cc30-k2000m.log", "gpu-below-minimum-capability", "no-kernel-for-gpu", {"cc": "3.5"}, {"cc": "3.0"},
        {"cc": ("3.0",), "gpu": ("Quadro K2000M",)}, {"compute_capability": "3.0"}, [],
    ),
    (
        "conv-algorithm-tf-cnn-benchmarks.log", "failed-to-get-convolution-algorithm", "cudnn-init-failure", {}, {},
        {}, {}, [],
    ),
    (
        "cudnn-internal-error-rtx2080.log", "cudnn-handle-internal-error", "cudnn-init-failure", {}, {},
        {"tf": ("1.14.0",), "cuda": ("10.0",), "python": ("3.6",)}, {"tf": "1.14.0", "python": "3.6"}, [],
    ),
    (
        "cublas-rtx4090-tf115.log", "cublas-execution-failed", "cublas-failure", {}, {},
        {"tf": ("1.15|2.0|2.1", "1.15.2"), "cuda": ("10.0",), "python": ("3.7",)}, {"tf": "1.15.2", "python": "3.7"}, ["blas-gemm-launch-failed"],
    ),
    (
        "dll-load-failed-python35.log", "dll-load-failed", "dll-load-failed-windows", {}, {},
        {"python": ("3.5",), "os": ("windows",)}, {"python": "3.5", "os": "windows"}, [],
    ),
    (
        "protobuf-descriptors.log", "protobuf-descriptors-cannot-be-created", "protobuf-incompatible", {"protobuf": "<=3.20.x"}, {"protobuf": ">=4.21"},
        {"python": ("3.7",)}, {"pins": ["protobuf<=3.20.3"]}, [],
    ),
    (
        "tf1-session-on-tf2.log", "tf1-api-attribute", "tf1-api-on-tf2", {"tf": "1.x"}, {"tf": "2.0.0"},
        {"tf": ("2.0.0",)}, {"tf": "2.0.0"}, [],
    ),
    (
        "no-cuda-drivers-deepface.log", "no-cuda-drivers-found", "no-gpu-detected", {}, {},
        {}, {}, ["onednn-custom-ops", "cpu-binary-optimized", "tf-trt-missing-tensorrt"],
    ),
    (
        "cuinit-no-device-docker.log", "cuinit-no-device", "no-gpu-detected", {}, {},
        {"cuda": ("10.1",), "cuda_from_libraries": ("10.1",)}, {"os": "linux"}, ["kernel-driver-not-running", "cpu-binary-optimized"],
    ),
    (
        "cuinit-303-missing-libcuda.log", "dso-missing-libcuda", "no-gpu-detected", {}, {},
        {}, {}, ["cuinit-unknown-error-303"],
    ),
    (
        "oom-resnet-shape.log", "oom-allocating-tensor", "out-of-memory", {}, {},
        {"python": ("3.6",)}, {}, [],
    ),
    (
        "numpy2-with-tf-2.14.log", "numpy2-abi", "numpy-incompatible", {"numpy": "<2"}, {"numpy": "2.3.4", "tf": "2.14.0"},
        {"numpy": ("2.3.4",), "tf": ("2.14.0",)}, {"tf": "2.14.0", "pins": ["numpy<2"]}, [],
    ),
    (
        "numpy-api-0xc-vs-0xb.log", "numpy-c-api-version", "numpy-incompatible", {}, {},
        {}, {}, ["numpy-multiarray-failed"],
    ),
    (
        "h5py3-str-decode-tf-core.log", "h5py3-str-decode", "h5py-incompatible", {"h5py": "<3"}, {"tf": "1.15|2.0|2.1", "h5py": ">=3"},
        {"tf": ("1.15|2.0|2.1",)}, {"pins": ["h5py<3.0"]}, [],
    ),
]


def test_fixture_inventory():
    logs = sorted(p.name for p in FIXTURES.glob("*.log"))
    assert len(logs) >= 15
    readme = (FIXTURES / "README.md").read_text(encoding="utf-8")
    for name in logs:
        fixture_text(name)  # has its source line
        assert name in readme, f"{name} missing from tests/fixtures/errors/README.md"
    tested = {case[0] for case in REAL_LOGS} | {"harmless-only-relernn.log"}
    assert set(logs) == tested, "every fixture log is exercised"


@pytest.mark.parametrize(
    "name, code, category, wanted, found, seen, requested, also", REAL_LOGS, ids=[c[0] for c in REAL_LOGS]
)
def test_real_log(knowledge, name, code, category, wanted, found, seen, requested, also):
    explanation = explain_text(fixture_text(name), knowledge)
    top = explanation.matches[0]
    assert (top.code, top.category) == (code, category), codes(explanation)
    assert top.wanted == wanted
    for key, value in found.items():
        assert top.found.get(key) == value, (key, top.found)
    for key, value in seen.items():
        assert explanation.versions_seen.get(key) == value, (key, explanation.versions_seen)
    stack = requested_stack(explanation)
    for key, value in requested.items():
        assert stack.get(key) == value, (key, stack)
    for other in also:
        assert other in codes(explanation)
    assert explanation.has_problem
    # a real failure is never outranked by harmless noise, and each code appears once
    severities = [m.severity for m in explanation.matches]
    assert severities == sorted(severities, key=["error", "warning", "info"].index)
    assert top.severity != "info"
    assert len(codes(explanation)) == len(set(codes(explanation)))


def test_harmless_log_only(knowledge):
    explanation = explain_text(fixture_text("harmless-only-relernn.log"), knowledge)
    assert codes(explanation) == ["duplicate-factory-registration", "cpu-binary-optimized", "tf-trt-missing-tensorrt"]
    assert explanation.known and not explanation.has_problem
    assert requested_stack(explanation) == {}


# ----------------------------------------------------------------------------------------------
# causes, templates, output shapes
# ----------------------------------------------------------------------------------------------


def test_context_picks_the_cause(knowledge):
    # RTX 4090 + TF 1.15/CUDA 10.0: the GPU is too new, not a memory problem
    rtx = explain_text(fixture_text("cublas-rtx4090-tf115.log"), knowledge).matches[0]
    assert "newer than the CUDA version" in rtx.cause
    assert "nvidia-tensorflow" in rtx.fix
    # RTX 2080 + CUDA 10.0: the classic memory-growth case
    mem = explain_text(fixture_text("cudnn-internal-error-rtx2080.log"), knowledge).matches[0]
    assert "memory" in mem.cause
    assert "set_memory_growth" in mem.fix
    # the same failure after a cuDNN mismatch line: the version cause comes first
    text = "Loaded runtime CuDNN library: 7.5.0 but source was compiled with: 7.6.5.\n" + (
        "Failed to get convolution algorithm. This is probably because cuDNN failed to initialize"
    )
    by_code = {m.code: m for m in explain_text(text, knowledge).matches}
    assert "version mismatch" in by_code["failed-to-get-convolution-algorithm"].cause
    assert codes(explain_text(text, knowledge))[0] == "cudnn-version-mismatch"


def test_loader_names_the_missing_dependency(knowledge):
    top = explain_text(fixture_text("nvidia-tf-libcusolver-nvjitlink.log"), knowledge).matches[0]
    assert "dependencies is missing" in top.cause
    assert "libnvJitLink.so.12" in top.meaning


def test_no_gpu_cause_demoted_when_a_gpu_is_in_the_log(knowledge):
    top = explain_text(fixture_text("win-cudart64_101-gtx960m.log"), knowledge).matches[0]
    assert "no NVIDIA GPU" in top.causes[-1]
    assert "no NVIDIA GPU" not in top.cause


def test_texts_are_rendered(knowledge):
    for name, *_ in REAL_LOGS:
        for m in explain_text(fixture_text(name), knowledge).matches:
            for text in (m.meaning, m.cause, m.fix, *m.causes):
                assert not re.search(r"\{[a-z_]+(\|[^{}]*)?\}", text), (m.code, text)
    top = explain_text(fixture_text("cudnn-mismatch-8.7.0-vs-8.9.4.log"), knowledge).matches[0]
    assert "8.9.4" in top.meaning and "8.7.0" in top.meaning
    assert "equal or higher minor" in top.meaning


def test_json_shape(knowledge):
    explanation = explain_text(fixture_text("linux-libcudnn8-libcusolver11.log"), knowledge)
    data = json.loads(json.dumps(explanation.to_json_dict()))
    assert data["schema"] == SCHEMA == "stackresolve/explain@1"
    assert set(data) == {"schema", "matches", "versions_seen"}
    first = data["matches"][0]
    for key in ("code", "category", "wanted", "found", "meaning", "cause", "fix", "source"):
        assert key in first
    assert first["wanted"] == {"cudnn": "8"}
    assert first["libraries"] == ["libcudnn.so.8"]
    assert data["versions_seen"]["cudnn_from_libraries"] == ["8"]


def test_render_text(knowledge):
    out = render_text(explain_text(fixture_text("win-cudart64_101-gtx960m.log"), knowledge))
    assert out.startswith("Found 1 problem and 1 harmless message")
    assert out.index("dso-missing-cudart") < out.index("cudart-dlerror-hint")
    assert "wanted:  CUDA 10.1" in out
    assert "Versions seen in the text:" in out and "compute capability: 5.0" in out


def test_repeated_message_is_one_match(knowledge):
    explanation = explain_text(fixture_text("win-cudart64_101-gtx960m.log"), knowledge)
    top = explanation.matches[0]
    assert top.code == "dso-missing-cudart" and top.count == 2 and top.line == 3


def test_works_with_bare_error_tuple(doc, knowledge):
    # the loader may hand over only parse_errors(doc); libraries/hints can come separately
    errors = parse_errors(doc)
    line = LOADER_WIN.format("cudart64_101.dll")
    bare = explain_text(line, errors)
    assert bare.matches[0].code == "dso-missing-cudart" and bare.matches[0].wanted == {}
    full = explain_text(line, errors, libraries=knowledge.libraries, hints=knowledge.hints)
    assert full.matches[0].wanted == {"cuda": "10.1"}


def test_windows_line_endings_and_colours(knowledge):
    text = "\x1b[33m" + LOADER_WIN.format("cudart64_110.dll") + "\x1b[0m\r\n"
    assert explain_text(text, knowledge).matches[0].wanted == {"cuda": "11.x"}


# ----------------------------------------------------------------------------------------------
# helpers
# ----------------------------------------------------------------------------------------------


def test_normalize_version():
    assert normalize_version("cudnn", "7201") == "7.2.1"
    assert normalize_version("cudnn", "8005") == "8.0.5"
    assert normalize_version("cudnn", "8.1.0") == "8.1.0"
    assert normalize_version("cc", "86") == "8.6"
    assert normalize_version("cc", "7.5") == "7.5"
    assert normalize_version("driver", "384.69.0") == "384.69.0"


def test_intersect_candidates():
    assert intersect_candidates(["10.1", "10.2", "11.x"], ["11.x", "12.x"]) == ("11.x",)
    assert intersect_candidates(["11.x"], ["11.2"]) == ("11.2",)
    assert intersect_candidates(["10.1", "10.2"], ["11.x"]) == ()


def test_library_candidates(knowledge):
    libs = knowledge.libraries
    assert library_candidates(["libcusolver.so.10", "libcudart.so.11.0"], libs) == {"cuda": ("11.0",)}
    assert library_candidates(["cublas64_10.dll", "cudnn64_7.dll"], libs) == {"cuda": ("10.1", "10.2"), "cudnn": ("7",)}
    assert library_candidates(["libunknown.so.3"], libs) == {}


def test_extract_versions_tf_from_paths_and_pip(knowledge):
    seen = extract_versions(
        'File "/usr/lib/python3.8/site-packages/tensorflow_core/python/__init__.py"\n'
        "tensorflow-gpu            1.15.0\nnumpy                    1.19.5\n",
        knowledge.hints,
        knowledge.libraries,
    )
    assert seen["tf"] == ("1.15|2.0|2.1", "1.15.0")
    assert seen["numpy"] == ("1.19.5",)
    assert seen["python"] == ("3.8",)


def test_versions_in_other_scripts_digits_are_not_read_as_versions():
    """The number rule (model/numbers.py) holds for logs too: '８.６.０' is no cuDNN version to ask for."""
    from stackresolve.explain import explain_text
    from stackresolve.knowledge.loader import error_knowledge

    log = ("Loaded runtime CuDNN library: ８.１.０ but source was compiled with: ８.６.０.  CuDNN library needs to have "
           "matching major version and equal or higher minor version.")
    match = explain_text(log, error_knowledge()).matches[0]
    assert match.code == "cudnn-version-mismatch"
    assert "８" not in match.fix and not match.wanted and not match.found
