"""PyTorch on AMD (ROCm) and Intel (XPU) GPUs, against the primary sources (not this program's output):
- AMD's ROCm system requirements ("LLVM target"): MI300X gfx942, MI250X gfx90a, RX 7900 XTX gfx1100; LLVM's
  AMDGPUUsage processor table: RX 580 gfx803 (no PyTorch ROCm wheel carries it).
- pytorch.github.io previous-versions.md: torch 1.13.1 ROCm 5.2 "pip install torch==1.13.1+rocm5.2
  torchvision==0.14.1+rocm5.2 torchaudio==0.13.1 --extra-index-url https://download.pytorch.org/whl/rocm5.2";
  torch 2.0.1 ROCm 5.4.2 "pip install torch==2.0.1 torchvision==0.15.2 torchaudio==2.0.2 --index-url
  https://download.pytorch.org/whl/rocm5.4.2".
- PyTorch's XPU getting-started page (2.5): "--index-url https://download.pytorch.org/whl/xpu", XPU from 2.5.
Facts only the seed data carry (which wheel carries gfx942) are read from the knowledge base, not typed here."""

import json

import pytest
from click.testing import CliRunner

from stackresolve.cli import app
from stackresolve.model.machine import AmdGpuInfo, IntelGpuInfo, Machine, OSInfo
from stackresolve.request.parse import Flags, request_from_flags
from stackresolve.request.build import InputError
from stackresolve.resolve import resolve


def plan(kb, machine=None, **flags):
    return resolve(kb, request_from_flags(kb, Flags(**flags), machine))


def run(*args):
    result = CliRunner().invoke(app, ["plan", "--no-detect", *args])
    return result.exit_code, result.output


@pytest.mark.parametrize("name, gfx", [("MI300X", "gfx942"), ("MI250X", "gfx90a"), ("RX 7900 XTX", "gfx1100"),
                                       ("radeon rx 580", "gfx803")])
def test_amd_gpus_resolve_by_name_to_their_gfx_target(kb, name, gfx):
    request = request_from_flags(kb, Flags(torch="latest", gpu=name), None)
    assert [a.gfx for a in request.accelerators] == [gfx] and request.gpus == ()


def test_an_intel_gpu_resolves_by_name(kb):
    request = request_from_flags(kb, Flags(torch="latest", gpu="Arc A770"), None)
    assert request.accelerators[0].vendor == "intel" and request.accelerators[0].family == "arc-a"


def test_torch_1_13_on_an_amd_gpu_is_rocm_5_2_through_the_extra_index(kb):
    stack = plan(kb, torch="1.13", gpu="MI250X").stack
    fw = stack.framework
    assert (fw.variant, fw.version, fw.local_version, fw.index_option, fw.index_url) == \
        ("rocm5.2", "1.13.1", "+rocm5.2", "--extra-index-url", "https://download.pytorch.org/whl/rocm5.2")
    assert fw.companions == ("torchvision==0.14.1+rocm5.2", "torchaudio==0.13.1")
    assert stack.cuda is None and stack.gpu.vendor == "amd" and stack.gpu.gfx == "gfx90a"


def test_torch_2_0_on_an_amd_gpu_is_rocm_5_4_2_through_the_index_url(kb):
    fw = plan(kb, torch="2.0", gpu="MI250X").stack.framework
    assert (fw.variant, fw.version, fw.local_version, fw.index_option, fw.index_url) == \
        ("rocm5.4.2", "2.0.1", "", "--index-url", "https://download.pytorch.org/whl/rocm5.4.2")
    assert fw.companions == ("torchvision==0.15.2", "torchaudio==2.0.2")


def test_the_chosen_wheel_carries_the_gpus_target(kb):
    for name in ("MI300X", "RX 7900 XTX"):
        stack = plan(kb, torch="latest", gpu=name).stack
        variant = next(v for v in kb.accelerators.torch_rocm_of(stack.framework.version)
                       if v.name == stack.framework.variant)
        assert stack.gpu.gfx in variant.gfx and not stack.gpu.unofficial


