"""The defects issue 15 found by installing plans as a new user would, each pinned by a test (expected values from
the issue's install runs and from the wheels' own metadata, not from our output)."""

from __future__ import annotations

import pytest

from stackresolve.formats.render import all_plans
from stackresolve.request.parse import Flags, request_from_flags
from stackresolve.resolve import resolve



def pip_plan(kb, **flags) -> str:
    resolution = resolve(kb, request_from_flags(kb, Flags(**flags), None), with_alternatives=False)
    assert resolution.stack is not None, flags
    return all_plans(resolution, kb)["pip"]


def requirements(text: str) -> list[str]:
    return [line for line in text.splitlines() if line and not line.startswith("#")]


@pytest.mark.parametrize("os_name", ["linux", "windows"])
@pytest.mark.parametrize("line", ["1.4", "1.5", "1.6", "1.7", "1.8", "1.9", "1.10"])
def test_tf_before_1_11_pins_h5py_below_3(kb, line, os_name):
    # TF 1.8 without h5py cannot save .h5; plain h5py installs 3.x and loading fails ('str' object has no
    # attribute 'decode'): the plan pins h5py<3 for every line before 1.11.
    assert "h5py<3" in requirements(pip_plan(kb, tf=line, os=os_name, cpu=True))


@pytest.mark.parametrize("os_name, venv_python", [("linux", ".venv/bin/python"), ("windows", r".venv\Scripts\python")])
def test_python_3_6_plans_upgrade_pip_first(kb, os_name, venv_python):
    # The venv's bundled pip 18.1 cannot install them (it compiles grpcio): pip < 22 is the newest for 3.6.
    text = pip_plan(kb, tf="1.12", os=os_name, cpu=True, python="3.6")
    instructions = [line for line in text.splitlines() if line.startswith("#   ")]
    assert f'{venv_python} -m pip install --upgrade "pip<22"' in instructions[0]
    assert instructions[-1].endswith(f"{venv_python} -m pip install -r requirements.txt")


@pytest.mark.parametrize("gpu", ["GTX 1080", None])
def test_windows_tf_2_2_has_no_redundant_estimator_pin(kb, gpu):
    # tensorflow 2.2.3's win_amd64 wheel requires tensorflow-estimator itself; tensorflow-gpu 2.2.3 requires
    # tensorflow-gpu-estimator (the same package folder): a second estimator pin only collides.
    flags = {"gpu": gpu} if gpu else {"cpu": True}
    lines = requirements(pip_plan(kb, tf="2.2", os="windows", **flags))
    assert not [l for l in lines if l.startswith("tensorflow-estimator")]


def test_and_cuda_2_20_installs_the_cuda_its_header_names(kb):
    # tensorflow[and-cuda]==2.20.0 asks for CUDA 12 wheels as ranges from 12.5; unpinned, pip took runtime 12.9.79
    # and cuDNN 9.28.0.42. The plan pins the range floors (TF's tested CUDA 12.5 / cuDNN 9.3) and says so.
    text = pip_plan(kb, tf="2.20", os="linux", gpu="RTX 3090")
    lines = requirements(text)
    assert lines[0] == "tensorflow[and-cuda]==2.20.0"
    assert "nvidia-cuda-runtime-cu12==12.5.82" in lines and "nvidia-cudnn-cu12==9.3.0.75" in lines
    header = text.splitlines()[1]
    assert "CUDA 12.5" in header and "cuDNN 9.3.0" in header
    # the driver floor follows the CUDA the plan installs: 12.5's (NVIDIA's Table 3: 555.42.02 on Linux)
    assert "driver >= 555.42.02" in header


def test_a_driver_ok_only_through_minor_version_compatibility_says_so():
    """K80 + TF 2.14 (CUDA 11.8, own minimum 520.61.05) on R470: the row must not read '>= 520.61.05 (470 installed,
    ok)'; it names the minor-version-compatibility floor it meets (450.80.02: CUDA 11.x, NVIDIA's CUDA
    compatibility guide)."""
    from click.testing import CliRunner

    from stackresolve.cli.app import app

    result = CliRunner().invoke(app, ["plan", "--no-detect", "--tf", "2.14", "--gpu", "Tesla K80", "--driver",
                                      "470.256.02", "--os", "linux"])
    row = next(line for line in result.output.splitlines() if line.lstrip().startswith("driver "))
    assert "470.256.02 installed, ok through minor-version compatibility (>= 450.80.02)" in row
