"""`stackresolve gpus` and `stackresolve show tf X`: the knowledge base, readable, with sources."""

from __future__ import annotations

import json

from packaging.version import Version

from stackresolve.knowledge.base import KnowledgeBase, normalize_gpu_name
from stackresolve.knowledge.records import WHEEL_PLATFORMS
from stackresolve.model.numbers import parse_version, quoted
from stackresolve.model.values import ComputeCapability, release_line
from stackresolve.model.versionlist import version_span
from stackresolve.request.build import InputError

GPU_PACKAGES = ("tensorflow", "tensorflow-gpu", "tensorflow-cpu", "tensorflow-intel")


def _matching_gpus(kb: KnowledgeBase, search: str | None):
    gpus = sorted(kb.gpus, key=lambda g: (ComputeCapability.parse(g.cc), g.name))
    if not search:
        return gpus
    needle = normalize_gpu_name(search)
    return [g for g in gpus if any(needle in normalize_gpu_name(s) for s in (g.name, *g.aliases))]


def _matching_accelerators(kb: KnowledgeBase, search: str | None) -> tuple[list, list]:
    """AMD and Intel models (constraints/amd.toml, intel.toml) whose name, alias (or gfx target) contains the text."""
    ak = kb.accelerators
    needle = normalize_gpu_name(search) if search else ""

    def hit(g, *more) -> bool:
        return any(needle in normalize_gpu_name(s) for s in (g.name, *g.aliases, *more))

    amd = sorted((g for g in ak.amd_gpus if hit(g, g.gfx)), key=lambda g: (g.architecture, g.name))
    intel = sorted((g for g in ak.intel_gpus if hit(g)), key=lambda g: (g.family, g.name))
    return amd, intel


def gpus_text(kb: KnowledgeBase, search: str | None) -> str:
    gpus = _matching_gpus(kb, search)
    amd, intel = _matching_accelerators(kb, search)
    if not gpus and not amd and not intel:
        return f"no GPU model matches {search!r}\n"
    out = []
    if gpus:
        out += [f"{'compute':<8} {'architecture':<12} {'segment':<12} name", "-" * 60]
        out += [f"{g.cc:<8} {g.architecture:<12} {g.segment:<12} {g.name}" for g in gpus]
    if amd:
        out += ["" if out else None, f"{'gfx':<8} {'architecture':<12} {'segment':<12} name (AMD, ROCm)", "-" * 60]
        out += [f"{g.gfx:<8} {g.architecture:<12} {g.segment:<12} {g.name}" for g in amd]
    if intel:
        out += ["" if out else None, f"{'family':<16} {'architecture':<12} name (Intel, XPU)", "-" * 60]
        out += [f"{g.family:<16} {g.architecture:<12} {g.name}" for g in intel]
    out.append(f"\n{len(gpus) + len(amd) + len(intel)} models")
    return "\n".join(line for line in out if line is not None) + "\n"


def gpus_json(kb: KnowledgeBase, search: str | None) -> str:
    amd, intel = _matching_accelerators(kb, search)
    return json.dumps({"schema": "stackresolve/gpus@1", "gpus": [
        {"name": g.name, "compute_capability": g.cc, "architecture": g.architecture, "segment": g.segment,
         "aliases": list(g.aliases), "source": g.source} for g in _matching_gpus(kb, search)],
        "amd_gpus": [{"name": g.name, "gfx": g.gfx, "architecture": g.architecture, "segment": g.segment,
                      "pci_ids": list(g.pci_ids), "aliases": list(g.aliases), "source": g.source} for g in amd],
        "intel_gpus": [{"name": g.name, "family": g.family, "architecture": g.architecture,
                        "pci_ids": list(g.pci_ids), "aliases": list(g.aliases), "source": g.source} for g in intel]},
        indent=2) + "\n"


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


