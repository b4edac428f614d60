"""Where the tests' inputs live, for test modules at any depth under tests/ (pytest puts tests/ on sys.path)."""

import shutil
import sys
from pathlib import Path

if sys.version_info >= (3, 11):
    import tomllib
else:  # pragma: no cover - Python 3.10
    import tomli as tomllib

TESTS = Path(__file__).resolve().parent
REPO = TESTS.parent
FIXTURES = TESTS / "fixtures"


def tool(name: str) -> str | None:
    """A command-line tool the test extra installs (shellcheck, hadolint): beside this Python first, where the venv
    has it even when its bin/ is not on PATH, then on PATH."""
    beside_python = Path(sys.executable).with_name(name)
    return str(beside_python) if beside_python.exists() else shutil.which(name)


def read_constraints(name: str) -> dict:
    """A knowledge-base file under constraints/ as TOML reads it (the tests' own reading, beside the loader's)."""
    from stackresolve.knowledge.loader import constraints_dir

    with open(constraints_dir() / name, "rb") as handle:
        return tomllib.load(handle)
