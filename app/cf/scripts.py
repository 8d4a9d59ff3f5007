"""The coupling facility's Lua scripts: loaded from ``app/cf/lua/*.lua`` and registered on a client.

Each script file opens with a header naming its KEYS, ARGV and output (bullmq style). Files whose
name starts with ``_`` are shared fragments, pasted where a script says ``--@include <file>``
(each fragment at most once per script), so they are written once and never copied by hand.

``register_script`` computes the SHA1 and calls EVALSHA, reloading the source on NOSCRIPT (after
a Redis restart); it does not retry anything else, which is what the engine wants.

Replica acknowledgement (``evalsha_acked``): Redis replicates asynchronously, so a master that
dies right after answering may take its last writes with it when a replica takes over. ``WAIT n
timeout`` blocks until ``n`` replicas acknowledged every write the calling connection made, so it
is sent right behind the EVALSHA on the same connection (one write, two replies: one round trip
plus the replicas' acknowledgement). It cannot undo anything: fewer acknowledgements than asked
within the timeout still leave the write done on the master, and the caller decides what that means.
"""

from __future__ import annotations

import asyncio
import re
from collections.abc import Awaitable, Callable
from dataclasses import dataclass
from functools import cache
from pathlib import Path
from typing import Any

import hiredis
from redis.asyncio import Redis, RedisCluster
from redis.asyncio.cluster import ClusterNode
from redis.asyncio.connection import Connection
from redis.commands.core import AsyncScript
from redis.exceptions import AskError, ClusterError, ConnectionError, MovedError, NoScriptError, ResponseError
from redis.exceptions import TimeoutError as RedisTimeoutError

from app.cf.autopipe import AutoPipe
from app.cf.connio import SentUnanswered, ready

#: What a connection failure looks like once a command has been written.
_LOST: tuple[type[BaseException], ...] = (ConnectionError, RedisTimeoutError, OSError)


@dataclass(slots=True)
class FollowUp:
    """A script call written now whose reply is read in the background (``ScriptRegistry.send``):
    it reaches Redis before the caller acts, without a round trip on the caller's path. ``done``
    gets its reply, or the exception that left it unknown (not written, or no reply)."""

    script: AsyncScript
    keys: list[Any]
    args: list[Any]
    done: Callable[[Any], None]


#: Idle connections a registry keeps between script calls (``ScriptRegistry._park``).
MAX_PARKED = 64

#: Size (bytes of keys and arguments, at least) from which a script call gets a connection of its
#: own instead of the shared one of ``AutoPipe``. A request that large (a put of many MB) over a
#: slow link can take longer than the socket timeout to go out: on the shared connection every
#: call written with it or behind it would wait for it, and answer MQRC_CONNECTION_BROKEN with it
#: when it times out; on its own connection it times out alone. The calls below it are the hot
#: path, which the shared connection is for; one this large costs Redis far more than the system
#: calls the sharing saves.
LARGE_REQUEST_BYTES = 1 << 20

#: Redirections one script call follows on a cluster (a slot migrating while the map is stale).
MAX_REDIRECTS = 5

LUA_DIR = Path(__file__).with_name("lua")

_INCLUDE = re.compile(r"^--@include\s+(\S+)\s*$", re.MULTILINE)

#: Every script the engine calls (file ``<name>.lua``).
SCRIPT_NAMES: tuple[str, ...] = (
    "put",
    "put_batch",
    "scan",
    "get",
    "get_batch",
    "held",
    "commit",
    "backout",
    "open",
    "close",
    "clear_opens",
    "define",
    "alter",
    "delete",
    "clear",
    "status",
    "reset_stats",
    "purge",
    "struct",
    "backup",
    "restore",
    "fence",
    "intent",
    "take_report",
    "claim",
    "renew",
    "lease_take",
    "lease_hold",
    "lease_release",
)


@cache
def load_source(name: str) -> str:
    """Source of ``lua/<name>`` with its ``--@include`` lines replaced by the fragments."""
    return _expand(name, frozenset())


