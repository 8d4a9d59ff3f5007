"""Sharded Redis pub/sub (SSUBSCRIBE) of the per-structure notices, each on its slot's node (Redis's
channels, not MQ publish/subscribe: that is ``app.qmgr.pubsub``).

A structure's notices (availability wake-ups, trigger counts: ``keys.availability_channel`` and
``keys.trigger_channel``) are shard channels named under the structure's hash tag, so the scripts
SPUBLISH them in their own slot and, on a Redis Cluster, they only travel to that slot's shard
(classic PUBLISH is broadcast over the cluster bus to every node). A ``ShardSubscriber`` holds a
changing set of such channels, each subscribed on the connection to the node that owns its slot
(one connection per node it needs; on a single Redis, one connection), read with bounded waits.

When a node fails or a slot moves - the connection breaks, SSUBSCRIBE answers MOVED, or Redis
sends an unasked ``sunsubscribe`` because the slot left the node - the channels of that
connection are placed again: the cluster map is re-learnt, the owner re-resolved, and they are
subscribed there after the ``Backoff`` delay. ``on_subscribed`` runs after each (re)subscription
of a channel: whatever was published while it was not subscribed is lost, so the owner re-checks
what it needs (waiters retry, triggers are re-evaluated). A failing handler is logged and never
stops the subscription.
"""

from __future__ import annotations

import asyncio
import contextlib
import logging
from collections.abc import Awaitable, Callable
from dataclasses import dataclass, field
from typing import Any

from redis.asyncio import Redis
from redis.asyncio.client import PubSub as RedisPubSub

from app.cf.channelsub import Backoff, MessageHandler
from app.cf.codec import text
from app.cf.errors import REDIS_FAILURES
from app.cf.redisconn import is_cluster, node_client
from app.core.errors import MQError

log = logging.getLogger(__name__)

#: What makes a node's connection start again quietly (anything else is logged with its traceback).
_FAILURES: tuple[type[BaseException], ...] = (*REDIS_FAILURES, MQError)

#: Called after each (re)subscription of a channel: the channel, how many times it was subscribed.
ChannelSubscribedHandler = Callable[[str, int], Awaitable[None]]
#: The node a channel is subscribed on: (host, port); None on a single Redis.
Node = tuple[str, int] | None


@dataclass
class _Channel:
    """One channel's handlers and state."""

    on_message: MessageHandler
    on_subscribed: ChannelSubscribedHandler | None
    subscriptions: int = 0
    subscribed: bool = False
    node: Node = None
    #: Held by a node's connection (subscribed, or asked to be); False while it waits to be placed.
    placed: bool = False


@dataclass(eq=False)
class _Shard:
    """One node's connection and the channels it holds."""

    node: Node
    channels: set[str] = field(default_factory=set)
    pending: list[str] = field(default_factory=list)  # to SSUBSCRIBE on the live connection
    more: asyncio.Event = field(default_factory=asyncio.Event)
    task: asyncio.Task[None] | None = None


