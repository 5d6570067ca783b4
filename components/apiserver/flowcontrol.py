"""API Priority and Fairness: every non-watch API request is classified, queued
fairly within its priority level, and answered 429 when its queue is full.

Facts from kube-apiserver (``staging/src/k8s.io/apiserver/pkg/util/flowcontrol/``,
``pkg/apis/flowcontrol/bootstrap/default.go``, ``pkg/server/filters/priority-and-fairness.go``):

* **Classification**: the FlowSchemas are tried by ``matchingPrecedence`` (then name); the
  first whose subjects (user, group, service account) and rules (verbs, API groups,
  resources, namespaces / cluster scope, or non-resource URLs) match the request picks
  its priority level. Its distinguisher (ByUser, ByNamespace or none) with the schema's
  name is the request's *flow*. :data:`FLOW_SCHEMAS` and :data:`PRIORITY_LEVELS` are
  the bootstrap configuration (the mandatory ``exempt`` / ``catch-all`` and the suggested
  ``system``, ``node-high``, ``leader-election``, ``workload-high``, ``workload-low``,
  ``global-default``). The user is the authenticated one; an anonymous request is told by
  its User-Agent (:func:`user_of`) — our components, until they carry credentials, send
  their Kubernetes counterparts' names and get the identities those have in a kubeadm cluster.
* **Concurrency**: the server's limit (``--max-requests-inflight`` +
  ``--max-mutating-requests-inflight``) is divided among the limited levels by their
  nominal concurrency shares, ``ceil(limit * shares / sum(shares))`` seats each; ``exempt``
  is not limited. (Borrowing between levels is not modelled.)
* **Queuing**: a queuing level has ``queues`` FIFO queues; a flow is shuffle-sharded onto
  ``handSize`` of them (dealt from a hash of the flow) and each request joins the one of
  its hand with the fewest waiting plus executing requests. A freed seat goes to the next
  non-empty queue in turn — fair queuing for requests of equal width, so one flow's burst
  waits in its own queues while other flows keep being served. A request waits at most
  the wait limit (a quarter of the request timeout); a full queue (``queueLengthLimit``)
  or a full ``Reject`` level (``catch-all``) is refused at once.
* **Answers**: a refused request gets 429 with ``Retry-After: 1``; every classified
  response carries ``X-Kubernetes-PF-FlowSchema-UID`` and
  ``X-Kubernetes-PF-PriorityLevel-UID``. ``/metrics`` adds ``apiserver_flowcontrol_*``.
"""

from __future__ import annotations

import asyncio
import functools
import hashlib
import math
import uuid
from collections import deque
from collections.abc import Coroutine, Iterator
from dataclasses import dataclass, field
from typing import Any

from prometheus_client.core import CounterMetricFamily, GaugeMetricFamily

from components.apiserver.routing import REQUEST_INFO, parse
from controlplane.metrics import exposition

SCHEMA_UID_HEADER = "X-Kubernetes-PF-FlowSchema-UID"
LEVEL_UID_HEADER = "X-Kubernetes-PF-PriorityLevel-UID"
_UID_NS = uuid.UUID("0b8e6a3c-7f53-4b0e-9d2c-6b7b0c2f9a11")

ALL = ("*",)


@dataclass(frozen=True)
class PriorityLevel:
    """A PriorityLevelConfiguration. ``queues`` 0: LimitResponse ``Reject``."""

    name: str
    shares: int = 0               # nominalConcurrencyShares
    exempt: bool = False
    queues: int = 0
    hand_size: int = 0
    queue_length_limit: int = 0

    @functools.cached_property
    def uid(self) -> str:
        return str(uuid.uuid5(_UID_NS, "prioritylevel/" + self.name))


@dataclass(frozen=True)
class ResourceRule:
    """A ResourcePolicyRule: ``resources`` include subresources as ``pods/status``."""

    verbs: tuple[str, ...] = ALL
    groups: tuple[str, ...] = ALL
    resources: tuple[str, ...] = ALL
    namespaces: tuple[str, ...] = ALL
    cluster_scope: bool = True


@dataclass(frozen=True)
class NonResourceRule:
    verbs: tuple[str, ...] = ALL
    urls: tuple[str, ...] = ALL


