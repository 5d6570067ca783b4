"""One pod at a time: the scheduling cycle pops a pod, filters and scores nodes,
assumes the pod onto the best node, and hands it to an asynchronous binding cycle so
the next pod can be scheduled while the previous one binds; a failure requeues the
pod and writes why.

Source: ``pkg/scheduler/schedule_one.go`` (ScheduleOne, schedulingCycle, schedulePod,
findNodesThatFitPod, findNodesThatPassFilters, prioritizeNodes, selectHost, assume,
bindingCycle, handleSchedulingFailure).

Outcomes are kube-scheduler's: Event ``Scheduled`` "Successfully assigned NS/NAME to
NODE"; on failure Event ``FailedScheduling`` with the FitError message and the pod's
``PodScheduled`` condition False/``Unschedulable``. Trace steps 9 and 10 of seed 000.
"""

from __future__ import annotations

import asyncio
import logging
import random
import time
from typing import Any, Callable

from components.scheduler import metrics
from components.scheduler.cache import Cache
from components.scheduler.config import scheduler_name_of
from components.scheduler.explain import ExplainRecords
from components.scheduler.framework import (
    ERROR,
    CycleState,
    Diagnosis,
    FitError,
    Framework,
    ScheduleResult,
    num_feasible_nodes_to_find,
)
from components.scheduler.nominator import Nominator
from components.scheduler.podinfo import PodInfo, is_assigned, is_deleting
from components.scheduler.queue import QueuedPodInfo, SchedulingQueue
from components.scheduler.status import PodStatusWriter
from controlplane import otel
from controlplane.log import event

log = logging.getLogger("scheduler")

ERR_NO_NODES = "no nodes available to schedule pods"


#: the fewest nodes :meth:`ScheduleOne._filter_in_chunks` filters at a time
MIN_FILTER_CHUNK = 32


class NoNodesAvailable(Exception):
    """The cache has no nodes (schedule_one.go ErrNoNodesAvailable)."""


