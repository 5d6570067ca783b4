"""A fork server for the control plane's processes: the modules imported once, each service forked.

Every ``controlplane <service>`` process spends most of its start in imports (about 1.5 s of CPU
each: aiohttp, grpc, the resource registry, cryptography...). A cluster runs five or more of them,
so on two cores a cold start is several seconds of imports alone. :class:`Zygote` starts one
process (``python -m controlplane.cli.zygote``) that imports every service's modules once, freezes
them out of the cyclic GC (:func:`gc.freeze`, so the forked children do not touch — and copy —
the shared pages) and then forks one child per request: the child becomes exactly what
``python -m controlplane <args>`` would be — same command line parsed by the same click
commands, its own session, stdin ``/dev/null``, stdout and stderr on the given log, the given
environment and working directory — and exits through the interpreter's normal exit (threads
joined, ``atexit`` run). This is Android's zygote and CPython's ``multiprocessing`` forkserver
(``Lib/multiprocessing/forkserver.py``, whose ``set_forkserver_preload`` this mirrors), with
command lines instead of pickled callables, so every component stays runnable alone by its
command line and each is still its own OS process.

Wire between the parent and the zygote: one ``AF_UNIX`` ``SOCK_SEQPACKET`` socket pair (message
boundaries kept, descriptors passed with ``SCM_RIGHTS``). A request is a JSON object ``{"seq",
"argv", "env", "cwd", "needs"}`` with the descriptors ``[log, lifeline, *keep]``; the zygote answers
``{"seq", "pid"}`` (or ``{"seq", "error"}``) and, when a child ends, ``{"exit": pid, "status":
code}`` (negative: killed by that signal, as :attr:`subprocess.Popen.returncode`); once every
preload module is imported it says ``{"preloaded": seconds}``. The zygote exits when the socket
reaches end-of-file (its parent is gone). The children end with the parent through its lifeline
(:mod:`controlplane.lifeline`: ``CONTROLPLANE_LIFELINE_FD``), as children started by exec do.

Requests are taken while the zygote is still importing: ``needs`` names the preload modules the
service uses (:data:`SERVICE_MODULES`, by its first argument), and the zygote forks it between two
imports as soon as those are in, the rest still loading for the services after it. The modules
come in start order — etcd's, the apiserver's, then the clients' — so ``controlplane up``, which
starts the zygote before anything else, has etcd and the apiserver running while the
controller-manager's, scheduler's and kubelet's modules are still being imported.

Linux only (``SOCK_SEQPACKET``, fork after imports); :func:`available` says whether it can be used.
"""

from __future__ import annotations

import asyncio
import gc
import importlib
import json
import os
import select
import signal
import socket
import subprocess
import sys
import threading
import time
from typing import Any

from controlplane.lifeline import ENV as LIFELINE_ENV
from controlplane.lifeline import _lifeline as lifeline_pipe
from controlplane.lifeline import child_kwargs

#: the modules every service shares, imported first
COMMON_MODULES = ("controlplane.cli.main", "uvloop", "encodings.idna", "stringprep")

#: what each service's command and its command body import at run time, by the service's
#: command name (the first argument), in the order ``controlplane up`` starts them
SERVICE_MODULES: dict[str, tuple[str, ...]] = {
    "etcd": ("components.etcd.cli", "components.etcd.server"),
    "apiserver": (
        "components.apiserver.cli", "components.apiserver.serving", "components.apiserver.server",
        "components.apiserver.admission", "components.apiserver.authorization.union",
        # the admission plugins, which the apiserver imports by name when it builds its chain
        *(f"components.apiserver.admission.{p}" for p in (
            "defaultstorageclass", "defaulttolerationseconds", "limitranger", "namespacelifecycle",
            "noderestriction", "persistentvolumeclaimresize", "priority", "resourcequota", "runtimeclass",
            "serviceaccount", "storageobjectinuseprotection"))),
    "controller-manager": ("components.controller_manager.cli", "components.controller_manager.config",
                           "components.controller_manager.manager"),
    "scheduler": ("components.scheduler.cli",),
    "kubelet": ("components.kubelet.cli", "components.kubelet.kubelet", "components.kubelet.server"),
}

