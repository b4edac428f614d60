#!/usr/bin/env python3
"""Hostile-input fuzzing of the command line, in-process (issue 23): plan / check / explain / show / matrix with
version flags and log text carrying other scripts' digits, huge numbers and control characters.

    python scripts/fuzz_inputs.py [--runs N] [--seed S]

Every run calls the program's entry point (stackresolve.cli.main) with one hostile argument list and checks the
contract: exit 0, 1 or 2 (3 is an internal error), at most one line on stderr for exit 2, no traceback, and no
control character (ESC, BEL, C1, bidi overrides) in what reaches stdout or stderr. Prints a summary and every
failure; exit 1 when there was one. tests/cross_cutting/test_hostile_round_two.py runs a seeded slice of it.
"""

from __future__ import annotations

import argparse
import contextlib
import io
import json
import os
import random
import sys
import tempfile
import time
from pathlib import Path

# Digits of other scripts that Python's \d, str.isdigit() and int() accept.
DIGIT_SETS = ["０１２３４５６７８９", "٠١٢٣٤٥٦٧٨٩", "۰۱۲۳۴۵۶۷۸۹", "०१२३४५६७८९", "০১২৩৪৫৬৭৮৯", "𝟎𝟏𝟐𝟑𝟒𝟓𝟔𝟕𝟖𝟗"]
CONTROLS = ["\x1b]0;pwned\x07", "\x1b]52;c;ZXZpbA==\x07", "\x1b[2J", "\x9b31m", "\x9d0;t\x9c", "\r", "\x00", "\x7f",
            "\u202e", "\x1bP+q\x1b\\", "\x08\x08"]
SEEDS = {
    "tf": ["1.15", "2.15", "2.3.4", ">=2.4,<2.8", "2"], "torch": ["2.5", "2.5.1", "1.13"], "jax": ["0.4", "0.4.35"],
    "driver": ["535.104.05", "470.82.01", "580"], "cudnn": ["8.6", "7.6.5"], "cc": ["8.6", "6.1", "sm_86"],
    "python": ["3.10", "3.7"], "cuda": ["10.0", "12.4"], "gpu": ["RTX 4090", "GTX 1080 Ti"],
}
LOG = ("2021-03-01 I tensorflow/stream_executor/platform/default/dso_loader.cc:53] Successfully opened dynamic "
       "library libcudart.so.{cuda}\nCould not load dynamic library 'libcudnn.so.{cudnn}'; dlerror: libcudnn.so.{cudnn}: "
       "cannot open shared object file\ntensorflow {tf}, CUDA {cuda}, driver {driver}\n")


def hostile(value: str, rng: random.Random) -> str:
    kind = rng.choice(["digits", "huge", "control", "mixed", "long"])
    if kind == "digits":
        digits = rng.choice(DIGIT_SETS)
        return "".join(digits[int(c)] if c.isascii() and c.isdigit() and rng.random() < 0.8 else c for c in value)
    if kind == "huge":
        parts = value.split(".")
        i = rng.randrange(len(parts))
        parts[i] = "".join(c for c in parts[i] if c.isdigit()) + "1" * rng.choice([10, 100, 4301, 5000])
        return ".".join(parts)
    if kind == "control":
        at = rng.randrange(len(value) + 1)
        return value[:at] + rng.choice(CONTROLS) + value[at:]
    if kind == "long":
        return value + "." + ".".join(["9"] * rng.choice([5, 50, 500]))
    return hostile(hostile(value, rng), rng)


def cases(rng: random.Random, lock: str, log_dir: Path):
    """An endless stream of (label, argv, env) to try."""
    n = 0
    while True:
        n += 1
        pick = lambda key: rng.choice(SEEDS[key])  # noqa: E731
        maybe = lambda key: hostile(pick(key), rng) if rng.random() < 0.6 else pick(key)  # noqa: E731
        command = rng.choice(["plan", "plan", "check", "explain", "explain-file", "show", "matrix", "env"])
        fmt = rng.choice(["text", "json"])
        if command == "plan":
            target = rng.choice([["--tf", maybe("tf")], ["--torch", maybe("torch")], ["--jax", maybe("jax")]])
            extra = rng.sample([["--driver", maybe("driver")], ["--cudnn", maybe("cudnn")], ["--gpu-cc", maybe("cc")],
                                ["--python", maybe("python")], ["--gpu", maybe("gpu")],
                                ["--env-name", hostile("tf-env", rng)]], k=rng.randint(1, 3))
            argv = ["plan", "--no-detect", "--os", "linux", *target, *sum(extra, []), "--format",
                    rng.choice([fmt, "pip", "conda"])]
            if "--gpu-cc" not in argv and "--gpu" not in argv:
                argv += ["--gpu-cc", "8.6"]
        elif command == "check":
            extra = rng.sample([["--driver", maybe("driver")], ["--cudnn", maybe("cudnn")], ["--gpu-cc", maybe("cc")],
                                ["--python", maybe("python")], ["--cuda", maybe("cuda")]], k=rng.randint(1, 3))
            argv = ["check", lock, "--no-detect", "--os", "linux", *sum(extra, []), "--format", fmt]
        elif command in ("explain", "explain-file"):
            text = LOG.format(cuda=maybe("cuda"), cudnn=maybe("cudnn").split(".")[0], tf=maybe("tf"),
                              driver=maybe("driver"))
            if rng.random() < 0.5:
                at = rng.randrange(len(text))
                text = text[:at] + rng.choice(CONTROLS) + text[at:]
            flags = rng.choice([[], ["--tf", maybe("tf")], ["--driver", maybe("driver")], ["--gpu", maybe("gpu")]])
            if command == "explain":
                argv = ["explain", text.replace("\x00", ""), "--no-detect", "--os", "linux", *flags, "--format", fmt]
            else:
                path = log_dir / f"log{n}.txt"
                path.write_bytes(rng.choice([b"", b"\xff\xfe", b"\xef\xbb\xbf"]) +
                                 text.encode(rng.choice(["utf-8", "utf-16-le"]), "surrogatepass"))
                argv = ["explain", "--file", str(path), "--no-detect", "--os", "linux", *flags, "--format", fmt]
        elif command == "show":
            component = rng.choice(["tf", "torch", "jax"])
            argv = ["show", component, maybe({"tf": "tf", "torch": "torch", "jax": "jax"}[component]), "--format", fmt]
        elif command == "matrix":
            argv = ["matrix", *rng.choice([["--gpu-cc", maybe("cc")], ["--gpu", maybe("gpu")]]), "--os", "linux",
                    *rng.choice([[], ["--driver", maybe("driver")], ["--torch"], ["--jax"]]), "--format", fmt]
        else:
            env_value = maybe("driver") if rng.random() < 0.5 else maybe("cc")
            name = rng.choice(["STACKRESOLVE_DRIVER", "STACKRESOLVE_GPU_CC"])
            yield command, ["plan", "--tf", "2.15", "--format", fmt], {name: env_value.replace("\x00", "")}
            continue
        yield command, argv, {}


