"""Bad input to the ``controlplane`` command lines: one error line, a non-zero exit, never a
traceback. Each case runs ``python -m controlplane ...`` as a user would; none needs a
cluster (the errors come before anything connects, or from an unreachable address).

Runtime errors exit 1 (kubectl prints ``error: error parsing FILE: ...`` and exits 1);
usage errors (a flag's value) exit 2 with click's usage hint above the ``Error:`` line.
"""

from __future__ import annotations

import subprocess
import sys

import pytest

from tests.integration.conftest import ROOT

pytestmark = pytest.mark.integration

UNREACHABLE = "http://127.0.0.1:9"  # the discard port: nothing listens


def run(*args: str, timeout: float = 60) -> subprocess.CompletedProcess:
    return subprocess.run([sys.executable, "-m", "controlplane", *args], capture_output=True,
                          text=True, timeout=timeout, cwd=ROOT)


def error_lines(p: subprocess.CompletedProcess) -> list[str]:
    return [line for line in p.stderr.splitlines() if line.startswith(("Error:", "error:"))]


@pytest.fixture
def files(tmp_path):
    deep = tmp_path / "deep.yaml"
    deep.write_text("[" * 10_000 + "]" * 10_000 + "\n")
    deep_block = tmp_path / "deep-block.yaml"
    deep_block.write_text("".join(" " * i + "a:\n" for i in range(10_000)))
    noname = tmp_path / "noname.yaml"
    noname.write_text("apiVersion: apps/v1\nkind: Deployment\nmetadata: {}\n")
    return {"binary": "/bin/ls", "deep": str(deep), "deep-block": str(deep_block),
            "missing": str(tmp_path / "missing.yaml"), "dir": str(tmp_path), "noname": str(noname)}


@pytest.mark.parametrize("case,message", [
    ("binary", "error parsing /bin/ls: yaml: control characters are not allowed"),
    ("deep", "yaml: exceeded maximum nesting depth"),
    ("deep-block", "yaml: exceeded maximum nesting depth"),
    ("missing", "missing.yaml\" does not exist"),
    ("dir", "is a directory"),
    ("noname", "metadata.name is required"),
])
def test_demo_manifest_bad_input_is_one_line_and_exit_1(files, case, message):
    p = run("demo", "-f", files[case])
    assert p.returncode == 1, p.stderr
    assert "Traceback" not in p.stderr
    assert len(p.stderr.strip().splitlines()) == 1 and message in p.stderr, p.stderr


@pytest.mark.parametrize("case,message", [
    ("binary", "control characters are not allowed"),
    ("deep", "exceeded maximum nesting depth"),
    ("missing", "does not exist"),
])
def test_scheduler_config_bad_file_is_one_line(files, case, message):
    p = run("scheduler", "--config", files[case], "--master", UNREACHABLE)
    assert p.returncode == 2 and "Traceback" not in p.stderr, p.stderr
    assert len(error_lines(p)) == 1 and message in error_lines(p)[0], p.stderr


@pytest.mark.parametrize("command", [("trace",), ("explain", "pod", "x"), ("controller-manager",)])
def test_binary_kubeconfig_is_one_line(command):
    p = run(*command, "--kubeconfig", "/bin/ls")
    assert p.returncode == 2 and "Traceback" not in p.stderr, p.stderr
    assert error_lines(p) == ["Error: kubeconfig '/bin/ls': error parsing /bin/ls: yaml: control "
                              "characters are not allowed (position 0)"], p.stderr


@pytest.mark.parametrize("args", [("trace",), ("trace", "--follow"), ("explain", "pod", "x")])
def test_unreachable_apiserver_is_one_line_and_exit_1(args):
    p = run(*args, "--master", UNREACHABLE)
    assert p.returncode == 1 and "Traceback" not in p.stderr, p.stderr
    assert len(p.stderr.strip().splitlines()) == 1
    assert f"cannot reach the apiserver at {UNREACHABLE}" in p.stderr


