"""`plan --fleet` against hostile or merely large input (issue 33): an output folder with planted links, a fleet of
many distinct groups, a deadline, and inventories whose values have the wrong type; and (issue 32) the choice
between the fewest stacks and each group's newest.

The large fleets are made here from real facts: the compute capabilities of NVIDIA's CUDA GPU list and the Linux
drivers CUDA toolkits ship with (CUDA release notes, Table 3: 450.80.02 for 11.1's minor-version floor,
470.82.01 as in fleet/issue-lab.toml, 510.47.03 for 11.6, 520.61.05 for 11.8, 525.60.13 for 12.0, 530.30.02
for 12.1, 535.54.03 for 12.2, 545.23.06 for 12.3, 550.54.15 for 12.4, 560.28.03 for 12.6, 570.124.06 for 12.8,
580.65.06 for 13.0): every pair is a group of its own.
"""

from __future__ import annotations

import json
import os
import stat

import pytest
from click.testing import CliRunner

from stackresolve.cli import app
import locations

FIXTURES = locations.FIXTURES / "fleet"
LAB = FIXTURES / "issue-lab.toml"
CCS = ("5.0", "5.2", "6.0", "6.1", "7.0", "7.5", "8.0", "8.6", "8.9", "9.0", "10.0", "12.0")
DRIVERS = ("450.80.02", "470.82.01", "510.47.03", "520.61.05", "525.60.13", "530.30.02", "535.54.03", "545.23.06",
           "550.54.15", "560.28.03", "570.124.06", "580.65.06")


def run(*args, env=None):
    return CliRunner().invoke(app, [str(a) for a in args], env=env)


def one_error_line(result) -> str:
    assert "Traceback" not in result.output
    lines = [line for line in result.stderr.splitlines() if line.strip()]
    assert len(lines) == 1, lines
    return lines[0]


def distinct_inventory(count: int) -> str:
    """`count` machines, each with a (compute capability, driver) pair no other has, the pairs interleaved so that
    any prefix mixes old and new GPUs and drivers."""
    pairs = [(cc, driver) for driver in DRIVERS for cc in CCS]
    pairs = pairs[::2] + pairs[1::2]
    assert count <= len(pairs)
    return "\n".join(f'[[machine]]\nname = "m{i}"\ngpu_cc = "{cc}"\ndriver = "{driver}"\n'
                     for i, (cc, driver) in enumerate(pairs[:count]))


# -- -o DIR never writes through what is already in the folder ------------------------------------------------
def test_a_planted_link_in_the_folder_is_refused_and_its_target_untouched(tmp_path):
    victim = tmp_path / "victim.txt"
    victim.write_text("keep me\n")
    out = tmp_path / "out"
    out.mkdir()
    (out / "stack-1.apt.sh").symlink_to("../victim.txt")
    result = run("plan", "--fleet", LAB, "--torch", "latest", "-o", out)
    assert result.exit_code == 3
    line = one_error_line(result)
    assert "stack-1.apt.sh is already there and is a symbolic link" in line
    assert victim.read_text() == "keep me\n"
    assert sorted(p.name for p in out.iterdir()) == ["stack-1.apt.sh"]  # nothing else written either


def test_a_link_out_of_the_folder_creates_nothing_outside(tmp_path):
    out = tmp_path / "out"
    out.mkdir()
    elsewhere = tmp_path / "elsewhere"
    elsewhere.mkdir()
    (out / "fleet.txt").symlink_to(elsewhere / "x")
    result = run("plan", "--fleet", LAB, "--torch", "latest", "-o", out)
    assert result.exit_code == 3 and "fleet.txt is already there and is a symbolic link" in one_error_line(result)
    assert list(elsewhere.iterdir()) == []


@pytest.mark.parametrize("make, kind", [(os.mkfifo, "not a regular file"), (os.mkdir, "a folder")])
def test_a_fifo_or_a_folder_under_an_output_name_is_refused_without_opening_it(tmp_path, make, kind):
    out = tmp_path / "out"
    out.mkdir()
    make(out / "fleet.json")  # a FIFO opened for writing would block the command
    result = run("plan", "--fleet", LAB, "--torch", "latest", "-o", out)
    assert result.exit_code == 3 and f"fleet.json is already there and is {kind}" in one_error_line(result)


