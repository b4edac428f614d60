"""`plan --fleet`: inventories read as their sources define them, one stack (or the fewest) decided by the
resolver over many machines, and the plans, locks and node selections that follow from it.

Fixtures (tests/fixtures/fleet/README.md says where every label and fact comes from):
- gfd-cluster-nodes.json: a `kubectl get nodes -o json` List with GPU Feature Discovery labels (a T4 pool, an A100
  of an old GFD without driver-version.full, H100 nodes, a MIG A100, a Kepler K80 node, a control-plane node);
- lab/: `detect --format json` reports of a mixed lab whose facts are real nvidia-smi captures;
- issue-lab.toml, issue-jax.toml, blackwell-pascal.toml: inventory files with issue 26's examples.
"""

from __future__ import annotations

import json

import pytest
import yaml
from click.testing import CliRunner
from packaging.version import Version

from stackresolve.cli import app
import locations

FIXTURES = locations.FIXTURES / "fleet"
CLUSTER = FIXTURES / "gfd-cluster-nodes.json"


@pytest.fixture(scope="module")
def kb():
    from stackresolve.knowledge.loader import knowledge

    return knowledge()


def run(*args):
    return CliRunner().invoke(app, [str(a) for a in args])


def fleet_json(source, *target):
    result = run("plan", "--fleet", source, *target, "--format", "json")
    assert result.exit_code in (0, 1), result.output
    return json.loads(result.stdout)


def error_lines(result) -> list[str]:
    assert "Traceback" not in result.output
    return [line for line in result.stderr.splitlines() if line.strip()]


def nodes_doc(*labels_per_node: dict, names=None) -> str:
    items = [{"apiVersion": "v1", "kind": "Node",
              "metadata": {"name": (names or [f"n{i}" for i in range(len(labels_per_node))])[i], "labels": labels}}
             for i, labels in enumerate(labels_per_node)]
    return json.dumps({"apiVersion": "v1", "kind": "List", "items": items})


# -- reading the inventories ---------------------------------------------------------------------------------
def test_gfd_labels_give_each_node_its_gpu_driver_and_system(kb):
    from stackresolve.fleet.readers import kb_lookup, read_document

    members = {m.name: m for m in read_document(CLUSTER.read_text(), "nodes.json", kb_lookup(kb))}
    t4 = members["gke-t4-a"]
    # GFD's label table: Tesla-T4, compute 7.5, driver-version.full 550.107.02, 2 GPUs; NFD: ubuntu 22.04
    assert (t4.gpus[0].name, str(t4.gpus[0].cc), t4.gpus[0].model) == ("Tesla-T4", "7.5", "Tesla T4")
    assert (str(t4.driver), t4.gpu_count, t4.distro, t4.release, t4.pool) == ("550.107.02", 2, "ubuntu", "22.04", "t4-pool")
    # the old GFD of the README example: major 455, minor 06, rev "" and no driver-version.full
    assert str(members["dgx-a100"].driver) == "455.06"
    assert str(members["dgx-a100"].gpus[0].cc) == "8.0"
    # MIG 'single' strategy: the product names the MIG profile and no compute labels are written
    mig = members["a100-mig"]
    assert (mig.gpus[0].name, mig.gpus[0].model, str(mig.gpus[0].cc)) == ("A100-SXM4-40GB-MIG-1g.5gb", "A100 SXM4 40GB",
                                                                      "8.0")
    assert str(members["h100-a"].gpus[0].cc) == "9.0"
    cpu = members["node1"]
    assert cpu.gpus == () and "a CPU machine" in cpu.notes[0]


def test_the_product_label_forms_of_gfd(kb):
    from stackresolve.fleet.readers import model_of_product

    # resource.go productLabel: spaces become '-', MIG devices add -MIG-<profile>, a shared GPU -SHARED
    assert model_of_product("NVIDIA-A100-SXM4-40GB-MIG-1g.5gb") == "NVIDIA A100 SXM4 40GB"
    assert model_of_product("Tesla-T4-SHARED") == "Tesla T4"
    assert kb.find_gpu(model_of_product("NVIDIA-H100-80GB-HBM3")).cc == "9.0"
    # NVIDIA's GPU Operator documentation, "GPU Operator with MIG" (single strategy, 1g.10gb profile): the label
    # after MIG Manager applied the profile
    assert kb.find_gpu(model_of_product("NVIDIA-H100-80GB-HBM3-MIG-1g.10gb")).cc == "9.0"


