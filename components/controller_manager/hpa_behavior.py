"""How the HorizontalPodAutoscaler turns a metrics proposal into the replicas it sets: the
stabilization windows and the scaling rate limits (``pkg/controller/podautoscaler/horizontal.go``
normalizeDesiredReplicas, normalizeDesiredReplicasWithBehaviors, stabilizeRecommendation(WithBehaviors),
convertDesiredReplicasWithRules, convertDesiredReplicasWithBehaviorRate,
calculateScaleUpLimitWithScalingRules, calculateScaleDownLimitWithBehaviors, storeScaleEvent;
Kubernetes v1.32).

Per HPA the controller keeps, in memory, its recent recommendations and scale events
(:class:`History`); times are epoch seconds. :func:`normalize` answers
``(replicas, (AbleToScale reason, message), (ScalingLimited status, reason, message))``:

* without ``spec.behavior``: the highest recommendation of the last
  ``--horizontal-pod-autoscaler-downscale-stabilization`` (5 min) is kept, then the result is
  bounded by min/max replicas and a scale-up to at most ``max(2 × current, 4)``;
* with a behavior: the recommendation is held between the lowest recommendation of the
  scale-up window and the highest of the scale-down window (``stabilizationWindowSeconds``;
  a scale-down rule without one gets the controller's window), then bounded by min/max and by
  the rules' policies (``Pods`` / ``Percent`` per ``periodSeconds``, counted from the replicas
  at the start of the period, with ``selectPolicy`` Max / Min / Disabled).
"""

from __future__ import annotations

import math
from dataclasses import dataclass, field
from typing import Any

JSON = dict[str, Any]

#: --horizontal-pod-autoscaler-downscale-stabilization (seconds)
DEFAULT_DOWNSCALE_STABILIZATION = 300.0
#: scaleUpLimitFactor / scaleUpLimitMinimum: the scale-up bound without a behavior
SCALE_UP_LIMIT_FACTOR = 2.0
SCALE_UP_LIMIT_MINIMUM = 4.0

READY = ("ReadyForNewScale", "recommended size matches current size")
DOWN_STABILIZED = ("ScaleDownStabilized",
                   "recent recommendations were higher than current one, applying the highest recent recommendation")
UP_STABILIZED = ("ScaleUpStabilized",
                 "recent recommendations were lower than current one, applying the lowest recent recommendation")
WITHIN_RANGE = ("DesiredWithinRange", "the desired count is within the acceptable range")
TOO_FEW = ("TooFewReplicas", "the desired replica count is less than the minimum replica count")
TOO_MANY = ("TooManyReplicas", "the desired replica count is more than the maximum replica count")
UP_LIMIT = ("ScaleUpLimit", "the desired replica count is increasing faster than the maximum scale rate")
DOWN_LIMIT = ("ScaleDownLimit", "the desired replica count is decreasing faster than the maximum scale rate")


@dataclass
class ScaleEvent:
    """A rescale by ``change`` replicas at ``timestamp``; ``outdated`` once older than the
    longest policy period (its slot may then be reused)."""

    change: int
    timestamp: float
    outdated: bool = False


@dataclass
class History:
    """One HPA's recommendations ``[(replicas, time)]`` and scale events (horizontal.go's
    ``recommendations``, ``scaleUpEvents``, ``scaleDownEvents`` of one key)."""

    recommendations: list[tuple[int, float]] = field(default_factory=list)
    scale_up: list[ScaleEvent] = field(default_factory=list)
    scale_down: list[ScaleEvent] = field(default_factory=list)


def _record(recs: list[tuple[int, float]], index: int | None, value: int, now: float) -> None:
    if index is None:
        recs.append((value, now))
    else:
        recs[index] = (value, now)


def stabilize(history: History, desired: int, window: float, now: float) -> int:
    """stabilizeRecommendation: the highest recommendation within ``window`` seconds (and
    ``desired``); records ``desired``, reusing the slot of one older than the window."""
    best, old = desired, None
    for i, (rec, t) in enumerate(history.recommendations):
        if t < now - window:
            old = i
        elif rec > best:
            best = rec
    _record(history.recommendations, old, desired, now)
    return best


def stabilize_with_behaviors(history: History, current: int, desired: int, up_window: float, down_window: float,
                             now: float) -> tuple[int, tuple[str, str]]:
    """stabilizeRecommendationWithBehaviors: ``current`` held between the lowest recommendation
    of the up window and the highest of the down window; ``(replicas, (reason, message))``."""
    up, down, old = desired, desired, None
    up_cut, down_cut = now - up_window, now - down_window
    for i, (rec, t) in enumerate(history.recommendations):
        if t > up_cut:
            up = min(rec, up)
        if t > down_cut:
            down = max(rec, down)
        if t < up_cut and t < down_cut:
            old = i
    rec = max(current, up)
    rec = min(rec, down)
    _record(history.recommendations, old, desired, now)
    return rec, (UP_STABILIZED if desired >= current else DOWN_STABILIZED)


def _change_in_period(period: float, events: list[ScaleEvent], now: float) -> int:
    return sum(e.change for e in events if e.timestamp > now - period)


