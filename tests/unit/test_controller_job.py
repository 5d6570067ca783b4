"""The Job and TTL-after-finished controllers against the in-memory fake API
(pkg/controller/job, pkg/controller/ttlafterfinished)."""

from __future__ import annotations

import copy

import pytest

from components.controller_manager.job import (
    JOB_COMPLETION_INDEX,
    JOB_TRACKING_FINALIZER,
    JOBS,
    BackoffRecord,
    JobController,
    format_indexes,
    match_pod_failure_policy,
    parse_indexes,
)
from components.controller_manager.testing import fake_context, settle
from components.controller_manager.ttlafterfinished import TTLAfterFinishedController
from controlplane import apitime
from controlplane.api.groups.batch import prepare_job_create
from controlplane.api.resources import PODS
from controlplane.client.testing import FakeClock


def job(name="pi", **spec):
    obj = {"apiVersion": "batch/v1", "kind": "Job",
           "metadata": {"name": name, "namespace": "default", "uid": f"uid-{name}"},
           "spec": {"backoffLimit": 6, "template": {"spec": {
               "restartPolicy": "Never", "containers": [{"name": "pi", "image": "perl:5.34.0"}]}}, **spec}}
    prepare_job_create(obj)
    return obj


def make(clock=None):
    client, ctx, events = fake_context(clock=clock or FakeClock())
    return client, ctx, events, JobController(ctx)


def pods(client):
    return client.all(PODS)


async def finish(client, pod, phase, exit_code=None, when=None):
    """A stand-in kubelet: the pod ends in ``phase`` (a container terminated with ``exit_code``)."""
    p = client.stored(PODS, pod["metadata"]["name"], "default")
    new = copy.deepcopy(p)
    code = exit_code if exit_code is not None else (0 if phase == "Succeeded" else 1)
    new["status"] = {"phase": phase, "containerStatuses": [{"name": "pi", "restartCount": 0, "state": {
        "terminated": {"exitCode": code, "reason": "Completed" if code == 0 else "Error",
                       "finishedAt": when or apitime.format_time(1_700_000_000.0)}}}]}
    await client.update_status(PODS, new)


def conds(client, name="pi"):
    return [(c["type"], c["status"], c.get("reason")) for c in
            (client.stored(JOBS, name, "default").get("status") or {}).get("conditions") or []]


def status(client, name="pi"):
    return client.stored(JOBS, name, "default")["status"]


async def test_creates_pods_with_finalizer_labels_and_owner():
    client, ctx, events, c = make()
    j = client.seed(JOBS, job())
    await settle(c)
    [p] = pods(client)
    md = p["metadata"]
    assert md["generateName"] == "pi-" and md["finalizers"] == [JOB_TRACKING_FINALIZER]
    assert md["labels"]["batch.kubernetes.io/job-name"] == "pi"
    assert md["labels"]["batch.kubernetes.io/controller-uid"] == j["metadata"]["uid"]
    assert md["ownerReferences"] == [{"apiVersion": "batch/v1", "kind": "Job", "name": "pi",
                                      "uid": j["metadata"]["uid"], "controller": True,
                                      "blockOwnerDeletion": True}]
    st = status(client)
    assert st["active"] == 1 and st["ready"] == 0 and st["terminating"] == 0 and st["startTime"]
    assert st["uncountedTerminatedPods"] == {}
    assert [(e[3], e[4]) for e in events] == [("SuccessfulCreate", f"Created pod: {md['name']}")]
    assert all(e[0] == "job-controller" for e in events)


async def test_completes_after_pod_succeeds_and_removes_finalizer():
    client, ctx, events, c = make()
    client.seed(JOBS, job())
    await settle(c)
    [p] = pods(client)
    await finish(client, p, "Succeeded")
    await settle(c)
    [p] = pods(client)
    assert p["metadata"].get("finalizers") in (None, [])
    st = status(client)
    assert st["succeeded"] == 1 and "active" not in st and st["uncountedTerminatedPods"] == {}
    assert conds(client) == [("SuccessCriteriaMet", "True", "CompletionsReached"),
                             ("Complete", "True", "CompletionsReached")]
    assert st["completionTime"] == st["conditions"][1]["lastTransitionTime"]
    assert ("Completed", "Job completed") in [(e[3], e[4]) for e in events]
    # the uid went through uncountedTerminatedPods before being counted
    writes = [a.object["status"] for a in client.actions("update", "jobs") if a.subresource == "status"]
    assert any(w["uncountedTerminatedPods"].get("succeeded") == [p["metadata"]["uid"]] for w in writes)


