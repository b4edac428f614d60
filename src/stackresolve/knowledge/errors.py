"""Known error messages (constraints/errors.toml): typed records and their validation.

This module never reads files: the knowledge loader parses the TOML and hands the document to
`parse_errors` / `parse_error_knowledge`. The record shapes are documented at the top of
constraints/errors.toml.
"""

from __future__ import annotations

import re
from functools import lru_cache
from typing import Any, Sequence

CATEGORIES = (
    "missing-cuda-runtime",
    "missing-cudnn",
    "missing-cuda-lib",
    "cudnn-version-mismatch",
    "driver-too-old",
    "no-kernel-for-gpu",
    "cudnn-init-failure",
    "cublas-failure",
    "out-of-memory",
    "dll-load-failed-windows",
    "protobuf-incompatible",
    "tf1-api-on-tf2",
    "no-gpu-detected",
    "ptx-jit-slow",
    "numpy-incompatible",
    "h5py-incompatible",
    "harmless",
    "other",
    "keras3-legacy-model",
    "no-matching-distribution",
    "cpu-only-build",
    "package-version-mismatch",
    "driver-not-loaded",  # the driver's kernel module and its libraries are not usable as installed: no stack fixes it
    "nccl-failure",  # NCCL cannot set up communication (shared memory, sockets): fixed on the machine or container
    "container-gpu-unavailable",  # the container runtime gives the container no GPU (no NVIDIA runtime, lost devices)
    "ptxas-too-old",  # XLA found a ptxas (CUDA's PTX assembler) older than it needs
    "gfx-not-in-build",  # ROCm: the build has no code object for the AMD GPU's gfx target
    "gpu-device-access",  # the process may not open the GPU's device nodes (/dev/kfd, /dev/dri/renderD*)
)
# Who prints a message (and whose explanation a record gives): "any" for messages of CUDA, cuDNN, the
# dynamic loader, XLA's shared runtime or a Python package, whatever framework runs them.
FRAMEWORKS = ("tensorflow", "pytorch", "jax", "any")
FRAMEWORK_NAMES = {"tensorflow": "TensorFlow", "pytorch": "PyTorch", "jax": "JAX"}
from stackresolve.model.finding import SEVERITIES  # noqa: E402 (most serious first)
from stackresolve.model.record import record
# What a version can be about: the suffix of wanted_*/found_* groups, and the keys of versions_seen.
COMPONENTS = (
    "cuda",
    "cudnn",
    "cc",
    "driver",
    "driver_cuda",
    "tf",
    "python",
    "numpy",
    "protobuf",
    "h5py",
    "tensorrt",
    "keras",
    "torch",
    "jax",
    "jaxlib",
    "jax_plugin",
    "sm",
    "sm_supported",
    "gpu",
    "ptxas",
    "gfx",  # an AMD GPU's LLVM target (gfx1031), as HIP and rocminfo print it
)
HINT_KEYS = COMPONENTS + ("os", "framework")
LIBRARY_COMPONENTS = ("cuda", "cudnn", "tensorrt", "driver")
DEFAULT_RANK = 50

# Compiled on first use: importing this module (every CLI command does, through the loader) costs no
# regex compilation.
_CODE = r"^[a-z0-9]+(?:-[a-z0-9]+)*$"
_VERSION = r"^\d+(?:\.(?:\d+|x))*$"
# {name} or {name|text shown when the value is unknown}; only lower-case identifiers are
# placeholders, so `${CUDA_DIR}` in a text stays literal.
_PLACEHOLDER = r"\{([a-z][a-z0-9_]*)(?:\|([^{}]*))?\}"


@lru_cache(maxsize=None)
def cached_regex(pattern: str) -> re.Pattern[str]:
    return re.compile(pattern)


def placeholder_regex() -> re.Pattern[str]:
    """The {name} / {name|default} placeholder syntax of the texts."""
    return cached_regex(_PLACEHOLDER)


def group_component(name: str) -> tuple[str, str]:
    """(role, component) of a named group: wanted_cudnn -> ("wanted", "cudnn"). A suffix `__N` lets one
    pattern name the same component in several alternatives (found_cudnn__2 is found_cudnn)."""
    role, _, component = name.partition("_")
    return role, component.split("__", 1)[0]


