"""Many hollow nodes in one Kubelet: one pods watch, dispatched by spec.nodeName."""

from __future__ import annotations

import asyncio
import copy

from components.kubelet.kubelet import Kubelet, Timings
from components.kubelet.node import NodeConfig
from controlplane.api.patch import json_merge_patch
from controlplane.client.rest import ApiError


class FakeApi:
    def __init__(self) -> None:
        self.objects: dict[tuple[str, str], dict] = {}
        self.trace_posts: list[dict] = []

    async def create(self, res, obj, namespace=None):
        key = (res.plural, obj["metadata"]["name"])
        if key in self.objects:
            raise ApiError(409, "AlreadyExists", "exists")
        obj = copy.deepcopy(obj)
        obj["metadata"].setdefault("uid", f"uid-{key[1]}")
        self.objects[key] = obj
        return copy.deepcopy(obj)

    async def get(self, res, name, namespace=None):
        if (res.plural, name) not in self.objects:
            raise ApiError(404, "NotFound", "not found")
        return copy.deepcopy(self.objects[(res.plural, name)])

    async def patch(self, res, name, patch, namespace=None, *, patch_type="merge", subresource=None):
        key = (res.plural, name)
        if key not in self.objects:
            raise ApiError(404, "NotFound", "not found")
        self.objects[key] = json_merge_patch(self.objects[key], patch)
        return copy.deepcopy(self.objects[key])

    async def request(self, method, path, *, body=None, **kw):
        self.trace_posts.append(body)


async def test_hollow_nodes_register_and_pods_reach_their_node():
    api = FakeApi()
    nodes = [NodeConfig(name=f"hollow-{i}", index=100 + i) for i in range(20)]
    k = Kubelet(api, nodes, Timings(image_pull_seconds=0.0, container_start_seconds=0.0))
    assert k.field_selector == "spec.nodeName!="
    sem = asyncio.Semaphore(8)
    await asyncio.gather(*(k._start_node(cfg, sem) for cfg in nodes))
    assert sorted(n for p, n in api.objects if p == "nodes") == sorted(c.name for c in nodes)
    assert api.objects[("nodes", "hollow-3")]["spec"]["podCIDR"] == "10.244.103.0/24"
    addrs = {api.objects[("nodes", c.name)]["status"]["addresses"][0]["address"] for c in nodes}
    assert len(addrs) == 20  # distinct InternalIPs

    pod = {"kind": "Pod", "apiVersion": "v1",
           "metadata": {"name": "p", "namespace": "default", "uid": "uid-p"},
           "spec": {"nodeName": "hollow-3", "containers": [{"name": "c", "image": "nginx"}]},
           "status": {"phase": "Pending"}}
    api.objects[("pods", "p")] = copy.deepcopy(pod)
    k._on_add(copy.deepcopy(pod))
    k._on_add({**copy.deepcopy(pod), "metadata": {**pod["metadata"], "name": "q", "uid": "uid-q"},
               "spec": {**pod["spec"], "nodeName": "elsewhere"}})  # not ours: ignored
    await k.workers["hollow-3"].wait_idle()
    st = api.objects[("pods", "p")]["status"]
    assert st["phase"] == "Running" and st["podIP"] == "10.244.103.2"
    assert st["hostIP"] == "192.168.1.103"
    assert all(not w.pods() for n, w in k.workers.items() if n != "hollow-3")
    await k.stop()
