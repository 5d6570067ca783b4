"""KubeSchedulerConfiguration (``kubescheduler.config.k8s.io/v1``) → profiles.

Supported fields: ``percentageOfNodesToScore``, ``podInitialBackoffSeconds``,
``podMaxBackoffSeconds``, ``leaderElection.leaderElect``, and per profile
``schedulerName``, ``percentageOfNodesToScore``, ``plugins.<point>.enabled/disabled``
(points as KubeSchedulerConfiguration's, ``preEnqueue`` included)
(``{name, weight}``; ``disabled: [{name: "*"}]`` clears the defaults; ``multiPoint``
and ``score`` carry weights) and ``pluginConfig[{name, args}]``. Defaults follow
``pkg/scheduler/apis/config/v1/defaults.go`` and ``default_plugins.go``.
Errors raise :class:`ConfigError` with a one-line message.
"""

from __future__ import annotations

from dataclasses import dataclass, field
from typing import Any

from components.scheduler.framework import Framework
from components.scheduler.plugins import DEFAULT_PLUGINS, REGISTRY
from controlplane import yamlfile

DEFAULT_SCHEDULER_NAME = "default-scheduler"


def scheduler_name_of(pod: dict) -> str:
    """The profile a pod asks for: ``spec.schedulerName``, ``default-scheduler`` when
    empty (eventhandlers.go responsibleForPod compares it with the profiles' names)."""
    return (pod.get("spec") or {}).get("schedulerName") or DEFAULT_SCHEDULER_NAME


API_VERSION = "kubescheduler.config.k8s.io/v1"
_POINTS = ("multiPoint", "preEnqueue", "queueSort", "preFilter", "filter", "postFilter", "preScore", "score",
           "reserve", "permit", "preBind", "bind", "postBind")


class ConfigError(ValueError):
    """An invalid scheduler configuration."""


@dataclass
class SchedulerConfig:
    """The parsed configuration: ``profiles`` (raw profile dicts), backoff seconds,
    ``percentage_of_nodes_to_score`` (0 = adaptive), ``leader_elect``."""

    profiles: list[dict] = field(default_factory=lambda: [{"schedulerName": DEFAULT_SCHEDULER_NAME}])
    percentage_of_nodes_to_score: int = 0
    pod_initial_backoff_seconds: float = 1.0
    pod_max_backoff_seconds: float = 10.0
    leader_elect: bool = False


def load_config(path: str | None) -> SchedulerConfig:
    """Read a KubeSchedulerConfiguration YAML file (None → defaults)."""
    if not path:
        return SchedulerConfig()
    try:
        docs = yamlfile.load_file(path)
    except yamlfile.YAMLFileError as e:
        raise ConfigError(f"cannot read scheduler config {path!r}: {e}") from None
    doc = (docs[0] if docs else None) or {}
    return parse_config(doc)


def parse_config(doc: dict) -> SchedulerConfig:
    """Validate a KubeSchedulerConfiguration dict; raises ConfigError."""
    if not isinstance(doc, dict):
        raise ConfigError("scheduler config must be a mapping")
    kind = doc.get("kind", "KubeSchedulerConfiguration")
    if kind != "KubeSchedulerConfiguration":
        raise ConfigError(f"unexpected kind {kind!r}, want KubeSchedulerConfiguration")
    cfg = SchedulerConfig()
    try:
        cfg.percentage_of_nodes_to_score = int(doc.get("percentageOfNodesToScore") or 0)
        cfg.pod_initial_backoff_seconds = float(doc.get("podInitialBackoffSeconds", 1))
        cfg.pod_max_backoff_seconds = float(doc.get("podMaxBackoffSeconds", 10))
    except (TypeError, ValueError) as e:
        raise ConfigError(f"invalid number in scheduler config: {e}") from None
    if not 0 <= cfg.percentage_of_nodes_to_score <= 100:
        raise ConfigError(f"percentageOfNodesToScore: Invalid value: {cfg.percentage_of_nodes_to_score}: "
                          "not in valid range [0-100]")
    if cfg.pod_initial_backoff_seconds <= 0 or cfg.pod_max_backoff_seconds < cfg.pod_initial_backoff_seconds:
        raise ConfigError("podMaxBackoffSeconds must be >= podInitialBackoffSeconds > 0")
    cfg.leader_elect = bool((doc.get("leaderElection") or {}).get("leaderElect", False))
    profiles = doc.get("profiles") or [{}]
    names = set()
    for p in profiles:
        p.setdefault("schedulerName", DEFAULT_SCHEDULER_NAME)
        if p["schedulerName"] in names:
            raise ConfigError(f"profiles: Duplicate value: {p['schedulerName']!r}")
        names.add(p["schedulerName"])
        build_framework(p, None, cfg.percentage_of_nodes_to_score)  # validates plugin names
    cfg.profiles = profiles
    return cfg


