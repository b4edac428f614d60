"""`stackresolve explain`'s fix plan for PyTorch and JAX logs: the resolver's plan for the framework the log comes
from (never a TensorFlow plan), keeping the log's release and build where they fix the error.

The logs are the real reports of tests/fixtures/errors/real/ (INDEX.toml names each source and what the thread's
expert answered); the checks compare the plan with those answers and with the knowledge base's facts (pytorch.toml
variants and their compiled architectures, cuda.toml's driver table)."""

from __future__ import annotations

import json

import pytest
from click.testing import CliRunner
from packaging.version import Version

from stackresolve.cli import app
import locations

CORPUS = locations.FIXTURES / "errors" / "real"


@pytest.fixture(scope="module")
def kb():
    from stackresolve.knowledge.loader import knowledge

    return knowledge()


def explain(log: str, *args: str):
    return CliRunner().invoke(app, ["explain", "--file", str(CORPUS / log), "--no-detect", *args])


def plan_json(log: str, *args: str) -> dict:
    result = explain(log, "--format", "json", *args)
    assert result.exit_code == 0, result.output
    return json.loads(result.stdout)


def pip_lines(result) -> list[str]:
    return [line for line in result.stdout.splitlines() if line and not line.startswith("#")]


def test_sm120_log_gets_a_torch_with_sm120_code(kb):
    # LeggedLab#26: an RTX 5090 (sm_120) and a build with sm_50 ... sm_90; the reporter installed a cu128 torch
    result = explain("leggedlab-26-torch-sm120-rtx5090.log", "--format", "pip")
    assert result.exit_code == 0, result.output
    assert "stackresolve plan --tf" not in result.output
    lines = pip_lines(result)
    torch = next(line for line in lines if line.startswith("torch=="))
    version = Version(torch.split("==")[1])
    index = next((line for line in lines if line.startswith("--index-url")), "")
    assert version >= Version("2.8") or (version >= Version("2.7") and index.endswith("/whl/cu128"))
    # the resolver was asked with the log's compute capability: the build has machine code for 12.0
    doc = plan_json("leggedlab-26-torch-sm120-rtx5090.log")
    stack = doc["fix_plan"]["stack"]
    assert stack["framework"]["name"] == "pytorch" and stack["gpu"]["support"] == "native"
    assert doc["fix_plan"]["request"]["gpus"][0]["compute_capability"] == "12.0"
    assert "12.0" in stack["compiled_arch"]["sass"]
    text = explain("leggedlab-26-torch-sm120-rtx5090.log").stdout
    # the GPU in the user's terms: the model the log names (the knowledge base gives it compute capability 12.0)
    assert f"Install plan: stackresolve plan --torch {version} --gpu 'NVIDIA GeForce RTX 5090' --os linux" in text


def test_sm120_log_keeps_the_logs_python(kb):
    # wyoming-xtts#1: Python 3.11 in the log's paths, an RTX 5060 Ti (sm_120)
    stack = plan_json("wyoming-xtts-1-torch-sm120-rtx5060ti.log")["fix_plan"]["stack"]
    assert stack["python"]["recommended"] == "3.11" and stack["gpu"]["support"] == "native"
    assert Version(stack["framework"]["version"]) >= Version("2.7")


def test_a_logged_release_is_kept_where_a_build_of_it_has_the_code(kb):
    # WPFS#3: torch 1.10.1 (sm_37 ... sm_70) on an A100 (sm_80); the fix was torch==1.10.1+cu111 (sm_80 code)
    stack = plan_json("wpfs-3-torch-sm80-a100-torch1.10.1.log")["fix_plan"]["stack"]
    assert stack["framework"]["version"] == "1.10.1" and stack["framework"]["variant"] in ("cu111", "cu113")
    assert stack["gpu"]["support"] == "native" and "8.0" in stack["compiled_arch"]["sass"]
    assert stack["framework"]["index_option"] == "--find-links"  # before 1.11, PyTorch's builds were find-links


def test_driver_too_old_plans_for_the_driver_the_log_implies(kb):
    # GPT-SoVITS#83: "found version 11040": the driver supports CUDA 11.4, so it is at least CUDA 11.4's minimum
    # (cuda.toml, NVIDIA Table 3); the plan is a torch that runs on that driver
    doc = plan_json("gpt-sovits-83-torch-driver-too-old-11040.log")
    assert doc["requested"]["driver_cuda"] == "11.4"
    driver = kb.toolkit("11.4").driver_linux
    plan = doc["fix_plan"]
    assert plan["request"]["driver"] == driver
    assert plan["stack"]["framework"]["name"] == "pytorch" and plan["stack"]["driver"]["ok"] is True
    assert Version(plan["stack"]["driver"]["min"]) <= Version(driver)


