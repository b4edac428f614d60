"""The target Python interpreter and the TensorFlow, PyTorch and JAX installed in it (through the stdlib-only
`_pyprobe`)."""

from __future__ import annotations

import json
import os
import re
import sys
import time

from stackresolve.model.machine import Finding, FrameworkInfo, PackageInfo, ProbeRecord, PythonInfo
from .runner import CommandNotFound, CommandTimeout

PYTHON_PROBE_TIMEOUT = 15.0
MARKER = "stackresolve-python-probe"
# the names _pyprobe.VERSION_FILES reads from a version.py (a foreign probe's others are dropped)
VERSION_PY_NAMES = frozenset({"__version__", "cuda", "hip", "rocm", "xpu", "git_version", "_version",
                              "_release_version", "_minimum_jaxlib_version"})


def probe_script() -> str:
    here = os.path.join(os.path.dirname(os.path.abspath(__file__)), "_pyprobe.py")
    with open(here, encoding="utf-8") as fh:
        return fh.read()


def python_argv(python_exe: str) -> list[str]:
    return [python_exe, "-c", probe_script(), MARKER]


def _same_interpreter(python_exe: str | None) -> bool:
    if not python_exe:
        return True
    try:
        return os.path.realpath(python_exe) == os.path.realpath(sys.executable) and \
            os.path.abspath(python_exe) == os.path.abspath(sys.executable)
    except OSError:
        return False


def run_python_probe(python_exe: str | None, runner, records: list, findings: list) -> dict | None:
    """The probe's JSON document, or None (with a finding) when it could not be had."""
    t0 = time.monotonic()
    if _same_interpreter(python_exe):
        # lazy: start-up (only this path needs detect._pyprobe)
        from . import _pyprobe

        try:
            doc = _pyprobe.probe()
        except Exception as exc:  # pragma: no cover - defensive
            records.append(ProbeRecord("python (in-process)", "failed", repr(exc), time.monotonic() - t0))
            return None
        doc["_source"] = "in-process"
        records.append(ProbeRecord("python (in-process)", "ok", doc.get("python") or "", time.monotonic() - t0))
        return doc
    name = f"python ({python_exe})"
    try:
        rc, out, err = runner(python_argv(python_exe), PYTHON_PROBE_TIMEOUT)
    except CommandNotFound as exc:
        records.append(ProbeRecord(name, "failed", str(exc), time.monotonic() - t0))
        findings.append(Finding("error", "python-not-found", f"cannot run {python_exe}: {exc}",
                                "pass the path of an existing interpreter to --python-exe", "python-probe"))
        return None
    except CommandTimeout as exc:
        records.append(ProbeRecord(name, "timeout", str(exc), time.monotonic() - t0))
        findings.append(Finding("warning", "probe-timeout", f"the Python probe in {python_exe}: {exc}",
                                "raise STACKRESOLVE_DETECT_TIMEOUT if that interpreter is just slow to start",
                                "python-probe"))
        return None
    except Exception as exc:  # CommandOutputTooLarge, a runner's bug: a failed probe, never a crash
        records.append(ProbeRecord(name, "failed", str(exc) or repr(exc), time.monotonic() - t0))
        return None
    doc = None
    for line in out.splitlines():
        line = line.strip()
        if line.startswith("{"):
            try:
                cand = json.loads(line)
            except ValueError:
                continue
            if isinstance(cand, dict) and cand.get("probe") == "stackresolve-python":
                doc = cand
    if doc is None:
        tail = (err or out).strip().splitlines()[-1:] or [""]
        records.append(ProbeRecord(name, "failed", f"exit {rc}: {tail[0][:200]}", time.monotonic() - t0))
        findings.append(Finding("warning", "python-probe-failed",
                                f"the Python probe did not run in {python_exe} (exit {rc}): {tail[0][:200]}",
                                "check that the path is a Python 2.7 or 3.5+ interpreter", "python-probe"))
        return None
    doc = clean_probe_doc(doc)
    doc["_source"] = "probe"
    records.append(ProbeRecord(name, "ok", doc.get("python") or "", time.monotonic() - t0))
    return doc


def _text(value) -> str | None:
    return value if isinstance(value, str) and value.isprintable() else None


