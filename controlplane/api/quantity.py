"""Kubernetes resource quantities (``100m``, ``1Gi``, ``1e3``) as exact fractions.

A quantity is ``<signed number><suffix>`` where the suffix is one of

* decimal SI: ``n u m "" k M G T P E`` (10^-9 .. 10^18),
* binary SI: ``Ki Mi Gi Ti Pi Ei`` (2^10 .. 2^60),
* a decimal exponent: ``e3``, ``E-2`` (``E`` alone is exa).

Values are returned as :class:`fractions.Fraction` so that comparisons such as
``requests <= limits`` are exact. Source of the grammar and messages:
``staging/src/k8s.io/apimachinery/pkg/api/resource/quantity.go`` (ParseQuantity,
ErrFormatWrong, ErrSuffix) and ``suffix.go``.
"""

from __future__ import annotations

import functools
import math
import re
from fractions import Fraction

QUANTITY_REGEX = r"^([+-]?[0-9.]+)([eEinumkKMGTP]*[-+]?[0-9]*)$"
ERR_FORMAT_WRONG = f"quantities must match the regular expression '{QUANTITY_REGEX}'"
ERR_SUFFIX = "unable to parse quantity's suffix"

_RE = re.compile(QUANTITY_REGEX)
_NUMBER = re.compile(r"^[+-]?([0-9]+(\.[0-9]*)?|\.[0-9]+)$")
_EXPONENT = re.compile(r"^[eE]([-+]?[0-9]+)$")

DECIMAL_SUFFIXES: dict[str, Fraction] = {
    "n": Fraction(1, 10**9), "u": Fraction(1, 10**6), "m": Fraction(1, 1000), "": Fraction(1),
    "k": Fraction(10**3), "M": Fraction(10**6), "G": Fraction(10**9), "T": Fraction(10**12),
    "P": Fraction(10**15), "E": Fraction(10**18),
}
BINARY_SUFFIXES: dict[str, Fraction] = {
    "Ki": Fraction(2**10), "Mi": Fraction(2**20), "Gi": Fraction(2**30),
    "Ti": Fraction(2**40), "Pi": Fraction(2**50), "Ei": Fraction(2**60),
}


def parse_quantity(s: str | int | float | Fraction) -> Fraction:
    """Parse a Kubernetes quantity into an exact :class:`Fraction` of base units (memoized for
    strings: the same few request/limit strings are parsed on every pod write)."""
    if isinstance(s, str):
        return _parse_str(s)
    return _parse_quantity(s)


@functools.lru_cache(maxsize=4096)
def _parse_str(s: str) -> Fraction:
    return _parse_quantity(s)


def _parse_quantity(s: str | int | float | Fraction) -> Fraction:
    """Parse a Kubernetes quantity into an exact :class:`Fraction` of base units.

    ``"100m"`` → 1/10, ``"1Gi"`` → 1073741824, ``"1e3"`` → 1000, ``2`` → 2.
    Numbers (int, float, Fraction) are accepted as JSON may carry them.

    Raises ValueError with Kubernetes' messages: ``ERR_FORMAT_WRONG`` when the
    text does not match the quantity grammar, ``ERR_SUFFIX`` for an unknown suffix.
    Source: quantity.go ParseQuantity.
    """
    if isinstance(s, bool):
        raise ValueError(ERR_FORMAT_WRONG)
    if isinstance(s, Fraction):
        return s
    if isinstance(s, int):
        return Fraction(s)
    if isinstance(s, float):
        if not math.isfinite(s):
            raise ValueError(ERR_FORMAT_WRONG)
        return Fraction(str(s))
    if not isinstance(s, str):
        raise ValueError(ERR_FORMAT_WRONG)
    m = _RE.match(s)
    if not m or not _NUMBER.match(m.group(1)):
        raise ValueError(ERR_FORMAT_WRONG)
    number, suffix = m.group(1), m.group(2)
    value = Fraction(number if not number.endswith(".") else number[:-1] or "0")
    if suffix in DECIMAL_SUFFIXES:
        return value * DECIMAL_SUFFIXES[suffix]
    if suffix in BINARY_SUFFIXES:
        return value * BINARY_SUFFIXES[suffix]
    e = _EXPONENT.match(suffix)
    if e:
        return value * Fraction(10) ** int(e.group(1))
    raise ValueError(ERR_SUFFIX)


def is_quantity(s: object) -> bool:
    """True when ``s`` parses as a quantity (see :func:`parse_quantity`)."""
    try:
        parse_quantity(s)  # type: ignore[arg-type]
    except ValueError:
        return False
    return True


def cpu_millis(q: str | int | float | Fraction) -> int:
    """CPU quantity in millicores, rounded up: ``"100m"`` → 100, ``"1.5"`` → 1500,
    ``"0.0001"`` → 1. Mirrors Quantity.MilliValue (which rounds up). Raises ValueError."""
    return math.ceil(parse_quantity(q) * 1000)


def to_bytes(q: str | int | float | Fraction) -> int:
    """Memory/storage quantity in bytes, rounded up: ``"1Ki"`` → 1024, ``"1.5k"`` → 1500.
    Mirrors Quantity.Value (rounds up). Raises ValueError."""
    return math.ceil(parse_quantity(q))


def format_quantity(value: Fraction | int | str, binary: bool = False) -> str:
    """Canonical text of a quantity, as Quantity.String() would print it.

    ``binary=True`` (BinarySI format, used for memory) picks the largest ``Ki``..``Ei``
    suffix that divides the value exactly, falling back to decimal; otherwise the
    largest decimal suffix giving an integer mantissa, rounding up to nano units
    (``Fraction(1, 10)`` → ``"100m"``, ``1500`` → ``"1500"``, ``2000`` → ``"2k"``).
    """
    v = parse_quantity(value) if not isinstance(value, Fraction) else value
    if v == 0:
        return "0"
    sign = "-" if v < 0 else ""
    a = abs(v)
    if binary and a.denominator == 1 and a >= 1024:
        for suffix, mult in reversed(BINARY_SUFFIXES.items()):
            if (a / mult).denominator == 1:
                return f"{sign}{a // mult}{suffix}"
    # Decimal: the largest suffix that leaves an integer mantissa.
    for suffix in ("E", "P", "T", "G", "M", "k", "", "m", "u", "n"):
        mant = a / DECIMAL_SUFFIXES[suffix]
        if mant.denominator == 1:
            return f"{sign}{mant}{suffix}"
    return f"{sign}{math.ceil(a * 10**9)}n"
