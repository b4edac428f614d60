"""`stackresolve explain` for PyTorch and JAX: their own messages (constraints/errors.toml, framework =
"pytorch" / "jax"), the framework of each record and of a log, and the fix request's framework fields.

Messages quoted here are lines of the real reports in tests/fixtures/errors/real/ (INDEX.toml names
their sources) or the wording of the framework's own code named in the record's `source`; every
expected value is read off the text by hand (PyTorch prints the driver's CUDA version 11.4 as 11040).
"""

from __future__ import annotations

import copy
import json
import sys
from functools import lru_cache
from pathlib import Path

import pytest

if sys.version_info >= (3, 11):
    import tomllib
else:  # pragma: no cover
    import tomli as tomllib

from stackresolve.explain import (
    FixRequest,
    explain_text,
    fix_request,
    normalize_version,
    pattern_needles,
    render_text,
)
from stackresolve.knowledge.errors import FRAMEWORKS, parse_errors
from stackresolve.knowledge.loader import error_knowledge
import locations

ROOT = locations.REPO
ERRORS_TOML = ROOT / "constraints" / "errors.toml"
CORPUS = ROOT / "tests" / "fixtures" / "errors" / "real"
OLDER_FIXTURES = ROOT / "tests" / "fixtures" / "errors"
NEW_FRAMEWORKS = ("pytorch", "jax")


@pytest.fixture(scope="module")
def errors():
    return error_knowledge()



@lru_cache(maxsize=1)
def corpus() -> tuple[dict, ...]:
    return tuple(tomllib.loads((CORPUS / "INDEX.toml").read_text(encoding="utf-8"))["report"])


def log_text(path: Path) -> str:
    return path.read_text(encoding="utf-8").partition("\n")[2]


def request(text: str, errors, kb) -> FixRequest:
    return fix_request(explain_text(text, errors), kb)


def framework_codes(errors) -> set[str]:
    """The records this work added: the frameworks' own messages, and cuDNN 9's sub-library message."""
    return {e.code for e in errors.errors if e.framework in NEW_FRAMEWORKS} | {"cudnn9-sublibrary-not-found"}


# ----------------------------------------------------------------------------------------------
# the records
# ----------------------------------------------------------------------------------------------


def test_every_record_names_its_framework(errors):
    assert {e.framework for e in errors.errors} == set(FRAMEWORKS)
    by_code = {e.code: e.framework for e in errors.errors}
    assert by_code["dso-missing-cudart"] == "tensorflow"  # TensorFlow's own loader message
    assert by_code["cudnn-version-mismatch"] == "any"  # XLA's, printed by TensorFlow and JAX alike
    assert by_code["cudnn-handle-internal-error"] == "any"  # cuDNN's status
    assert by_code["torch-gpu-arch-not-supported"] == "pytorch"
    assert by_code["jax-cuda-jaxlib-not-installed"] == "jax"
    # the dynamic loader's nvJitLink message: PyTorch's wheels, cuML on a conda image (rapidsai/deployment#487)
    assert by_code["torch-nvjitlink-symbol-mismatch"] == "any"
    assert len([c for c, f in by_code.items() if f == "pytorch"]) >= 7
    assert len([c for c, f in by_code.items() if f == "jax"]) >= 8


@pytest.mark.parametrize("value, message", [(None, "`framework` is missing"), ("torch", "is not one of")])
def test_the_framework_is_required_and_checked(value, message):
    doc = tomllib.loads(ERRORS_TOML.read_text(encoding="utf-8"))
    broken = copy.deepcopy(doc)
    if value is None:
        del broken["error"][0]["framework"]
    else:
        broken["error"][0]["framework"] = value
    with pytest.raises(ValueError, match=message):
        parse_errors(broken)


def test_every_pattern_has_a_literal_to_search_for(errors):
    """A long log is searched fast only around the literal every match contains."""
    for e in errors.errors:
        info = pattern_needles(e.pattern)
        assert info is not None, e.code
        assert min(len(n) for n in info[0]) >= 5, (e.code, info)


def test_every_cause_condition_has_a_literal_to_search_for(errors):
    """A cause's `when` / `unless` is searched in the whole text of a log that shows its message: one without a
    literal is a pass over all of an 8 MiB log (issue 36's first container conditions, `@[0-9a-f]{12}:` and
    `RX\\s*\\d\\d\\d\\d`, cost 0.4-0.8 s each on scripts/bench.py's log)."""
    for e in errors.errors:
        for cause in e.causes:
            for condition in (cause.when_pattern, cause.unless_pattern):
                assert not condition or pattern_needles(condition) is not None, (e.code, condition)


