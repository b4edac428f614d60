"""Every command the README shows runs, and says what the README says it does.

The commands are read from the README itself: the inline commands of the situation table (with the facts its last
column puts in backticks, each of which must appear in what the command prints or writes), the `$ ` lines of its
console blocks, and every other inline `stackresolve ...` span. Each runs as a user would type it, in one scratch
folder in README order (the lock one row writes is the lock the next row checks), with `--no-detect` added where
the command would otherwise probe this machine. The bootstrap script (marked `<!-- bootstrap -->`) is left to its
own test; the quick start's two commands are checked word for word against what CI runs."""

from __future__ import annotations

import os
import re
import shlex
import shutil
import subprocess
import sys
from dataclasses import dataclass
from pathlib import Path

import pytest
from click.testing import CliRunner

from stackresolve.cli import app
import locations

ROOT = locations.REPO
README = (ROOT / "README.md").read_text(encoding="utf-8")
LOG = ROOT / "tests" / "fixtures" / "errors" / "importerror-libcublas-so-10.0.log"
QUICK_START = ["python3 -m venv .venv && .venv/bin/pip install . && .venv/bin/stackresolve plan --tf 1.15",
               ".venv/bin/pip install '.[test]' && .venv/bin/python -m pytest -q"]
# Commands that probe this machine unless told not to: the README shows them as users type them.
NO_DETECT = ("plan", "explain", "check")
# The README's placeholders, and what the test puts in their place.
PLACEHOLDERS = {"COMMAND": "plan", "SOURCE": "inventory.toml"}
INVENTORY = ROOT / "tests" / "fixtures" / "fleet" / "issue-lab.toml"


@dataclass(frozen=True)
class Shown:
    line: int  # where the README shows it
    text: str  # the command as shown
    facts: tuple[str, ...] = ()  # what the README says it answers
    in_table: bool = False  # a row of the situation table


def _without_bootstrap(text: str) -> str:
    """The README with the marked bootstrap script blanked (line numbers kept)."""
    return re.sub(r"<!-- bootstrap -->\n```.*?\n```", lambda m: "\n" * m.group(0).count("\n"), text, flags=re.S)


def _fenced_blocks(text: str):
    for match in re.finditer(r"^```(\w*)\n(.*?)^```", text, flags=re.S | re.M):
        yield text.count("\n", 0, match.start()) + 1, match.group(1), match.group(2)


def shown_commands() -> list[Shown]:
    text = _without_bootstrap(README)
    found: list[Shown] = []
    for start, lang, body in _fenced_blocks(text):
        if lang == "console":
            found += [Shown(start + i + 1, line[2:]) for i, line in enumerate(body.splitlines())
                      if line.startswith("$ ")]
    blanked = re.sub(r"^```.*?^```", lambda m: "\n" * m.group(0).count("\n"), text, flags=re.S | re.M)
    for number, line in enumerate(blanked.splitlines(), 1):
        cells = [c.strip() for c in line.strip().strip("|").split("|")] if line.startswith("|") else []
        for span in re.findall(r"`([^`]+)`", line):
            if not re.match(r"([A-Z_]+=\S+ )*stackresolve ", span):
                continue
            in_table = len(cells) == 3 and f"`{span}`" == cells[1]
            facts = tuple(re.findall(r"`([^`]+)`", cells[2])) if in_table else ()
            found.append(Shown(number, span, facts, in_table))
    return sorted(found, key=lambda c: c.line)


COMMANDS = shown_commands()


def test_the_readme_shows_the_commands_users_need_first():
    first_screen = "\n".join(README.splitlines()[:60])
    assert "## Quick start" in first_screen and "## Your situation, and the command" in first_screen
    table = [c for c in COMMANDS if c.in_table]
    assert len(table) >= 10 and all(c.line <= 60 for c in table)
    asked = " ".join(c.text for c in table)
    for situation in ("--tf 1.15 --gpu", "--os windows", "explain", "--format lock", "check", "--torch latest --gpu K80",
                      "--jax", "doctor"):
        assert situation in asked
    assert {"--before-install", "--python-exe", "--install-completion"} <= set(" ".join(c.text for c in COMMANDS)
                                                                               .split())
    assert "STACKRESOLVE_DRIVER" in asked


