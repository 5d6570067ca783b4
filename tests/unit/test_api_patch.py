"""Patch flavours: RFC 7386, RFC 6902, and strategic merge patch
(apimachinery pkg/util/strategicpatch/patch.go; patchMergeKey tags of k8s.io/api)."""
import copy

import pytest

from controlplane.api.patch import PatchError, json_merge_patch, json_patch, strategic_merge_patch


# RFC 7386 appendix A examples.
@pytest.mark.parametrize("target, patch, result", [
    ({"a": "b"}, {"a": "c"}, {"a": "c"}),
    ({"a": "b"}, {"b": "c"}, {"a": "b", "b": "c"}),
    ({"a": "b"}, {"a": None}, {}),
    ({"a": "b", "b": "c"}, {"a": None}, {"b": "c"}),
    ({"a": ["b"]}, {"a": "c"}, {"a": "c"}),
    ({"a": "c"}, {"a": ["b"]}, {"a": ["b"]}),
    ({"a": {"b": "c"}}, {"a": {"b": "d", "c": None}}, {"a": {"b": "d"}}),
    ({"a": [{"b": "c"}]}, {"a": [1]}, {"a": [1]}),
    (["a", "b"], ["c", "d"], ["c", "d"]),
    ({"a": "b"}, ["c"], ["c"]),
    ({"a": "foo"}, None, None),
    ({"e": None}, {"a": 1}, {"e": None, "a": 1}),
    ([1, 2], {"a": "b", "c": None}, {"a": "b"}),
    ({}, {"a": {"bb": {"ccc": None}}}, {"a": {"bb": {}}}),
], ids=["replace a value", "add a key", "null removes the only key", "null removes one key",
        "a string replaces a list", "a list replaces a string", "nested merge and removal",
        "lists replace whole", "a list patch replaces a list", "a list patch replaces an object",
        "a null patch replaces the document", "a null in the target stays", "an object patch replaces a list",
        "null in a new object is dropped"])
def test_json_merge_patch(target, patch, result):
    before = copy.deepcopy(target)
    assert json_merge_patch(target, patch) == result
    assert target == before


def test_label_patch_as_kubectl_sends_it():
    pod = {"metadata": {"name": "p", "labels": {"app": "web", "old": "x"}}}
    assert json_merge_patch(pod, {"metadata": {"labels": {"tier": "fe", "old": None}}})["metadata"]["labels"] == {
        "app": "web", "tier": "fe"}
    assert json_merge_patch(pod, {}) == pod


DOC = {"foo": ["bar", "baz"], "a": {"b": 1}, "x/y": 2, "m~n": 3}


@pytest.mark.parametrize("ops, result", [
    ([{"op": "add", "path": "/baz", "value": "qux"}], {**DOC, "baz": "qux"}),
    ([{"op": "add", "path": "/foo/1", "value": "q"}], {**DOC, "foo": ["bar", "q", "baz"]}),
    ([{"op": "add", "path": "/foo/-", "value": "q"}], {**DOC, "foo": ["bar", "baz", "q"]}),
    ([{"op": "remove", "path": "/foo/0"}], {**DOC, "foo": ["baz"]}),
    ([{"op": "replace", "path": "/a/b", "value": 5}], {**DOC, "a": {"b": 5}}),
    ([{"op": "move", "from": "/a/b", "path": "/c"}], {**DOC, "a": {}, "c": 1}),
    ([{"op": "copy", "from": "/a", "path": "/c"}], {**DOC, "c": {"b": 1}}),
    ([{"op": "test", "path": "/x~1y", "value": 2}, {"op": "test", "path": "/m~0n", "value": 3}], DOC),
    ([{"op": "replace", "path": "", "value": {"z": 1}}], {"z": 1}),
], ids=["add a member", "insert into an array", "append with -", "remove an element", "replace a value",
        "move a value", "copy a value", "test escaped ~1 and ~0", "replace the whole document"])
def test_json_patch(ops, result):
    before = copy.deepcopy(DOC)
    assert json_patch(DOC, ops) == result
    assert DOC == before


