"""DefaultPreemption (PostFilter): when no node fits, find a node where evicting
lower-priority pods makes the pod fit, evict them and nominate the node.

The search is :class:`components.scheduler.preemption.Evaluator`; acting on the chosen
candidate (DisruptionTarget condition + DELETE on each victim, ``Preempted`` events,
clearing lower-priority nominations) is the handle's ``prepare_candidate(candidate,
pod)`` (the Scheduler). The nominated node ends up in the result: ``state.nominated``
holds the chosen Candidate. Messages are kube-scheduler's ("preemption: 0/N nodes are
available: ...", "preemption: not eligible due to preemptionPolicy=Never.").
Args: ``minCandidateNodesPercentage`` (10), ``minCandidateNodesAbsolute`` (100).
Source: pkg/scheduler/framework/plugins/defaultpreemption/default_preemption.go and
pkg/scheduler/framework/preemption/preemption.go."""

from __future__ import annotations

from components.scheduler.framework import UNSCHEDULABLE, Status
from components.scheduler.preemption import (
    MIN_CANDIDATE_NODES_ABSOLUTE,
    MIN_CANDIDATE_NODES_PERCENTAGE,  # noqa: F401
    NOT_HELPFUL,
    Evaluator,
)

NAME = "DefaultPreemption"


class DefaultPreemption:
    """The DefaultPreemption PostFilter plugin (see the module docstring); ``args``:
    DefaultPreemptionArgs, ``handle``: the Scheduler (``rng``, ``nominated``: node →
    pod key → PodInfo, ``prepare_candidate``)."""

    name = NAME

    def __init__(self, args: dict | None = None, handle=None) -> None:
        args = args or {}
        self.handle = handle
        rng = getattr(handle, "rng", None)
        self.evaluator = Evaluator(
            rng, int(args.get("minCandidateNodesPercentage", MIN_CANDIDATE_NODES_PERCENTAGE)),
            int(args.get("minCandidateNodesAbsolute", MIN_CANDIDATE_NODES_ABSOLUTE)))

    def post_filter(self, state, pod, snapshot, diagnosis) -> Status:
        fwk = getattr(state, "framework", None)
        if fwk is None:  # no framework to dry-run filters with
            return Status(UNSCHEDULABLE, "preemption: " + NOT_HELPFUL)
        nominated = getattr(self.handle, "nominated", None)
        run_filter = None
        if nominated:
            def run_filter(st, p, node):  # RunFilterPluginsWithNominatedPods
                return fwk.run_filter_with_nominated(st, p, node, nominated.get(node.name))
        cand, st = self.evaluator.preempt(fwk, state, pod, snapshot, diagnosis, run_filter)
        if cand is None:
            return Status(st.code, "preemption: " + st.message())
        state.nominated = cand
        prepare = getattr(self.handle, "prepare_candidate", None)
        if prepare is not None:
            prepare(cand, pod)
        return st
