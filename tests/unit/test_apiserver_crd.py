"""CustomResourceDefinitions served as kube-apiserver does (apiextensions-apiserver): CRD
validation causes, NamesAccepted / Established conditions, custom resources served per
version with their schema's validation, defaulting and pruning (``unknown field`` warnings),
status and scale subresources, printer columns, 415 for strategic merge, deletion through
the cleanup finalizer, aggregated discovery's ETag."""

from __future__ import annotations

import asyncio
import copy
import json
import uuid

import pytest

from components.apiserver.discovery import AGGREGATED_CT
from controlplane.api import resources as R
from tests.support.apiserver import new_ns, watch_until

CRDS = "/apis/apiextensions.k8s.io/v1/customresourcedefinitions"

SCHEMA = {
    "type": "object",
    "properties": {
        "spec": {"type": "object", "properties": {
            "size": {"type": "integer", "minimum": 1, "maximum": 100},
            "color": {"type": "string", "default": "blue"},
            "replicas": {"type": "integer"},
            "selector": {"type": "string"},
            "ports": {"type": "array", "x-kubernetes-list-type": "map", "x-kubernetes-list-map-keys": ["name"],
                      "items": {"type": "object", "required": ["name"], "properties": {
                          "name": {"type": "string"}, "port": {"type": "integer"}}}}}},
        "status": {"type": "object", "properties": {
            "replicas": {"type": "integer"}, "phase": {"type": "string"}, "selector": {"type": "string"}}},
    },
}


def crd_body(group: str, plural: str = "widgets", kind: str = "Widget", versions: list | None = None,
             scope: str = "Namespaced", short: list | None = None) -> dict:
    vs = versions or [{"name": "v1", "served": True, "storage": True, "schema": {"openAPIV3Schema": SCHEMA},
                       "subresources": {"status": {}, "scale": {"specReplicasPath": ".spec.replicas",
                                                                "statusReplicasPath": ".status.replicas",
                                                                "labelSelectorPath": ".status.selector"}},
                       "additionalPrinterColumns": [
                           {"name": "Size", "type": "integer", "jsonPath": ".spec.size"},
                           {"name": "Color", "type": "string", "jsonPath": ".spec.color", "priority": 1},
                           {"name": "Age", "type": "date", "jsonPath": ".metadata.creationTimestamp"}]}]
    return {"apiVersion": "apiextensions.k8s.io/v1", "kind": "CustomResourceDefinition",
            "metadata": {"name": f"{plural}.{group}"},
            "spec": {"group": group, "scope": scope, "versions": vs,
                     "names": {"plural": plural, "kind": kind, "shortNames": short or [],
                               "categories": ["all"]}}}


def new_group() -> str:
    return f"g{uuid.uuid4().hex[:8]}.example.com"


async def wait_crd(api, name: str, cond: str, status: str = "True", timeout: float = 10.0) -> dict:
    """Watch the CRD until condition ``cond`` has ``status`` (as ``kubectl wait`` does); returns the CRD."""
    def met(crd: dict) -> bool:
        return any(c["type"] == cond and c["status"] == status
                   for c in (crd.get("status") or {}).get("conditions") or [])
    return await watch_until(api, f"{CRDS}?fieldSelector=metadata.name={name}", met, timeout)


async def wait_gone(api, path: str, timeout: float = 10.0) -> None:
    async with asyncio.timeout(timeout):
        while (await api.get(path)).status != 404:
            await asyncio.sleep(0.05)  # polling the API as kubectl wait --for=delete does


async def established(api, body: dict) -> dict:
    r = await api.post(CRDS, json=body)
    assert r.status == 201, await r.text()
    return await wait_crd(api, body["metadata"]["name"], "Established")


@pytest.fixture
def registry_restored():
    before = list(R.REGISTRY)
    yield
    # the apiserver fixture's stop() unserves what its CRD controller served
    assert [r for r in R.REGISTRY if not r.extra.get("crd")] == [r for r in before if not r.extra.get("crd")]


