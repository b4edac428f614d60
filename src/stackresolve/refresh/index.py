"""Readers of the package index, one per kind: each returns (document, source) with records of its constraints
file's shape. What the index cannot say (a cuDNN's GPU range, a toolkit's driver floor, the GPU architectures in a
new torch wheel) is carried over by rule from the newest shipped record of the same line, and the record's note
says so."""

from __future__ import annotations

from collections.abc import Sequence
from typing import Any

from packaging.requirements import InvalidRequirement, Requirement
from packaging.utils import canonicalize_name
from packaging.version import InvalidVersion, Version

from stackresolve.index import simple as idx
import stackresolve.refresh.tensorflow_wheels as tf  # the module, not the package's runner (no cycle)
from stackresolve.refresh.context import Broken, Context

# CPython minors a wheel is classified into here (one past the TensorFlow list: jaxlib already has 3.15 wheels).
PYTHONS = tuple(dict.fromkeys((*idx.KNOWN_CPYTHON, "3.15")))


def finals(files: Sequence[idx.IndexFile]) -> dict[Version, list[idx.IndexFile]]:
    return tf.group_releases(files)


def pythons_per_platform(files: Sequence[idx.IndexFile]) -> dict[str, list[str]]:
    """CPython minors with a (not yanked) wheel, per platform of idx.PLATFORMS."""
    found: dict[str, set[str]] = {p: set() for p in idx.PLATFORMS}
    for f in files:
        if not f.is_wheel or f.yanked:
            continue
        for platform, pythons in idx.wheel_support(f.filename, f.requires_python, pythons=PYTHONS).items():
            found[platform].update(pythons)
    return {p: sorted(v, key=Version) for p, v in found.items()}


def first_upload(files: Sequence[idx.IndexFile]) -> str:
    """The UTC date of the first upload among the files ("" when the index gives no upload times)."""
    times = sorted(f.upload_time for f in files if f.upload_time)
    return times[0][:10] if times else ""


def any_wheel(files: Sequence[idx.IndexFile], platform: str = "linux") -> idx.IndexFile | None:
    """The wheel to read metadata from: the platform's one for the newest CPython, else any wheel."""
    chosen = tf.metadata_wheel(files) if platform == "linux" else None
    if chosen is None:
        on_platform = [f for f in files if f.is_wheel and not f.yanked
                       and idx.wheel_support(f.filename, f.requires_python, pythons=PYTHONS).get(platform)]
        chosen = max(on_platform, key=lambda f: f.filename) if on_platform else None
    if chosen is None and platform == "linux":
        wheels = [f for f in files if f.is_wheel and not f.yanked]
        chosen = max(wheels, key=lambda f: f.filename) if wheels else None
    return chosen


def requirements_on(meta: Any, name: str, platform: str = "linux", python: str = "3.12") -> list[Requirement]:
    """The Requires-Dist entries on `name` that apply without extras on the platform (markers evaluated)."""
    return [req for req in tf.applicable_requirements(meta, platform, python)
            if canonicalize_name(req.name) == canonicalize_name(name)]


def _how(file: idx.IndexFile) -> str:
    return "PEP 658 metadata" if file.core_metadata else "METADATA read by HTTP range requests"


def _key(text: str) -> Version:
    try:
        return Version(text)
    except InvalidVersion:
        return Version("0")


# --------------------------------------------------------------------------- TensorFlow


def tensorflow_wheels(ctx: Context) -> tuple[dict, str]:
    files = {package: ctx.files(package) for package in tf.PACKAGES}
    try:
        records = tf.build_records(files, fetched=ctx.today, read_metadata=ctx.metadata, workers=8)
    except tf.UnclassifiedWheels as exc:
        raise Broken(str(exc)) from exc
    return {"release": records}, (f"package index /simple/{{{','.join(tf.PACKAGES)}}}/ (PEP 691 JSON; and-cuda "
                                  f"pins from wheel metadata), fetched {ctx.today}")


# --------------------------------------------------------------------------- torchvision / torchaudio


COMPANIONS = ("torchvision", "torchaudio")


