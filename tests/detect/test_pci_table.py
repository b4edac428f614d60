"""constraints/pci_ids.toml: scripts/update_pci_ids.py builds it from pci.ids, the loader reads and checks it."""

from __future__ import annotations

import subprocess
import sys
from pathlib import Path

import pytest
from detect_helpers import FIXTURES

from stackresolve.knowledge.loader import KnowledgeError, constraints_dir, nvidia_pci_ids

ROOT = Path(__file__).resolve().parents[2]
SCRIPT = ROOT / "scripts" / "update_pci_ids.py"


def run_script(*args) -> subprocess.CompletedProcess:
    return subprocess.run([sys.executable, str(SCRIPT), *map(str, args)], capture_output=True, text=True, timeout=60)


def test_script_keeps_the_gpus_of_vendor_10de(tmp_path):
    out = tmp_path / "pci_ids.toml"
    proc = run_script(FIXTURES / "pci-ids-excerpt.txt", "--source", "pci.ids excerpt (test)", "--output", out)
    assert proc.returncode == 0, proc.stderr
    nvidia_pci_ids.cache_clear()
    try:
        table = nvidia_pci_ids(tmp_path)
    finally:
        nvidia_pci_ids.cache_clear()
    # the excerpt's NVIDIA lines: 0008 and 1b06 and 2204 end in a bracketed name; 0034 (no bracket), 0568 (words
    # after the bracket), 1aef (audio) do not; subsystem lines (two tabs) and the other vendors' devices are dropped
    assert table == {0x0008: "NV1 [STG2000X-B Series]", 0x1B06: "GP102 [GeForce GTX 1080 Ti]",
                     0x2204: "GA102 [GeForce RTX 3090]"}
    text = out.read_text(encoding="utf-8")
    assert 'version = "2026.08.22"' in text and 'license = "BSD-3-Clause"' in text
    assert "Copyright (c) Martin Mares and Albert Pool" in text and "pci.ids excerpt (test)" in text


def test_script_refuses_a_file_that_is_not_pci_ids(tmp_path):
    bad = tmp_path / "not-pci.ids"
    bad.write_text("hello\n", encoding="utf-8")
    proc = run_script(bad, "--output", tmp_path / "out.toml")
    assert proc.returncode == 1 and "pci.ids" in proc.stderr
    assert not (tmp_path / "out.toml").exists()


@pytest.mark.parametrize("body, problem", [
    ('[devices]\n"1b06" = "GP102 [GeForce GTX 1080 Ti]"\n', "[source]"),
    ('[source]\nversion = "1"\n', "[devices]"),
    ('[source]\nversion = "1"\n[devices]\n"1B06" = "x"\n', "4 lowercase hex"),
    ('[source]\nversion = "1"\n[devices]\n"1b06" = ""\n', "no name"),
    ("[source\n", "not valid TOML"),
])
def test_loader_rejects_malformed_tables(tmp_path, body, problem):
    (tmp_path / "pci_ids.toml").write_text(body, encoding="utf-8")
    nvidia_pci_ids.cache_clear()
    try:
        with pytest.raises(KnowledgeError, match=problem.replace("[", r"\[").replace("]", r"\]")):
            nvidia_pci_ids(tmp_path)
    finally:
        nvidia_pci_ids.cache_clear()


def test_shipped_table_says_where_it_comes_from():
    text = (Path(constraints_dir()) / "pci_ids.toml").read_text(encoding="utf-8")
    assert "github.com/pciutils/pciids" in text and "BSD-3-Clause" in text
    assert len(nvidia_pci_ids()) > 1000
