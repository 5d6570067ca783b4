"""``autoscaling/v2`` and ``autoscaling/v1`` HorizontalPodAutoscaler: one storage, two served versions (Kubernetes v1.32).

v2 is the storage (and preferred) version; v1 objects are v2 objects converted as
``pkg/apis/autoscaling/v1/conversion.go`` converts them: ``spec.targetCPUUtilizationPercentage``
↔ a ``Resource`` metric on ``cpu`` with an ``Utilization`` target,
``status.currentCPUUtilizationPercentage`` ↔ the cpu current metric, and what v1 cannot
express kept in annotations — ``autoscaling.alpha.kubernetes.io/metrics`` (the other metrics,
in v1's alpha MetricSpec form), ``…/current-metrics`` (every current metric),
``…/behavior`` and ``…/conditions``; a v1 object written back with those annotations gets them
back as fields (and loses the annotations).

Sources: schema ``staging/src/k8s.io/api/autoscaling/v2/types.go`` and ``v1/types.go``;
defaults ``pkg/apis/autoscaling/v2/defaults.go`` (minReplicas 1, a cpu metric at 80% when
none is given, the behavior's scaleUp / scaleDown rules filled in) and ``v1/defaults.go``
(minReplicas 1); validation ``pkg/apis/autoscaling/validation/validation.go``
(ValidateHorizontalPodAutoscaler: scaleTargetRef, minReplicas >= 1, maxReplicas, metrics,
behavior); Table columns ``pkg/printers/internalversion/printers.go``
(printHorizontalPodAutoscaler, formatHPAMetrics); strategy
``pkg/registry/autoscaling/horizontalpodautoscaler/strategy.go`` (status subresource; an
empty status on create). Short name ``hpa``, category ``all``. No controller scales anything.
"""

from __future__ import annotations

import copy
import json
from typing import Any

from controlplane.api import listfields
from controlplane.api.groups import common
from controlplane.api.registry import JSON, KindSchema, Printer, Resource, Strategy
from controlplane.api.validators import ErrorList

GROUP = "autoscaling"

METRICS_ANNOTATION = "autoscaling.alpha.kubernetes.io/metrics"
CURRENT_METRICS_ANNOTATION = "autoscaling.alpha.kubernetes.io/current-metrics"
BEHAVIOR_ANNOTATION = "autoscaling.alpha.kubernetes.io/behavior"
CONDITIONS_ANNOTATION = "autoscaling.alpha.kubernetes.io/conditions"

#: autoscaling.DefaultCPUUtilization
DEFAULT_CPU_UTILIZATION = 80
METRIC_TYPES = ["ContainerResource", "External", "Object", "Pods", "Resource"]
TARGET_TYPES = ["AverageValue", "Utilization", "Value"]

_T = dict[str, tuple[str, dict[str, tuple[str, str]]]]

_XREF = ("CrossVersionObjectReference", "CrossVersionObjectReference contains enough information to let you "
                                        "identify the referred resource.", {
                                            "kind": ("string", "kind is the kind of the referent"),
                                            "name": ("string", "name is the name of the referent"),
                                            "apiVersion": ("string", "apiVersion is the API version of the "
                                                                     "referent"),
                                        })
_TARGET_REF = ("scaleTargetRef points to the target resource to scale, and is used to the pods for which metrics "
               "should be collected, as well as to actually change the replica count.")
_MIN = ("minReplicas is the lower limit for the number of replicas to which the autoscaler can scale down.  It "
        "defaults to 1 pod.  minReplicas is allowed to be 0 if the alpha feature gate HPAScaleToZero is enabled and "
        "at least one Object or External metric is configured.  Scaling is active as long as at least one metric "
        "value is available.")
_MAX = ("maxReplicas is the upper limit for the number of replicas to which the autoscaler can scale up. It cannot "
        "be less that minReplicas.")
_METRICS = ("metrics contains the specifications for which to use to calculate the desired replica count (the "
            "maximum replica count across all metrics will be used).  The desired replica count is calculated "
            "multiplying the ratio between the target value and the current value by the current number of pods.  "
            "Ergo, metrics used must decrease as the pod count is increased, and vice-versa.  See the individual "
            "metric source types for more information about how each type of metric must respond.")
_CURRENT = ("currentReplicas is current number of replicas of pods managed by this autoscaler, as last seen by the "
            "autoscaler.")