# ----------------------------------------------------------------- CRD validation

CASES = {
    "wrong-name": (lambda b: b["metadata"].update(name="foo.example.com"),
                   "metadata.name", 'Invalid value: "foo.example.com": must be spec.names.plural+"."+spec.group'),
    "group-without-dot": (lambda b: (b["spec"].update(group="example"), b["metadata"].update(name="widgets.example")),
                          "spec.group", 'Invalid value: "example": should be a domain with at least one dot'),
    "bad-scope": (lambda b: b["spec"].update(scope="Global"),
                  "spec.scope", 'Unsupported value: "Global": supported values: "Cluster", "Namespaced"'),
    "no-storage": (lambda b: b["spec"]["versions"][0].update(storage=False),
                   "spec.versions", "must have exactly one version marked as storage version"),
    "no-schema": (lambda b: b["spec"]["versions"][0].pop("schema"),
                  "spec.versions[0].schema.openAPIV3Schema", "Required value: schemas are required"),
    "kind-is-listkind": (lambda b: b["spec"]["names"].update(listKind="Widget"),
                         "spec.names.listKind", 'Invalid value: "Widget": kind and listKind may not be the same'),
    "bad-scale-path": (lambda b: b["spec"]["versions"][0]["subresources"]["scale"].update(specReplicasPath=".foo"),
                       "spec.versions[0].subresources.scale.specReplicasPath",
                       'Invalid value: ".foo": should be a json path under .spec'),
    "bad-column-type": (lambda b: b["spec"]["versions"][0]["additionalPrinterColumns"][0].update(type="float"),
                        "spec.versions[0].additionalPrinterColumns[0].type", 'Unsupported value: "float"'),
    "bad-conversion": (lambda b: b["spec"].update(conversion={"strategy": "Magic"}),
                       "spec.conversion.strategy", 'Unsupported value: "Magic"'),
}


@pytest.mark.parametrize("case", list(CASES), ids=list(CASES))
async def test_crd_validation_causes(api, case):
    mutate, field, message = CASES[case]
    body = crd_body(new_group())
    mutate(body)
    r = await api.post(CRDS, json=body)
    assert r.status == 422, await r.text()
    st = await r.json()
    assert st["reason"] == "Invalid" and st["details"]["kind"] == "CustomResourceDefinition"
    causes = [(c["field"], c["message"]) for c in st["details"]["causes"]]
    assert any(f == field and message in m for f, m in causes), causes
    assert st["message"].startswith(f'CustomResourceDefinition.apiextensions.k8s.io "{body["metadata"]["name"]}" '
                                    "is invalid: ")


async def test_crd_defaults_and_conditions(api, registry_restored):
    g = new_group()
    crd = await established(api, crd_body(g, short=["wd"]))
    assert crd["spec"]["names"]["singular"] == "widget" and crd["spec"]["names"]["listKind"] == "WidgetList"
    assert crd["spec"]["conversion"] == {"strategy": "None"}
    assert crd["metadata"]["finalizers"] == ["customresourcecleanup.apiextensions.k8s.io"]
    assert crd["status"]["storedVersions"] == ["v1"]
    acc = crd["status"]["acceptedNames"]
    assert acc["plural"] == "widgets" and acc["kind"] == "Widget" and acc["shortNames"] == ["wd"]
    conds = {c["type"]: c for c in crd["status"]["conditions"]}
    assert (conds["NamesAccepted"]["reason"], conds["NamesAccepted"]["message"]) == ("NoConflicts",
                                                                                      "no conflicts found")
    assert (conds["Established"]["reason"], conds["Established"]["message"]) == (
        "InitialNamesAccepted", "the initial names have been accepted")
    # a second CRD in the group claiming the same kind under another plural is not accepted
    other = crd_body(g, plural="gadgets", kind="Widget")
    r = await api.post(CRDS, json=other)
    assert r.status == 201
    c = await wait_crd(api, other["metadata"]["name"], "NamesAccepted", "False")
    cond = next(x for x in c["status"]["conditions"] if x["type"] == "NamesAccepted")
    # every name is checked; the last conflict found is the one reported (naming_controller.go)
    assert (cond["reason"], cond["message"]) == ("ListKindConflict", '"WidgetList" is already in use')
    est = next(x for x in c["status"]["conditions"] if x["type"] == "Established")
    assert est["status"] == "False"
    assert (await api.get(f"/apis/{g}/v1/gadgets")).status == 404
    # the first CRD gone, the second's names are free: accepted, established, served
    first = f"widgets.{g}"
    assert (await api.delete(f"{CRDS}/{first}")).status == 200
    await wait_gone(api, f"{CRDS}/{first}")
    await wait_crd(api, other["metadata"]["name"], "Established")
    assert (await api.get(f"/apis/{g}/v1/gadgets")).status == 200
    r = await api.get(CRDS, headers={"Accept": "application/json;as=Table;v=v1;g=meta.k8s.io"})
    t = await r.json()
    assert [c["name"] for c in t["columnDefinitions"]] == ["Name", "Created At"]


