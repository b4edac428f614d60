"""`stackresolve site -o DIR`: a static page that answers the matrix's question for any GPU, driver and OS the
knowledge base knows, from disk or any static host.

The answers are computed here (site.data: the rows of `matrix --json`, the plans `plan` prints) and written as a
local script beside a fixed page, its script and its style (files of this package); the browser only looks them
up. Nothing is fetched: no CDN, no remote font. The files are the same on every run with the same knowledge base.
"""

from __future__ import annotations

import json
import os
from importlib import resources
from pathlib import Path

from stackresolve.knowledge.base import KnowledgeBase

PAGE_FILES = ("index.html", "site.js", "site.css")
DATA_FILE = "data.js"
DATA_GLOBAL = "STACKRESOLVE_SITE"


def site_files(kb: KnowledgeBase, **narrow) -> dict[str, bytes]:
    """{file name: content} of the site; `narrow` goes to site.data.site_data (tests)."""
    # lazy: start-up (only this path needs site.data)
    from stackresolve.site.data import site_data

    data = site_data(kb, **narrow)
    files = {name: resources.files(__name__).joinpath(name).read_bytes() for name in PAGE_FILES}
    # JSON is a JavaScript expression; the data is a script so that the page works from file://, where a browser
    # refuses to fetch() a neighbouring file
    text = json.dumps(data, ensure_ascii=False, separators=(",", ":"))
    files[DATA_FILE] = f"window.{DATA_GLOBAL} = {text};\n".encode("utf-8")
    return files


def write_site(directory: str | os.PathLike, files: dict[str, bytes]) -> list[Path]:
    """Write the files into `directory` (made if missing), each atomically; files already there under other
    names are left alone."""
    # lazy: start-up (only this path needs files.write)
    from stackresolve.files.write import atomic_write_bytes

    target = Path(directory)
    target.mkdir(parents=True, exist_ok=True)
    written = []
    for name in sorted(files):
        atomic_write_bytes(target / name, files[name])
        written.append(target / name)
    return written
