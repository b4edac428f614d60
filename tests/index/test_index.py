"""The package-index client (stackresolve.index.simple) and scripts/update_tf_wheels.py.

Fixtures: tests/fixtures/index/ (real responses captured 2026-11-22; see its README). HTTP behaviour (retries,
range reads, metadata files) is exercised against a throw-away server on 127.0.0.1; only the test marked
`network` talks to the real index.
"""

from __future__ import annotations

import email.message
import hashlib
import io
import json
import os
import threading
import zipfile
from http.server import BaseHTTPRequestHandler, ThreadingHTTPServer
from pathlib import Path

import pytest

from stackresolve.files.write import atomic_write
from packaging.version import Version

from stackresolve.index import simple as idx
import locations

ROOT = locations.REPO
FIXTURES = ROOT / "tests" / "fixtures" / "index"
TF215_POST1_LINUX = "tensorflow-2.15.0.post1-cp311-cp311-manylinux_2_17_x86_64.manylinux2014_x86_64.whl"
TF2161_WIN = "tensorflow-2.16.1-cp312-cp312-win_amd64.whl"
ALL_3 = ("3.7", "3.8", "3.9", "3.10", "3.11", "3.12", "3.13", "3.14")


def fixture_files(name: str) -> list[idx.IndexFile]:
    data = json.loads((FIXTURES / f"{name}.json").read_text(encoding="utf-8"))
    return [idx.IndexFile.from_json(e, f"https://index.example/simple/{name}/") for e in data["files"]]


def fixture_metadata(filename: str) -> email.message.Message:
    return email.message_from_bytes((FIXTURES / f"{filename}.METADATA").read_bytes())


@pytest.fixture(scope="module")
def script():
    """The index-data builder that scripts/update_tf_wheels.py and `stackresolve refresh` share."""
    from stackresolve.refresh import tensorflow_wheels as refresh

    return refresh


# --------------------------------------------------------------------------- a local HTTP server


class _Handler(BaseHTTPRequestHandler):
    routes: dict  # path -> list of (status, headers, body); the last one repeats
    seen: list

    def log_message(self, *args):  # keep pytest output clean
        pass

    def do_GET(self):
        self.seen.append((self.path, dict(self.headers)))
        answers = self.routes.get(self.path)
        if not answers:
            self.send_response(404)
            self.send_header("Content-Length", "0")
            self.end_headers()
            return
        status, headers, body = answers.pop(0) if len(answers) > 1 else answers[0]
        rng = self.headers.get("Range")
        if status == 200 and rng and headers.get("Accept-Ranges") == "bytes":
            total = len(body)
            spec = rng.split("=", 1)[1]
            if spec.startswith("-"):
                start, end = max(0, total - int(spec[1:])), total - 1
            else:
                a, _, b = spec.partition("-")
                start, end = int(a), min(int(b) if b else total - 1, total - 1)
            status, body = 206, body[start : end + 1]
            headers = dict(headers, **{"Content-Range": f"bytes {start}-{end}/{total}"})
        self.send_response(status)
        for k, v in headers.items():
            self.send_header(k, v)
        self.send_header("Content-Length", str(len(body)))
        self.end_headers()
        self.wfile.write(body)


@pytest.fixture
def server():
    handler = type("Handler", (_Handler,), {"routes": {}, "seen": []})
    httpd = ThreadingHTTPServer(("127.0.0.1", 0), handler)
    thread = threading.Thread(target=httpd.serve_forever, daemon=True)
    thread.start()
    httpd.base = f"http://127.0.0.1:{httpd.server_address[1]}"
    httpd.handler = handler
    yield httpd
    httpd.shutdown()
    httpd.server_close()


def local_session():
    session = idx.make_session(backoff_factor=0)
    session.trust_env = False  # never route 127.0.0.1 through a proxy from the environment
    return session


# --------------------------------------------------------------------------- classification


