"""The DaemonSet controller: one pod per eligible node, placed by the default
scheduler, rolled out by revision (``pkg/controller/daemon/daemon_controller.go`` and
``update.go``, Kubernetes v1.32).

Per sync (syncDaemonSet): a DaemonSet selecting everything gets a ``SelectingAll``
event and nothing else; one being deleted is left alone. The ControllerRevisions it
controls (claimed by selector, as ``pkg/controller/history``) are split into the one
matching the current template and the old ones (constructHistory): the current one is
created (``<name>-<hash>``, ``revision`` = highest old + 1) or renumbered to the top;
its ``controller-revision-hash`` label names the current pods. Until the creations and
deletions of the last sync are seen, only the status is written. Otherwise (manage)
each node gets a pod when it should run one and has none, loses its pods when they may
not continue running, loses failed pods (with per-node backoff, ``FailedDaemonPod``) and
succeeded ones (``SucceededDaemonPod``) and extra pods (all but the oldest; with surge,
one old and one new are kept); unscheduled pods of missing nodes are deleted. New pods
carry the daemon tolerations, the ``pod-template-generation`` and
``controller-revision-hash`` labels and a required node affinity ``matchFields
metadata.name In [node]``, created in slow-start batches (at most 250 per sync). A
RollingUpdate then deletes old pods within ``maxUnavailable`` (or, with ``maxSurge``,
creates new pods beside old ones and deletes an old pod once its replacement is
available); OnDelete waits for the user. Old revisions beyond
``revisionHistoryLimit`` whose hash no live pod carries are deleted (cleanupHistory).
Status: desired/current/ready/available/updated/misscheduled/unavailable counts and
``observedGeneration`` (updateDaemonSetStatus), which ``kubectl rollout status ds``
reads. Pods on a deleted node are removed by the pod GC (orphans), as in Kubernetes.
Events (RealPodControl): ``SuccessfulCreate`` "Created pod: NAME", ``FailedCreate``
"Error creating: ...", ``SuccessfulDelete`` "Deleted pod: NAME", ``FailedDelete``.
"""

from __future__ import annotations

import asyncio
import copy
import logging
from typing import Any

from controlplane.api.resources import NODES, PODS, Resource, get
from controlplane.client.informer import key_of
from controlplane.client.rest import ApiError
from controlplane.labels import LabelSelector, selector_from_dict
from controlplane.log import event

from . import daemonset_util as du
from .controller import Controller, ControllerContext
from .controller_utils import (
    SLOW_START_INITIAL_BATCH_SIZE,
    controller_ref,
    is_pod_available,
    is_pod_ready,
    meta,
    name_of,
    new_controller_ref,
    pod_from_template,
    pods_by_owner,
    resolve_controller_ref,
    selecting_owners,
    slow_start_batch,
)
from .deployment_util import compute_hash
from .expectations import Expectations
from .ref_manager import RefManager
from .replicaset import namespace_terminating

log = logging.getLogger("controller-manager")

DAEMONSETS: Resource = get("daemonsets", "apps")
CONTROLLERREVISIONS: Resource = get("controllerrevisions", "apps")
KIND = "DaemonSet"
API_VERSION = "apps/v1"
COMPONENT = "daemonset-controller"
#: at most this many creations or deletions per sync (daemon_controller.go BurstReplicas)
BURST_REPLICAS = 250
#: status writes retried this many times after a conflict (StatusUpdateRetries)
STATUS_UPDATE_RETRIES = 1
#: failed-pod deletion backoff per (DaemonSet, node): 1 s doubling to 15 min
#: (NewDaemonSetsController: flowcontrol.NewBackOff(1*time.Second, 15*time.Minute))
BACKOFF_INITIAL, BACKOFF_MAX = 1.0, 900.0

SELECTING_ALL_REASON = "SelectingAll"
FAILED_DAEMON_POD_REASON = "FailedDaemonPod"
SUCCEEDED_DAEMON_POD_REASON = "SucceededDaemonPod"

JSON = dict[str, Any]


