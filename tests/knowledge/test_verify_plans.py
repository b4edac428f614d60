"""scripts/verify_plans.py: its pure parts offline, one small target end to end with --network; and the results
file it writes (constraints/verified_installs.toml), which pitfalls.toml cites in `verified_by`."""

import ast
import importlib.util
import os
import subprocess
import sys
import time
from concurrent.futures import ThreadPoolExecutor
from pathlib import Path

import pytest
from packaging.requirements import Requirement
from packaging.specifiers import SpecifierSet
from packaging.version import Version

try:
    import tomllib
except ModuleNotFoundError:  # Python < 3.11
    import tomli as tomllib
import locations

ROOT = locations.REPO
RESULTS = ROOT / "constraints" / "verified_installs.toml"
PITFALLS = ROOT / "constraints" / "pitfalls.toml"


def _load_script():
    spec = importlib.util.spec_from_file_location("verify_plans", ROOT / "scripts" / "verify_plans.py")
    module = importlib.util.module_from_spec(spec)
    sys.modules["verify_plans"] = module  # dataclasses look the module up while the class is made
    spec.loader.exec_module(module)
    return module


vp = _load_script()

# The lines issue 15 asks to verify on Linux.
REQUIRED_LINES = {"1.8", "1.10", "1.11", "1.12", "1.13", "1.14", "1.15", "2.0", "2.2", "2.3", "2.5", "2.8", "2.11",
                  "2.13", "2.15", "2.16", "2.18", "2.20"}

PLAN_1_12 = """\
# stackresolve pip plan
# stack: tensorflow==1.12.3, Python 3.6, CPU only
# request: TensorFlow 1.12, os linux, cpu
# knowledge base 2026-11-22+a8ac5b1263f1, stackresolve 0.1.0
# Python 3.6 (wheels exist for 2.7 - 3.6):
#   python3.6 -m venv .venv && .venv/bin/python -m pip install -r requirements.txt
tensorflow==1.12.3
# protobuf >= 4.21 rejects the _pb2 modules ... (https://github.com/tensorflow/tensorflow/issues/56266)
protobuf<3.20
# h5py 3 returns str ... (https://github.com/tensorflow/tensorflow/issues/44467)
h5py<3
gast==0.2.2
"""


# A full lock as `plan --format pip --lock` writes it (hashes shortened; uv's `# via` comments kept).
LOCK_1_15 = """\
# stackresolve full lock plan
# stack: tensorflow==1.15.5, Python 3.7, CPU only
# request: TensorFlow 1.15, os linux, Python 3.7, CPU only
# knowledge base 2026-11-22+b6f27b2f6480 (package index data fetched 2026-11-22, shipped), stackresolve 0.1.0
# resolved by uv for Python 3.7 on x86_64-manylinux_2_28, with hashes; install with
#   python -m pip install --require-hashes -r requirements.txt
gast==0.2.2 \\
    --hash=sha256:fe939df4583692f0512161ec1c880e0a10e71e6a232da045ab8edd3756fbadf0
    # via tensorflow
h5py==2.10.0 \\
    --hash=sha256:063947eaed5f271679ed4ffa36bb96f57bc14f44dd4336a827d9a02702e6ce6b \\
    --hash=sha256:13c87efa24768a5e24e360a40e0bc4c49bcb7ce1bb13a3a7f9902cec302ccd36
    # via
    #   keras-applications
    #   tensorflow
Keras_Applications==1.0.8 \\
    --hash=sha256:df4323692b8c1174af821bf906f1e442e63fa7589bf0f1230a0b6bdc5a810c95
tensorflow==1.15.5 \\
    --hash=sha256:2e9a6e5ffbc8d6a1a8a1b5d1f1b2c8d4e5f60718293a4b5c6d7e8f90a1b2c3d4
    # via -r requirements.in
"""

LOCK_GPU_TAIL = """\
nvidia-cudnn-cu12==9.3.0.75 \\
    --hash=sha256:9ad9c6929ebb5295eb4a1728024666d1c88283373e265a0c5c883e6f9d5cd76d
"""


def cli(*args):
    return subprocess.run([sys.executable, "-m", "stackresolve", *args], capture_output=True, text=True,
                          timeout=120)


