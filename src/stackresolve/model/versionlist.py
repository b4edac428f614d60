"""How a message names many versions: as a range, not a list. A conflict over every JAX release would otherwise
name 36 of them on one line; the user needs the lowest, the highest and how many."""

from __future__ import annotations

from typing import Iterable

from packaging.version import InvalidVersion, Version

LISTED_AT_MOST = 3  # up to this many versions are named one by one


def _order(text: str):
    try:
        return (0, Version(text), text)
    except InvalidVersion:
        return (1, Version("0"), text)  # not a version: after the versions, by its text


def version_span(versions: Iterable[str], noun: str = "releases", inner: bool = False) -> str:
    """"2.4.0", "2.4.0, 2.4.1", or "0.4.26 ... 0.12.0.1 (36 releases)": distinct versions, lowest first; `inner`
    for a span already in parentheses: "36 releases: 0.4.26 ... 0.12.0.1"."""
    ordered = sorted(set(versions), key=_order)
    if len(ordered) <= LISTED_AT_MOST:
        return ", ".join(ordered)
    if inner:
        return f"{len(ordered)} {noun}: {ordered[0]} ... {ordered[-1]}"
    return f"{ordered[0]} ... {ordered[-1]} ({len(ordered)} {noun})"


def labels_span(labels: Iterable[str]) -> str:
    """Candidate labels ("jax 0.4.26", "torch 2.5.1 (cu124)") summarised per name and variant: "jax 0.4.26 ...
    0.12.0.1 (36 releases)"; labels that are not "NAME VERSION[ (VARIANT)]" are kept as they are. Groups keep the
    order of their first label."""
    groups: dict[tuple[str, str], list[str]] = {}
    for label in dict.fromkeys(labels):
        name, _, rest = label.partition(" ")
        version, _, variant = rest.partition(" ")
        if not version or _order(version)[0]:
            groups.setdefault((label, ""), [])
            continue
        groups.setdefault((name, variant), []).append(version)
    out = []
    for (name, variant), versions in groups.items():
        if not versions:
            out.append(name)
        elif len(versions) <= LISTED_AT_MOST:
            out += [" ".join(filter(None, (name, v, variant))) for v in versions]
        else:
            out.append(" ".join(filter(None, (name, version_span(versions), variant))))
    return ", ".join(out)