@dataclass(frozen=True)
class FlowSchema:
    """A FlowSchema with one PolicyRulesWithSubjects (all the bootstrap ones have one).
    ``service_accounts``: ``(namespace, name or "*")``."""

    name: str
    level: str
    precedence: int
    distinguisher: str = ""       # "ByUser", "ByNamespace" or "" (one flow)
    users: tuple[str, ...] = ()
    groups: tuple[str, ...] = ()
    service_accounts: tuple[tuple[str, str], ...] = ()
    resource_rules: tuple[ResourceRule, ...] = (ResourceRule(),)
    non_resource_rules: tuple[NonResourceRule, ...] = (NonResourceRule(),)

    @functools.cached_property
    def uid(self) -> str:
        return str(uuid.uuid5(_UID_NS, "flowschema/" + self.name))


PRIORITY_LEVELS = (
    PriorityLevel("exempt", exempt=True),
    PriorityLevel("system", 30, queues=64, hand_size=6, queue_length_limit=50),
    PriorityLevel("node-high", 40, queues=64, hand_size=6, queue_length_limit=50),
    PriorityLevel("leader-election", 10, queues=16, hand_size=4, queue_length_limit=50),
    PriorityLevel("workload-high", 40, queues=128, hand_size=6, queue_length_limit=50),
    PriorityLevel("workload-low", 100, queues=128, hand_size=6, queue_length_limit=50),
    PriorityLevel("global-default", 20, queues=128, hand_size=6, queue_length_limit=50),
    PriorityLevel("catch-all", 5),
)

_ELECTION = (ResourceRule(("get", "create", "update"), ("",), ("endpoints", "configmaps"), ("kube-system",), False),
             ResourceRule(("get", "create", "update"), ("coordination.k8s.io",), ("leases",), ALL, False))
_KUBE_SYSTEM_SA = (("kube-system", "*"),)

FLOW_SCHEMAS = (
    FlowSchema("exempt", "exempt", 1, groups=("system:masters",)),
    FlowSchema("probes", "exempt", 2, groups=("system:unauthenticated", "system:authenticated"),
               resource_rules=(), non_resource_rules=(NonResourceRule(("get",), ("/healthz", "/readyz", "/livez")),)),
    FlowSchema("system-leader-election", "leader-election", 100, "ByUser",
               users=("system:kube-controller-manager", "system:kube-scheduler"),
               service_accounts=_KUBE_SYSTEM_SA, resource_rules=_ELECTION, non_resource_rules=()),
    FlowSchema("endpoint-controller", "workload-high", 150, "ByUser",
               users=("system:kube-controller-manager",),
               service_accounts=(("kube-system", "endpoint-controller"),),
               resource_rules=(ResourceRule(("get", "create", "update"), ("",), ("endpoints",), ALL, False),),
               non_resource_rules=()),
    FlowSchema("workload-leader-election", "leader-election", 200, "ByUser", service_accounts=_KUBE_SYSTEM_SA,
               resource_rules=(ResourceRule(("get", "create", "update"), ("",), ("endpoints", "configmaps"), ALL,
                                            False), _ELECTION[1]), non_resource_rules=()),
    FlowSchema("system-node-high", "node-high", 400, "ByUser", groups=("system:nodes",),
               resource_rules=(ResourceRule(ALL, ("",), ("nodes", "nodes/status"), ALL, True),
                               ResourceRule(ALL, ("coordination.k8s.io",), ("leases",), ALL, False)),
               non_resource_rules=()),
    FlowSchema("system-nodes", "system", 500, "ByUser", groups=("system:nodes",)),
    FlowSchema("kube-controller-manager", "workload-high", 800, "ByNamespace",
               users=("system:kube-controller-manager",)),
    FlowSchema("kube-scheduler", "workload-high", 800, "ByNamespace", users=("system:kube-scheduler",)),
    FlowSchema("kube-system-service-accounts", "workload-high", 900, "ByNamespace",
               service_accounts=_KUBE_SYSTEM_SA),
    FlowSchema("service-accounts", "workload-low", 9000, "ByUser", groups=("system:serviceaccounts",)),
    FlowSchema("global-default", "global-default", 9900, "ByUser",
               groups=("system:unauthenticated", "system:authenticated")),
    FlowSchema("catch-all", "catch-all", 10000, "ByUser",
               groups=("system:unauthenticated", "system:authenticated")),
)