# --- targets -----------------------------------------------------------------------------------------------------
def test_default_targets_cover_the_required_lines():
    targets = [vp.parse_target(t) for t in vp.DEFAULT_TARGETS]
    assert REQUIRED_LINES <= {t.tf for t in targets}
    assert all(t.python and t.os == "linux" for t in targets)
    assert len({t.tf for t in targets}) == len(targets), "one target per line"


def test_default_targets_use_the_plans_python_and_cpu_only_where_said():
    # Each built-in target names the Python its plan recommends (so runs stay comparable with the plans users get);
    # `:cpu` only for lines whose GPU package links CUDA at import (TensorFlow <= 1.13).
    targets = [vp.parse_target(t) for t in vp.DEFAULT_TARGETS]
    with ThreadPoolExecutor(4) as ex:
        plans = list(ex.map(lambda t: cli(*vp.plan_command(vp.Target(tf=t.tf, cpu=t.cpu), "")), targets))
    for target, made in zip(targets, plans):
        assert made.returncode == 0, (target, made.stderr)
        plan = vp.parse_plan(made.stdout)
        assert plan.python == target.python, (target.label, plan.python)
        assert target.cpu == (Version(target.tf) <= Version("1.13")), target.label
        if target.cpu:
            assert plan.tf_requirement.startswith("tensorflow=="), plan.tf_requirement


@pytest.mark.parametrize("text, expected", [
    ("1.8@3.6", vp.Target(tf="1.8", python="3.6")),
    ("2.20", vp.Target(tf="2.20")),
    ("1.12@3.6:cpu", vp.Target(tf="1.12", python="3.6", cpu=True)),
    ("1.15.5@3.7", vp.Target(tf="1.15.5", python="3.7")),
])
def test_parse_target(text, expected):
    assert vp.parse_target(text) == expected


@pytest.mark.parametrize("text", ["", "tensorflow", "1.8@3", "1.8@3.6:gpu", "1.8 @3.6", "2.x"])
def test_parse_target_rejects(text):
    with pytest.raises(ValueError):
        vp.parse_target(text)


def test_variants_name_what_differs_from_the_plan():
    assert vp.parse_target("1.8@3.6").variant == "plan"
    t = vp.parse_target("1.8@3.6", drop=["H5Py"], add=["h5py<3"], pip_upgrade="pip<22")
    assert t.drop == ("h5py",) and t.variant == "plan+pip<22-h5py+h5py<3"
    with pytest.raises(Exception):
        vp.parse_target("1.8@3.6", add=["h5py<<3"])


# --- the plan ----------------------------------------------------------------------------------------------------
def test_parse_plan():
    plan = vp.parse_plan(PLAN_1_12)
    assert plan.requirements == ["tensorflow==1.12.3", "protobuf<3.20", "h5py<3", "gast==0.2.2"]
    assert plan.tf_requirement == "tensorflow==1.12.3" and plan.python == "3.6"
    assert plan.instructions == ["python3.6 -m venv .venv", ".venv/bin/python -m pip install -r requirements.txt"]


def test_parse_plan_reads_the_clis_own_output():
    made = cli("plan", "--no-detect", "--tf", "2.20", "--os", "linux", "--python", "3.13", "--format", "pip")
    assert made.returncode == 0, made.stderr
    plan = vp.parse_plan(made.stdout)
    assert plan.tf_requirement == "tensorflow[and-cuda]==2.20.0" and plan.python == "3.13"
    assert plan.instructions[-1].endswith("-r requirements.txt")
    for line in plan.requirements:
        Requirement(line)


@pytest.mark.parametrize("text", ["tensorflow==1.0\n", "# Python 3.6 (x):\n#   python3.6 -m venv .venv\n"])
def test_parse_plan_rejects_plans_without_requirements_or_instructions(text):
    with pytest.raises(ValueError):
        vp.parse_plan(text)


def test_adjust_requirements_never_drops_the_tensorflow_line():
    lines = ["tensorflow==1.12.3", "protobuf<3.20", "h5py<3"]
    assert vp.adjust_requirements(lines, drop=["h5py"]) == ["tensorflow==1.12.3", "protobuf<3.20"]
    assert vp.adjust_requirements(lines, drop=["tensorflow"]) == lines
    assert vp.adjust_requirements(lines[:2], add=["h5py<3", "protobuf<3.20"]) == lines


