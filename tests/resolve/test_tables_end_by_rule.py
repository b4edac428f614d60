"""Issue 31 items 3-5 and issue 32 item 1: where the tables end, the rules decide.

- a well-formed compute capability no table lists (10.7, 13.0) is planned, with a warning naming the rule that
  decided (CUDA C++ Programming Guide, Binary Compatibility / PTX Compatibility);
- a driver given as a branch (--driver 525) stands for its releases: planned with the release inside the branch
  the stack needs named, never "upgrade to 525.60.13" (JAX's install guide: CUDA 12 wheels need >= 525.60.13);
- a Linux driver on a branch past its end of life (NVIDIA's data-center lifecycle table, v620 edition) warns and
  names the supported branches; a branch newer than every listed one is planned by its number, with a warning;
- the facts of 2026-11-28: cuDNN 9.28.1, CUDA 13.4.3 and 13.5, R615/R620, NVIDIA's TF1 builds unmaintained;
- `show cuda|cudnn|driver|gpu`, text and JSON (the conftest validates each JSON document against its schema).
Expected values come from the primary sources cited in constraints/ (each test names the one it relies on).
"""

from __future__ import annotations

import json

import pytest
from click.testing import CliRunner

from stackresolve.cli import app
from stackresolve.knowledge.loader import knowledge
from stackresolve.knowledge.rules import (
    branch_lifecycle,
    branch_release_needed,
    driver_meets,
    unlisted_cc_rule,
)
from stackresolve.model.values import ComputeCapability


@pytest.fixture(scope="module")
def kb():
    return knowledge()


def run(*args):
    return CliRunner().invoke(app, list(args))


def plan_json(*args):
    result = run("plan", "--no-detect", "--os", "linux", "--format", "json", *args)
    assert result.exit_code in (0, 1), result.output
    return result.exit_code, json.loads(result.stdout)


def codes(doc) -> dict:
    return {f["code"]: f for f in doc["findings"]}


# -- compute capabilities no table lists ---------------------------------------------------------------------
def test_unlisted_cc_within_a_known_major_runs_sm_100_machine_code():
    # PyTorch's cu13x wheels carry sm_100 SASS; 10.7 runs it by the minor-version rule within major 10
    code, doc = plan_json("--torch", "latest", "--gpu-cc", "10.7")
    assert code == 0 and doc["stack"]["gpu"]["support"] == "native"
    warning = codes(doc)["gpu-unlisted"]
    assert warning["severity"] == "warning"
    assert "binary compatibility within major 10" in warning["message"] and "sm_100" in warning["message"]


def test_unlisted_major_runs_only_ptx():
    # No architecture of major 13 is known: only PTX (JAX's wheels carry compute_120), JIT-compiled forward
    code, doc = plan_json("--jax", "latest", "--gpu-cc", "13.0")
    assert code == 0 and doc["stack"]["gpu"]["support"] == "ptx-jit"
    assert "PTX JIT" in codes(doc)["gpu-unlisted"]["message"]


def test_listed_cc_has_no_unlisted_warning():
    _, doc = plan_json("--torch", "latest", "--gpu-cc", "8.6")
    assert "gpu-unlisted" not in codes(doc)


def test_malformed_cc_is_still_bad_input():
    result = run("plan", "--no-detect", "--gpu-cc", "8.12")
    assert result.exit_code == 2 and "not a compute capability" in result.stderr


def test_unlisted_cc_rule_words():
    listed = [ComputeCapability.parse(c) for c in ("9.0", "10.0", "10.3", "12.0")]
    assert "binary compatibility within major 10" in unlisted_cc_rule(ComputeCapability(10, 7), listed)
    assert unlisted_cc_rule(ComputeCapability(13, 0), listed).startswith("PTX JIT")


# -- a driver given as a branch ----------------------------------------------------------------------------------
def test_driver_meets_treats_a_branch_as_its_releases():
    assert driver_meets("525", "525.60.13") and driver_meets("525", "470.57.02")
    assert not driver_meets("525", "530.30.02")
    assert not driver_meets("525.60.11", "525.60.13") and driver_meets("525.60.13", "525.60.13")
    assert branch_release_needed("525", "525.60.13") == "525.60.13"
    assert branch_release_needed("525", "470.57.02") is None and branch_release_needed("525.85", "525.60.13") is None


