"""Authentication through the apiserver: the filter's 401, token-file and service-account
users in SelfSubjectReview, TokenRequest (serviceaccounts/token), TokenReview, impersonation of
an authenticated user, and the consumed headers removed from what later stages see."""

from __future__ import annotations

import base64
import json
import os
import tempfile

import pytest
from aiohttp.test_utils import make_mocked_request

from components.apiserver.authentication.config import Options
from controlplane.storage import testing
from tests.support.apiserver import new_ns

pytestmark = pytest.mark.skipif(not testing.available(), reason="needs /usr/bin/etcd")

_TOKENS = tempfile.NamedTemporaryFile("w", suffix=".csv", delete=False)
_TOKENS.write('static-token,alice,u-1,"devs,ops"\n')
_TOKENS.close()
API_OPTIONS = {"authentication": Options(token_auth_file=_TOKENS.name)}

UNAUTHORIZED = {"kind": "Status", "apiVersion": "v1", "metadata": {}, "status": "Failure", "message": "Unauthorized",
                "reason": "Unauthorized", "code": 401}
SSR = {"apiVersion": "authentication.k8s.io/v1", "kind": "SelfSubjectReview"}


def teardown_module() -> None:
    os.unlink(_TOKENS.name)


def claims_of(token: str) -> dict:
    p = token.split(".")[1]
    return json.loads(base64.urlsafe_b64decode(p + "=" * (-len(p) % 4)))


async def whoami(api, **headers) -> dict:
    r = await api.post("/apis/authentication.k8s.io/v1/selfsubjectreviews", json=SSR, headers=headers)
    assert r.status == 201, await r.text()
    return (await r.json())["status"]["userInfo"]


@pytest.mark.parametrize("path", ["/api/v1/namespaces", "/healthz", "/apis/authentication.k8s.io/v1/selfsubjectreviews"],
                         ids=["resource", "non-resource", "review"])
async def test_invalid_bearer_token_is_401_even_with_anonymous(api, path):
    r = await api.get(path, headers={"Authorization": "Bearer not-a-token"})
    assert r.status == 401 and await r.json() == UNAUTHORIZED


async def test_no_credentials_is_anonymous(api):
    assert await whoami(api) == {"username": "system:anonymous", "groups": ["system:unauthenticated"]}


async def test_token_file_user(api):
    assert await whoami(api, Authorization="Bearer static-token") == {
        "username": "alice", "uid": "u-1", "groups": ["devs", "ops", "system:authenticated"]}


async def test_authenticated_user_impersonates(api):
    assert await whoami(api, Authorization="Bearer static-token", **{"Impersonate-User": "jane",
                                                                     "Impersonate-Group": "devs"}) == {
        "username": "jane", "groups": ["devs", "system:authenticated"]}


