"""The disruption controller (``pkg/controller/disruption/disruption.go``): keeps each
PodDisruptionBudget's status — ``expectedPods``, ``currentHealthy``, ``desiredHealthy``,
``disruptionsAllowed``, ``observedGeneration``, the ``DisruptionAllowed`` condition, and
``disruptedPods`` pruned of evictions that completed or timed out (2 min) — from the pods
its selector selects.

* ``minAvailable`` as an integer: expected = the selected pods, desired = minAvailable;
* ``minAvailable`` as a percentage, or ``maxUnavailable``: expected = the scale of the pods'
  controllers (ReplicaSet, or its Deployment; ReplicationController; StatefulSet:
  getExpectedScale), desired = ⌈minAvailable% × expected⌉ or expected − maxUnavailable
  (a percentage rounded up);
* healthy = selected pods that are Ready, not being deleted and not recently evicted;
  disruptionsAllowed = max(healthy − desired, 0).

A pod without a controller when one is needed is a sync failure: the budget then allows no
disruption (condition ``DisruptionAllowed=False``, reason ``SyncFailed``). Status is written
through ``/status`` when it differs.
"""

from __future__ import annotations

import logging
import math
from typing import Any

from controlplane import apitime
from controlplane.api.resources import get
from controlplane.client.rest import ApiError
from controlplane.labels import selector_from_dict
from controlplane.log import event

from .controller import Controller, ControllerContext
from .controller_utils import meta

log = logging.getLogger("controller-manager")

PDBS = get("poddisruptionbudgets", "policy")
PODS = get("pods")
REPLICASETS = get("replicasets", "apps")
DEPLOYMENTS = get("deployments", "apps")
STATEFULSETS = get("statefulsets", "apps")
RCS = get("replicationcontrollers")
#: DeletionTimeout: an eviction not seen as a deletion within it no longer counts
DELETION_TIMEOUT = 120.0


class NoController(Exception):
    """A selected pod has no controller whose scale could be read."""


def _ready(pod: dict[str, Any]) -> bool:
    return any(c.get("type") == "Ready" and c.get("status") == "True"
               for c in (pod.get("status") or {}).get("conditions") or [])


def _controller_ref(obj: dict[str, Any]) -> dict[str, Any] | None:
    return next((r for r in meta(obj).get("ownerReferences") or [] if r.get("controller")), None)


def _scaled(v: Any, total: int, round_up: bool) -> int:
    if isinstance(v, str) and v.endswith("%"):
        x = int(v[:-1]) * total / 100
        return math.ceil(x) if round_up else math.floor(x)
    return int(v)


