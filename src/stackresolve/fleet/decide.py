"""The fleet decision: one resolver request over many groups.

A request for several groups carries every group's GPUs (each with its own machine's driver, against which the
resolver checks the GPU's architecture) and the lowest driver of them (which decides the CUDA a stack may use),
so the resolver's answer holds for every machine of those groups at once. Groups of different operating systems
or CPU architectures install different wheels and are decided apart.

For each such partition: the groups that can run the target at all (each resolved once, alone) are first asked
for together; where that one stack is not native on a group that has a native stack alone, the groups are
covered greedily, the most constrained first (the group whose own newest stack is oldest), each stack taking
every further group it still runs natively on. For release ranges (a GPU needs a release at least this new, a
driver allows one at most this new) this gives the fewest stacks. With --fleet-stacks newest each group takes the
stack it gets alone instead, groups with the same one sharing it.

The cover asks about sets of groups by their Profile (per compute capability the lowest driver, and the lowest
driver of all): what the resolver reads of them. A group that adds nothing new to a set's profile is decided
without asking, and each profile is asked once, so the work grows with the groups (each resolved alone once, and
a bounded request per trial), not with their square; every resolution checks the command's deadline first. The
answer's stacks are then resolved once more over their groups' own GPUs, as one request, for the plans."""

from __future__ import annotations

from dataclasses import replace
from functools import cached_property

from packaging.version import Version

from stackresolve.fleet.inventory import Group
from stackresolve.knowledge.rules import driver_order
from stackresolve.model.enums import GpuSupport, Severity
from stackresolve.model.record import record
from stackresolve.model.stack import Resolution, Stack
from stackresolve.request.build import Request, gpu_from_cc

NO_GPU = "no NVIDIA GPU: pass --allow-cpu to plan the CPU build for it"


@record
class Exclusion:
    group: Group
    reason: str


@record
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
        found = [self.support_by_cc[g.cc] for g in group.gpus if g.cc in self.support_by_cc]
        return min(found, key=support_rank) if found else GpuSupport.NATIVE

    @cached_property
    def support_by_cc(self) -> dict[str, GpuSupport]:
        """The worst support of the stack's GPU entries per compute capability (one pass over a fleet's GPUs, not
        one per group)."""
        worst: dict[str, GpuSupport] = {}
        for e in self.stack.gpus:
            held = worst.get(e.cc)
            worst[e.cc] = e.support if held is None else min(held, e.support, key=support_rank)
        return worst


def support_rank(support: GpuSupport) -> int:
    order = (GpuSupport.UNSUPPORTED, GpuSupport.PTX_JIT, GpuSupport.NATIVE)
    return order.index(support) if support in order else 0


@record
class FleetPlan:
    request: Request  # the target, as asked, before any machine
    groups: tuple[Group, ...]
    stacks: tuple[FleetStack, ...]  # newest first
    excluded: tuple[Exclusion, ...]
    alone: dict  # group name -> the Resolution of that group on its own
    choice: str = "fewest"  # --fleet-stacks: the fewest stacks, or each group its newest

    def stack_of(self, group: Group) -> int | None:
        """The index of the stack a group takes; None for an excluded group."""
        return self.stack_index.get(group.name)

    @cached_property
    def stack_index(self) -> dict[str, int]:
        return {g.name: i for i, s in enumerate(self.stacks) for g in s.groups}

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
    driver = min(drivers, key=driver_order) if drivers else None
    why = f"fleet: one stack for {names}" + (f" (the lowest driver of them: {driver})" if many and driver else "")
    return replace(base, os=first.os, arch=first.arch, gpus=tuple(gpus), driver=driver, cpu_only=False,
                   apple_gpu=None, assumptions=(why,))


FEWEST, NEWEST = "fewest", "newest"  # --fleet-stacks: the fewest stacks (the default), or each group its newest


class FleetTimeout(Exception):
    """The decision ran past the command's deadline: how far it got."""

    def __init__(self, decided: int, total: int):
        super().__init__(decided, total)
        self.decided, self.total = decided, total


def plan_fleet(kb, base: Request, groups: list[Group], allow_cpu: bool = False, choice: str = FEWEST,
               deadline=None) -> FleetPlan:
    """`deadline` (anything with .expired()) is checked before every resolution: FleetTimeout past it."""
    # lazy: start-up (only this path needs resolve)
    from stackresolve.resolve import resolve

    decider = Decider(kb, base, deadline, len(groups))
    excluded: list[Exclusion] = []
    alone: dict[str, Resolution] = {}
    runnable: list[Group] = []
    for g in groups:
        if g.vendor != "nvidia":
            excluded.append(Exclusion(g, other_vendor_reason(g)))
            continue
        if g.cpu and not allow_cpu:
            excluded.append(Exclusion(g, NO_GPU))
            continue
        decider.tick()
        resolution = resolve(kb, group_request(kb, base, [g]), with_alternatives=False)
        decider.decided += 1
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
        stacks += (newest_each(decider, part, alone) if choice == NEWEST else cover(decider, part, alone))
    stacks.sort(key=lambda s: stack_key(s.stack), reverse=True)
    return FleetPlan(base, tuple(groups), tuple(stacks), tuple(excluded), alone, choice)


