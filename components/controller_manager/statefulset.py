"""The StatefulSet controller: pods with stable names ``<set>-<ordinal>``, stable claims
``<claim>-<set>-<ordinal>``, created in order and removed from the highest ordinal, and
rolled to a new template revision by revision (kube-controller-manager v1.32,
``pkg/controller/statefulset/``).

Per sync (``stateful_set.go`` sync, ``stateful_set_control.go`` UpdateStatefulSet /
performUpdate / updateStatefulSet):

1. adopt orphan ControllerRevisions matching the selector; claim the set's pods (selector
   and a name ``<set>-<ordinal>``) by controllerRef;
2. the revisions: the update revision is the one whose data equals the set's template
   (an older equal one is renumbered: a rollback), else a new one is created
   (``<set>-<hash>``, ``collisionCount`` bumped on a name clash); the current revision is
   ``status.currentRevision`` (the update revision at first);
3. pods in ``[start, start+replicas)`` are replicas, others condemned. Replicas: a Failed or
   Succeeded pod is deleted (recreated by a later sync); a missing pod is created with its
   claims first — OrderedReady stops after each creation and at every pod not Running and
   Ready (or terminating); Parallel runs them all in slow-start batches. Claims get the
   retention policy's ownerReferences (``persistentVolumeClaimRetentionPolicy``). Condemned
   pods are deleted from the highest ordinal, one at a time under OrderedReady and only
   when the others are healthy;
4. RollingUpdate: the highest-ordinal pod at or above ``partition`` not at the update
   revision is deleted (then recreated at it), waiting for unhealthy pods; with
   ``maxUnavailable`` up to that many at once (``updateStatefulSetAfterInvariantEstablished``).
   OnDelete: pods change only when deleted;
5. status (replicas, readyReplicas, availableReplicas, currentReplicas, updatedReplicas,
   currentRevision, updateRevision, collisionCount, observedGeneration) written when it
   differs; a finished rolling update makes the update revision current; revisions beyond
   ``revisionHistoryLimit`` that no pod uses are deleted (truncateHistory).

Events (``stateful_pod_control.go`` recordPodEvent / recordClaimEvent, source
``statefulset-controller``): ``SuccessfulCreate`` "create Pod web-0 in StatefulSet web
successful", ``SuccessfulDelete`` "delete Pod web-1 in StatefulSet web successful",
``SuccessfulUpdate``, ``Failed<Verb>`` "<verb> Pod X in StatefulSet Y failed error: ...",
and for claims ``SuccessfulCreate`` "create Claim www-web-0 Pod web-0 in StatefulSet web
success".
"""

from __future__ import annotations

import asyncio
import copy
import logging
from typing import Any, Awaitable, Callable

from controlplane.api.resources import PODS, get
from controlplane.client.informer import key_of
from controlplane.client.rest import ApiError
from controlplane.log import event
from controlplane.selectors import LabelSelector, selector_from_dict

from . import statefulset_utils as su
from .controller import Controller, ControllerContext
from .controller_utils import controller_ref, is_pod_ready, meta, pods_by_owner, selecting_owners
from .ref_manager import RefManager

log = logging.getLogger("controller-manager")

STATEFULSETS = get("statefulsets", "apps")
CONTROLLERREVISIONS = get("controllerrevisions", "apps")
PERSISTENTVOLUMECLAIMS = get("persistentvolumeclaims")

COMPONENT = "statefulset-controller"
#: slowStartBatch's largest batch (stateful_set_control.go MaxBatchSize)
MAX_BATCH_SIZE = 500
#: retries of a conflicting pod / status update (retry.DefaultBackoff steps)
UPDATE_RETRIES = 5

JSON = dict[str, Any]
StepFn = Callable[[int], Awaitable[bool]]


class _Aggregate(Exception):
    """Several errors of one sync (utilerrors.NewAggregate); the message joins them."""

    def __init__(self, errors: list[Exception]) -> None:
        self.errors = errors
        super().__init__(errors[0] if len(errors) == 1 else "[" + ", ".join(map(str, errors)) + "]")