@pytest.mark.parametrize("args,flag", [
    (("demo", "--timeout", "abc"), "--timeout"),
    (("trace", "--since", "abc"), "--since"),
    (("apiserver", "--compaction-interval", "-1"), "--compaction-interval"),
    (("apiserver", "--bookmark-interval", "0"), "--bookmark-interval"),
    (("apiserver", "--min-request-timeout", "-5"), "--min-request-timeout"),
    (("apiserver", "--min-request-timeout", "1.5"), "--min-request-timeout"),
    (("up", "--etcd-port", "70000"), "--etcd-port"),
    (("demo", "--timeout", "nan"), "--timeout"),
    (("demo", "--timeout", "0"), "--timeout"),
    (("demo", "--request-timeout", "soon"), "--request-timeout"),
    (("trace", "--request-timeout", "-1"), "--request-timeout"),
    (("trace", "--since", "nan"), "--since"),
    (("trace", "--since", "-5"), "--since"),
    (("explain", "pod", "x", "--request-timeout", "nan"), "--request-timeout"),
    (("kubelet", "--lease-renew-seconds", "0"), "--lease-renew-seconds"),
    (("kubelet", "--lease-renew-seconds", "nan"), "--lease-renew-seconds"),
    (("kubelet", "--node-status-report-frequency", "-1s"), "--node-status-report-frequency"),
    (("controller-manager", "--allocate-node-cidrs"), "--cluster-cidr"),
    (("kubelet", "--crashloop-backoff-seconds", "0"), "--crashloop-backoff-seconds"),
    (("kubelet", "--image-pull-seconds", "nan"), "--image-pull-seconds"),
    (("kubelet", "--container-start-seconds", "inf"), "--container-start-seconds"),
    (("kubelet", "--image-pull-seconds", "-0.5"), "--image-pull-seconds"),
    (("kubelet", "--pods", "-3"), "--pods"),
    (("kubelet", "--pods", "2.5"), "--pods"),
    (("kubelet", "--cpu", "-1"), "--cpu"),
    (("kubelet", "--memory", "-8Gi"), "--memory"),
    (("apiserver", "--bookmark-interval", "nan"), "--bookmark-interval"),
    (("apiserver", "--compaction-interval", "inf"), "--compaction-interval"),
    (("controller-manager", "--node-monitor-period", "0s"), "node-monitor-period"),
    (("controller-manager", "--node-monitor-grace-period", "nan"), "--node-monitor-grace-period"),
    (("controller-manager", "--terminated-pod-gc-threshold", "-1"), "--terminated-pod-gc-threshold"),
    (("scheduler", "--explain-max-nodes", "-1"), "--explain-max-nodes"),
    (("scheduler", "--leader-elect", "--leader-elect-retry-period", "0s"), "retryPeriod"),
    (("etcd", "--grpc-keepalive-min-time", "nan"), "--grpc-keepalive-min-time"),
    (("etcd", "--grpc-keepalive-interval", "-1s"), "--grpc-keepalive-interval"),
    (("etcd", "--grpc-keepalive-timeout", "0s"), "--grpc-keepalive-timeout"),
    (("etcd", "--experimental-watch-progress-notify-interval", "0"),
     "--experimental-watch-progress-notify-interval"),
    (("etcd", "--snapshot-count", "0"), "--snapshot-count"),
    (("etcd", "--max-request-bytes", "-1"), "--max-request-bytes"),
    (("up", "--hollow-nodes", "-1"), "--hollow-nodes"),
])
def test_bad_flag_value_is_a_usage_error(args, flag):
    p = run(*args)
    assert p.returncode == 2 and "Traceback" not in p.stderr, p.stderr
    assert len(error_lines(p)) == 1 and flag in error_lines(p)[0], p.stderr


@pytest.fixture
def silent():
    """An address that accepts connections (the kernel completes them) but never answers."""
    import socket

    sock = socket.socket()
    sock.bind(("127.0.0.1", 0))
    sock.listen(16)
    yield f"http://127.0.0.1:{sock.getsockname()[1]}"
    sock.close()


@pytest.mark.parametrize("args", [("trace",), ("trace", "--follow"), ("explain", "pod", "x"), ("demo",)])
def test_apiserver_that_never_answers_is_one_line_and_exit_1(silent, args):
    """``--request-timeout`` (kubectl's flag; our default 30 s) ends the command with one line."""
    p = run(*args, "--master", silent, "--request-timeout", "1s")
    assert p.returncode == 1 and "Traceback" not in p.stderr, p.stderr
    assert p.stderr.strip().splitlines() == [
        f"Error: the apiserver at {silent} did not answer within 1s (--request-timeout)"], p.stderr
