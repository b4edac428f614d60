"""The text summary's one decision: which install plans can serve the stack. The registry decides each install format
as `--format X` with the same options would decide it (nothing is rendered; registry.usable_install_formats), so
the summary's closing line names exactly the formats that print a plan: a format its rule lets through can still be
refused for a gap in the install facts (no base image or apt repository recorded for an old CUDA line, no driver
package for --with-driver), and deciding is the only place that knows."""

from __future__ import annotations

from stackresolve.model.record import record
from stackresolve.model.stack import Resolution


@record
class TextPlan:
    resolution: Resolution
    install_formats: tuple[str, ...]  # the install plans that can serve the stack, in the summary's order
    command: str = ""  # the user's plan command less --format and -o, for the closing line ("": the renderer's own)


def decide(resolution: Resolution, options, install_formats: tuple[str, ...]) -> TextPlan:
    return TextPlan(resolution, install_formats, options.command)
