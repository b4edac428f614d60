#!/usr/bin/env python3
"""Check constraints/pitfalls.toml: validate the records, then ask pip what it resolves today.

    python scripts/check_pitfalls.py --validate-only
    python scripts/check_pitfalls.py --pins-only                  # what each built-in target gets, no pip
    python scripts/check_pitfalls.py                              # the built-in targets, one per TF line and OS
    python scripts/check_pitfalls.py tensorflow-gpu==1.15.5@3.7/linux tensorflow-gpu==2.3.4@3.8/windows

A target is PACKAGE==VERSION@PYTHON/OS with OS one of linux, windows, macos (x86_64), macos-arm64. For each
target the script runs `pip install --dry-run --report` twice, for the TensorFlow requirement alone ("before")
and with the pins pitfalls.toml selects for that target ("after"), and prints what changed.

How pip is run, and why:
- with `--isolated` and PIP_CONFIG_FILE set to the null device, so only the default package index is used (no
  machine-wide constraint files, find-links or extra indexes);
- under this interpreter, with `--python-version`, `--platform`, `--implementation cp`. pip evaluates environment
  markers (`python_version < "3.8"`, `platform_system == "Windows"`) against the *running* interpreter even then,
  so a small bootstrap replaces pip's marker environment with the target's before pip starts;
- `--only-binary=:all:` by default (what a cross-platform dry-run requires). `--allow-sdist` lifts pip's rule that
  --platform needs --only-binary, so a resolution that needs an sdist (gast 0.2.2, wrapt 1.12.1, termcolor 1.1.0
  have no wheels) still completes; the sdists it picks are listed, since the target machine will build them.

Every pip run has a timeout. Needs: pip >= 22.2 in this interpreter, `packaging`, Python >= 3.11 (tomllib) or tomli.
"""
from __future__ import annotations

import argparse
import json
import os
import re
import subprocess
import sys
import tempfile
from concurrent.futures import ThreadPoolExecutor
from pathlib import Path

from packaging.requirements import Requirement
from packaging.specifiers import SpecifierSet
from packaging.utils import canonicalize_name
from packaging.version import Version

try:
    import tomllib
except ModuleNotFoundError:  # Python < 3.11
    import tomli as tomllib

ROOT = Path(__file__).resolve().parent.parent
DEFAULT_FILE = ROOT / "constraints" / "pitfalls.toml"
OSES = ("linux", "windows", "macos")
FIELDS_REQUIRED = ("package", "constraint", "tf", "why", "source")
FIELDS_OPTIONAL = ("os", "python", "note", "verified_by")
_SOURCE = re.compile(r"^(https://\S+|[\w.-]+/[\w.-]+:\S+|package index /simple/[a-z0-9-]+/)")


def _index_host() -> str:
    """The configured package index's host (never written here: it comes from pip's settings)."""
    from urllib.parse import urlparse

    if str(ROOT / "src") not in sys.path:  # works without the project installed
        sys.path.insert(0, str(ROOT / "src"))
    from stackresolve.index.simple import index_url

    return (urlparse(index_url()).hostname or "").lower()


# Target OS -> (pitfalls `os` value, pip --platform tags, marker environment overrides)
_LINUX_TAGS = [f"manylinux_2_{m}_x86_64" for m in range(31, 16, -1)] + [
    "manylinux2014_x86_64", "manylinux_2_12_x86_64", "manylinux2010_x86_64", "manylinux_2_5_x86_64",
    "manylinux1_x86_64", "linux_x86_64"]
TARGET_OSES = {
    "linux": ("linux", _LINUX_TAGS,
              {"sys_platform": "linux", "platform_system": "Linux", "os_name": "posix",
               "platform_machine": "x86_64"}),
    "windows": ("windows", ["win_amd64"],
                {"sys_platform": "win32", "platform_system": "Windows", "os_name": "nt",
                 "platform_machine": "AMD64"}),
    "macos": ("macos", ["macosx_14_0_x86_64"],
              {"sys_platform": "darwin", "platform_system": "Darwin", "os_name": "posix",
               "platform_machine": "x86_64"}),
    "macos-arm64": ("macos", ["macosx_14_0_arm64"],
                    {"sys_platform": "darwin", "platform_system": "Darwin", "os_name": "posix",
                     "platform_machine": "arm64"}),
}

