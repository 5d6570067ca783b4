"""The replica controller: keeps ``spec.replicas`` pods running for each
ReplicaSet (apps/v1) or ReplicationController (core/v1) — one generic controller
parametrised by :class:`ReplicaKind` (Kubernetes runs the RC controller as the RS
controller over a conversion shim: ``pkg/controller/replication/``).

Per sync (``pkg/controller/replicaset/replica_set.go`` syncReplicaSet / manageReplicas):
claim the active pods in the namespace (adopt matching orphans, release
non-matching owned pods); when expectations are satisfied create missing pods in
slow-start batches or delete the surplus by deletion rank; then write status
(``replica_set_utils.go`` calculateStatus) through the status subresource.
Events: ``SuccessfulCreate`` "Created pod: NAME", ``SuccessfulDelete``
"Deleted pod: NAME", ``FailedCreate`` "Error creating: ...", ``FailedDelete``.
"""

from __future__ import annotations

import asyncio
import copy
import logging
import time
from dataclasses import dataclass
from typing import Callable

from controlplane import apitime, otel
from controlplane.api.resources import PODS, REPLICASETS, REPLICATIONCONTROLLERS, Resource
from controlplane.client.informer import key_of
from controlplane.client.rest import ApiError
from controlplane.log import event
from controlplane.selectors import LabelSelector, selector_from_dict

from .controller import Controller, ControllerContext
from .controller_utils import (
    BURST_REPLICAS,
    SLOW_START_INITIAL_BATCH_SIZE,
    controlled_pods,
    controller_ref,
    index_pods_by_controller,
    is_pod_active,
    is_pod_ready,
    meta,
    new_controller_ref,
    pod_from_template,
    pods_by_owner,
    pods_to_delete,
    ready_condition,
    slow_start_batch,
)
from .expectations import Expectations
from .ref_manager import RefManager

log = logging.getLogger("controller-manager")


@dataclass(frozen=True)
class ReplicaKind:
    """What differs between ReplicaSet and ReplicationController."""

    resource: Resource
    component: str                     # event source / controller name
    selector_of: Callable[[dict], LabelSelector]

    @property
    def kind(self) -> str:
        return self.resource.kind


def _rs_selector(obj: dict) -> LabelSelector:
    return selector_from_dict((obj.get("spec") or {}).get("selector"))


def _rc_selector(obj: dict) -> LabelSelector:
    sel = (obj.get("spec") or {}).get("selector")
    return selector_from_dict({"matchLabels": sel} if sel else None)


REPLICASET_KIND = ReplicaKind(REPLICASETS, "replicaset-controller", _rs_selector)
REPLICATIONCONTROLLER_KIND = ReplicaKind(REPLICATIONCONTROLLERS, "replication-controller",
                                         _rc_selector)


class PodView:
    """What a replica sync reads of one cached pod, computed once per version of it.

    An informer replaces a cached object on every event and never changes it in
    place, so a view stays valid while ``view.pod is store[key]``. The selector and
    template-label verdicts are kept for the last selector / label tuple asked
    about (the controller reuses those objects while the owner's spec keeps them),
    so a sync of an owner with N pods does not walk N pods' labels and conditions
    again each time: pods are scattered in memory and that walk dominated the
    sync (replica_set.go syncReplicaSet lists and claims every pod per sync too).
    """

    __slots__ = ("pod", "namespace", "active", "has_ref", "ref_uid", "labels", "ready", "ready_since",
                 "_ready_time", "_sel", "_sel_match", "_tpl", "_tpl_match")

    def __init__(self, pod: dict) -> None:
        md = meta(pod)
        self.pod = pod
        self.namespace = md.get("namespace")
        self.active = is_pod_active(pod)
        ref = controller_ref(pod)
        self.has_ref = ref is not None
        self.ref_uid = ref.get("uid") if ref is not None else None
        self.labels = md.get("labels") or {}
        c = ready_condition(pod)
        self.ready = bool(c and c.get("status") == "True")                    # IsPodReady
        self.ready_since = c.get("lastTransitionTime") if self.ready and c else None
        self._ready_time: float | None | bool = False                        # False: not parsed yet
        self._sel: LabelSelector | None = None
        self._sel_match = False
        self._tpl: tuple | None = None
        self._tpl_match = False

    def matches(self, selector: LabelSelector) -> bool:
        """``selector.matches(labels)``, remembered for this selector object."""
        if self._sel is not selector:
            self._sel, self._sel_match = selector, selector.matches(self.labels)
        return self._sel_match

    def fully_labeled(self, tpl_items: tuple) -> bool:
        """The pod carries every ``(key, value)`` of ``tpl_items`` (remembered per tuple object)."""
        if self._tpl is not tpl_items:
            lb = self.labels
            self._tpl, self._tpl_match = tpl_items, all(lb.get(k) == v for k, v in tpl_items)
        return self._tpl_match

    def available(self, min_ready_seconds: int, now: float) -> bool:
        """IsPodAvailable: ready, and for at least ``min_ready_seconds`` (pod/util.go)."""
        if not self.ready:
            return False
        if not min_ready_seconds:
            return True
        if self._ready_time is False:
            self._ready_time = apitime.time_or_none(self.ready_since)
        t = self._ready_time
        return t is not None and t + min_ready_seconds < now


