"""What the activity log costs MQPUT: throughput of one queue manager recording every call next
to one that records nothing, and the CPU time per record of the writer itself.

    python bench/bench_activity.py [--messages 4000] [--concurrency 4] [--size 1024] [--rounds 5]

Starts its own redis-server and two ``qsg serve`` processes on one SQLite repository: QM1 with
the activity log (the default), QM2 with ``QSG_ACTIVITY_ENABLED=false``. Each puts to its own
shared queue (NO_SYNCPOINT, 1 KB) from the same load processes; rounds alternate between them so
that drift on a busy machine hits both alike, and each figure is the median over the rounds.
Nothing is asserted: the figures go in the README.
"""

from __future__ import annotations

import argparse
import asyncio
import json
import os
import statistics
import sys
import tempfile
import time
from pathlib import Path

import httpx

ROOT = Path(__file__).resolve().parents[1]
sys.path.insert(0, str(ROOT))

from bench.bench_mqi import pct, run_phase  # noqa: E402
from tests.cluster import Cluster  # noqa: E402
from tests.redis_server import RedisServer  # noqa: E402


def writer_cost(records: int = 200_000) -> tuple[float, float]:
    """CPU microseconds per record of the writer path alone (submit on the event loop, JSON and
    file write in the worker thread, rotation and shipping), and bytes per record."""
    from app.activity.store import FolderStore
    from app.activity.writer import ActivityWriter, Spool

    record = {"v": 1, "ts": 1_748_772_000_000, "qsg": "QSG1", "qmgr": "QM1", "verb": "PUT",
              "hconn": "QM1-0123456789abcdef01234567", "appl": "BENCH", "object": "BENCH.Q1", "qsgdisp": "SHARED",
              "syncpoint": False, "depth": 1234, "size": 1024, "cc": 0, "rc": 0,
              "msg_id": "43535120514d3120189d1a2b3c4d5e6f0000000000000001", "correl_id": "0" * 48,
              "priority": 0, "persistent": False, "latency_us": 1234}

    async def go() -> tuple[float, int]:
        with tempfile.TemporaryDirectory() as d:
            writer = ActivityWriter(Spool(Path(d) / "spool", FolderStore(Path(d) / "store"), qsg="QSG1", qmgr="QM1"),
                                    max_records=50_000)
            await writer.start()
            cpu = time.process_time()
            for i in range(records):
                if writer.full:
                    await writer.room()
                writer.submit({**record, "ts": record["ts"] + i})
            await writer.stop()
            cpu = time.process_time() - cpu
            size = sum(f.stat().st_size for f in Path(d, "store").rglob("*.jsonl"))
            return cpu, size

    cpu, size = asyncio.run(go())
    return cpu / records * 1e6, size / records


def run(args: argparse.Namespace) -> None:
    server = RedisServer()
    server.start()
    workdir = Path(tempfile.mkdtemp(prefix="qsg-bench-activity-"))
    cluster = Cluster(server.url, f"sqlite:///{workdir / 'qsg.db'}", workdir)
    try:
        from app.repository.db import upgrade

        upgrade(cluster.database_url)
        on = cluster.add("QM1", start=False)
        off = cluster.add("QM2", start=False)
        off.env["QSG_ACTIVITY_ENABLED"] = "false"
        on.start()
        off.start()
        cluster.mqsc_ok("QM1", "DEFINE CFSTRUCT(APPL1) CFLEVEL(5)\n"
                               "DEFINE QLOCAL(BENCH.Q1) QSGDISP(SHARED) CFSTRUCT(APPL1) MAXDEPTH(999999999)\n"
                               "DEFINE QLOCAL(BENCH.Q2) QSGDISP(SHARED) CFSTRUCT(APPL1) MAXDEPTH(999999999)")
        payload = "x" * args.size
        targets = {}
        for label, qm, queue in (("activity log on (QM1)", on, "BENCH.Q1"), ("activity log off (QM2)", off, "BENCH.Q2")):
            hconn = httpx.post(f"{qm.url}/v1/connections", json={"appl_name": "BENCH"}).json()["hconn"]
            conn = f"{qm.url}/v1/connections/{hconn}"
            hobj = httpx.post(f"{conn}/objects", json={"object_name": queue, "options": ["OUTPUT"]}).json()["hobj"]
            targets[label] = (conn, hobj)

        def putter(hobj: str):
            return lambda i: ("POST", f"/objects/{hobj}/put", {"data": payload, "options": ["NO_SYNCPOINT"]})

        results: dict[str, list[tuple[float, float, float]]] = {k: [] for k in targets}
        for label, (conn, hobj) in targets.items():  # warm-up
            run_phase(conn, 300, args.concurrency, putter(hobj))
        for _ in range(args.rounds):
            for label, (conn, hobj) in targets.items():
                elapsed, lat = run_phase(conn, args.messages, args.concurrency, putter(hobj))
                results[label].append((args.messages / elapsed, pct(lat, 50), pct(lat, 99)))
        cluster.stop()  # QM1 ships its log
        recorded = sum(1 for f in (workdir / "activity").glob("date=*/qmgr=QM1/*.jsonl")
                       for line in f.read_text().splitlines() if json.loads(line)["verb"] == "PUT")
        print(f"\nMQPUT, median of {args.rounds} alternating rounds of {args.messages} messages of {args.size} bytes, "
              f"{args.concurrency} load processes, shared queue, loopback, {os.cpu_count()} cores\n")
        print(f"{'target':26} {'msgs/s':>8} {'p50 ms':>8} {'p99 ms':>8}")
        medians = {}
        for label, rows in results.items():
            medians[label] = [statistics.median(r[i] for r in rows) for i in range(3)]
            rate, p50, p99 = medians[label]
            print(f"{label:26} {rate:8.0f} {p50:8.2f} {p99:8.2f}")
        rate_on, rate_off = medians["activity log on (QM1)"][0], medians["activity log off (QM2)"][0]
        print(f"activity log cost on MQPUT throughput: {100 * (1 - rate_on / rate_off):.1f}% "
              f"(per round: {', '.join(f'{100 * (1 - a[0] / b[0]):.1f}%' for a, b in zip(*results.values()))})")
        print(f"PUT records shipped by QM1: {recorded} (expected {300 + args.rounds * args.messages})")
    finally:
        cluster.stop()
        server.cleanup()
    us, size = writer_cost()
    print(f"writer alone: {us:.1f} us of CPU and {size:.0f} bytes per record")


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--messages", type=int, default=4000)
    parser.add_argument("--concurrency", type=int, default=4, help="load processes")
    parser.add_argument("--size", type=int, default=1024)
    parser.add_argument("--rounds", type=int, default=5)
    run(parser.parse_args())


if __name__ == "__main__":
    main()
