"""The Deployment controller: one ReplicaSet per pod template, named
``<deployment>-<pod-template-hash>``, scaled by the rollout strategy.

Per sync (``pkg/controller/deployment/deployment_controller.go`` syncDeployment):
claim the ReplicaSets matching the selector; a scaling event (replicas changed,
template unchanged) or a paused Deployment only rescales (``sync.go``; a paused one first gets Progressing ``Unknown``
``DeploymentPaused``, a resumed one ``DeploymentResumed``: checkPausedConditions);
otherwise roll out — RollingUpdate (``rolling.go``: scale the new RS up within
maxSurge, old ones down within maxUnavailable) or Recreate (``recreate.go``: all
old to 0, wait for their pods to go, then the new one up) — then delete old
ReplicaSets beyond revisionHistoryLimit and write status with the Available and
Progressing conditions (``progress.go``). Events: ``ScalingReplicaSet``
"Scaled up replica set NAME from A to B" (v1.32 wording), from
``deployment-controller``. The arithmetic lives in :mod:`.deployment_util`.
"""

from __future__ import annotations

import copy
import logging
import time
from typing import Literal, overload

from controlplane import otel
from controlplane.api.resources import DEPLOYMENTS, PODS, REPLICASETS
from controlplane.client.informer import key_of
from controlplane.client.rest import ApiError
from controlplane.log import event
from controlplane.selectors import selector_from_dict

from . import deployment_util as du
from .controller import Controller, ControllerContext
from .controller_utils import controller_ref, meta, resolve_controller_ref
from .ref_manager import RefManager

log = logging.getLogger("controller-manager")

COMPONENT = "deployment-controller"


