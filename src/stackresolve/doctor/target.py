"""What doctor checks the machine against: the resolver's stack for the installed TensorFlow on this OS and
Python (or for --tf), corrected by the installed wheel's own build_info where it says otherwise."""

from __future__ import annotations

import re
from dataclasses import dataclass

from stackresolve.doctor.installed import resolve_installed
from stackresolve.doctor.machine import installed_tensorflow, os_of, system_of
from stackresolve.doctor.report import Target
from stackresolve.knowledge.base import KnowledgeBase
from stackresolve.knowledge.rules import cuda_runtime_serves, tf_library_names
from stackresolve.request.parse import read_python, read_version, reject_bad_overrides, validate_version
from stackresolve.model.enums import Delivery, Framework, Os, Severity, Vendor
from stackresolve.model.finding import Finding
from stackresolve.model.stack import Resolution, Stack
from stackresolve.model.values import major_minor
from stackresolve.request.build import RequestInput, build_request, machine_arch
from stackresolve.resolve import resolve


@dataclass(frozen=True)
class TargetChoice:
    resolution: Resolution | None
    origin: str  # "installed" | "--tf" | "newest for this machine"
    findings: tuple[Finding, ...]


def _request(kb: KnowledgeBase, machine, tf: str, spec, *, python: str | None, cpu: bool, with_machine: bool,
             vendor: Vendor | None = None):
    # The driver and GPU are what doctor checks, not constraints of the target: resolve without them unless no
    # TensorFlow is installed (then the newest stack for this machine is the target).
    given = RequestInput(Framework.TENSORFLOW, tf, spec, os=os_of(machine), arch=machine_arch(machine),
                         python=read_python(python), cpu=cpu, vendor=vendor)
    return build_request(kb, given, machine if with_machine else None)


def nvidia_release(installed) -> tuple[str, str] | None:
    """NVIDIA's TensorFlow 1.15 ("1.15.5+nv22.12", nvidia-tensorflow): (the upstream release, NVIDIA's release
    month) read off the local version (NVIDIA/tensorflow setup.py: _VERSION + '+nv' + the release branch); None
    for any other TensorFlow."""
    if installed is None or not installed.version:
        return None
    match = re.fullmatch(r"(\d+(?:\.\d+)*)\+nv(\d+\.\d+)", installed.version.strip())
    if match is None:
        return None
    return match.group(1), match.group(2)


def choose_target(kb: KnowledgeBase, machine, tf_flag: str | None) -> TargetChoice:
    findings: list[Finding] = []
    installed = installed_tensorflow(machine)
    python = major_minor(machine.python.version) if machine.python else None
    if tf_flag:
        tf, origin = tf_flag, "--tf"
    elif installed:
        tf, origin = installed.version, "installed"
    else:
        tf, origin = "latest", "newest for this machine"
        where = machine.python.executable if machine.python else "the target Python"
        # Nothing installed is nothing broken: the report says what is missing and the plan that installs it.
        findings.append(Finding(Severity.INFO, "tensorflow-not-installed",
                                f"no TensorFlow (nor PyTorch or JAX) is installed in {where}: nothing to check yet; "
                                f"this report lists what the newest TensorFlow for this machine needs",
                                "install the stack this report checks against (see the plan command below), or pass "
                                "--tf VERSION to check this machine for another release; for PyTorch or JAX, "
                                "`stackresolve plan --torch VERSION` / `--jax VERSION` prints what to install",
                                "python-probe (dist-info)"))
    cpu = os_of(machine) is Os.MACOS or (origin == "installed" and installed.gpu_build is False)
    with_machine = origin == "newest for this machine"
    vendor = None
    nvidia = nvidia_release(installed) if origin == "installed" else None
    if nvidia is not None:
        # NVIDIA's build: the target is that release (its own CUDA, cuDNN and driver), not the newest of them
        tf, vendor = nvidia[0], Vendor.NVIDIA

    def installed_release(candidate) -> bool:
        return candidate.distribution == "nvidia-tensorflow" and candidate.version == installed.version.strip()

    def run(request):
        if nvidia is not None:
            verdict = resolve_installed(kb, request, installed_release)
            if verdict.known:
                return verdict.resolution
        return resolve(kb, request, with_alternatives=False)

    if origin == "installed":  # the probe's text: a release the knowledge base does not know is a finding
        spec, problem = read_version(kb, Framework.TENSORFLOW, tf)
        if spec is None:
            findings.append(Finding(Severity.WARNING, "tensorflow-unknown-release",
                                    f"the installed TensorFlow {tf} is not in the knowledge base ({problem}); only "
                                    "the checks that need no target ran", "check a known release with --tf VERSION",
                                    "tensorflow_wheels.toml (the package index)"))
            return TargetChoice(None, origin, tuple(findings))
    else:  # --tf is the user's text (InputError, exit 2, when bad); "latest" names any release
        spec = validate_version(kb, Framework.TENSORFLOW, tf)
    if with_machine:  # the target takes the machine's facts: an override detection could not read is bad input
        reject_bad_overrides(machine)
    request = _request(kb, machine, tf, spec, python=python, cpu=cpu, with_machine=with_machine, vendor=vendor)
    resolution = run(request)
    if nvidia is not None and resolution.stack is not None and \
            resolution.stack.framework.version != installed.version.strip():
        findings.append(Finding(Severity.INFO, "nvidia-release-unknown",
                                f"NVIDIA's release {nvidia[1]} ({installed.version}) is not in the knowledge base; "
                                f"checking against {resolution.stack.framework.version}",
                                "", "nvidia_tensorflow.toml"))
    if origin == "installed" and wheels_absent(machine, resolution.stack):
        # The and-cuda extra brings CUDA and cuDNN as pip wheels: without any of them (and no CUDA on the machine
        # that serves the build) this TensorFlow runs on the CPU, so that is what it is checked as.
        stack = resolution.stack
        cpu_resolution = resolve(kb, _request(kb, machine, tf, spec, python=python, cpu=True, with_machine=False,
                                              vendor=vendor), with_alternatives=False)
        if cpu_resolution.stack is not None:
            findings.append(Finding(
                Severity.WARNING if machine.gpus else Severity.INFO, "and-cuda-not-installed",
                f"{installed.package} {installed.version} is installed without the NVIDIA wheels of its [and-cuda] "
                f"extra (CUDA {stack.cuda.version}, cuDNN {stack.cudnn.version}), and no CUDA {stack.cuda.version} "
                f"was found on the machine: it runs on the CPU"
                + (" although this machine has an NVIDIA GPU" if machine.gpus else ""),
                f"for the GPU: pip install '{stack.framework.pip_package}=={stack.framework.version}'",
                f"{stack.framework.source} (Requires-Dist of the and-cuda extra)"))
            resolution = cpu_resolution
    if resolution.stack is None and python:
        retry = run(_request(kb, machine, tf, spec, python=None, cpu=cpu, with_machine=with_machine, vendor=vendor))
        if retry.stack is not None:
            py = retry.stack.python
            findings.append(Finding(Severity.ERROR, "python-unsupported",
                                    f"{py.min}-{py.max} are the Python versions with {retry.stack.framework.label} "
                                    f"builds for {request.wheel_platform}; this environment runs Python {python}",
                                    f"create an environment with Python {py.recommended}", py.source))
            resolution = retry
    if resolution.stack is None and not cpu:
        cpu_resolution = resolve(kb, _request(kb, machine, tf, spec, python=python, cpu=True,
                                              with_machine=with_machine),
                                 with_alternatives=False)
        if cpu_resolution.stack is not None:
            for f in resolution.findings:
                if f.severity is Severity.ERROR:
                    findings.append(Finding(Severity.WARNING if f.code != "conflict" else Severity.INFO, f.code,
                                            f.message + " (TensorFlow runs on the CPU here)", f.fix, f.source))
            resolution = cpu_resolution
    if resolution.stack is None:
        findings += resolution.findings
    return TargetChoice(resolution, origin, tuple(findings))


