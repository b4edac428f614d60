"""Specifies the code idioms docs/development.md names, read from the `ast` of every module under
src/stackresolve:

- an immutable record is a `@record` (model/record.py), not a `@dataclass(frozen=True)`, other than in the
  modules listed in FROZEN_DATACLASSES_LEFT (to convert; each entry says why it waits);
- an import inside a function carries a `# lazy: <why>` note (most are there for start-up speed; the note says
  so, or says that there is no gain), other than in the packages listed in LAZY_NOTES_LEFT.
"""

from __future__ import annotations

import ast
import re
from pathlib import Path

import stackresolve

ROOT = Path(stackresolve.__file__).parent

# {module path under src/stackresolve: why it still holds frozen dataclasses}. These packages were edited by other
# changes in the same turn as the conversion (issue 35); convert them once those are merged, and delete the entry.
FROZEN_DATACLASSES_LEFT: dict[str, str] = {
    path: "doctor/, explain/ and fleet/inventory.py were being changed alongside (issue 35 and vendor support)"
    for path in ("doctor/checks.py", "doctor/frameworks.py", "doctor/installed.py", "doctor/report.py",
                 "doctor/target.py", "explain/catalogue.py", "explain/fix.py", "explain/match.py", "explain/plan.py",
                 "fleet/inventory.py")
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


# -- imports inside functions ----------------------------------------------------------------------------------
# Every import inside a function says why it is there with a note `# lazy: <why>`, on its own line or on the line
# above it or above the run of imports it belongs to (`# lazy: start-up (PyYAML ~10 ms)`, `# lazy: the framework
# under check`, ...; docs/development.md). LAZY_NOTES_LEFT: the packages whose notes are still to write.
LAZY_NOTE = re.compile(r"#\s*lazy:\s*\S")
LAZY_NOTES_LEFT: dict[str, str] = {
}
_OPENS = (ast.If, ast.Try, ast.ExceptHandler) + ((ast.TryStar,) if hasattr(ast, "TryStar") else ())


def _lazy_imports(tree: ast.AST) -> tuple[list[ast.stmt], dict]:
    """The imports inside functions of `tree`, and where each statement sits: {statement: (owner, siblings,
    index)}."""
    where: dict = {}
    for owner in ast.walk(tree):
        for _, value in ast.iter_fields(owner):
            if isinstance(value, list):
                for index, child in enumerate(value):
                    if isinstance(child, (ast.stmt, ast.ExceptHandler)):
                        where[child] = (owner, value, index)

    def in_function(node) -> bool:
        while node in where:
            node = where[node][0]
            if isinstance(node, (ast.FunctionDef, ast.AsyncFunctionDef)):
                return True
        return False

    return [n for n in where if isinstance(n, (ast.Import, ast.ImportFrom)) and in_function(n)], where


def _note_lines(node: ast.stmt, where: dict) -> list[int]:
    """The lines (1-based) whose `# lazy:` note covers the import `node`: its own, and the line above the run of
    imports it belongs to, then above each `if`/`try`/`except` that the run opens."""
    lines = list(range(node.lineno, (node.end_lineno or node.lineno) + 1))
    stmt = node
    while stmt in where:
        owner, siblings, index = where[stmt]
        if isinstance(stmt, ast.ExceptHandler):
            stmt = owner
            continue
        while index > 0 and isinstance(siblings[index - 1], (ast.Import, ast.ImportFrom)):
            index -= 1
        lines.append(siblings[index].lineno - 1)
        if index or not isinstance(owner, _OPENS):
            break
        stmt = owner
    return lines


def _unnoted(path: Path) -> list[ast.stmt]:
    text = path.read_text(encoding="utf-8").splitlines()
    imports, where = _lazy_imports(ast.parse("\n".join(text)))
    return [n for n in imports
            if not any(0 < line <= len(text) and LAZY_NOTE.search(text[line - 1]) for line in _note_lines(n, where))]


def test_every_import_inside_a_function_says_why():
    wrong = [f"{path.relative_to(ROOT).as_posix()}:{node.lineno}"
             for path in sorted(ROOT.rglob("*.py"))
             if not path.relative_to(ROOT).as_posix().startswith(tuple(LAZY_NOTES_LEFT))
             for node in _unnoted(path)]
    assert not wrong, f"imports inside functions without a `# lazy: <why>` note: {wrong}"


def test_the_note_reader_sees_runs_and_blocks():
    source = ("def f():\n"
              "    # lazy: start-up\n"
              "    import a\n"
              "    from b import c\n"
              "    try:\n"
              "        import d\n"
              "    except ImportError:\n"
              "        import e\n"
              "    x = 1\n"
              "    import g  # lazy: start-up\n"
              "    import h\n"
              "import i\n")
    imports, where = _lazy_imports(ast.parse(source))
    lines = source.splitlines()
    noted = {n.lineno: any(0 < line <= len(lines) and LAZY_NOTE.search(lines[line - 1])
                           for line in _note_lines(n, where)) for n in imports}
    assert noted == {3: True, 4: True, 6: True, 8: True, 10: True, 11: False}