def companion_record(package: str, version: Version, files: Sequence[idx.IndexFile], meta: Any | None,
                     wheel: idx.IndexFile | None) -> dict:
    torch = ""
    if meta is not None:
        specs = [str(r.specifier) for r in requirements_on(meta, "torch")]
        torch = ",".join(s for s in specs if s)
    record: dict[str, Any] = {"package": package, "version": str(version)}
    record.update(pythons_per_platform(files))
    record["torch"] = torch
    record["source"] = (f"package index /simple/{package}/ (PEP 691 JSON), wheel file names and Requires-Python; "
                        + (f"torch = Requires-Dist of {wheel.filename} ({_how(wheel)})" if wheel else "no wheel"))
    return record


def torch_companions(ctx: Context) -> tuple[dict, str]:
    """Every final torchvision/torchaudio release from the oldest the shipped file lists, with the CPython versions
    per platform and the torch requirement of its wheel (`==2.5.1`, or a range: `>=2.11`)."""
    shipped = ctx.shipped("torch_companions.toml").get("companion", [])
    jobs = []
    for package in COMPANIONS:
        oldest = min((_key(c["version"]) for c in shipped if c.get("package") == package), default=Version("0"))
        for version, files in sorted(finals(ctx.files(package)).items()):
            if version >= oldest:
                jobs.append((package, version, files, any_wheel(files)))

    def build(job):
        package, version, files, wheel = job
        return companion_record(package, version, files, ctx.metadata(wheel) if wheel else None, wheel)

    records = ctx.map(build, jobs)
    return {"companion": records}, (f"package index /simple/torchvision/, /simple/torchaudio/ (PEP 691 JSON; torch "
                                    f"requirement from each release's wheel METADATA), fetched {ctx.today}")


# --------------------------------------------------------------------------- cuDNN


CUDNN_PROJECTS = {"11": "nvidia-cudnn-cu11", "12": "nvidia-cudnn-cu12", "13": "nvidia-cudnn-cu13"}


def _release_of(version: Version, parts: int = 3) -> str:
    return ".".join(str(p) for p in (version.release + (0, 0, 0))[:parts])


def newest_shipped(records: list[dict], key: str, major: str, below: Version | None = None) -> dict | None:
    """The newest shipped record whose `key` version has this major (the record rules carry facts over from)."""
    same = [r for r in records if str(r.get(key, "")).split(".")[0] == major
            and (below is None or _key(r[key]) < below)]
    return max(same, key=lambda r: _key(r[key])) if same else None


def cudnn(ctx: Context) -> tuple[dict, str]:
    """cuDNN releases newer than the newest shipped one, from the nvidia-cudnn-cuXX wheels: one build per CUDA major
    (the wheel version is the full cuDNN version)."""
    shipped = ctx.shipped("cudnn.toml").get("release", [])
    newest = max((_key(r["version"]) for r in shipped), default=Version("0"))
    builds: dict[str, list[dict]] = {}
    uploads: dict[str, list[str]] = {}
    pins: dict[str, list[str]] = {}
    for cuda_major, project in CUDNN_PROJECTS.items():
        for version, files in finals(ctx.files(project)).items():
            if not any(f.is_wheel and idx.wheel_support(f.filename, f.requires_python, pythons=PYTHONS).get("linux")
                       for f in files):
                continue
            release = _release_of(version)
            if _key(release) <= newest:
                continue
            builds.setdefault(release, []).append({"cuda": f"{cuda_major}.x", "full_version": str(version)})
            pins.setdefault(release, []).append(f"{project}=={version}")
            if first_upload(files):
                uploads.setdefault(release, []).append(first_upload(files))
    records = []
    for release in sorted(builds, key=Version):
        like = newest_shipped(shipped, "version", release.split(".")[0])
        if like is None:
            raise Broken(f"cuDNN {release}: no shipped release of major {release.split('.')[0]} to carry the GPU "
                         f"range over from")
        record: dict[str, Any] = {
            "version": release,
            "builds": sorted(builds[release], key=lambda b: b["cuda"], reverse=True),
            "arch_min": like["arch_min"], "arch_max": like["arch_max"],
        }
        if uploads.get(release):
            record["released"] = min(uploads[release])
        record["source"] = ("package index " + ", ".join(f"/simple/{p}/" for p in CUDNN_PROJECTS.values())
                            + f" (PEP 691 JSON; wheel versions = build numbers per CUDA major), fetched {ctx.today}")
        record["pip"] = sorted(pins[release], reverse=True)
        record["pip_source"] = record["source"]
        record["note"] = (f"read by `stackresolve refresh`: arch_min/arch_max carried over from cuDNN {like['version']} "
                          f"(the newest shipped {release.split('.')[0]}.x release) by rule; NVIDIA's support matrix "
                          f"is not machine-read. released = first upload of a {release} wheel.")
        records.append(record)
    return {"release": records}, (f"package index /simple/nvidia-cudnn-cu11|12|13/ (PEP 691 JSON), fetched {ctx.today}")


