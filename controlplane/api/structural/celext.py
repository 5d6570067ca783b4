"""Kubernetes' CEL libraries for cel-python: the functions CRD validation rules may call
beyond standard CEL.

``staging/src/k8s.io/apiserver/pkg/cel/library``: ``lists.go`` (isSorted, sum, min, max,
indexOf, lastIndexOf), ``regex.go`` (find, findAll), ``quantity.go`` (quantity, isQuantity,
isGreaterThan, isLessThan, compareTo, add, sub, asInteger, asApproximateFloat, isInteger,
sign), ``urls.go`` (url, isURL, getScheme, getHost, getHostname, getPort, getEscapedPath,
getQuery), ``ip.go`` / ``cidr.go`` (ip, isIP, cidr, isCIDR, family, isLoopback, ...,
containsIP, containsCIDR, prefixLength) and cel-go's strings extension (lowerAscii,
upperAscii, trim, split, join, replace, substring, charAt, indexOf, lastIndexOf). A rule
calling anything else is reported as not supported (:mod:`controlplane.api.structural.cel`).
"""

from __future__ import annotations

import ipaddress
import math
import re
from collections.abc import Callable
from fractions import Fraction
from typing import Any
from urllib.parse import urlsplit

from celpy import celtypes

from controlplane.api.quantity import parse_quantity


def _s(v: Any) -> str:
    return str(v)


def _lower_ascii(s: Any) -> celtypes.StringType:
    return celtypes.StringType("".join(c.lower() if c.isascii() else c for c in _s(s)))


def _upper_ascii(s: Any) -> celtypes.StringType:
    return celtypes.StringType("".join(c.upper() if c.isascii() else c for c in _s(s)))


def _trim(s: Any) -> celtypes.StringType:
    return celtypes.StringType(_s(s).strip())


def _split(s: Any, sep: Any, n: Any = None) -> celtypes.ListType:
    parts = _s(s).split(_s(sep)) if n is None or int(n) < 0 else _s(s).split(_s(sep), max(int(n) - 1, 0))
    if n is not None and int(n) == 0:
        parts = []
    return celtypes.ListType([celtypes.StringType(p) for p in parts])


def _join(lst: Any, sep: Any = "") -> celtypes.StringType:
    return celtypes.StringType(_s(sep).join(_s(x) for x in lst))


def _replace(s: Any, old: Any, new: Any, n: Any = None) -> celtypes.StringType:
    return celtypes.StringType(_s(s).replace(_s(old), _s(new), -1 if n is None else int(n)))


def _index_of(target: Any, x: Any, start: Any = None) -> celtypes.IntType:
    if isinstance(target, str):
        return celtypes.IntType(_s(target).find(_s(x), 0 if start is None else int(start)))
    for i, v in enumerate(target):
        if v == x:
            return celtypes.IntType(i)
    return celtypes.IntType(-1)


def _last_index_of(target: Any, x: Any) -> celtypes.IntType:
    if isinstance(target, str):
        return celtypes.IntType(_s(target).rfind(_s(x)))
    idx = -1
    for i, v in enumerate(target):
        if v == x:
            idx = i
    return celtypes.IntType(idx)


def _substring(s: Any, start: Any, end: Any = None) -> celtypes.StringType:
    return celtypes.StringType(_s(s)[int(start):] if end is None else _s(s)[int(start):int(end)])


def _char_at(s: Any, i: Any) -> celtypes.StringType:
    t = _s(s)
    return celtypes.StringType(t[int(i)] if int(i) < len(t) else "")


def _is_sorted(lst: Any) -> celtypes.BoolType:
    xs = list(lst)
    return celtypes.BoolType(all(xs[i] <= xs[i + 1] for i in range(len(xs) - 1)))


def _sum(lst: Any) -> Any:
    xs = list(lst)
    if not xs:
        return celtypes.IntType(0)
    total = xs[0]
    for x in xs[1:]:
        total = total + x
    return total


def _min(lst: Any) -> Any:
    return min(list(lst))


def _max(lst: Any) -> Any:
    return max(list(lst))


def _find(s: Any, pattern: Any) -> celtypes.StringType:
    m = re.search(_s(pattern), _s(s))
    return celtypes.StringType(m.group(0) if m else "")


def _find_all(s: Any, pattern: Any, n: Any = None) -> celtypes.ListType:
    found = [m.group(0) for m in re.finditer(_s(pattern), _s(s))]
    if n is not None and int(n) >= 0:
        found = found[:int(n)]
    return celtypes.ListType([celtypes.StringType(f) for f in found])


# --------------------------------------------------------------------------- quantity

class Quantity:
    """A resource.Quantity value in CEL (compared by value)."""

    __slots__ = ("value",)

    def __init__(self, value: Fraction) -> None:
        self.value = value

    def __eq__(self, other: object) -> bool:
        return isinstance(other, Quantity) and self.value == other.value

    def __hash__(self) -> int:
        return hash(self.value)


