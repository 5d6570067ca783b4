"""Decoding of Kubernetes protobuf request bodies (``application/vnd.kubernetes.protobuf``).

kubectl 1.32's typed-client commands (``create namespace|deployment|configmap|secret|
serviceaccount|service|quota|priorityclass|poddisruptionbudget``, and other client-go clientsets) send their objects as protobuf
and do not fall back to JSON; the real apiserver accepts them. The wire format
(``staging/src/k8s.io/apimachinery/pkg/runtime/serializer/protobuf/protobuf.go``):
the 4-byte magic ``k8s\\x00``, then a ``runtime.Unknown`` message
(1 typeMeta {1 apiVersion, 2 kind}, 2 raw, 3 contentEncoding, 4 contentType) whose ``raw``
is the object's message as declared in ``k8s.io/api/<group>/<version>/generated.proto``.

:data:`SCHEMAS` is a hand-written table of the field numbers of the messages we decode
(ObjectMeta and the served kinds with the fields commonly set by clients); field numbers
are the interface declared in those ``generated.proto`` files. The Go marshaller writes
every non-pointer scalar even when zero; like JSON's ``omitempty`` we drop zero values of
non-pointer fields and keep those of pointer fields (marked ``?``). A field missing from
the table carrying a non-zero value is refused with a clear 415, never silently dropped.

Responses stay JSON: client-go decodes by the response's Content-Type.
"""

from __future__ import annotations

import base64
import json
from typing import Any

from controlplane import apitime

MAGIC = b"k8s\x00"
CONTENT_TYPE = "application/vnd.kubernetes.protobuf"


class ProtobufError(ValueError):
    """A body that is not a decodable Kubernetes protobuf object (message is client-facing)."""


# Field spec: (json name, type). Types: "s" string, "i" signed varint, "b" bool, "y" bytes,
# "m" map<string,string>, "my" map<string,bytes>, "mq" map<string,Quantity>,
# "mx" map<string,ExtraValue> (ExtraValue: repeated string items = 1; JSON: a list), "T" Time,
# "Q" Quantity, "IOS" IntOrString, or a message name. "[" prefix = repeated;
# "?" suffix = pointer field (zero values kept).
F = tuple[str, str]

