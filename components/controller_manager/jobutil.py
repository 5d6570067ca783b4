"""What the Job, CronJob and TTL-after-finished controllers ask of a Job's conditions, once
(``pkg/controller/job/util/utils.go``: FinishedCondition, IsJobFinished, IsJobSucceeded)."""

from __future__ import annotations

from typing import Any


def finished_condition(job: dict[str, Any]) -> dict[str, Any] | None:
    """The ``Complete`` or ``Failed`` condition of ``job`` whose status is ``"True"``, or None
    while the Job runs (FinishedCondition)."""
    for c in (job.get("status") or {}).get("conditions") or []:
        if c.get("type") in ("Complete", "Failed") and c.get("status") == "True":
            return c
    return None


def finished_type(job: dict[str, Any]) -> str | None:
    """``"Complete"`` or ``"Failed"`` for a finished Job, None while it runs."""
    c = finished_condition(job)
    return str(c["type"]) if c is not None else None


def is_finished(job: dict[str, Any]) -> bool:
    """A ``Complete`` or ``Failed`` condition is True (IsJobFinished)."""
    return finished_condition(job) is not None


def is_job_succeeded(job: dict[str, Any]) -> bool:
    """The ``Complete`` condition is True (IsJobSucceeded)."""
    return finished_type(job) == "Complete"
