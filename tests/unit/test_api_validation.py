"""Validation causes and Status messages with Kubernetes' wording
(pkg/apis/core/validation, pkg/apis/apps/validation, apimachinery util/validation)."""
import copy

import pytest

from controlplane.api.defaults import apply_defaults
from controlplane.api.validation import DNS1123_SUBDOMAIN_ERR, invalid_message, validate

#: what DefaultTolerationSeconds admission gives a stored pod
ADMITTED_TOLERATIONS = [{"key": k, "operator": "Exists", "effect": "NoExecute", "tolerationSeconds": 300}
                        for k in ("node.kubernetes.io/not-ready", "node.kubernetes.io/unreachable")]


def pod(name="p", **spec_over):
    spec = {"containers": [{"name": "c", "image": "nginx"}], "tolerations": copy.deepcopy(ADMITTED_TOLERATIONS)}
    spec.update(spec_over)
    p = {"metadata": {"name": name, "namespace": "default"}, "spec": spec}
    apply_defaults("Pod", p)
    return p


def fields(causes):
    return {(c["field"], c["reason"]) for c in causes}


def test_valid_pod():
    assert validate("Pod", pod()) == []


def test_missing_image_message():
    p = pod(containers=[{"name": "c"}])
    causes = validate("Pod", p)
    assert causes == [{"reason": "FieldValueRequired", "message": "Required value",
                       "field": "spec.containers[0].image"}]
    assert invalid_message("Pod", "bad1", causes) == 'Pod "bad1" is invalid: spec.containers[0].image: Required value'


def test_bad_name_message():
    causes = validate("Pod", pod(name="Bad_Name"))
    assert causes[0]["field"] == "metadata.name"
    assert causes[0]["message"] == (
        'Invalid value: "Bad_Name": a lowercase RFC 1123 subdomain must consist of lower case alphanumeric '
        "characters, '-' or '.', and must start and end with an alphanumeric character (e.g. 'example.com', "
        r"regex used for validation is '[a-z0-9]([-a-z0-9]*[a-z0-9])?(\.[a-z0-9]([-a-z0-9]*[a-z0-9])?)*')")
    assert DNS1123_SUBDOMAIN_ERR in causes[0]["message"]


def test_multiple_causes_are_bracketed():
    p = pod(containers=[{"name": "c"}], restartPolicy="Sometimes")
    msg = invalid_message("Pod", "x", validate("Pod", p))
    assert msg == ('Pod "x" is invalid: [spec.containers[0].image: Required value, spec.restartPolicy: '
                   'Unsupported value: "Sometimes": supported values: "Always", "OnFailure", "Never"]')


def test_name_required_unless_generate_name():
    p = pod()
    del p["metadata"]["name"]
    assert fields(validate("Pod", p)) == {("metadata.name", "FieldValueRequired")}
    p["metadata"]["generateName"] = "web-"
    assert validate("Pod", p) == []
    p["metadata"]["generateName"] = "Web-"
    assert fields(validate("Pod", p)) == {("metadata.generateName", "FieldValueInvalid")}


