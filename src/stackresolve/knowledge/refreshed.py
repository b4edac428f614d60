"""The kinds of data `stackresolve refresh` can re-read, and how a refreshed kind is laid over the shipped data.

Each kind has its own file in the user's cache (`<cache>/data/<kind>.toml`) with its own `generated` date,
`origin = "refreshed"` and `source`, and records of the very shape its constraints file has (the loader validates
them with that file's own parser). How a kind's records meet the shipped ones:
- "replace": the kind is the whole table (tensorflow_wheels: generated from the index alone, as it always was);
- "upsert": a record replaces the shipped one with the same key, new keys are added, and shipped records the
  refresh did not read stay (torch_companions: a partial answer never drops a companion);
- "add": records whose key the shipped file lacks are added; a shipped record is kept as it is (it is curated and
  says more than a machine can read: arch ranges, driver floors, notes);
- "update": the listed fields of the shipped record with the same key are set (PyTorch's per-variant indexes say
  which variants a release has; the rest of the record stays).
A refreshed kind that is unreadable, untrusted, older than the shipped file or that does not validate is left out
with one warning, and the shipped data is used: a kind is labelled refreshed only when its refreshed records are in
use. This module reads no network; stackresolve.refresh writes these files.
"""

from __future__ import annotations

import os
from pathlib import Path

from stackresolve.model.record import record


@record  # not a dataclass: this module is imported by every plan, and dataclass's generated code costs ms
class Overlay:
    table: str
    key: tuple[str, ...]
    mode: str  # replace | upsert | add | update
    fields: tuple[str, ...] = ()  # "update": the fields set on the shipped record
    union: tuple[str, ...] = ()  # "add": list fields of a shipped record with the same key that get the new items


@record
class Kind:
    name: str  # the cache file's stem and the name `refresh` reports
    label: str  # what a plan calls it ("TensorFlow wheels")
    target: str  # the constraints file it refreshes
    overlays: tuple[Overlay, ...]
    frameworks: tuple[str, ...]  # the plans that use it: tensorflow | pytorch | jax | "" (every plan) | macos
    index: bool  # read from the package index (the others: NVIDIA's and PyTorch's own documents)
    shipped: str = ""  # what the fallback warning says is used instead ("" = "the <label> data")
    macos: bool = False  # used only by plans for a Mac (of `frameworks`)


KINDS: tuple[Kind, ...] = (
    Kind("tensorflow_wheels", "TensorFlow wheels", "tensorflow_wheels.toml",
         (Overlay("release", ("package", "version"), "replace"),), ("tensorflow",), True, "wheel lists"),
    Kind("torch", "PyTorch releases", "pytorch.toml",
         (Overlay("release", ("version",), "add"), Overlay("variant", ("name", "platforms", "releases"), "add")),
         ("pytorch",), True),
    Kind("torch_companions", "torchvision/torchaudio", "torch_companions.toml",
         (Overlay("companion", ("package", "version"), "upsert"),), ("pytorch",), True),
    Kind("jax", "JAX releases", "jax.toml",
         (Overlay("pairing", ("jax",), "add"), Overlay("jaxlib_wheels", ("versions",), "add"),
          Overlay("plugin_wheels", ("package", "versions"), "add")), ("jax",), True),
    Kind("cudnn", "cuDNN", "cudnn.toml", (Overlay("release", ("version",), "add", union=("builds", "pip")),), ("",),
         True),
    Kind("cuda", "CUDA", "cuda.toml", (Overlay("toolkit", ("version",), "add", union=("releases",)),), ("",), True),
    Kind("nvidia_cuda", "CUDA (NVIDIA's manifests)", "cuda.toml",
         (Overlay("toolkit", ("version",), "add", union=("releases",)),), ("",), False),
    Kind("nvidia_cudnn", "cuDNN (NVIDIA's manifests)", "cudnn.toml",
         (Overlay("release", ("version",), "add", union=("builds",)),), ("",), False),
    Kind("nvidia_drivers", "data-center driver branches", "drivers.toml",
         (Overlay("data_center_compat", ("branch",), "add"),), ("",), False),
    Kind("torch_variants", "PyTorch variants (PyTorch's indexes)", "pytorch.toml",
         (Overlay("release", ("version",), "update", ("variants_linux", "variants_windows", "variants_linux_aarch64")),),
         ("pytorch",), False),
    Kind("tensorflow_metal", "tensorflow-metal", "apple.toml", (Overlay("tensorflow_metal", ("version",), "add"),),
         ("tensorflow",), True, macos=True),
    Kind("jax_metal", "jax-metal", "apple.toml", (Overlay("jax_metal", ("version",), "add"),), ("jax",), True,
         macos=True),
)
BY_NAME = {k.name: k for k in KINDS}
# What nothing machine-readable feeds (TensorFlow's tested builds, GPUs, ...): curated, drafted by
# scripts/draft_curated.py. A plan still says their date: the knowledge base's `date`.


