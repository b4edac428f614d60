"""Compute capability from the GPU table when no probe reports it, and GPUs found on the PCI bus (no driver).

The look-ups are the knowledge base's own (gpus.toml, pci_ids.toml), passed in the way the CLI passes them.
Expected compute capabilities are NVIDIA's (CUDA GPU list, developer.nvidia.com/cuda-gpus and the legacy list);
expected names are what the captured output or pci.ids says.
"""

from __future__ import annotations

import pytest
from detect_helpers import FakeRunner, fixture_text, is_, make_tree, smi_csv

from stackresolve.detect import LocalFS, detect_machine, render_text
from stackresolve.knowledge.loader import knowledge, nvidia_pci_ids

SMI = {"/usr/bin/nvidia-smi": ""}
ENV = {"PATH": "/usr/bin"}


def gpu_lookup(name):
    return knowledge().find_gpu(name)


def detect(tmp_path, files, runner, env=None, system="linux", **kw):
    make_tree(tmp_path, files)
    kw.setdefault("gpu_lookup", gpu_lookup)
    kw.setdefault("pci_table", nvidia_pci_ids)
    return detect_machine(runner=runner, fs=LocalFS(tmp_path), env=ENV if env is None else env, system=system,
                          python_exe=None, gpu_only=True, **kw)


def codes(m):
    return [f.code for f in m.findings]


def sysfs_device(bus: str, vendor: str, device: str, cls: str) -> dict:
    """A /sys/bus/pci/devices entry as the kernel writes it ("0x10de\\n"), built here."""
    base = f"/sys/bus/pci/devices/{bus}/"
    return {base + "vendor": vendor + "\n", base + "device": device + "\n", base + "class": cls + "\n"}


def banner_only(fixture_name):
    return (FakeRunner()
            .on(is_("smi-csv-cc"), (9, "", "Unknown Error"))
            .on(is_("smi-xml"), (9, "", "Unknown Error"))
            .on(is_("smi-q"), (9, "", "Unknown Error"))
            .on(is_("smi-banner"), (0, fixture_text(fixture_name), "")))


# --- banner-only captures: the GPU table gives the compute capability ------------------------------------------
@pytest.mark.parametrize(
    "fixture, expected",
    [
        ("smi-banner-linux-550.40.07.txt", [("NVIDIA GeForce RTX 4070", "8.9")]),
        ("smi-banner-wsl2-570.124.06-driver-572.70.txt", [("NVIDIA GeForce RTX 5090", "12.0")]),
        ("smi-banner-jetson-orin-540.4.0.txt", [("Orin (nvgpu)", "8.7")]),
        ("smi-banner-jetson-driver-na-540.3.0.txt", [("Orin (nvgpu)", "8.7")]),
        ("smi-banner-r610-kmd-umd.txt", [("NVIDIA B200", "10.0"), ("NVIDIA B200", "10.0")]),
        ("smi-banner-331.62-3-gpus.txt", [("GeForce GTX 680", "3.0")] * 3),
        ("smi-banner-396.24-no-cuda-field.txt", [("GeForce GTX 1070", "6.1")]),
        ("smi-banner-410.104-tesla-k80.txt", [("Tesla K80", "3.7")]),
        ("smi-banner-550.135-tesla-p4.txt", [("Tesla P4", "6.1")]),
        # TensorFlow's own log for this board: "GRID K520 ... with Cuda compute capability 3.0" (tensorflow#112)
        ("smi-banner-346.46-grid-k520.txt", [("GRID K520", "3.0")]),
    ],
)
def test_banner_names_give_the_compute_capability(tmp_path, fixture, expected):
    m = detect(tmp_path, SMI, banner_only(fixture))
    assert [(g.name, g.compute_capability) for g in m.gpus] == expected
    assert {g.compute_capability_source for g in m.gpus} == {"nvidia-smi-banner + gpus.toml"}
    assert "compute-capability-unknown" not in codes(m)


@pytest.mark.parametrize(
    "fixture, name, why",
    [
        # NVIDIA's tables list the GeForce 8400M GS (1.1) among GPUs no CUDA toolkit this tool plans for supports
        ("smi-banner-legacy-340.108.txt", "GeForce 8400M GS", "no model of that name"),
        ("smi-banner-stale-tool-470-driver-580.txt", "NVIDIA RTX PRO ...", "shortened name"),
    ],
)
def test_banner_names_the_table_does_not_know(tmp_path, fixture, name, why):
    m = detect(tmp_path, SMI, banner_only(fixture))
    assert [(g.name, g.compute_capability) for g in m.gpus] == [(name, None)]
    f = next(f for f in m.findings if f.code == "compute-capability-unknown")
    assert why in f.message


