"""MQPUT / MQGET benchmark on a shared queue: throughput, latency percentiles and Redis commands
per verb, next to a bare FastAPI endpoint running the same Lua script (the yardstick,
bench/bare_app.py), so the percentage is what the queue manager's own layers cost.

    python bench/bench_mqi.py [--messages 5000] [--concurrency 4] [--size 1024]
                              [--persistent [--mqlog-sync commit|none]]

``--persistent`` puts persistent messages (RECOVER(YES) structure): the queue manager then also
writes each put and get to its recovery log (fsync per record with ``--mqlog-sync commit``),
which the bare endpoint does not, so the percentage is what the log costs on top.

Starts its own redis-server, a SQLite repository, one `qsg serve` and the bare app, all on
loopback; prints a table and exits. Nothing here is asserted: the figures go in the README.
"""

from __future__ import annotations

import argparse
import multiprocessing as mp
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

from tests.support.cluster import Cluster  # noqa: E402
from tests.support.redis_server import RedisServer, free_port  # noqa: E402


def commandstats(r: redis.Redis) -> dict[str, int]:
    """calls per command since the last CONFIG RESETSTAT (commands inside scripts included)."""
    return {k.removeprefix("cmdstat_"): int(v["calls"]) for k, v in r.info("commandstats").items()}


def _worker(base: str, requests: list[tuple[str, str, dict]], out) -> None:
    """One load process: a synchronous client sending its share of the requests in turn."""
    latencies = []
    with httpx.Client(base_url=base, timeout=30) as client:
        for method, url, body in requests:
            t0 = time.perf_counter()
            r = client.request(method, url, json=body)
            latencies.append(time.perf_counter() - t0)
            if r.status_code >= 300:
                raise RuntimeError(f"{url}: {r.status_code} {r.text[:200]}")
    out.put(latencies)


def run_phase(base: str, n: int, processes: int, make_request) -> tuple[float, list[float]]:
    """n requests from ``processes`` load processes (an async Python client would be the
    bottleneck here, not the servers)."""
    ctx = mp.get_context("fork")
    out = ctx.Queue()
    shares = [[make_request(i) for i in range(k, n, processes)] for k in range(processes)]
    procs = [ctx.Process(target=_worker, args=(base, share, out)) for share in shares]
    start = time.perf_counter()
    for p in procs:
        p.start()
    latencies = [x for _ in procs for x in out.get()]
    for p in procs:
        p.join()
    return time.perf_counter() - start, latencies


def pct(values: list[float], p: float) -> float:
    values = sorted(values)
    return values[min(len(values) - 1, int(p / 100 * len(values)))] * 1000


def measure(name: str, base: str, n: int, c: int, put_req, get_req, r: redis.Redis) -> list[dict]:
    rows = []
    for verb, make in (("MQPUT", put_req), ("MQGET", get_req)):
        r.config_resetstat()
        elapsed, lat = run_phase(base, n, c, make)
        stats = commandstats(r)
        scripts = stats.get("evalsha", 0) + stats.get("eval", 0)
        total = sum(v for k, v in stats.items() if k not in ("config|resetstat", "info", "ping"))
        rows.append({"target": name, "verb": verb, "msgs_per_s": n / elapsed, "p50_ms": pct(lat, 50),
                     "p99_ms": pct(lat, 99), "round_trips": scripts / n, "commands": total / n})
    return rows


