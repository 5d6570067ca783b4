"""GC policy: survivors of a full collection leave the cyclic GC; stop() restores it; every
long-running component's command has ``--gc-sweep-interval`` and its run path starts the freezer
once its caches are filled and stops it when it ends."""

from __future__ import annotations

import asyncio
import gc

import pytest
from click.testing import CliRunner

from controlplane import gcpolicy
from controlplane.gcpolicy import GCFreezer


class Made(list):
    """The freezers the code under test made through :func:`gcpolicy.freezer`."""

    def __init__(self) -> None:
        super().__init__()
        self.any = asyncio.Event()

    async def started(self, task: asyncio.Task, timeout: float = 5.0) -> GCFreezer:
        """The first freezer once started; the task's own error if it ended first."""
        async def first() -> None:
            await self.any.wait()
            await self[0].started.wait()
        waiter = asyncio.ensure_future(first())
        done, _ = await asyncio.wait({waiter, task}, timeout=timeout, return_when=asyncio.FIRST_COMPLETED)
        if waiter not in done:
            waiter.cancel()
            if task in done:
                task.result()
            raise TimeoutError("no freezer started")
        return self[0]


@pytest.fixture
def made(monkeypatch):
    out = Made()
    real = gcpolicy.freezer

    def record(interval: float, young: int | None = None) -> GCFreezer | None:
        f = real(interval, young)
        if f is not None:
            out.append(f)
            out.any.set()
        return f
    monkeypatch.setattr(gcpolicy, "freezer", record)
    return out


async def test_freezer_freezes_survivors_and_sweeps_back():
    f = GCFreezer(sweep_interval=3600)
    f.start()
    try:
        assert gc.get_freeze_count() > 0 and f.started.is_set()
        _keep = [{"metadata": {"name": f"p{i}"}, "spec": {"containers": [{"name": "c"}]}} for i in range(2000)]
        before = gc.get_freeze_count()
        gc.collect()                                   # a full collection: the callback freezes survivors
        assert f.freezes >= 1
        assert gc.get_freeze_count() >= before + 2000  # our new long-lived objects among them
    finally:
        await f.stop()
    assert gc.get_freeze_count() == 0 and f._after_gc not in gc.callbacks and not f.started.is_set()


async def test_stopping_a_freezer_never_started_leaves_another_freeze_alone():
    gc.freeze()   # as the zygote does before forking the components
    try:
        frozen = gc.get_freeze_count()
        await GCFreezer(60).stop()
        assert gc.get_freeze_count() == frozen > 0
    finally:
        gc.unfreeze()


async def test_the_sweep_unfreezes_collects_and_freezes_the_survivors_again(monkeypatch):
    swept = asyncio.Event()
    real_collect = gc.collect
    calls: list[int] = []

    def collect(*a: object) -> int:
        calls.append(gc.get_freeze_count())   # what the sweep left frozen when it collects: nothing
        swept.set()
        return real_collect(*a)
    f = GCFreezer(sweep_interval=0.001)
    monkeypatch.setattr(gcpolicy.gc, "collect", collect)
    f.start()
    try:
        await asyncio.wait_for(swept.wait(), 5)
    finally:
        monkeypatch.undo()
        await f.stop()
    assert calls[0] == 0 and f.freezes >= 1


async def test_a_young_threshold_holds_while_started_and_the_old_thresholds_come_back():
    before = gc.get_threshold()
    f = GCFreezer(3600, young_threshold=12345)
    f.start()
    try:
        assert gc.get_threshold() == (12345, *before[1:])
    finally:
        await f.stop()
    assert gc.get_threshold() == before
    with pytest.raises(ValueError, match="young_threshold must be > 0"):
        GCFreezer(60, young_threshold=0)


def test_no_freezer_for_a_zero_interval_and_a_bad_interval_is_refused():
    assert gcpolicy.freezer(0) is None and gcpolicy.freezer(-1) is None
    assert gcpolicy.freezer(600).sweep_interval == 600
    with pytest.raises(ValueError, match="sweep_interval must be > 0"):
        GCFreezer(0)


