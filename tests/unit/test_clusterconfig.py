"""The declarative cluster config (controlplane/clusterconfig.py) and the kubelet flags it drives."""

from __future__ import annotations

import pytest

from components.kubelet.node import NodeConfig, build_node, parse_reserved, parse_taints, resources
from controlplane.clusterconfig import ConfigError, expand, load, parse

BASE = {"apiVersion": "controlplane.io/v1alpha1", "kind": "Cluster"}


def cfg(**kw):
    return parse({**BASE, **kw}, "cluster.yaml")


def test_full_config_parses():
    c = cfg(nodes=[{"name": "node01", "labels": {"disktype": "ssd"},
                    "taints": [{"key": "dedicated", "value": "gpu", "effect": "NoSchedule"}],
                    "capacity": {"cpu": "8", "memory": "16Gi", "pods": "50"},
                    "allocatable": {"cpu": "7500m", "memory": "15Gi"}}],
            hollowNodePools=[{"namePrefix": "zone-a-", "count": 3,
                              "labels": {"topology.kubernetes.io/zone": "z{index%2}"}},
                             {"namePrefix": "zone-b-", "count": 2}],
            scheduler={"config": {"apiVersion": "kubescheduler.config.k8s.io/v1",
                                  "kind": "KubeSchedulerConfiguration"}},
            controllerManager={"controllers": ["*", "-cronjob"]},
            apiServer={"disableAdmissionPlugins": ["DefaultStorageClass"]})
    assert c.node_names == ("node01",)
    assert c.hollow_node_count == 5
    assert [p.first_index for p in c.hollow_pools] == [100, 103]
    assert c.controllers == ("*", "-cronjob")
    assert c.disable_admission_plugins == ("DefaultStorageClass",)
    assert c.scheduler_config["kind"] == "KubeSchedulerConfiguration"
    node = c.nodes[0]
    assert node.kubelet_args() == [
        "--node-labels", "disktype=ssd", "--register-with-taints", "dedicated=gpu:NoSchedule",
        "--cpu", "8", "--memory", "16Gi", "--pods", "50",
        "--kube-reserved", f"cpu=500m,memory={16 * 2**30 - 15 * 2**30 - 100 * 2**20}"]


def test_allocatable_round_trips_through_the_kubelet():
    node = cfg(nodes=[{"name": "n1", "capacity": {"cpu": "8", "memory": "16Gi"},
                       "allocatable": {"cpu": "7500m", "memory": "15Gi", "ephemeral-storage": "50Gi"}}]).nodes[0]
    kubelet = NodeConfig(name="n1", cpu="8", memory="16Gi", reserved=parse_reserved(
        node.kubelet_args()[node.kubelet_args().index("--kube-reserved") + 1]))
    cap, alloc = resources(kubelet)
    assert cap["cpu"] == "8" and alloc["cpu"] == "7500m"
    assert alloc["memory"] == f"{15 * 2**20}Ki"
    assert alloc["ephemeral-storage"] == str(50 * 2**30)


@pytest.mark.parametrize("doc, message", [
    pytest.param({"apiVersion": "v1", "kind": "Cluster", "nodes": [{"name": "a"}]},
                 "cluster.yaml: apiVersion: Unsupported value: 'v1'", id="wrong-apiVersion"),
    pytest.param({**BASE, "kind": "Config", "nodes": [{"name": "a"}]},
                 "cluster.yaml: kind: Unsupported value: 'Config'", id="wrong-kind"),
    pytest.param({**BASE}, "cluster.yaml: nodes: Required value", id="no-nodes"),
    pytest.param({**BASE, "nodes": [{"name": "a"}], "workers": 3},
                 "cluster.yaml: workers: unknown field 'workers'", id="unknown-top-field"),
    pytest.param({**BASE, "nodes": [{"name": "a", "label": {}}]},
                 "cluster.yaml: nodes[0].label: unknown field 'label'", id="unknown-node-field"),
    pytest.param({**BASE, "nodes": [{"name": "Node_1"}]},
                 "cluster.yaml: nodes[0].name: Invalid value: 'Node_1'", id="bad-node-name"),
    pytest.param({**BASE, "nodes": [{"name": "a"}, {"name": "a"}]},
                 'cluster.yaml: nodes[1].name: Duplicate value: "a"', id="duplicate-node"),
    pytest.param({**BASE, "nodes": [{"name": "a", "taints": [{"key": "k", "effect": "Foo"}]}]},
                 'cluster.yaml: nodes[0].taints[0].effect: Unsupported value: "Foo": supported values: '
                 '"NoExecute", "NoSchedule", "PreferNoSchedule"', id="bad-taint-effect"),
    pytest.param({**BASE, "nodes": [{"name": "a", "taints": [{"effect": "NoSchedule"}]}]},
                 "cluster.yaml: nodes[0].taints[0].key: Required value", id="taint-without-key"),
    pytest.param({**BASE, "nodes": [{"name": "a", "labels": {"k": "bad value"}}]},
                 "cluster.yaml: nodes[0].labels.k: Invalid value: 'bad value'", id="bad-label-value"),
    pytest.param({**BASE, "nodes": [{"name": "a", "labels": {"k": "z{index}"}}]},
                 "templates are for hollowNodePools only", id="template-on-named-node"),
    pytest.param({**BASE, "nodes": [{"name": "a", "capacity": {"cpu": "lots"}}]},
                 "cluster.yaml: nodes[0].capacity.cpu: Invalid value: 'lots'", id="bad-quantity"),
    pytest.param({**BASE, "nodes": [{"name": "a", "capacity": {"gpu": "1"}}]},
                 "cluster.yaml: nodes[0].capacity.gpu: unknown field 'gpu'", id="unknown-resource"),
    pytest.param({**BASE, "nodes": [{"name": "a", "capacity": {"cpu": "2"}, "allocatable": {"cpu": "3"}}]},
                 "cluster.yaml: nodes[0].allocatable.cpu: Invalid value: '3': must be at most the capacity",
                 id="allocatable-above-capacity"),
    pytest.param({**BASE, "hollowNodePools": [{"count": 0}]},
                 "cluster.yaml: hollowNodePools[0].count: Invalid value: 0", id="zero-pool"),
    pytest.param({**BASE, "hollowNodePools": [{"count": 1_000_000}, {"namePrefix": "b-", "count": 100_000}]},
                 "cluster.yaml: hollowNodePools: Invalid value: 1100000: at most 1074074 hollow nodes in all",
                 id="too-many-hollow-nodes"),
    pytest.param({**BASE, "hollowNodePools": [{"count": 1}, {"count": 2}]},
                 'cluster.yaml: hollowNodePools[1].namePrefix: Duplicate value: "hollow-"', id="duplicate-pool"),
    pytest.param({**BASE, "nodes": [{"name": "a"}], "scheduler": {"config": {"kind": "Pod"}}},
                 "cluster.yaml: scheduler.config.kind: Unsupported value: 'Pod'", id="scheduler-config-kind"),
    pytest.param({**BASE, "nodes": [{"name": "a"}], "scheduler": {"configFile": "x.yaml", "config": {}}},
                 "cluster.yaml: scheduler: Forbidden", id="scheduler-config-and-file"),
    pytest.param({**BASE, "nodes": [{"name": "a"}], "controllerManager": {"controllers": "job"}},
                 "cluster.yaml: controllerManager.controllers: Invalid value: str: must be a list",
                 id="controllers-not-a-list"),
    pytest.param(["not", "a", "mapping"], "cluster.yaml: : Invalid value: list: must be a mapping", id="not-a-mapping"),
])
def test_bad_config_names_the_field(doc, message):
    with pytest.raises(ConfigError) as e:
        parse(doc, "cluster.yaml")
    assert message in str(e.value)
    assert "\n" not in str(e.value)


