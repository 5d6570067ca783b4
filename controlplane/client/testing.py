"""An in-memory API client for unit tests: client-go's fake clientset, in Python.

:class:`FakeClient` answers the coroutine verbs of :class:`~controlplane.client.rest.RestClient`
that the components use (``get``, ``list``, ``watch``, ``create``, ``update``,
``update_status``, ``patch``, ``delete``, ``create_subresource``, ``request``) from an object
tracker, as ``k8s.io/client-go/testing`` does (``fixture.go`` ObjectTracker, ``fake.go``
Fake.Invokes):

* every call is first recorded as an :class:`Action` (verb, resource, namespace, name,
  subresource, body / patch / options), read back with :meth:`FakeClient.actions`;
* then the reactors run, newest first (:meth:`FakeClient.prepend_reactor`, :meth:`FakeClient.fail`):
  one that handles the action answers it (or raises: Conflict, NotFound, a timeout, a
  connection reset...); when none does, the tracker answers as the apiserver would.

The tracker keeps what the apiserver's registry adds (``registry/rest/create.go``,
``update.go``, ``delete.go``): uid, a cluster-wide resourceVersion counter, creationTimestamp,
a name from generateName (a fresh suffix until it is free), ``metadata.generation`` bumped on a
spec change, status kept on a main-resource update and only status written through
``/status``, 409 Conflict on a stale resourceVersion or a failed uid precondition, 409
AlreadyExists, 404 NotFound with the apiserver's messages, finalizers holding a deletion
(deletionTimestamp set; ``Foreground``/``Orphan`` add their finalizers), and
``pods/binding`` setting ``spec.nodeName`` (``registry/core/pod/storage`` assignPod).
Deletes are immediate otherwise (no grace period). Patches are ``merge`` (RFC 7386),
``strategic`` (:func:`controlplane.api.patch.strategic_merge_patch`) or ``json`` (RFC 6902).

Every write is delivered synchronously to the :class:`FakeInformer` of its resource in
:attr:`FakeClient.informers` (as a watch would deliver it), and to open :meth:`FakeClient.watch`
streams, so components run end to end without processes. :class:`FakeRecorder` (an
EventRecorder), :class:`FakeTracer` (a TraceEmitter) and :class:`FakeClock` (an injectable
clock) complete the set.
"""

from __future__ import annotations

import asyncio
import copy
import secrets
from dataclasses import dataclass, field
from typing import Any, AsyncIterator, Callable, Hashable, Iterable, NamedTuple, TypeVar, cast

from controlplane import apitime
from controlplane.api import patch as patches
from controlplane.api.resources import Resource
from controlplane.client.factory import SharedInformers
from controlplane.client.informer import Indices, key_of
from controlplane.client.rest import ApiError
from controlplane.selectors import object_fields, parse_field_selector, parse_label_selector

JSON = dict[str, Any]
T = TypeVar("T")

#: the alphabet of generated name suffixes (apimachinery ``util/rand`` String)
_SUFFIX_ALPHABET = "bcdfghjklmnpqrstvwxz2456789"


@dataclass(frozen=True)
class Action:
    """One recorded call (client-go ``testing.Action``: GetVerb, GetResource, GetNamespace,
    GetSubresource, and the Name/Object/Patch of the typed actions).

    ``verb``: ``get``, ``list``, ``watch``, ``create``, ``update``, ``patch``, ``delete`` or
    ``request`` (a raw :meth:`FakeClient.request`); ``resource``: the plural (``pods``), ``""``
    for a raw request; ``namespace`` / ``name`` / ``subresource``: ``""`` when absent;
    ``object``: a deep copy of the body sent (create, update, create_subresource, request);
    ``patch`` / ``patch_type``: of a patch; ``options``: the DeleteOptions fields
    (``gracePeriodSeconds``, ``propagationPolicy``, ``preconditions``), the list/watch
    options (``labelSelector``, ``fieldSelector``, ``resourceVersion``), or a raw request's
    ``method`` and ``params``; ``path``: the request path the RestClient would send.
    """

    verb: str
    resource: str
    namespace: str = ""
    name: str = ""
    subresource: str = ""
    object: JSON | None = None
    patch: Any = None
    patch_type: str = ""
    options: JSON = field(default_factory=dict)
    path: str = ""

    def matches(self, verb: str, resource: str) -> bool:
        """client-go ``Action.Matches``: ``verb`` and ``resource`` equal (``*`` matches any)."""
        return verb in ("*", self.verb) and resource in ("*", self.resource)


