"""The volume plugins on the fake API client's informers. VolumeBinding: PreFilter's claim
checks, Filter's node verdicts with kube-scheduler's reasons, Reserve holding a chosen volume,
and PreBind's writes (claimRef on a chosen volume, selected-node on a claim to provision)
followed by its wait for the PV controller's binding. VolumeZone's zone labels and
VolumeRestrictions' ReadWriteOncePod conflicts (with preemption's dry run)."""

from __future__ import annotations

import asyncio
import copy
from types import SimpleNamespace

import pytest

from components.scheduler.cache import NodeInfo, Snapshot
from components.scheduler.framework import ERROR, SKIP, UNSCHEDULABLE, UNSCHEDULABLE_AND_UNRESOLVABLE, CycleState
from components.scheduler.plugins import DEFAULT_PLUGINS
from components.scheduler.plugins.volumebinding import (
    ERR_BIND_CONFLICT,
    ERR_NODE_CONFLICT,
    ERR_PV_NOT_EXIST,
    ERR_UNBOUND_IMMEDIATE,
    PVCS,
    PVS,
    VolumeBinding,
)
from components.scheduler.plugins.volumerestrictions import ERR_RWOP_CONFLICT, VolumeRestrictions
from components.scheduler.plugins.volumezone import ERR_REASON_CONFLICT, VolumeZone
from components.scheduler.podinfo import PodInfo
from controlplane import volume as vol
from controlplane.api.resources import get
from controlplane.client.testing import FakeClient

SCS = get("storageclasses", "storage.k8s.io")
ZONE = "topology.kubernetes.io/zone"


def node(name, zone="a"):
    return {"metadata": {"name": name, "labels": {"kubernetes.io/hostname": name, ZONE: zone}},
            "status": {"allocatable": {"cpu": "4", "memory": "8Gi", "pods": "110"}}}


def pod(*claims, name="p"):
    return {"metadata": {"name": name, "namespace": "default", "uid": "pod-uid"},
            "spec": {"containers": [{"name": "c", "image": "x"}],
                     "volumes": [{"name": f"v{i}", "persistentVolumeClaim": {"claimName": c}}
                                 for i, c in enumerate(claims)]}}


def claim(name, cls="wffc", size="1Gi", bound_to=None):
    c = {"apiVersion": "v1", "kind": "PersistentVolumeClaim",
         "metadata": {"name": name, "namespace": "default"},
         "spec": {"accessModes": ["ReadWriteOnce"], "resources": {"requests": {"storage": size}},
                  "storageClassName": cls}, "status": {"phase": "Pending"}}
    if bound_to:
        c["spec"]["volumeName"] = bound_to
        c["metadata"]["annotations"] = {vol.ANN_BIND_COMPLETED: "yes"}
        c["status"]["phase"] = "Bound"
    return c


def volume(name, cls="wffc", size="5Gi", zone=None, phase="Available"):
    v = {"apiVersion": "v1", "kind": "PersistentVolume", "metadata": {"name": name},
         "spec": {"capacity": {"storage": size}, "accessModes": ["ReadWriteOnce"], "storageClassName": cls,
                  "hostPath": {"path": "/x"}}, "status": {"phase": phase}}
    if zone:
        v["spec"]["nodeAffinity"] = {"required": {"nodeSelectorTerms": [{"matchExpressions": [
            {"key": ZONE, "operator": "In", "values": [zone]}]}]}}
    return v


def sc(name, provisioner="example.com/disk", mode="WaitForFirstConsumer", topologies=None):
    obj = {"apiVersion": "storage.k8s.io/v1", "kind": "StorageClass", "metadata": {"name": name},
           "provisioner": provisioner, "volumeBindingMode": mode}
    if topologies:
        obj["allowedTopologies"] = [{"matchLabelExpressions": [{"key": ZONE, "values": topologies}]}]
    return obj


def setup(*objs):
    client = FakeClient()
    for o in objs:
        client.seed({"PersistentVolumeClaim": PVCS, "PersistentVolume": PVS, "StorageClass": SCS}[o["kind"]], o)
    listers = {r.plural: client.informers.informer(r) for r in (PVCS, PVS, SCS)}
    plugin = VolumeBinding(None, SimpleNamespace(client=client, listers=listers))
    return client, plugin


NODES = [NodeInfo(node("n-a", "a")), NodeInfo(node("n-b", "b"))]


def verdicts(plugin, p, nodes=NODES):
    state = CycleState()
    pi = PodInfo(p)
    st = plugin.pre_filter(state, pi, Snapshot(nodes, {n.name: n for n in nodes}))
    if st is not None:
        return state, ("prefilter", st.code, st.reasons)
    out = []
    for n in nodes:
        f = plugin.filter(state, pi, n)
        out.append(None if f is None else (f.code, f.reasons))
    return state, out


