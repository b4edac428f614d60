"""The knowledge of PyTorch and JAX (constraints/pytorch.toml, jax.toml) and of the Apple Silicon builds of all three
frameworks (constraints/apple.toml): typed records, validated from the parsed documents the loader passes in.

Loaded on first use (`kb.frameworks`), from its own snapshot: a TensorFlow plan never builds these records."""

from __future__ import annotations

from functools import cached_property, lru_cache

from packaging.specifiers import InvalidSpecifier, SpecifierSet
from packaging.version import Version

from stackresolve.knowledge.fields import CC, Fields, KnowledgeError, records
from stackresolve.model.record import record
from stackresolve.model.values import release_line

FRAMEWORK_FILES = ("pytorch.toml", "torch_companions.toml", "jax.toml", "apple.toml")

# Platforms PyTorch's release records list Python versions for, as tensorflow_wheels.toml names them.
TORCH_PLATFORMS = ("linux", "linux_aarch64", "windows", "macos_arm64", "macos_x86_64")
PYTHON = r"3\.\d{1,2}"
VARIANT = r"cpu|cu\d{3}|rocm[\d.]+"
URL = r"https://[A-Za-z0-9.-]+(/[A-Za-z0-9._~%/-]*)?"


# -- PyTorch --------------------------------------------------------------------------------------------------
@record(eq=False)
class TorchRelease:
    version: str
    released: str
    pythons: dict[str, tuple[str, ...]]  # wheel platform -> CPython minors with a wheel on the package index
    default_variant: dict[str, str]  # wheel platform -> the variant the default index serves ("cu124", "cpu")
    variants: dict[str, tuple[str, ...]]  # linux / windows / linux_aarch64 -> variants PyTorch built
    default_requires: dict[str, tuple[str, ...]]  # linux / linux_aarch64 -> nvidia-*/cuda-*/triton Requires-Dist
    torchvision: str
    torchaudio: str
    source: str
    note: str = ""

    @cached_property
    def key(self) -> Version:
        return Version(self.version)

    @property
    def line(self) -> str:
        return release_line(self.version)


@record(eq=False)
class TorchVariant:
    """One CUDA variant of some PyTorch releases on some platforms: its CUDA, what it bundles, the GPU
    architectures compiled into torch's own kernels, and where it installs from."""

    releases: tuple[str, ...]  # exact versions ("2.5.1") or release lines ("2.5")
    name: str  # "cu124"
    cuda: str  # "12.4"
    cuda_full: str  # the CUDA runtime wheel the default variant pins ("12.4.127"), else ""
    cudnn: str  # "9.1.0.70", "" when not determined
    nccl: str
    platforms: tuple[str, ...]  # linux | windows | linux_aarch64
    default_index: bool  # the wheel `pip install torch` gets from the default package index
    sass: tuple[str, ...]
    ptx: tuple[str, ...]
    arch_basis: str  # measured | build-script ... | support-matrix | not verified
    index_url: str  # PyTorch's index (or find-links page) for non-default variants; "" for the default index
    driver_min_linux: str
    driver_min_windows: str
    source: str
    note: str = ""

    def covers(self, version: str) -> bool:
        return version in self.releases or release_line(version) in self.releases

    @property
    def find_links(self) -> bool:
        """Before 1.11 PyTorch served its variants as a find-links page with local versions (torch==1.9.0+cu111)."""
        return self.index_url.endswith(".html")


@record(eq=False)
class TorchCompanion:
    """A torchvision or torchaudio release and the CPython versions per platform with a wheel on the index."""

    package: str
    version: str
    pythons: dict[str, tuple[str, ...]]
    source: str
    torch: str = ""  # its wheels' Requires-Dist on torch: "==2.5.1", a range (">=2.11"), or "" (none declared)

    def made_for(self, torch_version: str) -> bool:
        """Whether its torch requirement admits this torch (a companion that declares none is made for no torch)."""
        return bool(self.torch) and _specifier_set(self.torch).contains(torch_version, prereleases=True)


