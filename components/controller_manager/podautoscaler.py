"""The HorizontalPodAutoscaler controller (``pkg/controller/podautoscaler/horizontal.go``,
Kubernetes v1.32), ``horizontalpodautoscaling`` in ``--controllers``.

Every ``--horizontal-pod-autoscaler-sync-period`` (15 s) each autoscaling/v2 HPA is reconciled
(reconcileAutoscaler), as the real controller's rate-limited queue does (an added or changed
HPA waits for the period too):

1. the target's ``/scale`` subresource is read through the apiserver (``scaleTargetRef``'s
   group and kind → the served resource with a ``scale`` subresource); a failure is event and
   condition ``FailedGetScale`` (AbleToScale False), else AbleToScale True ``SucceededGetScale``;
2. replicas 0 (with minReplicas > 0) disables scaling (ScalingActive False ``ScalingDisabled``);
   replicas above max / below min are brought back within them; otherwise every metric is
   computed — ``Resource`` and ``ContainerResource`` metrics with ``Utilization`` or
   ``AverageValue`` targets, from the ``metrics.k8s.io/v1beta1`` PodMetrics listed with the
   scale's selector (:mod:`components.controller_manager.replica_calculator` over the pods of
   the pods informer) — and the largest proposal wins; a failing metric is a Warning event
   (``FailedGetResourceMetric``, …) and, when no metric works (or some fail and the rest would
   scale down), ScalingActive False with its reason and ``FailedComputeMetricsReplicas``;
   success is ScalingActive True ``ValidMetricFound``;
3. the proposal is stabilized and rate limited (:mod:`components.controller_manager.hpa_behavior`;
   AbleToScale's reason, ScalingLimited);
4. a change is written to ``/scale`` (event ``SuccessfulRescale`` "New size: 4; reason: cpu
   resource utilization (percentage of request) above target", AbleToScale ``SucceededRescale``,
   ``status.lastScaleTime``; a failed write: ``FailedRescale`` and ``FailedUpdateScale``);
5. ``status`` (currentReplicas, desiredReplicas, currentMetrics, conditions, lastScaleTime) is
   written through ``/status`` when it changed.

Events come from the ``horizontal-pod-autoscaler`` source. Unit tests drive :meth:`sync` with a
fake client and clock (``ctx.clock``).
"""

from __future__ import annotations

import asyncio
import copy
import logging
from fractions import Fraction
from typing import Any

from controlplane import apitime
from controlplane.api import resources as R
from controlplane.api.quantity import cpu_millis, format_quantity
from controlplane.client.rest import ApiError
from controlplane.labels import parse_label_selector
from controlplane.log import event

from . import hpa_behavior as hb
from .controller import Controller, ControllerContext
from .controller_utils import meta
from .replica_calculator import CalculationError, PodMetric, ReplicaCalculator, pod_metrics_info

log = logging.getLogger("controller-manager")

HPAS = R.REGISTRY.by_kind("HorizontalPodAutoscaler", "autoscaling/v2")
PODS = R.get("pods")
POD_METRICS = R.REGISTRY.by_kind("PodMetrics", "metrics.k8s.io/v1beta1")
COMPONENT = "horizontal-pod-autoscaler"
JSON = dict[str, Any]


class MetricError(Exception):
    """A metric could not be computed; ``condition`` is the ScalingActive condition to set
    (``(reason, message)``), already reported as a Warning event."""

    def __init__(self, message: str, condition: tuple[str, str]) -> None:
        super().__init__(message)
        self.condition = condition


def set_condition(hpa: JSON, type_: str, status: str, reason: str, message: str, now: float) -> None:
    """setCondition: add or update the condition ``type_``; its lastTransitionTime changes only
    with its status."""
    conds = hpa.setdefault("status", {}).get("conditions")
    if not isinstance(conds, list):
        conds = hpa["status"]["conditions"] = []
    cond = next((c for c in conds if c.get("type") == type_), None)
    if cond is None:
        cond = {"type": type_}
        conds.append(cond)
    if cond.get("status") != status:
        cond["lastTransitionTime"] = apitime.format_time(now)
    cond["status"], cond["reason"], cond["message"] = status, reason, message
    # the Go struct's field order: type, status, lastTransitionTime, reason, message
    ordered = {k: cond[k] for k in ("type", "status", "lastTransitionTime", "reason", "message") if k in cond}
    cond.clear()
    cond.update(ordered)


