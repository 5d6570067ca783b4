"""The step-9 trace record's ``data`` (per-node filter verdicts and scores) for a
scheduled and an unschedulable pod, and ``controlplane explain``'s table built from it."""

from __future__ import annotations

import random

from components.scheduler.scheduler import Scheduler
from controlplane.trace.explain import last_step9, render
from controlplane.trace.record import StepRecord


class Trace:
    def __init__(self) -> None:
        self.records: list[StepRecord] = []

    def emit(self, step, action, obj=None, detail="", kind=None, resource_version=None, data=None):
        from controlplane.trace.record import make_record
        rec = make_record(step, "scheduler", action, obj, detail, kind, resource_version, data)
        self.records.append(rec)
        return rec


def node(name, cpu="2", **labels):
    return {"metadata": {"name": name, "labels": {"kubernetes.io/hostname": name, **labels}},
            "status": {"allocatable": {"cpu": cpu, "memory": "4Gi", "pods": "10"}}}


def pod(name, cpu="100m", **spec):
    return {"apiVersion": "v1", "kind": "Pod",
            "metadata": {"name": name, "namespace": "default", "uid": "u-" + name},
            "spec": {"containers": [{"name": "c", "image": "nginx",
                                     "resources": {"requests": {"cpu": cpu}}}], **spec}}


class Binder:
    name = "DefaultBinder"

    async def bind(self, state, pi, node_name):
        from components.scheduler.framework import Status
        return Status()


async def run(s, p):
    s.on_pod_add(p)
    s.schedule_one(s.queue.pop_nowait())
    await s.wait_idle()


async def test_scheduled_pod_record_data_and_table():
    t = Trace()
    s = Scheduler(None, trace=t, rng=random.Random(0), binder_override=Binder())
    s.on_node_add(node("node01", cpu="1"))
    s.on_node_add(node("node02", cpu="4"))
    s.on_node_add(node("node03", kgc="x"))
    await run(s, pod("web", cpu="500m", nodeSelector={"kubernetes.io/hostname": "node02"}))
    rec = last_step9(t.records, "default", "web")
    d = rec.data
    assert d["selectedNode"] == "node02" and d["recorded"] is True
    assert d["filter"]["node01"]["NodeAffinity"] == "node(s) didn't match Pod's node affinity/selector"
    assert d["filter"]["node02"]["NodeResourcesFit"] == "passed"
    assert "NodeResourcesFit" not in d["filter"]["node01"]  # an earlier filter rejected it
    text = render(StepRecord.from_dict(rec.to_dict()))  # survives the JSON round trip
    lines = text.splitlines()
    row = next(l for l in lines if l.startswith("node02"))
    assert row.endswith("<= chosen")
    assert "node(s) didn't match Pod's node affinity/selector" in next(l for l in lines if l.startswith("node01"))
    assert "Only node02 passed the filters" in text

    await run(s, pod("api", cpu="500m"))
    d = last_step9(t.records, "default", "api").data
    assert set(d["total"]) == {"node01", "node02", "node03"}
    for n, per in d["finalScore"].items():
        assert sum(per.values()) == d["total"][n]
        for p, v in per.items():
            assert v == d["score"][n][p] * d["weights"][p]
    table = render(last_step9(t.records, "default", "api"))
    chosen = next(l for l in table.splitlines() if l.endswith("<= chosen"))
    assert chosen.split()[0] == d["selectedNode"]
    assert "TaintToleration(x3)" in table


async def test_unschedulable_pod_record_has_per_node_reasons():
    t = Trace()
    s = Scheduler(None, trace=t, rng=random.Random(0), binder_override=Binder())
    s.on_node_add(node("node01", cpu="1"))
    s.on_node_add(node("node02", cpu="1", kgc="b"))
    await run(s, pod("big", cpu="2"))
    rec = last_step9(t.records, "default", "big")
    assert rec.data["selectedNode"] == ""
    assert rec.data["error"].startswith("0/2 nodes are available: 2 Insufficient cpu.")
    assert rec.data["filter"]["node01"]["NodeResourcesFit"] == "Insufficient cpu"
    text = render(rec)
    assert "No node was chosen." in text and "Message: 0/2 nodes are available" in text
    # a PreFilter rejection is reported on every node too
    await run(s, pod("nosel", affinity={"podAffinity": {"requiredDuringSchedulingIgnoredDuringExecution": [
        {"labelSelector": {"matchLabels": {"app": "x"}}, "topologyKey": "missing"}]}}))
    d = last_step9(t.records, "default", "nosel").data
    assert all(v for v in d["filter"].values())


def test_no_record_for_pod():
    assert last_step9([], "default", "x") is None


def test_big_cluster_records_outcome_only():
    rec = StepRecord(9, "scheduler", "picked n1", {"kind": "Pod", "namespace": "default", "name": "p"},
                     data={"selectedNode": "n1", "recorded": False})
    assert "not recorded" in render(rec)


async def test_explain_max_nodes_limits_the_record_and_scores_are_per_node():
    t = Trace()
    s = Scheduler(None, trace=t, rng=random.Random(0), binder_override=Binder(), explain_max_nodes=2)
    s.on_node_add(node("node01", cpu="1"))
    s.on_node_add(node("node02", cpu="4"))
    await run(s, pod("small"))
    d = last_step9(t.records, "default", "small").data
    assert d["recorded"] is True
    # the scores are recorded as columns and served per node, raw and weighted
    assert set(d["score"]) == set(d["finalScore"]) == {"node01", "node02"}
    for n in ("node01", "node02"):
        for plugin, raw in d["score"][n].items():
            assert d["finalScore"][n][plugin] == raw * d["weights"].get(plugin, 1)
        assert sum(d["finalScore"][n].values()) == d["total"][n]
    # the record goes out as JSON with the same shape
    assert StepRecord.from_dict(rec_json(last_step9(t.records, "default", "small"))).data == d
    s.on_node_add(node("node03"))
    await run(s, pod("big-cluster"))
    d = last_step9(t.records, "default", "big-cluster").data
    assert d["recorded"] is False and d["selectedNode"] and "filter" not in d
    assert "(per-node verdicts were not recorded" in render(last_step9(t.records, "default", "big-cluster"))


def rec_json(rec: StepRecord) -> dict:
    from controlplane.api import codec
    return codec.loads(codec.dumps(rec.to_dict()))


def test_scheduler_cli_rejects_a_negative_explain_limit():
    from click.testing import CliRunner

    from components.scheduler.cli import command
    r = CliRunner().invoke(command, ["--master", "http://127.0.0.1:1", "--explain-max-nodes", "-1"])
    assert r.exit_code == 2 and "--explain-max-nodes" in r.output
