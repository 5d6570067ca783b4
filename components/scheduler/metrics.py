"""kube-scheduler's metrics (``pkg/scheduler/metrics/metrics.go``) on the process's registry
(:data:`controlplane.metrics.REGISTRY`), served on ``--port`` by :mod:`.cli`.

* ``scheduler_pending_pods{queue}`` (gauge): pods per sub-queue, ``active`` / ``backoff`` /
  ``unschedulable`` / ``gated``, read from the queue at scrape time;
* ``scheduler_schedule_attempts_total{profile, result}`` (counter): ``scheduled`` /
  ``unschedulable`` / ``error``, one per attempt;
* ``scheduler_scheduling_attempt_duration_seconds{profile, result}`` (histogram, 1 ms·2^i, i < 15):
  from the start of the scheduling cycle to its end (failures) or the end of binding (success);
* ``scheduler_plugin_execution_duration_seconds{plugin, extension_point, status}`` (histogram,
  10 µs·1.5^i, i < 20): each plugin call of a cycle sampled with probability
  :data:`PLUGIN_METRICS_SAMPLE_PERCENT` % (``pluginMetricsSamplePercent`` in schedule_one.go).
"""

from __future__ import annotations

import random
import time
from bisect import bisect_left
from typing import Callable

from controlplane import metrics as m

#: the share of scheduling cycles whose plugin calls are timed (schedule_one.go)
PLUGIN_METRICS_SAMPLE_PERCENT = 10

SCHEDULED, UNSCHEDULABLE, ERROR = "scheduled", "unschedulable", "error"

pending_pods = m.gauge("scheduler_pending_pods", "Number of pending pods, by the queue type. 'active' means number "
                       "of pods in activeQ; 'backoff' means number of pods in backoffQ; 'unschedulable' means "
                       "number of pods in unschedulablePods that the scheduler attempted to schedule and failed; "
                       "'gated' is the number of unschedulable pods that the scheduler never attempted to schedule "
                       "because they are gated.", ("queue",))
schedule_attempts = m.Children(m.counter(
    "scheduler_schedule_attempts_total", "Number of attempts to schedule pods, by the result. 'unschedulable' means "
    "a pod could not be scheduled, while 'error' means an internal scheduler problem.", ("profile", "result")))
attempt_duration = m.Children(m.histogram(
    "scheduler_scheduling_attempt_duration_seconds", "Scheduling attempt latency in seconds (scheduling algorithm "
    "+ binding)", ("profile", "result"), m.exponential_buckets(0.001, 2, 15)))
plugin_duration = m.Children(m.histogram(
    "scheduler_plugin_execution_duration_seconds", "Duration for running a plugin at a specific extension point.",
    ("plugin", "extension_point", "status"), m.exponential_buckets(0.00001, 1.5, 20)))


def attempt(profile: str, result: str, started: float) -> None:
    """One scheduling attempt of ``profile`` ended with ``result``; ``started``: ``time.monotonic()``
    at the start of its cycle."""
    if _pending:
        flush_plugin_calls()
    schedule_attempts.get((profile, result)).inc()
    attempt_duration.get((profile, result)).observe(time.monotonic() - started)


def sample_plugin_metrics() -> bool:
    """Whether this cycle's plugin calls are timed (10 % of cycles, at random)."""
    return random.random() * 100 < PLUGIN_METRICS_SAMPLE_PERCENT


#: timed plugin calls not yet observed: (plugin, extension point, status) → seconds of each call
_pending: dict[tuple[str, str, str], list[float]] = {}


def plugin_call(plugin: str, extension_point: str, status: str, seconds: float) -> None:
    """One timed plugin call (``status``: the Status code's name, ``Success``, ``Unschedulable``...),
    buffered until :func:`flush_plugin_calls` — as kube-scheduler's metricsRecorder buffers
    ``ObservePluginDurationAsync`` and flushes on an interval (``metrics/metric_recorder.go``):
    a sampled cycle times every Filter call on every node it evaluates."""
    values = _pending.get((plugin, extension_point, status))
    if values is None:
        _pending[(plugin, extension_point, status)] = [seconds]
    else:
        values.append(seconds)


def plugin_calls(plugin: str, extension_point: str, status: str, seconds: float, count: int) -> None:
    """``count`` timed plugin calls of ``seconds`` each (a batch timed as one), buffered as
    :func:`plugin_call` buffers one."""
    values = _pending.get((plugin, extension_point, status))
    if values is None:
        _pending[(plugin, extension_point, status)] = [seconds] * count
    else:
        values.extend([seconds] * count)


def flush_plugin_calls() -> None:
    """Observe the buffered plugin calls (at the end of every attempt, :func:`attempt`), each
    key's calls counted into the histogram's buckets at once."""
    for key, values in _pending.items():
        observe_many(plugin_duration.get(key), values)
    _pending.clear()


def observe_many(child, values: list[float]) -> None:
    """``child.observe(v)`` for every ``v`` in ``values``, with one increment per bucket (a
    prometheus-client Histogram child: its non-cumulative bucket counters and its sum)."""
    bounds = child._upper_bounds
    counts = [0] * len(bounds)
    for v in values:
        counts[bisect_left(bounds, v)] += 1   # the first bound >= v, as observe's "v <= bound"
    for i, c in enumerate(counts):
        if c:
            child._buckets[i].inc(c)
    child._sum.inc(sum(values))


def watch_queue(pending: Callable[[], dict[str, int]]) -> None:
    """Read ``scheduler_pending_pods`` from ``pending()`` (the queue's counts per sub-queue) at scrape."""
    for label, key in (("active", "activeQ"), ("backoff", "backoffQ"), ("unschedulable", "unschedulable"),
                       ("gated", "gated")):
        def read(key: str = key) -> float:
            return pending().get(key, 0)
        pending_pods.labels(label).set_function(read)
