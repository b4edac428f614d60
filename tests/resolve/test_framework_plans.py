"""PyTorch, JAX and Apple Silicon plans against the primary sources.

Every expected value below is typed from a source, not from this program's output:
- PyTorch: /work/research/pytorch/REPORT.md ("the PyTorch REPORT"), whose tables come from measured wheels on the
  package index (torch/version.py, the CUDA fatbins of libtorch_cuda.so, METADATA), PyTorch's RELEASE.md / RFCs /
  build scripts for the variants on PyTorch's own index, and pytorch.github.io previous-versions.md for how each era
  is installed (-f torch_stable.html with +cuXXX up to 1.10, --extra-index-url 1.11-1.13, --index-url from 2.0).
- JAX: /work/research/jax/REPORT.md ("the JAX REPORT"): jax-ml/jax docs/installation.md and CHANGELOG.md at the
  release tags, the wheels' METADATA, the plugin wheels' measured fatbins.
- Apple: the same JAX REPORT, part B: tensorflow-metal's pairing table (its METADATA), Apple's Metal pages, the
  measured MPS code in torch's macOS wheels, jax-metal's METADATA table.
- NVIDIA driver floors: CUDA release notes Table 2 (minor-version compatibility: 11.x >= 450.80.02 / 452.39,
  12.x >= 525.60.13 / 528.33, 13.x >= 580) and Table 3 (10.2 >= 440.33 / 441.22).
Where the program disagrees with a source, the test keeps the source's value and is marked xfail(strict=True) with
the disagreement; the code is what is to be fixed.
"""

import json

import pytest
from click.testing import CliRunner
from packaging.version import Version

from stackresolve.cli import app
from stackresolve.resolve import resolve
from stackresolve.request.parse import Flags, request_from_flags
from stackresolve.request.build import InputError



def plan(kb, **flags):
    return resolve(kb, request_from_flags(kb, Flags(**flags), None))


def stack_of(kb, **flags):
    resolution = plan(kb, **flags)
    assert resolution.stack is not None, [f.message for f in resolution.findings if f.severity == "error"]
    return resolution.stack


def on_pytorch_index(fw, variant):
    """The build comes from PyTorch's own index for this variant (host left out on purpose)."""
    return fw.index_url is not None and fw.index_url.rstrip("/").endswith(f"/whl/{variant}")


def run_cli(*args):
    return CliRunner().invoke(app, list(args))


def error_line(result) -> str:
    lines = [line for line in result.stderr.splitlines() if line.strip()]
    assert len(lines) == 1, f"expected one line on stderr, got: {result.stderr!r}"
    assert "Traceback" not in result.output
    return lines[0]


def major(version: str) -> int:
    return Version(version).release[0]


# ============================================================================ PyTorch: default variants
# PyTorch REPORT, "Default variant that `pip install torch` gets from the package index" (measured from
# torch/version.py in every release's wheels) and the per-release table.
DEFAULT_LINUX = [
    ("1.8", "1.8.1", "cu102"), ("1.10", "1.10.2", "cu102"), ("1.12", "1.12.1", "cu102"),
    ("1.13", "1.13.1", "cu117"), ("2.0", "2.0.1", "cu117"),
    ("2.1", "2.1.2", "cu121"), ("2.4", "2.4.1", "cu121"),
    ("2.5", "2.5.1", "cu124"), ("2.6", "2.6.0", "cu124"),
    ("2.7", "2.7.1", "cu126"),
    ("2.8", "2.8.0", "cu128"), ("2.10", "2.10.0", "cu128"),
    ("2.11", "2.11.0", "cu130"), ("2.14", "2.14.1", "cu130"),
    ("2.15", "2.15.0", "cu132"),
]


@pytest.mark.parametrize("line, version, variant", DEFAULT_LINUX)
def test_linux_plan_for_any_gpu_is_the_default_index_wheel(kb, line, version, variant):
    # No GPU named: any GPU the build supports. The default-index wheel is what `pip install torch` installs.
    stack = stack_of(kb, torch=line, os="linux")
    fw = stack.framework
    assert (fw.distribution, fw.version, fw.variant) == ("torch", version, variant)
    assert fw.index_url is None, "the default variant installs from the default index"
    assert fw.requirement == f"torch=={version}"


# PyTorch REPORT, "Measured default-index wheels (Linux)": the cuDNN the default wheel pins.
DEFAULT_CUDNN = [("1.13", "8.5.0.96"), ("2.1", "8.9.2.26"), ("2.4", "9.1.0.70"), ("2.5", "9.1.0.70"),
                 ("2.7", "9.5.1.17"), ("2.8", "9.10.2.21"), ("2.11", "9.19.0.56"), ("2.14", "9.24.0.43"),
                 ("2.15", "9.26.0.51")]


@pytest.mark.parametrize("line, cudnn", DEFAULT_CUDNN)
def test_default_wheel_brings_its_pinned_cudnn(kb, line, cudnn):
    stack = stack_of(kb, torch=line, os="linux", gpu="RTX 3090")
    assert stack.cudnn is not None
    assert stack.cudnn.full_version == cudnn


