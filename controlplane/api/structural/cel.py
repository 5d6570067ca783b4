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

import re
from collections.abc import Callable
from dataclasses import dataclass
from functools import lru_cache
from typing import Any

import celpy
import lark
from celpy import celtypes

from controlplane.api.structural.goformat import add_cause
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


# --------------------------------------------------------------------------- extension functions

def _s(v: Any) -> str:
    return str(v)


def _lower_ascii(s: Any) -> celtypes.StringType:
    return celtypes.StringType("".join(c.lower() if c.isascii() else c for c in _s(s)))


def _upper_ascii(s: Any) -> celtypes.StringType:
    return celtypes.StringType("".join(c.upper() if c.isascii() else c for c in _s(s)))


def _trim(s: Any) -> celtypes.StringType:
    return celtypes.StringType(_s(s).strip())


def _split(s: Any, sep: Any, n: Any = None) -> celtypes.ListType:
    parts = _s(s).split(_s(sep)) if n is None or int(n) < 0 else _s(s).split(_s(sep), max(int(n) - 1, 0))
    if n is not None and int(n) == 0:
        parts = []
    return celtypes.ListType([celtypes.StringType(p) for p in parts])


def _join(lst: Any, sep: Any = "") -> celtypes.StringType:
    return celtypes.StringType(_s(sep).join(_s(x) for x in lst))


def _replace(s: Any, old: Any, new: Any, n: Any = None) -> celtypes.StringType:
    return celtypes.StringType(_s(s).replace(_s(old), _s(new), -1 if n is None else int(n)))


def _index_of(target: Any, x: Any, start: Any = None) -> celtypes.IntType:
    if isinstance(target, str):
        return celtypes.IntType(_s(target).find(_s(x), 0 if start is None else int(start)))
    for i, v in enumerate(target):
        if v == x:
            return celtypes.IntType(i)
    return celtypes.IntType(-1)


def _last_index_of(target: Any, x: Any) -> celtypes.IntType:
    if isinstance(target, str):
        return celtypes.IntType(_s(target).rfind(_s(x)))
    idx = -1
    for i, v in enumerate(target):
        if v == x:
            idx = i
    return celtypes.IntType(idx)


def _substring(s: Any, start: Any, end: Any = None) -> celtypes.StringType:
    return celtypes.StringType(_s(s)[int(start):] if end is None else _s(s)[int(start):int(end)])


def _char_at(s: Any, i: Any) -> celtypes.StringType:
    t = _s(s)
    return celtypes.StringType(t[int(i)] if int(i) < len(t) else "")


def _is_sorted(lst: Any) -> celtypes.BoolType:
    xs = list(lst)
    return celtypes.BoolType(all(xs[i] <= xs[i + 1] for i in range(len(xs) - 1)))


def _sum(lst: Any) -> Any:
    xs = list(lst)
    if not xs:
        return celtypes.IntType(0)
    total = xs[0]
    for x in xs[1:]:
        total = total + x
    return total


def _min(lst: Any) -> Any:
    return min(list(lst))


def _max(lst: Any) -> Any:
    return max(list(lst))


def _find(s: Any, pattern: Any) -> celtypes.StringType:
    m = re.search(_s(pattern), _s(s))
    return celtypes.StringType(m.group(0) if m else "")


def _find_all(s: Any, pattern: Any, n: Any = None) -> celtypes.ListType:
    found = [m.group(0) for m in re.finditer(_s(pattern), _s(s))]
    if n is not None and int(n) >= 0:
        found = found[:int(n)]
    return celtypes.ListType([celtypes.StringType(f) for f in found])


#: the Kubernetes CEL extension functions implemented here (strings, lists, regex libraries)
EXTENSIONS: dict[str, Callable[..., Any]] = {
    "lowerAscii": _lower_ascii, "upperAscii": _upper_ascii, "trim": _trim, "split": _split, "join": _join,
    "replace": _replace, "indexOf": _index_of, "lastIndexOf": _last_index_of, "substring": _substring,
    "charAt": _char_at, "isSorted": _is_sorted, "sum": _sum, "min": _min, "max": _max, "find": _find,
    "findAll": _find_all,
}

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
            compiled=compile_rule(rule) if rule.strip() else Compiled(None, "rule is not specified", False)))
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


