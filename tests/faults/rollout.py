"""One fault scenario: Deployment rollouts (create → scale up → scale down) with a SIGKILL in
every phase, and the checks of issue 9's "Prove it" at the end.

Per phase: the write is retried until acknowledged, the kill lands when the watched pods show
a third of the new pods (create, scale up) or the first deletion (scale down), then the
Deployment must converge within ``CONVERGE_S``:
``status`` replicas = updated = ready = available = desired at the current generation, and
exactly ``desired`` pods with its label, all Running and Ready, none terminating. At the end
(the ConfigMap writer stopped): every acknowledged ConfigMap create is present and every
acknowledged delete absent, one ReplicaSet per Deployment, no uid twice, and each watcher's
state rebuilt from its event log at the final list's resourceVersion equals that list.
"""

from __future__ import annotations

import asyncio
import time

import aiohttp

from tests.faults.harness import FIGURES, NAMESPACE, Api, Changes, Cluster, ConfigMapWriter, Watcher, rv_of

PHASES = (("create", 50), ("scale-up", 100), ("scale-down", 25))
CONVERGE_S = 30.0
NS = f"/namespaces/{NAMESPACE}"
PATHS = {"pods": f"/api/v1{NS}/pods", "configmaps": f"/api/v1{NS}/configmaps",
         "deployments": f"/apis/apps/v1{NS}/deployments",
         "replicasets": f"/apis/apps/v1{NS}/replicasets"}


def deployment(name: str, replicas: int) -> dict:
    return {"apiVersion": "apps/v1", "kind": "Deployment", "metadata": {"name": name},
            "spec": {"replicas": replicas, "selector": {"matchLabels": {"app": name}},
                     "template": {"metadata": {"labels": {"app": name}},
                                  "spec": {"containers": [{"name": "c", "image": "nginx"}]}}}}


def is_ready(pod: dict) -> bool:
    st = pod.get("status") or {}
    return st.get("phase") == "Running" and any(
        c.get("type") == "Ready" and c.get("status") == "True" for c in st.get("conditions") or [])


def live(pods, app: str) -> list[dict]:
    return [p for p in pods if (p["metadata"].get("labels") or {}).get("app") == app
            and not p["metadata"].get("deletionTimestamp")]


def not_converged(dep: dict | None, pods, desired: int) -> str | None:
    """Why ``dep`` with these pods is not at ``desired`` ready pods (None: it is)."""
    if dep is None:
        return "deployment missing"
    name = dep["metadata"]["name"]
    mine = [p for p in pods if (p["metadata"].get("labels") or {}).get("app") == name]
    st = dep.get("status") or {}
    want = {"replicas": desired, "updatedReplicas": desired, "readyReplicas": desired,
            "availableReplicas": desired}
    have = {k: st.get(k, 0) for k in want}
    if dep["spec"].get("replicas") != desired:
        return f"spec.replicas {dep['spec'].get('replicas')} != {desired}"
    if st.get("observedGeneration") != dep["metadata"].get("generation"):
        return f"observedGeneration {st.get('observedGeneration')} != {dep['metadata'].get('generation')}"
    if have != want:
        return f"status {have}"
    terminating = sum(1 for p in mine if p["metadata"].get("deletionTimestamp"))
    ready = sum(1 for p in mine if is_ready(p) and not p["metadata"].get("deletionTimestamp"))
    if len(mine) != desired or ready != desired:
        return f"{len(mine)} pods ({ready} ready, {terminating} terminating), want {desired}"
    return None


def missed_events(listed: list[dict], watched: dict[str, int]) -> list[str]:
    """Objects where a list and a watch's state at the same revision disagree: missing from
    one of them or at another resourceVersion (each such object is at least one missed event)."""
    have = {o["metadata"]["name"]: rv_of(o) for o in listed}
    return [f"{n}: list rv {have.get(n)}, watch rv {watched.get(n)}"
            for n in sorted(set(have) | set(watched)) if have.get(n) != watched.get(n)]