# --------------------------------------------------------------------------- CUDA


CUDA_PROJECTS = ("cuda-toolkit", "nvidia-cuda-runtime", "nvidia-cuda-runtime-cu12", "nvidia-cuda-runtime-cu11")


def new_toolkit(version: str, releases: list[str], released: str, shipped: list[dict], source: str) -> dict:
    like = newest_shipped(shipped, "version", version.split(".")[0], below=Version(version))
    if like is None:
        raise Broken(f"CUDA {version}: no shipped toolkit of major {version.split('.')[0]} to carry facts over from")
    record: dict[str, Any] = {"version": version, "releases": releases, "driver_linux": "", "driver_windows": ""}
    for key in ("compat_driver_linux", "compat_driver_windows"):
        if like.get(key):
            record[key] = like[key]
    record.update(arch_min=like["arch_min"], arch_max=like["arch_max"])
    if released:
        record["released"] = released
    record["source"] = source
    record["note"] = (f"read by `stackresolve refresh`: arch_min/arch_max and the minor-version-compatibility driver "
                      f"floor carried over from CUDA {like['version']} (the newest shipped {version.split('.')[0]}.x "
                      f"toolkit) by rule; the toolkit's own driver minimum is in its release notes (prose), left "
                      f"empty.")
    return record


def cuda(ctx: Context) -> tuple[dict, str]:
    """CUDA toolkits from the newest shipped one on: `cuda-toolkit` wheel versions are toolkit releases (13.4.3);
    the runtime wheels (`nvidia-cuda-runtime*`) carry the cudart component version, whose major.minor is the
    toolkit's."""
    shipped = ctx.shipped("cuda.toml").get("toolkit", [])
    newest = max((_key(r["version"]) for r in shipped), default=Version("0"))
    releases: dict[str, set[str]] = {}
    uploads: dict[str, list[str]] = {}
    for project in CUDA_PROJECTS:
        for version, files in finals(ctx.files(project)).items():
            line = _release_of(version, 2)
            if _key(line) < newest:
                continue
            releases.setdefault(line, set())
            if project == "cuda-toolkit":
                releases[line].add(_release_of(version))
            if first_upload(files):
                uploads.setdefault(line, []).append(first_upload(files)[:7])
    source = ("package index " + ", ".join(f"/simple/{p}/" for p in CUDA_PROJECTS)
              + f" (PEP 691 JSON; cuda-toolkit versions = toolkit releases, runtime wheels = cudart component "
                f"versions), fetched {ctx.today}")
    known = {r["version"] for r in shipped}
    records = []
    for line in sorted(releases, key=Version):
        ordered = sorted(releases[line], key=Version)
        if line in known:
            if ordered:
                records.append({"version": line, "releases": ordered})  # the new releases of a known toolkit
            continue
        records.append(new_toolkit(line, ordered, min(uploads.get(line, [""])), shipped, source))
    return {"toolkit": records}, source


# --------------------------------------------------------------------------- JAX


PLUGINS = ("jax-cuda12-plugin", "jax-cuda13-plugin")


