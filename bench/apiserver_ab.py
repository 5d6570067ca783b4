"""The apiserver's CPU per request on the hot verbs, two source trees side by side (figures
printed, never a test).

Starts one embedded etcd and two apiservers on it, each as ``controlplane up`` runs it (HTTPS
with client certificates, ``--authorization-mode Node,RBAC``, the default audit policy writing
a log): ``base`` from the source tree ``--base DIR`` (e.g. ``git archive main | tar -x -C DIR``)
and ``new`` from this tree. The clients present the certificate of a user outside
``system:masters`` bound to ``cluster-admin``, so every request is authorized by RBAC, as the
controller-manager's are. Each server's namespace has ``--watchers`` watches of ConfigMaps and
pods open (the informers' fan-out: every event is written to each).

``--rounds`` rounds alternate between the servers (the order flips each round, so the shared
machine's load drifts hit both alike); in each, on one server with ``--clients`` workers:

* ``create cm``: POST ``--objects`` ConfigMaps with an ownerReference (the GC bench's dependents);
* ``delete cm``: DELETE each with the DeleteOptions the garbage collector sends
  (``preconditions`` uid + resourceVersion, ``propagationPolicy: Background``);
* ``create pod`` / ``bind`` / ``status`` / ``event``: ``--objects`` pods created, bound
  (``pods/NAME/binding``), their status patched Running (a strategic-merge PATCH of
  ``pods/NAME/status`` as the kubelet's status manager sends) and one Event created for each
  (``Scheduled``), then the pods deleted (not counted).

Prints, per phase and server, the apiserver's CPU microseconds per request (from /proc, the
figure a shared machine disturbs least) and requests/s, and new ÷ base.

    python bench/apiserver_ab.py --base /tmp/base-tree [--objects 2000] [--rounds 4] [--clients 32]
        [--profile DIR [--py-spy PATH]]
"""

from __future__ import annotations

import argparse
import asyncio
import json
import os
import shutil
import ssl
import subprocess
import sys
import tempfile
import time
from collections.abc import Awaitable, Callable
from typing import Any

import aiohttp

sys.path.insert(0, os.path.join(os.path.dirname(os.path.abspath(__file__)), ".."))
from bench.common import cpu_seconds, start_service, stop_services  # noqa: E402

ROOT = os.path.join(os.path.dirname(os.path.abspath(__file__)), "..")
PHASES = ("create cm", "delete cm", "create pod", "bind", "status", "event")
JSON_CT = {"Content-Type": "application/json"}


def start_apiserver(tree: str, args: list[str], log_path: str) -> tuple[subprocess.Popen, str]:
    """``python -m controlplane apiserver ARGS`` run from source tree ``tree``."""
    old = os.environ.get("PYTHONPATH")
    os.environ["PYTHONPATH"] = tree
    try:
        import bench.common as common
        saved, common.ROOT = common.ROOT, tree
        try:
            return start_service(["apiserver", *args], log_path, r"event=apiserver\.ready url=(\S+)")
        finally:
            common.ROOT = saved
    finally:
        if old is None:
            os.environ.pop("PYTHONPATH", None)
        else:
            os.environ["PYTHONPATH"] = old


async def run_workers(items: list[Any], clients: int, one: Callable[[Any], Awaitable[bool]]) -> tuple[float, int]:
    """``one(item)`` for every item with ``clients`` workers; (wall seconds, failures)."""
    it = iter(items)
    failures = 0

    async def worker() -> None:
        nonlocal failures
        for item in it:
            if not await one(item):
                failures += 1
    t0 = time.perf_counter()
    await asyncio.gather(*(worker() for _ in range(clients)))
    return time.perf_counter() - t0, failures


async def watch_forever(s: aiohttp.ClientSession, url: str) -> None:
    """Read a watch stream and drop what comes (an informer that keeps up)."""
    while True:
        try:
            async with s.get(url, params={"watch": "true", "timeoutSeconds": "3600"},
                             timeout=aiohttp.ClientTimeout(total=None)) as r:
                async for _ in r.content.iter_any():
                    pass
        except (aiohttp.ClientError, asyncio.TimeoutError):
            await asyncio.sleep(0.2)  # the server restarting: re-watch shortly (bench only)


