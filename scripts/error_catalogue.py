"""Maintainer tool: draft constraints/error_catalogue.toml from the libraries' own headers.

Every status enum the catalogue covers is read whole from the header that defines it (names, numbers and the
header's own description of each value); the texts the libraries print for a status come from their primary
source where one holds them (NCCL's ncclGetErrorString in src/init.cc); cuDNN, cuBLAS, cuFFT, cuSOLVER and
cuSPARSE are printed by the frameworks under their enum names. What each status means for a user (category,
causes, fix) is the curated part: CURATED below, reviewed by hand; a status without a curated entry keeps the
header's description and its library's general advice.

    python scripts/error_catalogue.py --cuda-include DIR --nccl-source DIR > constraints/error_catalogue.toml

DIR: a CUDA toolkit's include folder (driver_types.h, cuda.h, nvml.h, cudnn_graph.h, cublas_api.h, cufft.h,
cusolver_common.h, cusparse.h) and an NCCL source tree (src/nccl.h.in, src/init.cc, makefiles/version.mk).
The output is plain TOML (tomli_w); nothing here runs at explain time.
"""

from __future__ import annotations

import argparse
import re
import sys
from pathlib import Path

# (library, enum, header, how the enum's body is found, where its values are named)
ENUMS = (
    ("cuda-runtime", "cudaError_t", "driver_types.h", r"enum\s+__device_builtin__\s+cudaError\s*\{(.*?)\};"),
    ("cuda-driver", "CUresult", "cuda.h", r"typedef\s+enum\s+cudaError_enum\s*\{(.*?)\}\s*CUresult;"),
    ("nvml", "nvmlReturn_t", "nvml.h", r"typedef\s+enum\s+nvmlReturn_enum\s*\{(.*?)\}\s*nvmlReturn_t;"),
    ("cudnn", "cudnnStatus_t", "cudnn_graph.h", r"typedef\s+enum\s*\{((?:(?!\}).)*?CUDNN_STATUS_SUCCESS.*?)\}\s*cudnnStatus_t;"),
    ("cublas", "cublasStatus_t", "cublas_api.h", r"typedef\s+enum\s*\{((?:(?!\}).)*?CUBLAS_STATUS_SUCCESS.*?)\}\s*cublasStatus_t;"),
    ("cufft", "cufftResult", "cufft.h", r"typedef\s+enum\s+cufftResult_t\s*\{(.*?)\}\s*cufftResult;"),
    ("cusolver", "cusolverStatus_t", "cusolver_common.h", r"typedef\s+enum\s*\{((?:(?!\}).)*?CUSOLVER_STATUS_SUCCESS.*?)\}\s*cusolverStatus_t;"),
    ("cusparse", "cusparseStatus_t", "cusparse.h", r"typedef\s+enum\s*\{((?:(?!\}).)*?CUSPARSE_STATUS_SUCCESS.*?)\}\s*cusparseStatus_t;"),
)
ENTRY = re.compile(r"(?P<doc>(?:/\*\*.*?\*/\s*)?)(?P<name>[A-Za-z_][A-Za-z0-9_]*)\s*(?:CUDNN_DEPRECATED_ENUM\s*)?=\s*"
                   r"(?P<value>[^,/}\n]*[^,/}\s])\s*(?P<trail>(?:/\*.*?\*/)?)\s*,?[ \t]*(?P<after>(?://[^\n]*)?)", re.S)


def _clean_doc(text: str) -> str:
    text = re.sub(r"/\*\*|\*/|//!<|//", " ", text)
    text = re.sub(r"^\s*\*", " ", text, flags=re.M)
    text = re.sub(r"\\deprecated", "Deprecated:", text)
    text = re.sub(r"::(\w+)", r"\1", text)
    text = re.sub(r"\\(?:p|ref|e|c)\s+", "", text)
    return " ".join(text.split())


