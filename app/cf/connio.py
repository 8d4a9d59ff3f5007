"""One Redis connection's life around a script call, shared by ScriptRegistry (a call per
connection) and AutoPipe (a turn's calls on one connection): making a connection ready before
anything is written, and what a failure after writing means."""

from __future__ import annotations

from redis.asyncio.connection import Connection
from redis.exceptions import ConnectionError


class SentUnanswered(ConnectionError):
    """A script call was written (perhaps only in part) to its connection but no reply came
    (socket timeout, connection reset or closed): Redis may have run it, may still run it, or
    may never. A failure before anything was written (connecting, the health check's PING)
    is raised as it is: that call certainly did not run. Carries the original error as its
    ``__cause__``; a ``ConnectionError``, so whoever treats every connection failure alike
    still does."""


async def ready(conn: Connection) -> None:
    """Connect ``conn`` and run its periodic health check now, before the script is written: a
    failure of either means the script was certainly not sent (the caller may say so)."""
    if conn.is_connected and closed_by_server(conn):
        await conn.disconnect(nowait=True)  # Redis ended it while it sat in the pool: a new one
    if not conn.is_connected:
        await conn.connect()  # type: ignore[no-untyped-call]
    await conn.check_health()  # type: ignore[no-untyped-call]


def closed_by_server(conn: Connection) -> bool:
    """True when Redis already closed a pooled connection (its end of stream was read, or its
    transport is closing): a script written there would get no reply and look 'maybe run' (2009)
    although it certainly never reached Redis (a killed master, a restarted server)."""
    reader, writer = getattr(conn, "_reader", None), getattr(conn, "_writer", None)
    if reader is not None and reader.at_eof():
        return True
    return writer is not None and writer.transport.is_closing()
