"""Ports for the servers tests start: each pytest-xdist worker has its own slice, below the
kernel's ephemeral range.

Why not ``bind(0)``: the port the OS picks is an ephemeral one, which any process's outbound
connection (a QM's Redis client, an httpx call) may take between our check and the server's
bind, and another worker may be handed the same port back to back. CI saw exactly that:
``[Errno 98] address already in use`` for a QM started on such a port. Ports 10000-19999 are
outside the ephemeral range (32768-60999 on Linux), and a slice of 1000 per worker means no two
workers ever choose the same one; the bind check below skips anything else listening there.
Ports +10000 (20000-29999) stay free for Redis Cluster bus ports.
"""

from __future__ import annotations

import os
import random
import socket

_LOW, _SLICE, _SLICES = 10000, 1000, 10


def _worker_index() -> int:
    worker = os.environ.get("PYTEST_XDIST_WORKER", "gw0")  # "gw3" under xdist, unset without
    digits = worker.removeprefix("gw")
    return int(digits) % _SLICES if digits.isdigit() else 0


_first = _LOW + _worker_index() * _SLICE
_cursor = random.randrange(_SLICE)  # a new run does not start where the last one's TIME_WAITs are


def ports_free(base: int, n: int = 1) -> bool:
    """Whether ports base..base+n-1 of 127.0.0.1 can be bound now."""
    socks: list[socket.socket] = []
    try:
        for port in range(base, base + n):
            s = socket.socket()
            socks.append(s)
            s.bind(("127.0.0.1", port))
        return True
    except OSError:
        return False
    finally:
        for s in socks:
            s.close()


def free_port_block(n: int) -> int:
    """The first of ``n`` consecutive free ports of this worker's slice, never handed out before
    in this process (until the slice wraps round)."""
    global _cursor
    for _ in range(_SLICE):
        if _cursor + n > _SLICE:
            _cursor = 0
        base = _first + _cursor
        _cursor += n
        if ports_free(base, n):
            return base
    raise RuntimeError(f"no {n} free ports in {_first}..{_first + _SLICE - 1}")


def free_port() -> int:
    """One free port of this worker's slice."""
    return free_port_block(1)
