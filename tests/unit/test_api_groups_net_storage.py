"""The networking, storage, core PV/PVC/PodTemplate, certificates, discovery,
admissionregistration and flowcontrol kinds (``controlplane/api/groups``): validation
causes, defaults, table rows, strategies and schemas as pure functions, then through the
in-process apiserver (flow-control objects at start, the CSR approval subresource, the
webhook warning, PVC and StorageClass update rules)."""

from __future__ import annotations

import copy
import time

import pytest

from components.apiserver import strategy
from controlplane.api import decoder, schemas
from controlplane.api.defaults import apply_defaults
from controlplane.api.groups import (
    admissionregistration,
    certificates,
    core_storage,
    discovery,
    flowcontrol,
    networking,
    storage,
)
from controlplane.api.resources import REGISTRY
from controlplane.api.tables import column_definitions, table_row
from controlplane.api.validation import validate
from controlplane.apitime import format_time
from controlplane.storage import testing
from tests.support.apiserver import new_ns

CSR_PEM_B64 = "LS0tLS1CRUdJTiBDRVJUSUZJQ0FURSBSRVFVRVNULS0tLS0KTUlIS01ISUNBUUF3RURFT01Bd0dBMVVFQXd3RllXeHBZMlV3V1RBVEJnY3Foa2pPUFFJQkJnZ3Foa2pPUFFNQgpCd05DQUFRWTBJVGN3d3RaaHl5TWwzNWxBNENQVytMZ1hHNU9Bay95ZVYydFF3cmtYclNFdUJhS1RKeU5ZVE9UCmlmRnRLaTg4VzE2SXJ3TnRsV2ZHWm95R3VmSC9vQUF3Q2dZSUtvWkl6ajBFQXdJRFNBQXdSUUloQUtBODhTSDUKV21ZNXorcFJzSCswUkw1THRZRTNEb0FlTEZmU0lFMWdxdW91QWlBR3pGVy9Bc1dDWEVZODVQOVZwNDZsZHlNbQo4TTNTY1hyV09FMy93ZkFUREE9PQotLS0tLUVORCBDRVJUSUZJQ0FURSBSRVFVRVNULS0tLS0K"
NOW = time.time()
GROUP_ENTRIES = (*networking.ENTRIES, *storage.ENTRIES, *core_storage.ENTRIES, *certificates.ENTRIES,
                 *discovery.ENTRIES, *admissionregistration.ENTRIES, *flowcontrol.ENTRIES)


def meta(name="x", ns=None, **extra):
    m = {"name": name, "creationTimestamp": format_time(NOW - 90), **extra}
    if ns:
        m["namespace"] = ns
    return m


WEBHOOK = {"name": "check.example.com", "sideEffects": "None", "admissionReviewVersions": ["v1"],
           "clientConfig": {"service": {"namespace": "default", "name": "hook"}},
           "rules": [{"operations": ["CREATE"], "apiGroups": [""], "apiVersions": ["v1"], "resources": ["pods"]}]}

#: a valid object of every new kind (before defaulting)
VALID = {
    "Ingress": {"metadata": meta(ns="default"), "spec": {"ingressClassName": "nginx", "rules": [
        {"host": "a.example.com", "http": {"paths": [{"path": "/", "pathType": "Prefix", "backend": {
            "service": {"name": "web", "port": {"number": 80}}}}]}}]}},
    "IngressClass": {"metadata": meta(), "spec": {"controller": "example.com/ingress", "parameters": {
        "apiGroup": "k8s.example.com", "kind": "IngressParameters", "name": "p"}}},
    "NetworkPolicy": {"metadata": meta(ns="default"), "spec": {"podSelector": {"matchLabels": {"app": "db"}},
                                                               "ingress": [{"ports": [{"port": 5432}]}],
                                                               "egress": [{"to": [{"ipBlock": {"cidr": "10.0.0.0/8"}}]}]}},
    "StorageClass": {"metadata": meta(), "provisioner": "example.com/disk", "parameters": {"type": "ssd"}},
    "CSIDriver": {"metadata": meta("disk.example.com"), "spec": {}},
    "CSINode": {"metadata": meta("node-1"), "spec": {"drivers": [{"name": "disk.example.com", "nodeID": "n1"}]}},
    "VolumeAttachment": {"metadata": meta(), "spec": {"attacher": "disk.example.com", "nodeName": "node-1",
                                                      "source": {"persistentVolumeName": "pv1"}}},
    "PersistentVolume": {"metadata": meta(), "spec": {"capacity": {"storage": "1Gi"}, "accessModes": ["ReadWriteOnce"],
                                                      "hostPath": {"path": "/data"}}},
    "PersistentVolumeClaim": {"metadata": meta(ns="default"), "spec": {
        "accessModes": ["ReadWriteOnce"], "resources": {"requests": {"storage": "1Gi"}}}},
    "PodTemplate": {"metadata": meta(ns="default"), "template": {"metadata": {"labels": {"app": "x"}}, "spec": {
        "containers": [{"name": "c", "image": "nginx:1.27"}]}}},
    "CertificateSigningRequest": {"metadata": meta(), "spec": {
        "request": CSR_PEM_B64, "signerName": "kubernetes.io/kube-apiserver-client", "usages": ["client auth"]}},
    "EndpointSlice": {"metadata": meta(ns="default"), "addressType": "IPv4",
                      "endpoints": [{"addresses": ["10.1.2.3"]}], "ports": [{"name": "http", "port": 80}]},
    "MutatingWebhookConfiguration": {"metadata": meta(), "webhooks": [copy.deepcopy(WEBHOOK)]},
    "ValidatingWebhookConfiguration": {"metadata": meta(), "webhooks": [copy.deepcopy(WEBHOOK)]},
    "ValidatingAdmissionPolicy": {"metadata": meta(), "spec": {
        "matchConstraints": {"resourceRules": [{"operations": ["CREATE"], "apiGroups": ["apps"],
                                                "apiVersions": ["v1"], "resources": ["deployments"]}]},
        "validations": [{"expression": "object.spec.replicas <= 5"}]}},
    "ValidatingAdmissionPolicyBinding": {"metadata": meta(), "spec": {"policyName": "p",
                                                                      "validationActions": ["Deny"]}},
    "FlowSchema": {"metadata": meta(), "spec": {"priorityLevelConfiguration": {"name": "workload-low"},
                                                "rules": [{"subjects": [{"kind": "Group", "group": {"name": "devs"}}],
                                                           "nonResourceRules": [{"verbs": ["get"],
                                                                                 "nonResourceURLs": ["/healthz"]}]}]}},
    "PriorityLevelConfiguration": {"metadata": meta(), "spec": {"type": "Limited", "limited": {
        "limitResponse": {"type": "Queue", "queuing": {}}}}},
}


