"""API time formats and Go durations: the one module for both.

Times (``staging/src/k8s.io/apimachinery/pkg/apis/meta/v1/time.go``, ``micro_time.go``):

* ``metav1.Time`` is written ``t.UTC().Format(time.RFC3339)``: ``2006-01-02T15:04:05Z``
  (whole seconds, the fraction truncated) — :func:`format_time`, :func:`now`;
* ``metav1.MicroTime`` (Lease ``acquireTime``/``renewTime``, Event ``eventTime``) is written
  ``t.UTC().Format(RFC3339Micro)``: ``2006-01-02T15:04:05.000000Z`` (six digits, truncated) —
  :func:`format_micro_time`, :func:`now_micro`;
* both are read with ``time.Parse`` of their layout (:func:`parse_time`,
  :func:`parse_micro_time`): a Time accepts any fraction (or none) and any ``±hh:mm`` offset;
  a MicroTime needs exactly six fractional digits. Errors are Go's ``*time.ParseError`` texts.

Every timestamp a component writes comes from :data:`clock` (``time.time``; epoch seconds):
a test that needs a fixed wall clock replaces it in this one place.

Durations (Go's ``time`` package, ``src/time/format.go`` ParseDuration and ``time.go``
Duration.String): :func:`parse_duration_ns` / :func:`parse_duration` read ``300ms``,
``-1.5h``, ``2h45m``, ``1m30s``, ``0`` exactly as ``time.ParseDuration`` (units ``ns``,
``us``, ``µs``/``μs``, ``ms``, ``s``, ``m``, ``h``; a sign; fractions; int64 nanoseconds);
errors are :class:`DurationError` with Go's message, e.g. ``time: invalid duration "x"``.
:func:`format_duration` prints a duration as Duration.String (``1m30s``, ``1.5µs``, ``0s``).
"""

from __future__ import annotations

import calendar
import re
import time
from typing import Callable

#: the wall clock every "now" reads (epoch seconds); tests may replace it
clock: Callable[[], float] = time.time

#: Go layouts, named in parse errors
RFC3339 = "2006-01-02T15:04:05Z07:00"
RFC3339_MICRO = "2006-01-02T15:04:05.000000Z07:00"

#: (epoch second, its metav1.Time text) of the last :func:`now`
_second_cache: tuple[int, str] = (-1, "")


# --------------------------------------------------------------------------- formatting

