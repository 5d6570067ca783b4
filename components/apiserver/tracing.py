"""The apiserver's share of the 13-step trace (seed 000) and the ``/debug/controlplane/trace`` API.

Steps recorded here (component ``apiserver``), only for Deployment, ReplicaSet,
ReplicationController and Pod: 2 (POST received from a client other than the
controller-manager), 3 (stored, client create) or 7 (pod stored, controller create),
4 / 8 (etcd watch event ADDED reaches the watch cache), 10 (Binding stored),
11 (pod bound: MODIFIED sent to N watchers), 13 (pod status stored).
Each record goes to the :class:`~controlplane.trace.buffer.TraceBuffer` and one log line.
"""

from __future__ import annotations

import asyncio
import logging
from typing import Any

from aiohttp import web

from components.apiserver import status as st
from components.apiserver.auth import request_user
from components.apiserver.authorization.context import current_user
from controlplane.api import codec
from controlplane.log import event
from controlplane.storage.store import StoreEvent
from controlplane.trace.buffer import TraceBuffer
from controlplane.trace.record import StepRecord, make_record

WORKLOAD_KINDS = {"Deployment", "ReplicaSet", "ReplicationController", "Pod"}
CONTROLLER_MANAGER_AGENT = "kube-controller-manager/"

log = logging.getLogger("apiserver.trace")


def client_name(user_agent: str) -> str:
    """First token of a User-Agent (``kubectl/v1.32.4 (linux/amd64) ...`` → ``kubectl/v1.32.4``)."""
    return (user_agent or "unknown").split()[0] if (user_agent or "").strip() else "unknown"


def pod_ready(pod: dict) -> str:
    """``ready/total`` containers of a pod status (``x/y``)."""
    total = len((pod.get("spec") or {}).get("containers") or [])
    ready = sum(1 for c in (pod.get("status") or {}).get("containerStatuses") or [] if c.get("ready"))
    return f"{ready}/{total}"


