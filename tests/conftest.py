"""The whole suite: ``pytester`` for tests/plugin (the pytest plugin run in a sub-pytest);
``pytest_plugins`` may only be set in a top-level conftest.

The suite runs on two pytest-xdist workers (``-n 2 --dist loadgroup`` in pyproject's addopts), and
:func:`pytest_collection_modifyitems` decides who runs beside whom with ``xdist_group`` marks (read
by xdist's ``loadgroup`` scheduling):

* every test that starts processes — everything outside ``tests/unit/`` (integration, faults, the
  plugin's sub-pytests, examples/) — is one group, ``processes``: one worker runs them one after
  the other in collection order, as a plain ``pytest`` does, so no two clusters ever compete and
  module- and session-scoped clusters start once;
* a unit test using a module- or class-scoped fixture stays with the rest of its module;
* the other unit tests are spread one by one over both workers (the unit suite under ``-n 2`` is
  the check every change passes already).

Figures a worker collects for the terminal summary (the fault suite's table, ``record_property``
figures) travel to the controller in the reports' ``user_properties`` and are printed there
(:func:`pytest_terminal_summary`)."""

from __future__ import annotations

import pytest

pytest_plugins = ["pytester"]

FAULT_FIGURES = "fault_figures"
"""The ``user_properties`` key under which tests/faults/conftest.py sends a scenario's figures."""

FAULT_COLUMNS = ("kills", "phases", "converged", "lost", "duplicates", "missed", "relists", "acked",
                 "unanswered", "worst_converge_s", "seconds")
_WIDE_SCOPES = {"module", "class", "package"}
UNIT = "tests/unit/"
PROCESSES = "processes"
"""The ``xdist_group`` of every test outside :data:`UNIT`: they run on one worker, in order."""


def _xdist_group(item: pytest.Item) -> str | None:
    """The group ``item`` must share a worker with, or None (any worker will do)."""
    path = item.nodeid.split("::", 1)[0]
    if not path.startswith(UNIT):
        return PROCESSES
    info = getattr(item, "_fixtureinfo", None)
    for name in info.names_closure if info is not None else ():
        defs = info.name2fixturedefs.get(name)
        if defs and defs[-1].scope in _WIDE_SCOPES and defs[-1].baseid:
            return path
    return None


@pytest.hookimpl(tryfirst=True)
def pytest_collection_modifyitems(config: pytest.Config, items: list[pytest.Item]) -> None:
    """Mark the tests that share a cluster with an ``xdist_group`` (before xdist reads the marks)."""
    for item in items:
        if any(item.iter_markers("xdist_group")):
            continue
        group = _xdist_group(item)
        if group:
            item.add_marker(pytest.mark.xdist_group(group))


_figures: list[dict] = []
_recorded: list[tuple[str, str, object]] = []


def pytest_runtest_logreport(report: pytest.TestReport) -> None:
    """Keep the figures the test's report carries (from this process or from an xdist worker)."""
    if report.when != "teardown" and report.when != "call":
        return
    for key, value in report.user_properties:
        if key == FAULT_FIGURES and report.when == "teardown":
            _figures.extend(value)
        elif key != FAULT_FIGURES and report.when == "call":
            _recorded.append((report.nodeid, key, value))


def pytest_terminal_summary(terminalreporter) -> None:
    tr = terminalreporter
    if _recorded:
        tr.section("recorded figures")
        for nodeid, key, value in _recorded:
            tr.write_line(f"{nodeid}: {key} = {value}")
    if not _figures:
        return
    tr.section("fault suite figures")
    width = max(len(f["scenario"]) for f in _figures)
    tr.write_line(f"{'scenario':<{width}}  " + "  ".join(FAULT_COLUMNS))
    for f in _figures:
        tr.write_line(f"{f['scenario']:<{width}}  " +
                      "  ".join(f"{f[c]:>{len(c)}}" for c in FAULT_COLUMNS))
    total = {c: sum(f[c] for f in _figures) for c in ("kills", "phases", "converged", "lost",
                                                       "duplicates", "missed")}
    tr.write_line("total: " + ", ".join(f"{k} {v}" for k, v in total.items()))