# -- JAX ------------------------------------------------------------------------------------------------------
@record(eq=False)
class JaxRoute:
    """How the GPU build of a group of jax releases is installed, and what it needs (the install guide at the
    release's tag)."""

    jax: tuple[str, ...]
    jaxlib: tuple[str, ...]
    gpu_route: str  # monolithic | plugin | both
    cuda_extra: str  # the extra the docs recommend ("cuda12", "cuda12_pip", "cuda")
    find_links: str  # "" = the default index alone
    plugin: str  # the plugin package ("jax-cuda12-plugin"), "" for the monolithic route
    cuda_major: tuple[str, ...]  # CUDA majors with official wheels
    cuda_min: str
    cudnn_min: str
    cudnn_below: str
    driver_min: str  # Linux, as the docs print it; "" where they give it only by rule (driver_rule = "toolkit")
    cc_min: str  # "" where the docs state none
    source: str
    note: str = ""

    @property
    def recommended_major(self) -> str:
        return self.cuda_min.split(".")[0]


@record(eq=False)
class JaxExtra:
    name: str  # as declared in the jax wheel's METADATA ("cuda12", "cuda12-pip", "cuda")
    jax: tuple[str, ...]
    requires: tuple[str, ...]  # templated with {v} = the jax version
    find_links: str
    index_ok: tuple[str, ...]  # versions pip resolves from the default index alone (x86_64)
    index_ok_aarch64: tuple[str, ...]
    source: str


@record(eq=False)
class JaxPairing:
    jax: str
    jaxlib_min: str
    jaxlib_requires: tuple[str, ...]
    same_version_jaxlib: bool
    requires_python: str
    yanked: bool
    source: str
    note: str = ""


@record(eq=False)
class JaxWheels:
    """CPython versions per platform with wheels of a package (jaxlib, a CUDA plugin) on the package index."""

    package: str
    versions: tuple[str, ...]
    on_index: bool
    yanked: bool
    pythons: dict[str, tuple[str, ...]]  # platform -> CPython minors (free-threaded builds left out)
    source: str
    note: str = ""


@record(eq=False)
class JaxCompiled:
    package: str  # "jax-cuda12-plugin", or "jaxlib" for the monolithic +cuda wheels
    versions: tuple[str, ...]
    sass: tuple[str, ...]
    ptx: tuple[str, ...]
    measured: bool
    source: str
    note: str = ""


@record(eq=False)
class JaxPin:
    """A pip pin a JAX plan needs today, for jaxlib releases in a range."""

    package: str
    constraint: str
    jaxlib: str  # PEP 440 specifier over the jaxlib version
    why: str
    source: str

    @property
    def requirement(self) -> str:
        return f"{self.package}{self.constraint}"


@record(eq=False)
class JaxPlatform:
    os: str
    arch: str
    cpu: bool
    nvidia_gpu: bool
    source: str
    note: str = ""
    apple_gpu_unsupported_from: str = ""  # the first jax whose install guide says Mac GPUs are not supported


# -- Apple ----------------------------------------------------------------------------------------------------
@record(eq=False)
class TensorflowMetal:
    version: str
    tensorflow: tuple[str, ...]  # TensorFlow lines it pairs with (its own pairing table); () when not in the table
    tf_package: str  # "tensorflow-macos" (TF <= 2.12) or "tensorflow"
    macos_min: str
    pythons: tuple[str, ...]  # macOS arm64 wheels
    source: str
    note: str = ""


@record(eq=False)
class TensorflowMacos:
    versions: tuple[str, ...]
    full: bool  # a full build, not a shim
    pythons: tuple[str, ...]  # macOS arm64 wheels
    source: str
    note: str = ""


@record(eq=False)
class TorchMps:
    versions: tuple[str, ...]
    mps: bool
    macos_min: str
    source: str
    note: str = ""


@record(eq=False)
class JaxMetal:
    version: str
    requires: tuple[str, ...]
    jax: str  # the jax its compatibility table names ("0.4.11"); "" when not in the table
    jaxlib: str
    macos: str
    status: str
    source: str
    note: str = ""