TYPES_V2: _T = {
    _XREF[0]: (_XREF[1], _XREF[2]),
    "HorizontalPodAutoscalerSpec": ("HorizontalPodAutoscalerSpec describes the desired functionality of the "
                                    "HorizontalPodAutoscaler.", {
                                        "scaleTargetRef": ("CrossVersionObjectReference", _TARGET_REF),
                                        "minReplicas": ("int32", _MIN),
                                        "maxReplicas": ("int32", _MAX),
                                        "metrics": ("[]MetricSpec", _METRICS),
                                        "behavior": ("HorizontalPodAutoscalerBehavior", "behavior configures the "
                                                     "scaling behavior of the target in both Up and Down directions "
                                                     "(scaleUp and scaleDown fields respectively)."),
                                    }),
    "MetricSpec": ("MetricSpec specifies how to scale based on a single metric (only `type` and one other matching "
                   "field should be set at once).", {
                       "type": ("string", "type is the type of metric source.  It should be one of "
                                          "\"ContainerResource\", \"External\", \"Object\", \"Pods\" or "
                                          "\"Resource\", each mapping to a matching field in the object."),
                       "object": ("ObjectMetricSource", "object refers to a metric describing a single kubernetes "
                                                        "object (for example, hits-per-second on an Ingress object)."),
                       "pods": ("PodsMetricSource", "pods refers to a metric describing each pod in the current "
                                                    "scale target (for example, transactions-processed-per-second)."),
                       "resource": ("ResourceMetricSource", "resource refers to a resource metric (such as those "
                                                            "specified in requests and limits) known to Kubernetes "
                                                            "describing each pod in the current scale target (e.g. "
                                                            "CPU or memory)."),
                       "containerResource": ("ContainerResourceMetricSource", "containerResource refers to a "
                                             "resource metric known to Kubernetes describing a single container in "
                                             "each pod of the current scale target."),
                       "external": ("ExternalMetricSource", "external refers to a global metric that is not "
                                                            "associated with any Kubernetes object."),
                   }),
    "MetricTarget": ("MetricTarget defines the target value, average value, or average utilization of a specific "
                     "metric", {
                         "type": ("string", "type represents whether the metric type is Utilization, Value, or "
                                            "AverageValue"),
                         "value": ("Quantity", "value is the target value of the metric (as a quantity)."),
                         "averageValue": ("Quantity", "averageValue is the target value of the average of the metric "
                                                      "across all relevant pods (as a quantity)"),
                         "averageUtilization": ("int32", "averageUtilization is the target value of the average of "
                                                         "the resource metric across all relevant pods, represented "
                                                         "as a percentage of the requested value of the resource "
                                                         "for the pods."),
                     }),
    "MetricIdentifier": ("MetricIdentifier defines the name and optionally selector for a metric", {
        "name": ("string", "name is the name of the given metric"),
        "selector": ("LabelSelector", "selector is the string-encoded form of a standard kubernetes label selector "
                                      "for the given metric"),
    }),
    "ResourceMetricSource": ("ResourceMetricSource indicates how to scale on a resource metric known to "
                             "Kubernetes.", {
                                 "name": ("string", "name is the name of the resource in question."),
                                 "target": ("MetricTarget", "target specifies the target value for the given "
                                                            "metric"),
                             }),
    "ContainerResourceMetricSource": ("ContainerResourceMetricSource indicates how to scale on a resource metric "
                                      "known to Kubernetes.", {
                                          "name": ("string", "name is the name of the resource in question."),
                                          "target": ("MetricTarget", "target specifies the target value for the "
                                                                     "given metric"),
                                          "container": ("string", "container is the name of the container in the "
                                                                  "pods of the scaling target"),
                                      }),
    "PodsMetricSource": ("PodsMetricSource indicates how to scale on a metric describing each pod in the current "
                         "scale target.", {
                             "metric": ("MetricIdentifier", "metric identifies the target metric by name and "
                                                            "selector"),
                             "target": ("MetricTarget", "target specifies the target value for the given metric"),
                         }),
    "ObjectMetricSource": ("ObjectMetricSource indicates how to scale on a metric describing a kubernetes object.", {
        "describedObject": ("CrossVersionObjectReference", "describedObject specifies the descriptions of a object,"
                                                           "such as kind,name apiVersion"),
        "target": ("MetricTarget", "target specifies the target value for the given metric"),
        "metric": ("MetricIdentifier", "metric identifies the target metric by name and selector"),
    }),
    "ExternalMetricSource": ("ExternalMetricSource indicates how to scale on a metric not associated with any "
                             "Kubernetes object.", {
                                 "metric": ("MetricIdentifier", "metric identifies the target metric by name and "
                                                                "selector"),
                                 "target": ("MetricTarget", "target specifies the target value for the given "
                                                            "metric"),
                             }),
    "HorizontalPodAutoscalerBehavior": ("HorizontalPodAutoscalerBehavior configures the scaling behavior of the "
                                        "target in both Up and Down directions.", {
                                            "scaleUp": ("HPAScalingRules", "scaleUp is scaling policy for scaling Up."),
                                            "scaleDown": ("HPAScalingRules", "scaleDown is scaling policy for "
                                                                             "scaling Down."),
                                        }),
    "HPAScalingRules": ("HPAScalingRules configures the scaling behavior for one direction.", {
        "stabilizationWindowSeconds": ("int32", "stabilizationWindowSeconds is the number of seconds for which past "
                                                "recommendations should be considered while scaling up or scaling "
                                                "down."),
        "selectPolicy": ("string", "selectPolicy is used to specify which policy should be used. If not set, the "
                                   "default value Max is used."),
        "policies": ("[]HPAScalingPolicy", "policies is a list of potential scaling polices which can be used during "
                                           "scaling."),
    }),
    "HPAScalingPolicy": ("HPAScalingPolicy is a single policy which must hold true for a specified past interval.", {
        "type": ("string", "type is used to specify the scaling policy."),
        "value": ("int32", "value contains the amount of change which is permitted by the policy. It must be "
                           "greater than zero"),
        "periodSeconds": ("int32", "periodSeconds specifies the window of time for which the policy should hold "
                                   "true."),
    }),
    "HorizontalPodAutoscalerStatus": ("HorizontalPodAutoscalerStatus describes the current status of a horizontal "
                                      "pod autoscaler.", {
                                          "observedGeneration": ("int64", "observedGeneration is the most recent "
                                                                          "generation observed by this autoscaler."),
                                          "lastScaleTime": ("Time", "lastScaleTime is the last time the "
                                                                    "HorizontalPodAutoscaler scaled the number of "
                                                                    "pods."),
                                          "currentReplicas": ("int32", _CURRENT),
                                          "desiredReplicas": ("int32", "desiredReplicas is the desired number of "
                                                                       "replicas of pods managed by this autoscaler, "
                                                                       "as last calculated by the autoscaler."),
                                          "currentMetrics": ("[]MetricStatus", "currentMetrics is the last "
                                                             "read state of the metrics used by this autoscaler."),
                                          "conditions": ("[]HorizontalPodAutoscalerCondition",
                                                         "conditions is the set of conditions required for this "
                                                         "autoscaler to scale its target, and indicates whether or "
                                                         "not those conditions are met."),
                                      }),
    "MetricStatus": ("MetricStatus describes the last-read state of a single metric.", {
        "type": ("string", "type is the type of metric source.  It will be one of \"ContainerResource\", "
                           "\"External\", \"Object\", \"Pods\" or \"Resource\", each corresponds to a matching "
                           "field in the object."),
        "object": ("ObjectMetricStatus", "object refers to a metric describing a single kubernetes object."),
        "pods": ("PodsMetricStatus", "pods refers to a metric describing each pod in the current scale target."),
        "resource": ("ResourceMetricStatus", "resource refers to a resource metric (such as those specified in "
                                             "requests and limits) known to Kubernetes."),
        "containerResource": ("ContainerResourceMetricStatus", "container resource refers to a resource metric "
                                                               "known to Kubernetes describing a single container."),
        "external": ("ExternalMetricStatus", "external refers to a global metric that is not associated with any "
                                             "Kubernetes object."),
    }),
    "MetricValueStatus": ("MetricValueStatus holds the current value for a metric", {
        "value": ("Quantity", "value is the current value of the metric (as a quantity)."),
        "averageValue": ("Quantity", "averageValue is the current value of the average of the metric across all "
                                     "relevant pods (as a quantity)"),
        "averageUtilization": ("int32", "currentAverageUtilization is the current value of the average of the "
                                        "resource metric across all relevant pods, represented as a percentage of the "
                                        "requested value of the resource for the pods."),
    }),
    "ResourceMetricStatus": ("ResourceMetricStatus indicates the current value of a resource metric known to "
                             "Kubernetes.", {
                                 "name": ("string", "name is the name of the resource in question."),
                                 "current": ("MetricValueStatus", "current contains the current value for the given "
                                                                  "metric"),
                             }),
    "ContainerResourceMetricStatus": ("ContainerResourceMetricStatus indicates the current value of a resource metric "
                                      "known to Kubernetes.", {
                                          "name": ("string", "name is the name of the resource in question."),
                                          "current": ("MetricValueStatus", "current contains the current value for "
                                                                           "the given metric"),
                                          "container": ("string", "container is the name of the container in the pods "
                                                                  "of the scaling target"),
                                      }),
    "PodsMetricStatus": ("PodsMetricStatus indicates the current value of a metric describing each pod in the "
                         "current scale target.", {
                             "metric": ("MetricIdentifier", "metric identifies the target metric by name and "
                                                            "selector"),
                             "current": ("MetricValueStatus", "current contains the current value for the given "
                                                              "metric"),
                         }),
    "ObjectMetricStatus": ("ObjectMetricStatus indicates the current value of a metric describing a kubernetes "
                           "object.", {
                               "metric": ("MetricIdentifier", "metric identifies the target metric by name and "
                                                              "selector"),
                               "current": ("MetricValueStatus", "current contains the current value for the given "
                                                                "metric"),
                               "describedObject": ("CrossVersionObjectReference", "DescribedObject specifies the "
                                                   "descriptions of a object,such as kind,name apiVersion"),
                           }),
    "ExternalMetricStatus": ("ExternalMetricStatus indicates the current value of a global metric not associated "
                             "with any Kubernetes object.", {
                                 "metric": ("MetricIdentifier", "metric identifies the target metric by name and "
                                                                "selector"),
                                 "current": ("MetricValueStatus", "current contains the current value for the given "
                                                                  "metric"),
                             }),
    "HorizontalPodAutoscalerCondition": ("HorizontalPodAutoscalerCondition describes the state of a "
                                         "HorizontalPodAutoscaler at a certain point.", {
                                             "type": ("string", "type describes the current condition"),
                                             "status": ("string", "status is the status of the condition (True, "
                                                                  "False, Unknown)"),
                                             "lastTransitionTime": ("Time", "lastTransitionTime is the last time the "
                                                                            "condition transitioned from one status "
                                                                            "to another"),
                                             "reason": ("string", "reason is the reason for the condition's last "
                                                                  "transition."),
                                             "message": ("string", "message is a human-readable explanation "
                                                                   "containing details about the transition"),
                                         }),
}

