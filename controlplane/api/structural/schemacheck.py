"""Whether a CRD version's OpenAPI v3 schema is acceptable: the apiextensions rules.

Three sources, run in this order as ``ValidateCustomResourceDefinitionValidation`` does
(``staging/src/k8s.io/apiextensions-apiserver/pkg/apis/apiextensions/validation/validation.go``):

1. ``ValidateCustomResourceDefinitionOpenAPISchema``: the OpenAPI subset CRDs may use
   (no ``$ref``, ``id``, ``patternProperties``, ``definitions``, ``dependencies``,
   ``additionalItems``, ``type: null``, ``uniqueItems: true``; known types;
   ``additionalProperties`` and ``properties`` mutually exclusive; the list-type, map-type and
   preserve-unknown-fields rules);
2. ``structuralschema.ValidateStructural``
   (``.../pkg/apiserver/schema/validation.go``): a type everywhere (except under
   ``x-kubernetes-int-or-string`` / ``x-kubernetes-preserve-unknown-fields``), nothing but
   value validation inside allOf/anyOf/oneOf/not, metadata restricted to name and
   generateName, every field of a value validation also specified outside it; errors sorted;
3. ``structuraldefaulting.ValidateDefaults`` (``.../schema/defaulting/validation.go``): each
   ``default`` valid against its schema and already pruned; none inside metadata except
   name / generateName... (run only when 2 found nothing).

The result is an ErrorList of StatusCauses whose ``warnings`` attribute lists the
x-kubernetes-validations rules that cannot be evaluated (skipped, never an error).
"""

from __future__ import annotations

import copy
import json
from typing import Any

from controlplane.api.structural.goformat import StringSlice, add_cause
from controlplane.api.structural.objectmeta import validate_embedded
from controlplane.api.structural.pruning import prune_unknown
from controlplane.api.structural.values import compile_pattern, validate_values
from controlplane.api.validators import ErrorList

JSON = dict[str, Any]

OPENAPI_V3_TYPES = ["array", "boolean", "integer", "number", "object", "string"]

#: the JSONSchemaProps fields that are "generic" (not value validation): forbidden in
#: allOf/anyOf/oneOf/not, with Kubernetes' wording
_NESTED_FORBIDDEN_GENERIC = (
    ("type", "must be empty to be structural"),
    ("default", "must be undefined to be structural"),
    ("title", "must be empty to be structural"),
    ("description", "must be empty to be structural"),
    ("nullable", "must be false to be structural"),
    ("externalDocs", "must be undefined to be structural"),
    ("x-kubernetes-preserve-unknown-fields", "must be false to be structural"),
    ("x-kubernetes-embedded-resource", "must be false to be structural"),
    ("x-kubernetes-int-or-string", "must be false to be structural"),
    ("x-kubernetes-list-map-keys", "must be empty to be structural"),
    ("x-kubernetes-list-type", "must be undefined to be structural"),
    ("x-kubernetes-map-type", "must be undefined to be structural"),
    ("x-kubernetes-validations", "must be empty to be structural"),
)


class SchemaErrors(ErrorList):
    """An ErrorList with the warnings of a schema check (``warnings``: messages, such as
    a CEL rule that is not supported and therefore skipped)."""

    def __init__(self) -> None:
        super().__init__()
        self.warnings: list[str] = []


def _c(path: str, k: str) -> str:
    return f"{path}.{k}"


def _key(path: str, k: str) -> str:
    return f"{path}[{k}]"


def _d(v: Any) -> JSON:
    return v if isinstance(v, dict) else {}


def _truthy(s: JSON, k: str) -> bool:
    v = s.get(k)
    return v is not None and v is not False and v != "" and v != [] and v != {}


# --------------------------------------------------------------------------- 1. OpenAPI subset

