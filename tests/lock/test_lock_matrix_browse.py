"""Lock files and `check`, `matrix`, `show tf`, `gpus`: what a user or a bootstrap script sees."""

import json

import pytest
from click.testing import CliRunner

from stackresolve.lock.check import check_lock
from stackresolve.formats.lock_read import parse_lock
from stackresolve.cli import app
from stackresolve.request.build import InputError
from stackresolve.resolve import resolve
from stackresolve.request.parse import Flags, request_from_flags



@pytest.fixture
def run():
    runner = CliRunner()
    return lambda *args: runner.invoke(app, list(args))


@pytest.fixture
def tf115_lock(run, tmp_path):
    path = tmp_path / "stackresolve.lock"
    result = run("plan", "--no-detect", "--tf", "1.15", "--os", "linux", "--gpu", "GTX 1080 Ti", "--format", "lock",
                 "-o", str(path))
    assert result.exit_code == 0, result.output
    return path


def render_lock(resolution, kb) -> str:
    from stackresolve.formats.render import render_plan

    return render_plan("lock", resolution, kb)


def machine(os="linux", driver=None, gpus=(), python=None, tensorflow=None, cuda=(), cudnn=()):
    """A machine as detection describes it."""
    from stackresolve.model.machine import (CudnnInfo, DriverInfo, FrameworkInfo, GpuInfo, Machine, OSInfo,
                                           PythonInfo, ToolkitInfo)

    return Machine(
        os=OSInfo(system=os), driver=DriverInfo(driver, None, "test") if driver else None,
        gpus=tuple(GpuInfo(i, name, cc, None, "test") for i, (name, cc) in enumerate(gpus)),
        cuda_toolkits=tuple(ToolkitInfo(".".join(v.split(".")[:2]), None, "test", full_version=v) for v in cuda),
        cudnn=tuple(CudnnInfo(v, None, "test") for v in cudnn),
        python=PythonInfo(python, "python") if python else None,
        frameworks=(FrameworkInfo("tensorflow", tensorflow, None, None, True),) if tensorflow else ())


def test_lock_states_what_check_compares(kb):
    resolution = resolve(kb, request_from_flags(kb, Flags(tf="1.15", os="linux", gpu="GTX 1080 Ti"), None))
    lock = parse_lock(render_lock(resolution, kb), "stackresolve.lock")
    # tensorflow-gpu 1.15.5 has cp36/cp37 Linux wheels (package index); CUDA 10.0 (tested builds); the 1.15.0 wheel
    # says it was compiled with cuDNN 7.6.0 (tensorflow/tensorflow#35376); CUDA 10.0 needs driver 410.48 (NVIDIA,
    # Table 3); its wheels carry sm_61 SASS (measured, tensorflow.toml).
    assert (lock.framework, lock.version, lock.python_min, lock.python_max) == ("tensorflow-gpu", "1.15.5", "3.6", "3.7")
    assert (lock.os, lock.delivery, lock.cuda, lock.cudnn_compiled) == ("linux", "system", "10.0", "7.6")
    assert str(lock.driver_min) == "410.48" and "6.1" in lock.sass
    assert lock.knowledge_base == kb.version
    doc = json.loads(render_lock(resolution, kb))
    assert doc["pip"][0] == "tensorflow-gpu==1.15.5" and doc["stack"]["cudnn"]["version"] == lock.cudnn_installs


