"""The JSON Schemas in schemas/: well-formed, shipped, printed by `stackresolve schema`, and every JSON document the
commands print validates against its own, over a spread of targets (the autouse fixture in conftest.py does the
same for every other test's JSON output)."""

import copy
import json
import subprocess
import sys
from pathlib import Path

import pytest
from click.testing import CliRunner
from jsonschema import Draft202012Validator

from schema_check import assert_valid, problems
from stackresolve import schemas
from stackresolve.cli import app
import locations

ERRORS = locations.FIXTURES / "errors"

# The cases the README's situation table is built from, and a few edges: an impossible target, a CPU plan, NVIDIA's
# 1.15 build, a container, PyTorch's own index, JAX's CUDA 12 route, Apple's Metal.
PLANS = [
    ["--tf", "1.15", "--gpu", "RTX 3090", "--os", "linux"],
    ["--tf", "1.15", "--gpu", "RTX 3090", "--os", "linux", "--driver", "470.82.01"],
    ["--tf", "1.15", "--gpu", "GTX 1080 Ti", "--os", "linux"],
    ["--tf", "2.3", "--gpu", "GTX 1080", "--os", "windows"],
    ["--tf", "latest", "--gpu", "H100", "--os", "linux"],
    ["--tf", "2.15", "--gpu", "Apple M2", "--os", "macos"],
    ["--tf", "2.10", "--cpu", "--os", "linux"],
    ["--tf", "1.15", "--python", "3.12", "--os", "linux"],  # impossible: no 1.15 wheel for 3.12
    ["--torch", "latest", "--gpu", "RTX 5090", "--os", "linux"],
    ["--torch", "2.5", "--gpu", "GTX 1080", "--driver", "470.82.01", "--os", "linux"],
    ["--torch", "latest", "--gpu", "K80", "--os", "windows"],
    ["--jax", "latest", "--gpu", "GTX 1080", "--os", "linux"],
    ["--jax", "latest", "--gpu", "RTX 4090", "--os", "windows"],
]


def run(*args, input=None):
    return CliRunner().invoke(app, list(args), input=input)


def document(result) -> dict:
    doc = json.loads(result.stdout)
    assert_valid(doc)
    return doc


def test_every_document_has_a_well_formed_schema_with_an_id():
    ids = set()
    shipped = {p.name.removesuffix(".schema.json") for p in Path(schemas.__file__).parent.glob("*.schema.json")}
    assert shipped == set(schemas.DOCUMENTS) | {"common"}
    for name, tag in schemas.DOCUMENTS.items():
        schema = schemas.load(name)
        Draft202012Validator.check_schema(schema)
        assert schema["$id"].endswith(f"/{name}.schema.json") and schema["$id"] not in ids
        ids.add(schema["$id"])
        assert schema["title"] == tag
        assert schema["properties"]["schema"] == {"const": tag}


@pytest.mark.parametrize("flags", PLANS, ids=lambda f: " ".join(f))
def test_plan_lock_and_check_documents_follow_their_schemas(flags, tmp_path):
    plan = run("plan", "--no-detect", *flags, "--format", "json")
    assert plan.exit_code in (0, 1), plan.output
    doc = document(plan)
    assert (doc["stack"] is None) == (plan.exit_code == 1) == (doc["status"] == "impossible")
    assert not set(doc["plans"]) & set(doc["refused_formats"])  # a refused format has no plan text
    if doc["stack"] is None:
        return
    lock_file = tmp_path / "stackresolve.lock"
    assert run("plan", "--no-detect", *flags, "--format", "lock", "-o", str(lock_file)).exit_code == 0
    assert_valid(json.loads(lock_file.read_text()))
    os_flag = flags[flags.index("--os") + 1]
    for extra in ([], ["--driver", "390.48"]):  # matches what it can see; a driver too old for any GPU stack
        check = run("check", str(lock_file), "--no-detect", "--os", os_flag, *extra, "--format", "json")
        assert check.exit_code in (0, 1), check.output
        assert document(check)["matches"] is (check.exit_code == 0)


@pytest.mark.parametrize("source, target", [
    ("issue-lab.toml", ["--tf", "latest"]), ("blackwell-pascal.toml", ["--torch", "latest"]),
    ("issue-jax.toml", ["--jax", "latest"]), ("gfd-cluster-nodes.json", ["--tf", "latest"]),
    ("lab", ["--tf", "2.15"]), ("gfd-cluster-nodes.json", ["--tf", "1.15"]),
])
def test_fleet_documents_follow_the_plan_schema(source, target):
    fleet = locations.FIXTURES / "fleet" / source
    result = run("plan", "--no-detect", *target, "--fleet", str(fleet), "--json")
    assert result.exit_code in (0, 1), result.output
    doc = document(result)
    assert doc["fleet"]["groups"] and (doc["fleet"]["stacks"] or doc["fleet"]["excluded"])


