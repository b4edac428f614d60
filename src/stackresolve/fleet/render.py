"""Renderers of a FleetPlan: the table, the `fleet` field of the plan@1 document, a Kubernetes nodeAffinity per
stack. Pure: they render what decide.py decided."""

from __future__ import annotations

from stackresolve.fleet.decide import NEWEST, FleetPlan, FleetStack, stack_key
from stackresolve.fleet.inventory import Group, Member
from stackresolve.fleet.readers import GFD

SHOWN_MEMBERS = 3


def members_text(group: Group) -> str:
    names = [m.name for m in group.members]
    return f"{len(names)}: {first_names(names)}"


def first_names(names: list[str]) -> str:
    more = len(names) - SHOWN_MEMBERS
    return ", ".join(names[:SHOWN_MEMBERS]) + (f", ... (+{more})" if more > 0 else "")


def render_text(plan: FleetPlan) -> str:
    asked = plan.request.asked
    machines = sum(len(g.members) for g in plan.groups)
    lines = [f"stackresolve plan --fleet: {asked} for {machines} machine(s) in {len(plan.groups)} group(s)",
             f"status: {plan.status}", choice_line(plan), ""]
    if plan.choice == NEWEST and plan.stacks:
        lines.append(f"Each group takes the newest stack it runs on its own: {len(plan.stacks)} stack(s), newest "
                     f"first:")
    elif len(plan.stacks) == 1:
        lines.append("One stack runs on every machine that can run the target:")
    elif plan.stacks:
        lines.append(f"No single stack runs natively on every group; {len(plan.stacks)} stacks cover them "
                     f"(newest first):")
    else:
        lines.append("No machine of the fleet can run the target.")
    for i, s in enumerate(plan.stacks):
        lines.append(f"  stack {i + 1}: {s.stack.summary}  [{s.resolution.status}]")
    rows = [("group", "machines", "GPU", "driver", "system", "stack", "status")]
    for g in plan.groups:
        index = plan.stack_of(g)
        driver = str(g.driver) if g.driver else ("-" if g.cpu else "unknown")
        if index is None:
            rows.append((g.name, members_text(g), g.gpu_text, driver, g.system_text, "-", "excluded"))
        else:
            s = plan.stacks[index]
            rows.append((g.name, members_text(g), g.gpu_text, driver, g.system_text,
                         f"{index + 1}: {s.stack.framework.label}", s.support(g).value))
    widths = [max(len(r[c]) for r in rows) for c in range(len(rows[0]))]
    lines.append("")
    lines += ["  " + "  ".join(cell.ljust(w) for cell, w in zip(row, widths)).rstrip() for row in rows]
    held = held_back(plan)
    if held:
        lines += ["", "Held back by the shared stack (--fleet-stacks newest gives each group its own newest):"]
        lines += [f"  {g.name}: takes {taken}; on its own {own}" for g, taken, own in held]
    if plan.excluded:
        lines += ["", "Excluded (cannot run the target at all):"]
        lines += [f"  {e.group.name} ({members_text(e.group)}): {e.reason}" for e in plan.excluded]
    noted: dict[str, list[str]] = {}
    for g in plan.groups:
        for m in g.members:
            for note in m.notes:
                noted.setdefault(note, []).append(m.name)
    if noted:
        lines += ["", "Notes:"]
        for note, names in noted.items():
            lines.append(f"  {first_names(names)}: {note}")
    for i, s in enumerate(plan.stacks):
        warnings = [f for f in s.resolution.findings if f.severity.value != "info"]
        if warnings:
            lines += ["", f"stack {i + 1} findings:"]
            lines += [f"  [{f.severity.value}] {f.code}: {f.message}" for f in warnings]
    lines += ["", "Each stack's install plans: --format pip|conda|apt|dockerfile|powershell|lock (one stack), or "
                  "-o DIR for every stack and format."]
    return "\n".join(lines) + "\n"


def choice_line(plan: FleetPlan) -> str:
    if plan.choice == NEWEST:
        return "stacks: each group its newest (--fleet-stacks newest; the default, fewest, shares stacks)"
    return "stacks: the fewest that cover the fleet (--fleet-stacks newest: each group its newest)"


