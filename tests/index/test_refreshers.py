"""Each refresh reader against captured (or, where the vendor is unreachable, reconstructed) documents, and the
loader's rule that a kind is labelled refreshed only when its refreshed records are in use.
Provenance: tests/fixtures/index/README.md, tests/fixtures/vendor/README.md."""

from __future__ import annotations

import json

import pytest

import locations
from test_refresh import fake_index  # noqa: F401 (the fixture)

from stackresolve.refreshers import refresh, vendor

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
    from stackresolve.refreshers import Broken

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
        from stackresolve.refreshers import Unreachable

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
