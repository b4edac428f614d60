"""Fleet inventories -> Members. Pure: each reader takes a document's text and the name of the file it came from.

Three kinds of input:
- `kubectl get nodes -o json` (a List of Nodes, or one Node): NVIDIA GPU Feature Discovery (GFD) labels each GPU
  node (NVIDIA/k8s-device-plugin@v0.20.0:internal/lm/nvml.go newVersionLabeler, internal/lm/resource.go
  newArchitectureLabels / productLabel; docs/gpu-feature-discovery/README.md "Generated Labels"):
    nvidia.com/gpu.product          the model with spaces as '-' ("Tesla-T4", "NVIDIA-H100-80GB-HBM3"); MIG
                                    devices add "-MIG-<profile>" ("A100-SXM4-40GB-MIG-1g.5gb"), a shared GPU
                                    "-SHARED"
    nvidia.com/gpu.compute.major / .minor    the compute capability (not set for MIG devices)
    nvidia.com/cuda.driver.major / .minor / .rev    the driver ("550", "107", "02"; rev "" for a 2-part
                                    version); deprecated but still written
    nvidia.com/cuda.driver-version.full      the driver as one string ("550.107.02"), GFD v0.15.0 and later
    nvidia.com/gpu.count            the number of GPUs (of MIG devices under the single strategy)
  Node Feature Discovery adds feature.node.kubernetes.io/system-os_release.ID / .VERSION_ID; Kubernetes itself
  kubernetes.io/os and kubernetes.io/arch (status.nodeInfo as a fallback).
- `stackresolve detect --format json` reports (schema stackresolve/detect@1), one machine per file.
- an inventory file of our own (TOML) for machines described by hand:

      [[machine]]
      names = ["ws-01", "ws-02"]   # or name = "ws-01"
      gpu = "GTX 1080 Ti"          # a model `stackresolve gpus` knows, or gpu_cc = "6.1"
      driver = "470.82.01"
      os = "linux"                 # linux (default), windows or wsl2
      arch = "x86_64"              # default x86_64
      distro = "ubuntu"            # optional, with release = "22.04"

  A machine without `gpu` and `gpu_cc` is a CPU machine.
"""

from __future__ import annotations

import re
from typing import Any, Callable

from stackresolve.fleet.model import FleetInputError, GpuFact, Member
from stackresolve.inputs import StructuredInputError, parse_structured
from stackresolve.model.enums import Arch, Os
from stackresolve.model.numbers import is_driver_version, read_compute_capability

DETECT_SCHEMA = "stackresolve/detect@1"
INVENTORY_KEYS = ("name", "names", "gpu", "gpu_cc", "gpu_count", "driver", "os", "arch", "distro", "release")
GFD = "nvidia.com/"
# Labels managed Kubernetes services put the node pool's name in (GKE, EKS, AKS, Karpenter, OKE).
POOL_LABELS = ("cloud.google.com/gke-nodepool", "eks.amazonaws.com/nodegroup", "kubernetes.azure.com/agentpool",
               "agentpool", "karpenter.sh/nodepool", "oci.oraclecloud.com/node-pool-id")
_DRIVER = re.compile(r"\d{2,4}\.\d{1,3}(\.\d{1,3})?")
_INT = re.compile(r"\d{1,4}")
_ARCH = {"amd64": Arch.X86_64, "x86_64": Arch.X86_64, "arm64": Arch.AARCH64, "aarch64": Arch.AARCH64}

# (model text) -> (model name, compute capability) from the knowledge base's GPU table, or None
GpuLookup = Callable[[str], "tuple[str, str] | None"]


def kb_lookup(kb) -> GpuLookup:
    def lookup(name: str):
        gpu = kb.find_gpu(name)
        return (gpu.name, gpu.cc) if gpu else None
    return lookup


