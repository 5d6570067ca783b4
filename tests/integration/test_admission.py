"""Admission with real processes and the real kubectl: what kube-apiserver's default plugins
and the controller-manager's resourcequota, disruption and root-ca-cert-publisher
controllers do, seen as a user sees it.

Processes: our etcd (memory only), the apiserver, the controller-manager, the scheduler and
one kubelet (node01). kubectl runs with its own ``--cache-dir``; waits are kubectl's own
``wait`` (``--for=create``, ``--for=jsonpath``) with timeouts.
"""

from __future__ import annotations

import os
import re
import subprocess

import pytest

from tests.integration.conftest import KUBECTL, spawn, start_apiserver, stop

pytestmark = pytest.mark.integration

MOUNT = "/var/run/secrets/kubernetes.io/serviceaccount"


class Env:
    def __init__(self, tmp: str) -> None:
        self.tmp = tmp
        self.procs: list[subprocess.Popen] = []
        etcd, out = spawn("etcd", "--listen-client-urls", "http://127.0.0.1:0", "--data-dir", "")
        self.procs.append(etcd)
        etcd_url = re.search(r"listen=(\S+)", out.wait_for("etcd.ready", 30)).group(1)
        api, _, self.server = start_apiserver(etcd_url)
        self.procs.append(api)
        cm, cm_out = spawn("controller-manager", "--master", self.server)
        self.procs.append(cm)
        sched, s_out = spawn("scheduler", "--master", self.server)
        self.procs.append(sched)
        k, k_out = spawn("kubelet", "--master", self.server, "--node-name", "node01")
        self.procs.append(k)
        cm_out.wait_for("controller-manager.synced", 60)
        s_out.wait_for("scheduler.started", 30)
        k_out.wait_for("kubelet.nodes_registered", 30)

    def kubectl(self, *args: str, input: str | None = None, check: bool = True,
                timeout: float = 90) -> subprocess.CompletedProcess:
        p = subprocess.run([KUBECTL, "--server", self.server, "--cache-dir", os.path.join(self.tmp, "kube-cache"),
                            *args], input=input, capture_output=True, text=True, timeout=timeout)
        if check and p.returncode != 0:
            raise AssertionError(f"kubectl {' '.join(args)}: {p.stdout}{p.stderr}")
        return p

    def jsonpath(self, kind: str, name: str, path: str, ns: str = "default") -> str:
        return self.kubectl("get", kind, name, "-n", ns, "-o", f"jsonpath={path}").stdout


@pytest.fixture(scope="module")
def env(tmp_path_factory):
    e = Env(str(tmp_path_factory.mktemp("admission")))
    yield e
    for p in reversed(e.procs):
        stop(p)


def pod(name: str, ns: str = "default", spec: str = "", resources: str = "") -> str:
    return (f"apiVersion: v1\nkind: Pod\nmetadata: {{name: {name}, namespace: {ns}}}\nspec:\n{spec}"
            f"  containers:\n  - name: c\n    image: nginx:1.27\n{resources}")


def test_pod_gets_the_service_account_token_volume(env: Env):
    env.kubectl("apply", "-f", "-", input=pod("sa-pod"))
    vol = env.jsonpath("pod", "sa-pod", "{.spec.volumes[0].name}")
    assert re.fullmatch(r"kube-api-access-[bcdfghjklmnpqrstvwxz2456789]{5}", vol), vol
    assert env.jsonpath("pod", "sa-pod", "{.spec.volumes[0].projected.sources[0].serviceAccountToken."
                                         "expirationSeconds}") == "3607"
    assert env.jsonpath("pod", "sa-pod", "{.spec.volumes[0].projected.sources[1].configMap.name}") == \
        "kube-root-ca.crt"
    mount = env.jsonpath("pod", "sa-pod", "{.spec.containers[0].volumeMounts[0]}")
    assert f'"mountPath":"{MOUNT}"' in mount and f'"name":"{vol}"' in mount and '"readOnly":true' in mount
    assert env.jsonpath("pod", "sa-pod", "{.spec.serviceAccountName}") == "default"
    desc = env.kubectl("describe", "pod", "sa-pod").stdout
    assert f"{MOUNT} from {vol} (ro)" in desc
    assert "Projected (a volume that contains injected data from multiple sources)" in desc
    assert "ConfigMapName:           kube-root-ca.crt" in desc


def test_root_ca_configmap_in_every_namespace(env: Env):
    env.kubectl("create", "namespace", "fresh")
    env.kubectl("wait", "--for=create", "configmap/kube-root-ca.crt", "-n", "fresh", "--timeout=30s")
    out = env.kubectl("get", "cm", "kube-root-ca.crt", "-n", "fresh").stdout
    assert out.split("\n")[0].split() == ["NAME", "DATA", "AGE"] and out.split("\n")[1].split()[:2] == \
        ["kube-root-ca.crt", "1"]
    pem = env.jsonpath("cm", "kube-root-ca.crt", "{.data.ca\\.crt}", ns="fresh")
    assert pem.startswith("-----BEGIN CERTIFICATE-----")
    assert pem == env.jsonpath("cm", "kube-root-ca.crt", "{.data.ca\\.crt}", ns="kube-system")


