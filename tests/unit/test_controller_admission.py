"""The resourcequota, disruption and root-ca-cert-publisher controllers on the fake API
(pkg/controller/resourcequota, pkg/controller/disruption,
pkg/controller/certificates/rootcacertpublisher)."""

from __future__ import annotations

import pytest

from components.controller_manager.disruption import PDBS, DisruptionController
from components.controller_manager.resourcequota import RESOURCEQUOTAS, ResourceQuotaController
from components.controller_manager.rootcacertpublisher import CONFIGMAPS, RootCACertPublisher, placeholder_ca_pem
from components.controller_manager.testing import fake_context, settle
from controlplane.api.resources import NAMESPACES, PODS, get

REPLICASETS = get("replicasets", "apps")
DEPLOYMENTS = get("deployments", "apps")
NOW = 1_800_000_000.0


def pod(name, ns="default", labels=None, ready=True, phase="Running", owner=None, cpu=None):
    md = {"name": name, "namespace": ns, "labels": labels or {"app": "web"}, "uid": f"uid-{name}"}
    if owner:
        md["ownerReferences"] = [{"apiVersion": "apps/v1", "kind": "ReplicaSet", "name": owner, "uid": "rs",
                                  "controller": True}]
    c = {"name": "c", "image": "x"}
    if cpu:
        c["resources"] = {"requests": {"cpu": cpu}}
    return {"metadata": md, "spec": {"containers": [c]},
            "status": {"phase": phase, "conditions": [{"type": "Ready", "status": "True" if ready else "False"}]}}


# ----------------------------------------------------------------------------- resourcequota

async def test_quota_status_recalculated_and_released():
    client, ctx, _ = fake_context()
    rq = ResourceQuotaController(ctx)
    client.seed(RESOURCEQUOTAS, {"metadata": {"name": "q", "namespace": "default"},
                                 "spec": {"hard": {"pods": "10", "requests.cpu": "2", "count/configmaps": "5"}}})
    client.seed(PODS, pod("a", cpu="500m"))
    client.seed(PODS, pod("b", cpu="250m"))
    client.seed(PODS, pod("done", cpu="1", phase="Succeeded"))
    client.seed(PODS, pod("elsewhere", ns="other", cpu="1"))
    client.seed(CONFIGMAPS, {"metadata": {"name": "cm", "namespace": "default"}})
    await settle(rq)
    q = client.stored(RESOURCEQUOTAS, "q", "default")
    assert q["status"] == {"hard": {"pods": "10", "requests.cpu": "2", "count/configmaps": "5"},
                           "used": {"count/configmaps": "1", "pods": "2", "requests.cpu": "750m"}}
    await client.delete(PODS, "a", "default")
    await settle(rq)
    assert client.stored(RESOURCEQUOTAS, "q", "default")["status"]["used"]["pods"] == "1"


async def test_quota_unchanged_status_is_not_written():
    client, ctx, _ = fake_context()
    rq = ResourceQuotaController(ctx)
    client.seed(RESOURCEQUOTAS, {"metadata": {"name": "q", "namespace": "default"}, "spec": {"hard": {"pods": "1"}},
                                 "status": {"hard": {"pods": "1"}, "used": {"pods": "0"}}})
    await settle(rq)
    assert client.actions("update", "resourcequotas") == []


# ----------------------------------------------------------------------------- disruption

def env_pdb(spec, pods, rs_replicas=None, deployment_replicas=None):
    client, ctx, _ = fake_context(clock=lambda: NOW)
    dc = DisruptionController(ctx)
    if rs_replicas is not None:
        rs = {"metadata": {"name": "web-rs", "namespace": "default", "uid": "rs"}, "spec": {"replicas": rs_replicas}}
        if deployment_replicas is not None:
            rs["metadata"]["ownerReferences"] = [{"kind": "Deployment", "name": "web", "controller": True,
                                                  "apiVersion": "apps/v1", "uid": "d"}]
            client.seed(DEPLOYMENTS, {"metadata": {"name": "web", "namespace": "default", "uid": "d"},
                                      "spec": {"replicas": deployment_replicas}})
        client.seed(REPLICASETS, rs)
    for p in pods:
        client.seed(PODS, p)
    client.seed(PDBS, {"metadata": {"name": "web", "namespace": "default", "generation": 1},
                       "spec": {"selector": {"matchLabels": {"app": "web"}}, **spec}})
    return client, dc


@pytest.mark.parametrize("spec, pods, rs, dep, want", [
    ({"minAvailable": 2}, [pod("a"), pod("b"), pod("c")], None, None, (3, 3, 2, 1)),
    ({"minAvailable": 2}, [pod("a"), pod("b", ready=False)], None, None, (2, 1, 2, 0)),
    ({"maxUnavailable": 1}, [pod(n, owner="web-rs") for n in "abc"], 3, None, (3, 3, 2, 1)),
    ({"minAvailable": "50%"}, [pod(n, owner="web-rs") for n in "abc"], 3, 4, (4, 3, 2, 1)),
    ({"maxUnavailable": "25%"}, [pod(n, owner="web-rs") for n in "ab"], 2, None, (2, 2, 1, 1)),
], ids=["min available integer", "an unready pod", "max unavailable from the replicaset",
        "percentage from the deployment", "percentage rounded up"])
