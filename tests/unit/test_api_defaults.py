"""Defaulting as the apiserver does it (pkg/apis/core/v1/defaults.go, apps/v1/defaults.go,
pod strategy PrepareForCreate). What the DefaultTolerationSeconds, ServiceAccount and
Priority admission plugins add is tested in test_apiserver_admission.py."""
import pytest

from controlplane.api.defaults import apply_defaults, image_pull_policy, qos_class


def pod(containers, **spec):
    return {"apiVersion": "v1", "kind": "Pod", "metadata": {"name": "p", "namespace": "default"},
            "spec": {"containers": containers, **spec}}


def test_pod_spec_defaults():
    p = pod([{"name": "c", "image": "nginx"}])
    apply_defaults("Pod", p)
    s = p["spec"]
    assert s["restartPolicy"] == "Always"
    assert s["dnsPolicy"] == "ClusterFirst"
    assert s["schedulerName"] == "default-scheduler"
    assert s["terminationGracePeriodSeconds"] == 30
    assert s["securityContext"] == {}
    assert s["enableServiceLinks"] is True
    # admission's, not defaulting's (tests/unit/test_apiserver_admission.py)
    assert not {"priority", "serviceAccountName", "serviceAccount", "preemptionPolicy", "tolerations"} & set(s)
    c = s["containers"][0]
    assert c["terminationMessagePath"] == "/dev/termination-log"
    assert c["terminationMessagePolicy"] == "File"
    assert c["resources"] == {}
    assert c["imagePullPolicy"] == "Always"
    assert p["status"] == {"phase": "Pending", "qosClass": "BestEffort"}


def test_client_values_are_kept():
    p = pod([{"name": "c", "image": "nginx:1.25", "imagePullPolicy": "Never",
              "ports": [{"containerPort": 80}, {"containerPort": 53, "protocol": "UDP"}]}],
            restartPolicy="Never", serviceAccountName="builder",
            tolerations=[{"key": "node.kubernetes.io/not-ready", "operator": "Exists", "effect": "NoExecute",
                          "tolerationSeconds": 10}])
    apply_defaults("Pod", p)
    s = p["spec"]
    assert s["restartPolicy"] == "Never"
    assert s["serviceAccountName"] == "builder"
    assert s["containers"][0]["imagePullPolicy"] == "Never"
    assert [x["protocol"] for x in s["containers"][0]["ports"]] == ["TCP", "UDP"]
    assert s["tolerations"] == [{"key": "node.kubernetes.io/not-ready", "operator": "Exists",
                                 "effect": "NoExecute", "tolerationSeconds": 10}]


def test_init_containers_defaulted():
    p = pod([{"name": "c", "image": "nginx"}], initContainers=[{"name": "i", "image": "busybox:1.36"}])
    apply_defaults("Pod", p)
    ic = p["spec"]["initContainers"][0]
    assert ic["imagePullPolicy"] == "IfNotPresent"
    assert ic["terminationMessagePath"] == "/dev/termination-log"


@pytest.mark.parametrize("image, policy", [
    ("nginx", "Always"), ("nginx:latest", "Always"), ("nginx:1.25", "IfNotPresent"),
    ("registry:5000/app", "Always"), ("registry:5000/app:v1", "IfNotPresent"),
    ("nginx@sha256:" + "a" * 64, "IfNotPresent"),
])
def test_image_pull_policy(image, policy):
    assert image_pull_policy(image) == policy


@pytest.mark.parametrize("resources, qos", [
    ([{}], "BestEffort"),
    ([{"requests": {"cpu": "100m"}}], "Burstable"),
    ([{"limits": {"cpu": "1", "memory": "1Gi"}}], "Guaranteed"),
    ([{"limits": {"cpu": "1", "memory": "1Gi"}, "requests": {"cpu": "500m", "memory": "1Gi"}}], "Burstable"),
    ([{"limits": {"cpu": "1", "memory": "1Gi"}}, {}], "Burstable"),
    ([{"limits": {"cpu": "1"}}], "Burstable"),
], ids=["no requests or limits", "a request only", "limits default equal requests",
        "requests below limits", "one container without resources", "a cpu limit only"])