def parse_enum(body: str) -> list[tuple[str, int, str]]:
    """(name, number, description) of each value, in the header's order."""
    body = re.sub(r"//\s*cppcheck[^\n]*", "", body)
    out: list[tuple[str, int, str]] = []
    numbers: dict[str, int] = {}
    for m in ENTRY.finditer(body):
        name, raw = m.group("name"), " ".join(m.group("value").split())
        raw = re.sub(r"/\*.*?\*/", "", raw).strip()
        if raw in numbers:
            value = numbers[raw]
        else:
            try:
                value = int(raw, 0)
            except ValueError:
                continue
        numbers[name] = value
        out.append((name, value, _clean_doc(m.group("doc") + " " + m.group("trail") + " " + m.group("after"))))
    return out


def nccl_texts(source: Path) -> dict[str, str]:
    code = (source / "src" / "init.cc").read_text(encoding="utf-8")
    body = code[code.index("const char* ncclGetErrorString(ncclResult_t code)"):]
    body = body[:body.index("default:")]
    return dict(re.findall(r"case (nccl\w+):\s*return \"([^\"]*)\";", body))


# What a status means for a user: category (explain@1), the cause and the fix; curated from the thread or
# document named in `evidence`. Keys: library:NAME.
CURATED = {
    "cuda-runtime:cudaErrorInsufficientDriver": dict(
        category="driver-too-old",
        text="CUDA driver version is insufficient for CUDA runtime version",
        text_source="https://github.com/NVIDIA/nvidia-docker/issues/498 (code=35(cudaErrorInsufficientDriver) with this text) ; https://github.com/NVIDIA/FastPhotoStyle/issues/68",
        cause="The program's CUDA runtime is newer than the CUDA the installed NVIDIA driver supports (nvidia-smi's 'CUDA Version').",
        fix="Update the NVIDIA driver to one that supports the CUDA the program was built with (NVIDIA's CUDA release notes list each release's minimum driver), or install a build of the program for the CUDA the driver supports.",
        evidence="https://github.com/CEA-LIST/N2D2/issues/18 ; https://github.com/nagadomi/nunif/issues/702 ; https://github.com/NVIDIA/cuml/issues/5961"),
    "cuda-driver:CUDA_ERROR_INSUFFICIENT_DRIVER": "cuda-runtime:cudaErrorInsufficientDriver",
    "cuda-runtime:cudaErrorNoDevice": dict(
        category="no-gpu-detected",
        text="no CUDA-capable device is detected",
        text_source="https://github.com/tensorflow/tensorflow/issues/44869",
        cause="The driver sees no NVIDIA GPU: none is installed or passed through (a container started without --gpus, CUDA_VISIBLE_DEVICES empty or wrong), or the driver is not loaded.",
        fix="Check `nvidia-smi` on the machine; in a container start it with the GPU (docker --gpus all, a Kubernetes nvidia.com/gpu limit); check CUDA_VISIBLE_DEVICES.",
        evidence="https://github.com/tensorflow/tensorflow/issues/44869"),
    "cuda-driver:CUDA_ERROR_NO_DEVICE": "cuda-runtime:cudaErrorNoDevice",
    "cuda-runtime:cudaErrorSystemDriverMismatch": dict(
        category="driver-not-loaded",
        text="system has unsupported display driver / cuda driver combination",
        text_source="https://github.com/NVIDIA/nvidia-docker/issues/1256 (803 with this text) ; https://github.com/easydiffusion/easydiffusion/issues/379 (Error 803)",
        cause="The driver's user-space library (libcuda) and the loaded kernel module are of different releases: the driver was updated without a reboot, or a CUDA forward-compatibility package does not match the driver.",
        fix="Reboot (or reload the nvidia kernel modules) so that the loaded module matches the installed driver; remove a cuda-compat package that does not fit the driver.",
        evidence="https://github.com/NVIDIA/nvidia-docker/issues/1256 ; https://github.com/easydiffusion/easydiffusion/issues/379"),
    "cuda-driver:CUDA_ERROR_SYSTEM_DRIVER_MISMATCH": "cuda-runtime:cudaErrorSystemDriverMismatch",
    "cuda-runtime:cudaErrorCompatNotSupportedOnDevice": dict(
        category="driver-too-old",
        cause="CUDA forward compatibility (a newer CUDA on an older driver) works only on data-centre GPUs; this GPU needs a driver that supports the program's CUDA itself.",
        fix="Update the NVIDIA driver to one that supports the program's CUDA, or use a build for the CUDA the driver supports.",
        evidence="https://docs.nvidia.com/deploy/cuda-compatibility/ (forward compatibility: supported GPUs)"),
    "cuda-driver:CUDA_ERROR_COMPAT_NOT_SUPPORTED_ON_DEVICE": "cuda-runtime:cudaErrorCompatNotSupportedOnDevice",
    "cuda-runtime:cudaErrorNoKernelImageForDevice": dict(
        category="no-kernel-for-gpu",
        text="no kernel image is available for execution on the device",
        text_source="https://github.com/gsethi2409/tf-pose-estimation/issues/3",
        cause="The program (or a library in it) has no machine code for this GPU's architecture, and no PTX the driver could compile for it.",
        fix="Install a build of the program compiled for this GPU's compute capability (a newer release, or one for a newer CUDA).",
        evidence="https://github.com/gsethi2409/tf-pose-estimation/issues/3"),
    "cuda-runtime:cudaErrorUnsupportedPtxVersion": dict(
        category="driver-too-old",
        cause="The program carries PTX from a newer CUDA than the installed driver can compile.",
        fix="Update the NVIDIA driver to one of the CUDA the program was built with, or use a build for an older CUDA.",
        evidence="https://docs.nvidia.com/deploy/cuda-compatibility/ (PTX compatibility)"),
    "cuda-driver:CUDA_ERROR_UNSUPPORTED_PTX_VERSION": "cuda-runtime:cudaErrorUnsupportedPtxVersion",
    "cuda-runtime:cudaErrorMemoryAllocation": dict(
        category="out-of-memory",
        cause="The GPU has not enough free memory for the allocation (the model or batch is too large, or other processes hold memory).",
        fix="Use a smaller batch or model, free the memory other processes hold (nvidia-smi lists them), or use a GPU with more memory.",
        evidence="https://github.com/Azure/MachineLearningNotebooks/issues/880"),
    "cuda-driver:CUDA_ERROR_OUT_OF_MEMORY": "cuda-runtime:cudaErrorMemoryAllocation",
    "cuda-runtime:cudaErrorDevicesUnavailable": dict(
        category="no-gpu-detected",
        cause="The GPU is in exclusive-process or prohibited compute mode and another process holds it.",
        fix="Wait for (or stop) the process that holds the GPU, or set the compute mode to Default (`nvidia-smi -c 0`).",
        evidence="driver_types.h description (cudaErrorDevicesUnavailable)"),
    "cuda-runtime:cudaErrorInitializationError": dict(
        category="no-gpu-detected",
        cause="The CUDA driver could not be initialised: the driver is missing or broken, or the process cannot open the GPU's device files.",
        fix="Check that `nvidia-smi` works; reinstall the driver or reboot after an update; in a container, start it with the GPU.",
        evidence="driver_types.h description (cudaErrorInitializationError)"),
    "cuda-driver:CUDA_ERROR_NOT_INITIALIZED": dict(
        category="no-gpu-detected",
        cause="The CUDA driver was not (or could not be) initialised.",
        fix="Check that `nvidia-smi` works; reinstall the driver or reboot after an update.",
        evidence="cuda.h description (CUDA_ERROR_NOT_INITIALIZED)"),
    "cuda-runtime:cudaErrorUnknown": dict(
        category="no-gpu-detected",
        cause="CUDA could not initialise the GPU for a reason the driver does not name: typically the driver's kernel module is not loaded or not usable (after an update without a reboot, after suspend, or nvidia_uvm missing).",
        fix="Reboot (or load the nvidia and nvidia_uvm kernel modules: `sudo modprobe nvidia_uvm`), and check `nvidia-smi`.",
        evidence="https://github.com/haotianteng/Chiron/issues/99"),
    "cuda-driver:CUDA_ERROR_UNKNOWN": "cuda-runtime:cudaErrorUnknown",
    "cuda-runtime:cudaErrorStubLibrary": dict(
        category="no-gpu-detected",
        cause="The program loaded the CUDA driver's stub library (from the toolkit's lib64/stubs) instead of the driver's libcuda: no real driver is found first on the library path.",
        fix="Take the stubs folder off LD_LIBRARY_PATH and install the NVIDIA driver (in a container: run it with the NVIDIA runtime, which mounts the host's libcuda).",
        evidence="driver_types.h description (cudaErrorStubLibrary)"),
    "cuda-driver:CUDA_ERROR_STUB_LIBRARY": "cuda-runtime:cudaErrorStubLibrary",
    "cuda-runtime:cudaErrorCallRequiresNewerDriver": "cuda-runtime:cudaErrorInsufficientDriver",
    "cuda-runtime:cudaErrorLaunchOutOfResources": dict(
        category="out-of-memory",
        cause="A kernel asked for more registers or shared memory per block than the GPU has.",
        fix="Use a smaller block size or a build tuned for this GPU.",
        evidence="driver_types.h description (cudaErrorLaunchOutOfResources)"),
    "nvml:NVML_ERROR_LIB_RM_VERSION_MISMATCH": dict(
        category="driver-not-loaded",
        text="Driver/library version mismatch",
        text_source="https://github.com/Syllo/nvtop/issues/95 ; https://github.com/NVIDIA/nvidia-container-toolkit/issues/394",
        cause="The driver's libraries on disk (NVML) are a different release from the loaded kernel module: the driver was updated without a reboot, or two installations are mixed.",
        fix="Reboot (or unload and reload the nvidia kernel modules) so that the module matches the installed driver; if that does not help, remove every NVIDIA driver package and install one driver again.",
        evidence="https://github.com/qixuema/envs/issues/8 ; https://github.com/Syllo/nvtop/issues/95 ; https://github.com/tinygrad/open-gpu-kernel-modules/issues/47"),
    "nvml:NVML_ERROR_DRIVER_NOT_LOADED": dict(
        category="driver-not-loaded",
        text="Driver Not Loaded",
        text_source="https://github.com/NVIDIA/k8s-device-plugin/issues/219",
        cause="The NVIDIA kernel module is not loaded: the driver is not installed for the running kernel (after a kernel update, Secure Boot refusing an unsigned module), or in WSL2 the Windows driver is missing.",
        fix="Install the driver for the running kernel (or sign its module for Secure Boot) and reboot; check `lsmod | grep nvidia`.",
        evidence="nvml.h description (NVIDIA driver is not loaded)"),
    "nvml:NVML_ERROR_LIBRARY_NOT_FOUND": dict(
        category="driver-not-loaded",
        cause="NVML (libnvidia-ml.so.1, part of the NVIDIA driver) is not found: the driver is not installed, or its libraries are not on the loader path.",
        fix="Install the NVIDIA driver on the host (the container toolkit mounts the host's driver; it cannot supply one).",
        evidence="https://github.com/NVIDIA/libnvidia-container/issues/231 ; https://github.com/docker/for-win/issues/13835"),
    "nvml:NVML_ERROR_NO_PERMISSION": dict(
        category="driver-not-loaded",
        cause="The user may not open the GPU's device files (/dev/nvidia*).",
        fix="Give the user access to the /dev/nvidia* devices (its group, or the container's device rules).",
        evidence="nvml.h description (NVML_ERROR_NO_PERMISSION)"),
    "nvml:NVML_ERROR_UNKNOWN": dict(
        category="container-gpu-unavailable",
        text="Unknown Error",
        text_source="https://github.com/NVIDIA/nvidia-container-toolkit/issues/1227",
        cause="Inside a container this usually means the container lost access to the GPU devices: systemd re-applied the container's cgroup (systemctl daemon-reload) without the NVIDIA devices.",
        fix="Restart the container; to stop it recurring follow NVIDIA's notice (nvidia-container-toolkit#48): create the /dev/char symlinks (`nvidia-ctk system create-dev-char-symlinks`) or use the cgroupfs driver.",
        evidence="https://github.com/NVIDIA/nvidia-container-toolkit/issues/48 (NVIDIA's notice)"),
    "nvml:NVML_ERROR_GPU_IS_LOST": dict(
        category="driver-not-loaded",
        cause="The GPU fell off the bus (power, heat, a hardware or PCIe fault).",
        fix="Reboot; if it recurs, check power, cooling and the card's seating, and the kernel log (Xid 79).",
        evidence="nvml.h description (NVML_ERROR_GPU_IS_LOST)"),
    "cudnn:CUDNN_STATUS_NOT_INITIALIZED": dict(
        category="cudnn-init-failure",
        cause="cuDNN could not create its handle: most often the GPU's memory is already full, or the cuDNN/CUDA in use was not built for this GPU (an Ampere or newer GPU with a build for CUDA 10 or older).",
        fix="Free GPU memory (smaller batch, fewer processes) and install a framework build for a CUDA that supports this GPU (for PyTorch the wheel's +cuXXX tag; `stackresolve plan --gpu ...` names the build).",
        evidence="https://github.com/qubvel-org/segmentation_models.pytorch/issues/287 ; https://github.com/xt4d/id-pose/issues/5"),
    "cudnn:CUDNN_STATUS_ARCH_MISMATCH": dict(
        category="no-kernel-for-gpu",
        cause="This cuDNN has no code for the GPU's architecture (too old a GPU for this cuDNN, or too new for it).",
        fix="Install a cuDNN (and framework build) that supports the GPU's compute capability.",
        evidence="cudnn_graph.h (CUDNN_STATUS_ARCH_MISMATCH, alias of CUDNN_STATUS_NOT_SUPPORTED_ARCH_MISMATCH)"),
    "cudnn:CUDNN_STATUS_NOT_SUPPORTED_ARCH_MISMATCH": "cudnn:CUDNN_STATUS_ARCH_MISMATCH",
    "cudnn:CUDNN_STATUS_VERSION_MISMATCH": dict(
        category="cudnn-version-mismatch",
        cause="cuDNN's libraries (or the cuDNN and the CUDA it was built for) are of different versions.",
        fix="Install one cuDNN of the version the framework was built with, for its CUDA line, and remove other copies from the library path.",
        evidence="cudnn_graph.h (CUDNN_STATUS_VERSION_MISMATCH, alias of CUDNN_STATUS_SUBLIBRARY_VERSION_MISMATCH)"),
    "cudnn:CUDNN_STATUS_SUBLIBRARY_VERSION_MISMATCH": "cudnn:CUDNN_STATUS_VERSION_MISMATCH",
    "cudnn:CUDNN_STATUS_NOT_SUPPORTED_INCOMPATIBLE_CUDA_DRIVER": dict(
        category="driver-too-old",
        cause="The NVIDIA driver is too old for this cuDNN's CUDA.",
        fix="Update the NVIDIA driver to one of the CUDA this cuDNN was built for.",
        evidence="cudnn_graph.h (CUDNN_STATUS_NOT_SUPPORTED_INCOMPATIBLE_CUDA_DRIVER)"),
    "cudnn:CUDNN_STATUS_ALLOC_FAILED": dict(
        category="out-of-memory",
        cause="cuDNN could not allocate memory: the GPU is out of memory.",
        fix="Use a smaller batch or model, or free the memory other processes hold.",
        evidence="cudnn_graph.h (CUDNN_STATUS_ALLOC_FAILED)"),
    "cublas:CUBLAS_STATUS_NOT_INITIALIZED": dict(
        category="cublas-failure",
        cause="cuBLAS could not create its handle: most often the GPU's memory is already full (a large model, other processes), less often a CUDA build that does not support this GPU.",
        fix="Free GPU memory (lower precision, smaller batch or model, fewer processes on the GPU); if memory is free, install a framework build for a CUDA that supports this GPU.",
        evidence="https://github.com/QwenLM/Qwen/issues/120 ; https://github.com/OpenBMB/VisCPM/issues/3"),
    "cublas:CUBLAS_STATUS_ALLOC_FAILED": dict(
        category="out-of-memory",
        cause="cuBLAS could not allocate memory: the GPU is out of memory.",
        fix="Use a smaller batch or model, or free the memory other processes hold.",
        evidence="cublas_api.h (CUBLAS_STATUS_ALLOC_FAILED)"),
    "cublas:CUBLAS_STATUS_ARCH_MISMATCH": dict(
        category="no-kernel-for-gpu",
        cause="This cuBLAS has no code for the GPU's architecture.",
        fix="Install a CUDA (and framework build) that supports the GPU's compute capability.",
        evidence="cublas_api.h (CUBLAS_STATUS_ARCH_MISMATCH)"),
    "cufft:CUFFT_INTERNAL_ERROR": dict(
        category="no-kernel-for-gpu",
        cause="cuFFT failed inside; on an RTX 40 (Ada, compute capability 8.9) GPU it is the cuFFT of CUDA 11.7 or older, which does not support that GPU.",
        fix="Install a framework build for CUDA 11.8 or newer (PyTorch: a +cu118 or newer wheel, or `pytorch-cuda=11.8` with conda).",
        evidence="https://github.com/haoheliu/AudioLDM/issues/49 ; https://github.com/pytorch/pytorch/issues/88038"),
    "cufft:CUFFT_ALLOC_FAILED": dict(
        category="out-of-memory",
        cause="cuFFT could not allocate its work area: the GPU is out of memory.",
        fix="Use smaller transforms or batches, or free GPU memory.",
        evidence="cufft.h (CUFFT_ALLOC_FAILED)"),
    "nccl:ncclUnhandledCudaError": dict(
        category="nccl-failure",
        cause="A CUDA call inside NCCL failed; the line NCCL logs before it (with NCCL_DEBUG=INFO or WARN) names the CUDA error, often the driver being too old for the CUDA NCCL was built with.",
        fix="Run with NCCL_DEBUG=INFO and fix the CUDA error it names (for 'CUDA driver version is insufficient' update the driver).",
        evidence="https://github.com/NVIDIA/cuml/issues/5961"),
    "nccl:ncclSystemError": dict(
        category="nccl-failure",
        cause="A system call inside NCCL failed: shared memory (/dev/shm too small in a container), sockets or the network interface.",
        fix="Run with NCCL_DEBUG=INFO to see the failing call; in a container give it more shared memory (--shm-size or --ipc=host); pick the network interface with NCCL_SOCKET_IFNAME.",
        evidence="https://github.com/NVIDIA/nccl/issues/342"),
}

