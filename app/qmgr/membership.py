"""Membership of the queue-sharing group, heartbeats, and peer recovery.

* Each QM claims its name with a heartbeat lease in Redis; a second process claiming an active
  QM's name is refused. The lease is renewed every ``heartbeat_interval_s`` and lapses after
  ``heartbeat_ttl_s``.
* A member is ACTIVE while its lease lives, STOPPED after a clean shutdown, FAILED when its
  lease lapsed without one.
* Peer recovery: every QM watches the others; when one has FAILED, exactly one survivor (the
  one that takes the recovery lock) resolves the dead QM's units of work in every CF
  structure - backed out, or committed when the QM had recorded a commit that it did not
  finish - and clears its open counts. A QM that restarts under the same name waits for (or
  does) that recovery before it serves, then resolves its own private-queue work.
"""

from __future__ import annotations

import asyncio
import contextlib
import json
import logging
import os
import socket
import uuid
from collections.abc import Awaitable, Callable
from dataclasses import dataclass
from typing import Any

import redis.asyncio as aioredis
from redis.exceptions import RedisError

from app.cf import keys
from app.cf.engine import CouplingFacility
from app.core.clock import Clock
from app.qmgr.tasks import stop_task

log = logging.getLogger(__name__)

# Lua: claim a QM name unless another live instance holds it (one atomic step).
_CLAIM = """
local holder = redis.call('GET', KEYS[1])
if holder and holder ~= ARGV[1] then return holder end
redis.call('SET', KEYS[1], ARGV[1], 'PX', ARGV[2])
return false
"""
# Lua: renew the lease only while this instance holds it.
_RENEW = """
if redis.call('GET', KEYS[1]) == ARGV[1] then
  redis.call('PEXPIRE', KEYS[1], ARGV[2]) return 1
end
return 0
"""


class NameInUse(Exception):
    """Another live process is this queue manager."""


@dataclass(frozen=True)
class Member:
    name: str
    status: str  # ACTIVE, STOPPED, FAILED
    url: str
    started: int
    recovered: bool

    def as_dict(self) -> dict[str, Any]:
        return {"QMNAME": self.name, "STATUS": self.status, "URL": self.url, "STARTED": self.started,
                "RECOVERED": "YES" if self.recovered else "NO"}


