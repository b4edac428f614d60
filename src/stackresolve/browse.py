"""`stackresolve gpus` and `stackresolve show tf X`: the knowledge base, readable, with sources."""

from __future__ import annotations

import json

from packaging.version import Version

from stackresolve.knowledge.base import KnowledgeBase, normalize_gpu_name
from stackresolve.knowledge.model import WHEEL_PLATFORMS
from stackresolve.model.numbers import parse_version, quoted
from stackresolve.model.values import ComputeCapability, release_line
from stackresolve.model.versionlist import version_span
from stackresolve.request import InputError

GPU_PACKAGES = ("tensorflow", "tensorflow-gpu", "tensorflow-cpu", "tensorflow-intel")


def _matching_gpus(kb: KnowledgeBase, search: str | None):
    gpus = sorted(kb.gpus, key=lambda g: (ComputeCapability.parse(g.cc), g.name))
    if not search:
        return gpus
    needle = normalize_gpu_name(search)
    return [g for g in gpus if any(needle in normalize_gpu_name(s) for s in (g.name, *g.aliases))]


def gpus_text(kb: KnowledgeBase, search: str | None) -> str:
    gpus = _matching_gpus(kb, search)
    if not gpus:
        return f"no GPU model matches {search!r}\n"
    out = [f"{'compute':<8} {'architecture':<12} {'segment':<12} name", "-" * 60]
    out += [f"{g.cc:<8} {g.architecture:<12} {g.segment:<12} {g.name}" for g in gpus]
    out.append(f"\n{len(gpus)} models")
    return "\n".join(out) + "\n"


def gpus_json(kb: KnowledgeBase, search: str | None) -> str:
    return json.dumps({"schema": "stackresolve/gpus@1", "gpus": [
        {"name": g.name, "compute_capability": g.cc, "architecture": g.architecture, "segment": g.segment,
         "aliases": list(g.aliases), "source": g.source} for g in _matching_gpus(kb, search)]}, indent=2) + "\n"


def _line_of(kb: KnowledgeBase, version: str) -> str:
    v = parse_version(version)
    if v is None:
        raise InputError(f"show tf {quoted(version)}: not a version; use a release line such as 1.15 or 2.10")
    line = f"{v.major}.{v.minor}"
    if kb.line(line) is None:
        known = sorted((l.version for l in kb.lines), key=Version)
        raise InputError(f"show tf {version!r}: unknown TensorFlow line; known lines are {known[0]} ... {known[-1]}")
    return line


def show_tf_data(kb: KnowledgeBase, version: str) -> dict:
    line = _line_of(kb, version)
    record = kb.line(line)
    arch = kb.compiled_arch(line)
    releases = [w for p in GPU_PACKAGES for w in kb.wheel_releases(p) if w.line == line]
    return {
        "line": line,
        "gpu_package_linux": record.gpu_package_linux or None,
        "gpu_package_windows": record.gpu_package_windows or None,
        "and_cuda_extra": record.and_cuda_extra,
        "note": record.note,
        "source": record.source,
        "tested_builds": [
            {"os": b.os, "package": b.package, "version": b.version, "python": b.python, "cuda": b.cuda or None,
             "cudnn": b.cudnn or None, "compiler": b.compiler, "build_tools": b.build_tools, "source": b.source}
            for b in kb.tested_builds if b.line == line],
        "compiled_arch": None if arch is None else {"sass": list(arch.sass), "ptx": list(arch.ptx),
                                                    "source": arch.source, "note": arch.note},
        "releases": [{"package": w.package, "version": w.version, "pythons": dict(w.pythons), "yanked": w.yanked,
                      "stub": w.stub, "and_cuda": list(w.and_cuda), "source": w.source} for w in releases],
        "nvidia_builds": [{"kind": b.kind, "version": b.version, "tag": b.tag or None, "tf_base": b.tf_base,
                           "python": list(b.pythons), "cuda": b.cuda, "driver": b.driver_stated,
                           "verified": list(b.verified), "source": b.source}
                          for b in kb.nvidia_builds if Version(b.tf_base).release[:2] == Version(line).release[:2]],
    }


def show_tf_json(kb: KnowledgeBase, version: str) -> str:
    return json.dumps({"schema": "stackresolve/show-tf@1", **show_tf_data(kb, version)}, indent=2) + "\n"