async def test_crd_warns_of_cel_rules_it_cannot_evaluate(api, registry_restored):
    body = crd_body(new_group())
    spec_schema = body["spec"]["versions"][0]["schema"]["openAPIV3Schema"]["properties"]["spec"]
    spec_schema["x-kubernetes-validations"] = [{"rule": "self.color.someUnknownFn()"}]
    r = await api.post(CRDS, json=body)
    assert r.status == 201, await r.text()
    assert r.headers.getall("Warning") == [
        '299 - "spec.versions[0].schema.openAPIV3Schema.properties[spec].x-kubernetes-validations[0].rule: the rule '
        "'self.color.someUnknownFn()' is not supported by this server (cel-python lacks the function "
        'someUnknownFn); it is not enforced"']


# ----------------------------------------------------------------- serving

async def test_custom_resources_served(api, registry_restored):
    g = new_group()
    ns = await new_ns(api)
    await established(api, crd_body(g))
    path = f"/apis/{g}/v1/namespaces/{ns}/widgets"
    w = {"apiVersion": f"{g}/v1", "kind": "Widget", "metadata": {"name": "w1"},
         "spec": {"size": 3, "replicas": 1, "extra": "x"}, "status": {"phase": "Set"}, "junk": 1}
    r = await api.post(path, json=w)
    assert r.status == 201, await r.text()
    assert sorted(r.headers.getall("Warning")) == ['299 - "unknown field \\"junk\\""',
                                                   '299 - "unknown field \\"spec.extra\\""']
    obj = await r.json()
    assert obj["spec"] == {"size": 3, "replicas": 1, "color": "blue"}  # pruned, defaulted
    assert "status" not in obj  # the status subresource: a create does not set status
    assert obj["metadata"]["generation"] == 1
    # invalid → 422 with the schema's cause
    bad = copy.deepcopy(w)
    bad["metadata"]["name"] = "bad"
    bad["spec"]["size"] = 200
    r = await api.post(path, json=bad)
    assert r.status == 422
    st = await r.json()
    assert st["details"]["kind"] == "Widget" and st["details"]["causes"][0]["field"] == "spec.size"
    assert st["message"].startswith(f'Widget.{g} "bad" is invalid: spec.size: Invalid value: 200')
    # list, table with printer columns
    r = await api.get(path, headers={"Accept": "application/json;as=Table;v=v1;g=meta.k8s.io"})
    t = await r.json()
    assert [c["name"] for c in t["columnDefinitions"]] == ["Name", "Size", "Color", "Age"]
    assert t["rows"][0]["cells"][:3] == ["w1", 3, "blue"]
    r = await api.get(path)
    lst = await r.json()
    assert lst["kind"] == "WidgetList" and [i["metadata"]["name"] for i in lst["items"]] == ["w1"]
    # merge patch of spec bumps the generation; metadata-only changes do not
    r = await api.patch(f"{path}/w1", json={"spec": {"size": 5}},
                        headers={"Content-Type": "application/merge-patch+json"})
    assert r.status == 200, await r.text()
    assert (await r.json())["metadata"]["generation"] == 2
    r = await api.patch(f"{path}/w1", json={"metadata": {"labels": {"a": "b"}}},
                        headers={"Content-Type": "application/merge-patch+json"})
    assert (await r.json())["metadata"]["generation"] == 2
    # JSON patch
    r = await api.patch(f"{path}/w1", json=[{"op": "replace", "path": "/spec/size", "value": 6}],
                        headers={"Content-Type": "application/json-patch+json"})
    assert r.status == 200 and (await r.json())["spec"]["size"] == 6
    # strategic merge patch → 415
    r = await api.patch(f"{path}/w1", json={"spec": {"size": 7}},
                        headers={"Content-Type": "application/strategic-merge-patch+json"})
    assert r.status == 415
    assert (await r.json())["message"] == (
        "the body of the request was in an unknown format - accepted media types include: "
        "application/json-patch+json, application/merge-patch+json, application/apply-patch+yaml")
    # status subresource: the main resource ignores status, /status ignores spec
    r = await api.patch(f"{path}/w1/status", json={"status": {"replicas": 1, "selector": "app=w"},
                                                   "spec": {"size": 50}},
                        headers={"Content-Type": "application/merge-patch+json"})
    assert r.status == 200, await r.text()
    obj = await r.json()
    assert obj["status"] == {"replicas": 1, "selector": "app=w"} and obj["spec"]["size"] == 6
    # scale subresource
    r = await api.get(f"{path}/w1/scale")
    sc = await r.json()
    assert (sc["kind"], sc["apiVersion"], sc["spec"], sc["status"]) == (
        "Scale", "autoscaling/v1", {"replicas": 1}, {"replicas": 1, "selector": "app=w"})
    r = await api.patch(f"{path}/w1/scale", json={"spec": {"replicas": 4}},
                        headers={"Content-Type": "application/merge-patch+json"})
    assert r.status == 200 and (await r.json())["spec"]["replicas"] == 4
    r = await api.get(f"{path}/w1")
    assert (await r.json())["spec"]["replicas"] == 4
    # server-side apply
    r = await api.patch(f"{path}/w2", params={"fieldManager": "me"},
                        data=f"apiVersion: {g}/v1\nkind: Widget\nmetadata:\n  name: w2\nspec:\n  size: 2\n",
                        headers={"Content-Type": "application/apply-patch+yaml"})
    assert r.status == 201, await r.text()
    # server-side apply merges a list-map by its schema's keys; a duplicate key is invalid
    for mgr, port in (("a", "http"), ("b", "https")):
        r = await api.patch(f"{path}/w2", params={"fieldManager": mgr},
                            data=f"apiVersion: {g}/v1\nkind: Widget\nmetadata:\n  name: w2\nspec:\n  ports:\n"
                                 f"  - name: {port}\n    port: 80\n",
                            headers={"Content-Type": "application/apply-patch+yaml"})
        assert r.status == 200, await r.text()
    assert [p["name"] for p in (await r.json())["spec"]["ports"]] == ["http", "https"]
    r = await api.patch(f"{path}/w2", json={"spec": {"ports": [{"name": "x"}, {"name": "x"}]}},
                        headers={"Content-Type": "application/merge-patch+json"})
    assert r.status == 422
    assert (await r.json())["details"]["causes"][0]["field"] == "spec.ports[1]"
    # field selector on metadata.name
    r = await api.get(path, params={"fieldSelector": "metadata.name=w2"})
    assert [i["metadata"]["name"] for i in (await r.json())["items"]] == ["w2"]
    # delete, deletecollection
    assert (await api.delete(f"{path}/w2")).status == 200
    r = await api.delete(path)
    assert r.status == 200
    assert (await (await api.get(path)).json())["items"] == []