def seen_placeholders() -> set[str]:
    """seen_<key>: the one value the whole text shows for a version_hint key (or <component>_from_libraries)."""
    keys = set(HINT_KEYS) | {f"{c}_from_libraries" for c in LIBRARY_COMPONENTS}
    return {f"seen_{k}" for k in keys}


_ERROR_KEYS = {
    "code", "category", "framework", "severity", "rank", "pattern", "example", "meaning", "causes", "fix",
    "context", "pins", "source", "note", "wanted", "found", "template", "template_groups", "template_source",
    "fix_for", "false_alarm_when_met",
}
# Keys of `fix_for`: the OS or the framework the log shows (a framework and an OS together: "pytorch/linux").
FIX_FOR_OS = ("linux", "windows", "wsl2", "macos")
FIX_FOR_FRAMEWORKS = ("tensorflow", "pytorch", "jax", "other")


# ----------------------------------------------------------------------------------------------
# message templates: the text as the emitting source prints it, its format specifiers standing for values
# ----------------------------------------------------------------------------------------------

# printf (%s, %d, %zu, %.2f; %% is a literal %) and Python's str.format ({}, {0}, {name!r}; {{ and }} literals)
_SPECIFIER = r"%%|%[-+ #0]*(?:\d+|\*)?(?:\.(?:\d+|\*))?(?:hh|h|ll|l|z|j|t|L)?([diouxXeEfgGcsp])|\{\{|\}\}|\{[^{}]*\}"
_VALUE_FOR = {  # what an unnamed specifier stands for, by its conversion
    "d": r"-?\d+", "i": r"-?\d+", "u": r"\d+", "o": r"[0-7]+", "x": r"[0-9a-fA-F]+", "X": r"[0-9a-fA-F]+",
    "e": r"[-+.\deE]+", "E": r"[-+.\deE]+", "f": r"[-+.\d]+", "g": r"[-+.\deE]+", "G": r"[-+.\deE]+",
    "c": r".", "p": r"(?:0x)?[0-9a-fA-F]+",
}
_ANY_TEXT = r"[^\n]*?"  # %s and {}: any text within the line, as short as the rest allows
_VERSION_TEXT = r"\d+(?:\.\d+)*"  # a named wanted_/found_ specifier is a version


def template_regex(template: str, groups: Sequence[str] = ()) -> str:
    """The regular expression of a message template: its literal text (runs of white space match any white
    space, as logs wrap lines), each format specifier a value; the n-th specifier becomes the named group
    groups[n] where that is not empty (a wanted_/found_ group matches a version)."""
    out: list[str] = []
    position = 0
    index = 0
    for match in cached_regex(_SPECIFIER).finditer(template):
        out.append(_literal(template[position:match.start()]))
        position = match.end()
        token = match.group(0)
        if token in ("%%", "{{", "}}"):
            out.append(re.escape(token[0]))
            continue
        conversion = match.group(1) or "s"
        name = groups[index] if index < len(groups) else ""
        index += 1
        if not name:
            out.append(_VALUE_FOR.get(conversion, _ANY_TEXT))
            continue
        role, _component = group_component(name)
        closing = template[match.end():match.end() + 1]
        quoted = rf"[^{re.escape(closing)}\n]+" if closing in ("'", '"') else None  # "%s": a path with ':' and spaces
        body = _VALUE_FOR.get(conversion) or (_VERSION_TEXT if role in ("wanted", "found") else
                                              quoted or r"[^\s:;,'\"()]+")
        out.append(f"(?P<{name}>{body})")
    out.append(_literal(template[position:]))
    return "".join(out)


def _literal(text: str) -> str:
    return r"\s+".join(re.escape(part) for part in re.split(r"\s+", text)) if text else ""


