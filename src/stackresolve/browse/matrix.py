"""`stackresolve matrix`: every release line of a framework (TensorFlow, PyTorch, JAX) on one GPU and OS,
resolved."""

from __future__ import annotations

import json
from functools import lru_cache

from packaging.specifiers import SpecifierSet

from stackresolve.knowledge.base import KnowledgeBase
from stackresolve.knowledge.rules import arch_predates, toolkit_predates
from stackresolve.model.enums import Framework, Os, Severity, Vendor
from stackresolve.model.record import record, replace
from stackresolve.model.values import ComputeCapability
from stackresolve.request.build import Request
from stackresolve.resolve import resolve
from stackresolve.resolve.candidates import as_version, support_on
from stackresolve.resolve.driver import compute_capability_driver_floor, wsl_driver_floor


@record
class Cell:
    line: str
    os: str
    status: str  # native | ptx-jit | unknown | cpu-only | impossible
    tf: str | None
    package: str | None
    python: str | None
    cuda: str | None
    cudnn: str | None
    driver_min: str | None
    reason: str
    vendor: str = "stock"
    framework: str = "tensorflow"
    variant: str | None = None  # PyTorch's CUDA variant; JAX's extra
    index: str | None = None  # the index it installs from, where not the default one

    def to_json(self) -> dict:
        doc = dict(self.__dict__)
        doc["version"] = self.tf
        if self.framework != Framework.TENSORFLOW:
            doc["tf"] = None  # "tf" names TensorFlow's version only; "version" is every framework's
        return doc


def _interned(kb: KnowledgeBase, value: tuple) -> int:
    """The same number for equal values, for the life of the knowledge base."""
    numbers = kb.memo("matrix-interned", dict)
    return numbers.setdefault(value, len(numbers))


ANY_FLOOR = "no GPU build: every floor is no higher than their minimums"  # a line's lowest minimum, where it has none


def _line_facts(kb: KnowledgeBase, request: Request, line: str, os_name: str) -> tuple:
    """(the line's builds with distinct compiled code, its CUDA toolkits, the cuDNN releases its builds accept,
    the lowest of its GPU builds' driver minimums (None where a build has none, ANY_FLOOR where it has no GPU
    build), the highest driver minimum of its builds and WSL2's floor and the highest major among them (None
    where there is none)) for one OS: what a GPU signature tests."""
    key = ("matrix-line-facts", line, os_name, request.framework, request.arch, request.cpu_only,
           request.apple_gpu is not None)

    def compute() -> tuple:
        # lazy: no start-up gain (already loaded by then); kept beside its use
        from stackresolve.resolve.candidates import cudnn_pool
        from stackresolve.resolve.pool import line_candidates, release_lines
        from stackresolve.resolve.provider import framework_dependencies

        # Without GPUs: the requirements a build brings that the signature reads do not depend on them.
        anonymous = replace(_cell_request(request, line, os_name), gpus=())
        release_line = next(l for l in release_lines(kb, request.framework) if l.version == line)
        builds = line_candidates(kb, anonymous, release_line)
        # One representative per distinct value of what the signature tests: support_on reads a build's compiled
        # code and cc_min; toolkit_predates and the arch_min requirements read a toolkit's or cuDNN's bounds.
        codes = {((c.arch.sass, c.arch.ptx) if c.arch else None, c.cc_min): c for c in builds}
        toolkits = {}
        for cuda in sorted({c.cuda for c in builds if c.cuda}):
            if (t := kb.toolkit(cuda)) is not None:
                toolkits.setdefault((t.min_cc, t.max_cc), t)
        cudnn: dict = {}
        cudnn_keys: set = set()  # the cuDNN requirements' keys: equal keys accept the same releases
        minimums: list = []
        for c in builds:
            if not c.gpu:
                continue
            deps = framework_dependencies(kb, anonymous, c)
            for r in deps:
                if r.name == "cudnn" and r.key not in cudnn_keys:
                    cudnn_keys.add(r.key)
                    cudnn.update(((d.release.min_cc, d.release.max_cc), d.release) for d in cudnn_pool(kb, r.cuda)
                                 if r.is_satisfied_by(d))
            driver = [r.minimum for r in deps if r.name == "driver" and r.minimum is not None]
            minimums.append(min(driver) if driver else None)
        wsl = wsl_driver_floor(kb, anonymous)
        # The signatures ask "is a floor no higher than every build's minimum" and "is every minimum within a
        # branch": the lowest and the highest answer both for every GPU.
        lowest = ANY_FLOOR if not minimums else None if None in minimums else min(minimums)
        stated = [m for m in minimums if m is not None] + ([as_version(wsl.driver)] if wsl else [])
        highest = (max(stated), max(m.release[0] for m in stated)) if stated else (None, None)
        return tuple(codes.values()), tuple(toolkits.values()), tuple(cudnn.values()), lowest, highest

    return kb.memo(key, compute)