@pytest.mark.parametrize("line", ["1.8", "1.12", "2.0", "2.5", "2.8", "2.14", "2.15"])
def test_windows_default_index_is_cpu_only(kb, line):
    # PyTorch REPORT: "Windows: the default-index wheel is CPU-only in every release 1.8-2.15".
    stack = stack_of(kb, torch=line, os="windows", cpu=True)
    fw = stack.framework
    assert fw.variant == "cpu" and fw.index_url is None and stack.cuda is None


@pytest.mark.parametrize("line, allowed", [
    ("2.0", {"cu117", "cu118"}), ("2.5", {"cu118", "cu121", "cu124"}), ("2.8", {"cu126", "cu128", "cu129"}),
])
def test_windows_gpu_plan_uses_pytorchs_index(kb, line, allowed):
    # PyTorch REPORT: native Windows CUDA builds exist for every line, only on PyTorch's index
    # (`--index-url .../whl/cuXXX` from 2.0); the RTX 3090 (8.6) is in every Windows cu11x/cu12x list.
    stack = stack_of(kb, torch=line, os="windows", gpu="RTX 3090")
    fw = stack.framework
    assert fw.variant in allowed
    assert on_pytorch_index(fw, fw.variant) and fw.index_option == "--index-url"
    assert stack.cuda is not None


def test_windows_gpu_plan_of_the_extra_index_era(kb):
    # previous-versions.md: 1.11-1.13 install with --extra-index-url .../whl/cuXXX and a +cuXXX local version.
    # Windows 1.12 variants: cu113, cu116 (REPORT release table).
    fw = stack_of(kb, torch="1.12", os="windows", gpu="RTX 3090").framework
    assert fw.variant in ("cu113", "cu116")
    assert fw.index_option == "--extra-index-url" and on_pytorch_index(fw, fw.variant)
    assert fw.requirement == f"torch==1.12.1+{fw.variant}"


def test_linux_cpu_plan_uses_pytorchs_cpu_index(kb):
    # The Linux x86_64 default wheel carries CUDA (REPORT); the CPU-only build is PyTorch's `/whl/cpu`
    # (pytorch.org Get Started, Linux, CPU).
    stack = stack_of(kb, torch="2.5", os="linux", cpu=True)
    assert stack.framework.variant == "cpu" and stack.cuda is None
    assert on_pytorch_index(stack.framework, "cpu")


def test_macos_x86_64_wheels_end_with_2_2(kb):
    # PyTorch REPORT notes: "macOS x86_64 wheels end with 2.2.2".
    stack = stack_of(kb, torch="2.2", os="macos", arch="x86_64", cpu=True)
    assert stack.framework.version == "2.2.2" and stack.cuda is None
    assert plan(kb, torch="2.3", os="macos", arch="x86_64", cpu=True).stack is None


def test_macos_plans_are_cpu_or_mps_never_cuda(kb):
    # PyTorch REPORT release table: macOS default variant "cpu" for every release; MPS from 1.12 (JAX REPORT B).
    stack = stack_of(kb, torch="2.5", os="macos", arch="arm64")
    assert stack.cuda is None and stack.framework.index_url is None
    assert stack.gpu.support.value in ("metal", "cpu-only")


def test_linux_aarch64_default_carries_cuda_from_2_11(kb):
    # PyTorch REPORT: aarch64 default wheel is cpu up to 2.10 and cu130 from 2.11 (SASS 8.0 9.0 10.0 11.0 12.0).
    stack = stack_of(kb, torch="2.11", os="linux", arch="aarch64", gpu="GH200")
    assert stack.framework.variant == "cu130" and stack.framework.index_url is None


# ============================================================================ PyTorch: architectures
# PyTorch REPORT, "Architecture drop points" and the two arch tables.
class TestBlackwellSm120:
    """RTX 5090 (12.0): first 2.7.0 cu128 on PyTorch's index, 2.8.0 on the default index; nothing <= 2.6."""

    def test_2_7_is_cu128_from_pytorchs_index(self, kb):
        stack = stack_of(kb, torch="2.7", os="linux", gpu="RTX 5090")
        fw = stack.framework
        assert (fw.version, fw.variant) == ("2.7.1", "cu128")
        assert on_pytorch_index(fw, "cu128") and fw.index_option == "--index-url"
        assert stack.gpu.support.value == "native"

    def test_2_8_is_the_default_wheel(self, kb):
        stack = stack_of(kb, torch="2.8", os="linux", gpu="RTX 5090")
        fw = stack.framework
        assert (fw.version, fw.variant, fw.index_url) == ("2.8.0", "cu128", None)
        assert stack.gpu.support.value == "native"

    @pytest.mark.parametrize("line", ["1.13", "2.0", "2.4", "2.5", "2.6"])
    def test_nothing_up_to_2_6(self, kb, line):
        # No default-index wheel carries PTX, and no variant of <= 2.6 has 12.0 SASS (cu124/cu126 end at 9.0).
        assert plan(kb, torch=line, os="linux", gpu="RTX 5090").stack is None

    def test_a_range_below_2_7_has_no_answer_but_latest_does(self, kb):
        assert plan(kb, torch="<2.7", os="linux", gpu="RTX 5090").stack is None
        assert stack_of(kb, torch="latest", os="linux", gpu="RTX 5090").framework.index_url is None

    def test_windows_2_7_cu128(self, kb):
        # REPORT "Other variants": 2.7-2.11 cu128 windows 7.5 ... 12.0 (build scripts).
        fw = stack_of(kb, torch="2.7", os="windows", gpu="RTX 5090").framework
        assert fw.variant == "cu128" and on_pytorch_index(fw, "cu128")