def jax(ctx: Context) -> tuple[dict, str]:
    """jax releases, jaxlib wheels and CUDA plugin wheels the shipped jax.toml lacks."""
    shipped = ctx.shipped("jax.toml")
    known_jax = {p["jax"] for p in shipped.get("pairing", [])}
    known_jaxlib = {v for w in shipped.get("jaxlib_wheels", []) for v in w.get("versions", [])}
    known_plugin = {(w.get("package"), v) for w in shipped.get("plugin_wheels", []) for v in w.get("versions", [])}
    # Only what is newer than the shipped data: older releases the curated file leaves out stay out.
    oldest = max((_key(v) for v in known_jax), default=Version("0"))
    known_jax |= {str(v) for v in finals(ctx.files("jax")) if v <= oldest}
    known_jaxlib |= {str(v) for v in finals(ctx.files("jaxlib")) if v <= oldest}
    known_plugin |= {(p, str(v)) for p in PLUGINS for v in finals(ctx.files(p)) if v <= oldest}

    pairings = []
    jobs = [(v, files) for v, files in sorted(finals(ctx.files("jax")).items()) if str(v) not in known_jax]

    def pairing(job):
        version, files = job
        wheel = any_wheel(files)
        meta = ctx.metadata(wheel) if wheel else None
        reqs = [str(r) for r in requirements_on(meta, "jaxlib")] if meta is not None else []
        same = any(Requirement(r).specifier.contains(str(version), prereleases=True) for r in reqs)
        return {"jax": str(version), "jaxlib_min": "", "jaxlib_requires": reqs, "same_version_jaxlib": same,
                "requires_python": next((f.requires_python for f in files if f.requires_python), "") or "",
                "yanked": all(f.yanked for f in files),
                "source": f"package index /simple/jax/ ({wheel.filename if wheel else 'no wheel'} METADATA, "
                          f"{_how(wheel) if wheel else '-'}), fetched {ctx.today}",
                "note": "read by `stackresolve refresh`: jaxlib_min is only in jax's source (version.py), left empty; "
                        "pip enforces jaxlib_requires"}

    pairings = ctx.map(pairing, jobs)
    wheels = []
    for version, files in sorted(finals(ctx.files("jaxlib")).items()):
        if str(version) in known_jaxlib:
            continue
        wheels.append({"versions": [str(version)], "on_index": True, **pythons_per_platform(files),
                       "requires_python": next((f.requires_python for f in files if f.requires_python), "") or "",
                       "yanked": all(f.yanked for f in files),
                       "source": f"package index /simple/jaxlib/ (PEP 691 JSON), fetched {ctx.today}"})
    plugins = []
    for package in PLUGINS:
        pjrt = {str(v) for v in finals(ctx.files(package.replace("-plugin", "-pjrt")))}
        for version, files in sorted(finals(ctx.files(package)).items()):
            if (package, str(version)) in known_plugin:
                continue
            per = pythons_per_platform(files)
            plugins.append({"package": package, "versions": [str(version)], "linux": per["linux"],
                            "linux_aarch64": per["linux_aarch64"], "yanked": all(f.yanked for f in files),
                            "pjrt_missing": [] if str(version) in pjrt else [str(version)],
                            "source": f"package index /simple/{package}/ and /simple/{package.replace('-plugin', '-pjrt')}/ "
                                      f"(PEP 691 JSON), fetched {ctx.today}"})
    return ({"pairing": pairings, "jaxlib_wheels": wheels, "plugin_wheels": plugins},
            f"package index /simple/jax/, /simple/jaxlib/, /simple/jax-cuda12|13-plugin|pjrt/ (PEP 691 JSON, jax's "
            f"METADATA), fetched {ctx.today}")


# --------------------------------------------------------------------------- PyTorch


def _variant_of(requirements: Sequence[str]) -> str:
    """The CUDA variant a default-index torch wheel is, from its CUDA runtime pin (cuda-toolkit==13.0.3 -> cu130,
    nvidia-cuda-runtime-cu12==12.4.127 -> cu124); "cpu" without one."""
    for text in requirements:
        req = Requirement(text)
        name = canonicalize_name(req.name)
        if name == "cuda-toolkit" or name.startswith("nvidia-cuda-runtime"):
            pinned = [s.version for s in req.specifier if s.operator == "=="]
            if pinned:
                major, minor = (pinned[0].split(".") + ["0"])[:2]
                return f"cu{major}{minor}"
    return "cpu"


def _default_requires(meta: Any, platform: str, python: str) -> list[str]:
    return [r for r in tf.platform_requirements(meta, platform, python)
            if canonicalize_name(Requirement(r).name).startswith(("nvidia-", "cuda-", "triton"))]


