"""PyTorch and JAX pip plans resolve with pip's own resolver for their target Python and platform.

The network tests (`pytest --network`) write each plan with the CLI and hand it to
`pip install --dry-run --ignore-installed --only-binary=:all: --python-version X.Y --platform TAG ... -r plan`,
with the machine's pip configuration left out (PIP_CONFIG_FILE=/dev/null: this machine adds local indexes and
caps torch versions) and the index pip itself would use (stackresolve.index.simple.index_url, no host named here).

pip evaluates environment markers against the interpreter that runs it, not against --platform /
--python-version (seen here, and in the JAX REPORT's "Cross-platform dry-runs": the torch macOS dry-run pulled
Linux CUDA wheels); torch's METADATA guards its CUDA wheels and triton with platform_system / platform_machine /
python_version markers, so a Windows, macOS or Python 3.13 target would be resolved with Linux-3.11 markers.
`pip_for()` therefore runs pip with its marker environment set to the target's (pip's vendored
packaging.markers.default_environment, patched in the pip process only); everything else is pip's resolver.

Only plans that install from the default index can be checked here (this machine reaches no other index).
The plans that carry PyTorch's own index are checked by their text, offline, below.

Expected versions are typed from /work/research/pytorch/REPORT.md (release table: torch, torchvision,
torchaudio; measured default wheels: the nvidia-cudnn pin) and /work/research/jax/REPORT.md (pairing rule,
routes, cuDNN floors).
"""

from __future__ import annotations

import json
import os
import subprocess
import sys

import pytest
from packaging.requirements import Requirement
from packaging.utils import canonicalize_name
from packaging.version import Version

from stackresolve.index.simple import MARKER_ENVIRONMENTS, index_url

network = pytest.mark.network

# A Linux target with glibc 2.35 (Ubuntu 22.04): every manylinux tag up to 2_35. pip does not widen a PEP 600
# tag to the older ones, and NVIDIA's wheels use several (nccl 2_18, cupti 2_25, cudnn 2_27, torch 2_28).
MANYLINUX = [f"manylinux_2_{glibc}" for glibc in range(35, 16, -1)] + ["manylinux2014", "manylinux2010",
                                                                      "manylinux1"]
PLATFORMS = {
    "linux": [f"{m}_x86_64" for m in MANYLINUX],
    "linux_aarch64": [f"{m}_aarch64" for m in MANYLINUX[:-2]],
    "windows": ["win_amd64"],
    "macos_arm64": ["macosx_14_0_arm64"],  # pip widens a macOS tag to every older macOS release
    "macos_x86_64": ["macosx_14_0_x86_64"],
}

# pip, with the marker environment of the target (first argument, JSON) instead of this interpreter's. Older pip
# (23.2 here) also checks Requires-Python against the running interpreter in `pip install` even with
# --python-version (its install command passes no py_version_info to the resolver; `pip download` does, and newer
# pip's install does too): the target's version is handed to the resolver where pip leaves it out.
PIP_WITH_MARKERS = """
import json, sys
target = json.loads(sys.argv.pop(1))
from pip._vendor.packaging import markers
here = markers.default_environment()
markers.default_environment = lambda: {**here, **target}
from pip._internal.cli.req_command import RequirementCommand
make = RequirementCommand.make_resolver.__func__
def make_resolver(cls, *args, **kwargs):
    options = kwargs.get("options")
    if kwargs.get("py_version_info") is None and getattr(options, "python_version", None):
        kwargs["py_version_info"] = options.python_version
    return make(cls, *args, **kwargs)
RequirementCommand.make_resolver = classmethod(make_resolver)
from pip._internal.cli.main import main
sys.argv[0] = "pip"
sys.exit(main())
"""
PIP_TIMEOUT = 900


def marker_env(platform: str, python: str) -> dict:
    return {**MARKER_ENVIRONMENTS[platform], "python_version": python, "python_full_version": f"{python}.0",
            "implementation_name": "cpython", "platform_python_implementation": "CPython"}


