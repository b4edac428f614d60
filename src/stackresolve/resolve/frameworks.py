"""PyTorch and JAX builds as resolver candidates (the same FrameworkCandidate TensorFlow's wheels are), and the
Apple Silicon builds of all three frameworks.

PyTorch: one candidate per release and CUDA variant built for the platform (the default index's variant and the
variants on PyTorch's own index), with the GPU architectures compiled into torch's kernels. JAX: one candidate per
release and CUDA route (the plugin extras on the default index, or the jaxlib +cuda wheels of the find-links page),
with the architectures compiled into the plugin. CPU builds where the request is CPU-only or the platform has no
CUDA build. Every fact comes from constraints/pytorch.toml, jax.toml and apple.toml."""

from __future__ import annotations

import re

from packaging.specifiers import InvalidSpecifier, SpecifierSet
from packaging.version import Version

from stackresolve.knowledge.base import KnowledgeBase
from stackresolve.knowledge.frameworks import (
    FrameworkKnowledge,
    JaxPairing,
    JaxRoute,
    JaxWheels,
    TorchRelease,
    TorchVariant,
)
from stackresolve.knowledge.model import CompiledArch
from stackresolve.model.enums import Delivery, Framework, Vendor
from stackresolve.model.values import release_line
from stackresolve.request import Request
from stackresolve.resolve.candidates import PLANNABLE_PYTHONS, FrameworkCandidate, ReleaseLine

# PyTorch's own index serves a CPU-only build of every release (pytorch.org "Get started": Linux, CPU:
# `--index-url https://download.pytorch.org/whl/cpu`); before 2.0 the same variant came through
# --extra-index-url (1.11-1.13) or the torch_stable.html find-links page with a +cpu local version (<= 1.10).
TORCH_CPU_INDEX = "https://download.pytorch.org/whl/cpu"
TORCH_FIND_LINKS = "https://download.pytorch.org/whl/torch_stable.html"
TORCH_INDEX_SOURCE = ("pytorch/pytorch.github.io:_get_started/previous-versions.md@e3f009bbc0d7509ed5c85b633313ec72a"
                      "a2d1a40 (pip commands per release: -f torch_stable.html with +cuXXX/+cpu up to 1.10, "
                      "--extra-index-url .../whl/<variant> for 1.11-1.13, --index-url .../whl/<variant> from 2.0)")


def _plannable(pythons) -> tuple[str, ...]:
    return tuple(p for p in pythons if p in PLANNABLE_PYTHONS)


# -- lines ----------------------------------------------------------------------------------------------------
def framework_lines(kb: KnowledgeBase, framework: Framework) -> list[ReleaseLine]:
    """PyTorch's or JAX's release lines, newest first."""

    def build() -> list[ReleaseLine]:
        fk = kb.frameworks
        lines: dict[str, str] = {}
        if framework is Framework.PYTORCH:
            for r in fk.torch_releases:
                lines.setdefault(r.line, r.source)
        else:
            for p in fk.jax_pairings:
                lines.setdefault(release_line(p.jax), p.source)
        return sorted((ReleaseLine(v, s) for v, s in lines.items()), key=lambda l: l.key, reverse=True)

    return kb.memo(("framework_lines", framework), build)


def line_releases(kb: KnowledgeBase, framework: Framework, line: str) -> list[Version]:
    fk = kb.frameworks
    if framework is Framework.PYTORCH:
        return [r.key for r in fk.torch_releases if r.line == line]
    return [Version(p.jax) for p in fk.jax_pairings if release_line(p.jax) == line]


def framework_line_candidates(kb: KnowledgeBase, request: Request, line: ReleaseLine) -> list[FrameworkCandidate]:
    if request.framework is Framework.PYTORCH:
        out = [c for r in kb.frameworks.torch_releases if r.line == line.version
               for c in torch_candidates(kb, request, line, r)]
    else:
        out = [c for p in kb.frameworks.jax_pairings if release_line(p.jax) == line.version and not p.yanked
               for c in jax_candidates(kb, request, line, p)]
    return sorted(out, key=lambda c: c.key, reverse=True)


# -- PyTorch --------------------------------------------------------------------------------------------------
def torch_candidates(kb: KnowledgeBase, request: Request, line: ReleaseLine,
                     release: TorchRelease) -> list[FrameworkCandidate]:
    fk = kb.frameworks
    platform = request.wheel_platform
    pythons = _plannable(release.pythons.get(platform, ()))
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


def installable_companions(fk: FrameworkKnowledge, release: TorchRelease, platform: str) -> list:
    """The torchvision and torchaudio releases made for a torch release that have wheels for this platform (a
    plan's Python must have wheels of each: torchvision 0.20.1 has none for 3.13, torch 2.5.1 has)."""
    out = []
    for package, version in (("torchvision", release.torchvision), ("torchaudio", release.torchaudio)):
        companion = fk.torch_companion(package, version) if version else None
        if companion is not None and companion.pythons.get(platform):
            out.append(companion)
    return out


