"""The admission chain and each default plugin (components/apiserver/admission/), on watch
caches faked as plain dicts: plugin/pkg/admission/{namespace/lifecycle,limitranger,
serviceaccount,priority,defaulttolerationseconds,runtimeclass,resourcequota}."""

from __future__ import annotations

import asyncio
import copy
import random
from typing import Any

import pytest

from components.apiserver import admission as adm
from components.apiserver.admission import defaulttolerationseconds, limitranger, serviceaccount
from components.apiserver.cache import cache_name
from components.apiserver.status import APIError
from controlplane.api import resources as R
from controlplane.api.defaults import apply_defaults
from controlplane.api.groups import core, node, scheduling
from controlplane.storage.errors import KeyNotFound
from controlplane.storage.store import object_key

PODS = R.PODS


class FakeCache:
    def __init__(self, resource: Any) -> None:
        self.resource = resource
        self.objects: dict[str, dict] = {}

    def list(self, matches=None, namespace=None):
        out = [o for o in self.objects.values()
               if not namespace or (o.get("metadata") or {}).get("namespace") == namespace]
        return out, 1

    def get(self, key):
        return self.objects.get(key)


class FakeStore:
    """The storage calls plugins make: get and guaranteed_update on a dict."""

    def __init__(self, caches: dict[str, FakeCache]) -> None:
        self.caches = caches
        self.writes: list[str] = []
        self.lists = 0

    def _find(self, key: str) -> tuple[FakeCache, dict] | None:
        for c in self.caches.values():
            if key in c.objects:
                return c, c.objects[key]
        return None

    async def get(self, key: str) -> dict:
        hit = self._find(key)
        if hit is None:
            raise KeyNotFound(key)
        return copy.deepcopy(hit[1])

    async def list(self, prefix: str):
        self.lists += 1

        class Res:
            items = [copy.deepcopy(o) for c in self.caches.values() for k, o in c.objects.items()
                     if k.startswith(prefix)]
        return Res()

    async def guaranteed_update(self, key, mutate, **kw):
        hit = self._find(key)
        if hit is None:
            raise KeyNotFound(key)
        new = mutate(copy.deepcopy(hit[1]))
        if not kw.get("dry_run"):
            hit[0].objects[key] = new
            self.writes.append(key)
        return new


class Cluster:
    def __init__(self) -> None:
        self.caches: dict[str, FakeCache] = {}
        self.store = FakeStore(self.caches)
        self.ctx = adm.Context(self.store, self.caches)  # type: ignore[arg-type]
        self.add(R.NAMESPACES, {"metadata": {"name": "default"}, "status": {"phase": "Active"}})

    def add(self, resource: Any, obj: dict) -> dict:
        c = self.caches.setdefault(cache_name(resource), FakeCache(resource))
        md = obj.setdefault("metadata", {})
        c.objects[object_key(resource, md.get("namespace"), md["name"])] = obj
        return obj

    def chain(self) -> adm.Chain:
        return adm.default_chain(self.ctx)


def pod(name: str = "p", ns: str = "default", **spec: Any) -> dict:
    spec.setdefault("containers", [{"name": "c", "image": "nginx"}])
    p = {"apiVersion": "v1", "kind": "Pod", "metadata": {"name": name, "namespace": ns}, "spec": spec}
    apply_defaults("Pod", p)
    return p


def attrs(obj: dict, op: str = adm.CREATE, resource: Any = PODS, old: dict | None = None) -> adm.Attributes:
    md = obj.get("metadata") or {}
    return adm.Attributes(op, resource, md.get("namespace"), md.get("name", ""), obj, old)


async def admit_and_validate(cl: Cluster, a: adm.Attributes) -> dict:
    chain = cl.chain()
    await chain.admit(a)
    await chain.validate(a)
    assert a.object is not None
    return a.object


# ----------------------------------------------------------------------------- the chain

def test_default_chain_order_is_kube_apiservers():
    assert Cluster().chain().names == ["NamespaceLifecycle", "LimitRanger", "ServiceAccount", "Priority",
                                       "DefaultTolerationSeconds", "DefaultStorageClass",
                                       "StorageObjectInUseProtection", "PersistentVolumeClaimResize",
                                       "RuntimeClass", "ResourceQuota"]


@pytest.mark.parametrize("enable, disable, want", [
    ("", "", list(adm.DEFAULT_PLUGINS)),
    ("ResourceQuota", "LimitRanger,Priority", ["NamespaceLifecycle", "ServiceAccount", "DefaultTolerationSeconds",
                                               "DefaultStorageClass", "StorageObjectInUseProtection",
                                               "PersistentVolumeClaimResize",
                                               "RuntimeClass", "ResourceQuota"]),
], ids=["defaults", "some disabled"])
def test_enabled_plugins_flags(enable, disable, want):
    assert adm.enabled_plugins(enable.split(","), disable.split(",")) == want


def test_enabled_plugins_unknown_name():
    with pytest.raises(ValueError, match='admission-control plugin "AlwaysPullImages" is unknown'):
        adm.enabled_plugins(["AlwaysPullImages"])


def test_unknown_plugin_is_refused():
    with pytest.raises(ValueError, match="unknown admission plugin 'Nope'"):
        adm.default_chain(Cluster().ctx, ["Nope"])


