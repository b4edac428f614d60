"""`--format lock`: stackresolve.lock, the whole resolved stack as JSON for bootstrap scripts to commit.

JSON rather than TOML: the standard library writes it, and every bootstrap language reads it.
"""

from __future__ import annotations

import json

from stackresolve import __version__
from stackresolve.emit.pip import requirement_lines
from stackresolve.resolve import Resolution

SCHEMA = "stackresolve/lock@1"


def document(resolution: Resolution) -> dict:
    stack = resolution.stack
    return {
        "schema": SCHEMA,
        "generated_by": f"stackresolve {__version__}",
        "knowledge_base": resolution.kb_version,
        "request": resolution.request.to_json(),
        "stack": stack.to_json(),
        "pip": requirement_lines(resolution),
    }


def render(resolution: Resolution, kb=None) -> str:
    return json.dumps(document(resolution), indent=2, sort_keys=False) + "\n"
