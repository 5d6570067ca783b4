"""The CronJob controller v2 on the fake API client with a FakeClock: schedule arithmetic,
concurrency policies, missed schedules, the starting deadline, suspend, history limits and
time zones (``pkg/controller/cronjob/cronjob_controllerv2_test.go`` / ``utils_test.go`` cases).
Jobs are completed by writing their status, as the Job controller would."""

from __future__ import annotations

import calendar
import datetime
import zoneinfo

import pytest

from components.controller_manager import cronjob as cjc
from components.controller_manager.cronjob import (
    CRONJOBS,
    JOBS,
    CronJobController,
    ScheduleError,
    most_recent_schedule_time,
    next_schedule_time_duration,
    parse_standard,
)
from components.controller_manager.testing import fake_context
from controlplane import apitime
from controlplane.client.testing import FakeClock

UTC = datetime.timezone.utc


def ts(text: str) -> float:
    """``2024-01-01T10:00:00`` (UTC) as epoch seconds."""
    return float(calendar.timegm(datetime.datetime.fromisoformat(text).timetuple()))


def iso(t: float) -> str:
    return apitime.format_time(t)


@pytest.fixture(autouse=True)
def utc_local(monkeypatch):
    """The controller's local zone is UTC (Go's time.Local from $TZ)."""
    monkeypatch.setenv("TZ", "UTC")


@pytest.fixture
def env(monkeypatch):
    clock = FakeClock(ts("2024-01-01T10:00:30"))
    monkeypatch.setattr(apitime, "clock", clock)
    client, ctx, events = fake_context(clock=clock)
    c = CronJobController(ctx)
    return client, c, events, clock


def cronjob(name="hello", schedule="*/1 * * * *", **spec):
    s = {"schedule": schedule, "concurrencyPolicy": "Allow", "suspend": False,
         "successfulJobsHistoryLimit": 3, "failedJobsHistoryLimit": 1,
         "jobTemplate": {"metadata": {"labels": {"team": "a"}},
                         "spec": {"template": {"spec": {"restartPolicy": "OnFailure",
                                                        "containers": [{"name": "c", "image": "busybox"}]}}}}}
    s.update(spec)
    return {"apiVersion": "batch/v1", "kind": "CronJob", "metadata": {"name": name, "namespace": "default"},
            "spec": s}


def reasons(events):
    return [e.reason for e in events]


def jobs(client):
    return sorted(client.all(JOBS), key=lambda j: j["metadata"]["name"])


def cj_of(client, name="hello"):
    return client.stored(CRONJOBS, name, "default")


async def finish(client, job, condition="Complete", start=None, done=None):
    """Write a Job's status as the Job controller does when it finishes."""
    cur = client.stored(JOBS, job["metadata"]["name"], "default")
    st = {"conditions": [{"type": condition, "status": "True"}]}
    if start is not None:
        st["startTime"] = iso(start)
    if done is not None and condition == "Complete":
        st["completionTime"] = iso(done)
    body = {**cur, "status": st}
    await client.update_status(JOBS, body)


# --------------------------------------------------------------------------- schedule arithmetic

@pytest.mark.parametrize("spec,after,expected", [
    ("*/1 * * * *", "2024-01-01T10:00:00", "2024-01-01T10:01:00"),
    ("*/1 * * * *", "2024-01-01T10:00:59", "2024-01-01T10:01:00"),
    ("*/15 * * * *", "2024-01-01T10:16:00", "2024-01-01T10:30:00"),
    ("@hourly", "2024-01-01T10:00:00", "2024-01-01T11:00:00"),
    ("@daily", "2024-01-01T10:00:00", "2024-01-02T00:00:00"),
    ("@weekly", "2024-01-01T10:00:00", "2024-01-07T00:00:00"),
    ("@every 90s", "2024-01-01T10:00:00", "2024-01-01T10:01:30"),
    ("@every 500ms", "2024-01-01T10:00:00", "2024-01-01T10:00:01"),
    ("0 9 * * 1-5", "2024-01-05T09:00:00", "2024-01-08T09:00:00"),
    # robfig's star bit: a day-of-month starting with * is ANDed with the day of week
    ("0 0 */2 * 1", "2024-01-01T00:00:00", "2024-01-15T00:00:00"),
    # both restricted: ORed, as cron
    ("0 0 3 * 1", "2024-01-01T00:00:00", "2024-01-03T00:00:00"),
    ("TZ=America/New_York 0 9 * * *", "2024-01-01T00:00:00", "2024-01-01T14:00:00"),
], ids=["every-minute", "every-minute-late", "quarter-hour", "hourly", "daily", "weekly", "every-90s",
        "every-below-1s", "weekdays", "dom-star-and-dow", "dom-or-dow", "tz-prefix"])