def test_rx_580_is_refused_with_the_gfx_reason(kb):
    resolution = plan(kb, torch="2.0", gpu="RX 580")
    assert resolution.stack is None
    error = next(f for f in resolution.findings if f.severity == "error")
    assert error.code == "gfx-unsupported" and "gfx803" in error.message
    assert "hipErrorNoBinaryForGpu" in error.message
    # the last wheels with gfx803 are torch 1.8-1.10's (pytorch/builder release/1.10 manywheel/build_rocm.sh leaves
    # PYTORCH_ROCM_ARCH at LoadHIP's default, gfx803 first): the nearest that works, then the CPU build
    assert [(a.stack.framework.version, a.stack.framework.variant) for a in resolution.alternatives] == [
        ("1.10.1", "rocm4.2"), ("2.0.1", "cpu")]


def test_a_target_missing_from_the_asked_release_points_at_one_that_has_it(kb):
    resolution = plan(kb, torch="2.0", gpu="MI300X")  # gfx942 is no ROCm 5.x target
    assert resolution.stack is None
    assert resolution.alternatives[0].stack.gpu.gfx == "gfx942"
    assert resolution.alternatives[0].stack.framework.variant.startswith("rocm")


def test_a_torch_without_a_known_rocm_build_is_refused(kb):
    # amd.toml records no ROCm variant of torch 2.15 (no source read for it): refused, pointing at the newest known
    assert not kb.accelerators.torch_rocm_of("2.15.0")
    resolution = plan(kb, torch="2.15", gpu="MI300X")
    assert resolution.stack is None
    error = next(f for f in resolution.findings if f.severity == "error")
    assert error.code == "rocm-no-build" and "no ROCm build stackresolve knows" in error.message
    assert error.fix == "use --torch 2.14.1"


def test_a_gfx_no_wheel_carries_runs_through_the_unofficial_override(kb):
    override = kb.accelerators.gfx_overrides[0]
    gfx = override.gfx[0]
    resolution = plan(kb, torch="latest", gpu_gfx=gfx)
    stack = resolution.stack
    assert stack is not None and stack.gpu.unofficial and stack.gpu.gfx == gfx
    finding = next(f for f in resolution.findings if f.code == "gfx-override-unofficial")
    assert f"HSA_OVERRIDE_GFX_VERSION={override.hsa_override}" in finding.fix
    assert resolution.status == "warning"


def test_intel_xpu_plans_from_2_5_with_the_xpu_index(kb):
    resolution = plan(kb, torch="2.5", gpu="Arc A770")
    fw = resolution.stack.framework
    assert (fw.variant, fw.index_option, fw.index_url) == ("xpu", "--index-url", "https://download.pytorch.org/whl/xpu")
    assert any(f.code == "xpu-prerequisites" for f in resolution.findings)
    assert plan(kb, torch="2.4", gpu="Arc A770").stack is None


@pytest.mark.parametrize("flags, words", [
    (dict(gpu="MI300X", gpu_cc="8.6"), "one GPU vendor"),
    (dict(gpu="A100", gpu_gfx="gfx942"), "one GPU vendor"),
    (dict(gpu="MI300X", gpu_gfx="gfx90a"), "has gfx target gfx942, not gfx90a"),
    (dict(gpu_gfx="gfx94"), "not an AMD gfx target"),
    (dict(gpu="Arc A770", gpu_gfx="gfx1100"), "Intel GPU: it has no AMD gfx target"),
    (dict(gpu="MI300X", driver="550"), "NVIDIA driver version"),
])
def test_mixed_or_malformed_gpu_flags_are_one_line(kb, flags, words):
    with pytest.raises(InputError, match=words):
        request_from_flags(kb, Flags(torch="latest", **flags), None)


