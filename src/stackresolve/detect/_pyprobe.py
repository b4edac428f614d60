# -*- coding: utf-8 -*-
"""Probe of a Python interpreter and its TensorFlow, PyTorch and JAX, run IN that interpreter.

Stdlib only, and valid on Python 2.7 and 3.5+ (no f-strings, no annotations): stackresolve passes this file's
text to `python -c` of the target interpreter (an old env with TF 1.x), or imports it and calls `probe()` when the
target is the interpreter running stackresolve. It never imports a framework (slow, and may crash): versions come
from the distributions' metadata directories, TensorFlow's CUDA/cuDNN numbers from the text of
tensorflow/python/platform/build_info.py, PyTorch's CUDA/HIP numbers from the text of torch/version.py and JAX's
minimum jaxlib from the text of jax/version.py. It prints one JSON document.
"""
from __future__ import print_function

import json
import os
import re
import sys

TF_DISTS = ("tensorflow", "tensorflow-gpu", "tensorflow-cpu", "tf-nightly", "tf-nightly-gpu", "tf-nightly-cpu",
            "tensorflow-intel", "tensorflow-macos", "tensorflow-aarch64", "tensorflow-rocm",
            "nvidia-tensorflow")  # NVIDIA's TF 1.15 ("1.15.5+nv23.03"): its code lives in tensorflow_core/
TORCH_DISTS = ("torch", "torchvision", "torchaudio")
# jax, jaxlib and the CUDA plugins (jax[cuda12] / jax[cuda13] install jax-cudaNN-plugin + jax-cudaNN-pjrt at the
# jaxlib version); any later jax-cudaNN-plugin / -pjrt is matched by JAX_CUDA_DIST below
JAX_DISTS = ("jax", "jaxlib", "jax-cuda11-plugin", "jax-cuda11-pjrt", "jax-cuda12-plugin", "jax-cuda12-pjrt",
             "jax-cuda13-plugin", "jax-cuda13-pjrt")
JAX_CUDA_DIST = re.compile(r"^jax-cuda(\d+)-(plugin|pjrt)$")
NVIDIA_PREFIXES = ("nvidia-cudnn-", "nvidia-cuda-runtime-", "nvidia-cuda-nvcc-")
# packages whose installed version decides whether a TensorFlow release imports (the pitfalls of
# constraints/pitfalls.toml name them); every "nvidia-*" distribution is reported as well
PIP_PACKAGES = ("protobuf", "numpy", "h5py", "keras", "tensorboard", "tensorflow-estimator", "typing-extensions",
                "gast", "ml-dtypes", "tf-keras", "keras-applications", "keras-preprocessing", "wrapt", "six",
                "absl-py", "grpcio", "scipy", "setuptools", "termcolor", "opt-einsum", "flatbuffers", "astunparse",
                "google-pasta", "tensorflow-io-gcs-filesystem", "jax", "jaxlib", "tensorrt", "cryptography")
# where build_info.py lives: tensorflow_core/ for 1.15 (NVIDIA's 1.15 too) and 2.0-2.1, tensorflow/ otherwise
TF_MODULE_DIRS = ("tensorflow", "tensorflow_core")
# module-level names read from a framework's version.py (by distribution), never by importing it:
#   torch/version.py  __version__ = '2.5.1+cu124' / cuda: Optional[str] = '12.4' / hip / rocm / xpu / git_version
#   jax/version.py    _version = "0.4.30" / _release_version / _minimum_jaxlib_version = "0.4.27"
VERSION_FILES = {
    "torch": (("torch", "version.py"), ("__version__", "cuda", "hip", "rocm", "xpu", "git_version")),
    "jax": (("jax", "version.py"), ("_version", "_release_version", "_minimum_jaxlib_version")),
}


def _norm(name):
    return re.sub(r"[-_.]+", "-", name).lower()


def _read(path, limit=262144):
    try:
        fh = open(path, "rb")
    except (IOError, OSError):
        return None
    try:
        data = fh.read(limit)
    finally:
        fh.close()
    return data.decode("utf-8", "replace")


def _metadata_version(path):
    """Version: line of METADATA / PKG-INFO (egg-info may be a file or a directory)."""
    for candidate in (os.path.join(path, "METADATA"), os.path.join(path, "PKG-INFO"), path):
        if os.path.isfile(candidate):
            text = _read(candidate, 65536) or ""
            m = re.search(r"^Version:\s*(\S+)", text, re.MULTILINE)
            if m:
                return m.group(1)
    return None


def parse_build_info(text):
    """cuda / cudnn / is_cuda_build from build_info.py, in its three known shapes:
    TF >= 2.4:   build_info = collections.OrderedDict([('cuda_version', '11.2'), ('cudnn_version', '8'), ...])
    TF 2.x:      build_info = {'cuda_version': '10.1', 'cudnn_version': '7', 'is_cuda_build': True, ...}
    TF 1.x:      is_cuda_build = True  /  cuda_version_number = '10.0'  (Windows builds also name the DLLs)
    """
    out = {"cuda_version": None, "cudnn_version": None, "is_cuda_build": None}
    if not text:
        return out
    for key in ("cuda_version", "cudnn_version"):
        m = re.search(r"['\"]?\b" + key + r"(?:_number)?['\"]?\]?\s*[,:=]\s*['\"]([^'\"]*)['\"]", text)
        if m and m.group(1):
            out[key] = m.group(1)
    m = re.search(r"['\"]?\bis_cuda_build['\"]?\]?\s*[,:=]\s*(True|False)", text)
    if m:
        out["is_cuda_build"] = m.group(1) == "True"
    return out