# One target per TensorFlow line (newest patch, newest Python it has wheels for) and OS where wheels exist, plus
# the first patch of lines whose later patches fixed their own metadata. (tensorflow[and-cuda] 2.14.x and 2.15.0 are
# left out: their extra pins tensorrt 8.5.3.1 / tensorrt-libs 8.6.1, which the package index does not have; so is
# tensorflow-macos 2.6 on Apple silicon: `numpy~=1.19.2` has no macOS arm64 wheel, pip has to compile numpy.)
DEFAULT_TARGETS = """
tensorflow==1.0.1@3.6/linux tensorflow==1.0.1@3.5/windows
tensorflow==1.2.1@3.6/linux tensorflow==1.2.1@3.6/windows
tensorflow==1.4.1@3.6/linux
tensorflow==1.5.1@3.6/linux tensorflow==1.5.1@3.6/windows
tensorflow==1.8.0@3.6/linux tensorflow==1.9.0@3.6/linux
tensorflow==1.10.1@3.6/linux tensorflow==1.11.0@3.6/linux tensorflow==1.12.3@3.6/linux tensorflow==1.12.3@3.6/windows
tensorflow==1.13.2@3.7/linux tensorflow==1.13.2@3.7/windows
tensorflow==1.14.0@3.7/linux tensorflow==1.14.0@3.7/windows tensorflow==1.14.0@3.7/macos
tensorflow-gpu==1.15.5@3.7/linux tensorflow-gpu==1.15.5@3.7/windows tensorflow-gpu==1.15.5@3.6/linux
tensorflow==1.15.5@3.7/macos tensorflow-gpu==1.15.0@3.7/linux
tensorflow-gpu==2.0.4@3.7/linux tensorflow-gpu==2.0.0@3.7/windows
tensorflow==2.1.4@3.7/linux tensorflow-gpu==2.1.4@3.7/windows
tensorflow==2.2.3@3.8/linux tensorflow==2.2.0@3.8/windows
tensorflow==2.3.4@3.8/linux tensorflow-gpu==2.3.4@3.8/windows tensorflow==2.3.4@3.8/macos
tensorflow==2.4.4@3.8/linux tensorflow==2.4.4@3.8/windows
tensorflow==2.5.3@3.9/linux tensorflow==2.5.3@3.9/windows
tensorflow==2.6.5@3.9/linux tensorflow==2.6.0@3.9/linux tensorflow==2.6.0@3.9/windows
tensorflow==2.7.4@3.9/linux tensorflow==2.7.0@3.9/windows
tensorflow==2.8.4@3.10/linux tensorflow==2.8.0@3.10/windows
tensorflow==2.9.3@3.10/linux tensorflow==2.9.3@3.10/windows tensorflow-macos==2.9.2@3.10/macos-arm64
tensorflow==2.10.1@3.10/linux tensorflow==2.10.1@3.10/windows tensorflow==2.10.1@3.10/macos
tensorflow==2.11.1@3.10/linux tensorflow==2.11.1@3.10/windows
tensorflow==2.12.0@3.11/linux tensorflow==2.12.1@3.11/windows tensorflow-macos==2.12.0@3.11/macos-arm64
tensorflow==2.13.1@3.11/linux tensorflow==2.13.1@3.11/windows tensorflow==2.13.1@3.11/macos-arm64
tensorflow==2.14.0@3.11/linux tensorflow==2.14.1@3.11/windows tensorflow==2.14.1@3.11/macos-arm64
tensorflow[and-cuda]==2.15.1@3.11/linux tensorflow==2.15.1@3.11/windows
tensorflow[and-cuda]==2.16.2@3.12/linux tensorflow==2.16.2@3.12/windows tensorflow==2.16.2@3.12/macos
tensorflow[and-cuda]==2.17.1@3.12/linux tensorflow==2.17.1@3.12/windows
tensorflow[and-cuda]==2.18.1@3.12/linux tensorflow[and-cuda]==2.19.1@3.12/linux
tensorflow[and-cuda]==2.20.0@3.13/linux tensorflow==2.20.0@3.13/windows tensorflow==2.20.0@3.13/macos-arm64
tensorflow[and-cuda]==2.21.0@3.13/linux tensorflow==2.21.0@3.13/windows
""".split()