class Tracer:
    """Records apiserver steps into ``buffer`` and serves the debug trace endpoints."""

    def __init__(self, buffer: TraceBuffer | None = None) -> None:
        self.buffer = buffer or TraceBuffer()

    def record(self, step: int, action: str, obj: dict, kind: str, rv: str | None = None,
               detail: str = "") -> StepRecord | None:
        if kind not in WORKLOAD_KINDS:
            return None
        rec = make_record(step, "apiserver", action, obj, detail=detail, kind=kind, resource_version=rv)
        user = current_user()  # who asked for the write (None for a watch-cache step)
        if user is not None:
            rec.user = user.name
        self.buffer.append(rec)
        md = obj.get("metadata") or {}
        # DEBUG: the record itself is the event (GET /debug/controlplane/trace); at INFO
        # these were 3 of the 4 log lines per pod create
        event(log, "trace.step", logging.DEBUG, step=step, kind=kind, object=f"{md.get('namespace', '')}/{md.get('name', '')}",
              rv=rec.resourceVersion, action=action)
        return rec

    def on_create_received(self, resource: Any, obj: dict, user_agent: str, verb: str = "POST") -> None:
        """Step 2 of a create (``verb``: ``POST``, or ``PATCH`` for a server-side apply that creates)."""
        if not user_agent.startswith(CONTROLLER_MANAGER_AGENT):
            self.record(2, f"received {verb} {resource.plural} from {client_name(user_agent)}", obj,
                        resource.kind, "")

    def on_created(self, resource: Any, obj: dict, user_agent: str) -> None:
        if resource.kind == "Pod" and user_agent.startswith(CONTROLLER_MANAGER_AGENT):
            self.record(7, "stored pod in etcd", obj, "Pod")
        elif not user_agent.startswith(CONTROLLER_MANAGER_AGENT):
            self.record(3, "validated, defaulted and stored in etcd (txn create-if-absent)", obj, resource.kind)

    def on_bound(self, pod: dict) -> None:
        node = (pod.get("spec") or {}).get("nodeName", "")
        self.record(10, f"Binding stored: spec.nodeName={node}", pod, "Pod")

    def on_pod_status(self, pod: dict) -> None:
        phase = (pod.get("status") or {}).get("phase", "")
        self.record(13, f"pod status stored in etcd: phase={phase} (ready={pod_ready(pod)})", pod, "Pod")

    def on_cache_event(self, resource: Any, ev: StoreEvent, delivered: int) -> None:
        """Watch-cache hook: steps 4, 8 and 11."""
        if resource.kind not in WORKLOAD_KINDS or resource.group not in ("", "apps"):
            return
        if ev.type == "ADDED":
            if resource.kind == "Pod":
                node = (ev.object.get("spec") or {}).get("nodeName")
                # A pod that names its node is never the scheduler's (seed 000, nodeName:
                # "跳过 Scheduler 的调度策略"); pkg/scheduler/eventhandlers.go only queues
                # pods with an empty spec.nodeName.
                detail = (f"spec.nodeName={node} already set: steps 9-11 skipped, the scheduler "
                          f"ignores the pod and {node}'s kubelet takes it" if node else "")
                self.record(8, "etcd watch event: pod ADDED", ev.object, "Pod", detail=detail)
            else:
                self.record(4, f"etcd watch event: {resource.kind} ADDED", ev.object, resource.kind)
        elif ev.type == "MODIFIED" and resource.kind == "Pod":
            node = (ev.object.get("spec") or {}).get("nodeName")
            if node and not ((ev.prev or {}).get("spec") or {}).get("nodeName"):
                self.record(11, f"etcd watch event: pod bound to {node}; MODIFIED sent to {delivered} watchers",
                            ev.object, "Pod")

    # --- HTTP ---------------------------------------------------------------------------

    async def handle_post(self, request: web.Request) -> web.Response:
        """``POST /debug/controlplane/trace`` body ``{"records": [StepRecord dicts]}``."""
        try:
            body = codec.loads(await request.read())
            raw = body["records"]
            if not isinstance(raw, list):
                raise ValueError("records must be a list")
            recs = [StepRecord.from_dict(r) for r in raw]
        except (ValueError, KeyError, TypeError) as e:
            raise st.bad_request(f"invalid trace records: {e}") from None
        poster = request_user(request).name  # who posted them, as authenticated: not the body's word
        for r in recs:
            r.user = poster
            self.buffer.append(r)
        return web.json_response({"accepted": len(recs)})

    async def handle_get(self, request: web.Request) -> web.StreamResponse:
        """``GET /debug/controlplane/trace?since=S[&follow=true]``: snapshot, then live lines."""
        try:
            since = float(request.query.get("since", "0") or 0)
        except ValueError:
            raise st.bad_request(f"invalid since: {request.query.get('since')!r}") from None
        follow = request.query.get("follow", "").lower() in ("1", "true", "yes")
        if not follow:
            return web.json_response({"records": [r.to_dict() for r in self.buffer.snapshot(since)]})
        resp = web.StreamResponse(headers={"Content-Type": "application/json"})
        resp.enable_chunked_encoding()
        await resp.prepare(request)
        sub = self.buffer.subscribe()
        nxt = asyncio.ensure_future(sub.__anext__())  # subscribe before the snapshot: nothing missed
        try:
            await asyncio.sleep(0)
            seen = set()
            for r in self.buffer.snapshot(since):
                seen.add(id(r))
                await resp.write(codec.dumps(r.to_dict()) + b"\n")
            while True:
                try:
                    r = await nxt
                except StopAsyncIteration:
                    break
                if id(r) not in seen:
                    await resp.write(codec.dumps(r.to_dict()) + b"\n")
                nxt = asyncio.ensure_future(sub.__anext__())
        except ConnectionResetError:  # the follower went away: the normal end of a follow
            return resp
        finally:
            nxt.cancel()
        return resp
