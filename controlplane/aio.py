"""Small asyncio helpers shared by every component."""

from __future__ import annotations

import asyncio


async def cancel_and_wait(task: asyncio.Task | None) -> None:
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


def run(coro):
    """``asyncio.run(coro)`` on uvloop's event loop when uvloop is installed (less per-request
    overhead for aiohttp, grpc and our etcd transport); returns the coroutine's result. Every
    process entry point (etcd, apiserver, and the components via ``run_until_signalled``) uses it.
    The process also follows its lifeline when its parent gave it one
    (:func:`controlplane.lifeline.watch_parent`: SIGTERM once the parent is gone)."""
    from controlplane.lifeline import watch_parent

    async def main():
        watch_parent(asyncio.get_running_loop())
        return await coro
    try:
        import uvloop
    except ImportError:
        return asyncio.run(main())
    with asyncio.Runner(loop_factory=uvloop.new_event_loop) as runner:
        return runner.run(main())
