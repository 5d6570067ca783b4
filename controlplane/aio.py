"""Small asyncio helpers shared by every component."""

from __future__ import annotations

import asyncio
import random
from typing import Any, Coroutine, TypeVar

T = TypeVar("T")


async def cancel_and_wait(task: asyncio.Task[Any] | None) -> None:
    """Cancel ``task`` (if any) and wait until it has ended.

    A background task's own error or cancellation is swallowed: the caller is
    stopping it and only needs it gone. Safe to call on a finished task or None.
    """
    if task is None:
        return
    task.cancel()
    try:
        await task
    except (asyncio.CancelledError, Exception):
        pass


def run(coro: Coroutine[Any, Any, T]) -> T:
    """``asyncio.run(coro)`` on uvloop's event loop when uvloop is installed (less per-request
    overhead for aiohttp, grpc and our etcd transport); returns the coroutine's result. Every
    process entry point (etcd, apiserver, and the components via ``run_until_signalled``) uses it.
    The process also follows its lifeline when its parent gave it one
    (:func:`controlplane.lifeline.watch_parent`: SIGTERM once the parent is gone)."""
    from controlplane.lifeline import watch_parent

    async def main() -> T:
        watch_parent(asyncio.get_running_loop())
        return await coro
    try:
        import uvloop
    except ImportError:
        return asyncio.run(main())
    with asyncio.Runner(loop_factory=uvloop.new_event_loop) as runner:
        return runner.run(main())


class Backoff:
    """Exponential back-off between retries of a failing loop: ``initial`` seconds, times
    ``factor`` after each attempt, at most ``cap``, each delay stretched by up to ``jitter``
    (a fraction) so many clients do not retry in step (client-go ``wait.Backoff`` as the
    reflector's backoff manager uses it). :meth:`reset` after a success."""

    def __init__(self, initial: float = 0.1, cap: float = 5.0, factor: float = 2.0,
                 jitter: float = 0.2) -> None:
        self.initial, self.cap, self.factor, self.jitter = initial, cap, factor, jitter
        self._next = initial

    def next(self) -> float:
        """The delay (seconds) before the next attempt; advances the back-off."""
        d = self._next
        self._next = min(self.cap, d * self.factor)
        return min(self.cap, d * (1.0 + random.random() * self.jitter))

    def reset(self) -> None:
        self._next = self.initial
