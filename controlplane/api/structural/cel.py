"""``x-kubernetes-validations``: CEL rules of a CRD schema, compiled and evaluated with
cel-python (``celpy``).

Kubernetes' sources: ``staging/src/k8s.io/apiextensions-apiserver/pkg/apiserver/schema/cel/
validation.go`` (``Validator.Validate``, ``ruleMessageOrDefault``, ``fieldErrorForReason``,
transition rules evaluated only when an old value correlates), ``.../cel/compilation.go``
(``self`` / ``oldSelf``, property name escaping ``__dash__`` ``__dot__`` ``__slash__``
``__underscores__`` and ``__{keyword}__``) and the CRD validation of rules in
``pkg/apis/apiextensions/validation/validation.go`` (rule required, message without line
breaks, reason among FieldValueInvalid / FieldValueForbidden / FieldValueRequired /
FieldValueDuplicate).

A failing rule gives ``<field>: Invalid value: "<schema type>": <message>`` where the
message is the rule's ``message``, its evaluated ``messageExpression``, or ``failed rule:
<rule>``; ``reason`` and ``fieldPath`` choose the cause's type and field. A rule that
cel-python cannot parse, or that calls a function it lacks (Kubernetes' extension
libraries beyond the few implemented here), is reported by :func:`check_rules` as a
warning and skipped by :func:`validate_cel`.
"""

from __future__ import annotations

import base64
import binascii
import re
from dataclasses import dataclass, field
from functools import lru_cache
from typing import Any

import celpy
import lark
from celpy import celtypes

from controlplane.api.structural.celext import EXTENSIONS
from controlplane.api.structural.goformat import add_cause, add_message
from controlplane.api.validators import ErrorList

JSON = dict[str, Any]

REASONS = ["FieldValueInvalid", "FieldValueForbidden", "FieldValueRequired", "FieldValueDuplicate"]

_CEL_KEYWORDS = {"true", "false", "null", "in", "as", "break", "const", "continue", "else", "for", "function",
                 "if", "import", "let", "loop", "package", "namespace", "return", "var", "void", "while"}
_IDENT = re.compile(r"^[a-zA-Z_][a-zA-Z0-9_]*$")
_MACROS = {"has", "all", "exists", "exists_one", "map", "filter", "size"}


def escape_property(name: str) -> str | None:
    """A property name as CEL sees it (``compilation.go`` / ``Escape``): ``__`` →
    ``__underscores__``, ``.`` → ``__dot__``, ``-`` → ``__dash__``, ``/`` → ``__slash__``,
    a CEL keyword → ``__<keyword>__``; None when it cannot be escaped (not accessible)."""
    if name in _CEL_KEYWORDS:
        return f"__{name}__"
    out = name.replace("__", "__underscores__").replace(".", "__dot__").replace("-", "__dash__") \
        .replace("/", "__slash__")
    return out if _IDENT.match(out) else None


_KNOWN_FUNCTIONS = set(celpy.evaluation.base_functions) | _MACROS | set(EXTENSIONS)


# --------------------------------------------------------------------------- compilation

@dataclass(frozen=True)
class Compiled:
    """One CEL expression compiled: ``program`` (None when not supported; ``error`` says
    why), whether it references ``oldSelf`` (a transition rule)."""

    program: Any
    error: str
    transition: bool


def _functions(tree: lark.Tree[Any]) -> set[str]:
    names: set[str] = set()
    for t in tree.iter_subtrees():
        if t.data == "member_dot_arg" and len(t.children) >= 2:
            names.add(str(t.children[1]))
        elif t.data == "ident_arg" and t.children:
            names.add(str(t.children[0]))
    return names


def _uses_old_self(tree: lark.Tree[Any]) -> bool:
    for t in tree.iter_subtrees():
        if t.data == "ident" and t.children and str(t.children[0]) == "oldSelf":
            return True
    return False


_ENV = celpy.Environment()


@lru_cache(maxsize=4096)
def compile_rule(expr: str) -> Compiled:
    """``expr`` compiled with cel-python (cached by text)."""
    try:
        tree = _ENV.compile(expr)
    except Exception as e:  # celpy raises its own parse errors and lark's
        return Compiled(None, f"cel-python cannot parse it: {str(e).splitlines()[0] if str(e) else type(e).__name__}",
                        False)
    missing = sorted(_functions(tree) - _KNOWN_FUNCTIONS)
    if missing:
        return Compiled(None, "cel-python lacks the function" + ("s " if len(missing) > 1 else " ")
                        + ", ".join(missing), False)
    try:
        program = _ENV.program(tree, functions=EXTENSIONS)
    except Exception as e:
        return Compiled(None, f"cel-python cannot compile it: {e}", False)
    return Compiled(program, "", _uses_old_self(tree))


