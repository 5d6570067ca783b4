"""An example controller written with the official ``kubernetes`` client's watch: every
namespace labelled ``team=<name>`` gets a ResourceQuota ``team-quota`` (10 pods, 4 CPUs); when
the label goes, the quota goes. The shape of every controller: list, then watch from the list's
resourceVersion, reconcile each object to its desired state, re-list when the watch expires
(410 Gone).

Run it against any cluster (``python controller.py``); ``test_controller.py`` runs it on the
controlplane pytest plugin's cluster, where the resourcequota controller fills in the quota's
``status`` as Kubernetes' does.
"""

from __future__ import annotations

import threading
from typing import Any

from kubernetes import client, watch

QUOTA = "team-quota"
HARD = {"pods": "10", "requests.cpu": "4"}


def reconcile(core: client.CoreV1Api, ns: Any) -> str:
    """Make namespace ``ns`` (a V1Namespace) have its quota or not; returns what was done."""
    name = ns.metadata.name
    team = (ns.metadata.labels or {}).get("team")
    if ns.status and ns.status.phase == "Terminating":
        return "skipped"
    try:
        current = core.read_namespaced_resource_quota(QUOTA, name)
    except client.ApiException as e:
        if e.status != 404:
            raise
        current = None
    if team and current is None:
        core.create_namespaced_resource_quota(name, {
            "metadata": {"name": QUOTA, "labels": {"team": team}}, "spec": {"hard": HARD}})
        return "created"
    if not team and current is not None:
        core.delete_namespaced_resource_quota(QUOTA, name)
        return "deleted"
    return "unchanged"


def run(api: client.ApiClient, stop: threading.Event, on_reconcile: Any = None) -> None:
    """Reconcile every namespace until ``stop`` is set (checked at least every 5 s)."""
    core = client.CoreV1Api(api)
    while not stop.is_set():
        listed = core.list_namespace()
        for ns in listed.items:
            done = reconcile(core, ns)
            if on_reconcile:
                on_reconcile(ns.metadata.name, done)
        rv = listed.metadata.resource_version
        w = watch.Watch()
        try:
            while not stop.is_set():
                for event in w.stream(core.list_namespace, resource_version=rv, timeout_seconds=5,
                                      allow_watch_bookmarks=True):
                    if event["type"] == "ERROR":   # e.g. 410 Gone: the resourceVersion expired
                        raise client.ApiException(status=(event.get("raw_object") or {}).get("code", 500))
                    if event["type"] == "BOOKMARK":   # only a newer resourceVersion to resume from
                        rv = event["raw_object"]["metadata"]["resourceVersion"]
                        continue
                    ns = event["object"]
                    rv = ns.metadata.resource_version
                    if event["type"] in ("ADDED", "MODIFIED"):
                        done = reconcile(core, ns)
                        if on_reconcile:
                            on_reconcile(ns.metadata.name, done)
                    if stop.is_set():
                        break
        except client.ApiException as e:
            if e.status != 410:   # expired resourceVersion: list again
                raise
        finally:
            w.stop()


if __name__ == "__main__":
    from kubernetes import config
    config.load_kube_config()
    try:
        run(client.ApiClient(), threading.Event(), lambda ns, done: print(f"{ns}: {done}", flush=True))
    except KeyboardInterrupt:
        pass
