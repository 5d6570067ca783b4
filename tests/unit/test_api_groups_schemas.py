"""Every kind of the new API groups has a complete, nested OpenAPI v3 schema: every reference
resolves, and the paths ``kubectl explain`` walks exist, with descriptions."""

from __future__ import annotations

import pytest

from components.apiserver import discovery
from controlplane.api import resources as R
from controlplane.api import schemas
from controlplane.api.groups import apps, authentication, authorization, autoscaling, batch, rbac

NEW = [r for g in (apps, authentication, authorization, autoscaling, batch, rbac) for r in g.ENTRIES]
IDS = [f"{r.api_version}/{r.plural}" for r in NEW]


def _refs(node, out):
    if isinstance(node, dict):
        if "$ref" in node:
            out.append(node["$ref"])
        for v in node.values():
            _refs(v, out)
    elif isinstance(node, list):
        for v in node:
            _refs(v, out)


@pytest.mark.parametrize("r", NEW, ids=IDS)
def test_schema_resolves(r):
    assert r.schema is not None and r.schema.description
    doc = discovery.openapi_doc(r.api_version)
    comps = doc["components"]["schemas"]
    refs: list[str] = []
    _refs(comps, refs)
    assert refs and all(ref.removeprefix("#/components/schemas/") in comps for ref in refs)
    kind_schema = comps[f"io.k8s.controlplane.{r.group}.{r.version}.{r.kind}"]
    assert kind_schema["x-kubernetes-group-version-kind"] == [{"group": r.group, "version": r.version,
                                                               "kind": r.kind}]
    for f, (_t, desc) in r.schema.fields.items():
        assert desc and f in kind_schema["properties"]
    for name, (desc, fields) in r.schema.types.items():
        assert desc and name in schemas.TYPES
        assert all(d for _t, d in fields.values()), name


def explain(api_version: str, kind: str, path: str) -> dict:
    """The schema of ``path`` (dotted, as ``kubectl explain kind.a.b``) in the group-version's
    OpenAPI document, following ``allOf`` references and array items as kubectl does."""
    doc = discovery.openapi_doc(api_version)
    comps = doc["components"]["schemas"]
    group, _, version = api_version.rpartition("/")
    node = comps[f"io.k8s.controlplane.{group}.{version}.{kind}"]
    for part in path.split(".") if path else []:
        while "properties" not in node:
            if "allOf" in node:
                node = comps[node["allOf"][0]["$ref"].removeprefix("#/components/schemas/")]
            elif "items" in node:
                node = node["items"]
            else:
                raise KeyError(f"{kind}.{path}: {part} does not exist")
        node = node["properties"][part]
    return node


@pytest.mark.parametrize("api_version, kind, path", [
    ("batch/v1", "Job", "spec.template.spec"),
    ("batch/v1", "Job", "spec.template.spec.containers.image"),
    ("batch/v1", "Job", "spec.podReplacementPolicy"),
    ("batch/v1", "Job", "status.conditions.type"),
    ("batch/v1", "Job", "spec.podFailurePolicy.rules.onExitCodes.values"),
    ("batch/v1", "Job", "spec.successPolicy.rules.succeededCount"),
    ("batch/v1", "Job", "status.uncountedTerminatedPods.failed"),
    ("batch/v1", "CronJob", "spec.jobTemplate"),
    ("batch/v1", "CronJob", "spec.jobTemplate.spec.template.spec.restartPolicy"),
    ("batch/v1", "CronJob", "spec.timeZone"),
    ("rbac.authorization.k8s.io/v1", "ClusterRole", "aggregationRule.clusterRoleSelectors.matchLabels"),
    ("rbac.authorization.k8s.io/v1", "Role", "rules.verbs"),
    ("rbac.authorization.k8s.io/v1", "RoleBinding", "roleRef.apiGroup"),
    ("rbac.authorization.k8s.io/v1", "ClusterRoleBinding", "subjects.namespace"),
    ("autoscaling/v2", "HorizontalPodAutoscaler", "spec.metrics.resource.target.averageUtilization"),
    ("autoscaling/v2", "HorizontalPodAutoscaler", "spec.behavior.scaleDown.policies.periodSeconds"),
    ("autoscaling/v2", "HorizontalPodAutoscaler", "status.currentMetrics.resource.current.averageUtilization"),
    ("autoscaling/v2", "HorizontalPodAutoscaler", "status.conditions.lastTransitionTime"),
    ("autoscaling/v1", "HorizontalPodAutoscaler", "spec.targetCPUUtilizationPercentage"),
    ("autoscaling/v1", "HorizontalPodAutoscaler", "status.currentCPUUtilizationPercentage"),
    ("apps/v1", "ControllerRevision", "revision"),
    ("authorization.k8s.io/v1", "SelfSubjectAccessReview", "spec.resourceAttributes.verb"),
    ("authorization.k8s.io/v1", "SubjectAccessReview", "status.allowed"),
    ("authorization.k8s.io/v1", "SubjectAccessReview", "spec.resourceAttributes.fieldSelector.requirements.key"),
    ("authorization.k8s.io/v1", "SelfSubjectRulesReview", "status.resourceRules.verbs"),
    ("authentication.k8s.io/v1", "SelfSubjectReview", "status.userInfo.groups"),
    ("authentication.k8s.io/v1", "TokenReview", "spec.token"),
], ids=lambda v: v if isinstance(v, str) else None)
def test_explain_paths_exist(api_version, kind, path):
    node = explain(api_version, kind, path)
    assert node.get("description")


