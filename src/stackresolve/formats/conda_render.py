"""`--format conda`: renders the conda plan as an environment.yml (PyYAML's safe_dump; the header is YAML
comments)."""

from __future__ import annotations

from stackresolve.formats.header import header_lines
from stackresolve.formats.script import comment, requirement_lines
from stackresolve.formats.conda_decide import CondaPlan


def render(plan) -> str:
    # lazy: start-up (PyYAML ~10 ms)
    import yaml  # lazily: only this format needs PyYAML

    plan: CondaPlan
    requirement_lines(plan.pip)
    document = {"name": plan.name, "channels": list(plan.channels),
                "dependencies": [f"python={plan.python}", *plan.cuda_specs, "pip", {"pip": list(plan.pip_in_env)}]}
    comments = [*header_lines(plan.resolution, "conda"),
                f"Create it: conda env create -f environment.yml && conda activate {plan.name}", *plan.notes]
    body = yaml.safe_dump(document, sort_keys=False, default_flow_style=False, allow_unicode=False)
    return "".join(comment(line) for line in comments) + body
