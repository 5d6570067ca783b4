"""Value validation of a custom resource against its OpenAPI v3 schema.

kube-openapi's ``validate.SchemaValidator`` (``k8s.io/kube-openapi/pkg/validation/validate``:
``schema.go``, ``type.go``, ``schema_props.go``, ``validator.go``, ``slice_validator.go``,
``object_validator.go``; messages from ``pkg/validation/errors/schema.go``) as the
apiextensions-apiserver converts its results into field errors
(``staging/src/k8s.io/apiextensions-apiserver/pkg/apiserver/validation/validation.go``:
``ValidateCustomResource`` / ``kubeOpenAPIResultToFieldErrors``):

* a missing required property → ``spec.x: Required value``;
* an enum miss → ``Unsupported value: "x": supported values: "a", "b"``;
* a wrong type → ``spec.replicas: Invalid value: "string": spec.replicas in body must be of
  type integer: "string"`` (the value is the JSON type found);
* maxLength → ``Too long: may not be more than N bytes`` (field.TooLong as v1.32 words it,
  after kubernetes#128553 merged TooLongMaxLength into it; see :func:`too_long_detail`);
  maxItems / maxProperties →
  ``Too many: <n>: must have at most N items``;
* any other failure → ``Invalid value: <value>: <name> in body <rule>`` (``should be greater
  than or equal to 1``, ``should match '^a'``, ``should be at least 3 chars long``...);
* allOf / anyOf / oneOf / not failures add ``Invalid value: "": "<name>" must validate ...``
  on the root path, as Kubernetes does for kube-openapi's composite errors.

The validators run in kube-openapi's order for each value: type, allOf/anyOf/oneOf/not,
string, format, number, array, enum, object. Names (``spec.items[0].name``) are relative to
the validated value; ``path`` prefixes the field of each cause (not the message).

A schema is compiled once into a tree of closures (:func:`compile_schema`, memoized by the
schema's identity: :mod:`.compiled`), one per schema node, each holding only the checks its
node's keywords ask for, so validating an object walks the object and runs no keyword
look-ups (as kube-openapi's ``SchemaValidator`` is built once per CRD version).
"""

from __future__ import annotations

import json
import math
from collections.abc import Callable
from functools import lru_cache
from typing import Any, TypeGuard

import re2

from controlplane.api.structural.compiled import IdentityCache
from controlplane.api.structural.formats import FORMATS
from controlplane.api.structural.goformat import add_cause, add_message, go_float
from controlplane.api.validators import ErrorList

JSON = dict[str, Any]

#: one kube-openapi error: (kind, name, value, message); kind is how Kubernetes converts it
#: ("required", "not_supported", "too_long", "too_many", "type_invalid", "invalid", "composite")
Err = tuple[str, str, Any, str]

_IN = "body"


def json_type(v: Any) -> str:
    """The JSON type name kube-openapi infers for a decoded value (``null`` for None)."""
    if v is None:
        return "null"
    if isinstance(v, bool):
        return "boolean"
    if isinstance(v, str):
        return "string"
    if isinstance(v, int):
        return "integer"
    if isinstance(v, float):
        return "number"
    if isinstance(v, list):
        return "array"
    if isinstance(v, dict):
        return "object"
    return ""


def json_equal(a: Any, b: Any) -> bool:
    """reflect.DeepEqual of decoded JSON values, numbers compared by value (int64 and
    float64 convert to each other) and booleans never equal to numbers."""
    if isinstance(a, bool) or isinstance(b, bool):
        return isinstance(a, bool) and isinstance(b, bool) and a == b
    if isinstance(a, (int, float)) and isinstance(b, (int, float)):
        return a == b
    if isinstance(a, dict) and isinstance(b, dict):
        return a.keys() == b.keys() and all(json_equal(a[k], b[k]) for k in a)
    if isinstance(a, list) and isinstance(b, list):
        return len(a) == len(b) and all(json_equal(x, y) for x, y in zip(a, b))
    return type(a) is type(b) and bool(a == b)


