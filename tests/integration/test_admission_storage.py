"""The storage admission plugins and ResourceQuota on updates, with real processes and the
real kubectl: DefaultStorageClass (a claim without a class gets the default one),
PersistentVolumeClaimResize (growing a bound claim only when its class allows expansion)
and ResourceQuota charging a Service's type change (``services.loadbalancers``,
``services.nodeports``), as a user sees them from kubectl.

Processes: our etcd (memory only) and the apiserver: admission needs nothing else (a quota
the controller has not processed yet is charged from a recalculation, as in Kubernetes).
Each kubectl runs with this module's own ``--cache-dir``.
"""

from __future__ import annotations

import os
import re
import subprocess

import pytest

from tests.integration.conftest import KUBECTL, spawn, start_apiserver, stop

pytestmark = pytest.mark.integration

CLASSES = """\
apiVersion: storage.k8s.io/v1
kind: StorageClass
metadata:
  name: standard
  annotations: {storageclass.kubernetes.io/is-default-class: "true"}
provisioner: example.com/standard
allowVolumeExpansion: true
---
apiVersion: storage.k8s.io/v1
kind: StorageClass
metadata: {name: fixed}
provisioner: example.com/fixed
"""


def claim(name: str, class_line: str = "", size: str = "1Gi") -> str:
    return (f"apiVersion: v1\nkind: PersistentVolumeClaim\nmetadata: {{name: {name}}}\nspec:\n"
            f"  accessModes: [ReadWriteOnce]\n  resources: {{requests: {{storage: {size}}}}}\n{class_line}")


class Env:
    def __init__(self, tmp: str) -> None:
        self.tmp = tmp
        self.procs: list[subprocess.Popen] = []
        etcd, out = spawn("etcd", "--listen-client-urls", "http://127.0.0.1:0", "--data-dir", "")
        self.procs.append(etcd)
        etcd_url = re.search(r"listen=(\S+)", out.wait_for("etcd.ready", 30)).group(1)
        api, _, self.server = start_apiserver(etcd_url)
        self.procs.append(api)

    def kubectl(self, *args: str, input: str | None = None, check: bool = True) -> subprocess.CompletedProcess:
        p = subprocess.run([KUBECTL, "--server", self.server, "--cache-dir", os.path.join(self.tmp, "kube-cache"),
                            *args], input=input, capture_output=True, text=True, timeout=60)
        if check and p.returncode != 0:
            raise AssertionError(f"kubectl {' '.join(args)}: {p.stdout}{p.stderr}")
        return p

    def jsonpath(self, kind: str, name: str, path: str) -> str:
        return self.kubectl("get", kind, name, "-o", f"jsonpath={path}").stdout

    def bind(self, name: str) -> None:
        """Mark the claim Bound, as the PV controller would (its status subresource)."""
        self.kubectl("patch", "pvc", name, "--subresource=status", "--type=merge",
                     "-p", '{"status":{"phase":"Bound"}}')


@pytest.fixture(scope="module")
def env(tmp_path_factory):
    e = Env(str(tmp_path_factory.mktemp("admission-storage")))
    e.kubectl("apply", "-f", "-", input=CLASSES)
    yield e
    for p in reversed(e.procs):
        stop(p)


@pytest.mark.parametrize("name, class_line, want", [
    ("no-class", "", "standard"),
    ("named", "  storageClassName: fixed\n", "fixed"),
    ("empty", '  storageClassName: ""\n', ""),
], ids=["defaulted", "class named", "empty asks for none"])
def test_default_storage_class(env: Env, name, class_line, want):
    env.kubectl("apply", "-f", "-", input=claim(name, class_line))
    assert env.jsonpath("pvc", name, "{.spec.storageClassName}") == want


def test_bound_claim_of_an_expandable_class_grows(env: Env):
    env.kubectl("apply", "-f", "-", input=claim("grows"))
    env.bind("grows")
    out = env.kubectl("patch", "pvc", "grows", "-p", '{"spec":{"resources":{"requests":{"storage":"2Gi"}}}}')
    assert out.stdout.strip() == "persistentvolumeclaim/grows patched"
    assert env.jsonpath("pvc", "grows", "{.spec.resources.requests.storage}") == "2Gi"


def test_claim_of_a_class_without_expansion_cannot_grow(env: Env):
    env.kubectl("apply", "-f", "-", input=claim("stuck", "  storageClassName: fixed\n"))
    env.bind("stuck")
    out = env.kubectl("patch", "pvc", "stuck", "-p", '{"spec":{"resources":{"requests":{"storage":"2Gi"}}}}',
                      check=False)
    assert out.returncode == 1
    assert out.stderr.strip() == (
        'Error from server (Forbidden): persistentvolumeclaims "stuck" is forbidden: only dynamically provisioned '
        "pvc can be resized and the storageclass that provisions the pvc must support resize")
    assert env.jsonpath("pvc", "stuck", "{.spec.resources.requests.storage}") == "1Gi"


def test_quota_charges_a_service_type_change(env: Env):
    env.kubectl("create", "namespace", "quota-svc")
    ns = ("-n", "quota-svc")
    env.kubectl("create", "quota", "q", "--hard=services.loadbalancers=0,services.nodeports=1", *ns)
    env.kubectl("create", "service", "clusterip", "s1", "--tcp=80:80", *ns)
    out = env.kubectl("patch", "service", "s1", "-p", '{"spec":{"type":"LoadBalancer"}}', *ns, check=False)
    assert out.returncode == 1
    assert out.stderr.strip() == (
        'Error from server (Forbidden): services "s1" is forbidden: exceeded quota: q, requested: '
        "services.loadbalancers=1, used: services.loadbalancers=0, limited: services.loadbalancers=0")
    out = env.kubectl("patch", "service", "s1", "-p", '{"spec":{"type":"NodePort"}}', *ns)
    assert out.stdout.strip() == "service/s1 patched"
    assert env.kubectl("get", "quota", "q", *ns, "-o", "jsonpath={.status.used}").stdout == \
        '{"services.loadbalancers":"0","services.nodeports":"1"}'
    out = env.kubectl("create", "service", "nodeport", "s2", "--tcp=81:81", *ns, check=False)
    assert out.returncode == 1
    assert out.stderr.strip() == (
        'error: failed to create NodePort service: services "s2" is forbidden: exceeded quota: q, requested: '
        "services.nodeports=1, used: services.nodeports=1, limited: services.nodeports=1")
