"""The scheduling framework: extension points, statuses, cycle state, and the
runner that calls a profile's plugins in order.

Extension points (``pkg/scheduler/framework/interface.go``), as plugin methods —
a plugin implements the ones it needs:

* ``pre_enqueue(pod_info) -> Status|None``          PreEnqueue: may the pod enter activeQ
  at all? A rejection keeps it among the unschedulable pods, gated, until an update
  of the pod passes (``SchedulingGates``)
* ``less(a, b)``                                    QueueSort
* ``pre_filter(state, pod, snapshot) -> Status|None`` PreFilter (``SKIP`` skips its Filter)
* ``pre_filter_add_pod`` / ``pre_filter_remove_pod(state, pod, pod_info, node_info)
  -> Status|None``                                   PreFilterExtensions AddPod/RemovePod: update
  the plugin's PreFilter state as if ``pod_info`` were added to / removed from
  ``node_info`` (preemption's dry run, nominated pods); called on a
  :meth:`CycleState.clone`, never for a plugin whose PreFilter said SKIP
* ``filter(state, pod, node_info) -> Status|None``   Filter (None means Success); optionally
  also ``filter_nodes(state, pod, nodes) -> list[Status|None] | None``, the same for many
  nodes at once (aligned with ``nodes``; None = every node passes). A plugin offers it only
  when its Filter has no side effects: a batch may filter a few nodes past the one where
  the search stops, and their verdicts are dropped
* ``post_filter(state, pod, snapshot, diagnosis) -> Status`` PostFilter
* ``pre_score(state, pod, nodes, snapshot) -> Status|None`` PreScore (``SKIP`` skips its Score)
* ``score(state, pod, node_info) -> int``            Score (optionally also
  ``score_nodes(state, pod, nodes) -> list[int]``, the same for many nodes at once)
* ``normalize_score(state, pod, scores) -> None``    NormalizeScore (in place, 0..100)
* ``reserve`` / ``unreserve(state, pod, node_name)``  Reserve
* ``permit(state, pod, node_name) -> Status|None``    Permit
* ``async pre_bind`` / ``async bind`` / ``post_bind``  PreBind, Bind (``SKIP`` = not mine), PostBind
* ``events_to_register() -> list[(resource, action)]`` the cluster events that may make a
  pod this plugin rejected schedulable (queue moves; ``EnqueueExtensions``).

Scores are ints; after normalisation every plugin's score is in 0..MAX_NODE_SCORE
and is multiplied by the plugin's weight. Source of the failure message:
``pkg/scheduler/framework/types.go`` (FitError.Error, Diagnosis).
"""

from __future__ import annotations

import functools
import heapq
import logging
import operator
import time
from dataclasses import dataclass, field
from typing import Any, Iterable

from components.scheduler import metrics
from controlplane.log import event

log = logging.getLogger("scheduler.framework")

MAX_NODE_SCORE = 100
MIN_NODE_SCORE = 0

# Status codes (interface.go Code).
SUCCESS, ERROR, UNSCHEDULABLE, UNSCHEDULABLE_AND_UNRESOLVABLE, WAIT, SKIP = range(6)
CODE_NAMES = ["Success", "Error", "Unschedulable", "UnschedulableAndUnresolvable", "Wait", "Skip"]

NO_NODE_AVAILABLE_MSG = "0/{} nodes are available"


class Status:
    """A plugin's verdict: ``code`` (SUCCESS, ERROR, UNSCHEDULABLE,
    UNSCHEDULABLE_AND_UNRESOLVABLE, WAIT, SKIP), ``reasons`` (the strings counted in
    FailedScheduling messages) and ``plugin`` (who said it)."""

    __slots__ = ("code", "reasons", "plugin")

    def __init__(self, code: int = SUCCESS, *reasons: str, plugin: str = "") -> None:
        self.code = code
        self.reasons = list(reasons)
        self.plugin = plugin

    def is_success(self) -> bool:
        return self.code == SUCCESS

    def is_rejected(self) -> bool:
        """Unschedulable or UnschedulableAndUnresolvable."""
        return self.code in (UNSCHEDULABLE, UNSCHEDULABLE_AND_UNRESOLVABLE)

    def message(self) -> str:
        return ", ".join(self.reasons)

    def __repr__(self) -> str:
        return f"Status({CODE_NAMES[self.code]}, {self.reasons!r}, plugin={self.plugin!r})"


