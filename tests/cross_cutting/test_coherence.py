"""One answer everywhere: for every TensorFlow line on Linux, Windows and WSL2 and a GPU of each era, the text,
the JSON document, the pip, conda, apt, PowerShell and Docker plans and the lock install the same TensorFlow,
Python, CUDA, cuDNN and driver floor, and `check` of each lock passes on the machine it describes.

The values compared are read out of each rendering's install lines (the pins, the package specs, the script
variables), not out of a shared header, so an emitter that decides a version of its own fails here."""

from __future__ import annotations

import json
import re

import yaml

from stackresolve.lock.check import FACTS, check_lock
from stackresolve.formats.render import all_plans
from stackresolve.formats.lock_read import parse_lock
from stackresolve.model.enums import Delivery
from stackresolve.request.parse import Flags, request_from_flags
from stackresolve.resolve import resolve

from plan_reading import python_run_by

# One GPU per era (NVIDIA's CUDA GPUs list): Kepler, Pascal, Ampere, Hopper.
GPUS = ("Tesla K80", "GeForce GTX 1080", "GeForce RTX 3090", "H100")
SYSTEMS = ("linux", "windows", "wsl2")



def cases(kb):
    for line in kb.lines:
        for os_name in SYSTEMS:
            for gpu in GPUS:
                yield line.version, os_name, gpu


def test_every_rendering_installs_the_same_stack(kb):
    checked = 0
    substitutes = []
    for line, os_name, gpu in cases(kb):
        resolution = resolve(kb, request_from_flags(kb, Flags(tf=line, os=os_name, gpu=gpu), None),
                             with_alternatives=False)
        stack = resolution.stack
        if stack is None:
            continue
        checked += 1
        where = f"TF {line} {os_name} {gpu}"
        plans = all_plans(resolution, kb)
        fw, py = stack.framework, stack.python.recommended

        # text and JSON
        assert fw.label in plans["text"] and f"python     {py}" in plans["text"], where
        doc = json.loads(plans["lock"])
        assert doc["stack"]["framework"]["version"] == fw.version, where
        assert doc["stack"]["python"]["recommended"] == py, where

        # pip: the framework pin first (after the index option of a build on another index)
        requirements = [l for l in plans["pip"].splitlines() if l and not l.startswith(("#", "--"))]
        if fw.requirement:
            assert requirements[0] == fw.requirement, where
            venv = f"py -{py} -m venv" if os_name == "windows" else f"python{py} -m venv"
            assert venv in plans["pip"], where

        if stack.cuda is not None:
            cuda, cudnn = stack.cuda, stack.cudnn
            assert f"CUDA {cuda.version}" in plans["text"] and cudnn.version in plans["text"], where
            assert doc["stack"]["cudnn"]["version"] == cudnn.version, where
            assert doc["check"]["cuda"] == cuda.version, where
            assert doc["check"]["driver"]["min"] == stack.driver.minimum, where

        # the Python each Dockerfile runs is the stack's (the header states it; the image must run it)
        if "dockerfile" in plans:
            assert python_run_by(kb, plans["dockerfile"]) == py, where
        if stack.cuda is not None and stack.delivery is Delivery.SYSTEM:
            if "conda" in plans:
                _conda_matches(plans["conda"], stack, where, substitutes)
            if os_name in ("linux", "wsl2"):
                if "apt" in plans:
                    _apt_matches(plans["apt"], stack, where, substitutes)
                if "dockerfile" in plans:
                    _dockerfile_matches(plans["dockerfile"], stack, where)
            if os_name == "windows" and "powershell" in plans:
                _powershell_matches(plans["powershell"], stack, where)

        # check of the lock on the machine the lock describes
        lock = parse_lock(plans["lock"], "lock")
        result = check_lock(lock, kb, described_machine(kb, stack, os_name, gpu), frozenset(FACTS))
        assert result.matches, (where, result.differences)
    assert checked > 200
    # Where no conda channel has the stack's cuDNN minor at all, the conda plan says which one it installs.
    print(sorted(set(s.rsplit(" ", 2)[0] for s in substitutes)))
    assert not substitutes


def _conda_matches(text: str, stack, where: str, substitutes: list[str]) -> None:
    doc = yaml.safe_load(text)
    specs = [d for d in doc["dependencies"] if isinstance(d, str)]
    assert specs[0] == f"python={stack.python.recommended}", where
    cudnn_specs = [s.split("=")[1] for s in specs if s.startswith("cudnn=")]
    pip = next(d["pip"] for d in doc["dependencies"] if isinstance(d, dict))
    cudnn_wheels = [p.split("==")[1] for p in pip if p.startswith("nvidia-cudnn-")]
    if not cudnn_specs and not cudnn_wheels:
        return  # no channel has CUDA + cuDNN for this line: the plan says to install them on the system
    installed = ".".join((cudnn_specs or cudnn_wheels)[0].split(".")[:3])
    if installed != stack.cudnn.version:
        assert "substitute:" in text, where
        substitutes.append(f"conda {where}")


def _apt_matches(text: str, stack, where: str, substitutes: list[str]) -> None:
    packages = re.findall(r"CUDNN_PACKAGES=\(([^)]*)\)", text)
    assert packages, where
    for listing in packages:
        if f"={stack.cudnn.full_version}-" not in listing:
            assert "# substitute:" in text, (where, listing)
            substitutes.append(f"apt {where}")
    assert re.search(rf"^PYTHON_VERSION='?{re.escape(stack.python.recommended)}'?$", text, re.M), where
    assert f"cuda-libraries-{stack.cuda.version.replace('.', '-')}" in text, where