async def test_every_mutating_plugin_runs_before_any_validating_one():
    seen: list[str] = []

    class Rec(adm.Plugin):
        mutating = validating = True

        def __init__(self, ctx: adm.Context, tag: str) -> None:
            super().__init__(ctx)
            self.tag = tag

        async def admit(self, a: adm.Attributes) -> None:
            seen.append(f"admit:{self.tag}")

        async def validate(self, a: adm.Attributes) -> None:
            seen.append(f"validate:{self.tag}")

    class CreateOnly(Rec):
        operations = frozenset({adm.CREATE})

    cl = Cluster()
    chain = adm.Chain([Rec(cl.ctx, "a"), CreateOnly(cl.ctx, "b")])
    a = attrs(pod())
    await chain.admit(a)
    await chain.validate(a)
    assert seen == ["admit:a", "admit:b", "validate:a", "validate:b"]
    seen.clear()
    u = attrs(pod(), adm.UPDATE)
    await chain.admit(u)
    await chain.validate(u)
    assert seen == ["admit:a", "validate:a"]   # b handles CREATE only


def test_chain_awaits_only_the_plugins_a_request_can_reach():
    chain = Cluster().chain()
    assert chain.plan(PODS, "", adm.CREATE) == (
        ["LimitRanger", "ServiceAccount", "Priority", "DefaultTolerationSeconds", "RuntimeClass"],
        ["NamespaceLifecycle", "LimitRanger", "RuntimeClass", "ResourceQuota"])
    assert chain.plan(PODS, "status", adm.UPDATE) == ([], [])
    assert chain.plan(PODS, "binding", adm.CREATE) == ([], ["NamespaceLifecycle"])
    assert chain.plan(PODS, "", adm.UPDATE) == (["Priority", "DefaultTolerationSeconds"], [])
    assert chain.plan(R.NAMESPACES, "", adm.DELETE) == ([], ["NamespaceLifecycle"])
    pvcs = R.get("persistentvolumeclaims")
    assert chain.plan(pvcs, "", adm.CREATE) == (
        ["DefaultStorageClass", "StorageObjectInUseProtection"], ["NamespaceLifecycle", "ResourceQuota"])
    assert chain.plan(pvcs, "", adm.UPDATE) == ([], ["PersistentVolumeClaimResize", "ResourceQuota"])
    assert chain.plan(scheduling.PRIORITYCLASSES, "", adm.CREATE) == ([], ["Priority"])


def test_chain_plan_is_resolved_once_per_resource_subresource_operation():
    calls: list[tuple[str, str]] = []

    class Counting(adm.Plugin):
        mutating = validating = True

        def applies(self, phase: str, resource: Any, subresource: str, operation: str) -> bool:
            calls.append((phase, operation))
            return True

    chain = adm.Chain([Counting(Cluster().ctx)])
    for _ in range(3):
        chain.plan(PODS, "", adm.CREATE)
    chain.plan(PODS, "", adm.UPDATE)
    assert calls == [("admit", adm.CREATE), ("validate", adm.CREATE), ("admit", adm.UPDATE),
                     ("validate", adm.UPDATE)]


def _sample(resource: Any) -> dict:
    if resource is PODS:
        return pod("x")
    md: dict[str, Any] = {"name": "x", "generateName": "x-"}
    if resource.namespaced:
        md["namespace"] = "default"
    return {"apiVersion": "v1", "kind": resource.kind, "metadata": md, "globalDefault": True,
            "spec": {"resources": {"requests": {"storage": "2Gi"}}}, "status": {"phase": "Bound"}}


async def test_a_plugin_the_chain_skips_would_have_done_nothing():
    """Every (plugin, phase) that :meth:`Plugin.applies` rules out for a served resource and
    subresource (of an operation it handles), run anyway on a sample object: no change, no
    refusal, no write."""
    cl = Cluster()
    cl.add(scheduling.PRIORITYCLASSES, {"metadata": {"name": "high"}, "value": 10, "globalDefault": True})
    cl.add(core.RESOURCEQUOTAS, {"metadata": {"name": "q", "namespace": "default"},
                                 "spec": {"hard": {"pods": "0", "count/deployments.apps": "0"}}})
    cl.add(core.LIMITRANGES, {"metadata": {"name": "l", "namespace": "default"},
                              "spec": {"limits": [{"type": "Container", "defaultRequest": {"cpu": "1"},
                                                   "min": {"cpu": "2"}}]}})
    plugins = list(cl.chain().plugins)
    skipped = 0
    for resource in R.REGISTRY:
        for sub in ("", *resource.subresources):
            for op in (adm.CREATE, adm.UPDATE, adm.DELETE):
                for p in plugins:
                    for phase, on, method in ((adm.ADMIT, p.mutating, p.admit),
                                              (adm.VALIDATE, p.validating, p.validate)):
                        if not on or not p.handles(op) or p.applies(phase, resource, sub, op):
                            continue
                        obj = _sample(resource)
                        old = copy.deepcopy(obj)
                        old["spec"]["resources"] = {"requests": {"storage": "1Gi"}}
                        a = adm.Attributes(op, resource, obj["metadata"].get("namespace"), "x",
                                           None if op == adm.DELETE else obj, old, sub)
                        before = copy.deepcopy(obj)
                        await method(a)
                        assert obj == before, (p.name, phase, resource.plural, sub, op)
                        skipped += 1
    assert skipped > 1000
    assert cl.store.writes == []


