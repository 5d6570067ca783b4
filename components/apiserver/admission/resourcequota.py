"""ResourceQuota (``plugin/pkg/admission/resourcequota``: ``admission.go``, ``controller.go``
checkQuotas / checkRequest), validating, creates in a namespace with ResourceQuotas and the
updates the quota evaluators handle (``pkg/quota/v1/evaluator/core``): a Service's (its type
may change: ``services.nodeports`` / ``services.loadbalancers``), a PersistentVolumeClaim's
(a bound claim may grow: ``requests.storage``, the per-class names); a pod's resources cannot
change on update in Kubernetes v1.32 (InPlacePodVerticalScaling is off), so pod updates are
not charged, nor are the object counts (``generic`` evaluators handle creates only). An
update is charged its growth: the new usage minus the stored one, never below 0
(``SubtractWithNonNegativeResult``); usage entries of 0 are dropped (``RemoveZeros``), so an
update that adds nothing passes untouched.

For each quota tracking the object (its scopes, :func:`controlplane.quota.matches_scopes`)
and limiting a resource it is charged (:func:`controlplane.quota.object_usage`):

* pods must state every limited compute resource per container (403 ``failed quota: q:
  must specify limits.cpu for: c1; requests.cpu for: c1``);
* the new usage must stay within ``hard`` (403 ``exceeded quota: q, requested: pods=1,
  used: pods=2, limited: pods=2``);
* the quota's ``status.used`` (and ``status.hard`` = ``spec.hard``) is written before the
  object is stored, in one optimistic update per quota, so concurrent creates cannot both
  take the last unit. A quota the resourcequota controller has not processed yet (its
  ``status.hard`` differs from ``spec.hard``, or ``status.used`` lacks a limited resource)
  is charged from a recalculation over the watch caches (what the controller would
  write). Usage released by deletions is given back by the controller's recalculation
  (``components/controller_manager/resourcequota.py``), as in Kubernetes.

Dry runs check without writing.
"""

from __future__ import annotations

from typing import Any

from components.apiserver.admission import CREATE, UPDATE, VALIDATE, Attributes, Context, Plugin, forbidden
from controlplane import quota
from controlplane.api import resources as R
from controlplane.api.groups import core
from controlplane.storage.errors import KeyNotFound
from controlplane.storage.store import object_key


def recalculate(ctx: Context, namespace: str, q: dict[str, Any], names: set[str]) -> quota.Usage:
    """The namespace's usage of ``names`` from the watch caches (the controller's sync)."""
    listings = ((r.plural, r.group, r.kind, ctx.list(r, namespace)) for r in R.REGISTRY
                if r.namespaced and r.kind != "Binding" and quota.charged_names(r.plural, r.group, r.kind, names))
    return quota.namespace_usage(q, listings, names)


def missing_requirements(pod: dict[str, Any], limited: set[str]) -> str | None:
    """``must specify ...`` for containers lacking a limited compute resource, or None."""
    required = [r for r in quota.CONTAINER_REQUIRED if r in limited]
    missing: dict[str, set[str]] = {}
    spec = pod.get("spec") or {}
    for c in list(spec.get("containers") or []) + list(spec.get("initContainers") or []):
        res = (c or {}).get("resources") or {}
        for r in required:
            section, name = ("limits", r[7:]) if r.startswith("limits.") else \
                ("requests", r[9:] if r.startswith("requests.") else r)
            if name not in (res.get(section) or {}):
                missing.setdefault(r, set()).add(str(c.get("name", "")))
    if not missing:
        return None
    return "must specify " + "; ".join(f"{r} for: {','.join(sorted(missing[r]))}" for r in sorted(missing))


def handles_update(resource: Any) -> bool:
    """Whether the quota evaluator of ``resource`` charges updates (``Handles``): Services
    and PersistentVolumeClaims (a claim's storage request may grow)."""
    return bool(resource.kind in ("Service", "PersistentVolumeClaim") and not resource.group)


