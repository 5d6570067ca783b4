"""The CronJob controller in a real controller-manager process, driven with the real kubectl
("Running Automated Tasks with a CronJob"): Jobs created at schedule times, named by the
scheduled minute, with the scheduled-timestamp annotation and the controllerRef;
``status.active`` / ``lastScheduleTime``; ``kubectl get cronjob`` columns; ``kubectl create
job --from=cronjob/NAME``; suspend. Every wait is on a kubectl watch, with a timeout.
The one-minute ``*/1 * * * *`` walkthrough is marked ``slow``."""

from __future__ import annotations

import calendar
import json
import os
import subprocess
import time

import pytest

from tests.integration.conftest import KUBECTL, LineReader, spawn, start_etcd_and_apiserver, stop

pytestmark = [pytest.mark.integration,
              pytest.mark.skipif(not os.path.exists(KUBECTL), reason="needs /usr/bin/kubectl")]


class Env:
    def __init__(self, server: str, cache: str) -> None:
        self.server = server
        self.cache = cache
        self.watches: list[subprocess.Popen] = []

    def kubectl(self, *args: str, input: str | None = None) -> str:
        p = subprocess.run([KUBECTL, "--server", self.server, "--cache-dir", self.cache, *args], input=input,
                           capture_output=True, text=True, timeout=60)
        assert p.returncode == 0, f"kubectl {' '.join(args)}: {p.stdout}{p.stderr}"
        return p.stdout

    def get_json(self, *args: str) -> dict:
        return json.loads(self.kubectl("get", *args, "-o", "json"))

    def watch(self, *args: str) -> LineReader:
        """``kubectl get ARGS --watch``, its output lines read as they come."""
        p = subprocess.Popen([KUBECTL, "--server", self.server, "--cache-dir", self.cache, "get", *args, "--watch"],
                             stdout=subprocess.PIPE, stderr=subprocess.STDOUT)
        self.watches.append(p)
        return LineReader(p, p.stdout)


@pytest.fixture(scope="module")
def env(tmp_path_factory):
    tmp = tmp_path_factory.mktemp("cronjob")
    procs: list[subprocess.Popen] = []
    e = None
    try:
        server = start_etcd_and_apiserver(procs)
        cm, cm_out = spawn("controller-manager", "--master", server, "--controllers", "cronjob")
        procs.append(cm)
        cm_out.wait_for("controller-manager.synced", 30)
        e = Env(server, str(tmp / "kube-cache"))
        yield e
    finally:
        for p in (e.watches if e else []):
            p.kill()
            p.wait()
        for p in reversed(procs):
            stop(p)


def cronjob_yaml(name: str, schedule: str, extra: str = "") -> str:
    return f"""apiVersion: batch/v1
kind: CronJob
metadata:
  name: {name}
spec:
  schedule: "{schedule}"
{extra}  jobTemplate:
    spec:
      template:
        spec:
          restartPolicy: OnFailure
          containers:
          - name: hello
            image: busybox:1.28
            command: ["/bin/sh", "-c", "date; echo Hello from the Kubernetes cluster"]
"""


def minutes(rfc3339_utc: str) -> int:
    return calendar.timegm(time.strptime(rfc3339_utc, "%Y-%m-%dT%H:%M:%SZ")) // 60


def test_job_created_at_schedule_time_with_annotation_and_owner(env):
    jobs = env.watch("jobs", "-o", "name")
    env.kubectl("apply", "-f", "-", input=cronjob_yaml("fast", "@every 2s"))
    line = jobs.wait_for("job.batch/fast-", 30)
    name = line.strip().split("/", 1)[1]
    job = env.get_json("job", name)
    cj = env.get_json("cronjob", "fast")
    md = job["metadata"]
    assert md["ownerReferences"] == [{"apiVersion": "batch/v1", "kind": "CronJob", "name": "fast",
                                      "uid": cj["metadata"]["uid"], "controller": True,
                                      "blockOwnerDeletion": True}]
    stamp = md["annotations"]["batch.kubernetes.io/cronjob-scheduled-timestamp"]
    assert name == f"fast-{minutes(stamp)}"
    assert job["spec"]["template"]["spec"]["containers"][0]["image"] == "busybox:1.28"
    # the status write follows the create: wait for it on a watch of the CronJob
    cjs = env.watch("cronjob", "fast", "-o", "jsonpath={.status.lastScheduleTime}{\"\\n\"}")
    cjs.wait_for("Z", 30)
    cj = env.get_json("cronjob", "fast")
    assert name in [r["name"] for r in cj["status"]["active"]]
    assert all(r["kind"] == "Job" and r["apiVersion"] == "batch/v1" for r in cj["status"]["active"])
    assert minutes(cj["status"]["lastScheduleTime"]) >= minutes(stamp)
    lines = env.kubectl("get", "cronjob", "fast").splitlines()
    assert lines[0].split() == ["NAME", "SCHEDULE", "TIMEZONE", "SUSPEND", "ACTIVE", "LAST", "SCHEDULE", "AGE"]
    row = lines[1].split()
    assert row[:5] == ["fast", "@every", "2s", "<none>", "False"]
    assert int(row[5]) >= 1 and row[6] != "<none>"


def test_create_job_from_cronjob_and_suspend(env):
    env.kubectl("apply", "-f", "-", input=cronjob_yaml("manual-src", "0 0 1 1 *",
                                                      '  timeZone: "Europe/Paris"\n'))
    events = env.watch("events", "--field-selector", "involvedObject.name=manual-src")
    assert env.kubectl("create", "job", "by-hand", "--from=cronjob/manual-src").strip() == \
        "job.batch/by-hand created"
    job = env.get_json("job", "by-hand")
    assert job["metadata"]["annotations"] == {"cronjob.kubernetes.io/instantiate": "manual"}
    assert job["metadata"]["ownerReferences"][0]["kind"] == "CronJob"
    # the controller sees a Job it did not create, as kube-controller-manager does
    line = events.wait_for("UnexpectedJob", 30)
    assert "Saw a job that the controller did not create or forgot: by-hand" in line
    row = env.kubectl("get", "cronjob", "manual-src").splitlines()[1].split()
    assert row[:10] == ["manual-src", "0", "0", "1", "1", "*", "Europe/Paris", "False", "0", "<none>"]
    env.kubectl("patch", "cronjob", "manual-src", "-p", '{"spec":{"suspend":true}}')
    row = env.kubectl("get", "cronjob", "manual-src").splitlines()[1].split()
    assert row[7] == "True"


@pytest.mark.slow
def test_every_minute_walkthrough(env):
    """The docs' task: ``*/1 * * * *`` creates a Job at the next minute boundary."""
    jobs = env.watch("jobs", "-o", "name")
    env.kubectl("apply", "-f", "-", input=cronjob_yaml("hello", "*/1 * * * *"))
    line = jobs.wait_for("job.batch/hello-", 75)
    name = line.strip().split("/", 1)[1]
    job = env.get_json("job", name)
    stamp = job["metadata"]["annotations"]["batch.kubernetes.io/cronjob-scheduled-timestamp"]
    assert stamp.endswith(":00Z") and name == f"hello-{minutes(stamp)}"
    cjs = env.watch("cronjob", "hello", "-o", "jsonpath={.status.lastScheduleTime}{\"\\n\"}")
    assert cjs.wait_for("Z", 30).strip() == stamp