def test_an_unknown_product_with_compute_labels_still_plans(tmp_path):
    doc = tmp_path / "nodes.json"
    doc.write_text(nodes_doc({"nvidia.com/gpu.product": "NVIDIA-Future-Board", "nvidia.com/gpu.compute.major": "8",
                              "nvidia.com/gpu.compute.minor": "6", "nvidia.com/cuda.driver-version.full": "550.107.02"}))
    result = run("plan", "--fleet", doc, "--torch", "latest", "--format", "json")
    assert result.exit_code == 0, result.output
    group = json.loads(result.stdout)["fleet"]["groups"][0]
    assert group["gpus"] == [{"name": "NVIDIA-Future-Board", "model": None, "compute_capability": "8.6",
                              "vendor": "nvidia", "gfx": None, "family": None}]
    assert group["stack"] == 0


def test_a_kubectl_document_on_standard_input():
    result = CliRunner().invoke(app, ["plan", "--fleet", "-", "--jax", "latest", "--format", "json"],
                                input=CLUSTER.read_text())
    assert result.exit_code == 0, result.output
    origins = {m["origin"] for g in json.loads(result.stdout)["fleet"]["groups"] for m in g["members"]}
    assert origins == {"standard input"}


def test_detect_reports_of_a_folder_are_machines(kb):
    from stackresolve.cli.fleet import read_sources
    from stackresolve.fleet.readers import kb_lookup

    members = {m.name: m for m in read_sources([str(FIXTURES / "lab")], kb_lookup(kb))}
    assert set(members) == {"ws-rtx4070", "ws-gtx1080ti", "srv-tesla-p4", "gce-tesla-k80", "ci-runner"}
    # the banner gives no compute capability: the GPU table's RTX 4070 does (8.9)
    assert str(members["ws-rtx4070"].gpus[0].cc) == "8.9" and str(members["ws-rtx4070"].driver) == "550.40.07"
    assert members["ws-gtx1080ti"].os.value == "windows" and str(members["ws-gtx1080ti"].driver) == "442.92"
    assert members["ci-runner"].gpus == ()


@pytest.mark.parametrize("labels, expected", [
    ({"nvidia.com/gpu.product": "Tesla-T4", "nvidia.com/gpu.compute.major": "seven",
      "nvidia.com/gpu.compute.minor": "5"}, "node bad-node: nvidia.com/gpu.compute.major/minor 'seven'/'5'"),
    ({"nvidia.com/gpu.product": "Tesla-T4", "nvidia.com/cuda.driver-version.full": "latest"},
     "node bad-node: nvidia.com/cuda.driver-version.full 'latest'"),
    ({"nvidia.com/gpu.product": "Mystery-Board-9000"}, "node bad-node: nvidia.com/gpu.product 'Mystery-Board-9000': a "
                                                       "GPU model the knowledge base does not know"),
    ({"nvidia.com/gpu.product": "Tesla-T4", "nvidia.com/gpu.count": "two"}, "node bad-node: nvidia.com/gpu.count"),
])
def test_unparseable_labels_are_one_line_naming_file_and_node(tmp_path, labels, expected):
    doc = tmp_path / "nodes.json"
    doc.write_text(nodes_doc(labels, names=["bad-node"]))
    result = run("plan", "--fleet", doc, "--torch", "latest")
    assert result.exit_code == 2
    lines = error_lines(result)
    assert len(lines) == 1 and str(doc) in lines[0] and expected in lines[0], lines


def test_every_bad_node_and_report_is_named_on_its_own_line(tmp_path):
    nodes = tmp_path / "nodes.json"
    nodes.write_text(nodes_doc({"nvidia.com/gpu.product": "Mystery-Board"},
                               {"nvidia.com/gpu.compute.major": "x", "nvidia.com/gpu.compute.minor": "0"},
                               names=["a", "b"]))
    report = json.loads((FIXTURES / "lab" / "srv-tesla-p4.json").read_text())
    report["schema"] = "stackresolve/detect@2"
    folder = tmp_path / "reports"
    folder.mkdir()
    (folder / "p4.json").write_text(json.dumps(report))
    result = run("plan", "--fleet", nodes, "--fleet", folder, "--torch", "latest")
    assert result.exit_code == 2
    lines = error_lines(result)
    assert len(lines) == 3
    assert "node a:" in lines[0] and "node b:" in lines[1]
    assert "p4.json: a report of schema 'stackresolve/detect@2'; accepted: stackresolve/detect@1" in lines[2]


