"""Membership of the queue-sharing group, heartbeats, fencing and peer recovery.

* Each start of a QM is a new *incarnation*: it claims its name with a heartbeat lease in Redis
  and takes an incarnation number higher than any its name had (lua/claim.lua). A second process
  claiming an active QM's name is refused. The lease is renewed every ``heartbeat_interval_s``
  and lapses after ``heartbeat_ttl_s``.
* A lease that lapsed is never claimed back by the same incarnation: the QM cannot know whether
  a peer recovered it meanwhile. It stops serving with its old identity and rejoins as a new
  incarnation (``on_lease_lost``). The lease is also kept locally (``lease_valid``): once it may
  have lapsed, the coupling facility engine refuses to call at all, so a paused or cut-off QM
  never commits "optimistically".
* A member is ACTIVE while its lease lives, STOPPED after a clean shutdown, FAILED when its
  lease lapsed without one.
* Peer recovery: every QM watches the others; when one has FAILED, exactly one survivor (the
  one that takes the recovery lock) first FENCES the failed incarnation in the group's records
  and in every structure (lua/fence.lua), then resolves its units of work - backed out, or
  committed when the QM had recorded a commit that it did not finish - and clears its open
  counts. A fenced incarnation that is still running finds every state-changing script refused
  (MQRC_CONNECTION_BROKEN). A QM that restarts under the same name does (or waits for) that
  recovery of its previous incarnation before it serves, then resolves its own private-queue work.
"""

from __future__ import annotations

import asyncio
import contextlib
import logging
import os
import socket
import time
import uuid
from collections.abc import Awaitable, Callable
from dataclasses import dataclass
from typing import Any

from app.cf import keys
from app.cf.engine import CouplingFacility
from app.cf.leases import RECOVERY_LOCK_MS, recovery_lock
from app.core.clock import Clock
from app.core.errors import MQError
from app.qmgr.tasks import stop_task

log = logging.getLogger(__name__)

#: Share of the lease this QM counts on locally: its renewal is measured from before the call
#: was sent, and a little is kept back for clock-rate differences between here and Redis.
LEASE_MARGIN = 0.9


class NameInUse(Exception):
    """Another live process is this queue manager."""


@dataclass(frozen=True)
class Member:
    name: str
    status: str  # ACTIVE, STOPPED, FAILED
    url: str
    started: int
    recovered: bool
    incarnation: int = 0

    def as_dict(self) -> dict[str, Any]:
        return {"QMNAME": self.name, "STATUS": self.status, "URL": self.url, "STARTED": self.started,
                "RECOVERED": "YES" if self.recovered else "NO", "INCARNATION": self.incarnation}


