"""The fleet reading AMD and Intel GPU nodes: AMD's node labeller (ROCm/k8s-device-plugin
cmd/k8s-node-labeller/main.go createLabels: one kind of GPU -> amd.com/gpu.device-id=<id>, several ->
amd.com/gpu.device-id.<id>=<count>, beta.amd.com/gpu.device-id.<id>=<count> always; README "Example result" for the
older beta-only labels), Intel's NFD rules (intel-device-plugins-for-kubernetes cmd/gpu_plugin/labels.md) and
detect reports with amd_gpus / intel_gpus. The label sets are constructed from those sources; the gfx targets
come from the injected AMD table (MI300X gfx942, MI250X gfx90a: AMD's compatibility matrix)."""

from __future__ import annotations

import importlib
import json

import pytest
from click.testing import CliRunner

from stackresolve.cli import app
from stackresolve.fleet.inventory import FleetInputError
from stackresolve.fleet.readers import read_document

TABLE = {"1002:74a1": ("AMD Instinct MI300X", "gfx942"), "1002:740c": ("AMD Instinct MI250X", "gfx90a"),
         "8086:56a0": ("Intel Arc A770", "arc-a")}
NVIDIA = {"nvidia.com/gpu.product": "Tesla-T4", "nvidia.com/gpu.compute.major": "7",
          "nvidia.com/gpu.compute.minor": "5", "nvidia.com/cuda.driver-version.full": "550.107.02"}
MI300X = {"amd.com/gpu.device-id": "74a1", "beta.amd.com/gpu.device-id": "74a1",
          "beta.amd.com/gpu.device-id.74a1": "8", "amd.com/gpu.product-name": "AMD_Instinct_MI300X",
          "amd.com/gpu.family": "AI", "amd.com/gpu.driver-version": "6.8.5"}


def nodes_doc(*labels_per_node: dict) -> str:
    items = [{"apiVersion": "v1", "kind": "Node", "metadata": {"name": f"n{i}", "labels": labels}}
             for i, labels in enumerate(labels_per_node)]
    return json.dumps({"apiVersion": "v1", "kind": "List", "items": items})


def no_nvidia(_name):
    return None


def read(*labels, lookup=TABLE.get):
    return read_document(nodes_doc(*labels), "nodes.json", no_nvidia, lookup)


def test_an_mi300x_node_of_the_amd_labeller():
    (m,) = read(MI300X)
    assert [(g.vendor, g.name, g.model, g.gfx, g.cc) for g in m.gpus] == [
        ("amd", "AMD Instinct MI300X", "AMD Instinct MI300X", "gfx942", None)]
    assert m.gpu_count == 8 and m.driver is None and m.notes == ()


def test_a_node_with_two_kinds_of_amd_gpu():
    (m,) = read({"amd.com/gpu.device-id.74a1": "4", "amd.com/gpu.device-id.740c": "4",
                 "beta.amd.com/gpu.device-id.74a1": "4", "beta.amd.com/gpu.device-id.740c": "4"})
    assert sorted((g.gfx, g.model) for g in m.gpus) == [("gfx90a", "AMD Instinct MI250X"),
                                                         ("gfx942", "AMD Instinct MI300X")]
    assert m.gpu_count == 8


def test_the_older_beta_labels_without_the_table():
    (m,) = read({"beta.amd.com/gpu.cu-count.64": "1", "beta.amd.com/gpu.device-id.6860": "1",
                 "beta.amd.com/gpu.family.AI": "1", "beta.amd.com/gpu.vram.16G": "1"}, lookup=None)
    assert [(g.vendor, g.name, g.gfx) for g in m.gpus] == [("amd", "AMD GPU 1002:6860", "")]
    assert "gfx target is unknown" in m.notes[0]


def test_intel_nodes():
    arc, flex = read({"gpu.intel.com/device-id.0300-56a0.present": "true",
                      "gpu.intel.com/device-id.0300-56a0.count": "1"},
                     {"gpu.intel.com/device-id.0380-56c0.count": "1", "gpu.intel.com/device.count": "1",
                      "gpu.intel.com/family": "Flex_Series", "gpu.intel.com/product": "Flex_170"})
    assert [(g.vendor, g.model, g.family) for g in arc.gpus] == [("intel", "Intel Arc A770", "arc-a")]
    assert [(g.vendor, g.name, g.family) for g in flex.gpus] == [("intel", "Flex 170", "data-center-flex")]
    assert (arc.gpu_count, flex.gpu_count) == (1, 1)


def test_nvidia_labels_win_over_amd_ones():
    (m,) = read({**NVIDIA, **MI300X})
    assert [g.vendor for g in m.gpus] == ["nvidia"]


@pytest.mark.parametrize("labels", [{"amd.com/gpu.device-id": "zz\x1b[31m"},
                                    {"amd.com/gpu.device-id.74a1": "many"},
                                    {"gpu.intel.com/device-id.0300-56a0.count": "-1"}])
def test_bad_labels_are_one_line_each(labels):
    with pytest.raises(FleetInputError) as exc:
        read(labels)
    (problem,) = exc.value.problems
    assert problem.startswith("nodes.json: node n0: ") and problem.isprintable()


def test_a_detect_report_of_an_amd_machine():
    doc = {"schema": "stackresolve/detect@1", "os": {"system": "linux", "wsl": False, "distro": "ubuntu",
                                                    "release": "24.04", "arch": "x86_64"},
           "driver": None, "gpus": [], "cuda_toolkits": [], "cudnn": [], "python": None, "frameworks": [],
           "findings": [], "amd_gpus": [{"index": 0, "gfx": "gfx1100", "source": "kfd-topology", "name": None,
                                         "pci_id": "1002:744c"}]}
    (m,) = read_document(json.dumps(doc), "ws-07.json", no_nvidia, TABLE.get)
    assert [(g.vendor, g.gfx, g.name) for g in m.gpus] == [("amd", "gfx1100", "AMD GPU 1002:744c")]
    doc["amd_gpus"][0]["gfx"] = "gfx\x1b[2J"
    with pytest.raises(FleetInputError):
        read_document(json.dumps(doc), "ws-07.json", no_nvidia, TABLE.get)


def test_plan_fleet_leaves_amd_groups_to_plan_on_their_own(tmp_path, monkeypatch):
    monkeypatch.setattr(importlib.import_module("stackresolve.cli.app"), "vendor_gpu", TABLE.get)
    doc = tmp_path / "nodes.json"
    doc.write_text(nodes_doc(NVIDIA, MI300X))
    result = CliRunner().invoke(app, ["plan", "--fleet", str(doc), "--torch", "latest", "--format", "json"])
    assert result.exit_code == 0, result.output
    fleet = json.loads(result.stdout)["fleet"]
    amd = next(g for g in fleet["groups"] if g["gpus"][0]["vendor"] == "amd")
    assert amd["gpus"] == [{"name": "AMD Instinct MI300X", "model": "AMD Instinct MI300X",
                            "compute_capability": None, "vendor": "amd", "gfx": "gfx942", "family": None}]
    assert amd["stack"] is None
    (excluded,) = fleet["excluded"]
    assert "gfx942" in excluded["reason"] and "--gpu-gfx gfx942" in excluded["reason"]
    text = CliRunner().invoke(app, ["plan", "--fleet", str(doc), "--torch", "latest"]).stdout
    assert "AMD Instinct MI300X (gfx942)" in text
