"""Label, field and node selectors (apimachinery labels/selector.go, fields/selector.go,
component-helpers nodeaffinity, pkg/registry/core/pod/strategy.go)."""
import pytest

from controlplane.selectors import (
    node_selector_matches,
    node_selector_term_matches,
    object_fields,
    parse_field_selector,
    parse_label_selector,
    selectable_fields,
    selector_from_dict,
)

LABELS = {"app": "web", "tier": "front", "version": "3", "empty": ""}


@pytest.mark.parametrize("sel, expected", [
    ("", True),
    ("app=web", True),
    ("app==web", True),
    ("app=db", False),
    ("app!=db", True),
    ("app!=web", False),
    ("missing!=x", True),
    ("app in (web,db)", True),
    ("app in (db)", False),
    ("app notin (db)", True),
    ("app notin (web)", False),
    ("missing notin (x)", True),
    ("app", True),
    ("missing", False),
    ("!missing", True),
    ("!app", False),
    ("app=web,tier=front", True),
    ("app=web,tier=back", False),
    ("app = web , tier in ( front , back )", True),
    ("version>2", True),
    ("version<2", False),
    ("empty=", True),
    ("example.com/key=x", False),
])
def test_label_selector_matches(sel, expected):
    assert parse_label_selector(sel).matches(LABELS) is expected


@pytest.mark.parametrize("bad", ["=web", "app=web,", "app in web", "app in (x", "app web", "a!b", "Bad Key=x",
                                 "app=we b", "a>x", "-bad=x"])
def test_label_selector_errors(bad):
    with pytest.raises(ValueError):
        parse_label_selector(bad)


def test_label_selector_string_roundtrip():
    s = parse_label_selector("tier in (b,a),app=web,!x")
    assert str(s) == "app=web,tier in (a,b),!x"
    assert str(parse_label_selector(str(s))) == str(s)


@pytest.mark.parametrize("sel, labels, expected", [
    (None, {"a": "b"}, False),            # nil selector → nothing
    ({}, {"a": "b"}, True),               # empty selector → everything
    ({"matchLabels": {"a": "b"}}, {"a": "b", "c": "d"}, True),
    ({"matchLabels": {"a": "b"}}, {"a": "c"}, False),
    ({"matchExpressions": [{"key": "a", "operator": "In", "values": ["b", "c"]}]}, {"a": "c"}, True),
    ({"matchExpressions": [{"key": "a", "operator": "NotIn", "values": ["b"]}]}, {}, True),
    ({"matchExpressions": [{"key": "a", "operator": "Exists"}]}, {"a": ""}, True),
    ({"matchExpressions": [{"key": "a", "operator": "DoesNotExist"}]}, {"a": ""}, False),
    ({"matchLabels": {"a": "b"}, "matchExpressions": [{"key": "c", "operator": "Exists"}]}, {"a": "b"}, False),
], ids=["nil selects nothing", "empty selects everything", "matchLabels subset", "matchLabels other value",
        "In", "NotIn of a missing key", "Exists with an empty value", "DoesNotExist of a present key",
        "labels and expressions must both hold"])
def test_selector_from_dict(sel, labels, expected):
    assert selector_from_dict(sel).matches(labels) is expected


def test_selector_from_dict_bad_operator():
    with pytest.raises(ValueError):
        selector_from_dict({"matchExpressions": [{"key": "a", "operator": "Gt", "values": ["1"]}]})


NODE = {"metadata": {"name": "node01", "labels": {"zone": "a", "cpus": "8", "disk": "ssd"}}}


@pytest.mark.parametrize("term, expected", [
    ({"matchExpressions": [{"key": "zone", "operator": "In", "values": ["a", "b"]}]}, True),
    ({"matchExpressions": [{"key": "zone", "operator": "NotIn", "values": ["a"]}]}, False),
    ({"matchExpressions": [{"key": "gpu", "operator": "DoesNotExist"}]}, True),
    ({"matchExpressions": [{"key": "disk", "operator": "Exists"}]}, True),
    ({"matchExpressions": [{"key": "cpus", "operator": "Gt", "values": ["4"]}]}, True),
    ({"matchExpressions": [{"key": "cpus", "operator": "Lt", "values": ["4"]}]}, False),
    ({"matchExpressions": [{"key": "zone", "operator": "Gt", "values": ["4"]}]}, False),  # not an integer
    ({"matchFields": [{"key": "metadata.name", "operator": "In", "values": ["node01"]}]}, True),
    ({"matchFields": [{"key": "metadata.name", "operator": "NotIn", "values": ["node01"]}]}, False),
    ({"matchExpressions": [{"key": "zone", "operator": "In", "values": ["a"]}],
      "matchFields": [{"key": "metadata.name", "operator": "In", "values": ["other"]}]}, False),
    ({}, False),                                                      # empty term matches nothing
], ids=["In", "NotIn", "DoesNotExist", "Exists", "Gt", "Lt", "Gt of a value that is not an integer",
        "matchFields In", "matchFields NotIn", "expressions and fields must both hold", "an empty term"])
