"""Garbage collector, namespace controller and the manager wiring, on the fake API."""

from __future__ import annotations

import pytest

from components.controller_manager.deployment import DeploymentController
from components.controller_manager.garbagecollector import GarbageCollector
from components.controller_manager.manager import CONTROLLERS, ControllerManager, select_controllers
from components.controller_manager.namespace import NamespaceController
from components.controller_manager.replicaset import REPLICASET_KIND, ReplicaController
from components.controller_manager.testing import fake_context, settle
from controlplane.api.resources import DEPLOYMENTS, NAMESPACES, PODS, REPLICASETS
from controlplane.client.testing import FakeClient, FakeRecorder, FakeTracer


def deployment(replicas=2):
    return {"apiVersion": "apps/v1", "kind": "Deployment",
            "metadata": {"name": "web", "namespace": "default"},
            "spec": {"replicas": replicas, "selector": {"matchLabels": {"app": "web"}},
                     "revisionHistoryLimit": 10, "progressDeadlineSeconds": 600,
                     "template": {"metadata": {"labels": {"app": "web"}},
                                  "spec": {"containers": [{"name": "c", "image": "nginx"}]}}}}


def setup():
    client, ctx, _ = fake_context()
    gc = GarbageCollector(ctx)
    return client, ctx, DeploymentController(ctx), ReplicaController(ctx, REPLICASET_KIND), gc


async def test_background_cascade_deployment_rs_pods():
    client, ctx, dc, rc, gc = setup()
    client.seed(DEPLOYMENTS, deployment())
    await settle(dc, rc, gc)
    assert len(client.all(REPLICASETS)) == 1 and len(client.all(PODS)) == 2
    await client.delete(DEPLOYMENTS, "web", "default", propagation_policy="Background")
    await settle(dc, rc, gc)
    assert client.all(REPLICASETS) == [] and client.all(PODS) == []
    assert any(a.options.get("propagationPolicy") == "Background" for a in client.actions("delete", "replicasets"))


async def test_dependent_with_live_owner_only_loses_dangling_ref():
    client, ctx, dc, rc, gc = setup()
    a = client.seed(REPLICASETS, {"metadata": {"name": "a", "namespace": "default"},
                                  "spec": {"replicas": 0, "selector": {"matchLabels": {"x": "a"}},
                                           "template": {"metadata": {"labels": {"x": "a"}}}}})
    pod = {"metadata": {"name": "p", "namespace": "default", "ownerReferences": [
        {"apiVersion": "apps/v1", "kind": "ReplicaSet", "name": "a", "uid": a["metadata"]["uid"]},
        {"apiVersion": "apps/v1", "kind": "ReplicaSet", "name": "gone", "uid": "no-such-uid"}]},
        "spec": {}}
    client.seed(PODS, pod)
    await settle(gc)
    pods = client.all(PODS)
    assert len(pods) == 1
    assert [r["name"] for r in pods[0]["metadata"]["ownerReferences"]] == ["a"]


async def test_foreground_and_orphan():
    client, ctx, dc, rc, gc = setup()
    client.seed(DEPLOYMENTS, deployment())
    await settle(dc, rc, gc)
    # orphan: the ReplicaSet survives without its ownerReference
    await client.delete(DEPLOYMENTS, "web", "default", propagation_policy="Orphan")
    await settle(gc)
    assert client.all(DEPLOYMENTS) == []
    rss = client.all(REPLICASETS)
    assert len(rss) == 1 and not rss[0]["metadata"].get("ownerReferences")
    # foreground on the ReplicaSet: pods go first, then the RS itself
    name = rss[0]["metadata"]["name"]
    await client.delete(REPLICASETS, name, "default", propagation_policy="Foreground")
    await settle(rc, gc)
    assert client.all(PODS) == [] and client.all(REPLICASETS) == []


async def test_namespace_controller_empties_then_finalizes():
    client, ctx, dc, rc, gc = setup()
    nsc = NamespaceController(ctx)
    client.seed(NAMESPACES, {"metadata": {"name": "team", "finalizers": []},
                             "spec": {"finalizers": ["kubernetes"]}})
    d = deployment()
    d["metadata"]["namespace"] = "team"
    client.seed(DEPLOYMENTS, d)
    await settle(dc, rc, gc)
    assert len(client.all(PODS)) == 2
    ns = client.all(NAMESPACES)[0]
    ns["metadata"]["deletionTimestamp"] = "2024-01-01T00:00:00Z"
    await client.update(NAMESPACES, ns)
    await settle(nsc)
    assert client.all(DEPLOYMENTS) == [] and client.all(PODS) == []
    # everything went at once (deletecollection, background), so the same sync finalized it
    assert client.all(NAMESPACES) == []
    assert any(a.subresource == "finalize" for a in client.actions("update"))
    assert {a.resource for a in client.actions("deletecollection")} >= {"deployments", "replicasets", "pods"}


#: the controllers kube-controller-manager v1.32 runs by default that we build (more join as they land)
DEFAULT_ON = ("deployment", "replicaset", "replicationcontroller", "garbagecollector", "namespace",
              "nodelifecycle", "tainteviction", "podgc", "serviceaccount", "endpoint", "resourcequota",
              "disruption", "root-ca-cert-publisher", "statefulset", "cronjob", "job",
              "ttl-after-finished", "daemonset", "endpointslice", "clusterrole-aggregation")


