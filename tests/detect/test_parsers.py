"""Every real fixture parsed; expected values were read by hand from the fixture text."""

from __future__ import annotations

import pytest
from detect_helpers import fixture_text

from stackresolve.detect import kernel, smi
from stackresolve.detect.toolkit import (cudnn_from_lib_name, parse_conda_meta_name, parse_cudnn_header,
                                         parse_nvcc, parse_version_json, parse_version_txt)


# --- banner --------------------------------------------------------------------------------------------
@pytest.mark.parametrize(
    "name, tool, driver, driver_label, cuda, cuda_raw, cuda_label, gpus",
    [
        ("smi-banner-linux-550.40.07.txt", "550.40.07", "550.40.07", "Driver Version", "12.4", "12.4",
         "CUDA Version", [(0, "NVIDIA GeForce RTX 4070", 12282, False)]),
        ("smi-banner-windows-517.48.txt", "517.48", "517.48", "Driver Version", "11.7", "11.7", "CUDA Version",
         [(0, "NVIDIA GeForce ...", 11264, True), (1, "NVIDIA GeForce ...", 11264, True)]),
        ("smi-banner-wsl2-570.124.06-driver-572.70.txt", "570.124.06", "572.70", "Driver Version", "12.8", "12.8",
         "CUDA Version", [(0, "NVIDIA GeForce RTX 5090", 32607, False)]),
        ("smi-banner-wsl2-cuda-err.txt", "545.46", "546.80", "Driver Version", None, "ERR!", "CUDA Version",
         [(0, "NVIDIA GeForce RTX 3060 ...", 6144, True)]),
        ("smi-banner-jetson-orin-540.4.0.txt", "540.4.0", "540.4.0", "Driver Version", "12.6", "12.6",
         "CUDA Version", [(0, "Orin (nvgpu)", None, False)]),
        ("smi-banner-jetson-driver-na-540.3.0.txt", "540.3.0", None, "Driver Version", "12.2", "12.2",
         "CUDA Version", [(0, "Orin (nvgpu)", None, False)]),
        ("smi-banner-r610-kmd-umd.txt", "610.43.02", "610.43.02", "KMD Version", "13.3", "13.3", "CUDA UMD Version",
         [(0, "NVIDIA B200", 183359, False), (1, "NVIDIA B200", 183359, False)]),
        ("smi-banner-legacy-340.108.txt", "340.108", "340.108", "Driver Version", None, None, None,
         [(0, "GeForce 8400M GS", 127, False)]),
        ("smi-banner-stale-tool-470-driver-580.txt", "470.256.02", "580.95.05", "Driver Version", "13.0", "13.0",
         "CUDA Version", [(0, "NVIDIA RTX PRO ...", 8151, True)]),
    ],
)
def test_banner(name, tool, driver, driver_label, cuda, cuda_raw, cuda_label, gpus):
    b = smi.parse_banner(fixture_text(name))
    assert b.tool_version == tool
    assert b.driver_version == driver
    assert b.driver_label == driver_label
    assert b.cuda_version == cuda
    assert b.cuda_raw == cuda_raw
    assert b.cuda_label == cuda_label
    assert [(g.index, g.name, g.memory_mib, g.name_truncated) for g in b.gpus] == gpus


def test_banner_jetson_driver_na_raw():
    b = smi.parse_banner(fixture_text("smi-banner-jetson-driver-na-540.3.0.txt"))
    assert b.driver_raw == "N/A" and b.driver_version is None


def test_banner_legacy_has_no_cuda_field_and_ignores_process_table():
    b = smi.parse_banner(fixture_text("smi-banner-legacy-340.108.txt"))
    assert b.cuda_label is None
    assert len(b.gpus) == 1  # the "|    0   Not Supported" process row is not a GPU


# --- CSV -----------------------------------------------------------------------------------------------
def test_csv_multi_gpu_with_header():
    rows = smi.parse_csv(fixture_text("smi-csv-multi-gpu.txt"))
    assert [(r.index, r.name, r.compute_capability, r.driver_version) for r in rows] == [
        (0, "NVIDIA TITAN V", "7.0", "570.86.15"),
        (1, "NVIDIA RTX 5880 Ada Generation", "8.9", "570.86.15"),
    ]