CLASSES = [sc("wffc"), sc("immediate", mode="Immediate"), sc("local", "kubernetes.io/no-provisioner"),
           sc("zonal", topologies=["b"])]


@pytest.mark.parametrize("objs, p, want", [
    ([], pod(), ("prefilter", SKIP, [])),
    ([], pod("missing"), ("prefilter", UNSCHEDULABLE_AND_UNRESOLVABLE, ['persistentvolumeclaim "missing" not found'])),
    ([claim("c", "immediate")], pod("c"), ("prefilter", UNSCHEDULABLE_AND_UNRESOLVABLE, [ERR_UNBOUND_IMMEDIATE])),
    ([claim("c", "")], pod("c"), ("prefilter", UNSCHEDULABLE_AND_UNRESOLVABLE, [ERR_UNBOUND_IMMEDIATE])),
    ([claim("c", bound_to="v"), volume("v", zone="a", phase="Bound")], pod("c"),
     [None, (UNSCHEDULABLE_AND_UNRESOLVABLE, [ERR_NODE_CONFLICT])]),
    ([claim("c", bound_to="gone")], pod("c"),
     [(UNSCHEDULABLE_AND_UNRESOLVABLE, [ERR_PV_NOT_EXIST])] * 2),
    ([claim("c")], pod("c"), [None, None]),
    ([claim("c", "local"), volume("v", "local", zone="b")], pod("c"),
     [(UNSCHEDULABLE_AND_UNRESOLVABLE, [ERR_BIND_CONFLICT]), None]),
    ([claim("c", "local"), volume("small", "local", size="500Mi")], pod("c"),
     [(UNSCHEDULABLE_AND_UNRESOLVABLE, [ERR_BIND_CONFLICT])] * 2),
    ([claim("c", "zonal")], pod("c"), [(UNSCHEDULABLE_AND_UNRESOLVABLE, [ERR_BIND_CONFLICT]), None]),
    ([claim("c1", "local"), claim("c2", "local"), volume("v", "local")], pod("c1", "c2"),
     [(UNSCHEDULABLE_AND_UNRESOLVABLE, [ERR_BIND_CONFLICT])] * 2),
], ids=["no claims: skipped", "claim missing", "unbound immediate claim", "unbound claim without class",
        "bound volume's node affinity", "bound to a missing volume", "wffc: provisionable anywhere",
        "wffc: static volume in one zone", "wffc: no volume big enough", "wffc: class topology",
        "one volume for two claims"])
def test_verdicts(objs, p, want):
    _client, plugin = setup(*CLASSES, *objs)
    _state, got = verdicts(plugin, p)
    assert got == want


def test_default_profile_has_the_volume_plugins_after_node_resources_fit():
    names = [n for n, _ in DEFAULT_PLUGINS]
    i = names.index("NodeResourcesFit")
    assert names[i + 1:i + 4] == ["VolumeRestrictions", "VolumeBinding", "VolumeZone"]


def with_plugin(cls, plugin):
    return cls(None, plugin.handle)


def zoned(v, zones):
    v["metadata"]["labels"] = {ZONE: zones}
    return v


@pytest.mark.parametrize("objs, p, want", [
    ([claim("c", bound_to="v"), zoned(volume("v", phase="Bound"), "b")], pod("c"),
     [(UNSCHEDULABLE_AND_UNRESOLVABLE, [ERR_REASON_CONFLICT]), None]),
    ([claim("c", bound_to="v"), zoned(volume("v", phase="Bound"), "a__b")], pod("c"), [None, None]),
    ([claim("c", bound_to="v"), volume("v", phase="Bound")], pod("c"), ("prefilter", SKIP, [])),
    ([claim("c")], pod("c"), ("prefilter", SKIP, [])),
    ([claim("c", "")], pod("c"), ("prefilter", UNSCHEDULABLE_AND_UNRESOLVABLE,
                                  ["PersistentVolumeClaim had no pv name and storageClass name"])),
], ids=["volume in another zone", "volume in several zones", "volume without zone", "unbound wffc claim",
        "unbound claim without class"])
def test_volume_zone(objs, p, want):
    _client, binding = setup(*CLASSES, *objs)
    _state, got = verdicts(with_plugin(VolumeZone, binding), p)
    assert got == want


def rwop_claim(name):
    c = claim(name, bound_to="v")
    c["spec"]["accessModes"] = ["ReadWriteOncePod"]
    return c