@pytest.mark.parametrize("filename, requires_python, expected", [
    ("tensorflow_gpu-1.15.5-cp37-cp37m-manylinux2010_x86_64.whl", None, {"linux": ("3.7",)}),
    ("tensorflow-2.16.1-cp312-cp312-macosx_12_0_arm64.whl", ">=3.9", {"macos_arm64": ("3.12",)}),
    ("tensorflow_gpu-1.15.5-cp36-cp36m-win_amd64.whl", None, {"windows": ("3.6",)}),
    ("tensorflow-1.0.0-cp27-cp27mu-manylinux1_x86_64.whl", None, {"linux": ("2.7",)}),
    ("tensorflow_gpu-0.12.0-cp27-cp27m-macosx_10_11_intel.whl", None, {"macos_x86_64": ("2.7",)}),
    ("tensorflow-2.3.0-cp38-cp38-macosx_10_14_x86_64.whl", None, {"macos_x86_64": ("3.8",)}),
    ("tensorflow-2.21.0-cp313-cp313-manylinux_2_27_x86_64.whl", ">=3.10", {"linux": ("3.13",)}),
    ("tensorflow-2.10.0-cp310-cp310-manylinux_2_17_aarch64.manylinux2014_aarch64.whl", ">=3.7",
     {"linux_aarch64": ("3.10",)}),
    ("demo-1.0-cp38-cp38-macosx_11_0_universal2.whl", None, {"macos_x86_64": ("3.8",), "macos_arm64": ("3.8",)}),
    # py3-none-any: every known CPython 3 minor allowed by Requires-Python, on every platform
    ("tensorflow_intel-0.0.1-py3-none-any.whl", ">=3.7", {p: ALL_3 for p in idx.PLATFORMS}),
    # abi3: its minor and every later one, filtered by Requires-Python
    ("demo-1.0-cp36-abi3-win_amd64.whl", ">=3.9", {"windows": ALL_3[2:]}),
    # a cp wheel excluded by its own Requires-Python is not installable there
    ("demo-1.0-cp37-cp37m-win_amd64.whl", ">=3.8", {"windows": ()}),
    # platforms the knowledge base does not track
    ("demo-1.0-cp37-cp37m-win32.whl", None, {}),
    ("demo-1.0-cp37-cp37m-manylinux1_i686.whl", None, {}),
])
def test_wheel_support(filename, requires_python, expected):
    assert idx.wheel_support(filename, requires_python) == expected


def test_unknown_cpython_minor_is_reported_as_empty_not_dropped():
    assert idx.wheel_support("demo-1.0-cp315-cp315-manylinux_2_28_x86_64.whl") == {"linux": ()}


def test_file_version():
    assert idx.file_version("tensorflow-gpu-2.12.0.tar.gz") == ("tensorflow-gpu", Version("2.12.0"))
    assert idx.file_version("tensorflow-2.15.0.post1-cp39-cp39-manylinux_2_17_x86_64.whl")[1] == Version("2.15.0.post1")
    assert idx.file_version("tensorflow-1.0.exe") is None


# --------------------------------------------------------------------------- index_url()


def write_conf(path: Path, text: str) -> Path:
    path.parent.mkdir(parents=True, exist_ok=True)
    path.write_text(text, encoding="utf-8")
    return path


def test_index_url_precedence(tmp_path):
    glob = write_conf(tmp_path / "etc" / "pip.conf", "[global]\nindex-url = https://global.example/simple\n")
    user = write_conf(tmp_path / "user" / "pip.conf", "[global]\nindex_url = https://user.example/simple\n")
    inst = write_conf(tmp_path / "site" / "pip.conf", "[install]\nindex-url = https://install.example/simple\n")
    env = {"PIP_INDEX_URL": "https://env.example/simple"}

    assert idx.index_url("https://flag.example/simple", environ=env, config_files=[glob]) == "https://flag.example/simple"
    assert idx.index_url(None, environ=env, config_files=[glob]) == "https://env.example/simple"
    assert idx.index_url(None, environ={}, config_files=[glob]) == "https://global.example/simple"
    # a later file beats an earlier one; `index_url` spelling counts like pip's
    assert idx.index_url(None, environ={}, config_files=[glob, user]) == "https://user.example/simple"
    # [install] beats [global] whatever the file order
    assert idx.index_url(None, environ={}, config_files=[inst, user]) == "https://install.example/simple"
    # empty values are ignored, as pip does
    assert idx.index_url("", environ={"PIP_INDEX_URL": ""}, config_files=[glob]) == "https://global.example/simple"


def test_index_url_default_is_pips_own(tmp_path):
    pip_index = pytest.importorskip("pip._internal.models.index")
    empty = write_conf(tmp_path / "pip.conf", "[global]\ntimeout = 5\n")
    missing = tmp_path / "nowhere" / "pip.conf"
    assert idx.index_url(None, environ={}, config_files=[empty, missing]) == pip_index.PyPI.simple_url


