"""A huge scale-up cannot flood the apiserver: the replica controller creates pods
in slow-start batches 1, 2, 4, 8, ... of at most ``burstReplicas`` (500) per sync,
and a batch with a failure ends the series (``pkg/controller/replicaset/replica_set.go``
manageReplicas / slowStartBatch, ``pkg/controller/controller_utils.go``). The same
holds when a Deployment asks for the pods (it only sets the ReplicaSet's replicas)."""

from __future__ import annotations

import asyncio

import pytest

from components.controller_manager.controller_utils import BURST_REPLICAS
from components.controller_manager.deployment import DeploymentController
from components.controller_manager.replicaset import REPLICASET_KIND, ReplicaController
from components.controller_manager.testing import fake_context, settle
from controlplane.api.resources import DEPLOYMENTS, PODS, REPLICASETS
from controlplane.client.rest import ApiError

#: one sync of a scale-up by >= 500: 1+2+...+128 = 255, then the 245 left of the burst
SYNC_BATCHES = [1, 2, 4, 8, 16, 32, 64, 128, 245]
KEY = "default/big-6b474476c4"


def replicaset(replicas: int) -> dict:
    labels = {"app": "big", "pod-template-hash": "6b474476c4"}
    return {"apiVersion": "apps/v1", "kind": "ReplicaSet", "metadata": {"name": "big-6b474476c4", "namespace": "default"},
            "spec": {"replicas": replicas, "selector": {"matchLabels": dict(labels)},
                     "template": {"metadata": {"labels": dict(labels)},
                                  "spec": {"containers": [{"name": "c", "image": "nginx"}]}}}}


class Batches:
    """Wraps ``client.create`` for pods: the sizes of the groups of creates in flight
    together (a slow-start batch runs its creates concurrently; the next batch starts
    when the last one's have all returned). ``fail_from``: the n-th pod create
    (1-based) and every later one answer 403 Forbidden (a quota)."""

    def __init__(self, client, fail_from: int | None = None) -> None:
        self.sizes: list[int] = []
        self.calls = 0
        self.fail_from = fail_from
        self._inflight = 0
        self._create = client.create
        client.create = self.create

    async def create(self, res, obj, namespace=None):
        if res is not PODS:
            return await self._create(res, obj, namespace)
        if self._inflight == 0:
            self.sizes.append(0)
        self.sizes[-1] += 1
        self.calls += 1
        n = self.calls
        self._inflight += 1
        try:
            await asyncio.sleep(0)   # let the rest of the batch start before this one returns
            if self.fail_from is not None and n >= self.fail_from:
                raise ApiError(403, "Forbidden", 'pods "big" is forbidden: exceeded quota: q')
            return await self._create(res, obj, namespace)
        finally:
            self._inflight -= 1


async def test_scale_up_of_2000_creates_at_most_burst_replicas_per_sync_in_doubling_batches():
    client, ctx, events = fake_context()
    c = ReplicaController(ctx, REPLICASET_KIND)
    client.seed(REPLICASETS, replicaset(2000))
    rec = Batches(client)
    per_sync = []
    for _ in range(4):
        rec.sizes.clear()
        await c.sync(KEY)
        per_sync.append(list(rec.sizes))
    assert BURST_REPLICAS == 500
    assert per_sync == [SYNC_BATCHES] * 4
    assert len(client.all(PODS)) == 2000
    assert sum(1 for e in events if e[3] == "SuccessfulCreate") == 2000
    rec.sizes.clear()
    await c.sync(KEY)
    assert rec.sizes == []
    assert client.all(REPLICASETS)[0]["status"]["replicas"] == 2000


async def test_a_failing_batch_ends_the_series_and_the_next_sync_goes_on():
    client, ctx, events = fake_context()
    c = ReplicaController(ctx, REPLICASET_KIND)
    client.seed(REPLICASETS, replicaset(2000))
    rec = Batches(client, fail_from=10)
    with pytest.raises(ApiError) as e:
        await c.sync(KEY)
    assert e.value.code == 403
    # batches 1, 2, 4 succeed; the batch of 8 (creates 8..15) fails from the 10th: no batch of 16
    assert rec.sizes == [1, 2, 4, 8] and rec.calls == 15
    assert len(client.all(PODS)) == 9
    failed = [e for e in events if e[3] == "FailedCreate"]
    assert len(failed) == 6 and failed[0][4] == 'Error creating: pods "big" is forbidden: exceeded quota: q'
    assert c.expectations.satisfied(KEY)    # the creates never made are not waited for
    rec.fail_from = None
    rec.sizes.clear()
    await c.sync(KEY)
    assert rec.sizes == SYNC_BATCHES and len(client.all(PODS)) == 509


async def test_deployment_scale_up_reaches_pods_through_the_same_batches():
    client, ctx, events = fake_context()
    dc = DeploymentController(ctx)
    rc = ReplicaController(ctx, REPLICASET_KIND)
    client.seed(DEPLOYMENTS, {
        "apiVersion": "apps/v1", "kind": "Deployment", "metadata": {"name": "big", "namespace": "default"},
        "spec": {"replicas": 1200, "selector": {"matchLabels": {"app": "big"}},
                 "template": {"metadata": {"labels": {"app": "big"}},
                              "spec": {"containers": [{"name": "c", "image": "nginx"}]}}}})
    await settle(dc)
    [rs] = client.all(REPLICASETS)
    assert rs["spec"]["replicas"] == 1200
    key = f"default/{rs['metadata']['name']}"
    rec = Batches(client)
    per_sync = []
    while len(client.all(PODS)) < 1200:
        rec.sizes.clear()
        await rc.sync(key)
        per_sync.append(list(rec.sizes))
    # 500, 500, then the 200 left: 1+2+...+64 = 127, then 73
    assert per_sync == [SYNC_BATCHES, SYNC_BATCHES, [1, 2, 4, 8, 16, 32, 64, 73]]


async def test_a_delete_lost_with_the_connection_lowers_the_expectations():
    """A pod DELETE that fails without an answer (the apiserver died mid-request) is not
    waited for: ``manageReplicas`` calls DeletionObserved on every error, so the next sync
    recounts at once instead of after the 5-minute expectations timeout."""
    client, ctx, events = fake_context()
    c = ReplicaController(ctx, REPLICASET_KIND)
    client.seed(REPLICASETS, replicaset(4))
    await c.sync(KEY)
    assert len(client.all(PODS)) == 4
    await client.patch(REPLICASETS, "big-6b474476c4", {"spec": {"replicas": 1}}, "default")
    lost = client.fail("delete", "pods", ConnectionResetError("Connection lost"))
    with pytest.raises(ConnectionResetError):
        await c.sync(KEY)
    assert c.expectations.satisfied(KEY)
    assert len(client.all(PODS)) == 4
    client.remove_reactor(lost)
    await c.sync(KEY)
    assert len(client.all(PODS)) == 1
