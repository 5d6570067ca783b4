"""The shared fake API client (controlplane/client/testing.py): recorded actions, reactors,
and the tracker answering as the apiserver's registry does."""

from __future__ import annotations

import asyncio

import pytest

from controlplane.api.resources import DEPLOYMENTS, NAMESPACES, NODES, PODS
from controlplane.client.rest import ApiError
from controlplane.client.testing import Action, FakeClient, FakeRecorder, RecordedEvent, conflict, not_found


def pod(name: str = "web", **spec) -> dict:
    return {"metadata": {"name": name, "namespace": "default", "labels": {"app": name}},
            "spec": {"containers": [{"name": "c", "image": "nginx"}], **spec}}


async def test_create_assigns_what_the_registry_assigns_and_records_the_action():
    c = FakeClient()
    out = await c.create(PODS, pod())
    md = out["metadata"]
    assert md["uid"] and md["creationTimestamp"] and md["resourceVersion"] == "1" and md["generation"] == 1
    assert (out["kind"], out["apiVersion"], out["status"]) == ("Pod", "v1", {"phase": "Pending"})
    [a] = c.actions()
    assert (a.verb, a.resource, a.namespace, a.name, a.path) == (
        "create", "pods", "default", "web", "/api/v1/namespaces/default/pods")
    assert a.object == pod()
    with pytest.raises(ApiError) as e:
        await c.create(PODS, pod())
    assert (e.value.code, e.value.reason, e.value.message) == (409, "AlreadyExists", 'pods "web" already exists')


async def test_generate_name_and_missing_name():
    c = FakeClient()
    out = await c.create(PODS, {"metadata": {"generateName": "web-"}, "spec": {}})
    assert out["metadata"]["name"].startswith("web-") and len(out["metadata"]["name"]) == 9
    with pytest.raises(ApiError) as e:
        await c.create(PODS, {"metadata": {}})
    assert e.value.code == 422


async def test_get_of_a_missing_object_is_the_apiservers_404():
    c = FakeClient()
    with pytest.raises(ApiError) as e:
        await c.get(DEPLOYMENTS, "x", "default")
    assert (e.value.code, e.value.message) == (404, 'deployments.apps "x" not found')
    assert str(e.value) == str(not_found(DEPLOYMENTS, "x"))


async def test_update_conflicts_on_a_stale_resource_version_and_keeps_status():
    c = FakeClient()
    stored = c.seed(PODS, {**pod(), "status": {"phase": "Running"}})
    changed = {**stored, "spec": {**stored["spec"], "nodeName": "n1"}, "status": {"phase": "Failed"}}
    out = await c.update(PODS, changed)
    assert out["status"] == {"phase": "Running"} and out["metadata"]["generation"] == 2
    with pytest.raises(ApiError) as e:
        await c.update(PODS, changed)  # still the first resourceVersion
    assert str(e.value) == str(conflict(PODS, "web"))
    st = await c.update_status(PODS, {**out, "status": {"phase": "Succeeded"}})
    assert st["status"] == {"phase": "Succeeded"} and st["metadata"]["generation"] == 2
    assert [(a.verb, a.subresource) for a in c.actions("update")] == [("update", ""), ("update", ""),
                                                                      ("update", "status")]


@pytest.mark.parametrize("patch_type, patch, want", [
    ("merge", {"spec": {"containers": [{"name": "d"}]}}, ["d"]),
    ("strategic", {"spec": {"containers": [{"name": "d", "image": "busybox"}]}}, ["c", "d"]),
    ("json", [{"op": "add", "path": "/spec/containers/-", "value": {"name": "e"}}], ["c", "e"]),
], ids=["merge replaces lists", "strategic merges containers by name", "json patch appends"])
async def test_patch_types(patch_type, patch, want):
    c = FakeClient()
    c.seed(PODS, pod())
    out = await c.patch(PODS, "web", patch, "default", patch_type=patch_type)
    assert [x["name"] for x in out["spec"]["containers"]] == want
    [a] = c.actions("patch")
    assert (a.patch_type, a.patch) == (patch_type, patch)


async def test_status_patch_writes_only_status():
    c = FakeClient()
    c.seed(PODS, pod())
    out = await c.patch(PODS, "web", {"metadata": {"labels": {"x": "y"}}, "status": {"phase": "Running"}},
                        "default", subresource="status")
    assert out["status"] == {"phase": "Running"} and out["metadata"]["labels"] == {"app": "web"}


async def test_delete_immediate_or_held_by_finalizers_and_uid_preconditions():
    c = FakeClient()
    c.seed(PODS, pod("a"))
    with pytest.raises(ApiError) as e:
        await c.delete(PODS, "a", "default", preconditions={"uid": "other"})
    assert e.value.code == 409
    assert (await c.delete(PODS, "a", "default", grace_period_seconds=0))["status"] == "Success"
    assert c.all(PODS) == []
    c.seed(PODS, {**pod("b"), "metadata": {**pod("b")["metadata"], "finalizers": ["x"]}})
    held = await c.delete(PODS, "b", "default", propagation_policy="Foreground")
    assert held["metadata"]["deletionTimestamp"] and held["metadata"]["finalizers"] == ["x", "foregroundDeletion"]
    assert [a.options for a in c.actions("delete")] == [
        {"preconditions": {"uid": "other"}}, {"gracePeriodSeconds": 0}, {"propagationPolicy": "Foreground"}]


