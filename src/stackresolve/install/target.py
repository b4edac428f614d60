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
from dataclasses import field

from packaging.version import InvalidVersion, Version

from stackresolve.formats.lock_read import LockedStack, field_error, parse_lock
from stackresolve.model.enums import Framework, Os
from stackresolve.model.record import record
from stackresolve.request.build import InputError

# The header plan writes above a full lock (cli/plan.py emit_full_lock).
FULL_LOCK_PYTHON = re.compile(r"^# resolved by uv for Python ([0-9]+\.[0-9]+) on ", re.M)
FULL_LOCK_STACK = re.compile(r"^# stack: (.*)$", re.M)
FRAMEWORK_DISTRIBUTIONS = {
    Framework.TENSORFLOW: ("tensorflow", "tensorflow-gpu", "tensorflow-cpu", "tensorflow-macos", "nvidia-tensorflow",
                           "tensorflow-intel"),
    Framework.PYTORCH: ("torch",),
    Framework.JAX: ("jax",),
}


@record
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
    # A JSON lock's own index option as the lock wrote it: used (as index_args) only once `with_knowledge` has found
    # it to be the knowledge base's index for the build.
    claimed_index: tuple[str, ...] = ()
    # The sdists the knowledge base names for this build (knowledge.model.SourceBuild), set by `with_knowledge`:
    # every other package is installed from a wheel.
    source_build_records: tuple = ()

    def source_builds(self, python: str) -> tuple:
        """The KB's source builds for the Python the venv has (X.Y)."""
        return tuple(b for b in self.source_build_records if not b.pythons or python in b.pythons)

    @property
    def hashed(self) -> bool:
        return bool(self.file_kind)

    @property
    def system_cuda(self) -> str:
        """"CUDA 10.0 and cuDNN 7.6.5" when the stack loads them from the system (pip does not install them)."""
        # lazy: no start-up gain (already loaded by then); kept beside its use
        from stackresolve.model.enums import Delivery

        if self.lock is None or self.lock.delivery is not Delivery.SYSTEM:
            return ""
        return f"CUDA {self.lock.cuda} and cuDNN {self.lock.cudnn_installs}"

    @property
    def python_range(self) -> str:
        ordered = sorted(self.pythons, key=Version)
        return ordered[0] if len(ordered) == 1 else f"{ordered[0]} - {ordered[-1]}"


def _requirement_line(line: str, name: str, field: str) -> str:
    """A lock's requirement line, as pip would read it from a file: one PEP 508 requirement by name, nothing else.
    A requirements file also takes options (-e, -r, --index-url, --trusted-host) and URLs, which would run code
    or fetch from elsewhere: none of those comes from a plan, so none is accepted from a lock."""
    # lazy: start-up (packaging.requirements ~8 ms)
    from packaging.requirements import InvalidRequirement, Requirement

    if not line.isprintable() or line != line.strip() or line.startswith("-"):
        raise field_error(name, field, f"is not a requirement: {line[:80]!r}")
    try:
        req = Requirement(line)
    except InvalidRequirement:
        raise field_error(name, field, f"is not a requirement: {line[:80]!r}") from None
    if req.url:
        raise field_error(name, field, f"names a URL, which no plan does: {line[:80]!r}")
    return line


def safe_text(value, limit: int = 80) -> str:
    """A value from a lock as it may appear in a message: printable, one line, cut to `limit` characters."""
    text = "".join(c if c.isprintable() else "?" for c in str(value))
    return text if len(text) <= limit else text[:limit - 3] + "..."


def refuse_pip_first(target: "InstallTarget") -> None:
    """A lock whose `pip_first` names a package (nvidia-pyindex, in locks made before NVIDIA's index was named
    directly) cannot be installed or exported as it is: InputError saying so."""
    if target.pip_first:
        raise InputError(f"this lock installs {', '.join(target.pip_first)} first, which no longer installs with "
                         f"current pip (NVIDIA/tensorflow#74); make the lock again with `stackresolve plan --format "
                         f"lock`, whose locks name NVIDIA's index directly")