class ScheduleOne:
    """The scheduling and binding cycles over the scheduler's ``cache``, ``queue`` and
    ``profiles`` (scheduler name → Framework), filtering with the ``nominator``'s
    pods, writing through ``status`` and recording into ``explain``. ``pod_lister``:
    key → the informer's current pod or None (handle_failure skips pods assigned or
    deleted meanwhile); ``rng``: random.Random for tie-breaks.
    ``next_start_node_index``: where the next cycle starts filtering (rotates);
    ``binding_tasks``: binding cycles in flight."""

    def __init__(self, cache: Cache, queue: SchedulingQueue, profiles: dict[str, Framework],
                 nominator: Nominator, status: PodStatusWriter, explain: ExplainRecords,
                 rng: random.Random, pod_lister: Callable[[str], dict | None] | None = None) -> None:
        self.cache = cache
        self.queue = queue
        self.profiles = profiles
        self.nominator = nominator
        self.status = status
        self.explain = explain
        self.rng = rng
        self.pod_lister = pod_lister
        self.next_start_node_index = 0
        self.binding_tasks: set[asyncio.Task] = set()

    # -- the scheduling cycle ----------------------------------------------------------
    def schedule_one(self, qp: QueuedPodInfo) -> ScheduleResult | None:
        """One scheduling cycle for ``qp`` (synchronous; the binding cycle is spawned
        as a task). Returns the result, or None when the pod failed or was skipped. With
        OpenTelemetry on (:mod:`controlplane.otel`), the cycle is the span ``scheduling_cycle``, a
        child of the pod's traceparent annotation, and the binding cycle its child ``binding``."""
        if not otel.enabled():
            return self._schedule_one(qp)
        pod = qp.pod_info.pod
        with otel.span("scheduling_cycle", parent=otel.traceparent_of(pod),
                       attributes={"pod": qp.pod_info.key, "attempts": qp.attempts}):
            return self._schedule_one(qp)

    def _schedule_one(self, qp: QueuedPodInfo) -> ScheduleResult | None:
        pi = qp.pod_info
        pod = pi.pod
        fwk = self.profiles.get(scheduler_name_of(pod))
        if fwk is None or is_deleting(pod) or self.cache.has_pod(pi.key):
            self.queue.done(pi.key)
            return None
        cycle = self.queue.scheduling_cycle
        state = CycleState(record=self.explain.wants_record(self.cache.node_count), framework=fwk)
        state.started = time.monotonic()
        state.record_plugin_metrics = metrics.sample_plugin_metrics()
        try:
            result = self.schedule_pod(fwk, state, pi)
        except FitError as fe:
            st = fwk.run_post_filter(state, pi, self.cache.snapshot(), fe.diagnosis)
            if st.is_rejected() and st.message():
                fe.diagnosis.post_filter_msg = st.message()
            nominated = state.nominated.name if st.is_success() and state.nominated else None
            metrics.attempt(fwk.scheduler_name, metrics.UNSCHEDULABLE, state.started)
            self.handle_failure(fwk, state, qp, fe, cycle, nominated_node=nominated)
            return None
        except NoNodesAvailable:
            metrics.attempt(fwk.scheduler_name, metrics.UNSCHEDULABLE, state.started)
            self.handle_failure(fwk, state, qp, NoNodesAvailable(ERR_NO_NODES), cycle)
            return None
        except Exception as e:  # a plugin error: retry with backoff
            event(log, "schedule.error", logging.ERROR, pod=pi.key, error=f"{type(e).__name__}: {e}")
            metrics.attempt(fwk.scheduler_name, metrics.ERROR, state.started)
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
            metrics.attempt(fwk.scheduler_name, metrics.ERROR, state.started)
            self.handle_failure(fwk, state, qp, RuntimeError(st.message()), cycle)
            return None
        # kube-scheduler logs the attempt at V(3), the binding at V(2): one INFO line per pod
        event(log, "pod.assumed", logging.DEBUG, pod=pi.key, node=node, evaluated=result.evaluated_nodes,
              feasible=result.feasible_nodes, attempts=qp.attempts)
        self.explain.assumed(state, pi, result)
        t = asyncio.get_running_loop().create_task(self.binding_cycle(fwk, state, qp, node, cycle))
        self.binding_tasks.add(t)
        t.add_done_callback(self.binding_tasks.discard)
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
            return ScheduleResult(feasible[0].name, evaluated, 1)
        totals = fwk.run_score(state, pi, feasible, snapshot)
        host = self.select_host(feasible, totals)
        return ScheduleResult(host, evaluated, len(feasible), [n.name for n in feasible], totals)

    def find_nodes_that_fit(self, fwk: Framework, state: CycleState, pi: PodInfo, snapshot: Any):
        """PreFilter then Filter, from a rotating start, stopping once enough feasible
        nodes are found; with pods nominated anywhere, each node is filtered with the
        pods nominated to it (findNodesThatFitPod / findNodesThatPassFilters).
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
        nominated = self.nominator.nominated
        chain = None if nominated else fwk.filter_nodes_chain(state)
        if chain is not None:
            feasible, evaluated = self._filter_in_chunks(fwk, chain, state, pi, nodes, start, want, diagnosis)
            self.next_start_node_index = (start + evaluated) % n_all
            return feasible, diagnosis, evaluated
        feasible = []
        run_filter = fwk.filter_runner(state)
        if nominated:
            def run_filter(state, pod, node, _fwk=fwk):
                return _fwk.run_filter_with_nominated(state, pod, node, nominated.get(node.name))
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

    @staticmethod
    def _filter_in_chunks(fwk: Framework, chain: list, state: CycleState, pi: PodInfo, nodes: list,
                          start: int, want: int, diagnosis: Diagnosis) -> tuple[list, int]:
        """The node-by-node search of :meth:`find_nodes_that_fit` done a chunk of nodes at a
        time through the plugins' ``filter_nodes`` (:meth:`Framework.run_filter_nodes`), with
        the same outcome: nodes are taken in order from ``start`` (wrapping round), the
        search ends at the node where the ``want``-th feasible one is found, and only the
        verdicts of the nodes up to there count — a chunk is as long as the feasible nodes
        still wanted (at least :data:`MIN_FILTER_CHUNK`), so nodes are filtered past that
        point only within the last chunk. Returns (feasible NodeInfos, nodes evaluated)."""
        n_all = len(nodes)
        statuses = diagnosis.node_to_status
        plugins = diagnosis.unschedulable_plugins
        feasible: list = []
        evaluated = 0
        pos = start
        while evaluated < n_all:
            need = want - len(feasible)
            k = min(max(need, MIN_FILTER_CHUNK), n_all - evaluated)
            end = pos + k
            chunk = nodes[pos:end] if end <= n_all else nodes[pos:] + nodes[:end - n_all]
            verdicts, ok = fwk.run_filter_nodes(chain, state, pi, chunk)
            found = k if ok is None else len(ok)
            if found >= need:  # the search stops at the need-th feasible node of this chunk
                cut = (need if ok is None else ok[need - 1] + 1)
            else:
                cut = k
            if verdicts is not None:
                for j in range(cut):
                    st = verdicts[j]
                    if st is not None:
                        if st.code == ERROR:
                            raise RuntimeError(f"running Filter plugin {st.plugin}: {st.message()}")
                        statuses[chunk[j].name] = st
                        plugins.add(st.plugin)
            if ok is None:
                feasible.extend(chunk[:cut])
            else:
                feasible.extend([chunk[j] for j in (ok[:need] if found >= need else ok)])
            evaluated += cut
            if found >= need:
                break
            pos = end % n_all
        return feasible, evaluated

    def select_host(self, nodes: list, totals: list[int]) -> str:
        """The highest total; ties broken uniformly at random (selectHost)."""
        best = max(totals)
        tied = [i for i, s in enumerate(totals) if s == best]
        return nodes[tied[0] if len(tied) == 1 else self.rng.choice(tied)].name

    # -- the binding cycle -------------------------------------------------------------
    async def binding_cycle(self, fwk: Framework, state: CycleState, qp: QueuedPodInfo,
                            node: str, cycle: int) -> None:
        """Trace step 10, PreBind and Bind; then Event ``Scheduled`` and PostBind, or on
        failure Unreserve, forget the assumed pod and :meth:`handle_failure`
        (bindingCycle)."""
        with otel.span("binding", attributes={"pod": qp.pod_info.key, "node": node}):
            await self._binding_cycle(fwk, state, qp, node, cycle)

    async def _binding_cycle(self, fwk: Framework, state: CycleState, qp: QueuedPodInfo,
                             node: str, cycle: int) -> None:
        pi = qp.pod_info
        if self.explain.trace is not None:
            self.explain.trace.emit(10, f"POST pods/{pi.name}/binding → {node}", pi.pod)
        st = await fwk.run_pre_bind(state, pi, node)
        if st.is_success():
            st = await fwk.run_bind(state, pi, node)
        if not st.is_success():
            event(log, "pod.bind_failed", logging.WARNING, pod=pi.key, node=node, error=st.message())
            fwk.run_unreserve(state, pi, node)
            self.cache.forget_pod(pi.key)
            self.queue.move_all_to_active_or_backoff("Pod", "Delete")  # AssignedPodDelete
            metrics.attempt(fwk.scheduler_name, metrics.ERROR, state.started)
            self.handle_failure(fwk, state, qp, RuntimeError(st.message()), cycle)
            return
        self.cache.finish_binding(pi.key)
        metrics.attempt(fwk.scheduler_name, metrics.SCHEDULED, state.started)
        event(log, "pod.bound", pod=pi.key, node=node)
        self.status.scheduled(pi, node)
        fwk.run_post_bind(state, pi, node)
        self.queue.done(pi.key)
        if self.explain.record_results:
            await self.status.patch_annotations(pi, self.explain.annotations(pi.key))

    # -- failures ----------------------------------------------------------------------
    def handle_failure(self, fwk: Framework, state: CycleState, qp: QueuedPodInfo,
                       err: Exception, cycle: int, nominated_node: str | None = None) -> None:
        """Event FailedScheduling, PodScheduled=False condition (and
        ``status.nominatedNodeName`` when preemption nominated a node), requeue, and a
        step-9 trace record with the per-node verdicts (handleSchedulingFailure). A pod
        assigned or deleted meanwhile only leaves the queue."""
        pi = qp.pod_info
        fit = isinstance(err, FitError)
        msg = str(err)
        reason = "Unschedulable" if isinstance(err, (FitError, NoNodesAvailable)) else "SchedulerError"
        qp.unschedulable_plugins = (set(err.diagnosis.unschedulable_plugins) if isinstance(err, FitError)
                                     else set())
        current = self.pod_lister(pi.key) if self.pod_lister else pi.pod
        if current is None or is_assigned(current) or is_deleting(current):
            self.queue.delete(pi.pod)
            return
        self.queue.add_unschedulable_if_not_present(qp, cycle, error=not fit)
        event(log, "pod.unschedulable" if fit else "pod.schedule_failed", pod=pi.key, reason=reason,
              message=msg)
        self.status.failed_scheduling(pi, msg)
        if nominated_node:
            self.nominator.add(pi, nominated_node)
        self.explain.failed(state, pi, current, msg, nominated_node,
                            err.diagnosis if isinstance(err, FitError) else None)
        self.status.spawn(self._write_failure(pi, current, reason, msg, nominated_node))

    async def _write_failure(self, pi: PodInfo, current: dict, reason: str, msg: str,
                             nominated_node: str | None) -> None:
        await self.status.patch_failure(pi, current, reason, msg, nominated_node)
        if self.explain.record_results:
            await self.status.patch_annotations(pi, self.explain.annotations(pi.key), current)