@pytest.mark.parametrize("log", sorted(p.name for p in ERRORS.glob("*.log")))
def test_explain_documents_follow_their_schema(log):
    result = run("explain", "--file", str(ERRORS / log), "--no-detect", "--format", "json")
    assert result.exit_code in (0, 1), result.output
    document(result)


@pytest.mark.parametrize("args", [
    ["matrix", "--gpu", "K80"], ["matrix", "--gpu", "GTX 1080", "--torch"], ["matrix", "--gpu", "RTX 4090", "--jax"],
    ["matrix", "--gpu", "Apple M2", "--os", "macos"],
    ["show", "tf", "1.15"], ["show", "tf", "2.16"], ["show", "torch", "2.5"], ["show", "torch", "1.8"],
    ["show", "jax", "0.4"], ["gpus"], ["gpus", "3090"],
], ids=" ".join)
def test_knowledge_documents_follow_their_schemas(args):
    result = run(*args, "--format", "json")
    assert result.exit_code == 0, result.output
    document(result)


def test_this_machines_detect_and_doctor_documents_follow_their_schemas():
    assert run("detect", "--json").exit_code == 0
    document(run("detect", "--format", "json"))
    doctor = run("doctor", "--format", "json")
    assert doctor.exit_code in (0, 1), doctor.output
    assert document(doctor)["healthy"] is (doctor.exit_code == 0)


def test_the_schemas_reject_what_the_contract_forbids():
    plan = json.loads(run("plan", "--no-detect", "--tf", "1.15", "--gpu", "RTX 3090", "--os", "linux",
                          "--format", "json").stdout)
    assert not problems(plan)
    for path, value in [(("stack", "framework", "vendor"), "somebody"), (("status",), "fine"),
                        (("stack", "gpu", "support"), "maybe"), (("findings", 0, "severity"), "fatal"),
                        (("request", "os"), "beos"), (("stack", "python", "recommended"), 3.8)]:
        broken = copy.deepcopy(plan)
        node = broken
        for key in path[:-1]:
            node = node[key]
        node[path[-1]] = value
        assert problems(broken), path
    impossible_with_stack = dict(plan, status="impossible")
    assert problems(impossible_with_stack)
    without_plans = {k: v for k, v in plan.items() if k != "plans"}
    assert any("'plans' is a required property" in p for p in problems(without_plans))
    added = dict(plan, a_field_added_later={"any": "shape"})  # documents change only by adding fields
    assert not problems(added)


@pytest.mark.parametrize("name", list(schemas.DOCUMENTS))
def test_schema_command_prints_a_schema_that_validates_on_its_own(name):
    result = run("schema", name)
    assert result.exit_code == 0
    printed = json.loads(result.stdout)
    assert printed == schemas.load(name)
    # a plain validator with no registry of our files: what a user's tool gets from `stackresolve schema NAME`
    Draft202012Validator.check_schema(printed)
    Draft202012Validator(printed).is_valid({"schema": schemas.DOCUMENTS[name]})


def test_printed_plan_schema_alone_validates_a_plan():
    printed = json.loads(run("schema", "plan").stdout)
    plan = json.loads(run("plan", "--no-detect", "--torch", "2.5", "--gpu", "GTX 1080", "--os", "linux",
                          "--json").stdout)
    assert not list(Draft202012Validator(printed).iter_errors(plan))


def test_an_unknown_schema_name_is_one_line_with_the_closest_match():
    result = subprocess.run([sys.executable, "-m", "stackresolve", "schema", "plans"], capture_output=True,
                            text=True, timeout=60)
    assert result.returncode == 2
    assert result.stderr.strip().splitlines() == [
        f"stackresolve: error: schema 'plans': use one of {', '.join(schemas.DOCUMENTS)} (did you mean plan?)"]


def test_the_plan_path_imports_no_schema_code():
    code = ("import sys; from stackresolve.cli import main; sys.argv = ['stackresolve', 'plan', '--tf', '1.15', "
            "'--no-detect', '--os', 'linux', '--json']\n"
            "try:\n    main()\nexcept SystemExit:\n    pass\n"
            "print(sorted(m for m in sys.modules if m.split('.')[0] == 'jsonschema' or m == 'stackresolve.schemas'),"
            " file=sys.stderr)")
    result = subprocess.run([sys.executable, "-c", code], capture_output=True, text=True, timeout=60)
    assert result.stderr.strip().splitlines()[-1] == "[]"
    assert json.loads(result.stdout)["schema"] == "stackresolve/plan@1"
