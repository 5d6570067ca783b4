"""``controlplane demo --scenario NAME``: one example of seeds 000 and 001, run and checked.

A scenario is data: one YAML file under ``controlplane/examples/scenarios/`` ::

    name: node-affinity-required          # what --scenario takes
    seed: "000"                           # the article it comes from
    title: one line for --list
    article: the outcome as the article states it (quoted)
    steps:                                # run in order
    - label: {node01: {kgc: a}, node02: {kgc: null}}   # kubectl label nodes ... (null: remove)
    - apply: pod1.yaml                    # a manifest beside it in controlplane/examples/
    - expect: {pod: affinity, node: node01}

Each step is done through the API (the REST client) and printed as the kubectl command the
article types, with kubectl's answer. ``expect`` waits for its pods (``pod: NAME``, or ``pods: SELECTOR`` with ``count``) to be
Running — or, with ``pending``, to be left unschedulable — prints them as ``kubectl get pods
-o wide`` does and the scheduler's reasoning (:func:`controlplane.trace.explain.render`),
then checks each given key:

=================  ============================================================================
``node``           every pod runs on that node
``node_in``        every pod runs on one of these nodes
``same_node_as``   on the node of that (already running) pod
``other_node_than`` not on the node of that pod
``feasible``       the nodes that passed every filter in the pod's step-9 record, as a set
``feasible_count`` how many did
``pending``        the pod stays Pending; the FailedScheduling message contains this text
``bypassed``       no step 9 at all: spec.nodeName was set, the scheduler never saw the pod
``init_first``     every init container Completed before the containers started, all Running
=================  ============================================================================

:class:`Runner` runs one scenario against a cluster and says, at the end, whether the
outcome is the one the article describes (``run()`` → True / False).
"""

from __future__ import annotations

import asyncio
import os
import time
from dataclasses import dataclass, field
from typing import Any

import click

from controlplane import yamlfile
from controlplane.api.resources import NODES, PODS, by_kind
from controlplane.cli.manifest import load_manifest
from controlplane.client.informer import Informer
from controlplane.client.rest import ApiError, RestClient
from controlplane.trace import stream
from controlplane.trace.explain import bypassed, last_step9, render
from controlplane.trace.record import StepRecord

EXAMPLES = os.path.join(os.path.dirname(os.path.dirname(__file__)), "examples")
SCENARIOS = os.path.join(EXAMPLES, "scenarios")

#: the keys ``expect`` checks (beside ``pod`` / ``pods`` / ``count``)
CHECKS = ("node", "node_in", "same_node_as", "other_node_than", "feasible", "feasible_count", "pending",
          "bypassed", "init_first")


class ScenarioError(click.ClickException):
    """A scenario that cannot be loaded or run (one line, exit 1)."""


@dataclass
class Scenario:
    """One scenario file (see the module docstring for the shape)."""

    name: str
    seed: str
    title: str
    article: str
    steps: list[dict[str, Any]] = field(default_factory=list)
    path: str = ""


def load(path: str) -> Scenario:
    """The scenario in ``path``; raises ScenarioError on a malformed file."""
    try:
        docs = yamlfile.load_file(path)
    except yamlfile.YAMLFileError as e:
        raise ScenarioError(str(e)) from None
    d = docs[0] if len(docs) == 1 and isinstance(docs[0], dict) else None
    if d is None or not isinstance(d.get("steps"), list) or not d.get("name"):
        raise ScenarioError(f"{path}: a scenario needs name and steps")
    for st in d["steps"]:
        if not isinstance(st, dict) or len(st) != 1 or next(iter(st)) not in ("label", "apply", "expect"):
            raise ScenarioError(f"{path}: step {st!r}: one of label, apply, expect")
        ex = st.get("expect")
        if ex is not None and (not isinstance(ex, dict) or not ({"pod", "pods"} & set(ex))
                               or set(ex) - {"pod", "pods", "count", *CHECKS}):
            raise ScenarioError(f"{path}: expect {ex!r}: pod or pods, then any of {', '.join(CHECKS)}")
    return Scenario(str(d["name"]), str(d.get("seed", "")), str(d.get("title", "")), str(d.get("article", "")),
                    d["steps"], path)


