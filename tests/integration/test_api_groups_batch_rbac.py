"""The real kubectl against the apiserver process: batch, rbac, autoscaling and the review APIs."""

from __future__ import annotations

import json
import os

import pytest

from controlplane.storage import testing
from tests.integration.conftest import apiserver_on_test_etcd, kubectl_ok, kubectl_on

pytestmark = [pytest.mark.integration,
              pytest.mark.skipif(not (testing.available() and os.path.exists("/usr/bin/kubectl")),
                                 reason="needs /usr/bin/etcd and /usr/bin/kubectl")]


@pytest.fixture(scope="module")
def cluster(tmp_path_factory):
    with apiserver_on_test_etcd(tmp_path_factory.mktemp("groups")) as c:
        yield c


kubectl, ok = kubectl_on, kubectl_ok


def test_create_and_get_job(cluster):
    assert ok(cluster, "create", "job", "pi", "--image=busybox").strip() == "job.batch/pi created"
    lines = ok(cluster, "get", "job").splitlines()
    assert lines[0].split() == ["NAME", "STATUS", "COMPLETIONS", "DURATION", "AGE"]
    assert lines[1].split()[:3] == ["pi", "Running", "0/1"]
    j = json.loads(ok(cluster, "get", "job", "pi", "-o", "json"))
    uid = j["metadata"]["uid"]
    assert j["spec"]["selector"] == {"matchLabels": {"batch.kubernetes.io/controller-uid": uid}}
    assert j["spec"]["template"]["metadata"]["labels"]["controller-uid"] == uid
    assert j["spec"]["template"]["spec"]["restartPolicy"] == "Never"
    assert (j["spec"]["backoffLimit"], j["spec"]["completionMode"], j["spec"]["suspend"]) == (6, "NonIndexed", False)
    wide = ok(cluster, "get", "job", "pi", "-o", "wide").splitlines()
    assert wide[0].split() == ["NAME", "STATUS", "COMPLETIONS", "DURATION", "AGE", "CONTAINERS", "IMAGES",
                               "SELECTOR"]
    assert f"batch.kubernetes.io/controller-uid={uid}" in wide[1]


def test_cronjob_and_invalid_schedule(cluster):
    assert ok(cluster, "create", "cronjob", "tick", "--image=busybox", "--schedule=*/5 * * * *").strip() == \
        "cronjob.batch/tick created"
    lines = ok(cluster, "get", "cj").splitlines()
    assert lines[0].split() == ["NAME", "SCHEDULE", "TIMEZONE", "SUSPEND", "ACTIVE", "LAST", "SCHEDULE", "AGE"]
    assert lines[1].split()[:8] == ["tick", "*/5", "*", "*", "*", "*", "<none>", "False"]
    assert ok(cluster, "create", "job", "manual", "--from=cronjob/tick").strip() == "job.batch/manual created"
    manual = json.loads(ok(cluster, "get", "job", "manual", "-o", "json"))
    assert manual["metadata"]["ownerReferences"][0]["kind"] == "CronJob"
    assert manual["metadata"]["annotations"] == {"cronjob.kubernetes.io/instantiate": "manual"}
    r = kubectl(cluster, "create", "cronjob", "bad", "--image=busybox", "--schedule=bad")
    assert r.returncode == 1
    assert r.stderr.strip() == ('error: failed to create cronjob: CronJob.batch "bad" is invalid: spec.schedule: '
                                'Invalid value: "bad": expected exactly 5 fields, found 1: [bad]')


def test_rbac_objects(cluster):
    assert ok(cluster, "create", "role", "reader", "--verb=get,list", "--resource=pods").strip() == \
        "role.rbac.authorization.k8s.io/reader created"
    assert ok(cluster, "create", "clusterrole", "nodes", "--verb=get", "--resource=nodes").strip() == \
        "clusterrole.rbac.authorization.k8s.io/nodes created"
    assert ok(cluster, "create", "rolebinding", "read", "--role=reader", "--user=alice",
              "--serviceaccount=default:bot").strip() == "rolebinding.rbac.authorization.k8s.io/read created"
    assert ok(cluster, "create", "clusterrolebinding", "nodes", "--clusterrole=nodes", "--group=ops").strip() == \
        "clusterrolebinding.rbac.authorization.k8s.io/nodes created"
    assert ok(cluster, "create", "clusterrole", "monitoring",
              "--aggregation-rule=rbac.example.com/aggregate-to-monitoring=true").strip() == \
        "clusterrole.rbac.authorization.k8s.io/monitoring created"
    agg = json.loads(ok(cluster, "get", "clusterrole", "monitoring", "-o", "json"))
    assert agg["aggregationRule"] == {"clusterRoleSelectors": [
        {"matchLabels": {"rbac.example.com/aggregate-to-monitoring": "true"}}]}
    lines = ok(cluster, "get", "roles").splitlines()
    assert lines[0].split() == ["NAME", "CREATED", "AT"] and lines[1].split()[0] == "reader"
    lines = ok(cluster, "get", "rolebinding", "-o", "wide").splitlines()
    assert lines[0].split() == ["NAME", "ROLE", "AGE", "USERS", "GROUPS", "SERVICEACCOUNTS"]
    assert lines[1].split()[:2] == ["read", "Role/reader"] and lines[1].split()[-2:] == ["alice", "default:bot"]
    lines = ok(cluster, "get", "clusterrolebinding", "nodes").splitlines()
    assert lines[1].split()[:2] == ["nodes", "ClusterRole/nodes"]
    rb = json.loads(ok(cluster, "get", "rolebinding", "read", "-o", "json"))
    assert rb["roleRef"] == {"apiGroup": "rbac.authorization.k8s.io", "kind": "Role", "name": "reader"}
    r = kubectl(cluster, "patch", "rolebinding", "read", "--type=merge", "-p", '{"roleRef":{"name":"other"}}')
    assert r.returncode == 1 and "roleRef: Invalid value:" in r.stderr and "cannot change roleRef" in r.stderr


