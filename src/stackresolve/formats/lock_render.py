"""`--format lock`: stackresolve.lock (see stackresolve.lock for the format)."""

from __future__ import annotations

import json

from stackresolve.formats.script import requirement_lines
from stackresolve.lock import document
from stackresolve.formats.pip_decide import PipPlan


def render(plan: PipPlan) -> str:
    requirement_lines(plan)
    return json.dumps(document(plan.resolution, plan), indent=2, sort_keys=False) + "\n"
