"""The format registry: one table of every --format a plan is printed in, each with its decision (the typed plan),
its renderer (the text), and `can_express`, its cheap rule for which stacks it can express at all. The functions
are named here, imported statically; the CLI's --format choices, the JSON document's `plans` and
`refused_formats`, the text plan's "Install plans:" line, explain's and doctor's fix plans and `plan --fleet -o DIR`
all read this table.

`can_express` is the first thing `decide` checks, so a format it turns down is refused, always with the rule's
reason. It reads the resolution only (the request, the stack, and for PowerShell the WSL2 alternative), never the
install facts. What it lets through can still be refused by the decision for a gap in the install facts (no apt
repository or base image recorded for an old CUDA line, no driver package for --with-driver, no Visual C++ runtime
record); the text summary decides each install format (`usable_install_formats`) to name only those that print a
plan.

The table names each format's functions statically; each is imported where it is first called (`# lazy: start-up`):
`plan --help` and completing `--format` read the table, and a plan in one format imports no other format's
renderer (nor PyYAML, packaging's requirements or the lock document with it)."""

from __future__ import annotations

from typing import TYPE_CHECKING, Any, Callable, Optional

from stackresolve.formats import PlanOptions, Refusal
from stackresolve.model.enums import Delivery, Os

if TYPE_CHECKING:
    from stackresolve.model.stack import Resolution

NO_STACK = "no consistent stack for this request"


class Format:
    """One --format. A plain immutable class with __slots__ (as model/values.py's, and for the same reason: every
    command that lists or prints a format defines it, and a NamedTuple costs ~20 times more to define)."""

    __slots__ = ("name", "decide", "render", "can_express", "install_rank", "fix_plan", "file_name", "executable")

    def __init__(self, name: str, decide: Callable[..., Any], render: Callable[[Any], str],
                 can_express: Callable[["Resolution"], Optional[Refusal]], *, install_rank: Optional[int] = None,
                 fix_plan: bool = False, file_name: str = "", executable: bool = False) -> None:
        set_field = object.__setattr__
        set_field(self, "name", name)  # its --format name
        set_field(self, "decide", decide)  # (resolution, kb, options) -> its typed plan, or a Refusal
        set_field(self, "render", render)  # (typed plan) -> exactly what --format prints
        set_field(self, "can_express", can_express)  # (resolution) -> why it cannot express it at all, or None
        set_field(self, "install_rank", install_rank)  # its place in the text plan's closing line (None: not there)
        set_field(self, "fix_plan", fix_plan)  # explain and doctor print their fix plan in it
        set_field(self, "file_name", file_name)  # the file `plan --fleet -o DIR` writes it to, after "stack-N."
        set_field(self, "executable", executable)  # written with -o, the file is made executable

    def __setattr__(self, name, value):
        raise AttributeError("Format is immutable")

    def __repr__(self) -> str:
        return f"Format({self.name!r})"


def _refused(resolution: "Resolution", why: str, instead: str = "") -> Refusal:
    return Refusal(resolution, why, instead)


def _any_stack(resolution: "Resolution"):
    """pip and lock: every resolved stack."""
    return _refused(resolution, NO_STACK) if resolution.stack is None else None


def _always(resolution: "Resolution"):
    """text: it also explains an impossible target (the conflicting facts and the nearest stacks)."""
    return None


def _accelerated(resolution: "Resolution", name: str) -> Optional[Refusal]:
    """A stack for AMD or Intel GPUs in a format that cannot express it (the reason: resolve/rocm.py)."""
    if not resolution.request.accelerators or resolution.stack is None:
        return None
    # lazy: start-up (only an AMD or Intel stack asks resolve.rocm)
    from stackresolve.resolve.rocm import format_refusal

    why = format_refusal(resolution.stack, name)
    instead = "Use --format pip, lock or dockerfile." if resolution.stack.gpu.vendor == "amd" else \
        "Use --format pip or lock."
    return _refused(resolution, why, instead) if why else None


