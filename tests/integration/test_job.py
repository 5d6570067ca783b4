"""The Kubernetes docs' "Run Jobs" task with the real kubectl against ``controlplane up``:
the Job controller runs the docs' pi Job to completion (the simulated runtime ends a
printing perl one-liner with exit 0), a failing Job ends Failed with BackoffLimitExceeded, and a
Job created from a CronJob runs."""

from __future__ import annotations

import os
import subprocess

import pytest

from tests.integration.conftest import Cluster, start_up, stop

pytestmark = [pytest.mark.integration,
              pytest.mark.skipif(not os.path.exists("/usr/bin/kubectl"), reason="needs /usr/bin/kubectl")]

PI = """apiVersion: batch/v1
kind: Job
metadata:
  name: pi
spec:
  template:
    spec:
      containers:
      - name: pi
        image: perl:5.34.0
        command: ["perl", "-Mbignum=bpi", "-wle", "print bpi(2000)"]
      restartPolicy: Never
  backoffLimit: 4
"""

FAILING = """apiVersion: batch/v1
kind: Job
metadata:
  name: broken
spec:
  template:
    spec:
      containers:
      - name: main
        image: busybox
        command: ["sh", "-c", "exit 1"]
      restartPolicy: Never
  backoffLimit: 1
"""


@pytest.fixture(scope="module")
def cluster(tmp_path_factory):
    tmp = str(tmp_path_factory.mktemp("job-cluster"))
    proc, out, data_dir = start_up(tmp)
    kc = os.path.join(data_dir, "kubeconfig")
    server = next(line for line in open(kc) if "server:" in line).split("server:")[1].strip()
    yield Cluster(data_dir, kc, server, proc, out, os.path.join(tmp, "kube-cache"), "embedded")
    stop(proc)


def test_pi_job_completes(cluster: Cluster):
    assert cluster.kubectl("apply", "-f", "-", input=PI).stdout.strip() == "job.batch/pi created"
    out = cluster.kubectl("wait", "--for=condition=complete", "job/pi", "--timeout=90s", timeout=120).stdout
    assert out.strip() == "job.batch/pi condition met"
    header, row = cluster.kubectl("get", "job", "pi").stdout.splitlines()
    assert header.split() == ["NAME", "STATUS", "COMPLETIONS", "DURATION", "AGE"]
    assert row.split()[:3] == ["pi", "Complete", "1/1"]
    job = cluster.get_json("job", "pi")
    st = job["status"]
    assert (st["succeeded"], st["ready"], st["terminating"], st["uncountedTerminatedPods"]) == (1, 0, 0, {})
    assert [c["type"] for c in st["conditions"]] == ["SuccessCriteriaMet", "Complete"]
    assert st["startTime"] and st["completionTime"]
    pods = cluster.get_json("pods", "--selector=batch.kubernetes.io/job-name=pi")["items"]
    assert len(pods) == 1
    [pod] = pods
    assert pod["status"]["phase"] == "Succeeded"
    assert pod["metadata"].get("finalizers") is None        # counted, so the tracking finalizer is gone
    assert pod["metadata"]["ownerReferences"][0]["kind"] == "Job"
    listed = cluster.kubectl("get", "pods", "--selector=batch.kubernetes.io/job-name=pi").stdout.splitlines()
    assert listed[1].split()[:3] == [pod["metadata"]["name"], "0/1", "Completed"]
    describe = cluster.kubectl("describe", "job", "pi").stdout
    assert "Pods Statuses:    0 Active (0 Ready) / 1 Succeeded / 0 Failed" in describe
    events = [line.split(None, 4) for line in describe.split("Events:", 1)[1].splitlines()[3:] if line.strip()]
    assert [(e[0], e[1], e[3], e[4]) for e in events] == [
        ("Normal", "SuccessfulCreate", "job-controller", f"Created pod: {pod['metadata']['name']}"),
        ("Normal", "Completed", "job-controller", "Job completed")]