SCHEMAS: dict[str, dict[int, F]] = {
    # k8s.io/apimachinery/pkg/apis/meta/v1
    "ObjectMeta": {1: ("name", "s"), 2: ("generateName", "s"), 3: ("namespace", "s"), 4: ("selfLink", "s"),
                   5: ("uid", "s"), 6: ("resourceVersion", "s"), 7: ("generation", "i"),
                   8: ("creationTimestamp", "T"), 9: ("deletionTimestamp", "T?"),
                   10: ("deletionGracePeriodSeconds", "i?"), 11: ("labels", "m"), 12: ("annotations", "m"),
                   13: ("ownerReferences", "[OwnerReference"), 14: ("finalizers", "[s"),
                   17: ("managedFields", "[ManagedFieldsEntry")},
    "ManagedFieldsEntry": {1: ("manager", "s"), 2: ("operation", "s"), 3: ("apiVersion", "s"), 4: ("time", "T?"),
                           6: ("fieldsType", "s"), 7: ("fieldsV1", "FieldsV1?"), 8: ("subresource", "s")},
    "OwnerReference": {1: ("kind", "s"), 3: ("name", "s"), 4: ("uid", "s"), 5: ("apiVersion", "s"),
                       6: ("controller", "b?"), 7: ("blockOwnerDeletion", "b?")},
    "LabelSelector": {1: ("matchLabels", "m"), 2: ("matchExpressions", "[LabelSelectorRequirement")},
    "LabelSelectorRequirement": {1: ("key", "s"), 2: ("operator", "s"), 3: ("values", "[s")},
    # k8s.io/api/core/v1
    "Namespace": {1: ("metadata", "ObjectMeta"), 2: ("spec", "NamespaceSpec"), 3: ("status", "NamespaceStatus")},
    "NamespaceSpec": {1: ("finalizers", "[s")},
    "NamespaceStatus": {1: ("phase", "s")},
    "ConfigMap": {1: ("metadata", "ObjectMeta"), 2: ("data", "m"), 3: ("binaryData", "my"), 4: ("immutable", "b?")},
    "Secret": {1: ("metadata", "ObjectMeta"), 2: ("data", "my"), 3: ("type", "s"), 4: ("stringData", "m"),
               5: ("immutable", "b?")},
    "ServiceAccount": {1: ("metadata", "ObjectMeta"), 2: ("secrets", "[ObjectReference"),
                       3: ("imagePullSecrets", "[LocalObjectReference"),
                       4: ("automountServiceAccountToken", "b?")},
    "ObjectReference": {1: ("kind", "s"), 2: ("namespace", "s"), 3: ("name", "s"), 4: ("uid", "s"),
                        5: ("apiVersion", "s"), 6: ("resourceVersion", "s"), 7: ("fieldPath", "s")},
    "LocalObjectReference": {1: ("name", "s")},
    "Service": {1: ("metadata", "ObjectMeta"), 2: ("spec", "ServiceSpec"), 3: ("status", "ServiceStatus")},
    "ServiceSpec": {1: ("ports", "[ServicePort"), 2: ("selector", "m"), 3: ("clusterIP", "s"), 4: ("type", "s"),
                    5: ("externalIPs", "[s"), 7: ("sessionAffinity", "s"), 8: ("loadBalancerIP", "s"),
                    9: ("loadBalancerSourceRanges", "[s"), 10: ("externalName", "s"),
                    11: ("externalTrafficPolicy", "s"), 12: ("healthCheckNodePort", "i"),
                    13: ("publishNotReadyAddresses", "b"), 17: ("ipFamilyPolicy", "s?"),
                    18: ("clusterIPs", "[s"), 19: ("ipFamilies", "[s"),
                    20: ("allocateLoadBalancerNodePorts", "b?"), 21: ("loadBalancerClass", "s?"),
                    22: ("internalTrafficPolicy", "s?")},
    "ServicePort": {1: ("name", "s"), 2: ("protocol", "s"), 3: ("port", "i"), 4: ("targetPort", "IOS"),
                    5: ("nodePort", "i"), 6: ("appProtocol", "s?")},
    "ServiceStatus": {},
    "PodTemplateSpec": {1: ("metadata", "ObjectMeta"), 2: ("spec", "PodSpec")},
    "PodSpec": {1: ("volumes", "[Volume"), 2: ("containers", "[Container"), 3: ("restartPolicy", "s"),
                4: ("terminationGracePeriodSeconds", "i?"), 5: ("activeDeadlineSeconds", "i?"),
                6: ("dnsPolicy", "s"), 7: ("nodeSelector", "m"), 8: ("serviceAccountName", "s"),
                9: ("serviceAccount", "s"), 10: ("nodeName", "s"), 11: ("hostNetwork", "b"), 12: ("hostPID", "b"),
                13: ("hostIPC", "b"), 15: ("imagePullSecrets", "[LocalObjectReference"), 16: ("hostname", "s"),
                17: ("subdomain", "s"), 19: ("schedulerName", "s"), 20: ("initContainers", "[Container"),
                21: ("automountServiceAccountToken", "b?"), 22: ("tolerations", "[Toleration"),
                24: ("priorityClassName", "s"), 25: ("priority", "i?"), 29: ("runtimeClassName", "s?"),
                30: ("enableServiceLinks", "b?"), 31: ("preemptionPolicy", "s?")},
    "Container": {1: ("name", "s"), 2: ("image", "s"), 3: ("command", "[s"), 4: ("args", "[s"),
                  5: ("workingDir", "s"), 6: ("ports", "[ContainerPort"), 7: ("env", "[EnvVar"),
                  8: ("resources", "ResourceRequirements"), 9: ("volumeMounts", "[VolumeMount"),
                  13: ("terminationMessagePath", "s"), 14: ("imagePullPolicy", "s"), 16: ("stdin", "b"),
                  17: ("stdinOnce", "b"), 18: ("tty", "b"), 20: ("terminationMessagePolicy", "s"),
                  24: ("restartPolicy", "s?")},
    "ContainerPort": {1: ("name", "s"), 2: ("hostPort", "i"), 3: ("containerPort", "i"), 4: ("protocol", "s"),
                      5: ("hostIP", "s")},
    "EnvVar": {1: ("name", "s"), 2: ("value", "s")},
    "ResourceRequirements": {1: ("limits", "mq"), 2: ("requests", "mq")},
    "VolumeMount": {1: ("name", "s"), 2: ("readOnly", "b"), 3: ("mountPath", "s"), 4: ("subPath", "s")},
    "Volume": {1: ("name", "s")},
    "Toleration": {1: ("key", "s"), 2: ("operator", "s"), 3: ("value", "s"), 4: ("effect", "s"),
                   5: ("tolerationSeconds", "i?")},
    "Pod": {1: ("metadata", "ObjectMeta"), 2: ("spec", "PodSpec"), 3: ("status", "PodStatus")},
    "PodStatus": {1: ("phase", "s")},
    "ReplicationController": {1: ("metadata", "ObjectMeta"), 2: ("spec", "ReplicationControllerSpec"),
                              3: ("status", "ReplicationControllerStatus")},
    "ReplicationControllerSpec": {1: ("replicas", "i?"), 2: ("selector", "m"), 3: ("template", "PodTemplateSpec?"),
                                  4: ("minReadySeconds", "i")},
    "ReplicationControllerStatus": {},
    # k8s.io/api/apps/v1
    "Deployment": {1: ("metadata", "ObjectMeta"), 2: ("spec", "DeploymentSpec"), 3: ("status", "DeploymentStatus")},
    "DeploymentSpec": {1: ("replicas", "i?"), 2: ("selector", "LabelSelector?"), 3: ("template", "PodTemplateSpec"),
                       4: ("strategy", "DeploymentStrategy"), 5: ("minReadySeconds", "i"),
                       6: ("revisionHistoryLimit", "i?"), 7: ("paused", "b"), 9: ("progressDeadlineSeconds", "i?")},
    "DeploymentStrategy": {1: ("type", "s"), 2: ("rollingUpdate", "RollingUpdateDeployment?")},
    "RollingUpdateDeployment": {1: ("maxUnavailable", "IOS?"), 2: ("maxSurge", "IOS?")},
    "DeploymentStatus": {},
    "ReplicaSet": {1: ("metadata", "ObjectMeta"), 2: ("spec", "ReplicaSetSpec"), 3: ("status", "ReplicaSetStatus")},
    "ReplicaSetSpec": {1: ("replicas", "i?"), 2: ("selector", "LabelSelector?"), 3: ("template", "PodTemplateSpec"),
                       4: ("minReadySeconds", "i")},
    "ReplicaSetStatus": {},
    # k8s.io/api/certificates/v1 (kubectl certificate approve|deny: PUT .../approval)
    "CertificateSigningRequest": {1: ("metadata", "ObjectMeta"), 2: ("spec", "CertificateSigningRequestSpec"),
                                  3: ("status", "CertificateSigningRequestStatus")},
    "CertificateSigningRequestSpec": {1: ("request", "y"), 2: ("username", "s"), 3: ("uid", "s"),
                                      4: ("groups", "[s"), 5: ("usages", "[s"), 6: ("extra", "mx"),
                                      7: ("signerName", "s"),
                                      8: ("expirationSeconds", "i?")},
    "CertificateSigningRequestStatus": {1: ("conditions", "[CertificateSigningRequestCondition"),
                                        2: ("certificate", "y")},
    "CertificateSigningRequestCondition": {1: ("type", "s"), 2: ("reason", "s"), 3: ("message", "s"),
                                           4: ("lastUpdateTime", "T"), 5: ("lastTransitionTime", "T"),
                                           6: ("status", "s")},
    # k8s.io/api/networking/v1 (kubectl create ingress); IngressRule's field 2 is the embedded
    # IngressRuleValue, inlined in JSON (json name "")
    "Ingress": {1: ("metadata", "ObjectMeta"), 2: ("spec", "IngressSpec"), 3: ("status", "IngressStatus")},
    "IngressSpec": {1: ("defaultBackend", "IngressBackend?"), 2: ("tls", "[IngressTLS"), 3: ("rules", "[IngressRule"),
                    4: ("ingressClassName", "s?")},
    "IngressBackend": {3: ("resource", "TypedLocalObjectReference?"), 4: ("service", "IngressServiceBackend?")},
    "IngressServiceBackend": {1: ("name", "s"), 2: ("port", "ServiceBackendPort")},
    "ServiceBackendPort": {1: ("name", "s"), 2: ("number", "i")},
    "TypedLocalObjectReference": {1: ("apiGroup", "s?"), 2: ("kind", "s"), 3: ("name", "s")},
    "IngressTLS": {1: ("hosts", "[s"), 2: ("secretName", "s")},
    "IngressRule": {1: ("host", "s"), 2: ("", "IngressRuleValue")},
    "IngressRuleValue": {1: ("http", "HTTPIngressRuleValue?")},
    "HTTPIngressRuleValue": {1: ("paths", "[HTTPIngressPath")},
    "HTTPIngressPath": {1: ("path", "s"), 2: ("backend", "IngressBackend"), 3: ("pathType", "s?")},
    "IngressStatus": {},
    # k8s.io/api/core/v1 (kubectl create quota)
    "ResourceQuota": {1: ("metadata", "ObjectMeta"), 2: ("spec", "ResourceQuotaSpec"),
                      3: ("status", "ResourceQuotaStatus")},
    "ResourceQuotaSpec": {1: ("hard", "mq"), 2: ("scopes", "[s"), 3: ("scopeSelector", "ScopeSelector?")},
    "ScopeSelector": {1: ("matchExpressions", "[ScopedResourceSelectorRequirement")},
    "ScopedResourceSelectorRequirement": {1: ("scopeName", "s"), 2: ("operator", "s"), 3: ("values", "[s")},
    "ResourceQuotaStatus": {1: ("hard", "mq"), 2: ("used", "mq")},
    # k8s.io/api/scheduling/v1 (kubectl create priorityclass)
    "PriorityClass": {1: ("metadata", "ObjectMeta"), 2: ("value", "i"), 3: ("globalDefault", "b"),
                      4: ("description", "s"), 5: ("preemptionPolicy", "s?")},
    # k8s.io/api/policy/v1 (kubectl create poddisruptionbudget)
    "PodDisruptionBudget": {1: ("metadata", "ObjectMeta"), 2: ("spec", "PodDisruptionBudgetSpec"),
                            3: ("status", "PodDisruptionBudgetStatus")},
    "PodDisruptionBudgetSpec": {1: ("minAvailable", "IOS?"), 2: ("selector", "LabelSelector?"),
                                3: ("maxUnavailable", "IOS?"), 4: ("unhealthyPodEvictionPolicy", "s?")},
    "PodDisruptionBudgetStatus": {1: ("observedGeneration", "i"), 3: ("disruptionsAllowed", "i"),
                                  4: ("currentHealthy", "i"), 5: ("desiredHealthy", "i"), 6: ("expectedPods", "i")},
    # k8s.io/api/policy/v1 (kubectl drain)
    "Eviction": {1: ("metadata", "ObjectMeta"), 2: ("deleteOptions", "DeleteOptions?")},
    "DeleteOptions": {1: ("gracePeriodSeconds", "i?"), 2: ("preconditions", "Preconditions?"),
                      3: ("orphanDependents", "b?"), 4: ("propagationPolicy", "s?"), 5: ("dryRun", "[s")},
    "Preconditions": {1: ("uid", "s?"), 2: ("resourceVersion", "s?")},
    # k8s.io/api/batch/v1 (kubectl create job|cronjob)
    "Job": {1: ("metadata", "ObjectMeta"), 2: ("spec", "JobSpec"), 3: ("status", "JobStatus")},
    "JobSpec": {1: ("parallelism", "i?"), 2: ("completions", "i?"), 3: ("activeDeadlineSeconds", "i?"),
                4: ("selector", "LabelSelector?"), 5: ("manualSelector", "b?"), 6: ("template", "PodTemplateSpec"),
                7: ("backoffLimit", "i?"), 8: ("ttlSecondsAfterFinished", "i?"), 9: ("completionMode", "s?"),
                10: ("suspend", "b?"), 12: ("backoffLimitPerIndex", "i?"), 13: ("maxFailedIndexes", "i?"),
                14: ("podReplacementPolicy", "s?"), 15: ("managedBy", "s?")},
    "JobStatus": {},
    "JobTemplateSpec": {1: ("metadata", "ObjectMeta"), 2: ("spec", "JobSpec")},
    "CronJob": {1: ("metadata", "ObjectMeta"), 2: ("spec", "CronJobSpec"), 3: ("status", "CronJobStatus")},
    "CronJobSpec": {1: ("schedule", "s"), 2: ("startingDeadlineSeconds", "i?"), 3: ("concurrencyPolicy", "s"),
                    4: ("suspend", "b?"), 5: ("jobTemplate", "JobTemplateSpec"),
                    6: ("successfulJobsHistoryLimit", "i?"), 7: ("failedJobsHistoryLimit", "i?"),
                    8: ("timeZone", "s?")},
    "CronJobStatus": {},
    # k8s.io/api/rbac/v1 (kubectl create role|clusterrole|rolebinding|clusterrolebinding)
    "Role": {1: ("metadata", "ObjectMeta"), 2: ("rules", "[PolicyRule")},
    "ClusterRole": {1: ("metadata", "ObjectMeta"), 2: ("rules", "[PolicyRule"),
                    3: ("aggregationRule", "AggregationRule?")},
    "PolicyRule": {1: ("verbs", "[s"), 2: ("apiGroups", "[s"), 3: ("resources", "[s"), 4: ("resourceNames", "[s"),
                   5: ("nonResourceURLs", "[s")},
    "AggregationRule": {1: ("clusterRoleSelectors", "[LabelSelector")},
    "RoleBinding": {1: ("metadata", "ObjectMeta"), 2: ("subjects", "[Subject"), 3: ("roleRef", "RoleRef")},
    "ClusterRoleBinding": {1: ("metadata", "ObjectMeta"), 2: ("subjects", "[Subject"), 3: ("roleRef", "RoleRef")},
    "Subject": {1: ("kind", "s"), 2: ("apiGroup", "s"), 3: ("name", "s"), 4: ("namespace", "s")},
    "RoleRef": {1: ("apiGroup", "s"), 2: ("kind", "s"), 3: ("name", "s")},
    # k8s.io/api/authorization/v1 (kubectl auth can-i)
    "SelfSubjectAccessReview": {1: ("metadata", "ObjectMeta"), 2: ("spec", "SelfSubjectAccessReviewSpec"),
                                3: ("status", "SubjectAccessReviewStatus")},
    "SelfSubjectAccessReviewSpec": {1: ("resourceAttributes", "ResourceAttributes?"),
                                    2: ("nonResourceAttributes", "NonResourceAttributes?")},
    "SubjectAccessReview": {1: ("metadata", "ObjectMeta"), 2: ("spec", "SubjectAccessReviewSpec"),
                            3: ("status", "SubjectAccessReviewStatus")},
    "LocalSubjectAccessReview": {1: ("metadata", "ObjectMeta"), 2: ("spec", "SubjectAccessReviewSpec"),
                                 3: ("status", "SubjectAccessReviewStatus")},
    "SubjectAccessReviewSpec": {1: ("resourceAttributes", "ResourceAttributes?"),
                                2: ("nonResourceAttributes", "NonResourceAttributes?"), 3: ("user", "s"),
                                4: ("groups", "[s"), 6: ("uid", "s")},
    "ResourceAttributes": {1: ("namespace", "s"), 2: ("verb", "s"), 3: ("group", "s"), 4: ("version", "s"),
                           5: ("resource", "s"), 6: ("subresource", "s"), 7: ("name", "s")},
    "NonResourceAttributes": {1: ("path", "s"), 2: ("verb", "s")},
    "SubjectAccessReviewStatus": {1: ("allowed", "b"), 2: ("reason", "s"), 3: ("evaluationError", "s"),
                                  4: ("denied", "b")},
    "SelfSubjectRulesReview": {1: ("metadata", "ObjectMeta"), 2: ("spec", "SelfSubjectRulesReviewSpec"),
                               3: ("status", "SubjectRulesReviewStatus")},
    "SelfSubjectRulesReviewSpec": {1: ("namespace", "s")},
    "SubjectRulesReviewStatus": {},
    # k8s.io/api/authentication/v1 (kubectl auth whoami)
    "SelfSubjectReview": {1: ("metadata", "ObjectMeta"), 2: ("status", "SelfSubjectReviewStatus")},
    "SelfSubjectReviewStatus": {1: ("userInfo", "UserInfo")},
    "UserInfo": {1: ("username", "s"), 2: ("uid", "s"), 3: ("groups", "[s")},
    "TokenReview": {1: ("metadata", "ObjectMeta"), 2: ("spec", "TokenReviewSpec"), 3: ("status", "TokenReviewStatus")},
    "TokenReviewSpec": {1: ("token", "s"), 2: ("audiences", "[s")},
    "TokenReviewStatus": {1: ("authenticated", "b"), 2: ("user", "UserInfo"), 3: ("error", "s"),
                          4: ("audiences", "[s")},
    # kubectl create token: serviceaccounts/NAME/token
    "TokenRequest": {1: ("metadata", "ObjectMeta"), 2: ("spec", "TokenRequestSpec"), 3: ("status", "TokenRequestStatus")},
    "TokenRequestSpec": {1: ("audiences", "[s"), 3: ("boundObjectRef", "BoundObjectReference?"),
                         4: ("expirationSeconds", "i?")},
    "BoundObjectReference": {1: ("kind", "s"), 2: ("apiVersion", "s"), 3: ("name", "s"), 4: ("uid", "s")},
    "TokenRequestStatus": {1: ("token", "s"), 2: ("expirationTimestamp", "T")},
    # k8s.io/api/autoscaling/v1 (kubectl autoscale)
    "autoscaling/v1.HorizontalPodAutoscaler": {1: ("metadata", "ObjectMeta"),
                                               2: ("spec", "autoscaling/v1.HorizontalPodAutoscalerSpec"),
                                               3: ("status", "autoscaling/v1.HorizontalPodAutoscalerStatus")},
    "autoscaling/v1.HorizontalPodAutoscalerSpec": {1: ("scaleTargetRef", "CrossVersionObjectReference"),
                                                   2: ("minReplicas", "i?"), 3: ("maxReplicas", "i"),
                                                   4: ("targetCPUUtilizationPercentage", "i?")},
    "autoscaling/v1.HorizontalPodAutoscalerStatus": {},
    "CrossVersionObjectReference": {1: ("kind", "s"), 2: ("name", "s"), 3: ("apiVersion", "s")},
}

