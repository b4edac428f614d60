"""Install facts for the Docker and native-Windows plans: parsers for constraints/docker.toml and windows.toml.

These functions take the already-parsed TOML document (the loader is the only module that reads TOML) and return
frozen records. Every value that later lands in a Dockerfile or a PowerShell script is checked here against a
strict pattern, so the emitters only ever interpolate well-formed tags, versions, URLs and file names.
"""

from __future__ import annotations

from packaging.specifiers import InvalidSpecifier, SpecifierSet
from packaging.version import Version

from stackresolve.knowledge.fields import KnowledgeError, records
from stackresolve.knowledge.rules import cuda_line_fits
from stackresolve.model.record import record


# Patterns for values that end up inside generated scripts.
_IMAGE_TAG = r"^[A-Za-z0-9][A-Za-z0-9._-]{0,127}$"  # Docker's tag grammar
_MINOR = r"^\d+\.\d+$"
_VERSION = r"^\d+(\.\d+){1,3}$"
_CUDA_LINE = r"^\d+\.(\d+|x)$"  # "11.2" or "11.x"
_URL = r"^https://[A-Za-z0-9.-]+(/[A-Za-z0-9._~%+-]*)*/?$"
_FILE = r"^[A-Za-z0-9][A-Za-z0-9._+-]*$"
_COMPONENT = r"^[a-z][a-z_]*_\d+\.\d+$"
_REL_DIR = r"^[A-Za-z0-9]+(\\[A-Za-z0-9]+)*$"
_REGISTRY = r"^HKLM:\\[A-Za-z0-9\\. ]+$"


@record
class TfImage:
    """An official tensorflow/tensorflow GPU image and the CUDA stack inside it."""

    version: str
    tag: str
    python: str
    cuda: str
    cudnn: str
    ubuntu: str
    source: str
    note: str = ""
    apt_key: str = "unknown"  # "retired" | "current" | "unknown": the NVIDIA repository key its apt trusts

    @property
    def line(self) -> str:
        v = Version(self.version)
        return f"{v.major}.{v.minor}"

    @property
    def image(self) -> str:
        return f"tensorflow/tensorflow:{self.tag}"


@record
class CudaImage:
    """An nvidia/cuda runtime image with cuDNN."""

    tag: str
    cuda: str
    release: str
    cudnn: str
    ubuntu: str
    python: str
    pullable: bool
    source: str
    note: str = ""
    apt_key: str = "unknown"  # as TfImage.apt_key

    @property
    def image(self) -> str:
        return f"nvidia/cuda:{self.tag}"


@record
class KeyRotation:
    """NVIDIA's April 2022 rotation of its CUDA repository signing key."""

    retired: str
    current: str
    error: str
    date: str
    source: str


@record
class UbuntuPythons:
    """The CPython minors an Ubuntu release's own archive carries (pythonX.Y and pythonX.Y-venv)."""

    ubuntu: str
    pythons: tuple[str, ...]
    source: str


@record
class DockerFacts:
    tf_images: tuple[TfImage, ...]
    cuda_images: tuple[CudaImage, ...]
    key_rotation: KeyRotation
    ubuntu_pythons: tuple[UbuntuPythons, ...]


@record
class CudaInstaller:
    """One CUDA toolkit installer for Windows, with the silent-install subpackages TensorFlow needs."""

    version: str
    release: str
    url: str
    kind: str
    components: tuple[str, ...]
    bin_dirs: tuple[str, ...]
    source: str
    note: str = ""


@record
class CudnnZip:
    """One cuDNN build for Windows x64 and where to get it."""

    version: str
    full_version: str
    cuda: str
    file: str
    root: str
    url: str
    login_required: bool
    page: str
    source: str
    note: str = ""

    def fits(self, cuda: str) -> bool:
        """True when this zip was built for the CUDA line `cuda` ("11.2" fits "11.2" and "11.x")."""
        return cuda_line_fits(self.cuda, cuda)


@record
class MsvcRuntime:
    """The Visual C++ runtime a range of TensorFlow releases needs on Windows."""

    tf: str
    name: str
    dll: str
    registry: str
    download_url: str
    page: str
    source: str
    note: str = ""

    def applies_to(self, tf_version: str) -> bool:
        return SpecifierSet(self.tf).contains(Version(tf_version), prereleases=True)


# -- parsers -----------------------------------------------------------------------------------------------
_APT_KEY = ("retired", "current", "unknown")


