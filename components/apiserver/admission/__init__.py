"""Admission: the plugin chain every create, update and delete passes, as kube-apiserver's.

As ``staging/src/k8s.io/apiserver/pkg/admission`` (``interfaces.go``: Attributes,
MutationInterface ``Admit``, ValidationInterface ``Validate``, ``Handles(operation)``;
``chain.go``: the plugins in order, every mutating one, then every validating one) with the
default plugins of ``plugin/pkg/admission/...`` in kube-apiserver's order
(``pkg/kubeapiserver/options/plugins.go`` AllOrderedPlugins), one module each:
NamespaceLifecycle, LimitRanger, ServiceAccount, Priority, DefaultTolerationSeconds,
DefaultStorageClass, StorageObjectInUseProtection, PersistentVolumeClaimResize, RuntimeClass,
ResourceQuota.

:class:`~components.apiserver.registrystore.RegistryStore` calls :meth:`Chain.admit` after
defaulting (and the create's managedFields) and before validation, and
:meth:`Chain.validate` after validation, before the write — where ``handlers/create.go``,
``update.go`` and ``delete.go`` call them. A plugin rejects with an
:class:`~components.apiserver.status.APIError` (mostly :func:`forbidden`, as
``admission.NewForbidden``: 403 ``<resource> "<name>" is forbidden: <reason>``).

Plugins read other objects from the apiserver's watch caches (:class:`Context`, as the
plugins' informer listers of the loopback client) and may write through the storage
(ResourceQuota's usage).
"""

from __future__ import annotations

import asyncio
import builtins
import dataclasses
import time
from collections.abc import Iterable, Sequence
from typing import Any, ClassVar

from components.apiserver import status as st
from components.apiserver.cache import WatchCache, cache_name
from controlplane.storage.errors import KeyNotFound
from controlplane.storage.store import Store, collection_prefix, object_key

CREATE, UPDATE, DELETE, CONNECT = "CREATE", "UPDATE", "DELETE", "CONNECT"
#: how long a live lookup's answer is reused when the cache holds nothing (limitranger liveTTL)
LIVE_LOOKUP_TTL = 30.0
#: entries kept at most (the plugins' LRU size: 10000)
LIVE_LOOKUP_SIZE = 10000
JSON = dict[str, Any]


@dataclasses.dataclass
class Attributes:
    """What is admitted (admission.Attributes): the operation (:data:`CREATE`, :data:`UPDATE`,
    :data:`DELETE`), the registry resource and subresource (``""`` for the main resource),
    namespace and name (a create's generated name is known), the object (mutable by mutating
    plugins; None on delete) and the stored one (update, delete), and whether it is a dry run."""

    operation: str
    resource: Any
    namespace: str | None
    name: str
    object: JSON | None
    old_object: JSON | None = None
    subresource: str = ""
    dry_run: bool = False

    @property
    def kind(self) -> str:
        return str(self.resource.kind)

    def is_pod(self) -> bool:
        """A pod itself (no subresource), what most plugins act on."""
        return self.resource.kind == "Pod" and self.resource.group == "" and not self.subresource


