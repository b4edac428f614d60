"""The resolvelib provider over five components (framework, python, cuda, cudnn, driver), and which requirements
(resolve/requirements.py) each candidate and the request impose. Every requirement carries the fact behind it and
its source, so a conflict can name both sides."""

from __future__ import annotations

from typing import Callable

from resolvelib import AbstractProvider

from stackresolve.knowledge.base import KnowledgeBase
from stackresolve.model.enums import Framework
from stackresolve.request.build import Request
from stackresolve.resolve.cache import resolver_cache
from stackresolve.resolve.candidates import (
    PYTHON_CANDIDATES,
    CudnnCandidate,
    FrameworkCandidate,
    all_native,
    as_version,
    cuda_pool,
    cudnn_pool,
)
from stackresolve.resolve.driver import decide_driver, driver_dependencies, root_driver_requirements
from stackresolve.resolve.pool import requested_framework_candidates
from stackresolve.resolve.requirements import (
    BuildCuda,
    BuildCudnn,
    BuildPythons,
    CompiledCudnn,
    CudaSupports,
    CudnnAsked,
    CudnnSupports,
    HasCodeFor,
    PythonAsked,
    RequestedBuild,
    Requirement,
)

ORDER = {"framework": 0, "python": 1, "cuda": 2, "cudnn": 3, "driver": 4}


class StackProvider(AbstractProvider):
    """`keep`, when given, narrows the framework pool to the builds it accepts (doctor: the installed build;
    explain: the log's build where one fixes the error); every other rule is the same."""

    def __init__(self, kb: KnowledgeBase, request: Request, keep: Callable[[object], bool] | None = None):
        self.kb = kb
        self.request = request
        self.keep = keep
        self.requested = requested_framework_candidates(kb, request)  # asked once: its memo key is long
        self.cache = resolver_cache(kb)
        self.pools = {"framework": self._framework_pool, "python": self._python_pool, "cuda": self._cuda_pool,
                      "cudnn": self._cudnn_pool, "driver": self._driver_pool}

    def identify(self, requirement_or_candidate):
        return requirement_or_candidate.name

    def get_preference(self, identifier, resolutions, candidates, information, backtrack_causes):
        return ORDER[identifier]

    def narrow_requirement_selection(self, identifiers, resolutions, candidates, information, backtrack_causes):
        # The preference is a fixed order: the first unsatisfied component is the one to pin (resolvelib then
        # asks no preference of the others).
        return (min(identifiers, key=ORDER.__getitem__),)

    def is_satisfied_by(self, requirement: Requirement, candidate) -> bool:
        return requirement.is_satisfied_by(candidate)

    def find_matches(self, identifier, requirements, incompatibilities):
        reqs = list(requirements[identifier])
        pool, remembered = self.pools[identifier](reqs)
        if remembered:
            key = (id(pool), frozenset([r.key for r in reqs]))
            matches = self.cache.matches.get(key)
            if matches is None:
                matches = self.cache.matches[key] = self._matching(pool, reqs)
        else:
            matches = tuple(c for c in pool if all(r.is_satisfied_by(c) for r in reqs))
        bad = list(incompatibilities[identifier])
        return [c for c in matches if c not in bad] if bad else matches

    def _matching(self, pool: list, reqs: list[Requirement]) -> tuple:
        """The candidates of a remembered pool that satisfy every requirement, in the pool's order."""
        sets = []
        for r in reqs:
            found = self.cache.passing.get((id(pool), r.key))
            if found is None:
                found = self.cache.passing[id(pool), r.key] = frozenset(c for c in pool if r.is_satisfied_by(c))
            sets.append(found)
        accepted = frozenset.intersection(*sets) if sets else frozenset(pool)
        return tuple(c for c in pool if c in accepted)

    # Each returns (the pool, in the order to try it; whether it is the knowledge base's memoized list)
    def _framework_pool(self, reqs):
        pool = self.requested
        if self.keep is None:
            return pool, True
        return [c for c in pool if self.keep(c)], False

    def _python_pool(self, reqs):
        return PYTHON_CANDIDATES, True

    def _cuda_pool(self, reqs):
        return cuda_pool(self.kb, next((r.line for r in reqs if r.line), None)), True

    def _cudnn_pool(self, reqs):
        cuda = next((r.cuda for r in reqs if r.cuda), None)
        pool = cudnn_pool(self.kb, cuda)
        prefer = next((r.prefer for r in reqs if r.prefer), None)
        only = next((r.channels for r in reqs if r.channels is not None), None)
        if prefer and cuda:
            os = self.request.os

            def order() -> list[CudnnCandidate]:
                channels = {name: versions for name, versions in self.kb.cudnn_channels(cuda, os.value).items()
                            if only is None or name in only}
                return preference_order(pool, prefer, channels)

            key = (cuda, prefer, os, only)
            ordered = self.cache.cudnn_orders.get(key)
            if ordered is None:
                ordered = self.cache.cudnn_orders[key] = order()
            pool = ordered
        return pool, True

    def _driver_pool(self, reqs):
        return [decide_driver(self.kb, self.request, reqs)], False

    def get_dependencies(self, candidate):
        if not isinstance(candidate, FrameworkCandidate):
            return ()
        return build_dependencies(self.kb, self.request, candidate)