#: User-Agent product → (user, groups): the identities the Kubernetes components' kubeconfigs
#: carry in a kubeadm cluster (a kubelet is ``system:node:<its node>`` in ``system:nodes``:
#: see :func:`digest_of` for how the node is told)
AGENT_USERS = {
    "kube-controller-manager": ("system:kube-controller-manager", ("system:authenticated",)),
    "kube-scheduler": ("system:kube-scheduler", ("system:authenticated",)),
    "kubelet": ("system:node", ("system:nodes", "system:authenticated")),
}
NODE_LEASE_NAMESPACE = "kube-node-lease"


def user_of(user_agent: str | None) -> tuple[str, tuple[str, ...]]:
    """``(user, groups)`` for a request, from its User-Agent (until authentication exists):
    a known component's identity (:data:`AGENT_USERS`); otherwise the User-Agent's product
    token as the user, in ``system:authenticated``; no User-Agent: ``system:anonymous``."""
    product = (user_agent or "").split("/", 1)[0].strip()
    if not product:
        return "system:anonymous", ("system:unauthenticated",)
    return AGENT_USERS.get(product) or (product, ("system:authenticated",))


@dataclass(frozen=True)
class Digest:
    """What classification reads of a request (RequestDigest: RequestInfo + user)."""

    user: str
    groups: tuple[str, ...]
    verb: str
    path: str                     # non-resource requests only ("" for resource requests)
    is_resource: bool = False
    api_group: str = ""
    resource: str = ""            # with the subresource: "pods/status"
    namespace: str = ""


def _own_node(info: Any) -> str | None:
    """The node a kubelet's request is about when only that node's kubelet may make it
    (the Node authorizer's rule): its Node (and status) or its Lease in kube-node-lease."""
    r = info.resource
    if info.name and (r.kind == "Node" or (r.kind == "Lease" and info.namespace == NODE_LEASE_NAMESPACE)):
        return info.name
    return None


def digest_of(method: str, path: str, user_agent: str | None,
              user: tuple[str, tuple[str, ...]] | None = None) -> Digest:
    """The :class:`Digest` of an HTTP request (the verb as the RequestInfo resolver names
    it: get/list/create/update/patch/delete/deletecollection; watches are not classified).
    A kubelet writing its own Node or Lease is ``system:node:<node>`` (hollow nodes in one
    process are separate flows there, as separate kubelets are); its other requests do not
    name the node and share the user ``system:node``. ``user``: ``(name, groups)`` of an
    authenticated request, used instead of the User-Agent's identity."""
    name, groups = user or _users.get(user_agent) or _remember_user(user_agent)
    info = parse(path)
    if info is None or info.resource is None:
        return Digest(name, groups, method.lower(), path)
    if user is None and name == "system:node" and (node := _own_node(info)):
        name = f"system:node:{node}"
    res = info.resource.plural + (f"/{info.subresource}" if info.subresource else "")
    verb = {"POST": "create", "PUT": "update", "PATCH": "patch"}.get(method)
    if verb is None:
        if method == "DELETE":
            verb = "delete" if info.name else "deletecollection"
        else:
            verb = "get" if info.name else "list"
    ns = info.namespace or ("" if info.resource.kind != "Namespace" or not info.name else info.name)
    return Digest(name, groups, verb, "", True, info.group, res, ns)


_users: dict[str | None, tuple[str, tuple[str, ...]]] = {}


def _remember_user(user_agent: str | None) -> tuple[str, tuple[str, ...]]:
    if len(_users) > 1000:
        _users.clear()
    u = _users[user_agent] = user_of(user_agent)
    return u


def _in(value: str, allowed: tuple[str, ...]) -> bool:
    return "*" in allowed or value in allowed


def _url_matches(path: str, urls: tuple[str, ...]) -> bool:
    for u in urls:
        if u == "*" or u == path or (u.endswith("/*") and path.startswith(u[:-1])):
            return True
    return False