def split_index_lines(lines, own_index: tuple[str, ...], name: str) -> tuple[tuple[str, ...], tuple[str, ...]]:
    """A lock's `pip` list -> (index option argv, requirement lines). The one index option accepted is the
    stack's own (`stack.framework.index_option` and `index_url`, written by the plan): any other is refused."""
    own_line = " ".join(own_index)
    index: list[str] = []
    requirements: list[str] = []
    for i, line in enumerate(lines):
        if not isinstance(line, str):
            raise field_error(name, f"pip[{i}]", "must be a string")
        if own_line and line == own_line:
            index = list(own_index)
        else:
            requirements.append(_requirement_line(line, name, f"pip[{i}]"))
    if not requirements:
        raise field_error(name, "pip", "names no requirement")
    return tuple(index), tuple(requirements)


def _minor(value, name: str, field: str) -> str:
    if not isinstance(value, str) or not re.fullmatch(r"[0-9]{1,2}\.[0-9]{1,3}", value):
        raise field_error(name, field, "must be a Python version X.Y")
    return value


def _pythons(recommended: str, available, low: str, high: str) -> tuple[str, ...]:
    """The recommended Python first (when it is inside the range), then every other one in [low, high] with
    wheels, newest first."""
    inside = [p for p in available if Version(low) <= Version(p) <= Version(high)]
    first = [recommended] if Version(low) <= Version(recommended) <= Version(high) else []
    return tuple(dict.fromkeys([*first, *sorted(inside, key=Version, reverse=True)])) or (high,)


def _table(doc: dict, key: str, name: str, field: str) -> dict:
    value = doc.get(key)
    if not isinstance(value, dict):
        raise field_error(name, field, "must be an object")
    return value


def from_lock_document(doc: dict, text: str, name: str) -> InstallTarget:
    """A lock (`plan --format lock`), already parsed as JSON; `text` is parsed again by `lock.parse_lock`, the one
    reader of the lock's `check` facts, so install and check read the same values. The fields only install reads
    (pip, pip_first, stack.python, stack.framework's index) are validated here."""
    locked = parse_lock(text, name)
    lines = doc.get("pip")
    if not isinstance(lines, list):
        raise field_error(name, "pip", "must be a list of strings")
    if not lines:
        raise InputError(f"{name}: the lock has nothing to pip install ({locked.label} is a container: run it with "
                         f"--format dockerfile instead)")
    first = doc.get("pip_first", [])
    if not isinstance(first, list) or not all(isinstance(x, str) for x in first):
        raise field_error(name, "pip_first", "must be a list of strings")
    stack = _table(doc, "stack", name, "stack")
    framework = _table(stack, "framework", name, "stack.framework")
    option, url = framework.get("index_option"), framework.get("index_url")
    own_index: tuple[str, ...] = ()
    if option is not None or url is not None:
        if option not in ("--index-url", "--extra-index-url", "--find-links") or not isinstance(url, str) or \
                not re.fullmatch(r"https://[!-~]+", url):
            raise field_error(name, "stack.framework.index_url", "must be an https URL with --index-url, "
                                                          "--extra-index-url or --find-links")
        own_index = (option, url)
    python = _table(stack, "python", name, "stack.python")
    available = python.get("available")
    if not isinstance(available, list) or not available:
        raise field_error(name, "stack.python.available", "must be a list of Python versions")
    available = [_minor(p, name, f"stack.python.available[{i}]") for i, p in enumerate(available)]
    recommended = _minor(python.get("recommended"), name, "stack.python.recommended")
    index, requirements = split_index_lines(lines, own_index, name)
    return InstallTarget(
        label=requirements[0], requirements=requirements, index_args=(), claimed_index=index,
        pythons=_pythons(recommended, available, locked.python_min, locked.python_max),
        os=locked.os, framework=Framework(locked.framework_name),
        gpu=locked.delivery is not None or locked.accelerator is not None,
        lock=locked, pip_first=tuple(first))