class Context:
    """What plugins see of the cluster: the watch caches (``caches``: the server's live
    mapping of :func:`~components.apiserver.cache.cache_name` → cache) and the storage."""

    def __init__(self, store: Store, caches: Any, live_ttl: float = LIVE_LOOKUP_TTL) -> None:
        self.store = store
        self.caches = caches
        self.live_ttl = live_ttl
        self._live: dict[tuple[str, str | None], tuple[float, builtins.list[JSON]]] = {}
        self._live_inflight: dict[tuple[str, str | None], asyncio.Future[builtins.list[JSON]]] = {}

    def cache(self, resource: Any) -> WatchCache | None:
        c: WatchCache | None = self.caches.get(cache_name(resource))
        return c

    def list(self, resource: Any, namespace: str | None = None) -> list[JSON]:
        """The cached objects of ``resource`` (in ``namespace`` when given); [] without a cache."""
        c = self.cache(resource)
        if c is None:
            return []
        items, _rev = c.list(None, namespace)
        return items

    def get(self, resource: Any, namespace: str | None, name: str) -> JSON | None:
        """The cached object, or None."""
        c = self.cache(resource)
        return c.get(object_key(resource, namespace, name)) if c is not None else None

    async def list_live(self, resource: Any, namespace: str | None) -> builtins.list[JSON]:
        """:meth:`list`, and when the cache has none a live list, remembered for ``live_ttl``
        seconds per namespace (limitranger's and resourcequota's live lookup with its LRU
        of 30 s: a LimitRange or quota created a moment ago counts, and a namespace without
        any costs one storage read per TTL, not one per create). Concurrent misses of one
        namespace share one read, as the plugins' ``singleflight.Group`` coalesces them
        (``plugin/pkg/admission/resourcequota/resource_access.go`` GetQuotas)."""
        items = self.list(resource, namespace)
        if items:
            return items
        key = (cache_name(resource), namespace)
        hit = self._live.get(key)
        if hit is not None and hit[0] > time.monotonic():
            return hit[1]
        pending = self._live_inflight.get(key)
        if pending is None:
            pending = self._live_inflight[key] = asyncio.ensure_future(self._read_live(key, resource, namespace))
            pending.add_done_callback(lambda _f: self._live_inflight.pop(key, None))
        return await asyncio.shield(pending)

    async def _read_live(self, key: tuple[str, str | None], resource: Any,
                         namespace: str | None) -> builtins.list[JSON]:
        res = await self.store.list(collection_prefix(resource, namespace))
        out: builtins.list[JSON] = res.items
        if len(self._live) >= LIVE_LOOKUP_SIZE:
            self._live.clear()
        self._live[key] = (time.monotonic() + self.live_ttl, out)
        return out

    async def lookup(self, resource: Any, namespace: str | None, name: str) -> JSON | None:
        """The cached object, else a live read (the plugins' live lookup on a cache miss, so an
        object created a moment ago counts), or None when absent."""
        obj = self.get(resource, namespace, name)
        if obj is not None:
            return obj
        try:
            found: JSON = await self.store.get(object_key(resource, namespace, name))
        except KeyNotFound:
            return None
        return found


#: the two phases of the chain (``chain.go``: every MutationInterface's Admit, then every
#: ValidationInterface's Validate)
ADMIT, VALIDATE = "admit", "validate"
#: (API group, resource plural, subresource) — ``a.GetResource().GroupResource()`` and
#: ``a.GetSubresource()``, what the Kubernetes plugins compare before doing any work
GroupResourceSub = tuple[str, str, str]
#: the core ``pods`` resource itself, what most plugins act on (:meth:`Attributes.is_pod`)
POD_ONLY: frozenset[GroupResourceSub] = frozenset({("", "pods", "")})
#: distinct (resource, subresource, operation) plans a chain keeps before starting afresh
PLAN_CACHE_SIZE = 4096