def other_vendor_reason(group: Group) -> str:
    """Why an AMD or Intel group is left out of the fleet's CUDA stacks, and how to plan it on its own."""
    gpu = next(f for f in group.gpus if f.vendor != "nvidia")
    if gpu.vendor == "amd":
        how = f"`stackresolve plan --torch latest --gpu-gfx {gpu.gfx or 'gfxNNNN'}`"
        return (f"AMD GPU ({gpu.gfx or 'gfx target unknown'}): not planned here (the fleet plans CUDA stacks); "
                f"plan its ROCm stack with {how}")
    name = gpu.model or gpu.name or "Intel GPU"
    return (f"Intel GPU ({gpu.family or 'device family unknown'}): not planned here (the fleet plans CUDA stacks); "
            f"plan its XPU stack with `stackresolve plan --torch latest --gpu \"{name}\"`")


class Profile:
    """What one request over a set of groups of one partition reads of them, kept small whatever their number: per
    compute capability the lowest driver among its machines (a GPU's own driver is only held against its
    architecture's first driver, a floor), whether some machine of it has no known driver, the lowest driver of
    all (which decides the CUDA), and the compute capabilities where a group runs natively on its own (a shared
    stack must stay native there). Two sets with equal profiles get the same stack."""

    __slots__ = ("cpu", "lowest", "unknown", "native")

    def __init__(self, cpu: bool, lowest: dict, unknown: frozenset, native: frozenset):
        self.cpu, self.lowest, self.unknown, self.native = cpu, lowest, unknown, native

    @classmethod
    def of(cls, group: Group, alone: dict[str, Resolution]) -> "Profile":
        return cls(group.cpu, {}, frozenset(), frozenset()).plus(group, alone)

    def plus(self, group: Group, alone: dict[str, Resolution]) -> "Profile":
        lowest = dict(self.lowest)
        unknown = set(self.unknown)
        for fact in group.gpus:
            if group.driver is None:
                unknown.add(fact.cc)
                continue
            held = lowest.get(fact.cc)
            if held is None or driver_order(group.driver) < driver_order(held):
                lowest[fact.cc] = group.driver
        native = self.native | (frozenset(f.cc for f in group.gpus) if native_alone(alone[group.name].stack)
                                else frozenset())
        return Profile(self.cpu, lowest, frozenset(unknown), native)

    @property
    def request_key(self) -> tuple:
        return (self.cpu, tuple(sorted(self.lowest.items())), tuple(sorted(self.unknown)))


class Decider:
    """Resolutions of profiles, each asked of the resolver once, within the command's deadline."""

    def __init__(self, kb, base: Request, deadline, total: int):
        self.kb, self.base, self.deadline, self.total = kb, base, deadline, total
        self.decided = 0
        self.stacks: dict[tuple, Stack | None] = {}

    def tick(self) -> None:
        if self.deadline is not None and self.deadline.expired():
            raise FleetTimeout(self.decided, self.total)

    def stack(self, first: Group, profile: Profile) -> Stack | None:
        """The stack one request over the groups of this profile gets (`first`: one of them, for OS and
        architecture), when it stays native wherever one of them is native alone; else None."""
        # lazy: start-up (only this path needs resolve)
        from stackresolve.resolve import resolve_stack

        key = (first.os, first.arch, profile.request_key)
        if key not in self.stacks:
            self.tick()
            self.stacks[key] = resolve_stack(self.kb, profile_request(self.kb, self.base, first, profile))
        stack = self.stacks[key]
        return stack if stack is not None and native_on(stack, profile.native) else None

    def resolution(self, groups: list[Group], alone: dict[str, Resolution]) -> Resolution:
        """The full resolution of the request over these groups (every machine's GPUs named), for the answer."""
        # lazy: start-up (only this path needs resolve)
        from stackresolve.resolve import resolve

        if len(groups) == 1:
            return alone[groups[0].name]
        self.tick()
        return resolve(self.kb, group_request(self.kb, self.base, groups), with_alternatives=False)


def profile_request(kb, base: Request, first: Group, profile: Profile) -> Request:
    """The request over a profile: one GPU per compute capability and lowest driver (and one without a driver
    where some machine's is unknown), the lowest driver of all for the stack: what group_request asks of the groups
    themselves, less the GPUs that repeat a fact."""
    gpus = [replace(gpu_from_cc(kb, cc, "", "fleet"), driver=driver) for cc, driver in profile.lowest.items()]
    gpus += [gpu_from_cc(kb, cc, "", "fleet") for cc in profile.unknown]
    gpus.sort(key=lambda t: t.capability)
    driver = min(profile.lowest.values(), key=driver_order) if profile.lowest else None
    return replace(base, os=first.os, arch=first.arch, gpus=tuple(gpus), driver=driver, cpu_only=False,
                   apple_gpu=None, assumptions=("fleet",))