@record(eq=False, repr=False)
class FrameworkKnowledge:
    torch_releases: tuple[TorchRelease, ...]
    torch_variants: tuple[TorchVariant, ...]
    jax_routes: tuple[JaxRoute, ...]
    jax_extras: tuple[JaxExtra, ...]
    jax_pairings: tuple[JaxPairing, ...]
    jax_wheels: tuple[JaxWheels, ...]
    jax_compiled: tuple[JaxCompiled, ...]
    jax_platforms: tuple[JaxPlatform, ...]
    tensorflow_metal: tuple[TensorflowMetal, ...]
    tensorflow_macos: tuple[TensorflowMacos, ...]
    torch_mps: tuple[TorchMps, ...]
    jax_metal: tuple[JaxMetal, ...]
    torch_companions: tuple[TorchCompanion, ...] = ()
    jax_pins: tuple[JaxPin, ...] = ()

    # -- PyTorch
    def torch_companion(self, package: str, version: str) -> TorchCompanion | None:
        return next((c for c in self.torch_companions if c.package == package and c.version == version), None)

    def companion_for(self, package: str, release: TorchRelease) -> TorchCompanion | None:
        """The torchvision/torchaudio release for a torch release: the one the release record names (its wheels pin
        torch==), else the newest whose Requires-Dist range admits this torch (torchaudio 2.11.1: torch>=2.11)."""
        named = getattr(release, package)
        if named:
            return self.torch_companion(package, named)
        admitting = [c for c in self.torch_companions if c.package == package and c.made_for(release.version)]
        return max(admitting, key=lambda c: Version(c.version)) if admitting else None

    def torch_release(self, version: str) -> TorchRelease | None:
        return next((r for r in self.torch_releases if r.version == version), None)

    def torch_variants_of(self, version: str, platform: str) -> list[TorchVariant]:
        """Every CUDA variant record of a release on a platform (linux, windows, linux_aarch64)."""
        return [v for v in self.torch_variants if platform in v.platforms and v.covers(version)]

    # -- JAX
    def jax_versions(self) -> list[str]:
        return [p.jax for p in self.jax_pairings]

    def jax_route(self, version: str) -> JaxRoute | None:
        return next((r for r in self.jax_routes if version in r.jax), None)

    def jax_routes_of_major(self, major: str) -> list[JaxRoute]:
        """Groups whose recommended route is this CUDA major, newest first."""
        return [r for r in reversed(self.jax_routes) if r.recommended_major == major]

    def jax_extra(self, name: str, version: str) -> JaxExtra | None:
        wanted = name.replace("_", "-")
        return next((e for e in self.jax_extras if e.name.replace("_", "-") == wanted and version in e.jax), None)

    def jax_pairing(self, version: str) -> JaxPairing | None:
        return next((p for p in self.jax_pairings if p.jax == version), None)

    def jax_wheels_of(self, package: str, version: str) -> JaxWheels | None:
        return next((w for w in self.jax_wheels if w.package == package and version in w.versions), None)

    def jax_compiled_of(self, package: str, version: str) -> JaxCompiled | None:
        return next((c for c in self.jax_compiled if c.package == package and version in c.versions), None)

    def jax_platform(self, os: str, arch: str) -> JaxPlatform | None:
        return next((p for p in self.jax_platforms if p.os == os and p.arch == arch), None)

    # -- Apple
    def metal_for(self, tf_line: str) -> TensorflowMetal | None:
        """The newest tensorflow-metal release whose pairing table names this TensorFlow line."""
        paired = [m for m in self.tensorflow_metal if tf_line in m.tensorflow]
        return max(paired, key=lambda m: Version(m.version)) if paired else None

    def torch_mps_of(self, version: str) -> TorchMps | None:
        return next((m for m in self.torch_mps if version in m.versions), None)


# -- parsing --------------------------------------------------------------------------------------------------
def _pythons(r: Fields, key: str) -> tuple[str, ...]:
    """CPython minors of a wheel list; free-threaded builds ("3.13t") are left out: plans target the standard
    build."""
    return tuple(p for p in r.texts(key, optional=True) if not p.endswith("t"))


