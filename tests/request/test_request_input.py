"""Specifies how a Request is made: the command line's text is parsed once into typed values (flags.parse_flags ->
RequestInput), and request.build_request makes the Request from typed values and the detected machine, so doctor,
explain and fleet build requests from the values they hold. Text read from a probe or a log goes through the same
parsers (flags.read_*) and comes back as None (and why), never as bad input.

GPU facts are NVIDIA's CUDA GPU list (https://developer.nvidia.com/cuda-gpus): GeForce RTX 3090 is compute
capability 8.6, A100 is 8.0, as gpus.toml records them with that source."""

from dataclasses import replace

import pytest
from packaging.specifiers import SpecifierSet

from stackresolve.model.machine import DriverInfo, GpuInfo, Machine, OSInfo
from stackresolve.request.parse import (Flags, parse_flags, parse_python, read_driver, read_os, read_python, read_version,
                                request_from_flags, validate_version)
from stackresolve.model.enums import Arch, Framework, Os, Vendor
from stackresolve.model.finding import Finding
from stackresolve.model.values import ComputeCapability, DriverVersion
from stackresolve.request.build import GpuTarget, InputError, Request, RequestInput, build_request


@pytest.fixture(scope="module")
def kb():
    from stackresolve.knowledge.loader import load_knowledge

    return load_knowledge()


def known_gpu(kb, name: str, source: str = "flag --gpu") -> GpuTarget:
    gpu = kb.find_gpu(name)
    return GpuTarget(gpu.name, ComputeCapability.parse(gpu.cc), gpu.architecture, source)


def test_flags_become_typed_values(kb):
    given = parse_flags(kb, Flags(torch="2.5", os="win", arch="amd64", gpu="RTX 3090", driver="535.98",
                                  python="py311", vendor="stock"))
    assert given.framework is Framework.PYTORCH and given.version == "2.5"
    assert given.spec == SpecifierSet("==2.5.*")  # a release line names its patch releases
    assert given.os is Os.WINDOWS and given.arch is Arch.X86_64  # the aliases of --os and --arch
    assert [(g.name, g.cc) for g in given.gpus] == [("GeForce RTX 3090", ComputeCapability(8, 6))]
    assert given.driver == DriverVersion.parse("535.98") and str(given.driver) == "535.98"
    assert given.python == "3.11" and given.vendor is Vendor.STOCK and given.apple_gpu is None


def test_flags_left_out_are_left_to_the_machine(kb):
    given = parse_flags(kb, Flags())
    assert given == RequestInput()  # TensorFlow, any release; nothing else given
    assert given.spec == SpecifierSet() and given.os is None and given.gpus == () and given.driver is None
    assert given.replace(os=Os.LINUX) == RequestInput(os=Os.LINUX) and given.os is None  # a new input
    with pytest.raises(AttributeError):
        given.os = Os.LINUX


def test_an_apple_gpu_is_named_not_looked_up(kb):
    given = parse_flags(kb, Flags(gpu="apple m2 max"))
    assert given.apple_gpu == "Apple M2 Max" and given.gpus == ()
    request = build_request(kb, given, None)
    assert (request.os, request.arch, request.cpu_only, request.apple_gpu) == (Os.MACOS, Arch.ARM64, True,
                                                                               "Apple M2 Max")


def test_a_request_from_typed_values(kb):
    a100 = known_gpu(kb, "A100", "the log")
    given = RequestInput(Framework.JAX, "0.4", SpecifierSet("==0.4.*"), os=Os.LINUX, gpus=(a100,),
                         driver=DriverVersion.parse("550.54.14"), python="3.11")
    request = build_request(kb, given, None)
    assert request == Request(version="0.4", spec=SpecifierSet("==0.4.*"), os=Os.LINUX, arch=Arch.X86_64,
                              python="3.11", driver=DriverVersion.parse("550.54.14"), gpus=(a100,),
                              framework=Framework.JAX)
    assert request.gpus[0].cc == ComputeCapability(8, 0) and request.asked == "JAX 0.4"
    assert request.assumptions == ()  # everything was given: nothing assumed


