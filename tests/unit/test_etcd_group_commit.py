"""Group commit of the embedded etcd's WAL: with concurrent writers a short commit window gathers
more writes per fdatasync (PostgreSQL ``commit_delay``/``commit_siblings``); a lone writer is
never delayed; every acknowledged write is still in the WAL."""

import asyncio

from aetcd.rpc import rpc_pb2

from components.etcd.core import COMMIT_SIBLINGS, Core


def _put(core: Core, key: bytes):
    core.put(rpc_pb2.PutRequest(key=key, value=b"v"))
    return core.durable()


async def test_write_arriving_within_the_window_joins_the_group(tmp_path):
    core = Core(data_dir=str(tmp_path / "d"), commit_window=0.5)
    core.recover()
    # COMMIT_SIBLINGS writers in one step: one group of that many -> writers are concurrent
    await asyncio.wait_for(asyncio.gather(*(_put(core, b"/a%d" % i) for i in range(COMMIT_SIBLINGS))), 5)
    assert (core.stats_groups, core.stats_writes) == (1, COMMIT_SIBLINGS)
    loop = asyncio.get_running_loop()
    late: asyncio.Future = loop.create_future()
    first = _put(core, b"/c")
    # the second write arrives 50 ms later, well inside the 500 ms window
    loop.call_later(0.05, lambda: late.set_result(_put(core, b"/d")))
    await asyncio.wait_for(asyncio.gather(first, await late), 5)
    assert (core.stats_groups, core.stats_writes) == (2, COMMIT_SIBLINGS + 2)
    await core.close()
    again = Core(data_dir=str(tmp_path / "d"))
    again.recover()
    assert sorted(again.store.keys) == sorted([b"/a%d" % i for i in range(COMMIT_SIBLINGS)] + [b"/c", b"/d"])
    await again.close()


async def test_lone_and_few_writers_are_not_delayed(tmp_path):
    core = Core(data_dir=str(tmp_path / "d"), commit_window=30.0)
    core.recover()
    for i in range(5):  # a 30 s window would time these out
        await asyncio.wait_for(_put(core, b"/k/%d" % i), 5)
    assert (core.stats_groups, core.stats_writes) == (5, 5)
    for i in range(3):  # groups smaller than COMMIT_SIBLINGS: still no window
        await asyncio.wait_for(asyncio.gather(*(_put(core, b"/p/%d/%d" % (i, j))
                                                for j in range(COMMIT_SIBLINGS - 1))), 5)
    assert core.stats_groups == 8
    await core.close()


async def test_window_off_flushes_at_once(tmp_path):
    core = Core(data_dir=str(tmp_path / "d"), commit_window=0)
    core.recover()
    await asyncio.wait_for(asyncio.gather(*(_put(core, b"/a%d" % i) for i in range(COMMIT_SIBLINGS))), 5)
    loop = asyncio.get_running_loop()
    done = loop.create_future()
    first = _put(core, b"/c")
    first.add_done_callback(lambda f: done.done() or done.set_result(core.stats_groups))
    await asyncio.wait_for(first, 5)
    assert await done == 2  # /c made durable alone, without waiting for a later write
    await core.close()
