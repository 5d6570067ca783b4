"""An asyncio REST client for the Kubernetes API (aiohttp).

Addresses resources through the registry (:mod:`controlplane.api.resources`),
speaks JSON, turns every non-2xx answer into :class:`ApiError` carrying the
server's ``Status`` (reason, message, code), and streams watches as
``(type, object)`` pairs. Semantics follow kubernetes/website
``content/en/docs/reference/using-api/api-concepts.md``.
"""

from __future__ import annotations

import asyncio
import logging
import time
from typing import Any, AsyncIterator
from urllib.parse import urlparse

import aiohttp

from controlplane import KUBE_VERSION, __version__, otel
from controlplane import metrics as m
from controlplane.api import codec
from controlplane.api.resources import Resource
from controlplane.client.config import DEFAULT_UP_KUBECONFIG, ClientConfig, load_config, load_kubeconfig
from controlplane.log import event

log = logging.getLogger("client")

__all__ = ["DEFAULT_UP_KUBECONFIG", "ApiError", "ClientConfig", "RequestTimeout", "RestClient",
           "resolve_server", "server_from_kubeconfig", "wait_ready"]
#: seconds a watch asking for bookmarks may stay silent before its connection is taken for dead
#: (a Kubernetes apiserver bookmarks an idle watch every minute, ``cacher.go`` bookmarkFrequency)
WATCH_IDLE_TIMEOUT = 90


class ApiError(Exception):
    """A non-2xx answer. ``code`` is the HTTP status, ``reason`` the Status reason
    (``NotFound``, ``AlreadyExists``, ``Conflict``, ``Invalid``, ``Expired``...)."""

    def __init__(self, code: int, reason: str, message: str, status: dict[str, Any] | None = None) -> None:
        super().__init__(f"{code} {reason}: {message}")
        self.code = code
        self.reason = reason
        self.message = message
        self.status = status or {}


class RequestTimeout(TimeoutError):
    """No (complete) answer within the request timeout: ``method``, ``url``, ``timeout`` (s).
    A TimeoutError, so callers that catch ``asyncio.TimeoutError`` / OSError see it as before."""

    def __init__(self, method: str, url: str, timeout: float) -> None:
        super().__init__(f"{method} {url}: no answer within {timeout:g}s (request timeout)")
        self.method = method
        self.url = url
        self.timeout = timeout


def server_from_kubeconfig(path: str) -> str:
    """The ``server`` URL of the current context's cluster in a kubeconfig file.

    Raises ValueError with a one-line message when the file is missing or malformed.
    """
    return load_kubeconfig(path).host


def resolve_server(master: str | None, kubeconfig: str | None) -> str:
    """Pick the apiserver URL: ``--master`` wins, then ``--kubeconfig``, then
    ``$KUBECONFIG``, then ``./.controlplane/kubeconfig`` (what ``controlplane up``
    writes in the working directory), then ``http://127.0.0.1:6443``
    (:func:`controlplane.client.config.load_config`'s host).

    Raises ValueError (one line) for a URL that is not ``http(s)://host[:port]``.
    """
    return load_config(master, kubeconfig).host


#: component -> the User-Agent name of its Kubernetes counterpart (client-go's
#: ``DefaultKubernetesUserAgent``: the binary's name), which the apiserver turns into the
#: managedFields manager (``kube-controller-manager``, ``kube-scheduler``, ``kubelet``)
KUBE_AGENTS = {"controller-manager": "kube-controller-manager", "scheduler": "kube-scheduler",
               "kubelet": "kubelet"}


#: connections a client keeps for its requests (watches have their own, see
#: :attr:`RestClient.watch_session`)
REQUEST_CONNECTIONS = 64
#: seconds an idle connection is kept for the next request. client-go's transports keep
#: theirs 90 s (``k8s.io/apimachinery/pkg/util/net/http.go`` SetOldTransportDefaults:
#: ``http.DefaultTransport``'s IdleConnTimeout); aiohttp's default is 15 s, which under
#: bursty load closed and re-opened pool connections — a TLS handshake on both ends each
#: time. 60 s: below the apiserver's idle timeout (90 s, ``components/apiserver/serving.py``),
#: so the client, not the server, closes an idle connection and no request is sent on one
#: the server is closing.
IDLE_CONNECTION_SECONDS = 60.0

