"""User-facing version strings: what is accepted, and the one-line errors for what is not."""

import pytest
from packaging.version import Version

from stackresolve.request.parse import parse_cc, parse_driver, parse_os, parse_python, parse_tf_spec
from stackresolve.model.values import ComputeCapability
from stackresolve.request.build import InputError


@pytest.mark.parametrize("text, inside, outside", [
    ("1.15", ["1.15.0", "1.15.5"], ["1.14.0", "2.0.0"]),
    ("2", ["2.0.0", "2.3.4", "2.20.0"], ["1.15.5"]),
    ("2.3.4", ["2.3.4"], ["2.3.3", "2.3.5"]),
    (">=2.4,<2.8", ["2.4.0", "2.7.4"], ["2.3.4", "2.8.0"]),
    ("latest", ["1.0.0", "2.20.0"], []),
])
def test_tf_spec_forms(text, inside, outside):
    spec = parse_tf_spec(text)
    assert all(spec.contains(Version(v)) for v in inside)
    assert not any(spec.contains(Version(v)) for v in outside)


@pytest.mark.parametrize("text", ["banana", "1.15.x.y", ">=two", "tf2"])
def test_tf_spec_rejects_garbage(text):
    with pytest.raises(InputError, match="--tf"):
        parse_tf_spec(text)


def test_python_forms():
    assert parse_python("3.7") == "3.7"
    assert parse_python("py310") == "3.10"
    assert parse_python("3.11.7") == "3.11"
    with pytest.raises(InputError, match="--python"):
        parse_python("snake")


def test_driver_accepts_two_and_three_part_versions_and_a_branch():
    # 2-part (Windows, 535.98) and 3-part (Linux, 470.82.01) as nvidia-smi prints them (anchors.md section 6); a
    # bare branch as NVIDIA's tables and our plans print a floor (CUDA 13.x: ">= 580").
    assert str(parse_driver("535.98")) == "535.98"
    assert str(parse_driver("470.82.01")) == "470.82.01"
    assert str(parse_driver("580")) == "580"
    for bad in ("12", "latest", "470.82.01.7", "v470.82"):
        with pytest.raises(InputError, match="--driver"):
            parse_driver(bad)


def test_compute_capability_well_formed_is_accepted_listed_or_not():
    """Issue 31: a well-formed compute capability no table lists is planned by rule, not refused; only a
    malformed one is bad input (NVIDIA numbers the minor with one digit)."""
    known = ["3.5", "3.7", "5.0", "6.1", "7.0", "7.5", "8.0", "8.6", "8.9", "9.0"]
    assert parse_cc("8.6", known) == ComputeCapability(8, 6)
    assert parse_cc("sm_86", known) == ComputeCapability(8, 6)
    assert parse_cc("6.5", known) == ComputeCapability(6, 5)
    for bad in ("8.12", "8", "banana", "８.６"):
        with pytest.raises(InputError, match="not a compute capability"):
            parse_cc(bad, known)


def test_os_aliases():
    assert parse_os("Windows") == "windows"
    assert parse_os("wsl") == "wsl2"
    with pytest.raises(InputError, match="linux, windows, macos, wsl2"):
        parse_os("beos")