#: kind → top-level message, for the kinds decodable from protobuf
KINDS = {k for k in ("Namespace", "ConfigMap", "Secret", "ServiceAccount", "Service", "Pod",
                     "ReplicationController", "Deployment", "ReplicaSet", "Eviction", "Job", "CronJob",
                     "Role", "ClusterRole", "RoleBinding", "ClusterRoleBinding", "SelfSubjectAccessReview",
                     "SubjectAccessReview", "LocalSubjectAccessReview", "SelfSubjectRulesReview",
                     "SelfSubjectReview", "TokenReview", "TokenRequest", "HorizontalPodAutoscaler", "CertificateSigningRequest",
                     "Ingress", "ResourceQuota", "PriorityClass", "PodDisruptionBudget")}

#: (apiVersion, kind) → message, for a kind whose message differs per version
VERSIONED = {("autoscaling/v1", "HorizontalPodAutoscaler"): "autoscaling/v1.HorizontalPodAutoscaler"}


def _varint(b: bytes, i: int) -> tuple[int, int]:
    result = shift = 0
    while True:
        if i >= len(b):
            raise ProtobufError("truncated varint")
        c = b[i]
        i += 1
        result |= (c & 0x7F) << shift
        shift += 7
        if c < 0x80:
            return result, i
        if shift > 70:
            raise ProtobufError("varint too long")


