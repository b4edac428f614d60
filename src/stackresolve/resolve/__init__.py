"""The resolver: a resolvelib provider over framework, python, cuda, cudnn and driver.

Pure: takes a Request and a KnowledgeBase, returns a Resolution. No I/O, no printing, deterministic.

    resolve(kb, request)          -> Resolution (stack or conflicts, findings, nearest working alternatives)
    resolve(kb, request, keep=f)  -> the same over the framework builds f accepts (doctor: the installed build)
    resolve(kb, request, same_search=key) -> one search per key the caller vouches for (the matrix's signatures)
    resolve_stack(kb, request)    -> Stack | None (no alternatives, no conflict analysis: matrices, alternatives)
"""

from __future__ import annotations

from stackresolve.knowledge.base import KnowledgeBase
from stackresolve.model.stack import Resolution
from stackresolve.request.build import Request
from stackresolve.resolve.build import build_stack
from stackresolve.model.enums import Vendor
from stackresolve.model.record import replace
from stackresolve.resolve.conflicts import (
    conflict_findings,
    conflict_summary,
    degraded,
    find_alternatives,
    native_alternatives,
    nvidia_unfit,
    vendor_alternatives,
)
from stackresolve.resolve.cache import resolver_cache
from stackresolve.resolve.driver import decide_driver, root_driver_requirements
from stackresolve.resolve.provider import build_dependencies
from stackresolve.resolve.solve import UNSOLVABLE, resolve_stack, resolve_with_findings, solve

__all__ = ["resolve", "resolve_stack", "resolve_with_findings"]


def resolve(kb: KnowledgeBase, request: Request, *, keep=None, with_alternatives: bool = True,
            same_search=None) -> Resolution:
    """The one entry. `keep` (FrameworkCandidate -> bool) narrows the framework pool; the alternatives, which look
    beyond the request, are searched only without it.

    `same_search`, a hashable key, is the caller's word that every request it gives the key to makes the same
    choices in the search (framework build, Python, CUDA, cuDNN): the matrix's signature of what the search reads
    of the GPUs. A search that succeeds then runs once per key, and each request's stack is built from its choices
    (build_stack reads the request's own GPUs and driver floors); one that fails runs again for each request, whose
    conflicts name its own GPUs."""
    with_alternatives = with_alternatives and keep is None
    if request.accelerators:  # AMD or Intel GPUs: no CUDA stack to search (resolve/rocm.py)
        # lazy: start-up (only this path needs resolve.rocm)
        from stackresolve.model.stack import Alternative
        from stackresolve.resolve.rocm import cpu_request, resolve_accelerated

        resolution = resolve_accelerated(kb, request, with_alternatives, index_data(kb, request))
        cpu = cpu_request(request)
        stack = resolve_stack(kb, cpu) if resolution.stack is None and with_alternatives else None
        if stack is None:
            return resolution
        return replace(resolution, alternatives=resolution.alternatives + (Alternative(stack, "the CPU build (no GPU)",
                                                                                       cpu),))
    try:
        mapping = solve(kb, request, keep).mapping if same_search is None else \
            _shared_search(kb, request, keep, same_search)
    except UNSOLVABLE as exc:
        findings = conflict_findings(kb, request, exc)
        alternatives = find_alternatives(kb, request) if with_alternatives else ()
        return Resolution(request, None, tuple(findings), tuple(alternatives), kb.version, index_data(kb, request),
                          conflict_summary(request, exc))
    stack, findings = build_stack(kb, request, mapping)
    alternatives = []
    if with_alternatives:
        if stack.framework.vendor is not Vendor.STOCK:
            alternatives = vendor_alternatives(kb, request, stack)
        elif degraded(stack, findings):
            unfit = nvidia_unfit(kb, request, stack)
            findings += [unfit] if unfit else []
            alternatives = native_alternatives(kb, request, stack)
    return Resolution(request, stack, tuple(findings), tuple(alternatives), kb.version, index_data(kb, request))


def _shared_search(kb: KnowledgeBase, request: Request, keep, key) -> dict:
    """The shared search's choices, with the driver decided for this request: the search's driver candidate was
    made from the first request's GPUs, whose floors may differ (the key vouches only that every driver
    requirement accepts the same choices)."""
    searches = resolver_cache(kb).searches
    result = searches.get(key)
    if result is None:
        result = searches[key] = solve(kb, request, keep)  # raises where it fails: nothing is kept
        return result.mapping  # searched for this request: its driver is this request's
    mapping = result.mapping
    if "driver" not in mapping:
        return mapping
    build = mapping["framework"]
    reqs = root_driver_requirements(kb, request) + [r for r in build_dependencies(kb, request, build)
                                                    if r.name == "driver"]
    return {**mapping, "driver": decide_driver(kb, request, reqs)}


def index_data(kb: KnowledgeBase, request: Request | None = None) -> str:
    """How old the machine-read data behind a plan is, per kind, for the kinds this framework's plans use:
    "TensorFlow wheels fetched 2026-11-28, refreshed; cuDNN, CUDA fetched 2026-11-22, shipped"."""
    framework = request.framework.value if request is not None else "tensorflow"
    macos = request is not None and request.os.value == "macos"
    return kb.memo(("index_data", framework, macos), lambda: _index_data(kb, framework, macos))  # once per matrix


def _index_data(kb: KnowledgeBase, framework: str, macos: bool) -> str:
    groups: dict[tuple[str, str], list[str]] = {}
    for _, label, fetched, origin in kb.kinds_used_by(framework, macos):
        if fetched:
            groups.setdefault((fetched, origin), []).append(label)
    return "; ".join(f"{', '.join(labels)} fetched {fetched}, {origin}" for (fetched, origin), labels in groups.items())
