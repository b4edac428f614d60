"""Messages catalogued from the code that prints them (constraints/errors.toml `template`).

A record with a template matches the message as its source writes it, whatever values it was printed
with: a message nobody has pasted yet (filled here with made-up values) is still recognised.
"""

from __future__ import annotations

import re

import pytest

from stackresolve.explain import explain_text
from stackresolve.knowledge.loader import error_knowledge

# a value for each printf conversion and for Python's {} (made up: no report carries them)
_PRINTF = re.compile(r"%[-+ #0]*\d*(?:\.\d+)?(?:hh|h|ll|l|z|j|t)?([diouxXsfc])")
_FORMAT = re.compile(r"\{[^{}]*\}")
_SAMPLE = {"d": "7", "i": "7", "u": "7", "o": "7", "x": "1f", "X": "1F", "f": "2.5", "c": "q", "s": "13.7"}


def fill(template: str) -> str:
    """The message a template prints, with made-up values."""
    return _FORMAT.sub("13.7", _PRINTF.sub(lambda m: _SAMPLE[m.group(1)], template))


def templated():
    return [(error, template) for error in error_knowledge().errors for template in error.templates]


def test_the_catalogue_has_templates_for_the_message_families_of_issue_22():
    codes = {error.code for error, _ in templated()}
    assert {"nccl-shm-failed", "nccl-unhandled-system-error", "container-requires-newer-driver",
            "container-cli-init-failed", "cuda-invalid-device-function", "jax-pjrt-api-mismatch",
            "unsupported-ptx-version", "jax-dnn-init-failed", "torch-dynamic-library-missing"} <= codes


@pytest.mark.parametrize("error,template", templated(), ids=lambda v: v if isinstance(v, str) else v.code)
def test_a_message_known_only_from_its_source_template_is_matched(error, template):
    message = f"some program: {fill(template)}\n"
    explanation = explain_text(message, error_knowledge())
    assert error.code in [m.code for m in explanation.matches], message
    # where it comes from: a file of a repository at a commit, or the vendor's documentation
    assert re.search(r"\w/[\w.-]+:[\w/.-]+@[0-9a-f]{7,}|https://docs\.nvidia\.com/|closed source", error.template_source)


def test_a_template_matches_a_message_wrapped_over_lines():
    text = "RuntimeError: Unable to initialize backend 'cuda': INVALID_ARGUMENT: Mismatched PJRT plugin PJRT API\n" \
           "version (0.47) and framework PJRT API version 0.54)."
    assert explain_text(text, error_knowledge()).problems[0].code == "jax-pjrt-api-mismatch"


def test_the_bare_xla_dnn_message_is_known():
    explanation = explain_text("DNN library initialization failed", error_knowledge())
    assert explanation.problems[0].category == "cudnn-init-failure"
    assert "jax" in explanation.problems[0].fix.lower()  # XLA's message without a framework: JAX's fix


def test_an_nccl_shared_memory_failure_names_the_container_options():
    text = "NCCL WARN Call to posix_fallocate failed : No space left on device\n" \
           "RuntimeError: NCCL error in: ProcessGroupNCCL.cpp:1333, unhandled system error"
    top = explain_text(text, error_knowledge()).problems[0]
    assert (top.code, top.category) == ("nccl-shm-failed", "nccl-failure")
    assert "--shm-size" in top.fix and "--ipc=host" in top.fix
    assert top.cause.startswith("No space left in /dev/shm")


# glibc's French dlerror, as French systems print it (seen in public logs: "Ne peut ouvrir le fichier d'objet
# partagé: Aucun fichier ou dossier de ce type"); the loaders' own words around it stay English
FRENCH_DLERROR = "Ne peut ouvrir le fichier d'objet partagé: Aucun fichier ou dossier de ce type"


def test_a_localized_dlerror_still_names_the_missing_cudnn():
    text = ("W tensorflow/stream_executor/platform/default/dso_loader.cc:64] Could not load dynamic library "
            f"'libcudnn.so.8'; dlerror: libcudnn.so.8: {FRENCH_DLERROR}")
    top = explain_text(text, error_knowledge()).problems[0]
    assert (top.code, top.wanted) == ("dso-missing-cudnn", {"cudnn": "8"})


