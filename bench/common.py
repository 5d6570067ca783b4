"""What the benchmarks share: starting one service as its own process and
reading a process's CPU time. Benchmark set-up only (never tests)."""

from __future__ import annotations

import os
import re
import subprocess
import sys
import time

from controlplane.lifeline import child_kwargs

ROOT = os.path.join(os.path.dirname(os.path.abspath(__file__)), "..")


def start_service(args: list[str], log_path: str, pattern: str,
                  timeout: float = 60.0) -> tuple[subprocess.Popen, str]:
    """Start ``python -m controlplane ARGS`` logging to ``log_path``, ending with this
    process however it ends (:func:`controlplane.lifeline.child_kwargs`); returns the
    process and the first group of ``pattern`` once it appears in the log (e.g.
    the URL a ``--port 0`` service picked). Exits with a one-line message if the
    service dies or ``timeout`` seconds pass."""
    f = open(log_path, "wb")
    p = subprocess.Popen([sys.executable, "-m", "controlplane", *args], stdout=f,
                         stderr=subprocess.STDOUT, cwd=ROOT, **child_kwargs())
    rx = re.compile(pattern)
    deadline = time.monotonic() + timeout
    while time.monotonic() < deadline:
        with open(log_path, "rb") as r:
            m = rx.search(r.read().decode(errors="replace"))
        if m:
            return p, m.group(1)
        if p.poll() is not None:
            break
        time.sleep(0.1)  # polling a log file for a ready line (benchmark setup only)
    p.kill()
    raise SystemExit(f"{args[0]} did not start: see {log_path}")


def stop_services(procs: list[subprocess.Popen], grace: float = 10.0) -> None:
    """SIGTERM ``procs`` in reverse start order, wait up to ``grace`` seconds each, then SIGKILL."""
    for p in reversed(procs):
        p.terminate()
    for p in reversed(procs):
        try:
            p.wait(grace)
        except subprocess.TimeoutExpired:
            p.kill()


def cpu_seconds(pid: int) -> float:
    """utime + stime of a process, in seconds (Linux ``/proc/PID/stat``); 0.0 if gone."""
    try:
        with open(f"/proc/{pid}/stat") as f:
            fields = f.read().rsplit(")", 1)[1].split()
        return (int(fields[11]) + int(fields[12])) / os.sysconf("SC_CLK_TCK")
    except (OSError, IndexError, ValueError):
        return 0.0


def rss_bytes(pid: int) -> int:
    """Resident set size of a process (Linux ``/proc/PID/status`` VmRSS), 0 if gone."""
    try:
        with open(f"/proc/{pid}/status") as f:
            for line in f:
                if line.startswith("VmRSS:"):
                    return int(line.split()[1]) * 1024
    except OSError:
        pass
    return 0