def test_regular_files_are_replaced_by_rename_keeping_their_mode(tmp_path):
    out = tmp_path / "out"
    out.mkdir()
    shared = tmp_path / "shared.txt"
    shared.write_text("another name of the same file\n")
    os.link(shared, out / "stack-1.pip.txt")  # a hard link: replacing the name must not write into the file
    (out / "fleet.txt").write_text("old\n")
    os.chmod(out / "fleet.txt", 0o600)
    result = run("plan", "--fleet", LAB, "--torch", "latest", "-o", out)
    assert result.exit_code == 0, result.output
    assert shared.read_text() == "another name of the same file\n"
    assert "torch==2.7.1" in (out / "stack-1.pip.txt").read_text()
    assert stat.S_IMODE((out / "fleet.txt").stat().st_mode) == 0o600
    assert os.access(out / "stack-1.apt.sh", os.X_OK)
    assert not [p.name for p in out.iterdir() if p.name.endswith(".tmp")]


def test_the_folder_writer_takes_plain_names_only(tmp_path):
    from stackresolve.files.write import write_into_folder

    for name in ("../x", "a/b", "..", ""):
        with pytest.raises(ValueError):
            write_into_folder(tmp_path, {name: b"x"})
    assert list(tmp_path.iterdir()) == []


# -- many distinct groups: the work grows with the groups, under one deadline --------------------------------
def resolutions_for(monkeypatch, count: int, target=("--torch", "latest")) -> tuple[int, dict]:
    import stackresolve.resolve as resolve_module

    calls = {"n": 0}
    for name in ("resolve", "resolve_stack"):
        real = getattr(resolve_module, name)

        def counted(*args, _real=real, **kwargs):
            calls["n"] += 1
            return _real(*args, **kwargs)

        monkeypatch.setattr(resolve_module, name, counted)
    result = CliRunner().invoke(app, ["plan", "--fleet", "-", *target, "--format", "json"],
                                input=distinct_inventory(count))
    assert result.exit_code == 0, result.output
    return calls["n"], json.loads(result.stdout)["fleet"]


def test_the_resolutions_grow_with_the_groups_not_their_square(monkeypatch):
    small, small_doc = resolutions_for(monkeypatch, 72)
    large, large_doc = resolutions_for(monkeypatch, 144)
    # the cover needs more than one stack, so the decision is more than one request over everything
    assert len(small_doc["stacks"]) >= 2 and len(large_doc["stacks"]) >= 2
    assert len(large_doc["groups"]) == 144
    # each group resolved once alone, plus a bounded number of requests per stack: twice the groups, about twice
    # the work (the greedy cover of main asked once per group and stack again with every group so far: 3 x here)
    assert large <= 2.3 * small, (small, large)
    assert large <= 3 * 144, large


def test_past_the_deadline_the_command_stops_with_one_line_and_writes_nothing(tmp_path):
    source = tmp_path / "fleet.toml"
    source.write_text(distinct_inventory(40))
    out = tmp_path / "out"
    result = run("plan", "--fleet", source, "--torch", "latest", "-o", out,
                 env={"STACKRESOLVE_FLEET_TIMEOUT": "0.000001"})
    assert result.exit_code == 3
    line = one_error_line(result)
    assert "no answer within 1e-06 s" in line and "STACKRESOLVE_FLEET_TIMEOUT" in line
    assert not out.exists()
    bad = run("plan", "--fleet", source, "--torch", "latest", env={"STACKRESOLVE_FLEET_TIMEOUT": "soon"})
    assert bad.exit_code == 2 and "STACKRESOLVE_FLEET_TIMEOUT='soon'" in one_error_line(bad)


def test_the_decision_checks_the_deadline_before_every_resolution(kb):
    from stackresolve.request.parse import Flags, parse_flags
    from stackresolve.fleet.decide import FleetTimeout, plan_fleet
    from stackresolve.fleet.grouping import group_members
    from stackresolve.fleet.readers import kb_lookup, read_document
    from stackresolve.model.enums import Os
    from stackresolve.request.build import build_request

    class AfterTicks:
        def __init__(self, ticks):
            self.left = ticks

        def expired(self):
            self.left -= 1
            return self.left < 0

    groups = group_members(read_document(distinct_inventory(30), "fleet.toml", kb_lookup(kb)))
    base = build_request(kb, parse_flags(kb, Flags(torch="latest")).replace(os=Os.LINUX), None)
    with pytest.raises(FleetTimeout) as raised:
        plan_fleet(kb, base, groups, deadline=AfterTicks(10))
    assert (raised.value.decided, raised.value.total) == (10, 30)


