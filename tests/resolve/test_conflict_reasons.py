"""The reason a request is impossible (issue 32, item 2): the first reason is one no driver can fix, and a fix
offered is one the machine can take.

Sources of the expected values:
- NVIDIA's CUDA Toolkit, Driver and Architecture Matrix
  (https://docs.nvidia.com/datacenter/tesla/drivers/cuda-toolkit-driver-and-architecture-matrix.html): Kepler
  3.5/3.7, last CUDA toolkit 11.x, last driver branch R470; NVIDIA's Unix driver page: the latest legacy (470.xx
  series) driver is 470.256.02.
- CUDA 12.0 release notes (Deprecated or Dropped Architectures): Kepler (sm_35, sm_37) support removed; CUDA 13.0
  release notes: Maxwell, Pascal and Volta removed (compute capability 7.5 and later).
- CUDA release notes, Table 3: CUDA 13.0 GA needs driver >= 580.65.06 on Linux.
- The matrix row of a GeForce GTX 780 (compute capability 3.5; NVIDIA's CUDA GPU list) for PyTorch 2.14: no build
  of that line carries sm_35 code (pytorch.toml's measured and build-script arch lists).
"""

from packaging.version import Version

from stackresolve.request.parse import Flags, request_from_flags
from stackresolve.knowledge.records import ArchSupport
from stackresolve.browse.matrix import build_matrix
from stackresolve.model.enums import Severity
from stackresolve.resolve import resolve
from stackresolve.resolve.conflicts import _ranked, reason_rank
from stackresolve.resolve.requirements import DriverAtLeast


def _resolution(kb, **flags):
    return resolve(kb, request_from_flags(kb, Flags(os="linux", **flags), None))


def _errors(resolution):
    return [f.message for f in resolution.findings if f.severity is Severity.ERROR]


def test_newest_pytorch_on_a_kepler_card_is_not_blamed_on_the_driver(kb):
    resolution = _resolution(kb, torch="latest", gpu="GTX 780", driver="470")
    assert resolution.stack is None
    errors = _errors(resolution)
    # CUDA 13.0 dropped Kepler: no driver brings it back, so that is the first reason, not 13.0's driver minimum
    assert "needs a CUDA toolkit that still supports compute capability 3.5" in errors[0]
    assert not any("580" in e for e in errors[:1])
    # the builds the code test removed are named, as a range
    assert any(e.startswith("no other PyTorch build (") and "1.8.0 ... 2.15.0) has SASS or PTX" in e for e in errors)
    # no alternative asks for a driver past Kepler's last branch (R470)
    assert all("upgrade the driver" not in a.why for a in resolution.alternatives)
    assert [a.stack.cuda for a in resolution.alternatives] == [None]  # the CPU build is the one fix it can take


def test_the_matrix_row_gives_the_same_reason(kb):
    request = request_from_flags(kb, Flags(os="linux", torch="latest", gpu="GTX 780", driver="470"), None)
    cells = {c.line: c for c in build_matrix(kb, request, ["linux"])}
    assert "needs a CUDA toolkit that still supports compute capability 3.5" in cells["2.15"].reason
    assert "needs a PyTorch build with SASS or PTX for it" in cells["2.14"].reason


def test_a_driver_minimum_past_the_last_branch_says_no_driver_meets_it(kb):
    kepler = next(a for a in kb.arch_support if a.architecture == "kepler")
    assert isinstance(kepler, ArchSupport) and kepler.last_branch == "470" and kepler.last_version == "470.256.02"
    needs_580 = DriverAtLeast(Version("580.65.06"), "CUDA 13.0 needs an NVIDIA driver >= 580.65.06 on linux", "src")
    (rank, _), finding = _ranked(needs_580, needs_580.text, kepler)
    assert rank == 0 and "up to the R470 branch (470.256.02), so no driver this GPU takes meets it" in finding.message
    assert kepler.source in finding.source
    needs_450 = DriverAtLeast(Version("450.80.02"), "CUDA 11.1 needs an NVIDIA driver >= 450.80.02 on linux", "src")
    (rank, _), finding = _ranked(needs_450, needs_450.text, kepler)
    assert rank == reason_rank(needs_450) == 3 and finding.message == needs_450.text


def test_a_driver_upgrade_that_fixes_it_is_still_offered_first_among_drivers(kb):
    # An RTX 4090 (8.9) needs CUDA 11.8's driver, >= 520.61.05 (CUDA 11.8 release notes, Table 3): an upgrade the
    # card can take, so it stays the reason and the fix.
    resolution = _resolution(kb, torch="latest", gpu="RTX 4090", driver="470")
    errors = _errors(resolution)
    assert ">= 520.61.05" in errors[0]
    assert any("upgrade the driver to 520.61.05" in a.why for a in resolution.alternatives)


def test_conflicts_over_many_releases_name_a_range(kb):
    # JAX on driver 470: every CUDA 12 jax release needs >= 525.60.13 (CUDA 12.x minor-version compatibility).
    resolution = _resolution(kb, jax="latest", gpu="GTX 1080", driver="470")
    for message in _errors(resolution):
        assert message.count("jax 0.") <= 3, message
    assert any("0.4.26 ... 0.12.0.1 (" in m and " releases)" in m for m in _errors(resolution))


def test_a_gpu_need_every_release_in_the_conflict_meets_is_not_its_reason(kb):
    # TF 2.21's and-cuda extra pins cuDNN 9.3.0 (tensorflow 2.21.0 METADATA); --cudnn 9.28.0 asks another. Both
    # support compute capability 8.0 (cudnn.toml: 9.3.0 from 5.0, 9.28.0 from 7.5), so "the GPU needs a cuDNN that
    # still supports 8.0" excludes neither: ranked first as "what no driver can fix" it sent the reader the wrong way.
    resolution = _resolution(kb, tf="2.21", gpu_cc="8.0", cudnn="9.28.0")
    assert resolution.stack is None
    errors = _errors(resolution)
    assert not any("still supports compute capability 8.0" in e for e in errors), errors
    assert any("brings cuDNN 9.3.0" in e for e in errors) and any("9.28.0 was asked for" in e for e in errors)
