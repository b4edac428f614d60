"""The library statuses of constraints/error_catalogue.toml, found wherever they sit in a text.

A library's error reaches a user through many programs: NVML's "Driver/library version mismatch" through nvidia-smi,
nvtop, the NVIDIA container CLI, docker and a Kubernetes event; cuBLAS's CUBLAS_STATUS_NOT_INITIALIZED through
PyTorch's RuntimeError. The status is recognised by its own name (cudaErrorInsufficientDriver, CUDA_ERROR_NO_DEVICE,
CUDNN_STATUS_NOT_INITIALIZED, ...) or by the text the library prints for it, whatever surrounds it; the program
around it ([[outer_program]] of errors.toml) only says where it was seen (and, for a container runtime, that the fix
is on the host), never whether it is known.
"""

from __future__ import annotations

import re
from dataclasses import dataclass
from functools import lru_cache
from typing import Sequence

from stackresolve.explain.scan import _Text, shape_of
from stackresolve.knowledge.errors import cached_regex
from stackresolve.knowledge.errors import LibraryStatus, OuterProgram

# Every status name of the catalogue's enums has one of these shapes (the headers' own naming).
_NAMES = (r"(?<![A-Za-z0-9_])(?:cudaError[A-Z][A-Za-z0-9]*|CUDA_ERROR_[A-Z0-9_]+|NVML_ERROR_[A-Z_]+|CUDNN_STATUS_[A-Z_]+"
          r"|CUBLAS_STATUS_[A-Z_]+|CUFFT_[A-Z_]+|CUSOLVER_STATUS_[A-Z_]+|CUSPARSE_STATUS_[A-Z_]+"
          r"|nccl(?:UnhandledCudaError|SystemError|InternalError|InvalidArgument|InvalidUsage|RemoteError|Timeout))"
          r"(?![A-Za-z0-9_])")
# The same names as the line shapes spell them (lower-cased): the shapes are searched with it first.
_NAME_SHAPES = (rb"cudaerror[a-z]|cuda_error_|nvml_error_|cudnn_status_|cublas_status_|cufft_|cusolver_status_"
                rb"|cusparse_status_|nccl(?:unhandledcudaerror|systemerror|internalerror|invalidargument|invalidusage"
                rb"|remoteerror|timeout)")
_MIN_TEXT = 20  # a shorter text ("timeout", "Unknown Error") is a status only where its library is named beside it
LIBRARY_NAMES = {"cuda-runtime": "the CUDA runtime", "cuda-driver": "the CUDA driver API", "nvml": "NVML",
                 "cudnn": "cuDNN", "cublas": "cuBLAS", "cufft": "cuFFT", "cusolver": "cuSOLVER",
                 "cusparse": "cuSPARSE", "nccl": "NCCL"}


@dataclass(frozen=True)
class StatusHit:
    status: LibraryStatus
    spans: tuple[tuple[int, int], ...]
    via: str  # the outer program of the first occurrence ("" when none is recognised)
    container: bool  # some occurrence comes through a container runtime


def _kebab(name: str) -> str:
    if "_" in name:
        return name.lower().replace("_", "-")
    return re.sub(r"(?<=[a-z0-9])(?=[A-Z])", "-", name).lower()


def status_code(status: LibraryStatus) -> str:
    """The explain@1 code of a status: its library and its name (cuda-runtime.cuda-error-insufficient-driver)."""
    return f"{status.library}.{_kebab(status.name)}"


# Between the words of a text: blanks, or the escapes a JSON string (a docker json-file line, a Kubernetes event, a log
# shipper's record) writes for them: \n \t \r \u0020, escaped once or twice (a JSON string quoted in another). The
# pattern is a character class, wider than those (cheap to compile: it stands between every two words); the matched
# text, its escapes read, must then be a catalogue text word for word (_plain), which rejects the rest.
_ESCAPE = r"\\{1,3}"
_SEPARATOR = r"[ \t\\nrtu02]+"
# The same in the line shapes (lower-cased, digits read as 0).
_SHAPE_SEPARATOR = r"[ \t\\nrtu0]+"
# A line hard-wrapped by a terminal or a CI log at a space of the text: a line break too (the lines read are a line and
# the next one, which starts with a word of the text: one line break, never a blank line).
_WRAPPED_SEPARATOR = r"[ \t\n\\nrtu02]+"
# The characters JSON encoders escape: " and \ always, / by json-c (rsyslog/libfastjson#5) and PHP, ' = < > & as
# \u0027 ... by HTML-safe encoders (Gson; Go's for < > &); other characters are written as they are
_JSON_ESCAPED = frozenset('"\\/\'=<>&')
# A JSON escape as the lines' text carries it, to be read as the character for the text's look-up only (never printed)
_JSON_ESCAPE = r"\\{1,3}(?:u([0-9a-fA-F]{4})|([nrt])|(.))"


def _word(word: str, shape: bool) -> str:
    """A word of a text as a pattern: as it is, each character a JSON encoder may escape also as escaped (\\/, \\",
    \\u0027 ...). `shape`: as the line shapes spell it (lower-cased, digits read as 0)."""
    spell = shape_of if shape else (lambda t: t)
    out, run = [], ""
    for char in word:
        if char not in _JSON_ESCAPED:
            run += char
            continue
        if run:
            out.append(re.escape(spell(run)))
            run = ""
        # the character, backslashed (JSON does it for / " \\; wider, for fewer branches) or as \uXXXX
        out.append(rf"(?:\\{{0,3}}{re.escape(spell(char))}|{_ESCAPE}{re.escape(spell(f'u{ord(char):04x}'))})")
    if run:
        out.append(re.escape(spell(run)))
    return "".join(out)


