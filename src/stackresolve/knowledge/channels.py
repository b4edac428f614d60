"""Install channels: NVIDIA's apt repositories (constraints/apt.toml) and conda channels (constraints/conda.toml).

This module never reads files: the knowledge loader parses the TOML and hands each document to `parse_apt` /
`parse_conda`. The record shapes are documented at the top of those two files.

Every string that an emitter later writes into a shell script or an environment.yml is checked here against a
strict pattern (package names, versions, channel names, file names, URLs), so a malformed or hostile record
fails loading with one line naming it instead of reaching a plan. Emitters quote those values anyway.
"""

from __future__ import annotations

from packaging.version import Version

from stackresolve.knowledge.fields import records
from stackresolve.knowledge.rules import cuda_line_fits, cudnn_accepts
from stackresolve.model.record import record

# `apt-get install` arguments: a Debian package name, optionally `=version` (Debian policy 5.6.1 / 5.6.12).
APT_PACKAGE = r"[a-z0-9][a-z0-9+.-]+(=[0-9][A-Za-z0-9.+~:-]*)?"
APT_VERSION = r"[0-9][A-Za-z0-9.+~:-]*"
UBUNTU_RELEASE = r"\d{2}\.\d{2}"
DISTRO = r"ubuntu\d{4}"
CUDA_LINE = r"\d{1,2}\.(\d{1,2}|x)"
# A file NVIDIA publishes in a repository directory (cuda-keyring_1.1-1_all.deb, 3bf863cc.pub).
REPO_FILE = r"[A-Za-z0-9][A-Za-z0-9._+-]*"
REPO_URL = r"https://[A-Za-z0-9.-]+(/[A-Za-z0-9._{}-]+)*/"
# Conda match specs as environment.yml lists them: name=version[=build], version and build with conda's globs.
CONDA_SPEC = r"[a-z0-9][a-z0-9._-]*(=[0-9][A-Za-z0-9.*_+]*(=[A-Za-z0-9.*_+]+)?)?"
CONDA_CHANNEL = r"[A-Za-z0-9][A-Za-z0-9._-]*(/[A-Za-z0-9][A-Za-z0-9._-]*)*"

APT_REPO_NAMES = ("cuda", "machine-learning")
KEYRING_METHODS = ("apt-key", "cuda-keyring")
DRIVER_ORIGINS = ("ubuntu-or-cuda-repo", "cuda-repo")


# -- apt --------------------------------------------------------------------------------------------------
@record
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


@record
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


@record
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
        return cuda_line_fits(self.cuda, cuda)

    @property
    def packages(self) -> tuple[str, ...]:
        return (self.runtime, self.dev) if self.dev else (self.runtime,)


@record
class AptKeyring:
    method: str  # "apt-key" | "cuda-keyring"
    file: str
    key_id: str
    ubuntu: tuple[str, ...]
    current: bool
    source: str
    note: str = ""


@record
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


@record
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
@record
class CondaCudaPackage:
    cuda: str
    channel: str
    specs: tuple[str, ...]
    versions: tuple[str, ...]
    only_channel: bool
    source: str
    note: str = ""


@record
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
        return cuda_line_fits(self.cuda, cuda)


@record
class CondaTensorflowDoc:
    date: str
    channel: str
    specs: tuple[str, ...]
    pip: tuple[str, ...]
    platforms: tuple[str, ...]  # "linux, windows" -> ("linux", "windows")
    source: str
    note: str = ""


@record
class CondaKnowledge:
    cuda_packages: tuple[CondaCudaPackage, ...]
    cudnn_packages: tuple[CondaCudnnPackage, ...]
    tensorflow_docs: tuple[CondaTensorflowDoc, ...]

    def cuda_for(self, cuda: str) -> tuple[CondaCudaPackage, ...]:
        return tuple(p for p in self.cuda_packages if p.cuda == cuda)

    def cudnn_for(self, cuda: str, channel: str) -> tuple[CondaCudnnPackage, ...]:
        return tuple(p for p in self.cudnn_packages if p.channel == channel and p.fits(cuda))


