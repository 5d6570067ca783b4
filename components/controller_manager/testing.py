"""An in-memory stand-in for the apiserver, for unit tests of the controllers.

:class:`FakeClient` implements the RestClient methods the controllers use
(create/get/list/update/update_status/patch/delete/request) on plain dicts:
it assigns uid, resourceVersion, creationTimestamp, names from generateName,
bumps ``metadata.generation`` on spec changes, and checks uid preconditions.
Every write is recorded in ``calls`` and delivered synchronously to the
:class:`FakeInformer` of its resource (as a watch would), so the controllers can
be run end to end without processes. Deletes are immediate (no grace period).
"""

from __future__ import annotations

import asyncio
import copy
import secrets
import time
from typing import Any

from controlplane import apitime
from controlplane.api.resources import Resource
from controlplane.client.factory import SharedInformers
from controlplane.client.informer import Indices, key_of
from controlplane.client.rest import ApiError


class FakeInformer:
    """Informer-shaped: ``store``, ``add_handlers``, ``on_watch_started``, ``start``,
    ``wait_synced``, ``has_synced``, and the indexes (``add_indexer``, ``index_keys``,
    ``by_index``, ``in_index``)."""

    def __init__(self, resource: Resource) -> None:
        self.resource = resource
        self.store: dict[str, dict] = {}
        self.has_synced = True
        self._handlers: list[tuple] = []
        self._started: list = []
        self._indices = Indices()

    def add_indexer(self, name, fn) -> None:
        self._indices.add(name, fn, self.store)

    def index_keys(self, name, value) -> list[str]:
        return self._indices.keys(name, value)

    def by_index(self, name, value) -> list[dict]:
        return [self.store[k] for k in self._indices.keys(name, value)]

    def in_index(self, name, value) -> bool:
        return self._indices.has(name, value)

    def add_handlers(self, on_add=None, on_update=None, on_delete=None) -> None:
        self._handlers.append((on_add, on_update, on_delete))

    def on_watch_started(self, fn) -> None:
        self._started.append(fn)

    def start(self) -> None:
        for fn in self._started:
            fn("1")

    async def wait_synced(self, timeout: float = 60.0) -> None:
        return None

    async def stop(self) -> None:
        return None

    def deliver(self, typ: str, obj: dict) -> None:
        k = key_of(obj)
        obj = copy.deepcopy(obj)
        if typ == "DELETED":
            old = self.store.pop(k, None)
            if old is not None:
                self._indices.changed(k, old, None)
            for h in self._handlers:
                if h[2]:
                    h[2](old or obj)
            return
        old = self.store.get(k)
        self.store[k] = obj
        self._indices.changed(k, old, obj)
        for h in self._handlers:
            if old is None and h[0]:
                h[0](obj)
            elif old is not None and h[1]:
                h[1](old, obj)


def _merge(target: Any, patch: Any) -> Any:
    """RFC 7386 JSON merge patch."""
    if not isinstance(patch, dict):
        return copy.deepcopy(patch)
    if not isinstance(target, dict):
        target = {}
    out = dict(target)
    for k, v in patch.items():
        if v is None:
            out.pop(k, None)
        else:
            out[k] = _merge(out.get(k), v)
    return out


