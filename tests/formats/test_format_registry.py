"""Specifies the format registry (stackresolve.formats.registry): one static table (each entry names its decision,
its renderer and its can_express rule as functions), read by the CLI's --format choices, the JSON document's
`plans` and `refused_formats`, explain's and doctor's fix plans; and the text plan's closing line names exactly the
install formats that print a plan: a format it leaves out is refused (by its rule, or by its decision for a gap in
the install facts), and a format it names renders."""

from __future__ import annotations

import json

import click
import pytest
from click.testing import CliRunner

from stackresolve.cli import app
from stackresolve.cli.app import fix_plan_formats, plan_formats
from stackresolve.formats.render import FormatRefused, plan_set, render_plan
from stackresolve.formats.registry import BY_NAME, FIX_PLANS, FORMATS, INSTALL_FORMATS, NAMES, decide
from stackresolve.request.parse import Flags, request_from_flags
from stackresolve.request.build import InputError
from stackresolve.resolve import resolve


@pytest.fixture(scope="module")
def kb():
    from stackresolve.knowledge.loader import knowledge

    return knowledge()


def _format_choices(command: str) -> tuple[str, ...]:
    group_ctx = click.Context(app)
    cmd = app.get_command(group_ctx, command)
    fmt = next(p for p in cmd.params if p.name == "fmt")
    return tuple(fmt.type.choices)


def test_every_entry_names_its_decision_renderer_and_rule():
    assert len(NAMES) == len(FORMATS) == len(set(NAMES))
    for entry in FORMATS:
        assert callable(entry.decide) and callable(entry.render) and callable(entry.can_express), entry
        assert entry.file_name, entry  # plan --fleet -o DIR writes every format to a file
    assert [f.install_rank for f in INSTALL_FORMATS] == list(range(len(INSTALL_FORMATS)))
    assert set(FIX_PLANS) <= {f.name for f in INSTALL_FORMATS}


def test_the_cli_choices_are_the_registry():
    assert plan_formats() == (*NAMES, "json")
    assert _format_choices("plan") == (*NAMES, "json", "pylock")
    assert _format_choices("explain") == _format_choices("doctor") == fix_plan_formats() == ("text", "json",
                                                                                             *FIX_PLANS)


@pytest.mark.parametrize("args", [
    ["--tf", "2.3", "--os", "windows", "--gpu-cc", "6.1"],
    ["--tf", "1.15", "--gpu-cc", "6.1", "--os", "linux"],
    ["--tf", "2.15", "--os", "linux", "--gpu-cc", "3.0"],  # no stack
])
def test_the_json_document_covers_the_registry(args):
    result = CliRunner().invoke(app, ["plan", "--no-detect", *args, "--format", "json"])
    doc = json.loads(result.stdout)
    plans, refused = set(doc["plans"]), set(doc["refused_formats"])
    assert not plans & refused and plans | refused == set(NAMES)
    assert list(doc["plans"]) == [n for n in NAMES if n in plans]  # the registry's order




def _requests(kb):
    from stackresolve.model.values import release_line

    tf_lines = sorted({release_line(str(w.key)) for w in kb.wheels}, key=lambda v: tuple(map(int, v.split("."))))
    for line in tf_lines:
        yield Flags(tf=line, os="linux", gpu_cc="6.1")
        yield Flags(tf=line, os="windows", gpu_cc="7.5")
        yield Flags(tf=line, os="wsl2", gpu_cc="8.6")
    for line in tf_lines[-4:]:
        yield Flags(tf=line, os="macos", gpu="Apple M2")
        yield Flags(tf=line, os="linux", gpu_cc="8.6", arch="aarch64")
        yield Flags(tf=line, os="linux", gpu_cc="8.6", with_driver=True)
    yield Flags(tf="1.15", gpu_cc="8.6", vendor="nvidia")
    yield Flags(tf="1.15", gpu_cc="8.6", vendor="nvidia", os="wsl2")
    yield Flags(tf="2.15", os="windows", gpu_cc="8.6")  # no native stack: PowerShell's WSL2 route
    for other in ("torch", "jax"):
        for os_name, gpu in (("linux", "8.6"), ("windows", "8.6"), ("wsl2", "8.6"), ("linux", None)):
            yield Flags(**{other: "latest"}, os=os_name, gpu_cc=gpu, cpu=gpu is None)
    yield Flags(torch="latest", os="macos", gpu="Apple M2")