@pytest.mark.parametrize("text, expected", [
    ("[" * 100_000, "nested too deeply"),
    (json.dumps({"kind": "List", "items": [1]}), "item 0: not a Node"),
    ("machine = [1]", "machine 0: not a [[machine]] table"),
    ('[[machine]]\nnames = "ws"\n', 'give name = "..." or names = ["...", ...]'),
    (json.dumps({"schema": "stackresolve/detect@1", "os": "linux", "gpus": []}), "'os' is not as detect@1 writes it"),
    (json.dumps({"kind": "Node", "metadata": {"name": "n", "labels": {}}, "status": {"nodeInfo": {"architecture": [1]}}}),
     "node n: kubernetes.io/arch '[1]'"),
])
def test_malformed_documents_are_one_line_each(tmp_path, text, expected):
    source = tmp_path / "fleet"
    source.write_text(text)
    result = run("plan", "--fleet", source, "--torch", "latest")
    assert result.exit_code == 2
    lines = error_lines(result)
    assert len(lines) == 1 and expected in lines[0], lines


@pytest.mark.parametrize("text", [
    json.dumps({"apiVersion": "v1", "kind": "List", "items": []}),
    "# an inventory with nothing in it\n",
])
def test_an_empty_fleet_is_bad_input(tmp_path, text):
    source = tmp_path / "fleet"
    source.write_text(text)
    result = run("plan", "--fleet", source, "--torch", "latest")
    assert result.exit_code == 2
    assert len(error_lines(result)) == 1


def test_an_empty_folder_and_one_machine_flags_are_refused(tmp_path):
    result = run("plan", "--fleet", tmp_path, "--torch", "latest")
    assert result.exit_code == 2 and "without .json files" in error_lines(result)[0]
    result = run("plan", "--fleet", CLUSTER, "--gpu", "T4")
    assert result.exit_code == 2 and "--gpu describes one machine" in error_lines(result)[0]


def test_control_characters_of_an_inventory_never_reach_the_terminal(tmp_path):
    source = tmp_path / "fleet.toml"
    source.write_text('[[machine]]\nname = "ws\\u001b[2J"\ngpu = "RTX 4090"\ndriver = "550.54.15"\n')
    result = run("plan", "--fleet", source, "--torch", "latest")
    assert result.exit_code == 0
    assert "\x1b" not in result.output and "ws?[2J" in result.output


def test_inventory_typos_get_a_close_match(tmp_path):
    source = tmp_path / "fleet.toml"
    source.write_text('[[machine]]\nname = "ws"\ngpu = "RTX 4090"\ndriverr = "550.54.15"\n')
    result = run("plan", "--fleet", source, "--torch", "latest")
    assert result.exit_code == 2
    assert "machine ws: unknown key 'driverr' (did you mean driver?)" in error_lines(result)[0]


# -- the decision ------------------------------------------------------------------------------------------------
def test_pytorch_on_pascal_470_and_ada_550_is_one_cu118_stack():
    # issue 26: driver 470 rules out the cu12x builds (CUDA 12's minor-version floor is 525.60.13, cuda.toml), and
    # torch 2.7 is the last release with a cu118 build (pytorch RELEASE.md), whose code covers sm_61 and sm_89
    doc = fleet_json(FIXTURES / "issue-lab.toml", "--torch", "latest")
    stacks = doc["fleet"]["stacks"]
    assert len(stacks) == 1
    fw = stacks[0]["stack"]["framework"]
    assert Version(fw["version"]).release[:2] == (2, 7) and fw["variant"] == "cu118"
    assert {g["name"] for g in doc["fleet"]["groups"]} == set(stacks[0]["groups"])
    assert all(g["support"] == "native" for g in doc["fleet"]["groups"])
    assert doc["fleet"]["excluded"] == []
    # one request over both groups: each GPU with its own machines' driver (the RTX 4090 is checked against 550,
    # not the 470 that decides the CUDA: Ada needs >= 520.61.05), the lowest driver for the stack
    request = stacks[0]["request"]
    assert request["driver"] == "470.82.01"
    assert {(g["compute_capability"], g["driver"]) for g in request["gpus"]} == {("6.1", "470.82.01"),
                                                                                 ("8.9", "550.54.15")}


def test_jax_on_a100_550_and_h100_580_is_jax_cuda12_for_both():
    # the CUDA 13 plugin needs driver >= 580 (jax.toml / CUDA 13.0's minimum); the A100s' 550 keeps both on cuda12
    doc = fleet_json(FIXTURES / "issue-jax.toml", "--jax", "latest")
    stacks = doc["fleet"]["stacks"]
    assert len(stacks) == 1 and stacks[0]["stack"]["framework"]["extras"] == ["cuda12"]
    assert len(stacks[0]["groups"]) == 2


