"""Each refresh reader against captured (or, where the vendor is unreachable, reconstructed) documents, and the
loader's rule that a kind is labelled refreshed only when its refreshed records are in use.
Provenance: tests/fixtures/index/README.md, tests/fixtures/vendor/README.md."""

from __future__ import annotations

import json

import pytest

import locations
from test_refresh import fake_index  # noqa: F401 (the fixture)

from stackresolve.refresh import refresh, vendor

VENDOR = locations.FIXTURES / "vendor"


def _read(name: str) -> bytes:
    return (VENDOR / name).read_bytes()


# ---------------------------------------------------------------- NVIDIA's and PyTorch's documents (pure parsers)


def test_a_cuda_manifest_gives_its_release_date_and_runtime_version():
    doc = json.loads(_read("redistrib_13.4.2.json"))
    assert vendor.parse_cuda_manifest(doc) == ("13.4.2", "2026-09-16", "13.4.92")


def test_a_cudnn_manifest_gives_its_full_version_and_cuda_majors():
    doc = json.loads(_read("redistrib_cudnn_9.27.0.json"))
    assert vendor.parse_cudnn_manifest(doc) == ("9.27.0", "2026-09-29", "9.27.0.42", ["12", "13"])
    del doc["cudnn"]["cuda_variant"]  # older manifests: the majors only as platform keys
    assert vendor.parse_cudnn_manifest(doc)[3] == ["12", "13"]


def test_a_manifest_of_another_shape_is_broken_not_a_crash():
    from stackresolve.refresh import Broken

    with pytest.raises(Broken):
        vendor.parse_cuda_manifest({"release_label": "13.4.2"})


def test_the_redist_listing_names_the_manifests():
    assert vendor.manifest_versions(_read("cuda_redist_listing.html").decode()) == ["13.4.1", "13.4.2"]


def test_driver_branches_from_releases_json():
    branches = vendor.parse_driver_releases(json.loads(_read("releases.json")))
    assert [(b["branch"], b["designation"], b["latest"]) for b in branches] == [
        ("620", "NFB", "620.0.0"), ("580", "LTSB", "580.1.1"), ("535", "LTSB", "535.1.1")]


def test_a_pytorch_variant_page_lists_the_releases_per_platform():
    page = vendor.parse_variant_page(_read("pytorch_whl_cu130_torch.html").decode(), "cu130")
    assert page == {"2.9.0": {"linux": True, "linux_aarch64": True, "windows": True}, "2.10.0": {"linux": True}}


def _serve(urls: dict[str, str]):
    def fetch(url, timeout):
        from stackresolve.refresh import Unreachable

        if url not in urls:
            raise Unreachable(f"{url}: not served")
        return _read(urls[url])
    return fetch


def test_the_vendor_readers_build_records_of_the_shipped_shape():
    from stackresolve.knowledge.loader import read_toml

    def shipped(name):
        doc = read_toml(name)[0]
        if name == "cudnn.toml":  # as if the newest shipped cuDNN were 9.20: 9.27.0 from the manifest is new
            doc = {**doc, "release": [r for r in doc["release"] if r["version"] in ("9.20.0", "8.9.7")]}
        return doc

    listing_cudnn = vendor.CUDNN_REDIST
    fetch = _serve({listing_cudnn: "cuda_redist_listing.html",  # the listing's links, renamed below
                    f"{listing_cudnn}redistrib_9.27.0.json": "redistrib_cudnn_9.27.0.json",
                    vendor.DRIVER_RELEASES: "releases.json",
                    f"{vendor.PYTORCH_WHL}cu130/torch/": "pytorch_whl_cu130_torch.html"})

    def fetch_renamed(url, timeout):
        data = fetch(url, timeout)
        return data.replace(b"13.4.1", b"9.19.9").replace(b"13.4.2", b"9.27.0") if url == listing_cudnn else data

    results = {r.kind: r for r in refresh("https://index.invalid/simple/", kinds=vendor.READERS,
                                          fetch_url=fetch_renamed, shipped=shipped, timeout=30)}
    cudnn = results["nvidia_cudnn"]
    assert cudnn.status == "refreshed", cudnn.detail
    assert 'version = "9.27.0"' in cudnn.text and '"9.27.0.42"' in cudnn.text and 'released = "2026-09-29"' in cudnn.text
    drivers = results["nvidia_drivers"]
    assert drivers.status == "refreshed" and drivers.records == 3 and 'designation = "LTSB"' in drivers.text
    variants = results["torch_variants"]
    assert variants.status == "refreshed" and variants.records == 2, variants.detail
    assert results["nvidia_cuda"].status == "unreachable"  # its listing is not served: said, not labelled refreshed


