"""``batch/v1``: Job and CronJob, with every fact the apiserver needs (Kubernetes v1.32).

Sources: the schema and descriptions ``staging/src/k8s.io/api/batch/v1/types.go``; defaults
``pkg/apis/batch/v1/defaults.go`` (SetDefaults_Job, SetDefaults_CronJob); validation
``pkg/apis/batch/validation/validation.go`` (ValidateJob, ValidateJobUpdate,
ValidateCronJobCreate / Update, validateScheduleFormat); Table columns
``pkg/printers/internalversion/printers.go`` (printJob, printCronJob); strategies
``pkg/registry/batch/job/strategy.go`` (PrepareForCreate: empty status, generation 1, the
generated selector and labels unless ``manualSelector``) and
``pkg/registry/batch/cronjob/strategy.go``. No controllers run them (the Job and CronJob
controllers are another piece of work).

Cron schedules are parsed with the ``croniter`` library (Kubernetes uses
``github.com/robfig/cron/v3`` ``ParseStandard``); the error texts are robfig's for the
cases it words (field count, descriptors, ranges, numbers).
"""

from __future__ import annotations

import re
import zoneinfo
from typing import Any

from croniter import croniter

from controlplane import apitime
from controlplane.api import defaulters, listfields, printers, validators
from controlplane.api.groups import common
from controlplane.api.registry import JSON, KindSchema, Printer, Resource, Strategy
from controlplane.api.validators import ErrorList
from controlplane.labels import selector_from_dict

GROUP = "batch"

#: the labels the Job strategy puts on the pod template and selects by (``batch/types.go``)
CONTROLLER_UID_LABEL = "batch.kubernetes.io/controller-uid"
JOB_NAME_LABEL = "batch.kubernetes.io/job-name"
LEGACY_CONTROLLER_UID_LABEL = "controller-uid"
LEGACY_JOB_NAME_LABEL = "job-name"

COMPLETION_MODES = ["NonIndexed", "Indexed"]
POD_REPLACEMENT_POLICIES = ["TerminatingOrFailed", "Failed"]
CONCURRENCY_POLICIES = ["Allow", "Forbid", "Replace"]
JOB_RESTART_POLICIES = ["OnFailure", "Never"]

# --------------------------------------------------------------------------- schema

