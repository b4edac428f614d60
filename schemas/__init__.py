"""JSON Schemas (draft 2020-12) of every JSON document stackresolve prints, shipped inside the package.

One file per document, `NAME.schema.json`; the parts the documents share (a finding, a request, a stack) live in
`common.schema.json` and are referred to by relative `$ref`. `load(NAME)` returns a document's schema bundled
with what it refers to (under `$defs`, each with its own `$id`), so that one file validates on its own, with any
2020-12 validator. Reading these costs the plan path nothing: only `stackresolve schema` and the tests load them.
"""

from __future__ import annotations

import json
from importlib.resources import files

# document name (`stackresolve schema NAME`) -> the "schema" value of the documents it describes
DOCUMENTS = {
    "plan": "stackresolve/plan@1",
    "lock": "stackresolve/lock@1",
    "detect": "stackresolve/detect@1",
    "explain": "stackresolve/explain@1",
    "doctor": "stackresolve/doctor@1",
    "check": "stackresolve/check@1",
    "matrix": "stackresolve/matrix@1",
    "gpus": "stackresolve/gpus@1",
    "show-tf": "stackresolve/show-tf@1",
    "show-torch": "stackresolve/show-torch@1",
    "show-jax": "stackresolve/show-jax@1",
    "show-cuda": "stackresolve/show-cuda@1",
    "show-cudnn": "stackresolve/show-cudnn@1",
    "show-driver": "stackresolve/show-driver@1",
    "show-gpu": "stackresolve/show-gpu@1",
    "show-accelerator": "stackresolve/show-accelerator@1",
    "install": "stackresolve/install@1",
}


def raw(name: str) -> dict:
    """The schema file `name.schema.json` as written (its `$ref`s to other files unresolved)."""
    return json.loads(files(__name__).joinpath(f"{name}.schema.json").read_text(encoding="utf-8"))


def load(name: str) -> dict:
    """The schema of document `name`, with every schema file it refers to embedded under `$defs`."""
    schema = raw(name)
    embedded: dict[str, dict] = {}
    pending = _referenced_files(schema)
    while pending:
        file = pending.pop()
        if file in embedded or file == f"{name}.schema.json":
            continue
        embedded[file] = raw(file.removesuffix(".schema.json"))
        pending |= _referenced_files(embedded[file])
    if embedded:
        schema.setdefault("$defs", {}).update({f.removesuffix(".json"): s for f, s in sorted(embedded.items())})
    return schema


def name_of(document: dict) -> str:
    """The schema name for a document, from its "schema" field ("stackresolve/plan@1" -> "plan")."""
    wanted = document.get("schema")
    for name, value in DOCUMENTS.items():
        if value == wanted:
            return name
    raise KeyError(f"no schema for a document whose schema field is {wanted!r}")


def _referenced_files(node) -> set[str]:
    """The other schema files a schema refers to ("common.schema.json" of "common.schema.json#/$defs/x")."""
    found: set[str] = set()
    if isinstance(node, dict):
        ref = node.get("$ref")
        if isinstance(ref, str) and not ref.startswith("#"):
            found.add(ref.split("#", 1)[0])
        for value in node.values():
            found |= _referenced_files(value)
    elif isinstance(node, list):
        for value in node:
            found |= _referenced_files(value)
    return found
