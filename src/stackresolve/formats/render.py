"""Printing plans: each format's renderer (formats/<format>_render.py) is a pure function from that format's typed
plan to text.

The deciders (formats/<format>_decide.py) decide; renderers only render. `render_plan` decides and renders one format
(a format that cannot express the stack raises FormatRefused: it is never rendered as a file that does nothing);
`plan_set` does it for every format (the JSON document's `plans`, and `refused_formats` with the reason for each
format that cannot serve the stack).
"""

from __future__ import annotations

from stackresolve.formats import PlanOptions, Refusal
from stackresolve.formats.registry import BY_NAME, FORMATS, decide
from stackresolve.model.record import record


class FormatRefused(Exception):
    """A format that cannot express this stack: the reason, and the formats that can (None: not computed)."""

    def __init__(self, fmt: str, why: str, usable: tuple[str, ...] = ()):
        super().__init__(fmt, why, usable)
        self.fmt, self.why, self.usable = fmt, why, usable

    def __str__(self) -> str:
        can = f" Formats that can express this stack: {', '.join(self.usable)}." if self.usable else ""
        return f"--format {self.fmt} cannot express this stack: {self.why}{can}"


@record
class PlanSet:
    plans: dict[str, str]  # format -> exactly what --format prints
    refused: dict[str, str]  # format -> why it cannot express the stack


def refusal_text(refusal: Refusal) -> str:
    return " ".join(part.strip() for part in (refusal.why, refusal.instead) if part)


def _decided(fmt: str, resolution, kb, options: PlanOptions):
    """The typed plan for a format, or the one-line reason it cannot serve this resolution."""
    plan = decide(fmt, resolution, kb, options)
    return refusal_text(plan) if isinstance(plan, Refusal) else plan


def _render(fmt: str, plan) -> str:
    return BY_NAME[fmt].render(plan)


def plan_set(resolution, kb, options: PlanOptions = PlanOptions()) -> PlanSet:
    plans: dict[str, str] = {}
    refused: dict[str, str] = {}
    for fmt in (f.name for f in FORMATS):
        plan = _decided(fmt, resolution, kb, options)
        if isinstance(plan, str):
            refused[fmt] = plan
        else:
            plans[fmt] = _render(fmt, plan)
    return PlanSet(plans, refused)


def render_plan(fmt: str, resolution, kb, options: PlanOptions = PlanOptions()) -> str:
    plan = _decided(fmt, resolution, kb, options)
    if isinstance(plan, str):
        usable = () if resolution.stack is None else tuple(
            f.name for f in FORMATS if f.name != fmt and not isinstance(_decided(f.name, resolution, kb, options), str))
        raise FormatRefused(fmt, plan, (*usable, "json") if usable else ())
    return _render(fmt, plan)


def all_plans(resolution, kb, options: PlanOptions = PlanOptions()) -> dict[str, str]:
    """Every plan text for the JSON document's `plans` (exactly what each --format prints)."""
    return plan_set(resolution, kb, options).plans