async def one_round(s: aiohttp.ClientSession, base: str, ns: str, tag: str, n: int, clients: int,
                    pid: int, figures: dict[str, list[float]]) -> None:
    """The phases of the module docstring on one server; adds (cpu s, wall s, requests,
    failures) to ``figures[phase]``."""
    async def phase(name: str, items: list[Any], one: Callable[[Any], Awaitable[bool]]) -> None:
        c0 = cpu_seconds(pid)
        wall, failures = await run_workers(items, clients, one)
        f = figures[name]
        f[0] += cpu_seconds(pid) - c0
        f[1] += wall
        f[2] += len(items)
        f[3] += failures

    cms = f"{base}/api/v1/namespaces/{ns}/configmaps"
    owner_ref = [{"apiVersion": "v1", "kind": "ConfigMap", "name": "owner", "uid": "00000000-0000-0000-0000-0000000000aa"}]
    made: dict[str, dict] = {}

    async def create_cm(name: str) -> bool:
        body = {"apiVersion": "v1", "kind": "ConfigMap", "metadata": {
            "name": name, "labels": {"bench": "gc"}, "ownerReferences": owner_ref}, "data": {"k": "v"}}
        async with s.post(cms, data=json.dumps(body).encode(), headers=JSON_CT) as r:
            obj = await r.json()
            made[name] = obj.get("metadata") or {}
            return r.status == 201

    async def delete_cm(name: str) -> bool:
        md = made[name]
        body = {"kind": "DeleteOptions", "apiVersion": "v1", "propagationPolicy": "Background",
                "preconditions": {"uid": md.get("uid"), "resourceVersion": md.get("resourceVersion")}}
        async with s.delete(f"{cms}/{name}", data=json.dumps(body).encode(), headers=JSON_CT) as r:
            await r.read()
            return r.status == 200

    names = [f"cm-{tag}-{i:06d}" for i in range(n)]
    await phase("create cm", names, create_cm)
    await phase("delete cm", names, delete_cm)

    pods = f"{base}/api/v1/namespaces/{ns}/pods"

    async def create_pod(name: str) -> bool:
        body = {"apiVersion": "v1", "kind": "Pod", "metadata": {"name": name, "labels": {"app": "bench"}},
                "spec": {"containers": [{"name": "c", "image": "registry.k8s.io/pause:3.10",
                                         "resources": {"requests": {"cpu": "10m", "memory": "16Mi"}}}]}}
        async with s.post(pods, data=json.dumps(body).encode(), headers=JSON_CT) as r:
            await r.read()
            return r.status == 201

    async def bind(name: str) -> bool:
        body = {"apiVersion": "v1", "kind": "Binding", "metadata": {"name": name},
                "target": {"apiVersion": "v1", "kind": "Node", "name": "node-1"}}
        async with s.post(f"{pods}/{name}/binding", data=json.dumps(body).encode(), headers=JSON_CT) as r:
            await r.read()
            return r.status == 201

    async def status(name: str) -> bool:
        now = time.strftime("%Y-%m-%dT%H:%M:%SZ", time.gmtime())
        body = {"status": {"phase": "Running", "podIP": "10.64.0.5", "podIPs": [{"ip": "10.64.0.5"}],
                           "hostIP": "192.168.0.1", "startTime": now,
                           "conditions": [{"type": t, "status": "True", "lastTransitionTime": now}
                                          for t in ("PodReadyToStartContainers", "Initialized", "Ready",
                                                    "ContainersReady")],
                           "containerStatuses": [{"name": "c", "ready": True, "started": True, "restartCount": 0,
                                                  "image": "registry.k8s.io/pause:3.10", "imageID": "",
                                                  "state": {"running": {"startedAt": now}}}]}}
        async with s.patch(f"{pods}/{name}/status", data=json.dumps(body).encode(),
                           headers={"Content-Type": "application/strategic-merge-patch+json"}) as r:
            await r.read()
            return r.status == 200

    async def ev(name: str) -> bool:
        now = time.strftime("%Y-%m-%dT%H:%M:%SZ", time.gmtime())
        body = {"apiVersion": "v1", "kind": "Event", "metadata": {"name": f"{name}.1", "namespace": ns},
                "involvedObject": {"apiVersion": "v1", "kind": "Pod", "name": name, "namespace": ns},
                "reason": "Scheduled", "message": f"Successfully assigned {ns}/{name} to node-1",
                "source": {"component": "default-scheduler"}, "type": "Normal", "count": 1,
                "firstTimestamp": now, "lastTimestamp": now, "reportingComponent": "default-scheduler"}
        async with s.post(f"{base}/api/v1/namespaces/{ns}/events", data=json.dumps(body).encode(),
                          headers=JSON_CT) as r:
            await r.read()
            return r.status == 201

    async def delete_pod(name: str) -> bool:
        async with s.delete(f"{pods}/{name}", params={"gracePeriodSeconds": "0"}) as r:
            await r.read()
            return r.status == 200

    names = [f"pod-{tag}-{i:06d}" for i in range(n)]
    await phase("create pod", names, create_pod)
    await phase("bind", names, bind)
    await phase("status", names, status)
    await phase("event", names, ev)
    await run_workers(names, clients, delete_pod)


