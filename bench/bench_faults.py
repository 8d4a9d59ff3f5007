"""Does the load hold under faults? Persistent put+commit / get+commit load on shared queues
across a three-QM group while, one after the other, one queue manager is killed (SIGKILL) and
restarted, Redis (AOF, fsync always) is killed (SIGKILL: a crash, nothing flushed on the way out)
and started again from its AOF, the queue manager is paused
(SIGSTOP) for longer than the heartbeat TTL and continued (SIGCONT), it is partitioned from
Redis (a TCP proxy that holds every byte, tests/support/netproxy.py) for longer than the TTL and healed,
Redis itself is stalled (SIGSTOP, then SIGCONT: the commands that waited in its buffers run late),
and the victim's Redis traffic is stalled in the proxy (bytes held, nothing closed, then delivered
late); then the strict exactly-once check of tests/support/faultload.py (a FAILED answer means
nothing happened, only 2009 is in doubt; nothing lost, nothing twice, the order rule).

    python bench/bench_faults.py [--connections 12] [--duration 60] [--kill-at 15] [--qm-down 5]
                                 [--redis-at 35] [--redis-down 2]
                                 [--phases kill,redis,pause,partition,stall,netstall]
                                 [--pause-at T] [--pause-for S] [--partition-at T] [--partition-for S]
                                 [--stall-at T] [--stall-for 8] [--netstall-at T] [--netstall-for 8]
                                 [--gap 12] [--heartbeat-ttl 5] [--cf-timeout 5]

Phases run in the order given by ``--phases``. A fault whose time is not given comes ``--gap``
seconds after the previous fault's part was back (the first at 15 s); ``--duration`` not given
ends the load ``--gap`` seconds after the last one. ``--pause-for`` / ``--partition-for`` default
to the TTL + 3 s. With the partition or netstall phase the victim's Redis traffic goes through the
proxy for the whole run (all other QMs talk to Redis directly).

Starts its own redis-server, a SQLite repository and QM1..QM3 (``qsg serve``) on loopback; the
clients are threads of this process (tests/support/faultload.py, the soak test's load), one connection
each, half putting and half getting, spread over every QM and queue. A client whose call fails
connects again, to its own QM first and then to the next one that answers (as with a CCDT).
Prints the committed throughput second by second, throughput and latency per phase, failed
calls by reason, how long each fault kept throughput under half its rate before the fault, and
whether every committed message was delivered exactly once. Nothing is asserted: the figures go
in docs/explanation/performance.md.
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
from bench.common import pct  # noqa: E402
from tests.support.cluster import Cluster  # noqa: E402
from tests.support.faultload import FaultLoad, Observer  # noqa: E402
from tests.support.redis_server import RedisServer  # noqa: E402

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
    low = [t for t, r in zip(starts, rates, strict=True) if r < reference / 2]
    if not low:
        return 0.0, min(rates)
    t = low[-1] + 0.1
    while rec.rate(t, t + 1) < reference / 2 and t < fault_end + 60:
        t += 0.1
    return t + 0.5 - fault, min(rates)


PHASES = ("kill", "redis", "pause", "partition", "stall", "netstall")


class Schedule:
    """Marks events from the recorder's t0 and sleeps until planned times (the load runs meanwhile)."""

    def __init__(self, rec: Recorder) -> None:
        self.rec = rec
        self.events: list[tuple[float, str]] = []

    def now(self) -> float:
        return time.monotonic() - self.rec.t0

    def at(self, t: float) -> None:
        """Sleep until second ``t`` of the run (at once when it is past): the bench's timeline."""
        time.sleep(max(0.0, t - self.now()))

    def mark(self, what: str) -> float:
        self.events.append((self.now(), what))
        print(f"{self.events[-1][0]:6.1f}s  {what}", flush=True)
        return self.events[-1][0]


def fault_times(args: argparse.Namespace) -> dict[str, tuple[float, float]]:
    """(second of the fault, planned seconds down) per phase, in the order of ``--phases``; a
    time not given comes ``--gap`` s after the previous phase's planned end (the first at 15 s)."""
    down = {"kill": args.qm_down, "redis": args.redis_down,
            "pause": args.pause_for if args.pause_for is not None else args.heartbeat_ttl + 3,
            "partition": args.partition_for if args.partition_for is not None else args.heartbeat_ttl + 3,
            "stall": args.stall_for, "netstall": args.netstall_for}
    given = {"kill": args.kill_at, "redis": args.redis_at, "pause": args.pause_at, "partition": args.partition_at,
             "stall": args.stall_at, "netstall": args.netstall_at}
    plan: dict[str, tuple[float, float]] = {}
    t = 15.0 - args.gap
    for phase in args.phases:
        start = given[phase] if given[phase] is not None else t + args.gap
        plan[phase] = (start, down[phase])
        t = start + down[phase]
    return plan


