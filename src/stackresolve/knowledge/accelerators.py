"""The knowledge of AMD and Intel GPUs (constraints/amd.toml, intel.toml): AMD GPU models with their gfx (LLVM)
target, ROCm releases, PyTorch's ROCm wheel variants with the gfx targets compiled into them, AMD's unofficial
HSA_OVERRIDE_GFX_VERSION practice, Intel GPU models and PyTorch's XPU builds. Typed records validated from the
parsed documents the loader passes in, with the queries the request and the resolver ask.

Loaded on first use (`kb.accelerators`), from its own snapshot: an NVIDIA plan never builds these records."""

from __future__ import annotations

import difflib
import re
from functools import cached_property

from packaging.version import Version

from stackresolve.knowledge.fields import Fields, KnowledgeError, records
from stackresolve.model.record import record

ACCELERATOR_FILES = ("amd.toml", "intel.toml")

GFX = r"gfx[0-9a-f]{3,4}"  # an LLVM AMDGPU processor: gfx803, gfx90a, gfx942, gfx1100
PCI_DEVICE = r"[0-9a-f]{4}"
PYTHON = r"3\.\d{1,2}"
URL = r"https://[A-Za-z0-9.-]+(/[A-Za-z0-9._~%/-]*)?"
DATE = r"\d{4}-\d{2}-\d{2}"
# as AMD's GPU specification table spells them (constraints/README.md, "amd.toml")
AMD_ARCHITECTURES = ("GCN3.0", "GCN4.0", "GCN5.0", "GCN5.1", "CDNA", "CDNA2", "CDNA3", "CDNA4", "RDNA", "RDNA2", "RDNA3",
                     "RDNA3.5", "RDNA4")
AMD_SEGMENTS = ("instinct", "radeon-pro", "radeon")
INTEL_FAMILIES = ("arc-a", "arc-b", "data-center-max", "data-center-flex", "core-ultra")
ARCH_BASES = ("measured", "build-script", "docs", "not verified")


def normalize_name(name: str) -> str:
    """A GPU name as the look-up tables key it: lower case, single spaces."""
    return re.sub(r"\s+", " ", name.strip().lower())


# -- records --------------------------------------------------------------------------------------------------
@record(eq=False)
class AmdGpu:
    name: str
    gfx: str
    architecture: str
    segment: str
    pci_ids: tuple[str, ...]
    aliases: tuple[str, ...]
    source: str
    note: str = ""


@record(eq=False)
class RocmRelease:
    version: str
    released: str
    gfx: tuple[str, ...]
    os: tuple[str, ...]
    kernels: tuple[str, ...]
    source: str
    note: str = ""

    @cached_property
    def key(self) -> Version:
        return Version(self.version)


@record(eq=False)
class TorchRocm:
    """One ROCm variant of some PyTorch releases: the gfx targets compiled into its wheels and where it installs
    from."""

    releases: tuple[str, ...]
    name: str  # "rocm5.4.2": PyTorch's index name and the wheel's local version label
    rocm: str
    gfx: tuple[str, ...]
    arch_basis: str
    python: tuple[str, ...]
    index_url: str
    source: str
    note: str = ""

    @cached_property
    def rocm_key(self) -> Version:
        return Version(self.rocm)


@record(eq=False)
class GfxOverride:
    """AMD's unofficial practice: a GPU whose target no wheel carries runs the code objects of another target when
    HSA_OVERRIDE_GFX_VERSION says so."""

    gfx: tuple[str, ...]
    hsa_override: str  # "10.3.0"
    runs_as: str  # "gfx1030"
    status: str
    source: str
    note: str = ""


@record(eq=False)
class IntelGpu:
    name: str
    family: str
    architecture: str
    pci_ids: tuple[str, ...]
    aliases: tuple[str, ...]
    source: str
    note: str = ""


@record(eq=False)
class TorchXpu:
    releases: tuple[str, ...]
    name: str  # "xpu"
    platforms: tuple[str, ...]  # linux | windows
    families: tuple[str, ...]
    os: tuple[str, ...]
    python: tuple[str, ...]
    runtime: str  # separate | bundled
    driver: str
    index_url: str
    source: str
    note: str = ""