def _template_pattern(record: dict, where: str) -> str:
    """The alternatives of a record's templates (one template or a list), their specifiers named by
    `template_groups`; a group name used again in another template is suffixed __2, __3 (the same component)."""
    raw = record.get("template")
    templates = [raw] if isinstance(raw, str) else raw
    if not isinstance(templates, list) or not templates or not all(isinstance(t, str) and t.strip() for t in templates):
        raise _fail(where, "`template` must be a non-empty string or a list of them")
    groups = _string_list_allowing_empty(record, "template_groups", where)
    _text(record, "template_source", where)
    used: dict[str, int] = {}
    alternatives = []
    for template in templates:
        names = []
        for name in groups:
            if name:
                used[name] = used.get(name, 0) + 1
                name = name if used[name] == 1 else f"{name}__{used[name]}"
            names.append(name)
        alternatives.append(template_regex(template, names))
    return "|".join(f"(?:{a})" for a in alternatives)


def _string_list_allowing_empty(record: dict, key: str, where: str) -> tuple[str, ...]:
    value = record.get(key, [])
    if not isinstance(value, list) or not all(isinstance(v, str) for v in value):
        raise _fail(where, f"`{key}` must be a list of strings (\"\" for a value left unnamed)")
    return tuple(value)
_LIBRARY_KEYS = {"names", "component", "versions", "source", "note"}
_HINT_KEYS = {"key", "pattern", "value", "example", "source", "note"}


@record
class Cause:
    """One possible cause; `when` (searched in the whole text) promotes it to the front, `unless`
    moves it to the end (the text shows it does not apply)."""

    text: str
    when_pattern: str = ""
    fix: str = ""  # replaces the record's fix when this cause is the chosen one
    unless_pattern: str = ""  # found: moved to the end
    # the framework a cause is about ("" for any): left out of the explanation of a log of another framework
    framework: str = ""
    os: tuple[str, ...] = ()  # the OSes a cause is about (empty: any): left out of a log that shows another OS

    # The patterns are kept as text and compiled on first use: a snapshot holds no compiled pattern, and a log
    # that never reaches a record compiles none of its patterns.
    @property
    def when(self) -> re.Pattern[str] | None:
        return cached_regex(self.when_pattern) if self.when_pattern else None

    @property
    def unless(self) -> re.Pattern[str] | None:
        return cached_regex(self.unless_pattern) if self.unless_pattern else None


@record
class KnownError:
    code: str
    category: str
    severity: str
    rank: int
    pattern: str
    example: str
    meaning: str
    causes: tuple[Cause, ...]
    fix: str
    source: str
    context: tuple[str, ...] = ()
    pins: tuple[str, ...] = ()
    note: str = ""
    # (component, template) pairs: what the fix wants / what the text shows, for the components the
    # message itself does not name (protobuf "<=3.20.x", TensorFlow "1.x" for tf.Session on TF 2, ...).
    # Rendered like the texts; an entry whose placeholders have no value is left out.
    wanted: tuple[tuple[str, str], ...] = ()
    found: tuple[tuple[str, str], ...] = ()
    framework: str = "any"  # one of FRAMEWORKS: who prints the message
    # The message as the code that prints it writes it (format specifiers for the values), and where:
    # a report matches by template, so a phrasing no one has pasted yet is known.
    templates: tuple[str, ...] = ()
    template_source: str = ""
    # The fix for a log that shows an OS or a framework ("linux", "pytorch", "pytorch/linux"): the most
    # specific key the log shows wins over `fix`.
    fix_for: tuple[tuple[str, tuple[str, ...]], ...] = ()

    # `fix` as a list: alternatives, the first whose placeholders all have a value wins (the last is the fallback)
    fixes: tuple[str, ...] = ()
    # A warning that names the version it found and the one it wants, and is wrong when the found one is not older
    # (TensorFlow 1.12 warned of "ptxas 10.0.145, which is older than 9.2.88"): then it is harmless noise.
    false_alarm_when_met: bool = False
    # The literals one of which every match contains (patterns.pattern_needles), derived once when the knowledge is
    # built and kept in its snapshot: the scan reads them instead of parsing the pattern again.
    needles: tuple | None = None

    @property
    def regex(self) -> re.Pattern[str]:
        return cached_regex(self.pattern)

    def fix_in(self, framework: str | None, os_name: str | None) -> tuple[str, ...]:
        """The fix for a log of this framework and OS (either may be unknown), as alternatives: the first
        whose placeholders all have values is meant."""
        table = dict(self.fix_for)
        for key in (f"{framework}/{os_name}", framework, os_name):
            if key and "None" not in key and key in table:
                return table[key]
        return self.fixes or (self.fix,)