@pytest.mark.parametrize("template, index, want", [
    pytest.param("zone-{index%3}", 5, "zone-2", id="modulo"),
    pytest.param("n{index}", 7, "n7", id="index"),
    pytest.param("plain", 3, "plain", id="no-template"),
    pytest.param("{index}-{index%2}", 3, "3-1", id="two"),
])
def test_expand(template, index, want):
    assert expand(template, index) == want


def test_scheduler_config_file_relative_to_the_config(tmp_path):
    (tmp_path / "sched.yaml").write_text("apiVersion: kubescheduler.config.k8s.io/v1\n"
                                         "kind: KubeSchedulerConfiguration\nprofiles: [{schedulerName: x}]\n")
    (tmp_path / "cluster.yaml").write_text("apiVersion: controlplane.io/v1alpha1\nkind: Cluster\n"
                                           "nodes: [{name: a}]\nscheduler: {configFile: sched.yaml}\n")
    c = load(str(tmp_path / "cluster.yaml"))
    assert c.scheduler_config["profiles"] == [{"schedulerName": "x"}]


@pytest.mark.parametrize("content, message", [
    pytest.param("a: [", "error parsing", id="malformed-yaml"),
    pytest.param("---\na: 1\n---\nb: 2\n", "expected one YAML document, found 2", id="two-documents"),
])
def test_unreadable_file(tmp_path, content, message):
    p = tmp_path / "c.yaml"
    p.write_text(content)
    with pytest.raises(ConfigError, match=message):
        load(str(p))


def test_missing_file(tmp_path):
    with pytest.raises(ConfigError, match="does not exist"):
        load(str(tmp_path / "nope.yaml"))


@pytest.mark.parametrize("text, want", [
    pytest.param("dedicated=gpu:NoSchedule", [{"key": "dedicated", "value": "gpu", "effect": "NoSchedule"}],
                 id="key-value-effect"),
    pytest.param("k:NoExecute,a=b:PreferNoSchedule",
                 [{"key": "k", "effect": "NoExecute"}, {"key": "a", "value": "b", "effect": "PreferNoSchedule"}],
                 id="two"),
    pytest.param("", [], id="empty"),
])
def test_parse_taints(text, want):
    assert parse_taints(text) == want


@pytest.mark.parametrize("text", [
    pytest.param("k=v", id="no-effect"), pytest.param("k=v:Sometimes", id="bad-effect"),
    pytest.param("=v:NoSchedule", id="no-key"),
])
def test_parse_taints_refuses(text):
    with pytest.raises(ValueError):
        parse_taints(text)


def test_registered_node_carries_taints():
    node = build_node(NodeConfig(name="n1", taints=[{"key": "k", "effect": "NoSchedule"}]), [])
    assert node["spec"]["taints"] == [{"key": "k", "effect": "NoSchedule"}]
    assert "taints" not in build_node(NodeConfig(name="n2"), [])["spec"]


@pytest.mark.parametrize("controllers, name, want", [
    pytest.param(None, "job", True, id="default-all"),
    pytest.param(("*", "-job"), "job", False, id="minus-wins"),
    pytest.param(("job",), "job", True, id="named"),
    pytest.param(("job",), "cronjob", False, id="not-named"),
    pytest.param(("-job", "*"), "cronjob", True, id="star-after-minus"),
])
def test_controller_enabled(controllers, name, want):
    from controlplane.clusterconfig import controller_enabled
    assert controller_enabled(controllers, name) is want