async def test_two_versions_conversion_none(api, registry_restored):
    g = new_group()
    ns = await new_ns(api)
    vs = [{"name": "v1beta1", "served": True, "storage": False, "schema": {"openAPIV3Schema": SCHEMA}},
          {"name": "v1", "served": True, "storage": True, "schema": {"openAPIV3Schema": SCHEMA},
           "selectableFields": [{"jsonPath": ".spec.color"}]}]
    body = crd_body(g, versions=vs)
    body["spec"]["names"]["listKind"] = "WidgetCollection"
    await established(api, body)
    r = await api.post(f"/apis/{g}/v1beta1/namespaces/{ns}/widgets",
                       json={"apiVersion": f"{g}/v1beta1", "kind": "Widget", "metadata": {"name": "w"},
                             "spec": {"size": 1}})
    assert r.status == 201, await r.text()
    r = await api.get(f"/apis/{g}/v1/namespaces/{ns}/widgets/w")
    assert r.status == 200 and (await r.json())["apiVersion"] == f"{g}/v1"
    r = await api.get(f"/apis/{g}/v1beta1/namespaces/{ns}/widgets")
    lst = await r.json()
    assert [i["apiVersion"] for i in lst["items"]] == [f"{g}/v1beta1"]
    assert (lst["kind"], lst["apiVersion"]) == ("WidgetCollection", f"{g}/v1beta1")
    # a watch of each version gets the objects in its own version (the versions share one cache)
    for v in ("v1", "v1beta1", "v1"):
        r = await api.get(f"/apis/{g}/{v}/namespaces/{ns}/widgets",
                          params={"watch": "true", "resourceVersion": "0", "timeoutSeconds": "5"})
        ev = json.loads(await r.content.readline())
        r.close()
        assert (ev["type"], ev["object"]["apiVersion"]) == ("ADDED", f"{g}/{v}")
    # selectableFields: a field selector on .spec.color (only where the version declares it)
    r = await api.post(f"/apis/{g}/v1/namespaces/{ns}/widgets",
                       json={"apiVersion": f"{g}/v1", "kind": "Widget", "metadata": {"name": "red"},
                             "spec": {"size": 1, "color": "red"}})
    assert r.status == 201
    r = await api.get(f"/apis/{g}/v1/namespaces/{ns}/widgets", params={"fieldSelector": "spec.color=red"})
    assert r.status == 200, await r.text()
    assert [i["metadata"]["name"] for i in (await r.json())["items"]] == ["red"]
    r = await api.get(f"/apis/{g}/v1/namespaces/{ns}/widgets", params={"fieldSelector": "spec.size=1"})
    assert r.status == 400
    # Age is the default printer column of a version without additionalPrinterColumns
    r = await api.get(f"/apis/{g}/v1/namespaces/{ns}/widgets",
                      headers={"Accept": "application/json;as=Table;v=v1;g=meta.k8s.io"})
    assert [c["name"] for c in (await r.json())["columnDefinitions"]] == ["Name", "Age"]
    doc = await (await api.get(f"/openapi/v3/apis/{g}/v1")).json()
    sch = next(v for k, v in doc["components"]["schemas"].items() if k.endswith(".Widget"))
    assert sch["properties"]["spec"]["properties"]["size"]["maximum"] == 100