def parse_docker(doc: dict) -> DockerFacts:
    """docker.toml -> official TensorFlow GPU images, nvidia/cuda runtime images, the key rotation, Ubuntu's
    Pythons."""
    f = "docker.toml"
    tf_images = tuple(
        TfImage(
            version=r.text("version", pattern=_VERSION),
            tag=r.text("tag", pattern=_IMAGE_TAG),
            python=r.text("python", pattern=_MINOR),
            cuda=r.text("cuda", pattern=_MINOR),
            cudnn=r.text("cudnn", pattern=_VERSION),
            ubuntu=r.text("ubuntu", pattern=_MINOR),
            source=r.source(),
            note=r.note(),
            apt_key=r.one_of("apt_key", _APT_KEY),
        )
        for r in records(doc, "tf_image", f)
    )
    cuda_images = []
    for r in records(doc, "cuda_image", f):
        image = CudaImage(
            tag=r.text("tag", pattern=_IMAGE_TAG),
            cuda=r.text("cuda", pattern=_MINOR),
            release=r.text("release", pattern=_VERSION),
            cudnn=r.text("cudnn", pattern=_VERSION),
            ubuntu=r.text("ubuntu", pattern=_MINOR),
            python=r.text("python", pattern=_MINOR),
            pullable=r.flag("pullable"),
            source=r.source(),
            note=r.note(),
            apt_key=r.one_of("apt_key", _APT_KEY),
        )
        if not image.release.startswith(image.cuda + "."):
            raise r.fail(f"release {image.release} is not CUDA {image.cuda}")
        cuda_images.append(image)
    rotation = [KeyRotation(r.text("retired", pattern=r"^[0-9a-f]{8}$"), r.text("current", pattern=r"^[0-9a-f]{8}$"),
                            r.text("error"), r.text("date", pattern=r"^\d{4}-\d{2}-\d{2}$"), r.source())
                for r in records(doc, "key_rotation", f)]
    if len(rotation) != 1:
        raise KnowledgeError("docker.toml: exactly one [[key_rotation]] record")
    pythons = tuple(UbuntuPythons(r.text("ubuntu", pattern=_MINOR), r.texts("python", pattern=_MINOR, nonempty=True),
                                  r.source()) for r in records(doc, "ubuntu_python", f))
    return DockerFacts(tf_images, tuple(cuda_images), rotation[0], pythons)


def parse_windows(doc: dict) -> tuple[tuple[CudaInstaller, ...], tuple[CudnnZip, ...], tuple[MsvcRuntime, ...]]:
    """windows.toml -> (CUDA installers, cuDNN zips, Visual C++ runtime requirements)."""
    f = "windows.toml"
    installers = []
    for r in records(doc, "cuda_installer", f):
        installer = CudaInstaller(
            version=r.text("version", pattern=_MINOR),
            release=r.text("release", pattern=_VERSION),
            url=r.text("url", pattern=_URL),
            kind=r.one_of("kind", ("local", "network")),
            components=r.texts("components", pattern=_COMPONENT, nonempty=True),
            bin_dirs=r.texts("bin_dirs", pattern=_REL_DIR, nonempty=True),
            source=r.source(),
            note=r.note(),
        )
        if not installer.release.startswith(installer.version + "."):
            raise r.fail(f"release {installer.release} is not CUDA {installer.version}")
        wrong = [c for c in installer.components if not c.endswith("_" + installer.version)]
        if wrong:
            raise r.fail(f"components {wrong} are not for CUDA {installer.version}")
        installers.append(installer)
    zips = []
    for r in records(doc, "cudnn_zip", f):
        record = CudnnZip(
            version=r.text("version", pattern=_VERSION),
            full_version=r.text("full_version", pattern=_VERSION),
            cuda=r.text("cuda", pattern=_CUDA_LINE),
            file=r.text("file", pattern=_FILE),
            root=r.text("root", pattern=_FILE),
            url=r.text("url", pattern=_URL),
            login_required=r.flag("login_required"),
            page=r.text("page", pattern=_URL),
            source=r.source(),
            note=r.note(),
        )
        if not record.url.endswith("/" + record.file):
            raise r.fail(f"url does not end in the file name {record.file}")
        if not record.full_version.startswith(record.version + "."):
            raise r.fail(f"full_version {record.full_version} is not cuDNN {record.version}")
        zips.append(record)
    runtimes = []
    for r in records(doc, "msvc", f):
        runtime = MsvcRuntime(
            tf=r.text("tf"),
            name=r.text("name"),
            dll=r.text("dll", pattern=_FILE),
            registry=r.text("registry", pattern=_REGISTRY),
            download_url=r.text("download_url", pattern=_URL),
            page=r.text("page", pattern=_URL),
            source=r.source(),
            note=r.note(),
        )
        try:
            SpecifierSet(runtime.tf)
        except InvalidSpecifier as exc:
            raise r.fail(f"`tf` = {runtime.tf!r} is not a version specifier") from exc
        runtimes.append(runtime)
    return tuple(installers), tuple(zips), tuple(runtimes)