#: a reactor: ``(handled, answer)`` for an action, or raises the error to inject
#: (client-go ``testing.ReactionFunc``)
ReactionFunc = Callable[[Action], "tuple[bool, Any]"]


@dataclass
class Reactor:
    """A registered reaction: ``fn`` runs for actions matching ``verb`` / ``resource`` (``*``: any)."""

    verb: str
    resource: str
    fn: ReactionFunc

    def handles(self, action: Action) -> bool:
        return action.matches(self.verb, self.resource)


def not_found(res: Resource, name: str) -> ApiError:
    """The apiserver's 404 for a missing object: ``pods "web" not found``,
    ``replicasets.apps "x" not found`` (apimachinery ``errors.NewNotFound``)."""
    return ApiError(404, "NotFound", f'{_qualified(res)} "{name}" not found')


def already_exists(res: Resource, name: str) -> ApiError:
    """The apiserver's 409 AlreadyExists (``errors.NewAlreadyExists``)."""
    return ApiError(409, "AlreadyExists", f'{_qualified(res)} "{name}" already exists')


def conflict(res: Resource, name: str) -> ApiError:
    """The apiserver's 409 Conflict for a stale resourceVersion (``errors.NewConflict`` with
    ``storage.ErrConflict``'s optimistic-concurrency message)."""
    return ApiError(409, "Conflict", f'Operation cannot be fulfilled on {_qualified(res)} "{name}": '
                                     "the object has been modified; please apply your changes "
                                     "to the latest version and try again")


def _qualified(res: Resource) -> str:
    return f"{res.plural}.{res.group}" if res.group else res.plural


class RecordedEvent(NamedTuple):
    """One event a :class:`FakeRecorder` was asked to record."""

    component: str
    name: str | None
    type: str
    reason: str
    message: str
    field_path: str | None


class FakeRecorder:
    """EventRecorder-shaped (:class:`controlplane.client.events.EventRecorder`): appends a
    :class:`RecordedEvent` to ``events`` (a list shared by several recorders when given)."""

    def __init__(self, component: str = "", events: list[RecordedEvent] | None = None) -> None:
        self.component = component
        self.events: list[RecordedEvent] = events if events is not None else []

    def event(self, obj: JSON, type_: str, reason: str, message: str, field_path: str | None = None) -> None:
        """Record an event about ``obj`` (``type_``: Normal or Warning)."""
        name = (obj.get("metadata") or {}).get("name")
        self.events.append(RecordedEvent(self.component, name, type_, reason, message, field_path))


class FakeTracer:
    """TraceEmitter-shaped (:class:`controlplane.trace.emitter.TraceEmitter`): ``records``
    holds ``(step, action, a deep copy of obj or None)``."""

    def __init__(self) -> None:
        self.records: list[tuple[int, str, JSON | None]] = []

    def emit(self, step: int, action: str, obj: JSON | None = None, detail: str = "",
             kind: str | None = None, resource_version: str | None = None, data: JSON | None = None) -> None:
        self.records.append((step, action, copy.deepcopy(obj) if obj else None))


class FakeClock:
    """An injectable clock: ``clock()`` returns ``t`` (seconds); tests move ``t`` or :meth:`advance`."""

    def __init__(self, t: float = 1_700_000_000.0) -> None:
        self.t = t

    def __call__(self) -> float:
        return self.t

    def advance(self, seconds: float) -> None:
        self.t += seconds


