"""Authentication with real processes and the real kubectl over HTTPS (the harness's CA and admin certificate): ``kubectl create token``
(a JWT whose claims decode right), the token at the apiserver (SelfSubjectReview, TokenReview),
a bad token's 401, a token-file user, and impersonation with ``--as`` / ``--as-group``.

kubectl sends no credentials to a plain-HTTP server (client-go applies the user's auth only on
TLS transports), so the token-bearing requests are made with urllib, as ``curl -H
"Authorization: Bearer …"`` would."""

from __future__ import annotations

import base64
import json
import os
import subprocess
import urllib.error
import urllib.request

import pytest

from controlplane.storage import testing
from tests.integration.conftest import apiserver_on_test_etcd, urlopen
from tests.support.tls import harness

pytestmark = [pytest.mark.integration,
              pytest.mark.skipif(not (testing.available() and os.path.exists("/usr/bin/kubectl")),
                                 reason="needs /usr/bin/etcd and /usr/bin/kubectl")]

ISSUER = "https://kubernetes.default.svc.cluster.local"
UNAUTHORIZED = {"kind": "Status", "apiVersion": "v1", "metadata": {}, "status": "Failure", "message": "Unauthorized",
                "reason": "Unauthorized", "code": 401}


@pytest.fixture(scope="module")
def cluster(tmp_path_factory):
    d = tmp_path_factory.mktemp("authn")
    (d / "tokens.csv").write_text('static-token,alice,u-1,"devs,ops"\n')
    with apiserver_on_test_etcd(d, "--token-auth-file", str(d / "tokens.csv")) as c:
        for sa in ("default", "x"):
            ok(c, "create", "serviceaccount", sa)
        yield c


def kubectl(c, *args) -> subprocess.CompletedProcess:
    return subprocess.run(["/usr/bin/kubectl", "--kubeconfig", c["kubeconfig"], "--cache-dir",
                           str(c["dir"] / "kubectl-cache"), *args], capture_output=True, text=True, timeout=60,
                          env={**os.environ, "HOME": str(c["dir"])})


def ok(c, *args) -> str:
    r = kubectl(c, *args)
    assert r.returncode == 0, r.stderr
    return r.stdout


def claims(token: str) -> dict:
    p = token.split(".")[1]
    return json.loads(base64.urlsafe_b64decode(p + "=" * (-len(p) % 4)))


def call(c, method: str, path: str, body: dict | None = None, token: str | None = None) -> tuple[int, dict]:
    headers = {"Content-Type": "application/json", "Accept": "application/json"}
    if token is not None:
        headers["Authorization"] = f"Bearer {token}"
    req = urllib.request.Request(c["url"] + path, method=method, headers=headers,
                                 data=json.dumps(body).encode() if body is not None else None)
    try:
        with urlopen(req, timeout=30, client_cert=False) as r:  # the token alone: no client certificate
            return r.status, json.loads(r.read())
    except urllib.error.HTTPError as e:
        return e.code, json.loads(e.read())


def whoami(c, token: str) -> dict:
    code, body = call(c, "POST", "/apis/authentication.k8s.io/v1/selfsubjectreviews",
                      {"apiVersion": "authentication.k8s.io/v1", "kind": "SelfSubjectReview"}, token)
    assert code == 201, body
    return body["status"]["userInfo"]


def test_create_token_claims(cluster):
    token = ok(cluster, "create", "token", "default").strip()
    c = claims(token)
    sa_uid = json.loads(ok(cluster, "get", "serviceaccount", "default", "-o", "json"))["metadata"]["uid"]
    assert c["iss"] == ISSUER and c["aud"] == [ISSUER] and c["sub"] == "system:serviceaccount:default:default"
    assert c["exp"] - c["iat"] == 3600 and c["nbf"] == c["iat"] and len(c["jti"]) == 36
    assert c["kubernetes.io"] == {"namespace": "default", "serviceaccount": {"name": "default", "uid": sa_uid}}
    assert json.loads(base64.urlsafe_b64decode(token.split(".")[0] + "=="))["alg"] == "RS256"  # the bare apiserver's in-memory RSA key


def test_create_token_duration_and_audience(cluster):
    c = claims(ok(cluster, "create", "token", "x", "--duration", "10m", "--audience", "a").strip())
    assert c["exp"] - c["iat"] == 600 and c["aud"] == ["a"] and c["sub"] == "system:serviceaccount:default:x"


def test_create_token_errors(cluster):
    r = kubectl(cluster, "create", "token", "x", "--duration", "1m")
    assert r.returncode == 1 and r.stderr.strip() == (
        'error: failed to create token: TokenRequest.authentication.k8s.io "" is invalid: spec.expirationSeconds: '
        "Invalid value: 60: may not specify a duration less than 10 minutes")
    r = kubectl(cluster, "create", "token", "nobody")
    assert r.returncode == 1 and r.stderr.strip() == 'error: failed to create token: serviceaccounts "nobody" not found'


