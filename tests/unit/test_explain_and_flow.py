"""The explain data follows one pod by uid; a pod bound by spec.nodeName says the scheduler
was bypassed; a Flow with history keeps every object of the root's name; the sequence page
inlines the records safely; every scenario file loads and names manifests that exist."""

from __future__ import annotations

import json
import os

import pytest
from click.testing import CliRunner

from controlplane.cli import scenario as scenarios
from controlplane.cli.manifest import load_manifest
from controlplane.dashboard.sequence import render_sequence_html
from controlplane.trace.explain import bypassed, explain_table, last_step9, render, scheduled_event, step9_records
from controlplane.trace.record import StepRecord, make_record
from controlplane.trace.timeline import Flow


def pod(name: str, uid: str, node: str = "") -> dict:
    return {"kind": "Pod", "metadata": {"name": name, "namespace": "default", "uid": uid},
            "spec": {"nodeName": node} if node else {}}


def step9(name: str, uid: str, chosen: str, t: float) -> StepRecord:
    rec = make_record(9, "scheduler", f"picked {chosen}", pod(name, uid), data={
        "recorded": True, "selectedNode": chosen, "filterPlugins": ["NodeAffinity"], "scorePlugins": [],
        "filter": {"node01": {"NodeAffinity": "passed"},
                   "node02": {"NodeAffinity": "node(s) didn't match Pod's node affinity/selector"}},
        "score": {}, "finalScore": {}, "total": {}, "weights": {}})
    rec.time = t
    return rec


RECORDS = [step9("web", "old", "node02", 1.0), step9("web", "new", "node01", 2.0),
           step9("web", "old", "node02", 3.0)]


@pytest.mark.parametrize("uid,chosen", [
    pytest.param("new", "node01", id="the current pod's record, though an older pod's is newer"),
    pytest.param(None, "node02", id="without a uid: the newest of any pod of the name"),
])
def test_last_step9_by_uid(uid, chosen):
    assert last_step9(RECORDS, "default", "web", uid).data["selectedNode"] == chosen


def test_step9_history_is_every_attempt_oldest_first():
    assert [r.time for r in step9_records(RECORDS, "default", "web")] == [1.0, 2.0, 3.0]
    assert [r.uid for r in step9_records(RECORDS, "default", "web", "old")] == ["old", "old"]


def test_explain_table_is_what_render_prints():
    t = explain_table(RECORDS[1])
    assert t["header"] == ["NODE", "NodeAffinity", "TOTAL", ""] and t["chosen"] == "node01"
    assert t["rows"][0][0] == "node01" and t["rows"][0][-1] == "<= chosen"
    text = render(RECORDS[1])
    for row in t["rows"]:
        assert row[1] in text
    assert "Only node01 passed the filters, so nothing was scored." in text


@pytest.mark.parametrize("p,says", [
    pytest.param(pod("a", "u", "node01"), "spec.nodeName=node01 was set when it was created, so the scheduler "
                 "was bypassed", id="nodeName set: bypassed"),
    pytest.param(pod("a", "u"), None, id="no nodeName: the scheduler's"),
])
def test_bypassed(p, says):
    got = bypassed(p)
    assert (got is None) if says is None else (says in got)


SCHEDULED = {"reason": "Scheduled", "message": "Successfully assigned default/a to node01",
             "involvedObject": {"kind": "Pod", "name": "a", "namespace": "default", "uid": "u"}}


@pytest.mark.parametrize("events,says", [
    pytest.param([SCHEDULED], None, id="its Scheduled event: bound by the scheduler, only the record is gone"),
    pytest.param([{**SCHEDULED, "involvedObject": {**SCHEDULED["involvedObject"], "uid": "older"}}],
                 "was bypassed", id="an earlier pod's Scheduled event of the same name: still bypassed"),
    pytest.param([{**SCHEDULED, "reason": "Pulled"}], "was bypassed", id="other events: bypassed"),
    pytest.param([{"reason": "Scheduled", "objectUid": "u", "message": "m"}], None,
                 id="the dashboard's event view"),
])
def test_a_pod_with_its_scheduled_event_was_not_bypassed(events, says):
    p = pod("a", "u", "node01")
    got = bypassed(p, events)
    assert (got is None) if says is None else (says in got)
    assert (scheduled_event(p, events) is not None) == (says is None)


@pytest.mark.parametrize("history,uids", [
    pytest.param(False, {"new"}, id="current object only"),
    pytest.param(True, {"old", "new"}, id="--all: every object of the name"),
])
def test_flow_follows_the_root_uid(history, uids):
    f = Flow("Pod", "default", "web", history=history)
    f.set_root("new")
    for r in sorted(RECORDS, key=lambda r: r.time):
        f.offer(r)
    assert {r.uid for r in f.records} == uids


def test_sequence_page_inlines_records_and_escapes_script_ends():
    rec = make_record(2, "apiserver", "received POST pods from </script><b>x", pod("p", "u"))
    page = render_sequence_html([rec], "t <1>", rec.time)
    assert page.startswith("<!doctype html>") and "t &lt;1&gt;" in page
    assert "</script><b>" not in page and "<\\/script><b>x" in page
    assert "window.CPSeq" in page  # the dashboard's own seq.js, inlined
    data = page.split("const records = ", 1)[1].split(";\n", 1)[0]
    assert json.loads(data.replace("<\\/", "</"))[0]["action"] == rec.action


def test_every_scenario_loads_and_its_manifests_exist():
    found = scenarios.load_all()
    names = {s.name for s in found}
    assert {"node-name", "node-selector", "node-affinity-required", "node-affinity-preferred", "node-affinity-both",
            "pod-affinity", "pod-affinity-relabel", "pod-anti-affinity-preferred", "pod-anti-affinity-required",
            "seed001-node-selector", "seed001-init-containers"} <= names
    for sc in found:
        assert sc.seed in ("000", "001") and sc.article and sc.title
        assert any("expect" in st for st in sc.steps)
        for st in sc.steps:
            if "apply" in st:
                assert load_manifest(os.path.join(scenarios.EXAMPLES, st["apply"]))["metadata"]["name"]


@pytest.mark.parametrize("args,code,text", [
    pytest.param(["--list"], 0, "pod-anti-affinity-required", id="--list"),
    pytest.param(["--scenario", "nope"], 1, "no scenario 'nope'; known: ", id="unknown scenario"),
    pytest.param(["--scenario", "node-name", "-f", "x.yaml"], 2, "--scenario and -f", id="both"),
])
def test_demo_scenario_options(args, code, text):
    from controlplane.cli import demo
    r = CliRunner().invoke(demo.command, args)
    assert r.exit_code == code and text in r.output, r.output


@pytest.mark.parametrize("body,error", [
    pytest.param("name: x\nsteps: [{wait: 1}]\n", "one of label, apply, expect", id="unknown step"),
    pytest.param("name: x\nsteps: [{expect: {node: a}}]\n", "pod or pods", id="expect without pods"),
    pytest.param("name: x\nsteps: [{expect: {pod: a, nod: b}}]\n", "pod or pods", id="unknown check"),
    pytest.param("steps: []\n", "needs name and steps", id="no name"),
])
def test_malformed_scenario_is_one_line(tmp_path, body, error):
    f = tmp_path / "s.yaml"
    f.write_text(body)
    with pytest.raises(scenarios.ScenarioError, match=error):
        scenarios.load(str(f))