def _proposals(current: int, history: History, rules: JSON, now: float, up: bool) -> list[int]:
    """Each policy's bound, from the replicas at the start of its period (the current ones less
    the scale-ups, plus the scale-downs, of the last ``periodSeconds``): ``Pods`` adds (removes)
    ``value``, ``Percent`` multiplies by ``1 ± value/100`` (rounded up for a scale-up, truncated
    for a scale-down)."""
    out = []
    for p in rules.get("policies") or []:
        period = float(p.get("periodSeconds") or 0)
        start = current - _change_in_period(period, history.scale_up, now) + \
            _change_in_period(period, history.scale_down, now)
        value = int(p.get("value") or 0)
        if p.get("type") == "Pods":
            out.append(start + value if up else start - value)
        else:
            out.append(math.ceil(start * (1 + value / 100)) if up else int(start * (1 - value / 100)))
    return out


def scale_up_limit(current: int, history: History, rules: JSON, now: float) -> int:
    """calculateScaleUpLimitWithScalingRules: the most replicas the policies allow now
    (``selectPolicy`` Max: the largest bound, Min: the smallest, Disabled: ``current``)."""
    select = rules.get("selectPolicy") or "Max"
    if select == "Disabled":
        return current
    bounds = _proposals(current, history, rules, now, up=True)
    if select == "Min":
        return min(bounds, default=2**31 - 1)
    return max(bounds, default=-(2**31))


def scale_down_limit(current: int, history: History, rules: JSON, now: float) -> int:
    """calculateScaleDownLimitWithBehaviors: the fewest replicas the policies allow now
    (``selectPolicy`` Max: the biggest change, the smallest bound; Min: the largest bound)."""
    select = rules.get("selectPolicy") or "Max"
    if select == "Disabled":
        return current
    bounds = _proposals(current, history, rules, now, up=False)
    if select == "Min":
        return max(bounds, default=-(2**31))
    return min(bounds, default=2**31 - 1)


def _longest_period(rules: JSON | None) -> float:
    return max((float(p.get("periodSeconds") or 0) for p in (rules or {}).get("policies") or []), default=0.0)


def store_scale_event(history: History, behavior: JSON | None, previous: int, new: int, now: float) -> None:
    """storeScaleEvent: remember a rescale (only with a behavior), reusing an outdated slot."""
    if behavior is None:
        return
    up = new > previous
    events = history.scale_up if up else history.scale_down
    longest = _longest_period(behavior.get("scaleUp" if up else "scaleDown"))
    for e in events:
        if e.timestamp < now - longest:
            e.outdated = True
    event = ScaleEvent(abs(new - previous), now)
    slot = next((i for i, e in reversed(list(enumerate(events))) if e.outdated), None)
    if slot is None:
        events.append(event)
    else:
        events[slot] = event


def convert_with_rules(current: int, desired: int, min_replicas: int, max_replicas: int
                       ) -> tuple[int, tuple[str, str]]:
    """convertDesiredReplicasWithRules (no behavior): ``desired`` within min/max and the
    ``max(2 × current, 4)`` scale-up bound; ``(replicas, (reason, message))``."""
    up_limit = int(max(SCALE_UP_LIMIT_FACTOR * current, SCALE_UP_LIMIT_MINIMUM))
    if max_replicas > up_limit:
        maximum, limiting = up_limit, UP_LIMIT
    else:
        maximum, limiting = max_replicas, TOO_MANY
    if desired < min_replicas:
        return min_replicas, TOO_FEW
    if desired > maximum:
        return maximum, limiting
    return desired, WITHIN_RANGE


def convert_with_behavior_rate(history: History, behavior: JSON, current: int, desired: int, min_replicas: int,
                               max_replicas: int, now: float) -> tuple[int, tuple[str, str]]:
    """convertDesiredReplicasWithBehaviorRate: ``desired`` within min/max and the policies."""
    if desired > current:
        limit = max(scale_up_limit(current, history, behavior.get("scaleUp") or {}, now), current)
        if max_replicas > limit:
            maximum, limiting = limit, UP_LIMIT
        else:
            maximum, limiting = max_replicas, TOO_MANY
        if desired > maximum:
            return maximum, limiting
    elif desired < current:
        limit = min(scale_down_limit(current, history, behavior.get("scaleDown") or {}, now), current)
        if min_replicas < limit:
            minimum, limiting = limit, DOWN_LIMIT
        else:
            minimum, limiting = min_replicas, TOO_FEW
        if desired < minimum:
            return minimum, limiting
    return desired, WITHIN_RANGE


def normalize(history: History, behavior: JSON | None, current: int, desired: int, min_replicas: int,
              max_replicas: int, downscale_stabilization: float, now: float
              ) -> tuple[int, tuple[str, str], tuple[str, str, str]]:
    """The replicas to set for a proposal of ``desired``: ``(replicas, AbleToScale (reason,
    message), ScalingLimited (status, reason, message))`` (module docstring)."""
    if behavior is None:
        stabilized = stabilize(history, desired, downscale_stabilization, now)
        able = DOWN_STABILIZED if stabilized != desired else READY
        out, limited = convert_with_rules(current, stabilized, min_replicas, max_replicas)
    else:
        up = behavior.get("scaleUp") or {}
        down = behavior.get("scaleDown") or {}
        up_window = float(up.get("stabilizationWindowSeconds") or 0)
        down_w = down.get("stabilizationWindowSeconds")
        down_window = downscale_stabilization if down_w is None else float(down_w)
        stabilized, reason = stabilize_with_behaviors(history, current, desired, up_window, down_window, now)
        able = reason if stabilized != desired else READY
        out, limited = convert_with_behavior_rate(history, behavior, current, stabilized, min_replicas,
                                                  max_replicas, now)
    return out, able, ("False" if out == stabilized else "True", *limited)