async def test_crd_update_replaces_served_versions(api, registry_restored):
    g = new_group()
    ns = await new_ns(api)
    body = crd_body(g)
    name = body["metadata"]["name"]
    await established(api, body)
    v2 = {"name": "v2", "served": True, "storage": False, "schema": {"openAPIV3Schema": SCHEMA},
          "additionalPrinterColumns": [{"name": "Big", "type": "integer", "jsonPath": ".spec.size"}]}
    r = await api.patch(f"{CRDS}/{name}", json=[{"op": "add", "path": "/spec/versions/-", "value": v2}],
                        headers={"Content-Type": "application/json-patch+json"})
    assert r.status == 200, await r.text()
    assert (await r.json())["metadata"]["generation"] == 2

    async def status_of(path: str) -> int:
        return (await api.get(path)).status
    async with asyncio.timeout(10):
        while await status_of(f"/apis/{g}/v2/namespaces/{ns}/widgets") != 200:
            await asyncio.sleep(0.05)  # polling until the controller serves the new version
    r = await api.get(f"/apis/{g}/v2/namespaces/{ns}/widgets",
                      headers={"Accept": "application/json;as=Table;v=v1;g=meta.k8s.io"})
    assert [c["name"] for c in (await r.json())["columnDefinitions"]] == ["Name", "Big"]
    # v1 no longer served: its route goes, v2 stays
    r = await api.patch(f"{CRDS}/{name}", json=[{"op": "replace", "path": "/spec/versions/0/served", "value": False}],
                        headers={"Content-Type": "application/json-patch+json"})
    assert r.status == 200, await r.text()
    async with asyncio.timeout(10):
        while await status_of(f"/apis/{g}/v1/namespaces/{ns}/widgets") != 404:
            await asyncio.sleep(0.05)  # polling until the controller drops the version
    assert await status_of(f"/apis/{g}/v2/namespaces/{ns}/widgets") == 200
    # a new storage version is added to status.storedVersions
    r = await api.patch(f"{CRDS}/{name}", json=[{"op": "replace", "path": "/spec/versions/0/storage", "value": False},
                                                {"op": "replace", "path": "/spec/versions/1/storage", "value": True}],
                        headers={"Content-Type": "application/json-patch+json"})
    assert r.status == 200, await r.text()
    await watch_until(api, f"{CRDS}?fieldSelector=metadata.name={name}",
                      lambda crd: (crd.get("status") or {}).get("storedVersions") == ["v1", "v2"])
    # group, names.plural are immutable
    r = await api.patch(f"{CRDS}/{name}", json={"spec": {"group": "other.example.com"}},
                        headers={"Content-Type": "application/merge-patch+json"})
    assert r.status == 422
    assert any(c["field"] == "spec.group" and "field is immutable" in c["message"]
               for c in (await r.json())["details"]["causes"])


