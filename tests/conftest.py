"""The whole suite: ``pytester`` for tests/plugin (the pytest plugin run in a sub-pytest);
``pytest_plugins`` may only be set in a top-level conftest.

The suite runs on two pytest-xdist workers (``-n 2 --dist loadscope`` in pyproject's addopts), and
:func:`pytest_xdist_make_scheduler` decides who runs beside whom (xdist's LoadScopeScheduling with
the scopes of :func:`xdist_scope`):

* every test that starts processes — everything outside ``tests/unit/`` (integration, faults, the
  plugin's sub-pytests, examples/) — is one scope, ``processes``: one worker runs them one after
  the other in collection order, as a plain ``pytest`` does, so no two clusters ever compete and
  module- and session-scoped clusters start once;
* a unit module is a scope of its own, spread over both workers (the unit suite under ``-n 2`` is
  the check every change passes already).

(``--dist loadgroup`` with ``xdist_group`` marks would say the same, but pytest-xdist 3.8 renames
the node ids through ``item._nodeid``, which pytest 9 no longer reads: the marks are ignored.)
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
UNIT = "tests/unit/"
PROCESSES = "processes"
"""The xdist scope of every test outside :data:`UNIT`: they run on one worker, in order."""


def xdist_scope(nodeid: str) -> str:
    """The scheduling scope of a test id: :data:`PROCESSES` outside :data:`UNIT`, else its module."""
    path = nodeid.split("::", 1)[0]
    return path if path.startswith(UNIT) else PROCESSES


def pytest_xdist_make_scheduler(config: pytest.Config, log):
    """xdist's LoadScopeScheduling (largest scope first) over :func:`xdist_scope`'s scopes."""
    from xdist.scheduler import LoadScopeScheduling

    class Scheduling(LoadScopeScheduling):
        def _split_scope(self, nodeid: str) -> str:
            return xdist_scope(nodeid)

    return Scheduling(config, log)


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
