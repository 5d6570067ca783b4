"""Go's printing of values inside field errors, where :func:`controlplane.api.validators.go_repr`
does not say what Kubernetes says.

* :func:`go_float` — ``fmt``'s ``%v`` of a float64 (``1``, ``1.5``, ``1e+06``), as kube-openapi
  prints limits (``should be greater than or equal to 1``);
* :func:`go_value` — ``field.Error.ErrorBody``'s rendering of a bad value
  (``staging/src/k8s.io/apimachinery/pkg/util/validation/field/errors.go``): strings quoted
  (``%q``), numbers and booleans bare, everything else Go's ``%#v`` of the decoded JSON
  (``map[string]interface {}{"name":"a"}``, ``[]interface {}{"a", 1}``);
* :func:`add_cause` — appends a StatusCause with a pre-rendered message to an ErrorList.
"""

from __future__ import annotations

import json
import math
from typing import Any

from controlplane.api.validators import ErrorList


def go_float(f: float | int) -> str:
    """``fmt.Sprintf("%v", float64(f))``: the shortest digits, in exponent form when the
    decimal exponent is < -4 or >= 6 (``%v`` is ``%g`` with the shortest precision, whose
    exponent threshold is 6: ``1e+06``, ``100000``, ``1.5e-05``)."""
    x = float(f)
    if math.isnan(x):
        return "NaN"
    if math.isinf(x):
        return "+Inf" if x > 0 else "-Inf"
    if x == 0:
        return "0"
    r = repr(x)  # shortest round-trip digits
    mant, _, exp_s = r.partition("e")
    digits = mant.replace("-", "").replace(".", "").lstrip("0") or "0"
    if exp_s:
        exp = int(exp_s)
    else:
        ip = mant.lstrip("-").split(".")[0]
        if ip.strip("0"):
            exp = len(ip.lstrip("0")) - 1
        else:
            frac = mant.split(".")[1]
            exp = -(len(frac) - len(frac.lstrip("0")) + 1)
    digits = digits.rstrip("0") or "0"
    neg = "-" if x < 0 else ""
    if exp < -4 or exp >= 6:
        m = digits[0] + ("." + digits[1:] if len(digits) > 1 else "")
        return f"{neg}{m}e{'-' if exp < 0 else '+'}{abs(exp):02d}"
    if exp >= len(digits) - 1:
        return neg + digits + "0" * (exp - len(digits) + 1)
    if exp >= 0:
        return neg + digits[:exp + 1] + "." + digits[exp + 1:]
    return neg + "0." + "0" * (-exp - 1) + digits


def go_quote(s: str) -> str:
    """``strconv.Quote`` (close to JSON string encoding for the printable range)."""
    return json.dumps(s, ensure_ascii=False)


class StringSlice(list[str]):
    """A Go ``[]string`` (``%#v`` prints ``[]string{"a", "b"}``), for values such as
    ``x-kubernetes-list-map-keys``."""


def go_sharp_v(v: Any) -> str:
    """Go's ``%#v`` of a decoded JSON value (``map[string]interface {}``, ``[]interface {}``,
    ``int64``, ``float64``, ``string``, ``bool``, ``nil``)."""
    if v is None:
        return "interface {}(nil)"
    if isinstance(v, bool):
        return "true" if v else "false"
    if isinstance(v, int):
        return str(v)
    if isinstance(v, float):
        return go_float(v)
    if isinstance(v, str):
        return go_quote(v)
    if isinstance(v, dict):
        inner = ", ".join(f"{go_quote(str(k))}:{go_sharp_v(x)}" for k, x in sorted(v.items()))
        return "map[string]interface {}{" + inner + "}"
    if isinstance(v, StringSlice):
        return "[]string{" + ", ".join(go_quote(str(x)) for x in v) + "}"
    if isinstance(v, list):
        return "[]interface {}{" + ", ".join(go_sharp_v(x) for x in v) + "}"
    return go_quote(str(v))


def go_value(v: Any) -> str:
    """The bad value as ``field.Error.ErrorBody`` prints it: ``null`` for nil, ``%v`` for
    numbers and booleans, ``%q`` for strings, ``%#v`` otherwise."""
    if v is None:
        return "null"
    if isinstance(v, bool):
        return "true" if v else "false"
    if isinstance(v, int):
        return str(v)
    if isinstance(v, float):
        return go_float(v)
    if isinstance(v, str):
        return go_quote(v)
    return go_sharp_v(v)


#: field.ErrorType → (StatusCause reason, message prefix)
_TYPES = {
    "invalid": ("FieldValueInvalid", "Invalid value"),
    "type_invalid": ("FieldValueTypeInvalid", "Invalid value"),
    "duplicate": ("FieldValueDuplicate", "Duplicate value"),
    "not_supported": ("FieldValueNotSupported", "Unsupported value"),
    "too_many": ("FieldValueTooMany", "Too many"),
}


def add_cause(errs: ErrorList, kind: str, path: str, value: Any, detail: str = "") -> None:
    """Append a field error of ``kind`` (``invalid``, ``type_invalid``, ``duplicate``,
    ``not_supported``, ``too_many``) whose bad value prints as :func:`go_value` does:
    ``<Type>: <value>[: <detail>]``."""
    reason, prefix = _TYPES[kind]
    msg = f"{prefix}: {go_value(value)}" + (f": {detail}" if detail else "")
    errs.append({"reason": reason, "message": msg, "field": path})


def add_message(errs: ErrorList, reason: str, path: str, message: str) -> None:
    """Append a StatusCause whose message is already rendered (``Too long: ...``)."""
    errs.append({"reason": reason, "message": message, "field": path})
