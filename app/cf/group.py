"""The group's records in the coupling facility, behind one small API.

* **heartbeat and incarnations**: a queue manager joins as a new incarnation (lua/claim.lua) and
  renews its heartbeat lease (lua/renew.lua); a lapsed lease is never claimed back;
* **membership**: a hash of queue manager -> its registration (JSON: status, url, started,
  instance, incarnation, recovered), read together with the heartbeats;
* **commit intents** of units of work spanning several structures (written by
  ``CouplingFacility.record_commit_intent``, read here by peer recovery);
* **definition broadcasts** (the XCF of z/OS): publish with acknowledgement, and the
  ``ChannelSubscriber`` that receives them;
* **ping** of the coupling facility (readiness).

Every call turns a Redis failure into ``MQError`` MQRC_CF_NOT_AVAILABLE (``group_access``).
"""

from __future__ import annotations

import asyncio
import json
import logging
import uuid
from collections.abc import Awaitable, Callable, Mapping
from dataclasses import dataclass
from typing import Any

from redis.asyncio import Redis

from app.cf import keys
from app.cf.channelsub import ChannelSubscriber, SubscribedHandler
from app.cf.codec import text
from app.cf.errors import group_access
from app.cf.redisconn import is_cluster, scan_tagged
from app.cf.replies import ClaimReply, LeaseReleaseReply, RenewReply
from app.cf.scriptargs import ClaimArgs, LeaseReleaseArgs, RenewArgs
from app.cf.scripts import ScriptRegistry

log = logging.getLogger(__name__)

#: How long a broadcast's acknowledgements are kept.
ACK_TTL_MS = 60_000


@dataclass(frozen=True)
class Claim:
    """Outcome of a join: ``incarnation`` when claimed, else ``holder`` (the live instance)."""

    claimed: bool
    incarnation: int = 0
    holder: str = ""


@dataclass(frozen=True)
class MemberRecord:
    """A queue manager's registration as stored, and whether its heartbeat lease is alive."""

    name: str
    info: dict[str, Any]
    alive: bool


@dataclass(frozen=True)
class Delivery:
    """How a broadcast went: the queue managers it had to reach (the group's active members,
    and at least as many as PUBLISH reported receiving it), and how many acknowledged in time."""

    receivers: int
    acknowledged: int

    @property
    def complete(self) -> bool:
        return self.acknowledged >= self.receivers