def build_dependencies(kb: KnowledgeBase, request: Request, fw: FrameworkCandidate) -> tuple[Requirement, ...]:
    """framework_dependencies, remembered in the resolver's cache. What a build requires depends on the request
    through these fields only: of the GPUs, whether the build has machine code for all of them (minor-version
    compatibility), and for NVIDIA's builds their names (forward compatibility on data-center GPUs)."""
    dependencies = resolver_cache(kb).dependencies
    key = (fw, request.os, request.wheel_platform, request.cudnn, all_native(request, fw),
           tuple([g.name for g in request.gpus]) if fw.nvidia else ())
    found = dependencies.get(key)
    if found is None:
        found = dependencies[key] = tuple(framework_dependencies(kb, request, fw))
    return found


def preference_order(pool: list[CudnnCandidate], prefer: str,
                     channels: dict[str, frozenset[str]]) -> list[CudnnCandidate]:
    """The order cuDNN releases are tried in, so that every plan installs the same cuDNN: releases that every
    install channel of this OS carries come first; among them the preferred minor (the preferred release, then
    its newest sibling patch), then the nearest newer minor (its newest patch), then the nearest older one."""
    wanted = as_version(prefer)
    depth = len(wanted.release)

    def rank(c: CudnnCandidate):
        missing = sum(c.release.version not in versions for versions in channels.values())
        minor = c.key.release[:2]
        newest_first = tuple(-x for x in c.key.release)
        if minor == wanted.release[:2]:
            return (missing, 0, c.key.release[:depth] != wanted.release, (), newest_first)
        if c.key > wanted:
            return (missing, 1, False, minor, newest_first)
        return (missing, 2, False, tuple(-x for x in minor), newest_first)

    return sorted(pool, key=rank)


def preferred_cudnn(kb: KnowledgeBase, request: Request, fw: FrameworkCandidate) -> tuple[str | None, str]:
    """The cuDNN plans install for a build, and why: what the build brings, else the user's --cudnn, else what
    TensorFlow's own release artifacts used for the line (the newest patch of the minor where the source names
    only a minor), else the minor it was compiled with."""
    if fw.cudnn_fixed:
        return fw.cudnn_fixed, "fixed"
    if fw.framework is not Framework.TENSORFLOW:
        return fw.cudnn_compiled, "wheels"  # the cuDNN the framework's pip wheels bring (a range for JAX)
    if request.cudnn:
        return request.cudnn, "request"
    artifact = kb.cudnn_artifact(fw.line.version, request.os)
    if artifact is not None and artifact.cuda == fw.cuda:
        return artifact.cudnn, "artifact"
    return fw.cudnn_compiled, "compiled"


def framework_dependencies(kb: KnowledgeBase, request: Request, fw: FrameworkCandidate) -> list[Requirement]:
    deps: list[Requirement] = [BuildPythons(fw, "the container" if fw.container else request.wheel_platform)]
    if not fw.gpu:
        return deps
    # PyTorch and JAX bring CUDA and cuDNN in their wheels: the CUDA line decides the driver; there is no cuDNN to
    # choose (the plan names the one the wheels bring).
    deps.append(BuildCuda(fw, request.os))
    if fw.framework is Framework.TENSORFLOW:
        prefer, _ = preferred_cudnn(kb, request, fw)
        deps.append(BuildCudnn(fw, prefer) if fw.cudnn_fixed else CompiledCudnn(fw, prefer))
    # The driver last: resolvelib reports a build's first requirement that cannot be met, and one that no driver
    # can fix (a CUDA or cuDNN that no longer supports the GPU) is the reason to give before a driver minimum.
    return deps + driver_dependencies(kb, request, fw)


def as_set(kb: KnowledgeBase, pool: list) -> frozenset:
    """A pool as a set, made once per pool: {id: (the pool, its set)} (holding the pool keeps its id its own)."""
    sets = resolver_cache(kb).pool_sets
    entry = sets.get(id(pool))
    if entry is None or entry[0] is not pool:
        entry = sets[id(pool)] = (pool, frozenset(pool))
    return entry[1]


def root_requirements(kb: KnowledgeBase, request: Request,
                      requested: list[FrameworkCandidate] | None = None) -> list[Requirement]:
    # The provider's pool is already narrowed to the requested versions; this root requirement names the
    # request in conflict explanations and holds the resolver to that pool.
    if requested is None:
        requested = requested_framework_candidates(kb, request)
    vendor = f" ({request.vendor} builds)" if request.vendor else ""
    reqs: list[Requirement] = [RequestedBuild(as_set(kb, requested), f"{request.asked}{vendor} was asked for "
                                                      f"({request.framework.flag})")]
    if request.python:
        reqs.append(PythonAsked(request.python))
    if request.cpu_only:
        return reqs
    tensorflow = request.framework is Framework.TENSORFLOW
    if request.cudnn and tensorflow:
        reqs.append(CudnnAsked(request.cudnn))
    for gpu in request.gpus:
        reqs.append(HasCodeFor(gpu, request.framework))
        reqs.append(CudaSupports(gpu))
        if tensorflow:
            reqs.append(CudnnSupports(gpu))
    return reqs + root_driver_requirements(kb, request)