def test_tensorflow_216_on_the_cluster_excludes_the_k80_and_the_455_driver():
    # TensorFlow 2.16+ wheels carry no code for compute capability 3.7 (tensorflow.toml [[compiled_arch]]); its
    # CUDA 12 needs at least 525.60.13 even through minor-version compatibility (cuda.toml)
    doc = fleet_json(CLUSTER, "--tf", ">=2.16")
    excluded = {e["group"]: e for e in doc["fleet"]["excluded"]}
    k80 = next(e for e in excluded.values() if e["members"] == ["k80-old"])
    assert "compute capability 3.7" in k80["reason"]
    old_driver = next(e for e in excluded.values() if e["members"] == ["dgx-a100"])
    assert "needs an NVIDIA driver" in old_driver["reason"] and "525.60.13" in old_driver["reason"]
    cpu = next(e for e in excluded.values() if e["members"] == ["node1"])
    assert "--allow-cpu" in cpu["reason"]
    assert len(doc["fleet"]["stacks"]) == 1
    assert Version(doc["fleet"]["stacks"][0]["stack"]["framework"]["version"]) >= Version("2.16")
    assert doc["fleet"]["status"] == "warning"


def test_tensorflow_latest_on_the_cluster_gives_each_group_the_newest_stack_of_the_fewest():
    # TensorFlow's tested builds (tensorflow/docs source.md): 2.14 is the last on CUDA 11 (11.8), which driver 455
    # runs through minor-version compatibility (>= 450.80.02); 2.15+ need CUDA 12 (>= 525.60.13). 2.16 dropped
    # sm_35, the code the K80 (3.7) runs; 2.14's wheels carry only PTX for the H100 (compute_80): two stacks, and
    # the T4 and MIG A100 nodes, which both run, take the newer one.
    doc = fleet_json(CLUSTER, "--tf", "latest")
    stacks = doc["fleet"]["stacks"]
    assert len(stacks) == 2
    by_member = {g["members"][0]["name"]: g["stack"] for g in doc["fleet"]["groups"]}
    assert by_member["k80-old"] == by_member["dgx-a100"] == 1
    assert by_member["h100-a"] == by_member["gke-t4-a"] == by_member["a100-mig"] == 0
    assert stacks[1]["stack"]["framework"]["version"].startswith("2.14.")
    assert Version(stacks[0]["stack"]["framework"]["version"]) >= Version("2.16")


def test_blackwell_and_pascal_on_470_need_two_stacks_newest_first():
    # sm_120 needs a cu128+ build, which driver 470 cannot run; cu118 has no code for sm_120
    doc = fleet_json(FIXTURES / "blackwell-pascal.toml", "--torch", "latest")
    stacks = doc["fleet"]["stacks"]
    assert len(stacks) == 2
    first, second = (s["stack"]["framework"] for s in stacks)
    assert Version(first["version"]) > Version(second["version"]) and second["variant"] == "cu118"
    assert stacks[0]["groups"] == ["GeForce-RTX-5090/570.124.06"]
    assert stacks[1]["groups"] == ["GeForce-GTX-1080-Ti/470.82.01"]


def test_a_driver_older_than_its_gpu_excludes_that_group_only(tmp_path):
    # Ada GPUs need the driver of CUDA 11.8, their first toolkit (NVIDIA's CUDA Toolkit, Driver and Architecture
    # Matrix; CUDA 11.8's Linux driver 520.61.05): an RTX 4090 on 470 cannot run any CUDA build
    source = tmp_path / "fleet.toml"
    source.write_text('[[machine]]\nname = "ada-old"\ngpu = "RTX 4090"\ndriver = "470.82.01"\n\n'
                      '[[machine]]\nname = "pascal"\ngpu = "GTX 1080 Ti"\ndriver = "470.82.01"\n')
    doc = fleet_json(source, "--torch", "latest")
    [excluded] = doc["fleet"]["excluded"]
    assert excluded["members"] == ["ada-old"]
    assert "(Ada) GPUs need a driver that supports them: >= 520.61.05" in excluded["reason"]
    assert [g["members"][0]["name"] for g in doc["fleet"]["groups"] if g["stack"] == 0] == ["pascal"]


