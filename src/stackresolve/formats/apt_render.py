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

import shlex

from stackresolve.formats.header import header_lines
from stackresolve.formats.script import comment, requirement_lines
from stackresolve.model.enums import Os
from stackresolve.model.stack import Resolution
from stackresolve.formats.apt_decide import AptPipOnlyPlan, AptPlan
from stackresolve.formats.pip_decide import PipPlan


# -- script text ----------------------------------------------------------------------------------------------
def _q(value: str) -> str:
    return shlex.quote(value)


def _array(name: str, values) -> str:
    return f"{name}=(" + " ".join(_q(v) for v in values) + ")\n"


def _header(resolution: Resolution) -> str:
    return "".join(comment(line) for line in header_lines(resolution, "apt"))


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

# A repository configured before April 2022 (an old cuda-repo-*.deb, or apt-key with 7fa2af80) trusts only NVIDIA's
# retired key, and `apt-get update` then fails with NO_PUBKEY A4B469963BF863CC: NVIDIA's notice has such systems add
# the current key. It goes into trusted.gpg.d, which is what a source line without signed-by uses.
trust_current_key() {
  local target="$APT_ETC/trusted.gpg.d/stackresolve-nvidia-cuda-current.gpg"
  if [ -z "$CURRENT_KEY_FILE" ] || [ -s "$target" ]; then return 0; fi
  need_download_tools
  fetch "$CUDA_REPO_URL/$CURRENT_KEY_FILE" "$WORK_DIR/current-key.pub"
  gpg --dearmor < "$WORK_DIR/current-key.pub" > "$WORK_DIR/current-key.gpg"
  as_root install -m 0644 "$WORK_DIR/current-key.gpg" "$target"
}

repo_signed_by() {
  local lines
  lines="$(grep -rhsF -- "$1" "$APT_ETC/sources.list" "$APT_ETC/sources.list.d/" || true)"
  [[ "$lines" == *"signed-by="* ]]
}

if repo_configured "$CUDA_REPO_URL" && repo_signed_by "$CUDA_REPO_URL"; then
  echo "NVIDIA CUDA repository $CUDA_REPO_URL is already configured: skipping"
elif repo_configured "$CUDA_REPO_URL"; then
  echo "NVIDIA CUDA repository $CUDA_REPO_URL is configured without signed-by: adding NVIDIA's current key"
  trust_current_key
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
      "Python $PYTHON_VERSION ($PYTHON_SOURCES) and rerun with" \
      "STACKRESOLVE_PYTHON=/path/to/python$PYTHON_VERSION, or plan again with --python for a Python this release has"
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
# PIP_INDEX_ARGS: where the framework's build is, when not on the default index (empty arrays stay empty
# under set -u this way).
"$VENV_DIR/bin/python" -m pip install --timeout 60 ${PIP_INDEX_ARGS[@]+"${PIP_INDEX_ARGS[@]}"} "${PIP_REQUIREMENTS[@]}"

