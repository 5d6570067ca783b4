"""The ClusterRole aggregation controller on the fake API."""

from __future__ import annotations

from components.controller_manager.clusterroleaggregation import (
    CLUSTERROLES,
    ClusterRoleAggregationController,
    aggregated_rules,
)
from components.controller_manager.testing import fake_context, settle

AGG = {"clusterRoleSelectors": [{"matchLabels": {"rbac.authorization.k8s.io/aggregate-to-view": "true"}}]}
LABEL = {"rbac.authorization.k8s.io/aggregate-to-view": "true"}


def role(name, rules=(), labels=None, agg=None):
    obj = {"metadata": {"name": name, **({"labels": labels} if labels else {})}, "rules": list(rules)}
    if agg:
        obj["aggregationRule"] = agg
    return obj


R1 = {"verbs": ["get"], "apiGroups": [""], "resources": ["pods"]}
R2 = {"verbs": ["list"], "apiGroups": ["example.com"], "resources": ["widgets"]}


def test_aggregated_rules_in_name_order_without_repeats():
    roles = [role("b", [R2, R1], LABEL), role("a", [R1], LABEL), role("other", [R2]),
             role("view", [], LABEL, AGG)]
    assert aggregated_rules(roles[-1], roles) == [R1, R2]


async def test_labelled_role_rules_join_and_leave_the_aggregate():
    client, ctx, _ = fake_context()
    c = ClusterRoleAggregationController(ctx)
    client.seed(CLUSTERROLES, role("view", [], None, AGG))
    client.seed(CLUSTERROLES, role("base", [R1], LABEL))
    await settle(c)
    assert next(r for r in client.all(CLUSTERROLES) if r["metadata"]["name"] == "view")["rules"] == [R1]
    client.seed(CLUSTERROLES, role("widgets-view", [R2], LABEL))
    await settle(c)
    assert next(r for r in client.all(CLUSTERROLES) if r["metadata"]["name"] == "view")["rules"] == [R1, R2]
    await client.delete(CLUSTERROLES, "base")
    await settle(c)
    assert next(r for r in client.all(CLUSTERROLES) if r["metadata"]["name"] == "view")["rules"] == [R2]
    updates = client.actions("update", "clusterroles")
    assert len(updates) == 3