class Scenario:
    """Kill ``targets`` (cycled, one per phase) over ``rounds`` rounds of PHASES on ``cluster``."""

    def __init__(self, name: str, cluster: Cluster, targets: list[str], rounds: int = 1) -> None:
        self.name = name
        self.cluster = cluster
        self.targets = targets
        self.rounds = rounds
        self.fig = {"scenario": name, "kills": 0, "phases": 0, "converged": 0, "lost": 0,
                    "duplicates": 0, "missed": 0, "relists": 0, "acked": 0, "unanswered": 0,
                    "seconds": 0.0, "worst_converge_s": 0.0}
        self.problems: list[str] = []

    async def run(self) -> None:
        t0 = time.monotonic()
        FIGURES.append(self.fig)
        try:
            async with aiohttp.ClientSession(connector=aiohttp.TCPConnector(ssl=self.cluster.ssl_context())) as session:
                await self._run(Api(session, self.cluster.server))
        finally:
            self.fig["seconds"] = round(time.monotonic() - t0, 1)
            self.fig["kills"] = sum(self.cluster.kills.values())
        assert not self.problems, f"{self.name}:\n" + "\n".join(self.problems[:40])

    async def _run(self, api: Api) -> None:
        changes = Changes()
        watchers = self.watchers = {r: Watcher(api, p, changes) for r, p in PATHS.items()}
        for w in watchers.values():
            w.start()
        writer = ConfigMapWriter(api, "cm")
        try:
            assert await changes.wait_until(lambda: all(w.rv for w in watchers.values()), 30), \
                "watchers did not list"
            writer.start()
            pods, deps = watchers["pods"].state, watchers["deployments"].state
            k = 0
            for r in range(self.rounds):
                dep, prev = f"web-{r + 1}", 0
                for phase, want in PHASES:
                    target = self.targets[k % len(self.targets)]
                    k += 1
                    self.fig["phases"] += 1
                    if phase == "create":
                        await api.write("POST", PATHS["deployments"], deployment(dep, want), ok=(409,))
                    else:
                        await api.write("PATCH", f"{PATHS['deployments']}/{dep}",
                                        {"spec": {"replicas": want}}, "application/merge-patch+json")
                    # the kill point: a third of the pods created (they come in slow-start
                    # batches), or the first pod deleted (the deletes are sent at once)
                    mark = prev + (want - prev) // 3 if want > prev else prev - 1
                    trigger = ((lambda: len(live(pods.values(), dep)) >= mark) if want > prev else
                               (lambda: len(live(pods.values(), dep)) <= mark))
                    if not await changes.wait_until(trigger, CONVERGE_S):
                        self.problems.append(f"{dep} {phase}: the watch never showed {mark} live pods")
                        return
                    await asyncio.to_thread(self.cluster.kill, target)
                    t = time.monotonic()
                    why = await self._converge(api, changes, deps, pods, dep, want)
                    took = time.monotonic() - t
                    self.fig["worst_converge_s"] = round(max(self.fig["worst_converge_s"], took), 1)
                    if why:
                        self.problems.append(f"{dep} {phase} to {want} (killed {target}): not converged "
                                             f"in {CONVERGE_S:.0f}s: {why}")
                        return
                    self.fig["converged"] += 1
                    prev = want
            await writer.stop()
            await self._final_checks(api, watchers, writer)
        finally:
            await writer.stop()
            for w in watchers.values():
                await w.stop()
            self.fig["relists"] = sum(w.relists - 1 for w in watchers.values())
            self.fig["acked"] = len(writer.acked)
            self.fig["unanswered"] = writer.unanswered

    async def _converge(self, api: Api, changes: Changes, deps: dict, pods: dict, dep: str,
                        want: int) -> str | None:
        """Wait (on watch events) until the watched state is converged, then confirm with
        consistent lists; the reason it is not, after CONVERGE_S."""
        deadline = time.monotonic() + CONVERGE_S
        why: str | None = "not checked"
        while time.monotonic() < deadline:
            left = deadline - time.monotonic()
            watched = await changes.wait_until(
                lambda: not_converged(deps.get(dep), pods.values(), want) is None, left)
            d = await api.list(f"{PATHS['deployments']}/{dep}")
            p = (await api.list(PATHS["pods"] + f"?labelSelector=app%3D{dep}"))["items"]
            why = not_converged(d, p, want)
            if not watched:
                return (f"watch: {not_converged(deps.get(dep), pods.values(), want)}; list: "
                        f"{why or 'converged (the watch missed events)'}")
            if why is None:
                return None
            # the watch is behind the list: wait for its next events
            await changes.next(max(0.0, deadline - time.monotonic()))
        return "list: " + str(why)

    async def _final_checks(self, api: Api, watchers: dict[str, Watcher],
                            writer: ConfigMapWriter) -> None:
        for attempt in range(3):
            lists = {r: await api.list(p) for r, p in PATHS.items()}
            await self._sentinels(api, attempt)
            for r, w in watchers.items():
                x = int(lists[r]["metadata"]["resourceVersion"])
                if not await w.changes.wait_until(lambda: (w.rv or 0) > x, 30):
                    self.problems.append(f"{r}: watch never passed the final list's rv {x}")
            replays = {r: w.replay(int(lists[r]["metadata"]["resourceVersion"]))
                       for r, w in watchers.items()}
            if all(v is not None for v in replays.values()):
                break
        else:
            self.problems.append("watchers kept relisting after the final lists")
            return
        items = {r: lists[r].get("items") or [] for r in PATHS}
        # missed events: the watch's reconstructed state against the list at the same revision
        for r, state in replays.items():
            diff = missed_events(items[r], state)
            self.fig["missed"] += len(diff)
            self.problems += [f"{r} watch missed an event: {d}" for d in diff[:10]]
            for o in watchers[r].out_of_order[:10]:
                self.problems.append(f"{r} watch out of order: {o}")
            self.fig["duplicates"] += len(watchers[r].out_of_order)
        # lost writes
        lost = writer.check(items["configmaps"])
        self.fig["lost"] += len(lost)
        self.problems += [f"lost: {x}" for x in lost[:20]]
        # duplicates: a uid twice, a second ReplicaSet for a Deployment, pods of another owner
        uids = [o["metadata"]["uid"] for r in PATHS for o in items[r]]
        dup = len(uids) - len(set(uids))
        deps = {o["metadata"]["name"]: o for o in items["deployments"]}
        for r in range(self.rounds):
            name = f"web-{r + 1}"
            d = deps.get(name)
            if d is None:
                self.fig["lost"] += 1
                self.problems.append(f"lost: deployment {name}")
                continue
            why = not_converged(d, items["pods"], PHASES[-1][1])
            if why:
                self.problems.append(f"{name} at the end: {why}")
            owned = [rs for rs in items["replicasets"]
                     if any(o.get("uid") == d["metadata"]["uid"]
                            for o in rs["metadata"].get("ownerReferences") or [])]
            if len(owned) != 1:
                dup += len(owned) - 1
                self.problems.append(f"{name}: {len(owned)} ReplicaSets "
                                     f"{[rs['metadata']['name'] for rs in owned]}")
            rs_uids = {rs["metadata"]["uid"] for rs in owned}
            for p in items["pods"]:
                if (p["metadata"].get("labels") or {}).get("app") == name and not any(
                        o.get("uid") in rs_uids for o in p["metadata"].get("ownerReferences") or []):
                    dup += 1
                    self.problems.append(f"{name}: pod {p['metadata']['name']} not owned by its ReplicaSet")
        self.fig["duplicates"] += dup
        if dup and not any("ReplicaSet" in p for p in self.problems):
            self.problems.append(f"{dup} duplicate uids")

    async def _sentinels(self, api: Api, attempt: int) -> None:
        """One new object per watched resource, so every watch gets an event after the lists."""
        name = f"sentinel-{attempt}"
        await api.write("POST", PATHS["configmaps"], {
            "apiVersion": "v1", "kind": "ConfigMap", "metadata": {"name": name}}, ok=(409,))
        await api.write("POST", PATHS["pods"], {
            "apiVersion": "v1", "kind": "Pod", "metadata": {"name": name},
            "spec": {"schedulerName": "faults-nobody", "containers": [{"name": "c", "image": "nginx"}]}},
            ok=(409,))
        dep = deployment(name, 0)
        await api.write("POST", PATHS["deployments"], dep, ok=(409,))
        await api.write("POST", PATHS["replicasets"], {
            "apiVersion": "apps/v1", "kind": "ReplicaSet", "metadata": {"name": name + "-rs"},
            "spec": {"replicas": 0, "selector": {"matchLabels": {"sentinel": name}},
                     "template": {"metadata": {"labels": {"sentinel": name}},
                                  "spec": {"containers": [{"name": "c", "image": "nginx"}]}}}}, ok=(409,))