TYPES: dict[str, tuple[str, dict[str, tuple[str, str]]]] = {
    "JobSpec": ("JobSpec describes how the job execution will look like.", {
        "parallelism": ("int32", "Specifies the maximum desired number of pods the job should run at any given "
                                 "time. Defaults to 1."),
        "completions": ("int32", "Specifies the desired number of successfully finished pods the job should be "
                                 "run with. Setting to null means that the success of any pod signals the success "
                                 "of all pods."),
        "activeDeadlineSeconds": ("int64", "Specifies the duration in seconds relative to the startTime that the "
                                           "job may be continuously active before the system tries to terminate "
                                           "it; value must be positive integer."),
        "podFailurePolicy": ("PodFailurePolicy", "Specifies the policy of handling failed pods. This field cannot "
                                                 "be used in combination with restartPolicy=OnFailure."),
        "successPolicy": ("SuccessPolicy", "successPolicy specifies the policy when the Job can be declared as "
                                           "succeeded (Indexed Jobs only)."),
        "backoffLimit": ("int32", "Specifies the number of retries before marking this job failed. Defaults to 6, "
                                  "unless backoffLimitPerIndex (only Indexed Job) is specified."),
        "backoffLimitPerIndex": ("int32", "Specifies the limit for the number of retries within an index before "
                                          "marking this index as failed. The field is immutable."),
        "maxFailedIndexes": ("int32", "Specifies the maximal number of failed indexes before marking the Job as "
                                      "failed, when backoffLimitPerIndex is set."),
        "selector": ("LabelSelector", "A label query over pods that should match the pod count. Normally, the "
                                      "system sets this field for you. More info: https://kubernetes.io/docs/"
                                      "concepts/overview/working-with-objects/labels/#label-selectors"),
        "manualSelector": ("boolean", "manualSelector controls generation of pod labels and pod selectors. Leave "
                                      "`manualSelector` unset unless you are certain what you are doing."),
        "template": ("PodTemplateSpec", "Describes the pod that will be created when executing a job. The only "
                                        "allowed template.spec.restartPolicy values are \"Never\" or \"OnFailure\"."),
        "ttlSecondsAfterFinished": ("int32", "ttlSecondsAfterFinished limits the lifetime of a Job that has "
                                             "finished execution (either Complete or Failed)."),
        "completionMode": ("string", "completionMode specifies how Pod completions are tracked. It can be "
                                     "`NonIndexed` (default) or `Indexed`."),
        "suspend": ("boolean", "suspend specifies whether the Job controller should create Pods or not. "
                               "Defaults to false."),
        "podReplacementPolicy": ("string", "podReplacementPolicy specifies when to create replacement Pods: "
                                           "TerminatingOrFailed or Failed."),
        "managedBy": ("string", "ManagedBy field indicates the controller that manages a Job. This field is "
                                "immutable."),
    }),
    "JobStatus": ("JobStatus represents the current state of a Job.", {
        "conditions": ("[]JobCondition", "The latest available observations of an object's current state."),
        "startTime": ("Time", "Represents time when the job controller started processing a job."),
        "completionTime": ("Time", "Represents time when the job was completed."),
        "active": ("int32", "The number of pending and running pods which are not terminating."),
        "succeeded": ("int32", "The number of pods which reached phase Succeeded. The value increases "
                               "monotonically for a given spec. However, it may decrease in reaction to scale down "
                               "of elastic indexed jobs."),
        "failed": ("int32", "The number of pods which reached phase Failed."),
        "terminating": ("int32", "The number of pods which are terminating."),
        "completedIndexes": ("string", "completedIndexes holds the completed indexes when .spec.completionMode = "
                                       "\"Indexed\" in a text format."),
        "failedIndexes": ("string", "FailedIndexes holds the failed indexes when spec.backoffLimitPerIndex is set."),
        "uncountedTerminatedPods": ("UncountedTerminatedPods", "uncountedTerminatedPods holds the UIDs of Pods "
                                    "that have terminated but the job controller hasn't yet accounted for."),
        "ready": ("int32", "The number of active pods which have a Ready condition and are not terminating."),
    }),
    "PodFailurePolicy": ("PodFailurePolicy describes how failed pods influence the backoffLimit.", {
        "rules": ("[]PodFailurePolicyRule", "A list of pod failure policy rules. The rules are evaluated in order. "
                                            "Once a rule matches a Pod failure, the remaining of the rules are "
                                            "ignored."),
    }),
    "PodFailurePolicyRule": ("PodFailurePolicyRule describes how a pod failure is handled when the requirements are "
                             "met. One of onExitCodes and onPodConditions, but not both, can be used in each rule.", {
                                 "action": ("string", "Specifies the action taken on a pod failure when the "
                                                      "requirements are satisfied: FailJob, FailIndex, Ignore or "
                                                      "Count."),
                                 "onExitCodes": ("PodFailurePolicyOnExitCodesRequirement", "Represents the "
                                                 "requirement on the container exit codes."),
                                 "onPodConditions": ("[]PodFailurePolicyOnPodConditionsPattern", "Represents the "
                                                     "requirement on the pod conditions."),
                             }),
    "PodFailurePolicyOnExitCodesRequirement": ("PodFailurePolicyOnExitCodesRequirement describes the requirement for "
                                               "handling a failed pod based on its container exit codes.", {
                                                   "containerName": ("string", "Restricts the check for exit codes to "
                                                                               "the container with the specified "
                                                                               "name."),
                                                   "operator": ("string", "Represents the relationship between the "
                                                                          "container exit code(s) and the specified "
                                                                          "values: In or NotIn."),
                                                   "values": ("[]int32", "Specifies the set of values."),
                                               }),
    "PodFailurePolicyOnPodConditionsPattern": ("PodFailurePolicyOnPodConditionsPattern describes a pattern for "
                                               "matching an actual pod condition type.", {
                                                   "type": ("string", "Specifies the required Pod condition type."),
                                                   "status": ("string", "Specifies the required Pod condition status. "
                                                                        "Defaults to True."),
                                               }),
    "SuccessPolicy": ("SuccessPolicy describes when a Job can be declared as succeeded based on the success of some "
                      "indexes.", {
                          "rules": ("[]SuccessPolicyRule", "rules represents the list of alternative rules for the "
                                                           "declaring the Jobs as successful before "
                                                           "`.status.succeeded >= .spec.completions`."),
                      }),
    "SuccessPolicyRule": ("SuccessPolicyRule describes rule for declaring a Job as succeeded.", {
        "succeededIndexes": ("string", "succeededIndexes specifies the set of indexes which need to be contained in "
                                       "the actual set of the succeeded indexes for the Job."),
        "succeededCount": ("int32", "succeededCount specifies the minimal required size of the actual set of the "
                                    "succeeded indexes for the Job."),
    }),
    "UncountedTerminatedPods": ("UncountedTerminatedPods holds UIDs of Pods that have terminated but haven't been "
                                "accounted in Job status counters.", {
                                    "succeeded": ("[]string", "succeeded holds UIDs of succeeded Pods."),
                                    "failed": ("[]string", "failed holds UIDs of failed Pods."),
                                }),
    "JobCondition": ("JobCondition describes current state of a job.", {
        "type": ("string", "Type of job condition, Complete or Failed."),
        "status": ("string", "Status of the condition, one of True, False, Unknown."),
        "lastProbeTime": ("Time", "Last time the condition was checked."),
        "lastTransitionTime": ("Time", "Last time the condition transit from one status to another."),
        "reason": ("string", "(brief) reason for the condition's last transition."),
        "message": ("string", "Human readable message indicating details about last transition."),
    }),
    "JobTemplateSpec": ("JobTemplateSpec describes the data a Job should have when created from a template", {
        "metadata": ("ObjectMeta", "Standard object's metadata of the jobs created from this template."),
        "spec": ("JobSpec", "Specification of the desired behavior of the job."),
    }),
    "CronJobSpec": ("CronJobSpec describes how the job execution will look like and when it will actually run.", {
        "schedule": ("string", "The schedule in Cron format, see https://en.wikipedia.org/wiki/Cron."),
        "timeZone": ("string", "The time zone name for the given schedule, see "
                               "https://en.wikipedia.org/wiki/List_of_tz_database_time_zones. If not specified, "
                               "this will default to the time zone of the kube-controller-manager process. The set "
                               "of valid time zone names and the time zone offset is loaded from the system-wide "
                               "time zone database by the API server during CronJob validation and the controller "
                               "manager during execution. If no system-wide time zone database can be found a "
                               "bundled version of the database is used instead. If the time zone name becomes "
                               "invalid during the lifetime of a CronJob or due to a change in host configuration, "
                               "the controller will stop creating new new Jobs and will create a system event with "
                               "the reason UnknownTimeZone. More information can be found in "
                               "https://kubernetes.io/docs/concepts/workloads/controllers/cron-jobs/#time-zones"),
        "startingDeadlineSeconds": ("int64", "Optional deadline in seconds for starting the job if it misses "
                                             "scheduled time for any reason."),
        "concurrencyPolicy": ("string", "Specifies how to treat concurrent executions of a Job: \"Allow\" "
                                        "(default), \"Forbid\" or \"Replace\"."),
        "suspend": ("boolean", "This flag tells the controller to suspend subsequent executions, it does not "
                               "apply to already started executions.  Defaults to false."),
        "jobTemplate": ("JobTemplateSpec", "Specifies the job that will be created when executing a CronJob."),
        "successfulJobsHistoryLimit": ("int32", "The number of successful finished jobs to retain. Value must be "
                                                "non-negative integer. Defaults to 3."),
        "failedJobsHistoryLimit": ("int32", "The number of failed finished jobs to retain. Value must be "
                                            "non-negative integer. Defaults to 1."),
    }),
    "CronJobStatus": ("CronJobStatus represents the current state of a cron job.", {
        "active": ("[]ObjectReference", "A list of pointers to currently running jobs."),
        "lastScheduleTime": ("Time", "Information when was the last time the job was successfully scheduled."),
        "lastSuccessfulTime": ("Time", "Information when was the last time the job successfully completed."),
    }),
}

