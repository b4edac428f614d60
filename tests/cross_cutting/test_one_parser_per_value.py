"""Issue 35: a compute capability and a driver version have ONE parser each (model/values.py), and every way a
value comes in uses it: a flag, an environment variable, a probe's reading, a lock, a fleet file. The same
malformed text is refused by all of them (one line and exit 2 at the command line, a finding for a probe), and the
same well-formed text is accepted by all of them.

What is well-formed comes from NVIDIA: compute capabilities are major.minor with a one-digit minor (CUDA C++
Programming Guide, "Compute Capabilities": 5.0 ... 12.1; nvcc names them sm_86, sm_120), driver versions as
nvidia-smi prints them (535.104.05, 572.60 on Windows, 96.43 for the 2000s' R96) or a bare branch (R580)."""

from __future__ import annotations

import json

import pytest
from click.testing import CliRunner

from stackresolve.cli import app
from stackresolve.detect import LocalFS, detect_machine
from stackresolve.detect import gpuchild, kernel, smi
from stackresolve.detect.runner import CommandNotFound
from stackresolve.request.parse import InputError, parse_cc, parse_driver
from stackresolve.fleet.inventory import FleetInputError
from stackresolve.model.values import ComputeCapability, DriverVersion, ValueTextError

BAD_CC = ["8.12", "banana", "10"]  # a two-digit minor; not a number; a bare number (10.0? sm_10?)
BAD_DRIVER = ["abc", "550."]
GOOD_CC = [("8.6", "8.6"), ("sm_86", "8.6"), ("12.0", "12.0"), ("sm_120", "12.0")]
GOOD_DRIVER = ["535.104.05", "572.60", "580"]


def run(*args, env=None):
    return CliRunner().invoke(app, list(args), env=env)


def one_line_refusal(result, *words: str) -> str:
    assert result.exit_code == 2, result.output
    lines = result.stderr.strip().splitlines()
    assert len(lines) == 1 and "Traceback" not in result.output, result.stderr
    assert all(w in lines[0] for w in words), lines[0]
    return lines[0]


# -- the parsers themselves ------------------------------------------------------------------------------------
@pytest.mark.parametrize("text", BAD_CC)
def test_the_compute_capability_parser_says_what_is_accepted(text):
    with pytest.raises(ValueTextError) as caught:
        ComputeCapability.parse(text)
    assert str(caught.value) == f"{text!r}: not a compute capability; use major.minor, e.g. 8.6 (a one-digit minor; " \
                                f"sm_86 also works)"


@pytest.mark.parametrize("text", BAD_DRIVER + ["1.2", "12", "32.0.15.6094"])
def test_the_driver_parser_says_what_is_accepted(text):
    with pytest.raises(ValueTextError, match="not an NVIDIA driver version; use e.g. 470.82.01"):
        DriverVersion.parse(text)


def test_the_tolerant_driver_reading_of_probes_still_refuses_what_is_no_version():
    # A probe may read a Windows display driver's own numbering (WSL2, the registry): a version, if not NVIDIA's
    assert str(DriverVersion.parse("32.0.15.6094", tolerant=True)) == "32.0.15.6094"
    for text in BAD_DRIVER:
        with pytest.raises(ValueTextError):
            DriverVersion.parse(text, tolerant=True)


# -- flags ----------------------------------------------------------------------------------------------------
@pytest.mark.parametrize("text", BAD_CC)
def test_the_flag_refuses_a_malformed_compute_capability(text):
    line = one_line_refusal(run("plan", "--no-detect", "--os", "linux", "--gpu-cc", text),
                            f"--gpu-cc {text!r}: not a compute capability", "use major.minor")
    with pytest.raises(InputError, match="not a compute capability") as caught:
        parse_cc(text)
    assert str(caught.value) in line


@pytest.mark.parametrize("text", BAD_DRIVER)
def test_the_flag_refuses_a_malformed_driver(text):
    one_line_refusal(run("plan", "--no-detect", "--os", "linux", "--driver", text),
                     f"--driver {text!r}: not an NVIDIA driver version")


@pytest.mark.parametrize("text, expected", GOOD_CC)
def test_the_flag_accepts_a_compute_capability(text, expected):
    assert str(parse_cc(text)) == expected
    result = run("plan", "--no-detect", "--os", "linux", "--tf", "2.15", "--gpu-cc", text, "--format", "json")
    assert result.exit_code in (0, 1)
    assert json.loads(result.stdout)["request"]["gpus"][0]["compute_capability"] == expected


@pytest.mark.parametrize("text", GOOD_DRIVER)
def test_the_flag_accepts_a_driver(text):
    assert str(parse_driver(text)) == text
    result = run("plan", "--no-detect", "--os", "linux", "--tf", "2.15", "--gpu-cc", "8.6", "--driver", text,
                 "--format", "json")
    assert result.exit_code in (0, 1) and json.loads(result.stdout)["request"]["driver"] == text


# -- environment variables (read by detection; bad input where a request takes facts from the machine) --------
def no_commands(argv, timeout):
    raise CommandNotFound(argv[0])