def test_csv_driver_version_one_line_per_gpu():
    rows = smi.parse_csv(fixture_text("smi-csv-driver-version-2-gpus.txt"), ("driver_version",))
    assert [r.driver_version for r in rows] == ["515.57", "515.57"]
    assert [r.index for r in rows] == [0, 1]  # no index column: line order


def test_csv_jetson_na_fields_become_none():
    # the PR does not show its field list; only index and name are known to come first
    fields = ("index", "name", "memory.total", "compute_cap", "driver_version", "x", "y")
    rows = smi.parse_csv(fixture_text("smi-csv-jetson-na.txt"), fields)
    assert len(rows) == 1
    r = rows[0]
    assert (r.index, r.name, r.memory_mib, r.compute_capability, r.driver_version) == (0, "Orin (nvgpu)", None,
                                                                                     None, None)


def test_csv_r470_refusal():
    text = fixture_text("smi-csv-r470-compute-cap-invalid.txt")
    assert smi.invalid_field(text) == "compute_cap"
    assert smi.parse_csv(text, smi.CSV_FIELDS) == []


def test_csv_our_query_shape_with_comma_in_name():
    # built in the shape of our query (no header line: the columns are the asked fields, in order)
    rows = smi.parse_csv("0, 00000000:07:00.0, NVIDIA A100-SXM4-40GB, 8.0, 535.104.05, 40960\n"
                         "1, 00000000:0F:00.0, Foo, Bar GPU, [N/A], 535.104.05, 8192", smi.CSV_FIELDS)
    assert rows[0].memory_mib == 40960 and rows[0].compute_capability == "8.0"
    assert rows[1].name == "Foo, Bar GPU" and rows[1].compute_capability is None


def test_error_texts():
    assert smi.NO_DEVICES_TEXT in fixture_text("smi-no-devices.txt")
    assert smi.NO_DRIVER_TEXT in fixture_text("smi-no-driver.txt")
    assert smi.MISMATCH_TEXT in fixture_text("smi-driver-library-mismatch.txt")


# --- XML -----------------------------------------------------------------------------------------------
def test_xml_535():
    x = smi.parse_xml(fixture_text("smi-q-x-535.86.05.xml"))
    assert (x.driver_version, x.cuda_version, x.gpu_names) == ("535.86.05", "12.2", ["NVIDIA GeForce RTX 4090"])


def test_xml_340_has_no_cuda_version():
    x = smi.parse_xml(fixture_text("smi-q-x-340.102.xml"))
    assert (x.driver_version, x.cuda_version, x.gpu_names) == ("340.102", None, ["GeForce 8800 GT"])


# --- kernel module files ---------------------------------------------------------------------------------
def test_proc_open_module():
    pv = kernel.parse_proc_version(fixture_text("proc-driver-nvidia-version-open-565.57.01.txt"))
    assert (pv.version, pv.flavor) == ("565.57.01", "open")


def test_proc_proprietary_module():
    pv = kernel.parse_proc_version(fixture_text("proc-driver-nvidia-version-proprietary-384.98.txt"))
    assert (pv.version, pv.flavor) == ("384.98", "proprietary")


def test_proc_and_sys_garbage():
    assert kernel.parse_proc_version("").version is None
    assert kernel.parse_proc_version("something else").version is None
    assert kernel.parse_sys_version("550.144.03\n") == "550.144.03"
    assert kernel.parse_sys_version("garbage") is None


# --- toolkit / cuDNN / TF text ------------------------------------------------------------------------------
def test_nvcc_outputs():
    assert parse_nvcc(fixture_text("nvcc-version-11.1.txt")) == ("11.1", "11.1.105")
    assert parse_nvcc(fixture_text("nvcc-version-10.1.txt")) == ("10.1", "10.1.243")
    assert parse_nvcc("bash: nvcc: command not found") is None


def test_version_json_excerpt_and_whole_document():
    assert parse_version_json(fixture_text("cuda-version-json-excerpt.txt")) == ("13.0.2", None)
    doc = '{"cuda": {"name": "CUDA SDK", "version": "11.8.0"}, "cuda_nvcc": {"name": "CUDA NVCC", "version": "11.8.89"}}'
    assert parse_version_json(doc) == ("11.8.0", "11.8.89")
    assert parse_version_json(None) == (None, None)


def test_version_txt():
    assert parse_version_txt("CUDA Version 10.0.130\n") == "10.0.130"
    assert parse_version_txt("") is None


