"""The Job controller: runs a Job's pods to completion and tracks them with
finalizers (``pkg/controller/job/job_controller.go``, v1.32, with
``indexed_job_utils.go``, ``backoff_utils.go``, ``pod_failure_policy.go``,
``tracking_utils.go``; the feature gates on by default in v1.32:
JobPodReplacementPolicy, JobManagedBy, JobSuccessPolicy's CompletionsReached reason,
PodIndexLabel).

Per sync (syncJob):

* pods are created from ``spec.template`` with the ``batch.kubernetes.io/job-tracking``
  finalizer, the template's labels and a controllerRef (generateName ``<job>-``); an
  Indexed Job's pods also get the ``batch.kubernetes.io/job-completion-index``
  annotation and label, ``hostname: <job>-<index>``, generateName ``<job>-<index>-`` and
  the ``JOB_COMPLETION_INDEX`` env var (from the label) in every container;
* at most ``min(parallelism, completions - succeeded)`` pods are active; after failures
  new pods wait for the exponential back-off (10 s doubling, at most 10 minutes, reset by
  a success: ``DefaultJobPodFailureBackOff`` / ``MaxJobPodFailureBackOff``);
* finished pods are first written to ``status.uncountedTerminatedPods``, then their
  finalizer is removed, then they are counted in ``succeeded`` / ``failed`` (the
  tracking-with-finalizers algorithm: no pod is counted twice or lost);
* ``failed > backoffLimit`` (or restarts past it under ``restartPolicy: OnFailure``),
  ``activeDeadlineSeconds`` and a podFailurePolicy ``FailJob`` rule add the interim
  ``FailureTarget`` condition (reasons ``BackoffLimitExceeded``, ``DeadlineExceeded``,
  ``PodFailurePolicy``), active pods are deleted, and once none is terminating
  ``Failed`` follows with the same reason and message (Warning event with them);
* enough successes add ``SuccessCriteriaMet`` (reason ``CompletionsReached``) and then
  ``Complete`` with ``completionTime`` (Normal event ``Completed`` "Job completed");
* ``suspend: true`` deletes the active pods and sets ``Suspended`` (reason
  ``JobSuspended``; event ``Suspended`` "Job suspended"); resuming sets it False
  (``JobResumed``, event ``Resumed`` "Job resumed") and restarts ``startTime``.

Pods whose Job is gone or finished lose their finalizer (syncOrphanPod). Events:
``SuccessfulCreate`` "Created pod: NAME", ``FailedCreate`` "Error creating: ...",
``SuccessfulDelete`` "Deleted pod: NAME", ``FailedDelete`` "Error deleting: ...".
``successPolicy`` rules (Indexed Jobs) add ``SuccessCriteriaMet`` with reason
``SuccessPolicy`` ("Matched rules at index N") and the remaining pods are deleted.
``backoffLimitPerIndex`` (Indexed Jobs): each pod carries
``batch.kubernetes.io/job-index-failure-count`` (and ``...-ignored-failure-count``), an
index fails after that many counted failures (or a ``FailIndex`` rule), its back-off is
its own, ``status.failedIndexes`` lists the failed ones, and the Job fails with
``MaxFailedIndexesExceeded`` past ``maxFailedIndexes`` or ``FailedIndexes`` once every
index succeeded or failed. Not implemented: the 1 s sync batching, adoption adding the
tracking finalizer.
"""

from __future__ import annotations

import asyncio
import copy
import logging
import re
from dataclasses import dataclass, field
from typing import Any

from controlplane import apitime
from controlplane.api.resources import PODS, get
from controlplane.client.informer import key_of
from controlplane.client.rest import ApiError
from controlplane.log import event
from controlplane.selectors import LabelSelector, selector_from_dict

from .controller import Controller, ControllerContext
from .controller_utils import (
    SLOW_START_INITIAL_BATCH_SIZE,
    controlled_pods,
    controller_ref,
    deletion_rank_key,
    is_pod_active,
    is_pod_ready,
    meta,
    new_controller_ref,
    pod_from_template,
    pods_by_owner,
    resolve_controller_ref,
    slow_start_batch,
)
from .expectations import Expectations
from .jobutil import is_finished
from .ref_manager import RefManager

log = logging.getLogger("controller-manager")

JOBS = get("jobs", "batch")
COMPONENT = "job-controller"
#: the finalizer every Job pod carries until the controller has counted it (batch/types.go)
JOB_TRACKING_FINALIZER = "batch.kubernetes.io/job-tracking"
#: annotation and label with an Indexed Job pod's index
JOB_COMPLETION_INDEX = "batch.kubernetes.io/job-completion-index"
JOB_COMPLETION_INDEX_ENV = "JOB_COMPLETION_INDEX"
#: failures (counted / ignored by the podFailurePolicy) of an index before this pod (backoffLimitPerIndex)
JOB_INDEX_FAILURE_COUNT = "batch.kubernetes.io/job-index-failure-count"
JOB_INDEX_IGNORED_FAILURE_COUNT = "batch.kubernetes.io/job-index-ignored-failure-count"
#: spec.managedBy of Jobs this controller syncs (JobControllerName)
JOB_CONTROLLER_NAME = "kubernetes.io/job-controller"
#: back-off before recreating failed pods, seconds (DefaultJobPodFailureBackOff / Max...)
DEFAULT_POD_FAILURE_BACKOFF = 10.0
MAX_POD_FAILURE_BACKOFF = 600.0
#: MaxUncountedPods / MaxPodCreateDeletePerSync
MAX_UNCOUNTED_PODS = 500
MAX_POD_CREATE_DELETE_PER_SYNC = 500
ORPHAN_PREFIX = "orphan-pod:"


# --------------------------------------------------------------------------- helpers

def _spec(job: dict) -> dict:
    return job.get("spec") or {}


def _int(v: Any, default: int) -> int:
    return default if v is None else int(v)


def parallelism(job: dict) -> int:
    """``spec.parallelism`` (default 1)."""
    return _int(_spec(job).get("parallelism"), 1)


def completions(job: dict) -> int | None:
    """``spec.completions``; None means "any success completes the Job"."""
    c = _spec(job).get("completions")
    return None if c is None else int(c)


def backoff_limit(job: dict) -> int:
    """``spec.backoffLimit`` (default 6)."""
    return _int(_spec(job).get("backoffLimit"), 6)


def is_indexed(job: dict) -> bool:
    """completionMode Indexed (``pkg/controller/job/indexed_job_utils.go`` isIndexedJob)."""
    return _spec(job).get("completionMode") == "Indexed"


def is_suspended(job: dict) -> bool:
    """``spec.suspend`` is true (jobSuspended)."""
    return _spec(job).get("suspend") is True