def test_schedule_next(spec, after, expected):
    assert parse_standard(spec).next(ts(after)) == ts(expected)


@pytest.mark.parametrize("spec,message", [
    ("", "empty spec string"),
    ("bad", "expected exactly 5 fields, found 1: [bad]"),
    ("61 * * * *", "end of range (61) above maximum (59): 61"),
    ("@fortnightly", "unrecognized descriptor: @fortnightly"),
    ("TZ=Nowhere/City * * * * *", "provided bad location Nowhere/City: unknown time zone Nowhere/City"),
], ids=["empty", "one-field", "minute-range", "descriptor", "bad-location"])
def test_schedule_errors(spec, message):
    with pytest.raises(ScheduleError) as e:
        parse_standard(spec)
    assert str(e.value) == message


def with_times(created, last=None, deadline=None):
    cj = cronjob()
    cj["metadata"]["creationTimestamp"] = iso(ts(created))
    if last:
        cj["status"] = {"lastScheduleTime": iso(ts(last))}
    if deadline is not None:
        cj["spec"]["startingDeadlineSeconds"] = deadline
    return cj


@pytest.mark.parametrize("spec,created,last,now,deadline,expected,missed", [
    ("*/1 * * * *", "2024-01-01T10:00:30", None, "2024-01-01T10:00:50", None, None, "none"),
    ("*/1 * * * *", "2024-01-01T10:00:30", None, "2024-01-01T10:01:10", None, "2024-01-01T10:01:00", "none"),
    ("0 * * * *", "2024-01-01T05:30:00", None, "2024-01-01T10:15:00", None, "2024-01-01T10:00:00", "few"),
    ("0 * * * *", "2024-01-01T05:30:00", "2024-01-01T09:00:00", "2024-01-01T10:15:00", None,
     "2024-01-01T10:00:00", "none"),
    ("*/1 * * * *", "2024-01-01T00:00:00", None, "2024-01-01T10:00:30", None, "2024-01-01T10:00:00", "many"),
    # the starting deadline raises the earliest time: only 2 missed
    ("*/1 * * * *", "2024-01-01T00:00:00", None, "2024-01-01T10:00:30", 150, "2024-01-01T10:00:00", "few"),
    ("30 6-16/4 * * 1-5", "2024-01-01T00:00:00", None, "2024-01-03T15:00:00", None,
     "2024-01-03T14:30:00", "few"),
    ("@every 1h", "2024-01-01T00:00:10", None, "2024-01-01T05:30:00", None, "2024-01-01T05:00:10", "few"),
], ids=["none-due", "one-due", "few-missed", "from-last-schedule", "more-than-100", "deadline-cuts",
        "irregular", "every-1h"])
def test_most_recent_schedule_time(spec, created, last, now, deadline, expected, missed):
    cj = with_times(created, last, deadline)
    _, got, kind = most_recent_schedule_time(cj, ts(now), parse_standard(spec), True)
    assert (got, kind) == (None if expected is None else ts(expected), missed)


def test_schedule_that_never_fires_is_an_error():
    cj = with_times("2024-01-01T00:00:00")
    with pytest.raises(ScheduleError, match="time difference between two schedules is less than 1 second"):
        most_recent_schedule_time(cj, ts("2024-06-01T00:00:00"), parse_standard("0 0 30 2 *"), True)


@pytest.mark.parametrize("created,last,now,expected", [
    ("2024-01-01T10:00:30", None, "2024-01-01T10:00:30", 30.1),
    ("2024-01-01T10:00:30", "2024-01-01T10:01:00", "2024-01-01T10:01:00.5", 59.6),
    # missed schedules: after the most recent missed time
    ("2024-01-01T09:00:30", None, "2024-01-01T10:00:20", 40.1),
], ids=["after-creation", "after-last-schedule", "missed"])
def test_next_schedule_time_duration(created, last, now, expected):
    cj = with_times(created, last)
    now_t = ts(now.split(".")[0]) + (0.5 if "." in now else 0)
    got = next_schedule_time_duration(cj, now_t, parse_standard("*/1 * * * *"))
    assert got == pytest.approx(expected)


