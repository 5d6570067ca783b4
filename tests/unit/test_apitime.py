"""controlplane.apitime: metav1.Time / MicroTime text as apimachinery writes and reads it, the
one clock every component stamps times from, and Go's time.ParseDuration / Duration.String
(cases from Go's src/time/time_test.go parseDurationTests, parseDurationErrorTests and
durationTests)."""

from __future__ import annotations

import pytest

from controlplane import apitime
from controlplane.apitime import (
    HOUR,
    MICROSECOND,
    MILLISECOND,
    MINUTE,
    NANOSECOND,
    SECOND,
    DurationError,
    TimeParseError,
    format_duration,
    format_duration_ns,
    format_micro_time,
    format_time,
    parse_duration,
    parse_duration_ns,
    parse_micro_time,
    parse_time,
    time_or_none,
)

T = 1796000523  # 2026-11-30T01:02:03Z

# --------------------------------------------------------------------------- durations


@pytest.mark.parametrize("text, want", [
    pytest.param("0", 0, id="zero without a unit"),
    pytest.param("5s", 5 * SECOND, id="seconds"),
    pytest.param("30s", 30 * SECOND, id="two-digit seconds"),
    pytest.param("1478s", 1478 * SECOND, id="many seconds"),
    pytest.param("-5s", -5 * SECOND, id="negative"),
    pytest.param("+5s", 5 * SECOND, id="explicit plus"),
    pytest.param("-0", 0, id="negative zero"),
    pytest.param("+0", 0, id="positive zero"),
    pytest.param("5.0s", 5 * SECOND, id="decimal zero fraction"),
    pytest.param("5.6s", 5 * SECOND + 600 * MILLISECOND, id="decimal fraction"),
    pytest.param("5.s", 5 * SECOND, id="trailing point"),
    pytest.param(".5s", 500 * MILLISECOND, id="leading point"),
    pytest.param("1.004s", SECOND + 4 * MILLISECOND, id="millisecond fraction"),
    pytest.param("100.00100s", 100 * SECOND + MILLISECOND, id="fraction with trailing zeros"),
    pytest.param("10ns", 10 * NANOSECOND, id="nanoseconds"),
    pytest.param("11us", 11 * MICROSECOND, id="microseconds us"),
    pytest.param("12\u00b5s", 12 * MICROSECOND, id="microseconds micro sign"),
    pytest.param("12\u03bcs", 12 * MICROSECOND, id="microseconds greek mu"),
    pytest.param("13ms", 13 * MILLISECOND, id="milliseconds"),
    pytest.param("15m", 15 * MINUTE, id="minutes"),
    pytest.param("16h", 16 * HOUR, id="hours"),
    pytest.param("1m30s", 90 * SECOND, id="minutes and seconds"),
    pytest.param("3h30m", 3 * HOUR + 30 * MINUTE, id="hours and minutes"),
    pytest.param("10.5s4m", 4 * MINUTE + 10 * SECOND + 500 * MILLISECOND, id="units in any order"),
    pytest.param("-2m3.4s", -(2 * MINUTE + 3 * SECOND + 400 * MILLISECOND), id="negative composite"),
    pytest.param("1h2m3s4ms5us6ns", HOUR + 2 * MINUTE + 3 * SECOND + 4 * MILLISECOND + 5 * MICROSECOND + 6,
                 id="every unit"),
    pytest.param("52763797000ns", 52763797000, id="large value"),
    pytest.param("0.3333333333333333333h", 20 * MINUTE, id="more than nine fraction digits"),
    pytest.param("9007199254740993ns", (1 << 53) + 1, id="beyond float precision"),
    pytest.param("9223372036854775807ns", (1 << 63) - 1, id="largest int64"),
    pytest.param("9223372036854775.807us", (1 << 63) - 1, id="largest int64 with a fraction"),
    pytest.param("9223372036s854ms775us807ns", (1 << 63) - 1, id="largest int64 composite"),
    pytest.param("-9223372036854775808ns", -(1 << 63), id="smallest int64"),
    pytest.param("-2562047h47m16.854775808s", -(1 << 63), id="smallest int64 round trip"),
    pytest.param("0.100000000000000000000h", 6 * MINUTE, id="huge fraction"),
    pytest.param("0.830103483285477580700h", 49 * MINUTE + 48 * SECOND + 372539827, id="fraction overflow check"),
])
def test_parse_duration(text, want):
    assert parse_duration_ns(text) == want
    assert parse_duration(text) == want / SECOND


