"""The informer against a scripted fake apiserver (aiohttp): list, watch from
the list's resourceVersion, bookmarks, and a relist after 410 Gone."""

import asyncio
import json

from aiohttp import web
from aiohttp.test_utils import TestServer

from controlplane.api.resources import PODS
from controlplane.client.informer import Informer
from controlplane.client.rest import ApiError, RestClient


def pod(name, rv, phase="Pending"):
    return {"metadata": {"name": name, "namespace": "default", "resourceVersion": str(rv)},
            "status": {"phase": phase}}


async def make_server(script):
    """script: list of (kind, payload) consumed in order by list/watch calls."""
    calls = []

    async def handler(request: web.Request):
        calls.append(dict(request.query))
        kind, payload = script.pop(0)
        if kind == "list":
            return web.json_response({"kind": "PodList", "metadata": {"resourceVersion": payload[0]},
                                      "items": payload[1]})
        if kind == "status":
            return web.json_response({"kind": "Status", "code": payload, "reason": "Expired",
                                      "message": "too old"}, status=payload)
        resp = web.StreamResponse()
        await resp.prepare(request)
        for ev in payload:
            await resp.write(json.dumps(ev).encode() + b"\n")
        if not script:  # keep the last stream open
            await asyncio.Event().wait()
        return resp

    app = web.Application()
    app.router.add_get("/api/v1/pods", handler)
    server = TestServer(app)
    await server.start_server()
    return server, calls


async def test_list_then_watch_then_relist_on_410():
    script = [
        ("list", ("10", [pod("a", 5)])),
        ("watch", [{"type": "ADDED", "object": pod("b", 11)},
                   {"type": "BOOKMARK", "object": {"metadata": {"resourceVersion": "15"}}},
                   {"type": "ERROR", "object": {"kind": "Status", "code": 410, "reason": "Expired",
                                                "message": "too old resource version"}}]),
        ("list", ("20", [pod("b", 18, "Running"), pod("c", 19)])),
        ("watch", [{"type": "DELETED", "object": pod("c", 21)}]),
    ]
    server, calls = await make_server(script)
    client = RestClient(str(server.make_url("")), "test")
    inf = Informer(client, PODS)
    seen = []
    done = asyncio.Event()

    def on_delete(o):
        seen.append(("del", o["metadata"]["name"]))
        if o["metadata"]["name"] == "c":
            done.set()
    inf.add_handlers(lambda o: seen.append(("add", o["metadata"]["name"])),
                     lambda old, new: seen.append(("upd", new["metadata"]["name"])),
                     on_delete)
    starts = []
    inf.on_watch_started(starts.append)
    inf.start()
    await asyncio.wait_for(done.wait(), 5)
    await inf.stop()
    await client.close()
    await server.close()
    assert seen == [("add", "a"), ("add", "b"), ("upd", "b"), ("add", "c"), ("del", "a"), ("del", "c")]
    assert set(inf.store) == {"default/b"}
    assert calls[1]["resourceVersion"] == "10" and calls[1]["watch"] == "true"
    assert calls[3]["resourceVersion"] == "20", "watch resumes from the relist's resourceVersion"
    assert starts == ["10", "20"]


async def test_rest_client_turns_status_into_api_error():
    server, _ = await make_server([("status", 410)])
    client = RestClient(str(server.make_url("")), "test")
    try:
        await client.list(PODS)
    except ApiError as e:
        assert e.code == 410 and e.reason == "Expired" and e.message == "too old"
    else:
        raise AssertionError("no ApiError")
    finally:
        await client.close()
        await server.close()


def owned(name, rv, owner):
    p = pod(name, rv)
    p["metadata"]["ownerReferences"] = [{"kind": "ReplicaSet", "name": owner, "uid": "uid-" + owner}]
    p["metadata"]["managedFields"] = [{"manager": "m", "operation": "Update", "fieldsV1": {"f:spec": {}}}]
    return p


def owner_uids(obj):
    return [r["uid"] for r in obj["metadata"].get("ownerReferences") or []]


