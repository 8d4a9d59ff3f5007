"""Script calls of one event-loop turn written together on one connection (auto-pipelining).

Under load a queue manager has many MQI calls in flight at once, each one EVALSHA. Written one
per connection, each costs Redis a read and a write system call of its own, and the queue
manager as much again; that was about a quarter of Redis's CPU per MQPUT. Here every call made
in one turn of the event loop is packed into one write on one connection, and one reader takes
the replies in order as they come (Redis answers a connection's commands in the order it read
them). Nothing else changes: each call is still one EVALSHA that runs alone and atomically.

What a caller can be told is what it could be told with a connection of its own:
- the connection could not be made or checked before the batch was written: a plain
  ``ConnectionError`` (the call certainly did not run);
- the connection failed or timed out after the batch was written: ``SentUnanswered`` for every
  call of it still unanswered (each may have run);
- an error reply (NOSCRIPT, a script error) is that call's alone: the connection stays in step.
A caller that gives up (cancelled) leaves its reply to be read and dropped; a call cancelled
before its batch was written is not sent. A request too large to share the connection safely
(``ScriptRegistry``'s ``LARGE_REQUEST_BYTES``) is not given to it: it goes on a connection of its own.
"""

from __future__ import annotations

import asyncio
from collections import deque
from dataclasses import dataclass, field
from typing import Any

import hiredis
from redis._parsers.hiredis import NOT_ENOUGH_DATA
from redis.asyncio import ConnectionPool
from redis.asyncio.connection import Connection
from redis.exceptions import ConnectionError, ResponseError
from redis.exceptions import TimeoutError as RedisTimeoutError

from app.cf.connio import SentUnanswered, closed_by_server, ready


@dataclass(eq=False)
class _Lane:
    """One connection and the calls written to it whose replies are still unread, in order."""

    conn: Connection
    inflight: deque[asyncio.Future[Any]] = field(default_factory=deque)
    reader: asyncio.Task[None] | None = None
    broken: bool = False


