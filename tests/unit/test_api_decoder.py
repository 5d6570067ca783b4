"""controlplane.api.decoder: decoding into the kinds' Go types with the Go decoder's messages."""

from __future__ import annotations

import pytest

from controlplane.api import decoder, schemas
from controlplane.api.decoder import DecodeError, decode
from controlplane.api.defaults import apply_defaults
from controlplane.api.resources import REGISTRY


def message(kind, obj):
    with pytest.raises(DecodeError) as e:
        decode(kind, obj)
    return e.value.message


def test_every_schema_type_resolves():
    for name, (_desc, fields) in schemas.TYPES.items():
        for t, _d in fields.values():
            decoder._spec(t)
    kinds = [r.kind for r in REGISTRY if r.schema is not None] + list(schemas.BODY_KINDS)
    assert {"Pod", "Binding", "Lease", "Scale", "Eviction", "DeleteOptions"} <= set(kinds)
    for kind in kinds:
        assert decoder.kind_spec(kind)[0] == "struct"


def test_integer_ranges_of_go_types():
    assert message("Deployment", {"spec": {"replicas": 2 ** 31}}) == (
        "json: cannot unmarshal number 2147483648 into Go struct field DeploymentSpec.spec.replicas of type int32")
    assert decode("Deployment", {"spec": {"replicas": 2 ** 31 - 1}}) == []
    assert message("Pod", {"spec": {"terminationGracePeriodSeconds": 2 ** 63}}).endswith(
        "PodSpec.spec.terminationGracePeriodSeconds of type int64")
    assert decode("Pod", {"spec": {"terminationGracePeriodSeconds": 2 ** 63 - 1}}) == []
    assert message("Deployment", {"spec": {"replicas": 1.5}}).startswith("json: cannot unmarshal number 1.5 ")
    assert message("Deployment", {"spec": {"replicas": True}}).startswith("json: cannot unmarshal bool ")


def test_paths_name_the_innermost_struct_and_skip_list_indices():
    assert message("Pod", {"spec": {"containers": [{"name": "c", "ports": [{"containerPort": "80"}]}]}}) == (
        "json: cannot unmarshal string into Go struct field ContainerPort.spec.containers.ports.containerPort "
        "of type int32")
    assert message("Pod", {"spec": {"containers": "x"}}) == (
        "json: cannot unmarshal string into Go struct field PodSpec.spec.containers of type []v1.Container")
    assert message("Pod", {"spec": "x"}) == "json: cannot unmarshal string into Go struct field Pod.spec of type v1.PodSpec"


def test_string_maps_bytes_quantities_times():
    assert message("ConfigMap", {"metadata": {"labels": {"a": 1}}}) == (
        "json: cannot unmarshal number into Go struct field ObjectMeta.metadata.labels of type string")
    assert message("ConfigMap", {"binaryData": {"a": "a!"}}) == "illegal base64 data at input byte 1"
    assert message("Secret", {"data": {"a": "YWJ"}}).startswith("illegal base64 data at input byte")
    assert decode("Secret", {"data": {"a": "YWJj", "b": ""}}) == []
    assert message("Node", {"status": {"capacity": {"cpu": "1x"}}}).startswith("quantities must match")
    assert decode("Node", {"status": {"capacity": {"cpu": "1500m", "pods": 110}}}) == []
    assert message("Pod", {"metadata": {"creationTimestamp": 5}}) == (
        "json: cannot unmarshal number into Go value of type string")
    assert decode("Lease", {"spec": {"renewTime": "2026-11-30T01:02:05.123456Z"}}) == []
    assert message("Service", {"spec": {"ports": [{"targetPort": 2 ** 40}]}}) == (
        "json: cannot unmarshal number 1099511627776 into Go value of type int32")


def test_nulls_are_zero_values_and_unknown_fields_are_dropped():
    obj = {"metadata": {"name": "a", "labels": {"x": None}, "foo": 1}, "spec": {"containers": [None]},
           "bar": {"deep": [1]}, "status": None}
    assert decode("Pod", obj) == ["metadata.foo", "bar"]
    assert obj == {"metadata": {"name": "a", "labels": {"x": ""}}, "spec": {"containers": [{}]}}
    kept = {"metadata": {"foo": 1, "annotations": {"a": None}}}
    assert decode("Pod", kept, prune=False, readonly=True) == ["metadata.foo"]
    assert kept == {"metadata": {"foo": 1, "annotations": {"a": None}}}


def test_open_types_keep_fields_they_do_not_list():
    obj = {"status": {"phase": "Running", "resize": "x", "containerStatuses": [{"name": "c", "allocatedResources": {}}]}}
    assert decode("Pod", obj) == [] and obj["status"]["resize"] == "x"


def test_defaulted_objects_have_no_unknown_fields():
    """What the apiserver's own defaulting produces decodes cleanly (no field of ours is unknown)."""
    pod = {"apiVersion": "v1", "kind": "Pod", "metadata": {"name": "p", "namespace": "d"},
           "spec": {"containers": [{"name": "c", "image": "nginx", "ports": [{"containerPort": 80}]}]}}
    dep = {"apiVersion": "apps/v1", "kind": "Deployment", "metadata": {"name": "d", "namespace": "d"},
           "spec": {"selector": {"matchLabels": {"a": "b"}},
                    "template": {"metadata": {"labels": {"a": "b"}}, "spec": pod["spec"]}}}
    svc = {"apiVersion": "v1", "kind": "Service", "metadata": {"name": "s", "namespace": "d"},
           "spec": {"ports": [{"port": 80}], "selector": {"a": "b"}}}
    for kind, obj in (("Pod", pod), ("Deployment", dep), ("Service", svc)):
        apply_defaults(kind, obj)
        assert decode(kind, obj) == [], kind


def nested(levels: int, leaf: object = 1) -> object:
    v = leaf
    for i in range(levels):
        v = {"a": v, "b": 2} if i % 2 else [0, v]
    return v


@pytest.mark.parametrize("value, limit", [
    (1, 0), ({}, 0), ({}, 1), ([[]], 1), ([[]], 2), ({"a": [{"b": 1}]}, 2), ({"a": [{"b": 1}]}, 3),
    (nested(100), 100), (nested(101), 100), (nested(99, {}), 100), (nested(100, []), 100),
    (nested(5000), 100), ([1, "x", {"k": [True, None]}, []], 3), ([1, "x", {"k": [True, None]}, []], 2),
], ids=["scalar", "empty-at-0", "empty-at-1", "nested-empty-too-deep", "nested-empty", "three-at-2",
        "three-at-3", "hundred", "hundred-and-one", "empty-leaf-at-hundred", "empty-leaf-beyond",
        "far-too-deep", "mixed-at-3", "mixed-at-2"])
def test_depth_at_most_is_depth_bounded(value, limit):
    """depth_at_most(v, n) answers depth(v) <= n (stopping at the first level too deep)."""
    assert decoder.depth_at_most(value, limit) is (decoder.depth(value) <= limit)


def test_depth_and_go_format():
    with pytest.raises(DecodeError) as e:
        decoder.check_depth([[[]]], limit=2)
    assert e.value.message == "invalid character '[' exceeded max depth"
    with pytest.raises(DecodeError) as e:
        decoder.check_depth({"a": float("nan")})
    assert e.value.message == "json: unsupported value: NaN"
    assert decoder.depth({"a": [{"b": 1}]}) == 3
    assert decoder.go_format({"b": [1, "x", None], "a": {"c": True}}) == "map[a:map[c:true] b:[1 x <nil>]]"