#: resends of a request refused with 429 + Retry-After (client-go's default maxRetries)
MAX_RETRIES = 10

#: client-go's rest client metrics (``tools/metrics``, registered by component-base
#: ``metrics/prometheus/restclient``): one count and one latency per request sent (each retry
#: too; a watch when its response headers arrive); ``code`` ``<error>`` when no answer came
_requests = m.Children(m.counter("rest_client_requests_total", "Number of HTTP requests, partitioned by status "
                                 "code, method, and host.", ("code", "method", "host")))
_latency = m.Children(m.histogram("rest_client_request_duration_seconds", "Request latency in seconds. Broken down "
                                  "by verb, and host.", ("verb", "host"),
                                  (0.005, 0.025, 0.1, 0.25, 0.5, 1.0, 2.0, 4.0, 8.0, 15.0, 30.0, 60.0)))


def _observe(method: str, host: str, code: str, t0: float) -> None:
    _requests.get((code, method, host)).inc()
    _latency.get((method, host)).observe(time.monotonic() - t0)


class RestClient:
    """JSON REST client bound to one apiserver.

    ``user_agent`` names the caller: the components send the names their Kubernetes
    counterparts send (``kube-scheduler/v1.32.4 (linux/amd64) controlplane/0.1.0``; see
    :data:`KUBE_AGENTS`), so managedFields managers and the trace read as on a real cluster;
    our own tools send ``controlplane-demo/0.1.0`` and the like. All methods raise
    :class:`ApiError` on a non-2xx answer, ``aiohttp.ClientError`` on transport failures and
    :class:`RequestTimeout` (a TimeoutError) when no answer comes in time.

    Timeouts, in seconds (client-go's ``rest.Config.Timeout``, kubectl's ``--request-timeout``;
    0 or None = none): ``timeout`` bounds each non-watch request as a whole (30 s by default,
    as our components want a stuck apiserver to surface); ``connect_timeout`` bounds opening a
    connection, watches included. A watch is bounded by a read timeout (its ``timeoutSeconds``
    plus 30 s, at most :data:`WATCH_IDLE_TIMEOUT` with bookmarks), an endless stream
    (:meth:`open_stream`) by ``timeout`` until its response headers arrive.

    ``server`` is a URL (``http://…``, no credentials; an ``https://`` URL is verified against the
    system's trust store) or a :class:`~controlplane.client.config.ClientConfig` (client-go's
    ``rest.Config``: CA, client certificate, bearer token, ``insecure-skip-tls-verify``,
    ``tls-server-name``). One ``ssl.SSLContext`` (CA and client certificate loaded once) serves
    every connection of the client, and connections are kept alive (up to 64 for requests, one
    per open watch beside them), so a handshake is paid per connection, not per request (Python's ``ssl`` does not resume sessions across
    connections by itself). ValueError when the config's certificates cannot be loaded.
    """

    def __init__(self, server: str | ClientConfig, component: str = "client", timeout: float | None = 30.0,
                 connect_timeout: float = 10.0) -> None:
        self.config = server if isinstance(server, ClientConfig) else ClientConfig(host=server.rstrip("/"))
        self.server = self.config.host.rstrip("/")
        #: the TLS context of every connection (None for http://): CA and client certificate loaded once
        self.ssl_context = self.config.ssl_context()
        self.component = component
        kube = KUBE_AGENTS.get(component)
        self.user_agent = (f"{kube}/{KUBE_VERSION} (linux/amd64) controlplane/{__version__}" if kube
                           else f"controlplane-{component}/{__version__}")
        self.timeout = timeout or None
        self.connect_timeout = connect_timeout or None
        self._session: aiohttp.ClientSession | None = None
        self._watch_session: aiohttp.ClientSession | None = None
        #: the ``host`` label of the rest_client_* metrics
        self.host = urlparse(self.server).netloc

    @property
    def session(self) -> aiohttp.ClientSession:
        """The shared aiohttp session of requests (created on first use, up to
        :data:`REQUEST_CONNECTIONS` connections)."""
        if self._session is None or self._session.closed:
            self._session = self._new_session(REQUEST_CONNECTIONS)
        return self._session

    @property
    def watch_session(self) -> aiohttp.ClientSession:
        """The session of watches: one connection per open watch, without a limit, so that
        long-lived streams never hold the requests' connections (an HTTP/1.1 watch occupies its
        connection for its lifetime; client-go's transport sets no ``MaxConnsPerHost``, and over
        HTTP/2 its watches share one connection with the requests instead). A controller-manager
        watches some 50 resources: in one pool of 64 they left a handful for every request."""
        if self._watch_session is None or self._watch_session.closed:
            self._watch_session = self._new_session(0)
        return self._watch_session

    def _new_session(self, limit: int) -> aiohttp.ClientSession:
        return aiohttp.ClientSession(
            headers={"User-Agent": self.user_agent},
            connector=aiohttp.TCPConnector(limit=limit, ssl=self.ssl_context if self.ssl_context else True,
                                           keepalive_timeout=IDLE_CONNECTION_SECONDS))

    def request_kwargs(self, headers: dict[str, str]) -> dict[str, Any]:
        """The keywords of every ``session.request`` besides the URL: ``headers`` plus the
        credentials' (``Authorization: Bearer``, the token file read again every minute) and,
        with a kubeconfig's ``tls-server-name``, the name checked in the serving certificate."""
        kw: dict[str, Any] = {"headers": {**headers, **self.config.headers()}}
        if self.config.server_name and self.ssl_context is not None:
            kw["server_hostname"] = self.config.server_name
        return kw

    async def close(self) -> None:
        """Close the HTTP sessions (idempotent; a later request opens a new one)."""
        for session in (self._session, self._watch_session):
            if session is not None:
                await session.close()

    async def __aenter__(self) -> "RestClient":
        return self

    async def __aexit__(self, *exc: object) -> None:
        await self.close()

    # -- raw -----------------------------------------------------------------
    async def request(self, method: str, path: str, *, params: dict[str, Any] | None = None,
                      body: Any = None, content_type: str = "application/json",
                      timeout: float | None = None) -> Any:
        """Send one request; returns the decoded JSON answer (or None). ``timeout`` (seconds)
        overrides the client's for each attempt. A 429 with ``Retry-After`` (the apiserver's
        priority and fairness refused it unexecuted) is sent again after that many seconds, up
        to :data:`MAX_RETRIES` times, as client-go's rest client does (``rest/request.go``
        checkWait, maxRetries 10). Raises ApiError, aiohttp.ClientError, RequestTimeout."""
        data = None if body is None else codec.dumps(body)
        headers = {"Content-Type": content_type, "Accept": "application/json"}
        otel.inject(headers)  # the current span's traceparent, when tracing is on
        params = {k: str(v).lower() if isinstance(v, bool) else str(v)
                  for k, v in (params or {}).items() if v is not None}
        total = timeout or self.timeout
        t0 = time.monotonic()
        code = "<error>"
        try:
            for attempt in range(MAX_RETRIES + 1):
                t0, code = time.monotonic(), "<error>"
                async with self.session.request(
                        method, self.server + path, params=params, data=data, **self.request_kwargs(headers),
                        timeout=aiohttp.ClientTimeout(total=total, sock_connect=self.connect_timeout)) as resp:
                    code = str(resp.status)
                    wait = resp.headers.get("Retry-After", "") if resp.status == 429 else ""
                    if not wait.isdigit() or attempt == MAX_RETRIES:
                        body = await resp.read()
                        _observe(method, self.host, code, t0)
                        code = ""
                        return _decode(resp.status, body)  # JSON is UTF-8: no str in between
                _observe(method, self.host, code, t0)
                code = ""
                await asyncio.sleep(int(wait))  # the server's Retry-After, not synchronisation
        except asyncio.TimeoutError:
            raise RequestTimeout(method, self.server + path, total or self.connect_timeout or 0) from None
        finally:
            if code:  # no answer (or the caller went away): counted as <error>
                _observe(method, self.host, code, t0)
        raise AssertionError("unreachable")

    async def _object(self, method: str, path: str, **kw: Any) -> dict[str, Any]:
        """:meth:`request` (same keywords) for the verbs that answer with one object (or a Status)."""
        obj: dict[str, Any] = await self.request(method, path, **kw)
        return obj

    async def open_stream(self, path: str, params: dict[str, Any] | None = None) -> aiohttp.ClientResponse:
        """GET an endless stream (the trace's ``follow``): returns the response once its headers
        arrived within the client's ``timeout``; its body is then read without a time limit.
        The caller closes it (``async with``). Raises ApiError for a non-2xx answer,
        aiohttp.ClientError, RequestTimeout."""
        url = self.server + path
        try:
            async with asyncio.timeout(self.timeout):
                resp = await self.watch_session.get(url, params=params, **self.request_kwargs({"Accept": "application/json"}),
                                              timeout=aiohttp.ClientTimeout(total=None, sock_connect=self.connect_timeout))
                if resp.status >= 300:
                    try:
                        _decode(resp.status, await resp.read())
                    finally:
                        resp.release()
        except asyncio.TimeoutError:
            raise RequestTimeout("GET", url, self.timeout or self.connect_timeout or 0) from None
        return resp

    # -- typed verbs ---------------------------------------------------------
    async def get(self, res: Resource, name: str, namespace: str | None = None) -> dict[str, Any]:
        """GET one object (``/api/v1/namespaces/NS/pods/NAME``); ApiError 404 NotFound if absent."""
        return await self._object("GET", res.path(namespace, name))

    async def list(self, res: Resource, namespace: str | None = None, *,
                   label_selector: str | None = None, field_selector: str | None = None,
                   resource_version: str | None = None, limit: int | None = None) -> dict[str, Any]:
        """One page-merged list: follows ``continue`` until done; returns the List
        dict (``items`` and ``metadata.resourceVersion``)."""
        params: dict[str, Any] = {"labelSelector": label_selector, "fieldSelector": field_selector,
                                  "resourceVersion": resource_version, "limit": limit}
        out: dict[str, Any] | None = None
        while True:
            page = await self.request("GET", res.path(namespace), params=params)
            if out is None:
                out = page
            else:
                out["items"].extend(page.get("items") or [])
                out["metadata"] = page.get("metadata", {})
            cont = (page.get("metadata") or {}).get("continue")
            if not cont or not limit:
                break
            params = {"continue": cont, "limit": limit, "labelSelector": label_selector,
                      "fieldSelector": field_selector}
        assert out is not None
        out["items"] = out.get("items") or []
        return out

    async def create(self, res: Resource, obj: dict[str, Any], namespace: str | None = None) -> dict[str, Any]:
        """POST ``obj`` to its collection (namespace from the argument, else from
        ``obj.metadata``); returns the stored object. ApiError 409 AlreadyExists, 422 Invalid."""
        ns = namespace or (obj.get("metadata") or {}).get("namespace") if res.namespaced else None
        return await self._object("POST", res.path(ns), body=obj)

    async def update(self, res: Resource, obj: dict[str, Any], subresource: str | None = None) -> dict[str, Any]:
        """PUT ``obj`` (or its ``subresource``, e.g. ``status``) by its metadata's name and
        namespace; ``metadata.resourceVersion`` makes it a guarded update: ApiError 409
        Conflict when the object changed since (optimistic concurrency)."""
        md = obj["metadata"]
        return await self._object("PUT", res.path(md.get("namespace") if res.namespaced else None,
                                                  md["name"], subresource), body=obj)

    async def update_status(self, res: Resource, obj: dict[str, Any]) -> dict[str, Any]:
        """PUT ``obj`` to its ``/status`` subresource (only ``status`` is kept); as :meth:`update`."""
        return await self.update(res, obj, "status")

    async def patch(self, res: Resource, name: str, patch: Any, namespace: str | None = None, *,
                    patch_type: str = "merge", subresource: str | None = None) -> dict[str, Any]:
        """``patch_type``: ``merge`` (RFC 7386), ``strategic`` or ``json`` (RFC 6902)."""
        ct = {"merge": "application/merge-patch+json",
              "strategic": "application/strategic-merge-patch+json",
              "json": "application/json-patch+json"}[patch_type]
        return await self._object("PATCH", res.path(namespace, name, subresource), body=patch,
                                  content_type=ct)

    async def delete(self, res: Resource, name: str, namespace: str | None = None, *,
                     grace_period_seconds: int | None = None,
                     propagation_policy: str | None = None,
                     preconditions: dict[str, Any] | None = None) -> dict[str, Any]:
        """DELETE with a DeleteOptions body (``gracePeriodSeconds``, ``propagationPolicy``
        Foreground/Background/Orphan, ``preconditions`` e.g. ``{"uid": ...}``). Returns the
        object (still there with deletionTimestamp when finalizers or a grace period hold it)
        or a Status; ApiError 404 NotFound, 409 Conflict on a failed precondition."""
        body = delete_options(grace_period_seconds, propagation_policy, preconditions)
        return await self._object("DELETE", res.path(namespace, name), body=body)

    async def delete_collection(self, res: Resource, namespace: str | None = None, *,
                                label_selector: str | None = None,
                                propagation_policy: str | None = None) -> dict[str, Any]:
        """DELETE the collection (``deletecollection``: every object matching
        ``label_selector`` in ``namespace``) with a DeleteOptions body; returns the List of the
        objects deleted or marked for deletion. ApiError 405 MethodNotAllowed where the
        resource has no ``deletecollection`` verb."""
        body = delete_options(propagation_policy=propagation_policy)
        params = {"labelSelector": label_selector} if label_selector else None
        return await self._object("DELETE", res.path(namespace), body=body, params=params)

    async def create_subresource(self, res: Resource, name: str, subresource: str, body: dict[str, Any],
                                 namespace: str | None = None) -> dict[str, Any]:
        """POST to a subresource, e.g. ``pods/NAME/binding`` with a Binding."""
        return await self._object("POST", res.path(namespace, name, subresource), body=body)

    async def watch(self, res: Resource, namespace: str | None = None, *,
                    resource_version: str | None = None, label_selector: str | None = None,
                    field_selector: str | None = None, allow_bookmarks: bool = True,
                    timeout_seconds: int | None = 300) -> AsyncIterator[tuple[str, dict[str, Any]]]:
        """Yield ``(type, object)`` for each watch event (ADDED, MODIFIED, DELETED,
        BOOKMARK). An ERROR event raises :class:`ApiError` (410 Expired when the
        resourceVersion is too old). Ends when the server closes the stream."""
        given = {"watch": "true", "resourceVersion": resource_version,
                 "labelSelector": label_selector, "fieldSelector": field_selector,
                 "allowWatchBookmarks": "true" if allow_bookmarks else None,
                 "timeoutSeconds": timeout_seconds}
        params = {k: v for k, v in given.items() if v is not None}
        # with bookmarks (our apiserver, as Kubernetes', sends one a minute and 2 s before the
        # watch's timeout) a silent stream is a dead connection: give up on it after WATCH_IDLE_TIMEOUT
        idle = (timeout_seconds or 300) + 30
        timeout = aiohttp.ClientTimeout(total=None, sock_connect=self.connect_timeout,
                                        sock_read=min(idle, WATCH_IDLE_TIMEOUT) if allow_bookmarks else idle)
        t0 = time.monotonic()
        async with self.watch_session.get(self.server + res.path(namespace), params=params,
                                    **self.request_kwargs({"Accept": "application/json"}),
                                    timeout=timeout) as resp:
            _observe("GET", self.host, str(resp.status), t0)
            if resp.status >= 300:
                _decode(resp.status, await resp.text())
            async for ev in iter_json_lines(resp):
                typ, obj = ev.get("type"), ev.get("object") or {}
                if typ == "ERROR":
                    raise ApiError(int(obj.get("code") or 500), obj.get("reason", "InternalError"),
                                   obj.get("message", ""), obj)
                yield typ, obj