def from_resolution(resolution) -> InstallTarget:
    """Plan flags: the same lock document `plan --format lock` writes, read back as a lock."""
    # lazy: start-up (only this path needs formats.pip_decide)
    from stackresolve.formats.lock_render import document
    from stackresolve.formats import pip_decide as pip_plan

    doc = document(resolution, pip_plan.decide(resolution))
    text = json.dumps(doc)
    return from_lock_document(json.loads(text), text, "the plan")


STOCK_TENSORFLOW = ("tensorflow", "tensorflow-gpu", "tensorflow-cpu")


def with_knowledge(target: InstallTarget, kb) -> InstallTarget:
    """`target` with what the knowledge base, not the lock, decides: the stack's own index (a JSON lock's index
    option must be the knowledge base's index for that build: InputError otherwise) and the sdists the build may
    compile. A full lock keeps its own index lines: every file it installs is pinned by its hash."""
    # lazy: start-up (packaging.utils, only this path)
    from dataclasses import replace

    from packaging.utils import canonicalize_name

    if target.hashed:
        distribution = next((n for n in STOCK_TENSORFLOW if n in target.pins), None)
        if distribution is None:
            return target
        line = ".".join(target.pins[distribution].split(".")[:2])
        hashes = full_lock_hashes(target.file_text)
        # pinned at the knowledge base's version, and only by hashes of the index's own files of that release: a
        # lock must not bring its own sdist under a known name
        records = tuple(b for b in kb.source_builds if line in b.lines and
                        target.pins.get(canonicalize_name(b.package)) == b.version and
                        hashes.get(canonicalize_name(b.package)) and
                        hashes[canonicalize_name(b.package)] <= set(b.sha256))
        return replace(target, source_build_records=records)
    lock = target.lock
    expected = stack_indexes(kb, lock)
    claimed = target.claimed_index
    if expected is not None and claimed not in expected or expected is None and claimed:
        known = " or ".join(" ".join(e) or "the default index" for e in sorted(expected or ())) or \
            "none (the knowledge base does not know this build)"
        raise InputError(f"the lock names the index {' '.join(claimed) or '(the default index)'!r} for "
                         f"{lock.label}; the knowledge base's index for that build is {known}. A lock's index is not "
                         f"trusted: make the lock again with `stackresolve plan --format lock`, or pin every file by "
                         f"its hash with `plan --format pip --lock`")
    records = kb.source_builds if lock.framework_name == "tensorflow" and lock.framework in STOCK_TENSORFLOW else ()
    return replace(target, index_args=claimed,
                   source_build_records=tuple(b for b in records if lock.line in b.lines))


def full_lock_hashes(text: str) -> dict[str, set[str]]:
    """{package: its sha256 hashes} of a hashed requirements file (pylock wheels are never built)."""
    # lazy: start-up (packaging.utils, only this path)
    from packaging.utils import canonicalize_name

    found: dict[str, set[str]] = {}
    for line in text.replace("\\\n", " ").splitlines():
        match = re.match(r"\s*([A-Za-z0-9][A-Za-z0-9._-]*)\s*==", line)
        if match:
            found.setdefault(canonicalize_name(match.group(1)), set()).update(
                (h.lower() for h in re.findall(r"--hash[= ]sha256:([0-9a-fA-F]{64})", line)))
    return found


