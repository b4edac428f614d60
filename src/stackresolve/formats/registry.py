"""The format registry: every --format a plan is printed in, with the module under stackresolve.formats that decides
it, the module there that renders it, whether it needs a resolved stack, and its rule for which stacks it can
express at all.

The rule is the first thing the format's decision checks (stackresolve.formats.decide), so a format it turns down is
refused, always with the rule's reason. It reads the request and the stack only, never the install facts. What the
rule lets through can still be refused by its decider for a gap in the install facts (no apt repository or base
image recorded for an old CUDA line, no driver package for --with-driver, no Visual C++ runtime record); the text
summary's decision (stackresolve.formats.text_decide) decides each install format to name only those that print a
plan.

Modules are named here, not imported: `--help`, and a plan in one format, import only what that format needs."""

from __future__ import annotations

from typing import TYPE_CHECKING, Callable, Optional

from stackresolve.model.enums import Delivery, Os
from stackresolve.model.record import record

if TYPE_CHECKING:
    from stackresolve.model.stack import Resolution

NO_STACK = "no consistent stack for this request"


@record
class Refusal:
    """A format that cannot serve this stack, and what to use instead."""

    resolution: Resolution
    why: str
    instead: str = ""


class Format:
    """One --format. A plain immutable class with __slots__ (as model/values.py's, and for the same reason: every
    command that lists or prints a format defines it, and a NamedTuple costs ~20 times more to define)."""

    __slots__ = ("name", "decider", "renderer", "needs_stack", "rule", "install_rank", "fix_plan", "file_name",
                 "executable")

    def __init__(self, name: str, decider: str, renderer: str, *, needs_stack: bool,
                 rule: Optional[Callable[["Resolution"], Optional["Refusal"]]] = None,
                 install_rank: Optional[int] = None, fix_plan: bool = False, file_name: str = "",
                 executable: bool = False) -> None:
        set_field = object.__setattr__
        set_field(self, "name", name)  # its --format name
        set_field(self, "decider", decider)  # the module under stackresolve.formats whose decide() makes its plan
        set_field(self, "renderer", renderer)  # the module under stackresolve.formats whose render(plan) prints it
        set_field(self, "needs_stack", needs_stack)  # False: it also says something for an impossible target
        set_field(self, "rule", rule)  # which stacks it can express at all (None: every one)
        set_field(self, "install_rank", install_rank)  # its place in the text plan's closing line (None: not there)
        set_field(self, "fix_plan", fix_plan)  # explain and doctor print their fix plan in it
        set_field(self, "file_name", file_name)  # the file `plan --fleet -o DIR` writes it to, after "stack-N."
        set_field(self, "executable", executable)  # written with -o, the file is made executable

    def __setattr__(self, name, value):
        raise AttributeError("Format is immutable")

    def __repr__(self) -> str:
        return f"Format({self.name!r})"

    def refusal(self, resolution: "Resolution") -> Optional["Refusal"]:
        """Why this format cannot express the resolution (None: it may; its decider has the last word)."""
        if self.needs_stack and resolution.stack is None:
            return Refusal(resolution, NO_STACK)
        return self.rule(resolution) if self.rule is not None else None


def _refused(resolution: "Resolution", why: str, instead: str = "") -> Refusal:
    return Refusal(resolution, why, instead)


def _conda(resolution: "Resolution"):
    stack = resolution.stack
    if stack.delivery is Delivery.CONTAINER:
        return _refused(resolution, f"this stack is NVIDIA's container {stack.framework.container}",
                        "use --format dockerfile")
    return None


def _apt(resolution: "Resolution"):
    stack, os_name = resolution.stack, resolution.request.os
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
    if request.os in (Os.WINDOWS, Os.MACOS):
        return _refused(resolution, f"No Dockerfile: containers run Linux, and this stack was resolved for "
                                    f"{request.os}.", "Re-run with --os linux (or --os wsl2 on Windows).")
    if stack.cuda and request.arch.is_arm and stack.delivery is Delivery.SYSTEM:
        return _refused(resolution, f"No Dockerfile: the recorded CUDA base images are x86_64 only (asked: "
                                    f"{request.arch}).")
    return None


def wsl_route(resolution: "Resolution"):
    """What the PowerShell plan sets up inside WSL2, with its .request and .stack (None: a native Windows plan, or
    none): a WSL2 request's own resolution, or, for a native-Windows request with no stack, the nearest WSL2
    alternative."""
    request, stack = resolution.request, resolution.stack
    if stack is None:
        wsl = next((a for a in resolution.alternatives if a.request.os is Os.WSL2), None)
        return wsl if request.os is Os.WINDOWS else None
    return resolution if request.os is Os.WSL2 else None


def _powershell(resolution: "Resolution"):
    request, stack = resolution.request, resolution.stack
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


# The order is the JSON document's `plans` order and --format's; install_rank orders the text plan's closing line.
FORMATS: tuple[Format, ...] = (
    Format("text", "text_decide", "text_render", needs_stack=False, file_name="txt"),
    Format("pip", "pip_decide", "pip_render", needs_stack=True, install_rank=0, fix_plan=True, file_name="pip.txt"),
    Format("lock", "pip_decide", "lock_render", needs_stack=True, install_rank=5, file_name="lock"),
    Format("dockerfile", "dockerfile_decide", "dockerfile_render", needs_stack=True, rule=_dockerfile, install_rank=4,
           fix_plan=True, file_name="Dockerfile"),
    # an impossible native-Windows GPU target becomes the WSL2 route
    Format("powershell", "powershell_decide", "powershell_render", needs_stack=False, rule=_powershell,
           install_rank=3, fix_plan=True, file_name="ps1"),
    Format("apt", "apt_decide", "apt_render", needs_stack=True, rule=_apt, install_rank=2, fix_plan=True,
           file_name="apt.sh", executable=True),
    Format("conda", "conda_decide", "conda_render", needs_stack=True, rule=_conda, install_rank=1, fix_plan=True,
           file_name="environment.yml"),
)
BY_NAME: dict[str, Format] = {f.name: f for f in FORMATS}
NAMES: tuple[str, ...] = tuple(BY_NAME)
# the install plans, in the order the text plan suggests them
INSTALL_FORMATS: tuple[Format, ...] = tuple(sorted((f for f in FORMATS if f.install_rank is not None),
                                                   key=lambda f: f.install_rank))


# the install plans explain and doctor print their fix plan in
FIX_PLANS: tuple[str, ...] = tuple(f.name for f in FORMATS if f.fix_plan)
