"""API Priority and Fairness (components/apiserver/flowcontrol.py): classification by the
bootstrap FlowSchemas, seats by shares, fair queuing between flows, 429 when a queue is
full; and through the apiserver, the response headers and another client served while
one level is saturated."""

from __future__ import annotations

import asyncio

import pytest

from components.apiserver.flowcontrol import (
    FLOW_SCHEMAS,
    LEVEL_UID_HEADER,
    SCHEMA_UID_HEADER,
    FlowControl,
    Rejected,
    digest_of,
)
from controlplane.storage import testing

KCM = "kube-controller-manager/v1.32.4 (linux/amd64) controlplane/0.1.0"
SCHED = "kube-scheduler/v1.32.4 (linux/amd64) controlplane/0.1.0"
KUBELET = "kubelet/v1.32.4 (linux/amd64) controlplane/0.1.0"
KUBECTL = "kubectl/v1.32.4 (linux/amd64) kubernetes/abcdef"

API_OPTIONS = {"bookmark_interval": 0.2}


@pytest.mark.parametrize("ua,method,path,schema,level", [
    (KCM, "POST", "/api/v1/namespaces/default/pods", "kube-controller-manager", "workload-high"),
    (KCM, "PUT", "/apis/coordination.k8s.io/v1/namespaces/kube-system/leases/kube-controller-manager",
     "system-leader-election", "leader-election"),
    (KCM, "PUT", "/api/v1/namespaces/default/endpoints/web", "endpoint-controller", "workload-high"),
    (SCHED, "POST", "/api/v1/namespaces/default/pods/p/binding", "kube-scheduler", "workload-high"),
    (KUBELET, "PATCH", "/api/v1/nodes/node01/status", "system-node-high", "node-high"),
    (KUBELET, "PUT", "/apis/coordination.k8s.io/v1/namespaces/kube-node-lease/leases/node01",
     "system-node-high", "node-high"),
    (KUBELET, "PATCH", "/api/v1/namespaces/default/pods/p/status", "system-nodes", "system"),
    (KUBECTL, "GET", "/api/v1/namespaces/default/pods", "global-default", "global-default"),
    (KUBECTL, "GET", "/api/v1", "global-default", "global-default"),
    (None, "DELETE", "/api/v1/namespaces/x", "global-default", "global-default"),
], ids=["controller-manager creates a pod", "controller-manager renews its lease",
        "endpoint controller writes Endpoints", "scheduler binds a pod", "kubelet patches its node status",
        "kubelet renews its node lease", "kubelet patches a pod status", "kubectl lists pods",
        "kubectl reads discovery", "no user agent deletes a namespace"])
def test_bootstrap_classification(ua, method, path, schema, level):
    fc = FlowControl()
    fs, _ = fc.classify(digest_of(method, path, ua))
    assert (fs.name, fs.level) == (schema, level)


def test_digest_verbs_and_distinguishers():
    d = digest_of("DELETE", "/api/v1/namespaces/a/pods", KCM)
    assert (d.verb, d.resource, d.namespace, d.user) == ("deletecollection", "pods", "a",
                                                           "system:kube-controller-manager")
    assert digest_of("GET", "/api/v1/pods", KUBECTL).verb == "list"
    fc = FlowControl()
    assert fc.classify(d)[1] == "a"                                        # ByNamespace
    assert fc.classify(digest_of("GET", "/api/v1/pods", KUBECTL))[1] == "kubectl"   # ByUser


def test_each_kubelet_is_its_own_flow_for_its_node_and_lease():
    fc = FlowControl()
    flows = {fc.classify(digest_of("PUT", f"/apis/coordination.k8s.io/v1/namespaces/kube-node-lease/leases/{n}",
                                   KUBELET)) for n in ("hollow-0", "hollow-1")}
    assert {(fs.name, d) for fs, d in flows} == {("system-node-high", "system:node:hollow-0"),
                                                 ("system-node-high", "system:node:hollow-1")}
    assert digest_of("PATCH", "/api/v1/nodes/node01/status", KUBELET).user == "system:node:node01"
    assert digest_of("PATCH", "/api/v1/namespaces/default/pods/p/status", KUBELET).user == "system:node"


