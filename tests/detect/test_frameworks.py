"""PyTorch, JAX and NVIDIA's TensorFlow 1.15 in the Python probe (`_pyprobe`) and its records (`pyenv`).

The version.py files are real (tests/fixtures/detect/README.md says which wheel each one was read from); the
expected values below were read off those files by hand. Every site-packages tree is built under tmp_path: the
dist-info directory names are those of the wheels named in the README, their METADATA holds the `Name:` and
`Version:` lines only. Texts that are not fixtures are built here and say so.
"""

from __future__ import annotations

import glob
import json
import os
import subprocess
import sys

import pytest
from detect_helpers import FakeRunner, fixture_text, make_tree

from stackresolve.detect import LocalFS, detect_machine
from stackresolve.detect import _pyprobe, pyenv
from stackresolve.model.machine import FrameworkInfo, Machine, OSInfo, PackageInfo
from stackresolve.detect.render import render_text


def site(root, dists: dict, files: dict | None = None) -> str:
    """A site-packages tree: dists = {dist-info directory name: (Name, Version)}, files = {path: text}."""
    tree = {}
    for entry, (name, version) in dists.items():
        meta = "METADATA" if entry.endswith(".dist-info") else "PKG-INFO"
        tree[f"/{entry}/{meta}"] = f"Metadata-Version: 2.1\nName: {name}\nVersion: {version}\n"
    tree.update(files or {})
    make_tree(root, tree)
    return str(root)


def records(sys_path: list[str]):
    """_pyprobe over sys_path, through JSON and clean_probe_doc as a foreign interpreter's answer goes, then the
    framework records and their findings."""
    doc = pyenv.clean_probe_doc(json.loads(json.dumps(_pyprobe.probe(sys_path=sys_path))))
    findings: list = []
    return pyenv.frameworks(doc, findings), findings


def only(fws, name):
    found = [f for f in fws if f.name == name]
    assert len(found) == 1, fws
    return found[0]


# --- torch/version.py --------------------------------------------------------------------------------------------
# fixture, the wheel's dist-info directory, then by hand from the file: __version__, cuda, hip, git_version
TORCH_FILES = [
    ("torch-2.5.1-manylinux1_x86_64-version.py.txt", "torch-2.5.1.dist-info",
     "2.5.1+cu124", "12.4", None, "a8d6afb511a69687bbb2b7e88a3cf67917e1697e"),
    ("torch-2.5.1-win_amd64-version.py.txt", "torch-2.5.1.dist-info",
     "2.5.1+cpu", None, None, "a8d6afb511a69687bbb2b7e88a3cf67917e1697e"),
    ("torch-2.5.1-macosx_11_0_arm64-version.py.txt", "torch-2.5.1.dist-info",
     "2.5.1", None, None, "a8d6afb511a69687bbb2b7e88a3cf67917e1697e"),
    ("torch-2.8.0-manylinux_2_28_x86_64-version.py.txt", "torch-2.8.0.dist-info",
     "2.8.0+cu128", "12.8", None, "a1cb3cc05d46d198467bebbb6e8fba50a325d4e7"),
    ("torch-2.8.0-manylinux_2_28_aarch64-version.py.txt", "torch-2.8.0.dist-info",
     "2.8.0+cpu", None, None, "a1cb3cc05d46d198467bebbb6e8fba50a325d4e7"),
    ("torch-1.13.1-manylinux1_x86_64-version.py.txt", "torch-1.13.1.dist-info",
     "1.13.1+cu117", "11.7", None, "49444c3e546bf240bed24a101e747422d1f8a0ee"),
    ("torch-2.14.1-manylinux_2_28_x86_64-version.py.txt", "torch-2.14.1.dist-info",
     "2.14.1+cu130", "13.0", None, "5c4886908584029761b579af026dcfb627c84070"),
    ("torch-2.13.0+cpu-manylinux_2_28_x86_64-version.py.txt", "torch-2.13.0+cpu.dist-info",
     "2.13.0+cpu", None, None, "cf30153c4c131c8164ee7798e5022d810682e2cb"),
]