def _dockerfile_matches(text: str, stack, where: str) -> None:
    base = re.search(r"^FROM (\S+)$", text, re.M)
    if base is None:
        return  # no base image recorded: the file says why
    pinned = re.search(r"libcudnn\d=(\S+)", text)
    image_cudnn = re.search(r"cuDNN (\d+\.\d+\.\d+)", text.split("FROM")[0].split("# Base:")[1])
    carried = pinned.group(1).split("-")[0] if pinned else image_cudnn.group(1)
    assert carried.startswith(stack.cudnn.version), (where, carried)
    assert stack.framework.requirement in text, where


def _powershell_matches(text: str, stack, where: str) -> None:
    if "$CudaVersion" not in text:
        return
    assert f"$CudaVersion = '{stack.cuda.version}'" in text, where
    assert f"$CudnnVersion = '{stack.cudnn.full_version}'" in text or \
        re.search(rf"\$CudnnVersion = '{re.escape(stack.cudnn.version)}", text), where
    assert f"$PythonVersion = '{stack.python.recommended}'" in text, where


def described_machine(kb, stack, os_name: str, gpu: str, framework: str = "tensorflow"):
    from stackresolve.model.machine import (CudnnInfo, DriverInfo, FrameworkInfo, GpuInfo, Machine, OSInfo,
                                           PythonInfo, ToolkitInfo)

    model = kb.find_gpu(gpu)
    system = "linux" if os_name == "wsl2" else os_name
    return Machine(
        os=OSInfo(system=system, wsl=os_name == "wsl2"),
        driver=DriverInfo(stack.driver.minimum, None, "test") if stack.driver else None,
        gpus=(GpuInfo(0, model.name, model.cc, None, "test"),),
        cuda_toolkits=(ToolkitInfo(stack.cuda.version, None, "test", full_version=stack.cuda.release),)
        if stack.cuda else (),
        cudnn=(CudnnInfo(stack.cudnn.version, None, "test"),) if stack.cudnn else (),
        python=PythonInfo(stack.python.recommended, "python"),
        frameworks=(FrameworkInfo(framework, stack.framework.version, None, None, True,
                                  variant=stack.framework.variant),))


# -- PyTorch and JAX: the same stack in every rendering -------------------------------------------------------
FRAMEWORK_GPUS = ("Tesla K80", "GeForce GTX 1080", "GeForce RTX 3090", "GeForce RTX 5090", "H100")


def framework_cases(kb):
    from stackresolve.model.enums import Framework
    from stackresolve.resolve.pool import release_lines

    for framework, systems in ((Framework.PYTORCH, ("linux", "windows", "wsl2")), (Framework.JAX, ("linux", "wsl2"))):
        for line in release_lines(kb, framework):
            for os_name in systems:
                for gpu in FRAMEWORK_GPUS:
                    yield framework, line.version, os_name, gpu


def test_pytorch_and_jax_renderings_install_the_same_stack(kb):
    from stackresolve.model.enums import Framework

    checked = 0
    for framework, line, os_name, gpu in framework_cases(kb):
        flags = Flags(torch=line, os=os_name, gpu=gpu) if framework is Framework.PYTORCH else \
            Flags(jax=line, os=os_name, gpu=gpu)
        resolution = resolve(kb, request_from_flags(kb, flags, None), with_alternatives=False)
        stack = resolution.stack
        if stack is None:
            continue
        checked += 1
        where = f"{framework.value} {line} {os_name} {gpu}"
        plans = all_plans(resolution, kb)
        fw = stack.framework
        index = " ".join((fw.index_option, fw.index_url)) if fw.index_url else None
        pins = [fw.requirement, *fw.companions, *(p.requirement for p in stack.pip_pins)]

        # pip: the index option first where the build is not on the default index, then the pins
        lines = [l for l in plans["pip"].splitlines() if l and not l.startswith("#")]
        assert lines == ([index] if index else []) + pins, where
        # conda: the same lines in the pip section, no conda CUDA
        doc = yaml.safe_load(plans["conda"])
        pip = next(d["pip"] for d in doc["dependencies"] if isinstance(d, dict))
        assert pip == ([index] if index else []) + pins, where
        assert not [d for d in doc["dependencies"] if isinstance(d, str) and d.startswith(("cuda", "cudnn"))], where
        # Docker and apt (Linux, WSL2), PowerShell (Windows): the same pins and index; no system CUDA
        if os_name in ("linux", "wsl2"):
            for pin in pins + ([fw.index_url] if index else []):
                assert pin in plans["dockerfile"], (where, pin)
                assert pin in plans["apt"], (where, pin)
            assert "FROM python:" in plans["dockerfile"], where
            assert "cuda-libraries" not in plans["apt"], where
        if os_name == "windows":
            for pin in pins:
                assert pin in plans["powershell"], (where, pin)
            assert "$SystemCuda = $false" in plans["powershell"], where
        # the lock and check of it on the machine it describes
        lock = parse_lock(plans["lock"], "lock")
        assert lock.framework_name == framework.value and lock.variant == fw.variant, where
        result = check_lock(lock, kb, described_machine(kb, stack, os_name, gpu, framework.value), frozenset(FACTS))
        assert result.matches, (where, result.differences)
    assert checked > 150