def _expand(name: str, seen: frozenset[str]) -> str:
    path = LUA_DIR / name
    text = path.read_text(encoding="utf-8")
    included: set[str] = set()

    def include(match: re.Match[str]) -> str:
        fragment = match.group(1)
        if fragment in seen or fragment == name:
            raise ValueError(f"{name}: include cycle through {fragment}")
        if fragment in included:
            return f"-- (already included: {fragment})"
        included.add(fragment)
        return f"-- begin {fragment}\n{_expand(fragment, seen | {name})}\n-- end {fragment}"

    return _INCLUDE.sub(include, text)


class ScriptRegistry:
    """All coupling-facility scripts registered on one Redis client (one registry per client)."""

    put: AsyncScript
    put_batch: AsyncScript
    get: AsyncScript
    get_batch: AsyncScript
    held: AsyncScript
    commit: AsyncScript
    backout: AsyncScript
    open: AsyncScript
    close: AsyncScript
    clear_opens: AsyncScript
    define: AsyncScript
    alter: AsyncScript
    delete: AsyncScript
    clear: AsyncScript
    status: AsyncScript
    struct: AsyncScript
    backup: AsyncScript
    restore: AsyncScript
    reset_stats: AsyncScript
    purge: AsyncScript
    scan: AsyncScript
    fence: AsyncScript
    intent: AsyncScript
    take_report: AsyncScript
    claim: AsyncScript
    renew: AsyncScript
    lease_take: AsyncScript
    lease_hold: AsyncScript
    lease_release: AsyncScript

    def __init__(self, redis: Redis) -> None:
        self.redis = redis
        self._cluster: RedisCluster | None = redis if isinstance(redis, RedisCluster) else None
        self._follow_ups: set[asyncio.Future[Any]] = set()  # replies still to read
        # Connections taken from the client's pool and kept here between script calls: the pool's
        # own checkout and release (a lock, an event dispatch and observability records each way)
        # cost a hot call about as much as packing its arguments. They stay the pool's "in use"
        # connections, so closing the client still closes them; a parked one is checked like any
        # pooled one before its next use (``ready``).
        self._parked: list[Connection] = []
        self._pipe: AutoPipe | None = None if self._cluster is not None else AutoPipe(redis.connection_pool)
        for name in SCRIPT_NAMES:
            setattr(self, name, redis.register_script(load_source(f"{name}.lua")))

    async def evalsha(self, script: AsyncScript, keys: list[Any], args: list[Any]) -> Any:
        """EVALSHA ``script`` on a pooled connection: one round trip without redis-py's layers
        around each command (retry wrapper, observability hooks, response callbacks), which
        cost the hot path about as much as its own MQI logic. The rules of ``make_redis`` hold:
        nothing is retried but NOSCRIPT (the script did not run: Redis lost its script cache),
        and a connection that failed or was interrupted mid-call is dropped, never reused with
        a reply still unread.

        On a Redis Cluster the call goes to the master of the first key's slot (every key of a
        script shares one hash tag). A MOVED or ASK reply means the script did not run there,
        so the call follows it; a connection failure surfaces as on a single Redis, once.

        On a single Redis the calls of one event-loop turn share one write on one connection
        (``AutoPipe``), with the same answers a connection of their own would give; a call of
        ``LARGE_REQUEST_BYTES`` or more has a connection of its own, so that a slow write of it
        fails only itself."""
        pipe = self._pipe
        if pipe is None or _large(keys, args):
            return (await self._call(script, keys, args, None))[0]
        try:
            return await pipe.call(("EVALSHA", script.sha, len(keys), *keys, *args))
        except NoScriptError:  # Redis lost its script cache: the script did not run
            script.sha = await self.redis.script_load(script.script)
            return await pipe.call(("EVALSHA", script.sha, len(keys), *keys, *args))

    async def evalsha_acked(self, script: AsyncScript, keys: list[Any], args: list[Any], replicas: int,
                            timeout_ms: int) -> tuple[Any, int]:
        """``evalsha``, then ``WAIT replicas timeout_ms`` on the same connection of the same node
        (WAIT covers only the writes of the connection it runs on; replication is one ordered
        stream, so also every earlier write of that master). Returns the script's reply and how
        many replicas acknowledged (possibly fewer than ``replicas``: the write is done all the
        same). An error reply of the script is raised as by ``evalsha``."""
        return await self._call(script, keys, args, (replicas, timeout_ms))

    async def _call(self, script: AsyncScript, keys: list[Any], args: list[Any],
                    wait: tuple[int, int] | None) -> tuple[Any, int]:
        if self._cluster is not None:
            return await self._evalsha_cluster(self._cluster, script, keys, args, wait)
        pool = self.redis.connection_pool
        parked = self._parked
        # connects a new connection: nothing sent
        conn = parked.pop() if parked else await pool.get_connection()  # type: ignore[no-untyped-call]
        try:
            await ready(conn)
        except BaseException:
            await conn.disconnect(nowait=True)
            await pool.release(conn)
            raise
        try:
            reply = await _run(conn, script, keys, args, wait)
        except ResponseError:
            await self._park(conn)
            raise  # an error reply: the connection is in step
        except BaseException as exc:
            await conn.disconnect(nowait=True)
            await pool.release(conn)
            _raise_unanswered(exc)
            raise
        await self._park(conn)
        return reply

    async def send(self, follow: FollowUp) -> bool:
        """Write ``follow`` on a connection of its first key's node now and read its reply in the
        background: True once it is written (``follow.done`` gets the reply later), False when it
        could not be (``follow.done`` has been told why; it may have been sent in part). No
        redirection is followed: on a cluster a MOVED or ASK reply is what ``done`` gets (the
        script did not run)."""
        if self._pipe is not None and not _large(follow.keys, follow.args):
            return await self._send_piped(self._pipe, follow)
        release: Callable[[], Awaitable[None]]
        try:
            if self._cluster is not None:
                if self._cluster._initialize:
                    await self._cluster.initialize()
                node = self._cluster.get_node_from_key(follow.keys[0])
                if node is None:
                    raise ClusterError(f"no master serves the slot of {follow.keys[0]!r}")
                conn = node.acquire_connection()
                release = _releaser(node, conn)
            else:
                parked = self._parked
                conn = parked.pop() if parked else await self.redis.connection_pool.get_connection()  # type: ignore[no-untyped-call]
                release = self._parker(conn)
        except Exception as exc:  # noqa: BLE001 - told to ``done``: nothing was sent
            follow.done(exc)
            return False
        try:
            await ready(conn)
        except Exception as exc:  # noqa: BLE001 - as above
            await conn.disconnect(nowait=True)
            await release()
            follow.done(exc)
            return False
        try:
            await _write_follow_up(conn, follow)
        except Exception as exc:  # noqa: BLE001 - told to ``done``: it may have been sent in part
            await conn.disconnect(nowait=True)
            await release()
            follow.done(exc)
            return False
        task = asyncio.ensure_future(_finish(conn, follow, release))
        self._follow_ups.add(task)
        task.add_done_callback(self._follow_ups.discard)
        return True

    async def _send_piped(self, pipe: AutoPipe, follow: FollowUp) -> bool:
        """``send`` on a single Redis: written with the other calls of this turn."""
        command = ("EVALSHA", follow.script.sha, len(follow.keys), *follow.keys, *follow.args)
        written, reply = await pipe.send(command)
        # its reply is read in the background: pending until then (releases_done waits for it)
        self._follow_ups.add(reply)

        def replied(future: asyncio.Future[Any]) -> None:
            self._follow_ups.discard(future)
            outcome = future.exception() if not future.cancelled() else asyncio.CancelledError()
            if isinstance(outcome, NoScriptError):  # it did not run: load the script, send it again
                self._in_background(self._call_piped_again(pipe, follow))
                return
            follow.done(outcome if outcome is not None else future.result())
        reply.add_done_callback(replied)
        return written

    async def _call_piped_again(self, pipe: AutoPipe, follow: FollowUp) -> None:
        try:
            follow.script.sha = await self.redis.script_load(follow.script.script)
            reply = await pipe.call(("EVALSHA", follow.script.sha, len(follow.keys), *follow.keys, *follow.args))
        except Exception as exc:  # noqa: BLE001 - told to ``done``
            follow.done(exc)
            return
        follow.done(reply)

    def _in_background(self, work: Awaitable[None]) -> None:
        task = asyncio.ensure_future(work)
        self._follow_ups.add(task)
        task.add_done_callback(self._follow_ups.discard)

    def _parker(self, conn: Connection) -> Callable[[], Awaitable[None]]:
        async def park() -> None:
            await self._park(conn)
        return park

    async def _park(self, conn: Connection) -> None:
        """Keep ``conn`` (its reply read: in step) for the next call; past ``MAX_PARKED`` idle ones
        it goes back to the pool (a burst of concurrent calls leaves no more than that here)."""
        if len(self._parked) < MAX_PARKED:
            self._parked.append(conn)
        else:
            await self.redis.connection_pool.release(conn)

    async def _evalsha_cluster(self, cluster: RedisCluster, script: AsyncScript, keys: list[Any],
                               args: list[Any], wait: tuple[int, int] | None) -> tuple[Any, int]:
        if cluster._initialize:  # first call, or the slot map went stale with a failed node
            await cluster.initialize()
        found = cluster.get_node_from_key(keys[0])
        if found is None:  # the slot's master failed and nobody took over (yet)
            raise ClusterError(f"no master serves the slot of {keys[0]!r}")
        node: ClusterNode = found
        asking = False
        for _ in range(MAX_REDIRECTS):
            owner, conn = node, node.acquire_connection()
            written = False
            try:
                await ready(conn)
                if asking:
                    await conn.send_command("ASKING")
                    await conn.read_response()
                written = True
                return await _run(conn, script, keys, args, wait)
            except MovedError as moved:  # the slot has a new master (failover, resharding): not run
                await cluster.nodes_manager.move_slot(moved)
                node = cluster.nodes_manager.get_node_from_slot(moved.slot_id)
                asking = False
            except AskError as ask:  # the slot is migrating and this key is already there: not run
                node = cluster.get_node(host=ask.host, port=ask.port) or ClusterNode(
                    ask.host, ask.port, **cluster.connection_kwargs)
                asking = True
            except ResponseError:
                raise  # an error reply: the connection is in step
            except BaseException as exc:
                await conn.disconnect(nowait=True)
                cluster._initialize = True  # re-learn the slot map before the next call
                if written:
                    _raise_unanswered(exc)
                raise
            finally:
                owner.release(conn)
        raise ClusterError(f"more than {MAX_REDIRECTS} redirections for the slot of {keys[0]!r}")

    async def aclose(self) -> None:
        """Stop the background reading of replies (before the client closes: nothing is left
        pending when the event loop ends)."""
        if self._pipe is not None:
            await self._pipe.aclose()

    @property
    def follow_ups(self) -> list[asyncio.Future[Any]]:
        """The follow-ups whose replies are still being read."""
        return list(self._follow_ups)

    async def load_all(self) -> None:
        """SCRIPT LOAD every script now (optional: EVALSHA loads lazily on NOSCRIPT anyway)."""
        for name in SCRIPT_NAMES:
            script: AsyncScript = getattr(self, name)
            script.sha = await self.redis.script_load(script.script)


