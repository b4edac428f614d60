"""What a new user meets first: the bare command, --help, shell completion, --json, colour on terminals only."""

import json
import os
import pty
import shutil
import subprocess
import sys
from pathlib import Path

import pytest
from click.shell_completion import ShellComplete
from click.testing import CliRunner

from stackresolve.cli import app

PLAN_FORMATS = ["text", "pip", "lock", "dockerfile", "powershell", "apt", "conda", "json", "pylock"]
STACKRESOLVE = [sys.executable, "-m", "stackresolve"]


def completions(args: list[str], incomplete: str) -> list[str]:
    """What click's completion hook offers for the word being typed after `stackresolve ARGS`."""
    complete = ShellComplete(app, {}, "stackresolve", "_STACKRESOLVE_COMPLETE")
    return [item.value for item in complete.get_completions(args, incomplete)]


def cli(*args, env=None, **kwargs):
    return subprocess.run([*STACKRESOLVE, *args], capture_output=True, text=True, timeout=60,
                          env={**os.environ, **(env or {})}, **kwargs)


def test_format_values_complete():
    assert completions(["plan", "--format"], "") == PLAN_FORMATS
    assert completions(["plan", "--tf", "1.15", "-f"], "p") == ["pip", "powershell", "pylock"]
    assert completions(["explain", "--format"], "") == ["text", "json", "pip", "dockerfile", "powershell", "apt",
                                                        "conda"]
    assert completions(["detect", "--format"], "") == ["text", "json"]
    assert completions(["plan", "--os"], "w") == ["windows", "wsl2"]
    assert completions(["show"], "t") == ["tf", "torch"]
    assert completions(["schema"], "show") == ["show-tf", "show-torch", "show-jax", "show-cuda", "show-cudnn",
                                               "show-driver", "show-gpu", "show-accelerator"]
    assert completions(["show"], "c") == ["cuda", "cudnn"]
    assert "schema" in completions([], "sc")


def test_the_help_lists_the_choices():
    plan_help = CliRunner().invoke(app, ["plan", "--help"]).output
    assert "--format [" + "|".join(PLAN_FORMATS) + "]" in " ".join(plan_help.split())
    assert "--os [linux|windows|macos|wsl2]" in plan_help
    assert "--json" in plan_help
    top = CliRunner().invoke(app, ["--help"]).output
    assert "--install-completion" in top and "--show-completion" in top


def test_the_installed_bash_completion_completes_format_values(tmp_path):
    bash = shutil.which("bash")
    if bash is None:
        pytest.skip("no bash here")
    env = {"HOME": str(tmp_path), "PATH": f"{Path(sys.executable).parent}{os.pathsep}{os.environ['PATH']}"}
    # typer finds the shell among the command's parents: bash must stay one (with a single command, bash -c execs it,
    # and a test run with no shell above it, as from a detached job, then failed with "Shell None is not supported")
    installed = subprocess.run([bash, "-c", "stackresolve --install-completion; exit $?"], capture_output=True,
                               text=True, timeout=60, env={**os.environ, **env})
    assert installed.returncode == 0, installed.stderr
    script = tmp_path / ".bash_completions" / "stackresolve.sh"
    assert f"source '{script}'" in (tmp_path / ".bashrc").read_text()
    typed = (f"source '{script}'; COMP_WORDS=(stackresolve plan --tf 1.15 --format p); COMP_CWORD=5; "
             "_stackresolve_completion stackresolve; printf '%s\\n' \"${COMPREPLY[@]}\"")
    offered = subprocess.run([bash, "-c", typed], capture_output=True, text=True, timeout=60,
                             env={**os.environ, **env})
    assert offered.stdout.split() == ["pip", "powershell", "pylock"]


def test_a_bare_stackresolve_prints_the_help_and_exits_0():
    result = cli()
    assert result.returncode == 0
    assert result.stderr == ""
    assert result.stdout.startswith("Usage: stackresolve [OPTIONS] COMMAND [ARGS]...\n")
    assert "Commands:" in result.stdout and "\n  plan " in result.stdout
    assert result.stdout == cli("--help").stdout


@pytest.mark.parametrize("args, said", [
    (["plan", "--no-detect", "--tf", "1.15", "--format", "jsn"],
     "--format 'jsn': use one of text, pip, lock, dockerfile, powershell, apt, conda, json, pylock (did you mean "
     "json?)"),
    (["plan", "--no-detect", "--tf", "1.15", "--os", "beos"],
     "--os 'beos': unknown operating system; use one of linux, windows, macos, wsl2"),
    (["matrix", "--os", "linx"],
     "--os 'linx': unknown operating system; use one of linux, windows, macos, wsl2 (did you mean linux?)"),
    (["show", "tensorflow", "1.15"], "component 'tensorflow': use one of tf, torch, jax, cuda, cudnn, driver, gpu"),
    (["plan", "--no-detect", "--tf", "1.15", "--format", "pip", "--json"], "--json and --format pip: give one of them"),
    (["detect", "--json", "--format", "text"], "--json and --format text: give one of them"),
])
def test_a_wrong_choice_is_one_line_and_exit_2(args, said):
    result = cli(*args)
    assert result.returncode == 2
    assert result.stderr.splitlines() == [f"stackresolve: error: {said}"]


