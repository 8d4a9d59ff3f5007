"""Redis's work per MQPUT and MQGET counted in instructions (valgrind's callgrind), not seconds:
the same count for the same code and calls whatever else the machine is doing, so two versions of
the scripts compare on a busy machine too (CPU time per call moves 10-25% between runs there).

    python bench/bench_redis_work.py [--calls 300] [--baseline PATH]

Needs valgrind (Debian: ``apt-get install valgrind``). Starts redis-server under callgrind on a
free port, then calls, one after another and in-process, the same-script endpoint
(bench/bare_app.py: put.lua and get.lua with a queue manager's arguments, 1 KB of data) and the
minimal endpoint (bench/minimal_app.py: three-command scripts), with a dump of callgrind's counts
between phases. Prints the instructions redis-server ran per call of each phase: an EVALSHA of
``return 1`` with put.lua's arguments first (reading the request and calling a script, the floor
of every call), then put.lua, get.lua and the minimal endpoint's put and get. Each count includes
Redis's networking in user space (not the kernel's) and its timers for the phase's duration (about
a million instructions a second under valgrind: a few thousand per call).

``--baseline PATH`` runs the same in another checkout (e.g. a git worktree of an older commit:
its own bare_app.py and scripts) and prints both, with the ratio. A get is measured without the
release that a queue manager sends after answering (held.lua), which the bare endpoint leaves out.
Nothing is asserted: the figures go in docs/explanation/performance.md.
"""

from __future__ import annotations

import argparse
import json
import os
import re
import shutil
import subprocess
import sys
import tempfile
import time
from pathlib import Path

ROOT = Path(__file__).resolve().parents[1]
sys.path.insert(0, str(ROOT))

from tests.support.redis_server import free_port  # noqa: E402

#: Run in the checkout measured (its ``app`` and ``bench`` packages): the phases, a callgrind dump
#: after each. Arguments: port, callgrind's pid, calls per phase.
DRIVER = r"""
import asyncio, os, subprocess, sys, time
port, vg, n = sys.argv[1], sys.argv[2], int(sys.argv[3])
os.environ["BARE_REDIS_URL"] = f"redis://127.0.0.1:{port}/0"
import httpx
import redis
import bench.bare_app as bare
import bench.minimal_app as minimal

BODY = {"data": "x" * 1024, "md": {"persistence": "NOT_PERSISTENT"}}

def dump(label):
    subprocess.run(["callgrind_control", f"--dump={label}", vg], capture_output=True, check=True)

async def calls(client, path, body, count, ok):
    for _ in range(count):
        r = await client.post(path, json=body)
        assert r.status_code == ok, (path, r.status_code, r.text)

async def main():
    sync = redis.Redis(port=int(port))
    floor = sync.script_load("return 1")
    async with bare.lifespan(bare.app):
        async with httpx.AsyncClient(transport=httpx.ASGITransport(app=bare.app), base_url="http://bare") as b, \
                   httpx.AsyncClient(transport=httpx.ASGITransport(app=minimal.app), base_url="http://min") as m:
            await calls(b, "/put", BODY, 50, 201)  # warm-up: scripts loaded, connections made
            await calls(b, "/get", {}, 50, 200)
            await calls(m, "/put", {}, 50, 201)
            await calls(m, "/get", {}, 50, 200)
            # the floor: put.lua's keys and arguments (1 KB of data among them) to a script that returns
            args = [*bare.PUT_KEYS, bare.QK.queue_prefix, "x" * 1024] + ["0"] * 23
            sync.evalsha(floor, len(bare.PUT_KEYS), *args)
            dump("warm")
            for _ in range(n):
                sync.evalsha(floor, len(bare.PUT_KEYS), *args)
            dump("floor")
            await calls(b, "/put", BODY, n, 201)
            dump("put.lua")
            await calls(b, "/get", {}, n, 200)
            dump("get.lua")
            await calls(m, "/put", {}, n, 201)
            dump("minimal put")
            await calls(m, "/get", {}, n, 200)
            dump("minimal get")

asyncio.run(main())
"""


def measure(repo: Path, calls: int, workdir: Path) -> dict[str, int]:
    """Instructions per call of each phase, for the checkout at ``repo``."""
    port = free_port()
    out = workdir / f"callgrind-{port}.out"
    vg = subprocess.Popen(["valgrind", "--tool=callgrind", f"--callgrind-out-file={out}", "redis-server",
                           "--port", str(port), "--save", "", "--appendonly", "no"],
                          stdout=subprocess.DEVNULL, stderr=subprocess.DEVNULL)
    try:
        for _ in range(300):  # valgrind takes a few seconds to start redis-server
            if subprocess.run(["redis-cli", "-p", str(port), "ping"], capture_output=True).stdout.strip() == b"PONG":
                break
            time.sleep(0.1)
        else:
            raise RuntimeError("redis-server under valgrind did not start")
        subprocess.run([sys.executable, "-c", DRIVER, str(port), str(vg.pid), str(calls)], cwd=repo,
                       env={**os.environ, "PYTHONPATH": str(repo)}, check=True)
    finally:
        subprocess.run(["redis-cli", "-p", str(port), "shutdown", "nosave"], capture_output=True)
        vg.wait(timeout=60)
    per_call = {}
    for dump in workdir.glob(f"callgrind-{port}.out.*"):
        text = dump.read_text(errors="replace")
        label = re.search(r"^desc: Trigger: dump (.+)$", text, re.M)
        total = re.search(r"^summary: (\d+)", text, re.M)
        if label and total and label.group(1) != "warm":
            per_call[label.group(1)] = int(total.group(1)) // calls
    return per_call


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("--calls", type=int, default=300, help="calls per phase")
    parser.add_argument("--baseline", metavar="PATH", help="another checkout to measure the same way")
    args = parser.parse_args()
    if not shutil.which("valgrind"):
        sys.exit("needs valgrind (apt-get install valgrind)")
    workdir = Path(tempfile.mkdtemp(prefix="qsg-callgrind-"))
    try:
        results = {"this checkout": measure(ROOT, args.calls, workdir)}
        if args.baseline:
            results["baseline"] = measure(Path(args.baseline).resolve(), args.calls, workdir)
    finally:
        shutil.rmtree(workdir, ignore_errors=True)
    phases = ["floor", "put.lua", "get.lua", "minimal put", "minimal get"]
    print(f"\nredis-server instructions per call (callgrind), {args.calls} calls per phase, one at a time\n")
    print(f"{'phase':12} " + " ".join(f"{name:>14}" for name in results)
          + ("  baseline/this" if args.baseline else ""))
    for phase in phases:
        row = [results[name].get(phase, 0) for name in results]
        ratio = f"  {row[1] / row[0]:13.2f}x" if args.baseline and row[0] else ""
        print(f"{phase:12} " + " ".join(f"{v:>14,}" for v in row) + ratio)
    print("\n" + json.dumps(results))


if __name__ == "__main__":
    main()
