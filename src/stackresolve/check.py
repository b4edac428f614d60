"""`stackresolve check stackresolve.lock`: does this machine match a committed lock? Pure comparison."""

from __future__ import annotations

import json
from dataclasses import dataclass

from packaging.version import InvalidVersion, Version

from stackresolve.emit.lock import SCHEMA
from stackresolve.knowledge.base import KnowledgeBase
from stackresolve.request import InputError
from stackresolve.resolve import classify_support


@dataclass(frozen=True)
class CheckFacts:
    """What is known about the machine being checked: detected, or given by flags."""

    os: str | None = None
    driver: str | None = None
    gpus: tuple[tuple[str, str | None], ...] = ()  # (name, compute capability; None: look the name up)
    python: str | None = None  # "3.7" or "3.7.17"
    tensorflow: str | None = None  # installed version
    cuda_toolkits: tuple[str, ...] = ()
    cudnn: tuple[str, ...] = ()


@dataclass(frozen=True)
class Difference:
    component: str
    expected: str
    found: str
    message: str

    def to_json(self) -> dict:
        return dict(self.__dict__)


def parse_lock(text: str, name: str) -> dict:
    try:
        lock = json.loads(text)
    except json.JSONDecodeError as exc:
        raise InputError(f"{name}: not a stackresolve lock file (invalid JSON at line {exc.lineno})")
    if not isinstance(lock, dict) or lock.get("schema") != SCHEMA or not isinstance(lock.get("stack"), dict):
        raise InputError(f"{name}: not a stackresolve lock file (expected schema {SCHEMA!r}); "
                         f"make one with `stackresolve plan --format lock -o stackresolve.lock`")
    return lock


def _minor(version: str) -> Version:
    v = Version(version)
    return Version(f"{v.major}.{v.minor}")


def check_lock(lock: dict, kb: KnowledgeBase, facts: CheckFacts) -> list[Difference]:
    stack = lock["stack"]
    request = lock.get("request", {})
    diffs: list[Difference] = []
    try:
        diffs += _check(stack, request, kb, facts)
    except (KeyError, TypeError, InvalidVersion) as exc:
        raise InputError(f"lock file is damaged: {exc!r} (re-create it with `stackresolve plan --format lock`)")
    return diffs


def _check(stack: dict, request: dict, kb: KnowledgeBase, facts: CheckFacts) -> list[Difference]:
    diffs: list[Difference] = []
    locked_os = request.get("os")
    if facts.os and locked_os and facts.os != locked_os:
        diffs.append(Difference("os", locked_os, facts.os, f"the lock was made for {locked_os}"))

    python = stack["python"]
    if facts.python:
        have = _minor(facts.python)
        if not Version(python["min"]) <= have <= Version(python["max"]):
            diffs.append(Difference("python", f"{python['min']} - {python['max']}", facts.python,
                                    f"{stack['framework']['pip_package']} {stack['framework']['version']} has no "
                                    f"wheel for Python {have}"))

    fw = stack["framework"]
    if facts.tensorflow and Version(facts.tensorflow) != Version(fw["version"]):
        diffs.append(Difference("tensorflow", fw["version"], facts.tensorflow, "a different TensorFlow is installed"))

    if stack.get("driver"):
        minimum = stack["driver"]["min"] or "0"  # null where NVIDIA gives no minimum
        if facts.driver is None:
            diffs.append(Difference("driver", f">= {minimum}", "none detected",
                                    "no NVIDIA driver was found (pass --driver to check another machine)"))
        elif Version(facts.driver) < Version(minimum):
            diffs.append(Difference("driver", f">= {minimum}", facts.driver,
                                    f"CUDA {stack['cuda']['version']} needs a newer driver"))
        line = fw.get("line") or ".".join(fw["version"].split(".")[:2])
        arch = kb.compiled_arch(line, request.get("os"), fw["version"])
        for name, cc in facts.gpus:
            known = kb.find_gpu(name) if cc is None else None
            cc = cc or (known.cc if known else None)
            if cc and classify_support(arch, cc) == "unsupported":
                diffs.append(Difference("gpu", "a GPU TensorFlow " + line + " has kernels for", f"{name} ({cc})",
                                        f"TensorFlow {line} has no kernels for compute capability {cc}"))
        # tensorflow[and-cuda] and NVIDIA's builds bring CUDA and cuDNN as wheels or inside their container
        from_pip = "[" in (fw.get("pip_package") or "") or fw.get("vendor") == "nvidia"
        if not from_pip:
            cuda = stack["cuda"]["version"]
            if cuda not in {".".join(t.split(".")[:2]) for t in facts.cuda_toolkits}:
                diffs.append(Difference("cuda", cuda, ", ".join(facts.cuda_toolkits) or "none detected",
                                        f"TensorFlow {line} loads the CUDA {cuda} libraries"))
            wanted = Version(stack["cudnn"]["version"])
            found = [Version(v) for v in facts.cudnn]
            if not any(v.major == wanted.major and v >= _minor(str(wanted)) for v in found):
                diffs.append(Difference("cudnn", f"{wanted.major}.x >= {wanted.major}.{wanted.minor}",
                                        ", ".join(facts.cudnn) or "none detected",
                                        f"TensorFlow {line} needs cuDNN {wanted.major}.x"))
    return diffs


def render_text(lock: dict, differences: list[Difference]) -> str:
    fw = lock["stack"]["framework"]
    head = f"stackresolve check: {fw['pip_package']}=={fw['version']} (lock from knowledge base " \
           f"{lock.get('knowledge_base', '?')})"
    if not differences:
        return f"{head}\nthis machine matches the lock\n"
    lines = [head, f"{len(differences)} difference(s):"]
    for d in differences:
        lines.append(f"  {d.component}: expected {d.expected}, found {d.found}: {d.message}")
    return "\n".join(lines) + "\n"


def render_json(lock: dict, differences: list[Difference]) -> str:
    return json.dumps({"schema": "stackresolve/check@1", "matches": not differences,
                       "differences": [d.to_json() for d in differences]}, indent=2) + "\n"
