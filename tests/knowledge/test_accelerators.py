"""constraints/amd.toml and intel.toml: loaded, validated (one line naming the file), snapshotted, queried.

Facts asserted about the shipped files are those AMD's and PyTorch's own pages give (the shipped files cite them):
MI300X gfx942, MI250X gfx90a, RX 7900 XTX gfx1100 (AMD's ROCm system requirements, "LLVM target"); RX 580 gfx803
(LLVM's AMDGPUUsage processor table); torch 1.13 -> rocm5.2 and 2.0 -> rocm5.4.2 (pytorch.org previous versions:
`--extra-index-url .../whl/rocm5.2`, `--index-url .../whl/rocm5.4.2`)."""

import pytest
from packaging.version import Version

from stackresolve.detect.amd import gfx_target as gfx_from_kfd  # the one reading of KFD's number (detect)
from stackresolve.knowledge.accelerators import build_accelerators, parse_amd, parse_intel
from stackresolve.knowledge.fields import KnowledgeError
from stackresolve.knowledge.loader import read_toml


def test_amd_gpus_by_name_alias_and_pci_id(kb):
    amd = kb.accelerators
    assert amd.find_amd_gpu("MI300X").gfx == "gfx942"
    assert amd.find_amd_gpu("instinct mi250x").gfx == "gfx90a"
    assert amd.find_amd_gpu("RX 7900 XTX").gfx == "gfx1100"
    assert amd.find_amd_gpu("Radeon RX 580").gfx == "gfx803"
    assert amd.amd_gpu_by_pci("74A1").name == amd.find_amd_gpu("MI300X").name
    assert amd.find_intel_gpu("Arc A770").family == "arc-a"


def test_torch_rocm_variants_per_release(kb):
    amd = kb.accelerators
    assert amd.torch_rocm_of("1.13.1")[0].name == "rocm5.2"
    assert amd.torch_rocm_of("2.0.1")[0].name == "rocm5.4.2"
    # Polaris (gfx803) left PyTorch's ROCm wheels with 1.11 (builder's build_docker.sh: gfx900;gfx906;gfx908...)
    assert all("gfx803" not in v.gfx for v in amd.torch_rocm if Version(v.releases[0]) >= Version("1.11"))


def test_kfd_gfx_target_version_is_read_as_llvm_target():
    # KFD topology: gfx_target_version = major*10000 + minor*100 + stepping (minor, stepping hex digits in LLVM)
    assert gfx_from_kfd(90402) == "gfx942"
    assert gfx_from_kfd(90010) == "gfx90a"
    assert gfx_from_kfd(100300) == "gfx1030"
    assert gfx_from_kfd(110000) == "gfx1100"


def _amd(**gpu):
    record = {"name": "X", "gfx": "gfx942", "architecture": "CDNA3", "segment": "instinct", "pci_ids": [],
              "aliases": ["X1"], "source": "s", "note": ""}
    record.update(gpu)
    return {"generated": "2026-11-29", "gpu": [record]}


@pytest.mark.parametrize("change, words", [
    ({"gfx": "942"}, "`gfx` = '942' does not have the documented form"),
    ({"architecture": "Vega"}, "`architecture` = 'Vega' must be one of"),
    ({"pci_ids": ["74A1"]}, "`pci_ids` item '74A1'"),
    ({"source": ""}, "record has no `source`"),
])
def test_a_malformed_amd_record_is_one_line_naming_the_file(change, words):
    with pytest.raises(KnowledgeError) as info:
        parse_amd(_amd(**change))
    assert str(info.value).startswith("amd.toml [[gpu]] #1: ") and words in str(info.value)
    assert "\n" not in str(info.value)


def test_aliases_must_be_unique_and_generated_given():
    doc = _amd()
    doc["gpu"].append(dict(doc["gpu"][0], name="Y", aliases=["x1"]))
    with pytest.raises(KnowledgeError, match="amd.toml: alias 'x1' names both 'X' and 'Y'"):
        parse_amd(doc)
    with pytest.raises(KnowledgeError, match="amd.toml: missing `generated"):
        parse_amd({"gpu": []})


def test_a_rocm_variant_name_must_match_its_rocm():
    doc = {"generated": "2026-11-29", "torch_rocm": [{
        "releases": ["2.0.1"], "name": "rocm5.4", "rocm": "5.4.2", "gfx": ["gfx90a"], "arch_basis": "docs",
        "python": ["3.10"], "index_url": "https://download.pytorch.org/whl/rocm5.4", "source": "s", "note": ""}]}
    with pytest.raises(KnowledgeError, match=r"amd.toml \[\[torch_rocm\]\] #1: `name` = 'rocm5.4' must be"):
        parse_amd(doc)


def test_an_intel_family_outside_the_documented_ones_is_refused():
    doc = {"generated": "2026-11-29", "torch_xpu": [{
        "releases": ["2.5.1"], "name": "xpu", "platforms": ["linux"], "families": ["arc-z"], "os": [],
        "python": ["3.10"], "runtime": "separate", "driver": "d", "index_url": "https://download.pytorch.org/whl/xpu",
        "source": "s", "note": ""}]}
    with pytest.raises(KnowledgeError, match=r"intel.toml \[\[torch_xpu\]\] #1: `families` item 'arc-z'"):
        parse_intel(doc)


def test_shipped_files_parse_and_every_record_cites_a_source():
    docs = {name: read_toml(name)[0] for name in ("amd.toml", "intel.toml")}
    knowledge = build_accelerators(docs)
    assert knowledge.amd_generated and knowledge.intel_generated
    for rec in (*knowledge.amd_gpus, *knowledge.rocm_releases, *knowledge.torch_rocm, *knowledge.gfx_overrides,
                *knowledge.intel_gpus, *knowledge.torch_xpu):
        assert rec.source.strip()
