"""Specifies model/values.py: compute capabilities, driver versions and CUDA lines parsed once, ordered, hashed
and printed, under the project's number rule (ASCII digits only)."""

import pytest
from packaging.version import Version

from stackresolve.model.values import ComputeCapability, CudaLine, DriverVersion, major_minor


def test_compute_capabilities_order_as_pairs_not_decimals():
    # NVIDIA's CUDA GPU list: Turing 7.5, Ampere 8.0/8.6, Ada 8.9, Hopper 9.0, Blackwell 10.0 and 12.0.
    texts = ["12.0", "8.6", "10.0", "7.5", "9.0", "8.9", "8.0"]
    ordered = sorted(texts, key=ComputeCapability.parse)
    assert ordered == ["7.5", "8.0", "8.6", "8.9", "9.0", "10.0", "12.0"]
    assert ComputeCapability.parse("8.6") == ComputeCapability(8, 6)
    assert str(ComputeCapability.parse("12.0")) == "12.0"
    assert ComputeCapability.parse("8.6").sm == "sm_86"
    assert len({ComputeCapability.parse("8.6"), ComputeCapability(8, 6)}) == 1


@pytest.mark.parametrize("text", ["8", "8.6.1", "８.６", "٨.٦", "", "8.x", "1234567890.0"])
def test_a_compute_capability_is_two_ascii_numbers(text):
    with pytest.raises(ValueError):
        ComputeCapability.parse(text)


def test_values_of_different_kinds_never_compare_equal():
    assert ComputeCapability(8, 6) != CudaLine(8, 6)
    assert ComputeCapability(8, 6) != (8, 6)
    with pytest.raises(TypeError):
        ComputeCapability(8, 6) < CudaLine(9, 0)  # noqa: B015
    with pytest.raises(AttributeError):
        ComputeCapability(8, 6).major = 9


def test_driver_versions_order_as_packaging_orders_releases():
    # A bare branch compares as the branch's first release (request.parse_driver: "580" is a branch floor).
    texts = ["580.65.06", "580", "535.104.05", "470.82.01", "535.98", "560.35.03"]
    assert sorted(texts, key=DriverVersion.parse) == sorted(texts, key=Version)
    assert DriverVersion.parse("580") < DriverVersion.parse("580.65.06")
    assert DriverVersion.parse("580") == DriverVersion.parse("580.0")
    assert str(DriverVersion.parse("535.104.05")) == "535.104.05"  # NVIDIA's zero-padded minor kept
    assert DriverVersion.parse("535.104.05").branch == 535


def test_cuda_lines():
    assert CudaLine.parse("12.4.131") == CudaLine(12, 4)
    assert CudaLine.parse("10") == CudaLine(10, 0)  # TensorFlow's tested-build tables print CUDA 10.0 as "10"
    assert str(CudaLine.parse("11.8")) == "11.8"
    assert CudaLine.parse("11.8") < CudaLine.parse("12.0")
    with pytest.raises(ValueError):
        CudaLine.parse("12.x")


@pytest.mark.parametrize("text,expected", [
    ("8.1.0.77", "8.1"), ("3.11.7", "3.11"), ("12.4 (nvcc)", "12.4"), ("8", None), ("", None), (None, None),
    ("３.１１", None), ("1234567890.1", None),
])
def test_major_minor(text, expected):
    assert major_minor(text) == expected
