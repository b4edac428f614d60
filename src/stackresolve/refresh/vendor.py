"""Readers of NVIDIA's machine-readable documents and of PyTorch's per-variant indexes.

- CUDA and cuDNN: the redist folders list `redistrib_<version>.json` manifests; a manifest gives `release_label`,
  `release_date` and each component's `version` (cuDNN's also `cuda_variant`, the CUDA majors it is built for).
- Data-center drivers: `releases.json` maps a branch ("580") to its `type` ("lts branch", "production branch",
  "new feature branch") and `driver_info`, newest first (`release_version`, `release_date`, `release_notes`).
- PyTorch: `<index>/whl/<variant>/torch/` is a PEP 503 page whose links name the wheels (`torch-2.9.0+cu130-...`).
Each parser is a pure function of the document (tests run them on captured or reconstructed documents, see
tests/fixtures/vendor/README.md); the readers add the fetching.
"""

from __future__ import annotations

import json
import re
from html.parser import HTMLParser
from typing import Any

from packaging.utils import InvalidWheelFilename, parse_wheel_filename
from packaging.version import InvalidVersion, Version

from stackresolve.index import simple as idx
from stackresolve.refresh.context import Broken, Context, Unreachable
from stackresolve.refresh.index import _key, new_toolkit, newest_shipped

CUDA_REDIST = "https://developer.download.nvidia.com/compute/cuda/redist/"
CUDNN_REDIST = "https://developer.download.nvidia.com/compute/cudnn/redist/"
DRIVER_RELEASES = "https://docs.nvidia.com/datacenter/tesla/drivers/releases.json"
PYTORCH_WHL = "https://download.pytorch.org/whl/"
MANIFEST = re.compile(r'href="?(?:\./)?redistrib_(\d+(?:\.\d+){1,3})\.json"?')


def manifest_versions(listing: str) -> list[str]:
    """The versions of the redistrib_<version>.json files a redist folder's listing links to, oldest first."""
    return sorted(set(MANIFEST.findall(listing)), key=Version)


def _json(raw: bytes, what: str) -> Any:
    try:
        return json.loads(raw)
    except (ValueError, UnicodeDecodeError) as exc:
        raise Broken(f"{what}: not JSON ({exc})") from exc


def parse_cuda_manifest(doc: Any) -> tuple[str, str, str]:
    """(release label "13.4.2", release date, cudart version) of a CUDA redistrib manifest."""
    try:
        label, date = str(doc["release_label"]), str(doc["release_date"])
        cudart = str(doc["cuda_cudart"]["version"])
        Version(label)
    except (KeyError, TypeError, InvalidVersion) as exc:
        raise Broken(f"not a CUDA redistrib manifest ({type(exc).__name__}: {exc})") from exc
    return label, date, cudart


def parse_cudnn_manifest(doc: Any) -> tuple[str, str, str, list[str]]:
    """(release label "9.27.0", release date, full version "9.27.0.42", CUDA majors ["12", "13"])."""
    try:
        label, date = str(doc["release_label"]), str(doc["release_date"])
        full = str(doc["cudnn"]["version"])
        majors = [str(m) for m in doc["cudnn"].get("cuda_variant", [])]
        Version(label), Version(full)
    except (KeyError, TypeError, AttributeError, InvalidVersion) as exc:
        raise Broken(f"not a cuDNN redistrib manifest ({type(exc).__name__}: {exc})") from exc
    if not majors:  # older manifests name the variants only in the platform entries ("cuda12": {...})
        majors = sorted({k.removeprefix("cuda") for plat in doc["cudnn"].values() if isinstance(plat, dict)
                         for k in plat if re.fullmatch(r"cuda\d+", k)}, key=int)
    return label, date, full, majors


DESIGNATIONS = {"lts branch": "LTSB", "production branch": "PB", "new feature branch": "NFB"}


