"""Install facts for the Docker and native-Windows plans: parsers for constraints/docker.toml and windows.toml.

These functions take the already-parsed TOML document (the loader is the only module that reads TOML) and return
frozen records. Every value that later lands in a Dockerfile or a PowerShell script is checked here against a
strict pattern, so the emitters only ever interpolate well-formed tags, versions, URLs and file names.
"""

from __future__ import annotations

import re
from dataclasses import dataclass

from packaging.specifiers import InvalidSpecifier, SpecifierSet
from packaging.version import InvalidVersion, Version


class InstallFactsError(ValueError):
    """docker.toml or windows.toml does not have the documented shape."""


# Patterns for values that end up inside generated scripts.
_IMAGE_TAG = re.compile(r"^[A-Za-z0-9][A-Za-z0-9._-]{0,127}$")  # Docker's tag grammar
_MINOR = re.compile(r"^\d+\.\d+$")
_VERSION = re.compile(r"^\d+(\.\d+){1,3}$")
_CUDA_LINE = re.compile(r"^\d+\.(\d+|x)$")  # "11.2" or "11.x"
_URL = re.compile(r"^https://[A-Za-z0-9.-]+(/[A-Za-z0-9._~%+-]*)*/?$")
_FILE = re.compile(r"^[A-Za-z0-9][A-Za-z0-9._+-]*$")
_COMPONENT = re.compile(r"^[a-z][a-z_]*_\d+\.\d+$")
_REL_DIR = re.compile(r"^[A-Za-z0-9]+(\\[A-Za-z0-9]+)*$")
_REGISTRY = re.compile(r"^HKLM:\\[A-Za-z0-9\\. ]+$")


@dataclass(frozen=True)
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

    @property
    def line(self) -> str:
        v = Version(self.version)
        return f"{v.major}.{v.minor}"

    @property
    def image(self) -> str:
        return f"tensorflow/tensorflow:{self.tag}"


@dataclass(frozen=True)
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

    @property
    def image(self) -> str:
        return f"nvidia/cuda:{self.tag}"


@dataclass(frozen=True)
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


@dataclass(frozen=True)
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
        if self.cuda.endswith(".x"):
            return cuda.split(".")[0] == self.cuda.split(".")[0]
        return cuda == self.cuda


@dataclass(frozen=True)
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


# -- helpers -----------------------------------------------------------------------------------------------
def _rows(doc: dict, table: str, file: str) -> list[tuple[dict, str]]:
    rows = doc.get(table, [])
    if not isinstance(rows, list) or not all(isinstance(r, dict) for r in rows):
        raise InstallFactsError(f"{file}: `{table}` must be an array of tables")
    return [(row, f"{file} [[{table}]] #{i + 1}") for i, row in enumerate(rows)]


def _text(row: dict, key: str, where: str, pattern: re.Pattern | None = None) -> str:
    value = row.get(key)
    if not isinstance(value, str) or not value:
        raise InstallFactsError(f"{where}: `{key}` must be a non-empty string")
    if pattern is not None and not pattern.match(value):
        raise InstallFactsError(f"{where}: `{key}` = {value!r} is not of the expected form")
    return value


def _flag(row: dict, key: str, where: str) -> bool:
    value = row.get(key)
    if not isinstance(value, bool):
        raise InstallFactsError(f"{where}: `{key}` must be true or false")
    return value


def _texts(row: dict, key: str, where: str, pattern: re.Pattern) -> tuple[str, ...]:
    values = row.get(key)
    if not isinstance(values, list) or not values:
        raise InstallFactsError(f"{where}: `{key}` must be a non-empty list")
    for value in values:
        if not isinstance(value, str) or not pattern.match(value):
            raise InstallFactsError(f"{where}: `{key}` item {value!r} is not of the expected form")
    return tuple(values)


def _version(row: dict, key: str, where: str) -> str:
    value = _text(row, key, where, _VERSION)
    try:
        Version(value)
    except InvalidVersion as exc:  # pragma: no cover - the pattern already guarantees a version
        raise InstallFactsError(f"{where}: `{key}` = {value!r} is not a version") from exc
    return value


def _note(row: dict, where: str) -> str:
    note = row.get("note", "")
    if not isinstance(note, str):
        raise InstallFactsError(f"{where}: `note` must be a string")
    return note