def test_a_gpu_less_group_gets_the_cpu_build_only_when_asked():
    without = fleet_json(FIXTURES / "lab", "--torch", "latest")
    assert any(e["members"] == ["ci-runner"] for e in without["fleet"]["excluded"])
    assert all(s["stack"]["cuda"] is not None for s in without["fleet"]["stacks"])
    with_cpu = fleet_json(FIXTURES / "lab", "--torch", "latest", "--allow-cpu")
    runner = next(g for g in with_cpu["fleet"]["groups"] if g["members"][0]["name"] == "ci-runner")
    assert with_cpu["fleet"]["stacks"][runner["stack"]]["stack"]["cuda"] is None
    assert runner["support"] == "cpu-only"


def test_windows_and_linux_machines_never_share_a_stack():
    doc = fleet_json(FIXTURES / "lab", "--torch", "latest")
    for s in doc["fleet"]["stacks"]:
        assert len({s["request"]["os"]}) == 1
        members = [g for g in doc["fleet"]["groups"] if g["name"] in s["groups"]]
        assert {g["os"] for g in members} == {s["request"]["os"]}


FLEETS = [(CLUSTER, ("--torch", "latest")), (CLUSTER, ("--tf", ">=2.16")), (CLUSTER, ("--jax", "latest")),
          (CLUSTER, ("--tf", "latest", "--allow-cpu")), (FIXTURES / "lab", ("--torch", "latest", "--allow-cpu")),
          (FIXTURES / "lab", ("--tf", "latest")), (FIXTURES / "issue-lab.toml", ("--torch", "latest")),
          (FIXTURES / "issue-jax.toml", ("--jax", "latest")), (FIXTURES / "blackwell-pascal.toml", ("--torch", "latest"))]


@pytest.mark.parametrize("source, target", FLEETS)
def test_no_group_gets_a_stack_newer_than_it_runs_alone_and_each_member_passes_check(tmp_path, source, target):
    """For every group: `plan` for that group alone returns a stack at least as new as the fleet's, and `check`
    of the fleet's lock for it passes on every member (given as flags, as `check --no-detect` is used)."""
    out = tmp_path / "out"
    result = run("plan", "--fleet", source, *target, "-o", out)
    assert result.exit_code == 0, result.output
    doc = json.loads((out / "fleet.json").read_text())
    for group in doc["fleet"]["groups"]:
        if group["stack"] is None:
            continue
        stack = doc["fleet"]["stacks"][group["stack"]]["stack"]
        machine = ["--os", group["os"]]
        if group["gpus"]:
            machine += ["--gpu-cc", group["gpus"][0]["compute_capability"]]
            machine += ["--driver", group["driver"]] if group["driver"] else []
        else:
            machine += ["--cpu"]
        alone = run("plan", "--no-detect", *target[:2], *machine, "--arch", group["arch"], "--format", "json")
        assert alone.exit_code == 0, alone.output
        alone_fw = json.loads(alone.stdout)["stack"]["framework"]
        assert Version(alone_fw["version"]) >= Version(stack["framework"]["version"]), (group["name"], alone_fw)
        lock = out / f"stack-{group['stack'] + 1}.lock"
        for member in group["members"]:
            checked = run("check", lock, "--no-detect", "--before-install",
                          *[m for m in machine if m != "--cpu"])
            assert checked.exit_code == 0, (member["name"], checked.output)


# -- output ------------------------------------------------------------------------------------------------
def test_json_adds_fleet_to_a_plan_document():
    doc = fleet_json(CLUSTER, "--torch", "latest")
    assert list(doc)[:8] == ["schema", "status", "request", "stack", "findings", "alternatives", "plans",
                             "knowledge_base"]
    assert doc["schema"] == "stackresolve/plan@1"
    assert doc["stack"] == doc["fleet"]["stacks"][0]["stack"]
    assert set(doc["plans"]) >= {"text", "pip", "lock", "conda", "dockerfile", "apt"}
    member = doc["fleet"]["groups"][1]["members"][0]
    assert set(member) == {"name", "origin", "gpu_count", "notes"}


def matches(term: dict, labels: dict) -> bool:
    """Kubernetes' nodeSelectorTerm semantics for the operators the snippets use: every expression holds."""
    for e in term["matchExpressions"]:
        if e["operator"] == "In" and labels.get(e["key"]) not in e["values"]:
            return False
        if e["operator"] == "DoesNotExist" and e["key"] in labels:
            return False
    return True