#: RE2's C++ error texts → Go regexp/syntax's ErrorCode texts
_RE2_TO_GO = (
    ("no argument for repetition operator", "missing argument to repetition operator"),
    ("missing )", "missing closing )"),
    ("missing ]", "missing closing ]"),
    ("unexpected )", "unexpected )"),
    ("invalid perl operator", "invalid or unsupported Perl syntax"),
    ("invalid escape sequence", "invalid escape sequence"),
    ("invalid repetition size", "invalid repeat count"),
    ("invalid character class range", "invalid character class range"),
    ("invalid character class", "invalid character class"),
    ("trailing \\", "trailing backslash at end of expression"),
    ("invalid named capture group", "invalid named capture"),
    ("bad repetition operator", "invalid nested repetition operator"),
    ("invalid UTF-8", "invalid UTF-8"),
)


def _go_regexp_error(msg: str) -> str:
    code, _, expr = msg.partition(": ")
    for cxx, go in _RE2_TO_GO:
        if code == cxx:
            if go == "trailing backslash at end of expression":
                return f"error parsing regexp: {go}: ``"
            return f"error parsing regexp: {go}: `{expr}`"
    return f"error parsing regexp: {msg}"


@lru_cache(maxsize=1024)
def compile_pattern(pattern: str) -> tuple[Any, str]:
    """``pattern`` compiled with RE2 (Go's regexp syntax and semantics): ``(matcher, "")``,
    or ``(None, <Go's error text>)`` (``error parsing regexp: missing argument to
    repetition operator: `+```)."""
    opts = re2.Options()
    opts.log_errors = False
    try:
        return re2.compile(pattern, opts), ""
    except re2.error as e:
        arg = e.args[0] if e.args else ""
        text = arg.decode("utf-8", "replace") if isinstance(arg, bytes) else str(arg)
        return None, _go_regexp_error(text)
    except (TypeError, ValueError) as e:  # not a pattern RE2 can take at all
        return None, f"error parsing regexp: {e}"


def too_long_detail(max_length: int) -> str:
    """field.TooLong's detail in v1.32 (``may not be more than 3 bytes``, ``1 byte``; the
    length counted is kube-openapi's, in characters)."""
    if max_length < 0:
        return "value is too long"
    return f"may not be more than {max_length} {'byte' if max_length == 1 else 'bytes'}"


def _msg(name: str, rest: str) -> str:
    return f"{name} in {_IN} {rest}"


def _is_integral(f: float) -> bool:
    return math.isfinite(f) and f == math.trunc(f)


def schema_types(s: JSON) -> list[str]:
    """The types kube-openapi checks: ``[type]``, ``["integer", "string"]`` for
    ``x-kubernetes-int-or-string`` (ConvertJSONSchemaPropsWithPostProcess), or none."""
    if s.get("x-kubernetes-int-or-string"):
        return ["integer", "string"]
    t = s.get("type")
    if isinstance(t, str) and t:
        return [t]
    if isinstance(t, list):
        return [x for x in t if isinstance(x, str)]
    return []


