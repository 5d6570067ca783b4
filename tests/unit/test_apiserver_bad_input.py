"""Bad requests to the apiserver, as a table: every one answers 4xx with a Kubernetes Status,
the server stays up, and nothing stored breaks a read (every kind still lists; the
ConfigMap Table of ``kubectl get cm -A`` still renders).

The cases are generated from the schema table (a value of the wrong JSON type for every
top-level field of every served kind, through create, update, merge / strategic merge /
JSON patch and server-side apply) plus hand-named ones: huge integers, nulls, deep nesting,
non-object bodies, bad content types, binary garbage, oversize bodies, subresources.
The figure (bad inputs → 4xx / 5xx) is printed in the terminal summary.
"""

from __future__ import annotations

import json

import pytest
import pytest_asyncio
from aiohttp.test_utils import TestClient, TestServer

from controlplane.api import resources as R
from controlplane.api import schemas
from controlplane.storage import testing
from tests.support.apiserver import new_ns
from tests.unit import conftest

pytestmark = [pytest.mark.skipif(not testing.available(), reason="needs /usr/bin/etcd"),
              pytest.mark.asyncio(loop_scope="module")]

JSON, MERGE, SMP, JP, APPLY, YAML = ("application/json", "application/merge-patch+json",
                                     "application/strategic-merge-patch+json", "application/json-patch+json",
                                     "application/apply-patch+yaml", "application/yaml")
TABLE = "application/json;as=Table;v=v1;g=meta.k8s.io,application/json"
RESULTS: dict[str, int] = {}
_SERVER: list = []

TEMPLATE = {"metadata": {"labels": {"app": "b"}}, "spec": {"containers": [{"name": "c", "image": "nginx"}]}}
SELECTOR = {"matchLabels": {"app": "b"}}
RICH_POD_SPEC = {
    "containers": [{"name": "c", "image": "nginx", "env": [{"name": "A", "value": "b"}],
                    "ports": [{"containerPort": 80, "name": "http"}],
                    "resources": {"requests": {"cpu": "100m"}, "limits": {"cpu": "1", "memory": "64Mi"}},
                    "volumeMounts": [{"name": "v", "mountPath": "/v"}],
                    "livenessProbe": {"httpGet": {"path": "/", "port": 80}, "periodSeconds": 5},
                    "securityContext": {"runAsUser": 1000}}],
    "volumes": [{"name": "v", "emptyDir": {}}],
    "tolerations": [{"key": "k", "operator": "Exists", "effect": "NoExecute", "tolerationSeconds": 30}],
    "affinity": {"nodeAffinity": {"requiredDuringSchedulingIgnoredDuringExecution": {"nodeSelectorTerms": [
        {"matchExpressions": [{"key": "zone", "operator": "In", "values": ["a"]}]}]}},
        "podAntiAffinity": {"preferredDuringSchedulingIgnoredDuringExecution": [{"weight": 10, "podAffinityTerm": {
            "labelSelector": {"matchExpressions": [{"key": "app", "operator": "Exists"}]},
            "topologyKey": "kubernetes.io/hostname"}}]}},
    "topologySpreadConstraints": [{"maxSkew": 1, "topologyKey": "zone", "whenUnsatisfiable": "ScheduleAnyway",
                                   "labelSelector": {"matchLabels": {"app": "b"}}}],
    "nodeSelector": {"disk": "ssd"},
}


def base_objects(ns: str) -> dict[str, dict]:
    """A valid object of every served kind (plural → body), named ``base``."""
    out = {
        "pods": {"spec": RICH_POD_SPEC},
        "deployments": {"spec": {"replicas": 1, "selector": SELECTOR, "template": TEMPLATE,
                                 "strategy": {"type": "RollingUpdate",
                                              "rollingUpdate": {"maxSurge": 1, "maxUnavailable": "25%"}}}},
        "replicasets": {"spec": {"replicas": 1, "selector": SELECTOR, "template": TEMPLATE}},
        "daemonsets": {"spec": {"selector": SELECTOR, "template": TEMPLATE}},
        "statefulsets": {"spec": {"replicas": 1, "serviceName": "s", "selector": SELECTOR, "template": TEMPLATE}},
        "replicationcontrollers": {"spec": {"replicas": 1, "selector": {"app": "b"}, "template": TEMPLATE}},
        "services": {"spec": {"selector": {"app": "b"}, "ports": [{"name": "a", "port": 80, "targetPort": "http"},
                                                                  {"name": "b", "port": 81, "protocol": "UDP"}]}},
        "configmaps": {"data": {"a": "b"}},
        "secrets": {"data": {"a": "YWJj"}},
        "serviceaccounts": {},
        "endpoints": {"subsets": []},
        "leases": {"spec": {"holderIdentity": "x"}},
        "events": {"involvedObject": {"kind": "Pod", "name": "base", "namespace": ns}, "reason": "R", "message": "m"},
        "nodes": {"spec": {"taints": [{"key": "k", "value": "v", "effect": "NoSchedule"}]}},
        "namespaces": {},
    }
    for plural, body in out.items():
        r = _resource(plural)
        name = f"base-{ns}" if not r.namespaced else "base"
        body.update({"apiVersion": r.api_version, "kind": r.kind})
        body.setdefault("metadata", {})["name"] = name
    return out


def _resource(plural: str):
    return next(r for r in R.REGISTRY if r.plural == plural and r.group in ("", "apps", "coordination.k8s.io"))


def item_path(plural: str, ns: str, sub: str = "") -> str:
    r = _resource(plural)
    return r.path(ns if r.namespaced else None, f"base-{ns}" if not r.namespaced else "base", sub or None)


def coll_path(plural: str, ns: str) -> str:
    r = _resource(plural)
    return r.path(ns if r.namespaced else None)