def delete_options(grace_period_seconds: int | None = None, propagation_policy: str | None = None,
                   preconditions: dict[str, Any] | None = None) -> dict[str, Any]:
    """A ``meta/v1`` DeleteOptions body with only the fields given (``gracePeriodSeconds`` in
    seconds, ``propagationPolicy`` Foreground/Background/Orphan, ``preconditions`` e.g.
    ``{"uid": ...}``)."""
    body: dict[str, Any] = {"kind": "DeleteOptions", "apiVersion": "v1"}
    if grace_period_seconds is not None:
        body["gracePeriodSeconds"] = grace_period_seconds
    if propagation_policy:
        body["propagationPolicy"] = propagation_policy
    if preconditions:
        body["preconditions"] = preconditions
    return body


async def iter_json_lines(resp: aiohttp.ClientResponse) -> AsyncIterator[Any]:
    """Decode a streamed body of one JSON document per line (a watch stream,
    the trace stream); blank lines are skipped. Raises ValueError on bad JSON."""
    buf = b""
    loads = codec.loads
    async for chunk in resp.content.iter_any():
        buf += chunk
        if b"\n" not in chunk:
            continue
        *lines, buf = buf.split(b"\n")
        for line in lines:
            if line.strip():
                yield loads(line)


def raise_for_status(status: int, text: str) -> None:
    """Raise :class:`ApiError` for a non-2xx answer (its Status, if it is one)."""
    _decode(status, text)