@pytest.mark.parametrize("completions,parallelism,first_wave", [
    pytest.param(5, 2, 2, id="parallelism-caps"),
    pytest.param(2, 5, 2, id="completions-cap"),
    pytest.param(None, 3, 3, id="work-queue"),
])
async def test_completions_and_parallelism(completions, parallelism, first_wave):
    client, ctx, events, c = make()
    spec = {"parallelism": parallelism}
    if completions is not None:
        spec["completions"] = completions
    client.seed(JOBS, job(**spec))
    await settle(c)
    assert len(pods(client)) == first_wave
    total = 0
    for _ in range(10):
        running = [p for p in pods(client) if p["status"]["phase"] == "Pending"]
        if not running:
            break
        for p in running:
            await finish(client, p, "Succeeded")
            total += 1
        await settle(c)
    assert total == (completions or parallelism)
    assert status(client)["succeeded"] == total
    assert conds(client)[-1] == ("Complete", "True", "CompletionsReached")


async def test_indexed_job_pods_and_completed_indexes():
    client, ctx, events, c = make()
    client.seed(JOBS, job(completions=3, parallelism=3, completionMode="Indexed"))
    await settle(c)
    ps = sorted(pods(client), key=lambda p: p["metadata"]["annotations"][JOB_COMPLETION_INDEX])
    assert [p["metadata"]["annotations"][JOB_COMPLETION_INDEX] for p in ps] == ["0", "1", "2"]
    for i, p in enumerate(ps):
        assert p["metadata"]["labels"][JOB_COMPLETION_INDEX] == str(i)
        assert p["metadata"]["generateName"] == f"pi-{i}-"
        assert p["spec"]["hostname"] == f"pi-{i}"
        assert {"name": "JOB_COMPLETION_INDEX", "valueFrom": {"fieldRef": {
            "fieldPath": "metadata.labels['batch.kubernetes.io/job-completion-index']"}}} \
            in p["spec"]["containers"][0]["env"]
    await finish(client, ps[0], "Succeeded")
    await finish(client, ps[2], "Succeeded")
    await settle(c)
    assert status(client)["completedIndexes"] == "0,2" and status(client)["succeeded"] == 2
    await finish(client, ps[1], "Failed")
    await settle(c)
    new = [p for p in pods(client) if p["status"]["phase"] == "Pending"]
    assert new == []          # the replacement for index 1 waits for the back-off
    assert c.delays and c.delays[-1][1] == pytest.approx(10.0)
    ctx.clock.advance(11)
    c.enqueue("default/pi")
    await settle(c)
    [repl] = [p for p in pods(client) if p["status"]["phase"] == "Pending"]
    assert repl["metadata"]["annotations"][JOB_COMPLETION_INDEX] == "1"
    await finish(client, repl, "Succeeded")
    await settle(c)
    assert status(client)["completedIndexes"] == "0-2" and status(client)["failed"] == 1
    assert conds(client)[-1][0] == "Complete"


async def test_backoff_then_backoff_limit_exceeded():
    client, ctx, events, c = make()
    client.seed(JOBS, job(backoffLimit=1))
    await settle(c)
    [p] = pods(client)
    await finish(client, p, "Failed", exit_code=1)
    await settle(c)
    assert status(client)["failed"] == 1 and len(pods(client)) == 1
    assert c.delays[-1] == ("default/pi", pytest.approx(10.0))
    ctx.clock.advance(10)
    c.enqueue("default/pi")
    await settle(c)
    p2 = [p for p in pods(client) if p["status"]["phase"] == "Pending"][0]
    await finish(client, p2, "Failed", exit_code=1, when=apitime.format_time(ctx.clock()))
    await settle(c)
    st = status(client)
    assert st["failed"] == 2 and "completionTime" not in st
    assert conds(client) == [("FailureTarget", "True", "BackoffLimitExceeded"),
                             ("Failed", "True", "BackoffLimitExceeded")]
    assert st["conditions"][1]["message"] == "Job has reached the specified backoff limit"
    assert ("Warning", "BackoffLimitExceeded", "Job has reached the specified backoff limit") in \
        [(e[2], e[3], e[4]) for e in events]
    assert all(not p["metadata"].get("finalizers") for p in pods(client))


