"""stackresolve.lock: the typed reading of the lock, the resolved stack as JSON for bootstrap scripts to commit
(written by stackresolve.formats.lock_render, `--format lock`).

The lock carries, besides the whole stack, the facts `check` compares ("check" section): the OS, the Python
range, the framework, where CUDA comes from, the CUDA line, the cuDNN the build was compiled with, the driver
floors and the compiled GPU code. `check` reads only those, so `plan` and `check` cannot disagree.

JSON rather than TOML: the standard library writes it, and every bootstrap language reads it.
"""

from __future__ import annotations

from stackresolve.model.enums import Delivery, Os
from stackresolve.model.numbers import parse_version, quoted
from stackresolve.model.values import ComputeCapability, DriverVersion, ValueTextError
from stackresolve.model.record import record
from stackresolve.request.build import InputError

SCHEMA = "stackresolve/lock@1"  # what formats/lock_render.py writes and parse_lock reads


@record
class LockedStack:
    """What `check` compares, read and validated from a lock file."""

    os: Os
    python_min: str
    python_max: str
    framework: str  # the pip distribution ("tensorflow-gpu", "torch"), or the container's label
    version: str
    line: str
    label: str
    delivery: Delivery | None  # None: a CPU-only stack
    cuda: str | None
    cudnn_installs: str | None
    cudnn_compiled: str | None
    driver_min: DriverVersion | None
    driver_minor_compat_min: DriverVersion | None
    sass: tuple[str, ...] | None  # compute capabilities ("8.6"); None: the compiled GPU code is not recorded
    ptx: tuple[str, ...] | None
    knowledge_base: str
    framework_name: str = "tensorflow"  # which framework: "tensorflow", "pytorch", "jax"
    variant: str | None = None  # PyTorch's CUDA variant ("cu124")
    accelerator: str | None = None  # "amd" | "intel": a ROCm or XPU stack (resolve/rocm.py)
    compiled_gfx: tuple[str, ...] = ()  # AMD: the gfx targets in the wheel
    override_targets: tuple[str, ...] = ()  # AMD: planned targets that run through HSA_OVERRIDE_GFX_VERSION
    hsa_override: str | None = None


def field_error(name: str, path: str, what: str) -> InputError:
    """A lock field that is missing or of the wrong shape: one line naming the file and the field."""
    return InputError(f"{name}: lock field `{path}` {what} (re-create the lock with `stackresolve plan --format "
                      f"lock`)")


class _Reader:
    """Reads fields out of the parsed JSON; any shape error is one line naming the field and the file."""

    def __init__(self, name: str):
        self.name = name

    def fail(self, path: str, what: str):
        raise field_error(self.name, path, what)

    def table(self, doc, path: str) -> dict:
        if not isinstance(doc, dict):
            self.fail(path, "must be an object")
        return doc

    def get(self, doc: dict, key: str, path: str, kind=str, optional: bool = False):
        if key not in doc:
            if optional:
                return None
            self.fail(f"{path}.{key}" if path else key, "is missing")
        value = doc[key]
        if value is None and optional:
            return None
        if not isinstance(value, kind) or isinstance(value, bool) is not (kind is bool):
            self.fail(f"{path}.{key}" if path else key, f"must be {_KIND_NAMES.get(kind, kind.__name__)}")
        return value

    def version(self, doc: dict, key: str, path: str, optional: bool = False) -> str | None:
        value = self.get(doc, key, path, str, optional)
        if value is None:
            return None
        if parse_version(value) is None:
            self.fail(f"{path}.{key}", f"is not a version ({quoted(value)})")
        return value

    def value(self, doc: dict, key: str, path: str, parse, optional: bool = False):
        """A field read by its value's one parser (model/values.py), as the flags and the probes read it."""
        text = self.get(doc, key, path, str, optional)
        return None if text is None else self._parsed(text, f"{path}.{key}", parse)

    def _parsed(self, text: str, path: str, parse):
        try:
            return parse(text)
        except ValueTextError as exc:
            self.fail(path, f"is not {exc.what} ({exc.quoted}); {exc.accepted}")

    def compute_capabilities(self, doc: dict, key: str, path: str) -> tuple[str, ...]:
        """A list of compute capabilities, as NVIDIA prints them ("8.6")."""
        values = self.get(doc, key, path, list)
        for i, value in enumerate(values):
            if not isinstance(value, str):
                self.fail(f"{path}.{key}[{i}]", "must be a string")
        return tuple(str(self._parsed(v, f"{path}.{key}[{i}]", ComputeCapability.parse)) for i, v in enumerate(values))

    def versions(self, doc: dict, key: str, path: str) -> tuple[str, ...]:
        values = self.get(doc, key, path, list)
        for i, value in enumerate(values):
            if not isinstance(value, str):
                self.fail(f"{path}.{key}[{i}]", "must be a string")
            if parse_version(value) is None:
                self.fail(f"{path}.{key}[{i}]", f"is not a version ({quoted(value)})")
        return tuple(values)


