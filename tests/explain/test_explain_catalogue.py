"""The library status catalogue (constraints/error_catalogue.toml) and explain's use of it (issue 34).

Expected numbers and texts are the headers' own (CUDA 12.6.3's driver_types.h, cuda.h, nvml.h, cudnn_graph.h,
cublas_api.h, cufft.h, cusolver_common.h and cusparse.h; NCCL 2.30.7's src/nccl.h.in and src/init.cc), as the
catalogue's `source` fields cite them; the log lines below are written for the tests, each in the shape the named
program prints (its provenance in the comment beside it).
"""

from __future__ import annotations

import re
import subprocess
import sys

import pytest

from stackresolve.explain import explain_text
from stackresolve.explain.scan import _Text, _clean_text


@pytest.fixture(scope="module")
def errors():
    from stackresolve.knowledge.loader import error_knowledge

    return error_knowledge()


def _status(errors, name):
    return next(s for s in errors.statuses if s.name == name)


# (library, enum, how many values besides success) as the cited headers define them
ENUM_SIZES = {
    ("cuda-runtime", "cudaError_t"): 131,
    ("cuda-driver", "CUresult"): 96,
    ("nvml", "nvmlReturn_t"): 30,
    ("cudnn", "cudnnStatus_t"): 52,
    ("cublas", "cublasStatus_t"): 9,
    ("cufft", "cufftResult"): 16,
    ("cusolver", "cusolverStatus_t"): 24,
    ("cusparse", "cusparseStatus_t"): 11,
    ("nccl", "ncclResult_t"): 7,  # ncclInProgress (7) is a state, not an error, and is left out with ncclSuccess
}


def test_every_enum_is_complete(errors):
    sizes: dict[tuple[str, str], int] = {}
    for status in errors.statuses:
        sizes[(status.library, status.enum)] = sizes.get((status.library, status.enum), 0) + 1
    assert sizes == ENUM_SIZES


@pytest.mark.parametrize("name, value", [
    ("cudaErrorInsufficientDriver", 35), ("cudaErrorNoDevice", 100), ("cudaErrorNoKernelImageForDevice", 209),
    ("cudaErrorSystemDriverMismatch", 803), ("cudaErrorCompatNotSupportedOnDevice", 804), ("cudaErrorUnknown", 999),
    ("CUDA_ERROR_NO_DEVICE", 100), ("CUDA_ERROR_SYSTEM_DRIVER_MISMATCH", 803), ("CUDA_ERROR_UNSUPPORTED_PTX_VERSION", 222),
    ("NVML_ERROR_DRIVER_NOT_LOADED", 9), ("NVML_ERROR_LIB_RM_VERSION_MISMATCH", 18), ("NVML_ERROR_UNKNOWN", 999),
    ("CUDNN_STATUS_NOT_INITIALIZED", 1001), ("CUDNN_STATUS_ARCH_MISMATCH", 3007),
    ("CUBLAS_STATUS_NOT_INITIALIZED", 1), ("CUBLAS_STATUS_ARCH_MISMATCH", 8),
    ("CUFFT_INTERNAL_ERROR", 5), ("CUFFT_NOT_SUPPORTED", 16),
    ("CUSOLVER_STATUS_NOT_INITIALIZED", 1), ("CUSPARSE_STATUS_NOT_INITIALIZED", 1),
    ("ncclUnhandledCudaError", 1), ("ncclSystemError", 2), ("ncclTimeout", 8),
])
def test_numbers_are_the_headers(errors, name, value):
    assert _status(errors, name).value == value


def test_texts_come_from_their_source(errors):
    # NCCL's own ncclGetErrorString (src/init.cc)
    assert _status(errors, "ncclUnhandledCudaError").text == \
        "unhandled cuda error (run with NCCL_DEBUG=INFO for details)"
    assert _status(errors, "ncclRemoteError").text == "remote process exited or there was a network error"
    for status in errors.statuses:
        assert status.source and (not status.text or status.text_source), status.name
        assert status.category and status.cause and status.fix, status.name


