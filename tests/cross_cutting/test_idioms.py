"""Specifies the code idioms docs/development.md names, read from the `ast` of every module under
src/stackresolve:

- an immutable record is a `@record` (model/record.py), not a `@dataclass(frozen=True)`, other than in the
  modules listed in FROZEN_DATACLASSES_LEFT (to convert; each entry says why it waits).
"""

from __future__ import annotations

import ast
from pathlib import Path

import stackresolve

ROOT = Path(stackresolve.__file__).parent

# {module path under src/stackresolve: why it still holds frozen dataclasses}. These packages were edited by other
# changes in the same turn as the conversion (issue 35); convert them once those are merged, and delete the entry.
FROZEN_DATACLASSES_LEFT: dict[str, str] = {
    path: "doctor/, explain/ and fleet/model.py were being changed alongside (issue 35 and vendor support)"
    for path in ("doctor/checks.py", "doctor/frameworks.py", "doctor/installed.py", "doctor/report.py",
                 "doctor/target.py", "explain/catalogue.py", "explain/fix.py", "explain/match.py", "explain/plan.py",
                 "fleet/model.py")
}


def _frozen_dataclasses(path: Path) -> list[str]:
    """The classes of `path` decorated `@dataclass(frozen=True)` (or `@dataclasses.dataclass(frozen=True)`)."""
    found = []
    for node in ast.walk(ast.parse(path.read_text(encoding="utf-8"))):
        if not isinstance(node, ast.ClassDef):
            continue
        for decorator in node.decorator_list:
            if (isinstance(decorator, ast.Call)
                    and ast.unparse(decorator.func) in ("dataclass", "dataclasses.dataclass")
                    and any(k.arg == "frozen" and ast.unparse(k.value) == "True" for k in decorator.keywords)):
                found.append(node.name)
    return found


def test_immutable_records_are_records():
    wrong = {}
    for path in sorted(ROOT.rglob("*.py")):
        name = path.relative_to(ROOT).as_posix()
        classes = _frozen_dataclasses(path)
        if classes and name not in FROZEN_DATACLASSES_LEFT:
            wrong[name] = classes
    assert not wrong, f"frozen dataclasses (use @record from stackresolve.model.record): {wrong}"


def test_the_list_of_frozen_dataclasses_left_is_current():
    converted = [name for name in FROZEN_DATACLASSES_LEFT if not _frozen_dataclasses(ROOT / name)]
    assert not converted, f"converted to @record (or gone): delete them from FROZEN_DATACLASSES_LEFT: {converted}"

