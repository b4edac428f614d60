#!/usr/bin/env python3
"""Regenerate the shipped constraints/tensorflow_wheels.toml from the package index (stackresolve.refresh.tensorflow_wheels does the
work; `stackresolve refresh` writes a user's copy instead).

    python scripts/update_tf_wheels.py [--index-url URL] [--output PATH]

The index is the one pip would use (see ``stackresolve.index.simple.index_url``). The file is written atomically and only
when every wheel on a tracked platform could be classified; otherwise the script exits 1 and names the wheels
(e.g. a new CPython minor: extend ``stackresolve.index.simple.KNOWN_CPYTHON``).
"""

from __future__ import annotations

import argparse
import sys
from collections.abc import Sequence
from pathlib import Path

ROOT = Path(__file__).resolve().parent.parent
try:
    from stackresolve.index import simple as idx
except ImportError:  # running from a checkout without the package installed
    sys.path.insert(0, str(ROOT / "src"))
    from stackresolve.index import simple as idx

from stackresolve.files.write import atomic_write
from stackresolve.refresh.tensorflow_wheels import RefreshTimeout, UnclassifiedWheels, fetch_wheels_toml

DEFAULT_OUTPUT = ROOT / "constraints" / "tensorflow_wheels.toml"


def main(argv: Sequence[str] | None = None) -> int:
    ap = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    ap.add_argument("--index-url", help="simple-API base URL (default: the index pip would use)")
    ap.add_argument("--output", type=Path, default=DEFAULT_OUTPUT, help=f"default: {DEFAULT_OUTPUT}")
    ap.add_argument("--workers", type=int, default=6, help="parallel metadata reads (default 6)")
    ap.add_argument("--timeout", type=float, default=900.0, help="seconds for the whole refresh (default 900)")
    args = ap.parse_args(argv)
    try:
        text, records = fetch_wheels_toml(args.index_url, timeout=args.timeout, workers=args.workers)
    except (idx.PackageIndexError, UnclassifiedWheels, RefreshTimeout) as exc:
        print(f"update_tf_wheels: {exc}", file=sys.stderr)
        return 1
    args.output.parent.mkdir(parents=True, exist_ok=True)
    atomic_write(args.output, text)
    counts: dict[str, int] = {}
    for r in records:
        counts[r["package"]] = counts.get(r["package"], 0) + 1
    summary = ", ".join(f"{p} {n}" for p, n in counts.items())
    print(f"wrote {args.output} ({len(records)} releases: {summary})", file=sys.stderr)
    return 0


if __name__ == "__main__":
    sys.exit(main())