def clean_probe_doc(doc: dict) -> dict:
    """The probe document with every field of the type the probe writes (another interpreter printed it: a broken
    or foreign one may print anything after the marker); fields of another type are dropped."""
    def entries(items, keys):
        out = []
        for item in items if isinstance(items, list) else ():
            if not isinstance(item, dict) or not _text(item.get("name")):
                continue
            entry = {k: _text(item.get(k)) for k in keys}
            bi = item.get("build_info")
            if isinstance(bi, dict):
                entry["build_info"] = {"cuda_version": _text(bi.get("cuda_version")),
                                       "cudnn_version": _text(bi.get("cudnn_version")),
                                       "is_cuda_build": bi.get("is_cuda_build")
                                       if isinstance(bi.get("is_cuda_build"), bool) else None}
            vp = item.get("version_py")
            if isinstance(vp, dict):
                # only the names the probe reads; a value is text or None (a None literal); other types dropped
                entry["version_py"] = {k: _text(v) for k, v in vp.items()
                                       if k in VERSION_PY_NAMES and (v is None or _text(v) is not None)}
            out.append(entry)
        return out

    return {
        "probe": doc.get("probe"),
        "python": _text(doc.get("python")),
        "executable": _text(doc.get("executable")),
        "prefix": _text(doc.get("prefix")),
        "implementation": _text(doc.get("implementation")),
        "dists": entries(doc.get("dists"), ("name", "version", "location", "build_info_path", "version_py_path")),
        "packages": entries(doc.get("packages"), ("name", "version", "location")),
        "nvidia_lib_dirs": [d for d in doc.get("nvidia_lib_dirs") or () if _text(d)]
        if isinstance(doc.get("nvidia_lib_dirs"), list) else [],
    }


def python_info(doc: dict | None, python_exe: str | None) -> PythonInfo | None:
    if doc is None:
        return PythonInfo(version=None, executable=python_exe, source="probe-failed") if python_exe else None
    packages = tuple(PackageInfo(name=str(p["name"]), version=p.get("version"), location=p.get("location"))
                     for p in doc.get("packages") or () if isinstance(p, dict) and p.get("name"))
    lib_dirs = tuple(str(d) for d in doc.get("nvidia_lib_dirs") or () if d)
    return PythonInfo(version=doc.get("python"), executable=doc.get("executable") or python_exe or sys.executable,
                      source=doc.get("_source", ""), prefix=doc.get("prefix"), packages=packages,
                      nvidia_lib_dirs=lib_dirs)


def frameworks(doc: dict | None, findings: list) -> list[FrameworkInfo]:
    """TensorFlow (each TF distribution), then PyTorch, then JAX, as the probe document reports them."""
    if not doc:
        return []
    dists = [d for d in doc.get("dists") or () if isinstance(d, dict) and d.get("name")]
    out = _tensorflow(dists, findings)
    out += _pytorch(dists)
    out += _jax(dists, findings)
    return out


def _tensorflow(dists: list, findings: list) -> list[FrameworkInfo]:
    # lazy: start-up (only this path needs detect._pyprobe)
    from ._pyprobe import TF_DISTS

    out = []
    tf = [d for d in dists if d.get("name") in TF_DISTS]
    for d in tf:
        bi = d.get("build_info") or {}
        name = d["name"]
        gpu = bi.get("is_cuda_build")
        if gpu is None:
            if name.endswith("-gpu") or name == "nvidia-tensorflow":  # NVIDIA's wheels are CUDA builds
                gpu = True
            elif name.endswith("-cpu"):
                gpu = False
        source = "dist-info" + (" + build_info.py" if d.get("build_info_path") else "")
        out.append(FrameworkInfo(name="tensorflow", version=d.get("version"), cuda=bi.get("cuda_version") or None,
                                 cudnn=bi.get("cudnn_version") or None, gpu_build=gpu, package=name,
                                 path=d.get("location"), source=source))
    # tensorflow-intel is the Windows meta-dependency of tensorflow >= 2.11: not a conflict
    by_site: dict = {}
    for d in tf:
        if d["name"] != "tensorflow-intel":
            by_site.setdefault(d.get("location"), []).append(d)
    for site, real in by_site.items():
        if len(real) < 2:
            continue
        names = ", ".join(f"{d['name']} {d.get('version')}" for d in real)
        findings.append(Finding(
            "warning", "tensorflow-multiple-dists",
            f"several TensorFlow distributions are installed side by side in {site} ({names}); they write "
            f"the same `tensorflow` package, so the one installed last wins",
            "pip uninstall all of them, then install the one the plan names", "python-probe"))
    return out


def _package(d: dict) -> PackageInfo:
    return PackageInfo(name=str(d["name"]), version=d.get("version"), location=d.get("location"))


def _local(version: str | None) -> str:
    """The local part of a version ("cu124" of "2.5.1+cu124"), "" when there is none."""
    return version.split("+", 1)[1] if version and "+" in version else ""


