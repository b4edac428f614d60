"""Facts behind the plans (issue 21), each expected value from its source:

- the driver floor is the GPU's compute capability's first toolkit: sm_86 came with CUDA 11.1, whose driver is
  455.23 on Linux and 456.38 on Windows (CUDA 11.1 release notes, Table 3); sm_80 with CUDA 11.0 (450.51.05);
- Kepler's last driver branch is R470 (NVIDIA's CUDA Toolkit, Driver and Architecture Matrix; 470.256.02 is the
  latest legacy 470.xx driver, nvidia.com/en-us/drivers/unix): TF 2.12 and 2.14 carry sm_35/sm_37 SASS, so with no
  driver given the plan is for R470 through minor-version compatibility (CUDA 11.x >= 450.80.02, Table 2);
- NVIDIA's 1.15 release 21.10 was built with cuDNN 8.2.4 and loads cuDNN 8.x >= 8.2 (TensorFlow's
  IsSourceCompatibleWithCudnnLibrary); conda-forge's cudnn for CUDA 11.x has 8.2.1 (conda.toml), so the decision
  and the conda file both say 8.2.1.
"""

import pytest
import yaml

from stackresolve.emit import render_plan
from stackresolve.knowledge.loader import knowledge
from stackresolve.request import Flags, build_request
from stackresolve.resolve import resolve


@pytest.fixture(scope="module")
def kb():
    return knowledge()


def resolved(kb, **flags):
    return resolve(kb, build_request(kb, Flags(**flags), None))


@pytest.mark.parametrize("gpu, os_name, floor", [
    ("GeForce RTX 3090", "linux", "455.23"),
    ("GeForce RTX 3090", "windows", "456.38"),
    ("A100", "linux", "450.51.05"),
])
def test_the_driver_floor_is_the_compute_capabilitys_first_toolkit(kb, gpu, os_name, floor):
    stack = resolved(kb, tf="2.4", os=os_name, gpu=gpu).stack  # TF 2.4: CUDA 11.0
    assert stack.driver.minimum == floor
    assert "CUDA 11.1" in stack.driver.why if floor != "450.51.05" else "CUDA 11.0" in stack.driver.why


@pytest.mark.parametrize("line", ["2.12", "2.14"])
def test_kepler_without_a_driver_is_planned_for_r470(kb, line):
    resolution = resolved(kb, tf=line, os="linux", gpu_cc="3.7")
    assert resolution.status == "warning" and resolution.stack is not None
    assert resolution.stack.cuda.version == "11.8"
    assert resolution.stack.driver.minimum == "450.80.02" and resolution.stack.driver.max_branch == 470
    finding = next(f for f in resolution.findings if f.code == "driver-newest-branch")
    assert "R470" in finding.message and "470.256.02" in finding.fix
    # the same stack as with the R470 driver named
    named = resolved(kb, tf=line, os="linux", gpu_cc="3.7", driver="470.256.02").stack
    assert named.framework.requirement == resolution.stack.framework.requirement


def test_nvidia_1_15_conda_installs_the_decided_cudnn(kb):
    resolution = resolved(kb, tf="1.15", os="linux", gpu_cc="8.6", driver="470.82.01")
    stack = resolution.stack
    assert stack.framework.vendor.value == "nvidia" and stack.cuda.version == "11.4"
    assert stack.cudnn.compiled.startswith("8.2")
    text = render_plan("conda", resolution, kb)
    specs = [d for d in yaml.safe_load(text)["dependencies"] if isinstance(d, str)]
    assert f"cudnn={stack.cudnn.version}" in specs and stack.cudnn.version == "8.2.1"
    assert "substitute" not in text
