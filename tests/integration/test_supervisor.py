"""The supervisor (``controlplane up``) and its children, with real processes.

* Children end with their parent however it ends: a parent started with
  :func:`controlplane.lifeline.child_kwargs` is killed with SIGKILL, and its child
  (PR_SET_PDEATHSIG when spawned from the main thread; the lifeline pipe when spawned
  from another thread) is gone within a timeout.
* ``controlplane up`` holds ``<data-dir>/.lock``: a second one on the same data dir
  fails at once with a one-line error; after ``kill -9`` of the first, every child
  exits, the lock stays taken until the last child is gone, and then a second
  ``controlplane up`` starts on the same files with the acknowledged writes there.
"""

from __future__ import annotations

import os
import re
import signal
import subprocess
import sys
import textwrap
import time

import pytest

from controlplane.cli.cluster import pid_alive
from tests.integration.conftest import ROOT, LineReader, start_up, stop

pytestmark = pytest.mark.integration


def wait_gone(pids: list[int], timeout: float = 30.0) -> list[int]:
    """The pids still alive (not zombies) after ``timeout`` s, or [] as soon as all are gone."""
    deadline = time.monotonic() + timeout
    while True:
        alive = [p for p in pids if pid_alive(p)]
        if not alive or time.monotonic() > deadline:
            return alive
        time.sleep(0.05)  # polling /proc for the exits (no event to wait on for a non-child)


PARENT = textwrap.dedent("""
    import subprocess, sys, threading
    from controlplane.lifeline import child_kwargs
    child = [sys.executable, "-c", "import asyncio; from controlplane import aio\\n"
             "async def main():\\n    print('child ready', flush=True)\\n    await asyncio.Event().wait()\\n"
             "aio.run(main())"]
    pids = []
    spawn = lambda: pids.append(subprocess.Popen(child, **child_kwargs()).pid)
    if sys.argv[1] == "thread":
        t = threading.Thread(target=spawn)
        t.start()
        t.join()
    else:
        spawn()
    print("spawned", pids[0], flush=True)
    sys.stdin.read()
""")


@pytest.mark.parametrize("spawned_from", ["main", "thread"])
def test_child_dies_with_its_killed_parent(spawned_from):
    parent = subprocess.Popen([sys.executable, "-c", PARENT, spawned_from], cwd=ROOT, stdin=subprocess.PIPE,
                              stdout=subprocess.PIPE, stderr=subprocess.STDOUT)
    out = LineReader(parent, parent.stdout)
    child = int(out.wait_for("spawned ", 30).split()[1])
    out.wait_for("child ready", 30)
    # from a thread: that thread has ended, and the child (on the lifeline, not
    # PR_SET_PDEATHSIG, which would have fired at the thread's end) lives on
    assert pid_alive(child)
    parent.kill()
    parent.wait(10)
    assert wait_gone([child]) == []


def children(out: LineReader) -> dict[str, int]:
    """``started NAME pid N`` lines of a ``controlplane up``: name → pid (the latest)."""
    found = {}
    for line in out.lines:
        m = re.search(r"started (\S+)\s+pid (\d+)", line)
        if m:
            found[m.group(1)] = int(m.group(2))
    return found


def up(tmp: str, timeout: float = 60) -> subprocess.CompletedProcess:
    return subprocess.run([sys.executable, "-m", "controlplane", "up", "--data-dir", os.path.join(tmp, "cp"),
                           "--port", "0", "--etcd-port", "0"], capture_output=True, text=True,
                          timeout=timeout, cwd=ROOT)


def test_kill_9_supervisor_children_exit_lock_held_until_then_restart_keeps_data(tmp_path):
    tmp = str(tmp_path)
    first, out, data_dir = start_up(tmp)
    restarted = None
    pids = children(out)
    try:
        assert set(pids) == {"etcd", "apiserver", "controller-manager", "scheduler",
                             "kubelet-node01", "kubelet-node02"}
        kc = os.path.join(data_dir, "kubeconfig")
        kubectl = lambda *a: subprocess.run(["kubectl", "--kubeconfig", kc, "--cache-dir", os.path.join(tmp, "kc"),
                                             *a], capture_output=True, text=True, timeout=60)
        for i in range(5):
            r = kubectl("create", "configmap", f"acked-{i}", f"--from-literal=i={i}")
            assert r.returncode == 0, r.stderr

        # a second supervisor while the first runs: one line, non-zero, at once
        second = up(tmp, timeout=30)
        assert second.returncode != 0
        lines = (second.stdout + second.stderr).strip().splitlines()
        assert len(lines) == 1, lines
        assert "is in use by another controlplane" in lines[0] and str(first.pid) in lines[0]

        # a stopped child cannot exit: it keeps the data-dir lock after the supervisor died
        os.kill(pids["scheduler"], signal.SIGSTOP)
        first.kill()
        first.wait(10)
        others = [p for n, p in pids.items() if n != "scheduler"]
        assert wait_gone(others) == []
        assert pid_alive(pids["scheduler"])
        blocked = up(tmp, timeout=30)
        assert blocked.returncode != 0
        lines = (blocked.stdout + blocked.stderr).strip().splitlines()
        assert len(lines) == 1 and "has exited" in lines[0], lines
        os.kill(pids["scheduler"], signal.SIGCONT)   # the pending SIGTERM ends it
        assert wait_gone([pids["scheduler"]]) == []

        restarted, out2, _ = start_up(tmp)
        for i in range(5):
            r = kubectl("get", "configmap", f"acked-{i}", "-o", "jsonpath={.data.i}")
            assert (r.returncode, r.stdout) == (0, str(i)), r.stderr
    finally:
        if restarted is not None:
            stop(restarted)
        stop(first)
        for pid in pids.values():
            if pid_alive(pid):
                os.kill(pid, signal.SIGCONT)
                os.kill(pid, signal.SIGKILL)


def cmdline(pid: int) -> list[str]:
    with open(f"/proc/{pid}/cmdline", "rb") as f:
        return [a.decode() for a in f.read().split(b"\0") if a]


@pytest.mark.skipif(not sys.platform.startswith("linux"), reason="the fork server and /proc are Linux's")
@pytest.mark.parametrize("flags, forked", [((), True), (("--no-fork-server",), False)],
                         ids=["default: forked from the fork server", "--no-fork-server: each exec'd"])
def test_up_forks_its_processes_from_the_fork_server_unless_told_not_to(tmp_path, flags, forked):
    proc, out, _ = start_up(str(tmp_path), None, "--nodes", "node01", "--no-dashboard", *flags)
    try:
        pids = children(out)
        assert set(pids) == {"etcd", "apiserver", "controller-manager", "scheduler", "kubelet-node01"}
        for name, pid in pids.items():
            argv = cmdline(pid)
            if forked:   # the zygote's command line; each still its own process
                assert "controlplane.cli.zygote" in argv, (name, argv)
            else:        # python -m controlplane <service> ...
                assert argv[1:4] == ["-m", "controlplane", name.split("-node")[0]], (name, argv)
        assert len(set(pids.values())) == len(pids)
    finally:
        stop(proc)
