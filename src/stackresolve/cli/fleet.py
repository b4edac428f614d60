"""`stackresolve plan --fleet SOURCE`: read the inventories, call the fleet decision, render. No decisions here."""

from __future__ import annotations

from pathlib import Path
from typing import Optional

import typer

from stackresolve.cli.app import Exit, fail, knowledge, output, read_input, vendor_gpu, warn_if_stale
from stackresolve.formats.registry import FORMATS

FLEET_LIMIT = 64 * 1024 * 1024  # a 5,000-node `kubectl get nodes -o json` is some 50 MB
# the file each --format becomes under -o DIR, per stack
FILE_NAMES = {f.name: f.file_name for f in FORMATS}
# flags that describe one machine: the fleet's machines come from SOURCE
MACHINE_FLAGS = ("--os", "--gpu", "--gpu-cc", "--driver", "--arch", "--cpu")
# The command's one deadline: reading, deciding and writing a fleet (1,000 distinct groups take seconds, see
# docs/performance.md); STACKRESOLVE_FLEET_TIMEOUT changes it.
FLEET_SECONDS = 120.0
FLEET_TIMEOUT_ENV = "STACKRESOLVE_FLEET_TIMEOUT"


def plan_fleet_command(sources: list[str], flags, fmt: str, out: Optional[str], allow_cpu: bool,
                       env_name: Optional[str], choice: str, machine_flags: dict[str, object]) -> int:
    """`plan --fleet`: gives the exit code (0, or 1 when no machine of the fleet gets a stack); bad input, a
    deadline passed or a refused format end the command here (fail)."""
    # lazy: start-up (a command imports only what it runs: request.parse, fleet.decide, ...)
    from stackresolve.request.parse import parse_flags
    from stackresolve.fleet.decide import FleetTimeout, plan_fleet
    from stackresolve.fleet.grouping import group_members
    from stackresolve.fleet.inventory import FleetInputError
    from stackresolve.fleet.readers import kb_lookup
    from stackresolve.model.enums import Os
    from stackresolve.formats import PlanOptions
    from stackresolve.request.build import InputError, build_request

    given = [name for name, value in machine_flags.items() if value]
    if given:
        fail(f"{given[0]} describes one machine; with --fleet every machine's facts come from the fleet's files")
    if fmt == "pylock":
        fail("--fleet plans several machines; a full lock (pylock) is made per stack with `plan` on one of them")
    deadline = fleet_deadline()
    kb = knowledge()
    try:
        base = build_request(kb, parse_flags(kb, flags).replace(os=Os.LINUX), None)  # each group's OS replaces it
    except InputError as exc:
        fail(str(exc))
    try:
        groups = group_members(read_sources(sources, kb_lookup(kb), vendor_gpu))
    except FleetInputError as exc:
        for problem in exc.problems:
            typer.echo(f"stackresolve: error: {clean(problem)}", err=True)
        raise typer.Exit(Exit.BAD_INPUT)
    try:
        plan = plan_fleet(kb, base, groups, allow_cpu=allow_cpu, choice=choice, deadline=deadline)
    except FleetTimeout as exc:
        fail(f"--fleet: no answer within {deadline.total:g} s ({exc.decided} of {exc.total} groups resolved on "
             f"their own); nothing was written. Split the fleet, or give it more time with "
             f"{FLEET_TIMEOUT_ENV}=SECONDS", Exit.NOT_WRITTEN)
    options = PlanOptions(env_name=env_name)
    warn_if_stale(kb, base.framework.value)
    code = Exit.OK if plan.stacks else Exit.FAILED
    if out is not None and out != "-":
        write_directory(Path(out), plan, kb, fmt, options)
        return code
    if fmt == "text":
        # lazy: start-up (a command imports only what it runs: fleet.render)
        from stackresolve.fleet.render import render_text

        output(render_text(plan), None)
    elif fmt == "json":
        output(render_json(plan, kb, options), None)
    elif len(plan.stacks) != 1:
        fail(f"the fleet needs {len(plan.stacks)} stacks: -o DIR writes one {fmt} file per stack that {fmt} can "
             f"express (--format text shows which machines take which stack)"
             if plan.stacks else "no machine of the fleet can run the target (--format text says why)",
             Exit.FAILED if not plan.stacks else Exit.BAD_INPUT)
    else:
        # lazy: start-up (a command imports only what it runs: formats.render)
        from stackresolve.formats.render import render_plan

        output(render_plan(fmt, plan.stacks[0].resolution, kb, options), None)
    return code