def wrong_value(typ: str):
    """A value of the wrong JSON type for a field of schema type ``typ``."""
    if typ in ("string", "Time", "MicroTime", "bytes", "IntOrString", "Quantity"):
        return {"a": 1}
    if typ == "boolean":
        return "yes"
    if typ in ("int32", "int64", "integer", "number"):
        return "1"
    if typ.startswith("[]"):
        return "x"
    return ["x"]  # objects, maps


def _generated(ns: str, bases: dict[str, dict]) -> list[tuple]:
    cases = []
    for plural, base in bases.items():
        kind = base["kind"]
        fields = {"metadata": "ObjectMeta", **{f: t for f, (t, _d) in schemas.kind_fields(kind).fields.items()}}
        for field, typ in fields.items():
            bad = wrong_value(typ)
            body = {**base, field: bad}
            if field == "metadata":
                body = {**base, "metadata": bad}
            fresh = json.loads(json.dumps(body))
            if field != "metadata":
                fresh["metadata"] = {"name": "fresh"} if _resource(plural).namespaced else {"name": f"fresh-{ns}"}
            tag = f"{kind}.{field}={json.dumps(bad)}"
            cases += [
                (f"create {tag}", "POST", coll_path(plural, ns), json.dumps(fresh), JSON, 400),
                (f"update {tag}", "PUT", item_path(plural, ns), json.dumps(body), JSON, 400),
                (f"merge-patch {tag}", "PATCH", item_path(plural, ns), json.dumps({field: bad}), MERGE, 422),
                (f"strategic-merge-patch {tag}", "PATCH", item_path(plural, ns), json.dumps({field: bad}), SMP, 422),
                (f"json-patch {tag}", "PATCH", item_path(plural, ns),
                 json.dumps([{"op": "add", "path": f"/{field}", "value": bad}]), JP, 422),
                (f"apply {tag}", "PATCH", item_path(plural, ns) + "?fieldManager=t",
                 json.dumps({"apiVersion": base["apiVersion"], "kind": kind,
                             "metadata": base["metadata"] if field != "metadata" else bad, field: bad}), APPLY, 400),
            ]
    return cases


def deep(n: int, leaf: str = "1") -> str:
    return "[" * n + leaf + "]" * n


