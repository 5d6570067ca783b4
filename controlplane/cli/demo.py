"""``controlplane demo``: seed 000's 13-step pod creation flow, traced live.

Brings a cluster up (separate processes, in a temporary data dir on free
ports) or uses a running one (``--kubeconfig`` / ``--master``); labels the
nodes as seed 000 does (node01 ``kgc=a``, node02 ``kgc=b``); applies seed 000's
``myapp1.yaml`` Deployment (3 replicas, ``nodeSelector: kgc: a``); prints every
step record of that flow as it happens — step number, time since submission,
component, action, object, resourceVersion — until every replica is Running
and its status is stored; then a one-screen summary. Exit 0 on success, 1 with
a one-line reason otherwise.

The steps a flow has depend on what is created: a bare Pod has no controller, so no
steps 5-7 (and its etcd event is step 8, not 4); a pod with ``spec.nodeName`` has no
steps 9-11. A pod the scheduler cannot place ends the demo at once (exit 1) with the
FailedScheduling message and the scheduler's table (``controlplane explain``).

``--scenario NAME`` runs one of the seed examples instead
(:mod:`controlplane.cli.scenario`; ``--list`` names them).
"""

from __future__ import annotations

import asyncio
import contextlib
import os
import shutil
import sys
import tempfile
import time
from typing import Any, AsyncIterator

import click

from controlplane.api.resources import NODES, PODS, by_kind
from controlplane.cli import scenario as scenarios
from controlplane.cli.cluster import LocalCluster
from controlplane.cli.common import apiserver_errors, request_timeout_option
from controlplane.cli.manifest import DemoError, load_manifest
from controlplane.client.config import load_config, load_kubeconfig
from controlplane.client.rest import ApiError, RestClient
from controlplane.dashboard.sequence import render_sequence_html
from controlplane.service import Seconds, run_until_signalled
from controlplane.trace import stream
from controlplane.trace.explain import last_step9, render
from controlplane.trace.record import STEPS, StepRecord
from controlplane.trace.timeline import Flow, Reorder, format_record, step_summary

EXAMPLES = os.path.join(os.path.dirname(os.path.dirname(__file__)), "examples")
DEFAULT_LABELS = {"node01": {"kgc": "a"}, "node02": {"kgc": "b"}}


class Unschedulable(Exception):
    """The scheduler could not place a pod of the flow: ``record`` is its step-9 record."""

    def __init__(self, record: StepRecord) -> None:
        super().__init__(record.detail)
        self.record = record