echo
echo "Installed with apt:"
if [ "${#APT_INSTALLED[@]}" -gt 0 ]; then dpkg-query -W "${APT_INSTALLED[@]}"; else echo "  (nothing)"; fi
echo "Python $FOUND_PYTHON virtual environment $VENV_DIR:"
"$VENV_DIR/bin/python" -m pip show "$FRAMEWORK_PACKAGE" | grep -E '^(Name|Version):'
"""


def _driver_need(stack) -> str:
    minimum = stack.driver.minimum
    return f"driver >= {minimum}" if minimum else f"a driver that supports CUDA {stack.cuda.version}"


def _driver_reminder(stack, reboot: bool) -> str:
    text = f"This stack needs an NVIDIA {_driver_need(stack)} (nvidia-smi shows the installed one)."
    if reboot:
        text += " Reboot to load the newly installed driver."
    return f"echo {_q(text)}\n"


def _common_values(pip: PipPlan, supported: str) -> str:
    return (f"SUPPORTED_RELEASES={_q(supported)}\n"
            f"PYTHON_VERSION={_q(pip.python)}\n"
            f"PYTHON_SOURCES={_q(' | '.join(s.command for s in pip.resolution.stack.python.sources))}\n"
            f"FRAMEWORK_PACKAGE={_q(pip.resolution.stack.framework.distribution)}\n"
            + _array("PIP_INDEX_ARGS", pip.index_args)
            + _array("PIP_REQUIREMENTS", requirement_lines(pip)))


def _pip_only(plan: AptPipOnlyPlan) -> str:
    """CUDA from pip wheels, and CPU stacks: Python, a venv and the pip plan; any Ubuntu release."""
    resolution, drivers = plan.resolution, plan.drivers
    stack = resolution.stack
    out = ["#!/usr/bin/env bash\n", _header(resolution)]
    if stack.cuda:
        out.append(comment(plan.pip.cuda_note + " No system CUDA is installed."))
    else:
        out.append(comment("CPU-only stack: no CUDA or cuDNN is installed."))
    out.append("set -euo pipefail\n\n")
    supported = ", ".join(drivers) if drivers else "any release"
    out.append(_common_values(plan.pip, supported))
    out.append(_PRELUDE)
    out.append('case "$OS_VERSION" in\n')
    if drivers:
        for release, driver in drivers.items():
            out.append(f"  {_q(release)})\n    " + comment(f"driver {driver.package} (branch {driver.branch}); "
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
        out.append("    " + comment(f"Ubuntu {rp.release}: repository {rp.cuda_repo_url}/ trusted with "
                                     f"{rp.keyring.file} ({rp.keyring.method}); source: {rp.keyring.source}"))
        out.append("    " + comment(f"cuDNN {' '.join(cudnn.packages)}; source: {cudnn.source}"))
        if rp.cudnn.why:
            out.append("    " + comment(f"substitute: {rp.cudnn.why}"))
        if rp.ml_repo_url:
            out.append("    " + comment("this cuDNN build is recorded only with NVIDIA's machine-learning repository "
                                         "(no longer updated by NVIDIA); that it is signed with the current key "
                                         "is not verified by the knowledge base"))
        if rp.driver:
            unnamed = "" if rp.driver.ubuntu else " (its source names no Ubuntu release; NVIDIA's CUDA repository)"
            out.append("    " + comment(f"driver {rp.driver.package} (branch {rp.driver.branch}){unnamed}; "
                                         f"source: {rp.driver.source}"))
        values = [
            f"DISTRO={_q(rp.distro)}",
            f"CUDA_REPO_URL={_q(rp.cuda_repo_url)}",
            f"KEYRING_METHOD={_q(rp.keyring.method)}",
            f"KEYRING_FILE={_q(rp.keyring.file)}",
            f"SIGNING_KEY_FILE={_q(rp.signing_key.file if rp.signing_key else '')}",
            f"CURRENT_KEY_FILE={_q(rp.current_key.file if rp.current_key else '')}",
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


def _system_cuda(plan: AptPlan) -> str:
    resolution, with_driver = plan.resolution, plan.with_driver
    stack = resolution.stack
    repo = plan.cuda_repo
    cuda_packages = [f"{repo.libraries_package}={repo.meta_version}" if repo.meta_version else
                     repo.libraries_package,
                     f"{repo.toolkit_package}={repo.toolkit_version}" if repo.toolkit_version else
                     repo.toolkit_package]
    out = ["#!/usr/bin/env bash\n", _header(resolution)]
    out.append(comment(f"Installs CUDA {plan.cuda} and cuDNN from NVIDIA's apt repository, holds them with "
                        f"apt-mark, then creates the Python venv with the pip plan. Run as a user with sudo; "
                        f"'--check' only verifies the OS."))
    out.append(comment(f"CUDA packages: {repo.libraries_package} (runtime libraries, pinned to "
                        f"{repo.meta_version or 'the repository version'}) and {repo.toolkit_package} (compiler and "
                        f"tools{', pinned' if repo.toolkit_version else ', no pinned version recorded'}); "
                        f"source: {repo.source}"))
    for skipped in plan.skipped:
        out.append(comment(f"not supported: Ubuntu {skipped}"))
    if with_driver and resolution.request.os is Os.WSL2:
        out.append(comment("--with-driver ignored: under WSL2 the Windows NVIDIA driver serves CUDA; never "
                            "install a Linux driver inside WSL2."))
    out.append("set -euo pipefail\n\n")
    out.append(f"CUDA_LINE={_q(plan.cuda)}\n")
    out.append(_common_values(plan.pip, ", ".join(rp.release for rp in plan.releases)))
    out.append(_array("CUDA_PACKAGES", cuda_packages))
    out.append(_PRELUDE)
    out.append(_release_case(plan))
    out.append(_ARCH_CHECK)
    out.append('\nif [ "$CHECK_ONLY" = 1 ]; then\n'
               '  echo "Ubuntu $OS_VERSION: would configure $CUDA_REPO_URL and install ${CUDA_PACKAGES[*]} '
               '${CUDNN_PACKAGES[*]} $DRIVER_PACKAGE"\n  exit 0\nfi\n')
    out.append(_REPOSITORIES)
    out.append(_PYTHON)
    out.append(_driver_reminder(stack, reboot=with_driver and resolution.request.os is not Os.WSL2))
    return "".join(out)


def render(plan) -> str:
    """The apt plan as a bash script (a stack it cannot express never gets here: formats.render.FormatRefused)."""
    if isinstance(plan, AptPipOnlyPlan):
        return _pip_only(plan)
    return _system_cuda(plan)