# Packages whose resolved version the summary shows.
WATCH = ("protobuf", "numpy", "h5py", "tensorboard", "tensorflow-estimator", "keras", "keras-nightly", "gast",
         "typing-extensions", "wrapt", "grpcio", "six", "setuptools", "tensorflow-io-gcs-filesystem", "ml-dtypes",
         "markdown", "importlib-metadata", "werkzeug", "scipy", "tensorflow-intel", "tensorflow-macos",
         "tf-estimator-nightly", "termcolor", "urllib3", "google-auth", "cryptography")

# Runs inside the pip subprocess: swap in the target's marker environment, optionally allow sdists, run pip.
_BOOT = r"""
import json, sys
cfg = json.loads(sys.argv[1])
import pip._vendor.packaging.markers as _m
_orig = _m.default_environment
def _env():
    env = _orig()
    env.update(cfg["markers"])
    return env
_m.default_environment = _env
if cfg["allow_sdist"]:
    import pip._internal.cli.cmdoptions as _c
    _c.check_dist_restriction = lambda options, check_target=False: None
from pip._internal.cli.main import main
sys.exit(main(cfg["args"]))
"""


class PitfallError(ValueError):
    pass


def load_pins(path: Path) -> list[dict]:
    """Parse pitfalls.toml and check every record; raise PitfallError listing every problem."""
    with open(path, "rb") as f:
        data = tomllib.load(f)
    problems = []
    extra_tables = sorted(set(data) - {"pin"})
    if extra_tables:
        problems.append(f"unknown top-level keys: {extra_tables}")
    pins = data.get("pin", [])
    host = _index_host()
    if not pins:
        problems.append("no [[pin]] records")
    for i, rec in enumerate(pins):
        where = f"pin #{i + 1} ({rec.get('package', '?')} {rec.get('tf', '?')})"
        for key in FIELDS_REQUIRED:
            if not isinstance(rec.get(key), str) or not rec[key].strip():
                problems.append(f"{where}: `{key}` missing or empty")
        unknown = sorted(set(rec) - set(FIELDS_REQUIRED) - set(FIELDS_OPTIONAL))
        if unknown:
            problems.append(f"{where}: unknown keys {unknown}")
        oses = rec.get("os", list(OSES))
        if not isinstance(oses, list) or not oses or any(o not in OSES for o in oses):
            problems.append(f"{where}: `os` must be a non-empty list drawn from {OSES}")
        try:
            Requirement(f"{rec.get('package', '')}{rec.get('constraint', '')}")
            if rec.get("package") != canonicalize_name(rec.get("package", "")):
                problems.append(f"{where}: write the package name normalized: {canonicalize_name(rec['package'])}")
            if not str(rec.get("constraint", "")).strip():
                raise ValueError("empty constraint")
            SpecifierSet(rec.get("tf", ""))
            SpecifierSet(rec.get("python", ""))
        except Exception as e:  # packaging raises several types
            problems.append(f"{where}: {e}")
        src = rec.get("source", "")
        if isinstance(src, str) and src and not _SOURCE.match(src):
            problems.append(f"{where}: source is not a URL, owner/repo:path@ref or 'package index /simple/NAME/ ...'")
        if rec.get("python") is not None and not isinstance(rec.get("python"), str):
            problems.append(f"{where}: `python` must be a string")
        vb = rec.get("verified_by")
        if vb is not None and (not isinstance(vb, list) or not vb or not all(isinstance(x, str) for x in vb)):
            problems.append(f"{where}: `verified_by` must be a non-empty list of run ids (verified_installs.toml)")
        text = " ".join(str(v) for v in rec.values()).lower()
        if host and host in text:
            problems.append(f"{where}: names a package-index host; write 'package index /simple/NAME/' instead")
    if problems:
        raise PitfallError("\n".join(problems))
    return pins