async def _slow_start_batch(initial: int, remaining: int, fn: StepFn) -> None:
    """Run ``fn(0..remaining-1)`` in concurrent batches of 1, 2, 4, ... (at most
    :data:`MAX_BATCH_SIZE`); stop after a batch with failures and raise them
    (stateful_set_control.go slowStartBatch; ``fn``'s verdict is ignored)."""
    j = 0
    batch = min(remaining, initial)
    while batch > 0:
        results = await asyncio.gather(*(fn(k) for k in range(j, j + batch)), return_exceptions=True)
        j += batch
        errs = [r for r in results if isinstance(r, BaseException)]
        for e in errs:
            if not isinstance(e, Exception):
                raise e
        if errs:
            raise _Aggregate([e for e in errs if isinstance(e, Exception)])
        remaining -= batch
        batch = min(2 * batch, remaining, MAX_BATCH_SIZE)


async def _run_for_all(count: int, fn: StepFn, monotonic: bool) -> bool:
    """runForAll: in order, stopping at the first step that says so (monotonic), or all in
    slow-start batches. True when the sync must stop here; errors raise."""
    if monotonic:
        for i in range(count):
            if await fn(i):
                return True
        return False
    await _slow_start_batch(1, count, fn)
    return False


def _err_text(e: Exception) -> str:
    return e.message if isinstance(e, ApiError) else str(e)