async def test_token_request_and_service_account_user(api):
    ns = await new_ns(api)
    r = await api.post(f"/api/v1/namespaces/{ns}/serviceaccounts", json={"metadata": {"name": "robot"}})
    assert r.status == 201
    sa_uid = (await r.json())["metadata"]["uid"]
    # (the account is read from etcd by TokenRequest, from the watch cache — else etcd — by the authenticator)
    r = await api.post(f"/api/v1/namespaces/{ns}/serviceaccounts/robot/token", json={
        "apiVersion": "authentication.k8s.io/v1", "kind": "TokenRequest", "spec": {"expirationSeconds": 600}})
    assert r.status == 201, await r.text()
    body = await r.json()
    assert body["kind"] == "TokenRequest" and body["spec"] == {
        "audiences": ["https://kubernetes.default.svc.cluster.local"], "expirationSeconds": 600}
    tok = body["status"]["token"]
    c = claims_of(tok)
    assert c["sub"] == f"system:serviceaccount:{ns}:robot" and c["exp"] - c["iat"] == 600
    assert c["kubernetes.io"] == {"namespace": ns, "serviceaccount": {"name": "robot", "uid": sa_uid}}
    info = await whoami(api, Authorization=f"Bearer {tok}")
    assert info == {"username": f"system:serviceaccount:{ns}:robot", "uid": sa_uid,
                    "groups": ["system:serviceaccounts", f"system:serviceaccounts:{ns}", "system:authenticated"],
                    "extra": {"authentication.kubernetes.io/credential-id": [f"JTI={c['jti']}"]}}
    # TokenReview with the same authenticators
    r = await api.post("/apis/authentication.k8s.io/v1/tokenreviews", json={
        "apiVersion": "authentication.k8s.io/v1", "kind": "TokenReview", "spec": {"token": tok}})
    assert (await r.json())["status"] == {"authenticated": True, "user": info,
                                          "audiences": ["https://kubernetes.default.svc.cluster.local"]}
    r = await api.post("/apis/authentication.k8s.io/v1/tokenreviews", json={
        "apiVersion": "authentication.k8s.io/v1", "kind": "TokenReview", "spec": {"token": tok, "audiences": ["x"]}})
    assert (await r.json())["status"] == {"user": {}, "error": (
        'token audiences ["https://kubernetes.default.svc.cluster.local"] is invalid for the target audiences ["x"]')}
    # the account deleted: the token no longer authenticates
    assert (await api.delete(f"/api/v1/namespaces/{ns}/serviceaccounts/robot")).status == 200
    server = api.server_obj
    await server.caches["serviceaccounts"].wait_for_revision(await server.store.current_revision())
    r = await api.get("/api/v1/namespaces", headers={"Authorization": f"Bearer {tok}"})
    assert r.status == 401 and await r.json() == UNAUTHORIZED


async def test_token_request_for_a_missing_account(api):
    r = await api.post("/api/v1/namespaces/default/serviceaccounts/nobody/token", json={"spec": {}})
    assert r.status == 404 and (await r.json())["message"] == 'serviceaccounts "nobody" not found'


async def test_token_subresource_in_discovery(api):
    doc = await (await api.get("/api/v1")).json()
    sub = next(r for r in doc["resources"] if r["name"] == "serviceaccounts/token")
    assert sub == {"name": "serviceaccounts/token", "singularName": "", "namespaced": True, "kind": "TokenRequest",
                   "verbs": ["create"], "group": "authentication.k8s.io", "version": "v1"}


async def test_consumed_headers_are_removed(api):
    authn = api.server_obj.authn.authentication
    req = make_mocked_request("GET", "/api/v1/pods", headers={
        "Authorization": "Bearer static-token", "Impersonate-User": "bob", "Impersonate-Extra-Scopes": "x",
        "Accept": "application/json"})
    user, seen = await authn.authenticate(req)
    assert user.name == "bob" and user.extra == {"scopes": ("x",)}
    assert "Authorization" not in seen.headers and "Impersonate-User" not in seen.headers
    assert seen.headers["Accept"] == "application/json"
    anonymous = make_mocked_request("GET", "/api/v1/pods", headers={"Authorization": "Basic eDp5"})
    user, seen = await authn.authenticate(anonymous)
    assert user.name == "system:anonymous" and seen is anonymous  # nothing consumed: the request as it came


@pytest.mark.parametrize("headers, spec_user", [
    ({}, {"username": "system:anonymous", "groups": ["system:unauthenticated"]}),
    ({"Authorization": "Bearer static-token"},
     {"username": "alice", "uid": "u-1", "groups": ["devs", "ops", "system:authenticated"]}),
    ({"Impersonate-User": "jane", "Impersonate-Extra-Scopes": "view"},
     {"username": "jane", "groups": ["system:authenticated"], "extra": {"scopes": ["view"]}}),
], ids=["anonymous", "token-file-user", "impersonated"])
async def test_csr_records_the_requesting_user(api, headers, spec_user):
    from tests.unit.test_api_groups_net_storage import valid
    body = valid("CertificateSigningRequest") | {"metadata": {"generateName": "csr-"}}
    body["spec"] = {**body["spec"], "username": "mallory", "groups": ["system:masters"]}
    r = await api.post("/apis/certificates.k8s.io/v1/certificatesigningrequests", json=body, headers=headers)
    assert r.status == 201, await r.text()
    spec = (await r.json())["spec"]
    assert {k: spec[k] for k in ("username", "uid", "groups", "extra") if k in spec} == spec_user
