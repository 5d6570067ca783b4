"""The bootstrap API Priority and Fairness configuration as stored objects.

kube-apiserver's APF configuration controller (``pkg/registry/flowcontrol/ensurer`` and
``staging/src/k8s.io/apiserver/pkg/apis/flowcontrol/bootstrap/default.go``) writes the
mandatory and suggested FlowSchemas and PriorityLevelConfigurations at start, annotated
``apf.kubernetes.io/autoupdate-spec: "true"``, and reports each FlowSchema's ``Dangling``
condition. This module builds those objects, read only from the configuration the
apiserver classifies requests with (:data:`components.apiserver.flowcontrol.FLOW_SCHEMAS`
and :data:`~components.apiserver.flowcontrol.PRIORITY_LEVELS`: stored objects never change
how requests are classified), plus the bootstrap ``lendablePercent`` of each level, which
the classifier does not model (no borrowing).

:func:`flow_schema_objects` / :func:`priority_level_objects` return ``flowcontrol.apiserver.k8s.io/v1``
JSON objects without server-set metadata; each object's ``metadata.uid`` is the uid the
apiserver sends in its ``X-Kubernetes-PF-*`` headers.
"""

from __future__ import annotations

from typing import Any

from components.apiserver.flowcontrol import FLOW_SCHEMAS, PRIORITY_LEVELS, FlowSchema, PriorityLevel

API_VERSION = "flowcontrol.apiserver.k8s.io/v1"
AUTOUPDATE = {"apf.kubernetes.io/autoupdate-spec": "true"}
#: the bootstrap levels' lendablePercent (bootstrap/default.go)
LENDABLE_PERCENT = {"exempt": 0, "system": 33, "node-high": 25, "leader-election": 0, "workload-high": 50,
                    "workload-low": 90, "global-default": 50, "catch-all": 0}


def _subjects(fs: FlowSchema) -> list[dict[str, Any]]:
    out: list[dict[str, Any]] = [{"kind": "User", "user": {"name": u}} for u in fs.users]
    out += [{"kind": "Group", "group": {"name": g}} for g in fs.groups]
    out += [{"kind": "ServiceAccount", "serviceAccount": {"namespace": ns, "name": n}}
            for ns, n in fs.service_accounts]
    return out


def flow_schema_object(fs: FlowSchema, now: str) -> dict[str, Any]:
    """The FlowSchema object of ``fs`` with its ``Dangling: False`` status at ``now``."""
    rule: dict[str, Any] = {"subjects": _subjects(fs)}
    if fs.resource_rules:
        rrules = []
        for r in fs.resource_rules:
            rr: dict[str, Any] = {"verbs": list(r.verbs), "apiGroups": list(r.groups), "resources": list(r.resources)}
            if r.cluster_scope:
                rr["clusterScope"] = True
            if r.namespaces:
                rr["namespaces"] = list(r.namespaces)
            rrules.append(rr)
        rule["resourceRules"] = rrules
    if fs.non_resource_rules:
        rule["nonResourceRules"] = [{"verbs": list(r.verbs), "nonResourceURLs": list(r.urls)}
                                    for r in fs.non_resource_rules]
    spec: dict[str, Any] = {"priorityLevelConfiguration": {"name": fs.level},
                            "matchingPrecedence": fs.precedence, "rules": [rule]}
    if fs.distinguisher:
        spec["distinguisherMethod"] = {"type": fs.distinguisher}
    return {"apiVersion": API_VERSION, "kind": "FlowSchema",
            "metadata": {"name": fs.name, "uid": fs.uid, "annotations": dict(AUTOUPDATE)},
            "spec": spec,
            "status": {"conditions": [{
                "type": "Dangling", "status": "False", "lastTransitionTime": now, "reason": "Found",
                "message": f'This FlowSchema references the PriorityLevelConfiguration object named "{fs.level}" '
                           "and it exists"}]}}


def priority_level_object(pl: PriorityLevel) -> dict[str, Any]:
    """The PriorityLevelConfiguration object of ``pl``."""
    lendable = LENDABLE_PERCENT.get(pl.name, 0)
    if pl.exempt:
        spec: dict[str, Any] = {"type": "Exempt", "exempt": {"nominalConcurrencyShares": pl.shares,
                                                             "lendablePercent": lendable}}
    else:
        response: dict[str, Any] = {"type": "Reject"}
        if pl.queues:
            response = {"type": "Queue", "queuing": {"queues": pl.queues, "handSize": pl.hand_size,
                                                     "queueLengthLimit": pl.queue_length_limit}}
        spec = {"type": "Limited", "limited": {"nominalConcurrencyShares": pl.shares, "lendablePercent": lendable,
                                               "limitResponse": response}}
    return {"apiVersion": API_VERSION, "kind": "PriorityLevelConfiguration",
            "metadata": {"name": pl.name, "uid": pl.uid, "annotations": dict(AUTOUPDATE)},
            "spec": spec, "status": {}}


def priority_level_objects() -> list[dict[str, Any]]:
    """Every bootstrap PriorityLevelConfiguration."""
    return [priority_level_object(pl) for pl in PRIORITY_LEVELS]


def flow_schema_objects(now: str) -> list[dict[str, Any]]:
    """Every bootstrap FlowSchema (status at ``now``)."""
    return [flow_schema_object(fs, now) for fs in FLOW_SCHEMAS]
