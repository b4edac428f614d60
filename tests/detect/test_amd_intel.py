"""AMD (ROCm) and Intel (XPU) detection on fake machines: KFD topology trees, /opt/rocm, /dev nodes, PCI functions
and a scripted rocm_agent_enumerator. Expected gfx targets come from AMD's tables (MI300X gfx942, RX 7900 XTX
gfx1100, RX 6700 XT gfx1031) and from the encoding ROCm's rocm_agent_enumerator applies to gfx_target_version
(ROCm/rocminfo:rocm_agent_enumerator, readFromKFD); the trees are described in tests/fixtures/detect/README.md."""

from __future__ import annotations

import sys
import time

import pytest
from detect_helpers import LINUX_ENV, FakeRunner, fixture_text, hang, make_tree

from stackresolve.detect import LocalFS, detect_machine, render_text
from stackresolve.detect.amd import gfx_target, parse_agent_enumerator, parse_properties

sys.path.insert(0, str(__import__("pathlib").Path(__file__).resolve().parents[1]))
from schema_check import assert_valid  # noqa: E402

NODES = "/sys/class/kfd/kfd/topology/nodes"
CPU_NODE = "cpu_cores_count 48\nsimd_count 0\nmem_banks_count 1\ngfx_target_version 0\nvendor_id 0\ndevice_id 0\n"


def gpu_node(version: int, device: int, simds: int = 1216, minor: int = 128) -> str:
    """A GPU agent's properties in the kernel's "name value" format (constructed; see the fixtures README)."""
    return (f"cpu_cores_count 0\nsimd_count {simds}\nmem_banks_count 1\nwave_front_size 64\n"
            f"gfx_target_version {version}\nvendor_id 4098\ndevice_id {device}\nlocation_id 256\ndomain 0\n"
            f"drm_render_minor {minor}\n")


class DeviceFS(LocalFS):
    """A fake tree whose device nodes have the permissions and groups a test gives (the real check, os.access,
    says yes to root, which the test machine may be)."""

    def __init__(self, root, denied=(), groups=None):
        super().__init__(root)
        self.denied = set(denied)
        self.groups = dict(groups or {})

    def can_open_rw(self, path):
        return self.exists(path) and path not in self.denied

    def group_name(self, path):
        return self.groups.get(path, "render" if path.startswith("/dev/") else None)


def detect(tmp_path, files, runner=None, env=None, fs=None, **kw):
    make_tree(tmp_path, files)
    kw.setdefault("python_exe", None)
    kw.setdefault("gpu_only", True)
    return detect_machine(runner=runner or FakeRunner(), fs=fs or DeviceFS(tmp_path),
                          env=LINUX_ENV if env is None else env, system=kw.pop("system", "linux"), **kw)


def codes(m):
    return [f.code for f in m.findings]


def finding(m, code):
    return next(f for f in m.findings if f.code == code)


def mi300x_tree(gpus: int = 2) -> dict:
    files = {f"{NODES}/0/properties": CPU_NODE, "/dev/kfd": "", "/opt/rocm/.info/version": "6.2.4-120\n",
             "/sys/module/amdgpu/version": "6.8.5\n"}
    for i in range(gpus):
        files[f"{NODES}/{i + 1}/properties"] = gpu_node(90402, 0x74A1, minor=128 + i)
        files[f"/dev/dri/renderD{128 + i}"] = ""
    return files


# --- the encoding ---------------------------------------------------------------------------------------------------
@pytest.mark.parametrize("version, gfx", [
    (90402, "gfx942"),  # MI300X (AMD's compatibility matrix: gfx942)
    (90010, "gfx90a"),  # MI250X: the stepping is a hex digit
    (110000, "gfx1100"),  # RX 7900 XTX
    (100300, "gfx1030"),  # RX 6800 / 6900
    (100301, "gfx1031"),  # RX 6700 XT
    (90006, "gfx906"),  # Radeon VII (rocprofv3-avail in ROCm/rocm-systems#922 prints 90006 and gfx906 together)
    (80003, "gfx803"),  # RX 580
    (120001, "gfx1201"),
])
def test_gfx_target_version_encoding(version, gfx):
    assert gfx_target(version) == gfx


