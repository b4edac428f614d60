"""Full locks (issue 15): the whole transitive set pinned with hashes by uv for the plan's Python and platform,
and `check` of an installed environment against one."""

from __future__ import annotations

import subprocess
from pathlib import Path

import pytest

from stackresolve.lock.check import check_full_lock, parse_full_lock
from stackresolve.model.machine import Machine, OSInfo, PackageInfo, PythonInfo
from stackresolve.lock.full import FullLock, LockUnavailable, compile_lock, cuda_wheels
from stackresolve.formats import pip_decide as pip_plan
from stackresolve.request.parse import Flags, request_from_flags
from stackresolve.request.build import InputError
from stackresolve.resolve import resolve

# What uv prints for tensorflow[and-cuda]==2.15.1 (abridged; the pins are the wheel's own Requires-Dist).
UV_OUTPUT = """absl-py==2.1.0 \\
    --hash=sha256:526a04eadab8b4ee719ce68f204172ead1027549089702d99b9059f129ff1308
    # via tensorflow
nvidia-cuda-runtime-cu12==12.2.140 \\
    --hash=sha256:0000000000000000000000000000000000000000000000000000000000000000
    # via tensorflow
nvidia-cudnn-cu12==8.9.4.25 \\
    --hash=sha256:1111111111111111111111111111111111111111111111111111111111111111
    # via tensorflow
tensorflow[and-cuda]==2.15.1 \\
    --hash=sha256:2222222222222222222222222222222222222222222222222222222222222222
"""



def pip_for(kb, **flags):
    return pip_plan.decide(resolve(kb, request_from_flags(kb, Flags(**flags), None)))


def test_uv_is_asked_for_the_plans_python_platform_and_hashes(kb, monkeypatch):
    seen = {}

    def runner(argv, **kwargs):
        seen["argv"], seen["timeout"], seen["cwd"] = argv, kwargs["timeout"], kwargs["cwd"]
        seen["input"] = (Path(kwargs["cwd"]) / argv[3]).read_text()
        out = argv[argv.index("-o") + 1]
        with open(out, "w") as handle:
            handle.write(UV_OUTPUT)
        return subprocess.CompletedProcess(argv, 0, "", "")

    monkeypatch.setenv("PATH", "/nonexistent")
    monkeypatch.setattr("stackresolve.lock.full.uv_binary", lambda env=None: "uv")
    lock = compile_lock(pip_for(kb, tf="2.15", os="linux", gpu_cc="8.6"), index="https://index.invalid/simple",
                        runner=runner)
    argv = seen["argv"]
    assert argv[argv.index("--python-version") + 1] == "3.11"
    assert argv[argv.index("--python-platform") + 1] == "x86_64-manylinux_2_28"
    assert "--generate-hashes" in argv and argv[argv.index("--index-url") + 1] == "https://index.invalid/simple"
    assert lock.cuda_wheels == {"nvidia-cuda-runtime-cu12": "12.2.140", "nvidia-cudnn-cu12": "8.9.4.25"}
    assert seen["timeout"] > 0
    # the input is named relative to the folder uv runs in: its `# via -r requirements.in` has no temporary path
    assert argv[3] == "requirements.in" and seen["input"].startswith("tensorflow[and-cuda]==2.15.1\n")


def test_a_macos_lock_resolves_for_the_plans_macos(kb, monkeypatch):
    """uv assumes macOS 13.0 for --python-platform aarch64-apple-darwin unless MACOSX_DEPLOYMENT_TARGET says
    otherwise (`uv pip compile --help`); the plan's Metal build names its own minimum (apple.toml torch_mps)."""
    seen = {}

    def runner(argv, **kwargs):
        seen["argv"], seen["env"] = argv, kwargs["env"]
        Path(argv[argv.index("-o") + 1]).write_text("torch==2.15.0\n")
        return subprocess.CompletedProcess(argv, 0, "", "")

    monkeypatch.setattr("stackresolve.lock.full.uv_binary", lambda env=None: "uv")
    monkeypatch.setenv("MACOSX_DEPLOYMENT_TARGET", "10.9")  # the user's own setting must not leak into the lock
    pip = pip_for(kb, torch="latest", gpu="Apple M2", os="macos", arch="arm64")
    macos = pip.resolution.stack.framework.macos_min
    assert macos and int(macos.split(".")[0]) >= 14
    compile_lock(pip, "pylock.toml", index="https://index.invalid/simple", runner=runner)
    assert seen["argv"][seen["argv"].index("--python-platform") + 1] == "aarch64-apple-darwin"
    assert seen["env"]["MACOSX_DEPLOYMENT_TARGET"] == macos
    compile_lock(pip_for(kb, tf="2.15", os="linux", gpu_cc="8.6"), index="https://index.invalid/simple",
                 runner=runner)
    assert "MACOSX_DEPLOYMENT_TARGET" not in seen["env"]


