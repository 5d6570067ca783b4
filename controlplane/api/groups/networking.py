"""``networking.k8s.io/v1``: Ingress, IngressClass, NetworkPolicy (Kubernetes v1.32).

Facts from ``pkg/apis/networking/validation/validation.go`` (ValidateIngressCreate /
ValidateIngressSpec, validateIngressBackend, validateHTTPIngressPath, ValidateIngressClass,
ValidateNetworkPolicy, ValidateNetworkPolicyPort / Peer, ValidateIPBlock),
``pkg/apis/networking/v1/defaults.go`` (policyTypes, port protocol TCP, IngressClass
parameters scope Cluster), ``pkg/registry/networking/{ingress,ingressclass,networkpolicy}/strategy.go``
(generation tracked by all three; Ingress has a ``status`` subresource and an empty status
on create) and ``pkg/printers/internalversion/printers.go`` (printIngress, printIngressClass,
printNetworkPolicy). No ingress controller or network plugin acts on them: they are stored.
"""

from __future__ import annotations

import ipaddress
import re
from typing import Any

from controlplane.api import listfields, validators
from controlplane.api.groups import columndocs
from controlplane.api.groups.common import (
    AGE_COL,
    NAME_COL,
    age,
    col,
    dig,
    immutable,
    invalid_raw,
    is_cidr,
    is_ip,
    is_valid_port_name,
    is_valid_port_num,
    name,
    objs,
    strs,
    sub,
)
from controlplane.api.registry import JSON, KindSchema, Printer, Resource, Strategy
from controlplane.api.validators import ErrorList

GROUP = "networking.k8s.io"

# --------------------------------------------------------------------------- schema types