BAD = ("\x1b", "\x07", "\x9b", "\x9d", "\x9c", "\x90", "\u202e", "\x00", "\x08")


def run_case(argv: list[str], env: dict[str, str]) -> tuple[int, list[str]]:
    from stackresolve.cli import main

    out, err = io.StringIO(), io.StringIO()
    saved_env = {k: os.environ.get(k) for k in env}
    os.environ.update(env)
    saved = sys.argv, sys.stdout, sys.stderr
    sys.argv, sys.stdout, sys.stderr = ["stackresolve", *argv], out, err
    code: object = 0
    try:
        main()
    except SystemExit as exc:
        code = exc.code
    finally:
        sys.argv, sys.stdout, sys.stderr = saved
        for k, v in saved_env.items():
            os.environ.pop(k, None) if v is None else os.environ.__setitem__(k, v)
    problems = []
    stdout, stderr = out.getvalue(), err.getvalue()
    if code not in (0, 1, 2):
        problems.append(f"exit {code}: {stderr.strip()[-300:]!r}")
    if "Traceback" in stderr:
        problems.append("traceback")
    if code == 2 and len([l for l in stderr.splitlines() if l.strip()]) != 1:
        problems.append(f"exit 2 with {len(stderr.splitlines())} stderr lines")
    if any(ch in stdout or ch in stderr for ch in BAD):
        problems.append("a control character reached the streams")
    return int(code) if isinstance(code, int) else -1, problems


def fuzz(runs: int, seed: int) -> tuple[dict[int, int], list[tuple[list[str], dict, list[str]]]]:
    """Exit codes seen (code -> runs) and the failures (argv, env, problems) of `runs` seeded runs."""
    rng = random.Random(seed)
    codes: dict[int, int] = {}
    failures = []
    saved = os.environ.get("STACKRESOLVE_DETECT_TIMEOUT")
    os.environ.setdefault("STACKRESOLVE_DETECT_TIMEOUT", "5")  # detection runs in the STACKRESOLVE_* cases
    try:
        return _fuzz(rng, runs, codes, failures)
    finally:
        if saved is None:
            os.environ.pop("STACKRESOLVE_DETECT_TIMEOUT", None)


def _fuzz(rng: random.Random, runs: int, codes: dict, failures: list):
    with tempfile.TemporaryDirectory() as scratch:
        lock = Path(scratch) / "stackresolve.lock"
        code, problems = run_case(["plan", "--no-detect", "--tf", "1.15", "--os", "linux", "--gpu-cc", "6.1",
                                   "--format", "lock", "-o", str(lock)], {})
        assert code == 0 and not problems, problems
        stream = cases(rng, str(lock), Path(scratch))
        for _ in range(runs):
            _, argv, env = next(stream)
            code, problems = run_case(argv, env)
            codes[code] = codes.get(code, 0) + 1
            if problems:
                failures.append((argv, env, problems))
    return codes, failures


def main() -> int:
    parser = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    parser.add_argument("--runs", type=int, default=2000)
    parser.add_argument("--seed", type=int, default=23)
    args = parser.parse_args()
    started = time.monotonic()
    codes, failures = fuzz(args.runs, args.seed)
    print(f"{args.runs} runs (seed {args.seed}) in {time.monotonic() - started:.0f} s; exit codes: "
          f"{json.dumps(dict(sorted(codes.items())))}; failures: {len(failures)}")
    for argv, env, problems in failures[:50]:
        print(f"  {problems}: {[a[:80] for a in argv]!r} {env!r}"[:600])
    return 1 if failures else 0


if __name__ == "__main__":
    sys.exit(main())
