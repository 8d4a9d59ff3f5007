"""CPU per MQPUT and MQGET (and per message of put-batch, get-batch) inside one process, below
the HTTP server: the queue manager's ASGI application and the bare yardstick (bench/bare_app.py)
are called directly with a request, one call after another, so the figure is the application's
own cost (routing, MQI, Redis client) without uvicorn, the network or a load generator. A quick
loop for profiling work (figures still move 10-25% between runs on a shared machine); the
throughput figures come from bench/bench_wrk.py.

    python bench/bench_asgi.py [--calls 5000] [--size 1024] [--batch 100] [--activity on|off]
                               [--auth on|off] [--only VERB,...] [--chunks 10]
                               [--profile FILE [--profile-verb MQPUT|MQGET|put-batch|get-batch]]
                               [--replicas N [--replica-acks N]] [--persistent] [--concurrency N]

``--auth on`` runs the queue manager with authentication on, every call with HTTP basic
credentials of an administrator (as bench_wrk's ``--auth on``). ``--only`` measures only the
verbs named (e.g. ``--only MQPUT``), or a verb of one target only (``--only QM1:MQPUT`` for a long
loop under ``py-spy record``).

``--replicas N`` gives the redis-server N replicas; ``--replica-acks N`` sets QSG_CF_REPLICA_ACKS
(each state-changing script is followed by WAIT on its connection). Besides the CPU, each call's
wall time is printed (calls run one after another, so it is their latency): what WAIT adds.

``--persistent`` makes the structure RECOVER(YES) and adds the verb ``MQPUT-P``: the same MQPUT
of a persistent message, written to the recovery log and forced to disk before it is answered,
measured in turn with the non-persistent MQPUT; its messages/s against theirs is printed.
``--concurrency N`` runs N calls at a time (N tasks, each making its share of the calls one
after another): the wall time is then per call of all N together, i.e. the inverse of the
messages/s, which is what sharing one fsync among concurrent calls (group commit) changes.
"""

from __future__ import annotations

import argparse
import asyncio
import base64
import cProfile
import os
import sys
import tempfile
import time
from pathlib import Path
from typing import Any

import orjson

ROOT = Path(__file__).resolve().parents[1]
sys.path.insert(0, str(ROOT))

from tests.support.redis_server import RedisServer  # noqa: E402

#: Headers every call carries besides its content type and length (``--auth on``: the credentials).
EXTRA_HEADERS: list[tuple[bytes, bytes]] = []
#: The redis-server whose CPU each timed loop also measures (set once it is started).
REDIS_PID: list[int] = []


def cpu_ns(pid: int) -> int:
    """Nanoseconds the main thread of process ``pid`` (redis-server's, which runs every command)
    has run on a CPU (Linux /proc schedstat: finer than the clock ticks of /proc/<pid>/stat,
    which a short loop would round to a few ticks)."""
    return int(Path(f"/proc/{pid}/schedstat").read_text().split()[0])


async def call(app: Any, path: str, body: bytes) -> tuple[int, bytes]:
    """One POST through the ASGI application; its status and body."""
    scope = {"type": "http", "asgi": {"version": "3.0"}, "http_version": "1.1", "method": "POST",
             "scheme": "http", "path": path, "raw_path": path.encode(), "query_string": b"", "root_path": "",
             "headers": [(b"content-type", b"application/json"), (b"content-length", str(len(body)).encode()),
                         *EXTRA_HEADERS],
             "client": ("127.0.0.1", 1), "server": ("127.0.0.1", 80), "state": {}}
    sent = False
    out: dict[str, Any] = {"body": b""}

    async def receive() -> dict[str, Any]:
        nonlocal sent
        if sent:
            await asyncio.sleep(3600)
        sent = True
        return {"type": "http.request", "body": body, "more_body": False}

    async def send(message: dict[str, Any]) -> None:
        if message["type"] == "http.response.start":
            out["status"] = message["status"]
        else:
            out["body"] += message.get("body", b"")

    await app(scope, receive, send)
    return out["status"], out["body"]