def valid(kind):
    r = REGISTRY.of_kind(kind)
    return {"apiVersion": r.api_version, "kind": kind, **copy.deepcopy(VALID[kind])}


def defaulted(kind):
    obj = valid(kind)
    apply_defaults(kind, obj)
    return obj


def causes(kind, obj, old=None):
    return [f"{c['field']}: {c['message']}" for c in validate(kind, obj, old)]


# --------------------------------------------------------------------------- registry facts

@pytest.mark.parametrize("r", GROUP_ENTRIES, ids=[f"{r.plural}.{r.group or 'core'}" for r in GROUP_ENTRIES])
def test_every_new_kind_is_served_with_a_resolving_nested_schema(r):
    assert REGISTRY.lookup(r.group, r.version, r.plural) is r
    assert decoder.kind_spec(r.kind)[0] == "struct"
    top = schemas.kind_schema(r.kind, r.api_version)
    assert top["description"] and set(top["properties"]) >= {"apiVersion", "kind", "metadata"}
    comps = schemas.component_schemas()
    seen, todo = set(), [top]
    while todo:            # every $ref (nested, in items too) names a component with a description
        s = todo.pop()
        for p in s.get("properties", {}).values():
            for ref in [p] + ([p["items"]] if "items" in p else []):
                for a in ref.get("allOf", []):
                    name = a["$ref"].rsplit("/", 1)[-1]
                    assert name in comps, name
                    if name not in seen:
                        seen.add(name)
                        assert comps[name]["description"]
                        todo.append(comps[name])
            assert "description" in p


@pytest.mark.parametrize("kind", sorted(VALID))
def test_valid_objects_validate_after_defaulting(kind):
    assert causes(kind, defaulted(kind)) == []
    obj = defaulted(kind)
    assert causes(kind, copy.deepcopy(obj), obj) == []
    assert decoder.decode(kind, copy.deepcopy(obj)) == []        # every field is in the schema


def test_api_resources_facts():
    got = {r.plural: (r.short_names, r.namespaced, r.subresources, r.categories) for r in GROUP_ENTRIES}
    assert got["storageclasses"][:2] == (("sc",), False)
    assert got["persistentvolumes"][:3] == (("pv",), False, ("status",))
    assert got["persistentvolumeclaims"][:3] == (("pvc",), True, ("status",))
    assert got["certificatesigningrequests"][:3] == (("csr",), False, ("status", "approval"))
    assert got["ingresses"][:3] == (("ing",), True, ("status",))
    assert got["networkpolicies"][:2] == (("netpol",), True)
    assert got["volumeattachments"][2] == ("status",)
    assert got["flowschemas"][2] == got["prioritylevelconfigurations"][2] == ("status",)
    assert {p for p, f in got.items() if f[3] == ("api-extensions",)} == {
        "mutatingwebhookconfigurations", "validatingwebhookconfigurations", "validatingadmissionpolicies",
        "validatingadmissionpolicybindings"}
    assert {r.kind for r in GROUP_ENTRIES if r.strategy.tracks_generation} == {
        "Ingress", "IngressClass", "NetworkPolicy", "EndpointSlice", "MutatingWebhookConfiguration",
        "ValidatingWebhookConfiguration", "ValidatingAdmissionPolicy", "ValidatingAdmissionPolicyBinding",
        "FlowSchema", "PriorityLevelConfiguration", "PodTemplate"}


# --------------------------------------------------------------------------- defaults

DEFAULT_CASES = [
    ("storageclass", "StorageClass", lambda o: (o["reclaimPolicy"], o["volumeBindingMode"]), ("Delete", "Immediate")),
    ("csidriver", "CSIDriver", lambda o: (o["spec"]["attachRequired"], o["spec"]["podInfoOnMount"],
                                          o["spec"]["fsGroupPolicy"], o["spec"]["volumeLifecycleModes"]),
     (True, False, "ReadWriteOnceWithFSType", ["Persistent"])),
    ("pv", "PersistentVolume", lambda o: (o["spec"]["persistentVolumeReclaimPolicy"], o["spec"]["volumeMode"],
                                          o["status"]["phase"]), ("Retain", "Filesystem", "Pending")),
    ("pvc", "PersistentVolumeClaim", lambda o: (o["spec"]["volumeMode"], o["status"]["phase"]),
     ("Filesystem", "Pending")),
    ("networkpolicy-types-and-protocol", "NetworkPolicy",
     lambda o: (o["spec"]["policyTypes"], o["spec"]["ingress"][0]["ports"][0]["protocol"]),
     (["Ingress", "Egress"], "TCP")),
    ("ingressclass-scope", "IngressClass", lambda o: o["spec"]["parameters"]["scope"], "Cluster"),
    ("endpointslice-port", "EndpointSlice", lambda o: o["ports"][0]["protocol"], "TCP"),
    ("webhook", "ValidatingWebhookConfiguration",
     lambda o: {k: o["webhooks"][0][k] for k in ("failurePolicy", "matchPolicy", "timeoutSeconds", "objectSelector")}
     | {"scope": o["webhooks"][0]["rules"][0]["scope"], "port": o["webhooks"][0]["clientConfig"]["service"]["port"]},
     {"failurePolicy": "Fail", "matchPolicy": "Equivalent", "timeoutSeconds": 10, "objectSelector": {},
      "scope": "*", "port": 443}),
    ("mutating-reinvocation", "MutatingWebhookConfiguration", lambda o: o["webhooks"][0]["reinvocationPolicy"],
     "Never"),
    ("policy-failure", "ValidatingAdmissionPolicy", lambda o: (o["spec"]["failurePolicy"],
                                                               o["spec"]["matchConstraints"]["matchPolicy"]),
     ("Fail", "Equivalent")),
    ("flowschema-precedence", "FlowSchema", lambda o: o["spec"]["matchingPrecedence"], 1000),
    ("prioritylevel-queuing", "PriorityLevelConfiguration",
     lambda o: (o["spec"]["limited"]["nominalConcurrencyShares"], o["spec"]["limited"]["lendablePercent"],
                o["spec"]["limited"]["limitResponse"]["queuing"]), (30, 0, {"queues": 64, "handSize": 8,
                                                                            "queueLengthLimit": 50})),
    ("podtemplate-pod-defaults", "PodTemplate", lambda o: (o["template"]["spec"]["restartPolicy"],
                                                           o["template"]["spec"]["dnsPolicy"]),
     ("Always", "ClusterFirst")),
]