def fleet_deadline():
    """The command's deadline: FLEET_SECONDS, or STACKRESOLVE_FLEET_TIMEOUT (seconds, > 0)."""
    # lazy: start-up (a command imports only what it runs: detect.runner)
    import os

    from stackresolve.detect.runner import Deadline

    text = os.environ.get(FLEET_TIMEOUT_ENV, "").strip()
    if not text:
        return Deadline(FLEET_SECONDS)
    try:
        seconds = float(text)
    except ValueError:
        seconds = float("nan")
    if not 0 < seconds <= 24 * 3600:
        fail(f"{FLEET_TIMEOUT_ENV}={text[:40]!r}: not a number of seconds between 0 and 86400")
    return Deadline(seconds)


def read_sources(sources: list[str], lookup, vendor_lookup=None) -> list:
    """Every machine of every source: a file, '-', or a folder of detect reports (its *.json files)."""
    # lazy: start-up (a command imports only what it runs: fleet.model, fleet.readers)
    from stackresolve.fleet.inventory import FleetInputError
    from stackresolve.fleet.readers import read_document

    members, problems = [], []
    for source in sources:
        path = Path(source)
        if source != "-" and path.is_dir():
            files = sorted(str(p) for p in path.iterdir() if p.suffix == ".json" and p.is_file())
            if not files:
                problems.append(f"{source}: a folder without .json files (detect reports)")
        else:
            files = [source]
        for name in files:
            text = read_input(name, FLEET_LIMIT, what="--fleet").text
            try:
                members += read_document(text, "standard input" if name == "-" else name, lookup, vendor_lookup)
            except FleetInputError as exc:
                problems += exc.problems
    if problems:
        raise FleetInputError(problems)
    return members


def render_json(plan, kb, options) -> str:
    """The plan@1 document of the newest stack, with `fleet` added (every stack, group and exclusion)."""
    # lazy: start-up (a command imports only what it runs: formats.render, formats.json_render, ...)
    import json

    from stackresolve.formats.render import all_plans
    from stackresolve.formats.json_render import document
    from stackresolve.fleet.render import fleet_json, node_affinity

    plans = [all_plans(s.resolution, kb, options) for s in plan.stacks]
    affinity = [node_affinity(s) for s in plan.stacks]
    if plan.stacks:
        doc = document(plan.stacks[0].resolution, plans[0])
    else:
        # lazy: start-up (a command imports only what it runs: model.stack)
        from stackresolve.model.stack import Resolution

        doc = document(Resolution(plan.request, None, (), (), kb.version), {})
    doc["fleet"] = fleet_json(plan, plans, affinity)
    return json.dumps(doc, indent=2) + "\n"


# A new -o path with one of these endings was meant as a file: with --fleet it would silently become a folder.
FILE_LIKE_SUFFIXES = frozenset({".json", ".txt", ".yml", ".yaml", ".sh", ".ps1", ".lock", ".toml", ".dockerfile"})


def write_directory(folder: Path, plan, kb, fmt: str, options) -> None:
    """-o DIR: the table and the JSON document, and per stack every format (or the one asked for) and, for
    Kubernetes nodes, the nodeAffinity that selects its nodes."""
    # lazy: start-up (a command imports only what it runs: formats.render, files.write, ...)
    from dataclasses import replace

    from stackresolve.formats.render import render_plan
    from stackresolve.files.write import write_into_folder
    from stackresolve.fleet.render import node_affinity, render_text
    from stackresolve.formats import Refusal
    from stackresolve.formats.registry import decide

    if (folder.exists() and not folder.is_dir()) or \
            (not folder.exists() and folder.suffix.lower() in FILE_LIKE_SUFFIXES):
        fail(f"-o {str(folder)!r}: with --fleet, -o names a folder (one file per stack and format), not a file")
    files: dict[str, str] = {"fleet.txt": render_text(plan), "fleet.json": render_json(plan, kb, options)}
    formats = [f for f in FILE_NAMES if f == fmt] if fmt in FILE_NAMES and fmt != "text" else list(FILE_NAMES)
    skipped = []
    for i, s in enumerate(plan.stacks):
        for f in formats:
            if isinstance(decide(f, s.resolution, kb, options), Refusal):
                skipped.append(f"stack {i + 1} {f}")
                continue
            name = f"stack-{i + 1}.{FILE_NAMES[f]}"
            files[name] = render_plan(f, s.resolution, kb, replace(options, script_file=name))
        affinity = node_affinity(s)
        if affinity is not None:
            files[f"stack-{i + 1}.affinity.yaml"] = affinity
    try:
        write_into_folder(folder, {name: text.encode("utf-8") for name, text in files.items()},
                          executable=lambda name: name.endswith(".sh"))
    except OSError as exc:
        fail(f"-o {str(folder)!r}: cannot write ({exc.strerror or exc})", Exit.NOT_WRITTEN)
    typer.echo(f"wrote {len(files)} files to {folder}" + (f" (not expressible: {', '.join(skipped)})"
                                                           if skipped else ""), err=True)


def clean(text: str) -> str:
    return " ".join(str(text).split())
