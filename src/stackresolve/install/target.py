"""What `stackresolve install` installs, read from one of three inputs into one typed value:

- a resolution (plan flags): its pip plan, and the lock document `plan --format lock` would write for it;
- a lock (`plan --format lock`): its `pip` requirements and its `check` facts;
- a full lock (`plan --format pip --lock` or `--format pylock`): every package pinned with hashes, installed with
  --require-hashes --no-deps (the lock is complete by construction), checked package by package.

The Python versions to look for come from the stack (the recommended one first, then the others the build has
wheels for, newest first); a full lock carries the one it was resolved for in its header.
"""

from __future__ import annotations

import json
import re
import sys
from dataclasses import dataclass, field

from packaging.version import InvalidVersion, Version

from stackresolve.lock import LockedStack, parse_lock
from stackresolve.model.enums import Framework, Os
from stackresolve.request import InputError

INDEX_OPTIONS = ("--index-url", "--extra-index-url", "--find-links", "-i", "-f")
# The header plan writes above a full lock (cli/plan.py emit_full_lock).
FULL_LOCK_PYTHON = re.compile(r"^# resolved by uv for Python ([0-9]+\.[0-9]+) on ", re.M)
FULL_LOCK_STACK = re.compile(r"^# stack: (.*)$", re.M)
FRAMEWORK_DISTRIBUTIONS = {
    Framework.TENSORFLOW: ("tensorflow", "tensorflow-gpu", "tensorflow-cpu", "tensorflow-macos", "nvidia-tensorflow",
                           "tensorflow-intel"),
    Framework.PYTORCH: ("torch",),
    Framework.JAX: ("jax",),
}


@dataclass(frozen=True)
class InstallTarget:
    label: str  # what is installed, for messages: "tensorflow==2.15.1"
    requirements: tuple[str, ...]  # requirement lines, without index options
    index_args: tuple[str, ...]  # ("--index-url", URL) or ("--extra-index-url", URL) ...: the stack's own index
    pythons: tuple[str, ...]  # acceptable CPython minors, preferred first
    os: Os
    framework: Framework | None  # what the import check imports (None: the lock names none we know)
    gpu: bool  # a GPU stack: the framework must see a GPU
    lock: LockedStack | None = None  # what `check` compares after installing (plan or lock input)
    pins: dict[str, str] = field(default_factory=dict)  # a full lock's {package: version}
    file_text: str = ""  # a full lock's own text, installed as it is
    file_kind: str = ""  # "requirements.txt" | "pylock.toml" for a full lock
    pip_first: tuple[str, ...] = ()

    @property
    def hashed(self) -> bool:
        return bool(self.file_kind)

    @property
    def system_cuda(self) -> str:
        """"CUDA 10.0 and cuDNN 7.6.5" when the stack loads them from the system (pip does not install them)."""
        from stackresolve.model.enums import Delivery

        if self.lock is None or self.lock.delivery is not Delivery.SYSTEM:
            return ""
        return f"CUDA {self.lock.cuda} and cuDNN {self.lock.cudnn_installs}"

    @property
    def python_range(self) -> str:
        ordered = sorted(self.pythons, key=Version)
        return ordered[0] if len(ordered) == 1 else f"{ordered[0]} - {ordered[-1]}"


def split_index_lines(lines) -> tuple[tuple[str, ...], tuple[str, ...]]:
    """A requirements file's lines -> (index options as argv, requirement lines)."""
    index: list[str] = []
    requirements: list[str] = []
    for line in lines:
        words = line.split()
        if words and words[0] in INDEX_OPTIONS and len(words) == 2:
            index += [{"-i": "--index-url", "-f": "--find-links"}.get(words[0], words[0]), words[1]]
        elif line.strip() and not line.lstrip().startswith("#"):
            requirements.append(line.strip())
    return tuple(index), tuple(requirements)


def _pythons(recommended: str, available, low: str, high: str) -> tuple[str, ...]:
    """The recommended Python first, then every other one in [low, high] with wheels, newest first."""
    inside = [p for p in available if Version(low) <= Version(p) <= Version(high)]
    return tuple(dict.fromkeys([recommended, *sorted(inside, key=Version, reverse=True)]))


