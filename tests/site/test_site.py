"""`stackresolve site -o DIR` without a browser: the data holds the answers of `matrix --json`, the plans hold
what `plan` prints, two runs write the same files, the site is small and fetches nothing."""

import hashlib
import os
import re
import subprocess
import sys
from html.parser import HTMLParser

import pytest
from click.testing import CliRunner

from conftest import comparable, matrix_rows, page_rows
from stackresolve.cli import app

# (framework, OS, GPU model or compute capability, driver ("" = none given)): every framework and OS, old and new
# architectures, listed drivers of each OS
CHOICES = [
    ("tensorflow", "linux", "GTX 1080 Ti", ""),
    ("tensorflow", "linux", "8.6", "535.54.03"),
    ("tensorflow", "windows", "7.5", "452.39"),
    ("tensorflow", "wsl2", "RTX 4090", ""),
    ("tensorflow", "macos", "8.6", ""),
    ("pytorch", "linux", "8.6", "525.60.13"),
    ("pytorch", "linux", "3.5", "470.42.01"),
    ("pytorch", "windows", "12.0", ""),
    ("pytorch", "wsl2", "8.0", "555.85"),
    ("jax", "linux", "H100", "580.65.06"),
    ("jax", "linux", "7.0", ""),
    ("jax", "windows", "8.9", "528.33"),
]


def cc_of(kb, gpu: str) -> str:
    return gpu if gpu.replace(".", "").isdigit() else kb.find_gpu(gpu).cc


@pytest.mark.parametrize("framework,os_name,gpu,driver", CHOICES)
def test_the_page_data_holds_the_rows_of_matrix_json(site_data, kb, framework, os_name, gpu, driver):
    assert driver == "" or driver in site_data["drivers"][os_name]
    shown = page_rows(site_data, framework, os_name, cc_of(kb, gpu), driver)
    assert comparable(shown) == comparable(matrix_rows(framework, os_name, gpu, driver))


def test_every_model_and_compute_capability_is_offered(site_data, kb):
    assert site_data["ccs"] == sorted(kb.known_ccs(), key=lambda cc: tuple(map(int, cc.split("."))))
    offered = {name: cc for name, cc, _arch, _aliases in site_data["gpus"]}
    assert offered == {g.name: g.cc for g in kb.gpus}
    for framework in ("tensorflow", "pytorch", "jax"):
        for os_name in ("linux", "windows", "wsl2", "macos"):
            by_driver = site_data["answers"][framework][os_name]
            assert "" in by_driver and all(len(lists) == len(site_data["ccs"]) for lists in by_driver.values())
            drivers = [d for d in by_driver if d]
            assert drivers == site_data["drivers"][os_name]  # every framework offers the same drivers


def test_the_drivers_offered_include_every_minimum_the_answers_name(site_data):
    """Where an answer without a driver names a minimum, that minimum is a driver the page answers for."""
    strings, fields = site_data["strings"], site_data["row_fields"]
    minimum, os_field = fields.index("driver_min"), fields.index("os")
    for row in site_data["rows"]:
        if strings[row[minimum]] and strings[row[os_field]] != "macos":
            assert strings[row[minimum]] in site_data["drivers"][strings[row[os_field]]]
    # e.g. CUDA 12.2 needs driver >= 535.54.03 on Linux (NVIDIA's CUDA release notes, Table 3), and CUDA 11.x's
    # minor-version compatibility floor is 450.80.02 (Table 2)
    assert {"535.54.03", "450.80.02"} <= set(site_data["drivers"]["linux"])
    assert site_data["drivers"]["macos"] == []


def test_every_yes_has_plans_whose_stack_is_the_row(site_data):
    strings, fields = site_data["strings"], site_data["row_fields"]
    for raw in site_data["rows"]:
        row = {name: (value if name == "plan" else strings[value]) for name, value in zip(fields, raw)}
        if row["status"] == "impossible":
            assert row["plan"] == -1
            continue
        plan = site_data["plans"][row["plan"]]
        assert plan["facts"], row
        texts = {fmt: [strings[n] for n in lines] for fmt, lines in plan["formats"].items()}
        assert set(texts) | set(plan["refused"]) == {"pip", "conda", "dockerfile"}
        stack_line = next(line for line in next(iter(texts.values())) if line.startswith("# stack: "))
        assert f"=={row['version']}" in stack_line or f":{row['version']}" in stack_line or \
            row["version"] in stack_line, (row, stack_line)
        for part, value in (("CUDA", row["cuda"]), ("cuDNN", row["cudnn"]), ("driver >=", row["driver_min"])):
            if value:
                # JAX's plans name the CUDA and cuDNN its wheels need at least ("CUDA >= 12.1")
                assert f"{part} {value}" in stack_line or f"{part} >= {value}" in stack_line, (row, stack_line)