def format_time(t: float) -> str:
    """``t`` (epoch seconds) as metav1.Time text, ``2024-05-01T10:00:00Z`` (UTC, truncated
    to the second as Go's RFC3339 format drops the fraction)."""
    return time.strftime("%Y-%m-%dT%H:%M:%SZ", time.gmtime(int(t // 1)))


def format_micro_time(t: float) -> str:
    """``t`` (epoch seconds) as metav1.MicroTime text, ``2026-11-30T01:02:03.123456Z`` (UTC,
    whole microseconds: Go truncates nanoseconds; a float's nearest microsecond is taken)."""
    global _micro_second_cache
    us = round(t * 1_000_000)
    sec, frac = divmod(us, 1_000_000)
    cached = _micro_second_cache
    if cached[0] != sec:  # the seconds' text, formatted once per second
        cached = _micro_second_cache = (sec, time.strftime("%Y-%m-%dT%H:%M:%S", time.gmtime(sec)))
    return f"{cached[1]}.{frac:06d}Z"


_micro_second_cache: tuple[int, str] = (-1, "")


def now() -> str:
    """The current time (:data:`clock`) as metav1.Time text (``metav1.Now()`` serialized);
    formatted once per second."""
    global _second_cache
    sec = int(clock() // 1)
    cached = _second_cache
    if cached[0] != sec:
        cached = _second_cache = (sec, format_time(sec))
    return cached[1]


def now_micro() -> str:
    """The current time (:data:`clock`) as metav1.MicroTime text (``metav1.NowMicro()``)."""
    return format_micro_time(clock())


# --------------------------------------------------------------------------- parsing

class TimeParseError(ValueError):
    """A time text that Go's ``time.Parse`` rejects; the message is Go's ParseError's."""


#: the layouts' date and clock elements: (Go layout element, digits: 4 / 2 / 0 = one or two)
_ELEMENTS = (("2006", 4), ("-", None), ("01", 2), ("-", None), ("02", 2), ("T", None), ("15", 0),
             (":", None), ("04", 2), (":", None), ("05", 2))
_RANGES = {"01": ("month", 1, 12), "02": ("day", 1, 31), "15": ("hour", 0, 23), "04": ("minute", 0, 59),
           "05": ("second", 0, 59)}
_ZONE = re.compile(r"(?:Z|([+-])(\d\d):(\d\d))")


def _isdigit(s: str, i: int) -> bool:
    return i < len(s) and "0" <= s[i] <= "9"


def _parse(text: str, micro: bool) -> float:
    layout = RFC3339_MICRO if micro else RFC3339

    def bad(rest: str, elem: str) -> TimeParseError:
        return TimeParseError(f"parsing time {go_quote(text)} as {go_quote(layout)}: "
                              f"cannot parse {go_quote(rest)} as {go_quote(elem)}")

    rest, fields = text, []
    for elem, width in _ELEMENTS:
        if width is None:
            if not rest.startswith(elem):
                raise bad(rest, elem)
            rest = rest[1:]
            continue
        n = width or (2 if _isdigit(rest, 1) else 1)
        if not all(_isdigit(rest, i) for i in range(n)):
            raise bad(rest, elem)
        v, rest = int(rest[:n]), rest[n:]
        if elem in _RANGES:
            name, lo, hi = _RANGES[elem]
            if not lo <= v <= hi:
                raise TimeParseError(f"parsing time {go_quote(text)}: {name} out of range")
        fields.append(v)
    year, month, day, hour, minute, sec = fields
    frac = 0.0
    fm = re.match(r"[.,](\d+)", rest)
    if micro:
        if fm is None or len(fm.group(1)) < 6:
            raise bad(rest, ".000000")
        digits, rest = fm.group(1)[:6], rest[7:]
        frac = int(digits) / 1e6
    elif fm is not None:
        digits, rest = fm.group(1), rest[fm.end():]
        frac = int(digits[:9].ljust(9, "0")) / 1e9
    zm = _ZONE.match(rest)
    if zm is None:
        raise bad(rest, "Z07:00")
    offset = 0
    if zm.group(1):
        hh, mm = int(zm.group(2)), int(zm.group(3))
        # Go's general parser bounds (its RFC 3339 fast path is stricter but falls back to it)
        if hh > 24 or mm > 60:
            what = "hour" if hh > 24 else "minute"
            raise TimeParseError(f"parsing time {go_quote(text)}: time zone offset {what} out of range")
        offset = (hh * 3600 + mm * 60) * (-1 if zm.group(1) == "-" else 1)
    if zm.end() != len(rest):
        raise TimeParseError(f"parsing time {go_quote(text)}: extra text: {go_quote(rest[zm.end():])}")
    if day > calendar.monthrange(year, month)[1]:
        raise TimeParseError(f"parsing time {go_quote(text)}: day out of range")
    return calendar.timegm((year, month, day, hour, minute, sec)) - offset + frac


def parse_time(text: str) -> float:
    """metav1.Time text → epoch seconds: ``time.Parse(time.RFC3339, text)`` (a fraction of any
    length and a ``±hh:mm`` offset are accepted). Raises :class:`TimeParseError`."""
    return _parse(text, False)


def parse_micro_time(text: str) -> float:
    """metav1.MicroTime text → epoch seconds: ``time.Parse(RFC3339Micro, text)`` (exactly six
    fractional digits). Raises :class:`TimeParseError`."""
    return _parse(text, True)


def time_or_none(text: object) -> float | None:
    """Epoch seconds of a Time or MicroTime text, or None when unset, not a string or
    malformed (for readers that treat a bad timestamp as absent)."""
    if not text or not isinstance(text, str):
        return None
    try:
        return _parse(text, False)
    except ValueError:
        return None


# --------------------------------------------------------------------------- durations

class DurationError(ValueError):
    """A text ``time.ParseDuration`` rejects; ``str()`` is Go's message."""


NANOSECOND = 1
MICROSECOND = 1000 * NANOSECOND
MILLISECOND = 1000 * MICROSECOND
SECOND = 1000 * MILLISECOND
MINUTE = 60 * SECOND
HOUR = 60 * MINUTE

_UNITS = {"ns": NANOSECOND, "us": MICROSECOND, "\u00b5s": MICROSECOND, "\u03bcs": MICROSECOND,
          "ms": MILLISECOND, "s": SECOND, "m": MINUTE, "h": HOUR}
_MAX = 1 << 63


def go_quote(s: str) -> str:
    """Go's ``time`` package quote(): double quotes, ``"`` and ``\\`` escaped, bytes of
    non-ASCII or control characters as ``\\xNN``."""
    out = ['"']
    for c in s:
        if ord(c) >= 0x80 or c < " ":
            out.extend(f"\\x{b:02x}" for b in c.encode("utf-8", "surrogatepass"))
        else:
            out.append("\\" + c if c in '"\\' else c)
    out.append('"')
    return "".join(out)


def _digits(s: str, i: int) -> int:
    while i < len(s) and "0" <= s[i] <= "9":
        i += 1
    return i


def parse_duration_ns(s: str) -> int:
    """``time.ParseDuration(s)`` in nanoseconds (int64 range). Raises :class:`DurationError`:
    ``time: invalid duration "S"``, ``time: missing unit in duration "S"`` or
    ``time: unknown unit "U" in duration "S"``."""
    orig = s
    invalid = DurationError("time: invalid duration " + go_quote(orig))
    neg = False
    if s and s[0] in "+-":
        neg, s = s[0] == "-", s[1:]
    if s == "0":
        return 0
    if not s:
        raise invalid
    d = 0
    while s:
        if not (s[0] == "." or "0" <= s[0] <= "9"):
            raise invalid
        end = _digits(s, 0)
        pre = end > 0
        v = int(s[:end]) if pre else 0
        if v > _MAX:
            raise invalid
        s = s[end:]
        f, scale, post = 0, 1, False
        if s and s[0] == ".":
            s = s[1:]
            end = _digits(s, 0)
            post = end > 0
            # leadingFraction: stop accumulating precision once it would overflow
            for c in s[:end]:
                y = f * 10 + ord(c) - 48
                if f > (_MAX - 1) // 10 or y > _MAX:
                    break
                f, scale = y, scale * 10
            s = s[end:]
        if not pre and not post:
            raise invalid
        i = 0
        while i < len(s) and not (s[i] == "." or "0" <= s[i] <= "9"):
            i += 1
        if i == 0:
            raise DurationError("time: missing unit in duration " + go_quote(orig))
        u, s = s[:i], s[i:]
        unit = _UNITS.get(u)
        if unit is None:
            raise DurationError("time: unknown unit " + go_quote(u) + " in duration " + go_quote(orig))
        if v > _MAX // unit:
            raise invalid
        v *= unit
        if f > 0:
            v += int(float(f) * (float(unit) / scale))
            if v > _MAX:
                raise invalid
        d += v
        if d > _MAX:
            raise invalid
    if neg:
        return -d
    if d > _MAX - 1:
        raise invalid
    return d


def parse_duration(s: str) -> float:
    """``time.ParseDuration(s)`` in seconds (float). Raises :class:`DurationError`."""
    return parse_duration_ns(s) / SECOND


def _frac(v: int, prec: int) -> tuple[str, int]:
    digits = ""
    printed = False
    for _ in range(prec):
        digit = v % 10
        printed = printed or digit != 0
        if printed:
            digits = str(digit) + digits
        v //= 10
    return ("." + digits if printed else ""), v


def format_duration_ns(d: int) -> str:
    """Go's ``Duration.String`` of ``d`` nanoseconds: ``1h2m3.5s``, ``1m30s``, ``5m0s``,
    ``1.5ms``, ``1.5µs``, ``7ns``, ``0s``, ``-2s``."""
    u = -d if d < 0 else d
    sign = "-" if d < 0 else ""
    if u < SECOND:
        if u == 0:
            return "0s"
        if u < MICROSECOND:
            return f"{sign}{u}ns"
        prec, unit = (3, "\u00b5s") if u < MILLISECOND else (6, "ms")
        frac, whole = _frac(u, prec)
        return f"{sign}{whole}{frac}{unit}"
    frac, secs = _frac(u, 9)
    out = f"{secs % 60}{frac}s"
    mins = secs // 60
    if mins:
        out = f"{mins % 60}m" + out
        if mins // 60:
            out = f"{mins // 60}h" + out
    return sign + out


def format_duration(seconds: float) -> str:
    """Go's ``Duration.String`` of ``seconds`` (rounded to whole nanoseconds)."""
    return format_duration_ns(round(seconds * SECOND))
