"""components.apiserver.negotiation (query parameters, media types) and the Status-cause
helpers of components.apiserver.status, on their own."""

from __future__ import annotations

import pytest
from aiohttp.test_utils import make_mocked_request

from components.apiserver import negotiation as neg
from components.apiserver import status as st
from controlplane.api import resources as R
from controlplane.api.validation import ErrorList


@pytest.mark.parametrize("value, expected", [
    pytest.param(None, False, id="unset"),
    pytest.param("", False, id="empty"),
    pytest.param("true", True, id="true"),
    pytest.param("TRUE", True, id="any case"),
    pytest.param("1", True, id="one"),
    pytest.param("yes", True, id="yes"),
    pytest.param("false", False, id="false"),
    pytest.param("0", False, id="zero"),
])
def test_parse_bool(value, expected):
    assert neg.parse_bool(value) is expected


@pytest.mark.parametrize("value, expected", [
    pytest.param(None, None, id="unset"),
    pytest.param("", None, id="empty"),
    pytest.param("0", 0, id="zero"),
    pytest.param("123", 123, id="number"),
])
def test_parse_rv(value, expected):
    assert neg.parse_rv(value) == expected


@pytest.mark.parametrize("value", ["-1", "abc", "1.5"])
def test_parse_rv_rejects(value):
    with pytest.raises(st.APIError) as e:
        neg.parse_rv(value)
    assert (e.value.code, e.value.message) == (400, f'invalid resource version "{value}"')


@pytest.mark.parametrize("accept, table", [
    pytest.param("application/json;as=Table;v=v1;g=meta.k8s.io,application/json", True, id="kubectl get"),
    pytest.param("application/json, application/json;as=Table;v=v1;g=meta.k8s.io", False, id="json first"),
    pytest.param("application/json;as=PartialObjectMetadata;v=v1;g=meta.k8s.io", False,
                 id="partial object metadata: plain JSON"),
    pytest.param("", False, id="none"),
])
def test_wants_table(accept, table):
    req = make_mocked_request("GET", "/api/v1/pods", headers={"Accept": accept})
    assert neg.wants_table(req) is table


def test_with_type_puts_type_meta_first_and_never_mutates():
    obj = {"metadata": {"name": "p"}, "kind": "Pod"}
    out = neg.with_type(R.PODS, obj)
    assert list(out) == ["apiVersion", "kind", "metadata"] and out["apiVersion"] == "v1"
    assert obj == {"metadata": {"name": "p"}, "kind": "Pod"}
    assert neg.with_type(R.PODS, out) is out


def test_warnings_become_headers_once_each():
    req = make_mocked_request("GET", "/api/v1/pods")
    neg.add_warning(req, 'unknown field "spec.x"')
    neg.add_warning(req, 'unknown field "spec.x"')
    resp = neg.json_response({})
    neg.warning_headers(req, resp)
    assert resp.headers.getall("Warning") == ['299 - "unknown field \\"spec.x\\""']


def test_status_causes_are_an_error_list():
    errs = st.error_list([st.cause("ResourceVersionTooLarge", "Too large resource version")])
    errs.required("spec.x", "is required")
    assert isinstance(errs, ErrorList)
    assert errs == [{"reason": "ResourceVersionTooLarge", "message": "Too large resource version"},
                    {"reason": "FieldValueRequired", "message": "Required value: is required", "field": "spec.x"}]
    e = st.invalid_fields("Binding", "", "b", errs[1:])
    assert e.body() == {"kind": "Status", "apiVersion": "v1", "metadata": {}, "status": "Failure",
                        "message": 'Binding "b" is invalid: spec.x: Required value: is required',
                        "reason": "Invalid", "details": {"name": "b", "kind": "Binding", "causes": errs[1:]},
                        "code": 422}


@pytest.mark.parametrize("raw, content_type, message", [
    pytest.param(b"[" * 1024 + b"]" * 1024, "application/json", None, id="json at orjson's depth"),
    pytest.param(b"[" * 1025 + b"]" * 1025, "application/json", "invalid character '[' exceeded max depth",
                 id="json beyond it"),
    pytest.param(b'{"a": 1e400}', "application/json", "number is infinity when parsed as double: line 1 column 7 "
                 "(char 6)", id="json infinity"),
    pytest.param(b"a: .nan\n", "application/yaml", "json: unsupported value: NaN", id="yaml nan"),
    pytest.param(b"a: [[[1]]]\n", "application/yaml", None, id="yaml nested"),
])
def test_parse_body_bounds_depth_and_numbers(raw, content_type, message):
    """A body nesting deeper than the decoder allows, or holding a non-finite number, is a
    BodyError in Go's words; JSON gets both from its parser (codec.BOUNDED_LOADS), YAML from
    decoder.check_depth."""
    if message is None:
        neg.parse_body(raw, content_type)
        return
    with pytest.raises(neg.BodyError) as e:
        neg.parse_body(raw, content_type)
    assert e.value.message == message


def _streamed_request(first: bytes, later: list[bytes], headers: dict[str, str] | None = None):
    """A mocked POST whose body has ``first`` buffered and ``later`` chunks (then EOF) fed by
    the loop's next callbacks, after the reader has started waiting."""
    import asyncio
    from unittest import mock

    from aiohttp.streams import StreamReader

    loop = asyncio.get_running_loop()
    payload = StreamReader(mock.Mock(_reading_paused=False), 2 ** 16, loop=loop)
    payload.feed_data(first)

    def feed(rest: list[bytes]) -> None:
        if rest:
            payload.feed_data(rest[0])
            loop.call_soon(feed, rest[1:])
        else:
            payload.feed_eof()
    loop.call_soon(feed, list(later))
    return make_mocked_request("POST", "/api/v1/namespaces/default/pods", headers=headers or {}, payload=payload)


async def test_read_body_joins_chunks_arriving_after_the_headers():
    req = _streamed_request(b'{"kind":', [b'"Pod",', b'"apiVersion":"v1"}'])
    assert await neg.read_body(req) == b'{"kind":"Pod","apiVersion":"v1"}'
    assert req[neg.REQUEST_BODY] == b'{"kind":"Pod","apiVersion":"v1"}'


async def test_read_body_of_a_complete_body_is_it():
    req = _streamed_request(b'{"kind":"Pod"}', [])
    assert await neg.read_body(req) == b'{"kind":"Pod"}'


async def test_read_body_beyond_the_limit_without_a_length_is_413():
    chunk = b"x" * (1024 * 1024)
    req = _streamed_request(chunk, [chunk] * 4)
    with pytest.raises(st.APIError) as e:
        await neg.read_body(req)
    assert (e.value.code, e.value.message) == (413, f"Request entity too large: limit is {neg.MAX_BODY}")


async def test_read_body_with_a_length_beyond_the_limit_is_413_unread():
    req = _streamed_request(b"", [], {"Content-Length": str(neg.MAX_BODY + 1)})
    with pytest.raises(st.APIError) as e:
        await neg.read_body(req)
    assert e.value.code == 413