def _fields(b: bytes):
    """Yield (field number, wire type, value) of one message (value: int or bytes)."""
    i = 0
    while i < len(b):
        key, i = _varint(b, i)
        num, wt = key >> 3, key & 7
        if num == 0:
            raise ProtobufError("field number 0")
        if wt == 0:
            v, i = _varint(b, i)
            yield num, wt, v
        elif wt == 2:
            n, i = _varint(b, i)
            if i + n > len(b):
                raise ProtobufError("truncated length-delimited field")
            yield num, wt, b[i:i + n]
            i += n
        elif wt == 1:
            yield num, wt, b[i:i + 8]
            i += 8
        elif wt == 5:
            yield num, wt, b[i:i + 4]
            i += 4
        else:
            raise ProtobufError(f"unsupported wire type {wt}")


def _signed(v: int) -> int:
    return v - (1 << 64) if v >= 1 << 63 else v


def _time(b: bytes) -> str | None:
    secs = nanos = 0
    for num, wt, v in _fields(b):
        if num == 1 and wt == 0:
            secs = _signed(v)
        elif num == 2 and wt == 0:
            nanos = v
    if secs == 0 and nanos == 0:
        return None
    return apitime.format_time(secs)


def _string_field(b: bytes, num_wanted: int) -> str:
    for num, wt, v in _fields(b):
        if num == num_wanted and wt == 2:
            return v.decode()
    return ""