def pip_for(platform: str, python: str, *args):
    env = {**os.environ, "PIP_CONFIG_FILE": os.devnull, "PIP_DISABLE_PIP_VERSION_CHECK": "1"}
    for key in ("PIP_CONSTRAINT", "PIP_FIND_LINKS", "PIP_EXTRA_INDEX_URL", "PIP_INDEX_URL"):
        env.pop(key, None)  # this machine's local wheel folders and caps are not the target's
    return subprocess.run([sys.executable, "-c", PIP_WITH_MARKERS, json.dumps(marker_env(platform, python)),
                           *args, "--index-url", index_url()],
                          env=env, capture_output=True, text=True, timeout=PIP_TIMEOUT)


def recommended_python(text: str) -> str:
    """The Python a pip plan says to make the venv with ("# Python 3.12 (wheels exist for ...")."""
    line = next(line for line in text.splitlines() if line.startswith("# Python "))
    return line.split()[2]


def plan_file(tmp_path, *flags) -> str:
    out = tmp_path / "requirements.txt"
    made = subprocess.run([sys.executable, "-m", "stackresolve", "plan", "--no-detect", *flags, "--format", "pip",
                           "-o", str(out)], capture_output=True, text=True, timeout=120)
    assert made.returncode == 0, made.stdout[-2000:] + made.stderr[-2000:]
    return out.read_text()


def requirement_lines(text: str) -> list[str]:
    return [line for line in text.splitlines() if line and not line.startswith(("#", "-"))]


def option_lines(text: str) -> list[str]:
    return [line for line in text.splitlines() if line.startswith("-")]


def dry_run(tmp_path, text: str, platform: str, python: str) -> dict:
    """What pip would install for the plan on the target: {name: Version}."""
    requirements = tmp_path / "plan.txt"
    requirements.write_text(text)
    report = tmp_path / "report.json"
    platforms = [arg for tag in PLATFORMS[platform] for arg in ("--platform", tag)]
    result = pip_for(platform, python, "install", "--dry-run", "--ignore-installed", "--only-binary=:all:",
                     "--no-cache-dir", "--python-version", python, *platforms, "--target", str(tmp_path / "t"),
                     "--report", str(report), "-r", str(requirements))
    assert result.returncode == 0, f"{platform} / Python {python}:\n{result.stderr[-4000:]}"
    installed = {canonicalize_name(item["metadata"]["name"]): Version(item["metadata"]["version"])
                 for item in json.loads(report.read_text())["install"]}
    shown = sorted(f"{n}=={v}" for n, v in installed.items() if n.startswith(("torch", "jax", "nvidia-cudnn",
                                                                              "cuda-toolkit", "nvidia-cuda-runtime")))
    print(f"pip would install ({platform}, Python {python}): {', '.join(shown)}")
    for line in requirement_lines(text):  # every pin of the plan is what pip installs
        requirement = Requirement(line)
        name = canonicalize_name(requirement.name)
        assert name in installed, f"{line}: in the plan, but pip would not install it"
        assert requirement.specifier.contains(installed[name], prereleases=True), (line, str(installed[name]))
    return installed


def cudnn_of(installed: dict) -> Version | None:
    found = [v for name, v in installed.items() if name.startswith("nvidia-cudnn-cu")]
    assert len(found) <= 1, found
    return found[0] if found else None


def platform_flags(platform: str) -> list[str]:
    return {"linux": ["--os", "linux"], "linux_aarch64": ["--os", "linux", "--arch", "aarch64"],
            "windows": ["--os", "windows"], "macos_arm64": ["--os", "macos", "--arch", "arm64"],
            "macos_x86_64": ["--os", "macos", "--arch", "x86_64"]}[platform]


def framework_plan(tmp_path, flag: str, version: str, platform: str, python: str | None,
                   gpu: str | None) -> tuple[str, str]:
    """The pip plan for a PyTorch or JAX target (a GPU by name, or --cpu), and the Python it is for."""
    flags = [flag, version, *platform_flags(platform)] + (["--python", python] if python else [])
    flags += ["--gpu", gpu] if gpu else ["--cpu"]
    text = plan_file(tmp_path, *flags)
    return text, python or recommended_python(text)