@pytest.mark.parametrize(("kind", "get", "want"), [c[1:] for c in DEFAULT_CASES], ids=[c[0] for c in DEFAULT_CASES])
def test_defaults(kind, get, want):
    assert get(defaulted(kind)) == want


# --------------------------------------------------------------------------- validation causes


def _set(path, value):
    def edit(o):
        cur = o
        *head, last = path.split(".")
        for p in head:
            cur = cur[int(p)] if isinstance(cur, list) else cur.setdefault(p, {})
        if value is _DEL:
            del cur[last]
        else:
            cur[int(last) if isinstance(cur, list) else last] = value
        return o
    return edit


_DEL = object()
NS = "networking.k8s.io"
INVALID_CASES = [
    ("ingress-no-rules-no-backend", "Ingress", _set("spec", {}),
     ["spec: Invalid value: []networking.IngressRule(nil): either `defaultBackend` or `rules` must be specified"]),
    ("ingress-path-type-required", "Ingress", _set("spec.rules.0.http.paths.0.pathType", _DEL),
     ["spec.rules[0].http.paths[0].pathType: Required value: pathType must be specified"]),
    ("ingress-path-type-unsupported", "Ingress", _set("spec.rules.0.http.paths.0.pathType", "Regex"),
     ['spec.rules[0].http.paths[0].pathType: Unsupported value: "Regex": supported values: "Exact", '
      '"ImplementationSpecific", "Prefix"']),
    ("ingress-relative-path", "Ingress", _set("spec.rules.0.http.paths.0.path", "api"),
     ['spec.rules[0].http.paths[0].path: Invalid value: "api": must be an absolute path']),
    ("ingress-ip-host", "Ingress", _set("spec.rules.0.host", "10.0.0.1"),
     ['spec.rules[0].host: Invalid value: "10.0.0.1": must be a DNS name, not an IP address']),
    ("ingress-port-required", "Ingress", _set("spec.rules.0.http.paths.0.backend.service.port", {}),
     ["spec.rules[0].http.paths[0].backend: Required value: port name or number is required"]),
    ("ingress-both-backends", "Ingress", _set("spec.rules.0.http.paths.0.backend.resource",
                                              {"kind": "Bucket", "name": "b"}),
     ['spec.rules[0].http.paths[0].backend: Invalid value: "": cannot set both resource and service backends']),
    ("ingressclass-controller-required", "IngressClass", _set("spec.controller", ""),
     ["spec.controller: Required value"]),
    ("ingressclass-controller-not-prefixed", "IngressClass", _set("spec.controller", "nginx"),
     ['spec.controller: Invalid value: "nginx": must be a domain-prefixed path (such as "acme.io/foo")']),
    ("ingressclass-parameters-kind-required", "IngressClass", _set("spec.parameters.kind", ""),
     ["spec.parameters.kind: Required value: kind is required"]),
    ("ingressclass-namespace-with-cluster-scope", "IngressClass", _set("spec.parameters.namespace", "a"),
     ["spec.parameters.namespace: Forbidden: `parameters.scope` is set to 'Cluster'"]),
    ("netpol-policy-type", "NetworkPolicy", _set("spec.policyTypes", ["Sideways"]),
     ['spec.policyTypes[0]: Unsupported value: "Sideways": supported values: "Ingress", "Egress"']),
    ("netpol-bad-cidr", "NetworkPolicy", _set("spec.egress.0.to.0.ipBlock.cidr", "10.0.0.0"),
     ['spec.egress[0].to[0].ipBlock.cidr: Invalid value: "10.0.0.0": must be a valid CIDR value, (e.g. '
      '10.9.8.0/24 or 2001:db8::/64)']),
    ("netpol-empty-peer", "NetworkPolicy", _set("spec.egress.0.to.0", {}),
     ["spec.egress[0].to[0]: Required value: must specify a peer"]),
    ("netpol-endport-below-port", "NetworkPolicy", _set("spec.ingress.0.ports.0.endPort", 80),
     ["spec.ingress[0].ports[0].endPort: Invalid value: 5432: must be greater than or equal to `port`"]),
    ("storageclass-provisioner-required", "StorageClass", _set("provisioner", _DEL),
     ["provisioner: Required value"]),
    ("storageclass-reclaim-policy", "StorageClass", _set("reclaimPolicy", "Recycle"),
     ['reclaimPolicy: Unsupported value: "Recycle": supported values: "Delete", "Retain"']),
    ("storageclass-binding-mode", "StorageClass", _set("volumeBindingMode", "Later"),
     ['volumeBindingMode: Unsupported value: "Later": supported values: "Immediate", "WaitForFirstConsumer"']),
    ("csidriver-fsgroup-policy", "CSIDriver", _set("spec.fsGroupPolicy", "Some"),
     ['spec.fsGroupPolicy: Unsupported value: "Some": supported values: "File", "None", "ReadWriteOnceWithFSType"']),
    ("csinode-node-id-required", "CSINode", _set("spec.drivers.0.nodeID", ""),
     ["spec.drivers[0].nodeID: Required value: nodeID must be provided"]),
    ("volumeattachment-no-source", "VolumeAttachment", _set("spec.source", {}),
     ["spec.source: Required value: must specify exactly one of inlineVolumeSpec and persistentVolumeName"]),
    ("pv-no-source", "PersistentVolume", _set("spec.hostPath", _DEL),
     ["spec: Required value: must specify a volume type"]),
    ("pv-access-mode", "PersistentVolume", _set("spec.accessModes", ["ReadWriteSometimes"]),
     ['spec.accessModes: Unsupported value: "ReadWriteSometimes": supported values: "ReadOnlyMany", '
      '"ReadWriteMany", "ReadWriteOnce", "ReadWriteOncePod"']),
    ("pv-capacity-required", "PersistentVolume", _set("spec.capacity", _DEL),
     ["spec.capacity: Required value", 'spec.capacity: Unsupported value: core.ResourceList(nil): supported values: '
                                       '"storage"']),
    ("pvc-access-modes-required", "PersistentVolumeClaim", _set("spec.accessModes", _DEL),
     ["spec.accessModes: Required value: at least 1 access mode is required"]),
    ("pvc-storage-required", "PersistentVolumeClaim", _set("spec.resources", {}),
     ["spec.resources[storage]: Required value"]),
    ("pvc-storage-zero", "PersistentVolumeClaim", _set("spec.resources.requests.storage", "0"),
     ['spec.resources[storage]: Invalid value: "0": must be greater than zero']),
    ("podtemplate-no-containers", "PodTemplate", _set("template.spec.containers", []),
     ["template.spec.containers: Required value"]),
    ("csr-not-a-pem-request", "CertificateSigningRequest", _set("spec.request", "aGk="),
     ["spec.request: Invalid value: []byte{0x68, 0x69}: PEM block type must be CERTIFICATE REQUEST"]),
    ("csr-signer-required", "CertificateSigningRequest", _set("spec.signerName", ""),
     ["spec.signerName: Required value"]),
    ("csr-usage-unsupported", "CertificateSigningRequest", _set("spec.usages", ["flying"]),
     ['spec.usages[0]: Unsupported value: "flying": supported values: "signing", "digital signature", '
      '"content commitment", "key encipherment", "key agreement", "data encipherment", "cert sign", "crl sign", '
      '"encipher only", "decipher only", "any", "server auth", "client auth", "code signing", "email protection", '
      '"s/mime", "ipsec end system", "ipsec tunnel", "ipsec user", "timestamping", "ocsp signing", '
      '"microsoft sgc", "netscape sgc"']),
    ("csr-short-expiration", "CertificateSigningRequest", _set("spec.expirationSeconds", 60),
     ["spec.expirationSeconds: Invalid value: 60: may not specify a duration less than 600 seconds (10 minutes)"]),
    ("endpointslice-address-type-required", "EndpointSlice", _set("addressType", _DEL),
     ["addressType: Required value"]),
    ("endpointslice-address-type", "EndpointSlice", _set("addressType", "IPv5"),
     ['addressType: Unsupported value: "IPv5": supported values: "FQDN", "IPv4", "IPv6"']),
    ("endpointslice-bad-ipv4", "EndpointSlice", _set("endpoints.0.addresses.0", "::1"),
     ['endpoints[0].addresses[0]: Invalid value: "::1": must be a valid IPv4 address']),
    ("endpointslice-no-address", "EndpointSlice", _set("endpoints.0.addresses", []),
     ["endpoints[0].addresses: Required value: must contain at least 1 address"]),
    ("webhook-side-effects-required", "ValidatingWebhookConfiguration", _set("webhooks.0.sideEffects", _DEL),
     ["webhooks[0].sideEffects: Required value: must specify one of None, NoneOnDryRun"]),
    ("webhook-name-two-segments", "MutatingWebhookConfiguration", _set("webhooks.0.name", "check.example"),
     ['webhooks[0].name: Invalid value: "check.example": should be a domain with at least three segments '
      'separated by dots']),
    ("webhook-review-versions-required", "ValidatingWebhookConfiguration",
     _set("webhooks.0.admissionReviewVersions", _DEL),
     ["webhooks[0].admissionReviewVersions: Required value: must specify one of v1, v1beta1"]),
    ("webhook-timeout", "ValidatingWebhookConfiguration", _set("webhooks.0.timeoutSeconds", 31),
     ["webhooks[0].timeoutSeconds: Invalid value: 31: the timeout value must be between 1 and 30 seconds"]),
    ("webhook-url-and-service", "ValidatingWebhookConfiguration", _set("webhooks.0.clientConfig.url",
                                                                       "https://h.example.com"),
     ["webhooks[0].clientConfig: Required value: exactly one of url or service is required"]),
    ("policy-no-validations", "ValidatingAdmissionPolicy", _set("spec.validations", _DEL),
     ["spec.validations: Required value: validations or auditAnnotations must contain at least one item"]),
    ("binding-no-actions", "ValidatingAdmissionPolicyBinding", _set("spec.validationActions", []),
     ["spec.validationActions: Required value: at least one validation action is required"]),
    ("flowschema-precedence-too-large", "FlowSchema", _set("spec.matchingPrecedence", 10001),
     ["spec.matchingPrecedence: Invalid value: 10001: must not be greater than 10000"]),
    ("flowschema-level-required", "FlowSchema", _set("spec.priorityLevelConfiguration", {}),
     ["spec.priorityLevelConfiguration.name: Required value: must reference a priority level"]),
    ("flowschema-precedence-one-not-exempt", "FlowSchema", _set("spec.matchingPrecedence", 1),
     ["spec.matchingPrecedence: Invalid value: 1: only the schema named 'exempt' may have matchingPrecedence 1"]),
    ("flowschema-subject-member-required", "FlowSchema", _set("spec.rules.0.subjects.0", {"kind": "User"}),
     ["spec.rules[0].subjects[0].user: Required value: user is required when subject kind is 'User'"]),
    ("flowschema-subject-other-member", "FlowSchema", _set("spec.rules.0.subjects.0.user", {"name": "u"}),
     ["spec.rules[0].subjects[0].user: Forbidden: user is forbidden when subject kind is not 'User'"]),
    ("flowschema-wildcard-with-others", "FlowSchema", _set("spec.rules.0.nonResourceRules.0.verbs", ["*", "get"]),
     ['spec.rules[0].nonResourceRules[0].verbs: Invalid value: []string{"*", "get"}: if \'*\' is present, must '
      "not specify other verbs"]),
    ("binding-deny-and-warn", "ValidatingAdmissionPolicyBinding", _set("spec.validationActions", ["Deny", "Warn"]),
     ['spec.validationActions: Invalid value: []admissionregistration.ValidationAction{"Deny", "Warn"}: '
      "validationActions must not contain both Deny and Warn (repeating the same validation failure information in "
      "the API response and headers serves no purpose)"]),
    ("prioritylevel-exempt-type-needs-exempt-name", "PriorityLevelConfiguration",
     _set("spec", {"type": "Exempt", "exempt": {}}),
     ['spec.type: Invalid value: "Exempt": type must be \'Exempt\' if and only if name is \'exempt\'']),
    ("prioritylevel-hand-size", "PriorityLevelConfiguration",
     _set("spec.limited.limitResponse.queuing", {"queues": 4, "handSize": 8}),
     ["spec.limited.limitResponse.queuing.handSize: Invalid value: 8: should not be greater than queues (4)"]),
    ("prioritylevel-type", "PriorityLevelConfiguration", _set("spec.type", "Unlimited"),
     ['spec.type: Unsupported value: "Unlimited": supported values: "Exempt", "Limited"']),
]


