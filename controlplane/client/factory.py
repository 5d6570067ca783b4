"""Shared informers: one :class:`~controlplane.client.informer.Informer` per resource
in the process, however many controllers watch it (client-go's
``SharedInformerFactory``, staging/src/k8s.io/client-go/informers/factory.go).

Components ask :meth:`SharedInformers.informer` for a resource and attach their
handlers; the controller-manager starts every requested informer once and waits for
all of them to sync before the controllers' workers run; the scheduler starts them
in its own order (namespaces and listers, then nodes, then pods).

The cached objects carry no ``metadata.managedFields``: kube-controller-manager and
kube-scheduler build their factories ``WithTransform(trim)``, a transform that sets
them to nil (``cmd/kube-controller-manager/app/controllermanager.go``
CreateControllerContext, ``cmd/kube-scheduler/app/options``); nothing reads them, and
a write that leaves them out keeps the stored ones.
"""

from __future__ import annotations

import asyncio
import contextlib
from typing import Any, Callable, Generic, Iterator, TypeVar, cast, overload

from controlplane.api.resources import Resource
from controlplane.client.informer import Informer, SharedIndexInformer, drop_managed_fields
from controlplane.client.rest import RestClient

#: the informer type a factory builds (:class:`Informer` unless ``make`` is given)
InformerT = TypeVar("InformerT", bound=SharedIndexInformer, covariant=True)


class SharedInformers(Generic[InformerT]):
    """Lazily built, de-duplicated informers keyed by resource.

    ``make`` builds one informer for a resource (default: a real list-watch
    :class:`Informer` on ``client``, a :class:`RestClient`, that drops managedFields);
    tests pass a factory of in-memory fakes (and whatever client those need).
    """

    @overload
    def __init__(self: SharedInformers[Informer], client: RestClient, make: None = None) -> None: ...
    @overload
    def __init__(self, client: object, make: Callable[[Resource], InformerT]) -> None: ...

    def __init__(self, client: object, make: Callable[[Resource], InformerT] | None = None) -> None:
        self.client = client
        if make is None:
            # the first overload: client is a RestClient and InformerT is Informer
            rest = cast(RestClient, client)
            make = cast(Callable[[Resource], InformerT],
                        lambda res: Informer(rest, res, transform=drop_managed_fields))
        self._make = make
        self._informers: dict[Resource, InformerT] = {}
        self._recording: list[list[Resource]] = []

    def informer(self, resource: Resource) -> InformerT:
        """The one informer of ``resource`` (created on first request)."""
        inf = self._informers.get(resource)
        if inf is None:
            inf = self._informers[resource] = self._make(resource)
        for used in self._recording:
            if resource not in used:
                used.append(resource)
        return inf

    @contextlib.contextmanager
    def recording(self) -> Iterator[list[Resource]]:
        """Within the block, every resource whose informer is asked for (:meth:`informer`,
        :meth:`store`, :meth:`in_namespace`) is appended, once, to the yielded list: what a
        controller built in the block uses, so it can wait for those caches alone (client-go
        controllers' ``cache.WaitForNamedCacheSync(name, stop, theirInformers.HasSynced...)``)."""
        used: list[Resource] = []
        self._recording.append(used)
        try:
            yield used
        finally:
            self._recording.remove(used)

    def store(self, resource: Resource) -> dict[str, dict[str, Any]]:
        """The informer cache of ``resource`` (key ``namespace/name`` → object)."""
        return self.informer(resource).store

    def in_namespace(self, resource: Resource, namespace: str | None) -> Iterator[dict[str, Any]]:
        """Cached objects of ``resource`` in ``namespace`` (all when None)."""
        for obj in list(self.store(resource).values()):
            if namespace is None or (obj.get("metadata") or {}).get("namespace") == namespace:
                yield obj

    @property
    def resources(self) -> list[Resource]:
        return list(self._informers)

    def start(self) -> None:
        """Start every informer requested so far."""
        for inf in self._informers.values():
            inf.start()

    async def wait_synced(self, timeout: float = 60.0) -> None:
        """Wait until every informer has its first list; raises TimeoutError."""
        await asyncio.gather(*(inf.wait_synced(timeout) for inf in self._informers.values()))

    async def stop(self) -> None:
        for inf in self._informers.values():
            await inf.stop()
