"""JAX's builds as resolver candidates: one per release and CUDA route (the plugin extras on the default index,
or the jaxlib +cuda wheels of the find-links page), with the architectures compiled into the plugin; the CPU build
where the request is CPU-only or the platform has no CUDA build. Every fact comes from constraints/jax.toml."""

from __future__ import annotations

from packaging.specifiers import InvalidSpecifier, SpecifierSet
from packaging.version import Version

from stackresolve.knowledge.base import KnowledgeBase
from stackresolve.knowledge.frameworks import FrameworkKnowledge, JaxPairing, JaxRoute, JaxWheels
from stackresolve.knowledge.records import CompiledArch, Pitfall
from stackresolve.model.enums import Delivery, Framework, Vendor
from stackresolve.model.values import release_line
from stackresolve.request.build import Request
from stackresolve.resolve.apple import jax_metal_note
from stackresolve.resolve.candidates import FrameworkCandidate, ReleaseLine, newest_lines_first, plannable


# -- lines ----------------------------------------------------------------------------------------------------
def lines(kb: KnowledgeBase) -> list[ReleaseLine]:
    """JAX's release lines, newest first."""
    return kb.memo(("framework_lines", Framework.JAX),
                   lambda: newest_lines_first((release_line(p.jax), p.source) for p in kb.frameworks.jax_pairings))


def line_releases(kb: KnowledgeBase, line: str) -> list[Version]:
    return [Version(p.jax) for p in kb.frameworks.jax_pairings if release_line(p.jax) == line]


def line_candidates(kb: KnowledgeBase, request: Request, line: ReleaseLine) -> list[FrameworkCandidate]:
    out = [c for p in kb.frameworks.jax_pairings if release_line(p.jax) == line.version and not p.yanked
           for c in jax_candidates(kb, request, line, p)]
    return sorted(out, key=lambda c: c.key, reverse=True)


# -- builds ---------------------------------------------------------------------------------------------------
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
    pythons = tuple(p for p in plannable(jaxlib_wheels.pythons.get(platform, ())) if _python_ok(pairing, p))
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


def jax_pins(kb: KnowledgeBase, fw: FrameworkCandidate) -> tuple:
    """The pip pins a JAX plan needs: jax.toml [[pin]] records for its jaxlib, and for GPU plans the cuDNN range
    of JAX's install guide (old cuda12 extras leave nvidia-cudnn-cu12 open above, and pip then takes a cuDNN 9
    that a cuDNN 8.9 build cannot load: jax-ml/jax#20455)."""
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
