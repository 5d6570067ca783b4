"""``controlplane trace`` prints the records it fetched without touching click's deprecated
``click.get_text_stream`` (click 8.5 warns on it and 9.0 removes it): whether to colour is
asked of ``sys.stdout`` itself. The apiserver is replaced by a canned ``stream.fetch``."""

from __future__ import annotations

import json
import warnings

import pytest
from click.testing import CliRunner

from controlplane.cli import trace as trace_cli
from controlplane.trace import stream
from controlplane.trace.record import make_record

POD = {"kind": "Pod", "metadata": {"name": "web-1", "namespace": "default", "uid": "u1",
                                    "resourceVersion": "7"}}


@pytest.fixture
def canned(monkeypatch):
    rec = make_record(3, "apiserver", "stored in etcd", POD)

    async def fetch(client, since=0.0):
        return [rec]
    monkeypatch.setattr(stream, "fetch", fetch)
    return rec


@pytest.mark.parametrize("output", [
    pytest.param("text", id="text lines"),
    pytest.param("json", id="json lines"),
])
def test_trace_prints_without_deprecation_warnings(canned, output):
    with warnings.catch_warnings():
        warnings.simplefilter("error", DeprecationWarning)
        result = CliRunner().invoke(trace_cli.command, ["--master", "http://127.0.0.1:1", "-o", output])
    assert result.exit_code == 0, result.output
    line = result.output.strip()
    if output == "json":
        assert json.loads(line)["action"] == "stored in etcd"
    else:
        assert "stored in etcd" in line and "web-1" in line


def test_no_records_says_so_on_stderr_and_exits_0(monkeypatch):
    """As kubectl's "No resources found": after an apiserver restart the ring is empty, and an
    empty answer must not look like a hang or a broken flow."""
    async def fetch(client, since=0.0):
        return []
    monkeypatch.setattr(stream, "fetch", fetch)
    result = CliRunner().invoke(trace_cli.command, ["--master", "http://127.0.0.1:1"])
    assert result.exit_code == 0
    assert result.stdout == ""
    assert result.stderr.startswith("No step records.") and "restart" in result.stderr