def test_v1_and_v2_hpa_schemas_differ():
    with pytest.raises(KeyError):
        explain("autoscaling/v1", "HorizontalPodAutoscaler", "spec.metrics")
    with pytest.raises(KeyError):
        explain("autoscaling/v2", "HorizontalPodAutoscaler", "spec.targetCPUUtilizationPercentage")


def _kind_component(comps: dict, group: str, version: str, kind: str) -> dict:
    for s in comps.values():
        if {"group": group, "version": version, "kind": kind} in (s.get("x-kubernetes-group-version-kind") or []):
            return s
    raise KeyError(kind)


def _undescribed(comps: dict, node: object, path: str, seen: set[str], out: list[str]) -> None:
    """Every property under ``node`` (following references, array items and map values)
    that has no description."""
    if not isinstance(node, dict):
        return
    ref = node.get("$ref") or (node.get("allOf") or [{}])[0].get("$ref")
    if ref:
        name = ref.removeprefix("#/components/schemas/")
        if name not in seen:
            seen.add(name)
            _undescribed(comps, comps[name], path, seen, out)
    for k, v in (node.get("properties") or {}).items():
        if not (isinstance(v, dict) and v.get("description")):
            out.append(f"{path}.{k}")
        _undescribed(comps, v, f"{path}.{k}", seen, out)
    for k in ("items", "additionalProperties"):
        _undescribed(comps, node.get(k), path, seen, out)


ALL = list(R.REGISTRY)


@pytest.mark.parametrize("r", ALL, ids=[f"{r.api_version}/{r.plural}" for r in ALL])
def test_every_kind_describes_every_nested_field(r):
    """What ``kubectl explain --recursive`` shows for every built-in kind: each field at any
    depth has a description (issue 11: the wave-2 groups included)."""
    comps = discovery.openapi_doc(r.api_version)["components"]["schemas"]
    out: list[str] = []
    _undescribed(comps, _kind_component(comps, r.group, r.version, r.kind), r.kind, set(), out)
    assert out == []


@pytest.mark.parametrize("api_version, kind, path", [
    ("networking.k8s.io/v1", "Ingress", "spec.rules.http.paths.backend.service.port.number"),
    ("networking.k8s.io/v1", "NetworkPolicy", "spec.ingress.from.ipBlock.except"),
    ("storage.k8s.io/v1", "StorageClass", "allowVolumeExpansion"),
    ("storage.k8s.io/v1", "VolumeAttachment", "spec.source.persistentVolumeName"),
    ("v1", "PersistentVolumeClaim", "spec.resources.requests"),
    ("v1", "PersistentVolumeClaim", "spec.storageClassName"),
    ("v1", "ResourceQuota", "spec.scopeSelector.matchExpressions.scopeName"),
    ("v1", "LimitRange", "spec.limits.defaultRequest"),
    ("policy/v1", "PodDisruptionBudget", "spec.selector.matchLabels"),
    ("scheduling.k8s.io/v1", "PriorityClass", "preemptionPolicy"),
    ("node.k8s.io/v1", "RuntimeClass", "overhead.podFixed"),
    ("certificates.k8s.io/v1", "CertificateSigningRequest", "spec.usages"),
    ("discovery.k8s.io/v1", "EndpointSlice", "endpoints.conditions.ready"),
    ("admissionregistration.k8s.io/v1", "ValidatingWebhookConfiguration", "webhooks.clientConfig.service.name"),
], ids=lambda v: v if isinstance(v, str) else None)
def test_explain_paths_of_the_other_groups(api_version, kind, path):
    group, _, version = api_version.rpartition("/")
    comps = discovery.openapi_doc(api_version)["components"]["schemas"]
    node = _kind_component(comps, group, version, kind)
    for part in path.split("."):
        while "properties" not in node:
            ref = node.get("$ref") or (node.get("allOf") or [{}])[0].get("$ref")
            if ref:
                node = comps[ref.removeprefix("#/components/schemas/")]
            elif "items" in node:
                node = node["items"]
            else:
                raise KeyError(f"{kind}.{path}: {part} does not exist")
        node = node["properties"][part]
    assert node.get("description")