def _dotted(digits: str) -> str:
    """Digits of PyTorch's cuXYZ and old jaxlib's cudaXYZ as a CUDA version: 124 -> 12.4, 92 -> 9.2, 130 -> 13.0."""
    return f"{digits[:-1]}.{digits[-1]}"


# PyTorch's variant tags, as its wheel indexes name them in the local version ("2.5.1+cu124", "2.13.0+cpu",
# "2.3.0.dev20240308+rocm6.0"); anything else after the "+" ("a0+git1234567", an NGC build's
# "e000cf0ad9.nv24.10") is no variant, and the variant is derived from torch/version.py instead
_TORCH_VARIANT = re.compile(r"^(cu[0-9]{2,3}|cpu(?:\.cxx11\.abi)?|rocm[0-9][0-9a-z.]*|rocmsdk[0-9]+|xpu)$")


def torch_variant(version_py: dict | None, dist_version: str | None) -> str | None:
    """The PyTorch build variant: the local version's tag when it names one (torch.__version__ first, then the
    dist-info's), else derived from torch/version.py: cuda '12.4' -> "cu124", rocm/hip '6.2.41133-...' ->
    "rocm6.2", xpu set -> "xpu", none of them -> "cpu". None when neither says."""
    vp = version_py or {}
    for v in (vp.get("__version__"), dist_version):
        tag = _local(v)
        if _TORCH_VARIANT.match(tag):
            return tag
    if not version_py:
        return None
    cuda = vp.get("cuda")
    m = re.match(r"([0-9]{1,9})\.([0-9]{1,9})(?![0-9])", cuda or "")
    if m:
        return f"cu{m.group(1)}{m.group(2)}"
    for key in ("rocm", "hip"):
        m = re.match(r"([0-9]{1,9})\.([0-9]{1,9})(?![0-9])", vp.get(key) or "")
        if m:
            return f"rocm{m.group(1)}.{m.group(2)}"
    if vp.get("xpu"):
        return "xpu"
    return "cpu"


def _pytorch(dists: list) -> list[FrameworkInfo]:
    torch = next((d for d in dists if d["name"] == "torch"), None)
    if torch is None:
        return []
    vp = torch.get("version_py")
    version = torch.get("version")
    variant = torch_variant(vp, version)
    if vp is not None:
        cuda = vp.get("cuda")
        gpu = cuda is not None
        source = "dist-info + torch/version.py"
    else:  # torch/version.py unreadable: only a "+cuXYZ" / "+cpu" local version says anything
        m = re.fullmatch(r"cu([0-9]{2,3})", variant or "")
        cuda = _dotted(m.group(1)) if m else None
        gpu = True if cuda else (False if variant else None)
        source = "dist-info"
    companions = tuple(_package(d) for d in dists if d["name"] in ("torchvision", "torchaudio"))
    return [FrameworkInfo(name="pytorch", version=version, cuda=cuda, cudnn=None, gpu_build=gpu, package="torch",
                          path=torch.get("location"), source=source, variant=variant,
                          module_version=(vp or {}).get("__version__"), git_version=(vp or {}).get("git_version"),
                          hip=(vp or {}).get("hip"), companions=companions)]


def jaxlib_cuda(version: str | None) -> tuple[str | None, str | None]:
    """(CUDA, cuDNN) named by a GPU jaxlib's local version: "0.4.23+cuda12.cudnn89" -> ("12", "8.9"),
    "0.3.25+cuda11.cudnn805" -> ("11", "8.0.5"), the older "0.1.69+cuda111" -> ("11.1", None); (None, None) for a
    CPU jaxlib ("0.4.30")."""
    m = re.fullmatch(r"cuda([0-9]{1,9})(?:\.cudnn([0-9]{1,9}))?", _local(version))
    if not m:
        return None, None
    cuda, cudnn = m.group(1), m.group(2)
    if cudnn:  # "cuda12.cudnn89": the CUDA major, cuDNN major then minor (and patch: "805")
        return cuda, cudnn[0] + "." + ".".join(cudnn[1:])
    # before the cudnn tag: "cuda111", "cuda100", "cuda92" (major and minor run together)
    return (_dotted(cuda) if len(cuda) >= 3 or cuda[0] != "1" else cuda), None


def _release(version: str | None) -> tuple[int, ...] | None:
    """The dotted number a version starts with, as JAX compares them (jax/_src/lib/__init__.py)."""
    m = re.match(r"[0-9]{1,9}(?:\.[0-9]{1,9})*(?![0-9])", version or "")
    return tuple(int(x) for x in m.group(0).split(".")) if m else None


