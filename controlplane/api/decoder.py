"""Decoding a JSON value into a kind's Go types, as the apiserver's JSON decoder does.

kube-apiserver decodes every request body into typed Go structs with ``sigs.k8s.io/json``
(case-sensitive ``encoding/json``; ``staging/src/k8s.io/apimachinery/pkg/runtime/serializer/json/json.go``):
a value of the wrong JSON type, an integer outside its Go type (``int32`` replicas, ports,
counts; ``int64`` seconds), a bad quantity, time or base64 string fails the decode; fields
the struct does not have are dropped (and reported as strict decoding errors with
``fieldValidation``); ``null`` is the zero value. Nothing a reader cannot decode is stored.

The types come from :mod:`controlplane.api.schemas`: the shared ``TYPES`` and each kind's
top-level fields (its registry entry's schema, :func:`~controlplane.api.schemas.kind_fields`).

* :func:`decode` ``(kind, obj, prune=True) -> list[str]`` — checks ``obj`` (a dict, in place:
  unknown fields removed when ``prune``, ``null`` list items / map values replaced by their
  zero value, the zero values of ``,omitempty`` fields removed as Go's encoder omits them)
  and returns the unknown fields' paths (``spec.containers[0].foo``); raises
  :class:`DecodeError` (``.message``: Go's text, e.g. ``json: cannot unmarshal number
  9223372036854775808 into Go struct field DeploymentSpec.spec.replicas of type int32``).
  Kinds absent from the table are not checked (``[]``).
* :func:`check_depth` ``(value, limit=MAX_DEPTH)`` — raises :class:`DecodeError` with the
  scanner's ``exceeded max depth`` when arrays/objects nest deeper than Go's
  ``encoding/json`` ``maxNestingDepth`` (10000); iterative, so any depth is safe to check.
* :func:`go_format` ``(value) -> str`` — a value as Go's ``%+v`` prints a
  ``map[string]interface{}`` (``map[a:1 b:[x y]]``), used in patch error messages.
"""

from __future__ import annotations

import base64
import binascii
import copy
import functools
import math
import re
from collections.abc import Iterable
from typing import Any

from controlplane.api import schemas
from controlplane.api.quantity import ERR_FORMAT_WRONG, parse_quantity
from controlplane.api.registry import KindKey, KindSchema, kind_name
from controlplane.api.resources import REGISTRY

#: Go encoding/json scanner's maxNestingDepth (also apimachinery util/json maxDepth)
MAX_DEPTH = 10000
#: nesting allowed inside a free-form ``object:`` field (a Go struct not modelled here: any
#: real Kubernetes struct is far shallower, so deeper input could never decode into it)
FREEFORM_DEPTH = 32

INT_RANGES = {32: (-(1 << 31), (1 << 31) - 1), 64: (-(1 << 63), (1 << 63) - 1)}
_INT32 = 1 << 31
_TIME = re.compile(r"^\d{4}-\d{2}-\d{2}[Tt]\d{2}:\d{2}:\d{2}(\.\d+)?([Zz]|[+-]\d{2}:\d{2})$")
_B64 = re.compile(r"[A-Za-z0-9+/]*={0,2}")


class DecodeError(ValueError):
    """A value that does not decode into its Go type; ``message`` is Go's error text.

    ``path`` is the field path with list indices (``spec.containers[0].image``), used by
    server-side apply's own wording."""

    def __init__(self, message: str, path: str = "", expected: str = "", got: str = "") -> None:
        super().__init__(message)
        self.message, self.path, self.expected, self.got = message, path, expected, got


def json_kind(v: Any) -> str:
    """The JSON kind Go's UnmarshalTypeError names: object, array, string, bool, number, null."""
    if v is None:
        return "null"
    if isinstance(v, bool):
        return "bool"
    if isinstance(v, dict):
        return "object"
    if isinstance(v, list):
        return "array"
    if isinstance(v, str):
        return "string"
    return "number"


# ------------------------------------------------------------------ compiled type specs
# a spec is a tuple: ("string",) ("bool",) ("int", bits) ("float",) ("quantity",)
# ("intorstring",) ("time", micro) ("bytes",) ("free", goname) ("list", elem)
# ("map", elem, goname) ("struct", name, fields, closed)