@dataclass(frozen=True)
class CelRule:
    """One ``x-kubernetes-validations`` entry found in a schema.

    ``schema_path``: where it is declared (``<path>.properties[spec]``); ``rule``,
    ``message``, ``message_expression``, ``field_path``, ``reason``: the entry's fields;
    ``compiled``: the rule compiled (``compiled.program`` None when not supported)."""

    schema_path: str
    index: int
    rule: str
    message: str
    message_expression: str
    field_path: str
    reason: str
    optional_old_self: bool
    compiled: Compiled
    schema: JSON = field(default_factory=dict, compare=False, repr=False)

    @property
    def supported(self) -> bool:
        return self.compiled.program is not None


def _str(v: Any) -> str:
    return v if isinstance(v, str) else ""


def _rules_at(s: JSON, path: str) -> list[CelRule]:
    out: list[CelRule] = []
    xv = s.get("x-kubernetes-validations")
    if not isinstance(xv, list):
        return out
    for i, r in enumerate(xv):
        if not isinstance(r, dict):
            continue
        rule = _str(r.get("rule"))
        out.append(CelRule(
            schema_path=path, index=i, rule=rule,
            message=_str(r.get("message")),
            message_expression=_str(r.get("messageExpression")),
            field_path=_str(r.get("fieldPath")),
            reason=_str(r.get("reason")),
            optional_old_self=bool(r.get("optionalOldSelf")),
            compiled=compile_rule(rule) if rule.strip() else Compiled(None, "rule is not specified", False),
            schema=s))
    return out


def cel_rules(schema: JSON, path: str = "") -> list[CelRule]:
    """Every x-kubernetes-validations rule of ``schema`` (properties, items,
    additionalProperties, recursively), compiled."""
    out: list[CelRule] = []

    def walk(s: Any, p: str) -> None:
        if not isinstance(s, dict):
            return
        out.extend(_rules_at(s, p))
        props = s.get("properties")
        if isinstance(props, dict):
            for k, v in props.items():
                walk(v, f"{p}.properties[{k}]")
        walk(s.get("items"), f"{p}.items")
        walk(s.get("additionalProperties"), f"{p}.additionalProperties")

    walk(schema, path)
    return out


def check_rules_at(s: JSON, path: str, errs: ErrorList, warnings: list[str], *,
                   uncorrelatable: str | None = None, cel_checks: bool = True) -> None:
    """The CRD validation of the x-kubernetes-validations of the schema node ``s`` at
    ``path`` (ValidateCustomResourceDefinitionOpenAPISchema): errors into ``errs``, the rules
    cel-python cannot evaluate into ``warnings``. ``uncorrelatable``: the path of the first
    ancestor whose old and new values cannot be correlated (a list that is not a map list,
    a map that is not correlatable), where rules may not use ``oldSelf``. ``cel_checks``:
    whether compiling is attempted (Kubernetes skips it when the schema has errors)."""
    for r in _rules_at(s, path):
        base = f"{path}.x-kubernetes-validations[{r.index}]"
        rule, msg = r.rule.strip(), r.message.strip()
        if not rule:
            errs.required(f"{base}.rule", "rule is not specified")
        elif r.message and not msg:
            errs.invalid(f"{base}.message", r.message, "message must be non-empty if specified")
        elif _has_newlines(msg):
            errs.invalid(f"{base}.message", r.message, "message must not contain line breaks")
        elif _has_newlines(rule) and not msg:
            errs.required(f"{base}.message", "message must be specified if rule contains line breaks")
        if r.message_expression and not r.message_expression.strip():
            errs.required(f"{base}.messageExpression", "messageExpression must be non-empty if specified")
        if r.reason and r.reason not in REASONS:
            errs.not_supported(f"{base}.reason", r.reason, sorted(REASONS))
        if r.field_path:
            if not r.field_path.strip():
                errs.invalid(f"{base}.fieldPath", r.field_path, "fieldPath must be non-empty if specified")
            if _has_newlines(r.field_path):
                errs.invalid(f"{base}.fieldPath", r.field_path, "fieldPath must not contain line breaks")
            try:
                valid_field_path(r.field_path, s)
            except ValueError:
                errs.invalid(f"{base}.fieldPath", r.field_path, "fieldPath must be a valid path")
        if not rule or not cel_checks:
            continue
        if not r.supported:
            warnings.append(f"{base}.rule: the rule {r.rule!r} is not supported by this server "
                            f"({r.compiled.error}); it is not enforced")
        elif r.compiled.transition:
            if uncorrelatable is not None:
                errs.invalid(f"{base}.rule", r.rule, "oldSelf cannot be used on the uncorrelatable portion of the "
                                                     f"schema within {uncorrelatable}")
        elif "optionalOldSelf" in _d(_l(s.get("x-kubernetes-validations"))[r.index]):
            errs.invalid(f"{base}.optionalOldSelf", r.optional_old_self, "may not be set if oldSelf is not used in rule")
        if r.message_expression.strip():
            mc = compile_rule(r.message_expression)
            if mc.program is None:
                warnings.append(f"{base}.messageExpression: the expression {r.message_expression!r} is not "
                                f"supported by this server ({mc.error}); the message is used instead")