def test_cpu_only_torch_on_windows_gets_pytorchs_cuda_index(kb):
    # MagicQuill#35: "Torch not compiled with CUDA enabled" on Windows, where the default index has CPU builds only
    result = explain("magicquill-35-torch-not-compiled-with-cuda-windows.log", "--format", "pip")
    assert result.exit_code == 0, result.output
    assert pip_lines(result)[0].startswith("--index-url https://download.pytorch.org/whl/cu")


def test_torch_flag_names_the_release(kb):
    # Paints-UNDO#6: the answer was torch==2.3.0 from PyTorch's cu121 index, installed on Windows first
    result = explain("paints-undo-6-torch-not-compiled-with-cuda.log", "--torch", "2.3.0", "--os", "windows",
                     "--format", "pip")
    assert result.exit_code == 0, result.output
    lines = pip_lines(result)
    assert lines[0].startswith("--index-url https://download.pytorch.org/whl/cu") and "torch==2.3.0" in lines
    doc = plan_json("paints-undo-6-torch-not-compiled-with-cuda.log", "--torch", "2.3.0")
    assert doc["requested"]["framework_version"] == "2.3.0"
    assert "PyTorch 2.3.0 from --torch" in doc["requested"]["evidence"]


def test_jax_plugin_mismatch_keeps_the_logs_cuda_major(kb):
    # recovar#64: jax_cuda12_plugin 0.9.2 beside jaxlib 0.9.0.1; the fix pins the CUDA 12 plugin at 0.9.0.1
    doc = plan_json("recovar-64-jax-cuda12-plugin-0.9.2-vs-jaxlib-0.9.0.1.log")
    assert doc["requested"]["variant"] == "cuda12"
    framework = doc["fix_plan"]["stack"]["framework"]
    assert framework["pip_package"] == "jax[cuda12]" and framework["version"] == "0.9.0.1"
    assert doc["fix_plan_keeps"] == "the log's cuda12 build"
    text = explain("recovar-64-jax-cuda12-plugin-0.9.2-vs-jaxlib-0.9.0.1.log").stdout
    assert "The fix asks for: JAX 0.9.0.1 (cuda12); jaxlib 0.9.0.1" in text
    assert "Install plan: this command with --format pip" in text


def test_jax_flag_on_a_cpu_jaxlib_log(kb):
    # colabdock#28: a CPU jaxlib; JAX's GPU build is jax[cuda12] (its install guide for 0.4.30)
    result = explain("colabdock-28-jax-cpu-jaxlib.log", "--jax", "0.4.30", "--format", "pip")
    assert result.exit_code == 0, result.output
    assert pip_lines(result) == ["jax[cuda12]==0.4.30", "jaxlib==0.4.30", "jax-cuda12-plugin==0.4.30",
                                 "nvidia-cudnn-cu12>=9.1,<10.0"]


def test_one_framework_flag_at_a_time():
    result = explain("colabdock-28-jax-cpu-jaxlib.log", "--jax", "0.4.30", "--torch", "2.5")
    assert result.exit_code == 2 and "give one of --tf, --torch and --jax" in result.stderr
    result = explain("colabdock-28-jax-cpu-jaxlib.log", "--torch", "0.1")
    assert result.exit_code == 2 and "--torch '0.1'" in result.stderr


def test_a_gpu_problem_is_planned_for_a_gpu_on_a_host_without_one(monkeypatch):
    # the log comes from a machine with an NVIDIA GPU; explain may run elsewhere (here: a host detect finds no GPU on)
    from stackresolve.cli import explain as explain_cli
    from stackresolve.model.machine import Machine, OSInfo

    monkeypatch.setattr(explain_cli, "detect_machine",
                        lambda *a, **k: Machine(os=OSInfo("linux", arch="x86_64"), driver=None))
    result = CliRunner().invoke(app, ["explain", "--file", str(CORPUS / "magicquill-35-torch-not-compiled-with-cuda"
                                                                         "-windows.log"), "--format", "pip"])
    assert result.exit_code == 0, result.output
    assert pip_lines(result)[0].startswith("--index-url https://download.pytorch.org/whl/cu")
    # a log of a machine without a GPU (AF-SfMLearner#39: no NVIDIA driver) keeps the CPU plan this host gets
    result = CliRunner().invoke(app, ["explain", "--file", str(CORPUS / "af-sfmlearner-39-torch-no-nvidia-driver-"
                                                                         "cpu.log"), "--format", "json"])
    assert json.loads(result.stdout)["fix_plan"]["stack"]["cuda"] is None