@pytest.mark.parametrize("version", [0, -1, 91600, 90416, 1_000_000, 4294967295])
def test_numbers_that_are_no_gfx_target(version):
    assert gfx_target(version) is None


def test_properties_keep_decimal_values_only():
    props = parse_properties("simd_count 192\ngfx_target_version abc\nvendor_id -4098\nname gfx1100\n"
                             "device_id 0x744c\n\x1b[31m 1\nmarketing_name AMD Radeon\nlocal_mem_size 0\n")
    assert props == {"simd_count": 192, "local_mem_size": 0}


def test_real_rx7900xtx_node_properties():
    props = parse_properties(fixture_text("kfd-properties-gfx1100-rx7900xtx.txt"))
    assert (props["gfx_target_version"], props["vendor_id"], props["device_id"]) == (110000, 0x1002, 0x744C)
    assert gfx_target(props["gfx_target_version"]) == "gfx1100"


def test_agent_enumerator_output_skips_the_cpu_agent_and_noise():
    assert parse_agent_enumerator(fixture_text("rocm-agent-enumerator-mi300x-docs.txt")) == ["gfx941"]
    assert parse_agent_enumerator("gfx000\ngfx90a:sramecc+:xnack-\nInvalid HSA_OVERRIDE_GFX_VERSION value\n"
                                  "gfx1100\x1b[2J\n\ngfx1030\n") == ["gfx90a", "gfx1030"]


# --- KFD topology -----------------------------------------------------------------------------------------------------
def test_mi300x_node_with_a_cpu_agent(tmp_path):
    runner = FakeRunner()
    m = detect(tmp_path, mi300x_tree(2), runner,
               vendor_gpu_name={"1002:74a1": "AMD Instinct MI300X"}.get)
    assert [(g.index, g.gfx, g.source, g.pci_id, g.name) for g in m.amd_gpus] == [
        (0, "gfx942", "kfd-topology", "1002:74a1", "AMD Instinct MI300X"),
        (1, "gfx942", "kfd-topology", "1002:74a1", "AMD Instinct MI300X")]
    assert not any("rocm_agent_enumerator" in a[0] for a, _ in runner.calls)  # KFD answered: no command
    assert (m.rocm.version, m.rocm.path, m.rocm.source, m.rocm.amdgpu_version) == (
        "6.2.4", "/opt/rocm", "rocm-path", "6.8.5")
    assert [(d.path, d.exists, d.usable, d.group) for d in m.gpu_devices] == [
        ("/dev/kfd", True, True, "render"), ("/dev/dri/renderD128", True, True, "render"),
        ("/dev/dri/renderD129", True, True, "render")]
    assert not {"rocm-device-access", "rocm-container-devices"} & set(codes(m))
    assert m.intel_gpus == () and m.level_zero is None


def test_rx7900xtx_from_the_real_properties(tmp_path):
    m = detect(tmp_path, {f"{NODES}/0/properties": CPU_NODE,
                          f"{NODES}/1/properties": fixture_text("kfd-properties-gfx1100-rx7900xtx.txt")})
    assert [(g.gfx, g.pci_id) for g in m.amd_gpus] == [("gfx1100", "1002:744c")]


def test_rx6700xt_is_gfx1031(tmp_path):
    m = detect(tmp_path, {f"{NODES}/0/properties": CPU_NODE, f"{NODES}/1/properties": gpu_node(100301, 0x73DF, 80)})
    assert [(g.gfx, g.pci_id) for g in m.amd_gpus] == [("gfx1031", "1002:73df")]


def test_nodes_are_read_in_numeric_order(tmp_path):
    files = {f"{NODES}/0/properties": CPU_NODE}
    for n in range(1, 12):
        files[f"{NODES}/{n}/properties"] = gpu_node(110000 if n == 10 else 90402, 0x74A1)
    m = detect(tmp_path, files)
    assert [g.gfx for g in m.amd_gpus].index("gfx1100") == 9  # node 10 is the tenth GPU, not the second