@record(eq=False)
class AcceleratorKnowledge:
    amd_generated: str
    intel_generated: str
    amd_gpus: tuple[AmdGpu, ...]
    rocm_releases: tuple[RocmRelease, ...]
    torch_rocm: tuple[TorchRocm, ...]
    gfx_overrides: tuple[GfxOverride, ...]
    intel_gpus: tuple[IntelGpu, ...]
    torch_xpu: tuple[TorchXpu, ...]

    # -- GPUs by name, gfx target or PCI id
    def find_amd_gpu(self, name: str) -> AmdGpu | None:
        wanted = normalize_name(name)
        return next((g for g in self.amd_gpus if wanted in {normalize_name(a) for a in (g.name, *g.aliases)}), None)

    def find_intel_gpu(self, name: str) -> IntelGpu | None:
        wanted = normalize_name(name)
        return next((g for g in self.intel_gpus if wanted in {normalize_name(a) for a in (g.name, *g.aliases)}),
                    None)

    def amd_gpus_of_gfx(self, gfx: str) -> list[AmdGpu]:
        return [g for g in self.amd_gpus if g.gfx == gfx]

    def amd_gpu_by_pci(self, device: str) -> AmdGpu | None:
        return next((g for g in self.amd_gpus if device.lower() in g.pci_ids), None)

    def intel_gpu_by_pci(self, device: str) -> IntelGpu | None:
        return next((g for g in self.intel_gpus if device.lower() in g.pci_ids), None)

    def known_gfx(self) -> list[str]:
        """Every gfx target a record names, sorted."""
        seen = {g.gfx for g in self.amd_gpus} | {t for v in self.torch_rocm for t in v.gfx} | \
            {t for r in self.rocm_releases for t in r.gfx} | {t for o in self.gfx_overrides for t in o.gfx}
        return sorted(seen, key=lambda t: (len(t), t))

    def names(self) -> list[str]:
        """Every AMD and Intel name and alias (for close matches)."""
        return [n for g in (*self.amd_gpus, *self.intel_gpus) for n in (g.name, *g.aliases)]

    def similar_names(self, name: str, n: int = 3) -> list[str]:
        by_alias = {normalize_name(a): g.name for g in (*self.amd_gpus, *self.intel_gpus) for a in (g.name, *g.aliases)}
        matches = difflib.get_close_matches(normalize_name(name), list(by_alias), n=n * 3, cutoff=0.6)
        return list(dict.fromkeys(by_alias[m] for m in matches))[:n]

    # -- PyTorch on ROCm and XPU
    def torch_rocm_of(self, version: str) -> list[TorchRocm]:
        """The ROCm variants of a torch release, newest ROCm first."""
        return sorted((v for v in self.torch_rocm if version in v.releases), key=lambda v: v.rocm_key, reverse=True)

    def torch_rocm_versions(self) -> list[str]:
        return sorted({r for v in self.torch_rocm for r in v.releases}, key=Version)

    def override_for(self, gfx: str) -> GfxOverride | None:
        return next((o for o in self.gfx_overrides if gfx in o.gfx), None)

    def rocm_supporting(self, gfx: str) -> list[RocmRelease]:
        """The ROCm releases AMD lists the target as supported in, newest first."""
        return sorted((r for r in self.rocm_releases if gfx in r.gfx), key=lambda r: r.key, reverse=True)

    def torch_xpu_of(self, version: str) -> TorchXpu | None:
        return next((x for x in self.torch_xpu if version in x.releases), None)

    def torch_xpu_versions(self) -> list[str]:
        return sorted({r for x in self.torch_xpu for r in x.releases}, key=Version)


# -- parsing --------------------------------------------------------------------------------------------------
def _generated(doc, file: str) -> str:
    value = doc.get("generated") if isinstance(doc, dict) else None
    if not isinstance(value, str) or not re.fullmatch(DATE, value):
        raise KnowledgeError(f"{file}: missing `generated = \"YYYY-MM-DD\"` (when its sources were read)")
    return value


def _unique_aliases(gpus, file: str) -> None:
    seen: dict[str, str] = {}
    for gpu in gpus:
        for alias in {normalize_name(a) for a in (gpu.name, *gpu.aliases)}:
            if alias in seen and seen[alias] != gpu.name:
                raise KnowledgeError(f"{file}: alias {alias!r} names both {seen[alias]!r} and {gpu.name!r}")
            seen[alias] = gpu.name


