"""What a refresh reader gets (Context) and what it raises; the runner is stackresolve.refresh."""

from __future__ import annotations

import threading
import time
from collections.abc import Callable, Iterable
from concurrent.futures import ThreadPoolExecutor
from typing import Any

from stackresolve.index import simple as idx
from stackresolve.model.record import record


class Unreachable(RuntimeError):
    """The source could not be reached or refused (network, DNS, HTTP error): the kind is reported, not failed."""


class Broken(RuntimeError):
    """The source answered with something the reader cannot use, or the records do not validate."""


class RefreshTimeout(RuntimeError):
    pass


@record
class KindResult:
    kind: str
    status: str  # refreshed | unreachable | failed
    detail: str  # one line: what was read, or why not
    records: int = 0
    text: str = ""  # the document written ("" unless refreshed)


class Context:
    """What a reader may use: the package index (files and metadata, memoized), other documents by URL, the
    shipped constraints files, the date, and a bounded pool for many small requests."""

    def __init__(self, index: str | None, deadline: float, today: str, pool: ThreadPoolExecutor,
                 fetch_url: Callable[[str, tuple[float, float]], bytes] | None = None, vendor: bool = True,
                 shipped: Callable[[str], dict] | None = None):
        self.deadline = deadline
        self.today = today
        self.pool = pool
        self._index_arg = index
        self._base: str | None = None
        self._session = idx.make_session(deadline=deadline)
        self._vendor_session = None
        self._fetch_url = fetch_url
        self.vendor = vendor
        self._shipped = shipped
        self._lock = threading.Lock()
        self._files: dict[str, Any] = {}

    # -- time
    def limit(self) -> tuple[float, float]:
        try:
            return idx.request_timeout(self.deadline)
        except TimeoutError:
            raise RefreshTimeout("the overall deadline passed") from None

    def _guard(self, what: str, read):
        try:
            return read(self.limit())
        except idx.PackageIndexError as exc:
            if time.monotonic() >= self.deadline:
                raise RefreshTimeout(f"the overall deadline passed while reading {what}") from None
            if isinstance(exc, idx.MetadataUnavailable):
                raise Broken(str(exc)) from exc
            raise Unreachable(str(exc)) from exc

    # -- the package index
    @property
    def base(self) -> str:
        if self._base is None:
            try:
                self._base = idx.index_url(self._index_arg)
            except idx.PackageIndexError as exc:
                raise Unreachable(str(exc)) from exc
        return self._base

    def files(self, project: str) -> list[idx.IndexFile]:
        with self._lock:
            if project in self._files:
                return self._files[project]
        found = self._guard(f"/simple/{project}/", lambda limit: idx.project_files(
            project, index=self.base, session=self._session, timeout=limit))
        with self._lock:
            self._files[project] = found
        return found

    def metadata(self, file: idx.IndexFile):
        return self._guard(file.filename, lambda limit: idx.wheel_metadata(file, session=self._session, timeout=limit))

    def map(self, fn: Callable, items: Iterable) -> list:
        return list(self.pool.map(fn, items))

    # -- other documents (NVIDIA, PyTorch): few retries, they are often unreachable
    def fetch(self, url: str) -> bytes:
        if not self.vendor:
            raise Unreachable("not asked for (--index-only)")
        if self._fetch_url is not None:
            return self._fetch_url(url, self.limit())
        # lazy: start-up (requests and urllib3, only for the network)
        import requests

        if self._vendor_session is None:
            self._vendor_session = idx.make_session(retries=1, deadline=self.deadline)
        try:
            resp = self._vendor_session.get(url, timeout=(min(5.0, self.limit()[0]), self.limit()[1]))
            resp.raise_for_status()
        except requests.RequestException as exc:
            raise Unreachable(f"{url}: {type(exc).__name__}") from exc
        return resp.content

    # -- the shipped data (readers carry arch ranges and the like over from it, by rule)
    def shipped(self, name: str) -> dict:
        if self._shipped is not None:
            return self._shipped(name)
        # lazy: start-up (only this path needs knowledge.loader)
        from stackresolve.knowledge.loader import read_toml

        return read_toml(name)[0]
