"""The in-tree plugin registry and the default profile.

``REGISTRY`` maps plugin names to classes (constructed as ``cls(args, handle)``).
``DEFAULT_PLUGINS`` is the default profile's enabled plugins in filter order with
their score weights, as ``pkg/scheduler/apis/config/v1/default_plugins.go``
(of the volume plugins, VolumeRestrictions, VolumeBinding and VolumeZone are implemented;
NodeVolumeLimits is not).
"""

from __future__ import annotations

from components.scheduler.plugins.defaultbinder import DefaultBinder
from components.scheduler.plugins.defaultpreemption import DefaultPreemption
from components.scheduler.plugins.imagelocality import ImageLocality
from components.scheduler.plugins.interpodaffinity import InterPodAffinity
from components.scheduler.plugins.nodeaffinity import NodeAffinity
from components.scheduler.plugins.nodename import NodeName
from components.scheduler.plugins.nodeports import NodePorts
from components.scheduler.plugins.noderesources import NodeResourcesBalancedAllocation, NodeResourcesFit
from components.scheduler.plugins.nodeunschedulable import NodeUnschedulable
from components.scheduler.plugins.podtopologyspread import PodTopologySpread
from components.scheduler.plugins.prioritysort import PrioritySort
from components.scheduler.plugins.schedulinggates import SchedulingGates
from components.scheduler.plugins.tainttoleration import TaintToleration
from components.scheduler.plugins.volumebinding import VolumeBinding
from components.scheduler.plugins.volumerestrictions import VolumeRestrictions
from components.scheduler.plugins.volumezone import VolumeZone

REGISTRY: dict[str, type] = {c.name: c for c in (
    PrioritySort, NodeUnschedulable, NodeName, TaintToleration, NodeAffinity, NodePorts,
    NodeResourcesFit, PodTopologySpread, InterPodAffinity, DefaultPreemption,
    NodeResourcesBalancedAllocation, ImageLocality, DefaultBinder, SchedulingGates, VolumeBinding,
    VolumeRestrictions, VolumeZone)}

#: (name, score weight) in the default multiPoint order; weight 0 = does not score
DEFAULT_PLUGINS: list[tuple[str, int]] = [
    ("PrioritySort", 0),
    ("NodeUnschedulable", 0),
    ("NodeName", 0),
    ("TaintToleration", 3),
    ("NodeAffinity", 2),
    ("NodePorts", 0),
    ("NodeResourcesFit", 1),
    ("VolumeRestrictions", 0),
    ("VolumeBinding", 0),
    ("VolumeZone", 0),
    ("PodTopologySpread", 2),
    ("InterPodAffinity", 2),
    ("DefaultPreemption", 0),
    ("NodeResourcesBalancedAllocation", 1),
    ("ImageLocality", 1),
    ("DefaultBinder", 0),
    ("SchedulingGates", 0),   # PreEnqueue only (PodSchedulingReadiness, GA in 1.30)
]
