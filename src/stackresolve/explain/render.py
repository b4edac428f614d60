"""The explanation for the terminal."""

from __future__ import annotations

from stackresolve.explain.fix import _JAX_PLUGIN_VARIANT, FixRequest
from stackresolve.explain.match import Explanation
from stackresolve.knowledge.errors import FRAMEWORK_NAMES


_LABELS = {
    "compute_capability": "compute capability",
    "pins": "pip pins",
    "cuda": "CUDA",
    "cudnn": "cuDNN",
    "cc": "compute capability",
    "driver": "driver",
    "driver_cuda": "driver supports CUDA up to",
    "tf": "TensorFlow",
    "python": "Python",
    "numpy": "NumPy",
    "protobuf": "protobuf",
    "h5py": "h5py",
    "tensorrt": "TensorRT",
    "keras": "Keras",
    "gpu": "GPU",
    "os": "OS",
    "torch": "PyTorch",
    "jax": "JAX",
    "jaxlib": "jaxlib",
    "jax_plugin": "JAX CUDA plugin",
    "sm": "GPU architecture",
    "sm_supported": "architectures of the installed build",
    "framework": "framework",
}


def _label(key: str) -> str:
    if key.endswith("_from_libraries"):
        base = key[: -len("_from_libraries")]
        return f"{_LABELS.get(base, base)} (from library names)"
    return _LABELS.get(key, key)


def _versions_line(versions: dict[str, str]) -> str:
    return ", ".join(f"{_label(k)} {v.replace('|', ' or ')}" for k, v in versions.items())


def render_text(explanation: Explanation, fix: FixRequest | None = None) -> str:
    """Terminal rendering: most serious first, then the versions seen (and the fix request, if given)."""
    lines: list[str] = []
    if not explanation.matches:
        lines.append("No known error message found in this text.")
    else:
        problems = sum(1 for m in explanation.matches if m.severity != "info")
        noise = len(explanation.matches) - problems
        summary = f"{problems} problem{'s' if problems != 1 else ''}"
        if noise:
            summary += f" and {noise} harmless message{'s' if noise != 1 else ''}"
        lines.append(f"Found {summary} (most serious first).")
        for i, m in enumerate(explanation.matches, 1):
            lines.append("")
            # the record's code, then its category only where it says more (a record named after its category)
            about = [m.category] if m.category != m.code else []
            about += [f"{m.count} times"] if m.count > 1 else []
            about += [f"line {m.line}"] + ([f"through {m.via}"] if m.via else [])
            lines.append(f"{i}. [{m.severity}] {m.code} ({', '.join(about)})")
            lines.append(f"   seen:    {m.evidence}")
            lines.append(f"   means:   {m.meaning}")
            if m.wanted:
                lines.append(f"   wanted:  {_versions_line(m.wanted)}")
            if m.found:
                lines.append(f"   found:   {_versions_line(m.found)}")
            lines.append(f"   cause:   {m.cause}")
            for other in m.causes[1:]:
                lines.append(f"            or: {other}")
            lines.append(f"   fix:     {m.fix}")
            lines.append(f"   source:  {m.source}")
    if explanation.versions_seen:
        lines.append("")
        lines.append("Versions seen in the text:")
        for key, values in explanation.versions_seen.items():
            lines.append(f"   {_label(key)}: {', '.join(v.replace('|', ' or ') for v in values)}")
    if fix is not None and explanation.has_problem:
        request = fix.to_json_dict()
        request.pop("evidence", None)
        # the framework is said once, by name: TensorFlow's own version is the `tf` entry
        for key in ("framework", "framework_version", "variant", "jaxlib", "supported_sms"):
            request.pop(key, None)
        parts: list[str] = []
        if fix.framework in ("pytorch", "jax"):
            version = f" {fix.framework_version}" if fix.framework_version else ""
            plugin = fix.framework == "jax" and bool(fix.variant) and _JAX_PLUGIN_VARIANT.fullmatch(fix.variant)
            variant = f" ({fix.variant})" if fix.variant and (not fix.jaxlib or plugin) else ""
            parts.append(f"{FRAMEWORK_NAMES[fix.framework]}{version}{variant}")
            if fix.jaxlib:
                parts.append(f"jaxlib {fix.jaxlib}" + (f" ({fix.variant})" if fix.variant and not plugin else ""))
        if request or parts:
            lines.append("")
            if "tf" in request:
                request.pop("tf_candidates", None)
            parts += [f"{_label(k) if k != 'tf_candidates' else 'one of the TensorFlow lines'} "
                      f"{', '.join(v) if isinstance(v, list) else v}" for k, v in request.items()]
            lines.append("The fix asks for: " + "; ".join(parts))
            for why in fix.evidence:
                lines.append(f"   - {why}")
    return "\n".join(lines) + "\n"