# --- rocm_agent_enumerator --------------------------------------------------------------------------------------------
def test_no_kfd_but_rocm_agent_enumerator(tmp_path):
    runner = FakeRunner().on(lambda argv: argv[0].endswith("rocm_agent_enumerator"),
                             (0, fixture_text("rocm-agent-enumerator-mi300x-docs.txt"), ""))
    m = detect(tmp_path, {"/opt/rocm/bin/rocm_agent_enumerator": "", "/opt/rocm/.info/version": "6.0.2\n"}, runner)
    assert [(g.gfx, g.source, g.pci_id) for g in m.amd_gpus] == [("gfx941", "rocm_agent_enumerator", None)]
    (argv, timeout), = [c for c in runner.calls if c[0][0].endswith("rocm_agent_enumerator")]
    assert argv == ["/opt/rocm/bin/rocm_agent_enumerator"] and 0 < timeout <= 3.0
    assert next(r for r in m.probes if r.name == "kfd-topology").status == "absent"


def test_a_hanging_rocm_agent_enumerator_is_cut_off(tmp_path):
    runner = FakeRunner().on(lambda argv: argv[0].endswith("rocm_agent_enumerator"), hang)
    t0 = time.monotonic()
    m = detect(tmp_path, {"/usr/bin/rocm_agent_enumerator": ""}, runner, timeout_total=0.5)
    assert time.monotonic() - t0 < 3
    assert m.amd_gpus == ()
    assert next(r for r in m.probes if r.name == "rocm_agent_enumerator").status == "timeout"
    assert "probe-timeout" in codes(m)


def test_no_amd_anything_runs_nothing(tmp_path):
    runner = FakeRunner()
    m = detect(tmp_path, {"/etc/os-release": "ID=ubuntu\n"}, runner)
    assert (m.amd_gpus, m.rocm, m.gpu_devices, m.intel_gpus) == ((), None, (), ())
    assert runner.calls == []


# --- ROCm and amdgpu ----------------------------------------------------------------------------------------------------
def test_rocm_path_wins_and_versioned_folders_newest_first(tmp_path):
    m = detect(tmp_path, {"/opt/rocm-6.1.3/.info/version": "6.1.3-122\n", "/opt/rocm-6.10.0/.info/version": "6.10.0\n",
                          "/opt/rocm-6.3.0/.info/version-dev": "6.3.0-39\n"})
    assert (m.rocm.version, m.rocm.path) == ("6.10.0", "/opt/rocm-6.10.0")
    m = detect(tmp_path, {"/work/rocm/.info/version": "5.7.1\n"}, env={**LINUX_ENV, "ROCM_PATH": "/work/rocm/"})
    assert (m.rocm.version, m.rocm.path, m.rocm.source) == ("5.7.1", "/work/rocm", "env:ROCM_PATH")


def test_in_tree_amdgpu_only(tmp_path):
    m = detect(tmp_path, {"/sys/module/amdgpu/parameters": None})
    assert (m.rocm.version, m.rocm.path, m.rocm.amdgpu_version) == (None, None, None)
    assert "ROCm" in render_text(m) and "not installed" in render_text(m)


# --- device access --------------------------------------------------------------------------------------------------------
def test_unreadable_dev_kfd(tmp_path):
    fs = DeviceFS(tmp_path, denied={"/dev/kfd", "/dev/dri/renderD128", "/dev/dri/renderD129"},
                  groups={"/dev/kfd": "render", "/dev/dri/renderD128": "render", "/dev/dri/renderD129": "render"})
    m = detect(tmp_path, mi300x_tree(2), fs=fs)
    assert [(d.path, d.usable) for d in m.gpu_devices] == [
        ("/dev/kfd", False), ("/dev/dri/renderD128", False), ("/dev/dri/renderD129", False)]
    f = finding(m, "rocm-device-access")
    assert f.severity == "error"  # ROCm is installed: every ROCm program fails
    assert "/dev/kfd (group render)" in f.message
    assert "sudo usermod -a -G render,video $LOGNAME" in f.fix
    text = render_text(m)
    assert "/dev/kfd not usable by this user (group render)" in text