@pytest.mark.parametrize(("kind", "edit", "want"), [c[1:] for c in INVALID_CASES], ids=[c[0] for c in INVALID_CASES])
def test_validation_causes(kind, edit, want):
    obj = edit(defaulted(kind))
    assert causes(kind, obj) == want


UPDATE_CASES = [
    ("storageclass-parameters-immutable", "StorageClass", _set("parameters", {"type": "hdd"}),
     ["parameters: Forbidden: updates to parameters are forbidden."]),
    ("storageclass-provisioner-immutable", "StorageClass", _set("provisioner", "example.com/other"),
     ["provisioner: Forbidden: updates to provisioner are forbidden."]),
    ("ingressclass-controller-immutable", "IngressClass", _set("spec.controller", "example.com/other"),
     ['spec.controller: Invalid value: "example.com/other": field is immutable']),
    ("endpointslice-address-type-immutable", "EndpointSlice", _set("addressType", "FQDN"),
     ['addressType: Invalid value: "FQDN": field is immutable']),
    ("pvc-spec-immutable", "PersistentVolumeClaim", _set("spec.accessModes", ["ReadOnlyMany"]),
     ["spec: Forbidden: spec is immutable after creation except resources.requests for bound claims"]),
    ("pvc-resize-pending-claim", "PersistentVolumeClaim", _set("spec.resources.requests.storage", "2Gi"),
     ["spec: Forbidden: spec is immutable after creation except resources.requests for bound claims"]),
    ("pvc-volume-name-binding", "PersistentVolumeClaim", _set("spec.volumeName", "pv1"), []),
    ("pv-source-immutable", "PersistentVolume", _set("spec.hostPath.path", "/other"),
     ["spec.persistentvolumesource: Forbidden: spec.persistentvolumesource is immutable after creation"]),
    ("volumeattachment-spec-immutable", "VolumeAttachment", _set("spec.nodeName", "node-2"),
     ['spec: Invalid value: {"attacher":"disk.example.com","nodeName":"node-2","source":{"persistentVolumeName":'
      '"pv1"}}: field is immutable']),
]