# -- CUDA, cuDNN, drivers and GPUs (issue 31): every fact with its source and the date its kind was read --------
SHOWN = ("tf", "torch", "jax", "cuda", "cudnn", "driver", "gpu")


def _newest(versions: list[str]) -> str:
    return max(versions, key=Version)


def show_cuda_data(kb: KnowledgeBase, version: str) -> dict:
    # lazy: start-up (only this path needs knowledge.rules)
    from stackresolve.knowledge.rules import cuda_line_fits
    from stackresolve.model.values import CudaLine

    known = sorted((t.version for t in kb.toolkits), key=Version)
    try:
        line = str(CudaLine.parse(version.strip()))
    except ValueError:
        raise InputError(f"show cuda {quoted(version)}: not a CUDA version; use e.g. 12.4 or 13.5") from None
    toolkit = kb.toolkit(line)
    if toolkit is None:
        raise InputError(f"show cuda {quoted(version)}: no CUDA release {line} is known; known: {known[0]} ... "
                         f"{known[-1]}")
    return {
        "version": toolkit.version,
        "releases": list(toolkit.releases),
        "released": toolkit.released or None,
        "driver_min": {"linux": toolkit.driver_linux or None, "windows": toolkit.driver_windows or None},
        "minor_compat_driver_min": {"linux": toolkit.compat_driver_linux or None,
                                    "windows": toolkit.compat_driver_windows or None},
        "arch_min": toolkit.arch_min,
        "arch_max": toolkit.arch_max,
        "cudnn": [r.version for r in sorted(kb.cudnn, key=lambda r: r.key)
                  if any(cuda_line_fits(b.cuda, toolkit.version) for b in r.builds)],
        "source": toolkit.source,
        "note": toolkit.note,
        "fetched": kb.fetched("cuda"),
    }


def show_cuda_text(kb: KnowledgeBase, version: str) -> str:
    d = show_cuda_data(kb, version)
    drv, compat = d["driver_min"], d["minor_compat_driver_min"]
    out = [f"CUDA {d['version']} (releases {', '.join(d['releases'])}; {d['released'] or 'release month unknown'})",
           f"  driver minimum: Linux {drv['linux'] or 'not read'}, Windows {drv['windows'] or 'not printed'}",
           f"  minor-version compatibility: Linux >= {compat['linux'] or '-'}, Windows >= {compat['windows'] or '-'}",
           f"  compute capabilities: {d['arch_min']} ... {d['arch_max']}",
           f"  cuDNN releases with a build for it: {', '.join(d['cudnn']) or 'none recorded'}",
           f"  source: {d['source']}"]
    if d["note"]:
        out.append(f"  note: {d['note']}")
    out.append(f"  data read: {d['fetched']}")
    return "\n".join(out) + "\n"


def show_cudnn_data(kb: KnowledgeBase, version: str) -> dict:
    v = parse_version(version.strip())
    known = sorted(kb.cudnn, key=lambda r: r.key)
    if v is None or len(v.release) < 2:
        raise InputError(f"show cudnn {quoted(version)}: not a cuDNN version; use e.g. 8.9 or 9.28.1")
    # "9.28" is the newest 9.28.x; "9.28.1.4" a build of 9.28.1
    matches = [r for r in known if r.key.release[:len(v.release)] == v.release
               or any(Version(b.full_version) == v for b in r.builds)]
    if not matches:
        raise InputError(f"show cudnn {quoted(version)}: no cuDNN release {version.strip()} is known; known: "
                         f"{known[0].version} ... {known[-1].version}")
    r = matches[-1]
    return {
        "version": r.version,
        "builds": [{"cuda": b.cuda, "full_version": b.full_version} for b in r.builds],
        "released": r.released or None,
        "arch_min": r.arch_min,
        "arch_max": r.arch_max,
        "pip": list(r.extra.get("pip", [])),
        "source": r.source,
        "pip_source": r.extra.get("pip_source") or None,
        "note": r.note,
        "fetched": kb.fetched("cudnn"),
    }