def test_scheduled_timestamp_in_time_zone():
    assert cjc.rfc3339_in(ts("2024-01-01T14:00:00"), zoneinfo.ZoneInfo("America/New_York")) == \
        "2024-01-01T09:00:00-05:00"
    assert cjc.rfc3339_in(ts("2024-01-01T14:00:00"), UTC) == "2024-01-01T14:00:00Z"
    assert cjc.rfc3339_in(ts("2024-07-01T14:00:00"), zoneinfo.ZoneInfo("Asia/Kolkata")) == \
        "2024-07-01T19:30:00+05:30"


# --------------------------------------------------------------------------- the controller

async def test_creates_job_at_schedule_time_and_requeues(env):
    client, c, events, clock = env
    cj = await client.create(CRONJOBS, cronjob())
    assert await c.sync("default/hello") == pytest.approx(30.1)
    assert jobs(client) == []
    clock.t = ts("2024-01-01T10:01:00") + 0.1
    assert await c.sync("default/hello") == pytest.approx(60.0)
    [job] = jobs(client)
    md = job["metadata"]
    assert md["name"] == f"hello-{int(ts('2024-01-01T10:01:00')) // 60}"
    assert md["labels"] == {"team": "a"}
    assert md["annotations"] == {"batch.kubernetes.io/cronjob-scheduled-timestamp": "2024-01-01T10:01:00Z"}
    assert md["ownerReferences"] == [{"apiVersion": "batch/v1", "kind": "CronJob", "name": "hello",
                                      "uid": cj["metadata"]["uid"], "controller": True,
                                      "blockOwnerDeletion": True}]
    assert job["spec"] == cronjob()["spec"]["jobTemplate"]["spec"]
    st = cj_of(client)["status"]
    assert st["lastScheduleTime"] == "2024-01-01T10:01:00Z"
    assert st["active"] == [{"kind": "Job", "namespace": "default", "name": md["name"], "uid": md["uid"],
                             "apiVersion": "batch/v1", "resourceVersion": md["resourceVersion"]}]
    assert reasons(events) == ["SuccessfulCreate"]
    assert events[0].message == f"Created job {md['name']}" and events[0].component == "cronjob-controller"
    # the same scheduled time is not processed twice
    assert await c.sync("default/hello") == pytest.approx(60.0)
    assert len(jobs(client)) == 1


async def test_completed_job_leaves_active_and_sets_last_successful_time(env):
    client, c, events, clock = env
    await client.create(CRONJOBS, cronjob())
    clock.t = ts("2024-01-01T10:01:00") + 1
    await c.sync("default/hello")
    [job] = jobs(client)
    await finish(client, job, start=ts("2024-01-01T10:01:01"), done=ts("2024-01-01T10:01:20"))
    clock.t = ts("2024-01-01T10:01:30")
    await c.sync("default/hello")
    st = cj_of(client)["status"]
    assert "active" not in st
    assert st["lastSuccessfulTime"] == "2024-01-01T10:01:20Z"
    assert events[-1].reason == "SawCompletedJob"
    assert events[-1].message == f"Saw completed job: {job['metadata']['name']}, condition: Complete"


async def test_failed_job_leaves_active_without_last_successful_time(env):
    client, c, events, clock = env
    await client.create(CRONJOBS, cronjob())
    clock.t = ts("2024-01-01T10:01:00") + 1
    await c.sync("default/hello")
    [job] = jobs(client)
    await finish(client, job, "Failed")
    await c.sync("default/hello")
    st = cj_of(client)["status"]
    assert "active" not in st and "lastSuccessfulTime" not in st
    assert events[-1].message.endswith("condition: Failed")


@pytest.mark.parametrize("policy,expected_jobs,expected_events", [
    ("Allow", 2, ["SuccessfulCreate", "SuccessfulCreate"]),
    ("Forbid", 1, ["SuccessfulCreate", "JobAlreadyActive"]),
    ("Replace", 1, ["SuccessfulCreate", "SuccessfulDelete", "SuccessfulCreate"]),
], ids=["allow", "forbid", "replace"])
async def test_concurrency_policy(env, policy, expected_jobs, expected_events):
    client, c, events, clock = env
    await client.create(CRONJOBS, cronjob(concurrencyPolicy=policy))
    clock.t = ts("2024-01-01T10:01:00") + 1
    await c.sync("default/hello")
    first = jobs(client)[0]["metadata"]["name"]
    clock.t = ts("2024-01-01T10:02:00") + 1
    await c.sync("default/hello")
    names = [j["metadata"]["name"] for j in jobs(client)]
    assert len(names) == expected_jobs
    assert reasons(events) == expected_events
    active = [r["name"] for r in cj_of(client)["status"]["active"]]
    second = f"hello-{int(ts('2024-01-01T10:02:00')) // 60}"
    if policy == "Allow":
        assert active == [first, second]
    elif policy == "Forbid":
        assert active == [first] and names == [first]
        assert events[-1].message == ("Not starting job because prior execution is running and concurrency "
                                      "policy is Forbid")
        assert cj_of(client)["status"]["lastScheduleTime"] == "2024-01-01T10:01:00Z"
    else:
        assert active == [second] and names == [second]
        assert events[1].message == f"Deleted job {first}"
        [delete] = client.actions("delete", "jobs")
        assert delete.options == {"propagationPolicy": "Background"}


