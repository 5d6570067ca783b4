"""The audit policy's evaluation and loading (``pkg/audit/policy/checker.go``, ``reader.go``,
``pkg/apis/audit/validation``) and the log backend's batching and rotation."""

from __future__ import annotations

import asyncio
import json

import pytest

from components.apiserver.audit import policy as P
from components.apiserver.audit.backend import LogBackend
from components.apiserver.auth import Attributes, UserInfo

ALICE = UserInfo("alice", groups=("devs", "system:authenticated"))
NODE = UserInfo("system:node:n1", groups=("system:nodes", "system:authenticated"))


def res(verb: str, resource: str, ns: str = "default", name: str = "", group: str = "", sub: str = "",
        user: UserInfo = ALICE) -> Attributes:
    return Attributes(user, verb, True, namespace=ns, api_group=group, api_version="v1", resource=resource,
                      subresource=sub, name=name)


def nonres(path: str, user: UserInfo = ALICE) -> Attributes:
    return Attributes(user, "get", False, path=path)


def policy(*rules: dict, **top) -> P.Policy:
    return P.parse_policy({"apiVersion": "audit.k8s.io/v1", "kind": "Policy", "rules": list(rules), **top})


@pytest.mark.parametrize("level", ["None", "Metadata", "Request", "RequestResponse"])
def test_each_level_is_the_matching_rules(level):
    assert policy({"level": level}).evaluate(res("get", "pods")).level == level


def test_first_matching_rule_wins():
    p = policy({"level": "None", "resources": [{"resources": ["secrets"]}]},
               {"level": "RequestResponse", "resources": [{"resources": ["secrets", "pods"]}]},
               {"level": "Metadata"})
    assert p.evaluate(res("get", "secrets")).level == "None"
    assert p.evaluate(res("get", "pods")).level == "RequestResponse"
    assert p.evaluate(res("get", "configmaps")).level == "Metadata"


def test_no_matching_rule_is_level_none_with_the_policys_stages():
    p = policy({"level": "Metadata", "users": ["bob"]}, omitStages=["RequestReceived"])
    cfg = p.evaluate(res("get", "pods"))
    assert (cfg.level, cfg.omit_stages) == ("None", frozenset({"RequestReceived"}))


def test_omit_stages_are_the_rules_joined_with_the_policys():
    p = policy({"level": "Metadata", "omitStages": ["ResponseStarted"]}, omitStages=["RequestReceived"])
    assert p.evaluate(res("get", "pods")).omit_stages == {"RequestReceived", "ResponseStarted"}


def test_omit_managed_fields_rule_overrides_policy():
    p = policy({"level": "Request", "verbs": ["create"], "omitManagedFields": False}, {"level": "Request"},
               omitManagedFields=True)
    assert p.evaluate(res("create", "pods")).omit_managed_fields is False
    assert p.evaluate(res("get", "pods")).omit_managed_fields is True


@pytest.mark.parametrize("rule,attrs,matches", [
    ({"users": ["alice"]}, res("get", "pods"), True),
    ({"users": ["bob"]}, res("get", "pods"), False),
    ({"userGroups": ["system:nodes"]}, res("get", "pods", user=NODE), True),
    ({"userGroups": ["system:nodes"]}, res("get", "pods"), False),
    ({"verbs": ["get", "list"]}, res("list", "pods"), True),
    ({"verbs": ["get"]}, res("watch", "pods"), False),
    ({"namespaces": ["kube-system"]}, res("get", "pods", ns="kube-system"), True),
    ({"namespaces": ["kube-system"]}, res("get", "pods"), False),
    ({"namespaces": [""]}, res("get", "nodes", ns=""), True),
    ({"namespaces": ["default"]}, nonres("/healthz"), False),
    ({"resources": [{"group": "apps"}]}, res("get", "deployments", group="apps"), True),
    ({"resources": [{"group": "apps"}]}, res("get", "pods"), False),
    ({"resources": [{"resources": ["pods"]}]}, res("get", "pods", sub="status"), False),
    ({"resources": [{"resources": ["pods/status"]}]}, res("get", "pods", sub="status"), True),
    ({"resources": [{"resources": ["*/status"]}]}, res("get", "pods", sub="log"), False),
    ({"resources": [{"resources": ["*/status"]}]}, res("update", "pods", sub="status"), True),
    ({"resources": [{"resources": ["pods/*"]}]}, res("get", "pods", sub="log"), True),
    ({"resources": [{"resources": ["*"]}]}, res("get", "pods", sub="log"), True),
    ({"resources": [{"resources": ["configmaps"], "resourceNames": ["cfg"]}]},
     res("get", "configmaps", name="cfg"), True),
    ({"resources": [{"resources": ["configmaps"], "resourceNames": ["cfg"]}]},
     res("get", "configmaps", name="other"), False),
    ({"resources": [{"resources": ["pods"]}]}, nonres("/api"), False),
    ({"nonResourceURLs": ["/healthz*"]}, nonres("/healthz/etcd"), True),
    ({"nonResourceURLs": ["/healthz"]}, nonres("/healthz/etcd"), False),
    ({"nonResourceURLs": ["*"]}, nonres("/metrics"), True),
    ({"nonResourceURLs": ["*"]}, res("get", "pods"), False),
])
def test_rule_matching(rule, attrs, matches):
    assert policy({"level": "Metadata", **rule}).evaluate(attrs).level == ("Metadata" if matches else "None")


