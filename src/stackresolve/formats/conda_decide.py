"""The conda plan: an environment with Python, the CUDA runtime and cuDNN packages a channel really has for the
stack's CUDA line, pip, and the pip plan.

Which packages: TensorFlow's own install page where it named a conda pair for this CUDA line (constraints/conda.toml
[[tensorflow_doc]]), else the channel catalogue (cudatoolkit for CUDA <= 11.x, cuda-version + cuda-runtime for
12.x) with the stack's cuDNN, or where a channel lacks it the nearest one TensorFlow accepts (said in the plan).
Stacks whose CUDA comes as pip wheels and CPU-only stacks get no CUDA packages.
"""

from __future__ import annotations

from packaging.version import InvalidVersion, Version

from stackresolve.knowledge.channels import CondaKnowledge, nearest_cudnn
from stackresolve.knowledge.rules import cudnn_rule_text
from stackresolve.model.enums import Delivery, Os
from stackresolve.model.record import record
from stackresolve.model.stack import Resolution
from stackresolve.formats import PlanOptions, environment_name, validate_env_name
from stackresolve.formats import pip_decide as pip_plan

# Preferred channels when several carry the same cuDNN; others (NVIDIA's labels) only when they alone fit.
CHANNEL_ORDER = ("conda-forge", "defaults")
DEFAULT_CHANNEL = "conda-forge"
CUDNN_WHEEL_PATH_SOURCE = ("tensorflow/docs:site/en/install/pip.md@518478ecc2ea39acdafdf4b84a253c9643252b79 (TF 2.12, "
                           "conda: pip install nvidia-cudnn-cu11==8.6.0.163; CUDNN_PATH=$(dirname $(python -c \"import "
                           "nvidia.cudnn;print(nvidia.cudnn.__file__)\")); LD_LIBRARY_PATH adds $CUDNN_PATH/lib)")
LD_PATH_SOURCE = ("tensorflow/docs:site/en/install/pip.md@be62ee25b6c9934fe648ff0537b3ed6ef2cc860f "
                  "(Linux: 'Configure the system paths', export LD_LIBRARY_PATH=$LD_LIBRARY_PATH:$CONDA_PREFIX/lib/)")


@record
class CondaChoice:
    channel: str
    specs: tuple[str, ...]  # CUDA runtime specs, then the cuDNN spec
    notes: tuple[str, ...]  # why, with sources (header comments)
    cudnn: str  # the cuDNN version the cuDNN spec installs
    from_doc: bool = False  # TensorFlow's install page named this pair
    pip: tuple[str, ...] = ()  # cuDNN as NVIDIA's pip wheel, where no conda channel has the stack's release


@record
class CondaPlan:
    resolution: Resolution
    name: str
    channels: tuple[str, ...]
    python: str
    cuda_specs: tuple[str, ...]
    pip: pip_plan.PipPlan
    pip_in_env: tuple[str, ...]  # the environment's pip section: index option first, then the plan's lines
    notes: tuple[str, ...]  # comment lines above the document
    cudnn: str | None = None  # the cuDNN the environment installs (None: none from conda)


def _spec_version(spec: str) -> tuple[str, str]:
    name, _, rest = spec.partition("=")
    return name, rest.split("=")[0]


def _doc_choice(conda: CondaKnowledge, cuda: str, wanted: str, compiled: str, platform: str) -> CondaChoice | None:
    """TensorFlow's own conda pair for this CUDA line, when its page gave one naming the stack's cuDNN."""
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
        if named == Version(wanted):
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
    return CondaChoice(doc.channel, (*runtime, cudnn_spec), tuple(notes), _spec_version(cudnn_spec)[1],
                       from_doc=True)


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
                f"{cudnn_rule_text(compiled)} built for it")
    _, package, cudnn, how = min(options, key=lambda o: o[0])
    notes = [f"CUDA {cuda} runtime: {' '.join(package.specs)} from {package.channel}; source: {package.source}",
             f"cuDNN: {cudnn.spec} ({cudnn.channel}, built for CUDA {cudnn.cuda}); source: {cudnn.source}"]
    if how:
        what = "nearest newer" if how == "newer" else "newest"
        notes.append(f"substitute: no conda channel recorded here has cuDNN {wanted} for CUDA {cuda}; {cudnn.cudnn} "
                     f"is the {what} cuDNN {cudnn_rule_text(compiled)} on {package.channel} (TensorFlow accepts the "
                     f"same major with an equal or higher minor than the cuDNN {compiled} it was built with)")
    return CondaChoice(package.channel, (*package.specs, cudnn.spec), tuple(notes), cudnn.cudnn)