class DisruptionController(Controller):
    """See the module docstring. Queue keys are ``namespace/name`` of budgets."""

    name = "disruption"
    workers = 1

    def __init__(self, ctx: ControllerContext) -> None:
        super().__init__(ctx)
        self.pdbs = ctx.informers.informer(PDBS)
        self.pods = ctx.informers.informer(PODS)
        self.owners = {r.kind: ctx.informers.informer(r) for r in (REPLICASETS, DEPLOYMENTS, STATEFULSETS, RCS)}
        self.pdbs.add_handlers(self._pdb_changed, lambda old, new: self._pdb_changed(new), None)
        self.pods.add_handlers(self._pod_changed, lambda old, new: self._pod_changed(new), self._pod_changed)

    def _pdb_changed(self, pdb: dict[str, Any]) -> None:
        md = meta(pdb)
        self.enqueue(f"{md.get('namespace')}/{md.get('name')}")

    def _pod_changed(self, pod: dict[str, Any]) -> None:
        ns, labels = meta(pod).get("namespace"), meta(pod).get("labels") or {}
        for pdb in list(self.pdbs.store.values()):
            if meta(pdb).get("namespace") != ns:
                continue
            try:
                if selector_from_dict((pdb.get("spec") or {}).get("selector")).matches(labels):
                    self._pdb_changed(pdb)
            except ValueError:
                continue

    def _selected(self, pdb: dict[str, Any]) -> list[dict[str, Any]]:
        ns = meta(pdb).get("namespace")
        try:
            sel = selector_from_dict((pdb.get("spec") or {}).get("selector"))
        except ValueError:
            return []
        return [p for p in self.pods.store.values()
                if meta(p).get("namespace") == ns and sel.matches(meta(p).get("labels") or {})]

    def _expected_scale(self, pods: list[dict[str, Any]]) -> int:
        """getExpectedScale: the sum of the scales of the pods' distinct controllers."""
        scales: dict[str, int] = {}
        for pod in pods:
            ref = _controller_ref(pod)
            if ref is None:
                raise NoController(f"found no controllers for pod {meta(pod).get('name')!r}")
            ns = meta(pod).get("namespace")
            owner = self.owners.get(str(ref.get("kind")))
            obj = owner.store.get(f"{ns}/{ref.get('name')}") if owner is not None else None
            if obj is None:
                raise NoController(f"found no controllers for pod {meta(pod).get('name')!r}")
            if ref.get("kind") == "ReplicaSet":
                dref = _controller_ref(obj)
                dep = self.owners["Deployment"].store.get(f"{ns}/{dref.get('name')}") if dref and \
                    dref.get("kind") == "Deployment" else None
                if dep is not None:
                    obj = dep
            scales[str(meta(obj).get("uid"))] = int((obj.get("spec") or {}).get("replicas", 1) or 0)
        return sum(scales.values())

    def compute(self, pdb: dict[str, Any], now: float) -> dict[str, Any]:
        """The status ``pdb`` should have at ``now``."""
        spec, status = pdb.get("spec") or {}, pdb.get("status") or {}
        pods = self._selected(pdb)
        out: dict[str, Any] = {"observedGeneration": int(meta(pdb).get("generation") or 0)}
        disrupted: dict[str, str] = {}
        by_name = {meta(p).get("name"): p for p in pods}
        for name, ts in (status.get("disruptedPods") or {}).items():
            p = by_name.get(name)
            t = apitime.time_or_none(ts)
            if p is None or meta(p).get("deletionTimestamp") or t is None or t + DELETION_TIMEOUT < now:
                continue
            disrupted[name] = ts
        failed = ""
        try:
            min_a, max_u = spec.get("minAvailable"), spec.get("maxUnavailable")
            if max_u is not None:
                expected = self._expected_scale(pods)
                desired = max(expected - _scaled(max_u, expected, True), 0)
            elif isinstance(min_a, str) and min_a.endswith("%"):
                expected = self._expected_scale(pods)
                desired = _scaled(min_a, expected, True)
            else:
                expected, desired = len(pods), int(min_a or 0)
        except NoController as e:
            failed, expected, desired = str(e), len(pods), 0
        healthy = sum(1 for p in pods if _ready(p) and not meta(p).get("deletionTimestamp")
                      and meta(p).get("name") not in disrupted)
        allowed = 0 if failed else max(healthy - desired, 0)
        out.update({"disruptionsAllowed": allowed, "currentHealthy": healthy, "desiredHealthy": desired,
                    "expectedPods": expected})
        if disrupted:
            out["disruptedPods"] = disrupted
        cond_status = "True" if allowed > 0 else "False"
        reason = "SyncFailed" if failed else ("SufficientPods" if allowed > 0 else "InsufficientPods")
        old = next((c for c in status.get("conditions") or [] if c.get("type") == "DisruptionAllowed"), None)
        ltt = old.get("lastTransitionTime") if old is not None and old.get("status") == cond_status else \
            apitime.format_time(now)
        out["conditions"] = [{"type": "DisruptionAllowed", "status": cond_status, "reason": reason,
                              "message": failed, "observedGeneration": out["observedGeneration"],
                              "lastTransitionTime": ltt}]
        return out

    async def sync(self, key: str) -> None:
        pdb = self.pdbs.store.get(key)
        if pdb is None:
            return
        status = self.compute(pdb, self.ctx.clock())
        if status == (pdb.get("status") or {}):
            return
        new = dict(pdb)
        new["status"] = status
        try:
            await self.client.update_status(PDBS, new)
        except ApiError as e:
            if e.code == 404:
                return
            raise
        event(log, "disruption.synced", pdb=key, allowed=status["disruptionsAllowed"],
              healthy=status["currentHealthy"], desired=status["desiredHealthy"])
