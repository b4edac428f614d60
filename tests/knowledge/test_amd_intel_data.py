"""constraints/amd.toml and intel.toml (issue 36), read as plain TOML: their shape, and facts checked against the
primary sources their records cite (AMD's hardware table and compatibility matrix, PyTorch's install pages and build
matrices). The typed loader has its own tests; these hold for the data whatever reads it."""

import re
import tomllib
from pathlib import Path

import pytest
from packaging.version import InvalidVersion, Version

from stackresolve.knowledge.base import normalize_gpu_name
from stackresolve.knowledge.loader import constraints_dir

GFX = re.compile(r"gfx[0-9a-f]+")
PCI_DEVICE = re.compile(r"[0-9a-f]{4}")
DATE = re.compile(r"\d{4}-\d{2}-\d{2}")
PYTHON = re.compile(r"3\.\d+")
OS_ID = re.compile(r"[a-z]+-\d+(\.\d+)?")
ARCH_BASIS = {"measured", "build-script", "docs", "not verified"}
AMD_ARCHITECTURES = {"GCN3.0", "GCN4.0", "GCN5.0", "GCN5.1", "CDNA", "CDNA2", "CDNA3", "CDNA4",
                     "RDNA", "RDNA2", "RDNA3", "RDNA4"}
AMD_SEGMENTS = {"instinct", "radeon-pro", "radeon"}
INTEL_FAMILIES = {"arc-a", "arc-b", "data-center-max", "data-center-flex", "core-ultra"}
INTEL_ARCHITECTURES = {"Xe-HPG", "Xe-HPC", "Xe-LPG", "Xe2", "Xe3"}


def load(name):
    with open(Path(constraints_dir()) / name, "rb") as handle:
        return tomllib.load(handle)


AMD = load("amd.toml")
INTEL = load("intel.toml")
NVIDIA = load("gpus.toml")


def version(text):
    try:
        return Version(text)
    except InvalidVersion:
        pytest.fail(f"not a version: {text!r}")


def gpu(doc, alias):
    hits = [g for g in doc["gpu"] if alias.casefold() in {a.casefold() for a in g["aliases"]}]
    assert len(hits) == 1, f"{alias}: {len(hits)} records"
    return hits[0]


def variants_of(release):
    return [t for t in AMD["torch_rocm"] if release in t["releases"]]


def newest(variants):
    return max(variants, key=lambda t: version(t["rocm"]))


# ---------------------------------------------------------------- shape

@pytest.mark.parametrize("doc", [AMD, INTEL], ids=["amd", "intel"])
def test_generated_date_and_every_record_sourced(doc):
    assert DATE.fullmatch(doc["generated"])
    for table, rows in doc.items():
        if table == "generated":
            continue
        assert rows, f"[[{table}]] is empty"
        for row in rows:
            assert isinstance(row["source"], str) and row["source"].strip(), row
            assert isinstance(row["note"], str), row


def test_amd_gpu_records():
    names = set()
    for g in AMD["gpu"]:
        assert set(g) == {"name", "gfx", "architecture", "segment", "pci_ids", "aliases", "source", "note"}, g["name"]
        assert g["name"] not in names
        names.add(g["name"])
        assert GFX.fullmatch(g["gfx"]), g
        assert g["architecture"] in AMD_ARCHITECTURES, g
        assert g["segment"] in AMD_SEGMENTS, g
        assert all(PCI_DEVICE.fullmatch(p) for p in g["pci_ids"]), g
        assert g["aliases"] and all(a.strip() == a and a for a in g["aliases"]), g


def test_intel_gpu_records():
    for g in INTEL["gpu"]:
        assert set(g) == {"name", "family", "architecture", "pci_ids", "aliases", "source", "note"}, g["name"]
        assert g["family"] in INTEL_FAMILIES, g
        assert g["architecture"] in INTEL_ARCHITECTURES, g
        assert all(PCI_DEVICE.fullmatch(p) for p in g["pci_ids"]), g
        assert g["aliases"], g


def test_aliases_unique_across_amd_and_intel_and_apart_from_nvidia():
    seen = {}
    for vendor, doc in (("amd", AMD), ("intel", INTEL)):
        for g in doc["gpu"]:
            for key in {normalize_gpu_name(n) for n in [g["name"], *g["aliases"]]}:
                assert key not in seen or seen[key] == g["name"], f"{key!r}: {seen.get(key)} and {g['name']}"
                seen[key] = g["name"]
    nvidia = {normalize_gpu_name(n) for g in NVIDIA["gpu"] for n in [g["name"], *g["aliases"]]}
    assert not nvidia & set(seen), sorted(nvidia & set(seen))