def detect_with(tmp_path, **env):
    return detect_machine(runner=no_commands, fs=LocalFS(tmp_path), env={"PATH": "/usr/bin", **env},
                          system="linux", python_exe=None)


def bad_overrides(machine) -> list[str]:
    return [f.message for f in machine.findings if f.code == "bad-override"]


@pytest.mark.parametrize("text", BAD_CC)
def test_the_environment_refuses_a_malformed_compute_capability(tmp_path, text):
    machine = detect_with(tmp_path, STACKRESOLVE_GPU_CC=text)
    assert bad_overrides(machine) == [f"STACKRESOLVE_GPU_CC={text!r} is not a compute capability (one per GPU, "
                                      f"separated by commas)"] and machine.gpus == ()
    fix = next(f.fix for f in machine.findings if f.code == "bad-override")
    assert fix == ComputeCapability.ACCEPTED  # what the flag's refusal says is accepted, word for word


@pytest.mark.parametrize("text", BAD_DRIVER)
def test_the_environment_refuses_a_malformed_driver(tmp_path, text):
    machine = detect_with(tmp_path, STACKRESOLVE_DRIVER=text)
    assert bad_overrides(machine) == [f"STACKRESOLVE_DRIVER={text!r} is not a driver version"]
    assert machine.driver is None


@pytest.mark.parametrize("text, expected", GOOD_CC)
def test_the_environment_accepts_a_compute_capability(tmp_path, text, expected):
    machine = detect_with(tmp_path, STACKRESOLVE_GPU_CC=text)
    assert bad_overrides(machine) == [] and machine.gpus[0].compute_capability == expected


@pytest.mark.parametrize("text", GOOD_DRIVER)
def test_the_environment_accepts_a_driver(tmp_path, text):
    machine = detect_with(tmp_path, STACKRESOLVE_DRIVER=text)
    assert bad_overrides(machine) == [] and machine.driver.version == text


def test_at_the_command_line_a_bad_override_is_one_line_and_exit_2():
    one_line_refusal(run("plan", "--os", "linux", env={"STACKRESOLVE_GPU_CC": "8.12"}),
                     "STACKRESOLVE_GPU_CC='8.12' is not a compute capability", ComputeCapability.ACCEPTED)
    one_line_refusal(run("plan", "--os", "linux", env={"STACKRESOLVE_DRIVER": "550."}),
                     "STACKRESOLVE_DRIVER='550.' is not a driver version", DriverVersion.ACCEPTED)


# -- probes: what they cannot read is no value (a finding names it), never a guess ------------------------------
@pytest.mark.parametrize("text", BAD_CC)
def test_probes_refuse_a_malformed_compute_capability(text):
    assert smi.clean_cc(text) is None
    rows = smi.parse_csv(f"0, NVIDIA GeForce RTX 3090, {text}, 24576 MiB, 00000000:01:00.0, 550.54.15\n",
                         ["index", "name", "compute_cap", "memory.total", "pci.bus_id", "driver_version"])
    assert rows[0].compute_capability is None


def test_nvml_s_pair_is_read_by_the_same_parser():
    assert gpuchild.cc_string([8, 6]) == "8.6" and gpuchild.cc_string([8, 12]) is None


@pytest.mark.parametrize("text", BAD_DRIVER)
def test_probes_refuse_a_malformed_driver_with_a_finding(tmp_path, text):
    assert smi.clean_driver(text) is None and kernel.parse_sys_version(text) is None
    assert smi.rejected(text) == text  # detection words a finding from it (nvidia-smi printed no version)
    banner = smi.parse_banner(f"| NVIDIA-SMI 550.54.15    Driver Version: {text}    CUDA Version: 12.4     |\n")
    assert banner.driver_version is None and banner.driver_raw == text


@pytest.mark.parametrize("text, expected", GOOD_CC)
def test_probes_accept_a_compute_capability(text, expected):
    assert smi.clean_cc(text) == expected


@pytest.mark.parametrize("text", GOOD_DRIVER[:2])
def test_probes_accept_a_driver(text):
    assert smi.clean_driver(text) == text and kernel.parse_sys_version(text + "\n") == text


# -- a lock ---------------------------------------------------------------------------------------------------
@pytest.fixture(scope="module")
def lock_doc() -> dict:
    result = run("plan", "--no-detect", "--os", "linux", "--tf", "2.15", "--gpu-cc", "8.6", "--driver",
                 "535.104.05", "--format", "lock")
    assert result.exit_code == 0
    return json.loads(result.stdout)


def check_lock_with(tmp_path, doc: dict, *flags: str):
    path = tmp_path / "stackresolve.lock"
    path.write_text(json.dumps(doc))
    return run("check", str(path), "--no-detect", "--os", "linux", "--gpu-cc", "8.6", "--driver", "535.104.05",
               *flags)