# A status no errors.toml record knows and no report in the corpus shows: NVML_ERROR_GPU_IS_LOST (nvml.h: 15), by its
# name, in the words of three programs that pass NVML's errors on.
GPU_LOST_LINES = {
    # a Kubernetes event (the shape of kubelet's events in NVIDIA/nvidia-container-toolkit#173)
    "kubelet": "  Warning  Failed     5s (x3 over 19s)  kubelet            Error: failed to create containerd task: "
               "nvml: NVML_ERROR_GPU_IS_LOST",
    # docker's daemon error (the shape of NVIDIA/nvidia-container-toolkit#678)
    "docker": "docker: Error response from daemon: failed to create task for container: NVML_ERROR_GPU_IS_LOST",
    # nvtop's start-up message (Syllo/nvtop#95)
    "nvtop": "Impossible to initialize nvidia nvml : NVML_ERROR_GPU_IS_LOST",
}


def test_a_status_known_only_from_its_catalogue_matches_under_three_programs(errors):
    assert not any(re.search(e.pattern, line) for e in errors.errors for line in GPU_LOST_LINES.values())
    for program, line in GPU_LOST_LINES.items():
        explanation = explain_text(line, errors)
        top = explanation.problems[0]
        assert top.code == "nvml.nvml-error-gpu-is-lost", program
        assert dict(top.status) == {"library": "nvml", "enum": "nvmlReturn_t", "name": "NVML_ERROR_GPU_IS_LOST",
                                    "value": 15}
        assert top.via == program
        assert top.category == "driver-not-loaded"
    # a container runtime says where the fix is: on the host
    assert explain_text(GPU_LOST_LINES["docker"], errors).problems[0].fix.startswith("On the host")


def test_a_printed_text_is_its_status_wherever_it_sits(errors):
    # onnxruntime (C0untFloyd/roop-unleashed#465), CuPy (NVIDIA/FastPhotoStyle#68), NCCL (NVIDIA/cuml#5961): the
    # CUDA runtime's text of cudaErrorInsufficientDriver (35)
    lines = {
        "onnxruntime": "onnxruntime::CudaCall CUDA failure 35: CUDA driver version is insufficient for CUDA runtime "
                       "version ; GPU=0 ; expr=cudaSetDevice(info_.device_id);",
        "CuPy": "cupy.cuda.runtime.CUDARuntimeError: cudaErrorInsufficientDriver: CUDA driver version is insufficient "
                "for CUDA runtime version",
        "NCCL": "misc/cudawrap.cc:182 NCCL WARN Cuda failure 'CUDA driver version is insufficient for CUDA runtime "
                "version'",
    }
    for program, line in lines.items():
        top = explain_text(line, errors).problems[0]
        assert top.category == "driver-too-old", program


def test_nvml_text_needs_nvml_beside_it(errors):
    # "Unknown Error" is NVML's text for 999 only where NVML is named (nvidia-container-toolkit#48)
    assert explain_text("Failed to initialize NVML: Unknown Error", errors).problems[0].code == "nvml.nvml-error-unknown"
    assert not explain_text("ERROR: Unknown Error while uploading the artifact", errors).problems


def test_a_record_of_the_whole_message_wins_over_the_status_inside_it(errors):
    line = "nvidia-container-cli: initialization error: nvml error: driver/library version mismatch: unknown."
    codes = [m.code for m in explain_text(line, errors).problems]
    assert codes == ["container-cli-init-failed"]


def test_docker_without_the_container_toolkit(errors):
    line = 'docker: Error response from daemon: could not select device driver "" with capabilities: [[gpu]].'
    top = explain_text(line, errors).problems[0]
    assert top.category == "container-gpu-unavailable"
    assert "nvidia-container-toolkit" in top.fix.lower() or "container toolkit" in top.fix.lower()


def test_a_ptxas_warning_whose_version_is_not_older_is_harmless(errors):
    # TensorFlow 1.12's wrong comparison (tensorflow/tensorflow#23874)
    wrong = explain_text("*** WARNING *** You are using ptxas 10.0.145, which is older than 9.2.88", errors)
    assert not wrong.has_problem and wrong.matches[0].category == "harmless"
    right = explain_text("*** WARNING *** You are using ptxas 9.2.148, which is older than 11.1. ptxas before 11.1 is "
                         "known to miscompile XLA code", errors)
    assert right.problems[0].category == "ptxas-too-old"