def _named(ns: str) -> list[tuple]:
    dep, cm = item_path("deployments", ns), item_path("configmaps", ns)
    deps, pods, cms = coll_path("deployments", ns), coll_path("pods", ns), coll_path("configmaps", ns)
    big = 9223372036854775808

    def d(replicas):
        return json.dumps({"apiVersion": "apps/v1", "kind": "Deployment", "metadata": {"name": "huge"},
                           "spec": {"replicas": replicas, "selector": SELECTOR, "template": TEMPLATE}})

    def p(name="fresh", **spec):
        return json.dumps({"apiVersion": "v1", "kind": "Pod", "metadata": {"name": name},
                           "spec": {"containers": [{"name": "c", "image": "nginx"}], **spec}})

    def c(container):
        return json.dumps({"apiVersion": "v1", "kind": "Pod", "metadata": {"name": "fresh"},
                           "spec": {"containers": [container]}})

    def cmb(**fields):
        return json.dumps({"apiVersion": "v1", "kind": "ConfigMap", "metadata": {"name": "fresh"}, **fields})
    two_mib = "x" * (2 * 1024 * 1024)
    garbage = bytes(range(256)) * 4
    return [
        # huge and out-of-range integers
        ("create Deployment replicas=2^63", "POST", deps, d(big), JSON, 400),
        ("create Deployment replicas=2^31", "POST", deps, d(2 ** 31), JSON, 400),
        ("create Deployment replicas=1.5", "POST", deps, d(1.5), JSON, 400),
        ("create Deployment replicas=-1", "POST", deps, d(-1), JSON, 422),
        ("merge-patch Deployment replicas=2^63", "PATCH", dep, json.dumps({"spec": {"replicas": big}}), MERGE, 422),
        ("strategic-merge-patch Deployment replicas=2^63", "PATCH", dep,
         json.dumps({"spec": {"replicas": big}}), SMP, 422),
        ("json-patch Deployment replicas=2^63", "PATCH", dep,
         json.dumps([{"op": "replace", "path": "/spec/replicas", "value": big}]), JP, 422),
        ("apply Deployment replicas=2^63", "PATCH", dep + "?fieldManager=t",
         json.dumps({"apiVersion": "apps/v1", "kind": "Deployment", "metadata": {"name": "base"},
                     "spec": {"replicas": big}}), APPLY, 400),
        ("update deployments/scale replicas=2^63", "PUT", item_path("deployments", ns, "scale"),
         json.dumps({"apiVersion": "autoscaling/v1", "kind": "Scale", "metadata": {"name": "base"},
                     "spec": {"replicas": big}}), JSON, 400),
        ("merge-patch deployments/scale replicas=2^63", "PATCH", item_path("deployments", ns, "scale"),
         json.dumps({"spec": {"replicas": big}}), MERGE, 422),
        ("merge-patch deployments/scale replicas=\"x\"", "PATCH", item_path("deployments", ns, "scale"),
         json.dumps({"spec": {"replicas": "x"}}), MERGE, 422),
        ("create Pod containerPort=2^40", "POST", pods, c({"name": "c", "image": "i",
                                                              "ports": [{"containerPort": 2 ** 40}]}), JSON, 400),
        ("create Pod containerPort=70000", "POST", pods, c({"name": "c", "image": "i",
                                                               "ports": [{"containerPort": 70000}]}), JSON, 422),
        ("create Pod containerPort=\"80\"", "POST", pods, c({"name": "c", "image": "i",
                                                                "ports": [{"containerPort": "80"}]}), JSON, 400),
        ("create Pod terminationGracePeriodSeconds=2^64", "POST", pods, p(terminationGracePeriodSeconds=2 ** 64),
         JSON, 400),
        ("create Pod priority=2^31", "POST", pods, p(priority=2 ** 31), JSON, 400),
        ("create Pod tolerationSeconds=\"x\"", "POST", pods, p(tolerations=[{"key": "k", "tolerationSeconds": "x"}]),
         JSON, 400),
        # wrong types deeper down, nulls
        ("create Pod containers=\"x\"", "POST", pods, p(containers="x"), JSON, 400),
        ("create Pod containers=[null]", "POST", pods, p(containers=[None]), JSON, 422),
        ("create Pod containers=[1]", "POST", pods, p(containers=[1]), JSON, 400),
        ("create Pod containers=[]", "POST", pods, p(containers=[]), JSON, 422),
        ("create Pod container image=5", "POST", pods, c({"name": "c", "image": 5}), JSON, 400),
        ("create Pod container env=\"x\"", "POST", pods, c({"name": "c", "image": "i", "env": "x"}), JSON, 400),
        ("create Pod container env=[\"x\"]", "POST", pods, c({"name": "c", "image": "i", "env": ["x"]}), JSON, 400),
        ("create Pod container resources.limits.cpu=\"abc\"", "POST", pods,
         c({"name": "c", "image": "i", "resources": {"limits": {"cpu": "abc"}}}), JSON, 400),
        ("create Pod container resources=\"x\"", "POST", pods, c({"name": "c", "image": "i", "resources": "x"}),
         JSON, 400),
        ("create Pod affinity nodeSelectorTerms=[\"x\"]", "POST", pods, p(affinity={"nodeAffinity": {
            "requiredDuringSchedulingIgnoredDuringExecution": {"nodeSelectorTerms": ["x"]}}}), JSON, 400),
        ("create Pod tolerations=[\"x\"]", "POST", pods, p(tolerations=["x"]), JSON, 400),
        ("create Pod volumes=[{\"name\": 1}]", "POST", pods, p(volumes=[{"name": 1}]), JSON, 400),
        ("create Pod topologySpreadConstraints maxSkew=\"x\"", "POST", pods,
         p(topologySpreadConstraints=[{"maxSkew": "x"}]), JSON, 400),
        ("create Deployment strategy=\"x\"", "POST", deps, json.dumps({
            "apiVersion": "apps/v1", "kind": "Deployment", "metadata": {"name": "s"},
            "spec": {"selector": SELECTOR, "template": TEMPLATE, "strategy": "x"}}), JSON, 400),
        ("create Deployment maxSurge={}", "POST", deps, json.dumps({
            "apiVersion": "apps/v1", "kind": "Deployment", "metadata": {"name": "s"},
            "spec": {"selector": SELECTOR, "template": TEMPLATE,
                     "strategy": {"rollingUpdate": {"maxSurge": {}}}}}), JSON, 400),
        ("create Pod metadata=null", "POST", pods, json.dumps({"apiVersion": "v1", "kind": "Pod", "metadata": None,
                                                               "spec": {"containers": []}}), JSON, 422),
        ("create Pod creationTimestamp=\"yesterday\"", "POST", pods, json.dumps({
            "apiVersion": "v1", "kind": "Pod", "metadata": {"name": "t", "creationTimestamp": "yesterday"},
            "spec": {"containers": [{"name": "c", "image": "i"}]}}), JSON, 400),
        ("create Pod ownerReferences=[{\"controller\": \"yes\"}]", "POST", pods, json.dumps({
            "apiVersion": "v1", "kind": "Pod", "metadata": {"name": "t", "ownerReferences": [{"controller": "yes"}]},
            "spec": {"containers": [{"name": "c", "image": "i"}]}}), JSON, 400),
        ("create Pod kind=5", "POST", pods, json.dumps({"kind": 5}), JSON, 400),
        ("create Pod apiVersion=[]", "POST", pods, json.dumps({"apiVersion": []}), JSON, 400),
        # string maps (annotations, labels, ConfigMap data) and base64
        ("create ConfigMap annotation value={}", "POST", cms, json.dumps({
            "apiVersion": "v1", "kind": "ConfigMap", "metadata": {"name": "a", "annotations": {"a": {"b": "c"}}}}),
         JSON, 400),
        ("merge-patch ConfigMap annotation value={}", "PATCH", cm,
         json.dumps({"metadata": {"annotations": {"a": {"b": "c"}}}}), MERGE, 422),
        ("strategic-merge-patch ConfigMap annotation value={}", "PATCH", cm,
         json.dumps({"metadata": {"annotations": {"a": {"b": "c"}}}}), SMP, 422),
        ("json-patch ConfigMap annotation value=[]", "PATCH", cm,
         json.dumps([{"op": "add", "path": "/metadata/annotations", "value": {"a": []}}]), JP, 422),
        ("apply ConfigMap annotation value={}", "PATCH", cm + "?fieldManager=t", json.dumps({
            "apiVersion": "v1", "kind": "ConfigMap", "metadata": {"name": "base", "annotations": {"a": {"b": 1}}}}),
         APPLY, 400),
        ("create ConfigMap label value=1", "POST", cms, json.dumps({
            "apiVersion": "v1", "kind": "ConfigMap", "metadata": {"name": "a", "labels": {"a": 1}}}), JSON, 400),
        ("create ConfigMap data value=1", "POST", cms, cmb(data={"a": 1}), JSON, 400),
        ("create ConfigMap data value=true", "POST", cms, cmb(data={"a": True}), JSON, 400),
        ("create ConfigMap binaryData not base64", "POST", cms, cmb(binaryData={"a": "!!!"}), JSON, 400),
        ("merge-patch ConfigMap data value=[]", "PATCH", cm, json.dumps({"data": {"a": []}}), MERGE, 422),
        ("create Secret data not base64", "POST", coll_path("secrets", ns), json.dumps({
            "apiVersion": "v1", "kind": "Secret", "metadata": {"name": "s"}, "data": {"a": "é"}}), JSON, 400),
        ("create Secret stringData value=1", "POST", coll_path("secrets", ns), json.dumps({
            "apiVersion": "v1", "kind": "Secret", "metadata": {"name": "s"}, "stringData": {"a": 1}}), JSON, 400),
        ("create Service targetPort={}", "POST", coll_path("services", ns), json.dumps({
            "apiVersion": "v1", "kind": "Service", "metadata": {"name": "s"},
            "spec": {"ports": [{"port": 80, "targetPort": {}}]}}), JSON, 400),
        ("create Service port=2^40", "POST", coll_path("services", ns), json.dumps({
            "apiVersion": "v1", "kind": "Service", "metadata": {"name": "s"},
            "spec": {"ports": [{"port": 2 ** 40}]}}), JSON, 400),
        # unknown fields with fieldValidation=Strict
        ("create Strict unknown spec.foo", "POST", pods + "?fieldValidation=Strict", p(foo=1), JSON, 400),
        ("update Strict unknown top-level", "PUT", cm + "?fieldValidation=Strict", json.dumps({
            "apiVersion": "v1", "kind": "ConfigMap", "metadata": {"name": "base"}, "foo": 1}), JSON, 400),
        ("merge-patch Strict unknown", "PATCH", cm + "?fieldValidation=Strict", json.dumps({"foo": 1}), MERGE, 422),
        ("strategic-merge-patch Strict unknown", "PATCH", cm + "?fieldValidation=Strict", json.dumps({"foo": 1}),
         SMP, 422),
        ("json-patch Strict unknown", "PATCH", cm + "?fieldValidation=Strict",
         json.dumps([{"op": "add", "path": "/foo", "value": 1}]), JP, 422),
        ("apply unknown field", "PATCH", cm + "?fieldManager=t", json.dumps({
            "apiVersion": "v1", "kind": "ConfigMap", "metadata": {"name": "base"}, "foo": 1}), APPLY, 400),
        ("create fieldValidation=Bogus", "POST", cms + "?fieldValidation=Bogus", cmb(), JSON, 400),
        ("create dryRun=Bogus", "POST", cms + "?dryRun=Bogus", cmb(), JSON, 400),
        # deep nesting
        ("create JSON nested 20000", "POST", pods, deep(20000), JSON, 400),
        ("create JSON nested 20000 in a field", "POST", pods,
         '{"apiVersion":"v1","kind":"Pod","metadata":{"name":"x","annotations":' + deep(20000) + "}}", JSON, 400),
        ("create JSON nested 5000 in annotations", "POST", pods,
         '{"apiVersion":"v1","kind":"Pod","metadata":{"name":"x","annotations":{"a":' + deep(5000) + "}}}", JSON, 400),
        ("create JSON nested 5000 in a free-form field", "POST", pods,
         '{"apiVersion":"v1","kind":"Pod","metadata":{"name":"x"},"spec":{"securityContext":{"a":' + deep(5000)
         + "}}}", JSON, 400),
        ("create YAML nested 20000", "POST", pods, deep(20000), YAML, 400),
        ("create YAML nested 5000 in a field", "POST", pods, "apiVersion: v1\nkind: Pod\nmetadata: {name: x, labels: "
         + deep(5000) + "}\n", YAML, 400),
        ("update JSON nested 20000", "PUT", cm, deep(20000), JSON, 400),
        ("merge-patch nested 20000", "PATCH", cm, deep(20000), MERGE, 400),
        ("merge-patch nested 5000 in annotations", "PATCH", cm, '{"metadata":{"annotations":' + deep(5000) + "}}",
         MERGE, 400),
        ("merge-patch nested 500 in annotations", "PATCH", cm, '{"metadata":{"annotations":' + deep(500) + "}}",
         MERGE, 422),
        ("merge-patch Strict nested 500 in an unknown field", "PATCH", cm + "?fieldValidation=Strict",
         '{"foo":' + deep(500) + "}", MERGE, 422),
        ("merge-patch nested 5000 in an unknown field", "PATCH", cm, '{"foo":' + deep(5000) + "}", MERGE, 400),
        ("strategic-merge-patch Strict nested 500 in an unknown field", "PATCH", cm + "?fieldValidation=Strict",
         '{"spec":{"foo":' + deep(500) + "}}", SMP, 422),
        ("strategic-merge-patch nested 20000", "PATCH", cm, deep(20000), SMP, 400),
        ("strategic-merge-patch nested 5000 in data", "PATCH", cm, '{"data":' + deep(5000) + "}", SMP, 400),
        ("strategic-merge-patch nested 500 in data", "PATCH", cm, '{"data":' + deep(500) + "}", SMP, 422),
        ("json-patch nested 20000", "PATCH", cm, deep(20000), JP, 400),
        ("json-patch value nested 5000", "PATCH", cm,
         '[{"op":"add","path":"/metadata/annotations","value":' + deep(5000) + "}]", JP, 400),
        ("json-patch value nested 500", "PATCH", cm,
         '[{"op":"add","path":"/metadata/annotations","value":' + deep(500) + "}]", JP, 400),
        ("apply YAML nested 20000", "PATCH", cm + "?fieldManager=t", deep(20000), APPLY, 400),
        ("apply YAML nested 5000 in data", "PATCH", cm + "?fieldManager=t",
         "apiVersion: v1\nkind: ConfigMap\nmetadata: {name: base}\ndata: " + deep(5000) + "\n", APPLY, 400),
        # non-object bodies
        ("create body []", "POST", pods, "[]", JSON, 400),
        ("create body \"x\"", "POST", pods, '"x"', JSON, 400),
        ("create body 5", "POST", pods, "5", JSON, 400),
        ("create body null", "POST", pods, "null", JSON, 400),
        ("create body true", "POST", pods, "true", JSON, 400),
        ("create YAML list body", "POST", pods, "- a\n- b\n", YAML, 400),
        ("update body []", "PUT", cm, "[]", JSON, 400),
        ("merge-patch body []", "PATCH", cm, "[]", MERGE, 400),
        ("merge-patch body \"x\"", "PATCH", cm, '"x"', MERGE, 400),
        ("strategic-merge-patch body []", "PATCH", cm, "[]", SMP, 400),
        ("json-patch body {}", "PATCH", cm, "{}", JP, 400),
        ("json-patch body [1]", "PATCH", cm, "[1]", JP, 422),
        ("json-patch op=5", "PATCH", cm, json.dumps([{"op": 5, "path": "/a"}]), JP, 422),
        ("json-patch path=[]", "PATCH", cm, json.dumps([{"op": "add", "path": [], "value": 1}]), JP, 422),
        ("json-patch 10001 operations", "PATCH", cm,
         json.dumps([{"op": "test", "path": "/kind", "value": "ConfigMap"}] * 10001), JP, 413),
        ("json-patch copying a map into data values", "PATCH", cm, json.dumps(
            [{"op": "add", "path": "/data/x", "value": "x" * 1000}]
            + [{"op": "copy", "from": "/data", "path": "/metadata/annotations"}]
            + [{"op": "copy", "from": "/metadata/annotations", "path": f"/data/c{i}"} for i in range(40)]), JP, 422),
        ("json-patch copies of the root doubling the object", "PATCH", cm, json.dumps(
            [{"op": "copy", "from": "", "path": f"/data/c{i}"} for i in range(40)]), JP, 422),
        ("apply YAML list body", "PATCH", cm + "?fieldManager=t", "- a\n- b\n", APPLY, 400),
        ("apply YAML scalar body", "PATCH", cm + "?fieldManager=t", "just text\n", APPLY, 400),
        ("apply without fieldManager", "PATCH", cm, cmb(), APPLY, 422),
        # bad content types, garbage, empty bodies
        ("create text/plain", "POST", pods, p(), "text/plain", 415),
        ("create application/xml", "POST", pods, "<pod/>", "application/xml", 415),
        ("patch text/plain", "PATCH", cm, "{}", "text/plain", 415),
        ("patch application/json", "PATCH", cm, "{}", JSON, 415),
        ("create malformed JSON", "POST", pods, "{not json", JSON, 400),
        ("create truncated JSON", "POST", pods, p()[:40], JSON, 400),
        ("create binary garbage as JSON", "POST", pods, garbage, JSON, 400),
        ("create binary garbage as YAML", "POST", pods, garbage, YAML, 400),
        ("create binary garbage as protobuf", "POST", pods, garbage, "application/vnd.kubernetes.protobuf", 400),
        ("update binary garbage", "PUT", cm, garbage, JSON, 400),
        ("merge-patch binary garbage", "PATCH", cm, garbage, MERGE, 400),
        ("strategic-merge-patch binary garbage", "PATCH", cm, garbage, SMP, 400),
        ("json-patch binary garbage", "PATCH", cm, garbage, JP, 400),
        ("apply binary garbage", "PATCH", cm + "?fieldManager=t", garbage, APPLY, 400),
        ("create malformed YAML", "POST", pods, "a: b: c\n", YAML, 400),
        ("create YAML with NaN", "POST", cms, "apiVersion: v1\nkind: ConfigMap\nmetadata: {name: n}\n"
         "data: {a: .nan}\n", YAML, 400),
        ("create empty body", "POST", pods, "", JSON, 400),
        ("merge-patch empty body", "PATCH", cm, "", MERGE, 400),
        # oversize
        ("create body over 3 MiB", "POST", cms, cmb(data={"a": "x" * (3 * 1024 * 1024 + 10)}), JSON, 413),
        ("create ConfigMap over etcd's request limit", "POST", cms, cmb(data={"a": "x" * (1600 * 1024)}), JSON, 413),
        ("create ConfigMap over etcd's gRPC message limit", "POST", cms, cmb(data={"a": two_mib}), JSON, 413),
        ("merge-patch ConfigMap over etcd's request limit", "PATCH", cm,
         json.dumps({"data": {"a": two_mib}}), MERGE, 413),
        # subresources
        ("update pods/status status=\"x\"", "PUT", item_path("pods", ns, "status"), json.dumps({
            "apiVersion": "v1", "kind": "Pod", "metadata": {"name": "base"}, "status": "x"}), JSON, 400),
        ("merge-patch pods/status phase=5", "PATCH", item_path("pods", ns, "status"),
         json.dumps({"status": {"phase": 5}}), MERGE, 422),
        ("strategic-merge-patch pods/status conditions=\"x\"", "PATCH", item_path("pods", ns, "status"),
         json.dumps({"status": {"conditions": "x"}}), SMP, 422),
        ("merge-patch deployments/status replicas=\"x\"", "PATCH", item_path("deployments", ns, "status"),
         json.dumps({"status": {"replicas": "x"}}), MERGE, 422),
        ("merge-patch nodes/status capacity cpu=\"abc\"", "PATCH", item_path("nodes", ns, "status"),
         json.dumps({"status": {"capacity": {"cpu": "abc"}}}), MERGE, 422),
        ("create pods/binding target=\"x\"", "POST", item_path("pods", ns, "binding"), json.dumps({
            "apiVersion": "v1", "kind": "Binding", "metadata": {"name": "base"}, "target": "x"}), JSON, 400),
        ("create pods/binding target.name=5", "POST", item_path("pods", ns, "binding"), json.dumps({
            "apiVersion": "v1", "kind": "Binding", "metadata": {"name": "base"},
            "target": {"kind": "Node", "name": 5}}), JSON, 400),
        ("create pods/binding annotations=[]", "POST", item_path("pods", ns, "binding"), json.dumps({
            "apiVersion": "v1", "kind": "Binding", "metadata": {"name": "base", "annotations": []},
            "target": {"name": "n"}}), JSON, 400),
        ("create pods/eviction deleteOptions=\"x\"", "POST", item_path("pods", ns, "eviction"), json.dumps({
            "apiVersion": "policy/v1", "kind": "Eviction", "metadata": {"name": "base"}, "deleteOptions": "x"}),
         JSON, 400),
        ("create pods/eviction body []", "POST", item_path("pods", ns, "eviction"), "[]", JSON, 400),
        ("update namespaces/finalize spec=\"x\"", "PUT", f"/api/v1/namespaces/{ns}/finalize", json.dumps({
            "apiVersion": "v1", "kind": "Namespace", "metadata": {"name": ns}, "spec": "x"}), JSON, 400),
        ("delete body \"x\"", "DELETE", cm, '"x"', JSON, 400),
        ("delete preconditions=\"x\"", "DELETE", cm, json.dumps({"preconditions": "x"}), JSON, 400),
        ("delete gracePeriodSeconds=\"x\"", "DELETE", cm, json.dumps({"gracePeriodSeconds": "x"}), JSON, 400),
        ("delete query gracePeriodSeconds=abc", "DELETE", cm + "?gracePeriodSeconds=abc", "", JSON, 400),
        ("delete propagationPolicy=Bogus", "DELETE", cm, json.dumps({"propagationPolicy": "Bogus"}), JSON, 400),
        ("deletecollection binary garbage", "DELETE", cms, garbage, JSON, 400),
        # the trace endpoint the components post their step records to
        ("post trace records garbage", "POST", "/debug/controlplane/trace", garbage, JSON, 400),
        ("post trace records=\"x\"", "POST", "/debug/controlplane/trace", json.dumps({"records": "x"}), JSON, 400),
        ("post trace records=[1]", "POST", "/debug/controlplane/trace", json.dumps({"records": [1]}), JSON, 400),
        ("get trace since=abc", "GET", "/debug/controlplane/trace?since=abc", "", JSON, 400),
        # bad query parameters
        ("list limit=abc", "GET", cms + "?limit=abc", "", JSON, 400),
        ("list resourceVersion=abc", "GET", cms + "?resourceVersion=abc", "", JSON, 400),
        ("list labelSelector=a b c", "GET", cms + "?labelSelector=a%20b%20c", "", JSON, 400),
        ("list fieldSelector=bogus", "GET", cms + "?fieldSelector=bogus", "", JSON, 400),
        ("list continue=garbage", "GET", cms + "?continue=garbage", "", JSON, 400),
        ("list resourceVersionMatch=Bogus", "GET", cms + "?resourceVersionMatch=Bogus&resourceVersion=1", "",
         JSON, 422),
        ("watch resourceVersion=abc", "GET", cms + "?watch=true&resourceVersion=abc", "", JSON, 400),
        ("watch timeoutSeconds=abc", "GET", cms + "?watch=true&timeoutSeconds=abc", "", JSON, 400),
        ("get resourceVersion=abc", "GET", cm + "?resourceVersion=abc", "", JSON, 400),
        ("create YAML alias containing itself", "POST", cms, "a: &a [*a]\n", YAML, 400),
        ("create YAML with a list as a key", "POST", cms, "apiVersion: v1\nkind: ConfigMap\nmetadata: {name: k}\n"
         "data: {? [a] : b}\n", YAML, 400),
        ("create JSON with a byte order mark", "POST", cms, "\ufeff" + cmb(), JSON, 400),
        ("create JSON not UTF-8", "POST", cms, b'{"apiVersion":"v1","kind":"ConfigMap","metadata":{"name":"\xff"}}',
         JSON, 400),
        ("update without metadata", "PUT", cm, json.dumps({"apiVersion": "v1", "kind": "ConfigMap"}), JSON, 400),
        ("update metadata.name=5", "PUT", cm, json.dumps({"apiVersion": "v1", "kind": "ConfigMap",
                                                          "metadata": {"name": 5}}), JSON, 400),
    ]


