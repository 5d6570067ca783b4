"""``--authorization-mode``: the apiserver's flag (a bad value is a usage error) and
``controlplane up``'s plumbing (off unless asked; with Node, NodeRestriction too)."""

from __future__ import annotations

import pytest
from click.testing import CliRunner

from controlplane.cli.cluster import LocalCluster


@pytest.mark.parametrize("value, message", [
    ("RBAC,Bogus", 'authorization-mode "Bogus" is not a valid mode'),
    ("RBAC,RBAC", 'authorization-mode "RBAC" has mode specified more than once'),
    ("", "at least one authorization-mode must be passed"),
], ids=["unknown", "twice", "empty"])
def test_bad_authorization_mode_is_a_usage_error(value, message):
    from components.apiserver.cli import command
    r = CliRunner().invoke(command, ["--etcd-servers", "http://127.0.0.1:1", "--authorization-mode", value])
    assert r.exit_code == 2 and message in r.output and "Traceback" not in r.output, r.output


@pytest.mark.parametrize("mode, extra", [
    (None, []),
    ("RBAC", ["--authorization-mode", "RBAC"]),
    ("Node,RBAC", ["--authorization-mode", "Node,RBAC", "--enable-admission-plugins", "NodeRestriction"]),
], ids=["none-apiserver-default", "rbac", "node-rbac"])
def test_up_passes_the_mode_to_the_apiserver(tmp_path, mode, extra):
    c = LocalCluster(str(tmp_path), apiserver_port=6443, authorization_mode=mode)
    args = c._apiserver_service("http://127.0.0.1:2379").args
    tail = args[args.index("--authorization-mode"):] if "--authorization-mode" in args else []
    assert tail[:len(extra)] == extra and "--authorization-mode" not in tail[len(extra):]
    assert ("--enable-admission-plugins" in args) == bool(mode and "Node" in mode)


def test_up_defaults_to_node_rbac(tmp_path):
    args = LocalCluster(str(tmp_path), apiserver_port=6443)._apiserver_service("http://127.0.0.1:2379").args
    assert args[args.index("--authorization-mode") + 1] == "Node,RBAC"


def test_up_writes_the_default_audit_policy_once_and_logs_to_the_data_dir(tmp_path):
    args = LocalCluster(str(tmp_path), apiserver_port=6443)._apiserver_service("http://127.0.0.1:2379").args
    policy = tmp_path / "audit-policy.yaml"
    assert args[args.index("--audit-policy-file") + 1] == str(policy)
    assert args[args.index("--audit-log-path") + 1] == str(tmp_path / "logs" / "audit.log")
    from components.apiserver.audit.policy import load_policy
    assert load_policy(str(policy)).rules[-1].level == "Metadata"
    policy.write_text(policy.read_text().replace("- level: Metadata\n", "- level: Request\n"))
    LocalCluster(str(tmp_path), apiserver_port=6443)._apiserver_service("http://127.0.0.1:2379")
    assert load_policy(str(policy)).rules[-1].level == "Request"  # an edited policy is kept


def test_up_no_audit_passes_no_audit_flags(tmp_path):
    args = LocalCluster(str(tmp_path), apiserver_port=6443, audit=False)._apiserver_service("http://127.0.0.1:2379").args
    assert not [a for a in args if a.startswith("--audit")]