def test_usable_kfd_with_one_usable_render_node_is_fine(tmp_path):
    fs = DeviceFS(tmp_path, denied={"/dev/dri/renderD129"})
    m = detect(tmp_path, mi300x_tree(2), fs=fs)
    assert "rocm-device-access" not in codes(m)


def test_amd_integrated_gpu_without_rocm_is_only_a_warning(tmp_path):
    fs = DeviceFS(tmp_path, denied={"/dev/kfd", "/dev/dri/renderD128"})
    m = detect(tmp_path, {f"{NODES}/0/properties": CPU_NODE, f"{NODES}/1/properties": gpu_node(90012, 0x1636, 14),
                          "/dev/kfd": "", "/dev/dri/renderD128": ""}, fs=fs)
    assert [g.gfx for g in m.amd_gpus] == ["gfx90c"]
    assert finding(m, "rocm-device-access").severity == "warning"


def test_container_without_dev_kfd(tmp_path):
    files = {**mi300x_tree(1), "/.dockerenv": ""}
    del files["/dev/kfd"], files["/dev/dri/renderD128"]
    m = detect(tmp_path, files)
    assert m.os.container
    assert [g.gfx for g in m.amd_gpus] == ["gfx942"]  # /sys shows the host's GPUs
    assert [(d.path, d.exists) for d in m.gpu_devices] == [("/dev/kfd", False)]
    f = finding(m, "rocm-container-devices")
    assert "/dev/kfd" in f.message and "--device=/dev/kfd --device=/dev/dri" in f.fix and "--group-add" in f.fix
    assert "rocm-device-access" not in codes(m)


def test_container_given_the_devices_has_no_finding(tmp_path):
    m = detect(tmp_path, {**mi300x_tree(1), "/.dockerenv": ""})
    assert "rocm-container-devices" not in codes(m)


# --- Intel ------------------------------------------------------------------------------------------------------------------
PCI = "/sys/bus/pci/devices"
A770 = {f"{PCI}/0000:03:00.0/vendor": "0x8086\n", f"{PCI}/0000:03:00.0/device": "0x56a0\n",
        f"{PCI}/0000:03:00.0/class": "0x030000\n",
        # the host bridge and an NVIDIA GPU: not Intel GPUs
        f"{PCI}/0000:00:00.0/vendor": "0x8086\n", f"{PCI}/0000:00:00.0/device": "0x4660\n",
        f"{PCI}/0000:00:00.0/class": "0x060000\n",
        f"{PCI}/0000:01:00.0/vendor": "0x10de\n", f"{PCI}/0000:01:00.0/device": "0x2684\n",
        f"{PCI}/0000:01:00.0/class": "0x030000\n"}


def with_driver(name: str) -> dict:
    return {f"/sys/bus/pci/drivers/{name}": None, f"{PCI}/0000:03:00.0/driver": f"->/sys/bus/pci/drivers/{name}"}


def test_arc_a770_with_i915_and_level_zero(tmp_path):
    m = detect(tmp_path, {**A770, **with_driver("i915"), "/usr/lib/x86_64-linux-gnu/libze_loader.so.1": "",
                          "/dev/dri/renderD128": ""}, vendor_gpu_name={"8086:56a0": "Intel Arc A770"}.get)
    assert [(g.index, g.pci_id, g.kernel_driver, g.bus_id, g.name, g.source) for g in m.intel_gpus] == [
        (0, "8086:56a0", "i915", "0000:03:00.0", "Intel Arc A770", "sysfs-pci")]
    assert m.level_zero == "/usr/lib/x86_64-linux-gnu/libze_loader.so.1"
    assert "xpu-driver-missing" not in codes(m)
    assert [d.path for d in m.gpu_devices] == ["/dev/dri/renderD128"]  # no /dev/kfd row: no AMD signal
    text = render_text(m)
    assert "Intel Arc A770, PCI 8086:56a0, driver i915, bus 0000:03:00.0" in text
    assert "Level Zero  /usr/lib/x86_64-linux-gnu/libze_loader.so.1" in text


