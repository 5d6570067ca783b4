"""Quantities as resource.Quantity parses them (apimachinery pkg/api/resource/quantity.go)."""
from fractions import Fraction

import pytest

from controlplane.api.quantity import (
    ERR_FORMAT_WRONG,
    ERR_SUFFIX,
    cpu_millis,
    format_quantity,
    parse_quantity,
    to_bytes,
)

PARSE_CASES = [
    ("100m", Fraction(1, 10)),
    ("1", Fraction(1)),
    ("1.5", Fraction(3, 2)),
    (".5", Fraction(1, 2)),
    ("1k", Fraction(1000)),
    ("1M", Fraction(10**6)),
    ("1G", Fraction(10**9)),
    ("1E", Fraction(10**18)),
    ("1Ki", Fraction(1024)),
    ("1Mi", Fraction(1024**2)),
    ("2Gi", Fraction(2 * 1024**3)),
    ("1e3", Fraction(1000)),
    ("1E-2", Fraction(1, 100)),
    ("5n", Fraction(5, 10**9)),
    ("-1", Fraction(-1)),
    ("+2u", Fraction(2, 10**6)),
    (3, Fraction(3)),
    (0.25, Fraction(1, 4)),
]


@pytest.mark.parametrize("text, value", PARSE_CASES,
                         ids=[f"{t!r} is {v}" for t, v in PARSE_CASES])
def test_parse(text, value):
    assert parse_quantity(text) == value


@pytest.mark.parametrize("bad", ["", "abc", "1 ", " 1", "1..2", "1Q", "Mi", "1.2.3"])
def test_format_errors(bad):
    with pytest.raises(ValueError) as e:
        parse_quantity(bad)
    assert str(e.value) == ERR_FORMAT_WRONG


def test_suffix_error():
    with pytest.raises(ValueError, match=ERR_SUFFIX):
        parse_quantity("1kk")


def test_error_message_is_kubernetes_wording():
    assert ERR_FORMAT_WRONG == ("quantities must match the regular expression "
                                "'^([+-]?[0-9.]+)([eEinumkKMGTP]*[-+]?[0-9]*)$'")


@pytest.mark.parametrize("q, millis", [("100m", 100), ("1", 1000), ("0.5", 500), ("0.0001", 1), ("2k", 2_000_000)])
def test_cpu_millis_rounds_up(q, millis):
    assert cpu_millis(q) == millis


@pytest.mark.parametrize("q, n", [("1Ki", 1024), ("128Mi", 134217728), ("1.5k", 1500), ("100m", 1), ("1G", 10**9)])
def test_to_bytes(q, n):
    assert to_bytes(q) == n


FORMAT_CASES = [
    (Fraction(1, 10), False, "100m"), (Fraction(1500), False, "1500"), (Fraction(2000), False, "2k"),
    (Fraction(0), False, "0"), (Fraction(1024**3), True, "1Gi"), (Fraction(1536), True, "1536"),
    (Fraction(3 * 1024**2), True, "3Mi"), (Fraction(-2000), False, "-2k"),
]


@pytest.mark.parametrize("value, binary, text", FORMAT_CASES,
                         ids=[f"{v} {'binary' if b else 'decimal'} is {t}" for v, b, t in FORMAT_CASES])
def test_format(value, binary, text):
    assert format_quantity(value, binary) == text
    assert parse_quantity(text) == value