@pytest.mark.parametrize("fixture, _entry, version, cuda, hip, git", TORCH_FILES)
def test_parse_version_py_reads_real_torch_files(fixture, _entry, version, cuda, hip, git):
    got = _pyprobe.parse_version_py(fixture_text(fixture), _pyprobe.VERSION_FILES["torch"][1])
    assert (got["__version__"], got["cuda"], got["hip"], got["git_version"]) == (version, cuda, hip, git)
    # torch 1.x writes `cuda = '11.7'`, 2.x `cuda: Optional[str] = '12.4'`; 2.8 adds xpu, 2.13 rocm (both None)
    assert got.get("xpu") is None and got.get("rocm") is None


def test_parse_version_py_skips_what_it_cannot_read():
    # the text of torchvision/version.py of torchvision-0.20.1-cp311-cp311-manylinux1_x86_64.whl (read with the
    # torch fixtures): its cuda is computed at import, so only the literals count
    text = ("__version__ = '0.20.1+cu124'\ngit_version = '3ac97aa9120137381ed1060f37237e44485ac2aa'\n"
            "from torchvision.extension import _check_cuda_version\nif _check_cuda_version() > 0:\n"
            "    cuda = _check_cuda_version()\n")
    assert _pyprobe.parse_version_py(text, ("__version__", "cuda", "git_version")) == {
        "__version__": "0.20.1+cu124", "git_version": "3ac97aa9120137381ed1060f37237e44485ac2aa"}
    assert _pyprobe.parse_version_py("cuda = get_cuda()\nhip: Optional[str]\n", ("cuda", "hip")) == {}
    assert _pyprobe.parse_version_py("", ("cuda",)) == {} and _pyprobe.parse_version_py(None, ("cuda",)) == {}


# fixture -> version (dist-info), cuda, gpu_build, variant: read off the file and the wheel's dist-info name
TORCH_RECORDS = {
    "torch-2.5.1-manylinux1_x86_64-version.py.txt": ("2.5.1", "12.4", True, "cu124"),  # PyPI's default Linux
    "torch-2.5.1-win_amd64-version.py.txt": ("2.5.1", None, False, "cpu"),
    "torch-2.5.1-macosx_11_0_arm64-version.py.txt": ("2.5.1", None, False, "cpu"),  # no local version at all
    "torch-2.8.0-manylinux_2_28_x86_64-version.py.txt": ("2.8.0", "12.8", True, "cu128"),
    "torch-2.8.0-manylinux_2_28_aarch64-version.py.txt": ("2.8.0", None, False, "cpu"),
    "torch-1.13.1-manylinux1_x86_64-version.py.txt": ("1.13.1", "11.7", True, "cu117"),
    "torch-2.14.1-manylinux_2_28_x86_64-version.py.txt": ("2.14.1", "13.0", True, "cu130"),
    "torch-2.13.0+cpu-manylinux_2_28_x86_64-version.py.txt": ("2.13.0+cpu", None, False, "cpu"),
}


@pytest.mark.parametrize("fixture, entry, module_version, _cuda, _hip, git", TORCH_FILES)
def test_pytorch_record_from_real_version_py(tmp_path, fixture, entry, module_version, _cuda, _hip, git):
    version, cuda, gpu, variant = TORCH_RECORDS[fixture]
    sp = site(tmp_path, {entry: ("torch", version)}, {"/torch/version.py": fixture_text(fixture)})
    fws, findings = records([sp])
    t = only(fws, "pytorch")
    assert (t.version, t.cuda, t.gpu_build, t.variant, t.module_version) == (version, cuda, gpu, variant,
                                                                           module_version)
    assert (t.package, t.path, t.git_version, t.hip, t.cudnn) == ("torch", sp, git, None, None)
    assert t.source == "dist-info + torch/version.py" and findings == []


def test_pytorch_default_index_wheel_names_its_cuda_only_in_version_py(tmp_path):
    """PyPI's torch 2.5.1 Linux wheel: the dist-info says 2.5.1, torch/version.py says 2.5.1+cu124 and CUDA 12.4."""
    sp = site(tmp_path, {"torch-2.5.1.dist-info": ("torch", "2.5.1"),
                         "torchvision-0.20.1.dist-info": ("torchvision", "0.20.1"),
                         "torchaudio-2.5.1.dist-info": ("torchaudio", "2.5.1")},
              {"/torch/version.py": fixture_text("torch-2.5.1-manylinux1_x86_64-version.py.txt")})
    t = only(records([sp])[0], "pytorch")
    assert (t.version, t.module_version, t.cuda, t.variant, t.gpu_build) == ("2.5.1", "2.5.1+cu124", "12.4",
                                                                            "cu124", True)
    assert t.companions == (PackageInfo("torchaudio", "2.5.1", sp), PackageInfo("torchvision", "0.20.1", sp))
    js = t.to_json_dict()
    assert js["variant"] == "cu124" and js["module_version"] == "2.5.1+cu124"
    assert js["companions"] == [{"name": "torchaudio", "version": "2.5.1", "location": sp},
                                {"name": "torchvision", "version": "0.20.1", "location": sp}]