# ---------------------------------------------------------------- the package index (a local fake serving captures)


def test_index_readers_find_the_new_cudnn_cuda_and_companion_ranges(fake_index):  # noqa: F811
    from stackresolve.knowledge.loader import read_toml

    def shipped(name):  # the shipped data as it was on 2026-11-28, before cuDNN 9.28.1 and CUDA 13.4.3/13.5 were added
        doc = read_toml(name)[0]
        if name == "cudnn.toml":
            doc = {**doc, "release": [r for r in doc["release"] if r["version"] != "9.28.1"]}
        if name == "cuda.toml":
            doc = {**doc, "toolkit": [{**t, "releases": [v for v in t["releases"] if v != "13.4.3"]}
                                      for t in doc["toolkit"] if t["version"] != "13.5"]}
        return doc

    results = {r.kind: r for r in refresh(fake_index, kinds=["cudnn", "cuda", "torch_companions"], vendor=False,
                                          shipped=shipped, timeout=60)}
    assert all(r.status == "refreshed" for r in results.values()), results
    import tomli

    cudnn = tomli.loads(results["cudnn"].text)["release"]
    assert [(r["version"], r["builds"], r["released"]) for r in cudnn] == [
        ("9.28.1", [{"cuda": "13.x", "full_version": "9.28.1.4"}], "2026-11-06")]
    assert "carried over from cuDNN 9.28.0" in cudnn[0]["note"]
    cuda = {r["version"]: r for r in tomli.loads(results["cuda"].text)["toolkit"]}
    assert cuda["13.4"] == {"version": "13.4", "releases": ["13.4.2", "13.4.3"]}  # new releases of a known toolkit
    assert cuda["13.5"]["releases"] == ["13.5.0"] and cuda["13.5"]["arch_min"] == "7.5"
    companions = {(c["package"], c["version"]): c for c in tomli.loads(results["torch_companions"].text)["companion"]}
    assert companions[("torchaudio", "2.11.1")]["torch"] == ">=2.11"
    assert companions[("torchaudio", "2.11.0")]["torch"] == ""


# ---------------------------------------------------------------- the loader: per-kind labels and fallback


@pytest.fixture
def cache(tmp_path, monkeypatch):
    monkeypatch.setenv("STACKRESOLVE_CACHE_DIR", str(tmp_path))
    monkeypatch.delenv("STACKRESOLVE_NO_CACHE", raising=False)
    (tmp_path / "data").mkdir(mode=0o700)
    return tmp_path


# a release no shipped file has, so the overlay's own record is what is read
CUDNN_UNSHIPPED = '''generated = "2099-01-01"
origin = "refreshed"
source = "package index /simple/nvidia-cudnn-cu13/ (test)"

[[release]]
version = "9.99.0"
builds = [{ cuda = "13.x", full_version = "9.99.0.1" }]
arch_min = "7.5"
arch_max = "12.0"
source = "package index /simple/nvidia-cudnn-cu13/ (test)"
'''


