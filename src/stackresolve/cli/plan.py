"""`stackresolve plan`."""

from typing import List, Optional

import click
import typer

from stackresolve.cli.app import (
    Exit,
    Choice,
    command_app,
    command_line,
    detect_machine,
    emit_resolution,
    fail,
    knowledge,
    os_choice,
    output,
    plan_formats,
)


plan_app = command_app()


@plan_app.command()
def plan(
    tf: str = typer.Option("latest", "--tf", help="TensorFlow version: 1.15, 2, 2.3.4, '>=2.4,<2.8' or latest."),
    torch: Optional[str] = typer.Option(None, "--torch", help="Plan PyTorch instead: 2.5, 2.5.1, '>=2.4' or latest."),
    jax: Optional[str] = typer.Option(None, "--jax", help="Plan JAX instead: 0.4, 0.4.35 or latest."),
    os: Optional[str] = typer.Option(None, "--os", click_type=os_choice(), help="The OS (default: detected)."),
    gpu: Optional[str] = typer.Option(None, "--gpu", help="GPU model, e.g. 'GTX 1080 Ti', 'A100', 'RTX 4090', "
                                                          "'Apple M2'."),
    gpu_cc: Optional[str] = typer.Option(None, "--gpu-cc", help="GPU compute capability, e.g. 8.6."),
    gpu_gfx: Optional[str] = typer.Option(None, "--gpu-gfx", help="AMD GPU by its gfx target, e.g. gfx1100 "
                                                                  "(default: STACKRESOLVE_GPU_GFX)."),
    driver: Optional[str] = typer.Option(None, "--driver", help="Installed NVIDIA driver version, e.g. 535.104.05 "
                                                                "(or a branch: 580)."),
    python: Optional[str] = typer.Option(None, "--python", help="Python version to use, e.g. 3.7."),
    cudnn: Optional[str] = typer.Option(None, "--cudnn", help="cuDNN to install instead of TensorFlow's own, e.g. 8.6."),
    arch: Optional[str] = typer.Option(None, "--arch", help="CPU architecture: x86_64 (default), aarch64, arm64."),
    cpu: bool = typer.Option(False, "--cpu", help="Plan a CPU-only stack."),
    vendor: str = typer.Option("any", "--vendor", help="TF 1.15 builds: any (default), stock or nvidia."),
    with_driver: bool = typer.Option(False, "--with-driver", help="apt plan: also install the driver branch."),
    env_name: Optional[str] = typer.Option(None, "--env-name", help="conda plan: the environment's name."),
    fmt: str = typer.Option("text", "--format", "-f",
                            click_type=Choice(lambda: (*plan_formats(), "pylock"), "--format"),
                            help="Output: text, json, pip, conda, apt, powershell, dockerfile, lock or pylock."),
    full_lock: bool = typer.Option(False, "--lock",
                                   help="pip: pin the whole transitive set with hashes (needs uv: stackresolve[lock])."),
    index_url: Optional[str] = typer.Option(None, "--index-url",
                                            help="--lock / pylock: the package index (default: uv's UV_DEFAULT_INDEX, "
                                                 "else pip's)."),
    upgrade: bool = typer.Option(False, "--upgrade", help="--lock / pylock with -o FILE: resolve afresh instead of "
                                                          "keeping FILE's pins where they still fit."),
    out: Optional[str] = typer.Option(None, "-o", "--output", help="Write to this file instead of stdout."),
    no_detect: bool = typer.Option(False, "--no-detect", help="Do not probe this machine; use flags only."),
    fleet: Optional[List[str]] = typer.Option(None, "--fleet", help="Plan for many machines: a `kubectl get nodes "
                                              "-o json` file (or -), a folder of `detect --format json` reports, "
                                              "or an inventory file; repeatable. -o then names a folder."),
    allow_cpu: bool = typer.Option(False, "--allow-cpu", help="--fleet: plan the CPU build for GPU-less machines."),
    fleet_stacks: str = typer.Option("fewest", "--fleet-stacks", click_type=Choice(("fewest", "newest"),
                                                                                   "--fleet-stacks"),
                                     help="--fleet: the fewest stacks that cover the machines (default), or each "
                                          "group its newest stack."),
) -> None:
    """Resolve a consistent stack for a TensorFlow, PyTorch or JAX target and print the plan (exit 1 when none
    exists)."""
    # lazy: start-up (a command imports only what it runs: request.parse, plan, ...)
    from stackresolve.request.parse import Flags, request_from_flags
    from stackresolve.formats import PlanOptions, validate_env_name
    from stackresolve.request.build import InputError
    from stackresolve.resolve import resolve

    if full_lock and fmt != "pip":
        fail("--lock goes with --format pip (or use --format pylock for a PEP 751 pylock.toml)")
    if fleet_stacks != "fewest" and not fleet:
        fail("--fleet-stacks chooses among the stacks of a fleet: it goes with --fleet")
    if fleet:  # many machines: the fleet's own command, never the one-machine plan below
        # lazy: start-up (a command imports only what it runs: cli.fleet)
        from stackresolve.cli.fleet import plan_fleet_command

        code = plan_fleet_command(fleet, Flags(tf=tf, torch=torch, jax=jax, python=python, cudnn=cudnn,
                                               vendor=vendor, with_driver=with_driver),
                                  "pylock" if full_lock else fmt, out, allow_cpu, env_name, fleet_stacks,
                                  {"--os": os, "--gpu": gpu, "--gpu-cc": gpu_cc, "--driver": driver, "--arch": arch,
                                   "--cpu": cpu, "--gpu-gfx": gpu_gfx})
        raise typer.Exit(code)
    kb = knowledge()
    flags = Flags(tf=tf, torch=torch, jax=jax, os=os, arch=arch, gpu=gpu, gpu_cc=gpu_cc, driver=driver, python=python, cudnn=cudnn,
                  cpu=cpu, vendor=vendor, with_driver=with_driver, gpu_gfx=gpu_gfx,
                  gpu_gfx_env=environ_gfx())
    try:
        if env_name is not None:
            validate_env_name(env_name)
        request = request_from_flags(kb, flags, detect_machine(no_detect, gpu_only=True))
    except InputError as exc:
        fail(str(exc))
    resolution = resolve(kb, request)
    if full_lock or fmt == "pylock":
        code = emit_full_lock(resolution, kb, "pylock.toml" if fmt == "pylock" else "requirements.txt", index_url,
                              out, upgrade)
        raise typer.Exit(code)
    command = command_line(click.get_current_context(), leave_out=("fmt", "out"))
    # the PowerShell script's usage line runs the file -o writes it to
    script_file = out.replace("\\", "/").rsplit("/", 1)[-1] if fmt == "powershell" and out not in (None, "-") else None
    emit_resolution(resolution, kb, fmt, out, PlanOptions(env_name=env_name, command=command,
                                                          script_file=script_file))