class _Ctx:
    """specStandardValidatorV3's state while walking: defaults allowed (or the reason they
    are not), inside a resource's metadata/apiVersion/kind, the first uncorrelatable
    ancestor (for oldSelf), whether CEL checks run (the schema is otherwise valid)."""

    __slots__ = ("no_defaults", "inside_meta", "uncorrelatable", "cel", "warnings")

    def __init__(self, warnings: list[str], cel: bool) -> None:
        self.no_defaults: str | None = None
        self.inside_meta = False
        self.uncorrelatable: str | None = None
        self.cel = cel
        self.warnings = warnings

    def child(self, **kw: Any) -> _Ctx:
        c = _Ctx(self.warnings, self.cel)
        c.no_defaults, c.inside_meta, c.uncorrelatable = self.no_defaults, self.inside_meta, self.uncorrelatable
        for k, v in kw.items():
            setattr(c, k, v)
        return c


_META_FIELDS = ("metadata", "kind", "apiVersion")


def _openapi(s: Any, path: str, errs: ErrorList, ctx: _Ctx, is_root: bool = False) -> None:
    """ValidateCustomResourceDefinitionOpenAPISchema (with specStandardValidatorV3.validate)."""
    if not isinstance(s, dict):
        return
    t = s.get("type")
    if t is not None and t != "" and t not in OPENAPI_V3_TYPES:
        errs.not_supported(_c(path, "type"), t, OPENAPI_V3_TYPES)
    if s.get("default") is not None and ctx.no_defaults is not None:
        errs.forbidden(_c(path, "default"), "must not be set" + (f" {ctx.no_defaults}" if ctx.no_defaults else ""))
    for k, msg in (("id", "id is not supported"), ("additionalItems", "additionalItems is not supported"),
                   ("patternProperties", "patternProperties is not supported"),
                   ("definitions", "definitions is not supported"),
                   ("dependencies", "dependencies is not supported"),
                   ("$ref", "$ref is not supported")):
        if _truthy(s, k):
            errs.forbidden(_c(path, k), msg)
    if t == "null":
        errs.forbidden(_c(path, "type"), "type cannot be set to null, use nullable as an alternative")
    items = s.get("items")
    if isinstance(items, list) and items:
        errs.forbidden(_c(path, "items"), "items must be a schema object and not an array")
    if ctx.inside_meta and s.get("x-kubernetes-embedded-resource"):
        errs.forbidden(_c(path, "x-kubernetes-embedded-resource"), "must not be used inside of resource meta")
    if s.get("uniqueItems") is True:
        errs.forbidden(_c(path, "uniqueItems"),
                       "uniqueItems cannot be set to true since the runtime complexity becomes quadratic")
    ap = s.get("additionalProperties")
    props = _d(s.get("properties"))
    if ap is not None:
        if props and (ap is False or isinstance(ap, dict)):
            errs.forbidden(_c(path, "additionalProperties"), "additionalProperties and properties are mutual exclusive")
        if isinstance(ap, dict):
            sub = ctx.child(no_defaults="inside additionalProperties applying to object metadata") \
                if ctx.inside_meta else ctx
            _openapi(ap, _c(path, "additionalProperties"), errs, sub)
    mt = s.get("x-kubernetes-map-type")
    for k, ps in props.items():
        sub = ctx
        if mt not in (None, "granular", "atomic") and ctx.uncorrelatable is None:
            sub = sub.child(uncorrelatable=path)
        if (is_root or s.get("x-kubernetes-embedded-resource")) and k in _META_FIELDS:
            sub = sub.child(inside_meta=True)
            if is_root:
                sub = sub.child(no_defaults=f"in top-level {k}")
        _openapi(ps, _key(_c(path, "properties"), k), errs, sub)
    if isinstance(s.get("not"), dict):
        _openapi(s["not"], _c(path, "not"), errs, ctx)
    for junctor in ("allOf", "oneOf", "anyOf"):
        for i, sub_s in enumerate(_list(s.get(junctor))):
            _openapi(sub_s, f"{path}.{junctor}[{i}]", errs, ctx)
    lt = s.get("x-kubernetes-list-type")
    if isinstance(items, dict):
        sub = ctx if lt == "map" or ctx.uncorrelatable is not None else ctx.child(uncorrelatable=path)
        _openapi(items, _c(path, "items"), errs, sub)
    if s.get("x-kubernetes-preserve-unknown-fields") is False:
        errs.invalid(_c(path, "x-kubernetes-preserve-unknown-fields"), False, "must be true or undefined")
    if mt is not None:
        if t != "object":
            if not t:
                errs.required(_c(path, "type"), "must be object if x-kubernetes-map-type is specified")
            else:
                errs.invalid(_c(path, "type"), t, "must be object if x-kubernetes-map-type is specified")
        if mt not in ("atomic", "granular"):
            errs.not_supported(_c(path, "x-kubernetes-map-type"), mt, ["atomic", "granular"])
    if lt is not None and t != "array":
        if not t:
            errs.required(_c(path, "type"), "must be array if x-kubernetes-list-type is specified")
        else:
            errs.invalid(_c(path, "type"), t, "must be array if x-kubernetes-list-type is specified")
    elif lt == "set" and isinstance(items, dict):
        it = items.get("type")
        if it == "array" and items.get("x-kubernetes-list-type") not in (None, "atomic"):
            errs.invalid(_c(_c(path, "items"), "x-kubernetes-list-type"), items.get("x-kubernetes-list-type"),
                         "must be atomic as item of a list with x-kubernetes-list-type=set")
        elif it == "object" and items.get("x-kubernetes-map-type") != "atomic":
            errs.invalid(_c(_c(path, "items"), "x-kubernetes-map-type"), items.get("x-kubernetes-list-type"),
                         "must be atomic as item of a list with x-kubernetes-list-type=set")
    if lt is not None and lt not in ("atomic", "set", "map"):
        errs.not_supported(_c(path, "x-kubernetes-list-type"), lt, ["atomic", "set", "map"])
    keys = s.get("x-kubernetes-list-map-keys")
    if keys:
        if lt is None:
            errs.required(_c(path, "x-kubernetes-list-type"), "must be map if x-kubernetes-list-map-keys is non-empty")
        elif lt != "map":
            errs.invalid(_c(path, "x-kubernetes-list-type"), lt, "must be map if x-kubernetes-list-map-keys is non-empty")
    key_list = [str(k) for k in keys] if isinstance(keys, list) else []
    if lt == "map":
        if not keys:
            errs.required(_c(path, "x-kubernetes-list-map-keys"), "must not be empty if x-kubernetes-list-type is map")
        if items is None:
            errs.required(_c(path, "items"), "must have a schema if x-kubernetes-list-type is map")
        elif isinstance(items, dict):
            if items.get("type") != "object":
                errs.invalid(_c(_c(path, "items"), "type"), items.get("type") or "",
                             "must be object if parent array's x-kubernetes-list-type is map")
            else:
                iprops = _d(items.get("properties"))
                seen: set[str] = set()
                for k in key_list:
                    if k in iprops:
                        if _d(iprops[k]).get("type") in ("array", "object"):
                            errs.invalid(_c(_key(_c(_c(path, "items"), "properties"), k), "type"), items.get("type"),
                                         "must be a scalar type if parent array's x-kubernetes-list-type is map")
                    else:
                        add_cause(errs, "invalid", _c(path, "x-kubernetes-list-map-keys"), StringSlice(key_list),
                                  "entries must all be names of item properties")
                    if k in seen:
                        add_cause(errs, "invalid", _c(path, "x-kubernetes-list-map-keys"), StringSlice(key_list),
                                  "must not contain duplicate entries")
                    seen.add(k)
    # validateMapListKeysMapSet
    if lt in ("set", "map") and isinstance(items, dict):
        if items.get("nullable"):
            errs.forbidden(_c(_c(path, "items"), "nullable"), f"cannot be nullable when x-kubernetes-list-type is {lt}")
        if lt == "map":
            required = set(_list(items.get("required")))
            iprops = _d(items.get("properties"))
            for k in key_list:
                if k not in iprops:
                    continue
                kp = _d(iprops[k])
                kpath = _key(_c(_c(path, "items"), "properties"), k)
                if k not in required and kp.get("default") is None:
                    errs.required(_c(kpath, "default"), "this property is in x-kubernetes-list-map-keys, so it must "
                                                        "have a default or be a required property")
                if kp.get("nullable"):
                    errs.forbidden(_c(kpath, "nullable"), "this property is in x-kubernetes-list-map-keys, so it "
                                                          "cannot be nullable")
    if "x-kubernetes-validations" in s:
        from controlplane.api.structural.cel import check_rules_at  # cel-python: on first use
        check_rules_at(s, path, errs, ctx.warnings, uncorrelatable=ctx.uncorrelatable, cel_checks=ctx.cel)