TYPES: dict[str, tuple[str, dict[str, tuple[str, str]]]] = {
    "IngressSpec": ("How an Ingress routes external HTTP(S) traffic to services.", {
        "ingressClassName": ("string", "Name of the IngressClass (the controller) that implements this Ingress."),
        "defaultBackend": ("IngressBackend", "Backend for requests matching no rule."),
        "tls": ("[]IngressTLS", "TLS configuration: hosts and the Secret holding their certificate."),
        "rules": ("[]IngressRule", "Host rules; requests matching none go to defaultBackend."),
    }),
    "IngressBackend": ("Where matching requests are sent: a Service port or another resource.", {
        "service": ("IngressServiceBackend", "A Service of the Ingress's namespace; exclusive with resource."),
        "resource": ("TypedLocalObjectReference", "Another object of the namespace; exclusive with service."),
    }),
    "IngressServiceBackend": ("A Service and one of its ports.", {
        "name": ("string", "Name of the Service (same namespace)."),
        "port": ("ServiceBackendPort", "Port of the Service, by name or number."),
    }),
    "ServiceBackendPort": ("A Service port by name or by number (exactly one).", {
        "name": ("string", "Name of the port on the Service."),
        "number": ("int32", "Number of the port on the Service."),
    }),
    "TypedLocalObjectReference": ("A reference to an object of a given kind in the same namespace.", {
        "apiGroup": ("string", "API group of the referent (empty: the core group)."),
        "kind": ("string", "Kind of the referent."),
        "name": ("string", "Name of the referent."),
    }),
    "IngressTLS": ("TLS for a set of hosts.", {
        "hosts": ("[]string", "Hosts in the certificate (wildcards allowed); the default: the controller's."),
        "secretName": ("string", "Secret with the TLS key and certificate."),
    }),
    "IngressRule": ("Routing for one host (or every host when host is empty).", {
        "host": ("string", "Fully qualified domain name (a leading '*.' wildcard allowed); not an IP."),
        "http": ("HTTPIngressRuleValue", "HTTP paths and their backends."),
    }),
    "HTTPIngressRuleValue": ("The HTTP paths of a rule.", {
        "paths": ("[]HTTPIngressPath", "Paths and their backends; at least one."),
    }),
    "HTTPIngressPath": ("A path and the backend its requests go to.", {
        "path": ("string", "Path matched against the request's (absolute, starting with '/')."),
        "pathType": ("string", "Exact, Prefix or ImplementationSpecific: how path is matched. Required."),
        "backend": ("IngressBackend", "Where matching requests go."),
    }),
    "IngressStatus": ("The observed state of an Ingress.", {
        "loadBalancer": ("IngressLoadBalancerStatus", "The load balancer's addresses."),
    }),
    "IngressLoadBalancerStatus": ("The load balancer of an Ingress.", {
        "ingress": ("[]IngressLoadBalancerIngress", "Its ingress points."),
    }),
    "IngressLoadBalancerIngress": ("One ingress point of the load balancer.", {
        "ip": ("string", "IP address of the ingress point."),
        "hostname": ("string", "DNS name of the ingress point."),
        "ports": ("[]IngressPortStatus", "Ports of the ingress point."),
    }),
    "IngressPortStatus": ("A port of an ingress point and its error, if any.", {
        "port": ("int32", "Port number."),
        "protocol": ("string", "TCP, UDP or SCTP."),
        "error": ("string", "Problem with the port (CamelCase reason or domain-prefixed)."),
    }),
    "IngressClassSpec": ("The controller that implements an IngressClass and its parameters.", {
        "controller": ("string", "Domain-prefixed path of the controller (e.g. example.com/ingress-controller). Immutable."),
        "parameters": ("IngressClassParametersReference", "An object with the controller's extra configuration."),
    }),
    "IngressClassParametersReference": ("A reference to an IngressClass's parameters object.", {
        "apiGroup": ("string", "API group of the referent (empty: the core group)."),
        "kind": ("string", "Kind of the referent."),
        "name": ("string", "Name of the referent."),
        "scope": ("string", "Cluster (default) or Namespace: where the referent lives."),
        "namespace": ("string", "Namespace of the referent; required when scope is Namespace."),
    }),
    "NetworkPolicySpec": ("Which pods a NetworkPolicy selects and the traffic it allows them.", {
        "podSelector": ("LabelSelector", "Pods the policy applies to; empty selects every pod of the namespace."),
        "ingress": ("[]NetworkPolicyIngressRule", "Traffic allowed in (in addition to other policies')."),
        "egress": ("[]NetworkPolicyEgressRule", "Traffic allowed out."),
        "policyTypes": ("[]string", "Ingress and/or Egress: which directions the policy isolates."),
    }),
    "NetworkPolicyIngressRule": ("Incoming traffic allowed: from these peers to these ports.", {
        "ports": ("[]NetworkPolicyPort", "Ports allowed; empty: every port."),
        "from": ("[]NetworkPolicyPeer", "Sources allowed; empty: every source."),
    }),
    "NetworkPolicyEgressRule": ("Outgoing traffic allowed: to these peers on these ports.", {
        "ports": ("[]NetworkPolicyPort", "Ports allowed; empty: every port."),
        "to": ("[]NetworkPolicyPeer", "Destinations allowed; empty: every destination."),
    }),
    "NetworkPolicyPort": ("A port (or port range) and protocol.", {
        "protocol": ("string", "TCP (default), UDP or SCTP."),
        "port": ("IntOrString", "Port number or named port; unset: every port."),
        "endPort": ("int32", "End of a port range starting at port (numeric port only)."),
    }),
    "NetworkPolicyPeer": ("A set of pods, namespaces or an IP block.", {
        "podSelector": ("LabelSelector", "Pods (in the policy's namespace, or those namespaceSelector selects)."),
        "namespaceSelector": ("LabelSelector", "Namespaces whose pods are selected."),
        "ipBlock": ("IPBlock", "An IP range; exclusive with the selectors."),
    }),
    "IPBlock": ("A CIDR and the ranges excluded from it.", {
        "cidr": ("string", "The range, e.g. 192.168.1.0/24."),
        "except": ("[]string", "Sub-ranges of cidr not included."),
    }),
}