def test_tensorflow_and_jax_on_amd_or_intel_say_what_is_supported(kb):
    for flags in (dict(tf="2.15", gpu="MI300X"), dict(jax="latest", gpu="Arc A770")):
        with pytest.raises(InputError, match="plans PyTorch on AMD and Intel GPUs"):
            request_from_flags(kb, Flags(**flags), None)


def test_an_unknown_name_suggests_models_of_every_vendor(kb):
    with pytest.raises(InputError, match="did you mean .*'AMD Radeon RX 7900 XTX'"):
        request_from_flags(kb, Flags(torch="latest", gpu="RX 7900 XTZ"), None)


def test_the_environment_gives_a_gfx_target_when_no_flag_names_a_gpu(kb):
    request = request_from_flags(kb, Flags(torch="latest", gpu_gfx_env="gfx1100"), None)
    assert request.accelerators[0].source == "env:STACKRESOLVE_GPU_GFX"
    request = request_from_flags(kb, Flags(torch="latest", gpu="A100", gpu_gfx_env="gfx1100"), None)
    assert not request.accelerators and request.gpus


def _machine(**gpus):
    return Machine(os=OSInfo(system="linux", distro="ubuntu", release="22.04", arch="x86_64", wsl=False),
                   driver=None, **gpus)


def test_a_detected_amd_gpu_is_the_target(kb):
    machine = _machine(amd_gpus=(AmdGpuInfo(index=0, gfx="gfx942", source="kfd-topology", pci_id="1002:74a1"),))
    resolution = plan(kb, machine, torch="latest")
    assert resolution.request.accelerators[0].name == kb.accelerators.find_amd_gpu("MI300X").name
    assert resolution.stack.gpu.gfx == "gfx942"


def test_a_detected_gpu_no_build_uses_leaves_a_cpu_plan(kb):
    # an integrated GPU whose target no wheel carries must not turn a CPU plan into an impossible one
    # gfx1010 (RX 5700 XT, RDNA): in no wheel's PYTORCH_ROCM_ARCH and no override row
    machine = _machine(amd_gpus=(AmdGpuInfo(index=0, gfx="gfx1010", source="kfd-topology"),))
    resolution = plan(kb, machine, torch="latest")
    assert resolution.stack is not None and resolution.stack.gpu.vendor is None
    assert any("gfx1010" in a for a in resolution.request.assumptions)
    unknown_intel = _machine(intel_gpus=(IntelGpuInfo(index=0, pci_id="8086:ffff", source="sysfs-pci"),))
    assert plan(kb, unknown_intel, torch="latest").stack.framework.variant == "cpu"
    assert plan(kb, machine, tf="latest").stack is not None


def test_plan_cli_pip_json_and_refused_formats():
    code, out = run("--torch", "2.0", "--gpu", "MI250X", "--format", "pip")
    assert code == 0
    assert "--index-url https://download.pytorch.org/whl/rocm5.4.2\ntorch==2.0.1\n" in out
    code, out = run("--torch", "2.0", "--gpu", "MI250X", "--format", "json")
    doc = json.loads(out)
    assert doc["stack"]["framework"]["variant"] == "rocm5.4.2"
    assert doc["stack"]["gpu"]["vendor"] == "amd" and doc["stack"]["gpu"]["gfx"] == "gfx90a"
    assert doc["request"]["accelerators"][0]["gfx"] == "gfx90a"
    assert set(doc["refused_formats"]) >= {"conda", "apt", "powershell"}
    code, out = run("--torch", "2.0", "--gpu", "MI250X", "--format", "conda")
    assert code == 2 and "conda-forge" in out and len(out.strip().splitlines()) == 1
    code, out = run("--torch", "2.0", "--gpu", "RX 580")
    assert code == 1 and "gfx803" in out


def test_dockerfile_passes_the_rocm_devices():
    code, out = run("--torch", "2.0", "--gpu", "MI250X", "--format", "dockerfile")
    assert code == 0 and "--device=/dev/kfd --device=/dev/dri" in out
    assert "--index-url \\\n        https://download.pytorch.org/whl/rocm5.4.2" in out


