"""Plans for NVIDIA's TensorFlow 1.15 builds: pip (nvidia-pyindex, then nvidia-tensorflow), the NGC container
as a Dockerfile, and for the other formats a short script or comment that points to those two."""

from __future__ import annotations

from stackresolve.emit.header import comment_header
from stackresolve.resolve import Resolution


def _pip(resolution: Resolution) -> str:
    stack = resolution.stack
    fw = stack.framework.value
    out = [comment_header(resolution, "pip")]
    if not fw.get("pip_package"):
        return "".join(out) + (f"# This stack is NVIDIA's NGC container {fw['container']}: it has no pip plan.\n"
                               "# Use --format dockerfile, or run it directly:\n"
                               f"#   docker run --gpus all -it --rm {fw['container']}\n")
    py = stack.python.value["recommended"]
    out.append("# nvidia-tensorflow is not on the default package index: NVIDIA hosts it. Install nvidia-pyindex\n"
               "# first (it adds NVIDIA's index to pip's configuration), then this file:\n"
               f"#   python{py} -m venv .venv && .venv/bin/python -m pip install nvidia-pyindex\n"
               "#   .venv/bin/python -m pip install -r requirements.txt\n")
    if fw.get("cuda_wheels"):
        out.append(f"# CUDA {stack.cuda.value['version']} and cuDNN come as pip wheels it depends on; only the NVIDIA "
                   f"driver (>= {stack.driver.value['min']}) comes from the system.\n")
    else:
        out.append(f"# CUDA {stack.cuda.value['release']} and cuDNN {stack.cudnn.value['version']} come from the "
                   f"system; the driver must be >= {stack.driver.value['min']}.\n")
    out.append(f"{fw['pip_package']}=={fw['version']}\n")
    for pin in stack.pip_pins:
        out.append(f"# {pin.why} ({pin.source})\n{pin.requirement}\n")
    return "".join(out)


def _container_tag(resolution: Resolution) -> str | None:
    fw = resolution.stack.framework.value
    if fw.get("container"):
        return fw["container"]
    for alt in resolution.alternatives:
        container = alt.stack.framework.value.get("container")
        if container:
            return container
    return None


def _dockerfile(resolution: Resolution) -> str:
    tag = _container_tag(resolution)
    header = comment_header(resolution, "dockerfile")
    if tag is None:
        return header + "# No NGC TensorFlow 1 container fits this request; use --format pip.\n"
    return (header + "# NVIDIA's NGC TensorFlow 1 container: TensorFlow 1.15 with the CUDA and cuDNN of its release.\n"
            f"# Run: docker build -t tf1 . && docker run --gpus all -it --rm tf1\n"
            f"FROM {tag}\n"
            "WORKDIR /workspace\n"
            "CMD [\"python\", \"-c\", \"import tensorflow as tf; print(tf.__version__, "
            "tf.test.is_gpu_available())\"]\n")


def render(fmt: str, resolution: Resolution, kb=None) -> str:
    if fmt == "pip":
        return _pip(resolution)
    if fmt == "dockerfile":
        return _dockerfile(resolution)
    stack = resolution.stack
    if fmt == "apt":
        return ("#!/usr/bin/env bash\n" + comment_header(resolution, "apt") +
                "# NVIDIA's TensorFlow 1.15 builds install with pip (or run as a container): no apt packages beyond\n"
                f"# the NVIDIA driver (>= {stack.driver.value['min']}) are needed. Use --format pip or dockerfile.\n"
                "echo 'use: stackresolve plan ... --format pip (or dockerfile)' >&2\nexit 1\n")
    if fmt == "powershell":
        return (comment_header(resolution, "powershell") +
                "# NVIDIA's TensorFlow 1.15 builds are Linux only: on Windows run them in WSL2 (wsl --install), then\n"
                "# follow `stackresolve plan --os wsl2 --format pip` inside it.\n"
                "Write-Host 'NVIDIA TensorFlow 1.15 builds run in WSL2: stackresolve plan --os wsl2 --format pip'\n"
                "exit 1\n")
    # conda: the pip section carries NVIDIA's package; the index comes from nvidia-pyindex.
    import yaml

    py = stack.python.value["recommended"] or "3.8"
    # nvidia-pyindex must be installed before pip can find nvidia-tensorflow, so the environment only gets it;
    # the framework follows in a second pip step.
    document = {"name": f"tf-{stack.framework.value['version'].split('+')[0]}-nvidia", "channels": ["conda-forge"],
                "dependencies": [f"python={py}", "pip", {"pip": ["nvidia-pyindex"]}]}
    return comment_header(resolution, "conda") + (
        "# Then, inside the environment: stackresolve plan ... --format pip -o requirements.txt &&\n"
        "#   python -m pip install -r requirements.txt\n") + yaml.safe_dump(document, sort_keys=False)