def test_every_new_record_is_matched_by_a_real_report(errors):
    """Each PyTorch/JAX record recognises at least one real report of the corpus (INDEX.toml cites it)."""
    matched: set[str] = set()
    for report in corpus():
        matched |= {m.code for m in explain_text(log_text(CORPUS / report["file"]), errors).matches}
    assert framework_codes(errors) - matched == set()


def test_the_new_patterns_stay_silent_on_tensorflow_logs(errors):
    """No record of this work fires on a TensorFlow report, and no TensorFlow log reads as PyTorch or JAX."""
    tf_reports = [CORPUS / r["file"] for r in corpus() if "framework" not in r["setup"]]
    assert len(tf_reports) >= 45
    for path in tf_reports + sorted(OLDER_FIXTURES.glob("*.log")):
        explanation = explain_text(log_text(path), errors)
        assert {m.code for m in explanation.matches} & framework_codes(errors) == set(), path.name
        assert explanation.framework not in NEW_FRAMEWORKS, path.name


# ----------------------------------------------------------------------------------------------
# found values as a reader reads them off the text
# ----------------------------------------------------------------------------------------------


def test_the_capability_warning_gives_gpu_sm_and_the_builds_list(errors):
    text = log_text(CORPUS / "wyoming-xtts-1-torch-sm120-rtx5060ti.log")
    top = explain_text(text, errors).problems[0]
    assert (top.code, top.category, top.framework) == ("torch-gpu-arch-not-supported", "no-kernel-for-gpu", "pytorch")
    assert top.found == {"gpu": "NVIDIA GeForce RTX 5060 Ti", "sm": "sm_120", "cc": "12.0",
                         "sm_supported": "sm_50 sm_60 sm_70 sm_75 sm_80 sm_86 sm_90"}
    # sm_120 (Blackwell): the cause and fix name the builds that have it
    assert "torch >= 2.7 from PyTorch's cu128 index" in top.fix and ">= 2.8 from the default index" in top.fix
    assert "stackresolve plan --torch" in top.fix


def test_an_older_gpu_missing_from_the_build_gets_the_generic_fix(errors):
    top = explain_text(log_text(CORPUS / "wpfs-3-torch-sm80-a100-torch1.10.1.log"), errors).problems[0]
    assert top.found["sm"] == "sm_80" and top.found["cc"] == "8.0"
    assert "include sm_80" in top.fix and "cu128" not in top.fix.split("(")[0]


@pytest.mark.parametrize(
    "text, driver_cuda",
    [
        ("RuntimeError: The NVIDIA driver on your system is too old (found version 12080). Please update your GPU driver", "12.8"),
        ("RuntimeError: The NVIDIA driver on your system is too old (found version 11040). Please update your GPU driver", "11.4"),
        ("AssertionError: \nThe NVIDIA driver on your system is too old (found version 9000).", "9.0"),
    ],
)
def test_torch_prints_the_drivers_cuda_as_an_integer(errors, text, driver_cuda):
    top = explain_text(text, errors).problems[0]
    assert (top.code, top.category) == ("torch-driver-too-old", "driver-too-old")
    assert top.found["driver_cuda"] == driver_cuda
    assert f"CUDA up to {driver_cuda}" in top.meaning


def test_integer_versions_of_cuda_and_cudnn():
    assert normalize_version("driver_cuda", "12080") == "12.8"
    assert normalize_version("cuda", "12010") == "12.1"  # JAX: "Found CUDA version 12010"
    assert normalize_version("cudnn", "8906") == "8.9.6"  # cuDNN <= 8: major*1000 + minor*100 + patch
    assert normalize_version("cudnn", "90100") == "9.1.0"  # cuDNN >= 9: major*10000 + minor*100 + patch
    assert normalize_version("torch", "2.6.0%2Bcu124") == "2.6.0+cu124"
    assert normalize_version("sm", "120") == "sm_120"