def from_lock_document(doc: dict, text: str, name: str) -> InstallTarget:
    """A lock (`plan --format lock`), already parsed as JSON; `text` is parsed again by `lock.parse_lock`, the one
    reader of the lock's `check` facts, so install and check read the same values."""
    locked = parse_lock(text, name)
    lines = doc.get("pip")
    if not isinstance(lines, list) or not all(isinstance(x, str) for x in lines):
        raise InputError(f"{name}: lock field `pip` must be a list of strings (re-create the lock with "
                         f"`stackresolve plan --format lock`)")
    if not lines:
        raise InputError(f"{name}: the lock has nothing to pip install ({locked.label} is a container: run it with "
                         f"--format dockerfile instead)")
    first = doc.get("pip_first") or []
    python = (doc.get("stack") or {}).get("python") or {}
    available = [p for p in python.get("available") or [] if isinstance(p, str)] or [locked.python_min]
    recommended = python.get("recommended") if isinstance(python.get("recommended"), str) else locked.python_max
    index, requirements = split_index_lines(lines)
    return InstallTarget(
        label=requirements[0] if requirements else locked.label,
        requirements=requirements, index_args=index,
        pythons=_pythons(recommended, available, locked.python_min, locked.python_max),
        os=locked.os, framework=Framework(locked.framework_name), gpu=locked.delivery is not None,
        lock=locked, pip_first=tuple(str(x) for x in first))


def from_resolution(resolution) -> InstallTarget:
    """Plan flags: the same lock document `plan --format lock` writes, read back as a lock."""
    from stackresolve.lock import document
    from stackresolve.plan import pip as pip_plan

    doc = document(resolution, pip_plan.decide(resolution))
    text = json.dumps(doc)
    return from_lock_document(json.loads(text), text, "the plan")


def from_full_lock(text: str, name: str, python: str | None, os_name: Os) -> InstallTarget:
    """`plan --format pip --lock` (requirements with hashes) or `--format pylock`: installed as written."""
    from stackresolve.check import parse_full_lock

    pylock = name.endswith(".toml") or text.lstrip().startswith(("lock-version", "[[packages]]"))
    pins = _pylock_pins(text, name) if pylock else parse_full_lock(text, name)
    header = FULL_LOCK_PYTHON.search(text)
    python = python or (header.group(1) if header else None)
    if python is None:
        raise InputError(f"{name}: the full lock does not say which Python it was resolved for; pass --python X.Y")
    framework = next((fw for fw, names in FRAMEWORK_DISTRIBUTIONS.items() if any(n in pins for n in names)), None)
    stack_line = FULL_LOCK_STACK.search(text)
    gpu = bool(stack_line) and "CPU only" not in stack_line.group(1) and "CUDA" in stack_line.group(1)
    index = tuple(w for line in text.splitlines() for w in line.split()[:2]
                  if line.split()[:1] and line.split()[0] in INDEX_OPTIONS)
    label = next((f"{n}=={pins[n]}" for names in FRAMEWORK_DISTRIBUTIONS.values() for n in names if n in pins),
                 f"{len(pins)} pinned packages")
    return InstallTarget(label=label, requirements=(), index_args=index, pythons=(python,), os=os_name,
                         framework=framework, gpu=gpu, pins=pins, file_text=text,
                         file_kind="pylock.toml" if pylock else "requirements.txt")


def _pylock_pins(text: str, name: str) -> dict[str, str]:
    """{package: version} of a PEP 751 pylock.toml."""
    from packaging.utils import canonicalize_name

    if sys.version_info >= (3, 11):
        import tomllib
    else:  # pragma: no cover - Python 3.10
        import tomli as tomllib

    try:
        doc = tomllib.loads(text)
    except tomllib.TOMLDecodeError as exc:
        raise InputError(f"{name}: not a pylock.toml ({exc})") from None
    pins = {}
    for package in doc.get("packages") or []:
        if isinstance(package, dict) and isinstance(package.get("name"), str) and isinstance(package.get("version"),
                                                                                            str):
            try:
                Version(package["version"])
            except InvalidVersion:
                raise InputError(f"{name}: package {package['name']!r} has no valid version") from None
            pins[canonicalize_name(package["name"])] = package["version"]
    if not pins:
        raise InputError(f"{name}: no pinned package found; make a full lock with `stackresolve plan --format pylock`")
    return pins


def read_target(text: str, name: str, python: str | None, os_name: Os) -> InstallTarget:
    """A lock file's text (JSON lock, or a full lock) -> InstallTarget; InputError, one line, when it is neither."""
    if text.lstrip().startswith("{"):
        try:
            doc = json.loads(text)
        except (json.JSONDecodeError, RecursionError):
            doc = None
        if not isinstance(doc, dict):
            parse_lock(text, name)  # raises its own one-line message
        return from_lock_document(doc, text, name)
    return from_full_lock(text, name, python, os_name)
