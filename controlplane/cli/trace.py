"""``controlplane trace``: print the step records the apiserver keeps.

    controlplane trace --kubeconfig .controlplane/kubeconfig
    controlplane trace --kind Deployment --name myapp1          # one flow: the object as it is now
    controlplane trace --kind Pod --name web-1 --all            # every object of that name, ever
    controlplane trace --follow                                  # live
    controlplane trace --kind Deployment --name myapp1 --who    # with the user behind each step
    controlplane trace --kind Deployment --name myapp1 -o perfetto flow.json   # for ui.perfetto.dev

Records come from ``/debug/controlplane/trace`` (see
:mod:`controlplane.trace.stream`); a flow is followed along ownerReferences
(:class:`controlplane.trace.timeline.Flow`) from the object's current uid, so the
records of an earlier object of the same name are left out (``--all`` keeps them);
a name the apiserver does not know is an error (exit 1, one line), as kubectl's
``Error from server (NotFound)``. ``-o html`` draws the flow as a sequence diagram
(:mod:`controlplane.trace.sequence`).
"""

from __future__ import annotations

import asyncio
import json
import sys
import time
from typing import Callable

import click

from controlplane.api.resources import by_kind
from controlplane.cli.common import apiserver_errors, current_object, request_timeout_option
from controlplane.client.rest import RestClient
from controlplane.dashboard.sequence import render_sequence_html
from controlplane.service import Seconds, client_options, config_or_exit, run_until_signalled
from controlplane.trace import stream
from controlplane.trace.buffer import RING_CAPACITY
from controlplane.trace.perfetto import chrome_trace
from controlplane.trace.record import StepRecord
from controlplane.trace.timeline import Flow, Reorder, format_record


async def follow_in_order(client: RestClient, since: float, show: Callable[[StepRecord], None]) -> None:
    """Stream records to ``show`` in time order: each is held for a short
    window (:class:`Reorder`) since processes send theirs in small batches."""
    reorder = Reorder()
    q: asyncio.Queue[StepRecord | None] = asyncio.Queue()  # None: the stream ended

    async def pump() -> None:
        async for rec in stream.follow(client, since):
            q.put_nowait(rec)
        q.put_nowait(None)
    task = asyncio.create_task(pump())
    try:
        while True:
            try:
                rec = await asyncio.wait_for(q.get(), reorder.window / 2)
            except asyncio.TimeoutError:
                if task.done():
                    task.result()  # the stream failed (e.g. unreachable apiserver): raise it
            else:
                if rec is None:
                    break
                reorder.push(rec)
            for r in reorder.pop_ready(time.time()):
                show(r)
        for r in reorder.drain():
            show(r)
        task.result()
    finally:
        task.cancel()


@click.command("trace")
@client_options
@click.option("--kind", default=None, help="follow one flow from this kind (e.g. Deployment)")
@click.option("--name", default=None, help="...and this name")
@click.option("--namespace", "-n", default="default", show_default=True)
@click.option("--all", "history", is_flag=True,
              help="with --kind/--name: every object of that name (deleted ones too), not only the current one")
@click.option("--since", default=0.0, type=Seconds(min=0), help="only records from the last N seconds (0: all)")
@click.option("--follow", "-f", is_flag=True, help="keep printing new records")
@click.option("--output", "-o", type=click.Choice(["text", "json", "html", "perfetto"]), default="text",
              help="html: a sequence-diagram page; perfetto: Chrome Trace Event JSON for ui.perfetto.dev "
                   "and chrome://tracing (neither with --follow)")
@click.option("--who", is_flag=True,
              help="add a column: the user who did each step, as the apiserver authenticated it (the "
                   "audit log's user.username)")
@click.argument("file", required=False, type=click.Path(dir_okay=False, writable=True))
@request_timeout_option
def command(kubeconfig: str | None, master: str | None, kind: str | None, name: str | None,
            namespace: str, history: bool, since: float, follow: bool, output: str, who: bool, file: str | None,
            request_timeout: float) -> None:
    """Print the numbered, timed records of the 13-step flow (to FILE when given)."""
    client_config = config_or_exit(master, kubeconfig)
    server = client_config.host
    if bool(kind) != bool(name):
        raise click.UsageError("--kind and --name go together")
    if history and not kind:
        raise click.UsageError("--all goes with --kind and --name")
    try:
        res = by_kind(kind) if kind else None
    except KeyError:
        raise click.UsageError(f"unknown kind {kind!r}") from None
    if output in ("html", "perfetto") and follow:
        raise click.UsageError(f"-o {output} draws a finished flow: drop --follow")
    out = open(file, "w") if file else None

    def emit(text: str) -> None:
        click.echo(text, file=out)

    async def main() -> None:
        client = RestClient(client_config, "trace", timeout=request_timeout)
        flow = Flow(kind, namespace, name, history=history) if kind and name else None  # both or neither
        t0: list[float] = []

        collected: list[StepRecord] = []

        shown: list[int] = [0]

        def show(rec: StepRecord) -> None:
            if flow is not None and not flow.offer(rec):
                return
            shown[0] += 1
            if output in ("html", "perfetto"):
                collected.append(rec)
                return
            if output == "json":
                emit(json.dumps(rec.to_dict()))
                return
            if not t0:
                t0.append(rec.time)
            emit(format_record(rec, t0[0], out is None and sys.stdout.isatty(), who))

        start = time.time() - since if since else 0.0
        with apiserver_errors(server):
            try:
                if flow is not None and res is not None and not history:
                    ns = namespace if res.namespaced else None
                    obj = await current_object(client, res, name or "", ns)
                    if obj is None:
                        where = f' in namespace "{namespace}"' if ns else ""
                        raise click.ClickException(f'{res.plural} "{name}" not found{where} (--all: the '
                                                   f"records of earlier objects of that name)")
                    flow.set_root(obj["metadata"]["uid"])
                if follow:
                    await follow_in_order(client, start, show)
                else:
                    for rec in sorted(await stream.fetch(client, start), key=lambda r: r.time):
                        show(rec)
                    if not shown[0]:
                        # as kubectl's "No resources found": one line on stderr, exit 0
                        what = f" for {kind} {namespace}/{name}" if flow is not None else ""
                        click.echo(f"No step records{what}. The apiserver keeps the last {RING_CAPACITY:,} in "
                                   "memory only: a restart of it starts them afresh.", err=True)
                    first = min((r.time for r in collected if r.step >= 2), default=time.time())
                    if output == "html":
                        title = f"{kind} {namespace}/{name}: the 13 steps" if kind else "step records"
                        emit(render_sequence_html(collected, title, first))
                    elif output == "perfetto":
                        emit(json.dumps(chrome_trace(collected)))
            finally:
                await client.close()
                if out is not None:
                    out.close()

    run_until_signalled(main)
