"""The command group, the exit codes and the helpers every command shares.

Each command is a typer app of its own in its own module; the group (a click group, typer's own foundation)
imports and builds only the command that runs, and lists the commands from the table below without building
them, so `--help` and every command pay for one command's construction, not eight."""

import importlib
import os
import sys
from typing import Optional

import click
import typer

from stackresolve import __version__

HELP = ("Resolve a working NVIDIA driver + CUDA + cuDNN + Python + TensorFlow, PyTorch or JAX stack and print how to "
        "install it.")
# name -> (module, one-line help: the first line of the command's docstring; a test keeps them equal)
COMMANDS = {
    "plan": ("stackresolve.cli.plan", "Resolve a consistent stack for a TensorFlow, PyTorch or JAX target and "
                                      "print the plan (exit 1 when none exists)."),
    "detect": ("stackresolve.cli.detect", "Show what this machine has: GPUs, compute capability, driver, CUDA, "
                                          "cuDNN, Python, TensorFlow, PyTorch, JAX, OS."),
    "matrix": ("stackresolve.cli.browse", "For every release line of a framework (TensorFlow; --torch, --jax): "
                                          "whether and how it runs on this GPU and OS."),
    "gpus": ("stackresolve.cli.browse", "List the GPU models the knowledge base knows, with compute capability."),
    "show": ("stackresolve.cli.browse", "Show what the knowledge base says about a release, driver or GPU, with "
                                        "sources."),
    "check": ("stackresolve.cli.check", "Compare this machine with a lock file: exit 0 when it matches, 1 with the "
                                        "differences."),
    "explain": ("stackresolve.cli.explain", "Turn an error message into its meaning, likely cause and fix (exit 1 "
                                            "when the text is not recognised)."),
    "doctor": ("stackresolve.cli.doctor", "Diagnose the installed GPU stack; exit 0 when healthy, 1 when problems "
                                          "were found."),
    "install": ("stackresolve.cli.install", "Install a lock or a plan into a new virtual environment and prove it "
                                            "works: the framework imports and sees the GPU, and check agrees (exit 0 "
                                            "only then)."),
    "export": ("stackresolve.cli.install", "Print a lock's requirements file (index option first), for `pip install "
                                           "-r` or `uv pip install -r`."),
    "refresh": ("stackresolve.cli.refresh", "Re-read every kind of data a machine can read into the user cache, "
                                            "each with its own date (used while not older than shipped)."),
    "site": ("stackresolve.cli.site", "Write a static page that shows the matrix's answers for any GPU, driver and "
                                      "OS (open index.html from disk or any static host)."),
    "schema": ("stackresolve.cli.schema", "Print the JSON Schema of one of the JSON documents stackresolve prints."),
}


def command_app() -> typer.Typer:
    """The typer app one command module registers its command on."""
    return typer.Typer(add_completion=False, pretty_exceptions_enable=False, rich_markup_mode=None)


class CommandGroup(click.Group):
    """Commands are built on first use; the listing comes from COMMANDS."""

    def list_commands(self, ctx: click.Context) -> list[str]:
        return list(COMMANDS)

    def get_command(self, ctx: click.Context, name: str) -> Optional[click.Command]:
        if name not in COMMANDS:
            return None
        module = importlib.import_module(COMMANDS[name][0])
        return one_value_once(with_json_flag(typer.main.get_command(getattr(module, f"{name}_app"))))

    def parse_args(self, ctx: click.Context, args: list[str]) -> list[str]:
        if not args and not ctx.resilient_parsing:  # a bare `stackresolve`: the help, exit 0
            click.echo(ctx.get_help())
            ctx.exit(0)
        return super().parse_args(ctx, args)

    def _main_shell_completion(self, ctx_args, prog_name: str, complete_var: Optional[str] = None) -> None:
        """Shell completion through typer's completion classes (the scripts `--install-completion` installs);
        typer's completion module is imported only while completing."""
        complete_var = complete_var or f"_{prog_name}_COMPLETE".replace("-", "_").upper()
        instruction = os.environ.get(complete_var)
        if not instruction:
            return
        # lazy: no start-up gain (already loaded by then); kept beside its use
        from typer.completion import completion_init, shell_complete

        completion_init()
        sys.exit(shell_complete(self, ctx_args, prog_name, complete_var, instruction))

    def resolve_command(self, ctx: click.Context, args: list[str]):
        name = args[0] if args else ""
        if name and not name.startswith("-") and name not in COMMANDS:
            # lazy: no start-up gain (already loaded by then); kept beside its use
            import difflib

            close = difflib.get_close_matches(name, COMMANDS, n=1)
            hint = f" Did you mean '{close[0]}'?" if close else ""
            raise click.UsageError(f"No such command '{name}'.{hint} Commands: {', '.join(COMMANDS)}.", ctx)
        return super().resolve_command(ctx, args)

    def format_commands(self, ctx: click.Context, formatter: click.HelpFormatter) -> None:
        with formatter.section("Commands"):
            formatter.write_dl([(name, short) for name, (_, short) in COMMANDS.items()])


