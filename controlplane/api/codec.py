"""The JSON codec of the API objects: orjson when installed, else the standard library.

One place for the hot path's JSON: the apiserver encodes every stored object, every
response and every watch event, and decodes every request body and etcd value.
orjson is ~5-10x faster than :mod:`json` and emits the same JSON text (compact, UTF-8
rather than ``\\uXXXX`` escapes — both valid JSON, as Go's encoding/json output).

* :func:`dumps` ``(value) -> bytes`` — compact JSON; values orjson refuses (integers
  beyond 64 bits, non-string keys) fall back to :mod:`json` with the same output shape.
* :func:`loads` ``(bytes | str) -> value`` — raises ``ValueError`` on malformed JSON
  (``orjson.JSONDecodeError`` is a ``ValueError`` subclass, as ``json.JSONDecodeError``);
  :data:`BOUNDED_LOADS` tells whether it also refuses non-finite numbers and deep nesting.
* :func:`clone` ``(value) -> value`` — a deep copy of a JSON value (dicts, lists, scalars),
  several times faster than :func:`copy.deepcopy`.
"""

from __future__ import annotations

import json
import re
from typing import Any

_orjson: Any
try:
    import orjson as _orjson
except ImportError:  # pragma: no cover - orjson is a declared dependency
    _orjson = None


def _std_dumps(value: Any) -> bytes:
    return json.dumps(value, separators=(",", ":"), ensure_ascii=False).encode()


#: whether :func:`loads` refuses non-finite numbers (``NaN``, ``Infinity``, ``1e400``) and
#: nesting deeper than 1024 levels, as orjson does (the standard library takes both)
BOUNDED_LOADS = _orjson is not None

if _orjson is not None:
    _odumps = _orjson.dumps
    _oloads = _orjson.loads

    def dumps(value: Any) -> bytes:
        """Compact JSON bytes of ``value``."""
        try:
            out: bytes = _odumps(value)
            return out
        except TypeError:
            return _std_dumps(value)

    def loads(data: bytes | bytearray | memoryview | str) -> Any:
        """The value of JSON ``data``; raises ValueError when malformed."""
        return _oloads(data)

    def clone(value: Any) -> Any:
        """A deep copy of the JSON value ``value``."""
        try:
            return _oloads(_odumps(value))
        except TypeError:
            return json.loads(_std_dumps(value))
else:  # pragma: no cover
    dumps = _std_dumps

    def loads(data: bytes | bytearray | memoryview | str) -> Any:
        """The value of JSON ``data``; raises ValueError when malformed."""
        return json.loads(bytes(data) if isinstance(data, memoryview) else data)

    def clone(value: Any) -> Any:
        """A deep copy of the JSON value ``value``."""
        return json.loads(_std_dumps(value))


# ------------------------------------------------------------------ YAML

#: go-yaml's limit on nesting is 10000 (``max_flow_level`` / ``max_indents`` in
#: gopkg.in/yaml.v2 scannerc.go, the YAML decoder of sigs.k8s.io/yaml); ours is libyaml's
#: (1000, as orjson's 1024 for JSON): PyYAML's pure-Python scanner is quadratic in the depth
YAML_MAX_DEPTH = 1000


#: go-yaml v2's plain float (resolve.go yamlStyleFloat)
_GO_YAML_FLOAT = re.compile(r"^[-+]?(\.[0-9]+|[0-9]+(\.[0-9]*)?)([eE][-+]?[0-9]+)?$")


def _flow_depth(data: bytes | str) -> int:
    """The deepest ``[``/``{`` nesting of ``data``, counted naively (quotes not skipped): an
    upper bound, used only to refuse input the pure-Python parser would take ages on."""
    text = data.decode(errors="replace") if isinstance(data, (bytes, bytearray)) else data
    best = depth = 0
    for ch in text:
        if ch in "[{":
            depth += 1
            best = max(best, depth)
        elif ch in "]}":
            depth = max(depth - 1, 0)
    return best