def _cudnn_admitted(kb: KnowledgeBase, cudnn: str | None) -> tuple:
    """The lowest compute capabilities (arch_min) of the cuDNN releases the request's own requirements admit
    (--cudnn): the request fails at once when none of them supports the GPU."""
    def compute() -> tuple:
        # lazy: no start-up gain (already loaded by then); kept beside its use
        from stackresolve.resolve.candidates import cudnn_pool
        from stackresolve.resolve.requirements import CudnnAsked

        asked = CudnnAsked(cudnn) if cudnn else None
        return tuple({c.release.min_cc for c in cudnn_pool(kb, None) if asked is None or asked.is_satisfied_by(c)})

    return kb.memo(("matrix-cudnn-admitted", cudnn), compute)


def _gpu_facts(kb: KnowledgeBase, cc: ComputeCapability, driver_os: Os, cudnn: str | None) -> tuple:
    """What a GPU signature reads of a compute capability whatever the line: (the capability, its architecture's
    support record, its driver floor and that floor as a version, whether any toolkit and any cuDNN the request
    admits supports it at all, the names its messages add)."""
    table = kb.memo("matrix-gpu-facts", dict)
    found = table.get((cc, driver_os, cudnn))
    if found is None:
        capability = cc
        support = kb.arch_support_for(cc)
        floor = compute_capability_driver_floor(kb, cc, driver_os)
        names = ((support.architecture, support.source) if support else (),
                 (floor[1].replace(f"compute capability {cc}", ""), floor[2]) if floor else ())
        # the request's own requirements, tested on the whole pool before a build is chosen: only whether none
        # passes counts
        supported = (any(t.min_cc <= capability for t in kb.toolkits),
                     any(low <= capability for low in _cudnn_admitted(kb, cudnn)))
        found = table[cc, driver_os, cudnn] = (capability, support, floor, as_version(floor[0]) if floor else None,
                                               supported, names)
    return found


def _gpu_signature(facts: tuple, gpu_facts: tuple, own_driver: str | None, floor_free: bool,
                   branch_binds: bool) -> tuple[tuple, tuple]:
    """What a resolution of one release line on one OS can depend on about a GPU: (what the resolver's decisions
    read, what its search reads). GPUs with equal decisions get equal answers, so the matrix resolves each once;
    GPUs with equal searches get the same build, Python, CUDA and cuDNN, so the search runs once for them.

    The decisions read the GPU only through predicates on its compute capability: how each build of the line runs
    on it (support_on: which builds are tried first and which have code for it), which of the line's CUDA toolkits
    and the cuDNN releases its builds accept still support it or predate it, whether any toolkit and any cuDNN the
    request admits supports it at all, its architecture's last driver branch where that can bind, and the GPUs'
    driver floor (compute_capability_driver_floor) where it can raise a minimum (see _line_signature). The names
    (the architecture, the floor's toolkit and source) reach only an impossible cell's message.

    The search reads less: whether a cuDNN predates the GPU is only a warning of the stack built (gpu_findings),
    and where floor_free every driver requirement accepts the driver candidate whatever the floor, which then
    only raises the stack's driver minimum (resolve/driver.decide_driver, which a shared search runs again for
    each request)."""
    builds, toolkits, cudnn, lowest, _ = facts
    cc, support, floor, floor_version, supported, _ = gpu_facts
    floor_value = floor[0] if floor else None
    codes = tuple([support_on(c, cc).value for c in builds])  # texts: they hash in C (an enum's hash is Python)
    toolkit_tests = tuple([(t.min_cc <= cc, toolkit_predates(t, cc)) for t in toolkits])
    # per release, in the line's order: which releases pass, not only whether some do (three or more arch_min
    # thresholds in a line would otherwise read alike)
    cudnn_tests = tuple([(r.min_cc <= cc, arch_predates(r.max_cc, cc)) for r in cudnn])
    branch = (support.last_branch, support.last_version) if branch_binds else bool(support)
    search = (codes, toolkit_tests, tuple([supports for supports, _ in cudnn_tests]), supported,
              None if floor_free else floor_value, own_driver, branch)
    if floor_free and floor is not None and (lowest is ANY_FLOOR or lowest is not None and floor_version <= lowest):
        floor_value = "no higher than every build's minimum"
    return (codes, toolkit_tests, cudnn_tests, supported, floor_value, own_driver, branch), search