class _Validator:
    """One run of the schema validator: collects kube-openapi errors and counts checks
    (kube-openapi's MatchCount, which picks the best failing anyOf/oneOf branch)."""

    def __init__(self) -> None:
        self.errs: list[Err] = []
        self.matches = 0

    # ---------------------------------------------------------------- entry
    def value(self, s: Any, data: Any, name: str) -> None:
        if not isinstance(s, dict):
            return
        types = schema_types(s)
        f = s.get("format")
        fmt = f if isinstance(f, str) else ""
        if data is None:
            self._type(s, types, fmt, data, name)
            self._enum(s, data, name)
            return
        self._type(s, types, fmt, data, name)
        self._props(s, data, name)
        kind = json_type(data)
        if kind == "string":
            self._string(s, data, name)
            if fmt and fmt in FORMATS:
                self.matches += 1
                if not FORMATS[fmt](data):
                    self.errs.append(("type_invalid", name, data, _msg(name, f"must be of type {fmt}: "
                                                                           f"{json.dumps(data)}")))
        elif kind in ("integer", "number"):
            self._number(s, data, name)
        elif kind == "array":
            self._array(s, data, name)
        self._enum(s, data, name)
        if kind == "object":
            self._object(s, data, name)

    # ---------------------------------------------------------------- type
    def _type(self, s: JSON, types: list[str], fmt: str, data: Any, name: str) -> None:
        if not types and not fmt:
            return
        self.matches += 1
        if data is None:
            if types and "null" not in types and not s.get("nullable"):
                self.errs.append(("type_invalid", name, "null", _msg(name, f"must be of type {','.join(types)}: "
                                                                          f'"null"')))
            return
        sch = json_type(data)
        dformat = {"integer": "int64", "number": "float64"}.get(sch, "")
        is_float_int = sch == "number" and _is_integral(float(data)) and "integer" in types
        is_int_float = sch == "integer" and "number" in types
        if (sch not in ("string", "array") and fmt
                and not (sch in types or dformat == fmt or is_float_int or is_int_float
                         or (fmt == "int64" and dformat == "int32") or (fmt == "float64" and dformat == "float32"))):
            self.errs.append(("type_invalid", name, dformat, _msg(name, f"must be of type {fmt}: {json.dumps(dformat)}")))
            return
        if not ("number" in types or "integer" in types) and fmt and sch in ("string", "array"):
            return
        if not (sch in types or is_float_int or is_int_float):
            self.errs.append(("type_invalid", name, sch, _msg(name, f"must be of type {','.join(types)}: "
                                                                   f"{json.dumps(sch)}")))

    # ---------------------------------------------------------------- allOf / anyOf / oneOf / not
    def _sub(self, s: Any, data: Any, name: str) -> _Validator:
        v = _Validator()
        v.value(s, data, name)
        return v

    def _props(self, s: JSON, data: Any, name: str) -> None:
        any_of, one_of, all_of = _l(s.get("anyOf")), _l(s.get("oneOf")), _l(s.get("allOf"))
        n = s.get("not")
        not_ = n if isinstance(n, dict) else None
        if not (any_of or one_of or all_of or not_):
            return
        quoted = json.dumps(name)
        if any_of:
            best: _Validator | None = None
            first_ok: _Validator | None = None
            for sub in any_of:
                r = self._sub(sub, data, name)
                if not r.errs:
                    best = None
                    first_ok = r
                    break
                if best is None or r.matches > best.matches:
                    best = r
            if first_ok is None:
                self.errs.append(("composite", "", "", f"{quoted} must validate at least one schema (anyOf)"))
            if best is not None:
                self._merge(best)
            elif first_ok is not None:
                self._merge(first_ok)
        if one_of:
            best = None
            first_ok = None
            ok = 0
            for sub in one_of:
                r = self._sub(sub, data, name)
                if not r.errs:
                    ok += 1
                    best = None
                    first_ok = first_ok or r
                    continue
                if ok == 0 and (best is None or r.matches > best.matches):
                    best = r
            if ok != 1:
                extra = "Found none valid" if ok == 0 else f"Found {ok} valid alternatives"
                self.errs.append(("composite", "", "",
                                  f"{quoted} must validate one and only one schema (oneOf). {extra}"))
                if best is not None:
                    self._merge(best)
            elif first_ok is not None:
                self._merge(first_ok)
        if all_of:
            ok = 0
            for sub in all_of:
                r = self._sub(sub, data, name)
                if not r.errs:
                    ok += 1
                self._merge(r)
            if ok != len(all_of):
                extra = ". None validated" if ok == 0 else ""
                self.errs.append(("composite", "", "", f"{quoted} must validate all the schemas (allOf){extra}"))
        if not_ is not None:
            r = self._sub(not_, data, name)
            if not r.errs:
                self.errs.append(("composite", "", "", f"{quoted} must not validate the schema (not)"))

    def _merge(self, r: _Validator) -> None:
        self.errs.extend(r.errs)
        self.matches += r.matches

    # ---------------------------------------------------------------- scalars
    def _string(self, s: JSON, data: str, name: str) -> None:
        n = len(data)
        mx, mn, pat = s.get("maxLength"), s.get("minLength"), s.get("pattern")
        if isinstance(mx, int) and not isinstance(mx, bool):
            self.matches += 1
            if n > mx:
                self.errs.append(("too_long", name, data, f"Too long: {too_long_detail(mx)}"))
        if isinstance(mn, int) and not isinstance(mn, bool):
            self.matches += 1
            if n < mn:
                self.errs.append(("invalid", name, data, _msg(name, f"should be at least {mn} chars long")))
        if isinstance(pat, str) and pat:
            self.matches += 1
            rx, err = compile_pattern(pat)
            if rx is None:
                self.errs.append(("invalid", name, "", _msg(name, f"should match '{pat}, but pattern is invalid: "
                                                                   f"{err}'")))
            elif not rx.search(data):
                self.errs.append(("invalid", name, data, _msg(name, f"should match '{pat}'")))

    def _number(self, s: JSON, data: int | float, name: str) -> None:
        mult, mx, mn = s.get("multipleOf"), s.get("maximum"), s.get("minimum")
        if _num(mult):
            self.matches += 1
            if mult <= 0:
                self.errs.append(("invalid", name, mult,
                                  f"factor MultipleOf declared for {name} must be positive: {go_float(mult)}"))
            else:
                q = data / mult
                if mult < 1:
                    q = (1 / mult) * data
                if not _is_integral(float(q)):
                    self.errs.append(("invalid", name, data, _msg(name, f"should be a multiple of {go_float(mult)}")))
        if _num(mx):
            self.matches += 1
            exc = bool(s.get("exclusiveMaximum"))
            if data > mx or (exc and data >= mx):
                rule = "should be less than" if exc else "should be less than or equal to"
                self.errs.append(("invalid", name, data, _msg(name, f"{rule} {go_float(mx)}")))
        if _num(mn):
            self.matches += 1
            exc = bool(s.get("exclusiveMinimum"))
            if data < mn or (exc and data <= mn):
                rule = "should be greater than" if exc else "should be greater than or equal to"
                self.errs.append(("invalid", name, data, _msg(name, f"{rule} {go_float(mn)}")))

    def _enum(self, s: JSON, data: Any, name: str) -> None:
        enum = s.get("enum")
        if not isinstance(enum, list) or not enum:
            return
        self.matches += 1
        if data is not None and any(json_equal(data, e) for e in enum):
            return
        values = [e if isinstance(e, str) else json.dumps(e, separators=(",", ":")) for e in enum]
        self.errs.append(("not_supported", name, data, json.dumps(values)))

    # ---------------------------------------------------------------- compounds
    def _array(self, s: JSON, data: list[Any], name: str) -> None:
        items = s.get("items")
        if isinstance(items, dict):
            for i, x in enumerate(data):
                self.value(items, x, f"{name}[{i}]")
        elif isinstance(items, list):
            for i, x in enumerate(data[:len(items)]):
                self.value(items[i], x, f"{name}[{i}]")
        size = len(data)
        mn, mx = s.get("minItems"), s.get("maxItems")
        if isinstance(mn, int) and not isinstance(mn, bool):
            self.matches += 1
            if size < mn:
                self.errs.append(("invalid", name, size, _msg(name, f"should have at least {mn} items")))
        if isinstance(mx, int) and not isinstance(mx, bool):
            self.matches += 1
            if size > mx:
                self.errs.append(("too_many", name, size, f"must have at most {mx} items"))
        if s.get("uniqueItems") is True:
            self.matches += 1
            seen: list[Any] = []
            for x in data:
                if any(json_equal(x, y) for y in seen):
                    self.errs.append(("invalid", name, "", _msg(name, "shouldn't contain duplicates")))
                    break
                seen.append(x)

    def _object(self, s: JSON, data: JSON, name: str) -> None:
        n = len(data)
        mn, mx = s.get("minProperties"), s.get("maxProperties")
        if isinstance(mn, int) and not isinstance(mn, bool) and n < mn:
            self.errs.append(("invalid", name, mn, _msg(name, f"should have at least {mn} properties")))
            return
        if isinstance(mx, int) and not isinstance(mx, bool) and n > mx:
            self.errs.append(("too_many", name, n, f"must have at most {mx} items"))
            return
        self.matches += 1
        props = _d(s.get("properties"))
        ap = s.get("additionalProperties")
        if ap is False:
            for k in data:
                if k not in props:
                    self.errs.append(("invalid", name, k, _msg(f"{name}.{k}", "is a forbidden property")))
        elif isinstance(ap, dict):
            for k, v in data.items():
                if k not in props:
                    self.value(ap, v, f"{name}.{k}")
        for k, ps in props.items():
            if k in data:
                self.value(ps, data[k], f"{name}.{k}" if name else k)
        req = s.get("required")
        if isinstance(req, list):
            for k in req:
                if isinstance(k, str) and k not in data:
                    self.errs.append(("required", f"{name}.{k}", None, ""))


