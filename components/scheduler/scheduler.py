"""The scheduler: informers feed the cache and the queue; one scheduling cycle at a
time pops a pod, filters and scores nodes, assumes the pod onto the best node, and
hands it to an asynchronous binding cycle so the next pod can be scheduled while
the previous one binds.

Source: ``pkg/scheduler/schedule_one.go`` (ScheduleOne, schedulePod,
findNodesThatFitPod, prioritizeNodes, selectHost, assume, bindingCycle,
handleSchedulingFailure), ``pkg/scheduler/eventhandlers.go`` (informer wiring).

Outcomes are kube-scheduler's: Event ``Scheduled`` "Successfully assigned NS/NAME to
NODE"; on failure Event ``FailedScheduling`` with the FitError message and the pod's
``PodScheduled`` condition False/``Unschedulable``. Trace steps 1, 9 and 10 of seed 000.
"""

from __future__ import annotations

import asyncio
import json
import logging
import random
from dataclasses import dataclass
from typing import Any, Callable

from components.scheduler.cache import Cache
from components.scheduler.config import DEFAULT_SCHEDULER_NAME, SchedulerConfig, build_framework
from components.scheduler.framework import (
    ERROR,
    CycleState,
    Diagnosis,
    FitError,
    Framework,
    Status,
    num_feasible_nodes_to_find,
)
from components.scheduler.podinfo import PodInfo
from components.scheduler.queue import QueuedPodInfo, SchedulingQueue
from controlplane.api.resources import PODS
from controlplane.apitime import now as _now
from controlplane.log import event

log = logging.getLogger("scheduler")

ANNOTATION_PREFIX = "kube-scheduler-simulator.sigs.k8s.io/"
FILTER_RESULT = ANNOTATION_PREFIX + "filter-result"
SCORE_RESULT = ANNOTATION_PREFIX + "score-result"
FINAL_SCORE_RESULT = ANNOTATION_PREFIX + "finalscore-result"
SELECTED_NODE = ANNOTATION_PREFIX + "selected-node"

ERR_NO_NODES = "no nodes available to schedule pods"
#: PodScheduled=False reason and message of a pod with scheduling gates (core/v1 PodReasonSchedulingGated)
SCHEDULING_GATED = "SchedulingGated"
SCHEDULING_GATED_MSG = "Scheduling is blocked due to non-empty scheduling gates"


class NoNodesAvailable(Exception):
    """The cache has no nodes (schedule_one.go ErrNoNodesAvailable)."""


@dataclass
class ScheduleResult:
    """``suggested_host``, ``evaluated_nodes`` (filtered), ``feasible_nodes`` and the
    final ``scores`` (node name → weighted total) of one successful cycle."""

    suggested_host: str
    evaluated_nodes: int
    feasible_nodes: int
    scores: dict[str, int]


def is_assigned(pod: dict) -> bool:
    return bool((pod.get("spec") or {}).get("nodeName"))


def is_deleting(pod: dict) -> bool:
    return bool((pod.get("metadata") or {}).get("deletionTimestamp"))


def scheduler_name_of(pod: dict) -> str:
    return (pod.get("spec") or {}).get("schedulerName") or DEFAULT_SCHEDULER_NAME