def test_nominal_seats_divide_the_server_limit_by_shares():
    fc = FlowControl(600)
    assert {n: s.limit for n, s in fc.state.items()} == {
        "system": 74, "node-high": 98, "leader-election": 25, "workload-high": 98, "workload-low": 245,
        "global-default": 49, "catch-all": 13}
    assert "exempt" not in fc.state


def get(ua: str):
    return digest_of("GET", "/api/v1/namespaces/default/pods", ua)


async def test_one_flows_burst_waits_in_its_queues_while_another_flow_is_served():
    fc = FlowControl(10)                          # global-default: 1 seat
    assert fc.state["global-default"].limit == 1
    order: list[str] = []

    async def request(ua: str, tag: str):
        seat = await fc.admit(get(ua))
        order.append(tag)
        return seat

    seat = await fc.admit(get("burst/1"))
    tasks = {f"a{i}": asyncio.create_task(request("burst/1", f"a{i}")) for i in range(30)}
    await asyncio.sleep(0)                        # let them queue
    tasks["b"] = asyncio.create_task(request("other/1", "b"))
    await asyncio.sleep(0)
    level = fc.state["global-default"]
    assert level.waiting == 31
    burst_queues = len(level.ring) - 1            # the burst spread over its hand of queues
    assert burst_queues == 6
    # another priority level is not affected at all
    (await fc.admit(digest_of("POST", "/api/v1/namespaces/default/pods", KCM))).release()
    while "b" not in order:
        seat.release()
        await asyncio.sleep(0)                    # the dispatched request resumes
        seat = await tasks[order[-1]]
    # one request per non-empty queue per round: b's turn comes after at most one of each
    # of the burst's queues, not after the 30 of the burst
    assert order.index("b") <= burst_queues
    seat.release()
    for t in tasks.values():
        t.cancel()
    await asyncio.gather(*tasks.values(), return_exceptions=True)


async def test_full_queues_answer_queue_full_with_headers():
    fc = FlowControl(10)
    held = await fc.admit(get("burst/1"))
    waiting = [asyncio.create_task(fc.admit(get("burst/1"))) for i in range(6 * 50)]
    await asyncio.sleep(0)
    with pytest.raises(Rejected) as e:
        await fc.admit(get("burst/1"))
    assert e.value.reason == "queue-full"
    h = e.value.headers()
    gd = next(fs for fs in FLOW_SCHEMAS if fs.name == "global-default")
    assert h == {SCHEMA_UID_HEADER: gd.uid, LEVEL_UID_HEADER: fc.levels["global-default"].uid, "Retry-After": "1"}
    assert 'apiserver_flowcontrol_rejected_requests_total{flow_schema="global-default",' \
           'priority_level="global-default",reason="queue-full"} 1' in fc.render()
    for t in waiting:
        t.cancel()
    await asyncio.gather(*waiting, return_exceptions=True)
    assert fc.state["global-default"].waiting == 0 and not fc.state["global-default"].ring
    held.release()
    assert fc.state["global-default"].executing == 0


async def test_a_request_waits_at_most_the_wait_limit():
    fc = FlowControl(10, wait_limit=0.01)
    held = await fc.admit(get("x/1"))
    with pytest.raises(Rejected) as e:
        await fc.admit(get("x/1"))
    assert e.value.reason == "time-out"
    assert fc.state["global-default"].waiting == 0
    held.release()
    (await fc.admit(get("x/1"))).release()


async def test_reject_level_refuses_beyond_its_seats():
    schemas = tuple(fs for fs in FLOW_SCHEMAS if fs.name != "global-default")
    fc = FlowControl(10, schemas=schemas)
    seat = await fc.admit(get("kubectl/1"))
    assert seat.level.name == "catch-all" and fc.state["catch-all"].limit == 1
    with pytest.raises(Rejected) as e:
        await fc.admit(get("kubectl/1"))
    assert e.value.reason == "concurrency-limit"
    seat.release()
    (await fc.admit(get("kubectl/1"))).release()


# -- through the apiserver (real etcd) ------------------------------------------------

needs_etcd = pytest.mark.skipif(not testing.available(), reason="needs /usr/bin/etcd")