def load_yaml(data: bytes | str) -> Any:
    """The value of the first YAML document in ``data``, as sigs.k8s.io/yaml (go-yaml v2,
    YAML 1.1) yields it for JSON: timestamps and ``!!binary`` stay strings, keys become
    strings, ``<<`` merge keys are merged, integral floats (``3.0``) are integers. Built from the parser's events (libyaml's when
    installed) without recursion; nesting is bounded by :data:`YAML_MAX_DEPTH`.

    Raises ValueError with go-yaml's wording: ``yaml: line 3: <problem>``,
    ``yaml: exceeded max depth of 1000``; an empty document is None.
    """
    import yaml
    from yaml.constructor import SafeConstructor
    from yaml.resolver import Resolver

    loader = getattr(yaml, "CSafeLoader", None)
    if loader is None and _flow_depth(data) > YAML_MAX_DEPTH:
        raise ValueError(f"yaml: exceeded max depth of {YAML_MAX_DEPTH}")
    resolver, constructor = Resolver(), SafeConstructor()
    anchors: dict[str, Any] = {}
    stack: list[list[Any]] = []  # [container, pending key or _NO_KEY, anchor]
    root: list[Any] = []
    no_key = object()

    def scalar(ev: Any) -> Any:
        tag = ev.tag if ev.tag not in (None, "!") else resolver.resolve(  # type: ignore[no-untyped-call]
            yaml.ScalarNode, ev.value, ev.implicit)
        if tag == "tag:yaml.org,2002:str" and not ev.style and ev.implicit[0] and _GO_YAML_FLOAT.match(ev.value):
            tag = "tag:yaml.org,2002:float"  # go-yaml reads 1e3 as a float (PyYAML wants a dot)
        if tag in ("tag:yaml.org,2002:timestamp", "tag:yaml.org,2002:binary", "tag:yaml.org,2002:str"):
            return ev.value
        fn = constructor.yaml_constructors.get(tag)
        if fn is None or tag in ("tag:yaml.org,2002:map", "tag:yaml.org,2002:seq"):
            return ev.value
        v = fn(constructor, yaml.ScalarNode(tag, ev.value, ev.start_mark, ev.end_mark, ev.style))
        if isinstance(v, float) and v.is_integer() and abs(v) < 1e21:
            # YAMLToJSON marshals the float64 go-yaml decoded: 3.0 is written 3
            return int(v)
        return v

    def key_str(k: Any) -> str:
        if isinstance(k, str):
            return k
        if isinstance(k, bool):
            return "true" if k else "false"
        if k is None:
            return "null"
        if isinstance(k, (dict, list)):
            raise ValueError("yaml: invalid map key: " + json.dumps(k, default=str)[:60])
        return str(k)

    def add(value: Any) -> None:
        if not stack:
            root.append(value)
            return
        top = stack[-1]
        c = top[0]
        if isinstance(c, list):
            c.append(value)
        elif top[1] is no_key:
            top[1] = value
        else:
            k = top[1]
            top[1] = no_key
            if k == "<<" and isinstance(value, (dict, list)):
                for m in (value if isinstance(value, list) else [value]):
                    if isinstance(m, dict):
                        for mk, mv in m.items():
                            c.setdefault(mk, mv)
                return
            c[key_str(k)] = value

    try:
        for ev in yaml.parse(data, Loader=loader or yaml.SafeLoader):
            if isinstance(ev, (yaml.MappingStartEvent, yaml.SequenceStartEvent)):
                if len(stack) >= YAML_MAX_DEPTH:
                    line = ev.start_mark.line if ev.start_mark else 0
                    where = f"line {line + 1}: " if line else ""
                    raise ValueError(f"yaml: {where}exceeded max depth of {YAML_MAX_DEPTH}")
                c: Any = {} if isinstance(ev, yaml.MappingStartEvent) else []
                if ev.anchor:
                    anchors[ev.anchor] = c
                stack.append([c, no_key, ev.anchor])
            elif isinstance(ev, (yaml.MappingEndEvent, yaml.SequenceEndEvent)):
                c = stack.pop()[0]
                add(c)
            elif isinstance(ev, yaml.ScalarEvent):
                v = scalar(ev)
                if ev.anchor:
                    anchors[ev.anchor] = v
                add(v)
            elif isinstance(ev, yaml.AliasEvent):
                if ev.anchor not in anchors:
                    raise ValueError(f'yaml: unknown anchor \'{ev.anchor}\' referenced')
                add(anchors[ev.anchor])
            elif isinstance(ev, yaml.DocumentEndEvent):
                break  # go-yaml's Unmarshal reads the first document only
    except yaml.MarkedYAMLError as e:
        line = e.problem_mark.line + 1 if e.problem_mark is not None else 0
        where = f"line {line}: " if line else ""
        problem = e.problem or e.context or "unknown problem parsing YAML content"
        if "maximum nesting depth" in problem:  # libyaml's limit, in go-yaml's words
            problem = f"exceeded max depth of {YAML_MAX_DEPTH}"
        raise ValueError(f"yaml: {where}{problem}") from None
    except yaml.YAMLError as e:
        raise ValueError(f"yaml: {str(e).splitlines()[0] if str(e) else 'unknown problem parsing YAML content'}") from None
    except (UnicodeDecodeError, TypeError) as e:
        raise ValueError(f"yaml: {e}") from None
    return root[0] if root else None
