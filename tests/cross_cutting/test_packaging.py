"""The wheel carries every package of the source tree: pyproject lists its packages by hand (constraints/ and
schemas/ are mapped in from the repository's top), and a package left out of that list passes every test of an
editable install while a plain `pip install .` (the README's quick start, CI) cannot import it."""

import tomli

import locations


def test_every_package_under_src_is_in_pyproject():
    root = locations.REPO
    config = tomli.loads((root / "pyproject.toml").read_text())["tool"]["setuptools"]
    listed = set(config["packages"])
    found = {".".join(init.parent.relative_to(root / "src").parts) for init in (root / "src").rglob("__init__.py")}
    assert found - listed == set()
    mapped = set(config["package-dir"]) - {""}
    assert listed - found == mapped  # what is not under src/ is mapped in from the top