_SCALARS = {"string": ("string",), "boolean": ("bool",), "int32": ("int", 32), "int64": ("int", 64),
            "integer": ("int", 64), "number": ("float",), "Quantity": ("quantity",),
            "IntOrString": ("intorstring",), "Time": ("time", False), "MicroTime": ("time", True),
            "bytes": ("bytes",)}
_MAPS = {"map[string]": (("string",), "map[string]string"),
         "map[bytes]": (("bytes",), "map[string][]uint8"),
         "map[Quantity]": (("quantity",), "v1.ResourceList")}


@functools.lru_cache(maxsize=None)
def _spec(typ: str) -> tuple[Any, ...]:
    typ = schemas.base_type(typ)  # the ,omitempty tag is the struct's business (_Fields.omit)
    if typ.startswith("[]"):
        return ("list", _spec(typ[2:]))
    if typ in _MAPS:
        elem, goname = _MAPS[typ]
        return ("map", elem, goname)
    if typ in _SCALARS:
        return _SCALARS[typ]
    if typ.startswith("object:"):
        return ("free", typ[len("object:"):])
    if typ in schemas.struct_types():
        return ("struct", typ, _Fields(typ), typ not in schemas.OPEN_TYPES)
    raise KeyError(f"unknown schema type {typ!r}")


class _Fields:
    """A struct's fields, resolved lazily (types refer to each other); ``omit``: the fields
    tagged ``,omitempty`` (their zero values are dropped)."""

    def __init__(self, name: str, fields: dict[str, Any] | None = None) -> None:
        self.name, self._raw = name, fields
        self._map: dict[str, tuple[Any, ...]] | None = None
        self._omit: frozenset[str] = frozenset()

    def _resolve(self) -> dict[str, tuple[Any, ...]]:
        raw = self._raw if self._raw is not None else schemas.TYPES[self.name][1]
        self._omit = frozenset(f for f, (t, _d) in raw.items() if schemas.omits_zero(t))
        self._map = {f: _spec(schemas.base_type(t)) for f, (t, _d) in raw.items()}
        return self._map

    def get(self, k: str) -> tuple[Any, ...] | None:
        m = self._map if self._map is not None else self._resolve()
        return m.get(k)

    @property
    def specs(self) -> dict[str, tuple[Any, ...]]:
        """Every field's spec by name."""
        return self._map if self._map is not None else self._resolve()

    @property
    def omit(self) -> frozenset[str]:
        if self._map is None:
            self._resolve()
        return self._omit


def _is_zero(v: Any) -> bool:
    """Go's "empty value" of omitempty for a decoded JSON value: ``""``, ``0``, ``false``,
    an empty list or object."""
    t = type(v)
    if t is str or t is dict or t is list or t is bool:
        return not v
    if t is int or t is float:
        return bool(v == 0)
    if v is False or v == "" or v == [] or v == {}:
        return True
    return not isinstance(v, bool) and isinstance(v, (int, float)) and v == 0


def kind_spec(kind: str, api_version: str | None = None) -> tuple[Any, ...] | None:
    """The compiled struct spec of ``kind`` (apiVersion, kind, metadata and its fields; at
    ``api_version`` for a kind served at several versions), or None for a kind without a
    schema. Compiled once per kind and schema: an entry replaced in the registry at run
    time is compiled anew."""
    ks = schemas.kind_fields(kind, api_version)
    if ks is None:
        return None
    return _compiled_kind(kind, ks)


@functools.lru_cache(maxsize=256)
def _compiled_kind(kind: str, ks: KindSchema) -> tuple[Any, ...]:
    fields = {"apiVersion": ("string", ""), "kind": ("string", ""), "metadata": ("ObjectMeta", "")}
    fields.update(ks.fields)
    return ("struct", kind, _Fields(kind, fields), kind not in schemas.OPEN_TYPES)