def read_document(text: str, origin: str, lookup: GpuLookup) -> list[Member]:
    """The machines one file describes; every problem in it is one line of the FleetInputError."""
    stripped = text.lstrip()
    if stripped.startswith(("{", "[")):
        try:
            doc = parse_structured(text, origin, "JSON")
        except StructuredInputError as exc:
            if exc.syntax and stripped.startswith("["):  # a TOML inventory starts with [[machine]]
                return read_inventory(text, origin, lookup)
            raise FleetInputError([str(exc)]) from None
        if isinstance(doc, dict) and doc.get("kind") in ("List", "NodeList") and isinstance(doc.get("items"), list):
            return read_nodes(doc["items"], origin, lookup)
        if isinstance(doc, dict) and doc.get("kind") == "Node":
            return read_nodes([doc], origin, lookup)
        if isinstance(doc, dict) and "schema" in doc:
            return [read_detect_report(doc, origin, lookup)]
        raise FleetInputError([f"{origin}: neither a `kubectl get nodes -o json` document (kind List of Nodes) nor "
                               f"a `stackresolve detect --format json` report ({DETECT_SCHEMA})"])
    return read_inventory(text, origin, lookup)


# -- Kubernetes --------------------------------------------------------------------------------------------
def read_nodes(items: list, origin: str, lookup: GpuLookup) -> list[Member]:
    members, problems = [], []
    for index, item in enumerate(items):
        meta = item.get("metadata") if isinstance(item, dict) else None
        name = meta.get("name") if isinstance(meta, dict) else None
        if not isinstance(name, str) or not name:
            problems.append(f"{origin}: item {index}: not a Node (no metadata.name)")
            continue
        labels = meta.get("labels") or {}
        where = f"{origin}: node {safe(name)}"
        if not isinstance(labels, dict) or not all(isinstance(k, str) and isinstance(v, str)
                                                   for k, v in labels.items()):
            problems.append(f"{where}: metadata.labels is not a map of strings")
            continue
        try:
            members.append(node_member(name, labels, item.get("status") or {}, origin, lookup))
        except ValueError as exc:
            problems.append(f"{where}: {exc}")
    if problems:
        raise FleetInputError(problems)
    return members


def node_member(name: str, labels: dict[str, str], status: Any, origin: str, lookup: GpuLookup) -> Member:
    info = status.get("nodeInfo") if isinstance(status, dict) else None
    info = info if isinstance(info, dict) else {}
    os_text = str(labels.get("kubernetes.io/os") or info.get("operatingSystem") or "linux")
    arch_text = str(labels.get("kubernetes.io/arch") or info.get("architecture") or "amd64")
    if os_text not in ("linux", "windows"):
        raise ValueError(f"kubernetes.io/os {safe(os_text)!r}: not linux or windows")
    if arch_text not in _ARCH:
        raise ValueError(f"kubernetes.io/arch {safe(arch_text)!r}: use amd64 or arm64")
    pool = next((labels[k] for k in POOL_LABELS if labels.get(k)), None)
    base = dict(name=name, origin=origin, os=Os(os_text), arch=_ARCH[arch_text], labels=labels, pool=pool,
                distro=labels.get("feature.node.kubernetes.io/system-os_release.ID"),
                release=labels.get("feature.node.kubernetes.io/system-os_release.VERSION_ID"))
    product = labels.get(GFD + "gpu.product")
    major, minor = labels.get(GFD + "gpu.compute.major"), labels.get(GFD + "gpu.compute.minor")
    if product is None and major is None:
        capacity = status.get("capacity") if isinstance(status, dict) else None
        gpu_capacity = capacity.get("nvidia.com/gpu") if isinstance(capacity, dict) else None
        has_gpus = isinstance(gpu_capacity, str) and gpu_capacity not in ("0", "")  # a quantity is a string
        note = ("has nvidia.com/gpu capacity but no GPU Feature Discovery labels (nvidia.com/gpu.product): "
                "planned as a CPU machine" if has_gpus else
                "no GPU Feature Discovery labels (nvidia.com/gpu.product): a CPU machine")
        return Member(**base, notes=(note,))
    gpu = label_gpu(product, major, minor, lookup)
    count = labels.get(GFD + "gpu.count")
    if count is not None and not _INT.fullmatch(count):
        raise ValueError(f"{GFD}gpu.count {safe(count)!r}: not a number")
    notes = () if gpu.model else (f"{GFD}gpu.product {safe(product)!r} is not in the GPU table: planned by its "
                                  f"compute capability labels ({gpu.cc})",)
    return Member(**base, gpus=(gpu,), driver=label_driver(labels), gpu_count=int(count) if count else None,
                  notes=notes)