class ResourceQuota(Plugin):
    """The ``ResourceQuota`` admission plugin as this module's docstring describes it (its Kubernetes source, what it admits or refuses and with which Status)."""

    name = "ResourceQuota"
    operations = frozenset({CREATE, UPDATE})
    validating = True

    def applies(self, phase: str, resource: Any, subresource: str, operation: str) -> bool:
        """``resourcequota/admission.go`` Validate: namespaced resources only, no subresource
        (``len(a.GetSubresource()) != 0`` returns nil), creates, and the updates the
        resource's evaluator handles (:func:`handles_update`)."""
        if phase != VALIDATE or subresource or not resource.namespaced or not self.handles(operation):
            return False
        return operation == CREATE or handles_update(resource)

    async def validate(self, a: Attributes) -> None:
        if a.subresource or a.object is None or not a.resource.namespaced or not a.namespace:
            return
        r = a.resource
        if a.operation == UPDATE and not handles_update(r):
            return
        quotas = await self.ctx.list_live(core.RESOURCEQUOTAS, a.namespace)
        if not quotas:
            return
        delta = quota.object_usage(r.plural, r.group, r.kind, a.object)
        if a.operation == UPDATE and a.old_object is not None:
            delta = quota.subtract_non_negative(delta, quota.object_usage(r.plural, r.group, r.kind, a.old_object))
        delta = quota.remove_zeros(delta)
        if not delta:
            return
        for q in sorted(quotas, key=lambda o: (o.get("metadata") or {}).get("name", "")):
            hard = quota.parse((q.get("spec") or {}).get("hard"))
            limited = set(hard) & set(delta)
            if r.kind == "Pod":
                limited_compute = set(hard) & set(quota.CONTAINER_REQUIRED)
            else:
                limited_compute = set()
            if not (limited or limited_compute) or not quota.matches_scopes(q, a.object, r.kind):
                continue
            qname = (q.get("metadata") or {}).get("name", "")
            if limited_compute:
                why = missing_requirements(a.object, limited_compute)
                if why is not None:
                    raise forbidden(a, f"failed quota: {qname}: {why}")
            if limited:
                await self._charge(a, q, qname, hard, limited, delta)

    async def _charge(self, a: Attributes, q: dict[str, Any], qname: str, hard: quota.Usage,
                      limited: set[str], delta: quota.Usage) -> None:
        ns = str(a.namespace)
        key = object_key(core.RESOURCEQUOTAS, ns, qname)
        spec_hard = (q.get("spec") or {}).get("hard") or {}

        def mutate(cur: dict[str, Any]) -> dict[str, Any]:
            status = cur.get("status") or {}
            used_rl = status.get("used") or {}
            processed = status.get("hard") == spec_hard and all(n in used_rl for n in limited)
            used = quota.parse(used_rl) if processed else recalculate(self.ctx, ns, cur, set(hard))
            new_used = quota.add(used, {k: delta[k] for k in limited})
            exceeded = sorted(k for k in limited if new_used[k] > hard[k])
            if exceeded:
                raise forbidden(a, f"exceeded quota: {qname}, "
                                   f"requested: {quota.pretty(quota.fmt(delta, exceeded))}, "
                                   f"used: {quota.pretty(quota.fmt(used, exceeded))}, "
                                   f"limited: {quota.pretty(quota.fmt(hard, exceeded))}")
            base = used if processed else recalculate(self.ctx, ns, cur, set(hard))
            merged = quota.parse(used_rl)
            merged.update(base)
            merged.update({k: new_used[k] for k in limited})
            cur["status"] = {"hard": dict(spec_hard), "used": quota.fmt(merged, set(hard))}
            return cur
        try:
            await self.ctx.store.guaranteed_update(key, mutate, resource_plural="resourcequotas", name=qname,
                                                   dry_run=a.dry_run, cached=self.ctx.get(core.RESOURCEQUOTAS, ns, qname))
        except KeyNotFound:
            return  # deleted meanwhile: no longer limits anything