#: the list tags of ``batch/v1/types.go`` (``+listType``, ``patchMergeKey``)
listfields.declare(structs={
    "JobSpec": {"template": "PodTemplateSpec", "podFailurePolicy": "PodFailurePolicy",
                "successPolicy": "SuccessPolicy"},
    "PodFailurePolicy": {"rules": listfields.ListField(list_type="atomic", elem="PodFailurePolicyRule")},
    "PodFailurePolicyRule": {"onExitCodes": "PodFailurePolicyOnExitCodesRequirement",
                             "onPodConditions": listfields.ATOMIC},
    "PodFailurePolicyOnExitCodesRequirement": {"values": listfields.ListField(list_type="set")},
    "SuccessPolicy": {"rules": listfields.ATOMIC},
    "UncountedTerminatedPods": {"succeeded": listfields.ListField(list_type="set"),
                                "failed": listfields.ListField(list_type="set")},
    "JobTemplateSpec": {"metadata": "ObjectMeta", "spec": "JobSpec"},
    "CronJobSpec": {"jobTemplate": "JobTemplateSpec"},
    "JobStatus": {"conditions": listfields.ListField("type", "merge", "atomic"),
                  "uncountedTerminatedPods": "UncountedTerminatedPods"},
    "CronJobStatus": {"active": listfields.ATOMIC},
}, kinds={"Job": {"spec": "JobSpec", "status": "JobStatus"},
          "CronJob": {"spec": "CronJobSpec", "status": "CronJobStatus"}})

JOB_SCHEMA = KindSchema("Job represents the configuration of a single job.", {
    "spec": ("JobSpec", "Specification of the desired behavior of a job."),
    "status": ("JobStatus", "Current status of a job."),
}, TYPES)
CRONJOB_SCHEMA = KindSchema("CronJob represents the configuration of a single cron job.", {
    "spec": ("CronJobSpec", "Specification of the desired behavior of a cron job, including the schedule."),
    "status": ("CronJobStatus", "Current status of a cron job."),
}, TYPES)