def test_forbidden_aggregates_like_utilerrors():
    a = attrs(pod("web"))
    e = adm.forbidden(a, ["one", "two", "one"])
    assert (e.code, e.reason, e.message) == (403, "Forbidden", 'pods "web" is forbidden: [one, two]')
    assert adm.forbidden(a, ["only"]).message == 'pods "web" is forbidden: only'


async def test_live_lookup_when_the_cache_has_none_is_remembered():
    cl = Cluster()
    cl.caches["limitranges"] = FakeCache(core.LIMITRANGES)
    assert await cl.ctx.list_live(core.LIMITRANGES, "default") == []
    assert await cl.ctx.list_live(core.LIMITRANGES, "default") == []
    assert cl.store.lists == 1                      # one storage read per namespace and TTL
    cl.add(core.LIMITRANGES, _lr({"type": "Container", "default": {"cpu": "1"}}))
    assert len(await cl.ctx.list_live(core.LIMITRANGES, "default")) == 1   # the cache wins once it has some
    assert cl.store.lists == 1


async def test_concurrent_live_lookups_of_one_namespace_share_one_read():
    cl = Cluster()
    cl.caches["limitranges"] = FakeCache(core.LIMITRANGES)
    gate = asyncio.Event()
    plain_list = cl.store.list

    async def slow_list(prefix: str):  # a storage read still on its way while more creates arrive
        await gate.wait()
        return await plain_list(prefix)
    cl.store.list = slow_list
    calls = [asyncio.ensure_future(cl.ctx.list_live(core.LIMITRANGES, ns)) for ns in ["default"] * 20 + ["other"]]
    asyncio.get_running_loop().call_soon(gate.set)  # runs after every call's first step: all are waiting
    assert await asyncio.gather(*calls) == [[]] * 21
    assert cl.store.lists == 2                      # one per namespace, not one per create


# ----------------------------------------------------------------------------- NamespaceLifecycle

async def test_namespace_lifecycle_missing_namespace_is_404():
    cl = Cluster()
    with pytest.raises(APIError) as e:
        await admit_and_validate(cl, attrs(pod(ns="nope")))
    assert (e.value.code, e.value.message) == (404, 'namespaces "nope" not found')


async def test_namespace_lifecycle_terminating_namespace_is_403():
    cl = Cluster()
    cl.add(R.NAMESPACES, {"metadata": {"name": "gone", "deletionTimestamp": "2026-01-01T00:00:00Z"},
                          "status": {"phase": "Terminating"}})
    with pytest.raises(APIError) as e:
        await admit_and_validate(cl, attrs(pod(ns="gone")))
    assert e.value.code == 403
    assert e.value.message == ('pods "p" is forbidden: unable to create new content in namespace gone because '
                               "it is being terminated")


@pytest.mark.parametrize("name, allowed", [("default", False), ("kube-system", False), ("kube-public", False),
                                           ("kube-node-lease", True), ("team", True)])
async def test_namespace_lifecycle_immortal_namespaces(name, allowed):
    cl = Cluster()
    ns = {"metadata": {"name": name}}
    a = adm.Attributes(adm.DELETE, R.NAMESPACES, None, name, None, ns)
    if allowed:
        await cl.chain().validate(a)
        return
    with pytest.raises(APIError) as e:
        await cl.chain().validate(a)
    assert (e.value.code, e.value.message) == (403, f'namespaces "{name}" is forbidden: this namespace may not be '
                                                     "deleted")


# ----------------------------------------------------------------------------- ServiceAccount, Priority, tolerations

async def test_pod_admission_defaults():
    """What defaults.go's admission=True used to add, now from the plugins (same values)."""
    cl = Cluster()
    p = await admit_and_validate(cl, attrs(pod()))
    s = p["spec"]
    assert s["priority"] == 0
    assert s["serviceAccountName"] == s["serviceAccount"] == "default"
    assert s["preemptionPolicy"] == "PreemptLowerPriority"
    keys = [(t["key"], t["operator"], t["effect"], t["tolerationSeconds"]) for t in s["tolerations"]]
    assert keys == [("node.kubernetes.io/not-ready", "Exists", "NoExecute", 300),
                    ("node.kubernetes.io/unreachable", "Exists", "NoExecute", 300)]


async def test_client_admission_values_are_kept():
    cl = Cluster()
    p = await admit_and_validate(cl, attrs(pod(serviceAccountName="builder", tolerations=[
        {"key": "node.kubernetes.io/not-ready", "operator": "Exists", "effect": "NoExecute",
         "tolerationSeconds": 10}])))
    s = p["spec"]
    assert s["serviceAccount"] == "builder"
    not_ready = [t for t in s["tolerations"] if t["key"] == "node.kubernetes.io/not-ready"]
    assert len(not_ready) == 1 and not_ready[0]["tolerationSeconds"] == 10
    assert any(t["key"] == "node.kubernetes.io/unreachable" for t in s["tolerations"])


@pytest.mark.parametrize("tolerations, added", [
    ([], ["node.kubernetes.io/not-ready", "node.kubernetes.io/unreachable"]),
    ([{"operator": "Exists"}], []),
    ([{"key": "node.kubernetes.io/unreachable", "operator": "Exists", "effect": "NoExecute"}],
     ["node.kubernetes.io/not-ready"]),
    ([{"key": "node.kubernetes.io/not-ready", "operator": "Exists", "effect": "NoSchedule"}],
     ["node.kubernetes.io/not-ready", "node.kubernetes.io/unreachable"]),
], ids=["none", "tolerates everything", "tolerates unreachable", "a NoSchedule toleration does not count"])
def test_default_toleration_seconds(tolerations, added):
    spec = {"tolerations": copy.deepcopy(tolerations)}
    defaulttolerationseconds.add_default_tolerations(spec)
    assert [t["key"] for t in spec["tolerations"][len(tolerations):]] == added