def show_cudnn_text(kb: KnowledgeBase, version: str) -> str:
    d = show_cudnn_data(kb, version)
    builds = "; ".join(f"CUDA {b['cuda']}: {b['full_version']}" for b in d["builds"])
    out = [f"cuDNN {d['version']} ({d['released'] or 'release date unknown'})", f"  builds: {builds}",
           f"  compute capabilities: {d['arch_min']} ... {d['arch_max']}",
           f"  pip: {', '.join(d['pip']) or 'no wheel recorded'}", f"  source: {d['source']}"]
    if d["pip_source"]:
        out.append(f"  pip source: {d['pip_source']}")
    if d["note"]:
        out.append(f"  note: {d['note']}")
    out.append(f"  data read: {d['fetched']}")
    return "\n".join(out) + "\n"


def show_driver_data(kb: KnowledgeBase, version: str) -> dict:
    # lazy: start-up (only this path needs request.parse, knowledge.rules)
    from stackresolve.request.parse import read_driver
    from stackresolve.knowledge.rules import branch_lifecycle, driver_meets

    parsed = read_driver(version.strip())  # the reading --driver and STACKRESOLVE_DRIVER use
    if parsed is None:
        raise InputError(f"show driver {quoted(version)}: not an NVIDIA driver version; use e.g. 470.82.01, 535.98 "
                         f"or a branch such as 580")
    given, branch = str(parsed), parsed.branch
    state, record = branch_lifecycle(kb.driver_branches, branch, kb.date)
    own = record if record is not None and record.number == branch else None
    cuda = []
    for t in sorted(kb.toolkits, key=lambda t: Version(t.version)):
        if t.driver_linux and driver_meets(given, t.driver_linux):
            cuda.append({"version": t.version, "how": "own-minimum", "minimum": t.driver_linux, "source": t.source})
        elif t.compat_driver_linux and driver_meets(given, t.compat_driver_linux):
            cuda.append({"version": t.version, "how": "minor-version-compatibility", "minimum": t.compat_driver_linux,
                         "source": t.source})
    return {
        "version": given,
        "branch": str(branch),
        "lifecycle": {
            "state": state,
            "designation": own.designation if own else None,
            "end_of_life": (own.end_of_life or None) if own else None,
            "native_cuda_major": own.native_cuda_major if own else None,
            "newest_listed": record.branch if record is not None and own is None else None,
            "source": record.source if record is not None else None,
            "note": own.note if own else "",
        },
        "cuda": cuda,
        "architectures": [{"architecture": a.architecture, "compute_capabilities": list(a.cc),
                           "supported": not a.last_branch or int(a.last_branch) >= branch,
                           "last_branch": a.last_branch or None, "source": a.source} for a in kb.arch_support],
        "fetched": kb.fetched("drivers"),
    }


_STATE_WORDS = {"supported": "supported", "end-of-life": "past its end of life",
                "newer": "not listed: newer than every listed branch, planned by its number",
                "unlisted-older": "not listed: NVIDIA's table holds only its Long Term Support and Production "
                                  "branches; an older branch it does not print is end of life or a New Feature Branch"}


def show_driver_text(kb: KnowledgeBase, version: str) -> str:
    d = show_driver_data(kb, version)
    life = d["lifecycle"]
    kind = f"{life['designation']}, end of life {life['end_of_life'] or 'none given'}, " \
           f"CUDA {life['native_cuda_major']} natively" if life["designation"] else \
        f"newest listed R{life['newest_listed']}" if life["newest_listed"] else ""
    out = [f"NVIDIA driver {d['version']} (branch R{d['branch']}): {_STATE_WORDS[life['state']]}"
           + (f" ({kind})" if kind else ""), f"  source: {life['source'] or 'none'}"]
    out.append("  CUDA it runs (Linux numbering): " + (", ".join(
        f"{c['version']}" + ("" if c["how"] == "own-minimum" else " (minor-version compatibility)")
        for c in d["cuda"]) or "none recorded"))
    out.append("  GPU architectures: " + ", ".join(
        f"{a['architecture']}{'' if a['supported'] else ' (no: last R' + str(a['last_branch']) + ')'}"
        for a in d["architectures"]))
    out.append(f"  data read: {d['fetched']}")
    return "\n".join(out) + "\n"


