"""kill -9 of each control-plane process during Deployment rollouts (issue 9, "Prove it").

Each scenario runs its own ``controlplane up`` (node01, node02 and 4 hollow nodes) and kills
one component once in each phase of a rollout — create (50 replicas), scale up (100), scale
down (25) — while a writer creates and deletes ConfigMaps and informer-like watchers follow
pods, ReplicaSets, Deployments and ConfigMaps. After every kill the supervisor restarts the
process; the Deployment must converge to exactly the desired ready pods, and at the end no
acknowledged write is lost, nothing exists twice, and no watcher missed an event
(``tests/faults/rollout.py``).

Rounds: each round is a new Deployment taken through the three phases, one kill per phase.
The three kubelets and the real etcd (restarted by the test) get 3 rounds, 9 kills; a
component that is one supervised process gets 1 round, 3 kills, because the supervisor's
restart back-off (0.5 s doubling to 8 s) would make 9 kills of one process cost ~50 s.
``CP_FAULT_ROUNDS=N`` runs N rounds everywhere (a deep run).
"""

from __future__ import annotations

import os

import pytest

from tests.faults.rollout import Scenario

pytestmark = [pytest.mark.faults, pytest.mark.integration, pytest.mark.timeout(240)]

DEEP = int(os.environ.get("CP_FAULT_ROUNDS", "0"))

TARGETS = {  # scenario: (processes killed in turn, rounds)
    "etcd": (["etcd"], 1),
    "apiserver": (["apiserver"], 1),
    "controller-manager": (["controller-manager"], 1),
    "scheduler": (["scheduler"], 1),
    "kubelet": (["kubelet-node01", "kubelet-node02", "kubelet-hollow"], 3),
}


@pytest.mark.parametrize("component", list(TARGETS))
async def test_rollout_survives_kill(up, component):
    targets, rounds = TARGETS[component]
    await Scenario(component, up, targets, rounds=DEEP or rounds).run()


@pytest.mark.realetcd
async def test_rollout_survives_real_etcd_kill(up_real_etcd):
    await Scenario("etcd (real 3.4)", up_real_etcd, ["etcd"], rounds=DEEP or 3).run()
