"""Emitters: one module per output format, each a pure function from that format's typed plan to text.

The plan layer (stackresolve.plan) decides; emitters only render. `render_plan` decides and renders one format;
`all_plans` does it for every format (the JSON document's `plans`).
"""

from __future__ import annotations

from importlib import import_module

from stackresolve.plan import PlanOptions, decide

# --format name -> module under stackresolve.emit; each module has render(plan) -> str.
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


def render_plan(fmt: str, resolution, kb, options: PlanOptions = PlanOptions()) -> str:
    module = import_module(f"stackresolve.emit.{PLAN_EMITTERS[fmt]}")
    return module.render(decide(fmt, resolution, kb, options))


def all_plans(resolution, kb, options: PlanOptions = PlanOptions()) -> dict[str, str]:
    """Every plan text for the JSON document's `plans` (exactly what each --format prints)."""
    return {fmt: render_plan(fmt, resolution, kb, options) for fmt in PLAN_EMITTERS
            if resolution.stack is not None or fmt not in NEEDS_STACK}