@pytest.mark.parametrize(("kind", "edit", "want"), [c[1:] for c in UPDATE_CASES], ids=[c[0] for c in UPDATE_CASES])
def test_update_validation_causes(kind, edit, want):
    old = defaulted(kind)
    new = edit(copy.deepcopy(old))
    got = causes(kind, new, old)
    assert got[:len(want)] == want and (want or got == [])


def test_pvc_bound_claim_may_grow_but_not_shrink():
    old = defaulted("PersistentVolumeClaim")
    old["spec"]["volumeName"] = "pv1"
    old["status"] = {"phase": "Bound", "capacity": {"storage": "1Gi"}}
    grown = copy.deepcopy(old)
    grown["spec"]["resources"]["requests"]["storage"] = "2Gi"
    assert causes("PersistentVolumeClaim", grown, old) == []
    shrunk = copy.deepcopy(old)
    shrunk["spec"]["resources"]["requests"]["storage"] = "512Mi"
    assert causes("PersistentVolumeClaim", shrunk, old) == [
        "spec.resources.requests.storage: Forbidden: field can not be less than previous value"]
    rebound = copy.deepcopy(old)
    rebound["spec"]["volumeName"] = "pv2"
    assert causes("PersistentVolumeClaim", rebound, old) == [
        "spec: Forbidden: spec is immutable after creation except resources.requests for bound claims"]


def test_csidriver_name_rule_reports_once():
    obj = defaulted("CSIDriver")
    obj["metadata"]["name"] = "Disk_Example"
    assert [c["field"] for c in validate("CSIDriver", obj)] == ["metadata.name"]


