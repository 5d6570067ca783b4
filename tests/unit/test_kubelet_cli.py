"""``controlplane kubelet`` and ``controlplane up`` flags: bad values are one-line usage
errors (exit 2) before anything connects, never tracebacks or a wait for the apiserver."""

from __future__ import annotations

import pytest
from click.testing import CliRunner

from components.kubelet.cli import command as kubelet
from controlplane.cli.up import command as up


@pytest.mark.parametrize("args, message", [
    (["--node-name", ""], "invalid node name ''"),
    (["--node-name", "Node_1"], "invalid node name 'Node_1'"),
    (["--hollow-nodes", "3", "--node-name-prefix", "X"], "invalid node name 'X0'"),
    (["--node-labels", "kgc=a,a=b=c"], "invalid --node-labels a=b=c"),
    (["--node-labels", "bad key=a"], "invalid --node-labels bad key=a"),
    (["--node-labels", "novalue"], "invalid node label 'novalue'"),
    (["--cpu", "lots"], "invalid --cpu 'lots'"),
    (["--image-pull-seconds", "-1"], "-1.0 is not in the range x>=0"),
    (["--register-with-taints", "k=v"], "invalid taint spec: k=v"),
    (["--kube-reserved", "gpu=1"], "invalid --kube-reserved term 'gpu=1'"),
    (["--image-pull-backoff-seconds", "0"], "0.0 is not in the range x>0"),
    (["--image-pull-backoff-max-seconds", "-5"], "-5.0 is not in the range x>0"),
    (["--root-dir", "/proc/1/nope"], "cannot use --root-dir '/proc/1/nope'"),
    (["--sync-frequency", "0s"], "invalid value '0s' for --sync-frequency: must be greater than zero"),
    (["--sync-frequency", "1x"], "invalid value '1x' for --sync-frequency"),
], ids=["empty node name", "node name with capitals and an underscore", "hollow node prefix makes bad names",
        "label with two equals signs", "label key with a space", "label without a value", "cpu not a quantity",
        "negative image pull time", "taint without effect", "reserved unknown resource",
        "a zero image pull back-off", "a negative image pull back-off maximum", "a root dir that cannot be made",
        "a zero sync frequency", "a sync frequency with an unknown unit"])
def test_kubelet_bad_flags_are_usage_errors(args, message):
    r = CliRunner().invoke(kubelet, ["--master", "http://127.0.0.1:1", *args])
    assert r.exit_code == 2, r.output
    assert message in r.output
    assert "Traceback" not in r.output


@pytest.mark.parametrize("args, message", [
    (["--port", "99999"], "99999 is not in the range 0<=x<=65535"),
    (["--etcd-port", "-1"], "-1 is not in the range 0<=x<=65535"),
    (["--node-labels", "kgc=a"], "expected NODE:key=value"),
    (["--nodes", ","], "at least one node is needed"),
    (["--config", "/nonexistent/cluster.yaml"], 'the path "/nonexistent/cluster.yaml" does not exist'),
    (["--config", "/dev/null", "--nodes", "a"], "--nodes cannot be used with --config"),
], ids=["port above 65535", "negative etcd port", "node label without its node", "no nodes",
        "missing config file", "config and nodes"])
def test_up_bad_flags_are_usage_errors(args, message):
    r = CliRunner().invoke(up, args)
    assert r.exit_code == 2, r.output
    assert message in r.output


def test_up_gives_each_kubelet_its_root_dir(tmp_path):
    from controlplane.cli.cluster import LocalCluster
    c = LocalCluster(str(tmp_path), nodes=("node01",), hollow_nodes=3)
    dirs = {s.name: s.args[s.args.index("--root-dir") + 1] for s in c._client_services() if "--root-dir" in s.args}
    assert dirs == {"kubelet-node01": str(tmp_path / "kubelet" / "node01"),
                    "kubelet-hollow": str(tmp_path / "kubelet" / "hollow")}
