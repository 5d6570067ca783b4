"""TaintToleration (Filter, Score): a node's NoSchedule/NoExecute taints must all be
tolerated; the score counts untolerated PreferNoSchedule taints (fewer is better,
reverse-normalised). Source: pkg/scheduler/framework/plugins/tainttoleration/taint_toleration.go."""

from __future__ import annotations

from operator import attrgetter

from components.scheduler.framework import (
    MAX_NODE_SCORE,
    UNSCHEDULABLE_AND_UNRESOLVABLE,
    Status,
    default_normalize_score,
)
from components.scheduler.podinfo import find_untolerated, tolerates

NAME = "TaintToleration"
_KEY = "TaintToleration.pre"
_TAINTS = attrgetter("taints")


def untolerated_taint_reason(taint: dict) -> str:
    """``node(s) had untolerated taint {key: value}``."""
    return f"node(s) had untolerated taint {{{taint.get('key', '')}: {taint.get('value', '') or ''}}}"


class TaintToleration:
    """The TaintToleration plugin: Filter on NoSchedule/NoExecute taints, Score on
    untolerated PreferNoSchedule ones (see the module docstring)."""

    name = NAME

    def __init__(self, args: dict | None = None, handle=None) -> None:
        pass

    def events_to_register(self) -> list[tuple[str, str]]:
        return [("Node", "Add"), ("Node", "UpdateNodeTaint"), ("Pod", "UpdatePodToleration")]

    def filter(self, state, pod, node) -> Status | None:
        if not node.taints:
            return None
        t = find_untolerated(node.taints, pod.tolerations, ("NoSchedule", "NoExecute"))
        if t is not None:
            return Status(UNSCHEDULABLE_AND_UNRESOLVABLE, untolerated_taint_reason(t))
        return None

    def filter_nodes(self, state, pod, nodes) -> list[Status | None] | None:
        """:meth:`filter` for many nodes (None when no node has taints)."""
        if not any(map(_TAINTS, nodes)):
            return None
        f = self.filter
        return [f(state, pod, n) if n.taints else None for n in nodes]

    def pre_score(self, state, pod, nodes, snapshot) -> Status | None:
        state[_KEY] = [t for t in pod.tolerations
                       if not t.get("effect") or t.get("effect") == "PreferNoSchedule"]
        return None

    def score_nodes(self, state, pod, nodes) -> list[int]:
        score = self.score
        return [score(state, pod, n) if n.taints else 0 for n in nodes]

    def score(self, state, pod, node) -> int:
        tols = state[_KEY]
        return sum(1 for t in node.taints if t.get("effect") == "PreferNoSchedule"
                   and not any(tolerates(tol, t) for tol in tols))

    def normalize_score(self, state, pod, scores: list[int]) -> None:
        """helper.DefaultNormalizeScore reversed; no node with an untolerated
        PreferNoSchedule taint (the common case): every node MaxNodeScore, in one step."""
        if not any(scores):
            scores[:] = [MAX_NODE_SCORE] * len(scores)
            return
        default_normalize_score(scores, reverse=True)
