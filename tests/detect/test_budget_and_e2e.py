"""The time budget (a hung nvidia-smi must not hang us) and end-to-end runs with the real subprocess runner."""

from __future__ import annotations

import os
import stat
import sys
import time

import pytest
from detect_helpers import FIXTURES, LINUX_ENV, FakeRunner, describe, hang, is_, make_tree, smi_csv

from stackresolve.detect import LocalFS, SubprocessRunner, detect_machine
from stackresolve.detect.gpuchild import MARKER
from stackresolve.detect.runner import CommandNotFound, CommandTimeout

SMI = {"/usr/bin/nvidia-smi": ""}
LIBCUDA = {"/usr/lib/x86_64-linux-gnu/libcuda.so.1": ""}


def codes(m):
    return [f.code for f in m.findings]


# --- budget with fake runners (no real sleep beyond the small budget) ----------------------------------------
def test_hung_nvidia_smi_stays_within_budget(tmp_path):
    make_tree(tmp_path, SMI)
    runner = FakeRunner().on(lambda a: describe(a).startswith("smi"), hang)
    t0 = time.monotonic()
    m = detect_machine(runner=runner, fs=LocalFS(tmp_path), env=LINUX_ENV, system="linux", timeout_total=0.5)
    elapsed = time.monotonic() - t0
    assert elapsed < 0.5 + 0.3
    assert runner.names() == ["smi-csv-cc"]  # hung once: never asked again (no xml, no banner)
    assert all(timeout <= 0.5 for _, timeout in runner.calls)
    assert "probe-timeout" in codes(m)
    assert m.gpus == () and "no-nvidia-gpu" in codes(m)


def test_hung_child_and_hung_nvidia_smi_share_the_budget(tmp_path):
    make_tree(tmp_path, {**SMI, **LIBCUDA})
    runner = FakeRunner().on(lambda a: MARKER in a or describe(a).startswith("smi"), hang)
    t0 = time.monotonic()
    m = detect_machine(runner=runner, fs=LocalFS(tmp_path), env=LINUX_ENV, system="linux", timeout_total=0.5)
    elapsed = time.monotonic() - t0
    assert elapsed < 0.5 + 0.3
    assert runner.names() == ["child", "smi-csv-cc"]
    child_timeout, smi_timeout = runner.calls[0][1], runner.calls[1][1]
    assert child_timeout <= 0.6 * 0.5 + 1e-9  # the child never takes the whole budget
    assert smi_timeout <= 0.5 - child_timeout + 0.05
    assert codes(m).count("probe-timeout") == 2


def test_budget_spent_means_later_calls_are_skipped(tmp_path):
    make_tree(tmp_path, SMI)

    def slow_csv(argv, timeout):
        time.sleep(min(timeout, 0.3))
        return 0, smi_csv("0, 00000000:01:00.0, NVIDIA GeForce GTX 1080, [N/A], 470.82.01, 8119"), ""

    runner = FakeRunner().on(is_("smi-csv-cc"), slow_csv).on(is_("smi-xml"), hang)
    m = detect_machine(runner=runner, fs=LocalFS(tmp_path), env=LINUX_ENV, system="linux", timeout_total=0.35)
    assert runner.names()[0] == "smi-csv-cc"
    assert "smi-banner" not in runner.names()
    assert m.gpus[0].name == "NVIDIA GeForce GTX 1080" and m.gpus[0].compute_capability is None


# --- end to end: a fake nvidia-smi on PATH, the real runner ---------------------------------------------------------
def _script(path, body: str):
    path.write_text("#!/bin/sh\n" + body, encoding="utf-8")
    path.chmod(path.stat().st_mode | stat.S_IXUSR | stat.S_IXGRP | stat.S_IXOTH)


def _runner_without_gpu_child():
    """The real runner; only the NVML/libcuda child is refused so a GPU on the test host cannot change the
    result (every nvidia-smi call below goes through SubprocessRunner for real)."""
    real = SubprocessRunner()

    def run(argv, timeout):
        if MARKER in argv:
            raise CommandNotFound("gpu child (disabled in this test)")
        return real(argv, timeout)

    return run


