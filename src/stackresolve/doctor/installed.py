"""The resolver's answer for one installed build: the same `resolve()` `stackresolve plan` runs, with the framework
pool narrowed to the builds that match what is installed (a PyTorch variant, a JAX plugin's CUDA major, one
NVIDIA TensorFlow release). Doctor asks this instead of restating the resolver's rules: whether the installed
build fits this driver and GPU, and what it needs."""

from __future__ import annotations

from dataclasses import dataclass
from typing import Callable

from stackresolve.knowledge.base import KnowledgeBase
from stackresolve.model.stack import ConflictCause, Resolution
from stackresolve.request.build import Request

Conflict = ConflictCause  # doctor's name for one side of a conflict


@dataclass(frozen=True)
class Verdict:
    resolution: Resolution | None  # None when the knowledge base has no build like the installed one

    @property
    def conflicts(self) -> tuple[ConflictCause, ...]:
        """Why the installed build does not fit (stack None)."""
        return self.resolution.causes if self.resolution is not None else ()

    @property
    def known(self) -> bool:
        return self.resolution is not None

    @property
    def fits(self) -> bool:
        return self.resolution is not None and self.resolution.stack is not None

    def conflicts_on(self, component: str) -> list[ConflictCause]:
        return [c for c in self.conflicts if c.component == component]


def resolve_installed(kb: KnowledgeBase, request: Request, keep: Callable[[object], bool]) -> Verdict:
    """Resolve `request` over the builds `keep` accepts (FrameworkCandidate -> bool)."""
    # lazy: no start-up gain (already loaded by then); kept beside its use
    from stackresolve.resolve import resolve
    from stackresolve.resolve.pool import requested_framework_candidates

    if not any(keep(c) for c in requested_framework_candidates(kb, request)):
        return Verdict(None)
    return Verdict(resolve(kb, request, keep=keep))
