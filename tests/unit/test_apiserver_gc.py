"""GC policy: survivors of a full collection leave the cyclic GC; stop() restores it."""

import gc

from components.apiserver.gcpolicy import GCFreezer


async def test_freezer_freezes_survivors_and_sweeps_back():
    f = GCFreezer(sweep_interval=3600)
    f.start()
    try:
        assert gc.get_freeze_count() > 0
        _keep = [{"metadata": {"name": f"p{i}"}, "spec": {"containers": [{"name": "c"}]}} for i in range(2000)]
        before = gc.get_freeze_count()
        gc.collect()                                   # a full collection: the callback freezes survivors
        assert f.freezes >= 1
        assert gc.get_freeze_count() >= before + 2000  # our new long-lived objects among them
    finally:
        await f.stop()
    assert gc.get_freeze_count() == 0 and f._after_gc not in gc.callbacks
