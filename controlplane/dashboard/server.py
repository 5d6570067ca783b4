"""The dashboard's HTTP side: state kept from list-watches, pushed to browsers.

Routes (all GET, JSON unless said):

* ``/`` — the page (``static/index.html``); ``/static/NAME`` — its JS and CSS; ``/steps.js`` —
  seed 000's step titles (:data:`controlplane.trace.record.STEPS`) for ``seq.js``.
* ``/api/state`` — ``{"nodes": [Node], "pods": [Pod], "events": [Event], "records":
  [StepRecord dicts]}`` (the shapes of :func:`node_view`, :func:`pod_view`,
  :func:`event_view`, :meth:`controlplane.trace.record.StepRecord.to_dict`).
* ``/api/stream`` — ``text/event-stream``: first ``event: state`` (the same document),
  then one ``event: change`` per change, data ``{"kind": "node"|"pod"|"event"|"record",
  "op": "ADDED"|"MODIFIED"|"DELETED", "object": view}``.
* ``/api/explain?namespace=NS&name=NAME`` — ``{"pod": Pod|null, "table":
  explain_table|null, "bypassed": str|null, "events": [Event]}``: the scheduler's
  last step-9 record of the pod as it exists now (its uid), as
  :func:`controlplane.trace.explain.explain_table` (what ``controlplane explain``
  prints), or why there is none.

The apiserver is read as any client does: informers (list, then watch from the list's
resourceVersion, client-go's reflector; :class:`controlplane.client.informer.Informer`)
and the trace stream (:func:`controlplane.trace.stream.follow`, re-followed after a
failure from the last record's time).
"""

from __future__ import annotations

import asyncio
import collections
import json
import logging
import os
from typing import Any, Callable

from aiohttp import web

from controlplane.aio import cancel_and_wait
from controlplane.api.resources import EVENTS, NODES, PODS
from controlplane.client.informer import Informer
from controlplane.client.rest import ClientConfig, RestClient
from controlplane.dashboard.sequence import steps_js
from controlplane.trace import stream
from controlplane.trace.explain import bypassed, explain_table, last_step9
from controlplane.trace.record import StepRecord

log = logging.getLogger("dashboard")

STATIC = os.path.join(os.path.dirname(__file__), "static")
#: the records kept for new browsers (the apiserver keeps 100 000)
MAX_RECORDS = 20_000
#: the events kept (newest)
MAX_EVENTS = 2_000


def node_view(n: dict[str, Any]) -> dict[str, Any]:
    """``{"name", "labels", "taints": [{"key", "value", "effect"}], "ready": "True"|"False"|
    "Unknown", "unschedulable": bool}`` of a Node."""
    st = n.get("status") or {}
    ready = next((c.get("status", "Unknown") for c in st.get("conditions") or [] if c.get("type") == "Ready"),
                 "Unknown")
    spec = n.get("spec") or {}
    return {"name": n["metadata"]["name"], "labels": n["metadata"].get("labels") or {},
            "taints": [{"key": t.get("key", ""), "value": t.get("value", ""), "effect": t.get("effect", "")}
                       for t in spec.get("taints") or []],
            "ready": ready, "unschedulable": bool(spec.get("unschedulable"))}


def pod_view(p: dict[str, Any]) -> dict[str, Any]:
    """``{"namespace", "name", "uid", "node", "phase", "labels", "owner", "deleting",
    "ready": "x/y", "scheduled": reason of a False PodScheduled condition or "", "created"}``
    of a Pod (``phase`` "Terminating" while it has a deletionTimestamp, as kubectl shows)."""
    md, spec, st = p["metadata"], p.get("spec") or {}, p.get("status") or {}
    owner = next((f"{o.get('kind')}/{o.get('name')}" for o in md.get("ownerReferences") or []
                  if o.get("controller")), "")
    cond: dict[str, Any] = next((c for c in st.get("conditions") or [] if c.get("type") == "PodScheduled"), {})
    total = len(spec.get("containers") or [])
    ready = sum(1 for c in st.get("containerStatuses") or [] if c.get("ready"))
    return {"namespace": md.get("namespace", ""), "name": md["name"], "uid": md.get("uid", ""),
            "node": spec.get("nodeName", ""), "phase": st.get("phase", "Pending"),
            "labels": md.get("labels") or {}, "owner": owner,
            "deleting": bool(md.get("deletionTimestamp")), "ready": f"{ready}/{total}",
            "scheduled": cond.get("message", "") if cond.get("status") == "False" else "",
            "created": md.get("creationTimestamp", "")}


def event_view(e: dict[str, Any]) -> dict[str, Any]:
    """``{"namespace", "name", "uid", "kind", "object", "objectUid", "reason", "message",
    "type", "source", "count", "time"}`` of a core/v1 Event (``object``: the involved
    object's name)."""
    io = e.get("involvedObject") or {}
    src = e.get("source") or {}
    return {"namespace": e["metadata"].get("namespace", ""), "name": e["metadata"]["name"],
            "uid": e["metadata"].get("uid", ""), "kind": io.get("kind", ""), "object": io.get("name", ""),
            "objectUid": io.get("uid", ""), "reason": e.get("reason", ""), "message": e.get("message", ""),
            "type": e.get("type", ""),
            "source": src.get("component", "") + (f", {src['host']}" if src.get("host") else ""),
            "count": e.get("count") or 1,
            "time": e.get("lastTimestamp") or e.get("eventTime") or e["metadata"].get("creationTimestamp", "")}