def test_only_the_refreshed_kind_is_labelled_refreshed(cache):
    from stackresolve.knowledge.loader import load_knowledge
    from types import SimpleNamespace

    from stackresolve.model.enums import Framework, Os
    from stackresolve.resolve import index_data

    (cache / "data" / "cudnn.toml").write_text(CUDNN_UNSHIPPED)
    kb = load_knowledge()
    assert kb.data_kinds["cudnn"][:2] == ("2099-01-01", "refreshed")
    assert kb.data_kinds["cuda"][1] == "shipped" and kb.data_kinds["tensorflow_wheels"][1] == "shipped"
    assert "9.99.0" in {r.version for r in kb.cudnn}
    label = index_data(kb, SimpleNamespace(framework=Framework.TENSORFLOW, os=Os.LINUX))
    assert "cuDNN fetched 2099-01-01, refreshed" in label and "TensorFlow wheels" in label
    assert "TensorFlow wheels fetched 2099-01-01" not in label
    assert kb.load_warnings == ()


def test_a_broken_refreshed_kind_falls_back_to_the_shipped_data_with_a_warning(cache):
    from stackresolve.knowledge.loader import load_knowledge

    (cache / "data" / "cudnn.toml").write_text(CUDNN_UNSHIPPED.replace('arch_min = "7.5"\n', ""))
    for kb in (load_knowledge(), load_knowledge()):  # built, then from its snapshot: the warning both times
        assert kb.data_kinds["cudnn"][1] == "shipped"
        assert "9.99.0" not in {r.version for r in kb.cudnn}
        assert len(kb.load_warnings) == 1 and "missing `arch_min`" in kb.load_warnings[0]


def test_a_refreshed_framework_kind_reaches_the_lazily_loaded_framework_facts(cache):
    from stackresolve.knowledge.loader import load_knowledge, read_toml

    doc = read_toml("torch_companions.toml")[0]
    import tomli_w

    # A refresh that read only torchaudio 2.11.1, and read it without its torch range: that record is replaced,
    # the companions it did not read stay.
    [row] = [c for c in doc["companion"] if c["package"] == "torchaudio" and c["version"] == "2.11.1"]
    (cache / "data" / "torch_companions.toml").write_text(tomli_w.dumps(
        {"generated": "2099-01-01", "origin": "refreshed", "source": "test", "companion": [{**row, "torch": ""}]}))
    for kb in (load_knowledge(), load_knowledge()):  # built, then from the snapshots
        fk = kb.frameworks
        assert fk.torch_companion("torchaudio", "2.11.1").torch == ""
        assert fk.companion_for("torchaudio", fk.torch_release("2.15.0")) is None
        assert fk.torch_companion("torchvision", "0.29.2") is not None
        assert kb.data_kinds["torch_companions"][1] == "refreshed"


def test_torch_companions_are_read_from_requires_dist_ranges():
    """torchaudio 2.11.1 declares Requires-Dist: torch>=2.11 (captured METADATA): torch 2.15 gets it; torch 2.11.0
    keeps the release its record names (2.11.0, uploaded with it)."""
    from stackresolve.knowledge.loader import load_knowledge

    fk = load_knowledge(use_snapshot=False).frameworks
    assert fk.companion_for("torchaudio", fk.torch_release("2.15.0")).version == "2.11.1"
    assert fk.companion_for("torchaudio", fk.torch_release("2.11.0")).version == "2.11.0"
    assert fk.companion_for("torchaudio", fk.torch_release("1.8.0")).version == "0.8.0"


def test_the_staleness_note_names_the_old_kind_only(cache, capsys):
    from stackresolve.cli.app import warn_if_stale
    from stackresolve.knowledge.loader import load_knowledge

    (cache / "data" / "cudnn.toml").write_text(CUDNN_UNSHIPPED)
    kb = load_knowledge()
    kinds = dict(kb.data_kinds)
    kinds["cuda"] = ("2000-01-01", "shipped", "constraints/cuda.toml")
    object.__setattr__(kb, "data_kinds", kinds)
    warn_if_stale(kb, "pytorch")
    notes = capsys.readouterr().err.splitlines()
    assert len([n for n in notes if "the CUDA data is" in n and "(fetched 2000-01-01, shipped)" in n]) == 1
    assert not [n for n in notes if "cuDNN" in n]