def test_broken_pip_config_is_a_clear_error(tmp_path):
    bad = write_conf(tmp_path / "pip.conf", "index-url = https://no-section.example/simple\n")
    with pytest.raises(idx.PackageIndexError, match="pip configuration file"):
        idx.index_url(None, environ={}, config_files=[bad])


def test_pip_config_files_linux_order(tmp_path):
    env = {"XDG_CONFIG_DIRS": "/opt/a:/opt/b", "XDG_CONFIG_HOME": str(tmp_path / "xdg")}
    files = idx.pip_config_files(env, platform="linux", home=tmp_path / "home", prefix=tmp_path / "venv")
    assert files == [
        Path("/opt/a/pip/pip.conf"), Path("/opt/b/pip/pip.conf"), Path("/etc/pip.conf"),
        tmp_path / "home" / ".pip" / "pip.conf", tmp_path / "xdg" / "pip" / "pip.conf",
        tmp_path / "venv" / "pip.conf",
    ]
    defaults = idx.pip_config_files({}, platform="linux", home="/h", prefix="/p")
    assert defaults[0] == Path("/etc/xdg/pip/pip.conf") and Path("/h/.config/pip/pip.conf") in defaults


def test_pip_config_file_env_var(tmp_path):
    chosen = write_conf(tmp_path / "chosen.conf", "[global]\nindex-url = https://chosen.example/simple\n")
    files = idx.pip_config_files({"PIP_CONFIG_FILE": str(chosen)}, platform="linux", home="/h", prefix="/p")
    assert files[-1] == chosen  # highest precedence
    assert Path("/h/.pip/pip.conf") not in files  # an existing PIP_CONFIG_FILE turns the user files off
    assert idx.pip_config_files({"PIP_CONFIG_FILE": os.devnull}, platform="linux", home="/h", prefix="/p") == []
    # end to end through index_url's default file discovery
    site = write_conf(tmp_path / "venv" / "pip.conf", "[global]\nindex-url = https://site.example/simple\n")
    env = {"PIP_CONFIG_FILE": str(chosen)}
    files = idx.pip_config_files(env, platform="linux", home=tmp_path, prefix=site.parent)
    assert idx.index_url(None, environ=env, config_files=files) == "https://chosen.example/simple"


def test_pip_config_files_windows():
    env = {"APPDATA": "C:\\Users\\u\\AppData\\Roaming", "PROGRAMDATA": "C:\\ProgramData"}
    files = idx.pip_config_files(env, platform="win32", home="C:\\Users\\u", prefix="C:\\venv")
    assert [str(f) for f in files] == [
        "C:\\ProgramData\\pip\\pip.ini", "C:\\Users\\u\\pip\\pip.ini",
        "C:\\Users\\u\\AppData\\Roaming\\pip\\pip.ini", "C:\\venv\\pip.ini",
    ]


# --------------------------------------------------------------------------- project_files()


def test_project_files_from_captured_json(server):
    body = (FIXTURES / "tensorflow-gpu.json").read_bytes()
    server.handler.routes["/simple/tensorflow-gpu/"] = [(200, {"Content-Type": idx.ACCEPT_JSON}, body)]
    files = idx.project_files("TensorFlow_GPU", index=server.base + "/simple", session=local_session())
    path, headers = server.handler.seen[-1]
    assert path == "/simple/tensorflow-gpu/"  # PEP 503 normalized name
    assert headers["Accept"] == idx.ACCEPT_JSON
    assert len(files) == 11
    by_name = {f.filename: f for f in files}
    sdist = by_name["tensorflow-gpu-2.12.0.tar.gz"]
    assert sdist.url.startswith("https://index.example/packages/") and not sdist.is_wheel
    assert sdist.yanked is False and sdist.requires_python is None and sdist.core_metadata is False
    assert sdist.hashes["sha256"] == "51cc56493594840814e55545cf36c006e174a6186f71418cc29aafa62e77b756"