async def test_indexes_follow_the_store_before_handlers_run_and_transform_applies():
    """An index (client-go's Indexers/ByIndex, tools/cache/thread_safe_store.go) is
    updated with the store on every list, watch event and relist, before any
    handler runs; the transform (client-go's SetTransform) is applied to listed and
    watched objects before they are stored or handed to a handler."""
    script = [
        ("list", ("10", [owned("a", 5, "x"), owned("b", 6, "y")])),
        ("watch", [{"type": "MODIFIED", "object": owned("a", 11, "y")},
                   {"type": "ADDED", "object": owned("c", 12, "x")},
                   {"type": "DELETED", "object": owned("b", 13, "y")},
                   {"type": "ERROR", "object": {"kind": "Status", "code": 410, "reason": "Expired",
                                                "message": "too old resource version"}}]),
        ("list", ("20", [owned("c", 12, "x"), owned("d", 19, "z")])),
        ("watch", []),
    ]
    server, _ = await make_server(script)
    client = RestClient(str(server.make_url("")), "test")

    def trim(obj):
        obj["metadata"].pop("managedFields", None)
        return obj
    inf = Informer(client, PODS, transform=trim)
    inf.add_indexer("owner", owner_uids)
    inf.add_indexer("owner", lambda o: ["ignored"])  # a taken name keeps its function
    seen = []
    done = asyncio.Event()

    def snapshot(what, obj):
        seen.append((what, obj["metadata"]["name"], "managedFields" in obj["metadata"],
                     {u: inf.index_keys("owner", "uid-" + u) for u in "xyz"}))
        if what == "del" and obj["metadata"]["name"] == "a":
            done.set()
    inf.add_handlers(lambda o: snapshot("add", o), lambda old, new: snapshot("upd", new),
                     lambda o: snapshot("del", o))
    inf.start()
    await asyncio.wait_for(done.wait(), 5)
    await inf.stop()
    await client.close()
    await server.close()
    assert all(not has_mf for _, _, has_mf, _ in seen)
    assert [(w, n, idx) for w, n, _, idx in seen] == [
        ("add", "a", {"x": ["default/a"], "y": ["default/b"], "z": []}),
        ("add", "b", {"x": ["default/a"], "y": ["default/b"], "z": []}),
        ("upd", "a", {"x": [], "y": ["default/b", "default/a"], "z": []}),
        ("add", "c", {"x": ["default/c"], "y": ["default/b", "default/a"], "z": []}),
        ("del", "b", {"x": ["default/c"], "y": ["default/a"], "z": []}),
        # the relist replaced the store: the index is rebuilt before its events are dispatched
        ("add", "d", {"x": ["default/c"], "y": [], "z": ["default/d"]}),
        ("del", "a", {"x": ["default/c"], "y": [], "z": ["default/d"]}),
    ]
    assert [o["metadata"]["name"] for o in inf.by_index("owner", "uid-x")] == ["c"]
    assert inf.in_index("owner", "uid-z") and not inf.in_index("owner", "uid-y")


def test_indices_unit_order_changes_and_failing_index_function():
    """Indices (client-go's threadSafeMap indices): keys of one value keep the order
    they joined it; a change that keeps an object's values leaves its place alone;
    an index function that raises or yields an unhashable value indexes that object
    under nothing instead of raising into the reflector."""
    from controlplane.client.informer import Indices
    store = {"ns/a": {"v": ["1"]}, "ns/b": {"v": ["1", "2"]}}
    idx = Indices()
    idx.add("v", lambda o: o["v"], store)
    assert idx.keys("v", "1") == ["ns/a", "ns/b"] and idx.keys("v", "2") == ["ns/b"]
    idx.changed("ns/a", store["ns/a"], {"v": ["1", "3"]})          # keeps "1": stays first
    assert idx.keys("v", "1") == ["ns/a", "ns/b"] and idx.keys("v", "3") == ["ns/a"]
    idx.changed("ns/b", store["ns/b"], {"v": [["unhashable"]]})    # no values now
    assert idx.keys("v", "1") == ["ns/a"] and not idx.has("v", "2")
    idx.changed("ns/a", {"v": ["1", "3"]}, None)                   # deleted
    assert not idx.has("v", "1") and not idx.has("v", "3") and idx.keys("v", "1") == []