# ------------------------------------------------------------------------- the compiled form

#: a compiled schema node: ``node(state, data, name)`` appends errors to ``state.errs`` and
#: counts ``state.matches`` exactly as :meth:`_Validator.value` does for that node
Node = Callable[["_Validator", Any, str], None]
_KINDS: dict[type, str] = {bool: "boolean", int: "integer", float: "number", str: "string", list: "array",
                           dict: "object"}


def _noop(v: _Validator, data: Any, name: str) -> None:
    return None


def _compile_node(s: Any) -> Node:
    """One schema node as a closure (the checks of :meth:`_Validator.value`, keywords read
    once); children compiled recursively."""
    if not isinstance(s, dict):
        return _noop
    types = schema_types(s)
    f = s.get("format")
    fmt = f if isinstance(f, str) else ""
    checks_type = bool(types or fmt)
    has_props = bool(_l(s.get("anyOf")) or _l(s.get("oneOf")) or _l(s.get("allOf")) or isinstance(s.get("not"), dict))
    enum = s.get("enum")
    has_enum = isinstance(enum, list) and bool(enum)
    mx, mn, pat = s.get("maxLength"), s.get("minLength"), s.get("pattern")
    has_string = (isinstance(mx, int) and not isinstance(mx, bool)) or (isinstance(mn, int) and not isinstance(mn, bool)) \
        or (isinstance(pat, str) and bool(pat))
    fmt_check = FORMATS.get(fmt) if fmt else None
    number = _compile_number(s)
    type_set = frozenset(types)
    array = _compile_array(s)
    obj = _compile_object(s)

    def node(v: _Validator, data: Any, name: str) -> None:
        if data is None:
            if checks_type:
                v._type(s, types, fmt, data, name)
            if has_enum:
                v._enum(s, data, name)
            return
        kind = _KINDS.get(type(data)) or json_type(data)
        if checks_type:
            if kind in type_set:   # no type error whatever the format (see _Validator._type)
                v.matches += 1
            else:
                v._type(s, types, fmt, data, name)
        if has_props:
            v._props(s, data, name)
        if kind == "string":
            if has_string:
                v._string(s, data, name)
            if fmt_check is not None:
                v.matches += 1
                if not fmt_check(data):
                    v.errs.append(("type_invalid", name, data, _msg(name, f"must be of type {fmt}: "
                                                                        f"{json.dumps(data)}")))
        elif kind == "integer" or kind == "number":
            if number is not None:
                number(v, data, name)
        elif kind == "array":
            array(v, data, name)
        if has_enum:
            v._enum(s, data, name)
        if kind == "object":
            obj(v, data, name)
    return node