def test_a_localized_dlerror_of_a_cudnn_dependency_names_the_dependency():
    text = f"Could not load library libcudnn_cnn_infer.so.8. Error: libnvrtc.so: {FRENCH_DLERROR}"
    top = explain_text(text, error_knowledge()).problems[0]
    assert top.code == "cudnn-dependency-missing" and "libnvrtc.so" in top.fix


def test_a_container_requirement_names_the_driver_its_cuda_needs():
    # CUDA 10.2's minimum drivers, NVIDIA's CUDA 10.2 release notes (Table 2): 440.33 Linux, 441.22 Windows
    text = "stderr: nvidia-container-cli: requirement error: unsatisfied condition: cuda>=10.2, please update " \
           "your driver to a newer version, or use an earlier cuda container: unknown"
    top = explain_text(text, error_knowledge()).problems[0]
    assert top.code == "container-requires-newer-driver" and top.wanted["cuda"] == "10.2"
    assert "440.33 (Linux) / 441.22 (Windows)" in top.fix  # the log shows no OS: both
    linux = explain_text(text + "\nii  nvidia-driver-390 390.48-0ubuntu3 amd64 NVIDIA driver", error_knowledge())
    assert "440.33 or newer" in linux.problems[0].fix and "Windows" not in linux.problems[0].fix


def test_wsl2_shows_in_the_fix_of_a_missing_libcuda():
    text = ("W tensorflow/stream_executor/platform/default/dso_loader.cc:64] Could not load dynamic library "
            "'libcuda.so.1'; dlerror: libcuda.so.1: cannot open shared object file: No such file or directory; "
            "LD_LIBRARY_PATH: /usr/local/cuda/lib64\nPython platform: Linux-5.15.90.1-microsoft-standard-WSL2-x86_64")
    explanation = explain_text(text, error_knowledge())
    assert explanation.versions_seen["os"]  # Linux's paths and WSL2's kernel
    top = next(m for m in explanation.problems if m.code == "dso-missing-libcuda")
    assert "/usr/lib/wsl/lib" in top.fix and "Windows NVIDIA driver" in top.fix


def test_a_container_without_the_gpu_devices_is_told_to_start_with_them():
    text = "E cuda_driver.cc:282] failed call to cuInit: CUDA_ERROR_UNKNOWN: unknown error\n" \
           "ls: cannot access '/dev/nvidia0': No such file or directory"
    top = explain_text(text, error_knowledge()).problems[0]
    assert top.code == "cuinit-unknown-error" and "--gpus all" in top.fix


def test_a_container_refused_for_its_cuda_on_wsl2_asks_for_the_windows_driver():
    """nvidia-container-cli's "unsatisfied condition: cuda>=12.0" (libnvidia-container src/cli/dsl.c): the fix names
    CUDA 12.0's minimum driver, NVIDIA's CUDA 12.0 release notes (Table 3): >= 525.60.13 on Linux, >= 527.41 on
    Windows. Under WSL2 the driver is the Windows one (NVIDIA's CUDA on WSL guide), so a WSL2 log gets 527.41."""
    import subprocess
    import sys

    message = ("nvidia-container-cli: requirement error: unsatisfied condition: cuda>=12.0, please update your "
               "driver to a newer version, or use an earlier cuda container: unknown.")

    def fix_of(text: str) -> str:
        done = subprocess.run([sys.executable, "-m", "stackresolve", "explain", "--no-detect", text],
                              capture_output=True, text=True, timeout=120)
        return next(line for line in done.stdout.splitlines() if "Update the host's NVIDIA driver" in line)

    assert "to 525.60.13 (Linux) / 527.41 (Windows) or newer" in fix_of(message)
    assert "to 527.41 or newer" in fix_of(message + "\nlibcuda.so.1 is loaded from /usr/lib/wsl/lib")
