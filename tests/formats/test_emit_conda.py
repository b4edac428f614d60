"""`--format conda`: environment.yml.

Expected specs come from the sources constraints/conda.toml cites, not from running the emitter:
- TensorFlow 2.10 (CUDA 11.2, cuDNN 8.1): `conda install -c conda-forge cudatoolkit=11.2 cudnn=8.1.0`, TensorFlow's
  install page, tensorflow/docs site/en/install/pip.md@be62ee25 (Linux and Windows native sections).
- TensorFlow 1.15 (CUDA 10.0, cuDNN 7.4; the newest 7.x is 7.6.5): conda-forge builds cudatoolkit 10.0.130
  (conda-forge/cudatoolkit-feedstock@0f01f6ed) and cudnn 7.6.5 for CUDA 10.0 (conda-forge/cudnn-feedstock@a7f01825).
- conda-forge has no cudnn 8.5-8.7 (its version list jumps from 8.4.1.50 to 8.8.0.121), and its CUDA 11 builds
  of 8.8.0 require 'cudatoolkit 11.*' (conda-forge/cudnn-feedstock@3be0281d).
- conda-forge has no cudatoolkit 9.0; defaults has 9.0 and cudnn 7.6.5 build cuda9.0
  (AnacondaRecipes/cudnn-feedstock@9fd3e268).
"""

from __future__ import annotations

import pytest
import yaml

from locations import read_constraints
from plan_reading import requirement_lines
from stackresolve.formats import conda_decide as conda_plan
from stackresolve.knowledge.channels import parse_conda
from stackresolve.request.build import InputError
from stackresolve.resolve import resolve
from stackresolve.request.parse import Flags, request_from_flags


def render_conda(resolution, kb, **options):
    """The conda plan as `stackresolve plan --format conda` prints it."""
    from stackresolve.formats.render import render_plan
    from stackresolve.formats import PlanOptions

    return render_plan("conda", resolution, kb, PlanOptions(**options))





def resolution_for(kb, tf: str, os_name: str, cpu: bool = False):
    flags = Flags(tf=tf, os=os_name, gpu=None if cpu else "GTX 1080 Ti", cpu=cpu)
    return resolve(kb, request_from_flags(kb, flags, None))


def environment(text: str) -> dict:
    doc = yaml.safe_load(text)
    assert isinstance(doc, dict)
    assert list(doc) == ["name", "channels", "dependencies"]
    return doc


def conda_specs(doc: dict) -> list[str]:
    return [d for d in doc["dependencies"] if isinstance(d, str)]


def pip_section(doc: dict) -> list[str]:
    sections = [d["pip"] for d in doc["dependencies"] if isinstance(d, dict)]
    assert len(sections) == 1
    return sections[0]


def test_tf210_linux_uses_tensorflows_own_conda_pair(kb):
    resolution = resolution_for(kb, "2.10", "linux")
    text = render_conda(resolution, kb)
    assert text.startswith("# stackresolve conda plan\n")
    doc = environment(text)
    assert doc["name"] == f"tf-{resolution.stack.tf_version}"
    assert doc["channels"] == ["conda-forge"]
    specs = conda_specs(doc)
    assert f"python={resolution.stack.python.recommended}" == specs[0]
    assert "cudatoolkit=11.2" in specs and "cudnn=8.1.0" in specs
    assert "pip" in specs
    assert pip_section(doc) == requirement_lines(resolution)
    assert "LD_LIBRARY_PATH" in text  # TensorFlow's page: conda's CUDA libraries are found through it on Linux


def test_tf210_windows_native_gets_the_same_pair(kb):
    doc = environment(render_conda(resolution_for(kb, "2.10", "windows"), kb))
    assert {"cudatoolkit=11.2", "cudnn=8.1.0"} <= set(conda_specs(doc))


def test_tf115_linux_cudatoolkit_and_cudnn_from_conda_forge(kb):
    resolution = resolution_for(kb, "1.15", "linux")
    assert resolution.stack.cudnn.version == "7.6.5"
    doc = environment(render_conda(resolution, kb))
    assert doc["channels"] == ["conda-forge"]
    assert {"cudatoolkit=10.0", "cudnn=7.6.5"} <= set(conda_specs(doc))
    assert pip_section(doc)[0] == "tensorflow-gpu==1.15.5"


def test_and_cuda_stack_has_no_conda_cuda_packages(kb):
    resolution = resolution_for(kb, "2.15", "linux")
    assert resolution.stack.framework.extras == ("and-cuda",)
    doc = environment(render_conda(resolution, kb))
    assert not [s for s in conda_specs(doc) if s.startswith(("cudatoolkit", "cudnn", "cuda-"))]
    assert pip_section(doc)[0].startswith("tensorflow[and-cuda]==2.15.")


def test_cpu_stack(kb):
    doc = environment(render_conda(resolution_for(kb, "2.15", "linux", cpu=True), kb))
    assert [s for s in conda_specs(doc) if not s.startswith("python=")] == ["pip"]


def test_catalogue_picks_what_the_channel_really_has():
    conda = parse_conda(read_constraints("conda.toml"))
    # cuDNN 8.6 (TensorFlow 2.12's build) is not on conda-forge: the nearest newer 8.x there is 8.8.0.
    choice = conda_plan._catalogue_choice(conda, "11.8", "8.6.0", "8.6")
    assert (choice.channel, choice.specs) == ("conda-forge", ("cudatoolkit=11.8", "cudnn=8.8.0"))
    assert any(n.startswith("substitute:") for n in choice.notes)
    # CUDA 12 on conda-forge: cuda-version + cuda-runtime, and a cudnn build for 12.x.
    choice = conda_plan._catalogue_choice(conda, "12.3", "8.9.7", "8.9")
    assert choice.specs == ("cuda-version=12.3", "cuda-runtime=12.3", "cudnn=8.9.7")
    # CUDA 9.0 only on defaults, with a build-string spec.
    choice = conda_plan._catalogue_choice(conda, "9.0", "7.6.5", "7.0")
    assert (choice.channel, choice.specs) == ("defaults", ("cudatoolkit=9.0", "cudnn=7.6.5=cuda9.0*"))
    # A CUDA line no channel carries gives a reason, not packages.
    assert isinstance(conda_plan._catalogue_choice(conda, "8.0", "7.1.4", "7.0"), str)


def test_env_name(kb):
    resolution = resolution_for(kb, "1.15", "linux")
    assert environment(render_conda(resolution, kb, env_name="tf1_legacy-2.x"))["name"] == "tf1_legacy-2.x"
    for bad in ("bad name", "x;rm -rf ~", "a/b", "", "..", "name\nchannels: [evil]"):
        with pytest.raises(InputError):
            render_conda(resolution, kb, env_name=bad)


def test_header_is_yaml_comments_only(kb):
    text = render_conda(resolution_for(kb, "2.10", "linux"), kb)
    head = text.split("name:", 1)[0]
    assert head and all(line.startswith("#") for line in head.splitlines())


def test_parser_rejects_hostile_specs_and_channels():
    doc = read_constraints("conda.toml")
    doc["cudnn_package"][0] = {**doc["cudnn_package"][0], "spec": "cudnn=8.1.0\n- evil"}
    with pytest.raises(ValueError, match="spec"):
        parse_conda(doc)
    doc = read_constraints("conda.toml")
    doc["cuda_package"][0] = {**doc["cuda_package"][0], "channel": "https://evil.example/ch"}
    with pytest.raises(ValueError, match="channel"):
        parse_conda(doc)
