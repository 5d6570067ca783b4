"""The real kubectl (/usr/bin/kubectl v1.32) against the networking, storage, core PV/PVC,
certificates, flowcontrol and admissionregistration kinds of `python -m controlplane apiserver`."""

from __future__ import annotations

import json
import os
import re
import subprocess

import pytest

from controlplane.api.resources import REGISTRY
from controlplane.storage import testing
from tests.integration.conftest import apiserver_on_test_etcd

pytestmark = [pytest.mark.integration,
              pytest.mark.skipif(not (testing.available() and os.path.exists("/usr/bin/kubectl")),
                                 reason="needs /usr/bin/etcd and /usr/bin/kubectl")]

CSR = "LS0tLS1CRUdJTiBDRVJUSUZJQ0FURSBSRVFVRVNULS0tLS0KTUlIS01ISUNBUUF3RURFT01Bd0dBMVVFQXd3RllXeHBZMlV3V1RBVEJnY3Foa2pPUFFJQkJnZ3Foa2pPUFFNQgpCd05DQUFRWTBJVGN3d3RaaHl5TWwzNWxBNENQVytMZ1hHNU9Bay95ZVYydFF3cmtYclNFdUJhS1RKeU5ZVE9UCmlmRnRLaTg4VzE2SXJ3TnRsV2ZHWm95R3VmSC9vQUF3Q2dZSUtvWkl6ajBFQXdJRFNBQXdSUUloQUtBODhTSDUKV21ZNXorcFJzSCswUkw1THRZRTNEb0FlTEZmU0lFMWdxdW91QWlBR3pGVy9Bc1dDWEVZODVQOVZwNDZsZHlNbQo4TTNTY1hyV09FMy93ZkFUREE9PQotLS0tLUVORCBDRVJUSUZJQ0FURSBSRVFVRVNULS0tLS0K"

NETWORKING = """\
apiVersion: networking.k8s.io/v1
kind: IngressClass
metadata:
  name: nginx
spec:
  controller: k8s.io/ingress-nginx
---
apiVersion: networking.k8s.io/v1
kind: Ingress
metadata:
  name: web
spec:
  ingressClassName: nginx
  rules:
  - host: web.example.com
    http:
      paths:
      - path: /
        pathType: Prefix
        backend:
          service:
            name: web
            port:
              number: 80
---
apiVersion: networking.k8s.io/v1
kind: NetworkPolicy
metadata:
  name: db
spec:
  podSelector:
    matchLabels:
      app: db
  ingress:
  - ports:
    - port: 5432
      protocol: TCP
"""

STORAGE = """\
apiVersion: storage.k8s.io/v1
kind: StorageClass
metadata:
  name: fast
provisioner: example.com/disk
parameters:
  type: ssd
---
apiVersion: v1
kind: PersistentVolume
metadata:
  name: pv1
spec:
  capacity:
    storage: 1Gi
  accessModes: [ReadWriteOnce]
  storageClassName: fast
  hostPath:
    path: /data/pv1
---
apiVersion: v1
kind: PersistentVolumeClaim
metadata:
  name: claim
spec:
  accessModes: [ReadWriteOnce]
  storageClassName: fast
  resources:
    requests:
      storage: 1Gi
"""

DEPLOYMENT = """\
apiVersion: apps/v1
kind: Deployment
metadata:
  name: web
  labels: {app: x}
spec:
  replicas: 1
  selector: {matchLabels: {app: x}}
  template:
    metadata: {labels: {app: x}}
    spec:
      containers: [{name: web, image: nginx:1.27}]
"""

PVC = """\
apiVersion: v1
kind: PersistentVolumeClaim
metadata:
  name: data
  labels: {app: x}
spec:
  accessModes: [ReadWriteOnce]
  resources: {requests: {storage: 1Gi}}
"""

CSR_YAML = f"""\
apiVersion: certificates.k8s.io/v1
kind: CertificateSigningRequest
metadata:
  name: alice
spec:
  request: {CSR}
  signerName: kubernetes.io/kube-apiserver-client
  expirationSeconds: 86400
  usages: [client auth]
"""