class Membership:
    """This QM's place in the group and its watch over the others."""

    def __init__(self, redis: aioredis.Redis, cf: CouplingFacility, clock: Clock, *, qsg: str, qmgr: str,
                 url: str, interval_s: float, ttl_s: float,
                 shared_tags: Callable[[], list[str]],
                 on_recovered: Callable[[str, tuple[int, int, int]], Awaitable[None]] | None = None) -> None:
        self.redis = redis
        self.cf = cf
        self.clock = clock
        self.qsg = qsg
        self.qmgr = qmgr
        self.url = url
        self.instance = f"{socket.gethostname()}:{os.getpid()}:{uuid.uuid4().hex[:8]}"
        self.interval_s = interval_s
        self.ttl_ms = int(ttl_s * 1000)
        self.shared_tags = shared_tags
        self.on_recovered = on_recovered
        self._task: asyncio.Task | None = None
        self._stopping = asyncio.Event()
        self._claim = redis.register_script(_CLAIM)
        self._renew = redis.register_script(_RENEW)

    # ---- own life cycle ---------------------------------------------------------------

    async def join(self) -> bool:
        """Claim the name; returns True when the previous incarnation failed (needs recovery).

        Raises NameInUse when another live process holds the name.
        """
        holder = await self._claim([keys.heartbeat_key(self.qsg, self.qmgr)], [self.instance, self.ttl_ms])
        if holder:
            raise NameInUse(f"queue manager {self.qmgr} is already active in {self.qsg} ({holder.decode()})")
        previous = await self.member(self.qmgr)
        await self._record("STARTING", recovered=False)
        return previous is not None and previous.status in ("ACTIVE", "FAILED", "STARTING") and not previous.recovered

    async def start_watching(self) -> None:
        await self._record("ACTIVE", recovered=False)
        self._task = asyncio.create_task(self._watch(), name=f"membership-{self.qmgr}")

    async def leave(self) -> None:
        """Clean shutdown: STOPPED, lease given up; nothing is left for peer recovery."""
        await stop_task(self._task, self._stopping)
        try:
            await self._record("STOPPED", recovered=True)
            hb = keys.heartbeat_key(self.qsg, self.qmgr)
            if (await self.redis.get(hb) or b"").decode() == self.instance:
                await self.redis.delete(hb)
        except RedisError as exc:
            log.warning("could not record the clean stop of %s: %s", self.qmgr, exc)

    async def _record(self, status: str, *, recovered: bool) -> None:
        value = {"status": status, "url": self.url, "started": self.clock.now_ms(), "instance": self.instance,
                 "recovered": recovered}
        await self.redis.hset(keys.members_key(self.qsg), self.qmgr, json.dumps(value))

    # ---- the group ----------------------------------------------------------------------

    async def members(self) -> list[Member]:
        """Every QM that ever joined, with its status as the others see it."""
        raw = await self.redis.hgetall(keys.members_key(self.qsg))
        names = sorted(k.decode() for k in raw)
        alive = await self.redis.mget([keys.heartbeat_key(self.qsg, n) for n in names]) if names else []
        out = []
        for name, hb in zip(names, alive):
            info = json.loads(raw[name.encode()])
            status = info["status"]
            if status in ("ACTIVE", "STARTING") and hb is None:
                status = "FAILED"  # the lease lapsed without a clean stop
            out.append(Member(name, status, info.get("url", ""), info.get("started", 0), bool(info.get("recovered"))))
        return out

    async def member(self, name: str) -> Member | None:
        return next((m for m in await self.members() if m.name == name), None)

    async def active_names(self) -> list[str]:
        return [m.name for m in await self.members() if m.status == "ACTIVE"]

    # ---- heartbeat and peer recovery --------------------------------------------------

    async def _watch(self) -> None:
        hb = keys.heartbeat_key(self.qsg, self.qmgr)
        while not self._stopping.is_set():
            try:
                if not await self._renew([hb], [self.instance, self.ttl_ms]):
                    # The lease lapsed (e.g. Redis restarted): claim it back unless someone else has it.
                    holder = await self._claim([hb], [self.instance, self.ttl_ms])
                    if holder:
                        log.error("queue manager name %s was taken by %s", self.qmgr, holder)
                    else:
                        await self._record("ACTIVE", recovered=False)
                for m in await self.members():
                    if m.status == "FAILED" and not m.recovered and m.name != self.qmgr:
                        await self.recover_peer(m.name)
            except asyncio.CancelledError:
                raise
            except (RedisError, OSError) as exc:
                log.warning("membership of %s: %s", self.qmgr, exc)
            except Exception:  # keep heartbeating whatever one recovery pass did
                log.exception("membership of %s", self.qmgr)
            with contextlib.suppress(asyncio.TimeoutError):
                await asyncio.wait_for(self._stopping.wait(), timeout=self.interval_s)

    async def recover_peer(self, failed: str, *, wait: bool = False) -> bool:
        """Resolve ``failed``'s shared units of work if this QM wins the recovery lock.

        Returns True when this QM did the recovery. With ``wait``, waits while another QM holds
        the lock (a restarting QM waiting for its own peer recovery).
        """
        lock = f"{keys.group_prefix(self.qsg)}recovery:{failed}"
        while True:
            if await self.redis.set(lock, self.qmgr, nx=True, px=60_000):
                break
            if not wait:
                return False
            await asyncio.sleep(0.2)
        try:
            member = await self.member(failed)
            if member is None or member.recovered or (member.status == "ACTIVE" and failed != self.qmgr):
                return False  # someone else finished it, or it came back
            log.info("%s: peer recovery of %s started", self.qmgr, failed)
            counts = await self._resolve_units_of_work(failed, self.shared_tags())
            raw = await self.redis.hget(keys.members_key(self.qsg), failed)
            info = json.loads(raw) if raw else {}
            if failed != self.qmgr:
                info.update(status="FAILED", recovered=True)
                await self.redis.hset(keys.members_key(self.qsg), failed, json.dumps(info))
            log.info("%s: peer recovery of %s complete: %d unit(s) of work backed out, %d committed, "
                     "%d handle(s) cleared", self.qmgr, failed, *counts)
            if self.on_recovered:
                await self.on_recovered(failed, counts)  # (backed out, committed, handles cleared)
            return True
        finally:
            await self.redis.delete(lock)

    async def _resolve_units_of_work(self, qmgr: str, tags: list[str]) -> tuple[int, int, int]:
        """Back out ``qmgr``'s units of work in ``tags`` (commit those it recorded as committing)
        and clear its handles there. Every step is idempotent, so a repeated recovery is harmless."""
        backed_out = committed = cleared = 0
        intents = await self._commit_intents(qmgr)
        for tag in tags:
            for owner, hconn in await self.cf.units_of_work(tag):
                if owner != qmgr:
                    continue
                if tag in intents.get(hconn, ()):
                    await self.cf.commit(tag, qmgr, hconn)
                    committed += 1
                else:
                    await self.cf.backout(tag, qmgr, hconn)
                    backed_out += 1
            cleared += await self.cf.clear_opens(tag, qmgr)
        return backed_out, committed, cleared

    async def _commit_intents(self, qmgr: str) -> dict[str, list[str]]:
        prefix = keys.commit_intent_key(self.qsg, qmgr, "")
        out = {}
        async for key in self.redis.scan_iter(match=prefix + "*"):
            raw = await self.redis.get(key)
            if raw:
                out[key.decode()[len(prefix):]] = json.loads(raw)
        return out

    async def recover_own_private_work(self) -> tuple[int, int, int]:
        """At restart: this QM's previous incarnation's work on its own queues (its 'page sets')."""
        tag = keys.private_tag(self.qsg, self.qmgr)
        counts = await self._resolve_units_of_work(self.qmgr, [tag])
        async for key in self.redis.scan_iter(match=keys.alias_handles_key(self.qsg, self.qmgr, "*")):
            await self.redis.delete(key)
        async for key in self.redis.scan_iter(match=keys.commit_intent_key(self.qsg, self.qmgr, "*")):
            await self.redis.delete(key)
        return counts
