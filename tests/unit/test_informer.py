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