_SIZED = (bytes, str, bytearray, memoryview)


def _large(keys: list[Any], args: list[Any]) -> bool:
    """True when a call's keys and arguments hold ``LARGE_REQUEST_BYTES`` or more (a str counted
    by its characters: at least that many bytes go out). A put's arguments are a few dozen, a
    put-batch's at most a few thousand: one pass over their lengths."""
    total = 0
    for part in (keys, args):
        try:
            total += sum(map(len, part))
        except TypeError:  # a number among them (its digits are few)
            total += sum([len(a) for a in part if type(a) in _SIZED])
    return total >= LARGE_REQUEST_BYTES


def _releaser(node: ClusterNode, conn: Connection) -> Callable[[], Awaitable[None]]:
    async def release() -> None:
        node.release(conn)
    return release


async def _write_follow_up(conn: Connection, follow: FollowUp) -> None:
    await _write(conn, ("EVALSHA", follow.script.sha, len(follow.keys), *follow.keys, *follow.args))


async def _finish(conn: Connection, follow: FollowUp, release: Callable[[], Awaitable[None]]) -> None:
    """Read a follow-up's reply (on NOSCRIPT - it did not run - load the script and send it
    again), tell its ``done``, and give the connection back (dropped when it failed)."""
    try:
        try:
            reply = await conn.read_response()
        except NoScriptError:
            await conn.send_command("SCRIPT", "LOAD", follow.script.script)
            follow.script.sha = (await conn.read_response()).decode()
            await _write_follow_up(conn, follow)
            reply = await conn.read_response()
    except BaseException as exc:
        await conn.disconnect(nowait=True)
        follow.done(exc)
        await release()
        if not isinstance(exc, Exception):
            raise
        return
    follow.done(reply)
    await release()