class CycleState(dict):
    """Per-cycle scratch space plugins share (key → data); ``record`` holds the
    per-plugin results kept for "explain" when recording is on; ``framework`` is the
    profile running the cycle (PostFilter dry runs); ``nominated`` the preemption
    Candidate chosen by PostFilter, if any."""

    def __init__(self, record: bool = False, framework: Any = None) -> None:
        super().__init__()
        self.record = record
        self.framework = framework
        self.nominated: Any = None
        self.filter_results: dict[str, dict[str, str]] = {}
        #: recorded scores, one column per Score plugin: the scored node names and
        #: (plugin, weight, normalised scores aligned with the names); the per-node
        #: dicts below are built from them only when asked (explain)
        self.score_nodes: list[str] = []
        self.score_columns: list[tuple[str, int, list[int]]] = []
        self._score_dicts: tuple[int, dict, dict] | None = None
        self.skip_filter: set[str] = set()
        self.skip_score: set[str] = set()
        self._owned: set[str] = set()
        #: time this cycle's plugin calls (scheduler_plugin_execution_duration_seconds, 10 % of cycles)
        self.record_plugin_metrics = False
        #: time.monotonic() at the start of the scheduling cycle (the attempt's duration)
        self.started = 0.0

    def clone(self) -> "CycleState":
        """A copy for a what-if run (preemption's dry run on one node, filtering with
        nominated pods): plugin data is shared, and a PreFilter extension that changes
        its data copies it first (copy on write, see :meth:`owns`); the recorded filter
        verdicts and the skip sets are shared with this state (CycleState.Clone)."""
        c = CycleState(self.record, self.framework)
        c.update(self)
        c.nominated = self.nominated
        c.filter_results = self.filter_results
        c.skip_filter = self.skip_filter
        c.skip_score = self.skip_score
        return c

    def owns(self, key: str, copy) -> Any:
        """Plugin data under ``key`` that this state may change in place: the first
        time this state asks, ``copy(data)`` is stored (the data may be shared with
        the state it was cloned from, or with the cache's indexes); later calls return
        that copy. Raises KeyError when PreFilter stored nothing under ``key``."""
        if key not in self._owned:
            self[key] = copy(self[key])
            self._owned.add(key)
        return self[key]

    def _scores(self) -> tuple[dict[str, dict[str, int]], dict[str, dict[str, int]]]:
        cached = self._score_dicts
        if cached is not None and cached[0] == len(self.score_columns):
            return cached[1], cached[2]
        names, cols = self.score_nodes, self.score_columns
        plugins = [p for p, _, _ in cols]
        raw: dict[str, dict[str, int]] = {
            n: dict(zip(plugins, row)) for n, row in zip(names, zip(*(sc for _, _, sc in cols)))}
        final: dict[str, dict[str, int]] = {
            n: dict(zip(plugins, row)) for n, row in zip(
                names, zip(*(sc if w == 1 else [x * w for x in sc] for _, w, sc in cols)))}
        self._score_dicts = (len(self.score_columns), raw, final)
        return raw, final

    @property
    def score_results(self) -> dict[str, dict[str, int]]:
        """node → Score plugin → normalised score (recorded cycles only)."""
        return self._scores()[0]

    @property
    def final_scores(self) -> dict[str, dict[str, int]]:
        """node → Score plugin → normalised score × the plugin's weight."""
        return self._scores()[1]