def _compile_number(s: JSON) -> Node | None:
    """:meth:`_Validator._number` reading its keywords once; None when there is none. Bounds
    alone (the common case) are checked inline; multipleOf goes through the method."""
    mult, mx, mn = s.get("multipleOf"), s.get("maximum"), s.get("minimum")
    if _num(mult):
        return lambda v, data, name: v._number(s, data, name)
    has_max, has_min = _num(mx), _num(mn)
    if not (has_max or has_min):
        return None
    mx_text = go_float(mx) if _num(mx) else ""
    mn_text = go_float(mn) if _num(mn) else ""
    exc_max, exc_min = bool(s.get("exclusiveMaximum")), bool(s.get("exclusiveMinimum"))

    def number(v: _Validator, data: Any, name: str) -> None:
        if has_max:
            v.matches += 1
            if data > mx or (exc_max and data >= mx):
                rule = "should be less than" if exc_max else "should be less than or equal to"
                v.errs.append(("invalid", name, data, _msg(name, f"{rule} {mx_text}")))
        if has_min:
            v.matches += 1
            if data < mn or (exc_min and data <= mn):
                rule = "should be greater than" if exc_min else "should be greater than or equal to"
                v.errs.append(("invalid", name, data, _msg(name, f"{rule} {mn_text}")))
    return number


