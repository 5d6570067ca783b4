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
from controlplane.client.rest import ApiError


class FakeClient:
    def __init__(self, fail_binds: int = 0) -> None:
        self.calls: list[tuple] = []
        self.fail_binds = fail_binds

    async def create_subresource(self, res, name, sub, body, ns=None):
        self.calls.append(("POST", f"{res.plural}/{name}/{sub}", ns, body))
        if self.fail_binds:
            self.fail_binds -= 1
            raise ApiError(409, "Conflict", "Operation cannot be fulfilled")
        return body

    async def patch(self, res, name, patch, ns=None, *, patch_type="merge", subresource=None):
        self.calls.append(("PATCH", f"{res.plural}/{name}" + (f"/{subresource}" if subresource else ""),
                           patch_type, patch))
        return {}


def node(name, **labels):
    return {"metadata": {"name": name, "labels": {"kubernetes.io/hostname": name, **labels}},
            "status": {"allocatable": {"cpu": "2", "memory": "4Gi", "pods": "10"}}}


def pod(name, **spec):
    return {"apiVersion": "v1", "kind": "Pod",
            "metadata": {"name": name, "namespace": "default", "uid": "u-" + name},
            "spec": {"containers": [{"name": "c", "image": "nginx"}], **spec}}


async def test_binding_body_and_selected_node_annotation():
    c = FakeClient()
    s = Scheduler(c, rng=random.Random(0), record_results=True)
    s.on_node_add(node("node01"))
    s.on_pod_add(pod("nginx"))
    s.schedule_one(s.queue.pop_nowait())
    await s.wait_idle()
    post = c.calls[0]
    assert post[:3] == ("POST", "pods/nginx/binding", "default")
    assert post[3] == {"apiVersion": "v1", "kind": "Binding",
                       "metadata": {"name": "nginx", "namespace": "default", "uid": "u-nginx"},
                       "target": {"apiVersion": "v1", "kind": "Node", "name": "node01"}}
    ann = c.calls[1]
    assert ann[:3] == ("PATCH", "pods/nginx", "merge")
    a = ann[3]["metadata"]["annotations"]
    assert a[SELECTED_NODE] == "node01"
    assert json.loads(a["kube-scheduler-simulator.sigs.k8s.io/filter-result"])["node01"]["NodeResourcesFit"] == "passed"


async def test_failure_patches_pod_scheduled_condition():
    c = FakeClient()
    s = Scheduler(c, record_results=False)
    s.on_node_add(node("node01", kgc="a"))
    s.on_pod_add(pod("p", nodeSelector={"kgc": "b"}))
    s.schedule_one(s.queue.pop_nowait())
    await s.wait_idle()
    assert len(c.calls) == 1
    verb, path, ptype, body = c.calls[0]
    assert (verb, path, ptype) == ("PATCH", "pods/p/status", "strategic")
    cond = body["status"]["conditions"][0]
    assert cond["type"] == "PodScheduled" and cond["status"] == "False" and cond["reason"] == "Unschedulable"
    assert cond["message"] == ("0/1 nodes are available: 1 node(s) didn't match Pod's node affinity/selector. "
                               "preemption: 0/1 nodes are available: 1 Preemption is not helpful for scheduling.")


async def test_no_nodes_message():
    c = FakeClient()
    s = Scheduler(c, record_results=False)
    s.on_pod_add(pod("p"))
    s.schedule_one(s.queue.pop_nowait())
    await s.wait_idle()
    assert c.calls[0][3]["status"]["conditions"][0]["message"] == "no nodes available to schedule pods"


async def test_failed_bind_forgets_and_retries():
    c = FakeClient(fail_binds=1)
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
    binds = [x for x in c.calls if x[0] == "POST"]
    assert len(binds) == 2 and s.cache.has_pod("default/p")


async def test_pod_with_node_name_or_other_scheduler_is_not_ours():
    s = Scheduler(FakeClient())
    s.on_node_add(node("node01"))
    s.on_pod_add(pod("placed", nodeName="node01"))
    s.on_pod_add(pod("other", schedulerName="my-scheduler"))
    assert s.queue.pop_nowait() is None
    assert s.cache.pod_node("default/placed") == "node01"
