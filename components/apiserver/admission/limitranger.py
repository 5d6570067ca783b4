"""LimitRanger (``plugin/pkg/admission/limitranger/admission.go``), pod creates, with the
namespace's LimitRanges (from the watch cache).

Mutating (PodMutateLimitFunc): containers and init containers without a request / limit of
a resource get the ``defaultRequest`` / ``default`` of the ``Container`` items, and the
pod is annotated ``kubernetes.io/limit-ranger: LimitRanger plugin set: cpu, memory request
for container nginx; ...``.

Validating (PodValidateLimitFunc): each container (``Container`` items) and the pod's
effective requests / limits (``Pod`` items) against ``min``, ``max`` and
``maxLimitRequestRatio``, in limitranger's words (``minimum cpu usage per Container is
100m, but request is 50m``); every violation is reported in one 403 (an aggregate).
"""

from __future__ import annotations

from fractions import Fraction
from typing import Any

from components.apiserver.admission import CREATE, POD_ONLY, Attributes, Plugin, forbidden
from controlplane import quota
from controlplane.api.groups import core
from controlplane.api.quantity import parse_quantity

ANNOTATION = "kubernetes.io/limit-ranger"


def _canon(q: Any) -> str:
    try:
        return core.canonical(q)
    except ValueError:
        return str(q)


def _containers(spec: dict[str, Any]) -> list[tuple[str, dict[str, Any]]]:
    return [(("init container " if key == "initContainers" else "container ") + str(c.get("name", "")), c)
            for key in ("containers", "initContainers") for c in (spec.get(key) or []) if isinstance(c, dict)]


def mutate(limit_ranges: list[dict[str, Any]], pod: dict[str, Any]) -> None:
    """Apply the default requests / limits of ``limit_ranges`` to ``pod`` (in place)."""
    req_defaults: dict[str, Any] = {}
    lim_defaults: dict[str, Any] = {}
    for lr in limit_ranges:
        for item in ((lr.get("spec") or {}).get("limits") or []):
            if item.get("type") == "Container":
                req_defaults.update(item.get("defaultRequest") or {})
                lim_defaults.update(item.get("default") or {})
    if not req_defaults and not lim_defaults:
        return
    notes: list[str] = []
    for label, c in _containers(pod.get("spec") or {}):
        res: dict[str, Any] = c["resources"] if isinstance(c.get("resources"), dict) else {}
        req: dict[str, Any] = res["requests"] if isinstance(res.get("requests"), dict) else {}
        lim: dict[str, Any] = res["limits"] if isinstance(res.get("limits"), dict) else {}
        set_req = sorted(k for k in req_defaults if k not in req)
        set_lim = sorted(k for k in lim_defaults if k not in lim)
        for k in set_req:
            req[k] = req_defaults[k]
        for k in set_lim:
            lim[k] = lim_defaults[k]
        if req:
            res["requests"] = req
        if lim:
            res["limits"] = lim
        c["resources"] = res
        if set_req:
            notes.append(", ".join(set_req) + " request for " + label)
        if set_lim:
            notes.append(", ".join(set_lim) + " limit for " + label)
    if notes:
        md = pod.setdefault("metadata", {})
        ann = md.get("annotations") if isinstance(md.get("annotations"), dict) else {}
        ann[ANNOTATION] = "LimitRanger plugin set: " + "; ".join(notes)
        md["annotations"] = ann


def _min(lt: str, r: str, enforced: Any, req: dict[str, Any], lim: dict[str, Any]) -> str | None:
    e = parse_quantity(enforced)
    if r not in req:
        return f"minimum {r} usage per {lt} is {_canon(enforced)}.  No request is specified"
    if parse_quantity(req[r]) < e:
        return f"minimum {r} usage per {lt} is {_canon(enforced)}, but request is {_canon(req[r])}"
    if r in lim and parse_quantity(lim[r]) < e:
        return f"minimum {r} usage per {lt} is {_canon(enforced)}, but limit is {_canon(lim[r])}"
    return None


def _max(lt: str, r: str, enforced: Any, req: dict[str, Any], lim: dict[str, Any]) -> str | None:
    e = parse_quantity(enforced)
    if r not in lim:
        return f"maximum {r} usage per {lt} is {_canon(enforced)}.  No limit is specified"
    if parse_quantity(lim[r]) > e:
        return f"maximum {r} usage per {lt} is {_canon(enforced)}, but limit is {_canon(lim[r])}"
    if r in req and parse_quantity(req[r]) > e:
        return f"maximum {r} usage per {lt} is {_canon(enforced)}, but request is {_canon(req[r])}"
    return None


def _ratio(lt: str, r: str, enforced: Any, req: dict[str, Any], lim: dict[str, Any]) -> str | None:
    rq = parse_quantity(req[r]) if r in req else Fraction(0)
    lm = parse_quantity(lim[r]) if r in lim else Fraction(0)
    if rq == 0:
        return (f"{r} max limit to request ratio per {lt} is {_canon(enforced)}, but no request is specified or "
                "request is 0")
    if lm == 0:
        return (f"{r} max limit to request ratio per {lt} is {_canon(enforced)}, but no limit is specified or "
                "limit is 0")
    observed = lm / rq
    if observed > parse_quantity(enforced):
        return (f"{r} max limit to request ratio per {lt} is {_canon(enforced)}, but provided ratio is "
                f"{float(observed):f}")
    return None


def check(limit_ranges: list[dict[str, Any]], pod: dict[str, Any]) -> list[str]:
    """Every violation of ``limit_ranges`` by ``pod`` (empty when it fits)."""
    errs: list[str] = []
    spec = pod.get("spec") or {}
    for lr in limit_ranges:
        for item in ((lr.get("spec") or {}).get("limits") or []):
            lt = item.get("type")
            targets: list[tuple[dict[str, Any], dict[str, Any]]] = []
            if lt == "Container":
                for _label, c in _containers(spec):
                    res = c.get("resources") or {}
                    targets.append((res.get("requests") or {}, res.get("limits") or {}))
            elif lt == "Pod":
                targets.append(({k: v for k, v in quota.pod_resources(pod, "requests").items()},
                                {k: v for k, v in quota.pod_resources(pod, "limits").items()}))
            for req, lim in targets:
                for fn, sec in ((_min, "min"), (_max, "max"), (_ratio, "maxLimitRequestRatio")):
                    for r, enforced in (item.get(sec) or {}).items():
                        m = fn(str(lt), r, enforced, req, lim)
                        if m is not None:
                            errs.append(m)
    return errs


class LimitRanger(Plugin):
    """The ``LimitRanger`` admission plugin as this module's docstring describes it (its Kubernetes source, what it admits or refuses and with which Status)."""

    name = "LimitRanger"
    operations = frozenset({CREATE})
    mutating = True
    validating = True
    #: pods only (``limitranger/admission.go`` SupportsAttributes: no subresource; the pod
    #: limit functions are the ones this emulator serves)
    admit_resources = validate_resources = POD_ONLY

    async def _ranges(self, a: Attributes) -> list[dict[str, Any]]:
        return await self.ctx.list_live(core.LIMITRANGES, a.namespace) if a.namespace else []

    async def admit(self, a: Attributes) -> None:
        if a.is_pod() and a.object is not None:
            ranges = await self._ranges(a)
            if ranges:
                mutate(ranges, a.object)

    async def validate(self, a: Attributes) -> None:
        if a.is_pod() and a.object is not None:
            ranges = await self._ranges(a)
            errs = check(ranges, a.object) if ranges else []
            if errs:
                raise forbidden(a, errs)
