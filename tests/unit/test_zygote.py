"""controlplane.cli.zygote (the fork server of the test clusters) and controlplane.sdnotify (the
processes' READY=1): real processes forked from one zygote, their exits, logs and readiness."""

from __future__ import annotations

import asyncio
import os
import signal
import subprocess
import sys

import pytest

from controlplane import sdnotify
from controlplane.cli import zygote
from controlplane.cli.cluster import free_port

pytestmark = pytest.mark.skipif(not zygote.available(), reason="the zygote needs Linux")

#: the zygote preloads little here: what these tests fork imports the rest itself
LIGHT = ("controlplane.cli.main",)


@pytest.fixture(scope="module")
def z():
    zy = zygote.Zygote(preload=LIGHT)
    zy.start()
    yield zy
    zy.close()


def spawn(z, tmp_path, argv, **env):
    log = tmp_path / f"{argv[0].strip('-')}.log"
    with open(log, "ab") as f:
        proc = z.spawn(argv, log_fd=f.fileno(), env=dict(os.environ, **env))
    return proc, log


async def test_a_forked_command_writes_its_output_to_the_log_and_exits_0(z, tmp_path):
    proc, log = spawn(z, tmp_path, ["--version"])
    assert await asyncio.wait_for(proc.wait(), 120) == 0
    assert proc.returncode == 0
    assert "version" in log.read_text()


async def test_a_usage_error_is_exit_status_2_as_from_the_command_line(z, tmp_path):
    proc, log = spawn(z, tmp_path, ["no-such-command"])
    assert await asyncio.wait_for(proc.wait(), 120) == 2
    assert "No such command 'no-such-command'" in log.read_text()


async def test_the_child_gets_the_environment_it_was_given(z, tmp_path):
    # click reads every option from CONTROLPLANE_<SUBCOMMAND>_<OPTION>: a bad value from the
    # environment is a usage error naming it
    proc, log = spawn(z, tmp_path, ["etcd"], CONTROLPLANE_ETCD_MAX_REQUEST_BYTES="not-a-number")
    assert await asyncio.wait_for(proc.wait(), 120) == 2
    assert "not-a-number" in log.read_text()


async def test_a_forked_etcd_notifies_ready_and_a_killed_one_reports_the_signal(z, tmp_path):
    url = f"http://127.0.0.1:{free_port()}"
    sock = sdnotify.NotifySocket(f"cp-test-{os.getpid()}-etcd")
    try:
        proc, log = spawn(z, tmp_path, ["etcd", "--listen-client-urls", url, "--advertise-client-urls", url,
                                        "--data-dir", str(tmp_path / "etcd")], NOTIFY_SOCKET=sock.name)
        await asyncio.wait_for(sock.wait_ready(), 180)
        assert proc.returncode is None
        assert "etcd.ready" in log.read_text()
        proc.kill()
        assert await asyncio.wait_for(proc.wait(), 120) == -signal.SIGKILL
    finally:
        sock.close()


async def test_an_etcd_started_by_exec_notifies_ready_too(tmp_path):
    url = f"http://127.0.0.1:{free_port()}"
    sock = sdnotify.NotifySocket(f"cp-test-{os.getpid()}-exec")
    p = subprocess.Popen([sys.executable, "-m", "controlplane", "etcd", "--listen-client-urls", url,
                          "--advertise-client-urls", url, "--data-dir", str(tmp_path / "etcd")],
                         env=dict(os.environ, NOTIFY_SOCKET=sock.name),
                         stdout=subprocess.DEVNULL, stderr=subprocess.DEVNULL)
    try:
        await asyncio.wait_for(sock.wait_ready(), 180)
        assert p.poll() is None
    finally:
        p.terminate()
        p.wait(30)
        sock.close()


def test_notify_without_a_socket_sends_nothing_and_unsets_the_variable(monkeypatch):
    monkeypatch.delenv("NOTIFY_SOCKET", raising=False)
    assert sdnotify.notify() is False
    monkeypatch.setenv("NOTIFY_SOCKET", "@cp-test-nobody-listens")
    assert sdnotify.notify() is False  # nobody listening is not the service's error
    assert "NOTIFY_SOCKET" not in os.environ


async def test_notify_reaches_the_supervisors_socket(monkeypatch):
    sock = sdnotify.NotifySocket(f"cp-test-{os.getpid()}-inproc")
    try:
        monkeypatch.setenv("NOTIFY_SOCKET", sock.name)
        assert sdnotify.notify("STATUS=starting\nREADY=1")
        await asyncio.wait_for(sock.wait_ready(), 5)
        assert sock.ready
    finally:
        sock.close()


def test_spawning_after_close_is_a_one_line_error(tmp_path):
    zy = zygote.Zygote(preload=LIGHT)
    zy.start()
    zy.close()
    with pytest.raises(RuntimeError, match="^the zygote is not running$"):
        zy.spawn(["--version"], log_fd=1, env={})


async def test_a_service_is_forked_while_the_zygote_still_imports_what_others_need(tmp_path):
    """Requests are taken between imports: one whose modules are in is forked before the rest of
    the preload (here a module that waits for a file) has been imported."""
    # holds the preload until a request is waiting on the zygote's socket (its fd is argv[1])
    (tmp_path / "cp_wait_request.py").write_text(
        "import select, sys\nselect.select([int(sys.argv[1])], [], [], 120)\n")
    (tmp_path / "cp_slow_preload.py").write_text(
        "import os, time\n"
        f"while not os.path.exists({str(tmp_path / 'go')!r}):\n"
        "    time.sleep(0.01)  # the module's import holds until the test lets it finish\n")
    env = dict(os.environ, PYTHONPATH=os.pathsep.join([str(tmp_path), os.environ.get("PYTHONPATH", "")]))
    zy = zygote.Zygote(preload=("cp_wait_request", "controlplane.cli.main", "cp_slow_preload"), env=env)
    zy.launch()
    try:
        assert zygote.needs_of(["etcd", "--help"], zy.preload) == ["controlplane.cli.main"]
        proc, log = spawn(zy, tmp_path, ["etcd", "--help"])  # answered with a pid: forked
        assert proc.pid > 0 and not zy.preloaded
        (tmp_path / "go").touch()
        zy.wait_preloaded(120)
        assert zy.preloaded and zy.start_seconds > 0
        assert await asyncio.wait_for(proc.wait(), 120) == 0
        assert "Usage:" in log.read_text()
    finally:
        (tmp_path / "go").touch()
        zy.close()


def test_a_command_of_no_service_waits_for_every_preload_module():
    assert zygote.needs_of(["--version"]) == list(zygote.PRELOAD)
    assert set(zygote.needs_of(["kubelet"])) == set(zygote.COMMON_MODULES) | set(zygote.SERVICE_MODULES["kubelet"])
