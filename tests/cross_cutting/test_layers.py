"""Specifies the layers of the package's own import graph (DESIGN.md, "Data flow"), read from the `ast` of every
module under src/stackresolve, function-local imports included (they are imports all the same). Two readings:
every import, type-only ones (under `if TYPE_CHECKING:`) included, for the layers (an annotation that names a
type of the layer above is a dependency on it all the same); imports that run, for the cycles (a type-only import
never runs, so it cannot close a cycle):

- no module imports up a layer (LAYERS, bottom first; within a layer any direction), type-only imports included,
  other than the imports listed in KNOWN_UPWARD with their reason;
- `detect` (all I/O) imports only `model` of the project: probes know nothing of the knowledge base or plans;
- `model` imports nothing of the project outside `model`;
- nothing outside `cli` imports `cli` (the CLI only parses and renders);
- between the project's packages (and its top-level modules, each its own node) there is no import cycle, other
  than the ones listed in KNOWN_CYCLES with their reason;
- between the project's modules there is no import cycle either, inside a package as between packages: no module
  imports back, not even from inside a function (a function-local import hides a cycle; it does not remove it).
"""

from __future__ import annotations

import ast
from collections import defaultdict
from functools import lru_cache
from pathlib import Path

import stackresolve

ROOT = Path(stackresolve.__file__).parent

# {frozenset of packages in one cycle: why it is accepted for now}. Empty: the graph has none today.
KNOWN_CYCLES: dict[frozenset[str], str] = {}


def _module_name(path: Path) -> str:
    parts = list(path.relative_to(ROOT.parent).with_suffix("").parts)
    return ".".join(parts[:-1] if parts[-1] == "__init__" else parts)


def _node(module: str) -> str:
    """The layer a module belongs to: its subpackage ('resolve'), or a top-level module itself ('request');
    the package root's own names (stackresolve.__version__) belong to 'stackresolve'."""
    parts = module.split(".")
    if len(parts) < 2:
        return "stackresolve"
    top = ROOT / parts[1]
    return parts[1] if top.is_dir() or top.with_suffix(".py").is_file() else "stackresolve"


def _imports(path: Path, type_only: bool = True) -> set[str]:
    """The stackresolve modules `path` imports, anywhere in it (inside functions too); with type_only=False, those
    under `if TYPE_CHECKING:` left out (they never run)."""
    module = _module_name(path)
    is_package = path.name == "__init__.py"
    tree = ast.parse(path.read_text(encoding="utf-8"))
    type_checking = set() if type_only else {
        id(n) for node in ast.walk(tree)
        if isinstance(node, ast.If) and "TYPE_CHECKING" in ast.unparse(node.test) for n in ast.walk(node)}
    found: set[str] = set()
    for node in ast.walk(tree):
        if id(node) in type_checking:
            continue
        if isinstance(node, ast.Import):
            found.update(a.name for a in node.names)
        elif isinstance(node, ast.ImportFrom):
            if node.level:
                base = module.split(".") if is_package else module.split(".")[:-1]
                base = base[:len(base) - (node.level - 1)]
                source = ".".join(base + ([node.module] if node.module else []))
            else:
                source = node.module or ""
            found.add(source)
            found.update(f"{source}.{a.name}" for a in node.names)  # `from pkg import module`
    return {m for m in found if m == "stackresolve" or m.startswith("stackresolve.")}


def _runtime_imports(path: Path) -> set[str]:
    """The stackresolve modules `path` imports outside `if TYPE_CHECKING:` blocks."""
    return _imports(path, type_only=False)


@lru_cache(maxsize=2)
def _graph(type_only: bool = True) -> dict[str, dict[str, set[str]]]:
    """{importing node: {imported node: the importing modules}}, between different nodes only; type-only imports
    included unless type_only=False."""
    edges: dict[str, dict[str, set[str]]] = defaultdict(lambda: defaultdict(set))
    for path in ROOT.rglob("*.py"):
        module = _module_name(path)
        for target in _imports(path, type_only):
            a, b = _node(module), _node(target)
            if a != b and b != "stackresolve":
                edges[a][b].add(module)
    return edges