def test_csr_signer_name_is_a_field_label():
    from controlplane.selectors import object_fields
    assert object_fields("CertificateSigningRequest", defaulted("CertificateSigningRequest"))["spec.signerName"] == \
        "kubernetes.io/kube-apiserver-client"


# --------------------------------------------------------------------------- tables


def _row(kind, obj):
    return table_row(kind, obj, now=NOW)["cells"]


def _bound_pvc():
    o = defaulted("PersistentVolumeClaim")
    o["spec"].update(volumeName="pv1", storageClassName="fast")
    o["status"] = {"phase": "Bound", "accessModes": ["ReadWriteOnce", "ReadOnlyMany"], "capacity": {"storage": "1024Mi"}}
    return o


def _ingress_tls():
    o = defaulted("Ingress")
    o["spec"]["tls"] = [{"hosts": ["a.example.com"]}]
    o["spec"]["rules"] += [{"host": h} for h in ("b.example.com", "c.example.com", "d.example.com")]
    o["status"] = {"loadBalancer": {"ingress": [{"ip": "192.0.2.1"}, {"hostname": "lb.example.com"}]}}
    return o


def _default_sc():
    o = defaulted("StorageClass")
    o["metadata"]["annotations"] = {"storageclass.kubernetes.io/is-default-class": "true"}
    return o


def _approved_csr():
    o = defaulted("CertificateSigningRequest")
    o["spec"].update(username="alice", expirationSeconds=86400)
    o["status"] = {"conditions": [{"type": "Approved", "status": "True"}]}
    return o


TABLE_CASES = [
    ("ingress", "Ingress", lambda: defaulted("Ingress"), ["x", "nginx", "a.example.com", "", "80", "90s"]),
    ("ingress-tls-more-hosts", "Ingress", _ingress_tls,
     ["x", "nginx", "a.example.com,b.example.com,c.example.com + 1 more...", "192.0.2.1,lb.example.com",
      "80, 443", "90s"]),
    ("ingressclass", "IngressClass", lambda: defaulted("IngressClass"),
     ["x", "example.com/ingress", "IngressParameters.k8s.example.com/p", "90s"]),
    ("networkpolicy", "NetworkPolicy", lambda: defaulted("NetworkPolicy"), ["x", "app=db", "90s"]),
    ("storageclass-default", "StorageClass", _default_sc,
     ["x (default)", "example.com/disk", "Delete", "Immediate", False, "90s"]),
    ("csidriver", "CSIDriver", lambda: defaulted("CSIDriver"),
     ["disk.example.com", True, False, False, "<unset>", False, "Persistent", "90s"]),
    ("csinode", "CSINode", lambda: defaulted("CSINode"), ["node-1", 1, "90s"]),
    ("volumeattachment", "VolumeAttachment", lambda: defaulted("VolumeAttachment"),
     ["x", "disk.example.com", "pv1", "node-1", False, "90s"]),
    ("pv", "PersistentVolume", lambda: defaulted("PersistentVolume"),
     ["x", "1Gi", "RWO", "Retain", "Pending", "", "", "<unset>", "", "90s", "Filesystem"]),
    ("pvc-pending", "PersistentVolumeClaim", lambda: defaulted("PersistentVolumeClaim"),
     ["x", "Pending", "", "", "", "", "<unset>", "90s", "Filesystem"]),
    ("pvc-bound", "PersistentVolumeClaim", _bound_pvc,
     ["x", "Bound", "pv1", "1Gi", "RWO,ROX", "fast", "<unset>", "90s", "Filesystem"]),
    ("podtemplate", "PodTemplate", lambda: defaulted("PodTemplate"), ["x", "c", "nginx:1.27", "app=x"]),
    ("csr-pending", "CertificateSigningRequest", lambda: defaulted("CertificateSigningRequest"),
     ["x", "90s", "kubernetes.io/kube-apiserver-client", "", "<none>", "Pending"]),
    ("csr-approved", "CertificateSigningRequest", _approved_csr,
     ["x", "90s", "kubernetes.io/kube-apiserver-client", "alice", "24h", "Approved"]),
    ("endpointslice", "EndpointSlice", lambda: defaulted("EndpointSlice"), ["x", "IPv4", "80", "10.1.2.3", "90s"]),
    ("webhooks", "ValidatingWebhookConfiguration", lambda: defaulted("ValidatingWebhookConfiguration"),
     ["x", 1, "90s"]),
    ("policy", "ValidatingAdmissionPolicy", lambda: defaulted("ValidatingAdmissionPolicy"), ["x", 1, "<unset>", "90s"]),
    ("binding", "ValidatingAdmissionPolicyBinding", lambda: defaulted("ValidatingAdmissionPolicyBinding"),
     ["x", "p", "<unset>", "90s"]),
    ("flowschema", "FlowSchema", lambda: defaulted("FlowSchema"), ["x", "workload-low", 1000, "<none>", "90s", "?"]),
    ("prioritylevel", "PriorityLevelConfiguration", lambda: defaulted("PriorityLevelConfiguration"),
     ["x", "Limited", 30, 64, 8, 50, "90s"]),
]


@pytest.mark.parametrize(("kind", "make", "cells"), [c[1:] for c in TABLE_CASES], ids=[c[0] for c in TABLE_CASES])
def test_table_rows(kind, make, cells):
    assert _row(kind, make()) == cells
    cols = column_definitions(kind)
    assert len(cols) == len(cells) and all(c["description"] for c in cols)


COLUMNS = [
    ("Ingress", ["Name", "Class", "Hosts", "Address", "Ports", "Age"]),
    ("PersistentVolume", ["Name", "Capacity", "Access Modes", "Reclaim Policy", "Status", "Claim", "StorageClass",
                          "VolumeAttributesClass", "Reason", "Age", "VolumeMode"]),
    ("PersistentVolumeClaim", ["Name", "Status", "Volume", "Capacity", "Access Modes", "StorageClass",
                               "VolumeAttributesClass", "Age", "VolumeMode"]),
    ("StorageClass", ["Name", "Provisioner", "ReclaimPolicy", "VolumeBindingMode", "AllowVolumeExpansion", "Age"]),
    ("CertificateSigningRequest", ["Name", "Age", "SignerName", "Requestor", "RequestedDuration", "Condition"]),
    ("FlowSchema", ["Name", "PriorityLevel", "MatchingPrecedence", "DistinguisherMethod", "Age", "MissingPL"]),
]