@pytest.mark.parametrize("ops", [
    [{"op": "test", "path": "/a/b", "value": 2}],
    [{"op": "remove", "path": "/nope"}],
    [{"op": "replace", "path": "/nope", "value": 1}],
    [{"op": "add", "path": "/foo/5", "value": 1}],
    [{"op": "add", "path": "/foo/01", "value": 1}],
    [{"op": "add", "path": "nope", "value": 1}],
    [{"op": "add", "path": "/x"}],
    [{"op": "jump", "path": "/x"}],
    [{"op": "move", "path": "/x"}],
    [{"op": "move", "from": "/a", "path": "/a/b"}],
    ["add"],
    {"op": "add"},
], ids=["failed test", "remove a missing member", "replace a missing member", "index past the end",
        "index with a leading zero", "path without a leading slash", "add without a value", "unknown op",
        "move without from", "move into its own child", "an op that is not an object", "a patch that is not a list"])
def test_json_patch_errors(ops):
    with pytest.raises(PatchError):
        json_patch(DOC, ops)


def test_json_patch_is_atomic():
    ops = [{"op": "add", "path": "/new", "value": 1}, {"op": "test", "path": "/new", "value": 2}]
    with pytest.raises(PatchError, match="testing value /new failed"):
        json_patch(DOC, ops)
    assert "new" not in DOC


POD = {
    "metadata": {"name": "web", "labels": {"app": "web", "tier": "fe"}, "finalizers": ["a/x"],
                 "ownerReferences": [{"uid": "u1", "name": "rs1", "kind": "ReplicaSet"}]},
    "spec": {
        "containers": [
            {"name": "nginx", "image": "nginx:1.25", "ports": [{"containerPort": 80, "protocol": "TCP"}],
             "env": [{"name": "A", "value": "1"}, {"name": "B", "value": "2"}], "args": ["-a", "-b"]},
            {"name": "side", "image": "busybox"},
        ],
        "volumes": [{"name": "data", "emptyDir": {}}],
        "tolerations": [{"key": "k1", "operator": "Exists"}],
    },
    "status": {"conditions": [{"type": "Ready", "status": "False"}, {"type": "PodScheduled", "status": "True"}]},
}


def smp(patch, target=POD, kind="Pod"):
    before = copy.deepcopy(target)
    out = strategic_merge_patch(target, patch, kind)
    assert target == before
    return out


def test_maps_merge_and_null_deletes():
    out = smp({"metadata": {"labels": {"tier": None, "env": "prod"}}})
    assert out["metadata"]["labels"] == {"app": "web", "env": "prod"}


def test_containers_merge_by_name():
    out = smp({"spec": {"containers": [{"name": "side", "image": "busybox:1.36"}, {"name": "new", "image": "x"}]}})
    assert [(c["name"], c["image"]) for c in out["spec"]["containers"]] == [
        ("nginx", "nginx:1.25"), ("side", "busybox:1.36"), ("new", "x")]
    assert out["spec"]["containers"][0]["ports"] == POD["spec"]["containers"][0]["ports"]


def test_nested_merge_keys_env_ports():
    out = smp({"spec": {"containers": [{"name": "nginx", "env": [{"name": "B", "value": "3"}, {"name": "C", "value": "4"}],
                                        "ports": [{"containerPort": 443}], "args": ["-z"]}]}})
    c = out["spec"]["containers"][0]
    assert c["env"] == [{"name": "A", "value": "1"}, {"name": "B", "value": "3"}, {"name": "C", "value": "4"}]
    assert [p["containerPort"] for p in c["ports"]] == [80, 443]
    assert c["args"] == ["-z"]                               # primitive list replaces


def test_tolerations_have_no_merge_key():
    out = smp({"spec": {"tolerations": [{"key": "k2", "operator": "Exists"}]}})
    assert out["spec"]["tolerations"] == [{"key": "k2", "operator": "Exists"}]


