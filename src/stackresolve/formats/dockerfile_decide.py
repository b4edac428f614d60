"""The Docker plan: a base image that carries the stack's CUDA and cuDNN, plus the pip plan.

The image always runs the stack's Python (the `# stack:` header never names a Python the image does not run).
Base image, in order of preference (facts from constraints/docker.toml):
1. the official tensorflow/tensorflow GPU image of this exact release, then of the same release line: TensorFlow's
   own build, so its CUDA/cuDNN match by construction; its python3 where that is the stack's Python (the
   preinstalled TensorFlow is replaced by the exact pins), else the stack's Python from Ubuntu's archive in a
   virtual environment;
2. an nvidia/cuda runtime+cuDNN image for the stack's CUDA line that NVIDIA still publishes, with the stack's
   Python (Ubuntu's archive, else the deadsnakes PPA) in a virtual environment;
3. a TensorFlow image of another line built on the same CUDA and cuDNN, as in 1;
4. an nvidia/cuda tag NVIDIA has deleted, with a warning (such a plan cannot be pulled, only rebuilt from
   NVIDIA's container scripts).
Images built before NVIDIA's April 2022 repository key rotation get the current key before their first
`apt-get update` (cuda-keyring, or the key file, as constraints/apt.toml records for that Ubuntu release).
Where the image's cuDNN is not the stack's, the plan installs the stack's exact libcudnn package from NVIDIA's
repository (which these images have configured). Stacks that get CUDA and cuDNN as pip wheels, and CPU stacks,
use python:<X.Y>-slim; NVIDIA's NGC stacks use their container.
"""

from __future__ import annotations

from dataclasses import replace

from packaging.version import Version

from stackresolve.knowledge.rules import cudnn_accepts, cudnn_rule_text
from stackresolve.model.enums import Delivery
from stackresolve.model.record import record
from stackresolve.model.stack import Resolution, Stack
from stackresolve.formats import PlanOptions, Refusal, environment_name, import_check_code
from stackresolve.formats import pip_decide as pip_plan
from stackresolve.formats.apt_decide import choose_cudnn

PYTHON_IMAGE_SOURCE = "Docker Official Image python (library/python on Docker Hub), tag <X.Y>-slim"


@record
class KeyStep:
    """Install NVIDIA's current repository key before the first `apt-get update` (an image built before the
    April 2022 rotation trusts only the retired key: NO_PUBKEY A4B469963BF863CC)."""

    method: str  # "cuda-keyring" (dpkg -i the keyring package) | "key-file" (the .pub into trusted.gpg.d)
    url: str  # the keyring package or key file in NVIDIA's CUDA repository for the image's Ubuntu
    why: str
    source: str


@record
class Base:
    image: str  # what follows FROM
    kind: str  # "tensorflow" | "cuda" | "python" | "ngc"
    python: str  # the CPython minor the image runs the plan with: always the stack's
    why: str
    source: str
    warning: str = ""
    python_from: str = "image"  # "image" (its python3) | "ubuntu" (Ubuntu's archive) | "deadsnakes" (the PPA)
    cudnn: str | None = None  # the cuDNN the image carries (major.minor.patch)
    ubuntu: str | None = None
    key_step: KeyStep | None = None

    @property
    def python_from_ppa(self) -> bool:
        return self.python_from == "deadsnakes"


@record
class DockerPlan:
    resolution: Resolution
    base: Base
    pip: pip_plan.PipPlan  # the stack's own pip plan: the image runs the stack's Python
    cudnn_packages: tuple[str, ...] = ()  # apt pins that replace the image's cuDNN with the stack's
    cudnn_note: str = ""
    check_code: str = ""

    @property
    def tag(self) -> str:
        return environment_name(self.resolution.stack)

    @property
    def runs_apt(self) -> bool:
        return bool(self.cudnn_packages) or self.base.python_from != "image"


def _same_cudnn(stack: Stack, image_cudnn: str) -> bool:
    return Version(image_cudnn).release[:3] == Version(stack.cudnn.version).release[:3]


# deadsnakes builds for the LTS releases from 20.04 on (the plan has used it there; older releases are not served)
DEADSNAKES_RELEASES = ("20.04", "22.04", "24.04")


def python_from(kb, ubuntu: str, image_python: str | None, python: str) -> str | None:
    """Where an image of Ubuntu `ubuntu` gets Python `python`: its own python3, Ubuntu's archive, the deadsnakes PPA
    (None: nowhere this plan knows)."""
    if python == image_python:
        return "image"
    if python in kb.ubuntu_pythons(ubuntu):
        return "ubuntu"
    return "deadsnakes" if ubuntu in DEADSNAKES_RELEASES else None