class Dashboard:
    """The state the page shows, kept current from the apiserver at ``server``, and the
    aiohttp app serving it (:attr:`app`). ``start()`` begins the list-watches,
    ``stop()`` ends them and every browser's stream."""

    def __init__(self, server: "str | ClientConfig", timeout: float = 30.0) -> None:
        self.client = RestClient(server, "dashboard", timeout=timeout)
        self.server = self.client.server
        self.informers = {kind: Informer(self.client, res, transform=view_of(fn))
                          for kind, res, fn in (("node", NODES, node_view), ("pod", PODS, pod_view),
                                                ("event", EVENTS, event_view))}
        self.records: collections.deque[StepRecord] = collections.deque(maxlen=MAX_RECORDS)
        #: pod uid -> its newest step-9 record
        self.step9: dict[str, StepRecord] = {}
        self.subscribers: set[asyncio.Queue[str | None]] = set()
        self._tasks: list[asyncio.Task[None]] = []
        for kind, inf in self.informers.items():
            inf.add_handlers(on_add=self._handler(kind, "ADDED"),
                             on_update=lambda old, new, k=kind: self.publish(k, "MODIFIED", new),
                             on_delete=self._handler(kind, "DELETED"))
        self.app = web.Application()
        self.app.router.add_get("/", self.index)
        self.app.router.add_get("/steps.js", self.steps)
        self.app.router.add_get("/api/state", self.state)
        self.app.router.add_get("/api/stream", self.stream)
        self.app.router.add_get("/api/explain", self.explain)
        self.app.router.add_static("/static/", STATIC)

    def _handler(self, kind: str, op: str) -> Callable[[dict[str, Any]], None]:
        return lambda obj: self.publish(kind, op, obj)

    # -- the apiserver side --------------------------------------------------------------
    async def start(self) -> None:
        """Start the list-watches (nodes, pods, events) and the trace follower."""
        for inf in self.informers.values():
            inf.start()
        self._tasks.append(asyncio.create_task(self._follow_trace(), name="dashboard-trace"))

    async def wait_synced(self, timeout: float) -> bool:
        """Wait up to ``timeout`` seconds for every informer's first list; whether they all came."""
        try:
            await asyncio.wait_for(asyncio.gather(*(i.wait_synced(timeout) for i in self.informers.values())),
                                   timeout)
        except asyncio.TimeoutError:
            return False
        return True

    async def stop(self) -> None:
        """End every browser's stream, the list-watches and the trace follower; close the client."""
        for q in list(self.subscribers):
            q.put_nowait(None)
        for inf in self.informers.values():
            await inf.stop()
        for t in self._tasks:
            await cancel_and_wait(t)
        await self.client.close()

    async def _follow_trace(self) -> None:
        since = 0.0
        while True:
            try:
                async for rec in stream.follow(self.client, since):
                    since = max(since, rec.time)
                    self.add_record(rec)
            except Exception as e:  # an apiserver restart: follow again from the last record
                log.info("trace stream ended: %s; following again", e)
            await asyncio.sleep(1.0)  # back-off before re-following, not synchronisation

    def add_record(self, rec: StepRecord) -> None:
        """Keep ``rec`` (a duplicate of one kept is dropped) and push it to the browsers."""
        if self.records and rec.time <= self.records[-1].time and \
                any(r.to_dict() == rec.to_dict() for r in list(self.records)[-200:]):
            return
        self.records.append(rec)
        if rec.step == 9 and rec.component == "scheduler" and rec.uid:
            self.step9[rec.uid] = rec
        self.publish("record", "ADDED", rec.to_dict())

    def publish(self, kind: str, op: str, obj: dict[str, Any]) -> None:
        """Queue one ``event: change`` for every browser; one that fell 10 000 behind is dropped."""
        msg = f"event: change\ndata: {json.dumps({'kind': kind, 'op': op, 'object': obj})}\n\n"
        for q in list(self.subscribers):
            if q.qsize() > 10_000:  # a browser that stopped reading: drop it
                self.subscribers.discard(q)
                continue
            q.put_nowait(msg)

    def snapshot(self) -> dict[str, Any]:
        """``{"nodes", "pods", "events" (the newest MAX_EVENTS), "records"}``, each a list of views."""
        events = sorted(self.informers["event"].store.values(), key=lambda e: e["time"])[-MAX_EVENTS:]
        return {"nodes": sorted(self.informers["node"].store.values(), key=lambda n: n["name"]),
                "pods": sorted(self.informers["pod"].store.values(), key=lambda p: (p["namespace"], p["name"])),
                "events": events, "records": [r.to_dict() for r in self.records]}

    # -- the browser side -----------------------------------------------------------------
    async def index(self, request: web.Request) -> web.FileResponse:
        """``GET /``: the page."""
        return web.FileResponse(os.path.join(STATIC, "index.html"))

    async def steps(self, request: web.Request) -> web.Response:
        """``GET /steps.js``: the step titles for ``seq.js``."""
        return web.Response(text=steps_js(), content_type="application/javascript")

    async def state(self, request: web.Request) -> web.Response:
        """``GET /api/state``: :meth:`snapshot` as JSON."""
        return web.json_response(self.snapshot())

    async def stream(self, request: web.Request) -> web.StreamResponse:
        """``GET /api/stream``: ``event: state`` (the snapshot), then ``event: change`` per change,
        a comment line every 15 s of quiet (so proxies keep the stream); ends on :meth:`stop`."""
        resp = web.StreamResponse(headers={"Content-Type": "text/event-stream", "Cache-Control": "no-cache"})
        await resp.prepare(request)
        q: asyncio.Queue[str | None] = asyncio.Queue()
        self.subscribers.add(q)
        try:
            await resp.write(f"event: state\ndata: {json.dumps(self.snapshot())}\n\n".encode())
            while True:
                try:
                    msg = await asyncio.wait_for(q.get(), 15)
                except asyncio.TimeoutError:
                    msg = ": keep-alive\n\n"
                if msg is None:
                    break
                await resp.write(msg.encode())
        except (ConnectionResetError, asyncio.CancelledError):
            pass
        finally:
            self.subscribers.discard(q)
        return resp

    async def explain(self, request: web.Request) -> web.Response:
        """``GET /api/explain?namespace=&name=``: the pod's scheduler table (by its current uid),
        or why it has none, and its events (shape in the module docstring)."""
        ns = request.query.get("namespace", "default")
        name = request.query.get("name", "")
        pod = self.informers["pod"].store.get(f"{ns}/{name}")
        raw = None
        if pod is not None:
            try:
                raw = await self.client.get(PODS, name, ns)
            except Exception:
                raw = None
        rec = self.step9.get(pod["uid"]) if pod else None
        if rec is None and pod is not None:
            rec = last_step9(list(self.records), ns, name, pod["uid"])
        events = [e for e in self.informers["event"].store.values()
                  if e["namespace"] == ns and e["kind"] == "Pod" and e["object"] == name
                  and (pod is None or not e["objectUid"] or e["objectUid"] == pod["uid"])]
        return web.json_response({
            "pod": pod, "table": explain_table(rec) if rec is not None else None,
            "bypassed": bypassed(raw, events) if rec is None and raw is not None else None,
            "events": sorted(events, key=lambda e: e["time"])})