def test_service_account_token_at_the_apiserver(cluster):
    token = ok(cluster, "create", "token", "default").strip()
    info = whoami(cluster, token)
    assert info["username"] == "system:serviceaccount:default:default"
    assert info["groups"] == ["system:serviceaccounts", "system:serviceaccounts:default", "system:authenticated"]
    assert info["extra"] == {"authentication.kubernetes.io/credential-id": [f"JTI={claims(token)['jti']}"]}
    code, review = call(cluster, "POST", "/apis/authentication.k8s.io/v1/tokenreviews",
                        {"apiVersion": "authentication.k8s.io/v1", "kind": "TokenReview", "spec": {"token": token}})
    assert code == 201 and review["status"] == {"authenticated": True, "user": info, "audiences": [ISSUER]}
    # a token for another audience does not authenticate at the apiserver
    other = ok(cluster, "create", "token", "x", "--audience", "a").strip()
    assert call(cluster, "GET", "/api/v1/namespaces/default/pods", token=other) == (401, UNAUTHORIZED)


def test_bad_token_is_401(cluster):
    assert call(cluster, "GET", "/api/v1/namespaces/default/pods", token="not-a-token") == (401, UNAUTHORIZED)
    out = subprocess.run(["curl", "-s", "--cacert", harness().ca_file, "-H", "Authorization: Bearer not-a-token",
                          cluster["url"] + "/api/v1/pods"],
                         capture_output=True, text=True, timeout=30).stdout
    assert json.loads(out) == UNAUTHORIZED


def test_token_file_user(cluster):
    assert whoami(cluster, "static-token") == {"username": "alice", "uid": "u-1",
                                               "groups": ["devs", "ops", "system:authenticated"]}


def test_whoami_impersonating(cluster):
    out = ok(cluster, "auth", "whoami", "--as=jane", "--as-group=devs")
    assert out.splitlines() == ["ATTRIBUTE   VALUE", "Username    jane", "Groups      [devs system:authenticated]"]
    doc = ok(cluster, "auth", "whoami", "--as=system:serviceaccount:default:nobody", "-o", "json")
    assert json.loads(doc)["status"]["userInfo"] == {
        "username": "system:serviceaccount:default:nobody",
        "groups": ["system:serviceaccounts", "system:serviceaccounts:default", "system:authenticated"]}


def test_anonymous_without_credentials(cluster):
    anonymous = cluster["dir"] / "anonymous.kubeconfig"  # the CA, no client certificate
    anonymous.write_text(harness().kubeconfig_text(cluster["url"], client_cert=False))
    assert ok({**cluster, "kubeconfig": str(anonymous)}, "auth", "whoami").splitlines() == [
        "ATTRIBUTE   VALUE", "Username    system:anonymous", "Groups      [system:unauthenticated]"]


def test_kubelet_requests_pod_bound_tokens(tmp_path):
    """``controlplane up`` as before: the kubelet asks a pod-bound token for the pod's projected
    volume (a 201 on serviceaccounts/token in the apiserver's metrics, no FailedMount event), and
    ``kubectl create token --bound-object-kind Pod`` binds one to the pod and its node
    (``--bound-object-kind Node``: to the node)."""
    from tests.integration.conftest import start_up, stop
    proc, _, data_dir = start_up(str(tmp_path))
    try:
        c = {"kubeconfig": os.path.join(data_dir, "kubeconfig"), "dir": tmp_path}
        ok(c, "run", "web", "--image=nginx")
        ok(c, "wait", "--for=condition=Ready", "pod/web", "--timeout=60s")
        pod = json.loads(ok(c, "get", "pod", "web", "-o", "json"))
        assert any(v["name"].startswith("kube-api-access-") for v in pod["spec"]["volumes"])
        metrics = ok(c, "get", "--raw", "/metrics")
        assert any(line.startswith('apiserver_request_total{verb="POST",group="",version="v1",'
                                   'resource="serviceaccounts",subresource="token",') and 'code="201"' in line
                   for line in metrics.splitlines())
        reasons = {e["reason"] for e in json.loads(ok(c, "get", "events", "-o", "json"))["items"]}
        assert "FailedMount" not in reasons and "Started" in reasons
        token = ok(c, "create", "token", "default", "--bound-object-kind", "Pod", "--bound-object-name", "web").strip()
        k8s = claims(token)["kubernetes.io"]
        assert k8s["pod"] == {"name": "web", "uid": pod["metadata"]["uid"]}
        assert k8s["node"]["name"] == pod["spec"]["nodeName"]
        node = ok(c, "create", "token", "default", "--bound-object-kind", "Node", "--bound-object-name",
                  pod["spec"]["nodeName"]).strip()
        assert set(claims(node)["kubernetes.io"]) == {"namespace", "serviceaccount", "node"}
    finally:
        stop(proc)