class Plugin:
    """One admission plugin. ``operations``: what it handles (``Handles``); a mutating plugin
    overrides :meth:`admit` and sets ``mutating``, a validating one :meth:`validate` and
    ``validating`` (a plugin may be both, as LimitRanger).

    ``admit_resources`` / ``validate_resources``: the :data:`GroupResourceSub` triples its
    :meth:`admit` / :meth:`validate` can act on — the resource (and subresource) checks the
    Kubernetes plugin makes first thing in ``Admit`` / ``Validate`` and returns nil
    otherwise; ``None`` (the default): every resource. The :class:`Chain` never calls a plugin
    for a request :meth:`applies` rules out, so these must cover every request on which
    the method does anything (its own checks stay: a superset is fine, a subset is not)."""

    name: ClassVar[str] = ""
    operations: ClassVar[frozenset[str]] = frozenset({CREATE, UPDATE})
    mutating: ClassVar[bool] = False
    validating: ClassVar[bool] = False
    admit_resources: ClassVar[frozenset[GroupResourceSub] | None] = None
    validate_resources: ClassVar[frozenset[GroupResourceSub] | None] = None

    def __init__(self, ctx: Context) -> None:
        self.ctx = ctx

    def handles(self, operation: str) -> bool:
        return operation in self.operations

    def applies(self, phase: str, resource: Any, subresource: str, operation: str) -> bool:
        """Whether :meth:`admit` (``phase`` :data:`ADMIT`) or :meth:`validate`
        (:data:`VALIDATE`) can act on a request of ``operation`` on ``resource`` (a registry
        resource: ``group``, ``plural``) / ``subresource`` (``""`` for the main resource):
        :meth:`handles` the operation and the triple is in the phase's resources (any when
        None). A function of those three only: the :class:`Chain` caches its answer."""
        if not self.handles(operation):
            return False
        wanted = self.admit_resources if phase == ADMIT else self.validate_resources
        return wanted is None or (resource.group, resource.plural, subresource) in wanted

    async def admit(self, a: Attributes) -> None:
        """Mutate ``a.object``; raise an APIError to reject."""

    async def validate(self, a: Attributes) -> None:
        """Raise an APIError to reject; never mutates."""


#: a resolved plan: the resource it is for (kept so its id is not reused while cached), then
#: the bound ``admit`` methods and the bound ``validate`` methods to await, in chain order
_Plan = tuple[Any, tuple[Any, ...], tuple[Any, ...]]


class Chain:
    """The plugins in order (``chain.go``): :meth:`admit` runs every mutating plugin that
    handles the operation, :meth:`validate` every validating one; the first error wins.

    Which plugins a request reaches depends only on its resource, subresource and operation
    (:meth:`Plugin.applies`), so the chain works it out once per such triple (lazily, cached:
    :meth:`plan`) and awaits only those plugins: a pod status update meets no mutating
    plugin at all. The order and the outcome are those of calling every plugin, each
    returning at once where its resource checks fail."""

    def __init__(self, plugins: Sequence[Plugin]) -> None:
        self.plugins = tuple(plugins)
        self._plans: dict[tuple[int, str, str], _Plan] = {}

    @property
    def names(self) -> list[str]:
        return [p.name for p in self.plugins]

    def plan(self, resource: Any, subresource: str, operation: str) -> tuple[list[str], list[str]]:
        """The names of the plugins a request of ``operation`` on ``resource`` /
        ``subresource`` is admitted by, then validated by, in chain order."""
        _r, admits, validates = self._plan(resource, subresource, operation)
        return ([m.__self__.name for m in admits], [m.__self__.name for m in validates])

    def _plan(self, resource: Any, subresource: str, operation: str) -> _Plan:
        key = (id(resource), subresource, operation)
        found = self._plans.get(key)
        if found is not None and found[0] is resource:
            return found
        admits = tuple(p.admit for p in self.plugins
                       if p.mutating and p.applies(ADMIT, resource, subresource, operation))
        validates = tuple(p.validate for p in self.plugins
                          if p.validating and p.applies(VALIDATE, resource, subresource, operation))
        if len(self._plans) >= PLAN_CACHE_SIZE:
            self._plans.clear()
        plan = self._plans[key] = (resource, admits, validates)
        return plan

    async def admit(self, a: Attributes) -> None:
        for admit in self._plan(a.resource, a.subresource, a.operation)[1]:
            await admit(a)

    async def validate(self, a: Attributes) -> None:
        for validate in self._plan(a.resource, a.subresource, a.operation)[2]:
            await validate(a)


def forbidden(a: Attributes, err: str | Iterable[str]) -> st.APIError:
    """``admission.NewForbidden``: 403 ``<resource> "<name>" is forbidden: <err>``; several
    reasons are aggregated as ``utilerrors.NewAggregate`` prints them (``[a, b]``)."""
    if isinstance(err, str):
        msg = err
    else:
        msgs: list[str] = []
        for m in err:
            if m not in msgs:
                msgs.append(m)
        msg = msgs[0] if len(msgs) == 1 else "[" + ", ".join(msgs) + "]"
    name = a.name
    if not name and a.object is not None:
        md = a.object.get("metadata") or {}
        name = md.get("name") or md.get("generateName") or ""
    return st.forbidden(a.resource, name, msg)