# -- parsers -----------------------------------------------------------------------------------------------
def parse_docker(doc: dict) -> tuple[tuple[TfImage, ...], tuple[CudaImage, ...]]:
    """docker.toml -> (official TensorFlow GPU images, nvidia/cuda runtime images)."""
    f = "docker.toml"
    tf_images = tuple(
        TfImage(
            version=_version(r, "version", w),
            tag=_text(r, "tag", w, _IMAGE_TAG),
            python=_text(r, "python", w, _MINOR),
            cuda=_text(r, "cuda", w, _MINOR),
            cudnn=_version(r, "cudnn", w),
            ubuntu=_text(r, "ubuntu", w, _MINOR),
            source=_text(r, "source", w),
            note=_note(r, w),
        )
        for r, w in _rows(doc, "tf_image", f)
    )
    cuda_images = tuple(
        CudaImage(
            tag=_text(r, "tag", w, _IMAGE_TAG),
            cuda=_text(r, "cuda", w, _MINOR),
            release=_version(r, "release", w),
            cudnn=_version(r, "cudnn", w),
            ubuntu=_text(r, "ubuntu", w, _MINOR),
            python=_text(r, "python", w, _MINOR),
            pullable=_flag(r, "pullable", w),
            source=_text(r, "source", w),
            note=_note(r, w),
        )
        for r, w in _rows(doc, "cuda_image", f)
    )
    for image in cuda_images:
        if not image.release.startswith(image.cuda + "."):
            raise InstallFactsError(f"{f}: cuda_image {image.tag}: release {image.release} is not CUDA {image.cuda}")
    return tf_images, cuda_images


def parse_windows(doc: dict) -> tuple[tuple[CudaInstaller, ...], tuple[CudnnZip, ...], tuple[MsvcRuntime, ...]]:
    """windows.toml -> (CUDA installers, cuDNN zips, Visual C++ runtime requirements)."""
    f = "windows.toml"
    installers = []
    for r, w in _rows(doc, "cuda_installer", f):
        installer = CudaInstaller(
            version=_text(r, "version", w, _MINOR),
            release=_version(r, "release", w),
            url=_text(r, "url", w, _URL),
            kind=_text(r, "kind", w),
            components=_texts(r, "components", w, _COMPONENT),
            bin_dirs=_texts(r, "bin_dirs", w, _REL_DIR),
            source=_text(r, "source", w),
            note=_note(r, w),
        )
        if installer.kind not in ("local", "network"):
            raise InstallFactsError(f"{w}: `kind` must be local or network")
        if not installer.release.startswith(installer.version + "."):
            raise InstallFactsError(f"{w}: release {installer.release} is not CUDA {installer.version}")
        wrong = [c for c in installer.components if not c.endswith("_" + installer.version)]
        if wrong:
            raise InstallFactsError(f"{w}: components {wrong} are not for CUDA {installer.version}")
        installers.append(installer)
    zips = []
    for r, w in _rows(doc, "cudnn_zip", f):
        record = CudnnZip(
            version=_version(r, "version", w),
            full_version=_version(r, "full_version", w),
            cuda=_text(r, "cuda", w, _CUDA_LINE),
            file=_text(r, "file", w, _FILE),
            root=_text(r, "root", w, _FILE),
            url=_text(r, "url", w, _URL),
            login_required=_flag(r, "login_required", w),
            page=_text(r, "page", w, _URL),
            source=_text(r, "source", w),
            note=_note(r, w),
        )
        if not record.url.endswith("/" + record.file):
            raise InstallFactsError(f"{w}: url does not end in the file name {record.file}")
        if not record.full_version.startswith(record.version + "."):
            raise InstallFactsError(f"{w}: full_version {record.full_version} is not cuDNN {record.version}")
        zips.append(record)
    runtimes = []
    for r, w in _rows(doc, "msvc", f):
        runtime = MsvcRuntime(
            tf=_text(r, "tf", w),
            name=_text(r, "name", w),
            dll=_text(r, "dll", w, _FILE),
            registry=_text(r, "registry", w, _REGISTRY),
            download_url=_text(r, "download_url", w, _URL),
            page=_text(r, "page", w, _URL),
            source=_text(r, "source", w),
            note=_note(r, w),
        )
        try:
            SpecifierSet(runtime.tf)
        except InvalidSpecifier as exc:
            raise InstallFactsError(f"{w}: `tf` = {runtime.tf!r} is not a version specifier") from exc
        runtimes.append(runtime)
    return tuple(installers), tuple(zips), tuple(runtimes)