_ATOMIC = listfields.ATOMIC
listfields.declare(
    {"Ingress": {"spec": "IngressSpec", "status": "IngressStatus"},
     "NetworkPolicy": {"spec": "NetworkPolicySpec"}},
    {"IngressSpec": {"tls": _ATOMIC, "rules": _ATOMIC},
     "IngressTLS": {"hosts": _ATOMIC},
     "HTTPIngressRuleValue": {"paths": _ATOMIC},
     "IngressStatus": {"loadBalancer": "IngressLoadBalancerStatus"},
     "IngressLoadBalancerStatus": {"ingress": _ATOMIC},
     "NetworkPolicySpec": {"ingress": _ATOMIC, "egress": _ATOMIC, "policyTypes": _ATOMIC}})

# --------------------------------------------------------------------------- defaults


def default_network_policy(obj: JSON) -> None:
    """SetDefaults_NetworkPolicyPort (protocol TCP) and SetDefaults_NetworkPolicy: without
    policyTypes, ``[Ingress]`` plus ``Egress`` when egress rules are given."""
    spec = obj.get("spec")
    if not isinstance(spec, dict):
        return
    for rules in (spec.get("ingress"), spec.get("egress")):
        for rule in objs(rules):
            for port in objs(rule.get("ports")):
                port.setdefault("protocol", "TCP")
    if not spec.get("policyTypes"):
        types = ["Ingress"]
        if spec.get("egress"):
            types.append("Egress")
        spec["policyTypes"] = types


def default_ingress_class(obj: JSON) -> None:
    """SetDefaults_IngressClass: ``spec.parameters.scope`` Cluster when parameters are set."""
    params = dig(obj, "spec", "parameters")
    if isinstance(params, dict):
        params.setdefault("scope", "Cluster")

# --------------------------------------------------------------------------- validation


WILDCARD_DNS1123_SUBDOMAIN_FMT = r"\*\." + validators.DNS1123_SUBDOMAIN_FMT
WILDCARD_DNS1123_SUBDOMAIN_ERR = (
    "a wildcard DNS-1123 subdomain must start with '*.', followed by a valid DNS subdomain, which must consist "
    "of lower case alphanumeric characters, '-' or '.' and end with an alphanumeric character (e.g. "
    f"'*.example.com', regex used for validation is '{WILDCARD_DNS1123_SUBDOMAIN_FMT}')")
_PATH_TYPES = ["Exact", "ImplementationSpecific", "Prefix"]
_INVALID_SEQUENCES = ("//", "/./", "/../", "%2f", "%2F")
_INVALID_SUFFIXES = ("/..", "/.")


def is_wildcard_dns1123_subdomain(v: str) -> list[str]:
    """IsWildcardDNS1123Subdomain: ``*.`` followed by an RFC 1123 subdomain."""
    errs = []
    if len(v) > 253:
        errs.append("must be no more than 253 characters")
    if not re.match(f"^{WILDCARD_DNS1123_SUBDOMAIN_FMT}$", v):
        errs.append(WILDCARD_DNS1123_SUBDOMAIN_ERR)
    return errs


def _validate_host(host: str, path: str, errs: ErrorList) -> None:
    if is_ip(host):
        errs.invalid(path, host, "must be a DNS name, not an IP address")
    msgs = is_wildcard_dns1123_subdomain(host) if "*" in host else validators.is_dns1123_subdomain(host)
    for m in msgs:
        errs.invalid(path, host, m)


def _validate_backend(b: JSON, path: str, errs: ErrorList) -> None:
    """validateIngressBackend."""
    svc, res = b.get("service"), b.get("resource")
    if svc is not None and res is not None:
        errs.invalid(path, "", "cannot set both resource and service backends")
        return
    if res is not None:
        validate_typed_local_reference(sub(b, "resource"), f"{path}.resource", errs)
        return
    if svc is None:
        errs.invalid(path, "", "resource or service backend is required")
        return
    svc = sub(b, "service")
    sname = str(svc.get("name") or "")
    if not sname:
        errs.required(f"{path}.service.name", "")
    else:
        for m in validators.is_dns1035_label(sname):
            errs.invalid(f"{path}.service.name", sname, m)
    port = sub(svc, "port")
    pname, pnum = str(port.get("name") or ""), port.get("number") or 0
    if pname and pnum:
        errs.invalid(path, "", "cannot set both port name & port number")
    elif pname:
        for m in is_valid_port_name(pname):
            errs.invalid(f"{path}.service.port.name", pname, m)
    elif pnum:
        for m in is_valid_port_num(pnum):
            errs.invalid(f"{path}.service.port.number", pnum, m)
    else:
        errs.required(path, "port name or number is required")


