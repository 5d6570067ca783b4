"""Build (once) the separate virtualenv that runs python-etcd3 against our server.

python-etcd3 and aetcd cannot share a process (both register ``kv.proto`` in protobuf's global
registry), so the python-etcd3 side always runs in its own interpreter::

    python -m tests.etcd3_client.venv            # prints the interpreter path

The venv lives in ``$CONTROLPLANE_ETCD3_VENV`` (default ``/tmp/controlplane-etcd3venv``) and holds
``etcd3==0.12.0``, ``tenacity<7`` (its locks need it), current protobuf, and what python-etcd3's own
test suite imports (pytest, hypothesis, mock, six). The sdist (for that suite) is kept next to it.
Building takes a file lock, so parallel test runs share one venv.
"""

from __future__ import annotations

import fcntl
import os
import subprocess
import sys
import tarfile

PACKAGES = ["etcd3==0.12.0", "tenacity<7", "protobuf", "pytest", "hypothesis", "mock", "six"]
#: python-etcd3's generated code predates protobuf 4: only the pure-Python backend accepts it
ENV = {"PROTOCOL_BUFFERS_PYTHON_IMPLEMENTATION": "python"}


class VenvError(Exception):
    """The venv could not be built (no network / no index); message is one line."""


def venv_dir() -> str:
    return os.environ.get("CONTROLPLANE_ETCD3_VENV", "/tmp/controlplane-etcd3venv")


def python() -> str:
    """Path of the venv's interpreter, building the venv first if needed. Raises VenvError."""
    d = venv_dir()
    exe = os.path.join(d, "bin", "python")
    marker = os.path.join(d, ".complete")
    if os.path.exists(marker):
        return exe
    os.makedirs(os.path.dirname(d) or ".", exist_ok=True)
    with open(d + ".lock", "w") as lock:
        fcntl.flock(lock, fcntl.LOCK_EX)
        if os.path.exists(marker):
            return exe
        _run([sys.executable, "-m", "venv", d], "create the venv")
        _run([exe, "-m", "pip", "install", "-q", *PACKAGES], "pip install " + " ".join(PACKAGES))
        check = subprocess.run([exe, "-c", "import etcd3, tenacity"], capture_output=True, text=True,
                               env=dict(os.environ, **ENV))
        if check.returncode:
            raise VenvError("import etcd3 failed in the venv: " + (check.stderr.strip().splitlines() or ["?"])[-1])
        open(marker, "w").close()
    return exe


def sdist_tests() -> str:
    """Directory of python-etcd3 0.12.0's unpacked sdist (holds ``tests/test_etcd3.py``). Raises VenvError."""
    exe = python()
    root = os.path.join(venv_dir(), "sdist")
    src = os.path.join(root, "etcd3-0.12.0")
    if os.path.exists(os.path.join(src, "tests", "test_etcd3.py")):
        return src
    with open(venv_dir() + ".lock", "w") as lock:
        fcntl.flock(lock, fcntl.LOCK_EX)
        if not os.path.exists(os.path.join(src, "tests", "test_etcd3.py")):
            _run([exe, "-m", "pip", "download", "-q", "--no-deps", "--no-binary", ":all:", "-d", root,
                  "etcd3==0.12.0"], "download the etcd3 sdist")
            with tarfile.open(os.path.join(root, "etcd3-0.12.0.tar.gz")) as tar:
                tar.extractall(root, filter="data")
    return src


def _run(cmd: list[str], what: str) -> None:
    try:
        r = subprocess.run(cmd, capture_output=True, text=True, timeout=600)
    except (OSError, subprocess.TimeoutExpired) as e:
        raise VenvError(f"cannot {what}: {e}") from None
    if r.returncode:
        lines = [l for l in r.stderr.splitlines() if l.strip() and not l.startswith("WARNING")]
        raise VenvError(f"cannot {what}: {(lines or ['exit status %d' % r.returncode])[-1]}")


if __name__ == "__main__":
    try:
        print(python())
    except VenvError as e:
        print(f"error: {e}", file=sys.stderr)
        sys.exit(1)
