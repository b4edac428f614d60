"""A finding: one fact about a plan or a machine worth telling the user, with its fix and its source.

Shared by detection, the resolver, doctor and the JSON documents, which all print findings the same way."""

from __future__ import annotations

from dataclasses import dataclass

SEVERITIES = ("error", "warning", "info")


@dataclass(frozen=True)
class Finding:
    severity: str  # error | warning | info
    code: str
    message: str
    fix: str = ""
    source: str = ""

    def to_json(self) -> dict:
        return {"severity": self.severity, "code": self.code, "message": self.message, "fix": self.fix,
                "source": self.source}