class Backoff:
    """client-go's ``flowcontrol.Backoff`` for one key space: ``next`` doubles a key's delay
    (reset once it has been idle for twice the maximum), ``in_backoff_since_update`` is
    True while less than the delay has passed since the last ``next``."""

    def __init__(self, clock: Any, initial: float = BACKOFF_INITIAL, maximum: float = BACKOFF_MAX) -> None:
        self._clock, self._initial, self._max = clock, initial, maximum
        self._e: dict[str, tuple[float, float]] = {}      # key -> (delay, last update)

    def get(self, key: str) -> float:
        return self._e.get(key, (0.0, 0.0))[0]

    def next(self, key: str) -> None:
        now = self._clock()
        e = self._e.get(key)
        if e is None or now - e[1] > 2 * self._max:
            self._e[key] = (self._initial, now)
        else:
            self._e[key] = (min(e[0] * 2, self._max), now)

    def in_backoff_since_update(self, key: str) -> bool:
        e = self._e.get(key)
        return e is not None and self._clock() - e[1] < e[0]


def _revision(h: JSON) -> int:
    return int(h.get("revision") or 0)


class DaemonSetController(Controller):
    """The DaemonSet controller (see the module docstring)."""

    name = "daemonset"
    workers = 2          # kube-controller-manager --concurrent-daemonset-syncs

    def __init__(self, ctx: ControllerContext) -> None:
        super().__init__(ctx)
        self.expectations = Expectations()
        self.recorder = ctx.recorder(COMPONENT)
        self.backoff = Backoff(ctx.clock)
        self.dss = ctx.informers.informer(DAEMONSETS)
        self.pods = ctx.informers.informer(PODS)
        self.nodes = ctx.informers.informer(NODES)
        self.histories = ctx.informers.informer(CONTROLLERREVISIONS)
        self.dss.add_handlers(self._ds_added, lambda old, new: self.enqueue(key_of(new)), self._ds_deleted)
        self.pods.add_handlers(self._pod_added, self._pod_updated, self._pod_deleted)
        self.nodes.add_handlers(self._node_added, self._node_updated, None)
        self.histories.add_handlers(self._history_added, self._history_updated, self._history_deleted)

    # -- events ------------------------------------------------------------------
    def _ds_added(self, ds: JSON) -> None:
        self.ctx.tracer.emit(5, "ADDED DaemonSet received on watch", ds, detail=COMPONENT, kind=KIND)
        self.enqueue(key_of(ds))

    def _ds_deleted(self, ds: JSON) -> None:
        self.expectations.delete(key_of(ds))
        self.enqueue(key_of(ds))

    def _resolve(self, obj: JSON) -> str | None:
        """Key of the DaemonSet controlling ``obj`` (uid checked against the cache)."""
        return resolve_controller_ref(obj, KIND, self.dss.store)

    def _matching(self, obj: JSON) -> list[str]:
        """DaemonSets of ``obj``'s namespace whose selector matches its labels."""
        return selecting_owners(obj, self.dss.store.values())

    def _pod_added(self, pod: JSON) -> None:
        if meta(pod).get("deletionTimestamp"):
            self._pod_deleted(pod)
            return
        if controller_ref(pod) is not None:
            key = self._resolve(pod)
            if key:
                self.expectations.creation_observed(key)
                self.enqueue(key)
            return
        for k in self._matching(pod):
            self.enqueue(k)

    def _pod_updated(self, old: JSON, new: JSON) -> None:
        if meta(old).get("resourceVersion") == meta(new).get("resourceVersion") and old is not new:
            return
        if meta(new).get("deletionTimestamp"):
            self._pod_deleted(new)
            return
        old_ref, new_ref = controller_ref(old), controller_ref(new)
        if old_ref and (not new_ref or old_ref.get("uid") != new_ref.get("uid")):
            k = self._resolve(old)
            if k:
                self.enqueue(k)
        if new_ref:
            k = self._resolve(new)
            if k:
                self.enqueue(k)
            return
        if meta(old).get("labels") != meta(new).get("labels") or old_ref:
            for k in self._matching(new):
                self.enqueue(k)

    def _pod_deleted(self, pod: JSON) -> None:
        k = self._resolve(pod)
        if k:
            self.expectations.deletion_observed(k, key_of(pod))
            self.enqueue(k)

    def _node_added(self, node: JSON) -> None:
        for ds in list(self.dss.store.values()):
            if du.node_should_run_daemon_pod(node, ds)[0]:
                self.enqueue(key_of(ds))

    def _node_updated(self, old: JSON, new: JSON) -> None:
        for ds in list(self.dss.store.values()):
            if du.node_should_run_daemon_pod(old, ds) != du.node_should_run_daemon_pod(new, ds):
                self.enqueue(key_of(ds))

    def _history_added(self, h: JSON) -> None:
        if meta(h).get("deletionTimestamp"):
            self._history_deleted(h)
            return
        if controller_ref(h) is not None:
            k = self._resolve(h)
            if k:
                self.enqueue(k)
            return
        for k in self._matching(h):
            self.enqueue(k)

    def _history_updated(self, old: JSON, new: JSON) -> None:
        if meta(old).get("resourceVersion") == meta(new).get("resourceVersion") and old is not new:
            return
        if controller_ref(old) and (controller_ref(old) or {}).get("uid") != (controller_ref(new) or {}).get("uid"):
            k = self._resolve(old)
            if k:
                self.enqueue(k)
        self._history_added(new)

    def _history_deleted(self, h: JSON) -> None:
        k = self._resolve(h)
        if k:
            self.enqueue(k)

    # -- sync ----------------------------------------------------------------------
    async def sync(self, key: str) -> None:
        """Reconcile one DaemonSet (``namespace/name``); see the module docstring."""
        ds = self.dss.store.get(key)
        if ds is None:
            self.expectations.delete(key)
            return
        nodes = list(self.nodes.store.values())
        sel_raw = (ds.get("spec") or {}).get("selector")
        if isinstance(sel_raw, dict) and not sel_raw.get("matchLabels") and not sel_raw.get("matchExpressions"):
            self.recorder.event(self._ev_obj(ds), "Warning", SELECTING_ALL_REASON,
                                "This daemon set is selecting all pods. A non-empty selector is required.")
            return
        if meta(ds).get("deletionTimestamp"):
            return
        try:
            selector = selector_from_dict(sel_raw)
        except ValueError as e:
            event(log, "daemonset.invalid_selector", logging.WARNING, key=key, error=str(e))
            return
        cur, old = await self.construct_history(ds, selector)
        hash_ = (meta(cur).get("labels") or {}).get(du.CONTROLLER_REVISION_HASH, "")
        if not self.expectations.satisfied(key):
            await self.update_status(ds, nodes, hash_, selector, False)
            return
        err: Exception | None = None
        try:
            await self.update_daemonset(ds, nodes, hash_, key, old, selector)
        except asyncio.CancelledError:
            raise
        except Exception as e:
            err = e
        await self.update_status(ds, nodes, hash_, selector, True)
        if err is not None:
            raise err

    async def update_daemonset(self, ds: JSON, nodes: list[JSON], hash_: str, key: str,
                               old: list[JSON], selector: LabelSelector) -> None:
        """manage, then the rolling update when expectations allow, then cleanupHistory
        (updateDaemonSet). Raises the first write error."""
        await self.manage(ds, nodes, hash_, selector)
        if self.expectations.satisfied(key):
            strategy = (((ds.get("spec") or {}).get("updateStrategy") or {}).get("type") or "RollingUpdate")
            if strategy == "RollingUpdate":
                await self.rolling_update(ds, nodes, hash_, selector)
        await self.cleanup_history(ds, old, selector)

    # -- pods ------------------------------------------------------------------------
    async def daemon_pods(self, ds: JSON, selector: LabelSelector) -> list[JSON]:
        """The pods ``ds`` controls after adoption / release (getDaemonPods)."""
        ns = meta(ds).get("namespace")
        pods = [p for _, p in pods_by_owner(self.pods, meta(ds).get("uid"), ns)   # its pods, the orphans
                if meta(p).get("namespace") == ns]
        rm = RefManager(self.client, ds, API_VERSION, KIND, selector, PODS)
        return await rm.claim(pods)

    async def nodes_to_daemon_pods(self, ds: JSON, selector: LabelSelector,
                                   include_deleted_terminal: bool = False) -> dict[str, list[JSON]]:
        """Node name → the daemon pods meant for it (getNodesToDaemonPods); terminal pods being
        deleted are left out unless ``include_deleted_terminal``; a pod with no target node is
        skipped."""
        out: dict[str, list[JSON]] = {}
        for pod in await self.daemon_pods(ds, selector):
            phase = (pod.get("status") or {}).get("phase")
            if not include_deleted_terminal and phase in ("Succeeded", "Failed") and \
                    meta(pod).get("deletionTimestamp"):
                continue
            node = du.target_node_name(pod)
            if node is None:
                event(log, "daemonset.pod_without_node", logging.WARNING, pod=name_of(pod))
                continue
            out.setdefault(node, []).append(pod)
        return out

    def pods_should_be_on_node(self, node: JSON, node_to_pods: dict[str, list[JSON]], ds: JSON,
                               hash_: str) -> tuple[list[str], list[JSON]]:
        """``(nodes needing a pod, pods to delete)`` for one node (podsShouldBeOnNode)."""
        name = name_of(node)
        should_run, should_continue = du.node_should_run_daemon_pod(node, ds)
        pods = node_to_pods.get(name, [])
        exists = name in node_to_pods
        create: list[str] = []
        delete: list[JSON] = []
        if should_run and not exists:
            create.append(name)
        elif should_continue:
            running: list[JSON] = []
            for pod in pods:
                if meta(pod).get("deletionTimestamp"):
                    continue
                phase = (pod.get("status") or {}).get("phase")
                pod_id = f"{meta(pod).get('namespace')}/{name_of(pod)}"
                if phase == "Failed":
                    bkey = f"{meta(ds).get('uid')}/{name}"        # failedPodsBackoffKey
                    if self.backoff.in_backoff_since_update(bkey):
                        self.queue.add_after(key_of(ds), self.backoff.get(bkey))
                        continue
                    self.backoff.next(bkey)
                    self.recorder.event(self._ev_obj(ds), "Warning", FAILED_DAEMON_POD_REASON,
                                        f"Found failed daemon pod {pod_id} on node {name}, will try to kill it")
                    delete.append(pod)
                elif phase == "Succeeded":
                    self.recorder.event(self._ev_obj(ds), "Normal", SUCCEEDED_DAEMON_POD_REASON,
                                        f"Found succeeded daemon pod {pod_id} on node {name}, "
                                        "will try to delete it")
                    delete.append(pod)
                else:
                    running.append(pod)
            running.sort(key=du.pod_order_key)
            if not du.allows_surge(ds):
                delete.extend(running[1:])
            elif len(running) > 2:
                oldest_new = oldest_old = None
                gen = self._generation(ds)
                for pod in running:
                    if du.is_pod_updated(pod, hash_, gen):
                        if oldest_new is None:
                            oldest_new = pod
                            continue
                    elif oldest_old is None:
                        oldest_old = pod
                        continue
                    delete.append(pod)
        elif exists:
            delete.extend(p for p in pods if not meta(p).get("deletionTimestamp"))
        return create, delete

    async def manage(self, ds: JSON, nodes: list[JSON], hash_: str, selector: LabelSelector) -> None:
        """Create the missing daemon pods and delete the ones that must go (manage)."""
        node_to_pods = await self.nodes_to_daemon_pods(ds, selector)
        create: list[str] = []
        delete: list[JSON] = []
        for node in nodes:
            c, d = self.pods_should_be_on_node(node, node_to_pods, ds, hash_)
            create += c
            delete += d
        known = {name_of(n) for n in nodes}
        for node_name, pods in node_to_pods.items():              # getUnscheduledPodsWithoutNode
            if node_name not in known:
                delete += [p for p in pods if not (p.get("spec") or {}).get("nodeName")]
        await self.sync_nodes(ds, delete, create, hash_)

    def _generation(self, ds: JSON) -> int | None:
        try:
            return du.template_generation(ds)
        except ValueError:
            return None

    async def sync_nodes(self, ds: JSON, pods_to_delete: list[JSON], nodes_needing: list[str],
                         hash_: str) -> None:
        """Create a pod on each node of ``nodes_needing`` and delete ``pods_to_delete``, at most
        :data:`BURST_REPLICAS` of each, expectations set first (syncNodes). Raises the first
        error."""
        key = key_of(ds)
        nodes_needing = nodes_needing[:BURST_REPLICAS]
        pods_to_delete = pods_to_delete[:BURST_REPLICAS]
        self.expectations.set_expectations(key, len(nodes_needing), [key_of(p) for p in pods_to_delete])
        template = du.create_pod_template((ds.get("spec") or {}).get("template") or {},
                                          self._generation(ds), hash_)
        ref = new_controller_ref(ds, API_VERSION, KIND)
        ns = meta(ds).get("namespace")
        targets = iter(nodes_needing)
        attempted = 0
        errors: list[Exception] = []

        async def create_one() -> None:
            nonlocal attempted
            node_name = next(targets)
            attempted += 1
            tpl = copy.deepcopy(template)
            tpl["spec"]["affinity"] = du.node_name_affinity(tpl["spec"].get("affinity"), node_name)
            pod = pod_from_template(tpl, ds, ref)
            try:
                created = await self.client.create(PODS, pod, ns)
            except ApiError as e:
                if namespace_terminating(e):
                    return
                self.expectations.creation_observed(key)
                self.recorder.event(self._ev_obj(ds), "Warning", "FailedCreate", f"Error creating: {e.message}")
                errors.append(e)
                raise
            except Exception as e:
                self.expectations.creation_observed(key)
                errors.append(e)
                raise
            pname = name_of(created)
            self.recorder.event(self._ev_obj(ds), "Normal", "SuccessfulCreate", f"Created pod: {pname}")
            self.ctx.tracer.emit(6, f"{COMPONENT} created pod {pname}", created,
                                 detail=f"DaemonSet {name_of(ds)} node {node_name}", kind="Pod")

        if nodes_needing:
            event(log, "daemonset.create", key=key, nodes=",".join(nodes_needing))
            _, err = await slow_start_batch(len(nodes_needing), SLOW_START_INITIAL_BATCH_SIZE, create_one)
            skipped = len(nodes_needing) - attempted
            if err is not None and skipped > 0:
                self.expectations.lower_creations(key, skipped)   # retried by the next sync
        if pods_to_delete:
            event(log, "daemonset.delete", key=key, pods=",".join(name_of(p) for p in pods_to_delete))
            results = await asyncio.gather(*(self._delete_pod(key, ds, p) for p in pods_to_delete),
                                           return_exceptions=True)
            errors += [r for r in results if isinstance(r, Exception)]
        if errors:
            raise errors[0]

    async def _delete_pod(self, key: str, ds: JSON, pod: JSON) -> None:
        pmd = meta(pod)
        try:
            await self.client.delete(PODS, pmd["name"], pmd.get("namespace"))
        except Exception as e:
            self.expectations.deletion_observed(key, key_of(pod))
            if isinstance(e, ApiError) and e.code == 404:
                return
            self.recorder.event(self._ev_obj(ds), "Warning", "FailedDelete",
                                f"Error deleting: {e.message if isinstance(e, ApiError) else e}")
            raise
        self.recorder.event(self._ev_obj(ds), "Normal", "SuccessfulDelete", f"Deleted pod: {pmd.get('name')}")

    # -- rolling update ---------------------------------------------------------------------
    def updated_desired_node_counts(self, ds: JSON, nodes: list[JSON],
                                    node_to_pods: dict[str, list[JSON]]) -> tuple[int, int, int]:
        """``(max_surge, max_unavailable, desired)`` (updatedDesiredNodeCounts): nodes that should
        run a pod get an entry in ``node_to_pods``; a configuration allowing neither surge nor
        unavailability is treated as maxUnavailable 1."""
        desired = 0
        for node in nodes:
            if not du.node_should_run_daemon_pod(node, ds)[0]:
                continue
            desired += 1
            node_to_pods.setdefault(name_of(node), [])
        max_unavailable = du.unavailable_count(ds, desired)
        max_surge = du.surge_count(ds, desired)
        if desired > 0 and max_unavailable == 0 and max_surge == 0:
            max_unavailable = 1
        return max_surge, max_unavailable, desired

    async def rolling_update(self, ds: JSON, nodes: list[JSON], hash_: str, selector: LabelSelector) -> None:
        """Replace old pods within maxUnavailable, or surge new pods within maxSurge
        (update.go rollingUpdate)."""
        node_to_pods = await self.nodes_to_daemon_pods(ds, selector)
        max_surge, max_unavailable, _desired = self.updated_desired_node_counts(ds, nodes, node_to_pods)
        mrs = int((ds.get("spec") or {}).get("minReadySeconds") or 0)
        now = self.ctx.clock()
        gen = self._generation(ds)

        def available(p: JSON) -> bool:
            return is_pod_available(p, mrs, now)

        if max_surge == 0:
            unavailable = 0
            allowed: list[JSON] = []
            candidates: list[JSON] = []
            for _node, pods in sorted(node_to_pods.items()):
                new, old, ok = du.find_updated_pods_on_node(pods, hash_, gen)
                if not ok or (old is None) == (new is None):
                    unavailable += 1
                elif new is not None:
                    if not available(new):
                        unavailable += 1
                elif old is not None:
                    if not available(old):
                        allowed.append(old)
                    elif unavailable >= max_unavailable:
                        continue
                    else:
                        candidates.append(old)
            remaining = max(0, min(max_unavailable - unavailable, len(candidates)))
            await self.sync_nodes(ds, allowed + candidates[:remaining], [], hash_)
            return

        to_delete: list[JSON] = []
        candidate_nodes: list[str] = []
        allowed_nodes: list[str] = []
        surge = 0
        for node_name, pods in sorted(node_to_pods.items()):
            new, old, ok = du.find_updated_pods_on_node(pods, hash_, gen)
            if not ok:
                surge += 1
                continue
            if old is None:
                continue
            if new is None:
                if not available(old):
                    node = self.nodes.store.get(node_name)
                    if node is None or not du.node_should_run_daemon_pod(node, ds)[0]:
                        to_delete.append(old)
                        continue
                    allowed_nodes.append(node_name)
                elif surge >= max_surge:
                    continue
                else:
                    candidate_nodes.append(node_name)
            else:
                if not available(new):
                    surge += 1
                    continue
                to_delete.append(old)
        remaining = max(0, min(max_surge - surge, len(candidate_nodes)))
        await self.sync_nodes(ds, to_delete, allowed_nodes + candidate_nodes[:remaining], hash_)

    # -- history ------------------------------------------------------------------------------
    async def controlled_histories(self, ds: JSON, selector: LabelSelector) -> list[JSON]:
        """The ControllerRevisions ``ds`` controls after adoption / release (controlledHistories)."""
        ns = meta(ds).get("namespace")
        hs = [h for h in list(self.histories.store.values()) if meta(h).get("namespace") == ns]
        rm = RefManager(self.client, ds, API_VERSION, KIND, selector, CONTROLLERREVISIONS)
        return await rm.claim(hs)

    async def construct_history(self, ds: JSON, selector: LabelSelector) -> tuple[JSON, list[JSON]]:
        """``(current revision, old revisions)`` (constructHistory): revisions lacking the
        ``controller-revision-hash`` label get their name as its value; the current one is
        created when missing (:meth:`snapshot`), deduplicated when several match, and
        renumbered to highest old + 1 when it is behind."""
        current: list[JSON] = []
        old: list[JSON] = []
        for h in await self.controlled_histories(ds, selector):
            if du.CONTROLLER_REVISION_HASH not in (meta(h).get("labels") or {}):
                upd = copy.deepcopy(h)
                upd["metadata"].setdefault("labels", {})[du.CONTROLLER_REVISION_HASH] = name_of(h)
                h = await self.client.update(CONTROLLERREVISIONS, upd)
            (current if du.matches_revision(ds, h) else old).append(h)
        next_revision = max((_revision(h) for h in old), default=0) + 1
        if not current:
            cur = await self.snapshot(ds, next_revision)
        else:
            cur = await self.dedup_current(ds, current)
            if _revision(cur) < next_revision:
                upd = copy.deepcopy(cur)
                upd["revision"] = next_revision
                cur = await self.client.update(CONTROLLERREVISIONS, upd)
        return cur, old

    async def dedup_current(self, ds: JSON, current: list[JSON]) -> JSON:
        """Keep the highest-revision match; relabel the pods of the others to its hash and
        delete them (dedupCurHistories)."""
        if len(current) == 1:
            return current[0]
        keep = max(current, key=_revision)
        keep_hash = (meta(keep).get("labels") or {}).get(du.CONTROLLER_REVISION_HASH)
        ns = meta(ds).get("namespace")
        for h in current:
            if h is keep:
                continue
            dup_hash = (meta(h).get("labels") or {}).get(du.CONTROLLER_REVISION_HASH)
            for pod in list(self.pods.store.values()):
                if meta(pod).get("namespace") != ns or (controller_ref(pod) or {}).get("uid") != meta(ds).get("uid"):
                    continue
                if (meta(pod).get("labels") or {}).get(du.CONTROLLER_REVISION_HASH) == dup_hash:
                    await self.client.patch(PODS, name_of(pod),
                                            {"metadata": {"labels": {du.CONTROLLER_REVISION_HASH: keep_hash}}}, ns)
            try:
                await self.client.delete(CONTROLLERREVISIONS, name_of(h), ns)
            except ApiError as e:
                if e.code != 404:
                    raise
        return keep

    async def snapshot(self, ds: JSON, revision: int) -> JSON:
        """Create the ControllerRevision ``<ds>-<hash>`` of the current template (snapshot):
        labels = template labels + ``controller-revision-hash``, the DaemonSet's annotations,
        a controllerRef, ``data`` = :func:`daemonset_util.revision_patch`. A name taken by a
        different template bumps ``status.collisionCount`` and raises (the next sync retries
        with the new hash)."""
        spec, md = ds.get("spec") or {}, meta(ds)
        cc = (ds.get("status") or {}).get("collisionCount")
        hash_ = compute_hash(spec.get("template") or {}, cc)
        name = f"{md.get('name')}-{hash_}"
        labels = dict(((spec.get("template") or {}).get("metadata") or {}).get("labels") or {})
        labels[du.CONTROLLER_REVISION_HASH] = hash_
        hmeta: JSON = {"name": name, "namespace": md.get("namespace"), "labels": labels,
                       "ownerReferences": [new_controller_ref(ds, API_VERSION, KIND)]}
        if md.get("annotations"):
            hmeta["annotations"] = dict(md["annotations"])
        history = {"apiVersion": "apps/v1", "kind": "ControllerRevision", "metadata": hmeta,
                   "data": du.revision_patch(ds), "revision": revision}
        try:
            out: JSON = await self.client.create(CONTROLLERREVISIONS, history, md.get("namespace"))
            return out
        except ApiError as e:
            if e.code != 409:
                raise
            existing = await self.client.get(CONTROLLERREVISIONS, name, md.get("namespace"))
            if du.matches_revision(ds, existing):
                return dict(existing)
            fresh = await self.client.get(DAEMONSETS, md["name"], md.get("namespace"))
            fresh_cc = (fresh.get("status") or {}).get("collisionCount")
            if fresh_cc != cc:
                raise RuntimeError(f"found a stale collision count ({cc}, expected {fresh_cc}) of DaemonSet "
                                   f"{md.get('name')!r} while processing; will retry until it is updated") from e
            fresh.setdefault("status", {})["collisionCount"] = (fresh_cc or 0) + 1
            await self.client.update_status(DAEMONSETS, fresh)
            event(log, "daemonset.hash_collision", key=key_of(ds), collisionCount=(fresh_cc or 0) + 1)
            raise

    async def cleanup_history(self, ds: JSON, old: list[JSON], selector: LabelSelector) -> None:
        """Delete the oldest old revisions beyond ``revisionHistoryLimit`` whose hash no live
        daemon pod carries (cleanupHistory)."""
        limit = (ds.get("spec") or {}).get("revisionHistoryLimit")
        to_kill = len(old) - int(10 if limit is None else limit)
        if to_kill <= 0:
            return
        live = {(meta(p).get("labels") or {}).get(du.CONTROLLER_REVISION_HASH)
                for pods in (await self.nodes_to_daemon_pods(ds, selector)).values() for p in pods}
        for h in sorted(old, key=_revision):
            if to_kill <= 0:
                break
            if (meta(h).get("labels") or {}).get(du.CONTROLLER_REVISION_HASH) in live:
                continue
            try:
                await self.client.delete(CONTROLLERREVISIONS, name_of(h), meta(h).get("namespace"))
            except ApiError as e:
                if e.code != 404:
                    raise
            to_kill -= 1

    # -- status ---------------------------------------------------------------------------------
    def calculate_status(self, ds: JSON, nodes: list[JSON], node_to_pods: dict[str, list[JSON]],
                         hash_: str) -> JSON:
        """The counters of updateDaemonSetStatus: per node that should run the pod, the oldest
        pod decides ready / available / updated; pods on nodes that should not run it are
        misscheduled. Keys as DaemonSetStatus's JSON (omitempty ones left out when 0)."""
        desired = current = ready = available = updated = mis = 0
        mrs = int((ds.get("spec") or {}).get("minReadySeconds") or 0)
        now = self.ctx.clock()
        gen = self._generation(ds)
        for node in nodes:
            should_run, _ = du.node_should_run_daemon_pod(node, ds)
            pods = node_to_pods.get(name_of(node)) or []
            if should_run:
                desired += 1
                if not pods:
                    continue
                current += 1
                pod = sorted(pods, key=du.pod_order_key)[0]
                if is_pod_ready(pod):
                    ready += 1
                    if is_pod_available(pod, mrs, now):
                        available += 1
                if du.is_pod_updated(pod, hash_, gen):
                    updated += 1
            elif pods:
                mis += 1
        return {"desiredNumberScheduled": desired, "currentNumberScheduled": current,
                "numberMisscheduled": mis, "numberReady": ready, "updatedNumberScheduled": updated,
                "numberAvailable": available, "numberUnavailable": desired - available}

    async def update_status(self, ds: JSON, nodes: list[JSON], hash_: str, selector: LabelSelector,
                            update_observed_gen: bool) -> None:
        """Write the counters (and ``observedGeneration`` when ``update_observed_gen``) through the
        status subresource when they changed, one retry after a conflict (storeDaemonSetStatus);
        with minReadySeconds, re-check once pods may have become available."""
        node_to_pods = await self.nodes_to_daemon_pods(ds, selector)
        counts = self.calculate_status(ds, nodes, node_to_pods, hash_)
        st = ds.get("status") or {}
        gen = int(meta(ds).get("generation") or 0)
        if all(int(st.get(k) or 0) == v for k, v in counts.items()) and \
                int(st.get("observedGeneration") or 0) >= gen:
            self._requeue_for_availability(ds, counts)
            return
        to_update = copy.deepcopy(ds)
        for attempt in range(STATUS_UPDATE_RETRIES + 1):
            status = to_update.setdefault("status", {})
            if update_observed_gen:
                status["observedGeneration"] = gen
            for k, v in counts.items():
                if v or k in ("desiredNumberScheduled", "currentNumberScheduled", "numberMisscheduled",
                              "numberReady"):
                    status[k] = v
                else:
                    status.pop(k, None)
            try:
                await self.client.update_status(DAEMONSETS, to_update)
                break
            except ApiError as e:
                if e.code == 404:
                    return
                if e.code != 409 or attempt >= STATUS_UPDATE_RETRIES:
                    raise
                md = meta(ds)
                to_update = await self.client.get(DAEMONSETS, md["name"], md.get("namespace"))
        self._requeue_for_availability(ds, counts)

    def _requeue_for_availability(self, ds: JSON, counts: JSON) -> None:
        mrs = int((ds.get("spec") or {}).get("minReadySeconds") or 0)
        if mrs > 0 and counts["numberReady"] != counts["numberAvailable"]:
            self.queue.add_after(key_of(ds), mrs)

    def _ev_obj(self, ds: JSON) -> JSON:
        out = dict(ds)
        out.setdefault("kind", KIND)
        out.setdefault("apiVersion", API_VERSION)
        return out
