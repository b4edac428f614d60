"""`stackresolve plan`."""

from typing import Optional

import typer

from stackresolve.cli.app import command_app, choice, detect_machine, emit_resolution, fail, knowledge, plan_formats


plan_app = command_app()


@plan_app.command()
def plan(
    tf: str = typer.Option("latest", "--tf", help="TensorFlow version: 1.15, 2, 2.3.4, '>=2.4,<2.8' or latest."),
    os: Optional[str] = typer.Option(None, "--os", help="linux, windows, macos or wsl2 (default: detected)."),
    gpu: Optional[str] = typer.Option(None, "--gpu", help="GPU model, e.g. 'GTX 1080 Ti', 'A100', 'RTX 4090'."),
    gpu_cc: Optional[str] = typer.Option(None, "--gpu-cc", help="GPU compute capability, e.g. 8.6."),
    driver: Optional[str] = typer.Option(None, "--driver", help="Installed NVIDIA driver version, e.g. 535.104.05."),
    python: Optional[str] = typer.Option(None, "--python", help="Python version to use, e.g. 3.7."),
    cudnn: Optional[str] = typer.Option(None, "--cudnn", help="cuDNN to install instead of TensorFlow's own, e.g. 8.6."),
    arch: Optional[str] = typer.Option(None, "--arch", help="CPU architecture: x86_64 (default), aarch64, arm64."),
    cpu: bool = typer.Option(False, "--cpu", help="Plan a CPU-only stack."),
    vendor: str = typer.Option("any", "--vendor", help="TF 1.15 builds: any (default), stock or nvidia."),
    with_driver: bool = typer.Option(False, "--with-driver", help="apt plan: also install the driver branch."),
    env_name: Optional[str] = typer.Option(None, "--env-name", help="conda plan: the environment's name."),
    fmt: str = typer.Option("text", "--format", "-f",
                            help="Output: text, json, pip, conda, apt, powershell, dockerfile or lock."),
    out: Optional[str] = typer.Option(None, "-o", "--output", help="Write to this file instead of stdout."),
    no_detect: bool = typer.Option(False, "--no-detect", help="Do not probe this machine; use flags only."),
) -> None:
    """Resolve a consistent stack for a TensorFlow target and print the plan (exit 1 when none exists)."""
    from stackresolve.plan import PlanOptions, validate_env_name
    from stackresolve.request import Flags, InputError, build_request
    from stackresolve.resolve import resolve

    fmt = choice(fmt, plan_formats(), "--format")
    kb = knowledge()
    flags = Flags(tf=tf, os=os, arch=arch, gpu=gpu, gpu_cc=gpu_cc, driver=driver, python=python, cudnn=cudnn,
                  cpu=cpu, vendor=vendor, with_driver=with_driver)
    try:
        if env_name is not None:
            validate_env_name(env_name)
        request = build_request(kb, flags, detect_machine(no_detect, gpu_only=True))
    except InputError as exc:
        fail(str(exc))
    resolution = resolve(kb, request)
    emit_resolution(resolution, kb, fmt, out, PlanOptions(env_name=env_name))