class FakeInformer:
    """Informer-shaped (client-go ``SharedIndexInformer``): ``store``, ``add_handlers``,
    ``on_watch_started``, ``start``, ``wait_synced``, ``has_synced`` and the indexes
    (``add_indexer``, ``index_keys``, ``by_index``, ``in_index``); filled by
    :meth:`deliver`, which the :class:`FakeClient` calls for every write."""

    def __init__(self, resource: Resource) -> None:
        self.resource = resource
        self.store: dict[str, JSON] = {}
        self.has_synced = True
        self._handlers: list[tuple[Callable[..., Any] | None, Callable[..., Any] | None,
                                   Callable[..., Any] | None]] = []
        self._started: list[Callable[..., Any]] = []
        self._indices = Indices()

    def add_indexer(self, name: str, fn: Callable[[JSON], Iterable[Hashable]]) -> None:
        self._indices.add(name, fn, self.store)

    def index_keys(self, name: str, value: Hashable) -> list[str]:
        return self._indices.keys(name, value)

    def by_index(self, name: str, value: Hashable) -> list[JSON]:
        return [self.store[k] for k in self._indices.keys(name, value)]

    def in_index(self, name: str, value: Hashable) -> bool:
        return self._indices.has(name, value)

    def add_handlers(self, on_add: Callable[..., Any] | None = None, on_update: Callable[..., Any] | None = None,
                     on_delete: Callable[..., Any] | None = None) -> None:
        self._handlers.append((on_add, on_update, on_delete))

    def on_watch_started(self, fn: Callable[..., Any]) -> None:
        self._started.append(fn)

    def start(self) -> None:
        """Call the ``on_watch_started`` callbacks (resourceVersion ``"1"``)."""
        for fn in self._started:
            fn("1")

    async def wait_synced(self, timeout: float | None = 60.0) -> None:
        return None

    async def stop(self) -> None:
        return None

    def deliver(self, typ: str, obj: JSON) -> None:
        """Apply one watch event (ADDED, MODIFIED, DELETED) to the store and call the handlers."""
        k = key_of(obj)
        obj = copy.deepcopy(obj)
        if typ == "DELETED":
            old = self.store.pop(k, None)
            if old is not None:
                self._indices.changed(k, old, None)
            for _, _, on_delete in self._handlers:
                if on_delete:
                    on_delete(old or obj)
            return
        prev = self.store.get(k)
        self.store[k] = obj
        self._indices.changed(k, prev, obj)
        for on_add, on_update, _ in self._handlers:
            if prev is None and on_add:
                on_add(obj)
            elif prev is not None and on_update:
                on_update(prev, obj)