class TestKeplerSm37:
    """K80 (3.7): default index through 2.0.1 (cu117); cu118 on PyTorch's index through 2.7; nothing from 2.8."""

    @pytest.mark.parametrize("line, version, variant", [("1.12", "1.12.1", "cu102"), ("1.13", "1.13.1", "cu117"),
                                                        ("2.0", "2.0.1", "cu117")])
    def test_default_wheels_through_2_0(self, kb, line, version, variant):
        stack = stack_of(kb, torch=line, os="linux", gpu="K80")
        fw = stack.framework
        assert (fw.version, fw.variant, fw.index_url) == (version, variant, None)
        assert stack.gpu.support.value == "native"

    def test_last_default_index_release_is_2_0_1(self, kb):
        fw = stack_of(kb, torch="<2.1", os="linux", gpu="K80").framework
        assert (fw.version, fw.index_url) == ("2.0.1", None)

    @pytest.mark.parametrize("line, version", [("2.1", "2.1.2"), ("2.4", "2.4.1"), ("2.6", "2.6.0"),
                                               ("2.7", "2.7.1")])
    def test_cu118_from_pytorchs_index_through_2_7(self, kb, line, version):
        fw = stack_of(kb, torch=line, os="linux", gpu="K80").framework
        assert (fw.version, fw.variant) == (version, "cu118")
        assert on_pytorch_index(fw, "cu118") and fw.index_option == "--index-url"

    @pytest.mark.parametrize("line", ["2.8", "2.10", "2.11", "2.15"])
    def test_nothing_from_2_8(self, kb, line):
        assert plan(kb, torch=line, os="linux", gpu="K80").stack is None

    def test_latest_for_a_k80_is_2_7_cu118(self, kb):
        fw = stack_of(kb, torch="latest", os="linux", gpu="K80").framework
        assert (fw.version, fw.variant) == ("2.7.1", "cu118")


class TestPascalSm61:
    """GTX 1080 (6.1): default Linux wheel through 2.7.1; cu126 on PyTorch's index 2.8-2.14."""

    def test_2_7_default_wheel(self, kb):
        fw = stack_of(kb, torch="2.7", os="linux", gpu="GTX 1080").framework
        assert (fw.version, fw.variant, fw.index_url) == ("2.7.1", "cu126", None)

    @pytest.mark.parametrize("line, version", [("2.8", "2.8.0"), ("2.10", "2.10.0"), ("2.11", "2.11.0"),
                                               ("2.14", "2.14.1")])
    def test_cu126_from_pytorchs_index_2_8_to_2_14(self, kb, line, version):
        stack = stack_of(kb, torch=line, os="linux", gpu="GTX 1080")
        fw = stack.framework
        assert (fw.version, fw.variant) == (version, "cu126")
        assert on_pytorch_index(fw, "cu126")
        assert stack.gpu.support.value == "native"  # sm_60 SASS runs on 6.1

    def test_2_15_has_no_build(self, kb):
        # 2.15 variants: cu130, cu132 (cu126 removed, RFC pytorch/pytorch#190385); none has 6.x.
        assert plan(kb, torch="2.15", os="linux", gpu="GTX 1080").stack is None

    def test_windows_cu126_keeps_pascal(self, kb):
        # REPORT: 2.6-2.14 cu126 windows 5.0 6.0 6.1 7.0 ...
        fw = stack_of(kb, torch="2.10", os="windows", gpu="GTX 1080").framework
        assert fw.variant == "cu126" and on_pytorch_index(fw, "cu126")

    def test_maxwell_follows_pascal(self, kb):
        # Maxwell 5.0/5.2: default through 2.7.1, cu126 through 2.14.
        assert stack_of(kb, torch="2.7", os="linux", gpu="GTX 980").framework.index_url is None
        fw = stack_of(kb, torch="2.9", os="linux", gpu="GTX 980").framework
        assert fw.variant == "cu126" and on_pytorch_index(fw, "cu126")


class TestVoltaSm70:
    """V100 (7.0): default index through 2.10.0 (cu128 re-added 7.0 in 2.8); from 2.11 only cu126."""

    def test_2_10_default(self, kb):
        fw = stack_of(kb, torch="2.10", os="linux", gpu="V100").framework
        assert (fw.version, fw.variant, fw.index_url) == ("2.10.0", "cu128", None)

    @pytest.mark.parametrize("line", ["2.11", "2.14"])
    def test_gone_from_default_at_2_11(self, kb, line):
        fw = stack_of(kb, torch=line, os="linux", gpu="V100").framework
        assert fw.variant == "cu126" and on_pytorch_index(fw, "cu126")


