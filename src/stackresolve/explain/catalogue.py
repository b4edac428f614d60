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


@lru_cache(maxsize=4)
def _tables(statuses: tuple[LibraryStatus, ...]) -> tuple[dict[str, LibraryStatus], dict[str, LibraryStatus],
                                                          tuple[tuple[bytes, str], ...]]:
    """(name -> status, lower-cased text -> status, (shape pattern, pattern) of the long texts and of NVML's)."""
    by_name = {s.name: s for s in statuses}
    by_text: dict[str, LibraryStatus] = {}
    for status in statuses:
        if status.text and status.library != "cuda-driver":  # the runtime's status is the one named for a text
            by_text.setdefault(" ".join(status.text.lower().split()), status)
    def alternation(texts, shape=False):
        texts = sorted((shape_of(t) if shape else t for t in texts), key=len, reverse=True)
        return "|".join(r"[ \t]+".join(map(re.escape, text.split())) for text in texts)
    long_texts = [t for t, s in by_text.items() if len(t) >= _MIN_TEXT and s.library != "nvml"]
    nvml_texts = [t for t, s in by_text.items() if s.library == "nvml"]
    patterns = []
    if long_texts:
        patterns.append((alternation(long_texts, True).encode(), f"(?i)(?P<t>{alternation(long_texts)})"))
    if nvml_texts:  # NVML's texts are short and common words: only after NVML is named on the same line
        patterns.append((f"nvml[^\n]*?(?:{alternation(nvml_texts, True)})".encode(),
                         f"(?i)nvml[^\n]*?(?P<t>{alternation(nvml_texts)})"))
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
    for shape_pattern, pattern in text_patterns:
        for m in scan.finditer_in_shapes(shape_pattern, cached_regex(pattern)):
            status = by_text.get(" ".join(m.group("t").lower().split()))
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