TYPES_V1: _T = {
    _XREF[0]: (_XREF[1], _XREF[2]),
    "v1.HorizontalPodAutoscalerSpec": ("specification of a horizontal pod autoscaler.", {
        "scaleTargetRef": ("CrossVersionObjectReference", "reference to scaled resource; horizontal pod autoscaler "
                                                          "will learn the current resource consumption and will set "
                                                          "the desired number of pods by using its Scale subresource."),
        "minReplicas": ("int32", _MIN),
        "maxReplicas": ("int32", _MAX),
        "targetCPUUtilizationPercentage": ("int32", "targetCPUUtilizationPercentage is the target average CPU "
                                                    "utilization (represented as a percentage of requested CPU) over "
                                                    "all the pods; if not specified the default autoscaling policy "
                                                    "will be used."),
    }),
    "v1.HorizontalPodAutoscalerStatus": ("current status of a horizontal pod autoscaler", {
        "observedGeneration": ("int64", "observedGeneration is the most recent generation observed by this "
                                        "autoscaler."),
        "lastScaleTime": ("Time", "lastScaleTime is the last time the HorizontalPodAutoscaler scaled the number of "
                                  "pods; used by the autoscaler to control how often the number of pods is changed."),
        "currentReplicas": ("int32", _CURRENT),
        "desiredReplicas": ("int32", "desiredReplicas is the  desired number of replicas of pods managed by this "
                                     "autoscaler."),
        "currentCPUUtilizationPercentage": ("int32", "currentCPUUtilizationPercentage is the current average CPU "
                                                     "utilization over all pods, represented as a percentage of "
                                                     "requested CPU, e.g. 70 means that an average pod is using now "
                                                     "70% of its requested CPU."),
    }),
}

