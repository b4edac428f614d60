"""NVIDIA's TensorFlow 1.15 builds as targets (issue 6), against NVIDIA's release notes.

Facts used (constraints/nvidia_tensorflow.toml, each record cites its page): release 21.10 needs "Driver release
470 or later" (TensorFlow 21.10 release notes), 21.11 needs 495; 20.10-20.12 need 455 and are the first on
CUDA 11.1, which targets compute capability 8.6; 20.06-20.09 use CUDA 11.0 (newest target 8.0); every release
supports compute capability 6.0 and later; the builds are Linux x86_64 only.
"""

import pytest
from click.testing import CliRunner

from stackresolve.cli import app
from stackresolve.knowledge.loader import knowledge
from stackresolve.resolve import resolve
from stackresolve.request import Flags, build_request


@pytest.fixture(scope="module")
def kb():
    return knowledge()


def plan(kb, **flags):
    return resolve(kb, build_request(kb, Flags(tf="1.15", **flags), None))


def test_rtx_3090_with_driver_470_gets_the_newest_build_that_470_runs(kb):
    resolution = plan(kb, os="linux", gpu="RTX 3090", driver="470.82.01")
    fw = resolution.stack.framework
    assert (fw.vendor, fw.pip_package, fw.version) == ("nvidia", "nvidia-tensorflow[horovod]", "1.15.5+nv21.10")
    assert resolution.stack.python.recommended == "3.8"
    assert resolution.stack.driver.minimum == "470"
    assert any(f.code == "nvidia-index" for f in resolution.findings)
    stock = [a for a in resolution.alternatives if a.stack.framework.vendor == "stock"]
    assert stock and "predates" in stock[0].why  # the stock wheel stays on offer, with its problem


def test_rtx_3090_with_driver_450_runs_the_cuda_11_0_build(kb):
    # Release 20.09 needs driver 450 and is built with CUDA 11.0 (NVIDIA's TF1 release notes); its sm_80 machine
    # code runs on compute capability 8.6 (binary compatibility within a major, CUDA C++ Programming Guide).
    resolution = plan(kb, os="linux", gpu="RTX 3090", driver="450.80.02")
    assert (resolution.stack.framework.vendor, resolution.stack.framework.vendor_release) == ("nvidia", "20.09")
    assert resolution.stack.gpu.support == "native"


def test_rtx_3090_with_driver_440_is_told_which_upgrade_opens_nvidias_build(kb):
    # R440 predates Ampere: NVIDIA's architecture matrix gives CUDA 11.0 as Ampere's first toolkit, whose Linux
    # driver is 450.51.05 (Table 3), so nothing runs on this driver; the nearest upgrade opens release 20.09
    # (driver 450, CUDA 11.0).
    resolution = plan(kb, os="linux", gpu="RTX 3090", driver="440.33")
    assert resolution.stack is None
    assert any("450.51.05" in f.message for f in resolution.findings)
    upgrade = [a for a in resolution.alternatives if "upgrade the driver" in a.why]
    assert upgrade and upgrade[0].request.driver == "450.51.05"
    assert upgrade[0].stack.framework.vendor_release == "20.09"


def test_gtx_1080_ti_keeps_the_stock_wheel(kb):
    # tensorflow-gpu 1.15 wheels carry sm_61 SASS (measured in the wheel): nothing to gain from NVIDIA's build.
    fw = plan(kb, os="linux", gpu="GTX 1080 Ti").stack.framework
    assert (fw.vendor, fw.pip_package) == ("stock", "tensorflow-gpu")


def test_windows_rtx_3080_is_pointed_to_wsl2_and_nvidias_build(kb):
    resolution = plan(kb, os="windows", gpu="RTX 3080")
    assert any(f.code == "nvidia-build-unfit" and "Linux x86_64 only" in f.message for f in resolution.findings)
    wsl = [a for a in resolution.alternatives if a.request.os == "wsl2"]
    assert wsl and wsl[0].stack.framework.vendor == "nvidia"


def test_vendor_flags_force_one_route(kb):
    assert plan(kb, os="linux", gpu="RTX 3090", vendor="stock").stack.framework.vendor == "stock"
    assert plan(kb, os="linux", gpu="GTX 1080 Ti", vendor="nvidia").stack.framework.vendor == "nvidia"


def test_nvidia_pip_and_dockerfile_plans():
    runner = CliRunner()
    args = ["plan", "--no-detect", "--tf", "1.15", "--os", "linux", "--gpu", "RTX 3090", "--driver", "470.82.01"]
    pip = runner.invoke(app, [*args, "--format", "pip"]).stdout
    assert "pip install nvidia-pyindex" in pip
    assert "nvidia-tensorflow[horovod]==1.15.5+nv21.10" in pip.splitlines()
    docker = runner.invoke(app, [*args, "--format", "dockerfile"]).stdout
    assert "FROM nvcr.io/nvidia/tensorflow:21.10-tf1-py3" in docker.splitlines()


def test_show_and_matrix_list_nvidia_builds_beside_stock():
    runner = CliRunner()
    assert "nvidia-tensorflow 1.15.5+nv21.10" in runner.invoke(app, ["show", "tf", "1.15"]).stdout
    rows = [l for l in runner.invoke(app, ["matrix", "--gpu", "RTX 3090", "--os", "linux"]).stdout.splitlines()
            if l.startswith("1.15 ")]
    assert len(rows) == 2 and "nvidia-tensorflow" in rows[0] and "tensorflow-gpu==1.15.5" in rows[1]


def test_vendor_nvidia_outside_tf_1_15_is_bad_input():
    result = CliRunner().invoke(app, ["plan", "--no-detect", "--tf", "2.10", "--vendor", "nvidia"])
    assert result.exit_code == 2 and "TensorFlow 1.15 only" in result.stderr