async def test_pdb_status(spec, pods, rs, dep, want):
    client, dc = env_pdb(spec, pods, rs, dep)
    await settle(dc)
    st = client.stored(PDBS, "web", "default")["status"]
    assert (st["expectedPods"], st["currentHealthy"], st["desiredHealthy"], st["disruptionsAllowed"]) == want
    assert st["observedGeneration"] == 1
    cond = st["conditions"][0]
    assert (cond["type"], cond["status"]) == ("DisruptionAllowed", "True" if want[3] else "False")


async def test_pdb_without_controller_fails_sync():
    client, dc = env_pdb({"maxUnavailable": 1}, [pod("a")])
    await settle(dc)
    st = client.stored(PDBS, "web", "default")["status"]
    assert st["disruptionsAllowed"] == 0 and st["conditions"][0]["reason"] == "SyncFailed"
    assert st["conditions"][0]["message"] == "found no controllers for pod 'a'"


async def test_pdb_disrupted_pods_pruned():
    client, dc = env_pdb({"minAvailable": 1}, [pod("a"), pod("b"), pod("old")])
    p = dict(client.stored(PDBS, "web", "default"))
    p["status"] = {"disruptedPods": {"a": "2027-01-15T08:00:00Z", "gone": "2027-01-15T08:00:00Z",
                                     "old": "2020-01-01T00:00:00Z"}}
    st = dc.compute(p, NOW)
    assert st["disruptedPods"] == {"a": "2027-01-15T08:00:00Z"}
    assert st["currentHealthy"] == 2    # a was evicted a moment ago: no longer counted healthy; old timed out


# ----------------------------------------------------------------------------- root-ca-cert-publisher

async def test_root_ca_configmap_published_and_restored():
    client, ctx, _ = fake_context()
    pub = RootCACertPublisher(ctx)
    for ns in ("default", "kube-system"):
        client.seed(NAMESPACES, {"metadata": {"name": ns}, "status": {"phase": "Active"}})
    client.seed(NAMESPACES, {"metadata": {"name": "going", "deletionTimestamp": "2026-01-01T00:00:00Z"},
                             "status": {"phase": "Terminating"}})
    await settle(pub)
    cms = {c["metadata"]["namespace"]: c for c in client.all(CONFIGMAPS)}
    assert set(cms) == {"default", "kube-system"}
    pem = cms["default"]["data"]["ca.crt"]
    assert pem.startswith("-----BEGIN CERTIFICATE-----") and pem == cms["kube-system"]["data"]["ca.crt"]
    assert cms["default"]["metadata"]["annotations"]["kubernetes.io/description"].startswith("Contains a CA bundle")
    changed = dict(cms["default"], data={"ca.crt": "tampered"})
    await client.update(CONFIGMAPS, changed)
    await settle(pub)
    assert client.stored(CONFIGMAPS, "kube-root-ca.crt", "default")["data"]["ca.crt"] == pem
    await client.delete(CONFIGMAPS, "kube-root-ca.crt", "default")
    await settle(pub)
    assert client.stored(CONFIGMAPS, "kube-root-ca.crt", "default")["data"]["ca.crt"] == pem


async def test_root_ca_reused_from_kube_system():
    client, ctx, _ = fake_context()
    pub = RootCACertPublisher(ctx)
    client.seed(CONFIGMAPS, {"metadata": {"name": "kube-root-ca.crt", "namespace": "kube-system"},
                             "data": {"ca.crt": "EXISTING"}})
    client.seed(NAMESPACES, {"metadata": {"name": "kube-system"}, "status": {"phase": "Active"}})
    client.seed(NAMESPACES, {"metadata": {"name": "team"}, "status": {"phase": "Active"}})
    await settle(pub)
    assert client.stored(CONFIGMAPS, "kube-root-ca.crt", "team")["data"]["ca.crt"] == "EXISTING"


async def test_root_ca_file_is_the_published_bundle():
    from components.controller_manager.config import ControllerConfig
    client, ctx, _ = fake_context(ControllerConfig(root_ca="-----BEGIN CERTIFICATE-----\nCLUSTER\n"))
    pub = RootCACertPublisher(ctx)
    client.seed(CONFIGMAPS, {"metadata": {"name": "kube-root-ca.crt", "namespace": "kube-system"},
                             "data": {"ca.crt": "PLACEHOLDER-FROM-BEFORE"}})
    client.seed(NAMESPACES, {"metadata": {"name": "kube-system"}, "status": {"phase": "Active"}})
    client.seed(NAMESPACES, {"metadata": {"name": "team"}, "status": {"phase": "Active"}})
    await settle(pub)
    for ns in ("team", "kube-system"):  # the given CA wins over the one published before
        assert client.stored(CONFIGMAPS, "kube-root-ca.crt", ns)["data"]["ca.crt"] == \
            "-----BEGIN CERTIFICATE-----\nCLUSTER\n"


@pytest.mark.parametrize("content,message", [(None, "No such file"), ("not a certificate", "no PEM certificate")],
                         ids=["missing", "not-pem"])
def test_root_ca_file_errors(tmp_path, content, message):
    from components.controller_manager.cli import read_root_ca
    path = tmp_path / "ca.crt"
    if content is not None:
        path.write_text(content)
    with pytest.raises(ValueError, match=message):
        read_root_ca(str(path))
    assert read_root_ca("") == ""


def test_placeholder_ca_is_a_ca_certificate():
    from cryptography import x509
    cert = x509.load_pem_x509_certificate(placeholder_ca_pem().encode())
    assert cert.extensions.get_extension_for_class(x509.BasicConstraints).value.ca
    assert cert.subject.rfc4514_string() == "CN=controlplane-placeholder-ca"