# torchvision and torchaudio are in every PyTorch plan, so the plan's Python must have their wheels too. Package
# index file lists (/simple/torchvision/, /simple/torchaudio/, PEP 691 JSON, read when this test was written):
# torchvision 0.14.1 and torchaudio 0.13.1 have cp37-cp310 wheels (torch 1.13.1: cp37-cp311); torchvision 0.20.1
# and torchaudio 2.5.1 have cp39-cp312 (torch 2.5.1: cp39-cp313); torchvision 0.22.1 / torchaudio 2.7.1 have
# cp39-cp313 like torch 2.7.1.
@pytest.mark.parametrize("line, newest", [
    pytest.param("1.13", "3.10"),
    pytest.param("2.5", "3.12"),
    ("2.7", "3.13"),
])
def test_the_recommended_python_has_wheels_of_every_pinned_package(kb, line, newest):
    stack = stack_of(kb, torch=line, os="linux", gpu="RTX 3090")
    assert stack.python.recommended == newest
    assert stack.python.max == newest


class TestAmpereSm86:
    """RTX 3090 (8.6): not in the 1.8-1.12 default (cu102: SASS 3.7 5.0 6.0 7.0, no PTX); first default 1.13."""

    def test_1_12_is_a_cu11x_build_from_pytorchs_index(self, kb):
        stack = stack_of(kb, torch="1.12", os="linux", gpu="RTX 3090")
        fw = stack.framework
        assert fw.variant in ("cu113", "cu116")
        assert fw.index_option == "--extra-index-url" and on_pytorch_index(fw, fw.variant)
        assert fw.requirement == f"torch==1.12.1+{fw.variant}"
        assert stack.gpu.support.value == "native"

    def test_1_8_is_cu111_from_the_find_links_page(self, kb):
        fw = stack_of(kb, torch="1.8", os="linux", gpu="RTX 3090").framework
        assert fw.variant == "cu111" and fw.index_option == "--find-links"
        assert fw.index_url.endswith("/whl/torch_stable.html")
        assert fw.requirement == "torch==1.8.1+cu111"

    def test_companions_carry_the_same_local_version(self, kb):
        # torchvision 0.13.1 goes with torch 1.12.1 (REPORT release table); from PyTorch's index with the variant.
        fw = stack_of(kb, torch="1.12", os="linux", gpu="RTX 3090").framework
        assert f"torchvision==0.13.1+{fw.variant}" in fw.companions

    def test_1_13_is_the_default_wheel(self, kb):
        fw = stack_of(kb, torch="1.13", os="linux", gpu="RTX 3090").framework
        assert (fw.version, fw.variant, fw.index_url) == ("1.13.1", "cu117", None)


# ============================================================================ PyTorch: matrix
# Expected rows, line by line, from the REPORT's drop-point table and the default-variant table. None: no build.
# A set: any of these variants fits the sources (both on PyTorch's index). "default": the default-index variant.
LINES = ["1.8", "1.9", "1.10", "1.11", "1.12", "1.13", "2.0", "2.1", "2.2", "2.3", "2.4", "2.5", "2.6", "2.7",
         "2.8", "2.9", "2.10", "2.11", "2.12", "2.13", "2.14", "2.15"]
DEFAULT_OF_LINE = {"1.8": "cu102", "1.9": "cu102", "1.10": "cu102", "1.11": "cu102", "1.12": "cu102",
                   "1.13": "cu117", "2.0": "cu117", "2.1": "cu121", "2.2": "cu121", "2.3": "cu121", "2.4": "cu121",
                   "2.5": "cu124", "2.6": "cu124", "2.7": "cu126", "2.8": "cu128", "2.9": "cu128", "2.10": "cu128",
                   "2.11": "cu130", "2.12": "cu130", "2.13": "cu130", "2.14": "cu130", "2.15": "cu132"}


def expected_matrix(gpu):
    out = {}
    for line in LINES:
        v = Version(line)
        if gpu == "K80":
            out[line] = "default" if v <= Version("2.0") else {"cu118"} if v <= Version("2.7") else None
        elif gpu == "GTX 1080":
            out[line] = "default" if v <= Version("2.7") else {"cu126"} if v <= Version("2.14") else None
        elif gpu == "RTX 3090":
            if v <= Version("1.9"):
                out[line] = {"cu111"}
            elif v == Version("1.10"):
                out[line] = {"cu111", "cu113"}
            elif v == Version("1.11"):
                out[line] = {"cu113"}
            elif v == Version("1.12"):
                out[line] = {"cu113", "cu116"}
            else:
                out[line] = "default"
        elif gpu == "RTX 5090":
            out[line] = None if v <= Version("2.6") else {"cu128"} if v == Version("2.7") else "default"
    return out


@pytest.mark.parametrize("gpu", ["K80", "GTX 1080", "RTX 3090", "RTX 5090"])
def test_matrix_rows_follow_the_drop_points(gpu):
    result = run_cli("matrix", "--torch", "--gpu", gpu, "--os", "linux", "--format", "json")
    assert result.exit_code == 0, result.output
    doc = json.loads(result.stdout)
    rows = {row["line"]: row for row in doc["rows"] if row["os"] == "linux"}
    assert set(LINES) <= set(rows), sorted(rows)
    wrong = []
    for line, want in expected_matrix(gpu).items():
        row = rows[line]
        if want is None:
            ok = row["status"] == "impossible"
        elif want == "default":
            ok = row["status"] == "native" and row["variant"] == DEFAULT_OF_LINE[line] and row["index"] is None
        else:
            ok = row["status"] == "native" and row["variant"] in want and row["index"] is not None
        if not ok:
            wrong.append((line, want, row["status"], row["variant"], row["index"], row["reason"]))
    assert not wrong, wrong


