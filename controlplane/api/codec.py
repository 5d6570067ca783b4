"""The JSON codec of the API objects: orjson when installed, else the standard library.

One place for the hot path's JSON: the apiserver encodes every stored object, every
response and every watch event, and decodes every request body and etcd value.
orjson is ~5-10x faster than :mod:`json` and emits the same JSON text (compact, UTF-8
rather than ``\\uXXXX`` escapes — both valid JSON, as Go's encoding/json output).

* :func:`dumps` ``(value) -> bytes`` — compact JSON; values orjson refuses (integers
  beyond 64 bits, non-string keys) fall back to :mod:`json` with the same output shape.
* :func:`loads` ``(bytes | str) -> value`` — raises ``ValueError`` on malformed JSON
  (``orjson.JSONDecodeError`` is a ``ValueError`` subclass, as ``json.JSONDecodeError``).
* :func:`clone` ``(value) -> value`` — a deep copy of a JSON value (dicts, lists, scalars),
  several times faster than :func:`copy.deepcopy`.
"""

from __future__ import annotations

import json
from typing import Any

try:
    import orjson as _orjson
except ImportError:  # pragma: no cover - orjson is a declared dependency
    _orjson = None


def _std_dumps(value: Any) -> bytes:
    return json.dumps(value, separators=(",", ":"), ensure_ascii=False).encode()


if _orjson is not None:
    _odumps = _orjson.dumps
    _oloads = _orjson.loads

    def dumps(value: Any) -> bytes:
        """Compact JSON bytes of ``value``."""
        try:
            return _odumps(value)
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
        return json.loads(data)

    def clone(value: Any) -> Any:
        """A deep copy of the JSON value ``value``."""
        return json.loads(_std_dumps(value))