# ---------------------------------------------------------------------------------------------- PyTorch
# (torch, platform, python, gpu or None for --cpu, torch installed, torchvision, torchaudio, nvidia-cudnn or None).
# torch/torchvision/torchaudio: PyTorch REPORT release table; cuDNN: "Measured default-index wheels (Linux)".
# 1.12 on Linux is the cu102 default wheel: cuDNN linked statically, no nvidia-* wheel (REPORT notes).
TORCH_TARGETS = [
    ("1.12", "linux", "3.10", "GTX 1080", "1.12.1", "0.13.1", "0.12.1", None),
    ("1.13", "linux", "3.10", "RTX 3090", "1.13.1", "0.14.1", "0.13.1", "8.5.0.96"),
    ("2.0", "linux", "3.11", "RTX 3090", "2.0.1", "0.15.2", "2.0.2", "8.5.0.96"),
    ("2.1", "linux", "3.11", "RTX 3090", "2.1.2", "0.16.2", "2.1.2", "8.9.2.26"),
    ("2.4", "linux", "3.12", "RTX 3090", "2.4.1", "0.19.1", "2.4.1", "9.1.0.70"),
    ("2.5", "linux", "3.12", "RTX 3090", "2.5.1", "0.20.1", "2.5.1", "9.1.0.70"),
    ("2.7", "linux", "3.13", "GTX 1080", "2.7.1", "0.22.1", "2.7.1", "9.5.1.17"),
    ("2.8", "linux", "3.12", "RTX 5090", "2.8.0", "0.23.0", "2.8.0", "9.10.2.21"),
    ("2.11", "linux", "3.12", "RTX 3090", "2.11.0", "0.26.0", "2.11.0", "9.19.0.56"),
    ("latest", "linux", "3.13", "RTX 4090", "2.15.0", "0.29.2", None, "9.26.0.51"),
    ("2.11", "linux_aarch64", "3.12", "GH200", "2.11.0", "0.26.0", "2.11.0", "9.19.0.56"),
    ("2.5", "macos_arm64", "3.12", "Apple M2", "2.5.1", "0.20.1", "2.5.1", None),
    ("2.2", "macos_x86_64", "3.11", None, "2.2.2", "0.17.2", "2.2.2", None),
    ("2.5", "windows", "3.12", None, "2.5.1", "0.20.1", "2.5.1", None),
    ("2.8", "windows", "3.13", None, "2.8.0", "0.23.0", "2.8.0", None),
    # No --python: the plan's own recommended Python. torch 1.13.1 has cp311 Linux wheels, torchvision 0.14.1 and
    # torchaudio 0.13.1 stop at cp310; torch 2.5.1 has cp313, torchvision 0.20.1 / torchaudio 2.5.1 stop at cp312
    # (package index /simple/torchvision/ and /simple/torchaudio/ file lists).
    ("1.13", "linux", None, "RTX 3090", "1.13.1", "0.14.1", "0.13.1", "8.5.0.96"),
    ("2.5", "linux", None, "RTX 3090", "2.5.1", "0.20.1", "2.5.1", "9.1.0.70"),
    ("2.7", "linux", None, "RTX 3090", "2.7.1", "0.22.1", "2.7.1", "9.5.1.17"),
]


@network
@pytest.mark.parametrize("torch, platform, python, gpu, version, vision, audio, cudnn", TORCH_TARGETS)
def test_torch_plan_resolves_with_pip(tmp_path, torch, platform, python, gpu, version, vision, audio, cudnn):
    text, python = framework_plan(tmp_path, "--torch", torch, platform, python, gpu)
    assert not option_lines(text), "a default-index plan carries no index option"
    installed = dry_run(tmp_path, text, platform, python)
    assert installed["torch"] == Version(version)
    assert installed["torchvision"] == Version(vision)
    if audio:
        assert installed["torchaudio"] == Version(audio)
    assert cudnn_of(installed) == (Version(cudnn) if cudnn else None)