def select(pins: list[dict], tf_version: str, python: str, os_key: str) -> list[dict]:
    """The records that apply to one TensorFlow version, Python X.Y and OS (linux | windows | macos)."""
    v, py = Version(tf_version), Version(python)
    out = []
    for rec in pins:
        if not SpecifierSet(rec["tf"]).contains(v, prereleases=True):
            continue
        if os_key not in rec.get("os", OSES):
            continue
        if rec.get("python") and not SpecifierSet(rec["python"]).contains(py, prereleases=True):
            continue
        out.append(rec)
    return out


def requirement_lines(selected: list[dict]) -> list[str]:
    """One requirement per package, the constraints of all selected records joined."""
    by_pkg: dict[str, list[str]] = {}
    for rec in selected:
        by_pkg.setdefault(rec["package"], []).append(rec["constraint"])
    return [f"{pkg}{','.join(specs)}" for pkg, specs in by_pkg.items()]


def parse_target(text: str) -> dict:
    m = re.fullmatch(r"([A-Za-z0-9_.\-]+(?:\[[a-z0-9\-,]+\])?)==([0-9][0-9a-z.]*)@(\d\.\d+)/([a-z0-9\-]+)", text)
    if not m or m.group(4) not in TARGET_OSES:
        raise SystemExit(f"bad target {text!r}: want PACKAGE==VERSION@X.Y/OS, OS in {sorted(TARGET_OSES)}")
    return {"req": f"{m.group(1)}=={m.group(2)}", "version": m.group(2), "python": m.group(3), "os": m.group(4),
            "label": text}


def run_pip(target: dict, extra: list[str], allow_sdist: bool, timeout: int) -> dict:
    """pip install --dry-run --report for the target; returns {'ok', 'install': {name: (version, sdist)}, 'error'}."""
    pit_os, platforms, markers = TARGET_OSES[target["os"]]
    py = target["python"]
    markers = dict(markers, python_version=py, python_full_version=f"{py}.0", implementation_name="cpython",
                   platform_python_implementation="CPython", platform_release="", platform_version="")
    with tempfile.TemporaryDirectory(prefix="pitfalls-") as tmp:
        req_file = Path(tmp, "requirements.txt")
        req_file.write_text("\n".join([target["req"], *extra]) + "\n")
        report = Path(tmp, "report.json")
        args = ["install", "--isolated", "--dry-run", "--ignore-installed", "--quiet", "--no-color",
                "--target", str(Path(tmp, "target")), "--python-version", py, "--implementation", "cp",
                "--report", str(report), "-r", str(req_file)]
        for p in platforms:
            args += ["--platform", p]
        if not allow_sdist:
            args += ["--only-binary=:all:"]
        env = dict(os.environ, PIP_CONFIG_FILE=os.devnull)
        for k in [k for k in env if k.startswith("PIP_") and k != "PIP_CONFIG_FILE"]:
            del env[k]
        cfg = json.dumps({"markers": markers, "allow_sdist": allow_sdist, "args": args})
        try:
            proc = subprocess.run([sys.executable, "-c", _BOOT, cfg], capture_output=True, text=True,
                                  timeout=timeout, env=env)
        except subprocess.TimeoutExpired:
            return {"ok": False, "install": {}, "error": f"pip timed out after {timeout}s"}
        if proc.returncode != 0 or not report.exists():
            err = [ln for ln in (proc.stderr or proc.stdout).splitlines() if ln.strip()]
            wanted = [ln for ln in err if "ERROR" in ln or "error" in ln.lower()] or err
            return {"ok": False, "install": {}, "error": " | ".join(wanted[-4:])[:1200]}
        data = json.loads(report.read_text())
    install = {}
    for item in data.get("install", []):
        meta = item["metadata"]
        url = item.get("download_info", {}).get("url", "")
        install[canonicalize_name(meta["name"])] = (meta["version"], not url.endswith(".whl"))
    return {"ok": True, "install": install, "error": ""}


