"""The NVIDIA driver is decided once (issue 35, item 2): the resolver's driver candidate (resolve/driver.py
decide_driver) carries the plan's driver, its minimum, the detected driver, ok, why and source, and build_stack reads
it; the floors are rules in knowledge/rules.py; the provider keeps only resolvelib's protocol. So `build` and the
provider cannot disagree on the driver: held here in code and over many requests."""

from __future__ import annotations

import ast
import inspect
import itertools

import pytest
from packaging.version import Version

import stackresolve.resolve.build as build_module
from stackresolve.request.parse import Flags, request_from_flags
from stackresolve.knowledge import rules
from stackresolve.resolve import resolve
from stackresolve.resolve.build import build_stack
from stackresolve.resolve.conflicts import conflict_causes
from stackresolve.resolve.driver import newest_supported_driver
from stackresolve.resolve.provider import StackProvider
from stackresolve.resolve.solve import UNSOLVABLE, solve

FRAMEWORKS = [dict(tf="1.15"), dict(tf="1.15", vendor="nvidia"), dict(tf="2.4"), dict(tf="2.15"), dict(tf="latest"),
              dict(torch="1.13"), dict(torch="latest"), dict(jax="0.4"), dict(jax="latest")]
# Kepler (3.7, last branch R470), Pascal, Ampere A100 and RTX 30xx, Hopper, Blackwell RTX 50xx
CCS = ["3.7", "6.1", "8.0", "8.6", "9.0", "12.0"]
# none; bare branches (issue 32: a branch stands for its releases); full Linux releases; a Windows-numbered one
DRIVERS = [None, "470", "580", "450", "535.104.05", "410.48", "572.60"]


def _names_in(module) -> set[str]:
    tree = ast.parse(inspect.getsource(module))
    return {n.id for n in ast.walk(tree) if isinstance(n, ast.Name)} | \
        {n.attr for n in ast.walk(tree) if isinstance(n, ast.Attribute)} | \
        {a.name for n in ast.walk(tree) if isinstance(n, ast.ImportFrom) for a in n.names}


def test_build_has_no_path_that_decides_the_driver():
    # the rules that make a driver minimum, raise it, or judge an installed driver against it
    deciding = {"raised_minimum", "planned_driver_minimum", "toolkit_driver", "minor_compat_floor", "driver_meets",
                "branch_release_needed", "newest_supported_driver", "gpu_driver_floor", "driver_floor_raises",
                "nvidia_driver_requirement", "driver_fact", "decide_driver"}
    assert not deciding & _names_in(build_module)


def test_the_provider_keeps_only_resolvelibs_protocol():
    protocol = {"identify", "get_preference", "narrow_requirement_selection", "find_matches", "is_satisfied_by",
                "get_dependencies"}
    public = {name for name, value in vars(StackProvider).items() if callable(value) and not name.startswith("_")}
    assert public == protocol
    # the floors are rules, stated in knowledge/rules.py and nowhere else
    for rule in ("planned_driver_minimum", "toolkit_driver"):
        assert hasattr(rules, rule)
        for module in (build_module, inspect.getmodule(StackProvider)):
            assert rule not in {f.name for f in ast.walk(ast.parse(inspect.getsource(module)))
                                if isinstance(f, ast.FunctionDef)}


def _request(kb, os_name: str, cc: str, driver: str | None, framework: dict):
    return request_from_flags(kb, Flags(os=os_name, gpu_cc=cc, driver=driver, **framework), None)


@pytest.mark.parametrize("os_name", ["linux", "windows", "wsl2"])
def test_the_plans_driver_is_the_resolved_candidates(kb, os_name):
    resolved = 0
    for framework, cc, driver in itertools.product(FRAMEWORKS, CCS, DRIVERS):
        request = _request(kb, os_name, cc, driver, framework)
        try:
            mapping = solve(kb, request).mapping
        except UNSOLVABLE:
            continue
        stack, findings = build_stack(kb, request, mapping)
        if stack.driver is None:  # a CPU build: no driver in the plan
            continue
        resolved += 1
        candidate, pin = mapping["driver"], stack.driver
        where = (framework, cc, driver, os_name)
        assert pin is candidate.pin, where
        assert {f.code for f in candidate.findings} <= {f.code for f in findings}, where
        if driver is not None:
            # the resolver accepted the installed driver: the plan says it is ok, never "too old"
            assert pin.detected == driver and (pin.ok is True or pin.minimum is None), where
        elif "driver-newest-branch" in {f.code for f in findings}:
            # planned for the GPUs' last branch, as if its newest driver were installed, through minor-version
            # compatibility: the plan's minimum is that compatibility floor
            newest = newest_supported_driver(kb, request)
            assert candidate.detected == Version(newest.last_version), where
            assert pin.minimum == pin.minor_compat_minimum and Version(pin.minimum) <= candidate.detected, where
        else:
            # the plan's minimum is the candidate every driver requirement was judged against
            assert pin.ok is None and Version(pin.minimum) == candidate.minimum, where
    assert resolved > 100  # the product reaches well past a handful of stacks


def test_a_shared_search_decides_the_driver_for_each_request(kb):
    # TensorFlow 2.4 uses CUDA 11.0 (450.51.05 on Linux); an RTX 3090 (compute capability 8.6, first toolkit
    # CUDA 11.1: >= 455.23, CUDA 11.1 release notes Table 3) raises it, an A100 (8.0, CUDA 11.0) does not. The
    # search is shared; the driver is each request's own, as if it had been searched alone.
    from stackresolve.knowledge.loader import load_knowledge

    own = load_knowledge()  # shared searches live in the knowledge base's resolver cache
    a100 = request_from_flags(own, Flags(tf="2.4", os="linux", gpu="A100"), None)
    rtx = request_from_flags(own, Flags(tf="2.4", os="linux", gpu="RTX 3090", driver="455"), None)
    resolve(own, a100, with_alternatives=False, same_search="k")
    shared = resolve(own, rtx, with_alternatives=False, same_search="k")
    alone = resolve(own, rtx, with_alternatives=False)
    assert shared.stack.driver == alone.stack.driver and shared.findings == alone.findings
    assert (shared.stack.driver.minimum, shared.stack.driver.ok) == ("455.23", True)
    # R455 meets 455.23 only from that release on: the plan says which release of the branch it needs
    assert any(f.code == "driver-branch-release" and "455.23" in f.message for f in shared.findings)


def test_a_conflict_does_not_blame_a_floor_the_installed_branch_meets(kb):
    # TensorFlow 2.15 needs CUDA 12.2's 535.54.03; the A100's own floor (CUDA 11.0: 450.51.05) lies inside the
    # R450 branch given, which meets it (a branch stands for its releases, knowledge.rules.driver_meets). Only
    # the build's minimum is a side of the conflict. Before: the branch was read as the version 450 and the GPU's
    # floor was named as a side too.
    request = _request(kb, "linux", "8.0", "450", dict(tf="2.15"))
    with pytest.raises(UNSOLVABLE) as caught:
        solve(kb, request)
    texts = [info.requirement.text for info in conflict_causes(request, caught.value)]
    assert not any("compute capability 8.0" in text for text in texts)
    assert any("535.54.03" in text for text in texts)
    plan = resolve(kb, request, with_alternatives=False)
    assert not any("compute capability 8.0 (Ampere) GPUs need" in f.message for f in plan.findings)
