"""Benchmark: the embedded etcd and a real etcd side by side, same client (aetcd), same machine.

    python bench/etcd.py [--seconds 3] [--rounds 3] [--concurrency 64] [--keys 100000] [--memory] [--grpcio]
                         [--only puts,range,watch,rss]

Both servers run as their own processes on free ports, BOTH with a data dir (fsync on every
commit; ``controlplane up`` always gives the embedded one a data dir). ``--memory`` adds the
embedded server without a data dir, ``--grpcio`` the embedded server on grpc.aio instead of
our asyncio gRPC transport (``components/etcd/transport.py``). The machine is shared, so every throughput figure is the
median of ``--rounds`` rounds that alternate between the servers.

Figures (issue 3 targets in brackets):

* puts/s, sequential and with ``--concurrency`` tasks on one client   [embedded >= 60% of real]
* range of 1,000 keys (256 B values): ranges/s, one client, sequential
* watch delivery latency p50/p99 at 1,000 events/s: a paced writer stamps each value with the
  monotonic clock; a watcher on the prefix (same process) takes the difference   [p99 <= 10 ms]
* RSS of the server process after writing ``--keys`` keys of 1 KiB (batched in Txns of 100 puts),
  and its peak (VmHWM)                                                  [<= 300 MiB at 100,000]
"""

from __future__ import annotations

import argparse
import asyncio
import os
import statistics
import sys
import tempfile
import time

sys.path.insert(0, os.path.join(os.path.dirname(__file__), ".."))

import aetcd  # noqa: E402
from aetcd.rpc import rpc_pb2, rpc_pb2_grpc  # noqa: E402

from tests.support.etcd import start_embedded, start_real  # noqa: E402

REAL_ETCD = "/usr/bin/etcd"


def _client(endpoint: str) -> aetcd.Client:
    host, port = endpoint.split(":")
    return aetcd.Client(host, int(port))


async def puts_per_second(endpoint: str, tasks: int, seconds: float) -> float:
    """Puts of 256 B values to 100 keys per task, for ``seconds``; returns puts/s."""
    async with _client(endpoint) as c:
        await c.put(b"/bench/warmup", b"x")
        count = 0
        deadline = time.monotonic() + seconds

        async def worker(n: int) -> None:
            nonlocal count
            i = 0
            value = b"v" * 256
            while time.monotonic() < deadline:
                await c.put(b"/bench/%d/%d" % (n, i % 100), value)
                i += 1
                count += 1

        t0 = time.monotonic()
        await asyncio.gather(*(worker(n) for n in range(tasks)))
        return count / (time.monotonic() - t0)


async def load_range_keys(endpoint: str, n: int = 1000) -> None:
    async with _client(endpoint) as c:
        await _txn_puts(c, [(b"/range/%06d" % i, b"r" * 256) for i in range(n)])


async def ranges_per_second(endpoint: str, seconds: float) -> float:
    """Sequential prefix ranges returning 1,000 keys; returns ranges/s."""
    async with _client(endpoint) as c:
        n = 0
        got = await c.get_prefix(b"/range/")
        assert len(list(got)) == 1000
        t0 = time.monotonic()
        while time.monotonic() - t0 < seconds:
            await c.get_prefix(b"/range/")
            n += 1
        return n / (time.monotonic() - t0)