@dataclass
class Diagnosis:
    """Why no node fits: per-node statuses, the plugins that rejected, and the
    PreFilter/PostFilter messages (types.go Diagnosis)."""

    node_to_status: dict[str, Status] = field(default_factory=dict)
    unschedulable_plugins: set[str] = field(default_factory=set)
    pre_filter_msg: str = ""
    post_filter_msg: str = ""


class FitError(Exception):
    """No node fits the pod. ``str()`` is kube-scheduler's message, e.g.
    ``0/2 nodes are available: 2 node(s) didn't match Pod's node affinity/selector.
    preemption: 0/2 nodes are available: 2 Preemption is not helpful for scheduling.``
    (types.go FitError.Error: reasons counted per node, "<count> <reason>" strings
    sorted lexically, joined with ", ")."""

    def __init__(self, pod_key: str, num_all_nodes: int, diagnosis: Diagnosis) -> None:
        self.pod_key = pod_key
        self.num_all_nodes = num_all_nodes
        self.diagnosis = diagnosis
        super().__init__(pod_key)

    def __str__(self) -> str:
        return self.message()

    def message(self) -> str:
        msg = NO_NODE_AVAILABLE_MSG.format(self.num_all_nodes) + ":"
        d = self.diagnosis
        if d.pre_filter_msg:
            msg += f" {d.pre_filter_msg}."
        else:
            hist = histogram(s.reasons for s in d.node_to_status.values())
            if hist:
                msg += f" {hist}."
        if d.post_filter_msg:
            msg += f" {d.post_filter_msg}"
            if not d.post_filter_msg.endswith("."):
                msg += "."
        return msg


def histogram(reason_lists: Iterable[list[str]]) -> str:
    """``"2 Insufficient cpu, 3 node(s) were unschedulable"``: each reason counted,
    ``"<n> <reason>"`` sorted as strings (types.go sortReasonsHistogram)."""
    counts: dict[str, int] = {}
    for reasons in reason_lists:
        for r in reasons:
            counts[r] = counts.get(r, 0) + 1
    return ", ".join(sorted(f"{n} {r}" for r, n in counts.items()))


def default_normalize_score(scores: list[int], reverse: bool = False,
                            max_priority: int = MAX_NODE_SCORE) -> None:
    """Scale ``scores`` in place to 0..max_priority by the maximum; ``reverse`` flips
    them (lower raw score is better). All-zero input: unchanged, or all max when
    reversed. Source: ``pkg/scheduler/framework/plugins/helper/normalize_score.go``."""
    max_count = max(scores, default=0)
    if max_count == 0:
        if reverse:
            for i in range(len(scores)):
                scores[i] = max_priority
        return
    for i, s in enumerate(scores):
        s = max_priority * s // max_count
        scores[i] = max_priority - s if reverse else s


@dataclass
class ScheduleResult:
    """``suggested_host``, ``evaluated_nodes`` (filtered), ``feasible_nodes`` and the
    final scores of one successful scheduling cycle (pkg/scheduler/scheduler.go
    ScheduleResult): ``scored`` (the scored node names) aligned with ``totals`` (their
    weighted totals), both empty when a single feasible node was not scored; ``scores``
    (node name → total) is built from them on first use, as only explain records read it."""

    suggested_host: str
    evaluated_nodes: int
    feasible_nodes: int
    scored: list[str] = field(default_factory=list)
    totals: list[int] = field(default_factory=list)

    @functools.cached_property
    def scores(self) -> dict[str, int]:
        """Node name → weighted total of every scored node (``{}`` when none was scored)."""
        return dict(zip(self.scored, self.totals))

    def best(self, n: int) -> list[tuple[str, int]]:
        """The ``n`` highest totals as (node, total), highest first, ties by node name."""
        if n <= 0 or not self.totals:
            return []
        # the n-th highest total bounds the answer: a C-level pass over the ints, then only
        # the pairs at or above it are ordered, as (-total, node) tuples compared in C; many
        # tied at the floor (identical nodes) go through a heap of n instead of a full sort
        # (the same list as a full sort's head either way)
        floor = heapq.nlargest(n, self.totals)[-1]
        top = [(-t, s) for s, t in zip(self.scored, self.totals) if t >= floor]
        top = heapq.nsmallest(n, top) if len(top) > 2 * n else sorted(top)[:n]
        return [(s, -t) for t, s in top]


