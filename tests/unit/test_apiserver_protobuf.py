"""Kubernetes protobuf request bodies: bytes captured from kubectl 1.32 decode to the JSON object."""

from __future__ import annotations

import pytest

from components.apiserver import protobuf

# `kubectl create namespace pbns`
NAMESPACE = bytes.fromhex(
    "6b3873000a0f0a02763112094e616d657370616365121c0a140a0470626e7312001a0022002a0032003800420012001a020a00"
    "1a002200")
# `kubectl create deployment d1 --image=nginx:1.25 --replicas=3 --port=8080 -- sleep 100`
DEPLOYMENT = bytes.fromhex(
    "6b3873000a150a07617070732f7631120a4465706c6f796d656e7412c6010a1d0a02643112001a0022002a003200380042005a"
    "090a03617070120264311296010803120b0a090a03617070120264311a7d0a1b0a0012001a0022002a003200380042005a090a"
    "0361707012026431125e12400a056e67696e78120a6e67696e783a312e32351a05736c6565701a033130302a00320b0a001000"
    "18903f22002a0042006a007200800100880100900100a201001a00320042004a0052005800600068008201008a01009a0100c2"
    "010022020a00280038001a0c0800100018002000280038001a002200")
# `kubectl create service nodeport svc1 --tcp=80:8080`
SERVICE = bytes.fromhex(
    "6b3873000a0d0a027631120753657276696365126b0a210a047376633112001a0022002a003200380042005a0b0a0361707012"
    "047376633112420a1b0a0738302d38303830120354435018502207080010903f1a002800120b0a036170701204737663311a00"
    "22084e6f6465506f72743a00420052005a00600068001a020a001a002200")


def test_namespace():
    assert protobuf.decode(NAMESPACE) == {"apiVersion": "v1", "kind": "Namespace", "metadata": {"name": "pbns"}}


def test_deployment_keeps_pointer_fields_drops_zero_scalars():
    d = protobuf.decode(DEPLOYMENT)
    assert d["apiVersion"] == "apps/v1" and d["kind"] == "Deployment"
    assert d["metadata"] == {"name": "d1", "labels": {"app": "d1"}}
    spec = d["spec"]
    assert spec["replicas"] == 3 and spec["selector"] == {"matchLabels": {"app": "d1"}}
    c = spec["template"]["spec"]["containers"]
    assert c == [{"name": "nginx", "image": "nginx:1.25", "command": ["sleep", "100"],
                  "ports": [{"containerPort": 8080}]}]
    assert "status" not in d and "strategy" not in spec  # empty structs, as JSON omitempty


def test_service_int_or_string():
    s = protobuf.decode(SERVICE)
    assert s["spec"] == {"ports": [{"name": "80-8080", "protocol": "TCP", "port": 80, "targetPort": 8080}],
                         "selector": {"app": "svc1"}, "type": "NodePort"}


def test_zero_replicas_pointer_kept():
    # DeploymentSpec{replicas: 0} inside a Deployment; envelope built by hand from the same framing
    spec = bytes([0x08, 0x00])
    obj = bytes([0x12, len(spec)]) + spec
    tm = b"\x0a\x07apps/v1\x12\x0aDeployment"
    raw = protobuf.MAGIC + bytes([0x0a, len(tm)]) + tm + bytes([0x12, len(obj)]) + obj
    assert protobuf.decode(raw)["spec"] == {"replicas": 0}


@pytest.mark.parametrize("raw,err", [
    (b"\x0a\x02v1", "prefix"),
    (protobuf.MAGIC + b"\x0a\x04\x0a\x02v1", "Kind"),
    (protobuf.MAGIC + b"\x0a\x80", "truncated"),
    (NAMESPACE[:30], "truncated"),
])
def test_malformed(raw, err):
    with pytest.raises(protobuf.ProtobufError, match=err):
        protobuf.decode(raw)


def test_unknown_kind_and_unknown_nonzero_field():
    tm = b"\x0a\x02v1\x12\x0fComponentStatus"   # a kind never decoded (ResourceQuota now is)
    raw = protobuf.MAGIC + bytes([0x0a, len(tm)]) + tm + b"\x12\x00"
    with pytest.raises(protobuf.UnsupportedKind, match="ComponentStatus"):
        protobuf.decode(raw)
    # a non-zero field 40 of ObjectMeta, which the table does not know, is refused
    md = b"\x0a\x01x" + bytes([0xc0, 0x02, 0x01])  # field 40 varint 1
    obj = bytes([0x0a, len(md)]) + md
    tm = b"\x0a\x02v1\x12\x09Namespace"
    raw = protobuf.MAGIC + bytes([0x0a, len(tm)]) + tm + bytes([0x12, len(obj)]) + obj
    with pytest.raises(protobuf.ProtobufError, match="field number 40 of ObjectMeta"):
        protobuf.decode(raw)
    # the same field with a zero value is ignored (the Go marshaller writes zero scalars)
    md0 = b"\x0a\x01x" + bytes([0xc0, 0x02, 0x00])
    obj0 = bytes([0x0a, len(md0)]) + md0
    raw0 = protobuf.MAGIC + bytes([0x0a, len(tm)]) + tm + bytes([0x12, len(obj0)]) + obj0
    assert protobuf.decode(raw0)["metadata"] == {"name": "x"}


def _varint(n: int) -> bytes:
    out = b""
    while True:
        b, n = n & 0x7F, n >> 7
        out += bytes([b | (0x80 if n else 0)])
        if not n:
            return out


def _ld(num: int, payload: bytes) -> bytes:
    """A length-delimited field (wire type 2)."""
    return _varint(num << 3 | 2) + _varint(len(payload)) + payload


def test_certificate_signing_request_with_managed_fields():
    # what `kubectl certificate approve` PUTs to .../approval: the object it read, with a condition added
    entry = _ld(1, b"kubectl") + _ld(2, b"Update") + _ld(3, b"certificates.k8s.io/v1") + _ld(6, b"FieldsV1") + \
        _ld(7, _ld(1, b'{"f:spec":{"f:usages":{}}}'))
    meta = _ld(1, b"alice") + _ld(17, entry)
    spec = _ld(1, b"-----BEGIN CERTIFICATE REQUEST-----") + _ld(5, b"client auth") + \
        _ld(7, b"kubernetes.io/kube-apiserver-client") + _varint(8 << 3) + _varint(3600)
    cond = _ld(1, b"Approved") + _ld(2, b"KubectlApprove") + _ld(6, b"True")
    obj = _ld(1, meta) + _ld(2, spec) + _ld(3, _ld(1, cond))
    raw = protobuf.MAGIC + _ld(1, _ld(1, b"certificates.k8s.io/v1") + _ld(2, b"CertificateSigningRequest")) + _ld(2, obj)
    csr = protobuf.decode(raw)
    assert csr["metadata"] == {"name": "alice", "managedFields": [{
        "manager": "kubectl", "operation": "Update", "apiVersion": "certificates.k8s.io/v1",
        "fieldsType": "FieldsV1", "fieldsV1": {"f:spec": {"f:usages": {}}}}]}
    assert csr["spec"] == {"request": "LS0tLS1CRUdJTiBDRVJUSUZJQ0FURSBSRVFVRVNULS0tLS0=", "usages": ["client auth"],
                           "signerName": "kubernetes.io/kube-apiserver-client", "expirationSeconds": 3600}
    assert csr["status"] == {"conditions": [{"type": "Approved", "reason": "KubectlApprove", "status": "True"}]}
