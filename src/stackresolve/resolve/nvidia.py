"""NVIDIA's TensorFlow 1.15 builds as resolver candidates: the nvidia-tensorflow pip releases and the NGC TF1
containers, no longer maintained (KnowledgeBase.nvidia_project) (constraints/nvidia_tensorflow.toml)."""

from __future__ import annotations

from stackresolve.knowledge.base import KnowledgeBase
from stackresolve.knowledge.records import CompiledArch, CudaToolkit, NvidiaBuild
from stackresolve.model.enums import Delivery, Os, Vendor
from stackresolve.model.values import ComputeCapability
from stackresolve.request.build import Request
from stackresolve.resolve.candidates import PLANNABLE_PYTHONS, FrameworkCandidate

# NVIDIA's TF1 release notes ("GPU Requirements") say "CUDA compute capability 6.0 and later" for every release
# read (constraints/nvidia_tensorflow.toml header); the upper end is what the build's CUDA toolkit targets.
NVIDIA_GPU_FLOOR = ComputeCapability(6, 0)
NVIDIA_INDEX = "nvidia"
NVIDIA_INDEX_NOTE = ("nvidia-tensorflow is not on the default package index (only placeholder 0.0.1.dev releases "
                     "are): NVIDIA hosts it on its own index, {url}, the one nvidia-pyindex adds to pip's "
                     "configuration. The plans name that index with --extra-index-url (nvidia-pyindex itself no "
                     "longer builds on current pip: NVIDIA/tensorflow#74); the exact pin keeps the placeholders out, "
                     "and uv needs --index-strategy unsafe-best-match to look past the first index that has a name")


def nvidia_candidates(kb: KnowledgeBase, request: Request) -> list[FrameworkCandidate]:
    """NVIDIA's TF 1.15 builds: Linux x86_64 (WSL2 included) GPU stacks only."""
    if request.cpu_only or request.os not in (Os.LINUX, Os.WSL2) or request.arch.value != "x86_64":
        return []
    line = kb.line("1.15")
    if line is None:
        return []
    out = []
    supported: dict[ComputeCapability, tuple[str, ...]] = {}  # toolkit's newest cc -> the ccs NVIDIA's builds run on
    for build in sorted(kb.nvidia_builds, key=lambda b: [int(x) for x in b.release.split(".")], reverse=True):
        toolkit = kb.toolkit(build.cuda_line)
        if toolkit is None:
            continue
        pythons = build.pythons if build.kind == "pip" else build.pythons[:1]
        cudnn = ".".join(build.cudnn.split(".")[:3]) if build.cudnn else None
        delivery = (Delivery.CONTAINER if build.kind == "container" else
                    Delivery.PIP_WHEELS if build.cuda_wheels else Delivery.SYSTEM)
        # A container or the CUDA wheels bring exactly NVIDIA's cuDNN; a wheel that takes cuDNN from the system
        # loads any cuDNN TensorFlow's rule accepts (same major, minor not older), so the plan chooses one every
        # install channel carries, as for the stock builds.
        fixed = None if delivery is Delivery.SYSTEM else cudnn
        out.append(FrameworkCandidate(
            vendor=Vendor.NVIDIA,
            distribution="nvidia-tensorflow" if build.kind == "pip" else None,
            version=build.version if build.kind == "pip" else build.tf_base,
            line=line, pythons=tuple(p for p in pythons if p in PLANNABLE_PYTHONS), gpu=True, source=build.source,
            cuda=build.cuda_line, cuda_release=build.cuda, cudnn_compiled=cudnn, cudnn_fixed=fixed,
            delivery=delivery,
            extras=("horovod",) if build.kind == "pip" else (),
            arch=nvidia_arch(kb, build, toolkit, supported), nvidia=build))
    return out


def nvidia_arch(kb: KnowledgeBase, build: NvidiaBuild, toolkit: CudaToolkit,
                supported: dict[ComputeCapability, tuple[str, ...]] | None = None) -> CompiledArch:
    """NVIDIA's builds run on compute capability 6.0 up to what their CUDA targets (no PTX beyond it). `supported`
    keeps the answer per toolkit ceiling: some 60 builds share a handful of toolkits, and listing the known compute
    capabilities sorts every GPU record (it was a fifth of a TF 1.15 plan's resolve time)."""
    ceiling = toolkit.max_cc
    ccs = supported.get(ceiling) if supported is not None else None
    if ccs is None:
        ccs = tuple(c for c in kb.known_ccs() if NVIDIA_GPU_FLOOR <= ComputeCapability.parse(c) <= ceiling)
        if supported is not None:
            supported[ceiling] = ccs
    return CompiledArch(line="1.15", sass=ccs, ptx=(), source=build.source,
                        note="NVIDIA's release notes: compute capability 6.0 and later, up to the CUDA toolkit's "
                             "newest architecture")