@needs_etcd
async def test_responses_name_their_flow_schema_and_priority_level(api):
    fc = api.server_obj.flowcontrol
    r = await api.get("/api/v1/namespaces/default/pods", headers={"User-Agent": KUBECTL})
    assert r.status == 200
    gd = next(fs for fs in FLOW_SCHEMAS if fs.name == "global-default")
    assert r.headers[SCHEMA_UID_HEADER] == gd.uid
    assert r.headers[LEVEL_UID_HEADER] == fc.levels["global-default"].uid
    text = await (await api.get("/metrics")).text()
    assert 'apiserver_flowcontrol_dispatched_requests_total{flow_schema="global-default",' \
           'priority_level="global-default"}' in text
    assert 'apiserver_flowcontrol_nominal_limit_seats{priority_level="workload-high"} 98' in text


@needs_etcd
async def test_saturated_controller_manager_level_does_not_stop_kubectl(api):
    fc = api.server_obj.flowcontrol
    busy = [await fc.admit(digest_of("POST", "/api/v1/namespaces/default/pods", KCM))
            for _ in range(fc.state["workload-high"].limit)]
    body = {"apiVersion": "v1", "kind": "ConfigMap", "metadata": {"name": "from-kcm"}}
    queued = asyncio.create_task(api.post("/api/v1/namespaces/default/configmaps", json=body,
                                          headers={"User-Agent": KCM}))
    async with asyncio.timeout(10):
        while fc.state["workload-high"].waiting == 0:   # the request has reached its queue
            await asyncio.sleep(0)
    r = await api.get("/api/v1/namespaces/default/configmaps", headers={"User-Agent": KUBECTL})
    assert r.status == 200 and not queued.done()
    busy.pop().release()                                 # a seat frees: the queued create runs
    r = await asyncio.wait_for(queued, 10)
    assert r.status == 201
    for s in busy:
        s.release()
    assert fc.state["workload-high"].executing == 0


@pytest.mark.parametrize("args, message", [
    (["--max-requests-inflight", "0", "--max-mutating-requests-inflight", "0"], "must add up to something positive"),
    (["--enable-priority-and-fairness", "maybe"], "'maybe' is not a valid boolean"),
    (["--max-requests-inflight", "-1"], "x>=0"),
], ids=["both in-flight limits 0", "priority and fairness not a boolean", "negative in-flight limit"])
def test_apiserver_flow_control_flags_are_usage_errors(args, message):
    from click.testing import CliRunner

    from components.apiserver.cli import command
    r = CliRunner().invoke(command, ["--etcd-servers", "http://127.0.0.1:1", *args])
    assert r.exit_code == 2 and message in r.output and "Traceback" not in r.output, r.output


@needs_etcd
async def test_rest_client_resends_a_request_refused_with_retry_after(api):
    from controlplane.api import resources
    from controlplane.client.rest import RestClient
    fc = api.server_obj.flowcontrol
    fc.wait_limit = 0.05
    level = fc.state["global-default"]
    held = [await fc.admit(get("someone-else/1")) for _ in range(level.limit)]
    refused = asyncio.Event()
    reject = fc._reject
    fc._reject = lambda reason, f: (refused.set(), reject(reason, f))[1]
    async with RestClient(str(api.make_url("")).rstrip("/")) as client:
        call = asyncio.create_task(client.list(resources.get("configmaps"), "default"))
        await asyncio.wait_for(refused.wait(), 10)       # the first attempt: 429 time-out
        for s in held:
            s.release()
        out = await asyncio.wait_for(call, 10)            # the resend after Retry-After: 1
    assert out["kind"] == "ConfigMapList"
    assert 'reason="time-out"} 1' in fc.render()


async def test_a_cancelled_waiter_never_takes_a_seat():
    fc = FlowControl(10)
    level = fc.state["global-default"]
    held = await fc.admit(get("x/1"))
    gone = asyncio.create_task(fc.admit(get("x/1")))
    stays = asyncio.create_task(fc.admit(get("x/1")))
    await asyncio.sleep(0)
    gone.cancel()                 # its future is cancelled at once, it leaves its queue later
    held.release()                # the seat goes to the next waiter that still waits
    seat = await stays
    with pytest.raises(asyncio.CancelledError):
        await gone
    assert level.executing == 1 and level.waiting == 0 and not level.ring
    seat.release()
    assert level.executing == 0
