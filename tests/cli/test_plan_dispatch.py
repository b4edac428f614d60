"""Specifies how `plan` hands over to its two other paths (`--fleet`, and the full lock of `--lock` / pylock): each
is a branch that ends the command with the exit code that path gives, whatever that path does, so the one-machine
plan below it is never reached by falling through (issue 35: the fleet path worked only because it always raised).
"""

from __future__ import annotations

import json

import pytest
from click.testing import CliRunner

import locations
from stackresolve.cli import app

CLUSTER = locations.FIXTURES / "fleet" / "gfd-cluster-nodes.json"


@pytest.fixture
def one_machine_path_refused(monkeypatch):
    """The one-machine plan fails the test if it is reached."""
    import stackresolve.cli.plan as plan_command

    def reached(*args, **kwargs):
        raise AssertionError("the one-machine plan ran after the fleet's")

    monkeypatch.setattr(plan_command, "knowledge", reached)
    return plan_command


@pytest.mark.parametrize("code", [0, 1])
def test_the_fleet_branch_ends_the_command_with_the_fleet_commands_code(monkeypatch, one_machine_path_refused, code):
    import stackresolve.cli.fleet as fleet_command

    calls = []
    monkeypatch.setattr(fleet_command, "plan_fleet_command", lambda *args: calls.append(args) or code)
    result = CliRunner().invoke(app, ["plan", "--fleet", str(CLUSTER), "--tf", "latest"])
    assert result.exception is None or isinstance(result.exception, SystemExit), result.exception
    assert result.exit_code == code
    assert len(calls) == 1 and calls[0][0] == [str(CLUSTER)]


def test_the_fleet_command_returns_its_code_instead_of_raising(capsys):
    from stackresolve.cli.fleet import plan_fleet_command
    from stackresolve.request.parse import Flags

    code = plan_fleet_command([str(CLUSTER)], Flags(tf="latest"), "json", None, False, None, "fewest",
                              {"--os": None, "--gpu": None, "--gpu-cc": None, "--driver": None, "--arch": None,
                               "--cpu": False})
    assert code == 0
    assert json.loads(capsys.readouterr().out)["fleet"]["stacks"]


def test_a_fleet_no_machine_can_run_exits_1_through_the_cli(tmp_path):
    # Ada GPUs need the driver of CUDA 11.8, their first toolkit (NVIDIA's CUDA Toolkit, Driver and Architecture
    # Matrix; CUDA 11.8's Linux driver 520.61.05): an RTX 4090 on 470 runs no CUDA build
    source = tmp_path / "fleet.toml"
    source.write_text('[[machine]]\nname = "ada-old"\ngpu = "RTX 4090"\ndriver = "470.82.01"\n')
    result = CliRunner().invoke(app, ["plan", "--fleet", str(source), "--torch", "latest", "--format", "json"])
    assert result.exit_code == 1, result.stderr
    doc = json.loads(result.stdout)
    assert doc["fleet"]["stacks"] == [] and doc["fleet"]["excluded"][0]["members"] == ["ada-old"]


def test_a_one_value_option_given_twice_is_refused():
    # click keeps the last value of a repeated option and drops the first silently: `--gpu "RX 580" --gpu MI300X`
    # planned the MI300X alone; a plan for a GPU the user did not mean is worse than a refusal
    from click.testing import CliRunner

    from stackresolve.cli import app

    result = CliRunner().invoke(app, ["plan", "--no-detect", "--torch", "latest", "--gpu", "RX 580", "--gpu", "MI300X"])
    assert result.exit_code == 2 and "--gpu was given 2 times" in result.output
    result = CliRunner().invoke(app, ["plan", "--no-detect", "--tf", "1.15", "-f", "text", "--format=json"])
    assert result.exit_code == 2 and "--format was given 2 times" in result.output
    result = CliRunner().invoke(app, ["plan", "--no-detect", "--tf", "1.15", "--format", "json", "--json"])
    assert result.exit_code == 0  # --json is a flag that agrees with --format json
