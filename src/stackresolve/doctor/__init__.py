"""`stackresolve doctor`: check the installed GPU stack against what its TensorFlow needs, and the installed
PyTorch and JAX builds against the machine's GPUs and driver.

    machine = detect_machine(python_exe=...)
    report = diagnose(machine, kb, tf=None, probe_libraries=stackresolve.detect.probe_libraries)
    print(report.render_text())          # or json.dumps(report.to_json_dict())
    sys.exit(report.exit_code)           # 0 healthy (warnings allowed), 1 problems found

`diagnose` is pure given its inputs: the detected Machine, the knowledge base, and the injected library prober
(`probe_libraries(names, search_dirs) -> {name: (loads, detail)}`; None skips the load check). The target it checks
against is the resolver's stack for the installed TensorFlow on this OS (or for `tf` when given), so every finding
cites the fact behind it: the stack pin's source, TensorFlow's build files, NVIDIA's tables, pitfalls.toml.
PyTorch and JAX are checked in doctor/frameworks.py: the installed build's compiled GPU code (pytorch.toml,
jax.toml) and what the resolver says about it on this driver; their fixes are the resolver's plans.
AMD (ROCm) and Intel (XPU) GPUs are checked in doctor/amd_intel.py: device access, a container without the devices,
gfx targets no PyTorch ROCm wheel carries, a PyTorch ROCm build of another ROCm major, an Intel GPU without its driver.
"""

from __future__ import annotations

from stackresolve.doctor import checks
from stackresolve.doctor.amd_intel import check_amd_intel
from stackresolve.doctor.checks import LibraryProber
from stackresolve.doctor.frameworks import FrameworkCheck, check_frameworks, installed_frameworks
from stackresolve.doctor.machine import installed_tensorflow, machine_summary, os_of, system_of
from stackresolve.doctor.report import SCHEMA, DoctorReport, Target
from stackresolve.doctor.target import choose_target, make_target
from stackresolve.knowledge.base import KnowledgeBase
from stackresolve.model.values import major_minor

__all__ = ["SCHEMA", "DoctorReport", "FrameworkCheck", "Target", "diagnose"]


def diagnose(machine, kb: KnowledgeBase, *, tf: str | None = None,
             probe_libraries: LibraryProber | None = None) -> DoctorReport:
    """Check a detected machine against what its installed TensorFlow (or `tf`) needs, and its installed PyTorch
    and JAX against its GPUs and driver.

    Raises stackresolve.request.build.InputError for a bad `tf` (the CLI prints it and exits 2)."""
    findings = checks.carried_detection_findings(machine, kb)
    carried = {f.code for f in findings}  # a probe's own finding of the same problem wins
    findings += [f for f in check_amd_intel(machine, lambda: kb.accelerators) if f.code not in carried]
    others = installed_frameworks(machine)
    target, loaded, resolution = None, [], None
    # TensorFlow is checked where it is installed or asked for, and where no framework is installed at all
    if tf or installed_tensorflow(machine) is not None or not others:
        choice = choose_target(kb, machine, tf)
        findings += choice.findings
        resolution = choice.resolution
        stack = choice.resolution.stack if choice.resolution else None
        if stack is not None:
            target, target_findings = make_target(machine, stack, choice.origin)
            findings += target_findings
            python = major_minor(machine.python.version) if machine.python else None
            ctx = checks.Context(machine, kb, target, stack, system_of(machine), os_of(machine), python,
                                 installed_tensorflow(machine))
            findings += checks.installed_vs_target(ctx)
            if target.cuda:
                present = checks.gpu_present(ctx)
                findings += present
                if not present:
                    for check in (checks.driver, checks.gpu_support, checks.cuda, checks.and_cuda_pins,
                                  checks.cudnn, checks.search_path):
                        findings += check(ctx)
                    library_findings, loaded = checks.libraries(ctx, probe_libraries, findings)
                    findings += library_findings
                if choice.origin == "newest for this machine":
                    findings = [checks.to_install(f) for f in findings]
            else:
                findings += checks.cpu_build(ctx)
            if choice.origin != "newest for this machine":
                findings += checks.pitfalls(ctx)
        findings += checks.keras3(machine)
    framework_findings, framework_checks = check_frameworks(kb, machine, {f.code for f in findings})
    findings += framework_findings
    if resolution is None and framework_checks:
        resolution = framework_checks[0].resolution  # the plan --format pip|apt|... prints
    findings.sort(key=lambda f: f.severity.rank)  # stable: keeps the checks' order within a severity
    return DoctorReport(tuple(findings), target, machine_summary(machine), tuple(loaded), resolution,
                        tuple(framework_checks))
