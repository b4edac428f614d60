"""`--format apt`: a bash script for Ubuntu that installs the stack's CUDA and cuDNN from NVIDIA's apt repositories.

Stacks that need a system CUDA get: a check of /etc/os-release against the Ubuntu releases NVIDIA's repository
carries for that CUDA line, the repository (cuda-keyring or the signing key, as the data says for that release),
the exact CUDA and libcudnn packages (and the driver branch with --with-driver), `apt-mark hold`, the Python
virtual environment with the pip plan, and a closing `dpkg-query -W` of what it installed.
`tensorflow[and-cuda]` and CPU-only stacks get only Python, the venv and the pip plan.

Every value that lands in the script comes from the validated knowledge base (knowledge/channels.py) and is
quoted with shlex.quote anyway; comments are stripped of control characters so no text can leave its comment.
"""

from __future__ import annotations

import re
import shlex
from dataclasses import dataclass

from packaging.requirements import Requirement
from packaging.version import InvalidVersion, Version

from stackresolve.emit.header import header_lines
from stackresolve.emit.pip import requirement_lines
from stackresolve.knowledge.channels import (
    AptCudaRepo,
    AptCudnnPackage,
    AptDriverPackage,
    AptKeyring,
    AptKnowledge,
    nearest_cudnn,
)
from stackresolve.resolve import Resolution

_CONTROL = re.compile(r"[\x00-\x1f\x7f]+")


# -- choices (pure, tested directly) ------------------------------------------------------------------------
@dataclass(frozen=True)
class CudnnChoice:
    package: AptCudnnPackage
    why: str  # "" when the package is exactly the stack's cuDNN


@dataclass(frozen=True)
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


@dataclass(frozen=True)
class AptPlan:
    cuda: str
    cuda_repo: AptCudaRepo
    releases: tuple[ReleasePlan, ...]
    skipped: tuple[str, ...]  # "14.04: why" for releases the CUDA line has but the plan cannot serve


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
    low = Version(minimum).release[0]
    fits = [d for d in apt.driver_packages
            if d.branch_number >= low and (max_branch is None or d.branch_number <= max_branch)]
    named = [d for d in fits if release in d.ubuntu]
    pool = named or [d for d in fits if not d.ubuntu]
    return max(pool, key=lambda d: d.branch_number, default=None)


def max_driver_branch(resolution: Resolution, kb) -> int | None:
    lookup = getattr(kb, "arch_support_for", None)
    branches = []
    for gpu in resolution.request.gpus:
        support = lookup(gpu.cc) if lookup else None
        if support and support.last_branch:
            branches.append(int(support.last_branch))
    return min(branches) if branches else None


def plan_releases(apt: AptKnowledge, resolution: Resolution, with_driver: bool, kb=None) -> AptPlan | str:
    """Per Ubuntu release, what to install for this stack; a one-line reason when no release can be served."""
    stack = resolution.stack
    cuda = stack.cuda.value["version"]
    cuda_repo = apt.cuda_repo(cuda)
    if cuda_repo is None:
        lines = ", ".join(r.cuda for r in apt.cuda_repos)
        return f"the knowledge base has no NVIDIA apt repository data for CUDA {cuda} (it has {lines})"
    cuda_source = apt.repo("cuda")
    ml_source = apt.repo("machine-learning")
    if cuda_source is None:
        return "the knowledge base has no NVIDIA CUDA apt repository record"
    wanted = stack.cudnn.value["version"]
    compiled = stack.candidate.cudnn_min or wanted
    install_driver = with_driver and resolution.request.os != "wsl2"
    max_branch = max_driver_branch(resolution, kb) if install_driver else None
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
            skipped.append(f"{release}: no apt package of cuDNN {Version(compiled).major}.x >= {compiled} for "
                           f"CUDA {cuda} recorded")
            continue
        from_ml = release not in choice.package.ubuntu_cuda_repo
        key = signing_key(apt, release)
        needs_key = keyring.method == "apt-key" or from_ml
        if needs_key and key is None:
            skipped.append(f"{release}: no current signing key recorded")
            continue
        driver = None
        if install_driver:
            minimum = stack.driver.value.get("min")
            driver = choose_driver(apt, release, minimum, max_branch) if minimum else None
            if driver is None:
                branch = f">= {Version(minimum).release[0]}" if minimum else "(no minimum driver is known)"
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
        ))
    if not plans:
        return (f"no Ubuntu release in the knowledge base serves CUDA {cuda} with cuDNN {wanted}: "
                + "; ".join(skipped))
    return AptPlan(cuda, cuda_repo, tuple(plans), tuple(skipped))


