"""The cluster defaults ``controlplane up`` and its supervisor (:mod:`controlplane.cli.cluster`) share,
in a module of their own that imports nothing, so ``up``'s command line is declared before the
supervisor's modules are loaded (``up`` starts its fork server first, see :mod:`controlplane.cli.up`)."""

from __future__ import annotations

__all__ = ["DEFAULT_AUTHORIZATION_MODE", "DEFAULT_POD_NETWORK_CIDR", "DEFAULT_SERVICE_CIDR"]

#: ``controlplane up``'s ``--authorization-mode``, as kubeadm configures kube-apiserver: the Node
#: authorizer, then RBAC (with NodeRestriction admission); every component has its identity
DEFAULT_AUTHORIZATION_MODE = "Node,RBAC"
#: the pods' range the controller-manager's node IPAM controller splits into one /24 per node
#: (kubeadm passes ``--allocate-node-cidrs=true --cluster-cidr=<podSubnet>`` when a pod subnet is
#: set). kubeadm has no default pod subnet and flannel's usual 10.244.0.0/16 holds only 256 /24s;
#: 10.64.0.0/11 is what Kubernetes' own scale clusters take above 4,000 nodes
#: (``cluster/gce/config-common.sh`` get-cluster-ip-range): 8,192 nodes, beside the default
#: service range 10.96.0.0/12, so ``--hollow-nodes 5000`` fits with the defaults.
DEFAULT_POD_NETWORK_CIDR = "10.64.0.0/11"
DEFAULT_SERVICE_CIDR = "10.96.0.0/12"