def key_step(kb, ubuntu: str, apt_key: str) -> KeyStep | None:
    """The step that makes `apt-get update` work on an image that may trust only NVIDIA's retired key."""
    if apt_key == "current":
        return None
    # lazy: no start-up gain (already loaded by then); kept beside its use
    from stackresolve.formats.apt_decide import choose_keyring, ubuntu_distro

    apt = getattr(kb, "apt", None)
    keyring = choose_keyring(apt, ubuntu) if apt is not None else None
    repo = apt.repo("cuda") if apt is not None else None
    distro = ubuntu_distro(ubuntu)
    if keyring is None or repo is None or distro not in repo.distros:
        return None
    rotation = kb.key_rotation
    state = ("was built before" if apt_key == "retired" else "may predate")
    why = (f"This image {state} NVIDIA rotated its CUDA repository key ({rotation.date}): its apt trusts key "
           f"{rotation.retired}, so `apt-get update` fails with {rotation.error} until the current key "
           f"{rotation.current} is installed.")
    method = "cuda-keyring" if keyring.method == "cuda-keyring" else "key-file"
    return KeyStep(method, f"{repo.url_for(distro)}/{keyring.file}", why, f"{rotation.source}; {keyring.source}")


def _cudnn_packages(kb, stack: Stack, ubuntu: str) -> tuple[str, ...] | None:
    """The apt pins of the stack's exact cuDNN for an Ubuntu release, or None when the data has none."""
    apt = getattr(kb, "apt", None)
    if apt is None:
        return None
    candidates = [p for p in apt.cudnn_for(stack.cuda.version) if ubuntu in p.ubuntu]
    choice = choose_cudnn(candidates, stack.cudnn.version, stack.cudnn.compiled, stack.cuda.version, ubuntu)
    if choice is None or choice.why:
        return None
    return choice.package.packages


def _tensorflow_base(kb, stack: Stack, image, python: str) -> tuple[Base, tuple[str, ...]] | None:
    route = python_from(kb, image.ubuntu, image.python, python)
    pins = () if _same_cudnn(stack, image.cudnn) else _cudnn_packages(kb, stack, image.ubuntu)
    if route is None or pins is None:
        return None
    version = stack.framework.version
    how = ("TensorFlow's own image of this release" if image.version == version else
           f"TensorFlow's own image of the {image.line} line ({image.version}); the plan installs {version}")
    runs = (f"Python {python} is the image's" if route == "image" else
            f"the image's python3 is {image.python}: Python {python} comes from "
            + (f"Ubuntu {image.ubuntu}'s archive" if route == "ubuntu" else "the deadsnakes PPA"))
    base = Base(image.image, "tensorflow", python,
                f"{how}: CUDA {image.cuda}, cuDNN {image.cudnn}, Ubuntu {image.ubuntu}; {runs}",
                image.source, python_from=route, cudnn=image.cudnn, ubuntu=image.ubuntu)
    if route != "image" or pins:
        base = replace(base, key_step=key_step(kb, image.ubuntu, image.apt_key))
    return base, pins


def _cuda_base(kb, stack: Stack, image, python: str) -> tuple[Base, tuple[str, ...]] | None:
    route = python_from(kb, image.ubuntu, None, python)
    pins = () if _same_cudnn(stack, image.cudnn) else _cudnn_packages(kb, stack, image.ubuntu)
    if route is None or pins is None:
        return None
    where = "Ubuntu's archive" if route == "ubuntu" else "the deadsnakes PPA"
    why = (f"NVIDIA's CUDA {image.release} runtime image with cuDNN {image.cudnn} (Ubuntu {image.ubuntu}); "
           f"TensorFlow {stack.framework.line} loads cuDNN {cudnn_rule_text(stack.cudnn.compiled)}; Python {python} "
           f"from {where}")
    warning = "" if image.pullable else (
        f"NVIDIA deleted the tag {image.tag} from Docker Hub (end of life); this FROM will not pull. Build the "
        f"base from NVIDIA's container scripts (gitlab.com/nvidia/container-images/cuda) or choose a newer "
        f"TensorFlow.")
    return Base(image.image, "cuda", python, why, image.source, warning, python_from=route, cudnn=image.cudnn,
                ubuntu=image.ubuntu, key_step=key_step(kb, image.ubuntu, image.apt_key)), pins