def cover(decider: Decider, groups: list[Group], alone: dict[str, Resolution]) -> list[FleetStack]:
    if len(groups) > 1 and not groups[0].cpu:
        profile = Profile.of(groups[0], alone)
        for g in groups[1:]:
            profile = profile.plus(g, alone)
        if decider.stack(groups[0], profile) is not None:
            return [FleetStack(decider.resolution(groups, alone), tuple(groups))]
    elif len(groups) > 1:  # CPU groups of one OS and architecture: one request, one CPU build
        return [FleetStack(decider.resolution(groups, alone), tuple(groups))]
    clusters = promote(decider, greedy_cover(decider, groups, alone), alone)
    return [FleetStack(decider.resolution(taken, alone), tuple(taken)) for taken, _, _ in clusters]


def greedy_cover(decider: Decider, groups: list[Group], alone: dict[str, Resolution]) -> list:
    """The most constrained group first (its own newest stack is the oldest), each stack taking every further
    group it still runs natively on: for release ranges, the fewest stacks. A trial asks the resolver only for a
    profile not asked before: a group that repeats the cluster's facts costs nothing."""
    remaining = sorted(groups, key=lambda g: stack_key(alone[g.name].stack))
    clusters = []
    while remaining:
        first = remaining.pop(0)
        taken, stack, profile = [first], alone[first.name].stack, Profile.of(first, alone)
        left = []
        for g in remaining:
            trial_profile = profile.plus(g, alone)
            trial = decider.stack(first, trial_profile)
            if trial is not None:
                taken.append(g)
                stack, profile = trial, trial_profile
            else:
                left.append(g)
        remaining = left
        clusters.append((taken, stack, profile))
    return clusters


def promote(decider: Decider, clusters: list, alone: dict[str, Resolution]) -> list:
    """Each group moves to the newest stack of the cover that runs natively on it without getting older itself,
    so no group keeps an old stack that a newer one of the same cover serves; a stack left without groups goes."""
    clusters = sorted(clusters, key=lambda c: stack_key(c[1]), reverse=True)
    for i in range(len(clusters)):
        taken, stack, profile = clusters[i]
        for j in range(i + 1, len(clusters)):
            stay = []
            for g in clusters[j][0]:
                trial_profile = profile.plus(g, alone)
                trial = decider.stack(taken[0], trial_profile)
                if trial is not None and stack_key(trial) >= stack_key(stack):
                    taken.append(g)
                    stack, profile = trial, trial_profile
                else:
                    stay.append(g)
            clusters[j] = (stay, clusters[j][1], clusters[j][2])
        clusters[i] = (taken, stack, profile)
    return [c for c in clusters if c[0]]


def newest_each(decider: Decider, groups: list[Group], alone: dict[str, Resolution]) -> list[FleetStack]:
    """--fleet-stacks newest: every group takes the newest stack it runs alone; groups whose newest stacks are
    the same share it (one request over them gets that stack, as it is in every group's choice)."""
    by_stack: dict[tuple, list[Group]] = {}
    for g in sorted(groups, key=lambda g: stack_key(alone[g.name].stack), reverse=True):
        by_stack.setdefault(stack_identity(alone[g.name].stack), []).append(g)
    stacks = []
    for taken in by_stack.values():
        shared = decider.resolution(taken, alone)
        if shared.stack is not None and stack_identity(shared.stack) == stack_identity(alone[taken[0].name].stack) \
                and keeps_native(shared.stack, taken, alone):
            stacks.append(FleetStack(shared, tuple(taken)))
        else:  # not expected (each group's choice holds this stack); never give a group an older one for it
            stacks += [FleetStack(alone[g.name], (g,)) for g in taken]
    return stacks


def stack_identity(stack: Stack) -> tuple:
    """What makes two stacks the same install: framework build, CUDA, cuDNN, Python."""
    return (stack.framework.label, stack.cuda.release if stack.cuda else None,
            stack.cudnn.version if stack.cudnn else None, stack.python.recommended)


def native_alone(stack: Stack) -> bool:
    return stack.cuda is not None and all(e.support is GpuSupport.NATIVE for e in stack.gpus)


def native_on(stack: Stack, ccs: frozenset) -> bool:
    """The stack runs natively on every GPU of these compute capabilities (a CPU stack: nothing to keep)."""
    if stack.cuda is None:
        return True
    return not any(e.support is not GpuSupport.NATIVE for e in stack.gpus if e.cc in ccs)


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