def test_localize_makes_the_instructions_concrete(tmp_path):
    venv, req = tmp_path / ".venv", tmp_path / "requirements.txt"
    loc = lambda c: vp.localize(c, python_exe="/opt/py36/bin/python", venv=venv, requirements=req)  # noqa: E731
    assert loc("python3.6 -m venv .venv") == ["/opt/py36/bin/python", "-m", "venv", str(venv)]
    assert loc(".venv/bin/python -m pip install -r requirements.txt") == [
        str(venv / "bin" / "python"), "-m", "pip", "install", "-r", str(req)]
    assert loc(".venv/bin/python -m pip install --upgrade 'pip<22'")[-1] == "pip<22"
    for shell in ("python3 -m pip install x | tee log", "pip install x > log", "echo $HOME", "a; b",
                  ".venv/bin/python -m pip install pip<22"):
        with pytest.raises(ValueError):
            loc(shell)


@pytest.mark.parametrize("command, name", [
    ("python3.6 -m venv .venv", "venv"),
    (".venv/bin/python -m pip install -r requirements.txt", "install"),
    (".venv/bin/python -m pip install --upgrade 'pip<22'", "pip_upgrade"),
    ("nvidia-smi", "instruction_3"),
])
def test_step_names(command, name):
    assert vp.step_name(command, 2) == name


# --- the full lock -----------------------------------------------------------------------------------------------
def test_parse_lock():
    lock = vp.parse_lock(LOCK_1_15)
    assert lock.requirements == ["gast==0.2.2", "h5py==2.10.0", "Keras_Applications==1.0.8", "tensorflow==1.15.5"]
    assert lock.tf_requirement == "tensorflow==1.15.5"
    assert (lock.python, lock.platform) == ("3.7", "x86_64-manylinux_2_28")
    assert lock.hashes == 5 and lock.cuda_wheels == {} and lock.text == LOCK_1_15
    assert lock.instructions == ["python -m pip install --require-hashes -r requirements.txt"]
    assert vp.parse_lock(LOCK_1_15 + LOCK_GPU_TAIL).cuda_wheels == {"nvidia-cudnn-cu12": "9.3.0.75"}


@pytest.mark.parametrize("text, message", [
    (PLAN_1_12, "not a pinned lock line"),                                      # a pip plan, not a lock
    (LOCK_1_15 + "numpy==1.18.5\n", "without a hash"),                          # --require-hashes would refuse it
    (LOCK_1_15.replace("# resolved by uv for Python 3.7", "# resolved"), "which Python"),
    ("\n".join(LOCK_1_15.splitlines()[:6]) + "\n", "pins no package"),
    (LOCK_1_15.replace("tensorflow==1.15.5", "tensorboard==1.15.0"), "no TensorFlow"),
])
def test_parse_lock_rejects(text, message):
    with pytest.raises(ValueError, match=message):
        vp.parse_lock(text)


def test_lock_instructions_add_no_deps_and_use_the_venv():
    lock = vp.parse_lock(LOCK_1_15)
    assert vp.lock_instructions(lock) == [
        "python3.7 -m venv .venv", ".venv/bin/python -m pip install --require-hashes --no-deps -r requirements.txt"]
    lock.instructions = []  # a lock without an install line: the same command
    assert vp.lock_instructions(lock)[-1] == ".venv/bin/python -m pip install --require-hashes --no-deps -r " \
                                             "requirements.txt"
    assert [vp.step_name(c, i) for i, c in enumerate(vp.lock_instructions(lock))] == ["venv", "install"]


def test_lock_mismatches():
    pins = vp.parse_lock(LOCK_1_15).requirements
    installed = {"gast": "0.2.2", "h5py": "2.10.0", "keras-applications": "1.0.8", "tensorflow": "1.15.5",
                 "pip": "22.0.4"}
    assert vp.lock_mismatches(pins, installed) == []
    assert vp.lock_mismatches(pins + ["numpy==1.18"], dict(installed, numpy="1.18.0")) == []
    del installed["gast"]
    installed["h5py"] = "3.1.0"
    assert vp.lock_mismatches(pins, installed) == ["gast: locked 0.2.2, not installed",
                                                   "h5py: locked 2.10.0, installed 3.1.0"]


def test_lock_targets():
    targets = [vp.parse_target(t, lock=True) for t in vp.LOCK_TARGETS]
    assert len(targets) >= 4 and all(t.lock and t.cpu and t.python and t.os == "linux" for t in targets)
    assert len({t.tf for t in targets}) == len(targets)
    t = targets[0]
    assert t.kind == "lock" and t.variant == "lock" and vp.Target("2.15").kind == "plan"
    assert vp.replace(t, pip_upgrade="pip<24.1").variant == "lock+pip<24.1"
    for bad in ({"drop": ["h5py"]}, {"add": ["h5py<3"]}):
        with pytest.raises(ValueError):
            vp.parse_target("1.15@3.7:cpu", lock=True, **bad)