class Membership:
    """This QM's place in the group and its watch over the others."""

    def __init__(self, cf: CouplingFacility, clock: Clock, *, qsg: str, qmgr: str,
                 url: str, interval_s: float, ttl_s: float,
                 shared_tags: Callable[[], list[str]],
                 on_recovered: Callable[[str, tuple[int, int, int]], Awaitable[None]] | None = None,
                 on_lease_lost: Callable[[str], None] | None = None,
                 on_renewed: Callable[[], Awaitable[object]] | None = None) -> None:
        self.cf = cf
        self.group = cf.group
        self.clock = clock
        self.qsg = qsg
        self.qmgr = qmgr
        self.url = url
        self.instance = ""  # this incarnation's instance id (the heartbeat's value)
        self.incarnation: int | None = None
        self.interval_s = interval_s
        self.ttl_s = ttl_s
        self.ttl_ms = int(ttl_s * 1000)
        self.shared_tags = shared_tags
        self.on_recovered = on_recovered
        self.on_lease_lost = on_lease_lost
        self.on_renewed = on_renewed  # after each renewal: the group clock measures its offset again
        self._lease_until = 0.0  # time.monotonic() until which the lease surely holds
        self._lost = False
        #: When (wall clock, ms) this QM last found the coupling facility unreachable (a heartbeat
        #: not renewed, or the lease lost); None while it is connected. DISPLAY CFSTATUS and the
        #: console show it.
        self.unreachable_since_ms: int | None = None
        self._confirming: asyncio.Future[bool] | None = None  # a late renewal under way (confirm_lease)
        self._heartbeat_task: asyncio.Task[Any] | None = None
        self._watch_task: asyncio.Task[Any] | None = None
        self._stopping = asyncio.Event()

    # ---- own life cycle ---------------------------------------------------------------

    async def join(self) -> bool:
        """Claim the name as a new incarnation and start heartbeating; returns True when the
        previous incarnation failed (it needs recovery).

        Raises NameInUse when another live process holds the name.
        """
        await self._stop_tasks()
        self.instance = f"{socket.gethostname()}:{os.getpid()}:{uuid.uuid4().hex[:8]}"
        sent = time.monotonic()
        claim = await self.group.claim(self.qmgr, self.instance, self.ttl_ms)
        if not claim.claimed:
            raise NameInUse(f"queue manager {self.qmgr} is already active in {self.qsg} ({claim.holder})")
        self.incarnation = claim.incarnation
        self._lease_until = sent + self.ttl_s * LEASE_MARGIN
        self._lost = False
        self.unreachable_since_ms = None
        previous = await self.member(self.qmgr)
        await self._record("STARTING", recovered=False)
        self._stopping = asyncio.Event()
        self._heartbeat_task = asyncio.create_task(self._heartbeat(), name=f"heartbeat-{self.qmgr}")
        return previous is not None and previous.status in ("ACTIVE", "FAILED", "STARTING") and not previous.recovered

    async def start_watching(self) -> None:
        """Serving: ACTIVE, and watching the other members for peer recovery."""
        await self._record("ACTIVE", recovered=False)
        self._watch_task = asyncio.create_task(self._watch(), name=f"membership-{self.qmgr}")

    def lease_valid(self) -> bool:
        """True while this incarnation's lease surely holds (measured here, not asked of Redis)."""
        return not self._lost and time.monotonic() < self._lease_until

    def _unreachable(self) -> None:
        if self.unreachable_since_ms is None:
            self.unreachable_since_ms = time.time_ns() // 1_000_000

    def lost(self, why: str) -> None:
        """This incarnation lost its place in the group: stop heartbeating and tell the QM (once)."""
        if self._lost:
            return
        self._lost = True
        self._unreachable()
        self._stopping.set()
        log.error("CSQE016E %s: incarnation %s lost its place in the group (disconnected from the coupling facility): "
                  "%s", self.qmgr, self.incarnation, why)
        if self.on_lease_lost is not None:
            self.on_lease_lost(why)

    async def _stop_tasks(self) -> None:
        for task in (self._heartbeat_task, self._watch_task):
            if task is not asyncio.current_task():
                await stop_task(task, self._stopping)
        self._heartbeat_task = self._watch_task = None

    async def leave(self) -> None:
        """Clean shutdown: STOPPED, lease given up; nothing is left for peer recovery."""
        await self._stop_tasks()
        if self._lost:
            return  # the lease is not ours: a peer recovers (or recovered) this incarnation
        try:
            await self._record("STOPPED", recovered=True)
            await self.group.give_up_heartbeat(self.qmgr, self.instance)
        except MQError as exc:
            log.warning("could not record the clean stop of %s: %s", self.qmgr, exc)

    async def _record(self, status: str, *, recovered: bool) -> None:
        value = {"status": status, "url": self.url, "started": self.clock.now_ms(), "instance": self.instance,
                 "incarnation": self.incarnation, "recovered": recovered}
        await self.group.record_member(self.qmgr, value)

    # ---- the group ----------------------------------------------------------------------

    async def members(self) -> list[Member]:
        """Every QM that ever joined, with its status as the others see it."""
        out = []
        for record in await self.group.members():
            name, info = record.name, record.info
            status = info["status"]
            if status in ("ACTIVE", "STARTING") and not record.alive:
                status = "FAILED"  # the lease lapsed without a clean stop
            out.append(Member(name, status, info.get("url", ""), info.get("started", 0), bool(info.get("recovered")),
                              int(info.get("incarnation") or 0)))
        return out

    async def member(self, name: str) -> Member | None:
        return next((m for m in await self.members() if m.name == name), None)

    # ---- heartbeat and peer recovery --------------------------------------------------

    async def _heartbeat(self) -> None:
        """Renew the lease every interval; lose it (never re-claim it) when a renewal fails or
        cannot be made before the lease would lapse."""
        unreachable = False
        while not self._stopping.is_set():
            remaining = self._lease_until - time.monotonic()
            if remaining <= 0:
                # The share of the lease counted on here has passed - typically the event loop was
                # held a moment (a stall shorter than the lease). The lease itself may still be
                # this incarnation's in the coupling facility: one renewal says so (renew.lua
                # renews only a lease that never lapsed), else it is lost, as before.
                if not await self.confirm_lease():
                    return
                continue
            try:
                sent = time.monotonic()
                assert self.incarnation is not None
                renewed = await asyncio.wait_for(
                    self.group.renew(self.qmgr, self.instance, self.ttl_ms, self.incarnation), remaining)
                if not renewed:
                    self.lost("its heartbeat lease is gone (lapsed, or taken by another process)")
                    return
                self._lease_until = sent + self.ttl_s * LEASE_MARGIN
                if renewed == 2:  # Redis came back without its data: so must the membership record
                    log.warning("%s: Redis lost its data; heartbeat lease claimed back as incarnation %s",
                                self.qmgr, self.incarnation)
                    await self._record("ACTIVE" if self._watch_task else "STARTING", recovered=False)
                if unreachable:
                    log.info("%s: heartbeat renewed again", self.qmgr)
                unreachable = False
                self.unreachable_since_ms = None
                if self.on_renewed is not None:
                    # bounded: a slow answer must not hold up the next renewal
                    with contextlib.suppress(asyncio.TimeoutError):
                        await asyncio.wait_for(self.on_renewed(), timeout=self.interval_s)
            except asyncio.CancelledError:
                raise
            except (TimeoutError, MQError) as exc:
                if not unreachable:
                    log.warning("%s: heartbeat not renewed (%s); the lease lapses in %.1fs", self.qmgr,
                                type(exc).__name__, max(0.0, self._lease_until - time.monotonic()))
                unreachable = True
                self._unreachable()
            with contextlib.suppress(asyncio.TimeoutError):
                await asyncio.wait_for(self._stopping.wait(), timeout=self.interval_s)

    async def confirm_lease(self) -> bool:
        """True when the lease holds: surely (``lease_valid``), or confirmed by a late renewal
        (``_renew_late``; one at a time, shared by every caller: the heartbeat and the coupling
        facility calls that found the lease in doubt). When it cannot be confirmed the
        incarnation is lost (``lost``) and False is returned."""
        if self._lost:
            return False
        if self.lease_valid():
            return True
        if self._confirming is None or self._confirming.done():  # a finished one is no answer for now
            self._confirming = asyncio.ensure_future(self._renew_late())
        confirming = self._confirming
        try:
            confirmed = await asyncio.shield(confirming)
        finally:
            if confirming.done() and self._confirming is confirming:
                self._confirming = None
        if not confirmed:
            self.lost("its heartbeat lease lapsed before it could be renewed")
        return confirmed and not self._lost

    async def _renew_late(self) -> bool:
        """After the local share of the lease passed: True when one renewal, within a heartbeat
        interval, finds the lease still this incarnation's (it never lapsed, so no peer can have
        seen this QM failed, let alone fenced it). Meanwhile ``lease_valid`` is False: nothing
        reached the coupling facility while the lease was in doubt. A lease that did lapse is not
        renewed (renew.lua), so a QM that was away longer than its lease is still fenced."""
        late_by = time.monotonic() - self._lease_until
        try:
            sent = time.monotonic()
            assert self.incarnation is not None
            renewed = await asyncio.wait_for(
                self.group.renew(self.qmgr, self.instance, self.ttl_ms, self.incarnation), self.interval_s)
        except asyncio.CancelledError:
            raise
        except (TimeoutError, MQError):
            return False
        if renewed != 1:  # lost; or claimed back (2), which a late renewal does not count on
            return False
        self._lease_until = sent + self.ttl_s * LEASE_MARGIN
        log.warning("QSGE302W %s: heartbeat renewed %.2fs after the share of its lease it counts on had passed "
                    "(the event loop was held); the lease had not lapsed in the coupling facility", self.qmgr,
                    late_by)
        return True

    async def _watch(self) -> None:
        """Peer recovery of failed members (a task of its own: a long recovery never delays the
        heartbeat)."""
        while not self._stopping.is_set():
            try:
                for m in await self.members():
                    if m.status == "FAILED" and not m.recovered and m.name != self.qmgr:
                        await self.recover_peer(m.name)
            except asyncio.CancelledError:
                raise
            except MQError as exc:
                log.warning("membership of %s: %s", self.qmgr, exc)
            except Exception:  # keep watching whatever one recovery pass did
                log.exception("membership of %s", self.qmgr)
            with contextlib.suppress(asyncio.TimeoutError):
                await asyncio.wait_for(self._stopping.wait(), timeout=self.interval_s)

    async def recover_peer(self, failed: str, *, wait: bool = False) -> bool:
        """Resolve ``failed``'s shared units of work if this QM wins the recovery lock.

        Returns True when this QM did the recovery. With ``wait``, waits while another QM holds
        the lock (a restarting QM waiting for its own peer recovery).
        """
        lock = recovery_lock(self.qsg, failed)
        while True:
            if await self.cf.leases.take(lock, self.qmgr, RECOVERY_LOCK_MS):
                break
            if not wait:
                return False
            await asyncio.sleep(0.2)
        try:
            member = await self.member(failed)
            if member is None or member.recovered or (member.status == "ACTIVE" and failed != self.qmgr):
                return False  # someone else finished it, or it came back
            # Fence first: the failed incarnation may still be running (paused, cut off) and must
            # never change anything this recovery resolves. Restarting, fence every older one.
            lowest = self.incarnation if failed == self.qmgr else member.incarnation + 1
            assert lowest is not None
            log.info("CSQE011I %s: peer recovery of %s (incarnations below %d fenced) started",
                     self.qmgr, failed, lowest)
            await self.fence(failed, lowest)
            counts = await self._resolve_units_of_work(failed, self.shared_tags(), lowest)
            info = await self.group.member_info(failed)
            if failed != self.qmgr and int(info.get("incarnation") or 0) == member.incarnation:
                info.update(status="FAILED", recovered=True)  # unless it has rejoined meanwhile
                await self.group.record_member(failed, info)
            log.info("CSQE013I %s: peer recovery of %s complete: %d unit(s) of work backed out, %d committed, "
                     "%d handle(s) cleared", self.qmgr, failed, *counts)
            if self.on_recovered:
                await self.on_recovered(failed, counts)  # (backed out, committed, handles cleared)
            return True
        finally:
            await self.cf.leases.release(lock, self.qmgr)

    async def fence(self, qmgr: str, lowest: int) -> None:
        """Fence every incarnation of ``qmgr`` below ``lowest``: in the group's records (commit
        intents) and in every CF structure. Its private queues are in its own page set, which
        peers never touch (as on z/OS): it fences them itself at restart (``recover_own_private_work``)."""
        await self.cf.fence(None, qmgr, lowest)
        for tag in self.shared_tags():
            await self.cf.fence(tag, qmgr, lowest)

    async def _resolve_units_of_work(self, qmgr: str, tags: list[str], fenced_below: int) -> tuple[int, int, int]:
        """Back out ``qmgr``'s units of work in ``tags`` (commit those it recorded as committing),
        restore what its gets outside syncpoint held when their replies never came (incarnations
        below ``fenced_below``: app/cf/held.py) and clear its handles there. Every step is
        idempotent, so a repeated recovery is harmless."""
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
            restored = await self.cf.restore_held(tag, qmgr, fenced_below)
            if restored:
                log.info("%s: %d message(s) that %s got outside syncpoint, whose replies never arrived, restored to "
                         "their queues in %s", self.qmgr, restored, qmgr, tag)
            cleared += await self.cf.clear_opens(tag, qmgr)
            # Expiration reports it was sending go back for whoever sends them next.
            await self.cf.requeue_reports(tag, qmgr, (qmgr, self.qsg))
        return backed_out, committed, cleared

    async def _commit_intents(self, qmgr: str) -> dict[str, list[str]]:
        return await self.group.commit_intents(qmgr)

    async def recover_own_private_work(self) -> tuple[int, int, int]:
        """At restart: this QM's previous incarnation's work on its own queues (its 'page sets')."""
        tag = keys.private_tag(self.qsg, self.qmgr)
        assert self.incarnation is not None
        await self.cf.fence(tag, self.qmgr, self.incarnation)  # an older incarnation may still run
        counts = await self._resolve_units_of_work(self.qmgr, [tag], self.incarnation)
        await self.group.clear_own_records(self.qmgr)
        return counts