def find_condition(job: dict, ctype: str) -> dict | None:
    """The Job condition of type ``ctype``, or None (getCondition / findConditionByType)."""
    for c in (job.get("status") or {}).get("conditions") or []:
        if c.get("type") == ctype:
            return c
    return None


def new_condition(ctype: str, status: str, reason: str, message: str, now: float) -> dict:
    """A JobCondition (reason/message omitted when empty, as omitempty)."""
    t = apitime.format_time(now)
    c = {"type": ctype, "status": status, "lastProbeTime": t, "lastTransitionTime": t}
    if reason:
        c["reason"] = reason
    if message:
        c["message"] = message
    return c


def ensure_condition(conds: list[dict], ctype: str, status: str, reason: str, message: str,
                     now: float) -> bool:
    """ensureJobConditionStatus: update the condition of ``ctype`` if it differs, append
    it when absent and True; returns whether ``conds`` changed."""
    for i, c in enumerate(conds):
        if c.get("type") == ctype:
            if c.get("status") != status or c.get("reason", "") != reason or c.get("message", "") != message:
                conds[i] = new_condition(ctype, status, reason, message, now)
                return True
            return False
    if status == "True":
        conds.append(new_condition(ctype, status, reason, message, now))
        return True
    return False


def has_finalizer(pod: dict) -> bool:
    """The pod carries the ``batch.kubernetes.io/job-tracking`` finalizer (hasJobTrackingFinalizer)."""
    return JOB_TRACKING_FINALIZER in (meta(pod).get("finalizers") or [])


def completion_index(pod: dict) -> int:
    """The pod's index from its annotation; -1 when absent or invalid (getCompletionIndex)."""
    v = (meta(pod).get("annotations") or {}).get(JOB_COMPLETION_INDEX)
    if v is None or not re.fullmatch(r"[0-9]+", str(v)):
        return -1
    return int(v)


def only_replace_failed_pods(job: dict) -> bool:
    """podReplacementPolicy Failed, or a podFailurePolicy (onlyReplaceFailedPods)."""
    spec = _spec(job)
    return spec.get("podReplacementPolicy") == "Failed" or spec.get("podFailurePolicy") is not None


def is_pod_failed(pod: dict, job: dict) -> bool:
    """Failed phase; or, unless only failed pods are replaced, deleted before succeeding."""
    phase = (pod.get("status") or {}).get("phase")
    if phase == "Failed":
        return True
    if only_replace_failed_pods(job):
        return False
    return bool(meta(pod).get("deletionTimestamp")) and phase != "Succeeded"


def is_terminating(pod: dict) -> bool:
    """Being deleted and not finished (controller.CountTerminatingPods)."""
    return bool(meta(pod).get("deletionTimestamp")) and \
        (pod.get("status") or {}).get("phase") not in ("Succeeded", "Failed")


def parse_indexes(text: str | None, completions: int) -> set[int]:
    """``status.completedIndexes`` ("1,3-5") as a set, indexes >= ``completions`` dropped."""
    out: set[int] = set()
    for part in (text or "").split(","):
        part = part.strip()
        if not part:
            continue
        lo, _, hi = part.partition("-")
        try:
            a, b = int(lo), int(hi or lo)
        except ValueError:
            continue
        out.update(i for i in range(a, b + 1) if i < completions)
    return out


def _interval(first: int, last: int) -> str:
    if last == first:
        return str(first)
    return f"{first},{last}" if last == first + 1 else f"{first}-{last}"


def format_indexes(indexes: set[int]) -> str:
    """Intervals as orderedIntervals.String writes them: ``{0,1,2,4}`` → ``"0-2,4"``, a run of
    two as two numbers (``{0,1}`` → ``"0,1"``)."""
    parts: list[str] = []
    run: list[int] = []
    for i in sorted(indexes):
        if run and i == run[-1] + 1:
            run.append(i)
            continue
        if run:
            parts.append(_interval(run[0], run[-1]))
        run = [i]
    if run:
        parts.append(_interval(run[0], run[-1]))
    return ",".join(parts)


def finish_time(pod: dict, now: float) -> float:
    """When a pod finished: the latest container finishedAt, else its deletionTimestamp,
    else ``now`` (backoff_utils.go getFinishedTime)."""
    st = pod.get("status") or {}
    times = [apitime.time_or_none(((cs.get("state") or {}).get("terminated") or {}).get("finishedAt"))
             for cs in (st.get("initContainerStatuses") or []) + (st.get("containerStatuses") or [])]
    valid = [t for t in times if t is not None]
    if valid:
        return max(valid)
    dt = apitime.time_or_none(meta(pod).get("deletionTimestamp"))
    return dt if dt is not None else now


# --------------------------------------------------------------------------- pod failure policy

def _exit_code_matches(rule: dict, pod: dict) -> dict | None:
    """The first terminated container (exit code != 0) whose code the ``onExitCodes``
    requirement selects (pod_failure_policy.go matchOnExitCodes)."""
    req = rule.get("onExitCodes") or {}
    values = {int(v) for v in req.get("values") or []}
    st = pod.get("status") or {}
    for cs in (st.get("containerStatuses") or []) + (st.get("initContainerStatuses") or []):
        if req.get("containerName") and cs.get("name") != req["containerName"]:
            continue
        term = (cs.get("state") or {}).get("terminated")
        if not term:
            continue
        code = int(term.get("exitCode") or 0)
        if code == 0:
            continue
        if (req.get("operator") == "In") == (code in values):
            return {"name": cs.get("name"), "exitCode": code}
    return None


def _pod_condition_matches(rule: dict, pod: dict) -> str | None:
    for pattern in rule.get("onPodConditions") or []:
        for c in (pod.get("status") or {}).get("conditions") or []:
            if c.get("type") == pattern.get("type") and c.get("status") == (pattern.get("status") or "True"):
                return str(c.get("type"))
    return None


def match_pod_failure_policy(policy: dict, pod: dict) -> tuple[str | None, bool, str | None]:
    """``(job failure message or None, count the failure, matched action or None)`` for a
    failed pod (pod_failure_policy.go matchPodFailurePolicy; FailIndex needs
    backoffLimitPerIndex, so here it never matches)."""
    md = meta(pod)
    for i, rule in enumerate(policy.get("rules") or []):
        action = rule.get("action")
        if rule.get("onExitCodes") is not None:
            cs = _exit_code_matches(rule, pod)
            if cs is None:
                continue
            what = (f"Container {cs['name']} for pod {md.get('namespace')}/{md.get('name')} failed with "
                    f"exit code {cs['exitCode']} matching {action} rule at index {i}")
        elif rule.get("onPodConditions") is not None:
            ctype = _pod_condition_matches(rule, pod)
            if ctype is None:
                continue
            what = f"Pod {md.get('namespace')}/{md.get('name')} has condition {ctype} matching {action} rule at index {i}"
        else:
            continue
        if action == "Ignore":
            return None, False, action
        if action == "Count":
            return None, True, action
        if action == "FailJob":
            return what, True, action
        if action == "FailIndex":
            return None, True, action
    return None, True, None


