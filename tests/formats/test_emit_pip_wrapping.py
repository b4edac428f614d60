"""Long lines in pip plans (issue 32, item 10): prose comments wrap between words; a requirement line stays whole.

The plan for the newest JAX on an A100 (compute capability 8.0, NVIDIA's CUDA GPU list) gave the cuDNN pin's
reason as one comment line of 753-905 characters (its sources are long)."""

from click.testing import CliRunner

from stackresolve.cli.app import app
from stackresolve.formats.script import COMMENT_WIDTH, wrapped_comment


def _pip_plan(*args) -> str:
    result = CliRunner().invoke(app, ["plan", "--no-detect", "--os", "linux", *args, "--format", "pip"])
    assert result.exit_code == 0, result.output
    return result.stdout


def test_the_jax_plan_wraps_every_reason():
    text = _pip_plan("--jax", "latest", "--gpu", "A100")
    lines = text.splitlines()
    assert max(len(line) for line in lines) < 150  # was 753 (905 when the issue was filed)
    # the comment block above each pin (after the header and the commands): wrapped at the comment width
    first_pin = next(i for i, line in enumerate(lines) if line and not line.startswith("#"))
    for line in lines[first_pin:]:
        if line.startswith("#"):
            assert len(line) <= COMMENT_WIDTH or " " not in line[COMMENT_WIDTH // 2:], line
    cudnn = next(i for i, line in enumerate(lines) if line.startswith("nvidia-cudnn-cu"))
    assert lines[cudnn - 1].startswith("# ") and lines[cudnn - 2].startswith("# ")  # continued over lines
    # "#   " lines are the plan's instructions only (scripts/verify_plans.py reads them)
    commands = [line for line in lines if line.startswith("#   ")]
    assert commands[-1] == "#   .venv/bin/python -m pip install -r requirements.txt"
    assert "# - uv python install 3.15" in lines  # how to get the Python: one command a line


def test_wrapping_keeps_words_and_urls_whole():
    url = "https://docs.nvidia.com/cuda/archive/13.2.2/cuda-toolkit-release-notes/index.html"
    text = wrapped_comment(f"CUDA 13.0 needs driver >= 580.65.06 ({url}, Table 3) " + "word " * 40)
    assert all(line.startswith("# ") for line in text.splitlines())
    assert url in text and "\n" in text.rstrip("\n")
    assert " ".join(line[2:].strip() for line in text.splitlines()).split() == \
        f"CUDA 13.0 needs driver >= 580.65.06 ({url}, Table 3) {'word ' * 40}".split()
    assert wrapped_comment("a\nb") == "# a b\n"  # a line break in the text cannot end the comment