def _releases(r: Fields) -> tuple[str, ...]:
    values = r.versions("releases")
    if not values:
        raise r.fail("`releases` must not be empty")
    return values


def parse_amd(doc: dict):
    f = "amd.toml"
    generated = _generated(doc, f)
    gpus = tuple(
        AmdGpu(name=r.text("name"), gfx=r.text("gfx", pattern=GFX),
               architecture=r.one_of("architecture", AMD_ARCHITECTURES), segment=r.one_of("segment", AMD_SEGMENTS),
               pci_ids=r.texts("pci_ids", pattern=PCI_DEVICE), aliases=r.texts("aliases"), source=r.source(),
               note=r.note())
        for r in records(doc, "gpu", f))
    _unique_aliases(gpus, f)
    rocm = tuple(
        RocmRelease(version=r.version("version"), released=r.text("released", pattern=DATE, allow_empty=True),
                    gfx=r.texts("gfx", pattern=GFX), os=r.texts("os", pattern=r"[a-z]+-[0-9.]+"),
                    kernels=r.texts("kernels", pattern=r"\d+\.\d+"), source=r.source(), note=r.note())
        for r in records(doc, "rocm", f))
    variants = []
    for r in records(doc, "torch_rocm", f):
        name = r.text("name", pattern=r"rocm\d+\.\d+(\.\d+)?")
        rocm_version = r.version("rocm")
        if name != f"rocm{rocm_version}":
            raise r.fail(f"`name` = {name!r} must be 'rocm' + `rocm` ({rocm_version!r})")
        variants.append(TorchRocm(releases=_releases(r), name=name, rocm=rocm_version,
                                  gfx=r.texts("gfx", pattern=GFX, nonempty=True),
                                  arch_basis=r.one_of("arch_basis", ARCH_BASES),
                                  python=r.texts("python", pattern=PYTHON, nonempty=True),
                                  index_url=r.text("index_url", pattern=URL), source=r.source(), note=r.note()))
    overrides = tuple(
        GfxOverride(gfx=r.texts("gfx", pattern=GFX, nonempty=True),
                    hsa_override=r.text("hsa_override", pattern=r"\d+\.\d+\.\d+"),
                    runs_as=r.text("runs_as", pattern=GFX), status=r.one_of("status", ("unofficial",)),
                    source=r.source(), note=r.note())
        for r in records(doc, "gfx_override", f))
    return generated, gpus, rocm, tuple(variants), overrides


def parse_intel(doc: dict):
    f = "intel.toml"
    generated = _generated(doc, f)
    gpus = tuple(
        IntelGpu(name=r.text("name"), family=r.one_of("family", INTEL_FAMILIES), architecture=r.text("architecture"),
                 pci_ids=r.texts("pci_ids", pattern=PCI_DEVICE), aliases=r.texts("aliases"), source=r.source(),
                 note=r.note())
        for r in records(doc, "gpu", f))
    _unique_aliases(gpus, f)
    xpu = []
    for r in records(doc, "torch_xpu", f):
        platforms = r.texts("platforms", nonempty=True)
        for p in platforms:
            if p not in ("linux", "windows"):
                raise r.fail(f"`platforms` item {p!r} must be linux or windows")
        families = r.texts("families", nonempty=True)
        for family in families:
            if family not in INTEL_FAMILIES:
                raise r.fail(f"`families` item {family!r} must be one of {', '.join(INTEL_FAMILIES)}")
        xpu.append(TorchXpu(releases=_releases(r), name=r.text("name", pattern=r"xpu"), platforms=platforms,
                            families=families, os=r.texts("os", pattern=r"[a-z]+-[0-9.]+"),
                            python=r.texts("python", pattern=PYTHON, nonempty=True),
                            runtime=r.one_of("runtime", ("separate", "bundled")), driver=r.text("driver"),
                            index_url=r.text("index_url", pattern=URL), source=r.source(), note=r.note()))
    return generated, gpus, tuple(xpu)


def build_accelerators(docs: dict[str, dict]) -> AcceleratorKnowledge:
    amd_generated, amd_gpus, rocm, variants, overrides = parse_amd(docs["amd.toml"])
    intel_generated, intel_gpus, xpu = parse_intel(docs["intel.toml"])
    return AcceleratorKnowledge(amd_generated, intel_generated, amd_gpus, rocm, variants, overrides, intel_gpus, xpu)