@pytest.mark.parametrize(
    "text, code, category, wanted, found",
    [
        ("Outdated cuDNN installation found.\nVersion JAX was built against: 8907\nMinimum supported: 9100\n"
         "Installed version: 8907\nThe local installation version must be no lower than 9100..",
         "jax-cudnn-too-old", "cudnn-version-mismatch", {"cudnn": "8.9.7"}, {"cudnn": "8.9.7"}),
        ("CUDA backend failed to initialize: Found cuDNN version 8600, but JAX was built against version 8906, which is newer.",
         "jax-cudnn-too-old", "cudnn-version-mismatch", {"cudnn": "8.9.6"}, {"cudnn": "8.6.0"}),
        ("RuntimeError: jaxlib is version 0.4.7, but this version of jax requires version >= 0.4.14.",
         "jax-jaxlib-version-mismatch", "package-version-mismatch", {"jaxlib": "0.4.14"}, {"jaxlib": "0.4.7"}),
        ("RuntimeError: jaxlib version 0.4.30 is newer than and incompatible with jax version 0.4.28. Please update your jax and/or jaxlib packages.",
         "jax-jaxlib-version-mismatch", "package-version-mismatch", {}, {"jaxlib": "0.4.30", "jax": "0.4.28"}),
        ("Unable to load any of {libcudnn_engines_precompiled.so.9.1.0, libcudnn_engines_precompiled.so.9.1, libcudnn_engines_precompiled.so.9}",
         "cudnn9-sublibrary-not-found", "missing-cudnn", {"cudnn": "9"}, {}),
    ],
)
def test_jax_and_cudnn_messages(errors, text, code, category, wanted, found):
    top = explain_text(text, errors).problems[0]
    assert (top.code, top.category) == (code, category)
    assert top.wanted == wanted
    for key, value in found.items():
        assert top.found[key] == value


def test_the_xla_cudnn_message_names_the_framework_it_runs_in(errors):
    line = ("E external/xla/xla/stream_executor/cuda/cuda_dnn.cc:417] Loaded runtime CuDNN library: 8.5.0 but source "
            "was compiled with: 8.6.0.  CuDNN library needs to have matching major version")
    jax = explain_text("JAX doesn't work with cuda/gpu\n" + line, errors).problems[0]
    assert jax.meaning.startswith("JAX was built with cuDNN 8.6.0") and "jax[cuda12]" in jax.fix
    plain = explain_text(line, errors).problems[0]  # no framework in the text: TensorFlow's wording, as before
    assert plain.meaning.startswith("TensorFlow was built with cuDNN 8.6.0") and "jax" not in plain.fix


# ----------------------------------------------------------------------------------------------
# the framework of a log, and the fix request
# ----------------------------------------------------------------------------------------------


def test_pip_output_gives_torch_its_version_and_variant(errors, kb):
    text = ("Successfully installed torch-2.5.1+cu124\n"
            "RuntimeError: CUDA error: no kernel image is available for execution on the device\n")
    fix = request(text, errors, kb)
    assert (fix.framework, fix.framework_version, fix.variant) == ("pytorch", "2.5.1", "cu124")
    data = fix.to_json_dict()
    assert data["framework"] == "pytorch" and data["framework_version"] == "2.5.1" and data["variant"] == "cu124"
    assert "tf" not in data and "tf_candidates" not in data
    assert "The fix asks for: PyTorch 2.5.1 (cu124)" in render_text(explain_text(text, errors), fix)


def test_torch_version_lines(errors):
    seen = explain_text("PyTorch version: 2.5.1+cu124\nIs debug build: False\nCUDA used to build PyTorch: 12.4\n"
                        ">>> print(torch.__version__)\n2.5.1+cu124\n"
                        "torch-2.6.0%2Bcu124-cp310-cp310-win_amd64.whl\n", errors).versions_seen
    assert seen["torch"] == ("2.5.1+cu124", "2.6.0+cu124")
    assert seen["framework"] == ("pytorch",)


def test_a_jax_traceback_path_and_the_jaxlib_build(errors, kb):
    text = ('  File "/home/u/venv/lib/python3.11/site-packages/jax/_src/xla_bridge.py", line 660, in backends\n'
            "jaxlib 0.4.23+cuda12.cudnn89\n"
            "RuntimeError: jaxlib is version 0.4.7, but this version of jax requires version >= 0.4.14.\n")
    explanation = explain_text(text, errors)
    assert explanation.framework == "jax"
    fix = fix_request(explanation, kb)
    assert fix.framework == "jax" and fix.python == "3.11" and fix.os == "linux"
    assert fix.jaxlib is None  # 0.4.23 in pip's output, 0.4.7 in the message: the log shows two


def test_a_pytorch_log_asks_nothing_of_tensorflow(errors, kb):
    """libcudnn.so.9 would name TensorFlow lines built with cuDNN 9; in a PyTorch log it does not."""
    fix = request(log_text(CORPUS / "comfyui-docker-56-torch-libcudnn.so.9-lib64.log"), errors, kb)
    assert fix.framework == "pytorch"
    assert fix.tf is None and fix.tf_candidates == ()
    assert fix.cudnn == "9" and fix.python == "3.12" and fix.os == "linux"