# --------------------------------------------------------------------------- 2. structural

_ROOT, _ITEM, _FIELD = 0, 1, 2


def _is_int_or_string_any_of(any_of: Any) -> bool:
    return (isinstance(any_of, list) and len(any_of) == 2
            and any_of[0] == {"type": "integer"} and any_of[1] == {"type": "string"})


def _structural(s: JSON, lvl: int, path: str, errs: ErrorList) -> None:
    t = s.get("type") or ""
    items = s.get("items")
    if t == "array" and items is None:
        errs.required(_c(path, "items"), "must be specified")
    if isinstance(items, dict):
        _structural(items, _ITEM, _c(path, "items"), errs)
    for k, ps in _d(s.get("properties")).items():
        _structural(_d(ps), _FIELD, _key(_c(path, "properties"), k), errs)
    ap = s.get("additionalProperties")
    if ap is not None and ap is not False:
        if lvl == _ROOT:
            errs.forbidden(_c(path, "additionalProperties"), "must not be used at the root")
        if isinstance(ap, dict):
            _structural(ap, _FIELD, _c(path, "additionalProperties"), errs)
    ios = bool(s.get("x-kubernetes-int-or-string"))
    puf = bool(s.get("x-kubernetes-preserve-unknown-fields"))
    emb = bool(s.get("x-kubernetes-embedded-resource"))
    if ios and puf:
        errs.invalid(_c(path, "x-kubernetes-preserve-unknown-fields"), True,
                     "must be false if x-kubernetes-int-or-string is true")
    if ios and emb:
        errs.invalid(_c(path, "x-kubernetes-embedded-resource"), True,
                     "must be false if x-kubernetes-int-or-string is true")
    skip_any_of = _is_int_or_string_any_of(s.get("anyOf"))
    all_of = s.get("allOf")
    skip_first_all_of_any_of = (isinstance(all_of, list) and len(all_of) >= 1
                                and _is_int_or_string_any_of(_d(all_of[0]).get("anyOf")))
    _value_validation(s, skip_any_of, skip_first_all_of_any_of, lvl, path, errs)
    check_metadata = lvl == _ROOT or emb
    if emb and t != "object":
        if not t:
            errs.required(_c(path, "type"), "must be object if x-kubernetes-embedded-resource is true")
        else:
            errs.invalid(_c(path, "type"), t, "must be object if x-kubernetes-embedded-resource is true")
    elif not t and not ios and not puf:
        detail = {_ROOT: "must not be empty at the root", _ITEM: "must not be empty for specified array items",
                  _FIELD: "must not be empty for specified object fields"}[lvl]
        errs.required(_c(path, "type"), detail)
    if emb and ap is not None:
        errs.forbidden(_c(path, "additionalProperties"), "must not be used if x-kubernetes-embedded-resource is set")
    if lvl == _ROOT and t and t != "object":
        errs.invalid(_c(path, "type"), t, "must be object at the root")
    props = _d(s.get("properties"))
    for k in ("kind", "apiVersion"):
        if k in props and check_metadata and _d(props[k]).get("type") != "string":
            errs.invalid(_c(_key(_c(path, "properties"), k), "type"), _d(props[k]).get("type") or "", "must be string")
    if "metadata" in props:
        m = _d(props["metadata"])
        mpath = _key(_c(path, "properties"), "metadata")
        if check_metadata and m.get("type") != "object":
            errs.invalid(_c(mpath, "type"), m.get("type") or "", "must be object")
        if lvl == _ROOT:
            rest = {k: v for k, v in m.items() if k not in ("type", "default")}
            mprops = _d(rest.get("properties"))
            if set(mprops) <= {"name", "generateName"} and mprops:
                rest.pop("properties", None)
            if rest:
                errs.forbidden(mpath, "must not specify anything other than name and generateName, "
                                      "but metadata is implicitly specified")
    if emb and not puf and not props:
        errs.required(_c(path, "properties"),
                      "must not be empty if x-kubernetes-embedded-resource is true without "
                      "x-kubernetes-preserve-unknown-fields")


