"""Create/update/delete rules, as the generic store runs the registry strategies (``pkg/registry/*/*/strategy.go``).

One generic set of rules; what differs per kind is its registry entry's facts
(``REGISTRY.of_kind(kind)``: :class:`controlplane.api.registry.Strategy`, declared for the
built-in kinds in :mod:`controlplane.api.strategies`):

* a resource serving a ``status`` subresource (``Resource.status_subresource``): a write to
  the main resource keeps the stored status, a write to ``/status`` keeps the stored spec
  (``PrepareForUpdate`` / the status strategies; a CRD with a status subresource alike);
* create runs the kind's ``prepare_create`` (pods ``Pending``, workloads an empty status,
  namespaces ``Active``);
* ``metadata.generation`` starts at 1 and is bumped when ``spec`` changes, for kinds whose
  strategy ``tracks_generation``;
* graceful deletion uses the kind's ``grace_period`` (pods), others are deleted at once.

A kind without an entry, or added at run time without a strategy, gets the generic rules.
(Unknown fields and wrong types are the decoder's business: :mod:`controlplane.api.decoder`.)
"""

from __future__ import annotations

import copy
import secrets

from controlplane import apitime, uid
from controlplane.api import resources
from controlplane.api.registry import DEFAULT_STRATEGY, KindKey, Resource, Strategy

#: metadata fields a client may not change on update (copied from the stored object).
#: ``uid`` is only filled in when the request leaves it empty; a different uid is
#: then rejected by validation as immutable (``rest.BeforeUpdate`` in
#: ``staging/src/k8s.io/apiserver/pkg/registry/rest/update.go``).
_IMMUTABLE_META = ("creationTimestamp", "deletionTimestamp", "deletionGracePeriodSeconds",
                   "generation", "selfLink")


def _entry(kind: KindKey) -> Resource | None:
    return resources.REGISTRY.of_kind(kind)


def kind_strategy(kind: KindKey) -> Strategy:
    """The strategy of ``kind`` from the registry (the generic one for a kind without)."""
    r = _entry(kind)
    return r.strategy if r is not None else DEFAULT_STRATEGY


def resets_status(kind: KindKey) -> bool:
    """Whether ``kind``'s status is written only through ``/status`` (its resource serves
    a ``status`` subresource): main-resource writes keep the stored status."""
    r = _entry(kind)
    return r is not None and r.status_subresource


def tracks_generation(kind: KindKey) -> bool:
    """Whether ``kind``'s strategy keeps ``metadata.generation`` (apps workloads and RCs in
    v1.32; pods only from v1.33, PodObservedGenerationTracking)."""
    return kind_strategy(kind).tracks_generation


def random_suffix(n: int = 5) -> str:
    """generateName suffix: ``n`` chars from Kubernetes' alphabet (``apimachinery/pkg/util/rand``)."""
    alphabet = "bcdfghjklmnpqrstvwxz2456789"
    return "".join(secrets.choice(alphabet) for _ in range(n))


def prepare_for_create(kind: KindKey, obj: dict, namespace: str | None, namespaced: bool,
                       user: dict | None = None) -> None:
    """Server-set metadata (name from generateName, namespace, uid, creationTimestamp,
    generation) and the kind's PrepareForCreate (status reset; with ``user``, the requesting
    user ``{"username", "uid", "groups", "extra"}``, the kind's ``set_requestor``) on create
    (mutates ``obj``)."""
    md = obj.setdefault("metadata", {})
    if not md.get("name") and md.get("generateName"):
        md["name"] = md["generateName"] + random_suffix()
    if namespaced:
        md["namespace"] = namespace
    else:
        md.pop("namespace", None)
    md["uid"] = uid.new()
    md["creationTimestamp"] = apitime.now()
    md.pop("resourceVersion", None)
    md.pop("deletionTimestamp", None)
    md.pop("deletionGracePeriodSeconds", None)
    md.pop("selfLink", None)
    strat = kind_strategy(kind)
    if strat.tracks_generation:
        md["generation"] = 1
    if strat.prepare_create is not None:
        strat.prepare_create(obj)
    if user is not None and strat.set_requestor is not None:
        strat.set_requestor(obj, user)


def _keep(into: dict, key: str, old_value: object) -> None:
    """``into[key]`` becomes a private copy of ``old_value``: left as it is when it is equal
    already (a status write's spec, the usual case: comparing is far cheaper than copying
    the pod spec on every status patch), else a copy of the old value."""
    if key not in into or into[key] != old_value:
        into[key] = copy.deepcopy(old_value)