# --------------------------------------------------------------------------- printers

_WIDE = [
    common.col("Containers", description="Names of each container in the template.", priority=1),
    common.col("Images", description="Images referenced by each container in the template.", priority=1),
    common.col("Selector", description=TYPES["JobSpec"][1]["selector"][1], priority=1),
]
JOB_COLUMNS = (
    common.NAME_COL,
    common.col("Status", description="Status of the job."),
    common.col("Completions", description=TYPES["JobStatus"][1]["succeeded"][1]),
    common.col("Duration", description="Time required to complete the job."),
    common.AGE_COL,
    *_WIDE,
)
CRONJOB_COLUMNS = (
    common.NAME_COL,
    common.col("Schedule", description=TYPES["CronJobSpec"][1]["schedule"][1]),
    common.col("Timezone", description=TYPES["CronJobSpec"][1]["timeZone"][1]),
    common.col("Suspend", "boolean", TYPES["CronJobSpec"][1]["suspend"][1]),
    common.col("Active", "integer", TYPES["CronJobStatus"][1]["active"][1]),
    common.col("Last Schedule", description=TYPES["CronJobStatus"][1]["lastScheduleTime"][1]),
    common.AGE_COL,
    *_WIDE,
)


def _has_condition(status: JSON, type_: str) -> bool:
    return any(isinstance(c, dict) and c.get("type") == type_ and c.get("status") == "True"
               for c in status.get("conditions") or [])


def job_status(job: JSON) -> str:
    """The STATUS cell of printJob: Complete, Failed, Terminating, Suspended, FailureTarget
    or Running (in that order of precedence)."""
    st = job.get("status") or {}
    if _has_condition(st, "Complete"):
        return "Complete"
    if _has_condition(st, "Failed"):
        return "Failed"
    if (job.get("metadata") or {}).get("deletionTimestamp"):
        return "Terminating"
    if _has_condition(st, "Suspended"):
        return "Suspended"
    if _has_condition(st, "FailureTarget"):
        return "FailureTarget"
    return "Running"


def job_completions(job: JSON) -> str:
    """The COMPLETIONS cell: ``succeeded/completions``, else ``succeeded/1`` or
    ``succeeded/1 of parallelism`` for a job without completions."""
    spec = job.get("spec") or {}
    succeeded = int((job.get("status") or {}).get("succeeded") or 0)
    if spec.get("completions") is not None:
        return f"{succeeded}/{spec['completions']}"
    parallelism = int(spec.get("parallelism") or 0)
    if parallelism > 1:
        return f"{succeeded}/1 of {parallelism}"
    return f"{succeeded}/1"


def job_duration(job: JSON, now: float) -> str:
    """The DURATION cell: HumanDuration from startTime to completionTime (or now); empty
    before the job started."""
    st = job.get("status") or {}
    start = apitime.time_or_none(st.get("startTime"))
    if start is None:
        return ""
    end = apitime.time_or_none(st.get("completionTime"))
    return printers.human_duration((now if end is None else end) - start)


def _job_row(job: JSON, now: float) -> tuple[list[Any], list[JSON] | None]:
    spec = job.get("spec") or {}
    names, images = common.containers_images(spec.get("template"))
    return [common.name(job), job_status(job), job_completions(job), job_duration(job, now), common.age(job, now),
            names, images, common.label_selector_str(spec.get("selector"))], None


def _cronjob_row(cj: JSON, now: float) -> tuple[list[Any], list[JSON] | None]:
    spec = cj.get("spec") or {}
    st = cj.get("status") or {}
    last = st.get("lastScheduleTime")
    jt_spec = (spec.get("jobTemplate") or {}).get("spec") or {}
    names, images = common.containers_images(jt_spec.get("template"))
    tz = spec.get("timeZone")
    return [common.name(cj), spec.get("schedule", ""), "<none>" if tz is None else tz,
            common.bool_ptr(spec.get("suspend")), len(st.get("active") or []),
            "<none>" if last is None else printers.since(last, now), common.age(cj, now),
            names, images, common.label_selector_str(jt_spec.get("selector"))], None


JOB_PRINTER = Printer(JOB_COLUMNS, _job_row)
CRONJOB_PRINTER = Printer(CRONJOB_COLUMNS, _cronjob_row)

# --------------------------------------------------------------------------- defaults