def _companions(fk: FrameworkKnowledge, release: TorchRelease, platform: str, local: str) -> tuple[str, ...]:
    out = []
    for companion in installable_companions(fk, release, platform):
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
        return FrameworkCandidate(**common, gpu=False, source=release.source, variant="cpu",
                                  companions=_companions(fk, release, platform, ""), metal=metal, notes=tuple(notes),
                                  macos_min=macos_min)
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
        return FrameworkCandidate(**fields, source=f"{release.source}; {variant.source}",
                                  companions=_companions(kb.frameworks, release, platform, ""))
    option, url, local = _torch_index(release, variant.index_url, variant.name)
    return FrameworkCandidate(**fields, source=f"{variant.source}; {TORCH_INDEX_SOURCE}", index_url=url,
                              index_option=option, local_version=local,
                              companions=_companions(kb.frameworks, release, platform, local))


# -- JAX ------------------------------------------------------------------------------------------------------
def _python_ok(pairing: JaxPairing, python: str) -> bool:
    try:
        spec = SpecifierSet(pairing.requires_python) if pairing.requires_python else SpecifierSet()
    except InvalidSpecifier:
        return True
    return spec.contains(Version(f"{python}.0"), prereleases=True) or spec.contains(Version(f"{python}.99"))


def _jaxlib_spec(pairing: JaxPairing) -> SpecifierSet:
    """The jaxlib versions a jax release accepts: its Requires-Dist, its own minimum, and none newer than itself."""
    spec = SpecifierSet()
    for text in pairing.jaxlib_requires:
        spec &= SpecifierSet(text.removeprefix("jaxlib").strip() or "")
    if pairing.jaxlib_min:
        spec &= SpecifierSet(f">={pairing.jaxlib_min}")
    return spec & SpecifierSet(f"<={pairing.jax}")


def jaxlib_for(fk: FrameworkKnowledge, pairing: JaxPairing, platform: str) -> str | None:
    """The jaxlib a plan pins with a jax release on a platform: the same version where the index has it, else
    the newest jaxlib on the index that the release accepts (jax < 0.4.30 does not depend on jaxlib at all, so
    the plan must name it)."""
    candidates = []
    for wheels in fk.jax_wheels:
        if wheels.package != "jaxlib" or not wheels.on_index or wheels.yanked or not wheels.pythons.get(platform):
            continue
        candidates += wheels.versions
    if pairing.same_version_jaxlib and pairing.jax in candidates:
        return pairing.jax
    spec = _jaxlib_spec(pairing)
    fitting = [v for v in candidates if spec.contains(Version(v), prereleases=True)]
    return max(fitting, key=Version) if fitting else None


def jaxlib_off_index(fk: FrameworkKnowledge, pairing: JaxPairing) -> tuple[tuple[str, ...], JaxWheels] | None:
    """The jaxlib versions a jax release accepts, oldest first, with the wheel record of the newest, where every
    one was deleted from the package index (None where one is still there, or none is recorded)."""
    spec = _jaxlib_spec(pairing)
    accepted = sorted(((Version(v), w) for w in fk.jax_wheels if w.package == "jaxlib" for v in w.versions
                       if spec.contains(Version(v), prereleases=True)), key=lambda a: a[0])
    if not accepted or any(w.on_index for _, w in accepted):
        return None
    return tuple(str(v) for v, _ in accepted), accepted[-1][1]


def jax_candidates(kb: KnowledgeBase, request: Request, line: ReleaseLine,
                   pairing: JaxPairing) -> list[FrameworkCandidate]:
    fk = kb.frameworks
    platform = request.wheel_platform
    jaxlib = jaxlib_for(fk, pairing, platform)
    if jaxlib is None:
        return []
    jaxlib_wheels = fk.jax_wheels_of("jaxlib", jaxlib)
    pythons = tuple(p for p in _plannable(jaxlib_wheels.pythons.get(platform, ())) if _python_ok(pairing, p))
    if not pythons:
        return []
    common = dict(vendor=Vendor.STOCK, distribution="jax", version=pairing.jax, line=line,
                  framework=Framework.JAX)
    if not request.cpu_only and platform not in ("linux", "linux_aarch64"):
        return []  # JAX's GPU builds are Linux only (jax.toml [[platform]]): conflicts say so, with WSL2
    if request.cpu_only:
        notes = []
        if request.apple_gpu:
            notes.append(jax_metal_note(fk, pairing.jax))
        return [FrameworkCandidate(**common, pythons=pythons, gpu=False, source=f"{pairing.source}; "
                                   f"{jaxlib_wheels.source}", companions=(f"jaxlib=={jaxlib}",),
                                   notes=tuple(n for n in notes if n))]
    route = fk.jax_route(pairing.jax)
    if route is None:
        return []
    out = []
    primary = route.recommended_major
    for major in [primary] + [m for m in route.cuda_major if m != primary]:
        facts = route if major == primary else next(iter(fk.jax_routes_of_major(major)), None)
        if facts is None:
            continue
        candidate = _jax_gpu(kb, request, pairing, route, facts, major, jaxlib, pythons, common)
        if candidate is not None:
            out.append(candidate)
    return out