# --------------------------------------------------------------------------- success policy

def match_success_policy(policy: dict | None, completions: int, succeeded: set[int]) -> str | None:
    """"Matched rules at index N" for the first rule of ``successPolicy`` the succeeded
    indexes meet, else None (success_policy.go matchSuccessPolicy): a rule with
    ``succeededIndexes`` needs all of them, or ``succeededCount`` of them; a rule with only
    ``succeededCount`` needs that many succeeded indexes."""
    if not policy or not succeeded:
        return None
    for i, rule in enumerate(policy.get("rules") or []):
        count = rule.get("succeededCount")
        if rule.get("succeededIndexes") is not None:
            required = parse_indexes(rule["succeededIndexes"], completions)
            if not required:
                continue
            contains = len(required & succeeded)
            if contains == len(required) or (count is not None and contains >= int(count)):
                return f"Matched rules at index {i}"
        elif count is not None and len(succeeded) >= int(count):
            return f"Matched rules at index {i}"
    return None


# --------------------------------------------------------------------------- backoffLimitPerIndex

def has_backoff_limit_per_index(job: dict) -> bool:
    """An Indexed Job with ``spec.backoffLimitPerIndex`` set (hasBackoffLimitPerIndex)."""
    return is_indexed(job) and _spec(job).get("backoffLimitPerIndex") is not None


def _count_annotation(pod: dict, key: str) -> int:
    v = str((meta(pod).get("annotations") or {}).get(key, "0"))
    return int(v) if re.fullmatch(r"[0-9]+", v) and int(v) <= 2**31 - 1 else 0


def is_index_failed(job: dict, pod: dict) -> bool:
    """The pod's failure fails its index: a ``FailIndex`` rule matched, or it is a counted
    failure and the index already failed ``backoffLimitPerIndex`` times (isIndexFailed)."""
    counted = False
    if is_pod_failed(pod, job):
        policy = _spec(job).get("podFailurePolicy")
        if policy is not None:
            _, counted, action = match_pod_failure_policy(policy, pod)
            if action == "FailIndex":
                return True
        else:
            counted = True
    return counted and _count_annotation(pod, JOB_INDEX_FAILURE_COUNT) >= int(_spec(job)["backoffLimitPerIndex"])


def new_index_failure_counts(job: dict, replaced: dict | None) -> tuple[int, int]:
    """The failure / ignored-failure counts of a pod replacing ``replaced`` (getNewIndexFailureCounts)."""
    if replaced is None:
        return 0, 0
    failures = _count_annotation(replaced, JOB_INDEX_FAILURE_COUNT)
    ignored = _count_annotation(replaced, JOB_INDEX_IGNORED_FAILURE_COUNT)
    policy = _spec(job).get("podFailurePolicy")
    if policy is not None and not match_pod_failure_policy(policy, replaced)[1]:
        ignored += 1
    else:
        failures += 1
    return failures, ignored


def remaining_time_per_index(replaced: dict | None, now: float) -> float:
    """getRemainingTimePerIndex: the back-off of an index from its last failed pod."""
    if replaced is None:
        return 0.0
    count = _count_annotation(replaced, JOB_INDEX_FAILURE_COUNT) + \
        _count_annotation(replaced, JOB_INDEX_IGNORED_FAILURE_COUNT) + 1
    return BackoffRecord(count, finish_time(replaced, now)).remaining(now)


# --------------------------------------------------------------------------- backoff

@dataclass
class BackoffRecord:
    """Failures since the last success and when the last one happened (backoffRecord)."""

    failures_after_last_success: int = 0
    last_failure_time: float | None = None

    def remaining(self, now: float, base: float = DEFAULT_POD_FAILURE_BACKOFF,
                  cap: float = MAX_POD_FAILURE_BACKOFF) -> float:
        """Seconds to wait before creating pods (getRemainingTime): ``base * 2**(failures-1)``
        capped at ``cap``, minus the time since the last failure; 0 without failures."""
        if self.failures_after_last_success == 0 or self.last_failure_time is None:
            return 0.0
        backoff = min(base * 2 ** (self.failures_after_last_success - 1), cap)
        elapsed = now - self.last_failure_time
        if elapsed < 0:
            return backoff
        return max(backoff - elapsed, 0.0)


def new_backoff_record(old: BackoffRecord | None, succeeded: list[dict], failed: list[dict],
                       now: float) -> BackoffRecord:
    """backoffStore.newBackoffRecord: failures add up until a success; a success keeps
    only the failures that finished after it."""
    rec = old or BackoffRecord()
    if not succeeded:
        if not failed:
            return rec
        last = max(finish_time(p, now) for p in failed)
        prev = rec.last_failure_time
        return BackoffRecord(rec.failures_after_last_success + len(failed),
                             last if prev is None else max(prev, last))
    last_success = max(finish_time(p, now) for p in succeeded)
    after = [finish_time(p, now) for p in failed if finish_time(p, now) > last_success]
    return BackoffRecord(len(after), max(after) if after else None)


# --------------------------------------------------------------------------- the controller

@dataclass
class SyncContext:
    """What one sync knows of its Job (syncJobCtx)."""

    job: dict
    pods: list[dict]
    active_pods: list[dict]
    ready: int
    uncounted_succeeded: set[str]
    uncounted_failed: set[str]
    expected_rm_finalizers: set[str]
    terminating: int = 0
    succeeded: int = 0
    failed: int = 0
    finished_condition: dict | None = None
    backoff: BackoffRecord = field(default_factory=BackoffRecord)
    prev_succeeded_indexes: set[int] = field(default_factory=set)
    succeeded_indexes: set[int] = field(default_factory=set)
    #: backoffLimitPerIndex only: failed indexes, and per index the failed pod kept (its
    #: finalizer stays) until its replacement carries its failure count
    failed_indexes: set[int] | None = None
    delayed_deletion: dict[int, dict] = field(default_factory=dict)


def wire_status(status: dict) -> dict:
    """The status as the Go type encodes it: ``active``/``succeeded``/``failed`` and
    ``completedIndexes`` omitted when zero/empty, ``uncountedTerminatedPods`` lists
    omitted when empty; ``ready`` and ``terminating`` are pointers, so 0 is written."""
    out = dict(status)
    for k in ("active", "succeeded", "failed"):
        if not out.get(k):
            out.pop(k, None)
    if not out.get("completedIndexes"):
        out.pop("completedIndexes", None)
    unc = out.get("uncountedTerminatedPods") or {}
    out["uncountedTerminatedPods"] = {k: list(v) for k, v in unc.items() if v}
    if not out.get("conditions"):
        out.pop("conditions", None)
    return out


