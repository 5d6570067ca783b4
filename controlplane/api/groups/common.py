"""What the API group modules of :mod:`controlplane.api.groups` share: Table column helpers,
the default table convertor, field helpers, field-error shortcuts with Kubernetes' wording and
the name rules every group uses.

* :func:`col` — one ``meta.k8s.io/v1`` TableColumnDefinition;
* :data:`DEFAULT_TABLE` — the columns of a kind with no printer in Kubernetes:
  ``rest.NewDefaultTableConvertor`` (``staging/src/k8s.io/apiserver/pkg/registry/rest/table.go``):
  NAME and CREATED AT (RFC 3339, type ``date``), as ``kubectl get roles`` prints them;
* :func:`nonnegative`, :func:`immutable` — ``ValidateNonnegativeField`` and
  ``ValidateImmutableField`` of ``pkg/apis/core/validation/validation.go``;
* :func:`is_valid_path_segment_name` — ``path.IsValidPathSegmentName``
  (``staging/src/k8s.io/apimachinery/pkg/api/validation/path/name.go``), the RBAC name rule;
* :func:`is_valid_port_name`, :func:`is_valid_port_num`, :func:`is_ip`, :func:`is_cidr`
  (``apimachinery/pkg/util/validation``).

Below :mod:`controlplane.api.builtin` in the registry's layers (imports only the per-kind
rule modules and the registry types). Column definitions: ``pkg/printers/internalversion/printers.go``.
"""


from __future__ import annotations

import ipaddress
import re
from collections.abc import Callable
from typing import Any

from controlplane import apitime
from controlplane.api import printers
from controlplane.api.registry import JSON, Printer
from controlplane.api.validators import ErrorList, go_repr
from controlplane.labels import selector_from_dict

NAME_COL = printers.NAME_COL
AGE_COL = printers.AGE_COL
IMMUTABLE = "field is immutable"
_PORT_NAME_CHARS = re.compile(r"^[-a-z0-9]+$")
_HAS_LETTER = re.compile(r"[a-z]")


def col(name: str, type_: str = "string", description: str = "", priority: int = 0, format_: str = "") -> JSON:
    """A ``meta.k8s.io/v1`` TableColumnDefinition dict."""
    return {"name": name, "type": type_, "format": format_, "description": description, "priority": priority}


def age(obj: JSON, now: float) -> str:
    """The AGE cell: HumanDuration since ``metadata.creationTimestamp``."""
    return printers.since((obj.get("metadata") or {}).get("creationTimestamp"), now)


def name(obj: JSON) -> str:
    """``metadata.name``."""
    return str((obj.get("metadata") or {}).get("name", ""))


def dig(obj: Any, *path: str) -> Any:
    """The value at ``path`` (None when a step is absent or not an object)."""
    cur = obj
    for p in path:
        if not isinstance(cur, dict):
            return None
        cur = cur.get(p)
    return cur


def invalid_raw(errs: ErrorList, path: str, shown: str, detail: str) -> None:
    """A FieldValueInvalid whose value is printed as Go prints a typed value (``shown``,
    e.g. ``[]networking.IngressRule(nil)``), which :func:`go_repr` cannot guess."""
    errs.append({"reason": "FieldValueInvalid", "message": f"Invalid value: {shown}: {detail}", "field": path})


def immutable(errs: ErrorList, path: str, new: Any, old: Any) -> None:
    """ValidateImmutableField: ``Invalid value: <new>: field is immutable`` when changed."""
    if new == old:
        return
    if isinstance(new, (dict, list)):
        invalid_raw(errs, path, go_repr(new), IMMUTABLE)
    else:
        errs.invalid(path, new, IMMUTABLE)