@pytest.mark.parametrize("target", [("--tf", ">=2.16", "--allow-cpu"), ("--torch", "latest")])
def test_each_stacks_node_affinity_selects_exactly_its_nodes(tmp_path, target):
    out = tmp_path / "out"
    assert run("plan", "--fleet", CLUSTER, *target, "-o", out).exit_code == 0
    doc = json.loads((out / "fleet.json").read_text())
    nodes = {n["metadata"]["name"]: n["metadata"]["labels"] for n in json.loads(CLUSTER.read_text())["items"]}
    for i, stack in enumerate(doc["fleet"]["stacks"]):
        snippet = yaml.safe_load((out / f"stack-{i + 1}.affinity.yaml").read_text())
        terms = snippet["affinity"]["nodeAffinity"]["requiredDuringSchedulingIgnoredDuringExecution"][
            "nodeSelectorTerms"]
        selected = {name for name, labels in nodes.items() if any(matches(t, labels) for t in terms)}
        members = {m["name"] for g in doc["fleet"]["groups"] if g["name"] in stack["groups"] for m in g["members"]}
        assert selected == members


def test_o_dir_writes_one_file_per_stack_and_format(tmp_path):
    out = tmp_path / "plans"
    result = run("plan", "--fleet", FIXTURES / "blackwell-pascal.toml", "--torch", "latest", "-o", out)
    assert result.exit_code == 0
    names = {p.name for p in out.iterdir()}
    for i in (1, 2):
        assert {f"stack-{i}.pip.txt", f"stack-{i}.lock", f"stack-{i}.Dockerfile", f"stack-{i}.environment.yml",
                f"stack-{i}.apt.sh"} <= names
    assert "stack-1.affinity.yaml" not in names  # machines described by hand have no node labels
    assert "torch==2.7.1" in (out / "stack-2.pip.txt").read_text()


def test_one_format_of_several_stacks_needs_a_folder():
    result = run("plan", "--fleet", FIXTURES / "blackwell-pascal.toml", "--torch", "latest", "--format", "pip")
    assert result.exit_code == 2
    assert "2 stacks: -o DIR" in result.stderr
    one = run("plan", "--fleet", FIXTURES / "issue-lab.toml", "--torch", "latest", "--format", "pip")
    assert one.exit_code == 0 and "torch==2.7.1" in one.stdout


def test_the_table_names_every_group_with_its_stack_and_status():
    result = run("plan", "--fleet", CLUSTER, "--tf", ">=2.16")
    assert result.exit_code == 0
    table = result.stdout
    assert "t4-pool" in table and "2: gke-t4-a, gke-t4-b" in table and "Tesla T4 (7.5)" in table
    assert "Excluded (cannot run the target at all):" in table
    assert "k80-old" in table and "excluded" in table


def test_one_format_for_several_stacks_is_one_line_and_a_file_like_o_is_refused(tmp_path):
    """--format dockerfile with two stacks: one line (no table on stderr), exit 2; `-o fleet.json` would become a
    folder: refused, nothing made."""
    from click.testing import CliRunner

    from stackresolve.cli.app import app

    cluster = str(locations.FIXTURES / "fleet" / "gfd-cluster-nodes.json")
    result = CliRunner().invoke(app, ["plan", "--fleet", cluster, "--tf", "latest", "--format", "dockerfile"])
    assert result.exit_code == 2 and result.stderr.count("\n") == 1 and "-o DIR" in result.stderr
    target = tmp_path / "fleet.json"
    result = CliRunner().invoke(app, ["plan", "--fleet", cluster, "--tf", "latest", "--format", "json", "-o",
                                      str(target)])
    assert result.exit_code == 2 and "names a folder" in result.stderr and not target.exists()


def test_the_table_gives_an_excluded_groups_reason_as_the_json_does(tmp_path):
    """The resolver summarises version lists where it words a reason (model/versionlist); the table prints that
    reason as it is, so it cannot count a list of ranges as releases."""
    inventory = tmp_path / "lab.toml"
    inventory.write_text('[[machine]]\nname = "old"\ngpu = "GTX 780"\ndriver = "470.82.01"\n\n'
                         '[[machine]]\nname = "new"\ngpu = "RTX 4090"\ndriver = "550.54.15"\n')
    table = run("plan", "--torch", "latest", "--fleet", inventory, "--no-detect")
    doc = json.loads(run("plan", "--torch", "latest", "--fleet", inventory, "--no-detect", "--format", "json").stdout)
    [excluded] = doc["fleet"]["excluded"]
    assert "no other PyTorch build (40 releases: 1.8.0 ... 2.15.0)" in excluded["reason"]
    assert f"): {excluded['reason']}" in table.stdout