def test_cudnn_defines():
    assert parse_cudnn_header(fixture_text("cudnn-version-h-defines-8.0.4.txt")) == "8.0.4"
    # cuDNN >= 8's cudnn.h only includes cudnn_version.h: no version there
    assert parse_cudnn_header('#include "cudnn_version.h"\n#include "cudnn_ops_infer.h"\n') is None


def test_cudnn_lib_names():
    assert cudnn_from_lib_name("libcudnn.so.8.9.7") == "8.9.7"
    assert cudnn_from_lib_name("libcudnn.so.8") == "8"
    assert cudnn_from_lib_name("cudnn64_8.dll") == "8"
    assert cudnn_from_lib_name("libcudnn_ops.so.9") is None
    assert cudnn_from_lib_name("libcudnn.so") is None


def test_conda_meta_names():
    assert parse_conda_meta_name("cuda-version-12.4-h3060b56_3.json") == ("cuda-version", "12.4", "h3060b56_3")
    assert parse_conda_meta_name("cudatoolkit-11.3.1-h2bc3f7f_2.json") == ("cudatoolkit", "11.3.1", "h2bc3f7f_2")
    assert parse_conda_meta_name("cudnn-8.9.2.26-cuda12_0.json") == ("cudnn", "8.9.2.26", "cuda12_0")


def test_tf_build_info_windows_1x_fixture():
    from stackresolve.detect._pyprobe import parse_build_info

    bi = parse_build_info(fixture_text("tf-build-info-windows-1.x.txt"))
    assert bi == {"cuda_version": "10.0", "cudnn_version": "7", "is_cuda_build": None}


def test_tf_build_info_generated_shapes():
    from stackresolve.detect._pyprobe import parse_build_info

    # shape written by tensorflow/tools/build_info/gen_build_info.py (TF >= 2.4), built here, not captured
    text = ("import collections\n\nbuild_info = collections.OrderedDict([('cpu_compiler', '/dt9/usr/bin/gcc'), "
            "('cuda_compute_capabilities', ['sm_35', 'sm_50', 'sm_60', 'sm_70', 'sm_75', 'compute_80']), "
            "('cuda_version', '11.2'), ('cudnn_version', '8'), ('is_cuda_build', True), ('is_rocm_build', False), "
            "('is_tensorrt_build', True)])\n")
    assert parse_build_info(text) == {"cuda_version": "11.2", "cudnn_version": "8", "is_cuda_build": True}
    # TF 1.x Linux: only the flag
    assert parse_build_info("is_rocm_build = False\nis_cuda_build = True\n") == {
        "cuda_version": None, "cudnn_version": None, "is_cuda_build": True}
    assert parse_build_info("build_info = {'is_cuda_build': False}")["is_cuda_build"] is False


def test_clean_helpers():
    assert smi.clean_value("[N/A]") is None
    assert smi.clean_value("[Not Supported]") is None
    assert smi.clean_version("ERR!") is None
    assert smi.cuda_from_int(12040) == "12.4"
    assert smi.cuda_from_int(11080) == "11.8"
    assert smi.cuda_from_int(0) is None
    assert smi.cuda_from_int("x") is None


# --- banners of old drivers (no CUDA field before R410) ---------------------------------------------------
@pytest.mark.parametrize(
    "name, driver, cuda, gpus",
    [
        ("smi-banner-331.62-3-gpus.txt", "331.62", None,
         [(0, "GeForce GTX 680", 4095, "0000:03:00.0"), (1, "GeForce GTX 680", 4095, "0000:04:00.0"),
          (2, "GeForce GTX 680", 4095, "0000:83:00.0")]),
        ("smi-banner-396.24-no-cuda-field.txt", "396.24", None,
         [(0, "GeForce GTX 1070", 8114, "00000000:24:00.0")]),
        ("smi-banner-410.104-tesla-k80.txt", "410.104", "10.0", [(0, "Tesla K80", 11441, "00000000:00:04.0")]),
        ("smi-banner-550.135-tesla-p4.txt", "550.135", "12.4", [(0, "Tesla P4", 8192, "00000000:86:00.0")]),
        ("smi-banner-346.46-grid-k520.txt", "346.46", None, [(0, "GRID K520", 4095, "0000:00:03.0")]),
    ],
)
def test_banner_old_drivers(name, driver, cuda, gpus):
    b = smi.parse_banner(fixture_text(name))
    assert (b.driver_version, b.cuda_version) == (driver, cuda)
    assert [(g.index, g.name, g.memory_mib, g.bus_id) for g in b.gpus] == gpus