def _branch_binds(request: Request, support, highest, top_major) -> bool:
    """Whether a GPU's last driver branch can change the answer: it is read only where no driver is named
    (LastBranch, and the newest driver the provider plans for), and only a minimum above the branch's last driver
    can meet it. The planned driver is the highest of the minimums (the builds', the GPUs' floor, WSL2's), of
    which `highest` is the highest and `top_major` the highest major (None where there is none)."""
    if request.driver or support is None or not support.last_branch or highest is None:
        return False
    branch, last = int(support.last_branch), as_version(support.last_version)
    return not (top_major <= branch and highest <= last)


def asked_of(kb: KnowledgeBase, request: Request) -> int:
    """What a cell's answer depends on in the request, besides the line, OS and GPU signatures."""
    return _interned(kb, (request.framework, request.cpu_only, request.driver, request.python, request.arch,
                          request.vendor, request.cudnn, request.apple_gpu, request.container, request.cuda_line,
                          request.accelerators))


def line_signature(kb: KnowledgeBase, request: Request, line: str, os_name: str) -> tuple[int, int, int]:
    """The request's GPUs' signatures for one line and OS: (what the decisions read, what the messages name, what
    the search reads), as small numbers, one per distinct signature (a cell's memo key is hashed in every cell).
    PyTorch and JAX lines: the compute capabilities themselves."""
    signatures = request_signatures(kb, request)
    found = signatures.get((line, os_name))
    if found is None:
        found = signatures[line, os_name] = _line_signature(kb, request, line, os_name)
    return found


def _line_signature(kb: KnowledgeBase, request: Request, line: str, os_name: str) -> tuple[int, int, int]:
    if request.framework is not Framework.TENSORFLOW:
        decisions = _interned(kb, tuple([g.cc for g in request.gpus]))
        return decisions, _interned(kb, ()), decisions
    facts = _line_facts(kb, request, line, os_name)
    gpus = [_gpu_facts(kb, g.cc, _driver_os(os_name), request.cudnn) for g in request.gpus]
    highest, top_major = facts[4]
    for floor in [g[3] for g in gpus if g[3] is not None]:  # the GPUs' floors are minimums too
        highest = floor if highest is None else max(highest, floor)
        top_major = floor.release[0] if top_major is None else max(top_major, floor.release[0])
    binds = [_branch_binds(request, g[1], highest, top_major) for g in gpus]
    own_drivers = any(g.driver is not None for g in request.gpus)
    # With no driver named or installed and no last branch that can bind, the driver candidate is the highest
    # minimum and every driver requirement accepts it: a GPUs' floor no higher than every build's own minimum is
    # then read only by the driver decision (resolve/driver.py), where it does not raise.
    floor_free = request.driver is None and not any(binds) and not own_drivers
    signatures = [_gpu_signature(facts, f, g.driver, floor_free, b) for g, f, b in zip(request.gpus, gpus, binds)]
    decisions = tuple([decided for decided, _ in signatures])
    searches = tuple([searched for _, searched in signatures])
    shared = [i for i, g in enumerate(request.gpus) if g.driver is None]
    newest = max(shared, key=lambda i: gpus[i][0]) if len(shared) > 1 else shared[0] if shared else None
    # The names are in the driver requirements' words only, and a conflict cites those only where one can fail:
    # with a driver named or installed, or a last branch that binds (otherwise the driver candidate meets them all).
    names = tuple([f[5] for f in gpus]) if request.driver or own_drivers or any(binds) else ()
    return _interned(kb, (newest, decisions)), _interned(kb, names), _interned(kb, ("search", newest, searches))


