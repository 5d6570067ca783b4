"""The apiserver: aiohttp app, etcd connection, watch caches, compactor, default namespaces.

:class:`APIServer` assembles the pieces and owns their lifecycle: :class:`~controlplane.storage.Store`
(etcd), one :class:`~components.apiserver.cache.WatchCache` per served resource (started and
stopped as resources are added to and removed from ``controlplane.api.resources.REGISTRY``),
the :class:`~components.apiserver.registrystore.RegistryStore` (storage semantics), the
HTTP handlers :class:`~components.apiserver.rest.RestHandlers` and
:class:`~components.apiserver.watch.WatchServer` (given the collaborators they use, never
the server), the discovery/OpenAPI documents, the trace endpoints and the
:class:`~components.apiserver.crd.CRDController` (CustomResourceDefinitions → served
custom resources). The middleware parses
each request's :class:`~components.apiserver.routing.RequestInfo` once; every error is a Status.
Compaction follows ``staging/src/k8s.io/apiserver/pkg/storage/etcd3/compact.go``: every
``compaction_interval`` seconds compact to the revision seen at the previous tick.
"""

from __future__ import annotations

import asyncio
import logging
import time
from typing import Any, Callable

from aiohttp import web

from components.apiserver import admission, apfobjects, auth, discovery, listoptions, routing, serving, strategy
from components.apiserver import status as st
from components.apiserver.admission.rbacpolicy import RBACPolicy
from components.apiserver.audit import Auditor
from components.apiserver.authentication import config as authn_config
from components.apiserver.authorization import bootstrappolicy
from components.apiserver.authorization.config import Authorization
from components.apiserver.authorization.union import DEFAULT_MODE
from components.apiserver.cache import WatchCache, cache_name
from components.apiserver.crd import CRDController
from components.apiserver.endpointlease import LeaseEndpointReconciler
from components.apiserver.flowcontrol import FlowControl, Rejected
from components.apiserver.metrics import Metrics
from components.apiserver.negotiation import json_response, warning_headers
from components.apiserver.otel import middlewares as otel_middleware
from components.apiserver.registrystore import RegistryStore
from components.apiserver.rest import RestHandlers
from components.apiserver.routing import RequestInfo
from components.apiserver.servicealloc import ServiceAllocator
from components.apiserver.tracing import Tracer
from components.apiserver.watch import WatchServer
from controlplane import apitime, gcpolicy
from controlplane.api import resources as R
from controlplane.api.groups import scheduling
from controlplane.log import event
from controlplane.metrics import CONTENT_TYPE
from controlplane.storage.errors import KeyExists, KeyNotFound, StorageError, Unavailable
from controlplane.storage.etcd import EtcdTLS
from controlplane.storage.store import Store, collection_prefix, object_key

log = logging.getLogger("apiserver")

DEFAULT_NAMESPACES = ("default", "kube-system", "kube-public", "kube-node-lease")
#: the key whose version claims a compaction interval (``compactRevKey``, storage/etcd3/compact.go)
COMPACT_REV_KEY = b"compact_rev_key"