#: what the zygote imports before it forks (every service's command and what its command body
#: imports at run time); a module that fails to import is skipped (the child imports it itself)
PRELOAD = (*COMMON_MODULES, *(m for mods in SERVICE_MODULES.values() for m in mods))


def needs_of(argv: list[str], preload: tuple[str, ...] = PRELOAD) -> list[str]:
    """The modules of ``preload`` that a child started with ``argv`` waits for: the common ones and
    its service's (:data:`SERVICE_MODULES`); every one for another command."""
    mods = SERVICE_MODULES.get(argv[0] if argv else "")
    if mods is None:
        return list(preload)
    want = set(COMMON_MODULES) | set(mods)
    return [m for m in preload if m in want]


#: largest request or answer (bytes); a request carries the whole environment
MAX_MESSAGE = 1 << 20
#: most descriptors one request passes
MAX_FDS = 16


def available() -> bool:
    """Whether this platform can run a zygote (Linux: ``SOCK_SEQPACKET`` and ``os.fork``)."""
    return sys.platform.startswith("linux") and hasattr(socket, "SOCK_SEQPACKET") and hasattr(os, "fork")


class ZygoteProcess:
    """A child forked by the zygote, with the part of :class:`asyncio.subprocess.Process`'s
    interface the supervisor uses: ``pid``, ``returncode`` (None while it runs; negative: the
    signal that killed it), ``await wait()``, ``send_signal``, ``terminate``, ``kill``. The exit
    is reported by the zygote; ``wait`` may be awaited from any event loop."""

    def __init__(self, pid: int) -> None:
        self.pid = pid
        self.returncode: int | None = None
        self._lock = threading.Lock()
        self._waiters: list[tuple[asyncio.AbstractEventLoop, asyncio.Future[int]]] = []

    def _exited(self, status: int) -> None:
        with self._lock:
            if self.returncode is not None:
                return
            self.returncode = status
            waiters, self._waiters = self._waiters, []
        for loop, fut in waiters:
            try:
                loop.call_soon_threadsafe(_set_result, fut, status)
            except RuntimeError:  # that loop is closed
                pass

    async def wait(self) -> int:
        """The exit status, once the process has ended."""
        loop = asyncio.get_running_loop()
        with self._lock:
            if self.returncode is not None:
                return self.returncode
            fut: asyncio.Future[int] = loop.create_future()
            self._waiters.append((loop, fut))
        return await fut

    def send_signal(self, sig: int) -> None:
        """Send ``sig`` to the process; nothing once it has ended (ProcessLookupError if it
        vanished unreported)."""
        if self.returncode is None:
            os.kill(self.pid, sig)

    def terminate(self) -> None:
        """SIGTERM, as ``subprocess.Popen.terminate``: the service drains and exits."""
        self.send_signal(signal.SIGTERM)

    def kill(self) -> None:
        """SIGKILL, as ``subprocess.Popen.kill``: no clean-up runs in the service."""
        self.send_signal(signal.SIGKILL)


def _set_result(fut: asyncio.Future[int], status: int) -> None:
    if not fut.done():
        fut.set_result(status)