async def test_service_account_token_volume_and_mounts():
    cl = Cluster()
    p = await admit_and_validate(cl, attrs(pod(initContainers=[{"name": "init", "image": "busybox"}])))
    s = p["spec"]
    (vol,) = s["volumes"]
    assert vol["name"].startswith("kube-api-access-") and len(vol["name"]) == len("kube-api-access-") + 5
    assert vol["projected"] == {"defaultMode": 420, "sources": [
        {"serviceAccountToken": {"expirationSeconds": 3607, "path": "token"}},
        {"configMap": {"name": "kube-root-ca.crt", "items": [{"key": "ca.crt", "path": "ca.crt"}]}},
        {"downwardAPI": {"items": [{"path": "namespace",
                                    "fieldRef": {"apiVersion": "v1", "fieldPath": "metadata.namespace"}}]}}]}
    for c in s["containers"] + s["initContainers"]:
        assert c["volumeMounts"] == [{"name": vol["name"], "readOnly": True,
                                      "mountPath": "/var/run/secrets/kubernetes.io/serviceaccount"}]


@pytest.mark.parametrize("pod_says, sa_says, mounted", [
    (None, None, True), (False, None, False), (None, False, False), (True, False, True)],
    ids=["default", "pod opts out", "account opts out", "pod overrides account"])
async def test_service_account_automount(pod_says, sa_says, mounted):
    cl = Cluster()
    sa: dict[str, Any] = {"metadata": {"name": "default", "namespace": "default"}}
    if sa_says is not None:
        sa["automountServiceAccountToken"] = sa_says
    cl.add(R.get("serviceaccounts"), sa)
    extra = {} if pod_says is None else {"automountServiceAccountToken": pod_says}
    p = await admit_and_validate(cl, attrs(pod(**extra)))
    assert bool(p["spec"].get("volumes")) is mounted


def test_service_account_keeps_an_existing_mount():
    spec = {"containers": [{"name": "c", "volumeMounts": [{"name": "mine", "mountPath": serviceaccount.MOUNT_PATH}]},
                           {"name": "d"}]}
    name = serviceaccount.mount_token(spec, random.Random(1))
    assert spec["containers"][0]["volumeMounts"] == [{"name": "mine", "mountPath": serviceaccount.MOUNT_PATH}]
    assert spec["containers"][1]["volumeMounts"][0]["name"] == name


def _pc(name: str, value: int, default: bool = False, policy: str | None = None) -> dict:
    pc = {"apiVersion": "scheduling.k8s.io/v1", "kind": "PriorityClass", "metadata": {"name": name},
          "value": value, "globalDefault": default}
    if policy:
        pc["preemptionPolicy"] = policy
    return pc


async def test_priority_from_class():
    cl = Cluster()
    cl.add(scheduling.PRIORITYCLASSES, _pc("high", 1000, policy="Never"))
    p = await admit_and_validate(cl, attrs(pod(priorityClassName="high")))
    assert (p["spec"]["priority"], p["spec"]["preemptionPolicy"]) == (1000, "Never")


async def test_priority_class_not_found():
    with pytest.raises(APIError) as e:
        await admit_and_validate(Cluster(), attrs(pod(priorityClassName="x")))
    assert (e.value.code, e.value.message) == (403, 'pods "p" is forbidden: no PriorityClass with name x was found')


async def test_priority_global_default():
    cl = Cluster()
    cl.add(scheduling.PRIORITYCLASSES, _pc("low", 10, default=True))
    cl.add(scheduling.PRIORITYCLASSES, _pc("lower", 5, default=True))
    p = await admit_and_validate(cl, attrs(pod()))
    assert (p["spec"]["priorityClassName"], p["spec"]["priority"]) == ("lower", 5)


async def test_priority_integer_must_not_differ():
    with pytest.raises(APIError) as e:
        await admit_and_validate(Cluster(), attrs(pod(priority=7)))
    assert e.value.message == ('pods "p" is forbidden: the integer value of priority (7) must not be provided in '
                               'pod spec; priority admission controller computed 0 from the given PriorityClass name')


async def test_priority_kept_on_update():
    cl = Cluster()
    old = pod(priority=5, preemptionPolicy="Never")
    new = pod()
    a = attrs(new, adm.UPDATE, old=old)
    await cl.chain().admit(a)
    assert (new["spec"]["priority"], new["spec"]["preemptionPolicy"]) == (5, "Never")


async def test_second_global_default_class_is_forbidden():
    cl = Cluster()
    cl.add(scheduling.PRIORITYCLASSES, _pc("a", 10, default=True))
    with pytest.raises(APIError) as e:
        await admit_and_validate(cl, attrs(_pc("b", 20, default=True), resource=scheduling.PRIORITYCLASSES))
    assert e.value.message == ('priorityclasses.scheduling.k8s.io "b" is forbidden: PriorityClass a is already '
                               'marked as default. Only one default can exist')
    await admit_and_validate(cl, attrs(_pc("a", 10, default=True), adm.UPDATE, scheduling.PRIORITYCLASSES))