def test_qos_class(resources, qos):
    p = pod([{"name": f"c{i}", "image": "x", "resources": r} for i, r in enumerate(resources)])
    apply_defaults("Pod", p)
    assert p["status"]["qosClass"] == qos
    assert qos_class(p["spec"]) == qos


def test_requests_default_from_limits():
    p = pod([{"name": "c", "image": "x", "resources": {"limits": {"cpu": "1"}, "requests": {"memory": "1Gi"}}}])
    apply_defaults("Pod", p)
    assert p["spec"]["containers"][0]["resources"]["requests"] == {"memory": "1Gi", "cpu": "1"}


def test_existing_status_kept():
    p = pod([{"name": "c", "image": "x"}])
    p["status"] = {"phase": "Running", "qosClass": "BestEffort"}
    apply_defaults("Pod", p)
    assert p["status"]["phase"] == "Running"


def test_deployment_defaults():
    d = {"metadata": {"name": "web", "namespace": "default"},
         "spec": {"selector": {"matchLabels": {"app": "web"}},
                  "template": {"metadata": {"labels": {"app": "web"}},
                               "spec": {"containers": [{"name": "c", "image": "nginx:1.25"}]}}}}
    apply_defaults("Deployment", d)
    s = d["spec"]
    assert s["replicas"] == 1
    assert s["strategy"] == {"type": "RollingUpdate", "rollingUpdate": {"maxUnavailable": "25%", "maxSurge": "25%"}}
    assert s["revisionHistoryLimit"] == 10
    assert s["progressDeadlineSeconds"] == 600
    ts = s["template"]["spec"]
    assert ts["restartPolicy"] == "Always" and ts["dnsPolicy"] == "ClusterFirst"
    assert ts["containers"][0]["imagePullPolicy"] == "IfNotPresent"
    assert "tolerations" not in ts and "serviceAccountName" not in ts   # admission applies to pods only


def test_recreate_strategy_has_no_rolling_update():
    d = {"metadata": {"name": "w"}, "spec": {"strategy": {"type": "Recreate"}, "replicas": 0}}
    apply_defaults("Deployment", d)
    assert d["spec"]["strategy"] == {"type": "Recreate"}
    assert d["spec"]["replicas"] == 0


def test_replicaset_and_rc_defaults():
    rs = {"metadata": {"name": "rs"}, "spec": {"template": {"spec": {"containers": [{"name": "c", "image": "x"}]}}}}
    apply_defaults("ReplicaSet", rs)
    assert rs["spec"]["replicas"] == 1
    rc = {"metadata": {"name": "rc"},
          "spec": {"template": {"metadata": {"labels": {"app": "x"}},
                                "spec": {"containers": [{"name": "c", "image": "x"}]}}}}
    apply_defaults("ReplicationController", rc)
    assert rc["spec"]["selector"] == {"app": "x"}
    assert rc["metadata"]["labels"] == {"app": "x"}
    assert rc["spec"]["replicas"] == 1
    assert rc["spec"]["template"]["spec"]["terminationGracePeriodSeconds"] == 30


def test_namespace_defaults():
    ns = {"metadata": {"name": "team-a"}}
    apply_defaults("Namespace", ns)
    assert "finalizers" not in (ns.get("spec") or {})  # set on create by the strategy, not defaulted
    assert ns["status"] == {"phase": "Active"}
    assert ns["metadata"]["labels"]["kubernetes.io/metadata.name"] == "team-a"


def test_event_and_unknown_untouched():
    ev = {"metadata": {"name": "e"}, "reason": "X"}
    apply_defaults("Event", ev)
    assert ev == {"metadata": {"name": "e"}, "reason": "X"}


def test_malformed_is_left_for_validation():
    p = {"metadata": {"name": "p"}, "spec": "oops"}
    apply_defaults("Pod", p)
    assert p == {"metadata": {"name": "p"}, "spec": "oops"}