async def test_crd_deletion_removes_instances_and_routes(api, registry_restored):
    g = new_group()
    ns = await new_ns(api)
    body = crd_body(g)
    await established(api, body)
    path = f"/apis/{g}/v1/namespaces/{ns}/widgets"
    for n in ("a", "b"):
        r = await api.post(path, json={"apiVersion": f"{g}/v1", "kind": "Widget", "metadata": {"name": n},
                                       "spec": {"size": 1}})
        assert r.status == 201
    r = await api.delete(f"{CRDS}/{body['metadata']['name']}")
    assert r.status == 200
    assert (await r.json())["metadata"]["deletionTimestamp"]
    await wait_gone(api, f"{CRDS}/{body['metadata']['name']}")
    await api.server_obj.resources_settled()
    assert (await api.get(path)).status == 404
    assert (await api.get(f"/apis/{g}/v1")).status == 404
    assert R.REGISTRY.lookup(g, "v1", "widgets") is None
    res = await api.server_obj.store.list(f"/registry/{g}/widgets/")
    assert res.items == []


async def test_crd_deletion_waits_for_instance_finalizers(api, registry_restored):
    g = new_group()
    ns = await new_ns(api)
    body = crd_body(g)
    name = body["metadata"]["name"]
    await established(api, body)
    path = f"/apis/{g}/v1/namespaces/{ns}/widgets"
    r = await api.post(path, json={"apiVersion": f"{g}/v1", "kind": "Widget",
                                   "metadata": {"name": "held", "finalizers": ["example.com/hold"]},
                                   "spec": {"size": 1}})
    assert r.status == 201
    assert (await api.delete(f"{CRDS}/{name}")).status == 200
    crd = await wait_crd(api, name, "Terminating")
    term = next(c for c in crd["status"]["conditions"] if c["type"] == "Terminating")
    assert (term["reason"], term["message"]) == ("InstanceDeletionInProgress", "CustomResource deletion is in progress")
    # the instance is being deleted (its finalizer holds it), and no new one is taken
    await watch_until(api, f"{path}?fieldSelector=metadata.name=held",
                      lambda o: bool(o["metadata"].get("deletionTimestamp")))
    r = await api.post(path, json={"apiVersion": f"{g}/v1", "kind": "Widget", "metadata": {"name": "new"}})
    assert r.status == 405
    st = await r.json()
    assert (st["reason"], st["message"]) == ("MethodNotAllowed",
                                             "create not allowed while custom resource definition is terminating")
    assert (await api.get(f"{CRDS}/{name}")).status == 200
    r = await api.patch(f"{path}/held", json={"metadata": {"finalizers": None}},
                        headers={"Content-Type": "application/merge-patch+json"})
    assert r.status == 200, await r.text()
    await wait_gone(api, f"{CRDS}/{name}")
    assert R.REGISTRY.lookup(g, "v1", "widgets") is None


