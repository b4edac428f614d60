#!/usr/bin/env python3
"""Speed and memory budgets of stackresolve, measured with the standard library; prints a table.

    python scripts/bench.py [--runs N]

Run it with the interpreter of the virtual environment stackresolve is installed in (non-editable install).
Every command is timed as a cold process; the reference, `python -c "import typer"`, runs alternately with the
commands in the same venv, so machine load hits both alike. Budgets (exit 1 when one is missed):

- `plan --format text` and `check` <= 1.3 x `import typer`; `plan --format json` <= 1.5 x; `--help` <= 1.1 x
- `detect` <= 1.3 x `import typer` plus the probes' own time (reported beside it)
- `matrix` over every TensorFlow line x every GPU x {linux, windows}, in-process, < 0.5 s
- `plan --fleet` over a 500-node `kubectl get nodes -o json` document (the GFD fixture's nodes repeated, 6 groups),
  as a cold process, <= 2 x `plan --format json` (each group is resolved once, whatever the number of nodes; on
  the reference machine, where `import typer` takes about 62 ms, that is well under 1 s)
- peak memory (max RSS) of every timed command < 60 MB
"""

from __future__ import annotations

import argparse
import json
import os
import statistics
import subprocess
import sys
import tempfile
import time
from pathlib import Path

BIN = Path(sys.executable).parent
PLAN = ["plan", "--tf", "1.15", "--no-detect", "--gpu-cc", "6.1", "--os", "linux"]


def run_once(argv: list[str]) -> tuple[float, float]:
    """Wall time (s) and peak RSS (MB) of one fresh process, output discarded."""
    start = time.perf_counter()
    pid = os.fork()
    if pid == 0:  # child: exec the command with output discarded
        devnull = os.open(os.devnull, os.O_WRONLY)
        os.dup2(devnull, 1)
        os.dup2(devnull, 2)
        try:
            os.execv(argv[0], argv)
        finally:
            os._exit(127)
    _, status, usage = os.wait4(pid, 0)
    elapsed = time.perf_counter() - start
    code = os.waitstatus_to_exitcode(status)
    if code not in (0, 1):
        raise SystemExit(f"{' '.join(argv)} exited {code}")
    return elapsed, usage.ru_maxrss / 1024  # KiB on Linux


def alternating(commands: dict[str, list[str]], runs: int) -> dict[str, tuple[float, float]]:
    """Median wall time and max RSS per command, the commands run in turn `runs` times."""
    times: dict[str, list[float]] = {name: [] for name in commands}
    peaks: dict[str, float] = {name: 0.0 for name in commands}
    for name, argv in commands.items():  # warm the file cache once, untimed
        run_once(argv)
    for _ in range(runs):
        for name, argv in commands.items():
            elapsed, peak = run_once(argv)
            times[name].append(elapsed)
            peaks[name] = max(peaks[name], peak)
    return {name: (statistics.median(times[name]), peaks[name]) for name in commands}


def probe_seconds() -> float:
    """The probes' own time in one `detect` (the sum the detect document reports)."""
    out = subprocess.run([str(BIN / "stackresolve"), "detect", "--format", "json"], capture_output=True, text=True,
                         timeout=120, check=False)
    return sum(p["seconds"] for p in json.loads(out.stdout).get("probes", []))


def matrix_all(runs: int) -> tuple[float, int]:
    from stackresolve.knowledge.loader import load_knowledge
    from stackresolve.matrix import build_matrix
    from stackresolve.request import Flags, build_request

    best, cells = float("inf"), 0
    for _ in range(runs):
        kb = load_knowledge()  # fresh memos: the matrix pays for its own resolutions
        start = time.perf_counter()
        count = 0
        for gpu in kb.gpus:
            request = build_request(kb, Flags(gpu=gpu.name, os="linux"), None)
            count += len(build_matrix(kb, request, ["linux", "windows"]))
        best, cells = min(best, time.perf_counter() - start), count
    return best, cells


