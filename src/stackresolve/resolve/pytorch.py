"""PyTorch's builds as resolver candidates: one per release and CUDA variant built for the platform (the default
index's variant and the variants on PyTorch's own index), with the GPU architectures compiled into torch's kernels;
the CPU build where the request is CPU-only or the platform has no CUDA build (with the MPS backend on an Apple
GPU). Every fact comes from constraints/pytorch.toml."""

from __future__ import annotations

import re

from packaging.version import Version

from stackresolve.knowledge.base import KnowledgeBase
from stackresolve.knowledge.frameworks import FrameworkKnowledge, TorchRelease, TorchVariant
from stackresolve.knowledge.records import CompiledArch
from stackresolve.model.enums import Delivery, Framework, Vendor
from stackresolve.request.build import Request
from stackresolve.resolve.candidates import FrameworkCandidate, ReleaseLine, newest_lines_first, plannable

# PyTorch's own index serves a CPU-only build of every release (pytorch.org "Get started": Linux, CPU:
# `--index-url https://download.pytorch.org/whl/cpu`); before 2.0 the same variant came through
# --extra-index-url (1.11-1.13) or the torch_stable.html find-links page with a +cpu local version (<= 1.10).
TORCH_CPU_INDEX = "https://download.pytorch.org/whl/cpu"
TORCH_FIND_LINKS = "https://download.pytorch.org/whl/torch_stable.html"
TORCH_INDEX_SOURCE = ("pytorch/pytorch.github.io:_get_started/previous-versions.md@e3f009bbc0d7509ed5c85b633313ec72a"
                      "a2d1a40 (pip commands per release: -f torch_stable.html with +cuXXX/+cpu up to 1.10, "
                      "--extra-index-url .../whl/<variant> for 1.11-1.13, --index-url .../whl/<variant> from 2.0)")


# -- lines ----------------------------------------------------------------------------------------------------
def lines(kb: KnowledgeBase) -> list[ReleaseLine]:
    """PyTorch's release lines, newest first."""
    return kb.memo(("framework_lines", Framework.PYTORCH),
                   lambda: newest_lines_first((r.line, r.source) for r in kb.frameworks.torch_releases))


def line_releases(kb: KnowledgeBase, line: str) -> list[Version]:
    return [r.key for r in kb.frameworks.torch_releases if r.line == line]


def line_candidates(kb: KnowledgeBase, request: Request, line: ReleaseLine) -> list[FrameworkCandidate]:
    out = [c for r in kb.frameworks.torch_releases if r.line == line.version
           for c in torch_candidates(kb, request, line, r)]
    return sorted(out, key=lambda c: c.key, reverse=True)


# -- builds ---------------------------------------------------------------------------------------------------
def torch_candidates(kb: KnowledgeBase, request: Request, line: ReleaseLine,
                     release: TorchRelease) -> list[FrameworkCandidate]:
    fk = kb.frameworks
    platform = request.wheel_platform
    pythons = plannable(release.pythons.get(platform, ()))
    companions = installable_companions(fk, release, platform)
    for companion in companions:
        pythons = tuple(p for p in pythons if p in companion.pythons.get(platform, ()))
    if not pythons:
        return []
    common = dict(vendor=Vendor.STOCK, distribution="torch", version=release.version, line=line,
                  pythons=pythons, framework=Framework.PYTORCH)
    if request.cpu_only:
        return [_torch_cpu(fk, request, release, common)]
    if platform not in ("linux", "linux_aarch64", "windows"):
        return []
    out = []
    for variant in fk.torch_variants_of(release.version, platform):
        if variant.name not in release.variants.get(platform, ()) and not variant.default_index:
            continue  # a line-wide record for a variant this release was not built in
        if variant.default_index and release.default_variant.get(platform) != variant.name:
            continue
        out.append(_torch_gpu(kb, request, release, variant, common))
    return out


def installable_companions(fk: FrameworkKnowledge, release: TorchRelease, platform: str,
                           default_index: bool = False) -> list:
    """The torchvision and torchaudio releases made for a torch release that have wheels for this platform (a
    plan's Python must have wheels of each: torchvision 0.20.1 has none for 3.13, torch 2.5.1 has). The release
    those packages pin to it (`==`) always; with `default_index` (a build pip takes from the default index, where
    the ranges were read) also the newest whose Requires-Dist range admits it (torchaudio 2.11.1: torch>=2.11).
    PyTorch's own indexes publish the pinned companions with each release; a range-matched one need not be there."""
    out = []
    for package in ("torchvision", "torchaudio"):
        companion = fk.companion_for(package, release) if default_index else \
            fk.torch_companion(package, getattr(release, package)) if getattr(release, package) else None
        if companion is not None and companion.pythons.get(platform):
            out.append(companion)
    return out


