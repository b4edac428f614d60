"""`--format conda`: an environment.yml with Python, the CUDA runtime and cuDNN packages a channel really has for
the stack's CUDA line, pip, and the pip plan. Written with PyYAML's safe_dump; the header is YAML comments.

Which packages: TensorFlow's own install page where it named a conda pair for this CUDA line (constraints/conda.toml
[[tensorflow_doc]]), else the channel catalogue (cudatoolkit for CUDA <= 11.x, cuda-version + cuda-runtime for
12.x) with the cuDNN TensorFlow accepts (same major, >= the cuDNN it was built with) nearest to the stack's.
`tensorflow[and-cuda]` and CPU-only stacks get no CUDA packages.
"""

from __future__ import annotations

import re
from dataclasses import dataclass

from packaging.version import InvalidVersion, Version

from stackresolve.emit.header import header_lines
from stackresolve.emit.pip import requirement_lines
from stackresolve.knowledge.channels import CondaKnowledge, nearest_cudnn
from stackresolve.request import InputError
from stackresolve.resolve import Resolution

ENV_NAME = re.compile(r"[A-Za-z0-9_.-]+")
# Preferred channels when several carry the same cuDNN; others (NVIDIA's labels) only when they alone fit.
CHANNEL_ORDER = ("conda-forge", "defaults")
DEFAULT_CHANNEL = "conda-forge"
LD_PATH_SOURCE = ("tensorflow/docs:site/en/install/pip.md@be62ee25b6c9934fe648ff0537b3ed6ef2cc860f "
                  "(Linux: 'Configure the system paths', export LD_LIBRARY_PATH=$LD_LIBRARY_PATH:$CONDA_PREFIX/lib/)")
_CONTROL = re.compile(r"[\x00-\x1f\x7f]+")


@dataclass(frozen=True)
class CondaChoice:
    channel: str
    specs: tuple[str, ...]  # CUDA runtime specs, then the cuDNN spec
    notes: tuple[str, ...]  # why, with sources (header comments)
    from_doc: bool = False  # TensorFlow's install page named this pair


def validate_env_name(name: str) -> str:
    """--env-name: letters, digits, '-', '_' and '.' only (it becomes a directory name under conda's envs)."""
    if not ENV_NAME.fullmatch(name) or name in (".", ".."):
        raise InputError(f"--env-name {name!r}: use letters, digits, '-', '_' and '.' only")
    return name


def _spec_version(spec: str) -> tuple[str, str]:
    name, _, rest = spec.partition("=")
    return name, rest.split("=")[0]


def _doc_choice(conda: CondaKnowledge, cuda: str, wanted: str, compiled: str, platform: str) -> CondaChoice | None:
    """TensorFlow's own conda pair for this CUDA line, when its page gave one (conda packages only)."""
    floor = Version(compiled)
    matches = []
    for doc in conda.tensorflow_docs:
        if platform not in doc.platforms or doc.pip:
            continue
        specs = dict(_spec_version(s) for s in doc.specs)
        toolkit, cudnn = specs.get("cudatoolkit", ""), specs.get("cudnn", "")
        if not cudnn or not (toolkit == cuda or toolkit.startswith(cuda + ".")):
            continue
        try:
            named = Version(cudnn)
        except InvalidVersion:  # a glob such as 8.* names no single cuDNN
            continue
        if named.major == floor.major and named >= floor:
            matches.append(doc)
    if not matches:
        return None
    doc = max(matches, key=lambda d: d.date)
    cudnn_spec = next(s for s in doc.specs if s.startswith("cudnn="))
    catalogue = [p for p in conda.cuda_for(cuda) if p.channel == doc.channel]
    runtime = catalogue[0].specs if catalogue else tuple(s for s in doc.specs if s != cudnn_spec)
    notes = [f"CUDA {cuda} runtime and cuDNN as TensorFlow's install page gave them for conda ({doc.date}): "
             f"{' '.join(doc.specs)} from {doc.channel}; source: {doc.source}"]
    if catalogue:
        notes.append(f"{' '.join(runtime)}: source: {catalogue[0].source}")
    chosen = _spec_version(cudnn_spec)[1]
    if Version(chosen) != Version(wanted):
        notes.append(f"cuDNN {chosen} here instead of the stack's {wanted}: TensorFlow accepts the same major with "
                     f"an equal or higher minor than the cuDNN {compiled} it was built with, and this is the pair "
                     f"its install page named")
    return CondaChoice(doc.channel, (*runtime, cudnn_spec), tuple(notes), from_doc=True)