def run(args: argparse.Namespace) -> None:
    server = RedisServer()
    server.start()
    workdir = Path(tempfile.mkdtemp(prefix="qsg-bench-"))
    cluster = Cluster(server.url, f"sqlite:///{workdir / 'qsg.db'}", workdir,
                      extra_env={"QSG_MQLOG_SYNC": args.mqlog_sync})
    bare_port = free_port()
    bare = subprocess.Popen([sys.executable, "-m", "uvicorn", "bench.bare_app:app", "--port", str(bare_port),
                             "--log-level", "warning"], cwd=ROOT, env={**os.environ, "BARE_REDIS_URL": server.url})
    try:
        cluster.start(["QM1"])
        cluster.mqsc_ok("QM1", "DEFINE CFSTRUCT(APPL1) CFLEVEL(5) RECOVER(YES)\n"
                               "DEFINE QLOCAL(BENCH.Q) QSGDISP(SHARED) CFSTRUCT(APPL1) MAXDEPTH(999999999)")
        qm = httpx.post(f"{cluster.url('QM1')}/v1/connections", json={"appl_name": "BENCH"}).json()["hconn"]
        conn = f"{cluster.url('QM1')}/v1/connections/{qm}"
        put_h = httpx.post(f"{conn}/objects", json={"object_name": "BENCH.Q", "options": ["OUTPUT"]}).json()["hobj"]
        get_h = httpx.post(f"{conn}/objects",
                           json={"object_name": "BENCH.Q", "options": ["INPUT_SHARED"]}).json()["hobj"]
        payload = "x" * args.size
        bare_url = f"http://127.0.0.1:{bare_port}"

        persistence = "PERSISTENT" if args.persistent else "NOT_PERSISTENT"

        def put_qm(i: int):
            return "POST", f"/objects/{put_h}/put", {"data": payload, "options": ["NO_SYNCPOINT"],
                                                     "md": {"persistence": persistence}}

        def get_qm(i: int):
            return "POST", f"/objects/{get_h}/get", {"options": ["NO_SYNCPOINT"]}

        def put_bare(i: int):
            return "POST", "/put", {"data": payload, "md": {}}

        def get_bare(i: int):
            return "POST", "/get", {}

        r = redis.Redis.from_url(server.url)
        for _ in range(200):
            try:
                if httpx.get(f"http://127.0.0.1:{bare_port}/docs", timeout=1).status_code == 200:
                    break
            except httpx.HTTPError:
                time.sleep(0.05)
        # Warm both up, then alternate rounds so that drift on a busy machine hits both alike;
        # each figure is the median over the rounds.
        measure("qsg (QM1)", conn, 300, args.concurrency, put_qm, get_qm, r)
        measure("bare FastAPI, same Lua", bare_url, 300, args.concurrency, put_bare, get_bare, r)
        rounds: list[list[dict]] = []
        for _ in range(args.rounds):
            rounds.append(measure("qsg (QM1)", conn, args.messages, args.concurrency, put_qm, get_qm, r)
                          + measure("bare FastAPI, same Lua", bare_url, args.messages, args.concurrency,
                                    put_bare, get_bare, r))
        rows = [{k: (statistics.median(rd[i][k] for rd in rounds) if isinstance(v, float) else v)
                 for k, v in rounds[0][i].items()} for i in range(len(rounds[0]))]
        kind = f"persistent (recovery log, QSG_MQLOG_SYNC={args.mqlog_sync})" if args.persistent else "non-persistent"
        print(f"\nmedian of {args.rounds} alternating rounds of {args.messages} {kind} messages of {args.size} "
              f"bytes, {args.concurrency} load processes, shared queue in CFSTRUCT(APPL1), one QM, loopback, "
              f"{os.cpu_count()} cores\n")
        print(f"{'target':24} {'verb':6} {'msgs/s':>8} {'p50 ms':>8} {'p99 ms':>8} {'EVALSHA/verb':>13} "
              f"{'Redis cmds/verb':>16}")
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
    parser.add_argument("--concurrency", type=int, default=4, help="load processes")
    parser.add_argument("--size", type=int, default=1024)
    parser.add_argument("--rounds", type=int, default=3)
    parser.add_argument("--persistent", action="store_true", help="persistent messages (logged for recovery)")
    parser.add_argument("--mqlog-sync", choices=("commit", "none"), default="commit")
    run(parser.parse_args())


if __name__ == "__main__":
    main()
