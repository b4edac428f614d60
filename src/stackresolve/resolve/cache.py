"""The resolver's own caches, one object per knowledge base (as pip's resolver Factory owns its caches): what the
provider and the driver decision remember between resolutions, each table named for what it holds, so that no
other part of the program reads or fills them by a tuple key it has to spell the same way."""

from __future__ import annotations

from stackresolve.knowledge.base import KnowledgeBase


class ResolverCache:
    """Tables kept for the knowledge base's life (a matrix resolves hundreds of cells against one): everything in
    them is derived from the knowledge base and the requests' own fields, so it never goes stale.

    The framework, Python, CUDA and cuDNN pools the provider remembers answers for are the knowledge base's
    memoized lists (resolve/candidates.py, resolve/pool.py), alive as long as it is, so a pool's id names it."""

    __slots__ = ("passing", "matches", "dependencies", "cudnn_orders", "root_drivers", "driver_facts",
                 "newest_drivers", "pool_sets", "searches")

    def __init__(self) -> None:
        # {(id(pool), requirement key): the candidates of the pool that satisfy it}
        self.passing: dict = {}
        # {(id(pool), frozenset of requirement keys): the candidates that satisfy all, in the pool's order}
        self.matches: dict = {}
        # {(build, what the request's fields it reads): the requirements the build brings}
        self.dependencies: dict = {}
        # {(CUDA line, preferred cuDNN, OS, channels): the cuDNN pool in the order to try it}
        self.cudnn_orders: dict = {}
        # {(installed driver, OS, the GPUs' compute capabilities, own drivers and names): what they ask of the driver}
        self.root_drivers: dict = {}
        # {(build, the judged driver versions, what of the request the driver reads): the driver candidate, with the
        # plan's driver decided}
        self.driver_facts: dict = {}
        # {the GPUs' compute capabilities: the architecture record of the newest driver that supports them all}
        self.newest_drivers: dict = {}
        # {id(pool): (the pool, its set)}: the requested builds as the root requirement holds them (holding the pool
        # keeps its id its own)
        self.pool_sets: dict = {}
        # {the caller's key: resolvelib's result}: resolve(..., same_search=key), one search per key
        self.searches: dict = {}


def resolver_cache(kb: KnowledgeBase) -> ResolverCache:
    """The knowledge base's resolver cache, made on first use."""
    return kb.memo(ResolverCache, ResolverCache)
