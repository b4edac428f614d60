"""Test setup for tests/detect: make the source tree importable when the package is not installed."""

from __future__ import annotations

import sys
from pathlib import Path

try:
    import stackresolve  # noqa: F401
except ImportError:  # pragma: no cover
    sys.path.insert(0, str(Path(__file__).resolve().parents[2] / "src"))