def _commands():
    from components.apiserver.cli import command as apiserver
    from components.controller_manager.cli import command as controller_manager
    from components.kubelet.cli import command as kubelet
    from components.scheduler.cli import command as scheduler
    return {"apiserver": apiserver, "controller-manager": controller_manager, "scheduler": scheduler,
            "kubelet": kubelet}


@pytest.mark.parametrize("name", ["apiserver", "controller-manager", "scheduler", "kubelet"])
def test_every_component_sweeps_every_ten_minutes_by_default_and_refuses_a_negative_interval(name):
    cmd = _commands()[name]
    opt = next(p for p in cmd.params if p.name == "gc_sweep_interval")
    assert opt.default == gcpolicy.DEFAULT_SWEEP_INTERVAL == 600.0
    r = CliRunner().invoke(cmd, ["--gc-sweep-interval", "-1"])
    assert r.exit_code == 2 and "--gc-sweep-interval" in r.output


async def test_controller_manager_freezes_once_its_informers_synced_and_thaws_when_it_ends(made):
    from components.controller_manager.manager import ControllerManager
    from controlplane.client.testing import FakeClient, FakeRecorder, FakeTracer

    client = FakeClient()
    mgr = ControllerManager(client, ["serviceaccount"], informers=client.informers, tracer=FakeTracer(),
                            recorder_factory=lambda c: FakeRecorder(c), gc_sweep_interval=3600)
    assert made == [mgr.gc_freezer]
    task = asyncio.create_task(mgr.run())
    try:
        await made.started(task)
        assert made[0]._after_gc in gc.callbacks
        assert gc.get_threshold()[0] == gcpolicy.CLIENT_YOUNG_THRESHOLD
    finally:
        task.cancel()
        await asyncio.gather(task, return_exceptions=True)
    assert not made[0].started.is_set() and made[0]._after_gc not in gc.callbacks
    assert ControllerManager(client, ["serviceaccount"], informers=client.informers, tracer=FakeTracer(),
                             recorder_factory=lambda c: FakeRecorder(c)).gc_freezer is None


async def test_hollow_kubelet_freezes_once_its_pods_informer_listed_and_thaws_when_it_ends(made):
    from components.kubelet.kubelet import Kubelet, Timings
    from components.kubelet.node import NodeConfig
    from controlplane.client.testing import FakeClient

    nodes = [NodeConfig(name=f"hollow-{i}", index=100 + i) for i in range(3)]
    k = Kubelet(FakeClient(), nodes, Timings(image_pull_seconds=0.0, container_start_seconds=0.0),
                trace=False, gc_sweep_interval=3600)
    task = asyncio.create_task(k.run())
    try:
        await made.started(task)
        assert k.informer._synced.is_set() and len(k.agents) == 3
        assert gc.get_threshold()[0] == gcpolicy.CLIENT_YOUNG_THRESHOLD
    finally:
        task.cancel()
        await asyncio.gather(task, return_exceptions=True)
    assert not made[0].started.is_set() and made[0]._after_gc not in gc.callbacks


async def test_scheduler_freezes_once_its_informers_synced_and_thaws_when_it_ends(made, monkeypatch):
    from components.scheduler import cli
    from components.scheduler.config import load_config
    from controlplane.client.testing import FakeClient

    client = FakeClient()
    client.server = "http://fake"  # type: ignore[attr-defined]

    class Connect:
        def __init__(self, *a: object) -> None: ...
        async def __aenter__(self) -> FakeClient: return client
        async def __aexit__(self, *exc: object) -> None: ...

    async def ready(c: object) -> None: ...
    monkeypatch.setattr(cli, "RestClient", Connect)
    monkeypatch.setattr(cli, "wait_ready", ready)
    task = asyncio.create_task(cli.run_scheduler("http://fake", load_config(None), False, False,
                                                 gc_sweep_interval=3600))
    try:
        await made.started(task)
        assert gc.get_threshold()[0] == gcpolicy.CLIENT_YOUNG_THRESHOLD
    finally:
        task.cancel()
        await asyncio.gather(task, return_exceptions=True)
    assert not made[0].started.is_set() and made[0]._after_gc not in gc.callbacks
    assert gc.get_threshold()[0] != gcpolicy.CLIENT_YOUNG_THRESHOLD