def validate_typed_local_reference(ref: JSON, path: str, errs: ErrorList) -> None:
    """validateIngressTypedLocalObjectReference: apiGroup a DNS subdomain, kind and name required."""
    if ref.get("apiGroup") is not None:
        for m in validators.is_dns1123_subdomain(str(ref["apiGroup"])):
            errs.invalid(f"{path}.apiGroup", ref["apiGroup"], m)
    for f in ("kind", "name"):
        v = str(ref.get(f) or "")
        if not v:
            errs.required(f"{path}.{f}", f"{f} is required")
        elif v in (".", "..") or "/" in v or "%" in v:
            errs.invalid(f"{path}.{f}", v, f"may not be '{v}'" if v in (".", "..") else
                         f"may not contain '{'/' if '/' in v else '%'}'")


def _validate_http_path(p: JSON, path: str, errs: ErrorList) -> None:
    """validateHTTPIngressPath."""
    ptype, value = p.get("pathType"), str(p.get("path") or "")
    if ptype is None:
        errs.required(f"{path}.pathType", "pathType must be specified")
        return
    if ptype in ("Exact", "Prefix"):
        if not value.startswith("/"):
            errs.invalid(f"{path}.path", value, "must be an absolute path")
        if value:
            for seq in _INVALID_SEQUENCES:
                if seq in value:
                    errs.invalid(f"{path}.path", value, f"must not contain '{seq}'")
            for suf in _INVALID_SUFFIXES:
                if value.endswith(suf):
                    errs.invalid(f"{path}.path", value, f"cannot end with '{suf}'")
    elif ptype == "ImplementationSpecific":
        if value and not value.startswith("/"):
            errs.invalid(f"{path}.path", value, "must be an absolute path")
    else:
        errs.not_supported(f"{path}.pathType", ptype, _PATH_TYPES)
    _validate_backend(sub(p, "backend"), f"{path}.backend", errs)


def validate_ingress(obj: JSON, old: JSON | None, errs: ErrorList) -> None:
    """ValidateIngressCreate / ValidateIngressUpdate: the spec (ValidateIngressSpec) and,
    for status writes, the load balancer addresses."""
    spec = sub(obj, "spec")
    rules = spec.get("rules")
    if not rules and spec.get("defaultBackend") is None:
        invalid_raw(errs, "spec", "[]networking.IngressRule{}" if rules == [] else "[]networking.IngressRule(nil)",
                    "either `defaultBackend` or `rules` must be specified")
    if isinstance(spec.get("defaultBackend"), dict):
        _validate_backend(spec["defaultBackend"], "spec.defaultBackend", errs)
    for i, rule in enumerate(objs(rules)):
        rp = f"spec.rules[{i}]"
        host = str(rule.get("host") or "")
        if host:
            _validate_host(host, f"{rp}.host", errs)
        http = rule.get("http")
        if isinstance(http, dict):
            paths = objs(http.get("paths"))
            if not paths:
                errs.required(f"{rp}.http.paths", "")
            for j, p in enumerate(paths):
                _validate_http_path(p, f"{rp}.http.paths[{j}]", errs)
    for i, tls in enumerate(objs(spec.get("tls"))):
        for j, host in enumerate(strs(tls.get("hosts"))):
            _validate_host(host, f"spec.tls[{i}].hosts[{j}]", errs)
        secret = str(tls.get("secretName") or "")
        if secret:
            for m in validators.is_dns1123_subdomain(secret):
                errs.invalid(f"spec.tls[{i}].secretName", secret, m)
    cls = spec.get("ingressClassName")
    if cls:
        for m in validators.is_dns1123_subdomain(str(cls)):
            errs.invalid("spec.ingressClassName", cls, m)
    for i, lb in enumerate(objs(dig(obj, "status", "loadBalancer", "ingress"))):
        lp = f"status.loadBalancer.ingress[{i}]"
        ip, hostname = str(lb.get("ip") or ""), str(lb.get("hostname") or "")
        if ip and not is_ip(ip):
            errs.invalid(f"{lp}.ip", ip, "must be a valid IP address")
        if hostname:
            for m in validators.is_dns1123_subdomain(hostname):
                errs.invalid(f"{lp}.hostname", hostname, m)
            if is_ip(hostname):
                errs.invalid(f"{lp}.hostname", hostname, "must be a DNS name, not an IP address")