@record
class LibraryName:
    """A library file name TF dlopens and the versions of `component` it stands for."""

    name: str  # as written in the data; matched case-insensitively
    component: str
    versions: tuple[str, ...]  # candidates, most likely first; "11.x" = any minor of 11
    source: str
    note: str = ""


@record
class VersionHint:
    key: str
    pattern: str
    example: str
    source: str
    value: str = ""
    note: str = ""
    needles: tuple | None = None  # as KnownError.needles

    @property
    def regex(self) -> re.Pattern[str]:
        return cached_regex(self.pattern)


@record
class LibraryStatus:
    """One status of a library's error enum (constraints/error_catalogue.toml): its name and number as the header
    defines them, the text the library prints for it where known, and what it means for a user."""

    library: str  # cuda-runtime, cuda-driver, nvml, cudnn, cublas, cufft, cusolver, cusparse, nccl
    enum: str
    name: str
    value: int
    category: str
    cause: str
    fix: str
    source: str
    description: str = ""
    text: str = ""
    text_source: str = ""
    evidence: str = ""


@record
class OuterProgram:
    """A program that prints a library's error inside its own message (nvtop, docker, kubelet, the NVIDIA container
    CLI, NCCL, a framework): it tells where the error was seen, never whether it is known."""

    name: str
    pattern: str
    example: str
    source: str
    container: bool = False  # the error comes from a container runtime: the fix is on the host

    @property
    def regex(self) -> re.Pattern[str]:
        return cached_regex(self.pattern)


@record
class ErrorKnowledge:
    """Everything in errors.toml: the known errors, the library table, the version hints."""

    errors: tuple[KnownError, ...]
    libraries: tuple[LibraryName, ...] = ()
    hints: tuple[VersionHint, ...] = ()
    # (CUDA release, its minimum Linux driver, its minimum Windows driver), from constraints/cuda.toml: the
    # driver a "driver too old" message asks for, named in the fix
    drivers: tuple[tuple[str, str, str], ...] = ()
    statuses: tuple[LibraryStatus, ...] = ()  # constraints/error_catalogue.toml
    outer: tuple[OuterProgram, ...] = ()

    def driver_for(self, cuda: str) -> tuple[str, str] | None:
        """(Linux, Windows) minimum drivers of a CUDA release ("10.2"; "11" is 11.0), None when unknown."""
        wanted = cuda if "." in cuda else f"{cuda}.0"
        return next(((linux, windows) for version, linux, windows in self.drivers if version == wanted), None)

    def library(self, name: str) -> LibraryName | None:
        key = name.lower()
        for lib in self.libraries:
            if lib.name.lower() == key:
                return lib
        return None


# ----------------------------------------------------------------------------------------------
# parsing and validation
# ----------------------------------------------------------------------------------------------


def _fail(where: str, message: str, file: str = "errors.toml") -> ValueError:
    return ValueError(f"{file}: {where}: {message}")


def _text(record: dict, key: str, where: str, *, required: bool = True, file: str = "errors.toml") -> str:
    value = record.get(key, "")
    if not isinstance(value, str):
        raise _fail(where, f"`{key}` must be a string, got {value!r}", file)
    if required and not value.strip():
        raise _fail(where, f"`{key}` is missing or empty", file)
    return value


def _compile(pattern: str, where: str, key: str = "pattern") -> re.Pattern[str]:
    try:
        return re.compile(pattern)
    except re.error as exc:
        raise _fail(where, f"`{key}` does not compile: {exc}") from exc


def _check_placeholders(text: str, allowed: set[str], where: str, key: str) -> None:
    for match in placeholder_regex().finditer(text):
        if match.group(1) not in allowed:
            raise _fail(
                where,
                f"`{key}` uses {{{match.group(1)}}}, which is neither a named group of the pattern "
                "nor wanted_<component>/found_<component>/libs",
            )


