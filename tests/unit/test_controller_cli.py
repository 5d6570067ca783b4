"""``controlplane controller-manager`` flags: durations, thresholds, leader election
settings; bad values are one-line usage errors (exit 2), never tracebacks."""

from __future__ import annotations

import click
import pytest
from click.testing import CliRunner

from components.controller_manager.cli import command, parse_duration


def test_parse_duration():
    assert parse_duration("40s", "--x") == 40
    assert parse_duration("500ms", "--x") == 0.5
    assert parse_duration("1m30s", "--x") == 90
    assert parse_duration("2", "--x") == 2
    with pytest.raises(click.UsageError, match="invalid value '4x' for --x"):
        parse_duration("4x", "--x")


@pytest.mark.parametrize("args, message", [
    (["--node-monitor-grace-period", "soon"], "invalid value 'soon' for --node-monitor-grace-period"),
    (["--node-monitor-period", "0s"], "node-monitor-period must be greater than zero"),
    (["--controllers", "*,nodelifecycle,nope"], "unknown controller 'nope'"),
    (["--terminated-pod-gc-threshold", "-1"], "-1"),
    (["--leader-elect", "--leader-elect-lease-duration", "5s", "--leader-elect-renew-deadline", "10s"],
     "leaseDuration must be greater than renewDeadline"),
])
def test_bad_flags_are_usage_errors(args, message):
    r = CliRunner().invoke(command, ["--master", "http://127.0.0.1:1", *args])
    assert r.exit_code == 2, r.output
    assert message in r.output
    assert "Traceback" not in r.output