def label_gpu(product: str | None, major: str | None, minor: str | None, lookup: GpuLookup) -> GpuFact:
    """The GPU from gpu.product and gpu.compute.major/minor; the compute capability labels win (GFD reads them
    from NVML), the product is looked up where they are missing (MIG devices have none)."""
    model = model_of_product(product) if product else ""
    known = lookup(model) if model else None
    if major is not None or minor is not None:
        if major is None or minor is None or not _INT.fullmatch(major) or not _INT.fullmatch(minor):
            raise ValueError(f"{GFD}gpu.compute.major/minor {safe(major)!r}/{safe(minor)!r}: not two numbers")
        return GpuFact(product or "", f"{int(major)}.{int(minor)}", known[0] if known else "")
    if known is None:
        raise ValueError(f"{GFD}gpu.product {safe(product)!r}: a GPU model the knowledge base does not know, and no "
                         f"{GFD}gpu.compute.major/minor labels give its compute capability (GFD writes them for "
                         f"whole GPUs; `stackresolve gpus` lists known models)")
    return GpuFact(product or "", known[1], known[0])


def model_of_product(product: str) -> str:
    """'NVIDIA-A100-SXM4-40GB-MIG-1g.5gb' -> 'NVIDIA A100 SXM4 40GB'; 'Tesla-T4-SHARED' -> 'Tesla T4'."""
    model = re.sub(r"-SHARED$", "", product)
    model = re.sub(r"-MIG-.*$", "", model)
    return model.replace("-", " ")


def label_driver(labels: dict[str, str]) -> str | None:
    full = labels.get(GFD + "cuda.driver-version.full")
    if full is not None:
        if not _DRIVER.fullmatch(full):
            raise ValueError(f"{GFD}cuda.driver-version.full {safe(full)!r}: not a driver version such as "
                             f"550.107.02")
        return full
    major, minor = labels.get(GFD + "cuda.driver.major"), labels.get(GFD + "cuda.driver.minor")
    rev = labels.get(GFD + "cuda.driver.rev", "")
    if major is None and minor is None:
        return None
    version = ".".join(p for p in (major or "", minor or "", rev) if p)
    if major is None or minor is None or not _DRIVER.fullmatch(version):
        raise ValueError(f"{GFD}cuda.driver.major/minor/rev {safe(major)!r}/{safe(minor)!r}/{safe(rev)!r}: not a "
                         f"driver version")
    return version


# -- detect reports ----------------------------------------------------------------------------------------
def read_detect_report(doc: dict, origin: str, lookup: GpuLookup) -> Member:
    schema = doc.get("schema")
    if schema != DETECT_SCHEMA:
        raise FleetInputError([f"{origin}: a report of schema {safe(str(schema))!r}; accepted: {DETECT_SCHEMA} "
                               f"(`stackresolve detect --format json`)"])
    name = origin.rsplit("/", 1)[-1].removesuffix(".json")
    try:
        return detect_member(doc, name, origin, lookup)
    except (ValueError, TypeError, AttributeError) as exc:
        raise FleetInputError([f"{origin}: machine {safe(name)}: {exc}"]) from None