def _value_validation(s: JSON, skip_any_of: bool, skip_first_all_of_any_of: bool, lvl: int, path: str,
                      errs: ErrorList) -> None:
    if not skip_any_of:
        for i, sub in enumerate(_list(s.get("anyOf"))):
            _nested(_d(sub), False, lvl, f"{path}.anyOf[{i}]", errs)
    for i, sub in enumerate(_list(s.get("allOf"))):
        _nested(_d(sub), skip_first_all_of_any_of and i == 0, lvl, f"{path}.allOf[{i}]", errs)
    for i, sub in enumerate(_list(s.get("oneOf"))):
        _nested(_d(sub), False, lvl, f"{path}.oneOf[{i}]", errs)
    if isinstance(s.get("not"), dict):
        _nested(s["not"], False, lvl, _c(path, "not"), errs)
    pat = s.get("pattern")
    if isinstance(pat, str) and pat:
        rx, err = compile_pattern(pat)
        if rx is None:
            errs.invalid(_c(path, "pattern"), pat, f"must be a valid regular expression, but isn't: {err}")


def _list(v: Any) -> list[Any]:
    return v if isinstance(v, list) else []


def _nested(v: JSON, skip_any_of: bool, lvl: int, path: str, errs: ErrorList) -> None:
    _value_validation(v, skip_any_of, False, lvl, path, errs)
    if isinstance(v.get("items"), dict):
        _nested(v["items"], False, lvl, _c(path, "items"), errs)
    for k, ps in _d(v.get("properties")).items():
        _nested(_d(ps), False, _FIELD, _key(_c(path, "properties"), k), errs)
    for k, msg in _NESTED_FORBIDDEN_GENERIC:
        if _truthy(v, k):
            errs.forbidden(_c(path, k), msg)
    if v.get("additionalProperties") is not None:
        errs.forbidden(_c(path, "additionalProperties"), "must be undefined to be structural")
    if "metadata" in _d(v.get("properties")):
        errs.forbidden(_key(_c(path, "properties"), "metadata"), "must not be specified in a nested context")