def is_domain_prefixed_path(v: str, path: str, errs: ErrorList) -> None:
    """IsDomainPrefixedPath (apimachinery ``pkg/api/validation``)."""
    if not v:
        errs.required(path, "")
        return
    segs = v.split("/", 1)
    if len(segs) != 2 or not segs[0] or not segs[1]:
        errs.invalid(path, v, 'must be a domain-prefixed path (such as "acme.io/foo")')
        return
    for m in validators.is_dns1123_subdomain(segs[0]):
        errs.invalid(path, segs[0], m)


def validate_ingress_class(obj: JSON, old: JSON | None, errs: ErrorList) -> None:
    """ValidateIngressClass / ValidateIngressClassUpdate: ``spec.controller`` a
    domain-prefixed path of at most 250 characters, immutable; parameters' kind, name and
    scope (Cluster forbids namespace, Namespace requires it)."""
    spec = sub(obj, "spec")
    ctl = str(spec.get("controller") or "")
    if len(ctl) > 250:
        errs.too_long("spec.controller", 250)
    is_domain_prefixed_path(ctl, "spec.controller", errs)
    params = spec.get("parameters")
    if isinstance(params, dict):
        pp = "spec.parameters"
        validate_typed_local_reference(params, pp, errs)
        scope = params.get("scope")
        if scope is None:
            errs.required(f"{pp}.scope", "")
        elif scope == "Cluster":
            if params.get("namespace") is not None:
                errs.forbidden(f"{pp}.namespace", "`parameters.scope` is set to 'Cluster'")
        elif scope == "Namespace":
            if params.get("namespace") is None:
                errs.required(f"{pp}.namespace", "`parameters.scope` is set to 'Namespace'")
            else:
                for m in validators.is_dns1123_label(str(params["namespace"])):
                    errs.invalid(f"{pp}.namespace", params["namespace"], m)
        else:
            errs.not_supported(f"{pp}.scope", scope, ["Cluster", "Namespace"])
    if old is not None:
        immutable(errs, "spec.controller", ctl, str(dig(old, "spec", "controller") or ""))


def _validate_np_port(port: JSON, path: str, errs: ErrorList) -> None:
    """ValidateNetworkPolicyPort."""
    proto = port.get("protocol")
    if proto is not None and proto not in ("TCP", "UDP", "SCTP"):
        errs.not_supported(f"{path}.protocol", proto, ["TCP", "UDP", "SCTP"])
    p, end = port.get("port"), port.get("endPort")
    if p is None:
        if end is not None:
            errs.invalid(f"{path}.endPort", end, "may not be specified when `port` is not specified")
    elif isinstance(p, int):
        for m in is_valid_port_num(p):
            errs.invalid(f"{path}.port", p, m)
        if isinstance(end, int):
            if end < p:
                errs.invalid(f"{path}.endPort", p, "must be greater than or equal to `port`")
            for m in is_valid_port_num(end):
                errs.invalid(f"{path}.endPort", end, m)
    else:
        if end is not None:
            errs.invalid(f"{path}.endPort", end, "may not be specified when `port` is non-numeric")
        for m in is_valid_port_name(str(p)):
            errs.invalid(f"{path}.port", str(p), m)