# Built here (no ROCm wheel could be read: pip's index carries none): the text of the 2.5.1 Linux fixture with
# the ROCm values put in, the shape PyTorch's ROCm wheels write (__version__ with "+rocmX.Y", cuda None, hip set).
ROCM_VERSION_PY = (fixture_text("torch-2.5.1-manylinux1_x86_64-version.py.txt")
                   .replace("'2.5.1+cu124'", "'2.5.1+rocm6.2'")
                   .replace("cuda: Optional[str] = '12.4'", "cuda: Optional[str] = None")
                   .replace("hip: Optional[str] = None", "hip: Optional[str] = '6.2.41133-dd7f95766'"))


def test_pytorch_rocm_build(tmp_path):
    assert "'2.5.1+rocm6.2'" in ROCM_VERSION_PY and "'6.2.41133-dd7f95766'" in ROCM_VERSION_PY
    sp = site(tmp_path, {"torch-2.5.1+rocm6.2.dist-info": ("torch", "2.5.1+rocm6.2")},
              {"/torch/version.py": ROCM_VERSION_PY})
    t = only(records([sp])[0], "pytorch")
    assert (t.cuda, t.gpu_build, t.variant, t.hip) == (None, False, "rocm6.2", "6.2.41133-dd7f95766")


def test_pytorch_variant_derived_when_the_local_version_names_none():
    # a local version that names no variant (a source build's "+git...", an NGC container's "...nv24.10") or
    # none at all: the variant comes from version.py's cuda / hip / rocm / xpu
    assert pyenv.torch_variant({"__version__": "2.8.0a0+gitfc14c65", "cuda": None,
                                "hip": "6.4.50101-9a6572ae7"}, "2.8.0a0+gitfc14c65") == "rocm6.4"
    assert pyenv.torch_variant({"__version__": "2.5.0a0+e000cf0ad9.nv24.10", "cuda": "12.6", "hip": None},
                               "2.5.0a0+e000cf0ad9.nv24.10") == "cu126"
    assert pyenv.torch_variant({"__version__": "2.9.0", "cuda": None, "hip": None, "xpu": "20250101"},
                               "2.9.0") == "xpu"
    assert pyenv.torch_variant({"__version__": "0.4.1", "cuda": "9.0.176"}, "0.4.1") == "cu90"
    assert pyenv.torch_variant(None, "2.1.0") is None
    assert pyenv.torch_variant(None, "2.1.0+cu118") == "cu118"


def test_pytorch_without_version_py_falls_back_to_the_local_version(tmp_path):
    a = site(tmp_path / "a", {"torch-2.1.0+cu118.dist-info": ("torch", "2.1.0+cu118")})
    t = only(records([a])[0], "pytorch")
    assert (t.cuda, t.gpu_build, t.variant, t.module_version, t.source) == ("11.8", True, "cu118", None,
                                                                            "dist-info")
    b = site(tmp_path / "b", {"torch-2.6.0a0+git1234567.egg-info": ("torch", "2.6.0a0+git1234567")})
    t = only(records([b])[0], "pytorch")
    assert (t.cuda, t.gpu_build, t.variant) == (None, None, None)


# --- JAX -----------------------------------------------------------------------------------------------------------
JAX_0430 = {"jax-0.4.30.dist-info": ("jax", "0.4.30"), "jaxlib-0.4.30.dist-info": ("jaxlib", "0.4.30")}
JAX_0430_FILES = {"/jax/version.py": fixture_text("jax-0.4.30-version.py.txt")}