# -- parsers ----------------------------------------------------------------------------------------------
def parse_apt(doc: dict) -> AptKnowledge:
    """Validate constraints/apt.toml (already parsed) into AptKnowledge. Raises KnowledgeError naming the record."""
    f = "apt.toml"
    repos = []
    for r in records(doc, "repo", f):
        repo = AptRepo(name=r.one_of("name", APT_REPO_NAMES), url=r.text("url", pattern=REPO_URL),
                       distros=r.texts("distros", pattern=DISTRO), updated=r.flag("updated"), source=r.source(),
                       note=r.note())
        if repo.url.count("{distro}") != 1 or "{" in repo.url.replace("{distro}", ""):
            raise r.fail("url must contain {distro} exactly once")
        repos.append(repo)
    cuda_repos = []
    for r in records(doc, "cuda_repo", f):
        line = AptCudaRepo(
            cuda=r.text("cuda", pattern=CUDA_LINE),
            ubuntu=r.texts("ubuntu", pattern=UBUNTU_RELEASE),
            toolkit_package=r.text("toolkit_package", pattern=APT_PACKAGE),
            toolkit_version=r.text("toolkit_version", pattern=APT_VERSION, allow_empty=True),
            meta_version=r.text("meta_version", pattern=APT_VERSION, allow_empty=True),
            full_package=r.text("full_package", pattern=APT_PACKAGE, allow_empty=True),
            source=r.source(),
            note=r.note(),
        )
        if "=" in line.toolkit_package or not line.toolkit_package.startswith("cuda-toolkit-"):
            raise r.fail("toolkit_package must be a bare cuda-toolkit-X-Y name")
        cuda_repos.append(line)
    cudnn_packages = []
    for r in records(doc, "cudnn_package", f):
        package = AptCudnnPackage(
            cudnn=r.version("cudnn"),
            full_version=r.version("full_version"),
            cuda=r.text("cuda", pattern=CUDA_LINE),
            runtime=r.text("runtime", pattern=APT_PACKAGE),
            dev=r.text("dev", pattern=APT_PACKAGE, allow_empty=True),
            repo=r.one_of("repo", APT_REPO_NAMES),
            ubuntu=r.texts("ubuntu", pattern=UBUNTU_RELEASE),
            ubuntu_cuda_repo=r.texts("ubuntu_cuda_repo", pattern=UBUNTU_RELEASE),
            source=r.source(),
            note=r.note(),
        )
        if "=" not in package.runtime or (package.dev and "=" not in package.dev):
            raise r.fail("`runtime` / `dev` must pin a version (name=version)")
        if not set(package.ubuntu_cuda_repo) <= set(package.ubuntu):
            raise r.fail("`ubuntu_cuda_repo` must be a subset of `ubuntu`")
        cudnn_packages.append(package)
    keyrings = tuple(
        AptKeyring(
            method=r.one_of("method", KEYRING_METHODS),
            file=r.text("file", pattern=REPO_FILE),
            key_id=r.text("key_id", pattern=r"[0-9a-f]{8}"),
            ubuntu=r.texts("ubuntu", pattern=UBUNTU_RELEASE),
            current=r.flag("current"),
            source=r.source(),
            note=r.note(),
        )
        for r in records(doc, "keyring", f)
    )
    drivers = []
    for r in records(doc, "driver_package", f):
        driver = AptDriverPackage(
            branch=r.text("branch", pattern=r"\d{3,4}"),
            package=r.text("package", pattern=APT_PACKAGE),
            ubuntu=r.texts("ubuntu", pattern=UBUNTU_RELEASE),
            origin=r.one_of("origin", DRIVER_ORIGINS),
            source=r.source(),
            note=r.note(),
        )
        if "=" in driver.package:
            raise r.fail(f"package {driver.package} must be a bare name")
        drivers.append(driver)
    return AptKnowledge(tuple(repos), tuple(cuda_repos), tuple(cudnn_packages), keyrings, tuple(drivers))


def parse_conda(doc: dict) -> CondaKnowledge:
    """Validate constraints/conda.toml (already parsed) into CondaKnowledge. Raises KnowledgeError naming the
    record."""
    f = "conda.toml"
    cuda_packages = tuple(
        CondaCudaPackage(
            cuda=r.text("cuda", pattern=CUDA_LINE),
            channel=r.text("channel", pattern=CONDA_CHANNEL),
            specs=r.texts("specs", pattern=CONDA_SPEC, nonempty=True),
            versions=r.versions("versions"),
            only_channel=r.flag("only_channel"),
            source=r.source(),
            note=r.note(),
        )
        for r in records(doc, "cuda_package", f)
    )
    cudnn_packages = tuple(
        CondaCudnnPackage(
            cudnn=r.version("cudnn"),
            full_version=r.version("full_version", allow_empty=True),
            cuda=r.text("cuda", pattern=CUDA_LINE),
            channel=r.text("channel", pattern=CONDA_CHANNEL),
            spec=r.text("spec", pattern=CONDA_SPEC),
            requires=r.text("requires", allow_empty=True),
            only_channel=r.flag("only_channel"),
            source=r.source(),
            note=r.note(),
        )
        for r in records(doc, "cudnn_package", f)
    )
    docs = []
    for r in records(doc, "tensorflow_doc", f):
        platforms = tuple(p.strip() for p in r.text("platform").split(",") if p.strip())
        if not platforms or not set(platforms) <= {"linux", "windows", "macos"}:
            raise r.fail("`platform` must list linux / windows / macos")
        docs.append(CondaTensorflowDoc(
            date=r.text("date", pattern=r"\d{4}-\d{2}-\d{2}"),
            channel=r.text("channel", pattern=CONDA_CHANNEL),
            specs=r.texts("specs", pattern=CONDA_SPEC),
            pip=r.texts("pip", optional=True),
            platforms=platforms,
            source=r.source(),
            note=r.note(),
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
    target = Version(wanted)
    usable = [p for p in candidates if cudnn_accepts(compiled, str(p.key))]
    if not usable:
        return None
    exact = [p for p in usable if p.key == target]
    if exact:
        return max(exact, key=lambda p: p.cuda == cuda), ""
    newer = [p for p in usable if p.key > target]
    if newer:
        return min(newer, key=lambda p: (p.key, p.cuda != cuda)), "newer"
    return max(usable, key=lambda p: (p.key, p.cuda == cuda)), "older"
