"""The whole suite: ``pytester`` for tests/plugin (the pytest plugin run in a sub-pytest);
``pytest_plugins`` may only be set in a top-level conftest.

The suite runs on two pytest-xdist workers (``-n 2 --dist loadscope`` in pyproject's addopts), and
:func:`pytest_xdist_make_scheduler` decides who runs beside whom (xdist's LoadScopeScheduling with
the scopes of :func:`xdist_scope`):

* every test that starts processes — everything outside ``tests/unit/`` (integration, faults, the
  plugin's sub-pytests, examples/) — is one scope, ``processes``: one worker runs them one after
  the other in collection order, as a plain ``pytest`` does, so module- and session-scoped
  clusters start once and the CPU-heavy ones (the fault suite, the flow, scale-out) never compete;
* except the modules of :data:`WAITING`, whose time goes to waiting on real time (a CronJob's next
  minute, the pod GC's 40 s quarantine, the kubelet's back-offs, an HPA's stabilization window,
  a Job's pod-failure back-off): they are a second scope, ``processes-waiting``, queued right
  behind ``processes`` so that the other worker takes it first and runs it beside the unit
  modules. They cost little CPU, so the two clusters barely compete, and the run is shorter by
  their length (~4 minutes) than with one queue;
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
"""The xdist scope of every test outside :data:`UNIT` and :data:`WAITING`: they run on one worker,
in order."""
PROCESSES_WAITING = "processes-waiting"
"""The xdist scope of the modules of :data:`WAITING`: one worker runs them, in order, beside the
unit modules."""
WAITING = frozenset({
    "tests/integration/test_cronjob.py",           # the next minute boundary, twice
    "tests/integration/test_daemonset.py",         # the pod GC's 40 s quarantine of a deleted node's pod
    "tests/integration/test_kubelet_failures.py",  # image-pull and crash back-offs, probe periods
    "tests/integration/test_hpa.py",               # the HPA's stabilization window
    "tests/integration/test_job.py",               # the Job's pod-failure back-off
})
"""Modules of processes tests whose time is mostly waiting on real time (module docstring)."""


def xdist_scope(nodeid: str) -> str:
    """The scheduling scope of a test id: its module inside :data:`UNIT`, :data:`PROCESSES_WAITING`
    for the modules of :data:`WAITING`, else :data:`PROCESSES`."""
    path = nodeid.split("::", 1)[0]
    if path.startswith(UNIT):
        return path
    return PROCESSES_WAITING if path in WAITING else PROCESSES


def pytest_xdist_make_scheduler(config: pytest.Config, log):
    """xdist's LoadScopeScheduling (largest scope first) over :func:`xdist_scope`'s scopes, with
    :data:`PROCESSES_WAITING` moved to second place: the first worker takes :data:`PROCESSES`
    (the largest), the second takes the waiting modules before any unit module."""
    from xdist.scheduler import LoadScopeScheduling

    class Scheduling(LoadScopeScheduling):
        def _split_scope(self, nodeid: str) -> str:
            return xdist_scope(nodeid)

        _ordered = False

        def _assign_work_unit(self, node) -> None:
            if not self._ordered:  # the first assignment: the queue is complete, largest scope first
                self._ordered = True
                if PROCESSES_WAITING in self.workqueue:
                    waiting = self.workqueue.pop(PROCESSES_WAITING)
                    rest = list(self.workqueue.items())
                    self.workqueue.clear()
                    self.workqueue.update(rest[:1])
                    self.workqueue[PROCESSES_WAITING] = waiting
                    self.workqueue.update(rest[1:])
            super()._assign_work_unit(node)

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
