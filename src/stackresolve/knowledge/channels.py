"""Install channels: NVIDIA's apt repositories (constraints/apt.toml) and conda channels (constraints/conda.toml).

This module never reads files: the knowledge loader parses the TOML and hands each document to `parse_apt` /
`parse_conda`. The record shapes are documented at the top of those two files.

Every string that an emitter later writes into a shell script or an environment.yml is checked here against a
strict pattern (package names, versions, channel names, file names, URLs), so a malformed or hostile record
fails loading with one line naming it instead of reaching a plan. Emitters quote those values anyway.
"""

from __future__ import annotations

import re
from dataclasses import dataclass

from packaging.version import InvalidVersion, Version

# `apt-get install` arguments: a Debian package name, optionally `=version` (Debian policy 5.6.1 / 5.6.12).
APT_PACKAGE = re.compile(r"[a-z0-9][a-z0-9+.-]+(=[0-9][A-Za-z0-9.+~:-]*)?")
APT_VERSION = re.compile(r"[0-9][A-Za-z0-9.+~:-]*")
UBUNTU_RELEASE = re.compile(r"\d{2}\.\d{2}")
DISTRO = re.compile(r"ubuntu\d{4}")
CUDA_LINE = re.compile(r"\d{1,2}\.(\d{1,2}|x)")
# A file NVIDIA publishes in a repository directory (cuda-keyring_1.1-1_all.deb, 3bf863cc.pub).
REPO_FILE = re.compile(r"[A-Za-z0-9][A-Za-z0-9._+-]*")
REPO_URL = re.compile(r"https://[A-Za-z0-9.-]+(/[A-Za-z0-9._{}-]+)*/")
# Conda match specs as environment.yml lists them: name=version[=build], version and build with conda's globs.
CONDA_SPEC = re.compile(r"[a-z0-9][a-z0-9._-]*(=[0-9][A-Za-z0-9.*_+]*(=[A-Za-z0-9.*_+]+)?)?")
CONDA_CHANNEL = re.compile(r"[A-Za-z0-9][A-Za-z0-9._-]*(/[A-Za-z0-9][A-Za-z0-9._-]*)*")

APT_REPO_NAMES = ("cuda", "machine-learning")
KEYRING_METHODS = ("apt-key", "cuda-keyring")
DRIVER_ORIGINS = ("ubuntu-or-cuda-repo", "cuda-repo")


def cuda_fits(built_for: str, cuda: str) -> bool:
    """True when a package built for `built_for` ("10.0", or "12.x" for every 12 minor) serves CUDA `cuda`."""
    if built_for.endswith(".x"):
        return cuda.split(".")[0] == built_for[:-2]
    return built_for == cuda


# -- apt --------------------------------------------------------------------------------------------------
@dataclass(frozen=True)
class AptRepo:
    name: str  # "cuda" | "machine-learning"
    url: str  # template with {distro}, ends with "/"
    distros: tuple[str, ...]
    updated: bool
    source: str
    note: str = ""

    def url_for(self, distro: str) -> str:
        """The repository directory for one distro, without the trailing slash."""
        return self.url.format(distro=distro).rstrip("/")


@dataclass(frozen=True)
class AptCudaRepo:
    cuda: str
    ubuntu: tuple[str, ...]
    toolkit_package: str
    toolkit_version: str
    meta_version: str
    full_package: str
    source: str
    note: str = ""

    @property
    def libraries_package(self) -> str:
        """cuda-libraries-X-Y: the runtime libraries metapackage, sibling of toolkit_package."""
        return self.toolkit_package.replace("cuda-toolkit-", "cuda-libraries-", 1)


@dataclass(frozen=True)
class AptCudnnPackage:
    cudnn: str
    full_version: str
    cuda: str  # "10.0" or "12.x"
    runtime: str  # exact apt-get argument, "libcudnn7=7.6.5.32-1+cuda10.0"
    dev: str  # "" where no source pins it
    repo: str
    ubuntu: tuple[str, ...]
    ubuntu_cuda_repo: tuple[str, ...]
    source: str
    note: str = ""

    @property
    def key(self) -> Version:
        return Version(self.cudnn)

    def fits(self, cuda: str) -> bool:
        return cuda_fits(self.cuda, cuda)

    @property
    def packages(self) -> tuple[str, ...]:
        return (self.runtime, self.dev) if self.dev else (self.runtime,)


@dataclass(frozen=True)
class AptKeyring:
    method: str  # "apt-key" | "cuda-keyring"
    file: str
    key_id: str
    ubuntu: tuple[str, ...]
    current: bool
    source: str
    note: str = ""


