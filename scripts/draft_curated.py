#!/usr/bin/env python3
"""Draft the curated facts that no machine-readable source holds, for a maintainer to review.

`stackresolve refresh` reads what a machine can read (stackresolve.refresh). What stays curated lives in prose or
binaries: TensorFlow's tested builds (tensorflow/docs source.md tables), a toolkit's driver minimum (the CUDA
release notes' driver table), a GPU's compute capability (NVIDIA's CUDA GPUs page) and the GPU architectures a
wheel carries (the CUDA fatbins inside it). This script reports what is new upstream since the knowledge base's
date and drafts records for it, each with its source, into a report and a TOML file of proposed records:

    python scripts/draft_curated.py [--since DATE] [--index-url URL | --offline]
        [--tf-source-md PATH|URL] [--cuda-driver-table PATH|URL] [--cuda-gpus PATH|URL] [--wheel PATH ...]
        [--output-dir drafts]

Nothing is written into constraints/: the drafts go to --output-dir (drafts/REPORT.md, drafts/curated.toml); the
weekly workflow (.github/workflows/draft-curated.yml) opens a pull request with them. Every network read has a
deadline (--timeout, one for the whole run); a source that cannot be read is named in the report, not fatal.
"""

from __future__ import annotations

import argparse
import datetime as _dt
import html
import re
import struct
import sys
import time
import zipfile
from collections.abc import Sequence
from pathlib import Path

ROOT = Path(__file__).resolve().parent.parent
try:
    import stackresolve  # noqa: F401
except ImportError:  # running from a checkout without the package installed
    sys.path.insert(0, str(ROOT / "src"))

# What the curated files are compared with: the projects whose new releases need curated records.
WATCHED = {
    "tensorflow": "constraints/tensorflow.toml [[tested_build]] (tested build row) and [[compiled_arch]] (fatbin scan)",
    "torch": "constraints/pytorch.toml [[variant]] sass/ptx (fatbin scan of the wheel) and variants per release",
    "jax": "constraints/jax.toml [[release]] (CUDA route from the install guide at the release tag)",
    "nvidia-cudnn-cu13": "constraints/cudnn.toml arch_min/arch_max (cuDNN support matrix)",
    "cuda-toolkit": "constraints/cuda.toml driver_linux/driver_windows (release notes' driver table)",
}


# --------------------------------------------------------------------------- what is new on the index


def new_releases(files_by_project: dict, since: str, known: dict[str, set[str]]) -> list[tuple[str, str, str]]:
    """(project, version, first upload date) of final releases the curated files do not name that are newer than
    every release they name, or were uploaded after `since`; oldest upload first."""
    from packaging.version import InvalidVersion, Version

    from stackresolve.refresh.index import finals, first_upload

    def key(text):
        try:
            return Version(text)
        except InvalidVersion:
            return Version("0")

    out = []
    for project, files in files_by_project.items():
        newest = max((key(v) for v in known.get(project, set())), default=Version("0"))
        for version, rel_files in finals(files).items():
            uploaded = first_upload(rel_files)
            if str(version) in known.get(project, set()):
                continue
            if version > newest or (uploaded and uploaded > since):
                out.append((project, str(version), uploaded))
    return sorted(out, key=lambda r: (r[2], r[0]))


def known_versions() -> dict[str, set[str]]:
    from stackresolve.knowledge.loader import read_toml

    tf = read_toml("tensorflow.toml")[0]
    torch = read_toml("pytorch.toml")[0]
    jax = read_toml("jax.toml")[0]
    cudnn = read_toml("cudnn.toml")[0]
    cuda = read_toml("cuda.toml")[0]
    return {
        "tensorflow": {r["version"] for r in tf.get("tested_build", [])},
        "torch": {r["version"] for r in torch.get("release", [])},
        "jax": {v for r in jax.get("release", []) for v in r.get("jax", [])},
        "nvidia-cudnn-cu13": {b["full_version"] for r in cudnn.get("release", []) for b in r.get("builds", [])},
        "cuda-toolkit": {rel for r in cuda.get("toolkit", []) for rel in r.get("releases", [])},
    }


# --------------------------------------------------------------------------- TensorFlow's tested builds


def _cells(row: str) -> list[str]:
    return [html.unescape(re.sub(r"<[^>]+>", "", c)).strip()
            for c in re.findall(r"<t[dh][^>]*>(.*?)</t[dh]>", row, flags=re.S | re.I)]


