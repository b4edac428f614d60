"""Parsers for nvidia-smi output: CSV queries, `--query -u -x` XML, and the banner (the printed box).

The formats seen in the wild (tests/fixtures/detect/README.md has one real capture of each):
- banner: "Driver Version" (all drivers before 610) or "KMD Version" (610+); "CUDA Version" or "CUDA UMD Version"
  (610+), "ERR!" (WSL2) or "N/A" (Jetson) in place of a number, no CUDA field at all (340 legacy); the
  "NVIDIA-SMI x" tool version can differ from the driver (WSL2, snaps, containers with a stale tool);
  driver versions have 2 (Windows, WSL2, 340.108) or 3 parts (Linux, Jetson).
- CSV: one line per GPU, ", " separated; "[N/A]" / "[Not Supported]" for missing values (Jetson); R470 refuses
  `compute_cap` with `Field "compute_cap" is not a valid field to query.` (exit status 2).
"""

from __future__ import annotations

import re
from dataclasses import dataclass, field

VERSION_RE = re.compile(r"^\d+(?:\.\d+)+$")

# Query used by the CSV probe; the second form is the retry for drivers that refuse compute_cap (R470).
CSV_FIELDS = ("index", "name", "compute_cap", "driver_version", "memory.total")
CSV_FIELDS_NO_CC = ("index", "name", "driver_version", "memory.total")


def csv_argv(exe: str, fields=CSV_FIELDS) -> list[str]:
    return [exe, "--query-gpu=" + ",".join(fields), "--format=csv,noheader,nounits"]


def xml_argv(exe: str) -> list[str]:
    return [exe, "--query", "-u", "-x"]


def banner_argv(exe: str) -> list[str]:
    return [exe]


_MISSING = {"", "n/a", "[n/a]", "[not supported]", "not supported", "[unknown error]", "err!", "[err!]",
            "[insufficient permissions]", "[gpu is lost]", "[requires reset]"}


def clean_value(value: str | None) -> str | None:
    """'[N/A]', 'N/A', 'ERR!', '[Not Supported]' ... -> None; otherwise the stripped value."""
    if value is None:
        return None
    v = value.strip()
    if v.lower() in _MISSING:
        return None
    return v


def clean_version(value: str | None) -> str | None:
    v = clean_value(value)
    if v is None or not VERSION_RE.match(v):
        return None
    return v



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
    m = re.match(r"^(\d+)(?:\.\d+)?\s*(?:MiB)?$", v)
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


def parse_csv(text: str, fields: tuple[str, ...] | list[str] | None = None) -> list[SmiGpu]:
    """Parse `--format=csv[,noheader][,nounits]` output.

    With `fields` None, the first line is the header (`--format=csv`); header names may carry units
    ("memory.total [MiB]"). Lines that do not have the expected number of values are skipped.
    """
    lines = [ln for ln in (text or "").splitlines() if ln.strip()]
    if not lines:
        return []
    if fields is None:
        header = [re.sub(r"\s*\[.*\]$", "", h.strip()) for h in lines[0].split(",")]
        fields = header
        lines = lines[1:]
    fields = [f.strip() for f in fields]
    out: list[SmiGpu] = []
    for pos, line in enumerate(lines):
        values = [v.strip() for v in line.split(",")]
        if len(values) > len(fields) and "name" in fields:
            # a GPU name with a comma: glue the surplus back into the name column
            extra = len(values) - len(fields)
            i = fields.index("name")
            values[i:i + extra + 1] = [", ".join(values[i:i + extra + 1])]
        if len(values) != len(fields):
            continue
        row = dict(zip(fields, values))
        if INVALID_FIELD_RE.search(line):
            continue
        idx = row.get("index")
        index = _to_int(idx) if idx is not None else pos
        cc = clean_value(row.get("compute_cap"))
        if cc is not None and not re.match(r"^\d+\.\d+$", cc):
            cc = None
        mem = row.get("memory.total")
        out.append(SmiGpu(
            index=index,
            name=clean_value(row.get("name", row.get("gpu_name"))),
            compute_capability=cc,
            driver_version=clean_version(row.get("driver_version")),
            memory_mib=_to_int(mem.replace(" MiB", "")) if mem is not None else None,
        ))
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
        out.driver_version = clean_version(m.group(1))
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
_GPU_ROW_RE = re.compile(r"^\|\s*(\d+)\s+(.+?)\s+(On|Off|N/A|WDDM|TCC|MCDM)\s*\|")
_MEM_RE = re.compile(r"(\d+)\s*MiB\s*/\s*(\d+)\s*MiB")


def parse_banner(text: str) -> Banner:
    text = text or ""
    b = Banner()
    m = _TOOL_RE.search(text)
    if m:
        b.tool_version = clean_version(m.group(1))
    m = _DRIVER_RE.search(text)
    if m:
        b.driver_label, b.driver_raw = m.group(1), m.group(2)
        b.driver_version = clean_version(m.group(2))
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
        name = row.group(2).strip()
        mem = None
        # the memory column is on the next line ("|    816MiB /  6144MiB |"); "Not Supported" on Jetson
        for nxt in lines[i + 1:i + 3]:
            mm = _MEM_RE.search(nxt)
            if mm:
                mem = int(mm.group(2))
                break
            if _GPU_ROW_RE.match(nxt.strip()):
                break
        b.gpus.append(SmiGpu(index=int(row.group(1)), name=name, memory_mib=mem,
                             name_truncated=name.endswith("...")))
    return b