def test_project_files_relative_urls_and_metadata_flags(server):
    body = json.dumps({
        "meta": {"api-version": "1.1"}, "name": "demo",
        "files": [
            {"filename": "demo-1.0-py3-none-any.whl", "url": "../../files/demo-1.0-py3-none-any.whl",
             "hashes": {}, "requires-python": ">=3.8", "core-metadata": {"sha256": "ab"}, "yanked": "broken"},
            {"filename": "demo-0.9-py3-none-any.whl", "url": "/files/demo-0.9-py3-none-any.whl",
             "hashes": {}, "data-dist-info-metadata": True},
        ],
    }).encode()
    server.handler.routes["/simple/demo/"] = [(200, {"Content-Type": idx.ACCEPT_JSON}, body)]
    new, old = idx.project_files("demo", index=server.base + "/simple/", session=local_session())
    assert new.url == server.base + "/files/demo-1.0-py3-none-any.whl"
    assert new.core_metadata and new.core_metadata_hashes == {"sha256": "ab"}
    assert new.yanked and new.yanked_reason == "broken" and new.requires_python == ">=3.8"
    assert old.core_metadata and old.core_metadata_hashes == {}  # PEP 658's older key, value `true`


def test_project_files_retries_server_errors(server):
    body = (FIXTURES / "tensorflow-intel.json").read_bytes()
    server.handler.routes["/simple/tensorflow-intel/"] = [
        (503, {"Retry-After": "0"}, b"busy"),
        (502, {}, b"bad gateway"),
        (200, {"Content-Type": idx.ACCEPT_JSON}, body),
    ]
    files = idx.project_files("tensorflow-intel", index=server.base + "/simple", session=local_session())
    assert [f.filename for f in files] == ["tensorflow-intel-0.0.1.tar.gz", "tensorflow_intel-0.0.1-py3-none-any.whl"]
    assert len(server.handler.seen) == 3


def test_project_files_errors(server):
    server.handler.routes["/simple/html-only/"] = [(200, {"Content-Type": "text/html"}, b"<html></html>")]
    with pytest.raises(idx.PackageIndexError, match="not PEP 691 JSON"):
        idx.project_files("html-only", index=server.base + "/simple", session=local_session())
    with pytest.raises(idx.PackageIndexError, match="not found"):
        idx.project_files("absent", index=server.base + "/simple", session=local_session())
    server.handler.routes["/simple/down/"] = [(503, {}, b"down")]
    with pytest.raises(idx.PackageIndexError, match="503"):
        idx.project_files("down", index=server.base + "/simple", session=idx.make_session(retries=1, backoff_factor=0))


def test_make_session_mounts_retry():
    from urllib3.util.retry import Retry

    adapter = idx.make_session().get_adapter("https://index.example/simple/")
    assert isinstance(adapter.max_retries, Retry)
    assert {429, 500, 502, 503, 504} <= set(adapter.max_retries.status_forcelist)


# --------------------------------------------------------------------------- metadata


def test_wheel_metadata_from_pep658_file_checks_hash(server):
    data = (FIXTURES / f"{TF215_POST1_LINUX}.METADATA").read_bytes()
    server.handler.routes[f"/files/{TF215_POST1_LINUX}.metadata"] = [(200, {}, data)]
    good = idx.IndexFile(TF215_POST1_LINUX, f"{server.base}/files/{TF215_POST1_LINUX}", core_metadata=True,
                         core_metadata_hashes={"sha256": hashlib.sha256(data).hexdigest()})
    meta = idx.wheel_metadata(good, session=local_session())
    assert meta["Name"] == "tensorflow" and meta["Version"] == "2.15.0.post1"
    bad = idx.IndexFile(good.filename, good.url, core_metadata=True, core_metadata_hashes={"sha256": "0" * 64})
    with pytest.raises(idx.PackageIndexError, match="sha256"):
        idx.wheel_metadata(bad, session=local_session())


def _wheel_bytes(members: dict[str, bytes], padding: int = 0) -> bytes:
    buf = io.BytesIO()
    with zipfile.ZipFile(buf, "w", zipfile.ZIP_DEFLATED) as zf:
        zf.writestr("demo/big.bin", os.urandom(padding))  # incompressible, so the archive really is big
        for name, data in members.items():
            zf.writestr(name, data)
    return buf.getvalue()


def test_wheel_metadata_range_fallback(server):
    metadata = b"Metadata-Version: 2.1\nName: demo\nVersion: 1.0\nProvides-Extra: and-cuda\n"
    blob = _wheel_bytes({"demo-1.0.dist-info/METADATA": metadata, "demo-1.0.dist-info/WHEEL": b"x"}, 1 << 20)
    server.handler.routes["/files/demo-1.0-cp311-cp311-manylinux_2_17_x86_64.whl"] = [
        (200, {"Accept-Ranges": "bytes"}, blob)]
    f = idx.IndexFile("demo-1.0-cp311-cp311-manylinux_2_17_x86_64.whl",
                      f"{server.base}/files/demo-1.0-cp311-cp311-manylinux_2_17_x86_64.whl")
    meta = idx.wheel_metadata(f, session=local_session())
    assert meta["Name"] == "demo" and meta.get_all("Provides-Extra") == ["and-cuda"]
    ranges = [h.get("Range") for p, h in server.handler.seen]
    assert all(ranges) and len(ranges) <= 4  # only pieces of the 1 MiB file were asked for
    with pytest.raises(idx.MetadataUnavailable):
        idx.wheel_metadata(f, session=local_session(), range_fallback=False)