@lru_cache(maxsize=8)
def _driver_os(os_name: str) -> Os:
    return Os(os_name).driver_os


def request_signatures(kb: KnowledgeBase, request: Request) -> dict:
    """{(line, os): line_signature} for the request's GPUs, filled as the cells are resolved: looked up once per
    matrix, as a cell's memo key is."""
    key = ("matrix-signatures", request.framework, tuple([(g.cc, g.driver) for g in request.gpus]), request.arch,
           request.cpu_only, request.apple_gpu is not None, request.driver, request.cudnn)
    return kb.memo(key, dict)


def _cell_request(request: Request, line: str, os_name: str) -> Request:
    """The request of one cell: the line on the OS, for anonymous GPUs (every model of one kind shares it)."""
    return replace(request, os=Os(os_name), version=line, spec=_line_spec(line), gpus=_anonymous(request.gpus),
                   cpu_only=request.cpu_only or os_name == "macos", assumptions=())


@lru_cache(maxsize=256)
def _line_spec(line: str) -> SpecifierSet:
    return SpecifierSet(f"=={line}.*")


@lru_cache(maxsize=256)
def _anonymous(gpus: tuple) -> tuple:
    return tuple(replace(g, name="", source="") for g in gpus)


def resolve_cell(kb: KnowledgeBase, request: Request, line: str, os_name: str, asked: int | None = None,
                 signature: tuple | None = None) -> Cell:
    """`asked` and `signature`, where given, are asked_of(request) and line_signature(request, line, os_name)."""
    # Memoized by the GPUs' signatures: every GPU whose signature is equal shares the answer.
    decisions, names, searched = line_signature(kb, request, line, os_name) if signature is None else signature
    asked = asked_of(kb, request) if asked is None else asked
    key = ("matrix-cell", asked, line, os_name, decisions)
    search = ("matrix-search", asked, line, os_name, searched)
    cells = kb.memo("matrix-cells", dict)
    found = cells.get(key)
    if found is None:
        found = cells[key] = (_resolve_cell(kb, _cell_request(request, line, os_name), line, os_name, search),
                              request.gpus)
        cells[key + (names,)] = found
    if found[0].status == "impossible" and request.gpus:
        # The message names the GPUs' architecture and driver floor, which no decision reads: shared only between
        # GPUs that name the same, then renamed to this one's compute capability.
        named_key = key + (names,)
        found = cells.get(named_key)
        if found is None:
            found = cells[named_key] = (_resolve_cell(kb, _cell_request(request, line, os_name), line, os_name,
                                                      search), request.gpus)
        cell, first = found
        return kb.memo(named_key + tuple(g.cc for g in request.gpus), lambda: _named(cell, request.gpus, first))
    return found[0]


def _named(cell: Cell, gpus: tuple, first: tuple) -> Cell:
    reason = cell.reason
    for mine, theirs in zip(gpus, first):
        reason = reason.replace(f"compute capability {theirs.cc}", f"compute capability {mine.cc}")
    return replace(cell, reason=reason)


