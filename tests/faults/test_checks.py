"""The fault suite's own checks on made-up data: a watch log replayed to a revision, missed
events found against a list, lost writes found against a list, convergence verdicts."""

from __future__ import annotations

from tests.faults.harness import ConfigMapWriter, Watcher
from tests.faults.rollout import missed_events, not_converged


def obj(name: str, rv: int, **extra) -> dict:
    return {"metadata": {"name": name, "resourceVersion": str(rv), **extra}}


def watcher_with(log: list[tuple]) -> Watcher:
    w = Watcher.__new__(Watcher)
    w.log = log
    return w


LOG = [("list", 10, {"a": obj("a", 5)}),
       ("event", "ADDED", obj("b", 11)),
       ("event", "MODIFIED", obj("a", 12)),
       ("event", "DELETED", obj("b", 13))]


def test_replay_stops_at_the_revision():
    w = watcher_with(LOG)
    assert w.replay(10) == {"a": 5}
    assert w.replay(12) == {"a": 12, "b": 11}
    assert w.replay(99) == {"a": 12}


def test_replay_after_a_later_relist_is_unknown():
    assert watcher_with([*LOG, ("list", 20, {})]).replay(15) is None


def test_replay_restarts_from_a_relist():
    w = watcher_with([*LOG, ("list", 20, {"c": obj("c", 18)}), ("event", "ADDED", obj("d", 21))])
    assert w.replay(21) == {"c": 18, "d": 21}


def test_missed_events_finds_a_dropped_modification_and_deletion():
    listed = [obj("a", 12)]
    assert missed_events(listed, {"a": 12}) == []
    assert missed_events(listed, {"a": 5}) == ["a: list rv 12, watch rv 5"]
    assert missed_events(listed, {"a": 12, "b": 11}) == ["b: list rv None, watch rv 11"]
    assert missed_events([*listed, obj("c", 3)], {"a": 12}) == ["c: list rv 3, watch rv None"]


def test_lost_writes_only_count_acknowledged_ones():
    w = ConfigMapWriter.__new__(ConfigMapWriter)
    w.acked = {"kept": "u1", "gone": "u2", "del": "u3", "del-kept": "u4", "maybe": "u5", "other": "u6"}
    w.deleted = {"del": "u3", "del-kept": "u4"}
    w.delete_uncertain = {"maybe"}
    items = [{"metadata": {"name": "kept", "uid": "u1"}},
             {"metadata": {"name": "del-kept", "uid": "u4"}},
             {"metadata": {"name": "other", "uid": "u9"}}]
    assert w.check(items) == ["gone: created (2xx, uid u2) but missing",
                              "del-kept: deleted (2xx) but still present",
                              "other: created (2xx, uid u6) but uid u9"]


def dep(replicas: int, ready: int, generation: int = 2, observed: int = 2) -> dict:
    return {"metadata": {"name": "web", "generation": generation},
            "spec": {"replicas": replicas},
            "status": {"observedGeneration": observed, "replicas": ready, "updatedReplicas": ready,
                       "readyReplicas": ready, "availableReplicas": ready}}


def pod(i: int, ready: bool = True, deleting: bool = False) -> dict:
    md = {"name": f"web-{i}", "labels": {"app": "web"}}
    if deleting:
        md["deletionTimestamp"] = "2026-01-01T00:00:00Z"
    return {"metadata": md, "status": {"phase": "Running", "conditions": [
        {"type": "Ready", "status": "True" if ready else "False"}]}}


def test_converged_needs_exactly_the_desired_ready_pods():
    assert not_converged(dep(2, 2), [pod(0), pod(1)], 2) is None
    assert not_converged(dep(2, 2), [pod(0), pod(1), pod(2, deleting=True)], 2) == \
        "3 pods (2 ready, 1 terminating), want 2"
    assert not_converged(dep(2, 2), [pod(0), pod(1, ready=False)], 2) == \
        "2 pods (1 ready, 0 terminating), want 2"
    assert not_converged(dep(2, 2, observed=1), [pod(0), pod(1)], 2) == "observedGeneration 1 != 2"
    assert not_converged(None, [], 2) == "deployment missing"
