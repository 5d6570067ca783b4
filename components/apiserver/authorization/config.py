"""The apiserver's authorization, assembled from ``--authorization-mode``.

As ``pkg/kubeapiserver/authorizer/config.go``: one :class:`Authorization` holds the
authorizer of the modes (:func:`~.union.build`), the RBAC index and the Node graph kept
from the watch caches (:meth:`Authorization.on_cache_event`, called for every cache event;
:meth:`Authorization.sync` picks up a new or relisted cache), the access reviewer and the
HTTP filter.
"""

from __future__ import annotations

from collections.abc import Sequence
from typing import Any

from aiohttp import web

from components.apiserver.auth import Attributes, Authorizer, Decision
from components.apiserver.authorization import bootstrappolicy, context
from components.apiserver.authorization.node import NODE_USER_PREFIX, NodeAuthorizer, NodeGraph
from components.apiserver.authorization.rbac import CacheFeed, RBACAuthorizer, RBACIndex
from components.apiserver.authorization.reviews import AccessReviewer, AllowAllRules, NoRules, RuleResolver
from components.apiserver.authorization.union import AuthorizationFilter, attributes_decision, build

PODS_CACHE, PVCS_CACHE = "pods", "persistentvolumeclaims"
#: remembered filter decisions at most (cleared when full)
DECISIONS_SIZE = 50_000


class Authorization:
    """Authorization of one apiserver: ``modes`` (parsed ``--authorization-mode``) over the
    server's live ``caches`` mapping (cache name → watch cache)."""

    def __init__(self, modes: Sequence[str], caches: Any) -> None:
        self.modes = list(modes)
        self.caches = caches
        self.index = RBACIndex()
        self.feed = CacheFeed(self.index)
        self.graph = NodeGraph()
        #: the pods cache's objects dict the graph was filled from (a relist replaces it)
        self._pods_marker: Any = None
        self.rbac = RBACAuthorizer(self.index)
        self.node = NodeAuthorizer(self.graph, bootstrappolicy.node_rules(), self._pvc_volume, self._sync_pods)
        self.authorizer: Authorizer = build(self.modes, {"RBAC": lambda: self.rbac, "Node": lambda: self.node})
        resolvers: list[RuleResolver] = []
        by_mode: dict[str, RuleResolver] = {"AlwaysAllow": AllowAllRules(), "AlwaysDeny": NoRules(),
                                            "Node": self.node, "RBAC": self.rbac}
        for m in self.modes:
            resolvers.append(by_mode[m])
        #: the access reviews' answers (None for plain AlwaysAllow: the registry's stub answers)
        self.reviewer = AccessReviewer(self.authorizer, resolvers) if self.modes != ["AlwaysAllow"] else None
        #: (user name, groups, method, raw path with query) → (generation, decision, reason, attributes)
        self._decisions: dict[tuple[Any, ...], tuple[Any, Decision, str, Attributes]] = {}
        self.filter = AuthorizationFilter(self.authorizer, self.decide)

    @property
    def enabled(self) -> bool:
        """False for plain ``AlwaysAllow`` (nothing is checked)."""
        return self.modes != ["AlwaysAllow"]

    def decide(self, request: web.Request) -> tuple[Decision, str, Attributes]:
        """The filter's decision on ``request``, remembered per (user, method, path and query)
        while the policy it depends on is unchanged: the RBAC index's generation, and for a
        node user the Node graph's and the PVC cache's revision too (a hit costs a dict lookup,
        not a path parse)."""
        self.sync()
        user = context.request_user(request)
        if user.name.startswith(NODE_USER_PREFIX):
            self._sync_pods()
            pvcs = self.caches.get(PVCS_CACHE)
            gen: Any = (self.index.generation, self.graph.generation, pvcs.revision if pvcs is not None else 0)
        else:
            gen = self.index.generation
        key = (user.name, user.groups, request.method, request.raw_path)
        hit = self._decisions.get(key)
        if hit is not None and hit[0] == gen:
            return hit[1], hit[2], hit[3]
        decision, reason, attrs = attributes_decision(self.authorizer, request)
        if len(self._decisions) >= DECISIONS_SIZE:
            self._decisions.clear()
        self._decisions[key] = (gen, decision, reason, attrs)
        return decision, reason, attrs

    def _sync_pods(self) -> None:
        c = self.caches.get(PODS_CACHE)
        if c is not None and c.objects is not self._pods_marker:
            self._pods_marker = c.objects
            self.graph.replace(list(c.objects.values()))

    def sync(self) -> None:
        """Fill the index from a cache that is new or was relisted (cheap when none is)."""
        self.feed.sync(self.caches)

    def _pvc_volume(self, namespace: str, name: str) -> str | None:
        c = self.caches.get(PVCS_CACHE)
        if c is None:
            return None
        obj = c.objects.get(f"{c.prefix}{namespace}/{name}")
        v: str | None = (obj.get("spec") or {}).get("volumeName") if obj else None
        return v

    def on_cache_event(self, cache_name: str, type_: str, obj: dict[str, Any], prev: dict[str, Any] | None) -> None:
        """One watch-cache event (any resource): the RBAC kinds feed the index, pods the graph."""
        if cache_name == PODS_CACHE:
            if self._pods_marker is not None:
                self.graph.apply(type_, obj)
            return
        self.feed.on_event(cache_name, type_, obj, prev)