@pytest.mark.parametrize("failures,elapsed,left", [
    pytest.param(0, 0, 0, id="no-failure"),
    pytest.param(1, 0, 10, id="first"),
    pytest.param(3, 5, 35, id="doubling"),
    pytest.param(10, 0, 600, id="capped"),
    pytest.param(2, 30, 0, id="elapsed"),
])
def test_backoff_remaining_time(failures, elapsed, left):
    rec = BackoffRecord(failures, 100.0)
    assert rec.remaining(100.0 + elapsed) == pytest.approx(left)


async def test_active_deadline_exceeded_deletes_pods():
    clock = FakeClock()
    client, ctx, events, c = make(clock)
    client.seed(JOBS, job(activeDeadlineSeconds=30, parallelism=2, completions=4))
    await settle(c)
    assert len(pods(client)) == 2 and c.delays[-1] == ("default/pi", pytest.approx(30))
    clock.advance(31)
    c.enqueue("default/pi")
    await settle(c)
    # the pods are DELETEd with their finalizer, counted as failed, then the finalizer goes
    # (the fake apiserver has no grace period: they are gone at once)
    assert len(client.actions("delete", "pods")) == 2 and pods(client) == []
    assert conds(client) == [("FailureTarget", "True", "DeadlineExceeded"), ("Failed", "True", "DeadlineExceeded")]
    assert status(client)["failed"] == 2 and status(client)["terminating"] == 0
    assert ("DeadlineExceeded", "Job was active longer than specified deadline") in [(e[3], e[4]) for e in events]


async def test_suspend_deletes_pods_and_resume_recreates():
    client, ctx, events, c = make()
    client.seed(JOBS, job(parallelism=2, completions=2))
    await settle(c)
    assert len(pods(client)) == 2
    j = client.stored(JOBS, "pi", "default")
    new = copy.deepcopy(j)
    new["spec"]["suspend"] = True
    await client.update(JOBS, new)
    await settle(c)
    assert pods(client) == []     # finalizer removed, then deleted
    assert conds(client) == [("Suspended", "True", "JobSuspended")]
    assert [(e[3], e[4]) for e in events].count(("Suspended", "Job suspended")) == 1
    assert sum(1 for e in events if e[3] == "SuccessfulDelete") == 2
    new = copy.deepcopy(client.stored(JOBS, "pi", "default"))
    new["spec"]["suspend"] = False
    await client.update(JOBS, new)
    await settle(c)
    assert len(pods(client)) == 2
    assert conds(client) == [("Suspended", "False", "JobResumed")]
    assert ("Resumed", "Job resumed") in [(e[3], e[4]) for e in events]


async def test_created_suspended_has_no_start_time():
    client, ctx, events, c = make()
    client.seed(JOBS, job(suspend=True))
    await settle(c)
    assert pods(client) == [] and "startTime" not in status(client)
    assert conds(client) == [("Suspended", "True", "JobSuspended")]


def pfp(*rules):
    return {"rules": list(rules)}


async def test_pod_failure_policy_fail_job():
    client, ctx, events, c = make()
    client.seed(JOBS, job(podFailurePolicy=pfp(
        {"action": "FailJob", "onExitCodes": {"containerName": "pi", "operator": "In", "values": [42]}})))
    await settle(c)
    [p] = pods(client)
    await finish(client, p, "Failed", exit_code=42)
    await settle(c)
    assert conds(client) == [("FailureTarget", "True", "PodFailurePolicy"), ("Failed", "True", "PodFailurePolicy")]
    msg = status(client)["conditions"][1]["message"]
    assert msg == (f"Container pi for pod default/{p['metadata']['name']} failed with exit code 42 "
                   f"matching FailJob rule at index 0")


async def test_pod_failure_policy_ignore_does_not_count():
    client, ctx, events, c = make()
    client.seed(JOBS, job(backoffLimit=0, podFailurePolicy=pfp(
        {"action": "Ignore", "onPodConditions": [{"type": "DisruptionTarget"}]})))
    await settle(c)
    [p] = pods(client)
    stored = copy.deepcopy(client.stored(PODS, p["metadata"]["name"], "default"))
    stored["status"] = {"phase": "Failed", "conditions": [{"type": "DisruptionTarget", "status": "True"}]}
    await client.update_status(PODS, stored)
    await settle(c)
    assert "failed" not in status(client) and conds(client) == []
    # not counted, but the back-off still applies (newBackoffRecord takes every new failed pod)
    assert c.delays[-1][1] == pytest.approx(10.0)
    ctx.clock.advance(10)
    c.enqueue("default/pi")
    await settle(c)
    assert len([x for x in pods(client) if x["status"]["phase"] == "Pending"]) == 1


