"""The scheduler's reasoning for one pod, as data: the table ``controlplane explain``
prints and the dashboard draws.

The input is a step-9 record (:class:`~controlplane.trace.record.StepRecord`) whose
``data`` is the scheduler's ``explain_data`` (``components/scheduler/explain.py``):
per-node Filter verdicts (``passed``, the rejection reason — kube-scheduler's plugin
messages, ``pkg/scheduler/framework/plugins/*`` —, ``-`` when an earlier filter already
rejected the node, ``skip`` when its PreFilter skipped it), then each Score plugin's
weighted score with the normalised score in brackets, the total, and ``<= chosen`` on
the selected node.

A pod bound by ``spec.nodeName`` has no step 9: kube-scheduler only queues pods whose
``spec.nodeName`` is empty (``pkg/scheduler/eventhandlers.go``, ``assignedPod`` /
``responsibleForPod``), so :func:`bypassed` says so instead.
"""

from __future__ import annotations

from typing import Any, Iterable

from controlplane.trace.record import StepRecord


def step9_records(records: Iterable[StepRecord], namespace: str, name: str,
                  uid: str | None = None) -> list[StepRecord]:
    """The scheduler's step-9 records about pod ``namespace/name``, oldest first; with
    ``uid`` only those of that object (the current pod, not an earlier one of the name)."""
    out = []
    for r in records:
        o = r.object
        if r.step == 9 and r.component == "scheduler" and o.get("kind") == "Pod" \
                and o.get("name") == name and (o.get("namespace") or "default") == namespace \
                and (uid is None or o.get("uid") == uid):
            out.append(r)
    return sorted(out, key=lambda r: r.time)


def last_step9(records: list[StepRecord], namespace: str, name: str,
               uid: str | None = None) -> StepRecord | None:
    """The newest scheduler step-9 record about pod ``namespace/name`` (of ``uid`` if given)."""
    found = step9_records(records, namespace, name, uid)
    return found[-1] if found else None


def _cell(s: str, width: int = 80) -> str:
    return s if len(s) <= width else s[:width - 1] + "…"


def explain_table(rec: StepRecord) -> dict[str, Any]:
    """The explain table of one step-9 record as JSON:
    ``{"head": [lines], "header": [column names], "rows": [[cells]], "notes": [lines],
    "chosen": node or ""}``. Columns: NODE, each Filter plugin, each Score plugin as
    ``PLUGIN(xW)``, TOTAL and a marker column (``<= chosen``); plugin columns with nothing
    to say on any node are dropped (and named in ``notes``). ``header`` and ``rows`` are
    empty when the record carries no per-node verdicts (``head`` says why)."""
    d = rec.data or {}
    o = rec.object
    head = [f"Pod {o.get('namespace')}/{o.get('name')} (uid {o.get('uid') or '-'}): {rec.action}"]
    if d.get("error"):
        head.append(f"Message: {d['error']}")
    if d.get("nominatedNodeName"):
        head.append(f"Nominated node: {d['nominatedNodeName']} (victims: "
                    f"{', '.join(d.get('victims') or []) or '-'})")
    chosen = d.get("selectedNode") or ""
    if not d.get("recorded"):
        head.append("(per-node verdicts were not recorded: the cluster has more nodes than the "
                    "scheduler's explain limit)" if d else "(this record carries no per-node verdicts)")
        return {"head": head, "header": [], "rows": [], "notes": [], "chosen": chosen}
    filters = list(d.get("filterPlugins") or [])
    scorers = list(d.get("scorePlugins") or [])
    skipped_f = set(d.get("skippedFilters") or [])
    skipped_s = set(d.get("skippedScores") or [])
    weights = d.get("weights") or {}
    filt, score, final = d.get("filter") or {}, d.get("score") or {}, d.get("finalScore") or {}
    total = d.get("total") or {}
    nodes = sorted(set(filt) | set(score), key=lambda n: (-(total.get(n, -1)), n))
    header = ["NODE"] + filters + [f"{p}(x{weights.get(p, 1)})" for p in scorers] + ["TOTAL", ""]
    rows = []
    for n in nodes:
        f = filt.get(n) or {}
        row = [n]
        for p in filters:
            row.append(_cell(f[p]) if p in f else ("skip" if p in skipped_f else "-"))
        scored = n in score
        for p in scorers:
            if not scored:
                row.append("")
            elif p in skipped_s or p not in (score.get(n) or {}):
                row.append("skip")
            else:
                row.append(f"{final[n][p]} ({score[n][p]})")
        row.append(str(total[n]) if n in total else ("" if not scored else "-"))
        row.append("<= chosen" if n == chosen else "")
        rows.append(row)
    # Drop plugin columns with nothing to say (skipped, or not run, on every node).
    keep = [i for i in range(len(header))
            if i == 0 or i >= len(header) - 2 or any(r[i] not in ("skip", "", "-") for r in rows)]
    nf = len(filters)
    dropped_f = [header[i] for i in range(1, 1 + nf) if i not in keep]
    dropped_s = [header[i].split("(x")[0] for i in range(1 + nf, len(header) - 2) if i not in keep]
    shown_scores = any(1 + nf <= i < len(header) - 2 for i in keep)
    notes = []
    if shown_scores:
        notes.append("(score columns PLUGIN(xW): weight W; each cell is the weighted score, "
                     "with the plugin's normalized 0-100 score in brackets)")
    if dropped_f:
        notes.append(f"(filters skipped on every node: {', '.join(dropped_f)})")
    if dropped_s:
        notes.append(f"(scores not computed: {', '.join(dropped_s)})")
    if not chosen:
        notes += ["", "No node was chosen."]
    elif not total:
        notes += ["", f"Only {chosen} passed the filters, so nothing was scored."]
    return {"head": head, "header": [header[i] for i in keep], "rows": [[r[i] for i in keep] for r in rows],
            "notes": notes, "chosen": chosen}


