"""The text summary's one decision: which install plans can serve the stack. Each install format is decided as
`--format X` with the same options would decide it (nothing is rendered), so the summary's closing line names
exactly the formats that print a plan: a format its rule lets through can still be refused for a gap in the
install facts (no base image or apt repository recorded for an old CUDA line, no driver package for
--with-driver), and deciding is the only place that knows."""

from __future__ import annotations

from stackresolve.model.record import record
from stackresolve.model.stack import Resolution


@record
class TextPlan:
    resolution: Resolution
    install_formats: tuple[str, ...]  # the install plans that can serve the stack, in the summary's order


def decide(resolution: Resolution, kb, options) -> TextPlan:
    from stackresolve.formats import Refusal, decide as decide_format
    from stackresolve.formats.registry import INSTALL_FORMATS

    usable = () if resolution.stack is None else tuple(
        entry.name for entry in INSTALL_FORMATS
        if not isinstance(decide_format(entry.name, resolution, kb, options), Refusal))
    return TextPlan(resolution, usable)
