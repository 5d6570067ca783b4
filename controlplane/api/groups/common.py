"""What the API group modules of :mod:`controlplane.api.groups` share: Table column helpers,
the default table convertor, and the small validation rules every group uses.

* :func:`col` — one ``meta.k8s.io/v1`` TableColumnDefinition;
* :data:`DEFAULT_TABLE` — the columns of a kind with no printer in Kubernetes:
  ``rest.NewDefaultTableConvertor`` (``staging/src/k8s.io/apiserver/pkg/registry/rest/table.go``):
  NAME and CREATED AT (RFC 3339, type ``date``), as ``kubectl get roles`` prints them;
* :func:`nonnegative`, :func:`immutable` — ``ValidateNonnegativeField`` and
  ``ValidateImmutableField`` of ``pkg/apis/core/validation/validation.go``;
* :func:`is_valid_path_segment_name` — ``path.IsValidPathSegmentName``
  (``staging/src/k8s.io/apimachinery/pkg/api/validation/path/name.go``), the RBAC name rule.
"""

from __future__ import annotations

from typing import Any

from controlplane import apitime
from controlplane.api import printers
from controlplane.api.registry import JSON, Printer
from controlplane.api.validators import ErrorList
from controlplane.labels import selector_from_dict

NAME_COL = printers.NAME_COL
AGE_COL = printers.AGE_COL


def col(name: str, type_: str = "string", description: str = "", priority: int = 0, format_: str = "") -> JSON:
    """A TableColumnDefinition ``{name, type, format, description, priority}``."""
    return {"name": name, "type": type_, "format": format_, "description": description, "priority": priority}


def name(obj: JSON) -> str:
    """``metadata.name`` (``""`` when unset)."""
    return str((obj.get("metadata") or {}).get("name", ""))


def age(obj: JSON, now: float) -> str:
    """The AGE cell: HumanDuration since ``metadata.creationTimestamp`` (``translateTimestampSince``)."""
    return printers.since((obj.get("metadata") or {}).get("creationTimestamp"), now)


def containers_images(pod_template: JSON | None) -> tuple[str, str]:
    """``layoutContainerCells``: the containers' names and images of a pod template, comma-joined."""
    cs = (((pod_template or {}).get("spec") or {}).get("containers")) or []
    return ",".join(str(c.get("name", "")) for c in cs), ",".join(str(c.get("image", "")) for c in cs)


def label_selector_str(sel: JSON | None) -> str:
    """``metav1.FormatLabelSelector``: ``<none>`` for none, ``<error>`` when it does not parse."""
    if sel is None:
        return "<none>"
    try:
        s = str(selector_from_dict(sel))
    except ValueError:
        return "<error>"
    return s or "<none>"


def bool_ptr(v: object) -> str:
    """``printBoolPtr``: ``True`` / ``False``, ``<unset>`` when absent."""
    if v is None:
        return "<unset>"
    return "True" if v else "False"


def _created_at_row(obj: JSON, now: float) -> tuple[list[Any], list[JSON] | None]:
    ts = apitime.time_or_none((obj.get("metadata") or {}).get("creationTimestamp"))
    created = apitime.format_time(ts) if ts is not None else None
    return [name(obj), created], None


#: ``rest.NewDefaultTableConvertor``: NAME and CREATED AT (the kinds without a printer)
DEFAULT_TABLE = Printer((NAME_COL, col("Created At", "date", printers.AGE_DESCRIPTION)), _created_at_row)


def is_int(v: object) -> bool:
    """An integer that is not a bool."""
    return isinstance(v, int) and not isinstance(v, bool)


def nonnegative(value: object, path: str, errs: ErrorList) -> None:
    """``ValidateNonnegativeField``: ``must be greater than or equal to 0`` (absent: nothing)."""
    if is_int(value) and int(str(value)) < 0:
        errs.invalid(path, value, "must be greater than or equal to 0")


def immutable(new: object, old: object, path: str, errs: ErrorList) -> None:
    """``ValidateImmutableField``: ``field is immutable`` when ``new`` differs from ``old``."""
    if new != old:
        errs.invalid(path, new, "field is immutable")


def is_valid_path_segment_name(v: str) -> list[str]:
    """``path.IsValidPathSegmentName``: not ``.`` or ``..``, no ``/`` or ``%``."""
    if v in (".", ".."):
        return [f"may not be '{v}'"]
    out = []
    for c in ("/", "%"):
        if c in v:
            out.append(f"may not contain '{c}'")
    return out


def sub(obj: JSON, key: str) -> JSON:
    """``obj[key]`` as a dict, created when absent (a section to default into)."""
    v = obj.get(key)
    if not isinstance(v, dict):
        v = obj[key] = {}
    return v
