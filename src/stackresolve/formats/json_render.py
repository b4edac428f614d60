"""The `stackresolve/plan@1` JSON document (see DESIGN.md); fields are only ever added."""

from __future__ import annotations

import json

from stackresolve.model.stack import Resolution

SCHEMA = "stackresolve/plan@1"


def document(resolution: Resolution, plans: dict[str, str], refused: dict[str, str] | None = None) -> dict:
    return {
        "schema": SCHEMA,
        "status": resolution.status,
        "request": resolution.request.to_json(),
        "stack": resolution.stack.to_json() if resolution.stack else None,
        "findings": [f.to_json() for f in resolution.findings],
        "alternatives": [a.to_json() for a in resolution.alternatives],
        "plans": plans,
        "knowledge_base": {"version": resolution.kb_version, "index_data": resolution.index_data},
        # format -> why it cannot express this stack (those formats are absent from `plans`; --format exits 2)
        "refused_formats": dict(refused or {}),
    }


def render(resolution: Resolution, plans: dict[str, str], refused: dict[str, str] | None = None) -> str:
    return json.dumps(document(resolution, plans, refused), indent=2) + "\n"
