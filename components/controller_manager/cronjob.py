"""The CronJob controller (v2): creates a Job for each scheduled time of a CronJob
(``pkg/controller/cronjob/cronjob_controllerv2.go`` and ``utils.go``, Kubernetes v1.32).

Per sync (ControllerV2.sync): the Jobs of the namespace whose controllerRef names the
CronJob are reconciled; finished Jobs beyond ``successfulJobsHistoryLimit`` /
``failedJobsHistoryLimit`` are deleted oldest first (cleanupFinishedJobs); finished Jobs
leave ``status.active`` (``SawCompletedJob``), vanished ones too (``MissingJob``), and
``lastSuccessfulTime`` follows the latest completion; then, unless the CronJob is being
deleted, has an unknown ``timeZone`` (``UnknownTimeZone``), is suspended or has an
unparseable schedule (``UnparseableSchedule``), the most recent unmet schedule time is
computed (mostRecentScheduleTime: at most one Job per sync, the latest missed time; more
than 100 missed → ``TooManyMissedTimes``), skipped when past ``startingDeadlineSeconds``
(``MissSchedule``) or already processed, refused by ``concurrencyPolicy: Forbid`` while a
Job runs (``JobAlreadyActive``), preceded by deleting the running Jobs for ``Replace``,
and created as ``<cronjob>-<scheduled time in minutes since the epoch>`` with the
``batch.kubernetes.io/cronjob-scheduled-timestamp`` annotation and the controllerRef
(``SuccessfulCreate``); ``status.active`` gets its ObjectReference and
``lastScheduleTime`` the scheduled time, in one status update per sync. The key is then
requeued on the delaying work queue for the next schedule time plus 100 ms
(nextScheduleTimeDuration) — there is no periodic poll.

Schedules (robfig/cron ``ParseStandard``): five fields, the ``@hourly``-style
descriptors and ``@every <duration>``; times are computed by ``croniter`` in the
CronJob's ``spec.timeZone`` (zoneinfo), else in the controller's local zone (Go's
``time.Local``: ``$TZ``, else ``/etc/localtime``, else UTC). A ``TZ=``/``CRON_TZ=``
prefix is refused by the API's validation for new objects; a stored schedule carrying
one is honoured with the ``UnsupportedSchedule`` warning, as formatSchedule does.
"""

from __future__ import annotations

import asyncio
import datetime
import functools
import logging
import math
import os
import time
import zoneinfo
from dataclasses import dataclass
from typing import Any, Callable, Protocol

from croniter import CroniterBadDateError, croniter

from controlplane import apitime
from controlplane.api import codec
from controlplane.api.groups.batch import schedule_error
from controlplane.api.resources import get
from controlplane.client.informer import key_of
from controlplane.client.rest import ApiError
from controlplane.client.workqueue import ShutDown
from controlplane.log import event

from .controller import MAX_RETRIES, Controller, ControllerContext
from .controller_utils import controller_ref, meta, new_controller_ref
from .jobutil import finished_type, is_job_succeeded

log = logging.getLogger("controller-manager")

JOBS = get("jobs", "batch")
CRONJOBS = get("cronjobs", "batch")

#: event source component (NewControllerV2's recorder)
COMPONENT = "cronjob-controller"
#: Job annotation: the scheduled time, RFC 3339 in the CronJob's time zone
#: (batchv1.CronJobScheduledTimestampAnnotation; feature CronJobsScheduledAnnotation, on in 1.32)
SCHEDULED_TIMESTAMP_ANNOTATION = "batch.kubernetes.io/cronjob-scheduled-timestamp"
#: seconds added to every requeue, for clock skews (nextScheduleDelta)
NEXT_SCHEDULE_DELTA = 0.1
#: more missed schedule times than this raise TooManyMissedTimes
MANY_MISSED = 100

#: missedSchedulesType
NONE_MISSED, FEW_MISSED, MANY_MISSED_SCHEDULES = "none", "few", "many"

