"""Validation (being filled in): see validate()."""
from __future__ import annotations


def validate(kind: str, obj: dict, old: dict | None = None) -> list[dict]:
    """Return StatusCause dicts ``{reason, message, field}``; empty when valid."""
    return []


def invalid_message(kind: str, name: str, causes: list[dict]) -> str:
    """The Status message of a 422 Invalid: ``Pod "x" is invalid: field: msg``."""
    parts = [f"{c['field']}: {c['message']}" if c.get("field") else c["message"] for c in causes]
    agg = parts[0] if len(parts) == 1 else "[" + ", ".join(parts) + "]"
    return f'{kind} "{name}" is invalid: {agg}'