async def test_only_the_most_recent_missed_time_runs(env):
    client, c, events, clock = env
    await client.create(CRONJOBS, cronjob(schedule="0 * * * *"))
    clock.t = ts("2024-01-01T15:20:00")
    await c.sync("default/hello")
    [job] = jobs(client)
    assert job["metadata"]["name"] == f"hello-{int(ts('2024-01-01T15:00:00')) // 60}"
    assert reasons(events) == ["SuccessfulCreate"]


async def test_too_many_missed_times_warns_and_runs_the_latest(env):
    client, c, events, clock = env
    await client.create(CRONJOBS, cronjob())
    clock.t = ts("2024-01-01T12:00:30")
    assert await c.sync("default/hello") == pytest.approx(30.1)
    assert reasons(events) == ["TooManyMissedTimes", "SuccessfulCreate"]
    assert events[0].type == "Warning" and events[0].message == (
        "too many missed start times. Set or decrease .spec.startingDeadlineSeconds or check clock skew")
    assert cj_of(client)["status"]["lastScheduleTime"] == "2024-01-01T12:00:00Z"


@pytest.mark.parametrize("deadline,created", [(10, False), (30, True)], ids=["missed", "within"])
async def test_starting_deadline(env, deadline, created):
    client, c, events, clock = env
    await client.create(CRONJOBS, cronjob(startingDeadlineSeconds=deadline))
    clock.t = ts("2024-01-01T10:01:20")
    delay = await c.sync("default/hello")
    assert bool(jobs(client)) is created
    if created:
        assert reasons(events) == ["SuccessfulCreate"]
    else:
        # past the deadline the earliest time is now - deadline: nothing is due any more
        assert reasons(events) == [] and delay == pytest.approx(40.1)


async def test_miss_schedule_message():
    assert cjc._go_time_rfc1123z(ts("2024-01-01T10:01:00")) == "Mon, 01 Jan 2024 10:01:00 +0000"


async def test_suspended_cronjob_creates_nothing(env):
    client, c, events, clock = env
    await client.create(CRONJOBS, cronjob(suspend=True))
    clock.t = ts("2024-01-01T10:05:00")
    assert await c.sync("default/hello") is None
    assert jobs(client) == [] and events == []


async def test_history_limits_delete_the_oldest_finished_jobs(env):
    client, c, events, clock = env
    await client.create(CRONJOBS, cronjob(successfulJobsHistoryLimit=2, failedJobsHistoryLimit=1))
    for minute in range(1, 6):
        clock.t = ts(f"2024-01-01T10:0{minute}:00") + 1
        await c.sync("default/hello")
    made = jobs(client)
    assert len(made) == 5
    for i, job in enumerate(made[:3]):
        await finish(client, job, start=ts(f"2024-01-01T10:0{i + 1}:01"), done=ts(f"2024-01-01T10:0{i + 1}:30"))
    for i, job in enumerate(made[3:], start=3):
        await finish(client, job, "Failed", start=ts(f"2024-01-01T10:0{i + 1}:01"))
    events.clear()
    clock.t = ts("2024-01-01T10:05:30")
    await c.sync("default/hello")
    left = [j["metadata"]["name"] for j in jobs(client)]
    names = [j["metadata"]["name"] for j in made]
    assert left == [names[1], names[2], names[4]]
    deleted = [e.message for e in events if e.reason == "SuccessfulDelete"]
    assert deleted == [f"Deleted job {names[0]}", f"Deleted job {names[3]}"]
    st = cj_of(client)["status"]
    assert "active" not in st and st["lastSuccessfulTime"] == "2024-01-01T10:03:30Z"