def parse_driver_releases(doc: Any) -> list[dict]:
    """[{branch, designation, latest, latest_date}] from releases.json, newest branch first."""
    if not isinstance(doc, dict):
        raise Broken("releases.json: not an object of branches")
    out = []
    for branch, info in doc.items():
        try:
            kind = str(info["type"]).strip().lower()
            latest = info["driver_info"][0]
            out.append({"branch": str(branch), "designation": DESIGNATIONS.get(kind, kind),
                        "latest": str(latest["release_version"]), "latest_date": str(latest.get("release_date", ""))})
        except (KeyError, TypeError, IndexError) as exc:
            raise Broken(f"releases.json branch {branch}: {type(exc).__name__}: {exc}") from exc
    return sorted(out, key=lambda b: _key(b["branch"]), reverse=True)


class _Links(HTMLParser):
    def __init__(self):
        super().__init__()
        self.names: list[str] = []

    def handle_starttag(self, tag, attrs):
        if tag == "a":
            href = dict(attrs).get("href") or ""
            self.names.append(href.split("#")[0].rstrip("/").split("/")[-1])

    def handle_data(self, data):
        if self.names and data.strip().endswith(".whl"):
            self.names[-1] = data.strip()  # the link text is the file name where the href is a hash path


def parse_variant_page(html: str, variant: str) -> dict[str, dict[str, bool]]:
    """{torch version: {platform: True}} of a PEP 503 page of PyTorch's `whl/<variant>/torch/` index: which
    releases the variant has wheels of, per platform (linux, linux_aarch64, windows)."""
    parser = _Links()
    parser.feed(html)
    out: dict[str, dict[str, bool]] = {}
    for name in parser.names:
        name = re.sub(r"%2B", "+", name, flags=re.I)
        try:
            _, version, _, tags = parse_wheel_filename(name)
        except InvalidWheelFilename:
            continue
        local = version.local or ""
        if version.is_prerelease or (local and local != variant):
            continue
        for tag in tags:
            for platform in idx.platform_buckets(tag.platform) & {"linux", "linux_aarch64", "windows"}:
                out.setdefault(version.base_version, {})[platform] = True
    return out


# --------------------------------------------------------------------------- readers


def _manifests(ctx: Context, folder: str, newest_shipped_label: Version, parse) -> list[tuple[str, Any]]:
    listing = ctx.fetch(folder).decode("utf-8", "replace")
    versions = [v for v in manifest_versions(listing) if Version(v) > newest_shipped_label]
    if not manifest_versions(listing):
        raise Broken(f"{folder}: the listing links no redistrib_<version>.json")
    return [(v, parse(_json(ctx.fetch(f"{folder}redistrib_{v}.json"), f"redistrib_{v}.json")))
            for v in versions]


def nvidia_cuda(ctx: Context) -> tuple[dict, str]:
    shipped = ctx.shipped("cuda.toml").get("toolkit", [])
    known = {r["version"]: r for r in shipped}
    releases_known = {rel for r in shipped for rel in r.get("releases", [])}
    newest = max((_key(rel) for rel in releases_known), default=Version("0"))
    records: dict[str, dict] = {}
    for version, (label, date, cudart) in _manifests(ctx, CUDA_REDIST, newest, parse_cuda_manifest):
        line = ".".join(label.split(".")[:2])
        source = f"{CUDA_REDIST}redistrib_{label}.json (release_label {label}, release_date {date}, cuda_cudart {cudart})"
        if line in known or line in records:
            records.setdefault(line, {"version": line, "releases": []})["releases"].append(label)
        else:
            records[line] = new_toolkit(line, [label], date[:7], shipped, source)
    return {"toolkit": list(records.values())}, f"NVIDIA {CUDA_REDIST} (redistrib_<version>.json), fetched {ctx.today}"