def _spelled(text: str, shape: bool, separator: str) -> str:
    return separator.join(_word(word, shape) for word in text.split())


def _prefixes(text: str) -> str:
    """The shape pattern of a line ending with the first words of `text`, not all of them (a wrapped text's first
    line): w1(?: w2(?: w3)?)? and blanks to the line's end."""
    words = text.split()[:-1]
    separator = _SHAPE_SEPARATOR
    nested = ""
    for word in reversed(words[1:]):
        nested = f"(?:{separator}{_word(word, True)}{nested})?"
    return f"{_word(words[0], True)}{nested}"


def _plain(text: str) -> str:
    """A matched text as the catalogue's look-up key: JSON escapes read, blanks and line breaks as one space."""
    def read(m: re.Match[str]) -> str:
        return chr(int(m.group(1), 16)) if m.group(1) else " " if m.group(2) else m.group(3)
    if "\\" in text:
        text = cached_regex(_JSON_ESCAPE).sub(read, text)
    return " ".join(text.lower().split())


@dataclass(frozen=True)
class _TextPattern:
    shape: bytes  # the lines' shapes holding a text (lower-cased, digits as 0)
    regex: str  # the text itself, group "t", on those lines
    wrap_shape: bytes  # the lines' shapes ending with a text's first words (re.M)
    wrap_regex: str  # the text over such a line and the next
    continued: tuple[str, ...]  # the words a text's continuation line may start with (lower-cased)


@lru_cache(maxsize=4)
def _tables(statuses: tuple[LibraryStatus, ...]) -> tuple[dict[str, LibraryStatus], dict[str, LibraryStatus],
                                                          tuple[_TextPattern, ...]]:
    """(name -> status, lower-cased text -> status, the patterns of the long texts and of NVML's)."""
    by_name = {s.name: s for s in statuses}
    by_text: dict[str, LibraryStatus] = {}
    for status in statuses:
        if status.text and status.library != "cuda-driver":  # the runtime's status is the one named for a text
            by_text.setdefault(" ".join(status.text.lower().split()), status)

    def alternation(texts, shape=False, separator=_SEPARATOR):
        texts = sorted(texts, key=len, reverse=True)
        if shape:
            separator = _SHAPE_SEPARATOR
        return "|".join(_spelled(text, shape, separator) for text in texts)

    def wrap_shape(texts, before=""):
        ends = "|".join(_prefixes(t) for t in sorted(texts, key=len, reverse=True) if len(t.split()) > 1)
        return f"(?m){before}(?<![a-z0-9_])(?:{ends})[ \t]*$".encode()

    def continued(texts):
        return tuple(sorted({word for t in texts for word in t.split()[1:]}))

    wrapped = _WRAPPED_SEPARATOR
    long_texts = [t for t, s in by_text.items() if len(t) >= _MIN_TEXT and s.library != "nvml"]
    nvml_texts = [t for t, s in by_text.items() if s.library == "nvml"]
    patterns = []
    if long_texts:
        patterns.append(_TextPattern(
            alternation(long_texts, True).encode(), f"(?i)(?P<t>{alternation(long_texts)})",
            wrap_shape(long_texts), f"(?i)(?<![A-Za-z0-9_])(?P<t>{alternation(long_texts, separator=wrapped)})",
            continued(long_texts)))
    if nvml_texts:  # NVML's texts are short and common words: only after NVML is named on the line they start on
        patterns.append(_TextPattern(
            f"nvml[^\n]*?(?:{alternation(nvml_texts, True)})".encode(),
            f"(?i)nvml[^\n]*?(?P<t>{alternation(nvml_texts)})",
            wrap_shape(nvml_texts, "nvml[^\n]*?"),
            f"(?i)nvml[^\n]*?(?P<t>{alternation(nvml_texts, separator=wrapped)})", continued(nvml_texts)))
    return by_name, by_text, tuple(patterns)


def _line_at(text: str, pos: int) -> str:
    start = text.rfind("\n", 0, pos) + 1
    end = text.find("\n", pos)
    return text[start:end if end != -1 else len(text)]


def find_statuses(scan: _Text, statuses: Sequence[LibraryStatus], outer: Sequence[OuterProgram]) -> list[StatusHit]:
    """Every catalogued status the text shows, by name or by printed text, with the program it came through."""
    if not statuses:
        return []
    by_name, by_text, text_patterns = _tables(tuple(statuses))
    spans: dict[str, list[tuple[int, int]]] = {}
    for m in scan.finditer_in_shapes(_NAME_SHAPES, cached_regex(_NAMES)):
        status = by_name.get(m.group(0))
        if status is not None:
            spans.setdefault(status.name, []).append(m.span())
    for pattern in text_patterns:
        # on one line, then over a line that ends with a text's first words and the next (a hard wrap)
        for m in (*scan.finditer_in_shapes(pattern.shape, pattern.regex),
                  *scan.finditer_in_shapes(pattern.wrap_shape, pattern.wrap_regex, pattern.continued)):
            status = by_text.get(_plain(m.group("t")))
            if status is not None:
                spans.setdefault(status.name, []).append(m.span("t"))
    hits: list[StatusHit] = []
    for name, found in spans.items():
        found = sorted(set(found))
        via, container = "", False
        for start, _end in found:
            line = _line_at(scan.text, start)
            for program in outer:
                if program.regex.search(line):
                    via = via or program.name
                    container = container or program.container
                    break
        hits.append(StatusHit(status=by_name[name], spans=tuple(found), via=via, container=container))
    return hits
