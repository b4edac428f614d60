"""`stackresolve matrix`, `gpus` and `show`: the knowledge base, readable, with sources."""

from typing import Optional

import typer

from stackresolve.cli.app import Choice, command_app, fail, knowledge, os_choice, output


matrix_app = command_app()
gpus_app = command_app()
show_app = command_app()


@matrix_app.command()
def matrix(
    gpu: Optional[str] = typer.Option(None, "--gpu", help="GPU model."),
    gpu_cc: Optional[str] = typer.Option(None, "--gpu-cc", help="GPU compute capability."),
    gpu_gfx: Optional[str] = typer.Option(None, "--gpu-gfx", help="AMD GPU by its gfx target, e.g. gfx1100."),
    os: Optional[str] = typer.Option(None, "--os", click_type=os_choice(),
                                     help="The OS (default: linux and windows)."),
    driver: Optional[str] = typer.Option(None, "--driver", help="Installed NVIDIA driver version."),
    torch: bool = typer.Option(False, "--torch", help="PyTorch's release lines instead of TensorFlow's."),
    jax: bool = typer.Option(False, "--jax", help="JAX's release lines instead of TensorFlow's."),
    fmt: str = typer.Option("text", "--format", "-f", click_type=Choice(("text", "json"), "--format"),
                            help="text or json."),
) -> None:
    """For every release line of a framework (TensorFlow; --torch, --jax): whether and how it runs on this GPU
    and OS."""
    # lazy: start-up (a command imports only what it runs: request.parse, browse.matrix, ...)
    from stackresolve.request.parse import Flags, parse_flags
    from stackresolve.browse.matrix import build_matrix, render_json, render_text
    from stackresolve.request.build import InputError, build_request

    kb = knowledge()
    try:  # without --os: linux's table first, and the request is linux's
        given = parse_flags(kb, Flags(gpu=gpu, gpu_cc=gpu_cc, gpu_gfx=gpu_gfx, driver=driver, os=os or "linux",
                                      torch="latest" if torch else None, jax="latest" if jax else None))
    except InputError as exc:
        fail(str(exc))
    systems = [given.os.value] if os else ["linux", "windows"]
    request = build_request(kb, given, None)
    rows = build_matrix(kb, request, systems)
    output(render_json(rows, request) if fmt == "json" else render_text(rows, request), None)


@gpus_app.command()
def gpus(
    search: Optional[str] = typer.Argument(None, help="Only models whose name or alias contains this text."),
    fmt: str = typer.Option("text", "--format", "-f", click_type=Choice(("text", "json"), "--format"),
                            help="text or json."),
) -> None:
    """List the GPU models the knowledge base knows, with compute capability."""
    # lazy: start-up (a command imports only what it runs: browse.show)
    from stackresolve.browse.show import gpus_json, gpus_text

    kb = knowledge()
    output(gpus_json(kb, search) if fmt == "json" else gpus_text(kb, search), None)


@show_app.command()
def show(
    component: str = typer.Argument(..., click_type=Choice(("tf", "torch", "jax", "cuda", "cudnn", "driver", "gpu"),
                                                            "component"),
                                    help="What to show: tf, torch, jax, cuda, cudnn, driver or gpu."),
    version: str = typer.Argument(..., help="Release line or version (1.15, 13.5, 9.28.1), driver or branch "
                                            "(580), GPU model or compute capability (\"RTX 5090\", 12.0)."),
    fmt: str = typer.Option("text", "--format", "-f", click_type=Choice(("text", "json"), "--format"),
                            help="text or json."),
) -> None:
    """Show what the knowledge base says about a release, driver or GPU, with sources."""
    # lazy: start-up (a command imports only what it runs: browse.show, request.build)
    import json

    from stackresolve.browse import show as browse
    from stackresolve.request.build import InputError

    kb = knowledge()
    try:
        if component == "tf":
            output(browse.show_tf_json(kb, version) if fmt == "json" else browse.show_tf_text(kb, version), None)
        elif fmt == "json":
            data = getattr(browse, f"show_{component}_data")(kb, version)
            output(json.dumps({"schema": f"stackresolve/show-{component}@1", **data}, indent=2) + "\n", None)
        else:
            output(getattr(browse, f"show_{component}_text")(kb, version), None)
    except InputError as exc:
        fail(str(exc))
