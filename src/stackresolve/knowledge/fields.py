"""The one way constraints/*.toml records are validated: a record is read field by field through `Fields`, and
any shape error is one line naming the file, the record and the field. Values that later land in scripts are
checked against strict patterns here, so emitters only ever interpolate well-formed tags, versions and URLs.
Patterns are regular-expression strings, compiled on first use (re's own cache): a start that loads the
snapshot compiles none of them."""

from __future__ import annotations

import re
from typing import Iterator

from packaging.version import InvalidVersion, Version

VERSION = r"\d+(\.\d+){0,3}"
CC = r"\d{1,2}\.\d"


class KnowledgeError(ValueError):
    """A constraints file does not have the documented shape."""


class Fields:
    """One record (a TOML table) of a constraints file."""

    def __init__(self, record, where: str):
        if not isinstance(record, dict):
            raise KnowledgeError(f"{where}: must be a table")
        self.record = record
        self.where = where

    def fail(self, message: str) -> KnowledgeError:
        return KnowledgeError(f"{self.where}: {message}")

    def has(self, key: str) -> bool:
        return key in self.record

    def text(self, key: str, *, pattern: str | None = None, optional: bool = False,
             allow_empty: bool = False) -> str:
        """A string; "" when optional and absent. A pattern must match the whole value."""
        if key not in self.record:
            if optional:
                return ""
            raise self.fail(f"missing `{key}`")
        value = self.record[key]
        if not isinstance(value, str):
            raise self.fail(f"`{key}` must be a string, got {value!r}")
        if value == "":
            if optional or allow_empty:
                return ""
            raise self.fail(f"`{key}` must not be empty")
        if pattern is not None and not re.fullmatch(pattern, value):
            raise self.fail(f"`{key}` = {value!r} does not have the documented form")
        return value

    def texts(self, key: str, *, pattern: str | None = None, optional: bool = False,
              nonempty: bool = False) -> tuple[str, ...]:
        if key not in self.record:
            if optional:
                return ()
            raise self.fail(f"missing `{key}`")
        values = self.record[key]
        if not isinstance(values, list) or not all(isinstance(v, str) for v in values):
            raise self.fail(f"`{key}` must be a list of strings")
        if nonempty and not values:
            raise self.fail(f"`{key}` must not be empty")
        for value in values:
            if pattern is not None and not re.fullmatch(pattern, value):
                raise self.fail(f"`{key}` item {value!r} does not have the documented form")
        return tuple(values)

    def flag(self, key: str, *, optional: bool = False, default: bool = False) -> bool:
        if key not in self.record and optional:
            return default
        value = self.record.get(key)
        if not isinstance(value, bool):
            raise self.fail(f"`{key}` must be true or false")
        return value

    def version(self, key: str, *, optional: bool = False, allow_empty: bool = False) -> str:
        value = self.text(key, optional=optional, allow_empty=allow_empty)
        if value:
            _check_version(self, key, value)
        return value

    def versions(self, key: str, *, optional: bool = False) -> tuple[str, ...]:
        values = self.texts(key, optional=optional)
        for value in values:
            _check_version(self, key, value)
        return values

    def cc(self, key: str) -> str:
        return self.text(key, pattern=CC)

    def ccs(self, key: str) -> tuple[str, ...]:
        return self.texts(key, pattern=CC)

    def source(self) -> str:
        source = self.record.get("source")
        if not isinstance(source, str) or not source.strip():
            raise self.fail("record has no `source`")
        return source

    def note(self) -> str:
        return self.text("note", optional=True)

    def one_of(self, key: str, allowed: tuple[str, ...], *, optional: bool = False) -> str:
        value = self.text(key, optional=optional)
        if value and value not in allowed:
            raise self.fail(f"`{key}` = {value!r} must be one of {', '.join(allowed)}")
        return value


def _check_version(fields: Fields, key: str, value: str) -> None:
    try:
        Version(value)
    except InvalidVersion:
        raise fields.fail(f"`{key}` = {value!r} is not a version") from None


def records(doc, table: str, file: str) -> Iterator[Fields]:
    """Each record of an array of tables."""
    if not isinstance(doc, dict):
        raise KnowledgeError(f"{file}: the document must be a table")
    rows = doc.get(table, [])
    if not isinstance(rows, list):
        raise KnowledgeError(f"{file}: `{table}` must be an array of tables")
    for i, row in enumerate(rows):
        yield Fields(row, f"{file} [[{table}]] #{i + 1}")
