"""controlplane.compact: structural sharing between versions and siblings of cached objects."""

from __future__ import annotations

import copy

from controlplane.compact import Sharer, share


def _pod(name: str, phase: str = "Pending", rs: str = "rs-uid") -> dict:
    return {"apiVersion": "v1", "kind": "Pod",
            "metadata": {"name": name, "namespace": "default", "uid": f"uid-{name}", "resourceVersion": "5",
                         "labels": {"app": "web", "pod-template-hash": "abc"},
                         "ownerReferences": [{"apiVersion": "apps/v1", "kind": "ReplicaSet", "name": "web-abc",
                                              "uid": rs, "controller": True}]},
            "spec": {"containers": [{"name": "c", "image": "pause:3.10",
                                     "volumeMounts": [{"name": f"kube-api-access-{name}"}]}],
                     "tolerations": [{"key": "node.kubernetes.io/not-ready", "operator": "Exists"}],
                     "volumes": [{"name": f"kube-api-access-{name}"}]},
            "status": {"phase": phase, "conditions": [{"type": "PodScheduled", "status": "True"}]}}


def test_share_reuses_equal_subtrees_of_the_previous_version():
    old = _pod("a")
    new = _pod("a", phase="Running")
    new["metadata"]["resourceVersion"] = "6"
    expected = copy.deepcopy(new)
    out = share(new, old)
    assert out is new and out == expected
    assert out["spec"] is old["spec"]
    assert out["metadata"]["labels"] is old["metadata"]["labels"]
    assert out["status"] is not old["status"] and out["status"]["conditions"] is old["status"]["conditions"]
    assert out["status"]["phase"] == "Running" and old["status"]["phase"] == "Pending"


def test_share_of_equal_objects_returns_the_old_one():
    old = _pod("a")
    assert share(_pod("a"), old) is old


def test_share_keeps_values_that_differ_in_type_or_length():
    old = {"a": [1, 2, 3], "b": {"x": 1}, "c": "s"}
    new = {"a": [1, 2], "b": [1], "c": 5, "d": "only-new"}
    out = share(copy.deepcopy(new), old)
    assert out == new


def test_share_lists_item_by_item():
    old = {"items": [{"n": 1}, {"n": 2, "x": "y"}]}
    new = {"items": [{"n": 1}, {"n": 3, "x": "y"}, {"n": 4}]}
    out = share(new, old)
    assert out["items"][0] is old["items"][0]
    assert out["items"][1] == {"n": 3, "x": "y"} and out["items"][1]["x"] is old["items"][1]["x"]
    assert out["items"][2] == {"n": 4}


def test_sharer_shares_a_first_version_with_its_owners_last_object():
    sharer = Sharer()
    a = sharer.store(_pod("a"), None)
    b = sharer.store(_pod("b"), None)
    assert b == _pod("b")
    assert b["metadata"]["ownerReferences"] is a["metadata"]["ownerReferences"]
    assert b["spec"]["tolerations"] is a["spec"]["tolerations"]
    assert b["spec"]["volumes"] is not a["spec"]["volumes"]


def test_sharer_does_not_share_across_owners():
    sharer = Sharer()
    a = sharer.store(_pod("a", rs="one"), None)
    b = sharer.store(_pod("b", rs="two"), None)
    assert b["spec"]["tolerations"] is not a["spec"]["tolerations"]


def test_sharer_forgets_a_deleted_sibling():
    sharer = Sharer()
    a = sharer.store(_pod("a"), None)
    sharer.forget(a)
    assert sharer.siblings == {}
    b = sharer.store(_pod("b"), None)
    assert b["spec"]["tolerations"] is not a["spec"]["tolerations"]


def test_sharer_shares_objects_without_owner_within_their_namespace():
    sharer = Sharer()
    ev = {"metadata": {"name": "x.1", "namespace": "default"}, "reason": "Pulled", "type": "Normal",
          "source": {"component": "kubelet", "host": "hollow-1"}}
    first = sharer.store(copy.deepcopy(ev), None)
    second = sharer.store({**copy.deepcopy(ev), "metadata": {"name": "x.2", "namespace": "default"}}, None)
    assert second["source"] is first["source"] and second["metadata"]["name"] == "x.2"
    other = sharer.store({**copy.deepcopy(ev), "metadata": {"name": "x.3", "namespace": "other"}}, None)
    assert other["source"] is not first["source"]