def test_a_lock_of_nvidias_build_names_nvidias_index_and_looks_past_the_placeholders(kb, monkeypatch):
    """nvidia-tensorflow on the default index is only placeholder 0.0.1.dev releases; NVIDIA's own index is the
    one nvidia-pyindex configures (https://pypi.ngc.nvidia.com). uv must consider every index for the name."""
    seen = {}

    def runner(argv, **kwargs):
        seen["argv"] = argv
        Path(argv[argv.index("-o") + 1]).write_text("nvidia-tensorflow==1.15.5+nv21.10\n")
        return subprocess.CompletedProcess(argv, 0, "", "")

    monkeypatch.setattr("stackresolve.lock.full.uv_binary", lambda env=None: "uv")
    pip = pip_for(kb, tf="1.15", os="linux", gpu="RTX 3090", vendor="nvidia")
    assert pip.pre_install == ()
    compile_lock(pip, index="https://index.invalid/simple", runner=runner)
    argv = seen["argv"]
    assert argv[argv.index("--extra-index-url") + 1] == "https://pypi.ngc.nvidia.com"
    assert argv[argv.index("--index-url") + 1] == "https://index.invalid/simple"
    assert argv[argv.index("--index-strategy") + 1] == "unsafe-best-match"


def test_pylock_cuda_wheels_are_read_too():
    text = '[[packages]]\nname = "nvidia-cudnn-cu12"\nversion = "9.3.0.75"\n'
    assert cuda_wheels(text) == {"nvidia-cudnn-cu12": "9.3.0.75"}


def machine_with(packages: dict[str, str]) -> Machine:
    return Machine(os=OSInfo(system="linux"), driver=None,
                   python=PythonInfo("3.11.7", "python", packages=tuple(PackageInfo(n, v) for n, v in packages.items())))


def test_check_compares_every_pinned_package():
    pins = parse_full_lock(UV_OUTPUT, "requirements.txt")
    assert pins["tensorflow"] == "2.15.1" and len(pins) == 4
    installed = {"absl-py": "2.1.0", "nvidia-cuda-runtime-cu12": "12.2.140", "nvidia-cudnn-cu12": "8.9.4.25",
                 "tensorflow": "2.15.1"}
    assert check_full_lock(pins, machine_with(installed)).matches
    wrong = check_full_lock(pins, machine_with({**installed, "nvidia-cudnn-cu12": "8.9.7.29"}))
    assert [(d.component, d.expected, d.found) for d in wrong.differences] == \
        [("nvidia-cudnn-cu12", "8.9.4.25", "8.9.7.29")]
    missing = check_full_lock(pins, machine_with({"tensorflow": "2.15.1"}))
    assert {d.component for d in missing.differences} == {"absl-py", "nvidia-cuda-runtime-cu12", "nvidia-cudnn-cu12"}


def test_a_nightly_pin_numbered_by_date_and_hour_is_read():
    """uv's full lock of TensorFlow 2.5 for Linux (`--network` run of 2026-11-27) pins keras-nightly
    2.5.0.dev2021032900, tensorflow 2.5's own requirement, whose last part has 10 digits: more than any driver or
    framework version part, and still a version; `check` read it as "pins no version" until then."""
    pins = parse_full_lock("keras-nightly==2.5.0.dev2021032900 \\\n    --hash=sha256:" + "3" * 64 + "\n"
                           "    # via tensorflow\n", "requirements.txt")
    assert pins == {"keras-nightly": "2.5.0.dev2021032900"}
    with pytest.raises(InputError, match="pins no version"):
        parse_full_lock("absl-py==1." + "9" * 4400 + "\n", "requirements.txt")


def test_a_lock_that_pins_nothing_is_bad_input():
    with pytest.raises(InputError, match="does not pin one version"):
        parse_full_lock("tensorflow>=2\n", "requirements.txt")


# (TF line, OS, Python or None for the plan's own): TF 1.x and 2.x, Linux and Windows.
NETWORK_TARGETS = [("1.13", "linux"), ("1.15", "linux"), ("1.15", "windows"), ("2.3", "windows"), ("2.5", "linux"),
                   ("2.10", "windows"), ("2.11", "linux"), ("2.13", "linux"), ("2.15", "linux"),
                   ("2.16", "windows"), ("2.18", "linux"), ("2.21", "linux")]


@pytest.mark.network
@pytest.mark.parametrize("line, os_name", NETWORK_TARGETS)
def test_locks_resolve_against_the_real_index_with_hashes(kb, line, os_name):
    from packaging.version import Version

    gpu = {"cpu": True} if os_name == "windows" and Version(line) >= Version("2.11") else {"gpu_cc": "7.5"}
    lock: FullLock = compile_lock(pip_for(kb, tf=line, os=os_name, **gpu))
    pins = parse_full_lock(lock.text, "lock")
    assert any(name.startswith("tensorflow") for name in pins)
    assert lock.text.count("--hash=sha256:") >= len(pins)
    assert "stackresolve-lock-" not in lock.text  # uv's `# via -r requirements.in`, no temporary folder