#: the list tags of ``autoscaling/v2/types.go``
listfields.declare(structs={
    "HorizontalPodAutoscalerSpec": {"metrics": listfields.ATOMIC, "behavior": "HorizontalPodAutoscalerBehavior"},
    "HorizontalPodAutoscalerBehavior": {"scaleUp": "HPAScalingRules", "scaleDown": "HPAScalingRules"},
    "HPAScalingRules": {"policies": listfields.ATOMIC},
    "HorizontalPodAutoscalerStatus": {"currentMetrics": listfields.ATOMIC,
                                      "conditions": listfields.map_list("type")},
}, kinds={"HorizontalPodAutoscaler": {"spec": "HorizontalPodAutoscalerSpec",
                                      "status": "HorizontalPodAutoscalerStatus"}})

_DESC = "HorizontalPodAutoscaler is the configuration for a horizontal pod autoscaler, which automatically " \
        "manages the replica count of any resource implementing the scale subresource based on the metrics " \
        "specified."
SCHEMA_V2 = KindSchema(_DESC, {
    "spec": ("HorizontalPodAutoscalerSpec", "spec is the specification for the behaviour of the autoscaler."),
    "status": ("HorizontalPodAutoscalerStatus", "status is the current information about the autoscaler."),
}, TYPES_V2)
SCHEMA_V1 = KindSchema("configuration of a horizontal pod autoscaler.", {
    "spec": ("v1.HorizontalPodAutoscalerSpec", "spec defines the behaviour of autoscaler."),
    "status": ("v1.HorizontalPodAutoscalerStatus", "status is the current information about the autoscaler."),
}, TYPES_V1)

# --------------------------------------------------------------------------- printer (of the v2 form)

COLUMNS = (
    common.NAME_COL,
    common.col("Reference", description=_TARGET_REF),
    common.col("Targets", description=_METRICS),
    common.col("MinPods", description=_MIN),
    common.col("MaxPods", description=_MAX),
    common.col("Replicas", description=_CURRENT),
    common.AGE_COL,
)


def _pct(v: object) -> str:
    return f"{v}%"


def format_metrics(specs: list[Any], statuses: list[Any]) -> str:
    """formatHPAMetrics: each metric as ``current/target`` (``cpu: <unknown>/80%``), at most
    two, then ``+ N more...``; ``<none>`` without metrics."""
    if not specs:
        return "<none>"
    out: list[str] = []
    for i, spec in enumerate(specs):
        spec = spec if isinstance(spec, dict) else {}
        st = statuses[i] if i < len(statuses) and isinstance(statuses[i], dict) else {}
        typ = spec.get("type")
        if typ == "External":
            tgt, cur = (spec.get("external") or {}).get("target") or {}, ((st.get("external") or {}).get("current"))
            if tgt.get("averageValue") is not None:
                c = (cur or {}).get("averageValue") if cur and cur.get("averageValue") is not None else "<unknown>"
                out.append(f"{c}/{tgt['averageValue']} (avg)")
            else:
                c = (cur or {}).get("value", "<unknown>") if cur else "<unknown>"
                out.append(f"{c}/{tgt.get('value', '')}")
        elif typ == "Pods":
            tgt, cur = (spec.get("pods") or {}).get("target") or {}, (st.get("pods") or {}).get("current")
            c = cur.get("averageValue", "<unknown>") if cur else "<unknown>"
            out.append(f"{c}/{tgt.get('averageValue', '')}")
        elif typ == "Object":
            tgt, cur = (spec.get("object") or {}).get("target") or {}, (st.get("object") or {}).get("current")
            if tgt.get("averageValue") is not None:
                c = cur.get("averageValue", "<unknown>") if cur else "<unknown>"
                out.append(f"{c}/{tgt['averageValue']} (avg)")
            else:
                c = cur.get("value", "<unknown>") if cur else "<unknown>"
                out.append(f"{c}/{tgt.get('value', '')}")
        elif typ in ("Resource", "ContainerResource"):
            key = "resource" if typ == "Resource" else "containerResource"
            src = spec.get(key) or {}
            tgt, cur = src.get("target") or {}, (st.get(key) or {}).get("current")
            if tgt.get("averageValue") is not None:
                c = cur["averageValue"] if cur and cur.get("averageValue") is not None else "<unknown>"
                out.append(f"{src.get('name', '')}: {c}/{tgt['averageValue']}")
            else:
                c = _pct(cur["averageUtilization"]) if cur and cur.get("averageUtilization") is not None \
                    else "<unknown>"
                t = _pct(tgt["averageUtilization"]) if tgt.get("averageUtilization") is not None else "<auto>"
                out.append(f"{src.get('name', '')}: {c}/{t}")
        else:
            out.append("<unknown type>")
    if len(out) > 2:
        return ", ".join(out[:2]) + f" + {len(out) - 2} more..."
    return ", ".join(out)


def _row(hpa: JSON, now: float) -> tuple[list[Any], list[JSON] | None]:
    spec, st = hpa.get("spec") or {}, hpa.get("status") or {}
    ref = spec.get("scaleTargetRef") or {}
    mn = spec.get("minReplicas")
    return [common.name(hpa), f"{ref.get('kind', '')}/{ref.get('name', '')}",
            format_metrics(spec.get("metrics") or [], st.get("currentMetrics") or []),
            "<unset>" if mn is None else str(mn), int(spec.get("maxReplicas") or 0),
            int(st.get("currentReplicas") or 0), common.age(hpa, now)], None


PRINTER = Printer(COLUMNS, _row)

# --------------------------------------------------------------------------- defaults

SCALE_UP_DEFAULT = {"stabilizationWindowSeconds": 0, "selectPolicy": "Max",
                    "policies": [{"type": "Pods", "value": 4, "periodSeconds": 15},
                                 {"type": "Percent", "value": 100, "periodSeconds": 15}]}
