"""What every plan that is a script or a commented file shares (Dockerfile, PowerShell, apt's bash script, conda's
environment.yml): text from the knowledge base, the request or the machine goes into a comment on one line, since
a line break inside a comment would start an instruction (a YAML key, a shell command)."""

from __future__ import annotations

import re

from stackresolve.formats.header import header_lines

# control characters, and the line breaks YAML (and Unicode-aware readers) know beyond them: NEL, LS, PS
_LINE_BREAKS = re.compile(r"[\x00-\x1f\x7f\u2028\u2029\x85]+")

# The shapes plans print, "name[extra]==1.2.3+cu121" and "name<2,>=1": PEP 508's name and extras, then version
# specifiers with no blank, no marker and no URL. packaging.specifiers (imported by every plan already) checks the
# specifiers; a line of this shape it accepts is a PEP 508 requirement, and nothing else (no blank, ';', quote or
# leading '-') can pass the pattern.
_NAME = r"[A-Za-z0-9](?:[A-Za-z0-9._-]*[A-Za-z0-9])?"
_SPECIFIER = r"(?:===|==|!=|<=|>=|~=|<|>)[A-Za-z0-9.*+!_-]+"
_PLAIN_REQUIREMENT = rf"{_NAME}(?:\[{_NAME}(?:,{_NAME})*\])?({_SPECIFIER}(?:,{_SPECIFIER})*)?"


def check_requirement(line: str) -> None:
    """Raises packaging's InvalidRequirement unless `line` is a PEP 508 requirement. A line of the plain shape is
    checked with packaging.specifiers; any other line with packaging.requirements, which costs 10-20 ms to import
    (markers, tags, logging, sysconfig): `plan --format json` renders every format's pip lines."""
    plain = re.fullmatch(_PLAIN_REQUIREMENT, line)
    if plain is not None:
        # lazy: start-up (packaging.specifiers, only this path)
        from packaging.specifiers import InvalidSpecifier, SpecifierSet

        try:
            SpecifierSet(plain[1] or "")
            return
        except InvalidSpecifier:
            pass  # packaging.requirements says what is wrong
    from packaging.requirements import Requirement  # lazy: start-up

    Requirement(line)


def requirement_lines(pip) -> tuple[str, ...]:
    """A pip plan's requirement lines, each checked to be a requirement (PEP 508) and nothing else before it lands
    in a script, a requirements file or a lock, so no text of the knowledge base ever becomes an option or a
    command there. It runs where a plan is rendered, not where formats are only decided (the text summary decides
    every install format)."""
    for line in pip.requirements:
        check_requirement(line)
    return pip.requirements


def one_line(text: str) -> str:
    """Comment text on one line: each run of control characters or line breaks becomes one space."""
    return _LINE_BREAKS.sub(" ", text)


def comment(text: str) -> str:
    """One `# ` comment line, trailing blanks removed."""
    return "# " + one_line(text).rstrip() + "\n"


COMMENT_WIDTH = 100  # prose comments wrap here: a 900-character reason is unreadable on one line


def wrapped_comment(text: str, prefix: str = "# ", width: int = COMMENT_WIDTH) -> str:
    """Prose as `# ` comment lines of at most `width` characters, broken between words only (a URL or a command
    stays whole, so a line may exceed the width by one long word); control characters made spaces first. The
    lines continue without an indent: `#   ` starts a command in a plan (scripts/verify_plans.py reads them)."""
    # lazy: no start-up gain (already loaded by then); kept beside its use
    import textwrap

    lines = textwrap.wrap(one_line(text).strip(), width=width, initial_indent=prefix, subsequent_indent=prefix,
                          break_long_words=False, break_on_hyphens=False)
    return "".join(line.rstrip() + "\n" for line in lines) or prefix.rstrip() + "\n"


def safe_header(resolution, kind: str) -> str:
    """The plan header (formats.header) as `# ` comment lines."""
    return "".join(f"# {one_line(line)}\n" for line in header_lines(resolution, kind))
