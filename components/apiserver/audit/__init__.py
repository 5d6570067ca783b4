"""Auditing: ``audit.k8s.io/v1`` Events for every request, as kube-apiserver writes them.

The filters of ``staging/src/k8s.io/apiserver/pkg/endpoints/filters`` (``audit_init.go``,
``audit.go``, ``authn_audit.go``) and ``pkg/audit/request.go``, as one :class:`Auditor` the
server's middleware calls at three points:

1. :meth:`Auditor.init` — ``WithAuditInit``, on every request, audit or not: the audit ID is
   the request's ``Audit-ID`` header, else a new UUID, and every response carries it back as
   ``Audit-Id`` (:meth:`Auditor.on_response_prepare`, aiohttp's ``on_response_prepare``).
2. :meth:`Auditor.begin` — ``WithAudit``, after authentication and before impersonation:
   the policy (:mod:`.policy`) is evaluated on the authenticated user's attributes; level
   ``None`` logs nothing; else the event is made (``auditID``, ``requestURI``, ``verb``,
   ``user``, ``impersonatedUser``, ``sourceIPs`` — ``X-Forwarded-For``, ``X-Real-Ip``, then
   the peer —, ``userAgent``, ``objectRef`` for resource requests, ``requestReceivedTimestamp``)
   and stage ``RequestReceived`` logged unless omitted.
   :meth:`Auditor.failed_authentication` is ``WithFailedAuthenticationAudit``: a 401 is logged
   once, at stage ``ResponseStarted``, with an empty user and the message
   ``Authentication failed, attempted: bearer, x509`` (or ``…, no credentials provided``).
3. :meth:`Auditor.complete` — the response: ``ResponseStarted`` when a long-running request
   (a watch, ``pods/log``) sends its headers, then ``ResponseComplete`` (``Panic`` for an
   internal error); ``responseStatus`` is ``{"metadata":{},"code":N}``, with a Status
   response's ``status``, ``message``, ``reason`` and ``details``; ``Request`` adds the
   ``requestObject`` (the body sent, when JSON or YAML), ``RequestResponse`` the
   ``responseObject`` too (a JSON response's body), ``metadata.managedFields`` dropped with
   ``omitManagedFields``; a create's ``objectRef`` gets the name and namespace of the object
   sent (``LogRequestObject``); the authorization filter's decision becomes the annotations
   ``authorization.k8s.io/decision`` (``allow`` / ``forbid``) and ``authorization.k8s.io/reason``.

Events go to a :class:`~.backend.LogBackend` as JSON lines (``--audit-log-format json``).
"""

from __future__ import annotations

import dataclasses
import time
from typing import Any

from aiohttp import web

from components.apiserver import auth
from components.apiserver.audit.backend import LogBackend
from components.apiserver.audit.policy import NONE, RANK, Policy, RequestAuditConfig, load_policy
from components.apiserver.authorization.attributes import request_attributes
from components.apiserver.negotiation import REQUEST_BODY, REQUEST_METADATA, parse_body
from controlplane import apitime, uid
from controlplane.api import codec

__all__ = ["AUDIT", "AuditContext", "Auditor", "LogBackend", "Policy", "load_policy"]

HEADER = "Audit-Id"
#: request storage key of the :class:`AuditContext` (shared by the request's clones)
AUDIT: Any = web.RequestKey("audit", object) if hasattr(web, "RequestKey") else "audit"
DECISION_ANNOTATION = "authorization.k8s.io/decision"
REASON_ANNOTATION = "authorization.k8s.io/reason"
_LONG_RUNNING_SUBRESOURCES = frozenset(("log", "exec", "attach", "portforward", "proxy"))


@dataclasses.dataclass
class AuditContext:
    """One request's audit state (``audit.AuditContext``)."""

    audit_id: str
    received: float
    config: RequestAuditConfig = NONE
    event: dict[str, Any] | None = None
    long_running: bool = False
    started: bool = False
    done: bool = False
    panic: bool = False


def source_ips(request: web.Request) -> list[str]:
    """``utilnet.SourceIPs``: the ``X-Forwarded-For`` addresses, ``X-Real-Ip``, then the peer's
    address, each once."""
    out: list[str] = []
    xff = request.headers.get("X-Forwarded-For")
    if xff:
        out += [p.strip() for p in xff.split(",") if p.strip()]
    real = (request.headers.get("X-Real-Ip") or "").strip()
    if real and real not in out:
        out.append(real)
    peer = request.transport.get_extra_info("peername") if request.transport is not None else None
    if peer and peer[0] not in out:
        out.append(peer[0])
    return out


