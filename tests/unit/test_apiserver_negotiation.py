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
