"""Running resolvelib over the provider; the stack alone, without conflict analysis or alternatives."""

from __future__ import annotations

from resolvelib import BaseReporter, ResolutionImpossible, Resolver
from resolvelib.resolvers import ResolutionTooDeep

from stackresolve.knowledge.base import KnowledgeBase
from stackresolve.model.finding import Finding
from stackresolve.model.stack import Stack
from stackresolve.request.build import Request
from stackresolve.resolve.build import build_stack
from stackresolve.resolve.provider import StackProvider, root_requirements

UNSOLVABLE = (ResolutionImpossible, ResolutionTooDeep)


def solve(kb: KnowledgeBase, request: Request, keep=None):
    """The resolvelib result; raises ResolutionImpossible / ResolutionTooDeep. `keep` narrows the framework pool."""
    provider = StackProvider(kb, request, keep)
    return Resolver(provider, BaseReporter()).resolve(root_requirements(kb, request, provider.requested),
                                                       max_rounds=500)


def resolve_with_findings(kb: KnowledgeBase, request: Request) -> tuple[Stack | None, list[Finding]]:
    """(stack, findings), or (None, []) when nothing fits."""
    if request.accelerators:  # AMD or Intel GPUs (resolve/rocm.py)
        # lazy: start-up (only this path needs resolve.rocm)
        from stackresolve.resolve.rocm import resolve_accelerated

        resolution = resolve_accelerated(kb, request, with_alternatives=False)
        return resolution.stack, (list(resolution.findings) if resolution.stack is not None else [])
    try:
        result = solve(kb, request)
    except UNSOLVABLE:
        return None, []
    return build_stack(kb, request, result.mapping)


def resolve_stack(kb: KnowledgeBase, request: Request) -> Stack | None:
    """The stack alone (no alternatives, no conflict analysis): for matrices and alternatives."""
    return resolve_with_findings(kb, request)[0]
