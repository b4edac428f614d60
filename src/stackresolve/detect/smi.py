"""Parsers for nvidia-smi output: CSV queries, `--query -u -x` XML, and the banner (the printed box).

The formats seen in the wild (tests/fixtures/detect/README.md has one real capture of each):
- banner: "Driver Version" (all drivers before 610) or "KMD Version" (610+); "CUDA Version" or "CUDA UMD Version"
  (610+), "ERR!" (WSL2) or "N/A" (Jetson) in place of a number, no CUDA field at all (340 legacy); the
  "NVIDIA-SMI x" tool version can differ from the driver (WSL2, snaps, containers with a stale tool);
  driver versions have 2 (Windows, WSL2, 340.108) or 3 parts (Linux, Jetson).
- CSV: one line per GPU, ", " separated; "[N/A]" / "[Not Supported]" for missing values (Jetson, older drivers);
  R470 refuses `compute_cap` with `Field "compute_cap" is not a valid field to query.` (exit status 2). Our query
  keeps the header line and the columns are read by name, whatever their order.
- `nvidia-smi -q`: "Key : value" lines; the header holds the driver ("Driver Version") and, from R410 on, the
  CUDA number ("CUDA Version"); one "GPU <bus id>" block per GPU ("Product Name", "FB Memory Usage / Total").
"""

from __future__ import annotations

import re
from dataclasses import dataclass, field

from stackresolve.model.numbers import is_dotted_version
from stackresolve.model.values import ComputeCapability, DriverVersion


# Query used by the CSV probe; the second form is the retry for drivers that refuse compute_cap (R470).
CSV_FIELDS = ("index", "pci.bus_id", "name", "compute_cap", "driver_version", "memory.total")
CSV_FIELDS_NO_CC = ("index", "pci.bus_id", "name", "driver_version", "memory.total")


def csv_argv(exe: str, fields=CSV_FIELDS) -> list[str]:
    # with the header: the columns are mapped by name, not by position
    return [exe, "--query-gpu=" + ",".join(fields), "--format=csv,nounits"]


def query_argv(exe: str) -> list[str]:
    return [exe, "-q"]


def xml_argv(exe: str) -> list[str]:
    return [exe, "--query", "-u", "-x"]


def banner_argv(exe: str) -> list[str]:
    return [exe]


_MISSING = {"", "n/a", "[n/a]", "[not supported]", "not supported", "[unknown error]", "err!", "[err!]",
            "[insufficient permissions]", "[gpu is lost]", "[requires reset]"}


def clean_value(value: str | None) -> str | None:
    """'[N/A]', 'N/A', 'ERR!', '[Not Supported]' ... -> None; otherwise the stripped value. Every value read from
    nvidia-smi passes here: one with control characters (a terminal escape in a GPU name) is no value at all."""
    if value is None:
        return None
    v = value.strip()
    if v.lower() in _MISSING or not v.isprintable():
        return None
    return v


def clean_version(value: str | None) -> str | None:
    v = clean_value(value)
    if v is None or not is_dotted_version(v):
        return None
    return v



def clean_driver(value: str | None) -> str | None:
    """A driver version a probe printed, as the one driver parser reads it in its tolerant mode (a probe may
    legitimately report a Windows display driver's own numbering, 32.0.15.6094); None when it is none."""
    v = clean_value(value)
    try:
        return str(DriverVersion.parse(v, tolerant=True)) if v is not None else None
    except ValueError:
        return None


def clean_cc(value: str | None) -> str | None:
    """A compute capability a probe printed, as the one parser reads it ("8.6"); None when it is none ("8.12")."""
    v = clean_value(value)
    try:
        return str(ComputeCapability.parse(v)) if v is not None else None
    except ValueError:
        return None


def rejected(value: str | None) -> str | None:
    """A value printed where a driver version belongs that is not one (for a finding), else None."""
    v = (value or "").strip()
    return v if v and v.lower() not in _MISSING and clean_driver(v) is None else None