def _print_version(ctx: click.Context, _param: click.Parameter, value: bool) -> None:
    if value and not ctx.resilient_parsing:
        click.echo(f"stackresolve {__version__}")
        ctx.exit()


def _no_cache(ctx: click.Context, _param: click.Parameter, value: bool) -> None:
    if value:
        # lazy: no start-up gain (already loaded by then); kept beside its use
        import os

        os.environ["STACKRESOLVE_NO_CACHE"] = "1"  # read by the knowledge snapshot, for this process only


def _completion(action: str):
    """typer's --install-completion / --show-completion callbacks, imported only when asked for."""

    def callback(ctx: click.Context, param: click.Parameter, value: bool) -> None:
        if value and not ctx.resilient_parsing:
            # lazy: no start-up gain (already loaded by then); kept beside its use
            from typer import completion

            completion.completion_init()
            getattr(completion, f"{action}_callback")(ctx, param, value)

    return callback


app = CommandGroup(name="stackresolve", help=HELP,
                   params=[click.Option(["--version"], is_flag=True, expose_value=False, is_eager=True,
                                        help="Print the version and exit.", callback=_print_version),
                           click.Option(["--no-cache"], is_flag=True, expose_value=False, is_eager=True,
                                        help="Neither read nor write the knowledge snapshot cache.",
                                        callback=_no_cache),
                           click.Option(["--install-completion"], is_flag=True, expose_value=False, is_eager=True,
                                        help="Install shell completion for the current shell.",
                                        callback=_completion("install")),
                           click.Option(["--show-completion"], is_flag=True, expose_value=False, is_eager=True,
                                        help="Show the completion script for the current shell.",
                                        callback=_completion("show"))])


class Exit:
    OK = 0
    FAILED = 1  # no consistent stack / check failed / not recognised
    BAD_INPUT = 2  # one line says what was wrong and what is accepted
    NOT_WRITTEN = 3  # the output could not be written (full disk, closed pipe, no permission), or a bug
    INTERRUPTED = 130


def fail(message: str, code: int = Exit.BAD_INPUT) -> None:
    sys.stderr.write(f"stackresolve: error: {one_line(message)}\n")
    raise typer.Exit(code)


def one_line(text: str) -> str:
    return " ".join(str(text).split())


def knowledge():
    # lazy: start-up (a command imports only what it runs: knowledge.loader)
    from stackresolve.knowledge.loader import KnowledgeError, knowledge as load

    try:
        kb = load()
    except KnowledgeError as exc:
        fail(f"broken knowledge base: {exc}", Exit.FAILED)
    for warning in kb.load_warnings:
        if warning not in _WARNED:
            _WARNED.add(warning)
            typer.echo(f"stackresolve: warning: {one_line(warning)}", err=True)
    return kb


_WARNED: set[str] = set()  # each warning about the loaded data once per process


def output(text: str, path: Optional[str], executable: bool = False) -> None:
    """Print `text`, or write it to `-o PATH` (files.write_output: atomic for regular files, straight into
    devices and pipes); a write that fails is one line and exit 3, and nothing is left half-written."""
    if path is None or path == "-":
        write_stdout(text)
        return
    if not path.strip():
        fail(f"-o {path!r}: no file named; give a file, or '-' for standard output")
    # lazy: start-up (a command imports only what it runs: files.write)
    from stackresolve.files.write import write_output

    try:
        write_output(path, text.encode("utf-8"), executable=executable)
    except OSError as exc:
        fail(f"-o {path!r}: cannot write ({exc.strerror or exc})", Exit.NOT_WRITTEN)
    typer.echo(f"wrote {path}", err=True)