def test_the_locks_pip_list_installs_as_written(kb):
    """The README's bootstrap writes `pip` to requirements.txt and installs `pip_first` before it. PyTorch 1.12.1
    with CUDA 11.6 installs from PyTorch's cu116 index with --extra-index-url (pytorch.github.io
    previous-versions.md, v1.12.1); NVIDIA's 1.15 builds install from NVIDIA's index, which nvidia-pyindex only wrote
    into pip's configuration (its edit_pip_configuration.py: https://pypi.ngc.nvidia.com), named directly: nothing
    needs installing first."""
    torch = json.loads(render_lock(resolve(kb, request_from_flags(kb, Flags(torch="1.12", os="linux", gpu_cc="8.6"),
                                                               None)), kb))
    assert torch["pip"][0] == "--extra-index-url https://download.pytorch.org/whl/cu116"
    assert "torch==1.12.1+cu116" in torch["pip"] and torch["pip_first"] == []
    nvidia = json.loads(render_lock(resolve(kb, request_from_flags(kb, Flags(tf="1.15", os="linux", gpu="RTX 3090"),
                                                                None)), kb))
    assert nvidia["pip_first"] == []
    assert nvidia["pip"][0] == "--extra-index-url https://pypi.ngc.nvidia.com"
    assert nvidia["pip"][1].startswith("nvidia-tensorflow[horovod]==1.15.5+nv")


def test_check_passes_on_a_matching_machine(run, tf115_lock):
    # Driver 440.33 >= 410.48 (CUDA 10.0, NVIDIA Table 3); Python 3.7 has a 1.15.5 wheel; cuDNN 7.6.5 is 7.x >= 7.6.
    flags = ["--no-detect", "--os", "linux", "--driver", "440.33", "--gpu", "GTX 1080 Ti", "--python", "3.7"]
    result = run("check", str(tf115_lock), *flags, "--cuda", "10.0.130", "--cudnn", "7.6.5")
    assert result.exit_code == 0, result.output
    assert "matches the lock" in result.stdout
    # Facts nobody gave are not checked, not "none detected" (the lock still matches what was compared).
    partial = run("check", str(tf115_lock), *flags)
    assert partial.exit_code == 0, partial.output
    assert "cuda: not observed" in partial.stdout and "cudnn: not observed" in partial.stdout


def test_check_before_install_compares_the_machine_and_the_python_not_the_installed_stack(run, tf115_lock):
    base = ["check", str(tf115_lock), "--no-detect", "--before-install", "--os", "linux", "--gpu-cc", "6.1",
            "--driver", "440.33", "--cudnn", "5.1.10"]
    result = run(*base, "--python", "3.7")
    assert result.exit_code == 0, result.output
    assert "cudnn: --before-install" in result.stdout  # what gets installed is compared afterwards
    # tensorflow-gpu 1.15.5 has wheels for CPython 3.6-3.7 only: the Python the install would use is compared too
    result = run(*base, "--python", "3.9")
    assert result.exit_code == 1 and "python: expected 3.6 - 3.7, found 3.9" in result.stdout


def test_check_accepts_what_plan_accepts(kb):
    # TensorFlow 1.15 loads any cuDNN 7.x >= 7.6 (cuda_dnn.cc, compiled with 7.6.0): plan and check agree.
    resolution = resolve(kb, request_from_flags(kb, Flags(tf="1.15", os="linux", gpu="GTX 1080 Ti"), None))
    lock = parse_lock(render_lock(resolution, kb), "lock")
    every = frozenset({"os", "gpus", "driver", "python", "framework", "cuda", "cudnn"})
    for cudnn, fits in (("7.6.0", True), ("7.6.5", True), ("7.5.0", False), ("8.0.5", False)):
        found = machine(driver="440.33", gpus=[("GTX 1080 Ti", "6.1")], python="3.7.17", tensorflow="1.15.5",
                        cuda=["10.0.130"], cudnn=[cudnn])
        assert check_lock(lock, kb, found, every).matches is fits, cudnn


def test_check_reports_each_difference(kb):
    lock = parse_lock(render_lock(resolve(kb, request_from_flags(
        kb, Flags(tf="1.15", os="linux", gpu="GTX 1080 Ti"), None)), kb), "lock")
    every = frozenset({"os", "gpus", "driver", "python", "framework", "cuda", "cudnn"})
    good = machine(driver="440.33", gpus=[("GTX 1080 Ti", "6.1")], python="3.7.17", tensorflow="1.15.5",
                   cuda=["10.0.130"], cudnn=["7.6.5"])
    assert check_lock(lock, kb, good, every).differences == ()
    bad = machine(driver="390.157", gpus=[("GTX 1080 Ti", "6.1")], python="3.8.10", tensorflow="1.14.0",
                  cuda=["10.2.89"], cudnn=["8.0.5"])
    assert [d.component for d in check_lock(lock, kb, bad, every).differences] == \
        ["driver", "python", "tensorflow", "cuda", "cudnn"]