# ============================================================================ PyTorch: driver floors
class TestTorchDriver:
    """NVIDIA minor-version compatibility applies to the CUDA inside torch's wheels (PyTorch REPORT "Driver
    floors"): 11.x >= 450.80.02, 12.x >= 525.60.13, 13.x >= 580 (Linux); 10.2 has none: >= 440.33. The GPU's own
    floor is higher where its compute capability came later than its CUDA major: sm_86 (RTX 3090) first came with
    CUDA 11.1, whose driver is 455.23 (CUDA 11.1 release notes, Table 3), above 11.x's 450.80.02."""

    @pytest.mark.parametrize("line, gpu, floor", [
        ("2.0", "RTX 3090", "455.23"), ("2.5", "RTX 3090", "525.60.13"), ("2.8", "RTX 3090", "525.60.13"),
        ("1.12", "K80", "440.33"), ("2.0", "A100", "450.80.02"),
    ])
    def test_planned_minimum(self, kb, line, gpu, floor):
        stack = stack_of(kb, torch=line, os="linux", gpu=gpu)
        assert stack.driver.minimum == floor

    def test_cuda_13_needs_the_580_branch(self, kb):
        stack = stack_of(kb, torch="2.11", os="linux", gpu="RTX 3090")
        assert stack.framework.variant == "cu130"
        assert major(stack.driver.minimum) == 580

    def test_windows_floors(self, kb):
        # Table 2 Windows: 12.x >= 528.33; Table 3: 10.2 >= 441.22.
        assert stack_of(kb, torch="2.5", os="windows", gpu="RTX 3090").driver.minimum == "528.33"

    def test_cu128_runs_on_a_550_driver(self, kb):
        # malfet in pytorch/pytorch#155141: torch 2.8 (cu128) runs on driver 550.127.05.
        resolution = plan(kb, torch="2.8", os="linux", gpu="RTX 3090", driver="550.127.05")
        assert resolution.stack is not None
        assert resolution.stack.framework.variant == "cu128" and resolution.stack.framework.index_url is None
        assert resolution.stack.driver.ok is True

    def test_cu130_does_not_run_on_a_570_driver(self, kb):
        # pytorch/pytorch#162531: a cu130 build on a 570 driver fails ("The NVIDIA driver on your system is too
        # old (found version 12080)"). 2.11's variants are cu126, cu128, cu130 (REPORT).
        resolution = plan(kb, torch="2.11", os="linux", gpu="RTX 3090", driver="570.86.10")
        if resolution.stack is None:
            assert any("580" in f.message for f in resolution.findings if f.severity == "error")
        else:
            fw = resolution.stack.framework
            assert fw.variant in ("cu126", "cu128") and on_pytorch_index(fw, fw.variant)
            assert resolution.stack.driver.ok is True

    def test_cu102_has_no_minor_version_compatibility(self, kb):
        # CUDA 10.x: no minor-version compatibility, 440.33 is the floor; a 418 driver cannot run the cu102 wheel.
        resolution = plan(kb, torch="1.12", os="linux", gpu="K80", driver="418.226.00")
        assert resolution.stack is None or resolution.stack.framework.variant != "cu102"

    def test_kepler_is_capped_at_r470(self, kb):
        # constraints/drivers.toml (NVIDIA's architecture matrix): Kepler's last driver is R470; the cu118
        # build's floor (450.80.02) fits under it.
        stack = stack_of(kb, torch="2.7", os="linux", gpu="K80")
        assert stack.driver.max_branch == 470
        assert Version(stack.driver.minimum) < Version("471")

    def test_a_blackwell_card_needs_a_driver_that_knows_it(self, kb):
        stack = stack_of(kb, torch="2.8", os="linux", gpu="RTX 5090")
        assert Version(stack.driver.minimum) >= Version("570")