def cuda_from_int(v) -> str | None:
    """12040 -> "12.4" (the encoding of cuDriverGetVersion and nvmlSystemGetCudaDriverVersion)."""
    try:
        v = int(v)
    except (TypeError, ValueError):
        return None
    if not 1000 <= v <= 99990:
        return None
    return f"{v // 1000}.{(v % 1000) // 10}"


def _to_int(value: str | None) -> int | None:
    v = clean_value(value)
    if v is None:
        return None
    m = re.match(r"^([0-9]{1,9})(?:\.[0-9]{1,9})?\s*(?:MiB)?$", v)
    return int(m.group(1)) if m else None


# --- error texts ---------------------------------------------------------------------------------------
INVALID_FIELD_RE = re.compile(r'Field "([^"]+)" is not a valid field to query')
NO_DRIVER_TEXT = "couldn't communicate with the NVIDIA driver"
MISMATCH_TEXT = "Driver/library version mismatch"
NO_DEVICES_TEXT = "No devices were found"


def invalid_field(text: str) -> str | None:
    m = INVALID_FIELD_RE.search(text or "")
    return m.group(1) if m else None


# --- CSV -----------------------------------------------------------------------------------------------
@dataclass
class SmiGpu:
    index: int | None
    name: str | None
    compute_capability: str | None = None
    driver_version: str | None = None
    memory_mib: int | None = None
    name_truncated: bool = False
    bus_id: str | None = None  # as printed ("00000000:01:00.0")
    driver_raw: str | None = None  # the driver column as printed, when it is there but is no version


# Header spellings of the columns we read; nvidia-smi prints the query names, older tools some long forms.
_COLUMN = {"index": "index", "name": "name", "gpu_name": "name", "compute_cap": "compute_cap",
           "driver_version": "driver_version", "memory.total": "memory.total", "pci.bus_id": "pci.bus_id",
           "gpu_bus_id": "pci.bus_id"}


def _header_names(line: str) -> list[str] | None:
    """The column names when `line` is a CSV header ("name, memory.total [MiB]"), else None."""
    names = [re.sub(r"\s*\[[^\]]*\]\s*$", "", cell.strip()).lower() for cell in line.split(",")]
    return names if any(n in _COLUMN for n in names) and not any(re.search(r"[0-9]\.[0-9]", n) for n in names) \
        else None


def parse_csv(text: str, fields: tuple[str, ...] | list[str] | None = None) -> list[SmiGpu]:
    """Parse `--format=csv[,noheader][,nounits]` output.

    A header line, when there is one, names the columns (units such as "memory.total [MiB]" are dropped) and
    wins over `fields`; without a header the columns are `fields`, in order. Lines that are not one row of
    that many values (errors, binary garbage) are skipped; "[N/A]" and "[Not Supported]" values become None.
    """
    lines = [ln for ln in (text or "").splitlines() if ln.strip()]
    if not lines:
        return []
    header = _header_names(lines[0])
    if header is not None:
        columns, lines = header, lines[1:]
    elif fields is not None:
        columns = [f.strip().lower() for f in fields]
    else:
        return []
    columns = [_COLUMN.get(c, c) for c in columns]
    out: list[SmiGpu] = []
    for pos, line in enumerate(lines):
        if INVALID_FIELD_RE.search(line):
            continue
        values = [v.strip() for v in line.split(",")]
        if len(values) > len(columns) and "name" in columns:
            # a GPU name with a comma: glue the surplus back into the name column
            extra = len(values) - len(columns)
            i = columns.index("name")
            values[i:i + extra + 1] = [", ".join(values[i:i + extra + 1])]
        if len(values) != len(columns):
            continue
        row = dict(zip(columns, values))
        index = _to_int(row["index"]) if "index" in row else pos
        if "index" in row and index is None:
            continue  # not a row of ours (a message, garbage)
        cc = clean_cc(row.get("compute_cap"))
        mem = row.get("memory.total")
        name = clean_value(row.get("name"))
        bus = clean_value(row.get("pci.bus_id"))
        out.append(SmiGpu(
            index=index,
            name=name,
            compute_capability=cc,
            driver_version=clean_driver(row.get("driver_version")),
            driver_raw=rejected(row.get("driver_version")),
            memory_mib=_to_int(mem.replace(" MiB", "")) if mem is not None else None,
            bus_id=bus if bus and parse_bus_id(bus) else None,
        ))
    return out


