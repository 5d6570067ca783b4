"""``controlplane explain pod NAME``: why the scheduler put a pod where it did, or why
it could not place it.

    controlplane explain pod web-1 [-n default] [--kubeconfig K | --master URL] [-o table|json]

Reads the scheduler's last step-9 trace record for the pod (``/debug/controlplane/trace``,
:mod:`controlplane.trace.stream`) and prints one row per evaluated node: each Filter
plugin's verdict (``passed``, the rejection reason, ``-`` when an earlier filter already
rejected the node, ``skip`` when its PreFilter skipped it), then each Score plugin's
weighted score with the normalised score in brackets, the total, and ``<= chosen`` on
the selected node. The record's ``data`` shape is
:meth:`components.scheduler.explain.explain_data`. Exit 1 with one line
when the apiserver has no such record. The verdicts are kube-scheduler's plugin
messages (``pkg/scheduler/framework/plugins/*``).
"""

from __future__ import annotations

import json

import click

from controlplane.cli.common import apiserver_errors, request_timeout_option
from controlplane.client.rest import RestClient
from controlplane.service import client_options, config_or_exit, run_until_signalled
from controlplane.trace import stream
from controlplane.trace.record import StepRecord


def last_step9(records: list[StepRecord], namespace: str, name: str) -> StepRecord | None:
    """The newest scheduler step-9 record about pod ``namespace/name``."""
    found = None
    for r in records:
        o = r.object
        if r.step == 9 and r.component == "scheduler" and o.get("kind") == "Pod" \
                and o.get("name") == name and (o.get("namespace") or "default") == namespace:
            if found is None or r.time >= found.time:
                found = r
    return found


def _cell(s: str, width: int = 80) -> str:
    return s if len(s) <= width else s[:width - 1] + "…"


def render(rec: StepRecord) -> str:
    """The explain table for one step-9 record (text, lines joined by newlines)."""
    d = rec.data or {}
    o = rec.object
    head = [f"Pod {o.get('namespace')}/{o.get('name')} (uid {o.get('uid') or '-'}): {rec.action}"]
    if d.get("error"):
        head.append(f"Message: {d['error']}")
    if d.get("nominatedNodeName"):
        head.append(f"Nominated node: {d['nominatedNodeName']} (victims: "
                    f"{', '.join(d.get('victims') or []) or '-'})")
    if not d.get("recorded"):
        head.append("(per-node verdicts were not recorded: the cluster has more nodes than the "
                    "scheduler's explain limit)" if d else "(this record carries no per-node verdicts)")
        return "\n".join(head)
    filters = list(d.get("filterPlugins") or [])
    scorers = list(d.get("scorePlugins") or [])
    skipped_f = set(d.get("skippedFilters") or [])
    skipped_s = set(d.get("skippedScores") or [])
    weights = d.get("weights") or {}
    filt, score, final = d.get("filter") or {}, d.get("score") or {}, d.get("finalScore") or {}
    total = d.get("total") or {}
    chosen = d.get("selectedNode") or ""
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
    header = [header[i] for i in keep]
    rows = [[r[i] for i in keep] for r in rows]
    widths = [max(len(r[i]) for r in [header] + rows) for i in range(len(header))]
    lines = head + [""]
    for r in [header] + rows:
        lines.append("  ".join(c.ljust(w) for c, w in zip(r, widths)).rstrip())
    if shown_scores:
        lines.append("(score columns PLUGIN(xW): weight W; each cell is the weighted score, "
                     "with the plugin's normalized 0-100 score in brackets)")
    if dropped_f:
        lines.append(f"(filters skipped on every node: {', '.join(dropped_f)})")
    if dropped_s:
        lines.append(f"(scores not computed: {', '.join(dropped_s)})")
    if not chosen:
        lines.append("")
        lines.append("No node was chosen.")
    elif chosen and not total:
        lines.append("")
        lines.append(f"Only {chosen} passed the filters, so nothing was scored.")
    return "\n".join(lines)


@click.command("explain")
@client_options
@click.argument("kind", metavar="pod")
@click.argument("name")
@click.option("--namespace", "-n", default="default", show_default=True)
@click.option("--output", "-o", type=click.Choice(["table", "json"]), default="table", show_default=True)
@request_timeout_option
def command(kubeconfig: str | None, master: str | None, kind: str, name: str, namespace: str,
            output: str, request_timeout: float) -> None:
    """Show the scheduler's per-node filter verdicts and scores for a pod."""
    if kind.lower() not in ("pod", "pods", "po"):
        raise click.UsageError(f"explain supports pods only, not {kind!r}")
    client_config = config_or_exit(master, kubeconfig)
    server = client_config.host

    async def main() -> None:
        client = RestClient(client_config, "explain", timeout=request_timeout)
        try:
            with apiserver_errors(server):
                records = await stream.fetch(client, 0.0)
        finally:
            await client.close()
        rec = last_step9(records, namespace, name)
        if rec is None:
            raise click.ClickException(f'no scheduling record for pod "{name}" in namespace '
                                       f'"{namespace}" (not scheduled by our scheduler yet, or the '
                                       f"trace was cleared)")
        if output == "json":
            click.echo(json.dumps(rec.to_dict(), indent=2, sort_keys=True))
        else:
            click.echo(render(rec))

    run_until_signalled(main)