def check_rules(schema: JSON, path: str, errs: ErrorList, warnings: list[str]) -> None:
    """The CRD validation of ``schema``'s rules (errors into ``errs``) and the rules that
    cannot be evaluated here (messages into ``warnings``)."""
    for r in cel_rules(schema, path):
        base = f"{r.schema_path}.x-kubernetes-validations[{r.index}]"
        if not r.rule.strip():
            errs.required(f"{base}.rule", "rule is not specified")
            continue
        if r.message and not r.message.strip():
            errs.invalid(f"{base}.message", r.message, "message must be non-empty if specified")
        elif "\n" in r.message:
            errs.invalid(f"{base}.message", r.message, "message must not contain line breaks")
        if r.reason and r.reason not in REASONS:
            errs.not_supported(f"{base}.reason", r.reason, REASONS)
        if not r.supported:
            warnings.append(f"{base}.rule: the rule {r.rule!r} is not supported by this server "
                            f"({r.compiled.error}); it is not enforced")
        if r.message_expression and compile_rule(r.message_expression).program is None:
            warnings.append(f"{base}.messageExpression: not supported by this server "
                            f"({compile_rule(r.message_expression).error}); the message is used instead")


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
        return celtypes.StringType(v)
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


def _field_path(path: str, fp: str) -> str:
    if not fp:
        return path
    if fp.startswith("."):
        return path + fp if path else fp[1:]
    return path + fp


def _evaluate(program: Any, activation: dict[str, Any]) -> tuple[Any, Exception | None]:
    try:
        return program.evaluate(activation), None
    except Exception as e:  # celpy raises CELEvalError and, on some paths, Python errors
        return None, e


def _report(r: CelRule, s: JSON, path: str, activation: dict[str, Any], errs: ErrorList) -> None:
    detail = r.message or ""
    if r.message_expression:
        c = compile_rule(r.message_expression)
        if c.program is not None:
            res, err = _evaluate(c.program, activation)
            if err is None and isinstance(res, str) and res.strip() and "\n" not in res:
                detail = str(res)
    if not detail:
        detail = f"failed rule: {r.rule.strip()}"
    fld = _field_path(path, r.field_path)
    t = _schema_type(s)
    if r.reason == "FieldValueForbidden":
        errs.forbidden(fld, detail)
    elif r.reason == "FieldValueRequired":
        errs.required(fld, detail)
    elif r.reason == "FieldValueDuplicate":
        add_cause(errs, "duplicate", fld, t, detail)
    else:
        add_cause(errs, "invalid", fld, t, detail)


def _check_node(s: JSON, v: Any, old: Any, has_old: bool, path: str, errs: ErrorList) -> None:
    rules = _rules_at(s, path)
    if not rules:
        return
    activation: dict[str, Any] = {"self": to_cel(s, v)}
    if has_old:
        activation["oldSelf"] = to_cel(s, old)
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
                          f"macro signature for rule: {r.rule.strip()}")
            else:
                add_cause(errs, "invalid", path, _schema_type(s), f"{text} evaluating rule: {r.rule.strip()}")
            continue
        if isinstance(res, celpy.evaluation.CELEvalError):
            add_cause(errs, "invalid", path, _schema_type(s), f"{_err_text(res)} evaluating rule: {r.rule.strip()}")
            continue
        if res is not True and not (isinstance(res, celtypes.BoolType) and bool(res)):
            _report(r, s, path, activation, errs)


def _walk(s: Any, v: Any, old: Any, has_old: bool, path: str, errs: ErrorList) -> None:
    if not isinstance(s, dict) or v is None:
        return
    _check_node(s, v, old, has_old, path, errs)
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
        if has_old and isinstance(old, list):
            if lt == "map" and keys:
                for x in old:
                    if isinstance(x, dict):
                        olds[repr([x.get(k) for k in keys])] = x
            elif lt == "set":
                for x in old:
                    olds[repr(x)] = x
        for i, x in enumerate(v):
            key = None
            if lt == "map" and keys and isinstance(x, dict):
                key = repr([x.get(k) for k in keys])
            elif lt == "set":
                key = repr(x)
            found = key is not None and key in olds
            _walk(items, x, olds.get(key) if found else None, found, f"{path}[{i}]", errs)


def validate_cel(schema: JSON, obj: Any, old: Any = None, path: str = "") -> ErrorList:
    """The failing x-kubernetes-validations rules of ``obj`` (StatusCauses under ``path``);
    ``old`` is the stored object on update: transition rules (those using ``oldSelf``) run
    only where an old value correlates (object properties, map keys, list-type map keys and
    set items). Rules that cannot be evaluated here are skipped."""
    errs = ErrorList()
    _walk(schema, obj, old, old is not None, path, errs)
    return errs