def _validate_peer(peer: JSON, path: str, errs: ErrorList) -> None:
    """ValidateNetworkPolicyPeer and ValidateIPBlock."""
    n = 0
    for sel in ("podSelector", "namespaceSelector"):
        if peer.get(sel) is not None:
            n += 1
            validators.validate_label_selector(peer[sel], f"{path}.{sel}", errs)
    block = peer.get("ipBlock")
    if block is not None:
        n += 1
        block = sub(peer, "ipBlock")
        cidr = str(block.get("cidr") or "")
        if not cidr:
            errs.required(f"{path}.ipBlock.cidr", "")
        elif not is_cidr(cidr):
            errs.invalid(f"{path}.ipBlock.cidr", cidr, "must be a valid CIDR value, (e.g. 10.9.8.0/24 or 2001:db8::/64)")
        else:
            net = ipaddress.ip_network(cidr, strict=False)
            for i, ex in enumerate(strs(block.get("except"))):
                ep = f"{path}.ipBlock.except[{i}]"
                if not is_cidr(ex):
                    errs.invalid(ep, ex, "must be a valid CIDR value, (e.g. 10.9.8.0/24 or 2001:db8::/64)")
                    continue
                exn = ipaddress.ip_network(ex, strict=False)
                if exn.version != net.version or not exn.subnet_of(net) or exn.prefixlen <= net.prefixlen:  # type: ignore[arg-type]
                    errs.invalid(ep, str(exn), "must be a strict subset of `cidr`")
    if n == 0:
        errs.required(path, "must specify a peer")
    elif n > 1 and block is not None:
        errs.forbidden(path, "may not specify both ipBlock and another peer")


def validate_network_policy(obj: JSON, old: JSON | None, errs: ErrorList) -> None:
    """ValidateNetworkPolicy (ValidateNetworkPolicySpec): podSelector, the rules' ports and
    peers, policyTypes (Ingress, Egress; at most two)."""
    spec = sub(obj, "spec")
    validators.validate_label_selector(spec.get("podSelector"), "spec.podSelector", errs)
    for key, peers in (("ingress", "from"), ("egress", "to")):
        for i, rule in enumerate(objs(spec.get(key))):
            rp = f"spec.{key}[{i}]"
            for j, port in enumerate(objs(rule.get("ports"))):
                _validate_np_port(port, f"{rp}.ports[{j}]", errs)
            for j, peer in enumerate(objs(rule.get(peers))):
                _validate_peer(peer, f"{rp}.{peers}[{j}]", errs)
    types = strs(spec.get("policyTypes"))
    if len(types) > 2:
        errs.invalid("spec.policyTypes", types, "may not specify more than two policyTypes")
        return
    for i, t in enumerate(types):
        if t not in ("Ingress", "Egress"):
            errs.not_supported(f"spec.policyTypes[{i}]", t, ["Ingress", "Egress"])

# --------------------------------------------------------------------------- printers


def format_hosts(rules: list[JSON]) -> str:
    """formatHosts: up to three hosts, ``+ N more...``, ``*`` for none."""
    hosts: list[str] = []
    more = False
    for r in rules:
        if len(hosts) == 3:
            more = True
        if not more and r.get("host"):
            hosts.append(str(r["host"]))
    if not hosts:
        return "*"
    out = ",".join(hosts)
    return f"{out} + {len(rules) - 3} more..." if more else out


def load_balancer_addresses(ingress: list[JSON], wide: bool = True) -> str:
    """ingressLoadBalancerStatusStringer: the IPs / hostnames joined by ``,`` (the server
    prints them whole, as for ``-o wide``)."""
    out = [str(i.get("ip") or i.get("hostname") or "") for i in ingress if i.get("ip") or i.get("hostname")]
    s = ",".join(out)
    if not wide and len(s) > 16:
        return s[:16] + "..."
    return s


def _ingress_row(obj: JSON, now: float) -> tuple[list[Any], list[JSON] | None]:
    spec = obj.get("spec") or {}
    cls = spec.get("ingressClassName") or "<none>"
    ports = "80, 443" if spec.get("tls") else "80"
    addr = load_balancer_addresses(objs(dig(obj, "status", "loadBalancer", "ingress")))
    return [name(obj), cls, format_hosts(objs(spec.get("rules"))), addr, ports, age(obj, now)], None