_KIND_NAMES = {str: "a string", dict: "an object", list: "a list", bool: "true or false"}


def parse_lock(text: str, name: str) -> LockedStack:
    """A lock file's text -> LockedStack; InputError (one line, naming the field and the file) when it is not a
    stackresolve lock or is damaged."""
    # lazy: start-up (only this path needs files.read)
    from stackresolve.files.read import StructuredInputError, parse_structured

    try:
        doc = parse_structured(text, name, "JSON")
    except StructuredInputError as exc:
        raise InputError(f"not a stackresolve lock file: {exc}") from None
    if not isinstance(doc, dict) or doc.get("schema") != SCHEMA:
        raise InputError(f"{name}: not a stackresolve lock file (expected schema {SCHEMA!r}); make one with "
                         f"`stackresolve plan --format lock -o stackresolve.lock`")
    r = _Reader(name)
    check = r.table(r.get(doc, "check", "", dict), "check")
    os_name = r.get(check, "os", "check")
    if os_name not in Os.names():
        r.fail("check.os", f"must be one of {', '.join(Os.names())}")
    python = r.get(check, "python", "check", dict)
    framework = r.get(check, "framework", "check", dict)
    delivery = r.get(check, "delivery", "check", optional=True)
    if delivery is not None and delivery not in Delivery.names():
        r.fail("check.delivery", f"must be one of {', '.join(Delivery.names())} or null")
    cudnn = r.get(check, "cudnn", "check", dict, optional=True) or {}
    driver = r.get(check, "driver", "check", dict, optional=True) or {}
    arch = r.get(check, "compiled_arch", "check", dict, optional=True)
    accel = r.get(check, "accelerator", "check", dict, optional=True) or {}
    vendor = r.get(accel, "vendor", "check.accelerator", optional=True) if accel else None
    if vendor not in (None, "amd", "intel"):
        r.fail("check.accelerator.vendor", "must be amd or intel")
    compiled_gfx = tuple(r.get(accel, "compiled_gfx", "check.accelerator", list, optional=True) or ())
    targets = tuple(r.get(accel, "targets", "check.accelerator", list, optional=True) or ())
    # lazy: start-up (only this path needs model.accelerator)
    from stackresolve.model.accelerator import read_gfx

    if any(not isinstance(t, str) or read_gfx(t) != t for t in compiled_gfx + targets):
        r.fail("check.accelerator", "gfx targets must be LLVM names such as gfx1100")
    hsa_override = r.get(accel, "hsa_override", "check.accelerator", optional=True) if accel else None
    return LockedStack(
        os=Os(os_name),
        python_min=r.version(python, "min", "check.python"),
        python_max=r.version(python, "max", "check.python"),
        framework=r.get(framework, "distribution", "check.framework", optional=True) or "",
        version=r.version(framework, "version", "check.framework"),
        line=r.version(framework, "line", "check.framework"),
        label=r.get(framework, "label", "check.framework"),
        delivery=Delivery(delivery) if delivery else None,
        cuda=r.version(check, "cuda", "check", optional=True),
        cudnn_installs=r.version(cudnn, "installs", "check.cudnn", optional=True),
        cudnn_compiled=r.version(cudnn, "compiled", "check.cudnn", optional=True),
        driver_min=r.value(driver, "min", "check.driver", DriverVersion.parse, optional=True),
        driver_minor_compat_min=r.value(driver, "minor_compat_min", "check.driver", DriverVersion.parse,
                                        optional=True),
        sass=r.compute_capabilities(arch, "sass", "check.compiled_arch") if arch is not None else None,
        ptx=r.compute_capabilities(arch, "ptx", "check.compiled_arch") if arch is not None else None,
        knowledge_base=doc.get("knowledge_base") if isinstance(doc.get("knowledge_base"), str) else "?",
        framework_name=_framework_name(r, framework),
        variant=r.get(framework, "variant", "check.framework", optional=True),
        accelerator=vendor,
        compiled_gfx=compiled_gfx,
        override_targets=tuple(t for t in targets if t not in compiled_gfx) if hsa_override else (),
        hsa_override=hsa_override,
    )


def _framework_name(r: _Reader, framework: dict) -> str:
    # lazy: no start-up gain (already loaded by then); kept beside its use
    from stackresolve.model.enums import Framework

    name = r.get(framework, "name", "check.framework", optional=True) or Framework.TENSORFLOW.value
    if name not in Framework.names():
        r.fail("check.framework.name", f"must be one of {', '.join(Framework.names())}")
    return name