WEBHOOK = """\
apiVersion: admissionregistration.k8s.io/v1
kind: ValidatingWebhookConfiguration
metadata:
  name: check
webhooks:
- name: check.example.com
  sideEffects: None
  admissionReviewVersions: [v1]
  clientConfig:
    url: https://hook.example.com/validate
  rules:
  - operations: [CREATE]
    apiGroups: [""]
    apiVersions: [v1]
    resources: [pods]
"""


@pytest.fixture(scope="module")
def cluster(tmp_path_factory):
    # no controller-manager runs here to take the pvc-protection finalizer off a deleted claim
    with apiserver_on_test_etcd(tmp_path_factory.mktemp("groups"),
                                "--disable-admission-plugins=StorageObjectInUseProtection") as c:
        yield c


def kubectl(c, *args, stdin=None, ok=True):
    env = {**os.environ, "HOME": str(c["dir"])}
    p = subprocess.run(["/usr/bin/kubectl", "--kubeconfig", c["kubeconfig"], "--cache-dir",
                        str(c["dir"] / "cache"), *args], input=stdin, capture_output=True, text=True,
                       timeout=60, env=env)
    if ok:
        assert p.returncode == 0, f"kubectl {' '.join(args)}: {p.stdout}{p.stderr}"
    return p


def table(out: str) -> list[list[str]]:
    """kubectl's table output as cells (split on 2+ spaces, as columns are padded)."""
    return [re.split(r"\s{2,}", line.strip()) for line in out.strip().splitlines()]


def no_age(rows):
    """The rows without their last cell (AGE, the last column; empty cells are not seen)."""
    assert rows[0][-1] == "AGE"
    return [r[:-1] for r in rows]


def test_networking_kinds_apply_and_print(cluster):
    r = kubectl(cluster, "apply", "-f", "-", stdin=NETWORKING)
    assert r.stdout.splitlines() == ["ingressclass.networking.k8s.io/nginx created",
                                     "ingress.networking.k8s.io/web created",
                                     "networkpolicy.networking.k8s.io/db created"]
    assert kubectl(cluster, "apply", "-f", "-", stdin=NETWORKING).stdout.splitlines() == [
        "ingressclass.networking.k8s.io/nginx unchanged", "ingress.networking.k8s.io/web unchanged",
        "networkpolicy.networking.k8s.io/db unchanged"]
    assert no_age(table(kubectl(cluster, "get", "ingress").stdout)) == [
        ["NAME", "CLASS", "HOSTS", "ADDRESS", "PORTS"], ["web", "nginx", "web.example.com", "80"]]
    assert no_age(table(kubectl(cluster, "get", "ingressclass").stdout)) == [
        ["NAME", "CONTROLLER", "PARAMETERS"], ["nginx", "k8s.io/ingress-nginx", "<none>"]]
    assert no_age(table(kubectl(cluster, "get", "netpol").stdout)) == [["NAME", "POD-SELECTOR"], ["db", "app=db"]]
    r = kubectl(cluster, "explain", "ingress.spec.rules.http.paths.backend.service.port")
    assert "FIELD: port" in r.stdout and "number" in r.stdout
    for path in ("pvc.spec.resources.requests", "csr.status.conditions.type", "sc.allowedTopologies",
                 "flowschema.spec.rules.subjects.serviceAccount.namespace", "pv.spec.csi.volumeHandle", "pv.spec.iscsi.portals",
                 "validatingwebhookconfiguration.webhooks.clientConfig.service.port",
                 "endpointslice.endpoints.conditions.ready", "netpol.spec.ingress.from.ipBlock.cidr"):
        assert "FIELD:" in kubectl(cluster, "explain", path).stdout, path


def test_kubectl_create_ingress(cluster):
    # a typed client: the Ingress is sent as protobuf
    r = kubectl(cluster, "create", "ingress", "simple", "--class=nginx", "--rule=foo.com/bar*=svc1:8080,tls=my-cert",
                "--default-backend=defsvc:http")
    assert r.stdout.strip() == "ingress.networking.k8s.io/simple created"
    r = kubectl(cluster, "get", "ingress", "simple", "-o", "json")
    spec = json.loads(r.stdout)["spec"]
    assert spec == {"ingressClassName": "nginx",
                    "defaultBackend": {"service": {"name": "defsvc", "port": {"name": "http"}}},
                    "rules": [{"host": "foo.com", "http": {"paths": [{"path": "/bar", "pathType": "Prefix", "backend": {
                        "service": {"name": "svc1", "port": {"number": 8080}}}}]}}],
                    "tls": [{"hosts": ["foo.com"], "secretName": "my-cert"}]}
    assert no_age(table(kubectl(cluster, "get", "ingress", "simple").stdout)) == [
        ["NAME", "CLASS", "HOSTS", "ADDRESS", "PORTS"], ["simple", "nginx", "foo.com", "80, 443"]]


