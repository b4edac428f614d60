"""The page's data: the answers of `stackresolve matrix` for every (framework, OS, driver, compute capability) the
page offers, each yes with its plans and the source of every fact, deduplicated so the file stays small.

The page only looks answers up; every answer here comes from matrix.build_matrix (the rows of `matrix --json`)
and, for the plans, from resolve() and the plan emitters (what `plan --format pip|conda|dockerfile` prints).

Drivers: the resolver compares an installed driver with the minimums its requirements state, and picks other
builds for other drivers, so the page stores an answer per driver it lists rather than a minimum per row. It lists
"no driver given" and the driver minimums the answers name: the set starts from the minimums of the answers
without a driver and grows with those of the answers at each driver listed (over every framework), until no answer
names a new one. For another driver the page shows the answer of the newest listed driver below it and says so
(a minimum only a newer build states can change an answer in between: not every threshold is listed).

Encoding: every text once, in `strings`; a row is a list of string numbers (ROW_FIELDS, then the plan's number);
a row list (one answer) a list of row numbers; `answers[framework][os][driver]` one row list per compute
capability, in `ccs` order."""

from __future__ import annotations

from dataclasses import dataclass, field

from stackresolve.knowledge.base import KnowledgeBase
from stackresolve.model.enums import Framework, Os
from stackresolve.model.values import ComputeCapability, DriverVersion

FORMAT = "stackresolve/site-data@1"  # the data's layout; the page reads this one
# the fields of a row, as `matrix --json` names them ("version" is every framework's version)
ROW_FIELDS = ("line", "os", "status", "version", "package", "python", "cuda", "cudnn", "driver_min", "reason",
              "vendor", "framework", "variant", "index")
FRAMEWORK_FLAGS = {Framework.TENSORFLOW: "tf", Framework.PYTORCH: "torch", Framework.JAX: "jax"}
SYSTEMS = (Os.LINUX, Os.WINDOWS, Os.WSL2, Os.MACOS)
PLAN_FORMATS = ("pip", "conda", "dockerfile")
NO_DRIVER = ""  # the answers without a driver: each plan names the driver it needs


@dataclass
class _Table:
    """Equal values get equal numbers, in the order first seen (the output is the same on every run)."""

    values: list = field(default_factory=list)
    numbers: dict = field(default_factory=dict)

    def number(self, value) -> int:
        found = self.numbers.get(value)
        if found is None:
            found = self.numbers[value] = len(self.values)
            self.values.append(value)
        return found


def _driver_key(text: str) -> DriverVersion:
    return DriverVersion.parse(text)


def _cc_key(text: str) -> ComputeCapability:
    return ComputeCapability.parse(text)


def site_data(kb: KnowledgeBase, *, frameworks=tuple(FRAMEWORK_FLAGS), systems=SYSTEMS, ccs=None,
              drivers: dict | None = None) -> dict:
    """The page's data document. `ccs` (compute capabilities) and `drivers` ({os: [driver, ...]}, instead of the
    driver minimums found) narrow it, for tests; the command offers everything."""
    # lazy: start-up (only this path needs browse.matrix)
    from stackresolve.browse.matrix import build_matrix

    ccs = sorted(ccs or kb.known_ccs(), key=_cc_key)
    strings, rows, lists = _Table(), _Table(), _Table()
    strings.number("")
    plan_of: dict[int, int] = {}  # row number -> plan number
    plan_requests: list[tuple] = []  # plan number -> (framework, line, os, cc, driver, vendor)
    offered: dict = {}

    def answer(fw: Framework, os_name: Os, cc: str, driver: str) -> tuple[int, set]:
        # the request `stackresolve matrix --gpu-cc CC --os OS [--driver D] [--torch|--jax]` makes
        cells = build_matrix(kb, _request(kb, fw, "latest", os_name, cc, driver), [os_name.value])
        numbers, minimums, previous = [], set(), None
        for cell in cells:
            doc = cell.to_json()
            # the stock wheel's row that follows NVIDIA's build of the same line is `plan --vendor stock`
            vendor = "stock" if previous is not None and previous.vendor == "nvidia" and \
                previous.line == cell.line else ""
            row = tuple(strings.number(doc[name] or "") for name in ROW_FIELDS) + (strings.number(vendor),)
            number = rows.number(row)
            numbers.append(number)
            if cell.status != "impossible" and number not in plan_of:
                plan_of[number] = len(plan_requests)
                plan_requests.append((fw, cell.line, os_name, cc, driver, vendor or "any"))
            if cell.driver_min:
                minimums.add(cell.driver_min)
            previous = cell
        return lists.number(tuple(numbers)), minimums

    answers = {fw.value: {} for fw in frameworks}
    for os_name in systems:
        found: set = set()
        for fw in frameworks:
            by_driver = answers[fw.value][os_name.value] = {NO_DRIVER: []}
            for cc in ccs:
                number, minimums = answer(fw, os_name, cc, NO_DRIVER)
                by_driver[NO_DRIVER].append(number)
                found |= minimums
        if os_name is Os.MACOS:  # no NVIDIA driver on a Mac: its answers are CPU builds
            continue
        # every framework answers for every driver offered, so that a link keeps its driver across them
        asked = drivers.get(os_name.value, []) if drivers is not None else None
        todo = set(asked) if asked is not None else set(found)
        done: set = set()
        while todo:
            driver = min(todo, key=_driver_key)
            todo.discard(driver)
            done.add(driver)
            for fw in frameworks:
                answers[fw.value][os_name.value][driver] = []
                for cc in ccs:
                    number, minimums = answer(fw, os_name, cc, driver)
                    answers[fw.value][os_name.value][driver].append(number)
                    found |= minimums
            if asked is None:
                todo |= found - done
        offered[os_name.value] = sorted(done, key=_driver_key)
        for fw in frameworks:
            by_driver = answers[fw.value][os_name.value]
            answers[fw.value][os_name.value] = {d: by_driver[d] for d in [NO_DRIVER, *offered[os_name.value]]}

    plans = [_plan(kb, strings, *request) for request in plan_requests]
    return {
        "format": FORMAT,
        "knowledge_base": _kb_line(kb),
        "frameworks": [{"name": fw.value, "display": fw.display, "flag": FRAMEWORK_FLAGS[fw]} for fw in frameworks],
        "systems": [os_name.value for os_name in systems],
        "ccs": ccs,
        # [name, compute capability, architecture, other names a link may use]
        "gpus": [[g.name, g.cc, g.architecture, [a for a in g.aliases if a.lower() != g.name.lower()]]
                 for g in sorted(kb.gpus, key=lambda g: (_cc_key(g.cc), g.name)) if g.cc in ccs],
        "drivers": {os_name.value: offered.get(os_name.value, []) for os_name in systems},
        "row_fields": [*ROW_FIELDS, "plan_vendor", "plan"],
        "strings": strings.values,
        "rows": [[*row, plan_of.get(number, -1)] for number, row in enumerate(rows.values)],
        "lists": [list(numbers) for numbers in lists.values],
        "answers": answers,
        "plans": plans,
    }


