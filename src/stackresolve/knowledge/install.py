"""The install facts of the knowledge base (constraints/docker.toml, windows.toml, apt.toml, conda.toml): what the
Docker, PowerShell, apt and conda plans install. Loaded on first use: a text plan, a lock or `check` never needs
them (the cuDNN channel table the resolver consults is computed from them once, into the core knowledge)."""

from __future__ import annotations

from stackresolve.knowledge.channels import AptKnowledge, CondaKnowledge, parse_apt, parse_conda
from stackresolve.knowledge.install_facts import (
    CudaImage,
    CudaInstaller,
    CudnnZip,
    KeyRotation,
    MsvcRuntime,
    TfImage,
    UbuntuPythons,
    parse_docker,
    parse_windows,
)
from stackresolve.model.record import record

INSTALL_FILES = ("docker.toml", "windows.toml", "apt.toml", "conda.toml")


@record(eq=False, repr=False)
class InstallKnowledge:
    apt: AptKnowledge
    conda: CondaKnowledge
    tf_images: tuple[TfImage, ...]
    cuda_images: tuple[CudaImage, ...]
    cuda_installers: tuple[CudaInstaller, ...]
    cudnn_zips: tuple[CudnnZip, ...]
    msvc_runtimes: tuple[MsvcRuntime, ...]
    key_rotation: KeyRotation
    ubuntu_pythons: tuple[UbuntuPythons, ...]


def build_install(docs: dict[str, dict]) -> InstallKnowledge:
    docker = parse_docker(docs["docker.toml"])
    cuda_installers, cudnn_zips, msvc_runtimes = parse_windows(docs["windows.toml"])
    return InstallKnowledge(parse_apt(docs["apt.toml"]), parse_conda(docs["conda.toml"]), docker.tf_images,
                            docker.cuda_images, cuda_installers, cudnn_zips, msvc_runtimes, docker.key_rotation,
                            docker.ubuntu_pythons)


def cudnn_channel_table(install: InstallKnowledge, cuda_lines, wheels) -> dict:
    """{(cuda line, os): {channel: cuDNN versions it carries}} for every CUDA line and OS (see
    KnowledgeBase.cudnn_channels), and {cuda major: {cuDNN version: the nvidia-cudnn wheel requirement}}."""
    # lazy: no start-up gain (already loaded by then); kept beside its use
    import re

    wheel_table: dict[str, dict[str, str]] = {}
    texts = [t for w in wheels for t in w.and_cuda] + [t for doc in install.conda.tensorflow_docs for t in doc.pip]
    for major in {cuda.split(".")[0] for cuda in cuda_lines}:
        found: dict[str, str] = {}
        if int(major) >= 11:
            for text in texts:
                match = re.fullmatch(rf"nvidia-cudnn-cu{major}==(\d+\.\d+\.\d+)(\.\d+)*", text.strip())
                if match:
                    found.setdefault(match.group(1), text.strip())
        wheel_table[major] = found
    table: dict[tuple[str, str], dict[str, frozenset[str]]] = {}
    for cuda in cuda_lines:
        for os_name in ("linux", "wsl2", "windows", "macos"):
            out: dict[str, frozenset[str]] = {}
            if os_name in ("linux", "wsl2"):
                out["apt"] = frozenset(p.cudnn for p in install.apt.cudnn_for(cuda))
            channels = {p.channel for p in install.conda.cuda_for(cuda)}
            if channels:
                out["conda"] = frozenset(p.cudnn for c in channels for p in install.conda.cudnn_for(cuda, c)) | \
                    frozenset(wheel_table[cuda.split(".")[0]])
            table[(cuda, os_name)] = {name: versions for name, versions in out.items() if versions}
    return {"channels": table, "wheels": wheel_table}
