"""Group throughput with 1, 2 and 3 queue managers, on one Redis and on a 3-master Redis Cluster.

    python bench/bench_scale.py [--seconds 6] [--connections 16] [--size 1024] [--qms 1,2,3]
                                [--backends redis,cluster]

Needs wrk (Debian: ``apt-get install wrk``). For each backend and each group size it starts its
own Redis (one ``redis-server``, or a 3-master cluster from the same binary), a SQLite repository
and N ``qsg serve`` processes, defines three CF structures (chosen so that on the cluster each
lives on a different master) with one shared queue each, and drives every queue manager with
its own wrk process at the same time: queue manager i puts to and gets from the queue of
structure i. It prints the group's messages/s, latency p50/p99 (the worst wrk's), and the CPU
per message of the queue managers together and of Redis (every node) together. Nothing is
asserted: the figures go in docs/howto/scaling-out.md.
"""

from __future__ import annotations

import argparse
import json
import os
import sys
import tempfile
import threading
from dataclasses import dataclass
from pathlib import Path

import httpx

ROOT = Path(__file__).resolve().parents[1]
sys.path.insert(0, str(ROOT))

from bench.bench_wrk import wrk  # noqa: E402
from bench.common import cpu_seconds  # noqa: E402
from tests.support.cluster import Cluster  # noqa: E402
from tests.support.redis_cluster import RedisClusterServer  # noqa: E402
from tests.support.redis_server import RedisServer  # noqa: E402
from tests.support.security import mqsc_ok  # noqa: E402

QSG = "QSG1"


@dataclass
class Row:
    backend: str
    qms: int
    verb: str
    msgs_per_s: float
    p50_ms: float
    p99_ms: float
    qm_cpu_us: float
    redis_cpu_us: float
    errors: int


class Backend:
    """One Redis or one Redis Cluster, with the pids whose CPU counts as the coupling facility's."""

    def __init__(self, kind: str) -> None:
        self.kind = kind
        self.server: RedisServer | RedisClusterServer
        if kind == "cluster":
            self.server = RedisClusterServer(masters=3)
        else:
            self.server = RedisServer()
        self.server.start()

    @property
    def url(self) -> str:
        return self.server.url

    def pids(self) -> list[int]:
        if isinstance(self.server, RedisClusterServer):
            return [n.proc.pid for n in self.server.nodes if n.proc is not None]
        return [self.server.proc.pid]

    def structures(self) -> list[str]:
        """Three structure names; on the cluster, each on a different master."""
        if not isinstance(self.server, RedisClusterServer):
            return ["APPL1", "APPL2", "APPL3"]
        chosen: dict[int, str] = {}
        for i in range(1, 200):
            name = f"APPL{i}"
            node = self.server.node_of_key("{" + f"{QSG}.CF.{name}" + "}")
            chosen.setdefault(node.port, name)
            if len(chosen) == 3:
                break
        return list(chosen.values())

    def cleanup(self) -> None:
        self.server.cleanup()