def fleet_document(path: Path, nodes: int = 500) -> None:
    """A cluster of `nodes` nodes: the fleet test fixture's nodes, repeated under new names."""
    fixture = Path(__file__).resolve().parents[1] / "tests" / "fixtures" / "fleet" / "gfd-cluster-nodes.json"
    doc = json.loads(fixture.read_text())
    pattern = doc["items"]
    items = []
    for i in range(nodes):
        node = json.loads(json.dumps(pattern[i % len(pattern)]))
        node["metadata"]["name"] = f"{node['metadata']['name']}-{i}"
        items.append(node)
    doc["items"] = items
    path.write_text(json.dumps(doc))


def main() -> int:
    parser = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    parser.add_argument("--runs", type=int, default=11)
    args = parser.parse_args()
    exe, tool = str(BIN / "python"), str(BIN / "stackresolve")
    with tempfile.TemporaryDirectory() as scratch:
        lock = Path(scratch) / "stackresolve.lock"
        cluster = Path(scratch) / "nodes.json"
        fleet_document(cluster)
        subprocess.run([tool, *PLAN, "--format", "lock", "-o", str(lock)], check=True, capture_output=True,
                       timeout=120)
        commands = {
            "import typer": [exe, "-c", "import typer"],
            "plan --format text": [tool, *PLAN],
            "plan --format json": [tool, *PLAN, "--format", "json"],
            "check": [tool, "check", str(lock), "--no-detect", "--os", "linux", "--gpu-cc", "6.1", "--driver",
                      "440.33"],
            "--help": [tool, "--help"],
            "detect": [tool, "detect"],
            "plan --fleet (500 nodes)": [tool, "plan", "--fleet", str(cluster), "--torch", "latest"],
        }
        measured = alternating(commands, args.runs)
    probes = probe_seconds()
    matrix_s, cells = matrix_all(3)

    typer_s = measured["import typer"][0]
    budgets = {"plan --format text": 1.3, "plan --format json": 1.5, "check": 1.3, "--help": 1.1, "detect": 1.3}
    rows, missed = [], []
    rows.append(("python -c 'import typer' (reference)", f"{typer_s * 1000:.0f} ms", "", ""))
    for name, factor in budgets.items():
        seconds, peak = measured[name]
        allowed = factor * typer_s + (probes if name == "detect" else 0.0)
        ok = seconds <= allowed and peak < 60
        extra = f" (probes {probes * 1000:.0f} ms)" if name == "detect" else ""
        rows.append((f"stackresolve {name}", f"{seconds * 1000:.0f} ms = {seconds / typer_s:.2f} x typer{extra}",
                     f"{peak:.0f} MB", f"<= {factor} x" + (" + probes" if name == "detect" else "")
                     + ("" if ok else "  MISSED")))
        if not ok:
            missed.append(name)
    fleet_s, fleet_peak = measured["plan --fleet (500 nodes)"]
    one_plan_s = measured["plan --format json"][0]
    fleet_ok = fleet_s <= 2 * one_plan_s and fleet_peak < 60
    rows.append(("stackresolve plan --fleet, 500 nodes", f"{fleet_s * 1000:.0f} ms = {fleet_s / one_plan_s:.2f} x plan "
                 f"json", f"{fleet_peak:.0f} MB", "<= 2 x plan json" + ("" if fleet_ok else "  MISSED")))
    if not fleet_ok:
        missed.append("plan --fleet")
    matrix_ok = matrix_s < 0.5
    rows.append((f"matrix, {cells} cells in-process", f"{matrix_s:.2f} s", "", "< 0.5 s" + ("" if matrix_ok else
                                                                                               "  MISSED")))
    if not matrix_ok:
        missed.append("matrix")
    width = max(len(r[0]) for r in rows)
    print(f"Python {sys.version.split()[0]}, median of {args.runs} alternating cold runs")
    for name, value, peak, budget in rows:
        print(f"{name:<{width}}  {value:<32} {peak:>6}  {budget}")
    if missed:
        print("missed: " + ", ".join(missed))
    return 1 if missed else 0


if __name__ == "__main__":
    sys.exit(main())