def test_wheel_metadata_without_range_support(server):
    server.handler.routes["/files/demo-1.0-py3-none-any.whl"] = [(200, {}, _wheel_bytes({}))]
    f = idx.IndexFile("demo-1.0-py3-none-any.whl", f"{server.base}/files/demo-1.0-py3-none-any.whl")
    with pytest.raises(idx.MetadataUnavailable, match="range"):
        idx.wheel_metadata(f, session=local_session())


def test_extra_requirements_from_real_metadata():
    meta = fixture_metadata(TF215_POST1_LINUX)
    reqs = idx.extra_requirements(meta, "and_cuda")  # extra names compare normalized
    assert reqs[0] == "nvidia-cublas-cu12==12.2.5.6"
    assert "nvidia-cudnn-cu12==8.9.4.25" in reqs and len(reqs) == 12
    assert not any(r.startswith(("tensorflow", "keras")) for r in reqs)


def test_extra_requirements_are_what_pip_adds_on_the_platform():
    meta = email.message.Message()
    meta["Requires-Dist"] = 'a==1; extra == "and-cuda" and platform_system == "Linux"'
    meta["Requires-Dist"] = "b==2; extra == 'other'"
    meta["Requires-Dist"] = "c==3"
    meta["Requires-Dist"] = 'd==4; extra == "and-cuda" and python_version < "3.9"'
    assert idx.extra_requirements(meta, "and-cuda", "linux", "3.11") == ["a==1"]
    assert idx.extra_requirements(meta, "and-cuda", "windows", "3.11") == []
    assert idx.extra_requirements(meta, "and-cuda", "linux", "3.8") == ["a==1", "d==4"]


# --------------------------------------------------------------------------- scripts/update_tf_wheels.py


def test_records_from_captured_lists(script):
    files = {name: fixture_files(name) for name in ("tensorflow-gpu", "tensorflow", "tensorflow-intel")}
    records = script.build_records(files, fetched="2026-11-22")
    keys = [(r["package"], r["version"]) for r in records]
    assert keys == [
        ("tensorflow", "2.10.0"), ("tensorflow", "2.15.0.post1"), ("tensorflow", "2.16.1"),
        ("tensorflow-gpu", "0.12.0"), ("tensorflow-gpu", "1.15.4"), ("tensorflow-gpu", "1.15.5"),
        ("tensorflow-gpu", "2.12.0"), ("tensorflow-intel", "0.0.1"),
    ]  # sorted by package then version; the 2.10.0rc0 pre-release is left out
    rec = {k: r for k, r in zip(keys, records)}
    assert rec[("tensorflow-gpu", "1.15.5")]["linux"] == ["3.6", "3.7"]
    assert rec[("tensorflow-gpu", "1.15.5")]["windows"] == ["3.6", "3.7"]
    assert rec[("tensorflow-gpu", "1.15.4")]["linux"] == ["3.5", "3.7"]  # trimmed fixture: no cp36 kept
    assert rec[("tensorflow-gpu", "0.12.0")]["macos_x86_64"] == ["2.7"]
    assert rec[("tensorflow", "2.16.1")]["macos_arm64"] == ["3.12"]
    assert rec[("tensorflow", "2.10.0")]["linux_aarch64"] == ["3.10"]
    stub = rec[("tensorflow-gpu", "2.12.0")]
    assert stub["stub"] is True and all(stub[p] == [] for p in idx.PLATFORMS)
    assert "tensorflow-gpu-2.12.0.tar.gz" in stub["note"]
    assert rec[("tensorflow-intel", "0.0.1")]["stub"] is True  # a pure-Python placeholder wheel
    for r in records:
        assert r["source"] == f"package index /simple/{r['package']}/ (PEP 691 JSON), fetched 2026-11-22"
        assert r["yanked"] is False and r["and_cuda"] == []