def test_invalid_ingress_is_refused_as_kubernetes_words_it(cluster):
    bad = NETWORKING.split("---")[1].replace("pathType: Prefix", "pathType: Regex").replace("name: web", "name: bad", 1)
    r = kubectl(cluster, "apply", "-f", "-", stdin=bad, ok=False)
    assert r.returncode == 1
    assert ('The Ingress "bad" is invalid: spec.rules[0].http.paths[0].pathType: Unsupported value: "Regex": '
            'supported values: "Exact", "ImplementationSpecific", "Prefix"') in r.stderr


def test_storage_kinds_apply_and_print(cluster):
    r = kubectl(cluster, "apply", "-f", "-", stdin=STORAGE)
    assert r.stdout.splitlines() == ["storageclass.storage.k8s.io/fast created", "persistentvolume/pv1 created",
                                     "persistentvolumeclaim/claim created"]
    assert no_age(table(kubectl(cluster, "get", "sc").stdout)) == [
        ["NAME", "PROVISIONER", "RECLAIMPOLICY", "VOLUMEBINDINGMODE", "ALLOWVOLUMEEXPANSION"],
        ["fast", "example.com/disk", "Delete", "Immediate", "false"]]
    rows = table(kubectl(cluster, "get", "pv").stdout)
    assert rows[0] == ["NAME", "CAPACITY", "ACCESS MODES", "RECLAIM POLICY", "STATUS", "CLAIM", "STORAGECLASS",
                       "VOLUMEATTRIBUTESCLASS", "REASON", "AGE"]
    assert rows[1][:5] == ["pv1", "1Gi", "RWO", "Retain", "Pending"] and rows[1][5:7] == ["fast", "<unset>"]
    assert no_age(table(kubectl(cluster, "get", "pvc").stdout)) == [
        ["NAME", "STATUS", "VOLUME", "CAPACITY", "ACCESS MODES", "STORAGECLASS", "VOLUMEATTRIBUTESCLASS"],
        ["claim", "Pending", "fast", "<unset>"]]
    r = kubectl(cluster, "patch", "sc", "fast", "-p", '{"parameters": {"type": "hdd"}}', ok=False)
    assert 'The StorageClass "fast" is invalid: parameters: Forbidden: updates to parameters are forbidden.' in r.stderr


@pytest.mark.parametrize("what", ["ingress/web", "ingressclass/nginx", "netpol/db", "sc/fast", "pv/pv1",
                                  "pvc/claim", "flowschema/global-default", "prioritylevelconfiguration/system"])
def test_describe(cluster, what):
    r = kubectl(cluster, "describe", what)
    assert r.stdout.startswith("Name:") and what.split("/")[1] in r.stdout.splitlines()[0]


def test_apply_prune_removes_a_pvc(cluster):
    d = cluster["dir"] / "app"
    d.mkdir()
    (d / "deploy.yaml").write_text(DEPLOYMENT)
    (d / "pvc.yaml").write_text(PVC)
    # kubectl's default prune list names batch/v1 Job and CronJob: served once batch lands, until then the
    # two kinds of this directory are listed explicitly
    allow = [] if REGISTRY.lookup("batch", "v1", "jobs") else [
        "--prune-allowlist=core/v1/PersistentVolumeClaim", "--prune-allowlist=apps/v1/Deployment"]
    r = kubectl(cluster, "apply", "--prune", "-l", "app=x", *allow, "-f", str(d))
    assert sorted(r.stdout.splitlines()) == ["deployment.apps/web created", "persistentvolumeclaim/data created"]
    (d / "pvc.yaml").unlink()
    r = kubectl(cluster, "apply", "--prune", "-l", "app=x", *allow, "-f", str(d))
    assert r.stdout.splitlines() == ["deployment.apps/web unchanged", "persistentvolumeclaim/data pruned"]
    assert kubectl(cluster, "get", "pvc", "data", ok=False).returncode == 1


