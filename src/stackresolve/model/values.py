"""Small immutable values for the numbers the rules compare: a GPU's compute capability, a driver version and a
CUDA line. Like packaging's `tags.Tag`: parsed once from text at the edge, then ordered, hashed and printed.

Plain classes with `__slots__`, not dataclasses or NamedTuples: defining one costs ~0.02 ms at import against
~0.17 ms for a NamedTuple and ~1.5 ms for a frozen ordered dataclass (measured on this project's machine), and
unlike a NamedTuple a value never equals a bare tuple or a value of another kind (ComputeCapability(8, 6) is no
CudaLine(8, 6)), and never turns silently into a JSON list.

Text is read by the project's number rule (model/numbers.py): ASCII digits only, at most MAX_DIGITS a part. Each
value has ONE parser, `parse`, which every way text comes in uses (a flag, an environment variable, a probe's
reading, a lock, a fleet file, the knowledge base), as rattler's EnvOverride reads one variable one way: a text one
of them refuses is refused by all, with the same `ValueTextError` saying what is accepted."""

from __future__ import annotations

from functools import lru_cache

from stackresolve.model.numbers import MAX_DIGITS, quoted


def _numbers(text: str) -> tuple[int, ...] | None:
    """The dot-separated numbers of `text` under the number rule ('535.104.05' -> (535, 104, 5)), or None.
    String methods, not a regular expression: compiling one costs more at start-up than all the parsing done."""
    if not isinstance(text, str):
        return None
    parts = text.split(".")
    if not all(p.isascii() and p.isdigit() and len(p) <= MAX_DIGITS for p in parts):
        return None
    return tuple(int(p) for p in parts)


class ValueTextError(ValueError):
    """Text that is not the value asked for. `str()` is one line: the text, what it is not, what is accepted;
    `what` and `accepted` let a caller word the line for its way in ("--gpu-cc '8.12': not a compute capability;
    use ...", "STACKRESOLVE_GPU_CC='8.12' is not ...")."""

    def __init__(self, text: object, what: str, accepted: str) -> None:
        self.text = text if isinstance(text, str) else repr(text)
        self.quoted = quoted(self.text)
        self.what = what  # "a compute capability"
        self.accepted = accepted  # "use major.minor, e.g. 8.6 (...)"
        super().__init__(f"{self.quoted}: not {what}; {accepted}")


def _parsed(text: str, what: str, accepted: str, parts: int | None = None) -> tuple[int, ...]:
    """`_numbers(text)`, of exactly `parts` numbers where given; ValueTextError otherwise."""
    numbers = _numbers(text)
    if numbers is None or (parts is not None and len(numbers) != parts):
        raise ValueTextError(text, what, accepted)
    return numbers


def major_minor(text: str | None) -> str | None:
    """The major.minor a version begins with: '8.1.0.77' -> '8.1', '3.11.7' -> '3.11', '12.4 (nvcc)' -> '12.4';
    None when it does not begin with two numbers ('8', '', None) or a part breaks the number rule."""
    major, dot, rest = (text or "").partition(".")
    end = 0
    while end < len(rest) and "0" <= rest[end] <= "9":
        end += 1
    minor = rest[:end]
    if not dot or _numbers(major) is None or not minor or len(minor) > MAX_DIGITS:
        return None
    return f"{major}.{minor}"


def release_line(version: str) -> str:
    """The release line of a PEP 440 version as packaging reads it: '2.5.1+cu121' -> '2.5', '2' -> '2.0'.
    packaging's InvalidVersion (a ValueError) when it is none."""
    # lazy: start-up (packaging.version, only this path)
    from packaging.version import Version

    v = Version(version)
    return f"{v.major}.{v.minor}"


# Not @record (the record idiom): ordered, hash cached, never equal to a tuple; see the docstring above.
class _Value:
    """An immutable value ordered, compared and hashed by its `_key`, only against values of its own kind."""

    __slots__ = ("_key", "_hash")

    def __setattr__(self, name, value):
        raise AttributeError(f"{type(self).__name__} is immutable")

    def _set_key(self, key: tuple) -> None:
        object.__setattr__(self, "_key", key)
        # made once: a matrix hashes the same capabilities tens of thousands of times
        object.__setattr__(self, "_hash", hash((type(self).__name__, key)))

    def __hash__(self) -> int:
        return self._hash

    def __eq__(self, other):
        return self._key == other._key if type(other) is type(self) else NotImplemented

    def __lt__(self, other):
        return self._key < other._key if type(other) is type(self) else NotImplemented

    def __le__(self, other):
        return self._key <= other._key if type(other) is type(self) else NotImplemented

    def __gt__(self, other):
        return self._key > other._key if type(other) is type(self) else NotImplemented

    def __ge__(self, other):
        return self._key >= other._key if type(other) is type(self) else NotImplemented


class _Pair(_Value):
    """A (major, minor) value."""

    __slots__ = ("major", "minor")

    def __init__(self, major: int, minor: int) -> None:
        object.__setattr__(self, "major", major)
        object.__setattr__(self, "minor", minor)
        self._set_key((major, minor))

    def __str__(self) -> str:
        return f"{self.major}.{self.minor}"

    def __repr__(self) -> str:
        return f"{type(self).__name__}({self.major}, {self.minor})"