@dataclass(frozen=True)
class AptDriverPackage:
    branch: str
    package: str
    ubuntu: tuple[str, ...]  # () where the source names no release
    origin: str
    source: str
    note: str = ""

    @property
    def branch_number(self) -> int:
        return int(self.branch)


@dataclass(frozen=True)
class AptKnowledge:
    repos: tuple[AptRepo, ...]
    cuda_repos: tuple[AptCudaRepo, ...]
    cudnn_packages: tuple[AptCudnnPackage, ...]
    keyrings: tuple[AptKeyring, ...]
    driver_packages: tuple[AptDriverPackage, ...]

    def repo(self, name: str) -> AptRepo | None:
        return next((r for r in self.repos if r.name == name), None)

    def cuda_repo(self, cuda: str) -> AptCudaRepo | None:
        return next((r for r in self.cuda_repos if r.cuda == cuda), None)

    def cudnn_for(self, cuda: str) -> tuple[AptCudnnPackage, ...]:
        return tuple(p for p in self.cudnn_packages if p.fits(cuda))


# -- conda ------------------------------------------------------------------------------------------------
@dataclass(frozen=True)
class CondaCudaPackage:
    cuda: str
    channel: str
    specs: tuple[str, ...]
    versions: tuple[str, ...]
    only_channel: bool
    source: str
    note: str = ""


@dataclass(frozen=True)
class CondaCudnnPackage:
    cudnn: str
    full_version: str
    cuda: str  # "10.0" or "11.x"
    channel: str
    spec: str
    requires: str
    only_channel: bool
    source: str
    note: str = ""

    @property
    def key(self) -> Version:
        return Version(self.cudnn)

    def fits(self, cuda: str) -> bool:
        return cuda_fits(self.cuda, cuda)


@dataclass(frozen=True)
class CondaTensorflowDoc:
    date: str
    channel: str
    specs: tuple[str, ...]
    pip: tuple[str, ...]
    platforms: tuple[str, ...]  # "linux, windows" -> ("linux", "windows")
    source: str
    note: str = ""


@dataclass(frozen=True)
class CondaKnowledge:
    cuda_packages: tuple[CondaCudaPackage, ...]
    cudnn_packages: tuple[CondaCudnnPackage, ...]
    tensorflow_docs: tuple[CondaTensorflowDoc, ...]

    def cuda_for(self, cuda: str) -> tuple[CondaCudaPackage, ...]:
        return tuple(p for p in self.cuda_packages if p.cuda == cuda)

    def cudnn_for(self, cuda: str, channel: str) -> tuple[CondaCudnnPackage, ...]:
        return tuple(p for p in self.cudnn_packages if p.channel == channel and p.fits(cuda))


# -- validation helpers -----------------------------------------------------------------------------------
def _fail(file: str, where: str, message: str) -> ValueError:
    return ValueError(f"{file}: {where}: {message}")


def _records(doc: dict, table: str, file: str) -> list[tuple[dict, str]]:
    if not isinstance(doc, dict):
        raise ValueError(f"{file}: the document must be a table")
    rows = doc.get(table, [])
    if not isinstance(rows, list) or not all(isinstance(r, dict) for r in rows):
        raise ValueError(f"{file}: `{table}` must be an array of tables")
    return [(row, f"[[{table}]] #{i + 1}") for i, row in enumerate(rows)]


def _text(record: dict, key: str, file: str, where: str, pattern: re.Pattern | None = None,
          allow_empty: bool = False) -> str:
    if key not in record:
        raise _fail(file, where, f"missing `{key}`")
    value = record[key]
    if not isinstance(value, str):
        raise _fail(file, where, f"`{key}` must be a string, got {value!r}")
    if value == "" and allow_empty:
        return value
    if pattern is not None and not pattern.fullmatch(value):
        raise _fail(file, where, f"`{key}` = {value!r} does not have the documented form")
    return value


def _texts(record: dict, key: str, file: str, where: str, pattern: re.Pattern) -> tuple[str, ...]:
    value = record.get(key)
    if not isinstance(value, list) or not all(isinstance(v, str) for v in value):
        raise _fail(file, where, f"`{key}` must be a list of strings")
    for item in value:
        if not pattern.fullmatch(item):
            raise _fail(file, where, f"`{key}` item {item!r} does not have the documented form")
    return tuple(value)


def _flag(record: dict, key: str, file: str, where: str) -> bool:
    value = record.get(key)
    if not isinstance(value, bool):
        raise _fail(file, where, f"`{key}` must be true or false")
    return value


def _version(record: dict, key: str, file: str, where: str, allow_empty: bool = False) -> str:
    value = _text(record, key, file, where, allow_empty=allow_empty)
    if value == "" and allow_empty:
        return value
    try:
        Version(value)
    except InvalidVersion:
        raise _fail(file, where, f"`{key}` = {value!r} is not a version") from None
    return value