# -- script text ----------------------------------------------------------------------------------------------
def _comment(text: str) -> str:
    return "# " + _CONTROL.sub(" ", text).rstrip() + "\n"


def _q(value: str) -> str:
    return shlex.quote(value)


def _array(name: str, values) -> str:
    return f"{name}=(" + " ".join(_q(v) for v in values) + ")\n"


def _header(resolution: Resolution) -> str:
    return "".join(_comment(line) for line in header_lines(resolution, "apt"))


def _with_driver(resolution: Resolution, with_driver: bool | None) -> bool:
    if with_driver is not None:
        return with_driver
    return bool(getattr(resolution.request, "with_driver", False))


_PRELUDE = r"""
die() { printf 'stackresolve: %s\n' "$*" >&2; exit 1; }
as_root() { if [ "$(id -u)" -eq 0 ]; then "$@"; else sudo "$@"; fi; }
apt_get() { as_root env DEBIAN_FRONTEND=noninteractive apt-get "$@"; }

CHECK_ONLY=0
case "${1:-}" in
  --check) CHECK_ONLY=1 ;;
  "") ;;
  *) die "usage: $0 [--check]   (--check: only verify the OS and print the plan)" ;;
esac

# The OS check reads os-release without sourcing it; STACKRESOLVE_OS_RELEASE lets tests point elsewhere.
OS_RELEASE_FILE="${STACKRESOLVE_OS_RELEASE:-/etc/os-release}"
os_release_field() { sed -n "/^$1=/{s/^$1=//;p;q;}" "$OS_RELEASE_FILE" | tr -d "\"'"; }
[ -r "$OS_RELEASE_FILE" ] || die "cannot read $OS_RELEASE_FILE: this plan is for Ubuntu ($SUPPORTED_RELEASES)"
OS_ID="$(os_release_field ID)"
OS_VERSION="$(os_release_field VERSION_ID)"
[ "$OS_ID" = ubuntu ] || die "this plan is for Ubuntu ($SUPPORTED_RELEASES); $OS_RELEASE_FILE says ID=$OS_ID"
"""

_ARCH_CHECK = r"""
MACHINE="$(uname -m)"
[ "$MACHINE" = x86_64 ] || die "this plan uses NVIDIA's x86_64 repositories; this machine is $MACHINE"
"""

