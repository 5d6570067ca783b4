"""Preemption: find a node where evicting lower-priority pods lets the pod fit, pick the
victims, and choose one node among the candidates.

This is the generic evaluator behind the DefaultPreemption PostFilter plugin. Sources:
``pkg/scheduler/framework/preemption/preemption.go`` (Evaluator.Preempt, findCandidates,
DryRunPreemption, SelectCandidate, pickOneNodeForPreemption, prepareCandidate,
getLowerPriorityNominatedPods) and
``pkg/scheduler/framework/plugins/defaultpreemption/default_preemption.go``
(SelectVictimsOnNode, PodEligibleToPreemptOthers, calculateNumCandidates),
``pkg/scheduler/util/utils.go`` (MoreImportantPod, GetPodStartTime,
GetEarliestPodStartTime).

Priority is ``spec.priority`` (an int). The apiserver does not serve PriorityClasses
(scheduling.k8s.io/v1), so ``priorityClassName`` is not resolved: a pod's priority is
whatever integer its spec carries (0 when unset, by admission defaults). PodDisruptionBudgets
are not served either, so no victim ever violates one.

Each node's dry run works on a clone of the cycle state; removing (and re-adding) a
potential victim runs the PreFilter extensions' RemovePod (AddPod), so InterPodAffinity
and PodTopologySpread judge the node without the victims
(``RunPreFilterExtensionRemovePod``); the dry run filters with the pods nominated to
the node (priority >= the preemptor's) counted, as ``RunFilterPluginsWithNominatedPods``.
"""

from __future__ import annotations

import logging
import random
from dataclasses import dataclass, field
from typing import Any, Callable

from components.scheduler.framework import (
    NO_NODE_AVAILABLE_MSG,
    SUCCESS,
    UNSCHEDULABLE,
    UNSCHEDULABLE_AND_UNRESOLVABLE,
    CycleState,
    Diagnosis,
    Status,
    histogram,
)
from components.scheduler.podinfo import PodInfo
from controlplane import apitime
from controlplane.log import event

log = logging.getLogger("scheduler.preemption")

NOT_HELPFUL = "Preemption is not helpful for scheduling"
NO_VICTIMS = "No preemption victims found for incoming pod"
NOT_ELIGIBLE_NEVER = "not eligible due to preemptionPolicy=Never."
NOT_ELIGIBLE_TERMINATING = "not eligible due to a terminating pod on the nominated node."

#: DefaultPreemptionArgs defaults (apis/config/v1/defaults.go)
MIN_CANDIDATE_NODES_PERCENTAGE = 10
MIN_CANDIDATE_NODES_ABSOLUTE = 100

_MAX_INT32 = 2**31 - 1
_FAR_FUTURE = float("inf")


def pod_start_time(pi: PodInfo) -> float:
    """``status.startTime`` as epoch seconds; a pod not started yet counts as starting
    now, i.e. newest (util.GetPodStartTime)."""
    st = ((pi.pod.get("status") or {}).get("startTime")
          or (pi.pod.get("metadata") or {}).get("creationTimestamp"))
    t = apitime.time_or_none(st)
    return _FAR_FUTURE if t is None else t


def _importance_key(pi: PodInfo) -> tuple:
    """Sort key putting the more important pod first: higher priority, then the one that
    started earlier (util.MoreImportantPod)."""
    return (-pi.priority, pod_start_time(pi))


def is_terminating_by_preemption(pod: dict) -> bool:
    """A pod with deletionTimestamp and a DisruptionTarget=True/PreemptionByScheduler
    condition (default_preemption.go podTerminatingByPreemption)."""
    if not (pod.get("metadata") or {}).get("deletionTimestamp"):
        return False
    for c in (pod.get("status") or {}).get("conditions") or []:
        if c.get("type") == "DisruptionTarget":
            return c.get("status") == "True" and c.get("reason") == "PreemptionByScheduler"
    return False


@dataclass
class Candidate:
    """A node where preemption helps: ``name`` and ``victims`` (PodInfos, most
    important first)."""

    name: str
    victims: list[PodInfo] = field(default_factory=list)


def num_candidates(num_nodes: int, percentage: int = MIN_CANDIDATE_NODES_PERCENTAGE,
                   absolute: int = MIN_CANDIDATE_NODES_ABSOLUTE) -> int:
    """How many candidate nodes to dry-run for: ``max(n*pct/100, abs)`` capped at n
    (default_preemption.go calculateNumCandidates)."""
    n = num_nodes * percentage // 100
    return min(max(n, absolute), num_nodes)