def test_check_exit_codes(run, tf115_lock, tmp_path):
    assert run("check", str(tf115_lock), "--no-detect", "--driver", "390.157").exit_code == 1
    damaged = tmp_path / "damaged.lock"
    damaged.write_text('{"schema": "something/else"}')
    result = run("check", str(damaged), "--no-detect")
    assert result.exit_code == 2 and "not a stackresolve lock file" in result.stderr
    assert run("check", str(tmp_path / "missing.lock"), "--no-detect").exit_code == 2


@pytest.mark.parametrize("text, field", [
    ('{"schema": "stackresolve/lock@1"}', "`check` is missing"),
    ('{"schema": "stackresolve/lock@1", "check": []}', "`check` must be an object"),
    ('{"schema": "stackresolve/lock@1", "check": {"os": "beos"}}', "`check.os` must be one of"),
])
def test_damaged_lock_names_the_field(text, field):
    with pytest.raises(InputError, match=field):
        parse_lock(text, "x.lock")


def test_damaged_lock_is_bad_input():
    with pytest.raises(InputError):
        parse_lock("{not json", "x.lock")


def test_matrix_newest_tf_for_a_k80_on_windows(run):
    # Native Windows GPU ends with 2.10 (tensorflow.org/install/pip); 2.4-2.14 wheels carry sm_35 SASS, which
    # runs on the K80's 3.7 (same major); CUDA 11.2 still targets 3.5 (CUDA 12 dropped Kepler).
    result = run("matrix", "--gpu", "Tesla K80", "--os", "windows", "--format", "json")
    assert result.exit_code == 0, result.output
    rows = json.loads(result.stdout)["rows"]
    runnable = [r for r in rows if r["status"] != "impossible"]
    assert runnable[0]["line"] == "2.10" and runnable[0]["status"] == "native"
    assert {r["line"] for r in rows if r["status"] == "impossible"} >= {"2.11", "2.21"}


def test_matrix_covers_every_line_on_linux_and_windows(run, kb):
    result = run("matrix", "--gpu-cc", "8.6", "--format", "json")
    rows = json.loads(result.stdout)["rows"]
    assert {(r["line"], r["os"]) for r in rows} == {(l.version, o) for l in kb.lines for o in ("linux", "windows")}


def test_show_tf_lists_tables_arch_and_wheels(run):
    result = run("show", "tf", "1.15")
    assert result.exit_code == 0
    assert "tensorflow_gpu-1.15.0" in result.stdout and "CUDA 10.0" in result.stdout
    assert "SASS 3.5, 3.7, 5.2, 6.0, 6.1, 7.0" in result.stdout
    assert "tensorflow-gpu 1.15.5: linux 3.6,3.7" in result.stdout
    bad = run("show", "tf", "9.9")
    assert bad.exit_code == 2 and "unknown TensorFlow line" in bad.stderr


def test_gpus_search_and_json(run):
    result = run("gpus", "3090", "--format", "json")
    found = {g["name"]: g["compute_capability"] for g in json.loads(result.stdout)["gpus"]}
    assert found["GeForce RTX 3090"] == "8.6"  # NVIDIA CUDA GPUs list


@pytest.mark.parametrize("os_name", ["linux", "windows", "wsl2", "macos"])
def test_every_pip_plan_line_is_a_valid_requirement(kb, os_name):
    from packaging.requirements import Requirement

    from stackresolve.formats.render import render_plan

    for line in kb.lines:
        resolution = resolve(kb, request_from_flags(kb, Flags(tf=line.version, os=os_name, gpu_cc="7.5"), None))
        if resolution.stack is None:
            continue
        text = render_plan("pip", resolution, kb)
        requirements = [l for l in text.splitlines() if l and not l.startswith("#")]
        assert requirements, f"{line.version} {os_name}: empty pip plan"
        for requirement in requirements:
            Requirement(requirement)  # raises on anything pip would not read


