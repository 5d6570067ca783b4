"""batch/v1 Job and CronJob: defaults, the Job strategy's generated selector, validation causes, table rows."""

from __future__ import annotations

import copy

import pytest

from controlplane.api import tables
from controlplane.api.defaults import apply_defaults
from controlplane.api.groups import batch
from controlplane.api.validation import invalid_message, validate

NOW = 1_700_000_000.0
T0 = "2023-11-14T22:13:20Z"  # == NOW


def job(**spec) -> dict:
    tpl_spec = {"containers": [{"name": "c", "image": "busybox"}], "restartPolicy": "Never"}
    return {"apiVersion": "batch/v1", "kind": "Job",
            "metadata": {"name": "pi", "namespace": "default", "uid": "uid-1", "creationTimestamp": T0},
            "spec": {"template": {"spec": tpl_spec}, **spec}}


def created(obj: dict) -> dict:
    """The object after the create pipeline's strategy and defaulting."""
    batch.prepare_job_create(obj)
    apply_defaults("Job", obj)
    return obj


def messages(kind: str, obj: dict, old: dict | None = None) -> list[str]:
    return [f"{c['field']}: {c['message']}" for c in validate(kind, obj, old)]


def test_job_defaults():
    j = created(job())
    s = j["spec"]
    assert (s["parallelism"], s["completions"], s["backoffLimit"], s["completionMode"], s["suspend"],
            s["podReplacementPolicy"]) == (1, 1, 6, "NonIndexed", False, "TerminatingOrFailed")
    assert "manualSelector" not in s
    assert s["template"]["spec"]["dnsPolicy"] == "ClusterFirst"  # the pod template's defaults


@pytest.mark.parametrize("spec, expect", [
    ({"parallelism": 3}, {"parallelism": 3, "completions": None}),
    ({"completions": 5}, {"parallelism": 1, "completions": 5}),
    ({"backoffLimitPerIndex": 1, "completionMode": "Indexed", "completions": 2}, {"backoffLimit": 2147483647}),
    ({"podFailurePolicy": {"rules": [{"action": "Ignore", "onPodConditions": [{"type": "DisruptionTarget"}]}]}},
     {"podReplacementPolicy": "Failed"}),
], ids=["parallelism-only", "completions-only", "backoff-per-index", "pod-failure-policy"])
def test_job_defaults_depend_on_what_is_set(spec, expect):
    s = created(job(**spec))["spec"]
    for k, v in expect.items():
        assert s.get(k) == v, k


def test_pod_failure_policy_condition_status_defaults_to_true():
    s = created(job(podFailurePolicy={"rules": [{"action": "Ignore", "onPodConditions": [{"type": "X"}]}]}))["spec"]
    assert s["podFailurePolicy"]["rules"][0]["onPodConditions"][0]["status"] == "True"


def test_generated_selector_and_labels():
    j = created(job())
    labels = j["spec"]["template"]["metadata"]["labels"]
    assert labels == {"controller-uid": "uid-1", "job-name": "pi", "batch.kubernetes.io/controller-uid": "uid-1",
                      "batch.kubernetes.io/job-name": "pi"}
    assert j["spec"]["selector"] == {"matchLabels": {"batch.kubernetes.io/controller-uid": "uid-1"}}
    assert j["metadata"]["labels"] == labels  # SetDefaults_Job copies the template's labels
    assert j["status"] == {}
    assert validate("Job", j) == []


def test_manual_selector_is_kept():
    j = created(job(manualSelector=True, selector={"matchLabels": {"app": "x"}}))
    assert j["spec"]["selector"] == {"matchLabels": {"app": "x"}}
    assert messages("Job", j) == ["spec.template.metadata.labels: Invalid value: map[string]string{}: "
                                  "`selector` does not match template `labels`"]
    j["spec"]["template"]["metadata"] = {"labels": {"app": "x"}}
    assert validate("Job", j) == []


def test_a_user_selector_without_manual_selector_is_not_auto_generated():
    j = created(job(selector={"matchLabels": {"app": "x"}}))
    j["spec"]["template"]["metadata"]["labels"]["app"] = "x"
    # generateSelector adds the uid to the user's selector, which then does not select it alone
    assert messages("Job", j) == ["spec.selector: Invalid value: "
                                  '{"matchLabels":{"app":"x","batch.kubernetes.io/controller-uid":"uid-1"}}: '
                                  "`selector` not auto-generated"]