class FakeClient:
    """In-memory API (see module docstring). ``fail`` maps ``(verb, plural)`` to an
    ApiError raised by the next matching calls (kept until removed)."""

    def __init__(self) -> None:
        self.objects: dict[tuple[Resource, str], dict] = {}
        self.calls: list[tuple] = []
        #: ``(plural, namespace/name, gracePeriodSeconds)`` of every DELETE
        self.delete_options: list[tuple] = []
        self.rv = 0
        self.informers = SharedInformers(self, make=FakeInformer)
        self.fail: dict[tuple[str, str], ApiError] = {}
        self.changed = asyncio.Event()
        self.user_agent = "kube-controller-manager/test"

    # -- helpers -----------------------------------------------------------------
    def _bump(self, obj: dict) -> None:
        self.rv += 1
        obj["metadata"]["resourceVersion"] = str(self.rv)

    def _notify(self, res: Resource, typ: str, obj: dict) -> None:
        self.informers.informer(res).deliver(typ, obj)
        self.changed.set()

    def _check_fail(self, verb: str, res: Resource) -> None:
        err = self.fail.get((verb, res.plural))
        if err is not None:
            raise err

    def _key(self, res: Resource, name: str, ns: str | None) -> tuple[Resource, str]:
        return (res, f"{ns}/{name}" if res.namespaced else name)

    def _found(self, res: Resource, name: str, ns: str | None) -> dict:
        obj = self.objects.get(self._key(res, name, ns))
        if obj is None:
            raise ApiError(404, "NotFound", f'{res.plural}{"." + res.group if res.group else ""} "{name}" not found')
        return obj

    def seed(self, res: Resource, obj: dict) -> dict:
        """Store ``obj`` as if a user created it (no call recorded)."""
        return self._create(res, obj, (obj.get("metadata") or {}).get("namespace"))

    def all(self, res: Resource) -> list[dict]:
        return [copy.deepcopy(o) for (r, _), o in self.objects.items() if r == res]

    # -- verbs -------------------------------------------------------------------
    def _create(self, res: Resource, obj: dict, namespace: str | None) -> dict:
        obj = copy.deepcopy(obj)
        md = obj.setdefault("metadata", {})
        if res.namespaced:
            md["namespace"] = namespace or md.get("namespace") or "default"
        if not md.get("name"):
            if not md.get("generateName"):
                raise ApiError(422, "Invalid", "name or generateName is required")
            # a fresh suffix until the name is free, as the apiserver retries a generateName
            # collision (RetryGenerateName)
            while True:
                md["name"] = md["generateName"] + "".join(
                    secrets.choice("bcdfghjklmnpqrstvwxz2456789") for _ in range(5))
                if self._key(res, md["name"], md.get("namespace")) not in self.objects:
                    break
        k = self._key(res, md["name"], md.get("namespace"))
        if k in self.objects:
            raise ApiError(409, "AlreadyExists", f'{res.plural} "{md["name"]}" already exists')
        md["uid"] = md.get("uid") or secrets.token_hex(16)
        md["creationTimestamp"] = apitime.now()
        md.setdefault("generation", 1)
        obj.setdefault("kind", res.kind)
        obj.setdefault("apiVersion", res.api_version)
        if res.kind == "Pod":
            obj.setdefault("status", {}).setdefault("phase", "Pending")
        self._bump(obj)
        self.objects[k] = obj
        self._notify(res, "ADDED", obj)
        return copy.deepcopy(obj)

    async def create(self, res: Resource, obj: dict, namespace: str | None = None) -> dict:
        self.calls.append(("create", res.plural, copy.deepcopy(obj)))
        self._check_fail("create", res)
        return self._create(res, obj, namespace)

    async def get(self, res: Resource, name: str, namespace: str | None = None) -> dict:
        return copy.deepcopy(self._found(res, name, namespace))

    async def list(self, res: Resource, namespace: str | None = None, **_: Any) -> dict:
        items = [copy.deepcopy(o) for (r, _k), o in self.objects.items()
                 if r == res and (namespace is None or o["metadata"].get("namespace") == namespace)]
        return {"kind": res.kind + "List", "metadata": {"resourceVersion": str(self.rv)},
                "items": items}

    def _store_update(self, res: Resource, new: dict, subresource: str | None) -> dict:
        md = new["metadata"]
        cur = self._found(res, md["name"], md.get("namespace"))
        if md.get("resourceVersion") and md["resourceVersion"] != cur["metadata"]["resourceVersion"]:
            raise ApiError(409, "Conflict", f'Operation cannot be fulfilled on {res.plural} "{md["name"]}": '
                                            "the object has been modified; please apply your changes "
                                            "to the latest version and try again")
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
        self._bump(out)
        return self._finish_write(res, out)

    def _finish_write(self, res: Resource, out: dict) -> dict:
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

    async def update(self, res: Resource, obj: dict, subresource: str | None = None) -> dict:
        self.calls.append(("update" if not subresource else f"update/{subresource}", res.plural,
                           copy.deepcopy(obj)))
        self._check_fail("update", res)
        return self._store_update(res, copy.deepcopy(obj), subresource)

    async def update_status(self, res: Resource, obj: dict) -> dict:
        return await self.update(res, obj, "status")

    async def patch(self, res: Resource, name: str, patch: Any, namespace: str | None = None, *,
                    patch_type: str = "merge", subresource: str | None = None) -> dict:
        self.calls.append(("patch", res.plural, name, copy.deepcopy(patch)))
        self._check_fail("patch", res)
        cur = self._found(res, name, namespace)
        new = _merge(cur, patch)
        new["metadata"]["resourceVersion"] = cur["metadata"]["resourceVersion"]
        return self._store_update(res, new, subresource)

    async def delete(self, res: Resource, name: str, namespace: str | None = None, *,
                     grace_period_seconds: int | None = None, propagation_policy: str | None = None,
                     preconditions: dict | None = None) -> dict:
        self.calls.append(("delete", res.plural, name, propagation_policy))
        self.delete_options.append((res.plural, f"{namespace}/{name}" if namespace else name,
                                    grace_period_seconds))
        self._check_fail("delete", res)
        cur = self._found(res, name, namespace)
        if preconditions and preconditions.get("uid") and preconditions["uid"] != cur["metadata"]["uid"]:
            raise ApiError(409, "Conflict", "Precondition failed: UID in precondition does not match")
        out = copy.deepcopy(cur)
        fin = list(out["metadata"].get("finalizers") or [])
        if propagation_policy == "Foreground" and "foregroundDeletion" not in fin:
            fin.append("foregroundDeletion")
        if propagation_policy == "Orphan" and "orphan" not in fin:
            fin.append("orphan")
        out["metadata"]["finalizers"] = fin
        if fin:
            out["metadata"].setdefault("deletionTimestamp", apitime.now())
            self._bump(out)
            return self._finish_write(res, out)
        del self.objects[self._key(res, name, namespace)]
        self._bump(out)
        self._notify(res, "DELETED", out)
        return {"kind": "Status", "status": "Success"}

    async def request(self, method: str, path: str, **kw: Any) -> Any:
        self.calls.append(("request", method, path))
        return None

    # -- test conveniences -------------------------------------------------------
    def set_pods_ready(self, namespace: str | None = None) -> None:
        """Bind and mark every active pod Running and Ready (a stand-in kubelet)."""
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
            self._bump(new)
            self._finish_write(r, new)