@pytest.mark.parametrize(("kind", "names"), COLUMNS, ids=[c[0] for c in COLUMNS])
def test_column_names(kind, names):
    assert [c["name"] for c in column_definitions(kind)] == names


def test_flowschema_rows_sorted_by_precedence_then_name():
    from controlplane.api.tables import table
    objs = []
    for n, p in (("b", 500), ("a", 500), ("c", 100)):
        o = defaulted("FlowSchema")
        o["metadata"]["name"], o["spec"]["matchingPrecedence"] = n, p
        objs.append(o)
    assert [r["cells"][0] for r in table("FlowSchema", objs, "1", now=NOW)["rows"]] == ["c", "a", "b"]


# --------------------------------------------------------------------------- strategies


def test_csr_approval_subresource_changes_only_conditions():
    old = defaulted("CertificateSigningRequest")
    new = copy.deepcopy(old)
    new["spec"]["signerName"] = "example.com/other"
    new["status"] = {"conditions": [{"type": "Approved", "status": "True", "reason": "KubectlApprove"}],
                     "certificate": "Zm9v"}
    strategy.prepare_for_update("CertificateSigningRequest", new, old, "approval")
    assert new["spec"] == old["spec"]
    assert "certificate" not in new["status"]
    (cond,) = new["status"]["conditions"]
    assert cond["reason"] == "KubectlApprove" and cond["lastUpdateTime"] and cond["lastTransitionTime"]


def test_csr_status_subresource_keeps_approval_conditions():
    old = defaulted("CertificateSigningRequest")
    old["status"] = {"conditions": [{"type": "Approved", "status": "True", "reason": "ByAdmin"}]}
    new = copy.deepcopy(old)
    new["status"] = {"certificate": "Zm9v", "conditions": [{"type": "Denied", "status": "True"}]}
    strategy.prepare_for_update("CertificateSigningRequest", new, old, "status")
    assert new["status"]["certificate"] == "Zm9v"
    assert [(c["type"], c.get("reason")) for c in new["status"]["conditions"]] == [("Approved", "ByAdmin")]


def test_csr_create_records_the_requesting_user_and_resets_status():
    obj = valid("CertificateSigningRequest")
    obj["spec"]["username"] = "mallory"
    obj["status"] = {"conditions": [{"type": "Approved", "status": "True"}]}
    strategy.prepare_for_create("CertificateSigningRequest", obj, None, False)
    assert obj["spec"]["username"] == "system:anonymous" and obj["status"] == {}


@pytest.mark.parametrize(("kind", "status"), [
    ("Ingress", {"loadBalancer": {}}), ("VolumeAttachment", {"attached": False}), ("PersistentVolumeClaim", {}),
    ("FlowSchema", {}), ("ValidatingAdmissionPolicy", {})], ids=lambda v: v if isinstance(v, str) else "")
def test_status_reset_on_create(kind, status):
    obj = valid(kind)
    obj["status"] = {"sent": True}
    strategy.prepare_for_create(kind, obj, "default", REGISTRY.of_kind(kind).namespaced)
    assert obj["status"] == status


def test_pv_phase_change_stamps_last_transition():
    obj = valid("PersistentVolume")
    strategy.prepare_for_create("PersistentVolume", obj, None, False)
    assert obj["status"]["phase"] == "Pending" and obj["status"]["lastPhaseTransitionTime"]
    new = copy.deepcopy(obj)
    new["status"] = {"phase": "Available"}
    strategy.prepare_for_update("PersistentVolume", new, obj, "status")
    assert new["status"]["lastPhaseTransitionTime"]


def test_endpointslice_generation_follows_its_content():
    old = defaulted("EndpointSlice")
    old["metadata"]["generation"] = 1
    new = copy.deepcopy(old)
    new["endpoints"][0]["addresses"] = ["10.1.2.4"]
    strategy.prepare_for_update("EndpointSlice", new, old)
    assert new["metadata"]["generation"] == 2
    same = copy.deepcopy(old)
    strategy.prepare_for_update("EndpointSlice", same, old)
    assert same["metadata"]["generation"] == 1


def test_podtemplate_generation_follows_its_template():
    obj = valid("PodTemplate")
    strategy.prepare_for_create("PodTemplate", obj, "default", True)
    assert obj["metadata"]["generation"] == 1
    new = copy.deepcopy(obj)
    new["template"]["spec"]["containers"][0]["image"] = "nginx:1.28"
    strategy.prepare_for_update("PodTemplate", new, obj)
    assert new["metadata"]["generation"] == 2


def test_webhook_kinds_warn_on_create():
    for kind in ("MutatingWebhookConfiguration", "ValidatingWebhookConfiguration"):
        (w,) = strategy.warnings(kind, valid(kind), None)
        assert "webhooks are stored but not called by this apiserver" in w
    for kind in ("ValidatingAdmissionPolicy", "ValidatingAdmissionPolicyBinding"):
        (w,) = strategy.warnings(kind, valid(kind), None)
        assert "not evaluated by this apiserver" in w
    assert strategy.warnings("Ingress", valid("Ingress"), None) == []


# --------------------------------------------------------------------------- through the apiserver

needs_etcd = pytest.mark.skipif(not testing.available(), reason="needs /usr/bin/etcd")


