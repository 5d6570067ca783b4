"""The ClusterRole aggregation controller (``pkg/controller/clusterroleaggregation/
clusterroleaggregation_controller.go``, v1.32).

A ClusterRole with an ``aggregationRule`` gets, as its ``rules``, the rules of every other
ClusterRole matched by one of its ``clusterRoleSelectors`` (label selectors), ClusterRoles
taken in name order, a rule repeated only once (``ruleExists``). Any ClusterRole change
re-queues every aggregated ClusterRole (``enqueue``: one label change can move a role in or
out of several aggregations). The rules are written with an update carrying the read
``resourceVersion`` (Kubernetes applies them with server-side apply, field manager
``clusterrole-aggregation-controller``, and falls back to an update); a conflict is retried.
Queue keys: ClusterRole names.
"""

from __future__ import annotations

import copy
import logging
from typing import Any

from controlplane.api.resources import get
from controlplane.client.rest import ApiError
from controlplane.labels import selector_from_dict
from controlplane.log import event

from .controller import Controller, ControllerContext
from .controller_utils import meta

log = logging.getLogger("controller-manager")

CLUSTERROLES = get("clusterroles", "rbac.authorization.k8s.io")


def aggregated_rules(role: dict[str, Any], all_roles: list[dict[str, Any]]) -> list[dict[str, Any]]:
    """The rules ``role``'s aggregationRule gathers from ``all_roles`` (``syncClusterRole``)."""
    name = meta(role).get("name")
    out: list[dict[str, Any]] = []
    for sel in (role.get("aggregationRule") or {}).get("clusterRoleSelectors") or []:
        try:
            selector = selector_from_dict(sel)
        except ValueError:
            continue
        matched = sorted((r for r in all_roles if selector.matches(meta(r).get("labels") or {})),
                         key=lambda r: meta(r).get("name") or "")
        for r in matched:
            if meta(r).get("name") == name:
                continue
            for rule in r.get("rules") or []:
                if rule not in out:
                    out.append(rule)
    return out


class ClusterRoleAggregationController(Controller):
    """See the module docstring."""

    name = "clusterrole-aggregation"
    workers = 5

    def __init__(self, ctx: ControllerContext) -> None:
        super().__init__(ctx)
        self.roles = ctx.informers.informer(CLUSTERROLES)
        self.roles.add_handlers(lambda _o: self._enqueue_all(), lambda _o, _n: self._enqueue_all(),
                                lambda _o: self._enqueue_all())

    def _enqueue_all(self) -> None:
        for r in self.roles.store.values():
            if r.get("aggregationRule") is not None:
                self.enqueue(meta(r)["name"])

    async def sync(self, key: str) -> None:
        role = self.roles.store.get(key)
        if role is None or role.get("aggregationRule") is None:
            return
        rules = aggregated_rules(role, list(self.roles.store.values()))
        if rules == (role.get("rules") or []):
            return
        new = copy.deepcopy(role)
        new["rules"] = rules
        event(log, "clusterrole.aggregated", role=key, rules=len(rules))
        try:
            await self.client.update(CLUSTERROLES, new)
        except ApiError as e:
            if e.code == 404:
                return
            raise