def _has_newlines(s: str) -> bool:
    return "\n" in s or "\r" in s


def _d(v: Any) -> JSON:
    return v if isinstance(v, dict) else {}


def _l(v: Any) -> list[Any]:
    return v if isinstance(v, list) else []


# --------------------------------------------------------------------------- evaluation

def to_cel(s: Any, v: Any) -> Any:
    """A decoded JSON value as a CEL value typed by its schema (numbers as double, objects
    with properties get escaped member names, maps keep their keys)."""
    s = s if isinstance(s, dict) else {}
    if v is None:
        return None
    if isinstance(v, bool):
        return celtypes.BoolType(v)
    if isinstance(v, int):
        return celtypes.DoubleType(v) if s.get("type") == "number" else celtypes.IntType(v)
    if isinstance(v, float):
        if s.get("type") == "integer" and v == int(v):
            return celtypes.IntType(int(v))
        return celtypes.DoubleType(v)
    if isinstance(v, str):
        return _typed_string(s.get("format"), v)
    if isinstance(v, list):
        items = s.get("items")
        return celtypes.ListType([to_cel(items, x) for x in v])
    if isinstance(v, dict):
        props = s.get("properties") if isinstance(s.get("properties"), dict) else None
        ap = s.get("additionalProperties")
        out: dict[Any, Any] = {}
        for k, x in v.items():
            if props is not None and k in props:
                name = escape_property(k)
                if name is not None:
                    out[celtypes.StringType(name)] = to_cel(props[k], x)
            else:
                out[celtypes.StringType(k)] = to_cel(ap if isinstance(ap, dict) else None, x)
        return celtypes.MapType(out)
    return v


def _typed_string(fmt: Any, v: str) -> Any:
    """A string as its format's CEL type (SchemaDeclType: ``byte`` → bytes, ``duration`` →
    duration, ``date`` / ``date-time`` → timestamp); a value that does not parse stays a
    string (value validation reports it)."""
    try:
        if fmt == "byte":
            return celtypes.BytesType(base64.b64decode(v, validate=True))
        if fmt == "duration":
            return celtypes.DurationType(v)
        if fmt == "date-time":
            return celtypes.TimestampType(v)
        if fmt == "date":
            return celtypes.TimestampType(f"{v}T00:00:00Z")
    except (ValueError, TypeError, binascii.Error):
        pass
    return celtypes.StringType(v)


def _schema_type(s: JSON) -> str:
    t = s.get("type")
    return t if isinstance(t, str) else ""


def _err_text(e: Exception) -> str:
    args = getattr(e, "args", ())
    if args and isinstance(args[0], str):
        m = re.match(r"no such member in mapping: '(.*)'", args[0])
        if m:
            return f"no such key: {m.group(1)}"
        if args[0].startswith("found no matching overload"):
            return "no such overload"
        return args[0]
    return str(e)


def _fp_tokens(fp: str) -> list[str]:
    """The tokens of a fieldPath as ValidFieldPath's scanner splits it: the delimiters
    ``.`` ``[`` ``]`` alone, single-quoted strings whole, the text between delimiters."""
    out: list[str] = []
    i = 0
    while i < len(fp):
        if fp[i] == "'":
            j = i + 1
            while j < len(fp) and not (fp[j] == "'" and fp[j - 1] != "\\"):
                j += 1
            out.append(fp[i:j + 1])
            i = j + 1
        elif fp[i] in ".[]":
            out.append(fp[i])
            i += 1
        else:
            j = i
            while j < len(fp) and fp[j] not in ".[]":
                j += 1
            out.append(fp[i:j])
            i = j
    return out