def _versions(record: dict, key: str, file: str, where: str) -> tuple[str, ...]:
    values = _texts(record, key, file, where, APT_VERSION)
    for value in values:
        try:
            Version(value)
        except InvalidVersion:
            raise _fail(file, where, f"`{key}` item {value!r} is not a version") from None
    return values


def _source(record: dict, file: str, where: str) -> str:
    source = record.get("source")
    if not isinstance(source, str) or not source.strip():
        raise _fail(file, where, "record has no `source`")
    return source


def _note(record: dict) -> str:
    note = record.get("note", "")
    return note if isinstance(note, str) else ""


# -- parsers ----------------------------------------------------------------------------------------------
def parse_apt(doc: dict) -> AptKnowledge:
    """Validate constraints/apt.toml (already parsed) into AptKnowledge. Raises ValueError naming the record."""
    f = "apt.toml"
    repos = tuple(
        AptRepo(
            name=_text(r, "name", f, w),
            url=_text(r, "url", f, w, REPO_URL),
            distros=_texts(r, "distros", f, w, DISTRO),
            updated=_flag(r, "updated", f, w),
            source=_source(r, f, w),
            note=_note(r),
        )
        for r, w in _records(doc, "repo", f)
    )
    for repo in repos:
        if repo.name not in APT_REPO_NAMES:
            raise ValueError(f"{f}: repo {repo.name!r}: name must be one of {', '.join(APT_REPO_NAMES)}")
        if repo.url.count("{distro}") != 1 or "{" in repo.url.replace("{distro}", ""):
            raise ValueError(f"{f}: repo {repo.name}: url must contain {{distro}} exactly once")

    cuda_repos = tuple(
        AptCudaRepo(
            cuda=_text(r, "cuda", f, w, CUDA_LINE),
            ubuntu=_texts(r, "ubuntu", f, w, UBUNTU_RELEASE),
            toolkit_package=_text(r, "toolkit_package", f, w, APT_PACKAGE),
            toolkit_version=_text(r, "toolkit_version", f, w, APT_VERSION, allow_empty=True),
            meta_version=_text(r, "meta_version", f, w, APT_VERSION, allow_empty=True),
            full_package=_text(r, "full_package", f, w, APT_PACKAGE, allow_empty=True),
            source=_source(r, f, w),
            note=_note(r),
        )
        for r, w in _records(doc, "cuda_repo", f)
    )
    for line in cuda_repos:
        if "=" in line.toolkit_package or not line.toolkit_package.startswith("cuda-toolkit-"):
            raise ValueError(f"{f}: cuda_repo {line.cuda}: toolkit_package must be a bare cuda-toolkit-X-Y name")

    cudnn_packages = []
    for r, w in _records(doc, "cudnn_package", f):
        package = AptCudnnPackage(
            cudnn=_version(r, "cudnn", f, w),
            full_version=_version(r, "full_version", f, w),
            cuda=_text(r, "cuda", f, w, CUDA_LINE),
            runtime=_text(r, "runtime", f, w, APT_PACKAGE),
            dev=_text(r, "dev", f, w, APT_PACKAGE, allow_empty=True),
            repo=_text(r, "repo", f, w),
            ubuntu=_texts(r, "ubuntu", f, w, UBUNTU_RELEASE),
            ubuntu_cuda_repo=_texts(r, "ubuntu_cuda_repo", f, w, UBUNTU_RELEASE),
            source=_source(r, f, w),
            note=_note(r),
        )
        if package.repo not in APT_REPO_NAMES:
            raise _fail(f, w, f"`repo` must be one of {', '.join(APT_REPO_NAMES)}")
        if "=" not in package.runtime or (package.dev and "=" not in package.dev):
            raise _fail(f, w, "`runtime` / `dev` must pin a version (name=version)")
        if not set(package.ubuntu_cuda_repo) <= set(package.ubuntu):
            raise _fail(f, w, "`ubuntu_cuda_repo` must be a subset of `ubuntu`")
        cudnn_packages.append(package)

    keyrings = tuple(
        AptKeyring(
            method=_text(r, "method", f, w),
            file=_text(r, "file", f, w, REPO_FILE),
            key_id=_text(r, "key_id", f, w, re.compile(r"[0-9a-f]{8}")),
            ubuntu=_texts(r, "ubuntu", f, w, UBUNTU_RELEASE),
            current=_flag(r, "current", f, w),
            source=_source(r, f, w),
            note=_note(r),
        )
        for r, w in _records(doc, "keyring", f)
    )
    for keyring in keyrings:
        if keyring.method not in KEYRING_METHODS:
            raise ValueError(f"{f}: keyring {keyring.file}: method must be one of {', '.join(KEYRING_METHODS)}")

    drivers = tuple(
        AptDriverPackage(
            branch=_text(r, "branch", f, w, re.compile(r"\d{3,4}")),
            package=_text(r, "package", f, w, APT_PACKAGE),
            ubuntu=_texts(r, "ubuntu", f, w, UBUNTU_RELEASE),
            origin=_text(r, "origin", f, w),
            source=_source(r, f, w),
            note=_note(r),
        )
        for r, w in _records(doc, "driver_package", f)
    )
    for driver in drivers:
        if driver.origin not in DRIVER_ORIGINS:
            raise ValueError(f"{f}: driver_package {driver.package}: origin must be one of "
                             f"{', '.join(DRIVER_ORIGINS)}")
        if "=" in driver.package:
            raise ValueError(f"{f}: driver_package {driver.package}: package must be a bare name")
    return AptKnowledge(repos, cuda_repos, tuple(cudnn_packages), keyrings, drivers)