@pytest.fixture(scope="module")
def kb():
    from stackresolve.knowledge.loader import knowledge

    return knowledge()


# -- strict types in every reader ----------------------------------------------------------------------------
@pytest.mark.parametrize("value", ["true", "1.5", "0", '"4"'])
def test_gpu_count_is_a_positive_whole_number_not_a_bool(tmp_path, value):
    source = tmp_path / "fleet.toml"
    source.write_text(f'[[machine]]\nname = "ws"\ngpu = "RTX 4090"\ndriver = "550.54.15"\ngpu_count = {value}\n')
    result = run("plan", "--fleet", source, "--torch", "latest")
    assert result.exit_code == 2
    assert "machine ws: gpu_count" in one_error_line(result) and "a positive whole number" in result.stderr


@pytest.mark.parametrize("change, expected", [
    (lambda r: r["driver"].update(version=442.92), "driver.version is a number, not a string"),
    (lambda r: r["os"].update(wsl="no"), "os.wsl is a string, not a boolean"),
    (lambda r: r["os"].update(wsl=1), "os.wsl is a number, not a boolean"),
    (lambda r: r["gpus"][0].update(compute_capability=6.1), "gpus[0].compute_capability is a number, not a string"),
    (lambda r: r["gpus"][0].update(name=["GeForce"]), "gpus[0].name is a list, not a string"),
    (lambda r: r["os"].update(distro=True), "os.distro is a boolean, not a string"),
])
def test_detect_report_values_of_the_wrong_type_are_refused(tmp_path, change, expected):
    report = json.loads((FIXTURES / "lab" / "ws-gtx1080ti.json").read_text())
    change(report)
    source = tmp_path / "ws.json"
    source.write_text(json.dumps(report))
    result = run("plan", "--fleet", source, "--torch", "latest")
    assert result.exit_code == 2
    line = one_error_line(result)
    assert "machine ws:" in line and expected in line, line


# -- the fewest stacks, or each group its newest (issue 32) ------------------------------------------------------
def test_newest_gives_each_group_the_stack_it_gets_alone():
    # issue 26's lab: the GTX 1080 Ti on 470 holds the shared stack to torch 2.7.1 (cu118, the last CUDA 11 build:
    # pytorch RELEASE.md); with --fleet-stacks newest the RTX 4090 on 550 takes what `plan` gives it alone
    result = run("plan", "--fleet", LAB, "--torch", "latest", "--fleet-stacks", "newest", "--format", "json")
    assert result.exit_code == 0, result.output
    fleet = json.loads(result.stdout)["fleet"]
    assert fleet["choice"] == "newest" and len(fleet["stacks"]) == 2
    alone = run("plan", "--no-detect", "--torch", "latest", "--gpu", "RTX 4090", "--driver", "550.54.15", "--os",
                "linux", "--format", "json")
    ada = next(g for g in fleet["groups"] if g["members"][0]["name"] == "ws-ada")
    pascal = next(g for g in fleet["groups"] if g["members"][0]["name"] == "ws-pascal-1")
    assert fleet["stacks"][ada["stack"]]["stack"]["framework"] == json.loads(alone.stdout)["stack"]["framework"]
    assert fleet["stacks"][pascal["stack"]]["stack"]["framework"]["version"] == "2.7.1"
    fewest = json.loads(run("plan", "--fleet", LAB, "--torch", "latest", "--format", "json").stdout)["fleet"]
    assert fewest["choice"] == "fewest" and len(fewest["stacks"]) == 1