# The library's general advice, for a status without a curated entry.
GENERAL = {
    "cuda-runtime": ("other", "The CUDA runtime reported this status; its description is NVIDIA's.", "Run again with CUDA_LAUNCH_BLOCKING=1 to find the failing call; check the driver with nvidia-smi."),
    "cuda-driver": ("other", "The CUDA driver API reported this status; its description is NVIDIA's.", "Run again with CUDA_LAUNCH_BLOCKING=1 to find the failing call; check the driver with nvidia-smi."),
    "nvml": ("driver-not-loaded", "NVML (the NVIDIA driver's management library, used by nvidia-smi, nvtop, the container toolkit and the frameworks) reported this status.", "Check the driver with nvidia-smi on the host."),
    "cudnn": ("cudnn-init-failure", "cuDNN reported this status.", "Check that the cuDNN in use is the one the framework was built with (cuDNN major and CUDA line) and that GPU memory is free."),
    "cublas": ("cublas-failure", "cuBLAS reported this status.", "Check that GPU memory is free and that the CUDA in use supports this GPU."),
    "cufft": ("other", "cuFFT reported this status.", "Check the transform's sizes and that the CUDA in use supports this GPU."),
    "cusolver": ("other", "cuSOLVER reported this status.", "Check that GPU memory is free and that the CUDA libraries in use are of one CUDA line."),
    "cusparse": ("other", "cuSPARSE reported this status.", "Check that GPU memory is free and that the CUDA libraries in use are of one CUDA line."),
    "nccl": ("nccl-failure", "NCCL reported this status.", "Run with NCCL_DEBUG=INFO to see the failing call."),
}