def _raise_unanswered(exc: BaseException) -> None:
    """After the script was written: a connection failure becomes ``SentUnanswered`` (it may
    have run); anything else (cancellation, an error reply) is left to the caller to raise."""
    if isinstance(exc, _LOST) and not isinstance(exc, ResponseError):
        raise SentUnanswered(f"no reply to a script call that was sent: {exc}") from exc


async def _run(conn: Connection, script: AsyncScript, keys: list[Any], args: list[Any],
               wait: tuple[int, int] | None) -> tuple[Any, int]:
    """EVALSHA on ``conn`` (followed by ``WAIT *wait`` when given); on NOSCRIPT (the script did
    not run) load it and call again. Returns the reply and the WAIT's count (-1 without WAIT)."""
    try:
        return await _send(conn, script.sha, keys, args, wait)
    except NoScriptError:
        await conn.send_command("SCRIPT", "LOAD", script.script)
        script.sha = (await conn.read_response()).decode()
        return await _send(conn, script.sha, keys, args, wait)


async def _send(conn: Connection, sha: str, keys: list[Any], args: list[Any],
                wait: tuple[int, int] | None) -> tuple[Any, int]:
    command = ("EVALSHA", sha, len(keys), *keys, *args)
    if wait is None:
        await _write(conn, command)
        return await _read(conn), -1
    # One write for both: WAIT must run on the connection that wrote, right after the script.
    await conn.send_packed_command(conn.pack_commands([command, ("WAIT", *wait)]))
    try:
        reply = await conn.read_response()
    except ResponseError:  # the script did not run or failed (NOSCRIPT, MOVED, ASK, an error reply)
        await _wait_reply(conn)  # read WAIT's reply too: the connection stays in step
        raise
    return reply, await _wait_reply(conn)