_REPOSITORIES = r"""
WORK_DIR="$(mktemp -d)"
trap 'rm -rf "$WORK_DIR"' EXIT
KEYRING_PATH=/usr/share/keyrings/stackresolve-nvidia-cuda.gpg
APT_ETC="${STACKRESOLVE_APT_ETC:-/etc/apt}"  # tests point this at a scratch directory

repo_configured() { grep -rqsF -- "$1" "$APT_ETC/sources.list" "$APT_ETC/sources.list.d/"; }
need_download_tools() {
  if ! command -v curl >/dev/null 2>&1 || ! command -v gpg >/dev/null 2>&1; then
    apt_get update
    apt_get install -y --no-install-recommends ca-certificates curl gnupg apt-transport-https
  fi
}
fetch() { curl -fsSL --retry 3 --connect-timeout 30 --max-time 600 -o "$2" "$1"; }
install_signing_key() {
  if [ -s "$KEYRING_PATH" ]; then return 0; fi
  fetch "$CUDA_REPO_URL/$SIGNING_KEY_FILE" "$WORK_DIR/signing-key.pub"
  gpg --dearmor < "$WORK_DIR/signing-key.pub" > "$WORK_DIR/signing-key.gpg"
  as_root install -m 0644 "$WORK_DIR/signing-key.gpg" "$KEYRING_PATH"
}

if repo_configured "$CUDA_REPO_URL"; then
  echo "NVIDIA CUDA repository $CUDA_REPO_URL is already configured: skipping"
else
  need_download_tools
  if [ "$KEYRING_METHOD" = cuda-keyring ]; then
    fetch "$CUDA_REPO_URL/$KEYRING_FILE" "$WORK_DIR/$KEYRING_FILE"
    as_root dpkg -i "$WORK_DIR/$KEYRING_FILE"
  else
    install_signing_key
    echo "deb [signed-by=$KEYRING_PATH] $CUDA_REPO_URL/ /" |
      as_root tee "$APT_ETC/sources.list.d/cuda-$DISTRO-x86_64.list" >/dev/null
  fi
fi
if [ -n "$ML_REPO_URL" ]; then
  if repo_configured "$ML_REPO_URL"; then
    echo "NVIDIA machine-learning repository $ML_REPO_URL is already configured: skipping"
  else
    need_download_tools
    install_signing_key
    echo "deb [signed-by=$KEYRING_PATH] $ML_REPO_URL/ /" |
      as_root tee "$APT_ETC/sources.list.d/nvidia-ml-$DISTRO-x86_64.list" >/dev/null
  fi
fi

apt_get update
INSTALL=("${CUDA_PACKAGES[@]}" "${CUDNN_PACKAGES[@]}")
if [ -n "$DRIVER_PACKAGE" ]; then INSTALL+=("$DRIVER_PACKAGE"); fi
apt_get install -y --no-install-recommends --allow-downgrades "${INSTALL[@]}"
HOLD=("${INSTALL[@]%%=*}")
as_root apt-mark hold "${HOLD[@]}"
APT_INSTALLED=("${HOLD[@]}")
"""

_PYTHON = r"""
# Python and the pip plan, in a virtual environment (STACKRESOLVE_VENV, default .venv; STACKRESOLVE_PYTHON to
# use an interpreter of your own).
PYTHON_BIN="${STACKRESOLVE_PYTHON:-}"
if [ -z "$PYTHON_BIN" ]; then
  if apt-cache show "python$PYTHON_VERSION-venv" >/dev/null 2>&1; then
    apt_get install -y --no-install-recommends "python$PYTHON_VERSION" "python$PYTHON_VERSION-venv"
    APT_INSTALLED+=("python$PYTHON_VERSION" "python$PYTHON_VERSION-venv")
    PYTHON_BIN="python$PYTHON_VERSION"
  elif command -v "python$PYTHON_VERSION" >/dev/null 2>&1; then
    PYTHON_BIN="python$PYTHON_VERSION"
  else
    die "Ubuntu $OS_VERSION has no python$PYTHON_VERSION package and none is on PATH: install" \
      "Python $PYTHON_VERSION and rerun with STACKRESOLVE_PYTHON=/path/to/python$PYTHON_VERSION," \
      "or plan again with --python for a Python this release has"
  fi
fi
python_minor() { "$1" -c 'import sys; print("%d.%d" % sys.version_info[:2])'; }
FOUND_PYTHON="$(python_minor "$PYTHON_BIN")"
[ "$FOUND_PYTHON" = "$PYTHON_VERSION" ] ||
  die "$PYTHON_BIN is Python $FOUND_PYTHON; this plan needs Python $PYTHON_VERSION"
VENV_DIR="${STACKRESOLVE_VENV:-.venv}"
if [ ! -x "$VENV_DIR/bin/python" ]; then "$PYTHON_BIN" -m venv "$VENV_DIR"; fi
VENV_PYTHON="$(python_minor "$VENV_DIR/bin/python")"
[ "$VENV_PYTHON" = "$PYTHON_VERSION" ] || die "$VENV_DIR has Python $VENV_PYTHON; remove it or set STACKRESOLVE_VENV"
"$VENV_DIR/bin/python" -m pip install --timeout 60 --upgrade pip
"$VENV_DIR/bin/python" -m pip install --timeout 60 "${PIP_REQUIREMENTS[@]}"

echo
echo "Installed with apt:"
if [ "${#APT_INSTALLED[@]}" -gt 0 ]; then dpkg-query -W "${APT_INSTALLED[@]}"; else echo "  (nothing)"; fi
echo "Python $FOUND_PYTHON virtual environment $VENV_DIR:"
"$VENV_DIR/bin/python" -m pip show "$FRAMEWORK_PACKAGE" | grep -E '^(Name|Version):'
"""