@pytest.mark.parametrize("doc,message", [
    ({"apiVersion": "audit.k8s.io/v1", "kind": "Policy", "rules": []}, "loaded illegal policy with 0 rules"),
    ({"apiVersion": "audit.k8s.io/v1", "kind": "Policy", "rules": [{"level": "Everything"}]},
     'rules[0].level: Unsupported value: "Everything": supported values: "None", "Metadata", "Request", '
     '"RequestResponse"'),
    ({"apiVersion": "audit.k8s.io/v1", "kind": "Policy", "rules": [{}]}, "rules[0].level: Required value"),
    ({"apiVersion": "audit.k8s.io/v1", "kind": "Policy", "rules": [{"level": "None", "nonResourceURLs": ["healthz"]}]},
     """rules[0].nonResourceURLs[0]: Invalid value: "healthz": non-resource URL rules must begin with a '/' character"""),
    ({"apiVersion": "audit.k8s.io/v1", "kind": "Policy", "rules": [{"level": "None", "nonResourceURLs": ["/a*b"]}]},
     """rules[0].nonResourceURLs[0]: Invalid value: "/a*b": non-resource URL wildcards '*' must be the final """
     "character of the rule"),
    ({"apiVersion": "audit.k8s.io/v1", "kind": "Policy",
      "rules": [{"level": "None", "nonResourceURLs": ["/a"], "namespaces": ["x"]}]},
     'rules[0].nonResourceURLs: Invalid value: ["/a"]: rules cannot apply to both regular resources and '
     "non-resource URLs"),
    ({"apiVersion": "audit.k8s.io/v1", "kind": "Policy", "rules": [{"level": "None", "omitStages": ["Later"]}]},
     'rules[0].omitStages[0]: Invalid value: "Later": allowed stages are '
     "RequestReceived,ResponseStarted,ResponseComplete,Panic"),
    ({"apiVersion": "audit.k8s.io/v1", "kind": "Policy",
      "rules": [{"level": "None", "resources": [{"resourceNames": ["x"]}]}]},
     'rules[0].resources.resourceNames: Invalid value: ["x"]: using resourceNames requires at least one resource'),
    ({"apiVersion": "audit.k8s.io/v1beta1", "kind": "Policy", "rules": [{"level": "None"}]},
     "unknown group version field audit.k8s.io/v1beta1, Kind=Policy in policy"),
])
def test_invalid_policy(doc, message):
    with pytest.raises(P.PolicyError) as e:
        P.parse_policy(doc)
    assert str(e.value) == message


def test_load_policy_from_yaml_file(tmp_path):
    f = tmp_path / "policy.yaml"
    f.write_text("apiVersion: audit.k8s.io/v1\nkind: Policy\nrules:\n- level: Metadata\n")
    assert P.load_policy(str(f)).evaluate(res("get", "pods")).level == "Metadata"
    with pytest.raises(P.PolicyError, match='failed to read file path ".*missing.yaml"'):
        P.load_policy(str(tmp_path / "missing.yaml"))


def test_backend_writes_queued_lines_in_one_flush(tmp_path):
    path = tmp_path / "audit.log"
    b = LogBackend(str(path))

    async def run() -> None:
        b.start()
        for i in range(3):
            b.process(json.dumps({"i": i}).encode() + b"\n")
        assert path.read_bytes() == b""  # nothing written on the request path
        await b.stop()
    asyncio.run(run())
    assert [json.loads(line)["i"] for line in path.read_text().splitlines()] == [0, 1, 2]


def test_backend_rotates_past_max_size_and_keeps_max_backups(tmp_path):
    path = tmp_path / "audit.log"
    b = LogBackend(str(path), max_size_mb=1, max_backups=1)
    b.open()
    line = b"x" * (600 * 1024) + b"\n"
    for _ in range(4):
        b.process(line)
        b.flush()
    backups = sorted(p.name for p in tmp_path.iterdir() if p.name != "audit.log")
    assert len(backups) == 1 and backups[0].startswith("audit-") and backups[0].endswith(".log")
    assert path.stat().st_size == len(line)


def test_memoized_decisions_follow_names_only_when_a_rule_names_objects():
    named = policy({"level": "RequestResponse", "resources": [{"group": "", "resources": ["configmaps"],
                                                               "resourceNames": ["a"]}]},
                   {"level": "Metadata"})
    for _ in range(2):  # the second pass answers from the memo
        assert named.evaluate(res("delete", "configmaps", name="a")).level == "RequestResponse"
        assert named.evaluate(res("delete", "configmaps", name="b")).level == "Metadata"
    plain = policy({"level": "None", "nonResourceURLs": ["/healthz*"]}, {"level": "Metadata"})
    for name in ("a", "b", "c"):
        assert plain.evaluate(res("delete", "configmaps", name=name)).level == "Metadata"
    assert len(plain._memo) == 1
    assert plain.evaluate(nonres("/healthz")).level == "None"
    assert plain.evaluate(nonres("/version")).level == "Metadata"
