"""Does the load hold under faults? Persistent put+commit / get+commit load on shared queues
across a three-QM group while one queue manager is killed (SIGKILL) and restarted and Redis
(AOF, fsync always) is stopped and started again; then the exactly-once check.

    python bench/bench_faults.py [--connections 12] [--duration 60] [--kill-at 15] [--qm-down 5]
                                 [--redis-at 35] [--redis-down 2]

Starts its own redis-server, a SQLite repository and QM1..QM3 (``qsg serve``) on loopback; the
clients are threads of this process (tests/faultload.py, the soak test's load), one connection
each, half putting and half getting, spread over every QM and queue. A client whose call fails
connects again, to its own QM first and then to the next one that answers (as with a CCDT).
Prints the committed throughput second by second, throughput and latency per phase, failed
calls by reason, how long each fault kept throughput under half its rate before the fault, and
whether every committed message was delivered exactly once. Nothing is asserted: the figures go
in the README.
"""

from __future__ import annotations

import argparse
import os
import resource
import shutil
import sys
import tempfile
import time
from collections import Counter
from pathlib import Path

ROOT = Path(__file__).resolve().parents[1]
sys.path.insert(0, str(ROOT))

from app.core.reasons import reason_name  # noqa: E402
from bench.bench_mqi import pct  # noqa: E402
from tests.cluster import Cluster  # noqa: E402
from tests.faultload import FaultLoad, Observer  # noqa: E402
from tests.redis_server import RedisServer  # noqa: E402

QMS = ("QM1", "QM2", "QM3")


class Recorder(Observer):
    """Every call and every committed unit of work, timed from ``t0`` (list.append is atomic)."""

    def __init__(self) -> None:
        self.t0 = time.monotonic()
        self.calls: list[tuple[float, str, object]] = []  # (end, verb, failure or None)
        self.units: list[tuple[float, str, int, float, str]] = []  # (end, "put"/"get", messages, seconds, QM)

    def call(self, verb, start, end, failure) -> None:
        self.calls.append((end - self.t0, verb, failure))

    def committed(self, qm, kind, count, start, end) -> None:
        self.units.append((end - self.t0, kind, count, end - start, qm))

    def rate(self, a: float, b: float, kind: str | None = None, qm: str | None = None) -> float:
        """Committed messages per second in [a, b) (puts, gets, or both; on one QM or all)."""
        n = sum(c for t, k, c, _, q in self.units if a <= t < b and kind in (None, k) and qm in (None, q))
        return n / (b - a) if b > a else 0.0


def machine_busy() -> tuple[int, int]:
    """(busy, total) clock ticks of all CPUs since boot, from /proc/stat."""
    ticks = [int(x) for x in Path("/proc/stat").read_text().split("\n", 1)[0].split()[1:]]
    idle = ticks[3] + ticks[4]  # idle + iowait
    return sum(ticks) - idle, sum(ticks)


def own_cpu_s() -> float:
    """CPU seconds of this process and its waited-for children (the QMs, Redis)."""
    usage = [resource.getrusage(who) for who in (resource.RUSAGE_SELF, resource.RUSAGE_CHILDREN)]
    return sum(u.ru_utime + u.ru_stime for u in usage)


def failure_name(failure: object) -> str:
    return f"{failure} {reason_name(failure)}" if isinstance(failure, int) else f"HTTP {failure}"


def recovery(rec: Recorder, fault: float, fault_end: float, reference: float) -> tuple[float, float]:
    """(seconds from the fault until throughput was back at half ``reference``, lowest 1-s
    throughput). Windows of 1 s slide by 0.1 s from the fault; a dip counts when its window
    starts before the faulty part was back (``fault_end``) + 2 s; 0 when none fell under half.
    A window stands for its middle: a step back to full rate at T first reaches half in the
    window centred on T."""
    starts = [fault + i / 10 for i in range(int((fault_end + 2 - fault) * 10) + 1)]
    rates = [rec.rate(t, t + 1) for t in starts]
    low = [t for t, r in zip(starts, rates) if r < reference / 2]
    if not low:
        return 0.0, min(rates)
    t = low[-1] + 0.1
    while rec.rate(t, t + 1) < reference / 2 and t < fault_end + 60:
        t += 0.1
    return t + 0.5 - fault, min(rates)


