"""A format that cannot express the stack is bad input (issue 21): one line naming the formats that can, exit 2,
nothing written with -o; `--format json` keeps every plan that can be rendered and says which cannot."""

import json

import pytest
from click.testing import CliRunner

from stackresolve.cli import app

REFUSED = [
    # containers run Linux (Docker Desktop runs Linux containers; a Windows or macOS stack has nothing to build)
    (["--tf", "2.3", "--os", "windows", "--gpu-cc", "6.1"], "dockerfile", "containers run Linux", "powershell"),
    (["--torch", "latest", "--os", "macos", "--arch", "arm64", "--gpu", "Apple M2"], "dockerfile",
     "containers run Linux", "pip"),
    # apt is Ubuntu's; PowerShell plans are Windows'
    (["--tf", "2.3", "--os", "windows", "--gpu-cc", "6.1"], "apt", "apt plan is for Ubuntu", "powershell"),
    (["--tf", "2.3", "--os", "linux", "--gpu-cc", "6.1"], "powershell", "PowerShell plans are for Windows", "apt"),
]


@pytest.mark.parametrize("args, fmt, why, usable", REFUSED)
def test_a_refused_format_is_one_line_exit_2_and_writes_nothing(tmp_path, args, fmt, why, usable):
    target = tmp_path / "plan.out"
    result = CliRunner().invoke(app, ["plan", "--no-detect", *args, "--format", fmt, "-o", str(target)])
    assert result.exit_code == 2, result.output
    lines = [line for line in result.stderr.splitlines() if line.strip()]
    assert len(lines) == 1 and "Traceback" not in result.output
    assert why in lines[0] and f"--format {fmt}" in lines[0]
    named = lines[0].split("Formats that can express this stack:")[1]
    assert usable in named and fmt not in named.replace(",", " ").split()
    assert not target.exists() and list(tmp_path.iterdir()) == []


def test_json_keeps_the_renderable_plans_and_names_the_refused_ones():
    result = CliRunner().invoke(app, ["plan", "--no-detect", "--tf", "2.3", "--os", "windows", "--gpu-cc", "6.1",
                                      "--format", "json"])
    assert result.exit_code == 0
    doc = json.loads(result.stdout)
    assert {"dockerfile", "apt"} <= set(doc["refused_formats"])
    assert "containers run Linux" in doc["refused_formats"]["dockerfile"]
    assert not set(doc["refused_formats"]) & set(doc["plans"])
    assert {"text", "pip", "powershell", "conda", "lock"} <= set(doc["plans"])


def test_an_impossible_target_still_explains_itself_and_exits_1():
    # no stack at all is not a refused format: the text says why, exit 1 (DESIGN.md exit codes)
    result = CliRunner().invoke(app, ["plan", "--no-detect", "--tf", "2.15", "--os", "linux", "--gpu-cc", "3.0",
                                      "--format", "dockerfile"])
    assert result.exit_code == 1
    assert "FROM" not in result.stdout