@pytest.mark.parametrize("mutate, field, reason", [
    (lambda s: s.update(containers=[]), "spec.containers", "FieldValueRequired"),
    (lambda s: s["containers"].append({"name": "c", "image": "x"}), "spec.containers[1].name", "FieldValueDuplicate"),
    (lambda s: s["containers"][0].update(name="Web"), "spec.containers[0].name", "FieldValueInvalid"),
    (lambda s: s["containers"][0].update(ports=[{"containerPort": 0}]),
     "spec.containers[0].ports[0].containerPort", "FieldValueRequired"),
    (lambda s: s["containers"][0].update(ports=[{"containerPort": 70000}]),
     "spec.containers[0].ports[0].containerPort", "FieldValueInvalid"),
    (lambda s: s["containers"][0].update(ports=[{"containerPort": 80, "protocol": "HTTP"}]),
     "spec.containers[0].ports[0].protocol", "FieldValueNotSupported"),
    (lambda s: s["containers"][0].update(resources={"limits": {"cpu": "abc"}}),
     "spec.containers[0].resources.limits[cpu]", "FieldValueInvalid"),
    (lambda s: s["containers"][0].update(resources={"limits": {"cpu": "1"}, "requests": {"cpu": "2"}}),
     "spec.containers[0].resources.requests", "FieldValueInvalid"),
    (lambda s: s.update(nodeSelector={"bad key": "x"}), "spec.nodeSelector", "FieldValueInvalid"),
    (lambda s: s.update(affinity={"nodeAffinity": {"requiredDuringSchedulingIgnoredDuringExecution": {
        "nodeSelectorTerms": [{"matchExpressions": [{"key": "zone", "operator": "Near", "values": ["a"]}]}]}}}),
     "spec.affinity.nodeAffinity.requiredDuringSchedulingIgnoredDuringExecution.nodeSelectorTerms[0]"
     ".matchExpressions[0].operator", "FieldValueInvalid"),
    (lambda s: s.update(tolerations=[{"key": "k", "operator": "Exists", "effect": "Sometimes"}]),
     "spec.tolerations[0].effect", "FieldValueNotSupported"),
    (lambda s: s["containers"][0].update(volumeMounts=[{"name": "data", "mountPath": "/d"}]),
     "spec.containers[0].volumeMounts[0].name", "FieldValueNotFound"),
    (lambda s: s.update(activeDeadlineSeconds=0), "spec.activeDeadlineSeconds", "FieldValueInvalid"),
], ids=["no containers", "duplicate container name", "container name not a DNS label", "containerPort 0",
        "containerPort above 65535", "unknown port protocol", "limit not a quantity", "request above its limit",
        "nodeSelector key not a label key", "unknown node selector operator", "unknown toleration effect",
        "volumeMount of no volume", "activeDeadlineSeconds 0"])
def test_pod_spec_rules(mutate, field, reason):
    p = pod()
    mutate(p["spec"])
    assert (field, reason) in fields(validate("Pod", p))


def test_requests_over_limits_message():
    p = pod(containers=[{"name": "c", "image": "x", "resources": {"limits": {"cpu": "500m"},
                                                                    "requests": {"cpu": "1"}}}])
    [c] = validate("Pod", p)
    assert c["message"] == 'Invalid value: "1": must be less than or equal to cpu limit of 500m'


def test_quantity_error_wording():
    p = pod(containers=[{"name": "c", "image": "x", "resources": {"requests": {"memory": "1GG"}}}])
    [c] = validate("Pod", p)
    assert "unable to parse quantity's suffix" in c["message"]


def test_labels_and_annotations():
    p = pod()
    p["metadata"]["labels"] = {"app": "x" * 64}
    [c] = validate("Pod", p)
    assert c["field"] == "metadata.labels" and "must be no more than 63 characters" in c["message"]
    p = pod()
    p["metadata"]["annotations"] = {"big": "x" * (256 * 1024)}
    [c] = validate("Pod", p)
    assert c == {"reason": "FieldValueTooLong", "field": "metadata.annotations",
                 "message": "Too long: must have at most 262144 bytes"}


def test_pod_update_image_allowed_other_fields_forbidden():
    old = pod()
    new = copy.deepcopy(old)
    new["spec"]["containers"][0]["image"] = "nginx:1.27"
    new["spec"]["activeDeadlineSeconds"] = 60
    new["spec"]["tolerations"].append({"key": "x", "operator": "Exists"})
    new["metadata"]["labels"] = {"a": "b"}
    assert validate("Pod", new, old) == []
    bad = copy.deepcopy(old)
    bad["spec"]["containers"][0]["ports"] = [{"containerPort": 80, "protocol": "TCP"}]
    causes = validate("Pod", bad, old)
    assert len(causes) == 1 and causes[0]["field"] == "spec" and causes[0]["reason"] == "FieldValueForbidden"
    assert causes[0]["message"].startswith(
        "Forbidden: pod updates may not change fields other than `spec.containers[*].image`,"
        "`spec.initContainers[*].image`,`spec.activeDeadlineSeconds`,`spec.tolerations` (only additions to "
        "existing tolerations),`spec.terminationGracePeriodSeconds` (allow it to be set to 1 if it was "
        "previously negative)")
    removed = copy.deepcopy(old)
    removed["spec"]["tolerations"] = []
    assert fields(validate("Pod", removed, old)) == {("spec", "FieldValueForbidden")}


