"""Emitters: one module per output format, each a pure function (Resolution, KnowledgeBase) -> str.

The knowledge base is passed for install facts (package names, image tags) that are not part of the resolved
stack itself; emitters do no I/O.
"""

from __future__ import annotations

from importlib import import_module

# --format name -> module under stackresolve.emit; each module has render(resolution, kb) -> str.
PLAN_EMITTERS = {
    "text": "text",
    "pip": "pip",
    "lock": "lock",
    "dockerfile": "dockerfile",
    "powershell": "powershell",
}
# Formats that need a resolved stack. The text summary explains an impossible target, and the PowerShell plan
# turns an impossible native-Windows GPU target into the WSL2 route.
NEEDS_STACK = {"pip", "lock", "dockerfile"}


def render_plan(fmt: str, resolution, kb) -> str:
    return import_module(f"stackresolve.emit.{PLAN_EMITTERS[fmt]}").render(resolution, kb)


def all_plans(resolution, kb) -> dict[str, str]:
    """Every plan text for the JSON document's `plans` (exactly what each --format prints)."""
    return {fmt: render_plan(fmt, resolution, kb) for fmt in PLAN_EMITTERS
            if resolution.stack is not None or fmt not in NEEDS_STACK}