def prepare_for_update(kind: KindKey, new: dict, old: dict, subresource: str = "") -> None:
    """Keep server-owned fields of ``old`` in ``new`` (mutates ``new``).

    Main resource: status kept for kinds serving a status subresource (:func:`resets_status`);
    generation +1 when spec changed, for kinds that track it. ``status`` subresource: spec
    (and ownership metadata) kept. ``finalize`` (namespaces): only spec.finalizers changes.
    Then the kind's ``Strategy.prepare_update``; another subresource of the kind (``approval``)
    gets only that.
    """
    md = new.setdefault("metadata", {})
    omd = old.get("metadata") or {}
    if not md.get("uid") and omd.get("uid"):
        md["uid"] = omd["uid"]
    for f in _IMMUTABLE_META:
        if f in omd:
            _keep(md, f, omd[f])
        else:
            md.pop(f, None)
    md["name"] = omd.get("name")
    if "namespace" in omd:
        md["namespace"] = omd["namespace"]
    if subresource == "finalize":
        # namespaces/NAME/finalize: only spec.finalizers changes
        # (``pkg/registry/core/namespace/strategy.go`` namespaceFinalizeStrategy)
        fins = (new.get("spec") or {}).get("finalizers") if isinstance(new.get("spec"), dict) else None
        new.clear()
        new.update(copy.deepcopy(old))
        spec = new.setdefault("spec", {})
        if fins:
            spec["finalizers"] = list(fins)
        else:
            spec.pop("finalizers", None)
        return
    strat = kind_strategy(kind)
    if subresource not in ("", "status") and strat.prepare_update is not None:
        # a kind's own subresource (certificatesigningrequests/NAME/approval): its rules only
        strat.prepare_update(new, old, subresource)
        return
    if subresource == "status":
        if "spec" in old:
            _keep(new, "spec", old["spec"])
        else:
            new.pop("spec", None)
        for f in ("ownerReferences", "finalizers"):
            if f in omd:
                _keep(md, f, omd[f])
    else:
        if resets_status(kind):
            if "status" in old:
                _keep(new, "status", old["status"])
            else:
                new.pop("status", None)
        if strat.tracks_generation and strat.generation_of(new) != strat.generation_of(old) and "generation" in omd:
            md["generation"] = int(omd.get("generation") or 0) + 1
    if strat.prepare_update is not None:
        strat.prepare_update(new, old, subresource)


#: finalizers the garbage collector acts on (``staging/src/k8s.io/apimachinery/pkg/apis/meta/v1/types.go``)
FINALIZER_ORPHAN = "orphan"
FINALIZER_FOREGROUND = "foregroundDeletion"


def gc_finalizers(finalizers: list[str], opts: dict) -> list[str]:
    """Finalizers after a DELETE with ``opts`` (DeleteOptions as a dict).

    ``orphanDependents`` (deprecated bool) wins over ``propagationPolicy``; with neither,
    an ``orphan`` / ``foregroundDeletion`` finalizer already present is kept (the default
    policy of every served kind is Background). Orphan adds ``orphan`` and drops
    ``foregroundDeletion``, Foreground the reverse, Background drops both
    (``deletionFinalizersForGarbageCollection`` in ``pkg/registry/generic/registry/store.go``).
    """
    fins = list(finalizers)
    orphan, policy = opts.get("orphanDependents"), opts.get("propagationPolicy")
    if orphan is not None:
        want_orphan, want_fg = bool(orphan), False
    elif policy:
        want_orphan, want_fg = policy == "Orphan", policy == "Foreground"
    else:
        want_orphan, want_fg = FINALIZER_ORPHAN in fins, FINALIZER_FOREGROUND in fins
    fins = [f for f in fins if f not in (FINALIZER_ORPHAN, FINALIZER_FOREGROUND)]
    if want_orphan:
        fins.append(FINALIZER_ORPHAN)
    elif want_fg:
        fins.append(FINALIZER_FOREGROUND)
    return fins


def grace_period(kind: KindKey, obj: dict, requested: int | None) -> int:
    """Grace period (s) of a DELETE of ``obj``: its kind's strategy's CheckGracefulDelete
    (pods: :func:`controlplane.api.strategies.pod_grace_period`); 0 — deleted at once — for
    kinds without graceful deletion (the generic store's default)."""
    fn = kind_strategy(kind).grace_period
    return 0 if fn is None else fn(obj, requested)


def warnings(kind: KindKey, obj: dict, old: dict | None) -> list[str]:
    """The ``Warning`` messages of a write of ``obj`` (the strategy's WarningsOnCreate /
    WarningsOnUpdate; none for most kinds)."""
    fn = kind_strategy(kind).warnings
    return fn(obj, old) if fn is not None else []


def should_delete_during_update(kind: KindKey, new: dict, old: dict) -> bool:
    """An update that leaves an object being deleted with no finalizers deletes it.

    Generic rule (``ShouldDeleteDuringUpdate`` in ``pkg/registry/generic/registry/store.go``):
    the new object has no finalizers and the stored one has a deletionTimestamp with a
    grace period of 0 or none; and the kind's strategy's ``may_delete_during_update`` holds
    (namespaces: an empty ``spec.finalizers``, ``ShouldDeleteNamespaceDuringUpdate`` in
    ``pkg/registry/core/namespace/storage/storage.go``).
    """
    nmd, omd = new.get("metadata") or {}, old.get("metadata") or {}
    if nmd.get("finalizers") or not omd.get("deletionTimestamp"):
        return False
    if omd.get("deletionGracePeriodSeconds"):
        return False
    return kind_strategy(kind).may_delete_during_update(new)