def go_type(spec: tuple[Any, ...]) -> str:
    """The Go type name of ``spec`` as ``reflect.Type.String()`` prints it."""
    t = spec[0]
    if t == "string":
        return "string"
    if t == "bool":
        return "bool"
    if t == "int":
        return f"int{spec[1]}"
    if t == "float":
        return "float64"
    if t == "quantity":
        return "resource.Quantity"
    if t == "intorstring":
        return "intstr.IntOrString"
    if t == "time":
        return "v1.MicroTime" if spec[1] else "v1.Time"
    if t == "bytes":
        return "[]uint8"
    if t == "free":
        return str(spec[1])
    if t == "list":
        return "[]" + go_type(spec[1])
    if t == "map":
        return str(spec[2])
    return "v1." + str(spec[1])


def _zero(spec: tuple[Any, ...]) -> Any:
    t = spec[0]
    return {"string": "", "bool": False, "int": 0, "float": 0, "quantity": "0", "intorstring": 0,
            "struct": {}, "free": {}}.get(t)


# ------------------------------------------------------------------ the walk

class _Ctx:
    __slots__ = ("unknown", "prune", "readonly")

    def __init__(self, prune: bool, readonly: bool = False) -> None:
        self.unknown: list[str] = []
        self.prune, self.readonly = prune, readonly


def _type_error(v: Any, spec: tuple[Any, ...], fpath: tuple[Any, ...], struct: str, upath: str, value_text: str | None = None) -> DecodeError:
    what = value_text or json_kind(v)
    target = go_type(spec)
    if fpath:
        msg = f"json: cannot unmarshal {what} into Go struct field {struct}.{'.'.join(fpath)} of type {target}"
    else:
        msg = f"json: cannot unmarshal {what} into Go value of type {target}"
    return DecodeError(msg, upath, target, json_kind(v))


def _number_text(v: Any) -> str:
    if isinstance(v, float):
        return "number " + (repr(v) if not v.is_integer() or abs(v) >= 1e16 else f"{v:.1f}")
    return f"number {v}"


def _base64_error(s: str) -> str | None:
    """Go's base64.StdEncoding error for ``s`` (``illegal base64 data at input byte N``), or None."""
    m = _B64.match(s)
    end = m.end() if m else 0
    if end < len(s):
        return f"illegal base64 data at input byte {end}"
    try:
        base64.b64decode(s, validate=True)
    except (binascii.Error, ValueError):
        return f"illegal base64 data at input byte {max(len(s) - (len(s) % 4 or 4), 0)}"
    return None


def _freeform_depth_ok(v: Any) -> bool:
    """Whether objects and arrays nest at most :data:`FREEFORM_DEPTH` levels in ``v``."""
    return depth_at_most(v, FREEFORM_DEPTH)