def _catalogue_choice(conda: CondaKnowledge, cuda: str, wanted: str, compiled: str) -> CondaChoice | str:
    options = []
    for package in conda.cuda_for(cuda):
        found = nearest_cudnn(conda.cudnn_for(cuda, package.channel), wanted, compiled, cuda)
        if found is None:
            continue
        cudnn, how = found
        rank = CHANNEL_ORDER.index(package.channel) if package.channel in CHANNEL_ORDER else len(CHANNEL_ORDER)
        options.append(((how != "", rank), package, cudnn, how))
    if not options:
        channels = ", ".join(sorted({p.channel for p in conda.cuda_for(cuda)})) or "no channel recorded"
        return (f"no conda channel recorded here has both a CUDA {cuda} runtime ({channels}) and a cuDNN "
                f"{Version(compiled).major}.x >= {compiled} built for it")
    _, package, cudnn, how = min(options, key=lambda o: o[0])
    notes = [f"CUDA {cuda} runtime: {' '.join(package.specs)} from {package.channel}; source: {package.source}",
             f"cuDNN: {cudnn.spec} ({cudnn.channel}, built for CUDA {cudnn.cuda}); source: {cudnn.source}"]
    if how:
        what = "nearest newer" if how == "newer" else "newest"
        notes.append(f"substitute: {package.channel} has no cuDNN {wanted} build for CUDA {cuda}; {cudnn.cudnn} is "
                     f"the {what} cuDNN {Version(compiled).major}.x >= {compiled} there (TensorFlow accepts the "
                     f"same major with an equal or higher minor than the cuDNN {compiled} it was built with)")
    return CondaChoice(package.channel, (*package.specs, cudnn.spec), tuple(notes))


def choose(conda: CondaKnowledge, resolution: Resolution) -> CondaChoice | str:
    """The channel and CUDA/cuDNN specs for a system-CUDA stack, or a one-line reason there are none."""
    stack = resolution.stack
    cuda = stack.cuda.value["version"]
    wanted = stack.cudnn.value["version"]
    compiled = stack.candidate.cudnn_min or wanted
    platform = "windows" if resolution.request.os == "windows" else "linux"
    return _doc_choice(conda, cuda, wanted, compiled, platform) or _catalogue_choice(conda, cuda, wanted, compiled)


def _comment(text: str) -> str:
    return "# " + _CONTROL.sub(" ", text).rstrip() + "\n"


def document(resolution: Resolution, kb=None, env_name: str | None = None) -> tuple[dict, list[str]]:
    """The environment.yml mapping and the comment lines that go above it."""
    stack = resolution.stack
    name = validate_env_name(env_name) if env_name is not None else validate_env_name(f"tf-{stack.tf_version}")
    python = stack.python.value["recommended"]
    notes: list[str] = []
    channel, cuda_specs = DEFAULT_CHANNEL, ()
    if stack.cuda and stack.candidate.extra:
        notes.append(f"CUDA {stack.cuda.value['version']} and cuDNN {stack.cudnn.value['version']} come as pip "
                     f"wheels through {stack.framework.value['pip_package']}: no conda CUDA packages.")
    elif stack.cuda:
        conda = getattr(kb, "conda", None)
        choice = choose(conda, resolution) if conda is not None else "the knowledge base has no conda data"
        if isinstance(choice, str):
            notes.append(f"No CUDA packages: {choice}. Install CUDA {stack.cuda.value['version']} and cuDNN "
                         f"{stack.cudnn.value['version']} on the system (--format apt, powershell or dockerfile).")
        else:
            channel, cuda_specs = choice.channel, choice.specs
            notes += choice.notes
            if resolution.request.os == "windows" and not choice.from_doc:
                notes.append("Windows: the knowledge base records these builds per channel, not per platform; "
                             "check that the channel has win-64 files of them.")
            if resolution.request.os in ("linux", "wsl2"):
                notes += [f"Linux: TensorFlow finds the environment's CUDA libraries only with $CONDA_PREFIX/lib on "
                          f"LD_LIBRARY_PATH; source: {LD_PATH_SOURCE}. After `conda activate {name}`, run once:",
                          '  mkdir -p "$CONDA_PREFIX/etc/conda/activate.d"',
                          "  echo 'export LD_LIBRARY_PATH=$LD_LIBRARY_PATH:$CONDA_PREFIX/lib/' > "
                          '"$CONDA_PREFIX/etc/conda/activate.d/env_vars.sh"']
        minimum = stack.driver.value.get("min")
        notes.append(f"The NVIDIA driver ({'>= ' + minimum if minimum else 'version unknown'}) comes from the "
                     f"system.")
    else:
        notes.append("CPU-only stack: no CUDA packages.")
    dependencies: list = [f"python={python}", *cuda_specs, "pip", {"pip": requirement_lines(resolution)}]
    doc = {"name": name, "channels": [channel], "dependencies": dependencies}
    comments = [*header_lines(resolution, "conda"),
                f"Create it: conda env create -f environment.yml && conda activate {name}", *notes]
    return doc, comments


def render(resolution: Resolution, kb=None, env_name: str | None = None) -> str:
    import yaml  # lazily: only this format needs PyYAML

    if resolution.stack is None:
        return "".join(_comment(line) for line in header_lines(resolution, "conda"))
    doc, comments = document(resolution, kb, env_name)
    body = yaml.safe_dump(doc, sort_keys=False, default_flow_style=False, allow_unicode=False)
    return "".join(_comment(line) for line in comments) + body
