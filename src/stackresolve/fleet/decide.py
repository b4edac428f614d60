"""The fleet decision: one resolver request over many groups.

A request for several groups carries every group's GPUs (each with its own machine's driver, against which the
resolver checks the GPU's architecture) and the lowest driver of them (which decides the CUDA a stack may use),
so the resolver's answer holds for every machine of those groups at once. Groups of different operating systems
or CPU architectures install different wheels and are decided apart.

For each such partition: the groups that can run the target at all (each resolved once, alone) are first asked
for together; where that one stack is not native on a group that has a native stack alone, the groups are
covered greedily, the most constrained first (the group whose own newest stack is oldest), each stack taking
every further group it still runs natively on. For release ranges (a GPU needs a release at least this new, a
driver allows one at most this new) this gives the fewest stacks."""

from __future__ import annotations

from dataclasses import dataclass, replace

from packaging.version import Version

from stackresolve.fleet.model import Group
from stackresolve.model.enums import GpuSupport, Severity
from stackresolve.model.stack import Resolution, Stack
from stackresolve.model.values import DriverVersion
from stackresolve.request import Request, gpu_from_cc

NO_GPU = "no NVIDIA GPU: pass --allow-cpu to plan the CPU build for it"


@dataclass(frozen=True)
class Exclusion:
    group: Group
    reason: str


@dataclass(frozen=True)
class FleetStack:
    resolution: Resolution  # of the request over all its groups
    groups: tuple[Group, ...]

    @property
    def stack(self) -> Stack:
        return self.resolution.stack

    def support(self, group: Group) -> GpuSupport:
        """How this stack runs on a group's GPUs (the worst of them)."""
        if self.stack.cuda is None:
            return GpuSupport.CPU_ONLY
        ccs = {g.cc for g in group.gpus}
        found = [e.support for e in self.stack.gpus if e.cc in ccs]
        order = (GpuSupport.UNSUPPORTED, GpuSupport.PTX_JIT, GpuSupport.NATIVE)
        return min(found, key=lambda s: order.index(s) if s in order else 0) if found else GpuSupport.NATIVE


@dataclass(frozen=True)
class FleetPlan:
    request: Request  # the target, as asked, before any machine
    groups: tuple[Group, ...]
    stacks: tuple[FleetStack, ...]  # newest first
    excluded: tuple[Exclusion, ...]
    alone: dict  # group name -> the Resolution of that group on its own

    def stack_of(self, group: Group) -> int | None:
        """The index of the stack a group takes; None for an excluded group."""
        return next((i for i, s in enumerate(self.stacks) if group in s.groups), None)

    @property
    def status(self) -> str:
        if not self.stacks:
            return "impossible"
        warned = self.excluded or any(s.resolution.status != "ok" for s in self.stacks)
        return "warning" if warned else "ok"


def group_request(kb, base: Request, groups: list[Group] | tuple[Group, ...]) -> Request:
    """One request over these groups (all of one OS and architecture)."""
    first = groups[0]
    names = ", ".join(g.name for g in groups)
    if first.cpu:
        return replace(base, os=first.os, arch=first.arch, gpus=(), driver=None, cpu_only=True,
                       assumptions=(f"fleet: the CPU build for {names}",))
    many = len(groups) > 1
    gpus = []
    for g in groups:
        for fact in g.gpus:
            target = gpu_from_cc(kb, fact.cc, fact.model or fact.name, f"fleet group {g.name}")
            gpus.append(replace(target, driver=g.driver) if many else target)
    gpus = sorted(dict.fromkeys(gpus), key=lambda t: t.capability)
    drivers = [g.driver for g in groups if g.driver]
    driver = min(drivers, key=DriverVersion.parse) if drivers else None
    why = f"fleet: one stack for {names}" + (f" (the lowest driver of them: {driver})" if many and driver else "")
    return replace(base, os=first.os, arch=first.arch, gpus=tuple(gpus), driver=driver, cpu_only=False,
                   apple_gpu=None, assumptions=(why,))