def show_gpu_data(kb: KnowledgeBase, query: str) -> dict:
    # lazy: start-up (only this path needs knowledge.rules)
    from stackresolve.request.parse import read_cc
    from stackresolve.knowledge.rules import unlisted_cc_rule

    capability = read_cc(query)  # as --gpu-cc reads it
    model = None
    if capability is None:
        model = kb.find_gpu(query)
        if model is None:
            accelerator = show_accelerator_data(kb, query)
            if accelerator is not None:
                return accelerator
            similar = kb.similar_gpu_names(query)
            hint = f"; did you mean {' or '.join(repr(s) for s in similar)}?" if similar else \
                "; give a compute capability such as 8.6 (stackresolve gpus lists known models)"
            what = "not a compute capability (major.minor, one-digit minor) and no known GPU model" \
                if query.strip().replace(".", "").isdigit() else "unknown GPU model"
            raise InputError(f"show gpu {quoted(query)}: {what}{hint}")
        capability = ComputeCapability.parse(model.cc)
    cc = str(capability)
    listed = kb.is_listed_cc(cc)
    support = kb.arch_support_for(cc)
    first = kb.first_toolkit_for(capability)
    last = max((t for t in kb.toolkits if t.min_cc <= capability), key=lambda t: Version(t.version), default=None)
    return {
        "query": query,
        "compute_capability": cc,
        "listed": listed,
        "rule": None if listed else unlisted_cc_rule(capability, [ComputeCapability.parse(c) for c in kb.known_ccs()]),
        "model": None if model is None else {"name": model.name, "architecture": model.architecture,
                                              "segment": model.segment, "aliases": list(model.aliases),
                                              "source": model.source, "note": model.note},
        "models": [g.name for g in kb.gpus if g.cc == cc],
        "architecture": support.architecture if support else (model.architecture if model else None),
        "driver": None if support is None else {"last_branch": support.last_branch or None,
                                                "last_version": support.last_version or None,
                                                "source": support.source},
        "cuda": {"first": first.version if first else None, "last": last.version if last else None,
                 "source": (first or last).source if (first or last) else None},
        "fetched": kb.fetched("gpus"),
    }


def show_accelerator_data(kb: KnowledgeBase, query: str) -> dict | None:
    """`show gpu` for an AMD GPU (by name or gfx target) or an Intel GPU (by name), None when neither table knows
    it: the model, the PyTorch builds that run on it (and how their target lists are known), AMD's unofficial
    override where one applies, the ROCm releases AMD lists it in."""
    # lazy: start-up (only this path needs model.accelerator)
    from stackresolve.model.accelerator import read_gfx

    ak = kb.accelerators
    gfx = read_gfx(query)
    amd = ak.find_amd_gpu(query) if gfx is None else None
    intel = ak.find_intel_gpu(query) if gfx is None and amd is None else None
    if gfx is None and amd is None and intel is None:
        return None
    doc = {"schema": "stackresolve/show-accelerator@1", "query": query}
    if intel is not None:
        builds = [x for x in ak.torch_xpu if intel.family in x.families]
        return doc | {"vendor": "intel", "gfx": None, "family": intel.family, "architecture": intel.architecture,
                      "model": {"name": intel.name, "pci_ids": list(intel.pci_ids), "aliases": list(intel.aliases),
                                "source": intel.source, "note": intel.note},
                      "models": [intel.name], "rocm": [], "override": None,
                      "torch": [{"variant": x.name, "releases": list(x.releases), "platforms": list(x.platforms),
                                 "python": list(x.python), "driver": x.driver, "source": x.source} for x in builds],
                      "fetched": ak.intel_generated}
    gfx = gfx or amd.gfx
    models = ak.amd_gpus_of_gfx(gfx)
    override = ak.override_for(gfx)
    carried = [v for v in ak.torch_rocm if gfx in v.gfx or (override and override.runs_as in v.gfx)]
    return doc | {
        "vendor": "amd", "gfx": gfx, "family": None,
        "architecture": amd.architecture if amd else (models[0].architecture if models else None),
        "model": None if amd is None else {"name": amd.name, "segment": amd.segment, "pci_ids": list(amd.pci_ids),
                                           "aliases": list(amd.aliases), "source": amd.source, "note": amd.note},
        "models": [g.name for g in models],
        "rocm": [{"version": r.version, "source": r.source} for r in ak.rocm_supporting(gfx)],
        "override": None if override is None else {"hsa_override": override.hsa_override,
                                                   "runs_as": override.runs_as, "status": override.status,
                                                   "source": override.source},
        "torch": [{"variant": v.name, "releases": list(v.releases), "official": gfx in v.gfx,
                   "arch_basis": v.arch_basis, "python": list(v.python), "source": v.source} for v in carried],
        "fetched": ak.amd_generated}