_ASSIGN = re.compile(r"^([A-Za-z_][A-Za-z0-9_]*)[ \t]*(?::[^=\n]*)?=[ \t]*(.*?)[ \t]*(?:#.*)?$", re.MULTILINE)
_LITERAL = re.compile(r"""^(?:[rRuU]?'([^'\\]*)'|[rRuU]?"([^"\\]*)"|(None|True|False))$""")


def parse_version_py(text, names):
    """The module-level assignments `names` of a version.py, as text: {name: 'value' or None for None}. Only
    unindented lines whose value is a plain string literal, None, True or False count (the first one of each
    name); a computed value (`cuda = _check_cuda_version()`) or an annotation-only line is left out. Both
    `cuda = '11.7'` (torch 1.x) and `cuda: Optional[str] = '12.4'` (torch 2.x) are read."""
    out = {}
    if not text:
        return out
    for m in _ASSIGN.finditer(text):
        name = m.group(1)
        if name not in names or name in out:
            continue
        lit = _LITERAL.match(m.group(2))
        if not lit:
            continue
        if lit.group(3) is not None:
            out[name] = None if lit.group(3) == "None" else lit.group(3)
        else:
            out[name] = lit.group(1) if lit.group(1) is not None else lit.group(2)
    return out


def _interesting(name):
    return (name in TF_DISTS or name in TORCH_DISTS or name in JAX_DISTS or JAX_CUDA_DIST.match(name) is not None
            or name.startswith(NVIDIA_PREFIXES))


def scan(sys_path):
    """Interesting distributions on sys_path, first one of each name (the one Python would import)."""
    dists = []
    seen = set()
    for site, entry, name, version in _dist_entries(sys_path):
        if not _interesting(name):
            continue
        if name in seen:
            continue
        seen.add(name)
        if version is None:
            version = _metadata_version(os.path.join(site, entry))
        dist = {"name": name, "version": version, "location": site}
        if name in TF_DISTS:
            for mod in TF_MODULE_DIRS:
                bi = os.path.join(site, mod, "python", "platform", "build_info.py")
                text = _read(bi)
                if text is not None:
                    dist["build_info"] = parse_build_info(text)
                    dist["build_info_path"] = bi
                    break
        if name in VERSION_FILES:
            rel, names = VERSION_FILES[name]
            vp = os.path.join(site, *rel)
            text = _read(vp)
            if text is not None:
                dist["version_py"] = parse_version_py(text, names)
                dist["version_py_path"] = vp
        dists.append(dist)
    return dists


def _dist_entries(sys_path):
    """(site, entry, normalized name, version from the entry name or None) for every dist-info / egg-info."""
    for site in sys_path:
        if not site or not os.path.isdir(site):
            continue
        try:
            entries = sorted(os.listdir(site))
        except OSError:
            continue
        for entry in entries:
            if entry.endswith(".dist-info"):
                base = entry[:-len(".dist-info")]
            elif entry.endswith(".egg-info"):
                base = entry[:-len(".egg-info")]
            else:
                continue
            parts = base.split("-")
            version = parts[1] if len(parts) > 1 and parts[1][:1].isdigit() else None
            yield site, entry, _norm(parts[0]), version


def scan_packages(sys_path):
    """Every distribution on sys_path, first one of each name (the one Python imports): the pitfall packages
    (PIP_PACKAGES) and nvidia-* wheels doctor checks, and everything a full lock pins for `check`."""
    found = []
    seen = set()
    for site, entry, name, version in _dist_entries(sys_path):
        if name in seen:
            continue
        seen.add(name)
        if version is None:
            version = _metadata_version(os.path.join(site, entry))
        found.append({"name": name, "version": version, "location": site})
    return found


def nvidia_lib_dirs(sys_path):
    """site/nvidia/<component>/lib (Linux wheels) and .../bin (Windows wheels) folders that exist."""
    dirs = []
    for site in sys_path:
        root = os.path.join(site or "", "nvidia")
        if not site or not os.path.isdir(root):
            continue
        try:
            components = sorted(os.listdir(root))
        except OSError:
            continue
        for component in components:
            for sub in ("lib", "bin"):
                d = os.path.join(root, component, sub)
                if os.path.isdir(d) and d not in dirs:
                    dirs.append(d)
    return dirs


def probe(sys_path=None):
    if sys_path is None:
        sys_path = sys.path
    return {
        "probe": "stackresolve-python",
        "python": "%d.%d.%d" % tuple(sys.version_info[:3]),
        "executable": sys.executable,
        "prefix": sys.prefix,
        "implementation": getattr(getattr(sys, "implementation", None), "name", None),
        "dists": scan(sys_path),
        "packages": scan_packages(sys_path),
        "nvidia_lib_dirs": nvidia_lib_dirs(sys_path),
    }


def main():
    sys.stdout.write(json.dumps(probe()) + "\n")
    sys.stdout.flush()


if __name__ == "__main__":
    main()