def test_check_reads_the_locks_gfx_targets(tmp_path):
    lock = tmp_path / "stackresolve.lock"
    code, _ = run("--torch", "2.0", "--gpu", "MI250X", "--format", "lock", "-o", str(lock))
    assert code == 0
    doc = json.loads(lock.read_text())
    assert doc["check"]["accelerator"]["vendor"] == "amd" and "gfx90a" in doc["check"]["accelerator"]["compiled_gfx"]

    def check(*flags):
        result = CliRunner().invoke(app, ["check", str(lock), "--no-detect", "--os", "linux", *flags])
        return result.exit_code, result.output

    assert check("--gpu", "MI250X")[0] == 0
    code, out = check("--gpu-gfx", "gfx1100")  # RDNA3: no code in a ROCm 5.4.2 wheel (AMD's matrix, PyTorch 2.0)
    assert code == 1 and "gfx1100" in out and "hipErrorNoBinaryForGpu" in out
    code, out = check("--gpu", "RTX 4090")
    assert code == 1 and "no AMD GPU was found" in out


def test_a_lock_with_a_malformed_gfx_target_is_one_line(tmp_path):
    lock = tmp_path / "stackresolve.lock"
    run("--torch", "2.0", "--gpu", "MI250X", "--format", "lock", "-o", str(lock))
    doc = json.loads(lock.read_text())
    doc["check"]["accelerator"]["compiled_gfx"] = ["gfx90a; rm -rf /"]
    lock.write_text(json.dumps(doc))
    result = CliRunner().invoke(app, ["check", str(lock), "--no-detect", "--gpu", "MI250X"])
    assert result.exit_code == 2 and "check.accelerator" in result.output


def test_show_gpu_and_gpus_list_amd_and_intel_models():
    def cli(*args):
        result = CliRunner().invoke(app, list(args))
        assert result.exit_code == 0, result.output
        return result.output

    doc = json.loads(cli("show", "gpu", "MI300X", "--format", "json"))
    assert (doc["vendor"], doc["gfx"], doc["architecture"]) == ("amd", "gfx942", "CDNA3")
    assert json.loads(cli("show", "gpu", "gfx90a", "-f", "json"))["models"] == [
        "AMD Instinct MI250X", "AMD Instinct MI250", "AMD Instinct MI210"]
    assert json.loads(cli("show", "gpu", "Arc A770", "-f", "json"))["family"] == "arc-a"
    assert "gfx target gfx1100" in cli("show", "gpu", "RX 7900 XTX")
    assert "PyTorch rocm4.2: torch 1.9.0 ... 1.10.1" in cli("show", "gpu", "RX 580")  # the last gfx803 wheels
    assert "no ROCm wheel carries it" in cli("show", "gpu", "Radeon Pro W5500")  # gfx1012: in no wheel's list
    listing = json.loads(cli("gpus", "--format", "json"))
    assert {"gfx942", "gfx90a", "gfx1100", "gfx803"} <= {g["gfx"] for g in listing["amd_gpus"]}
    assert "Intel Arc A770" in {g["name"] for g in listing["intel_gpus"]}
    assert "AMD Instinct MI300X" in cli("gpus", "mi300")


@pytest.mark.parametrize("flags, index", [
    (dict(torch="1.13", gpu="MI250X"), ("--extra-index-url", "https://download.pytorch.org/whl/rocm5.2")),
    (dict(torch="2.5", gpu="Arc A770"), ("--index-url", "https://download.pytorch.org/whl/xpu")),
])
def test_install_takes_the_rocm_or_xpu_index_from_the_knowledge_base(kb, flags, index):
    from stackresolve.install.target import from_resolution, with_knowledge

    target = with_knowledge(from_resolution(plan(kb, **flags)), kb)
    assert target.index_args == index and target.gpu  # the import check must see the GPU


