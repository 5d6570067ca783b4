"""meta.k8s.io/v1 Table building (being filled in)."""
from __future__ import annotations


def table(kind: str, objects: list[dict], resource_version: str, now: float | None = None) -> dict:
    """A Table with NAME/AGE columns (placeholder)."""
    return {"kind": "Table", "apiVersion": "meta.k8s.io/v1", "metadata": {"resourceVersion": resource_version},
            "columnDefinitions": [{"name": "Name", "type": "string", "format": "name", "description": "", "priority": 0}],
            "rows": [{"cells": [o["metadata"]["name"]], "object": {"kind": "PartialObjectMetadata",
                      "apiVersion": "meta.k8s.io/v1", "metadata": o.get("metadata", {})}} for o in objects]}
