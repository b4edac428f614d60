#!/usr/bin/env python3
"""Speed and memory budgets of stackresolve, measured with the standard library; prints a table.

    python scripts/bench.py [--runs N]

Budgets (exit 1 when one is missed):
- cold `stackresolve plan --tf 1.15 --format json` wall time <= 1.3 x cold `python -c "import typer"`
- `matrix` over every TensorFlow line x every GPU in the knowledge base x {linux, windows}, in-process, < 1 s
- peak memory (max RSS) of the cold plan process < 80 MB
- `stackresolve detect` on this machine < 1 s
"""

from __future__ import annotations

import argparse
import os
import statistics
import sys
import time
from pathlib import Path

BIN = Path(sys.executable).parent


def cold_run(argv: list[str], runs: int) -> tuple[float, float]:
    """Median wall time (s) of fresh processes, and the peak RSS (MB) of the largest one."""
    times, peaks = [], []
    for _ in range(runs):
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
        times.append(time.perf_counter() - start)
        peaks.append(usage.ru_maxrss / 1024)  # KiB on Linux
        code = os.waitstatus_to_exitcode(status)
        if code not in (0, 1):
            raise SystemExit(f"{' '.join(argv)} exited {code}")
    return statistics.median(times), max(peaks)


def matrix_all(runs: int) -> tuple[float, int]:
    from stackresolve.knowledge.loader import load_knowledge
    from stackresolve.matrix import build_matrix
    from stackresolve.request import Request
    from stackresolve.target import Flags, build_request

    best, cells = float("inf"), 0
    for _ in range(runs):
        kb = load_knowledge()  # fresh: nothing memoized from an earlier run
        start = time.perf_counter()
        cells = 0
        for gpu in kb.gpus:
            request: Request = build_request(kb, Flags(gpu=gpu.name), None)
            cells += len(build_matrix(kb, request, ["linux", "windows"]))
        best = min(best, time.perf_counter() - start)
    return best, cells


def main() -> int:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--runs", type=int, default=7, help="repetitions per measurement (median / best)")
    args = parser.parse_args()
    stackresolve = str(BIN / "stackresolve")
    if not Path(stackresolve).exists():
        raise SystemExit(f"{stackresolve} not found: install the project into this interpreter first")

    typer_s, _ = cold_run([sys.executable, "-c", "import typer"], args.runs)
    plan_s, plan_mb = cold_run([stackresolve, "plan", "--tf", "1.15", "--format", "json"], args.runs)
    plan_nd_s, _ = cold_run([stackresolve, "plan", "--tf", "1.15", "--format", "json", "--no-detect"], args.runs)
    detect_s, _ = cold_run([stackresolve, "detect", "--format", "json"], args.runs)
    matrix_s, cells = matrix_all(max(1, args.runs // 3))

    ratio = plan_s / typer_s
    rows = [
        ("python -c 'import typer' (cold)", f"{typer_s * 1000:.0f} ms", "reference", True),
        ("plan --tf 1.15 --format json (cold)", f"{plan_s * 1000:.0f} ms", f"<= 1.3 x typer ({ratio:.2f} x)",
         ratio <= 1.3),
        ("plan ... --no-detect (cold)", f"{plan_nd_s * 1000:.0f} ms", f"{plan_nd_s / typer_s:.2f} x typer", True),
        ("plan peak memory (max RSS)", f"{plan_mb:.1f} MB", "< 80 MB", plan_mb < 80),
        ("detect --format json (cold)", f"{detect_s * 1000:.0f} ms", "< 1000 ms", detect_s < 1.0),
        (f"matrix, {cells} cells, in-process", f"{matrix_s * 1000:.0f} ms", "< 1000 ms", matrix_s < 1.0),
    ]
    width = max(len(r[0]) for r in rows)
    print(f"{'measurement':<{width}}  {'value':>9}  budget")
    for name, value, budget, ok in rows:
        print(f"{name:<{width}}  {value:>9}  {budget}{'' if ok else '  MISSED'}")
    print(f"\n(python {sys.version.split()[0]}, {os.cpu_count()} CPUs, median of {args.runs} cold runs)")
    return 0 if all(r[3] for r in rows) else 1


if __name__ == "__main__":
    sys.exit(main())