def test_without_lookups_nothing_is_looked_up(tmp_path):
    m = detect(tmp_path, SMI, banner_only("smi-banner-396.24-no-cuda-field.txt"), gpu_lookup=None, pci_table=None)
    assert m.gpus[0].compute_capability is None and "compute-capability-unknown" in codes(m)


def test_lookup_that_raises_is_not_a_crash(tmp_path):
    def broken(name):
        raise RuntimeError("knowledge base unreadable")

    m = detect(tmp_path, SMI, banner_only("smi-banner-396.24-no-cuda-field.txt"), gpu_lookup=broken)
    assert m.gpus[0].compute_capability is None


# --- `nvidia-smi -q` as the step before the banner --------------------------------------------------------------
@pytest.mark.parametrize(
    "fixture, driver, cuda, gpus",
    [
        ("smi-q-396.54-gtx1080.txt", "396.54", None, [("GeForce GTX 1080", "6.1", "00000000:01:00.0")]),
        ("smi-q-418.40.04-tesla-k80.txt", "418.40.04", "10.1", [("Tesla K80", "3.7", "000052CE:00:00.0")]),
        ("smi-q-450.66-gtx780.txt", "450.66", "11.0", [("GeForce GTX 780", "3.5", "00000000:01:00.0")]),
    ],
)
def test_query_text_when_csv_and_xml_fail(tmp_path, fixture, driver, cuda, gpus):
    runner = (FakeRunner()
              .on(is_("smi-csv-cc"), (9, "", "Unknown Error"))
              .on(is_("smi-xml"), (9, "", "Unknown Error"))
              .on(is_("smi-q"), (0, fixture_text(fixture), "")))
    m = detect(tmp_path, SMI, runner)
    assert runner.names() == ["smi-csv-cc", "smi-xml", "smi-q"]  # -q answered everything: no banner
    assert (m.driver.version, m.driver.source, m.driver.cuda_max) == (driver, "nvidia-smi-q", cuda)
    assert [(g.name, g.compute_capability, g.bus_id) for g in m.gpus] == gpus
    assert m.gpus[0].compute_capability_source == "nvidia-smi-q + gpus.toml"


def test_query_text_on_windows(tmp_path):
    runner = (FakeRunner()
              .on(is_("smi-csv-cc"), (9, "", "Unknown Error"))
              .on(is_("smi-xml"), (9, "", "Unknown Error"))
              .on(is_("smi-q"), (0, fixture_text("smi-q-442.92-windows.txt"), "")))
    m = detect(tmp_path, {"C:\\Windows\\System32\\nvidia-smi.exe": ""}, runner, system="windows",
               env={"PATH": "C:\\Windows\\System32", "SystemRoot": "C:\\Windows"})
    assert (m.driver.version, m.driver.cuda_max) == ("442.92", "10.2")
    assert [(g.name, g.compute_capability) for g in m.gpus] == [("GeForce GTX 1080 Ti", "6.1")]
    assert "powershell" not in runner.names()  # GPUs were found: no PCI probe on Windows


def test_r470_name_gives_the_compute_capability(tmp_path):
    runner = (FakeRunner()
              .on(is_("smi-csv-cc"), (2, fixture_text("smi-csv-r470-compute-cap-invalid.txt"), ""))
              .on(is_("smi-csv"), (0, smi_csv("0, 00000000:00:1E.0, Tesla V100-SXM2-16GB, 470.82.01, 16160", cc=False),
                                   ""))
              .on(is_("smi-xml"), (0, "<nvidia_smi_log><driver_version>470.82.01</driver_version>"
                                      "<cuda_version>11.4</cuda_version></nvidia_smi_log>", "")))
    m = detect(tmp_path, SMI, runner)
    g = m.gpus[0]
    assert (g.compute_capability, g.compute_capability_source, g.model) == ("7.0", "nvidia-smi + gpus.toml",
                                                                            "Tesla V100 SXM2 16GB")
    assert "compute-cap-field-unsupported" in codes(m) and "compute-capability-unknown" not in codes(m)