def parse_tested_builds(text: str) -> list[dict]:
    """The rows of the 'Tested build configurations' tables of tensorflow/docs source.md (HTML tables under
    '### Linux', '### macOS', or source_windows.md's '### GPU'/'### CPU' under Windows): os, package, version, python,
    compiler, build tools, cuDNN, CUDA as printed."""
    rows = []
    os_name = "windows" if "windows" in text[:2000].lower() and "### Linux" not in text else "linux"
    for block in re.split(r"^###\s+", text, flags=re.M)[1:]:
        heading = block.splitlines()[0].strip().lower()
        if heading.startswith("linux"):
            os_name = "linux"
        elif heading.startswith("macos"):
            os_name = "macos"
        for row in re.findall(r"<tr>(.*?)</tr>", block, flags=re.S | re.I):
            cells = _cells(row)
            if len(cells) < 7 or cells[0].lower() == "version":
                continue
            package, _, version = cells[0].rpartition("-")
            rows.append({"os": os_name, "package": package, "version": version,
                         "python": cells[2], "compiler": cells[3], "build_tools": cells[4],
                         "cudnn": "" if cells[5] == "N/A" else cells[5], "cuda": "" if cells[6] == "N/A" else cells[6]})
    return rows


def draft_tested_builds(text: str, known: set[tuple[str, str, str]], source: str) -> list[dict]:
    """Tested-build records for the table rows constraints/tensorflow.toml lacks (by os, package, version)."""
    out, seen = [], set()
    for row in parse_tested_builds(text):
        key = (row["os"], row["package"], row["version"])
        if key in known or key in seen:
            continue
        seen.add(key)
        out.append({**row, "source": source})
    return out


def known_tested_builds() -> set[tuple[str, str, str]]:
    from stackresolve.knowledge.loader import read_toml

    return {(r["os"], r["package"], r["version"]) for r in read_toml("tensorflow.toml")[0].get("tested_build", [])}


# --------------------------------------------------------------------------- a toolkit's driver minimum


DRIVER_ROW = re.compile(r"CUDA\s+(\d+\.\d+)(?:\.\d+)?[^>\n]*?>=\s*(\d+(?:\.\d+){1,2})\s*\S*\s*>=\s*(\d+(?:\.\d+){1,2})")


def parse_driver_table(text: str) -> dict[str, tuple[str, str]]:
    """{toolkit "X.Y": (Linux minimum, Windows minimum)} from the release notes' 'CUDA Toolkit and Corresponding
    (Compatible) Driver Versions' table (HTML or its text); the first row of a toolkit (its newest update) wins,
    as the table lists newest first."""
    plain = html.unescape(re.sub(r"<[^>]+>", " ", text))
    out: dict[str, tuple[str, str]] = {}
    for line in plain.splitlines():
        match = DRIVER_ROW.search(line)
        if match and match.group(1) not in out:
            out[match.group(1)] = (match.group(2), match.group(3))
    return out


def draft_driver_minimums(text: str, toolkits: Sequence[dict], source: str) -> list[dict]:
    """For each toolkit whose driver minimum is empty in cuda.toml and that the table lists: the proposed values."""
    table = parse_driver_table(text)
    out = []
    for toolkit in toolkits:
        found = table.get(toolkit["version"])
        if found and (not toolkit.get("driver_linux") or not toolkit.get("driver_windows")):
            out.append({"version": toolkit["version"], "driver_linux": found[0], "driver_windows": found[1],
                        "source": source})
    return out


# --------------------------------------------------------------------------- a GPU's compute capability


def parse_cuda_gpus(text: str) -> list[tuple[str, str]]:
    """(GPU name, compute capability) pairs from NVIDIA's CUDA GPUs page: table rows whose cells are a name and an
    X.Y capability."""
    out = []
    for row in re.findall(r"<tr>(.*?)</tr>", text, flags=re.S | re.I):
        cells = _cells(row)
        if len(cells) >= 2 and re.fullmatch(r"\d{1,2}\.\d", cells[1]) and cells[0]:
            for name in (n.strip() for n in cells[0].split(",")):
                if name:
                    out.append((name, cells[1]))
    return out


def draft_gpus(text: str, source: str) -> list[dict]:
    from stackresolve.knowledge.base import normalize_gpu_name
    from stackresolve.knowledge.loader import read_toml

    known = {normalize_gpu_name(s) for g in read_toml("gpus.toml")[0].get("gpu", [])
             for s in (g["name"], *g.get("aliases", []))}
    return [{"name": name, "cc": cc, "source": source, "note": "DRAFT: architecture and segment to be filled in"}
            for name, cc in parse_cuda_gpus(text) if normalize_gpu_name(name) not in known]