@pytest.mark.parametrize("rule,code,expect", [
    pytest.param({"action": "Count", "onExitCodes": {"operator": "In", "values": [3]}}, 3, (None, True, "Count"),
                 id="count"),
    pytest.param({"action": "Ignore", "onExitCodes": {"operator": "NotIn", "values": [1]}}, 2,
                 (None, False, "Ignore"), id="notin-ignore"),
    pytest.param({"action": "Ignore", "onExitCodes": {"operator": "NotIn", "values": [1]}}, 1,
                 (None, True, None), id="no-match"),
])
def test_match_pod_failure_policy(rule, code, expect):
    pod = {"metadata": {"name": "p", "namespace": "default"}, "status": {"phase": "Failed", "containerStatuses": [
        {"name": "c", "state": {"terminated": {"exitCode": code}}}]}}
    assert match_pod_failure_policy(pfp(rule), pod) == expect


@pytest.mark.parametrize("text,n,fmt", [
    pytest.param("", 3, "", id="empty"),
    pytest.param("0-2,4", 5, "0-2,4", id="interval"),
    pytest.param("0,1,2,7", 5, "0-2", id="beyond-completions-dropped"),
    pytest.param("3-4", 5, "3,4", id="a-run-of-two-as-two-numbers"),
])
def test_completed_indexes_round_trip(text, n, fmt):
    assert format_indexes(parse_indexes(text, n)) == fmt


async def test_orphan_pod_finalizer_removed_when_job_deleted():
    client, ctx, events, c = make()
    client.seed(JOBS, job())
    await settle(c)
    await client.delete(JOBS, "pi", "default")
    await settle(c)
    [p] = pods(client)
    assert not p["metadata"].get("finalizers")


async def test_managed_by_other_controller_is_skipped():
    client, ctx, events, c = make()
    client.seed(JOBS, job(managedBy="example.com/other"))
    await settle(c)
    assert pods(client) == [] and status(client) == {}


# ----------------------------------------------------------------------------- ttl-after-finished

def finished_job(ttl, finished_at):
    j = job(ttlSecondsAfterFinished=ttl)
    t = apitime.format_time(finished_at)
    j["status"] = {"conditions": [{"type": "Complete", "status": "True", "lastTransitionTime": t}]}
    return j


async def test_ttl_deletes_job_after_expiry_with_foreground():
    clock = FakeClock()
    client, ctx, _ = fake_context(clock=clock)
    c = TTLAfterFinishedController(ctx)
    client.seed(JOBS, finished_job(60, clock() - 10))
    await settle(c)
    assert client.actions("delete") == [] and c.delays == [("default/pi", pytest.approx(50))]
    clock.advance(51)
    c.enqueue("default/pi")
    await settle(c)
    [d] = client.actions("delete", "jobs")
    assert d.options == {"propagationPolicy": "Foreground", "preconditions": {"uid": "uid-pi"}}


@pytest.mark.parametrize("obj", [
    pytest.param(job(ttlSecondsAfterFinished=0), id="not-finished"),
    pytest.param({**finished_job(0, 0), "spec": {**job()["spec"]}}, id="no-ttl"),
])
async def test_ttl_leaves_jobs_alone(obj):
    client, ctx, _ = fake_context(clock=FakeClock())
    c = TTLAfterFinishedController(ctx)
    client.seed(JOBS, obj)
    await settle(c)
    assert client.actions("delete") == [] and c.delays == []


async def test_ttl_zero_deletes_at_once():
    clock = FakeClock()
    client, ctx, _ = fake_context(clock=clock)
    c = TTLAfterFinishedController(ctx)
    client.seed(JOBS, finished_job(0, clock()))
    await settle(c)
    assert len(client.actions("delete", "jobs")) == 1


# ----------------------------------------------------------------------------- more job cases

