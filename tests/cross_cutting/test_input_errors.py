"""Specifies where bad user input is rejected, read from the `ast` of every module under src/stackresolve:
- InputError (bad input: one line, exit 2) is made only by the modules that read the user's own text: request/parse.py for
  everything a request is made of (the command line's flags, the environment's overrides), and the readers of the
  files and options that are no request (a lock, a full lock, install's options, `show`'s release line, conda's
  environment name);
- only the CLI (which prints it and exits 2) and request/parse.py (whose read_* functions turn it into "unknown" for text from
  a probe or a log) catch it: doctor, explain, fleet and the resolver build requests from typed values, where
  nothing can be wrong;
- outside the CLI, request/parse.py is used only through its readers of probe and log text, and by doctor for the --tf it is
  handed (and the environment's overrides where its target takes the machine's facts).
"""

from __future__ import annotations

import ast
from functools import lru_cache
from pathlib import Path

import stackresolve

ROOT = Path(stackresolve.__file__).parent

# {module: the user text it reads}: the modules that make an InputError besides request/parse.py
OTHER_USER_TEXT = {
    "stackresolve.formats.lock_read": "a lock file",
    "stackresolve.lock.check": "a full lock file (check)",
    "stackresolve.install.target": "a lock or full lock to install, install's --python",
    "stackresolve.install.run": "install's --venv, --installer, --find-links, --python and --python-exe",
    "stackresolve.browse.show": "`show`'s release line",
    "stackresolve.formats": "conda's --env-name",
}
# request/parse.py's functions that never raise: text from a probe or a log becomes None (and why), not bad input
READERS = {"read_version", "read_python", "read_driver", "read_cc", "read_os", "override_problem"}
# {module: (request/parse.py functions that may raise it uses, why)}
RAISING_USES = {
    "stackresolve.doctor.target": ({"validate_version", "reject_bad_overrides"},
                                   "diagnose(tf=...) is handed --tf as the user typed it; a target made from the "
                                   "machine's facts rejects an override detection could not read, as plan does"),
}


@lru_cache(maxsize=1)
def _modules() -> tuple[tuple[str, ast.Module], ...]:
    out = []
    for path in sorted(ROOT.rglob("*.py")):
        parts = list(path.relative_to(ROOT.parent).with_suffix("").parts)
        out.append((".".join(parts[:-1] if parts[-1] == "__init__" else parts),
                    ast.parse(path.read_text(encoding="utf-8"))))
    return tuple(out)


def _names(node: ast.AST | None) -> set[str]:
    """The names an expression spells (`InputError`, `request.InputError`, a tuple of them)."""
    if node is None:
        return set()
    return {n.id if isinstance(n, ast.Name) else n.attr for n in ast.walk(node)
            if isinstance(n, (ast.Name, ast.Attribute))}


def _input_error_classes() -> set[str]:
    """InputError and the project's subclasses of it (install's PythonMismatch)."""
    classes = {"InputError"}
    for _, tree in _modules():
        for node in ast.walk(tree):
            if isinstance(node, ast.ClassDef) and _names(ast.Tuple(elts=node.bases)) & classes:
                classes.add(node.name)
    return classes


@lru_cache(maxsize=1)
def _makers_and_catchers() -> tuple[dict[str, int], dict[str, int]]:
    classes = _input_error_classes()
    made: dict[str, int] = {}
    caught: dict[str, int] = {}
    for module, tree in _modules():
        for node in ast.walk(tree):
            if isinstance(node, ast.Call) and (getattr(node.func, "id", None) in classes
                                               or getattr(node.func, "attr", None) in classes):
                made[module] = made.get(module, 0) + 1
            elif isinstance(node, ast.ExceptHandler) and _names(node.type) & classes:
                caught[module] = caught.get(module, 0) + 1
    return made, caught


def test_input_error_is_made_only_where_user_text_is_read():
    made, _ = _makers_and_catchers()
    others = sorted(set(made) - {"stackresolve.request.parse"} - set(OTHER_USER_TEXT))
    assert not others, f"InputError made outside the readers of user text: {others}"
    request_building = [m for m in made if m != "stackresolve.request.parse" and m.split(".")[1] in
                        ("request", "resolve", "doctor", "explain", "fleet", "knowledge", "model", "detect")]
    assert not request_building, f"a request is built from typed values; these reject text: {request_building}"


def test_only_the_cli_and_the_readers_catch_input_error():
    _, caught = _makers_and_catchers()
    wrong = sorted(m for m in caught if not m.startswith("stackresolve.cli.") and m != "stackresolve.request.parse")
    assert not wrong, f"InputError caught below the CLI (build from typed values, or use flags.read_*): {wrong}"


def test_below_the_cli_flags_is_used_through_its_readers():
    wrong = {}
    for module, tree in _modules():
        if module.startswith("stackresolve.cli.") or module == "stackresolve.request.parse":
            continue
        used = {a.name for node in ast.walk(tree) if isinstance(node, ast.ImportFrom)
                and node.module == "stackresolve.request.parse" for a in node.names}
        allowed = READERS | RAISING_USES.get(module, (set(), ""))[0]
        if used - allowed:
            wrong[module] = sorted(used - allowed)
    assert not wrong, f"modules below the CLI that parse user text: {wrong}"


def test_the_walk_sees_what_it_checks():
    """request/parse.py makes and catches InputError and the CLI catches it: a broken walk would pass everything above."""
    made, caught = _makers_and_catchers()
    assert made.get("stackresolve.request.parse", 0) >= 15 and "stackresolve.request.parse" in caught
    assert "stackresolve.cli.plan" in caught and "stackresolve.formats.lock_read" in made
    assert "PythonMismatch" in _input_error_classes()
