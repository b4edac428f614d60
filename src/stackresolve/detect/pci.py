"""NVIDIA GPUs found on the PCI bus, with or without a driver: the probe of last resort for a machine whose NVIDIA
driver is not installed yet, and a way to name GPUs that the banner truncates.

Where the ids come from:
  Linux    /sys/bus/pci/devices/<domain:bus:dev.fn>/{vendor,device,class}: vendor 0x10de, class 0x0300xx (VGA)
           or 0x0302xx (3D controller); `lspci -n` (`-nn` also parses) when that folder cannot be read
  Windows  Win32_VideoController's PNPDeviceID, "PCI\\VEN_10DE&DEV_1B06&SUBSYS_...", through PowerShell
           (display adapters only; a GPU without a driver is a "Microsoft Basic Display Adapter" there)
WSL2 and Jetson have no NVIDIA PCI device to see (a paravirtual GPU; a system-on-chip), macOS no NVIDIA GPU.

Device id -> name comes from the injected PCI table (constraints/pci_ids.toml, from pci.ids): names read
"GP102 [GeForce GTX 1080 Ti]", the chip code and then, in brackets, NVIDIA's marketing name. The marketing name is
what the GPU table (gpus.toml) knows; see `model_candidates` for the spellings tried.
"""

from __future__ import annotations

import json
import re

from stackresolve.model.values import ComputeCapability
from stackresolve.model.record import record

NVIDIA_VENDOR = 0x10DE
SYSFS_DEVICES = "/sys/bus/pci/devices"
DISPLAY_CLASSES = (0x0300, 0x0302)  # VGA compatible controller, 3D controller (class code >> 8)

# Win32_VideoController as CSV: csv is in every PowerShell (2.0+), unlike ConvertTo-Json (3.0+)
POWERSHELL_QUERY = ("Get-CimInstance Win32_VideoController | Select-Object Name,PNPDeviceID | "
                    "ConvertTo-Csv -NoTypeInformation")


def lspci_argv() -> list[str]:
    return ["lspci", "-n"]


def powershell_argv() -> list[str]:
    return ["powershell.exe", "-NoProfile", "-NonInteractive", "-Command", POWERSHELL_QUERY]


@record
class PciGpu:
    device: int  # PCI device id (0x1b06)
    bus_id: str | None = None  # "0000:01:00.0" (Linux); None on Windows
    name: str | None = None  # the name the OS printed (Windows), when it is a real one

    @property
    def pci_id(self) -> str:
        return f"{NVIDIA_VENDOR:04x}:{self.device:04x}"


def _hex(text: str | None) -> int | None:
    try:
        return int((text or "").strip(), 16)
    except ValueError:
        return None


# --- Linux ----------------------------------------------------------------------------------------------
def scan_sysfs(fs) -> list[PciGpu] | None:
    """NVIDIA display devices under /sys/bus/pci/devices, in bus order; None when the folder cannot be read."""
    entries = fs.listdir(SYSFS_DEVICES)
    if not entries:
        return None
    out = []
    for entry in entries:  # listdir is sorted: "0000:01:00.0" < "0000:02:00.0" is bus order
        base = SYSFS_DEVICES + "/" + entry
        if _hex(fs.read_text(base + "/vendor", limit=64)) != NVIDIA_VENDOR:
            continue
        cls = _hex(fs.read_text(base + "/class", limit=64))
        device = _hex(fs.read_text(base + "/device", limit=64))
        if cls is None or device is None or (cls >> 8) not in DISPLAY_CLASSES:
            continue
        out.append(PciGpu(device=device, bus_id=entry))
    return out


def parse_lspci(text: str | None) -> list[PciGpu]:
    """NVIDIA display devices in `lspci -n` ("01:00.0 0300: 10de:1b06 (rev a1)") or `lspci -nn`
    ("01:00.0 VGA compatible controller [0300]: NVIDIA Corporation GP102 [...] [10de:1b06] (rev a1)") output.
    Indented detail lines (`-v`, `-k`) and other vendors are skipped."""
    out = []
    for line in (text or "").splitlines():
        m = re.match(r"^((?:[0-9a-fA-F]{4,8}:)?[0-9a-fA-F]{2}:[0-9a-fA-F]{2}\.[0-7])\s+(.*)$", line)
        if not m:
            continue
        rest = m.group(2)
        numeric = re.match(r"^([0-9a-fA-F]{4}):\s+([0-9a-fA-F]{4}):([0-9a-fA-F]{4})\b", rest)
        if numeric:
            cls, vendor, device = (int(g, 16) for g in numeric.groups())
        else:
            cls_m = re.search(r"\[([0-9a-fA-F]{4})\]:", rest)
            ids = re.findall(r"\[([0-9a-fA-F]{4}):([0-9a-fA-F]{4})\]", rest)
            if not cls_m or not ids:
                continue
            cls = int(cls_m.group(1), 16)
            vendor, device = (int(g, 16) for g in ids[-1])  # the last pair: names may hold brackets too
        if vendor == NVIDIA_VENDOR and cls in DISPLAY_CLASSES:
            bus = m.group(1)
            out.append(PciGpu(device=device, bus_id=bus if bus.count(":") == 2 else "0000:" + bus))
    return out