# -- the fix is `plan`'s stack for the same machine ----------------------------------------------------------
SAME_MACHINE = [
    "tf-57103-cudart64_110-tf2.9.1-windows.log",  # TensorFlow's release from the log, Windows
    "leggedlab-26-torch-sm120-rtx5090.log",  # PyTorch, a GPU named by the log
    "gpt-sovits-83-torch-driver-too-old-11040.log",  # PyTorch on the driver the log implies
    "jax-15268-cudnn-8.5.0-vs-8.6.0.log",  # JAX
]


@pytest.mark.parametrize("log", SAME_MACHINE)
def test_explains_fix_is_the_stack_plan_gives_for_the_same_machine(log):
    doc = plan_json(log)
    fix = doc["fix_plan"]
    text = explain(log).stdout
    command = next(line for line in text.splitlines() if line.startswith("Install plan: stackresolve plan "))
    args = command.removeprefix("Install plan: stackresolve ").split(" --format ")[0]
    import shlex

    planned = CliRunner().invoke(app, [*shlex.split(args), "--no-detect", "--format", "json"])
    assert planned.exit_code in (0, 1), planned.output
    stack = json.loads(planned.stdout)["stack"]
    for key in ("framework", "cuda", "cudnn", "python"):
        mine, plans = dict(fix["stack"][key] or {}), dict(stack[key] or {})
        mine.pop("why", None), plans.pop("why", None)  # the words name what was asked ('latest', '2.9.1')
        assert mine == plans, (key, args)
    assert fix["stack"]["driver"]["min"] == stack["driver"]["min"]


def test_the_users_release_is_kept_unless_it_cannot_work_and_then_the_text_says_why(tmp_path):
    # torch 2.0.1 has no code for sm_120 (its builds end at sm_90): the fix moves and says why
    log = tmp_path / "torch201-rtx5090.log"
    log.write_text("NVIDIA GeForce RTX 5090 with CUDA capability sm_120 is not compatible with the current PyTorch "
                   "installation.\nThe current PyTorch install supports CUDA capabilities sm_37 sm_50 sm_60 sm_70 "
                   "sm_75 sm_80 sm_86 sm_90.\ntorch==2.0.1\n", encoding="utf-8")
    result = CliRunner().invoke(app, ["explain", "--file", str(log), "--no-detect"])
    assert "(PyTorch 2.0.1 cannot fix it here (" in result.stdout and "compute capability 12.0" in result.stdout
    doc = json.loads(CliRunner().invoke(app, ["explain", "--file", str(log), "--no-detect", "--format", "json"]).stdout)
    assert doc["fix_plan_moved"].startswith("PyTorch 2.0.1 cannot fix it here")
    # a release that works is kept: no such line
    kept = CliRunner().invoke(app, ["explain", "--file", str(CORPUS / "gpt-sovits-83-torch-driver-too-old-11040.log"),
                                    "--no-detect", "--torch", "1.12.1"])
    assert "cannot fix it here" not in kept.stdout and "torch==1.12.1" in kept.stdout


def test_a_tensorflow_release_the_knowledge_base_does_not_know_plans_the_newest(tmp_path):
    """A log naming TensorFlow 2.22.0 (or a 12-digit 'release'): the fix plans the newest and says so, never an
    internal error."""
    for version in ("2.22.0", "1.16.0", "2.111111111111"):
        log = tmp_path / "unknown.log"
        log.write_text(f"tensorflow {version}\nLoaded runtime CuDNN library: 8.1.0 but source was compiled with: 8.6.0."
                       f"  CuDNN library needs to have matching major version and equal or higher minor version.\n")
        result = CliRunner().invoke(app, ["explain", "--file", str(log), "--no-detect"])
        assert result.exit_code == 0, result.output
        assert "is not a release the knowledge base knows: the fix plans the newest" in result.output