def _driver_need(stack) -> str:
    minimum = stack.driver.value.get("min")
    return f"driver >= {minimum}" if minimum else f"a driver that supports CUDA {stack.cuda.value['version']}"


def _driver_reminder(stack, reboot: bool) -> str:
    text = f"This stack needs an NVIDIA {_driver_need(stack)} (nvidia-smi shows the installed one)."
    if reboot:
        text += " Reboot to load the newly installed driver."
    return f"echo {_q(text)}\n"


def _framework_name(resolution: Resolution) -> str:
    return Requirement(requirement_lines(resolution)[0]).name


def _not_applicable(resolution: Resolution, why: str, instead: str) -> str:
    # A quoted here-document: nothing in the (single-line) message is expanded or executed.
    message = _CONTROL.sub(" ", f"stackresolve: {why} {instead}")
    return (f"#!/usr/bin/env bash\n{_header(resolution)}{_comment(why)}set -euo pipefail\n"
            f"cat >&2 <<'STACKRESOLVE_MESSAGE'\n{message}\nSTACKRESOLVE_MESSAGE\nexit 1\n")


def _common_values(resolution: Resolution, supported: str) -> str:
    stack = resolution.stack
    return (f"SUPPORTED_RELEASES={_q(supported)}\n"
            f"PYTHON_VERSION={_q(stack.python.value['recommended'])}\n"
            f"FRAMEWORK_PACKAGE={_q(_framework_name(resolution))}\n"
            + _array("PIP_REQUIREMENTS", requirement_lines(resolution)))


def wheel_stack_drivers(apt: AptKnowledge | None, resolution: Resolution, kb) -> dict[str, AptDriverPackage]:
    """Per Ubuntu release, the driver package for a stack without system CUDA (from Ubuntu's own archive only:
    no NVIDIA repository is configured for these stacks)."""
    if apt is None:
        return {}
    minimum = resolution.stack.driver.value.get("min")
    if not minimum:
        return {}
    max_branch = max_driver_branch(resolution, kb)
    ubuntu_archive = AptKnowledge((), (), (), (), tuple(d for d in apt.driver_packages
                                                         if d.origin == "ubuntu-or-cuda-repo" and d.ubuntu))
    releases = sorted({r for d in ubuntu_archive.driver_packages for r in d.ubuntu}, key=Version)
    found = {r: choose_driver(ubuntu_archive, r, minimum, max_branch) for r in releases}
    return {r: d for r, d in found.items() if d is not None}


