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
  A node without GFD labels may carry AMD's node labeller labels (ROCm/k8s-device-plugin
  cmd/k8s-node-labeller/main.go createLabels, README "Example result"), the AMD GPU operator's labeller:
    amd.com/gpu.device-id           the PCI device id ("74a1") when the node has one kind of GPU; with several,
                                    amd.com/gpu.device-id.<id> = count. beta.amd.com/gpu.device-id.<id> = count is
                                    written either way (and, older labellers, only that)
    amd.com/gpu.product-name        the product name with spaces as '_', parentheses dropped (one kind only)
    amd.com/gpu.family              a two-letter family ("AI", "NV") or "GC_11_0_0": not a gfx target
  The gfx target comes from the device id through the AMD GPU table (the injected vendor look-up).
  Or Intel's (intel/intel-device-plugins-for-kubernetes cmd/gpu_plugin/labels.md, "Labels from NFD rules"):
    gpu.intel.com/device-id.<class>-<id>.present / .count   ("0300-56a0"), every Intel GPU
    gpu.intel.com/family / product / device.count            data-center GPUs ("Flex_Series", "Flex_170")
  AMD and Intel nodes are read into groups with their gfx target / device family; planning them is for
  `stackresolve plan` on its own (the fleet decision plans CUDA stacks).
- `stackresolve detect --format json` reports (schema stackresolve/detect@1), one machine per file; a report
  without NVIDIA GPUs but with amd_gpus / intel_gpus is an AMD / Intel machine.
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

from stackresolve.fleet.inventory import FleetInputError, GpuFact, Member
from stackresolve.files.read import StructuredInputError, parse_structured
from stackresolve.model.enums import Arch, Os
from stackresolve.model.values import ComputeCapability, DriverVersion, ValueTextError

DETECT_SCHEMA = "stackresolve/detect@1"
INVENTORY_KEYS = ("name", "names", "gpu", "gpu_cc", "gpu_count", "driver", "os", "arch", "distro", "release")
GFD = "nvidia.com/"
# Labels managed Kubernetes services put the node pool's name in (GKE, EKS, AKS, Karpenter, OKE).
POOL_LABELS = ("cloud.google.com/gke-nodepool", "eks.amazonaws.com/nodegroup", "kubernetes.azure.com/agentpool",
               "agentpool", "karpenter.sh/nodepool", "oci.oraclecloud.com/node-pool-id")
_INT = re.compile(r"\d{1,4}")
_ARCH = {"amd64": Arch.X86_64, "x86_64": Arch.X86_64, "arm64": Arch.AARCH64, "aarch64": Arch.AARCH64}

# (model text) -> (model name, compute capability) from the knowledge base's GPU table, or None
GpuLookup = Callable[[str], "tuple[str, ComputeCapability] | None"]
# (PCI id "1002:74a1" / "8086:56a0") -> (model name, gfx target for AMD / device family for Intel), or None
VendorLookup = Callable[[str], "tuple[str, str] | None"]
AMD_LABELS = ("amd.com/gpu.", "beta.amd.com/gpu.")
INTEL_LABELS = "gpu.intel.com/"
INTEL_FAMILIES = {"Flex_Series": "data-center-flex", "Max_Series": "data-center-max"}  # labels.md's two rules
_PCI_DEVICE = re.compile(r"[0-9a-fA-F]{4}")
_GFX = re.compile(r"gfx[0-9a-f]{3,5}")
_INTEL_ID = re.compile(r"gpu\.intel\.com/device-id\.03[0-9a-fA-F]{2}-([0-9a-fA-F]{4})\.(present|count)")


def kb_lookup(kb) -> GpuLookup:
    def lookup(name: str):
        gpu = kb.find_gpu(name)
        return (gpu.name, ComputeCapability.parse(gpu.cc)) if gpu else None
    return lookup


def read_value(parse, text, where: str, **options):
    """`parse(text)` (a value's one parser, as --gpu-cc and --driver read it); ValueError naming `where` and what
    is accepted where it refuses the text."""
    try:
        return parse(text, **options)
    except ValueTextError as exc:
        raise ValueError(f"{where} {exc}") from None


