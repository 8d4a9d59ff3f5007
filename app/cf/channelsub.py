"""Subscriptions to Redis channels (classic SUBSCRIBE/PSUBSCRIBE) on the coupling facility: one
subscriber class, one reconnect policy. Redis's pub/sub, the transport between queue managers;
MQ publish/subscribe, what applications do, is ``app.qmgr.pubsub``.

The group-wide channel (the definition and security broadcasts, ``app.cf.group.Broadcasts``)
is a ``ChannelSubscriber``; the per-structure notices (availability wake-ups, trigger counts) are
sharded pub/sub instead (``app.cf.shardsub``, with the same ``Backoff``). A subscriber reads
with bounded waits, and when Redis fails it closes the connection and subscribes again after a
backoff (``Backoff``: exponential from ``min_s`` to ``max_s``, reset once subscribed).
``on_subscribed`` runs after each (re)subscription: whatever was published while it was not
subscribed is lost, so the owner re-checks what it needs (definitions reload). A failing handler
is logged and never stops the subscription.

On a Redis Cluster a subscription lives on one node's connection (a message PUBLISHed on any
node reaches every node's subscribers). When that node fails, the connection breaks like a
single Redis's would, and the next attempt goes to the next node the cluster map names, so
the subscription moves to a live node and ``on_subscribed`` reloads what may have been missed.
"""

from __future__ import annotations

import asyncio
import contextlib
import logging
from collections.abc import Awaitable, Callable
from dataclasses import dataclass
from typing import Any

from redis.asyncio import Redis

from app.cf.codec import text
from app.cf.errors import REDIS_FAILURES
from app.cf.redisconn import cluster_nodes, is_cluster, node_client
from app.core.errors import MQError

log = logging.getLogger(__name__)

#: What makes a subscription reconnect quietly (anything else is logged with its traceback).
_FAILURES: tuple[type[BaseException], ...] = (*REDIS_FAILURES, MQError)

#: A message handler: (channel, data).
MessageHandler = Callable[[str, bytes], Awaitable[None]]
#: Called after each (re)subscription with how many times the subscription was established.
SubscribedHandler = Callable[[int], Awaitable[None]]


@dataclass(frozen=True)
class Backoff:
    """The one reconnect policy: wait ``min_s`` after a failure, doubling up to ``max_s``."""

    min_s: float = 0.05
    max_s: float = 1.0

    def next(self, current: float) -> float:
        return min(current * 2, self.max_s)


class ChannelSubscriber:
    """One channel (or, with ``pattern``, one pattern) subscription that reconnects by itself.

    ``redis``: a client made by ``app.cf.redisconn.make_redis``; reads wait at most ``poll_s``,
    well under its socket timeout.
    """

    def __init__(self, redis: Redis, channel: str, *, pattern: bool, on_message: MessageHandler,
                 on_subscribed: SubscribedHandler | None = None, name: str = "",
                 poll_s: float = 1.0, backoff: Backoff | None = None) -> None:
        self._redis = redis
        self.channel = channel
        self._pattern = pattern
        self._on_message = on_message
        self._on_subscribed = on_subscribed
        self._name = name or channel
        self._poll_s = poll_s
        self._backoff = backoff or Backoff()
        self._subscribed = asyncio.Event()
        self._subscription_changed = asyncio.Event()
        self._stopping = asyncio.Event()
        self._task: asyncio.Task[None] | None = None
        #: Number of times the subscription was (re)established.
        self.subscriptions = 0
        #: On a cluster: which node the subscription uses now, and the attempt counter that
        #: moves it on to the next node after a failure.
        self.node: tuple[str, int] | None = None
        self._attempt = 0

    @property
    def subscribed(self) -> bool:
        return self._subscribed.is_set()

    async def wait_subscribed(self, *, after: int = 0) -> None:
        """Return once the subscription has been established more than ``after`` times."""
        while self.subscriptions <= after or not self._subscribed.is_set():
            await self._subscription_changed.wait()

    def _signal_subscription(self) -> None:
        changed, self._subscription_changed = self._subscription_changed, asyncio.Event()
        changed.set()

    async def start(self, *, ready_timeout_s: float = 2.0) -> bool:
        """Start the subscription task; True when subscribed within the timeout (the task keeps
        trying in the background otherwise)."""
        if self._task is None or self._task.done():
            self._stopping = asyncio.Event()
            self._task = asyncio.create_task(self._run(), name=f"subscriber {self._name}")
        try:
            await asyncio.wait_for(self._subscribed.wait(), ready_timeout_s)
        except TimeoutError:
            return False
        return True

    async def stop(self, timeout_s: float = 3.0) -> None:
        """Stop: cancel the task and tell it through an event too (a cancel can be lost inside
        redis-py while it tears a connection down; the event cannot)."""
        task, self._task = self._task, None
        self._stopping.set()
        if task is not None:
            task.cancel()
            await asyncio.wait([task], timeout=timeout_s)
        self._subscribed.clear()

    async def _run(self) -> None:
        delay = self._backoff.min_s
        while not self._stopping.is_set():
            node_redis: Redis | None = None
            try:
                if is_cluster(self._redis):
                    nodes = await cluster_nodes(self._redis)  # type: ignore[arg-type]
                    self.node = nodes[self._attempt % len(nodes)]
                    node_redis = node_client(self._redis, *self.node)  # type: ignore[arg-type]
                    channel_conn = node_redis.pubsub()
                else:
                    channel_conn = self._redis.pubsub()
            except Exception as exc:  # noqa: BLE001 - never let a subscription die
                self._attempt += 1
                log.warning("subscription %s: no node to subscribe on (%s)", self._name, exc)
                with contextlib.suppress(TimeoutError):
                    await asyncio.wait_for(self._stopping.wait(), delay)
                delay = self._backoff.next(delay)
                continue
            try:
                if self._pattern:
                    await channel_conn.psubscribe(self.channel)
                else:
                    await channel_conn.subscribe(self.channel)
                while not self._stopping.is_set():
                    msg: dict[str, Any] | None = await channel_conn.get_message(timeout=self._poll_s)
                    if msg is None:
                        continue
                    kind = msg["type"]
                    if kind in ("message", "pmessage"):
                        await self._on_message(text(msg["channel"]), bytes(msg["data"]))
                    elif kind in ("subscribe", "psubscribe"):
                        delay = self._backoff.min_s
                        self.subscriptions += 1
                        if self._on_subscribed is not None:
                            await self._on_subscribed(self.subscriptions)
                        self._subscribed.set()
                        self._signal_subscription()
            except asyncio.CancelledError:
                raise
            except _FAILURES as exc:
                self._attempt += 1  # on a cluster: the next node
                if is_cluster(self._redis):
                    self._redis._initialize = True  # type: ignore[attr-defined]  # re-learn the map
                if self._subscribed.is_set():
                    log.warning("subscription %s lost (%s); reconnecting", self._name, exc)
            except Exception:  # never let a subscription die
                self._attempt += 1
                log.exception("subscription %s failed; reconnecting", self._name)
            finally:
                self._subscribed.clear()
                self._signal_subscription()
                with contextlib.suppress(Exception):  # the connection may already be broken
                    await channel_conn.aclose()  # type: ignore[no-untyped-call]
                if node_redis is not None:
                    with contextlib.suppress(Exception):
                        await node_redis.aclose()
            with contextlib.suppress(TimeoutError):
                await asyncio.wait_for(self._stopping.wait(), delay)
            delay = self._backoff.next(delay)