def test_parse_version_py_reads_real_jax_files():
    names = _pyprobe.VERSION_FILES["jax"][1]
    assert _pyprobe.parse_version_py(fixture_text("jax-0.4.30-version.py.txt"), names) == {
        "_version": "0.4.30", "_release_version": "0.4.30", "_minimum_jaxlib_version": "0.4.27"}
    assert _pyprobe.parse_version_py(fixture_text("jax-0.10.2-version.py.txt"), names) == {
        "_version": "0.10.2", "_release_version": "0.10.2", "_minimum_jaxlib_version": "0.10.1"}


def test_jax_with_cuda12_plugin(tmp_path):
    """What `pip install "jax[cuda12]==0.4.30"` leaves: jax, jaxlib, jax-cuda12-plugin, jax-cuda12-pjrt."""
    sp = site(tmp_path, {**JAX_0430, "jax_cuda12_plugin-0.4.30.dist-info": ("jax-cuda12-plugin", "0.4.30"),
                         "jax_cuda12_pjrt-0.4.30.dist-info": ("jax-cuda12-pjrt", "0.4.30")}, JAX_0430_FILES)
    fws, findings = records([sp])
    j = only(fws, "jax")
    assert (j.version, j.cuda, j.cudnn, j.gpu_build, j.variant, j.package) == ("0.4.30", "12", None, True,
                                                                             "cuda12", "jax")
    assert [(c.name, c.version) for c in j.companions] == [("jaxlib", "0.4.30"), ("jax-cuda12-pjrt", "0.4.30"),
                                                           ("jax-cuda12-plugin", "0.4.30")]
    assert (j.module_version, j.source, findings) == ("0.4.30", "dist-info + jax/version.py", [])


def test_jax_cpu_only(tmp_path):
    j = only(records([site(tmp_path, JAX_0430, JAX_0430_FILES)])[0], "jax")
    assert (j.cuda, j.gpu_build, j.variant) == (None, False, "cpu")


def test_jax_cuda11_and_cuda13_plugins(tmp_path):
    a = site(tmp_path / "a", {"jax-0.4.25.dist-info": ("jax", "0.4.25"), "jaxlib-0.4.25.dist-info":
                              ("jaxlib", "0.4.25"), "jax_cuda11_plugin-0.4.25.dist-info":
                              ("jax-cuda11-plugin", "0.4.25"), "jax_cuda11_pjrt-0.4.25.dist-info":
                              ("jax-cuda11-pjrt", "0.4.25")})
    assert (only(records([a])[0], "jax").cuda, only(records([a])[0], "jax").variant) == ("11", "cuda11")
    # both majors: jax 0.10.2 tries jax_cuda13_plugin before jax_cuda12_plugin (jax/_src/lib/__init__.py)
    b = site(tmp_path / "b", {"jax-0.10.2.dist-info": ("jax", "0.10.2"), "jaxlib-0.10.2.dist-info":
                              ("jaxlib", "0.10.2"), "jax_cuda12_plugin-0.10.2.dist-info":
                              ("jax-cuda12-plugin", "0.10.2"), "jax_cuda13_plugin-0.10.2.dist-info":
                              ("jax-cuda13-plugin", "0.10.2"), "jax_cuda13_pjrt-0.10.2.dist-info":
                              ("jax-cuda13-pjrt", "0.10.2")},
             {"/jax/version.py": fixture_text("jax-0.10.2-version.py.txt")})
    fws, findings = records([b])
    j = only(fws, "jax")
    assert (j.cuda, j.variant, j.gpu_build, findings) == ("13", "cuda13", True, [])


def test_jax_monolithic_gpu_jaxlib(tmp_path):
    # jaxlib's CUDA wheels before the plugins: "jaxlib-0.4.23+cuda12.cudnn89-cp311-cp311-manylinux2014_x86_64.whl"
    sp = site(tmp_path, {"jax-0.4.23.dist-info": ("jax", "0.4.23"),
                         "jaxlib-0.4.23+cuda12.cudnn89.dist-info": ("jaxlib", "0.4.23+cuda12.cudnn89")})
    fws, findings = records([sp])
    j = only(fws, "jax")
    assert (j.cuda, j.cudnn, j.gpu_build, j.variant, j.source) == ("12", "8.9", True, "cuda12.cudnn89",
                                                                   "dist-info")
    assert j.companions == (PackageInfo("jaxlib", "0.4.23+cuda12.cudnn89", sp),) and findings == []