# ----------------------------------------------------------------------------- RuntimeClass

def _rc(**extra: Any) -> dict:
    return {"apiVersion": "node.k8s.io/v1", "kind": "RuntimeClass", "metadata": {"name": "gvisor"},
            "handler": "runsc", **extra}


async def test_runtime_class_overhead_and_scheduling():
    cl = Cluster()
    cl.add(node.RUNTIMECLASSES, _rc(overhead={"podFixed": {"cpu": "250m", "memory": "120Mi"}},
                                    scheduling={"nodeSelector": {"sandbox": "true"},
                                                "tolerations": [{"key": "sandbox", "operator": "Exists"}]}))
    p = await admit_and_validate(cl, attrs(pod(runtimeClassName="gvisor", nodeSelector={"zone": "a"})))
    s = p["spec"]
    assert s["overhead"] == {"cpu": "250m", "memory": "120Mi"}
    assert s["nodeSelector"] == {"zone": "a", "sandbox": "true"}
    assert {"key": "sandbox", "operator": "Exists"} in s["tolerations"]


@pytest.mark.parametrize("spec, rc, message", [
    ({"runtimeClassName": "nope"}, None, 'pod rejected: RuntimeClass "nope" not found'),
    ({"runtimeClassName": "gvisor", "nodeSelector": {"sandbox": "no"}},
     _rc(scheduling={"nodeSelector": {"sandbox": "true"}}),
     "conflict: runtimeClass.scheduling.nodeSelector[sandbox] = true; pod.spec.nodeSelector[sandbox] = no"),
    ({"overhead": {"cpu": "1"}}, None,
     "pod rejected: Pod Overhead set without corresponding RuntimeClass defined Overhead"),
    ({"runtimeClassName": "gvisor", "overhead": {"cpu": "1"}}, _rc(overhead={"podFixed": {"cpu": "2"}}),
     "pod rejected: Pod's Overhead doesn't match RuntimeClass's defined Overhead"),
    ({"runtimeClassName": "gvisor", "overhead": {"cpu": "1"}}, _rc(),
     "pod rejected: Pod Overhead set without corresponding RuntimeClass defined Overhead"),
], ids=["class not found", "node selector conflict", "overhead without class", "overhead differs",
        "overhead the class lacks"])
async def test_runtime_class_rejections(spec, rc, message):
    cl = Cluster()
    if rc is not None:
        cl.add(node.RUNTIMECLASSES, rc)
    with pytest.raises(APIError) as e:
        await admit_and_validate(cl, attrs(pod(**spec)))
    assert (e.value.code, e.value.message) == (403, f'pods "p" is forbidden: {message}')


# ----------------------------------------------------------------------------- LimitRanger

def _lr(*items: dict) -> dict:
    lr = {"apiVersion": "v1", "kind": "LimitRange", "metadata": {"name": "lr", "namespace": "default"},
          "spec": {"limits": list(items)}}
    apply_defaults("LimitRange", lr)
    return lr


async def test_limit_ranger_defaults_and_annotation():
    cl = Cluster()
    cl.add(core.LIMITRANGES, _lr({"type": "Container", "default": {"cpu": "500m", "memory": "256Mi"},
                                  "defaultRequest": {"cpu": "100m"}}))
    p = await admit_and_validate(cl, attrs(pod(containers=[
        {"name": "nginx", "image": "nginx", "resources": {"limits": {"memory": "128Mi"}}}])))
    res = p["spec"]["containers"][0]["resources"]
    assert res == {"limits": {"memory": "128Mi", "cpu": "500m"}, "requests": {"memory": "128Mi", "cpu": "100m"}}
    assert p["metadata"]["annotations"]["kubernetes.io/limit-ranger"] == \
        "LimitRanger plugin set: cpu request for container nginx; cpu limit for container nginx"


@pytest.mark.parametrize("item, resources, message", [
    ({"type": "Container", "min": {"cpu": "200m"}}, {"requests": {"cpu": "100m"}},
     "minimum cpu usage per Container is 200m, but request is 100m"),
    ({"type": "Container", "max": {"memory": "1Gi"}}, {"limits": {"memory": "2Gi"}},
     "maximum memory usage per Container is 1Gi, but limit is 2Gi"),
    ({"type": "Container", "maxLimitRequestRatio": {"cpu": "2"}}, {"requests": {"cpu": "100m"}, "limits": {"cpu": "1"}},
     "cpu max limit to request ratio per Container is 2, but provided ratio is 10.000000"),
    ({"type": "Pod", "max": {"cpu": "1"}}, {"limits": {"cpu": "2"}},
     "maximum cpu usage per Pod is 1, but limit is 2"),
], ids=["below min", "above max", "ratio", "pod max"])
async def test_limit_ranger_rejections(item, resources, message):
    cl = Cluster()
    cl.add(core.LIMITRANGES, {"metadata": {"name": "lr", "namespace": "default"}, "spec": {"limits": [item]}})
    with pytest.raises(APIError) as e:
        await admit_and_validate(cl, attrs(pod(containers=[{"name": "c", "image": "x", "resources": resources}])))
    assert (e.value.code, e.value.message) == (403, f'pods "p" is forbidden: {message}')


def test_limit_ranger_reports_every_violation():
    lrs = [{"spec": {"limits": [{"type": "Container", "min": {"cpu": "1"}, "max": {"memory": "1Mi"}}]}}]
    p = pod(containers=[{"name": "c", "image": "x"}])
    assert limitranger.check(lrs, p) == ["minimum cpu usage per Container is 1.  No request is specified",
                                         "maximum memory usage per Container is 1Mi.  No limit is specified"]