def parse_conda(doc: dict) -> CondaKnowledge:
    """Validate constraints/conda.toml (already parsed) into CondaKnowledge. Raises ValueError naming the record."""
    f = "conda.toml"
    cuda_packages = tuple(
        CondaCudaPackage(
            cuda=_text(r, "cuda", f, w, CUDA_LINE),
            channel=_text(r, "channel", f, w, CONDA_CHANNEL),
            specs=_texts(r, "specs", f, w, CONDA_SPEC),
            versions=_versions(r, "versions", f, w),
            only_channel=_flag(r, "only_channel", f, w),
            source=_source(r, f, w),
            note=_note(r),
        )
        for r, w in _records(doc, "cuda_package", f)
    )
    for package in cuda_packages:
        if not package.specs:
            raise ValueError(f"{f}: cuda_package {package.cuda} on {package.channel}: `specs` is empty")
    cudnn_packages = tuple(
        CondaCudnnPackage(
            cudnn=_version(r, "cudnn", f, w),
            full_version=_version(r, "full_version", f, w, allow_empty=True),
            cuda=_text(r, "cuda", f, w, CUDA_LINE),
            channel=_text(r, "channel", f, w, CONDA_CHANNEL),
            spec=_text(r, "spec", f, w, CONDA_SPEC),
            requires=_text(r, "requires", f, w, allow_empty=True),
            only_channel=_flag(r, "only_channel", f, w),
            source=_source(r, f, w),
            note=_note(r),
        )
        for r, w in _records(doc, "cudnn_package", f)
    )
    docs = []
    for r, w in _records(doc, "tensorflow_doc", f):
        platforms = tuple(p.strip() for p in _text(r, "platform", f, w).split(",") if p.strip())
        if not platforms or not set(platforms) <= {"linux", "windows", "macos"}:
            raise _fail(f, w, "`platform` must list linux / windows / macos")
        pip = r.get("pip", [])
        if not isinstance(pip, list) or not all(isinstance(p, str) for p in pip):
            raise _fail(f, w, "`pip` must be a list of strings")
        docs.append(CondaTensorflowDoc(
            date=_text(r, "date", f, w, re.compile(r"\d{4}-\d{2}-\d{2}")),
            channel=_text(r, "channel", f, w, CONDA_CHANNEL),
            specs=_texts(r, "specs", f, w, CONDA_SPEC),
            pip=tuple(pip),
            platforms=platforms,
            source=_source(r, f, w),
            note=_note(r),
        ))
    return CondaKnowledge(cuda_packages, cudnn_packages, tuple(docs))


# -- choosing a cuDNN package -------------------------------------------------------------------------------
def nearest_cudnn(candidates, wanted: str, compiled: str, cuda: str):
    """(package, how) for the cuDNN package closest to the stack's, or None.

    TensorFlow loads a cuDNN of the same major with an equal or higher minor than the one it was built with
    (`compiled`), so only those are candidates. `how` is "" for the stack's own version (`wanted`), "newer" for
    the nearest newer one, "older" for the newest one between `compiled` and `wanted`. A build for the exact CUDA
    line wins over an "X.x" build of the same version. Works on apt and conda package records alike.
    """
    target, floor = Version(wanted), Version(compiled)
    usable = [p for p in candidates if p.key.major == floor.major and p.key >= floor]
    if not usable:
        return None
    exact = [p for p in usable if p.key == target]
    if exact:
        return max(exact, key=lambda p: p.cuda == cuda), ""
    newer = [p for p in usable if p.key > target]
    if newer:
        return min(newer, key=lambda p: (p.key, p.cuda != cuda)), "newer"
    return max(usable, key=lambda p: (p.key, p.cuda == cuda)), "older"