# ============================================================================ JAX
# JAX REPORT, "GPU install routes over time" and "Minimum compute capability over time".
class TestJaxRoutes:
    def test_latest_on_ampere_is_the_cuda13_plugin(self, kb):
        stack = stack_of(kb, jax="latest", os="linux", gpu="RTX 3090")
        fw = stack.framework
        assert fw.distribution == "jax" and fw.extras == ("cuda13",)
        assert fw.index_url is None  # the plugin wheels are on the default index
        assert major(stack.cuda.version) == 13

    @pytest.mark.parametrize("gpu", ["GTX 1080", "V100"])
    def test_below_7_5_jax_0_8_needs_the_cuda12_route(self, kb, gpu):
        # docs/installation.md@jax-v0.8.0: "On CUDA 13, JAX supports NVIDIA GPUs that have SM version 7.5 or
        # newer"; CUDA 12 wheels still say 5.2.
        for version in ("0.8", "latest"):
            stack = stack_of(kb, jax=version, os="linux", gpu=gpu)
            assert stack.framework.extras == ("cuda12",), version
            assert major(stack.cuda.version) == 12

    def test_turing_takes_cuda13(self, kb):
        assert stack_of(kb, jax="latest", os="linux", gpu="T4").framework.extras == ("cuda13",)

    @pytest.mark.parametrize("version", ["0.7.1", "0.7.2"])
    def test_before_0_8_the_documented_route_is_cuda12(self, kb, version):
        # jax[cuda13] is unresolvable for 0.7.0/0.7.1 (no jax-cuda13-plugin before 0.7.2) and the docs recommend
        # jax[cuda12] through 0.7.2.
        stack = stack_of(kb, jax=version, os="linux", gpu="RTX 3090")
        assert stack.framework.version == version and stack.framework.extras == ("cuda12",)

    def test_0_4_30_is_the_cuda12_plugin_on_the_default_index(self, kb):
        fw = stack_of(kb, jax="0.4.30", os="linux", gpu="RTX 3090").framework
        assert fw.extras == ("cuda12",) and fw.index_url is None

    def test_0_4_22_cuda12_plugin_is_unresolvable(self, kb):
        # jax[cuda12]==0.4.22: no jax-cuda12-pjrt 0.4.22 on the index; the documented route is cuda12_pip.
        resolution = plan(kb, jax="0.4.22", os="linux", gpu="RTX 3090")
        if resolution.stack is not None:
            assert resolution.stack.framework.extras != ("cuda12",)

    @pytest.mark.parametrize("gpu", ["GTX 750 Ti", "K80"])
    def test_below_5_2_has_no_plugin_build(self, kb, gpu):
        # "SM version 5.2 (Maxwell) or newer" (README.md@jax-v0.4.11 onward; docs at jax-v0.11.0).
        assert plan(kb, jax="0.4.30", os="linux", gpu=gpu).stack is None

    def test_a_5_0_gpu_has_no_jax_at_all(self, kb):
        resolution = plan(kb, jax="latest", os="linux", gpu="GTX 750 Ti")
        assert resolution.stack is None, resolution.stack.summary

    def test_a_470_driver_never_gets_the_cuda12_extra(self, kb):
        resolution = plan(kb, jax="0.4.21", os="linux", gpu="RTX 3090", driver="470.82.01")
        if resolution.stack is not None:
            assert resolution.stack.framework.extras == ("cuda11_pip",)
            assert Version(resolution.stack.cuda.version) >= Version("11.8")

    @pytest.mark.parametrize("version", ["0.4.23", "0.4.24", "0.4.26"])
    def test_the_cuda12_pip_era_has_a_gpu_plan(self, kb, version):
        stack = stack_of(kb, jax=version, os="linux", gpu="RTX 3090")
        assert stack.framework.extras in (("cuda12_pip",), ("cuda12",))
        assert major(stack.cuda.version) == 12

    def test_maxwell_5_2_runs_the_cuda12_route(self, kb):
        stack = stack_of(kb, jax="latest", os="linux", gpu="GTX 970")
        assert stack.framework.extras == ("cuda12",)

    @pytest.mark.parametrize("gpu, floor", [("GTX 1080", "525.60.13"), ("RTX 3090", "580")])
    def test_driver_floor(self, kb, gpu, floor):
        # docs/installation.md@jax-v0.8.0: "must be >= 525 for CUDA 12 on Linux, and >= 580 for CUDA 13";
        # 525.60.13 is NVIDIA's minor-version floor for 12.x.
        stack = stack_of(kb, jax="latest", os="linux", gpu=gpu)
        if floor == "580":
            assert major(stack.driver.minimum) == 580
        else:
            assert stack.driver.minimum == floor

    def test_a_570_driver_takes_the_cuda12_route(self, kb):
        # CUDA 13 needs >= 580; jax[cuda12] remains documented as the alternative from 0.8.0.
        resolution = plan(kb, jax="latest", os="linux", gpu="RTX 3090", driver="570.86.10")
        assert resolution.stack is not None
        assert resolution.stack.framework.extras == ("cuda12",)

    def test_old_cuda12_pip_extra_caps_cudnn_below_9(self, kb):
        from stackresolve.formats import pip_decide as pip_plan

        resolution = plan(kb, jax="0.4.21", os="linux", gpu="RTX 3090")
        assert resolution.stack is not None
        lines = pip_plan.decide(resolution).requirements
        from packaging.requirements import Requirement

        cudnn = [Requirement(l) for l in lines if l.startswith("nvidia-cudnn-cu12")]
        assert cudnn and not cudnn[0].specifier.contains("9.0.0") and cudnn[0].specifier.contains("8.9.7.29"), lines


class TestJaxWindows:
    """JAX REPORT: "Windows is CPU only ... GPU on Windows only through WSL2 ("experimental")"."""

    def test_a_windows_gpu_request_gets_no_cuda_and_is_pointed_at_wsl2(self, kb):
        resolution = plan(kb, jax="latest", os="windows", gpu="RTX 3090")
        stack = resolution.stack
        told = [f.message + " " + (f.fix or "") for f in resolution.findings]
        if stack is not None:
            assert stack.cuda is None and not any(e.startswith("cuda") for e in stack.framework.extras)
            told.append(stack.gpu.why)
        told += [a.why for a in resolution.alternatives]
        assert any("WSL2" in text for text in told), told

    def test_a_windows_gpu_request_is_not_silently_ok(self, kb):
        resolution = plan(kb, jax="latest", os="windows", gpu="RTX 3090")
        assert resolution.status != "ok"
        told = [f.message + " " + (f.fix or "") for f in resolution.findings if f.severity != "info"]
        told += [a.why for a in resolution.alternatives if a.request.os.value == "wsl2"]
        assert any("WSL2" in text or "wsl2" in text for text in told), told

    def test_wsl2_gets_the_linux_plugin(self, kb):
        stack = stack_of(kb, jax="latest", os="wsl2", gpu="RTX 3090")
        assert stack.framework.extras == ("cuda13",)

    def test_windows_cpu_plan(self, kb):
        stack = stack_of(kb, jax="latest", os="windows", cpu=True)
        assert stack.cuda is None and stack.framework.index_url is None
        assert any(c.startswith("jaxlib==") for c in stack.framework.companions)


