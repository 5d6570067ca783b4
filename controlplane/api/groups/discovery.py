"""``discovery.k8s.io/v1``: EndpointSlice (Kubernetes v1.32).

Facts from ``pkg/apis/discovery/validation/validation.go`` (ValidateEndpointSliceCreate /
Update: addressType required and immutable, at most 1000 endpoints of 1 to 100 addresses
of that type, at most 20000 ports with unique names), ``pkg/apis/discovery/v1/defaults.go``
(a port's name ``""`` and protocol TCP), ``pkg/registry/discovery/endpointslice/strategy.go``
(generation 1 on create, bumped on any change of addressType, endpoints or ports) and
``pkg/printers/internalversion/printers.go`` (printEndpointSlice, formatDiscoveryPorts,
formatDiscoveryEndpoints). The controller-manager's endpointslice controller writes the slices of
Services with a selector; any other slice is stored as written.
"""

from __future__ import annotations

import ipaddress
from typing import Any

from controlplane.api import listfields, validators
from controlplane.api.groups import columndocs
from controlplane.api.groups.common import (
    AGE_COL,
    NAME_COL,
    age,
    bump_generation_on,
    col,
    immutable,
    is_valid_port_num,
    name,
    objs,
    strs,
)
from controlplane.api.registry import JSON, KindSchema, Printer, Resource, Strategy
from controlplane.api.validators import ErrorList

GROUP = "discovery.k8s.io"
ADDRESS_TYPES = ["FQDN", "IPv4", "IPv6"]

TYPES: dict[str, tuple[str, dict[str, tuple[str, str]]]] = {
    "Endpoint": ("One backend of a service: its addresses, readiness and location.", {
        "addresses": ("[]string", "Addresses of the endpoint (of the slice's addressType); 1 to 100."),
        "conditions": ("EndpointConditions", "Readiness of the endpoint."),
        "hostname": ("string", "Hostname of the endpoint (a DNS label)."),
        "targetRef": ("ObjectReference", "The object behind the endpoint (usually a pod)."),
        "deprecatedTopology": ("map[string]", "Deprecated topology labels."),
        "nodeName": ("string", "Node hosting the endpoint."),
        "zone": ("string", "Zone of the endpoint."),
        "hints": ("EndpointHints", "Where the endpoint should be consumed (topology aware routing)."),
    }),
    "EndpointConditions": ("The conditions of an endpoint.", {
        "ready": ("boolean", "Ready to receive traffic (serving and not terminating)."),
        "serving": ("boolean", "Serving, possibly while terminating."),
        "terminating": ("boolean", "Terminating."),
    }),
    "EndpointHints": ("Consumption hints of an endpoint.", {
        "forZones": ("[]ForZone", "Zones that should consume this endpoint."),
    }),
    "ForZone": ("A zone.", {"name": ("string", "Name of the zone.")}),
    "DiscoveryEndpointPort": ("A port of the endpoints of a slice.", {
        "name": ("string", "Name of the port (a DNS label; unique in the slice); may be empty."),
        "protocol": ("string", "TCP (default), UDP or SCTP."),
        "port": ("int32", "Port number; unset: every port."),
        "appProtocol": ("string", "Application protocol of the port."),
    }),
}

listfields.declare(
    {"EndpointSlice": {"endpoints": listfields.ListField(list_type="atomic", elem="Endpoint"),
                       "ports": listfields.ATOMIC}},
    {"Endpoint": {"addresses": listfields.ListField(None, "", "set")}})


def default_endpoint_slice(obj: JSON) -> None:
    """SetDefaults_EndpointPort: name ``""``, protocol TCP."""
    for p in objs(obj.get("ports")):
        p.setdefault("name", "")
        p.setdefault("protocol", "TCP")


def _too_many(errs: ErrorList, path: str, n: int, limit: int) -> None:
    errs.append({"reason": "FieldValueTooMany", "field": path, "message": f"Too many: {n}: must have at most {limit} items"})


def _validate_address(addr: str, kind: object, path: str, errs: ErrorList) -> None:
    if kind in ("IPv4", "IPv6"):
        try:
            ip = ipaddress.ip_address(addr)
        except ValueError:
            ip = None
        want = 4 if kind == "IPv4" else 6
        if ip is None or ip.version != want:
            errs.invalid(path, addr, f"must be a valid {kind} address")
    elif kind == "FQDN":
        for m in validators.is_dns1123_subdomain(addr):
            errs.invalid(path, addr, m)
        if addr and len(addr.split(".")) < 2:
            errs.invalid(path, addr, "should be a domain with at least two segments separated by dots")


