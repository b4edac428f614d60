"""The one rule for version numbers read from outside: flags, environment variables, probes, lock files, logs.

- ASCII digits only. Python's `\\d`, `str.isdigit()` and `int()` also take other scripts' digits ("２.１０",
  "٣.٧"); packaging then refuses them with an exception of its own, and a compute capability "８.６" would
  compare as 8.6. A pattern that reads numbers from outside uses DIGITS, never `\\d`.
- At most MAX_DIGITS digits a part: `int()` refuses strings of more than 4300 digits (CPython's guard against
  quadratic conversion), and no part of a driver, CUDA, cuDNN, Python or framework version has more than 8
  digits (a date). A full lock pins every project the framework pulls in, and some number their nightly builds by
  date and hour: the index's keras-nightly 2.5.0.dev2021032900 (in TensorFlow 2.5's requirements) has a part of
  10 digits; a pin of a full lock may have up to MAX_PIN_DIGITS.
"""

from __future__ import annotations

import re

MAX_DIGITS = 9
MAX_PIN_DIGITS = 20
NUMBER = f"[0-9]{{1,{MAX_DIGITS}}}"  # one version part
DOTTED = re.compile(rf"{NUMBER}(?:\.{NUMBER})+")  # "535.104.05", "12.4": two parts or more


def is_dotted_version(text: str | None) -> bool:
    """Whether `text` is a version of two parts or more within the rule (12.4, 12.4.131, nvidia-smi's own version).
    A compute capability and a driver version have their own parser (model/values.py), one per fact."""
    return isinstance(text, str) and DOTTED.fullmatch(text) is not None


def has_oversized_number(text: str, max_digits: int = MAX_DIGITS) -> bool:
    """Whether `text` holds a run of digits (of any script) longer than a version part can be."""
    return re.search(rf"\d{{{max_digits + 1},}}", text) is not None


def quoted(text: str, limit: int = 40) -> str:
    """`text` as a message quotes it (repr), shortened when it is long: a 5,000-digit value stays one readable
    line."""
    if len(text) <= limit:
        return repr(text)
    return f"{text[:limit]!r}... ({len(text)} characters)"


def parse_version(text: str, max_digits: int = MAX_DIGITS):
    """packaging's Version of a version read from outside, or None when it is none or breaks the rule (parts of at
    most `max_digits` digits: MAX_PIN_DIGITS for any project's pin in a full lock)."""
    # lazy: start-up (packaging.version, only this path)
    from packaging.version import InvalidVersion, Version

    if not text.isascii() or has_oversized_number(text, max_digits):
        return None
    try:
        return Version(text)
    except InvalidVersion:
        return None
