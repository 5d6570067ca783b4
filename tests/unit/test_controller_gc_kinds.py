"""The garbage collector on every kind (pkg/controller/garbagecollector/): ConfigMaps owned by
ConfigMaps, Deployments and custom resources, each propagation policy, dangling owners, uid
mismatches, invalid namespaces, kinds not served, monitors following discovery."""

from __future__ import annotations

import pytest

from components.controller_manager.garbagecollector import (
    IGNORED_RESOURCES,
    GarbageCollector,
    RestMappingError,
    builtin_monitored,
)
from components.controller_manager.testing import fake_context, settle
from controlplane.api.registry import Resource
from controlplane.api.resources import DEPLOYMENTS, get

CONFIGMAPS = get("configmaps")
CLUSTERROLES = get("clusterroles", "rbac.authorization.k8s.io")
VERBS = ("delete", "deletecollection", "get", "list", "patch", "create", "update", "watch")
WIDGETS = Resource("example.com", "v1", "widgets", "widget", "Widget", True, verbs=VERBS)


def ref(res: Resource, obj: dict, block: bool = False) -> dict:
    out = {"apiVersion": res.api_version, "kind": res.kind, "name": obj["metadata"]["name"],
           "uid": obj["metadata"]["uid"]}
    if block:
        out["blockOwnerDeletion"] = True
    return out


def cm(name: str, ns: str = "default", owners: list[dict] | None = None) -> dict:
    md: dict = {"name": name, "namespace": ns}
    if owners:
        md["ownerReferences"] = owners
    return {"apiVersion": "v1", "kind": "ConfigMap", "metadata": md, "data": {"k": "v"}}


def owner_of(res: Resource, name: str = "owner", ns: str = "default") -> dict:
    if res == DEPLOYMENTS:
        return {"apiVersion": "apps/v1", "kind": "Deployment", "metadata": {"name": name, "namespace": ns},
                "spec": {"replicas": 0, "selector": {"matchLabels": {"a": "b"}},
                         "template": {"metadata": {"labels": {"a": "b"}}, "spec": {"containers": []}}}}
    if res == WIDGETS:
        return {"apiVersion": "example.com/v1", "kind": "Widget", "metadata": {"name": name, "namespace": ns}}
    return cm(name, ns)


def discovery(client, *, widgets: bool = True):
    """Answer /apis (and the example.com group) as an apiserver with the widgets CRD would."""
    state = {"widgets": widgets}

    def react(a):
        if a.path == "/apis":
            groups = [{"name": "apps", "versions": [{"groupVersion": "apps/v1"}],
                       "preferredVersion": {"groupVersion": "apps/v1"}}]
            if state["widgets"]:
                groups.append({"name": "example.com", "versions": [{"groupVersion": "example.com/v1"}],
                               "preferredVersion": {"groupVersion": "example.com/v1"}})
            return True, {"kind": "APIGroupList", "groups": groups}
        if a.path == "/apis/example.com/v1":
            if not state["widgets"]:
                return True, None
            return True, {"kind": "APIResourceList", "groupVersion": "example.com/v1", "resources": [
                {"name": "widgets", "singularName": "widget", "kind": "Widget", "namespaced": True,
                 "verbs": list(VERBS)},
                {"name": "widgets/status", "namespaced": True, "kind": "Widget", "verbs": ["get", "patch"]}]}
        return False, None
    client.prepend_reactor("request", "*", react)
    return state


def test_monitors_every_deletable_resource_but_events():
    plurals = {(r.group, r.plural) for r in builtin_monitored()}
    assert {("", "configmaps"), ("", "secrets"), ("apps", "deployments"), ("", "pods"),
            ("rbac.authorization.k8s.io", "clusterroles"), ("batch", "jobs")} <= plurals
    assert not plurals & IGNORED_RESOURCES
    assert ("", "bindings") not in plurals   # create-only
    assert len([p for p in plurals if p == ("autoscaling", "horizontalpodautoscalers")]) == 1