def build_framework(profile: dict, handle: Any, percentage: int = 0) -> Framework:
    """A :class:`Framework` for one profile dict, plugins constructed with their
    ``pluginConfig`` args and ``handle``. Raises ConfigError for unknown plugins."""
    order = [n for n, _ in DEFAULT_PLUGINS]
    weights = {n: w for n, w in DEFAULT_PLUGINS}
    enabled = set(order)
    plugins_cfg = profile.get("plugins") or {}
    for point in plugins_cfg:
        if point not in _POINTS:
            raise ConfigError(f"plugins: unknown extension point {point!r}")
    for point in _POINTS:
        pc = plugins_cfg.get(point) or {}
        for d in pc.get("disabled") or []:
            name = d.get("name")
            if name == "*":
                if point in ("multiPoint",):
                    enabled.clear()
                elif point == "score":
                    for n in list(weights):
                        weights[n] = 0
                continue
            if name not in REGISTRY:
                raise ConfigError(f"plugins.{point}.disabled: unknown plugin {name!r}")
            if point in ("multiPoint", "filter", "preFilter", "preEnqueue"):
                enabled.discard(name)
            if point in ("multiPoint", "score"):
                weights[name] = 0
        for e in pc.get("enabled") or []:
            name = e.get("name")
            if name not in REGISTRY:
                raise ConfigError(f"plugins.{point}.enabled: unknown plugin {name!r}")
            if name not in order:
                order.append(name)
            enabled.add(name)
            if "weight" in e or point == "score":
                weights[name] = int(e.get("weight") or 1)
    args = {c.get("name"): c.get("args") or {} for c in profile.get("pluginConfig") or []}
    for n in args:
        if n not in REGISTRY:
            raise ConfigError(f"pluginConfig: unknown plugin {n!r}")
    plugins = []
    for n in order:
        if n in enabled:
            try:
                plugins.append(REGISTRY[n](args.get(n), handle))
            except (TypeError, ValueError) as e:
                raise ConfigError(f"pluginConfig[{n}].args: {e}") from None
    # A profile's own value, when set (even 0 = adaptive), wins over the global one
    # (schedule_one.go numFeasibleNodesToFind: profile pointer first).
    raw = profile.get("percentageOfNodesToScore")
    try:
        pct = int(raw) if raw is not None else int(percentage or 0)
    except (TypeError, ValueError):
        raise ConfigError(f"profiles[{profile.get('schedulerName', DEFAULT_SCHEDULER_NAME)}]."
                          f"percentageOfNodesToScore: Invalid value: {raw!r}: not an integer") from None
    if not 0 <= pct <= 100:
        raise ConfigError(f"profiles[{profile.get('schedulerName', DEFAULT_SCHEDULER_NAME)}]."
                          f"percentageOfNodesToScore: Invalid value: {pct}: not in valid range [0-100]")
    return Framework(profile.get("schedulerName", DEFAULT_SCHEDULER_NAME), plugins,
                     {n: w for n, w in weights.items() if n in enabled}, pct)