def run(args: argparse.Namespace) -> None:
    load_before = os.getloadavg()
    busy0, total0, cpu0 = *machine_busy(), own_cpu_s()
    # AOF with appendfsync always: every write Redis answered is on disk before the answer, so a
    # killed Redis (the redis phase) comes back with every committed message.
    server = RedisServer(aof=True)
    server.start()
    workdir = Path(tempfile.mkdtemp(prefix="qsg-bench-faults-"))
    ttl = args.heartbeat_ttl
    group = Cluster(server.url, f"sqlite:///{workdir / 'qsg.db'}", workdir,
                    extra_env={"QSG_IDLE_TIMEOUT_S": str(args.idle_timeout), "QSG_HEARTBEAT_TTL_S": str(ttl),
                               "QSG_HEARTBEAT_INTERVAL_S": str(ttl / 5), "QSG_CF_TIMEOUT_S": str(args.cf_timeout)})
    group.redis_server = server
    queues = [f"BENCH.FAULTS.{i + 1}" for i in range(args.queues)]
    plan = fault_times(args)
    load: FaultLoad | None = None
    faults: list[tuple[str, float, float]] = []  # (name, fault, back)
    try:
        proxied = "partition" in plan or "netstall" in plan
        group.start(list(QMS), proxied=[args.victim] if proxied else [])
        group.mqsc_ok("QM1", "DEFINE CFSTRUCT(APPL1) CFLEVEL(5) RECOVER(YES)\n" + "\n".join(
            f"DEFINE QLOCAL({q}) QSGDISP(SHARED) CFSTRUCT(APPL1) DEFPSIST(YES) MAXDEPTH(999999999)" for q in queues))
        rec = Recorder()
        load = FaultLoad(group, size=args.size, failover=True, observer=rec)
        producers = (args.connections + 1) // 2
        load.start(producers=[(QMS[i % 3], queues[i % len(queues)]) for i in range(producers)],
                   consumers=[(QMS[(i + 1) % 3], queues[i % len(queues)])
                              for i in range(args.connections - producers)])
        sched = Schedule(rec)
        victim = group.qms[args.victim]

        def victim_back(what: str) -> float:
            """Await the victim answering ready again (bounded); the time it did."""
            try:
                victim.wait_ready(timeout_s=60)
                return sched.mark(f"{args.victim} ready{what}")
            except (RuntimeError, AssertionError) as exc:
                return sched.mark(f"{args.victim} NOT ready within 60 s{what}: {str(exc).splitlines()[0]}")

        # each fault is marked just before it is done: failures from then on are its
        for phase, (start, down) in plan.items():
            sched.at(start)
            if phase == "kill":
                t = sched.mark(f"{args.victim} killed (SIGKILL)")
                victim.kill()
                sched.at(start + down)
                sched.mark(f"{args.victim} started again")
                victim.start(wait=False)
                faults.append((f"{args.victim} killed", t, victim_back("")))
            elif phase == "redis":
                t = sched.mark("Redis killed (SIGKILL)")
                server.kill()
                aof_mb = sum(f.stat().st_size for f in server.dir.rglob("appendonly*") if f.is_file()) / 1e6
                sched.at(start + down)
                sched.mark(f"Redis started ({aof_mb:.0f} MB of AOF to load)")
                server.start()
                sched.mark("Redis answers")
                for qm in group.qms.values():
                    qm.wait_ready()
                faults.append(("Redis killed", t, sched.mark("every QM ready")))
            elif phase == "pause":
                t = sched.mark(f"{args.victim} paused (SIGSTOP) for {down:g} s, TTL {ttl:g} s")
                victim.pause()
                sched.at(start + down)
                sched.mark(f"{args.victim} continued (SIGCONT)")
                victim.resume()
                faults.append((f"{args.victim} paused", t, victim_back(" after the pause")))
            elif phase == "partition":
                proxy = group.proxies[args.victim]
                t = sched.mark(f"{args.victim} partitioned from Redis for {down:g} s, TTL {ttl:g} s")
                proxy.partition()
                sched.at(start + down)
                sched.mark("partition healed (held connections reset)")
                proxy.heal()
                faults.append((f"{args.victim} partitioned", t, victim_back(" after the partition")))
            elif phase == "stall":
                t = sched.mark(f"Redis stalled (SIGSTOP) for {down:g} s, CF timeout {args.cf_timeout:g} s")
                server.pause()
                sched.at(start + down)
                sched.mark("Redis continued (SIGCONT): what waited in its buffers runs now")
                server.resume()
                for qm in group.qms.values():
                    qm.wait_ready()
                faults.append(("Redis stalled", t, sched.mark("every QM ready")))
            elif phase == "netstall":
                proxy = group.proxies[args.victim]
                t = sched.mark(f"{args.victim}'s Redis traffic held in the proxy for {down:g} s")
                proxy.partition()
                sched.at(start + down)
                sched.mark("held bytes delivered late (heal with resume)")
                proxy.heal(resume=True)
                faults.append((f"{args.victim} netstalled", t, victim_back(" after the network stall")))
        sched.at(args.duration if args.duration is not None else sched.now() + args.gap)
        t_end = sched.mark("load stopped")
        load.stop()
        outcome = load.settle_and_check(timeout_s=max(30.0, 3 * ttl + args.idle_timeout))
    finally:
        if load is not None:
            load.stop_event.set()
        group.stop()
        server.cleanup()
        if args.keep:
            print(f"work folder kept (queue manager logs, Redis, repository): {workdir}")
        else:
            shutil.rmtree(workdir, ignore_errors=True)
    busy1, total1, cpu1 = *machine_busy(), own_cpu_s()
    events = sched.events

    # ---- the report ----------------------------------------------------------------------
    cores = os.cpu_count() or 1
    tick_s = (total1 - total0) / cores / os.sysconf("SC_CLK_TCK")  # wall seconds measured
    busy = (busy1 - busy0) / (total1 - total0)
    ours = (cpu1 - cpu0) / (tick_s * cores)
    print(f"\n{args.connections} connections ({producers} putting, {args.connections - producers} getting, "
          f"one unit of work per message), {len(queues)} shared queues, {args.size}-byte persistent messages, "
          f"QM1..QM3 + Redis (AOF, appendfsync always) + SQLite, heartbeat TTL {ttl:g} s, idle timeout "
          f"{args.idle_timeout:g} s, loopback, {cores} cores"
          + (f"; {args.victim} reaches Redis through the test proxy" if proxied else ""))
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

    phases = [("before", args.warmup, faults[0][1] if faults else t_end)]
    for i, (name, fault, back) in enumerate(faults):
        phases.append((name, fault, back))
        phases.append(("after " + name.split()[-1], back, faults[i + 1][1] if i + 1 < len(faults) else t_end))
    print("\nper phase: committed messages per second; latency of a unit of work (put+commit, get+commit) in ms\n")
    print(f"{'phase':18} {'from s':>6} {'to s':>6} {'put/s':>6} {'get/s':>6} "
          f"{'put p50':>8} {'p95':>6} {'p99':>6} {'get p50':>8} {'p95':>6} {'p99':>6} {'failed':>6}  share QM1/QM2/QM3")
    for name, a, b in phases:
        lat = {k: [d for t, kk, _, d, _ in rec.units if a <= t < b and kk == k] for k in ("put", "get")}
        cols = "".join(f"{pct(lat[k], 50):9.1f}{pct(lat[k], 95):7.1f}{pct(lat[k], 99):7.1f}" if lat[k]
                       else f"{'-':>9}{'-':>7}{'-':>7}" for k in ("put", "get"))
        nfail = sum(1 for t, _, _ in failed if a <= t < b)
        share = "/".join(f"{100 * rec.rate(a, b, qm=qm) / max(rec.rate(a, b), 1e-9):.0f}" for qm in QMS)
        print(f"{name:18} {a:6.1f} {b:6.1f} {rec.rate(a, b, 'put'):6.0f} {rec.rate(a, b, 'get'):6.0f}{cols} "
              f"{nfail:6d}  "
              f"{share} %")
    empty = sum(1 for _, v, f in rec.calls if f == 2033)
    print(f"(get+commit includes the get's wait when the queue was empty: {empty} gets waited 0.5 s in vain, 2033)")

    print("\nhow long each fault kept throughput (puts + gets, sliding 1 s windows) under half its rate before\n")
    ref_from = args.warmup
    for name, fault, back in faults:
        ref = rec.rate(ref_from, fault)
        took, lowest = recovery(rec, fault, back, ref)
        nfail = sum(1 for t, _, _ in failed if fault <= t < back + 2)
        print(f"{name:18} before {ref:5.0f} msgs/s; lowest 1 s {lowest:5.0f} ({100 * lowest / max(ref, 1e-9):3.0f}%); "
              f"back at >= half after {took:4.1f} s (the faulty part was back after {back - fault:4.1f} s); "
              f"{nfail} failed calls")
        ref_from = back

    print("\nfailed calls by reason (2033 not counted)\n")
    by_reason = Counter((failure_name(f), v) for _, v, f in failed)
    print(f"{'reason':32} {'verb':5} " + " ".join(f"{n[:11]:>11}" for n, _, _ in phases) + f"{'total':>7}")
    for (reason, verb), total in sorted(by_reason.items()):
        counts = [sum(1 for t, v, f in failed if a <= t < b and v == verb and failure_name(f) == reason)
                  for _, a, b in phases]
        print(f"{reason:32} {verb:5} " + " ".join(f"{c:11d}" for c in counts) + f"{total:7d}")
    if not by_reason:
        print("none")

    o = outcome
    print("\nexactly once, after the load stopped and the group settled\n")
    print(f"committed puts {o.committed_puts} (+ {o.in_doubt_puts} in doubt: MQCMIT without an answer, or "
          f"2009; {o.backed_out_puts} answered 2003 or 2345: not committed); delivered {o.delivered} "
          f"({o.drained} drained at the end; {o.in_doubt_gets} gets in doubt, {o.backed_out_gets} backed out)")
    print(f"duplicates {len(o.duplicates)}, missing {len(o.missing)}, delivered but never committed "
          f"{len(o.unexpected)}, order violations {len(o.order_violations)}; left: depth {sum(o.depth.values())}, "
          f"uncommitted {sum(o.uncommitted.values())}, units of work in the CF {len(o.cf_uows)}")
    print(f"exactly-once check: {'PASSED' if o.ok else 'FAILED'}")
    if not o.ok:
        print(f"  e.g. duplicates {o.duplicates[:5]} missing {o.missing[:5]} unexpected {o.unexpected[:5]} "
              f"order {o.order_violations[:3]} uows {o.cf_uows[:5]}")


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--connections", type=int, default=12, help="client connections (half put, half get)")
    parser.add_argument("--duration", type=float, default=None,
                        help="seconds of load (default: --gap after the last fault's part was back)")
    parser.add_argument("--warmup", type=float, default=3, help="seconds left out of the 'before' phase")
    parser.add_argument("--victim", default="QM2", choices=QMS, help="the queue manager killed, paused, partitioned")
    parser.add_argument("--phases", default=",".join(PHASES),
                        help=f"faults to inject, in this order (comma-separated, of {','.join(PHASES)})")
    parser.add_argument("--gap", type=float, default=12, help="seconds between a fault's end and the next fault")
    parser.add_argument("--kill-at", type=float, default=None, help="second at which the victim is killed")
    parser.add_argument("--qm-down", type=float, default=5, help="seconds before it is started again")
    parser.add_argument("--redis-at", type=float, default=None, help="second at which Redis is killed (SIGKILL)")
    parser.add_argument("--redis-down", type=float, default=2, help="seconds before Redis is started again")
    parser.add_argument("--pause-at", type=float, default=None, help="second at which the victim is paused")
    parser.add_argument("--pause-for", type=float, default=None, help="seconds paused (default TTL + 3)")
    parser.add_argument("--partition-at", type=float, default=None,
                        help="second at which the victim is partitioned from Redis")
    parser.add_argument("--partition-for", type=float, default=None, help="seconds partitioned (default TTL + 3)")
    parser.add_argument("--stall-at", type=float, default=None, help="second at which Redis is stalled (SIGSTOP)")
    parser.add_argument("--stall-for", type=float, default=8, help="seconds Redis stays stalled")
    parser.add_argument("--netstall-at", type=float, default=None,
                        help="second at which the victim's Redis traffic is held in the proxy")
    parser.add_argument("--netstall-for", type=float, default=8, help="seconds the bytes are held")
    parser.add_argument("--cf-timeout", type=float, default=5, help="QSG_CF_TIMEOUT_S: how long a CF call waits")
    parser.add_argument("--heartbeat-ttl", type=float, default=5,
                        help="QSG_HEARTBEAT_TTL_S (the heartbeat interval is a fifth of it)")
    parser.add_argument("--queues", type=int, default=2, help="shared queues")
    parser.add_argument("--keep", action="store_true", help="keep the work folder (logs) after the run")
    parser.add_argument("--size", type=int, default=1024, help="message bytes")
    parser.add_argument("--idle-timeout", type=float, default=5,
                        help="QSG_IDLE_TIMEOUT_S: when abandoned connections end and back out")
    args = parser.parse_args()
    args.phases = [p.strip() for p in args.phases.split(",") if p.strip()]
    unknown = [p for p in args.phases if p not in PHASES]
    if unknown or len(set(args.phases)) != len(args.phases):
        parser.error(f"--phases: each of {','.join(PHASES)} at most once (got {args.phases})")
    plan = list(fault_times(args).values())
    times = [args.warmup] + [x for start, down in plan for x in (start, start + down)]
    if args.duration is not None:
        times.append(args.duration)
    if any(b <= a for a, b in zip(times, times[1:], strict=False)):
        parser.error("need warmup < each fault < its end < the next fault < duration")
    run(args)


if __name__ == "__main__":
    main()
