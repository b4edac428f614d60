# -*- coding: utf-8 -*-
"""The import check `stackresolve install` runs IN the new environment: import the framework, read the CUDA and
cuDNN its build reports, list the GPUs it sees. Prints one JSON line after a marker.

Stdlib besides the framework itself, and valid on Python 2.7 and 3.5+ (TensorFlow 1.x environments): no f-strings,
no annotations. stackresolve passes this file's text to `python -c`, with the framework's name as argument.
"""
from __future__ import print_function

import json
import sys

MARKER = "stackresolve-import-check:"


def _text(value):
    return None if value is None else str(value)


def check_tensorflow(out):
    # lazy: the framework under check, in its own environment (may be absent or broken)
    import tensorflow as tf

    out["version"] = tf.__version__
    info = {}
    try:
        info = dict(tf.sysconfig.get_build_info())  # TF >= 2.3
    except Exception:
        try:
            # lazy: the framework under check, in its own environment (may be absent or broken)
            from tensorflow.python.platform import build_info  # TF 1.x - 2.2

            info = {"cuda_version": getattr(build_info, "cuda_version_number", None),
                    "cudnn_version": getattr(build_info, "cudnn_version_number", None)}
        except Exception:
            pass
    out["cuda"] = _text(info.get("cuda_version"))
    out["cudnn"] = _text(info.get("cudnn_version"))
    listing = getattr(getattr(tf, "config", None), "list_physical_devices", None) or \
        getattr(getattr(getattr(tf, "config", None), "experimental", None), "list_physical_devices", None)
    if listing is not None:
        out["gpus"] = [d.name for d in listing("GPU")]
    else:  # TF 1.x before 1.14
        # lazy: the framework under check, in its own environment (may be absent or broken)
        from tensorflow.python.client import device_lib

        out["gpus"] = [d.name for d in device_lib.list_local_devices() if d.device_type == "GPU"]


def check_pytorch(out):
    # lazy: the framework under check, in its own environment (may be absent or broken)
    import torch

    out["version"] = torch.__version__
    out["cuda"] = _text(getattr(torch.version, "cuda", None))
    try:
        out["cudnn"] = _text(torch.backends.cudnn.version())
    except Exception:
        out["cudnn"] = None
    gpus = []
    if torch.cuda.is_available():
        gpus = [torch.cuda.get_device_name(i) for i in range(torch.cuda.device_count())]
    elif getattr(getattr(torch, "xpu", None), "is_available", lambda: False)():
        # PyTorch's XPU builds (Intel GPUs); ROCm builds answer through torch.cuda (HIP)
        gpus = [torch.xpu.get_device_name(i) for i in range(torch.xpu.device_count())]
    elif getattr(getattr(torch.backends, "mps", None), "is_available", lambda: False)():
        gpus = ["mps"]
    out["gpus"] = gpus


def check_jax(out):
    # lazy: the framework under check, in its own environment (may be absent or broken)
    import jax

    out["version"] = jax.__version__
    out["cuda"] = None
    out["cudnn"] = None
    try:
        out["gpus"] = [str(d) for d in jax.devices("gpu")]
    except RuntimeError:  # no GPU backend started
        out["gpus"] = []


CHECKS = {"tensorflow": check_tensorflow, "pytorch": check_pytorch, "jax": check_jax}


def main():
    framework = sys.argv[1] if len(sys.argv) > 1 else ""
    out = {"framework": framework, "python": "%d.%d.%d" % sys.version_info[:3], "version": None, "cuda": None,
           "cudnn": None, "gpus": [], "error": None}
    try:
        CHECKS[framework](out)
    except BaseException as exc:  # an import that fails is the finding, not a crash of the check
        out["error"] = "%s: %s" % (type(exc).__name__, exc)
    sys.stdout.write("\n" + MARKER + json.dumps(out) + "\n")


if __name__ == "__main__":
    main()