@pytest.mark.parametrize("owner_res", [CONFIGMAPS, DEPLOYMENTS, WIDGETS], ids=["cm-owner", "deploy-owner", "cr-owner"])
@pytest.mark.parametrize("policy", ["Background", "Foreground", "Orphan"])
async def test_configmap_dependent_each_policy(owner_res, policy):
    client, ctx, _ = fake_context()
    discovery(client)
    gc = GarbageCollector(ctx)
    await gc.resync_monitors()
    owner = client.seed(owner_res, owner_of(owner_res))
    client.seed(CONFIGMAPS, cm("dep", owners=[ref(owner_res, owner, block=True)]))
    client.seed(CONFIGMAPS, cm("other"))
    await settle(gc)
    assert {c["metadata"]["name"] for c in client.all(CONFIGMAPS)} >= {"dep", "other"}
    await client.delete(owner_res, "owner", "default", propagation_policy=policy)
    await settle(gc)
    names = {c["metadata"]["name"] for c in client.all(CONFIGMAPS)}
    assert client.all(owner_res) == [] if owner_res != CONFIGMAPS else "owner" not in names
    if policy == "Orphan":
        assert "dep" in names
        assert not client.stored(CONFIGMAPS, "dep", "default")["metadata"].get("ownerReferences")
    else:
        assert "dep" not in names
    assert "other" in names
    if policy == "Foreground":
        # the dependent went before the owner's finalizer did
        deletes = [a for a in client.actions("delete") if a.name == "dep"]
        fin = [a for a in client.actions("patch", owner_res.plural) if a.name == "owner"]
        assert deletes and fin and client.actions().index(deletes[0]) < client.actions().index(fin[-1])


async def test_foreground_waits_for_a_blocking_dependent_held_by_a_finalizer():
    client, ctx, _ = fake_context()
    gc = GarbageCollector(ctx)
    owner = client.seed(CONFIGMAPS, cm("owner"))
    dep = cm("dep", owners=[ref(CONFIGMAPS, owner, block=True)])
    dep["metadata"]["finalizers"] = ["example.com/hold"]
    client.seed(CONFIGMAPS, dep)
    await client.delete(CONFIGMAPS, "owner", "default", propagation_policy="Foreground")
    await settle(gc)
    o = client.stored(CONFIGMAPS, "owner", "default")
    assert o["metadata"]["finalizers"] == ["foregroundDeletion"]          # still waiting
    assert client.stored(CONFIGMAPS, "dep", "default")["metadata"].get("deletionTimestamp")
    await client.patch(CONFIGMAPS, "dep", {"metadata": {"finalizers": None}}, "default")
    await settle(gc)
    assert client.all(CONFIGMAPS) == []


async def test_non_blocking_dependent_does_not_hold_foreground_owner():
    client, ctx, _ = fake_context()
    gc = GarbageCollector(ctx)
    owner = client.seed(CONFIGMAPS, cm("owner"))
    dep = cm("dep", owners=[ref(CONFIGMAPS, owner)])
    dep["metadata"]["finalizers"] = ["example.com/hold"]
    client.seed(CONFIGMAPS, dep)
    await client.delete(CONFIGMAPS, "owner", "default", propagation_policy="Foreground")
    await settle(gc)
    assert [c["metadata"]["name"] for c in client.all(CONFIGMAPS)] == ["dep"]


@pytest.mark.parametrize("case", ["never-existed", "uid-mismatch"])
async def test_dangling_owner_collects_dependent(case):
    client, ctx, _ = fake_context()
    gc = GarbageCollector(ctx)
    if case == "uid-mismatch":
        client.seed(CONFIGMAPS, cm("owner"))   # same name, another uid
    client.seed(CONFIGMAPS, cm("dep", owners=[{"apiVersion": "v1", "kind": "ConfigMap", "name": "owner",
                                               "uid": "0000-gone"}]))
    await settle(gc)
    names = [c["metadata"]["name"] for c in client.all(CONFIGMAPS)]
    assert "dep" not in names
    assert ("owner" in names) == (case == "uid-mismatch")
    d = [a for a in client.actions("delete", "configmaps") if a.name == "dep"][0]
    assert d.options["propagationPolicy"] == "Background"
    assert d.options["preconditions"]["uid"]


async def test_uid_mismatch_with_a_live_owner_keeps_dependent_and_drops_the_ref():
    client, ctx, _ = fake_context()
    gc = GarbageCollector(ctx)
    live = client.seed(DEPLOYMENTS, owner_of(DEPLOYMENTS, "live"))
    client.seed(CONFIGMAPS, cm("owner"))
    client.seed(CONFIGMAPS, cm("dep", owners=[
        ref(DEPLOYMENTS, live), {"apiVersion": "v1", "kind": "ConfigMap", "name": "owner", "uid": "stale"}]))
    await settle(gc)
    dep = client.stored(CONFIGMAPS, "dep", "default")
    assert [r["name"] for r in dep["metadata"]["ownerReferences"]] == ["live"]


