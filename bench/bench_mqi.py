"""MQPUT / MQGET benchmark on a shared queue: throughput, latency percentiles and Redis commands
per verb, next to a bare FastAPI endpoint running one equivalent Lua script (the yardstick).

    python bench/bench_mqi.py [--messages 5000] [--concurrency 16] [--size 1024]

Starts its own redis-server, a SQLite repository, one `qsg serve` and the bare app, all on
loopback; prints a table and exits. Nothing here is asserted: the figures go in the README.
"""

from __future__ import annotations

import argparse
import asyncio
import os
import statistics
import subprocess
import sys
import tempfile
import time
from pathlib import Path

import httpx
import redis

ROOT = Path(__file__).resolve().parents[1]
sys.path.insert(0, str(ROOT))

from tests.cluster import Cluster, free_port  # noqa: E402
from tests.redis_server import RedisServer  # noqa: E402


def commandstats(r: redis.Redis) -> dict[str, int]:
    """calls per command since the last CONFIG RESETSTAT (commands inside scripts included)."""
    return {k.removeprefix("cmdstat_"): int(v["calls"]) for k, v in r.info("commandstats").items()}


async def run_phase(client: httpx.AsyncClient, n: int, concurrency: int, make_request) -> tuple[float, list[float]]:
    latencies: list[float] = []
    counter = iter(range(n))

    async def worker() -> None:
        for i in counter:
            method, url, body = make_request(i)
            t0 = time.perf_counter()
            r = await client.request(method, url, json=body)
            latencies.append(time.perf_counter() - t0)
            if r.status_code >= 300:
                raise RuntimeError(f"{url}: {r.status_code} {r.text[:200]}")

    start = time.perf_counter()
    await asyncio.gather(*(worker() for _ in range(concurrency)))
    return time.perf_counter() - start, latencies


def pct(values: list[float], p: float) -> float:
    values = sorted(values)
    return values[min(len(values) - 1, int(p / 100 * len(values)))] * 1000


async def measure(name: str, base: str, n: int, c: int, put_req, get_req, r: redis.Redis) -> list[dict]:
    rows = []
    async with httpx.AsyncClient(base_url=base, limits=httpx.Limits(max_connections=c), timeout=30) as client:
        for verb, make in (("MQPUT", put_req), ("MQGET", get_req)):
            r.config_resetstat()
            elapsed, lat = await run_phase(client, n, c, make)
            stats = commandstats(r)
            scripts = stats.get("evalsha", 0) + stats.get("eval", 0)
            total = sum(v for k, v in stats.items() if k not in ("config|resetstat", "info", "ping"))
            rows.append({"target": name, "verb": verb, "msgs_per_s": n / elapsed, "p50_ms": pct(lat, 50),
                         "p99_ms": pct(lat, 99), "round_trips": scripts / n, "commands": total / n})
    return rows


async def main_async(args: argparse.Namespace) -> None:
    server = RedisServer()
    server.start()
    workdir = Path(tempfile.mkdtemp(prefix="qsg-bench-"))
    cluster = Cluster(server.url, f"sqlite:///{workdir / 'qsg.db'}", workdir)
    bare_port = free_port()
    bare = subprocess.Popen([sys.executable, "-m", "uvicorn", "bench.bare_app:app", "--port", str(bare_port),
                             "--log-level", "warning"], cwd=ROOT, env={**os.environ, "BARE_REDIS_URL": server.url})
    try:
        cluster.start(["QM1"])
        cluster.mqsc_ok("QM1", "DEFINE CFSTRUCT(APPL1) CFLEVEL(5)\n"
                               "DEFINE QLOCAL(BENCH.Q) QSGDISP(SHARED) CFSTRUCT(APPL1) MAXDEPTH(999999999)")
        qm = httpx.post(f"{cluster.url('QM1')}/v1/connections", json={"appl_name": "BENCH"}).json()["hconn"]
        conn = f"{cluster.url('QM1')}/v1/connections/{qm}"
        put_h = httpx.post(f"{conn}/objects", json={"object_name": "BENCH.Q", "options": ["OUTPUT"]}).json()["hobj"]
        get_h = httpx.post(f"{conn}/objects", json={"object_name": "BENCH.Q", "options": ["INPUT_SHARED"]}).json()["hobj"]
        payload = "x" * args.size
        r = redis.Redis.from_url(server.url)
        for _ in range(200):
            try:
                if httpx.get(f"http://127.0.0.1:{bare_port}/docs", timeout=1).status_code == 200:
                    break
            except httpx.HTTPError:
                time.sleep(0.05)
        # warm up both, then measure
        rows = []
        for measured in (False, True):
            n = args.messages if measured else 300
            got = await measure(
                "qsg (QM1)", conn, n, args.concurrency,
                lambda i: ("POST", f"/objects/{put_h}/put", {"data": payload, "options": ["NO_SYNCPOINT"]}),
                lambda i: ("POST", f"/objects/{get_h}/get", {"options": ["NO_SYNCPOINT"]}), r)
            got += await measure(
                "bare FastAPI + 1 Lua", f"http://127.0.0.1:{bare_port}", n, args.concurrency,
                lambda i: ("POST", "/put", {"data": payload, "md": {}}),
                lambda i: ("POST", "/get", {}), r)
            if measured:
                rows = got
        print(f"\n{args.messages} messages of {args.size} bytes, {args.concurrency} concurrent HTTP clients, "
              f"shared queue in CFSTRUCT(APPL1), one QM, loopback, {os.cpu_count()} cores\n")
        print(f"{'target':24} {'verb':6} {'msgs/s':>8} {'p50 ms':>8} {'p99 ms':>8} {'EVALSHA/verb':>13} {'Redis cmds/verb':>16}")
        for row in rows:
            print(f"{row['target']:24} {row['verb']:6} {row['msgs_per_s']:8.0f} {row['p50_ms']:8.2f} "
                  f"{row['p99_ms']:8.2f} {row['round_trips']:13.2f} {row['commands']:16.1f}")
        for verb in ("MQPUT", "MQGET"):
            ours = next(x for x in rows if x["verb"] == verb and x["target"].startswith("qsg"))
            bare_row = next(x for x in rows if x["verb"] == verb and x["target"].startswith("bare"))
            print(f"{verb}: {100 * ours['msgs_per_s'] / bare_row['msgs_per_s']:.0f}% of the bare endpoint's throughput")
    finally:
        cluster.stop()
        bare.terminate()
        bare.wait()
        server.cleanup()


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--messages", type=int, default=5000)
    parser.add_argument("--concurrency", type=int, default=16)
    parser.add_argument("--size", type=int, default=1024)
    asyncio.run(main_async(parser.parse_args()))


if __name__ == "__main__":
    main()