#: robfig/cron's descriptors as five-field schedules (parser.go parseDescriptor)
_DESCRIPTORS = {"@yearly": "0 0 1 1 *", "@annually": "0 0 1 1 *", "@monthly": "0 0 1 * *",
                "@weekly": "0 0 * * 0", "@daily": "0 0 * * *", "@midnight": "0 0 * * *",
                "@hourly": "0 * * * *"}


class ScheduleError(ValueError):
    """A schedule robfig/cron's ParseStandard refuses; the message is its error text."""


class Schedule(Protocol):
    """cron.Schedule: ``next(t)`` is the first activation strictly after ``t`` (epoch
    seconds), or None where robfig returns the zero time (no activation in reach)."""

    def next(self, t: float) -> float | None: ...


@dataclass(frozen=True)
class CronSchedule:
    """A five-field schedule in ``zone`` (robfig SpecSchedule): whole seconds, and the
    day-of-month / day-of-week fields ANDed when either starts with ``*`` or ``?``
    (robfig's star bit), ORed otherwise."""

    expr: str
    zone: datetime.tzinfo

    def next(self, t: float) -> float | None:
        fields = self.expr.split()
        day_or = not (fields[2][:1] in "*?" or fields[4][:1] in "*?")
        start = datetime.datetime.fromtimestamp(math.floor(t), self.zone)
        try:
            nxt = croniter(self.expr.replace("?", "*"), start, day_or=day_or).get_next(datetime.datetime)
        except (CroniterBadDateError, ValueError, OverflowError):
            return None
        return float(nxt.timestamp())


@dataclass(frozen=True)
class EverySchedule:
    """``@every <duration>`` (robfig ConstantDelaySchedule): ``delay`` whole seconds (at
    least 1) after ``t`` truncated to the second."""

    delay: int

    def next(self, t: float) -> float | None:
        return float(math.floor(t) + self.delay)


def local_zone() -> datetime.tzinfo:
    """Go's ``time.Local``: ``$TZ`` (empty: UTC), else ``/etc/localtime``, else UTC (read
    once per value of ``$TZ``)."""
    return _local_zone(os.environ.get("TZ"))


@functools.lru_cache(maxsize=8)
def _local_zone(tz: str | None) -> datetime.tzinfo:
    if tz is not None:
        try:
            return zoneinfo.ZoneInfo(tz.lstrip(":")) if tz else datetime.timezone.utc
        except (zoneinfo.ZoneInfoNotFoundError, ValueError, OSError):
            return datetime.timezone.utc
    try:
        with open("/etc/localtime", "rb") as f:
            return zoneinfo.ZoneInfo.from_file(f)
    except (OSError, ValueError):
        return datetime.timezone.utc


def load_location(name: str) -> datetime.tzinfo:
    """Go's ``time.LoadLocation``: "" and ``UTC`` are UTC, ``Local`` the local zone, else
    an IANA zone. Raises ScheduleError("unknown time zone NAME")."""
    if name in ("", "UTC"):
        return datetime.timezone.utc
    if name == "Local":
        return local_zone()
    try:
        return zoneinfo.ZoneInfo(name)
    except (zoneinfo.ZoneInfoNotFoundError, ValueError, OSError):
        raise ScheduleError(f"unknown time zone {name}") from None


def parse_standard(spec: str) -> Schedule:
    """robfig/cron ``ParseStandard``: an optional ``TZ=zone `` / ``CRON_TZ=zone `` prefix,
    then a descriptor, ``@every <duration>`` or five fields. Raises ScheduleError with
    robfig's message."""
    if not spec:
        raise ScheduleError("empty spec string")
    zone: datetime.tzinfo | None = None
    if spec.startswith("TZ=") or spec.startswith("CRON_TZ="):
        i, eq = spec.find(" "), spec.find("=")
        name = spec[eq + 1:i] if i >= 0 else spec[eq + 1:]
        try:
            zone = load_location(name)
        except ScheduleError as e:
            raise ScheduleError(f"provided bad location {name}: {e}") from None
        spec = spec[i:].strip() if i >= 0 else ""
    err = schedule_error(spec) if spec else "empty spec string"
    if err:
        raise ScheduleError(err)
    if spec.startswith("@every "):
        d = apitime.parse_duration(spec[len("@every "):])
        return EverySchedule(max(1, int(d)))
    expr = _DESCRIPTORS.get(spec, spec)
    return CronSchedule(" ".join(expr.split()), zone if zone is not None else local_zone())