def show_accelerator_text(d: dict) -> str:
    m = d["model"]
    what = d["gfx"] if d["vendor"] == "amd" else d["family"]
    out = [(f"{m['name']}: " if m else "") + f"{'gfx target' if d['vendor'] == 'amd' else 'Intel family'} {what}"
           + (f" ({d['architecture']})" if d["architecture"] else "")]
    if m:
        out.append(f"  source: {m['source']}")
    if d["vendor"] == "amd":
        out.append(f"  models: {', '.join(d['models']) or 'none by name'}")
        out.append(f"  ROCm releases AMD lists it in: {', '.join(r['version'] for r in d['rocm']) or 'none known'}")
    for t in d["torch"]:
        how = "" if t.get("official", True) else " (unofficial, through the override)"
        out.append(f"  PyTorch {t['variant']}: torch {version_span(t['releases'])}{how}; source: {t['source']}")
    if not d["torch"]:
        out.append("  PyTorch: no ROCm wheel carries it" if d["vendor"] == "amd" else
                   "  PyTorch: no XPU build documents this family")
    if d["override"]:
        o = d["override"]
        out.append(f"  unofficial: HSA_OVERRIDE_GFX_VERSION={o['hsa_override']} runs {o['runs_as']}'s code; "
                   f"source: {o['source']}")
    out.append(f"  data read: {d['fetched']}")
    return "\n".join(out) + "\n"


def show_gpu_text(kb: KnowledgeBase, query: str) -> str:
    d = show_gpu_data(kb, query)
    if d.get("schema") == "stackresolve/show-accelerator@1":
        return show_accelerator_text(d)
    m = d["model"]
    head = f"{m['name']}: compute capability {d['compute_capability']}" if m else \
        f"compute capability {d['compute_capability']}"
    out = [head + (f" ({d['architecture']})" if d["architecture"] else "")]
    if m:
        out.append(f"  source: {m['source']}")
    if d["listed"]:
        out.append(f"  models: {', '.join(d['models']) or 'none by name (the architecture table lists it)'}")
    else:
        out.append(f"  not in the GPU tables: planned by rule, {d['rule']}")
    drv = d["driver"]
    if drv:
        branches = f"up to R{drv['last_branch']} ({drv['last_version']})" if drv["last_branch"] else "current branches"
        out.append(f"  driver: {branches}; source: {drv['source']}")
    cuda = d["cuda"]
    out.append(f"  CUDA: first toolkit whose architectures reach it {cuda['first'] or 'none known'}, last that builds "
               f"for it {cuda['last'] or 'none known'}")
    out.append(f"  data read: {d['fetched']}")
    return "\n".join(out) + "\n"
