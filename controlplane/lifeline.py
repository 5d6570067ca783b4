"""Child processes that end with their parent, however the parent ends (kill -9 too).

* :func:`child_kwargs` — keyword arguments for ``subprocess.Popen`` or
  ``asyncio.create_subprocess_exec`` (also on uvloop). On Linux the child asks the
  kernel for a signal when its parent dies (``prctl(PR_SET_PDEATHSIG)``, prctl(2)),
  then checks that the parent did not die before it asked. Elsewhere, or when the
  caller is not the main thread, the child gets a *lifeline* instead: the read end
  of a pipe whose write end only this process holds, named by the environment
  variable ``CONTROLPLANE_LIFELINE_FD``; the pipe reaches end-of-file when this
  process is gone.
* :func:`watch_parent` — the child's side of the lifeline: on end-of-file it sends
  itself the signal (SIGTERM), so the process stops as on ``kill``.
  :func:`controlplane.aio.run` calls it in every controlplane process.

PR_SET_PDEATHSIG is tied to the *thread* that forked the child: the signal comes
when that thread ends, even while the rest of the process lives. asyncio (and
uvloop) fork from the thread running the event loop; :func:`child_kwargs` uses
PR_SET_PDEATHSIG only when called on the main thread, which ends only with the
process, and the lifeline otherwise.
"""

from __future__ import annotations

import ctypes
import os
import signal
import sys
import threading
from typing import Any, Callable

ENV = "CONTROLPLANE_LIFELINE_FD"
PR_SET_PDEATHSIG = 1  # <linux/prctl.h>

_prctl: Callable[..., int] | None = None
_pipe: tuple[int, int] | None = None


def _load_prctl() -> Callable[..., int] | None:
    """libc's ``prctl``, looked up in the parent (no dlopen after fork); None off Linux."""
    global _prctl
    if _prctl is None and sys.platform.startswith("linux"):
        try:
            _prctl = ctypes.CDLL(None, use_errno=True).prctl
        except (OSError, AttributeError):
            _prctl = None
    return _prctl


def _lifeline() -> tuple[int, int]:
    """This process's lifeline pipe ``(read_fd, write_fd)``, made once; the write end
    is never written and closes only when the process ends."""
    global _pipe
    if _pipe is None:
        _pipe = os.pipe()  # both ends non-inheritable: only pass_fds hands the read end on
    return _pipe


def child_kwargs(sig: int = signal.SIGTERM, pass_fds: tuple[int, ...] = (),
                 env: dict[str, str] | None = None) -> dict[str, Any]:
    """``preexec_fn`` / ``pass_fds`` / ``env`` making the child receive ``sig`` when this
    process dies. ``pass_fds``: other descriptors the child keeps (e.g. a lock);
    ``env``: the child's environment (default: this one's). Merge the result into
    the Popen arguments; do not pass ``preexec_fn``, ``pass_fds`` or ``env`` twice."""
    env = dict(os.environ if env is None else env)
    env.pop(ENV, None)
    prctl = _load_prctl()
    if prctl is not None and threading.current_thread() is threading.main_thread():
        parent = os.getpid()

        def die_with_parent() -> None:  # in the child, between fork and exec
            if prctl(PR_SET_PDEATHSIG, sig) != 0:
                os._exit(127)
            if os.getppid() != parent:  # the parent died before the prctl
                os.kill(os.getpid(), sig)
        return {"preexec_fn": die_with_parent, "pass_fds": tuple(pass_fds), "env": env}
    read_fd, _ = _lifeline()
    env[ENV] = str(read_fd)
    return {"pass_fds": (*pass_fds, read_fd), "env": env}


def watch_parent(loop: Any, sig: int = signal.SIGTERM) -> bool:
    """In a child started with a lifeline: watch it on ``loop`` (an asyncio loop) and
    send this process ``sig`` when the parent is gone. Returns False (and does
    nothing) when there is no lifeline — e.g. the child was started with
    PR_SET_PDEATHSIG, or by hand. The variable is removed, so this process's own
    children do not inherit a lifeline that is not theirs."""
    raw = os.environ.pop(ENV, None)
    if not raw or not raw.isdigit():
        return False
    fd = int(raw)

    def readable() -> None:
        try:
            data = os.read(fd, 1)
        except BlockingIOError:
            return
        except OSError:
            data = b""
        if not data:  # end of file: the parent has exited
            loop.remove_reader(fd)
            os.kill(os.getpid(), sig)

    try:
        os.set_blocking(fd, False)
        loop.add_reader(fd, readable)
    except (OSError, ValueError):
        return False
    return True
