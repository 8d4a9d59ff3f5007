"""MQPUT over the session transport against plain HTTP: messages/s, latency and CPU per message
of the queue manager and of redis-server, for one client connection and for several.

    python bench/bench_session.py [--messages 5000] [--window 32] [--clients 4] [--size 256]

Per client connection (each its own process, its own hconn and handle):
- ``http``: sequential MQPUTs, one HTTP request each (httpx, keep-alive) - what a client that
  waits for each answer gets from the REST API;
- ``session w=1``: the same sequential calls as frames of one WebSocket;
- ``session w=N``: frames pipelined, N in flight (a new put is sent as each answer arrives).
Latency is from sending a call to its answer. CPU is utime+stime from /proc/<pid>/stat of the
QM and of redis-server across the phase, per message. Non-persistent messages, NO_SYNCPOINT, on
a shared queue in CFSTRUCT(APPL1); everything on loopback. Starts its own redis-server, SQLite
repository and `qsg serve`; prints a table and exits (nothing is asserted).
"""

from __future__ import annotations

import argparse
import multiprocessing as mp
import os
import statistics
import sys
import tempfile
import time
from pathlib import Path

import httpx
import orjson
from websockets.sync.client import connect as ws_connect

ROOT = Path(__file__).resolve().parents[1]
sys.path.insert(0, str(ROOT))

from bench.common import cpu_seconds, pct  # noqa: E402
from tests.support.cluster import Cluster  # noqa: E402
from tests.support.redis_server import RedisServer  # noqa: E402

QUEUE = "BENCH.SESSION.Q"
def open_handle(base: str) -> tuple[str, str]:
    """A connection and an output handle on the queue, made over HTTP."""
    hconn = httpx.post(f"{base}/v1/connections", json={"appl_name": "BENCH"}).json()["hconn"]
    hobj = httpx.post(f"{base}/v1/connections/{hconn}/objects",
                      json={"object_name": QUEUE, "options": ["OUTPUT"]}).json()["hobj"]
    return hconn, hobj


def put_body(size: int) -> dict:
    return {"data": "x" * size, "options": ["NO_SYNCPOINT"], "md": {"persistence": "NOT_PERSISTENT"}}


def http_client(base: str, n: int, size: int, window: int) -> list[float]:
    """Sequential MQPUTs over HTTP; latencies in seconds."""
    hconn, hobj = open_handle(base)
    body = put_body(size)
    latencies = []
    with httpx.Client(base_url=base, timeout=30) as client:
        path = f"/v1/connections/{hconn}/objects/{hobj}/put"
        for _ in range(n):
            t0 = time.perf_counter()
            r = client.post(path, json=body)
            latencies.append(time.perf_counter() - t0)
            if r.status_code != 201:
                raise RuntimeError(r.text)
    httpx.delete(f"{base}/v1/connections/{hconn}")
    return latencies


def session_client(base: str, n: int, size: int, window: int) -> list[float]:
    """MQPUTs as frames of one session, ``window`` in flight; latencies in seconds."""
    with ws_connect(base.replace("http://", "ws://") + "/v1/session", compression=None, max_size=None) as ws:
        ws.send(orjson.dumps({"id": 0, "method": "POST", "path": "/v1/connections", "body": {"appl_name": "BENCH"}}))
        hconn = orjson.loads(ws.recv())["body"]["hconn"]
        ws.send(orjson.dumps({"id": 0, "method": "POST", "path": f"/v1/connections/{hconn}/objects",
                              "body": {"object_name": QUEUE, "options": ["OUTPUT"]}}))
        hobj = orjson.loads(ws.recv())["body"]["hobj"]
        path = f"/v1/connections/{hconn}/objects/{hobj}/put"
        body = put_body(size)
        sent_at: dict[int, float] = {}
        latencies = []
        next_id = 1

        def send() -> None:
            nonlocal next_id
            sent_at[next_id] = time.perf_counter()
            ws.send(orjson.dumps({"id": next_id, "method": "POST", "path": path, "body": body}).decode())
            next_id += 1

        for _ in range(min(window, n)):
            send()
        while len(latencies) < n:
            answer = orjson.loads(ws.recv())
            latencies.append(time.perf_counter() - sent_at.pop(answer["id"]))
            if answer["status"] != 201:
                raise RuntimeError(answer)
            if next_id <= n:
                send()
        ws.send(orjson.dumps({"id": 0, "method": "DELETE", "path": f"/v1/connections/{hconn}"}))
        ws.recv()
    return latencies


def _worker(kind: str, base: str, n: int, size: int, window: int, ready, start, out) -> None:
    ready.release()  # forked and imported: the clock may start
    start.wait()
    out.put((KINDS[kind])(base, n, size, window))