def format_schedule(cj: dict[str, Any], recorder: Any = None) -> str:
    """formatSchedule: the schedule with ``TZ=<spec.timeZone> `` prepended when the zone
    loads; a schedule that itself names ``TZ`` is kept as is, with the
    ``UnsupportedSchedule`` warning when ``recorder`` is given."""
    spec = cj.get("spec") or {}
    schedule = str(spec.get("schedule") or "")
    if "TZ" in schedule:
        if recorder is not None:
            recorder.event(cj, "Warning", "UnsupportedSchedule",
                           f"CRON_TZ or TZ used in schedule {_quote(schedule)} is not officially supported, see "
                           "https://kubernetes.io/docs/concepts/workloads/controllers/cron-jobs/ for more details")
        return schedule
    tz = spec.get("timeZone")
    if tz is not None:
        try:
            load_location(tz)
        except ScheduleError:
            return schedule
        return f"TZ={tz} {schedule}"
    return schedule


def _quote(s: str) -> str:
    """Go's ``%q`` for the plain strings met here."""
    return '"' + s.replace("\\", "\\\\").replace('"', '\\"') + '"'


# --------------------------------------------------------------------------- utils.go

def _time(obj: dict[str, Any], *path: str) -> float | None:
    cur: Any = obj
    for p in path:
        cur = (cur or {}).get(p) if isinstance(cur, dict) else None
    return apitime.time_or_none(cur)


def most_recent_schedule_time(cj: dict[str, Any], now: float, schedule: Schedule,
                              include_starting_deadline: bool) -> tuple[float, float | None, str]:
    """mostRecentScheduleTime: ``(earliest, most_recent, missed)`` — the last schedule time
    (else the creation time, raised to ``now - startingDeadlineSeconds`` when asked), the
    latest schedule time in (earliest, now] or None, and NONE/FEW/MANY missed (an
    estimate from the interval between the first two times after ``earliest``). Raises
    ScheduleError "time difference between two schedules is less than 1 second" for a
    schedule that never or hardly ever fires (``0 0 30 2 *``)."""
    earliest = _time(cj, "status", "lastScheduleTime")
    if earliest is None:
        earliest = _time(cj, "metadata", "creationTimestamp") or 0.0
    deadline = (cj.get("spec") or {}).get("startingDeadlineSeconds")
    if include_starting_deadline and deadline is not None:
        scheduling_deadline = now - int(deadline)
        if scheduling_deadline > earliest:
            earliest = scheduling_deadline
    t1 = schedule.next(earliest)
    t2 = schedule.next(t1) if t1 is not None else None
    if t1 is not None and now < t1:
        return earliest, None, NONE_MISSED
    if t1 is not None and t2 is not None and now < t2:
        return earliest, t1, NONE_MISSED
    between = 0 if t1 is None or t2 is None else math.floor(t2 - t1 + 0.5)
    if between < 1:
        raise ScheduleError("time difference between two schedules is less than 1 second")
    assert t1 is not None
    elapsed = int(now - t1)
    missed = elapsed // between + 1
    most_recent: float | None = None
    t: float | None = schedule.next(t1 + (missed - 2) * between)
    while t is not None and t <= now:
        most_recent = t
        t = schedule.next(t)
    kind = MANY_MISSED_SCHEDULES if missed > MANY_MISSED else FEW_MISSED if missed > 0 else NONE_MISSED
    return earliest, most_recent, kind


def next_schedule_time_duration(cj: dict[str, Any], now: float, schedule: Schedule) -> float | None:
    """nextScheduleTimeDuration: seconds from ``now`` until the schedule time after the most
    recent one (or after ``now`` when schedules were missed or the schedule is broken),
    plus :data:`NEXT_SCHEDULE_DELTA`; None when the schedule never fires again."""
    try:
        earliest, most_recent, missed = most_recent_schedule_time(cj, now, schedule, False)
        if most_recent is None:
            most_recent = earliest if missed == NONE_MISSED else now
    except ScheduleError:
        most_recent = now
    nxt = schedule.next(most_recent)
    return None if nxt is None else nxt + NEXT_SCHEDULE_DELTA - now


