import asyncio

import pytest

from controlplane.trace.buffer import TraceBuffer
from controlplane.trace.record import StepRecord, make_record
from controlplane.trace.timeline import Flow, format_record, step_summary


def obj(kind, name, uid, owner=None):
    md = {"name": name, "namespace": "default", "uid": uid, "resourceVersion": "7"}
    if owner:
        md["ownerReferences"] = [{"uid": owner, "controller": True, "kind": "X", "name": "o"}]
    return {"kind": kind, "metadata": md}


def test_make_record_links_owners_and_round_trips():
    r = make_record(7, "apiserver", "stored", obj("Pod", "p", "u-pod", owner="u-rs"))
    assert r.object == {"kind": "Pod", "namespace": "default", "name": "p", "uid": "u-pod"}
    assert r.owners == ["u-rs"] and r.resourceVersion == "7"
    assert StepRecord.from_dict(r.to_dict()) == r


def test_from_dict_rejects_malformed():
    with pytest.raises(ValueError):
        StepRecord.from_dict({"component": "x"})


def test_flow_follows_owner_chain_and_holds_early_records():
    f = Flow("Deployment", "default", "web")
    early = make_record(2, "apiserver", "received", obj("Deployment", "web", ""))
    other = make_record(3, "apiserver", "stored", obj("Deployment", "other", "u-other"))
    # the root's own record joins by name even before its uid is known
    assert f.offer(early)
    late_child = make_record(6, "cm", "created", obj("ReplicaSet", "web-0", "u-rs0", owner="u-dep"))
    assert not f.offer(other) and not f.offer(late_child)
    released = f.set_root("u-dep")
    assert late_child in released and other not in released
    assert f.offer(make_record(6, "cm", "created", obj("ReplicaSet", "web-1", "u-rs", owner="u-dep")))
    # a pod being created has no uid yet: it joins through its owner
    assert f.offer(make_record(6, "cm", "creating", obj("Pod", "web-1-a", "", owner="u-rs")))
    assert f.offer(make_record(9, "scheduler", "picked", obj("Pod", "web-1-a", "u-pod", owner="u-rs")))
    assert not f.offer(make_record(9, "scheduler", "picked", obj("Pod", "x", "u-x", owner="u-zz")))
    assert {2, 6, 9} <= f.steps_seen()


def test_format_and_summary():
    r = make_record(3, "apiserver", "stored in etcd", obj("Pod", "p", "u"))
    line = format_record(r, r.time - 0.5)
    assert line.startswith("[ 3]   +0.500s  apiserver") and "Pod/p rv=7" in line
    summ = step_summary([r], r.time)
    assert summ[2][0] == 3 and summ[2][2] == 1 and summ[0][2] == 0


async def test_buffer_snapshot_and_subscribe():
    b = TraceBuffer(capacity=3, queue_size=10)
    for i in range(5):
        b.append(StepRecord(step=i, component="c", action="a", time=float(i)))
    assert [r.step for r in b.snapshot()] == [2, 3, 4]
    assert [r.step for r in b.snapshot(since=3.0)] == [3, 4]
    got = []

    async def reader():
        async for r in b.subscribe():
            got.append(r.step)
            if len(got) == 2:
                return
    t = asyncio.create_task(reader())
    await asyncio.sleep(0)
    b.append(StepRecord(step=10, component="c", action="a"))
    b.append(StepRecord(step=11, component="c", action="a"))
    await asyncio.wait_for(t, 1)
    assert got == [10, 11]


async def test_emitter_sends_records_emitted_while_a_batch_is_in_flight():
    from controlplane.trace.emitter import TraceEmitter

    sent: list[list[int]] = []
    gate = asyncio.Event()

    class Client:
        async def request(self, method, path, body=None, timeout=None):
            sent.append([r["step"] for r in body["records"]])
            if len(sent) == 1:
                await gate.wait()

    em = TraceEmitter(Client(), "test", flush_interval=0)
    em.emit(9, "first")
    while not sent:
        await asyncio.sleep(0)
    em.emit(10, "during the first POST")
    gate.set()
    for _ in range(100):
        if len(sent) == 2:
            break
        await asyncio.sleep(0)
    assert sent == [[9], [10]]


async def test_emitter_sends_a_backlog_in_posts_of_at_most_64_records():
    from controlplane.trace.emitter import TraceEmitter

    sent: list[int] = []

    class Client:
        async def request(self, method, path, body=None, timeout=None):
            sent.append(len(body["records"]))

    em = TraceEmitter(Client(), "test", flush_interval=0)
    em._pending = [StepRecord(step=5, component="c", action=f"a{i}") for i in range(150)]
    await em.flush()
    assert sent == [64, 64, 22]


async def test_emitter_splits_a_post_the_apiserver_finds_too_large():
    from controlplane.client.rest import ApiError
    from controlplane.trace.emitter import TraceEmitter

    got: list[str] = []

    class Client:
        async def request(self, method, path, body=None, timeout=None):
            if len(body["records"]) > 10:
                raise ApiError(413, "RequestEntityTooLarge", "Request entity too large: limit is 3145728")
            got.extend(r["action"] for r in body["records"])

    em = TraceEmitter(Client(), "test", flush_interval=0)
    em._pending = [StepRecord(step=5, component="c", action=f"a{i}") for i in range(40)]
    await em.flush()
    assert got == [f"a{i}" for i in range(40)]


def test_html_timeline_has_every_record_on_its_lane_and_escapes_text():
    from controlplane.trace.html import lane_of, render_html

    recs = [make_record(2, "apiserver", "received POST <pods>", obj("Pod", "p", "u")),
            make_record(8, "apiserver", "etcd watch event", obj("Pod", "p", "u")),
            make_record(12, "kubelet", "containers started", obj("Pod", "p", "u"))]
    assert [lane_of(r) for r in recs] == ["client", "etcd", "kubelet"]
    page = render_html(recs, "t <1>", recs[0].time)
    assert page.startswith("<!doctype html>") and "t &lt;1&gt;" in page
    assert "received POST &lt;pods&gt;" in page and "<script" not in page
    assert page.count("<circle") == 3


def test_log_event_accepts_any_field_name(caplog):
    import logging

    from controlplane.log import event
    with caplog.at_level(logging.INFO):
        event(logging.getLogger("t"), "serviceaccount.created", namespace="default", name="default")
    assert caplog.records[-1].fields == {"namespace": "default", "name": "default"}