# ---------------------------------------------------------------------------------------------- JAX
# (jax, platform, python, gpu or None for --cpu, jax installed, jaxlib installed, extra, cuDNN floor or None).
# Routes: JAX REPORT route table (0.8+: jax[cuda13], jax[cuda12] below SM 7.5; 0.4.30-0.7.x: jax[cuda12]);
# cuDNN floors: 9.1 for 0.4.31 (CHANGELOG "minimum CuDNN version is v9.1"; 0.4.30 docs say 9.0), 9.8 from 0.6.0.
# jaxlib: the pairing rule (0.4.37 is a jax-only release: jaxlib 0.4.36; jax < 0.4.30 does not depend on jaxlib).
JAX_TARGETS = [
    ("latest", "linux", "3.13", "RTX 3090", "0.12.0.1", "0.12.0.1", "cuda13", "9.8"),
    ("latest", "linux", "3.12", "GTX 1080", "0.12.0.1", "0.12.0.1", "cuda12", "9.8"),
    ("0.6", "linux", "3.12", "RTX 3090", "0.6.2", "0.6.2", "cuda12", "9.8"),
    ("0.4.30", "linux", "3.11", "RTX 3090", "0.4.30", "0.4.30", "cuda12", "9.0"),
    ("latest", "linux_aarch64", "3.13", "GH200", "0.12.0.1", "0.12.0.1", "cuda13", "9.8"),
    ("latest", "linux", "3.12", None, "0.12.0.1", "0.12.0.1", None, None),
    ("0.4.25", "linux", "3.11", None, "0.4.25", "0.4.25", None, None),
    ("0.4.37", "linux", "3.12", None, "0.4.37", "0.4.36", None, None),
    ("latest", "windows", "3.12", None, "0.12.0.1", "0.12.0.1", None, None),
    ("latest", "macos_arm64", "3.12", "Apple M2", "0.12.0.1", "0.12.0.1", None, None),
]


@network
@pytest.mark.parametrize("jax, platform, python, gpu, version, jaxlib, extra, cudnn_floor", JAX_TARGETS)
def test_jax_plan_resolves_with_pip(tmp_path, jax, platform, python, gpu, version, jaxlib, extra, cudnn_floor):
    text, python = framework_plan(tmp_path, "--jax", jax, platform, python, gpu)
    assert not option_lines(text)
    lines = requirement_lines(text)
    assert lines[0] == (f"jax[{extra}]=={version}" if extra else f"jax=={version}")
    installed = dry_run(tmp_path, text, platform, python)
    assert installed["jax"] == Version(version) and installed["jaxlib"] == Version(jaxlib)
    cudnn = cudnn_of(installed)
    if extra:
        assert f"jax-{extra}-plugin" in installed
        assert installed[f"jax-{extra}-plugin"] == Version(version)
        assert cudnn is not None and cudnn >= Version(cudnn_floor) and cudnn.major == 9
        assert f"nvidia-cudnn-cu{extra.removeprefix('cuda')}" in installed
    else:
        assert cudnn is None and not any(name.startswith("jax-cuda") for name in installed)


# ---------------------------------------------------------------------------------------------- PyTorch's index
# Offline: these plans install from PyTorch's own index, which this machine cannot reach. Their text is checked
# against the sources; the index and local versions are those of pytorch.github.io previous-versions.md.

def plan_text(*flags) -> str:
    from click.testing import CliRunner

    from stackresolve.cli import app

    result = CliRunner().invoke(app, ["plan", "--no-detect", *flags, "--format", "pip"])
    assert result.exit_code == 0, result.output
    return result.stdout


def index_option(text: str) -> tuple[str, str]:
    (line,) = option_lines(text)
    option, url = line.split()
    return option, url


def test_torch_2_7_on_an_rtx_5090_plan_text():
    """Relies on the file list of PyTorch's index `whl/cu128` holding torch 2.7.1 and its companions for
    Linux x86_64 / Python 3.9-3.13 (pytorch.toml [[variant]] 2.7 cu128 linux: RELEASE.md support matrix,
    pytorch/pytorch#146265 and #147607); torchvision 0.22.1 / torchaudio 2.7.1 pin torch 2.7.1 (REPORT table)."""
    text = plan_text("--torch", "2.7", "--os", "linux", "--gpu", "RTX 5090")
    option, url = index_option(text)
    assert option == "--index-url" and url.endswith("/whl/cu128")
    assert requirement_lines(text) == ["torch==2.7.1", "torchvision==0.22.1", "torchaudio==2.7.1"]


