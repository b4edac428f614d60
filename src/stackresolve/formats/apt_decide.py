"""The apt plan for Ubuntu: per release, NVIDIA's repository for the stack's CUDA line, its key, the exact CUDA
and libcudnn packages (the stack's cuDNN, or where the repository lacks it the nearest one TensorFlow accepts,
said in the plan) and, with --with-driver, the driver branch. Stacks whose CUDA comes as pip wheels, and CPU-only
stacks, get only Python, a venv and the pip plan (and the driver from Ubuntu's archive with --with-driver).
"""

from __future__ import annotations

from dataclasses import replace

from packaging.version import InvalidVersion, Version

from stackresolve.knowledge.channels import (
    AptCudaRepo,
    AptCudnnPackage,
    AptDriverPackage,
    AptKeyring,
    AptKnowledge,
    nearest_cudnn,
)
from stackresolve.knowledge.rules import cudnn_rule_text, driver_branch
from stackresolve.model.enums import Delivery, Os
from stackresolve.model.record import record
from stackresolve.model.stack import Resolution
from stackresolve.formats import PlanOptions, Refusal
from stackresolve.formats import pip_decide as pip_plan


@record
class CudnnChoice:
    package: AptCudnnPackage
    why: str  # "" when the package is exactly the stack's cuDNN


@record
class ReleasePlan:
    """What the script does on one Ubuntu release."""

    release: str  # "18.04"
    distro: str  # "ubuntu1804"
    cuda_repo_url: str
    keyring: AptKeyring
    cudnn: CudnnChoice
    ml_repo_url: str  # "" unless this release takes cuDNN from the machine-learning repository
    signing_key: AptKeyring | None  # the .pub key, needed with the apt-key method or the machine-learning repo
    driver: AptDriverPackage | None
    current_key: AptKeyring | None = None  # the current .pub key: added where the repository is already configured


@record
class AptPlan:
    """A stack with system CUDA: NVIDIA's repository, the exact CUDA and cuDNN packages per Ubuntu release."""

    cuda: str
    cuda_repo: AptCudaRepo
    releases: tuple[ReleasePlan, ...]
    skipped: tuple[str, ...]  # "14.04: why" for releases the CUDA line has but the plan cannot serve
    resolution: Resolution | None = None
    pip: pip_plan.PipPlan | None = None
    with_driver: bool = False


@record
class AptPipOnlyPlan:
    """CUDA from pip wheels, or a CPU-only stack: Python, a venv, the pip plan; the driver from Ubuntu's archive
    per release with --with-driver."""

    resolution: Resolution
    pip: pip_plan.PipPlan
    drivers: dict[str, AptDriverPackage]
    with_driver: bool


def ubuntu_distro(release: str) -> str:
    """'18.04' -> 'ubuntu1804', the directory name NVIDIA's repositories use."""
    return "ubuntu" + release.replace(".", "")


def _file_version(keyring: AptKeyring) -> Version:
    """cuda-keyring_1.1-1_all.deb -> 1.1-1 (newest keyring package first)."""
    parts = keyring.file.split("_")
    try:
        return Version(parts[1]) if len(parts) > 2 else Version("0")
    except InvalidVersion:
        return Version("0")


def choose_keyring(apt: AptKnowledge, release: str) -> AptKeyring | None:
    """cuda-keyring where the data lists one for this release, else the current signing key; retired keys never."""
    current = [k for k in apt.keyrings if k.current and release in k.ubuntu]
    packages = sorted((k for k in current if k.method == "cuda-keyring"), key=_file_version, reverse=True)
    if packages:
        return packages[0]
    return next((k for k in current if k.method == "apt-key"), None)


def signing_key(apt: AptKnowledge, release: str) -> AptKeyring | None:
    """The current key as a .pub file (used with signed-by), preferring a record that names this release."""
    keys = [k for k in apt.keyrings if k.current and k.method == "apt-key"]
    return next((k for k in keys if release in k.ubuntu), keys[0] if keys else None)


def choose_cudnn(candidates: list[AptCudnnPackage], wanted: str, compiled: str, cuda: str,
                 release: str) -> CudnnChoice | None:
    """The stack's cuDNN if the data has it for this release, else the nearest one TensorFlow accepts."""
    found = nearest_cudnn(candidates, wanted, compiled, cuda)
    if found is None:
        return None
    package, how = found
    if not how:
        return CudnnChoice(package, "")
    major = Version(compiled).major
    what = "nearest newer" if how == "newer" else "newest"
    why = (f"the data has no apt package of cuDNN {wanted} for CUDA {cuda} on Ubuntu {release}; {package.cudnn} "
           f"is the {what} cuDNN {major}.x >= {compiled} built for CUDA {cuda} there (TensorFlow accepts the same "
           f"major with an equal or higher minor than the cuDNN {compiled} it was built with)")
    return CudnnChoice(package, why)


def choose_driver(apt: AptKnowledge, release: str, minimum: str, max_branch: int | None) -> AptDriverPackage | None:
    """The newest driver branch package the data lists for this release that is >= the stack's minimum driver
    (and <= the GPU's last supported branch); records that name no release are a fallback."""
    low = driver_branch(minimum)
    fits = [d for d in apt.driver_packages
            if d.branch_number >= low and (max_branch is None or d.branch_number <= max_branch)]
    named = [d for d in fits if release in d.ubuntu]
    pool = named or [d for d in fits if not d.ubuntu]
    return max(pool, key=lambda d: d.branch_number, default=None)


