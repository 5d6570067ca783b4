"""Server-side printing: ``meta.k8s.io/v1`` Table objects for ``kubectl get``.

kubectl asks for ``application/json;as=Table;v=v1;g=meta.k8s.io`` and prints what the
server sends: column definitions (``priority: 1`` columns only with ``-o wide``) and one
row of cells per object, plus ``object`` (a ``PartialObjectMetadata`` by default,
``includeObject=Metadata``) from which kubectl derives NAMESPACE (``-A``) and LABELS
(``--show-labels``).

Each kind's columns and row function are its registry entry's
:attr:`~controlplane.api.registry.Resource.printer` (declared in
:mod:`controlplane.api.printers`, as ``pkg/printers/internalversion/printers.go``); a kind
without one, or not served, prints NAME and AGE (the default table convertor of
``staging/src/k8s.io/apiserver/pkg/registry/rest/table.go``). The Table shape is
``staging/src/k8s.io/apimachinery/pkg/apis/meta/v1/types.go`` (Table,
TableColumnDefinition, TableRow, PartialObjectMetadata).
"""

from __future__ import annotations

import copy
from typing import Any

from controlplane import apitime
from controlplane.api import printers
from controlplane.api.printers import (
    AGE_COL,
    NAME_COL,
    human_duration,
    node_roles,
    node_status,
    pod_status_reason,
    since,
)
from controlplane.api.registry import JSON, KindKey, Printer
from controlplane.api.resources import REGISTRY

#: the public names (with those re-exported from the modules below)
__all__ = [
    "AGE_COL", "NAME_COL", "human_duration", "node_roles", "node_status", "pod_status_reason", "since",
    "printer", "partial_object_metadata", "table_row", "column_definitions", "table",
]


def printer(kind: KindKey) -> Printer:
    """The printer of ``kind`` from :data:`~controlplane.api.resources.REGISTRY`
    (:data:`controlplane.api.printers.DEFAULT`, NAME and AGE, when it has none)."""
    r = REGISTRY.of_kind(kind)
    return r.printer if r is not None and r.printer is not None else printers.DEFAULT


def partial_object_metadata(obj: JSON) -> JSON:
    """``meta.k8s.io/v1`` PartialObjectMetadata of an object (its metadata only)."""
    return {"kind": "PartialObjectMetadata", "apiVersion": "meta.k8s.io/v1",
            "metadata": copy.deepcopy(obj.get("metadata") or {})}


def table_row(kind: KindKey, obj: JSON, now: float | None = None, include_object: str = "Metadata") -> JSON:
    """One TableRow ``{cells, object[, conditions]}`` for ``obj``; see :func:`table`.

    A malformed object (a row function raising AttributeError, TypeError, ValueError or
    KeyError) gets its NAME and AGE cells and empty strings for the other columns.
    """
    now = apitime.clock() if now is None else now
    p = printer(kind)
    try:
        cells, conditions = p.row(obj, now)
    except (AttributeError, TypeError, ValueError, KeyError):
        cells, conditions = printers.DEFAULT.row(obj, now)  # malformed object: print what we can
        cells += [""] * (len(p.columns) - len(cells))
    row: dict[str, Any] = {"cells": cells}
    if conditions:
        row["conditions"] = conditions
    if include_object == "Object":
        row["object"] = copy.deepcopy(obj)
    elif include_object != "None":
        row["object"] = partial_object_metadata(obj)
    return row


def column_definitions(kind: KindKey) -> list[JSON]:
    """The TableColumnDefinitions of ``kind`` (``NAME AGE`` for kinds without a printer), copied."""
    return copy.deepcopy(list(printer(kind).columns))


def table(kind: KindKey, objects: list[JSON], resource_version: str, now: float | None = None,
          include_object: str = "Metadata", continue_token: str = "") -> JSON:
    """Build a ``meta.k8s.io/v1`` Table of ``objects`` (all of ``kind``).

    ``now`` (epoch seconds, default current time) is the reference for AGE cells.
    ``include_object`` is the ``?includeObject=`` value: ``Metadata`` (default:
    PartialObjectMetadata), ``Object`` (the full object) or ``None`` (no object).
    ``resource_version`` and ``continue_token`` go to the Table's list metadata; kubectl
    watches from that resourceVersion. Rows follow the printer's ``order`` when it has one.
    """
    now = apitime.clock() if now is None else now
    order = printer(kind).order
    if order is not None:
        objects = sorted(objects, key=order)
    meta: dict[str, Any] = {"resourceVersion": resource_version}
    if continue_token:
        meta["continue"] = continue_token
    return {
        "kind": "Table",
        "apiVersion": "meta.k8s.io/v1",
        "metadata": meta,
        "columnDefinitions": column_definitions(kind),
        "rows": [table_row(kind, o, now, include_object) for o in objects],
    }