@pytest.mark.parametrize("claim_obj, user_on_node, want", [
    (rwop_claim("c"), True, [(UNSCHEDULABLE, [ERR_RWOP_CONFLICT])] * 2),
    (rwop_claim("c"), False, ("prefilter", SKIP, [])),
    (claim("c", bound_to="v"), True, ("prefilter", SKIP, [])),
], ids=["ReadWriteOncePod claim in use", "ReadWriteOncePod claim free", "ReadWriteOnce shared"])
def test_volume_restrictions(claim_obj, user_on_node, want):
    _client, binding = setup(*CLASSES, claim_obj)
    nodes = [NodeInfo(node("n-a", "a")), NodeInfo(node("n-b", "b"))]
    if user_on_node:
        user = pod("c", name="user")
        user["spec"]["nodeName"] = "n-a"
        nodes[0].add_pod(PodInfo(user))
    _state, got = verdicts(with_plugin(VolumeRestrictions, binding), pod("c"), nodes)
    assert got == want


def test_volume_restrictions_preemption_dry_run_removes_the_user():
    _client, binding = setup(*CLASSES, rwop_claim("c"))
    user = pod("c", name="user")
    user["spec"]["nodeName"] = "n-a"
    nodes = [NodeInfo(node("n-a", "a"))]
    nodes[0].add_pod(PodInfo(user))
    plugin = with_plugin(VolumeRestrictions, binding)
    state, got = verdicts(plugin, pod("c"), nodes)
    assert got == [(UNSCHEDULABLE, [ERR_RWOP_CONFLICT])]
    dry = state.clone()
    plugin.pre_filter_remove_pod(dry, PodInfo(pod("c")), PodInfo(user), nodes[0])
    assert plugin.filter(dry, PodInfo(pod("c")), nodes[0]) is None
    assert plugin.filter(state, PodInfo(pod("c")), nodes[0]) is not None


def test_reserved_volume_is_not_offered_to_another_pod():
    _client, plugin = setup(*CLASSES, claim("c1", "local"), claim("c2", "local"), volume("v", "local"))
    state, got = verdicts(plugin, pod("c1"))
    assert got == [None, None]
    plugin.reserve(state, PodInfo(pod("c1")), "n-a")
    assert plugin.assumed == {"v": "default/c1"}
    _state2, got2 = verdicts(plugin, pod("c2", name="q"))
    assert got2 == [(UNSCHEDULABLE_AND_UNRESOLVABLE, [ERR_BIND_CONFLICT])] * 2
    plugin.unreserve(state, PodInfo(pod("c1")), "n-a")
    assert plugin.assumed == {}


async def finish_binding(client, name, volume_name):
    """What the PV controller does once it sees the scheduler's write."""
    cur = copy.deepcopy(client.stored(PVCS, name, "default"))
    cur["spec"]["volumeName"] = volume_name
    cur["metadata"].setdefault("annotations", {})[vol.ANN_BIND_COMPLETED] = "yes"
    await client.update(PVCS, cur)


def start_prebind(objs, p, node_name):
    """Filter, Reserve on ``node_name`` and PreBind in a task: ``(client, plugin, task)``."""
    client, plugin = setup(*CLASSES, *objs)
    state, _ = verdicts(plugin, p)
    plugin.reserve(state, PodInfo(p), node_name)
    return client, plugin, asyncio.create_task(plugin.pre_bind(state, PodInfo(p), node_name))


def selected(client, name):
    return vol.ANN_SELECTED_NODE in vol.annotations_of(client.stored(PVCS, name, "default"))


async def test_prebind_provisions_through_selected_node_then_waits_for_the_binding():
    client, plugin, task = start_prebind([claim("www")], pod("www"), "n-b")
    await client.wait_for(lambda: selected(client, "www"))
    assert vol.annotations_of(client.stored(PVCS, "www", "default"))[vol.ANN_SELECTED_NODE] == "n-b"
    assert not task.done()
    await finish_binding(client, "www", "pvc-x")
    assert await task is None


async def test_prebind_writes_claim_ref_on_the_chosen_volume():
    client, plugin, task = start_prebind([claim("c", "local"), volume("v", "local", zone="a")], pod("c"), "n-a")
    await client.wait_for(lambda: (client.stored(PVS, "v")["spec"].get("claimRef") or {}).get("name") == "c")
    v = client.stored(PVS, "v")
    assert v["metadata"]["annotations"] == {vol.ANN_BOUND_BY_CONTROLLER: "yes"}
    assert v["spec"]["claimRef"]["namespace"] == "default"
    await finish_binding(client, "c", "v")
    assert await task is None
    assert plugin.assumed == {}


async def test_prebind_fails_when_provisioning_gave_up():
    client, plugin, task = start_prebind([claim("www")], pod("www"), "n-a")
    await client.wait_for(lambda: selected(client, "www"))
    cur = copy.deepcopy(client.stored(PVCS, "www", "default"))
    del cur["metadata"]["annotations"][vol.ANN_SELECTED_NODE]
    await client.update(PVCS, cur)
    st = await task
    assert st.code == ERROR and st.reasons == ['binding volumes: provisioning failed for PVC "www"']
