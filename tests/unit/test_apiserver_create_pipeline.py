"""One create pipeline: a POST and a server-side apply of an absent object are created the
same way (registrystore.RegistryStore.create) — the same trace steps, the same
``object.created`` log event, one managedFields entry of the field manager, and the same
NamespaceLifecycle errors."""

from __future__ import annotations

import json
import logging

import pytest

from tests.support.apiserver import new_ns

UA = "kubectl/v1.32.0 (linux/amd64) kubernetes/abc"


def pod(name: str) -> dict:
    return {"apiVersion": "v1", "kind": "Pod", "metadata": {"name": name, "labels": {"app": name}},
            "spec": {"containers": [{"name": "c", "image": "nginx:1.27"}]}}


async def create(api, how: str, ns: str, name: str):
    """Create pod ``name`` in ``ns`` by ``how`` ("post" or "apply") as field manager ``tester``."""
    if how == "post":
        return await api.post(f"/api/v1/namespaces/{ns}/pods", params={"fieldManager": "tester"},
                              json=pod(name), headers={"User-Agent": UA})
    return await api.patch(f"/api/v1/namespaces/{ns}/pods/{name}", params={"fieldManager": "tester"},
                           data=json.dumps(pod(name)),
                           headers={"Content-Type": "application/apply-patch+yaml", "User-Agent": UA})


class Events(logging.Handler):
    """Collects the structured log events of ``apiserver.rest``."""

    def __init__(self) -> None:
        super().__init__(logging.DEBUG)
        self.events: list[tuple[str, dict]] = []

    def emit(self, record: logging.LogRecord) -> None:
        self.events.append((record.getMessage(), dict(getattr(record, "fields", {}))))


@pytest.fixture
def rest_events():
    logger = logging.getLogger("apiserver.rest")
    h, level = Events(), logger.level
    logger.addHandler(h)
    logger.setLevel(logging.DEBUG)
    yield h
    logger.removeHandler(h)
    logger.setLevel(level)


def shape(api, rest_events, ns: str, name: str, created: dict) -> dict:
    """What the create left behind: trace steps 2-3 of the pod, the object.created event
    fields, the managedFields entries (keys, manager)."""
    recs = [r for r in api.server_obj.tracer.buffer.snapshot(0)
            if r.object.get("name") == name and r.step in (2, 3)]
    events = [(n, sorted(f)) for n, f in rest_events.events if f.get("object") == f"{ns}/{name}"]
    mfs = created["metadata"]["managedFields"]
    return {"steps": [r.step for r in recs], "events": events,
            "managers": [(m["manager"], sorted(m)) for m in mfs]}


async def test_post_and_apply_create_the_same_way(api, rest_events):
    ns = await new_ns(api)
    out = {}
    for how in ("post", "apply"):
        r = await create(api, how, ns, f"p-{how}")
        assert r.status == 201, await r.text()
        created = await r.json()
        out[how] = shape(api, rest_events, ns, f"p-{how}", created)
        op = created["metadata"]["managedFields"][0]["operation"]
        assert op == ("Update" if how == "post" else "Apply")
        assert created["metadata"]["uid"] and created["status"]["phase"] == "Pending"
    assert out["post"] == out["apply"]
    assert out["post"]["steps"] == [2, 3]
    assert out["post"]["events"] == [("object.created", ["object", "resource", "rv"])]
    assert [m for m, _ in out["post"]["managers"]] == ["tester"]
    received = [r.action for r in api.server_obj.tracer.buffer.snapshot(0) if r.step == 2
                and r.object.get("name", "").startswith("p-")]
    assert received == ["received POST pods from kubectl/v1.32.0",
                        "received PATCH pods from kubectl/v1.32.0"]


@pytest.mark.parametrize("how", ["post", "apply"])
async def test_namespace_not_found_is_the_same(api, how):
    r = await create(api, how, "no-such-ns", "p")
    assert r.status == 404
    assert await r.json() == {"kind": "Status", "apiVersion": "v1", "metadata": {}, "status": "Failure",
                              "message": 'namespaces "no-such-ns" not found', "reason": "NotFound",
                              "details": {"name": "no-such-ns", "kind": "namespaces"}, "code": 404}


@pytest.mark.parametrize("how", ["post", "apply"])
async def test_terminating_namespace_is_forbidden_the_same(api, how):
    ns = await new_ns(api)
    assert (await api.delete(f"/api/v1/namespaces/{ns}")).status == 200
    r = await create(api, how, ns, "p")
    assert r.status == 403
    body = await r.json()
    assert body["reason"] == "Forbidden" and body["message"] == (
        f'pods "p" is forbidden: unable to create new content in namespace {ns} because it is being terminated')


@pytest.mark.parametrize("how", ["post", "apply"])
async def test_dry_run_create_writes_nothing(api, how):
    ns = await new_ns(api)
    if how == "post":
        r = await api.post(f"/api/v1/namespaces/{ns}/pods?dryRun=All", json=pod("dry"))
    else:
        r = await api.patch(f"/api/v1/namespaces/{ns}/pods/dry?dryRun=All&fieldManager=t", data=json.dumps(pod("dry")),
                            headers={"Content-Type": "application/apply-patch+yaml"})
    assert r.status == 201
    assert "resourceVersion" not in (await r.json())["metadata"]
    assert (await api.get(f"/api/v1/namespaces/{ns}/pods/dry")).status == 404


async def test_apply_create_takes_the_path_namespace(api):
    ns = await new_ns(api)
    cm = {"apiVersion": "v1", "kind": "ConfigMap", "metadata": {"name": "c", "namespace": "other"}, "data": {"a": "b"}}
    r = await api.patch(f"/api/v1/namespaces/{ns}/configmaps/c?fieldManager=t", data=json.dumps(cm),
                        headers={"Content-Type": "application/apply-patch+yaml"})
    assert r.status == 201 and (await r.json())["metadata"]["namespace"] == ns
    r = await api.post(f"/api/v1/namespaces/{ns}/configmaps", json={**cm, "metadata": {"name": "d", "namespace": "other"}})
    assert r.status == 400 and (await r.json())["message"] == (
        "the namespace of the provided object does not match the namespace sent on the request")