# --- Windows --------------------------------------------------------------------------------------------
_GENERIC_NAMES = ("microsoft basic display", "standard vga", "video controller", "3d video controller")


def _windows_gpu(name: str | None, pnp_id: str | None) -> PciGpu | None:
    m = re.search(r"VEN_([0-9A-Fa-f]{4})&DEV_([0-9A-Fa-f]{4})", pnp_id or "")
    if not m or int(m.group(1), 16) != NVIDIA_VENDOR:
        return None
    name = (name or "").strip() or None
    if name and (any(g in name.lower() for g in _GENERIC_NAMES) or not name.isprintable()):
        name = None  # the driver-less stand-in name says nothing about the GPU
    return PciGpu(device=int(m.group(2), 16), name=name)


def parse_windows_adapters(text: str | None) -> list[PciGpu]:
    """NVIDIA adapters in PowerShell output of Win32_VideoController or Get-PnpDevice: CSV (ConvertTo-Csv),
    JSON (ConvertTo-Json), a list (Format-List: "Name : ..." / "PNPDeviceID : ...", records split by blank
    lines) or a table (one adapter per line, the PnP id last)."""
    text = (text or "").lstrip("\ufeff")
    stripped = text.strip()
    pairs: list[tuple[str | None, str | None]] = []
    if stripped.startswith(("[", "{")):
        try:
            doc = json.loads(stripped)
        except ValueError:
            doc = None
        for item in (doc if isinstance(doc, list) else [doc]):
            if isinstance(item, dict):
                pairs.append((_first(item, ("Name", "FriendlyName", "Caption")),
                              _first(item, ("PNPDeviceID", "InstanceId", "DeviceID"))))
    elif stripped.startswith('"'):
        # lazy: start-up (csv, only this path)
        import csv
        import io

        for row in csv.DictReader(io.StringIO(stripped)):
            pairs.append((_first(row, ("Name", "FriendlyName", "Caption")),
                          _first(row, ("PNPDeviceID", "InstanceId", "DeviceID"))))
    else:
        for block in re.split(r"\n\s*\n", text.replace("\r\n", "\n")):
            fields = {}
            for line in block.splitlines():
                key, sep, value = line.partition(":")
                if sep and re.match(r"^\s*[A-Za-z_][A-Za-z0-9_]*\s*$", key):
                    fields.setdefault(key.strip(), value.strip())
            pnp = _first(fields, ("PNPDeviceID", "InstanceId", "DeviceID"))
            if pnp and "VEN_" in pnp.upper():
                pairs.append((_first(fields, ("Name", "FriendlyName", "Caption")), pnp))
                continue
            for line in block.splitlines():  # a table: "<name>   PCI\VEN_10DE&DEV_...\..."
                m = re.match(r"^(.*?)\s+((?:PCI|pci)\\\S+)\s*$", line)
                if m:
                    pairs.append((m.group(1), m.group(2)))
    out = []
    for name, pnp in pairs:
        gpu = _windows_gpu(name, pnp)
        if gpu is not None:
            out.append(gpu)
    return out


def _first(mapping: dict, keys) -> str | None:
    for key in keys:
        value = mapping.get(key)
        if isinstance(value, str) and value.strip():
            return value
    return None


# --- names ----------------------------------------------------------------------------------------------
# Words pci.ids adds to a marketing name for a board variant of the same chip: dropped to find the model.
_VARIANT_WORDS = (r"Rev\. ?\w+", r"OEM", r"Lite Hash Rate", r"LHR", r"\d+ ?GB", r"GDDR\dX?", r"Mac Edition",
                  r"Mobile", r"Max-Q", r"Refresh", r"Engineering Sample")


def marketing_name(pci_name: str | None) -> str | None:
    """"GP102 [GeForce GTX 1080 Ti]" -> "GeForce GTX 1080 Ti": the bracket that ends the name."""
    m = re.search(r"\[([^\[\]]+)\]\s*$", pci_name or "")
    return m.group(1).strip() if m else None