# --------------------------------------------------------------------------- a wheel's GPU architectures


FATBIN_MAGIC = 0xBA55ED50


def scan_fatbins(data: bytes) -> tuple[set[str], set[str]]:
    """(SASS capabilities, PTX capabilities) of the CUDA fatbin containers in a binary. Container: u32 magic
    0xBA55ED50, u16 version, u16 header size, u64 size of the entries; entry: u16 kind (1 PTX, 2 ELF/SASS), u16,
    u32 entry header size, u64 payload size, ..., u32 sm architecture at offset 28 (the layout cuobjdump reads,
    as documented by open fatbin readers, e.g. GrigoryEvko/nvopen-tools fatbin/FORMAT_SPECIFICATION.md)."""
    sass: set[str] = set()
    ptx: set[str] = set()
    magic = struct.pack("<I", FATBIN_MAGIC)
    at = data.find(magic)
    while at >= 0:
        try:
            _, _, header, size = struct.unpack_from("<IHHQ", data, at)
        except struct.error:
            break
        entry, end = at + header, min(len(data), at + header + size)
        while entry + 32 <= end:
            kind, _, entry_header, payload = struct.unpack_from("<HHIQ", data, entry)
            arch = struct.unpack_from("<I", data, entry + 28)[0]
            if entry_header < 32 or kind not in (1, 2):
                break
            cc = f"{arch // 10}.{arch % 10}"
            (ptx if kind == 1 else sass).add(cc)
            entry += entry_header + payload
        at = data.find(magic, max(at + 1, end))
    return sass, ptx


def scan_wheel(path: Path, members: str = r".*\.(so(\.\d+)*|pyd|dll)$") -> tuple[list[str], list[str]]:
    """SASS and PTX capabilities found in a wheel's shared libraries, sorted."""
    sass: set[str] = set()
    ptx: set[str] = set()
    with zipfile.ZipFile(path) as wheel:
        for name in wheel.namelist():
            if re.match(members, name):
                found = scan_fatbins(wheel.read(name))
                sass |= found[0]
                ptx |= found[1]
    order = lambda cc: tuple(int(p) for p in cc.split("."))  # noqa: E731
    return sorted(sass, key=order), sorted(ptx, key=order)


# --------------------------------------------------------------------------- reading sources, writing drafts


def read_source(where: str, deadline: float) -> str:
    """A file path or an https URL (with the time left before the deadline, at most 60 s)."""
    if re.match(r"https://", where):
        from stackresolve.index import simple as idx

        left = max(1.0, min(60.0, deadline - time.monotonic()))
        resp = idx.make_session(retries=2, deadline=deadline).get(where, timeout=(min(10.0, left), left))
        resp.raise_for_status()
        return resp.text
    return Path(where).read_text(encoding="utf-8")


def render(report: list[str], drafts: dict[str, list[dict]], generated: str) -> tuple[str, str]:
    import tomli_w

    toml = ("# DRAFT records proposed by scripts/draft_curated.py: review each against its source, then move it into "
            "constraints/.\n" + tomli_w.dumps({"generated": generated, **{k: v for k, v in drafts.items() if v}}))
    return "\n".join(report) + "\n", toml