def load_all() -> list[Scenario]:
    """Every scenario shipped, by name."""
    return sorted((load(os.path.join(SCENARIOS, f)) for f in os.listdir(SCENARIOS) if f.endswith(".yaml")),
                  key=lambda s: (s.seed, s.name))


def find(name: str) -> Scenario:
    """The scenario ``name``; raises ScenarioError naming the known ones."""
    known = load_all()
    for sc in known:
        if sc.name == name:
            return sc
    raise ScenarioError(f"no scenario {name!r}; known: {', '.join(s.name for s in known)}")


def _pod_row(p: dict[str, Any]) -> str:
    st = p.get("status") or {}
    cs = st.get("containerStatuses") or []
    ready = f"{sum(1 for c in cs if c.get('ready'))}/{len((p.get('spec') or {}).get('containers') or [])}"
    return (f"  {p['metadata']['name']:<28} {ready:<6} {st.get('phase', ''):<9} {st.get('podIP') or '<none>':<13} "
            f"{(p.get('spec') or {}).get('nodeName') or '<none>'}")


def unschedulable(p: dict[str, Any]) -> str | None:
    """The PodScheduled=False (reason Unschedulable) message of a pod, or None."""
    for c in (p.get("status") or {}).get("conditions") or []:
        if c.get("type") == "PodScheduled" and c.get("status") == "False" and c.get("reason") == "Unschedulable":
            return str(c.get("message") or "")
    return None


