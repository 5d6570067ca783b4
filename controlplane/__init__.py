"""controlplane: an event-driven emulator of the Kubernetes control plane.

Shared machinery lives here (API registry, storage, etcd server, client and
informers, tracing, CLI); each service lives in ``components/``.
"""

__version__ = "0.1.0"

#: The Kubernetes version the apiserver reports on ``/version`` and kubelets
#: report as ``nodeInfo.kubeletVersion``. kubectl picks its binary by this minor.
KUBE_VERSION = "v1.32.4"
