"""Redis clients for the coupling facility, with the pitfalls of redis-py 8 (docs/design.md §5) handled.

* RESP2 (``protocol=2``): redis-py 8 defaults to RESP3, whose reply shapes differ (maps, sets,
  doubles); the scripts' replies are parsed assuming RESP2.
* No automatic retry: redis-py 8 re-sends a failed command up to 10 times by default. A retried
  destructive MQGET script could remove a message whose first reply was lost, handing it to
  nobody. A connection error must surface once, as an MQRC (the engine maps it).
* Short connect timeout, a bounded socket timeout, periodic health checks; bytes in and out
  (message bodies are bytes).
* Blocking waits (pub/sub, BLPOP-style calls) need a socket timeout longer than any wait they
  make: ``blocking_timeout_s``.
"""

from __future__ import annotations

from typing import Any, cast

import hiredis
from redis.asyncio import Redis
from redis.asyncio.connection import Connection
from redis.asyncio.retry import Retry
from redis.backoff import NoBackoff

#: The client type the coupling facility is built on (for annotations outside app.cf).
RedisClient = Redis

#: Seconds to wait for a TCP connection to Redis: an unreachable CF must fail fast.
CONNECT_TIMEOUT_S = 2.0
#: Socket timeout of ordinary commands (every script is short).
SOCKET_TIMEOUT_S = 5.0
#: Margin added to a blocking client's longest wait.
BLOCKING_MARGIN_S = 5.0
#: An idle pooled connection is PINGed before reuse after this many seconds.
HEALTH_CHECK_INTERVAL_S = 30


class HiredisPackingConnection(Connection):
    """A connection that packs commands with hiredis's C packer.

    redis-py's asyncio connection always packs in Python, one encode per argument: about a
    tenth of an MQPUT's cost, whose script takes some twenty arguments. hiredis packs
    str/bytes/int/float arguments identically, and is installed with redis[hiredis].
    """

    def pack_command(self, *args: Any) -> list[bytes]:
        if isinstance(args[0], str) and " " in args[0]:  # "CONFIG RESETSTAT" style names
            args = (*args[0].split(), *args[1:])
        try:
            return [hiredis.pack_command(cast(Any, args))]  # str, bytes, int, float: the usual case
        except TypeError:
            pass
        try:  # bytearray / memoryview arguments: as bytes (a put-batch's arguments are many)
            packed: bytes = hiredis.pack_command(cast(Any, tuple(
                bytes(a) if isinstance(a, (bytearray, memoryview)) else a for a in args)))
            return [packed]
        except TypeError:
            return super().pack_command(*args)  # a type hiredis does not pack: redis-py's own rules


def no_retry() -> Retry:
    """A retry policy that never retries (redis.asyncio's Retry with 0 retries)."""
    return Retry(NoBackoff(), 0)


def make_redis(url: str, *, blocking_timeout_s: float | None = None) -> Redis:
    """An asyncio Redis client for ``url`` (``redis://host:port/db``).

    ``blocking_timeout_s``: None for an ordinary client (socket timeout ``SOCKET_TIMEOUT_S``);
    for a client whose commands block, the longest time one call may block - the socket timeout
    becomes that plus ``BLOCKING_MARGIN_S`` so a legitimate wait is never cut short.
    """
    socket_timeout = SOCKET_TIMEOUT_S
    if blocking_timeout_s is not None:
        socket_timeout = max(SOCKET_TIMEOUT_S, blocking_timeout_s + BLOCKING_MARGIN_S)
    return Redis.from_url(
        url,
        protocol=2,
        retry=no_retry(),
        retry_on_error=[],
        socket_connect_timeout=CONNECT_TIMEOUT_S,
        socket_timeout=socket_timeout,
        socket_keepalive=True,
        health_check_interval=HEALTH_CHECK_INTERVAL_S,
        decode_responses=False,
        connection_class=HiredisPackingConnection,
    )