def held_back(plan: FleetPlan) -> list[tuple[Group, str, str]]:
    """Groups whose stack is older than the newest they run on their own: (group, its stack, its own newest)."""
    held = []
    for g in plan.groups:
        index, own = plan.stack_of(g), plan.alone.get(g.name)
        if index is None or own is None:
            continue
        taken = plan.stacks[index].stack
        if stack_key(own.stack) > stack_key(taken):
            held.append((g, taken.framework.label, own.stack.framework.label))
    return held


def member_json(m: Member) -> dict:
    return {"name": m.name, "origin": m.origin, "gpu_count": m.gpu_count, "notes": list(m.notes)}


def group_json(plan: FleetPlan, g: Group) -> dict:
    index = plan.stack_of(g)
    alone = plan.alone.get(g.name)
    return {
        "name": g.name,
        "os": g.os.value, "arch": g.arch.value, "distro": g.first.distro, "release": g.first.release,
        "gpus": [{"name": f.name or None, "model": f.model or None,
                  "compute_capability": None if f.cc is None else str(f.cc),
                  "vendor": f.vendor, "gfx": f.gfx or None, "family": f.family or None} for f in g.gpus],
        "driver": None if g.driver is None else str(g.driver),
        "members": [member_json(m) for m in g.members],
        "stack": index,
        "support": plan.stacks[index].support(g).value if index is not None else None,
        "alone": alone.stack.framework.label if alone is not None else None,
    }


def fleet_json(plan: FleetPlan, plans: list[dict[str, str]], affinity: list[str | None]) -> dict:
    """The `fleet` field of the plan@1 document."""
    return {
        "status": plan.status,
        "choice": plan.choice,
        "groups": [group_json(plan, g) for g in plan.groups],
        "stacks": [{"index": i, "groups": [g.name for g in s.groups], "status": s.resolution.status,
                    "stack": s.stack.to_json(), "request": s.resolution.request.to_json(),
                    "findings": [f.to_json() for f in s.resolution.findings], "plans": plans[i],
                    "node_affinity": affinity[i]}
                   for i, s in enumerate(plan.stacks)],
        "excluded": [{"group": e.group.name, "members": [m.name for m in e.group.members], "reason": e.reason}
                     for e in plan.excluded],
    }


# -- Kubernetes ----------------------------------------------------------------------------------------------
def node_affinity(stack: FleetStack) -> str | None:
    """A pod spec's `affinity` that selects exactly the nodes of this stack's groups: one nodeSelectorTerm per
    group (terms are ORed, the expressions of a term ANDed), from the labels the group's nodes carry. None when a
    group was not read from Kubernetes nodes."""
    # lazy: start-up (PyYAML ~10 ms)
    import yaml

    terms = []
    for g in stack.groups:
        if any(m.labels is None for m in g.members):
            return None
        terms.append({"matchExpressions": group_expressions(g)})
    doc = {"affinity": {"nodeAffinity": {"requiredDuringSchedulingIgnoredDuringExecution": {
        "nodeSelectorTerms": terms}}}}
    header = (f"# {stack.stack.summary}\n# groups: {', '.join(g.name for g in stack.groups)}\n"
              f"# put under a Pod's (or a Job template's) spec\n")
    return header + yaml.safe_dump(doc, sort_keys=False, default_flow_style=False)


def group_expressions(g: Group) -> list[dict]:
    """Label expressions every member of the group matches and that name the group's facts."""
    def common(key: str) -> list[str] | None:
        values = {m.labels.get(key) for m in g.members}
        return sorted(values) if None not in values else None

    expressions = []

    def add(key: str) -> bool:
        values = common(key)
        if values:
            expressions.append({"key": key, "operator": "In", "values": values})
        return bool(values)

    add("kubernetes.io/os")
    add("kubernetes.io/arch")
    if g.cpu:
        expressions.append({"key": GFD + "gpu.product", "operator": "DoesNotExist"})
    else:
        add(GFD + "gpu.product")
        add(GFD + "gpu.compute.major")  # absent on MIG devices: the product names the GPU there
        add(GFD + "gpu.compute.minor")
        if not add(GFD + "cuda.driver-version.full"):
            for key in ("cuda.driver.major", "cuda.driver.minor", "cuda.driver.rev"):
                add(GFD + key)
    add("feature.node.kubernetes.io/system-os_release.ID")
    add("feature.node.kubernetes.io/system-os_release.VERSION_ID")
    return expressions