def _annotate(ev: dict[str, Any], request: web.Request) -> None:
    """The authorization filter's decision as the event's annotations."""
    decision = request.get(auth.DECISION)
    if decision is not None:
        ev["annotations"] = {DECISION_ANNOTATION: decision[0], REASON_ANNOTATION: decision[1]} \
            if decision[1] else {DECISION_ANNOTATION: decision[0]}


def _drop_managed_fields(obj: Any) -> Any:
    if isinstance(obj, dict):
        md = obj.get("metadata")
        if isinstance(md, dict) and "managedFields" in md:
            obj = {**obj, "metadata": {k: v for k, v in md.items() if k != "managedFields"}}
        items = obj.get("items")
        if isinstance(items, list):
            obj = {**obj, "items": [_drop_managed_fields(i) for i in items]}
    return obj


def _decode_body(body: bytes | None, content_type: str) -> Any:
    """The value of a JSON, YAML or protobuf body (None when it does not decode)."""
    if not body:
        return None
    try:
        return parse_body(body, content_type or "application/json")
    except Exception:  # noqa: BLE001 - a body the handler refused is logged without its object
        return None


class Auditor:
    """The audit filter of one apiserver: ``policy`` (None: auditing off, only the audit IDs)
    and ``backend`` (where the encoded events go)."""

    def __init__(self, policy: Policy | None = None, backend: LogBackend | None = None) -> None:
        self.policy = policy if backend is not None else None
        self.backend = backend

    @property
    def enabled(self) -> bool:
        """Whether a policy was given (``--audit-policy-file``): without one nothing is audited."""
        return self.policy is not None

    async def start(self) -> None:
        """Start the log backend's writer task (none without ``--audit-log-path``)."""
        if self.backend is not None:
            self.backend.start()

    async def stop(self) -> None:
        """Write the queued events and stop the backend (the batch backend's shutdown flush)."""
        if self.backend is not None:
            await self.backend.stop()

    # -- the filter points ------------------------------------------------------
    def init(self, request: web.Request) -> AuditContext:
        """``WithAuditInit``: the request's :class:`AuditContext` with its audit ID."""
        ctx = AuditContext(request.headers.get(HEADER) or uid.new(), time.time())
        request[AUDIT] = ctx
        return ctx

    def begin(self, request: web.Request, user: auth.UserInfo, long_running: bool,
              requestor: auth.UserInfo | None = None, *, received_stage: bool = True) -> None:
        """``WithAudit``: evaluate the policy for ``requestor`` (the authenticated user; ``user``
        is who it acts as after impersonation) and log ``RequestReceived``."""
        ctx = request.get(AUDIT)
        if self.policy is None or ctx is None:
            return
        who = requestor or user
        attrs = request_attributes(who, request.method, request.path, request.query)
        request[auth.ATTRIBUTES] = attrs  # the authorization filter's too, for the same user
        config = self.policy.evaluate(attrs)
        if config.level == "None":
            return
        ctx.config = config
        ctx.long_running = long_running
        ev: dict[str, Any] = {"kind": "Event", "apiVersion": "audit.k8s.io/v1", "level": config.level,
                              "auditID": ctx.audit_id, "stage": "RequestReceived",
                              "requestURI": request.raw_path, "verb": attrs.verb, "user": who.as_dict()}
        if who is not user:
            ev["impersonatedUser"] = user.as_dict()
        ev["sourceIPs"] = source_ips(request)
        ua = request.headers.get("User-Agent")
        if ua:
            ev["userAgent"] = ua
        if attrs.resource_request:
            ref = {"resource": attrs.resource, "namespace": attrs.namespace, "name": attrs.name,
                   "apiGroup": attrs.api_group, "apiVersion": attrs.api_version, "subresource": attrs.subresource}
            ev["objectRef"] = {k: v for k, v in ref.items() if v}
        ev["requestReceivedTimestamp"] = apitime.format_micro_time(ctx.received)
        ctx.event = ev
        if received_stage:
            self._emit(ctx, "RequestReceived", ctx.received)

    def failed_authentication(self, request: web.Request, code: int) -> None:
        """``WithFailedAuthenticationAudit``: the 401 of ``request``, logged at ResponseStarted."""
        ctx = request.get(AUDIT)
        if self.policy is None or ctx is None:
            return
        nobody = auth.UserInfo("")
        methods = []
        authz = (request.headers.get("Authorization") or "").strip().split(" ")
        if authz[0].lower() == "basic" and len(authz) > 1:
            methods.append("basic")
        if len(authz) > 1 and authz[0].lower() == "bearer":
            methods.append("bearer")
        if (request.query.get("access_token") or "").strip():
            methods.append("access_token")
        ssl_obj = request.transport.get_extra_info("ssl_object") if request.transport is not None else None
        if ssl_obj is not None and ssl_obj.getpeercert(binary_form=True):
            methods.append("x509")
        message = ("Authentication failed, attempted: " + ", ".join(methods) if methods
                   else "Authentication failed, no credentials provided")
        self.begin(request, nobody, False, received_stage=False)
        ev = ctx.event
        if ev is None:
            return
        ev["user"] = {}
        ev["responseStatus"] = {"metadata": {}, "message": message, "code": code}
        ctx.done = True
        self._emit(ctx, "ResponseStarted", time.time())

    async def on_response_prepare(self, request: web.Request, response: web.StreamResponse) -> None:
        """Headers about to be sent: the ``Audit-Id`` header; ``ResponseStarted`` of a
        long-running request."""
        ctx = request.get(AUDIT)
        if ctx is None:
            return
        if HEADER not in response.headers:
            response.headers[HEADER] = ctx.audit_id
        if ctx.long_running and ctx.event is not None and not ctx.started and not ctx.done:
            ctx.started = True
            ctx.event["responseStatus"] = {"metadata": {}, "code": response.status}
            _annotate(ctx.event, request)
            self._emit(ctx, "ResponseStarted", time.time())

    def complete(self, request: web.Request, response: web.StreamResponse | None) -> None:
        """The request is answered (``response``; None: the client went away mid-stream):
        ``ResponseComplete`` (or ``Panic``)."""
        ctx = request.get(AUDIT)
        if ctx is None:
            return
        if response is not None and HEADER not in response.headers and not response.prepared:
            response.headers[HEADER] = ctx.audit_id
        ev = ctx.event
        if ev is None or ctx.done:
            return
        ctx.done = True
        if response is None:
            ev.setdefault("responseStatus", {"metadata": {}, "code": 200})
            _annotate(ev, request)
            self._emit(ctx, "ResponseComplete", time.time())
            return
        level = RANK[ctx.config.level]
        status: dict[str, Any] = {"metadata": {}, "code": response.status}
        body = getattr(response, "body", None) if isinstance(response, web.Response) else None
        rtype = response.content_type or ""
        resp_obj = None
        if isinstance(body, (bytes, bytearray)) and "json" in rtype and (response.status >= 300 or level >= 3):
            resp_obj = _decode_body(bytes(body), rtype)
            if isinstance(resp_obj, dict) and resp_obj.get("kind") == "Status" and response.status >= 300:
                status = {"metadata": {}}
                for k in ("status", "message", "reason", "details"):
                    if resp_obj.get(k):
                        status[k] = resp_obj[k]
                status["code"] = resp_obj.get("code") or response.status
        ev["responseStatus"] = status
        req_obj = None
        if request.method in ("POST", "PUT", "PATCH"):
            raw = request.get(REQUEST_BODY)  # the body the handler read
            if raw and (level >= 2 or (request.method == "POST" and "objectRef" in ev)):
                meta = request.get(REQUEST_METADATA) if level < 2 else None
                # at Metadata level only the identifying metadata is read: the create handler's
                # copy of it, when it made one, saves decoding the body again
                req_obj = {"metadata": meta} if meta is not None else _decode_body(raw, request.content_type or "")
        ref = ev.get("objectRef")
        if ref is not None and request.method == "POST" and isinstance(req_obj, dict):
            md = req_obj.get("metadata") or {}
            if isinstance(md, dict):
                for key in ("namespace", "name", "uid", "resourceVersion"):
                    if not ref.get(key) and md.get(key):
                        ref[key] = md[key]
        omf = ctx.config.omit_managed_fields
        if level >= 2 and req_obj is not None:
            ev["requestObject"] = _drop_managed_fields(req_obj) if omf else req_obj
        if level >= 3 and resp_obj is not None:
            ev["responseObject"] = _drop_managed_fields(resp_obj) if omf else resp_obj
        _annotate(ev, request)
        self._emit(ctx, "Panic" if ctx.panic else "ResponseComplete", time.time())

    def _emit(self, ctx: AuditContext, stage: str, when: float) -> None:
        ev = ctx.event
        if ev is None or self.backend is None or stage in ctx.config.omit_stages:
            return
        ev["stage"] = stage
        # the timestamps and annotations last, in the Event's field order
        ev["requestReceivedTimestamp"] = ev.pop("requestReceivedTimestamp")
        ev.pop("stageTimestamp", None)
        ev["stageTimestamp"] = apitime.format_micro_time(when)
        ann = ev.pop("annotations", None)
        if ann is not None:
            ev["annotations"] = ann
        self.backend.process(codec.dumps(ev) + b"\n")