async def main(args: argparse.Namespace) -> None:
    from controlplane import pki
    from controlplane.cli.cluster import DEFAULT_AUDIT_POLICY
    tmp = tempfile.mkdtemp(prefix="bench-api-ab-")
    procs: list[subprocess.Popen] = []
    try:
        p, etcd_url = start_service(["etcd", "--listen-client-urls", "http://127.0.0.1:0", "--data-dir",
                                     os.path.join(tmp, "etcd")], os.path.join(tmp, "etcd.log"),
                                    r"event=etcd\.ready listen=(\S+)")
        procs.append(p)
        ca = pki.PKI(os.path.join(tmp, "pki"))
        ca.apiserver()
        ca.admin()
        ca.client("bench", "bench", ("bench-group",))
        with open(os.path.join(tmp, "audit-policy.yaml"), "w") as f:
            f.write(DEFAULT_AUDIT_POLICY)
        servers: dict[str, tuple[str, int]] = {}
        for name, tree in (("base", os.path.abspath(args.base)), ("new", os.path.abspath(ROOT))):
            api, url = start_apiserver(tree, [
                "--etcd-servers", etcd_url, "--port", "0", "--tls-cert-file", ca.path("apiserver"),
                "--tls-private-key-file", ca.path("apiserver", "key"), "--client-ca-file", ca.ca_file,
                "--authorization-mode", "Node,RBAC", "--audit-policy-file", os.path.join(tmp, "audit-policy.yaml"),
                "--audit-log-path", os.path.join(tmp, f"audit-{name}.log")], os.path.join(tmp, f"apiserver-{name}.log"))
            procs.append(api)
            servers[name] = (url, api.pid)

        def context(user: str) -> ssl.SSLContext:
            ctx = ssl.create_default_context(cafile=ca.ca_file)
            ctx.load_cert_chain(ca.path(user), ca.path(user, "key"))
            return ctx
        first = servers["new"][0]
        async with aiohttp.ClientSession(connector=aiohttp.TCPConnector(ssl=context("admin"))) as admin:
            objs: list[tuple[str, dict]] = [
                (f"{first}/apis/rbac.authorization.k8s.io/v1/clusterrolebindings", {
                    "apiVersion": "rbac.authorization.k8s.io/v1", "kind": "ClusterRoleBinding",
                    "metadata": {"name": "bench-admin"},
                    "roleRef": {"apiGroup": "rbac.authorization.k8s.io", "kind": "ClusterRole", "name": "cluster-admin"},
                    "subjects": [{"kind": "User", "name": "bench", "apiGroup": "rbac.authorization.k8s.io"}]})]
            objs += [(f"{first}/api/v1/namespaces", {"apiVersion": "v1", "kind": "Namespace", "metadata": {"name": k}})
                     for k in servers]
            objs += [(f"{first}/api/v1/namespaces/{k}/serviceaccounts", {  # the controller-manager's part
                "apiVersion": "v1", "kind": "ServiceAccount", "metadata": {"name": "default"}}) for k in servers]
            for url, obj in objs:
                async with admin.post(url, json=obj) as r:
                    assert r.status in (201, 409), await r.text()
        sessions = {k: aiohttp.ClientSession(connector=aiohttp.TCPConnector(limit=0, ssl=context("bench")))
                    for k in servers}
        watchers = [asyncio.create_task(watch_forever(sessions[k], f"{url}/api/v1/namespaces/{k}/{res}"))
                    for k, (url, _) in servers.items() for res in ("configmaps", "pods") for _ in range(args.watchers)]
        figures = {k: {ph: [0.0, 0.0, 0, 0] for ph in PHASES} for k in servers}
        warm = {k: {ph: [0.0, 0.0, 0, 0] for ph in PHASES} for k in servers}
        spies: list[tuple[str, subprocess.Popen]] = []
        try:
            for k, (url, pid) in servers.items():  # warm-up: connections, code paths, memos
                await one_round(sessions[k], url, k, "warm", min(args.objects, 200), args.clients, pid, warm[k])
            if args.profile:
                os.makedirs(args.profile, exist_ok=True)
                for k, (_, pid) in servers.items():
                    out = os.path.join(args.profile, f"apiserver-{k}.txt")
                    spies.append((out, subprocess.Popen(
                        [args.py_spy or shutil.which("py-spy") or "py-spy", "record", "--pid", str(pid), "--format",
                         "raw", "--rate", "100", "--nonblocking", "--output", out],
                        stdout=subprocess.DEVNULL, stderr=subprocess.DEVNULL)))
            for rnd in range(args.rounds):
                order = list(servers) if rnd % 2 == 0 else list(reversed(servers))
                for k in order:
                    url, pid = servers[k]
                    await one_round(sessions[k], url, k, str(rnd), args.objects, args.clients, pid, figures[k])
                print(f"  round {rnd + 1}/{args.rounds} done (load average {os.getloadavg()[0]:.1f})", flush=True)
        finally:
            if spies:
                from bench.flow import stop_profilers
                stop_profilers(args, spies)
            for t in watchers:
                t.cancel()
            await asyncio.gather(*watchers, return_exceptions=True)
            for sess in sessions.values():
                await sess.close()
        print(f"\napiserver CPU per request (us) and requests/s; {args.rounds} alternating rounds of "
              f"{args.objects} objects, {args.clients} clients, {args.watchers} watchers per resource")
        print(f"{'phase':<12} {'base us':>9} {'new us':>9} {'new/base':>9} {'base /s':>9} {'new /s':>9}  failures")
        tot = {k: [0.0, 0] for k in servers}
        for ph in PHASES:
            b, n = figures["base"][ph], figures["new"][ph]
            for k, f in (("base", b), ("new", n)):
                tot[k][0] += f[0]
                tot[k][1] += f[2]
            bu, nu = b[0] / max(b[2], 1) * 1e6, n[0] / max(n[2], 1) * 1e6
            print(f"{ph:<12} {bu:9.0f} {nu:9.0f} {nu / max(bu, 1e-9):9.2f} {b[2] / max(b[1], 1e-9):9.0f} "
                  f"{n[2] / max(n[1], 1e-9):9.0f}  {b[3]}/{n[3]}")
        bu, nu = (tot[k][0] / max(tot[k][1], 1) * 1e6 for k in ("base", "new"))
        print(f"{'all':<12} {bu:9.0f} {nu:9.0f} {nu / max(bu, 1e-9):9.2f}   (load average {os.getloadavg()[0]:.1f} "
              f"on {os.cpu_count()} cores)")
    finally:
        stop_services(procs)
    shutil.rmtree(tmp, ignore_errors=True)  # kept (logs) when the run failed


if __name__ == "__main__":
    ap = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    ap.add_argument("--base", required=True, help="the source tree to compare against (a checkout or git archive)")
    ap.add_argument("--objects", type=int, default=2000, help="objects per phase and round")
    ap.add_argument("--rounds", type=int, default=4)
    ap.add_argument("--clients", type=int, default=32)
    ap.add_argument("--watchers", type=int, default=2, help="watches per resource and server")
    ap.add_argument("--profile", metavar="DIR", help="sample both apiservers with py-spy over the measured rounds "
                    "(DIR/apiserver-base.txt, -new.txt and their .top.txt summaries)")
    ap.add_argument("--py-spy", metavar="PATH", help="the py-spy binary (default: on PATH)")
    asyncio.run(main(ap.parse_args()))