def test_autoscale_and_get_hpa(cluster):
    ok(cluster, "create", "deployment", "web", "--image=nginx")
    assert ok(cluster, "autoscale", "deployment", "web", "--min=2", "--max=5", "--cpu-percent=70").strip() == \
        "horizontalpodautoscaler.autoscaling/web autoscaled"
    lines = ok(cluster, "get", "hpa").splitlines()
    assert lines[0].split() == ["NAME", "REFERENCE", "TARGETS", "MINPODS", "MAXPODS", "REPLICAS", "AGE"]
    assert lines[1].split()[:7] == ["web", "Deployment/web", "cpu:", "<unknown>/70%", "2", "5", "0"]
    v1 = json.loads(ok(cluster, "get", "--raw", "/apis/autoscaling/v1/namespaces/default/horizontalpodautoscalers/web"))
    assert v1["spec"]["targetCPUUtilizationPercentage"] == 70
    v2 = json.loads(ok(cluster, "get", "hpa", "web", "-o", "json"))
    assert v2["apiVersion"] == "autoscaling/v2" and v2["spec"]["metrics"][0]["resource"]["target"] == {
        "type": "Utilization", "averageUtilization": 70}


def test_auth_can_i_and_whoami(cluster):
    assert ok(cluster, "auth", "can-i", "create", "pods").strip() == "yes"
    assert ok(cluster, "auth", "can-i", "delete", "nodes", "--as=alice").strip() == "yes"
    # the session kubeconfig's client certificate: kubeadm's admin (CN kubernetes-admin, O system:masters)
    who = [line.split() for line in ok(cluster, "auth", "whoami").splitlines()]
    assert who[:3] == [["ATTRIBUTE", "VALUE"], ["Username", "kubernetes-admin"],
                       ["Groups", "[system:masters", "system:authenticated]"]]
    assert who[3][:2] == ["Extra:", "authentication.kubernetes.io/credential-id"] and who[3][2].startswith("[X509SHA256=")
    out = ok(cluster, "auth", "whoami", "--as=bob", "--as-group=devs")
    assert "Username    bob" in out and "Groups      [devs system:authenticated]" in out
    rules = ok(cluster, "auth", "can-i", "--list").splitlines()
    assert rules[0].split() == ["Resources", "Non-Resource", "URLs", "Resource", "Names", "Verbs"]
    assert rules[1].split() == ["*.*", "[]", "[]", "[*]"]


def test_api_resources_and_explain(cluster):
    rows = {tuple(line.split()[:1]) + (line.split()[-3],): line.split()
            for line in ok(cluster, "api-resources").splitlines()[1:]}
    expect = {("jobs", "batch/v1"), ("cronjobs", "batch/v1"), ("roles", "rbac.authorization.k8s.io/v1"),
              ("clusterroles", "rbac.authorization.k8s.io/v1"), ("rolebindings", "rbac.authorization.k8s.io/v1"),
              ("clusterrolebindings", "rbac.authorization.k8s.io/v1"), ("horizontalpodautoscalers", "autoscaling/v2"),
              ("controllerrevisions", "apps/v1"), ("selfsubjectaccessreviews", "authorization.k8s.io/v1"),
              ("subjectaccessreviews", "authorization.k8s.io/v1"),
              ("localsubjectaccessreviews", "authorization.k8s.io/v1"),
              ("selfsubjectrulesreviews", "authorization.k8s.io/v1"), ("tokenreviews", "authentication.k8s.io/v1"),
              ("selfsubjectreviews", "authentication.k8s.io/v1")}
    assert expect <= set(rows)
    assert rows[("cronjobs", "batch/v1")][1] == "cj" and rows[("horizontalpodautoscalers", "autoscaling/v2")][1] == "hpa"
    assert "autoscaling/v1" in ok(cluster, "api-versions").split()
    out = ok(cluster, "explain", "job.spec.template.spec")
    assert "KIND:       Job" in out and "FIELD: spec <PodSpec>" in out and "containers" in out
    out = ok(cluster, "explain", "cronjob.spec.jobTemplate")
    assert "FIELD: jobTemplate <JobTemplateSpec>" in out
    out = ok(cluster, "explain", "hpa.spec.metrics.resource.target")
    assert "averageUtilization" in out
    all_lines = ok(cluster, "get", "all").splitlines()
    assert any(line.startswith("job.batch/pi") for line in all_lines)
    assert any(line.startswith("cronjob.batch/tick") for line in all_lines)