def detect_member(doc: dict, name: str, origin: str, lookup: GpuLookup) -> Member:
    shapes = {"os": dict, "driver": (dict, type(None)), "gpus": list}
    for key, shape in shapes.items():
        if not isinstance(doc.get(key), shape):
            raise ValueError(f"'{key}' is not as detect@1 writes it (an object for os and driver, a list for gpus)")
    if not all(isinstance(g, dict) for g in doc["gpus"]):
        raise ValueError("'gpus' holds something other than GPU objects")
    check_types(doc["os"], "os", {"system": str, "wsl": bool, "distro": str, "release": str, "arch": str})
    check_types(doc["driver"] or {}, "driver", {"version": str})
    for index, gpu in enumerate(doc["gpus"]):
        check_types(gpu, f"gpus[{index}]", {"name": str, "model": str, "compute_capability": str})
    os_doc = doc.get("os") or {}
    system = "wsl2" if os_doc.get("wsl") else os_doc.get("system")
    if system not in Os.names():
        raise ValueError(f"os.system {safe(str(system))!r}: not one of linux, windows, macos")
    arch = _ARCH.get(str(os_doc.get("arch") or "x86_64").lower())
    if arch is None:
        raise ValueError(f"os.arch {safe(str(os_doc.get('arch')))!r}: use x86_64 or aarch64")
    driver_doc = doc.get("driver") or {}
    driver = driver_doc.get("version")
    if driver is not None and not _DRIVER.fullmatch(str(driver)):
        raise ValueError(f"driver.version {safe(str(driver))!r}: not a driver version")
    gpus, notes = [], []
    for gpu in doc.get("gpus") or []:
        gpu_name = gpu.get("name") or ""
        cc = gpu.get("compute_capability")
        known = lookup(gpu.get("model") or gpu_name) if (gpu.get("model") or gpu_name) else None
        if cc is None and known is None:
            raise ValueError(f"GPU {safe(gpu_name or str(gpu.get('index')))!r}: no compute capability, and the "
                             f"knowledge base does not know the model")
        if cc is not None and not re.fullmatch(r"\d{1,2}\.\d", str(cc)):
            raise ValueError(f"GPU {safe(gpu_name)!r}: compute_capability {safe(str(cc))!r} is not major.minor")
        gpus.append(GpuFact(gpu_name, str(cc) if cc else known[1], known[0] if known else ""))
    if not gpus:
        notes.append("the report lists no NVIDIA GPU: a CPU machine")
    unique = tuple(dict.fromkeys(gpus))
    return Member(name=name, origin=origin, os=Os(system), arch=arch, gpus=unique, driver=driver,
                  gpu_count=len(gpus) or None, distro=os_doc.get("distro"), release=os_doc.get("release"),
                  notes=tuple(notes))


def check_types(obj: dict, where: str, types: dict[str, type]) -> None:
    """Each field present and not null is of its type as detect@1 writes it: a bool is not a number, a number not a
    string (a driver 470.82 written as a JSON number would read as another version)."""
    for key, kind in types.items():
        value = obj.get(key)
        if value is not None and type(value) is not kind:
            raise ValueError(f"{where}.{key} is {json_type(value)}, not {json_type(kind())} as detect@1 writes it")


def json_type(value) -> str:
    return {bool: "a boolean", int: "a number", float: "a number", str: "a string", list: "a list",
            dict: "an object"}.get(type(value), type(value).__name__)


# -- the inventory file ------------------------------------------------------------------------------------
def read_inventory(text: str, origin: str, lookup: GpuLookup) -> list[Member]:
    try:
        doc = parse_structured(text, origin, "TOML")
    except StructuredInputError as exc:
        if not exc.syntax:
            raise FleetInputError([str(exc)]) from None
        raise FleetInputError([f"{origin}: neither JSON (a kubectl nodes document or a detect report) nor a TOML "
                               f"inventory ({str(exc).removeprefix(f'{origin}: not valid TOML (')[:-1]})"]) from None
    machines = doc.get("machine")
    if not isinstance(machines, list) or not machines:
        raise FleetInputError([f"{origin}: an inventory lists its machines as [[machine]] tables; none found"])
    members, problems = [], []
    for index, entry in enumerate(machines):
        if not isinstance(entry, dict):
            problems.append(f"{origin}: machine {index}: not a [[machine]] table")
            continue
        label = entry.get("name") or entry.get("names") or index
        try:
            members += inventory_members(entry, origin, lookup)
        except ValueError as exc:
            problems.append(f"{origin}: machine {safe(str(label))}: {exc}")
    if problems:
        raise FleetInputError(problems)
    return members


