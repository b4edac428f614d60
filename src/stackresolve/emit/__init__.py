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
    "apt": "apt",
    "conda": "conda",
}
# Formats that need a resolved stack. The text summary explains an impossible target, and the PowerShell plan
# turns an impossible native-Windows GPU target into the WSL2 route.
NEEDS_STACK = {"pip", "lock", "dockerfile", "apt", "conda"}


def render_plan(fmt: str, resolution, kb, env_name: str | None = None) -> str:
    stack = resolution.stack
    if stack is not None and stack.framework.value.get("vendor") == "nvidia" and fmt not in ("text", "lock"):
        from stackresolve.emit import nvidia

        return nvidia.render(fmt, resolution, kb)
    module = import_module(f"stackresolve.emit.{PLAN_EMITTERS[fmt]}")
    if fmt == "conda":
        return module.render(resolution, kb, env_name=env_name)
    return module.render(resolution, kb)


def all_plans(resolution, kb, env_name: str | None = None) -> dict[str, str]:
    """Every plan text for the JSON document's `plans` (exactly what each --format prints)."""
    return {fmt: render_plan(fmt, resolution, kb, env_name) for fmt in PLAN_EMITTERS
            if resolution.stack is not None or fmt not in NEEDS_STACK}