def run(args: argparse.Namespace) -> None:
    load_before = os.getloadavg()
    busy0, total0, cpu0 = *machine_busy(), own_cpu_s()
    server = RedisServer(aof=True)
    server.start()
    workdir = Path(tempfile.mkdtemp(prefix="qsg-bench-faults-"))
    group = Cluster(server.url, f"sqlite:///{workdir / 'qsg.db'}", workdir,
                    extra_env={"QSG_IDLE_TIMEOUT_S": str(args.idle_timeout)})
    group.redis_server = server
    queues = [f"BENCH.FAULTS.{i + 1}" for i in range(args.queues)]
    load: FaultLoad | None = None
    try:
        group.start(list(QMS))
        group.mqsc_ok("QM1", "DEFINE CFSTRUCT(APPL1) CFLEVEL(5) RECOVER(YES)\n" + "\n".join(
            f"DEFINE QLOCAL({q}) QSGDISP(SHARED) CFSTRUCT(APPL1) DEFPSIST(YES) MAXDEPTH(999999999)" for q in queues))
        rec = Recorder()
        load = FaultLoad(group, size=args.size, failover=True, observer=rec)
        producers = (args.connections + 1) // 2
        load.start(producers=[(QMS[i % 3], queues[i % len(queues)]) for i in range(producers)],
                   consumers=[(QMS[(i + 1) % 3], queues[i % len(queues)])
                              for i in range(args.connections - producers)])
        events: list[tuple[float, str]] = []

        def at(t: float) -> None:
            time.sleep(max(0.0, rec.t0 + t - time.monotonic()))

        def mark(what: str) -> float:
            events.append((time.monotonic() - rec.t0, what))
            print(f"{events[-1][0]:6.1f}s  {what}", flush=True)
            return events[-1][0]

        victim = group.qms[args.victim]
        at(args.kill_at)  # each fault is marked just before it is done: failures from then on are its
        t_kill = mark(f"{args.victim} killed (SIGKILL)")
        victim.kill()
        at(args.kill_at + args.qm_down)
        mark(f"{args.victim} started again")
        victim.start(wait=False)
        victim.wait_ready()
        t_qm_back = mark(f"{args.victim} ready")
        at(args.redis_at)
        t_redis = mark("Redis stopped (SIGTERM)")
        server.stop()
        aof_mb = sum(f.stat().st_size for f in server.dir.rglob("appendonly*") if f.is_file()) / 1e6
        at(args.redis_at + args.redis_down)
        mark(f"Redis started ({aof_mb:.0f} MB of AOF to load)")
        server.start()
        mark("Redis answers")
        for qm in group.qms.values():
            qm.wait_ready()
        t_redis_back = mark("every QM ready")
        at(args.duration)
        t_end = mark("load stopped")
        load.stop()
        outcome = load.settle_and_check()
    finally:
        if load is not None:
            load.stop_event.set()
        group.stop()
        server.cleanup()
        shutil.rmtree(workdir, ignore_errors=True)
    busy1, total1, cpu1 = *machine_busy(), own_cpu_s()

    # ---- the report ----------------------------------------------------------------------
    cores = os.cpu_count() or 1
    tick_s = (total1 - total0) / cores / os.sysconf("SC_CLK_TCK")  # wall seconds measured
    busy = (busy1 - busy0) / (total1 - total0)
    ours = (cpu1 - cpu0) / (tick_s * cores)
    print(f"\n{args.connections} connections ({producers} putting, {args.connections - producers} getting, "
          f"one unit of work per message), {len(queues)} shared queues, {args.size}-byte persistent messages, "
          f"QM1..QM3 + Redis (AOF, appendfsync always) + SQLite, heartbeat TTL 5 s (the default), idle timeout "
          f"{args.idle_timeout:g} s, loopback, {cores} cores")
    print(f"machine: load average {load_before[0]:.2f} before the run; during it the cores were {100 * busy:.0f}% "
          f"busy, {100 * ours:.0f}% from this bench (clients, QMs, Redis) and {100 * max(0.0, busy - ours):.0f}% "
          f"from other processes")

    print("\ncommitted messages per second (1 s buckets)\n")
    print(f"{'t s':>4} {'put/s':>6} {'get/s':>6} {'failed':>6}  event")
    failed = [(t, v, f) for t, v, f in rec.calls if f is not None and f != 2033]
    for s in range(int(t_end) + 1):
        what = "; ".join(e for t, e in events if s <= t < s + 1)
        nfail = sum(1 for t, _, _ in failed if s <= t < s + 1)
        print(f"{s:4d} {rec.rate(s, s + 1, 'put'):6.0f} {rec.rate(s, s + 1, 'get'):6.0f} {nfail:6d}  {what}")

    phases = [("before", args.warmup, t_kill), (f"{args.victim} down", t_kill, t_qm_back),
              ("between", t_qm_back, t_redis), ("Redis down", t_redis, t_redis_back), ("after", t_redis_back, t_end)]
    print("\nper phase: committed messages per second; latency of a unit of work (put+commit, get+commit) in ms\n")
    print(f"{'phase':14} {'from s':>6} {'to s':>6} {'put/s':>6} {'get/s':>6} "
          f"{'put p50':>8} {'p95':>6} {'p99':>6} {'get p50':>8} {'p95':>6} {'p99':>6} {'failed':>6}  share QM1/QM2/QM3")
    for name, a, b in phases:
        lat = {k: [d for t, kk, _, d, _ in rec.units if a <= t < b and kk == k] for k in ("put", "get")}
        cols = "".join(f"{pct(lat[k], 50):9.1f}{pct(lat[k], 95):7.1f}{pct(lat[k], 99):7.1f}" if lat[k]
                       else f"{'-':>9}{'-':>7}{'-':>7}" for k in ("put", "get"))
        nfail = sum(1 for t, _, _ in failed if a <= t < b)
        share = "/".join(f"{100 * rec.rate(a, b, qm=qm) / max(rec.rate(a, b), 1e-9):.0f}" for qm in QMS)
        print(f"{name:14} {a:6.1f} {b:6.1f} {rec.rate(a, b, 'put'):6.0f} {rec.rate(a, b, 'get'):6.0f}{cols} {nfail:6d}  "
              f"{share} %")
    empty = sum(1 for _, v, f in rec.calls if f == 2033)
    print(f"(get+commit includes the get's wait when the queue was empty: {empty} gets waited 0.5 s in vain, 2033)")

    print("\nhow long each fault kept throughput (puts + gets, sliding 1 s windows) under half its rate before\n")
    for name, fault, back, ref_from in ((f"{args.victim} killed", t_kill, t_qm_back, args.warmup),
                                        ("Redis stopped", t_redis, t_redis_back, t_qm_back)):
        ref = rec.rate(ref_from, fault)
        took, lowest = recovery(rec, fault, back, ref)
        print(f"{name:14} before {ref:5.0f} msgs/s; lowest 1 s {lowest:5.0f} ({100 * lowest / ref:3.0f}%); "
              f"back at >= half after {took:4.1f} s (the faulty part was back after {back - fault:4.1f} s)")

    print("\nfailed calls by reason (2033 not counted)\n")
    by_reason = Counter((failure_name(f), v) for _, v, f in failed)
    print(f"{'reason':32} {'verb':5} " + " ".join(f"{n:>11}" for n, _, _ in phases) + f"{'total':>7}")
    for (reason, verb), total in sorted(by_reason.items()):
        counts = [sum(1 for t, v, f in failed if a <= t < b and v == verb and failure_name(f) == reason)
                  for _, a, b in phases]
        print(f"{reason:32} {verb:5} " + " ".join(f"{c:11d}" for c in counts) + f"{total:7d}")
    if not by_reason:
        print("none")

    o = outcome
    print("\nexactly once, after the load stopped and the group settled\n")
    print(f"committed puts {o.committed_puts} (+ {o.uncertain_puts} whose MQCMIT failed: in doubt); "
          f"delivered {o.delivered} ({o.drained} drained at the end; {o.uncertain_gets} gets whose MQCMIT failed)")
    print(f"duplicates {len(o.duplicates)}, missing {len(o.missing)}, delivered but never committed "
          f"{len(o.unexpected)}; left: depth {sum(o.depth.values())}, uncommitted {sum(o.uncommitted.values())}, "
          f"units of work in the CF {len(o.cf_uows)}")
    print(f"exactly-once check: {'PASSED' if o.ok else 'FAILED'}")
    if not o.ok:
        print(f"  e.g. duplicates {o.duplicates[:5]} missing {o.missing[:5]} unexpected {o.unexpected[:5]} "
              f"uows {o.cf_uows[:5]}")


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--connections", type=int, default=12, help="client connections (half put, half get)")
    parser.add_argument("--duration", type=float, default=60, help="seconds of load")
    parser.add_argument("--warmup", type=float, default=3, help="seconds left out of the 'before' phase")
    parser.add_argument("--victim", default="QM2", choices=QMS, help="the queue manager killed")
    parser.add_argument("--kill-at", type=float, default=15, help="second at which the victim is killed")
    parser.add_argument("--qm-down", type=float, default=5, help="seconds before it is started again")
    parser.add_argument("--redis-at", type=float, default=35, help="second at which Redis is stopped")
    parser.add_argument("--redis-down", type=float, default=2, help="seconds before Redis is started again")
    parser.add_argument("--queues", type=int, default=2, help="shared queues")
    parser.add_argument("--size", type=int, default=1024, help="message bytes")
    parser.add_argument("--idle-timeout", type=float, default=5,
                        help="QSG_IDLE_TIMEOUT_S: when abandoned connections end and back out")
    args = parser.parse_args()
    if not args.warmup < args.kill_at < args.kill_at + args.qm_down < args.redis_at < args.duration:
        parser.error("need warmup < kill-at < kill-at + qm-down < redis-at < duration")
    run(args)


if __name__ == "__main__":
    main()