async def test_aggregated_discovery_etag(api, registry_restored):
    r = await api.get("/apis", headers={"Accept": AGGREGATED_CT})
    etag = r.headers["ETag"]
    assert etag.startswith('"') and len(etag) == 130
    r = await api.get("/apis", headers={"Accept": AGGREGATED_CT, "If-None-Match": etag})
    assert r.status == 304
    g = new_group()
    await established(api, crd_body(g))
    r = await api.get("/apis", headers={"Accept": AGGREGATED_CT, "If-None-Match": etag})
    assert r.status == 200 and r.headers["ETag"] != etag
    doc = await r.json()
    grp = next(i for i in doc["items"] if i["metadata"]["name"] == g)
    res = grp["versions"][0]["resources"][0]
    assert (res["resource"], res["categories"], [s["subresource"] for s in res["subresources"]]) == (
        "widgets", ["all"], ["status", "scale"])


async def test_cluster_scoped_custom_resource(api, registry_restored):
    g = new_group()
    await established(api, crd_body(g, scope="Cluster"))
    path = f"/apis/{g}/v1/widgets"
    r = await api.post(path, json={"apiVersion": f"{g}/v1", "kind": "Widget", "metadata": {"name": "c1"},
                                   "spec": {"size": 2}})
    assert r.status == 201, await r.text()
    obj = await r.json()
    assert "namespace" not in obj["metadata"]
    assert (await api.get(f"{path}/c1")).status == 200
    assert (await api.get(f"/apis/{g}/v1/namespaces/default/widgets")).status == 404
    # ObjectMeta rules hold for custom resources too
    r = await api.post(path, json={"apiVersion": f"{g}/v1", "kind": "Widget", "metadata": {"name": "Bad_Name"}})
    assert r.status == 422
    assert (await r.json())["details"]["causes"][0]["field"] == "metadata.name"


async def test_custom_resource_strict_decoding_names_the_kind(api, registry_restored):
    """transformDecodeError (handlers/rest.go): ``<Kind> in version "<v>" cannot be handled as
    a <Kind>: strict decoding error: ...`` for a custom resource too."""
    g = new_group()
    ns = await new_ns(api)
    await established(api, crd_body(g))
    w = {"apiVersion": f"{g}/v1", "kind": "Widget", "metadata": {"name": "w1"}, "spec": {"size": 3, "extra": "x"}}
    r = await api.post(f"/apis/{g}/v1/namespaces/{ns}/widgets?fieldValidation=Strict", json=w)
    assert r.status == 400
    assert (await r.json())["message"] == ('Widget in version "v1" cannot be handled as a Widget: strict decoding '
                                           'error: unknown field "spec.extra"')
