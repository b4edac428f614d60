"""Members -> Groups: machines with the same facts (OS, architecture, distribution, GPU models and compute
capabilities, driver) form one group, named after its node pool where every member has the same one."""

from __future__ import annotations

from stackresolve.fleet.inventory import FleetInputError, Group, Member


def group_members(members: list[Member]) -> list[Group]:
    if not members:
        raise FleetInputError(["the fleet names no machine: give a kubectl nodes document, detect reports or an "
                               "inventory with at least one [[machine]]"])
    seen: dict[str, Member] = {}
    problems = []
    for m in members:
        other = seen.setdefault(m.name, m)
        if other is not m:
            problems.append(f"{m.origin}: machine {m.name!r} is also in {other.origin}; each machine once")
    if problems:
        raise FleetInputError(problems)
    by_facts: dict[tuple, list[Member]] = {}
    for m in members:
        by_facts.setdefault(m.facts, []).append(m)
    groups = [Group(group_name(ms), tuple(ms)) for ms in by_facts.values()]
    names: dict[str, int] = {}
    unique = []
    for g in groups:  # two groups of one pool (a driver upgrade half done) get numbered names
        names[g.name] = names.get(g.name, 0) + 1
        unique.append(g if names[g.name] == 1 else Group(f"{g.name}#{names[g.name]}", g.members))
    return unique


def group_name(members: list[Member]) -> str:
    pools = {m.pool for m in members}
    if len(pools) == 1 and None not in pools:
        return pools.pop()
    first = members[0]
    gpu = "+".join(g.model or g.name or g.gfx or f"cc{g.cc}" for g in first.gpus).replace(" ", "-") or "cpu"
    driver = f"/{first.driver}" if first.driver else ""
    return f"{gpu}{driver}"