def test_conflicting_template_label_is_reported():
    j = job()
    j["spec"]["template"]["metadata"] = {"labels": {"job-name": "other"}}
    j = created(j)
    assert messages("Job", j) == ["spec.template.metadata.labels[job-name]: Invalid value: \"other\": must be 'pi'"]


@pytest.mark.parametrize("mutate, expect", [
    (lambda s: s["template"]["spec"].update(restartPolicy="Always"),
     'spec.template.spec.restartPolicy: Unsupported value: "Always": supported values: "OnFailure", "Never"'),
    (lambda s: s.update(parallelism=-1), "spec.parallelism: Invalid value: -1: must be greater than or equal to 0"),
    (lambda s: s.update(backoffLimit=-2), "spec.backoffLimit: Invalid value: -2: must be greater than or equal to 0"),
    (lambda s: s.update(completionMode="Sometimes"),
     'spec.completionMode: Unsupported value: "Sometimes": supported values: "NonIndexed", "Indexed"'),
    (lambda s: s.update(podReplacementPolicy="Never"),
     'spec.podReplacementPolicy: Unsupported value: "Never": supported values: "TerminatingOrFailed", "Failed"'),
    (lambda s: s.update(completionMode="Indexed", completions=None),
     "spec.completions: Required value: when completion mode is Indexed"),
    (lambda s: s.update(activeDeadlineSeconds=-5),
     "spec.activeDeadlineSeconds: Invalid value: -5: must be greater than or equal to 0"),
], ids=["restart-always", "negative-parallelism", "negative-backoff", "completion-mode", "replacement-policy",
        "indexed-needs-completions", "negative-deadline"])
def test_job_validation_causes(mutate, expect):
    j = created(job())
    mutate(j["spec"])
    assert expect in messages("Job", j)


def test_job_invalid_message_is_qualified_with_the_group():
    j = created(job())
    j["spec"]["template"]["spec"]["restartPolicy"] = "Always"
    assert invalid_message("Job", "pi", validate("Job", j)) == (
        'Job.batch "pi" is invalid: spec.template.spec.restartPolicy: Unsupported value: "Always": '
        'supported values: "OnFailure", "Never"')


@pytest.mark.parametrize("field, value", [
    ("selector", {"matchLabels": {"a": "b"}}), ("completionMode", "Indexed"), ("completions", 3),
    ("template", {"spec": {"containers": [{"name": "d", "image": "x"}], "restartPolicy": "Never"}}),
], ids=["selector", "completion-mode", "completions", "template"])
def test_job_immutable_fields(field, value):
    old = created(job())
    new = copy.deepcopy(old)
    new["spec"][field] = value
    assert any(m.startswith(f"spec.{field}: Invalid value: ") and m.endswith("field is immutable")
               for m in messages("Job", new, old))


def test_suspended_job_template_may_change():
    old = created(job(suspend=True))
    new = copy.deepcopy(old)
    new["spec"]["template"]["spec"]["containers"][0]["image"] = "alpine"
    assert validate("Job", new, old) == []


@pytest.mark.parametrize("status, deleting, expect", [
    ({}, False, "Running"),
    ({"conditions": [{"type": "Complete", "status": "True"}]}, False, "Complete"),
    ({"conditions": [{"type": "Failed", "status": "True"}]}, False, "Failed"),
    ({"conditions": [{"type": "Suspended", "status": "True"}]}, False, "Suspended"),
    ({"conditions": [{"type": "FailureTarget", "status": "True"}]}, False, "FailureTarget"),
    ({}, True, "Terminating"),
    ({"conditions": [{"type": "Complete", "status": "False"}]}, False, "Running"),
], ids=["running", "complete", "failed", "suspended", "failure-target", "terminating", "condition-false"])
def test_job_status_cell(status, deleting, expect):
    j = job()
    j["status"] = status
    if deleting:
        j["metadata"]["deletionTimestamp"] = T0
    assert batch.job_status(j) == expect


@pytest.mark.parametrize("spec, succeeded, expect", [
    ({"completions": 3}, 1, "1/3"), ({"parallelism": 1}, 0, "0/1"), ({"parallelism": 4}, 2, "2/1 of 4"),
], ids=["completions", "no-completions", "parallel"])
def test_job_completions_cell(spec, succeeded, expect):
    j = job(**spec)
    j["status"] = {"succeeded": succeeded}
    assert batch.job_completions(j) == expect