def test_show_names_the_refreshed_kinds_own_date(cache):
    from stackresolve.knowledge.loader import load_knowledge

    (cache / "data" / "cudnn.toml").write_text(CUDNN_UNSHIPPED)
    kb = load_knowledge()
    assert kb.fetched("cudnn") == "2099-01-01"  # show cudnn's `fetched`
    assert kb.fetched("cuda") == kb.date  # not refreshed: the shipped data's review date


# ---------------------------------------------------------------- Apple: tensorflow-metal, jax-metal


INDEX = locations.FIXTURES / "index"


def _metadata(name: str):
    from stackresolve.index import simple as idx

    return idx._parse_metadata((INDEX / f"{name}.METADATA").read_bytes())


def test_the_pairing_tables_in_apples_descriptions_are_read():
    """tensorflow-metal 1.2.0's METADATA (captured): two rows print v1.1.0 ("v2.14-v2.18", "v2.18"), none names
    1.2.0; jax-metal 0.1.1's table has its own row."""
    from packaging.version import Version

    from stackresolve.refresh import index as readers

    table = readers.description_table(_metadata("tensorflow_metal-1.2.0-cp312-cp312-macosx_12_0_arm64.whl"),
                                      "tensorflow-metal")
    assert len(table) == 11 and table[0] == {"tensorflow": "v2.5", "tensorflow-metal": "v0.1.2", "macos": "12.0+",
                                             "features": "Pluggable device"}
    rows = readers._rows_for(table, "tensorflow-metal", Version("1.1.0"))
    assert sorted({line for r in rows for line in readers._tf_lines(r["tensorflow"])}, key=Version) == [
        "2.14", "2.15", "2.16", "2.17", "2.18"]
    assert readers._rows_for(table, "tensorflow-metal", Version("1.2.0")) == []
    jax = readers.description_table(_metadata("jax_metal-0.1.1-py3-none-macosx_13_0_arm64.whl"), "jax-metal")
    assert readers._rows_for(jax, "jax-metal", Version("0.1.1")) == [
        {"jax-metal": "0.1.1", "macos": "Sonoma 14.4+", "jaxlib": ">=0.4.34", "jax": "==jaxlib"}]
    assert readers.description_table(_metadata("jax_metal-0.1.1-py3-none-macosx_13_0_arm64.whl"), "tensorflow") == []