# ----------------------------------------------------------------------------------------------
# saying only what fits the log
# ----------------------------------------------------------------------------------------------

FRAMEWORK_WORDS = {"tensorflow": re.compile(r"TensorFlow|\bTF\b"), "pytorch": re.compile(r"PyTorch|\btorch\b"),
                   "jax": re.compile(r"\bJAX\b|jaxlib")}


def _own_framework(setup: dict) -> str | None:
    named = setup.get("framework", "").lower()
    if "pytorch" in named:
        return "pytorch"
    if "jax" in named:
        return "jax"
    return "tensorflow" if setup.get("tf") or "tensorflow" in named else None


def test_no_cause_from_another_framework_in_the_corpus(errors):
    """The causes a message every framework prints (a record of framework "any") gives a report's most serious
    match name no framework other than the report's own (issue 34: a TF 1.15 cuDNN-mismatch log got causes about
    JAX and PyTorch)."""
    sys.path.insert(0, str(__import__("pathlib").Path(__file__).parent))
    import test_explain_corpus as corpus

    wrong = []
    for report in corpus.reports():
        own = _own_framework(report["setup"])
        if own is None:
            continue
        explanation = explain_text(corpus.report_text(report), errors)
        for match in explanation.problems[:1]:
            if match.framework != "any":
                continue  # a framework's own message: its causes may speak of another (PyTorch imported before JAX)
            for cause in match.causes:
                if FRAMEWORK_WORDS[own].search(cause):
                    continue  # about the log's framework ("JAX (the message comes from XLA, which TensorFlow ...")
                wrong += [(report["file"], other, cause) for other, words in FRAMEWORK_WORDS.items()
                          if other != own and words.search(cause)]
    assert wrong == []


def test_the_code_is_said_once(errors):
    from stackresolve.explain import render_text

    text = render_text(explain_text("Loaded runtime CuDNN library: 8.0.5 but source was compiled with: 8.1.0.",
                                    errors))
    assert "cudnn-version-mismatch (cudnn-version-mismatch" not in text
    assert re.search(r"\] cudnn-version-mismatch \(line 1\)", text)


def test_no_powershell_for_a_linux_log(tmp_path):
    log = tmp_path / "linux.log"
    log.write_text("2022-07-10 15:08:09.276131: W tensorflow/stream_executor/platform/default/dso_loader.cc:64] Could "
                   "not load dynamic library 'libcudart.so.11.0'; dlerror: libcudart.so.11.0: cannot open shared "
                   "object file: No such file or directory\n", encoding="utf-8")
    done = subprocess.run([sys.executable, "-m", "stackresolve", "explain", "--no-detect", "--file", str(log)],
                          capture_output=True, text=True, timeout=120)
    plan_line = next(line for line in done.stdout.splitlines() if line.startswith("Install plan:"))
    assert "powershell" not in plan_line and "pip" in plan_line


# ----------------------------------------------------------------------------------------------
# long logs
# ----------------------------------------------------------------------------------------------

def test_line_numbers_count_newlines_only(errors):
    bar = "\r".join(f"{pct}%|" for pct in range(0, 101, 10))  # a progress bar redrawn in place (tqdm)
    text = f"epoch 1\n{bar}\n{bar}\nCould not load dynamic library 'libcudnn.so.8'; dlerror: libcudnn.so.8: cannot " \
           f"open shared object file\n"
    match = explain_text(text, errors).problems[0]
    assert match.line == 4  # as an editor counts: epoch, the two bars, the error
    cleaned, returns = _clean_text(text)
    assert _Text(cleaned, returns).line_number(cleaned.index("Could not")) == 4