def test_the_quick_start_is_what_ci_runs():
    blocks = [body.strip() for _, lang, body in _fenced_blocks(README) if lang == "bash"]
    assert blocks[:2] == QUICK_START
    ci = (ROOT / ".ci" / "run").read_text()
    assert QUICK_START[1].replace(".venv/bin/pip install '.[test]'", ".venv/bin/pip install -q '.[test]'") in ci
    assert "python3 -m venv .venv" in ci


def test_the_bootstrap_script_is_marked_for_its_own_test():
    section = README.split("## Bootstrap a project", 1)[1].split("\n## ", 1)[0]
    assert "<!-- bootstrap -->\n```bash\n#!/usr/bin/env bash" in section


def _runnable(shown: Shown) -> tuple[dict[str, str], list[str]]:
    """(environment assignments, argv after `stackresolve`) as the test runs it."""
    words = shlex.split(shown.text, comments=True)
    env = {}
    while "=" in words[0]:
        name, value = words.pop(0).split("=", 1)
        env[name] = value
    assert words[0] == "stackresolve", shown
    args = [PLACEHOLDERS.get(w, w) for w in words[1:]]
    if args and args[0] in NO_DETECT and not env:  # STACKRESOLVE_DRIVER=...: what detection is told instead
        args.append("--no-detect")
        if args[0] != "explain" and "--os" not in args and "--fleet" not in args:  # a fleet's files say each OS
            args += ["--os", "linux"]
    return env, args


@pytest.fixture(scope="module")
def scratch(tmp_path_factory):
    """The folder the README's commands run in, with the files they name: train.log (a real log, see
    fixtures/errors/README.md), inventory.toml (issue 26's lab), and the stack-1.lock that the fleet section's
    `-o DIR` writes (made here as the section says: `plan --fleet ... -o DIR`)."""
    folder = tmp_path_factory.mktemp("readme")
    shutil.copy(LOG, folder / "train.log")
    shutil.copy(INVENTORY, folder / "inventory.toml")
    made = CliRunner().invoke(app, ["plan", "--no-detect", "--tf", "latest", "--fleet", str(folder / "inventory.toml"),
                                    "-o", str(folder)], env={"STACKRESOLVE_CACHE_DIR": str(folder / "cache")})
    assert made.exit_code == 0 and (folder / "stack-1.lock").is_file(), made.output
    return folder


@pytest.mark.parametrize("shown", COMMANDS, ids=lambda c: f"line {c.line}: {c.text}")
def test_a_readme_command_runs_and_says_what_the_readme_says(shown, scratch, monkeypatch):
    env, args = _runnable(shown)
    assert args[0] != "refresh", "refresh reads the package index: no README command may need the network"
    if args[0] == "install":
        pytest.skip("install builds a venv from the package index: tests/install/ runs the bootstrap section")
    env["STACKRESOLVE_CACHE_DIR"] = str(scratch / "cache")  # nothing outside the scratch folder is written
    monkeypatch.chdir(scratch)
    if args == ["--install-completion"]:
        _install_completion(scratch)
        return
    result = CliRunner().invoke(app, args, env=env)
    # doctor and a check of this machine answer for this machine: 1 is "problems found", still an answer
    allowed = (0, 1) if args[0] in ("doctor",) else (0,)
    assert result.exit_code in allowed, f"{shown.text}: exit {result.exit_code}\n{result.output[-2000:]}"
    said = result.output
    if "-o" in args:
        written = scratch / args[args.index("-o") + 1]
        # `site -o` names a folder: what it wrote there
        said += "".join(p.read_text() for p in sorted(written.iterdir())) if written.is_dir() else \
            written.read_text()
    for fact in shown.facts:
        assert fact in said, f"README line {shown.line}: {shown.text!r} does not say {fact!r}"


def _install_completion(home: Path) -> None:
    """`stackresolve --install-completion` from bash, into a scratch home folder."""
    bash = shutil.which("bash")
    if bash is None:
        pytest.skip("no bash here")
    env = {**os.environ, "HOME": str(home), "STACKRESOLVE_CACHE_DIR": str(home / "cache"), "PATH": f"{Path(sys.executable).parent}{os.pathsep}{os.environ['PATH']}"}
    done = subprocess.run([bash, "-c", "stackresolve --install-completion"], capture_output=True, text=True,
                          timeout=60, env=env)
    assert done.returncode == 0, done.stderr
    assert (home / ".bash_completions" / "stackresolve.sh").is_file()