class JobController(Controller):
    """The Job controller (see the module docstring). Queue keys: ``namespace/name`` of a
    Job, or ``orphan-pod:namespace/name`` of a pod whose finalizer may have to go."""

    name = "job"
    workers = 5

    def __init__(self, ctx: ControllerContext) -> None:
        super().__init__(ctx)
        self.recorder = ctx.recorder(COMPONENT)
        self.jobs = ctx.informers.informer(JOBS)
        self.pods = ctx.informers.informer(PODS)
        self.expectations = Expectations()
        #: job key -> uids of pods whose finalizer removal is not yet seen (finalizerExpectations)
        self.finalizer_expectations: dict[str, set[str]] = {}
        #: job key -> BackoffRecord (podBackoffStore)
        self.backoff: dict[str, BackoffRecord] = {}
        #: (key, seconds) of every delayed re-sync asked for (tests read it)
        self.delays: list[tuple[str, float]] = []
        self.jobs.add_handlers(self._job_added, self._job_updated, self._job_deleted)
        self.pods.add_handlers(self._pod_added, self._pod_updated, self._pod_deleted)

    def enqueue_after(self, key: str, seconds: float) -> None:
        self.delays.append((key, seconds))
        self.queue.add_after(key, seconds)

    def _now(self) -> float:
        return self.ctx.clock()

    # -- job events ------------------------------------------------------------
    def _job_added(self, job: dict) -> None:
        self.ctx.tracer.emit(5, "ADDED Job received on watch", job, detail=f"{COMPONENT}: completions "
                             f"{completions(job)}, parallelism {parallelism(job)}", kind="Job")
        self.enqueue(key_of(job))

    def _job_updated(self, old: dict, new: dict) -> None:
        self.enqueue(key_of(new))

    def _job_deleted(self, job: dict) -> None:
        key = key_of(job)
        self.enqueue(key)
        uid = meta(job).get("uid")
        for k, p in controlled_pods(self.pods, uid):
            if has_finalizer(p):
                self.enqueue(ORPHAN_PREFIX + k)

    # -- pod events ------------------------------------------------------------
    def _job_of(self, pod: dict) -> str | None:
        """Key of the pod's controlling Job when it is in the cache with that uid."""
        return resolve_controller_ref(pod, "Job", self.jobs.store)

    def _maybe_orphan(self, pod: dict, key: str | None) -> None:
        if has_finalizer(pod) and (key is None or is_finished(self.jobs.store.get(key) or {})):
            self.enqueue(ORPHAN_PREFIX + key_of(pod))

    def _pod_added(self, pod: dict) -> None:
        key = self._job_of(pod)
        if meta(pod).get("deletionTimestamp"):
            if key:
                self.expectations.deletion_observed(key, key_of(pod))
        elif key:
            self.expectations.creation_observed(key)
        if key:
            self.enqueue(key)
        elif controller_ref(pod) is None:
            self._enqueue_matching(pod)
        self._maybe_orphan(pod, key)

    def _pod_updated(self, old: dict, new: dict) -> None:
        if meta(old).get("resourceVersion") == meta(new).get("resourceVersion") and old is not new:
            return
        key = self._job_of(new)
        if key and has_finalizer(old) and not has_finalizer(new):
            self.finalizer_expectations.get(key, set()).discard(meta(new).get("uid", ""))
        if key and meta(new).get("deletionTimestamp") and not meta(old).get("deletionTimestamp"):
            self.expectations.deletion_observed(key, key_of(new))
        old_key = self._job_of(old)
        if old_key and old_key != key:
            self.enqueue(old_key)
        if key:
            self.enqueue(key)
        elif controller_ref(new) is None:
            self._enqueue_matching(new)
        self._maybe_orphan(new, key)

    def _pod_deleted(self, pod: dict) -> None:
        key = self._job_of(pod)
        if key:
            self.expectations.deletion_observed(key, key_of(pod))
            self.finalizer_expectations.get(key, set()).discard(meta(pod).get("uid", ""))
            self.enqueue(key)

    def _enqueue_matching(self, pod: dict) -> None:
        ns, labels = meta(pod).get("namespace"), meta(pod).get("labels") or {}
        for job in list(self.jobs.store.values()):
            if meta(job).get("namespace") != ns:
                continue
            try:
                if selector_from_dict(_spec(job).get("selector")).matches(labels):
                    self.enqueue(key_of(job))
            except ValueError:
                continue

    # -- sync --------------------------------------------------------------------
    async def sync(self, key: str) -> None:
        """Reconcile one Job (syncJob) or remove an orphan pod's finalizer (syncOrphanPod)."""
        if key.startswith(ORPHAN_PREFIX):
            await self._sync_orphan(key[len(ORPHAN_PREFIX):])
            return
        shared = self.jobs.store.get(key)
        if shared is None:
            self.expectations.delete(key)
            self.finalizer_expectations.pop(key, None)
            self.backoff.pop(key, None)
            return
        managed_by = _spec(shared).get("managedBy")
        if managed_by is not None and managed_by != JOB_CONTROLLER_NAME:
            return
        job = copy.deepcopy(shared)
        job.setdefault("kind", "Job")
        job.setdefault("apiVersion", JOBS.api_version)
        if is_finished(job):
            self.backoff.pop(key, None)
            return
        mode = _spec(job).get("completionMode")
        if mode not in (None, "NonIndexed", "Indexed"):
            self.recorder.event(job, "Warning", "UnknownCompletionMode",
                                "Skipped Job sync because completion mode is unknown")
            return
        status = job.setdefault("status", {})
        unc = status.get("uncountedTerminatedPods") or {}
        status["uncountedTerminatedPods"] = {"succeeded": list(unc.get("succeeded") or []),
                                             "failed": list(unc.get("failed") or [])}
        satisfied = self.expectations.satisfied(key)
        pods = await self._pods_for_job(job)
        active_pods = [p for p in pods if is_pod_active(p)]
        jc = SyncContext(job=job, pods=pods, active_pods=active_pods,
                         ready=sum(1 for p in active_pods if is_pod_ready(p)),
                         uncounted_succeeded=set(unc.get("succeeded") or []),
                         uncounted_failed=set(unc.get("failed") or []),
                         expected_rm_finalizers=set(self.finalizer_expectations.get(key, set())))
        jc.terminating = sum(1 for p in pods if is_terminating(p))
        active = len(active_pods)
        new_succeeded, new_failed = self._new_finished_pods(jc)
        policy = _spec(job).get("podFailurePolicy")
        counted_failed = [p for p in new_failed if policy is None or match_pod_failure_policy(policy, p)[1]]
        jc.succeeded = int(status.get("succeeded") or 0) + len(new_succeeded) + len(jc.uncounted_succeeded)
        jc.failed = int(status.get("failed") or 0) + len(counted_failed) + len(jc.uncounted_failed)
        now = self._now()
        if not status.get("startTime") and not is_suspended(job):
            status["startTime"] = apitime.format_time(now)
        jc.backoff = new_backoff_record(self.backoff.get(key), new_succeeded, new_failed, now)

        manage_err: Exception | None = None
        scm = find_condition(job, "SuccessCriteriaMet")
        jc.finished_condition = copy.deepcopy(scm) if scm and scm.get("status") == "True" else None
        if jc.finished_condition is None:
            ft = find_condition(job, "FailureTarget")
            if ft is not None and ft.get("status") == "True":
                jc.finished_condition = new_condition("Failed", "True", ft.get("reason", ""),
                                                      ft.get("message", ""), now)
            elif (msg := self._fail_job_message(job, pods)) is not None:
                jc.finished_condition = new_condition("FailureTarget", "True", "PodFailurePolicy", msg, now)
        if jc.finished_condition is None:
            if jc.failed > backoff_limit(job) or self._past_backoff_limit_on_failure(job, pods):
                jc.finished_condition = new_condition("FailureTarget", "True", "BackoffLimitExceeded",
                                                      "Job has reached the specified backoff limit", now)
            elif self._past_active_deadline(job, now):
                jc.finished_condition = new_condition("FailureTarget", "True", "DeadlineExceeded",
                                                      "Job was active longer than specified deadline", now)
            elif _spec(job).get("activeDeadlineSeconds") is not None and not is_suspended(job):
                started = apitime.time_or_none(status.get("startTime")) or now
                self.enqueue_after(key, float(_spec(job)["activeDeadlineSeconds"]) - (now - started))
        if is_indexed(job):
            n = completions(job) or 0
            jc.prev_succeeded_indexes = parse_indexes(status.get("completedIndexes"), n)
            jc.succeeded_indexes = set(jc.prev_succeeded_indexes) | {
                ix for p in pods if (p.get("status") or {}).get("phase") == "Succeeded"
                for ix in (completion_index(p),) if 0 <= ix < n}
            jc.succeeded = len(jc.succeeded_indexes)
            if has_backoff_limit_per_index(job):
                self._per_index_state(jc, n, now)
            if jc.finished_condition is None:
                msg = match_success_policy(_spec(job).get("successPolicy"), n, jc.succeeded_indexes)
                if msg is not None:
                    jc.finished_condition = new_condition("SuccessCriteriaMet", "True", "SuccessPolicy", msg, now)

        suspend_changed = False
        if jc.finished_condition is not None:
            deleted_ready, deleted, manage_err = await self._delete_active_pods(job, jc.active_pods)
            if deleted != active or not satisfied:
                jc.finished_condition = None
            active -= deleted
            jc.terminating += deleted
            jc.ready -= deleted_ready
        else:
            manage_called = False
            if satisfied and not meta(job).get("deletionTimestamp"):
                active, manage_err = await self._manage_job(key, job, jc)
                manage_called = True
            want = completions(job)
            complete = (jc.succeeded > 0 and active == 0) if want is None else \
                (jc.succeeded >= want and active == 0)
            if complete:
                jc.finished_condition = new_condition("SuccessCriteriaMet", "True", "CompletionsReached",
                                                      "Reached expected number of succeeded pods", now)
            elif manage_called:
                conds = status.setdefault("conditions", [])
                if is_suspended(job):
                    if ensure_condition(conds, "Suspended", "True", "JobSuspended", "Job suspended", now):
                        suspend_changed = True
                        self.recorder.event(job, "Normal", "Suspended", "Job suspended")
                elif ensure_condition(conds, "Suspended", "False", "JobResumed", "Job resumed", now):
                    suspend_changed = True
                    self.recorder.event(job, "Normal", "Resumed", "Job resumed")
                    status["startTime"] = apitime.format_time(now)

        needs_update = suspend_changed or active != int(status.get("active") or 0) or \
            status.get("ready") != jc.ready or status.get("terminating") != jc.terminating
        status["active"] = active
        status["ready"] = jc.ready
        status["terminating"] = jc.terminating
        await self._track_status_and_remove_finalizers(key, jc, needs_update)
        if manage_err is not None:
            raise manage_err

    def _per_index_state(self, jc: SyncContext, n: int, now: float) -> None:
        """calculateFailedIndexes, the MaxFailedIndexesExceeded / FailedIndexes failures and
        getPodsWithDelayedDeletionPerIndex."""
        job = jc.job
        failed = parse_indexes((job.get("status") or {}).get("failedIndexes"), n)
        failed |= {ix for p in jc.pods if is_index_failed(job, p) for ix in (completion_index(p),) if 0 <= ix < n}
        jc.failed_indexes = failed
        if jc.finished_condition is None:
            mfi = _spec(job).get("maxFailedIndexes")
            if mfi is not None and len(failed) > int(mfi):
                jc.finished_condition = new_condition(
                    "FailureTarget", "True", "MaxFailedIndexesExceeded",
                    "Job has exceeded the specified maximal number of failed indexes", now)
            elif failed and len(failed) + len(jc.succeeded_indexes) >= n:
                jc.finished_condition = new_condition("FailureTarget", "True", "FailedIndexes",
                                                      "Job has failed indexes", now)
        active = {completion_index(p) for p in jc.active_pods}
        delayed: dict[int, dict] = {}
        for p in jc.pods:
            uid = meta(p).get("uid", "")
            if not has_finalizer(p) or uid in jc.expected_rm_finalizers or not is_pod_failed(p, job):
                continue
            ix = completion_index(p)
            if not 0 <= ix < n or ix in jc.succeeded_indexes or ix in failed or ix in active:
                continue
            last = delayed.get(ix)
            absolute = _count_annotation(p, JOB_INDEX_FAILURE_COUNT) + _count_annotation(p, JOB_INDEX_IGNORED_FAILURE_COUNT)
            if last is None or (_count_annotation(last, JOB_INDEX_FAILURE_COUNT) +
                                _count_annotation(last, JOB_INDEX_IGNORED_FAILURE_COUNT) <= absolute and
                                finish_time(p, now) >= finish_time(last, now)):
                delayed[ix] = p
        jc.delayed_deletion = delayed

    async def _pods_for_job(self, job: dict) -> list[dict]:
        """The Job's pods, finished ones included, after adoption/release (getPodsForJob)."""
        try:
            selector: LabelSelector = selector_from_dict(_spec(job).get("selector"))
        except ValueError:
            return []
        ns, uid = meta(job).get("namespace"), meta(job).get("uid")
        cands = [p for _, p in pods_by_owner(self.pods, uid, ns) if meta(p).get("namespace") == ns]
        owned, others = [], []
        for p in cands:
            ref = controller_ref(p)
            if ref is not None and ref.get("uid") == uid and selector.matches(meta(p).get("labels") or {}):
                owned.append(p)
            elif ref is None or ref.get("uid") == uid:
                others.append(p)
        if others:
            rm = RefManager(self.client, job, JOBS.api_version, "Job", selector, PODS)
            owned.extend(await rm.claim(others))
        return owned

    def _new_finished_pods(self, jc: SyncContext) -> tuple[list[dict], list[dict]]:
        """getNewFinishedPods: finished pods with the finalizer not yet in the uncounted lists."""
        succeeded, failed = [], []
        n = completions(jc.job) or 0
        for p in jc.pods:
            uid = meta(p).get("uid", "")
            if not has_finalizer(p) or uid in jc.expected_rm_finalizers:
                continue
            if is_indexed(jc.job) and not 0 <= completion_index(p) < n:
                continue
            if (p.get("status") or {}).get("phase") == "Succeeded" and uid not in jc.uncounted_succeeded:
                succeeded.append(p)
            elif is_pod_failed(p, jc.job) and uid not in jc.uncounted_failed:
                failed.append(p)
        return succeeded, failed

    @staticmethod
    def _fail_job_message(job: dict, pods: list[dict]) -> str | None:
        policy = _spec(job).get("podFailurePolicy")
        if policy is None:
            return None
        for p in pods:
            if is_pod_failed(p, job):
                msg = match_pod_failure_policy(policy, p)[0]
                if msg is not None:
                    return msg
        return None

    @staticmethod
    def _past_backoff_limit_on_failure(job: dict, pods: list[dict]) -> bool:
        """Container restarts of running/pending pods reach backoffLimit under
        ``restartPolicy: OnFailure`` (pastBackoffLimitOnFailure)."""
        if ((_spec(job).get("template") or {}).get("spec") or {}).get("restartPolicy") != "OnFailure":
            return False
        total = 0
        for p in pods:
            st = p.get("status") or {}
            if st.get("phase") in ("Running", "Pending"):
                total += sum(int(cs.get("restartCount") or 0) for cs in
                             (st.get("initContainerStatuses") or []) + (st.get("containerStatuses") or []))
        limit = backoff_limit(job)
        return total > 0 if limit == 0 else total >= limit

    @staticmethod
    def _past_active_deadline(job: dict, now: float) -> bool:
        ads = _spec(job).get("activeDeadlineSeconds")
        started = apitime.time_or_none((job.get("status") or {}).get("startTime"))
        if ads is None or started is None or is_suspended(job):
            return False
        return now - started >= float(ads)

    # -- pods ------------------------------------------------------------------------
    async def _manage_job(self, key: str, job: dict, jc: SyncContext) -> tuple[int, Exception | None]:
        """Create or delete pods toward the wanted number of active ones (manageJob);
        returns the new active count and the first error."""
        active = len(jc.active_pods)
        if is_suspended(job):
            victims = self._active_pods_for_removal(job, jc.active_pods, active)
            self.expectations.expect_deletions(key, [key_of(p) for p in victims])
            removed_ready, removed, err = await self._delete_job_pods(key, job, victims)
            jc.terminating += removed
            jc.ready -= removed_ready
            return active - removed, err
        want_c = completions(job)
        if want_c is None:
            want = active if jc.succeeded > 0 else parallelism(job)
        else:
            want = max(min(want_c - jc.succeeded, parallelism(job)), 0)
        rm_at_least = max(active - want, 0)
        victims = self._active_pods_for_removal(job, jc.active_pods, rm_at_least)[:MAX_POD_CREATE_DELETE_PER_SYNC]
        if victims:
            self.expectations.expect_deletions(key, [key_of(p) for p in victims])
            removed_ready, removed, err = await self._delete_job_pods(key, job, victims)
            jc.terminating += removed
            jc.ready -= removed_ready
            return active - removed, err
        terminating = jc.terminating if only_replace_failed_pods(job) else 0
        diff = want - terminating - active
        if diff <= 0:
            return active, None
        per_index = has_backoff_limit_per_index(job)
        remaining = 0.0 if per_index else jc.backoff.remaining(self._now())
        if remaining > 0:
            self.enqueue_after(key, remaining)
            return active, None
        diff = min(diff, MAX_POD_CREATE_DELETE_PER_SYNC)
        indexes: list[int] = []
        if is_indexed(job):
            indexes = self._first_pending_indexes(jc, diff, want_c or 0)
            if per_index:
                now = self._now()
                waits = {ix: remaining_time_per_index(jc.delayed_deletion.get(ix), now) for ix in indexes}
                ready_now = [ix for ix in indexes if waits[ix] <= 0]
                if indexes and not ready_now:
                    self.enqueue_after(key, min(waits.values()))
                    return active, None
                indexes = ready_now
            diff = len(indexes)
            if diff == 0:
                return active, None
        self.expectations.expect_creations(key, diff)
        template = copy.deepcopy(_spec(job).get("template") or {})
        if is_indexed(job):
            add_completion_index_env(template)
        tmd = template.setdefault("metadata", {})
        fins = list(tmd.get("finalizers") or [])
        if JOB_TRACKING_FINALIZER not in fins:
            fins.append(JOB_TRACKING_FINALIZER)
        tmd["finalizers"] = fins
        ref = new_controller_ref(job, JOBS.api_version, "Job")
        jname = meta(job).get("name")
        event(log, "job.create", key=key, need=want, creating=diff)

        async def create_one() -> None:
            pod = pod_from_template(template, job, ref)
            if indexes:
                ix = indexes.pop(0)
                md = pod["metadata"]
                md["annotations"] = {**(md.get("annotations") or {}), JOB_COMPLETION_INDEX: str(ix)}
                md["labels"] = {**(md.get("labels") or {}), JOB_COMPLETION_INDEX: str(ix)}
                md["generateName"] = f"{jname}-{ix}-"
                pod["spec"]["hostname"] = f"{jname}-{ix}"
                if per_index:
                    failures, ignored = new_index_failure_counts(job, jc.delayed_deletion.get(ix))
                    md["annotations"][JOB_INDEX_FAILURE_COUNT] = str(failures)
                    if ignored:
                        md["annotations"][JOB_INDEX_IGNORED_FAILURE_COUNT] = str(ignored)
            try:
                created = await self.client.create(PODS, pod, meta(job).get("namespace"))
            except ApiError as e:
                if e.code == 403 and "because it is being terminated" in e.message:
                    return
                self.recorder.event(job, "Warning", "FailedCreate", f"Error creating: {e.message}")
                raise
            name = meta(created).get("name")
            self.recorder.event(job, "Normal", "SuccessfulCreate", f"Created pod: {name}")
            self.ctx.tracer.emit(6, f"{COMPONENT} created pod {name}", created,
                                 detail=f"Job {jname} wants {want}", kind="Pod")

        successes, err = await slow_start_batch(diff, SLOW_START_INITIAL_BATCH_SIZE, create_one)
        for _ in range(diff - successes):
            self.expectations.creation_observed(key)
        return active + successes, err

    @staticmethod
    def _first_pending_indexes(jc: SyncContext, count: int, n: int) -> list[int]:
        """The lowest indexes neither succeeded nor held by an active pod — nor by a terminating
        one when only failed pods are replaced (firstPendingIndexes)."""
        taken = set(jc.succeeded_indexes) | {completion_index(p) for p in jc.active_pods} | \
            (jc.failed_indexes or set())
        if only_replace_failed_pods(jc.job):
            taken |= {completion_index(p) for p in jc.pods if is_terminating(p)}
        return [i for i in range(n) if i not in taken][:count]

    def _active_pods_for_removal(self, job: dict, pods: list[dict], rm_at_least: int) -> list[dict]:
        """Pods to delete: for an Indexed Job first those with an invalid or repeated index,
        then by the ActivePods order (not-ready, unscheduled, pending first) —
        activePodsForRemoval."""
        now = self._now()
        rm: list[dict] = []
        left = list(pods)
        if is_indexed(job):
            n = completions(job) or 0
            by_index: dict[int, list[dict]] = {}
            left = []
            for p in pods:
                ix = completion_index(p)
                if not 0 <= ix < n:
                    rm.append(p)
                else:
                    by_index.setdefault(ix, []).append(p)
            for group in by_index.values():
                group.sort(key=lambda p: deletion_rank_key(p, 0, now))
                rm.extend(group[:-1])
                left.append(group[-1])
        if len(rm) < rm_at_least:
            left.sort(key=lambda p: deletion_rank_key(p, 0, now))
            rm.extend(left[:rm_at_least - len(rm)])
        return rm

    async def _delete_one(self, job: dict, pod: dict) -> None:
        pmd = meta(pod)
        try:
            await self.client.delete(PODS, pmd["name"], pmd.get("namespace"))
        except ApiError as e:
            if e.code == 404:
                raise
            self.recorder.event(job, "Warning", "FailedDelete", f"Error deleting: {e.message}")
            raise
        self.recorder.event(job, "Normal", "SuccessfulDelete", f"Deleted pod: {pmd.get('name')}")

    async def _delete_active_pods(self, job: dict, pods: list[dict]) -> tuple[int, int, Exception | None]:
        """DELETE the active pods, keeping their finalizers (deleteActivePods);
        ``(ready deleted, deleted, first error)``."""
        results = await asyncio.gather(*(self._delete_one(job, p) for p in pods), return_exceptions=True)
        errs = [r for r in results if isinstance(r, Exception) and not (isinstance(r, ApiError) and r.code == 404)]
        ready = sum(1 for p in pods if is_pod_ready(p))
        return ready, len(pods) - len(errs), (errs[0] if errs else None)

    async def _delete_job_pods(self, key: str, job: dict, pods: list[dict]) -> tuple[int, int, Exception | None]:
        """Remove the finalizer, then DELETE (deleteJobPods); a failure lowers the expectations."""
        async def one(p: dict) -> None:
            try:
                if has_finalizer(p):
                    await self._remove_finalizer(p)
                await self._delete_one(job, p)
            except Exception:
                self.expectations.deletion_observed(key, key_of(p))
                raise
        results = await asyncio.gather(*(one(p) for p in pods), return_exceptions=True)
        errs = [r for r in results if isinstance(r, Exception) and not (isinstance(r, ApiError) and r.code == 404)]
        ready = sum(1 for p in pods if is_pod_ready(p))
        return ready, len(pods) - len(errs), (errs[0] if errs else None)

    async def _remove_finalizer(self, pod: dict) -> None:
        """The strategic merge patch removeTrackingFinalizerPatch sends."""
        md = meta(pod)
        await self.client.patch(PODS, md["name"], {"metadata": {
            "$deleteFromPrimitiveList/finalizers": [JOB_TRACKING_FINALIZER]}},
            md.get("namespace"), patch_type="strategic")

    async def _sync_orphan(self, pod_key: str) -> None:
        """syncOrphanPod: drop the finalizer of a pod whose Job is gone or finished."""
        pod = self.pods.store.get(pod_key)
        if pod is None or not has_finalizer(pod):
            return
        key = self._job_of(pod)
        if key is not None and not is_finished(self.jobs.store.get(key) or {}):
            return
        try:
            await self._remove_finalizer(pod)
        except ApiError as e:
            if e.code != 404:
                raise

    # -- status ------------------------------------------------------------------------
    async def _update_status(self, key: str, job: dict) -> dict:
        out = copy.deepcopy(job)
        out["status"] = wire_status(job.get("status") or {})
        new = await self.client.update_status(JOBS, out)
        st = new.setdefault("status", {})
        unc = st.get("uncountedTerminatedPods") or {}
        st["uncountedTerminatedPods"] = {"succeeded": list(unc.get("succeeded") or []),
                                         "failed": list(unc.get("failed") or [])}
        for k in ("active", "succeeded", "failed"):
            st.setdefault(k, 0)
        return new

    @staticmethod
    def _clean_uncounted(status: dict, with_finalizer: set[str]) -> bool:
        """cleanUncountedPodsWithoutFinalizers: count the uncounted pods that lost their finalizer."""
        unc = status["uncountedTerminatedPods"]
        changed = False
        for k in ("succeeded", "failed"):
            keep = [u for u in unc[k] if u in with_finalizer]
            if len(keep) != len(unc[k]):
                status[k] = int(status.get(k) or 0) + len(unc[k]) - len(keep)
                unc[k] = keep
                changed = True
        return changed

    async def _track_status_and_remove_finalizers(self, key: str, jc: SyncContext, needs_flush: bool) -> None:
        """trackJobStatusAndRemoveFinalizers: record finished pods as uncounted, remove their
        finalizers, count them, and add the terminal condition when nothing is left."""
        job = jc.job
        status = job["status"]
        indexed = is_indexed(job)
        pods = sorted(jc.pods, key=completion_index) if indexed else jc.pods
        with_fin = {meta(p).get("uid", "") for p in pods
                    if has_finalizer(p) and meta(p).get("uid") not in jc.expected_rm_finalizers}
        if self._clean_uncounted(status, with_fin):
            needs_flush = True
        unc = status["uncountedTerminatedPods"]
        policy = _spec(job).get("podFailurePolicy")
        n = completions(job) or 0
        to_rm: list[dict] = []
        new_indexes: list[int] = []
        reached_max = False
        fc = jc.finished_condition
        for p in pods:
            uid = meta(p).get("uid", "")
            if not has_finalizer(p) or uid in jc.expected_rm_finalizers:
                continue
            failed = is_pod_failed(p, job)
            if not (meta(job).get("deletionTimestamp") or fc is not None or
                    (p.get("status") or {}).get("phase") == "Succeeded" or failed):
                continue
            delayed = jc.delayed_deletion.get(completion_index(p))
            if not (meta(job).get("deletionTimestamp") or fc is not None or
                    (p.get("status") or {}).get("phase") == "Succeeded") and \
                    delayed is not None and meta(delayed).get("uid") == uid:
                continue                     # kept until its replacement carries its failure count
            to_rm.append(p)
            if (p.get("status") or {}).get("phase") == "Succeeded" and uid not in jc.uncounted_failed:
                if indexed:
                    ix = completion_index(p)
                    if 0 <= ix < n and ix not in jc.prev_succeeded_indexes:
                        new_indexes.append(ix)
                        needs_flush = True
                elif uid not in jc.uncounted_succeeded:
                    needs_flush = True
                    unc["succeeded"].append(uid)
            elif failed or (fc is not None and fc.get("type") != "SuccessCriteriaMet"):
                ix = completion_index(p)
                if uid not in jc.uncounted_failed and (not indexed or 0 <= ix < n):
                    if policy is None or match_pod_failure_policy(policy, p)[1]:
                        needs_flush = True
                        unc["failed"].append(uid)
            if len(new_indexes) + len(unc["succeeded"]) + len(unc["failed"]) >= MAX_UNCOUNTED_PODS:
                reached_max = True
                break
        if indexed:
            jc.succeeded_indexes = jc.succeeded_indexes | set(new_indexes)
            text = format_indexes(jc.succeeded_indexes)
            if text != (status.get("completedIndexes") or ""):
                needs_flush = True
            status["succeeded"] = len(jc.succeeded_indexes)
            status["completedIndexes"] = text
            if jc.failed_indexes is not None:
                failed_text = format_indexes(jc.failed_indexes)
                if status.get("failedIndexes") != failed_text:
                    status["failedIndexes"] = failed_text
                    needs_flush = True
        now = self._now()
        if fc is not None and fc.get("type") == "FailureTarget":
            status.setdefault("conditions", []).append(fc)
            needs_flush = True
            fc = new_condition("Failed", "True", fc.get("reason", ""), fc.get("message", ""), now)
        if fc is not None and fc.get("type") == "SuccessCriteriaMet":
            if not find_condition(job, "SuccessCriteriaMet"):
                status.setdefault("conditions", []).append(fc)
                needs_flush = True
            fc = new_condition("Complete", "True", fc.get("reason", ""), fc.get("message", ""), now)
        jc.finished_condition = fc
        # flushUncountedAndRemoveFinalizers
        if needs_flush:
            job = jc.job = await self._update_status(key, job)
            status = job["status"]
            self.backoff[key] = jc.backoff
            needs_flush = False
        rm_err: Exception | None = None
        if to_rm:
            uids = {meta(p).get("uid", "") for p in to_rm}
            self.finalizer_expectations.setdefault(key, set()).update(uids)
            results = await asyncio.gather(*(self._remove_finalizer(p) for p in to_rm), return_exceptions=True)
            for p, r in zip(to_rm, results):
                uid = meta(p).get("uid", "")
                if isinstance(r, Exception) and not (isinstance(r, ApiError) and r.code == 404):
                    self.finalizer_expectations[key].discard(uid)
                    rm_err = rm_err or r
                    continue
                if isinstance(r, Exception):
                    self.finalizer_expectations[key].discard(uid)
                with_fin.discard(uid)
        if self._clean_uncounted(status, with_fin):
            needs_flush = True
        if rm_err is not None:
            if needs_flush:
                jc.job = await self._update_status(key, job)
            raise rm_err
        finished = not reached_max and self._enact_finished(jc)
        if finished:
            needs_flush = True
        if needs_flush:
            jc.job = await self._update_status(key, jc.job)
            if finished and jc.finished_condition is not None:
                self._record_finished(jc.job, jc.finished_condition)

    def _enact_finished(self, jc: SyncContext) -> bool:
        """enactJobFinished: the terminal condition once nothing is uncounted or terminating."""
        fc = jc.finished_condition
        if fc is None:
            return False
        status = jc.job["status"]
        unc = status.get("uncountedTerminatedPods") or {}
        if unc.get("succeeded") or unc.get("failed") or jc.terminating > 0:
            return False
        conds = status.setdefault("conditions", [])
        ensure_condition(conds, fc["type"], fc["status"], fc.get("reason", ""), fc.get("message", ""), self._now())
        if fc["type"] == "Complete":
            status["completionTime"] = (find_condition(jc.job, "Complete") or {}).get("lastTransitionTime")
        return True

    def _record_finished(self, job: dict, fc: dict) -> None:
        """recordJobFinished's events."""
        if fc["type"] == "Complete":
            want = completions(job)
            if want is not None and int((job.get("status") or {}).get("succeeded") or 0) > want:
                self.recorder.event(job, "Warning", "TooManySucceededPods",
                                    "Too many succeeded pods running after completion count reached")
            self.recorder.event(job, "Normal", "Completed", "Job completed")
        else:
            self.recorder.event(job, "Warning", fc.get("reason", ""), fc.get("message", ""))


def add_completion_index_env(template: dict) -> None:
    """``JOB_COMPLETION_INDEX`` from the completion-index label (PodIndexLabel, on by
    default) in every container and init container that does not define it
    (addCompletionIndexEnvVariables)."""
    spec = template.setdefault("spec", {})
    for key in ("initContainers", "containers"):
        for c in spec.get(key) or []:
            env = c.setdefault("env", [])
            if any(e.get("name") == JOB_COMPLETION_INDEX_ENV for e in env):
                continue
            env.append({"name": JOB_COMPLETION_INDEX_ENV, "valueFrom": {"fieldRef": {
                "fieldPath": f"metadata.labels['{JOB_COMPLETION_INDEX}']"}}})