def _parse_causes(raw: Any, where: str) -> tuple[Cause, ...]:
    if not isinstance(raw, list) or not raw:
        raise _fail(where, "`causes` must be a non-empty list (most likely first)")
    causes: list[Cause] = []
    for i, item in enumerate(raw):
        cwhere = f"{where}, causes[{i}]"
        if isinstance(item, str):
            if not item.strip():
                raise _fail(cwhere, "empty cause")
            causes.append(Cause(text=item))
        elif isinstance(item, dict):
            unknown = set(item) - {"text", "when", "unless", "fix", "framework", "os"}
            if unknown:
                raise _fail(cwhere, f"unknown keys {sorted(unknown)}")
            text = _text(item, "text", cwhere)
            when = _text(item, "when", cwhere, required=False)
            unless = _text(item, "unless", cwhere, required=False)
            if when:
                _compile(when, cwhere, "when")
            if unless:
                _compile(unless, cwhere, "unless")
            framework = _text(item, "framework", cwhere, required=False)
            if framework and framework not in FRAMEWORK_NAMES:
                raise _fail(cwhere, f"`framework` must be one of {', '.join(FRAMEWORK_NAMES)}")
            oses = _string_list(item, "os", cwhere)
            if set(oses) - set(FIX_FOR_OS):
                raise _fail(cwhere, f"`os` entries must be among {', '.join(FIX_FOR_OS)}")
            causes.append(
                Cause(
                    text=text,
                    when_pattern=when,
                    fix=_text(item, "fix", cwhere, required=False),
                    unless_pattern=unless,
                    framework=framework,
                    os=oses,
                )
            )
        else:
            raise _fail(cwhere, f"a cause is a string or a table, got {item!r}")
    return tuple(causes)


def _alternatives(value: Any, where: str, key: str) -> tuple[str, ...]:
    """A text, or a list of texts of which the first whose placeholders all have a value is meant."""
    texts = [value] if isinstance(value, str) else value
    if not isinstance(texts, list) or not texts or not all(isinstance(t, str) and t.strip() for t in texts):
        raise _fail(where, f"`{key}` must be a non-empty string or a list of them")
    return tuple(texts)


def _string_list(record: dict, key: str, where: str) -> tuple[str, ...]:
    value = record.get(key, [])
    if not isinstance(value, list) or not all(isinstance(v, str) and v.strip() for v in value):
        raise _fail(where, f"`{key}` must be a list of non-empty strings")
    return tuple(value)


def _version_table(record: dict, key: str, where: str) -> tuple[tuple[str, str], ...]:
    value = record.get(key, {})
    if not isinstance(value, dict):
        raise _fail(where, f"`{key}` must be a table of component = \"version or template\"")
    out: list[tuple[str, str]] = []
    for component, templates in value.items():
        if component not in COMPONENTS:
            raise _fail(where, f"`{key}`: unknown component {component!r} (one of {', '.join(COMPONENTS)})")
        # a list: the first template whose placeholders all have a value wins
        for template in templates if isinstance(templates, list) else [templates]:
            if not isinstance(template, str) or not template.strip():
                raise _fail(where, f"`{key}.{component}` must be a non-empty string or a list of them")
            out.append((component, template))
    return tuple(out)