async def test_cross_namespace_owner_event_and_collection():
    client, ctx, events = fake_context()
    gc = GarbageCollector(ctx)
    owner = client.seed(CONFIGMAPS, cm("owner", "a"))
    client.seed(CONFIGMAPS, cm("dep", "b", owners=[ref(CONFIGMAPS, owner)]))
    await settle(gc)
    uid = owner["metadata"]["uid"]
    assert [(e.component, e.name, e.type, e.reason, e.message) for e in events] == [
        ("garbage-collector-controller", "dep", "Warning", "OwnerRefInvalidNamespace",
         f'ownerRef [v1/ConfigMap, namespace: b, name: owner, uid: {uid}] does not exist in namespace "b"')]
    # looked up in the dependent's namespace, the owner is absent: the dependent is collected
    assert [(c["metadata"]["namespace"], c["metadata"]["name"]) for c in client.all(CONFIGMAPS)] == [("a", "owner")]


async def test_cross_namespace_child_seen_before_parent():
    client, ctx, events = fake_context()
    gc = GarbageCollector(ctx)
    fin = cm("dep", "b", owners=[{"apiVersion": "v1", "kind": "ConfigMap", "name": "owner", "uid": "u-1"}])
    fin["metadata"]["finalizers"] = ["example.com/hold"]   # stays while we look
    client.seed(CONFIGMAPS, fin)
    await settle(gc)
    assert events == []                          # its owner is not observed yet
    owner = cm("owner", "a")
    owner["metadata"]["uid"] = "u-1"
    client.seed(CONFIGMAPS, owner)               # the owner, seen later, is in another namespace
    assert [(e.name, e.reason) for e in events] == [("dep", "OwnerRefInvalidNamespace")]
    await settle(gc)
    assert client.stored(CONFIGMAPS, "dep", "b")["metadata"].get("deletionTimestamp")


async def test_cluster_scoped_dependent_with_namespaced_owner_is_left_alone():
    client, ctx, events = fake_context()
    gc = GarbageCollector(ctx)
    owner = client.seed(CONFIGMAPS, cm("owner", "a"))
    client.seed(CLUSTERROLES, {"apiVersion": "rbac.authorization.k8s.io/v1", "kind": "ClusterRole",
                               "metadata": {"name": "cr", "ownerReferences": [ref(CONFIGMAPS, owner)]}})
    await settle(gc)
    assert [e.reason for e in events] == ["OwnerRefInvalidNamespace"]
    assert [c["metadata"]["name"] for c in client.all(CLUSTERROLES)] == ["cr"]
    assert not client.actions("delete", "clusterroles")


async def test_owner_kind_not_served_is_never_collected():
    client, ctx, _ = fake_context()
    gc = GarbageCollector(ctx)
    client.seed(CONFIGMAPS, cm("dep", owners=[{"apiVersion": "nowhere.io/v1", "kind": "Ghost", "name": "g",
                                               "uid": "u-ghost"}]))
    key = f"|configmaps|default|dep|{client.all(CONFIGMAPS)[0]['metadata']['uid']}"
    with pytest.raises(RestMappingError, match="unable to get REST mapping for Ghost/nowhere.io/v1"):
        await gc.sync(key)
    assert [c["metadata"]["name"] for c in client.all(CONFIGMAPS)] == ["dep"]


async def test_crd_added_later_is_monitored_and_removed_monitor_stops():
    client, ctx, _ = fake_context()
    state = discovery(client, widgets=False)
    gc = GarbageCollector(ctx)
    await gc.resync_monitors()
    assert WIDGETS not in gc.monitored
    w = client.seed(WIDGETS, owner_of(WIDGETS, "w"))   # the CRD appeared; nothing watches it yet
    client.seed(CONFIGMAPS, cm("dep", owners=[ref(WIDGETS, w, block=True)]))
    state["widgets"] = True
    await gc.resync_monitors()
    assert WIDGETS in gc.monitored
    assert [(r.plural, o["metadata"]["name"]) for r, o in gc.dependents(w["metadata"]["uid"])] == [
        ("configmaps", "dep")]
    await settle(gc)
    assert [c["metadata"]["name"] for c in client.all(CONFIGMAPS)] == ["dep"]   # its owner is solid
    await client.delete(WIDGETS, "w", "default")
    await settle(gc)
    assert client.all(CONFIGMAPS) == []
    state["widgets"] = False
    await gc.resync_monitors()
    assert WIDGETS not in gc.monitored and CONFIGMAPS in gc.monitored