def test_failing_job_reaches_backoff_limit(cluster: Cluster):
    cluster.kubectl("apply", "-f", "-", input=FAILING)
    out = cluster.kubectl("wait", "--for=condition=failed", "job/broken", "--timeout=90s", timeout=120).stdout
    assert out.strip() == "job.batch/broken condition met"
    job = cluster.get_json("job", "broken")
    failed = [c for c in job["status"]["conditions"] if c["type"] == "Failed"][0]
    assert (failed["reason"], failed["message"]) == ("BackoffLimitExceeded",
                                                     "Job has reached the specified backoff limit")
    assert job["status"]["failed"] == 2
    assert [c["type"] for c in job["status"]["conditions"]] == ["FailureTarget", "Failed"]
    row = cluster.kubectl("get", "job", "broken").stdout.splitlines()[1]
    assert row.split()[:3] == ["broken", "Failed", "0/1"]
    describe = cluster.kubectl("describe", "job", "broken").stdout
    assert "Pods Statuses:    0 Active (0 Ready) / 0 Succeeded / 2 Failed" in describe
    events = [line.split(None, 4) for line in describe.split("Events:", 1)[1].splitlines()[3:] if line.strip()]
    assert [(e[0], e[1], e[3]) for e in events] == [("Normal", "SuccessfulCreate", "job-controller")] * 2 + [
        ("Warning", "BackoffLimitExceeded", "job-controller")]
    assert events[-1][4] == "Job has reached the specified backoff limit"


def test_job_from_cronjob_runs(cluster: Cluster):
    cluster.kubectl("create", "cronjob", "x", "--image=busybox", "--schedule=0 0 1 1 *", "--",
                    "sh", "-c", "echo hello")
    out = cluster.kubectl("create", "job", "x-manual", "--from=cronjob/x").stdout
    assert out.strip() == "job.batch/x-manual created"
    cluster.kubectl("wait", "--for=condition=complete", "job/x-manual", "--timeout=90s", timeout=120)
    row = cluster.kubectl("get", "job", "x-manual").stdout.splitlines()[1]
    assert row.split()[:3] == ["x-manual", "Complete", "1/1"]
    job = cluster.get_json("job", "x-manual")
    assert job["metadata"]["ownerReferences"][0]["kind"] == "CronJob"


DEADLINE = """apiVersion: batch/v1
kind: Job
metadata:
  name: slow
spec:
  activeDeadlineSeconds: 3
  parallelism: 2
  completions: 2
  template:
    spec:
      containers:
      - name: main
        image: busybox
        command: ["sh", "-c", "sleep 600"]
      restartPolicy: Never
"""


def test_active_deadline_fails_the_job_and_removes_its_pods(cluster: Cluster):
    cluster.kubectl("apply", "-f", "-", input=DEADLINE)
    cluster.kubectl("wait", "--for=condition=failed", "job/slow", "--timeout=90s", timeout=120)
    job = cluster.get_json("job", "slow")
    assert [(c["type"], c["reason"]) for c in job["status"]["conditions"]] == [
        ("FailureTarget", "DeadlineExceeded"), ("Failed", "DeadlineExceeded")]
    assert job["status"]["conditions"][1]["message"] == "Job was active longer than specified deadline"
    assert (job["status"]["failed"], job["status"]["terminating"]) == (2, 0) and "active" not in job["status"]
    left = cluster.get_json("pods", "--selector=batch.kubernetes.io/job-name=slow")["items"]
    assert all(not p["metadata"].get("finalizers") for p in left)
    describe = cluster.kubectl("describe", "job", "slow").stdout
    assert "DeadlineExceeded" in describe and "Deleted pod: " in describe


SUSPENDED = """apiVersion: batch/v1
kind: Job
metadata:
  name: later
spec:
  suspend: true
  template:
    spec:
      containers:
      - name: main
        image: busybox
        command: ["sh", "-c", "echo done"]
      restartPolicy: Never
"""