def test_a_long_log_reads_each_line_shape_a_few_times(errors):
    """Versions of a long log come from its distinct lines; 50,000 step lines that differ only in their numbers
    are read a few times, and a version said once among them is still seen."""
    noise = "".join(f"step {i} loss 0.{i % 97:02d} cuda tensor\n" for i in range(50_000))
    text = noise[:len(noise) // 2] + "Driver Version: 470.57.02    CUDA Version: 11.4\n" + noise[len(noise) // 2:] \
        + "Could not load dynamic library 'libcudart.so.11.0'; dlerror: libcudart.so.11.0: cannot open\n"
    assert len(text) > 1 << 20
    explanation = explain_text(text, errors)
    assert explanation.versions_seen.get("driver") == ("470.57.02",)
    assert explanation.problems[0].category == "missing-cuda-runtime"


def test_the_error_knowledge_comes_from_its_snapshot(tmp_path, monkeypatch):
    from stackresolve.knowledge import loader

    monkeypatch.setenv("STACKRESOLVE_CACHE_DIR", str(tmp_path))
    monkeypatch.delenv("STACKRESOLVE_NO_CACHE", raising=False)
    loader.error_knowledge.cache_clear()
    try:
        built = loader.error_knowledge()
        assert list(tmp_path.glob("knowledge-errors-*.snapshot"))
        loader.error_knowledge.cache_clear()
        loaded = loader.error_knowledge()
        assert loaded is not built and loaded == built
        assert [e.needles for e in loaded.errors] == [e.needles for e in built.errors]
    finally:
        loader.error_knowledge.cache_clear()


def test_a_translated_windows_message_is_its_english_one(errors):
    # Windows prints ERROR_MOD_NOT_FOUND in the system's language (tensorflow/models#2083; NumPy's maintainer
    # translates it in numpy/numpy#17648): the record of the English message reads it
    for line in ("ImportError: DLL load failed: 找不到指定的模块。",
                 "ImportError: DLL load failed: The specified module could not be found."):
        assert [m.code for m in explain_text(f"import tensorflow\n{line}", errors).problems][:1] == ["dll-load-failed"]
    # not read as the other DLL failure ("initialization routine failed"), whatever the spacing
    numpy = explain_text("Original error was: DLL load failed:找不到指定的模块。", errors)
    assert "dll-init-failed" not in [m.code for m in numpy.matches]
    assert explain_text("ImportError: DLL load failed while importing _pywrap_tensorflow_internal: A dynamic link "
                        "library (DLL) initialization routine failed.", errors).problems[0].code == "dll-init-failed"


# ----------------------------------------------------------------------------------------------
# a status's text split over lines, or quoted in JSON (issue 34: "quoted in JSON or a Kubernetes event, ... split
# over lines"). The texts are the catalogue's (text_source: NVIDIA/nvidia-docker#498 for the runtime's 35,
# Syllo/nvtop#95 for NVML's 18); the surroundings are the named programs' shapes.
# ----------------------------------------------------------------------------------------------

INSUFFICIENT = "cuda-runtime.cuda-error-insufficient-driver"
MISMATCH = "nvml.nvml-error-lib-rm-version-mismatch"


def _found(errors, text):
    return [(m.code, m.line) for m in explain_text(text, errors).problems]


def test_a_text_hard_wrapped_at_any_space_is_its_status_on_the_line_it_starts(errors):
    # PyTorch's message (nagadomi/nunif#702: "RuntimeError: CUDA error: CUDA driver version is insufficient for CUDA
    # runtime version") as an 80-column terminal or a CI log viewer hard-wraps it, at two different spaces
    head = "Traceback (most recent call last):\n  File \"train.py\", line 12, in <module>\n"
    for wrapped in ("RuntimeError: CUDA error: CUDA driver version is\ninsufficient for CUDA runtime version",
                    "RuntimeError: CUDA error: CUDA driver version is insufficient for CUDA \nruntime version"):
        assert _found(errors, head + wrapped + "\n") == [(INSUFFICIENT, 3)]


def test_a_wrapped_text_with_an_indented_continuation(errors):
    # nvidia-smi's NVML failure (zzzhouuu/truenas-nvidia-drivers#19) as a log viewer wraps it under its own indent
    text = "$ nvidia-smi\n    Failed to initialize NVML: Driver/library\n        version mismatch\nNVML library version: 580.178\n"
    assert _found(errors, text) == [(MISMATCH, 2)]
    # what was seen is both lines, read as one
    assert explain_text(text, errors).problems[0].evidence == \
        "Failed to initialize NVML: Driver/library version mismatch"


def test_a_text_is_not_joined_across_a_blank_line(errors):
    """The rule: a text is read over two lines only when they follow each other (one line break, blanks around it);
    a blank line between them is a paragraph, and two paragraphs never make one message."""
    assert _found(errors, "CUDA driver version is\n\ninsufficient for CUDA runtime version\n") == []
    assert _found(errors, "nvml: checking Driver/library\n\n   version mismatch\n") == []
    # nor does a text's start on one line and another line's end make one
    assert _found(errors, "the CUDA driver version is\nnot what we want\n") == []
    # the words must be the text's, whatever stands between them (a stray letter is no escape)
    assert _found(errors, "CUDA driver version isn insufficient for CUDA runtime version") == []


def test_a_text_json_escaped_in_a_docker_json_file_line(errors):
    # docker's json-file driver stores each line of the container's output as {"log": ..., "stream": ..., "time": ...}
    # (Go's encoder: quotes and backslashes escaped). The container's own logger wrote JSON through json-c, which
    # escapes "/" as "\/" by default (rsyslog/libfastjson#5, https://github.com/rsyslog/libfastjson/issues/5), so the
    # text reaches the file escaped twice
    line = ('{"log":"{\\"level\\":\\"error\\",\\"msg\\":\\"Failed to initialize NVML: Driver\\\\/library version '
            'mismatch\\"}\\n","stream":"stderr","time":"2023-11-28T17:35:08.651661512Z"}')
    assert _found(errors, '{"log":"starting\\n","stream":"stdout","time":"2023-11-28T17:35:08.1Z"}\n' + line + "\n") \
        == [(MISMATCH, 2)]
    # a line break escaped inside the text (a message the program wrapped itself), once and twice
    for escaped in ("\\n", "\\\\n", "\\t"):
        line = ('{"log":"RuntimeError: CUDA error: CUDA driver version is' + escaped + 'insufficient for CUDA runtime '
                'version\\n","stream":"stderr","time":"2024-02-26T10:01:02.5Z"}')
        assert _found(errors, line) == [(INSUFFICIENT, 1)], escaped


def test_a_text_inside_a_kubectl_events_json_message(errors):
    # `kubectl get events -o json`: the kubelet's message quotes the runtime's error, which quotes the hook's stderr
    # (the nesting of NVIDIA/nvidia-container-toolkit#183's title); the validator's output was wrapped where it was
    # printed, so the JSON string carries "\n" and the indentation inside the text
    events = """{
    "apiVersion": "v1",
    "items": [
        {
            "apiVersion": "v1",
            "kind": "Event",
            "message": "Error: failed to start container \\"driver-validation\\": stderr: \\\\\\"nvidia-smi: Failed to initialize NVML: Driver/library\\\\n    version mismatch\\\\n\\\\\\"\\": unknown",
            "reason": "Failed",
            "type": "Warning"
        }
    ],
    "kind": "List"
}
"""
    assert _found(errors, events) == [(MISMATCH, 7)]
    # and a "/" written as a \\u escape (as some encoders write any punctuation) reads as the character
    assert _found(errors, '{"message":"nvml error: Driver\\u002flibrary version mismatch"}') == [(MISMATCH, 1)]


def test_a_json_escape_never_reaches_the_terminal_raw(errors):
    # the escapes are read only to look the text up: the evidence is the line as written, and an escaped terminal
    # sequence stays the six characters it is in the log
    line = '{"log":"\\u001b]52;c;ZWNobyBoaQ==\\u0007Failed to initialize NVML: Driver\\/library version mismatch\\n"}'
    match = explain_text(line, errors).problems[0]
    assert match.code == MISMATCH
    assert "\x1b" not in match.evidence and "\x07" not in match.evidence
    assert "\\u001b" in match.evidence


def test_a_bad_catalogue_record_is_blamed_on_the_catalogue_file():
    """A maintainer editing error_catalogue.toml is sent to that file, not to errors.toml."""
    import pytest

    from stackresolve.knowledge.errors import parse_catalogue

    with pytest.raises(ValueError, match=r"^error_catalogue\.toml: status\[0\] \(x\): `library` is missing"):
        parse_catalogue({"status": [{"name": "x"}]})
