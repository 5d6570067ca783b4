"""controlplane.service.parse_duration: the services' duration flags read Go durations (and,
as kubectl's --request-timeout, bare seconds); anything else is a one-line usage error."""

from __future__ import annotations

import click
import pytest

from components.etcd.compactor import parse_retention
from controlplane.service import parse_duration


@pytest.mark.parametrize("value, seconds", [
    pytest.param("40s", 40.0, id="seconds"),
    pytest.param("500ms", 0.5, id="milliseconds"),
    pytest.param("1m30s", 90.0, id="compound"),
    pytest.param("1.5h", 5400.0, id="fractional hours"),
    pytest.param("250us", 0.00025, id="microseconds"),
    pytest.param("0", 0.0, id="zero"),
    pytest.param("2", 2.0, id="bare seconds"),
    pytest.param("0.5", 0.5, id="bare fractional seconds"),
    pytest.param(" 3s ", 3.0, id="surrounding blanks"),
])
def test_duration_flag(value, seconds):
    assert parse_duration(value, "--x") == pytest.approx(seconds)


@pytest.mark.parametrize("value, message", [
    pytest.param("4x", """invalid value '4x' for --x: time: unknown unit "x" in duration "4x\"""", id="unknown unit"),
    pytest.param("soon", """invalid value 'soon' for --x: time: invalid duration "soon\"""", id="not a duration"),
    pytest.param("1m30", """invalid value '1m30' for --x: time: missing unit in duration "1m30\"""",
                 id="trailing number"),
    pytest.param("-1s", "invalid value '-1s' for --x: must not be negative", id="negative"),
])
def test_bad_duration_flag_is_a_usage_error(value, message):
    with pytest.raises(click.UsageError) as e:
        parse_duration(value, "--x")
    assert e.value.message == message


@pytest.mark.parametrize("value, outcome", [
    pytest.param("5m", 300.0, id="duration"),
    pytest.param("1h30m", 5400.0, id="compound duration"),
    pytest.param("2", 7200.0, id="bare integer is hours"),
    pytest.param("soon", "invalid --auto-compaction-retention 'soon'", id="not a duration"),
    pytest.param("-5m", "invalid --auto-compaction-retention '-5m'", id="negative"),
])
def test_periodic_compaction_retention(value, outcome):
    if isinstance(outcome, str):
        with pytest.raises(ValueError, match=outcome):
            parse_retention("periodic", value)
    else:
        assert parse_retention("periodic", value) == outcome