def test_level_zero_from_the_ld_so_cache(tmp_path):
    cache = (b"glibc-ld.so.cache1.1\x00\x00libze_loader.so.1\x00/usr/lib64/libze_loader.so.1\x00"
             b"libc.so.6\x00/usr/lib64/libc.so.6\x00")
    m = detect(tmp_path, {**A770, **with_driver("xe"), "/etc/ld.so.cache": cache})
    assert m.intel_gpus[0].kernel_driver == "xe"
    assert m.level_zero == "/usr/lib64/libze_loader.so.1"


def test_arc_a770_without_a_driver(tmp_path):
    m = detect(tmp_path, dict(A770))
    assert [(g.pci_id, g.kernel_driver) for g in m.intel_gpus] == [("8086:56a0", None)]
    f = finding(m, "xpu-driver-missing")
    assert f.severity == "warning" and "no kernel driver bound" in f.message and "i915 or xe" in f.fix
    assert "no driver bound" in render_text(m)


def test_arc_a770_with_i915_but_no_level_zero(tmp_path):
    m = detect(tmp_path, {**A770, **with_driver("i915")})
    f = finding(m, "xpu-driver-missing")
    assert f.severity == "info" and "libze_loader.so.1" in f.message
    assert "loader not found" in render_text(m)


def test_arc_bound_to_vfio_is_not_a_compute_driver(tmp_path):
    m = detect(tmp_path, {**A770, **with_driver("vfio-pci")})
    assert m.intel_gpus[0].kernel_driver == "vfio-pci"
    assert "bound to vfio-pci" in finding(m, "xpu-driver-missing").message


# --- hostile contents: nothing reaches the terminal raw ----------------------------------------------------------------------
def test_hostile_files_and_names(tmp_path):
    huge = "x" * (2 << 20) + "\ngfx_target_version 90402\nsimd_count 4\n"  # past the read limit: not a GPU
    files = {f"{NODES}/0/properties": CPU_NODE, f"{NODES}/1/properties": huge,
             f"{NODES}/2/properties": "simd_count 4\ngfx_target_version 9\x1b[31m0402\n",
             f"{NODES}/3/properties": "simd_count 4\ngfx_target_version 99999999999999999999999\n",
             f"{NODES}/4/properties": gpu_node(110000, 0x744C),
             f"{NODES}/evil\x1b]0;x\x07/properties": gpu_node(90402, 0x74A1),
             "/opt/rocm/.info/version": "\x1b]0;pwned\x07 6.2.4\n",
             "/sys/module/amdgpu/version": "6.8\x1b[2J\n",
             "/dev/kfd": "", "/dev/dri/renderD128": "",
             **A770, "/sys/bus/pci/drivers/i9\x1b[7m15": None,
             f"{PCI}/0000:03:00.0/driver": "->/sys/bus/pci/drivers/i9\x1b[7m15"}
    fs = DeviceFS(tmp_path, groups={"/dev/kfd": "ren\x1bder"})
    m = detect(tmp_path, files, fs=fs, env={**LINUX_ENV, "ROCM_PATH": "/opt/rocm\n\x1b[31m"},
               vendor_gpu_name=lambda pci: "MI\x1b[31m300X\n" if pci.startswith("1002") else 1 / 0)
    assert [(g.gfx, g.name) for g in m.amd_gpus] == [("gfx1100", None)]
    assert (m.rocm.version, m.rocm.path, m.rocm.amdgpu_version) == (None, "/opt/rocm", None)
    assert m.gpu_devices[0].group is None
    assert [(g.kernel_driver, g.name) for g in m.intel_gpus] == [(None, None)]
    text = render_text(m)
    bad = [line for line in text.splitlines() if not line.isprintable()]
    assert not bad, bad
    assert_valid(m.to_json_dict())