def _walk(v: Any, spec: tuple[Any, ...], fpath: tuple[Any, ...], struct: str, upath: str, ctx: _Ctx) -> Any:
    t = spec[0]
    if t == "struct":
        if not isinstance(v, dict):
            raise _type_error(v, spec, fpath, struct, upath)
        fields, closed, name = spec[2], spec[3], spec[1]
        specs, omit, readonly = fields.specs, fields.omit, ctx.readonly
        for k in list(v):
            f = specs.get(k)
            if f is None:
                if closed:
                    ctx.unknown.append(f"{upath}.{k}" if upath else str(k))
                    if ctx.prune:
                        del v[k]
                continue
            val = v[k]
            if val is None:
                if f[0] != "time" and not readonly:
                    del v[k]  # null: the zero value (omitted when encoded)
                continue
            tv, ft = type(val), f[0]
            if (tv is str and ft == "string") or (tv is bool and ft == "bool") or \
                    (tv is int and ft == "int" and -_INT32 <= val < _INT32):
                nv = val  # all the walk checks of them (inline: most fields are such scalars)
            else:
                nv = _walk(val, f, fpath + (k,), name, f"{upath}.{k}" if upath else k, ctx)
            if not readonly and k in omit and _is_zero(nv):
                del v[k]  # omitempty: Go's encoder leaves the zero value out
                continue
            if nv is not val:
                v[k] = nv
        return v
    if t == "string":
        if not isinstance(v, str):
            raise _type_error(v, spec, fpath, struct, upath)
        return v
    if t == "bool":
        if not isinstance(v, bool):
            raise _type_error(v, spec, fpath, struct, upath)
        return v
    if t == "int":
        if isinstance(v, bool) or not isinstance(v, (int, float)):
            raise _type_error(v, spec, fpath, struct, upath)
        lo, hi = INT_RANGES[spec[1]]
        if isinstance(v, float) or not lo <= v <= hi:
            raise _type_error(v, spec, fpath, struct, upath, _number_text(v))
        return v
    if t == "float":
        if isinstance(v, bool) or not isinstance(v, (int, float)):
            raise _type_error(v, spec, fpath, struct, upath)
        return v
    if t == "list":
        if not isinstance(v, list):
            raise _type_error(v, spec, fpath, struct, upath)
        elem = spec[1]
        for i, item in enumerate(v):
            if item is None:
                if not ctx.readonly:
                    v[i] = _zero(elem)
                continue
            ni = _walk(item, elem, fpath, struct, f"{upath}[{i}]", ctx)
            if ni is not item:
                v[i] = ni
        return v
    if t == "map":
        if not isinstance(v, dict):
            raise _type_error(v, spec, fpath, struct, upath)
        elem = spec[1]
        for k, item in v.items():
            if item is None:
                if not ctx.readonly:
                    v[k] = _zero(elem)
                continue
            _walk(item, elem, fpath, struct, f"{upath}[{k}]", ctx)
        return v
    if t == "quantity":
        if isinstance(v, bool) or not isinstance(v, (str, int, float)):
            raise DecodeError(ERR_FORMAT_WRONG, upath, "resource.Quantity", json_kind(v))
        try:
            parse_quantity(v.strip() if isinstance(v, str) else v)
        except (ValueError, ArithmeticError):
            raise DecodeError(ERR_FORMAT_WRONG, upath, "resource.Quantity", json_kind(v)) from None
        return v
    if t == "intorstring":
        if isinstance(v, str):
            return v
        int32 = ("int", 32)
        if isinstance(v, bool) or not isinstance(v, (int, float)):
            raise _type_error(v, int32, (), struct, upath)
        lo, hi = INT_RANGES[32]
        if isinstance(v, float) or not lo <= v <= hi:
            raise _type_error(v, int32, (), struct, upath, _number_text(v))
        return v
    if t == "time":
        if not isinstance(v, str):
            raise _type_error(v, ("string",), (), struct, upath)
        if not _TIME.match(v):
            layout = "2006-01-02T15:04:05.000000Z07:00" if spec[1] else "2006-01-02T15:04:05Z07:00"
            raise DecodeError(f'parsing time {_go_quote(v)} as "{layout}": cannot parse {_go_quote(v)} as "2006"',
                              upath, go_type(spec), "string")
        return v
    if t == "bytes":
        if not isinstance(v, str):
            raise _type_error(v, spec, fpath, struct, upath)
        err = _base64_error(v)
        if err:
            raise DecodeError(err, upath, "[]uint8", "string")
        return v
    # free-form object
    if not isinstance(v, dict) or not _freeform_depth_ok(v):
        raise _type_error(v if not isinstance(v, dict) else {}, spec, fpath, struct, upath)
    return v


def _go_quote(s: str) -> str:
    return '"' + s.replace("\\", "\\\\").replace('"', '\\"') + '"'


def decode(kind: KindKey, obj: dict[str, Any], prune: bool = True, readonly: bool = False,
           api_version: str | None = None) -> list[str]:
    """Check ``obj`` against ``kind``'s Go types (in place); returns the unknown fields' paths.

    Raises :class:`DecodeError` for the first value that does not decode (document order,
    as Go's decoder reports its first error). ``prune``: remove the unknown fields (the
    decoder drops them); else only report them. ``readonly``: leave ``null``s and zero values
    as they are (a merge patch's deletions, an apply configuration); otherwise the zero values
    of ``,omitempty`` fields are removed (``readyReplicas: 0``, ``ports: []``), as the object
    Kubernetes stores and returns is Go's encoding of the decoded struct. ``api_version``: the
    version whose schema applies (a kind served at several versions; default: the kind's first
    entry). Kinds without a schema: ``[]``. A kind without Go types whose registry entry has a
    ``prune`` fact (a custom resource with a structural schema): ``metadata`` decodes as
    ObjectMeta, the rest is pruned by the schema (``apiextensions-apiserver``
    ``pkg/apiserver/schema/pruning``; on a copy when ``prune`` is False).
    """
    spec = (kind_spec(kind_name(kind), api_version)
            if isinstance(kind, str) or kind.schema is not None else None)
    if spec is None:
        r = REGISTRY.of_kind(kind)
        if r is None or r.prune is None:
            return []
        ctx = _Ctx(prune, readonly)
        meta = obj.get("metadata")
        if isinstance(meta, dict):
            _walk(meta, _spec("ObjectMeta"), ("metadata",), kind_name(kind), "metadata", ctx)
        elif meta is not None:
            raise _type_error(meta, _spec("ObjectMeta"), ("metadata",), kind_name(kind), "metadata")
        target = obj if prune else copy.deepcopy(obj)
        return ctx.unknown + r.prune(target)
    ctx = _Ctx(prune, readonly)
    _walk(obj, spec, (), kind_name(kind), "", ctx)
    return ctx.unknown