def template_label_items(obj: dict) -> tuple:
    """The owner's pod template labels as a tuple of ``(key, value)``."""
    spec = obj.get("spec") or {}
    return tuple((((spec.get("template") or {}).get("metadata") or {}).get("labels") or {}).items())


def status_of(obj: dict, views: list[PodView], tpl_items: tuple, now: float | None = None) -> dict:
    """:func:`calculate_status` over pod views; ``tpl_items`` = :func:`template_label_items`."""
    spec = obj.get("spec") or {}
    mrs = int(spec.get("minReadySeconds") or 0)
    if mrs and now is None:
        now = time.time()
    status = copy.deepcopy(obj.get("status") or {})
    fully = ready = available = 0
    for v in views:
        if v.fully_labeled(tpl_items):
            fully += 1
        if v.ready:
            ready += 1
            if v.available(mrs, now or 0.0):
                available += 1
    status.update({
        "replicas": len(views),
        "fullyLabeledReplicas": fully,
        "readyReplicas": ready,
        "availableReplicas": available,
        "observedGeneration": meta(obj).get("generation", 0),
    })
    return status


def calculate_status(obj: dict, pods: list[dict], now: float | None = None) -> dict:
    """The new ``status`` of a ReplicaSet/RC from its claimed active pods
    (replica_set_utils.go calculateStatus): replicas, fullyLabeledReplicas (pods whose
    labels include all template labels), readyReplicas, availableReplicas (ready for
    minReadySeconds), observedGeneration; existing conditions are kept."""
    return status_of(obj, [PodView(p) for p in pods], template_label_items(obj), now)


def namespace_terminating(e: ApiError) -> bool:
    """A create refused because the namespace is being deleted (Status cause
    ``NamespaceTerminating``; the NamespaceLifecycle admission message)."""
    causes = ((e.status or {}).get("details") or {}).get("causes") or []
    return any(c.get("reason") == "NamespaceTerminating" for c in causes) or \
        (e.code == 403 and "because it is being terminated" in e.message)