class Zygote:
    """The parent's side: :meth:`launch` the zygote process (at once: requests are queued until
    the modules they need are imported) or :meth:`start` it (blocks until every import is done),
    :meth:`spawn` children, :meth:`close`. Thread-safe: one zygote may serve clusters on several
    event loops (the pytest plugin shares one per test session, :func:`shared`).

    Raises RuntimeError (one line) when the zygote cannot start or has died."""

    def __init__(self, preload: tuple[str, ...] = PRELOAD, env: dict[str, str] | None = None) -> None:
        self.preload = preload
        self._env = env
        self._proc: subprocess.Popen[bytes] | None = None
        self._sock: socket.socket | None = None
        self._lock = threading.Lock()
        self._seq = 0
        self._answers: dict[int, Any] = {}
        self._answered = threading.Condition()
        self._children: dict[int, ZygoteProcess] = {}
        self._early_exits: dict[int, int] = {}
        self._reader: threading.Thread | None = None
        self._dead = False
        self._launched = 0.0
        #: seconds from :meth:`launch` until the zygote had imported :attr:`preload` (0 before)
        self.start_seconds = 0.0

    @property
    def alive(self) -> bool:
        """Whether the zygote process runs and still answers (False before :meth:`launch`,
        after :meth:`close`, or once its socket broke)."""
        return self._proc is not None and self._proc.poll() is None and not self._dead

    @property
    def preloaded(self) -> bool:
        """Whether every module of :attr:`preload` has been imported."""
        return self.start_seconds > 0

    def launch(self) -> None:
        """Start the zygote process and return at once; its imports (about 2.5 s of CPU) run
        beside the caller, and :meth:`spawn` may be called right away. Idempotent."""
        if self._proc is not None:
            return
        self._launched = time.monotonic()
        parent, child = socket.socketpair(socket.AF_UNIX, socket.SOCK_SEQPACKET)
        env = dict(os.environ if self._env is None else self._env, PYTHONUNBUFFERED="1")
        try:
            self._proc = subprocess.Popen(
                [sys.executable, "-m", "controlplane.cli.zygote", str(child.fileno()), ",".join(self.preload)],
                stdin=subprocess.DEVNULL, start_new_session=True,
                **child_kwargs(pass_fds=(child.fileno(),), env=env))
        finally:
            child.close()
        self._sock = parent
        self._reader = threading.Thread(target=self._read, name="controlplane-zygote", daemon=True)
        self._reader.start()

    def start(self, timeout: float = 300) -> None:
        """:meth:`launch` the zygote and wait until it has imported :attr:`preload`."""
        self.launch()
        self.wait_preloaded(timeout)

    def wait_preloaded(self, timeout: float = 300) -> None:
        """Until every preload module is imported; RuntimeError when the zygote dies first or
        ``timeout`` seconds pass."""
        deadline = time.monotonic() + timeout
        with self._answered:
            while not self.preloaded:
                left = deadline - time.monotonic()
                if self._dead:
                    code = self._proc.wait() if self._proc is not None else None
                    raise RuntimeError(f"the zygote exited with status {code} while importing")
                if left <= 0:
                    raise RuntimeError(f"the zygote did not start: its imports took more than {timeout:g}s")
                self._answered.wait(left)

    def _read(self) -> None:
        sock = self._sock  # its own reference: close() clears the attribute while this reads
        assert sock is not None
        while True:
            try:
                data = sock.recv(MAX_MESSAGE)
            except OSError:
                data = b""
            if not data:
                break
            msg = json.loads(data)
            if "preloaded" in msg:
                with self._answered:
                    self.start_seconds = max(time.monotonic() - self._launched, 1e-6)
                    self._answered.notify_all()
            elif "exit" in msg:
                pid, status = int(msg["exit"]), int(msg["status"])
                with self._answered:
                    proc = self._children.pop(pid, None)
                    if proc is None:  # the exit overtook the answer naming the pid
                        self._early_exits[pid] = status
                if proc is not None:
                    proc._exited(status)
            else:
                with self._answered:
                    self._answers[int(msg["seq"])] = msg
                    self._answered.notify_all()
        with self._answered:
            self._dead = True
            self._answered.notify_all()
            orphans = list(self._children.values())
            self._children.clear()
        if orphans:  # the zygote died: nobody reports their exits any more; watch them by pid
            threading.Thread(target=_watch_orphans, args=(orphans,), daemon=True).start()

    def spawn(self, argv: list[str], *, log_fd: int, env: dict[str, str],
              keep_fds: tuple[int, ...] = (), cwd: str | None = None, timeout: float = 300) -> ZygoteProcess:
        """Fork ``controlplane <argv>`` with stdout and stderr on ``log_fd``, the environment
        ``env`` (its lifeline replaced by this process's), the working directory ``cwd`` (default:
        this one's) and ``keep_fds`` open in it (e.g. a flocked lock file). Blocks until the zygote
        answers: a fork, milliseconds, once the modules the service needs (:func:`needs_of`) are
        imported. RuntimeError when the zygote is gone or the fork failed."""
        if self._sock is None or not self.alive:
            raise RuntimeError("the zygote is not running")
        env = {k: v for k, v in env.items() if k != LIFELINE_ENV}
        read_fd, _ = lifeline_pipe()
        with self._lock:
            self._seq += 1
            seq = self._seq
            msg = json.dumps({"seq": seq, "argv": argv, "env": env, "cwd": cwd or os.getcwd(),
                              "needs": needs_of(argv, self.preload)}).encode()
            socket.send_fds(self._sock, [msg], [log_fd, read_fd, *keep_fds])
        deadline = time.monotonic() + timeout
        with self._answered:
            while seq not in self._answers:
                left = deadline - time.monotonic()
                if self._dead or left <= 0:
                    raise RuntimeError("the zygote died" if self._dead else "the zygote did not answer")
                self._answered.wait(left)
            answer = self._answers.pop(seq)
            if "error" in answer:
                raise RuntimeError(f"the zygote could not fork {' '.join(argv[:1])}: {answer['error']}")
            proc = ZygoteProcess(int(answer["pid"]))
            early = self._early_exits.pop(proc.pid, None)
            if early is None:
                self._children[proc.pid] = proc
        if early is not None:
            proc._exited(early)
        return proc

    def close(self) -> None:
        """Stop the zygote (its children are not touched); idempotent."""
        if self._sock is not None:
            try:
                self._sock.shutdown(socket.SHUT_RDWR)
            except OSError:
                pass
            self._sock.close()
            self._sock = None
        if self._proc is not None:
            try:
                self._proc.wait(5)
            except subprocess.TimeoutExpired:
                self._proc.kill()
                self._proc.wait()