@pytest_asyncio.fixture(scope="module", loop_scope="module")
async def env(etcd_url):
    """An apiserver with a valid object of every served kind in a fresh namespace."""
    from components.apiserver.server import APIServer

    server = APIServer(etcd_url)
    await server.start()
    client = TestClient(TestServer(server.app))
    await client.start_server()
    ns = await new_ns(client)
    bases = base_objects(ns)
    for plural, body in bases.items():
        r = await client.post(coll_path(plural, ns), json=body)
        assert r.status == 201, (plural, await r.text())
    _SERVER[:] = [server]
    yield client, ns, bases
    if RESULTS:
        conftest.FIGURES.append(f"bad inputs: {len(RESULTS)} → 4xx: {sum(400 <= c < 500 for c in RESULTS.values())}, "
                                f"5xx: {sum(c >= 500 for c in RESULTS.values())}")
    await client.close()
    await server.stop()


_NS = "NS"
CASES = _generated(_NS, base_objects(_NS)) + _named(_NS)


@pytest.mark.parametrize("case", CASES, ids=[c[0] for c in CASES])
async def test_bad_request_answers_4xx_status(env, case):
    client, ns, _bases = env
    name, method, path, body, ctype, want = case
    path = path.replace(_NS, ns)
    if isinstance(body, str):
        body = body.replace(f'"{_NS}"', f'"{ns}"').replace(f"base-{_NS}", f"base-{ns}").encode()
    r = await client.request(method, path, data=body, headers={"Content-Type": ctype})
    RESULTS[name] = r.status
    text = await r.text()
    assert 400 <= r.status < 500, (r.status, text[:500])
    status = json.loads(text)
    assert status["kind"] == "Status" and status["status"] == "Failure" and status["code"] == r.status
    assert status["reason"] and status["message"], status
    assert r.status == want, (r.status, status["message"][:500])