class Runner:
    """Runs ``scenario`` through ``client`` (namespace ``default``, as the articles);
    ``timeout``: seconds each ``expect`` may wait."""

    def __init__(self, client: RestClient, scenario: Scenario, timeout: float = 90.0, color: bool = False) -> None:
        self.client = client
        self.sc = scenario
        self.timeout = timeout
        self.color = color
        self.ns = "default"
        self.pods = Informer(client, PODS, namespace=self.ns)
        self.records: list[StepRecord] = []
        self.changed = asyncio.Event()
        self.failures: list[str] = []
        self.passed = 0
        self.pods.add_handlers(on_add=lambda _obj: self.changed.set(),
                               on_update=lambda _old, _new: self.changed.set(),
                               on_delete=lambda _obj: self.changed.set())

    def out(self, line: str = "", **style: Any) -> None:
        click.echo(click.style(line, **style) if self.color and style else line)

    async def _follow(self, since: float) -> None:
        async for rec in stream.follow(self.client, since):
            self.records.append(rec)
            self.changed.set()

    async def _until(self, ready: Any, what: str) -> Any:
        """Wait (on the pods watch and the trace stream) until ``ready()`` is not None."""
        deadline = time.monotonic() + self.timeout
        while True:
            self.changed.clear()
            got = ready()
            if got is not None:
                return got
            left = deadline - time.monotonic()
            if left <= 0:
                raise asyncio.TimeoutError(what)
            try:
                await asyncio.wait_for(self.changed.wait(), left)
            except asyncio.TimeoutError:
                raise asyncio.TimeoutError(what) from None

    async def run(self) -> bool:
        """Run every step; True when every check held (the article's outcome)."""
        self.out(f"Scenario {self.sc.name} (seed {self.sc.seed}): {self.sc.title}", bold=True)
        self.out(f"  the article: {self.sc.article}")
        follower = asyncio.create_task(self._follow(time.time() - 1))
        self.pods.start()
        try:
            await self.pods.wait_synced(self.timeout)
            await self._clean()
            for st in self.sc.steps:
                kind, arg = next(iter(st.items()))
                if kind == "label":
                    await self._label(arg)
                elif kind == "apply":
                    await self._apply(arg)
                else:
                    await self._expect(arg)
        except asyncio.TimeoutError as e:
            self.failures.append(f"timed out after {self.timeout:.0f}s waiting for {e}")
        finally:
            follower.cancel()
            await self.pods.stop()
        self.out("")
        if self.failures:
            self.out(f"NOT the outcome the article describes: {'; '.join(self.failures)}", fg="red", bold=True)
            return False
        self.out(f"As the article describes ({self.passed} check(s) held).", fg="green", bold=True)
        return True

    # -- steps -------------------------------------------------------------------------------
    def _manifest(self, name: str) -> dict[str, Any]:
        return load_manifest(os.path.join(EXAMPLES, name))

    async def _clean(self) -> None:
        """Delete what the scenario will create (from an earlier run) and wait until it is gone."""
        for st in self.sc.steps:
            if "apply" not in st:
                continue
            obj = self._manifest(st["apply"])
            res = by_kind(obj["kind"], obj.get("apiVersion"))
            name = obj["metadata"]["name"]
            try:
                await self.client.delete(res, name, self.ns, propagation_policy="Background")
            except ApiError as e:
                if e.code != 404:
                    raise
                continue
            self.out(f"  (deleted {obj['kind'].lower()}/{name} of an earlier run)")
        names = {self._manifest(st["apply"])["metadata"]["name"] for st in self.sc.steps if "apply" in st}

        def gone() -> bool | None:
            left = [p for p in self.pods.list() if p["metadata"]["name"] in names or any(
                p["metadata"]["name"].startswith(n + "-") and p["metadata"].get("ownerReferences")
                for n in names)]
            return True if not left else None
        await self._until(gone, "the pods of an earlier run to go")

    async def _label(self, labels: dict[str, dict[str, Any]]) -> None:
        for node, kv in labels.items():
            await self.client.patch(NODES, node, {"metadata": {"labels": kv}})
            args = " ".join(f"{k}-" if v is None else f"{k}={v}" for k, v in kv.items())
            self.out(f"  kubectl label nodes {node} {args} --overwrite    # node/{node} labeled")

    async def _apply(self, name: str) -> None:
        obj = self._manifest(name)
        res = by_kind(obj["kind"], obj.get("apiVersion"))
        await self.client.create(res, obj, self.ns)
        self.out(f"  kubectl apply -f {name}    # {obj['kind'].lower()}{'.apps' if res.group == 'apps' else ''}/"
                 f"{obj['metadata']['name']} created")

    def _targets(self, ex: dict[str, Any]) -> list[dict[str, Any]]:
        pods = [p for p in self.pods.list() if not p["metadata"].get("deletionTimestamp")]
        if "pod" in ex:
            return [p for p in pods if p["metadata"]["name"] == ex["pod"]]
        want = dict(kv.split("=", 1) for kv in str(ex["pods"]).split(","))
        return [p for p in pods if all((p["metadata"].get("labels") or {}).get(k) == v for k, v in want.items())]

    async def _expect(self, ex: dict[str, Any]) -> None:
        count = int(ex.get("count", 1))
        what = ex.get("pod") or ex.get("pods")

        def settled() -> list[dict[str, Any]] | None:
            pods = self._targets(ex)
            if len(pods) < count:
                return None
            if "pending" in ex:
                return pods if all(unschedulable(p) is not None for p in pods) else None
            for p in pods:  # a pod that cannot be placed ends the wait at once
                if unschedulable(p) is not None:
                    return pods
            return pods if all((p.get("status") or {}).get("phase") == "Running" for p in pods) else None
        pods = sorted(await self._until(settled, f"pod(s) {what} to run"), key=lambda p: p["metadata"]["name"])
        self.out("  kubectl get pods -o wide")
        self.out(f"  {'NAME':<28} {'READY':<6} {'STATUS':<9} {'IP':<13} NODE")
        for p in pods:
            self.out(_pod_row(p))
        recs = {p["metadata"]["uid"]: await self._step9(p, expect_none=bool(ex.get("bypassed"))) for p in pods}
        if ex.get("init_first"):  # the kubelet's step-12 records come in batches, maybe after Running
            for p in pods:
                uid = p["metadata"]["uid"]
                await self._until(lambda: True if any(r.step == 12 and r.uid == uid and r.action.startswith(
                    "containers started") for r in self.records) else None, "the kubelet's containers-started record")
        first = pods[0]
        rec = recs[first["metadata"]["uid"]]
        if not any(k in ex for k in CHECKS):
            return  # a pod the scenario only needs in place (myapp01 before the affinity examples)
        self.out("")
        if rec is not None:
            self.out(f"Why: the scheduler's step 9 for {first['metadata']['name']} "
                     f"(controlplane explain pod {first['metadata']['name']}):", bold=True)
            for line in render(rec).splitlines():
                self.out("  " + line)
        else:
            self.out(f"Why: {bypassed(first) or 'no scheduling record for this pod'}", bold=True)
        for key in CHECKS:
            if key in ex:
                for p in pods:
                    self._check(key, ex[key], p, recs[p["metadata"]["uid"]])

    async def _step9(self, pod: dict[str, Any], expect_none: bool) -> StepRecord | None:
        """The pod's step-9 record (waiting for it: records come in batches), or None for a
        pod the scheduler never saw (``spec.nodeName`` set at creation)."""
        md = pod["metadata"]
        if expect_none or (bypassed(pod) and not last_step9(self.records, self.ns, md["name"], md["uid"])):
            return None
        found: StepRecord | None = await self._until(
            lambda: last_step9(self.records, self.ns, md["name"], md["uid"]), f"the step-9 record of {md['name']}")
        return found

    def _node_of(self, name: str) -> str:
        p = next((p for p in self.pods.list() if p["metadata"]["name"] == name), None)
        return str((p or {}).get("spec", {}).get("nodeName") or "")

    def _check(self, key: str, want: Any, pod: dict[str, Any], rec: StepRecord | None) -> None:
        name = pod["metadata"]["name"]
        node = (pod.get("spec") or {}).get("nodeName") or ""
        msg = unschedulable(pod)
        filt = ((rec.data or {}).get("filter") or {}) if rec else {}
        feasible = sorted(n for n, v in filt.items() if v and all(x == "passed" for x in v.values()))
        if msg is not None and key != "pending":
            ok, text = False, f"{name} was not scheduled: FailedScheduling: {msg}"
        elif key == "node":
            ok, text = node == want, f"{name} runs on {want} (it is on {node or 'no node'})"
        elif key == "node_in":
            ok, text = node in want, f"{name} runs on one of {', '.join(want)} (it is on {node or 'no node'})"
        elif key == "same_node_as":
            other = self._node_of(want)
            ok, text = bool(node) and node == other, f"{name} shares {want}'s node {other} (it is on {node})"
        elif key == "other_node_than":
            other = self._node_of(want)
            ok, text = bool(node) and node != other, f"{name} avoids {want}'s node {other} (it is on {node})"
        elif key == "feasible":
            ok = set(feasible) == set(want)
            text = f"the nodes passing every filter for {name} are {', '.join(want)} (they are {feasible})"
        elif key == "feasible_count":
            ok, text = len(feasible) == int(want), f"{want} node(s) pass every filter for {name} ({feasible})"
        elif key == "pending":
            ok = msg is not None and str(want) in msg
            text = f"{name} stays Pending: FailedScheduling: {msg or '(it was scheduled)'}"
        elif key == "bypassed":
            ok = bool(want) == (rec is None and bypassed(pod) is not None)
            text = f"{name} bypassed the scheduler (spec.nodeName={node}, no step 9)"
        else:  # init_first
            ok, text = self._init_first(pod)
        self.out(("  ✓ " if ok else "  ✗ ") + text, fg="green" if ok else "red")
        if ok:
            self.passed += 1
        else:
            self.failures.append(text)

    def _init_first(self, pod: dict[str, Any]) -> tuple[bool, str]:
        st = pod.get("status") or {}
        init = st.get("initContainerStatuses") or []
        done = all(((c.get("state") or {}).get("terminated") or {}).get("reason") == "Completed" for c in init)
        running = [c["name"] for c in st.get("containerStatuses") or [] if (c.get("state") or {}).get("running")]
        steps = [r.action for r in sorted(self.records, key=lambda r: r.time)
                 if r.step == 12 and r.uid == pod["metadata"]["uid"]]
        i_init = max((i for i, a in enumerate(steps) if a.startswith("init container")), default=-1)
        i_start = next((i for i, a in enumerate(steps) if a.startswith("containers started")), -1)
        ok = bool(init) and done and len(running) == len((pod.get("spec") or {}).get("containers") or []) \
            and 0 <= i_init < i_start
        return ok, (f"init container(s) {', '.join(c['name'] for c in init)} Completed before containers "
                    f"{', '.join(running)} started together (kubelet: {' → '.join(steps[1:]) or '-'})")