def matches(fs: FlowSchema, d: Digest) -> bool:
    """Whether ``fs``'s subjects and rules select the request (flowcontrol's rule.go)."""
    subject = (_in(d.user, fs.users) if fs.users else False) or any(g in d.groups for g in fs.groups) or \
        any(d.user == f"system:serviceaccount:{ns}:{n}" or
            (n == "*" and d.user.startswith(f"system:serviceaccount:{ns}:")) for ns, n in fs.service_accounts)
    if not subject:
        return False
    if not d.is_resource:
        return any(_in(d.verb, r.verbs) and _url_matches(d.path, r.urls) for r in fs.non_resource_rules)
    for r in fs.resource_rules:
        if not (_in(d.verb, r.verbs) and _in(d.api_group, r.groups) and _in(d.resource, r.resources)):
            continue
        if (r.cluster_scope and not d.namespace) or (d.namespace and _in(d.namespace, r.namespaces)):
            return True
    return False


class Rejected(Exception):
    """A request refused by flow control: ``reason`` queue-full, concurrency-limit or time-out."""

    def __init__(self, reason: str, schema: FlowSchema, level: PriorityLevel) -> None:
        super().__init__(reason)
        self.reason, self.schema, self.level = reason, schema, level

    def headers(self) -> dict[str, str]:
        return {SCHEMA_UID_HEADER: self.schema.uid, LEVEL_UID_HEADER: self.level.uid, "Retry-After": "1"}


@dataclass(eq=False)
class _Waiter:
    fut: asyncio.Future
    dispatched: bool = False


@dataclass(eq=False)
class _Level:
    """A priority level's runtime state: seats, queues, and the ring of non-empty queues."""

    config: PriorityLevel
    limit: int
    executing: int = 0
    queues: list[deque] = field(default_factory=list)
    in_use: list[int] = field(default_factory=list)
    ring: deque = field(default_factory=deque)

    def __post_init__(self) -> None:
        self.queues = [deque() for _ in range(self.config.queues)]
        self.in_use = [0] * self.config.queues

    @property
    def waiting(self) -> int:
        return sum(len(q) for q in self.queues)

    def dispatch(self) -> None:
        """Hand free seats to the queues' heads, one queue after the other."""
        while self.executing < self.limit and self.ring:
            qi = self.ring.popleft()
            q = self.queues[qi]
            w = q.popleft()
            if q:
                self.ring.append(qi)
            if w.fut.done():             # cancelled (client gone, or its wait timed out)
                continue
            self.executing += 1
            self.in_use[qi] += 1
            w.dispatched = True
            w.fut.set_result(None)

    def withdraw(self, qi: int, w: _Waiter) -> None:
        """Take a waiter that gave up out of its queue (dispatch may have dropped it already)."""
        q = self.queues[qi]
        try:
            q.remove(w)
        except ValueError:
            return
        if not q:
            self.ring.remove(qi)


class _Flow:
    """A cached classification: schema, level, the level's state, the flow's hand of
    queues, the response headers and the (schema, level) counters
    ``[dispatched, executing, waiting]``."""

    __slots__ = ("schema", "level", "state", "hand", "headers", "stats")

    def __init__(self, schema: FlowSchema, level: PriorityLevel, state: "_Level | None",
                 hand: tuple[int, ...], headers: dict[str, str], stats: list[int]) -> None:
        self.schema, self.level, self.state, self.hand = schema, level, state, hand
        self.headers, self.stats = headers, stats


class Seat:
    """An admitted request's seat; :meth:`release` it when the response is done."""

    __slots__ = ("_flow", "_queue", "_held")

    def __init__(self, flow: _Flow, queue: int) -> None:
        self._flow, self._queue, self._held = flow, queue, True

    @property
    def schema(self) -> FlowSchema:
        return self._flow.schema

    @property
    def level(self) -> PriorityLevel:
        return self._flow.level

    def headers(self) -> dict[str, str]:
        """The response headers naming the schema and level (one shared dict: do not change it)."""
        return self._flow.headers

    def release(self) -> None:
        if not self._held:
            return
        self._held = False
        f = self._flow
        f.stats[1] -= 1
        st = f.state
        if st is None:
            return
        st.executing -= 1
        if self._queue >= 0:
            st.in_use[self._queue] -= 1
        st.dispatch()