def select_victims_on_node(run_filter: Callable[[Any], Status | None], pod: PodInfo,
                           node: Any,
                           removed_hook: Callable[[PodInfo], Status] | None = None,
                           added_hook: Callable[[PodInfo], Status] | None = None,
                           ) -> tuple[list[PodInfo], Status]:
    """The fewest, least important pods to evict from ``node`` so that ``pod`` fits.

    Removes every pod of lower priority; if the pod still does not fit, returns the
    filter's status. Otherwise re-adds the potential victims most important first,
    keeping each one whose return still lets the pod fit ("reprieve"). ``removed_hook``
    / ``added_hook(pod_info) -> Status`` run after each removal / re-addition: the
    PreFilter extensions' RemovePod / AddPod on the dry run's cycle state, so plugins
    with pre-computed counts (InterPodAffinity, PodTopologySpread) see the victims
    gone; a non-success from them ends the dry run with that status. ``node`` is
    restored before returning. Returns (victims most important first, status):
    UnschedulableAndUnresolvable "No preemption victims found for incoming pod" when
    no pod has lower priority (SelectVictimsOnNode).
    """
    potential = [p for p in node.pods.values() if p.priority < pod.priority]
    if not potential:
        return [], Status(UNSCHEDULABLE_AND_UNRESOLVABLE, NO_VICTIMS)
    removed: list[PodInfo] = []
    st: Status | None
    try:
        for p in potential:
            node.remove_pod(p.key)
            removed.append(p)
            if removed_hook is not None:
                st = removed_hook(p)
                if not st.is_success():
                    return [], st
        st = run_filter(node)
        if st is not None and not st.is_success():
            return [], st
        potential.sort(key=_importance_key)
        victims: list[PodInfo] = []
        for p in potential:
            node.add_pod(p)
            if added_hook is not None:
                st = added_hook(p)
                if not st.is_success():
                    return [], st
            st = run_filter(node)
            if st is not None and not st.is_success():
                node.remove_pod(p.key)
                if removed_hook is not None:
                    st = removed_hook(p)
                    if not st.is_success():
                        return [], st
                victims.append(p)
        return victims, Status()
    finally:
        for p in removed:
            if p.key not in node.pods:
                node.add_pod(p)


def pick_one_node_for_preemption(candidates: list[Candidate]) -> str | None:
    """Among candidates, in order: no victims at all; the lowest highest-priority
    victim; the lowest sum of victim priorities; the fewest victims; the latest
    earliest start time among the highest-priority victims; the first
    (preemption.go pickOneNodeForPreemption; PDB violations are always 0 here)."""
    if not candidates:
        return None
    for c in candidates:
        if not c.victims:
            return c.name

    def narrow(cands: list[Candidate], key: Callable[[Candidate], float]) -> list[Candidate]:
        best = min(key(c) for c in cands)
        return [c for c in cands if key(c) == best]

    cands = narrow(candidates, lambda c: c.victims[0].priority)
    if len(cands) > 1:
        cands = narrow(cands, lambda c: sum(v.priority + _MAX_INT32 + 1 for v in c.victims))
    if len(cands) > 1:
        cands = narrow(cands, lambda c: len(c.victims))
    if len(cands) > 1:
        def earliest_of_highest(c: Candidate) -> float:
            top = c.victims[0].priority
            return min(pod_start_time(v) for v in c.victims if v.priority == top)
        cands = narrow(cands, lambda c: -earliest_of_highest(c))
    return cands[0].name