def _jax_gpu(kb: KnowledgeBase, request: Request, pairing: JaxPairing, route: JaxRoute, facts: JaxRoute,
             major: str, jaxlib: str, pythons: tuple[str, ...], common: dict) -> FrameworkCandidate | None:
    """The GPU build of one jax release through the pip wheels of one CUDA major, or None where the release has
    none for this platform (the plugin's wheels, or an extra pip resolves from the index)."""
    fk = kb.frameworks
    platform = request.wheel_platform
    version = pairing.jax
    primary = major == route.recommended_major
    if primary:
        extra = fk.jax_extra(route.cuda_extra, version)
        # "both": the plugin wheels and the find-links jaxlib exist; the recommended extra says which one installs
        plugin_route = route.gpu_route == "plugin" or (route.gpu_route == "both" and extra is not None
                                                        and not extra.find_links)
    else:
        # Another CUDA major of the same release: only the plugin route is planned (the facts of a find-links
        # route of another major are not recorded per release).
        extra = fk.jax_extra(f"cuda{major}", version)
        plugin_route = True
    if extra is None:
        return None
    if plugin_route:
        package = f"jax-cuda{major}-plugin"
        plugin = fk.jax_wheels_of(package, version)
        if plugin is None or extra.find_links:
            return None
        indexed = extra.index_ok_aarch64 if platform == "linux_aarch64" else extra.index_ok
        if version not in indexed:
            return None
        pythons = tuple(p for p in pythons if p in plugin.pythons.get(platform, ()))
        compiled = fk.jax_compiled_of(package, version) or fk.jax_compiled_of(f"jax-cuda{major}-pjrt", version)
        find_links = None
        source = f"{facts.source}; {extra.source}; {plugin.source}"
    else:
        if not extra.name.replace("-", "_").endswith("_pip") or platform != "linux":
            return None  # the find-links wheels of this era need a CUDA installed on the system: not planned
        compiled = fk.jax_compiled_of("jaxlib", jaxlib)
        find_links = extra.find_links or route.find_links
        package = "jaxlib"
        source = f"{facts.source}; {extra.source}"
    extra_name = extra.name  # as the jax wheel's METADATA spells it (old pips ignore a misspelled extra)
    if not pythons:
        return None
    toolkit = kb.toolkit(facts.cuda_min)
    if toolkit is None:
        return None
    arch = CompiledArch(line=release_line(version), sass=compiled.sass, ptx=compiled.ptx, source=compiled.source,
                        note="measured" if compiled.measured else "build flags") if compiled else None
    notes = []
    if compiled is not None and not compiled.measured:
        notes.append(f"the GPU architectures of {package} {jaxlib} come from JAX's build flags, not from measuring "
                     f"the wheel")
    return FrameworkCandidate(
        **common, pythons=pythons, gpu=True, source=source, cuda=facts.cuda_min, delivery=Delivery.PIP_WHEELS,
        cudnn_compiled=facts.cudnn_min, cudnn_range=f">={facts.cudnn_min},<{facts.cudnn_below}",
        extras=(extra_name,), arch=arch, cc_min=facts.cc_min, index_url=find_links,
        index_option="--find-links" if find_links else None,
        # The plugin and jaxlib pinned too: some extras accept a range of plugins, and pip then takes the newest
        # (jax-ml/jax#... style mismatch: a 0.9.2 plugin beside jaxlib 0.9.0.1). The find-links route's extra pins
        # its jaxlib+cudaNN build itself.
        companions=(f"jaxlib=={jaxlib}", f"{package}=={version}") if plugin_route else (),
        preference=(not primary, -int(major)), notes=tuple(notes))