class GroupRecords:
    """Heartbeats, incarnations, membership and commit intents of one queue-sharing group."""

    def __init__(self, redis: Redis, scripts: ScriptRegistry, qsg: str) -> None:
        self._redis = redis
        self._scripts = scripts
        self.qsg = qsg

    async def ping(self) -> None:
        """Raise MQRC_CF_NOT_AVAILABLE unless the coupling facility answers (where the group's
        records are: on a Redis Cluster, PING would ask every master, and one failing over
        must not make the whole group unready)."""
        with group_access("ping"):
            await self._redis.exists(keys.members_key(self.qsg))

    async def server_time_us(self) -> int:
        """The coupling facility's time (Redis ``TIME``) in microseconds since the epoch, read
        where the group's records are: on a Redis Cluster the master holding the ``{QSG}`` slot,
        so every queue manager reads the same node's clock (app/cf/groupclock.py)."""
        with group_access("time"):
            if is_cluster(self._redis):
                cluster: Any = self._redis
                if cluster._initialize:  # no slot map yet (or a stale one): learn it first
                    await cluster.initialize()
                node = cluster.get_node_from_key(keys.members_key(self.qsg))
                reply = await cluster.execute_command("TIME", target_nodes=node)
            else:
                reply = await self._redis.time()
        seconds, micros = reply
        return int(seconds) * 1_000_000 + int(micros)

    # -- heartbeat lease and incarnations --

    async def claim(self, qmgr: str, instance: str, lease_ms: int) -> Claim:
        """Join as a new incarnation of ``qmgr`` (lua/claim.lua)."""
        args = ClaimArgs(keys.heartbeat_key(self.qsg, qmgr), keys.incarnations_key(self.qsg), qmgr, instance,
                         str(lease_ms))
        with group_access(f"heartbeat of {qmgr}"):
            reply = ClaimReply.parse(await self._scripts.claim(args.keys(), args.argv()))
        return Claim(reply.claimed, incarnation=reply.incarnation, holder=reply.holder)

    async def renew(self, qmgr: str, instance: str, lease_ms: int, incarnation: int) -> int:
        """Renew the heartbeat lease while ``instance`` holds it (lua/renew.lua): 1 renewed, 2
        claimed back after Redis lost its data, 0 lost."""
        args = RenewArgs(keys.heartbeat_key(self.qsg, qmgr), keys.incarnations_key(self.qsg), instance,
                         str(lease_ms), qmgr, str(incarnation))
        with group_access(f"heartbeat of {qmgr}"):
            return RenewReply.parse(await self._scripts.renew(args.keys(), args.argv())).outcome

    async def give_up_heartbeat(self, qmgr: str, instance: str) -> None:
        """Clean stop: drop the heartbeat lease if ``instance`` still holds it."""
        args = LeaseReleaseArgs(keys.heartbeat_key(self.qsg, qmgr), instance)
        with group_access(f"heartbeat of {qmgr}"):
            LeaseReleaseReply.parse(await self._scripts.lease_release(args.keys(), args.argv()))

    # -- membership --

    async def record_member(self, qmgr: str, info: Mapping[str, Any]) -> None:
        """Store ``qmgr``'s registration."""
        with group_access("membership"):
            await self._redis.hset(keys.members_key(self.qsg), qmgr, json.dumps(info))

    async def member_info(self, qmgr: str) -> dict[str, Any]:
        """``qmgr``'s registration ({} when it never joined)."""
        with group_access("membership"):
            raw = await self._redis.hget(keys.members_key(self.qsg), qmgr)
        return dict(json.loads(raw)) if raw else {}

    async def record_pageset(self, qmgr: str, url: str) -> None:
        """Where ``qmgr``'s page set is (its private queues), for the group's definition commands."""
        with group_access("page sets"):
            await self._redis.hset(keys.pagesets_key(self.qsg), qmgr, url)

    async def pagesets(self) -> dict[str, str]:
        """queue manager -> the URL of its page set."""
        with group_access("page sets"):
            raw: dict[Any, Any] = await self._redis.hgetall(keys.pagesets_key(self.qsg))
        return {text(k): text(v) for k, v in raw.items()}

    async def members(self) -> list[MemberRecord]:
        """Every queue manager that ever joined (by name), with whether its heartbeat is alive."""
        return await read_members(self._redis, self.qsg)

    # -- commit intents and a queue manager's own records --

    async def commit_intents(self, qmgr: str) -> dict[str, list[str]]:
        """hconn -> structure tags of every commit ``qmgr`` recorded as in progress."""
        prefix = keys.commit_intent_key(self.qsg, qmgr, "")
        out: dict[str, list[str]] = {}
        with group_access("commit intents"):
            async for key in scan_tagged(self._redis, prefix + "*"):
                raw = await self._redis.get(key)
                if raw:
                    out[text(key)[len(prefix):]] = list(json.loads(raw))
        return out

    async def clear_own_records(self, qmgr: str) -> None:
        """At restart, after its units of work were resolved: drop ``qmgr``'s alias-handle sets
        and commit intents (both belong to the previous incarnation)."""
        with group_access("records of " + qmgr):
            async for key in scan_tagged(self._redis, keys.alias_handles_key(self.qsg, qmgr, "*")):
                await self._redis.delete(key)
            async for key in scan_tagged(self._redis, keys.commit_intent_key(self.qsg, qmgr, "*")):
                await self._redis.delete(key)


async def read_members(redis: Redis, qsg: str) -> list[MemberRecord]:
    """Every queue manager of ``qsg`` that ever joined, with whether its heartbeat is alive."""
    with group_access("membership"):
        raw: dict[bytes | str, bytes | str] = await redis.hgetall(keys.members_key(qsg))
        names = sorted(text(k) for k in raw)
        alive = await redis.mget([keys.heartbeat_key(qsg, n) for n in names]) if names else []
    return [MemberRecord(name, dict(json.loads(raw[name.encode()])), hb is not None)
            for name, hb in zip(names, alive, strict=True)]