def show_tf_text(kb: KnowledgeBase, version: str) -> str:
    data = show_tf_data(kb, version)
    out = [f"TensorFlow {data['line']}",
           f"  GPU package: Linux {data['gpu_package_linux'] or 'none'}, "
           f"native Windows {data['gpu_package_windows'] or 'none'}"
           + (", `tensorflow[and-cuda]` on Linux" if data["and_cuda_extra"] else ""),
           f"  source: {data['source']}"]
    if data["note"]:
        out.append(f"  note: {data['note']}")
    out += ["", "Tested build configurations (TensorFlow's tables)"]
    for b in data["tested_builds"]:
        cuda = f"CUDA {b['cuda']}, cuDNN {b['cudnn']}" if b["cuda"] else "CPU"
        out.append(f"  {b['os']:<8} {b['package']}-{b['version']:<10} Python {b['python']:<14} {cuda}")
    if data["tested_builds"]:
        out.append(f"  source: {data['tested_builds'][0]['source']}")
    arch = data["compiled_arch"]
    out += ["", "CUDA architectures in the official wheels"]
    if arch:
        out.append(f"  SASS {', '.join(arch['sass'])}; PTX {', '.join(arch['ptx']) or 'none'}")
        out.append(f"  source: {arch['source']}")
    else:
        out.append("  not recorded")
    out += ["", "Releases on the package index (CPython versions with a wheel)"]
    for r in data["releases"]:
        flags = " (yanked)" if r["yanked"] else (" (stub: no wheels)" if r["stub"] else "")
        platforms = "; ".join(f"{p} {','.join(r['pythons'][p])}" for p in WHEEL_PLATFORMS if r["pythons"].get(p))
        out.append(f"  {r['package']} {r['version']}{flags}: {platforms or '-'}")
    if data["nvidia_builds"]:
        out += ["", "NVIDIA's builds (Linux x86_64; pip through nvidia-pyindex, or NGC containers)"]
        for b in data["nvidia_builds"]:
            name = f"nvidia-tensorflow {b['version']}" if b["kind"] == "pip" else b["tag"]
            python = f"Python {', '.join(b['python'])}, " if b["kind"] == "pip" else ""
            out.append(f"  {name}: {python}CUDA {b['cuda']}, driver >= {b['driver']}")
    return "\n".join(out) + "\n"


# -- PyTorch and JAX ------------------------------------------------------------------------------------------
def _framework_line(kb: KnowledgeBase, component: str, version: str, known: list[str]) -> str:
    v = parse_version(version)
    if v is None:
        raise InputError(f"show {component} {quoted(version)}: not a version; use a release line such as "
                         f"{known[-1]}")
    line = f"{v.major}.{v.minor}"
    if line not in known:
        raise InputError(f"show {component} {version!r}: unknown release line; known lines are {known[0]} ... "
                         f"{known[-1]}")
    return line


def show_torch_data(kb: KnowledgeBase, version: str) -> dict:
    fk = kb.frameworks
    known = sorted({r.line for r in fk.torch_releases}, key=Version)
    line = _framework_line(kb, "torch", version, known)
    releases = [r for r in fk.torch_releases if r.line == line]
    variants = [v for v in fk.torch_variants if any(v.covers(r.version) for r in releases)]
    return {
        "line": line,
        "releases": [{"version": r.version, "released": r.released, "pythons": dict(r.pythons),
                      "default_variant": dict(r.default_variant), "variants": {k: list(v) for k, v in r.variants.items()},
                      "torchvision": r.torchvision or None, "torchaudio": r.torchaudio or None, "source": r.source,
                      "note": r.note} for r in releases],
        "variants": [{"name": v.name, "releases": list(v.releases), "platforms": list(v.platforms),
                      "default_index": v.default_index, "index_url": v.index_url or None, "cuda": v.cuda,
                      "cudnn": v.cudnn or None, "sass": list(v.sass), "ptx": list(v.ptx), "arch_basis": v.arch_basis,
                      "driver_min_linux": v.driver_min_linux or None, "driver_min_windows": v.driver_min_windows or None,
                      "source": v.source} for v in variants],
    }