SCALE_DOWN_DEFAULT = {"stabilizationWindowSeconds": 300, "selectPolicy": "Max",
                      "policies": [{"type": "Percent", "value": 100, "periodSeconds": 15}]}


def _rules(rules: object, default: JSON) -> JSON:
    """GenerateHPAScaleUpRules / GenerateHPAScaleDownRules: the default rules, or the given
    ones with their unset fields from the default."""
    if not isinstance(rules, dict):
        return copy.deepcopy(default)
    for k, v in default.items():
        if rules.get(k) is None:
            rules[k] = copy.deepcopy(v)
    return rules


def default_hpa(obj: JSON) -> None:
    """SetDefaults_HorizontalPodAutoscaler (v2): minReplicas 1; a cpu ``Utilization`` metric at
    80% when no metric is given; the behavior's rules completed when a behavior is given."""
    spec = common.section(obj, "spec")
    if spec.get("minReplicas") is None:
        spec["minReplicas"] = 1
    if not spec.get("metrics"):
        spec["metrics"] = [{"type": "Resource", "resource": {"name": "cpu", "target": {
            "type": "Utilization", "averageUtilization": DEFAULT_CPU_UTILIZATION}}}]
    beh = spec.get("behavior")
    if isinstance(beh, dict):
        beh["scaleUp"] = _rules(beh.get("scaleUp"), SCALE_UP_DEFAULT)
        beh["scaleDown"] = _rules(beh.get("scaleDown"), SCALE_DOWN_DEFAULT)

# --------------------------------------------------------------------------- validation


def _validate_xref(ref: object, path: str, errs: ErrorList) -> None:
    """ValidateCrossVersionObjectReference: kind and name required, valid path segments."""
    ref = ref if isinstance(ref, dict) else {}
    for f in ("kind", "name"):
        v = ref.get(f) or ""
        if not v:
            errs.required(f"{path}.{f}", "")
        else:
            for m in common.is_valid_path_segment_name(str(v)):
                errs.invalid(f"{path}.{f}", v, m)


def _positive_quantity(v: object) -> bool:
    s = str(v).strip()
    return bool(s) and not s.startswith("-") and any(c in "123456789" for c in s.split("e")[0].split("E")[0])


def _validate_target(t: object, path: str, errs: ErrorList) -> None:
    """validateMetricTarget: a type among Utilization, Value, AverageValue; positive values."""
    t = t if isinstance(t, dict) else {}
    typ = t.get("type") or ""
    if not typ:
        errs.required(f"{path}.type", "must specify a metric target type")
    elif typ not in TARGET_TYPES:
        errs.invalid(f"{path}.type", typ, "must be either Utilization, Value, or AverageValue")
    for f in ("value", "averageValue"):
        if t.get(f) is not None and not _positive_quantity(t[f]):
            errs.invalid(f"{path}.{f}", t[f], "must be positive")
    au = t.get("averageUtilization")
    if au is not None and common.is_int(au) and int(str(au)) < 1:
        errs.invalid(f"{path}.averageUtilization", au, "must be greater than 0")


def _d(v: object) -> JSON:
    return v if isinstance(v, dict) else {}


def _validate_metric(m: object, path: str, errs: ErrorList) -> None:
    """validateMetricSpec: a type, exactly its source, the source's checks."""
    m = m if isinstance(m, dict) else {}
    typ = m.get("type") or ""
    present = [k for k in ("object", "pods", "resource", "containerResource", "external") if m.get(k) is not None]
    if not typ:
        errs.required(f"{path}.type", "must specify a metric source type")
    elif typ not in METRIC_TYPES:
        errs.not_supported(f"{path}.type", typ, METRIC_TYPES)
        return
    if len(present) > 1:
        errs.forbidden(path, "must populate the given metric source only")
    key = typ[0].lower() + typ[1:] if typ else ""
    src = m.get(key)
    if typ and not isinstance(src, dict):
        errs.required(f"{path}.{key}", "must populate information for the given metric source")
        return
    if not typ:
        return
    assert isinstance(src, dict)
    p = f"{path}.{key}"
    if typ in ("Resource", "ContainerResource"):
        if not src.get("name"):
            errs.required(f"{p}.name", "must specify a resource name")
        if typ == "ContainerResource" and not src.get("container"):
            errs.required(f"{p}.container", "must specify a container")
        tgt = _d(src.get("target"))
        if tgt.get("averageUtilization") is None and tgt.get("averageValue") is None:
            errs.required(f"{p}.target.averageUtilization", "must set either a target raw value or a target "
                                                            "utilization")
        if tgt.get("averageUtilization") is not None and tgt.get("averageValue") is not None:
            errs.forbidden(f"{p}.target.averageValue", "may not set both a target raw value and a target utilization")
    else:
        if typ == "Object":
            _validate_xref(src.get("describedObject"), f"{p}.describedObject", errs)
        metric = _d(src.get("metric"))
        if not metric.get("name"):
            errs.required(f"{p}.metric.name", "must specify a metric name")
    _validate_target(src.get("target"), f"{p}.target", errs)