def _resolve_cell(kb: KnowledgeBase, cell_request: Request, line: str, os_name: str, search: tuple) -> Cell:
    resolution = resolve(kb, cell_request, with_alternatives=False, same_search=search)
    stack = resolution.stack
    if stack is None:
        errors = [f.message for f in resolution.findings if f.severity is Severity.ERROR]
        return Cell(line, os_name, "impossible", None, None, None, None, None, None,
                    errors[0] if errors else "no consistent stack", framework=cell_request.framework.value)
    warnings = [f.code for f in resolution.findings if f.severity is Severity.WARNING]
    fw = stack.framework
    return Cell(
        line, os_name, stack.gpu.support.value, stack.tf_version, fw.distribution or fw.container,
        f"{stack.python.min}-{stack.python.max}",
        stack.cuda.version if stack.cuda else None,
        stack.cudnn.version if stack.cudnn else None,
        stack.driver.minimum if stack.driver else None,
        ", ".join(warnings),
        fw.vendor.value,
        fw.name,
        fw.variant or (fw.extras[0] if fw.extras and fw.framework is Framework.JAX else None),
        fw.index_url,
    )


def build_matrix(kb: KnowledgeBase, request: Request, systems: list[str]) -> list[Cell]:
    """One cell per line and OS; where NVIDIA's TF 1.15 build is chosen, the stock wheel's cell follows it. The
    rows depend on the GPUs only through their compute capability and own driver (each cell is resolved for
    anonymous GPUs and names only the compute capability), so GPU models of one compute capability share them."""
    asked = asked_of(kb, request)
    key = ("matrix-rows", asked, tuple(systems), tuple([(g.cc, g.driver) for g in request.gpus]))
    return list(kb.memo(key, lambda: tuple(_build_matrix(kb, request, systems, asked))))


def _build_matrix(kb: KnowledgeBase, request: Request, systems: list[str], asked: int) -> list[Cell]:
    cells = []
    # lazy: no start-up gain (already loaded by then); kept beside its use
    from stackresolve.resolve.pool import release_lines

    nvidia = Vendor.NVIDIA.value
    signatures = request_signatures(kb, request)
    for line in [l.version for l in release_lines(kb, request.framework)]:
        for os_name in systems:
            signature = signatures.get((line, os_name)) or line_signature(kb, request, line, os_name)
            cell = resolve_cell(kb, request, line, os_name, asked, signature)
            cells.append(cell)
            if cell.vendor == nvidia and request.vendor is None:
                cells.append(resolve_cell(kb, replace(request, vendor=Vendor.STOCK), line, os_name))
    return cells


def _target(request: Request) -> str:
    if request.accelerators:
        return ", ".join(a.label for a in request.accelerators)
    if request.cpu_only:
        return "CPU only"
    if not request.gpus:
        return "any NVIDIA GPU"
    return ", ".join(f"{g.name or 'GPU'} (compute capability {g.cc})" for g in request.gpus)


def render_text(cells: list[Cell], request: Request) -> str:
    out = [f"{request.framework.display} release lines on {_target(request)}"
           + (f", driver {request.driver}" if request.driver else ""), ""]
    header = (f"{'line':<6} {'os':<8} {'runs':<11} {request.framework.value:<28} {'python':<10} {'cuda':<6} "
              f"{'cudnn':<8} driver")
    out += [header, "-" * len(header)]
    for c in cells:
        if c.status == "impossible":
            out.append(f"{c.line:<6} {c.os:<8} {'no':<11} {c.reason}")
            continue
        name = f"{c.package}=={c.tf}" + (f" {c.variant}" if c.variant else "")
        out.append(f"{c.line:<6} {c.os:<8} {c.status:<11} {name:<28} "
                   f"{c.python or '':<10} {c.cuda or '-':<6} {c.cudnn or '-':<8} "
                   f"{('>= ' + c.driver_min) if c.driver_min else '-'}"
                   + (f"  ({c.reason})" if c.reason else "")
                   + (f"  [{c.index}]" if c.index else ""))
    return "\n".join(out) + "\n"


def render_json(cells: list[Cell], request: Request) -> str:
    return json.dumps({"schema": "stackresolve/matrix@1", "request": request.to_json(),
                       "rows": [c.to_json() for c in cells]}, indent=2) + "\n"