def _completeness(s: JSON, path: str, errs: ErrorList) -> None:
    """validateStructuralCompleteness: every field or items named in a value validation
    (allOf/anyOf/oneOf/not) is specified in the structural part too."""
    _vv_completeness(s, s, path, path, errs)
    if isinstance(s.get("items"), dict):
        _completeness(s["items"], _c(path, "items"), errs)
    for k, ps in _d(s.get("properties")).items():
        _completeness(_d(ps), _key(_c(path, "properties"), k), errs)
    if isinstance(s.get("additionalProperties"), dict):
        _completeness(s["additionalProperties"], _c(path, "additionalProperties"), errs)


def _vv_completeness(v: JSON, s: JSON | None, spath: str, vpath: str, errs: ErrorList) -> None:
    for junctor in ("allOf", "anyOf", "oneOf"):
        for i, sub in enumerate(_list(v.get(junctor))):
            _nested_completeness(_d(sub), s, spath, f"{vpath}.{junctor}[{i}]", errs)
    if isinstance(v.get("not"), dict):
        _nested_completeness(v["not"], s, spath, _c(vpath, "not"), errs)


def _nested_completeness(v: JSON, s: JSON | None, spath: str, vpath: str, errs: ErrorList) -> None:
    if s is None:
        errs.required(spath, f"because it is defined in {vpath}")
        return
    _vv_completeness(v, s, spath, vpath, errs)
    if isinstance(v.get("items"), dict):
        si = s.get("items")
        _nested_completeness(v["items"], si if isinstance(si, dict) else None, _c(spath, "items"),
                             _c(vpath, "items"), errs)
    sprops = _d(s.get("properties"))
    for k, vf in _d(v.get("properties")).items():
        if k not in sprops:
            errs.required(_key(_c(spath, "properties"), k),
                          f"because it is defined in {_key(_c(vpath, 'properties'), k)}")
        else:
            _nested_completeness(_d(vf), _d(sprops[k]), _key(_c(spath, "properties"), k),
                                 _key(_c(vpath, "properties"), k), errs)


# --------------------------------------------------------------------------- 3. defaults