def stack_indexes(kb, lock: LockedStack) -> set[tuple[str, ...]] | None:
    """The index options the knowledge base gives the build a lock names (() = the default index alone); None when
    the knowledge base does not know the build. Decided from the same facts the resolver reads: NVIDIA's index for
    nvidia-tensorflow, PyTorch's index of the variant (its find-links page before 1.11), JAX's find-links pages."""
    if lock.framework_name == "tensorflow":
        if lock.framework == "nvidia-tensorflow":
            return {("--extra-index-url", kb.nvidia_index_url)} if kb.nvidia_index_url else None
        return {()}
    fk = kb.frameworks
    if lock.framework_name == "pytorch":
        # lazy: start-up (only this path needs resolve.pytorch)
        from stackresolve.resolve.pytorch import TORCH_CPU_INDEX, _torch_index

        release = fk.torch_release(Version(lock.version).public)
        if release is None:
            return None
        if lock.variant in (None, "cpu"):
            return {(), _torch_index(release, TORCH_CPU_INDEX, "cpu")[:2]}
        if lock.accelerator is not None:  # ROCm and XPU builds: constraints/amd.toml, intel.toml
            ak = kb.accelerators
            urls = [v.index_url for v in ak.torch_rocm if v.name == lock.variant and release.version in v.releases]
            urls += [x.index_url for x in ak.torch_xpu if x.name == lock.variant and release.version in x.releases]
            return {_torch_index(release, url, lock.variant)[:2] for url in urls} or None
        variants = [v for v in fk.torch_variants if v.name == lock.variant and v.covers(release.version)]
        if not variants:
            return None
        found: set[tuple[str, ...]] = set()
        for variant in variants:
            if variant.default_index:
                found.add(())
            if variant.index_url:
                found.add(_torch_index(release, variant.index_url, variant.name)[:2])
        return found
    if lock.framework_name == "jax":
        pages = {p for p in (*(e.find_links for e in fk.jax_extras), *(r.find_links for r in fk.jax_routes)) if p}
        return {(), *(("--find-links", page) for page in pages)}
    return {()}


def from_full_lock(text: str, name: str, python: str | None, os_name: Os) -> InstallTarget:
    """`plan --format pip --lock` (requirements with hashes) or `--format pylock`: installed as written, so it is
    checked first: every requirement hashed (requirements.txt) or every package a wheel with hashes (pylock), no
    option but an index one, and the Python it was resolved for."""
    # lazy: start-up (only this path needs lock.check)
    from stackresolve.lock.check import parse_full_lock

    pylock = name.endswith(".toml") or text.lstrip().startswith(("lock-version", "[[packages]]"))
    if pylock:
        pins = _pylock_pins(text, name)
        index: tuple[str, ...] = ()
    else:
        pins = parse_full_lock(text, name)
        index = _full_lock_options(text, name)
    header = FULL_LOCK_PYTHON.search(text)
    resolved_for = header.group(1) if header else None
    if python and resolved_for and python != resolved_for:
        raise InputError(f"--python {python}: {name} was resolved for Python {resolved_for}; make the lock again "
                         f"for {python}")
    python = python or resolved_for
    if python is None:
        raise InputError(f"{name}: the full lock does not say which Python it was resolved for; pass --python X.Y")
    framework = next((fw for fw, names in FRAMEWORK_DISTRIBUTIONS.items() if any(n in pins for n in names)), None)
    stack_line = FULL_LOCK_STACK.search(text)
    gpu = bool(stack_line) and "CPU only" not in stack_line.group(1) and "CUDA" in stack_line.group(1)
    label = next((f"{n}=={pins[n]}" for names in FRAMEWORK_DISTRIBUTIONS.values() for n in names if n in pins),
                 f"{len(pins)} pinned packages")
    return InstallTarget(label=label, requirements=(), index_args=index, pythons=(python,), os=os_name,
                         framework=framework, gpu=gpu, pins=pins, file_text=text,
                         file_kind="pylock.toml" if pylock else "requirements.txt")