def test_node_selector_term(term, expected):
    assert node_selector_term_matches(term, NODE["metadata"]["labels"], {"metadata.name": "node01"}) is expected


def test_node_selector_terms_are_ored():
    no = {"matchExpressions": [{"key": "zone", "operator": "In", "values": ["z"]}]}
    yes = {"matchExpressions": [{"key": "disk", "operator": "In", "values": ["ssd"]}]}
    assert node_selector_matches({"nodeSelectorTerms": [no, yes]}, NODE)
    assert not node_selector_matches({"nodeSelectorTerms": [no]}, NODE)
    assert not node_selector_matches({"nodeSelectorTerms": []}, NODE)


@pytest.mark.parametrize("sel, reqs", [
    ("spec.nodeName=node01", [("spec.nodeName", "=", "node01")]),
    ("spec.nodeName==node01", [("spec.nodeName", "=", "node01")]),
    ("status.phase!=Failed,status.phase!=Succeeded",
     [("status.phase", "!=", "Failed"), ("status.phase", "!=", "Succeeded")]),
    (r"metadata.name=a\,b", [("metadata.name", "=", "a,b")]),
    (r"metadata.name=a\=b\\c", [("metadata.name", "=", "a=b\\c")]),
    ("spec.nodeName=", [("spec.nodeName", "=", "")]),
    ("", []),
], ids=["equals", "double equals", "two not-equals", "escaped comma", "escaped equals and backslash",
        "empty value", "empty selector"])
def test_parse_field_selector(sel, reqs):
    assert list(parse_field_selector(sel).requirements) == reqs


@pytest.mark.parametrize("bad", ["spec.nodeName", "=x", r"a=b\q", "a=b=c"])
def test_field_selector_errors(bad):
    with pytest.raises(ValueError):
        parse_field_selector(bad)


POD = {"metadata": {"name": "web-1", "namespace": "default"},
       "spec": {"nodeName": "node01", "restartPolicy": "Always", "schedulerName": "default-scheduler",
                "serviceAccountName": "default"},
       "status": {"phase": "Running", "podIP": "10.0.0.5", "podIPs": [{"ip": "10.0.0.5"}]}}


def test_pod_fields_and_matching():
    f = object_fields("Pod", POD)
    assert f["spec.nodeName"] == "node01"
    assert f["spec.hostNetwork"] == "false"
    assert f["status.podIP"] == "10.0.0.5"
    assert f["status.nominatedNodeName"] == ""
    assert parse_field_selector("spec.nodeName=node01,status.phase!=Failed").matches(f)
    assert not parse_field_selector("spec.nodeName=node02").matches(f)
    assert parse_field_selector("spec.nodeName=").matches(object_fields("Pod", {"metadata": {"name": "x"}}))


def test_unsupported_field_is_rejected():
    with pytest.raises(ValueError, match="field label not supported: spec.foo"):
        parse_field_selector("spec.foo=x").matches(object_fields("Pod", POD))
    with pytest.raises(ValueError, match="field label not supported: status.phase"):
        parse_field_selector("status.phase=Running").check("Deployment")
    parse_field_selector("metadata.name=x").check("Deployment")


@pytest.mark.parametrize("kind, field", [
    ("Event", "involvedObject.uid"), ("Event", "reason"), ("Event", "source"), ("Event", "type"),
    ("Node", "spec.unschedulable"), ("Namespace", "status.phase"), ("ReplicaSet", "status.replicas"),
    ("ReplicationController", "status.replicas"), ("Secret", "type"), ("ConfigMap", "metadata.namespace"),
])
def test_selectable_fields_per_kind(kind, field):
    assert field in selectable_fields(kind)
    assert field in object_fields(kind, {"metadata": {"name": "x"}})


def test_event_fields():
    ev = {"metadata": {"name": "e", "namespace": "default"}, "reason": "Scheduled", "type": "Normal",
          "involvedObject": {"kind": "Pod", "name": "web-1", "namespace": "default", "uid": "u1"},
          "source": {"component": "default-scheduler"}}
    f = object_fields("Event", ev)
    assert parse_field_selector(
        "involvedObject.name=web-1,involvedObject.namespace=default,involvedObject.uid=u1").matches(f)
    assert f["source"] == "default-scheduler"
