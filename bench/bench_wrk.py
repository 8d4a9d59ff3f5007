"""MQPUT / MQGET on one queue manager driven by wrk (a C load generator that costs the server's
cores little), alternated with two yardsticks in one run: the same-script endpoint
(bench/bare_app.py: the same Lua script behind a bare FastAPI endpoint), whose ratio is what the
queue manager's own layers cost, and the minimal endpoint (bench/minimal_app.py: FastAPI and a
three-command Lua script storing 1 KB, the request body not read), whose ratio is what the whole
MQ work costs. Each round runs every target of a verb in turn; the table gives the median of the
rounds, and the machine's load average before and after (the figures are only as steady as it).

    python bench/bench_wrk.py [--seconds 8] [--rounds 3] [--connections 32] [--size 1024]
                              [--auth on|off] [--activity on|off] [--py-spy DIR]
                              [--mqlog-sync commit|none] [--queue shared|private]

Needs wrk (Debian: ``apt-get install wrk``). Starts its own redis-server, a SQLite repository,
one ``qsg serve`` (activity log on, as a user runs it) and the bare app under the same uvicorn
defaults. Each wrk connection rotates over its own MQ connections (four per wrk connection) so
that calls never wait on one another inside the queue manager. Per phase it prints requests/s,
latency p50/p99 (wrk's), CPU per message of the server process and of redis-server, and Redis
script calls per verb. Nothing is asserted: the figures go in docs/explanation/performance.md.

``--queue private`` runs the queue manager's phases on a private queue (QSGDISP(QMGR)), which
lives in the queue manager's page set (its own redis-server, AOF with ``appendfsync always``,
``QSG_PAGESET_FSYNC``) instead of the coupling facility; Redis CPU is then the page set's.

Every round also puts and gets persistent messages on a second queue (BENCH.PQ, on a
RECOVER(YES) structure, or private): the queue manager then also writes each put and get to its
recovery log and forces it before answering (``--mqlog-sync commit``; concurrent calls share one
fsync, group commit). The yardsticks keep no log, so these phases are compared with the
queue manager's own non-persistent ones of the same round.
"""

from __future__ import annotations

import argparse
import base64
import json
import os
import re
import signal
import statistics
import subprocess
import sys
import tempfile
import time
from collections.abc import Callable
from dataclasses import dataclass
from pathlib import Path

import httpx
import redis

ROOT = Path(__file__).resolve().parents[1]
sys.path.insert(0, str(ROOT))

from bench.common import cpu_seconds  # noqa: E402
from tests.support.cluster import Cluster  # noqa: E402
from tests.support.redis_server import RedisServer, free_port  # noqa: E402
from tests.support.security import ADMIN, mqsc_ok, qsg_cli  # noqa: E402

# wrk script: every request of a thread takes the next of the paths given in the file named by
# WRK_PATHS (one per line), with the same JSON body; latency percentiles are wrk's own.
WRK_LUA = r"""
local paths, n, body, headers = {}, 0, nil, {["Content-Type"] = "application/json"}
init = function(args)
  for line in io.lines(os.getenv("WRK_PATHS")) do n = n + 1; paths[n] = line end
  local f = io.open(os.getenv("WRK_BODY")); body = f:read("*a"); f:close()
  if os.getenv("WRK_AUTH") ~= "" then headers["Authorization"] = os.getenv("WRK_AUTH") end
  math.randomseed(os.time() + tonumber(tostring({}):sub(8), 16) % 1000)
  i = math.random(n)
end
request = function()
  i = i % n + 1
  return wrk.format("POST", paths[i], headers, body)
end
done = function(summary, latency, requests)
  io.write(string.format("P50 %d\nP99 %d\nERRS %d\n", latency:percentile(50), latency:percentile(99),
    summary.errors.status + summary.errors.connect + summary.errors.read + summary.errors.write
    + summary.errors.timeout))
end
"""


@dataclass
class Phase:
    target: str
    verb: str
    rps: float
    msgs_per_s: float
    p50_ms: float
    p99_ms: float
    server_cpu_us: float
    redis_cpu_us: float
    scripts_per_call: float
    errors: int