def _ingress_class_row(obj: JSON, now: float) -> tuple[list[Any], list[JSON] | None]:
    spec = obj.get("spec") or {}
    params = spec.get("parameters")
    cell = "<none>"
    if isinstance(params, dict):
        kind = params.get("kind", "")
        if params.get("apiGroup"):
            kind = f"{kind}.{params['apiGroup']}"
        cell = f"{kind}/{params.get('name', '')}"
    return [name(obj), spec.get("controller", ""), cell, age(obj, now)], None


def format_label_selector(sel: object) -> str:
    """metav1.FormatLabelSelector: ``<none>`` for an empty selector, else ``k=v,k2 in (a,b)``."""
    if not isinstance(sel, dict) or (not sel.get("matchLabels") and not sel.get("matchExpressions")):
        return "<none>"
    parts = [f"{k}={v}" for k, v in sorted((sel.get("matchLabels") or {}).items())]
    for e in objs(sel.get("matchExpressions")):
        op, key, vals = e.get("operator"), e.get("key", ""), ",".join(sorted(strs(e.get("values"))))
        if op == "In":
            parts.append(f"{key} in ({vals})")
        elif op == "NotIn":
            parts.append(f"{key} notin ({vals})")
        elif op == "Exists":
            parts.append(str(key))
        elif op == "DoesNotExist":
            parts.append(f"!{key}")
    return ",".join(parts) or "<none>"


def _network_policy_row(obj: JSON, now: float) -> tuple[list[Any], list[JSON] | None]:
    return [name(obj), format_label_selector(dig(obj, "spec", "podSelector")), age(obj, now)], None


INGRESS = Printer((
    NAME_COL,
    col("Class", description="The name of the IngressClass resource that should be used for additional configuration"),
    col("Hosts", description="Hosts that incoming requests are matched against before the ingress rule"),
    col("Address", description="Address is a list containing ingress points for the load-balancer"),
    col("Ports", description="Ports of TLS configurations that open"),
    AGE_COL), _ingress_row)
INGRESS_CLASS = Printer((
    NAME_COL,
    col("Controller", description="Controller that is responsible for handling this class"),
    col("Parameters", description="A reference to a resource with additional parameters"),
    AGE_COL), _ingress_class_row)
NETWORK_POLICY = Printer((
    NAME_COL, col("Pod-Selector", description=columndocs.doc("NetworkPolicySpec.podSelector")), AGE_COL),
    _network_policy_row)

# --------------------------------------------------------------------------- strategies


def _prepare_ingress_create(obj: JSON) -> None:
    obj["status"] = {"loadBalancer": {}}


INGRESS_STRATEGY = Strategy(tracks_generation=True, prepare_create=_prepare_ingress_create)
GENERATION_STRATEGY = Strategy(tracks_generation=True)

# --------------------------------------------------------------------------- entries

ENTRIES: tuple[Resource, ...] = (
    Resource(GROUP, "v1", "ingresses", "ingress", "Ingress", True, ("ing",), ("status",),
             printer=INGRESS,
             schema=KindSchema("Ingress routes external HTTP(S) traffic to Services by host and path; an ingress "
                               "controller implements it.", {
                                   "spec": ("IngressSpec", "Desired routing."),
                                   "status": ("IngressStatus", "Observed state: the load balancer's addresses.")},
                               TYPES),
             validate=validate_ingress, strategy=INGRESS_STRATEGY),
    Resource(GROUP, "v1", "ingressclasses", "ingressclass", "IngressClass", False,
             printer=INGRESS_CLASS,
             schema=KindSchema("IngressClass names the controller that implements Ingresses of this class.", {
                 "spec": ("IngressClassSpec", "The controller and its parameters.")}, TYPES),
             validate=validate_ingress_class, default=default_ingress_class, strategy=GENERATION_STRATEGY),
    Resource(GROUP, "v1", "networkpolicies", "networkpolicy", "NetworkPolicy", True, ("netpol",),
             printer=NETWORK_POLICY,
             schema=KindSchema("NetworkPolicy says which traffic the selected pods may send and receive (enforced "
                               "by the network plugin).", {
                                   "spec": ("NetworkPolicySpec", "The pods selected and the traffic allowed.")}, TYPES),
             validate=validate_network_policy, default=default_network_policy, strategy=GENERATION_STRATEGY),
)