def parse_pytorch(doc: dict) -> tuple[tuple[TorchRelease, ...], tuple[TorchVariant, ...]]:
    f = "pytorch.toml"
    releases = tuple(
        TorchRelease(
            version=r.version("version"),
            released=r.text("released"),
            pythons={p: r.texts(p, pattern=PYTHON) for p in TORCH_PLATFORMS},
            default_variant={
                "linux": r.text("default_variant_linux", pattern=VARIANT),
                "linux_aarch64": r.text("default_variant_linux_aarch64", pattern=VARIANT, allow_empty=True),
                "windows": r.text("default_variant_windows", pattern=VARIANT),
                "macos_arm64": r.text("default_variant_macos", pattern=VARIANT),
                "macos_x86_64": r.text("default_variant_macos", pattern=VARIANT),
            },
            variants={p: r.texts(f"variants_{p}", pattern=VARIANT) for p in ("linux", "windows", "linux_aarch64")},
            default_requires={"linux": r.texts("default_requires"),
                              "linux_aarch64": r.texts("default_requires_linux_aarch64")},
            torchvision=r.version("torchvision", allow_empty=True),
            torchaudio=r.version("torchaudio", allow_empty=True),
            source=r.source(),
            note=r.note(),
        )
        for r in records(doc, "release", f)
    )
    variants = []
    for r in records(doc, "variant", f):
        index_url = r.text("index_url")
        default = r.flag("default_index")
        if not default and not index_url.startswith("https://"):
            raise r.fail("a variant off the default index needs its https index_url")
        variants.append(TorchVariant(
            releases=r.versions("releases"),
            name=r.text("name", pattern=VARIANT),
            cuda=r.version("cuda"),
            cuda_full=r.version("cuda_full", allow_empty=True),
            cudnn=r.version("cudnn", allow_empty=True),
            nccl=r.version("nccl", allow_empty=True),
            platforms=r.texts("platforms", pattern="linux|windows|linux_aarch64", nonempty=True),
            default_index=default,
            sass=r.ccs("sass"),
            ptx=r.ccs("ptx"),
            arch_basis=r.text("arch_basis"),
            index_url="" if default else r.text("index_url", pattern=URL),
            driver_min_linux=r.version("driver_min_linux", allow_empty=True),
            driver_min_windows=r.version("driver_min_windows", allow_empty=True),
            source=r.source(),
            note=r.note(),
        ))
    return releases, tuple(variants)


def parse_torch_companions(doc: dict) -> tuple[TorchCompanion, ...]:
    return tuple(
        TorchCompanion(package=r.one_of("package", ("torchvision", "torchaudio")), version=r.version("version"),
                       pythons={p: r.texts(p, pattern=PYTHON) for p in TORCH_PLATFORMS}, source=r.source(),
                       torch=_specifier(r, "torch"))
        for r in records(doc, "companion", "torch_companions.toml")
    )


@lru_cache(maxsize=None)
def _specifier_set(text: str) -> SpecifierSet:
    return SpecifierSet(text)


def _specifier(r: Fields, key: str) -> str:
    text = r.text(key, optional=True)
    try:
        SpecifierSet(text)
    except InvalidSpecifier as exc:
        raise r.fail(f"`{key}` = {text!r} is not a version specifier ({exc})") from exc
    return text