def next_schedule_time(cj: dict[str, Any], now: float, schedule: Schedule, recorder: Any) -> float | None:
    """nextScheduleTime: the most recent unmet schedule time at or before ``now`` (the
    starting deadline counted), or None; ``TooManyMissedTimes`` when more than 100 were
    missed. Raises ScheduleError as :func:`most_recent_schedule_time`."""
    _, most_recent, missed = most_recent_schedule_time(cj, now, schedule, True)
    if most_recent is None or most_recent > now:
        return None
    if missed == MANY_MISSED_SCHEDULES:
        recorder.event(cj, "Warning", "TooManyMissedTimes",
                       "too many missed start times. Set or decrease .spec.startingDeadlineSeconds "
                       "or check clock skew")
        event(log, "cronjob.too_many_missed", logging.INFO, cronjob=key_of(cj))
    return most_recent


def job_name(cj: dict[str, Any], scheduled: float) -> str:
    """getJobName: ``<cronjob>-<scheduled time in minutes since the epoch>``."""
    return f"{meta(cj).get('name')}-{int(scheduled) // 60}"


def rfc3339_in(t: float, zone: datetime.tzinfo) -> str:
    """Go's ``t.In(zone).Format(time.RFC3339)``: ``Z`` for a zero offset, else ``±hh:mm``."""
    dt = datetime.datetime.fromtimestamp(int(t), zone)
    off = dt.utcoffset() or datetime.timedelta(0)
    if not off:
        return dt.strftime("%Y-%m-%dT%H:%M:%SZ")
    mins = int(off.total_seconds()) // 60
    sign = "+" if mins >= 0 else "-"
    return dt.strftime("%Y-%m-%dT%H:%M:%S") + f"{sign}{abs(mins) // 60:02d}:{abs(mins) % 60:02d}"


def job_from_template(cj: dict[str, Any], scheduled: float) -> dict[str, Any]:
    """getJobFromTemplate2: the Job for ``scheduled`` — the template's labels and annotations
    plus :data:`SCHEDULED_TIMESTAMP_ANNOTATION` (in ``spec.timeZone``, UTC when unset), the
    deterministic name, the controllerRef, a copy of the template's spec. Raises
    ScheduleError for an unknown time zone."""
    spec = cj.get("spec") or {}
    tpl = spec.get("jobTemplate") or {}
    tmd = tpl.get("metadata") or {}
    zone = load_location(spec.get("timeZone") or "")
    annotations = dict(tmd.get("annotations") or {})
    annotations[SCHEDULED_TIMESTAMP_ANNOTATION] = rfc3339_in(scheduled, zone)
    md: dict[str, Any] = {"name": job_name(cj, scheduled), "namespace": meta(cj).get("namespace"),
                          "creationTimestamp": apitime.format_time(scheduled),
                          "annotations": annotations,
                          "ownerReferences": [new_controller_ref(cj, "batch/v1", "CronJob")]}
    if tmd.get("labels"):
        md["labels"] = dict(tmd["labels"])
    return {"apiVersion": "batch/v1", "kind": "Job", "metadata": md,
            "spec": codec.clone(tpl.get("spec") or {})}


def by_job_start_time(job: dict[str, Any]) -> tuple:
    """Sort key of byJobStartTime: Jobs with a startTime first, oldest first, then by name."""
    start = _time(job, "status", "startTime")
    return (start is None, start or 0.0, meta(job).get("name") or "")


def object_reference(job: dict[str, Any]) -> dict[str, Any]:
    """ref.GetReference of a Job: kind, namespace, name, uid, apiVersion, resourceVersion."""
    md = meta(job)
    return {"kind": "Job", "namespace": md.get("namespace"), "name": md.get("name"), "uid": md.get("uid"),
            "apiVersion": "batch/v1", "resourceVersion": md.get("resourceVersion")}


def _active(cj: dict[str, Any]) -> list[dict[str, Any]]:
    return list((cj.get("status") or {}).get("active") or [])