@pytest.mark.parametrize("doc", [AMD, INTEL], ids=["amd", "intel"])
def test_pci_ids_unique(doc):
    ids = [p for g in doc["gpu"] for p in g["pci_ids"]]
    assert len(ids) == len(set(ids)), sorted({p for p in ids if ids.count(p) > 1})


def test_rocm_records():
    versions = [r["version"] for r in AMD["rocm"]]
    assert len(versions) == len(set(versions))
    for r in AMD["rocm"]:
        version(r["version"])
        assert r["released"] == "" or DATE.fullmatch(r["released"]), r
        assert r["gfx"] and all(GFX.fullmatch(x) for x in r["gfx"]), r
        assert r["os"] and all(OS_ID.fullmatch(o) for o in r["os"]), r
        assert all(re.fullmatch(r"\d+\.\d+", k) for k in r["kernels"]), r


def test_torch_rocm_records():
    seen = set()
    for t in AMD["torch_rocm"]:
        assert t["releases"] and all(version(v) for v in t["releases"]), t
        assert t["name"] == "rocm" + t["rocm"], t
        version(t["rocm"])
        assert all(GFX.fullmatch(x) for x in t["gfx"]), t
        assert t["arch_basis"] in ARCH_BASIS, t
        assert bool(t["gfx"]) == (t["arch_basis"] != "not verified"), t
        assert t["python"] and all(PYTHON.fullmatch(p) for p in t["python"]), t
        assert t["index_url"].startswith("https://download.pytorch.org/whl/"), t
        for release in t["releases"]:
            assert (release, t["name"]) not in seen, (release, t["name"])
            seen.add((release, t["name"]))


def test_torch_rocm_releases_are_torch_releases():
    known = {r["version"] for r in load("pytorch.toml")["release"]}
    listed = {v for t in AMD["torch_rocm"] for v in t["releases"]} | {v for t in INTEL["torch_xpu"] for v in t["releases"]}
    assert listed <= known, sorted(listed - known)


def test_every_gfx_in_wheels_and_rocm_releases_is_a_known_target():
    known = {g["gfx"] for g in AMD["gpu"]} | {x for o in AMD["gfx_override"] for x in o["gfx"]}
    # APU targets the wheels carry that no GPU record here names (LLVM's processor table: Radeon 890M / 8060S).
    known |= {"gfx1150", "gfx1151"}
    used = {x for t in AMD["torch_rocm"] for x in t["gfx"]} | {x for r in AMD["rocm"] for x in r["gfx"]}
    assert used <= known, sorted(used - known)


def test_overrides_are_unofficial_and_point_at_a_carried_target():
    carried = {x for t in AMD["torch_rocm"] for x in t["gfx"]}
    for o in AMD["gfx_override"]:
        assert o["status"] == "unofficial"
        assert re.fullmatch(r"\d+\.\d+\.\d+", o["hsa_override"])
        major, minor, step = (int(p) for p in o["hsa_override"].split("."))
        assert o["runs_as"] == f"gfx{major}{minor}{step}" or o["runs_as"] == f"gfx{major}{minor:x}{step:x}"
        assert o["runs_as"] in carried
        assert all(GFX.fullmatch(x) for x in o["gfx"])


def test_torch_xpu_records():
    seen = set()
    for t in INTEL["torch_xpu"]:
        assert t["name"] == "xpu" and t["index_url"] == "https://download.pytorch.org/whl/xpu", t
        assert set(t["platforms"]) <= {"linux", "windows"} and t["platforms"], t
        assert set(t["families"]) <= INTEL_FAMILIES and t["families"], t
        assert all(OS_ID.fullmatch(o) for o in t["os"]), t
        assert t["python"] and all(PYTHON.fullmatch(p) for p in t["python"]), t
        assert t["runtime"] in {"separate", "bundled"}, t
        assert t["driver"].strip(), t
        for release in t["releases"]:
            assert release not in seen, release
            seen.add(release)


# ---------------------------------------------------------------- facts from the sources

@pytest.mark.parametrize("alias, gfx, architecture", [
    ("MI300X", "gfx942", "CDNA3"),        # AMD hardware table, Instinct
    ("MI250X", "gfx90a", "CDNA2"),
    ("MI100", "gfx908", "CDNA"),
    ("MI355X", "gfx950", "CDNA4"),
    ("RX 7900 XTX", "gfx1100", "RDNA3"),  # AMD hardware table, Radeon
    ("RX 7800 XT", "gfx1101", "RDNA3"),
    ("RX 7600", "gfx1102", "RDNA3"),
    ("RX 6800 XT", "gfx1030", "RDNA2"),
    ("RX 6700 XT", "gfx1031", "RDNA2"),
    ("RX 6600", "gfx1032", "RDNA2"),
    ("Radeon VII", "gfx906", "GCN5.1"),
    ("W7900", "gfx1100", "RDNA3"),
    ("RX Vega 64", "gfx900", "GCN5.0"),   # LLVM processor table
    ("RX 9070 XT", "gfx1201", "RDNA4"),
    ("RX 9060 XT", "gfx1200", "RDNA4"),
    ("RX 580", "gfx803", "GCN4.0"),
])
def test_amd_gpu_targets(alias, gfx, architecture):
    g = gpu(AMD, alias)
    assert (g["gfx"], g["architecture"]) == (gfx, architecture)