def test_torch_2_14_on_a_gtx_1080_plan_text():
    """Relies on `whl/cu126` holding torch 2.14.1 for Linux x86_64 (pytorch.toml [[variant]] 2.8-2.14 cu126
    linux: .ci/manywheel/build_cuda.sh of the release cycle, 12.6: 5.0;6.0;7.0;...). torchvision 0.29.1 pins
    torch 2.14.1; no torchaudio after 2.11 (REPORT)."""
    text = plan_text("--torch", "2.14", "--os", "linux", "--gpu", "GTX 1080")
    option, url = index_option(text)
    assert option == "--index-url" and url.endswith("/whl/cu126")
    assert requirement_lines(text) == ["torch==2.14.1", "torchvision==0.29.1"]


def test_torch_1_12_on_an_rtx_3090_plan_text():
    """Relies on `whl/cu116` (or `whl/cu113`) holding torch 1.12.1+cu11x and torchvision 0.13.1+cu11x
    (previous-versions.md v1.12.1: `pip install torch==1.12.1+cu116 ... --extra-index-url .../whl/cu116`;
    pytorch.toml [[variant]] 1.12 cu113/cu116 linux: pytorch/builder release/1.12 build_cuda.sh)."""
    text = plan_text("--torch", "1.12", "--os", "linux", "--gpu", "RTX 3090")
    option, url = index_option(text)
    variant = url.rstrip("/").rsplit("/", 1)[1]
    assert option == "--extra-index-url" and variant in ("cu113", "cu116")
    lines = requirement_lines(text)
    assert lines[:2] == [f"torch==1.12.1+{variant}", f"torchvision==0.13.1+{variant}"]
    assert Requirement(lines[2]).name == "torchaudio" and Requirement(lines[2]).specifier.contains("0.12.1")


def test_torch_1_8_on_an_rtx_3090_plan_text():
    """Relies on the find-links page `whl/torch_stable.html` listing torch 1.8.1+cu111 and torchvision
    0.9.1+cu111 (previous-versions.md v1.8.1: `pip install torch==1.8.1+cu111 ... -f .../torch_stable.html`)."""
    text = plan_text("--torch", "1.8", "--os", "linux", "--gpu", "RTX 3090")
    option, url = index_option(text)
    assert option == "--find-links" and url.endswith("/whl/torch_stable.html")
    assert requirement_lines(text)[:2] == ["torch==1.8.1+cu111", "torchvision==0.9.1+cu111"]


def test_torch_2_5_on_windows_with_a_gpu_plan_text():
    """Relies on `whl/cu124` holding torch 2.5.1 win_amd64 (pytorch.toml [[variant]] 2.4-2.6 cu124 windows:
    pytorch/builder windows/cuda124.bat on release/2.4 and release/2.5); the default index's Windows wheel is CPU
    only (REPORT). cu118/cu121 would fit the RTX 3090 too; the plan takes the newest CUDA."""
    text = plan_text("--torch", "2.5", "--os", "windows", "--gpu", "RTX 3090")
    option, url = index_option(text)
    assert option == "--index-url" and url.rstrip("/").rsplit("/", 1)[1] in ("cu118", "cu121", "cu124")
    assert requirement_lines(text) == ["torch==2.5.1", "torchvision==0.20.1", "torchaudio==2.5.1"]
    assert ".venv\\Scripts\\python" in text


def test_torch_2_5_linux_cpu_plan_text():
    """Relies on `whl/cpu` holding torch 2.5.1 for Linux x86_64 (pytorch.org Get Started, Linux, pip, CPU):
    the default index's Linux x86_64 wheel is the cu124 build (REPORT)."""
    text = plan_text("--torch", "2.5", "--os", "linux", "--cpu")
    option, url = index_option(text)
    assert option == "--index-url" and url.endswith("/whl/cpu")
    assert requirement_lines(text) == ["torch==2.5.1", "torchvision==0.20.1", "torchaudio==2.5.1"]