def _full_lock_options(text: str, name: str) -> tuple[str, ...]:
    """A hashed requirements file's index options; every other option (-e, -r, --trusted-host, ...) is refused, and
    every requirement must carry a --hash (the installer then verifies each file it fetches)."""
    index: list[str] = []
    for number, line in enumerate(text.replace("\\\n", " ").splitlines(), 1):
        line = line.split("#", 1)[0].strip() if not line.lstrip().startswith("--hash") else line.strip()
        if not line:
            continue
        words = line.split()
        if words[0].startswith("-"):
            if words[0] in ("--index-url", "--extra-index-url", "--find-links") and len(words) == 2 and \
                    re.fullmatch(r"https://[!-~]+", words[1]):
                index += words
                continue
            raise InputError(f"{name}: line {number}: {words[0][:40]!r} is not accepted in a lock (only --index-url, "
                             f"--extra-index-url or --find-links with an https URL)")
        if "--hash" not in line:
            raise InputError(f"{name}: line {number} has no --hash; a full lock pins every package with its hashes "
                             f"(`stackresolve plan --format pip --lock`)")
    return tuple(index)


def _pylock_pins(text: str, name: str) -> dict[str, str]:
    """{package: version} of a PEP 751 pylock.toml: every package a wheel (or wheels), each pinned by its hashes
    and fetched over https (or from a local path)."""
    # lazy: start-up (packaging.utils, only this path)
    from packaging.utils import canonicalize_name

    from stackresolve.files.read import StructuredInputError, parse_structured

    try:
        doc = parse_structured(text, name, "TOML")
    except StructuredInputError as exc:
        raise InputError(f"not a pylock.toml: {exc}") from None
    # lazy: start-up (only this path needs index.simple)
    from stackresolve.index.simple import insecure_url

    packages = doc.get("packages")
    if not isinstance(packages, list) or not all(isinstance(p, dict) for p in packages):
        raise InputError(f"{name}: `packages` is not an array of tables; make a full lock with `stackresolve plan "
                         f"--format pylock`")
    pins = {}
    for package in packages:
        label = safe_text(package.get("name"))
        if set(package) & {"vcs", "directory", "archive", "sdist"} or not package.get("wheels"):
            raise InputError(f"{name}: package {label!r} is not installed from a wheel; a lock that builds from "
                             f"source can run code (make it with `stackresolve plan --format pylock`)")
        if not isinstance(package.get("name"), str) or not isinstance(package.get("version"), str):
            raise InputError(f"{name}: package {label!r}: `name` and `version` are strings")
        wheels = package["wheels"]
        if not isinstance(wheels, list) or not all(isinstance(w, dict) for w in wheels):
            raise InputError(f"{name}: package {label!r}: `wheels` is not an array of tables")
        for wheel in wheels:
            url, hashes = wheel.get("url"), wheel.get("hashes")
            if not isinstance(hashes, dict) or not hashes or not all(isinstance(h, str) for h in hashes.values()):
                raise InputError(f"{name}: package {label!r}: a wheel without `hashes`; a full lock pins every "
                                 f"file by its hash")
            if url is not None and (not isinstance(url, str) or insecure_url(url)):
                raise InputError(f"{name}: package {label!r}: wheel url {safe_text(url)!r} is not https; plain http "
                                 f"can be changed on the way (pip refuses it too, unless told --trusted-host)")
        try:
            Version(package["version"])
        except InvalidVersion:
            raise InputError(f"{name}: package {label!r} has no valid version") from None
        pins[canonicalize_name(package["name"])] = package["version"]
    if not pins:
        raise InputError(f"{name}: no pinned package found; make a full lock with `stackresolve plan --format pylock`")
    return pins


def read_target(text: str, name: str, python: str | None, os_name: Os) -> InstallTarget:
    """A lock file's text (JSON lock, or a full lock) -> InstallTarget; InputError, one line, when it is neither."""
    if text.lstrip().startswith("{"):
        parse_lock(text, name)  # the JSON lock's own one-line message when it is not one
        return from_lock_document(json.loads(text), text, name)
    return from_full_lock(text, name, python, os_name)
