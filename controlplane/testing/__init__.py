"""Testing with a whole control plane: :mod:`controlplane.testing.pytest_plugin` (the pytest
plugin, registered through the ``pytest11`` entry point) and :class:`ClusterHandle`, a
:class:`controlplane.cli.cluster.LocalCluster` run on a background thread for synchronous code.
"""

from controlplane.testing.cluster import ClusterHandle, ClusterSpec

__all__ = ["ClusterHandle", "ClusterSpec"]