def wrk(base: str, paths: list[str], body: str, seconds: float, connections: int, workdir: Path,
        authorization: str = "", threads: int = 2) -> dict[str, float]:
    """One wrk run (``threads`` wrk threads); requests/s, p50/p99 in ms and the count of failed
    requests."""
    (workdir / "paths").write_text("\n".join(paths) + "\n")
    (workdir / "body").write_text(body)
    (workdir / "bench.lua").write_text(WRK_LUA)
    seconds = max(1, round(seconds))  # wrk takes whole seconds
    out = subprocess.run(["wrk", f"-t{threads}", f"-c{connections}", f"-d{seconds}s", "-s", str(workdir / "bench.lua"),
                          base],
                         env={**os.environ, "WRK_PATHS": str(workdir / "paths"), "WRK_BODY": str(workdir / "body"),
                              "WRK_AUTH": authorization},
                         capture_output=True, text=True, check=True).stdout
    rps = float(re.search(r"Requests/sec:\s+([\d.]+)", out).group(1))
    non2xx = re.search(r"Non-2xx or 3xx responses: (\d+)", out)
    p50 = int(re.search(r"^P50 (\d+)", out, re.M).group(1)) / 1000
    p99 = int(re.search(r"^P99 (\d+)", out, re.M).group(1)) / 1000
    errs = int(re.search(r"^ERRS (\d+)", out, re.M).group(1)) + (int(non2xx.group(1)) if non2xx else 0)
    return {"rps": rps, "p50": p50, "p99": p99, "errors": errs, "requests": rps * seconds}


def phase(target: str, verb: str, server_pid: int, redis_pid: int, r: redis.Redis, base: str, paths: list[str],
          body: str, seconds: float, connections: int, workdir: Path, py_spy: str | None = None,
          authorization: str = "", depth: Callable[[], int] | None = None) -> Phase:
    """One wrk run against ``base`` with the CPU the server process and Redis spent on it.
    ``depth``: the queue's depth, read before and after to count the messages the phase moved
    (a batch call moves many; a get that found the queue empty moved none); without it every
    successful request counts as one message."""
    spy = None
    if py_spy:  # a profile of the phase (collapsed stacks), e.g. for flame graphs
        spy = subprocess.Popen([str(Path(sys.executable).with_name("py-spy")), "record", "-r", "200", "-f", "raw",
                                "-o", f"{py_spy}/{target}-{verb}.txt", "-p", str(server_pid)],
                               stdout=subprocess.DEVNULL, stderr=subprocess.DEVNULL)
    before = depth() if depth else 0
    r.config_resetstat()
    s0, r0 = cpu_seconds(server_pid), cpu_seconds(redis_pid)
    res = wrk(base, paths, body, seconds, connections, workdir, authorization)
    s1, r1 = cpu_seconds(server_pid), cpu_seconds(redis_pid)
    messages = abs(depth() - before) if depth else res["requests"] - res["errors"]
    if spy:
        spy.send_signal(signal.SIGINT)
        spy.wait()
    stats = {k.removeprefix("cmdstat_"): int(v["calls"]) for k, v in r.info("commandstats").items()}
    n, m = max(res["requests"], 1), max(messages, 1)
    return Phase(target, verb, res["rps"], messages / max(1, round(seconds)), res["p50"], res["p99"],
                 (s1 - s0) / m * 1e6, (r1 - r0) / m * 1e6, (stats.get("evalsha", 0) + stats.get("eval", 0)) / n,
                 int(res["errors"]))


def wait_up(url: str) -> None:
    for _ in range(400):
        try:
            if httpx.get(url, timeout=1).status_code < 500:
                return
        except httpx.HTTPError:
            pass
        time.sleep(0.05)
    raise RuntimeError(f"{url} did not come up")