def wheels_absent(machine, stack: Stack | None) -> bool:
    """Whether a stock TensorFlow whose CUDA and cuDNN come with its [and-cuda] extra has none of those wheels
    installed, and no CUDA toolkit on the machine serves its CUDA line either."""
    if stack is None or stack.cuda is None or stack.delivery is not Delivery.PIP_WHEELS or \
            stack.framework.vendor is not Vendor.STOCK or machine.python is None:
        return False
    if any(p.name.lower().startswith("nvidia-") for p in machine.python.packages):
        return False
    return not any(cuda_runtime_serves(t.version, stack.cuda.version) != "no" for t in machine.cuda_toolkits)


def make_target(machine, stack: Stack, origin: str) -> tuple[Target, list[Finding]]:
    fw = stack.framework
    package = fw.pip_package or fw.label
    if stack.cuda is None:
        inst = installed_tensorflow(machine)
        if origin == "installed" and inst is not None and inst.package:
            package = inst.package  # what is installed, not the package a CPU plan would name
        return Target(fw.version, package, origin, stack.python.recommended, None), []
    findings: list[Finding] = []
    cuda, cuda_source = stack.cuda.version, stack.cuda.source
    compiled = stack.cudnn.compiled
    cudnn_major = compiled.split(".")[0]
    cudnn_source = stack.cudnn.source
    inst = installed_tensorflow(machine)
    if origin == "installed" and inst and inst.cuda and major_minor(inst.cuda) != cuda:
        # the wheel's own build_info says what it dlopens: it wins over the table
        findings.append(Finding(Severity.INFO, "build-info-differs",
                                f"the installed TensorFlow says it was built with CUDA {inst.cuda}; the tested-build "
                                f"table for {fw.version} says CUDA {cuda}. Checking against the wheel's own build "
                                f"info.", "", f"{inst.path or ''} tensorflow/python/platform/build_info.py; "
                                              f"{cuda_source}"))
        cuda, cuda_source = major_minor(inst.cuda) or inst.cuda, "build_info.py of the installed wheel"
    if origin == "installed" and inst and inst.cudnn and inst.cudnn.split(".")[0] != cudnn_major:
        cudnn_major = inst.cudnn.split(".")[0]
        compiled = inst.cudnn if "." in inst.cudnn else f"{cudnn_major}.0"
        cudnn_source = "build_info.py of the installed wheel"
    libraries = tuple(tf_library_names(cuda, cudnn_major, system_of(machine)))
    driver = stack.driver
    return Target(fw.version, package, origin, stack.python.recommended, cuda, cuda_source, compiled,
                  stack.cudnn.version, cudnn_source, driver.minimum if driver else None,
                  driver.source if driver else "", stack.delivery is not Delivery.SYSTEM, libraries), findings