SUCCESS = {"cudaSuccess", "CUDA_SUCCESS", "NVML_SUCCESS", "CUDNN_STATUS_SUCCESS", "CUBLAS_STATUS_SUCCESS", "CUFFT_SUCCESS",
           "CUSOLVER_STATUS_SUCCESS", "CUSPARSE_STATUS_SUCCESS", "ncclSuccess", "ncclNumResults", "ncclInProgress"}


def main(argv=None) -> int:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--cuda-include", type=Path, required=True)
    parser.add_argument("--nccl-source", type=Path, required=True)
    parser.add_argument("--cuda-source", required=True, help="how to cite the headers, e.g. repo:path@commit (CUDA 12.6.3)")
    parser.add_argument("--nccl-cite", required=True, help="how to cite the NCCL tree, e.g. NVIDIA/nccl@commit (2.30.7)")
    args = parser.parse_args(argv)
    import tomli_w

    entries = []
    for library, enum, header, body_pattern in ENUMS:
        text = (args.cuda_include / header).read_text(encoding="utf-8", errors="replace")
        body = re.search(body_pattern, text, re.S)
        if body is None:
            sys.exit(f"{header}: enum {enum} not found")
        for name, value, description in parse_enum(body.group(1)):
            entries.append(dict(library=library, enum=enum, name=name, value=value, description=description,
                                source=f"{args.cuda_source}:include/{header} ({enum})"))
    nccl_header = (args.nccl_source / "src" / "nccl.h.in").read_text(encoding="utf-8")
    texts = nccl_texts(args.nccl_source)
    body = re.search(r"typedef enum \{(.*?)\}\s*ncclResult_t;", nccl_header, re.S).group(1)
    for name, value, description in parse_enum(body):
        entries.append(dict(library="nccl", enum="ncclResult_t", name=name, value=value, description=description,
                            text=texts.get(name, ""), text_source=f"{args.nccl_cite}:src/init.cc (ncclGetErrorString)",
                            source=f"{args.nccl_cite}:src/nccl.h.in (ncclResult_t)"))
    out = []
    for entry in entries:
        if entry["name"] in SUCCESS:
            continue
        key = f"{entry['library']}:{entry['name']}"
        curated = CURATED.get(key)
        while isinstance(curated, str):
            alias = curated
            curated = CURATED[alias]
        category, cause, fix = GENERAL[entry["library"]]
        record = {k: v for k, v in entry.items() if v != ""}
        if curated:
            own = CURATED.get(key)
            record.update({k: v for k, v in curated.items()
                           if not (isinstance(own, str) and k in ("text", "text_source"))})
        else:
            record.update(category=category, cause=cause, fix=fix)
        out.append(record)
    header = ("# error_catalogue.toml: every status of the CUDA runtime (cudaError_t), the CUDA driver (CUresult), NVML\n"
              "# (nvmlReturn_t), cuDNN, cuBLAS, cuFFT, cuSOLVER, cuSPARSE and NCCL (ncclResult_t), read from their headers.\n"
              "# Drafted by scripts/error_catalogue.py (see there for the sources and the curated part); edit CURATED there.\n"
              "# Each [[status]]: library, enum, name, value (the header's number), description (the header's words),\n"
              "# text (what the library prints, where a primary source or the cited reports show it), text_source,\n"
              "# category (explain@1), cause, fix, evidence (where the cause and fix come from), source (the header).\n")
    sys.stdout.write(header + "\n" + tomli_w.dumps({"status": out}))
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