def test_controller_manager_informers_trim_managed_fields():
    """The controller-manager's shared informers store objects without
    metadata.managedFields, as kube-controller-manager's factory WithTransform(trim)
    (cmd/kube-controller-manager/app/controllermanager.go); the rest is kept as is."""
    from controlplane.client.factory import SharedInformers
    inf = SharedInformers(RestClient("http://127.0.0.1:1", "test")).informer(PODS)
    obj = owned("a", 1, "x")
    out = inf.transform(obj)
    assert out["metadata"] == {"name": "a", "namespace": "default", "resourceVersion": "1",
                               "ownerReferences": [{"kind": "ReplicaSet", "name": "x", "uid": "uid-x"}]}
    assert out["status"] == {"phase": "Pending"}
    assert inf.transform({"kind": "Status"}) == {"kind": "Status"}


async def test_watch_timeout_is_randomised_between_once_and_twice_the_minimum():
    script = [("list", ("10", []))] + [("watch", [{"type": "ADDED", "object": pod(f"p{i}", 11 + i)}])
                                       for i in range(6)]
    server, calls = await make_server(script)
    client = RestClient(str(server.make_url("")), "test")
    inf = Informer(client, PODS, watch_timeout=300)
    got = asyncio.Event()
    inf.add_handlers(lambda o: got.set() if o["metadata"]["name"] == "p5" else None)
    inf.start()
    await asyncio.wait_for(got.wait(), 5)
    await inf.stop()
    await client.close()
    await server.close()
    timeouts = [int(c["timeoutSeconds"]) for c in calls if c.get("watch") == "true"]
    assert len(timeouts) == 6 and all(300 <= t <= 600 for t in timeouts)
    # a watch that delivered events is followed at once, from its last resourceVersion
    assert [c["resourceVersion"] for c in calls[1:]] == ["10"] + [str(11 + i) for i in range(5)]


async def test_empty_closed_watches_and_repeated_410_back_off(caplog):
    expired = {"type": "ERROR", "object": {"kind": "Status", "code": 410, "reason": "Expired",
                                           "message": "too old resource version"}}
    script = [("list", ("10", [])), ("watch", []), ("watch", []), ("watch", [expired]),
              ("list", ("20", [])), ("watch", [expired]), ("list", ("30", [])),
              ("watch", [{"type": "ADDED", "object": pod("z", 31)}])]
    server, calls = await make_server(script)
    client = RestClient(str(server.make_url("")), "test")
    inf = Informer(client, PODS)
    got = asyncio.Event()
    inf.add_handlers(lambda o: got.set())
    caplog.set_level("INFO", logger="informer")
    inf.start()
    await asyncio.wait_for(got.wait(), 10)
    await inf.stop()
    await client.close()
    await server.close()
    lines = [(r.getMessage(), r.fields) for r in caplog.records if r.name == "informer"]
    waits = [f for m, f in lines if m == "informer.disconnected"]
    # two empty watches wait (growing), the first 410 relists at once, the second in a row waits
    assert [f["error"] for f in waits] == ["watch closed at once", "watch closed at once",
                                           "too old resource version"]
    delays = [float(f["retry_in"].rstrip("s")) for f in waits]
    assert delays[0] < delays[1] < delays[2]
    assert waits[2]["relist"] is True
    assert [m for m, _ in lines].count("informer.relist") == 1
    assert [c.get("resourceVersion") for c in calls if c.get("watch")] == ["10", "10", "10", "20", "30"]


async def test_first_list_is_served_from_the_watch_cache_and_a_list_after_410_from_etcd():
    """client-go's relistResourceVersion: the first list asks resourceVersion=0 (any, the
    apiserver's cache), the list after a 410 leaves it unset (a quorum read)."""
    expired = {"type": "ERROR", "object": {"kind": "Status", "code": 410, "reason": "Expired",
                                           "message": "too old resource version"}}
    script = [("list", ("10", [])), ("watch", [expired]), ("list", ("20", [])),
              ("watch", [{"type": "ADDED", "object": pod("z", 21)}])]
    server, calls = await make_server(script)
    client = RestClient(str(server.make_url("")), "test")
    inf = Informer(client, PODS)
    got = asyncio.Event()
    inf.add_handlers(lambda o: got.set())
    inf.start()
    await asyncio.wait_for(got.wait(), 10)
    await inf.stop()
    await client.close()
    await server.close()
    lists = [c for c in calls if not c.get("watch")]
    assert lists[0].get("resourceVersion") == "0"
    assert "resourceVersion" not in lists[1]
