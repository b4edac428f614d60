"""Apple Silicon: TensorFlow's builds for macOS arm64 (the stock wheels from 2.13, Apple's tensorflow-macos for
2.5-2.12) with the tensorflow-metal release that pairs with a line, and what Apple's jax-metal offers for a jax
release. Every fact comes from constraints/apple.toml and jax.toml. (PyTorch's MPS backend is a property of its
CPU build: resolve/pytorch.py.)"""

from __future__ import annotations

from dataclasses import replace

from packaging.version import Version

from stackresolve.knowledge.base import KnowledgeBase
from stackresolve.knowledge.frameworks import FrameworkKnowledge
from stackresolve.model.enums import Vendor
from stackresolve.model.values import release_line
from stackresolve.request.build import Request
from stackresolve.resolve.candidates import FrameworkCandidate, plannable


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
                pythons = plannable(group.pythons)
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
        return [replace(c, notes=c.notes + (note,)) for c in out]
    paired = []
    for c in out:
        pythons = tuple(p for p in c.pythons if p in metal.pythons)
        if c.distribution != metal.tf_package or not pythons:
            continue
        notes = (f"tensorflow-metal {metal.version} pairs with TensorFlow {', '.join(metal.tensorflow)}"
                 + (f" and needs macOS {metal.macos_min} or later" if metal.macos_min else "")
                 + "; pip does not enforce the pairing (tensorflow-metal declares no tensorflow dependency)",)
        paired.append(replace(c, pythons=pythons, companions=(f"tensorflow-metal=={metal.version}",), metal=True,
                            source=f"{c.source}; {metal.source}", notes=notes, macos_min=metal.macos_min))
    return paired or out


def jax_metal_note(fk: FrameworkKnowledge, version: str) -> str:
    """What Apple's jax-metal offers for a jax release (it is experimental; JAX's docs say to use the CPU): the
    newest jax-metal whose own jax requirement (its METADATA, which pip enforces) admits the release."""
    # lazy: start-up (packaging.requirements ~8 ms)
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