def test_certificate_approve(cluster):
    assert kubectl(cluster, "apply", "-f", "-", stdin=CSR_YAML).stdout.strip() == \
        "certificatesigningrequest.certificates.k8s.io/alice created"
    rows = table(kubectl(cluster, "get", "csr").stdout)
    assert rows[0] == ["NAME", "AGE", "SIGNERNAME", "REQUESTOR", "REQUESTEDDURATION", "CONDITION"]
    # the requestor is the authenticated user (the session kubeconfig's admin certificate)
    assert rows[1][2:] == ["kubernetes.io/kube-apiserver-client", "kubernetes-admin", "24h", "Pending"]
    r = kubectl(cluster, "certificate", "approve", "alice")
    assert r.stdout.strip() == "certificatesigningrequest.certificates.k8s.io/alice approved"
    assert table(kubectl(cluster, "get", "csr", "alice").stdout)[1][-1] == "Approved"
    r = kubectl(cluster, "get", "csr", "alice", "-o", "jsonpath={.status.conditions[0].reason}")
    assert r.stdout == "KubectlApprove"
    r = kubectl(cluster, "get", "csr", "--field-selector", "spec.signerName=kubernetes.io/kube-apiserver-client",
                "-o", "name")
    assert r.stdout.split() == ["certificatesigningrequest.certificates.k8s.io/alice"]


def test_flowschemas_are_listed(cluster):
    rows = table(kubectl(cluster, "get", "flowschemas").stdout)
    assert rows[0] == ["NAME", "PRIORITYLEVEL", "MATCHINGPRECEDENCE", "DISTINGUISHERMETHOD", "AGE", "MISSINGPL"]
    assert [r[0] for r in rows[1:3]] == ["exempt", "probes"]      # by matchingPrecedence, as printFlowSchemaList
    by = {r[0]: r for r in rows[1:]}
    assert by["exempt"][1:4] == ["exempt", "1", "<none>"] and by["exempt"][-1] == "False"
    assert by["global-default"][1:4] == ["global-default", "9900", "ByUser"]
    rows = table(kubectl(cluster, "get", "prioritylevelconfigurations").stdout)
    assert rows[0] == ["NAME", "TYPE", "NOMINALCONCURRENCYSHARES", "QUEUES", "HANDSIZE", "QUEUELENGTHLIMIT", "AGE"]
    assert {r[0]: r[1:6] for r in rows[1:]}["workload-low"] == ["Limited", "100", "128", "6", "50"]


def test_webhook_configuration_is_stored_with_a_warning(cluster):
    r = kubectl(cluster, "apply", "-f", "-", stdin=WEBHOOK)
    assert r.stdout.strip() == "validatingwebhookconfiguration.admissionregistration.k8s.io/check created"
    assert "Warning: admission webhooks are stored but not called by this apiserver" in r.stderr
    assert no_age(table(kubectl(cluster, "get", "validatingwebhookconfigurations").stdout)) == [
        ["NAME", "WEBHOOKS"], ["check", "1"]]


def test_api_resources_lists_the_new_kinds(cluster):
    rows = {r[0]: r for r in table(kubectl(cluster, "api-resources").stdout)[1:]}
    assert rows["storageclasses"] == ["storageclasses", "sc", "storage.k8s.io/v1", "false", "StorageClass"]
    assert rows["persistentvolumeclaims"] == ["persistentvolumeclaims", "pvc", "v1", "true", "PersistentVolumeClaim"]
    assert rows["persistentvolumes"] == ["persistentvolumes", "pv", "v1", "false", "PersistentVolume"]
    assert rows["certificatesigningrequests"] == ["certificatesigningrequests", "csr", "certificates.k8s.io/v1",
                                                  "false", "CertificateSigningRequest"]
    assert rows["ingresses"] == ["ingresses", "ing", "networking.k8s.io/v1", "true", "Ingress"]
    assert rows["networkpolicies"] == ["networkpolicies", "netpol", "networking.k8s.io/v1", "true", "NetworkPolicy"]
    for plural in ("ingressclasses", "csidrivers", "csinodes", "volumeattachments", "podtemplates", "endpointslices",
                   "mutatingwebhookconfigurations", "validatingwebhookconfigurations", "validatingadmissionpolicies",
                   "validatingadmissionpolicybindings", "flowschemas", "prioritylevelconfigurations"):
        assert plural in rows