def parse_bus_id(text: str | None) -> tuple[int, int, int, int] | None:
    """"00000000:2D:00.0" (nvidia-smi), "0000:2d:00.0" (sysfs, old nvidia-smi), "2d:00.0" (lspci) ->
    (domain, bus, device, function): one spelling for comparing them."""
    m = re.match(r"^\s*(?:([0-9A-Fa-f]{1,8}):)?([0-9A-Fa-f]{1,2}):([0-9A-Fa-f]{1,2})\.([0-7])\s*$", text or "")
    if not m:
        return None
    return (int(m.group(1) or "0", 16), int(m.group(2), 16), int(m.group(3), 16), int(m.group(4)))


# --- `nvidia-smi -q` ------------------------------------------------------------------------------------
@dataclass
class SmiQuery:
    driver_version: str | None = None
    cuda_version: str | None = None
    attached: int | None = None  # "Attached GPUs" (with `-i N` only one block follows)
    gpus: list[SmiGpu] = field(default_factory=list)


def parse_query(text: str) -> SmiQuery:
    """`nvidia-smi -q` (and `-q -d SECTION`): the header values and one SmiGpu per "GPU <bus id>" block.
    Section headers are lines without " : "; the value of "Total" is read only under "FB Memory Usage"."""
    out = SmiQuery()
    gpu: SmiGpu | None = None
    section = ""
    for raw in (text or "").splitlines():
        line = raw.rstrip()
        if not line.strip():
            continue
        indent = len(line) - len(line.lstrip())
        m = re.match(r"^GPU\s+([0-9A-Fa-f]{4,8}:[0-9A-Fa-f]{2}:[0-9A-Fa-f]{2}\.[0-7])$", line.strip()) \
            if indent == 0 else None
        if m:
            gpu = SmiGpu(index=len(out.gpus), name=None, bus_id=m.group(1))
            out.gpus.append(gpu)
            section = ""
            continue
        key, sep, value = line.strip().partition(":")
        key, value = key.strip(), value.strip()
        if not sep:
            if indent <= 4:
                section = key
            continue
        if indent == 0 and gpu is None:
            if key in ("Driver Version", "KMD Version"):
                out.driver_version = out.driver_version or clean_driver(value.split()[0] if value else "")
            elif key in ("CUDA UMD Version", "CUDA Version"):
                # 610+ prints "CUDA Version : 13.3 [Deprecated; ...]": the number comes first either way
                v = clean_version(value.split()[0] if value else "")
                if v and (key == "CUDA UMD Version" or out.cuda_version is None):
                    out.cuda_version = v
            elif key == "Attached GPUs":
                out.attached = _to_int(value)
            continue
        if gpu is None:
            continue
        if indent == 4:
            section = ""
            if key == "Product Name":
                gpu.name = clean_value(value)
        elif key == "Total" and section == "FB Memory Usage":
            gpu.memory_mib = _to_int(value)
    return out


# --- XML (`nvidia-smi -q -x`, `--query -u -x`) ---------------------------------------------------------
@dataclass
class SmiXml:
    driver_version: str | None = None
    cuda_version: str | None = None
    gpu_names: list[str] = field(default_factory=list)


