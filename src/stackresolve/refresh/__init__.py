"""`stackresolve refresh` for every kind of data a machine can read (knowledge/refreshed.py lists the kinds): one
reader per kind, all run under one overall deadline, each one's outcome reported on its own.

- readers of the package index (PEP 691 file lists, PEP 658 metadata or the wheel's METADATA by range requests):
  index.py;
- readers of NVIDIA's redistrib_<version>.json manifests and data-center driver releases.json, and of PyTorch's
  per-variant indexes: vendor.py.

Each reader is a function (Context) -> (document, source): a document holds records of the shape of its
constraints file. Before a document is written it is laid over the shipped file and checked by the very code that
loads it (knowledge/loader.py), so a kind is written, and then labelled refreshed, only when it will be used. HTTP:
one requests session per host family with urllib3's Retry (stackresolve.index.simple.make_session), every request's
timeout cut to what is left of the deadline, and a bounded thread pool for the requests each reader makes.
"""

from __future__ import annotations

import datetime as _dt
import time
from collections.abc import Callable, Sequence
from concurrent.futures import ThreadPoolExecutor

from stackresolve.refresh.context import (  # noqa: F401 (the readers' API, re-exported)
    Broken,
    Context,
    KindResult,
    RefreshTimeout,
    Unreachable,
)


Reader = Callable[[Context], "tuple[dict, str]"]


def readers() -> dict[str, Reader]:
    # lazy: start-up (only this path needs refreshers.index, refreshers.vendor)
    from stackresolve.refresh import index as index_readers
    from stackresolve.refresh import vendor

    return {**index_readers.READERS, **vendor.READERS}


def render(kind: str, document: dict, generated: str, source: str) -> str:
    """A refreshed kind's file: a header, `generated`, `origin`, `source`, then its tables (tomli-w)."""
    # lazy: start-up (tomli-w, only where TOML is written)
    import tomli_w

    from stackresolve.knowledge.refreshed import BY_NAME

    target = BY_NAME[kind].target
    head = {"generated": generated, "origin": "refreshed", "source": source}
    header = (f"# Written by `stackresolve refresh` (kind {kind}); laid over constraints/{target} by the "
              f"knowledge loader (knowledge/refreshed.py); do not edit by hand.\n")
    return header + tomli_w.dumps({**head, **document}, multiline_strings=False)


def check(kind: str, text: str) -> int:
    """Lay the document over the shipped file and validate it as the loader will; the number of records it adds
    or changes. Raises Broken."""
    # lazy: start-up (only this path needs knowledge.loader, knowledge.refreshed)
    from stackresolve.knowledge import loader
    from stackresolve.knowledge import refreshed as rk

    k = rk.BY_NAME[kind]
    try:
        doc = loader._parse(f"{kind}.toml", text.encode("utf-8"))
        shipped = loader.read_toml(k.target)[0]
        loader._validators()[k.target](rk.merge(shipped, doc, k))
    except (ValueError, TypeError) as exc:  # KnowledgeError is a ValueError
        raise Broken(str(exc)) from exc
    return sum(len(doc.get(o.table, [])) for o in k.overlays)


def refresh(index: str | None = None, *, kinds: Sequence[str] | None = None, timeout: float = 300.0,
            workers: int = 8, today: str | None = None, vendor: bool = True,
            fetch_url: Callable[[str, tuple[float, float]], bytes] | None = None,
            shipped: Callable[[str], dict] | None = None) -> list[KindResult]:
    """Run the readers of `kinds` (default: all) under one deadline; one result per kind, in KINDS order. Writes
    nothing (the caller writes each refreshed kind's text). `fetch_url` and `shipped` replace the fetching of
    vendor documents and the shipped files the readers compare with (tests)."""
    # lazy: start-up (only this path needs knowledge.refreshed)
    from stackresolve.knowledge.refreshed import KINDS

    deadline = time.monotonic() + timeout
    date = today or _dt.datetime.now(_dt.timezone.utc).date().isoformat()
    table = readers()
    wanted = [k.name for k in KINDS if kinds is None or k.name in kinds]

    def one(name: str) -> KindResult:
        try:
            document, source = table[name](ctx)
            text = render(name, document, date, source)
            count = check(name, text)
        except Unreachable as exc:
            return KindResult(name, "unreachable", str(exc))
        except RefreshTimeout as exc:
            return KindResult(name, "unreachable", f"stopped after {timeout:g} s ({exc})")
        except (Broken, ValueError, KeyError, TypeError) as exc:
            return KindResult(name, "failed", f"{type(exc).__name__}: {exc}" if not isinstance(exc, Broken) else str(exc))
        return KindResult(name, "refreshed", source, count, text)

    with ThreadPoolExecutor(max_workers=max(1, workers), thread_name_prefix="refresh-io") as io_pool:
        ctx = Context(index, deadline, date, io_pool, fetch_url=fetch_url, vendor=vendor, shipped=shipped)
        # The readers themselves wait on the I/O pool; they get their own threads so they never starve it.
        with ThreadPoolExecutor(max_workers=max(1, len(wanted)), thread_name_prefix="refresh-kind") as kind_pool:
            return list(kind_pool.map(one, wanted))
