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

from stackresolve.formats.render import render_plan
from stackresolve.request.parse import Flags, request_from_flags
from stackresolve.resolve import resolve



def resolved(kb, **flags):
    return resolve(kb, request_from_flags(kb, Flags(**flags), None))


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


# -- facts corrected -----------------------------------------------------------------------------------------
def test_no_jax_metal_where_jaxs_guide_says_mac_gpus_are_unsupported(kb):
    # jax-ml/jax:docs/installation.md from jax-v0.9.1: "JAX is not supported on Mac/OSX GPU"; jax-metal 0.1.1's own
    # requirement (jax>=0.4.34) would still admit the release
    new = resolved(kb, jax="latest", os="macos", arch="arm64", gpu="Apple M2")
    text = " ".join(f.message for f in new.findings)
    assert "jax-metal==" not in text and "Mac GPUs are not supported" in text
    old = resolved(kb, jax="0.4.35", os="macos", arch="arm64", gpu="Apple M2")
    assert "add jax-metal==0.1.1" in " ".join(f.message for f in old.findings)


def test_an_architecture_list_nobody_read_is_a_warning_not_ok(kb):
    # torch 2.6/2.7 cu118: pytorch.toml records its sm list as "not verified" (no build script read at the tag)
    resolution = resolved(kb, torch="2.6", os="linux", gpu="Tesla K80")
    assert resolution.stack.framework.variant == "cu118"
    assert resolution.status == "warning"
    finding = next(f for f in resolution.findings if f.code == "arch-not-verified")
    assert "sm_37" in finding.message and "get_arch_list" in finding.fix
    assert not any("come from not verified" in f.message for f in resolution.findings)


def test_other_routes_to_a_native_stack_are_not_called_native(kb):
    from stackresolve.formats.render import render_plan

    text = render_plan("text", resolved(kb, tf="1.15", os="linux", gpu="GeForce RTX 3090"), kb)
    # the stock 1.15.5 wheel is listed as another route, and its own reason says PTX only
    assert "Nearest stacks that run natively" not in text and "Other stacks for this request" in text
    degraded = render_plan("text", resolved(kb, tf="1.15", os="linux", gpu="GeForce RTX 3090", vendor="stock"), kb)
    assert "Nearest stacks that run natively" in degraded


def test_the_text_plan_prints_each_source_once_and_keeps_every_fact(kb):
    from stackresolve.formats.render import render_plan
    from stackresolve.formats.text_render import split_sources

    resolution = resolved(kb, tf="1.15", os="linux", gpu="GeForce RTX 3090", driver="470.82.01")
    text = render_plan("text", resolution, kb)
    listed = [line.split("] ", 1)[1] for line in text.split("\nSources\n")[1].splitlines() if line.strip()]
    assert len(listed) == len(set(listed))
    for part in listed:
        assert text.count(part) == 1, part
    stack = resolution.stack
    facts = [p for p in (stack.framework, stack.python, stack.cuda, stack.cudnn, stack.driver, stack.gpu)]
    for fact in facts:
        assert fact.why in text
        assert all(part in listed for part in split_sources(fact.source))
    for finding in resolution.findings:
        assert finding.message in text
        assert all(part in listed for part in split_sources(finding.source))