async def test_nothing_stored_breaks_reads(env):
    """After all the bad requests: the server answers, every kind lists (JSON and Table), and
    the base objects are still as valid as they were."""
    client, ns, bases = env
    assert (await client.get("/version")).status == 200
    for r in R.REGISTRY:
        if "list" not in r.verbs:
            continue
        for accept in ("application/json", TABLE):
            resp = await client.get(r.path(), headers={"Accept": accept})
            assert resp.status == 200, (r.plural, accept, await resp.text())
    cm = await (await client.get(item_path("configmaps", ns))).json()
    assert cm["data"] == {"a": "b"} and "annotations" not in cm["metadata"]
    dep = await (await client.get(item_path("deployments", ns))).json()
    assert dep["spec"]["replicas"] == 1


async def test_decode_error_messages_are_kubernetes_words(env):
    client, ns, _ = env
    r = await client.post(coll_path("deployments", ns), data=json.dumps({
        "apiVersion": "apps/v1", "kind": "Deployment", "metadata": {"name": "m"},
        "spec": {"replicas": 9223372036854775808, "selector": SELECTOR, "template": TEMPLATE}}),
        headers={"Content-Type": JSON})
    assert (await r.json())["message"] == (
        'Deployment in version "v1" cannot be handled as a Deployment: json: cannot unmarshal number '
        "9223372036854775808 into Go struct field DeploymentSpec.spec.replicas of type int32")
    r = await client.post(coll_path("configmaps", ns), data=json.dumps({
        "apiVersion": "v1", "kind": "ConfigMap", "metadata": {"name": "m", "annotations": {"a": {"b": "c"}}}}),
        headers={"Content-Type": JSON})
    assert (await r.json())["message"] == (
        'ConfigMap in version "v1" cannot be handled as a ConfigMap: json: cannot unmarshal object into Go '
        "struct field ObjectMeta.metadata.annotations of type string")
    r = await client.post(coll_path("pods", ns) + "?fieldValidation=Strict", data=json.dumps({
        "apiVersion": "v1", "kind": "Pod", "metadata": {"name": "m"},
        "spec": {"containers": [{"name": "c", "image": "i", "foo": 1}]}}), headers={"Content-Type": JSON})
    assert (await r.json())["message"] == ('Pod in version "v1" cannot be handled as a Pod: strict decoding error: '
                                           'unknown field "spec.containers[0].foo"')
    r = await client.post(coll_path("pods", ns), data="[" * 20000, headers={"Content-Type": JSON})
    assert (await r.json())["message"] == (
        "the object provided is unrecognized (must be of type Pod): couldn't get version/kind; json parse error: "
        "invalid character '[' exceeded max depth (" + "5b" * 30 + " ...)")
    r = await client.post(coll_path("pods", ns), data='{"a":' * 2000 + "1" + "}" * 2000,
                          headers={"Content-Type": JSON})
    assert "json parse error: invalid character '{' exceeded max depth" in (await r.json())["message"]
    r = await client.patch(item_path("configmaps", ns), data=json.dumps({"data": {"a": 1}}),
                           headers={"Content-Type": MERGE})
    body = await r.json()
    assert body["reason"] == "Invalid" and body["details"]["causes"][0]["field"] == "patch"
    assert body["message"].startswith(' "" is invalid: patch: Invalid value: "{')
    assert body["message"].endswith("json: cannot unmarshal number into Go struct field ConfigMap.data of type string")