def test_limit_range_default_applied(env: Env):
    env.kubectl("create", "namespace", "limited")
    env.kubectl("apply", "-f", "-", input=(
        "apiVersion: v1\nkind: LimitRange\nmetadata: {name: lr, namespace: limited}\nspec:\n  limits:\n"
        "  - type: Container\n    default: {cpu: 500m, memory: 256Mi}\n    defaultRequest: {cpu: 100m}\n"
        "    max: {cpu: '1'}\n"))
    env.kubectl("apply", "-f", "-", input=pod("lr-pod", "limited"))
    assert env.jsonpath("pod", "lr-pod", "{.spec.containers[0].resources.limits.cpu}", "limited") == "500m"
    assert env.jsonpath("pod", "lr-pod", "{.spec.containers[0].resources.requests.cpu}", "limited") == "100m"
    assert env.jsonpath("pod", "lr-pod", "{.metadata.annotations.kubernetes\\.io/limit-ranger}", "limited") == \
        "LimitRanger plugin set: cpu, memory request for container c; cpu, memory limit for container c"
    r = env.kubectl("apply", "-f", "-", check=False, input=pod(
        "big", "limited", resources="    resources: {limits: {cpu: '2'}}\n"))
    assert r.returncode == 1
    assert 'pods "big" is forbidden: maximum cpu usage per Container is 1, but limit is 2' in r.stderr


def test_quota_exceeded(env: Env):
    env.kubectl("create", "namespace", "quota")
    env.kubectl("apply", "-f", "-", input="apiVersion: v1\nkind: ResourceQuota\nmetadata: {name: q, namespace: "
                                         "quota}\nspec:\n  hard: {pods: '1'}\n")
    env.kubectl("apply", "-f", "-", input=pod("one", "quota"))
    r = env.kubectl("apply", "-f", "-", check=False, input=pod("two", "quota"))
    assert r.returncode == 1
    assert ('Error from server (Forbidden): error when creating "STDIN": pods "two" is forbidden: exceeded quota: '
            "q, requested: pods=1, used: pods=1, limited: pods=1") in r.stderr
    env.kubectl("wait", "--for=jsonpath={.status.used.pods}=1", "resourcequota/q", "-n", "quota", "--timeout=30s")
    row = env.kubectl("get", "quota", "q", "-n", "quota").stdout.splitlines()[1]
    assert "pods: 1/1" in row
    # a deletion gives the usage back (the controller's recalculation)
    env.kubectl("delete", "pod", "one", "-n", "quota", "--grace-period=0", "--force")
    env.kubectl("wait", "--for=jsonpath={.status.used.pods}=0", "resourcequota/q", "-n", "quota", "--timeout=30s")


def test_priority_class_resolved(env: Env):
    pcs = env.kubectl("get", "pc").stdout
    assert re.search(r"system-node-critical\s+2000001000\s+false", pcs)
    r = env.kubectl("delete", "pc", "system-node-critical", check=False)
    assert r.returncode == 1 and "this is a system priority class and cannot be deleted" in r.stderr
    env.kubectl("apply", "-f", "-", input="apiVersion: scheduling.k8s.io/v1\nkind: PriorityClass\n"
                                         "metadata: {name: high}\nvalue: 1000\npreemptionPolicy: Never\n")
    env.kubectl("apply", "-f", "-", input=pod("prio", spec="  priorityClassName: high\n"))
    assert env.jsonpath("pod", "prio", "{.spec.priority} {.spec.preemptionPolicy}") == "1000 Never"
    r = env.kubectl("apply", "-f", "-", check=False, input=pod("noclass", spec="  priorityClassName: nope\n"))
    assert 'pods "noclass" is forbidden: no PriorityClass with name nope was found' in r.stderr


def test_runtime_class_overhead(env: Env):
    env.kubectl("apply", "-f", "-", input="apiVersion: node.k8s.io/v1\nkind: RuntimeClass\nmetadata: {name: kata}\n"
                                         "handler: kata\noverhead:\n  podFixed: {cpu: 250m, memory: 160Mi}\n")
    assert env.kubectl("get", "runtimeclass", "kata").stdout.splitlines()[1].split()[:2] == ["kata", "kata"]
    env.kubectl("apply", "-f", "-", input=pod("sandboxed", spec="  runtimeClassName: kata\n"))
    assert env.jsonpath("pod", "sandboxed", "{.spec.overhead.cpu} {.spec.overhead.memory}") == "250m 160Mi"


def test_drain_blocked_by_pdb(env: Env):
    env.kubectl("create", "deployment", "web", "--image=nginx:1.27", "--replicas=1")
    env.kubectl("apply", "-f", "-", input="apiVersion: policy/v1\nkind: PodDisruptionBudget\n"
                                         "metadata: {name: web}\nspec:\n  minAvailable: 1\n"
                                         "  selector: {matchLabels: {app: web}}\n")
    env.kubectl("wait", "--for=condition=Available", "deployment/web", "--timeout=60s")
    env.kubectl("wait", "--for=jsonpath={.status.currentHealthy}=1", "pdb/web", "--timeout=30s")
    row = env.kubectl("get", "pdb", "web").stdout.splitlines()
    assert row[0].split() == ["NAME", "MIN", "AVAILABLE", "MAX", "UNAVAILABLE", "ALLOWED", "DISRUPTIONS", "AGE"]
    assert row[1].split()[:4] == ["web", "1", "N/A", "0"]
    r = env.kubectl("drain", "node01", "--pod-selector=app=web", "--timeout=4s", check=False)
    assert r.returncode != 0
    assert "Cannot evict pod as it would violate the pod's disruption budget." in r.stderr
    env.kubectl("uncordon", "node01")
    assert env.jsonpath("deployment", "web", "{.status.availableReplicas}") == "1"