def _parse_error(record: Any, index: int) -> KnownError:
    where = f"error[{index}]"
    if not isinstance(record, dict):
        raise _fail(where, "each [[error]] must be a table")
    code = _text(record, "code", where)
    where = f"error[{index}] (code={code!r})"
    if not cached_regex(_CODE).match(code):
        raise _fail(where, "`code` must be kebab-case (a-z, 0-9, single dashes)")
    unknown = set(record) - _ERROR_KEYS
    if unknown:
        raise _fail(where, f"unknown keys {sorted(unknown)}")
    category = _text(record, "category", where)
    if category not in CATEGORIES:
        raise _fail(where, f"category {category!r} is not one of {', '.join(CATEGORIES)}")
    severity = _text(record, "severity", where)
    if severity not in SEVERITIES:
        raise _fail(where, f"severity {severity!r} is not one of {', '.join(SEVERITIES)}")
    if category == "harmless" and severity != "info":
        raise _fail(where, "category `harmless` requires severity `info`")
    framework = _text(record, "framework", where)
    if framework not in FRAMEWORKS:
        raise _fail(where, f"framework {framework!r} is not one of {', '.join(FRAMEWORKS)}")
    rank = record.get("rank", DEFAULT_RANK)
    if not isinstance(rank, int) or isinstance(rank, bool) or not 0 <= rank <= 100:
        raise _fail(where, f"`rank` must be an integer 0-100, got {rank!r}")

    pattern = _text(record, "pattern", where, required="template" not in record)
    if "template" in record:
        from_template = _template_pattern(record, where)
        pattern = f"{pattern}|{from_template}" if pattern else from_template
    regex = _compile(pattern, where)
    for group in regex.groupindex:
        role, component = group_component(group)
        if role in ("wanted", "found") and component not in COMPONENTS:
            raise _fail(where, f"group {group!r}: unknown component {component!r} (one of {', '.join(COMPONENTS)})")
    example = _text(record, "example", where)
    if not regex.search(example):
        raise _fail(where, "`example` does not match its own `pattern`")

    meaning = _text(record, "meaning", where)
    causes = _parse_causes(record.get("causes"), where)
    fixes = _alternatives(record.get("fix"), where, "fix")
    fix = fixes[0]
    source = _text(record, "source", where)
    context = _string_list(record, "context", where)
    for key in context:
        if key not in HINT_KEYS:
            raise _fail(where, f"context key {key!r} is not a version_hint key ({', '.join(HINT_KEYS)})")
    pins = _string_list(record, "pins", where)
    fix_for = record.get("fix_for", {})
    if not isinstance(fix_for, dict):
        raise _fail(where, "`fix_for` must be a table of \"linux\" / \"pytorch\" / \"pytorch/linux\" = \"fix\"")
    fix_for = {key: _alternatives(value, where, f"fix_for.{key}") for key, value in fix_for.items()}
    for key in fix_for:
        framework_key, _, os_key = key.partition("/") if "/" in key else (key, "", "")
        ok = (framework_key in FIX_FOR_FRAMEWORKS and os_key in ("", *FIX_FOR_OS)) or (not os_key and key in FIX_FOR_OS)
        if not ok:
            raise _fail(where, f"`fix_for` key {key!r}: an OS ({', '.join(FIX_FOR_OS)}), a framework "
                               f"({', '.join(FIX_FOR_FRAMEWORKS)}) or framework/OS")
    wanted = _version_table(record, "wanted", where)
    found = _version_table(record, "found", where)

    allowed = set(regex.groupindex) | {"libs", "framework_name"} | seen_placeholders()
    allowed |= {f"{role}_{c}" for role in ("wanted", "found") for c in COMPONENTS}
    # explain's match derives these from found_gfx for a gfx-not-in-build record (rules.gfx_override)
    allowed |= {"gfx_override", "gfx_runs_as", "gfx_overrides"}
    _check_placeholders(meaning, allowed, where, "meaning")
    for text in fixes:
        _check_placeholders(text, allowed, where, "fix")
    for key, texts in fix_for.items():
        for text in texts:
            _check_placeholders(text, allowed, where, f"fix_for.{key}")
    for component, template in wanted + found:
        _check_placeholders(template, allowed, where, f"wanted/found.{component}")
    for i, cause in enumerate(causes):
        _check_placeholders(cause.text, allowed, where, f"causes[{i}]")
        _check_placeholders(cause.fix, allowed, where, f"causes[{i}].fix")

    return KnownError(
        code=code,
        category=category,
        severity=severity,
        rank=rank,
        pattern=pattern,
        example=example,
        meaning=meaning,
        causes=causes,
        fix=fix,
        source=source,
        context=context,
        pins=pins,
        note=_text(record, "note", where, required=False),
        wanted=wanted,
        found=found,
        framework=framework,
        templates=tuple([record["template"]] if isinstance(record.get("template"), str) else record.get("template", ())),
        template_source=_text(record, "template_source", where, required=False),
        fix_for=tuple(fix_for.items()),
        fixes=fixes,
        false_alarm_when_met=_flag(record, "false_alarm_when_met", where),
        needles=_needles(pattern),
    )


def _flag(record: dict, key: str, where: str) -> bool:
    value = record.get(key, False)
    if not isinstance(value, bool):
        raise _fail(where, f"`{key}` must be true or false")
    return value


def _needles(pattern: str):
    # lazy: start-up (only this path needs knowledge.patterns)
    from stackresolve.knowledge.patterns import pattern_needles  # what every match must contain, for the scan

    return pattern_needles(pattern)


