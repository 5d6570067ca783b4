"""Following one flow through the step records and printing it.

A flow starts at one object (say the Deployment ``myapp1``) and grows along
ownerReferences: a record joins the flow when its object's uid, or one of its
owners' uids, is already in the flow — Deployment -> ReplicaSet -> Pods, as
the controllers link them (kubernetes/website
``content/en/docs/concepts/overview/working-with-objects/owners-dependents.md``).
"""

from __future__ import annotations

from typing import Iterable

from controlplane.trace.record import STEPS, StepRecord


class Flow:
    """The records of one object and its dependents, in arrival order.

    Records that arrive before the root uid is known are held back and
    re-examined by :meth:`set_root`. With ``history`` every object that ever had the
    root's kind, namespace and name is a root (each uid joins the flow), not only the
    first one seen or the one given to :meth:`set_root`.
    """

    def __init__(self, root_kind: str, root_namespace: str, root_name: str, history: bool = False) -> None:
        self.root = (root_kind, root_namespace, root_name)
        self.history = history
        self.uids: set[str] = set()
        self.records: list[StepRecord] = []
        self._held: list[StepRecord] = []

    def set_root(self, uid: str) -> list[StepRecord]:
        """Fix the root uid; returns held records that now belong to the flow."""
        self.uids.add(uid)
        held, self._held = self._held, []
        return [r for r in held if self.offer(r)]

    def offer(self, rec: StepRecord) -> bool:
        """Add ``rec`` if it belongs to the flow; returns whether it did."""
        o = rec.object
        is_root = (o.get("kind"), o.get("namespace"), o.get("name")) == self.root
        if not self.uids and not is_root:
            self._held.append(rec)
            return False
        if is_root and rec.uid and (not self.uids or self.history):
            self.uids.add(rec.uid)
        if (rec.uid and rec.uid in self.uids) or any(u in self.uids for u in rec.owners) or \
                (is_root and not rec.uid):
            if rec.uid:
                self.uids.add(rec.uid)
            self.records.append(rec)
            return True
        if not self.uids:
            self._held.append(rec)
        return False

    def steps_seen(self) -> set[int]:
        return {r.step for r in self.records}


def short_object(rec: StepRecord) -> str:
    """``Kind/name``, or ``""`` when the record names no object (e.g. step 1)."""
    o = rec.object
    if not o.get("name"):
        return ""
    return f"{o.get('kind') or '?'}/{o['name']}"


class Reorder:
    """Hands records back in time order, live: a record is released once it is
    ``window`` seconds old, so records batched by different processes (which
    arrive slightly out of order) still print in the order they happened."""

    def __init__(self, window: float = 0.25) -> None:
        self.window = window
        self._held: list[StepRecord] = []

    def push(self, rec: StepRecord) -> None:
        self._held.append(rec)

    def pop_ready(self, now: float) -> list[StepRecord]:
        """Records older than ``now - window``, oldest first."""
        self._held.sort(key=lambda r: r.time)
        n = 0
        while n < len(self._held) and self._held[n].time <= now - self.window:
            n += 1
        out, self._held = self._held[:n], self._held[n:]
        return out

    def drain(self) -> list[StepRecord]:
        out = sorted(self._held, key=lambda r: r.time)
        self._held = []
        return out


def format_record(rec: StepRecord, t0: float, color: bool = False, who: bool = False) -> str:
    """One aligned line: step, time since ``t0``, component, (with ``who``: the user who did
    it, ``-`` when unknown), action, object, rv."""
    dt = rec.time - t0
    when = f"{dt:+8.3f}s"
    step = f"[{rec.step:>2}]"
    comp = f"{rec.component:<18}"
    if who:
        comp += f" {rec.user or '-':<34}"
    rv = f"rv={rec.resourceVersion}" if rec.resourceVersion else ""
    line = f"{step} {when}  {comp} {rec.action}  {short_object(rec)} {rv}".rstrip()
    if rec.detail:
        line += f"  ({rec.detail})"
    if color:
        import click
        line = click.style(step, fg="cyan", bold=True) + line[len(step):]
    return line


def step_summary(records: Iterable[StepRecord], t0: float) -> list[tuple[int, str, int, float | None]]:
    """Per step 1..13: (step, title, record count, first time since t0 or None)."""
    by: dict[int, list[StepRecord]] = {}
    for r in records:
        by.setdefault(r.step, []).append(r)
    out = []
    for n, title in STEPS.items():
        rs = by.get(n, [])
        out.append((n, title, len(rs), min(r.time for r in rs) - t0 if rs else None))
    return out