class DeploymentController(Controller):
    """See the module docstring."""

    name = "deployment"
    workers = 5

    def __init__(self, ctx: ControllerContext) -> None:
        super().__init__(ctx)
        self.recorder = ctx.recorder(COMPONENT)
        self.deployments = ctx.informers.informer(DEPLOYMENTS)
        self.rss = ctx.informers.informer(REPLICASETS)
        self.pods = ctx.informers.informer(PODS)
        self.deployments.add_handlers(self._d_added, self._d_updated, self._d_deleted)
        self.rss.add_handlers(self._rs_changed, lambda old, new: self._rs_updated(old, new),
                              self._rs_changed)
        self.pods.add_handlers(None, None, self._pod_deleted)

    # -- events ------------------------------------------------------------------
    def _trace_received(self, typ: str, d: dict) -> None:
        self.ctx.tracer.emit(5, f"{typ} Deployment received on watch", d, kind="Deployment",
                             detail=f"{COMPONENT}: replicas {(d.get('spec') or {}).get('replicas')}, "
                                    f"generation {meta(d).get('generation')}")

    def _d_added(self, d: dict) -> None:
        self._trace_received("ADDED", d)
        self.enqueue(key_of(d))

    def _d_updated(self, old: dict, new: dict) -> None:
        if meta(old).get("generation") != meta(new).get("generation"):
            self._trace_received("MODIFIED", new)
        self.enqueue(key_of(new))

    def _d_deleted(self, d: dict) -> None:
        self.enqueue(key_of(d))

    def _owner_key(self, obj: dict, kind: str, store: dict) -> str | None:
        return resolve_controller_ref(obj, kind, store)

    def _rs_changed(self, rs: dict) -> None:
        key = self._owner_key(rs, "Deployment", self.deployments.store)
        if key:
            self.enqueue(key)
            return
        if controller_ref(rs) is None:  # an orphan: whoever selects it may adopt it
            labels = meta(rs).get("labels") or {}
            for d in list(self.deployments.store.values()):
                if meta(d).get("namespace") != meta(rs).get("namespace"):
                    continue
                try:
                    if selector_from_dict((d.get("spec") or {}).get("selector")).matches(labels):
                        self.enqueue(key_of(d))
                except ValueError:
                    continue

    def _rs_updated(self, old: dict, new: dict) -> None:
        if (controller_ref(old) or {}).get("uid") != (controller_ref(new) or {}).get("uid"):
            self._rs_changed(old)
        self._rs_changed(new)

    def _pod_deleted(self, pod: dict) -> None:
        """Recreate waits for old pods to disappear."""
        rs_key = self._owner_key(pod, "ReplicaSet", self.rss.store)
        if rs_key:
            d_key = self._owner_key(self.rss.store[rs_key], "Deployment", self.deployments.store)
            if d_key:
                d = self.deployments.store[d_key]
                if ((d.get("spec") or {}).get("strategy") or {}).get("type") == "Recreate":
                    self.enqueue(d_key)

    # -- sync --------------------------------------------------------------------
    async def sync(self, key: str) -> None:
        """Reconcile one Deployment (``namespace/name``)."""
        cached = self.deployments.store.get(key)
        if cached is None:
            return
        d = copy.deepcopy(cached)
        d.setdefault("kind", "Deployment")
        d.setdefault("apiVersion", "apps/v1")
        spec = d.get("spec") or {}
        sel = spec.get("selector")
        if sel == {} or (isinstance(sel, dict) and not sel.get("matchLabels") and not sel.get("matchExpressions")):
            self.recorder.event(d, "Warning", "SelectingAll",
                                "This deployment is selecting all pods. A non-empty selector is required.")
            if (d.get("status") or {}).get("observedGeneration", 0) < meta(d).get("generation", 0):
                await self._write_status(d, {**(d.get("status") or {}),
                                             "observedGeneration": meta(d).get("generation", 0)})
            return
        try:
            selector = selector_from_dict(sel)
        except ValueError as e:
            event(log, "deployment.invalid_selector", logging.WARNING, key=key, error=str(e))
            return
        ns = meta(d).get("namespace")
        candidates = list(self.informers.in_namespace(REPLICASETS, ns))
        rss = [copy.deepcopy(r) for r in
               await RefManager(self.client, d, "apps/v1", "Deployment", selector, REPLICASETS).claim(candidates)]
        if meta(d).get("deletionTimestamp"):
            new = du.find_new_replica_set(d, rss)
            await self._write_status(d, du.calculate_status(d, rss, new))
            return
        paused_status = du.paused_conditions(d)  # checkPausedConditions
        if paused_status is not None:
            await self._write_status(d, paused_status)
        if spec.get("paused") or self._is_scaling_event(d, rss):
            await self._sync_scale(d, rss)
            return
        if (spec.get("strategy") or {}).get("type") == "Recreate":
            await self._rollout_recreate(d, rss)
        else:
            await self._rollout_rolling(d, rss)

    def _is_scaling_event(self, d: dict, rss: list[dict]) -> bool:
        """An active RS annotated with a different desired size (isScalingEvent; also when
        the template changed and no new RS exists yet: the old ones are resized first)."""
        for rs in rss:
            if du.replicas(rs) <= 0:
                continue
            desired = (meta(rs).get("annotations") or {}).get(du.DESIRED_REPLICAS)
            if desired is not None and desired != str(du.replicas(d)):
                return True
        return False

    @overload
    async def _get_all(self, d: dict, rss: list[dict], create: Literal[True]) -> tuple[dict, list[dict]]: ...
    @overload
    async def _get_all(self, d: dict, rss: list[dict], create: Literal[False]) -> tuple[dict | None, list[dict]]: ...

    async def _get_all(self, d: dict, rss: list[dict], create: bool) -> tuple[dict | None, list[dict]]:
        """(new RS, old RSs) — syncing the new RS's annotations and the Deployment's
        revision, creating the new RS when ``create`` (getAllReplicaSetsAndSyncRevision):
        with ``create`` the new RS is never None (created, adopted after AlreadyExists, or
        ApiError raised)."""
        new = du.find_new_replica_set(d, rss)
        old = [r for r in rss if r is not new]
        new_revision = max([du.revision(r) for r in old] or [0]) + 1
        md = meta(d)
        if new is not None:
            changed = du.set_new_replica_set_annotations(d, new, new_revision, exists=True)
            mrs = (d.get("spec") or {}).get("minReadySeconds") or 0
            if ((new.get("spec") or {}).get("minReadySeconds") or 0) != mrs:
                new["spec"]["minReadySeconds"] = mrs
                changed = True
            if changed:
                updated = await self.client.update(REPLICASETS, new)
                new.clear()
                new.update(updated)
            await self._sync_revision(d, du.revision(new))
            status = d.get("status") or {}
            if du.get_condition(status, "Progressing") is None and \
                    (d.get("spec") or {}).get("progressDeadlineSeconds") is not None:
                status = copy.deepcopy(status)
                du.set_condition(status, "Progressing", "True", "FoundNewReplicaSet",
                                 f'Found new replica set "{meta(new).get("name")}"')
                await self._write_status(d, status)
            return new, old
        if not create:
            return None, old
        collision = (d.get("status") or {}).get("collisionCount")
        h = du.compute_hash((d.get("spec") or {}).get("template") or {}, collision)
        obj = du.new_replica_set(d, h, new_revision, 0)
        obj["spec"]["replicas"] = du.new_rs_new_replicas(d, old + [obj], obj)
        count = obj["spec"]["replicas"]
        try:
            # traced (controlplane/otel.py): the new ReplicaSet joins the Deployment's trace
            otel.copy_traceparent(d, obj)
            with otel.span("Create ReplicaSet", parent=otel.traceparent_of(d),
                           attributes={"deployment": f"{md.get('namespace')}/{md.get('name')}"}):
                created = await self.client.create(REPLICASETS, obj, md.get("namespace"))
        except ApiError as e:
            if e.code != 409 or e.reason != "AlreadyExists":
                self.recorder.event(d, "Warning", "FailedCreate",
                                    f"Failed to create new replica set \"{meta(obj)['name']}\": {e.message}")
                raise
            existing = await self.client.get(REPLICASETS, meta(obj)["name"], md.get("namespace"))
            if (controller_ref(existing) or {}).get("uid") == md.get("uid") and \
                    du.equal_ignore_hash(existing["spec"]["template"], d["spec"]["template"]):
                return existing, old
            status = copy.deepcopy(d.get("status") or {})
            status["collisionCount"] = int(collision or 0) + 1
            await self._write_status(d, status)
            raise ApiError(409, "AlreadyExists", f"hash collision for {meta(obj)['name']}; "
                                                 f"collisionCount now {status['collisionCount']}")
        name = meta(created).get("name")
        self.ctx.tracer.emit(6, f"{COMPONENT} created ReplicaSet {name} (replicas {count})", created,
                             kind="ReplicaSet", detail=f"Deployment {md.get('name')} revision {new_revision}")
        event(log, "deployment.rs_created", deployment=key_of(d), replicaset=name, replicas=count)
        if count > 0:
            self.recorder.event(d, "Normal", "ScalingReplicaSet",
                                f"Scaled up replica set {name} from 0 to {count}")
        await self._sync_revision(d, new_revision)
        if (d.get("spec") or {}).get("progressDeadlineSeconds") is not None:
            status = copy.deepcopy(d.get("status") or {})
            du.set_condition(status, "Progressing", "True", "NewReplicaSetCreated",
                             f'Created new replica set "{name}"')
            await self._write_status(d, status)
        return copy.deepcopy(created), old

    async def _sync_revision(self, d: dict, rev: int) -> None:
        """Set ``deployment.kubernetes.io/revision`` on the Deployment (SetDeploymentRevision)."""
        md = meta(d)
        if (md.get("annotations") or {}).get(du.REVISION) == str(rev):
            return
        out = await self.client.patch(DEPLOYMENTS, md["name"],
                                      {"metadata": {"annotations": {du.REVISION: str(rev)}}},
                                      md.get("namespace"))
        d["metadata"] = out.get("metadata", d["metadata"])

    async def _apply(self, d: dict, plan: du.Plan) -> bool:
        """Apply a scaling plan (scaleReplicaSetAndRecordEvent); True if anything changed."""
        for rs, old, new in plan:
            await self._scale_rs(d, rs, old, new)
        return bool(plan)

    async def _scale_rs(self, d: dict, rs: dict, old: int, new: int) -> None:
        n = du.replicas(d)
        surge = du.max_surge(d)
        if old == new and not du.replicas_annotations_need_update(rs, n, n + surge):
            return
        body = copy.deepcopy(rs)
        body["spec"]["replicas"] = new
        du.set_replicas_annotations(body, n, n + surge)
        updated = await self.client.update(REPLICASETS, body)
        rs.clear()
        rs.update(copy.deepcopy(updated))
        if old != new:
            op = "up" if new > old else "down"
            self.recorder.event(d, "Normal", "ScalingReplicaSet",
                                f"Scaled {op} replica set {meta(rs).get('name')} from {old} to {new}")
            event(log, "deployment.scaled", deployment=key_of(d), replicaset=meta(rs).get("name"),
                  old=old, new=new)

    async def _rollout_rolling(self, d: dict, rss: list[dict]) -> None:
        new, old = await self._get_all(d, rss, create=True)
        all_rss = old + [new]
        if await self._apply(d, du.reconcile_new_replica_set(d, all_rss, new)):
            await self._sync_rollout_status(d, all_rss, new)
            return
        if await self._apply(d, du.reconcile_old_replica_sets(d, all_rss, old, new)):
            await self._sync_rollout_status(d, all_rss, new)
            return
        if du.deployment_complete(d, du.calculate_status(d, all_rss, new)):
            await self._cleanup(d, old)
        await self._sync_rollout_status(d, all_rss, new)

    async def _rollout_recreate(self, d: dict, rss: list[dict]) -> None:
        new, old = await self._get_all(d, rss, create=False)
        all_rss = old + ([new] if new else [])
        plan: du.Plan = []
        for rs in old:
            if du.replicas(rs) > 0:
                du.plan_scale(plan, rs, 0)
        if await self._apply(d, plan):
            await self._sync_rollout_status(d, all_rss, new)
            return
        old_uids = {meta(r).get("uid") for r in old}
        running = [p for p in self.informers.in_namespace(PODS, meta(d).get("namespace"))
                   if (controller_ref(p) or {}).get("uid") in old_uids
                   and (p.get("status") or {}).get("phase") not in ("Failed", "Succeeded")]
        if running:
            await self._sync_rollout_status(d, all_rss, new)
            return
        if new is None:
            new, old = await self._get_all(d, rss, create=True)
            all_rss = old + [new]
        plan = []
        if du.replicas(new) != du.replicas(d):
            du.plan_scale(plan, new, du.replicas(d))
        await self._apply(d, plan)
        if du.deployment_complete(d, du.calculate_status(d, all_rss, new)):
            await self._cleanup(d, old)
        await self._sync_rollout_status(d, all_rss, new)

    async def _sync_scale(self, d: dict, rss: list[dict]) -> None:
        new, old = await self._get_all(d, rss, create=False)
        await self._apply(d, du.proportional_scale(d, new, old))
        if (d.get("spec") or {}).get("paused"):
            await self._cleanup(d, old)
        await self._write_status(d, du.calculate_status(d, old + ([new] if new else []), new))

    async def _cleanup(self, d: dict, old: list[dict]) -> None:
        for rs in du.cleanup_plan(d, old):
            try:
                await self.client.delete(REPLICASETS, meta(rs)["name"], meta(rs).get("namespace"))
                event(log, "deployment.rs_cleaned", deployment=key_of(d), replicaset=meta(rs)["name"])
            except ApiError as e:
                if e.code != 404:
                    raise

    async def _sync_rollout_status(self, d: dict, all_rss: list[dict], new: dict | None) -> None:
        await self._write_status(d, du.rollout_status(d, all_rss, new, time.time()))

    async def _write_status(self, d: dict, status: dict) -> None:
        if status == (d.get("status") or {}):
            return
        body = copy.deepcopy(d)
        body["status"] = status
        try:
            out = await self.client.update_status(DEPLOYMENTS, body)
        except ApiError as e:
            if e.code != 409:
                raise
            # our cached copy is stale: retry once on the current object (a newer
            # generation keeps its older observedGeneration, so it is synced again)
            md = meta(d)
            body = await self.client.get(DEPLOYMENTS, md["name"], md.get("namespace"))
            if meta(body).get("uid") != md.get("uid"):
                return
            status = {**status, "observedGeneration": min(status.get("observedGeneration", 0),
                                                          meta(body).get("generation", 0))}
            if meta(body).get("generation", 0) != md.get("generation", 0):
                status["observedGeneration"] = (body.get("status") or {}).get("observedGeneration", 0)
            body["status"] = status
            out = await self.client.update_status(DEPLOYMENTS, body)
        d["metadata"] = out.get("metadata", d["metadata"])
        d["status"] = out.get("status", status)
