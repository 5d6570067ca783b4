"""The TTL-after-finished controller: deletes finished Jobs whose
``spec.ttlSecondsAfterFinished`` has passed (``pkg/controller/ttlafterfinished/
ttlafterfinished_controller.go``, v1.32).

A Job is a candidate when it is not being deleted, has ``ttlSecondsAfterFinished`` and a
``Complete`` or ``Failed`` condition that is True (needsCleanup). Its expiry is the
condition's ``lastTransitionTime`` plus the TTL; before it the Job is re-queued for the
time left, after it the Job is read again from the apiserver (the TTL may have been
changed) and, if still expired, deleted with ``propagationPolicy: Foreground`` and a uid
precondition, as Kubernetes does (its pods go first, through the garbage collector).
"""

from __future__ import annotations

import logging

from controlplane import apitime
from controlplane.api.resources import get
from controlplane.client.informer import key_of
from controlplane.client.rest import ApiError
from controlplane.log import event

from .controller import Controller, ControllerContext
from .controller_utils import meta
from .jobutil import finished_condition

log = logging.getLogger("controller-manager")

JOBS = get("jobs", "batch")


def needs_cleanup(job: dict) -> bool:
    """``ttlSecondsAfterFinished`` set and the Job finished (needsCleanup)."""
    if (job.get("spec") or {}).get("ttlSecondsAfterFinished") is None:
        return False
    return finished_condition(job) is not None


def time_left(job: dict, now: float) -> tuple[float, float]:
    """``(seconds left, expiry time)`` of a finished Job with a TTL (timeLeft). Raises
    ValueError "unable to find the time when the Job NS/NAME finished" when the
    finishing condition has no lastTransitionTime."""
    md = meta(job)
    cond = finished_condition(job) or {}
    finished = apitime.time_or_none(cond.get("lastTransitionTime"))
    if finished is None:
        raise ValueError(f"unable to find the time when the Job {md.get('namespace')}/{md.get('name')} finished")
    if finished > now:
        event(log, "ttl.finished_in_future", logging.WARNING, job=f"{md.get('namespace')}/{md.get('name')}",
              message="Found Job finished in the future. This is likely due to time skew in the cluster. "
                      "Job cleanup will be deferred.")
    expire = finished + float((job.get("spec") or {})["ttlSecondsAfterFinished"])
    return expire - now, expire


class TTLAfterFinishedController(Controller):
    """See the module docstring. Queue keys: ``namespace/name`` of Jobs."""

    name = "ttl-after-finished"
    workers = 5

    def __init__(self, ctx: ControllerContext) -> None:
        super().__init__(ctx)
        self.jobs = ctx.informers.informer(JOBS)
        #: (key, seconds) of every delayed re-check asked for (tests read it)
        self.delays: list[tuple[str, float]] = []
        self.jobs.add_handlers(self._changed, lambda _old, new: self._changed(new), None)

    def _changed(self, job: dict) -> None:
        if not meta(job).get("deletionTimestamp") and needs_cleanup(job):
            self.enqueue(key_of(job))

    def _expired(self, key: str, job: dict) -> bool:
        """processTTL: True once the TTL has passed, else re-queue for the time left."""
        if meta(job).get("deletionTimestamp") or not needs_cleanup(job):
            return False
        left, _ = time_left(job, self.ctx.clock())
        if left <= 0:
            return True
        self.delays.append((key, left))
        self.queue.add_after(key, left)
        return False

    async def sync(self, key: str) -> None:
        """processJob: delete the Job ``key`` once its TTL has truly expired."""
        job = self.jobs.store.get(key)
        if job is None or not self._expired(key, job):
            return
        md = meta(job)
        try:
            fresh = await self.client.get(JOBS, md["name"], md.get("namespace"))
        except ApiError as e:
            if e.code == 404:
                return
            raise
        if not self._expired(key, fresh):
            return
        fmd = meta(fresh)
        event(log, "ttl.cleanup", job=key)
        try:
            await self.client.delete(JOBS, fmd["name"], fmd.get("namespace"), propagation_policy="Foreground",
                                     preconditions={"uid": fmd.get("uid")})
        except ApiError as e:
            if e.code != 404:
                raise