# --- nvidia-smi -q ------------------------------------------------------------------------------------------
@pytest.mark.parametrize(
    "name, driver, cuda, attached, gpus",
    [
        ("smi-q-396.54-gtx1080.txt", "396.54", None, 1, [(0, "GeForce GTX 1080", "00000000:01:00.0")]),
        ("smi-q-418.40.04-tesla-k80.txt", "418.40.04", "10.1", 1, [(0, "Tesla K80", "000052CE:00:00.0")]),
        ("smi-q-442.92-windows.txt", "442.92", "10.2", 4, [(0, "GeForce GTX 1080 Ti", "00000000:18:00.0")]),
        ("smi-q-450.66-gtx780.txt", "450.66", "11.0", 1, [(0, "GeForce GTX 780", "00000000:01:00.0")]),
        # `-q -d TEMPERATURE`: the header and the GPU's bus id, no product name
        ("smi-q-d-temperature-304.108.txt", "304.108", None, 1, [(0, None, "0000:01:05.0")]),
    ],
)
def test_query_text(name, driver, cuda, attached, gpus):
    q = smi.parse_query(fixture_text(name))
    assert (q.driver_version, q.cuda_version, q.attached) == (driver, cuda, attached)
    assert [(g.index, g.name, g.bus_id) for g in q.gpus] == gpus


def test_query_text_memory_only_under_fb_memory_usage():
    # the captures end before "FB Memory Usage": built here in the layout of `nvidia-smi -q`
    text = ("Driver Version                            : 535.104.05\nCUDA Version                              : 12.2\n\n"
            "Attached GPUs                             : 1\nGPU 00000000:00:1E.0\n"
            "    Product Name                          : Tesla T4\n    FB Memory Usage\n"
            "        Total                             : 15360 MiB\n    BAR1 Memory Usage\n"
            "        Total                             : 256 MiB\n")
    q = smi.parse_query(text)
    assert [(g.name, g.memory_mib) for g in q.gpus] == [("Tesla T4", 15360)]


# --- CSV with [N/A] / [Not Supported] -----------------------------------------------------------------------
I3PYSTATUS_FIELDS = ("memory.total", "memory.free", "memory.used", "temperature.gpu", "fan.speed",
                     "utilization.gpu", "utilization.memory")


@pytest.mark.parametrize("name, fan", [("smi-csv-noheader-nounits-na.txt", "[N/A]"),
                                       ("smi-csv-noheader-nounits-not-supported.txt", "[Not Supported]")])
def test_csv_missing_value_spellings(name, fan):
    text = fixture_text(name)
    assert fan in text
    rows = smi.parse_csv(text, I3PYSTATUS_FIELDS)
    assert [(r.index, r.memory_mib, r.name, r.compute_capability) for r in rows] == [(0, 2004, None, None)]
    assert smi.clean_value(fan) is None


def test_csv_header_maps_columns_in_any_order():
    # the TITAN V capture's columns are in another order than ours; the header says which is which
    rows = smi.parse_csv(fixture_text("smi-csv-multi-gpu.txt"), smi.CSV_FIELDS)
    assert [(r.index, r.name, r.compute_capability) for r in rows] == [(0, "NVIDIA TITAN V", "7.0"),
                                                                       (1, "NVIDIA RTX 5880 Ada Generation", "8.9")]


def test_bus_id_spellings_compare_equal():
    assert smi.parse_bus_id("00000000:2D:00.0") == smi.parse_bus_id("0000:2d:00.0") == smi.parse_bus_id("2d:00.0")
    assert smi.parse_bus_id("000052CE:00:00.0") == (0x52CE, 0, 0, 0)
    assert smi.parse_bus_id("garbage") is None