# ----------------------------------------------------------------------------- ResourceQuota

def _quota(hard: dict, used: dict | None = None) -> dict:
    q: dict[str, Any] = {"apiVersion": "v1", "kind": "ResourceQuota",
                         "metadata": {"name": "q", "namespace": "default"}, "spec": {"hard": hard}}
    if used is not None:
        q["status"] = {"hard": dict(hard), "used": used}
    return q


async def test_quota_exceeded():
    cl = Cluster()
    cl.add(core.RESOURCEQUOTAS, _quota({"pods": "2"}, {"pods": "2"}))
    with pytest.raises(APIError) as e:
        await admit_and_validate(cl, attrs(pod()))
    assert (e.value.code, e.value.message) == (
        403, 'pods "p" is forbidden: exceeded quota: q, requested: pods=1, used: pods=2, limited: pods=2')
    assert cl.store.writes == []


async def test_quota_charged_on_admission():
    cl = Cluster()
    cl.add(core.RESOURCEQUOTAS, _quota({"pods": "3", "requests.cpu": "1"}, {"pods": "1", "requests.cpu": "0"}))
    await admit_and_validate(cl, attrs(pod(containers=[
        {"name": "c", "image": "x", "resources": {"requests": {"cpu": "250m"}}}])))
    q = cl.caches["resourcequotas"].objects[object_key(core.RESOURCEQUOTAS, "default", "q")]
    assert q["status"] == {"hard": {"pods": "3", "requests.cpu": "1"}, "used": {"pods": "2", "requests.cpu": "250m"}}


async def test_quota_not_yet_processed_is_recalculated():
    cl = Cluster()
    cl.add(core.RESOURCEQUOTAS, _quota({"pods": "1"}))
    running = pod("old")
    running["status"]["phase"] = "Running"
    cl.add(PODS, running)
    with pytest.raises(APIError, match="exceeded quota: q, requested: pods=1, used: pods=1, limited: pods=1"):
        await admit_and_validate(cl, attrs(pod()))


async def test_quota_requires_container_requests():
    cl = Cluster()
    cl.add(core.RESOURCEQUOTAS, _quota({"requests.cpu": "1", "limits.memory": "1Gi"}, {}))
    with pytest.raises(APIError) as e:
        await admit_and_validate(cl, attrs(pod(containers=[{"name": "c1", "image": "x"}])))
    assert e.value.message == ('pods "p" is forbidden: failed quota: q: must specify limits.memory for: c1; '
                               'requests.cpu for: c1')


async def test_quota_counts_other_kinds():
    cl = Cluster()
    cl.add(core.RESOURCEQUOTAS, _quota({"configmaps": "1", "count/secrets": "0"}, {"configmaps": "1"}))
    cm = {"apiVersion": "v1", "kind": "ConfigMap", "metadata": {"name": "x", "namespace": "default"}}
    with pytest.raises(APIError, match="requested: configmaps=1, used: configmaps=1, limited: configmaps=1"):
        await admit_and_validate(cl, attrs(cm, resource=R.get("configmaps")))
    sec = {"apiVersion": "v1", "kind": "Secret", "metadata": {"name": "s", "namespace": "default"}}
    with pytest.raises(APIError, match="requested: count/secrets=1, used: count/secrets=0"):
        await admit_and_validate(cl, attrs(sec, resource=R.get("secrets")))


async def test_quota_dry_run_writes_nothing():
    cl = Cluster()
    cl.add(core.RESOURCEQUOTAS, _quota({"pods": "5"}, {"pods": "1"}))
    a = attrs(pod())
    a.dry_run = True
    await admit_and_validate(cl, a)
    assert cl.store.writes == []


# ----------------------------------------------------------------------------- ResourceQuota on updates

def _svc(name: str = "s", type_: str = "ClusterIP", ports: int = 1, **spec: Any) -> dict:
    spec.update({"type": type_, "ports": [{"name": f"p{i}", "port": 80 + i} for i in range(ports)]})
    return {"apiVersion": "v1", "kind": "Service", "metadata": {"name": name, "namespace": "default",
                                                                "resourceVersion": "5"}, "spec": spec}


@pytest.mark.parametrize("svc, want", [
    (_svc(), {"services.nodeports": 0, "services.loadbalancers": 0}),
    (_svc(type_="NodePort", ports=2), {"services.nodeports": 2, "services.loadbalancers": 0}),
    (_svc(type_="LoadBalancer", ports=3), {"services.nodeports": 3, "services.loadbalancers": 1}),
    (_svc(type_="LoadBalancer", ports=2, allocateLoadBalancerNodePorts=False),
     {"services.nodeports": 0, "services.loadbalancers": 1}),
], ids=["cluster ip", "node port", "load balancer", "load balancer without node ports"])
def test_quota_service_usage(svc, want):
    from controlplane import quota
    u = quota.object_usage("services", "", "Service", svc)
    assert {k: int(u[k]) for k in want} == want
    assert u["services"] == 1 and u["count/services"] == 1


