"""Explain records: what one scheduling attempt saw, for ``controlplane explain pod``.

Each attempt ends in a step-9 trace record whose ``data`` holds the per-node filter
verdicts and scores (:func:`explain_data`) while the cluster has at most
``--explain-max-nodes`` nodes; with ``--record-results`` the same verdicts also go on
the pod as the kube-scheduler-simulator result annotations
(``kube-scheduler-simulator.sigs.k8s.io/filter-result`` … ``selected-node``, written
by :class:`components.scheduler.status.PodStatusWriter`); the annotation names are
sigs.k8s.io/kube-scheduler-simulator's.
"""

from __future__ import annotations

import json
from typing import Any, Callable

from components.scheduler.framework import CycleState, Diagnosis, ScheduleResult
from components.scheduler.podinfo import PodInfo

ANNOTATION_PREFIX = "kube-scheduler-simulator.sigs.k8s.io/"
FILTER_RESULT = ANNOTATION_PREFIX + "filter-result"
SCORE_RESULT = ANNOTATION_PREFIX + "score-result"
FINAL_SCORE_RESULT = ANNOTATION_PREFIX + "finalscore-result"
SELECTED_NODE = ANNOTATION_PREFIX + "selected-node"

#: the result annotations kept for at most this many pods (oldest dropped first)
MAX_REMEMBERED = 10000


def explain_data(state: CycleState, node: str, *, result: ScheduleResult | None = None,
                 error: str = "", nominated: str | None = None,
                 diagnosis: Diagnosis | None = None) -> dict:
    """The step-9 record's ``data``: ``filterPlugins`` / ``scorePlugins`` (names, in
    order), ``filter`` (node → plugin → "passed" or the rejection reason), ``score``
    (node → plugin → normalised score 0..100), ``finalScore`` (× weight), ``total``
    (node → sum), ``weights``, ``selectedNode`` ("" on failure), ``error``,
    ``nominatedNodeName`` and ``victims`` after preemption. When the cluster is too
    big to record (``explain_max_nodes``) only ``recorded: false`` and the outcome."""
    fwk = state.framework
    data: dict[str, Any] = {"selectedNode": node}
    if error:
        data["error"] = error
    if nominated:
        data["nominatedNodeName"] = nominated
        if state.nominated is not None:
            data["victims"] = [v.key for v in state.nominated.victims]
    if not state.record:
        data["recorded"] = False
        return data
    # the cycle's own dicts, not copies: the state ends with this cycle
    filt = state.filter_results
    if diagnosis is not None:  # failures: add the diagnosis to a copy
        filt = {n: dict(d) for n, d in filt.items()}
        for n, st in diagnosis.node_to_status.items():
            d = filt.setdefault(n, {})
            if st.plugin and st.plugin not in d:
                d[st.plugin] = st.message()
    data.update({
        "recorded": True,
        "filterPlugins": [p.name for p in fwk.filter_plugins] if fwk else [],
        "scorePlugins": [p.name for p in fwk.score_plugins] if fwk else [],
        "weights": dict(fwk.weights) if fwk else {},
        "skippedFilters": sorted(state.skip_filter),
        "skippedScores": sorted(state.skip_score),
        "filter": filt,
        "score": state.score_results,
        "finalScore": state.final_scores,
        "total": result.scores if result is not None else {},
    })
    return data


class ExplainRecords:
    """The explain side of each attempt. ``trace``: a TraceEmitter or None (no step-9
    records); ``record_results``: keep the result annotations (:attr:`last_results`,
    pod key → annotations of its last attempt); ``max_nodes``: the largest cluster
    whose per-node verdicts are recorded."""

    def __init__(self, trace: Any = None, record_results: bool = False, max_nodes: int = 500) -> None:
        self.trace = trace
        self.record_results = record_results
        self.max_nodes = max_nodes
        self.last_results: dict[str, dict] = {}

    def wants_record(self, node_count: Callable[[], int]) -> bool:
        """Whether a cycle records per-node verdicts and scores (CycleState ``record``):
        something keeps them and the cluster (``node_count()`` nodes, asked only then:
        it counts) has at most ``max_nodes``."""
        return (self.record_results or self.trace is not None) and node_count() <= self.max_nodes

    def assumed(self, state: CycleState, pi: PodInfo, result: ScheduleResult) -> None:
        """A pod assumed on ``result.suggested_host``: the step-9 record "filtered N
        nodes → M feasible; scored; picked NODE; assumed" (detail: the ten best totals)
        and the result annotations."""
        node = result.suggested_host
        if self.trace is not None:
            ranked = result.best(10)   # a partial sort: only ten are shown
            detail = " ".join(f"{n}={s}" for n, s in ranked) + (" ..." if len(result.scored) > 10 else "")
            scored = "scored; " if ranked else "only one, not scored; "
            self.trace.emit(9, f"filtered {result.evaluated_nodes} nodes → {result.feasible_nodes} "
                               f"feasible; {scored}picked {node}; assumed", pi.pod,
                            detail=("scores: " + detail) if ranked else "single feasible node, not scored",
                            data=explain_data(state, node, result=result))
        self.remember(pi, state, node)

    def failed(self, state: CycleState, pi: PodInfo, current: dict, msg: str,
               nominated_node: str | None, diagnosis: Diagnosis | None) -> None:
        """A failed attempt: the step-9 record "no node fits; pod stays Pending" (or
        "…; nominated NODE (preempting)") on ``current`` (the informer's pod), detail
        ``msg``, and the result annotations."""
        if self.trace is not None:
            action = f"no node fits; nominated {nominated_node} (preempting)" if nominated_node \
                else "no node fits; pod stays Pending"
            self.trace.emit(9, action, current, detail=msg,
                            data=explain_data(state, "", error=msg, nominated=nominated_node,
                                              diagnosis=diagnosis))
        self.remember(pi, state, "")

    def remember(self, pi: PodInfo, state: CycleState, node: str) -> None:
        """Keep the last attempt's per-node filter verdicts and scores (the
        ``--record-results`` annotations)."""
        if not state.record or not self.record_results:
            return
        self.last_results[pi.key] = {
            FILTER_RESULT: json.dumps(state.filter_results, sort_keys=True),
            SCORE_RESULT: json.dumps({n: {p: str(s) for p, s in d.items()}
                                      for n, d in state.score_results.items()}, sort_keys=True),
            FINAL_SCORE_RESULT: json.dumps({n: {p: str(s) for p, s in d.items()}
                                            for n, d in state.final_scores.items()}, sort_keys=True),
            SELECTED_NODE: node,
        }
        if len(self.last_results) > MAX_REMEMBERED:
            self.last_results.pop(next(iter(self.last_results)))

    def annotations(self, key: str) -> dict:
        """The result annotations of the pod ``key``'s last attempt ({} if none)."""
        return self.last_results.get(key) or {}