def test_matrix_cells_shared_between_gpus_keep_each_gpus_driver_floor():
    # Cells are shared between GPUs whose answers cannot differ. An A40 (sm_86) and an L4 (sm_89) are both
    # native in TensorFlow 2.10's wheels, but sm_89 came with CUDA 11.8 (driver >= 520.61.05 on Linux, CUDA 11.8
    # release notes, Table 3) and sm_86 with CUDA 11.1: after the A40's matrix, the L4's must not take its floor.
    from stackresolve.knowledge.loader import load_knowledge
    from stackresolve.browse.matrix import build_matrix

    kb = load_knowledge()  # its own memos: the cells these two matrices share
    for name in ("A40", "L4"):
        cells = build_matrix(kb, request_from_flags(kb, Flags(gpu=name, os="linux"), None), ["linux"])
    l4 = next(c for c in cells if c.line == "2.10")
    assert l4.status == "native" and l4.driver_min == "520.61.05"


def test_check_reads_a_driver_branch_as_plan_does(kb):
    # `--driver 525` stands for R525's releases (rules.driver_meets): JAX on an A100 plans with CUDA 12.1, whose
    # minimum is 525.60.13 (CUDA 12.1 release notes, Table 3). The lock that plan writes must not be refused by
    # check / install's machine check for that same driver; which release of R525 is installed stays unchecked.
    resolution = resolve(kb, request_from_flags(kb, Flags(jax="latest", os="linux", gpu="A100", driver="525"), None))
    lock = parse_lock(render_lock(resolution, kb), "lock")
    assert str(lock.driver_min) == "525.60.13"
    every = frozenset({"os", "gpus", "driver"})
    result = check_lock(lock, kb, machine(driver="525", gpus=[("A100", "8.0")]), every, before_install=True)
    assert result.differences == ()
    assert any(c == "driver" and "525.60.13" in why for c, why in result.not_checked)
    # a release below the minimum, and an older branch, are still differences
    for driver in ("525.53", "520"):
        result = check_lock(lock, kb, machine(driver=driver, gpus=[("A100", "8.0")]), every, before_install=True)
        assert [d.component for d in result.differences] == ["driver"], driver


def test_check_wants_the_override_a_lock_was_planned_through(tmp_path, kb):
    """An RX 6700 XT (gfx1031) runs PyTorch's ROCm wheels only with HSA_OVERRIDE_GFX_VERSION=10.3.0 (amd.toml's
    unofficial [[gfx_override]] row): on a detected machine without it, check names the variable; with it, nothing."""
    from stackresolve.formats.lock_read import parse_lock
    from stackresolve.lock.check import _check_accelerator
    from stackresolve.model.machine import AmdGpuInfo, Machine, OSInfo, ProbeRecord

    path = tmp_path / "stackresolve.lock"
    result = CliRunner().invoke(app, ["plan", "--no-detect", "--torch", "latest", "--gpu", "RX 6700 XT",
                                      "--format", "lock", "-o", str(path)])
    assert result.exit_code == 0, result.output
    lock = parse_lock(path.read_text(), "stackresolve.lock")
    gpu = AmdGpuInfo(index=0, gfx="gfx1031", source="kfd-topology", name="AMD Radeon RX 6700 XT")
    detected = dict(os=OSInfo(system="linux"), driver=None, probes=(ProbeRecord("kfd", "ok"),), amd_gpus=(gpu,))
    (missing,) = _check_accelerator(lock, Machine(**detected))
    assert missing.expected == "HSA_OVERRIDE_GFX_VERSION=10.3.0" and missing.found == "not set"
    assert _check_accelerator(lock, Machine(**detected, env={"HSA_OVERRIDE_GFX_VERSION": "10.3.0"})) == []
