"""A finding as text, the one rendering the text plan and doctor's report share: its head line, then its fix and
its source indented beneath."""

from __future__ import annotations

from stackresolve.model.finding import Finding


def finding_lines(finding: Finding, head: str, source: str, source_label: str) -> list[str]:
    """`head`: what names the finding before its message (the text plan lists every severity in one list, so
    "[error] code:"; doctor groups by severity under a heading, so "[code]"). `source`: its source as the caller
    cites it (the text plan's numbered references, doctor's full text); nothing when empty."""
    out = [f"  {head} {finding.message}"]
    if finding.fix:
        out.append(f"      fix: {finding.fix}")
    if source:
        out.append(f"      {source_label}: {source}")
    return out