async def test_quota_service_type_change_to_load_balancer_exceeded():
    cl = Cluster()
    cl.add(core.RESOURCEQUOTAS, _quota({"services.loadbalancers": "0"}, {"services.loadbalancers": "0"}))
    old = _svc()
    with pytest.raises(APIError) as e:
        await admit_and_validate(cl, attrs(_svc(type_="LoadBalancer"), adm.UPDATE, R.SERVICES, old))
    assert (e.value.code, e.value.message) == (
        403, 'services "s" is forbidden: exceeded quota: q, requested: services.loadbalancers=1, '
             'used: services.loadbalancers=0, limited: services.loadbalancers=0')


async def test_quota_service_type_change_to_node_port_is_charged_its_growth():
    cl = Cluster()
    cl.add(core.RESOURCEQUOTAS, _quota({"services": "5", "services.nodeports": "3"},
                                       {"services": "1", "services.nodeports": "0"}))
    await admit_and_validate(cl, attrs(_svc(type_="NodePort", ports=2), adm.UPDATE, R.SERVICES, _svc(ports=2)))
    q = cl.caches["resourcequotas"].objects[object_key(core.RESOURCEQUOTAS, "default", "q")]
    assert q["status"]["used"] == {"services": "1", "services.nodeports": "2"}   # the count is not charged again


async def test_quota_update_adding_nothing_writes_nothing():
    cl = Cluster()
    cl.add(core.RESOURCEQUOTAS, _quota({"services": "1", "services.nodeports": "1"},
                                       {"services": "1", "services.nodeports": "1"}))
    old = _svc(type_="NodePort")
    await admit_and_validate(cl, attrs(_svc(type_="ClusterIP"), adm.UPDATE, R.SERVICES, old))
    await admit_and_validate(cl, attrs(_svc(type_="NodePort"), adm.UPDATE, R.SERVICES, old))
    assert cl.store.writes == []


async def test_quota_pod_updates_are_not_charged():
    cl = Cluster()
    cl.add(core.RESOURCEQUOTAS, _quota({"pods": "0"}, {"pods": "0"}))
    p = pod()
    await admit_and_validate(cl, attrs(copy.deepcopy(p), adm.UPDATE, PODS, p))
    assert cl.store.writes == []


# ----------------------------------------------------------------------------- DefaultStorageClass

def _sc(name: str, default: bool = False, created: str = "2026-01-01T00:00:00Z", expand: bool | None = None,
        beta: bool = False) -> dict:
    ann = {}
    if default:
        ann["storageclass.beta.kubernetes.io/is-default-class" if beta else
            "storageclass.kubernetes.io/is-default-class"] = "true"
    sc: dict[str, Any] = {"apiVersion": "storage.k8s.io/v1", "kind": "StorageClass", "provisioner": "x",
                          "metadata": {"name": name, "annotations": ann, "creationTimestamp": created}}
    if expand is not None:
        sc["allowVolumeExpansion"] = expand
    return sc


def _pvc(name: str = "c", size: str = "1Gi", phase: str = "Pending", annotations: dict | None = None,
         **spec: Any) -> dict:
    spec.setdefault("accessModes", ["ReadWriteOnce"])
    spec.setdefault("resources", {"requests": {"storage": size}})
    return {"apiVersion": "v1", "kind": "PersistentVolumeClaim",
            "metadata": {"name": name, "namespace": "default", "annotations": annotations or {}},
            "spec": spec, "status": {"phase": phase}}


PVCS = R.get("persistentvolumeclaims")
SCS = R.get("storageclasses", "storage.k8s.io")


@pytest.mark.parametrize("classes, pvc, want", [
    ([], _pvc(), None),
    ([_sc("plain")], _pvc(), None),
    ([_sc("std", default=True)], _pvc(), "std"),
    ([_sc("beta", default=True, beta=True)], _pvc(), "beta"),
    ([_sc("old", True, "2026-01-01T00:00:00Z"), _sc("new", True, "2026-02-01T00:00:00Z")], _pvc(), "new"),
    ([_sc("b", True), _sc("a", True)], _pvc(), "a"),
    ([_sc("std", default=True)], _pvc(storageClassName="fast"), "fast"),
    ([_sc("std", default=True)], _pvc(storageClassName=""), ""),
    ([_sc("std", default=True)], _pvc(annotations={"volume.beta.kubernetes.io/storage-class": "x"}), None),
], ids=["no classes", "no default", "the default", "beta annotation", "newest default wins",
        "same age: smallest name", "class named", "empty class asks for none", "beta claim annotation"])
async def test_default_storage_class(classes, pvc, want):
    cl = Cluster()
    for sc in classes:
        cl.add(SCS, sc)
    out = await admit_and_validate(cl, attrs(pvc, resource=PVCS))
    assert out["spec"].get("storageClassName") == want


async def test_default_storage_class_only_on_create():
    cl = Cluster()
    cl.add(SCS, _sc("std", default=True))
    out = await admit_and_validate(cl, attrs(_pvc(), adm.UPDATE, PVCS, _pvc()))
    assert "storageClassName" not in out["spec"]


# ----------------------------------------------------------------------------- StorageObjectInUseProtection

PVS = R.get("persistentvolumes")


def _pv(name: str = "v", finalizers: list | None = None) -> dict:
    md: dict[str, Any] = {"name": name}
    if finalizers is not None:
        md["finalizers"] = finalizers
    return {"apiVersion": "v1", "kind": "PersistentVolume", "metadata": md,
            "spec": {"capacity": {"storage": "1Gi"}, "accessModes": ["ReadWriteOnce"], "hostPath": {"path": "/x"}}}