class Evaluator:
    """Runs preemption for one pod in one framework.

    ``nominated_pods(node_name) -> list[PodInfo]``: pods nominated onto a node (for
    clearing lower-priority nominations); ``rng``: random.Random for the dry-run offset.
    """

    def __init__(self, rng: random.Random | None = None,
                 min_candidate_nodes_percentage: int = MIN_CANDIDATE_NODES_PERCENTAGE,
                 min_candidate_nodes_absolute: int = MIN_CANDIDATE_NODES_ABSOLUTE) -> None:
        self.rng = rng or random.Random()
        self.pct = min_candidate_nodes_percentage
        self.abs = min_candidate_nodes_absolute

    def eligible(self, pod: PodInfo, snapshot: Any, diagnosis: Diagnosis) -> tuple[bool, str]:
        """PodEligibleToPreemptOthers: not with preemptionPolicy Never, nor while a
        lower-priority pod preempted for it is still terminating on its nominated node
        (unless that node is now UnschedulableAndUnresolvable)."""
        spec = pod.pod.get("spec") or {}
        if spec.get("preemptionPolicy") == "Never":
            return False, NOT_ELIGIBLE_NEVER
        nom = (pod.pod.get("status") or {}).get("nominatedNodeName")
        if nom:
            st = diagnosis.node_to_status.get(nom)
            if st is not None and st.code == UNSCHEDULABLE_AND_UNRESOLVABLE:
                return True, ""
            ni = snapshot.get(nom)
            if ni is not None:
                for p in ni.pods.values():
                    if p.priority < pod.priority and is_terminating_by_preemption(p.pod):
                        return False, NOT_ELIGIBLE_TERMINATING
        return True, ""

    def find_candidates(self, fwk: Any, state: CycleState, pod: PodInfo, snapshot: Any,
                        diagnosis: Diagnosis,
                        run_filter: Callable[[CycleState, PodInfo, Any], Status | None] | None = None,
                        ) -> tuple[list[Candidate], dict[str, Status]]:
        """Dry-run preemption on the nodes where it might help (those not rejected as
        UnschedulableAndUnresolvable), from a random offset, until enough candidates.
        ``run_filter(state, pod, node)``: the filter of the dry run (default the
        framework's; the scheduler passes its filter with nominated pods, as
        SelectVictimsOnNode runs RunFilterPluginsWithNominatedPods).
        Returns (candidates, node name → status for nodes where it did not help)."""
        run_filter = run_filter or fwk.run_filter
        nodes = snapshot.nodes
        potential = []
        for n in nodes:
            st = diagnosis.node_to_status.get(n.name)
            if st is None or st.code != UNSCHEDULABLE_AND_UNRESOLVABLE:
                potential.append(n)
        statuses: dict[str, Status] = {}
        if not potential:
            return [], statuses
        want = num_candidates(len(potential), self.pct, self.abs)
        offset = self.rng.randrange(len(potential))
        record, state.record = state.record, False  # dry runs are not the pod's verdicts
        try:
            candidates: list[Candidate] = []
            for i in range(len(potential)):
                ni = potential[(offset + i) % len(potential)]
                dry = state.clone()  # DryRunPreemption: one state copy per node
                # the hooks run during the call only: binding this iteration's dry and ni is safe
                victims, st = select_victims_on_node(
                    lambda node: run_filter(dry, pod, node), pod, ni,
                    lambda p: fwk.run_pre_filter_extension_remove_pod(dry, pod, p, ni),
                    lambda p: fwk.run_pre_filter_extension_add_pod(dry, pod, p, ni))
                if st.is_success() and victims:
                    candidates.append(Candidate(ni.name, victims))
                    if len(candidates) >= want:
                        break
                    continue
                if st.is_success():
                    st = Status(UNSCHEDULABLE, f'expected at least one victim pod on node "{ni.name}"')
                statuses[ni.name] = st
        finally:
            state.record = record
        return candidates, statuses

    def preempt(self, fwk: Any, state: CycleState, pod: PodInfo, snapshot: Any,
                diagnosis: Diagnosis, run_filter: Callable[[CycleState, PodInfo, Any], Status | None] | None = None,
                ) -> tuple[Candidate | None, Status]:
        """The whole PostFilter: eligibility, candidates, the best candidate
        (``run_filter`` as for :meth:`find_candidates`). Returns (the chosen Candidate,
        Success) or (None, Unschedulable with kube-scheduler's message without the
        ``preemption: `` prefix)."""
        ok, why = self.eligible(pod, snapshot, diagnosis)
        if not ok:
            return None, Status(UNSCHEDULABLE, why)
        candidates, statuses = self.find_candidates(fwk, state, pod, snapshot, diagnosis, run_filter)
        if not candidates:
            reasons = []
            for n in snapshot.nodes:
                st = statuses.get(n.name)
                reasons.append(st.reasons if st is not None else [NOT_HELPFUL])
            msg = f"{NO_NODE_AVAILABLE_MSG.format(len(snapshot.nodes))}: {histogram(reasons)}."
            return None, Status(UNSCHEDULABLE, msg)
        best = pick_one_node_for_preemption(candidates)
        chosen = next(c for c in candidates if c.name == best)
        event(log, "preemption.candidate", pod=pod.key, node=chosen.name,
              victims=",".join(v.key for v in chosen.victims), candidates=len(candidates))
        return chosen, Status(SUCCESS)
