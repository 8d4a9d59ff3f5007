"""Group broadcast between queue managers (the XCF of z/OS) over Redis pub/sub.

A sender publishes a JSON request on the group channel and waits until every receiver has
acknowledged it (each pushes to a per-request list), so an MQSC command that changes a
definition returns only when every active QM's cache has the change. A receiver that
reconnects reloads everything, because messages published while it was away are lost.

Tools outside the group (the ``qsg user`` CLI changing users and API keys in the repository)
publish with ``publish`` and the same acknowledgement rule, without receiving.
"""

from __future__ import annotations

import asyncio
import json
import logging
import uuid
from collections.abc import Awaitable, Callable
from dataclasses import dataclass

import redis.asyncio as aioredis
from redis.exceptions import RedisError

from app.cf import keys
from app.qmgr.tasks import stop_task

log = logging.getLogger(__name__)

Handler = Callable[[dict], Awaitable[None]]


@dataclass(frozen=True)
class Delivery:
    """How a broadcast went: subscribers that received it, and how many acknowledged in time."""

    receivers: int
    acknowledged: int

    @property
    def complete(self) -> bool:
        return self.acknowledged >= self.receivers


async def publish(redis: aioredis.Redis, qsg: str, origin: str, message: dict, timeout_s: float) -> Delivery:
    """Publish ``message`` on the QSG's broadcast channel and wait (at most ``timeout_s``) until
    every receiver has acknowledged it, that is, has applied it."""
    request_id = uuid.uuid4().hex
    ack_key = keys.broadcast_ack_key(qsg, request_id)
    payload = json.dumps({**message, "id": request_id, "origin": origin})
    receivers = await redis.publish(keys.definitions_channel(qsg), payload)
    acked = 0
    loop = asyncio.get_running_loop()
    deadline = loop.time() + timeout_s
    while acked < receivers:
        remaining = deadline - loop.time()
        if remaining <= 0:
            log.warning("broadcast %s: %d of %d queue managers acknowledged", message.get("kind"), acked, receivers)
            break
        # BLPOP's own timeout bounds the wait; the connection's socket timeout is longer.
        got = await redis.blpop([ack_key], timeout=max(0.01, min(remaining, 1.0)))
        if got is not None:
            acked += 1
    await redis.delete(ack_key)
    return Delivery(receivers, acked)


class Broadcaster:
    """Publish-with-acknowledgement on the QSG's broadcast channel, and the receiving loop."""

    def __init__(self, redis: aioredis.Redis, qsg: str, qmgr: str, *, on_message: Handler,
                 on_reconnect: Callable[[], Awaitable[None]], timeout_ms: int) -> None:
        self._redis = redis
        self._qsg = qsg
        self._qmgr = qmgr
        self._on_message = on_message
        self._on_reconnect = on_reconnect
        self._timeout_s = timeout_ms / 1000
        self._channel = keys.definitions_channel(qsg)
        self._task: asyncio.Task | None = None
        self._subscribed = asyncio.Event()
        self._stopping = asyncio.Event()

    async def start(self) -> None:
        """Start receiving; returns once subscribed so no broadcast is missed after start-up."""
        self._task = asyncio.create_task(self._run(), name=f"broadcast-{self._qmgr}")
        await asyncio.wait_for(self._subscribed.wait(), timeout=10)

    async def stop(self) -> None:
        await stop_task(self._task, self._stopping)

    async def publish(self, message: dict) -> int:
        """Send ``message`` to every QM (this one included); return how many acknowledged in time."""
        delivery = await publish(self._redis, self._qsg, self._qmgr, message, self._timeout_s)
        return delivery.acknowledged

    async def _run(self) -> None:
        first = True
        while not self._stopping.is_set():
            pubsub = self._redis.pubsub(ignore_subscribe_messages=True)
            try:
                await pubsub.subscribe(self._channel)
                if not first:
                    await self._on_reconnect()
                first = False
                self._subscribed.set()
                while not self._stopping.is_set():
                    msg = await pubsub.get_message(timeout=1.0)
                    if msg is None or msg.get("type") != "message":
                        continue
                    await self._receive(msg["data"])
            except (RedisError, OSError) as exc:
                log.warning("broadcast channel lost (%s); reconnecting", exc)
                await asyncio.sleep(0.5)
            finally:
                await _close(pubsub)

    async def _receive(self, data: bytes) -> None:
        try:
            message = json.loads(data)
        except ValueError:
            log.error("ignoring a malformed broadcast: %r", data[:200])
            return
        try:
            await self._on_message(message)
        except Exception:  # a failing handler must not stop the group's broadcasts
            log.exception("broadcast handler failed for %s", message.get("kind"))
        ack_key = keys.broadcast_ack_key(self._qsg, message.get("id", ""))
        await self._redis.rpush(ack_key, self._qmgr)
        await self._redis.pexpire(ack_key, 60_000)


async def _close(pubsub) -> None:
    try:
        await pubsub.aclose()
    except Exception:  # the connection may already be gone
        pass


async def publish_from_outside(redis_url: str, qsgs: list[str], message: dict, timeout_s: float,
                               origin: str = "CLI") -> dict[str, Delivery]:
    """Publish ``message`` to the queue managers of each QSG in ``qsgs`` from a process that is
    not one of them (one short-lived Redis client); raises RedisError/OSError when Redis cannot
    be reached."""
    from app.cf.redisconn import make_redis

    redis = make_redis(redis_url)
    try:
        return {qsg: await publish(redis, qsg, origin, message, timeout_s) for qsg in qsgs}
    finally:
        await redis.aclose()
