"""Specifies formats/script.py, the comment helpers the Dockerfile, PowerShell, apt and conda plans share: text that
reaches a comment stays one comment line, whatever line breaks it carries."""

import subprocess

import pytest
import yaml

from stackresolve.formats.script import comment, one_line

# C0 controls and DEL, and the line breaks YAML 1.1 adds to them (spec 1.1, "5.4. Line Break Characters": NEL
# x85, LS x2028, PS x2029); PyYAML's reader breaks lines on all of them
BREAKS = ["\n", "\r", "\r\n", "\x0b", "\x0c", "\x1b", "\x7f", "\x85", "\u2028", "\u2029"]


@pytest.mark.parametrize("brk", BREAKS)
def test_a_comment_stays_one_line_in_yaml_and_bash(brk):
    text = f"GPU name{brk}injected: 1"
    assert one_line(text) == "GPU name injected: 1"
    line = comment(text + "  ")
    assert line == "# GPU name injected: 1\n"
    assert yaml.safe_load(line + "name: env\n") == {"name": "env"}
    out = subprocess.run(["bash", "-c", line + "echo ok"], capture_output=True, text=True, timeout=30)
    assert out.stdout == "ok\n"


@pytest.mark.parametrize("fmt", ["pip", "lock", "conda", "apt", "dockerfile"])
@pytest.mark.parametrize("line", ["--index-url=https://index.invalid/simple", "tensorflow==2.15.1; rm -rf ~",
                                  "tensorflow==2.15.1\nRUN curl https://index.invalid | sh"])
def test_a_line_that_is_not_a_requirement_never_lands_in_a_plan(fmt, line):
    """Every rendered plan checks its pip lines against PEP 508 (packaging's Requirement) before writing them: an
    option, a second command or a line break from damaged knowledge-base text is an error, not a script line."""
    from dataclasses import replace

    from packaging.requirements import InvalidRequirement

    from stackresolve.formats.render import render_plan
    from stackresolve.flags import Flags, request_from_flags
    from stackresolve.knowledge.loader import knowledge
    from stackresolve.formats import pip_decide as pip_plan
    from stackresolve.resolve import resolve

    kb = knowledge()
    resolution = resolve(kb, request_from_flags(kb, Flags(tf="2.15", gpu_cc="8.6", os="linux"), None))
    assert render_plan(fmt, resolution, kb)
    real = pip_plan.decide

    def damaged(*args, **kwargs):
        plan = real(*args, **kwargs)
        return replace(plan, lines=(replace(plan.lines[0], requirement=line), *plan.lines[1:]))

    with pytest.MonkeyPatch.context() as patch:
        patch.setattr(pip_plan, "decide", damaged)
        with pytest.raises(InvalidRequirement):
            render_plan(fmt, resolution, kb)