def test_job_table_row_and_columns():
    j = created(job())
    j["status"] = {"startTime": "2023-11-14T22:11:20Z", "succeeded": 1, "completionTime": "2023-11-14T22:12:05Z"}
    j["status"]["conditions"] = [{"type": "Complete", "status": "True"}]
    cols = tables.column_definitions("Job")
    assert [c["name"] for c in cols] == ["Name", "Status", "Completions", "Duration", "Age", "Containers",
                                         "Images", "Selector"]
    assert [c["priority"] for c in cols] == [0, 0, 0, 0, 0, 1, 1, 1]
    assert all(c["description"] for c in cols)
    row = tables.table_row("Job", j, NOW)["cells"]
    assert row == ["pi", "Complete", "1/1", "45s", "0s", "c", "busybox",
                   "batch.kubernetes.io/controller-uid=uid-1"]
    running = created(job())
    running["status"] = {"startTime": "2023-11-14T22:11:20Z"}
    assert tables.table_row("Job", running, NOW)["cells"][3] == "2m"
    assert tables.table_row("Job", created(job()), NOW)["cells"][3] == ""


# --------------------------------------------------------------------------- CronJob

def cronjob(**spec) -> dict:
    base = {"schedule": "*/5 * * * *", "jobTemplate": {"spec": {"template": {"spec": {
        "containers": [{"name": "c", "image": "busybox"}], "restartPolicy": "OnFailure"}}}}}
    base.update(spec)
    return {"apiVersion": "batch/v1", "kind": "CronJob",
            "metadata": {"name": "cj", "namespace": "default", "creationTimestamp": T0}, "spec": base}


def test_cronjob_defaults():
    cj = cronjob()
    apply_defaults("CronJob", cj)
    s = cj["spec"]
    assert (s["concurrencyPolicy"], s["suspend"], s["successfulJobsHistoryLimit"], s["failedJobsHistoryLimit"]) == \
        ("Allow", False, 3, 1)
    assert "backoffLimit" not in s["jobTemplate"]["spec"]  # the job template's spec is not defaulted
    assert s["jobTemplate"]["spec"]["template"]["spec"]["dnsPolicy"] == "ClusterFirst"
    assert validate("CronJob", cj) == []


@pytest.mark.parametrize("schedule", ["*/5 * * * *", "0 0 1 1 *", "@hourly", "@every 1h30m", "0 9 * * mon-fri",
                                      "30 2 * jan,jul sun", "0-59/15 * * * *"],
                         ids=["step", "yearly-fields", "descriptor", "every", "day-names", "month-names", "range-step"])
def test_valid_schedules(schedule):
    cj = cronjob(schedule=schedule)
    apply_defaults("CronJob", cj)
    assert validate("CronJob", cj) == []


@pytest.mark.parametrize("schedule, detail", [
    ("bad", "expected exactly 5 fields, found 1: [bad]"),
    ("* * * *", "expected exactly 5 fields, found 4: [* * * *]"),
    ("70 * * * *", "end of range (70) above maximum (59): 70"),
    ("* 24 * * *", "end of range (24) above maximum (23): 24"),
    ("* * 0 * *", "beginning of range (0) below minimum (1): 0"),
    ("x * * * *", 'failed to parse int from x: strconv.Atoi: parsing "x": invalid syntax'),
    ("@often", "unrecognized descriptor: @often"),
    ("5-2 * * * *", "beginning of range (5) beyond end of range (2): 5-2"),
], ids=["one-field", "four-fields", "minute-range", "hour-range", "day-zero", "not-a-number", "descriptor",
        "backwards-range"])
def test_invalid_schedule_causes(schedule, detail):
    cj = cronjob(schedule=schedule)
    apply_defaults("CronJob", cj)
    assert messages("CronJob", cj) == [f'spec.schedule: Invalid value: "{schedule}": {detail}']