def write_stdout(text: str) -> None:
    """Standard output: characters its encoding cannot hold are escaped (main() configures that), and a write
    that fails (a closed pipe, a full disk) is one line and exit 3."""
    try:
        sys.stdout.write(text)
        sys.stdout.flush()
    except OSError as exc:
        _silence_stdout()
        fail(f"cannot write standard output ({exc.strerror or exc})", Exit.NOT_WRITTEN)


def _silence_stdout() -> None:
    """After a failed write, point stdout at /dev/null so that the interpreter's final flush stays quiet."""
    # lazy: no start-up gain (already loaded by then); kept beside its use
    import os

    try:
        os.dup2(os.open(os.devnull, os.O_WRONLY), sys.stdout.fileno())
    except (OSError, ValueError):
        pass


def read_input(name: str, limit: int, *, what: str, keep_tail: bool = False):
    """A file the user named (or "-" for standard input) through the one input layer (stackresolve.files.read):
    regular files only, at most `limit` bytes; anything else is one line and exit 2."""
    # lazy: start-up (a command imports only what it runs: files.read)
    from stackresolve.files.read import InputTooLarge, NotARegularFile, read_text

    label = "standard input" if name == "-" else repr(name)
    try:
        return read_text(name, limit, keep_tail=keep_tail)
    except NotARegularFile as exc:
        fail(f"{what} {label}: is {exc}, not a regular file; give a file, or '-' for standard input")
    except InputTooLarge as exc:
        fail(f"{what} {label}: too large ({exc})")
    except OSError as exc:
        fail(f"{what} {label}: cannot read ({exc.strerror or exc})")


def detect_machine(no_detect: bool = False, python_exe: Optional[str] = None, gpu_only: bool = False,
                   deadline=None):
    """Probe this machine unless told not to (None then). A GPU no probe gives a compute capability for is looked
    up by name in the knowledge base; one found only on the PCI bus (no driver yet) by its PCI id."""
    if no_detect:
        return None
    # lazy: start-up (a command imports only what it runs: detect, knowledge.loader)
    from stackresolve.detect import detect_machine as probe
    from stackresolve.knowledge.loader import nvidia_pci_ids

    return probe(python_exe=python_exe, gpu_only=gpu_only, deadline=deadline,
                 gpu_lookup=lambda name: knowledge().find_gpu(name), pci_table=nvidia_pci_ids,
                 vendor_gpu_name=vendor_gpu_name)


def vendor_gpu(pci_id: str) -> Optional[tuple[str, str]]:
    """An AMD or Intel GPU by PCI id: (model name, gfx target) for AMD ("1002:74a1" -> ("AMD Instinct MI300X",
    "gfx942")), (model name, device family) for Intel, from the knowledge base's AMD and Intel GPU tables (amd.toml,
    intel.toml); None when the id is not there, or the tables cannot be read (the GPU stays unnamed; plan and show
    report the file). Read on first use: only a machine or fleet with such a GPU asks."""
    # lazy: start-up (only a machine or fleet with an AMD or Intel GPU reads their tables)
    from stackresolve.knowledge.loader import KnowledgeError, accelerator_knowledge

    vendor, _, device = pci_id.partition(":")
    if vendor not in ("1002", "8086"):
        return None
    try:
        known = accelerator_knowledge()
    except (KnowledgeError, OSError):
        return None
    if vendor == "1002":
        amd = known.amd_gpu_by_pci(device)
        return (amd.name, amd.gfx) if amd else None
    intel = known.intel_gpu_by_pci(device)
    return (intel.name, intel.family) if intel else None


def vendor_gpu_name(pci_id: str) -> Optional[str]:
    """The model name of an AMD or Intel GPU by PCI id ("1002:74a1" -> "AMD Instinct MI300X"), or None."""
    found = vendor_gpu(pci_id)
    return found[0] if found else None


def progress_reporter(stream=None):
    """A `progress(message)` for the steps that wait on the network or on an installer: a line on stderr with the
    time so far when stderr is a terminal, nothing otherwise (logs and pipes stay clean)."""
    stream = stream or sys.stderr
    if not stream.isatty():
        return lambda _message: None
    # lazy: no start-up gain (already loaded by then); kept beside its use
    import time

    started = time.monotonic()

    def show(message: str) -> None:
        # lazy: start-up (a command imports only what it runs: formats.header)
        from stackresolve.formats.header import one_line as printable  # no control character reaches the terminal

        stream.write(f"stackresolve: [{time.monotonic() - started:5.1f} s] {one_line(printable(message))} ...\n")
        stream.flush()

    return show


