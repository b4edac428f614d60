"""Readable text for `stackresolve detect`: every fact followed by the probe that found it, in brackets."""

from __future__ import annotations

from stackresolve.model.machine import FrameworkInfo, Machine


def _row(label: str, text: str, source: str | None) -> str:
    src = f"  [{source}]" if source else ""
    return f"{label:<12}{text}{src}"


FRAMEWORK_LABELS = {"tensorflow": "TensorFlow", "pytorch": "PyTorch", "jax": "JAX"}


def _tensorflow_text(f: FrameworkInfo) -> str:
    bits = [f"{f.package or f.name} {f.version or '?'}"]
    if f.gpu_build is True:
        bits.append("GPU build")
    elif f.gpu_build is False:
        bits.append("CPU-only build")
    if f.cuda:
        bits.append(f"built with CUDA {f.cuda}")
    if f.cudnn:
        bits.append(f"cuDNN {f.cudnn}")
    return ", ".join(bits)


def _framework_text(f: FrameworkInfo) -> str:
    """The text of a PyTorch or JAX row: `2.5.1 (CUDA 12.4 build, variant cu124) in /site; torchvision 0.20.1`."""
    if f.cuda:
        build = f"CUDA {f.cuda} build" + (f", cuDNN {f.cudnn}" if f.cudnn else "")
    elif f.hip:
        build = f"ROCm build, HIP {f.hip}"
    elif f.variant == "cpu":
        build = "CPU-only build"
    elif f.gpu_build is False:
        build = "no CUDA"
    else:
        build = "build unknown"
    if f.variant:
        build += f", variant {f.variant}"
    text = f"{f.version or '?'} ({build})"
    if f.package and f.package not in ("torch", "jax"):
        text = f"{f.package} {text}"
    if f.path:
        text += f" in {f.path}"
    if f.companions:
        text += "; " + ", ".join(f"{c.name} {c.version or '?'}" for c in f.companions)
    return text


def _vendor_rows(machine: Machine) -> list[str]:
    """AMD GPUs, ROCm, Intel GPUs, Level Zero and the device nodes: rows only for what was found."""
    rows = []
    for a in machine.amd_gpus:
        parts = [a.gfx] + ([a.name] if a.name else []) + ([f"PCI {a.pci_id}"] if a.pci_id else [])
        rows.append(_row(f"AMD GPU {a.index}", ", ".join(parts), a.source))
    r = machine.rocm
    if r is not None:
        text = (f"{r.version or 'unknown version'} at {r.path}" if r.path else "not installed (no ROCm folder)")
        text += f"; amdgpu {r.amdgpu_version} (DKMS)" if r.amdgpu_version else ""
        rows.append(_row("ROCm", text, r.source))
    for g in machine.intel_gpus:
        parts = [g.name or "Intel GPU", f"PCI {g.pci_id}",
                 f"driver {g.kernel_driver}" if g.kernel_driver else "no driver bound"]
        if g.bus_id:
            parts.append(f"bus {g.bus_id}")
        rows.append(_row(f"Intel GPU {g.index}", ", ".join(parts), g.source))
    if machine.intel_gpus or machine.level_zero:
        rows.append(_row("Level Zero", machine.level_zero or "loader not found (libze_loader.so.1)", None))
    if machine.gpu_devices:
        rows.append(_row("Devices", ", ".join(
            d.path + (" missing" if not d.exists else " usable" if d.usable else " not usable by this user")
            + (f" (group {d.group})" if d.group else "") for d in machine.gpu_devices), None))
    return rows


def render_text(machine: Machine) -> str:
    lines: list[str] = []
    o = machine.os
    flavour = []
    if o.wsl:
        flavour.append("WSL2")
    if o.container:
        flavour.append("container")
    os_text = " ".join(x for x in (o.system, o.distro, o.release, o.arch) if x)
    if flavour:
        os_text += " (" + ", ".join(flavour) + ")"
    lines.append(_row("OS", os_text, o.source))

    d = machine.driver
    if d is None:
        lines.append(_row("Driver", "none found", None))
    else:
        lines.append(_row("Driver", d.version or "unknown version", d.source if d.version else None))
        lines.append(_row("CUDA max", (d.cuda_max or "unknown") + ("  (highest CUDA the driver supports)"
                                                                    if d.cuda_max else ""),
                          d.cuda_max_source))
    if not machine.gpus:
        lines.append(_row("GPU", "no NVIDIA GPU found", None))
    for g in machine.gpus:
        parts = [g.name or "unnamed GPU"]
        if g.compute_capability:
            cc = f"compute capability {g.compute_capability}"
            if g.compute_capability_source and g.compute_capability_source != g.source:
                cc += f" [{g.compute_capability_source}]"
            parts.append(cc)
        else:
            parts.append("compute capability unknown")
        if g.memory_mib:
            parts.append(f"{g.memory_mib} MiB")
        if g.model and g.model != g.name:
            parts.append(f"model {g.model}")
        if g.pci_id:
            parts.append(f"PCI {g.pci_id}")
        lines.append(_row(f"GPU {g.index}", ", ".join(parts), g.source))

    lines.extend(_vendor_rows(machine))

    if not machine.cuda_toolkits:
        lines.append(_row("CUDA", "no toolkit found", None))
    for t in machine.cuda_toolkits:
        text = t.version + (f" ({t.full_version})" if t.full_version and t.full_version != t.version else "")
        if t.path:
            text += f" at {t.path}"
        if t.on_path:
            text += ", nvcc on PATH"
        lines.append(_row("CUDA", text, t.source))
    if not machine.cudnn:
        lines.append(_row("cuDNN", "none found", None))
    for c in machine.cudnn:
        lines.append(_row("cuDNN", c.version + (f" at {c.path}" if c.path else ""), c.source))

    p = machine.python
    if p is not None:
        lines.append(_row("Python", f"{p.version or 'unknown version'} {p.executable or ''}".rstrip(), p.source))
        if p.packages:
            lines.append(_row("pip", ", ".join(f"{d.name} {d.version or '?'}" for d in p.packages), "dist-info"))
    if not machine.frameworks:
        lines.append(_row("Frameworks", "none installed (TensorFlow, PyTorch, JAX)", None))
    for f in machine.frameworks:
        if f.name == "tensorflow":
            lines.append(_row("TensorFlow", _tensorflow_text(f), f.source))
        else:
            lines.append(_row(FRAMEWORK_LABELS.get(f.name, f.name), _framework_text(f), f.source))

    if machine.env:
        lines.append("")
        lines.append("Environment:")
        for k, v in machine.env.items():
            if k == "PATH" and len(v) > 100:
                v = v[:97] + "..."
            # a variable's value is the user's text: a newline or an escape in it must not reach the terminal
            lines.append(f"  {k}=" + "".join(ch if ch.isprintable() else "?" for ch in v))
    if machine.findings:
        lines.append("")
        lines.append("Findings:")
        for f in machine.findings:
            line = f"  {f.severity:<8}{f.code}: {f.message}"
            if f.fix:
                line += f"\n{'':<12}fix: {f.fix}"
            lines.append(line)
    if machine.probes:
        lines.append("")
        lines.append("Probes:")
        for r in machine.probes:
            status = "timed out" if r.status == "timeout" else r.status
            lines.append(f"  {r.name:<34}{status:<10}{r.seconds * 1000:7.1f} ms  {r.detail}".rstrip())
    return "\n".join(lines) + "\n"
