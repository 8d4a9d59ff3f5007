"""What the activity log costs MQPUT: throughput of one queue manager recording every call next
to one that records nothing, and the CPU time per record of the writer itself.

    python bench/bench_activity.py [--messages 2000] [--concurrency 4] [--size 1024] [--rounds 15]

Starts two groups of one ``qsg serve`` each (own redis-server and SQLite repository, so that
both queue managers have the same roles): one with the activity log (the default), one with
``QSG_ACTIVITY_ENABLED=false``. Both get the same puts (NO_SYNCPOINT, 1 KB, a shared queue) from
the same load processes; rounds alternate between them so that drift on a busy machine hits
both alike, and each figure is the median over the rounds. Besides throughput it reports the
queue manager process's CPU time per MQPUT, which a busy machine disturbs much less.
Nothing is asserted: the figures go in docs/explanation/performance.md.
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

from bench.common import cpu_seconds, pct, run_phase  # noqa: E402
from tests.support.cluster import Cluster  # noqa: E402
from tests.support.redis_server import RedisServer  # noqa: E402


def recording_cost(calls: int = 100_000) -> tuple[float, float]:
    """CPU microseconds per MQPUT that recording adds, all of it: the decorator and its
    describers, ``note``, encoding the JSON line, and the worker thread writing and shipping
    files. Measured in one process on an MQPUT stand-in that does nothing else, with the
    activity log on and then off (min of three tries each); also the bytes per record."""
    from app.activity import Verb, note, recorded
    from app.activity.log import ActivityLog
    from app.activity.store import FolderStore
    from app.activity.writer import ActivityWriter, Spool
    from app.core.calls import PutCall, PutOutcome
    from app.core.clock import SystemClock
    from app.core.mqmd import MQMD
    from app.core.options import parse_put_options

    class Resolved:
        class base:  # noqa: N801 - shaped like ResolvedQueue
            name, qsgdisp, attrs = "BENCH.Q", "SHARED", {}

        opened = base

    class Handle:
        resolved = Resolved

    class Conn:
        appl_name = "BENCH"
        handles = {"1": Handle}

    class QM:
        activity: ActivityLog

    class Mqi:
        def __init__(self, activity: ActivityLog) -> None:
            self.qm = QM()
            self.qm.activity = activity
            self.connections = {"QM1-0123456789abcdef01234567": Conn}
            self.n = 0

        @recorded(Verb.PUT)
        async def put(self, hconn: str, hobj: str, call: PutCall) -> PutOutcome:
            self.n += 1
            note(hconn, resolved=Resolved, depth=self.n, size=1024)
            return PutOutcome(MQMD(msg_id=f"{self.n:048x}", priority=0, persistence="NOT_PERSISTENT"))

    body = PutCall(MQMD(), b"x" * 1024, parse_put_options(["NO_SYNCPOINT"]))

    async def go(enabled: bool) -> tuple[float, int]:
        with tempfile.TemporaryDirectory() as d:
            writer = ActivityWriter(Spool(Path(d) / "spool", FolderStore(Path(d) / "store"), qsg="QSG1",
                                          qmgr="QM1"), max_records=20_000) if enabled else None
            mqi = Mqi(ActivityLog("QSG1", "QM1", SystemClock(), writer))
            await mqi.qm.activity.start()
            cpu = time.process_time()
            for _ in range(calls):
                await mqi.put("QM1-0123456789abcdef01234567", "1", body)
            await mqi.qm.activity.stop()
            cpu = time.process_time() - cpu
            size = sum(f.stat().st_size for f in Path(d).rglob("*.jsonl"))
            return cpu, size

    on = min(asyncio.run(go(True)) for _ in range(3))
    off = min(asyncio.run(go(False)) for _ in range(3))
    return (on[0] - off[0]) / calls * 1e6, on[1] / calls


def start_group(activity: bool) -> tuple[RedisServer, Cluster]:
    """A group of one queue manager (its own Redis and repository), so that the two measured
    QMs have the same roles: neither does group-wide work (expiry scans of shared queues, ...)
    for the other."""
    server = RedisServer()
    server.start()
    workdir = Path(tempfile.mkdtemp(prefix="qsg-bench-activity-"))
    cluster = Cluster(server.url, f"sqlite:///{workdir / 'qsg.db'}", workdir,
                      extra_env={"QSG_ACTIVITY_ENABLED": "true" if activity else "false"})
    cluster.start(["QM1"])
    cluster.mqsc_ok("QM1", "DEFINE CFSTRUCT(APPL1) CFLEVEL(5) RECOVER(YES)\n"
                           "DEFINE QLOCAL(BENCH.Q) QSGDISP(SHARED) CFSTRUCT(APPL1) MAXDEPTH(999999999)")
    return server, cluster


def run(args: argparse.Namespace) -> None:
    groups = {"activity log on": start_group(True), "activity log off": start_group(False)}
    try:
        payload = "x" * args.size
        targets = {}
        for label, (_, cluster) in groups.items():
            url = cluster.url("QM1")
            hconn = httpx.post(f"{url}/v1/connections", json={"appl_name": "BENCH"}).json()["hconn"]
            conn = f"{url}/v1/connections/{hconn}"
            hobj = httpx.post(f"{conn}/objects", json={"object_name": "BENCH.Q", "options": ["OUTPUT"]}).json()["hobj"]
            targets[label] = (conn, hobj, cluster.qms["QM1"].proc.pid)

        def putter(hobj: str):
            return lambda i: ("POST", f"/objects/{hobj}/put", {"data": payload, "options": ["NO_SYNCPOINT"]})

        results: dict[str, list[tuple[float, float, float, float]]] = {k: [] for k in targets}
        for conn, hobj, _ in targets.values():  # warm-up
            run_phase(conn, 300, args.concurrency, putter(hobj))
        for _ in range(args.rounds):
            for label, (conn, hobj, pid) in targets.items():
                cpu = cpu_seconds(pid)
                elapsed, lat = run_phase(conn, args.messages, args.concurrency, putter(hobj))
                cpu_us = (cpu_seconds(pid) - cpu) / args.messages * 1e6
                results[label].append((args.messages / elapsed, pct(lat, 50), pct(lat, 99), cpu_us))
        on_cluster = groups["activity log on"][1]
        on_cluster.stop()  # ships its log
        recorded = sum(1 for f in (on_cluster.workdir / "activity").glob("date=*/qmgr=QM1/*.jsonl")
                       for line in f.read_text().splitlines() if json.loads(line)["verb"] == "PUT")
        print(f"\nMQPUT, median of {args.rounds} alternating rounds of {args.messages} messages of {args.size} bytes, "
              f"{args.concurrency} load processes, shared queue, one QM per group, loopback, {os.cpu_count()} cores\n")
        print(f"{'target':20} {'msgs/s':>8} {'p50 ms':>8} {'p99 ms':>8} {'QM CPU us/put':>14}")
        medians = {}
        for label, rows in results.items():
            medians[label] = [statistics.median(r[i] for r in rows) for i in range(4)]
            rate, p50, p99, cpu_us = medians[label]
            print(f"{label:20} {rate:8.0f} {p50:8.2f} {p99:8.2f} {cpu_us:14.0f}")
        on_m, off_m = medians["activity log on"], medians["activity log off"]
        rounds = ", ".join(f"{100 * (1 - a[0] / b[0]):.1f}%" for a, b in zip(*results.values(), strict=True))
        print(f"activity log cost on MQPUT throughput: {100 * (1 - on_m[0] / off_m[0]):.1f}% (per round: {rounds})")
        print(f"activity log cost in queue manager CPU per MQPUT: {on_m[3] - off_m[3]:.0f} us "
              f"({100 * (on_m[3] / off_m[3] - 1):.1f}%)")
        print(f"PUT records shipped: {recorded} (expected {300 + args.rounds * args.messages})")
    finally:
        for server, cluster in groups.values():
            cluster.stop()
            server.cleanup()
    us, size = recording_cost()
    print(f"recording alone (decorator, JSON line, worker thread, files): {us:.1f} us of CPU and "
          f"{size:.0f} bytes per MQPUT")


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--messages", type=int, default=2000)
    parser.add_argument("--concurrency", type=int, default=4, help="load processes")
    parser.add_argument("--size", type=int, default=1024)
    parser.add_argument("--rounds", type=int, default=15)
    run(parser.parse_args())


if __name__ == "__main__":
    main()
