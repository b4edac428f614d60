"""NVIDIA's TensorFlow 1.15 builds as targets (issue 6), against NVIDIA's release notes.

Facts used (constraints/nvidia_tensorflow.toml, each record cites its page): release 21.10 needs "Driver release
470 or later" (TensorFlow 21.10 release notes), 21.11 needs 495; 20.10-20.12 need 455 and are the first on
CUDA 11.1, which targets compute capability 8.6; 20.06-20.09 use CUDA 11.0 (newest target 8.0); every release
supports compute capability 6.0 and later; the builds are Linux x86_64 only.
"""

import pytest
from click.testing import CliRunner

from stackresolve.cli import app
from stackresolve.resolve import resolve
from stackresolve.request.parse import Flags, request_from_flags



def plan(kb, **flags):
    return resolve(kb, request_from_flags(kb, Flags(tf="1.15", **flags), None))


def test_rtx_3090_with_driver_470_gets_the_newest_build_that_470_runs(kb):
    resolution = plan(kb, os="linux", gpu="RTX 3090", driver="470.82.01")
    fw = resolution.stack.framework
    assert (fw.vendor, fw.pip_package, fw.version) == ("nvidia", "nvidia-tensorflow[horovod]", "1.15.5+nv21.10")
    assert resolution.stack.python.recommended == "3.8"
    assert resolution.stack.driver.minimum == "470"
    assert any(f.code == "nvidia-index" for f in resolution.findings)
    stock = [a for a in resolution.alternatives if a.stack.framework.vendor == "stock"]
    assert stock and "predates" in stock[0].why  # the stock wheel stays on offer, with its problem


def test_rtx_3090_with_driver_455_runs_nvidias_build(kb):
    # sm_86 first came with CUDA 11.1, whose Linux driver is 455.23 (CUDA 11.1 release notes, Table 3); release
    # 20.12 (driver 455, CUDA 11.1) is the first NVIDIA build with machine code for it.
    resolution = plan(kb, os="linux", gpu="RTX 3090", driver="455.32.00")
    assert (resolution.stack.framework.vendor, resolution.stack.framework.vendor_release) == ("nvidia", "20.12")
    assert resolution.stack.gpu.support == "native"


@pytest.mark.parametrize("driver", ["440.33", "450.80.02"])
def test_rtx_3090_with_an_older_driver_is_told_which_upgrade_opens_nvidias_build(kb, driver):
    # R440 and R450 predate sm_86 (CUDA 11.0 has no sm_86; 11.1 brought it with driver 455.23, Table 3): nothing
    # runs on this driver; the nearest upgrade, to 455.23, opens release 20.12.
    resolution = plan(kb, os="linux", gpu="RTX 3090", driver=driver)
    assert resolution.stack is None
    assert any("455.23" in f.message for f in resolution.findings)
    upgrade = [a for a in resolution.alternatives if "upgrade the driver" in a.why]
    assert upgrade and str(upgrade[0].request.driver) == "455.23"
    assert upgrade[0].stack.framework.vendor_release == "20.12"


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
    # NVIDIA's index named directly (nvidia-pyindex 1.0.9: edit_pip_configuration.py NVIDIA_PyPI_SERVERS), first
    lines = [line for line in pip.splitlines() if line and not line.startswith("#")]
    assert lines[:2] == ["--extra-index-url https://pypi.ngc.nvidia.com", "nvidia-tensorflow[horovod]==1.15.5+nv21.10"]
    assert "pip install nvidia-pyindex" not in pip
    assert "--index-strategy unsafe-best-match" in pip
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