async def test_a_deep_unknown_field_in_a_patch_is_dropped(env):
    """A merge patch nesting 500 levels in a field ConfigMaps do not have: the field is dropped
    (with the Warning of fieldValidation=Warn) and the rest of the patch applies."""
    client, ns, _ = env
    r = await client.patch(item_path("configmaps", ns), data='{"data":{"deep":"ok"},"foo":' + deep(500) + "}",
                           headers={"Content-Type": MERGE})
    assert r.status == 200, await r.text()
    assert r.headers.getall("Warning") == ['299 - "unknown field \\"foo\\""']
    got = await r.json()
    assert got["data"]["deep"] == "ok" and "foo" not in got


async def test_unknown_fields_are_dropped_with_a_warning(env):
    """A merge patch's unknown fields are not stored (the decoder drops them); the default
    ``fieldValidation=Warn`` says so in a ``Warning`` header."""
    client, ns, _ = env
    r = await client.patch(item_path("configmaps", ns), data=json.dumps({"foo": 1, "metadata": {"bar": 2}}),
                           headers={"Content-Type": MERGE})
    assert r.status == 200
    assert sorted(r.headers.getall("Warning")) == ['299 - "unknown field \\"foo\\""',
                                                   '299 - "unknown field \\"metadata.bar\\""']
    got = await (await client.get(item_path("configmaps", ns))).json()
    assert "foo" not in got and "bar" not in got["metadata"]
    r = await client.post(coll_path("configmaps", ns), data=json.dumps({
        "apiVersion": "v1", "kind": "ConfigMap", "metadata": {"name": "nulls", "labels": {"a": None}},
        "data": {"k": None}}), headers={"Content-Type": JSON})
    assert r.status == 201
    got = await r.json()
    assert got["metadata"]["labels"] == {"a": ""} and got["data"] == {"k": ""}