class FakeClock:
    """An injectable wall clock: ``clock()`` returns ``t``; tests advance ``t``."""

    def __init__(self, t: float = 1_700_000_000.0) -> None:
        self.t = t

    def __call__(self) -> float:
        return self.t

    def advance(self, seconds: float) -> None:
        self.t += seconds


class FakeTracer:
    """TraceEmitter-shaped recorder: ``records`` holds ``(step, action, obj)``."""

    def __init__(self) -> None:
        self.records: list[tuple[int, str, dict | None]] = []

    def emit(self, step: int, action: str, obj: dict | None = None, detail: str = "",
             kind: str | None = None, resource_version: str | None = None) -> None:
        self.records.append((step, action, copy.deepcopy(obj) if obj else None))


class FakeRecorder:
    """EventRecorder-shaped: ``events`` holds ``(component, object name, type, reason, message)``."""

    def __init__(self, sink: list, component: str) -> None:
        self.sink = sink
        self.component = component

    def event(self, obj: dict, type_: str, reason: str, message: str, field_path: str | None = None) -> None:
        self.sink.append((self.component, (obj.get("metadata") or {}).get("name"), type_, reason, message))


def fake_context(config: Any = None, clock: Any = None) -> tuple[FakeClient, Any, list]:
    """A fresh :class:`FakeClient` and a ControllerContext on it (a :class:`FakeTracer`,
    events appended to the returned list by :class:`FakeRecorder`; ``config``: a
    ControllerConfig, ``clock``: e.g. a :class:`FakeClock`). Returns ``(client, ctx, events)``."""
    from .config import ControllerConfig
    from .controller import ControllerContext
    client = FakeClient()
    events: list = []
    ctx = ControllerContext(client, client.informers, FakeTracer(),
                            recorder_factory=lambda c: FakeRecorder(events, c),
                            config=config or ControllerConfig(), clock=clock or time.time)
    return client, ctx, events


async def settle(*controllers: Any, rounds: int = 200) -> None:
    """Process the controllers' queued keys (``process_next``) until every queue is
    empty; AssertionError if they are still busy after ``rounds`` passes."""
    for _ in range(rounds):
        busy = [c for c in controllers if len(c.queue)]
        if not busy:
            return
        for c in busy:
            await c.process_next()
    raise AssertionError("controllers did not settle")