def jax_metal_note(fk: FrameworkKnowledge, version: str) -> str:
    """What Apple's jax-metal offers for a jax release (it is experimental; JAX's docs say to use the CPU): the
    newest jax-metal whose own jax requirement (its METADATA, which pip enforces) admits the release."""
    from packaging.requirements import InvalidRequirement, Requirement

    def admits(metal) -> bool:
        for text in metal.requires:
            try:
                req = Requirement(text)
            except InvalidRequirement:
                continue
            if req.name == "jax":
                return req.specifier.contains(Version(version), prereleases=True)
        return False

    mac = fk.jax_platform("macos", "arm64")
    if mac is not None and mac.apple_gpu_unsupported_from and \
            Version(version) >= Version(mac.apple_gpu_unsupported_from):
        # jax-metal's own requirement (jax>=0.4.34) admits it, but JAX's guide for this release says otherwise
        return (f"JAX's install guide for jax {version} says Mac GPUs are not supported (use the CPU build; since "
                f"jax {mac.apple_gpu_unsupported_from}): this plan installs the CPU build")
    paired = [m for m in fk.jax_metal if admits(m)]
    if not paired:
        return (f"no jax-metal release pairs with jax {version} (jax-metal's own requirements): JAX runs on the "
                f"CPU; JAX's install guide says Mac GPUs are not supported")
    m = max(paired, key=lambda m: Version(m.version))
    table = f"its table: jax {m.jax}, jaxlib {m.jaxlib}, " if m.jax else ""
    return (f"jax-metal {m.version} accepts jax {version} ({table}macOS {m.macos or 'any'}; {m.status}): this plan "
            f"installs the CPU build; add jax-metal=={m.version} to try the Apple GPU")


# -- TensorFlow on Apple Silicon ------------------------------------------------------------------------------
def apple_tensorflow(kb: KnowledgeBase, request: Request, line, stock: list[FrameworkCandidate]) -> list:
    """TensorFlow on macOS arm64: the stock wheels (2.13+) or Apple's tensorflow-macos builds (2.5-2.12), and
    with an Apple GPU the tensorflow-metal release its pairing table names for the line."""
    fk = kb.frameworks
    out = list(stock)
    if not any(c.distribution == "tensorflow" for c in stock):
        for group in fk.tensorflow_macos:
            if not group.full:
                continue
            for version in group.versions:
                pythons = _plannable(group.pythons)
                if release_line(version) == line.version and pythons:
                    out.append(FrameworkCandidate(vendor=Vendor.STOCK, distribution="tensorflow-macos",
                                                  version=version, line=line, pythons=pythons, gpu=False,
                                                  source=group.source))
    if not request.apple_gpu:
        return out
    metal = fk.metal_for(line.version)
    if metal is None:
        note = (f"no tensorflow-metal release pairs with TensorFlow {line.version} (the pairing table in "
                f"tensorflow-metal's own description): it runs on the CPU")
        return [_with(c, notes=c.notes + (note,)) for c in out]
    paired = []
    for c in out:
        pythons = tuple(p for p in c.pythons if p in metal.pythons)
        if c.distribution != metal.tf_package or not pythons:
            continue
        notes = (f"tensorflow-metal {metal.version} pairs with TensorFlow {', '.join(metal.tensorflow)}"
                 + (f" and needs macOS {metal.macos_min} or later" if metal.macos_min else "")
                 + "; pip does not enforce the pairing (tensorflow-metal declares no tensorflow dependency)",)
        paired.append(_with(c, pythons=pythons, companions=(f"tensorflow-metal=={metal.version}",), metal=True,
                            source=f"{c.source}; {metal.source}", notes=notes, macos_min=metal.macos_min))
    return paired or out


def _with(candidate: FrameworkCandidate, **changes) -> FrameworkCandidate:
    from dataclasses import replace

    return replace(candidate, **changes)


def jax_pins(kb: KnowledgeBase, fw: FrameworkCandidate) -> tuple:
    """The pip pins a JAX plan needs: jax.toml [[pin]] records for its jaxlib, and for GPU plans the cuDNN range
    of JAX's install guide (old cuda12 extras leave nvidia-cudnn-cu12 open above, and pip then takes a cuDNN 9
    that a cuDNN 8.9 build cannot load: jax-ml/jax#20455)."""
    from stackresolve.knowledge.model import Pitfall

    jaxlib = next((c.split("==")[1] for c in fw.companions if c.startswith("jaxlib==")), fw.version)
    out = [Pitfall(package=p.package, constraint=p.constraint, tf="", os=(), python="", why=p.why, source=p.source)
           for p in kb.frameworks.jax_pins
           if SpecifierSet(p.jaxlib).contains(Version(jaxlib), prereleases=True)]
    if fw.gpu and fw.cudnn_range:
        major = fw.cuda.split(".")[0]
        out.append(Pitfall(package=f"nvidia-cudnn-cu{major}", constraint=fw.cudnn_range, tf="", os=(), python="",
                           why=f"the cuDNN range JAX's install guide gives for jax {fw.version}; the extra alone "
                               f"may let pip take a cuDNN the build cannot load", source=fw.source))
    return tuple(out)