def plan_releases(apt: AptKnowledge, resolution: Resolution, with_driver: bool) -> AptPlan | str:
    """Per Ubuntu release, what to install for this stack; a one-line reason when no release can be served."""
    stack = resolution.stack
    cuda = stack.cuda.version
    cuda_repo = apt.cuda_repo(cuda)
    if cuda_repo is None:
        lines = ", ".join(r.cuda for r in apt.cuda_repos)
        return f"the knowledge base has no NVIDIA apt repository data for CUDA {cuda} (it has {lines})"
    cuda_source = apt.repo("cuda")
    ml_source = apt.repo("machine-learning")
    if cuda_source is None:
        return "the knowledge base has no NVIDIA CUDA apt repository record"
    wanted, compiled = stack.cudnn.version, stack.cudnn.compiled
    install_driver = with_driver and resolution.request.os is not Os.WSL2
    max_branch = stack.driver.max_branch if install_driver else None
    plans, skipped = [], []
    for release in cuda_repo.ubuntu:
        distro = ubuntu_distro(release)
        keyring = choose_keyring(apt, release)
        if keyring is None or distro not in cuda_source.distros:
            skipped.append(f"{release}: no current repository key recorded for this release")
            continue
        ml_ok = ml_source is not None and distro in ml_source.distros
        candidates = [p for p in apt.cudnn_for(cuda)
                      if release in p.ubuntu and (release in p.ubuntu_cuda_repo or ml_ok)]
        choice = choose_cudnn(candidates, wanted, compiled, cuda, release)
        if choice is None:
            skipped.append(f"{release}: no apt package of cuDNN {cudnn_rule_text(compiled)} for CUDA {cuda} "
                           f"recorded")
            continue
        from_ml = release not in choice.package.ubuntu_cuda_repo
        key = signing_key(apt, release)
        needs_key = keyring.method == "apt-key" or from_ml
        if needs_key and key is None:
            skipped.append(f"{release}: no current signing key recorded")
            continue
        driver = None
        if install_driver:
            minimum = stack.driver.minimum
            driver = choose_driver(apt, release, minimum, max_branch) if minimum else None
            if driver is None:
                branch = f">= {driver_branch(minimum)}" if minimum else "(no minimum driver is known)"
                skipped.append(f"{release}: no driver package of branch {branch} recorded (--with-driver)")
                continue
        plans.append(ReleasePlan(
            release=release,
            distro=distro,
            cuda_repo_url=cuda_source.url_for(distro),
            keyring=keyring,
            cudnn=choice,
            ml_repo_url=ml_source.url_for(distro) if from_ml and ml_source else "",
            signing_key=key if needs_key else None,
            driver=driver,
            current_key=key,
        ))
    if not plans:
        return (f"no Ubuntu release in the knowledge base serves CUDA {cuda} with cuDNN {wanted}: "
                + "; ".join(skipped))
    return AptPlan(cuda, cuda_repo, tuple(plans), tuple(skipped))


def wheel_stack_drivers(apt: AptKnowledge | None, resolution: Resolution) -> dict[str, AptDriverPackage]:
    """Per Ubuntu release, the driver package for a stack without system CUDA (from Ubuntu's own archive only:
    no NVIDIA repository is configured for these stacks)."""
    if apt is None:
        return {}
    minimum = resolution.stack.driver.minimum
    if not minimum:
        return {}
    max_branch = resolution.stack.driver.max_branch
    ubuntu_archive = AptKnowledge((), (), (), (), tuple(d for d in apt.driver_packages
                                                         if d.origin == "ubuntu-or-cuda-repo" and d.ubuntu))
    releases = sorted({r for d in ubuntu_archive.driver_packages for r in d.ubuntu}, key=Version)
    found = {r: choose_driver(ubuntu_archive, r, minimum, max_branch) for r in releases}
    return {r: d for r, d in found.items() if d is not None}


def decide(resolution: Resolution, kb=None, options: PlanOptions = PlanOptions()):
    """The apt plan for a stack the format's rule lets through (stackresolve.formats.registry: Ubuntu, not NVIDIA's
    builds), or why there is none (no apt data for the CUDA line, no driver package for --with-driver)."""
    stack = resolution.stack
    with_driver = resolution.request.with_driver if options.with_driver is None else options.with_driver
    os_name = resolution.request.os
    pip = pip_plan.decide(resolution)
    apt = getattr(kb, "apt", None)
    if stack.delivery is not Delivery.SYSTEM:
        with_driver = with_driver and os_name is not Os.WSL2
        drivers = wheel_stack_drivers(apt, resolution) if with_driver and stack.cuda else {}
        if with_driver and stack.cuda and not drivers:
            return Refusal(resolution, f"--with-driver: the knowledge base records no apt driver package for a "
                                       f"driver >= {stack.driver.minimum} on Ubuntu.",
                           "Plan again without --with-driver and install the driver with your distribution's tools "
                           "(e.g. ubuntu-drivers).")
        return AptPipOnlyPlan(resolution, pip, drivers, with_driver)
    if apt is None:
        return Refusal(resolution, "The knowledge base has no apt data (constraints/apt.toml).",
                       "Use --format conda or dockerfile.")
    plan = plan_releases(apt, resolution, with_driver)
    if isinstance(plan, str):
        return Refusal(resolution, f"No apt plan: {plan}.", "Use --format conda or dockerfile.")
    return replace(plan, resolution=resolution, pip=pip, with_driver=with_driver)
