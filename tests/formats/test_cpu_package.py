"""CPU plans install TensorFlow's CPU package where the index has it for the line and platform (issue 32, item 5).

Expected values, from the package index's file lists (PEP 691 JSON, read 2026-11-28 through pip's configured
index; the same lists constraints/tensorflow_wheels.toml records):
- tensorflow-cpu 2.15.1: cp39-cp311 manylinux2014_x86_64 (207,208,420 bytes for cp311) and win_amd64 wheels, no
  Linux aarch64 wheel; tensorflow 2.15.1's cp311 manylinux2014_x86_64 wheel: 475,258,663 bytes (it carries the
  CUDA kernels: TensorFlow's pip package includes GPU support on Linux from 2.1, tensorflow/docs
  site/en/install/pip.md).
- From 2.11 the Windows tensorflow and tensorflow-cpu wheels are both metapackages installing tensorflow-intel
  (tensorflow_wheels.toml notes), and TensorFlow on macOS never carried CUDA after 1.1: `tensorflow` stays.
- Before 2.1 (tensorflow 2.0 on Linux) `tensorflow` is the CPU package and tensorflow-gpu the GPU one.
Checked by installing the 2.15 CPU plan with pip into a fresh Python 3.11 venv (see the branch note).
"""

import pytest

from stackresolve.request.parse import Flags, request_from_flags
from stackresolve.resolve import resolve


def _distribution(kb, **flags):
    stack = resolve(kb, request_from_flags(kb, Flags(cpu=True, **flags), None), with_alternatives=False).stack
    assert stack is not None
    return stack.framework.distribution, stack.framework.version


@pytest.mark.parametrize("flags, expected", [
    (dict(tf="2.15", os="linux"), ("tensorflow-cpu", "2.15.1")),
    (dict(tf="2.15", os="wsl2"), ("tensorflow-cpu", "2.15.1")),
    (dict(tf="2.10", os="windows"), ("tensorflow-cpu", "2.10.1")),
    (dict(tf="2.1", os="linux"), ("tensorflow-cpu", "2.1.4")),
    (dict(tf="2.15", os="linux", arch="aarch64"), ("tensorflow", "2.15.1")),  # no tensorflow-cpu aarch64 wheel
    (dict(tf="2.15", os="macos"), ("tensorflow", "2.15.1")),
    (dict(tf="2.15", os="windows"), ("tensorflow", "2.15.1")),  # both are tensorflow-intel metapackages
    (dict(tf="2.0", os="linux"), ("tensorflow", "2.0.4")),  # tensorflow is the CPU package before 2.1
])
def test_the_cpu_package_where_the_default_package_carries_cuda(kb, flags, expected):
    assert _distribution(kb, **flags) == expected


def test_the_cpu_package_is_one_of_the_wheels_recorded(kb):
    release = kb.wheel_release("tensorflow-cpu", "2.15.1")
    assert release is not None and "3.11" in release.pythons["linux"] and not release.pythons["linux_aarch64"]


def test_the_pip_plan_pins_the_cpu_package():
    from click.testing import CliRunner

    from stackresolve.cli.app import app

    result = CliRunner().invoke(app, ["plan", "--no-detect", "--tf", "2.15", "--cpu", "--os", "linux",
                                      "--format", "pip"])
    assert result.exit_code == 0, result.output
    requirements = [line for line in result.stdout.splitlines() if line and not line.startswith("#")]
    assert requirements[0] == "tensorflow-cpu==2.15.1"