def measure(backend: Backend, n: int, args: argparse.Namespace) -> list[Row]:
    """Start a group of ``n`` queue managers on ``backend`` and run a put and a get phase."""
    workdir = Path(tempfile.mkdtemp(prefix="qsg-scale-"))
    group = Cluster(backend.url, f"sqlite:///{workdir / 'qsg.db'}", workdir,
                    extra_env={"QSG_LOG_LEVEL": "warning", "QSG_ACTIVITY_ENABLED": "true"})
    names = [f"QM{i + 1}" for i in range(n)]
    try:
        group.start(names)
        structs = backend.structures()
        mqsc_ok(group, "QM1", "\n".join(
            f"DEFINE CFSTRUCT({s}) CFLEVEL(5) RECOVER(NO)\n"
            f"DEFINE QLOCAL(SCALE.Q{i + 1}) QSGDISP(SHARED) CFSTRUCT({s}) MAXDEPTH(999999999)"
            for i, s in enumerate(structs)))
        paths: dict[str, dict[str, list[str]]] = {}
        for i, qm in enumerate(names):
            paths[qm] = {"put": [], "get": []}
            with httpx.Client(base_url=group.url(qm)) as c:
                for _ in range(args.connections * 2):
                    hconn = c.post("/v1/connections", json={"appl_name": "SCALE"}).json()["hconn"]
                    for opts, verb in ((["OUTPUT"], "put"), (["INPUT_SHARED"], "get")):
                        hobj = c.post(f"/v1/connections/{hconn}/objects",
                                      json={"object_name": f"SCALE.Q{i + 1}", "options": opts}).json()["hobj"]
                        paths[qm][verb].append(f"/v1/connections/{hconn}/objects/{hobj}/{verb}")
        bodies = {"put": json.dumps({"data": "x" * args.size, "options": ["NO_SYNCPOINT"],
                                     "md": {"persistence": "NOT_PERSISTENT"}}),
                  "get": json.dumps({"options": ["NO_SYNCPOINT"]})}
        qm_pids = [group.qms[qm].proc.pid for qm in names]
        rows = []
        # gets run for half as long as puts, so that no queue runs empty (errors would say so)
        for verb, seconds in (("put", args.seconds), ("get", args.seconds / 2)):
            results: dict[str, dict[str, float]] = {}

            def drive(qm: str, verb: str = verb, seconds: float = seconds,
                      results: dict[str, dict[str, float]] = results) -> None:
                qdir = workdir / f"wrk-{qm}"
                qdir.mkdir(exist_ok=True)
                results[qm] = wrk(group.url(qm), paths[qm][verb], bodies[verb], seconds, args.connections, qdir,
                                  threads=1)

            q0, r0 = sum(map(cpu_seconds, qm_pids)), sum(map(cpu_seconds, backend.pids()))
            threads = [threading.Thread(target=drive, args=(qm,)) for qm in names]
            for t in threads:
                t.start()
            for t in threads:
                t.join()
            q1, r1 = sum(map(cpu_seconds, qm_pids)), sum(map(cpu_seconds, backend.pids()))
            ok = sum(r["requests"] - r["errors"] for r in results.values())
            m = max(ok, 1)
            rows.append(Row(backend.kind, n, "MQPUT" if verb == "put" else "MQGET",
                            ok / max(1, round(seconds)), max(r["p50"] for r in results.values()),
                            max(r["p99"] for r in results.values()), (q1 - q0) / m * 1e6, (r1 - r0) / m * 1e6,
                            int(sum(r["errors"] for r in results.values()))))
        return rows
    finally:
        group.stop()


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--seconds", type=float, default=6)
    parser.add_argument("--connections", type=int, default=16, help="wrk connections per queue manager")
    parser.add_argument("--size", type=int, default=1024)
    parser.add_argument("--qms", default="1,2,3", help="group sizes to measure")
    parser.add_argument("--backends", default="redis,cluster")
    args = parser.parse_args()
    rows: list[Row] = []
    for kind in args.backends.split(","):
        backend = Backend(kind)
        try:
            for n in (int(x) for x in args.qms.split(",")):
                rows.extend(measure(backend, n, args))
        finally:
            backend.cleanup()
    print(f"\nOne wrk -t1 -c{args.connections} per queue manager, all at once ({args.seconds:g}s puts, "
          f"{args.seconds / 2:g}s gets), {args.size}-byte non-persistent messages, NO_SYNCPOINT, QM i on the "
          f"shared queue of structure i, activity log on, {os.cpu_count()} cores; CPU per message\n")
    print(f"{'coupling facility':18} {'QMs':>3} {'verb':6} {'msgs/s':>8} {'p50 ms':>7} {'p99 ms':>7} "
          f"{'QMs CPU us':>11} {'Redis CPU us':>13} {'errors':>7}")
    for r in rows:
        cf = "one Redis" if r.backend == "redis" else "3-master cluster"
        print(f"{cf:18} {r.qms:3d} {r.verb:6} {r.msgs_per_s:8.0f} {r.p50_ms:7.2f} {r.p99_ms:7.2f} "
              f"{r.qm_cpu_us:11.0f} {r.redis_cpu_us:13.0f} {r.errors:7d}")


if __name__ == "__main__":
    main()
