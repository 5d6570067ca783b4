"""What the API group modules of :mod:`controlplane.api.groups` share: column and field
helpers, field-error shortcuts with Kubernetes' wording, and a name-rule helper.

Below :mod:`controlplane.api.builtin` in the registry's layers (imports only the per-kind
rule modules and the registry types). Sources: ``pkg/printers/internalversion/printers.go``
(column definitions), ``staging/src/k8s.io/apimachinery/pkg/api/validation`` and
``pkg/apis/core/validation/validation.go`` (ValidateImmutableField, IsValidPortName,
IsValidIP, ValidateNonnegativeField).
"""

from __future__ import annotations

import ipaddress
import re
from collections.abc import Callable
from typing import Any

from controlplane.api import printers
from controlplane.api.registry import JSON
from controlplane.api.validators import ErrorList, go_repr

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