class APIServer:
    """One apiserver on etcd ``etcd_url`` (``http://host:port``, or ``https://`` with ``etcd_tls``:
    ``--etcd-cafile`` / ``--etcd-certfile`` / ``--etcd-keyfile``).

    ``await start()`` connects (retrying after 20 ms, backing off to every ``retry_interval`` s
    while etcd is down; ``etcd.unreachable`` logged every ``retry_interval`` s),
    fills the caches and creates default namespaces; ``app`` is the aiohttp application,
    served with kube-apiserver's connection timeouts by :func:`components.apiserver.serving.listen`.
    ``min_request_timeout``: ``--min-request-timeout`` (seconds; see :class:`WatchServer`).
    """

    def __init__(self, etcd_url: str, bookmark_interval: float = 60.0, compaction_interval: float = 300.0,
                 retry_interval: float = 3.0, max_requests_inflight: int = 400,
                 max_mutating_requests_inflight: int = 200, request_timeout: float = 60.0,
                 gc_sweep_interval: float = 0.0, service_cluster_ip_range: str = "10.96.0.0/12",
                 service_node_port_range: str = "30000-32767", min_request_timeout: float = 1800.0,
                 enable_priority_and_fairness: bool = True,
                 admission_plugins: list[str] | None = None,
                 authentication: authn_config.Options | None = None,
                 authorization_modes: list[str] | None = None, etcd_tls: EtcdTLS | None = None,
                 audit: Auditor | None = None) -> None:
        self.store = Store(etcd_url, tls=etcd_tls)
        self.etcd_url = etcd_url
        self.tracer = Tracer()
        #: ``--audit-policy-file`` / ``--audit-log-*`` (components/apiserver/audit): audit IDs always
        self.audit = audit or Auditor()
        self.caches: dict[str, WatchCache] = {}
        self.compaction_interval = compaction_interval
        self.retry_interval = retry_interval
        self._tasks: list[asyncio.Task] = []
        self._unsubscribe: Any = None
        self._loop: asyncio.AbstractEventLoop | None = None
        self._cache_tasks: dict[str, asyncio.Task] = {}
        self.metrics = Metrics()
        self.store.observe = self.metrics.etcd_request
        #: --max-requests-inflight / --max-mutating-requests-inflight (watches are not counted)
        self.limits = {"readOnly": max_requests_inflight, "mutating": max_mutating_requests_inflight}
        self.inflight = {"readOnly": 0, "mutating": 0}
        self.request_timeout = request_timeout
        #: API Priority and Fairness (flowcontrol.py) in place of the two limits, as kube-apiserver
        self.flowcontrol = FlowControl(max_requests_inflight + max_mutating_requests_inflight,
                                       request_timeout / 4) if enable_priority_and_fairness else None
        #: gc_sweep_interval > 0: long-lived objects leave the cyclic GC (controlplane/gcpolicy.py)
        self.gc_freezer = gcpolicy.freezer(gc_sweep_interval)
        self.service_allocator = ServiceAllocator(
            service_cluster_ip_range, service_node_port_range,
            services=lambda: self.caches["services"].objects.values() if "services" in self.caches else (),
            store=self.store)
        #: ``--authorization-mode`` (authorization/config.py): the authorizers, the RBAC index and
        #: Node graph kept from the watch caches, the access reviewer, the HTTP filter
        self.authorization = Authorization(authorization_modes or [DEFAULT_MODE], self.caches)
        #: the admission chain (``admission_plugins``: the enabled plugins; None: all defaults)
        self.admission = admission.default_chain(admission.Context(self.store, self.caches),
                                                 admission.DEFAULT_PLUGINS if admission_plugins is None
                                                 else admission_plugins)
        if self.authorization.enabled:  # the RBAC storage's escalation check (policybased)
            self.admission = admission.Chain(list(self.admission.plugins) + [RBACPolicy(
                admission.Context(self.store, self.caches), self.authorization.authorizer,
                self.authorization.index, self.authorization.sync)])
        self.registry_store = RegistryStore(self.store, self.caches, self.tracer, self.service_allocator,
                                            self.admission)
        self.watch = WatchServer(self.caches, self.store.current_revision, bookmark_interval, min_request_timeout)
        #: authentication (components/apiserver/authentication): the filter step, TokenRequest
        self.authn = authn_config.build(authentication or authn_config.Options(), self.live_object,
                                        self.stored_object)
        # impersonation is authorized by the configured authorizers (filters/impersonation.go)
        self.authn.authentication.authorizer = self.authorization.authorizer
        self.rest = RestHandlers(self.registry_store, self.watch, ready=lambda: bool(self.caches),
                                 authn=self.authn, reviewer=self.authorization.reviewer)
        #: CustomResourceDefinitions → served custom resources (components/apiserver/crd.py)
        self.crds = CRDController(self.registry_store, self.caches, self.resources_settled)
        #: the ``kubernetes`` Endpoints' lease reconciler (once serving: ensure_kubernetes_service)
        self.endpoints: LeaseEndpointReconciler | None = None
        self._endpoints_task: asyncio.Task | None = None
        self.app = self._make_app()

    def cache_for(self, resource: Any) -> WatchCache | None:
        return self.caches.get(cache_name(resource))

    def live_object(self, plural: str, namespace: str, name: str) -> dict[str, Any] | None:
        """The object ``name`` of core resource ``plural`` in ``namespace`` as its watch cache
        holds it (None when absent or the cache is not filled): what the service-account
        token checks read, as kube-apiserver's ``ServiceAccountTokenGetter`` reads informers."""
        cache = self.caches.get(plural)
        if cache is None:
            return None
        return cache.get(object_key(cache.resource, namespace or None, name))

    async def stored_object(self, plural: str, namespace: str, name: str) -> dict[str, Any] | None:
        """The object ``name`` of core resource ``plural`` as etcd holds it (None when absent)."""
        try:
            return await self.store.get(object_key(R.get(plural), namespace or None, name))
        except KeyNotFound:
            return None

    # ------------------------------------------------------------------ lifecycle
    async def start(self) -> None:
        delay = min(0.02, self.retry_interval)
        next_log = 0.0
        while True:
            try:
                await self.store.etcd.status(timeout=self.retry_interval)
                break
            except StorageError as e:
                # a refused connection fails at once: retry soon (an etcd started beside us is
                # seconds from listening), backing off to retry_interval; log every retry_interval
                now = asyncio.get_running_loop().time()
                if now >= next_log:
                    event(log, "etcd.unreachable", logging.WARNING, url=self.etcd_url, error=str(e)[:160])
                    next_log = now + self.retry_interval
                await asyncio.sleep(delay)  # retry back-off
                delay = min(delay * 2, self.retry_interval)
        self._loop = asyncio.get_running_loop()
        self._unsubscribe = R.REGISTRY.subscribe(self._registry_changed)
        # every watch cache filled at once: one LIST each, concurrently (kube-apiserver's cachers
        # start in parallel too, one reflector goroutine per resource)
        await asyncio.gather(*(self._start_cache(r) for r in list(R.REGISTRY)))
        # the bootstrap objects, each kind's post-start hook concurrently (as kube-apiserver's
        # PostStartHooks run in parallel goroutines): one LIST per kind, then only what is missing
        # (or, for RBAC, out of date) is written, so a data dir that holds them costs no write
        await asyncio.gather(self._ensure_default_namespaces(), self._ensure_apf_objects(),
                             self.ensure_system_priority_classes(), self.ensure_rbac_policy())
        self.crds.start()
        await self.audit.start()
        if self.compaction_interval > 0:  # 0 disables compaction, as --etcd-compaction-interval=0
            self._tasks.append(asyncio.create_task(self._compactor(), name="compactor"))
        if self.gc_freezer is not None:
            self.gc_freezer.start()
        event(log, "apiserver.started", etcd=self.etcd_url, resources=len(self.caches))

    async def _stored_names(self, resource: Any) -> set[str]:
        """Names of the cluster-scoped ``resource``'s objects in etcd (one LIST)."""
        return {o["metadata"]["name"] for o in (await self.store.list(collection_prefix(resource))).items}

    async def _create_missing(self, resource: Any, objs: list[dict[str, Any]],
                              prepare: Callable[[dict[str, Any]], None] | None = None) -> None:
        """Create each cluster-scoped object of ``objs`` whose name ``resource`` does not hold yet
        (all at once; one another replica created meanwhile is left as it is). ``prepare`` runs
        on each before it is written, instead of the create strategy's defaults."""
        have = await self._stored_names(resource)
        writes = []
        for obj in objs:
            name = obj["metadata"]["name"]
            if name in have:
                continue
            if prepare is not None:
                prepare(obj)
            else:
                strategy.prepare_for_create(resource.kind, obj, None, False)
            writes.append(self._create_ignoring_exists(object_key(resource, None, name), obj))
        await asyncio.gather(*writes)

    async def _ensure_default_namespaces(self) -> None:
        """``default``, ``kube-system``, ``kube-public`` and ``kube-node-lease``, created when missing
        (the system namespaces controller, ``pkg/controlplane/controller/systemnamespaces``)."""
        await self._create_missing(R.NAMESPACES, [{"apiVersion": "v1", "kind": "Namespace", "metadata": {"name": ns}}
                                                  for ns in DEFAULT_NAMESPACES])

    async def _ensure_apf_objects(self) -> None:
        """The bootstrap FlowSchemas and PriorityLevelConfigurations, created when missing
        (kube-apiserver's APF configuration controller; :mod:`components.apiserver.apfobjects`):
        ``kubectl get flowschemas`` lists what classifies requests. An existing object is left
        as it is."""
        now = apitime.now()
        for plural, objs in (("prioritylevelconfigurations", apfobjects.priority_level_objects()),
                             ("flowschemas", apfobjects.flow_schema_objects(now))):
            try:
                resource = R.get(plural, "flowcontrol.apiserver.k8s.io")
            except KeyError:
                return

            def prepare(obj: dict[str, Any], resource: Any = resource) -> None:
                uid, status = obj["metadata"]["uid"], obj["status"]
                strategy.prepare_for_create(resource.kind, obj, None, False)
                obj["metadata"]["uid"] = uid  # the uid of the X-Kubernetes-PF-* headers
                obj["status"] = status        # the config controller's status write
            await self._create_missing(resource, list(objs), prepare)

    async def ensure_system_priority_classes(self) -> None:
        """Create ``system-node-critical`` and ``system-cluster-critical`` when absent (the
        scheduling post-start hook, ``pkg/registry/scheduling/rest/storage_scheduling.go``
        AddSystemPriorityClasses; an existing one is left as it is)."""
        await self._create_missing(scheduling.PRIORITYCLASSES, [scheduling.system_priority_class(name)
                                                               for name in scheduling.SYSTEM_PRIORITY_CLASSES])

    def _on_cache_event(self, resource: Any, ev: Any, delivered: int) -> None:
        """After a watch cache fanned an etcd event out: count it, trace it, then feed
        authorization's RBAC index and Node graph."""
        self.metrics.watch_events(resource, delivered)
        self.tracer.on_cache_event(resource, ev, delivered)
        if self.authorization.enabled:
            self.authorization.on_cache_event(cache_name(resource), ev.type, ev.object, ev.prev)

    async def ensure_rbac_policy(self) -> None:
        """Write and reconcile the bootstrap RBAC policy (``ensureRBACPolicy``,
        ``pkg/registry/rbac/rest/storage_rbac.go``; see
        :mod:`components.apiserver.authorization.bootstrappolicy`): a missing object is
        created, an existing auto-updated one gets what it lacks; nothing is removed."""
        for plural, objs in bootstrappolicy.policy().items():
            try:
                resource = R.get(plural, bootstrappolicy.RBAC)
            except KeyError:
                return
            existing = {(o["metadata"].get("namespace") or "", o["metadata"]["name"]): o
                        for o in (await self.store.list(collection_prefix(resource))).items}
            writes: list[Any] = []
            for obj in objs:
                md = obj["metadata"]
                ns = md.get("namespace")
                key = object_key(resource, ns, md["name"])
                cur = existing.get((ns or "", md["name"]))
                if cur is None:
                    strategy.prepare_for_create(resource.kind, obj, ns, resource.namespaced)
                    writes.append(self._create_ignoring_exists(key, obj))
                    continue
                if resource.kind.endswith("Binding"):
                    result = bootstrappolicy.reconcile_binding(obj, cur)
                    if result is None:
                        continue
                    op, want = result
                    if op == "recreate":
                        writes.append(self._recreate(resource, key, want))
                        continue
                else:
                    role = bootstrappolicy.reconcile_role(obj, cur)
                    if role is None:
                        continue
                    want = role
                writes.append(self.store.guaranteed_update(key, _reconciled(want)))
            await asyncio.gather(*writes)
        event(log, "apiserver.rbac_policy_ensured")

    async def _create_ignoring_exists(self, key: str, obj: dict[str, Any]) -> None:
        try:
            await self.store.create(key, obj)
        except KeyExists:
            pass

    async def _recreate(self, resource: Any, key: str, obj: dict[str, Any]) -> None:
        """A bootstrap binding whose roleRef changed: deleted and created again (reconciliation's
        ``ReconcileRecreate``)."""
        try:
            await self.store.delete(key)
        except StorageError:
            pass
        strategy.prepare_for_create(resource.kind, obj, obj["metadata"].get("namespace"), resource.namespaced)
        await self._create_ignoring_exists(key, obj)

    async def _start_cache(self, resource: R.Resource) -> None:
        """Start and fill the watch cache of ``resource`` (none for Bindings and the reviews,
        which are not stored, nor for a version converted from its storage version's)."""
        if resource.kind == "Binding" or not resource.stored or resource.converted \
                or cache_name(resource) in self.caches:
            return
        c = WatchCache(self.store, resource, on_event=self._on_cache_event)
        await c.start()
        if R.REGISTRY.lookup(resource.group, resource.version, resource.plural) is not resource \
                or cache_name(resource) in self.caches:
            await c.stop()  # removed (or replaced, or started by start()) while the cache was filling
            return
        self.caches[cache_name(resource)] = c

    async def _stop_cache(self, resource: R.Resource) -> None:
        if resource.converted:
            return  # the cache is its storage version's
        c = self.caches.pop(cache_name(resource), None)
        if c is not None:
            await c.stop()

    def _registry_changed(self, type_: str, resource: R.Resource) -> None:
        """``REGISTRY`` subscriber: a resource ADDED at run time gets its watch cache started,
        a DELETED one its cache stopped and dropped (as the apiextensions-apiserver's
        ``customresource_handler.go`` serves and forgets CRD storage). Discovery and OpenAPI
        follow ``REGISTRY.generation`` (:mod:`components.apiserver.discovery`); routes look
        resources up per request. Changes are applied in order, one task per cache name; a
        change made from another thread is handed to the server's loop."""
        loop = self._loop
        if loop is None or loop.is_closed():
            return  # not started (start() reads the registry) or gone
        try:
            same_loop = asyncio.get_running_loop() is loop
        except RuntimeError:
            same_loop = False
        if not same_loop:
            loop.call_soon_threadsafe(self._registry_changed_here, type_, resource)
            return
        self._registry_changed_here(type_, resource)

    def _registry_changed_here(self, type_: str, resource: R.Resource) -> None:
        name = cache_name(resource)
        prev = self._cache_tasks.get(name)

        async def run() -> None:
            if prev is not None:
                await asyncio.gather(prev, return_exceptions=True)
            if type_ == "DELETED":
                cache = self.caches.get(name)
                if cache is not None and cache.resource is not resource:
                    return  # another version of a custom resource owns the shared cache
                await self._stop_cache(resource)
                for other in R.REGISTRY:  # a CRD's other served versions share its cache
                    if cache_name(other) == name:
                        await self._start_cache(other)
                        break
                return
            cache = self.caches.get(name)
            if cache is not None and cache.resource is not resource and resource.extra.get("crd") \
                    and R.REGISTRY.lookup(cache.resource.group, cache.resource.version,
                                          cache.resource.plural) is cache.resource:
                return  # another served version of the same CRD: its cache serves this one too
            await self._stop_cache(resource)  # ADDED replaces an entry at the same path
            await self._start_cache(resource)
        task = asyncio.get_running_loop().create_task(run(), name=f"registry-{type_}-{name}")
        self._cache_tasks[name] = task
        task.add_done_callback(lambda t: self._cache_tasks.pop(name, None) if self._cache_tasks.get(name) is t
                               else None)
        event(log, "apiserver.resource_" + type_.lower(), resource=name)

    async def resources_settled(self) -> None:
        """Wait until the watch caches of resources added or removed so far are started or stopped."""
        while self._cache_tasks:
            await asyncio.gather(*list(self._cache_tasks.values()), return_exceptions=True)

    async def ensure_kubernetes_service(self, host: str, port: int) -> None:
        """The ``kubernetes`` Service in ``default`` at the range's first address (port 443 →
        the apiserver's ``port``), written only when missing or different
        (``pkg/controlplane/controller/kubernetesservice``), and its Endpoints listing every live
        apiserver replica, kept by :class:`~components.apiserver.endpointlease.LeaseEndpointReconciler`
        (this replica's Lease ``host:port``; renewed every 10 s in the background from now on)."""
        svc_key = object_key(R.SERVICES, "default", "kubernetes")
        ports = [{"name": "https", "port": 443, "protocol": "TCP", "targetPort": port}]
        svc: dict[str, Any] = {"apiVersion": "v1", "kind": "Service",
               "metadata": {"name": "kubernetes", "namespace": "default",
                            "labels": {"component": "apiserver", "provider": "kubernetes"}},
               "spec": {"type": "ClusterIP", "clusterIP": self.service_allocator.kubernetes_ip,
                        "clusterIPs": [self.service_allocator.kubernetes_ip], "ports": ports,
                        "sessionAffinity": "None", "internalTrafficPolicy": "Cluster",
                        "ipFamilies": ["IPv4"], "ipFamilyPolicy": "SingleStack"}}
        strategy.prepare_for_create("Service", svc, "default", True)
        try:
            await self.store.create(svc_key, svc)
        except KeyExists:
            def refresh(cur: dict, want: dict = svc) -> dict:
                cur["spec"] = {**cur.get("spec", {}), **want["spec"]}
                return cur
            await self.store.guaranteed_update(svc_key, refresh)
        self.endpoints = LeaseEndpointReconciler(self.store, host, port)
        eps = await self.endpoints.reconcile()
        self._endpoints_task = asyncio.create_task(self.endpoints.run(), name="endpoint-reconciler")
        event(log, "apiserver.kubernetes_service", cluster_ip=self.service_allocator.kubernetes_ip,
              endpoint=f"{host}:{port}", identity=self.endpoints.identity,
              endpoints=",".join(f"{h}:{p}" for h, p in eps))

    async def stop(self) -> None:
        if self.endpoints is not None:  # this replica leaves the kubernetes Endpoints
            if self._endpoints_task is not None:
                self._endpoints_task.cancel()
                await asyncio.gather(self._endpoints_task, return_exceptions=True)
            await self.endpoints.remove()
        await self.crds.stop()
        if self._unsubscribe is not None:
            self._unsubscribe()
            self._unsubscribe = None
        for t in list(self._cache_tasks.values()):
            t.cancel()
        await asyncio.gather(*self._cache_tasks.values(), return_exceptions=True)
        if self.gc_freezer is not None:
            await self.gc_freezer.stop()
        for t in self._tasks:
            t.cancel()
        for t in self._tasks:
            try:
                await t
            except (asyncio.CancelledError, Exception):
                pass
        for c in list(self.caches.values()):
            await c.stop()
        await self.audit.stop()
        await self.store.close()

    async def _compactor(self) -> None:
        """Every ``compaction_interval`` s, compact to the revision seen at the previous tick, as
        ``storage/etcd3/compact.go``: the tick is claimed with a Txn on the version of
        :data:`COMPACT_REV_KEY`, so of several apiservers on one etcd only one compacts per
        interval (the others see the key moved and take its version as theirs)."""
        version, rev = 0, 0
        while True:
            await asyncio.sleep(self.compaction_interval)  # periodic timer
            try:
                version, rev = await self._compact_once(version, rev)
            except StorageError as e:
                event(log, "etcd.compact_error", logging.WARNING, error=str(e)[:200])

    async def _compact_once(self, version: int, rev: int) -> tuple[int, int]:
        """One tick of compact.go's ``compact``: (the key's version now, etcd's revision now)."""
        from aetcd import rpc
        k = COMPACT_REV_KEY
        resp = await self.store.etcd.txn(
            compare=[rpc.Compare(key=k, result=rpc.Compare.EQUAL, target=rpc.Compare.VERSION, version=version)],
            success=[rpc.RequestOp(request_put=rpc.PutRequest(key=k, value=str(rev).encode()))],
            failure=[rpc.RequestOp(request_range=rpc.RangeRequest(key=k))])
        now = resp.header.revision
        if not resp.succeeded:  # another apiserver took this interval
            kvs = resp.responses[0].response_range.kvs
            return (kvs[0].version if kvs else 0), now
        if rev:  # nothing to compact at the first tick
            await self.store.compact(rev)
            event(log, "etcd.compacted", revision=rev)
        return version + 1, now

    # ------------------------------------------------------------------ HTTP
    def _make_app(self) -> web.Application:
        # authorization after the in-flight limits / flow control and the request deadline, as
        # DefaultBuildHandlerChain (WithAuthorization inside WithPriorityAndFairness)
        app = web.Application(middlewares=[serving.track_requests, *otel_middleware(), self._errors,
                                           self.authorization.filter.middleware],
                              client_max_size=4 * 1024 * 1024)
        app.on_shutdown.append(self.watch.shutdown)  # watch streams end cleanly on SIGTERM
        app.on_response_prepare.append(self.audit.on_response_prepare)  # Audit-Id; ResponseStarted
        def static(make):
            async def handler(request: web.Request) -> web.Response:
                return json_response(make())
            return handler

        def disco(make, core: bool):
            async def handler(request: web.Request) -> web.Response:
                if discovery.wants_aggregated(request.headers.get("Accept", "")):
                    # ETag + 304 to If-None-Match, as the aggregated discovery handler
                    # (endpoints/discovery/aggregated/etag.go ServeHTTPWithETag)
                    etag = discovery.aggregated_etag(core)
                    headers = {"ETag": etag, "Vary": "Accept", "Cache-Control": "public"}
                    if request.headers.get("If-None-Match") == etag:
                        return web.Response(status=304, headers=headers)
                    resp = json_response(discovery.aggregated_discovery(core), content_type=discovery.AGGREGATED_CT)
                    resp.headers.update(headers)
                    return resp
                return json_response(make())
            return handler
        # the discovery roots with a trailing slash too, as kube-apiserver serves them: /api/ is
        # go-restful's WebService Path("/api") + GET "/" (endpoints/discovery/legacy.go), /apis/
        # is registered beside /apis on the mux (endpoints/discovery/root.go), /version/ is
        # Path("/version") + GET "/" (server/routes/version.go). Plain routes, before the
        # catch-alls below (which would answer them 404)
        app.router.add_get("/api/", disco(discovery.api_versions, True))
        app.router.add_get("/apis/", disco(discovery.api_group_list, False))
        # the resource paths next: aiohttp tries routes in order, and nearly every request is one
        app.router.add_route("*", "/api/{tail:.*}", self._dispatch)
        app.router.add_route("*", "/apis/{tail:.*}", self._dispatch)
        app.router.add_get("/version", static(discovery.version_info))
        app.router.add_get("/version/", static(discovery.version_info))
        for p in ("/healthz", "/livez"):
            app.router.add_get(p, self._health)
        app.router.add_get("/readyz", self._readyz)
        app.router.add_get("/metrics", self._metrics)
        app.router.add_get("/api", disco(discovery.api_versions, True))
        app.router.add_get("/apis", disco(discovery.api_group_list, False))
        app.router.add_get("/openapi/v3", static(discovery.openapi_root))
        app.router.add_get("/openapi/v2", self._openapi_v2)
        app.router.add_get("/openapi/v3/{tail:.*}", self._openapi)
        app.router.add_post("/debug/controlplane/trace", self.tracer.handle_post)
        app.router.add_get("/debug/controlplane/trace", self.tracer.handle_get)
        return app

    async def _health(self, request: web.Request) -> web.Response:
        if not self.caches:
            return web.Response(status=500, text="[-]etcd not ready")
        return web.Response(text="ok")

    async def _readyz(self, request: web.Request) -> web.Response:
        """``/readyz``: ping, etcd (a Status call with a 2 s deadline, no alarm) and the watch caches;
        ``?verbose`` lists each check as the real apiserver (``[+]etcd ok``); failing → 500."""
        checks = {"ping": True, "etcd": False, "informer-sync": bool(self.caches)}
        try:
            # an active etcd alarm (NOSPACE: writes fail) fails the check too
            checks["etcd"] = not (await self.store.etcd.status(timeout=2.0)).errors
        except Exception:
            pass
        ok = all(checks.values())
        if "verbose" in request.query or not ok:
            lines = [f"[+]{k} ok" if v else f"[-]{k} failed: reason withheld" for k, v in checks.items()]
            lines.append("readyz check passed" if ok else "readyz check failed")
            return web.Response(status=200 if ok else 500, text="\n".join(lines) + "\n")
        return web.Response(text="ok")

    async def _metrics(self, request: web.Request) -> web.Response:
        watchers: dict[tuple[str, str, str], int] = {}
        for c in self.caches.values():
            r = c.resource
            watchers[(r.group, r.version, r.kind)] = watchers.get((r.group, r.version, r.kind), 0) + len(c.watchers)
        objects = [(c.resource.plural + (f".{c.resource.group}" if c.resource.group else ""), len(c.objects))
                   for c in self.caches.values()]
        text = self.metrics.render(watchers, dict(self.inflight), objects) + \
            (self.flowcontrol.render() if self.flowcontrol else "")
        return web.Response(text=text, headers={"Content-Type": CONTENT_TYPE, "X-Content-Type-Options": "nosniff"})

    async def _openapi_v2(self, request: web.Request) -> web.Response:
        return web.Response(body=discovery.openapi_v2_protobuf(),
                            content_type="application/octet-stream")

    async def _openapi(self, request: web.Request) -> web.Response:
        gv = discovery.openapi_gv_from_path(request.match_info["tail"])
        doc = discovery.openapi_doc(gv) if gv else None
        if doc is None:
            raise st.not_found_path()
        return json_response(doc)

    @web.middleware
    async def _errors(self, request: web.Request, handler) -> web.StreamResponse:
        """Every error as a Status; in-flight limits (429 + Retry-After, watches exempt);
        the request timeout (``?timeout=`` or ``request_timeout``, 504; a bad ``?timeout=`` 400);
        ``Warning`` headers; request metrics. (``staging/src/k8s.io/apiserver/pkg/server/filters/
        maxinflight.go``, ``timeout.go``; ``endpoints/filters/request_deadline.go``;
        ``endpoints/handlers/responsewriters``.)"""
        t0 = time.monotonic()
        audit = self.audit.init(request)  # WithAuditInit: the audit ID, echoed as Audit-Id
        api = request.path.startswith(("/api/", "/apis/"))
        # the one routing decision of the request: its RequestInfo, parsed here and read by
        # the dispatcher and the request metrics (requestinfo.go, WithRequestInfo)
        request[routing.REQUEST_INFO] = routing.parse(request.path) if api else None
        info = request[routing.REQUEST_INFO]
        # long-running requests hold no seat and have no deadline: watches and pods/log
        # (BasicLongRunningRequestCheck(watch, proxy; attach, exec, log, portforward) in
        # kube-apiserver's config; filters/priority-and-fairness.go serves them untracked)
        watch = api and (request.query.get("watch") in ("true", "1") or "/watch/" in request.path
                         or (info is not None and info.subresource == "log"))
        kind = "mutating" if request.method in ("POST", "PUT", "PATCH", "DELETE") else "readOnly"
        counted = api and not watch
        seat = rejected = None
        deadline = self.request_timeout
        if counted:
            # WithRequestDeadline runs before max-in-flight / APF: a bad ?timeout= is 400 first
            try:
                deadline = listoptions.request_timeout(request.query.get("timeout"), self.request_timeout)
            except st.APIError as e:
                return self._finish(request, json_response(e.body(), e.code), t0, api)
        # authentication and impersonation (filters/authentication.go, impersonation.go): 401 /
        # 403 before priority and fairness, which classifies by the user found here
        try:
            user, request = await self.authn.authentication.authenticate(request)
        except st.APIError as e:
            if e.code == 401:
                self.audit.failed_authentication(request, e.code)
            elif request.get(auth.REQUESTOR) is not None:  # an impersonation refused
                self.audit.begin(request, request[auth.REQUESTOR], False)
            return self._finish(request, json_response(e.body(), e.code), t0, api)
        request[auth.USER] = user
        if self.audit.enabled:  # WithAudit: after authentication, on the authenticated user
            self.audit.begin(request, user, watch, request.get(auth.REQUESTOR))
        try:
            if counted:
                if self.flowcontrol is not None:
                    counted = False
                    try:
                        seat = await self.flowcontrol.admit_request(request, user)
                    except Rejected as e:
                        rejected = e
                if rejected is not None or seat is None and self.inflight[kind] >= self.limits[kind]:
                    resp = json_response(st.APIError(429, "TooManyRequests",
                                                     "Too many requests, please try again later.",
                                                     {"retryAfterSeconds": 1}).body(), 429)
                    resp.headers.update(rejected.headers() if rejected else {"Retry-After": "1"})
                    counted = False
                    return self._finish(request, resp, t0, api)
                counted = True
                self.inflight[kind] += 1
            try:
                if counted:
                    # asyncio.timeout: no extra task per request, unlike wait_for
                    async with asyncio.timeout(deadline):
                        resp = await handler(request)
                else:
                    resp = await handler(request)
            except asyncio.TimeoutError:
                resp = json_response(st.timeout("Timeout: request did not complete within requested timeout - "
                                                "context deadline exceeded").body(), 504)
            except st.APIError as e:
                resp = json_response(e.body(), e.code)
            except web.HTTPException as e:
                if e.status == 404:
                    resp = json_response(st.not_found_path().body(), 404)
                elif e.status == 405:
                    resp = json_response(st.method_not_allowed().body(), 405)
                elif e.status == 413:
                    resp = json_response(st.too_large().body(), 413)
                else:
                    raise
            except Unavailable as e:
                resp = json_response(st.unavailable(str(e)).body(), 503)
            except StorageError as e:
                if "request is too large" in str(e) or "RESOURCE_EXHAUSTED" in str(e):
                    # etcd's ErrRequestTooLarge (--max-request-bytes, 1.5 MiB by default) or its
                    # gRPC receive limit → 413 RequestEntityTooLarge with etcd's text (kube-apiserver
                    # passes the etcd error through as a 500; handlers/patch.go isTooLargeError
                    # recognises it): the request is what is wrong, so a 4xx (issue 9)
                    resp = json_response(st.too_large(str(e).split(": ", 1)[-1]).body(), 413)
                else:
                    # any other etcd error (e.g. "etcdserver: mvcc: database space exceeded"): 500
                    # with its text and no reason, as responsewriters.ErrorToAPIStatus answers a
                    # non-Status error
                    event(log, "apiserver.storage_error", logging.ERROR, error=str(e)[:200])
                    body = st.APIError(500, "", str(e)).body()
                    del body["reason"]
                    resp = json_response(body, 500)
            except (asyncio.CancelledError, ConnectionResetError):
                self.audit.complete(request, None)  # the stream's ResponseComplete all the same
                raise  # the client went away: nothing to answer, nothing to log as an error
            except Exception as e:
                log.exception("internal error")
                audit.panic = True
                resp = json_response(st.internal(f"{type(e).__name__}: {e}").body(), 500)
        finally:
            if counted:
                self.inflight[kind] -= 1
            if seat is not None:
                seat.release()
        if seat is not None and not resp.prepared:
            resp.headers.update(seat.headers())
        return self._finish(request, resp, t0, api)

    def _finish(self, request: web.Request, resp: web.StreamResponse, t0: float, api: bool) -> web.StreamResponse:
        warning_headers(request, resp)
        self.audit.complete(request, resp)
        if api:
            elapsed = time.monotonic() - t0
            self.metrics.observe(_metric_labels(request, request.get(routing.REQUEST_INFO)), resp.status, elapsed)
            event(log, "http.request", logging.DEBUG, method=request.method, path=request.path,
                  code=resp.status, ms=round(elapsed * 1000, 1))
        return resp

    async def _dispatch(self, request: web.Request) -> web.StreamResponse:
        """An API request, on the RequestInfo the middleware parsed, to the REST handlers."""
        info = request.get(routing.REQUEST_INFO)
        if info is None:
            raise st.not_found_path()
        return await self.rest.serve(request, info)