async def test_an_undecodable_stored_object_does_not_break_a_list(env, caplog):
    """A value in etcd that is not a JSON object (written behind the apiserver's back) is left
    out of a list from etcd with one WARNING naming its key; the others are answered."""
    from aetcd import rpc

    client, ns, _ = env
    store = _SERVER[0].store
    key = f"/registry/configmaps/{ns}/zz-corrupt"
    put = rpc.RequestOp(request_put=rpc.PutRequest(key=key.encode(), value=b"\x00not json"))
    await store.etcd.txn([], [put])
    with caplog.at_level("WARNING", logger="storage"):
        r = await client.get(coll_path("configmaps", ns) + "?limit=500")
        assert r.status == 200
        names = [o["metadata"]["name"] for o in (await r.json())["items"]]
        r = await client.get(coll_path("configmaps", ns) + "?limit=500", headers={"Accept": TABLE})
        assert r.status == 200
    assert "base" in names and "zz-corrupt" not in names
    # the watch cache skipped the event too and still follows: a later write is served from it
    r = await client.post(coll_path("configmaps", ns), json={"apiVersion": "v1", "kind": "ConfigMap",
                                                             "metadata": {"name": "after-corrupt"}})
    rv = (await r.json())["metadata"]["resourceVersion"]
    r = await client.get(coll_path("configmaps", ns) + f"?resourceVersion={rv}")
    assert r.status == 200 and "after-corrupt" in [o["metadata"]["name"] for o in (await r.json())["items"]]
    warned = [rec for rec in caplog.records if rec.getMessage() == "storage.undecodable_object"]
    assert [rec.fields["key"] for rec in warned][-2:] == [key, key]  # one line per read (+ the cache's)
    # the object itself: kube-apiserver's corrupt-object error (storage.NewCorruptObjError), a
    # 500 with its text and no reason, for a read and for a delete (which needs the read)
    for method in ("GET", "DELETE"):
        r = await client.request(method, item_path("configmaps", ns).replace("/base", "/zz-corrupt"))
        body = await r.json()
        assert r.status == 500 and "reason" not in body, (method, body)
        assert body["message"].startswith(f"StorageError: corrupt object, Code: 7, Key: {key}, "
                                          "ResourceVersion: 0, AdditionalErrorMsg: "), body
    await store.etcd.txn([], [rpc.RequestOp(request_delete_range=rpc.DeleteRangeRequest(key=key.encode()))])