async def test_binding_sets_the_node_once():
    c = FakeClient()
    c.seed(PODS, pod())
    binding = {"kind": "Binding", "metadata": {"name": "web"}, "target": {"kind": "Node", "name": "n1"}}
    await c.create_subresource(PODS, "web", "binding", binding, "default")
    assert c.stored(PODS, "web", "default")["spec"]["nodeName"] == "n1"
    with pytest.raises(ApiError) as e:
        await c.create_subresource(PODS, "web", "binding", binding, "default")
    assert e.value.code == 409 and 'is already assigned to node "n1"' in e.value.message


async def test_list_filters_by_namespace_and_selectors():
    c = FakeClient()
    c.seed(PODS, pod("a", nodeName="n1"))
    c.seed(PODS, pod("b"))
    c.seed(PODS, {**pod("c"), "metadata": {"name": "c", "namespace": "other"}})
    names = lambda lst: [o["metadata"]["name"] for o in lst["items"]]
    assert names(await c.list(PODS)) == ["a", "b", "c"]
    assert names(await c.list(PODS, "default")) == ["a", "b"]
    assert names(await c.list(PODS, label_selector="app=b")) == ["b"]
    assert names(await c.list(PODS, field_selector="spec.nodeName=n1")) == ["a"]
    assert (await c.list(PODS))["metadata"]["resourceVersion"] == "3"


async def test_reactors_inject_errors_a_number_of_times_then_the_tracker_answers():
    c = FakeClient()
    c.seed(NODES, {"metadata": {"name": "n1"}})
    r = c.fail("get", "nodes", TimeoutError("slow"), times=1)
    with pytest.raises(TimeoutError):
        await c.get(NODES, "n1")
    assert (await c.get(NODES, "n1"))["metadata"]["name"] == "n1"
    c.remove_reactor(r)
    c.prepend_reactor("get", "*", lambda a: (True, {"answered": a.name}))
    assert await c.get(NODES, "n1") == {"answered": "n1"}
    assert [a.verb for a in c.actions()] == ["get", "get", "get"]  # every call recorded, handled or not


async def test_fail_narrowed_to_a_subresource():
    c = FakeClient()
    c.seed(PODS, pod())
    c.fail("patch", "pods", ApiError(500, "InternalError", "boom"), subresource="status")
    await c.patch(PODS, "web", {"metadata": {"labels": {"a": "b"}}}, "default")
    with pytest.raises(ApiError):
        await c.patch(PODS, "web", {"status": {"phase": "Running"}}, "default", subresource="status")


async def test_require_namespaces():
    c = FakeClient(require_namespaces=True)
    with pytest.raises(ApiError) as e:
        await c.create(PODS, pod())
    assert (e.value.code, e.value.message) == (404, 'namespaces "default" not found')
    await c.create(NAMESPACES, {"metadata": {"name": "default"}})
    await c.create(PODS, pod())


async def test_informers_get_every_write_and_watches_the_later_ones():
    c = FakeClient()
    seen = []
    c.informers.informer(PODS).add_handlers(on_add=lambda o: seen.append(("add", o["metadata"]["name"])),
                                            on_delete=lambda o: seen.append(("delete", o["metadata"]["name"])))
    events = []

    async def watch():
        async for typ, obj in c.watch(PODS, "default", label_selector="app=b"):
            events.append((typ, obj["metadata"]["name"]))

    task = asyncio.create_task(watch())
    await c.wait_for(lambda: bool(c.actions("watch")))  # the stream is open once its call is recorded
    await c.create(PODS, pod("a"))
    await c.create(PODS, pod("b"))
    await c.delete(PODS, "b", "default")
    c.stop_watches()
    await asyncio.wait_for(task, 5)
    assert seen == [("add", "a"), ("add", "b"), ("delete", "b")]
    assert events == [("ADDED", "b"), ("DELETED", "b")]
    assert c.actions("watch") == [Action("watch", "pods", "default", options={"labelSelector": "app=b"},
                                         path="/api/v1/namespaces/default/pods")]


async def test_wait_for_wakes_on_a_write():
    c = FakeClient()
    checked = asyncio.Event()

    def created() -> bool:
        checked.set()
        return bool(c.all(PODS))

    waiter = asyncio.create_task(c.wait_for(created))
    await asyncio.wait_for(checked.wait(), 5)  # the waiter found nothing and waits
    assert not waiter.done()
    await c.create(PODS, pod())
    await asyncio.wait_for(waiter, 5)


def test_recorder_shares_one_list():
    events: list[RecordedEvent] = []
    FakeRecorder("a", events).event({"metadata": {"name": "x"}}, "Normal", "R", "m")
    FakeRecorder("b", events).event({"metadata": {"name": "y"}}, "Warning", "S", "n", "spec.containers{c}")
    assert events == [("a", "x", "Normal", "R", "m", None), ("b", "y", "Warning", "S", "n", "spec.containers{c}")]