def _pip_only(resolution: Resolution, with_driver: bool, kb) -> str:
    """tensorflow[and-cuda] and CPU stacks: Python, a venv and the pip plan; any Ubuntu release."""
    stack = resolution.stack
    drivers = wheel_stack_drivers(getattr(kb, "apt", None), resolution, kb) if with_driver and stack.cuda else {}
    if with_driver and stack.cuda and not drivers:
        return _not_applicable(resolution, f"--with-driver: the knowledge base records no apt driver package for "
                                           f"{_driver_need(stack)} on Ubuntu.",
                               "Plan again without --with-driver and install the driver with your distribution's "
                               "tools (e.g. ubuntu-drivers).")
    out = ["#!/usr/bin/env bash\n", _header(resolution)]
    if stack.cuda:
        out.append(_comment(f"CUDA {stack.cuda.value['version']} and cuDNN {stack.cudnn.value['version']} come as "
                            f"pip wheels through {stack.framework.value['pip_package']}: no system CUDA is "
                            f"installed. Only the NVIDIA driver ({_driver_need(stack)}) comes from the system."))
    else:
        out.append(_comment("CPU-only stack: no CUDA or cuDNN is installed."))
    out.append("set -euo pipefail\n\n")
    supported = ", ".join(drivers) if drivers else "any release"
    out.append(_common_values(resolution, supported))
    out.append(_PRELUDE)
    out.append('case "$OS_VERSION" in\n')
    if drivers:
        for release, driver in drivers.items():
            out.append(f"  {_q(release)})\n    " + _comment(f"driver {driver.package} (branch {driver.branch}); "
                                                        f"source: {driver.source}"))
            out.append(f"    DRIVER_PACKAGE={_q(driver.package)} ;;\n")
        out.append('  *) die "Ubuntu $OS_VERSION is not supported by this plan: a driver package is recorded for '
                   'Ubuntu $SUPPORTED_RELEASES" ;;\n')
    else:
        out.append("  [0-9][0-9].[0-9][0-9]) DRIVER_PACKAGE='' ;;\n"
                   '  *) die "cannot read an Ubuntu release from VERSION_ID=$OS_VERSION in $OS_RELEASE_FILE" ;;\n')
    out.append("esac\n")
    out.append('if [ "$CHECK_ONLY" = 1 ]; then\n'
               '  echo "Ubuntu $OS_VERSION: would install $DRIVER_PACKAGE Python $PYTHON_VERSION, a venv and: '
               '${PIP_REQUIREMENTS[*]}"\n  exit 0\nfi\n\n'
               "APT_INSTALLED=()\napt_get update\n"
               'if [ -n "$DRIVER_PACKAGE" ]; then\n'
               '  apt_get install -y --no-install-recommends "$DRIVER_PACKAGE"\n'
               '  as_root apt-mark hold "$DRIVER_PACKAGE"\n'
               '  APT_INSTALLED+=("$DRIVER_PACKAGE")\nfi\n')
    out.append(_PYTHON)
    if stack.cuda:
        out.append(_driver_reminder(stack, reboot=bool(drivers)))
    return "".join(out)


def _release_case(plan: AptPlan) -> str:
    out = ['case "$OS_VERSION" in\n']
    for rp in plan.releases:
        cudnn = rp.cudnn.package
        out.append(f"  {_q(rp.release)})\n")
        out.append("    " + _comment(f"Ubuntu {rp.release}: repository {rp.cuda_repo_url}/ trusted with "
                                     f"{rp.keyring.file} ({rp.keyring.method}); source: {rp.keyring.source}"))
        out.append("    " + _comment(f"cuDNN {' '.join(cudnn.packages)}; source: {cudnn.source}"))
        if rp.cudnn.why:
            out.append("    " + _comment(f"substitute: {rp.cudnn.why}"))
        if rp.ml_repo_url:
            out.append("    " + _comment("this cuDNN build is recorded only with NVIDIA's machine-learning repository "
                                         "(no longer updated by NVIDIA); that it is signed with the current key "
                                         "is not verified by the knowledge base"))
        if rp.driver:
            unnamed = "" if rp.driver.ubuntu else " (its source names no Ubuntu release; NVIDIA's CUDA repository)"
            out.append("    " + _comment(f"driver {rp.driver.package} (branch {rp.driver.branch}){unnamed}; "
                                         f"source: {rp.driver.source}"))
        values = [
            f"DISTRO={_q(rp.distro)}",
            f"CUDA_REPO_URL={_q(rp.cuda_repo_url)}",
            f"KEYRING_METHOD={_q(rp.keyring.method)}",
            f"KEYRING_FILE={_q(rp.keyring.file)}",
            f"SIGNING_KEY_FILE={_q(rp.signing_key.file if rp.signing_key else '')}",
            f"ML_REPO_URL={_q(rp.ml_repo_url)}",
            f"DRIVER_PACKAGE={_q(rp.driver.package if rp.driver else '')}",
        ]
        out += [f"    {v}\n" for v in values]
        out.append("    " + _array("CUDNN_PACKAGES", cudnn.packages))
        out.append("    ;;\n")
    out.append('  *)\n    die "Ubuntu $OS_VERSION is not supported by this plan: NVIDIA\'s CUDA $CUDA_LINE '
               'repository with the cuDNN build it needs is recorded for Ubuntu $SUPPORTED_RELEASES"\n    ;;\n'
               'esac\n')
    return "".join(out)


