"""The knowledge base's own invariants: sources everywhere, and facts that refer to each other agree."""

from pathlib import Path

import pytest
from packaging.version import Version

from stackresolve.knowledge.base import normalize_gpu_name
from stackresolve.knowledge.loader import constraints_dir, read_toml
from stackresolve.knowledge.rules import cuda_line_fits
from stackresolve.model.values import ComputeCapability

TOML_FILES = sorted(p.name for p in Path(constraints_dir()).glob("*.toml"))



@pytest.mark.parametrize("name", TOML_FILES)
def test_every_record_has_a_source(name):
    doc, _ = read_toml(name)
    for table, rows in doc.items():
        if isinstance(rows, list) and rows and all(isinstance(r, dict) for r in rows):
            for i, row in enumerate(rows):
                assert isinstance(row.get("source"), str) and row["source"].strip(), \
                    f"{name} [[{table}]] #{i + 1} has no source: {row}"


@pytest.mark.parametrize("name", TOML_FILES)
def test_no_index_host_is_written_into_the_data(name):
    # The host is taken from pip's settings (pip's built-in default where nothing is configured), so the rule
    # is checked without writing any host name here either.
    from urllib.parse import urlparse

    from stackresolve.index.simple import index_url

    host = urlparse(index_url()).hostname
    text = (Path(constraints_dir()) / name).read_text(encoding="utf-8").lower()
    assert host and host.lower() not in text


def test_every_tested_gpu_build_names_a_known_toolkit_and_cudnn(kb):
    toolkits = {t.version for t in kb.toolkits}
    for build in kb.tested_builds:
        if not build.gpu or build.os == "macos":
            continue
        cuda = build.cuda
        assert cuda in toolkits, f"tested build {build.version} ({build.os}) names CUDA {cuda}, not in cuda.toml"
        wanted = Version(build.cudnn)
        fitting = [r for r in kb.cudnn if r.key.major == wanted.major and r.key >= wanted
                   and any(cuda_line_fits(b.cuda, cuda) for b in r.builds)]
        assert fitting, f"no cuDNN {wanted.major}.x >= {build.cudnn} built for CUDA {cuda} (TF {build.version})"


def test_every_line_has_a_tested_configuration_or_a_note(kb):
    for line in kb.lines:
        rows = [b for b in kb.tested_builds if b.line == line.version]
        assert rows or line.note, f"TensorFlow {line.version} has no tested build row and no note saying why"


def test_gpu_aliases_are_unique_and_capabilities_known(kb):
    owners = {}
    for gpu in kb.gpus:
        for spelling in {normalize_gpu_name(s) for s in (gpu.name, *gpu.aliases)}:
            assert spelling not in owners, f"{spelling!r} names both {owners[spelling]} and {gpu.name}"
            owners[spelling] = gpu.name
        assert kb.arch_support_for(gpu.cc) is not None, f"{gpu.name}: cc {gpu.cc} has no [[arch_support]] record"
    assert len(kb.gpus) >= 100


def test_toolkit_architecture_ranges_are_ordered(kb):
    for t in kb.toolkits:
        assert ComputeCapability.parse(t.arch_min) <= ComputeCapability.parse(t.arch_max), t.version
        # "" where NVIDIA's Table 3 row could not be read; the resolver warns instead of guessing.
        assert not t.driver_linux or Version(t.driver_linux) > Version("300"), t.version


def test_wheel_records_have_pythons_or_say_why(kb):
    for w in kb.wheels:
        if not w.stub and not w.yanked:
            assert any(w.pythons.values()), f"{w.package} {w.version} has no wheels and is not marked stub"


def test_what_a_log_wants_is_met_by_the_tables_values_as_they_print_them():
    from stackresolve.knowledge.rules import version_wanted_fits

    # tensorflow/docs source.md prints CUDA "10" for 10.0 and cuDNN "7" for a minimum within 7.x
    assert version_wanted_fits("10", "10.0", "cuda") and not version_wanted_fits("10", "10.1", "cuda")
    assert version_wanted_fits("11.2", "11.x", "cuda") and not version_wanted_fits("12.2", "11.x", "cuda")
    assert version_wanted_fits("7", "7.6.5", "cudnn") and version_wanted_fits("8.1", "8", "cudnn")
    assert version_wanted_fits("8.1", "8.1.0", "cudnn") and not version_wanted_fits("8.0", "8.1.0", "cudnn")
    assert version_wanted_fits("10.2", "10.1|10.2", "cuda")


def test_the_lines_with_machine_code_for_a_gpu_come_from_the_compiled_architectures():
    from stackresolve.knowledge.loader import knowledge

    kb = knowledge()
    lines = kb.lines_with_native_code("5.0", "windows")
    # TF 2.3 ships SASS for 5.2 and up (not 5.0); 2.4 brought 5.0 back (tensorflow/tensorflow#46537)
    assert "2.3" not in lines and "2.4" in lines


def test_a_gpu_older_than_a_toolkits_oldest_architecture_gets_nothing_from_it(kb):
    """NVIDIA's CUDA 11.0 release notes drop Kepler sm_30/sm_32 (3.5 and 3.7 stay, deprecated); CUDA 12.0 drops
    Kepler altogether (its oldest architecture is Maxwell, 5.0). The rule doctor's "gpu-too-old-for-cuda" and the
    resolver's toolkit requirement read."""
    from stackresolve.knowledge.rules import gpu_predates
    from stackresolve.model.values import ComputeCapability as CC

    assert gpu_predates(kb.toolkit("11.0"), CC(3, 0)) and not gpu_predates(kb.toolkit("11.0"), CC(3, 5))
    assert gpu_predates(kb.toolkit("12.0"), CC(3, 7)) and not gpu_predates(kb.toolkit("12.0"), CC(5, 0))
    assert not gpu_predates(kb.toolkit("10.2"), CC(3, 0))