def torch(ctx: Context) -> tuple[dict, str]:
    """torch releases newer than the newest shipped one: wheels per platform, the default index's variant (from its
    CUDA runtime pin) and its nvidia-*/cuda-*/triton pins; the default variant's record is carried over from the
    newest shipped release with that variant, by rule (its compiled GPU architectures are measured from the
    binaries: scripts/draft_curated.py drafts them)."""
    doc = ctx.shipped("pytorch.toml")
    shipped = doc.get("release", [])
    newest = max((_key(r["version"]) for r in shipped), default=Version("0"))
    releases, variants = [], []
    for version, files in sorted(finals(ctx.files("torch")).items()):
        if version <= newest:
            continue
        per = pythons_per_platform(files)
        requires: dict[str, list[str]] = {}
        for platform in ("linux", "linux_aarch64"):
            wheel = any_wheel(files, platform)
            if wheel is None:
                requires[platform] = []
                continue
            python = idx.wheel_support(wheel.filename, wheel.requires_python, pythons=PYTHONS)[platform][-1]
            requires[platform] = _default_requires(ctx.metadata(wheel), platform, python)
        default = _variant_of(requires["linux"])
        aarch64 = _variant_of(requires["linux_aarch64"]) if per["linux_aarch64"] else ""
        releases.append({
            "version": str(version), "released": first_upload(files) or ctx.today,
            **{p: per[p] for p in ("linux", "linux_aarch64", "windows", "macos_arm64", "macos_x86_64")},
            "default_variant_linux": default, "default_variant_linux_aarch64": aarch64,
            "default_variant_windows": "cpu", "default_variant_macos": "cpu",
            "torchvision": "", "torchaudio": "",
            "variants_linux": sorted({default, "cpu"}), "variants_windows": ["cpu"],
            "variants_linux_aarch64": sorted({aarch64 or "cpu", "cpu"}),
            "default_requires": requires["linux"], "default_requires_linux_aarch64": requires["linux_aarch64"],
            "source": f"package index /simple/torch/ (PEP 691 JSON; default variant from the Linux wheels' CUDA "
                      f"runtime pins in their METADATA), fetched {ctx.today}",
            "note": "read by `stackresolve refresh`: only the default index's variants are known (PyTorch's own "
                    "indexes are read by the torch_variants kind); companions come from their Requires-Dist ranges",
        })
        for platform, name in (("linux", default), ("linux_aarch64", aarch64)):
            if not name or name == "cpu":
                continue
            like = [v for v in doc.get("variant", []) if v.get("name") == name and v.get("default_index")
                    and platform in v.get("platforms", [])]
            if not like:
                continue  # no record to carry the compiled architectures over from: a CPU plan only
            carried = dict(like[-1])
            carried.update(releases=[str(version)], platforms=[platform],
                           arch_basis="carried over by rule (not measured)",
                           note=f"read by `stackresolve refresh`: compiled architectures carried over from the "
                                f"{name} record of torch {', '.join(like[-1]['releases'])} by rule; not measured")
            variants.append(carried)
    return {"release": releases, "variant": variants}, (f"package index /simple/torch/ (PEP 691 JSON and the "
                                                        f"Linux wheels' METADATA), fetched {ctx.today}")


# --------------------------------------------------------------------------- Apple: tensorflow-metal, jax-metal


def description_table(meta: Any, column: str) -> list[dict[str, str]]:
    """The rows of the Markdown table in a wheel's project description (its METADATA body) that has a `column`
    heading, each as {lower-cased heading: cell text}; [] when there is no such table. Apple keeps its pairing
    tables there (tensorflow-metal: tensorflow | tensorflow-metal | MacOs | features; jax-metal: jax-metal |
    MacOS | jaxlib | jax)."""
    if meta is None:
        return []
    body = meta.get("Description") or meta.get_payload() or ""
    if not isinstance(body, str):
        return []
    tables: list[list[list[str]]] = []
    rows: list[list[str]] = []
    for line in body.splitlines() + [""]:
        text = line.strip()
        if text.startswith("|"):
            rows.append([cell.strip() for cell in text.strip("|").split("|")])
        elif rows:
            tables.append(rows)
            rows = []
    for table in tables:
        heads = [h.lower() for h in table[0]]
        if column not in heads:
            continue
        body_rows = [r for r in table[1:] if not all(set(c) <= set("-: ") for c in r)]  # the |---| rule
        return [dict(zip(heads, r)) for r in body_rows]
    return []


def _rows_for(table: list[dict[str, str]], column: str, version: Version) -> list[dict[str, str]]:
    """The table's rows whose `column` names this release ("v1.1.0" or "0.1.1")."""
    out = []
    for row in table:
        try:
            if Version(row.get(column, "").removeprefix("v")) == version:
                out.append(row)
        except InvalidVersion:
            continue
    return out