def test_finalizers_union_and_delete_from_primitive_list():
    out = smp({"metadata": {"finalizers": ["a/x", "b/y"]}})
    assert out["metadata"]["finalizers"] == ["a/x", "b/y"]
    out = smp({"metadata": {"$deleteFromPrimitiveList/finalizers": ["a/x"]}})
    assert out["metadata"]["finalizers"] == []


def test_conditions_and_owner_references_merge():
    out = smp({"status": {"conditions": [{"type": "Ready", "status": "True"}]}})
    assert out["status"]["conditions"] == [{"type": "Ready", "status": "True"},
                                           {"type": "PodScheduled", "status": "True"}]
    out = smp({"metadata": {"ownerReferences": [{"uid": "u2", "name": "rs2", "kind": "ReplicaSet"}]}})
    assert [o["uid"] for o in out["metadata"]["ownerReferences"]] == ["u1", "u2"]


def test_patch_delete_directive_in_list():
    out = smp({"spec": {"containers": [{"name": "side", "$patch": "delete"}],
                        "volumes": [{"name": "data", "$patch": "delete"}]}})
    assert [c["name"] for c in out["spec"]["containers"]] == ["nginx"]
    assert out["spec"]["volumes"] == []


def test_patch_replace_directive():
    out = smp({"spec": {"containers": [{"name": "only", "image": "x"}, {"$patch": "replace"}]}})
    assert out["spec"]["containers"] == [{"name": "only", "image": "x"}]
    out = smp({"metadata": {"labels": {"$patch": "replace", "x": "y"}}})
    assert out["metadata"]["labels"] == {"x": "y"}


def test_set_element_order():
    out = smp({"spec": {"$setElementOrder/containers": [{"name": "side"}, {"name": "nginx"}],
                        "containers": [{"name": "side", "image": "b2"}]}})
    assert [(c["name"], c["image"]) for c in out["spec"]["containers"]] == [("side", "b2"), ("nginx", "nginx:1.25")]


def test_retain_keys():
    d = {"spec": {"strategy": {"type": "RollingUpdate", "rollingUpdate": {"maxSurge": 1}}}}
    out = smp({"spec": {"strategy": {"$retainKeys": ["type"], "type": "Recreate"}}}, d, "Deployment")
    assert out["spec"]["strategy"] == {"type": "Recreate"}


def test_kubectl_apply_style_patch():
    """What kubectl apply sends when an image changes and a label is removed."""
    patch = {"metadata": {"annotations": {"kubectl.kubernetes.io/last-applied-configuration": "{}\n"},
                          "labels": {"tier": None}},
             "spec": {"$setElementOrder/containers": [{"name": "nginx"}, {"name": "side"}],
                      "containers": [{"name": "nginx", "image": "nginx:1.27"}]}}
    out = smp(patch)
    assert out["metadata"]["labels"] == {"app": "web"}
    assert out["spec"]["containers"][0]["image"] == "nginx:1.27"
    assert out["spec"]["containers"][1] == POD["spec"]["containers"][1]
    assert "$setElementOrder/containers" not in out["spec"]


def test_service_ports_merge_on_port():
    svc = {"spec": {"ports": [{"port": 80, "targetPort": 8080}, {"port": 443}]}}
    out = smp({"spec": {"ports": [{"port": 80, "targetPort": 9090}]}}, svc, "Service")
    assert out["spec"]["ports"] == [{"port": 80, "targetPort": 9090}, {"port": 443}]


def test_new_keys_drop_directives_and_nulls():
    out = smp({"spec": {"nodeSelector": {"disk": "ssd", "gone": None}}})
    assert out["spec"]["nodeSelector"] == {"disk": "ssd"}


@pytest.mark.parametrize("patch", [
    {"spec": {"containers": [{"image": "no-name"}]}},
    {"spec": {"$patch": "explode"}},
    {"spec": {"$bogus": 1}},
    ["not", "an", "object"],
], ids=["list element without its merge key", "unknown $patch directive", "unknown directive",
        "not an object"])
def test_strategic_errors(patch):
    with pytest.raises(PatchError):
        strategic_merge_patch(POD, patch, "Pod")