def _int_or_string(b: bytes) -> int | str:
    typ, ival, sval = 0, 0, ""
    for num, wt, v in _fields(b):
        if num == 1 and wt == 0:
            typ = v
        elif num == 2 and wt == 0:
            ival = _signed(v)
        elif num == 3 and wt == 2:
            sval = v.decode()
    return sval if typ == 1 else ival


def _map_entry(b: bytes) -> tuple[str, bytes]:
    key, val = "", b""
    for num, wt, v in _fields(b):
        if num == 1 and wt == 2:
            key = v.decode()
        elif num == 2 and wt == 2:
            val = v
    return key, val


def _is_zero(wt: int, v: Any) -> bool:
    return v == 0 if wt == 0 else (not any(v) if wt in (1, 5) else len(v) == 0)


def _empty(v: Any) -> bool:
    return v in ("", 0, False, None) or (isinstance(v, (dict, list)) and not v)


def _scalar(typ: str, wt: int, v: Any, where: str) -> Any:
    if typ == "s":
        if wt != 2:
            raise ProtobufError(f"{where}: expected a string")
        try:
            return v.decode()
        except UnicodeDecodeError:
            raise ProtobufError(f"{where}: invalid UTF-8") from None
    if typ == "i":
        if wt != 0:
            raise ProtobufError(f"{where}: expected an integer")
        return _signed(v)
    if typ == "b":
        if wt != 0:
            raise ProtobufError(f"{where}: expected a bool")
        return bool(v)
    if typ == "y":
        return base64.b64encode(v).decode()
    if wt != 2:
        raise ProtobufError(f"{where}: expected a message")
    if typ == "T":
        return _time(v)
    if typ == "Q":
        return _string_field(v, 1)
    if typ == "IOS":
        return _int_or_string(v)
    if typ == "FieldsV1":
        # metav1.FieldsV1 {1: raw}: the raw bytes are the JSON field set
        raw = b"".join(val for num, _, val in _fields(v) if num == 1)
        try:
            return json.loads(raw) if raw else None
        except ValueError:
            raise ProtobufError(f"{where}: invalid FieldsV1 JSON") from None
    return decode_message(typ, v, where)