class FakeClient:
    """The in-memory API (see the module docstring).

    ``objects``: the tracker, ``(resource, key)`` → the stored object (key ``namespace/name``
    or ``name``); tests may read and change stored objects in place (:meth:`stored`).
    ``require_namespaces``: a namespaced create into a namespace with no Namespace object
    answers 404 ``namespaces "x" not found``, as the apiserver's NamespaceLifecycle admission
    does (off by default: most tests store pods without their namespace).
    """

    def __init__(self, *, require_namespaces: bool = False, user_agent: str = "controlplane-test") -> None:
        self.objects: dict[tuple[Resource, str], JSON] = {}
        self.rv = 0
        self.require_namespaces = require_namespaces
        self.user_agent = user_agent
        self.informers = SharedInformers(self, make=FakeInformer)
        self.reactors: list[Reactor] = []
        self.changed = asyncio.Event()
        self._actions: list[Action] = []
        self._condition: asyncio.Condition | None = None
        self._watchers: list[tuple[Resource, str | None, asyncio.Queue[tuple[str, JSON] | None]]] = []

    # -- recorded actions and reactors ---------------------------------------------------
    def actions(self, verb: str = "*", resource: str = "*") -> list[Action]:
        """The recorded actions (client-go ``Fake.Actions``), oldest first; filtered by
        ``verb`` / ``resource`` (``*``: any)."""
        return [a for a in self._actions if a.matches(verb, resource)]

    def writes(self) -> list[Action]:
        """The recorded actions other than reads (``get``, ``list``, ``watch``), oldest first."""
        return [a for a in self._actions if a.verb not in ("get", "list", "watch")]

    def clear_actions(self) -> None:
        """Forget the recorded actions (client-go ``Fake.ClearActions``)."""
        self._actions.clear()

    def prepend_reactor(self, verb: str, resource: str, fn: ReactionFunc) -> Reactor:
        """Run ``fn`` before every reactor so far for matching actions (client-go
        ``PrependReactor``); returns the reactor, for :meth:`remove_reactor`."""
        r = Reactor(verb, resource, fn)
        self.reactors.insert(0, r)
        return r

    def remove_reactor(self, reactor: Reactor) -> None:
        """Stop ``reactor`` (ValueError if it is not registered)."""
        self.reactors.remove(reactor)

    def fail(self, verb: str, resource: str, error: BaseException, *, times: int | None = None,
             subresource: str | None = None) -> Reactor:
        """Make matching calls raise ``error`` (after being recorded): the next ``times`` of them,
        or every one until :meth:`remove_reactor` when None. ``subresource`` narrows the match
        (``""``: the main resource only)."""
        left = [times]

        def react(action: Action) -> tuple[bool, Any]:
            if subresource is not None and action.subresource != subresource:
                return False, None
            if left[0] is not None:
                if left[0] <= 0:
                    return False, None
                left[0] -= 1
            raise error

        return self.prepend_reactor(verb, resource, react)

    async def _invoke(self, action: Action, default: Callable[[], T]) -> T:
        """Record ``action``, then let the reactors (newest first) answer it, else ``default``
        (the tracker) — client-go ``Fake.Invokes``."""
        self._actions.append(action)
        self._wake()
        for r in list(self.reactors):
            if r.handles(action):
                handled, ret = r.fn(action)
                if handled:
                    return cast(T, ret)
        return default()

    # -- the tracker -------------------------------------------------------------------
    def bump(self, obj: JSON) -> None:
        """Give ``obj`` the next resourceVersion of the cluster (what any write does); tests use it
        for a newer version of an object seen by an informer."""
        self.rv += 1
        obj.setdefault("metadata", {})["resourceVersion"] = str(self.rv)

    def _key(self, res: Resource, name: str, ns: str | None) -> tuple[Resource, str]:
        return (res, f"{ns}/{name}" if res.namespaced else name)

    def _found(self, res: Resource, name: str, ns: str | None) -> JSON:
        obj = self.objects.get(self._key(res, name, ns))
        if obj is None:
            raise not_found(res, name)
        return obj

    def stored(self, res: Resource, name: str, namespace: str | None = None) -> JSON:
        """The stored object itself (not a copy: changes apply to the tracker without an event);
        KeyError when absent."""
        obj = self.objects.get(self._key(res, name, namespace))
        if obj is None:
            raise KeyError(f"{_qualified(res)} {namespace + '/' if namespace else ''}{name} is not stored")
        return obj

    def seed(self, res: Resource, obj: JSON) -> JSON:
        """Store ``obj`` as if a user had created it (no action recorded); a resourceVersion it
        carries is kept (later writes go on from it). Returns a copy of the stored object."""
        md = obj.get("metadata") or {}
        out = self._create(res, obj, md.get("namespace"), keep_version=True)
        return out

    def all(self, res: Resource) -> list[JSON]:
        """Copies of every stored object of ``res``, in creation order."""
        return [copy.deepcopy(o) for (r, _), o in self.objects.items() if r == res]

    def _notify(self, res: Resource, typ: str, obj: JSON) -> None:
        self.informers.informer(res).deliver(typ, obj)
        ns = (obj.get("metadata") or {}).get("namespace")
        for wres, wns, q in self._watchers:
            if wres == res and (wns is None or wns == ns):
                q.put_nowait((typ, copy.deepcopy(obj)))
        self.changed.set()
        self._wake()

    def _wake(self) -> None:
        if self._condition is not None:
            cond = self._condition

            async def wake() -> None:
                async with cond:
                    cond.notify_all()
            asyncio.get_running_loop().create_task(wake())

    async def wait_for(self, predicate: Callable[[], bool], timeout: float = 5.0) -> None:
        """Return once ``predicate()`` holds, re-checked after every call and every write;
        TimeoutError after ``timeout`` seconds."""
        if self._condition is None:
            self._condition = asyncio.Condition()
        async with self._condition:
            await asyncio.wait_for(self._condition.wait_for(predicate), timeout)

    def _create(self, res: Resource, obj: JSON, namespace: str | None, keep_version: bool = False) -> JSON:
        obj = copy.deepcopy(obj)
        md = obj.setdefault("metadata", {})
        if res.namespaced:
            md["namespace"] = namespace or md.get("namespace") or "default"
            if self.require_namespaces and res.plural != "namespaces" and \
                    not any(r.plural == "namespaces" and k == md["namespace"] for r, k in self.objects):
                raise ApiError(404, "NotFound", f'namespaces "{md["namespace"]}" not found')
        if not md.get("name"):
            if not md.get("generateName"):
                raise ApiError(422, "Invalid", "name or generateName is required")
            # a fresh suffix until the name is free, as the apiserver retries a generateName
            # collision (registry/rest/create.go, RetryGenerateName)
            while True:
                md["name"] = md["generateName"] + "".join(secrets.choice(_SUFFIX_ALPHABET) for _ in range(5))
                if self._key(res, md["name"], md.get("namespace")) not in self.objects:
                    break
        k = self._key(res, md["name"], md.get("namespace"))
        if k in self.objects:
            raise already_exists(res, md["name"])
        md["uid"] = md.get("uid") or secrets.token_hex(16)
        md["creationTimestamp"] = apitime.now()
        md.setdefault("generation", 1)
        obj.setdefault("kind", res.kind)
        obj.setdefault("apiVersion", res.api_version)
        if res.kind == "Pod":
            obj.setdefault("status", {}).setdefault("phase", "Pending")
        given = str(md.get("resourceVersion") or "")
        if keep_version and given.isdigit():
            self.rv = max(self.rv, int(given))
        else:
            self.bump(obj)
        self.objects[k] = obj
        self._notify(res, "ADDED", obj)
        return copy.deepcopy(obj)

    def _store_update(self, res: Resource, new: JSON, subresource: str | None) -> JSON:
        md = new["metadata"]
        cur = self._found(res, md["name"], md.get("namespace"))
        if md.get("resourceVersion") and md["resourceVersion"] != cur["metadata"]["resourceVersion"]:
            raise conflict(res, md["name"])
        out = copy.deepcopy(cur)
        if subresource == "status":
            out["status"] = copy.deepcopy(new.get("status"))
        elif subresource == "finalize":
            out["spec"] = copy.deepcopy(new.get("spec"))
        else:
            keep_status = cur.get("status")
            out = copy.deepcopy(new)
            out["metadata"] = {**cur["metadata"], **{k: v for k, v in md.items()
                                                     if k not in ("uid", "creationTimestamp", "generation")}}
            for k in ("ownerReferences", "finalizers", "labels", "annotations"):
                if k not in md:
                    out["metadata"].pop(k, None)
            if keep_status is not None:
                out["status"] = keep_status
            if out.get("spec") != cur.get("spec"):
                out["metadata"]["generation"] = cur["metadata"].get("generation", 1) + 1
        self.bump(out)
        return self._finish_write(res, out)

    def _finish_write(self, res: Resource, out: JSON) -> JSON:
        md = out["metadata"]
        k = self._key(res, md["name"], md.get("namespace"))
        spec_fins = (out.get("spec") or {}).get("finalizers") if res.kind == "Namespace" else None
        if md.get("deletionTimestamp") and not md.get("finalizers") and not spec_fins:
            del self.objects[k]
            self._notify(res, "DELETED", out)
            return copy.deepcopy(out)
        self.objects[k] = out
        self._notify(res, "MODIFIED", out)
        return copy.deepcopy(out)

    def _patched(self, res: Resource, cur: JSON, patch: Any, patch_type: str) -> JSON:
        try:
            if patch_type == "merge":
                out = patches.json_merge_patch(cur, patch)
            elif patch_type == "strategic":
                out = patches.strategic_merge_patch(cur, patch, res.kind)
            elif patch_type == "json":
                out = patches.json_patch(cur, patch)
            else:
                raise ApiError(415, "UnsupportedMediaType", f"unsupported patch type {patch_type!r}")
        except patches.PatchError as e:
            raise ApiError(422, "Invalid", str(e)) from None
        if not isinstance(out, dict):
            raise ApiError(422, "Invalid", "the patch did not produce an object")
        return out

    # -- the verbs (RestClient's signatures) ----------------------------------------------
    async def get(self, res: Resource, name: str, namespace: str | None = None) -> JSON:
        """An object by name; ApiError 404 NotFound if absent."""
        action = Action("get", res.plural, namespace or "", name, path=res.path(namespace, name))
        return await self._invoke(action, lambda: copy.deepcopy(self._found(res, name, namespace)))

    async def list(self, res: Resource, namespace: str | None = None, *,
                   label_selector: str | None = None, field_selector: str | None = None,
                   resource_version: str | None = None, limit: int | None = None) -> JSON:
        """A List of the stored objects (in ``namespace`` when given) that match the selectors;
        ``metadata.resourceVersion`` is the cluster's current one."""
        opts = {k: v for k, v in (("labelSelector", label_selector), ("fieldSelector", field_selector),
                                  ("resourceVersion", resource_version)) if v is not None}
        action = Action("list", res.plural, namespace or "", options=opts, path=res.path(namespace))

        def answer() -> JSON:
            items = [copy.deepcopy(o) for (r, _), o in self.objects.items()
                     if r == res and self._selected(res, o, namespace, label_selector, field_selector)]
            return {"kind": res.kind + "List", "apiVersion": res.api_version,
                    "metadata": {"resourceVersion": str(self.rv)}, "items": items}

        return await self._invoke(action, answer)

    @staticmethod
    def _selected(res: Resource, obj: JSON, namespace: str | None, label_selector: str | None,
                  field_selector: str | None) -> bool:
        md = obj.get("metadata") or {}
        if namespace is not None and md.get("namespace") != namespace:
            return False
        if label_selector and not parse_label_selector(label_selector).matches(md.get("labels")):
            return False
        if field_selector and not parse_field_selector(field_selector).matches(object_fields(res.kind, obj)):
            return False
        return True

    async def create(self, res: Resource, obj: JSON, namespace: str | None = None) -> JSON:
        """Store a new object (namespace from the argument, else ``obj.metadata``, else
        ``default``); ApiError 409 AlreadyExists, 422 Invalid without a name."""
        ns = (namespace or (obj.get("metadata") or {}).get("namespace") or "default") if res.namespaced else None
        action = Action("create", res.plural, ns or "", (obj.get("metadata") or {}).get("name") or "",
                        object=copy.deepcopy(obj), path=res.path(ns))
        return await self._invoke(action, lambda: self._create(res, obj, namespace))

    async def update(self, res: Resource, obj: JSON, subresource: str | None = None) -> JSON:
        """Replace an object (or only its ``status`` / ``spec`` through ``status`` / ``finalize``);
        ApiError 409 Conflict when ``metadata.resourceVersion`` is stale, 404 NotFound."""
        md = obj["metadata"]
        ns = md.get("namespace") if res.namespaced else None
        action = Action("update", res.plural, ns or "", md["name"], subresource or "", object=copy.deepcopy(obj),
                        path=res.path(ns, md["name"], subresource))
        return await self._invoke(action, lambda: self._store_update(res, copy.deepcopy(obj), subresource))

    async def update_status(self, res: Resource, obj: JSON) -> JSON:
        """:meth:`update` of the ``status`` subresource."""
        return await self.update(res, obj, "status")

    async def patch(self, res: Resource, name: str, patch: Any, namespace: str | None = None, *,
                    patch_type: str = "merge", subresource: str | None = None) -> JSON:
        """Patch an object (``merge``, ``strategic`` or ``json``); a resourceVersion in the patch is
        ignored. ApiError 404 NotFound, 422 Invalid for a patch that does not apply."""
        action = Action("patch", res.plural, namespace or "", name, subresource or "",
                        patch=copy.deepcopy(patch), patch_type=patch_type,
                        path=res.path(namespace, name, subresource))

        def answer() -> JSON:
            cur = self._found(res, name, namespace)
            new = self._patched(res, cur, patch, patch_type)
            new.setdefault("metadata", {})["resourceVersion"] = cur["metadata"]["resourceVersion"]
            return self._store_update(res, new, subresource)

        return await self._invoke(action, answer)

    async def delete(self, res: Resource, name: str, namespace: str | None = None, *,
                     grace_period_seconds: int | None = None, propagation_policy: str | None = None,
                     preconditions: JSON | None = None) -> JSON:
        """Delete an object: gone at once unless finalizers hold it (then deletionTimestamp is set
        and the object returned); ``Foreground`` / ``Orphan`` add their finalizers. Returns a
        Success Status when gone. ApiError 404 NotFound, 409 Conflict on a failed uid or
        resourceVersion precondition (as the apiserver's registry answers)."""
        opts: JSON = {}
        if grace_period_seconds is not None:
            opts["gracePeriodSeconds"] = grace_period_seconds
        if propagation_policy:
            opts["propagationPolicy"] = propagation_policy
        if preconditions:
            opts["preconditions"] = copy.deepcopy(preconditions)
        action = Action("delete", res.plural, namespace or "", name, options=opts, path=res.path(namespace, name))

        def answer() -> JSON:
            cur = self._found(res, name, namespace)
            if preconditions and preconditions.get("uid") and preconditions["uid"] != cur["metadata"]["uid"]:
                raise ApiError(409, "Conflict", f"Precondition failed: UID in precondition: {preconditions['uid']}, "
                                                f"UID in object meta: {cur['metadata']['uid']}")
            rv = (preconditions or {}).get("resourceVersion")
            if rv and rv != cur["metadata"].get("resourceVersion"):
                raise ApiError(409, "Conflict", f"Precondition failed: ResourceVersion in precondition: {rv}, "
                                                f"ResourceVersion in object meta: {cur['metadata'].get('resourceVersion')}")
            out = copy.deepcopy(cur)
            fin = list(out["metadata"].get("finalizers") or [])
            if propagation_policy == "Foreground" and "foregroundDeletion" not in fin:
                fin.append("foregroundDeletion")
            if propagation_policy == "Orphan" and "orphan" not in fin:
                fin.append("orphan")
            out["metadata"]["finalizers"] = fin
            if fin:
                out["metadata"].setdefault("deletionTimestamp", apitime.now())
                self.bump(out)
                return self._finish_write(res, out)
            del self.objects[self._key(res, name, namespace)]
            self.bump(out)
            self._notify(res, "DELETED", out)
            return {"kind": "Status", "apiVersion": "v1", "metadata": {}, "status": "Success",
                    "details": {"name": name, "kind": res.plural, "uid": out["metadata"]["uid"]}}

        return await self._invoke(action, answer)

    async def delete_collection(self, res: Resource, namespace: str | None = None, *,
                                label_selector: str | None = None,
                                propagation_policy: str | None = None) -> JSON:
        """``deletecollection``: recorded as one action (verb ``deletecollection``), then
        :meth:`delete` of each matching object (each recorded too, as the apiserver's registry
        deletes them one by one). Returns a List of what was deleted or marked."""
        opts: JSON = {"propagationPolicy": propagation_policy} if propagation_policy else {}
        action = Action("deletecollection", res.plural, namespace or "", options=opts, path=res.path(namespace))
        await self._invoke(action, lambda: None)
        items = []
        for obj in (await self.list(res, namespace, label_selector=label_selector))["items"]:
            try:
                out = await self.delete(res, obj["metadata"]["name"], namespace, propagation_policy=propagation_policy)
            except ApiError as e:
                if e.code != 404:
                    raise
                continue
            items.append(out if out.get("kind") != "Status" else obj)
        return {"kind": "List", "apiVersion": "v1", "metadata": {}, "items": items}

    async def create_subresource(self, res: Resource, name: str, subresource: str, body: JSON,
                                 namespace: str | None = None) -> JSON:
        """POST to a subresource. ``pods/binding`` sets ``spec.nodeName`` to the Binding's target
        (409 Conflict when the pod is already bound, as assignPod); others answer 404."""
        action = Action("create", res.plural, namespace or "", name, subresource, object=copy.deepcopy(body),
                        path=res.path(namespace, name, subresource))

        def answer() -> JSON:
            if (res.plural, subresource) != ("pods", "binding"):
                raise ApiError(404, "NotFound", "the server could not find the requested resource")
            cur = self._found(res, name, namespace)
            node = (body.get("target") or {}).get("name") or ""
            bound = (cur.get("spec") or {}).get("nodeName")
            if bound:
                raise ApiError(409, "Conflict", f'Operation cannot be fulfilled on pods/binding "{name}": '
                                                f'pod {name} is already assigned to node "{bound}"')
            out = copy.deepcopy(cur)
            out.setdefault("spec", {})["nodeName"] = node
            self.bump(out)
            self._finish_write(res, out)
            return {"kind": "Status", "apiVersion": "v1", "metadata": {}, "status": "Success", "code": 201}

        return await self._invoke(action, answer)

    async def request(self, method: str, path: str, *, params: JSON | None = None, body: Any = None,
                      content_type: str = "application/json", timeout: float | None = None) -> Any:
        """A raw request: recorded (verb ``request``, ``options`` = method and params) and answered
        None unless a reactor answers it."""
        action = Action("request", "", object=copy.deepcopy(body) if isinstance(body, dict) else None,
                        options={"method": method, "params": dict(params or {})}, path=path)
        return await self._invoke(action, lambda: None)

    async def watch(self, res: Resource, namespace: str | None = None, *,
                    resource_version: str | None = None, label_selector: str | None = None,
                    field_selector: str | None = None, allow_bookmarks: bool = True,
                    timeout_seconds: int | None = 300) -> AsyncIterator[tuple[str, JSON]]:
        """Yield ``(type, object)`` for every write of ``res`` (in ``namespace``) from now on that
        matches the selectors, until :meth:`stop_watches`; no history is replayed."""
        opts = {k: v for k, v in (("labelSelector", label_selector), ("fieldSelector", field_selector),
                                  ("resourceVersion", resource_version)) if v is not None}
        q: asyncio.Queue[tuple[str, JSON] | None] = asyncio.Queue()
        entry = (res, namespace, q)
        await self._invoke(Action("watch", res.plural, namespace or "", options=opts, path=res.path(namespace)),
                           lambda: None)
        self._watchers.append(entry)
        try:
            while True:
                ev = await q.get()
                if ev is None:
                    return
                if self._selected(res, ev[1], namespace, label_selector, field_selector):
                    yield ev
        finally:
            self._watchers.remove(entry)

    def stop_watches(self) -> None:
        """End every open :meth:`watch` stream (as the server closing them)."""
        for _, _, q in self._watchers:
            q.put_nowait(None)

    async def close(self) -> None:
        """End the open watches (RestClient.close's counterpart)."""
        self.stop_watches()

    # -- test conveniences ---------------------------------------------------------------
    def set_pods_ready(self, namespace: str | None = None) -> None:
        """A stand-in kubelet: bind (to ``node01`` unless bound) and mark Running and Ready every
        pod not being deleted (in ``namespace`` when given), as MODIFIED events."""
        for (r, _k), obj in list(self.objects.items()):
            if r.kind != "Pod" or (namespace and obj["metadata"].get("namespace") != namespace):
                continue
            if obj["metadata"].get("deletionTimestamp"):
                continue
            st = obj.setdefault("status", {})
            if st.get("phase") == "Running":
                continue
            new = copy.deepcopy(obj)
            new["spec"].setdefault("nodeName", "node01")
            new["status"] = {"phase": "Running", "conditions": [
                {"type": "Ready", "status": "True", "lastTransitionTime": "2020-01-01T00:00:00Z"}]}
            self.bump(new)
            self._finish_write(r, new)
