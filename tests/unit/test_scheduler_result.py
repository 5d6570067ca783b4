"""ScheduleResult's scores built on demand, its best totals, and the plugin-duration metric's
buffered observations."""

from __future__ import annotations

from prometheus_client import CollectorRegistry, Histogram

from components.scheduler import metrics
from components.scheduler.framework import ScheduleResult


def test_scores_map_the_scored_nodes_to_their_totals():
    r = ScheduleResult("b", 5, 3, ["a", "b", "c"], [10, 30, 20])
    assert r.scores == {"a": 10, "b": 30, "c": 20}
    assert r.scores is r.scores, "built once"
    assert ScheduleResult("a", 1, 1).scores == {}


def test_best_is_the_highest_totals_first_ties_by_name():
    names = [f"n{i:02d}" for i in range(30)]
    totals = [i % 7 for i in range(30)]
    r = ScheduleResult("n06", 30, 30, names, totals)
    want = sorted(zip(names, totals), key=lambda kv: (-kv[1], kv[0]))[:10]
    assert r.best(10) == want
    assert r.best(100) == sorted(zip(names, totals), key=lambda kv: (-kv[1], kv[0]))


def test_best_with_most_nodes_tied_at_the_floor_is_still_the_full_sorts_head():
    names = [f"hollow-{(i * 37) % 420:04d}" for i in range(420)]   # not in name order
    totals = [301 if i % 97 == 0 else 300 for i in range(420)]
    r = ScheduleResult(names[0], 420, 420, names, totals)
    full = sorted(zip(names, totals), key=lambda kv: (-kv[1], kv[0]))
    for n in (1, 3, 10, 50):
        assert r.best(n) == full[:n]


def test_observe_many_counts_as_observe_does():
    reg = CollectorRegistry()
    buckets = metrics.m.exponential_buckets(0.00001, 1.5, 20)
    one = Histogram("one", "x", buckets=buckets, registry=reg)
    many = Histogram("many", "x", buckets=buckets, registry=reg)
    values = [0.0, 0.00001, 0.0000101, 0.0003, 0.02, 5.0, 0.00001 * 1.5 ** 7]
    for v in values:
        one.observe(v)
    metrics.observe_many(many, values)

    def samples(name: str) -> list[tuple[str, dict, float]]:
        return [(s.name.removeprefix(name), s.labels, s.value)
                for m in reg.collect() if m.name == name for s in m.samples if not s.name.endswith("_created")]
    assert samples("many") == samples("one")


def test_plugin_calls_are_observed_at_the_end_of_the_attempt():
    child = metrics.plugin_duration.get(("TestPlugin", "Filter", "Success"))
    before = child._sum.get()
    metrics.plugin_call("TestPlugin", "Filter", "Success", 0.5)
    metrics.plugin_call("TestPlugin", "Filter", "Success", 0.25)
    assert child._sum.get() == before, "buffered"
    metrics.attempt("default-scheduler", metrics.SCHEDULED, 0.0)
    assert child._sum.get() == before + 0.75
