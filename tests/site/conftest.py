"""The site `stackresolve site -o DIR` writes, made once per test run (it resolves every answer it offers, which
takes tens of seconds), and the rows of `stackresolve matrix --json` to hold it to."""

import json
import urllib.parse

import pytest
from click.testing import CliRunner

from stackresolve.cli import app


@pytest.fixture(scope="session")
def site_dir(tmp_path_factory):
    folder = tmp_path_factory.mktemp("site")
    result = CliRunner().invoke(app, ["site", "-o", str(folder)])
    assert result.exit_code == 0, result.output
    return folder


@pytest.fixture(scope="session")
def site_data(site_dir):
    """data.js read back: `window.STACKRESOLVE_SITE = {...};`."""
    text = (site_dir / "data.js").read_text("utf-8")
    prefix, suffix = "window.STACKRESOLVE_SITE = ", ";\n"
    assert text.startswith(prefix) and text.endswith(suffix)
    return json.loads(text[len(prefix):-len(suffix)])


def page_rows(data: dict, framework: str, os_name: str, cc: str, driver: str = "") -> list[dict]:
    """The rows the page shows for a choice, decoded from the data (every field as text, "" for none)."""
    strings, fields = data["strings"], data["row_fields"]
    rows = data["lists"][data["answers"][framework][os_name][driver][data["ccs"].index(cc)]]
    return [{name: (value if name == "plan" else strings[value]) for name, value in zip(fields, data["rows"][n])}
            for n in rows]


def matrix_rows(framework: str, os_name: str, gpu: str, driver: str = "") -> list[dict]:
    """`stackresolve matrix --json` for one GPU (model or compute capability), driver and OS."""
    flag = {"tensorflow": [], "pytorch": ["--torch"], "jax": ["--jax"]}[framework]
    gpu_args = ["--gpu-cc", gpu] if gpu.replace(".", "").isdigit() else ["--gpu", gpu]
    args = ["matrix", "--json", "--os", os_name, *gpu_args, *flag] + (["--driver", driver] if driver else [])
    result = CliRunner().invoke(app, args)
    assert result.exit_code == 0, result.output
    return json.loads(result.stdout)["rows"]


def comparable(rows: list[dict]) -> list[dict]:
    """The fields `matrix --json` and the page share, as text ("" where JSON has null)."""
    from stackresolve.site.data import ROW_FIELDS

    return [{name: row.get(name) or "" for name in ROW_FIELDS} for row in rows]


def permalink(framework_flag: str, gpu: str, os_name: str, driver: str = "") -> str:
    params = {"framework": framework_flag, "gpu": gpu, **({"driver": driver} if driver else {}), "os": os_name}
    return "#" + urllib.parse.urlencode(params, quote_via=urllib.parse.quote)