async def watch_latency(endpoint: str, rate: int, seconds: float) -> tuple[float, float, int]:
    """Watch delivery latency at ``rate`` puts/s: (p50 ms, p99 ms, events received)."""
    async with _client(endpoint) as c:
        stub = rpc_pb2_grpc.WatchStub(c.channel)
        requests: asyncio.Queue = asyncio.Queue()

        async def gen():
            while (r := await requests.get()) is not None:
                yield r

        stream = stub.Watch(gen())
        requests.put_nowait(rpc_pb2.WatchRequest(create_request=rpc_pb2.WatchCreateRequest(
            key=b"/watch/", range_end=b"/watch0")))
        created = await asyncio.wait_for(stream.read(), 10)
        assert created.created
        total = int(rate * seconds)
        lat: list[float] = []

        async def reader():
            while len(lat) < total:
                resp = await stream.read()
                now = time.monotonic()
                for ev in resp.events:
                    lat.append(now - float(ev.kv.value))

        async def writer():
            t0 = time.monotonic()
            pending = set()
            for i in range(total):
                delay = t0 + i / rate - time.monotonic()
                if delay > 0:
                    await asyncio.sleep(delay)
                t = asyncio.ensure_future(c.put(b"/watch/%d" % (i % 50), repr(time.monotonic()).encode()))
                pending.add(t)
                t.add_done_callback(pending.discard)
            await asyncio.gather(*pending)

        r = asyncio.ensure_future(reader())
        await writer()
        await asyncio.wait_for(r, 30)
        requests.put_nowait(None)
        stream.cancel()
        lat.sort()
        return lat[len(lat) // 2] * 1000, lat[int(len(lat) * 0.99)] * 1000, len(lat)


async def _txn_puts(c: aetcd.Client, items: list[tuple[bytes, bytes]], batch: int = 100, parallel: int = 8) -> None:
    stub = rpc_pb2_grpc.KVStub(c.channel)
    sem = asyncio.Semaphore(parallel)

    async def one(chunk):
        async with sem:
            await stub.Txn(rpc_pb2.TxnRequest(success=[
                rpc_pb2.RequestOp(request_put=rpc_pb2.PutRequest(key=k, value=v)) for k, v in chunk]))

    await asyncio.gather(*(one(items[i:i + batch]) for i in range(0, len(items), batch)))


def rss_mib(pid: int) -> tuple[float, float]:
    """(VmRSS, VmHWM) of ``pid`` in MiB, from /proc/<pid>/status."""
    out = {}
    with open(f"/proc/{pid}/status") as f:
        for line in f:
            if line.startswith(("VmRSS:", "VmHWM:")):
                out[line.split(":")[0]] = int(line.split()[1]) / 1024
    return out["VmRSS"], out["VmHWM"]


async def rss_after_keys(proc, n: int) -> tuple[float, float, float, float]:
    """Load ``n`` keys of 1 KiB; returns (RSS before, RSS after, peak, seconds to load)."""
    before = rss_mib(proc.proc.pid)[0]
    async with _client(proc.endpoint) as c:
        t0 = time.monotonic()
        for start in range(0, n, 10000):
            await _txn_puts(c, [(b"/rss/%08d" % i, os.urandom(512).hex().encode())
                                for i in range(start, min(n, start + 10000))])
        took = time.monotonic() - t0
    after, peak = rss_mib(proc.proc.pid)
    return before, after, peak, took


async def main() -> None:
    ap = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    ap.add_argument("--seconds", type=float, default=3.0, help="duration of each throughput measurement")
    ap.add_argument("--rounds", type=int, default=3, help="alternating rounds; medians are reported")
    ap.add_argument("--concurrency", type=int, default=64)
    ap.add_argument("--keys", type=int, default=100_000, help="keys of 1 KiB for the RSS figure")
    ap.add_argument("--memory", action="store_true", help="also run the embedded server without a data dir")
    ap.add_argument("--grpcio", action="store_true",
                    help="also run the embedded server on grpc.aio (--grpc-transport grpcio), for comparison")
    ap.add_argument("--only", default="puts,range,watch,rss", help="comma list of figures to measure")
    args = ap.parse_args()
    only = set(args.only.split(","))
    with tempfile.TemporaryDirectory(dir=os.environ.get("BENCH_TMP")) as tmp:
        servers: dict[str, object] = {}
        servers["embedded"] = await start_embedded("--data-dir", os.path.join(tmp, "emb"))
        if args.memory:
            servers["embedded (memory)"] = await start_embedded()
        if args.grpcio:
            servers["embedded (grpcio)"] = await start_embedded("--data-dir", os.path.join(tmp, "grpcio"),
                                                                "--grpc-transport", "grpcio")
        if os.path.exists(REAL_ETCD):
            servers["real etcd"] = await start_real(os.path.join(tmp, "real"))
        results: dict[str, dict[str, float]] = {name: {} for name in servers}
        try:
            samples: dict[tuple[str, str], list[float]] = {}
            if "range" in only:
                for p in servers.values():
                    await load_range_keys(p.endpoint)
            for rnd in range(args.rounds if only & {"puts", "range", "watch"} else 0):
                for name, p in servers.items():
                    if "puts" in only:
                        samples.setdefault((name, "seq"), []).append(await puts_per_second(p.endpoint, 1, args.seconds))
                        samples.setdefault((name, "conc"), []).append(
                            await puts_per_second(p.endpoint, args.concurrency, args.seconds))
                    if "range" in only:
                        samples.setdefault((name, "range"), []).append(await ranges_per_second(p.endpoint, args.seconds))
                    if "watch" in only:
                        p50, p99, _ = await watch_latency(p.endpoint, 1000, args.seconds)
                        samples.setdefault((name, "p50"), []).append(p50)
                        samples.setdefault((name, "p99"), []).append(p99)
                    print(f"round {rnd + 1}/{args.rounds} {name}: " + ", ".join(
                        f"{k}={v[-1]:,.1f}" for (n, k), v in samples.items() if n == name), file=sys.stderr)
            for (name, k), v in samples.items():
                results[name][k] = statistics.median(v)
            if "rss" in only:
                for name, p in servers.items():
                    before, after, peak, took = await rss_after_keys(p, args.keys)
                    results[name].update(rss0=before, rss=after, hwm=peak, load_s=took)
        finally:
            for p in servers.values():
                await p.stop()

    cols = [("seq", "seq puts/s", "{:,.0f}"), ("conc", f"{args.concurrency}-task puts/s", "{:,.0f}"),
            ("range", "1k-key ranges/s", "{:,.0f}"), ("p50", "watch p50 ms", "{:.2f}"),
            ("p99", "watch p99 ms", "{:.2f}"), ("rss", f"RSS MiB ({args.keys // 1000}k x 1KiB)", "{:.0f}"),
            ("hwm", "peak RSS MiB", "{:.0f}")]
    cols = [c for c in cols if any(c[0] in r for r in results.values())]
    print(f"{'server':<20}" + "".join(f"{title:>22}" for _, title, _ in cols))
    for name, r in results.items():
        print(f"{name:<20}" + "".join(f"{(fmt.format(r[k]) if k in r else '-'):>22}" for k, _, fmt in cols))
    emb, real = results.get("embedded"), results.get("real etcd")
    if emb and real:
        ratios = [f"{title} {emb[k] / real[k]:.0%}" for k, title, _ in cols
                  if k in ("seq", "conc", "range") and k in emb]
        if ratios:
            print("embedded / real: " + ", ".join(ratios))


if __name__ == "__main__":
    asyncio.run(main())