class AutoPipe:
    """The calls of one event-loop turn, written as one batch on one pooled connection."""

    def __init__(self, pool: ConnectionPool) -> None:
        self._pool = pool
        self._lane: _Lane | None = None
        # (command, its reply, told when the batch is written or could not be: sends only)
        self._pending: list[tuple[tuple[Any, ...], asyncio.Future[Any], asyncio.Future[bool] | None]] = []
        self._lock = asyncio.Lock()  # one batch at a time takes the lane and writes (order = reply order)
        # The last attempt to make a lane that failed: when it ended, and why. A batch that waited
        # behind it is failed with it rather than trying again, so while Redis cannot be reached
        # no call waits for more than one attempt (connect, handshake) however many queue up.
        self._failed: tuple[float, Exception] | None = None
        self.tasks: set[asyncio.Task[None]] = set()  # flushes and readers still running

    async def call(self, command: tuple[Any, ...]) -> Any:
        """Send ``command`` with the others of this turn; its reply (an error reply raised)."""
        return await self._enqueue(command, None)

    async def send(self, command: tuple[Any, ...]) -> tuple[bool, asyncio.Future[Any]]:
        """Send ``command`` with the others of this turn without waiting for its reply: whether it
        was written (False: not, or perhaps only in part), and the future of its reply (which then
        holds why not)."""
        loop = asyncio.get_running_loop()
        written: asyncio.Future[bool] = loop.create_future()
        reply = self._enqueue(command, written)
        return await written, reply

    def _enqueue(self, command: tuple[Any, ...], written: asyncio.Future[bool] | None) -> asyncio.Future[Any]:
        loop = asyncio.get_running_loop()
        future: asyncio.Future[Any] = loop.create_future()
        if not self._pending:
            loop.call_soon(self._flush_soon)
        self._pending.append((command, future, written))
        return future

    def _flush_soon(self) -> None:
        batch, self._pending = self._pending, []
        self._track(asyncio.ensure_future(self._flush(batch, asyncio.get_running_loop().time())))

    def _track(self, task: asyncio.Task[None]) -> None:
        self.tasks.add(task)
        task.add_done_callback(self.tasks.discard)

    async def aclose(self) -> None:
        """Shutting down: end the reader and any batch being written. What is still owed is told
        the connection is gone (a call written: SentUnanswered), and the connection goes back to
        the pool; a later call would start a new lane."""
        pending, self._pending = self._pending, []
        for _, future, written in pending:
            _tell(future, written, ConnectionError("not sent: the queue manager is stopping"))
        for task in list(self.tasks):
            task.cancel()
        await asyncio.gather(*self.tasks, return_exceptions=True)
        lane = self._lane
        if lane is not None:
            await self._break(lane, ConnectionError("the queue manager is stopping"))

    async def _flush(self, batch: list[tuple[tuple[Any, ...], asyncio.Future[Any], asyncio.Future[bool] | None]],
                     queued_at: float) -> None:
        try:
            await self._flush_batch(batch, queued_at)
        except BaseException as exc:  # cancelled (shutdown): no caller is left waiting for ever
            for _, future, written in batch:
                _tell(future, written, ConnectionError(f"not sent: {exc!r}"))
            raise

    async def _flush_batch(self, batch: list[tuple[tuple[Any, ...], asyncio.Future[Any], asyncio.Future[bool] | None]],
                           queued_at: float) -> None:
        async with self._lock:
            batch = [entry for entry in batch if not entry[1].done()]  # given up: not sent
            if not batch:
                return
            try:
                failed = self._failed
                if failed is not None and failed[0] >= queued_at and self._lane is None:
                    raise failed[1]  # it waited behind an attempt that failed: not another one
                lane = await self._ready_lane()
            except Exception as exc:  # noqa: BLE001 - nothing was written: each call did not run
                if self._lane is None:
                    self._failed = (asyncio.get_running_loop().time(), exc)
                for _, future, written in batch:
                    _tell(future, written, exc)
                return
            try:
                packed = [hiredis.pack_command(command) for command, _, _ in batch]
            except TypeError:  # an argument hiredis does not pack: redis-py's packer
                packed = [part for command, _, _ in batch for part in lane.conn.pack_command(*command)]
            lane.inflight.extend(future for _, future, _ in batch)
            writer = lane.conn._writer
            try:
                assert writer is not None  # _ready_lane connected it
                writer.writelines(packed)
                if writer.transport.get_write_buffer_size():  # only a write that waits for room is bounded
                    await asyncio.wait_for(writer.drain(), lane.conn.socket_timeout)
            except BaseException as exc:
                await self._break(lane, exc)  # written perhaps in part: every call of the lane may have run
                for _, future, written in batch:
                    _tell(future, written, exc)
                if not isinstance(exc, Exception):
                    raise
                return
            for _, _, written in batch:
                if written is not None and not written.done():
                    written.set_result(True)
            if lane.reader is None:
                lane.reader = asyncio.ensure_future(self._read(lane))
                self._track(lane.reader)

    async def _ready_lane(self) -> _Lane:
        """The lane to write on: the current one while it is sound, else a new connection, made
        ready (connected, health-checked) before anything is written on it."""
        lane = self._lane
        if lane is not None and (lane.broken or closed_by_server(lane.conn)):
            self._lane = None  # a new lane for this batch; the old one's reader fails what it still owes
            if lane.reader is None and not lane.broken:
                await self._break(lane, ConnectionError("closed by the server"))  # nothing owed: let it go
            lane = None
        if lane is None:
            conn: Connection = await self._pool.get_connection()  # type: ignore[no-untyped-call]
            try:
                await ready(conn)
            except BaseException:
                await conn.disconnect(nowait=True)
                await self._pool.release(conn)
                raise
            self._lane = lane = _Lane(conn)
        elif not lane.inflight:
            try:
                await ready(lane.conn)  # its periodic health check, only with no reply outstanding
            except BaseException as exc:
                await self._break(lane, exc)  # a PING perhaps unanswered: never written on again
                raise
        return lane

    async def _read(self, lane: _Lane) -> None:
        """Read the lane's replies in order and hand each to its caller, until none is owed."""
        parser: Any = lane.conn._parser
        while lane.inflight:
            try:
                reply = await _next_reply(parser, lane.conn.socket_timeout)
            except BaseException as exc:
                await self._break(lane, exc)
                if not isinstance(exc, Exception):
                    raise
                return
            if lane.broken:  # a failed write broke the lane meanwhile: its calls have been told
                return
            future = lane.inflight.popleft()
            if future.done():  # its caller gave up: the reply is dropped
                continue
            if isinstance(reply, ResponseError):
                future.set_exception(reply)
            else:
                future.set_result(reply)
        lane.reader = None
        if lane is not self._lane:  # replaced while replies were owed: its connection is done with
            await self._pool.release(lane.conn)

    async def _break(self, lane: _Lane, exc: BaseException) -> None:
        """The lane's connection failed after calls were written: each unanswered one may have run.
        Once per lane (its writer and its reader may both see the failure)."""
        if lane.broken:
            return
        lane.broken = True
        if self._lane is lane:
            self._lane = None
        lost = SentUnanswered(f"no reply to a script call that was sent: {_describe(exc)}")
        lost.__cause__ = exc
        while lane.inflight:
            future = lane.inflight.popleft()
            if not future.done():
                future.set_exception(lost)
        lane.reader = None
        await lane.conn.disconnect(nowait=True)
        await self._pool.release(lane.conn)


async def _next_reply(parser: Any, timeout: float | None) -> Any:
    """The connection's next reply (an error reply returned, not raised). The socket timeout is
    a wait with no byte at all, not the reply's whole transfer: a long reply that keeps coming (a
    large message on a busy link) proves Redis ran the call and is read to its end, where a
    timeout over all of it would tell every call of the lane SentUnanswered. A stalled Redis or
    network sends nothing, and is given up after ``timeout`` as before."""
    reader = getattr(parser, "_reader", None)
    if not isinstance(reader, hiredis.Reader):  # redis-py's own parser: timed over the reply
        async with asyncio.timeout(timeout):
            return await parser.read_response(disable_decoding=False)
    if not parser._connected:
        raise ConnectionError("the connection was closed")
    reply = reader.gets()
    while reply is NOT_ENOUGH_DATA:
        async with asyncio.timeout(timeout):
            await parser.read_from_socket()  # a chunk: ConnectionError at the end of stream
        reply = reader.gets()
    if isinstance(reply, ConnectionError):
        raise reply
    return reply


def _tell(reply: asyncio.Future[Any], written: asyncio.Future[bool] | None, exc: BaseException) -> None:
    """A call of a batch that was not written (or perhaps only in part): its reply is ``exc``
    (unless _break told it already), and a send learns it was not written."""
    if not reply.done():
        reply.set_exception(exc)
    if written is not None and not written.done():
        written.set_result(False)


def _describe(exc: BaseException) -> str:
    if isinstance(exc, TimeoutError | RedisTimeoutError):
        return "timed out reading the reply"
    if isinstance(exc, ConnectionError | OSError):
        return f"connection lost ({exc})"
    return repr(exc)
