"""The apiserver's single door to the object-semantics library.

Defaulting, validation, tables, patches and selectors live in ``controlplane.api``
and ``controlplane.selectors`` (written separately). This module imports them and,
only while one has not landed yet, falls back to a minimal stand-in so the server
keeps working. Interfaces (see those modules for the Kubernetes sources):

* ``apply_defaults(kind, obj) -> None``
* ``validate(kind, obj, old=None) -> list[{reason, message, field}]``, ``invalid_message(kind, name, causes)``
* ``table(kind, objects, resource_version, now=None) -> dict`` (meta.k8s.io/v1 Table)
* ``json_merge_patch(t, p)``, ``json_patch(t, ops)``, ``strategic_merge_patch(t, p, kind)``, ``PatchError``
* ``parse_label_selector(s)``, ``parse_field_selector(s)``, ``object_fields(kind, obj)``
"""

from __future__ import annotations

import copy
import datetime
from typing import Any

try:
    from controlplane.api.defaults import apply_defaults  # noqa: F401
except ImportError:  # pragma: no cover - stand-in until the library lands
    def apply_defaults(kind: str, obj: dict) -> None:
        return None

try:
    from controlplane.api.validation import invalid_message, validate  # noqa: F401
except ImportError:  # pragma: no cover
    def validate(kind: str, obj: dict, old: dict | None = None) -> list[dict]:
        md = obj.get("metadata") or {}
        if not md.get("name"):
            return [{"reason": "FieldValueRequired", "message": "Required value: name or generateName is required",
                     "field": "metadata.name"}]
        return []

    def invalid_message(kind: str, name: str, causes: list[dict]) -> str:
        parts = [f"{c['field']}: {c['message']}" for c in causes]
        joined = parts[0] if len(parts) == 1 else "[" + ", ".join(parts) + "]"
        return f'{kind} "{name}" is invalid: {joined}'

try:
    from controlplane.api.tables import table  # noqa: F401
except ImportError:  # pragma: no cover
    def table(kind: str, objects: list[dict], resource_version: str, now: Any = None) -> dict:
        now = now or datetime.datetime.now(datetime.timezone.utc)
        rows = []
        for o in objects:
            md = o.get("metadata") or {}
            rows.append({"cells": [md.get("name", ""), md.get("creationTimestamp", "")],
                         "object": {"kind": "PartialObjectMetadata", "apiVersion": "meta.k8s.io/v1",
                                    "metadata": md}})
        return {"kind": "Table", "apiVersion": "meta.k8s.io/v1",
                "metadata": {"resourceVersion": resource_version},
                "columnDefinitions": [
                    {"name": "Name", "type": "string", "format": "name", "description": "", "priority": 0},
                    {"name": "Created At", "type": "date", "format": "", "description": "", "priority": 0}],
                "rows": rows}

try:
    from controlplane.api.patch import PatchError, json_merge_patch, json_patch, strategic_merge_patch  # noqa: F401
except ImportError:  # pragma: no cover
    class PatchError(ValueError):
        pass

    def json_merge_patch(target: Any, patch: Any) -> Any:
        if not isinstance(patch, dict):
            return copy.deepcopy(patch)
        out = copy.deepcopy(target) if isinstance(target, dict) else {}
        for k, v in patch.items():
            if v is None:
                out.pop(k, None)
            else:
                out[k] = json_merge_patch(out.get(k), v)
        return out

    def _strip_directives(p: Any) -> Any:
        if isinstance(p, dict):
            return {k: _strip_directives(v) for k, v in p.items() if not k.startswith("$")}
        if isinstance(p, list):
            return [_strip_directives(x) for x in p if not (isinstance(x, dict) and "$patch" in x)]
        return p

    def strategic_merge_patch(target: Any, patch: Any, kind: str) -> Any:
        return json_merge_patch(target, _strip_directives(patch))

    def json_patch(target: Any, ops: Any) -> Any:
        raise PatchError("json patch is not supported yet")

from controlplane.selectors import parse_field_selector, parse_label_selector  # noqa: E402,F401

try:
    from controlplane.selectors import object_fields  # noqa: F401
except ImportError:  # pragma: no cover
    def object_fields(kind: str, obj: dict) -> dict[str, str]:
        md = obj.get("metadata") or {}
        f = {"metadata.name": md.get("name", ""), "metadata.namespace": md.get("namespace", "")}
        if kind == "Pod":
            f["spec.nodeName"] = (obj.get("spec") or {}).get("nodeName", "")
            f["status.phase"] = (obj.get("status") or {}).get("phase", "")
        return f