def parse_xml(text: str) -> SmiXml:
    """Regex-based on purpose: excerpts and truncated output still give the header numbers."""
    text = text or ""
    out = SmiXml()
    m = re.search(r"<driver_version>\s*([^<]*?)\s*</driver_version>", text)
    if m:
        out.driver_version = clean_driver(m.group(1))
    for tag in ("cuda_umd_version", "cuda_version"):
        m = re.search(rf"<{tag}>\s*([^<]*?)\s*</{tag}>", text)
        if m and clean_version(m.group(1)):
            out.cuda_version = clean_version(m.group(1))
            break
    out.gpu_names = [n.strip() for n in re.findall(r"<product_name>\s*([^<]*?)\s*</product_name>", text)]
    return out


# --- banner --------------------------------------------------------------------------------------------
@dataclass
class Banner:
    tool_version: str | None = None  # "NVIDIA-SMI x"
    driver_version: str | None = None
    driver_raw: str | None = None  # the text after "Driver Version:" / "KMD Version:" ("N/A" on some Jetsons)
    driver_label: str | None = None  # "Driver Version" | "KMD Version"
    cuda_version: str | None = None
    cuda_raw: str | None = None  # "12.2", "ERR!", "N/A"; None when the banner has no CUDA field (340 legacy)
    cuda_label: str | None = None  # "CUDA Version" | "CUDA UMD Version"
    gpus: list[SmiGpu] = field(default_factory=list)


_TOOL_RE = re.compile(r"NVIDIA-SMI\s+(\S+)")
_DRIVER_RE = re.compile(r"(Driver Version|KMD Version):\s*(\S+)")
_CUDA_RE = re.compile(r"(CUDA UMD Version|CUDA Version):\s*(\S+)")
# "|   0  NVIDIA GeForce RTX 4070        Off |   00000000:2D:00.0  On |" (Persistence-M or TCC/WDDM last)
_GPU_ROW_RE = re.compile(r"^\|\s*([0-9]{1,9})\s+(.+?)\s+(On|Off|N/A|WDDM|TCC|MCDM)\s*\|")
_BANNER_BUS_RE = r"\|\s*([0-9A-Fa-f]{4,8}:[0-9A-Fa-f]{2}:[0-9A-Fa-f]{2}\.[0-7])\s"
_MEM_RE = re.compile(r"(?<![0-9])([0-9]{1,9})\s*MiB\s*/\s*([0-9]{1,9})\s*MiB")


def parse_banner(text: str) -> Banner:
    text = text or ""
    b = Banner()
    m = _TOOL_RE.search(text)
    if m:
        b.tool_version = clean_version(m.group(1))
    m = _DRIVER_RE.search(text)
    if m:
        b.driver_label, b.driver_raw = m.group(1), m.group(2)
        b.driver_version = clean_driver(m.group(2))
    m = _CUDA_RE.search(text)
    if m:
        b.cuda_label, b.cuda_raw = m.group(1), m.group(2)
        b.cuda_version = clean_version(m.group(2))
    lines = text.splitlines()
    in_table = False
    for i, line in enumerate(lines):
        stripped = line.strip()
        if stripped.startswith("|="):
            in_table = True
            continue
        low = stripped.lower()
        if "processes" in low or "mig devices" in low:
            if in_table:
                break
            continue
        if not in_table:
            continue
        row = _GPU_ROW_RE.match(stripped)
        if not row:
            continue
        name = clean_value(row.group(2))
        mem = None
        # the memory column is on the next line ("|    816MiB /  6144MiB |"); "Not Supported" on Jetson
        for nxt in lines[i + 1:i + 3]:
            mm = _MEM_RE.search(nxt)
            if mm:
                mem = int(mm.group(2))
                break
            if _GPU_ROW_RE.match(nxt.strip()):
                break
        bus = re.search(_BANNER_BUS_RE, stripped[row.end() - 1:])
        b.gpus.append(SmiGpu(index=int(row.group(1)), name=name, memory_mib=mem,
                             name_truncated=bool(name and name.endswith("...")), bus_id=bus.group(1) if bus else None))
    return b