@pytest.mark.parametrize("spec, expect", [
    ({"schedule": ""}, "spec.schedule: Required value"),
    ({"schedule": "TZ=UTC * * * * *"},
     'spec.schedule: Invalid value: "TZ=UTC * * * * *": cannot use TZ or CRON_TZ in schedule, use timeZone field '
     'instead'),
    ({"timeZone": "Mars/Olympus"}, 'spec.timeZone: Invalid value: "Mars/Olympus": unknown time zone Mars/Olympus'),
    ({"timeZone": ""}, 'spec.timeZone: Invalid value: "": timeZone must be nil or non-empty string'),
    ({"timeZone": "Local"}, 'spec.timeZone: Invalid value: "Local": timeZone must be an explicit time zone as '
                            'defined in https://www.iana.org/time-zones'),
    ({"concurrencyPolicy": "Sometimes"},
     'spec.concurrencyPolicy: Unsupported value: "Sometimes": supported values: "Allow", "Forbid", "Replace"'),
    ({"successfulJobsHistoryLimit": -1},
     "spec.successfulJobsHistoryLimit: Invalid value: -1: must be greater than or equal to 0"),
    ({"startingDeadlineSeconds": -1}, "spec.startingDeadlineSeconds: Invalid value: -1: must be greater than or "
                                      "equal to 0"),
], ids=["no-schedule", "tz-in-schedule", "unknown-zone", "empty-zone", "local-zone", "concurrency", "history",
        "deadline"])
def test_cronjob_validation_causes(spec, expect):
    cj = cronjob(**spec)
    apply_defaults("CronJob", cj)
    assert expect in messages("CronJob", cj)


def test_cronjob_time_zone_and_template_rules():
    cj = cronjob(timeZone="Europe/Paris")
    apply_defaults("CronJob", cj)
    assert validate("CronJob", cj) == []
    cj["spec"]["jobTemplate"]["spec"]["template"]["spec"]["restartPolicy"] = "Always"
    assert messages("CronJob", cj) == ['spec.jobTemplate.spec.template.spec.restartPolicy: Unsupported value: '
                                       '"Always": supported values: "OnFailure", "Never"']
    cj = cronjob()
    cj["metadata"]["name"] = "x" * 53
    apply_defaults("CronJob", cj)
    assert any(m.endswith("must be no more than 52 characters") for m in messages("CronJob", cj))


def test_cronjob_table_row():
    cj = cronjob(timeZone="Etc/UTC")
    apply_defaults("CronJob", cj)
    cj["status"] = {"active": [{"name": "j1"}], "lastScheduleTime": "2023-11-14T22:08:20Z"}
    cols = tables.column_definitions("CronJob")
    assert [c["name"] for c in cols] == ["Name", "Schedule", "Timezone", "Suspend", "Active", "Last Schedule",
                                         "Age", "Containers", "Images", "Selector"]
    assert tables.table_row("CronJob", cj, NOW)["cells"] == [
        "cj", "*/5 * * * *", "Etc/UTC", "False", 1, "5m", "0s", "c", "busybox", "<none>"]
    fresh = cronjob()
    assert tables.table_row("CronJob", fresh, NOW)["cells"][2:6] == ["<none>", "<unset>", 0, "<none>"]


def test_job_and_cronjob_strategies():
    from controlplane.api.resources import by_kind
    for kind in ("Job", "CronJob"):
        r = by_kind(kind)
        assert r.strategy.tracks_generation and r.status_subresource and r.categories == ("all",)
    assert by_kind("CronJob").short_names == ("cj",) and by_kind("Job").short_names == ()
    cj = cronjob()
    cj["status"] = {"active": [{"name": "x"}]}
    batch.prepare_cronjob_create(cj)
    assert cj["status"] == {}


def test_template_labels_are_validated_at_the_template_path():
    j = job(manualSelector=True, selector={"matchLabels": {"a": "b"}})
    j["spec"]["template"]["metadata"] = {"labels": {"a": "b", "bad key!": "x"}}
    j = created(j)
    # (the job's own labels, copied from the template by SetDefaults_Job, are reported too)
    assert [m for m in messages("Job", j) if "bad key!" in m and m.startswith("spec.")] == [
        'spec.template.labels: Invalid value: "bad key!": name part must consist of alphanumeric characters, '
        "'-', '_' or '.', and must start and end with an alphanumeric character (e.g. 'MyName',  or 'my.name',  "
        "or '123-abc', regex used for validation is '([A-Za-z0-9][-A-Za-z0-9_.]*)?[A-Za-z0-9]')"]