def _watch_orphans(procs: list[ZygoteProcess]) -> None:
    """Exit reports for children whose zygote died: polled by pid (status unknown: 255)."""
    def alive(pid: int) -> bool:  # signal 0 checks existence only
        try:
            os.kill(pid, 0)  # an orphan is reaped by init at once: no zombie stays
        except ProcessLookupError:
            return False
        except PermissionError:
            pass
        return True
    while procs:
        for p in list(procs):
            if not alive(p.pid):
                p._exited(255)
                procs.remove(p)
        time.sleep(0.2)  # no exit report can come any more: poll the pids


_shared: Zygote | None = None
_shared_lock = threading.Lock()


def shared() -> Zygote:
    """This process's zygote, launched on first use (and again if it died; the first cluster's
    processes are forked as soon as their modules are in); it ends with this process."""
    global _shared
    with _shared_lock:
        if _shared is None or not _shared.alive:
            z = Zygote()
            z.launch()
            _shared = z
        return _shared


# -- the zygote process ------------------------------------------------------------------
def _send(sock: socket.socket, msg: dict[str, Any]) -> None:
    try:
        sock.send(json.dumps(msg).encode())
    except OSError:
        pass


def _reap(sock: socket.socket) -> None:
    while True:
        try:
            pid, status = os.waitpid(-1, os.WNOHANG)
        except ChildProcessError:
            return
        if pid == 0:
            return
        _send(sock, {"exit": pid, "status": os.waitstatus_to_exitcode(status)})


Child = tuple[list[str], dict[str, str], str, list[int]]


def _fork(sock: socket.socket, req: dict[str, Any], fds: list[int]) -> Child | None:
    """Fork the child of one request; in the child its (argv, env, cwd, fds), in the zygote None
    (the pid, or the error, answered)."""
    try:
        pid = os.fork()
    except OSError as e:
        for fd in fds:
            os.close(fd)
        _send(sock, {"seq": req["seq"], "error": str(e)})
        return None
    if pid == 0:
        sock.close()
        return req["argv"], req["env"], req["cwd"], fds
    for fd in fds:
        os.close(fd)
    _send(sock, {"seq": req["seq"], "pid": pid})
    return None


