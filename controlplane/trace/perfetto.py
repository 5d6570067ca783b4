"""The step records in the Chrome Trace Event format, which Perfetto (ui.perfetto.dev) and
chrome://tracing open: ``{"traceEvents": [...], "displayTimeUnit": "ms"}``
(the "Trace Event Format" document of the Chromium project).

* one process per swimlane of :mod:`controlplane.trace.html` (client, apiserver, etcd,
  controller-manager, scheduler, kubelet), named by ``process_name`` metadata events (``ph: M``)
  and ordered by ``process_sort_index``;
* one thread per object within it (``Kind namespace/name``, ``thread_name`` metadata);
* each record an instant event (``ph: i``, thread scope) named ``N. action`` at its time in
  microseconds since ``t0``, with the step's title, the object, resourceVersion and detail in ``args``;
* per object and lane, a complete event (``ph: X``) from its first record to its last, named
  after the object, so the flow reads as bars.

Deterministic for the same records (the golden-file test relies on it).
"""

from __future__ import annotations

from typing import Any, Iterable

from controlplane.trace.html import LANES, lane_of
from controlplane.trace.record import STEPS, StepRecord


def _object_name(rec: StepRecord) -> str:
    o = rec.object
    where = f"{o['namespace']}/{o.get('name', '')}" if o.get("namespace") else o.get("name", "")
    return f"{o.get('kind', '')} {where}".strip() or "(cluster)"


def chrome_trace(records: Iterable[StepRecord], t0: float | None = None) -> dict[str, Any]:
    """The trace document for ``records`` (any order); times relative to ``t0`` (epoch seconds,
    default the earliest record), in microseconds."""
    recs = sorted(records, key=lambda r: (r.time, r.step))
    if t0 is None:
        t0 = recs[0].time if recs else 0.0
    events: list[dict[str, Any]] = []
    for i, lane in enumerate(LANES):
        pid = i + 1
        events.append({"ph": "M", "name": "process_name", "pid": pid, "tid": 0, "args": {"name": lane}})
        events.append({"ph": "M", "name": "process_sort_index", "pid": pid, "tid": 0, "args": {"sort_index": i}})
    threads: dict[tuple[int, str], int] = {}
    spans: dict[tuple[int, int], list[float]] = {}
    for r in recs:
        pid = LANES.index(lane_of(r)) + 1
        name = _object_name(r)
        tid = threads.get((pid, name))
        if tid is None:
            tid = threads[(pid, name)] = len([k for k in threads if k[0] == pid]) + 1
            events.append({"ph": "M", "name": "thread_name", "pid": pid, "tid": tid, "args": {"name": name}})
        ts = round((r.time - t0) * 1e6, 3)
        args: dict[str, Any] = {"step": r.step, "title": STEPS.get(r.step, ""), "component": r.component,
                                "object": dict(r.object)}
        if r.resourceVersion:
            args["resourceVersion"] = r.resourceVersion
        if r.detail:
            args["detail"] = r.detail
        events.append({"ph": "i", "s": "t", "name": f"{r.step}. {r.action}", "cat": "step", "pid": pid,
                       "tid": tid, "ts": ts, "args": args})
        span = spans.setdefault((pid, tid), [ts, ts])
        span[1] = ts
    names = {(pid, tid): name for (pid, name), tid in threads.items()}
    for (pid, tid), (start, end) in spans.items():
        events.append({"ph": "X", "name": names[(pid, tid)], "cat": "object", "pid": pid, "tid": tid,
                       "ts": start, "dur": round(max(end - start, 1.0), 3)})
    return {"traceEvents": events, "displayTimeUnit": "ms"}