def environ_gfx() -> Optional[str]:
    """STACKRESOLVE_GPU_GFX: an AMD gfx target for plans that name no GPU (flags.parse_accelerator_flags)."""
    # lazy: no start-up gain (already loaded by then); kept beside its use
    import os as os_module

    return (os_module.environ.get("STACKRESOLVE_GPU_GFX") or "").strip() or None


def previous_full_lock(out: Optional[str]) -> Optional[str]:
    """The text of the full lock -o is about to replace (one this command wrote: its header says so), else None."""
    if not out or out == "-":
        return None
    # lazy: start-up (a command imports only what it runs: files.read)
    from stackresolve.files.read import read_text

    try:
        text = read_text(out, 16 * 1024 * 1024).text
    except (OSError, ValueError):
        return None
    return text if "\n# resolved by uv for Python " in f"\n{text}" else None


def emit_full_lock(resolution, kb, fmt: str, index_url: Optional[str], out: Optional[str],
                   upgrade: bool = False) -> int:
    """The whole transitive set pinned with hashes, resolved by uv for the plan's Python and platform. When -o names
    a full lock written before, uv gets it as its output file and keeps its pins where they still fit (a re-lock),
    unless --upgrade; what of the user's uv settings the lock set aside is said on stderr. Gives the exit code."""
    # lazy: start-up (a command imports only what it runs: formats.header, lock.full, ...)
    import sys

    from stackresolve.formats.header import comment_header
    from stackresolve.lock.full import LockFailed, LockUnavailable, compile_lock
    from stackresolve.formats import pip_decide as pip_plan

    if resolution.stack is None:
        # lazy: start-up (a command imports only what it runs: formats.render)
        from stackresolve.formats.render import render_plan

        sys.stderr.write(render_plan("text", resolution, kb))
        return Exit.FAILED
    plan = pip_plan.decide(resolution)
    # lazy: start-up (a command imports only what it runs: lock.full, index.simple)
    from stackresolve.cli.app import progress_reporter
    from stackresolve.lock.full import uv_platform
    from stackresolve.index.simple import index_url as pip_index

    try:
        platform = uv_platform(resolution.request.os, resolution.request.arch)
        progress_reporter()(f"resolving the full lock with uv for Python {plan.python} on {platform} against "
                            f"{pip_index(index_url)}")
        lock = compile_lock(plan, fmt, index=index_url, previous=previous_full_lock(out), upgrade=upgrade)
    except LockUnavailable as exc:
        fail(str(exc))
    except LockFailed as exc:
        fail(str(exc), Exit.FAILED)
    # lazy: start-up (a command imports only what it runs: lock.full)
    from stackresolve.lock.full import UV_OVERRIDDEN

    for name in lock.overridden:
        sys.stderr.write(f"stackresolve: note: {name} set aside for the lock: {UV_OVERRIDDEN[name]} (your other uv "
                         f"settings apply)\n")
    if lock.kept_pins:
        sys.stderr.write(f"stackresolve: note: {out}'s pins were kept where they still fit; pass --upgrade to resolve "
                         f"afresh\n")
    header = comment_header(resolution, "full lock")
    header += f"# resolved by uv for Python {lock.python} on {lock.platform}, with hashes; install with\n"
    header += ("#   python -m pip install --require-hashes -r requirements.txt\n" if fmt == "requirements.txt" else
               "#   a PEP 751 installer (pip install -r is not one): e.g. uv pip sync pylock.toml\n")
    if lock.cuda_wheels:
        header += "# NVIDIA wheels this lock pins: " + ", ".join(f"{k}=={v}" for k, v in
                                                                 sorted(lock.cuda_wheels.items())) + "\n"
    output(header + lock.text, out)
    return Exit.OK