@needs_etcd
async def test_bootstrap_flow_control_objects_are_served(api):
    from components.apiserver.flowcontrol import FLOW_SCHEMAS, PRIORITY_LEVELS
    r = await api.get("/apis/flowcontrol.apiserver.k8s.io/v1/flowschemas")
    items = (await r.json())["items"]
    assert {i["metadata"]["name"] for i in items} == {fs.name for fs in FLOW_SCHEMAS}
    by = {i["metadata"]["name"]: i for i in items}
    fs = next(f for f in FLOW_SCHEMAS if f.name == "global-default")
    assert by["global-default"]["metadata"]["uid"] == fs.uid
    assert by["global-default"]["spec"]["matchingPrecedence"] == 9900
    assert by["global-default"]["status"]["conditions"][0]["type"] == "Dangling"
    r = await api.get("/apis/flowcontrol.apiserver.k8s.io/v1/prioritylevelconfigurations/catch-all")
    pl = await r.json()
    assert pl["spec"] == {"type": "Limited", "limited": {"nominalConcurrencyShares": 5, "lendablePercent": 0,
                                                         "limitResponse": {"type": "Reject"}}}
    assert len(PRIORITY_LEVELS) == len((await (await api.get(
        "/apis/flowcontrol.apiserver.k8s.io/v1/prioritylevelconfigurations")).json())["items"])


@needs_etcd
async def test_csr_approval_through_the_subresource(api):
    base = "/apis/certificates.k8s.io/v1/certificatesigningrequests"
    r = await api.post(base, json=valid("CertificateSigningRequest") | {"metadata": {"name": "alice"}})
    assert r.status == 201, await r.text()
    csr = await r.json()
    csr["status"] = {"conditions": [{"type": "Approved", "status": "True", "reason": "KubectlApprove",
                                     "message": "This CSR was approved by kubectl certificate approve."}]}
    csr["spec"]["usages"] = ["server auth"]
    r = await api.put(f"{base}/alice/approval", json=csr)
    assert r.status == 200, await r.text()
    got = await r.json()
    assert got["spec"]["usages"] == ["client auth"]
    assert got["status"]["conditions"][0]["type"] == "Approved"
    r = await api.get(f"{base}/alice/approval")
    assert r.status == 200


@needs_etcd
async def test_webhook_create_answers_a_warning(api):
    r = await api.post("/apis/admissionregistration.k8s.io/v1/validatingwebhookconfigurations",
                       json=valid("ValidatingWebhookConfiguration") | {"metadata": {"name": "w"}})
    assert r.status == 201, await r.text()
    assert any("webhooks are stored but not called by this apiserver" in w for w in r.headers.getall("Warning"))


@needs_etcd
async def test_storageclass_parameters_are_immutable(api):
    base = "/apis/storage.k8s.io/v1/storageclasses"
    r = await api.post(base, json=valid("StorageClass") | {"metadata": {"name": "fast"}})
    assert r.status == 201, await r.text()
    assert (await r.json())["reclaimPolicy"] == "Delete"
    r = await api.patch(f"{base}/fast", json={"parameters": {"type": "hdd"}},
                        headers={"Content-Type": "application/merge-patch+json"})
    body = await r.json()
    assert r.status == 422 and body["message"] == (
        'StorageClass.storage.k8s.io "fast" is invalid: parameters: Forbidden: updates to parameters are forbidden.')


@needs_etcd
async def test_pvc_lists_and_keeps_its_spec(api):
    ns = await new_ns(api)
    base = f"/api/v1/namespaces/{ns}/persistentvolumeclaims"
    r = await api.post(base, json=valid("PersistentVolumeClaim") | {"metadata": {"name": "data",
                                                                                 "labels": {"app": "x"}}})
    assert r.status == 201, await r.text()
    assert (await r.json())["status"] == {"phase": "Pending"}
    r = await api.get("/api/v1/persistentvolumeclaims?labelSelector=app%3Dx")
    assert [i["metadata"]["name"] for i in (await r.json())["items"]] == ["data"]
    r = await api.patch(f"{base}/data", json={"spec": {"resources": {"requests": {"storage": "2Gi"}}}},
                        headers={"Content-Type": "application/merge-patch+json"})
    assert r.status == 422 and "spec is immutable after creation" in (await r.json())["message"]
    r = await api.patch(f"{base}/data", json={"spec": {"volumeName": "pv1"}},
                        headers={"Content-Type": "application/merge-patch+json"})
    assert r.status == 200 and (await r.json())["spec"]["volumeName"] == "pv1"


def test_discovery_lists_the_approval_subresource():
    from components.apiserver import discovery
    doc = discovery.api_resource_list("certificates.k8s.io/v1")
    subs = {r["name"]: r["verbs"] for r in doc["resources"]}
    assert subs["certificatesigningrequests/approval"] == subs["certificatesigningrequests/status"] == [
        "get", "patch", "update"]


@needs_etcd
async def test_server_side_apply_create_of_a_webhook_configuration_warns(api):
    import json
    body = valid("MutatingWebhookConfiguration") | {"metadata": {"name": "m"}}
    r = await api.patch("/apis/admissionregistration.k8s.io/v1/mutatingwebhookconfigurations/m?fieldManager=t",
                        data=json.dumps(body), headers={"Content-Type": "application/apply-patch+yaml"})
    assert r.status == 201, await r.text()
    assert any("webhooks are stored but not called" in w for w in r.headers.getall("Warning"))
    r = await api.patch("/apis/admissionregistration.k8s.io/v1/mutatingwebhookconfigurations/m?fieldManager=t",
                        data=json.dumps(body), headers={"Content-Type": "application/apply-patch+yaml"})
    assert r.status == 200 and not any("webhooks" in w for w in r.headers.getall("Warning", []))


def _bootstrap():
    from components.apiserver import apfobjects
    return [*apfobjects.priority_level_objects(), *apfobjects.flow_schema_objects(format_time(NOW))]


@pytest.mark.parametrize("obj", _bootstrap(), ids=lambda o: f"{o['kind']}-{o['metadata']['name']}")
def test_bootstrap_flow_control_objects_decode_and_validate(obj):
    obj = copy.deepcopy(obj)
    assert decoder.decode(obj["kind"], obj) == []
    assert causes(obj["kind"], obj) == []