class Demo:
    def __init__(self, client: RestClient, manifest: dict[str, Any], timeout: float, color: bool) -> None:
        self.client = client
        self.manifest = manifest
        self.timeout = timeout
        self.color = color
        md = manifest.setdefault("metadata", {})
        md.setdefault("namespace", "default")
        self.ns = md["namespace"]
        self.name = md["name"]
        self.kind = manifest["kind"]
        self.res = by_kind(self.kind, manifest.get("apiVersion"))
        self.flow = Flow(self.kind, self.ns, self.name)
        self.t0 = 0.0
        self.printed = 0

    def out(self, line: str = "") -> None:
        click.echo(line)

    # -- phases ----------------------------------------------------------------
    async def label_nodes(self) -> None:
        nodes = {n["metadata"]["name"] for n in (await self.client.list(NODES))["items"]}
        for node, labels in DEFAULT_LABELS.items():
            if node not in nodes:
                continue
            await self.client.patch(NODES, node, {"metadata": {"labels": labels}})
            kv = ",".join(f"{k}={v}" for k, v in labels.items())
            self.out(f"  kubectl label nodes {node} {kv} --overwrite    # node/{node} labeled")

    async def clean_previous(self) -> None:
        """Delete an earlier run's object and wait until its pods are gone."""
        try:
            await self.client.delete(self.res, self.name, self.ns, propagation_policy="Background")
        except ApiError as e:
            if e.code == 404:
                return
            raise
        self.out(f"  deleted the previous {self.kind.lower()}/{self.name}; waiting for its pods to go")
        sel = self._pod_selector()
        # a bare Pod: wait for that pod only, not for every pod of the namespace
        fsel = f"metadata.name={self.name}" if self.kind == "Pod" else None
        deadline = time.monotonic() + self.timeout
        while True:
            lst = await self.client.list(PODS, self.ns, label_selector=sel, field_selector=fsel)
            if not lst["items"]:
                return
            if time.monotonic() > deadline:
                raise DemoError(f"pods of the previous {self.name} still exist after {self.timeout:.0f}s")
            rv = lst["metadata"]["resourceVersion"]
            try:
                async for _typ, _obj in self.client.watch(PODS, self.ns, resource_version=rv, label_selector=sel,
                                                          field_selector=fsel, timeout_seconds=2):
                    break
            except ApiError:
                pass

    def _pod_selector(self) -> str | None:
        if self.kind == "Pod":
            return None
        sel = (self.manifest.get("spec") or {}).get("selector") or {}
        labels = sel.get("matchLabels", sel) if isinstance(sel, dict) else {}
        labels = {k: v for k, v in labels.items() if isinstance(v, str)}
        return ",".join(f"{k}={v}" for k, v in labels.items()) or None

    def replicas(self) -> int:
        if self.kind == "Pod":
            return 1
        r = (self.manifest.get("spec") or {}).get("replicas")
        return 1 if r is None else int(r)

    async def run(self) -> list[dict[str, Any]]:
        # Step 1 happened when the components started: show the latest per component.
        earlier = await stream.fetch(self.client, 0.0)
        step1: dict[str, StepRecord] = {}
        for r in earlier:
            if r.step == 1:
                step1[r.component + r.object.get("name", "")] = r
        start_since = time.time()
        records: asyncio.Queue[StepRecord] = asyncio.Queue()

        async def pump() -> None:
            async for rec in stream.follow(self.client, start_since):
                records.put_nowait(rec)
        pump_task = asyncio.create_task(pump())
        try:
            self.t0 = time.time()
            self.out("")
            self.out(click.style(f"The 13 steps of seed 000 for {self.kind.lower()}/{self.name} "
                                 f"(time relative to submission):", bold=True))
            for r in sorted(step1.values(), key=lambda r: r.time):
                self.out(format_record(r, self.t0, self.color) + "   [before submission]")
            created = await self.client.create(self.res, self.manifest, self.ns)
            for r in self.flow.set_root(created["metadata"]["uid"]):
                self.out(format_record(r, self.t0, self.color))
            return await asyncio.wait_for(self._follow(records), self.timeout)
        except Unschedulable as u:
            o = u.record.object
            self.out("")
            self.out(click.style(f"Pod {o.get('name')} cannot be scheduled (controlplane explain pod "
                                 f"{o.get('name')}):", bold=True))
            for line in render(u.record).splitlines():
                self.out("  " + line)
            raise DemoError(f"pod {o.get('namespace')}/{o.get('name')} stays Pending: FailedScheduling: "
                            f"{u.record.detail}") from None
        except asyncio.TimeoutError:
            missing = [f"{n} ({STEPS[n]})" for n in range(2, 14)
                       if n not in self.flow.steps_seen() and not self._skipped(n)]
            raise DemoError(f"timed out after {self.timeout:.0f}s; steps not seen: "
                            f"{'; '.join(missing) or 'none'} — see the component logs") from None
        finally:
            pump_task.cancel()

    def _skipped(self, step: int) -> bool:
        spec = self._pod_template_spec()
        if step in (9, 10, 11) and spec.get("nodeName"):
            return True
        # a bare Pod: no controller (steps 5-7), and its etcd event is step 8, not 4
        if step in (4, 5, 6, 7) and self.kind == "Pod":
            return True
        return False

    def _pod_template_spec(self) -> dict[str, Any]:
        if self.kind == "Pod":
            return self.manifest.get("spec") or {}
        return ((self.manifest.get("spec") or {}).get("template") or {}).get("spec") or {}

    async def _follow(self, records: asyncio.Queue[StepRecord]) -> list[dict[str, Any]]:
        """Print flow records (in time order, live) until every replica is
        Running with its status stored."""
        want = self.replicas()
        running: dict[str, dict[str, Any]] = {}  # pod uid -> pod
        stored_rv: dict[str, int] = {}  # pod uid -> highest step-13 rv seen
        reorder = Reorder()
        pods_task = asyncio.create_task(self._watch_running(running))
        try:
            while True:
                for rec in reorder.pop_ready(time.time()):
                    self.out(format_record(rec, self.t0, self.color))
                if len(running) >= want and all(
                        stored_rv.get(uid, 0) >= int(p["metadata"]["resourceVersion"])
                        for uid, p in running.items()) and self._all_steps_seen(running):
                    await self._drain_stragglers(records, reorder)
                    for rec in reorder.drain():
                        self.out(format_record(rec, self.t0, self.color))
                    return list(running.values())
                get = asyncio.create_task(records.get())
                done, _ = await asyncio.wait({get, pods_task}, timeout=reorder.window / 2,
                                             return_when=asyncio.FIRST_COMPLETED)
                if get not in done:
                    get.cancel()
                    if pods_task in done:
                        pods_task.result()  # raises if the pods watch failed
                    continue
                rec = get.result()
                if self.flow.offer(rec):
                    reorder.push(rec)
                    if rec.step == 9 and rec.component == "scheduler" and (rec.data or {}).get("error") \
                            and not (rec.data or {}).get("nominatedNodeName"):
                        for r in reorder.drain():
                            self.out(format_record(r, self.t0, self.color))
                        raise Unschedulable(rec)
                    if rec.step == 13 and rec.resourceVersion.isdigit():
                        stored_rv[rec.uid] = max(stored_rv.get(rec.uid, 0), int(rec.resourceVersion))
        finally:
            pods_task.cancel()

    def _all_steps_seen(self, running: dict[str, dict[str, Any]]) -> bool:
        """Every step of the flow has a record (skipped ones aside), and every
        running pod has its kubelet's step 12: records from other processes
        arrive in batches, possibly after the pod shows Running."""
        seen = self.flow.steps_seen()
        if any(n not in seen and not self._skipped(n) for n in range(2, 14)):
            return False
        kubelet_seen = {r.uid for r in self.flow.records if r.step == 12}
        return all(uid in kubelet_seen for uid in running)

    async def _drain_stragglers(self, records: asyncio.Queue[StepRecord], reorder: Reorder,
                                quiet: float = 0.3, limit: float = 2.0) -> None:
        """Take the flow's last records, which other processes send in small
        batches: stop once none arrived for ``quiet`` seconds (at most ``limit``)."""
        deadline = time.monotonic() + limit
        while time.monotonic() < deadline:
            try:
                rec = await asyncio.wait_for(records.get(), quiet)
            except asyncio.TimeoutError:
                return
            if self.flow.offer(rec):
                reorder.push(rec)

    async def _watch_running(self, running: dict[str, dict[str, Any]]) -> None:
        sel = self._pod_selector()
        while True:
            lst = await self.client.list(PODS, self.ns, label_selector=sel)
            for p in lst["items"]:
                self._note_pod(p, running)
            try:
                async for typ, p in self.client.watch(PODS, self.ns, label_selector=sel,
                                                      resource_version=lst["metadata"]["resourceVersion"]):
                    if typ in ("ADDED", "MODIFIED"):
                        self._note_pod(p, running)
                    elif typ == "DELETED":
                        running.pop(p["metadata"]["uid"], None)
            except ApiError as e:
                if e.code != 410:
                    raise

    def _note_pod(self, p: dict[str, Any], running: dict[str, dict[str, Any]]) -> None:
        uid = p["metadata"]["uid"]
        if self.kind == "Pod":
            mine = p["metadata"]["name"] == self.name
        else:
            mine = uid in self.flow.uids or any(
                o.get("uid") in self.flow.uids for o in p["metadata"].get("ownerReferences") or [])
        if mine and (p.get("status") or {}).get("phase") == "Running" and \
                not p["metadata"].get("deletionTimestamp"):
            running[uid] = p
        else:
            running.pop(uid, None)

    def summary(self, pods: list[dict[str, Any]]) -> None:
        total = max((r.time for r in self.flow.records), default=self.t0) - self.t0
        self.out("")
        self.out(click.style(f"Summary: {len(pods)} pod(s) Running {total:.2f}s after submission", bold=True))
        self.out(f"  {'POD':<28} {'NODE':<10} {'IP':<15} PHASE")
        for p in sorted(pods, key=lambda p: p["metadata"]["name"]):
            st = p.get("status") or {}
            self.out(f"  {p['metadata']['name']:<28} {p['spec'].get('nodeName', ''):<10} "
                     f"{st.get('podIP', ''):<15} {st.get('phase', '')}")
        self.out("")
        self.out(f"  {'STEP':<5} {'FIRST AT':>9} {'RECORDS':>7}  WHAT")
        for n, title, count, first in step_summary(self.flow.records, self.t0):
            if n == 1:
                self.out(f"  {n:<5} {'before':>9} {'':>7}  {title} (at start-up)")
                continue
            at = f"{first:+.3f}s" if first is not None else "-"
            note = ""
            if count == 0 and self._skipped(n):
                spec = self._pod_template_spec()
                note = (f"  — skipped: spec.nodeName={spec.get('nodeName')} is set, so the scheduler "
                        f"leaves the pod alone and {spec.get('nodeName')}'s kubelet runs it"
                        if n in (9, 10, 11) else "  — skipped: a bare Pod has no controller"
                        + (" (its etcd event is step 8)" if n == 4 else ""))
            self.out(f"  {n:<5} {at:>9} {count:>7}  {title}{note}")
        sel = (self._pod_template_spec().get("nodeSelector") or {})
        if sel:
            nodes = sorted({p["spec"].get("nodeName") for p in pods})
            self.out(f"\n  nodeSelector {sel} → every pod landed on {', '.join(nodes)}")
        self._explain_one(pods)

    def _explain_one(self, pods: list[dict[str, Any]]) -> None:
        """Step 9 in detail for the first pod: each plugin's verdict per node."""
        if not pods:
            return
        name = sorted(p["metadata"]["name"] for p in pods)[0]
        rec = last_step9(self.flow.records, self.ns, name)
        if rec is None or not rec.data:
            return
        self.out("")
        self.out(click.style(f"Step 9 for pod {name}: the scheduler's filter and score plugins per node "
                             f"(controlplane explain pod {name})", bold=True))
        for line in render(rec).splitlines():
            self.out("  " + line)


