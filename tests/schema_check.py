"""Validation of stackresolve's JSON documents against the shipped JSON Schemas (schemas/), for the tests.

jsonschema is a test dependency only: the tool itself never imports it."""

from __future__ import annotations

import json
from functools import lru_cache

from stackresolve import schemas


@lru_cache(maxsize=None)
def validator(name: str):
    from jsonschema import Draft202012Validator

    schema = schemas.load(name)
    Draft202012Validator.check_schema(schema)
    return Draft202012Validator(schema, format_checker=Draft202012Validator.FORMAT_CHECKER)


def problems(document: dict) -> list[str]:
    """Every way `document` breaks its schema (chosen by its "schema" field), as "path: message" lines."""
    try:
        name = schemas.name_of(document)
    except KeyError as exc:  # a new kind of document comes with its schema
        return [f"(top): {exc.args[0]} in schemas/"]
    errors = validator(name).iter_errors(document)
    return [f"{'/'.join(map(str, e.absolute_path)) or '(top)'}: {e.message[:300]}"
            for e in sorted(errors, key=lambda e: list(map(str, e.absolute_path)))]


def assert_valid(document: dict) -> None:
    found = problems(document)
    assert not found, f"{document.get('schema')} breaks its schema:\n  " + "\n  ".join(found[:20])


def document_in(text: str) -> dict | None:
    """The stackresolve JSON document `text` holds, or None when it holds none (a plan, a script)."""
    if not text.lstrip().startswith("{"):
        return None
    try:
        doc = json.loads(text)
    except ValueError:
        return None
    if isinstance(doc, dict) and str(doc.get("schema", "")).startswith("stackresolve/"):
        return doc
    return None
