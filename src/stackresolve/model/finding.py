"""A finding: one fact about a plan or a machine worth telling the user, with its fix and its source.

Shared by detection, the resolver, doctor and the JSON documents, which all print findings the same way."""

from __future__ import annotations

from stackresolve.model.enums import Severity
from stackresolve.model.record import record

SEVERITIES = Severity.names()  # most serious first


@record
class Finding:
    severity: Severity
    code: str
    message: str
    fix: str = ""
    source: str = ""

    def __post_init__(self) -> None:
        object.__setattr__(self, "severity", Severity(self.severity))

    def to_json(self) -> dict:
        return {"severity": self.severity.value, "code": self.code, "message": self.message, "fix": self.fix,
                "source": self.source}