def test_matrix_rows_for_an_amd_gpu():
    result = CliRunner().invoke(app, ["matrix", "--torch", "--gpu", "MI250X", "--os", "linux", "--format", "json"])
    assert result.exit_code == 0, result.output
    rows = {r["line"]: r for r in json.loads(result.output)["rows"]}
    assert rows["2.0"]["variant"] == "rocm5.4.2" and rows["2.0"]["index"] == "https://download.pytorch.org/whl/rocm5.4.2"
    assert rows["1.13"]["variant"] == "rocm5.2"
    assert rows["1.12"]["variant"] == "rocm5.1.1"  # previous-versions.md: '# ROCM 5.1.1 (Linux only)'
    assert rows["1.11"]["variant"] == "rocm4.5.2"


def test_a_machine_with_nvidia_and_amd_gpus_plans_the_nvidia_ones_and_says_so(kb):
    from stackresolve.model.machine import GpuInfo

    machine = _machine(gpus=(GpuInfo(0, "NVIDIA GeForce RTX 3090", "8.6", None, "nvml", "nvml"),),
                       amd_gpus=(AmdGpuInfo(index=0, gfx="gfx1036", source="kfd-topology"),))
    request = request_from_flags(kb, Flags(torch="latest"), machine)
    assert request.gpus and not request.accelerators
    assert any("gfx1036" in a for a in request.assumptions)


def test_a_plan_through_the_unofficial_override_sets_it_in_every_install_format():
    # amd.toml [[gfx_override]]: gfx1031 (RX 6700 XT) runs the wheels' gfx1030 code with HSA_OVERRIDE_GFX_VERSION=10.3.0
    # (ROCm/rocALUTION#197); without it the wheels fail with hipErrorNoBinaryForGpu, so the plans must carry it
    code, pip = run("--torch", "latest", "--gpu", "RX 6700 XT", "--format", "pip")
    assert code == 0 and "#   export HSA_OVERRIDE_GFX_VERSION=10.3.0\n" in pip and "unofficial" in pip
    code, dockerfile = run("--torch", "latest", "--gpu", "RX 6700 XT", "--format", "dockerfile")
    assert code == 0 and "\nENV HSA_OVERRIDE_GFX_VERSION=10.3.0\n" in dockerfile
    code, dockerfile = run("--torch", "latest", "--gpu", "RX 7900 XTX", "--format", "dockerfile")
    assert code == 0 and "HSA_OVERRIDE_GFX_VERSION" not in dockerfile  # gfx1100 is in the wheels' own targets


def test_an_amd_or_intel_gpu_without_a_framework_flag_plans_pytorch():
    # PyTorch is the one framework planned on AMD and Intel GPUs: no --torch is no reason to refuse (the fleet's
    # advice names --gpu-gfx alone); an explicit --jax still is refused
    code, out = run("--gpu-gfx", "gfx942", "--format", "json")
    assert code == 0 and json.loads(out)["stack"]["framework"]["variant"].startswith("rocm")
    code, out = run("--gpu", "Arc A770", "--format", "json")
    assert code == 0 and json.loads(out)["stack"]["framework"]["variant"] == "xpu"
    code, out = run("--jax", "latest", "--gpu", "MI300X")
    assert code == 2 and "--jax with an AMD (ROCm) GPU" in out


def test_a_gfx_target_with_rocminfo_features_names_its_processor():
    # rocminfo prints MI200/MI300 targets with their features ("gfx90a:sramecc+:xnack-"); wheels are per processor
    code, out = run("--torch", "2.5", "--gpu-gfx", "gfx90a:sramecc+:xnack-", "--format", "json")
    assert code == 0 and json.loads(out)["stack"]["gpu"]["gfx"] == "gfx90a"
    code, out = run("--torch", "2.5", "--gpu-gfx", "gfx90a:junk")
    assert code == 2 and len(out.strip().splitlines()) == 1