def read_document(text: str, origin: str, lookup: GpuLookup, vendor_lookup: VendorLookup | None = None
                  ) -> list[Member]:
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
            return read_nodes(doc["items"], origin, lookup, vendor_lookup)
        if isinstance(doc, dict) and doc.get("kind") == "Node":
            return read_nodes([doc], origin, lookup, vendor_lookup)
        if isinstance(doc, dict) and "schema" in doc:
            return [read_detect_report(doc, origin, lookup, vendor_lookup)]
        raise FleetInputError([f"{origin}: neither a `kubectl get nodes -o json` document (kind List of Nodes) nor "
                               f"a `stackresolve detect --format json` report ({DETECT_SCHEMA})"])
    return read_inventory(text, origin, lookup)


# -- Kubernetes --------------------------------------------------------------------------------------------
def read_nodes(items: list, origin: str, lookup: GpuLookup, vendor_lookup: VendorLookup | None = None
               ) -> list[Member]:
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
            members.append(node_member(name, labels, item.get("status") or {}, origin, lookup, vendor_lookup))
        except ValueError as exc:
            problems.append(f"{where}: {exc}")
    if problems:
        raise FleetInputError(problems)
    return members


def node_member(name: str, labels: dict[str, str], status: Any, origin: str, lookup: GpuLookup,
                vendor_lookup: VendorLookup | None = None) -> Member:
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
        other = amd_node_gpus(labels, status, vendor_lookup) or intel_node_gpus(labels, vendor_lookup)
        if other is not None:
            gpus, count, notes = other
            return Member(**base, gpus=gpus, gpu_count=count, notes=notes)
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


def _vendor(vendor_lookup: VendorLookup | None, pci_id: str) -> tuple[str, str] | None:
    if vendor_lookup is None:
        return None
    try:
        hit = vendor_lookup(pci_id)
    except Exception:  # an injected look-up must not take the reader down
        return None
    return hit if isinstance(hit, tuple) and len(hit) == 2 and all(isinstance(x, str) for x in hit) else None


def amd_node_gpus(labels: dict[str, str], status: Any, vendor_lookup: VendorLookup | None
                  ) -> tuple[tuple[GpuFact, ...], int | None, tuple[str, ...]] | None:
    """The AMD GPUs AMD's node labeller describes (gpus, count, notes); None when it labelled nothing here."""
    if not any(k.startswith(AMD_LABELS) for k in labels):
        return None
    counts: dict[str, int] = {}
    for prefix in AMD_LABELS:
        single = labels.get(prefix + "device-id")
        if single is not None:
            if not _PCI_DEVICE.fullmatch(single):
                raise ValueError(f"{prefix}device-id {safe(single)!r}: not a PCI device id such as 74a1")
            counts.setdefault(single.lower(), 0)
        for key, value in labels.items():
            if key.startswith(prefix + "device-id."):
                device = key[len(prefix + "device-id."):]
                if not _PCI_DEVICE.fullmatch(device) or not _INT.fullmatch(value):
                    raise ValueError(f"{safe(key)}={safe(value)!r}: not <PCI device id> = <count>")
                counts[device.lower()] = max(counts.get(device.lower(), 0), int(value))
    product = labels.get(AMD_LABELS[0] + "product-name") or labels.get(AMD_LABELS[1] + "product-name")
    product = product.replace("_", " ") if product else ""
    gpus, notes = [], []
    for device in sorted(counts):
        known = _vendor(vendor_lookup, f"1002:{device}")
        gfx = known[1] if known and _GFX.fullmatch(known[1]) else ""
        shown = product if len(counts) == 1 and product else f"AMD GPU 1002:{device}"
        gpus.append(GpuFact(shown, None, known[0] if known else "", vendor="amd", gfx=gfx))
        if not gfx:
            notes.append(f"AMD GPU 1002:{device} ({shown}) is not in the AMD GPU table: its gfx target is unknown")
    if not gpus:
        gpus.append(GpuFact(product or "AMD GPU", None, "", vendor="amd"))
        notes.append("AMD's node labeller gives no device id (amd.com/gpu.device-id): the gfx target is unknown")
    count = sum(counts.values()) or None
    capacity = status.get("capacity") if isinstance(status, dict) else None
    held = capacity.get("amd.com/gpu") if isinstance(capacity, dict) else None
    if count is None and isinstance(held, str) and _INT.fullmatch(held) and held != "0":
        count = int(held)
    return tuple(gpus), count, tuple(notes)