def decode_message(name: str, b: bytes, where: str = "") -> dict:
    """The JSON form of message ``name`` (a key of :data:`SCHEMAS`) encoded in ``b``.

    Raises :class:`ProtobufError` for malformed input or a non-zero field the table lacks.
    """
    schema = SCHEMAS[name]
    where = where or name
    out: dict[str, Any] = {}
    for num, wt, v in _fields(b):
        spec = schema.get(num)
        if spec is None:
            if _is_zero(wt, v):
                continue
            raise ProtobufError(f"{where}: protobuf field number {num} of {name} is not supported by this "
                                "apiserver; send the object as application/json")
        jname, typ = spec
        ptr = typ.endswith("?")
        typ = typ.rstrip("?")
        path = f"{where}.{jname}"
        if typ.startswith("["):
            out.setdefault(jname, []).append(_scalar(typ[1:], wt, v, path))
            continue
        if typ in ("m", "my", "mq", "mx"):
            k, raw = _map_entry(v)
            if typ == "mx":
                val: Any = [item.decode() for num_, _, item in _fields(raw) if num_ == 1]
            else:
                val = raw.decode() if typ == "m" else (
                    base64.b64encode(raw).decode() if typ == "my" else _string_field(raw, 1))
            out.setdefault(jname, {})[k] = val
            continue
        val = _scalar(typ, wt, v, path)
        if jname == "" and isinstance(val, dict):
            out.update(val)  # an embedded struct, inlined in JSON
            continue
        if not ptr and _empty(val):
            out.pop(jname, None)
            continue
        if val is None:
            continue
        out[jname] = val
    return out