def validate_endpoint_slice(obj: JSON, old: JSON | None, errs: ErrorList) -> None:
    """ValidateEndpointSlice (and, on update, addressType immutable)."""
    at = obj.get("addressType")
    if not at:
        errs.required("addressType", "")
    elif at not in ADDRESS_TYPES:
        errs.not_supported("addressType", at, ADDRESS_TYPES)
    eps = objs(obj.get("endpoints"))
    if len(eps) > 1000:
        _too_many(errs, "endpoints", len(eps), 1000)
    for i, ep in enumerate(eps):
        ap = f"endpoints[{i}].addresses"
        addrs = strs(ep.get("addresses"))
        if not addrs:
            errs.required(ap, "must contain at least 1 address")
        elif len(addrs) > 100:
            _too_many(errs, ap, len(addrs), 100)
        for j, a in enumerate(addrs):
            _validate_address(a, at, f"{ap}[{j}]", errs)
        host = ep.get("hostname")
        if host:
            for m in validators.is_dns1123_label(str(host)):
                errs.invalid(f"endpoints[{i}].hostname", host, m)
        node = ep.get("nodeName")
        if node:
            for m in validators.is_dns1123_subdomain(str(node)):
                errs.invalid(f"endpoints[{i}].nodeName", node, m)
    ports = objs(obj.get("ports"))
    if len(ports) > 20000:
        _too_many(errs, "ports", len(ports), 20000)
    seen: set[str] = set()
    for i, p in enumerate(ports):
        pp = f"ports[{i}]"
        pname = str(p.get("name") or "")
        if pname:
            for m in validators.is_dns1123_label(pname):
                errs.invalid(f"{pp}.name", pname, m)
        if pname in seen:
            errs.duplicate(f"{pp}.name", pname)
        seen.add(pname)
        proto = p.get("protocol")
        if proto is None:
            errs.required(f"{pp}.protocol", "")
        elif proto not in ("TCP", "UDP", "SCTP"):
            errs.not_supported(f"{pp}.protocol", proto, ["SCTP", "TCP", "UDP"])
        if p.get("port") is not None:
            for m in is_valid_port_num(p["port"]):
                errs.invalid(f"{pp}.port", p["port"], m)
        app = p.get("appProtocol")
        if app:
            for m in validators.is_qualified_name(str(app)):
                errs.invalid(f"{pp}.appProtocol", app, m)
    if old is not None:
        immutable(errs, "addressType", at, old.get("addressType"))


def _with_more(items: list[str], more: bool, count: int) -> str:
    """listWithMoreString: up to three items, ``+ N more...``, ``<unset>`` for none."""
    out = ",".join(items)
    if more:
        return f"{out} + {count - 3} more..."
    return out or "<unset>"


def format_ports(ports: list[JSON]) -> str:
    """formatDiscoveryPorts: the port numbers (else names, else ``*``)."""
    items = []
    for p in ports[:3]:
        items.append(str(p["port"]) if p.get("port") is not None else str(p["name"]) if p.get("name") is not None
                     else "*")
    return _with_more(items, len(ports) > 3, len(ports))


def format_endpoints(eps: list[JSON]) -> str:
    """formatDiscoveryEndpoints: the addresses of every endpoint."""
    addrs = [a for ep in eps for a in strs(ep.get("addresses"))]
    return _with_more(addrs[:3], len(addrs) > 3, len(addrs))


def _row(obj: JSON, now: float) -> tuple[list[Any], list[JSON] | None]:
    return [name(obj), obj.get("addressType", ""), format_ports(objs(obj.get("ports"))),
            format_endpoints(objs(obj.get("endpoints"))), age(obj, now)], None


ENDPOINT_SLICE = Printer((
    NAME_COL,
    col("AddressType", description=columndocs.doc("EndpointSlice.addressType")),
    col("Ports", description=columndocs.doc("EndpointSlice.ports")),
    col("Endpoints", description=columndocs.doc("EndpointSlice.endpoints")),
    AGE_COL), _row)

ENTRIES: tuple[Resource, ...] = (
    Resource(GROUP, "v1", "endpointslices", "endpointslice", "EndpointSlice", True,
             printer=ENDPOINT_SLICE,
             schema=KindSchema("EndpointSlice lists a subset of the endpoints behind a service, all of one address "
                               "type.", {
                                   "addressType": ("string", "IPv4, IPv6 or FQDN: the type of every address. "
                                                             "Required, immutable."),
                                   "endpoints": ("[]Endpoint", "The endpoints (at most 1000)."),
                                   "ports": ("[]DiscoveryEndpointPort", "Ports of every endpoint (unique names).")},
                               TYPES),
             validate=validate_endpoint_slice, default=default_endpoint_slice,
             strategy=Strategy(tracks_generation=True,
                               prepare_update=bump_generation_on("addressType", "endpoints", "ports"))),
)