@pytest.mark.parametrize("alias, pci_id", [("MI300X", "74a1"), ("MI250X", "7408"), ("RX 7900 XTX", "744c"),
                                            ("Radeon VII", "66af"), ("RX 580", "67df")])
def test_amd_pci_ids_from_pci_ids(alias, pci_id):
    assert pci_id in gpu(AMD, alias)["pci_ids"]


def test_torch_1_13_newest_rocm_variant_is_rocm5_2():
    # previous-versions.md: pip install torch==1.13.1+rocm5.2 ... --extra-index-url .../whl/rocm5.2
    for release in ("1.13.0", "1.13.1"):
        assert newest(variants_of(release))["name"] == "rocm5.2"


def test_torch_2_0_newest_rocm_variant_is_rocm5_4_2():
    for release in ("2.0.0", "2.0.1"):
        t = newest(variants_of(release))
        assert t["name"] == "rocm5.4.2" and t["index_url"] == "https://download.pytorch.org/whl/rocm5.4.2"


@pytest.mark.parametrize("release, names", [("2.1.0", {"rocm5.5", "rocm5.6"}), ("2.3.1", {"rocm5.7", "rocm6.0"}),
                                            ("2.5.1", {"rocm6.1", "rocm6.2"}), ("2.7.0", {"rocm6.2.4", "rocm6.3"})])
def test_rocm_variants_per_release(release, names):
    assert {t["name"] for t in variants_of(release)} == names


def test_no_wheel_from_torch_1_11_carries_gfx803():
    # RX 580 (gfx803): the builder scripts of 1.11+ set PYTORCH_ROCM_ARCH without it; only 1.8-1.10 built
    # LoadHIP.cmake's default list, which names gfx803.
    with_803 = [t for t in AMD["torch_rocm"] if "gfx803" in t["gfx"]]
    assert with_803 and all(version(r) < Version("1.11") for t in with_803 for r in t["releases"])
    rx580 = gpu(AMD, "RX 580")["gfx"]
    assert not [t for t in AMD["torch_rocm"] if rx580 in t["gfx"] and version(max(t["releases"], key=version)) >= Version("1.11")]


def test_mi300x_first_in_a_wheel_with_rocm6():
    # gfx942 joined PYTORCH_ROCM_ARCH for ROCm >= 6.0 (builder release/2.3)
    with_942 = [t for t in AMD["torch_rocm"] if "gfx942" in t["gfx"]]
    assert min(version(t["rocm"]) for t in with_942) == Version("6.0")
    assert min(version(r) for t in with_942 for r in t["releases"]) == Version("2.3.0")


def test_gfx1031_and_gfx1032_are_carried_by_no_wheel_but_have_the_unofficial_override():
    carried = {x for t in AMD["torch_rocm"] for x in t["gfx"]}
    assert not {"gfx1031", "gfx1032"} & carried
    (override,) = [o for o in AMD["gfx_override"] if "gfx1031" in o["gfx"]]
    assert (override["hsa_override"], override["runs_as"]) == ("10.3.0", "gfx1030")


def test_rocm_matrix_lists_the_instinct_targets():
    # AMD's compatibility matrix: every 6.x release supports gfx942, gfx90a, gfx908, gfx1100, gfx1030 on Linux
    for r in AMD["rocm"]:
        if version(r["version"]) >= Version("6.0"):
            assert {"gfx942", "gfx90a", "gfx908", "gfx1100", "gfx1030"} <= set(r["gfx"]), r["version"]


def test_xpu_wheels_start_at_torch_2_5():
    releases = sorted((version(v) for t in INTEL["torch_xpu"] for v in t["releases"]))
    assert releases[0] == Version("2.5.0")
    first = [t for t in INTEL["torch_xpu"] if "2.5.0" in t["releases"]][0]
    assert first["runtime"] == "separate" and "data-center-max" in first["families"]


def test_arc_a770_is_an_xpu_device_pytorch_lists():
    a770 = gpu(INTEL, "Arc A770")
    assert (a770["family"], a770["pci_ids"]) == ("arc-a", ["56a0"])
    assert any("arc-a" in t["families"] for t in INTEL["torch_xpu"] if "2.7.0" in t["releases"])
