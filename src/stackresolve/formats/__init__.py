"""Install choices, decided once per format from a Resolution: which pip lines, conda packages and channel, apt
packages per Ubuntu release, Docker base image, Windows installers and zips. The renderers (formats/*_render.py)
only render these typed plans; none decides a version.

    stackresolve.formats.registry.decide(fmt, resolution, kb, options) -> the typed plan for that --format

This module holds what the deciders share (options, the refusal, the import check, the environment's name); it
imports no decider, so each of them, and the registry that names them all, can import it.
"""

from __future__ import annotations

from typing import TYPE_CHECKING

from stackresolve.model.record import record

if TYPE_CHECKING:
    from stackresolve.model.stack import Resolution


@record
class Refusal:
    """A format that cannot serve this stack, and what to use instead."""

    resolution: Resolution
    why: str
    instead: str = ""


def validate_env_name(name: str) -> str:
    """--env-name: letters, digits, '-', '_' and '.' only (it becomes a directory name under conda's envs), the
    first a letter, digit or '_' (`conda activate -n` would read a leading '-' as an option)."""
    # lazy: start-up (only this path needs request.build)
    import re

    from stackresolve.request.build import InputError

    if not re.fullmatch(r"[A-Za-z0-9_][A-Za-z0-9_.-]*", name):
        raise InputError(f"--env-name {name!r}: use letters, digits, '-', '_' and '.' only, starting with a letter, "
                         f"digit or '_'")
    return name


@record
class PlanOptions:
    env_name: str | None = None  # conda: the environment's name
    with_driver: bool | None = None  # apt: also install the driver branch (None: as the request says)
    command: str = ""  # text: the user's `stackresolve plan` command, less --format and -o, for the closing line
    script_file: str | None = None  # powershell: the name of the file -o writes the script to (None: standard output)


def import_check_code(stack) -> str:
    """One line of Python that exits 0 only when the framework imports (and, for GPU stacks, sees the GPU): the
    check every install plan ends with."""
    # lazy: start-up (packaging.version, only this path)
    from packaging.version import Version

    from stackresolve.model.enums import Framework, GpuSupport

    framework = stack.framework.framework
    metal = stack.gpu.support is GpuSupport.METAL
    if framework is Framework.PYTORCH:
        if metal:
            return ("import torch; ok = torch.backends.mps.is_available(); print(torch.__version__, ok); "
                    "raise SystemExit(0 if ok else 1)")
        if stack.cuda is None:
            return "import torch; print(torch.__version__)"
        return ("import torch; ok = torch.cuda.is_available(); print(torch.__version__, torch.version.cuda, ok); "
                "raise SystemExit(0 if ok else 1)")
    if framework is Framework.JAX:
        if stack.cuda is None:
            return "import jax; print(jax.__version__, jax.devices())"
        # jax.devices('gpu') raises when no GPU backend starts, so the exit code says it.
        return "import jax; print(jax.__version__, jax.devices('gpu'))"
    version = Version(stack.framework.upstream_version)
    if stack.cuda is None and not metal:
        return "import tensorflow as tf; print(tf.__version__)"
    if version.major == 1:
        return "import tensorflow as tf; ok = tf.test.is_gpu_available(); print(ok); raise SystemExit(0 if ok else 1)"
    listing = "tf.config.experimental.list_physical_devices" if version < Version("2.1") else \
        "tf.config.list_physical_devices"
    return f"import tensorflow as tf; gpus = {listing}('GPU'); print(gpus); raise SystemExit(0 if gpus else 1)"


def environment_name(stack) -> str:
    """The name plans give the environment, image or venv: "tf-2.15.1", "torch-2.5.1-cu124", "jax-0.4.35"."""
    # lazy: start-up (only this path needs model.enums)
    from stackresolve.model.enums import Framework

    fw = stack.framework
    if fw.framework is Framework.PYTORCH:
        return f"torch-{fw.version}" + (f"-{fw.variant}" if fw.variant else "")
    if fw.framework is Framework.JAX:
        return f"jax-{fw.version}" + (f"-{fw.extras[0]}" if fw.extras else "")
    return f"tf-{fw.upstream_version}" + ("-nvidia" if fw.index else "")
