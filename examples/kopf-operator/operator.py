"""An example kopf operator: a WebSite custom resource becomes a ConfigMap with its page and a
Deployment serving it, both owned by the WebSite (so the garbage collector deletes them with
it); an update of the WebSite is synced to both; its status mirrors the Deployment's readiness.

Run it against any cluster (``kopf run operator.py``); ``test_operator.py`` runs it on the
controlplane pytest plugin's cluster with ``kopf.testing.KopfRunner``.
"""

from __future__ import annotations

import os
from typing import Any

import kopf
import kubernetes

GROUP, VERSION, PLURAL = "example.controlplane.io", "v1", "websites"


def _children(name: str, spec: dict[str, Any]) -> tuple[dict[str, Any], dict[str, Any]]:
    """The ConfigMap and the Deployment a WebSite ``name`` with ``spec`` should have."""
    labels = {"app.kubernetes.io/name": "website", "app.kubernetes.io/instance": name}
    page = {"apiVersion": "v1", "kind": "ConfigMap", "metadata": {"name": f"{name}-page", "labels": labels},
            "data": {"index.html": spec["html"]}}
    deploy = {
        "apiVersion": "apps/v1", "kind": "Deployment", "metadata": {"name": name, "labels": labels},
        "spec": {"replicas": spec.get("replicas", 1), "selector": {"matchLabels": labels},
                 "template": {"metadata": {"labels": labels}, "spec": {
                     "containers": [{"name": "web", "image": "nginx:1.27",
                                     "volumeMounts": [{"name": "page", "mountPath": "/usr/share/nginx/html"}]}],
                     "volumes": [{"name": "page", "configMap": {"name": f"{name}-page"}}]}}}}
    return page, deploy


@kopf.on.startup()
def configure(settings: kopf.OperatorSettings, **_: Any) -> None:
    settings.posting.level = 30   # post only warnings and errors as Events
    settings.watching.server_timeout = 60


@kopf.on.login()
def login(**kwargs: Any) -> kopf.ConnectionInfo | None:
    """Credentials from ``$KUBECONFIG`` as it is when the operator starts (the kubernetes client
    reads it once, at import)."""
    return kopf.login_with_kubeconfig(**kwargs)


def _load_config() -> None:
    kubernetes.config.load_kube_config(config_file=os.environ.get("KUBECONFIG"))


def _apis() -> tuple[kubernetes.client.CoreV1Api, kubernetes.client.AppsV1Api]:
    _load_config()
    return kubernetes.client.CoreV1Api(), kubernetes.client.AppsV1Api()


@kopf.on.create(GROUP, VERSION, PLURAL)
def create(name: str, namespace: str, spec: dict[str, Any], **_: Any) -> dict[str, Any]:
    core, apps = _apis()
    page, deploy = _children(name, spec)
    kopf.adopt([page, deploy])   # ownerReferences to the WebSite: GC deletes them with it
    core.create_namespaced_config_map(namespace, page)
    apps.create_namespaced_deployment(namespace, deploy)
    return {"deployment": name, "page": page["metadata"]["name"]}


@kopf.on.update(GROUP, VERSION, PLURAL, field="spec")
def update(name: str, namespace: str, spec: dict[str, Any], **_: Any) -> None:
    core, apps = _apis()
    page, deploy = _children(name, spec)
    core.patch_namespaced_config_map(page["metadata"]["name"], namespace, {"data": page["data"]})
    apps.patch_namespaced_deployment(name, namespace, {"spec": {"replicas": deploy["spec"]["replicas"]}})


@kopf.on.event("apps", "v1", "deployments", labels={"app.kubernetes.io/name": "website"})
def deployment_changed(body: dict[str, Any], namespace: str, type: str, **_: Any) -> None:
    """Mirror the owned Deployment's readiness into the WebSite's status."""
    if type == "DELETED":
        return
    owner = next((r for r in body["metadata"].get("ownerReferences") or [] if r.get("kind") == "WebSite"), None)
    if owner is None:
        return
    ready = (body.get("status") or {}).get("readyReplicas") or 0
    _load_config()
    try:
        kubernetes.client.CustomObjectsApi().patch_namespaced_custom_object_status(
            GROUP, VERSION, namespace, PLURAL, owner["name"], {"status": {"readyReplicas": ready}})
    except kubernetes.client.ApiException as e:
        if e.status != 404:   # the WebSite is being deleted
            raise
