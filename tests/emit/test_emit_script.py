"""Specifies emit/script.py, the comment helpers the Dockerfile, PowerShell, apt and conda plans share: text that
reaches a comment stays one comment line, whatever line breaks it carries."""

import subprocess

import pytest
import yaml

from stackresolve.emit.script import comment, one_line

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