def test_a_tensorflow_log_names_tensorflow_and_keeps_its_request(errors, kb):
    text = ("W tensorflow/stream_executor/platform/default/dso_loader.cc:64] Could not load dynamic library "
            "'cudart64_110.dll'; dlerror: cudart64_110.dll not found\nTensorFlow version: 2.9.1\n")
    fix = request(text, errors, kb)
    assert (fix.framework, fix.framework_version, fix.tf, fix.cuda, fix.cudnn) == ("tensorflow", "2.9.1", "2.9.1", "11.2", "8.1")
    assert "The fix asks for: TensorFlow 2.9.1; OS windows; CUDA 11.2; cuDNN 8.1" in render_text(explain_text(text, errors), fix)


def test_a_specific_message_outweighs_a_mention_of_another_framework(errors):
    # JAX's check failed because torch was imported first: the log shows both, the message is JAX's
    explanation = explain_text(log_text(CORPUS / "jax-18032-cudnn-8700-vs-8800-torch-first.log"), errors)
    assert set(explanation.versions_seen["framework"]) == {"pytorch", "jax"}
    assert explanation.framework == "jax"
    assert "before torch" in explanation.problems[0].fix


def test_a_loader_error_inside_a_torch_traceback_is_one_problem(errors):
    # pytorch/pytorch#165812, as posted: the generic cuDNN loader record also matches the last line, but the
    # PyTorch record reads the whole traceback; the user is told once, by the more specific one.
    text = ('venv/lib64/python3.11/site-packages/torch/__init__.py", line 427, in <module>\n'
            '    from torch._C import *  # noqa: F403\n'
            '    ^^^^^^^^^^^^^^^^^^^^^^\n'
            'ImportError: libcudnn.so.9: cannot open shared object file: No such file or directory\n')
    problems = explain_text(text, errors).problems
    assert [p.code for p in problems] == ["torch-cudnn-not-found"]
    assert problems[0].wanted == {"cudnn": "9"}


def test_the_ctypes_form_of_a_missing_cudnn_is_recognised(errors):
    # microsoft/onnxruntime#3632, as posted: a library that loads cuDNN through ctypes raises OSError.
    problems = explain_text("OSError: libcudnn.so.7: cannot open shared object file: No such file or directory",
                            errors).problems
    assert problems and problems[0].category == "missing-cudnn"


def test_the_json_carries_each_matchs_framework(errors, kb):
    explanation = explain_text(log_text(CORPUS / "parallelfold-13-jaxlib-0.1.69-vs-0.1.74.log"), errors)
    data = json.loads(json.dumps(explanation.to_json_dict()))
    assert set(data) == {"schema", "matches", "versions_seen"}
    assert data["matches"][0]["framework"] == "jax"
    requested = fix_request(explanation, kb).to_json_dict()
    assert {k: requested[k] for k in ("framework", "framework_version", "jaxlib", "variant")} == \
        {"framework": "jax", "framework_version": "0.2.26", "jaxlib": "0.1.69", "variant": "cuda101"}


def test_nothing_to_fix_names_no_framework(errors, kb):
    text = "I tensorflow/core/platform/cpu_feature_guard.cc:142] Your CPU supports instructions that this TensorFlow binary was not compiled to use: AVX2 FMA"
    assert request(text, errors, kb).to_json_dict() == {}


def test_framework_flags_name_the_framework_and_its_version(errors, kb):
    from stackresolve.explain import FixOverrides

    explanation = explain_text(log_text(CORPUS / "paints-undo-6-torch-not-compiled-with-cuda.log"), errors)
    fix = fix_request(explanation, kb, FixOverrides(torch="2.3.0"))
    assert (fix.framework, fix.framework_version, fix.tf) == ("pytorch", "2.3.0", None)
    assert "PyTorch 2.3.0 from --torch" in fix.evidence
    # --jax on a PyTorch log: the flag names the framework
    fix = fix_request(explanation, kb, FixOverrides(jax="0.4.30"))
    assert (fix.framework, fix.framework_version) == ("jax", "0.4.30")