def _companions(fk: FrameworkKnowledge, release: TorchRelease, platform: str, local: str,
                common: dict | None = None) -> tuple[str, ...]:
    """The companion requirements of a build; `common` (the candidate's fields) given for a build from the default
    index: a range-matched companion narrows its Pythons to those it has wheels for, or is left out when it has none
    of them (torch installs without it)."""
    out = []
    for companion in installable_companions(fk, release, platform, default_index=common is not None):
        if common is not None:
            shared = tuple(p for p in common["pythons"] if p in companion.pythons.get(platform, ()))
            if not shared:
                continue
            common["pythons"] = shared
        # torchaudio keeps no local label: pip takes the variant's build from the extra index, as it sorts above
        # the plain one (PyTorch's own commands write it that way).
        label = local if companion.package == "torchvision" else ""
        out.append(f"{companion.package}=={companion.version}{label}")
    return tuple(out)


def _torch_index(release: TorchRelease, url: str, variant: str) -> tuple[str, str, str]:
    """(index option, URL, local version label) for a build on PyTorch's own index, as its docs install it."""
    key = release.key
    if key < Version("1.11"):
        # The find-links page of that era: .../whl/torch_stable.html, or .../whl/<variant>/torch_stable.html
        page = url if url.endswith(".html") else (f"{url.rstrip('/')}/torch_stable.html" if url else TORCH_FIND_LINKS)
        return "--find-links", page, f"+{variant}"
    if key < Version("2.0"):
        return "--extra-index-url", url, f"+{variant}"
    return "--index-url", url, ""


def _torch_cpu(fk: FrameworkKnowledge, request: Request, release: TorchRelease, common: dict) -> FrameworkCandidate:
    platform = request.wheel_platform
    notes = []
    metal = False
    macos_min = ""
    if request.apple_gpu:
        mps = fk.torch_mps_of(release.version)
        metal = bool(mps and mps.mps)
        if mps is None or not mps.mps:
            notes.append(f"PyTorch {release.version} has no MPS backend (the Apple GPU is used from 1.12): it runs "
                         f"on the CPU")
        elif mps.macos_min:
            notes.append(f"PyTorch {release.version}'s MPS backend needs macOS {mps.macos_min} or later")
            macos_min = mps.macos_min
    if release.default_variant.get(platform, "cpu") == "cpu":
        common = dict(common)
        companions = _companions(fk, release, platform, "", common)
        return FrameworkCandidate(**common, gpu=False, source=release.source, variant="cpu",
                                  companions=companions, metal=metal, notes=tuple(notes), macos_min=macos_min)
    # Linux x86_64 (and aarch64 from 2.11): the default index carries a CUDA build; the CPU build is PyTorch's.
    option, url, local = _torch_index(release, TORCH_CPU_INDEX, "cpu")
    return FrameworkCandidate(**common, gpu=False, source=f"{release.source}; {TORCH_INDEX_SOURCE}", variant="cpu",
                              index_url=url, index_option=option, local_version=local,
                              companions=_companions(fk, release, platform, local))


def torch_cudnn(release: TorchRelease, variant: TorchVariant, platform: str) -> str:
    """The cuDNN a variant brings ("9.1.0.70"), "" when not recorded."""
    if variant.cudnn:
        return variant.cudnn
    if variant.default_index:
        for text in release.default_requires.get(platform, ()):
            match = re.fullmatch(r"nvidia-cudnn-cu\d+==([\d.]+)", text.strip())
            if match:
                return match.group(1)
    return ""


def _torch_gpu(kb: KnowledgeBase, request: Request, release: TorchRelease, variant: TorchVariant,
               common: dict) -> FrameworkCandidate:
    platform = request.wheel_platform
    arch = CompiledArch(line=release.line, sass=variant.sass, ptx=variant.ptx, source=variant.source,
                        note=variant.arch_basis) if variant.sass or variant.ptx else None
    cudnn = torch_cudnn(release, variant, platform)
    cudnn3 = ".".join(cudnn.split(".")[:3]) if cudnn else None
    wheels = variant.default_index and bool(release.default_requires.get(platform))
    delivery = Delivery.PIP_WHEELS if wheels else Delivery.BUNDLED
    notes = []
    unverified = variant.arch_basis in ("", "not verified")
    if not unverified and variant.arch_basis != "measured":
        notes.append(f"the GPU architectures of torch {release.version} {variant.name} are taken from the "
                     f"{variant.arch_basis}; the wheel itself was not measured")
    fields = dict(common, gpu=True, arch_unverified=unverified, variant=variant.name, cuda=variant.cuda, cuda_release=variant.cuda_full or None,
                  cudnn_compiled=cudnn3, cudnn_fixed=cudnn3, cudnn_full=cudnn, delivery=delivery, arch=arch,
                  preference=(not variant.default_index, tuple(-x for x in Version(variant.cuda).release)), notes=tuple(notes))
    if variant.default_index:
        companions = _companions(kb.frameworks, release, platform, "", fields)
        return FrameworkCandidate(**fields, source=f"{release.source}; {variant.source}", companions=companions)
    option, url, local = _torch_index(release, variant.index_url, variant.name)
    return FrameworkCandidate(**fields, source=f"{variant.source}; {TORCH_INDEX_SOURCE}", index_url=url,
                              index_option=option, local_version=local,
                              companions=_companions(kb.frameworks, release, platform, local))