def _defaults(s: JSON, path: str, inside_meta: bool, errs: ErrorList) -> None:
    """validate() of defaulting/validation.go: each default valid against its own schema;
    outside metadata also already pruned and with valid embedded resources; inside the
    metadata / apiVersion / kind of a resource (the root, an embedded resource) valid as
    ObjectMeta values. additionalProperties are not followed (as Kubernetes)."""
    emb = bool(s.get("x-kubernetes-embedded-resource"))
    if emb:
        inside_meta = False
    if s.get("default") is not None:
        d = s["default"]
        dpath = _c(path, "default")
        if inside_meta:
            errs.extend(validate_values(s, d, dpath))
        else:
            pruned = copy.deepcopy(d)
            prune_unknown(s, pruned, is_resource_root=emb)
            if pruned != d:
                add_cause(errs, "invalid", dpath, d, "must not have unknown fields")
            meta_errs = validate_embedded(s, d, dpath, is_resource_root=emb)
            if meta_errs:
                errs.extend(meta_errs)
            else:
                errs.extend(validate_values(s, d, dpath))
    if isinstance(s.get("items"), dict):
        _defaults(s["items"], _c(path, "items"), inside_meta, errs)
    for k, ps in _d(s.get("properties")).items():
        sub_meta = inside_meta or (emb and k in ("metadata", "apiVersion", "kind"))
        _defaults(_d(ps), _key(_c(path, "properties"), k), sub_meta, errs)


def _sort_key(c: JSON) -> str:
    return f"{c['field']}: {c['message']}"


def check_schema(schema: JSON, path: str = "spec.validation.openAPIV3Schema", *,
                 status_subresource: bool = False) -> SchemaErrors:
    """The problems of a CRD version's ``openAPIV3Schema`` (StatusCauses under ``path``,
    e.g. ``spec.versions[0].schema.openAPIV3Schema``), empty when acceptable; the result's
    ``warnings`` name the CEL rules that cannot be evaluated here (skipped at run time).

    ``status_subresource``: the version serves /status, so the root may only hold
    ``type: object``, properties, required, description... (a status schema must be
    extractable as ``properties.status``)."""
    out = SchemaErrors()
    if not isinstance(schema, dict):
        out.required(path, "")
        return out
    if status_subresource:
        t = schema.get("type")
        if t is not None and t != "object":
            out.invalid(_c(path, "type"), t,
                        'only "object" is allowed as the type at the root of the schema if the status '
                        'subresource is enabled')
        extra = [k for k in schema if k not in _ALLOWED_AT_ROOT and _truthy(schema, k)]
        if extra:
            add_cause(out, "invalid", path, json.dumps(schema, sort_keys=True),
                      f"only {_ALLOWED_AT_ROOT_GO} fields are allowed at the root of the schema if the "
                      "status subresource is enabled")
    if schema.get("nullable"):
        out.forbidden(_c(path, "nullable"), "nullable cannot be true at the root")
    structural = ErrorList()
    _structural(schema, _ROOT, path, structural)
    _completeness(schema, path, structural)
    structural.sort(key=_sort_key)
    out.extend(structural)
    defaults = ErrorList()
    if not structural:
        root = dict(schema)
        root["x-kubernetes-embedded-resource"] = True  # ValidateDefaults(isResourceRoot=true)
        _defaults(root, path, False, defaults)
        out.extend(defaults)
    _openapi(schema, path, out, _Ctx(out.warnings, cel=not structural and not defaults), is_root=True)
    return out


#: allowedFieldsAtRootSchema (JSON names) and as Kubernetes prints the list
_ALLOWED_AT_ROOT = ("description", "type", "format", "title", "maximum", "exclusiveMaximum", "minimum",
                    "exclusiveMinimum", "maxLength", "minLength", "pattern", "maxItems", "minItems", "uniqueItems",
                    "multipleOf", "required", "items", "properties", "externalDocs", "example",
                    "x-kubernetes-preserve-unknown-fields", "x-kubernetes-validations")
_ALLOWED_AT_ROOT_GO = ("[Description Type Format Title Maximum ExclusiveMaximum Minimum ExclusiveMinimum MaxLength "
                       "MinLength Pattern MaxItems MinItems UniqueItems MultipleOf Required Items Properties "
                       "ExternalDocs Example XPreserveUnknownFields XValidations]")