async def test_run_syncs_monitors_scans_and_collects():
    import asyncio

    client, ctx, _ = fake_context()
    client.seed(CONFIGMAPS, cm("dep", owners=[{"apiVersion": "v1", "kind": "ConfigMap", "name": "x", "uid": "u-x"}]))
    requested: list[Resource] = []

    def metadata_informer(res):
        requested.append(res)
        return client.informers.informer(res)   # the fake informers, fed by the client
    ctx.metadata_informer = metadata_informer
    pods = ctx.informers.informer(get("pods"))   # as another controller's shared informer
    gc = GarbageCollector(ctx)
    assert gc.monitored == []                    # real informers: monitors are built in run()
    task = asyncio.create_task(gc.run())
    try:
        await client.wait_for(lambda: client.all(CONFIGMAPS) == [])
    finally:
        task.cancel()
        await asyncio.gather(task, return_exceptions=True)
    # pods and configmaps (seeded) had informers already: shared; the others metadata-only
    assert get("pods") not in requested and CONFIGMAPS not in requested and get("secrets") in requested
    assert pods is client.informers.informer(get("pods"))


def test_metadata_only_keeps_type_and_metadata():
    from controlplane.client.informer import metadata_only

    obj = {"apiVersion": "v1", "kind": "ConfigMap", "data": {"big": "x" * 100},
           "metadata": {"name": "a", "uid": "u", "managedFields": [{}], "ownerReferences": [{"uid": "o"}]}}
    assert metadata_only(obj) == {"apiVersion": "v1", "kind": "ConfigMap",
                                  "metadata": {"name": "a", "uid": "u", "ownerReferences": [{"uid": "o"}]}}
    assert "managedFields" in obj["metadata"]   # the input is left alone


async def test_crd_event_syncs_discovery_at_once(monkeypatch):
    """A CRD's events make the collector re-read discovery without waiting for the 30 s resync,
    so the children of a just-created kind's object go as soon as it is deleted."""
    import components.controller_manager.garbagecollector as gcmod
    monkeypatch.setattr(gcmod, "CRD_RESYNC_DELAY_SECONDS", 0.0)
    client, ctx, _ = fake_context()
    state = discovery(client, widgets=False)
    gc = GarbageCollector(ctx)
    await gc.resync_monitors()
    gc._running = True   # as run() sets it, without its workers
    assert WIDGETS not in gc.monitored
    state["widgets"] = True
    crds = get("customresourcedefinitions", "apiextensions.k8s.io")
    client.seed(crds, {"apiVersion": "apiextensions.k8s.io/v1", "kind": "CustomResourceDefinition",
                       "metadata": {"name": "widgets.example.com"}, "spec": {}})
    await settle(gc)
    assert gc._resync_soon is not None
    await gc._resync_soon
    assert WIDGETS in gc.monitored


async def test_dependents_of_a_deleted_owner_are_deleted_on_their_cached_copies_without_reads():
    client, ctx, _ = fake_context()
    gc = GarbageCollector(ctx)
    owner = client.seed(CONFIGMAPS, cm("owner"))
    deps = [client.seed(CONFIGMAPS, cm(f"dep-{i}", owners=[ref(CONFIGMAPS, owner)])) for i in range(3)]
    await client.delete(CONFIGMAPS, "owner", "default", propagation_policy="Background")
    await settle(gc)
    assert client.all(CONFIGMAPS) == []
    assert [a.name for a in client.actions("get", "configmaps")] == []   # owner: absent-owner cache
    deletes = {a.name: a.options["preconditions"] for a in client.actions("delete", "configmaps") if a.name != "owner"}
    for d in deps:
        md = d["metadata"]
        assert deletes[md["name"]] == {"uid": md["uid"], "resourceVersion": md["resourceVersion"]}


async def test_stale_cached_copy_is_decided_again_on_a_live_read():
    client, ctx, _ = fake_context()
    gc = GarbageCollector(ctx)
    live = client.seed(DEPLOYMENTS, owner_of(DEPLOYMENTS, "live"))
    gone = {"apiVersion": "v1", "kind": "ConfigMap", "name": "gone", "uid": "0000-gone"}
    client.seed(CONFIGMAPS, cm("dep", owners=[gone]))
    inf = client.informers.informer(CONFIGMAPS)
    stale = dict(inf.store["default/dep"])
    # the object gains a live owner; the monitor's copy still shows only the dangling one
    await client.patch(CONFIGMAPS, "dep", {"metadata": {"ownerReferences": [gone, ref(DEPLOYMENTS, live)]}},
                       "default")
    inf.store["default/dep"] = stale
    gc.queue.add(f"|configmaps|default|dep|{stale['metadata']['uid']}")
    await settle(gc)
    dep = client.stored(CONFIGMAPS, "dep", "default")
    assert [r["name"] for r in dep["metadata"]["ownerReferences"]] == ["live"]
    assert [a.name for a in client.actions("get", "configmaps") if a.name == "dep"] == ["dep"]   # after the 409
    assert len(client.actions("delete", "configmaps")) == 1                  # refused: stale resourceVersion