def _q(v: Any) -> Fraction:
    if isinstance(v, Quantity):
        return v.value
    if isinstance(v, (int, float)) and not isinstance(v, bool):
        return Fraction(v)
    raise TypeError("no such overload")


def _quantity(s: Any) -> Quantity:
    return Quantity(parse_quantity(str(s)))


def _is_quantity(s: Any) -> celtypes.BoolType:
    try:
        parse_quantity(str(s))
    except ValueError:
        return celtypes.BoolType(False)
    return celtypes.BoolType(True)


def _compare_to(a: Any, b: Any) -> celtypes.IntType:
    x, y = _q(a), _q(b)
    return celtypes.IntType((x > y) - (x < y))


def _as_integer(a: Any) -> celtypes.IntType:
    v = _q(a)
    if v.denominator != 1 or not -(1 << 63) <= v <= (1 << 63) - 1:
        raise ValueError("cannot convert value to integer")
    return celtypes.IntType(int(v))


def _sign(a: Any) -> celtypes.IntType:
    v = _q(a)
    return celtypes.IntType((v > 0) - (v < 0))


# --------------------------------------------------------------------------- URL

class URL:
    """A parsed URL in CEL (url.URL)."""

    __slots__ = ("raw", "parts")

    def __init__(self, raw: str) -> None:
        self.raw = raw
        self.parts = urlsplit(raw)

    def __eq__(self, other: object) -> bool:
        return isinstance(other, URL) and self.raw == other.raw

    def __hash__(self) -> int:
        return hash(self.raw)


def _parse_url(s: str) -> URL:
    # url.ParseRequestURI: absolute URI (scheme) or absolute path, no fragment
    if not s or "#" in s or not (s.startswith("/") or re.match(r"^[A-Za-z][A-Za-z0-9+.\-]*:", s)):
        raise ValueError(f"URL parse error during conversion from string: parse {s!r}: invalid URI for request")
    return URL(s)


def _url(s: Any) -> URL:
    return _parse_url(str(s))


def _is_url(s: Any) -> celtypes.BoolType:
    try:
        _parse_url(str(s))
    except ValueError:
        return celtypes.BoolType(False)
    return celtypes.BoolType(True)


def _u(v: Any) -> URL:
    if not isinstance(v, URL):
        raise TypeError("no such overload")
    return v


def _hostname(u: URL) -> str:
    host = u.parts.netloc.rsplit("@", 1)[-1]
    if host.startswith("["):
        return host[1:host.index("]")] if "]" in host else host
    return host.rsplit(":", 1)[0] if ":" in host else host


def _port(u: URL) -> str:
    host = u.parts.netloc.rsplit("@", 1)[-1]
    if host.startswith("["):
        rest = host[host.index("]") + 1:] if "]" in host else ""
        return rest[1:] if rest.startswith(":") else ""
    return host.rsplit(":", 1)[1] if ":" in host else ""


# --------------------------------------------------------------------------- IP / CIDR

class IP:
    """A net/netip address in CEL."""

    __slots__ = ("addr",)

    def __init__(self, addr: ipaddress.IPv4Address | ipaddress.IPv6Address) -> None:
        self.addr = addr

    def __eq__(self, other: object) -> bool:
        return isinstance(other, IP) and self.addr == other.addr

    def __hash__(self) -> int:
        return hash(self.addr)


class CIDR:
    """A net/netip prefix in CEL."""

    __slots__ = ("net", "addr")

    def __init__(self, text: str) -> None:
        self.net = ipaddress.ip_network(text, strict=False)
        self.addr = ipaddress.ip_address(text.split("/", 1)[0])

    def __eq__(self, other: object) -> bool:
        return isinstance(other, CIDR) and (self.net, self.addr) == (other.net, other.addr)

    def __hash__(self) -> int:
        return hash((self.net, self.addr))


def _parse_ip(s: str) -> IP:
    if "%" in s:
        raise ValueError(f"IP Address with zone value is not allowed: {s}")
    addr = ipaddress.ip_address(s)
    if isinstance(addr, ipaddress.IPv6Address) and addr.ipv4_mapped is not None:
        raise ValueError(f"IPv4-mapped IPv6 address is not allowed: {s}")
    return IP(addr)


def _ip(s: Any) -> IP:
    if isinstance(s, CIDR):
        return IP(s.addr)
    return _parse_ip(str(s))


def _is_ip(s: Any) -> celtypes.BoolType:
    try:
        _parse_ip(str(s))
    except ValueError:
        return celtypes.BoolType(False)
    return celtypes.BoolType(True)


def _cidr(s: Any) -> CIDR:
    t = str(s)
    if "/" not in t:
        raise ValueError(f"network address parse error during conversion from string: {t}")
    return CIDR(t)