def plan_fleet(kb, base: Request, groups: list[Group], allow_cpu: bool = False) -> FleetPlan:
    from stackresolve.resolve import resolve

    excluded: list[Exclusion] = []
    alone: dict[str, Resolution] = {}
    runnable: list[Group] = []
    for g in groups:
        if g.cpu and not allow_cpu:
            excluded.append(Exclusion(g, NO_GPU))
            continue
        resolution = resolve(kb, group_request(kb, base, [g]), with_alternatives=False)
        if resolution.stack is None:
            excluded.append(Exclusion(g, conflict_reason(resolution)))
            continue
        alone[g.name] = resolution
        runnable.append(g)

    partitions: dict[tuple, list[Group]] = {}
    for g in runnable:
        partitions.setdefault((g.os, g.arch, g.cpu), []).append(g)
    stacks: list[FleetStack] = []
    for part in partitions.values():
        stacks += cover(kb, base, part, alone)
    stacks.sort(key=lambda s: stack_key(s.stack), reverse=True)
    return FleetPlan(base, tuple(groups), tuple(stacks), tuple(excluded), alone)


def cover(kb, base: Request, groups: list[Group], alone: dict[str, Resolution]) -> list[FleetStack]:
    from stackresolve.resolve import resolve

    if len(groups) > 1:
        together = resolve(kb, group_request(kb, base, groups), with_alternatives=False)
        if together.stack is not None and keeps_native(together.stack, groups, alone):
            return [FleetStack(together, tuple(groups))]
    clusters = promote(kb, base, greedy_cover(kb, base, groups, alone), alone)
    return [FleetStack(alone[taken[0].name] if len(taken) == 1 else
                       resolve(kb, group_request(kb, base, taken), with_alternatives=False), tuple(taken))
            for taken, _ in clusters]


def fits(kb, base: Request, groups: list[Group], alone: dict[str, Resolution]) -> Stack | None:
    """The stack one request over these groups gets, when it is native wherever a group alone is native."""
    from stackresolve.resolve import resolve_stack

    if len(groups) == 1:
        return alone[groups[0].name].stack
    stack = resolve_stack(kb, group_request(kb, base, groups))
    return stack if stack is not None and keeps_native(stack, groups, alone) else None


def greedy_cover(kb, base: Request, groups: list[Group], alone: dict[str, Resolution]) -> list[tuple[list, Stack]]:
    """The most constrained group first (its own newest stack is the oldest), each stack taking every further
    group it still runs natively on: for release ranges, the fewest stacks."""
    remaining = sorted(groups, key=lambda g: stack_key(alone[g.name].stack))
    clusters = []
    while remaining:
        taken = [remaining.pop(0)]
        stack = alone[taken[0].name].stack
        for g in list(remaining):
            trial = fits(kb, base, taken + [g], alone)
            if trial is not None:
                taken.append(g)
                remaining.remove(g)
                stack = trial
        clusters.append((taken, stack))
    return clusters


def promote(kb, base: Request, clusters: list[tuple[list, Stack]],
            alone: dict[str, Resolution]) -> list[tuple[list, Stack]]:
    """Each group moves to the newest stack of the cover that runs natively on it without getting older itself,
    so no group keeps an old stack that a newer one of the same cover serves; a stack left without groups goes."""
    clusters = sorted(clusters, key=lambda c: stack_key(c[1]), reverse=True)
    for i in range(len(clusters)):
        taken, stack = clusters[i]
        for j in range(i + 1, len(clusters)):
            for g in list(clusters[j][0]):
                trial = fits(kb, base, taken + [g], alone)
                if trial is not None and stack_key(trial) >= stack_key(stack):
                    taken.append(g)
                    clusters[j][0].remove(g)
                    stack = trial
        clusters[i] = (taken, stack)
    return [(taken, stack) for taken, stack in clusters if taken]


def keeps_native(stack: Stack, groups: list[Group], alone: dict[str, Resolution]) -> bool:
    """A shared stack must run natively on every group that has a native stack of its own."""
    if stack.cuda is None:
        return True
    for g in groups:
        own = alone[g.name].stack
        own_native = own.cuda is not None and all(e.support is GpuSupport.NATIVE for e in own.gpus)
        ccs = {f.cc for f in g.gpus}
        if own_native and any(e.support is not GpuSupport.NATIVE for e in stack.gpus if e.cc in ccs):
            return False
    return True


def stack_key(stack: Stack) -> tuple:
    """Newer framework release first, then the newer CUDA."""
    cuda = Version(stack.cuda.version.replace(".x", "")) if stack.cuda else Version("0")
    return (Version(Version(stack.framework.upstream_version).public), cuda)


def conflict_reason(resolution: Resolution) -> str:
    """Why a group cannot run the target: the resolver's conflict, without the line that restates the request."""
    errors = [f for f in resolution.findings if f.severity is Severity.ERROR]
    named = [f for f in errors if f.source != "request"] or errors
    return "; ".join(f.message for f in named) or "no consistent stack"