def _compile_array(s: JSON) -> Node:
    """:meth:`_Validator._array` with its items compiled."""
    items = s.get("items")
    each = _compile_node(items) if isinstance(items, dict) else None
    tuple_items = [_compile_node(x) for x in items] if isinstance(items, list) else None
    mn, mx = s.get("minItems"), s.get("maxItems")
    has_min = isinstance(mn, int) and not isinstance(mn, bool)
    has_max = isinstance(mx, int) and not isinstance(mx, bool)
    unique = s.get("uniqueItems") is True
    bounds = has_min or has_max or unique

    def array(v: _Validator, data: list[Any], name: str) -> None:
        if each is not None:
            for i, x in enumerate(data):
                each(v, x, f"{name}[{i}]")
        elif tuple_items is not None:
            for i, x in enumerate(data[:len(tuple_items)]):
                tuple_items[i](v, x, f"{name}[{i}]")
        if bounds:
            v._array({k: s[k] for k in ("minItems", "maxItems", "uniqueItems") if k in s}, data, name)
    return array


def _compile_object(s: JSON) -> Node:
    """:meth:`_Validator._object` with its properties compiled."""
    mn, mx = s.get("minProperties"), s.get("maxProperties")
    min_p = mn if isinstance(mn, int) and not isinstance(mn, bool) else None
    max_p = mx if isinstance(mx, int) and not isinstance(mx, bool) else None
    props = _d(s.get("properties"))
    compiled = [(k, _compile_node(ps)) for k, ps in props.items()]
    ap = s.get("additionalProperties")
    forbid_others = ap is False
    others = _compile_node(ap) if isinstance(ap, dict) else None
    req = s.get("required")
    required = [k for k in req if isinstance(k, str)] if isinstance(req, list) else []

    def obj(v: _Validator, data: JSON, name: str) -> None:
        n = len(data)
        if min_p is not None and n < min_p:
            v.errs.append(("invalid", name, min_p, _msg(name, f"should have at least {min_p} properties")))
            return
        if max_p is not None and n > max_p:
            v.errs.append(("too_many", name, n, f"must have at most {max_p} items"))
            return
        v.matches += 1
        if forbid_others:
            for k in data:
                if k not in props:
                    v.errs.append(("invalid", name, k, _msg(f"{name}.{k}", "is a forbidden property")))
        elif others is not None:
            for k, x in data.items():
                if k not in props:
                    others(v, x, f"{name}.{k}")
        for k, node in compiled:
            if k in data:
                node(v, data[k], f"{name}.{k}" if name else k)
        for k in required:
            if k not in data:
                v.errs.append(("required", f"{name}.{k}", None, ""))
    return obj


#: the compiled validator of a schema, memoized by the schema's identity
compile_schema: IdentityCache[Node] = IdentityCache(_compile_node)


def _num(v: Any) -> TypeGuard[int | float]:
    return isinstance(v, (int, float)) and not isinstance(v, bool)


def _d(v: Any) -> JSON:
    return v if isinstance(v, dict) else {}


def _l(v: Any) -> list[Any]:
    return v if isinstance(v, list) else []


def _join(path: str, name: str) -> str:
    name = name[1:] if name.startswith(".") else name
    if not name:
        return path
    if not path:
        return name
    return f"{path}.{name}"


def to_causes(errors: list[Err], path: str, errs: ErrorList) -> None:
    """kubeOpenAPIResultToFieldErrors: kube-openapi errors → StatusCauses under ``path``."""
    for kind, name, value, msg in errors:
        f = _join(path, name)
        if kind == "required":
            errs.required(f)
        elif kind == "not_supported":
            add_cause(errs, "not_supported", f, value,
                      "supported values: " + ", ".join(json.dumps(v, ensure_ascii=False) for v in json.loads(msg)))
        elif kind == "too_long":
            add_message(errs, "FieldValueTooLong", f, msg)
        elif kind == "too_many":
            add_cause(errs, "too_many", f, value, msg)
        elif kind == "type_invalid":
            add_cause(errs, "type_invalid", f, value, msg)
        elif kind == "composite":
            add_cause(errs, "invalid", path, "", msg)
        else:
            add_cause(errs, "invalid", f, value, msg)


def validate_values(schema: JSON, obj: Any, path: str = "") -> ErrorList:
    """The value validation of ``obj`` against ``schema`` (an OpenAPI v3 schema dict as a CRD
    holds it): a list of StatusCauses, empty when valid; fields are ``path`` + the value's
    name (``spec.replicas``). Never raises on malformed input."""
    v = _Validator()
    compile_schema(schema)(v, obj, "")
    errs = ErrorList()
    to_causes(v.errs, path, errs)
    return errs
