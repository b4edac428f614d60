"""Wheels the install tests build themselves (no network): a wheel is a zip with METADATA, WHEEL and RECORD
(PEP 427). A fake `tensorflow` answers the import check as TensorFlow 2.x does: `__version__`,
`sysconfig.get_build_info()`, `config.list_physical_devices('GPU')`."""

from __future__ import annotations

import base64
import hashlib
import sys
import zipfile
from pathlib import Path

from packaging.requirements import Requirement
from packaging.utils import canonicalize_name

HERE_PYTHON = f"{sys.version_info[0]}.{sys.version_info[1]}"
# A TensorFlow line with CPU wheels for the Python running the tests (tensorflow_wheels.toml: 2.15 has cp39-cp311,
# 2.16 cp39-cp312, 2.20 cp39-cp313).
TF_FOR_PYTHON = {"3.10": "2.15", "3.11": "2.15", "3.12": "2.16", "3.13": "2.20"}


def uv_available() -> bool:
    from stackresolve.lock.full import LockUnavailable, uv_binary

    try:
        uv_binary()
    except LockUnavailable:
        return False
    return True

FAKE_TENSORFLOW = {
    "tensorflow/__init__.py": "__version__ = '{version}'\nfrom tensorflow import config, sysconfig\n",
    "tensorflow/config.py": "def list_physical_devices(kind):\n    return []\n",
    "tensorflow/sysconfig.py": "def get_build_info():\n    return {{'cuda_version': None, 'cudnn_version': None}}\n",
}


# the distributions that install the `tensorflow` module (a CPU plan pins tensorflow-cpu where it exists)
TENSORFLOW_DISTRIBUTIONS = ("tensorflow", "tensorflow-cpu", "tensorflow-gpu", "tensorflow-intel")


def _record_line(name: str, data: bytes) -> str:
    digest = base64.urlsafe_b64encode(hashlib.sha256(data).digest()).rstrip(b"=").decode()
    return f"{name},sha256={digest},{len(data)}"


def build_wheel(folder: Path, name: str, version: str, files: dict[str, str] | None = None) -> Path:
    """A pure-Python wheel `name==version` holding `files` (path -> text, `{version}` filled in)."""
    project = canonicalize_name(name).replace("-", "_")
    dist_info = f"{project}-{version}.dist-info"
    contents = {path: text.format(version=version) for path, text in (files or {}).items()}
    if not contents:
        contents[f"{project}_placeholder.py"] = f"VERSION = {version!r}\n"
    contents[f"{dist_info}/METADATA"] = f"Metadata-Version: 2.1\nName: {name}\nVersion: {version}\n"
    contents[f"{dist_info}/WHEEL"] = "Wheel-Version: 1.0\nGenerator: stackresolve-tests\nRoot-Is-Purelib: true\n" \
                                     "Tag: py3-none-any\n"
    record = [_record_line(path, text.encode()) for path, text in contents.items()] + [f"{dist_info}/RECORD,,"]
    contents[f"{dist_info}/RECORD"] = "\n".join(record) + "\n"
    path = folder / f"{project}-{version}-py3-none-any.whl"
    with zipfile.ZipFile(path, "w") as archive:
        for name_in_zip, text in contents.items():
            archive.writestr(name_in_zip, text)
    return path


def wheels_for(requirements, folder: Path) -> Path:
    """One wheel per requirement line, at its pinned version or a version its specifier allows (TensorFlow is the
    fake package above)."""
    folder.mkdir(parents=True, exist_ok=True)
    for line in requirements:
        req = Requirement(line)
        pinned = [s.version for s in req.specifier if s.operator == "=="]
        version = pinned[0] if pinned else next(v for v in ("0.1.0", "1.0.0", "99.0.0") if req.specifier.contains(v))
        files = FAKE_TENSORFLOW if canonicalize_name(req.name) in TENSORFLOW_DISTRIBUTIONS else None
        build_wheel(folder, req.name, version, files)
    return folder
