"""A JSON patch (RFC 6902) that does not apply is answered as the real apiserver does: 422 Invalid
with the generic text of errors.NewGenericServerResponse (kubectl prints "The request is invalid:
the server rejected our request due to an error in our request"); a body that is not a list of
operations is a 400 with Go's unmarshal message (handlers/patch.go, jsonPatcher.applyJSPatch)."""

from __future__ import annotations

import json

import pytest

from tests.support.apiserver import new_ns
from tests.unit.test_apiserver import API_OPTIONS, pod, pytestmark  # noqa: F401

JSON_PATCH = {"Content-Type": "application/json-patch+json"}
GENERIC = "the server rejected our request due to an error in our request"


@pytest.mark.parametrize("ops", [
    [{"op": "test", "path": "/metadata/labels/app", "value": "other"}],
    [{"op": "remove", "path": "/metadata/labels/missing"}],
    [{"op": "bogus", "path": "/metadata/labels/app"}],
    [{"op": "add", "path": "/metadata/labels/x", "value": "1"},
     {"op": "test", "path": "/metadata/labels/x", "value": "2"}],
], ids=["failed test", "remove of a missing key", "unknown op", "test after add fails"])
async def test_json_patch_that_does_not_apply_is_a_generic_422(api, ops):
    ns = await new_ns(api)
    created = await (await api.post(f"/api/v1/namespaces/{ns}/pods", json=pod("p", {"app": "p"}))).json()
    r = await api.patch(f"/api/v1/namespaces/{ns}/pods/p", data=json.dumps(ops), headers=JSON_PATCH)
    st = await r.json()
    assert r.status == 422, st
    assert (st["kind"], st["status"], st["reason"], st["message"]) == ("Status", "Failure", "Invalid", GENERIC)
    # nothing was written
    now = await (await api.get(f"/api/v1/namespaces/{ns}/pods/p")).json()
    assert now["metadata"]["resourceVersion"] == created["metadata"]["resourceVersion"]


async def test_json_patch_that_is_not_a_list_is_a_400(api):
    ns = await new_ns(api)
    await api.post(f"/api/v1/namespaces/{ns}/pods", json=pod("p"))
    for body, word in (({"op": "add"}, "object"), ("x", "string"), (3, "number")):
        r = await api.patch(f"/api/v1/namespaces/{ns}/pods/p", data=json.dumps(body), headers=JSON_PATCH)
        st = await r.json()
        assert r.status == 400 and st["reason"] == "BadRequest", st
        assert st["message"] == f"json: cannot unmarshal {word} into Go value of type jsonpatch.Patch"


async def test_json_patch_that_applies_still_works(api):
    ns = await new_ns(api)
    await api.post(f"/api/v1/namespaces/{ns}/pods", json=pod("p", {"app": "p"}))
    ops = [{"op": "test", "path": "/metadata/labels/app", "value": "p"},
           {"op": "add", "path": "/metadata/labels/j", "value": "3"}]
    r = await api.patch(f"/api/v1/namespaces/{ns}/pods/p", data=json.dumps(ops), headers=JSON_PATCH)
    assert r.status == 200 and (await r.json())["metadata"]["labels"] == {"app": "p", "j": "3"}


def deep(levels: int) -> object:
    v: object = "x"
    for _ in range(levels):
        v = {"a": v}
    return v


@pytest.mark.parametrize("patch, content_type, status", [
    ([{"op": "add", "path": "/metadata/annotations", "value": {"a": deep(97)}}], JSON_PATCH, 422),
    ([{"op": "add", "path": "/metadata/annotations", "value": {"a": deep(98)}}], JSON_PATCH, 400),
    ({"spec": {"unknownField": deep(150)}}, {"Content-Type": "application/merge-patch+json"}, 200),
], ids=["json patch at the limit", "json patch beyond the limit", "unknown deep field pruned first"])
async def test_patch_nesting_beyond_the_limit_is_a_400(api, patch, content_type, status):
    """A patch nesting deeper than PATCH_MAX_DEPTH (100) levels answers 400 ``exceeded max
    depth``; a merge patch whose deep part the decoder drops (an unknown field) is merged."""
    ns = await new_ns(api)
    await api.post(f"/api/v1/namespaces/{ns}/pods", json=pod("p"))
    r = await api.patch(f"/api/v1/namespaces/{ns}/pods/p", data=json.dumps(patch), headers=content_type)
    body = await r.json()
    assert r.status == status, body
    if status == 400:
        assert body["message"] == "invalid character '{' exceeded max depth of 100 for a patch"