def in_active_list(cj: dict[str, Any], uid: Any) -> bool:
    """inActiveList: ``status.active`` has a reference with ``uid``."""
    return any(r.get("uid") == uid for r in _active(cj))


def delete_from_active_list(cj: dict[str, Any], uid: Any) -> None:
    """deleteFromActiveList: drop the references with ``uid`` (an empty list is omitted)."""
    st = cj.setdefault("status", {})
    rest = [r for r in _active(cj) if r.get("uid") != uid]
    if rest:
        st["active"] = rest
    else:
        st.pop("active", None)


def _namespace_terminating(e: ApiError) -> bool:
    causes = ((e.status or {}).get("details") or {}).get("causes") or []
    return any(c.get("reason") == "NamespaceTerminating" for c in causes)


def _go_time_rfc1123z(t: float) -> str:
    return time.strftime("%a, %d %b %Y %H:%M:%S +0000", time.gmtime(int(t)))


# --------------------------------------------------------------------------- the controller

class CronJobController(Controller):
    """The CronJob controller v2 (see the module docstring). ``ctx.clock`` is its ``now``
    (epoch seconds); :meth:`sync` returns the requeue delay in seconds, or None."""

    name = "cronjob"
    workers = 5

    def __init__(self, ctx: ControllerContext) -> None:
        super().__init__(ctx)
        self.now: Callable[[], float] = ctx.clock
        self.recorder = ctx.recorder(COMPONENT)
        self.jobs = ctx.informers.informer(JOBS)
        self.cronjobs = ctx.informers.informer(CRONJOBS)
        self.jobs.add_indexer("cronjob-controller-name", _controller_name_index)
        self.jobs.add_handlers(self._add_job, self._update_job, self._delete_job)
        self.cronjobs.add_handlers(lambda o: self.enqueue(key_of(o)), self._update_cronjob,
                                   lambda o: self.enqueue(key_of(o)))

    # -- informer handlers ----------------------------------------------------------
    def _resolve(self, namespace: str | None, ref: dict[str, Any]) -> dict[str, Any] | None:
        """resolveControllerRef: the cached CronJob a controllerRef names (kind and uid checked)."""
        if ref.get("kind") != "CronJob":
            return None
        cj = self.cronjobs.store.get(f"{namespace}/{ref.get('name')}")
        if cj is None or meta(cj).get("uid") != ref.get("uid"):
            return None
        return cj

    def _enqueue_owner(self, job: dict[str, Any], ref: dict[str, Any] | None) -> None:
        if ref is None:
            return
        cj = self._resolve(meta(job).get("namespace"), ref)
        if cj is not None:
            self.enqueue(key_of(cj))

    def _add_job(self, job: dict[str, Any]) -> None:
        if meta(job).get("deletionTimestamp"):
            self._delete_job(job)
            return
        self._enqueue_owner(job, controller_ref(job))

    def _update_job(self, old: dict[str, Any], cur: dict[str, Any]) -> None:
        if meta(old).get("resourceVersion") == meta(cur).get("resourceVersion"):
            return
        cur_ref, old_ref = controller_ref(cur), controller_ref(old)
        if cur_ref != old_ref and old_ref is not None:
            self._enqueue_owner(old, old_ref)
        self._enqueue_owner(cur, cur_ref)

    def _delete_job(self, job: dict[str, Any]) -> None:
        self._enqueue_owner(job, controller_ref(job))

    def _update_cronjob(self, old: dict[str, Any], cur: dict[str, Any]) -> None:
        """updateCronJob: a changed schedule or time zone requeues at the next schedule time
        (``UnParseableCronJobSchedule`` when it does not parse); any other change now."""
        o, n = old.get("spec") or {}, cur.get("spec") or {}
        if o.get("schedule") != n.get("schedule") or o.get("timeZone") != n.get("timeZone"):
            try:
                sched = parse_standard(format_schedule(cur))
            except ScheduleError:
                self.recorder.event(cur, "Warning", "UnParseableCronJobSchedule",
                                    f"unparseable schedule for cronjob: {n.get('schedule')}")
                return
            delay = next_schedule_time_duration(cur, self.now(), sched)
            if delay is not None:
                self.queue.add_after(key_of(cur), delay)
            return
        self.enqueue(key_of(cur))

    # -- the work queue ---------------------------------------------------------------
    async def process_next(self) -> bool:
        """processNextWorkItem: an error requeues with backoff; a requeue delay forgets the
        backoff and adds the key after that delay; otherwise the key rests until an event."""
        try:
            key = await self.queue.get()
        except ShutDown:
            return False
        try:
            requeue = await self.sync(key)
            if requeue is not None:
                self.queue.forget(key)
                self.queue.add_after(key, requeue)
        except asyncio.CancelledError:
            raise
        except Exception as e:
            level = logging.INFO if isinstance(e, ApiError) and e.code == 409 else logging.WARNING
            event(log, "controller.sync_failed", level, controller=self.name, key=key, error=str(e)[:300])
            if self.queue.num_requeues(key) < MAX_RETRIES:
                self.queue.add_rate_limited(key)
            else:
                self.queue.forget(key)
        finally:
            self.queue.done(key)
        return True

    # -- sync -----------------------------------------------------------------------
    def jobs_to_be_reconciled(self, cj: dict[str, Any]) -> list[dict[str, Any]]:
        """getJobsToBeReconciled: the cached Jobs of the namespace whose controllerRef has the
        CronJob's name."""
        md = meta(cj)
        return list(self.jobs.by_index("cronjob-controller-name", f"{md.get('namespace')}/{md.get('name')}"))

    async def sync(self, key: str) -> float | None:  # type: ignore[override]
        """ControllerV2.sync: reconcile one CronJob; returns the requeue delay (s) or None.
        Raises the API error that should requeue the key with backoff."""
        cached = self.cronjobs.store.get(key)
        if cached is None:
            return None
        jobs = self.jobs_to_be_reconciled(cached)
        cj = codec.clone(cached)
        update_after_cleanup = await self.cleanup_finished_jobs(cj, jobs)
        sync_error: Exception | None = None
        requeue: float | None = None
        update_after_sync = False
        try:
            requeue, update_after_sync, cj = await self.sync_cronjob(cj, jobs)
        except SyncFailed as f:
            sync_error, update_after_sync, cj = f.error, f.update, f.cronjob
            event(log, "cronjob.sync_error", cronjob=key, error=str(f.error)[:300])
        if update_after_cleanup or update_after_sync:
            await self.client.update_status(CRONJOBS, _status_body(cj))
        if requeue is not None:
            return requeue
        if sync_error is not None:
            raise sync_error
        return None

    async def cleanup_finished_jobs(self, cj: dict[str, Any], jobs: list[dict[str, Any]]) -> bool:
        """cleanupFinishedJobs: delete the oldest finished Jobs beyond the history limits;
        True when ``cj``'s status changed."""
        spec = cj.get("spec") or {}
        ok_limit, failed_limit = spec.get("successfulJobsHistoryLimit"), spec.get("failedJobsHistoryLimit")
        if ok_limit is None and failed_limit is None:
            return False
        succeeded = [j for j in jobs if finished_type(j) == "Complete"]
        failed = [j for j in jobs if finished_type(j) == "Failed"]
        changed = False
        if ok_limit is not None and await self.remove_oldest_jobs(cj, succeeded, int(ok_limit)):
            changed = True
        if failed_limit is not None and await self.remove_oldest_jobs(cj, failed, int(failed_limit)):
            changed = True
        return changed

    async def remove_oldest_jobs(self, cj: dict[str, Any], jobs: list[dict[str, Any]], keep: int) -> bool:
        """removeOldestJobs: delete all but ``keep`` of ``jobs``, oldest start time first."""
        n = len(jobs) - keep
        if n <= 0:
            return False
        changed = False
        for job in sorted(jobs, key=by_job_start_time)[:n]:
            if await self.delete_job(cj, job):
                changed = True
        return changed

    async def delete_job(self, cj: dict[str, Any], job: dict[str, Any]) -> bool:
        """deleteJob: DELETE the Job (propagationPolicy Background) and drop it from
        ``status.active``; ``SuccessfulDelete`` or ``FailedDelete``."""
        md = meta(job)
        try:
            await self.client.delete(JOBS, md.get("name"), md.get("namespace"), propagation_policy="Background")
        except ApiError as e:
            self.recorder.event(cj, "Warning", "FailedDelete", f"Deleted job: {e.message}")
            event(log, "cronjob.delete_failed", logging.WARNING, cronjob=key_of(cj), job=md.get("name"),
                  error=e.message)
            return False
        delete_from_active_list(cj, md.get("uid"))
        self.recorder.event(cj, "Normal", "SuccessfulDelete", f"Deleted job {md.get('name')}")
        return True

    async def sync_cronjob(self, cj: dict[str, Any],
                           jobs: list[dict[str, Any]]) -> tuple[float | None, bool, dict[str, Any]]:
        """syncCronJob: ``(requeue delay or None, status changed, the CronJob as changed)``
        (the CronJob is a fresher copy when one was read to check an unexpected Job).
        Raises :class:`SyncFailed` with the API error and the status change made before it."""
        now = self.now()
        update = False
        ns = meta(cj).get("namespace")
        children: set[Any] = set()
        for j in jobs:
            uid = meta(j).get("uid")
            children.add(uid)
            found = in_active_list(cj, uid)
            finished = finished_type(j)
            if not found and finished is None:
                try:
                    fresh = await self.client.get(CRONJOBS, meta(cj).get("name"), ns)
                except ApiError as e:
                    raise SyncFailed(e, update, cj) from None
                if in_active_list(fresh, uid):
                    cj = fresh
                    continue
                self.recorder.event(cj, "Warning", "UnexpectedJob",
                                    f"Saw a job that the controller did not create or forgot: {meta(j).get('name')}")
            elif finished is not None:
                if found:
                    delete_from_active_list(cj, uid)
                    self.recorder.event(cj, "Normal", "SawCompletedJob",
                                        f"Saw completed job: {meta(j).get('name')}, condition: {finished}")
                    update = True
                if is_job_succeeded(j):
                    st = cj.setdefault("status", {})
                    completion = (j.get("status") or {}).get("completionTime")
                    if st.get("lastSuccessfulTime") is None:
                        _set(st, "lastSuccessfulTime", completion)
                        update = True
                    last = apitime.time_or_none(st.get("lastSuccessfulTime"))
                    done = apitime.time_or_none(completion)
                    if done is not None and (last is None or done > last):
                        st["lastSuccessfulTime"] = completion
                        update = True

        for ref in _active(cj):
            if ref.get("uid") in children:
                continue
            try:
                await self.client.get(JOBS, ref.get("name"), ref.get("namespace"))
            except ApiError as e:
                if e.code != 404:
                    raise SyncFailed(e, update, cj) from None
                self.recorder.event(cj, "Normal", "MissingJob", f"Active job went missing: {ref.get('name')}")
                delete_from_active_list(cj, ref.get("uid"))
                update = True

        if meta(cj).get("deletionTimestamp"):
            return None, update, cj

        spec = cj.get("spec") or {}
        tz = spec.get("timeZone")
        if tz is not None:
            try:
                load_location(tz)
            except ScheduleError as e:
                self.recorder.event(cj, "Warning", "UnknownTimeZone", f"invalid timeZone: {_quote(tz)}: {e}")
                return None, update, cj

        if spec.get("suspend") is True:
            return None, update, cj

        try:
            sched = parse_standard(format_schedule(cj, self.recorder))
        except ScheduleError as e:
            self.recorder.event(cj, "Warning", "UnparseableSchedule",
                                f"unparseable schedule: {_quote(str(spec.get('schedule') or ''))} : {e}")
            return None, update, cj

        try:
            scheduled = next_schedule_time(cj, now, sched, self.recorder)
        except ScheduleError as e:
            self.recorder.event(cj, "Warning", "InvalidSchedule",
                                f"invalid schedule: {spec.get('schedule')} : {e}")
            return None, update, cj
        if scheduled is None:
            return next_schedule_time_duration(cj, now, sched), update, cj

        deadline = spec.get("startingDeadlineSeconds")
        if deadline is not None and scheduled + int(deadline) < now:
            self.recorder.event(cj, "Warning", "MissSchedule",
                                f"Missed scheduled time to start a job: {_go_time_rfc1123z(scheduled)}")
            return next_schedule_time_duration(cj, now, sched), update, cj

        name = job_name(cj, scheduled)
        last = _time(cj, "status", "lastScheduleTime")
        if any(r.get("name") == name and r.get("namespace") == ns for r in _active(cj)) or last == scheduled:
            return next_schedule_time_duration(cj, now, sched), update, cj

        policy = spec.get("concurrencyPolicy")
        if policy == "Forbid" and _active(cj):
            self.recorder.event(cj, "Normal", "JobAlreadyActive",
                                "Not starting job because prior execution is running and concurrency policy is "
                                "Forbid")
            return next_schedule_time_duration(cj, now, sched), update, cj
        if policy == "Replace":
            for ref in _active(cj):
                try:
                    running = await self.client.get(JOBS, ref.get("name"), ref.get("namespace"))
                except ApiError as e:
                    self.recorder.event(cj, "Warning", "FailedGet", f"Get job: {e.message}")
                    raise SyncFailed(e, update, cj) from None
                if not await self.delete_job(cj, running):
                    raise SyncFailed(RuntimeError(f"could not replace job {ns}/{meta(running).get('name')}"),
                                     update, cj)
                update = True

        try:
            request = job_from_template(cj, scheduled)
        except ScheduleError as e:
            raise SyncFailed(RuntimeError(str(e)), update, cj) from None
        already_exists = False
        try:
            created = await self.client.create(JOBS, request, ns)
        except ApiError as e:
            if _namespace_terminating(e):
                raise SyncFailed(e, update, cj) from None
            if e.code == 409 and e.reason == "AlreadyExists":
                already_exists = True
                try:
                    created = await self.client.get(JOBS, name, ns)
                except ApiError as e2:
                    raise SyncFailed(e2, update, cj) from None
                owner = controller_ref(created)
                if owner is None or owner.get("uid") != meta(cj).get("uid"):
                    return None, update, cj
                if in_active_list(cj, meta(created).get("uid")):
                    return None, update, cj
            else:
                self.recorder.event(cj, "Warning", "FailedCreate", f"Error creating job: {e.message}")
                raise SyncFailed(e, update, cj) from None
        if already_exists:
            event(log, "cronjob.job_exists", cronjob=key_of(cj), job=name)
        else:
            event(log, "cronjob.job_created", cronjob=key_of(cj), job=name,
                  scheduled=apitime.format_time(scheduled))
            self.recorder.event(cj, "Normal", "SuccessfulCreate", f"Created job {meta(created).get('name')}")
        st = cj.setdefault("status", {})
        st["active"] = _active(cj) + [object_reference(created)]
        st["lastScheduleTime"] = apitime.format_time(scheduled)
        return next_schedule_time_duration(cj, now, sched), True, cj


class SyncFailed(Exception):
    """An API error inside syncCronJob (``error``), with whether the status changed before
    it (``update``) and the CronJob as changed (``cronjob``): the status is still written."""

    def __init__(self, error: Exception, update: bool, cronjob: dict[str, Any]) -> None:
        super().__init__(str(error))
        self.error, self.update, self.cronjob = error, update, cronjob


def _set(d: dict[str, Any], k: str, v: Any) -> None:
    if v is None:
        d.pop(k, None)
    else:
        d[k] = v


def _controller_name_index(job: dict[str, Any]) -> list[str]:
    """Index of the Jobs by ``namespace/<controllerRef name>`` (getJobsToBeReconciled lists
    the namespace and keeps the Jobs whose controllerRef has the CronJob's name)."""
    ref = controller_ref(job)
    return [f"{meta(job).get('namespace')}/{ref.get('name')}"] if ref is not None else []


def _status_body(cj: dict[str, Any]) -> dict[str, Any]:
    """The object sent to ``cronjobs/status``: the CronJob as synced (its resourceVersion may
    be a fresher one read during the sync)."""
    body = codec.clone(cj)
    if not (body.get("status") or {}).get("active"):
        body.setdefault("status", {}).pop("active", None)
    return body