class TestJaxCpuPairing:
    """jax < 0.4.30 declares no jaxlib dependency, so the plan names jaxlib; some jax releases have no jaxlib of
    their own version (JAX REPORT "Pairing rule")."""

    @pytest.mark.parametrize("version, jaxlib", [
        ("0.4.25", "0.4.25"), ("0.4.30", "0.4.30"), ("0.4.37", "0.4.36"), ("0.5.2", "0.5.1"), ("0.10.2", "0.10.2"),
    ])
    def test_the_plan_pins_an_installable_jaxlib(self, kb, version, jaxlib):
        stack = stack_of(kb, jax=version, os="linux", cpu=True)
        fw = stack.framework
        assert fw.version == version and stack.cuda is None
        assert f"jaxlib=={jaxlib}" in fw.companions

    def test_latest_for_python_3_11_is_0_10_2(self, kb):
        # 0.11.0+ need Python >= 3.12 (jaxlib wheels); 0.10.2 is the newest for 3.11 (REPORT "What I ran").
        stack = stack_of(kb, jax="latest", os="linux", cpu=True, python="3.11")
        assert stack.framework.version == "0.10.2"
        assert "jaxlib==0.10.2" in stack.framework.companions

    def test_latest_is_0_12_0_1_on_python_3_12_to_3_15(self, kb):
        stack = stack_of(kb, jax="latest", os="linux", cpu=True)
        assert stack.framework.version == "0.12.0.1"
        assert "jaxlib==0.12.0.1" in stack.framework.companions
        assert (stack.python.min, stack.python.max) == ("3.12", "3.15")

    def test_jaxlib_before_0_4_26_is_pinned_to_numpy_1(self, kb):
        from stackresolve.formats import pip_decide as pip_plan

        lines = pip_plan.decide(plan(kb, jax="0.4.25", os="linux", cpu=True)).requirements
        assert any(l.replace(" ", "").startswith("numpy<2") for l in lines), lines


# ============================================================================ Apple
# JAX REPORT part B: tensorflow-metal's pairing table (its METADATA, as printed in the 1.2.0 wheel); Apple's steps
# use tensorflow-macos for TF <= 2.12 and tensorflow for TF >= 2.13.
METAL = [("2.5", "tensorflow-macos", "0.1.2"), ("2.8", "tensorflow-macos", "0.4.0"),
         ("2.12", "tensorflow-macos", "0.8.0"), ("2.13", "tensorflow", "1.0.0"),
         ("2.14", "tensorflow", "1.1.0"), ("2.15", "tensorflow", "1.1.0"), ("2.16", "tensorflow", "1.1.0"),
         ("2.17", "tensorflow", "1.1.0"), ("2.18", "tensorflow", "1.1.0")]


@pytest.mark.parametrize("line, package, metal", METAL)
def test_tensorflow_metal_pairing(kb, line, package, metal):
    stack = stack_of(kb, tf=line, gpu="Apple M2")
    fw = stack.framework
    assert fw.distribution == package and fw.line == line
    assert f"tensorflow-metal=={metal}" in fw.companions
    assert stack.gpu.support.value == "metal" and stack.cuda is None


def test_tensorflow_2_19_has_no_metal_pairing(kb):
    stack = stack_of(kb, tf="2.19", gpu="Apple M2")
    assert not any(c.startswith("tensorflow-metal") for c in stack.framework.companions)
    assert stack.gpu.support.value == "cpu-only"


@pytest.mark.parametrize("line, mps", [("1.11", False), ("1.12", True), ("2.5", True), ("2.14", True)])
def test_pytorch_mps_from_1_12(kb, line, mps):
    # Apple's page: "The MPS backend support is part of the PyTorch 1.12 official release"; the 1.11 macOS wheels
    # have no MPS code (measured).
    stack = stack_of(kb, torch=line, gpu="Apple M2")
    assert stack.cuda is None
    assert stack.gpu.support.value == ("metal" if mps else "cpu-only")


@pytest.mark.parametrize("line, macos", [("2.5", "12.3"), ("2.7", "13.0"), ("2.9", "14.0")])
def test_pytorch_mps_macos_floor_is_told(kb, line, macos):
    resolution = plan(kb, torch=line, gpu="Apple M2")
    texts = [f.message for f in resolution.findings]
    assert any(f"macOS {macos}" in t for t in texts), texts