@pytest.mark.parametrize("text, message", [
    pytest.param("", 'time: invalid duration ""', id="empty"),
    pytest.param("3", 'time: missing unit in duration "3"', id="bare number"),
    pytest.param("-", 'time: invalid duration "-"', id="sign only"),
    pytest.param("s", 'time: invalid duration "s"', id="unit only"),
    pytest.param(".", 'time: invalid duration "."', id="point only"),
    pytest.param("-.", 'time: invalid duration "-."', id="sign and point"),
    pytest.param(".s", 'time: invalid duration ".s"', id="point and unit"),
    pytest.param("+.s", 'time: invalid duration "+.s"', id="sign point unit"),
    pytest.param("1d", 'time: unknown unit "d" in duration "1d"', id="days are no unit"),
    pytest.param("1m30", 'time: missing unit in duration "1m30"', id="trailing number"),
    pytest.param("1e3s", 'time: unknown unit "e" in duration "1e3s"', id="exponent"),
    pytest.param(" 1s", 'time: invalid duration " 1s"', id="leading space"),
    pytest.param("1 s", 'time: unknown unit " s" in duration "1 s"', id="inner space"),
    pytest.param("\ufffd", 'time: invalid duration "\\xef\\xbf\\xbd"', id="non-ASCII quoted as bytes"),
    pytest.param('1"s', 'time: unknown unit "\\"s" in duration "1\\"s"', id="quote escaped"),
    pytest.param("9223372036854775810ns", 'time: invalid duration "9223372036854775810ns"', id="overflow"),
    pytest.param("9223372036854775808ns", 'time: invalid duration "9223372036854775808ns"', id="overflow by one"),
    pytest.param("-9223372036854775809ns", 'time: invalid duration "-9223372036854775809ns"',
                 id="negative overflow"),
    pytest.param("9223372036854776us", 'time: invalid duration "9223372036854776us"', id="unit overflow"),
    pytest.param("3000000h", 'time: invalid duration "3000000h"', id="hours overflow"),
    pytest.param("9223372036854775.808us", 'time: invalid duration "9223372036854775.808us"',
                 id="fraction overflow"),
    pytest.param("9223372036854ms775us808ns", 'time: invalid duration "9223372036854ms775us808ns"',
                 id="sum overflow"),
])
def test_parse_duration_errors(text, message):
    with pytest.raises(DurationError) as e:
        parse_duration_ns(text)
    assert str(e.value) == message
    assert isinstance(e.value, ValueError)


@pytest.mark.parametrize("ns, text", [
    pytest.param(0, "0s", id="zero"),
    pytest.param(1, "1ns", id="nanosecond"),
    pytest.param(1100, "1.1\u00b5s", id="microseconds with the micro sign"),
    pytest.param(2200 * MICROSECOND, "2.2ms", id="milliseconds"),
    pytest.param(3300 * MILLISECOND, "3.3s", id="seconds"),
    pytest.param(4 * MINUTE + 5 * SECOND, "4m5s", id="minutes"),
    pytest.param(4 * MINUTE + 5001 * MILLISECOND, "4m5.001s", id="minutes with a fraction"),
    pytest.param(5 * HOUR + 6 * MINUTE + 7001 * MILLISECOND, "5h6m7.001s", id="hours"),
    pytest.param(8 * MINUTE + 1, "8m0.000000001s", id="nanosecond past minutes"),
    pytest.param(HOUR, "1h0m0s", id="whole hour keeps zero units"),
    pytest.param(-2 * SECOND, "-2s", id="negative"),
    pytest.param((1 << 63) - 1, "2562047h47m16.854775807s", id="largest"),
    pytest.param(-(1 << 63), "-2562047h47m16.854775808s", id="smallest"),
])
def test_format_duration(ns, text):
    assert format_duration_ns(ns) == text
    assert parse_duration_ns(text) == ns


def test_format_duration_of_seconds():
    assert [format_duration(s) for s in (0, 0.2, 1.5, 80, 300)] == ["0s", "200ms", "1.5s", "1m20s", "5m0s"]


# --------------------------------------------------------------------------- times


@pytest.mark.parametrize("t, text", [
    pytest.param(T, "2026-11-30T01:02:03Z", id="whole second"),
    pytest.param(T + 0.999, "2026-11-30T01:02:03Z", id="fraction truncated"),
    pytest.param(0, "1970-01-01T00:00:00Z", id="epoch"),
])
def test_format_time(t, text):
    assert format_time(t) == text


@pytest.mark.parametrize("t, text", [
    pytest.param(T + 0.123456, "2026-11-30T01:02:03.123456Z", id="six digits"),
    pytest.param(T, "2026-11-30T01:02:03.000000Z", id="whole second keeps six zeros"),
    pytest.param(T + 0.5, "2026-11-30T01:02:03.500000Z", id="padded"),
])
def test_format_micro_time(t, text):
    assert format_micro_time(t) == text