def test_lock_mode_asks_the_cli_for_a_lock_from_pips_index(monkeypatch):
    calls = []

    def fake_run(argv, *, timeout, env=None, cwd=None):
        calls.append((argv, timeout))
        return vp.Proc(0, LOCK_1_15, "", 1.0)

    monkeypatch.setattr(vp, "run", fake_run)
    ctx = vp.Context(cli=["stackresolve"], index="https://index.invalid/simple", cache_dir=Path("/c"),
                     work_dir=None, commit="c", date="2026-11-24")
    lock, python, _ = vp.get_lock(ctx, vp.parse_target("1.15@3.7:cpu", lock=True))
    assert lock.tf_requirement == "tensorflow==1.15.5" and python == "3.7"
    ((argv, timeout),) = calls
    assert argv[-4:] == ["--cpu", "--lock", "--index-url", "https://index.invalid/simple"]
    assert argv[argv.index("--python") + 1] == "3.7" and argv[argv.index("--format") + 1] == "pip"
    assert timeout >= 600  # uv's own limit in fulllock.py is 600 s
    lock, _, proc = vp.get_lock(ctx, vp.parse_target("1.15@3.8:cpu", lock=True))
    assert lock is None and "got one for 3.7" in proc.err


# --- pip ---------------------------------------------------------------------------------------------------------
FREEZE = """\
absl-py==0.15.0
astor==0.8.1
gast==0.2.2
# a comment
-e git+https://example.invalid/repo.git@abc#egg=local_thing
h5py==2.10.0
Keras-Applications==1.0.8
nvidia-cudnn-cu12==9.28.0.42
nvidia_cublas_cu12==12.9.3.13
numpy==1.19.5
pip==21.3.1
protobuf==3.19.6
setuptools==40.6.2
some-wheel @ file:///tmp/wheels/some_wheel-1.2.3-py3-none-any.whl
tensorflow==1.12.3
typing_extensions==4.1.1
"""


def test_parse_freeze():
    got = vp.parse_freeze(FREEZE)
    assert got["keras-applications"] == "1.0.8" and got["typing-extensions"] == "4.1.1"
    assert got["nvidia-cublas-cu12"] == "12.9.3.13" and got["pip"] == "21.3.1"
    assert got["some-wheel"] == "1.2.3"
    assert "local-thing" not in got and "# a comment" not in got


def test_key_packages_keep_the_pitfall_packages_and_every_nvidia_wheel():
    keep = vp.key_packages(vp.parse_freeze(FREEZE))
    assert list(keep)[:1] == ["tensorflow"]
    assert {"numpy", "protobuf", "h5py", "gast", "typing-extensions", "setuptools", "pip"} <= set(keep)
    assert "astor" not in keep and "some-wheel" not in keep
    assert list(keep)[-2:] == ["nvidia-cublas-cu12", "nvidia-cudnn-cu12"]


def test_built_from_source_reads_old_and_new_pips():
    old = "Installing collected packages: ...\n  Running setup.py install for grpcio ... done\n" \
          "  Running setup.py bdist_wheel for gast ... done\n"
    new = "Building wheels for collected packages: gast, wrapt\n  Building wheel for gast (setup.py) ... done\n" \
          "  Building wheel for wrapt (pyproject.toml) ... done\n"
    assert vp.built_from_source(old) == ["grpcio", "gast"]
    assert vp.built_from_source(new) == ["gast", "wrapt"]
    assert vp.built_from_source("Successfully installed tensorflow-2.13.1\n") == []


def test_a_pip_fix_run_follows_failed_installs_and_compiled_sdists_only():
    rec = {"variant": "plan", "failed_step": "install", "built_from_source": []}
    assert vp.needs_pip_fix(rec)
    assert vp.needs_pip_fix(dict(rec, failed_step="", built_from_source=["grpcio", "gast"]))
    assert not vp.needs_pip_fix(dict(rec, failed_step="", built_from_source=["gast", "termcolor"]))
    assert not vp.needs_pip_fix(dict(rec, failed_step="h5_save_load"))
    assert not vp.needs_pip_fix(dict(rec, variant="plan+pip<22"))
    assert vp.PIP_FOR_PYTHON["3.6"] == "pip<22"


