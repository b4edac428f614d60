"""`matrix` shares a cell between GPUs whose answers cannot differ (matrix.py: a GPU signature holds what the
resolver's decisions read of a GPU, and the names an impossible cell's message adds are keyed apart only where a
driver requirement can fail), and the resolver's search between GPUs that make the same choices in it (what the
search reads: without the cuDNN warnings, and without the GPUs' driver floor where no driver requirement can fail;
each cell's stack is still built for its own GPU). This specifies that the sharing never changes an answer: every
GPU's matrix, built after many other GPUs' in one knowledge base, is the matrix that GPU gets resolved on its own.
(Keeping the floor out of the search where a driver is named makes three of these cases fail.)"""

import pytest

from stackresolve.request.parse import Flags, request_from_flags
from stackresolve.knowledge.loader import load_knowledge
from stackresolve.browse.matrix import build_matrix

# One GPU per kind of answer: Kepler (its last driver branch, R470, binds), Maxwell (R580: binds only past it),
# Turing, Ampere (sm_86 came with CUDA 11.1), Ada (sm_89 with CUDA 11.8), Hopper (sm_90, also CUDA 11.8: the same
# driver floor as the L4's, its message names another architecture), Blackwell (sm_120); each without a driver
# and with an old one (where the GPUs' floor and the last branch read differently, and a driver requirement fails).
GPUS = ("Tesla K80", "GeForce GTX 980", "Tesla T4", "A40", "L4", "H100 SXM5 80GB", "GeForce RTX 5090")
DRIVERS = (None, "470.82.01")
SYSTEMS = ["linux", "windows", "wsl2"]


def _matrix(kb, gpu: str, driver: str | None):
    return build_matrix(kb, request_from_flags(kb, Flags(gpu=gpu, os="linux", driver=driver), None), SYSTEMS)


@pytest.fixture(scope="module")
def shared():
    kb = load_knowledge()  # one knowledge base: its memos hold the cells every GPU's matrix shares
    return {(gpu, driver): _matrix(kb, gpu, driver) for driver in DRIVERS for gpu in GPUS + tuple(reversed(GPUS))}


@pytest.mark.parametrize("driver", DRIVERS)
@pytest.mark.parametrize("gpu", GPUS)
def test_a_shared_matrix_is_the_gpus_own(shared, gpu, driver):
    alone = _matrix(load_knowledge(), gpu, driver)  # fresh memos: nothing shared
    assert shared[gpu, driver] == alone  # impossible cells' messages included