def _tf_lines(cell: str) -> list[str]:
    """TensorFlow lines a pairing cell names: "v2.13" -> [2.13]; "v2.14-v2.18" -> [2.14 ... 2.18] (one major)."""
    ends = [p.strip().removeprefix("v") for p in cell.split("-")]
    try:
        low, high = Version(ends[0]), Version(ends[-1])
    except InvalidVersion:
        return []
    if len(ends) > 2 or len(low.release) < 2 or len(high.release) < 2 or low.major != high.major:
        return []
    return [f"{low.major}.{minor}" for minor in range(low.minor, high.minor + 1)]


def _macos_wheels(files: Sequence[idx.IndexFile]) -> list[idx.IndexFile]:
    return [f for f in files if f.is_wheel and not f.yanked and "macosx_" in f.filename]


def _platform_tags(files: Sequence[idx.IndexFile]) -> list[str]:
    # lazy: no start-up gain (already loaded by then); kept beside its use
    from packaging.utils import parse_wheel_filename

    return sorted({t.platform for f in _macos_wheels(files) for t in parse_wheel_filename(f.filename)[3]})


def _metadata_wheel(files: Sequence[idx.IndexFile]) -> idx.IndexFile | None:
    """The macOS arm64 wheel for the newest Python (the one whose METADATA, description table included, is read)."""
    # lazy: no start-up gain (already loaded by then); kept beside its use
    from packaging.utils import parse_wheel_filename

    def newest_python(f: idx.IndexFile):
        tags = parse_wheel_filename(f.filename)[3]
        return max((int(t.interpreter[2:]) if t.interpreter[2:].isdigit() else 0) for t in tags), f.filename

    arm = [f for f in _macos_wheels(files) if f.filename.endswith("arm64.whl")]
    return max(arm or _macos_wheels(files), key=newest_python, default=None)


def _requires(meta: Any) -> list[str]:
    out = []
    for raw in (meta.get_all("Requires-Dist") or []) if meta is not None else []:
        try:
            out.append(str(Requirement(str(raw))))
        except InvalidRequirement:
            out.append(str(raw).strip())
    return out


def tensorflow_metal(ctx: Context) -> tuple[dict, str]:
    """tensorflow-metal releases newer than the newest shipped one: wheels (Pythons per macOS arch, the platform
    tag's macOS), upload date, Requires-Dist, and the release's row in the pairing table of its own description
    (TensorFlow lines, macOS minimum). tf_package is carried over by rule from the shipped release that pairs with
    the newest TensorFlow line not above the new row's (Apple's install steps switch packages by TF line); a
    release the table has no row for gets tensorflow = [], as the shipped data gives it."""
    shipped = ctx.shipped("apple.toml").get("tensorflow_metal", [])
    newest = max((_key(r["version"]) for r in shipped), default=Version("0"))
    jobs = [(v, files) for v, files in sorted(finals(ctx.files("tensorflow-metal")).items())
            if v > newest and _macos_wheels(files)]

    def build(job) -> dict:
        version, files = job
        wheel = _metadata_wheel(files)
        meta = ctx.metadata(wheel) if wheel else None
        table = description_table(meta, "tensorflow-metal")
        rows = _rows_for(table, "tensorflow-metal", version)
        lines = sorted({line for row in rows for line in _tf_lines(row.get("tensorflow", ""))}, key=Version)
        macos = next((row.get("macos", "").removesuffix("+").strip() for row in rows), "")
        try:
            macos = str(Version(macos)) if macos else ""
        except InvalidVersion:
            macos = ""
        per = pythons_per_platform(files)
        tags = _platform_tags(files)
        mins = sorted({"_".join(t.split("_")[:3]) for t in tags},  # macosx_12_0_arm64 -> macosx_12_0
                      key=lambda t: _key(t[len("macosx_"):].replace("_", ".")))
        record: dict[str, Any] = {"version": str(version), "tensorflow": lines, "tf_package": "", "macos_min": macos,
                                  "wheel_macos_min": mins[0] if mins else "",
                                  "macos_arm64": per["macos_arm64"], "macos_x86_64": per["macos_x86_64"],
                                  "requires": _requires(meta)}
        if first_upload(files):
            record["released"] = first_upload(files)
        how = f"wheel METADATA {wheel.filename} ({_how(wheel)})" if wheel else "no wheel"
        record["source"] = (f"package index /simple/tensorflow-metal/ (PEP 691 JSON, fetched {ctx.today}; {how}, "
                            f"description table \"|tensorflow |tensorflow-metal|MacOs| features|\")")
        notes = ["read by `stackresolve refresh`"]
        if lines:
            like = [r for r in shipped if r.get("tensorflow") and r.get("tf_package")
                    and min(_key(t) for t in r["tensorflow"]) <= _key(lines[-1])]
            if like:
                source_record = max(like, key=lambda r: max(_key(t) for t in r["tensorflow"]))
                record["tf_package"] = source_record["tf_package"]
                notes.append(f"tf_package carried over from tensorflow-metal {source_record['version']} (TensorFlow "
                             f"{', '.join(source_record['tensorflow'])}) by rule")
            else:
                notes.append("tf_package left empty: no shipped release pairs with a TensorFlow line this old")
        elif table:
            notes.append(f"not in the pairing table of its own METADATA (no row names {version})")
        else:
            notes.append("its METADATA has no pairing table: paired with no TensorFlow line")
        if meta is not None and not requirements_on(meta, "tensorflow", "macos_arm64"):
            notes.append("tensorflow-metal declares no tensorflow dependency: the pairing is not enforced by pip")
        record["note"] = "; ".join(notes)
        return record

    records = ctx.map(build, jobs)
    return {"tensorflow_metal": records}, (f"package index /simple/tensorflow-metal/ (PEP 691 JSON; the pairing table "
                                           f"in each new release's METADATA), fetched {ctx.today}")


