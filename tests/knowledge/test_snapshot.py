"""The knowledge snapshot: a cache that cannot lie (issue 16) and loads fast (issue 12)."""

from __future__ import annotations

import os
import threading

import pytest

from stackresolve.knowledge import snapshot
from stackresolve.knowledge.base import KnowledgeBase
from stackresolve.knowledge.loader import load_knowledge


def snapshot_file(folder):
    files = list(folder.glob("knowledge-core-*.snapshot"))
    assert len(files) == 1, files
    return files[0]


def test_first_load_writes_a_snapshot_the_second_reads(cache):
    built = load_knowledge()
    path = snapshot_file(cache)
    again = load_knowledge()
    assert again is not built and again.version == built.version
    assert [w.version for w in again.wheels] == [w.version for w in built.wheels]
    assert path.stat().st_mtime == snapshot_file(cache).stat().st_mtime  # read, not rewritten


@pytest.mark.parametrize("damage", ["truncate", "edit", "foreign", "empty"])
def test_a_damaged_snapshot_is_ignored_and_rebuilt(cache, damage):
    built = load_knowledge()
    path = snapshot_file(cache)
    raw = path.read_bytes()
    damaged = {"truncate": raw[: len(raw) // 2],
               "edit": raw.replace(b"tensorflow-gpu", b"tensorflow-cpu", 1),
               "foreign": b"not a snapshot at all\n",
               "empty": b""}[damage]
    path.write_bytes(damaged)
    kb = load_knowledge()
    assert kb.version == built.version
    assert any(w.package == "tensorflow-gpu" for w in kb.wheels)
    assert snapshot_file(cache).read_bytes() == raw  # rebuilt whole


def test_a_snapshot_of_another_package_version_is_not_read(cache, monkeypatch):
    from stackresolve.knowledge.loader import _data_key

    load_knowledge()
    data_key = _data_key(None)
    assert isinstance(snapshot.load(data_key, KnowledgeBase), KnowledgeBase)
    monkeypatch.setattr(snapshot, "__version__", "0.0.0-other")
    assert snapshot.load(data_key, KnowledgeBase) is None


def test_a_fifo_where_the_snapshot_should_be_does_not_hang(cache):
    load_knowledge()
    path = snapshot_file(cache)
    path.unlink()
    os.mkfifo(path)
    done = []
    worker = threading.Thread(target=lambda: done.append(load_knowledge()), daemon=True)
    worker.start()
    worker.join(timeout=10)
    assert done, "loading the knowledge base blocked on a FIFO"


def test_relative_cache_folders_are_ignored(monkeypatch, tmp_path):
    monkeypatch.delenv("STACKRESOLVE_NO_CACHE", raising=False)
    monkeypatch.setenv("STACKRESOLVE_CACHE_DIR", "relative/cache")
    assert snapshot.cache_dir() is None
    monkeypatch.delenv("STACKRESOLVE_CACHE_DIR")
    monkeypatch.setenv("XDG_CACHE_HOME", "relative/xdg")
    if os.name == "posix":
        assert snapshot.cache_dir() == snapshot.Path.home() / ".cache" / "stackresolve"
    monkeypatch.setenv("STACKRESOLVE_NO_CACHE", "1")
    assert snapshot.cache_dir() is None


def test_no_cache_writes_nothing(cache, monkeypatch):
    monkeypatch.setenv("STACKRESOLVE_NO_CACHE", "1")
    load_knowledge()
    assert not cache.exists()


def test_install_facts_load_on_first_use_from_their_own_snapshot(cache):
    built = load_knowledge()
    assert len(list(cache.glob("knowledge-install-*.snapshot"))) == 1
    fresh = load_knowledge()
    assert fresh._install is None  # a text plan or a lock never reads them
    assert [r.cuda for r in fresh.apt.cuda_repos] == [r.cuda for r in built.apt.cuda_repos]


def test_a_refreshed_wheel_list_replaces_the_shipped_one_while_newer(cache):
    from stackresolve.knowledge.loader import constraints_dir, refreshed_wheels_path

    shipped = load_knowledge()
    assert shipped.wheels_origin == "shipped"
    text = (constraints_dir() / "tensorflow_wheels.toml").read_text()
    path = refreshed_wheels_path()
    path.parent.mkdir(parents=True)
    path.write_text(text.replace(f'generated = "{shipped.wheels_fetched}"',
                                 'generated = "2099-01-01"\norigin = "refreshed"', 1))
    refreshed = load_knowledge()
    assert (refreshed.wheels_fetched, refreshed.wheels_origin) == ("2099-01-01", "refreshed")
    assert refreshed.version != shipped.version  # another data digest: plans say which data they used
    path.write_text(text.replace(f'generated = "{shipped.wheels_fetched}"', 'generated = "2000-01-01"', 1))
    assert load_knowledge().wheels_origin == "shipped"  # an older copy is not used


def test_a_tensorflow_plan_loads_no_pytorch_or_jax_code(cache):
    """PyTorch/JAX data and code load on first use: a TensorFlow plan, even one that ends in a conflict, imports
    neither module (issue 12: each is several milliseconds of start-up)."""
    import subprocess
    import sys

    code = ("import sys; from stackresolve.cli import main; sys.argv = ['stackresolve', 'plan', '--no-detect', "
            "'--tf', '1.15', '--os', 'linux', '--python', '3.11']\n"
            "try:\n    main()\nexcept SystemExit:\n    pass\n"
            "print(sorted(m for m in sys.modules if m.endswith('.frameworks') and m.startswith('stackresolve')),"
            " file=sys.stderr)")
    done = subprocess.run([sys.executable, "-c", code], capture_output=True, text=True, timeout=120,
                          env={**os.environ})
    assert "conflict" in done.stdout  # 1.15 has no Python 3.11 wheel: the conflict path ran too
    assert done.stderr.strip().splitlines()[-1] == "[]"


def test_an_edited_data_file_is_read_again_and_a_warm_start_hashes_nothing(cache, tmp_path, monkeypatch):
    """The snapshot is keyed by the data files' sizes and modification times (as a .pyc by its source's): an edit
    builds the knowledge base again, with the new digest; an unchanged tree is loaded without reading a data file
    or importing hashlib (its OpenSSL load and the 1.3 MB of TOML cost 14-16 ms a start)."""
    import shutil
    import sys

    from stackresolve.knowledge import loader

    data = tmp_path / "data"
    shutil.copytree(loader.constraints_dir(), data)
    first = load_knowledge(data)
    monkeypatch.setattr(loader, "_data", lambda *args: pytest.fail("a warm start read the data files"))
    monkeypatch.delitem(sys.modules, "hashlib", raising=False)
    assert load_knowledge(data).version == first.version
    assert "hashlib" not in sys.modules
    monkeypatch.undo()
    monkeypatch.setenv("STACKRESOLVE_CACHE_DIR", str(cache))
    meta = data / "meta.toml"
    meta.write_text(meta.read_text(encoding="utf-8") + "\n# edited\n", encoding="utf-8")
    edited = load_knowledge(data)
    assert edited.version != first.version  # the digest plans print is the new files'
    assert len(list(cache.glob("knowledge-core-*.snapshot"))) == 2