def _group_of(api_version: str) -> str:
    """schema.ParseGroupVersion's group; ValueError ``unexpected GroupVersion string: a/b/c``."""
    parts = api_version.split("/")
    if len(parts) > 2 or (len(parts) == 2 and not parts[1]):
        raise ValueError(f"unexpected GroupVersion string: {api_version}")
    return parts[0] if len(parts) == 2 else ""


def scale_resource(api_version: str, kind: str) -> Any:
    """The served resource of ``kind`` in ``api_version``'s group with a ``scale`` subresource
    (the RESTMapper's mappings of the group and kind). Raises ValueError ``no matches for kind
    "X" in group "g"``."""
    group = _group_of(api_version)
    for r in R.REGISTRY:
        if r.kind == kind and r.group == group and "scale" in r.subresources:
            return r
    raise ValueError(f'no matches for kind "{kind}" in group "{group}"')


def _milli_text(v: int) -> str:
    """resource.NewMilliQuantity(v, DecimalSI).String()."""
    return format_quantity(Fraction(v, 1000))


class HorizontalPodAutoscalerController(Controller):
    """See the module docstring. Keys are ``namespace/name`` of HPAs."""

    name = "horizontalpodautoscaling"
    workers = 5

    def __init__(self, ctx: ControllerContext) -> None:
        super().__init__(ctx)
        cfg = ctx.config
        self.sync_period = cfg.horizontal_pod_autoscaler_sync_period
        self.downscale_stabilization = cfg.horizontal_pod_autoscaler_downscale_stabilization
        self.calculator = ReplicaCalculator(cfg.horizontal_pod_autoscaler_tolerance,
                                            cfg.horizontal_pod_autoscaler_cpu_initialization_period,
                                            cfg.horizontal_pod_autoscaler_initial_readiness_delay)
        self.now = ctx.clock
        self.recorder = ctx.recorder(COMPONENT)
        self.hpas = ctx.informers.informer(HPAS)
        self.pods = ctx.informers.informer(PODS)
        self.history: dict[str, hb.History] = {}
        self._scheduled: dict[str, asyncio.TimerHandle] = {}
        self.hpas.add_handlers(self._hpa_changed, lambda old, new: self._hpa_changed(new), self._hpa_deleted)

    # ------------------------------------------------------------------ queueing
    @staticmethod
    def _key(hpa: JSON) -> str:
        return f"{meta(hpa).get('namespace')}/{meta(hpa).get('name')}"

    def _hpa_changed(self, hpa: JSON) -> None:
        self.schedule(self._key(hpa))

    def _hpa_deleted(self, hpa: JSON) -> None:
        key = self._key(hpa)
        self.history.pop(key, None)
        handle = self._scheduled.pop(key, None)
        if handle is not None:
            handle.cancel()

    def schedule(self, key: str) -> None:
        """Queue ``key`` one sync period from now, unless it already waits (the real
        controller's FixedItemIntervalRateLimiter: an HPA is reconciled once per period)."""
        if key in self._scheduled:
            return

        def fire() -> None:
            self._scheduled.pop(key, None)
            self.enqueue(key)
        self._scheduled[key] = asyncio.get_running_loop().call_later(self.sync_period, fire)

    async def sync(self, key: str) -> None:
        hpa = self.hpas.store.get(key)
        if hpa is None:
            self.history.pop(key, None)
            return
        try:
            await self.reconcile(hpa, key)
        except asyncio.CancelledError:
            raise
        except Exception as e:  # every failure waits for the next period, as AddRateLimited does
            level = logging.INFO if isinstance(e, RuntimeError) else logging.WARNING
            event(log, "hpa.reconcile_failed", level, key=key, error=str(e)[:300])
        finally:
            self.schedule(key)

    async def run(self, workers: int | None = None) -> None:
        """The workers (:meth:`Controller.run`); the waiting periods end with them."""
        try:
            await super().run(workers)
        finally:
            for handle in self._scheduled.values():
                handle.cancel()
            self._scheduled.clear()

    # ------------------------------------------------------------------ reconcileAutoscaler
    async def reconcile(self, shared: JSON, key: str) -> None:
        """One reconcileAutoscaler pass over ``shared`` (the informer's copy, not changed).
        Raises the error the real controller returns (after writing the status)."""
        now = self.now()
        hpa = copy.deepcopy(shared)
        original = copy.deepcopy(hpa.get("status") or {})
        spec = hpa.get("spec") or {}
        ref = spec.get("scaleTargetRef") or {}
        ns = meta(hpa).get("namespace")
        reference = f"{ref.get('kind')}/{ns}/{ref.get('name')}"
        try:
            target = scale_resource(str(ref.get("apiVersion") or ""), str(ref.get("kind") or ""))
            scale = await self.client.request("GET", target.path(ns, ref.get("name"), "scale"))
            if not isinstance(scale, dict):
                raise ValueError(f"no scale returned for {reference}")
        except (ValueError, ApiError) as e:
            msg = e.message if isinstance(e, ApiError) else str(e)
            self.recorder.event(hpa, "Warning", "FailedGetScale", msg)
            set_condition(hpa, "AbleToScale", "False", "FailedGetScale",
                          f"the HPA controller was unable to get the target's current scale: {msg}", now)
            await self._update_status(original, hpa)
            raise RuntimeError(f"failed to query scale subresource for {reference}: {msg}") from None
        set_condition(hpa, "AbleToScale", "True", "SucceededGetScale",
                      "the HPA controller was able to get the target's current scale", now)
        current = int((scale.get("spec") or {}).get("replicas") or 0)
        history = self.history.get(key)
        if history is None:  # recordInitialRecommendation
            history = self.history[key] = hb.History(recommendations=[(current, now)])

        mn = spec.get("minReplicas")
        min_replicas = 1 if mn is None else int(mn)
        max_replicas = int(spec.get("maxReplicas") or 0)
        statuses: list[JSON] | None = None
        desired, reason, rescale = 0, "", True
        failure: Exception | None = None
        if current == 0 and min_replicas != 0:
            rescale = False
            set_condition(hpa, "ScalingActive", "False", "ScalingDisabled",
                          "scaling is disabled since the replica count of the target is zero", now)
        elif current > max_replicas:
            reason, desired = "Current number of replicas above Spec.MaxReplicas", max_replicas
        elif current < min_replicas:
            reason, desired = "Current number of replicas below Spec.MinReplicas", min_replicas
        else:
            proposal, metric, statuses, failure = await self._replicas_for_metrics(hpa, scale, now)
            if proposal == -1:
                self._set_status(hpa, current, int(original.get("desiredReplicas") or 0), statuses, False, now)
                await self._update_status(original, hpa)
                self.recorder.event(hpa, "Warning", "FailedComputeMetricsReplicas", str(failure))
                raise RuntimeError(f"failed to compute desired number of replicas based on listed metrics for "
                                   f"{reference}: {failure}")
            if proposal > desired:
                desired = proposal
            if desired > current:
                reason = f"{metric} above target"
            if desired < current:
                reason = "All metrics below target"
            behavior = spec.get("behavior")
            if isinstance(behavior, dict):
                down = behavior.get("scaleDown")
                if isinstance(down, dict) and down.get("stabilizationWindowSeconds") is None:
                    down["stabilizationWindowSeconds"] = int(self.downscale_stabilization)
            else:
                behavior = None
            desired, able, limited = hb.normalize(history, behavior, current, desired, min_replicas, max_replicas,
                                                  self.downscale_stabilization, now)
            set_condition(hpa, "AbleToScale", "True", able[0], able[1], now)
            set_condition(hpa, "ScalingLimited", limited[0], limited[1], limited[2], now)
            rescale = desired != current

        if rescale:
            new_scale = copy.deepcopy(scale)
            new_scale.setdefault("spec", {})["replicas"] = desired
            try:
                await self.client.request("PUT", target.path(ns, ref.get("name"), "scale"), body=new_scale)
            except ApiError as e:
                self.recorder.event(hpa, "Warning", "FailedRescale",
                                    f"New size: {desired}; reason: {reason}; error: {e.message}")
                set_condition(hpa, "AbleToScale", "False", "FailedUpdateScale",
                              f"the HPA controller was unable to update the target scale: {e.message}", now)
                self._set_status(hpa, current, int(original.get("desiredReplicas") or 0), statuses, False, now)
                await self._update_status(original, hpa)
                raise RuntimeError(f"failed to rescale {reference}: {e.message}") from None
            set_condition(hpa, "AbleToScale", "True", "SucceededRescale",
                          f"the HPA controller was able to update the target scale to {desired}", now)
            self.recorder.event(hpa, "Normal", "SuccessfulRescale", f"New size: {desired}; reason: {reason}")
            hb.store_scale_event(history, spec.get("behavior") if isinstance(spec.get("behavior"), dict) else None,
                                 current, desired, now)
            event(log, "hpa.rescaled", hpa=key, reference=reference, old=current, new=desired, reason=reason)
        else:
            desired = current
        self._set_status(hpa, current, desired, statuses, rescale, now)
        await self._update_status(original, hpa)
        if failure is not None:
            raise RuntimeError(str(failure))

    @staticmethod
    def _set_status(hpa: JSON, current: int, desired: int, statuses: list[JSON] | None, rescale: bool,
                    now: float) -> None:
        """setStatus: currentReplicas, desiredReplicas, currentMetrics; lastScaleTime on a rescale."""
        old = hpa.get("status") or {}
        st: JSON = {}
        if rescale:
            st["lastScaleTime"] = apitime.format_time(now)
        elif old.get("lastScaleTime"):
            st["lastScaleTime"] = old["lastScaleTime"]
        st["currentReplicas"] = current
        st["desiredReplicas"] = desired
        st["currentMetrics"] = statuses
        if old.get("conditions"):
            st["conditions"] = old["conditions"]
        hpa["status"] = st

    async def _update_status(self, original: JSON, hpa: JSON) -> None:
        """updateStatusIfNeeded: write ``/status`` when it differs from ``original``; a failure
        is a ``FailedUpdateStatus`` event."""
        if hpa.get("status") == original:
            return
        try:
            await self.client.update_status(HPAS, hpa)
        except ApiError as e:
            self.recorder.event(hpa, "Warning", "FailedUpdateStatus", e.message)
            raise

    # ------------------------------------------------------------------ metrics
    async def _replicas_for_metrics(self, hpa: JSON, scale: JSON, now: float
                                    ) -> tuple[int, str, list[JSON] | None, Exception | None]:
        """computeReplicasForMetrics: ``(replicas or -1, metric name, statuses, error)``; sets
        ScalingActive. A scale without a valid selector has no statuses (None)."""
        specs = (hpa.get("spec") or {}).get("metrics") or []
        selector_text = str((scale.get("status") or {}).get("selector") or "")
        if not selector_text:
            self.recorder.event(hpa, "Warning", "SelectorRequired", "selector is required")
            set_condition(hpa, "ScalingActive", "False", "InvalidSelector",
                          "the HPA target's scale is missing a selector", now)
            return -1, "", None, ValueError("selector is required")
        try:
            selector = parse_label_selector(selector_text)
        except ValueError as e:
            msg = f"couldn't convert selector into a corresponding internal selector object: {e}"
            self.recorder.event(hpa, "Warning", "InvalidSelector", msg)
            set_condition(hpa, "ScalingActive", "False", "InvalidSelector", msg, now)
            return -1, "", None, ValueError(msg)
        current = int((scale.get("spec") or {}).get("replicas") or 0)
        ns = meta(hpa).get("namespace")
        pods = [p for p in self.pods.store.values()
                if meta(p).get("namespace") == ns and selector.matches(meta(p).get("labels") or {})]
        statuses: list[JSON] = [{"type": ""} for _ in specs]
        replicas, metric = 0, ""
        invalid, first_error, first_condition = 0, None, ("", "")
        for i, spec in enumerate(specs):
            try:
                proposal, name, statuses[i] = await self._replicas_for_metric(
                    hpa, spec, current, selector_text, pods, now)
            except MetricError as e:
                if invalid == 0:
                    first_error, first_condition = e, e.condition
                invalid += 1
                continue
            if replicas == 0 or proposal > replicas:
                replicas, metric = proposal, name
        error = None if first_error is None else ValueError(
            f"invalid metrics ({invalid} invalid out of {len(specs)}), first error is: {first_error}")
        if invalid >= len(specs) or (invalid > 0 and replicas < current):
            set_condition(hpa, "ScalingActive", "False", first_condition[0], first_condition[1], now)
            return -1, "", statuses, error
        set_condition(hpa, "ScalingActive", "True", "ValidMetricFound",
                      f"the HPA was able to successfully calculate a replica count from {metric}", now)
        return replicas, metric, statuses, error

    def _unable(self, hpa: JSON, reason: str, err: str) -> MetricError:
        """getUnableComputeReplicaCountCondition: a Warning event and the ScalingActive condition."""
        self.recorder.event(hpa, "Warning", reason, err)
        return MetricError(err, (reason, f"the HPA was unable to compute the replica count: {err}"))

    async def _replicas_for_metric(self, hpa: JSON, spec: JSON, current: int, selector: str,
                                   pods: list[JSON], now: float) -> tuple[int, str, JSON]:
        """computeReplicasForMetric for one metric spec: ``(replicas, metric name, status)``;
        raises MetricError."""
        typ = spec.get("type")
        if typ not in ("Resource", "ContainerResource"):
            raise self._no_custom_metrics(hpa, spec)
        src_key = "resource" if typ == "Resource" else "containerResource"
        src = spec.get(src_key) or {}
        resource, container = str(src.get("name") or ""), str(src.get("container") or "")
        reason = "FailedGetResourceMetric" if typ == "Resource" else "FailedGetContainerResourceMetric"
        target = src.get("target") or {}
        try:
            if target.get("averageValue") is not None:
                try:
                    metrics = await self._resource_metrics(resource, str(meta(hpa).get("namespace")), selector,
                                                           container)
                    replicas, raw = self.calculator.raw_resource_replicas(
                        current, cpu_millis(str(target["averageValue"])), resource, pods, metrics, now)
                except CalculationError as e:
                    raise CalculationError(f"failed to get {resource} usage: {e}") from None
                name = f"{resource} resource"
                current_value: JSON = {"averageValue": _milli_text(raw)}
            elif target.get("averageUtilization") is not None:
                try:
                    metrics = await self._resource_metrics(resource, str(meta(hpa).get("namespace")), selector,
                                                           container)
                    replicas, utilization, raw = self.calculator.resource_replicas(
                        current, int(target["averageUtilization"]), resource, pods, metrics, now, container)
                except CalculationError as e:
                    raise CalculationError(f"failed to get {resource} utilization: {e}") from None
                name = f"{resource} resource utilization (percentage of request)" if typ == "Resource" else \
                    f"{resource} container resource utilization (percentage of request)"
                current_value = {"averageValue": _milli_text(raw), "averageUtilization": utilization}
            else:
                raise CalculationError("invalid resource metric source: neither an average utilization target nor "
                                       "an average value (usage) target was set")
        except CalculationError as e:
            err = self._unable(hpa, reason, str(e))
            raise MetricError(f"failed to get {resource} {'container ' if container else ''}resource metric value: "
                              f"{e}", err.condition) from None
        status: JSON = {"type": typ, src_key: {"name": resource, **({"container": container} if container else {}),
                                               "current": current_value}}
        return replicas, name, status

    def _no_custom_metrics(self, hpa: JSON, spec: JSON) -> MetricError:
        """A ``Pods``, ``Object`` or ``External`` metric: neither ``custom.metrics.k8s.io`` nor
        ``external.metrics.k8s.io`` is served, so it fails as on a cluster without an adapter
        (computeStatusForPodsMetric, …ObjectMetric, …ExternalMetric, with the metrics clients'
        ``no custom metrics API (custom.metrics.k8s.io) registered``)."""
        typ = str(spec.get("type"))
        key = {"Pods": "pods", "Object": "object", "External": "external"}.get(typ)
        if key is None:
            return self._unable(hpa, "InvalidMetricSourceType", f'unknown metric source type "{typ}"')
        src = spec.get(key) or {}
        name = (src.get("metric") or {}).get("name", "")
        ns = meta(hpa).get("namespace")
        if typ == "External":
            err = (f"unable to get external metric {ns}/{name}/nil: unable to fetch metrics from external metrics "
                   "API: no external metrics API (external.metrics.k8s.io) registered")
        else:
            err = ("unable to fetch metrics from custom metrics API: no custom metrics API (custom.metrics.k8s.io) "
                   "registered")
            if typ == "Object":  # Go's format with its arguments in that order
                obj = src.get("describedObject") or {}
                err = f"unable to get metric {name}: {obj.get('kind')} on {ns} {obj.get('name')}/{err}"
            else:
                err = f"unable to get metric {name}: {err}"
        unable = self._unable(hpa, f"FailedGet{typ}Metric", err)
        return MetricError(f"failed to get {key} metric value: {err}", unable.condition)

    async def _resource_metrics(self, resource: str, namespace: str, selector: str, container: str
                                ) -> dict[str, PodMetric]:
        """GetResourceMetric: the PodMetrics of the selected pods from ``metrics.k8s.io``.
        Raises CalculationError ``unable to get metrics for resource cpu: ...``."""
        try:
            answer = await self.client.list(POD_METRICS, namespace, label_selector=selector)
        except ApiError as e:
            raise CalculationError(f"unable to get metrics for resource {resource}: unable to fetch metrics from "
                                   f"resource metrics API: {e.message}") from None
        items = answer.get("items") or []
        if not items:
            raise CalculationError(f"unable to get metrics for resource {resource}: no metrics returned from "
                                   "resource metrics API")
        if container:
            picked = []
            for m in items:
                cs = [c for c in m.get("containers") or [] if c.get("name") == container]
                if not cs:
                    md = m.get("metadata") or {}
                    raise CalculationError(f"unable to get metrics for resource {resource}: failed to get container "
                                           f"metrics: container {container} not present in metrics for pod "
                                           f"{md.get('namespace')}/{md.get('name')}")
                picked.append({**m, "containers": cs})
            items = picked
        return pod_metrics_info(items, resource)