def show_torch_text(kb: KnowledgeBase, version: str) -> str:
    data = show_torch_data(kb, version)
    out = [f"PyTorch {data['line']}", "", "Releases on the package index (CPython versions with a wheel)"]
    for r in data["releases"]:
        platforms = "; ".join(f"{p} {','.join(v)}" for p, v in r["pythons"].items() if v)
        out.append(f"  torch {r['version']} ({r['released']}): {platforms}")
        out.append(f"    default index: Linux {r['default_variant']['linux']}, Windows {r['default_variant']['windows']}"
                   f", macOS {r['default_variant']['macos_arm64']}; torchvision {r['torchvision'] or '-'}, "
                   f"torchaudio {r['torchaudio'] or '-'}")
    out += ["", "CUDA variants (architectures compiled into torch's kernels)"]
    for v in data["variants"]:
        where = "default index" if v["default_index"] else v["index_url"]
        out.append(f"  {v['name']:<6} {'/'.join(v['platforms']):<22} CUDA {v['cuda']:<5} cuDNN {v['cudnn'] or '?':<10} "
                   f"SASS {','.join(v['sass']) or '?'}; PTX {','.join(v['ptx']) or 'none'} ({v['arch_basis']}) "
                   f"[{where}] releases {version_span(v['releases'])}")
    return "\n".join(out) + "\n"


def show_jax_data(kb: KnowledgeBase, version: str) -> dict:

    fk = kb.frameworks
    known = sorted({release_line(p.jax) for p in fk.jax_pairings}, key=Version)
    line = _framework_line(kb, "jax", version, known)
    pairings = [p for p in fk.jax_pairings if release_line(p.jax) == line]
    versions = {p.jax for p in pairings}
    return {
        "line": line,
        "releases": [{"version": p.jax, "jaxlib_requires": list(p.jaxlib_requires), "jaxlib_min": p.jaxlib_min or None,
                      "requires_python": p.requires_python or None, "yanked": p.yanked, "source": p.source}
                     for p in pairings],
        "routes": [{"jax": list(r.jax), "gpu_route": r.gpu_route, "cuda_extra": r.cuda_extra,
                    "find_links": r.find_links or None, "plugin": r.plugin or None, "cuda_major": list(r.cuda_major),
                    "cuda_min": r.cuda_min, "cudnn_min": r.cudnn_min, "cudnn_below": r.cudnn_below,
                    "driver_min": r.driver_min or None, "cc_min": r.cc_min or None, "source": r.source, "note": r.note}
                   for r in fk.jax_routes if versions & set(r.jax)],
        "compiled_arch": [{"package": c.package, "versions": [v for v in c.versions if v in versions],
                           "sass": list(c.sass), "ptx": list(c.ptx), "measured": c.measured, "source": c.source}
                          for c in fk.jax_compiled if versions & set(c.versions)],
    }


def show_jax_text(kb: KnowledgeBase, version: str) -> str:
    data = show_jax_data(kb, version)
    out = [f"JAX {data['line']}", "", "Releases (pip's jaxlib requirement)"]
    for r in data["releases"]:
        out.append(f"  jax {r['version']}{' (yanked)' if r['yanked'] else ''}: jaxlib "
                   f"{', '.join(r['jaxlib_requires']) or '>= ' + (r['jaxlib_min'] or '?')}; Python "
                   f"{r['requires_python'] or '?'}")
    out += ["", "GPU routes (the install guide at each release's tag)"]
    for r in data["routes"]:
        out.append(f"  jax {r['jax'][0]} ... {r['jax'][-1]}: jax[{r['cuda_extra']}] ({r['gpu_route']}"
                   + (f", -f {r['find_links']}" if r["find_links"] else "") + f"): CUDA >= {r['cuda_min']}, cuDNN >= "
                   f"{r['cudnn_min']} < {r['cudnn_below']}, driver >= {r['driver_min'] or 'the toolkit driver'}, "
                   f"compute capability >= {r['cc_min'] or 'not stated'}")
        out.append(f"    source: {r['source']}")
    out += ["", "CUDA architectures in the GPU wheels"]
    for c in data["compiled_arch"]:
        out.append(f"  {c['package']} {c['versions'][0]} ... {c['versions'][-1]}: SASS {','.join(c['sass'])}; PTX "
                   f"{','.join(c['ptx']) or 'none'} ({'measured' if c['measured'] else 'build flags'})")
    return "\n".join(out) + "\n"
