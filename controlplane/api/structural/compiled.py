"""Per-schema facts computed once and reused, keyed by the schema object's identity.

A custom resource kind's schema is one dict held by its registry entry for the kind's
lifetime (``groups/apiextensions.custom_resources`` deep-copies it once), so what is derived
from it — the compiled value validator (:mod:`.values`), which keywords occur anywhere in it
— is computed on the first object and reused for every later one (the apiextensions-apiserver
likewise builds its validators once per CRD version, ``NewSchemaValidator`` in
``pkg/apiserver/validation``). An entry holds its schema, so an identity is never reused while
cached; schemas must not be mutated after their first use.
"""

from __future__ import annotations

from collections.abc import Callable
from typing import Any, Generic, TypeVar

T = TypeVar("T")

#: entries kept per cache before it is emptied (schemas of many CRD versions)
CACHE_SIZE = 512


class IdentityCache(Generic[T]):
    """``build(schema)`` memoized by ``id(schema)``, the schema kept alive with its value."""

    def __init__(self, build: Callable[[Any], T], size: int = CACHE_SIZE) -> None:
        self._build = build
        self._size = size
        self._entries: dict[int, tuple[Any, T]] = {}

    def __call__(self, schema: Any) -> T:
        hit = self._entries.get(id(schema))
        if hit is not None and hit[0] is schema:
            return hit[1]
        value = self._build(schema)
        if len(self._entries) >= self._size:
            self._entries.clear()
        self._entries[id(schema)] = (schema, value)
        return value


def _keywords(schema: Any) -> frozenset[str]:
    """Every keyword used by any node of ``schema`` (``x-kubernetes-list-type`` values as
    ``x-kubernetes-list-type=<v>``)."""
    out: set[str] = set()
    stack: list[Any] = [schema]
    seen = 0
    while stack:
        s = stack.pop()
        seen += 1
        if isinstance(s, list):
            stack.extend(s)
            continue
        if not isinstance(s, dict) or seen > 1_000_000:
            continue
        out.update(k for k in s if isinstance(k, str))
        lt = s.get("x-kubernetes-list-type")
        if isinstance(lt, str):
            out.add(f"x-kubernetes-list-type={lt}")
        for k in ("properties", "patternProperties", "definitions", "dependencies"):
            v = s.get(k)
            if isinstance(v, dict):
                stack.extend(v.values())
        for k in ("items", "additionalProperties", "additionalItems", "not", "allOf", "anyOf", "oneOf"):
            v = s.get(k)
            if isinstance(v, (dict, list)):
                stack.append(v)
    return frozenset(out)


#: the keywords of a schema, anywhere in it (:func:`_keywords`), memoized per schema
keywords: IdentityCache[frozenset[str]] = IdentityCache(_keywords)