def test_typed_input_and_the_same_flags_make_the_same_request(kb):
    gtx = known_gpu(kb, "GTX 1080 Ti")
    typed = RequestInput(Framework.TENSORFLOW, "1.15", SpecifierSet("==1.15.*"), os=Os.LINUX, gpus=(gtx,),
                         driver=DriverVersion.parse("440.33"), vendor=Vendor.NVIDIA)
    flags = Flags(tf="1.15", os="linux", gpu="GTX 1080 Ti", driver="440.33", vendor="nvidia")
    assert parse_flags(kb, flags) == typed
    assert request_from_flags(kb, flags, None) == build_request(kb, typed, None)


def test_the_machine_fills_what_the_input_leaves_out(kb):
    machine = Machine(os=OSInfo("linux", arch="aarch64"), driver=DriverInfo("535.104.05", None, "nvml"),
                      gpus=(GpuInfo(0, "NVIDIA GeForce RTX 3090", "8.6", 24576, "nvml"),))
    request = build_request(kb, RequestInput(), machine)
    assert (request.os, request.arch, str(request.driver)) == (Os.LINUX, Arch.AARCH64, "535.104.05")
    assert [(str(g.cc), g.architecture, g.source) for g in request.gpus] == [("8.6", "ampere", "nvml")]
    assert "operating system linux, detected" in request.assumptions
    assert "driver 535.104.05, detected by nvml" in request.assumptions
    # what the input gives wins over the machine; --cpu leaves the machine's GPUs and driver out
    cpu = build_request(kb, RequestInput(os=Os.WSL2, cpu=True), machine)
    assert (cpu.os, cpu.gpus, cpu.driver, cpu.cpu_only) == (Os.WSL2, (), None, True)


def test_a_request_is_derived_from_a_request(kb):
    request = build_request(kb, RequestInput(os=Os.LINUX, gpus=(known_gpu(kb, "RTX 3090"),), python="3.11"), None)
    anywhere = replace(request, python=None, driver=None)
    assert anywhere.python is None and anywhere.gpus == request.gpus and anywhere.framework is request.framework


def test_a_bad_override_is_bad_input_only_where_flags_are_parsed(kb):
    machine = Machine(os=OSInfo("linux", arch="x86_64"), driver=None,
                      findings=(Finding("error", "bad-override", "STACKRESOLVE_DRIVER='x' is not a driver version"),))
    with pytest.raises(InputError, match="STACKRESOLVE_DRIVER"):
        request_from_flags(kb, Flags(tf="2.15"), machine)
    # built from typed values, the request takes what detection could read (it left the bad value out)
    assert build_request(kb, RequestInput(), machine).driver is None


def test_text_from_a_probe_or_a_log_is_read_not_rejected(kb):
    spec, problem = read_version(kb, Framework.TENSORFLOW, "9.9")
    assert spec is None
    with pytest.raises(InputError) as bad:
        validate_version(kb, Framework.TENSORFLOW, "9.9")
    assert problem == str(bad.value)  # the same words a --tf 9.9 prints
    assert read_version(kb, Framework.PYTORCH, "2.5.1") == (SpecifierSet("==2.5.1"), "")
    assert read_version(kb, Framework.JAX, "9" * 5000)[0] is None  # a log's "release" of 5,000 digits
    assert read_python("3.11.7") == parse_python("3.11.7") == "3.11"
    assert read_python("3.99") is None and read_python(None) is None  # no CPython 3.99 (python.org/downloads)
    assert read_driver("535.104.05") == DriverVersion.parse("535.104.05") and read_driver("banana") is None
    assert read_os("darwin") is Os.MACOS and read_os("beos") is None


def test_doctor_plans_an_unknown_release_as_no_request(kb):
    from stackresolve.doctor.frameworks import Planner

    machine = Machine(os=OSInfo("linux", arch="x86_64"), driver=None)
    planner = Planner(kb, machine, Framework.PYTORCH)
    assert planner.request("0.0.1") is None  # no PyTorch 0.0.1 is known (pytorch.toml): a finding, not an error
    request = planner.request("2.5", python="3.99")
    assert request.spec == SpecifierSet("==2.5.*") and request.python is None  # a Python no CPython has: unknown
    assert planner.installed("0.0.1") is None and planner.fix("0.0.1") is not None  # the fix plans the newest