def _is_cidr(s: Any) -> celtypes.BoolType:
    try:
        _cidr(s)
    except ValueError:
        return celtypes.BoolType(False)
    return celtypes.BoolType(True)


def _addr(v: Any) -> ipaddress.IPv4Address | ipaddress.IPv6Address:
    if isinstance(v, IP):
        return v.addr
    if isinstance(v, CIDR):
        return v.addr
    raise TypeError("no such overload")


def _contains_ip(c: Any, ip: Any) -> celtypes.BoolType:
    if not isinstance(c, CIDR):
        raise TypeError("no such overload")
    addr = ip.addr if isinstance(ip, IP) else _parse_ip(str(ip)).addr
    return celtypes.BoolType(addr.version == c.net.version and addr in c.net)


def _contains_cidr(c: Any, other: Any) -> celtypes.BoolType:
    if not isinstance(c, CIDR):
        raise TypeError("no such overload")
    o = other if isinstance(other, CIDR) else _cidr(other)
    return celtypes.BoolType(o.net.version == c.net.version and o.net.subnet_of(c.net))  # type: ignore[arg-type]


def _masked(c: Any) -> CIDR:
    if not isinstance(c, CIDR):
        raise TypeError("no such overload")
    return CIDR(str(c.net))


def _prefix_length(c: Any) -> celtypes.IntType:
    if not isinstance(c, CIDR):
        raise TypeError("no such overload")
    return celtypes.IntType(c.net.prefixlen)


#: the Kubernetes CEL library functions implemented here, by name (methods receive their
#: target first)
EXTENSIONS: dict[str, Callable[..., Any]] = {
    # strings (cel-go ext)
    "lowerAscii": _lower_ascii, "upperAscii": _upper_ascii, "trim": _trim, "split": _split, "join": _join,
    "replace": _replace, "indexOf": _index_of, "lastIndexOf": _last_index_of, "substring": _substring,
    "charAt": _char_at,
    # lists
    "isSorted": _is_sorted, "sum": _sum, "min": _min, "max": _max,
    # regex
    "find": _find, "findAll": _find_all,
    # quantity
    "quantity": _quantity, "isQuantity": _is_quantity,
    "isGreaterThan": lambda a, b: celtypes.BoolType(_q(a) > _q(b)),
    "isLessThan": lambda a, b: celtypes.BoolType(_q(a) < _q(b)),
    "compareTo": _compare_to,
    "add": lambda a, b: Quantity(_q(a) + _q(b)), "sub": lambda a, b: Quantity(_q(a) - _q(b)),
    "asInteger": _as_integer, "asApproximateFloat": lambda a: celtypes.DoubleType(float(_q(a))),
    "isInteger": lambda a: celtypes.BoolType(_q(a).denominator == 1 and math.isfinite(float(_q(a)))),
    "sign": _sign,
    # URL
    "url": _url, "isURL": _is_url,
    "getScheme": lambda u: celtypes.StringType(_u(u).parts.scheme),
    "getHost": lambda u: celtypes.StringType(_u(u).parts.netloc.rsplit("@", 1)[-1]),
    "getHostname": lambda u: celtypes.StringType(_hostname(_u(u))),
    "getPort": lambda u: celtypes.StringType(_port(_u(u))),
    "getEscapedPath": lambda u: celtypes.StringType(_u(u).parts.path),
    "getQuery": lambda u: celtypes.MapType({
        celtypes.StringType(k): celtypes.ListType([celtypes.StringType(x) for x in vs])
        for k, vs in _query(_u(u).parts.query).items()}),
    # IP / CIDR
    "ip": _ip, "isIP": _is_ip, "cidr": _cidr, "isCIDR": _is_cidr,
    "family": lambda v: celtypes.IntType(_addr(v).version),
    "isUnspecified": lambda v: celtypes.BoolType(_addr(v).is_unspecified),
    "isLoopback": lambda v: celtypes.BoolType(_addr(v).is_loopback),
    "isLinkLocalMulticast": lambda v: celtypes.BoolType(_addr(v).is_multicast and _addr(v).is_link_local),
    "isLinkLocalUnicast": lambda v: celtypes.BoolType(not _addr(v).is_multicast and _addr(v).is_link_local),
    "isGlobalUnicast": lambda v: celtypes.BoolType(
        not (_addr(v).is_multicast or _addr(v).is_loopback or _addr(v).is_link_local or _addr(v).is_unspecified
             or _addr(v) == ipaddress.ip_address("255.255.255.255"))),
    "containsIP": _contains_ip, "containsCIDR": _contains_cidr, "masked": _masked, "prefixLength": _prefix_length,
}


def _query(q: str) -> dict[str, list[str]]:
    from urllib.parse import parse_qs
    return parse_qs(q, keep_blank_values=True)