JAX_METAL_PYTHON = "py3 (any CPython 3 for which jaxlib has a macOS wheel)"


def jax_metal(ctx: Context) -> tuple[dict, str]:
    """jax-metal releases newer than the newest shipped one: Requires-Dist, the release's row in the compatibility
    table of its own description (jaxlib, jax, macOS; "" where no row names it), the wheels' platform tags and
    upload date. status is carried over by rule from the newest shipped release (Apple's word "experimental" is
    prose, not a field)."""
    shipped = ctx.shipped("apple.toml").get("jax_metal", [])
    newest = max((_key(r["version"]) for r in shipped), default=Version("0"))
    like = max(shipped, key=lambda r: _key(r["version"])) if shipped else None
    jobs = [(v, files) for v, files in sorted(finals(ctx.files("jax-metal")).items())
            if v > newest and _macos_wheels(files)]
    if jobs and like is None:
        raise Broken("jax-metal: no shipped release to carry the status over from")

    def build(job) -> dict:
        # lazy: no start-up gain (already loaded by then); kept beside its use
        from packaging.utils import parse_wheel_filename

        version, files = job
        wheel = _metadata_wheel(files)
        meta = ctx.metadata(wheel) if wheel else None
        row = next(iter(_rows_for(description_table(meta, "jax-metal"), "jax-metal", version)), {})
        interpreters = sorted({t.interpreter for f in _macos_wheels(files)
                               for t in parse_wheel_filename(f.filename)[3]})
        record: dict[str, Any] = {"version": str(version), "requires": _requires(meta),
                                  "table_jaxlib": row.get("jaxlib", ""), "table_jax": row.get("jax", ""),
                                  "macos": row.get("macos", ""), "wheel_tags": _platform_tags(files),
                                  "python": JAX_METAL_PYTHON if interpreters == ["py3"] else ", ".join(interpreters),
                                  "status": like["status"]}
        if first_upload(files):
            record["released"] = first_upload(files)
        how = f"METADATA of {wheel.filename} ({_how(wheel)})" if wheel else "no wheel"
        record["source"] = (f"package index /simple/jax-metal/ (PEP 691 JSON; {how}, table \"jax-metal | MacOS | "
                            f"jaxlib | jax\"), fetched {ctx.today}")
        record["note"] = (f"read by `stackresolve refresh`: status carried over from jax-metal {like['version']} by "
                          f"rule" + ("" if row else f"; not in the table of its own METADATA (no row names {version})"))
        return record

    records = ctx.map(build, jobs)
    return {"jax_metal": records}, (f"package index /simple/jax-metal/ (PEP 691 JSON; the table in each new release's "
                                    f"METADATA), fetched {ctx.today}")


READERS = {"tensorflow_wheels": tensorflow_wheels, "torch": torch, "torch_companions": torch_companions, "jax": jax,
           "cudnn": cudnn, "cuda": cuda, "tensorflow_metal": tensorflow_metal, "jax_metal": jax_metal}
