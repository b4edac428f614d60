"""The resolver's answer for one installed build: the same resolution `stackresolve plan` runs, with the framework
pool narrowed to the builds that match what is installed (a PyTorch variant, a JAX plugin's CUDA major, one
NVIDIA TensorFlow release). Doctor asks this instead of restating the resolver's rules: whether the installed
build fits this driver and GPU, and what it needs."""

from __future__ import annotations

from dataclasses import dataclass
from typing import Callable

from resolvelib import BaseReporter, Resolver

from stackresolve.knowledge.base import KnowledgeBase
from stackresolve.model.stack import Resolution
from stackresolve.request import Request


@dataclass(frozen=True)
class Conflict:
    component: str  # framework | python | cuda | cudnn | driver
    text: str  # the requirement as the resolver words it
    source: str
    required_by: str  # "the request", or the build that requires it


@dataclass(frozen=True)
class Verdict:
    resolution: Resolution | None  # None when the knowledge base has no build like the installed one
    conflicts: tuple[Conflict, ...] = ()  # why the installed build does not fit (stack None)

    @property
    def known(self) -> bool:
        return self.resolution is not None

    @property
    def fits(self) -> bool:
        return self.resolution is not None and self.resolution.stack is not None

    def conflicts_on(self, component: str) -> list[Conflict]:
        return [c for c in self.conflicts if c.component == component]


def resolve_installed(kb: KnowledgeBase, request: Request, keep: Callable[[object], bool]) -> Verdict:
    """Resolve `request` over the builds `keep` accepts (FrameworkCandidate -> bool)."""
    from stackresolve.resolve import index_data
    from stackresolve.resolve.build import build_stack
    from stackresolve.resolve.candidates import requested_framework_candidates
    from stackresolve.resolve.conflicts import _describe, conflict_causes, conflict_findings
    from stackresolve.resolve.provider import StackProvider, root_requirements
    from stackresolve.resolve.solve import UNSOLVABLE

    if not any(keep(c) for c in requested_framework_candidates(kb, request)):
        return Verdict(None)

    class InstalledBuild(StackProvider):
        def find_matches(self, identifier, requirements, incompatibilities):
            found = super().find_matches(identifier, requirements, incompatibilities)
            return [c for c in found if keep(c)] if identifier == "framework" else found

    try:
        result = Resolver(InstalledBuild(kb, request), BaseReporter()).resolve(root_requirements(kb, request),
                                                                                 max_rounds=500)
    except UNSOLVABLE as exc:
        conflicts = tuple(Conflict(info.requirement.name, info.requirement.text, info.requirement.source,
                                   "the request" if info.parent is None else _describe(info.parent))
                          for info in conflict_causes(request, exc))
        return Verdict(Resolution(request, None, tuple(conflict_findings(kb, request, exc)), (), kb.version,
                                  index_data(kb)), conflicts)
    stack, findings = build_stack(kb, request, result.mapping)
    return Verdict(Resolution(request, stack, tuple(findings), (), kb.version, index_data(kb)))