def parse_errors(doc: dict) -> tuple[KnownError, ...]:
    """Validate the [[error]] records of an already-parsed errors.toml document.

    Raises ValueError naming the offending record: duplicate code, unknown category or severity,
    a pattern that does not compile, an example its own pattern does not match, an empty source,
    an unknown placeholder in a text. The [[library]] and [[version_hint]] tables are validated
    too, so that one call checks the whole file.
    """
    if not isinstance(doc, dict):
        raise ValueError("errors.toml: the document must be a table")
    raw = doc.get("error")
    if not isinstance(raw, list) or not raw:
        raise ValueError("errors.toml: no [[error]] records")
    errors = tuple(_parse_error(record, i) for i, record in enumerate(raw))
    seen: dict[str, int] = {}
    for i, error in enumerate(errors):
        if error.code in seen:
            raise _fail(f"error[{i}] (code={error.code!r})", f"duplicate code (first at error[{seen[error.code]}])")
        seen[error.code] = i
    parse_libraries(doc)
    parse_version_hints(doc)
    return errors


def parse_libraries(doc: dict) -> tuple[LibraryName, ...]:
    """The [[library]] table, one LibraryName per file name."""
    out: list[LibraryName] = []
    seen: dict[str, int] = {}
    for i, record in enumerate(doc.get("library", [])):
        where = f"library[{i}]"
        if not isinstance(record, dict):
            raise _fail(where, "each [[library]] must be a table")
        unknown = set(record) - _LIBRARY_KEYS
        if unknown:
            raise _fail(where, f"unknown keys {sorted(unknown)}")
        names = _string_list(record, "names", where)
        if not names:
            raise _fail(where, "`names` is empty")
        where = f"library[{i}] ({names[0]})"
        component = _text(record, "component", where)
        if component not in LIBRARY_COMPONENTS:
            raise _fail(where, f"component {component!r} is not one of {', '.join(LIBRARY_COMPONENTS)}")
        versions = record.get("versions")
        if not isinstance(versions, list) or not all(isinstance(v, str) and cached_regex(_VERSION).match(v) for v in versions):
            raise _fail(where, '`versions` must be a list of versions such as "10.1" or "11.x"')
        if not versions and component != "driver":
            raise _fail(where, "`versions` may be empty only for the driver")
        source = _text(record, "source", where)
        note = _text(record, "note", where, required=False)
        for name in names:
            key = name.lower()
            if key in seen:
                raise _fail(where, f"{name!r} is already in library[{seen[key]}]")
            seen[key] = i
            out.append(LibraryName(name=name, component=component, versions=tuple(versions), source=source, note=note))
    return tuple(out)


def parse_version_hints(doc: dict) -> tuple[VersionHint, ...]:
    """The [[version_hint]] table."""
    out: list[VersionHint] = []
    for i, record in enumerate(doc.get("version_hint", [])):
        where = f"version_hint[{i}]"
        if not isinstance(record, dict):
            raise _fail(where, "each [[version_hint]] must be a table")
        unknown = set(record) - _HINT_KEYS
        if unknown:
            raise _fail(where, f"unknown keys {sorted(unknown)}")
        key = _text(record, "key", where)
        where = f"version_hint[{i}] (key={key!r})"
        if key not in HINT_KEYS:
            raise _fail(where, f"key {key!r} is not one of {', '.join(HINT_KEYS)}")
        pattern = _text(record, "pattern", where)
        regex = _compile(pattern, where)
        value = _text(record, "value", where, required=False)
        groups = set(regex.groupindex)
        if not value and "v" not in groups and not {"v_major", "v_minor"} <= groups:
            raise _fail(where, "the pattern needs a group `v` (or `v_major` and `v_minor`), or give a fixed `value`")
        example = _text(record, "example", where)
        if not regex.search(example):
            raise _fail(where, "`example` does not match its own `pattern`")
        out.append(
            VersionHint(
                key=key,
                pattern=pattern,
                example=example,
                source=_text(record, "source", where),
                value=value,
                note=_text(record, "note", where, required=False),
                needles=_needles(pattern),
            )
        )
    return tuple(out)