def _decode(status: int, text: str | bytes) -> Any:
    try:
        body = codec.loads(text) if text else None
    except ValueError:
        body = None
    if status >= 300:
        if isinstance(body, dict) and body.get("kind") == "Status":
            raise ApiError(int(body.get("code") or status), body.get("reason", ""),
                           body.get("message", ""), body)
        raise ApiError(status, "Unknown", (text.decode("utf-8", "replace") if isinstance(text, bytes) else text)[:200])
    return body


async def wait_ready(client: RestClient, timeout: float | None = None) -> None:
    """Poll ``/readyz`` until the apiserver answers 200.

    Start-up only: components block here until the apiserver is reachable,
    logging ``event=apiserver.waiting`` at once and then every 5 s so a wrong
    address is visible. Retries after 20 ms, backing off to every 50 ms (a refused
    connection on localhost costs next to nothing; a cluster started all at once sees
    its apiserver ready within that, 25 ms late on average). ``timeout`` (seconds, None = forever) raises
    TimeoutError.
    """
    loop = asyncio.get_running_loop()
    start = loop.time()
    next_log = start
    delay = 0.02
    while True:
        err = ""
        try:
            async with client.session.get(client.server + "/readyz", **client.request_kwargs({}),
                                          timeout=aiohttp.ClientTimeout(total=2)) as r:
                if r.status == 200:
                    if next_log > start:
                        event(log, "apiserver.reachable", url=client.server)
                    return
                err = f"/readyz answered {r.status}"
        except (aiohttp.ClientError, asyncio.TimeoutError, OSError) as e:
            err = str(e) or type(e).__name__
        now = loop.time()
        if now >= next_log:
            event(log, "apiserver.waiting", logging.WARNING, url=client.server, error=err,
                  waited=f"{now - start:.0f}s")
            next_log = now + 5
        if timeout is not None and now - start > timeout:
            raise TimeoutError(f"apiserver {client.server} not ready after {timeout:.0f}s: {err}")
        await asyncio.sleep(delay)  # retry backoff, not synchronisation
        delay = min(delay * 2, 0.05)
