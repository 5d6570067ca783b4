"""``controlplane explain pod NAME``: why the scheduler put a pod where it did, or why
it could not place it.

    controlplane explain pod web-1 [-n default] [--all] [--kubeconfig K | --master URL] [-o table|json]

Reads the scheduler's last step-9 trace record for the pod as it exists now (its uid:
an earlier pod of the same name is not mixed in; ``--all`` prints every recorded
attempt of every pod of that name, oldest first) from ``/debug/controlplane/trace``
(:mod:`controlplane.trace.stream`) and prints one row per evaluated node
(:func:`controlplane.trace.explain.render`). A pod bound by ``spec.nodeName`` at
creation was never the scheduler's: that is said instead (exit 0). Exit 1 with one
line when no such pod exists or no record of it is kept.
"""

from __future__ import annotations

import json
from typing import Any

import click

from controlplane.api.resources import EVENTS, PODS
from controlplane.cli.common import apiserver_errors, current_object, request_timeout_option
from controlplane.client.rest import RestClient
from controlplane.service import client_options, config_or_exit, run_until_signalled
from controlplane.trace import stream
from controlplane.trace.explain import bypassed, last_step9, render, scheduled_event, step9_records


@click.command("explain")
@client_options
@click.argument("kind", metavar="pod")
@click.argument("name")
@click.option("--namespace", "-n", default="default", show_default=True)
@click.option("--all", "history", is_flag=True,
              help="every recorded attempt of every pod of this name (also deleted ones), oldest first")
@click.option("--output", "-o", type=click.Choice(["table", "json"]), default="table", show_default=True)
@request_timeout_option
def command(kubeconfig: str | None, master: str | None, kind: str, name: str, namespace: str,
            history: bool, output: str, request_timeout: float) -> None:
    """Show the scheduler's per-node filter verdicts and scores for a pod."""
    if kind.lower() not in ("pod", "pods", "po"):
        raise click.UsageError(f"explain supports pods only, not {kind!r}")
    client_config = config_or_exit(master, kubeconfig)
    server = client_config.host

    async def main() -> None:
        client = RestClient(client_config, "explain", timeout=request_timeout)
        try:
            with apiserver_errors(server):
                pod = await current_object(client, PODS, name, namespace)
                records = await stream.fetch(client, 0.0)
                rec = None if history or pod is None else last_step9(records, namespace, name,
                                                                      pod["metadata"].get("uid"))
                events: list[dict[str, Any]] = []
                if pod is not None and not history and rec is None and pod["metadata"].get("uid"):
                    # no record: the pod's events, as kubectl describe selects them, tell a pod the
                    # scheduler bound (its Scheduled event; the record lost) from one created with
                    # spec.nodeName
                    found = await client.list(EVENTS, namespace,
                                              field_selector=f"involvedObject.uid={pod['metadata']['uid']}")
                    events = found.get("items") or []
        finally:
            await client.close()
        if history:
            recs = step9_records(records, namespace, name)
            if not recs:
                raise click.ClickException(f'no scheduling record for any pod "{name}" in namespace '
                                           f'"{namespace}"')
        else:
            if pod is None:
                raise click.ClickException(f'pods "{name}" not found in namespace "{namespace}" '
                                           f"(--all shows the records of deleted pods of that name)")
            if rec is None:
                why = bypassed(pod, events)
                if why is not None:
                    click.echo(json.dumps({"bypassed": why}) if output == "json" else why)
                    return
                ev = scheduled_event(pod, events)
                if ev is not None:
                    raise click.ClickException(
                        f'no scheduling record for pod "{name}" in namespace "{namespace}": it was scheduled '
                        f'({ev.get("message") or "event Scheduled"}), but the apiserver keeps the step records in '
                        f"memory only, so a restart of it (or more records than it keeps) dropped this one")
                raise click.ClickException(f'no scheduling record for pod "{name}" in namespace '
                                           f'"{namespace}" (not scheduled by our scheduler yet, or the '
                                           f"trace was cleared)")
            recs = [rec]
        for i, rec in enumerate(recs):
            if output == "json":
                click.echo(json.dumps(rec.to_dict(), indent=2, sort_keys=True))
            else:
                click.echo(("\n" if i else "") + render(rec))

    run_until_signalled(main)