def parse_error_knowledge(doc: dict, catalogue: dict | None = None) -> ErrorKnowledge:
    """The whole errors.toml document (errors, library table, version hints, outer programs), and the library
    status catalogue (error_catalogue.toml) when given."""
    return ErrorKnowledge(
        errors=parse_errors(doc),
        libraries=parse_libraries(doc),
        hints=parse_version_hints(doc),
        statuses=parse_catalogue(catalogue) if catalogue is not None else (),
        outer=parse_outer_programs(doc),
    )


CATALOGUE_LIBRARIES = ("cuda-runtime", "cuda-driver", "nvml", "cudnn", "cublas", "cufft", "cusolver", "cusparse", "nccl")
_STATUS_KEYS = {"library", "enum", "name", "value", "description", "text", "text_source", "category", "cause", "fix",
                "evidence", "source"}
_STATUS_NAME = r"^[A-Za-z][A-Za-z0-9_]*$"
CATALOGUE_FILE = "error_catalogue.toml"


def parse_catalogue(doc: dict) -> tuple[LibraryStatus, ...]:
    """The [[status]] records of error_catalogue.toml: one per value of each library's status enum."""
    raw = doc.get("status") if isinstance(doc, dict) else None
    if not isinstance(raw, list) or not raw:
        raise ValueError(f"{CATALOGUE_FILE}: no [[status]] records")
    out: list[LibraryStatus] = []
    seen: dict[str, int] = {}
    for i, record in enumerate(raw):
        where = f"status[{i}]"
        if not isinstance(record, dict):
            raise _fail(where, "each [[status]] must be a table", CATALOGUE_FILE)
        unknown = set(record) - _STATUS_KEYS
        if unknown:
            raise _fail(where, f"unknown keys {sorted(unknown)}", CATALOGUE_FILE)

        def text(key: str, required: bool = True) -> str:
            return _text(record, key, where, required=required, file=CATALOGUE_FILE)

        name = text("name")
        where = f"status[{i}] ({name})"
        library = text("library")
        if library not in CATALOGUE_LIBRARIES:
            raise _fail(where, f"library {library!r} is not one of {', '.join(CATALOGUE_LIBRARIES)}", CATALOGUE_FILE)
        if not cached_regex(_STATUS_NAME).match(name):
            raise _fail(where, "a status name is an identifier", CATALOGUE_FILE)
        if name in seen:
            raise _fail(where, f"duplicate name (first at status[{seen[name]}])", CATALOGUE_FILE)
        seen[name] = i
        value = record.get("value")
        if not isinstance(value, int) or isinstance(value, bool):
            raise _fail(where, "`value` must be the enum's integer", CATALOGUE_FILE)
        category = text("category")
        if category not in CATEGORIES:
            raise _fail(where, f"category {category!r} is not one of {', '.join(CATEGORIES)}", CATALOGUE_FILE)
        out.append(LibraryStatus(
            library=library, enum=text("enum"), name=name, value=value, category=category,
            cause=text("cause"), fix=text("fix"), source=text("source"),
            description=text("description", required=False),
            text=text("text", required=False),
            text_source=text("text_source", required=bool(record.get("text"))),
            evidence=text("evidence", required=False),
        ))
    return tuple(out)


_OUTER_KEYS = {"name", "pattern", "example", "source", "container", "note"}


def parse_outer_programs(doc: dict) -> tuple[OuterProgram, ...]:
    """The [[outer_program]] table: programs that print a library's error inside their own message."""
    out: list[OuterProgram] = []
    for i, record in enumerate(doc.get("outer_program", [])):
        where = f"outer_program[{i}]"
        if not isinstance(record, dict):
            raise _fail(where, "each [[outer_program]] must be a table")
        unknown = set(record) - _OUTER_KEYS
        if unknown:
            raise _fail(where, f"unknown keys {sorted(unknown)}")
        name = _text(record, "name", where)
        pattern = _text(record, "pattern", where)
        regex = _compile(pattern, f"{where} ({name})")
        example = _text(record, "example", where)
        if not regex.search(example):
            raise _fail(f"{where} ({name})", "`example` does not match its own `pattern`")
        out.append(OuterProgram(name=name, pattern=pattern, example=example, source=_text(record, "source", where),
                                container=_flag(record, "container", where)))
    return tuple(out)