def _jax(dists: list, findings: list) -> list[FrameworkInfo]:
    # lazy: start-up (only this path needs detect._pyprobe)
    from ._pyprobe import JAX_CUDA_DIST

    jax = next((d for d in dists if d["name"] == "jax"), None)
    jaxlib = next((d for d in dists if d["name"] == "jaxlib"), None)
    plugins = [d for d in dists if JAX_CUDA_DIST.match(d["name"])]
    if jax is None and jaxlib is None and not plugins:
        return []
    main = jax or jaxlib or plugins[0]
    vp = (jax or {}).get("version_py")
    # the CUDA plugin jax loads: it tries jax_cuda13_plugin, then jax_cuda12_plugin, then jaxlib.cuda (a GPU jaxlib)
    majors = sorted({int(JAX_CUDA_DIST.match(d["name"]).group(1)) for d in plugins}, reverse=True)
    lib_cuda, lib_cudnn = jaxlib_cuda((jaxlib or {}).get("version"))
    if majors:
        cuda, cudnn, variant, gpu = str(majors[0]), None, f"cuda{majors[0]}", True
    elif lib_cuda:
        cuda, cudnn, variant, gpu = lib_cuda, lib_cudnn, _local(jaxlib.get("version")), True
    elif jaxlib is not None:
        cuda, cudnn, variant, gpu = None, None, "cpu", False
    else:
        cuda, cudnn, variant, gpu = None, None, None, None
    companions = tuple(_package(d) for d in ([jaxlib] if jaxlib else []) + sorted(plugins, key=lambda d: d["name"]))
    if main is not jax:
        companions = tuple(c for c in companions if c.name != main["name"])
    source = "dist-info" + (" + jax/version.py" if vp is not None else "")
    _jax_findings(jax, jaxlib, plugins, vp or {}, findings)
    return [FrameworkInfo(name="jax", version=main.get("version"), cuda=cuda, cudnn=cudnn, gpu_build=gpu,
                          package=main["name"], path=main.get("location"), source=source, variant=variant,
                          module_version=(vp or {}).get("_release_version") or (vp or {}).get("_version"),
                          companions=companions)]


def _jax_findings(jax: dict | None, jaxlib: dict | None, plugins: list, vp: dict, findings: list) -> None:
    # lazy: start-up (only this path needs detect._pyprobe)
    from ._pyprobe import JAX_CUDA_DIST

    jax_v, lib_v = (jax or {}).get("version"), (jaxlib or {}).get("version")
    if jax is not None and jaxlib is None:
        findings.append(Finding(
            "warning", "jax-without-jaxlib", f"jax {jax_v} is installed without jaxlib: `import jax` fails",
            f"pip install jaxlib=={jax_v}" if _release(jax_v) else "pip install jaxlib", "python-probe"))
    if jax is not None and jaxlib is not None and _release(jax_v) and _release(lib_v):
        # the check `import jax` runs before anything else (jax/_src/lib/__init__.py: check_jaxlib_version)
        minimum = vp.get("_minimum_jaxlib_version")
        why = None
        if _release(minimum) and _release(lib_v) < _release(minimum):
            why = f"jax {jax_v} requires jaxlib >= {minimum} (jax/version.py)"
        elif _release(lib_v) > _release(jax_v):
            why = "jaxlib is newer than jax"
        if why:
            findings.append(Finding(
                "warning", "jax-jaxlib-mismatch",
                f"jaxlib {lib_v} does not go with jax {jax_v}: {why}, so `import jax` raises RuntimeError",
                f"pip install jaxlib=={'.'.join(map(str, _release(jax_v)))} (jaxlib at jax's version)",
                "python-probe"))
    # jax[cuda12] installs jax-cuda12-plugin and jax-cuda12-pjrt at exactly the jaxlib version (jax's METADATA)
    base = jaxlib or jax
    base_v = (base or {}).get("version")
    for d in plugins:
        if base is None or not _release(d.get("version")) or not _release(base_v):
            continue
        if _release(d.get("version")) != _release(base_v):
            extra = "cuda" + JAX_CUDA_DIST.match(d["name"]).group(1)
            want = ".".join(map(str, _release(jax_v or base_v)))
            findings.append(Finding(
                "warning", "jax-cuda-plugin-mismatch",
                f"{d['name']} {d.get('version')} is not at the {base['name']} version {base_v}; jax[{extra}] "
                f"installs its CUDA plugin at exactly the jaxlib version",
                f'pip install "jax[{extra}]=={want}"', "python-probe"))