@pytest.mark.parametrize("version, expected", [
    ("0.4.23+cuda12.cudnn89", ("12", "8.9")),  # jax-ml/jax#16421 names 0.4.12+cuda12.cudnn89
    ("0.3.25+cuda11.cudnn805", ("11", "8.0.5")),
    ("0.3.2+cuda11.cudnn82", ("11", "8.2")),  # cloudhan/jax-windows-builder#7
    ("0.3.2+cuda111", ("11.1", None)),  # the same report: the name before the cudnn tag
    ("0.1.69+cuda111", ("11.1", None)),
    ("0.4.30", (None, None)),
    (None, (None, None)),
])
def test_jaxlib_cuda_from_local_version(version, expected):
    assert pyenv.jaxlib_cuda(version) == expected


def test_jax_findings(tmp_path):
    # jaxlib older than jax/version.py's _minimum_jaxlib_version (0.4.27 for jax 0.4.30)
    old = site(tmp_path / "old", {"jax-0.4.30.dist-info": ("jax", "0.4.30"),
                                  "jaxlib-0.4.26.dist-info": ("jaxlib", "0.4.26")}, JAX_0430_FILES)
    _, findings = records([old])
    assert [f.code for f in findings] == ["jax-jaxlib-mismatch"]
    assert "requires jaxlib >= 0.4.27" in findings[0].message
    assert findings[0].fix.startswith("pip install jaxlib==0.4.30")
    # jaxlib newer than jax
    new = site(tmp_path / "new", {"jax-0.4.30.dist-info": ("jax", "0.4.30"),
                                  "jaxlib-0.4.31.dist-info": ("jaxlib", "0.4.31")}, JAX_0430_FILES)
    assert [f.code for f in records([new])[1]] == ["jax-jaxlib-mismatch"]
    # a plugin not at the jaxlib version (jax[cuda12] pins them together)
    plug = site(tmp_path / "plug", {**JAX_0430, "jax_cuda12_plugin-0.4.29.dist-info": ("jax-cuda12-plugin",
                                                                                       "0.4.29")},
                JAX_0430_FILES)
    _, findings = records([plug])
    assert [f.code for f in findings] == ["jax-cuda-plugin-mismatch"]
    assert findings[0].fix == 'pip install "jax[cuda12]==0.4.30"'
    # jax alone
    alone = site(tmp_path / "alone", {"jax-0.4.30.dist-info": ("jax", "0.4.30")}, JAX_0430_FILES)
    fws, findings = records([alone])
    assert [f.code for f in findings] == ["jax-without-jaxlib"]
    assert (only(fws, "jax").gpu_build, only(fws, "jax").variant) == (None, None)


# --- NVIDIA's TensorFlow 1.15 ----------------------------------------------------------------------------------------
# Built here: build_info.py as NVIDIA/tensorflow's r1.15 writes it (tensorflow/tools/build_info/gen_build_info.py
# with the key_values tensorflow.bzl passes a CUDA build: cuda_version_number / cudnn_version_number); the numbers
# are the test's. build_pip_package.sh moves the code into tensorflow_core/, leaving a virtual tensorflow/.
NV_BUILD_INFO = ('\n"""Generates a Python module containing information about the build."""\n'
                 "from __future__ import absolute_import\nfrom __future__ import division\n"
                 "from __future__ import print_function\n\nis_rocm_build = False\nis_cuda_build = True\n\n"
                 "cuda_version_number = '12.1'\ncudnn_version_number = '8'\n")


def test_nvidia_tensorflow(tmp_path):
    # the version of nvidia_tensorflow-1.15.5+nv23.03-7472065-cp38-cp38-linux_x86_64.whl (NVIDIA/tensorflow#85)
    sp = site(tmp_path / "a", {"nvidia_tensorflow-1.15.5+nv23.03.dist-info": ("nvidia-tensorflow",
                                                                                "1.15.5+nv23.03")},
              {"/tensorflow/__init__.py": "", "/tensorflow_core/python/platform/build_info.py": NV_BUILD_INFO})
    fws, findings = records([sp])
    tf = only(fws, "tensorflow")
    assert (tf.package, tf.version, tf.cuda, tf.cudnn, tf.gpu_build) == ("nvidia-tensorflow", "1.15.5+nv23.03",
                                                                         "12.1", "8", True)
    assert tf.source == "dist-info + build_info.py" and findings == []
    # no build_info.py at all: NVIDIA's wheels are CUDA builds
    bare = site(tmp_path / "b", {"nvidia_tensorflow-1.15.5+nv22.12.dist-info": ("nvidia-tensorflow",
                                                                                  "1.15.5+nv22.12")})
    tf = only(records([bare])[0], "tensorflow")
    assert (tf.version, tf.gpu_build, tf.cuda) == ("1.15.5+nv22.12", True, None)