async def timed(app: Any, path: str, body: bytes, n: int) -> float:
    """CPU microseconds per call over ``n`` calls (each must succeed)."""
    return (await timed_wall(app, path, body, n))[0]


#: Calls in flight at a time (``--concurrency``).
CONCURRENCY = [1]


async def timed_wall(app: Any, path: str, body: bytes, n: int) -> tuple[float, float, float]:
    """CPU of this process, wall-clock time and CPU of the redis-server, in microseconds per
    call over ``n`` calls (each must succeed), ``CONCURRENCY`` of them at a time."""

    async def calls(k: int) -> None:
        for _ in range(k):
            status, answer = await call(app, path, body)
            if status >= 300:
                raise RuntimeError(f"{path}: {status} {answer[:200]!r}")

    tasks = min(CONCURRENCY[0], n)
    r0 = cpu_ns(REDIS_PID[0]) if REDIS_PID else 0
    t0, w0 = time.process_time(), time.perf_counter()
    if tasks <= 1:
        await calls(n)
    else:
        await asyncio.gather(*(calls(n // tasks + (i < n % tasks)) for i in range(tasks)))
    t1, w1 = time.process_time(), time.perf_counter()
    r1 = cpu_ns(REDIS_PID[0]) if REDIS_PID else 0
    return (t1 - t0) / n * 1e6, (w1 - w0) / n * 1e6, (r1 - r0) / n / 1e3


def start_replicas(master: RedisServer, n: int) -> list[RedisServer]:
    """``n`` replicas of ``master``, returned once the master sees them all online."""
    import redis

    replicas = [RedisServer(extra_args=("--replicaof", "127.0.0.1", str(master.port))) for _ in range(n)]
    for replica in replicas:
        replica.start()
    client = redis.Redis(port=master.port)
    deadline = time.monotonic() + 30
    while sum(1 for k, v in client.info("replication").items()
              if k.startswith("slave") and isinstance(v, dict) and v.get("state") == "online") < n:
        if time.monotonic() > deadline:
            raise TimeoutError("the replicas did not come online")
        time.sleep(0.05)  # an external process's state: poll
    client.close()
    return replicas


async def run(args: argparse.Namespace) -> None:
    server = RedisServer()
    server.start()
    assert server.proc is not None
    REDIS_PID.append(server.proc.pid)
    replicas = start_replicas(server, args.replicas)
    workdir = Path(tempfile.mkdtemp(prefix="qsg-asgi-"))
    os.environ["BARE_REDIS_URL"] = server.url
    from app.api.app import create_app
    from app.repository.db import upgrade
    from app.settings import Settings
    from bench import bare_app

    db = f"sqlite:///{workdir / 'qsg.db'}"
    upgrade(db)
    if args.auth == "on":  # an administrator, HTTP basic on every call (as bench_wrk --auth on)
        from app.repository.db import make_engine
        from app.repository.security import SecurityStore

        SecurityStore(make_engine(db), "QSG1").add_user("admin", "admin-secret", admin=True)
        EXTRA_HEADERS.append((b"authorization", b"Basic " + base64.b64encode(b"admin:admin-secret")))
    settings = Settings(qmgr="QM1", qsg="QSG1", redis_url=server.url, database_url=db, auth=args.auth,
                        activity_dir=str(workdir / "activity"), mqlog_dir=str(workdir / "mqlog"),
                        activity_enabled=args.activity == "on", log_level="warning",
                        cf_replica_acks=args.replica_acks)
    app = create_app(settings)
    try:
        async with app.router.lifespan_context(app), bare_app.app.router.lifespan_context(bare_app.app):
            status, _ = await call(app, "/v1/admin/mqsc", orjson.dumps({"script": (
                f"DEFINE CFSTRUCT(APPL1) CFLEVEL(5) RECOVER({'YES' if args.persistent else 'NO'})\n"
                "DEFINE QLOCAL(BENCH.Q) QSGDISP(SHARED) CFSTRUCT(APPL1) MAXDEPTH(999999999)")}))
            hconn = orjson.loads((await call(app, "/v1/connections", b'{"appl_name": "ASGI"}'))[1])["hconn"]
            hobjs = {}
            for verb, opts in (("put", ["OUTPUT"]), ("get", ["INPUT_SHARED"])):
                hobjs[verb] = orjson.loads((await call(app, f"/v1/connections/{hconn}/objects", orjson.dumps(
                    {"object_name": "BENCH.Q", "options": opts})))[1])["hobj"]
            # --persistent: the non-persistent MQPUT names its persistence too, as MQPUT-P (and
            # bench_wrk's messages) do: the two differ in the recovery log only
            plain_md = {"md": {"persistence": "NOT_PERSISTENT"}} if args.persistent else {}
            put_body = orjson.dumps({"data": "x" * args.size, "options": ["NO_SYNCPOINT"], **plain_md})
            persistent_body = orjson.dumps({"data": "x" * args.size, "options": ["NO_SYNCPOINT"],
                                            "md": {"persistence": "PERSISTENT"}})
            get_body = b'{"options": ["NO_SYNCPOINT"]}'
            n = args.batch
            put_batch = orjson.dumps({"messages": [{"data": "x" * args.size}] * n, "options": ["NO_SYNCPOINT"]})
            get_batch = orjson.dumps({"max_messages": n, "options": ["NO_SYNCPOINT"]})
            base = f"/v1/connections/{hconn}/objects"
            cases = [("bare", "MQPUT", bare_app.app, "/put", put_body, 1),
                     ("QM1", "MQPUT", app, f"{base}/{hobjs['put']}/put", put_body, 1),
                     ("bare", "MQGET", bare_app.app, "/get", b"{}", 1),
                     ("QM1", "MQGET", app, f"{base}/{hobjs['get']}/get", get_body, 1),
                     ("QM1", "put-batch", app, f"{base}/{hobjs['put']}/put-batch", put_batch, n),
                     ("QM1", "get-batch", app, f"{base}/{hobjs['get']}/get-batch", get_batch, n)]
            if args.persistent:  # in turn with the non-persistent MQPUT (one verb pair)
                cases.append(("QM1", "MQPUT-P", app, f"{base}/{hobjs['put']}/put", persistent_body, 1))
            for _target, _verb, a, path, body, _n in cases:  # warm-up
                await timed(a, path, body, 20)
            # enough messages for every get below (puts come first in each pair, so gets never run dry)
            await timed(app, cases[4][3], put_batch, args.calls // n * 2 + 10)
            await timed(bare_app.app, "/put", put_body, args.calls)
            results: dict[tuple[str, str], float] = {}
            walls: dict[tuple[str, str], float] = {}
            profiler = cProfile.Profile() if args.profile else None
            only = set(args.only.split(",")) if args.only else None
            chosen = [c for c in cases if only is None or c[1] in only or f"{c[0]}:{c[1]}" in only]
            # Each verb's targets take turns, in ``--chunks`` slices of their calls, so that a change
            # of the machine's load during the run falls on both alike (their ratio is what counts).
            totals: dict[tuple[str, str], list[float]] = {(c[0], c[1]): [0.0, 0.0, 0.0] for c in chosen}
            for verb in dict.fromkeys("MQPUT" if c[1] == "MQPUT-P" else c[1] for c in chosen):
                pair = [c for c in chosen if c[1] == verb or (verb == "MQPUT" and c[1] == "MQPUT-P")]
                for _ in range(args.chunks):
                    for target, case_verb, a, path, body, per_call in pair:
                        profiling = profiler is not None and target == "QM1" and case_verb == args.profile_verb
                        if profiling:
                            profiler.enable()
                        calls = max(1, args.calls // per_call // args.chunks)
                        cpu, wall, redis_cpu = await timed_wall(a, path, body, calls)
                        if profiling:
                            profiler.disable()
                        totals[(target, case_verb)][0] += cpu / per_call / args.chunks
                        totals[(target, case_verb)][1] += wall / per_call / args.chunks
                        totals[(target, case_verb)][2] += redis_cpu / per_call / args.chunks
            rediss: dict[tuple[str, str], float] = {}
            for key, (cpu, wall, redis_cpu) in totals.items():
                results[key], walls[key], rediss[key] = cpu, wall, redis_cpu
            if profiler:
                profiler.dump_stats(args.profile)
        print(f"\n{args.calls} calls each, {args.concurrency} at a time, {args.size}-byte messages, activity log "
              f"{args.activity}, {args.replicas} replica(s), QSG_CF_REPLICA_ACKS={args.replica_acks}; CPU of "
              f"this process (application + Redis client), no HTTP server; wall = latency per call; Redis = "
              f"CPU of the redis-server\n")
        for verb in ("MQPUT", "MQGET"):
            if ("QM1", verb) in results and ("bare", verb) in results:
                bare, ours = results[("bare", verb)], results[("QM1", verb)]
                print(f"{verb}: bare {bare:6.0f} us   QM {ours:6.0f} us   QM adds {ours - bare:5.0f} us   "
                      f"wall: bare {walls[('bare', verb)]:6.0f} us   QM {walls[('QM1', verb)]:6.0f} us   "
                      f"Redis: bare {rediss[('bare', verb)]:5.0f} us   QM {rediss[('QM1', verb)]:5.0f} us")
            for target in ("bare", "QM1"):
                if (target, verb) in results and ("bare" if target == "QM1" else "QM1", verb) not in results:
                    key = (target, verb)
                    print(f"{verb}: {target} {results[key]:6.0f} us   wall {walls[key]:6.0f} us   "
                          f"Redis {rediss[key]:5.0f} us")
        if ("QM1", "MQPUT-P") in results:
            key = ("QM1", "MQPUT-P")
            ratio = walls[("QM1", "MQPUT")] / walls[key] if ("QM1", "MQPUT") in walls else float("nan")
            print(f"MQPUT-P (persistent): QM {results[key]:6.0f} us   wall {walls[key]:6.0f} us   Redis "
                  f"{rediss[key]:5.0f} us   messages/s {ratio:.2f}x the non-persistent MQPUT's")
        for verb in ("put-batch", "get-batch"):
            if ("QM1", verb) not in results:
                continue
            print(f"{verb} {n}: QM {results[('QM1', verb)]:6.1f} us per message   "
                  f"wall {walls[('QM1', verb)]:6.1f} us   Redis {rediss[('QM1', verb)]:5.1f} us per message")
    finally:
        for replica in replicas:
            replica.cleanup()
        server.cleanup()


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--calls", type=int, default=5000)
    parser.add_argument("--size", type=int, default=1024)
    parser.add_argument("--activity", choices=("on", "off"), default="on")
    parser.add_argument("--auth", choices=("on", "off"), default="off")
    parser.add_argument("--chunks", type=int, default=10, help="slices in which a verb's targets take turns")
    parser.add_argument("--only", metavar="VERB,...", help="measure only these verbs (MQPUT, MQGET, put-batch, "
                                                           "get-batch), or TARGET:VERB (QM1:MQPUT, bare:MQGET)")
    parser.add_argument("--profile", metavar="FILE", help="cProfile the queue manager's calls into FILE")
    parser.add_argument("--profile-verb", choices=("MQPUT", "MQPUT-P", "MQGET", "put-batch", "get-batch"),
                        default="MQPUT")
    parser.add_argument("--batch", type=int, default=100, help="messages per put-batch / get-batch")
    parser.add_argument("--replicas", type=int, default=0, help="replicas of the redis-server")
    parser.add_argument("--replica-acks", type=int, default=0, help="QSG_CF_REPLICA_ACKS (WAIT after each write)")
    parser.add_argument("--persistent", action="store_true",
                        help="a RECOVER(YES) structure, and MQPUT-P: MQPUT of persistent messages (recovery log)")
    parser.add_argument("--concurrency", type=int, default=1, help="calls in flight at a time")
    import uvloop  # as uvicorn runs the servers

    args = parser.parse_args()
    CONCURRENCY[0] = max(1, args.concurrency)
    uvloop.run(run(args))


if __name__ == "__main__":
    main()
