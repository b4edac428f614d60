"""The command line's contract: exit codes, one-line errors for bad input, files written whole."""

import json

import pytest
from click.testing import CliRunner

from stackresolve.cli import app


@pytest.fixture
def run():
    runner = CliRunner()

    def invoke(*args):
        return runner.invoke(app, list(args))

    return invoke


def error_line(result) -> str:
    lines = [l for l in result.stderr.splitlines() if l.strip()]
    assert len(lines) == 1, f"expected one line on stderr, got: {result.stderr!r}"
    assert "Traceback" not in result.output
    return lines[0]


@pytest.mark.parametrize("args, expected", [
    (["--tf", "3.1"], "known lines are 1.0 ... 2.21"),
    (["--tf", "banana"], "not a TensorFlow version"),
    (["--tf", "1.15", "--driver", "four-seventy"], "not an NVIDIA driver version"),
    (["--tf", "1.15", "--driver", "12"], "not an NVIDIA driver version"),  # a CUDA version, not a driver
    (["--tf", "1.15", "--gpu", "GTX 1080 Tie"], "did you mean 'GeForce GTX 1080 Ti'"),
    (["--tf", "1.15", "--gpu-cc", "8.12"], "not a compute capability"),  # well-formed but unlisted is planned
    (["--tf", "1.15", "--os", "beos"], "unknown operating system"),
    (["--tf", "1.15", "--format", "yml"], "--format 'yml': use one of"),
    (["--tf", "1.15", "--python", "snake"], "not a Python version"),
])
def test_bad_input_is_one_line_and_exit_2(run, args, expected):
    result = run("plan", "--no-detect", *args)
    assert result.exit_code == 2
    assert expected in error_line(result)


def test_a_driver_branch_as_plans_print_it_is_accepted(run):
    # Plans print a CUDA 13 floor as the branch "580" (CUDA release notes Table 2: ">= 580"); the user who types
    # that back is understood. A branch stands for its releases (issue 32): R410 is planned for CUDA 10.0, whose
    # minimum 410.48 (Table 3) is inside it, naming that release; a branch below the minimum is not.
    result = run("plan", "--no-detect", "--torch", "latest", "--os", "linux", "--gpu-cc", "9.0", "--driver", "580",
                 "--format", "json")
    assert result.exit_code == 0, result.output
    stack = json.loads(result.stdout)["stack"]
    assert stack["cuda"]["version"].startswith("13.")
    branch = run("plan", "--no-detect", "--tf", "1.15", "--os", "linux", "--gpu-cc", "6.1", "--driver", "410",
                 "--format", "json")
    assert branch.exit_code == 0, branch.output
    found = {f["code"]: f for f in json.loads(branch.stdout)["findings"]}
    assert "410.48" in found["driver-branch-release"]["message"]
    too_old = run("plan", "--no-detect", "--tf", "1.15", "--os", "linux", "--gpu-cc", "6.1", "--driver", "396")
    assert too_old.exit_code == 1  # CUDA 10.0 needs 410.48 (Table 3): nothing in R396 reaches it


def test_unknown_tf_suggests_the_closest_line(run):
    result = run("plan", "--no-detect", "--tf", "1.16")
    assert result.exit_code == 2
    assert "closest: 1.15" in error_line(result)


def test_json_plan_follows_the_contract(run):
    result = run("plan", "--no-detect", "--tf", "1.15", "--os", "linux", "--gpu", "GTX 1080 Ti", "--format", "json")
    assert result.exit_code == 0, result.output
    doc = json.loads(result.stdout)
    assert doc["schema"] == "stackresolve/plan@1"
    assert doc["status"] in ("ok", "warning")
    assert set(doc["stack"]) >= {"framework", "python", "cuda", "cudnn", "driver", "gpu"}
    assert doc["stack"]["framework"]["pip_package"] == "tensorflow-gpu"
    assert set(doc["plans"]) >= {"text", "pip", "lock"}
    for finding in doc["findings"]:
        assert set(finding) == {"severity", "code", "message", "fix", "source"}


