"""`stackresolve refresh` against a local fake index, and against the real one (network)."""

from __future__ import annotations

import json
import os
import subprocess
import sys
import threading
from http.server import BaseHTTPRequestHandler, ThreadingHTTPServer

import pytest
import locations

FIXTURES = locations.FIXTURES / "index"


class FakeIndex(BaseHTTPRequestHandler):
    """Serves the captured PEP 691 file lists of tests/fixtures/index for /simple/<name>/, with every file's
    PEP 658 metadata at /files/<file>.metadata (the captured METADATA where there is one)."""

    def do_GET(self):  # noqa: N802 (the http.server API)
        host = f"http://{self.headers['Host']}"
        name = self.path.strip("/").split("/")[-1]
        fixture = FIXTURES / f"{name}.json"
        if self.path.startswith("/files/") and self.path.endswith(".metadata"):
            wheel = name[: -len(".metadata")]
            captured = FIXTURES / f"{wheel}.METADATA"
            body = captured.read_bytes() if captured.exists() else \
                f"Metadata-Version: 2.1\nName: {wheel.split('-')[0]}\nVersion: {wheel.split('-')[1]}\n".encode()
            self.send_response(200)
            self.send_header("Content-Type", "text/plain")
        elif self.path.startswith("/simple/"):
            data = json.loads(fixture.read_text()) if fixture.exists() else \
                {"meta": {"api-version": "1.0"}, "name": name, "files": []}
            for entry in data["files"]:
                entry["url"] = f"{host}/files/{entry['filename']}"
                entry["core-metadata"] = True
            body = json.dumps(data).encode()
            self.send_response(200)
            self.send_header("Content-Type", "application/vnd.pypi.simple.v1+json")
        else:
            body = b"not found"
            self.send_response(404)
        self.send_header("Content-Length", str(len(body)))
        self.end_headers()
        self.wfile.write(body)

    def log_message(self, *args):
        pass


@pytest.fixture
def fake_index():
    server = ThreadingHTTPServer(("127.0.0.1", 0), FakeIndex)
    thread = threading.Thread(target=server.serve_forever, daemon=True)
    thread.start()
    yield f"http://127.0.0.1:{server.server_address[1]}/simple"
    server.shutdown()


def run(*args, env):
    return subprocess.run([sys.executable, "-m", "stackresolve", *args], capture_output=True, text=True, timeout=120,
                          env={**os.environ, **env})


INDEX_KINDS = ["tensorflow_wheels", "torch", "torch_companions", "jax", "cudnn", "cuda", "tensorflow_metal",
               "jax_metal"]
VENDOR_KINDS = ["nvidia_cuda", "nvidia_cudnn", "nvidia_drivers", "torch_variants"]


def test_refresh_writes_each_kind_atomically_and_says_which_were_not_read(fake_index, tmp_path):
    env = {"STACKRESOLVE_CACHE_DIR": str(tmp_path)}
    done = run("refresh", "--index-url", fake_index, "--index-only", env=env)
    assert done.returncode == 0, done.stderr
    written = tmp_path / "data" / "tensorflow_wheels.toml"
    text = written.read_text()
    assert 'origin = "refreshed"' in text and 'package = "tensorflow-gpu"' in text
    assert sorted(p.name for p in written.parent.iterdir()) == sorted(f"{k}.toml" for k in INDEX_KINDS)
    lines = done.stderr.splitlines()
    for kind in INDEX_KINDS:
        assert any(line.startswith(f"stackresolve: refresh: {kind}: refreshed") for line in lines), kind
    for kind in VENDOR_KINDS:  # not asked for: said so, never written, never labelled refreshed
        assert any(line.startswith(f"stackresolve: refresh: {kind}: not reachable") for line in lines), kind


def test_refresh_offline_says_so_per_kind_and_keeps_the_data(tmp_path):
    env = {"STACKRESOLVE_CACHE_DIR": str(tmp_path)}
    done = run("refresh", "--index-url", "http://127.0.0.1:9/simple", "--timeout", "20", "--index-only", env=env)
    assert done.returncode == 1 and "Traceback" not in done.stderr
    lines = [l for l in done.stderr.splitlines() if l.strip()]
    assert len(lines) == len(INDEX_KINDS + VENDOR_KINDS) + 1
    assert all("not reachable" in l for l in lines[:-1]) and "nothing was refreshed" in lines[-1]
    assert not (tmp_path / "data").exists()


def test_an_unknown_kind_is_one_line_with_a_close_match(tmp_path):
    done = run("refresh", "--kind", "cudnm", env={"STACKRESOLVE_CACHE_DIR": str(tmp_path)})
    assert done.returncode == 2 and "did you mean 'cudnn'" in done.stderr and len(done.stderr.splitlines()) == 1


@pytest.mark.network
def test_refresh_against_the_real_index(tmp_path):
    """Into an empty cache: then `plan --tf/--torch/--jax latest` plan the index's newest final releases, and the
    newest cuDNN on the index is known to `plan --cudnn`."""
    from packaging.version import Version

    from stackresolve.index import simple as idx

    env = {"STACKRESOLVE_CACHE_DIR": str(tmp_path)}
    done = run("refresh", "--index-only", "--timeout", "240", env=env)
    assert done.returncode == 0, done.stderr
    for kind in INDEX_KINDS:
        assert f"refresh: {kind}: refreshed" in done.stderr, done.stderr

    def newest(project):
        versions = [v for f in idx.project_files(project) if (v := (idx.file_version(f.filename) or (0, None))[1])
                    and not v.is_prerelease and f.filename.endswith(".whl") and not f.yanked]
        return str(max(versions))

    for flag, project in (("--tf", "tensorflow"), ("--torch", "torch"), ("--jax", "jax")):
        plan = run("plan", "--no-detect", flag, "latest", "--format", "json", env=env)
        document = json.loads(plan.stdout)
        assert document["stack"]["framework"]["version"] == newest(project), plan.stderr
        assert document["knowledge_base"]["index_data"].endswith("refreshed")
    mac = run("plan", "--no-detect", "--tf", "latest", "--os", "macos", "--gpu", "Apple M2", "--format", "json",
              env=env)
    assert "tensorflow-metal fetched" in json.loads(mac.stdout)["knowledge_base"]["index_data"], mac.stderr
    cudnn = newest("nvidia-cudnn-cu13")
    plan = run("plan", "--no-detect", "--torch", "latest", "--cudnn", ".".join(cudnn.split(".")[:3]), env=env)
    assert plan.returncode in (0, 1) and "no cuDNN release" not in plan.stderr, plan.stderr
    assert Version(cudnn)