def check_target(target: dict, pins: list[dict], allow_sdist: bool, timeout: int) -> dict:
    pit_os = TARGET_OSES[target["os"]][0]
    lines = requirement_lines(select(pins, target["version"], target["python"], pit_os))
    before = run_pip(target, [], allow_sdist, timeout)
    after = run_pip(target, lines, allow_sdist, timeout) if lines else before
    problems = []
    if after["ok"]:
        for line in lines:  # pip enforces these; a miss means the check itself is broken
            r = Requirement(line)
            got = after["install"].get(canonicalize_name(r.name))
            if got and not r.specifier.contains(got[0], prereleases=True):
                problems.append(f"{r.name} {got[0]} violates {line}")
    return {"target": target["label"], "pins": lines, "before": before, "after": after, "problems": problems}


def _fmt(install: dict, names) -> str:
    out = []
    for n in names:
        if n in install:
            ver, sdist = install[n]
            out.append(f"{n}={ver}{' (sdist)' if sdist else ''}")
    return " ".join(out)


def print_result(res: dict) -> None:
    b, a = res["before"], res["after"]
    print(f"== {res['target']}")
    print(f"   pins:   {' '.join(res['pins']) or '(none)'}")
    if b["ok"]:
        print(f"   before: {_fmt(b['install'], WATCH)}")
    else:
        print(f"   before: FAILS: {b['error']}")
    if a is b:
        return
    if a["ok"]:
        changed = [n for n in WATCH if b["install"].get(n) != a["install"].get(n)] if b["ok"] else WATCH
        print(f"   after:  {_fmt(a['install'], changed) or '(same as before)'}")
        sdists = sorted(n for n, (_, s) in a["install"].items() if s)
        if sdists:
            print(f"   after needs sdists: {' '.join(sdists)}")
    else:
        print(f"   after:  FAILS: {a['error']}")
    for p in res["problems"]:
        print(f"   PROBLEM: {p}")


def main(argv: list[str] | None = None) -> int:
    ap = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    ap.add_argument("targets", nargs="*", help="PACKAGE==VERSION@X.Y/OS (default: a built-in set)")
    ap.add_argument("--file", type=Path, default=DEFAULT_FILE, help="pitfalls file (default: %(default)s)")
    ap.add_argument("--validate-only", action="store_true", help="only parse and check the records")
    ap.add_argument("--pins-only", action="store_true", help="print each target's pins, run no pip")
    ap.add_argument("--allow-sdist", action="store_true", help="let pip pick sdists (see above)")
    ap.add_argument("--jobs", type=int, default=2)
    ap.add_argument("--timeout", type=int, default=900, help="seconds per pip run")
    ap.add_argument("--json", type=Path, help="also write the results here")
    args = ap.parse_args(argv)
    try:
        pins = load_pins(args.file)
    except (OSError, tomllib.TOMLDecodeError, PitfallError) as e:
        print(f"{args.file}: {e}", file=sys.stderr)
        return 1
    print(f"{args.file}: {len(pins)} records, all valid")
    if args.validate_only:
        return 0
    targets = [parse_target(t) for t in (args.targets or DEFAULT_TARGETS)]
    if args.pins_only:
        for t in targets:
            lines = requirement_lines(select(pins, t["version"], t["python"], TARGET_OSES[t["os"]][0]))
            print(f"{t['label']}: {' '.join(lines) or '(none)'}")
        return 0
    failed = 0
    results = []
    with ThreadPoolExecutor(max(1, args.jobs)) as ex:
        for res in ex.map(lambda t: check_target(t, pins, args.allow_sdist, args.timeout), targets):
            print_result(res)
            sys.stdout.flush()
            results.append(res)
            failed += (not res["after"]["ok"]) or bool(res["problems"])
    if args.json:
        args.json.write_text(json.dumps(results, indent=1))
    print(f"{len(targets) - failed}/{len(targets)} targets resolve with the pins")
    return 1 if failed else 0


if __name__ == "__main__":
    sys.exit(main())