def render(rec: StepRecord) -> str:
    """The explain table for one step-9 record (text, lines joined by newlines)."""
    t = explain_table(rec)
    if not t["header"]:
        return "\n".join(t["head"])
    table = [t["header"]] + t["rows"]
    widths = [max(len(r[i]) for r in table) for i in range(len(t["header"]))]
    lines = t["head"] + [""]
    for r in table:
        lines.append("  ".join(c.ljust(w) for c, w in zip(r, widths)).rstrip())
    return "\n".join(lines + t["notes"])


def scheduled_event(pod: dict[str, Any], events: Iterable[dict[str, Any]]) -> dict[str, Any] | None:
    """The ``Scheduled`` event of ``pod`` among ``events`` (core/v1 Event objects, or the
    dashboard's event views with ``reason`` / ``objectUid``), or None: what kube-scheduler
    writes when it binds a pod (``Successfully assigned NS/NAME to NODE``), so its presence
    means the pod was scheduled even when the step-9 record is gone."""
    uid = (pod.get("metadata") or {}).get("uid") or ""
    for e in events:
        if e.get("reason") != "Scheduled":
            continue
        of = e.get("objectUid", (e.get("involvedObject") or {}).get("uid", ""))
        if not uid or not of or of == uid:
            return e
    return None


def bypassed(pod: dict[str, Any], events: Iterable[dict[str, Any]] = ()) -> str | None:
    """Why the scheduler never saw ``pod`` (a Pod object), or None: a pod created with
    ``spec.nodeName`` set is bound already, so kube-scheduler (which only queues pods with
    an empty ``spec.nodeName``) leaves it alone and that node's kubelet runs it. None also
    when ``events`` (the pod's) hold its ``Scheduled`` event (:func:`scheduled_event`): then
    the scheduler did bind it, and only its record is missing."""
    node = (pod.get("spec") or {}).get("nodeName")
    if not node or scheduled_event(pod, events) is not None:
        return None
    md = pod.get("metadata") or {}
    return (f"Pod {md.get('namespace') or 'default'}/{md.get('name')} (uid {md.get('uid') or '-'}) was not "
            f"scheduled: spec.nodeName={node} was set when it was created, so the scheduler was bypassed "
            f"(kube-scheduler only queues pods with an empty spec.nodeName) and {node}'s kubelet runs it.")
