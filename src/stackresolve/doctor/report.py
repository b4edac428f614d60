"""What doctor reports: the target it checked against, the findings, the libraries it test-loaded."""

from __future__ import annotations

from dataclasses import dataclass, field

from stackresolve.model.enums import Severity
from stackresolve.model.finding import Finding
from stackresolve.model.stack import Resolution

SCHEMA = "stackresolve/doctor@1"
PLAN_FORMATS = "pip|apt|conda|powershell"


@dataclass(frozen=True)
class Target:
    """What the checked TensorFlow needs (from the resolver's stack, corrected by the wheel's own build_info)."""

    tf_version: str
    pip_package: str
    origin: str  # "installed" | "--tf" | "newest for this machine"
    python: str | None
    cuda: str | None
    cuda_source: str = ""
    cudnn_compiled: str | None = None  # "7.4": the cuDNN the build was compiled with
    cudnn_recommended: str | None = None  # the release the plan installs ("7.6.5")
    cudnn_source: str = ""
    driver_min: str | None = None
    driver_source: str = ""
    and_cuda: bool = False  # CUDA and cuDNN come as pip wheels (tensorflow[and-cuda], nvidia-tensorflow)
    libraries: tuple[tuple[str, str], ...] = ()

    def to_json_dict(self) -> dict:
        return {"tensorflow": self.tf_version, "pip_package": self.pip_package, "origin": self.origin,
                "python": self.python, "cuda": self.cuda, "cudnn_compiled": self.cudnn_compiled,
                "cudnn_recommended": self.cudnn_recommended, "driver_min": self.driver_min,
                "and_cuda": self.and_cuda, "libraries": [name for _, name in self.libraries]}


@dataclass(frozen=True)
class DoctorReport:
    findings: tuple[Finding, ...]
    target: Target | None
    machine: dict  # a summary of the detected facts
    libraries: tuple[tuple[str, bool, str], ...] = ()  # (file name, loads, detail) when the load check ran
    resolution: Resolution | None = field(default=None, compare=False, repr=False)  # for --format pip|apt|...
    frameworks: tuple = ()  # the installed PyTorch and JAX as checked (doctor.frameworks.FrameworkCheck)

    @property
    def healthy(self) -> bool:
        return not any(f.severity is Severity.ERROR for f in self.findings)

    @property
    def exit_code(self) -> int:
        return 0 if self.healthy else 1

    def by_severity(self, severity: str) -> list[Finding]:
        return [f for f in self.findings if f.severity == severity]

    def plan_hint(self) -> str:
        if self.target is None and self.frameworks:
            return self.frameworks[0].plan_command
        version = self.target.tf_version if self.target else "VERSION"
        if "+nv" in version:  # NVIDIA's build: its upstream release, from NVIDIA's builds
            return f"stackresolve plan --tf {version.split('+')[0]} --vendor nvidia --format {PLAN_FORMATS}"
        return f"stackresolve plan --tf {version} --format {PLAN_FORMATS}"

    def to_json_dict(self) -> dict:
        return {
            "schema": SCHEMA,
            "healthy": self.healthy,
            "target": self.target.to_json_dict() if self.target else None,
            "machine": self.machine,
            "libraries": [{"name": n, "loads": ok, "detail": d} for n, ok, d in self.libraries],
            "findings": [f.to_json() for f in self.findings],
            "plan_command": self.plan_hint(),
            "frameworks": [c.to_json_dict() for c in self.frameworks],
        }

    def render_text(self) -> str:
        # lazy: start-up (only this path needs formats.findings)
        from stackresolve.formats.findings import finding_lines

        lines = []
        t = self.target
        m = self.machine
        where = m.get("os") or "unknown OS"
        py = (m.get("python") or {}).get("version")
        if t:
            head = f"stackresolve doctor: {t.pip_package} {t.tf_version} ({t.origin}) on {where}"
            lines.append(head + (f", Python {py}" if py else ""))
            if t.cuda:
                needs = [f"CUDA {t.cuda}", f"cuDNN {t.cudnn_compiled.split('.')[0]}.x >= {t.cudnn_compiled}"
                         if t.cudnn_compiled else "cuDNN", f"driver >= {t.driver_min or '?'}"]
                lines.append("needs: " + ", ".join(needs) + (" (as pip wheels)" if t.and_cuda else ""))
            else:
                lines.append("needs: no CUDA (CPU-only TensorFlow)")
        elif self.frameworks:
            lines.append(f"stackresolve doctor: {' and '.join(c.label for c in self.frameworks)} on {where}"
                         + (f", Python {py}" if py else ""))
        else:
            lines.append(f"stackresolve doctor on {where}" + (f", Python {py}" if py else ""))
        for c in self.frameworks:
            lines.append(("also installed: " if t else "") + c.needs)
        if self.libraries:
            loads = sum(1 for _, ok, _ in self.libraries if ok)
            lines.append(f"libraries: {loads} of {len(self.libraries)} load "
                         f"({', '.join(n for n, ok, _ in self.libraries if not ok) or 'all good'}"
                         f"{' missing' if loads < len(self.libraries) else ''})")
        for severity in Severity:
            group = self.by_severity(severity)
            if not group:
                continue
            lines.append("")
            lines.append(f"{severity.value.upper()}S ({len(group)})" if len(group) > 1 else
                         f"{severity.value.upper()} (1)")
            for f in group:
                lines += finding_lines(f, f"[{f.code}]", f.source, "source")
        lines.append("")
        errors, warnings = len(self.by_severity("error")), len(self.by_severity("warning"))
        if self.healthy and t is not None and t.origin == "newest for this machine":
            lines.append("nothing installed yet: the plan below installs "
                         f"{t.pip_package} {t.tf_version}" + (f" ({warnings} warning{'s' if warnings != 1 else ''})"
                                                             if warnings else ""))
        elif self.healthy:
            lines.append("healthy" + (f" ({warnings} warning{'s' if warnings != 1 else ''})" if warnings else ""))
        else:
            lines.append(f"problems found: {errors} error{'s' if errors != 1 else ''}"
                         + (f", {warnings} warning{'s' if warnings != 1 else ''}" if warnings else ""))
        lines.append(f"full fix plan: {self.plan_hint()}")
        return "\n".join(lines) + "\n"