def chip_family(pci_name: str | None) -> str | None:
    """"GP102 [...]" -> "GP", "TU104GL [...]" -> "TU", "GA107BM / GN20-P0 [...]" -> "GA": the letters NVIDIA's
    chip codes start with, which differ from one GPU generation to the next."""
    m = re.match(r"^\s*([A-Za-z]+)[0-9]", pci_name or "")
    return m.group(1).upper() if m else None


def model_candidates(pci_name: str | None) -> list[str]:
    """Names to look up in the GPU table, most specific first: the bracketed name as written; each of its
    " / " alternatives ("GeForce 9600 GT / 9800 GT": the second borrows the first's leading words); each of
    those without the variant words pci.ids appends ("Rev. A", "OEM", "12GB", "Mobile", "Max-Q", ...);
    a "Mobile" / "Max-Q" part also as "... Laptop GPU", the name NVIDIA's tables use for laptop parts."""
    full = marketing_name(pci_name)
    if not full:
        return []
    parts = [p.strip() for p in full.split(" / ") if p.strip()]
    alternatives = [parts[0]]
    lead = parts[0].split()
    for part in parts[1:]:
        words = part.split()
        if words and words[0] in lead and lead.index(words[0]) == 0:
            alternatives.append(part)
        elif words and len(lead) > len(words):
            alternatives.append(" ".join(lead[:len(lead) - len(words)] + words))
        else:
            alternatives.append(part)
    out = [full]
    variant = re.compile(r"\s+(?:" + "|".join(_VARIANT_WORDS) + r")\s*$", re.IGNORECASE)
    for alt in alternatives:
        out.append(alt)
        base = alt
        while True:
            shorter = variant.sub("", base)
            if shorter == base:
                break
            base = shorter
        if base != alt:
            if re.search(r"\b(Mobile|Max-Q)\b", alt, re.IGNORECASE):
                out.append(base + " Laptop GPU")
            out.append(base)
    seen: list[str] = []
    for name in out:
        if name and name not in seen:
            seen.append(name)
    return seen


@record
class PciModel:
    """What the tables say about one PCI device."""

    pci_name: str | None  # the pci.ids name ("GP102 [GeForce GTX 1080 Ti]"); None when the table lacks the id
    name: str | None  # the name to show: the OS's own, else the bracketed marketing name
    model: str | None  # the GPU table's model name, when one matched
    cc: str | None  # its compute capability; None when unknown or ambiguous
    note: str = ""  # why cc is None although a model matched


def resolve(gpus: list[PciGpu], pci_table, gpu_lookup) -> list[PciModel]:
    """Name and compute capability of each PCI GPU from the PCI table (device id -> pci.ids name) and the GPU
    table (`gpu_lookup(name)` -> a record with `.name` and `.cc`, or None).

    One marketing name can cover chips of different generations ("GeForce GT 730" is a GF108, a GK107 and a
    GK208B in pci.ids, of compute capability 2.1, 3.0 and 3.5): when pci.ids gives the matched name to chips of
    more than one family, the name does not tell the compute capability and none is given."""
    families: dict[str, set[str]] | None = None
    out = []
    for gpu in gpus:
        pci_name = pci_table.get(gpu.device) if pci_table is not None else None
        shown = gpu.name or marketing_name(pci_name)
        found = None
        for candidate in ([gpu.name] if gpu.name else []) + model_candidates(pci_name):
            hit = _lookup(gpu_lookup, candidate) if gpu_lookup is not None else None
            if hit is not None:
                found = (candidate, *hit)
                break
        if found is None:
            out.append(PciModel(pci_name, shown, None, None))
            continue
        candidate, model, cc = found
        if families is None:
            families = _family_index(pci_table) if pci_table is not None else {}
        named = families.get(candidate, set())
        own = chip_family(pci_name)
        if own is not None and named - {own}:
            out.append(PciModel(pci_name, shown, model, None,
                                f'pci.ids gives "{candidate}" to chips of several generations '
                                f"({', '.join(sorted(named | {own}))})"))
        else:
            out.append(PciModel(pci_name, shown, model, cc))
    return out


def _lookup(gpu_lookup, name: str) -> tuple[str, str] | None:
    try:
        hit = gpu_lookup(name)
    except Exception:  # an injected look-up must not take detection down
        return None
    if hit is None:
        return None
    try:
        cc = str(ComputeCapability.parse(getattr(hit, "cc", None)))
    except (TypeError, ValueError):  # not text (an injected look-up), or no compute capability
        return None
    return str(getattr(hit, "name", name) or name), cc


def _family_index(pci_table) -> dict[str, set[str]]:
    """Every model candidate of every pci.ids name -> the chip families that carry it."""
    index: dict[str, set[str]] = {}
    for name in pci_table.values():
        family = chip_family(name)
        if family:
            for candidate in model_candidates(name):
                index.setdefault(candidate, set()).add(family)
    return index