async def _write(conn: Connection, command: tuple[Any, ...]) -> None:
    """``conn.send_command(*command)`` of a connection ``_ready`` made ready, without the task
    redis-py starts for every write to bound it by the socket timeout: the transport takes the
    bytes at once, and only a write that has to wait for room (the socket's buffer full) is bounded
    so. A failure is raised as it comes (the caller drops the connection: it may have been sent)."""
    writer = conn._writer
    if writer is None:  # not connected after all: redis-py's own path (it connects, or says why not)
        await conn.send_command(*command)
        return
    try:
        packed = [hiredis.pack_command(command)]
    except TypeError:  # an argument hiredis does not pack
        packed = conn.pack_command(*command)
    writer.writelines(packed)
    if writer.transport.get_write_buffer_size():
        await asyncio.wait_for(writer.drain(), conn.socket_timeout)
    else:
        await writer.drain()  # returns at once; raises what a lost connection raised


async def _read(conn: Connection) -> Any:
    """``conn.read_response()``: the reply within the socket timeout, an error reply raised,
    the next health check moved on; a failure is raised as it comes (the caller drops the
    connection). Without redis-py's per-call wrapping (push handling, host names for messages)."""
    parser: Any = conn._parser  # the hiredis (or Python) RESP parser the connection reads with
    try:
        async with asyncio.timeout(conn.socket_timeout):
            response = await parser.read_response(disable_decoding=False)
    except TimeoutError:
        raise RedisTimeoutError(f"Timeout reading from {conn._host_error()}") from None
    except OSError as exc:
        raise ConnectionError(f"Error while reading from {conn._host_error()} : {exc.args}") from exc
    if conn.health_check_interval:
        conn.next_health_check = asyncio.get_running_loop().time() + conn.health_check_interval
    if isinstance(response, ResponseError):
        raise response from None
    return response


async def _wait_reply(conn: Connection) -> int:
    """WAIT's reply: the replicas that acknowledged. An error reply (the node is no master any
    more) counts as none: the script's own reply has been read, and it stands."""
    try:
        return int(await conn.read_response())
    except ResponseError:
        return 0