def test_the_drivers_cuda_and_a_plugins_cuda_major_reach_the_fix_request(errors, kb):
    # "found version 11040": the driver supports CUDA up to 11.4 (GPT-SoVITS#83)
    fix = request(log_text(CORPUS / "gpt-sovits-83-torch-driver-too-old-11040.log"), errors, kb)
    assert fix.driver_cuda == "11.4" and fix.to_json_dict()["driver_cuda"] == "11.4"
    # "JAX plugin jax_cuda12_plugin version 0.9.2 is installed" (recovar#64): a CUDA 12 plugin install
    fix = request(log_text(CORPUS / "recovar-64-jax-cuda12-plugin-0.9.2-vs-jaxlib-0.9.0.1.log"), errors, kb)
    assert (fix.variant, fix.jaxlib) == ("cuda12", "0.9.0.1")
    # a TensorFlow log keeps its request as it was
    tf = request(log_text(CORPUS / "tf-57103-cudart64_110-tf2.9.1-windows.log"), errors, kb)
    assert tf.driver_cuda is None


def test_a_cudnn_handle_failure_in_a_jax_log_gets_jaxs_memory_settings():
    """CUDNN_STATUS_INTERNAL_ERROR under JAX: JAX preallocates 75% of the GPU (docs.jax.dev, GPU memory
    allocation), so the fix is XLA_PYTHON_CLIENT_PREALLOCATE, not TensorFlow's memory growth."""
    from stackresolve.explain import explain_text
    from stackresolve.knowledge.loader import error_knowledge

    log = ("E external/xla/xla/stream_executor/cuda/cuda_dnn.cc:535] Could not create cudnn handle: "
           "CUDNN_STATUS_INTERNAL_ERROR\njax.errors.JaxRuntimeError: DNN library initialization failed.\n")
    explanation = explain_text(log, error_knowledge())
    fix = next(m.fix for m in explanation.matches if m.code == "cudnn-handle-internal-error")
    assert "XLA_PYTHON_CLIENT_PREALLOCATE=false" in fix and "tf.config" not in fix


@pytest.mark.parametrize("log, other_os_words", [
    ("W tensorflow/stream_executor/platform/default/dso_loader.cc:60] Could not load dynamic library "
     "'libcudart.so.11.0'; dlerror: libcudart.so.11.0: cannot open shared object file: No such file or directory",
     ("%CUDA_PATH%", "Windows", "PATH must")),
    ("W tensorflow/stream_executor/platform/default/dso_loader.cc:55] Could not load dynamic library "
     "'cudart64_110.dll'; dlerror: cudart64_110.dll not found", ("LD_LIBRARY_PATH", "Linux", "lib64")),
])
def test_a_missing_cudart_is_fixed_in_the_logs_own_os_terms(log, other_os_words):
    from stackresolve.explain import explain_text
    from stackresolve.knowledge.loader import error_knowledge

    match = next(m for m in explain_text(log, error_knowledge()).matches if m.code == "dso-missing-cudart")
    words = " ".join([match.fix, *match.causes])
    assert not any(w in words for w in other_os_words), words


def test_pytorchs_windows_dll_load_error_is_known_from_its_source_template():
    """torch/__init__.py (_load_dll_libraries) appends 'Error loading "{dll}" or one of its dependencies.' to a
    WinError; the log line is pytorch/pytorch#59904's (WinError 1455). A Windows path with ':' and spaces is the
    DLL: a quoted template value runs to its closing quote."""
    from stackresolve.explain import explain_text
    from stackresolve.knowledge.loader import error_knowledge

    log = ('OSError: [WinError 1455] The paging file is too small for this operation to complete. Error loading '
           '"C:\\Users\\Mohamed\\anaconda3\\envs\\3days\\lib\\site-packages\\torch\\lib\\caffe2_module_test_dynamic.dll"'
           ' or one of its dependencies.')
    match = next(m for m in explain_text(log, error_knowledge()).matches if m.code == "torch-dll-load-failed")
    assert match.category == "dll-load-failed-windows"
    assert "caffe2_module_test_dynamic.dll" in match.meaning and "C:\\Users" in match.meaning
    assert match.causes[0].startswith("WinError 1455")  # the log's own error number first
    assert "paging file" in match.fix


def test_a_quoted_template_value_may_hold_colons_and_spaces():
    import re

    from stackresolve.knowledge.errors import template_regex

    pattern = template_regex('Error loading "%s" or one of its dependencies.', ["dll"])
    found = re.search(pattern, 'Error loading "C:\\Program Files\\x\\a.dll" or one of its dependencies.')
    assert found and found.group("dll") == "C:\\Program Files\\x\\a.dll"
