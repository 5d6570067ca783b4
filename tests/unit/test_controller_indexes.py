"""The pods informer's shared indexes (``spec.nodeName``, ``podControllerUID`` with per-namespace
orphans) and the garbage collector's skipping of updates that leave ownerReferences alone,
on the fake API."""

from __future__ import annotations

from components.controller_manager.controller_utils import controlled_pods, pods_by_owner, pods_on_node
from components.controller_manager.garbagecollector import GarbageCollector
from components.controller_manager.replicaset import REPLICASET_KIND, ReplicaController
from components.controller_manager.testing import fake_context, settle
from controlplane.api.resources import PODS, REPLICASETS, get
from controlplane.client.testing import FakeClient

CONFIGMAPS = get("configmaps")


def pod(name: str, ns: str = "default", node: str | None = None, owner_uid: str | None = None,
        labels: dict | None = None) -> dict:
    md: dict = {"name": name, "namespace": ns, "labels": labels or {}}
    if owner_uid:
        md["ownerReferences"] = [{"apiVersion": "apps/v1", "kind": "ReplicaSet", "name": "rs",
                                  "uid": owner_uid, "controller": True}]
    return {"metadata": md, "spec": {"nodeName": node} if node else {}}


def names(pairs: list[tuple[str, dict]]) -> list[str]:
    return [k for k, _ in pairs]


def test_pods_on_node_follow_binding_and_deletion():
    client = FakeClient()
    inf = client.informers.informer(PODS)
    client.seed(PODS, pod("a", node="n1"))
    client.seed(PODS, pod("b", node="n2"))
    client.seed(PODS, pod("c"))
    assert names(pods_on_node(inf, "n1")) == ["default/a"]
    c = client.stored(PODS, "c", "default")
    inf.deliver("MODIFIED", {**c, "spec": {"nodeName": "n1"}})        # c bound to n1
    assert names(pods_on_node(inf, "n1")) == ["default/a", "default/c"]
    inf.deliver("DELETED", client.stored(PODS, "a", "default"))
    assert names(pods_on_node(inf, "n1")) == ["default/c"]
    assert pods_on_node(inf, "n3") == []


def test_pods_by_owner_lists_controlled_then_orphans_of_the_namespace():
    client = FakeClient()
    inf = client.informers.informer(PODS)
    client.seed(PODS, pod("mine", owner_uid="u1"))
    client.seed(PODS, pod("theirs", owner_uid="u2"))
    client.seed(PODS, pod("orphan"))
    client.seed(PODS, pod("orphan-elsewhere", ns="other"))
    assert names(pods_by_owner(inf, "u1", "default")) == ["default/mine", "default/orphan"]
    assert names(pods_by_owner(inf, "u1", "other")) == ["default/mine", "other/orphan-elsewhere"]
    # adoption moves the orphan from the namespace's orphans to its controller
    orphan = client.stored(PODS, "orphan", "default")
    inf.deliver("MODIFIED", {**orphan, "metadata": {**orphan["metadata"], "ownerReferences": [
        {"kind": "ReplicaSet", "name": "rs", "uid": "u2", "controller": True}]}})
    assert names(controlled_pods(inf, "u2")) == ["default/theirs", "default/orphan"]
    assert names(pods_by_owner(inf, "u1", "default")) == ["default/mine"]


async def test_replicaset_sync_claims_orphans_and_ignores_other_owners_pods():
    client, ctx, _ = fake_context()
    rc = ReplicaController(ctx, REPLICASET_KIND)
    rs = client.seed(REPLICASETS, {"metadata": {"name": "rs", "namespace": "default"},
                                   "spec": {"replicas": 2, "selector": {"matchLabels": {"app": "x"}},
                                            "template": {"metadata": {"labels": {"app": "x"}},
                                                         "spec": {"containers": [{"name": "c", "image": "i"}]}}}})
    client.seed(PODS, pod("orphan", labels={"app": "x"}))
    client.seed(PODS, pod("foreign", labels={"app": "x"}, owner_uid="someone-else"))
    await settle(rc)
    pods = client.all(PODS)
    mine = [p for p in pods if (p["metadata"].get("ownerReferences") or [{}])[0].get("uid") == rs["metadata"]["uid"]]
    assert len(mine) == 2                                   # the orphan adopted, one pod created
    assert "default/orphan" in {f"{p['metadata']['namespace']}/{p['metadata']['name']}" for p in mine}
    assert client.stored(PODS, "foreign", "default")["metadata"]["ownerReferences"][0]["uid"] == "someone-else"
    assert client.stored(REPLICASETS, "rs", "default")["status"]["replicas"] == 2


async def test_gc_ignores_updates_that_keep_owner_references():
    client, ctx, _ = fake_context()
    gc = GarbageCollector(ctx)
    owner = client.seed(CONFIGMAPS, {"metadata": {"name": "owner", "namespace": "default"}})
    ref = {"apiVersion": "v1", "kind": "ConfigMap", "name": "owner", "uid": owner["metadata"]["uid"]}
    client.seed(CONFIGMAPS, {"metadata": {"name": "dep", "namespace": "default", "ownerReferences": [ref]}})
    await settle(gc)
    inf = client.informers.informer(CONFIGMAPS)
    dep = client.stored(CONFIGMAPS, "dep", "default")
    inf.deliver("MODIFIED", {**dep, "data": {"k": "v"}})     # owners unchanged: nothing queued
    assert len(gc.queue) == 0
    inf.deliver("MODIFIED", {**dep, "metadata": {**dep["metadata"], "ownerReferences": [
        ref, {"apiVersion": "v1", "kind": "ConfigMap", "name": "gone", "uid": "no-such-uid"}]}})
    assert len(gc.queue) == 1                                 # a new, unobserved owner is verified
