"""The node IPAM controller (``pkg/controller/nodeipam``): ``cidrset.py`` (the CIDR bitmap of
one cluster CIDR) and ``controller.py`` (the range allocator writing ``spec.podCIDR(s)``)."""
