"""A failing or odd probe is a finding, never a crash: every parser and detect_machine itself, fed cut, mangled,
binary and random versions of the real captures (deterministic seeds)."""

from __future__ import annotations

import json
import random

import pytest
from detect_helpers import FIXTURES, FakeRunner, describe, make_tree

from stackresolve.detect import LocalFS, detect_machine, kernel, pci, render_text, smi
from stackresolve.detect.runner import CommandOutputTooLarge, CommandTimeout
from stackresolve.knowledge.loader import knowledge, nvidia_pci_ids

CAPTURES = sorted(p for p in FIXTURES.iterdir() if p.suffix in (".txt", ".xml"))
PARSERS = {
    "banner": smi.parse_banner,
    "csv": smi.parse_csv,
    "csv-fields": lambda t: smi.parse_csv(t, smi.CSV_FIELDS),
    "query": smi.parse_query,
    "xml": smi.parse_xml,
    "lspci": pci.parse_lspci,
    "windows": pci.parse_windows_adapters,
    "proc": kernel.parse_proc_version,
    "sys": kernel.parse_sys_version,
    "candidates": pci.model_candidates,
    "bus": smi.parse_bus_id,
}


def mangled(text: str, rng: random.Random) -> list[str]:
    """Cut at random places, lines shuffled, bytes flipped, binary noise in the middle, odd values."""
    out = [text[:rng.randrange(len(text) + 1)] for _ in range(5)]
    lines = text.splitlines()
    rng.shuffle(lines)
    out.append("\n".join(lines))
    chars = list(text)
    for _ in range(max(1, len(chars) // 20)):
        if chars:
            chars[rng.randrange(len(chars))] = chr(rng.choice([0, 0xFFFD, 0x1B, rng.randrange(32, 0x2FFF)]))
    out.append("".join(chars))
    noise = bytes(rng.randrange(256) for _ in range(200)).decode("utf-8", errors="replace")
    mid = len(text) // 2
    out.append(text[:mid] + noise + text[mid:])
    out.append(text.replace("N/A", "[Unknown Error]").replace("MiB", "").replace(":", " : : "))
    return out


@pytest.mark.parametrize("capture", CAPTURES, ids=lambda p: p.name)
def test_parsers_never_raise_on_mangled_captures(capture):
    rng = random.Random(capture.name)
    text = capture.read_text(encoding="utf-8")
    for variant in [text, "", "\x00" * 50, "|" * 500, "," * 500, "[" * 100, text * 3] + mangled(text, rng):
        for name, parse in PARSERS.items():
            parse(variant)  # returns something; must not raise


def test_parsers_on_random_text():
    rng = random.Random(1604)
    alphabet = "0123456789abcdefABCDEF:.,[]|/\\ \t\n-+=_NVIDIAGeForceRTXVersion&VEN_10DEDEV_\x00\xff"
    for _ in range(300):
        text = "".join(rng.choice(alphabet) for _ in range(rng.randrange(400)))
        for parse in PARSERS.values():
            parse(text)


def test_parsers_on_none():
    for parse in (smi.parse_banner, smi.parse_csv, smi.parse_query, smi.parse_xml, pci.parse_lspci,
                  pci.parse_windows_adapters, kernel.parse_proc_version, kernel.parse_sys_version,
                  pci.model_candidates, smi.parse_bus_id):
        parse(None)


def test_resolve_every_pci_table_entry():
    table = nvidia_pci_ids()
    models = pci.resolve([pci.PciGpu(device=d) for d in table], table, knowledge().find_gpu)
    assert len(models) == len(table)
    for m in models:
        assert m.cc is None or m.model is not None


def _garbage_responses(rng: random.Random):
    """What a broken machine answers to any command."""
    noise = bytes(rng.randrange(256) for _ in range(rng.randrange(1, 300))).decode("utf-8", errors="replace")
    captures = [p.read_text(encoding="utf-8") for p in CAPTURES]
    text = rng.choice(captures)
    return rng.choice([
        (rng.choice([-11, -9, 1, 2, 3, 4, 6, 9, 12, 14, 15, 255]), noise, noise),
        (0, noise, ""),
        (0, text[:rng.randrange(len(text) + 1)], ""),
        (rng.choice([0, 2, 9]), text, noise),
        (0, json.dumps({"probe": "nvml", "ok": True, "driver": noise, "cuda": "x", "gpus": [{"cc": ["a", None]}]}),
         ""),
        (0, json.dumps({"probe": "libcuda", "ok": False, "cuinit": noise}), ""),
        (0, '{"probe": "stackresolve-python", "python": 3, "dists": "x", "packages": [1, null]}', ""),
        CommandTimeout("x", 0.01, stdout=noise),
        CommandOutputTooLarge("x", 10, stdout=noise),
        ValueError("a runner's own bug"),
    ])


@pytest.mark.parametrize("seed", range(40))
def test_detect_machine_survives_a_broken_machine(tmp_path, seed, capfd):
    rng = random.Random(seed)
    system = rng.choice(["linux", "linux", "windows"])
    files = {"/usr/bin/nvidia-smi": "", "/usr/lib/x86_64-linux-gnu/libcuda.so.1": "",
             "/usr/local/cuda-12.4/bin/nvcc": "", "/proc/bus/pci/devices": "",
             "C:\\Windows\\System32\\nvidia-smi.exe": "", "C:\\Windows\\System32\\nvcuda.dll": "",
             "/sys/module/nvidia/version": rng.choice(["550.54.14\n", "\x00\xff", ""])}
    make_tree(tmp_path, files)

    def respond(argv, timeout):
        answer = _garbage_responses(rng)
        if isinstance(answer, BaseException):
            raise answer
        return answer

    runner = FakeRunner().on(lambda argv: True, respond)
    env = {"PATH": "/usr/bin" if system == "linux" else "C:\\Windows\\System32", "SystemRoot": "C:\\Windows",
           "STACKRESOLVE_GPU_CC": rng.choice(["", "8.6", "x"])}
    m = detect_machine(runner=runner, fs=LocalFS(tmp_path), env=env, system=system, python_exe="/opt/py/bin/python",
                       timeout_total=2.0, gpu_lookup=lambda n: knowledge().find_gpu(n), pci_table=nvidia_pci_ids)
    json.dumps(m.to_json_dict())
    render_text(m)
    assert {describe(a) for a, _ in runner.calls} <= {"child", "python", "nvcc", "lspci", "powershell", "smi-csv-cc",
                                                       "smi-csv", "smi-xml", "smi-q", "smi-banner"}
    out, err = capfd.readouterr()
    assert "Traceback" not in out + err
