"""Controller expectations: how many creations and which deletions a controller
is still waiting to see on its watch before it trusts its cache again.

A replica controller that has just asked for 3 pods must not create 3 more
because a burst of events re-queued it before the informer showed the new pods.
Facts from ``pkg/controller/controller_utils.go`` (ControllerExpectations,
UIDTrackingControllerExpectations, ExpectationsTimeout = 5 minutes): expectations
are satisfied when both counts have dropped to zero or below, when they have
expired, or when none were ever recorded for the key.
"""

from __future__ import annotations

import time
from dataclasses import dataclass, field

#: after this many seconds unfulfilled expectations are ignored (controller_utils.go)
EXPECTATIONS_TIMEOUT = 300.0


@dataclass
class _Expectation:
    add: int = 0
    delete: int = 0
    timestamp: float = field(default_factory=time.monotonic)
    deleting: set[str] = field(default_factory=set)


class Expectations:
    """Per-controller-key expectations (key = ``namespace/name`` of the owner).

    Deletions are tracked by pod key (UIDTrackingControllerExpectations) so that
    the same deletion seen twice is counted once.
    """

    def __init__(self, timeout: float = EXPECTATIONS_TIMEOUT, clock=time.monotonic) -> None:
        self._e: dict[str, _Expectation] = {}
        self._timeout = timeout
        self._clock = clock

    def satisfied(self, key: str) -> bool:
        """True when the controller may sync ``key`` from its cache (SatisfiedExpectations)."""
        e = self._e.get(key)
        if e is None:
            return True
        if e.add <= 0 and e.delete <= 0:
            return True
        return self._clock() - e.timestamp > self._timeout

    def expect_creations(self, key: str, count: int) -> None:
        """Record that ``count`` creations were requested (resets older expectations)."""
        self._e[key] = _Expectation(add=count, timestamp=self._clock())

    def expect_deletions(self, key: str, pod_keys: list[str]) -> None:
        """Record that the pods ``pod_keys`` are being deleted."""
        self._e[key] = _Expectation(delete=len(pod_keys), timestamp=self._clock(),
                                    deleting=set(pod_keys))

    def set_expectations(self, key: str, adds: int, pod_keys: list[str]) -> None:
        """Record ``adds`` creations and the deletions of ``pod_keys`` at once (SetExpectations,
        as the DaemonSet controller's syncNodes does before it writes)."""
        self._e[key] = _Expectation(add=adds, delete=len(pod_keys), timestamp=self._clock(),
                                    deleting=set(pod_keys))

    def lower_creations(self, key: str, count: int) -> None:
        """``count`` expected creations will not happen (LowerExpectations)."""
        e = self._e.get(key)
        if e is not None:
            e.add -= count

    def creation_observed(self, key: str) -> None:
        """One expected creation was seen (or will never happen)."""
        e = self._e.get(key)
        if e is not None:
            e.add -= 1

    def deletion_observed(self, key: str, pod_key: str) -> None:
        """The deletion of ``pod_key`` was seen (counted once per pod)."""
        e = self._e.get(key)
        if e is not None and pod_key in e.deleting:
            e.deleting.discard(pod_key)
            e.delete -= 1

    def pending(self, key: str) -> tuple[int, int]:
        """``(creations, deletions)`` still expected for ``key``."""
        e = self._e.get(key)
        return (e.add, e.delete) if e else (0, 0)

    def delete(self, key: str) -> None:
        """Forget ``key`` (its owner is gone)."""
        self._e.pop(key, None)