def main(argv: Sequence[str] | None = None) -> int:
    ap = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    ap.add_argument("--since", help="report what is newer than this date (default: constraints/meta.toml date)")
    ap.add_argument("--index-url", help="the package index (default: pip's)")
    ap.add_argument("--offline", action="store_true", help="do not read the package index")
    ap.add_argument("--tf-source-md", action="append", default=[], help="tensorflow/docs source.md (path or URL)")
    ap.add_argument("--cuda-driver-table", action="append", default=[], help="CUDA release notes (path or URL)")
    ap.add_argument("--cuda-gpus", help="NVIDIA's CUDA GPUs page (path or URL)")
    ap.add_argument("--wheel", action="append", default=[], type=Path, help="a downloaded wheel to scan for fatbins")
    ap.add_argument("--output-dir", type=Path, default=ROOT / "drafts")
    ap.add_argument("--timeout", type=float, default=300.0, help="seconds for the whole run")
    args = ap.parse_args(argv)

    from stackresolve.files.write import atomic_write
    from stackresolve.knowledge.loader import read_toml

    deadline = time.monotonic() + args.timeout
    since = args.since or str(read_toml("meta.toml")[0].get("date", ""))
    today = _dt.datetime.now(_dt.timezone.utc).date().isoformat()
    report = [f"# Curated data: what is new upstream since {since}", "",
              f"Drafted {today} by scripts/draft_curated.py. Each proposed record is in drafts/curated.toml with its "
              f"source; review it against the source before moving it into constraints/.", ""]
    drafts: dict[str, list[dict]] = {"new_release": [], "tested_build": [], "toolkit_driver": [], "gpu": [],
                                     "compiled_arch": []}
    problems: list[str] = []

    if not args.offline:
        from stackresolve.refresh import Context
        from concurrent.futures import ThreadPoolExecutor

        try:
            with ThreadPoolExecutor(max_workers=4) as pool:
                ctx = Context(args.index_url, deadline, today, pool, vendor=False)
                files = dict(zip(WATCHED, pool.map(ctx.files, WATCHED)))
            known = known_versions()
            for project, version, uploaded in new_releases(files, since, known):
                drafts["new_release"].append({"project": project, "version": version, "uploaded": uploaded,
                                              "curate": WATCHED[project],
                                              "source": f"package index /simple/{project}/ (PEP 691 JSON), read {today}"})
        except (OSError, ValueError, RuntimeError) as exc:  # reported; the other sources are still drafted
            problems.append(f"package index: {type(exc).__name__}: {exc}")
    for where in args.tf_source_md:
        try:
            drafts["tested_build"] += draft_tested_builds(read_source(where, deadline), known_tested_builds(),
                                                          f"{where} (Tested build configurations)")
        except (OSError, ValueError, RuntimeError) as exc:
            problems.append(f"{where}: {type(exc).__name__}: {exc}")
    for where in args.cuda_driver_table:
        try:
            drafts["toolkit_driver"] += draft_driver_minimums(read_source(where, deadline),
                                                              read_toml("cuda.toml")[0].get("toolkit", []),
                                                              f"{where} (CUDA Toolkit and Corresponding Driver Versions)")
        except (OSError, ValueError, RuntimeError) as exc:
            problems.append(f"{where}: {type(exc).__name__}: {exc}")
    if args.cuda_gpus:
        try:
            drafts["gpu"] += draft_gpus(read_source(args.cuda_gpus, deadline), f"{args.cuda_gpus} (CUDA GPUs table)")
        except (OSError, ValueError, RuntimeError) as exc:
            problems.append(f"{args.cuda_gpus}: {type(exc).__name__}: {exc}")
    for wheel in args.wheel:
        try:
            sass, ptx = scan_wheel(wheel)
            drafts["compiled_arch"].append({"wheel": wheel.name, "sass": sass, "ptx": ptx,
                                            "source": f"measured: CUDA fatbins in {wheel.name} (scripts/draft_curated.py)"})
        except (OSError, zipfile.BadZipFile) as exc:
            problems.append(f"{wheel}: {type(exc).__name__}: {exc}")

    titles = {"new_release": "New releases on the package index that curated records do not cover yet",
              "tested_build": "TensorFlow tested-build rows missing from tensorflow.toml",
              "toolkit_driver": "Toolkit driver minimums cuda.toml leaves empty",
              "gpu": "GPUs on NVIDIA's list that gpus.toml lacks",
              "compiled_arch": "GPU architectures measured in wheels"}
    for key, title in titles.items():
        report += [f"## {title} ({len(drafts[key])})", ""]
        for record in drafts[key]:
            fields = ", ".join(f"{k} {v}" for k, v in record.items() if k not in ("source", "curate", "note"))
            report.append(f"- {fields} (source: {record['source']})")
        report.append("")
    if problems:
        report += ["## Sources that could not be read", ""] + [f"- {p}" for p in problems] + [""]
    text, toml = render(report, drafts, today)
    args.output_dir.mkdir(parents=True, exist_ok=True)
    atomic_write(args.output_dir / "REPORT.md", text)
    atomic_write(args.output_dir / "curated.toml", toml)
    print(f"draft_curated: {sum(map(len, drafts.values()))} proposed records, {len(problems)} sources not read; "
          f"wrote {args.output_dir}/REPORT.md and curated.toml", file=sys.stderr)
    return 0


if __name__ == "__main__":
    sys.exit(main())