async def test_time_zone_schedule_and_annotation(env):
    client, c, events, clock = env
    await client.create(CRONJOBS, cronjob(schedule="0 9 * * *", timeZone="America/New_York"))
    clock.t = ts("2024-01-01T13:59:00")
    assert await c.sync("default/hello") == pytest.approx(60.1)
    clock.t = ts("2024-01-01T14:00:00") + 0.1
    await c.sync("default/hello")
    [job] = jobs(client)
    assert job["metadata"]["annotations"]["batch.kubernetes.io/cronjob-scheduled-timestamp"] == \
        "2024-01-01T09:00:00-05:00"
    assert cj_of(client)["status"]["lastScheduleTime"] == "2024-01-01T14:00:00Z"


async def test_unknown_time_zone_warns(env):
    client, c, events, clock = env
    await client.create(CRONJOBS, cronjob(timeZone="Nowhere/City"))
    clock.t = ts("2024-01-01T10:05:00")
    assert await c.sync("default/hello") is None
    assert jobs(client) == []
    assert [(e.type, e.reason, e.message) for e in events] == [
        ("Warning", "UnknownTimeZone", 'invalid timeZone: "Nowhere/City": unknown time zone Nowhere/City')]


async def test_tz_in_schedule_is_honoured_with_a_warning(env):
    client, c, events, clock = env
    await client.create(CRONJOBS, cronjob(schedule="TZ=Asia/Tokyo 1 19 * * *"))
    clock.t = ts("2024-01-01T10:01:05")
    await c.sync("default/hello")
    [job] = jobs(client)
    assert job["metadata"]["name"] == f"hello-{int(ts('2024-01-01T10:01:00')) // 60}"
    assert job["metadata"]["annotations"]["batch.kubernetes.io/cronjob-scheduled-timestamp"] == \
        "2024-01-01T10:01:00Z"
    assert reasons(events) == ["UnsupportedSchedule", "SuccessfulCreate"]
    assert events[0].type == "Warning"
    assert events[0].message == ('CRON_TZ or TZ used in schedule "TZ=Asia/Tokyo 1 19 * * *" is not officially '
                                 "supported, see https://kubernetes.io/docs/concepts/workloads/controllers/"
                                 "cron-jobs/ for more details")


async def test_unparseable_and_invalid_schedules(env):
    client, c, events, clock = env
    await client.create(CRONJOBS, cronjob(name="bad", schedule="bad"))
    await client.create(CRONJOBS, cronjob(name="never", schedule="0 0 30 2 *"))
    clock.t = ts("2025-01-01T00:00:00")
    assert await c.sync("default/bad") is None
    assert await c.sync("default/never") is None
    assert [(e.reason, e.message) for e in events] == [
        ("UnparseableSchedule", 'unparseable schedule: "bad" : expected exactly 5 fields, found 1: [bad]'),
        ("InvalidSchedule", "invalid schedule: 0 0 30 2 * : time difference between two schedules is less "
                            "than 1 second")]


async def test_missing_active_job_is_dropped(env):
    client, c, events, clock = env
    await client.create(CRONJOBS, cronjob())
    clock.t = ts("2024-01-01T10:01:00") + 1
    await c.sync("default/hello")
    [job] = jobs(client)
    await client.delete(JOBS, job["metadata"]["name"], "default")
    await c.sync("default/hello")
    assert "active" not in cj_of(client)["status"]
    assert (events[-1].reason, events[-1].message) == ("MissingJob", f"Active job went missing: "
                                                                     f"{job['metadata']['name']}")


async def test_manual_job_is_unexpected(env):
    """``kubectl create job --from=cronjob/hello``: owned by the CronJob, not in its active list."""
    client, c, events, clock = env
    cj = await client.create(CRONJOBS, cronjob())
    await client.create(JOBS, {"metadata": {"name": "manual", "namespace": "default",
                                            "annotations": {"cronjob.kubernetes.io/instantiate": "manual"},
                                            "ownerReferences": [{"apiVersion": "batch/v1", "kind": "CronJob",
                                                                 "name": "hello", "uid": cj["metadata"]["uid"],
                                                                 "controller": True}]},
                               "spec": {}})
    await c.sync("default/hello")
    assert [(e.reason, e.message) for e in events] == [
        ("UnexpectedJob", "Saw a job that the controller did not create or forgot: manual")]


