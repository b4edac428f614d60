"""`resolve(kb, request, same_search=key)`: the caller's word that every request given the key makes the same
choices in the search (framework build, Python, CUDA, cuDNN). A search that succeeds runs once per key and each
request's stack is still built for its own GPUs; one that fails is not kept. The matrix gives GPUs equal keys where
its signatures say their searches cannot differ (tests/lock/test_matrix_sharing.py holds that claim to the
answers)."""

from stackresolve.request.parse import Flags, request_from_flags
from stackresolve.knowledge.loader import load_knowledge
from stackresolve.resolve import resolve
from stackresolve.resolve.cache import resolver_cache


def _request(kb, gpu: str, tf: str = "2.4"):
    return request_from_flags(kb, Flags(tf=tf, os="linux", gpu=gpu), None)


def test_a_shared_search_builds_each_stack_for_its_own_gpu():
    kb = load_knowledge()  # a knowledge base of its own: the shared searches live in its resolver cache
    a100, rtx3090 = _request(kb, "A100"), _request(kb, "RTX 3090")
    first = resolve(kb, a100, with_alternatives=False, same_search="tf 2.4 on linux")
    shared = resolve(kb, rtx3090, with_alternatives=False, same_search="tf 2.4 on linux")
    assert list(resolver_cache(kb).searches) == ["tf 2.4 on linux"]  # one search, run for the A100
    alone = resolve(kb, rtx3090, with_alternatives=False)  # its own search
    assert shared.stack == alone.stack and shared.findings == alone.findings
    # TensorFlow 2.4 is tested with CUDA 11.0 (TensorFlow's tested-build table); an RTX 3090 (sm_86) needs the
    # driver of CUDA 11.1, the first toolkit for it: >= 455.23 on Linux (CUDA 11.1 release notes, Table 3),
    # above CUDA 11.0's own 450.51.05, which the A100 (sm_80, CUDA 11.0) plans for.
    assert (shared.stack.cuda.version, shared.stack.driver.minimum) == ("11.0", "455.23")
    assert first.stack.driver.minimum == "450.51.05"
    assert str(shared.stack.gpu.cc) == "8.6" and str(first.stack.gpu.cc) == "8.0"


def test_the_key_is_the_callers_word():
    kb = load_knowledge()
    resolve(kb, _request(kb, "A100", tf="2.4"), with_alternatives=False, same_search="one key")
    # another line under the same key gets the first request's choices: the caller vouched they are equal
    vouched = resolve(kb, _request(kb, "A100", tf="2.15"), with_alternatives=False, same_search="one key")
    assert vouched.stack.framework.line == "2.4"


def test_a_failed_search_is_not_kept():
    kb = load_knowledge()
    # a Kepler GTX 690 (compute capability 3.0) has no TensorFlow 2.4 build with code for it
    failed = resolve(kb, _request(kb, "GTX 690"), with_alternatives=False, same_search="k")
    assert failed.stack is None
    assert any("compute capability 3.0" in f.message for f in failed.findings)
    after = resolve(kb, _request(kb, "A100"), with_alternatives=False, same_search="k")
    assert after.stack is not None and after.stack.framework.line == "2.4"