@pytest.mark.parametrize("obj, resource, op, want", [
    (_pvc(), PVCS, adm.CREATE, ["kubernetes.io/pvc-protection"]),
    (_pv(), PVS, adm.CREATE, ["kubernetes.io/pv-protection"]),
    (_pv(finalizers=["example.com/keep"]), PVS, adm.CREATE, ["example.com/keep", "kubernetes.io/pv-protection"]),
    (_pv(finalizers=["kubernetes.io/pv-protection"]), PVS, adm.CREATE, ["kubernetes.io/pv-protection"]),
    (_pvc(), PVCS, adm.UPDATE, None),
    (pod(), PODS, adm.CREATE, None),
], ids=["claim created", "volume created", "after the client's finalizers", "not doubled", "not on update",
        "other kinds untouched"])
async def test_storage_object_in_use_protection(obj, resource, op, want):
    cl = Cluster()
    old = copy.deepcopy(obj) if op == adm.UPDATE else None
    out = await admit_and_validate(cl, attrs(obj, op, resource, old))
    assert out["metadata"].get("finalizers") == want


# ----------------------------------------------------------------------------- PersistentVolumeClaimResize

@pytest.mark.parametrize("old, new, classes, message", [
    (_pvc(phase="Bound", storageClassName="x"), _pvc(size="2Gi", storageClassName="x"), [_sc("x", expand=True)],
     None),
    (_pvc(phase="Bound", storageClassName="x"), _pvc(size="1Gi", storageClassName="x"), [], None),
    (_pvc(phase="Bound", storageClassName="x", size="2Gi"), _pvc(storageClassName="x"), [], None),
    (_pvc(storageClassName="x"), _pvc(size="2Gi", storageClassName="x"), [_sc("x", expand=True)],
     "Only bound persistent volume claims can be expanded"),
    (_pvc(phase="Bound", storageClassName="x"), _pvc(size="2Gi", storageClassName="x"), [_sc("x")],
     "only dynamically provisioned pvc can be resized and the storageclass that provisions the pvc must support "
     "resize"),
    (_pvc(phase="Bound", storageClassName="x"), _pvc(size="2Gi", storageClassName="x"), [_sc("x", expand=False)],
     "only dynamically provisioned pvc can be resized"),
    (_pvc(phase="Bound", storageClassName="x"), _pvc(size="2Gi", storageClassName="x"), [],
     "only dynamically provisioned pvc can be resized"),
    (_pvc(phase="Bound"), _pvc(size="2Gi"), [_sc("", expand=True)], "only dynamically provisioned pvc"),
    (_pvc(phase="Bound", annotations={"volume.beta.kubernetes.io/storage-class": "x"}),
     _pvc(size="2Gi", annotations={"volume.beta.kubernetes.io/storage-class": "x"}), [_sc("x", expand=True)], None),
], ids=["grow bound expandable", "same size", "shrink left to validation", "not bound", "class without expansion",
        "expansion false", "class missing", "no class", "beta class annotation"])
async def test_pvc_resize(old, new, classes, message):
    cl = Cluster()
    for sc in classes:
        cl.add(SCS, sc)
    a = attrs(new, adm.UPDATE, PVCS, old)
    if message is None:
        await admit_and_validate(cl, a)
        return
    with pytest.raises(APIError) as e:
        await admit_and_validate(cl, a)
    assert e.value.code == 403
    assert e.value.message.startswith(f'persistentvolumeclaims "c" is forbidden: {message}')


@pytest.mark.parametrize("pvc, want", [
    (_pvc(), {"persistentvolumeclaims": 1, "requests.storage": 1 << 30}),
    (_pvc(storageClassName="fast", size="1.5"), {
        "requests.storage": 2, "fast.storageclass.storage.k8s.io/requests.storage": 2,
        "fast.storageclass.storage.k8s.io/persistentvolumeclaims": 1}),
    ({**_pvc(size="1Gi"), "status": {"phase": "Bound", "allocatedResources": {"storage": "2Gi"}}},
     {"requests.storage": 2 << 30}),
], ids=["no class", "class, rounded up to bytes", "allocated larger"])
def test_quota_claim_usage(pvc, want):
    from controlplane import quota
    u = quota.object_usage("persistentvolumeclaims", "", "PersistentVolumeClaim", pvc)
    assert {k: u[k] for k in want} == want


async def test_quota_claim_growth_is_charged():
    cl = Cluster()
    cl.add(SCS, _sc("x", expand=True))
    cl.add(core.RESOURCEQUOTAS, _quota({"requests.storage": "3Gi"}, {"requests.storage": "2Gi"}))
    old = _pvc(phase="Bound", storageClassName="x")
    with pytest.raises(APIError) as e:
        await admit_and_validate(cl, attrs(_pvc(size="3Gi", phase="Bound", storageClassName="x"), adm.UPDATE,
                                           PVCS, old))
    assert e.value.message == ('persistentvolumeclaims "c" is forbidden: exceeded quota: q, requested: '
                               'requests.storage=2Gi, used: requests.storage=2Gi, limited: requests.storage=3Gi')
    await admit_and_validate(cl, attrs(_pvc(size="2Gi", phase="Bound", storageClassName="x"), adm.UPDATE, PVCS, old))
    q = cl.caches["resourcequotas"].objects[object_key(core.RESOURCEQUOTAS, "default", "q")]
    assert q["status"]["used"] == {"requests.storage": "3Gi"}