def intel_node_gpus(labels: dict[str, str], vendor_lookup: VendorLookup | None
                    ) -> tuple[tuple[GpuFact, ...], int | None, tuple[str, ...]] | None:
    """The Intel GPUs Intel's NFD rules describe (gpus, count, notes); None when they labelled nothing here."""
    counts: dict[str, int] = {}
    for key, value in labels.items():
        m = _INTEL_ID.fullmatch(key)
        if m is None:
            continue
        device = m.group(1).lower()
        if m.group(2) == "count":
            if not _INT.fullmatch(value):
                raise ValueError(f"{safe(key)}={safe(value)!r}: not a count")
            counts[device] = int(value)
        else:
            counts.setdefault(device, 0)
    family_label = labels.get(INTEL_LABELS + "family")
    product = labels.get(INTEL_LABELS + "product")
    if not counts and family_label is None and product is None:
        return None
    family = INTEL_FAMILIES.get(family_label or "", "")
    shown_product = product.replace("_", " ") if product else ""
    gpus, notes = [], []
    for device in sorted(counts) or [""]:
        known = _vendor(vendor_lookup, f"8086:{device}") if device else None
        shown = shown_product if (len(counts) <= 1 and shown_product) else (
            f"Intel GPU 8086:{device}" if device else "Intel GPU")
        gpus.append(GpuFact(shown, None, known[0] if known else "", vendor="intel",
                            family=family or (known[1] if known else "")))
        if not (family or known):
            notes.append(f"{shown} is not in the Intel GPU table: its device family is unknown")
    total = labels.get(INTEL_LABELS + "device.count")
    count = int(total) if total is not None and _INT.fullmatch(total) else (sum(counts.values()) or None)
    return tuple(gpus), count, tuple(notes)


def label_gpu(product: str | None, major: str | None, minor: str | None, lookup: GpuLookup) -> GpuFact:
    """The GPU from gpu.product and gpu.compute.major/minor; the compute capability labels win (GFD reads them
    from NVML), the product is looked up where they are missing (MIG devices have none)."""
    model = model_of_product(product) if product else ""
    known = lookup(model) if model else None
    if major is not None or minor is not None:
        if major is None or minor is None or not _INT.fullmatch(major) or not _INT.fullmatch(minor):
            raise ValueError(f"{GFD}gpu.compute.major/minor {safe(major)!r}/{safe(minor)!r}: not two numbers")
        cc = read_value(ComputeCapability.parse, f"{int(major)}.{int(minor)}", f"{GFD}gpu.compute.major/minor")
        return GpuFact(product or "", cc, known[0] if known else "")
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


def label_driver(labels: dict[str, str]) -> DriverVersion | None:
    full = labels.get(GFD + "cuda.driver-version.full")
    if full is not None:
        return read_value(DriverVersion.parse, full, f"{GFD}cuda.driver-version.full")
    major, minor = labels.get(GFD + "cuda.driver.major"), labels.get(GFD + "cuda.driver.minor")
    rev = labels.get(GFD + "cuda.driver.rev", "")
    if major is None and minor is None:
        return None
    version = ".".join(p for p in (major or "", minor or "", rev) if p)
    if major is None or minor is None:
        raise ValueError(f"{GFD}cuda.driver.major/minor/rev {safe(major)!r}/{safe(minor)!r}/{safe(rev)!r}: not a "
                         f"driver version")
    return read_value(DriverVersion.parse, version, f"{GFD}cuda.driver.major/minor/rev")