def _request(kb: KnowledgeBase, fw: Framework, version: str, os_name: Os, cc: str | None, driver: str,
             vendor: str = "any", cpu: bool = False):
    """The Request the CLI's flags make (`--gpu-cc CC --os OS --driver D`, the framework's flag with `version`,
    `--vendor`, `--cpu`), built from typed values: the values come from the knowledge base, not from a user."""
    # lazy: start-up (only this path needs request.parse, request.build)
    from stackresolve.request.parse import read_driver, read_version
    from stackresolve.model.enums import Vendor
    from stackresolve.request.build import RequestInput, build_request, gpu_from_cc

    spec, _ = read_version(kb, fw, version)
    given = RequestInput(fw, version, spec, os=os_name, cpu=cpu, driver=read_driver(driver or None),
                         gpus=() if cc is None else (gpu_from_cc(kb, _cc_key(cc), "", "flag --gpu-cc"),),
                         vendor=None if vendor == "any" else Vendor(vendor))
    return build_request(kb, given, None)


def _kb_line(kb: KnowledgeBase) -> str:
    # lazy: start-up (only this path needs resolve)
    from stackresolve.resolve import index_data

    data = index_data(kb)
    return kb.version + (f" (package index data {data})" if data else "")


def _plan(kb: KnowledgeBase, strings: _Table, fw: Framework, line: str, os_name: Os, cc: str, driver: str,
          vendor: str) -> dict:
    """What `stackresolve plan` prints for one yes of the matrix, in each format (lines as string numbers; the
    header's request line, which names the GPU, left out so that GPUs with the same answer share it), or why a
    format cannot express it; and the facts of the stack with their sources."""
    # lazy: start-up (only this path needs formats.render, formats.pip_decide, ...)
    from stackresolve.formats.render import FormatRefused, render_plan
    from stackresolve.formats import pip_decide as pip_plan
    from stackresolve.resolve import resolve

    mac = os_name is Os.MACOS  # the matrix plans a Mac's CPU build: no NVIDIA GPU runs CUDA there
    request = _request(kb, fw, line, os_name, None if mac else cc, driver, vendor, cpu=mac)
    resolution = resolve(kb, request, with_alternatives=False)
    out: dict = {"formats": {}, "refused": {}, "facts": []}
    if resolution.stack is None:  # the matrix said yes: a test holds plan and matrix to one answer
        out["refused"] = {fmt: strings.number("no consistent stack") for fmt in PLAN_FORMATS}
        return out
    for fmt in PLAN_FORMATS:
        try:
            text = render_plan(fmt, resolution, kb)
        except FormatRefused as exc:
            out["refused"][fmt] = strings.number(str(exc))
            continue
        out["formats"][fmt] = [strings.number(text_line) for text_line in text.splitlines()
                               if not text_line.startswith("# request: ")]
    pip = pip_plan.decide(resolution) if "pip" in out["formats"] else None
    if pip is not None and pip.lines:  # an NGC container's stack has no requirements to install
        out["uv"] = strings.number(_uv_command(pip))
    stack = resolution.stack.to_json()
    facts = []
    for part in ("framework", "python", "cuda", "cudnn", "driver", "gpu"):
        fact = stack.get(part)
        if fact and fact.get("why"):
            facts.append([strings.number(part), strings.number(fact["why"]), strings.number(fact.get("source") or "")])
    for pin in stack.get("pip") or ():
        facts.append([strings.number(pin["requirement"]), strings.number(pin["why"]),
                      strings.number(pin.get("source") or "")])
    out["facts"] = facts
    return out


def _uv_command(plan) -> str:
    """The pip plan's requirements file installed with uv (uv reads the file's index options as pip does; an extra
    index needs uv's unsafe-best-match strategy, as the pip plan says)."""
    strategy = " --index-strategy unsafe-best-match" if plan.index_args and \
        plan.resolution.stack.framework.index_option == "--extra-index-url" else ""
    return f"uv venv --python {plan.python} && uv pip install{strategy} -r requirements.txt"