@pytest.mark.parametrize("framework,os_name,gpu,driver", [
    ("tensorflow", "linux", "6.1", ""),
    ("pytorch", "windows", "8.6", "528.33"),
    ("jax", "linux", "8.9", ""),
])
def test_a_plan_on_the_page_is_what_plan_prints(site_data, framework, os_name, gpu, driver):
    """The page's plan text is `stackresolve plan`'s, less the header's request line (which names the GPU: GPUs
    with the same answer share one plan); here for a GPU other than the one the plan was first made for, too."""
    strings = site_data["strings"]
    flag = {"tensorflow": "--tf", "pytorch": "--torch", "jax": "--jax"}[framework]
    yes = [r for r in page_rows(site_data, framework, os_name, gpu, driver) if r["plan"] >= 0]
    assert yes
    for row in (yes[0], yes[-1]):
        plan = site_data["plans"][row["plan"]]
        for fmt, lines in plan["formats"].items():
            args = ["plan", "--no-detect", flag, row["line"], "--os", os_name, "--gpu-cc", gpu, "--format", fmt]
            args += (["--driver", driver] if driver else []) + (["--vendor", row["plan_vendor"]]
                                                                  if row["plan_vendor"] else [])
            printed = CliRunner().invoke(app, args)
            assert printed.exit_code == 0, printed.output
            expected = [line for line in printed.stdout.splitlines() if not line.startswith("# request: ")]
            assert [strings[n] for n in lines] == expected


def test_two_runs_write_the_same_files(site_dir, tmp_path):
    """Another process (another hash seed) writes the same bytes."""
    env = {**os.environ, "PYTHONHASHSEED": "12345", "STACKRESOLVE_NO_CACHE": "1"}
    again = tmp_path / "again"
    done = subprocess.run([sys.executable, "-m", "stackresolve", "site", "-o", str(again)], env=env,
                          capture_output=True, text=True, timeout=900)
    assert done.returncode == 0, done.stderr

    def digests(folder):
        return {p.name: hashlib.sha256(p.read_bytes()).hexdigest() for p in sorted(folder.iterdir())}

    assert digests(again) == digests(site_dir)
    assert sorted(digests(site_dir)) == ["data.js", "index.html", "site.css", "site.js"]


def test_the_site_is_small(site_dir):
    size = sum(p.stat().st_size for p in site_dir.iterdir())
    assert size <= 3 * 1024 * 1024, size


class _Resources(HTMLParser):
    """Every address the page would load (not the links a reader may follow)."""

    LOADS = {("script", "src"), ("link", "href"), ("img", "src"), ("iframe", "src"), ("source", "src"),
             ("video", "src"), ("audio", "src"), ("embed", "src"), ("object", "data"), ("image", "href")}

    def __init__(self):
        super().__init__()
        self.loads: list[str] = []

    def handle_starttag(self, tag, attrs):
        for name, value in attrs:
            if (tag, name) in self.LOADS or name == "srcset" or name == "style":
                self.loads.append(value or "")


def test_the_page_loads_nothing_from_the_network(site_dir):
    parser = _Resources()
    parser.feed((site_dir / "index.html").read_text("utf-8"))
    assert sorted(parser.loads) == ["data.js", "site.css", "site.js"]
    css = (site_dir / "site.css").read_text("utf-8")
    assert "url(" not in css and "@import" not in css
    script = (site_dir / "site.js").read_text("utf-8")
    for call in ("fetch(", "XMLHttpRequest", "import(", "WebSocket", "EventSource", "sendBeacon", "importScripts"):
        assert call not in script, call
    # the data only carries text: addresses in it are sources, shown as links
    data = (site_dir / "data.js").read_text("utf-8")
    assert not re.search(r"<\s*(script|iframe|img|link)\b", data, re.I)


def test_site_refuses_a_file_for_its_folder(tmp_path):
    existing = tmp_path / "file.txt"
    existing.write_text("keep me")
    result = CliRunner().invoke(app, ["site", "-o", str(existing)])
    assert result.exit_code == 2
    assert "is a file, not a folder" in result.output and "Traceback" not in result.output
    assert existing.read_text() == "keep me"
    result = CliRunner().invoke(app, ["site", "-o", " "])
    assert result.exit_code == 2 and "no folder named" in result.output
