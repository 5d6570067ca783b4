"""The namespace controller (``pkg/controller/namespace/deletion``) on the fake API: one
deletecollection per resource, the deletion conditions with Kubernetes' reasons and messages,
finalizers holding a namespace, and the re-check when a pod in it goes."""

from __future__ import annotations

from components.controller_manager.namespace import (
    CONDITION_TYPES,
    ContentLeft,
    NamespaceController,
    apply_conditions,
    deletion_conditions,
)
from components.controller_manager.testing import fake_context, settle
from controlplane.api.resources import NAMESPACES, PODS, get

CONFIGMAPS = get("configmaps")


def terminating_namespace(client, name="team"):
    client.seed(NAMESPACES, {"metadata": {"name": name}, "spec": {"finalizers": ["kubernetes"]},
                             "status": {"phase": "Active"}})


async def mark_deleted(client, name="team"):
    ns = client.stored(NAMESPACES, name)
    ns["metadata"]["deletionTimestamp"] = "2024-01-01T00:00:00Z"
    await client.update(NAMESPACES, ns)


def conditions(client, name="team"):
    return {c["type"]: c for c in (client.stored(NAMESPACES, name).get("status") or {}).get("conditions") or []}


async def test_empty_namespace_is_finalized_in_one_sync_with_its_phase_terminating():
    client, ctx, _ = fake_context()
    nsc = NamespaceController(ctx)
    terminating_namespace(client)
    client.seed(CONFIGMAPS, {"metadata": {"name": "kube-root-ca.crt", "namespace": "team"}})
    await mark_deleted(client)
    await settle(nsc)
    assert client.all(NAMESPACES) == [] and client.all(CONFIGMAPS) == []
    status_writes = [a for a in client.actions("update", "namespaces") if a.subresource == "status"]
    assert status_writes and status_writes[0].object["status"]["phase"] == "Terminating"
    written = {c["type"]: c for c in status_writes[-1].object["status"]["conditions"]}
    assert list(written) == list(CONDITION_TYPES)
    assert written["NamespaceContentRemaining"]["status"] == "False"
    assert written["NamespaceContentRemaining"]["reason"] == "ContentRemoved"


async def test_object_held_by_a_finalizer_keeps_the_namespace_with_kubernetes_conditions():
    client, ctx, _ = fake_context()
    nsc = NamespaceController(ctx)
    terminating_namespace(client)
    client.seed(CONFIGMAPS, {"metadata": {"name": "held", "namespace": "team", "finalizers": ["example.com/keep"]}})
    await mark_deleted(client)
    await settle(nsc)
    assert client.stored(NAMESPACES, "team")["spec"]["finalizers"] == ["kubernetes"]
    got = conditions(client)
    assert got["NamespaceContentRemaining"]["status"] == "True"
    assert got["NamespaceContentRemaining"]["reason"] == "SomeResourcesRemain"
    assert got["NamespaceContentRemaining"]["message"] == "Some resources are remaining: configmaps. has 1 resource instances"
    assert got["NamespaceFinalizersRemaining"]["message"] == \
        "Some finalizers are remaining: example.com/keep in 1 resource instances"
    assert got["NamespaceDeletionContentFailure"]["status"] == "False"
    # the owner of the finalizer lets go; the re-check finalizes the namespace
    cm = client.stored(CONFIGMAPS, "held", "team")
    cm["metadata"]["finalizers"] = []
    await client.update(CONFIGMAPS, cm)
    assert client.all(CONFIGMAPS) == []
    nsc.enqueue("team")
    await settle(nsc)
    assert client.all(NAMESPACES) == []


async def test_a_deleted_pod_in_a_terminating_namespace_enqueues_it_at_once():
    client, ctx, _ = fake_context()
    nsc = NamespaceController(ctx)
    terminating_namespace(client)
    client.seed(PODS, {"metadata": {"name": "p", "namespace": "team", "finalizers": ["batch.kubernetes.io/job-tracking"]},
                       "spec": {"terminationGracePeriodSeconds": 30, "containers": [{"name": "c", "image": "x"}]},
                       "status": {"phase": "Running"}})
    await mark_deleted(client)
    await settle(nsc)
    assert client.all(NAMESPACES)
    assert "pods. has 1 resource instances" in conditions(client)["NamespaceContentRemaining"]["message"]
    assert len(nsc.queue) == 0
    pod = client.stored(PODS, "p", "team")
    pod["metadata"]["finalizers"] = []
    await client.update(PODS, pod)      # the job controller lets go: the pod is deleted
    assert len(nsc.queue) == 1          # the pods informer's delete event, no timer
    await settle(nsc)
    assert client.all(NAMESPACES) == []


async def test_pods_estimate_is_the_largest_grace_period_until_it_has_passed():
    client, ctx, _ = fake_context()
    nsc = NamespaceController(ctx)
    for name, grace, phase in (("a", 30, "Running"), ("b", 60, "Succeeded"), ("c", 10, "Pending")):
        client.seed(PODS, {"metadata": {"name": name, "namespace": "team"},
                           "spec": {"terminationGracePeriodSeconds": grace}, "status": {"phase": phase}})
    now = ctx.clock()
    assert nsc._pods_estimate("team", now) == 30        # b is terminal: not counted
    assert nsc._pods_estimate("team", now - 31) == 0    # that long has passed since the deletion
    assert nsc._pods_estimate("other", now) == 0


def test_conditions_keep_their_transition_time_unless_the_status_flips():
    ns: dict = {}
    assert apply_conditions(ns, deletion_conditions(ContentLeft()))
    before = {c["type"]: c["lastTransitionTime"] for c in ns["status"]["conditions"]}
    assert not apply_conditions(ns, deletion_conditions(ContentLeft()))
    left = ContentLeft(errors=["pods.: boom"])
    assert apply_conditions(ns, deletion_conditions(left))
    failure = next(c for c in ns["status"]["conditions"] if c["type"] == "NamespaceDeletionContentFailure")
    assert failure["status"] == "True" and failure["reason"] == "ContentDeletionFailed"
    assert failure["message"] == "Failed to delete all resource types, 1 remaining: pods.: boom"
    assert len(ns["status"]["conditions"]) == len(before)