def test_pod_update_binding_node_name_allowed():
    old = pod()
    new = copy.deepcopy(old)
    new["spec"]["nodeName"] = "node01"
    assert validate("Pod", new, old) == []
    moved = copy.deepcopy(new)
    moved["spec"]["nodeName"] = "node02"
    assert fields(validate("Pod", moved, new)) == {("spec", "FieldValueForbidden")}


def deployment(replicas=1, sel=None, labels=None):
    d = {"metadata": {"name": "web", "namespace": "default"},
         "spec": {"replicas": replicas, "selector": {"matchLabels": {"app": "web"}} if sel is None else sel,
                  "template": {"metadata": {"labels": {"app": "web"} if labels is None else labels},
                               "spec": {"containers": [{"name": "c", "image": "nginx"}]}}}}
    apply_defaults("Deployment", d)
    return d


def test_valid_deployment():
    assert validate("Deployment", deployment()) == []


def test_deployment_replicas_and_selector_messages():
    d = deployment(replicas=-1, labels={"app": "other"})
    msg = invalid_message("Deployment", "web", validate("Deployment", d))
    assert msg == ('Deployment.apps "web" is invalid: [spec.replicas: Invalid value: -1: must be greater than '
                   'or equal to 0, spec.template.metadata.labels: Invalid value: map[string]string{"app":"other"}: '
                   '`selector` does not match template `labels`]')


def test_deployment_selector_required_and_immutable():
    d = deployment()
    del d["spec"]["selector"]
    assert ("spec.selector", "FieldValueRequired") in fields(validate("Deployment", d))
    old = deployment()
    new = deployment(sel={"matchLabels": {"app": "web", "v": "2"}}, labels={"app": "web", "v": "2"})
    assert ("spec.selector", "FieldValueInvalid") in fields(validate("Deployment", new, old))


def test_template_restart_policy_must_be_always():
    d = deployment()
    d["spec"]["template"]["spec"]["restartPolicy"] = "Never"
    [c] = validate("Deployment", d)
    assert c["field"] == "spec.template.spec.restartPolicy"
    assert c["message"] == 'Unsupported value: "Never": supported values: "Always"'


def test_replicaset_and_rc():
    rs = deployment()
    assert validate("ReplicaSet", rs) == []
    rc = {"metadata": {"name": "rc", "namespace": "default"},
          "spec": {"replicas": 2, "selector": {"app": "x"},
                   "template": {"metadata": {"labels": {"app": "y"}},
                                "spec": {"containers": [{"name": "c", "image": "x"}]}}}}
    apply_defaults("ReplicationController", rc)
    assert fields(validate("ReplicationController", rc)) == {("spec.template.metadata.labels", "FieldValueInvalid")}
    rc["spec"]["template"]["metadata"]["labels"] = {"app": "x"}
    assert validate("ReplicationController", rc) == []


@pytest.mark.parametrize("kind, name, ok", [
    ("Namespace", "team-a", True), ("Namespace", "team.a", False), ("Node", "node01.example.com", True),
    ("Node", "Node_1", False), ("ConfigMap", "a.b", True),
], ids=["Namespace: a DNS label", "Namespace: no dots", "Node: a DNS subdomain", "Node: no capitals or underscores",
        "ConfigMap: a DNS subdomain"])