def default_job_spec(spec: JSON) -> None:
    """SetDefaults_Job's spec part: completions and parallelism 1 when both are unset,
    parallelism 1, backoffLimit 6 (2147483647 with backoffLimitPerIndex), completionMode
    NonIndexed, suspend false, podReplacementPolicy (Failed with a podFailurePolicy, else
    TerminatingOrFailed), podFailurePolicy onPodConditions status True; the pod template's
    defaults."""
    if spec.get("completions") is None and spec.get("parallelism") is None:
        spec["completions"] = 1
        spec["parallelism"] = 1
    if spec.get("parallelism") is None:
        spec["parallelism"] = 1
    if spec.get("backoffLimit") is None:
        spec["backoffLimit"] = 2147483647 if spec.get("backoffLimitPerIndex") is not None else 6
    if spec.get("completionMode") is None:
        spec["completionMode"] = "NonIndexed"
    if spec.get("suspend") is None:
        spec["suspend"] = False
    pfp = spec.get("podFailurePolicy")
    if isinstance(pfp, dict):
        for rule in pfp.get("rules") or []:
            for pattern in (rule.get("onPodConditions") or []) if isinstance(rule, dict) else []:
                if isinstance(pattern, dict) and not pattern.get("status"):
                    pattern["status"] = "True"
    if spec.get("podReplacementPolicy") is None:
        spec["podReplacementPolicy"] = "Failed" if pfp is not None else "TerminatingOrFailed"
    _default_pod_template(spec)


def _default_pod_template(spec: JSON) -> None:
    tpl = spec.get("template")
    if isinstance(tpl, dict) and (tpl.get("spec") is None or isinstance(tpl.get("spec"), dict)):
        defaulters.default_pod_spec(common.section(tpl, "spec"))


def default_job(obj: JSON) -> None:
    """SetDefaults_Job: the spec defaults (:func:`default_job_spec`) and the job's labels
    from the pod template's when the job has none."""
    spec = common.section(obj, "spec")
    default_job_spec(spec)
    tpl = spec.get("template")
    labels = ((tpl or {}).get("metadata") or {}).get("labels") if isinstance(tpl, dict) else None
    md = common.section(obj, "metadata")
    if labels and not md.get("labels"):
        md["labels"] = dict(labels)


def default_cronjob(obj: JSON) -> None:
    """SetDefaults_CronJob: concurrencyPolicy Allow, suspend false, successfulJobsHistoryLimit
    3, failedJobsHistoryLimit 1; the job template's pod template gets the pod defaults (the
    job template's spec itself is not defaulted, as in Kubernetes)."""
    spec = common.section(obj, "spec")
    if not spec.get("concurrencyPolicy"):
        spec["concurrencyPolicy"] = "Allow"
    if spec.get("suspend") is None:
        spec["suspend"] = False
    if spec.get("successfulJobsHistoryLimit") is None:
        spec["successfulJobsHistoryLimit"] = 3
    if spec.get("failedJobsHistoryLimit") is None:
        spec["failedJobsHistoryLimit"] = 1
    jt = spec.get("jobTemplate")
    if isinstance(jt, dict) and isinstance(jt.get("spec"), dict):
        _default_pod_template(jt["spec"])

# --------------------------------------------------------------------------- strategy


def generate_selector(job: JSON) -> None:
    """The Job strategy's generateSelector: the template gets the ``controller-uid`` /
    ``batch.kubernetes.io/controller-uid`` labels (the job's uid) and the ``job-name`` /
    ``batch.kubernetes.io/job-name`` labels (its name), unless set; the selector's
    matchLabels get ``batch.kubernetes.io/controller-uid``. Validation rejects a template
    whose labels conflict (``ValidateGeneratedSelector``)."""
    md = job.get("metadata") or {}
    uid, jname = str(md.get("uid", "")), str(md.get("name", ""))
    spec = common.section(job, "spec")
    tpl = common.section(spec, "template")
    tmd = common.section(tpl, "metadata")
    labels = tmd.get("labels")
    if not isinstance(labels, dict):
        labels = tmd["labels"] = {}
    for key, value in ((LEGACY_CONTROLLER_UID_LABEL, uid), (LEGACY_JOB_NAME_LABEL, jname),
                       (CONTROLLER_UID_LABEL, uid), (JOB_NAME_LABEL, jname)):
        labels.setdefault(key, value)
    sel = spec.get("selector")
    if not isinstance(sel, dict):
        sel = spec["selector"] = {}
    ml = sel.get("matchLabels")
    if not isinstance(ml, dict):
        ml = sel["matchLabels"] = {}
    ml.setdefault(CONTROLLER_UID_LABEL, uid)


def prepare_job_create(job: JSON) -> None:
    """PrepareForCreate of Jobs (``pkg/registry/batch/job/strategy.go``): an empty status;
    the generated selector unless ``spec.manualSelector`` is true."""
    job["status"] = {}
    if (job.get("spec") or {}).get("manualSelector") is not True:
        generate_selector(job)