def _system_cuda(resolution: Resolution, plan: AptPlan, with_driver: bool) -> str:
    stack = resolution.stack
    repo = plan.cuda_repo
    cuda_packages = [f"{repo.libraries_package}={repo.meta_version}" if repo.meta_version else
                     repo.libraries_package,
                     f"{repo.toolkit_package}={repo.toolkit_version}" if repo.toolkit_version else
                     repo.toolkit_package]
    out = ["#!/usr/bin/env bash\n", _header(resolution)]
    out.append(_comment(f"Installs CUDA {plan.cuda} and cuDNN from NVIDIA's apt repository, holds them with "
                        f"apt-mark, then creates the Python venv with the pip plan. Run as a user with sudo; "
                        f"'--check' only verifies the OS."))
    out.append(_comment(f"CUDA packages: {repo.libraries_package} (runtime libraries, pinned to "
                        f"{repo.meta_version or 'the repository version'}) and {repo.toolkit_package} (compiler and "
                        f"tools{', pinned' if repo.toolkit_version else ', no pinned version recorded'}); "
                        f"source: {repo.source}"))
    for skipped in plan.skipped:
        out.append(_comment(f"not supported: Ubuntu {skipped}"))
    if with_driver and resolution.request.os == "wsl2":
        out.append(_comment("--with-driver ignored: under WSL2 the Windows NVIDIA driver serves CUDA; never "
                            "install a Linux driver inside WSL2."))
    out.append("set -euo pipefail\n\n")
    out.append(f"CUDA_LINE={_q(plan.cuda)}\n")
    out.append(_common_values(resolution, ", ".join(rp.release for rp in plan.releases)))
    out.append(_array("CUDA_PACKAGES", cuda_packages))
    out.append(_PRELUDE)
    out.append(_release_case(plan))
    out.append(_ARCH_CHECK)
    out.append('\nif [ "$CHECK_ONLY" = 1 ]; then\n'
               '  echo "Ubuntu $OS_VERSION: would configure $CUDA_REPO_URL and install ${CUDA_PACKAGES[*]} '
               '${CUDNN_PACKAGES[*]} $DRIVER_PACKAGE"\n  exit 0\nfi\n')
    out.append(_REPOSITORIES)
    out.append(_PYTHON)
    out.append(_driver_reminder(stack, reboot=with_driver and resolution.request.os != "wsl2"))
    return "".join(out)


def render(resolution: Resolution, kb=None, with_driver: bool | None = None) -> str:
    """The apt plan. `with_driver` defaults to `resolution.request.with_driver` (False when absent).

    Plans that cannot apply (another OS, no apt data for the CUDA line) are still scripts: they print why and
    exit 1, so `plans.apt` in the JSON output is always a runnable text.
    """
    stack = resolution.stack
    if stack is None:
        return _not_applicable(resolution, "No consistent stack was found for this request.",
                               "Run `stackresolve plan` for the explanation.")
    driver = _with_driver(resolution, with_driver)
    os_name = resolution.request.os
    if os_name not in ("linux", "wsl2"):
        instead = "Use --format powershell." if os_name == "windows" else "Use --format pip or conda."
        return _not_applicable(resolution, f"This stack targets {os_name}; the apt plan is for Ubuntu (Linux or "
                                           f"WSL2).", instead)
    if stack.cuda is None or stack.candidate.extra:
        return _pip_only(resolution, driver and os_name != "wsl2", kb)
    apt = getattr(kb, "apt", None)
    if apt is None:
        return _not_applicable(resolution, "The knowledge base has no apt data (constraints/apt.toml).",
                               "Use --format conda or dockerfile.")
    plan = plan_releases(apt, resolution, driver, kb)
    if isinstance(plan, str):
        return _not_applicable(resolution, f"No apt plan: {plan}.", "Use --format conda or dockerfile.")
    return _system_cuda(resolution, plan, driver)