def _wheel_choice(conda: CondaKnowledge, wheels: dict[str, str], cuda: str, wanted: str) -> CondaChoice | None:
    """The CUDA runtime from a conda channel and the stack's cuDNN as NVIDIA's pip wheel, as TensorFlow's own
    conda instructions did for 2.12."""
    if wanted not in wheels:
        return None
    packages = sorted(conda.cuda_for(cuda), key=lambda p: CHANNEL_ORDER.index(p.channel)
                      if p.channel in CHANNEL_ORDER else len(CHANNEL_ORDER))
    if not packages:
        return None
    package = packages[0]
    notes = (f"CUDA {cuda} runtime: {' '.join(package.specs)} from {package.channel}; source: {package.source}",
             f"cuDNN {wanted} as NVIDIA's pip wheel {wheels[wanted]} (no conda channel recorded here has it for "
             f"CUDA {cuda}); TensorFlow's own conda instructions installed cuDNN this way: {CUDNN_WHEEL_PATH_SOURCE}")
    return CondaChoice(package.channel, package.specs, notes, wanted, pip=(wheels[wanted],))


def choose(conda: CondaKnowledge, resolution: Resolution, wheels: dict[str, str] | None = None) -> CondaChoice | str:
    """The channel and CUDA/cuDNN specs for a system-CUDA stack, or a one-line reason there are none: TensorFlow's
    own conda pair, else the channel's exact cuDNN, else NVIDIA's cuDNN wheel of that release, else the nearest
    cuDNN the channel has (said in the plan)."""
    stack = resolution.stack
    cuda, wanted, compiled = stack.cuda.version, stack.cudnn.version, stack.cudnn.compiled
    platform = resolution.request.os.table_os.value
    doc = _doc_choice(conda, cuda, wanted, compiled, platform)
    if doc is not None:
        return doc
    catalogue = _catalogue_choice(conda, cuda, wanted, compiled)
    if isinstance(catalogue, CondaChoice) and catalogue.cudnn == wanted:
        return catalogue
    return _wheel_choice(conda, wheels or {}, cuda, wanted) or catalogue


def decide(resolution: Resolution, kb=None, options: PlanOptions = PlanOptions()) -> CondaPlan:
    """The conda plan for a stack the format's rule lets through (stackresolve.formats.registry)."""
    stack = resolution.stack
    pip = pip_plan.decide(resolution)
    default_name = environment_name(stack)
    name = validate_env_name(options.env_name if options.env_name is not None else default_name)
    notes: list[str] = []
    channel, cuda_specs, cudnn, extra_pip = DEFAULT_CHANNEL, (), None, ()
    if stack.delivery in (Delivery.PIP_WHEELS, Delivery.BUNDLED):
        notes.append(pip.cuda_note + " No conda CUDA packages.")
    elif stack.delivery is Delivery.SYSTEM:
        conda = getattr(kb, "conda", None)
        choice = choose(conda, resolution, kb.cudnn_wheels(stack.cuda.version)) if conda is not None else \
            "the knowledge base has no conda data"
        if isinstance(choice, str):
            notes.append(f"No CUDA packages: {choice}. Install CUDA {stack.cuda.version} and cuDNN "
                         f"{stack.cudnn.version} on the system (--format apt, powershell or dockerfile).")
        else:
            channel, cuda_specs, cudnn, extra_pip = choice.channel, choice.specs, choice.cudnn, choice.pip
            notes += choice.notes
            if resolution.request.os is Os.WINDOWS and not choice.from_doc:
                notes.append("Windows: the knowledge base records these builds per channel, not per platform; "
                             "check that the channel has win-64 files of them.")
            if resolution.request.os in (Os.LINUX, Os.WSL2):
                notes += [f"Linux: TensorFlow finds the environment's CUDA libraries only with $CONDA_PREFIX/lib on "
                          f"LD_LIBRARY_PATH; source: {LD_PATH_SOURCE}. After `conda activate {name}`, run once:",
                          '  mkdir -p "$CONDA_PREFIX/etc/conda/activate.d"']
                if extra_pip:  # the cuDNN wheel's libraries too (TensorFlow's 2.12 instructions)
                    notes += ["  echo 'CUDNN_PATH=$(dirname $(python -c \"import nvidia.cudnn;print(nvidia.cudnn.__file__)\"))' "
                              '> "$CONDA_PREFIX/etc/conda/activate.d/env_vars.sh"',
                              "  echo 'export LD_LIBRARY_PATH=$LD_LIBRARY_PATH:$CONDA_PREFIX/lib/:$CUDNN_PATH/lib' >> "
                              '"$CONDA_PREFIX/etc/conda/activate.d/env_vars.sh"']
                else:
                    notes += ["  echo 'export LD_LIBRARY_PATH=$LD_LIBRARY_PATH:$CONDA_PREFIX/lib/' > "
                              '"$CONDA_PREFIX/etc/conda/activate.d/env_vars.sh"']
        minimum = stack.driver.minimum if stack.driver else None
        notes.append(f"The NVIDIA driver ({'>= ' + minimum if minimum else 'version unknown'}) comes from the "
                     f"system.")
    else:
        notes.append("CPU-only stack: no CUDA packages.")
    if pip.index_args:
        notes.append(f"conda passes the pip section to pip as a requirements file, so its first line ("
                     f"{pip.index_line}) points pip at {stack.framework.distribution}'s index.")
    in_env = pip.pre_install or (*pip.index_lines, *extra_pip, *pip.requirements)
    return CondaPlan(resolution, name, (channel,), pip.python, cuda_specs, pip, in_env, tuple(notes), cudnn)