#: the default plugins in kube-apiserver's order (module name, class name)
DEFAULT_PLUGINS = ("NamespaceLifecycle", "LimitRanger", "ServiceAccount", "Priority", "DefaultTolerationSeconds",
                   "DefaultStorageClass", "StorageObjectInUseProtection", "PersistentVolumeClaimResize",
                   "RuntimeClass", "ResourceQuota")
#: plugins served but off unless enabled (``--enable-admission-plugins``), as kube-apiserver's
#: NodeRestriction (kubeadm enables it beside ``--authorization-mode=Node,RBAC``)
OPTIONAL_PLUGINS = ("NodeRestriction",)
#: every plugin in chain order (NodeRestriction after ServiceAccount, as AllOrderedPlugins)
ORDERED_PLUGINS = ("NamespaceLifecycle", "LimitRanger", "ServiceAccount", "NodeRestriction", "Priority",
                   "DefaultTolerationSeconds", "DefaultStorageClass", "StorageObjectInUseProtection",
                   "PersistentVolumeClaimResize", "RuntimeClass", "ResourceQuota")


def enabled_plugins(enable: Iterable[str] = (), disable: Iterable[str] = ()) -> list[str]:
    """kube-apiserver's ``--enable-admission-plugins`` / ``--disable-admission-plugins``: the
    default plugins plus ``enable`` (an :data:`OPTIONAL_PLUGINS` one), minus ``disable`` (in
    :data:`ORDERED_PLUGINS` order). Raises ValueError naming an unknown plugin."""
    en, dis = [n for n in enable if n], [n for n in disable if n]
    for n in en + dis:
        if n not in DEFAULT_PLUGINS and n not in OPTIONAL_PLUGINS:
            raise ValueError(f'admission-control plugin "{n}" is unknown')
    return [n for n in ORDERED_PLUGINS if (n in DEFAULT_PLUGINS or n in en) and n not in dis]


def default_chain(ctx: Context, enabled: Iterable[str] = DEFAULT_PLUGINS) -> Chain:
    """The chain of ``enabled`` plugins (kube-apiserver's ``--enable-admission-plugins``
    defaults), ordered as :data:`DEFAULT_PLUGINS`. Raises ValueError for an unknown name."""
    from components.apiserver.admission import (
        defaultstorageclass,
        defaulttolerationseconds,
        limitranger,
        namespacelifecycle,
        noderestriction,
        persistentvolumeclaimresize,
        priority,
        resourcequota,
        runtimeclass,
        serviceaccount,
        storageobjectinuseprotection,
    )
    known: dict[str, type[Plugin]] = {
        "NamespaceLifecycle": namespacelifecycle.NamespaceLifecycle, "LimitRanger": limitranger.LimitRanger,
        "ServiceAccount": serviceaccount.ServiceAccount, "Priority": priority.Priority,
        "DefaultTolerationSeconds": defaulttolerationseconds.DefaultTolerationSeconds,
        "DefaultStorageClass": defaultstorageclass.DefaultStorageClass,
        "StorageObjectInUseProtection": storageobjectinuseprotection.StorageObjectInUseProtection,
        "PersistentVolumeClaimResize": persistentvolumeclaimresize.PersistentVolumeClaimResize,
        "RuntimeClass": runtimeclass.RuntimeClass, "ResourceQuota": resourcequota.ResourceQuota,
        "NodeRestriction": noderestriction.NodeRestriction}
    want = list(enabled)
    for n in want:
        if n not in known:
            raise ValueError(f"unknown admission plugin {n!r}")
    return Chain([known[n](ctx) for n in ORDERED_PLUGINS if n in want])