def test_pip_env_keeps_the_index_and_drops_the_machines_pip_settings():
    base = {"PATH": "/usr/bin", "PIP_FIND_LINKS": "/opt/wheels", "PIP_EXTRA_INDEX_URL": "file:///opt/x",
            "PIP_CONSTRAINT": "/etc/c.txt", "PIP_NO_INDEX": "1", "PIP_CERT": "/etc/ssl/ca.crt",
            "PIP_DEFAULT_TIMEOUT": "60", "PYTHONPATH": "/src", "VIRTUAL_ENV": "/v"}
    env = vp.pip_env("https://index.invalid/simple", Path("/cache"), base)
    assert env["PIP_INDEX_URL"] == "https://index.invalid/simple"
    assert env["PIP_CONFIG_FILE"] == os.devnull and env["PIP_CONSTRAINT"] == ""
    assert env["PIP_CACHE_DIR"] == "/cache" and env["PIP_CERT"] == "/etc/ssl/ca.crt"
    assert not {"PIP_FIND_LINKS", "PIP_EXTRA_INDEX_URL", "PIP_NO_INDEX", "PYTHONPATH", "VIRTUAL_ENV"} & set(env)
    assert env["PATH"] == "/usr/bin"


def test_error_text_keeps_the_exception_line_and_no_hosts():
    tb = vp.Proc(1, "", "Traceback (most recent call last):\n  File \"x.py\", line 3, in <module>\n"
                        "    m2 = tf.keras.models.load_model(p)\n"
                        "AttributeError: 'str' object has no attribute 'decode'\n", 1.0)
    assert vp.error_text(tb) == "AttributeError: 'str' object has no attribute 'decode'"
    pip_fail = vp.Proc(1, "Collecting tensorflow==1.8.0\n",
                       "  Could not fetch URL https://index.invalid/simple/pip/: There was a problem\n"
                       "ERROR: No matching distribution found for tensorflow==1.8.0\n", 2.0)
    text = vp.error_text(pip_fail)
    assert "No matching distribution found for tensorflow==1.8.0" in text
    assert "index.invalid" not in text and "<host>/simple/pip/" in text
    assert vp.error_text(vp.Proc(-1, "", "", 600.0)) == "timed out after 600 s"
    multi = vp.Proc(1, "printed on stdout\n", "Traceback (most recent call last):\n  File \"x.py\", line 1\n"
                    "TypeError: Unable to convert function return value to a Python type! The signature was\n"
                    "\t() -> handle\n", 1.0)
    assert vp.error_text(multi) == ("TypeError: Unable to convert function return value to a Python type! "
                                    "The signature was () -> handle")


def test_every_subprocess_has_a_timeout_that_kills_it():
    start = time.monotonic()
    proc = vp.run([sys.executable, "-c", "import time; time.sleep(30)"], timeout=0.5)
    assert proc.rc == -1 and not proc.ok and time.monotonic() - start < 10
    assert vp.run(["/nonexistent/binary"], timeout=5).rc == -2


def test_the_script_passes_a_timeout_to_every_subprocess_call():
    tree = ast.parse((ROOT / "scripts" / "verify_plans.py").read_text())
    for node in ast.walk(tree):
        if isinstance(node, ast.Call) and isinstance(node.func, ast.Name) and node.func.id == "run":
            assert any(k.arg == "timeout" for k in node.keywords), ast.unparse(node)
        if isinstance(node, ast.Call) and isinstance(node.func, ast.Attribute) and node.func.attr in (
                "run", "check_output", "call", "check_call") and getattr(node.func.value, "id", "") == "subprocess":
            raise AssertionError(f"use run(..., timeout=...): {ast.unparse(node)}")


# --- the smoke test ----------------------------------------------------------------------------------------------
@pytest.mark.parametrize("name", list(vp.SMOKE_STEPS))
def test_smoke_steps_are_valid_python_3_6(name):
    ast.parse(vp.SMOKE_PRELUDE + vp.SMOKE_STEPS[name], feature_version=(3, 6))


def test_smoke_covers_the_issues_steps():
    assert set(vp.CORE_STEPS) <= set(vp.SMOKE_STEPS)
    assert list(vp.SMOKE_STEPS)[0] == "import"