# The layers, bottom first (DESIGN.md's data flow: values, the facts and the edges that read them, the request,
# the pure resolver, the formats, the commands built on them, the CLI). A node imports only its own layer and the
# layers below it. A new package or top-level module goes into one of them (the test says so).
LAYERS: tuple[tuple[str, frozenset[str]], ...] = (
    # the shipped data and JSON Schemas (packages of the installed wheel, from constraints/ and schemas/): no code
    ("data", frozenset({"constraints", "schemas"})),
    ("values", frozenset({"model"})),                         # enums, values, records, Machine, Stack / Resolution
    ("files", frozenset({"files"})),                          # the one reader and the one atomic writer of files
    ("facts", frozenset({"detect", "knowledge", "index"})),   # probes, the knowledge base, the package index client
    ("request", frozenset({"request"})),                      # text -> values -> Request
    ("resolve", frozenset({"resolve"})),                      # pure: Request -> Resolution
    ("formats", frozenset({"formats"})),                      # decide and render each format (the lock's too)
    ("uses", frozenset({"lock", "doctor", "explain", "fleet", "install", "browse", "site", "refresh"})),  # commands
    ("cli", frozenset({"cli", "__main__"})),
)

# {(importing module, imported node): why it is accepted for now}: imports up a layer, each to be removed. Empty.
KNOWN_UPWARD: dict[tuple[str, str], str] = {}


def _layer_of() -> dict[str, int]:
    return {node: rank for rank, (_, nodes) in enumerate(LAYERS) for node in nodes}


@lru_cache(maxsize=1)
def _module_graph() -> dict[str, dict[str, set[str]]]:
    """{importing module: {imported module: {importing module}}}, the project's modules only: `from pkg import
    name` is an edge to the package's __init__, and to the module pkg.name where there is one."""
    modules = {_module_name(path): path for path in ROOT.rglob("*.py")}
    edges: dict[str, dict[str, set[str]]] = defaultdict(lambda: defaultdict(set))
    for module, path in modules.items():
        for target in _runtime_imports(path):
            if target in modules and target != module:
                edges[module][target].add(module)
    return edges


def _cycles(edges: dict[str, dict[str, set[str]]]) -> list[frozenset[str]]:
    """Strongly connected components of more than one node (Tarjan)."""
    index: dict[str, int] = {}
    low: dict[str, int] = {}
    stack: list[str] = []
    on_stack: set[str] = set()
    out: list[frozenset[str]] = []

    def visit(v: str) -> None:
        index[v] = low[v] = len(index)
        stack.append(v)
        on_stack.add(v)
        for w in edges.get(v, {}):
            if w not in index:
                visit(w)
                low[v] = min(low[v], low[w])
            elif w in on_stack:
                low[v] = min(low[v], index[w])
        if low[v] == index[v]:
            component = set()
            while True:
                w = stack.pop()
                on_stack.discard(w)
                component.add(w)
                if w == v:
                    break
            if len(component) > 1:
                out.append(frozenset(component))

    for v in sorted(set(edges) | {w for targets in edges.values() for w in targets}):
        if v not in index:
            visit(v)
    return out


def test_detect_imports_only_model():
    wrong = {b: sorted(mods) for b, mods in _graph().get("detect", {}).items() if b != "model"}
    assert not wrong, f"detect imports more than model: {wrong}"


def test_model_imports_nothing_of_the_project():
    wrong = {b: sorted(m for m in mods if (m, b) not in KNOWN_UPWARD) for b, mods in _graph().get("model", {}).items()}
    wrong = {b: mods for b, mods in wrong.items() if mods}
    assert not wrong, f"model imports other layers (type-only imports included): {wrong}"


def test_every_package_has_a_layer():
    layer = _layer_of()
    nodes = set(_graph()) | {b for targets in _graph().values() for b in targets}
    unplaced = sorted(nodes - set(layer))
    assert not unplaced, f"packages or top-level modules in no layer: {unplaced} (add each to LAYERS)"
    assert sum(len(nodes) for _, nodes in LAYERS) == len(layer), "a node is in two layers"


