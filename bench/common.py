"""What the benchmarks share: a Python load generator in several processes (for figures where
the load generator's own cost does not matter, e.g. one target against itself), percentiles and
a process's CPU time."""

from __future__ import annotations

import multiprocessing as mp
import os
import time
from pathlib import Path

import httpx


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
    """n requests from ``processes`` load processes; the elapsed seconds and each latency."""
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
    """The ``p``-th percentile of latencies in seconds, in milliseconds."""
    values = sorted(values)
    return values[min(len(values) - 1, int(p / 100 * len(values)))] * 1000


def cpu_seconds(pid: int) -> float:
    """User + system CPU seconds process ``pid`` has used (Linux /proc): steadier than
    throughput on a shared machine."""
    fields = Path(f"/proc/{pid}/stat").read_text().rsplit(")", 1)[1].split()
    return (int(fields[11]) + int(fields[12])) / os.sysconf("SC_CLK_TCK")
