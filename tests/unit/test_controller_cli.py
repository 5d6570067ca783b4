"""``controlplane controller-manager`` flags: durations, thresholds, leader election
settings; bad values are one-line usage errors (exit 2), never tracebacks."""

from __future__ import annotations

import click
import pytest
from click.testing import CliRunner

from components.controller_manager.cli import command, parse_duration


def test_parse_duration():
    assert parse_duration("40s", "--x") == 40
    assert parse_duration("500ms", "--x") == 0.5
    assert parse_duration("1m30s", "--x") == 90
    assert parse_duration("2", "--x") == 2
    with pytest.raises(click.UsageError, match="invalid value '4x' for --x"):
        parse_duration("4x", "--x")


@pytest.mark.parametrize("args, message", [
    (["--node-monitor-grace-period", "soon"], "invalid value 'soon' for --node-monitor-grace-period"),
    (["--node-monitor-period", "0s"], "node-monitor-period must be greater than zero"),
    (["--controllers", "*,nodelifecycle,nope"], "unknown controller 'nope'"),
    (["--terminated-pod-gc-threshold", "-1"], "-1"),
    (["--leader-elect", "--leader-elect-lease-duration", "5s", "--leader-elect-renew-deadline", "10s"],
     "leaseDuration must be greater than renewDeadline"),
    (["--max-endpoints-per-slice", "0"], "0 is not in the range 1<=x<=1000"),
    (["--max-endpoints-per-slice", "1001"], "1001 is not in the range 1<=x<=1000"),
], ids=["grace period not a duration", "zero monitor period", "unknown controller", "negative GC threshold",
        "lease shorter than the renew deadline", "no endpoints per slice", "more than 1000 endpoints per slice"])
def test_bad_flags_are_usage_errors(args, message):
    r = CliRunner().invoke(command, ["--master", "http://127.0.0.1:1", *args])
    assert r.exit_code == 2, r.output
    assert message in r.output
    assert "Traceback" not in r.output


async def test_only_the_lease_holder_runs_its_controllers():
    import asyncio

    from components.controller_manager.manager import ControllerManager, run_manager
    from controlplane.api.resources import LEASES
    from controlplane.client.leaderelection import LeaderElector
    from controlplane.client.testing import FakeClient, FakeRecorder, FakeTracer

    class SlowLeases(FakeClient):
        # Lease calls suspend as a real request does (a call that never suspends can meet
        # Python 3.11's wait_for swallowing a cancellation in LeaderElector.renew)
        async def get(self, *a, **kw):
            await asyncio.sleep(0.001)
            return await super().get(*a, **kw)

        async def update(self, *a, **kw):
            await asyncio.sleep(0.001)
            return await super().update(*a, **kw)

    client = SlowLeases()
    le = dict(lease_duration=1.0, renew_deadline=0.5, retry_period=0.05)
    a = LeaderElector(client, "kube-system", "kube-controller-manager", "cm-a", **le)
    b = LeaderElector(client, "kube-system", "kube-controller-manager", "cm-b", **le)
    tracers = [FakeTracer(), FakeTracer()]
    mgrs = [ControllerManager(client, ["serviceaccount"], informers=client.informers, tracer=t,
                              recorder_factory=lambda c: FakeRecorder(c)) for t in tracers]
    ta = asyncio.create_task(run_manager(mgrs[0], a))
    await asyncio.wait_for(a.is_leader.wait(), 5)
    tb = asyncio.create_task(run_manager(mgrs[1], b))
    lease = await client.get(LEASES, "kube-controller-manager", "kube-system")
    assert lease["spec"]["holderIdentity"] == "cm-a"
    assert not b.is_leader.is_set()
    ta.cancel()                                    # SIGTERM: release, the other takes over
    await asyncio.gather(ta, return_exceptions=True)
    await asyncio.wait_for(b.is_leader.wait(), 5)
    lease = await client.get(LEASES, "kube-controller-manager", "kube-system")
    assert lease["spec"]["holderIdentity"] == "cm-b" and lease["spec"]["leaseTransitions"] == 1
    tb.cancel()
    await asyncio.gather(tb, return_exceptions=True)


async def test_a_controller_runs_once_its_own_informers_synced_while_others_still_list():
    """Each controller waits for the caches it uses alone (kube-controller-manager's per-controller
    ``WaitForNamedCacheSync``): the serviceaccount controller creates ``default`` while the pods
    informer the deployment controller uses has not synced."""
    import asyncio

    from components.controller_manager.manager import ControllerManager
    from controlplane.api.resources import NAMESPACES, PODS, get

    SERVICEACCOUNTS = get("serviceaccounts")
    from controlplane.client.factory import SharedInformers
    from controlplane.client.testing import FakeClient, FakeInformer, FakeRecorder, FakeTracer

    pods_synced = asyncio.Event()

    class Listing(FakeInformer):
        async def wait_synced(self, timeout: float = 60.0) -> None:
            if self.resource is PODS:
                await asyncio.wait_for(pods_synced.wait(), timeout)

    created = asyncio.Event()

    class Client(FakeClient):
        async def create(self, res, body, *a, **kw):
            out = await super().create(res, body, *a, **kw)
            if res is SERVICEACCOUNTS:
                created.set()
            return out

    client = Client()
    client.informers = SharedInformers(client, make=Listing)
    mgr = ControllerManager(client, ["deployment", "serviceaccount"], informers=client.informers,
                            tracer=FakeTracer(), recorder_factory=lambda c: FakeRecorder(c))
    assert [r.plural for r in mgr.needs[1]] == ["namespaces", "serviceaccounts"]
    assert PODS in mgr.needs[0]
    task = asyncio.create_task(mgr.run())
    await client.create(NAMESPACES, {"metadata": {"name": "default"}})
    try:
        await asyncio.wait_for(created.wait(), 5)
        assert not pods_synced.is_set()
    finally:
        task.cancel()
        await asyncio.gather(task, return_exceptions=True)
