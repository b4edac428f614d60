"""The cases of issue 11 ("one decision, rendered everywhere"), each as a user meets it, with the expected values
typed from TensorFlow's and NVIDIA's own sources."""

from __future__ import annotations

import json

import pytest
from click.testing import CliRunner

from stackresolve.cli import app
from stackresolve.request.parse import Flags, request_from_flags
from stackresolve.resolve import resolve



@pytest.fixture
def run():
    runner = CliRunner()
    return lambda *args: runner.invoke(app, list(args))


def stack_of(kb, **flags):
    return resolve(kb, request_from_flags(kb, Flags(**flags), None)).stack


# (line, os, cuDNN plans install): what TensorFlow's own release artifacts used.
# - 2.5-2.11: tensorflow/tools/dockerfiles gpu.Dockerfile 'ARG CUDNN=8.1.0.77-1'; tensorflow/docs pip.md
#   (2022-05-17) 'conda install -c conda-forge cudatoolkit=11.2 cudnn=8.1.0'; source_windows.md lists cuDNN 8.1.
# - 2.12/2.13: tensorflow/docs pip.md@518478ec 'pip install nvidia-cudnn-cu11==8.6.0.163'.
# - 2.3: TensorFlow's 2.3.0-gpu image carries cuDNN 7.6.4.38 (constraints/docker.toml).
# - 2.15: tensorflow[and-cuda]==2.15.x pins nvidia-cudnn-cu12==8.9.4.25 (the wheel's METADATA).
ARTIFACT_CUDNN = [
    ("2.3", "linux", "7.6.4"), ("2.5", "linux", "8.1.0"), ("2.9", "linux", "8.1.0"), ("2.9", "windows", "8.1.0"),
    ("2.10", "windows", "8.1.0"), ("2.11", "linux", "8.1.0"), ("2.12", "linux", "8.6.0"), ("2.13", "linux", "8.6.0"),
    ("2.15", "linux", "8.9.4"),
]


@pytest.mark.parametrize("line, os_name, cudnn", ARTIFACT_CUDNN)
def test_cudnn_is_what_tensorflows_own_artifacts_used(kb, line, os_name, cudnn):
    assert stack_of(kb, tf=line, os=os_name, gpu="GeForce GTX 1080").cudnn.version == cudnn


def test_tf_1_15_cudnn_is_at_least_what_the_wheel_was_compiled_with(kb):
    # The 1.15.0 wheel: "Loaded runtime CuDNN library: 7.4.1 but source was compiled with: 7.6.0"
    # (tensorflow/tensorflow#35376), whatever the tested-build table's 7.4 says.
    stack = stack_of(kb, tf="1.15", os="linux", gpu="GeForce GTX 1080")
    assert stack.cudnn.compiled == "7.6"
    assert stack.cudnn.version.startswith("7.6.")


def test_newer_minors_are_offered_as_also_working(kb):
    stack = stack_of(kb, tf="2.9", os="linux", gpu="GeForce RTX 3090")
    assert "8.9.7" in stack.cudnn.also_works and "cuda_dnn.cc" in stack.cudnn.rule


def test_cudnn_flag_chooses_another_minor(kb, run):
    assert stack_of(kb, tf="2.9", os="linux", gpu="GeForce RTX 3090", cudnn="8.6").cudnn.version.startswith("8.6.")
    older = run("plan", "--no-detect", "--tf", "2.9", "--os", "linux", "--cudnn", "8.0")
    assert older.exit_code == 1  # 2.9 was compiled with 8.1: it refuses 8.0 (cuda_dnn.cc)
    assert "cuDNN 8.0 was asked for" in older.stdout and "8.x >= 8.1" in older.stdout


def test_check_without_detection_checks_only_what_it_was_told(run, tmp_path):
    lock = tmp_path / "stackresolve.lock"
    assert run("plan", "--no-detect", "--tf", "1.15", "--os", "linux", "--gpu-cc", "6.1", "--format", "lock",
               "-o", str(lock)).exit_code == 0
    result = run("check", str(lock), "--no-detect", "--os", "linux", "--gpu-cc", "6.1", "--driver", "440.33")
    assert result.exit_code == 0, result.output
    assert "not checked" in result.stdout


@pytest.mark.parametrize("python", ["3.8", "3.4"])
def test_no_traceback_for_a_python_tf_1_15_has_no_windows_wheel_for(run, python):
    result = run("plan", "--no-detect", "--gpu-cc", "6.1", "--tf", "1.15", "--os", "windows", "--python", python,
                 "--format", "json")
    assert result.exit_code == 1 and result.exception is None or isinstance(result.exception, SystemExit)
    doc = json.loads(result.stdout)
    # the PowerShell plan is the WSL2 route where one exists; else the document says why there is none
    assert doc["status"] == "impossible"
    assert "powershell" in doc["plans"] or "no consistent stack" in doc["refused_formats"]["powershell"].lower()


def test_the_python_asked_for_is_kept(run):
    # No NVIDIA build is for Python 3.7 (their wheels are 3.6 or 3.8): the stock wheel, with PTX-JIT warnings.
    result = run("plan", "--no-detect", "--tf", "1.15", "--python", "3.7", "--gpu-cc", "8.6", "--format", "pip")
    assert result.exit_code == 0
    assert "tensorflow-gpu==1.15.5" in result.stdout.splitlines()
    assert "# Python 3.7" in result.stdout and "nvcr.io" not in result.stdout


def test_a_conflict_names_both_sides(run):
    result = run("plan", "--no-detect", "--tf", "1.15", "--os", "linux", "--python", "2.5")
    assert result.exit_code == 1
    assert "Python 2.5 was asked for" in result.stdout
    # tensorflow-gpu 1.15.x Linux wheels: cp27, cp35-cp37 (package index); NVIDIA's: 3.6, 3.8.
    assert "has linux builds for Python 2.7, 3.5, 3.6, 3.7, 3.8 only" in result.stdout


def test_a_python_that_does_not_exist_is_bad_input(run):
    result = run("plan", "--no-detect", "--tf", "1.15", "--python", "3.99")
    assert result.exit_code == 2 and "there is no Python 3.99" in result.stderr


def test_a_degraded_stack_leads_to_the_native_ones(kb):
    # TF 2.3 carries only compute_75 PTX for an RTX 3080 (8.6); 2.4 is the first line with sm_80 SASS (which
    # runs on 8.6) and 2.10 the last with native Windows GPU support (tensorflow/docs pip.md).
    resolution = resolve(kb, request_from_flags(kb, Flags(tf="2.3", os="windows", gpu="GeForce RTX 3080"), None))
    assert resolution.stack.gpu.support == "ptx-jit"
    lines = [a.stack.framework.line for a in resolution.alternatives]
    assert lines[:2] == ["2.4", "2.10"]
    assert all(a.stack.gpu.support == "native" for a in resolution.alternatives)