_UNESCAPES = {"a": "\a", "b": "\b", "f": "\f", "n": "\n", "r": "\r", "t": "\t", "v": "\v", "'": "'", "\\": "\\"}


def _unescape_single_quote(s: str) -> str:
    def rep(m: re.Match[str]) -> str:
        c = m.group(0)[1]
        if c not in _UNESCAPES:
            raise ValueError(f"invalid string literal: invalid escape char {m.group(0)}")
        return _UNESCAPES[c]

    return re.sub(r"\\.", rep, s)


def valid_field_path(fp: str, schema: Any) -> str:
    """ValidFieldPath: ``fp`` (``.spec.x``, ``.m['a.b']``) normalised as a field path
    (``spec.x``, ``m[a.b]``); raises ValueError with Kubernetes' reason
    (``does not refer to a valid field``, ``unexpected end of JSON path``...)."""
    toks = _fp_tokens(fp)
    out = ""
    cur: Any = schema
    i = 0

    def append(name: str) -> None:
        nonlocal out, cur
        props = cur.get("properties") if isinstance(cur, dict) else None
        ap = cur.get("additionalProperties") if isinstance(cur, dict) else None
        if isinstance(props, dict) and props:
            if name not in props:
                raise ValueError("does not refer to a valid field")
            out = f"{out}.{name}" if out else name
            cur = props[name]
        elif ap is not None and ap is not False:
            out = f"{out}[{name}]"
            cur = ap if isinstance(ap, dict) else None
        else:
            raise ValueError("does not refer to a valid field")

    while i < len(toks):
        tok = toks[i]
        if tok == "[":
            if i + 1 >= len(toks):
                raise ValueError("unexpected end of JSON path")
            tok = toks[i + 1]
            if len(tok) < 2 or tok[0] != "'" or tok[-1] != "'":
                raise ValueError(f"expected single quoted string but got {tok}")
            append(_unescape_single_quote(tok[1:-1]))
            if i + 2 >= len(toks):
                raise ValueError("unexpected end of JSON path")
            if toks[i + 2] != "]":
                raise ValueError(f"expected ] but got {toks[i + 2]}")
            i += 3
        elif tok == ".":
            if i + 1 >= len(toks):
                raise ValueError("unexpected end of JSON path")
            append(toks[i + 1])
            i += 2
        else:
            raise ValueError(f"expected [ or . but got: {tok}")
    return out


def _field_path(s: JSON, path: str, fp: str) -> str:
    """The cause's field for a failing rule: ``path`` + its normalised ``fieldPath``, as
    ``fldPath.Child(normalized)`` prints it (a map key right below gives ``spec.m.[k]``)."""
    if not fp:
        return path
    try:
        norm = valid_field_path(fp, s)
    except ValueError:
        return path
    if not norm:
        return path
    return f"{path}.{norm}" if path else norm


def _evaluate(program: Any, activation: dict[str, Any]) -> tuple[Any, Exception | None]:
    try:
        return program.evaluate(activation), None
    except Exception as e:  # celpy raises CELEvalError and, on some paths, Python errors
        return None, e


def _rule_error_string(r: CelRule) -> str:
    """ruleErrorString: the rule's message, else its text."""
    return r.message.strip() if r.message else r.rule.strip()


def _message_expression(r: CelRule, activation: dict[str, Any]) -> str | None:
    """evalMessageExpression: the trimmed string, or None when it fails, is not a string,
    is empty or has line breaks (the rule's message is used instead, as Kubernetes does)."""
    c = compile_rule(r.message_expression)
    if c.program is None:
        return None
    res, err = _evaluate(c.program, activation)
    if err is not None or not isinstance(res, str):
        return None
    text = str(res).strip()
    if not text or "\n" in text:
        return None
    return text


def _report(r: CelRule, s: JSON, v: Any, path: str, activation: dict[str, Any], errs: ErrorList) -> None:
    detail = _message_expression(r, activation) if r.message_expression else None
    if detail is None:
        detail = r.message.strip() if r.message else f"failed rule: {_rule_error_string(r)}"
    fld = _field_path(s, path, r.field_path)
    omit = _schema_type(s) in ("object", "array")
    if r.reason == "FieldValueForbidden":
        errs.forbidden(fld, detail)
    elif r.reason == "FieldValueRequired":
        errs.required(fld, detail)
    elif r.reason == "FieldValueDuplicate":
        if omit:
            add_message(errs, "FieldValueDuplicate", fld, "Duplicate value")
        else:
            add_cause(errs, "duplicate", fld, v)
    elif omit:
        add_message(errs, "FieldValueInvalid", fld, f"Invalid value: {detail}")
    else:
        add_cause(errs, "invalid", fld, v, detail)


