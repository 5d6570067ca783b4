"""``apps/v1`` ControllerRevision (Kubernetes v1.32); the apps workloads stay in :mod:`controlplane.api.builtin`.

Sources: ``staging/src/k8s.io/api/apps/v1/types.go`` (ControllerRevision); validation
``pkg/apis/apps/validation/validation.go`` (ValidateControllerRevisionCreate: ``data`` is
mandatory, ``revision`` non-negative; ValidateControllerRevisionUpdate: ``data`` immutable);
Table columns ``pkg/printers/internalversion/printers.go`` (printControllerRevision: the
controller as ``<kind>.<group>/<name>``). No strategy beyond the generic one
(``pkg/registry/apps/controllerrevision/strategy.go`` keeps no status).
"""

from __future__ import annotations

from typing import Any

from controlplane.api.groups import common
from controlplane.api.registry import JSON, KindSchema, Printer, Resource
from controlplane.api.validators import ErrorList

SCHEMA = KindSchema(
    "ControllerRevision implements an immutable snapshot of state data. Clients are responsible for serializing "
    "and deserializing the objects that contain their internal state. Once a ControllerRevision has been "
    "successfully created, it can not be updated.", {
        "data": ("object:runtime.RawExtension", "Data is the serialized representation of the state."),
        "revision": ("int64", "Revision indicates the revision of the state represented by Data."),
    })


def controller_of(obj: JSON) -> str:
    """The CONTROLLER cell: the controlling owner as ``<kind>.<group>/<name>`` (lower-cased
    kind, ``formatResourceName``), ``<none>`` without one."""
    for ref in (obj.get("metadata") or {}).get("ownerReferences") or []:
        if isinstance(ref, dict) and ref.get("controller"):
            api_version = str(ref.get("apiVersion", ""))
            group = api_version.rsplit("/", 1)[0] if "/" in api_version else ""
            kind = str(ref.get("kind", "")).lower()
            return f"{kind}.{group}/{ref.get('name', '')}" if group else f"{kind}/{ref.get('name', '')}"
    return "<none>"


COLUMNS = (
    common.NAME_COL,
    common.col("Controller", description="Controller of the object"),
    common.col("Revision", description=SCHEMA.fields["revision"][1]),
    common.AGE_COL,
)


def _row(obj: JSON, now: float) -> tuple[list[Any], list[JSON] | None]:
    return [common.name(obj), controller_of(obj), int(obj.get("revision") or 0), common.age(obj, now)], None


PRINTER = Printer(COLUMNS, _row)


def validate_controller_revision(obj: JSON, old: JSON | None, errs: ErrorList) -> None:
    """ValidateControllerRevisionCreate / Update: ``data`` mandatory, ``revision`` >= 0;
    ``data`` immutable."""
    if obj.get("data") is None:
        errs.required("data", "data is mandatory")
    common.nonnegative(errs, "revision", obj.get("revision"))
    if old is not None:
        common.immutable(errs, "data", obj.get("data"), old.get("data"))


ENTRIES: tuple[Resource, ...] = (
    Resource("apps", "v1", "controllerrevisions", "controllerrevision", "ControllerRevision", True,
             printer=PRINTER, schema=SCHEMA, validate=validate_controller_revision),
)