@pytest.mark.parametrize("text, t", [
    pytest.param("2026-11-30T01:02:03Z", T, id="UTC"),
    pytest.param("2026-11-30T02:02:03+01:00", T, id="positive offset"),
    pytest.param("2026-11-29T20:02:03-05:00", T, id="negative offset"),
    pytest.param("2026-11-30T01:02:03.5Z", T + 0.5, id="fraction accepted"),
    pytest.param("2026-11-30T01:02:03.123456Z", T + 0.123456, id="MicroTime text"),
    pytest.param("2024-02-29T00:00:00Z", 1709164800, id="leap day"),
    pytest.param("2026-11-30T1:02:03Z", T, id="one-digit hour, as Go's general parser"),
])
def test_parse_time(text, t):
    assert parse_time(text) == pytest.approx(t, abs=1e-6)


@pytest.mark.parametrize("text, message", [
    pytest.param("yesterday", 'parsing time "yesterday" as "2006-01-02T15:04:05Z07:00": cannot parse '
                 '"yesterday" as "2006"', id="not a time"),
    pytest.param("2026-11-30", 'parsing time "2026-11-30" as "2006-01-02T15:04:05Z07:00": cannot parse '
                 '"" as "T"', id="date only"),
    pytest.param("2026-1-30T00:00:00Z", 'parsing time "2026-1-30T00:00:00Z" as "2006-01-02T15:04:05Z07:00": '
                 'cannot parse "1-30T00:00:00Z" as "01"', id="one-digit month"),
    pytest.param("2026-11-30t01:02:03Z", 'parsing time "2026-11-30t01:02:03Z" as "2006-01-02T15:04:05Z07:00": '
                 'cannot parse "t01:02:03Z" as "T"', id="lower-case t"),
    pytest.param("2026-11-30T24:00:00Z", 'parsing time "2026-11-30T24:00:00Z": hour out of range',
                 id="hour out of range"),
    pytest.param("2026-11-30T01:02:03", 'parsing time "2026-11-30T01:02:03" as "2006-01-02T15:04:05Z07:00": '
                 'cannot parse "" as "Z07:00"', id="no zone"),
    pytest.param("2026-11-30T01:02:03Zjunk", 'parsing time "2026-11-30T01:02:03Zjunk": extra text: "junk"',
                 id="extra text"),
    pytest.param("2026-13-01T00:00:00Z", 'parsing time "2026-13-01T00:00:00Z": month out of range',
                 id="month out of range"),
    pytest.param("2025-02-29T00:00:00Z", 'parsing time "2025-02-29T00:00:00Z": day out of range',
                 id="no leap day"),
])
def test_parse_time_errors(text, message):
    with pytest.raises(TimeParseError) as e:
        parse_time(text)
    assert str(e.value) == message


@pytest.mark.parametrize("text, outcome", [
    pytest.param("2026-11-30T01:02:03.123456Z", T + 0.123456, id="six digits"),
    pytest.param("2026-11-30T02:02:03.000001+01:00", T + 0.000001, id="offset"),
    pytest.param("2026-11-30T01:02:03Z", 'cannot parse "Z" as ".000000"', id="no fraction"),
    pytest.param("2026-11-30T01:02:03.123Z", 'cannot parse ".123Z" as ".000000"', id="three digits"),
    pytest.param("2026-11-30T01:02:03.1234567Z", 'cannot parse "7Z" as "Z07:00"', id="seven digits"),
])
def test_parse_micro_time(text, outcome):
    if isinstance(outcome, str):
        with pytest.raises(TimeParseError) as e:
            parse_micro_time(text)
        assert str(e.value) == f'parsing time "{text}" as "2006-01-02T15:04:05.000000Z07:00": {outcome}'
    else:
        assert parse_micro_time(text) == pytest.approx(outcome, abs=1e-6)


@pytest.mark.parametrize("value, t", [
    pytest.param("2026-11-30T01:02:03Z", T, id="a time"),
    pytest.param(None, None, id="unset"),
    pytest.param("", None, id="empty"),
    pytest.param(42, None, id="not a string"),
    pytest.param("soon", None, id="malformed"),
])
def test_time_or_none(value, t):
    assert time_or_none(value) == t


def test_one_clock_for_every_now(monkeypatch):
    from components.apiserver import strategy
    from components.kubelet.runtime import Container
    monkeypatch.setattr(apitime, "clock", lambda: T + 0.25)
    assert apitime.now() == "2026-11-30T01:02:03Z"
    assert apitime.now_micro() == "2026-11-30T01:02:03.250000Z"
    obj: dict = {"metadata": {"name": "x"}}
    strategy.prepare_for_create("ConfigMap", obj, "default", True)
    assert obj["metadata"]["creationTimestamp"] == "2026-11-30T01:02:03Z"
    assert Container(name="c", image="i").created_at == "2026-11-30T01:02:03Z"