def test_the_apple_readers_add_the_releases_newer_than_shipped(fake_index):  # noqa: F811
    """With the shipped data as it would be before tensorflow-metal 1.1.0 and jax-metal 0.1.1, the readers rebuild
    those records from the captured file lists and METADATA: what the index says equals the curated records
    (which were read from the same index), and what it cannot say is carried over by rule, or left empty."""
    import tomli

    from stackresolve.knowledge.loader import read_toml

    real = read_toml("apple.toml")[0]

    def shipped(name):
        doc = read_toml(name)[0]
        if name == "apple.toml":
            doc = {**doc, "tensorflow_metal": [r for r in doc["tensorflow_metal"] if r["version"] < "1.1.0"],
                   "jax_metal": [r for r in doc["jax_metal"] if r["version"] != "0.1.1"]}
        return doc

    results = {r.kind: r for r in refresh(fake_index, kinds=["tensorflow_metal", "jax_metal"], vendor=False,
                                          shipped=shipped, timeout=60)}
    assert all(r.status == "refreshed" for r in results.values()), results

    def same_but_provenance(read, curated):
        drop = ("source", "note")
        return {k: v for k, v in read.items() if k not in drop} == {k: v for k, v in curated.items() if k not in drop}

    curated = {r["version"]: r for r in real["tensorflow_metal"]}
    metal = {r["version"]: r for r in tomli.loads(results["tensorflow_metal"].text)["tensorflow_metal"]}
    assert sorted(metal) == ["1.1.0", "1.2.0"]
    # 1.2.0: no row names it, so no TensorFlow line (as curated); every wheel fact as curated
    assert same_but_provenance(metal["1.2.0"], curated["1.2.0"])
    assert "no row names 1.2.0" in metal["1.2.0"]["note"]
    # 1.1.0: its own METADATA's row says v2.14 (the curated record takes 1.2.0's widened row, and says so)
    assert metal["1.1.0"]["tensorflow"] == ["2.14"] and metal["1.1.0"]["macos_min"] == "12.1"
    assert same_but_provenance({**metal["1.1.0"], "tensorflow": curated["1.1.0"]["tensorflow"]}, curated["1.1.0"])
    assert metal["1.1.0"]["tf_package"] == "tensorflow"
    assert "tf_package carried over from tensorflow-metal 1.0.0" in metal["1.1.0"]["note"]
    assert "tensorflow_metal-1.1.0-cp311-cp311-macosx_12_0_arm64.whl" in metal["1.1.0"]["source"]

    [jax] = tomli.loads(results["jax_metal"].text)["jax_metal"]
    assert same_but_provenance(jax, {r["version"]: r for r in real["jax_metal"]}["0.1.1"])
    assert "status carried over from jax-metal 0.1.0" in jax["note"]


TF_METAL_UNSHIPPED = '''generated = "2099-01-01"
origin = "refreshed"
source = "package index /simple/tensorflow-metal/ (test)"

[[tensorflow_metal]]
version = "9.9.0"
tensorflow = []
tf_package = ""
macos_min = ""
wheel_macos_min = "macosx_12_0"
macos_arm64 = ["3.12"]
macos_x86_64 = []
requires = []
source = "package index /simple/tensorflow-metal/ (test)"
'''


def test_the_metal_kinds_are_labelled_on_mac_plans_only(cache):
    from types import SimpleNamespace

    from stackresolve.knowledge.loader import load_knowledge
    from stackresolve.model.enums import Framework, Os
    from stackresolve.resolve import index_data

    (cache / "data" / "tensorflow_metal.toml").write_text(TF_METAL_UNSHIPPED)
    kb = load_knowledge()
    assert kb.data_kinds["tensorflow_metal"][:2] == ("2099-01-01", "refreshed")
    assert kb.data_kinds["jax_metal"][1] == "shipped"
    assert "9.9.0" in {m.version for m in kb.frameworks.tensorflow_metal}

    def label(framework, os):
        return index_data(kb, SimpleNamespace(framework=framework, os=os))

    assert "tensorflow-metal fetched 2099-01-01, refreshed" in label(Framework.TENSORFLOW, Os.MACOS)
    assert "jax-metal" not in label(Framework.TENSORFLOW, Os.MACOS)
    assert "metal" not in label(Framework.TENSORFLOW, Os.LINUX) and "metal" not in label(Framework.PYTORCH, Os.MACOS)
    mac_jax = label(Framework.JAX, Os.MACOS)
    assert "jax-metal fetched 2026-11-24, shipped" in mac_jax and "tensorflow-metal" not in mac_jax
    assert kb.load_warnings == ()


def test_a_broken_metal_kind_falls_back_to_the_shipped_pairings(cache):
    from stackresolve.knowledge.loader import load_knowledge

    (cache / "data" / "tensorflow_metal.toml").write_text(TF_METAL_UNSHIPPED.replace('macos_arm64 = ["3.12"]\n', ""))
    kb = load_knowledge()
    assert kb.data_kinds["tensorflow_metal"][1] == "shipped"
    assert "9.9.0" not in {m.version for m in kb.frameworks.tensorflow_metal}
    assert len(kb.load_warnings) == 1 and "macos_arm64" in kb.load_warnings[0]