class Scheduler:
    """Scheduling with one or more profiles.

    ``client``: a RestClient (used by DefaultBinder, status patches and preemption
    deletes); ``config``: :class:`SchedulerConfig`; ``recorder``: an EventRecorder
    (component ``default-scheduler``) or None; ``trace``: a TraceEmitter or None (each
    attempt's per-node filter verdicts and scores go into the step-9 record's ``data``
    when the cluster has at most ``explain_max_nodes`` nodes);
    ``record_results``: also write the kube-scheduler-simulator result annotations on
    the pod (off by default: kube-scheduler writes nothing on pods but the binding,
    conditions and nominatedNodeName);
    ``pod_lister``: key → current pod dict (the pods informer's store) or None;
    ``rng``: random.Random for tie-breaks. Plugins get this object as their handle.
    """

    def __init__(self, client: Any, config: SchedulerConfig | None = None, *,
                 recorder: Any = None, trace: Any = None, record_results: bool = False,
                 explain_max_nodes: int = 500,
                 pod_lister: Callable[[str], dict | None] | None = None,
                 rng: random.Random | None = None,
                 binder_override: Any = None) -> None:
        self.client = client
        self.config = config or SchedulerConfig()
        self.recorder = recorder
        self.trace = trace
        self.record_results = record_results
        self.explain_max_nodes = explain_max_nodes
        self.pod_lister = pod_lister
        self.rng = rng or random.Random()
        #: plural → store with ``get(key)`` / ``list()`` (services, replicationcontrollers,
        #: replicasets, statefulsets): PodTopologySpread's default selector
        self.listers: dict[str, Any] = {}
        self.profiles: dict[str, Framework] = {}
        for p in self.config.profiles:
            fwk = build_framework(p, self, self.config.percentage_of_nodes_to_score)
            if binder_override is not None:
                fwk.bind_plugins = [binder_override]
            self.profiles[fwk.scheduler_name] = fwk
        first = next(iter(self.profiles.values()))
        events: dict[tuple[str, str], set[str]] = {}
        for fwk in self.profiles.values():
            for k, v in fwk.plugins_for_event().items():
                events.setdefault(k, set()).update(v)
        less = first.queue_sort.less if first.queue_sort else None
        self.cache = Cache()
        gating = any(f.pre_enqueue_plugins for f in self.profiles.values())
        self.queue = SchedulingQueue(less, initial_backoff=self.config.pod_initial_backoff_seconds,
                                     max_backoff=self.config.pod_max_backoff_seconds,
                                     plugins_for_event=events,
                                     pre_enqueue=self.run_pre_enqueue if gating else None)
        self.next_start_node_index = 0
        self._binding_tasks: set[asyncio.Task] = set()
        self._bg_tasks: set[asyncio.Task] = set()
        self.last_results: dict[str, dict] = {}   # pod key -> explain record of the last attempt
        self._step1_done = False
        #: the nominator: node name -> pod key -> PodInfo of pods nominated there
        self.nominated: dict[str, dict[str, PodInfo]] = {}
        self._nominated_node: dict[str, str] = {}

    # -- informer wiring (eventhandlers.go) ------------------------------------------
    def responsible_for(self, pod: dict) -> bool:
        return scheduler_name_of(pod) in self.profiles

    # -- the nominator (backend/queue/nominator.go) -------------------------------------
    def add_nominated(self, pi: PodInfo, node: str) -> None:
        """Reserve ``node`` for ``pi`` in later cycles of pods of lower priority."""
        self.delete_nominated(pi.key)
        if node:
            self.nominated.setdefault(node, {})[pi.key] = pi
            self._nominated_node[pi.key] = node

    def delete_nominated(self, key: str) -> None:
        node = self._nominated_node.pop(key, None)
        if node is not None:
            d = self.nominated.get(node) or {}
            d.pop(key, None)
            if not d:
                self.nominated.pop(node, None)

    def _update_nominated(self, pod: dict) -> None:
        nom = (pod.get("status") or {}).get("nominatedNodeName") or ""
        pi_key = PodInfo.key_of(pod)
        if is_assigned(pod) or is_deleting(pod) or not nom or not self.responsible_for(pod):
            self.delete_nominated(pi_key)
        elif self._nominated_node.get(pi_key) != nom:
            try:
                self.add_nominated(PodInfo(pod), nom)
            except ValueError:
                pass

    def run_pre_enqueue(self, pi: PodInfo) -> Status | None:
        """The PreEnqueue plugins of the pod's profile (the queue asks before each move
        into activeQ); None when no profile is responsible."""
        fwk = self.profiles.get(scheduler_name_of(pi.pod))
        return fwk.run_pre_enqueue(pi) if fwk is not None else None

    def _note_gated(self, pod: dict) -> None:
        """A pod the queue keeps gated and that carries no PodScheduled condition yet
        gets PodScheduled=False, reason ``SchedulingGated``, message "Scheduling is
        blocked due to non-empty scheduling gates" (what kube-apiserver's pod strategy
        writes on create, registry/core/pod/strategy.go applySchedulingGatedCondition;
        written here when the apiserver did not, so ``kubectl get pods`` shows
        SchedulingGated)."""
        qp = self.queue.pods.get(PodInfo.key_of(pod))
        if qp is None or not qp.gated or self.client is None:
            return
        conds = (pod.get("status") or {}).get("conditions") or []
        if any(c.get("type") == "PodScheduled" for c in conds):
            return
        self._spawn(self._patch_gated(qp.pod_info))

    async def _patch_gated(self, pi: PodInfo) -> None:
        cond = {"type": "PodScheduled", "status": "False", "lastProbeTime": None,
                "lastTransitionTime": _now(), "reason": SCHEDULING_GATED, "message": SCHEDULING_GATED_MSG}
        try:
            await self.client.patch(PODS, pi.name, {"status": {"conditions": [cond]}}, pi.namespace,
                                    patch_type="strategic", subresource="status")
        except Exception as e:  # gone meanwhile
            event(log, "pod.status_patch_failed", logging.WARNING, pod=pi.key, error=str(e)[:200])

    def on_pod_add(self, pod: dict) -> None:
        self._update_nominated(pod)
        if is_assigned(pod):
            self.cache.add_pod(pod)
            self.queue.move_all_to_active_or_backoff("Pod", "Add")
        elif self.responsible_for(pod) and not is_deleting(pod):
            self.queue.add(pod)
            self._note_gated(pod)

    def on_pod_update(self, old: dict, new: dict) -> None:
        self._update_nominated(new)
        if is_assigned(new):
            if not is_assigned(old):
                self.queue.delete(new)
            self.cache.update_pod(old, new)
            if ((old.get("metadata") or {}).get("labels") or {}) != \
                    ((new.get("metadata") or {}).get("labels") or {}):
                self.queue.move_all_to_active_or_backoff("Pod", "UpdatePodLabel")
        elif is_deleting(new):
            self.queue.delete(new)
        elif self.responsible_for(new):
            self.queue.update(new, old)

    def on_pod_delete(self, pod: dict) -> None:
        self.delete_nominated(PodInfo.key_of(pod))
        if is_assigned(pod) or self.cache.has_pod(PodInfo(pod).key):
            self.cache.remove_pod(pod)
            self.queue.move_all_to_active_or_backoff("Pod", "Delete")
        self.queue.delete(pod)

    def on_node_add(self, node: dict) -> None:
        try:
            self.cache.add_node(node)
        except ValueError as e:
            event(log, "node.invalid", logging.WARNING, node=(node.get("metadata") or {}).get("name"),
                  error=str(e))
            return
        self.queue.move_all_to_active_or_backoff("Node", "Add")

    def on_node_update(self, old: dict, new: dict) -> None:
        try:
            self.cache.update_node(new)
        except ValueError as e:
            event(log, "node.invalid", logging.WARNING, node=(new.get("metadata") or {}).get("name"),
                  error=str(e))
            return
        for action in node_update_actions(old, new):
            self.queue.move_all_to_active_or_backoff("Node", action)

    def on_node_delete(self, node: dict) -> None:
        self.cache.remove_node((node.get("metadata") or {}).get("name") or "")
        self.queue.move_all_to_active_or_backoff("Node", "Delete")

    def on_namespace_add(self, ns: dict) -> None:
        """Namespaces informer: labels for namespaceSelector terms."""
        self.cache.set_namespace(ns)
        self.queue.move_all_to_active_or_backoff("Namespace", "Add")

    def on_namespace_update(self, old: dict, new: dict) -> None:
        self.cache.set_namespace(new)
        if ((old.get("metadata") or {}).get("labels") or {}) != \
                ((new.get("metadata") or {}).get("labels") or {}):
            self.queue.move_all_to_active_or_backoff("Namespace", "Update")

    def on_namespace_delete(self, ns: dict) -> None:
        self.cache.remove_namespace((ns.get("metadata") or {}).get("name") or "")

    def on_pods_watch_started(self, rv: str) -> None:
        if self.trace is not None and not self._step1_done:
            self._step1_done = True
            self.trace.emit(1, "scheduler informers watching pods and nodes",
                            {"kind": "Pod", "metadata": {"resourceVersion": rv}}, kind="Pod",
                            detail=f"list+watch pods (all namespaces) and nodes from resourceVersion {rv}")

    # -- the scheduling cycle ----------------------------------------------------------
    async def run(self) -> None:
        """Schedule forever (until cancelled)."""
        flusher = asyncio.create_task(self.queue.run_flushers())
        try:
            while True:
                qp = await self.queue.pop()
                self.schedule_one(qp)
                await asyncio.sleep(0)  # let informers and binding cycles run
        finally:
            flusher.cancel()
            self.queue.close()

    def schedule_one(self, qp: QueuedPodInfo) -> ScheduleResult | None:
        """One scheduling cycle for ``qp`` (synchronous; the binding cycle is spawned
        as a task). Returns the result, or None when the pod failed or was skipped."""
        pi = qp.pod_info
        pod = pi.pod
        fwk = self.profiles.get(scheduler_name_of(pod))
        if fwk is None or is_deleting(pod) or self.cache.has_pod(pi.key):
            self.queue.done(pi.key)
            return None
        cycle = self.queue.scheduling_cycle
        record = (self.record_results or self.trace is not None) and \
            self.cache.node_count() <= self.explain_max_nodes
        state = CycleState(record=record, framework=fwk)
        try:
            result = self.schedule_pod(fwk, state, pi)
        except FitError as fe:
            st = fwk.run_post_filter(state, pi, self.cache.snapshot(), fe.diagnosis)
            if st.is_rejected() and st.message():
                fe.diagnosis.post_filter_msg = st.message()
            nominated = state.nominated.name if st.is_success() and state.nominated else None
            self.handle_failure(fwk, state, qp, fe, cycle, nominated_node=nominated)
            return None
        except NoNodesAvailable:
            self.handle_failure(fwk, state, qp, NoNodesAvailable(ERR_NO_NODES), cycle)
            return None
        except Exception as e:  # a plugin error: retry with backoff
            event(log, "schedule.error", logging.ERROR, pod=pi.key, error=f"{type(e).__name__}: {e}")
            self.handle_failure(fwk, state, qp, e, cycle)
            return None
        node = result.suggested_host
        self.cache.assume_pod(pi, node)
        st = fwk.run_reserve(state, pi, node)
        if st.is_success():
            st = fwk.run_permit(state, pi, node)
        if not st.is_success():
            fwk.run_unreserve(state, pi, node)
            self.cache.forget_pod(pi.key)
            self.handle_failure(fwk, state, qp, RuntimeError(st.message()), cycle)
            return None
        ranked = sorted(result.scores.items(), key=lambda kv: (-kv[1], kv[0]))
        detail = " ".join(f"{n}={s}" for n, s in ranked[:10]) + (" ..." if len(ranked) > 10 else "")
        event(log, "pod.assumed", pod=pi.key, node=node, evaluated=result.evaluated_nodes,
              feasible=result.feasible_nodes, attempts=qp.attempts)
        if self.trace is not None:
            scored = "scored; " if ranked else "only one, not scored; "
            self.trace.emit(9, f"filtered {result.evaluated_nodes} nodes → {result.feasible_nodes} "
                               f"feasible; {scored}picked {node}; assumed", pod,
                            detail=("scores: " + detail) if ranked else "single feasible node, not scored",
                            data=self.explain_data(state, node, result=result))
        self.remember(pi, state, node)
        t = asyncio.get_running_loop().create_task(self.binding_cycle(fwk, state, qp, node, cycle))
        self._binding_tasks.add(t)
        t.add_done_callback(self._binding_tasks.discard)
        return result

    def schedule_pod(self, fwk: Framework, state: CycleState, pi: PodInfo) -> ScheduleResult:
        """Filter then score; raises FitError or NoNodesAvailable (schedulePod)."""
        snapshot = self.cache.snapshot()
        if len(snapshot) == 0:
            raise NoNodesAvailable(ERR_NO_NODES)
        feasible, diagnosis, evaluated = self.find_nodes_that_fit(fwk, state, pi, snapshot)
        if not feasible:
            raise FitError(pi.key, len(snapshot), diagnosis)
        if len(feasible) == 1:
            return ScheduleResult(feasible[0].name, evaluated, 1, {})
        totals = fwk.run_score(state, pi, feasible, snapshot)
        host = self.select_host(feasible, totals)
        return ScheduleResult(host, evaluated, len(feasible),
                              {n.name: s for n, s in zip(feasible, totals)})

    def find_nodes_that_fit(self, fwk: Framework, state: CycleState, pi: PodInfo, snapshot):
        """PreFilter then Filter, from a rotating start, stopping once enough feasible
        nodes are found (findNodesThatFitPod / findNodesThatPassFilters).
        Returns (feasible NodeInfos, Diagnosis, number of nodes evaluated)."""
        diagnosis = Diagnosis()
        nodes = snapshot.nodes
        st = fwk.run_pre_filter(state, pi, snapshot)
        if not st.is_success():
            if st.code == ERROR:
                raise RuntimeError(f"running PreFilter plugin {st.plugin}: {st.message()}")
            for n in nodes:
                diagnosis.node_to_status[n.name] = st
            diagnosis.pre_filter_msg = st.message()
            diagnosis.unschedulable_plugins.add(st.plugin)
            return [], diagnosis, 0
        n_all = len(nodes)
        want = num_feasible_nodes_to_find(fwk.percentage_of_nodes_to_score, n_all)
        start = self.next_start_node_index % n_all
        feasible = []
        run_filter = fwk.filter_runner(state)
        if self.nominated:
            def run_filter(state, pod, node, _fwk=fwk):
                return self.run_filter_with_nominated(_fwk, state, pod, node)
        statuses = diagnosis.node_to_status
        evaluated = 0
        for i in range(n_all):
            node = nodes[(start + i) % n_all]
            evaluated += 1
            s = run_filter(state, pi, node)
            if s is None:
                feasible.append(node)
                if len(feasible) >= want:
                    break
            elif s.code == ERROR:
                raise RuntimeError(f"running Filter plugin {s.plugin}: {s.message()}")
            else:
                statuses[node.name] = s
                diagnosis.unschedulable_plugins.add(s.plugin)
        self.next_start_node_index = (start + evaluated) % n_all
        return feasible, diagnosis, evaluated

    def run_filter_with_nominated(self, fwk: Framework, state: CycleState, pi: PodInfo,
                                  node) -> Status | None:
        """Filter ``node`` as if the pods nominated there with priority >= the pod's
        were already on it — on the node and, through the PreFilter extensions' AddPod,
        in a clone of the cycle state (InterPodAffinity and PodTopologySpread counts) —
        then (if that passes) as it is; the pod must pass both
        (framework.go RunFilterPluginsWithNominatedPods, addNominatedPods)."""
        noms = self.nominated.get(node.name)
        added = [p for k, p in noms.items() if k != pi.key and p.priority >= pi.priority
                 and k not in node.pods] if noms else []
        if not added:
            return fwk.run_filter(state, pi, node)
        with_nominated = state.clone()
        done = []
        try:
            for p in added:
                node.add_pod(p)
                done.append(p)
                st = fwk.run_pre_filter_extension_add_pod(with_nominated, pi, p, node)
                if not st.is_success():
                    return st
            st = fwk.run_filter(with_nominated, pi, node)
        finally:
            for p in done:
                node.remove_pod(p.key)
        if st is not None:
            return st
        return fwk.run_filter(state, pi, node)

    def select_host(self, nodes: list, totals: list[int]) -> str:
        """The highest total; ties broken uniformly at random (selectHost)."""
        best = max(totals)
        tied = [i for i, s in enumerate(totals) if s == best]
        return nodes[tied[0] if len(tied) == 1 else self.rng.choice(tied)].name

    # -- the binding cycle -------------------------------------------------------------
    async def binding_cycle(self, fwk: Framework, state: CycleState, qp: QueuedPodInfo,
                            node: str, cycle: int) -> None:
        pi = qp.pod_info
        if self.trace is not None:
            self.trace.emit(10, f"POST pods/{pi.name}/binding → {node}", pi.pod)
        st = await fwk.run_pre_bind(state, pi, node)
        if st.is_success():
            st = await fwk.run_bind(state, pi, node)
        if not st.is_success():
            event(log, "pod.bind_failed", logging.WARNING, pod=pi.key, node=node, error=st.message())
            fwk.run_unreserve(state, pi, node)
            self.cache.forget_pod(pi.key)
            self.queue.move_all_to_active_or_backoff("Pod", "Delete")  # AssignedPodDelete
            self.handle_failure(fwk, state, qp, RuntimeError(st.message()), cycle)
            return
        self.cache.finish_binding(pi.key)
        event(log, "pod.bound", pod=pi.key, node=node)
        if self.recorder is not None:
            self.recorder.event(pi.pod, "Normal", "Scheduled",
                                f"Successfully assigned {pi.namespace}/{pi.name} to {node}")
        fwk.run_post_bind(state, pi, node)
        self.queue.done(pi.key)
        if self.record_results:
            await self._patch_annotations(pi, self.last_results.get(pi.key) or {})

    # -- failures ----------------------------------------------------------------------
    def handle_failure(self, fwk: Framework, state: CycleState, qp: QueuedPodInfo,
                       err: Exception, cycle: int, nominated_node: str | None = None) -> None:
        """Event FailedScheduling, PodScheduled=False condition (and
        ``status.nominatedNodeName`` when preemption nominated a node), requeue, and a
        step-9 trace record with the per-node verdicts (handleSchedulingFailure)."""
        pi = qp.pod_info
        fit = isinstance(err, FitError)
        msg = str(err)
        reason = "Unschedulable" if isinstance(err, (FitError, NoNodesAvailable)) else "SchedulerError"
        qp.unschedulable_plugins = set(err.diagnosis.unschedulable_plugins) if fit else set()
        current = self.pod_lister(pi.key) if self.pod_lister else pi.pod
        if current is None or is_assigned(current) or is_deleting(current):
            self.queue.delete(pi.pod)
            return
        self.queue.add_unschedulable_if_not_present(qp, cycle, error=not fit)
        event(log, "pod.unschedulable" if fit else "pod.schedule_failed", pod=pi.key, reason=reason,
              message=msg)
        if self.recorder is not None:
            self.recorder.event(pi.pod, "Warning", "FailedScheduling", msg)
        if nominated_node:
            self.add_nominated(pi, nominated_node)
        if self.trace is not None:
            action = f"no node fits; nominated {nominated_node} (preempting)" if nominated_node \
                else "no node fits; pod stays Pending"
            self.trace.emit(9, action, current, detail=msg,
                            data=self.explain_data(state, "", error=msg, nominated=nominated_node,
                                                   diagnosis=err.diagnosis if fit else None))
        self.remember(pi, state, "")
        self._spawn(self._patch_failure(pi, current, reason, msg, nominated_node))

    def _spawn(self, coro) -> None:
        try:
            t = asyncio.get_running_loop().create_task(coro)
        except RuntimeError:
            coro.close()
            return
        self._bg_tasks.add(t)
        t.add_done_callback(self._bg_tasks.discard)

    async def _patch_failure(self, pi: PodInfo, current: dict, reason: str, msg: str,
                             nominated_node: str | None = None) -> None:
        conds = (current.get("status") or {}).get("conditions") or []
        old = next((c for c in conds if c.get("type") == "PodScheduled"), None)
        have_nom = (current.get("status") or {}).get("nominatedNodeName") or ""
        same_cond = old and old.get("status") == "False" and old.get("reason") == reason \
            and old.get("message") == msg
        if self.client is not None and not (same_cond and (not nominated_node or nominated_node == have_nom)):
            cond = {"type": "PodScheduled", "status": "False", "lastProbeTime": None,
                    "lastTransitionTime": (old or {}).get("lastTransitionTime")
                    if old and old.get("status") == "False" else _now(),
                    "reason": reason, "message": msg}
            status: dict[str, Any] = {"conditions": [cond]}
            if nominated_node:
                status["nominatedNodeName"] = nominated_node
            try:
                await self.client.patch(PODS, pi.name, {"status": status}, pi.namespace,
                                        patch_type="strategic", subresource="status")
            except Exception as e:  # the pod may be gone; the next attempt retries
                event(log, "pod.status_patch_failed", logging.WARNING, pod=pi.key, error=str(e)[:200])
        if self.record_results:
            await self._patch_annotations(pi, self.last_results.get(pi.key) or {}, current)

    # -- preemption (preemption.go prepareCandidate) -------------------------------------
    def prepare_candidate(self, cand: Any, pod: PodInfo) -> None:
        """Act on the node preemption chose: each victim gets a DisruptionTarget
        condition, a DELETE and a ``Preempted`` event "Preempted by pod <uid> on node
        <node>"; pods of lower priority nominated to that node lose their nomination.
        The API calls run in the background; the cycle does not wait for them."""
        for v in cand.victims:
            event(log, "pod.preempting", victim=v.key, preemptor=pod.key, node=cand.name,
                  victim_priority=v.priority, preemptor_priority=pod.priority)
            self._spawn(self._preempt_victim(v, pod, cand.name))
        for key, p in list((self.nominated.get(cand.name) or {}).items()):
            if key != pod.key and p.priority < pod.priority:
                self.delete_nominated(key)
                self._spawn(self._clear_nomination(p))

    async def _preempt_victim(self, victim: PodInfo, pod: PodInfo, node: str) -> None:
        if self.client is None:
            return
        fwk = self.profiles.get(scheduler_name_of(pod.pod))
        cond = {"type": "DisruptionTarget", "status": "True", "lastTransitionTime": _now(),
                "reason": "PreemptionByScheduler",
                "message": f"{fwk.scheduler_name if fwk else DEFAULT_SCHEDULER_NAME}: "
                           "preempting to accommodate a higher priority pod"}
        try:
            await self.client.patch(PODS, victim.name, {"status": {"conditions": [cond]}},
                                    victim.namespace, patch_type="strategic", subresource="status")
            await self.client.delete(PODS, victim.name, victim.namespace)
        except Exception as e:  # already gone, or the next attempt retries
            event(log, "pod.preempt_failed", logging.WARNING, victim=victim.key, error=str(e)[:200])
            return
        event(log, "pod.preempted", victim=victim.key, preemptor=pod.key, node=node)
        if self.recorder is not None:
            self.recorder.event(victim.pod, "Normal", "Preempted",
                                f"Preempted by pod {pod.uid} on node {node}")

    async def _clear_nomination(self, pi: PodInfo) -> None:
        if self.client is None:
            return
        try:
            await self.client.patch(PODS, pi.name, {"status": {"nominatedNodeName": None}},
                                    pi.namespace, patch_type="merge", subresource="status")
        except Exception as e:
            event(log, "pod.nomination_clear_failed", logging.WARNING, pod=pi.key, error=str(e)[:200])

    # -- explain -----------------------------------------------------------------------
    def explain_data(self, state: CycleState, node: str, *, result: ScheduleResult | None = None,
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
        if len(self.last_results) > 10000:
            self.last_results.pop(next(iter(self.last_results)))

    async def _patch_annotations(self, pi: PodInfo, ann: dict, current: dict | None = None) -> None:
        if not ann or self.client is None:
            return
        have = ((current or pi.pod).get("metadata") or {}).get("annotations") or {}
        if all(have.get(k) == v for k, v in ann.items()):
            return
        try:
            await self.client.patch(PODS, pi.name, {"metadata": {"annotations": ann}}, pi.namespace,
                                    patch_type="merge")
        except Exception as e:
            event(log, "pod.annotate_failed", logging.WARNING, pod=pi.key, error=str(e)[:200])

    async def wait_idle(self) -> None:
        """Wait for in-flight binding cycles and background writes (tests, shutdown)."""
        while self._binding_tasks or self._bg_tasks:
            await asyncio.gather(*list(self._binding_tasks | self._bg_tasks), return_exceptions=True)


def node_update_actions(old: dict, new: dict) -> list[str]:
    """Which scheduling-relevant parts of a Node changed: ``UpdateNodeLabel``,
    ``UpdateNodeTaint`` (taints or spec.unschedulable), ``UpdateNodeAllocatable``,
    ``UpdateNodeCondition`` (condition statuses only, not heartbeats). Source:
    pkg/scheduler/eventhandlers.go nodeSchedulingPropertiesChange."""
    om, nm = old.get("metadata") or {}, new.get("metadata") or {}
    os_, ns_ = old.get("spec") or {}, new.get("spec") or {}
    ost, nst = old.get("status") or {}, new.get("status") or {}
    out = []
    if (om.get("labels") or {}) != (nm.get("labels") or {}):
        out.append("UpdateNodeLabel")
    if (os_.get("taints") or []) != (ns_.get("taints") or []) or \
            bool(os_.get("unschedulable")) != bool(ns_.get("unschedulable")):
        out.append("UpdateNodeTaint")
    if (ost.get("allocatable") or {}) != (nst.get("allocatable") or {}):
        out.append("UpdateNodeAllocatable")

    def conds(st: dict) -> dict:
        return {c.get("type"): c.get("status") for c in st.get("conditions") or []}
    if conds(ost) != conds(nst):
        out.append("UpdateNodeCondition")
    return out