def decode(raw: bytes, expected_kind: str | None = None) -> dict:
    """A ``k8s\\x00``-framed protobuf body → the object as JSON-shaped dict with apiVersion/kind.

    Raises :class:`ProtobufError` (answered 400 by the caller) when the framing is wrong, or
    the kind is one we cannot decode (answered 415).
    """
    if not raw.startswith(MAGIC):
        raise ProtobufError("the body of the request was in an unknown format - protobuf data must start "
                            "with the 'k8s\\x00' prefix")
    api_version = kind = ""
    payload = b""
    for num, wt, v in _fields(raw[len(MAGIC):]):
        if num == 1 and wt == 2:
            for n2, w2, v2 in _fields(v):
                if n2 == 1 and w2 == 2:
                    api_version = v2.decode()
                elif n2 == 2 and w2 == 2:
                    kind = v2.decode()
        elif num == 2 and wt == 2:
            payload = v
        elif num == 3 and wt == 2 and v:
            raise ProtobufError(f"unsupported protobuf content encoding {v.decode(errors='replace')!r}")
    if not kind:
        raise ProtobufError("Object 'Kind' is missing in the protobuf envelope")
    message = VERSIONED.get((api_version, kind), kind)
    if kind not in KINDS or message not in SCHEMAS:
        raise UnsupportedKind(kind)
    obj = decode_message(message, payload)
    return {"apiVersion": api_version, "kind": kind, **obj}


class UnsupportedKind(ProtobufError):
    """A well-framed protobuf object of a kind this decoder has no schema for."""

    def __init__(self, kind: str) -> None:
        super().__init__(f"the body of the request was in an unknown format - protobuf decoding of kind "
                         f"{kind!r} is not supported by this apiserver; accepted media types include: "
                         "application/json, application/yaml, and application/vnd.kubernetes.protobuf for "
                         + ", ".join(sorted(KINDS)))