def test_metadata_facts(script):
    files = fixture_files("tensorflow")
    by_version = script.group_releases(files)
    post1 = script.build_record("tensorflow", Version("2.15.0.post1"), by_version[Version("2.15.0.post1")],
                                fetched="2026-11-22")
    script.add_metadata_facts(post1, by_version[Version("2.15.0.post1")],
                              lambda f: fixture_metadata(f.filename))
    assert post1["and_cuda"][:2] == ["nvidia-cublas-cu12==12.2.5.6", "nvidia-cuda-cupti-cu12==12.2.142"]
    assert TF215_POST1_LINUX in post1["note"]

    v2161 = by_version[Version("2.16.1")]
    rec = script.build_record("tensorflow", Version("2.16.1"), v2161, fetched="2026-11-22")
    metadata = {TF2161_WIN: fixture_metadata(TF2161_WIN)}
    # the Linux wheel's metadata is not in the fixtures; its extra is read from the same release's shim
    metadata["tensorflow-2.16.1-cp312-cp312-manylinux_2_17_x86_64.manylinux2014_x86_64.whl"] = metadata[TF2161_WIN]
    script.add_metadata_facts(rec, v2161, lambda f: metadata[f.filename])
    assert "windows wheels are metapackages (<= 2097 bytes) that install tensorflow-intel==2.16.1" in rec["note"]


def test_unclassified_wheel_stops_the_run(script):
    files = {"demo": [idx.IndexFile("demo-1.0-cp315-cp315-manylinux_2_28_x86_64.whl", "https://index.example/x")]}
    with pytest.raises(script.UnclassifiedWheels, match="cp315"):
        script.build_records(files, fetched="2026-11-22")


def test_toml_writer_round_trips(script, tmp_path):
    try:
        import tomllib
    except ModuleNotFoundError:  # Python < 3.11
        import tomli as tomllib
    records = [{
        "package": "tensorflow", "version": "2.15.0", "linux": ["3.9", "3.10"], "linux_aarch64": [],
        "windows": [], "macos_x86_64": [], "macos_arm64": [], "yanked": False, "stub": True,
        "and_cuda": [f"nvidia-lib{i}-cu12==12.{i}" for i in range(12)],
        "source": "package index /simple/tensorflow/ (PEP 691 JSON), fetched 2026-11-22",
        "note": 'quote " backslash \\ newline \n tab \t bell \x07 del \x7f unicode é ✓',
    }]
    text = script.render_toml("2026-11-22", records)
    assert tomllib.loads(text) == {"generated": "2026-11-22", "release": records}
    out = tmp_path / "sub" / "tensorflow_wheels.toml"
    out.parent.mkdir()
    atomic_write(out, text)
    assert out.read_text(encoding="utf-8") == text
    assert [p.name for p in out.parent.iterdir()] == ["tensorflow_wheels.toml"]  # no temporary left behind


def test_generated_file_is_consistent():
    """The committed constraints/tensorflow_wheels.toml has the documented shape and known facts."""
    try:
        import tomllib
    except ModuleNotFoundError:  # Python < 3.11
        import tomli as tomllib
    doc = tomllib.loads((ROOT / "constraints" / "tensorflow_wheels.toml").read_text(encoding="utf-8"))
    releases = {(r["package"], r["version"]): r for r in doc["release"]}
    assert releases[("tensorflow-gpu", "1.15.5")]["linux"] == ["3.6", "3.7"]
    assert "3.5" in releases[("tensorflow-gpu", "1.15.4")]["linux"]
    assert releases[("tensorflow-gpu", "2.12.0")]["stub"] is True
    for r in doc["release"]:
        assert r["source"].startswith(f"package index /simple/{r['package']}/ (PEP 691 JSON), fetched ")
        assert not Version(r["version"]).is_prerelease
        assert set(idx.PLATFORMS) <= set(r)


# --------------------------------------------------------------------------- the real index


@pytest.mark.network
def test_real_index_tensorflow_gpu_1_15_5():
    files = idx.project_files("tensorflow-gpu")
    names = [f.filename for f in files if f.filename.startswith("tensorflow_gpu-1.15.5-")]
    linux = {p for n in names for p in idx.wheel_support(n).get("linux", ())}
    everywhere = {p for n in names for ps in idx.wheel_support(n).values() for p in ps}
    assert "3.7" in linux
    assert "3.8" not in everywhere
    assert "tensorflow_gpu-1.15.5-cp37-cp37m-manylinux2010_x86_64.whl" in names