class StatefulSetController(Controller):
    """The StatefulSet controller (see the module docstring); 5 workers, as
    ``--concurrent-statefulset-syncs``."""

    name = "statefulset"
    workers = 5

    def __init__(self, ctx: ControllerContext) -> None:
        super().__init__(ctx)
        self.recorder = ctx.recorder(COMPONENT)
        self.sets = ctx.informers.informer(STATEFULSETS)
        self.pods = ctx.informers.informer(PODS)
        self.revisions = ctx.informers.informer(CONTROLLERREVISIONS)
        self.claims = ctx.informers.informer(PERSISTENTVOLUMECLAIMS)
        self.sets.add_handlers(lambda o: self.enqueue(key_of(o)),
                               lambda old, new: self.enqueue(key_of(new)),
                               lambda o: self.enqueue(key_of(o)))
        self.pods.add_handlers(self._pod_added, self._pod_updated, self._pod_deleted)
        self.revisions.add_handlers(self._rev_changed, lambda old, new: self._rev_updated(old, new),
                                    self._rev_changed)

    # -- events (stateful_set.go addPod / updatePod / deletePod, add/update/deleteHistory) --
    def _owner_key(self, obj: JSON, ref: JSON | None = None) -> str | None:
        """The key of the cached StatefulSet ``ref`` (the object's controllerRef) names, uid checked."""
        ref = ref if ref is not None else controller_ref(obj)
        if ref is None or ref.get("kind") != su.KIND:
            return None
        key = f"{meta(obj).get('namespace')}/{ref.get('name')}"
        owner = self.sets.store.get(key)
        if owner is None or meta(owner).get("uid") != ref.get("uid"):
            return None
        return key

    def _matching_sets(self, obj: JSON) -> list[str]:
        return selecting_owners(obj, self.sets.store.values())

    def _pod_added(self, pod: JSON) -> None:
        if meta(pod).get("deletionTimestamp"):
            self._pod_deleted(pod)
            return
        if controller_ref(pod) is not None:
            k = self._owner_key(pod)
            if k:
                self.enqueue(k)
            return
        for k in self._matching_sets(pod):
            self.enqueue(k)

    def _pod_updated(self, old: JSON, new: JSON) -> None:
        if meta(old).get("resourceVersion") == meta(new).get("resourceVersion") and old is not new:
            return
        labels_changed = meta(old).get("labels") != meta(new).get("labels")
        old_ref, new_ref = controller_ref(old), controller_ref(new)
        ref_changed = (old_ref or {}).get("uid") != (new_ref or {}).get("uid")
        if ref_changed and old_ref is not None:
            k = self._owner_key(old, old_ref)
            if k:
                self.enqueue(k)
        if new_ref is not None:
            k = self._owner_key(new, new_ref)
            if k:
                self.enqueue(k)
                mrs = int(su.spec(self.sets.store.get(k) or {}).get("minReadySeconds") or 0)
                if mrs > 0 and not is_pod_ready(old) and is_pod_ready(new):
                    self.queue.add_after(k, mrs)
            return
        if labels_changed or ref_changed:
            for k in self._matching_sets(new):
                self.enqueue(k)

    def _pod_deleted(self, pod: JSON) -> None:
        k = self._owner_key(pod)
        if k:
            self.enqueue(k)

    def _rev_changed(self, rev: JSON) -> None:
        if controller_ref(rev) is not None:
            k = self._owner_key(rev)
            if k:
                self.enqueue(k)
            return
        for k in self._matching_sets(rev):
            self.enqueue(k)

    def _rev_updated(self, old: JSON, new: JSON) -> None:
        if meta(old).get("resourceVersion") == meta(new).get("resourceVersion") and old is not new:
            return
        self._rev_changed(new)

    # -- sync ------------------------------------------------------------------------
    async def sync(self, key: str) -> None:
        """Reconcile one StatefulSet (``namespace/name``); raises the sync's errors (retried)."""
        sts = self.sets.store.get(key)
        if sts is None:
            return
        try:
            selector = selector_from_dict(su.spec(sts).get("selector"))
        except ValueError as e:
            event(log, "statefulset.invalid_selector", logging.WARNING, key=key, error=str(e))
            return
        sts = copy.deepcopy(sts)
        sts.setdefault("kind", su.KIND)
        sts.setdefault("apiVersion", su.API_VERSION)
        await self._adopt_orphan_revisions(sts, selector)
        pods = await self._pods_for(sts, selector)
        status = await self.update_stateful_set(sts, pods)
        mrs = int(su.spec(sts).get("minReadySeconds") or 0)
        if mrs > 0 and status is not None and status.get("availableReplicas", 0) != su.replicas(sts):
            self.queue.add_after(key, mrs)

    def _list_revisions(self, sts: JSON, selector: LabelSelector) -> list[JSON]:
        """Revisions in the namespace matching the selector, owned by the set or by nobody
        (ListControllerRevisions)."""
        ns, uid = meta(sts).get("namespace"), meta(sts).get("uid")
        out = []
        for r in list(self.revisions.store.values()):
            if meta(r).get("namespace") != ns or not selector.matches(meta(r).get("labels") or {}):
                continue
            ref = controller_ref(r)
            if ref is None or ref.get("uid") == uid:
                out.append(r)
        return out

    async def _adopt_orphan_revisions(self, sts: JSON, selector: LabelSelector) -> None:
        orphans = [r for r in self._list_revisions(sts, selector) if controller_ref(r) is None]
        if not orphans:
            return
        rm = RefManager(self.client, sts, su.API_VERSION, su.KIND, selector, CONTROLLERREVISIONS)
        await rm.claim(orphans)

    async def _pods_for(self, sts: JSON, selector: LabelSelector) -> list[JSON]:
        """The set's pods: claimed by selector and name ``<set>-<ordinal>`` (getPodsForStatefulSet)."""
        ns = meta(sts).get("namespace")
        cands = [p for _, p in pods_by_owner(self.pods, meta(sts).get("uid"), ns)   # its pods, the orphans
                 if meta(p).get("namespace") == ns and su.is_member_of(sts, p)]
        rm = RefManager(self.client, sts, su.API_VERSION, su.KIND, selector, PODS)
        return await rm.claim(cands)

    async def update_stateful_set(self, sts: JSON, pods: list[JSON]) -> JSON | None:
        """UpdateStatefulSet: revisions, pods, status, then history truncation. Returns the
        status written (or that would have been); raises the errors met."""
        selector = selector_from_dict(su.spec(sts).get("selector"))
        revisions = su.sort_revisions(self._list_revisions(sts, selector))
        current: JSON | None = None
        update: JSON | None = None
        status: JSON | None = None
        errs: list[Exception] = []
        try:
            current, update, collision = await self._get_revisions(sts, revisions)
            try:
                status = await self._update_pods(sts, current, update, collision, pods)
            except _SyncError as e:
                status = e.status
                errs.append(e.cause)
            try:
                await self._update_status(sts, status)
            except Exception as e:  # noqa: BLE001 - aggregated below
                errs.append(e)
        except Exception as e:  # noqa: BLE001 - aggregated below
            errs.append(e)
        try:
            await self._truncate_history(sts, pods, revisions, current, update)
        except Exception as e:  # noqa: BLE001 - aggregated below
            errs.append(e)
        if errs:
            raise errs[0] if len(errs) == 1 else _Aggregate(errs)
        return status

    # -- revisions ---------------------------------------------------------------------
    async def _get_revisions(self, sts: JSON, revisions: list[JSON]) -> tuple[JSON, JSON, int]:
        """getStatefulSetRevisions: ``(current, update, collisionCount)``."""
        collision = int((sts.get("status") or {}).get("collisionCount") or 0)
        candidate = su.new_revision(sts, su.next_revision(revisions), collision)
        equal = [r for r in revisions if su.equal_revision(r, candidate)]
        if equal and su.equal_revision(revisions[-1], equal[-1]):
            update = revisions[-1]
        elif equal:
            update = await self._renumber_revision(equal[-1], int(candidate["revision"]))
        else:
            update, collision = await self._create_revision(sts, candidate, collision)
        current = next((r for r in revisions
                        if meta(r).get("name") == (sts.get("status") or {}).get("currentRevision")), None)
        return current or update, update, collision

    async def _create_revision(self, sts: JSON, rev: JSON, collision: int) -> tuple[JSON, int]:
        """CreateControllerRevision: a name clash with other data bumps the collision count
        and retries with the new hash."""
        while True:
            body = copy.deepcopy(rev)
            body["metadata"]["name"] = su.revision_name(meta(sts).get("name") or "",
                                                        su.hash_revision(rev["data"], collision))
            try:
                created: JSON = await self.client.create(CONTROLLERREVISIONS, body, meta(sts).get("namespace"))
                return created, collision
            except ApiError as e:
                if e.code != 409 or e.reason != "AlreadyExists":
                    raise
            exists = await self.client.get(CONTROLLERREVISIONS, body["metadata"]["name"], meta(sts).get("namespace"))
            if exists.get("data") == body["data"]:
                return exists, collision
            collision += 1

    async def _renumber_revision(self, rev: JSON, number: int) -> JSON:
        """UpdateControllerRevision: the equal older revision becomes the newest (a rollback)."""
        if int(rev.get("revision") or 0) == number:
            return rev
        cur = copy.deepcopy(rev)
        for _ in range(UPDATE_RETRIES):
            cur["revision"] = number
            try:
                out: JSON = await self.client.update(CONTROLLERREVISIONS, cur)
                return out
            except ApiError as e:
                if e.code != 409:
                    raise
            cur = await self.client.get(CONTROLLERREVISIONS, meta(rev)["name"], meta(rev).get("namespace"))
        raise RuntimeError(f"could not renumber ControllerRevision {meta(rev).get('name')}")

    async def _truncate_history(self, sts: JSON, pods: list[JSON], revisions: list[JSON],
                                current: JSON | None, update: JSON | None) -> None:
        """truncateHistory: delete the oldest revisions no pod, current nor update uses, beyond
        ``revisionHistoryLimit``."""
        live = {meta(r).get("name") for r in (current, update) if r is not None}
        live |= {su.pod_revision(p) for p in pods}
        history = [r for r in revisions if meta(r).get("name") not in live]
        raw_limit = su.spec(sts).get("revisionHistoryLimit")
        limit = 10 if raw_limit is None else int(raw_limit)
        for r in history[:max(len(history) - limit, 0)]:
            try:
                await self.client.delete(CONTROLLERREVISIONS, meta(r)["name"], meta(r).get("namespace"))
            except ApiError as e:
                if e.code != 404:
                    raise

    # -- pods ----------------------------------------------------------------------------
    async def _update_pods(self, sts: JSON, current: JSON, update: JSON, collision: int,
                           pods: list[JSON]) -> JSON:
        """updateStatefulSet: returns the status; raises :class:`_SyncError` (with the status
        so far) when a step failed."""
        current_set = su.apply_revision(sts, current)
        update_set = su.apply_revision(sts, update)
        cur_name, upd_name = meta(current)["name"], meta(update)["name"]
        status: JSON = {"observedGeneration": meta(sts).get("generation", 0), "currentRevision": cur_name,
                        "updateRevision": upd_name, "collisionCount": collision}
        mrs = int(su.spec(sts).get("minReadySeconds") or 0)
        now = self.ctx.clock()

        def refresh(*lists: list[JSON]) -> None:
            counts = dict.fromkeys(("replicas", "readyReplicas", "availableReplicas", "currentReplicas",
                                    "updatedReplicas"), 0)
            for lst in lists:
                for p in lst:
                    if su.is_created(p):
                        counts["replicas"] += 1
                    if su.is_running_and_ready(p):
                        counts["readyReplicas"] += 1
                        if su.is_running_and_available(p, mrs, now):
                            counts["availableReplicas"] += 1
                    if su.is_created(p) and not su.is_terminating(p):
                        rev = su.pod_revision(p)
                        counts["currentReplicas"] += rev == cur_name
                        counts["updatedReplicas"] += rev == upd_name
            status.update(counts)

        refresh(pods)
        start, end = su.start_ordinal(sts), su.end_ordinal(sts)
        replicas: list[JSON | None] = [None] * max(su.replicas(sts), 0)
        condemned: list[JSON] = []
        for p in pods:
            o = su.ordinal(p)
            if start <= o <= end:
                replicas[o - start] = p
            elif o >= 0:
                condemned.append(p)
        for o in range(start, end + 1):
            if replicas[o - start] is None:
                replicas[o - start] = su.new_versioned_pod(current_set, update_set, cur_name, upd_name, o)
        live: list[JSON] = [p for p in replicas if p is not None]
        condemned.sort(key=su.ordinal, reverse=True)
        first_unhealthy: JSON | None = next((p for p in live if not su.is_healthy(p)), None)
        if first_unhealthy is None:
            first_unhealthy = next((p for p in reversed(condemned) if not su.is_healthy(p)), None)

        if meta(sts).get("deletionTimestamp"):
            return status
        monotonic = su.spec(sts).get("podManagementPolicy") != su.PARALLEL

        async def step(fn: StepFn, count: int) -> bool:
            try:
                stop = await _run_for_all(count, fn, monotonic)
            except Exception as e:
                refresh(live, condemned)
                raise _SyncError(status, e) from e
            if stop:
                refresh(live, condemned)
            return stop

        async def replica(i: int) -> bool:
            return await self._process_replica(sts, update_set, monotonic, live, i)

        if await step(replica, len(live)):
            return status

        async def fix_claim(i: int) -> bool:
            if not await self._claims_match_retention(update_set, condemned[i]):
                await self._update_claims_for_retention(update_set, condemned[i])
            return False

        if await step(fix_claim, len(condemned)):
            return status

        async def condemn(i: int) -> bool:
            return await self._process_condemned(sts, first_unhealthy, monotonic, condemned, i)

        if await step(condemn, len(condemned)):
            return status
        refresh(live, condemned)
        if su.strategy_type(sts) == su.ON_DELETE:
            return status
        try:
            if "maxUnavailable" in ((su.spec(sts).get("updateStrategy") or {}).get("rollingUpdate") or {}):
                await self._rolling_update_max_unavailable(sts, live, upd_name, status)
            else:
                await self._rolling_update(sts, live, upd_name, status)
        except Exception as e:
            raise _SyncError(status, e) from e
        return status

    async def _process_replica(self, sts: JSON, update_set: JSON, monotonic: bool,
                               replicas: list[JSON], i: int) -> bool:
        """processReplica: True when the sync must stop at this replica."""
        pod = replicas[i]
        if su.phase(pod) in ("Failed", "Succeeded"):
            if not su.is_terminating(pod):
                await self._delete_pod(sts, pod)
            return True           # recreated by the sync after the pod is gone
        if not su.is_created(pod):
            if await self._claim_is_stale(sts, pod):
                return True
            await self._create_pod(sts, pod)
            if monotonic:
                return True
        if su.phase(pod) == "Pending":
            await self._create_missing_claims(sts, pod)
        if su.is_terminating(pod) and monotonic:
            return True
        if not su.is_running_and_ready(pod) and monotonic:
            return True
        mrs = int(su.spec(sts).get("minReadySeconds") or 0)
        if not su.is_running_and_available(pod, mrs, self.ctx.clock()) and monotonic:
            return True
        try:
            retention_ok = await self._claims_match_retention(update_set, pod)
        except Exception:  # noqa: BLE001 - a pod not yet updated counts as matching
            retention_ok = True
        if su.identity_matches(sts, pod) and su.storage_matches(sts, pod) and retention_ok:
            return False
        await self._update_pod(update_set, copy.deepcopy(pod))
        return False

    async def _process_condemned(self, sts: JSON, first_unhealthy: JSON | None, monotonic: bool,
                                 condemned: list[JSON], i: int) -> bool:
        """processCondemned: under OrderedReady wait for terminating pods and delete only the
        highest ordinal when every other pod is healthy."""
        pod = condemned[i]
        if su.is_terminating(pod):
            return monotonic
        mrs = int(su.spec(sts).get("minReadySeconds") or 0)
        if monotonic and pod is not first_unhealthy and (
                not su.is_running_and_ready(pod)
                or not su.is_running_and_available(pod, mrs, self.ctx.clock())):
            return True
        await self._delete_pod(sts, pod)
        return True

    async def _rolling_update(self, sts: JSON, replicas: list[JSON], upd_name: str, status: JSON) -> None:
        """Delete the highest-ordinal pod at or above the partition not at the update
        revision; wait at an unhealthy one."""
        update_min = su.partition(sts) or 0
        for target in range(len(replicas) - 1, update_min - 1, -1):
            pod = replicas[target]
            if su.pod_revision(pod) != upd_name and not su.is_terminating(pod):
                await self._delete_pod(sts, pod, not_found_ok=True)
                status["currentReplicas"] = status.get("currentReplicas", 0) - 1
                return
            if not su.is_healthy(pod):
                return

    async def _rolling_update_max_unavailable(self, sts: JSON, replicas: list[JSON], upd_name: str,
                                              status: JSON) -> None:
        """updateStatefulSetAfterInvariantEstablished: delete up to maxUnavailable minus the
        unhealthy count of outdated pods, from the highest ordinal down to the partition."""
        update_min = su.partition(sts) or 0
        limit = su.max_unavailable(sts)
        unavailable = sum(1 for p in replicas if not su.is_healthy(p))
        if unavailable >= limit:
            return
        deleted = 0
        for target in range(len(replicas) - 1, update_min - 1, -1):
            if deleted >= limit - unavailable:
                break
            pod = replicas[target]
            if su.pod_revision(pod) != upd_name and not su.is_terminating(pod):
                await self._delete_pod(sts, pod, not_found_ok=True)
                deleted += 1
                status["currentReplicas"] = status.get("currentReplicas", 0) - 1

    # -- pod control (stateful_pod_control.go) -------------------------------------------
    def _event(self, sts: JSON, verb: str, pod: JSON, err: Exception | None) -> None:
        name, set_name = meta(pod).get("name"), meta(sts).get("name")
        if err is None:
            self.recorder.event(sts, "Normal", f"Successful{verb.title()}",
                                f"{verb} Pod {name} in StatefulSet {set_name} successful")
        else:
            self.recorder.event(sts, "Warning", f"Failed{verb.title()}",
                                f"{verb} Pod {name} in StatefulSet {set_name} failed error: {_err_text(err)}")

    def _claim_event(self, sts: JSON, pod: JSON, claim: JSON, err: Exception | None) -> None:
        c, p, s = meta(claim).get("name"), meta(pod).get("name"), meta(sts).get("name")
        if err is None:
            self.recorder.event(sts, "Normal", "SuccessfulCreate", f"create Claim {c} Pod {p} in StatefulSet {s} success")
        else:
            self.recorder.event(sts, "Warning", "FailedCreate",
                                f"create Claim {c} for Pod {p} in StatefulSet {s} failed error: {_err_text(err)}")

    def _cached_claim(self, claim: JSON) -> JSON | None:
        c: JSON | None = self.claims.store.get(f"{meta(claim).get('namespace')}/{meta(claim).get('name')}")
        return c

    async def _create_claims(self, sts: JSON, pod: JSON) -> None:
        """createPersistentVolumeClaims: create each claim the cache lacks (an event per
        creation tried, none for AlreadyExists); a claim being deleted is an error."""
        errs: list[Exception] = []
        for _t, claim in su.claims_for(sts, pod):
            cached = self._cached_claim(claim)
            if cached is None:
                try:
                    await self.client.create(PERSISTENTVOLUMECLAIMS, claim, meta(claim).get("namespace"))
                except ApiError as e:
                    errs.append(RuntimeError(f"failed to create PVC {meta(claim)['name']}: {e.message}"))
                    if not (e.code == 409 and e.reason == "AlreadyExists"):
                        self._claim_event(sts, pod, claim, e)
                    continue
                self._claim_event(sts, pod, claim, None)
            elif meta(cached).get("deletionTimestamp"):
                errs.append(RuntimeError(f"pvc {meta(claim)['name']} is being deleted"))
        if errs:
            raise errs[0] if len(errs) == 1 else _Aggregate(errs)

    async def _create_missing_claims(self, sts: JSON, pod: JSON) -> None:
        """createMissingPersistentVolumeClaims (a Pending pod): the claims, then their refs."""
        await self._create_claims(sts, pod)
        try:
            await self._update_claims_for_retention(sts, pod)
        except Exception as e:
            self._event(sts, "update", pod, e)
            raise

    async def _create_pod(self, sts: JSON, pod: JSON) -> None:
        """CreateStatefulPod: the claims first, then the pod, then the claims' retention refs."""
        try:
            await self._create_claims(sts, pod)
        except Exception as e:
            self._event(sts, "create", pod, e)
            raise
        err: Exception | None = None
        try:
            await self.client.create(PODS, pod, meta(sts).get("namespace"))
        except ApiError as e:
            if e.code == 409 and e.reason == "AlreadyExists":
                raise
            err = e
        try:
            await self._update_claims_for_retention(sts, pod)
        except Exception as e:
            self._event(sts, "update", pod, e)
            raise
        self._event(sts, "create", pod, err)
        if err is not None:
            raise err

    async def _delete_pod(self, sts: JSON, pod: JSON, not_found_ok: bool = False) -> None:
        """DeleteStatefulPod: delete and record the event (a 404 is an error unless ``not_found_ok``)."""
        try:
            await self.client.delete(PODS, meta(pod)["name"], meta(pod).get("namespace"))
        except ApiError as e:
            self._event(sts, "delete", pod, e)
            if not (not_found_ok and e.code == 404):
                raise
            return
        self._event(sts, "delete", pod, None)

    async def _update_pod(self, sts: JSON, pod: JSON) -> None:
        """UpdateStatefulPod: restore identity and storage (creating missing claims) and the
        claims' retention refs; PUT the pod, refetching on a conflict."""
        attempted = False
        err: Exception | None = None
        for _ in range(UPDATE_RETRIES):
            consistent = True
            if not su.identity_matches(sts, pod):
                su.update_identity(sts, pod)
                consistent = False
            try:
                if not su.storage_matches(sts, pod):
                    su.update_storage(sts, pod)
                    consistent = False
                    await self._create_claims(sts, pod)
                if not await self._claims_match_retention(sts, pod):
                    await self._update_claims_for_retention(sts, pod)
                    consistent = False
            except Exception as e:
                self._event(sts, "update", pod, e)
                raise
            if consistent:
                return
            attempted = True
            try:
                await self.client.update(PODS, pod)
                err = None
                break
            except ApiError as e:
                err = e
                if e.code != 409:
                    break
                try:
                    pod = copy.deepcopy(await self.client.get(PODS, meta(pod)["name"], meta(sts).get("namespace")))
                except ApiError:
                    pass
        if attempted:
            self._event(sts, "update", pod, err)
        if err is not None:
            raise err

    async def _claim_is_stale(self, sts: JSON, pod: JSON) -> bool:
        """PodClaimIsStale: with whenScaled Delete, a cached claim still owned by an earlier
        pod of this name blocks the pod's creation (the garbage collector removes it)."""
        if su.retention(sts)[0] == su.RETAIN:
            return False
        for _t, claim in su.claims_for(sts, pod):
            cached = self._cached_claim(claim)
            if cached is not None and su.has_stale_owner_ref(cached, pod, "", "Pod"):
                return True
        return False

    async def _claims_match_retention(self, sts: JSON, pod: JSON) -> bool:
        """ClaimsMatchRetentionPolicy: every cached claim's refs follow the policy (a claim
        not cached yet is left for a later sync)."""
        for _t, claim in su.claims_for(sts, pod):
            cached = self._cached_claim(claim)
            if cached is not None and not su.claim_owner_up_to_date(cached, sts, pod):
                return False
        return True

    async def _update_claims_for_retention(self, sts: JSON, pod: JSON) -> None:
        """UpdatePodClaimForRetentionPolicy: PUT each cached claim whose refs are out of date."""
        errs: list[Exception] = []
        for _t, claim in su.claims_for(sts, pod):
            cached = self._cached_claim(claim)
            if cached is None or su.claim_owner_up_to_date(cached, sts, pod):
                continue
            new = copy.deepcopy(cached)
            su.update_claim_owner_refs(new, sts, pod)
            try:
                await self.client.update(PERSISTENTVOLUMECLAIMS, new)
            except ApiError as e:
                errs.append(RuntimeError(f"could not update claim {meta(claim)['name']} for delete policy "
                                         f"ownerRefs: {e.message}"))
        if errs:
            raise errs[0] if len(errs) == 1 else _Aggregate(errs)

    # -- status (stateful_set_status_updater.go) ------------------------------------------
    async def _update_status(self, sts: JSON, status: JSON | None) -> None:
        """updateStatefulSetStatus: complete a finished rolling update, then PUT the status
        when it is inconsistent with the set's, re-reading the set on a conflict."""
        if status is None:
            return
        su.complete_rolling_update(sts, status)
        if not su.inconsistent_status(sts, status):
            return
        obj = copy.deepcopy(sts)
        for _ in range(UPDATE_RETRIES):
            obj["status"] = su.status_json(status)
            try:
                await self.client.update_status(STATEFULSETS, obj)
                return
            except ApiError as e:
                if e.code == 404:
                    return
                if e.code != 409:
                    raise
            obj = await self.client.get(STATEFULSETS, meta(sts)["name"], meta(sts).get("namespace"))
        raise RuntimeError(f"could not update the status of StatefulSet {meta(sts).get('name')}")


class _SyncError(Exception):
    """A failed step of updateStatefulSet, with the status computed so far."""

    def __init__(self, status: JSON, cause: Exception) -> None:
        super().__init__(str(cause))
        self.status = status
        self.cause = cause