def test_names_per_kind(kind, name, ok):
    meta = {"name": name}
    if kind == "ConfigMap":
        meta["namespace"] = "default"
    assert (validate(kind, {"metadata": meta}) == []) is ok


def test_namespace_required_for_namespaced_kinds():
    assert fields(validate("ConfigMap", {"metadata": {"name": "c"}})) == {("metadata.namespace", "FieldValueRequired")}
    assert fields(validate("Node", {"metadata": {"name": "n", "namespace": "x"}})) == {
        ("metadata.namespace", "FieldValueForbidden")}


def test_garbage_never_raises():
    for obj in ({}, {"metadata": "x"}, {"metadata": {"name": "p", "namespace": "d"}, "spec": {"containers": "x"}},
                {"metadata": {"name": "p", "namespace": "d"}, "spec": {"containers": [1, None]}}):
        assert validate("Pod", obj)


def test_pod_update_may_remove_scheduling_gates_but_not_add_them():
    from controlplane.api.validation import validate
    base = {"apiVersion": "v1", "kind": "Pod", "metadata": {"name": "p", "namespace": "default"},
            "spec": {"containers": [{"name": "c", "image": "nginx"}],
                     "schedulingGates": [{"name": "a"}, {"name": "b"}]}}
    removed = {**base, "spec": {**base["spec"], "schedulingGates": [{"name": "b"}]}}
    assert validate("Pod", removed, base) == []
    cleared = {**base, "spec": {k: v for k, v in base["spec"].items() if k != "schedulingGates"}}
    assert validate("Pod", cleared, base) == []
    added = {**base, "spec": {**base["spec"], "schedulingGates": [{"name": "a"}, {"name": "b"}, {"name": "c"}]}}
    causes = validate("Pod", added, base)
    assert any(c["field"] == "spec.schedulingGates" and "found new scheduling gate 'c'" in c["message"]
               for c in causes), causes


def _wrong_values():
    return ["x", 5, True, None, [None], [1], ["x"], {"a": 1}, [{"a": {"b": "c"}}]]


def test_every_validator_survives_every_wrong_type():
    """validate() returns causes, never raises, whatever type each field of each kind has
    (top level, spec fields, and spec.template.spec fields)."""
    from controlplane.api import schemas
    from controlplane.api.resources import REGISTRY
    from controlplane.api.validation import validate

    pod_spec_fields = list(schemas.TYPES["PodSpec"][1])
    container_fields = list(schemas.TYPES["Container"][1])
    validated = [r.kind for r in REGISTRY if r.validate is not None]
    assert {"Pod", "Deployment", "ReplicaSet", "ReplicationController", "Service"} <= set(validated)
    for kind in validated:
        ks = schemas.kind_fields(kind)
        kind_fields = dict(ks.fields) if ks is not None else {}
        top = ["metadata", *kind_fields]
        spec_type = kind_fields.get("spec", ("", ""))[0]
        spec_fields = list(schemas.TYPES.get(spec_type, ("", {}))[1])
        for bad in _wrong_values():
            for f in top:
                assert isinstance(validate(kind, {"metadata": {"name": "a", "namespace": "d"}, f: bad}), list)
            for f in spec_fields + pod_spec_fields:
                obj = {"metadata": {"name": "a", "namespace": "d"}, "spec": {f: bad}}
                assert isinstance(validate(kind, obj), list)
                assert isinstance(validate(kind, obj, old=obj), list)
                tpl = {"metadata": {"name": "a", "namespace": "d"},
                       "spec": {"template": {"spec": {f: bad, "containers": [{"name": "c", "image": "i"}]}}}}
                assert isinstance(validate(kind, tpl), list)
            for f in container_fields:
                obj = {"metadata": {"name": "a", "namespace": "d"},
                       "spec": {"containers": [{"name": "c", "image": "i", f: bad}]}}
                assert isinstance(validate(kind, obj), list)