def test_impossible_target_exits_1_and_lists_alternatives(run):
    # Native Windows GPU support ended with 2.10 (tensorflow.org/install/pip).
    result = run("plan", "--no-detect", "--tf", "2.15", "--os", "windows", "--gpu", "RTX 3080", "--format", "json")
    assert result.exit_code == 1
    doc = json.loads(result.stdout)
    assert doc["status"] == "impossible" and doc["stack"] is None
    assert any(a["request"]["os"] == "wsl2" for a in doc["alternatives"])


def test_output_file_is_written_whole(run, tmp_path):
    target = tmp_path / "requirements.txt"
    result = run("plan", "--no-detect", "--tf", "1.15", "--gpu", "GTX 1080 Ti", "--format", "pip", "-o", str(target))
    assert result.exit_code == 0
    assert "tensorflow-gpu==1.15.5" in target.read_text().splitlines()
    assert [p.name for p in tmp_path.iterdir()] == ["requirements.txt"]  # no temporary file left behind


def test_unwritable_output_is_a_clean_error(run, tmp_path):
    result = run("plan", "--no-detect", "--tf", "1.15", "--format", "pip", "-o", str(tmp_path / "no" / "dir.txt"))
    assert result.exit_code == 3  # the output could not be written
    assert "cannot write" in error_line(result)


def test_the_command_list_says_what_each_command_says_of_itself():
    import importlib

    from stackresolve.cli.app import COMMANDS

    for name, (module, short) in COMMANDS.items():
        function = getattr(importlib.import_module(module), name)
        assert " ".join(function.__doc__.split()) == short, name


def test_explain_reads_stdin_and_keeps_the_users_tensorflow(run):
    # TF 2.9 on Windows was tested with CUDA 11.2 and cuDNN 8.1 (tensorflow/docs source_windows.md); the fix keeps
    # the 2.9.1 the log names instead of moving the user to another patch release.
    from click.testing import CliRunner

    from stackresolve.cli import app

    log = ("TensorFlow version: 2.9.1\n"
           "W tensorflow/stream_executor/platform/default/dso_loader.cc:64] Could not load dynamic library "
           "'cudart64_110.dll'; dlerror: cudart64_110.dll not found\n")
    result = CliRunner().invoke(app, ["explain", "-", "--no-detect", "--format", "json"], input=log)
    assert result.exit_code == 0, result.output
    doc = json.loads(result.stdout)
    assert doc["requested"]["tf"] == "2.9.1" and doc["requested"]["os"] == "windows"
    stack = doc["fix_plan"]["stack"]
    assert (stack["framework"]["version"], stack["cuda"]["version"], stack["cudnn"]["version"]) == \
        ("2.9.1", "11.2", "8.1.0")


def test_explain_flags_sharpen_a_silent_log(run):
    result = run("explain", "Could not load dynamic library 'libcudnn.so.8'", "--tf", "2.6", "--os", "linux",
                 "--no-detect", "--format", "json")
    assert result.exit_code == 0, result.output
    assert json.loads(result.stdout)["fix_plan"]["stack"]["framework"]["line"] == "2.6"


def test_a_driver_problem_is_explained_without_a_stack(run):
    # lyulyul/shine-cluster#30: the driver's libraries were upgraded under the loaded module; a reboot (or
    # reloading the module) fixes it, no other framework stack does.
    text = "$ nvidia-smi\nFailed to initialize NVML: Driver/library version mismatch\n"
    result = run("explain", "--no-detect", text)
    assert result.exit_code == 0
    assert "nvml-driver-library-mismatch" in result.stdout and "Reboot" in result.stdout
    assert "A stack that fixes it" not in result.stdout
    as_plan = run("explain", "--no-detect", "--format", "pip", text)
    assert as_plan.exit_code == 1 and "fixed on the machine" in error_line(as_plan)


def test_a_fix_for_a_text_that_names_no_framework_says_whose_it_is(run):
    # TensorFlow and JAX both print this XLA line (jax-ml/jax#15268, the corpus): the plan is TensorFlow's, and
    # the output says so and how to plan for the others.
    result = run("explain", "--no-detect", "Loaded runtime CuDNN library: 8.0.5 but source was compiled with: 8.1.0")
    assert "A stack that fixes it: tensorflow" in result.stdout
    assert "the text names no framework" in result.stdout and "--jax X" in result.stdout