def _root_view(v: Any) -> Any:
    """The resource root as CEL sees it (model.WithTypeAndObjectMeta): metadata holds only
    name and generateName."""
    if not isinstance(v, dict) or not isinstance(v.get("metadata"), dict):
        return v
    out = dict(v)
    out["metadata"] = {k: x for k, x in v["metadata"].items() if k in ("name", "generateName")}
    return out


def _check_node(s: JSON, v: Any, old: Any, has_old: bool, path: str, errs: ErrorList, root: bool = False) -> None:
    rules = _rules_at(s, path)
    if not rules:
        return
    activation: dict[str, Any] = {"self": to_cel(s, _root_view(v) if root else v)}
    if has_old:
        activation["oldSelf"] = to_cel(s, _root_view(old) if root else old)
    for r in rules:
        if not r.supported:
            continue
        if r.compiled.transition and not has_old and not r.optional_old_self:
            continue
        res, err = _evaluate(r.compiled.program, activation)
        if err is not None:
            text = _err_text(err)
            if text == "no such overload":
                add_cause(errs, "invalid", path, _schema_type(s),
                          f"'no such overload': call arguments did not match a supported operator, function or "
                          f"macro signature for rule: {_rule_error_string(r)}")
            else:
                add_cause(errs, "invalid", path, _schema_type(s), f"{text} evaluating rule: {_rule_error_string(r)}")
            continue
        if isinstance(res, celpy.evaluation.CELEvalError):
            add_cause(errs, "invalid", path, _schema_type(s),
                      f"{_err_text(res)} evaluating rule: {_rule_error_string(r)}")
            continue
        if res is not True and not (isinstance(res, celtypes.BoolType) and bool(res)):
            _report(r, s, v, path, activation, errs)


def _walk(s: Any, v: Any, old: Any, has_old: bool, path: str, errs: ErrorList, root: bool = False) -> None:
    if not isinstance(s, dict) or v is None:
        return
    _check_node(s, v, old, has_old and old is not None, path, errs, root)
    if isinstance(v, dict):
        p = s.get("properties")
        props: JSON = p if isinstance(p, dict) else {}
        ap = s.get("additionalProperties")
        o = old if has_old and isinstance(old, dict) else None
        for k, x in v.items():
            sub = props.get(k) if k in props else (ap if isinstance(ap, dict) else None)
            if sub is None:
                continue
            child = f"{path}.{k}" if path else k
            _walk(sub, x, o.get(k) if o is not None else None, o is not None and k in o, child, errs)
    elif isinstance(v, list):
        items = s.get("items")
        if not isinstance(items, dict):
            return
        lt = s.get("x-kubernetes-list-type")
        keys = s.get("x-kubernetes-list-map-keys") or []
        olds: dict[Any, Any] = {}
        if has_old and isinstance(old, list) and lt == "map" and keys:
            for x in old:
                if isinstance(x, dict):
                    olds[repr([x.get(k) for k in keys])] = x
        for i, x in enumerate(v):
            key = None
            if lt == "map" and keys and isinstance(x, dict):
                key = repr([x.get(k) for k in keys])
            found = key is not None and key in olds
            _walk(items, x, olds.get(key) if found else None, found, f"{path}[{i}]", errs)


def validate_cel(schema: JSON, obj: Any, old: Any = None, path: str = "", *,
                 is_resource_root: bool = True) -> ErrorList:
    """The failing x-kubernetes-validations rules of ``obj`` (StatusCauses under ``path``);
    ``old`` is the stored object on update: transition rules (those using ``oldSelf``) run
    only where an old value correlates (object properties, map keys, list-type map items by
    their keys). At the resource root ``self.metadata`` holds name and generateName only.
    Rules that cannot be evaluated here are skipped.

    A rule that evaluates to false gives ``<field>: Invalid value: <detail>`` for an object
    or array (the value omitted) and ``Invalid value: <value>: <detail>`` for a scalar;
    ``reason`` makes it Forbidden / Required / Duplicate; an evaluation error gives
    ``Invalid value: "<type>": <error> evaluating rule: <message or rule>``."""
    errs = ErrorList()
    _walk(schema, obj, old, old is not None, path, errs, root=is_resource_root)
    return errs