def test_the_text_plan_names_exactly_the_formats_that_can_serve_the_stack(kb):
    """Over a spread of requests (every TensorFlow line on Linux, Windows and WSL2; macOS, aarch64, --with-driver,
    NVIDIA's builds, PyTorch and JAX): every format the closing line names prints its plan, and every install format
    it leaves out is refused, by its rule or for a gap in the install facts (old CUDA lines without a base image or
    apt repository, no driver package for --with-driver)."""
    seen = set()
    for flags in _requests(kb):
        try:
            request = request_from_flags(kb, flags, None)
        except InputError:
            continue
        resolution = resolve(kb, request)
        if resolution.stack is None:
            continue
        text = render_plan("text", resolution, kb)
        line = next(l for l in text.splitlines() if l.startswith("Install plans:"))
        listed = line.rsplit("--format ", 1)[1].split("|")
        for entry in INSTALL_FORMATS:
            if entry.name in listed:
                assert render_plan(entry.name, resolution, kb), (flags, entry.name)
                seen.add((entry.name, "listed"))
                continue
            with pytest.raises(FormatRefused):
                render_plan(entry.name, resolution, kb)
            rule = entry.can_express(resolution)
            seen.add((entry.name, "left out by its rule" if rule is not None else "left out for the install facts"))
    # the spread reaches every install format both ways, and both kinds of refusal (a walk that saw nothing would pass)
    assert seen >= {(f.name, "listed") for f in INSTALL_FORMATS}
    assert seen >= {(f, "left out by its rule") for f in ("apt", "dockerfile", "powershell")}
    assert seen >= {(f, "left out for the install facts") for f in ("apt", "dockerfile")}


def test_the_rule_is_the_deciders_first_step(kb):
    """A resolution a rule turns down gets that very refusal from the format's decision and from --format json."""
    resolution = resolve(kb, request_from_flags(kb, Flags(tf="2.3", os="windows", gpu_cc="6.1"), None))
    refused = plan_set(resolution, kb).refused
    for name in ("apt", "dockerfile"):
        rule = BY_NAME[name].can_express(resolution)
        assert rule is not None and decide(name, resolution, kb) == rule
        assert refused[name].startswith(rule.why)


@pytest.mark.parametrize("argv", [["--help"], ["plan", "--help"], ["explain", "--help"]])
def test_help_imports_no_emitter_and_no_decider(argv):
    """--help lists the --format choices from the registry, which imports each format's functions on first call."""
    import subprocess
    import sys

    out = subprocess.run([sys.executable, "-X", "importtime", "-m", "stackresolve", *argv], capture_output=True,
                         text=True, timeout=120)
    assert out.returncode == 0, out.stderr[-2000:]
    imported = {line.rsplit("|", 1)[-1].strip() for line in out.stderr.splitlines() if "|" in line}
    heavy = {m for m in imported if m.startswith("stackresolve.formats.") and m.endswith(("_decide", "_render"))
             or m in ("stackresolve.formats.render", "yaml", "packaging.requirements", "stackresolve.lock")}
    assert not heavy, heavy


def test_an_entry_is_immutable():
    with pytest.raises(AttributeError):
        BY_NAME["apt"].executable = False


@pytest.mark.parametrize("text, args", [
    # TF 1.4's CUDA 8.0 line: no apt repository and no CUDA base image recorded for it (apt and dockerfile refuse)
    ("ImportError: libcudart.so.8.0: cannot open shared object file: No such file or directory", ["--tf", "1.4"]),
    ("ImportError: libcudart.so.9.0: cannot open shared object file: No such file or directory", ["--tf", "1.8"]),
    ("ImportError: libcudart.so.11.0: cannot open shared object file: No such file or directory", ["--tf", "2.4"]),
    ("Could not load dynamic library 'cudart64_110.dll'; dlerror: cudart64_110.dll not found", ["--os", "windows"]),
])
def test_explains_install_plan_line_names_only_formats_that_print_a_plan(text, args):
    """explain's closing "Install plan:" line (its fix plan's pointer) names exactly the fix-plan formats whose
    `plan` command prints a plan: it used to ask only each format's rule, and named apt and dockerfile for TF 1.4
    (CUDA 8.0), which `plan --format apt|dockerfile` refuses for the install facts."""
    import shlex

    runner = CliRunner()
    explained = runner.invoke(app, ["explain", text, "--no-detect", *args])
    line = next(l for l in explained.stdout.splitlines() if l.startswith("Install plan:"))
    command, listed = line.removeprefix("Install plan: ").rsplit(" --format ", 1)
    argv = shlex.split(command)[1:]  # without "stackresolve"
    for name in FIX_PLANS:
        printed = runner.invoke(app, [*argv, "--no-detect", "--format", name])
        assert (printed.exit_code == 0) == (name in listed.split("|")), (line, name, printed.stderr[-300:])
