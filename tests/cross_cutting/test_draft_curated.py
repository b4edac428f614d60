"""scripts/draft_curated.py offline, against fixtures (tests/fixtures/drafting/README.md), and the weekly workflow
that runs it (which cannot run here)."""

from __future__ import annotations

import importlib.util
import struct
import subprocess
import sys

import pytest
import yaml

import locations

ROOT = locations.FIXTURES.parent.parent
FIXTURES = locations.FIXTURES / "drafting"


@pytest.fixture(scope="module")
def draft():
    spec = importlib.util.spec_from_file_location("draft_curated", ROOT / "scripts" / "draft_curated.py")
    module = importlib.util.module_from_spec(spec)
    spec.loader.exec_module(module)
    return module


def test_tested_build_rows_are_read_as_printed(draft):
    rows = draft.parse_tested_builds((FIXTURES / "tf_source_md_excerpt.md").read_text())
    assert rows[2] == {"os": "linux", "package": "tensorflow_gpu", "version": "1.11.0", "python": "2.7, 3.3-3.6",
                       "compiler": "GCC 4.8", "build_tools": "Bazel 0.15.0", "cudnn": "7", "cuda": "9"}
    assert [r["os"] for r in rows] == ["linux"] * 4 + ["macos"] * 2


def test_only_rows_the_knowledge_base_lacks_are_drafted(draft):
    text = (FIXTURES / "tf_source_md_excerpt.md").read_text()
    assert draft.draft_tested_builds(text, draft.known_tested_builds(), "src") == []  # all shipped already
    known = draft.known_tested_builds() - {("macos", "tensorflow_gpu", "1.1.0")}
    [row] = draft.draft_tested_builds(text, known, "tensorflow/docs:site/en/install/source.md")
    assert (row["os"], row["version"], row["cudnn"], row["cuda"]) == ("macos", "1.1.0", "5.1", "8")
    assert row["source"].startswith("tensorflow/docs")


def test_driver_minimums_are_drafted_for_toolkits_left_empty(draft):
    text = (FIXTURES / "cuda_driver_table_excerpt.txt").read_text()
    assert draft.parse_driver_table(text)["10.1"] == ("418.39", "418.96")
    toolkits = [{"version": "10.2", "driver_linux": "", "driver_windows": ""},
                {"version": "10.0", "driver_linux": "410.48", "driver_windows": "411.31"},
                {"version": "13.4", "driver_linux": "", "driver_windows": ""}]
    assert draft.draft_driver_minimums(text, toolkits, "notes") == [
        {"version": "10.2", "driver_linux": "440.33", "driver_windows": "441.22", "source": "notes"}]


def test_gpus_the_knowledge_base_lacks_are_drafted(draft):
    drafted = draft.draft_gpus((FIXTURES / "cuda_gpus_excerpt.html").read_text(), "cuda-gpus")
    assert [(g["name"], g["cc"]) for g in drafted] == [("NVIDIA Example X1", "12.3"), ("NVIDIA Example X2", "12.3")]


def _fatbin(entries):
    """A fatbin container in the documented layout: entries of (kind, sm) with an 8-byte payload each."""
    body = b""
    for kind, sm in entries:
        header = struct.pack("<HHIQ", kind, 0x0101, 64, 8) + b"\0" * 12 + struct.pack("<I", sm)
        body += header.ljust(64, b"\0") + b"payload!"
    return struct.pack("<IHHQ", 0xBA55ED50, 1, 16, len(body)) + body


def test_a_fatbin_scan_finds_sass_and_ptx(draft, tmp_path):
    blob = b"ELF..." + _fatbin([(2, 80), (2, 90), (1, 90)]) + b"\0" * 7 + _fatbin([(2, 120)])
    assert draft.scan_fatbins(blob) == ({"8.0", "9.0", "12.0"}, {"9.0"})
    import zipfile

    wheel = tmp_path / "demo-1.0-py3-none-any.whl"
    with zipfile.ZipFile(wheel, "w") as zf:
        zf.writestr("demo/lib/libdemo.so", blob)
        zf.writestr("demo/__init__.py", "")
    assert draft.scan_wheel(wheel) == (["8.0", "9.0", "12.0"], ["9.0"])


def test_the_script_runs_offline_and_writes_a_report_and_drafts(tmp_path):
    out = tmp_path / "drafts"
    done = subprocess.run([sys.executable, str(ROOT / "scripts" / "draft_curated.py"), "--offline",
                           "--tf-source-md", str(FIXTURES / "tf_source_md_excerpt.md"),
                           "--cuda-driver-table", str(FIXTURES / "cuda_driver_table_excerpt.txt"),
                           "--cuda-gpus", str(FIXTURES / "cuda_gpus_excerpt.html"),
                           "--tf-source-md", str(tmp_path / "missing.md"), "--output-dir", str(out)],
                          capture_output=True, text=True, timeout=120)
    assert done.returncode == 0, done.stderr
    report = (out / "REPORT.md").read_text()
    assert "GPUs on NVIDIA's list that gpus.toml lacks (2)" in report
    assert "missing.md: FileNotFoundError" in report  # a source not read is named, not fatal
    import tomli

    drafts = tomli.loads((out / "curated.toml").read_text())
    assert all(r["source"] for table in drafts.values() if isinstance(table, list) for r in table)


def test_the_weekly_workflow_runs_the_script_and_opens_a_pull_request():
    workflow = yaml.safe_load((ROOT / ".github" / "workflows" / "draft-curated.yml").read_text())
    triggers = workflow.get("on", workflow.get(True))  # YAML 1.1 reads the key `on` as true
    assert triggers["schedule"][0]["cron"].split()[-1] == "1"  # weekly, on Mondays
    steps = workflow["jobs"]["draft"]["steps"]
    assert any("scripts/draft_curated.py" in step.get("run", "") for step in steps)
    assert any(step.get("uses", "").startswith("peter-evans/create-pull-request@") for step in steps)


def test_new_releases_are_those_the_curated_files_do_not_name(draft):
    """The captured /simple/cuda-toolkit/ and /simple/nvidia-cudnn-cu13/ lists against what cuda.toml and cudnn.toml
    name: 13.4.3, 13.5.0 and cuDNN 9.28.1.4 are new (the issue's measurement of 2026-11-28)."""
    import json

    from stackresolve.index import simple as idx

    files = {}
    for project in ("cuda-toolkit", "nvidia-cudnn-cu13"):
        doc = json.loads((locations.FIXTURES / "index" / f"{project}.json").read_text())
        files[project] = [idx.IndexFile.from_json(e, "https://index.invalid/simple/") for e in doc["files"]]
    # the curated files as they were that day: the releases added to them since (on the drafting tool's report) left out
    known = draft.known_versions()
    known = {**known, "cuda-toolkit": known["cuda-toolkit"] - {"13.4.3", "13.5.0"},
             "nvidia-cudnn-cu13": known["nvidia-cudnn-cu13"] - {"9.28.1.4"}}
    found = draft.new_releases(files, "2026-11-22", known)
    assert [(p, v) for p, v, _ in found] == [("cuda-toolkit", "13.4.3"), ("cuda-toolkit", "13.5.0"),
                                              ("nvidia-cudnn-cu13", "9.28.1.4")]
    assert draft.new_releases(files, "2026-11-28", draft.known_versions()) == []  # the shipped files now name them