def test_suspended_job_runs_when_resumed(cluster: Cluster):
    cluster.kubectl("apply", "-f", "-", input=SUSPENDED)
    cluster.kubectl("wait", "--for=condition=suspended", "job/later", "--timeout=60s", timeout=90)
    assert cluster.get_json("pods", "--selector=batch.kubernetes.io/job-name=later")["items"] == []
    row = cluster.kubectl("get", "job", "later").stdout.splitlines()[1]
    assert row.split()[:3] == ["later", "Suspended", "0/1"]
    cluster.kubectl("patch", "job", "later", "--type=strategic", "-p", '{"spec":{"suspend":false}}')
    cluster.kubectl("wait", "--for=condition=complete", "job/later", "--timeout=90s", timeout=120)
    conds = {c["type"]: (c["status"], c.get("reason")) for c in cluster.get_json("job", "later")["status"]["conditions"]}
    assert conds["Suspended"] == ("False", "JobResumed") and conds["Complete"][0] == "True"
    describe = cluster.kubectl("describe", "job", "later").stdout
    assert "Job suspended" in describe and "Job resumed" in describe


TTL = """apiVersion: batch/v1
kind: Job
metadata:
  name: short-lived
spec:
  ttlSecondsAfterFinished: 2
  template:
    spec:
      containers:
      - name: main
        image: busybox
        command: ["sh", "-c", "echo bye"]
      restartPolicy: Never
"""


def test_ttl_after_finished_deletes_the_job(cluster: Cluster):
    cluster.kubectl("apply", "-f", "-", input=TTL)
    cluster.kubectl("wait", "--for=condition=complete", "job/short-lived", "--timeout=90s", timeout=120)
    # the TTL controller DELETEs it with propagationPolicy Foreground, as Kubernetes does: the
    # deletionTimestamp (and the foregroundDeletion finalizer) appear ~2 s after completion
    out = cluster.kubectl("wait", "--for=jsonpath={.metadata.deletionTimestamp}", "job/short-lived",
                          "--timeout=60s", timeout=90).stdout
    assert out.strip() == "job.batch/short-lived condition met"


INDEXED = """apiVersion: batch/v1
kind: Job
metadata:
  name: indexed
spec:
  completions: 3
  parallelism: 3
  completionMode: Indexed
  template:
    spec:
      containers:
      - name: main
        image: busybox
        command: ["sh", "-c", "echo $JOB_COMPLETION_INDEX"]
      restartPolicy: Never
"""


def test_indexed_job_completes_every_index(cluster: Cluster):
    cluster.kubectl("apply", "-f", "-", input=INDEXED)
    cluster.kubectl("wait", "--for=condition=complete", "job/indexed", "--timeout=90s", timeout=120)
    st = cluster.get_json("job", "indexed")["status"]
    assert (st["completedIndexes"], st["succeeded"]) == ("0-2", 3)
    pods = cluster.get_json("pods", "--selector=batch.kubernetes.io/job-name=indexed")["items"]
    by_index = {p["metadata"]["labels"]["batch.kubernetes.io/job-completion-index"]: p for p in pods}
    assert sorted(by_index) == ["0", "1", "2"]
    for ix, p in by_index.items():
        assert p["metadata"]["annotations"]["batch.kubernetes.io/job-completion-index"] == ix
        assert p["spec"]["hostname"] == f"indexed-{ix}" and p["metadata"]["name"].startswith(f"indexed-{ix}-")
    row = cluster.kubectl("get", "job", "indexed").stdout.splitlines()[1]
    assert row.split()[:3] == ["indexed", "Complete", "3/3"]


def test_kubectl_missing_job_errors(cluster: Cluster):
    p = subprocess.run(["/usr/bin/kubectl", "--kubeconfig", cluster.kubeconfig, "--cache-dir", cluster.cache_dir,
                        "get", "job", "nope"], capture_output=True, text=True, timeout=60)
    assert p.returncode == 1 and 'jobs.batch "nope" not found' in p.stderr
