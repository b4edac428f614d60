"""`stackresolve matrix`: every release line of a framework (TensorFlow, PyTorch, JAX) on one GPU and OS,
resolved."""

from __future__ import annotations

import json
from dataclasses import dataclass, replace

from packaging.specifiers import SpecifierSet

from stackresolve.knowledge.base import KnowledgeBase
from stackresolve.knowledge.rules import arch_predates, classify_support
from stackresolve.model.enums import Framework, Os, Severity, Vendor
from stackresolve.request import Request
from stackresolve.resolve import resolve
from stackresolve.resolve.nvidia import NVIDIA_GPU_FLOOR


@dataclass(frozen=True)
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


def gpu_signature(kb: KnowledgeBase, line: str, gpu, framework: Framework = Framework.TENSORFLOW) -> tuple:
    """What a resolution for one release line can depend on about a GPU: its support class for the line's
    compiled code, which side of every CUDA/cuDNN architecture bound it falls on, and its driver branch limit.
    GPUs with equal signatures get equal answers, so the matrix resolves each signature once. (PyTorch and JAX
    lines: the compute capability itself.) Signatures come as small numbers, one per distinct signature: a cell's
    memo key is hashed in every cell, and the signature itself holds dozens of values."""
    if framework is not Framework.TENSORFLOW:
        return (gpu.cc,)
    signatures = kb.memo("gpu-signatures", dict)
    found = signatures.get((line, gpu.cc))
    if found is None:
        found = signatures[line, gpu.cc] = _interned(kb, _gpu_signature(kb, line, gpu))
    return found


def _interned(kb: KnowledgeBase, value: tuple) -> int:
    """The same number for equal values, for the life of the knowledge base."""
    numbers = kb.memo("matrix-interned", dict)
    return numbers.setdefault(value, len(numbers))


def _gpu_signature(kb: KnowledgeBase, line: str, gpu) -> tuple:
    lows, highs, toolkit_highs = kb.memo("arch-bounds", lambda: (
        sorted({r.min_cc for r in (*kb.toolkits, *kb.cudnn)}), sorted({r.max_cc for r in (*kb.toolkits, *kb.cudnn)}),
        sorted({t.max_cc for t in kb.toolkits})))
    cc = gpu.capability
    support = kb.arch_support_for(gpu.cc)
    # Every release and OS variant of the line: the best the resolver could pick depends on all of them.
    by_line = kb.memo("compiled-archs-by-line", lambda: _by_line(kb.compiled_archs))
    variants = tuple([classify_support(a, cc) for a in by_line.get(line, ())])
    if line == "1.15":  # NVIDIA's builds: compute capability 6.0 up to their CUDA's newest architecture
        variants += (cc >= NVIDIA_GPU_FLOOR,)
    # The GPUs' driver floor reads which toolkits target the GPU at all (max_cc >= cc: sm_86 came with CUDA 11.1,
    # sm_89 with 11.8) and names the architecture; arch_predates alone (a newer major) does not tell 8.6 from 8.9.
    return (variants, tuple(cc >= low for low in lows), tuple(arch_predates(high, cc) for high in highs),
            tuple(high >= cc for high in toolkit_highs),
            (support.architecture, support.last_branch, support.last_version) if support else ())


def asked_of(kb: KnowledgeBase, request: Request) -> int:
    """What a cell's answer depends on in the request, besides the line, OS and GPU signatures."""
    return _interned(kb, (request.framework, request.cpu_only, request.driver, request.python, request.arch,
                          request.vendor, request.cudnn, request.apple_gpu))


def line_signature(kb: KnowledgeBase, request: Request, line: str) -> tuple:
    return tuple([gpu_signature(kb, line, g, request.framework) for g in request.gpus])


def _by_line(archs) -> dict[str, list]:
    out: dict[str, list] = {}
    for a in archs:
        out.setdefault(a.line, []).append(a)
    return out


def resolve_cell(kb: KnowledgeBase, request: Request, line: str, os_name: str, asked: int | None = None,
                 signature: tuple | None = None) -> Cell:
    """`asked` and `signature`, where given, are asked_of(request) and line_signature(request, line)."""
    # Resolved for anonymous GPUs and memoized by signature: every model of one kind shares the answer.
    if signature is None:
        signature = line_signature(kb, request, line)
    key = ("matrix-cell", asked_of(kb, request) if asked is None else asked, line, os_name, signature)
    cells = kb.memo("matrix-cells", dict)
    cell = cells.get(key)
    if cell is None:
        cell = cells[key] = _resolve_cell(kb, replace(
            request, os=Os(os_name), version=line, spec=SpecifierSet(f"=={line}.*"),
            gpus=tuple(replace(g, name="", source="") for g in request.gpus),
            cpu_only=request.cpu_only or os_name == "macos", assumptions=()), line, os_name)
    if cell.status == "impossible" and request.gpus:
        # The shared answer's message names the GPU it was resolved for; name this one.
        first = kb.memo(key + ("gpus",), lambda: request.gpus)
        cell = kb.memo(key + tuple(g.cc for g in request.gpus), lambda: _named(cell, request.gpus, first))
    return cell


def _named(cell: Cell, gpus: tuple, first: tuple) -> Cell:
    reason = cell.reason
    for mine, theirs in zip(gpus, first):
        reason = reason.replace(f"compute capability {theirs.cc}", f"compute capability {mine.cc}")
    return replace(cell, reason=reason)


def _resolve_cell(kb: KnowledgeBase, cell_request: Request, line: str, os_name: str) -> Cell:
    resolution = resolve(kb, cell_request, with_alternatives=False)
    stack = resolution.stack
    if stack is None:
        errors = [f.message for f in resolution.findings if f.severity is Severity.ERROR]
        return Cell(line, os_name, "impossible", None, None, None, None, None, None,
                    errors[-1] if errors else "no consistent stack", framework=cell_request.framework.value)
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
    """One cell per line and OS; where NVIDIA's TF 1.15 build is chosen, the stock wheel's cell follows it."""
    cells = []
    from stackresolve.resolve.pool import release_lines

    asked = asked_of(kb, request)
    nvidia = Vendor.NVIDIA.value
    for line in [l.version for l in release_lines(kb, request.framework)]:
        signature = line_signature(kb, request, line)
        for os_name in systems:
            cell = resolve_cell(kb, request, line, os_name, asked, signature)
            cells.append(cell)
            if cell.vendor == nvidia and request.vendor is None:
                cells.append(resolve_cell(kb, replace(request, vendor=Vendor.STOCK), line, os_name))
    return cells


def _target(request: Request) -> str:
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
