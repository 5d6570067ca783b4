"""Audit with a real apiserver process and the real kubectl over HTTPS: with an
``--audit-policy-file``, a ``kubectl create`` is logged at its rule's level (RequestResponse: the
object sent and the one stored) and a ``kubectl get`` at Metadata, both as the certificate's user
with the authorization decision; a watch logs ResponseStarted then ResponseComplete; ``--as``
records the impersonated user beside the real one; a bad token is logged at ResponseStarted with
an empty user; every response carries its event's ``Audit-Id``; ``controlplane trace --who``
names who did each step."""

from __future__ import annotations

import json
import os
import subprocess
import sys
import time
import urllib.error
import urllib.request

import pytest

from controlplane.pki import ADMIN_USER
from controlplane.storage import testing
from tests.integration.conftest import ROOT, apiserver_on_test_etcd, kubectl_ok, urlopen

pytestmark = [pytest.mark.integration,
              pytest.mark.skipif(not (testing.available() and os.path.exists("/usr/bin/kubectl")),
                                 reason="needs /usr/bin/etcd and /usr/bin/kubectl")]

POLICY = """\
apiVersion: audit.k8s.io/v1
kind: Policy
omitStages: ["RequestReceived"]
rules:
- level: None
  nonResourceURLs: ["/api*", "/openapi*", "/version", "/healthz*", "/readyz*", "/debug/*"]
- level: RequestResponse
  verbs: ["create"]
  resources: [{group: "", resources: ["configmaps"]}]
- level: Metadata
"""


@pytest.fixture(scope="module")
def cluster(tmp_path_factory):
    d = tmp_path_factory.mktemp("audit")
    (d / "policy.yaml").write_text(POLICY)
    with apiserver_on_test_etcd(d, "--audit-policy-file", str(d / "policy.yaml"),
                                "--audit-log-path", str(d / "audit.log")) as c:
        c["log"] = d / "audit.log"
        yield c


def events(c) -> list[dict]:
    return [json.loads(line) for line in c["log"].read_text().splitlines() if line.strip()]


def wait_for_events(c, match, count: int = 1, timeout: float = 20.0) -> list[dict]:
    """The audit events ``match`` accepts, once there are ``count`` (the log is flushed by a task)."""
    deadline = time.monotonic() + timeout
    while True:
        got = [e for e in events(c) if match(e)]
        if len(got) >= count or time.monotonic() > deadline:
            assert len(got) >= count, f"expected {count} events, got {got}"
            return got
        time.sleep(0.05)  # the next flush of the audit log


def test_create_is_logged_at_request_response_and_get_at_metadata_as_the_user(cluster):
    kubectl_ok(cluster, "create", "configmap", "cm1", "--from-literal=a=b")
    kubectl_ok(cluster, "get", "configmap", "cm1", "-o", "json")
    [create] = wait_for_events(cluster, lambda e: e["verb"] == "create" and e["objectRef"].get("name") == "cm1")
    assert create["level"] == "RequestResponse" and create["stage"] == "ResponseComplete"
    assert create["user"]["username"] == ADMIN_USER and "system:masters" in create["user"]["groups"]
    assert create["objectRef"] == {"resource": "configmaps", "namespace": "default", "name": "cm1", "apiVersion": "v1"}
    assert create["responseStatus"] == {"metadata": {}, "code": 201}
    assert create["requestObject"]["data"] == {"a": "b"}
    assert create["responseObject"]["metadata"]["uid"]
    assert create["annotations"]["authorization.k8s.io/decision"] == "allow"
    assert create["userAgent"].startswith("kubectl")
    [get] = wait_for_events(cluster, lambda e: e["verb"] == "get" and e["objectRef"].get("name") == "cm1")
    assert get["level"] == "Metadata" and get["user"]["username"] == ADMIN_USER
    assert "requestObject" not in get and "responseObject" not in get
    assert not [e for e in events(cluster) if e["stage"] == "RequestReceived"]  # omitStages


def test_watch_logs_response_started_then_response_complete(cluster):
    req = urllib.request.Request(cluster["url"] + "/api/v1/namespaces/default/configmaps?watch=1&timeoutSeconds=1")
    with urlopen(req, timeout=30) as r:
        audit_id = r.headers["Audit-Id"]
        r.read()
    got = wait_for_events(cluster, lambda e: e["auditID"] == audit_id, 2)
    assert [e["stage"] for e in got] == ["ResponseStarted", "ResponseComplete"]
    assert got[0]["verb"] == "watch" and got[0]["responseStatus"]["code"] == 200


def test_impersonation_records_both_users(cluster):
    kubectl_ok(cluster, "get", "pods", "--as", "jane", "--as-group", "devs")
    [e] = wait_for_events(cluster, lambda e: e["verb"] == "list" and "impersonatedUser" in e)
    assert e["user"]["username"] == ADMIN_USER
    assert e["impersonatedUser"] == {"username": "jane", "groups": ["devs", "system:authenticated"]}


def test_bad_token_is_logged_at_response_started_with_no_user(cluster):
    req = urllib.request.Request(cluster["url"] + "/api/v1/namespaces/default/pods",
                                 headers={"Authorization": "Bearer garbage"})
    with pytest.raises(urllib.error.HTTPError) as e:
        urlopen(req, timeout=30, client_cert=False)
    assert e.value.code == 401
    audit_id = e.value.headers["Audit-Id"]
    [ev] = wait_for_events(cluster, lambda ev: ev["auditID"] == audit_id)
    assert ev["stage"] == "ResponseStarted" and ev["user"] == {}
    assert ev["responseStatus"] == {"metadata": {}, "message": "Authentication failed, attempted: bearer",
                                    "code": 401}


def test_trace_who_names_the_user_of_each_step(cluster):
    pod = {"apiVersion": "v1", "kind": "Pod", "metadata": {"name": "traced"},
           "spec": {"containers": [{"name": "c", "image": "registry.k8s.io/pause:3.10"}]}}
    kubectl_ok(cluster, "create", "-f", "-", input=json.dumps(pod))
    out = subprocess.run([sys.executable, "-m", "controlplane", "trace", "--kubeconfig", cluster["kubeconfig"],
                          "--kind", "Pod", "--name", "traced", "--who"], capture_output=True, text=True,
                         timeout=60, cwd=ROOT)
    assert out.returncode == 0, out.stderr
    lines = [line for line in out.stdout.splitlines() if line.startswith(("[ 2]", "[ 3]"))]
    assert len(lines) == 2 and all(ADMIN_USER in line for line in lines), out.stdout