def _reconciled(want: dict[str, Any]) -> Any:
    """The guaranteed-update mutation writing a reconciled bootstrap object's fields (and its
    labels and annotations) over the stored one."""
    def mutate(cur: dict[str, Any]) -> dict[str, Any]:
        out = {**cur, **{k: v for k, v in want.items() if k != "metadata"}}
        md = want.get("metadata") or {}
        out["metadata"] = {**(cur.get("metadata") or {}), "labels": md.get("labels", {}),
                           "annotations": md.get("annotations", {})}
        return out
    return mutate


def _metric_labels(request: web.Request, info: RequestInfo | None) -> tuple[str, ...]:
    """(verb, group, version, resource, subresource, scope, component) of an API request."""
    m = request.method
    if info is None or info.resource is None:
        return (m, "", "", "", "", "", "apiserver")
    watch = info.watch_path or request.query.get("watch") in ("true", "1")
    if m == "GET":
        verb = "WATCH" if watch else ("GET" if info.name else "LIST")
    elif m == "DELETE" and not info.name:
        verb = "DELETECOLLECTION"
    elif m == "PATCH" and request.content_type == "application/apply-patch+yaml":
        verb = "APPLY"
    else:
        verb = m
    scope = "resource" if info.name else ("namespace" if info.namespace else "cluster")
    return (verb, info.group, info.version, info.resource.plural, info.subresource or "", scope, "apiserver")