def _validate_rules(rules: object, path: str, errs: ErrorList) -> None:
    if not isinstance(rules, dict):
        return
    sw = rules.get("stabilizationWindowSeconds")
    if common.is_int(sw) and not 0 <= int(str(sw)) <= 3600:
        errs.invalid(f"{path}.stabilizationWindowSeconds", sw, "must be less than or equal to 3600" if int(str(sw)) > 0
                     else "must be greater than or equal to zero")
    sp = rules.get("selectPolicy")
    if sp is not None and sp not in ("Max", "Min", "Disabled"):
        errs.not_supported(f"{path}.selectPolicy", sp, ["Disabled", "Max", "Min"])
    policies = rules.get("policies") or []
    if not policies:
        errs.required(f"{path}.policies", "must specify at least one Policy")
    for i, pol in enumerate(policies):
        pp = f"{path}.policies[{i}]"
        pol = pol if isinstance(pol, dict) else {}
        if pol.get("type") not in ("Pods", "Percent"):
            errs.not_supported(f"{pp}.type", pol.get("type") or "", ["Percent", "Pods"])
        v, ps = pol.get("value"), pol.get("periodSeconds")
        if common.is_int(v) and int(str(v)) <= 0:
            errs.invalid(f"{pp}.value", v, "must be greater than zero")
        if common.is_int(ps) and int(str(ps)) <= 0:
            errs.invalid(f"{pp}.periodSeconds", ps, "must be greater than zero")
        elif common.is_int(ps) and int(str(ps)) > 1800:
            errs.invalid(f"{pp}.periodSeconds", ps, "must be less than or equal to 1800")


def validate_hpa(obj: JSON, old: JSON | None, errs: ErrorList) -> None:
    """ValidateHorizontalPodAutoscaler (+ Update: the same; status is the status strategy's)."""
    spec = obj.get("spec")
    if not isinstance(spec, dict):
        errs.required("spec", "")
        return
    mn, mx = spec.get("minReplicas"), spec.get("maxReplicas")
    if common.is_int(mn) and int(str(mn)) < 1:
        errs.invalid("spec.minReplicas", mn, "must be greater than or equal to 1")
    if not common.is_int(mx) or int(str(mx)) < 1:
        errs.invalid("spec.maxReplicas", mx if mx is not None else 0, "must be greater than 0")
    if common.is_int(mn) and common.is_int(mx) and int(str(mn)) > int(str(mx)):
        errs.invalid("spec.maxReplicas", mx, "must be greater than or equal to `minReplicas`")
    _validate_xref(spec.get("scaleTargetRef"), "spec.scaleTargetRef", errs)
    for i, m in enumerate(spec.get("metrics") or []):
        _validate_metric(m, f"spec.metrics[{i}]", errs)
    beh = spec.get("behavior")
    if isinstance(beh, dict):
        _validate_rules(beh.get("scaleUp"), "spec.behavior.scaleUp", errs)
        _validate_rules(beh.get("scaleDown"), "spec.behavior.scaleDown", errs)


def prepare_hpa_create(hpa: JSON) -> None:
    """PrepareForCreate: an empty status, as v2 encodes it (``currentMetrics`` and
    ``desiredReplicas`` have no ``omitempty``: ``null`` and 0)."""
    hpa["status"] = {"currentMetrics": None, "desiredReplicas": 0}


STRATEGY = Strategy(prepare_create=prepare_hpa_create)

# --------------------------------------------------------------------------- v1 <-> v2 conversion


def _is_cpu_utilization(m: object) -> bool:
    if not isinstance(m, dict) or m.get("type") != "Resource":
        return False
    res = m.get("resource") or {}
    return res.get("name") == "cpu" and (res.get("target") or {}).get("averageUtilization") is not None


def _set(out: JSON, key: str, value: object) -> None:
    if value is not None:
        out[key] = value


def _metric_spec_to_v1(m: JSON) -> JSON:
    """Convert_autoscaling_MetricSpec_To_v1_MetricSpec: the v2 source in v1's alpha shape."""
    out: JSON = {"type": m.get("type")}
    typ = m.get("type")
    if typ in ("Resource", "ContainerResource"):
        key = "resource" if typ == "Resource" else "containerResource"
        src = m.get(key) or {}
        tgt = src.get("target") or {}
        r: JSON = {"name": src.get("name", "")}
        if typ == "ContainerResource":
            r["container"] = src.get("container", "")
        _set(r, "targetAverageUtilization", tgt.get("averageUtilization"))
        _set(r, "targetAverageValue", tgt.get("averageValue"))
        out[key] = r
    elif typ == "Pods":
        src = m.get("pods") or {}
        metric, tgt = src.get("metric") or {}, src.get("target") or {}
        p: JSON = {"metricName": metric.get("name", ""), "targetAverageValue": tgt.get("averageValue") or "0"}
        _set(p, "selector", metric.get("selector"))
        out["pods"] = p
    elif typ == "Object":
        src = m.get("object") or {}
        metric, tgt = src.get("metric") or {}, src.get("target") or {}
        o: JSON = {"target": src.get("describedObject") or {}, "metricName": metric.get("name", ""),
                   "targetValue": tgt.get("value") or "0"}
        _set(o, "selector", metric.get("selector"))
        _set(o, "averageValue", tgt.get("averageValue"))
        out["object"] = o
    elif typ == "External":
        src = m.get("external") or {}
        metric, tgt = src.get("metric") or {}, src.get("target") or {}
        e: JSON = {"metricName": metric.get("name", "")}
        _set(e, "metricSelector", metric.get("selector"))
        _set(e, "targetValue", tgt.get("value"))
        _set(e, "targetAverageValue", tgt.get("averageValue"))
        out["external"] = e
    return out


