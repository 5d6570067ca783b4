"""The apiserver's ``/metrics`` in the Prometheus text exposition format (version 0.0.4).

Metric names and labels follow ``staging/src/k8s.io/apiserver/pkg/endpoints/metrics/metrics.go``:

* ``apiserver_request_total`` (counter) {verb, group, version, resource, subresource, scope, component, code}
* ``apiserver_request_duration_seconds`` (histogram, same labels but code; the real bucket bounds)
* ``apiserver_registered_watchers`` (gauge) {group, version, kind}, read from the watch caches
* ``apiserver_current_inflight_requests`` (gauge) {request_kind = readOnly | mutating}

No client library: counters are dicts keyed by label tuples; rendering is one pass.
"""

from __future__ import annotations

import bisect
from typing import Iterable

#: histogram bounds of apiserver_request_duration_seconds (seconds), as metrics.go
BUCKETS = (0.005, 0.025, 0.05, 0.1, 0.2, 0.4, 0.6, 0.8, 1.0, 1.25, 1.5, 2, 3, 4, 5, 6, 8, 10, 15, 20, 30,
           45, 60)
REQUEST_LABELS = ("verb", "group", "version", "resource", "subresource", "scope", "component")


def _esc(v: str) -> str:
    return v.replace("\\", "\\\\").replace("\n", "\\n").replace('"', '\\"')


def _labels(names: Iterable[str], values: Iterable[str]) -> str:
    return ",".join(f'{n}="{_esc(str(v))}"' for n, v in zip(names, values))


def _num(v: float) -> str:
    return repr(float(v)) if not float(v).is_integer() else str(int(v))


class Metrics:
    """Request counters and latency histograms; ``render(watchers, inflight)`` → exposition text."""

    def __init__(self) -> None:
        self.requests: dict[tuple, int] = {}
        self.durations: dict[tuple, list] = {}  # labels → [bucket counts..., count, sum]

    def observe(self, labels: tuple[str, ...], code: int, seconds: float) -> None:
        """Count one request (``labels`` in :data:`REQUEST_LABELS` order) and its latency."""
        key = labels + (str(code),)
        self.requests[key] = self.requests.get(key, 0) + 1
        h = self.durations.get(labels)
        if h is None:
            h = self.durations[labels] = [0] * len(BUCKETS) + [0, 0.0]
        i = bisect.bisect_left(BUCKETS, seconds)
        if i < len(BUCKETS):
            h[i] += 1
        h[-2] += 1
        h[-1] += seconds

    def render(self, watchers: dict[tuple[str, str, str], int], inflight: dict[str, int]) -> str:
        """The exposition text; ``watchers`` maps (group, version, kind) → count."""
        out = ["# HELP apiserver_request_total Counter of apiserver requests broken out for each verb, "
               "dry run value, group, version, resource, scope, component, and HTTP response code.",
               "# TYPE apiserver_request_total counter"]
        for k in sorted(self.requests):
            out.append(f"apiserver_request_total{{{_labels(REQUEST_LABELS + ('code',), k)}}} {self.requests[k]}")
        out += ["# HELP apiserver_request_duration_seconds Response latency distribution in seconds for each "
                "verb, dry run value, group, version, resource, subresource, scope and component.",
                "# TYPE apiserver_request_duration_seconds histogram"]
        for k in sorted(self.durations):
            h = self.durations[k]
            base = _labels(REQUEST_LABELS, k)
            cum = 0
            for le, n in zip(BUCKETS, h):
                cum += n
                out.append(f'apiserver_request_duration_seconds_bucket{{{base},le="{_num(le)}"}} {cum}')
            out.append(f'apiserver_request_duration_seconds_bucket{{{base},le="+Inf"}} {h[-2]}')
            out.append(f"apiserver_request_duration_seconds_sum{{{base}}} {h[-1]!r}")
            out.append(f"apiserver_request_duration_seconds_count{{{base}}} {h[-2]}")
        out += ["# HELP apiserver_registered_watchers Number of currently registered watchers for a given resources",
                "# TYPE apiserver_registered_watchers gauge"]
        for (g, v, kind), n in sorted(watchers.items()):
            out.append(f"apiserver_registered_watchers{{{_labels(('group', 'version', 'kind'), (g, v, kind))}}} {n}")
        out += ["# HELP apiserver_current_inflight_requests Maximal number of currently used inflight request "
                "limit of this apiserver per request kind in last second.",
                "# TYPE apiserver_current_inflight_requests gauge"]
        for kind in sorted(inflight):
            out.append(f'apiserver_current_inflight_requests{{request_kind="{kind}"}} {inflight[kind]}')
        return "\n".join(out) + "\n"