def inventory_members(entry: dict, origin: str, lookup: GpuLookup) -> list[Member]:
    # lazy: no start-up gain (already loaded by then); kept beside its use
    from difflib import get_close_matches

    for key in entry:
        if key not in INVENTORY_KEYS:
            near = get_close_matches(key, INVENTORY_KEYS, n=1)
            raise ValueError(f"unknown key {safe(key)!r}" + (f" (did you mean {near[0]}?)" if near else "") +
                             f"; keys: {', '.join(INVENTORY_KEYS)}")
    names = entry.get("names") or ([entry["name"]] if "name" in entry else [])
    if not isinstance(names, list) or not names or not all(isinstance(n, str) and n for n in names):
        raise ValueError("give name = \"...\" or names = [\"...\", ...]")
    values = {k: entry[k] for k in ("gpu", "gpu_cc", "driver", "os", "arch", "distro", "release") if k in entry}
    if not all(isinstance(v, str) for v in values.values()):
        raise ValueError("gpu, gpu_cc, driver, os, arch, distro and release are strings")
    os_name = values.get("os", "linux").lower()
    if os_name not in ("linux", "windows", "wsl2"):
        raise ValueError(f"os {safe(os_name)!r}: use linux, windows or wsl2")
    arch = _ARCH.get(values.get("arch", "x86_64").lower())
    if arch is None:
        raise ValueError(f"arch {safe(values['arch'])!r}: use x86_64 or aarch64")
    driver = values.get("driver")
    if driver is not None and not is_driver_version(driver):  # the reading --driver uses (a branch too)
        raise ValueError(f"driver {safe(driver)!r}: not a driver version such as 470.82.01 or a branch such as 580")
    gpus: tuple[GpuFact, ...] = ()
    if "gpu" in values or "gpu_cc" in values:
        known = lookup(values["gpu"]) if "gpu" in values else None
        cc = values.get("gpu_cc")
        if cc is not None:  # the reading --gpu-cc uses ('8.6', 'sm_86', '86')
            read = read_compute_capability(cc)
            if read is None:
                raise ValueError(f"gpu_cc {safe(cc)!r}: not a compute capability such as 8.6")
            cc = read
        if cc is None and known is None:
            raise ValueError(f"gpu {safe(values['gpu'])!r}: a model the knowledge base does not know; add gpu_cc = "
                             f"\"X.Y\" (`stackresolve gpus` lists known models)")
        gpus = (GpuFact(values.get("gpu", ""), cc or known[1], known[0] if known else ""),)
    count = entry.get("gpu_count")
    if count is not None and (type(count) is not int or count < 1):  # TOML true is a bool, and bool is an int
        raise ValueError(f"gpu_count {safe(str(count).lower())!r}: a positive whole number such as 4")
    notes = () if gpus else ("no gpu or gpu_cc given: a CPU machine",)
    return [Member(name=n, origin=origin, os=Os(os_name), arch=arch, gpus=gpus, driver=driver, gpu_count=count,
                   distro=values.get("distro"), release=values.get("release"), notes=notes) for n in names]


def safe(text: str | None) -> str:
    """A value from the input as it may appear in a message: printable, one line, not too long."""
    if text is None:
        return "None"
    cleaned = "".join(c if c.isprintable() else "?" for c in str(text))
    return cleaned if len(cleaned) <= 80 else cleaned[:77] + "..."