@pytest.mark.skipif(os.name != "posix", reason="shell script stands in for nvidia-smi")
def test_end_to_end_fake_nvidia_smi_on_path(tmp_path):
    bindir = tmp_path / "bin"
    bindir.mkdir()
    xml = FIXTURES / "smi-q-x-535.86.05.xml"
    _script(bindir / "nvidia-smi", f"""case "$1" in
  --query-gpu=*compute_cap*) echo "index, pci.bus_id, name, compute_cap, driver_version, memory.total [MiB]"
     echo "0, 00000000:01:00.0, NVIDIA GeForce RTX 4090, 8.9, 535.86.05, 24564" ;;
  --query) cat "{xml}" ;;
  *) echo "unexpected arguments: $*" >&2; exit 2 ;;
esac
""")
    m = detect_machine(runner=_runner_without_gpu_child(), env={"PATH": str(bindir)}, timeout_total=5.0)
    assert m.driver.version == "535.86.05" and m.driver.source == "nvidia-smi"
    assert (m.driver.cuda_max, m.driver.cuda_max_source) == ("12.2", "nvidia-smi-xml")
    assert [(g.index, g.name, g.compute_capability, g.memory_mib, g.source) for g in m.gpus] == [
        (0, "NVIDIA GeForce RTX 4090", "8.9", 24564, "nvidia-smi")]
    assert m.env == {"PATH": str(bindir)}


@pytest.mark.skipif(os.name != "posix", reason="shell script stands in for nvidia-smi")
def test_end_to_end_hung_nvidia_smi_is_killed(tmp_path):
    bindir = tmp_path / "bin"
    bindir.mkdir()
    # not `exec`: the sleeping grandchild holds the pipes, so the runner must kill the whole process group
    _script(bindir / "nvidia-smi", "sleep 30\necho never\n")
    t0 = time.monotonic()
    m = detect_machine(runner=_runner_without_gpu_child(), env={"PATH": str(bindir)}, timeout_total=0.5)
    elapsed = time.monotonic() - t0
    assert elapsed < 2.0
    assert "probe-timeout" in codes(m)
    assert any(p.name == "nvidia-smi" and p.status == "timeout" for p in m.probes)


@pytest.mark.skipif(os.name != "posix", reason="POSIX shell")
def test_subprocess_runner_basics(tmp_path):
    r = SubprocessRunner()
    rc, out, err = r(["/bin/sh", "-c", "echo out; echo err >&2; exit 3"], 5)
    assert (rc, out, err) == (3, "out\n", "err\n")
    with pytest.raises(CommandNotFound):
        r([str(tmp_path / "no-such-program")], 5)
    t0 = time.monotonic()
    with pytest.raises(CommandTimeout) as exc:
        r(["/bin/sh", "-c", "echo partial; sleep 30"], 0.3)
    assert time.monotonic() - t0 < 2.0
    assert exc.value.stdout == "partial\n"


def test_real_child_probe_never_raises():
    """The real NVML/libcuda child runs (whatever the host has) and its output parses."""
    from stackresolve.detect.gpuchild import child_argv, parse_child_output

    rc, out, err = SubprocessRunner()(child_argv(), 20)
    docs = parse_child_output(out)
    assert set(docs) == {"nvml", "libcuda"}, (rc, out, err)
    for doc in docs.values():
        assert isinstance(doc.get("ok"), bool)


def test_detect_on_this_host_is_fast_without_gpu():
    from stackresolve.detect.gpuchild import driver_libs_visible
    from stackresolve.detect.osinfo import normalize_system

    import platform

    if driver_libs_visible(LocalFS(), os.environ, normalize_system(platform.system())):
        pytest.skip("this host has an NVIDIA driver: the <1 s budget is for GPU-less machines")
    t0 = time.monotonic()
    m = detect_machine()
    elapsed = time.monotonic() - t0
    assert elapsed < 1.0, elapsed
    assert m.python is not None and m.python.version == "%d.%d.%d" % sys.version_info[:3]