def cache_path(kind: str, env=os.environ) -> Path | None:
    # lazy: start-up (only this path needs knowledge.snapshot)
    from stackresolve.knowledge.snapshot import cache_dir

    folder = cache_dir(env)
    return folder / "data" / f"{kind}.toml" if folder is not None else None


def read_cached(env=os.environ) -> tuple[dict[str, bytes], list[str]]:
    """The user's refreshed kinds that may be read ({kind: bytes}), and a warning for each one that is there but
    cannot be used (owned or writable by someone else, unreadable)."""
    # lazy: start-up (only this path needs files.read, knowledge.snapshot)
    from stackresolve.files.read import InputTooLarge, NotARegularFile, read_regular_bytes
    from stackresolve.knowledge.snapshot import untrusted_reason

    found: dict[str, bytes] = {}
    warnings: list[str] = []
    for kind in KINDS:
        path = cache_path(kind.name, env)
        if path is None or not os.path.lexists(path):
            continue
        untrusted = untrusted_reason(path, env)
        if untrusted:
            warnings.append(fallback_warning(kind, path, f"not used: {untrusted}"))
            continue
        try:
            found[kind.name] = read_regular_bytes(path, 64 * 1024 * 1024)
        except (OSError, NotARegularFile, InputTooLarge) as exc:
            warnings.append(fallback_warning(kind, path, f"cannot be read ({getattr(exc, 'strerror', None) or exc})"))
    return found, warnings


def fallback_warning(kind: Kind, path: Path | None, problem: str) -> str:
    return (f"{path}: {problem}; using the {kind.shipped or kind.label + ' data'} shipped with stackresolve "
            f"(`stackresolve refresh` rebuilds it)")


def _key(record: dict, overlay: Overlay):
    return tuple(tuple(v) if isinstance(v, list) else v for v in (record.get(k) for k in overlay.key))


def merge(shipped: dict, refreshed: dict, kind: Kind) -> dict:
    """The shipped document with a refreshed kind laid over it (a new dict; neither input changes)."""
    doc = dict(shipped)
    for overlay in kind.overlays:
        rows = refreshed.get(overlay.table, [])
        if not isinstance(rows, list):
            raise ValueError(f"`{overlay.table}` must be an array of tables")
        base = list(doc.get(overlay.table, []))
        if overlay.mode == "replace":
            doc[overlay.table] = rows
            continue
        index = {_key(r, overlay): i for i, r in enumerate(base) if isinstance(r, dict)}
        for row in rows:
            if not isinstance(row, dict):
                raise ValueError(f"`{overlay.table}` must be an array of tables")
            at = index.get(_key(row, overlay))
            if overlay.mode == "upsert":
                if at is None:
                    index[_key(row, overlay)] = len(base)
                    base.append(row)
                else:
                    base[at] = row
            elif overlay.mode == "add" and at is None:
                index[_key(row, overlay)] = len(base)
                base.append(row)
            elif overlay.mode == "add" and overlay.union:
                grown = dict(base[at])
                for name in overlay.union:
                    old = list(grown.get(name, []))
                    grown[name] = old + [item for item in row.get(name, []) if item not in old]
                base[at] = grown
            elif overlay.mode == "update" and at is not None:
                base[at] = {**base[at], **{f: row[f] for f in overlay.fields if f in row}}
        doc[overlay.table] = base
    return doc


def data_kinds(shipped_dates: dict[str, str], used: dict[str, dict]) -> dict[str, tuple[str, str, str]]:
    """{kind: (fetched date, "shipped" | "refreshed", source)} for every kind: the refreshed file's own date and
    source where it is in use (`used`: kind -> its parsed refreshed document), else the shipped file's date."""
    out = {}
    for kind in KINDS:
        if kind.name in used:
            doc = used[kind.name]
            out[kind.name] = (str(doc.get("generated", "")), "refreshed", str(doc.get("source", "")))
        else:
            out[kind.name] = (shipped_dates.get(kind.target, ""), "shipped", f"constraints/{kind.target}")
    return out


def usable(raw: bytes, shipped_date: str, parse) -> tuple[dict | None, str]:
    """(the refreshed document, "") when it may be laid over the shipped file, else (None, why not; "" when it is
    only older than the shipped data and so not used, silently, as a refreshed TF wheel list always was). `parse`
    is the loader's TOML reader."""
    try:
        doc = parse(raw)
    except ValueError as exc:
        return None, str(exc)
    if doc.get("origin") != "refreshed":
        return None, 'not a refreshed data file (no origin = "refreshed")'
    generated = str(doc.get("generated", ""))
    if not generated:
        return None, "says no `generated` date"
    if generated < shipped_date:
        return None, ""
    return doc, ""