def prepare_cronjob_create(cj: JSON) -> None:
    """PrepareForCreate of CronJobs: an empty status."""
    cj["status"] = {}


JOB_STRATEGY = Strategy(tracks_generation=True, prepare_create=prepare_job_create)
CRONJOB_STRATEGY = Strategy(tracks_generation=True, prepare_create=prepare_cronjob_create)

# --------------------------------------------------------------------------- validation

_CRON_FIELDS = (("minute", 0, 59), ("hour", 0, 23), ("day of month", 1, 31), ("month", 1, 12),
                ("day of week", 0, 6))
_DESCRIPTORS = ("@yearly", "@annually", "@monthly", "@weekly", "@daily", "@midnight", "@hourly")
_MONTHS = ("jan", "feb", "mar", "apr", "may", "jun", "jul", "aug", "sep", "oct", "nov", "dec")
_DAYS = ("sun", "mon", "tue", "wed", "thu", "fri", "sat")


def _robfig_field_error(expr: str, idx: int) -> str | None:
    """robfig/cron's ``getRange`` errors for one field, or None when it parses."""
    _name, lo, hi = _CRON_FIELDS[idx]
    names = _MONTHS if idx == 3 else _DAYS if idx == 4 else ()

    def number(s: str) -> tuple[int | None, str | None]:
        if s.lower() in names:
            return names.index(s.lower()) + (1 if idx == 3 else 0), None
        if not re.fullmatch(r"-?[0-9]+", s):
            return None, f'failed to parse int from {s}: strconv.Atoi: parsing "{s}": invalid syntax'
        n = int(s)
        if n < 0:
            return None, f"negative number ({n}) not allowed: {s}"
        return n, None

    for part in expr.split(","):
        rng, _, step = part.partition("/")
        if step:
            n, err = number(step)
            if err:
                return err
            if n == 0:
                return f"step of range should be a positive number: {part}"
        if rng in ("*", "?"):
            continue
        bounds = rng.split("-")
        if len(bounds) > 2:
            return f"too many hyphens: {part}"
        start, err = number(bounds[0])
        if err:
            return err
        end, err = number(bounds[1]) if len(bounds) == 2 else (start, None)
        if err:
            return err
        assert start is not None and end is not None
        if start < lo:
            return f"beginning of range ({start}) below minimum ({lo}): {part}"
        if end > hi:
            return f"end of range ({end}) above maximum ({hi}): {part}"
        if start > end:
            return f"beginning of range ({start}) beyond end of range ({end}): {part}"
    return None


def schedule_error(schedule: str) -> str | None:
    """Why ``schedule`` is not a standard cron schedule (robfig ``ParseStandard``'s words), or
    None: five fields (minute hour day-of-month month day-of-week), a descriptor
    (``@hourly``...) or ``@every <duration>``; ``TZ=`` / ``CRON_TZ=`` prefixes are skipped
    here (validation forbids them). Checked with ``croniter``."""
    s = schedule.strip()
    if s.startswith("TZ=") or s.startswith("CRON_TZ="):
        s = s.split(" ", 1)[1].strip() if " " in s else ""
    if s.startswith("@"):
        if s.startswith("@every "):
            try:
                apitime.parse_duration(s[len("@every "):])
            except ValueError:
                return f"failed to parse duration {s}: time: invalid duration \"{s[len('@every '):]}\""
            return None
        if s in _DESCRIPTORS:
            return None
        return f"unrecognized descriptor: {s}"
    fields = s.split()
    if len(fields) != 5:
        return f"expected exactly 5 fields, found {len(fields)}: [{' '.join(fields)}]"
    for i, f in enumerate(fields):
        err = _robfig_field_error(f, i)
        if err:
            return err
    if not croniter.is_valid(s):
        return f"failed to parse schedule: {s}"
    return None


def validate_schedule(schedule: str, time_zone: object, path: str, errs: ErrorList) -> None:
    """validateScheduleFormat: a parseable schedule; ``TZ`` in it is not allowed (the
    timeZone field is)."""
    err = schedule_error(schedule)
    if err:
        errs.invalid(path, schedule, err)
    if "TZ" in schedule:
        errs.invalid(path, schedule, "cannot use TZ or CRON_TZ in schedule, use timeZone field instead")


def validate_time_zone(tz: object, path: str, errs: ErrorList) -> None:
    """validateTimeZone: non-empty, not ``Local``, a zone of the IANA database."""
    if tz is None:
        return
    if not isinstance(tz, str) or tz == "":
        errs.invalid(path, tz, "timeZone must be nil or non-empty string")
        return
    if tz.lower() == "local":
        errs.invalid(path, tz, "timeZone must be an explicit time zone as defined in https://www.iana.org/time-zones")
        return
    try:
        zoneinfo.ZoneInfo(tz)
    except (zoneinfo.ZoneInfoNotFoundError, ValueError, OSError):
        errs.invalid(path, tz, f"unknown time zone {tz}")