def nvidia_cudnn(ctx: Context) -> tuple[dict, str]:
    shipped = ctx.shipped("cudnn.toml").get("release", [])
    newest = max((_key(r["version"]) for r in shipped), default=Version("0"))
    records = []
    for version, (label, date, full, majors) in _manifests(ctx, CUDNN_REDIST, newest, parse_cudnn_manifest):
        like = newest_shipped(shipped, "version", label.split(".")[0])
        if like is None:
            raise Broken(f"cuDNN {label}: no shipped release of its major to carry the GPU range over from")
        records.append({
            "version": label,
            "builds": [{"cuda": f"{m}.x", "full_version": full} for m in sorted(majors, key=int, reverse=True)],
            "arch_min": like["arch_min"], "arch_max": like["arch_max"], "released": date,
            "source": f"{CUDNN_REDIST}redistrib_{label}.json (release_label, release_date, cudnn.version, "
                      f"cudnn.cuda_variant)",
            "note": f"read by `stackresolve refresh`: arch_min/arch_max carried over from cuDNN {like['version']} by "
                    f"rule; the support matrix is not machine-read",
        })
    return {"release": records}, f"NVIDIA {CUDNN_REDIST} (redistrib_<version>.json), fetched {ctx.today}"


def native_cuda_major(latest: str, toolkits: list[dict]) -> str:
    """The newest CUDA major whose oldest toolkit's Linux driver minimum this driver meets (CUDA's own rule: a
    driver runs the toolkits whose minimum it meets natively)."""
    best = ""
    for toolkit in sorted(toolkits, key=lambda t: _key(t["version"])):
        floor = toolkit.get("driver_linux") or ""
        if floor and _key(latest) >= _key(floor):
            best = toolkit["version"].split(".")[0]
    return best


def nvidia_drivers(ctx: Context) -> tuple[dict, str]:
    branches = parse_driver_releases(_json(ctx.fetch(DRIVER_RELEASES), "releases.json"))
    toolkits = ctx.shipped("cuda.toml").get("toolkit", [])
    records = []
    for b in branches:
        records.append({
            "branch": b["branch"], "designation": b["designation"], "end_of_life": "",
            "native_cuda_major": native_cuda_major(b["latest"], toolkits), "os": ["linux"],
            "source": f"{DRIVER_RELEASES} (branch {b['branch']}: type, driver_info[0] {b['latest']} "
                      f"{b['latest_date']})",
            "note": "read by `stackresolve refresh`: releases.json gives no end of life (the support page's table "
                    "does, prose); native_cuda_major by rule from the toolkits' Linux driver minimums",
        })
    return {"data_center_compat": records}, f"NVIDIA {DRIVER_RELEASES}, fetched {ctx.today}"


def torch_variants(ctx: Context) -> tuple[dict, str]:
    doc = ctx.shipped("pytorch.toml")
    names = sorted({v["name"] for v in doc.get("variant", []) if not v.get("default_index")} | {"cpu"})
    found: dict[str, dict[str, set[str]]] = {}
    reached = 0

    def read(name):
        try:
            return name, parse_variant_page(ctx.fetch(f"{PYTORCH_WHL}{name}/torch/").decode("utf-8", "replace"), name)
        except Unreachable:
            return name, None

    for name, page in ctx.map(read, names):
        if page is None:
            continue
        reached += 1
        for version, platforms in page.items():
            for platform in platforms:
                found.setdefault(version, {}).setdefault(platform, set()).add(name)
    if not reached:
        raise Unreachable(f"{PYTORCH_WHL}<variant>/torch/: none of {len(names)} pages could be read")
    records = []
    for release in doc.get("release", []):
        got = found.get(release["version"])
        if got:
            records.append({"version": release["version"],
                            **{f"variants_{p}": sorted(got.get(p, set())) for p in ("linux", "windows", "linux_aarch64")
                               if got.get(p)}})
    return {"release": records}, f"PyTorch {PYTORCH_WHL}<variant>/torch/ (PEP 503), fetched {ctx.today}"


READERS = {"nvidia_cuda": nvidia_cuda, "nvidia_cudnn": nvidia_cudnn, "nvidia_drivers": nvidia_drivers,
           "torch_variants": torch_variants}