@pytest.mark.parametrize("text", BAD_CC)
def test_a_lock_refuses_a_malformed_compute_capability(tmp_path, lock_doc, text):
    doc = json.loads(json.dumps(lock_doc))
    doc["check"]["compiled_arch"]["sass"][0] = text
    one_line_refusal(check_lock_with(tmp_path, doc), "`check.compiled_arch.sass[0]`",
                     f"is not a compute capability ({text!r})", ComputeCapability.ACCEPTED)


@pytest.mark.parametrize("text", BAD_DRIVER)
def test_a_lock_refuses_a_malformed_driver(tmp_path, lock_doc, text):
    doc = json.loads(json.dumps(lock_doc))
    doc["check"]["driver"]["min"] = text
    one_line_refusal(check_lock_with(tmp_path, doc), "`check.driver.min`",
                     f"is not an NVIDIA driver version ({text!r})", DriverVersion.ACCEPTED)


def test_a_lock_accepts_well_formed_values(tmp_path, lock_doc):
    doc = json.loads(json.dumps(lock_doc))
    doc["check"]["driver"]["min"] = "535"  # a branch, as --driver 535 gives it
    doc["check"]["compiled_arch"]["sass"].append("sm_86")
    assert check_lock_with(tmp_path, doc, "--python", "3.11").exit_code in (0, 1)


# -- a fleet file ---------------------------------------------------------------------------------------------
def inventory(tmp_path, **facts) -> str:
    path = tmp_path / "fleet.toml"
    path.write_text("[[machine]]\nname = \"box\"\n" + "".join(f"{k} = \"{v}\"\n" for k, v in facts.items()))
    return str(path)


@pytest.mark.parametrize("text", BAD_CC)
def test_a_fleet_file_refuses_a_malformed_compute_capability(tmp_path, text):
    one_line_refusal(run("plan", "--no-detect", "--fleet", inventory(tmp_path, gpu_cc=text)),
                     f"gpu_cc {text!r}: not a compute capability", ComputeCapability.ACCEPTED)


@pytest.mark.parametrize("text", BAD_DRIVER)
def test_a_fleet_file_refuses_a_malformed_driver(tmp_path, text):
    one_line_refusal(run("plan", "--no-detect", "--fleet", inventory(tmp_path, gpu_cc="8.6", driver=text)),
                     f"driver {text!r}: not an NVIDIA driver version", DriverVersion.ACCEPTED)


def test_kubernetes_labels_are_read_by_the_same_parsers():
    from stackresolve.fleet.readers import label_driver, label_gpu

    with pytest.raises(ValueError, match="not a compute capability"):
        label_gpu("NVIDIA-GeForce-RTX-3090", "8", "12", lambda name: None)  # GFD's major/minor labels: 8.12
    with pytest.raises(ValueError, match="not an NVIDIA driver version"):
        label_driver({"nvidia.com/cuda.driver-version.full": "550."})


@pytest.mark.parametrize("cc, expected", GOOD_CC)
@pytest.mark.parametrize("driver", GOOD_DRIVER)
def test_a_fleet_file_accepts_well_formed_values(tmp_path, kb, cc, expected, driver):
    from stackresolve.fleet.readers import kb_lookup, read_inventory

    path = inventory(tmp_path, gpu_cc=cc, driver=driver)
    members = read_inventory(open(path).read(), path, kb_lookup(kb))
    assert (str(members[0].gpus[0].cc), str(members[0].driver)) == (expected, driver)


def test_fleet_errors_are_input_errors():
    assert issubclass(FleetInputError, ValueError) and issubclass(ValueTextError, ValueError)


# -- sorted by value, not by text ------------------------------------------------------------------------------
def test_conflict_messages_list_compute_capabilities_by_value(kb):
    # JAX 0.4 has no machine code for both; the alternatives name the GPUs: 8.6 before 10.0 (as text, "10.0" < "8.6")
    from stackresolve.request.parse import parse_version_spec
    from stackresolve.model.enums import Framework, Os
    from stackresolve.request.build import RequestInput, build_request, gpu_from_cc
    from stackresolve.resolve import resolve

    gpus = tuple(gpu_from_cc(kb, ComputeCapability.parse(c), "", "test") for c in ("10.0", "8.6"))
    given = RequestInput(Framework.JAX, "0.4", parse_version_spec("0.4", Framework.JAX), os=Os.LINUX, gpus=gpus)
    whys = [a.why for a in resolve(kb, build_request(kb, given, None)).alternatives]
    named = [w for w in whys if "machine code for compute capability" in w]
    assert named and all(w.endswith("compute capability 8.6, 10.0") for w in named), whys


def test_a_fleet_groups_machines_by_their_gpus_as_values(kb):
    from stackresolve.fleet.grouping import group_members
    from stackresolve.fleet.inventory import GpuFact, Member

    b200, rtx = GpuFact("NVIDIA B200", ComputeCapability(10, 0)), GpuFact("RTX 3090", ComputeCapability(8, 6))
    one, two = Member("a", "x", gpus=(b200, rtx)), Member("b", "x", gpus=(rtx, b200))
    assert [fact[0] for fact in one.facts[4]] == [ComputeCapability(8, 6), ComputeCapability(10, 0)]
    assert one.facts == two.facts and len(group_members([one, two])) == 1