def _validate_pod_template(tpl: object, path: str, errs: ErrorList) -> None:
    """ValidatePodTemplateSpec of a job's template, and the job restart policies."""
    if not isinstance(tpl, dict):
        errs.required(path, "")
        return
    tmd = tpl.get("metadata") or {}
    if isinstance(tmd, dict):
        # ValidatePodTemplateSpec: the template's ObjectMeta is embedded, so its paths are
        # spec.template.labels / .annotations
        validators.validate_labels(tmd.get("labels"), f"{path}.labels", errs)
        validators.validate_annotations(tmd.get("annotations"), f"{path}.annotations", errs)
    pspec = tpl.get("spec")
    validators.validate_pod_spec(pspec, f"{path}.spec", errs)
    rp = pspec.get("restartPolicy") if isinstance(pspec, dict) else None
    if rp not in JOB_RESTART_POLICIES:
        errs.not_supported(f"{path}.spec.restartPolicy", rp or "", JOB_RESTART_POLICIES)


def validate_job_spec(spec: object, path: str, errs: ErrorList, *, require_selector: bool = True) -> None:
    """validateJobSpec (+ the selector checks of ValidateJobSpec when ``require_selector``):
    non-negative counts, completion mode, pod replacement policy, selector (required,
    matching the template's labels), the pod template."""
    if not isinstance(spec, dict):
        errs.required(path, "")
        return
    for f in ("parallelism", "completions", "activeDeadlineSeconds", "backoffLimit",
              "ttlSecondsAfterFinished", "backoffLimitPerIndex", "maxFailedIndexes"):
        common.nonnegative(errs, f"{path}.{f}", spec.get(f))
    mode = spec.get("completionMode")
    if mode is not None and mode not in COMPLETION_MODES:
        errs.not_supported(f"{path}.completionMode", mode, COMPLETION_MODES)
    if mode == "Indexed" and spec.get("completions") is None:
        errs.required(f"{path}.completions", "when completion mode is Indexed")
    prp = spec.get("podReplacementPolicy")
    if prp is not None:
        if prp not in POD_REPLACEMENT_POLICIES:
            errs.not_supported(f"{path}.podReplacementPolicy", prp, POD_REPLACEMENT_POLICIES)
        elif spec.get("podFailurePolicy") is not None and prp != "Failed":
            errs.not_supported(f"{path}.podReplacementPolicy", prp, ["Failed"])
    if spec.get("backoffLimitPerIndex") is not None and mode != "Indexed":
        errs.forbidden(f"{path}.backoffLimitPerIndex", "requires indexed completion mode")
    tpl = spec.get("template")
    if require_selector:
        sel = spec.get("selector")
        if sel is None:
            errs.required(f"{path}.selector", "")
        else:
            validators.validate_label_selector(sel, f"{path}.selector", errs)
            labels = (((tpl or {}).get("metadata") or {}).get("labels") or {}) if isinstance(tpl, dict) else {}
            try:
                matches = selector_from_dict(sel).matches(labels)
            except (ValueError, AttributeError, TypeError):
                matches = True  # reported by the selector validation
            if not matches:
                errs.invalid(f"{path}.template.metadata.labels", labels, "`selector` does not match template `labels`")
    _validate_pod_template(tpl, f"{path}.template", errs)


def _validate_has_label(labels: JSON, key: str, value: str, path: str, errs: ErrorList) -> None:
    """ValidateHasLabel: ``labels[key]`` must be ``value``."""
    p = f"{path}.labels[{key}]"
    if key not in labels:
        errs.required(p, f"must be '{value}'")
    elif labels[key] != value:
        errs.invalid(p, labels[key], f"must be '{value}'")


def validate_generated_selector(job: JSON, errs: ErrorList) -> None:
    """ValidateGeneratedSelector: without ``manualSelector``, the template carries the
    generated labels and the selector selects the job's uid."""
    spec = job.get("spec") or {}
    if spec.get("manualSelector") is True or spec.get("selector") is None:
        return
    md = job.get("metadata") or {}
    uid, jname = str(md.get("uid") or ""), str(md.get("name") or "")
    if not uid:
        errs.required("metadata.uid", "")
    labels = (((spec.get("template") or {}).get("metadata") or {}).get("labels")) or {}
    for key, value in ((LEGACY_CONTROLLER_UID_LABEL, uid), (LEGACY_JOB_NAME_LABEL, jname),
                       (CONTROLLER_UID_LABEL, uid), (JOB_NAME_LABEL, jname)):
        _validate_has_label(labels, key, value, "spec.template.metadata", errs)
    try:
        ok = selector_from_dict(spec["selector"]).matches({CONTROLLER_UID_LABEL: uid})
    except (ValueError, AttributeError, TypeError):
        return
    if not ok:
        errs.invalid("spec.selector", spec["selector"], "`selector` not auto-generated")