def test_an_apple_gpu_plan_is_not_called_cpu_only():
    # PyTorch 2.2 has MPS (Apple's page: from 1.12): the plan's header names the GPU and Metal, not "CPU only".
    result = run_cli("plan", "--no-detect", "--torch", "2.2", "--os", "macos", "--gpu", "Apple M2", "--format", "pip")
    request_line = next(l for l in result.stdout.splitlines() if l.startswith("# request:"))
    assert "GPU Apple M2 (Metal)" in request_line and "CPU only" not in request_line


def test_the_json_names_the_index_a_build_comes_from():
    # A GTX 1080 on driver 470 gets torch 2.5.1 cu118 (CUDA 11.8 runs on R470; the default wheel is cu124), which
    # installs with --index-url .../whl/cu118 (pytorch.github.io previous-versions.md, v2.5.1).
    result = run_cli("plan", "--no-detect", "--torch", "2.5", "--os", "linux", "--gpu", "GTX 1080", "--driver",
                     "470.82.01", "--format", "json")
    fw = json.loads(result.stdout)["stack"]["framework"]
    assert fw["variant"] == "cu118" and fw["index_option"] == "--index-url"
    assert fw["index"] == fw["index_url"] and fw["index_url"].endswith("/whl/cu118")


class TestJaxDeletedJaxlib:
    """The JAX team deletes old jaxlib releases from the package index: only 0.4.13 and 0.4.18 onward are there;
    0.4.0-0.4.12 and 0.4.14-0.4.17 are gone (JAX REPORT "jaxlib"; the index's /simple/jaxlib/ list, re-read
    2026-11-24). A plan for such a release cannot install from the index: the user is told why and is offered
    the nearest release that can."""

    @pytest.mark.parametrize("version, nearest", [("0.4.1", "0.4.13"), ("0.4.16", "0.4.18")])
    def test_the_conflict_names_the_deletion_and_the_nearest_newer_release(self, kb, version, nearest):
        resolution = plan(kb, jax=version, os="linux", cpu=True)
        assert resolution.stack is None
        deleted = [f for f in resolution.findings if f.code == "not-on-index"]
        assert len(deleted) == 1 and "deleted from the package index" in deleted[0].message
        assert resolution.alternatives[0].stack.framework.version == nearest
        assert resolution.alternatives[0].stack.cuda is None

    def test_a_gpu_request_gets_the_nearest_gpu_release(self, kb):
        resolution = plan(kb, jax="0.4.10", os="linux", gpu_cc="8.0")
        assert resolution.stack is None
        nearest = resolution.alternatives[0].stack
        assert nearest.framework.version == "0.4.13" and nearest.cuda is not None


def test_the_oldest_newer_release_is_offered_where_the_asked_one_has_no_build(kb):
    # TensorFlow publishes Linux aarch64 wheels from 2.10.0 (the index's /simple/tensorflow/ file list): a 2.3
    # request on aarch64 is offered 2.10, not only the newest release.
    resolution = plan(kb, tf="2.3", os="linux", arch="aarch64", cpu=True)
    assert resolution.stack is None
    assert [a.stack.framework.version for a in resolution.alternatives][0] == "2.10.0"


def test_jax_metal_note_names_the_release_that_pairs(kb):
    resolution = plan(kb, jax="0.4.35", gpu="Apple M2")
    texts = [f.message for f in resolution.findings]
    assert any("jax-metal 0.1.1" in t for t in texts), texts


def test_jax_on_apple_runs_on_the_cpu_and_plans_no_jax_metal(kb):
    # jax-metal is experimental (its METADATA); JAX's docs from jax-v0.9.1: "JAX is not supported on Mac/OSX GPU".
    stack = stack_of(kb, jax="latest", gpu="Apple M2")
    assert stack.cuda is None and stack.gpu.support.value == "cpu-only"
    assert not any(c.startswith("jax-metal") for c in stack.framework.companions)


def test_an_apple_gpu_on_linux_is_bad_input():
    result = run_cli("plan", "--no-detect", "--torch", "2.5", "--gpu", "Apple M2", "--os", "linux")
    assert result.exit_code == 2
    assert "Apple" in error_line(result)


# ============================================================================ bad input
def test_unknown_torch_version_names_the_known_lines():
    # PyTorch REPORT: releases 1.8.0 ... 2.15.0.
    result = run_cli("plan", "--no-detect", "--torch", "9.9")
    assert result.exit_code == 2
    line = error_line(result)
    assert "known lines are 1.8 ... 2.15" in line and "closest:" in line


def test_unknown_jax_version_names_the_known_lines():
    # JAX REPORT: jax 0.4.0 ... 0.12.0.1.
    result = run_cli("plan", "--no-detect", "--jax", "0.99")
    assert result.exit_code == 2
    assert "known lines are 0.4 ... 0.12" in error_line(result)


@pytest.mark.parametrize("args", [
    ["--torch", "2.5", "--jax", "0.4"], ["--torch", "2.5", "--tf", "2.15"], ["--vendor", "nvidia", "--torch", "2.5"],
    ["--vendor", "nvidia", "--jax", "latest"],
])
def test_conflicting_flags_are_bad_input(args):
    result = run_cli("plan", "--no-detect", *args)
    assert result.exit_code == 2
    error_line(result)


def test_input_errors_through_the_api(kb):
    with pytest.raises(InputError, match="one of --tf, --torch and --jax"):
        request_from_flags(kb, Flags(torch="2.5", jax="0.4"), None)