def test_nvidia_tensorflow_beside_tensorflow_is_a_conflict(tmp_path):
    sp = site(tmp_path, {"nvidia_tensorflow-1.15.5+nv23.03.dist-info": ("nvidia-tensorflow", "1.15.5+nv23.03"),
                         "tensorflow-2.15.1.dist-info": ("tensorflow", "2.15.1")})
    assert [f.code for f in records([sp])[1]] == ["tensorflow-multiple-dists"]


# --- the probe document, JSON, text ----------------------------------------------------------------------------------
def test_clean_probe_doc_keeps_only_version_py_text():
    doc = {"probe": "stackresolve-python", "dists": [
        {"name": "torch", "version": "2.5.1", "location": "/s", "version_py_path": "/s/torch/version.py",
         "version_py": {"__version__": "2.5.1+cu124", "cuda": "12.4", "hip": None, "evil": "x", "git_version": 7}},
        {"name": "jax", "version": "0.4.30", "version_py": ["not", "a", "dict"]}]}
    clean = pyenv.clean_probe_doc(doc)
    assert clean["dists"][0]["version_py"] == {"__version__": "2.5.1+cu124", "cuda": "12.4", "hip": None}
    assert clean["dists"][0]["version_py_path"] == "/s/torch/version.py"
    assert "version_py" not in clean["dists"][1]


def test_version_py_names_match_the_probe():
    assert pyenv.VERSION_PY_NAMES == {n for _, names in _pyprobe.VERSION_FILES.values() for n in names}


def test_framework_json_is_additive():
    keys = list(FrameworkInfo("tensorflow", "2.15.1", "12.2", "8", True).to_json_dict())
    assert keys == ["name", "version", "cuda", "cudnn", "gpu_build", "package", "path", "source",
                    "variant", "module_version", "git_version", "hip", "companions"]


def test_render_text_rows():
    fws = (
        FrameworkInfo("tensorflow", "1.15.5+nv23.03", "12.1", "8", True, "nvidia-tensorflow", "/s", "dist-info"),
        FrameworkInfo("pytorch", "2.5.1", "12.4", None, True, "torch", "/s", "dist-info + torch/version.py",
                      variant="cu124", module_version="2.5.1+cu124",
                      companions=(PackageInfo("torchvision", "0.20.1", "/s"),)),
        FrameworkInfo("pytorch", "2.5.1", None, None, False, "torch", None, "dist-info", variant="cpu"),
        FrameworkInfo("pytorch", "2.5.1", None, None, False, "torch", None, "x", variant="rocm6.2", hip="6.2.4"),
        FrameworkInfo("jax", "0.4.23", "12", "8.9", True, "jax", "/s", "dist-info", variant="cuda12.cudnn89"),
        FrameworkInfo("jax", None, None, None, None, "jaxlib", None, "dist-info"),
    )
    text = render_text(Machine(os=OSInfo("linux"), driver=None, frameworks=fws))
    rows = [line for line in text.splitlines() if line.startswith(("TensorFlow", "PyTorch", "JAX"))]
    assert rows == [
        "TensorFlow  nvidia-tensorflow 1.15.5+nv23.03, GPU build, built with CUDA 12.1, cuDNN 8  [dist-info]",
        "PyTorch     2.5.1 (CUDA 12.4 build, variant cu124) in /s; torchvision 0.20.1  [dist-info + torch/version.py]",
        "PyTorch     2.5.1 (CPU-only build, variant cpu)  [dist-info]",
        "PyTorch     2.5.1 (ROCm build, HIP 6.2.4, variant rocm6.2)  [x]",
        "JAX         0.4.23 (CUDA 12 build, cuDNN 8.9, variant cuda12.cudnn89) in /s  [dist-info]",
        "JAX         jaxlib ? (build unknown)  [dist-info]",
    ]
    assert "Frameworks  none installed" in render_text(Machine(os=OSInfo("linux"), driver=None))