def validate_job(obj: JSON, old: JSON | None, errs: ErrorList) -> None:
    """ValidateJob / ValidateJobUpdate: the spec; on create the generated selector; on
    update the immutable fields (selector, completionMode, podFailurePolicy,
    backoffLimitPerIndex, managedBy, completions unless elastic Indexed, and the pod
    template unless the job is suspended)."""
    spec = obj.get("spec")
    validate_job_spec(spec, "spec", errs)
    if not isinstance(spec, dict):
        return
    if old is None:
        validate_generated_selector(obj, errs)
        return
    ospec = old.get("spec") or {}
    common.immutable(errs, "spec.selector", spec.get("selector"), ospec.get("selector"))
    for f in ("completionMode", "podFailurePolicy", "backoffLimitPerIndex", "managedBy"):
        common.immutable(errs, f"spec.{f}", spec.get(f), ospec.get(f))
    elastic = spec.get("completionMode") == "Indexed" and spec.get("completions") == spec.get("parallelism")
    if not elastic:
        common.immutable(errs, "spec.completions", spec.get("completions"), ospec.get("completions"))
    if not ospec.get("suspend"):
        common.immutable(errs, "spec.template", spec.get("template"), ospec.get("template"))


def validate_cronjob(obj: JSON, old: JSON | None, errs: ErrorList) -> None:
    """ValidateCronJobCreate / Update: the name (at most 52 characters), the schedule
    (required, cron), timeZone, concurrencyPolicy, non-negative deadlines and history limits,
    the job template (its spec without the selector requirement; manualSelector not true)."""
    nm = str((obj.get("metadata") or {}).get("name") or "")
    if len(nm) > 52:
        errs.invalid("metadata.name", nm, "must be no more than 52 characters")
    spec = obj.get("spec")
    if not isinstance(spec, dict):
        errs.required("spec", "")
        return
    schedule = spec.get("schedule")
    if not schedule:
        errs.required("spec.schedule", "")
    elif isinstance(schedule, str):
        validate_schedule(schedule, spec.get("timeZone"), "spec.schedule", errs)
    validate_time_zone(spec.get("timeZone"), "spec.timeZone", errs)
    common.nonnegative(errs, "spec.startingDeadlineSeconds", spec.get("startingDeadlineSeconds"))
    cp = spec.get("concurrencyPolicy")
    if not cp:
        errs.required("spec.concurrencyPolicy", "")
    elif cp not in CONCURRENCY_POLICIES:
        errs.not_supported("spec.concurrencyPolicy", cp, CONCURRENCY_POLICIES)
    common.nonnegative(errs, "spec.successfulJobsHistoryLimit", spec.get("successfulJobsHistoryLimit"))
    common.nonnegative(errs, "spec.failedJobsHistoryLimit", spec.get("failedJobsHistoryLimit"))
    jt = spec.get("jobTemplate")
    if not isinstance(jt, dict):
        errs.required("spec.jobTemplate", "")
        return
    jmd = jt.get("metadata") or {}
    if isinstance(jmd, dict):
        validators.validate_labels(jmd.get("labels"), "spec.jobTemplate.metadata.labels", errs)
        validators.validate_annotations(jmd.get("annotations"), "spec.jobTemplate.metadata.annotations", errs)
    jspec = jt.get("spec")
    validate_job_spec(jspec, "spec.jobTemplate.spec", errs, require_selector=False)
    if isinstance(jspec, dict) and jspec.get("manualSelector") is True:
        errs.not_supported("spec.jobTemplate.spec.manualSelector", True, ["nil", "false"])


# --------------------------------------------------------------------------- entries


def _succeeded(job: JSON) -> str:
    """The ``status.successful`` field label (JobToSelectableFields): ``status.succeeded``."""
    return str((job.get("status") or {}).get("succeeded") or 0)


ENTRIES: tuple[Resource, ...] = (
    Resource(GROUP, "v1", "cronjobs", "cronjob", "CronJob", True, ("cj",), ("status",), ("all",),
             printer=CRONJOB_PRINTER, schema=CRONJOB_SCHEMA, validate=validate_cronjob,
             default=default_cronjob, strategy=CRONJOB_STRATEGY),
    Resource(GROUP, "v1", "jobs", "job", "Job", True, (), ("status",), ("all",),
             printer=JOB_PRINTER, schema=JOB_SCHEMA, validate=validate_job, default=default_job,
             selectable_fields={"status.successful": _succeeded}, strategy=JOB_STRATEGY),
)