# -- detect reports ----------------------------------------------------------------------------------------
def read_detect_report(doc: dict, origin: str, lookup: GpuLookup, vendor_lookup: VendorLookup | None = None
                       ) -> Member:
    schema = doc.get("schema")
    if schema != DETECT_SCHEMA:
        raise FleetInputError([f"{origin}: a report of schema {safe(str(schema))!r}; accepted: {DETECT_SCHEMA} "
                               f"(`stackresolve detect --format json`)"])
    name = origin.rsplit("/", 1)[-1].removesuffix(".json")
    try:
        return detect_member(doc, name, origin, lookup, vendor_lookup)
    except (ValueError, TypeError, AttributeError) as exc:
        raise FleetInputError([f"{origin}: machine {safe(name)}: {exc}"]) from None


def detect_member(doc: dict, name: str, origin: str, lookup: GpuLookup, vendor_lookup: VendorLookup | None = None
                  ) -> Member:
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
    if driver is not None:  # a probe's reading: the driver parser's tolerant mode, as detect read it
        driver = read_value(DriverVersion.parse, driver, "driver.version", tolerant=True)
    gpus, notes = [], []
    for gpu in doc.get("gpus") or []:
        gpu_name = gpu.get("name") or ""
        cc = gpu.get("compute_capability")
        known = lookup(gpu.get("model") or gpu_name) if (gpu.get("model") or gpu_name) else None
        if cc is None and known is None:
            raise ValueError(f"GPU {safe(gpu_name or str(gpu.get('index')))!r}: no compute capability, and the "
                             f"knowledge base does not know the model")
        if cc is not None:
            cc = read_value(ComputeCapability.parse, cc, f"GPU {safe(gpu_name)!r}: compute_capability")
        gpus.append(GpuFact(gpu_name, cc or known[1], known[0] if known else ""))
    if not gpus:  # an AMD or Intel machine (an AMD integrated GPU beside an NVIDIA one is not planned for)
        gpus = detect_vendor_gpus(doc, vendor_lookup)
    if not gpus:
        notes.append("the report lists no NVIDIA GPU: a CPU machine")
    unique = tuple(dict.fromkeys(gpus))
    return Member(name=name, origin=origin, os=Os(system), arch=arch, gpus=unique, driver=driver,
                  gpu_count=len(gpus) or None, distro=os_doc.get("distro"), release=os_doc.get("release"),
                  notes=tuple(notes))


def detect_vendor_gpus(doc: dict, vendor_lookup: VendorLookup | None) -> list[GpuFact]:
    """The AMD GPUs (amd_gpus, with their gfx target) or Intel GPUs (intel_gpus) of a detect report."""
    out = []
    for key, vendor in (("amd_gpus", "amd"), ("intel_gpus", "intel")):
        entries = doc.get(key)
        if entries is None:
            continue
        if not isinstance(entries, list) or not all(isinstance(e, dict) for e in entries):
            raise ValueError(f"'{key}' is not a list of GPU objects as detect@1 writes it")
        for index, entry in enumerate(entries):
            check_types(entry, f"{key}[{index}]", {"gfx": str, "name": str, "pci_id": str})
            pci_id = entry.get("pci_id") or ""
            known = _vendor(vendor_lookup, pci_id) if pci_id else None
            if vendor == "amd":
                gfx = entry.get("gfx") or ""
                if not _GFX.fullmatch(gfx):
                    raise ValueError(f"amd_gpus[{index}].gfx {safe(gfx)!r}: not a gfx target such as gfx942")
                out.append(GpuFact(entry.get("name") or f"AMD GPU {pci_id}".strip(), None, known[0] if known else "",
                                   vendor="amd", gfx=gfx))
            else:
                out.append(GpuFact(entry.get("name") or f"Intel GPU {pci_id}".strip(), None,
                                   known[0] if known else "", vendor="intel", family=known[1] if known else ""))
        if out:
            break
    return out


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
    if driver is not None:  # the reading --driver uses (a branch too)
        driver = read_value(DriverVersion.parse, driver, "driver")
    gpus: tuple[GpuFact, ...] = ()
    if "gpu" in values or "gpu_cc" in values:
        known = lookup(values["gpu"]) if "gpu" in values else None
        cc = values.get("gpu_cc")
        if cc is not None:  # the reading --gpu-cc uses ('8.6', 'sm_86')
            cc = read_value(ComputeCapability.parse, cc, "gpu_cc")
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