KINDS = {"http": http_client, "session": session_client}


def phase(kind: str, base: str, clients: int, n: int, size: int, window: int, pids: dict[str, int]) -> dict:
    """``clients`` processes, each one connection putting ``n`` messages."""
    ctx = mp.get_context("fork")
    out: mp.Queue = ctx.Queue()
    ready, start = ctx.Semaphore(0), ctx.Event()
    procs = [ctx.Process(target=_worker, args=(kind, base, n, size, window, ready, start, out))
             for _ in range(clients)]
    for p in procs:
        p.start()
    for _ in procs:
        ready.acquire(timeout=60)
    cpu0 = {name: cpu_seconds(pid) for name, pid in pids.items()}
    t0 = time.perf_counter()
    start.set()
    latencies = [x for _ in procs for x in out.get()]
    elapsed = time.perf_counter() - t0
    cpu1 = {name: cpu_seconds(pid) for name, pid in pids.items()}
    for p in procs:
        p.join()
    total = clients * n
    return {"msgs_per_s": total / elapsed, "p50_ms": pct(latencies, 50), "p99_ms": pct(latencies, 99),
            **{f"cpu_{name}_us": (cpu1[name] - cpu0[name]) / total * 1e6 for name in pids}}


def run(args: argparse.Namespace) -> None:
    server = RedisServer()
    server.start()
    workdir = Path(tempfile.mkdtemp(prefix="qsg-bench-session-"))
    cluster = Cluster(server.url, f"sqlite:///{workdir / 'qsg.db'}", workdir)
    try:
        cluster.start(["QM1"])
        cluster.mqsc_ok("QM1", "DEFINE CFSTRUCT(APPL1) CFLEVEL(5) RECOVER(YES)\n"
                               f"DEFINE QLOCAL({QUEUE}) QSGDISP(SHARED) CFSTRUCT(APPL1) MAXDEPTH(999999999)")
        base = cluster.url("QM1")
        assert cluster.qms["QM1"].proc is not None and server.proc is not None
        pids = {"qm": cluster.qms["QM1"].proc.pid, "redis": server.proc.pid}
        plans = [(f"{c} client{'s' if c > 1 else ''}", kind, c, w)
                 for c in (1, args.clients)
                 for kind, w in (("http", 1), ("session", 1), ("session", args.window))]
        # warm-up of both paths, then alternating rounds; each figure is the median over the rounds
        for _, kind, c, w in plans:
            phase(kind, base, c, 300, args.size, w, pids)
        rounds = [[phase(kind, base, c, args.messages, args.size, w, pids) for _, kind, c, w in plans]
                  for _ in range(args.rounds)]
        rows = [{k: statistics.median(rd[i][k] for rd in rounds) for k in rounds[0][i]} for i in range(len(plans))]
        print(f"\nMQPUT, non-persistent {args.size}-byte messages, NO_SYNCPOINT, shared queue; {args.messages} "
              f"messages per client connection, median of {args.rounds} rounds; one QM, loopback, "
              f"{os.cpu_count()} cores\n")
        print(f"{'clients':10} {'transport':14} {'msgs/s':>8} {'p50 ms':>8} {'p99 ms':>8} {'QM CPU us/msg':>14} "
              f"{'Redis CPU us/msg':>17}")
        for (label, kind, _, w), row in zip(plans, rows, strict=True):
            name = "http" if kind == "http" else f"session w={w}"
            print(f"{label:10} {name:14} {row['msgs_per_s']:8.0f} {row['p50_ms']:8.2f} {row['p99_ms']:8.2f} "
                  f"{row['cpu_qm_us']:14.0f} {row['cpu_redis_us']:17.1f}")
        for i in range(0, len(plans), 3):
            http_row, seq_row, piped_row = rows[i:i + 3]
            print(f"{plans[i][0]}: session w=1 {seq_row['msgs_per_s'] / http_row['msgs_per_s']:.1f}x, "
                  f"session w={args.window} {piped_row['msgs_per_s'] / http_row['msgs_per_s']:.1f}x "
                  f"the messages/s of HTTP")
    finally:
        cluster.stop()
        server.cleanup()


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--messages", type=int, default=5000, help="per client connection")
    parser.add_argument("--window", type=int, default=32, help="frames in flight on a pipelined session")
    parser.add_argument("--clients", type=int, default=4, help="client connections of the multi-client phases")
    parser.add_argument("--size", type=int, default=256)
    parser.add_argument("--rounds", type=int, default=3)
    run(parser.parse_args())


if __name__ == "__main__":
    main()