def test_no_import_up_a_layer():
    """Type-only and function-local imports included."""
    layer = _layer_of()
    names = [name for name, _ in LAYERS]
    wrong = {f"{a} ({names[layer[a]]}) -> {b} ({names[layer[b]]})":
             sorted(m for m in mods if (m, b) not in KNOWN_UPWARD)
             for a, targets in _graph().items() for b, mods in targets.items()
             if a in layer and b in layer and layer[b] > layer[a]}
    wrong = {edge: mods for edge, mods in wrong.items() if mods}
    assert not wrong, f"imports up a layer (the importing modules): {wrong}"


def test_known_upward_imports_still_exist():
    """An entry of KNOWN_UPWARD whose import is gone is deleted with it (else it would excuse the next one)."""
    graph = _graph()
    stale = [(m, b) for m, b in KNOWN_UPWARD if m not in graph.get(_node(m), {}).get(b, set())]
    assert not stale, f"KNOWN_UPWARD lists imports that no longer exist, delete them: {stale}"


def test_only_the_cli_imports_the_cli():
    wrong = {a: sorted(targets["cli"]) for a, targets in _graph().items()
             if "cli" in targets and a not in ("cli", "__main__")}
    assert not wrong, f"imports of cli from below it: {wrong}"


def test_format_decisions_never_import_their_renderers():
    """A format's decision (formats/*_decide.py, and the helpers of formats/__init__.py they share) never imports a
    renderer (formats/*_render.py, formats/render.py) or the CLI: deciding stays below rendering."""
    graph = _module_graph()
    decisions = [m for m in graph if m == "stackresolve.formats"
                 or m.startswith("stackresolve.formats.") and m.endswith("_decide")]
    assert len(decisions) >= 7, decisions  # the walk found the deciders (a rename would empty it)
    wrong = {m: sorted(t for t in graph[m] if t.endswith("_render") or t == "stackresolve.formats.render"
                       or t.startswith("stackresolve.cli")) for m in decisions}
    wrong = {m: targets for m, targets in wrong.items() if targets}
    assert not wrong, f"a format's decision imports a layer above it: {wrong}"


def test_no_import_cycle_between_packages():
    edges = _graph(type_only=False)
    unexplained = [sorted(c) for c in _cycles(edges) if c not in KNOWN_CYCLES]
    detail = {" <-> ".join(c): {a: {b: sorted(edges[a][b]) for b in edges[a] if b in c} for a in c}
              for c in unexplained}
    assert not unexplained, f"import cycles between packages: {detail}"


# {frozenset of modules in one cycle: why it is accepted for now}: function-local imports that hold a cycle together.
KNOWN_MODULE_CYCLES: dict[frozenset[str], str] = {}  # none today; a cycle kept on purpose is named here, with why


def test_no_import_cycle_between_modules():
    edges = _module_graph()
    cycles = [sorted(c) for c in _cycles(edges) if c not in KNOWN_MODULE_CYCLES]
    detail = {" <-> ".join(c): {a: sorted(b for b in edges[a] if b in c) for a in c} for c in cycles}
    assert not cycles, f"modules that import each other (at module level or inside a function): {detail}"


def test_the_graph_is_read():
    """The walk sees the layers it checks (a broken walk would pass every test above)."""
    edges = _graph()
    assert "model" in edges["detect"] and "knowledge" in edges["resolve"] and "resolve" in edges["doctor"]
    # a type-only import is read for the layers, and left out where only what runs counts (the cycles)
    # (request/build.py names KnowledgeBase in annotations only)
    assert "stackresolve.request.build" in edges["request"]["knowledge"]
    assert "stackresolve.request.build" not in _graph(type_only=False).get("request", {}).get("knowledge", set())
    assert _cycles({"a": {"b": set()}, "b": {"a": set()}}) == [frozenset({"a", "b"})]
    modules = _module_graph()
    # a function-local import is an edge: the pool imports its family modules only when first asked
    assert "stackresolve.resolve.jax" in modules["stackresolve.resolve.pool"]
    assert "stackresolve.resolve.candidates" in modules["stackresolve.resolve.jax"]