def _metric_spec_from_v1(m: JSON) -> JSON:
    """Convert_v1_MetricSpec_To_autoscaling_MetricSpec: v1's alpha shape as a v2 source."""
    out: JSON = {"type": m.get("type")}
    typ = m.get("type")
    if typ in ("Resource", "ContainerResource"):
        key = "resource" if typ == "Resource" else "containerResource"
        src = m.get(key) or {}
        tgt: JSON = {}
        if src.get("targetAverageUtilization") is not None:
            tgt = {"type": "Utilization", "averageUtilization": src["targetAverageUtilization"]}
        elif src.get("targetAverageValue") is not None:
            tgt = {"type": "AverageValue", "averageValue": src["targetAverageValue"]}
        r: JSON = {"name": src.get("name", ""), "target": tgt}
        if typ == "ContainerResource":
            r["container"] = src.get("container", "")
        out[key] = r
    elif typ == "Pods":
        src = m.get("pods") or {}
        metric: JSON = {"name": src.get("metricName", "")}
        _set(metric, "selector", src.get("selector"))
        out["pods"] = {"metric": metric, "target": {"type": "AverageValue", "averageValue": src.get("targetAverageValue")}}
    elif typ == "Object":
        src = m.get("object") or {}
        metric = {"name": src.get("metricName", "")}
        _set(metric, "selector", src.get("selector"))
        tgt = ({"type": "AverageValue", "averageValue": src["averageValue"]} if src.get("averageValue") is not None
               else {"type": "Value", "value": src.get("targetValue")})
        out["object"] = {"describedObject": src.get("target") or {}, "metric": metric, "target": tgt}
    elif typ == "External":
        src = m.get("external") or {}
        metric = {"name": src.get("metricName", "")}
        _set(metric, "selector", src.get("metricSelector"))
        tgt = ({"type": "AverageValue", "averageValue": src["targetAverageValue"]}
               if src.get("targetAverageValue") is not None else {"type": "Value", "value": src.get("targetValue")})
        out["external"] = {"metric": metric, "target": tgt}
    return out


def _metric_status_to_v1(m: JSON) -> JSON:
    """Convert_autoscaling_MetricStatus_To_v1_MetricStatus (the current values, v1's alpha shape)."""
    out: JSON = {"type": m.get("type")}
    typ = m.get("type")
    if typ in ("Resource", "ContainerResource"):
        key = "resource" if typ == "Resource" else "containerResource"
        src = m.get(key) or {}
        cur = src.get("current") or {}
        # v1's currentAverageValue is a Quantity, not a pointer: "0" when unset
        r: JSON = {"name": src.get("name", ""), "currentAverageValue": cur.get("averageValue") or "0"}
        if typ == "ContainerResource":
            r["container"] = src.get("container", "")
        _set(r, "currentAverageUtilization", cur.get("averageUtilization"))
        out[key] = r
    elif typ in ("Pods", "Object", "External"):
        key = typ.lower()
        src = m.get(key) or {}
        metric, cur = src.get("metric") or {}, src.get("current") or {}
        if typ == "Pods":
            out[key] = {"metricName": metric.get("name", ""), "currentAverageValue": cur.get("averageValue") or "0"}
            _set(out[key], "selector", metric.get("selector"))
        elif typ == "Object":
            out[key] = {"target": src.get("describedObject") or {}, "metricName": metric.get("name", ""),
                        "currentValue": cur.get("value") or "0"}
            _set(out[key], "selector", metric.get("selector"))
            _set(out[key], "averageValue", cur.get("averageValue"))
        else:
            out[key] = {"metricName": metric.get("name", ""), "currentValue": cur.get("value") or "0"}
            _set(out[key], "metricSelector", metric.get("selector"))
            _set(out[key], "currentAverageValue", cur.get("averageValue"))
    return out


def _metric_status_from_v1(m: JSON) -> JSON:
    """Convert_v1_MetricStatus_To_autoscaling_MetricStatus."""
    out: JSON = {"type": m.get("type")}
    typ = m.get("type")
    if typ in ("Resource", "ContainerResource"):
        key = "resource" if typ == "Resource" else "containerResource"
        src = m.get(key) or {}
        cur: JSON = {}
        _set(cur, "averageValue", src.get("currentAverageValue"))
        _set(cur, "averageUtilization", src.get("currentAverageUtilization"))
        r: JSON = {"name": src.get("name", ""), "current": cur}
        if typ == "ContainerResource":
            r["container"] = src.get("container", "")
        out[key] = r
    elif typ in ("Pods", "Object", "External"):
        key = typ.lower()
        src = m.get(key) or {}
        sel = src.get("metricSelector" if typ == "External" else "selector")
        metric: JSON = {"name": src.get("metricName", "")}
        _set(metric, "selector", sel)
        cur = {}
        if typ == "Pods":
            _set(cur, "averageValue", src.get("currentAverageValue"))
            out[key] = {"metric": metric, "current": cur}
        elif typ == "Object":
            _set(cur, "value", src.get("currentValue"))
            _set(cur, "averageValue", src.get("averageValue"))
            out[key] = {"describedObject": src.get("target") or {}, "metric": metric, "current": cur}
        else:
            _set(cur, "value", src.get("currentValue"))
            _set(cur, "averageValue", src.get("currentAverageValue"))
            out[key] = {"metric": metric, "current": cur}
    return out


def _dump(v: object) -> str:
    """Go's ``json.Marshal`` of the annotation values: compact, keys in struct order."""
    return json.dumps(v, separators=(",", ":"))