def view_of(fn: Callable[[dict[str, Any]], dict[str, Any]]) -> Callable[[dict[str, Any]], dict[str, Any]]:
    """An informer transform keeping the view (plus the metadata the informer keys on)."""
    def transform(obj: dict[str, Any]) -> dict[str, Any]:
        v = fn(obj)
        v["metadata"] = {"name": obj["metadata"]["name"], "namespace": obj["metadata"].get("namespace", ""),
                         "uid": obj["metadata"].get("uid", ""),
                         "resourceVersion": obj["metadata"].get("resourceVersion", "")}
        return v
    return transform


async def serve(server: "str | ClientConfig", port: int, host: str = "127.0.0.1",
                sync_timeout: float = 10.0) -> tuple[Dashboard, web.AppRunner, int]:
    """Start a :class:`Dashboard` for the apiserver at ``server`` (a URL or a
    :class:`~controlplane.client.config.ClientConfig`: its CA and credentials) on ``host:port`` (0: any
    free port) and wait up to ``sync_timeout`` seconds for its first lists (so the first page
    shows the cluster; an apiserver slower than that fills it in live); returns it, its
    runner (``await runner.cleanup()`` after ``dash.stop()``) and the port bound. Raises
    OSError when the port is taken."""
    dash = Dashboard(server)
    runner = web.AppRunner(dash.app, access_log=None, shutdown_timeout=1.0)
    await runner.setup()
    site = web.TCPSite(runner, host, port)
    try:
        await site.start()
    except OSError:
        await runner.cleanup()
        await dash.client.close()
        raise
    bound = int(runner.addresses[0][1]) if runner.addresses else port
    await dash.start()
    await dash.wait_synced(sync_timeout)
    return dash, runner, bound


async def serve_first_free(server: "str | ClientConfig", port: int, tries: int = 20) -> tuple[Dashboard, web.AppRunner, int]:
    """:func:`serve` on ``port`` or, when it is taken, the next free one of ``tries``
    ports after it (``port`` 0: any free port)."""
    last: OSError | None = None
    for p in ([0] if port == 0 else range(port, min(port + tries, 65536))):
        try:
            return await serve(server, p)
        except OSError as e:
            last = e
    raise OSError(f"no free port for the dashboard in {port}-{port + tries - 1}: {last}")