@contextlib.asynccontextmanager
async def demo_cluster(kubeconfig: str | None, master: str | None, data_dir: str | None,
                       etcd_servers: str | None, keep: bool, request_timeout: float) -> AsyncIterator[RestClient]:
    """A client of the running cluster (``--kubeconfig`` / ``--master``), or of one started
    for the demo in a temporary data dir (removed afterwards unless ``data_dir`` or
    ``keep``; with ``keep`` it runs until Ctrl-C). Raises DemoError (one line)."""
    cluster = None
    if kubeconfig or master:
        try:
            client_config = load_config(master, kubeconfig)
            client_config.ssl_context()
        except ValueError as e:
            raise DemoError(str(e)) from None
    else:
        ddir = data_dir or tempfile.mkdtemp(prefix="controlplane-demo-")
        click.echo(f"Starting a control plane (data dir {ddir}) — every component is its own process:")
        cluster = LocalCluster(ddir, etcd_servers=etcd_servers, apiserver_port=0, etcd_port=0,
                               say=lambda s: click.echo(f"  {s}"), restart=False)
    client: RestClient | None = None
    try:
        if cluster:
            try:
                await cluster.start()
            except RuntimeError as e:
                raise DemoError(str(e)) from None
            click.echo(f"  kubeconfig: {cluster.kubeconfig}")
            client_config = load_kubeconfig(cluster.kubeconfig)  # the admin's, over HTTPS
        client = RestClient(client_config, "demo", timeout=request_timeout)
        with apiserver_errors(client_config.host, DemoError):
            yield client
        if cluster and keep:
            click.echo(f"\nThe cluster keeps running: kubectl --kubeconfig {cluster.kubeconfig} get pods -o wide"
                       f"\nCtrl-C stops it.")
            await asyncio.Event().wait()
    finally:
        if client is not None:
            await client.close()
        if cluster:
            await asyncio.shield(cluster.stop())
            if not data_dir and not keep:
                shutil.rmtree(cluster.data_dir, ignore_errors=True)