async def test_mutated_protobuf_bodies_never_answer_5xx(env):
    """kubectl's protobuf bodies with random bytes changed (seeded): each answers 2xx or 4xx."""
    import random

    from tests.unit.test_apiserver_protobuf import DEPLOYMENT, NAMESPACE, SERVICE

    client, ns, _ = env
    rng = random.Random(9)
    codes = []
    for base, path in ((DEPLOYMENT, coll_path("deployments", ns)), (SERVICE, coll_path("services", ns)),
                       (NAMESPACE, "/api/v1/namespaces")):
        for _ in range(60):
            b = bytearray(base)
            for _ in range(rng.randint(1, 4)):
                b[rng.randrange(4, len(b))] = rng.randrange(256)
            if rng.random() < 0.2:
                b = b[:rng.randrange(4, len(b))]
            r = await client.post(path, data=bytes(b),
                                  headers={"Content-Type": "application/vnd.kubernetes.protobuf"})
            codes.append(r.status)
            assert r.status < 500, await r.text()
            if r.status >= 400:
                assert (await r.json())["kind"] == "Status"
    assert any(c >= 400 for c in codes)


POOL = ["x", "", 5, -1, 0, 2 ** 63, 1.5, True, None, [], [None], [1, "x"], {}, {"a": {"b": 1}}, {"a": None}]


def _paths(v, prefix=()):
    yield prefix
    if isinstance(v, dict):
        for k, c in v.items():
            yield from _paths(c, prefix + (k,))
    elif isinstance(v, list):
        for i, c in enumerate(v):
            yield from _paths(c, prefix + (i,))


def _set(v, path, value):
    for p in path[:-1]:
        v = v[p]
    v[path[-1]] = value


async def test_wrong_values_anywhere_never_answer_5xx(env):
    """Every value of every base object replaced in turn by values of other types (seeded):
    create, update, status update, JSON / merge / strategic merge patch and server-side apply answer
    2xx or 4xx, never 5xx; afterwards every kind still lists."""
    import random

    client, ns, bases = env
    rng = random.Random(6)
    seen = 0
    for plural, base in bases.items():
        live = await (await client.get(item_path(plural, ns))).json()
        paths = [p for p in _paths(live) if p and p[0] not in ("apiVersion", "kind")]
        for path in paths:
            value = rng.choice(POOL)
            obj = json.loads(json.dumps(live))
            _set(obj, path, value)
            patch = {}
            node = patch
            for p in path[:-1]:
                if isinstance(p, int):
                    break
                node = node.setdefault(p, {})
            else:
                node[path[-1]] = value
            pointer = "/" + "/".join(str(p).replace("~", "~0").replace("/", "~1") for p in path)
            applied = {k: v for k, v in obj.items() if k != "status"}
            if isinstance(applied.get("metadata"), dict):
                applied["metadata"] = {k: v for k, v in applied["metadata"].items()
                                       if k not in ("managedFields", "resourceVersion", "uid", "creationTimestamp")}
            fresh = json.loads(json.dumps(obj))
            if isinstance(fresh.get("metadata"), dict):
                fresh["metadata"] = {"name": f"fz{seen}" if _resource(plural).namespaced else f"fz{seen}-{ns}"}
            requests = [("POST", coll_path(plural, ns), fresh, JSON), ("PUT", item_path(plural, ns), obj, JSON),
                        ("PATCH", item_path(plural, ns), [{"op": "replace", "path": pointer, "value": value}], JP),
                        ("PATCH", item_path(plural, ns) + "?fieldManager=fuzz&force=true", applied, APPLY)]
            if _resource(plural).subresources and "status" in _resource(plural).subresources:
                requests.append(("PUT", item_path(plural, ns, "status"), obj, JSON))
            if patch:
                requests += [("PATCH", item_path(plural, ns), patch, MERGE), ("PATCH", item_path(plural, ns), patch, SMP)]
            for method, p, body, ct in requests:
                r = await client.request(method, p, data=json.dumps(body), headers={"Content-Type": ct})
                seen += 1
                assert r.status < 500, (method, path, value, await r.text())
            # put the base back as it was for the next round (the write may have succeeded)
            cur = await (await client.get(item_path(plural, ns))).json()
            if cur != live:
                fixed = {**json.loads(json.dumps(live)), "metadata": {**live["metadata"],
                                                                        "resourceVersion": cur["metadata"]["resourceVersion"]}}
                await client.put(item_path(plural, ns), json=fixed)
                live = await (await client.get(item_path(plural, ns))).json()
    assert seen > 300
    for r in R.REGISTRY:
        if "list" in r.verbs:
            for accept in ("application/json", TABLE):
                resp = await client.get(r.path(), headers={"Accept": accept})
                assert resp.status == 200, (r.plural, accept, await resp.text())