# --- records -----------------------------------------------------------------------------------------------------
def make_record(**target):
    ctx = vp.Context(cli=["stackresolve"], index="https://index.invalid/simple", cache_dir=Path("/c"),
                     work_dir=None, commit="0123abc", date="2026-11-24")
    t = vp.Target(**{"tf": "1.12", "python": "3.6", "cpu": True, **target})
    plan = vp.parse_plan(PLAN_1_12)
    facts = {"target": t, "plan": plan, "python_full": "3.6.15", "pip_version": "21.3.1",
             "installed": vp.key_packages(vp.parse_freeze(FREEZE)), "pip_check": "ok",
             "requirements": vp.adjust_requirements(plan.requirements, t.drop, t.add),
             "instructions": plan.instructions, "built_from_source": ["gast"]}
    steps = [vp.step_result("plan", "pass", 0.3), vp.step_result("install", "pass", 40.0),
             vp.step_result("import", "pass", 3.2),
             vp.step_result("h5_save_load", "fail", 4.0, "AttributeError: 'str' object has no attribute 'decode'"),
             vp.step_result("summary_write", "n/a", 1.0)]
    return vp.build_record(ctx, facts, steps, 51.4)


def test_build_record():
    rec = make_record(drop=("h5py",), add=("h5py",))
    assert rec["result"] == "fail" and rec["failed_step"] == "h5_save_load"
    assert rec["error"] == "AttributeError: 'str' object has no attribute 'decode'"
    assert rec["variant"] == "plan-h5py+h5py" and rec["requirements"][-1] == "h5py"
    assert "h5py<3" not in rec["requirements"] and "h5py<3" in rec["plan_requirements"]
    assert rec["target"] == {"tf": "1.12", "os": "linux", "python": "3.6", "cpu": True}
    assert rec["stackresolve_commit"] == "0123abc" and rec["source"] and rec["seconds"] == 51
    passing = make_record()
    assert passing["result"] == "fail"  # the h5 step
    steps = [st for st in passing["step"] if st["status"] != "fail"]
    ctx = vp.Context(["stackresolve"], "", Path("/"), None, "c", "2026-11-24")
    facts = {"target": vp.Target("1.12", "3.6"), "plan": None, "python_full": "", "pip_version": "", "installed": {},
             "pip_check": "", "requirements": [], "instructions": [], "built_from_source": []}
    rec = vp.build_record(ctx, facts, steps, 1.0)
    assert rec["result"] == "pass" and rec["failed_step"] == "" and rec["tf_requirement"] == ""


def make_lock_record(steps=None):
    ctx = vp.Context(cli=["stackresolve"], index="https://index.invalid/simple", cache_dir=Path("/c"),
                     work_dir=None, commit="0123abc", date="2026-11-24")
    lock = vp.parse_lock(LOCK_1_15 + LOCK_GPU_TAIL)
    facts = {"target": vp.parse_target("1.15@3.7:cpu", lock=True), "plan": lock, "python_full": "3.7.16",
             "pip_version": "22.0.4", "installed": {"tensorflow": "1.15.5"}, "pip_check": "ok",
             "requirements": lock.requirements, "instructions": vp.lock_instructions(lock),
             "built_from_source": ["gast"]}
    steps = steps or [vp.step_result("plan", "pass", 2.9), vp.step_result("install", "pass", 24.1),
                      vp.step_result("lock_check", "pass", 0.8), vp.step_result("import", "pass", 1.2)]
    return vp.build_record(ctx, facts, steps, 53.0)


def test_lock_records_say_kind_lock_and_describe_the_lock(tmp_path):
    rec = make_lock_record()
    assert rec["kind"] == "lock" and rec["variant"] == "lock" and make_record()["kind"] == "plan"
    assert rec["tf_requirement"] == "tensorflow==1.15.5" and rec["plan_requirements"][-1] == "nvidia-cudnn-cu12==9.3.0.75"
    assert rec["lock"]["platform"] == "x86_64-manylinux_2_28" and rec["lock"]["pins"] == 5
    assert rec["lock"]["hashes"] == 6 and len(rec["lock"]["sha256"]) == 64
    assert rec["lock"]["cuda_wheels"] == {"nvidia-cudnn-cu12": "9.3.0.75"}
    assert "--require-hashes --no-deps" in rec["source"] and rec["result"] == "pass"
    assert vp.assign_id(rec, set()) == "2026-11-24-tf1.15-py3.7-cpu-lock"
    failed = make_lock_record([vp.step_result("plan", "pass", 1.0), vp.step_result("install", "pass", 1.0),
                               vp.step_result("lock_check", "fail", 0.5, "six: locked 1.17.0, not installed")])
    assert failed["result"] == "fail" and failed["failed_step"] == "lock_check" and not vp.needs_pip_fix(failed)
    results = tmp_path / "verified.toml"
    rec["id"] = vp.assign_id(rec, set())
    vp.append_records(results, [rec])
    (back,) = tomllib.loads(results.read_text())["run"]
    assert back == rec