def is_valid_port_name(v: str) -> list[str]:
    """IsValidPortName (an IANA_SVC_NAME): at most 15 characters, lower case alphanumerics
    and '-', at least one letter, no leading/trailing or doubled '-'."""
    errs: list[str] = []
    if len(v) > 15:
        errs.append("must be no more than 15 characters")
    if not _PORT_NAME_CHARS.match(v):
        errs.append("must contain only alpha-numeric characters (a-z, 0-9), and hyphens (-)")
    if "--" in v:
        errs.append("must not contain consecutive hyphens")
    if v and not _HAS_LETTER.search(v):
        errs.append("must contain at least one letter (a-z)")
    if v.startswith("-") or v.endswith("-"):
        errs.append("must not begin or end with a hyphen")
    return errs


def is_valid_port_num(v: object) -> list[str]:
    """IsValidPortNum: 1-65535."""
    if isinstance(v, bool) or not isinstance(v, int) or not 1 <= v <= 65535:
        return ["must be between 1 and 65535, inclusive"]
    return []


def is_ip(v: str) -> bool:
    """Whether ``v`` parses as an IPv4 or IPv6 address."""
    try:
        ipaddress.ip_address(v)
    except ValueError:
        return False
    return True


def is_cidr(v: str) -> bool:
    """Whether ``v`` parses as a CIDR (``net.ParseCIDR``: an address and a prefix length)."""
    if "/" not in v:
        return False
    try:
        ipaddress.ip_network(v, strict=False)
    except ValueError:
        return False
    return True


def nonnegative(errs: ErrorList, path: str, v: object) -> None:
    """ValidateNonnegativeField: ``must be greater than or equal to 0``."""
    if isinstance(v, int) and not isinstance(v, bool) and v < 0:
        errs.invalid(path, v, "must be greater than or equal to 0")


def strs(v: object) -> list[str]:
    """A JSON list of strings as a list (``[]`` when absent or not a list)."""
    return [str(x) for x in v] if isinstance(v, list) else []


def objs(v: object) -> list[JSON]:
    """The objects of a JSON list (``[]`` when absent; non-objects become ``{}``)."""
    return [x if isinstance(x, dict) else {} for x in v] if isinstance(v, list) else []


def sub(obj: JSON, key: str) -> JSON:
    """``obj[key]`` when it is an object, else ``{}`` (read-only use)."""
    v = obj.get(key)
    return v if isinstance(v, dict) else {}


def bump_generation_on(*fields: str) -> Callable[[JSON, JSON, str], None]:
    """A ``Strategy.prepare_update`` for kinds without a ``spec`` whose generation follows
    other top-level fields (PodTemplate's ``template``, EndpointSlice's endpoints and
    ports): ``metadata.generation`` +1 when any of ``fields`` changed."""
    def prepare_update(new: JSON, old: JSON, subresource: str) -> None:
        md, omd = new.get("metadata") or {}, old.get("metadata") or {}
        if "generation" in omd and any(new.get(f) != old.get(f) for f in fields):
            md["generation"] = int(omd.get("generation") or 0) + 1
    return prepare_update


def go_strings(values: list[str], go_type: str = "string") -> str:
    """A Go string slice as ``%#v`` prints it: ``[]string{"a", "b"}`` (``go_type`` for a
    named string type, e.g. ``admissionregistration.ValidationAction``)."""
    return f"[]{go_type}{{" + ", ".join(go_repr(v) for v in values) + "}"


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


def is_valid_path_segment_name(v: str) -> list[str]:
    """``path.IsValidPathSegmentName``: not ``.`` or ``..``, no ``/`` or ``%``."""
    if v in (".", ".."):
        return [f"may not be '{v}'"]
    out = []
    for c in ("/", "%"):
        if c in v:
            out.append(f"may not contain '{c}'")
    return out


def section(obj: JSON, key: str) -> JSON:
    """``obj[key]`` as a dict, created when absent (a section to default into; :func:`sub`
    is the read-only lookup)."""
    v = obj.get(key)
    if not isinstance(v, dict):
        v = obj[key] = {}
    return v
