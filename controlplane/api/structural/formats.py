"""The string formats that CRD value validation checks.

kube-openapi's ``strfmt.Default`` registry (``k8s.io/kube-openapi/pkg/validation/strfmt``:
``default.go``, ``date.go``, ``time.go``, ``duration.go``, ``bson.go``) as
``staging/src/k8s.io/apiextensions-apiserver/pkg/apiserver/validation/formats.go`` lists them
for CRDs. A string that fails its format gets ``<name> in body must be of type <format>:
"<value>"``; a format not listed here (``int32``, ``int64``, ``float``, ``double`` on numbers,
or an unknown name) is not checked, as kube-openapi does not check them.
"""

from __future__ import annotations

import base64
import binascii
import ipaddress
import re
from collections.abc import Callable
from datetime import date

_UUID = re.compile(r"(?i)^[0-9a-f]{8}-?[0-9a-f]{4}-?[0-9a-f]{4}-?[0-9a-f]{4}-?[0-9a-f]{12}$")
_UUID3 = re.compile(r"(?i)^[0-9a-f]{8}-[0-9a-f]{4}-3[0-9a-f]{3}-[0-9a-f]{4}-[0-9a-f]{12}$")
_UUID4 = re.compile(r"(?i)^[0-9a-f]{8}-[0-9a-f]{4}-4[0-9a-f]{3}-[89ab][0-9a-f]{3}-[0-9a-f]{12}$")
_UUID5 = re.compile(r"(?i)^[0-9a-f]{8}-[0-9a-f]{4}-5[0-9a-f]{3}-[89ab][0-9a-f]{3}-[0-9a-f]{12}$")
_HOSTNAME = re.compile(
    r"^([a-zA-Z0-9\u00a1-\uffff]((-?[a-zA-Z0-9\u00a1-\uffff]{0,62})?)|"
    r"([a-zA-Z0-9\u00a1-\uffff](([a-zA-Z0-9\-\u00a1-\uffff]{0,61}[a-zA-Z0-9\u00a1-\uffff])?)(\.)){1,}"
    r"([a-zA-Z\u00a1-\uffff]){2,63})$")
_EMAIL = re.compile(r"^[^@\s<>()\[\]\\,;:\"]+@[^@\s<>()\[\]\\,;:\"]+$")
_HEXCOLOR = re.compile(r"^#?([0-9a-fA-F]{3}|[0-9a-fA-F]{6})$")
_RGB_PART = r"\s*(0|[1-9]\d?|1\d\d?|2[0-4]\d|25[0-5])\s*"
_RGBCOLOR = re.compile(r"^rgb\(" + _RGB_PART + "," + _RGB_PART + "," + _RGB_PART + r"\)$")
_SSN = re.compile(r"^\d{3}[- ]?\d{2}[- ]?\d{4}$")
_ISBN10 = re.compile(r"^(?:[0-9]{9}X|[0-9]{10})$")
_ISBN13 = re.compile(r"^(?:[0-9]{13})$")
_CREDITCARD = re.compile(
    r"^(?:4[0-9]{12}(?:[0-9]{3})?|5[1-5][0-9]{14}|(222[1-9]|22[3-9][0-9]|2[3-6][0-9]{2}|27[01][0-9]|2720)[0-9]{12}|"
    r"6(?:011|5[0-9][0-9])[0-9]{12}|3[47][0-9]{13}|3(?:0[0-5]|[68][0-9])[0-9]{11}|(?:2131|1800|35\d{3})\d{11}|"
    r"6[27][0-9]{14})$")
_MAC = re.compile(r"^([0-9A-Fa-f]{2}[:-]){5}([0-9A-Fa-f]{2})$|^([0-9A-Fa-f]{2}[:-]){7}([0-9A-Fa-f]{2})$|"
                  r"^([0-9A-Fa-f]{2}[:-]){19}([0-9A-Fa-f]{2})$|^([0-9A-Fa-f]{4}\.){2}([0-9A-Fa-f]{4})$|"
                  r"^([0-9A-Fa-f]{4}\.){3}([0-9A-Fa-f]{4})$|^([0-9A-Fa-f]{4}\.){9}([0-9A-Fa-f]{4})$")
_DATE = re.compile(r"^\d{4}-\d{2}-\d{2}$")
_DATETIME = re.compile(
    r"^(\d{4})-(\d{2})-(\d{2})[Tt](\d{2}):(\d{2}):(\d{2})(\.\d+)?([Zz]|[+-]\d{2}:\d{2})?$")
