"""The one resolver entry: `resolve(kb, request, keep=...)` narrows the framework pool (doctor's installed build)
with every other rule unchanged, and an impossible resolution carries its conflict as data."""

from stackresolve.knowledge.loader import knowledge
from stackresolve.request.parse import Flags, request_from_flags
from stackresolve.resolve import resolve


def test_keep_narrows_the_framework_pool_and_the_conflict_is_data():
    kb = knowledge()
    request = request_from_flags(kb, Flags(tf="1.15", os="linux", gpu="GTX 1080 Ti", driver="440.33"), None)
    free = resolve(kb, request)
    assert free.stack.framework.version == "1.15.5"
    # only 1.15.0 kept: the same rules pick it
    kept = resolve(kb, request, keep=lambda c: getattr(c, "version", None) == "1.15.0")
    assert kept.stack.framework.version == "1.15.0" and kept.alternatives == ()
    # a driver too old for CUDA 10.0 (410.48 on Linux, CUDA 10.0 release notes Table 3): no stack, and the
    # driver's side of the conflict names CUDA 10.0's floor
    old = request_from_flags(kb, Flags(tf="1.15", os="linux", gpu="GTX 1080 Ti", driver="390.157", vendor="stock"), None)
    impossible = resolve(kb, old, keep=lambda c: getattr(c, "version", None) == "1.15.5")
    assert impossible.stack is None
    drivers = [c for c in impossible.causes if c.component == "driver"]
    assert drivers and any("410.48" in c.text for c in drivers)