@click.command("demo")
@click.option("--kubeconfig", default=None, metavar="PATH", help="use this running cluster")
@click.option("--master", default=None, metavar="URL", help="use the apiserver at URL")
@click.option("--manifest", "-f", default=None, metavar="FILE",
              help="workload to trace (default: seed 000's myapp1.yaml)")
@click.option("--scenario", default=None, metavar="NAME",
              help="run one seed example (nodes labelled, manifests applied, outcome checked); see --list")
@click.option("--list", "list_scenarios", is_flag=True, help="list the scenarios and exit")
@click.option("--fix-pasted", is_flag=True,
              help="replace characters pasted from a web page (U+00A0, U+FF1A, tabs) with a warning")
@click.option("--data-dir", default=None,
              help="data dir of the cluster the demo starts (default: a temporary dir)")
@click.option("--etcd-servers", default=None, metavar="URLS",
              help="with no running cluster: use this external etcd")
@click.option("--timeout", default=90.0, show_default=True, type=Seconds(min=0, min_open=True),
              help="seconds for the whole flow")
@click.option("--keep", is_flag=True, help="leave the cluster the demo started running")
@click.option("--color/--no-color", default=None, help="colour output (default: if a terminal)")
@click.option("--html", "html_out", default=None, metavar="FILE",
              help="also write the flow as an HTML sequence diagram")