_DURATION = re.compile(
    r"^(\s*[+-]?\d+(\.\d+)?\s*(ns|us|µs|ms|s|m|h|d|w|"
    r"nanoseconds?|microseconds?|milliseconds?|seconds?|minutes?|hours?|days?|weeks?|"
    r"sec|secs|min|mins|hr|hrs)\s*)+$")
_BSONOBJECTID = re.compile(r"^[0-9a-fA-F]{24}$")
_URI_SCHEME = re.compile(r"^[A-Za-z][A-Za-z0-9+.\-]*:")


def _is_date(s: str) -> bool:
    if not _DATE.match(s):
        return False
    try:
        date.fromisoformat(s)
    except ValueError:
        return False
    return True


def _is_datetime(s: str) -> bool:
    m = _DATETIME.match(s)
    if not m:
        return False
    y, mo, d, h, mi, sec = (int(g) for g in m.groups()[:6])
    if not _is_date(f"{y:04d}-{mo:02d}-{d:02d}"):
        return False
    return h < 24 and mi < 60 and sec < 60


def _is_byte(s: str) -> bool:
    try:
        base64.b64decode(s, validate=True)
    except (binascii.Error, ValueError):
        return False
    return True


def _is_ipv4(s: str) -> bool:
    try:
        ipaddress.IPv4Address(s)
    except ValueError:
        return False
    return True


def _is_ipv6(s: str) -> bool:
    try:
        ipaddress.IPv6Address(s)
    except ValueError:
        return False
    return True


def _is_cidr(s: str) -> bool:
    try:
        ipaddress.ip_network(s, strict=False)
    except ValueError:
        return False
    return "/" in s


def _is_uri(s: str) -> bool:
    # url.ParseRequestURI: an absolute URI or an absolute path
    return bool(s) and (s.startswith("/") or bool(_URI_SCHEME.match(s))) and " " not in s


def _is_isbn(s: str) -> bool:
    t = s.replace("-", "").replace(" ", "")
    return bool(_ISBN10.match(t) or _ISBN13.match(t))


#: format name → checker (kube-openapi strfmt.Default, names as CRDs may use them)
FORMATS: dict[str, Callable[[str], bool]] = {
    "bsonobjectid": lambda s: bool(_BSONOBJECTID.match(s)),
    "uri": _is_uri,
    "email": lambda s: bool(_EMAIL.match(s)),
    "hostname": lambda s: len(s) <= 255 and bool(_HOSTNAME.match(s)),
    "ipv4": _is_ipv4,
    "ipv6": _is_ipv6,
    "cidr": _is_cidr,
    "mac": lambda s: bool(_MAC.match(s)),
    "uuid": lambda s: bool(_UUID.match(s)),
    "uuid3": lambda s: bool(_UUID3.match(s)),
    "uuid4": lambda s: bool(_UUID4.match(s)),
    "uuid5": lambda s: bool(_UUID5.match(s)),
    "isbn": _is_isbn,
    "isbn10": lambda s: bool(_ISBN10.match(s.replace("-", "").replace(" ", ""))),
    "isbn13": lambda s: bool(_ISBN13.match(s.replace("-", "").replace(" ", ""))),
    "creditcard": lambda s: bool(_CREDITCARD.match(s.replace("-", "").replace(" ", ""))),
    "ssn": lambda s: bool(_SSN.match(s)),
    "hexcolor": lambda s: bool(_HEXCOLOR.match(s)),
    "rgbcolor": lambda s: bool(_RGBCOLOR.match(s)),
    "byte": _is_byte,
    "password": lambda s: True,
    "date": _is_date,
    "duration": lambda s: bool(_DURATION.match(s)),
    "datetime": _is_datetime,
    "date-time": _is_datetime,
}

#: every format a CRD schema may name (the string formats plus the numeric ones that are
#: accepted and not checked); ``apiextensions/validation/formats.go``
SUPPORTED_FORMATS = frozenset(FORMATS) | {"int32", "int64", "float", "double", "quantity", "binary"}


def check_format(fmt: str, value: str) -> bool:
    """Whether ``value`` is valid for the string format ``fmt`` (True for a format that is
    not checked)."""
    f = FORMATS.get(fmt)
    return True if f is None else f(value)