class FlowControl:
    """Priority and fairness for one apiserver (see the module docstring).

    ``server_concurrency``: seats shared by the limited levels (``--max-requests-inflight``
    + ``--max-mutating-requests-inflight``); ``wait_limit``: seconds a request may wait in
    its queue (the request timeout / 4)."""

    def __init__(self, server_concurrency: int = 600, wait_limit: float = 15.0,
                 levels: tuple[PriorityLevel, ...] = PRIORITY_LEVELS,
                 schemas: tuple[FlowSchema, ...] = FLOW_SCHEMAS) -> None:
        self.wait_limit = wait_limit
        self.levels = {pl.name: pl for pl in levels}
        self.schemas = sorted(schemas, key=lambda fs: (fs.precedence, fs.name))
        total = sum(pl.shares for pl in levels if not pl.exempt)
        self.state = {pl.name: _Level(pl, math.ceil(server_concurrency * pl.shares / total))
                      for pl in levels if not pl.exempt}
        self._flows: dict[Any, _Flow] = {}
        self._stats: dict[tuple[str, str], list[int]] = {}
        self._rejected: dict[tuple[str, str, str], int] = {}

    # -- classification ---------------------------------------------------------------
    def classify(self, d: Digest) -> tuple[FlowSchema, str]:
        """``(flow schema, flow distinguisher)``; the last schema (catch-all) when none matches."""
        fs = next((s for s in self.schemas if matches(s, d)), self.schemas[-1])
        dist = d.user if fs.distinguisher == "ByUser" else d.namespace if fs.distinguisher == "ByNamespace" else ""
        return fs, dist

    def hand(self, schema: str, distinguisher: str, level: PriorityLevel) -> tuple[int, ...]:
        """The flow's queues: ``handSize`` distinct indexes dealt from a hash of the flow
        (shuffle sharding, ``pkg/util/shufflesharding``)."""
        value = int.from_bytes(hashlib.sha256(f"{schema},{distinguisher}".encode()).digest()[:8], "big")
        deck = list(range(level.queues))
        cards = []
        for i in range(min(level.hand_size, level.queues)):
            value, pick = divmod(value, level.queues - i)
            cards.append(deck.pop(pick))
        return tuple(cards)

    def _flow(self, key: Any, d: Digest) -> _Flow:
        f = self._flows.get(key)
        if f is None:
            fs, dist = self.classify(d)
            pl = self.levels[fs.level]
            stats = self._stats.setdefault((fs.name, pl.name), [0, 0, 0])
            f = _Flow(fs, pl, self.state.get(pl.name), self.hand(fs.name, dist, pl) if pl.queues else (),
                      {SCHEMA_UID_HEADER: fs.uid, LEVEL_UID_HEADER: pl.uid}, stats)
            if len(self._flows) > 50_000:
                self._flows.clear()
            self._flows[key] = f
        return f

    # -- admission --------------------------------------------------------------------
    def admit(self, d: Digest) -> Coroutine[Any, Any, Seat]:
        """Wait for a seat for the request; raises :class:`Rejected` (queue full, Reject
        level full, waited longer than the wait limit). ``asyncio.CancelledError`` (the
        client went away) leaves the queue."""
        return self._admit(self._flow(d, d))

    def admit_request(self, request: Any, user: Any = None) -> Coroutine[Any, Any, Seat]:
        """:meth:`admit` for an aiohttp request (its method, path and user); the
        classification is cached per client, verb and target (not per object name). The
        request's RequestInfo is the one the server's middleware parsed, when it did.
        ``user``: the authenticated :class:`~components.apiserver.auth.UserInfo`; an anonymous
        (or no) user is still told by its User-Agent (:func:`user_of`), so components that
        carry no credentials yet keep their identities' priority levels."""
        ua, method, path = request.headers.get("User-Agent"), request.method, request.path
        who: Any = ua
        known: tuple[str, tuple[str, ...]] | None = None
        if user is not None and user.name != "system:anonymous":
            known = (user.name, tuple(user.groups))
            who = known
        try:
            info = request[REQUEST_INFO]
        except (KeyError, TypeError):
            info = parse(path)
        if info is None or info.resource is None:
            key: Any = (who, method, path)
        else:
            r = info.resource
            key = (who, method, r.group, r.plural, info.subresource, info.name is None, info.namespace,
                   info.name if r.kind in ("Namespace", "Node", "Lease") else None)
        f = self._flows.get(key)
        return self._admit(f if f is not None else self._flow(key, digest_of(method, path, ua, known)))

    async def _admit(self, f: _Flow) -> Seat:
        st = f.state
        if st is None:                                   # exempt
            return self._seated(f, -1)
        if not f.hand:                                   # LimitResponse Reject
            if st.executing >= st.limit:
                raise self._reject("concurrency-limit", f)
            st.executing += 1
            return self._seated(f, -1)
        queues, in_use = st.queues, st.in_use
        qi, best = -1, 1 << 30
        for i in f.hand:                                 # the shortest queue of the hand
            n = len(queues[i]) + in_use[i]
            if n < best:
                qi, best = i, n
        if not st.ring and st.executing < st.limit:      # nobody waits: take a free seat
            st.executing += 1
            in_use[qi] += 1
            return self._seated(f, qi)
        q = queues[qi]
        if len(q) >= f.level.queue_length_limit:
            raise self._reject("queue-full", f)
        w = _Waiter(asyncio.get_running_loop().create_future())
        q.append(w)
        if len(q) == 1:
            st.ring.append(qi)
        st.dispatch()
        if not w.dispatched:
            f.stats[2] += 1
            try:
                async with asyncio.timeout(self.wait_limit):
                    await w.fut
            except (TimeoutError, asyncio.CancelledError) as e:
                if not w.dispatched:
                    st.withdraw(qi, w)
                    if isinstance(e, asyncio.CancelledError):
                        raise
                    raise self._reject("time-out", f) from None
                if isinstance(e, asyncio.CancelledError):  # seated as the client left
                    self._seated(f, qi).release()
                    raise
            finally:
                f.stats[2] -= 1
        return self._seated(f, qi)

    @staticmethod
    def _seated(f: _Flow, qi: int) -> Seat:
        f.stats[0] += 1
        f.stats[1] += 1
        return Seat(f, qi)

    def _reject(self, reason: str, f: _Flow) -> Rejected:
        key = (f.schema.name, f.level.name, reason)
        self._rejected[key] = self._rejected.get(key, 0) + 1
        return Rejected(reason, f.schema, f.level)

    # -- metrics ----------------------------------------------------------------------
    def collect(self) -> Iterator[Any]:
        """The ``apiserver_flowcontrol_*`` families (prometheus-client's collector protocol), read
        from the current state: nominal seats per priority level, dispatched / rejected requests
        (counters) and executing / queued requests (gauges) per flow schema and priority level
        (``staging/src/k8s.io/apiserver/pkg/util/flowcontrol/metrics/metrics.go``)."""
        seats = GaugeMetricFamily("apiserver_flowcontrol_nominal_limit_seats", "Nominal number of execution "
                                  "seats configured for each priority level", labels=("priority_level",))
        for n, st in sorted(self.state.items()):
            seats.add_metric((n,), st.limit)
        yield seats
        pair = ("flow_schema", "priority_level")
        stats = sorted(self._stats.items())
        dispatched = CounterMetricFamily("apiserver_flowcontrol_dispatched_requests_total", "Number of requests "
                                         "executed by API Priority and Fairness subsystem", labels=pair)
        for k, v in stats:
            dispatched.add_metric(k, v[0])
        yield dispatched
        rejected = CounterMetricFamily("apiserver_flowcontrol_rejected_requests_total", "Number of requests "
                                       "rejected by API Priority and Fairness subsystem", labels=pair + ("reason",))
        for k3, n3 in sorted(self._rejected.items()):
            rejected.add_metric(k3, n3)
        yield rejected
        for name, i, help_ in (
                ("apiserver_flowcontrol_current_executing_requests", 1, "Number of requests in initial (for a "
                 "WATCH) or any (for a non-WATCH) execution stage in the API Priority and Fairness subsystem"),
                ("apiserver_flowcontrol_current_inqueue_requests", 2, "Number of requests currently pending in "
                 "queues of the API Priority and Fairness subsystem")):
            g = GaugeMetricFamily(name, help_, labels=pair)
            for k, v in stats:
                g.add_metric(k, v[i])
            yield g

    def render(self) -> str:
        """The ``apiserver_flowcontrol_*`` series (:meth:`collect`) in the Prometheus text format."""
        return exposition(self).decode()