async def test_success_policy_completes_and_deletes_the_rest():
    client, ctx, events, c = make()
    client.seed(JOBS, job(completions=3, parallelism=3, completionMode="Indexed",
                          successPolicy={"rules": [{"succeededIndexes": "0"}]}))
    await settle(c)
    ps = {p["metadata"]["annotations"][JOB_COMPLETION_INDEX]: p for p in pods(client)}
    await finish(client, ps["0"], "Succeeded")
    await settle(c)
    st = status(client)
    assert conds(client) == [("SuccessCriteriaMet", "True", "SuccessPolicy"), ("Complete", "True", "SuccessPolicy")]
    assert st["conditions"][1]["message"] == "Matched rules at index 0"
    assert st["completedIndexes"] == "0" and st["succeeded"] == 1
    assert len(client.actions("delete", "pods")) == 2


@pytest.mark.parametrize("policy,succeeded,expect", [
    pytest.param({"rules": [{"succeededIndexes": "0-2"}]}, {0, 1}, None, id="indexes-missing"),
    pytest.param({"rules": [{"succeededIndexes": "0-2", "succeededCount": 2}]}, {0, 2}, "Matched rules at index 0",
                 id="indexes-with-count"),
    pytest.param({"rules": [{"succeededIndexes": "7"}, {"succeededCount": 1}]}, {3}, "Matched rules at index 1",
                 id="count-only-second-rule"),
])
def test_match_success_policy(policy, succeeded, expect):
    from components.controller_manager.job import match_success_policy
    assert match_success_policy(policy, 5, succeeded) == expect


async def test_restart_policy_on_failure_counts_restarts():
    client, ctx, events, c = make()
    j = job(backoffLimit=2)
    j["spec"]["template"]["spec"]["restartPolicy"] = "OnFailure"
    client.seed(JOBS, j)
    await settle(c)
    [p] = pods(client)
    stored = copy.deepcopy(client.stored(PODS, p["metadata"]["name"], "default"))
    stored["status"] = {"phase": "Running", "containerStatuses": [{"name": "pi", "restartCount": 2,
                                                                   "state": {"running": {}}}]}
    await client.update_status(PODS, stored)
    await settle(c)
    assert conds(client)[0] == ("FailureTarget", "True", "BackoffLimitExceeded")
    assert conds(client)[-1] == ("Failed", "True", "BackoffLimitExceeded")


async def test_indexed_duplicate_index_pod_is_deleted():
    client, ctx, events, c = make()
    client.seed(JOBS, job(completions=2, parallelism=2, completionMode="Indexed"))
    await settle(c)
    p0 = next(p for p in pods(client) if p["metadata"]["annotations"][JOB_COMPLETION_INDEX] == "0")
    dup = copy.deepcopy(p0)
    dup["metadata"] = {k: v for k, v in p0["metadata"].items() if k not in ("uid", "resourceVersion", "name",
                                                                             "creationTimestamp")}
    dup["metadata"]["name"] = "pi-0-dup"
    await client.create(PODS, dup, "default")
    await settle(c)
    indexes = sorted(p["metadata"]["annotations"][JOB_COMPLETION_INDEX] for p in pods(client))
    assert indexes == ["0", "1"] and len(client.actions("delete", "pods")) == 1


async def test_orphan_pod_with_matching_labels_is_adopted():
    client, ctx, events, c = make()
    j = client.seed(JOBS, job(suspend=True))
    labels = j["spec"]["template"]["metadata"]["labels"]
    client.seed(PODS, {"metadata": {"name": "stray", "namespace": "default", "labels": dict(labels)},
                       "spec": {"containers": [{"name": "pi", "image": "perl"}]}})
    await settle(c)
    patches = client.actions("patch", "pods")
    assert patches and patches[0].patch["metadata"]["ownerReferences"][0]["uid"] == j["metadata"]["uid"]


async def test_create_failure_records_failed_create_and_retries():
    from controlplane.client.rest import ApiError
    client, ctx, events, c = make()
    client.fail("create", "pods", ApiError(403, "Forbidden", 'pods "x" is forbidden: exceeded quota'), times=1)
    client.seed(JOBS, job())
    await c.process_next()
    assert ("Warning", "FailedCreate", 'Error creating: pods "x" is forbidden: exceeded quota') in \
        [(e[2], e[3], e[4]) for e in events]
    assert pods(client) == []
    assert c.expectations.satisfied("default/pi")