def v2_to_v1(obj: JSON) -> JSON:
    """An ``autoscaling/v2`` HorizontalPodAutoscaler as ``autoscaling/v1`` (a new object):
    the cpu utilization metric as ``targetCPUUtilizationPercentage``, the others, the current
    metrics, the behavior and the conditions in the ``autoscaling.alpha.kubernetes.io/*``
    annotations (``Convert_autoscaling_HorizontalPodAutoscaler_To_v1_HorizontalPodAutoscaler``)."""
    out = copy.deepcopy(obj)
    out["apiVersion"] = f"{GROUP}/v1"
    spec, status = out.pop("spec", None) or {}, out.pop("status", None)
    md = out.setdefault("metadata", {})
    ann = dict(md.get("annotations") or {})
    metrics = spec.get("metrics") or []
    v1spec: JSON = {}
    for k in ("scaleTargetRef", "minReplicas", "maxReplicas"):
        _set(v1spec, k, spec.get(k))
    for m in metrics:
        if _is_cpu_utilization(m):
            v1spec["targetCPUUtilizationPercentage"] = m["resource"]["target"]["averageUtilization"]
            break
    others = [_metric_spec_to_v1(m) for m in metrics if isinstance(m, dict) and not _is_cpu_utilization(m)]
    if others:
        ann[METRICS_ANNOTATION] = _dump(others)
    if spec.get("behavior") is not None:
        ann[BEHAVIOR_ANNOTATION] = _dump(spec["behavior"])
    out["spec"] = v1spec
    if status is not None:
        v1status: JSON = {}
        for k in ("observedGeneration", "lastScaleTime", "currentReplicas", "desiredReplicas"):
            _set(v1status, k, status.get(k))
        # v1's currentReplicas and desiredReplicas are not omitted when zero (no omitempty)
        v1status.setdefault("currentReplicas", 0)
        v1status.setdefault("desiredReplicas", 0)
        current = status.get("currentMetrics") or []
        for m in current:
            if isinstance(m, dict) and m.get("type") == "Resource" and (m.get("resource") or {}).get("name") == "cpu":
                au = ((m["resource"].get("current")) or {}).get("averageUtilization")
                if au is not None:
                    v1status["currentCPUUtilizationPercentage"] = au
                    break
        if current:
            ann[CURRENT_METRICS_ANNOTATION] = _dump([_metric_status_to_v1(m) for m in current if isinstance(m, dict)])
        if status.get("conditions"):
            ann[CONDITIONS_ANNOTATION] = _dump(status["conditions"])
        out["status"] = v1status
    if ann:
        md["annotations"] = ann
    return out


def _load(ann: JSON, key: str) -> Any:
    raw = ann.get(key)
    if raw is None:
        return None
    try:
        return json.loads(raw)
    except (TypeError, ValueError):
        return None


def v1_to_v2(obj: JSON) -> JSON:
    """An ``autoscaling/v1`` HorizontalPodAutoscaler as ``autoscaling/v2`` (a new object):
    ``targetCPUUtilizationPercentage`` as a cpu ``Utilization`` metric, and the
    ``autoscaling.alpha.kubernetes.io/*`` annotations back as metrics, current metrics,
    behavior and conditions, the annotations removed
    (``Convert_v1_HorizontalPodAutoscaler_To_autoscaling_HorizontalPodAutoscaler``)."""
    out = copy.deepcopy(obj)
    out["apiVersion"] = f"{GROUP}/v2"
    spec, status = out.pop("spec", None), out.pop("status", None)
    md = out.setdefault("metadata", {})
    ann = dict(md.get("annotations") or {})
    if isinstance(spec, dict):
        v2spec: JSON = {}
        for k in ("scaleTargetRef", "minReplicas", "maxReplicas"):
            _set(v2spec, k, spec.get(k))
        metrics: list[JSON] = []
        if spec.get("targetCPUUtilizationPercentage") is not None:
            metrics = [{"type": "Resource", "resource": {"name": "cpu", "target": {
                "type": "Utilization", "averageUtilization": spec["targetCPUUtilizationPercentage"]}}}]
        others = _load(ann, METRICS_ANNOTATION)
        if isinstance(others, list):
            metrics = [_metric_spec_from_v1(m) for m in others if isinstance(m, dict)] + metrics
            del ann[METRICS_ANNOTATION]
        if metrics:
            v2spec["metrics"] = metrics
        behavior = _load(ann, BEHAVIOR_ANNOTATION)
        if isinstance(behavior, dict):
            v2spec["behavior"] = behavior
            del ann[BEHAVIOR_ANNOTATION]
        out["spec"] = v2spec
    if isinstance(status, dict):
        v2status: JSON = {}
        for k in ("observedGeneration", "lastScaleTime", "currentReplicas", "desiredReplicas"):
            _set(v2status, k, status.get(k))
        if status.get("currentCPUUtilizationPercentage") is not None:
            v2status["currentMetrics"] = [{"type": "Resource", "resource": {"name": "cpu", "current": {
                "averageUtilization": status["currentCPUUtilizationPercentage"]}}}]
        current = _load(ann, CURRENT_METRICS_ANNOTATION)
        if isinstance(current, list):
            v2status["currentMetrics"] = [_metric_status_from_v1(m) for m in current if isinstance(m, dict)]
            del ann[CURRENT_METRICS_ANNOTATION]
        conditions = _load(ann, CONDITIONS_ANNOTATION)
        if isinstance(conditions, list):
            v2status["conditions"] = conditions
            del ann[CONDITIONS_ANNOTATION]
        out["status"] = v2status
    for k in (METRICS_ANNOTATION, CURRENT_METRICS_ANNOTATION, BEHAVIOR_ANNOTATION, CONDITIONS_ANNOTATION):
        ann.pop(k, None)
    if ann:
        md["annotations"] = ann
    else:
        md.pop("annotations", None)
    return out


# --------------------------------------------------------------------------- entries (v2 first: preferred)

_SUBS = ("status",)
ENTRIES: tuple[Resource, ...] = (
    Resource(GROUP, "v2", "horizontalpodautoscalers", "horizontalpodautoscaler", "HorizontalPodAutoscaler", True,
             ("hpa",), _SUBS, ("all",), printer=PRINTER, schema=SCHEMA_V2, validate=validate_hpa,
             default=default_hpa, strategy=STRATEGY),
    Resource(GROUP, "v1", "horizontalpodautoscalers", "horizontalpodautoscaler", "HorizontalPodAutoscaler", True,
             ("hpa",), _SUBS, ("all",), printer=PRINTER, schema=SCHEMA_V1, validate=validate_hpa,
             default=default_hpa, strategy=STRATEGY, storage_version="v2", to_storage=v1_to_v2,
             from_storage=v2_to_v1),
)