async def test_job_already_created_is_added_to_active(env):
    """The Job exists (created before a lost status update): AlreadyExists, then adopted into active."""
    client, c, events, clock = env
    await client.create(CRONJOBS, cronjob())
    clock.t = ts("2024-01-01T10:01:00") + 1
    await c.sync("default/hello")
    cur = cj_of(client)
    cur["status"] = {}           # the status write "lost"
    c.cronjobs.store["default/hello"]["status"] = {}
    events.clear()
    await c.sync("default/hello")
    assert len(jobs(client)) == 1
    assert [r["name"] for r in cj_of(client)["status"]["active"]] == [jobs(client)[0]["metadata"]["name"]]
    assert "SuccessfulCreate" not in reasons(events)


async def test_being_deleted_only_updates_status(env):
    client, c, events, clock = env
    await client.create(CRONJOBS, cronjob())
    c.cronjobs.store["default/hello"]["metadata"]["deletionTimestamp"] = iso(clock.t)
    clock.t = ts("2024-01-01T10:05:00")
    assert await c.sync("default/hello") is None
    assert jobs(client) == []


async def test_handlers_enqueue_and_schedule_change_requeues_later(env, monkeypatch):
    client, c, events, clock = env
    await client.create(CRONJOBS, cronjob())
    assert len(c.queue) == 1
    await c.process_next()
    delayed = []
    monkeypatch.setattr(c.queue, "add_after", lambda key, d: delayed.append((key, round(d, 1))))
    cur = cj_of(client)
    await client.update(CRONJOBS, {**cur, "spec": {**cur["spec"], "schedule": "*/5 * * * *"}})
    assert delayed == [("default/hello", 270.1)] and len(c.queue) == 0
    cur = cj_of(client)
    await client.update(CRONJOBS, {**cur, "spec": {**cur["spec"], "schedule": "nope"}})
    assert events[-1].reason == "UnParseableCronJobSchedule"
    assert events[-1].message == "unparseable schedule for cronjob: nope"
    cur = cj_of(client)
    await client.update(CRONJOBS, {**cur, "spec": {**cur["spec"], "suspend": True}})
    assert len(c.queue) == 1


async def test_process_next_requeues_at_the_next_schedule(env, monkeypatch):
    client, c, events, clock = env
    await client.create(CRONJOBS, cronjob())
    delayed = []
    monkeypatch.setattr(c.queue, "add_after", lambda key, d: delayed.append((key, round(d, 1))))
    assert await c.process_next()
    assert delayed == [("default/hello", 30.1)]


async def test_job_events_enqueue_the_owner(env):
    client, c, events, clock = env
    await client.create(CRONJOBS, cronjob())
    await c.process_next()
    clock.t = ts("2024-01-01T10:01:00") + 1
    await c.sync("default/hello")
    while len(c.queue):
        await c.process_next()
    [job] = jobs(client)
    await finish(client, job)
    assert len(c.queue) == 1


async def test_failed_create_warns_and_requeues_with_backoff(env, monkeypatch):
    from controlplane.client.rest import ApiError
    client, c, events, clock = env
    await client.create(CRONJOBS, cronjob())
    await c.process_next()
    clock.t = ts("2024-01-01T10:01:00") + 1
    client.fail("create", "jobs", ApiError(500, "InternalError", "etcd is down"), times=1)
    with pytest.raises(ApiError):
        await c.sync("default/hello")
    assert [(e.type, e.reason, e.message) for e in events] == [
        ("Warning", "FailedCreate", "Error creating job: etcd is down")]
    assert "active" not in (cj_of(client).get("status") or {})
    limited = []
    monkeypatch.setattr(c.queue, "add_rate_limited", lambda key: limited.append(key))
    client.fail("create", "jobs", ApiError(500, "InternalError", "etcd is down"), times=1)
    c.enqueue("default/hello")
    await c.process_next()
    assert limited == ["default/hello"]
    # the next attempt succeeds
    await c.sync("default/hello")
    assert len(jobs(client)) == 1


async def test_replace_keeps_the_status_written_when_the_delete_fails(env):
    from controlplane.client.rest import ApiError
    client, c, events, clock = env
    await client.create(CRONJOBS, cronjob(concurrencyPolicy="Replace"))
    clock.t = ts("2024-01-01T10:01:00") + 1
    await c.sync("default/hello")
    first = jobs(client)[0]["metadata"]["name"]
    clock.t = ts("2024-01-01T10:02:00") + 1
    client.fail("delete", "jobs", ApiError(500, "InternalError", "boom"), times=1)
    with pytest.raises(RuntimeError, match=f"could not replace job default/{first}"):
        await c.sync("default/hello")
    assert events[-1].reason == "FailedDelete" and events[-1].message == "Deleted job: boom"
    assert [j["metadata"]["name"] for j in jobs(client)] == [first]
