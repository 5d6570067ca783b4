"""controlplane.log: the logfmt line shape of one structured event."""

from __future__ import annotations

import logging
import re

import pytest

from controlplane import log

LINE = re.compile(r"^\d{4}-\d\d-\d\dT\d\d:\d\d:\d\d\.\d{3}Z INFO kubelet event=pod\.started ")


@pytest.fixture
def lines(tmp_path):
    root = logging.getLogger()
    saved = root.handlers[:], root.level
    path = tmp_path / "kubelet.log"
    logger = log.setup("kubelet", level="INFO", path=str(path))
    yield logger, lambda: path.read_text().splitlines()
    for h in root.handlers:
        h.close()
    root.handlers[:], level = saved
    root.setLevel(level)


def test_event_line_has_timestamp_level_component_and_fields(lines):
    logger, read = lines
    log.event(logger, "pod.started", pod="default/web-1", ready=True)
    (line,) = read()
    assert LINE.match(line)
    assert line.endswith("event=pod.started pod=default/web-1 ready=True")


@pytest.mark.parametrize("value, text", [
    ("plain", "plain"), ("", '""'), ("a b", '"a b"'), ('say "hi"', '"say \\"hi\\""'),
    ("k=v", '"k=v"'), ("two\nlines", '"two\\nlines"'), ("tab\there", '"tab\there"'), (42, "42"),
])
def test_values_are_quoted_only_when_needed(value, text):
    assert log._quote(value) == text


def test_name_field_is_allowed(lines):
    logger, read = lines
    log.event(logger, "pod.started", name="web-1")
    assert read()[0].endswith("event=pod.started name=web-1")


def test_below_level_events_write_nothing(lines):
    logger, read = lines
    log.event(logger, "pod.started", logging.DEBUG, pod="x")
    assert read() == []


def test_timestamp_follows_each_record_across_seconds():
    f = log._Formatter()
    rec = logging.LogRecord("x", logging.INFO, "", 0, "m", (), None)
    for created in (1_700_000_000.25, 1_700_000_000.75, 1_700_000_001.5):
        rec.created, rec.msecs = created, (created % 1) * 1000
        assert f.format(rec).startswith(
            "2023-11-14T22:13:%02d.%03dZ" % (20 + int(created) - 1_700_000_000, rec.msecs))