def choice(value: str, allowed: tuple[str, ...], flag: str) -> str:
    if value not in allowed:
        fail(not_a_choice(value, allowed, flag))
    return value


def not_a_choice(value: str, allowed, flag: str) -> str:
    near = closest(value, allowed)
    return f"{flag} {value!r}: use one of {', '.join(allowed)}" + (f" (did you mean {near}?)" if near else "")


def closest(value: str, allowed) -> Optional[str]:
    # lazy: no start-up gain (already loaded by then); kept beside its use
    from difflib import get_close_matches

    near = get_close_matches(value, allowed, n=1)
    return near[0] if near else None


class Choice(click.Choice):
    """A flag's closed set of values, for shell completion and --help (click lists them); a wrong value is our
    one line with the closest match, exit 2. `values` is called on first use (the plan formats come from the
    format registry, which a command's --help or a completion of other flags need not import). `parse`, where
    given, decides what is accepted (--os also takes aliases such as win and darwin) and says why not."""

    def __init__(self, values, flag: str, parse=None):
        self._values = values
        self.flag = flag
        self.parse = parse
        self.case_sensitive = True

    @property
    def choices(self) -> tuple[str, ...]:
        if callable(self._values):
            self._values = tuple(self._values())
        return self._values

    def convert(self, value, param, ctx):
        if ctx is not None and ctx.resilient_parsing:  # completing: nothing is printed
            return value
        if self.parse is not None:
            # lazy: start-up (a command imports only what it runs: request.build)
            from stackresolve.request.build import InputError

            try:
                self.parse(value)
            except InputError as exc:
                near = closest(value.lower(), self.choices)
                fail(str(exc) + (f" (did you mean {near}?)" if near and "did you mean" not in str(exc) else ""))
        elif value not in self.choices:
            fail(not_a_choice(value, self.choices, self.flag))
        return value


def os_choice() -> Choice:
    # lazy: start-up (a command imports only what it runs: model.enums)
    from stackresolve.model.enums import Os

    def parse(value: str):
        # lazy: start-up (a command imports only what it runs: request.parse)
        from stackresolve.request.parse import parse_os

        return parse_os(value)

    return Choice(Os.names(), "--os", parse)


def command_line(ctx: click.Context, leave_out: tuple[str, ...] = ()) -> str:
    """The command as the user typed it, shell-quoted: the options given on the command line (in the command's
    order, by their long names), less the parameters named in `leave_out`."""
    # lazy: start-up (shlex, only this path)
    import shlex

    from click.core import ParameterSource

    words = ctx.command_path.split()
    for param in ctx.command.params:
        if not isinstance(param, click.Option) or param.name in leave_out or param.name not in ctx.params or \
                ctx.get_parameter_source(param.name) is not ParameterSource.COMMANDLINE:
            continue
        flag, value = max(param.opts, key=len), ctx.params[param.name]
        if param.is_flag:
            words += [flag] if value else []
        else:
            words += [flag, shlex.quote(str(value))]
    return " ".join(words)


def one_value_once(command: click.Command) -> click.Command:
    """An option that takes one value, given twice (`--gpu "RX 580" --gpu MI300X`), is bad input: click would keep
    the last one and drop the first without a word, and a plan for the wrong GPU is worse than a refusal."""
    single = {name: max(p.opts, key=len) for p in command.params if isinstance(p, click.Option)
              and not (p.multiple or p.count or p.is_flag) and p.nargs == 1 for name in p.opts}
    parse = command.parse_args

    def parse_args(ctx: click.Context, args: list[str]) -> list[str]:
        seen: dict[str, int] = {}
        for arg in args:
            if arg == "--":
                break
            name = arg.split("=", 1)[0]
            if name in single:
                seen[single[name]] = seen.get(single[name], 0) + 1
        twice = [name for name, count in seen.items() if count > 1]
        if twice:
            raise click.UsageError(f"{twice[0]} was given {seen[twice[0]]} times: it takes one value (one GPU, OS, "
                                   f"version ... per plan; a fleet of machines: --fleet FILE)", ctx)
        return parse(ctx, args)

    command.parse_args = parse_args
    return command


