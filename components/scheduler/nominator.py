"""The nominator: which pods are nominated to which node (``status.nominatedNodeName``,
set after preemption), so that later cycles of pods of lower or equal priority leave
room for them (filtering with nominated pods, see
:meth:`components.scheduler.framework.Framework.run_filter_with_nominated`).

Source: ``pkg/scheduler/backend/queue/nominator.go`` (AddNominatedPod,
DeleteNominatedPodIfExists, UpdateNominatedPod, NominatedPodsForNode).
"""

from __future__ import annotations

from components.scheduler.podinfo import PodInfo, is_assigned, is_deleting


class Nominator:
    """``nominated``: node name → pod key → PodInfo of the pods nominated there (the
    dict plugins read through the handle; empty when no pod is nominated)."""

    def __init__(self) -> None:
        self.nominated: dict[str, dict[str, PodInfo]] = {}
        self._node_of: dict[str, str] = {}

    def add(self, pi: PodInfo, node: str) -> None:
        """Reserve ``node`` for ``pi`` in later cycles of pods of lower priority
        (replaces an earlier nomination of ``pi``; ``node`` "" only removes it)."""
        self.delete(pi.key)
        if node:
            self.nominated.setdefault(node, {})[pi.key] = pi
            self._node_of[pi.key] = node

    def delete(self, key: str) -> None:
        """Forget the nomination of the pod ``key`` ("namespace/name"), if any."""
        node = self._node_of.pop(key, None)
        if node is not None:
            d = self.nominated.get(node) or {}
            d.pop(key, None)
            if not d:
                self.nominated.pop(node, None)

    def update_from_pod(self, pod: dict, responsible: bool) -> None:
        """Follow a pod the informer delivered: nominated while it is unassigned, not
        being deleted, carries ``status.nominatedNodeName`` and ``responsible`` (one of
        our profiles schedules it); otherwise its nomination is dropped. A pod whose
        PodInfo cannot be built (ValueError) keeps its old nomination."""
        nom = (pod.get("status") or {}).get("nominatedNodeName") or ""
        key = PodInfo.key_of(pod)
        if is_assigned(pod) or is_deleting(pod) or not nom or not responsible:
            self.delete(key)
        elif self._node_of.get(key) != nom:
            try:
                self.add(PodInfo(pod), nom)
            except ValueError:
                pass