class ReplicaController(Controller):
    """The ReplicaSet or ReplicationController controller (see module docstring)."""

    workers = 5

    def __init__(self, ctx: ControllerContext, kind: ReplicaKind = REPLICASET_KIND) -> None:
        self.name = kind.component.removesuffix("-controller")  # before the queue takes it as its name
        super().__init__(ctx)
        self.kind = kind
        self.expectations = Expectations()
        self.recorder = ctx.recorder(kind.component)
        self.owners = ctx.informers.informer(kind.resource)
        self.pods = ctx.informers.informer(PODS)
        index_pods_by_controller(self.pods)
        #: pod key -> view of the cached pod (see :class:`PodView`), made by a sync when
        #: the cached object changed, dropped with the pod
        self._views: dict[str, PodView] = {}
        #: owner key -> (spec.selector, template labels, LabelSelector, template label items)
        self._shapes: dict[str, tuple] = {}
        self.owners.add_handlers(self._owner_added, self._owner_updated, self._owner_deleted)
        self.pods.add_handlers(self._pod_added, self._pod_updated, self._pod_removed)

    # -- owner events ------------------------------------------------------------
    def _trace_received(self, typ: str, obj: dict) -> None:
        self.ctx.tracer.emit(5, f"{typ} {self.kind.kind} received on watch", obj,
                             detail=f"{self.kind.component}: replicas "
                                    f"{(obj.get('spec') or {}).get('replicas')}",
                             kind=self.kind.kind)

    def _owner_added(self, obj: dict) -> None:
        self._trace_received("ADDED", obj)
        self.enqueue(key_of(obj))

    def _owner_updated(self, old: dict, new: dict) -> None:
        if meta(old).get("generation") != meta(new).get("generation"):
            self._trace_received("MODIFIED", new)
        self.enqueue(key_of(new))

    def _owner_deleted(self, obj: dict) -> None:
        key = key_of(obj)
        self.expectations.delete(key)
        self._shapes.pop(key, None)
        self.enqueue(key)

    # -- pod events --------------------------------------------------------------
    def _owner_key_of(self, pod: dict) -> str | None:
        """Key of the pod's controller if it is one of ours (uid checked against the cache)."""
        ref = controller_ref(pod)
        if ref is None or ref.get("kind") != self.kind.kind:
            return None
        key = f"{meta(pod).get('namespace')}/{ref.get('name')}"
        owner = self.owners.store.get(key)
        if owner is None or meta(owner).get("uid") != ref.get("uid"):
            return None
        return key

    def _matching_owners(self, pod: dict) -> list[str]:
        ns = meta(pod).get("namespace")
        labels = meta(pod).get("labels") or {}
        out = []
        for o in list(self.owners.store.values()):
            if meta(o).get("namespace") != ns:
                continue
            try:
                if self.kind.selector_of(o).matches(labels):
                    out.append(key_of(o))
            except ValueError:
                continue
        return out

    def _pod_added(self, pod: dict) -> None:
        if meta(pod).get("deletionTimestamp"):
            self._pod_deleted(pod)
            return
        ref = controller_ref(pod)
        if ref is not None:
            key = self._owner_key_of(pod)
            if key:
                self.expectations.creation_observed(key)
                self.enqueue(key)
            return
        for key in self._matching_owners(pod):
            self.enqueue(key)

    def _pod_updated(self, old: dict, new: dict) -> None:
        if meta(old).get("resourceVersion") == meta(new).get("resourceVersion") and old is not new:
            return
        if meta(new).get("deletionTimestamp") and not meta(old).get("deletionTimestamp"):
            self._pod_deleted(new)
            return
        old_ref, new_ref = controller_ref(old), controller_ref(new)
        if old_ref and (not new_ref or old_ref.get("uid") != new_ref.get("uid")):
            k = self._owner_key_of(old)
            if k:
                self.enqueue(k)
        if new_ref:
            k = self._owner_key_of(new)
            if k:
                self.enqueue(k)
                owner = self.owners.store.get(k) or {}
                mrs = int((owner.get("spec") or {}).get("minReadySeconds") or 0)
                if mrs and not is_pod_ready(old) and is_pod_ready(new):
                    self.queue.add_after(k, mrs + 1)
            return
        if (meta(old).get("labels") != meta(new).get("labels")) or old_ref:
            for k in self._matching_owners(new):
                self.enqueue(k)

    def _pod_removed(self, pod: dict) -> None:
        self._views.pop(key_of(pod), None)
        self._pod_deleted(pod)

    def _pod_deleted(self, pod: dict) -> None:
        k = self._owner_key_of(pod)
        if k:
            self.expectations.deletion_observed(k, key_of(pod))
            self.enqueue(k)

    # -- sync --------------------------------------------------------------------
    async def sync(self, key: str) -> None:
        """Reconcile one ReplicaSet/RC (``namespace/name``)."""
        obj = self.owners.store.get(key)
        if obj is None:
            self.expectations.delete(key)
            return
        try:
            selector, tpl_items = self._shape(key, obj)
        except ValueError as e:
            event(log, "replicas.invalid_selector", logging.WARNING, key=key, error=str(e))
            return
        need_sync = self.expectations.satisfied(key) and not meta(obj).get("deletionTimestamp")
        ns = meta(obj).get("namespace")
        views = self._views
        cands: list[PodView] = []
        for k, p in pods_by_owner(self.pods, meta(obj).get("uid"), ns):   # its pods and the orphans
            v = views.get(k)
            if v is None or v.pod is not p:
                v = views[k] = PodView(p)
            if v.active and (ns is None or v.namespace == ns):
                cands.append(v)
        claimed = await self._claim(obj, selector, cands)
        pods = [v.pod for v in claimed]
        err: Exception | None = None
        if need_sync:
            err = await self.manage_replicas(key, obj, pods)
        status = status_of(obj, claimed, tpl_items)
        await self._update_status(obj, status)
        mrs = int((obj.get("spec") or {}).get("minReadySeconds") or 0)
        if mrs and status["readyReplicas"] == status["replicas"] and \
                status["availableReplicas"] != status["replicas"]:
            self.queue.add_after(key, mrs)
        if err is not None:
            raise err

    def _shape(self, key: str, obj: dict) -> tuple[LabelSelector, tuple]:
        """The owner's LabelSelector and template label items; the same objects while
        its spec.selector and template labels keep their values (so the pod views'
        verdicts for them stay valid). ValueError for an invalid selector."""
        spec = obj.get("spec") or {}
        raw = spec.get("selector")
        tpl = ((spec.get("template") or {}).get("metadata") or {}).get("labels") or {}
        cached = self._shapes.get(key)
        if cached is not None and cached[0] == raw and cached[1] == tpl:
            return cached[2], cached[3]
        selector = self.kind.selector_of(obj)
        items = template_label_items(obj)
        self._shapes[key] = (raw, tpl, selector, items)
        return selector, items

    async def _claim(self, obj: dict, selector: LabelSelector, cands: list[PodView]) -> list[PodView]:
        """:meth:`RefManager.claim` over the candidates, in their order: pods this owner
        controls and still selects are kept as they are; the pods it must release
        (owned, no longer selected) or may adopt (selected orphans) go through the
        RefManager one by one, as claim would take them."""
        md = meta(obj)
        uid = md.get("uid")
        deleting = bool(md.get("deletionTimestamp"))
        rm = RefManager(self.client, obj, self.kind.resource.api_version, self.kind.kind,
                        selector, PODS)
        claimed: list[PodView] = []
        for v in cands:
            if v.has_ref:
                if v.ref_uid != uid:
                    continue                      # someone else's
                if v.matches(selector):
                    claimed.append(v)
                    continue
            elif deleting or not v.matches(selector):
                continue                          # an orphan claim would leave alone
            for p in await rm.claim([v.pod]):
                claimed.append(v if p is v.pod else PodView(p))
        return claimed

    async def manage_replicas(self, key: str, obj: dict, pods: list[dict]) -> Exception | None:
        """Create or delete pods so that ``len(pods) == spec.replicas``; returns the
        first error (the caller re-queues) or None."""
        want = int((obj.get("spec") or {}).get("replicas", 1) or 0)
        diff = len(pods) - want
        md = meta(obj)
        if diff < 0:
            diff = min(-diff, BURST_REPLICAS)
            self.expectations.expect_creations(key, diff)
            ref = new_controller_ref(obj, self.kind.resource.api_version, self.kind.kind)
            template = (obj.get("spec") or {}).get("template") or {}
            event(log, "replicas.create", controller=self.name, key=key, need=want, creating=diff)

            async def create_one() -> None:
                pod = pod_from_template(template, obj, ref)
                try:
                    # traced (controlplane/otel.py): the pod joins its owner's trace
                    otel.copy_traceparent(obj, pod)
                    with otel.span("Create Pod", parent=otel.traceparent_of(obj),
                                   attributes={"owner": f"{md.get('namespace')}/{md.get('name')}"}):
                        created = await self.client.create(PODS, pod, md.get("namespace"))
                except ApiError as e:
                    if namespace_terminating(e):
                        self.expectations.creation_observed(key)
                        return   # nothing to do: the namespace controller is emptying it
                    self.recorder.event(self._ev_obj(obj), "Warning", "FailedCreate",
                                        f"Error creating: {e.message}")
                    raise
                name = meta(created).get("name")
                self.recorder.event(self._ev_obj(obj), "Normal", "SuccessfulCreate",
                                    f"Created pod: {name}")
                self.ctx.tracer.emit(6, f"{self.kind.component} created pod {name}", created,
                                     detail=f"{self.kind.kind} {md.get('name')} wants {want}",
                                     kind="Pod")

            successes, err = await slow_start_batch(diff, SLOW_START_INITIAL_BATCH_SIZE, create_one)
            for _ in range(diff - successes):
                self.expectations.creation_observed(key)
            return err
        if diff > 0:
            diff = min(diff, BURST_REPLICAS)
            related = self._related_pods(obj, pods)
            victims = pods_to_delete(pods, related, diff)
            self.expectations.expect_deletions(key, [key_of(p) for p in victims])
            event(log, "replicas.delete", controller=self.name, key=key, need=want, deleting=diff)
            results = await asyncio.gather(*(self._delete_pod(key, obj, p) for p in victims),
                                           return_exceptions=True)
            errs = [r for r in results if isinstance(r, Exception)]
            return errs[0] if errs else None
        return None

    def _related_pods(self, obj: dict, pods: list[dict]) -> list[dict]:
        """Active pods of this owner and of its siblings (owners with the same
        controller, e.g. a Deployment's ReplicaSets) in its namespace — getIndirectlyRelatedPods,
        from the pods' controller-uid index."""
        parent = controller_ref(obj)
        if parent is None:
            return pods
        ns = meta(obj).get("namespace")
        out: list[dict] = []
        for o in self.owners.store.values():
            if (controller_ref(o) or {}).get("uid") == parent.get("uid"):
                out.extend(p for _, p in controlled_pods(self.pods, meta(o).get("uid"))
                           if is_pod_active(p) and meta(p).get("namespace") == ns)
        return out

    async def _delete_pod(self, key: str, obj: dict, pod: dict) -> None:
        pmd = meta(pod)
        try:
            await self.client.delete(PODS, pmd["name"], pmd.get("namespace"),
                                     preconditions={"uid": pmd.get("uid")} if pmd.get("uid") else None)
        except Exception as e:
            # any failure, a lost connection included, lowers the expectations: the informer
            # will not see this deletion (replica_set.go manageReplicas: DeletionObserved on
            # every error), so the next sync recounts instead of waiting for the 5 min timeout
            self.expectations.deletion_observed(key, key_of(pod))
            if isinstance(e, ApiError) and e.code == 404:
                return
            self.recorder.event(self._ev_obj(obj), "Warning", "FailedDelete",
                                f"Error deleting: {e.message if isinstance(e, ApiError) else e}")
            raise
        self.recorder.event(self._ev_obj(obj), "Normal", "SuccessfulDelete",
                            f"Deleted pod: {pmd.get('name')}")

    def _ev_obj(self, obj: dict) -> dict:
        out = dict(obj)
        out.setdefault("kind", self.kind.kind)
        out.setdefault("apiVersion", self.kind.resource.api_version)
        return out

    async def _update_status(self, obj: dict, status: dict) -> None:
        """PUT the status subresource when it changed; one retry on a conflict."""
        if status == (obj.get("status") or {}):
            return
        new = copy.deepcopy(obj)
        new["status"] = status
        try:
            await self.client.update_status(self.kind.resource, new)
        except ApiError as e:
            if e.code == 404:
                return
            if e.code != 409:
                raise
            md = meta(obj)
            fresh = await self.client.get(self.kind.resource, md["name"], md.get("namespace"))
            fresh["status"] = {**status,
                               "observedGeneration": min(status["observedGeneration"],
                                                         meta(fresh).get("generation", 0))}
            await self.client.update_status(self.kind.resource, fresh)