def with_json_flag(command: click.Command) -> click.Command:
    """`--json` is `--format json` for every command whose --format prints JSON (the option named fmt); the
    two together must agree."""
    fmt = next((p for p in command.params if p.name == "fmt"), None)
    if fmt is None:
        return command
    ask_json = click.Option(["--json"], is_flag=True, expose_value=False, help="The same as --format json.",
                            callback=_json_flag)
    command.params.insert(command.params.index(fmt) + 1, ask_json)
    then = fmt.callback
    fmt.callback = lambda ctx, param, value: _json_format(ctx, then(ctx, param, value) if then else value)
    return command


def _json_flag(ctx: click.Context, _param: click.Parameter, value: bool) -> None:
    if not value:
        return
    ctx.meta["stackresolve.json"] = True
    if "fmt" in ctx.params:  # --format was read first
        ctx.params["fmt"] = _json_format(ctx, ctx.params["fmt"])


def _json_format(ctx: click.Context, value: str) -> str:
    # lazy: no start-up gain (already loaded by then); kept beside its use
    from click.core import ParameterSource

    if not ctx.meta.get("stackresolve.json"):
        return value
    if value != "json" and ctx.get_parameter_source("fmt") is ParameterSource.COMMANDLINE:
        fail(f"--json and --format {value}: give one of them")
    return "json"


def plan_formats() -> tuple[str, ...]:
    """What plan prints: the format registry's formats (stackresolve.formats.registry), or the JSON document."""
    # lazy: start-up (a command imports only what it runs: formats.registry)
    from stackresolve.formats.registry import NAMES

    return (*NAMES, "json")


def fix_plan_formats() -> tuple[str, ...]:
    """What explain and doctor can print: their own text or JSON, or a fix plan in an install format."""
    # lazy: start-up (a command imports only what it runs: formats.registry)
    from stackresolve.formats.registry import FIX_PLANS

    return ("text", "json", *FIX_PLANS)


STALE_AFTER_DAYS = 120


def warn_if_stale(kb, framework: str = "tensorflow", macos: bool = False) -> None:
    """A plan built on old data says so, per kind of data the plan used (on stderr: the plan itself stays as it
    is)."""
    # lazy: no start-up gain (already loaded by then); kept beside its use
    import datetime

    today = datetime.date.today()
    for _, label, fetched, origin in kb.kinds_used_by(framework, macos):
        try:
            age = (today - datetime.date.fromisoformat(fetched)).days
        except ValueError:
            continue
        if age > STALE_AFTER_DAYS:
            sys.stderr.write(f"stackresolve: note: the {label} data is {age} days old (fetched {fetched}, "
                             f"{origin}); `stackresolve refresh` reads it again\n")


def emit_resolution(resolution, kb, fmt: str, out: Optional[str], options=None) -> None:
    """Print (or write) one format of a resolution; an impossible target prints its explanation, exit 1; a format
    that cannot express the stack is bad input (one line naming the formats that can, exit 2, nothing written)."""
    # lazy: start-up (a command imports only what it runs: formats.render, formats)
    from stackresolve.formats.render import FormatRefused, plan_set, render_plan
    from stackresolve.formats import PlanOptions

    options = options or PlanOptions()
    warn_if_stale(kb, resolution.request.framework.value, resolution.request.os.value == "macos")
    if fmt == "json":
        # lazy: start-up (a command imports only what it runs: formats.json_render)
        from stackresolve.formats import json_render as plan_document

        plans = plan_set(resolution, kb, options)
        output(plan_document.render(resolution, plans.plans, plans.refused), out)
        raise typer.Exit(Exit.FAILED if resolution.stack is None else Exit.OK)
    try:
        text = render_plan(fmt, resolution, kb, options)
    except FormatRefused as exc:
        if resolution.stack is None:
            sys.stderr.write(render_plan("text", resolution, kb))
            raise typer.Exit(Exit.FAILED)
        fail(str(exc))
    # lazy: start-up (a command imports only what it runs: formats.registry)
    from stackresolve.formats.registry import BY_NAME

    output(text, out, executable=BY_NAME[fmt].executable)
    raise typer.Exit(Exit.FAILED if resolution.stack is None else Exit.OK)