def test_huge_rocm_agent_enumerator_output(tmp_path):
    out = "gfx000\n" + "gfx90a\n" * 100_000
    runner = FakeRunner().on(lambda argv: argv[0].endswith("rocm_agent_enumerator"), (0, out, ""))
    m = detect(tmp_path, {"/usr/bin/rocm_agent_enumerator": ""}, runner)
    assert len(m.amd_gpus) <= 256


# --- where it runs, and the document -------------------------------------------------------------------------------------------
def test_not_probed_on_wsl_or_windows(tmp_path):
    m = detect(tmp_path, {**mi300x_tree(1), "/proc/version": "Linux version 5.15.146.1-microsoft-standard-WSL2\n"},
               env={**LINUX_ENV, "WSL_DISTRO_NAME": "Ubuntu"})
    assert m.os.wsl and m.amd_gpus == () and m.rocm is None
    m = detect(tmp_path, mi300x_tree(1), system="windows", env={"PATH": "C:\\Windows"})
    assert m.amd_gpus == () and m.gpu_devices == ()


def test_the_document_and_the_text(tmp_path):
    fs = DeviceFS(tmp_path, denied={"/dev/kfd"})
    m = detect(tmp_path, {**mi300x_tree(1), **A770, **with_driver("i915")}, fs=fs,
               env={**LINUX_ENV, "HSA_OVERRIDE_GFX_VERSION": "11.0.0", "ROCM_PATH": "/opt/rocm"})
    doc = m.to_json_dict()
    assert_valid(doc)
    assert doc["amd_gpus"] == [{"index": 0, "gfx": "gfx942", "source": "kfd-topology", "name": None,
                                "pci_id": "1002:74a1"}]
    assert doc["rocm"] == {"version": "6.2.4", "path": "/opt/rocm", "source": "env:ROCM_PATH",
                           "amdgpu_version": "6.8.5"}
    assert doc["gpu_devices"][0] == {"path": "/dev/kfd", "exists": True, "usable": False, "group": "render"}
    assert doc["intel_gpus"][0]["kernel_driver"] == "i915" and doc["level_zero"] is None
    assert doc["env"]["HSA_OVERRIDE_GFX_VERSION"] == "11.0.0"
    text = render_text(m)
    assert "AMD GPU 0   gfx942, PCI 1002:74a1  [kfd-topology]" in text
    assert "ROCm        6.2.4 at /opt/rocm; amdgpu 6.8.5 (DKMS)  [env:ROCM_PATH]" in text
    assert "Devices     /dev/kfd not usable by this user (group render)" in text


def test_full_detection_keeps_the_fields(tmp_path):
    m = detect(tmp_path, mi300x_tree(1), gpu_only=False)
    assert [g.gfx for g in m.amd_gpus] == ["gfx942"] and m.rocm is not None and m.gpu_devices
    # the machine's GPU is the MI300X: no hint to name an NVIDIA GPU beside it
    assert "no-nvidia-gpu" not in codes(m)


def test_cli_names_amd_and_intel_gpus_from_the_knowledge_base(monkeypatch):
    """The CLI's look-up asks the knowledge base's AMD and Intel tables by PCI id (amd.toml's MI300X 74a1, intel.toml's
    Arc A770 56a0, from pci.ids); an unknown id, another vendor, or tables that cannot be read leave the GPU unnamed."""
    import importlib

    from stackresolve.knowledge import loader
    from stackresolve.knowledge.loader import KnowledgeError

    app = importlib.import_module("stackresolve.cli.app")  # the module (stackresolve.cli.app is also a command)
    assert app.vendor_gpu("1002:74a1") == ("AMD Instinct MI300X", "gfx942")
    assert app.vendor_gpu_name("8086:56a0") == "Intel Arc A770"
    assert app.vendor_gpu_name("1002:ffff") is None and app.vendor_gpu_name("10de:2204") is None

    def unreadable(use_snapshot=True):
        raise KnowledgeError("amd.toml: cannot read the knowledge base")

    monkeypatch.setattr(loader, "accelerator_knowledge", unreadable)
    assert app.vendor_gpu_name("1002:74a1") is None
