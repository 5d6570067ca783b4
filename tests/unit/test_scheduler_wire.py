"""What the scheduler sends to the apiserver (fake client, no HTTP): the Binding,
the PodScheduled=False status patch, the result annotations, and requeue on a
failed bind."""

from __future__ import annotations

import asyncio
import json
import random

from components.scheduler.config import SchedulerConfig
from components.scheduler.explain import SELECTED_NODE
from components.scheduler.scheduler import Scheduler
from controlplane.api.resources import PODS
from controlplane.client.rest import ApiError
from controlplane.client.testing import FakeClient


def fake_client(*pods: dict, fail_binds: int = 0) -> FakeClient:
    """The apiserver holding ``pods``; the first ``fail_binds`` Bindings answer 409 Conflict."""
    c = FakeClient()
    for p in pods:
        c.seed(PODS, p)
    if fail_binds:
        c.fail("create", "pods", ApiError(409, "Conflict", "Operation cannot be fulfilled"),
               times=fail_binds, subresource="binding")
    return c


def node(name, **labels):
    return {"metadata": {"name": name, "labels": {"kubernetes.io/hostname": name, **labels}},
            "status": {"allocatable": {"cpu": "2", "memory": "4Gi", "pods": "10"}}}


def pod(name, **spec):
    return {"apiVersion": "v1", "kind": "Pod",
            "metadata": {"name": name, "namespace": "default", "uid": "u-" + name},
            "spec": {"containers": [{"name": "c", "image": "nginx"}], **spec}}


async def test_binding_body_and_selected_node_annotation():
    c = fake_client(pod("nginx"))
    s = Scheduler(c, rng=random.Random(0), record_results=True)
    s.on_node_add(node("node01"))
    s.on_pod_add(pod("nginx"))
    s.schedule_one(s.queue.pop_nowait())
    await s.wait_idle()
    post = c.actions()[0]
    assert (post.verb, post.resource, post.name, post.subresource, post.namespace) == (
        "create", "pods", "nginx", "binding", "default")
    assert post.object == {"apiVersion": "v1", "kind": "Binding",
                       "metadata": {"name": "nginx", "namespace": "default", "uid": "u-nginx"},
                       "target": {"apiVersion": "v1", "kind": "Node", "name": "node01"}}
    ann = c.actions()[1]
    assert (ann.verb, ann.resource, ann.name, ann.subresource, ann.patch_type) == ("patch", "pods", "nginx", "", "merge")
    a = ann.patch["metadata"]["annotations"]
    assert a[SELECTED_NODE] == "node01"
    assert json.loads(a["kube-scheduler-simulator.sigs.k8s.io/filter-result"])["node01"]["NodeResourcesFit"] == "passed"


async def test_failure_patches_pod_scheduled_condition():
    c = fake_client(pod("p", nodeSelector={"kgc": "b"}))
    s = Scheduler(c, record_results=False)
    s.on_node_add(node("node01", kgc="a"))
    s.on_pod_add(pod("p", nodeSelector={"kgc": "b"}))
    s.schedule_one(s.queue.pop_nowait())
    await s.wait_idle()
    assert len(c.actions()) == 1
    act = c.actions()[0]
    assert (act.verb, act.resource, act.name, act.subresource, act.patch_type) == (
        "patch", "pods", "p", "status", "strategic")
    cond = act.patch["status"]["conditions"][0]
    assert cond["type"] == "PodScheduled" and cond["status"] == "False" and cond["reason"] == "Unschedulable"
    assert cond["message"] == ("0/1 nodes are available: 1 node(s) didn't match Pod's node affinity/selector. "
                               "preemption: 0/1 nodes are available: 1 Preemption is not helpful for scheduling.")


async def test_no_nodes_message():
    c = fake_client(pod("p"))
    s = Scheduler(c, record_results=False)
    s.on_pod_add(pod("p"))
    s.schedule_one(s.queue.pop_nowait())
    await s.wait_idle()
    assert c.actions()[0].patch["status"]["conditions"][0]["message"] == "no nodes available to schedule pods"


async def test_failed_bind_forgets_and_retries():
    c = fake_client(pod("p"), fail_binds=1)
    s = Scheduler(c, SchedulerConfig(pod_initial_backoff_seconds=0.05, pod_max_backoff_seconds=0.1),
                  record_results=False)
    s.on_node_add(node("node01"))
    s.on_pod_add(pod("p"))
    s.schedule_one(s.queue.pop_nowait())
    await s.wait_idle()
    assert not s.cache.has_pod("default/p")           # assumed pod forgotten
    qp = await asyncio.wait_for(s.queue.pop(), 2)     # back through backoffQ
    s.schedule_one(qp)
    await s.wait_idle()
    binds = [a for a in c.actions("create", "pods") if a.subresource == "binding"]
    assert len(binds) == 2 and s.cache.has_pod("default/p")


async def test_pod_with_node_name_or_other_scheduler_is_not_ours():
    s = Scheduler(fake_client())
    s.on_node_add(node("node01"))
    s.on_pod_add(pod("placed", nodeName="node01"))
    s.on_pod_add(pod("other", schedulerName="my-scheduler"))
    assert s.queue.pop_nowait() is None
    assert s.cache.pod_node("default/placed") == "node01"