def test_the_table_says_which_choice_and_who_is_held_back():
    fewest = run("plan", "--fleet", LAB, "--torch", "latest")
    assert fewest.exit_code == 0
    assert "stacks: the fewest that cover the fleet (--fleet-stacks newest: each group its newest)" in fewest.stdout
    held = fewest.stdout.split("Held back by the shared stack")[1]
    assert "GeForce-RTX-4090/550.54.15: takes torch==2.7.1; on its own torch==" in held
    assert "GTX-1080-Ti" not in held.split("\n\n")[0]
    newest = run("plan", "--fleet", LAB, "--torch", "latest", "--fleet-stacks", "newest")
    assert "stacks: each group its newest" in newest.stdout and "Held back" not in newest.stdout


def test_newest_groups_with_the_same_newest_stack_share_it():
    # whatever each group gets alone, groups with the same newest stack take one stack, never two copies of it
    doc = json.loads(run("plan", "--fleet", FIXTURES / "issue-jax.toml", "--jax", "latest", "--fleet-stacks",
                         "newest", "--format", "json").stdout)["fleet"]
    labels = [json.dumps(s["stack"]["framework"], sort_keys=True) for s in doc["stacks"]]
    assert len(labels) == len(set(labels))
    assert sorted(g for s in doc["stacks"] for g in s["groups"]) == sorted(g["name"] for g in doc["groups"])


def test_fleet_stacks_goes_with_fleet():
    result = run("plan", "--no-detect", "--torch", "latest", "--fleet-stacks", "newest")
    assert result.exit_code == 2 and "--fleet-stacks" in one_error_line(result)


def test_a_file_someone_else_left_in_the_folder_does_not_pass_on_its_mode(tmp_path):
    from stackresolve.files.write import write_into_folder

    mine = tmp_path / "mine.txt"
    mine.write_text("x")
    os.chmod(mine, 0o4755)
    theirs = tmp_path / "theirs.sh"
    theirs.write_text("x")
    os.chmod(theirs, 0o777)
    try:
        os.chown(theirs, 65534, 65534)  # nobody's
    except PermissionError:
        pytest.skip("changing a file's owner needs root")
    write_into_folder(tmp_path, {"mine.txt": b"new", "theirs.sh": b"new"}, executable=lambda n: n.endswith(".sh"))
    assert stat.S_IMODE(mine.stat().st_mode) == 0o755  # this user's permissions, less the set-id bit
    assert theirs.stat().st_uid == os.geteuid()
    assert stat.S_IMODE(theirs.stat().st_mode) & 0o022 == 0  # not world- or group-writable as it was
    assert theirs.read_bytes() == b"new"


# -- one reading of a driver and a compute capability (model/numbers), as --driver / --gpu-cc read them ---------
def test_an_inventory_reads_a_driver_branch_and_a_cc_as_the_flags_do(tmp_path):
    source = tmp_path / "fleet.toml"
    source.write_text('[[machine]]\nname = "ws"\ngpu_cc = "sm_86"\ndriver = "580"\n')
    result = run("plan", "--fleet", source, "--torch", "latest", "--format", "json")
    assert result.exit_code in (0, 1), result.output
    group = json.loads(result.stdout)["fleet"]["groups"][0]
    assert group["driver"] == "580" and "8.6" in json.dumps(group)


def test_the_lowest_driver_of_a_branch_and_a_release_in_it_is_the_release(tmp_path):
    # R525 stands for its releases (knowledge.rules.driver_meets) and meets 525.60.13, CUDA 12.x's minor-version
    # floor (CUDA release notes, Table 2); 525.53 does not. A stack shared by both must run on 525.53: ordered by
    # DriverVersion the branch was "lower" and both got PyTorch's CUDA 12.6 build (>= 525.60.13).
    from stackresolve.knowledge.rules import driver_order

    assert min(["525", "525.53"], key=driver_order) == "525.53"
    assert min(["525", "520.61.05"], key=driver_order) == "520.61.05" and min(["530", "525"], key=driver_order) == "525"
    source = tmp_path / "fleet.toml"
    source.write_text('[[machine]]\nname = "a"\ngpu_cc = "8.0"\ndriver = "525"\n\n'
                      '[[machine]]\nname = "b"\ngpu_cc = "8.0"\ndriver = "525.53"\n')
    result = run("plan", "--fleet", source, "--torch", "latest", "--format", "json")
    assert result.exit_code in (0, 1), result.output
    stacks = json.loads(result.stdout)["fleet"]["stacks"]
    assert len(stacks) == 1 and "525.60.13" not in json.dumps(stacks[0])