def test_jetson_csv_with_na_fields(tmp_path):
    # the vllm-cli capture's line; its field list is not shown in the PR, so it is read as index, name, ...
    line = fixture_text("smi-csv-jetson-na.txt").strip()
    assert line.startswith("0, Orin (nvgpu), [N/A]")
    fields = "index, name, compute_cap, driver_version, memory.total [MiB], pci.bus_id, x"
    runner = FakeRunner().on(is_("smi-csv-cc"), (0, fields + "\n" + line + "\n", ""))
    m = detect(tmp_path, SMI, runner)
    assert [(g.name, g.compute_capability, g.memory_mib) for g in m.gpus] == [("Orin (nvgpu)", "8.7", None)]


# --- the PCI bus: no driver installed --------------------------------------------------------------------------
def test_linux_without_driver_finds_gpus_in_sysfs(tmp_path):
    # the two RTX 3090 of the club-3090 lspci capture (ids, classes and bus addresses from it), as sysfs entries
    files = {**sysfs_device("0000:00:02.0", "0x8086", "0x3e9b", "0x030000"),
             **sysfs_device("0000:05:00.0", "0x10de", "0x2204", "0x030000"),
             **sysfs_device("0000:05:00.1", "0x10de", "0x1aef", "0x040300"),
             **sysfs_device("0000:0a:00.0", "0x10de", "0x2204", "0x030000"),
             **sysfs_device("0000:0a:00.1", "0x10de", "0x1aef", "0x040300")}
    runner = FakeRunner()
    m = detect(tmp_path, files, runner)
    assert runner.calls == []  # no driver library, no nvidia-smi: nothing to run, sysfs is read
    assert [(g.index, g.name, g.compute_capability, g.pci_id, g.bus_id, g.source) for g in m.gpus] == [
        (0, "GeForce RTX 3090", "8.6", "10de:2204", "0000:05:00.0", "pci-sysfs"),
        (1, "GeForce RTX 3090", "8.6", "10de:2204", "0000:0a:00.0", "pci-sysfs")]
    assert m.gpus[0].compute_capability_source == "pci-sysfs + gpus.toml"
    assert m.driver is None
    f = next(f for f in m.findings if f.code == "nvidia-driver-missing")
    assert f.severity == "warning" and "GeForce RTX 3090 (10de:2204)" in f.message
    assert "no-nvidia-gpu" not in codes(m)
    assert "PCI 10de:2204" in render_text(m)
    assert m.to_json_dict()["gpus"][0]["pci_id"] == "10de:2204"


def test_linux_lspci_when_sysfs_cannot_be_read(tmp_path):
    runner = FakeRunner().on(is_("lspci"), (0, fixture_text("lspci-nn-intel-mx130-gtx970.txt"), ""))
    m = detect(tmp_path, {"/proc/bus/pci/devices": ""}, runner)
    assert runner.calls[0][0] == ["lspci", "-n"]
    # the MX130 (GM108M) is not in NVIDIA's CUDA GPU list, so not in gpus.toml: named, compute capability unknown
    assert [(g.name, g.compute_capability, g.bus_id) for g in m.gpus] == [
        ("GeForce MX130", None, "0000:02:00.0"), ("GeForce GTX 970", "5.2", "0000:08:00.0")]


def test_pci_name_of_several_chip_generations_gives_no_compute_capability(tmp_path):
    # 10de:0fc9 is "GK107 [GeForce GT 730]"; pci.ids also gives "GeForce GT 730" to GF108 and GK208B chips
    files = sysfs_device("0000:01:00.0", "0x10de", "0x0fc9", "0x030000")
    m = detect(tmp_path, files, FakeRunner())
    assert [(g.name, g.compute_capability, g.model) for g in m.gpus] == [("GeForce GT 730", None, "GeForce GT 730")]
    f = next(f for f in m.findings if f.code == "compute-capability-unknown")
    assert "several generations" in f.message


def test_mobile_part_maps_to_the_laptop_model(tmp_path):
    # 10de:1c8c, the Dell XPS GPU of the astra-monitor capture: "GP107M [GeForce GTX 1050 Ti Mobile]"
    files = sysfs_device("0000:01:00.0", "0x10de", "0x1c8c", "0x030200")
    m = detect(tmp_path, files, FakeRunner())
    assert [(g.name, g.compute_capability, g.model) for g in m.gpus] == [
        ("GeForce GTX 1050 Ti Mobile", "6.1", "GeForce GTX 1050 Ti")]