def _conda(resolution: "Resolution"):
    if (refused := _accelerated(resolution, "conda")) is not None:
        return refused
    stack = resolution.stack
    if stack is None:
        return _refused(resolution, NO_STACK)
    if stack.delivery is Delivery.CONTAINER:
        return _refused(resolution, f"this stack is NVIDIA's container {stack.framework.container}",
                        "use --format dockerfile")
    return None


def _apt(resolution: "Resolution"):
    stack, os_name = resolution.stack, resolution.request.os
    if (refused := _accelerated(resolution, "apt")) is not None:
        return refused
    if stack is None:
        return _refused(resolution, NO_STACK)
    if os_name not in (Os.LINUX, Os.WSL2):
        instead = "Use --format powershell." if os_name is Os.WINDOWS else "Use --format pip or conda."
        return _refused(resolution, f"This stack targets {os_name}; the apt plan is for Ubuntu (Linux or WSL2).",
                        instead)
    if stack.delivery is Delivery.CONTAINER or stack.framework.index is not None:
        return _refused(resolution, "NVIDIA's TensorFlow 1.15 builds install with pip (or run as a container): no "
                                    "apt packages beyond the NVIDIA driver "
                                    f"(>= {stack.driver.minimum}) are needed.", "Use --format pip or dockerfile.")
    return None


def _dockerfile(resolution: "Resolution"):
    stack, request = resolution.stack, resolution.request
    if (refused := _accelerated(resolution, "dockerfile")) is not None:
        return refused
    if stack is None:
        return _refused(resolution, NO_STACK)
    if request.os in (Os.WINDOWS, Os.MACOS):
        return _refused(resolution, f"No Dockerfile: containers run Linux, and this stack was resolved for "
                                    f"{request.os}.", "Re-run with --os linux (or --os wsl2 on Windows).")
    if stack.cuda and request.arch.is_arm and stack.delivery is Delivery.SYSTEM:
        return _refused(resolution, f"No Dockerfile: the recorded CUDA base images are x86_64 only (asked: "
                                    f"{request.arch}).")
    return None


def _powershell(resolution: "Resolution"):
    request, stack = resolution.request, resolution.stack
    if (refused := _accelerated(resolution, "powershell")) is not None:
        return refused
    from stackresolve.formats.powershell_decide import wsl_route  # lazy: start-up

    route = wsl_route(resolution)
    if route is None and stack is None:
        return _refused(resolution, "No consistent stack for this request: run stackresolve plan without --format "
                                    "to see the conflicting facts and the nearest stacks.")
    if route is None and request.os is not Os.WINDOWS:
        return _refused(resolution, f"This stack was resolved for {request.os}; PowerShell plans are for Windows "
                                    f"(--os windows, or --os wsl2). Use --format pip, apt or conda instead.")
    if route is not None and route.stack.delivery is Delivery.CONTAINER:
        return _refused(resolution, f"This stack is NVIDIA's container {route.stack.framework.container}: run it "
                                    f"with Docker inside WSL2 (--format dockerfile).")
    return None


# Each format's decision and renderer, imported on first call (`--help` lists the formats without them).
def _decide_text(resolution: "Resolution", kb, options: PlanOptions):
    from stackresolve.formats import text_decide  # lazy: start-up

    return text_decide.decide(resolution, options, usable_install_formats(resolution, kb, options))


def _render_text(plan) -> str:
    from stackresolve.formats import text_render  # lazy: start-up

    return text_render.render(plan)


def _decide_pip(resolution: "Resolution", kb, options: PlanOptions):
    from stackresolve.formats import pip_decide  # lazy: start-up

    return pip_decide.decide(resolution, kb, options)


def _render_pip(plan) -> str:
    from stackresolve.formats import pip_render  # lazy: start-up

    return pip_render.render(plan)


def _render_lock(plan) -> str:
    from stackresolve.formats import lock_render  # lazy: start-up

    return lock_render.render(plan)


