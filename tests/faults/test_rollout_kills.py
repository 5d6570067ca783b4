"""kill -9 of each control-plane process during Deployment rollouts (issue 9, "Prove it").

Each scenario runs its own ``controlplane up`` (node01, node02 and 4 hollow nodes) and kills
one component once in each phase of a rollout — create (50 replicas), scale up (100), scale
down (25) — while a writer creates and deletes ConfigMaps and informer-like watchers follow
pods, ReplicaSets, Deployments and ConfigMaps. After every kill the supervisor restarts the
process; the Deployment must converge to exactly the desired ready pods, and at the end no
acknowledged write is lost, nothing exists twice, and no watcher missed an event
(``tests/faults/rollout.py``). ``CP_FAULT_ROUNDS`` (default 1) repeats the rollout with a new
Deployment per round, one more kill per phase each time.
"""

from __future__ import annotations

import os

import pytest

from tests.faults.rollout import Scenario

pytestmark = [pytest.mark.faults, pytest.mark.integration, pytest.mark.timeout(240)]

ROUNDS = int(os.environ.get("CP_FAULT_ROUNDS", "1"))

ETCD_FREEZE = pytest.mark.xfail(strict=True, reason=(
    "after an etcd restart the apiserver's watch caches receive no more events "
    "(controlplane/storage/etcd.py reuses one request queue for every watch stream): "
    "the Deployment never gets a status; fixed on branch fix-watch"))
DELETE_EXPECTATIONS = pytest.mark.xfail(strict=True, reason=(
    "replica controller: a pod DELETE that fails with a connection error (apiserver killed) "
    "does not lower the deletion expectations (components/controller_manager/replicaset.py "
    "_delete_pod only handles ApiError; replica_set.go calls DeletionObserved on any error), "
    "so the surplus pods stay for the 5-minute expectations timeout"))

TARGETS = {
    "etcd": ["etcd"],
    "apiserver": ["apiserver"],
    "controller-manager": ["controller-manager"],
    "scheduler": ["scheduler"],
    "kubelet": ["kubelet-node01", "kubelet-node02", "kubelet-hollow"],
}
MARKS = {"etcd": [ETCD_FREEZE], "apiserver": [DELETE_EXPECTATIONS]}


@pytest.mark.parametrize("component", [pytest.param(c, marks=MARKS.get(c, [])) for c in TARGETS])
async def test_rollout_survives_kill(up, component):
    await Scenario(component, up, TARGETS[component], rounds=ROUNDS).run()


@pytest.mark.realetcd
@ETCD_FREEZE
async def test_rollout_survives_real_etcd_kill(up_real_etcd):
    await Scenario("etcd (real 3.4)", up_real_etcd, ["etcd"], rounds=ROUNDS).run()