def choose_base(resolution: Resolution, kb) -> tuple[Base, tuple[str, ...]] | None:
    """(base image, apt pins that set the stack's cuDNN). The image always runs the stack's Python.

    Order: TensorFlow's own image of this release, then of its line (where the image's python3 is the stack's, or
    Ubuntu's archive carries it); NVIDIA's CUDA images that can still be pulled; TensorFlow images of other lines on
    the same CUDA; NVIDIA's deleted tags last (with a warning)."""
    stack = resolution.stack
    python = stack.python.recommended
    if stack.cuda is None or stack.delivery in (Delivery.PIP_WHEELS, Delivery.BUNDLED):
        cudnn = f"cuDNN {stack.cudnn.version}" if stack.cudnn else "cuDNN"
        how = "inside its wheel" if stack.delivery is Delivery.BUNDLED else "as pip wheels"
        why = "CPU-only stack: a plain Python image" if stack.cuda is None else (
            f"{stack.framework.pip_package} brings CUDA {stack.cuda.release} and {cudnn} {how}; the image needs "
            f"only Python (the NVIDIA Container Toolkit maps the host driver in)")
        source = PYTHON_IMAGE_SOURCE
        if stack.gpu.vendor == "amd":  # resolve/rocm.py: the wheel brings ROCm; the devices come at run time
            # lazy: start-up (only this path needs resolve.rocm)
            from stackresolve.resolve.rocm import ROCM_IMAGE_SOURCE, ROCM_IMAGE_WHY

            why, source = ROCM_IMAGE_WHY, f"{PYTHON_IMAGE_SOURCE}; {ROCM_IMAGE_SOURCE}"
        return Base(f"python:{python}-slim", "python", python, why, source), ()
    cuda, version, line = stack.cuda.version, stack.framework.version, stack.framework.line
    tf_images = [i for i in kb.tf_images if i.cuda == cuda and cudnn_accepts(stack.cudnn.compiled, i.cudnn)]
    newest_first = sorted(tf_images, key=lambda i: Version(i.version), reverse=True)
    own = [i for i in tf_images if i.version == version] + [i for i in newest_first if i.line == line]
    others = [i for i in newest_first if i.line != line]
    cuda_images = [i for i in kb.cuda_images if i.cuda == cuda and cudnn_accepts(stack.cudnn.compiled, i.cudnn)]
    # Among NVIDIA's: one that carries the stack's cuDNN, one whose archive has the Python, then the newest Ubuntu.
    cuda_images.sort(key=lambda i: (_same_cudnn(stack, i.cudnn), python in kb.ubuntu_pythons(i.ubuntu),
                                    Version(i.ubuntu)), reverse=True)
    candidates = ([(_tensorflow_base, i) for i in own] + [(_cuda_base, i) for i in cuda_images if i.pullable]
                  + [(_tensorflow_base, i) for i in others] + [(_cuda_base, i) for i in cuda_images if not i.pullable])
    for make, image in candidates:
        chosen = make(kb, stack, image, python)
        if chosen is not None:
            return chosen
    return None


def decide(resolution: Resolution, kb=None, options: PlanOptions = PlanOptions()) -> DockerPlan | Refusal:
    """The Docker plan for a stack the format's rule lets through (stackresolve.formats.registry: Linux, and x86_64
    for system CUDA), or why there is none (no recorded image or container fits)."""
    stack = resolution.stack
    check = import_check_code(stack)
    if stack.delivery is Delivery.CONTAINER:
        fw = stack.framework
        base = Base(fw.container, "ngc", stack.python.recommended,  # the resolver takes the container's Python
                    f"NVIDIA's NGC TensorFlow 1 container {fw.vendor_release}: TensorFlow {fw.upstream_version} with "
                    f"CUDA {stack.cuda.release} and cuDNN {stack.cudnn.version}", fw.source)
        return DockerPlan(resolution, base, pip_plan.decide(resolution), check_code=check)
    if stack.framework.index is not None:
        # NVIDIA's pip build: its release's NGC container carries the same TensorFlow, CUDA and cuDNN.
        release = stack.framework.vendor_release
        same = next((b for b in kb.nvidia_builds if b.kind == "container" and b.release == release), None)
        if same is None:
            return Refusal(resolution, f"No Dockerfile: no NGC container of release {release} is recorded.",
                           "Use --format pip.")
        if same.pythons[:1] != (stack.python.recommended,):
            return Refusal(resolution, f"No Dockerfile: NVIDIA's NGC container of release {release} runs Python "
                                       f"{same.pythons[0]}, not the stack's {stack.python.recommended}.",
                           "Use --format pip.")
        differs = "" if _same_cudnn(stack, same.cudnn) else (
            f" (NVIDIA's own cuDNN for this release; the pip and conda plans install cuDNN {stack.cudnn.version}, "
            f"which TensorFlow loads as well: {cudnn_rule_text(stack.cudnn.compiled)})")
        base = Base(same.tag, "ngc", stack.python.recommended,
                    f"NVIDIA's NGC TensorFlow 1 container of the same release {release}: TensorFlow "
                    f"{same.tf_base} with CUDA {same.cuda} and cuDNN {same.cudnn}{differs}, as the pip build",
                    same.source)
        return DockerPlan(resolution, base, pip_plan.decide(resolution), check_code=check)
    chosen = choose_base(resolution, kb)
    if chosen is None:
        return Refusal(resolution, f"No Dockerfile: no recorded base image carries CUDA {stack.cuda.version} with "
                                   f"cuDNN {stack.cudnn.version} or an apt package for it (constraints/docker.toml, "
                                   f"apt.toml).", "Use --format apt inside an Ubuntu image instead.")
    base, pins = chosen
    note = ""
    if pins:
        note = (f"The image carries cuDNN {base.cudnn}; the stack's cuDNN {stack.cudnn.version} replaces it "
                f"({' '.join(pins)} from NVIDIA's repository, which the image has configured).")
    return DockerPlan(resolution, base, pip_plan.decide(resolution), pins, note, check)
