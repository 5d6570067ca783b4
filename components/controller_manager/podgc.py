"""The pod garbage collector: removes pods nobody else will ever clean up.

Facts from ``pkg/controller/podgc/gc_controller.go`` (gc, gcTerminated, gcTerminating,
gcOrphaned, discoverDeletedNodes, gcUnscheduledTerminating,
markFailedAndDeletePodWithCondition); every ``pod_gc_period`` (20 s):

* terminated pods (phase Succeeded/Failed) beyond ``--terminated-pod-gc-threshold``
  (12500; 0 disables) are deleted, oldest creationTimestamp first;
* terminating pods on a node that is not Ready and carries the
  ``node.kubernetes.io/out-of-service`` taint are force-deleted;
* orphans: pods bound to a node that does not exist. The node must stay missing for
  ``pod_gc_quarantine`` (40 s) and a live GET must answer 404 before its pods go:
  each gets phase Failed (unless already terminal) and the condition
  ``DisruptionTarget`` True (reason ``DeletionByPodGC``, "PodGC: node no longer
  exists") by a status PUT, then a DELETE with ``gracePeriodSeconds: 0`` — that also
  ends pods stuck terminating on a gone node;
* terminating pods never scheduled anywhere are force-deleted.
"""

from __future__ import annotations

import asyncio
import copy
import logging

from controlplane import apitime
from controlplane.api.resources import NODES, PODS
from controlplane.client.rest import ApiError
from controlplane.log import event

from .controller import Controller, ControllerContext
from .controller_utils import meta
from .taints import TAINT_OUT_OF_SERVICE, set_pod_condition

log = logging.getLogger("controller-manager")

TERMINAL = ("Succeeded", "Failed")


class PodGCController(Controller):
    """See the module docstring. :meth:`gc` is one pass; :meth:`run` repeats it."""

    name = "podgc"
    workers = 1

    def __init__(self, ctx: ControllerContext) -> None:
        super().__init__(ctx)
        self.clock = ctx.clock
        self.config = ctx.config
        self.nodes = ctx.informers.informer(NODES)
        self.pods = ctx.informers.informer(PODS)
        #: node name → clock time it was first seen missing (the quarantine)
        self.missing_since: dict[str, float] = {}

    async def gc(self) -> dict[str, int]:
        """One pass; returns how many pods each rule deleted."""
        # the lister's objects themselves, as podLister.List hands out pointers: every rule
        # only reads them, and the one that writes (_mark_failed_and_delete) copies first
        pods = list(self.pods.store.values())
        out = {"terminated": 0, "terminating": 0, "orphaned": 0, "unscheduled": 0}
        if self.config.terminated_pod_gc_threshold > 0:
            out["terminated"] = await self.gc_terminated(pods)
        out["terminating"] = await self.gc_terminating(pods)
        out["orphaned"] = await self.gc_orphaned(pods)
        out["unscheduled"] = await self.gc_unscheduled_terminating(pods)
        if any(out.values()):
            event(log, "podgc.pass", **out)
        return out

    async def gc_terminated(self, pods: list[dict]) -> int:
        terminated = [p for p in pods if (p.get("status") or {}).get("phase") in TERMINAL]
        excess = len(terminated) - self.config.terminated_pod_gc_threshold
        if excess <= 0:
            return 0
        terminated.sort(key=lambda p: apitime.time_or_none(meta(p).get("creationTimestamp")) or 0.0)
        n = 0
        for p in terminated[:excess]:
            n += await self._delete(p, grace=None)
        return n

    async def gc_terminating(self, pods: list[dict]) -> int:
        n = 0
        for p in pods:
            node = self.nodes.store.get((p.get("spec") or {}).get("nodeName") or "")
            if not meta(p).get("deletionTimestamp") or node is None:
                continue
            ready = next((c.get("status") for c in (node.get("status") or {}).get("conditions") or []
                          if c.get("type") == "Ready"), None)
            oos = any(t.get("key") == TAINT_OUT_OF_SERVICE for t in (node.get("spec") or {}).get("taints") or [])
            if ready != "True" and oos:
                n += await self._mark_failed_and_delete(p, "DeletionByPodGC", "PodGC: node is out of service")
        return n

    async def gc_orphaned(self, pods: list[dict]) -> int:
        now = self.clock()
        existing = set(self.nodes.store)
        bound: set[str] = {n for p in pods if (n := (p.get("spec") or {}).get("nodeName"))}
        for name in bound - existing:
            self.missing_since.setdefault(name, now)
        for name in list(self.missing_since):
            if name in existing or name not in bound:
                del self.missing_since[name]
        deleted_nodes = set()
        for name, since in list(self.missing_since.items()):
            if now - since < self.config.pod_gc_quarantine:
                continue
            try:
                await self.client.get(NODES, name)
                continue     # it exists after all (our cache is behind)
            except ApiError as e:
                if e.code != 404:
                    raise
            deleted_nodes.add(name)
            del self.missing_since[name]
        n = 0
        for p in pods:
            if (p.get("spec") or {}).get("nodeName") in deleted_nodes:
                n += await self._mark_failed_and_delete(p, "DeletionByPodGC", "PodGC: node no longer exists")
        return n

    async def gc_unscheduled_terminating(self, pods: list[dict]) -> int:
        n = 0
        for p in pods:
            if meta(p).get("deletionTimestamp") and not (p.get("spec") or {}).get("nodeName"):
                n += await self._delete(p, grace=0)
        return n

    async def _mark_failed_and_delete(self, pod: dict, reason: str, message: str) -> int:
        body = copy.deepcopy(pod)
        st = body.setdefault("status", {})
        changed = False
        if st.get("phase") not in TERMINAL:
            st["phase"] = "Failed"
            changed = True
        changed |= set_pod_condition(body, {"type": "DisruptionTarget", "status": "True", "reason": reason,
                                            "message": message}, apitime.format_time(self.clock()))
        if changed:
            try:
                await self.client.update_status(PODS, body)
            except ApiError as e:
                if e.code == 404:
                    return 0
                if e.code != 409:
                    raise
        return await self._delete(pod, grace=0)

    async def _delete(self, pod: dict, grace: int | None) -> int:
        md = meta(pod)
        try:
            await self.client.delete(PODS, md.get("name"), md.get("namespace"), grace_period_seconds=grace,
                                     preconditions={"uid": md.get("uid")})
        except ApiError as e:
            if e.code in (404, 409):
                return 0
            raise
        event(log, "podgc.deleted", pod=f"{md.get('namespace')}/{md.get('name')}",
              node=(pod.get("spec") or {}).get("nodeName") or "-", grace=grace if grace is not None else "default")
        return 1

    async def run(self, workers: int | None = None) -> None:
        """:meth:`gc` every ``pod_gc_period`` seconds until cancelled."""
        while True:
            try:
                await self.gc()
            except Exception as e:  # a failed pass is retried next period
                event(log, "podgc.failed", logging.WARNING, error=str(e)[:200])
            await asyncio.sleep(self.config.pod_gc_period)  # the GC period, not synchronisation