def test_jax_on_a100_with_branch_525_is_planned_naming_the_release():
    # issue 32: JAX's CUDA 12 wheels need >= 525.60.13 (JAX install guide; CUDA Table 2), inside R525
    code, doc = plan_json("--jax", "latest", "--gpu", "A100", "--driver", "525")
    assert code == 0 and doc["status"] != "impossible"
    assert doc["stack"]["driver"]["ok"] is True
    message = codes(doc)["driver-branch-release"]["message"]
    assert "525.60.13" in message and "R525" in message
    assert not any("upgrade the driver to 525.60.13" in a["why"] for a in doc["alternatives"])


def test_a_branch_meets_a_minor_version_compatibility_floor_inside_it_as_its_releases_do():
    # TF 2.21's CUDA 12.5 wheels run on a driver older than 12.5's own 555.42.02 through NVIDIA's minor-version
    # compatibility (>= 525.60.13, CUDA release notes Table 2). 525.147.05 gets them; R525 stands for its releases
    # (rules.driver_meets), so it gets the same stack, with the release named, not TF 2.14 on CUDA 11.8.
    plans = {d: plan_json("--tf", "latest", "--gpu-cc", "8.0", "--python", "3.11", "--driver", d)[1]
             for d in ("525", "525.147.05")}
    versions = {d: doc["stack"]["framework"]["version"] for d, doc in plans.items()}
    assert versions["525"] == versions["525.147.05"], versions
    assert "525.60.13" in codes(plans["525"])["driver-branch-release"]["message"]


# -- the lifecycle table ---------------------------------------------------------------------------------------
def test_branch_lifecycle_on_the_data_date(kb):
    # v620 edition of NVIDIA's table: R620 LTSB to 2029-09, R580 LTSB to 2028-06; R535 ended 2026-06
    assert branch_lifecycle(kb.driver_branches, 535, "2026-11-28")[0] == "end-of-life"
    assert branch_lifecycle(kb.driver_branches, 610, "2026-11-28")[0] == "end-of-life"
    assert branch_lifecycle(kb.driver_branches, 580, "2026-11-28")[0] == "supported"
    assert branch_lifecycle(kb.driver_branches, 535, "2026-05-01")[0] == "supported"
    assert branch_lifecycle(kb.driver_branches, 630, "2026-11-28")[0] == "newer"
    assert branch_lifecycle(kb.driver_branches, 525, "2026-11-28")[0] == "unlisted-older"


def test_a_plan_on_an_ended_branch_warns_and_names_the_supported_ones():
    _, doc = plan_json("--torch", "latest", "--gpu-cc", "8.6", "--driver", "535.104.05")
    eol = codes(doc)["driver-branch-eol"]
    assert eol["severity"] == "warning" and "2026-06" in eol["message"]
    assert "R620" in eol["fix"] and "R580" in eol["fix"]


def test_windows_driver_numbers_are_not_judged_by_the_linux_table():
    result = run("plan", "--no-detect", "--os", "windows", "--format", "json", "--torch", "latest",
                 "--gpu-cc", "8.6", "--driver", "536.25")
    doc = json.loads(result.stdout)
    assert not {"driver-branch-eol", "driver-branch-unlisted"} & set(codes(doc))


def test_a_branch_newer_than_the_table_is_planned_by_its_number():
    code, doc = plan_json("--torch", "latest", "--gpu-cc", "8.6", "--driver", "630")
    assert code == 0
    warning = codes(doc)["driver-branch-unlisted"]
    assert warning["severity"] == "warning" and "R620" in warning["message"]


# -- the facts of 2026-11-28 -------------------------------------------------------------------------------------
def test_new_cudnn_and_cuda_releases_are_known(kb):
    # package index: nvidia-cudnn-cu13 9.28.1.4 (no cu12 wheel), cuda-toolkit 13.4.3 and 13.5.0
    cudnn = next(r for r in kb.cudnn if r.version == "9.28.1")
    assert cudnn.extra["pip"] == ["nvidia-cudnn-cu13==9.28.1.4"]
    assert "13.4.3" in kb.toolkit("13.4").releases
    cuda = kb.toolkit("13.5")
    assert cuda.releases == ("13.5.0",) and cuda.compat_driver_linux == "580"
    result = run("plan", "--no-detect", "--cudnn", "9.28.1")
    assert result.exit_code != 2, result.output