class ComputeCapability(_Pair):
    """An NVIDIA GPU's compute capability, "8.6": ordered as (major, minor) pairs, not as decimals (8.6 < 10.0 <
    12.0), as NVIDIA's CUDA GPU list and the CUDA C++ Programming Guide (Compute Capabilities) number them."""

    __slots__ = ()
    ACCEPTED = "use major.minor, e.g. 8.6 (a one-digit minor; sm_86 also works)"

    @staticmethod
    @lru_cache(maxsize=256)
    def parse(text: str) -> "ComputeCapability":
        """The one reading of a compute capability, wherever it comes from: '8.6', and as nvcc and the wheels'
        architecture lists name it, 'sm_86' (-> 8.6), 'sm_120' (-> 12.0); surrounding blanks ignored.
        ValueTextError for anything else: NVIDIA numbers the minor with one digit and the major with at most two
        (CUDA C++ Programming Guide, Compute Capabilities: 5.0 ... 12.1), so '8.12', '8.6.1', '８.６' and 'banana'
        name none, and a bare number ('10': 10.0 or sm_10?) is refused rather than guessed."""
        value = text.strip() if isinstance(text, str) else text
        if isinstance(value, str) and value.startswith("sm_"):
            digits = value[3:]
            if 2 <= len(digits) <= 3 and digits.isascii() and digits.isdigit():
                value = f"{digits[:-1]}.{digits[-1]}"  # sm_86, sm_120
        major, dot, minor = value.partition(".") if isinstance(value, str) else ("", "", "")
        if not (dot and 1 <= len(major) <= 2 and len(minor) == 1):
            raise ValueTextError(text, "a compute capability", ComputeCapability.ACCEPTED)
        return ComputeCapability(*_parsed(value, "a compute capability", ComputeCapability.ACCEPTED, parts=2))

    @property
    def sm(self) -> str:
        """As nvcc and the wheels' architecture lists name it: 'sm_86'."""
        return f"sm_{self.major}{self.minor}"


class CudaLine(_Pair):
    """A CUDA release line, "12.4": the major.minor of a toolkit or runtime release ("12.4.131" is on line 12.4,
    a bare major "10" is line 10.0, as TensorFlow's tested-build tables print CUDA 10.0)."""

    __slots__ = ()

    @staticmethod
    @lru_cache(maxsize=256)
    def parse(text: str) -> "CudaLine":
        """'12.4' / '12.4.131' / '10' -> the line; ValueError for anything else ('12.x', '')."""
        numbers = _parsed(text, "a CUDA version", "use e.g. 12.4 or 12.4.131")
        return CudaLine(numbers[0], numbers[1] if len(numbers) > 1 else 0)


class DriverVersion(_Value):
    """An NVIDIA driver version as NVIDIA prints it ("535.104.05"), or a bare branch ("580", as plans print a
    branch floor). Ordered by its numbers as packaging's Version orders a release: trailing zeros do not count,
    so a branch compares as the branch's first release ("580" == "580.0" < "580.65.06"). str() gives the text
    as read (NVIDIA's zero-padded "05" is kept)."""

    __slots__ = ("text", "release")

    def __init__(self, text: str, release: tuple[int, ...]) -> None:
        key = release
        while len(key) > 1 and key[-1] == 0:
            key = key[:-1]
        object.__setattr__(self, "text", text)
        object.__setattr__(self, "release", release)
        self._set_key(key)

    ACCEPTED = "use e.g. 470.82.01, 535.98 or a branch such as 580"

    @staticmethod
    @lru_cache(maxsize=256)
    def parse(text: str, tolerant: bool = False) -> "DriverVersion":
        """The one reading of a driver version, wherever it comes from (surrounding blanks ignored): as NVIDIA
        prints one, a branch of two to four digits and one or two parts of at most three ('535.104.05', '572.60',
        older '96.43'), or a bare branch of three digits ('580', as plans print a branch floor), which stands for
        the branch's releases (knowledge.rules.driver_meets). ValueTextError for anything else ('abc', '550.',
        '1.2').

        `tolerant`: what a probe may legitimately read as well, any version of two parts or more (a Windows
        display driver's own numbering, 32.0.15.6094, as WSL2 and the Windows registry report it): still refuses
        what is no version at all ('abc', '550.'), so such a reading is a finding, never a value."""
        value = text.strip() if isinstance(text, str) else text
        numbers = _numbers(value)
        if numbers is not None:
            parts = value.split(".")
            if len(parts) == 1:
                ok = len(parts[0]) == 3
            else:
                ok = len(parts) <= 3 and 2 <= len(parts[0]) <= 4 and all(1 <= len(p) <= 3 for p in parts[1:])
            if ok or (tolerant and len(parts) >= 2):
                return DriverVersion(value, numbers)
        raise ValueTextError(text, "an NVIDIA driver version", DriverVersion.ACCEPTED)

    @property
    def branch(self) -> int:
        """The driver branch: 535 for 535.104.05."""
        return self.release[0]

    def __str__(self) -> str:
        return self.text

    def __repr__(self) -> str:
        return f"DriverVersion({self.text!r})"
