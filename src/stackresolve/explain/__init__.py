"""Explain an error message or a whole log: which known errors it contains, what they mean, the likely cause,
the fix, and every version and fact of the machine the text reveals; and turn that into the typed request for
a fix.

    scan      the text, searched quickly (literal needles before regular expressions)
    versions  versions and context the text shows (framework, OS and WSL2, container, GPU, driver, CUDA, cuDNN,
              Python, the build's variant) and the versions library file names stand for
    match     the known messages (patterns, and templates from the code that prints them) -> an Explanation
    fix       the Explanation (and the command line) -> what a fix must satisfy, for the resolver
    render    the Explanation for the terminal

Pure functions, no I/O: the knowledge (constraints/errors.toml, parsed by stackresolve.knowledge.errors; the
knowledge base) is passed in.
"""

from stackresolve.explain.fix import (
    GPU_CATEGORIES,
    NOT_FIXED_BY_A_STACK,
    NOT_PLANNED_BY_EXPLAIN,
    FixOverrides,
    FixRequest,
    fix_request,
    requested_stack,
)
from stackresolve.explain.match import SCHEMA, Explanation, Match, explain_text, frameworks_seen, log_framework
from stackresolve.explain.render import render_text
from stackresolve.explain.scan import _Text, pattern_needles
from stackresolve.explain.versions import (
    extract_versions,
    intersect_candidates,
    library_candidates,
    normalize_version,
)

__all__ = [
    "GPU_CATEGORIES", "NOT_FIXED_BY_A_STACK", "SCHEMA", "Explanation", "FixOverrides", "FixRequest", "Match",
    "_Text", "explain_text", "extract_versions", "fix_request", "frameworks_seen", "intersect_candidates",
    "library_candidates", "log_framework", "normalize_version", "pattern_needles", "render_text", "requested_stack",
    "NOT_PLANNED_BY_EXPLAIN",
]