def run(args: argparse.Namespace) -> None:
    server = RedisServer(aof=args.cf_aof)  # the CF: AOF with fsync always as qsg up and compose run it
    server.start()
    workdir = Path(tempfile.mkdtemp(prefix="qsg-wrk-"))
    cluster = Cluster(server.url, f"sqlite:///{workdir / 'qsg.db'}", workdir,
                      extra_env={"QSG_AUTH": args.auth, "QSG_MQLOG_SYNC": args.mqlog_sync,
                                 "QSG_ACTIVITY_ENABLED": str(args.activity == "on").lower(),
                                 "QSG_LOG_LEVEL": "warning"})
    load_before = os.getloadavg()
    bare_port, minimal_port = free_port(), free_port()
    bare = subprocess.Popen([sys.executable, "-m", "uvicorn", "bench.bare_app:app", "--port", str(bare_port),
                             "--log-level", "warning"], cwd=ROOT, env={**os.environ, "BARE_REDIS_URL": server.url})
    minimal = subprocess.Popen([sys.executable, "-m", "uvicorn", "bench.minimal_app:app", "--port",
                                str(minimal_port), "--log-level", "warning"], cwd=ROOT,
                               env={**os.environ, "BARE_REDIS_URL": server.url})
    try:
        cluster.start(["QM1"])
        auth = None
        if args.auth == "on":  # an administrator, as the security tests make one; HTTP basic on every call
            qsg_cli(cluster, "user", "add", "admin", "--admin", "--password-stdin", stdin=ADMIN[1] + "\n")
            auth = ADMIN
        where = "QSGDISP(SHARED) CFSTRUCT(APPL1)" if args.queue == "shared" else "QSGDISP(QMGR)"
        pwhere = "QSGDISP(SHARED) CFSTRUCT(APPL2)" if args.queue == "shared" else "QSGDISP(QMGR)"
        mqsc_ok(cluster, "QM1", "DEFINE CFSTRUCT(APPL1) CFLEVEL(5) RECOVER(NO)\n"
                                "DEFINE CFSTRUCT(APPL2) CFLEVEL(5) RECOVER(YES)\n"
                                f"DEFINE QLOCAL(BENCH.Q) {where} MAXDEPTH(999999999)\n"
                                f"DEFINE QLOCAL(BENCH.PQ) {pwhere} MAXDEPTH(999999999)")
        qm_url = cluster.url("QM1")
        bare_url = f"http://127.0.0.1:{bare_port}"
        minimal_url = f"http://127.0.0.1:{minimal_port}"
        wait_up(f"{bare_url}/docs")
        wait_up(f"{minimal_url}/docs")
        paths: dict[str, list[str]] = {"put": [], "get": [], "put-batch": [], "get-batch": [],
                                       "put-p": [], "get-p": []}
        with httpx.Client(base_url=qm_url, auth=auth) as c:
            for _ in range(args.connections * 4):
                hconn = c.post("/v1/connections", json={"appl_name": "WRK"}).json()["hconn"]
                for queue, suffix in (("BENCH.Q", ""), ("BENCH.PQ", "-p")):
                    for opts, verb in ((["OUTPUT"], "put"), (["INPUT_SHARED"], "get")):
                        hobj = c.post(f"/v1/connections/{hconn}/objects",
                                      json={"object_name": queue, "options": opts}).json()["hobj"]
                        paths[verb + suffix].append(f"/v1/connections/{hconn}/objects/{hobj}/{verb}")
                        if not suffix:
                            paths[f"{verb}-batch"].append(f"/v1/connections/{hconn}/objects/{hobj}/{verb}-batch")

            def depth_of(queue: str) -> Callable[[], int]:
                def depth() -> int:
                    r = c.post("/v1/admin/mqsc", json={"script": f"DISPLAY QLOCAL({queue}) CURDEPTH"})
                    return int(r.json()["results"][0]["objects"][0]["CURDEPTH"])
                return depth
            depth, pdepth = depth_of("BENCH.Q"), depth_of("BENCH.PQ")

            message = {"data": "x" * args.size, "md": {"persistence": "NOT_PERSISTENT"}}
            put_body = json.dumps({**message, "options": ["NO_SYNCPOINT"]})
            pput_body = json.dumps({"data": "x" * args.size, "md": {"persistence": "PERSISTENT"},
                                    "options": ["NO_SYNCPOINT"]})
            get_body = json.dumps({"options": ["NO_SYNCPOINT"]})
            put_batch_body = json.dumps({"options": ["NO_SYNCPOINT"], "messages": [message] * args.batch})
            get_batch_body = json.dumps({"options": ["NO_SYNCPOINT"], "max_messages": args.batch})
            qm_pid = cluster.qms["QM1"].proc.pid
            authorization = ("Basic " + base64.b64encode(f"{ADMIN[0]}:{ADMIN[1]}".encode()).decode()) if auth else ""
            # the Redis that holds the queue: the coupling facility, or the QM's page set
            r = redis.Redis.from_url(server.url if args.queue == "shared" else cluster.pageset_url("QM1"))
            redis_pid = int(r.info("server")["process_id"])
            cf = redis.Redis.from_url(server.url)  # the bare endpoint's (always the CF's)
            cf_pid = int(cf.info("server")["process_id"])

            def one_round(seconds: float, py_spy: str | None = None) -> list[Phase]:
                rows = []
                # gets run for half as long as puts so that they do not find the queue empty
                # (the errors column says when they did)
                for verb, qm_verb, bare_path, body, secs in (
                        ("MQPUT", "put", "/put", put_body, seconds),
                        ("MQGET", "get", "/get", get_body, seconds / 2),
                        (f"put-batch {args.batch}", "put-batch", None, put_batch_body, seconds),
                        (f"get-batch {args.batch}", "get-batch", None, get_batch_body, seconds / 2)):
                    if bare_path:
                        rows.append(phase("bare", verb, bare.pid, cf_pid, cf, bare_url, [bare_path], body, secs,
                                          args.connections, workdir, py_spy))
                        rows.append(phase("minimal", verb, minimal.pid, cf_pid, cf, minimal_url, [bare_path], body,
                                          secs, args.connections, workdir, py_spy))
                    rows.append(phase("QM1", verb, qm_pid, redis_pid, r, qm_url, paths[qm_verb], body, secs,
                                      args.connections, workdir, py_spy, authorization, depth))
                    if bare_path:  # the same verb on persistent messages: logged, forced at the answer
                        rows.append(phase("QM1", f"{verb} persistent", qm_pid, redis_pid, r, qm_url,
                                          paths[qm_verb + "-p"], pput_body if qm_verb == "put" else body, secs,
                                          args.connections, workdir, py_spy, authorization, pdepth))
                return rows

            one_round(2)  # warm-up
            rounds = [one_round(args.seconds, args.py_spy) for _ in range(args.rounds)]
        rows = [Phase(p.target, p.verb, *(statistics.median(getattr(rd[i], f) for rd in rounds) for f in
                                          ("rps", "msgs_per_s", "p50_ms", "p99_ms", "server_cpu_us",
                                           "redis_cpu_us", "scripts_per_call")), sum(rd[i].errors for rd in rounds))
                for i, p in enumerate(rounds[0])]
        kind = f"non-persistent (and persistent: recovery log, sync {args.mqlog_sync})"
        print(f"\nwrk -t2 -c{args.connections}, median of {args.rounds} alternating rounds ({args.seconds:g}s puts, "
              f"{args.seconds / 2:g}s gets), {args.size}-byte {kind} messages, {args.queue} queue, one QM, "
              f"auth {args.auth}, activity log {args.activity}, {os.cpu_count()} cores; CPU per message\n")
        load_after = os.getloadavg()
        print(f"load average (1, 5, 15 min) before {' '.join(f'{x:.1f}' for x in load_before)}, after "
              f"{' '.join(f'{x:.1f}' for x in load_after)} on {os.cpu_count()} cores\n")
        print(f"{'target':7} {'verb':14} {'req/s':>8} {'msgs/s':>8} {'p50 ms':>7} {'p99 ms':>7} {'server CPU us':>14} "
              f"{'Redis CPU us':>13} {'EVALSHA/call':>13} {'errors':>7}")
        for p in rows:
            print(f"{p.target:7} {p.verb:14} {p.rps:8.0f} {p.msgs_per_s:8.0f} {p.p50_ms:7.2f} {p.p99_ms:7.2f} "
                  f"{p.server_cpu_us:14.0f} {p.redis_cpu_us:13.0f} {p.scripts_per_call:13.2f} {p.errors:7d}")

        def of(target: str, verb: str) -> Phase:
            return next(p for p in rows if p.verb == verb and p.target == target)
        for verb in ("MQPUT", "MQGET"):
            qm = of("QM1", verb)
            print(f"{verb}: {qm.msgs_per_s / of('bare', verb).msgs_per_s:.2f}x the same-script endpoint's messages/s, "
                  f"{qm.msgs_per_s / of('minimal', verb).msgs_per_s:.2f}x the minimal endpoint's; QM CPU per call "
                  f"{qm.server_cpu_us / of('bare', verb).server_cpu_us:.2f}x the same-script endpoint's")
        for single, batch in (("MQPUT", "put-batch"), ("MQGET", "get-batch")):
            ratio = of('QM1', f'{batch} {args.batch}').msgs_per_s / of('QM1', single).msgs_per_s
            print(f"{batch} {args.batch}: {ratio:.1f}x the messages/s of single {single} calls")
        for verb in ("MQPUT", "MQGET"):
            print(f"{verb} persistent: {of('QM1', f'{verb} persistent').msgs_per_s / of('QM1', verb).msgs_per_s:.2f}x "
                  f"the messages/s of non-persistent {verb}")
    finally:
        cluster.stop()
        for yardstick in (bare, minimal):
            yardstick.terminate()
            yardstick.wait()
        server.cleanup()


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--seconds", type=float, default=8)
    parser.add_argument("--rounds", type=int, default=3)
    parser.add_argument("--connections", type=int, default=32)
    parser.add_argument("--size", type=int, default=1024)
    parser.add_argument("--batch", type=int, default=100, help="messages per put-batch / get-batch call")
    parser.add_argument("--auth", choices=("on", "off"), default="off")
    parser.add_argument("--activity", choices=("on", "off"), default="on")
    parser.add_argument("--mqlog-sync", choices=("commit", "none"), default="commit")
    parser.add_argument("--cf-aof", action="store_true",
                        help="the coupling facility with AOF, fsync always (as qsg up and docker-compose run it)")
    parser.add_argument("--queue", choices=("shared", "private"), default="shared",
                        help="the queue manager's phases on a shared queue (CF) or a private one (its page set)")
    parser.add_argument("--py-spy", metavar="DIR", help="record a py-spy profile of each queue manager phase here")
    run(parser.parse_args())


if __name__ == "__main__":
    main()