def depth(value: Any) -> int:
    """How deeply arrays and objects nest in ``value`` (a scalar: 0); iterative."""
    best, stack = 0, [(value, 1)]
    while stack:
        x, d = stack.pop()
        if isinstance(x, (dict, list)):
            best = max(best, d)
            stack.extend((c, d + 1) for c in (x.values() if isinstance(x, dict) else x)
                         if isinstance(c, (dict, list)))
    return best


def depth_at_most(value: Any, limit: int) -> bool:
    """``depth(value) <= limit``, stopping at the first array or object deeper than ``limit``
    (recursive, at most ``limit`` calls deep; the empty ones, as managedFields' ``{}`` leaves,
    cost no call)."""
    if not isinstance(value, (dict, list)):
        return True
    return limit >= 1 and _nested_within(value, 1, limit)


def _nested_within(x: dict[str, Any] | list[Any], d: int, limit: int) -> bool:
    """:func:`depth_at_most` of ``x``, an array or object at depth ``d`` (<= ``limit``)."""
    for c in (x.values() if isinstance(x, dict) else x):
        if isinstance(c, (dict, list)):
            if d >= limit:
                return False
            if c and not _nested_within(c, d + 1, limit):
                return False
    return True


def check_depth(value: Any, limit: int = MAX_DEPTH) -> None:
    """Raise :class:`DecodeError` (``invalid character '{' exceeded max depth``) when arrays and
    objects in ``value`` nest deeper than ``limit``; non-finite floats (YAML ``.nan``/``.inf``)
    raise ``json: unsupported value: NaN`` as Go's json.Marshal does converting YAML to JSON."""
    stack = [(value, 1)]
    while stack:
        x, d = stack.pop()
        it: Iterable[Any]
        if isinstance(x, dict):
            it = x.values()
        elif isinstance(x, list):
            it = x
        else:
            if isinstance(x, float) and not math.isfinite(x):
                raise DecodeError(f"json: unsupported value: {_go_float(x)}")
            continue
        if d > limit:
            raise DecodeError(f"invalid character '{'{' if isinstance(x, dict) else '['}' exceeded max depth")
        for c in it:
            if isinstance(c, (dict, list)):
                stack.append((c, d + 1))
            elif isinstance(c, float) and not math.isfinite(c):
                raise DecodeError(f"json: unsupported value: {_go_float(c)}")


def _go_float(x: float) -> str:
    return "NaN" if math.isnan(x) else ("+Inf" if x > 0 else "-Inf")


def go_format(v: Any, _depth: int = 0) -> str:
    """``v`` as Go's ``fmt.Sprintf("%+v", v)`` prints a decoded JSON value (maps sorted by key;
    beyond 100 levels of nesting ``...``)."""
    if isinstance(v, (dict, list)) and _depth > 100:
        return "..."
    if isinstance(v, dict):
        return "map[" + " ".join(f"{k}:{go_format(v[k], _depth + 1)}" for k in sorted(v, key=str)) + "]"
    if isinstance(v, list):
        return "[" + " ".join(go_format(x, _depth + 1) for x in v) + "]"
    if v is None:
        return "<nil>"
    if isinstance(v, bool):
        return "true" if v else "false"
    return str(v)
