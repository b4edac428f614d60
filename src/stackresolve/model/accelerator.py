"""A GPU that is not NVIDIA's, as a request's target: an AMD GPU (its gfx target, the LLVM processor its code
objects are built for) or an Intel GPU (its device family). NVIDIA GPUs stay GpuTargets (compute capability)."""

from __future__ import annotations

from stackresolve.model.record import record

AMD = "amd"
INTEL = "intel"


@record
class AcceleratorTarget:
    vendor: str  # "amd" | "intel"
    name: str  # "AMD Instinct MI300X"; "" when only the gfx target is known
    gfx: str  # AMD: "gfx942"; "" for Intel
    family: str  # Intel: "arc-a"; "" for AMD
    architecture: str  # "CDNA3", "Xe-HPG"; "" when unknown
    source: str  # "flag --gpu", "flag --gpu-gfx", "env:STACKRESOLVE_GPU_GFX", "kfd-topology + amd.toml", ...

    @property
    def label(self) -> str:
        if self.vendor == AMD:
            return f"{self.name} ({self.gfx})" if self.name else f"an AMD GPU of target {self.gfx}"
        return f"{self.name} ({self.family})" if self.name else f"an Intel GPU ({self.family or 'family unknown'})"

    def to_json(self) -> dict:
        return {"vendor": self.vendor, "name": self.name or None, "gfx": self.gfx or None,
                "family": self.family or None, "architecture": self.architecture, "source": self.source}


GFX_PATTERN = r"gfx[0-9a-f]{3,4}"


def read_gfx(text: str) -> str | None:
    """An AMD gfx target as LLVM names it ("gfx1100", "GFX90A", " gfx942 ", rocminfo's "gfx90a:sramecc+:xnack-" ->
    "gfx90a"), lower case; None when the text is not
    one (an unlisted but well-formed target is still a target: the knowledge says what runs on it)."""
    # lazy: no start-up gain (already loaded by then); kept beside its use
    import re

    value = text.strip().lower()
    # rocminfo prints a target with its features ("gfx90a:sramecc+:xnack-"): the wheels are built per processor
    processor, _, features = value.partition(":")
    if features and not re.fullmatch(r"[a-z0-9-]+[+-](:[a-z0-9-]+[+-])*", features):
        return None
    return processor if re.fullmatch(GFX_PATTERN, processor) else None