def test_driver_branches_615_and_620(kb):
    assert kb.driver_branch(620).designation == "LTSB" and kb.driver_branch(620).end_of_life == "2029-09"
    assert kb.driver_branch(615).designation == "NFB"


def test_nvidia_tf1_builds_are_said_to_be_unmaintained(kb):
    # NVIDIA/tensorflow README: deprecated as of 07/31/2025; release 23.03 was the last
    assert kb.nvidia_project.maintained is False and kb.nvidia_project.last_release == "23.03"
    _, doc = plan_json("--tf", "1.15", "--gpu", "RTX 3090")
    warning = codes(doc)["nvidia-build-unmaintained"]
    assert "23.03" in warning["message"] and "2025-07-31" in warning["message"]


# -- show for every kind -----------------------------------------------------------------------------------------
@pytest.mark.parametrize("kind, value, expected", [
    ("cuda", "13.5", "CUDA 13.5"),
    ("cudnn", "9.28.1", "cuDNN 9.28.1"),
    ("driver", "580", "R580"),
    ("gpu", "RTX 5090", "compute capability 12.0"),
    ("gpu", "12.0", "compute capability 12.0"),
    ("gpu", "10.7", "planned by rule"),
])
def test_show_every_kind(kind, value, expected):
    text = run("show", kind, value)
    assert text.exit_code == 0, text.output
    assert expected in text.stdout and "data read: " in text.stdout
    doc = run("show", kind, value, "--format", "json")
    assert doc.exit_code == 0, doc.output
    data = json.loads(doc.stdout)
    assert data["schema"] == f"stackresolve/show-{kind}@1" and data["fetched"]


def test_show_gpu_older_than_every_listed_architecture_gets_no_ptx_promise():
    # PTX is JIT-compiled for its own target architecture or a newer one (CUDA C++ Programming Guide, Application
    # Compatibility), so it never reaches a GPU older than every listed one; the plan refuses such a GPU too.
    text = run("show", "gpu", "0.5").stdout
    assert "run on it only through PTX" not in text and "older than every architecture the tables list" in text
    assert "no GPU code" in text


def test_show_driver_json_facts():
    data = json.loads(run("show", "driver", "535", "--format", "json").stdout)
    assert data["lifecycle"]["state"] == "end-of-life" and data["lifecycle"]["end_of_life"] == "2026-06"
    lines = {c["version"]: c["how"] for c in data["cuda"]}
    assert lines["12.2"] == "own-minimum" and lines["12.4"] == "minor-version-compatibility"
    assert "13.0" not in lines


@pytest.mark.parametrize("kind, value", [("cuda", "14.0"), ("cudnn", "9.99"), ("driver", "1.2"), ("gpu", "8.12"),
                                         ("gpu", "GTX 1080 Tie")])
def test_show_bad_input_is_one_line_exit_2(kind, value):
    result = run("show", kind, value)
    assert result.exit_code == 2 and len(result.stderr.strip().splitlines()) == 1


def test_a_detected_gpu_no_table_names_is_planned_by_rule(kb):
    # what detect hands over for a GPU whose name and PCI id no table knows: NVML's compute capability
    from stackresolve.model.machine import DriverInfo, GpuInfo, Machine, OSInfo
    from stackresolve.request.parse import Flags, request_from_flags
    from stackresolve.resolve import resolve

    machine = Machine(os=OSInfo(system="linux"), driver=DriverInfo("615.71.09", "13.4", "nvml"),
                      gpus=(GpuInfo(0, "NVIDIA Next-Gen Board", "10.7", 196608, "nvml", "nvml"),))
    request = request_from_flags(kb, Flags(torch="latest"), machine)
    assert [str(g.cc) for g in request.gpus] == ["10.7"]
    resolution = resolve(kb, request)
    assert resolution.stack is not None
    assert any(f.code == "gpu-unlisted" for f in resolution.findings)


def test_a_branch_with_nvidias_tf1_builds_reads_their_forward_compatible_branches():
    # NVIDIA's TF 1.15 builds carry a tuple of forward-compatible branches (NvidiaBuildDriver), not one floor: the
    # branch candidate reads both kinds (it raised AttributeError on the tuple: the site's unlisted drivers hit it)
    code, doc = plan_json("--tf", "1.15", "--gpu", "A100", "--driver", "450")
    assert doc["status"] in ("ok", "warning", "impossible")