def parse_jax(doc: dict):
    f = "jax.toml"
    routes = tuple(
        JaxRoute(
            jax=r.versions("jax"),
            jaxlib=r.versions("jaxlib"),
            gpu_route=r.one_of("gpu_route", ("monolithic", "plugin", "both")),
            cuda_extra=r.text("cuda_extra", pattern=r"[a-z0-9_-]+"),
            find_links=r.text("find_links", pattern=URL, allow_empty=True),
            plugin=r.text("plugin", pattern=r"jax-cuda\d+-plugin", allow_empty=True),
            cuda_major=r.texts("cuda_major", pattern=r"\d{2}"),
            cuda_min=r.version("cuda_min"),
            cudnn_min=r.version("cudnn_min"),
            cudnn_below=r.version("cudnn_below"),
            driver_min=r.version("driver_min", allow_empty=True),
            cc_min=r.text("cc_min", pattern=CC, allow_empty=True),
            source=r.source(),
            note=r.note(),
        )
        for r in records(doc, "release", f)
    )
    extras = tuple(
        JaxExtra(
            name=r.text("name", pattern=r"[a-z0-9_-]+"),
            jax=r.versions("jax"),
            requires=r.texts("requires"),
            find_links=r.text("find_links", pattern=URL, allow_empty=True),
            index_ok=r.versions("index_ok", optional=True),
            index_ok_aarch64=r.versions("index_ok_aarch64", optional=True),
            source=r.source(),
        )
        for r in records(doc, "extra", f)
    )
    pairings = tuple(
        JaxPairing(
            jax=r.version("jax"),
            jaxlib_min=r.version("jaxlib_min", allow_empty=True),
            jaxlib_requires=r.texts("jaxlib_requires", optional=True),
            same_version_jaxlib=r.flag("same_version_jaxlib"),
            requires_python=r.text("requires_python", allow_empty=True),
            yanked=r.flag("yanked", optional=True),
            source=r.source(),
            note=r.note(),
        )
        for r in records(doc, "pairing", f)
    )
    wheels = tuple(
        JaxWheels(
            package=table_package,
            versions=r.versions("versions"),
            on_index=r.flag("on_index", optional=True, default=True),
            yanked=r.flag("yanked", optional=True),
            pythons={p: _pythons(r, p) for p in ("linux", "linux_aarch64", "windows", "macos_x86_64", "macos_arm64")},
            source=r.source(),
            note=r.note(),
        )
        for table in ("jaxlib_wheels", "plugin_wheels")
        for r in records(doc, table, f)
        for table_package in [r.text("package") if table == "plugin_wheels" else "jaxlib"]
    )
    compiled = tuple(
        JaxCompiled(
            package="jaxlib" if r.text("package").startswith("jaxlib") else r.text("package"),
            versions=r.versions("versions"),
            sass=r.ccs("sass"),
            ptx=r.ccs("ptx"),
            measured=r.source().startswith("measured"),
            source=r.source(),
            note=r.note(),
        )
        for r in records(doc, "compiled_arch", f)
    )
    platforms = tuple(
        JaxPlatform(os=r.one_of("os", ("linux", "windows", "macos")), arch=r.text("arch"), cpu=r.flag("cpu"),
                    nvidia_gpu=r.flag("nvidia_gpu"), source=r.source(), note=r.note(),
                    apple_gpu_unsupported_from=r.version("apple_gpu_unsupported_from", optional=True))
        for r in records(doc, "platform", f)
    )
    pins = tuple(
        JaxPin(package=r.text("package", pattern=r"[A-Za-z0-9._-]+"), constraint=r.text("constraint"),
               jaxlib=r.text("jaxlib"), why=r.text("why"), source=r.source())
        for r in records(doc, "pin", f)
    )
    for pin in pins:
        try:
            SpecifierSet(pin.jaxlib)
            SpecifierSet(pin.constraint)
        except InvalidSpecifier as exc:
            raise KnowledgeError(f"{f} [[pin]] {pin.package}: {exc}") from exc
    for route in routes:
        if route.gpu_route == "monolithic" and not route.find_links:
            raise KnowledgeError(f"{f}: jax {route.jax[0]}: the monolithic route needs its find_links page")
    return routes, extras, pairings, wheels, compiled, platforms, pins


def parse_apple(doc: dict):
    f = "apple.toml"
    metal = tuple(
        TensorflowMetal(
            version=r.version("version"),
            tensorflow=r.versions("tensorflow"),
            tf_package=r.one_of("tf_package", ("tensorflow-macos", "tensorflow"), optional=True),
            macos_min=r.version("macos_min", allow_empty=True),
            pythons=r.texts("macos_arm64", pattern=PYTHON),
            source=r.source(),
            note=r.note(),
        )
        for r in records(doc, "tensorflow_metal", f)
    )
    macos = tuple(
        TensorflowMacos(versions=r.versions("versions"), full=r.one_of("kind", ("full", "shim")) == "full",
                        pythons=r.texts("macos_arm64", pattern=PYTHON), source=r.source(), note=r.note())
        for r in records(doc, "tensorflow_macos", f)
    )
    mps = tuple(
        TorchMps(versions=r.versions("versions"), mps=r.flag("mps"), macos_min=r.version("mps_macos_min",
                                                                                        allow_empty=True),
                 source=r.source(), note=r.note())
        for r in records(doc, "torch_mps", f)
    )
    jax_metal = tuple(
        JaxMetal(version=r.version("version"), requires=r.texts("requires"),
                 jax=r.text("table_jax", allow_empty=True).removeprefix("v"),
                 jaxlib=r.text("table_jaxlib", allow_empty=True).removeprefix("v"),
                 macos=r.text("macos", allow_empty=True), status=r.text("status"), source=r.source(), note=r.note())
        for r in records(doc, "jax_metal", f)
    )
    return metal, macos, mps, jax_metal


def build_frameworks(docs: dict[str, dict]) -> FrameworkKnowledge:
    torch_releases, torch_variants = parse_pytorch(docs["pytorch.toml"])
    routes, extras, pairings, wheels, compiled, platforms, pins = parse_jax(docs["jax.toml"])
    metal, macos, mps, jax_metal = parse_apple(docs["apple.toml"])
    return FrameworkKnowledge(torch_releases, torch_variants, routes, extras, pairings, wheels, compiled, platforms,
                              metal, macos, mps, jax_metal, parse_torch_companions(docs["torch_companions.toml"]),
                              pins)