def test_detect_reports_frameworks_from_another_interpreter(tmp_path):
    """detect_machine with a foreign interpreter's probe answer (the real probe, run over a built site)."""
    sp = site(tmp_path / "site", {"torch-2.5.1.dist-info": ("torch", "2.5.1"),
                                  **JAX_0430, "jax_cuda12_plugin-0.4.30.dist-info": ("jax-cuda12-plugin", "0.4.30"),
                                  "jax_cuda12_pjrt-0.4.30.dist-info": ("jax-cuda12-pjrt", "0.4.30")},
              {"/torch/version.py": fixture_text("torch-2.5.1-manylinux1_x86_64-version.py.txt"),
               **JAX_0430_FILES})
    doc = dict(_pyprobe.probe(sys_path=[sp]), python="3.11.9", executable="/envs/dl/bin/python")
    runner = FakeRunner().on(lambda a: pyenv.MARKER in a, (0, json.dumps(doc) + "\n", ""))
    m = detect_machine(runner=runner, fs=LocalFS(tmp_path / "root"), env={"PATH": ""}, system="linux",
                       python_exe="/envs/dl/bin/python")
    assert [(f.name, f.version, f.cuda, f.variant) for f in m.frameworks] == [
        ("pytorch", "2.5.1", "12.4", "cu124"), ("jax", "0.4.30", "12", "cuda12")]
    js = m.to_json_dict()["frameworks"]
    assert js[0]["module_version"] == "2.5.1+cu124" and js[1]["companions"][0]["name"] == "jaxlib"
    text = render_text(m)
    assert f"PyTorch     2.5.1 (CUDA 12.4 build, variant cu124) in {sp}" in text
    assert f"JAX         0.4.30 (CUDA 12 build, variant cuda12) in {sp}; jaxlib 0.4.30" in text


# --- Python 2.7 ------------------------------------------------------------------------------------------------------
PY27 = sorted(glob.glob("/root/.pyenv/versions/2.7*/bin/python") +
              glob.glob(os.path.expanduser("~/.pyenv/versions/2.7*/bin/python")))[:1]


@pytest.mark.skipif(not PY27, reason="no Python 2.7 on this host")
def test_pyprobe_reads_frameworks_under_python27(tmp_path):
    src = os.path.join(os.path.dirname(pyenv.__file__), "_pyprobe.py")
    # py_compile, writing the .pyc under tmp_path (Python 2 would put it beside the source)
    code = "import py_compile, sys; py_compile.compile(sys.argv[1], cfile=sys.argv[2], doraise=True)"
    res = subprocess.run([PY27[0], "-c", code, src, str(tmp_path / "_pyprobe.pyc")], capture_output=True,
                         text=True, timeout=30)
    assert res.returncode == 0, res.stderr
    sp = site(tmp_path / "site", {"torch-1.13.1.dist-info": ("torch", "1.13.1"), **JAX_0430,
                                  "nvidia_tensorflow-1.15.5+nv23.03.dist-info": ("nvidia-tensorflow",
                                                                                 "1.15.5+nv23.03")},
              {"/torch/version.py": fixture_text("torch-1.13.1-manylinux1_x86_64-version.py.txt"),
               "/tensorflow_core/python/platform/build_info.py": NV_BUILD_INFO, **JAX_0430_FILES})
    env = dict(os.environ, PYTHONPATH=sp)
    env.pop("PYTHONHOME", None)
    res = subprocess.run([PY27[0], "-c", pyenv.probe_script(), pyenv.MARKER], capture_output=True, text=True,
                         env=env, timeout=30)
    doc = json.loads(res.stdout)
    assert doc["python"].startswith("2.7.")
    fws = pyenv.frameworks(pyenv.clean_probe_doc(doc), [])
    assert [(f.name, f.version, f.cuda, f.variant) for f in fws] == [
        ("tensorflow", "1.15.5+nv23.03", "12.1", None), ("pytorch", "1.13.1", "11.7", "cu117"),
        ("jax", "0.4.30", None, "cpu")]


def test_no_sys_modules_side_effects():
    """The probe reads files only: nothing named torch or jax gets imported by running it."""
    before = set(sys.modules)
    _pyprobe.probe(sys_path=[])
    assert not {m for m in set(sys.modules) - before if m.split(".")[0] in ("torch", "jax", "jaxlib")}