def _observe_filter_chunk(plugin: str, res: list[Status | None] | None, n: int, seconds: float) -> None:
    """``n`` Filter calls of ``plugin`` that took ``seconds`` together, by status code."""
    if not n:
        return
    per = seconds / n
    failed: dict[str, int] = {}
    for st in res or ():
        if st is not None and st.code != SUCCESS:
            code = CODE_NAMES[st.code]
            failed[code] = failed.get(code, 0) + 1
    ok = n - sum(failed.values())
    if ok:
        metrics.plugin_calls(plugin, "Filter", "Success", per, ok)
    for code, count in failed.items():
        metrics.plugin_calls(plugin, "Filter", code, per, count)


class Framework:
    """One scheduling profile: its plugins per extension point, score weights and
    ``percentage_of_nodes_to_score`` (0 = adaptive). Source: ``pkg/scheduler/framework/
    runtime/framework.go``.

    ``plugins``: ordered plugin instances (order = filter order);
    ``weights``: plugin name → score weight (plugins absent or weight 0 do not score).
    """

    def __init__(self, scheduler_name: str, plugins: list[Any], weights: dict[str, int],
                 percentage_of_nodes_to_score: int = 0) -> None:
        self.scheduler_name = scheduler_name
        self.plugins = plugins
        self.weights = weights
        self.percentage_of_nodes_to_score = percentage_of_nodes_to_score

        def having(method: str) -> list[Any]:
            return [p for p in plugins if callable(getattr(p, method, None))]

        self.pre_enqueue_plugins = having("pre_enqueue")
        self.queue_sort = next(iter(having("less")), None)
        self.pre_filter_plugins = having("pre_filter")
        self.filter_plugins = having("filter")
        self.post_filter_plugins = having("post_filter")
        self.pre_score_plugins = [p for p in having("pre_score") if weights.get(p.name, 0) > 0]
        self.score_plugins = [p for p in having("score") if weights.get(p.name, 0) > 0]
        self.reserve_plugins = having("reserve")
        self.permit_plugins = having("permit")
        self.pre_bind_plugins = having("pre_bind")
        self.bind_plugins = having("bind")
        self.post_bind_plugins = having("post_bind")

    def plugin(self, name: str) -> Any | None:
        return next((p for p in self.plugins if p.name == name), None)

    def plugins_for_event(self) -> dict[tuple[str, str], set[str]]:
        """(resource, action) → names of plugins that registered for it."""
        out: dict[tuple[str, str], set[str]] = {}
        for p in self.plugins:
            fn = getattr(p, "events_to_register", None)
            for ev in (fn() if fn else []):
                out.setdefault(ev, set()).add(p.name)
        return out

    def run_pre_enqueue(self, pod: Any) -> Status:
        """Each PreEnqueue plugin in order; the first rejection (``plugin`` set) wins,
        else Success (framework.go RunPreEnqueuePlugins)."""
        for p in self.pre_enqueue_plugins:
            st = p.pre_enqueue(pod)
            if st is not None and not st.is_success():
                st.plugin = p.name
                return st
        return Status()

    # -- scheduling cycle --------------------------------------------------------
    def run_pre_filter(self, state: CycleState, pod: Any, snapshot: Any) -> Status:
        timed = state.record_plugin_metrics
        for p in self.pre_filter_plugins:
            t0 = time.monotonic() if timed else 0.0
            st = p.pre_filter(state, pod, snapshot)
            if timed:
                metrics.plugin_call(p.name, "PreFilter", CODE_NAMES[st.code] if st is not None else "Success",
                                    time.monotonic() - t0)
            if st is None or st.code == SUCCESS:
                continue
            if st.code == SKIP:
                state.skip_filter.add(p.name)
                continue
            st.plugin = p.name
            return st
        return Status()

    def run_pre_filter_extension_add_pod(self, state: CycleState, pod: Any, pod_to_add: Any,
                                         node: Any) -> Status:
        """Each PreFilter extension's AddPod, skipping plugins whose PreFilter said SKIP;
        the first non-success (code ERROR, ``plugin`` set) stops
        (framework.go RunPreFilterExtensionAddPod)."""
        return self._run_extension("pre_filter_add_pod", state, pod, pod_to_add, node)

    def run_pre_filter_extension_remove_pod(self, state: CycleState, pod: Any, pod_to_remove: Any,
                                            node: Any) -> Status:
        """Each PreFilter extension's RemovePod (framework.go RunPreFilterExtensionRemovePod)."""
        return self._run_extension("pre_filter_remove_pod", state, pod, pod_to_remove, node)

    def _run_extension(self, method: str, state: CycleState, pod: Any, other: Any, node: Any) -> Status:
        for p in self.pre_filter_plugins:
            fn = getattr(p, method, None)
            if fn is None or p.name in state.skip_filter:
                continue
            st = fn(state, pod, other, node)
            if st is not None and not st.is_success():
                return Status(ERROR, f"running {method} on PreFilter plugin {p.name}: {st.message()}",
                              plugin=p.name)
        return Status()

    def filter_runner(self, state: CycleState):
        """``run(state, pod, node) -> Status | None``: :meth:`run_filter` for one cycle,
        with the plugins its PreFilter skipped left out up front (the hot loop of a
        cycle: one call per evaluated node). Recording cycles get :meth:`run_filter`."""
        if state.record:
            return self.run_filter
        chain = [(p.name, p.filter) for p in self.filter_plugins if p.name not in state.skip_filter]
        if state.record_plugin_metrics:
            def run_timed(state: CycleState, pod: Any, node: Any) -> Status | None:
                for name, f in chain:
                    t0 = time.monotonic()
                    st = f(state, pod, node)
                    metrics.plugin_call(name, "Filter", CODE_NAMES[st.code] if st is not None else "Success",
                                        time.monotonic() - t0)
                    if st is not None and st.code != SUCCESS:
                        st.plugin = name
                        return st
                return None
            return run_timed

        def run(state: CycleState, pod: Any, node: Any) -> Status | None:
            for name, f in chain:
                st = f(state, pod, node)
                if st is not None and st.code != SUCCESS:
                    st.plugin = name
                    return st
            return None
        return run

    def filter_nodes_chain(self, state: CycleState) -> list[tuple[str, Any]] | None:
        """The (name, ``filter_nodes``) of the Filter plugins this cycle runs (those its
        PreFilter did not skip), for :meth:`run_filter_nodes`; None when a plugin has no
        ``filter_nodes`` or the cycle records per-node verdicts (explain), which go node by
        node through :meth:`filter_runner`."""
        if state.record:
            return None
        chain = []
        for p in self.filter_plugins:
            if p.name in state.skip_filter:
                continue
            fn = getattr(p, "filter_nodes", None)
            if fn is None:
                return None
            chain.append((p.name, fn))
        return chain

    @staticmethod
    def run_filter_nodes(chain: list[tuple[str, Any]], state: CycleState, pod: Any,
                         nodes: list[Any]) -> tuple[list[Status | None] | None, list[int] | None]:
        """Filter ``nodes`` with each plugin of ``chain`` (from :meth:`filter_nodes_chain`)
        in order, each plugin seeing only the nodes every earlier one passed: per node, the
        first rejection wins (``plugin`` set), as :meth:`run_filter` decides one node
        (framework.go RunFilterPlugins). Returns (the verdicts aligned with ``nodes``, None
        when every node passed; the positions of the feasible nodes in ascending order,
        None when that is every node).

        A cycle sampled for plugin metrics times each plugin's call on the chunk once and
        observes one Filter call per node it saw, each at the chunk's mean, with that node's
        status (the per-call observations of framework.go runFilterPlugin, their count and
        sum kept; a single call of a microsecond is below what the timer resolves anyway).
        The last chunk's nodes past where the search stops are observed too, as
        kube-scheduler's parallel Filter workers finish the nodes in flight at the stop."""
        verdicts: list[Status | None] | None = None
        alive = nodes
        where: list[int] | None = None  # positions of ``alive`` in ``nodes``; None = all of them
        timed = state.record_plugin_metrics
        for name, fn in chain:
            t0 = time.monotonic() if timed else 0.0
            res = fn(state, pod, alive)
            if timed:
                _observe_filter_chunk(name, res, len(alive), time.monotonic() - t0)
            if res is None or not any(res):
                continue
            if verdicts is None:
                verdicts = [None] * len(nodes)
            keep: list[int] = []
            for i, st in enumerate(res):
                j = i if where is None else where[i]
                if st is None or st.code == SUCCESS:
                    keep.append(j)
                else:
                    st.plugin = name
                    verdicts[j] = st
            where = keep
            alive = [nodes[j] for j in keep]
            if not alive:
                break
        return verdicts, where

    def run_filter(self, state: CycleState, pod: Any, node: Any) -> Status | None:
        """Filter plugins in order; the first rejection wins. None = feasible."""
        skip = state.skip_filter
        rec = state.filter_results.setdefault(node.name, {}) if state.record else None
        for p in self.filter_plugins:
            if p.name in skip:
                continue
            st = p.filter(state, pod, node)
            if st is None or st.code == SUCCESS:
                if rec is not None:
                    rec[p.name] = "passed"
                continue
            st.plugin = p.name
            if rec is not None:
                rec[p.name] = st.message()
            return st
        return None

    def run_filter_with_nominated(self, state: CycleState, pi: Any, node: Any,
                                  nominated: dict[str, Any] | None) -> Status | None:
        """Filter ``node`` as if the pods nominated there (``nominated``: pod key →
        PodInfo, the nominator's pods for this node, or None) with priority >= the pod's
        were already on it — on the node and, through the PreFilter extensions' AddPod,
        in a clone of the cycle state (InterPodAffinity and PodTopologySpread counts) —
        then (if that passes) as it is; the pod must pass both
        (framework.go RunFilterPluginsWithNominatedPods, addNominatedPods)."""
        added = [p for k, p in nominated.items() if k != pi.key and p.priority >= pi.priority
                 and k not in node.pods] if nominated else []
        if not added:
            return self.run_filter(state, pi, node)
        with_nominated = state.clone()
        done = []
        st: Status | None = None
        try:
            for p in added:
                node.add_pod(p)
                done.append(p)
                st = self.run_pre_filter_extension_add_pod(with_nominated, pi, p, node)
                if not st.is_success():
                    return st
            st = self.run_filter(with_nominated, pi, node)
        finally:
            for p in done:
                node.remove_pod(p.key)
        if st is not None:
            return st
        return self.run_filter(state, pi, node)

    def run_post_filter(self, state: CycleState, pod: Any, snapshot: Any,
                        diagnosis: Diagnosis) -> Status:
        st = Status(UNSCHEDULABLE)
        for p in self.post_filter_plugins:
            st = p.post_filter(state, pod, snapshot, diagnosis)
            st.plugin = p.name
            if st.is_success():
                return st
        return st

    def run_score(self, state: CycleState, pod: Any, nodes: list[Any],
                  snapshot: Any) -> list[int]:
        """PreScore, Score, NormalizeScore and weights; returns the total per node
        (aligned with ``nodes``)."""
        for p in self.pre_score_plugins:
            st = p.pre_score(state, pod, nodes, snapshot)
            if st is not None and st.code == SKIP:
                state.skip_score.add(p.name)
            elif st is not None and not st.is_success():
                raise RuntimeError(f"running PreScore plugin {p.name}: {st.message()}")
        totals = [0] * len(nodes)
        for p in self.score_plugins:
            if p.name in state.skip_score:
                continue
            batch = getattr(p, "score_nodes", None)
            t0 = time.monotonic() if state.record_plugin_metrics else 0.0
            if batch is not None:
                scores = batch(state, pod, nodes)
            else:
                score = p.score
                scores = [score(state, pod, n) for n in nodes]
            if state.record_plugin_metrics:  # one observation for the plugin's scoring of all nodes
                metrics.plugin_call(p.name, "Score", "Success", time.monotonic() - t0)
            norm = getattr(p, "normalize_score", None)
            if norm is not None:
                norm(state, pod, scores)
            w = self.weights.get(p.name, 1)
            if state.record:
                if not state.score_columns:
                    state.score_nodes = [n.name for n in nodes]
                state.score_columns.append((p.name, w, list(scores)))
            if w == 1:
                totals = list(map(operator.add, totals, scores))
            else:
                totals = [t + s * w for t, s in zip(totals, scores)]
        return totals

    def run_reserve(self, state: CycleState, pod: Any, node_name: str) -> Status:
        for p in self.reserve_plugins:
            st = p.reserve(state, pod, node_name)
            if st is not None and not st.is_success():
                st.plugin = p.name
                return st
        return Status()

    def run_unreserve(self, state: CycleState, pod: Any, node_name: str) -> None:
        for p in reversed(self.reserve_plugins):
            fn = getattr(p, "unreserve", None)
            if fn:
                fn(state, pod, node_name)

    def run_permit(self, state: CycleState, pod: Any, node_name: str) -> Status:
        for p in self.permit_plugins:
            st = p.permit(state, pod, node_name)
            if st is not None and not st.is_success():
                st.plugin = p.name
                return st
        return Status()

    # -- binding cycle -----------------------------------------------------------
    async def run_pre_bind(self, state: CycleState, pod: Any, node_name: str) -> Status:
        for p in self.pre_bind_plugins:
            st = await p.pre_bind(state, pod, node_name)
            if st is not None and not st.is_success():
                st.plugin = p.name
                return st
        return Status()

    async def run_bind(self, state: CycleState, pod: Any, node_name: str) -> Status:
        for p in self.bind_plugins:
            st = await p.bind(state, pod, node_name)
            if st is not None and st.code == SKIP:
                continue
            st = st or Status()
            st.plugin = p.name
            return st
        return Status(ERROR, "no bind plugin handled the pod")

    def run_post_bind(self, state: CycleState, pod: Any, node_name: str) -> None:
        for p in self.post_bind_plugins:
            try:
                p.post_bind(state, pod, node_name)
            except Exception as e:  # informational only
                event(log, "postbind.failed", logging.WARNING, plugin=p.name, error=str(e))


def num_feasible_nodes_to_find(percentage: int, num_all_nodes: int) -> int:
    """How many feasible nodes to look for before scoring: all below 100 nodes;
    else ``percentage`` (0 = adaptive ``50 - n/125``, at least 5) percent, at least 100.
    Source: schedule_one.go numFeasibleNodesToFind."""
    min_feasible = 100
    if num_all_nodes < min_feasible:
        return num_all_nodes
    if percentage >= 100:
        return num_all_nodes
    adaptive = percentage
    if adaptive <= 0:
        adaptive = max(50 - num_all_nodes // 125, 5)
    n = num_all_nodes * adaptive // 100
    return max(n, min_feasible)