def test_os_aliases_are_still_accepted():
    result = CliRunner().invoke(app, ["plan", "--no-detect", "--tf", "2.10", "--os", "Win", "--gpu", "GTX 1080",
                                      "--json"])
    assert result.exit_code == 0, result.output
    assert json.loads(result.stdout)["request"]["os"] == "windows"


@pytest.mark.parametrize("args", [
    ["plan", "--no-detect", "--tf", "1.15", "--gpu", "RTX 3090", "--os", "linux"],
    ["show", "torch", "2.5"], ["matrix", "--gpu", "K80"], ["gpus", "1080"],
])
def test_json_is_format_json(args):
    short, long = (CliRunner().invoke(app, [*args, *flag]) for flag in (["--json"], ["--format", "json"]))
    assert short.exit_code == long.exit_code == 0
    assert short.stdout == long.stdout
    assert json.loads(short.stdout)["schema"].startswith("stackresolve/")
    both = CliRunner().invoke(app, [*args, "--format", "json", "--json"])
    assert both.exit_code == 0 and both.stdout == long.stdout


def _on_a_terminal(args: list[str], env: dict) -> bytes:
    """stdout and stderr of `stackresolve ARGS` run on a pseudo-terminal."""
    parent, child = pty.openpty()
    process = subprocess.Popen([*STACKRESOLVE, *args], stdin=subprocess.DEVNULL, stdout=child, stderr=child,
                               env={**os.environ, **env})
    os.close(child)
    out = b""
    while True:
        try:
            chunk = os.read(parent, 65536)
        except OSError:  # the terminal closed: the process is done
            break
        if not chunk:
            break
        out += chunk
    process.wait(timeout=60)
    os.close(parent)
    return out


WARNING_PLAN = ["plan", "--no-detect", "--tf", "1.15", "--gpu", "RTX 3090", "--os", "linux", "--vendor", "stock"]


def test_error_and_warning_words_are_coloured_on_a_terminal():
    env = {"NO_COLOR": "", "TERM": "xterm"}
    error = _on_a_terminal(["plan", "--no-detect", "--tf", "banana"], env)
    assert b"stackresolve: \x1b[31m\x1b[1merror\x1b[0m: " in error
    plan = _on_a_terminal(WARNING_PLAN, env)
    assert b"[\x1b[33m\x1b[1mwarning\x1b[0m]" in plan or b"[\x1b[31m\x1b[1merror\x1b[0m]" in plan


@pytest.mark.parametrize("env", [{"NO_COLOR": "1", "TERM": "xterm"}, {"NO_COLOR": "", "TERM": "dumb"}])
def test_no_color_and_dumb_terminals_get_no_escape_sequences(env):
    for args in (["plan", "--no-detect", "--tf", "banana"], WARNING_PLAN):
        out = _on_a_terminal(args, env)
        assert b"\x1b" not in out and (b"error" in out or b"warning" in out)


def test_a_pipe_gets_no_escape_sequences():
    for args in (["plan", "--no-detect", "--tf", "banana"], WARNING_PLAN, ["plan", "--no-detect", "--tf", "3.1"]):
        result = cli(*args, env={"NO_COLOR": "", "TERM": "xterm"})
        assert "\x1b" not in result.stdout + result.stderr
        assert "error" in result.stdout + result.stderr or "warning" in result.stdout


@pytest.mark.parametrize("args, command, formats", [
    # Linux: PowerShell plans are Windows' (and WSL2's); Windows: apt is Ubuntu's, containers run Linux; an
    # Ampere GPU takes NVIDIA's TensorFlow 1.15 build, which installs with pip (no apt packages)
    (["plan", "--no-detect", "--tf", "1.15", "--gpu", "RTX 3090", "--os", "linux", "--driver", "470.82.01"],
     "stackresolve plan --tf 1.15 --os linux --gpu 'RTX 3090' --driver 470.82.01 --no-detect",
     "pip|conda|dockerfile|lock"),
    (["plan", "--no-detect", "--torch", ">=2.4,<2.6", "--gpu-cc", "6.1", "--os", "windows", "-f", "text"],
     "stackresolve plan --torch '>=2.4,<2.6' --os windows --gpu-cc 6.1 --no-detect", "pip|conda|powershell|lock"),
    (["plan", "--no-detect", "--jax", "latest", "--cpu", "--os", "linux", "--python", "3.12"],
     "stackresolve plan --jax latest --os linux --python 3.12 --cpu --no-detect", "pip|conda|apt|dockerfile|lock"),
])
def test_the_text_plan_names_the_users_own_command(args, command, formats, tmp_path):
    """Every flag the user gave (in the command's order, by its long name), less --format and -o; then the
    install formats that can express this stack."""
    import shlex

    result = CliRunner().invoke(app, [*args, "-o", str(tmp_path / "plan.txt")])
    assert result.exit_code == 0, result.output
    lines = [l for l in (tmp_path / "plan.txt").read_text().splitlines() if l.startswith("Install plans:")]
    assert lines == [f"Install plans: {command} --format {formats}"]
    for fmt in ("pip", "conda", "lock"):  # the line, with one format picked, is a command that runs
        words = shlex.split(f"{command} --format {fmt}")
        assert CliRunner().invoke(app, words[1:]).exit_code == 0


def test_json_on_a_terminal_has_no_escape_sequences():
    out = _on_a_terminal([*WARNING_PLAN, "--json"], {"NO_COLOR": "", "TERM": "xterm"})
    assert b"[warning]" in out and b"\x1b" not in out