@pytest.mark.parametrize("finished", [pytest.param(False, id="running"), pytest.param(True, id="complete")])
async def test_resync_without_changes_writes_nothing(finished):
    client, ctx, events, c = make()
    client.seed(JOBS, job())
    await settle(c)
    if finished:
        await finish(client, pods(client)[0], "Succeeded")
        await settle(c)
    client.clear_actions()
    c.enqueue("default/pi")
    await settle(c)
    assert client.writes() == []


async def test_unknown_completion_mode_is_skipped_with_an_event():
    client, ctx, events, c = make()
    client.seed(JOBS, job(completionMode="Sometimes"))
    await settle(c)
    assert pods(client) == []
    assert [(e[2], e[3], e[4]) for e in events] == [
        ("Warning", "UnknownCompletionMode", "Skipped Job sync because completion mode is unknown")]


# ----------------------------------------------------------------------------- backoffLimitPerIndex

def index_of(p):
    return p["metadata"]["annotations"][JOB_COMPLETION_INDEX]


async def test_backoff_limit_per_index_fails_an_index_then_the_job():
    from components.controller_manager.job import JOB_INDEX_FAILURE_COUNT
    client, ctx, events, c = make()
    client.seed(JOBS, job(completions=2, parallelism=2, completionMode="Indexed", backoffLimitPerIndex=1,
                          backoffLimit=2147483647))
    await settle(c)
    ps = {index_of(p): p for p in pods(client)}
    assert {ix: p["metadata"]["annotations"][JOB_INDEX_FAILURE_COUNT] for ix, p in ps.items()} == {"0": "0", "1": "0"}
    assert status(client)["failedIndexes"] == ""
    await finish(client, ps["0"], "Failed", when=apitime.format_time(ctx.clock()))
    await settle(c)
    # the failed pod keeps its finalizer until its replacement exists; the index waits 10 s
    assert client.stored(PODS, ps["0"]["metadata"]["name"], "default")["metadata"]["finalizers"] == \
        [JOB_TRACKING_FINALIZER]
    assert c.delays[-1][1] == pytest.approx(10.0)
    ctx.clock.advance(10)
    c.enqueue("default/pi")
    await settle(c)
    [repl] = [p for p in pods(client) if p["status"]["phase"] == "Pending" and index_of(p) == "0"]
    assert repl["metadata"]["annotations"][JOB_INDEX_FAILURE_COUNT] == "1"
    assert not client.stored(PODS, ps["0"]["metadata"]["name"], "default")["metadata"].get("finalizers")
    await finish(client, repl, "Failed")
    await finish(client, ps["1"], "Succeeded")
    await settle(c)
    st = status(client)
    assert (st["failedIndexes"], st["completedIndexes"], st["failed"], st["succeeded"]) == ("0", "1", 2, 1)
    assert conds(client) == [("FailureTarget", "True", "FailedIndexes"), ("Failed", "True", "FailedIndexes")]
    assert st["conditions"][1]["message"] == "Job has failed indexes"


async def test_max_failed_indexes_exceeded():
    client, ctx, events, c = make()
    client.seed(JOBS, job(completions=3, parallelism=3, completionMode="Indexed", backoffLimitPerIndex=0,
                          maxFailedIndexes=0, backoffLimit=2147483647))
    await settle(c)
    p0 = next(p for p in pods(client) if index_of(p) == "0")
    await finish(client, p0, "Failed")
    await settle(c)
    assert conds(client)[-1] == ("Failed", "True", "MaxFailedIndexesExceeded")
    assert status(client)["conditions"][-1]["message"] == \
        "Job has exceeded the specified maximal number of failed indexes"
    assert len(client.actions("delete", "pods")) == 2      # the other indexes' pods


async def test_fail_index_rule_fails_only_that_index():
    client, ctx, events, c = make()
    client.seed(JOBS, job(completions=2, parallelism=2, completionMode="Indexed", backoffLimitPerIndex=5,
                          backoffLimit=2147483647, podFailurePolicy=pfp(
                              {"action": "FailIndex", "onExitCodes": {"operator": "In", "values": [7]}})))
    await settle(c)
    ps = {index_of(p): p for p in pods(client)}
    await finish(client, ps["1"], "Failed", exit_code=7)
    await settle(c)
    assert status(client)["failedIndexes"] == "1" and conds(client) == []
    assert [p for p in pods(client) if p["status"]["phase"] == "Pending" and index_of(p) == "1"] == []
