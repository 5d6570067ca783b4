"""``controlplane trace -o perfetto``: the step records as Chrome Trace Event JSON, against a golden file."""

from __future__ import annotations

import json
import os

import pytest

from controlplane.trace.perfetto import chrome_trace
from controlplane.trace.record import StepRecord

GOLDEN = os.path.join(os.path.dirname(__file__), "golden", "perfetto_flow.json")
T0 = 1764464523.0

D = {"kind": "Deployment", "namespace": "default", "name": "web", "uid": "d1"}
RS = {"kind": "ReplicaSet", "namespace": "default", "name": "web-6645fd9b74", "uid": "r1"}
POD = {"kind": "Pod", "namespace": "default", "name": "web-6645fd9b74-x1", "uid": "p1"}

#: one Deployment's flow, a record per step (out of order on purpose: records arrive in batches)
RECORDS = [
    StepRecord(9, "scheduler", "filter, score, pick node01", POD, ["r1"], "", T0 + 0.090, "2 feasible"),
    StepRecord(1, "scheduler", "scheduler watching pods", {"kind": "Pod", "name": ""}, [], "10", T0 - 5.0),
    StepRecord(2, "apiserver", "create received from kubectl", D, [], "", T0, "POST"),
    StepRecord(3, "apiserver", "stored in etcd (txn create-if-absent)", D, [], "11", T0 + 0.004, "201 Created"),
    StepRecord(4, "apiserver", "etcd event reached the watch cache", D, [], "11", T0 + 0.005),
    StepRecord(5, "controller-manager", "ADDED Deployment on watch", D, [], "11", T0 + 0.008),
    StepRecord(6, "controller-manager", "create ReplicaSet web-6645fd9b74", RS, ["d1"], "", T0 + 0.010),
    StepRecord(7, "apiserver", "pod stored in etcd", POD, ["r1"], "13", T0 + 0.030),
    StepRecord(8, "apiserver", "pod event reached the watch cache", POD, ["r1"], "13", T0 + 0.031),
    StepRecord(10, "scheduler", "POST pods/web-6645fd9b74-x1/binding → node01", POD, ["r1"], "", T0 + 0.095),
    StepRecord(11, "apiserver", "MODIFIED fanned out", POD, ["r1"], "14", T0 + 0.100),
    StepRecord(12, "kubelet", "containers started: web", POD, ["r1"], "", T0 + 0.300, "StartContainer"),
    StepRecord(13, "apiserver", "pod status stored", POD, ["r1"], "16", T0 + 0.320, "Running"),
]


def render() -> str:
    return json.dumps(chrome_trace(RECORDS), indent=1, sort_keys=True) + "\n"


def test_perfetto_output_matches_the_golden_file():
    if os.environ.get("CP_UPDATE_GOLDEN"):
        with open(GOLDEN, "w") as f:
            f.write(render())
    with open(GOLDEN) as f:
        assert render() == f.read()


@pytest.mark.parametrize("check", [
    pytest.param(lambda doc: doc["displayTimeUnit"] == "ms", id="display unit"),
    pytest.param(lambda doc: {e["ph"] for e in doc["traceEvents"]} == {"M", "i", "X"}, id="event phases"),
    pytest.param(lambda doc: sum(e["ph"] == "i" for e in doc["traceEvents"]) == len(RECORDS),
                 id="an instant per record"),
    pytest.param(lambda doc: min(e["ts"] for e in doc["traceEvents"] if e["ph"] == "i") == 0,
                 id="times from the earliest record"),
    pytest.param(lambda doc: all(e["ts"] >= 0 and isinstance(e["pid"], int) for e in doc["traceEvents"]
                                 if "ts" in e), id="non-negative microseconds"),
    pytest.param(lambda doc: {e["args"]["name"] for e in doc["traceEvents"] if e["name"] == "process_name"}
                 == {"client", "apiserver", "etcd", "controller-manager", "scheduler", "kubelet"},
                 id="a process per lane"),
])
def test_perfetto_document_shape(check):
    assert check(chrome_trace(RECORDS))


def test_perfetto_of_no_records_is_an_empty_trace():
    doc = chrome_trace([])
    assert [e for e in doc["traceEvents"] if e["ph"] != "M"] == []