def _receive(sock: socket.socket) -> tuple[dict[str, Any], list[int]] | None:
    """One request with its descriptors; None at end-of-file (the parent has gone)."""
    try:
        data, fds, _, _ = socket.recv_fds(sock, MAX_MESSAGE, MAX_FDS)
    except OSError:
        data, fds = b"", []
    if not data:
        return None
    return json.loads(data), fds


def _preload(sock: socket.socket, modules: list[str]) -> Child | None:
    """Import ``modules`` in order; between two imports report the children that ended, take the
    requests that arrived and fork each whose ``needs`` are in (the others wait; a request that
    comes during an import waits for its end). Returns the forked child's request in the child,
    else None once every module is in and every request forked; exits when the parent has gone."""
    loaded: set[str] = set()
    waiting: list[tuple[dict[str, Any], list[int]]] = []
    for name in [*modules, ""]:
        if name:
            try:
                importlib.import_module(name)
            except Exception as e:  # the child imports it itself, and reports what fails
                print(f"zygote: cannot preload {name}: {type(e).__name__}: {e}", file=sys.stderr)
            loaded.add(name)
        _reap(sock)  # children forked earlier that have ended
        while select.select([sock.fileno()], [], [], 0)[0]:
            got = _receive(sock)
            if got is None:
                sys.exit(0)
            waiting.append(got)
        for req, fds in list(waiting):
            if name and not set(req.get("needs") or modules) <= loaded:
                continue
            waiting.remove((req, fds))
            child = _fork(sock, req, fds)
            if child is not None:
                return child
    return None


def serve(sock: socket.socket) -> Child | None:
    """The zygote's loop: fork a child per request, report exits. Returns None when the parent
    has gone; in a forked child it returns that child's (argv, env, cwd, fds)."""
    wake_r, wake_w = os.pipe()
    os.set_blocking(wake_r, False)
    os.set_blocking(wake_w, False)
    signal.set_wakeup_fd(wake_w)
    signal.signal(signal.SIGCHLD, lambda *_: None)
    _reap(sock)  # children forked while importing that have ended already
    while True:
        try:
            readable, _, _ = select.select([sock.fileno(), wake_r], [], [])
        except InterruptedError:
            continue
        if wake_r in readable:
            try:
                os.read(wake_r, 4096)
            except BlockingIOError:
                pass
            _reap(sock)
        if sock.fileno() not in readable:
            continue
        got = _receive(sock)
        if got is None:
            return None
        child = _fork(sock, *got)
        if child is not None:
            signal.set_wakeup_fd(-1)
            signal.signal(signal.SIGCHLD, signal.SIG_DFL)
            os.close(wake_r)
            os.close(wake_w)
            return child


def _become(argv: list[str], env: dict[str, str], cwd: str, fds: list[int]) -> None:
    """In a forked child: become ``controlplane <argv>`` (returns only through SystemExit)."""
    log_fd, lifeline_fd = fds[0], fds[1]
    os.setsid()
    os.chdir(cwd)
    devnull = os.open(os.devnull, os.O_RDONLY)
    os.dup2(devnull, 0)
    os.close(devnull)
    os.dup2(log_fd, 1)
    os.dup2(log_fd, 2)
    os.close(log_fd)
    os.environ.clear()
    os.environ.update(env)
    os.environ[LIFELINE_ENV] = str(lifeline_fd)
    sys.argv = ["controlplane", *argv]
    from controlplane.cli.main import main
    main()


def _main() -> None:
    sock = socket.socket(fileno=int(sys.argv[1]))
    signal.signal(signal.SIGINT, signal.SIG_IGN)
    t0 = time.monotonic()
    child = _preload(sock, list(filter(None, sys.argv[2].split(","))))
    if child is None:
        gc.collect()
        gc.freeze()  # the children forked from here on share these pages: keep the cyclic GC off them
        _send(sock, {"preloaded": round(time.monotonic() - t0, 3)})
        child = serve(sock)
        if child is None:
            return
    signal.signal(signal.SIGINT, signal.default_int_handler)
    _become(*child)


if __name__ == "__main__":
    _main()
