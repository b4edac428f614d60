"""The framework builds a request may use, in the order the resolver tries them: every release line of the
requested framework, the builds its family module makes for it (resolve/tensorflow.py, pytorch.py, jax.py; on
Apple Silicon apple.py, NVIDIA's TF 1.15 builds nvidia.py), narrowed to the request's version, vendor and CUDA
line."""

from __future__ import annotations

from stackresolve.knowledge.base import KnowledgeBase
from stackresolve.knowledge.rules import toolkit_predates, version_wanted_fits
from stackresolve.model.enums import Framework, GpuSupport, Vendor
from stackresolve.model.values import ComputeCapability
from stackresolve.request.build import Request
from stackresolve.resolve.candidates import FrameworkCandidate, support_on


def family(framework: Framework):
    """The module that builds a framework's candidates (lines, line_releases, line_candidates), imported on first
    use: a TensorFlow plan loads neither PyTorch's nor JAX's, nor the framework knowledge they read."""
    if framework is Framework.PYTORCH:
        # lazy: start-up (only this path needs resolve.pytorch)
        import stackresolve.resolve.pytorch as module
    # lazy: start-up (only this path needs resolve.jax, resolve.tensorflow)
    elif framework is Framework.JAX:
        import stackresolve.resolve.jax as module
    else:
        import stackresolve.resolve.tensorflow as module
    return module


def fit_rank(kb: KnowledgeBase, candidate: FrameworkCandidate, ccs: tuple[ComputeCapability, ...]) -> int:
    """How well a build runs on the request's GPUs, best 0: machine code for every GPU, then unknown code,
    then PTX only or a CUDA that predates a GPU (its libraries carry no kernels for it), then nothing."""
    if not candidate.gpu or not ccs:
        return 0
    rank = max(support_on(candidate, cc).rank for cc in ccs)
    toolkit = kb.toolkit(candidate.cuda) if candidate.cuda else None
    if toolkit is not None and any(toolkit_predates(toolkit, cc) for cc in ccs):
        rank = max(rank, GpuSupport.PTX_JIT.rank)
    return rank


def requested_framework_candidates(kb: KnowledgeBase, request: Request) -> list[FrameworkCandidate]:
    """The builds that match the request's version, OS and vendor, in the order the resolver should try them:
    newest line first; within a line, builds that run natively on these GPUs first, stock before NVIDIA's, pip
    before a container, newest release first."""
    ccs = tuple(g.capability for g in request.gpus)
    spec = str(request.spec)
    key = ("requested_framework_candidates", request.framework, request.os, request.arch, request.wheel_platform,
           request.cpu_only, request.apple_gpu is not None, spec, request.vendor, request.container,
           request.cuda_line)

    def matching() -> list[FrameworkCandidate]:
        lines = [l for l in release_lines(kb, request.framework) if kb.memo(
            ("line_may_match", request.framework, l.version, spec), lambda: _line_may_match(kb, request, l))]
        return [c for line in lines for c in line_candidates(kb, request, line)
                if request.spec.contains(c.key, prereleases=True)
                and (request.vendor is None or c.vendor is request.vendor)
                and (request.container is None or (c.container is not None) is request.container)
                and (request.cuda_line is None or bool(c.cuda and version_wanted_fits(c.cuda, request.cuda_line,
                                                                                      "cuda")))]

    pool = kb.memo(key, matching)

    def ordered() -> list[FrameworkCandidate]:
        out = sorted(pool, key=lambda c: c.key, reverse=True)
        # An Apple GPU: builds that use it (through Metal) before newer ones that would run on the CPU.
        out.sort(key=lambda c: (request.apple_gpu is not None and not c.metal,
                                -c.line.key.major, -c.line.key.minor, fit_rank(kb, c, ccs),
                                c.vendor is not Vendor.STOCK, c.container is not None, c.preference))
        return out

    return kb.memo(key + ("ordered",) + ccs, ordered)  # "ordered": without GPUs the key would be the pool's


def release_lines(kb: KnowledgeBase, framework: Framework) -> list:
    """The release lines of a framework, newest first."""
    return family(framework).lines(kb)


def _line_may_match(kb: KnowledgeBase, request: Request, line) -> bool:
    """Whether any release of a line falls in the request's version range (so its candidates are worth
    building)."""
    versions = family(request.framework).line_releases(kb, line.version)
    # filter(prereleases=True) keeps what contains(prereleases=True) accepts, and tests a list about 3x faster
    return next(iter(request.spec.filter(versions, prereleases=True)), None) is not None


def line_candidates(kb: KnowledgeBase, request: Request, line) -> list[FrameworkCandidate]:
    """Every build of one release line that could serve this request's OS and stack kind, newest first; built on
    first use (a plan for one line builds that line's candidates only)."""
    key = ("line_candidates", request.framework, line.version, request.os, request.arch, request.wheel_platform,
           request.cpu_only, request.apple_gpu is not None)
    return kb.memo(key, lambda: family(request.framework).line_candidates(kb, request, line))