@request_timeout_option
def command(kubeconfig: str | None, master: str | None, manifest: str | None, scenario: str | None,
            list_scenarios: bool, fix_pasted: bool, data_dir: str | None, etcd_servers: str | None,
            timeout: float, keep: bool, color: bool | None, html_out: str | None,
            request_timeout: float) -> None:
    """Run seed 000's 13-step pod creation flow and print each step live.

    Seed 000 is the article this project replays: Kubernetes' pod creation in
    13 steps (client, apiserver, etcd, controller-manager, scheduler, kubelet).
    With --kubeconfig/--master the demo uses that cluster and, to start clean,
    labels node01/node02 (kgc=a, kgc=b) and deletes an existing object of the
    manifest's name first. Without them it starts its own cluster in a
    temporary directory, removed afterwards (kept with --data-dir or --keep).
    --scenario runs one of the seeds' examples and exits 0 when the outcome is the
    one the article describes, 1 when not.
    """
    if list_scenarios:
        for each in scenarios.load_all():
            click.echo(f"{each.name:<32} seed {each.seed}  {each.title}")
        return
    if scenario and manifest:
        raise click.UsageError("--scenario and -f go separately")
    sc: scenarios.Scenario | None = scenarios.find(scenario) if scenario else None
    obj = None if sc else load_manifest(manifest or os.path.join(EXAMPLES, "myapp1.yaml"), fix_pasted)
    if color is None:
        color = sys.stdout.isatty()

    async def main() -> None:
        async with demo_cluster(kubeconfig, master, data_dir, etcd_servers, keep, request_timeout) as client:
            if sc is not None:
                ok = await scenarios.Runner(client, sc, timeout, bool(color)).run()
                if not ok:
                    raise DemoError(f"scenario {sc.name}: the outcome is not the one the article describes")
                return
            assert obj is not None
            demo = Demo(client, obj, timeout, bool(color))
            click.echo("\nLabelling the nodes as seed 000 does:")
            await demo.label_nodes()
            await demo.clean_previous()
            pods = await demo.run()
            demo.summary(pods)
            if html_out:
                with open(html_out, "w") as f:
                    f.write(render_sequence_html(demo.flow.records,
                                                 f"{demo.kind} {demo.ns}/{demo.name}: the 13 steps", demo.t0))
                click.echo(f"\nSequence diagram written to {html_out}")

    run_until_signalled(main)