# --- PCI: lspci and Windows ---------------------------------------------------------------------------------
@pytest.mark.parametrize(
    "name, expected",
    [
        # Intel iGPU and a PCI bridge are skipped; a 3D controller [0302] counts
        ("lspci-nn-intel-mx130-gtx970.txt", [(0x174D, "0000:02:00.0"), (0x13C2, "0000:08:00.0")]),
        # the HDMI audio functions [0403] of the same cards are not GPUs; "Subsystem:" lines are not devices
        ("lspci-nnk-2x-rtx3090.txt", [(0x2204, "0000:05:00.0"), (0x2204, "0000:0a:00.0")]),
        ("lspci-nnk-gtx1050ti-mobile.txt", [(0x1C8C, "0000:01:00.0")]),
        # no space before "(rev a1)"
        ("lspci-vnn-gtx560ti.txt", [(0x1200, "0000:01:00.0")]),
        ("lspci-nn-rtx3060.txt", [(0x2503, "0000:03:00.0")]),
    ],
)
def test_lspci(name, expected):
    from stackresolve.detect import pci

    assert [(g.device, g.bus_id) for g in pci.parse_lspci(fixture_text(name))] == expected


def test_lspci_numeric_form():
    from stackresolve.detect import pci

    # `lspci -n` prints the same ids without names: built here from the RTX 3090 capture's ids
    text = "05:00.0 0300: 10de:2204 (rev a1)\n05:00.1 0403: 10de:1aef (rev a1)\n00:02.0 0300: 8086:3e9b\n"
    assert [(g.device, g.bus_id) for g in pci.parse_lspci(text)] == [(0x2204, "0000:05:00.0")]


def test_windows_pnp_table():
    from stackresolve.detect import pci

    gpus = pci.parse_windows_adapters(fixture_text("win-pnpdevice-display-rtx5090-laptop.txt"))
    assert [(g.device, g.name, g.pci_id) for g in gpus] == [(0x2C58, "NVIDIA GeForce RTX 5090 Laptop GPU",
                                                            "10de:2c58")]


def test_windows_format_list_without_nvidia():
    from stackresolve.detect import pci

    assert pci.parse_windows_adapters(fixture_text("win-videocontroller-fl-intel-only.txt")) == []


def test_windows_csv_and_json_of_our_query():
    from stackresolve.detect import pci

    # the shapes ConvertTo-Csv / ConvertTo-Json print for our query, built from the RTX 5090 laptop capture's
    # values; a GPU without a driver shows Windows' stand-in name, which says nothing about the GPU
    pnp = "PCI\\VEN_10DE&DEV_2C58&SUBSYS_30111A58&REV_A1\\B73A356AA12DB04800"
    csv_text = ('"Name","PNPDeviceID"\r\n"Intel(R) UHD Graphics","PCI\\VEN_8086&DEV_9BC4&SUBSYS_170D1043&REV_05"\r\n'
                f'"Microsoft Basic Display Adapter","{pnp}"\r\n')
    assert [(g.device, g.name) for g in pci.parse_windows_adapters(csv_text)] == [(0x2C58, None)]
    json_text = '{"Name": "NVIDIA GeForce RTX 5090 Laptop GPU", "PNPDeviceID": "' + pnp.replace("\\", "\\\\") + '"}'
    assert [(g.device, g.name) for g in pci.parse_windows_adapters(json_text)] == [
        (0x2C58, "NVIDIA GeForce RTX 5090 Laptop GPU")]


# --- pci.ids names -> GPU table names -----------------------------------------------------------------------
@pytest.mark.parametrize(
    "pci_name, first, contains",
    [
        ("GP102 [GeForce GTX 1080 Ti]", "GeForce GTX 1080 Ti", []),
        ("TU106 [GeForce RTX 2060 Rev. A]", "GeForce RTX 2060 Rev. A", ["GeForce RTX 2060"]),
        ("GA106M [GeForce RTX 3060 Mobile / Max-Q]", "GeForce RTX 3060 Mobile / Max-Q",
         ["GeForce RTX 3060 Laptop GPU", "GeForce RTX 3060"]),
        ("G96 [GeForce 9500 GA / 9600 GT / GTS 250]", "GeForce 9500 GA / 9600 GT / GTS 250",
         ["GeForce 9600 GT", "GeForce GTS 250"]),
        ("GA102 [GeForce RTX 3080 Ti 20GB]", "GeForce RTX 3080 Ti 20GB", ["GeForce RTX 3080 Ti"]),
        ("GK208", None, []),
    ],
)
def test_model_candidates(pci_name, first, contains):
    from stackresolve.detect import pci

    got = pci.model_candidates(pci_name)
    assert (got[0] if got else None) == first
    assert set(contains) <= set(got)