def test_ids_are_unique_and_name_the_target_and_variant():
    rec = make_record(add=("h5py<3",), pip_upgrade="pip<22")
    taken = set()
    first = vp.assign_id(rec, taken)
    assert first == "2026-11-24-tf1.12-py3.6-cpu-plan+piplt22+h5pylt3"
    taken.add(first)
    assert vp.assign_id(rec, taken) == first + "-2"


def test_records_round_trip_through_toml(tmp_path):
    results = tmp_path / "verified.toml"
    a, b = make_record(), make_record()
    a["id"] = b["id"] = vp.assign_id(a, set())  # another invocation took the id meanwhile: the second is renamed
    b["error"] = 'quote " backslash \\ tab \t newline \n and \x7f'
    vp.append_records(results, [a])
    vp.append_records(results, [b])
    text = results.read_text()
    assert text.startswith(vp.HEADER)
    runs = tomllib.loads(text)["run"]
    assert [r["id"] for r in runs] == [a["id"], a["id"] + "-2"] == [a["id"], b["id"]]
    assert runs[0] == a and runs[1]["error"] == b["error"]
    assert runs[1]["step"] == b["step"] and runs[0]["installed"] == a["installed"]


# --- the results file and pitfalls.toml's `verified_by` ---------------------------------------------------------
RUN_KEYS = {"id", "date", "target", "variant", "result", "failed_step", "error", "tf_requirement",
            "plan_requirements", "requirements", "instructions", "python", "pip", "installed", "pip_check",
            "stackresolve_commit", "seconds", "source", "step"}
STATUSES = {"pass", "fail", "n/a", "skipped"}


@pytest.fixture(scope="module")
def runs():
    with open(RESULTS, "rb") as f:
        return tomllib.load(f)["run"]


def test_results_file_records_are_complete_and_consistent(runs):
    assert runs, "no runs recorded"
    ids = [r["id"] for r in runs]
    assert len(ids) == len(set(ids)), "run ids must be unique"
    for r in runs:
        assert RUN_KEYS <= set(r), (r["id"], RUN_KEYS - set(r))
        assert r["result"] in ("pass", "fail") and r["target"]["os"] == "linux"
        statuses = [s["status"] for s in r["step"]]
        assert set(statuses) <= STATUSES, r["id"]
        failed = [s["name"] for s in r["step"] if s["status"] == "fail"]
        assert (r["result"] == "fail") == bool(failed), r["id"]
        assert r["failed_step"] == (failed[0] if failed else ""), r["id"]
        if r["result"] == "pass":
            assert r["requirements"] and r["installed"], r["id"]
            assert {s["name"] for s in r["step"]} >= set(vp.CORE_STEPS), r["id"]
        assert r.get("kind", "plan") in ("plan", "lock"), r["id"]
        assert (r.get("kind") == "lock") == r["variant"].startswith("lock") == ("lock" in r), r["id"]
        if r.get("kind") == "lock":
            assert r["instructions"][-1].endswith("--require-hashes --no-deps -r requirements.txt"), r["id"]
            assert r["lock"]["pins"] == len(r["requirements"]) and r["lock"]["hashes"] >= r["lock"]["pins"]
            if r["result"] == "pass":
                assert "lock_check" in [s["name"] for s in r["step"]], r["id"]
                assert r["pip_check"] == "ok", r["id"]


def test_four_linux_locks_installed_and_passed_the_smoke_test(runs):
    """The issue's requirement: full locks of 4 Linux targets installed into fresh venvs pass the smoke test."""
    passed = {(r["target"]["tf"], r["target"]["python"], r["target"]["cpu"]) for r in runs
              if r.get("kind") == "lock" and r["result"] == "pass" and r["target"]["os"] == "linux"}
    assert len(passed) >= 4, passed


def pins_with_evidence():
    with open(PITFALLS, "rb") as f:
        return [p for p in tomllib.load(f)["pin"] if "verified_by" in p]