def _decide_dockerfile(resolution: "Resolution", kb, options: PlanOptions):
    from stackresolve.formats import dockerfile_decide  # lazy: start-up

    return dockerfile_decide.decide(resolution, kb, options)


def _render_dockerfile(plan) -> str:
    from stackresolve.formats import dockerfile_render  # lazy: start-up

    return dockerfile_render.render(plan)


def _decide_powershell(resolution: "Resolution", kb, options: PlanOptions):
    from stackresolve.formats import powershell_decide  # lazy: start-up

    return powershell_decide.decide(resolution, kb, options)


def _render_powershell(plan) -> str:
    from stackresolve.formats import powershell_render  # lazy: start-up

    return powershell_render.render(plan)


def _decide_apt(resolution: "Resolution", kb, options: PlanOptions):
    from stackresolve.formats import apt_decide  # lazy: start-up

    return apt_decide.decide(resolution, kb, options)


def _render_apt(plan) -> str:
    from stackresolve.formats import apt_render  # lazy: start-up

    return apt_render.render(plan)


def _decide_conda(resolution: "Resolution", kb, options: PlanOptions):
    from stackresolve.formats import conda_decide  # lazy: start-up

    return conda_decide.decide(resolution, kb, options)


def _render_conda(plan) -> str:
    from stackresolve.formats import conda_render  # lazy: start-up

    return conda_render.render(plan)


# The order is the JSON document's `plans` order and --format's; install_rank orders the text plan's closing line.
FORMATS: tuple[Format, ...] = (
    Format("text", _decide_text, _render_text, _always, file_name="txt"),
    Format("pip", _decide_pip, _render_pip, _any_stack, install_rank=0, fix_plan=True, file_name="pip.txt"),
    Format("lock", _decide_pip, _render_lock, _any_stack, install_rank=5, file_name="lock"),
    Format("dockerfile", _decide_dockerfile, _render_dockerfile, _dockerfile, install_rank=4, fix_plan=True,
           file_name="Dockerfile"),
    # an impossible native-Windows GPU target becomes the WSL2 route
    Format("powershell", _decide_powershell, _render_powershell, _powershell, install_rank=3, fix_plan=True,
           file_name="ps1"),
    Format("apt", _decide_apt, _render_apt, _apt, install_rank=2, fix_plan=True, file_name="apt.sh",
           executable=True),
    Format("conda", _decide_conda, _render_conda, _conda, install_rank=1, fix_plan=True,
           file_name="environment.yml"),
)
BY_NAME: dict[str, Format] = {f.name: f for f in FORMATS}
NAMES: tuple[str, ...] = tuple(BY_NAME)
# the install plans, in the order the text plan suggests them
INSTALL_FORMATS: tuple[Format, ...] = tuple(sorted((f for f in FORMATS if f.install_rank is not None),
                                                   key=lambda f: f.install_rank))


# the install plans explain and doctor print their fix plan in
FIX_PLANS: tuple[str, ...] = tuple(f.name for f in FORMATS if f.fix_plan)


def decide(fmt: str, resolution: "Resolution", kb, options: PlanOptions = PlanOptions()):
    """The typed plan for --format `fmt`, or the Refusal: first the format's rule for which stacks it can express,
    then its decision (which refuses only for a gap in the install facts)."""
    entry = BY_NAME[fmt]
    refused = entry.can_express(resolution)
    return refused if refused is not None else entry.decide(resolution, kb, options)


def usable_install_formats(resolution: "Resolution", kb, options: PlanOptions = PlanOptions()) -> tuple[str, ...]:
    """The install plans that print a plan for this resolution, in the text plan's order: each decided as
    `--format X` with the same options would decide it (nothing is rendered)."""
    if resolution.stack is None:
        return ()
    return tuple(entry.name for entry in INSTALL_FORMATS
                 if not isinstance(decide(entry.name, resolution, kb, options), Refusal))