def test_select_controllers():
    # ``*``: every registered controller, in CONTROLLERS (start) order
    assert select_controllers("*") == list(CONTROLLERS)
    assert set(DEFAULT_ON) <= set(CONTROLLERS)
    # ``-name`` wins over ``*``
    off = ",".join(f"-{n}" for n in CONTROLLERS if n not in ("deployment", "replicaset", "replicationcontroller"))
    assert select_controllers(f"*,{off}") == ["deployment", "replicaset", "replicationcontroller"]
    assert select_controllers("replicaset") == ["replicaset"]
    with pytest.raises(ValueError, match="unknown controller 'nope'"):
        select_controllers("*,nope")


async def test_manager_records_step1_once_all_informers_watch():
    client = FakeClient()
    tracer = FakeTracer()
    mgr = ControllerManager(client, ["deployment", "replicaset", "replicationcontroller"],
                            informers=client.informers, tracer=tracer,
                            recorder_factory=lambda c: FakeRecorder(c))
    client.informers.start()
    ones = [r for r in tracer.records if r[0] == 1]
    assert len(ones) == 1
    assert ones[0][1] == ("controller-manager informers watching deployments, replicasets, pods, "
                          "replicationcontrollers")
    assert len(mgr.controllers) == 3


async def drain(queue):
    keys = []
    while len(queue):
        k = await queue.get()
        queue.done(k)
        keys.append(k)
    return keys


async def test_graph_queries_follow_owner_reference_changes():
    """The collector's graph queries come from the informers' uid and owner-uid
    indexes (the graph builder's uidToNode, pkg/controller/garbagecollector/graph_builder.go):
    an object is queued as maybe-dangling only when an owner uid is in no watched
    cache, and dependents() follows ownerReferences as they change and go."""
    client, ctx, _ = fake_context()
    gc = GarbageCollector(ctx)
    spec = {"replicas": 0, "selector": {"matchLabels": {"x": "a"}}, "template": {"metadata": {"labels": {"x": "a"}}}}
    a = client.seed(REPLICASETS, {"metadata": {"name": "a", "namespace": "default"}, "spec": spec})
    b = client.seed(REPLICASETS, {"metadata": {"name": "b", "namespace": "default"}, "spec": spec})

    def ref(o):
        return {"apiVersion": "apps/v1", "kind": "ReplicaSet", "name": o["metadata"]["name"],
                "uid": o["metadata"]["uid"]}
    client.seed(PODS, {"metadata": {"name": "p", "namespace": "default", "ownerReferences": [ref(a)]}, "spec": {}})
    assert await drain(gc.queue) == []                       # its owner is cached
    q = client.seed(PODS, {"metadata": {"name": "q", "namespace": "default", "ownerReferences": [
        ref(a), {"apiVersion": "apps/v1", "kind": "ReplicaSet", "name": "gone", "uid": "no-such-uid"}]},
        "spec": {}})
    assert await drain(gc.queue) == [f"|pods|default|q|{q['metadata']['uid']}"]
    assert [o["metadata"]["name"] for _, o in gc.dependents(a["metadata"]["uid"])] == ["p", "q"]
    await client.patch(PODS, "p", {"metadata": {"ownerReferences": [ref(b)]}}, "default")
    assert await drain(gc.queue) == []
    assert [o["metadata"]["name"] for _, o in gc.dependents(a["metadata"]["uid"])] == ["q"]
    assert [(r.plural, o["metadata"]["name"]) for r, o in gc.dependents(b["metadata"]["uid"])] == [("pods", "p")]
    await client.delete(REPLICASETS, "b", "default")          # p's only owner goes: p is queued
    assert await drain(gc.queue) == [f"|pods|default|p|{client.all(PODS)[0]['metadata']['uid']}"]
    await client.delete(PODS, "q", "default")
    assert gc.dependents(a["metadata"]["uid"]) == [] and gc.dependents("no-such-uid") == []


async def test_namespace_controller_deletes_custom_resources_discovery_lists():
    """Custom resources are not in the controller-manager's registry: discovery names them."""
    from controlplane.api.resources import Resource

    client, ctx, dc, rc, gc = setup()
    nsc = NamespaceController(ctx)
    verbs = ("delete", "deletecollection", "get", "list", "patch", "create", "update", "watch")
    widgets = Resource("example.com", "v1", "widgets", "widget", "Widget", True, verbs=verbs)
    answers = {"/apis": {"kind": "APIGroupList", "groups": [
                   {"name": "apps", "preferredVersion": {"groupVersion": "apps/v1"}},
                   {"name": "example.com", "preferredVersion": {"groupVersion": "example.com/v1"}}]},
               "/apis/example.com/v1": {"kind": "APIResourceList", "resources": [
                   {"name": "widgets", "singularName": "widget", "kind": "Widget", "namespaced": True,
                    "verbs": list(verbs)},
                   {"name": "widgets/status", "namespaced": True, "kind": "Widget", "verbs": ["get"]}]}}
    client.prepend_reactor("request", "*", lambda a: (a.path in answers, answers.get(a.path)))
    client.seed(NAMESPACES, {"metadata": {"name": "team"}, "spec": {"finalizers": ["kubernetes"]}})
    client.seed(widgets, {"apiVersion": "example.com/v1", "kind": "Widget",
                          "metadata": {"name": "w", "namespace": "team"}})
    ns = client.all(NAMESPACES)[0]
    ns["metadata"]["deletionTimestamp"] = "2024-01-01T00:00:00Z"
    await client.update(NAMESPACES, ns)
    await settle(nsc)
    assert client.all(widgets) == []
    assert [a.path for a in client.actions("request")][:2] == ["/apis", "/apis/example.com/v1"]


def test_controllers_flag_help_names_every_controller():
    from click.testing import CliRunner

    from components.controller_manager.cli import command
    out = CliRunner().invoke(command, ["--help"], terminal_width=400).output
    missing = [n for n in CONTROLLERS if n not in out]
    assert missing == []