def test_pci_bus_id_fills_a_gpu_nvidia_smi_could_not_name(tmp_path):
    # `nvidia-smi -q -d TEMPERATURE` (304.108 capture) gives the bus id but no name; sysfs at that address is built
    # here with a GTX 1080 Ti's id (10de:1b06, "GP102 [GeForce GTX 1080 Ti]")
    runner = (FakeRunner()
              .on(is_("smi-csv-cc"), (9, "", "Unknown Error"))
              .on(is_("smi-xml"), (9, "", "Unknown Error"))
              .on(is_("smi-q"), (0, fixture_text("smi-q-d-temperature-304.108.txt"), ""))
              .on(is_("smi-banner"), (9, "", "Unknown Error")))
    m = detect(tmp_path, {**SMI, **sysfs_device("0000:01:05.0", "0x10de", "0x1b06", "0x030000")}, runner)
    assert [(g.name, g.compute_capability, g.pci_id, g.bus_id) for g in m.gpus] == [
        ("GeForce GTX 1080 Ti", "6.1", "10de:1b06", "0000:01:05.0")]
    assert m.gpus[0].compute_capability_source == "pci-sysfs + gpus.toml"
    assert "nvidia-driver-missing" not in codes(m)  # a driver answered


def test_windows_without_driver_asks_powershell(tmp_path):
    # ConvertTo-Csv output of our query, built from the RTX 5090 laptop capture's values (Get-PnpDevice)
    csv_text = ('"Name","PNPDeviceID"\r\n"Microsoft Basic Display Adapter",'
                '"PCI\\VEN_10DE&DEV_2C58&SUBSYS_30111A58&REV_A1\\B73A356AA12DB04800"\r\n')
    runner = FakeRunner().on(is_("powershell"), (0, csv_text, ""))
    m = detect(tmp_path, {}, runner, system="windows", env={"PATH": "C:\\Windows\\System32", "SystemRoot": "C:\\Windows"})
    argv, timeout = runner.calls[0]
    assert argv[0] == "powershell.exe" and "Win32_VideoController" in argv[-1] and timeout <= 3.0
    assert [(g.name, g.compute_capability, g.model, g.pci_id) for g in m.gpus] == [
        ("GeForce RTX 5090 Max-Q / Mobile", "12.0", "GeForce RTX 5090 Laptop GPU", "10de:2c58")]
    assert "nvidia-driver-missing" in codes(m)


def test_pci_table_that_raises_leaves_the_gpu_unnamed(tmp_path):
    def broken():
        raise ValueError("pci_ids.toml: not valid TOML")

    files = sysfs_device("0000:01:00.0", "0x10de", "0x2204", "0x030000")
    m = detect(tmp_path, files, FakeRunner(), pci_table=broken)
    assert [(g.name, g.pci_id, g.compute_capability) for g in m.gpus] == [(None, "10de:2204", None)]
    assert any(p.name == "pci table" and p.status == "failed" for p in m.probes)


def test_no_nvidia_device_on_the_bus(tmp_path):
    files = sysfs_device("0000:00:02.0", "0x8086", "0x3e9b", "0x030000")
    m = detect(tmp_path, files, FakeRunner())
    assert m.gpus == () and "no-nvidia-gpu" in codes(m) and "nvidia-driver-missing" not in codes(m)


def test_wsl_does_not_read_the_pci_bus(tmp_path):
    files = {"/proc/version": "Linux version 5.15.167.4-microsoft-standard-WSL2\n",
             **sysfs_device("0000:05:00.0", "0x10de", "0x2204", "0x030000")}
    m = detect(tmp_path, files, FakeRunner())
    assert m.gpus == () and not any(p.name.startswith("pci") for p in m.probes)


def test_pci_table_file():
    table = nvidia_pci_ids()
    # entries read in pci.ids 2026.08.22 (the NVIDIA section)
    assert table[0x1B06] == "GP102 [GeForce GTX 1080 Ti]"
    assert table[0x2204] == "GA102 [GeForce RTX 3090]"
    assert 0x1AEF not in table  # "GA102 High Definition Audio Controller": not a GPU, not kept
    assert all(name.endswith("]") for name in table.values())