async def active_members(redis: Redis, qsg: str) -> set[str]:
    """Names of the members that are ACTIVE with a live heartbeat: those a broadcast must reach."""
    return {m.name for m in await read_members(redis, qsg) if m.alive and m.info.get("status") == "ACTIVE"}


class Broadcasts:
    """Publish-with-acknowledgement on the QSG's broadcast channel, and its subscriber."""

    def __init__(self, redis: Redis, qsg: str) -> None:
        self._redis = redis
        self.qsg = qsg
        self.channel = keys.definitions_channel(qsg)

    async def publish(self, origin: str, message: Mapping[str, Any], timeout_s: float) -> Delivery:
        """Publish ``message`` and wait (at most ``timeout_s``) until every receiver has
        acknowledged it, that is, has applied it.

        Who must acknowledge: every ACTIVE member of the group with a live heartbeat (re-read
        while waiting, so a member that fails meanwhile is not waited for), and at least as
        many as PUBLISH reported. On a single Redis that count is every subscriber; on a Redis
        Cluster it counts only the subscribers of the node that took the PUBLISH (the message
        still reaches every node), so the membership is what counts there."""
        request_id = uuid.uuid4().hex
        ack_key = keys.broadcast_ack_key(self.qsg, request_id)
        payload = json.dumps({**message, "id": request_id, "origin": origin})
        with group_access("broadcast"):
            expected = await active_members(self._redis, self.qsg)
            receivers = int(await self._redis.publish(self.channel, payload))
            acked: set[str] = set()  # who acknowledged
            count = 0  # how many acknowledgements (a name twice: two subscriptions of one QM)
            loop = asyncio.get_running_loop()
            deadline = loop.time() + timeout_s
            while count < receivers or not expected <= acked:
                remaining = deadline - loop.time()
                if remaining <= 0:
                    log.warning("broadcast %s: %d of %d queue managers acknowledged (missing: %s)",
                                message.get("kind"), count, max(receivers, len(expected | acked)),
                                ", ".join(sorted(expected - acked)) or "-")
                    break
                # BLPOP's own timeout bounds the wait; the connection's socket timeout is longer.
                got = await self._redis.blpop([ack_key], timeout=max(0.01, min(remaining, 1.0)))
                if got is not None:
                    acked.add(text(got[1]))
                    count += 1
                elif not expected <= acked:  # a quiet second: has a member we wait for failed?
                    expected = await active_members(self._redis, self.qsg)
            await self._redis.delete(ack_key)
        return Delivery(max(receivers, len(expected | acked)), count)

    async def acknowledge(self, request_id: str, qmgr: str) -> None:
        """Tell the publisher of broadcast ``request_id`` that ``qmgr`` applied it."""
        ack_key = keys.broadcast_ack_key(self.qsg, request_id)
        with group_access("broadcast"):
            await self._redis.rpush(ack_key, qmgr)
            await self._redis.pexpire(ack_key, ACK_TTL_MS)

    def subscriber(self, on_message: Callable[[bytes], Awaitable[None]], *,
                   on_subscribed: SubscribedHandler | None = None, name: str = "") -> ChannelSubscriber:
        """A subscriber of the broadcast channel (``on_message`` gets the raw payload)."""

        async def received(_channel: str, data: bytes) -> None:
            await on_message(data)
        return ChannelSubscriber(self._redis, self.channel, pattern=False, on_message=received,
                          on_subscribed=on_subscribed, name=name or f"broadcasts of {self.qsg}")


async def publish_from_outside(redis_url: str, qsgs: list[str], message: Mapping[str, Any], timeout_s: float,
                               origin: str = "CLI") -> dict[str, Delivery]:
    """Publish ``message`` to the queue managers of each QSG in ``qsgs`` from a process that is
    not one of them (one short-lived Redis client); raises MQError MQRC_CF_NOT_AVAILABLE when
    Redis cannot be reached."""
    from app.cf.redisconn import make_redis

    redis = make_redis(redis_url)
    try:
        return {qsg: await Broadcasts(redis, qsg).publish(origin, message, timeout_s) for qsg in qsgs}
    finally:
        await redis.aclose()