def test_pitfalls_verified_by_ids_exist_and_match_the_pin(runs):
    by_id = {r["id"]: r for r in runs}
    pins = pins_with_evidence()
    assert pins, "no pitfall cites a verified install"
    for pin in pins:
        assert isinstance(pin["verified_by"], list) and pin["verified_by"], pin
        for rid in pin["verified_by"]:
            assert rid in by_id, f"{pin['package']} {pin['tf']}: verified_by names an unknown run {rid!r}"
            run = by_id[rid]
            tf_version = Requirement(run["tf_requirement"]).specifier
            (spec,) = list(tf_version)
            assert SpecifierSet(pin["tf"]).contains(spec.version, prereleases=True), (pin["tf"], rid)
            assert run["target"]["os"] in pin.get("os", ["linux", "windows", "macos"]), (pin["package"], rid)


def test_check_pitfalls_accepts_verified_by():
    sys.path.insert(0, str(ROOT / "scripts"))
    try:
        import check_pitfalls
    finally:
        sys.path.pop(0)
    assert check_pitfalls.load_pins(PITFALLS)


# --- end to end --------------------------------------------------------------------------------------------------
@pytest.mark.network
def test_one_small_target_end_to_end(tmp_path):
    """TF 1.13 CPU on Python 3.7 (tensorflow 1.13.2: an 92 MB wheel; pip 22 in the venv installs it as written)."""
    if vp.find_python("3.7") is None:
        pytest.skip("no CPython 3.7 on this machine")
    results = tmp_path / "verified.toml"
    done = subprocess.run([sys.executable, str(ROOT / "scripts" / "verify_plans.py"), "1.13@3.7:cpu",
                           "--results", str(results), "--work-dir", str(tmp_path / "work")],
                          capture_output=True, text=True, timeout=1800)
    assert results.exists(), done.stdout + done.stderr
    (run,) = tomllib.loads(results.read_text())["run"]
    assert run["tf_requirement"] == "tensorflow==1.13.2" and run["python"].startswith("3.7.")
    assert run["result"] == "pass", (run["failed_step"], run["error"])
    assert done.returncode == 0, done.stdout + done.stderr
    assert run["installed"]["tensorflow"] == "1.13.2" and run["installed"]["h5py"].startswith("2.")
    # the plan's own instructions: the venv, pip upgraded in it, the requirements; then the smoke steps
    assert [s["name"] for s in run["step"]][:5] == ["plan", "venv", "pip_upgrade", "install", "import"]
    assert not list((tmp_path / "work").iterdir()), "the venv is deleted after recording"


@pytest.mark.network
def test_one_full_lock_end_to_end(tmp_path):
    """TF 1.15 CPU on Python 3.7, its full lock (25 pins, tensorflow 1.15.5: a 110 MB wheel): uv locks it, pip
    installs it with --require-hashes --no-deps, the lock is complete and the smoke test passes."""
    if vp.find_python("3.7") is None:
        pytest.skip("no CPython 3.7 on this machine")
    results = tmp_path / "verified.toml"
    done = subprocess.run([sys.executable, str(ROOT / "scripts" / "verify_plans.py"), "--lock", "1.15@3.7:cpu",
                           "--results", str(results), "--work-dir", str(tmp_path / "work")],
                          capture_output=True, text=True, timeout=1800)
    assert results.exists(), done.stdout + done.stderr
    (run,) = tomllib.loads(results.read_text())["run"]
    assert run["kind"] == "lock" and run["variant"] == "lock" and run["id"].endswith("-tf1.15-py3.7-cpu-lock")
    assert run["tf_requirement"] == "tensorflow==1.15.5" and run["python"].startswith("3.7.")
    assert run["result"] == "pass", (run["failed_step"], run["error"])
    assert done.returncode == 0, done.stdout + done.stderr
    assert run["instructions"][-1] == ".venv/bin/python -m pip install --require-hashes --no-deps -r requirements.txt"
    assert [s["name"] for s in run["step"]][:5] == ["plan", "venv", "install", "lock_check", "import"]
    assert run["pip_check"] == "ok" and run["installed"]["tensorflow"] == "1.15.5"
    assert run["lock"]["platform"] == "x86_64-manylinux_2_28" and run["lock"]["cuda_wheels"] == {}
    assert not list((tmp_path / "work").iterdir()), "the venv is deleted after recording"