class ShardSubscriber:
    """Shard channels subscribed on their slots' nodes, following failovers and slot moves.

    ``redis``: a client made by ``app.cf.redisconn.make_redis`` (single or cluster); reads wait
    at most ``poll_s``, well under its socket timeout.
    """

    def __init__(self, redis: Redis, *, name: str = "shard channels", poll_s: float = 1.0,
                 backoff: Backoff | None = None) -> None:
        self._redis = redis
        self._name = name
        self._poll_s = poll_s
        self._backoff = backoff or Backoff()
        self._delay = self._backoff.min_s
        self._channels: dict[str, _Channel] = {}
        self._shards: dict[Node, _Shard] = {}
        self._unplaced = asyncio.Event()  # some channel waits to be placed
        self._failed = False  # a connection failed since the last placement: back off first
        self._changed = asyncio.Event()
        self._stopping = asyncio.Event()
        self._task: asyncio.Task[None] | None = None

    # -- the channels --

    def add(self, channel: str, on_message: MessageHandler,
            on_subscribed: ChannelSubscribedHandler | None = None) -> None:
        """Subscribe ``channel`` too (nothing happens for one already added); it is subscribed
        in the background once started (``wait_subscribed`` awaits it)."""
        if channel in self._channels:
            return
        self._channels[channel] = _Channel(on_message, on_subscribed)
        self._unplaced.set()

    def __contains__(self, channel: str) -> bool:
        return channel in self._channels

    def subscribed(self, channel: str | None = None) -> bool:
        """Whether ``channel`` (None: every channel added) is subscribed now."""
        if channel is not None:
            ch = self._channels.get(channel)
            return ch is not None and ch.subscribed
        return all(ch.subscribed for ch in self._channels.values())

    def subscriptions(self, channel: str) -> int:
        """How many times ``channel`` was (re)subscribed."""
        ch = self._channels.get(channel)
        return ch.subscriptions if ch is not None else 0

    def node(self, channel: str) -> Node:
        """The node ``channel`` is subscribed on now (None on a single Redis or not subscribed)."""
        ch = self._channels.get(channel)
        return ch.node if ch is not None and ch.subscribed else None

    async def wait_subscribed(self, channel: str | None = None, *, after: int = 0) -> None:
        """Return once ``channel`` (None: every channel added) is subscribed, ``channel`` more
        than ``after`` times."""
        while not (self.subscribed(channel) and (channel is None or self.subscriptions(channel) > after)):
            await self._changed.wait()

    def _signal(self) -> None:
        changed, self._changed = self._changed, asyncio.Event()
        changed.set()

    # -- life cycle --

    async def start(self, *, ready_timeout_s: float = 2.0) -> bool:
        """Start placing the channels; True when every channel added is subscribed within the
        timeout (the subscriber keeps trying in the background otherwise)."""
        if self._task is None or self._task.done():
            self._stopping = asyncio.Event()
            self._task = asyncio.create_task(self._place_forever(), name=f"placing {self._name}")
        try:
            await asyncio.wait_for(self.wait_subscribed(), ready_timeout_s)
        except TimeoutError:
            return False
        return True

    async def stop(self, timeout_s: float = 3.0) -> None:
        """Stop every connection (the channels stay added: ``start`` subscribes them again)."""
        self._stopping.set()
        tasks = [t for t in (self._task, *(s.task for s in self._shards.values())) if t is not None]
        self._task = None
        for task in tasks:
            task.cancel()
        if tasks:
            await asyncio.wait(tasks, timeout=timeout_s)
        self._shards.clear()
        for ch in self._channels.values():
            ch.subscribed = ch.placed = False
        self._unplaced.set()
        self._signal()

    # -- placing channels on their nodes --

    async def _place_forever(self) -> None:
        while not self._stopping.is_set():
            await self._unplaced.wait()
            if self._stopping.is_set():
                return
            if self._failed:  # a node failed or a slot moved: give the cluster time to settle
                with contextlib.suppress(TimeoutError):
                    await asyncio.wait_for(self._stopping.wait(), self._delay)
                self._delay = self._backoff.next(self._delay)
                self._failed = False
            self._unplaced.clear()
            try:
                await self._place()
            except asyncio.CancelledError:
                raise
            except Exception as exc:  # noqa: BLE001 - no node answers now: try again later
                log.warning("%s: no node to subscribe on (%s); trying again", self._name, exc)
                self._failed = True
                self._unplaced.set()

    async def _place(self) -> None:
        """Hand every unplaced channel to the connection of its slot's node."""
        unplaced = [c for c, ch in self._channels.items() if not ch.placed]
        if not unplaced:
            return
        owners: dict[str, Node] = {}
        if is_cluster(self._redis):
            cluster: Any = self._redis
            if cluster._initialize:  # first use, or a node failed since: re-learn the slot map
                await cluster.initialize()
            for channel in unplaced:
                owner = cluster.get_node_from_key(channel)
                owners[channel] = (owner.host, int(owner.port))
        else:
            owners = dict.fromkeys(unplaced)
        for channel, node in owners.items():
            shard = self._shards.get(node)
            if shard is None:
                shard = self._shards[node] = _Shard(node)
                shard.task = asyncio.create_task(self._serve(shard), name=f"{self._name} on {node or 'redis'}")
            ch = self._channels[channel]
            ch.placed, ch.node = True, node
            shard.channels.add(channel)
            shard.pending.append(channel)
            shard.more.set()

    def _lost(self, shard: _Shard, channels: set[str]) -> None:
        """``channels`` of ``shard`` are no longer subscribed: place them again (after a backoff)."""
        shard.channels -= channels
        for channel in channels:
            ch = self._channels.get(channel)
            if ch is not None:
                ch.placed = ch.subscribed = False
        if is_cluster(self._redis):
            self._redis._initialize = True  # type: ignore[attr-defined]  # re-learn the map first
        self._failed = True
        self._unplaced.set()
        self._signal()

    # -- one node's connection --

    async def _serve(self, shard: _Shard) -> None:
        node_redis: Redis | None = None
        channel_conn: RedisPubSub | None = None
        read: asyncio.Future[Any] | None = None
        try:
            if shard.node is None:
                channel_conn = self._redis.pubsub()
            else:
                node_redis = node_client(self._redis, *shard.node)  # type: ignore[arg-type]
                channel_conn = node_redis.pubsub()
            while not self._stopping.is_set():
                while shard.pending:
                    # One channel per SSUBSCRIBE: a cluster refuses channels of several slots in one.
                    await channel_conn.ssubscribe(shard.pending.pop(0))
                shard.more.clear()
                waits: set[asyncio.Future[Any]] = {asyncio.ensure_future(shard.more.wait())}
                if channel_conn.connection is not None:
                    if read is None:
                        read = asyncio.ensure_future(channel_conn.get_message(timeout=self._poll_s))
                    waits.add(read)
                try:
                    await asyncio.wait(waits, return_when=asyncio.FIRST_COMPLETED)
                finally:
                    for w in waits:
                        if w is not read:
                            w.cancel()
                if read is not None and read.done():
                    msg, read = read.result(), None
                    if msg is not None:
                        await self._received(shard, msg)
        except asyncio.CancelledError:
            raise
        except _FAILURES as exc:  # the node failed, or MOVED: the slot is elsewhere now
            if shard.channels:
                log.warning("%s on %s lost (%s); subscribing again", self._name, shard.node or "redis", exc)
        except Exception:  # never let a subscription die
            log.exception("%s on %s failed; subscribing again", self._name, shard.node or "redis")
        finally:
            if read is not None:
                read.cancel()
                with contextlib.suppress(BaseException):
                    await read
            if self._shards.get(shard.node) is shard:
                del self._shards[shard.node]
            if not self._stopping.is_set():
                self._lost(shard, set(shard.channels))
            for closing in (channel_conn, node_redis):
                if closing is not None:
                    with contextlib.suppress(Exception):  # the connection may already be broken
                        await closing.aclose()

    async def _received(self, shard: _Shard, msg: dict[str, Any]) -> None:
        kind = msg["type"]
        channel = text(msg["channel"]) if msg.get("channel") is not None else ""
        ch = self._channels.get(channel)
        if ch is None:
            return
        if kind == "smessage":
            try:
                await ch.on_message(channel, bytes(msg["data"]))
            except Exception:  # a failing handler never stops the subscription
                log.exception("%s: handling a message of %s failed", self._name, channel)
        elif kind == "ssubscribe":
            self._delay = self._backoff.min_s
            ch.subscriptions += 1
            ch.subscribed = True
            if ch.on_subscribed is not None:
                try:
                    await ch.on_subscribed(channel, ch.subscriptions)
                except Exception:
                    log.exception("%s: re-checking after subscribing %s failed", self._name, channel)
            self._signal()
        elif kind == "sunsubscribe":
            # Not asked for: the slot left this node (migrated, or the node is a replica now).
            log.warning("%s: %s left %s; subscribing on its new node", self._name, channel, shard.node or "redis")
            self._lost(shard, {channel})
