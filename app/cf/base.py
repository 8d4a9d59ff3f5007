"""What every part of the engine shares: who calls (incarnation, lease), how a script is called
(fenced, CF failures mapped), structure usability, and the hooks the queue manager gives it (app/cf/hooks.py)."""

from __future__ import annotations

import asyncio
import logging
from collections.abc import Awaitable, Callable, Iterable
from time import perf_counter
from typing import Any, NoReturn, TypeVar

from redis.asyncio import Redis

from app.cf import deadline, keys
from app.cf.connio import SentUnanswered
from app.cf.errors import FencedError, OutcomeUnknownError
from app.cf.errors import cf_access as _cf_access
from app.cf.errors import is_fenced as _is_fenced
from app.cf.errors import is_late as _is_late
from app.cf.group import Broadcasts, GroupRecords
from app.cf.hooks import CFHooks, PersistentLog
from app.cf.keys import QueueLocation
from app.cf.leases import Leases
from app.cf.listener import AvailabilityListener
from app.cf.redisconn import make_redis, socket_timeout_of
from app.cf.scriptargs import ScriptArgs
from app.cf.scripts import ScriptRegistry
from app.cf.shardsub import ShardSubscriber
from app.cf.tokens import TokenStore
from app.core.clock import Clock
from app.core.errors import MQError
from app.core.reasons import MQRC

log = logging.getLogger(__name__)
T = TypeVar("T")

#: Trigger counts published in a structure: (its tag, "<queue>|<before>|<after>|<added>").
TriggerCountsHandler = Callable[[str, bytes], Awaitable[None]]
#: A structure's trigger channel was (re)subscribed: (its tag, how many times).
TriggerSubscribedHandler = Callable[[str, int], Awaitable[None]]


class CFBase:
    """State and calling conventions shared by the engine's parts (``CouplingFacility`` is the facade).

    ``redis`` must be made by ``app.cf.redisconn.make_redis`` (RESP2, no retry, bytes).
    ``listener_redis``: client for the structures' notices (default: ``redis``; their
    subscriptions only read with bounded timeouts shorter than the socket timeout).
    ``recheck_s``: a waiting getter retries at least this often even without a wake-up.
    """

    def __init__(self, redis: Redis, qsg: str, clock: Clock, *,
                 listener_redis: Redis | None = None, recheck_s: float = 5.0,
                 pageset: Redis | None = None, hooks: CFHooks | None = None) -> None:
        hooks = hooks or CFHooks()
        self.hooks = hooks
        self.redis = redis
        self.qsg = qsg
        self.clock = clock
        self.scripts = ScriptRegistry(redis)
        #: The coupling facility's clock as this QM reads it (the group clock's offset, not an
        #: injected test clock): what state-changing scripts' deadlines are measured on.
        self.cf_now_ms: deadline.NowMs = hooks.cf_now_ms
        #: How long after it is sent a state-changing script may still run (app/cf/deadline.py).
        self.call_budget_ms = deadline.budget_ms(socket_timeout_of(redis))
        #: Measures the CF's clock again (the group clock's ``refresh``); None: nothing to measure.
        self.clock_check: Callable[[], Awaitable[object]] | None = hooks.clock_check
        #: How far ``cf_now_ms`` may be off, in ms (half the round trip of its measurement): a call
        #: without a reply waits that much longer past its deadline (app/cf/deadline.py).
        self.clock_error_ms: Callable[[], int] = hooks.clock_error_ms
        #: The page set's clock as this QM reads it, and that reading's error: what a private
        #: queue's script deadlines are on (the page set's own TIME checks them; the queue manager
        #: measures its offset like the group clock's). Default: the local wall clock.
        self.pageset_now_ms: deadline.NowMs = hooks.pageset_now_ms
        self.pageset_clock_error_ms: Callable[[], int] = hooks.pageset_clock_error_ms
        #: The queue manager's page set (app/cf/pageset.py): where every key under a private tag
        #: lives. None: the coupling facility's Redis holds them too (engine tests, tools).
        self.pageset = pageset if pageset is not None else redis
        self.pageset_scripts = ScriptRegistry(pageset) if pageset is not None else self.scripts
        # The other queue managers' page sets (``know_pagesets``): a definition command for
        # another QM's COPY or QMGR queue (DEFINE/DELETE QSGDISP(GROUP)) writes there.
        self._peer_urls: dict[str, str] = {}
        self._peers: dict[str, tuple[Redis, ScriptRegistry]] = {}
        #: Told each fenced script's name and round trip in seconds (the QM's metrics).
        self.observe_call: Callable[[str, float], None] | None = hooks.observe_call
        #: The per-structure notices (availability, trigger counts): shard channels, each
        #: subscribed on the node of its structure's slot.
        self.notices = ShardSubscriber(listener_redis or redis, name=f"structure notices of {qsg}")
        #: The private queues' availability notices, published in the page set.
        self.private_notices = (ShardSubscriber(pageset, name=f"page set notices of {qsg}")
                                if pageset is not None else self.notices)
        self.listener = AvailabilityListener(self.notices, private=self.private_notices)
        self._trigger_counts: TriggerCountsHandler | None = None
        self._trigger_resubscribed: TriggerSubscribedHandler | None = None
        self._trigger_tags: dict[str, str] = {}  # trigger channel -> structure tag
        #: Named leases: recovery locks, backup locks, the expiry-scanner lease.
        self.leases = Leases(redis, self.scripts)
        #: Heartbeats, incarnations, membership, commit intents.
        self.group = GroupRecords(redis, self.scripts, qsg)
        #: Definition broadcasts between the group's queue managers.
        self.broadcasts = Broadcasts(redis, qsg)
        #: The group's LTPA login tokens.
        self.tokens = TokenStore(redis, qsg)
        self.recheck_s = recheck_s
        # Called with a structure's tag when a call queued expiration reports there.
        self.on_reports: Callable[[str], None] | None = hooks.on_reports
        # Called when a put/get/scan fired a performance event (the queue, its reason code).
        self.on_event: Callable[[QueueLocation, int], None] | None = hooks.on_event
        # Called when a get or browse discarded expired messages (the queue, how many).
        self.on_expired: Callable[[QueueLocation, int], None] | None = hooks.on_expired
        # Whether this QM has PERFMEV(ENABLED): its private queues switch event flags only then.
        self.perfmev_enabled: Callable[[], bool] = hooks.perfmev_enabled
        # The log of persistent changes to RECOVER(YES) structures (None: nothing is logged).
        self.recovery_log: PersistentLog | None = hooks.recovery_log
        # Tags of structures that failed or are being recovered: their queues answer 2373.
        self.failed: set[str] = set()
        # Called when a queue's state is missing: True when that is because its structure was
        # lost (now handled: failed, reallocated, rebuilt), so the call is worth one retry.
        self.structure_lost: Callable[[str], Awaitable[bool]] | None = hooks.structure_lost
        # Who calls the scripts: this queue manager and its incarnation (0 before it joined;
        # None while it has no valid incarnation, e.g. rejoining after its lease lapsed).
        self.qmgr = hooks.qmgr
        self.incarnation: int | None = 0
        # False once this process's heartbeat lease may have lapsed (membership keeps it).
        self.lease_valid: Callable[[], bool] = hooks.lease_valid
        # When the lease is in doubt: True once a late renewal confirmed it never lapsed.
        self.confirm_lease: Callable[[], Awaitable[bool]] | None = hooks.confirm_lease
        # QMGR CFCONLOS(TOLERATE): private-queue work goes on while the CF is lost, as the
        # incarnation that opened the page set at start (its fence: recover_own_private_work).
        self.tolerate_cf_loss: Callable[[], bool] = hooks.tolerate_cf_loss
        self.private_incarnation: int | None = None
        # Called when a call found this incarnation fenced or its lease lapsed.
        self.on_fenced: Callable[[str], None] | None = hooks.on_fenced
        # Replica acknowledgement (QSG_CF_REPLICA_ACKS / QSG_CF_REPLICA_TIMEOUT_MS): after every
        # state-changing script, WAIT for this many replicas of its master (0: do not wait).
        self.replica_acks = hooks.replica_acks
        self.replica_timeout_ms = hooks.replica_timeout_ms
        # Told the tag of a structure (or group records) whose call got fewer acknowledgements.
        self.on_replica_shortfall: Callable[[str], None] | None = hooks.on_replica_shortfall
        # Tags whose latest acknowledged call fell short (the warning is logged once per episode).
        self._short_of_replicas: set[str] = set()

    async def pageset_time_us(self) -> int:
        """The page set's time (Redis ``TIME``) in microseconds since the epoch: what its scripts
        check their deadlines against (the queue manager's page-set clock measures it)."""
        with _cf_access(f"page set of {self.qmgr}"):
            seconds, micros = await self.pageset.time()
        return int(seconds) * 1_000_000 + int(micros)

    async def ping(self) -> None:
        """Raise MQError MQRC_CF_NOT_AVAILABLE unless the coupling facility answers (readiness)."""
        await self.group.ping()

    def on_trigger_counts(self, on_counts: TriggerCountsHandler, on_resubscribed: TriggerSubscribedHandler) -> None:
        """Receive the trigger counts that shared queues' puts and commits SPUBLISH in the
        structures ``follow`` names: ``on_counts(tag, data)``; ``on_resubscribed(tag, count)``
        after each (re)subscription of a structure's trigger channel (counts published while it
        was not subscribed are lost)."""
        self._trigger_counts, self._trigger_resubscribed = on_counts, on_resubscribed
        for tag in self.listener.tags:
            self._follow_triggers(tag)

    def follow(self, tags: Iterable[str]) -> bool:
        """Subscribe the notices of structures ``tags`` (already followed ones are kept): their
        availability channels, and the trigger channels of shared ones (a private queue's
        triggers are evaluated from its put's reply, nothing is published for them). True when
        some channel was new."""
        added = False
        for tag in tags:
            added = self.listener.follow(tag) | self._follow_triggers(tag) or added
        return added

    def _follow_triggers(self, tag: str) -> bool:
        if self._trigger_counts is None or ".CF." not in tag:
            return False
        channel = keys.trigger_channel(tag)
        if channel in self._trigger_tags:
            return False
        self._trigger_tags[channel] = tag
        self.notices.add(channel, self._counts_published, self._counts_resubscribed)
        return True

    async def _counts_published(self, channel: str, data: bytes) -> None:
        if self._trigger_counts is not None:
            await self._trigger_counts(self._trigger_tags[channel], data)

    async def _counts_resubscribed(self, channel: str, count: int) -> None:
        if self._trigger_resubscribed is not None:
            await self._trigger_resubscribed(self._trigger_tags[channel], count)

    async def wait_following(self, timeout_s: float) -> bool:
        """True once every followed structure's notices are subscribed, False after ``timeout_s``
        (they go on being tried in the background: e.g. the node of a structure is down)."""
        try:
            await asyncio.wait_for(self._both_subscribed(), timeout_s)
        except TimeoutError:
            return False
        return True

    async def _both_subscribed(self) -> None:
        await self.notices.wait_subscribed()
        await self.private_notices.wait_subscribed()

    async def start(self, *, ready_timeout_s: float = 2.0) -> bool:
        """Start the structures' (and the page set's) notices; True when every followed channel
        is subscribed within ``ready_timeout_s`` (they go on being tried in the background otherwise)."""
        ready = True
        if self.private_notices is not self.notices:
            ready = await self.private_notices.start(ready_timeout_s=ready_timeout_s)
        return await self.notices.start(ready_timeout_s=ready_timeout_s) and ready

    async def stop(self) -> None:
        await self.notices.stop()
        if self.private_notices is not self.notices:
            await self.private_notices.stop()
        self.listener.wake_all()

    # -- where a tag's keys live --

    def _client_for(self, tag: str) -> Redis:
        """The client of the store that holds ``tag``'s keys: this QM's page set for its private
        tag, another QM's page set for that QM's, the coupling facility otherwise."""
        if not keys.is_private(tag) or self.pageset is self.redis:
            return self.redis
        owner = keys.private_owner(tag)
        return self.pageset if owner == self.qmgr else self._peer(owner)[0]

    def _scripts_for(self, tag: str) -> ScriptRegistry:
        """The script registry of the store that holds ``tag``'s keys (see ``_client_for``)."""
        if not keys.is_private(tag) or self.pageset is self.redis:
            return self.scripts
        owner = keys.private_owner(tag)
        return self.pageset_scripts if owner == self.qmgr else self._peer(owner)[1]

    def _peer(self, qmgr: str) -> tuple[Redis, ScriptRegistry]:
        found = self._peers.get(qmgr)
        if found is None:
            raise MQError(MQRC.CF_NOT_AVAILABLE, f"the page set of queue manager {qmgr} is not known: "
                                                 f"it has not started in this group")
        return found

    async def publish_pageset(self) -> None:
        """Record where this QM's page set is (for the group's definition commands)."""
        if self.pageset is not self.redis:
            kw = self.pageset.connection_pool.connection_kwargs
            await self.group.record_pageset(self.qmgr, f"redis://{kw.get('host', '127.0.0.1')}:"
                                                       f"{kw.get('port', 6379)}/{kw.get('db', 0)}")

    async def know_pagesets(self) -> None:
        """Learn (again) where the other queue managers' page sets are."""
        if self.pageset is self.redis:
            return
        for qmgr, url in (await self.group.pagesets()).items():
            if qmgr == self.qmgr or self._peer_urls.get(qmgr) == url:
                continue
            old = self._peers.pop(qmgr, None)
            if old is not None:
                await old[0].aclose()
            client = make_redis(url)
            self._peers[qmgr] = (client, ScriptRegistry(client))
            self._peer_urls[qmgr] = url

    async def close_peers(self) -> None:
        """Close the clients of the other queue managers' page sets, and stop the reading of
        replies of every script client (the coupling facility's and the page set's close after)."""
        peers, self._peers, self._peer_urls = self._peers, {}, {}
        for client, registry in peers.values():
            await registry.aclose()
            await client.aclose()
        await self.scripts.aclose()
        if self.pageset_scripts is not self.scripts:
            await self.pageset_scripts.aclose()

    def wake_all_waiters(self) -> None:
        """Wake every waiting getter of this process (quiescing: they re-check should_stop)."""
        self.listener.wake_all()

    def _perf(self, loc: QueueLocation) -> str:
        """Performance-event mode of a script call: a shared queue switches its event attributes
        whatever this QM's PERFMEV (docs/ibm-rules.md §2.2); a private one only while PERFMEV is ENABLED."""
        if ".CF." in loc.tag:
            return "S"
        return "E" if self.perfmev_enabled() else "D"

    def _fired(self, loc: QueueLocation, *reasons: Any) -> None:
        if self.on_event is None:
            return
        for reason in reasons:
            if int(reason):
                self.on_event(loc, int(reason))

    async def usable(self, tag: str) -> None:
        """Raise MQRC_CF_STRUC_FAILED when structure ``tag`` has failed (until RECOVER CFSTRUCT).
        A structure this QM holds failed is re-read first: the recovery may have just ended."""
        if tag not in self.failed:
            return
        with _cf_access(tag):
            status = await self._client_for(tag).hget(keys.structure_state(tag), "status")
        if status == b"ACTIVE":
            self.failed.discard(tag)
            return
        raise MQError(MQRC.CF_STRUC_FAILED, f"CF structure {keys.structure_name(tag)} has failed; "
                                            f"RECOVER CFSTRUCT makes it available again")

    async def _once_more_if_lost(self, tag: str, call: Callable[[], Awaitable[T]]) -> T:
        """Run ``call``; when it finds a queue's state missing because the structure was lost
        (Redis restarted empty and nobody noticed yet), handle the loss and retry once."""
        try:
            return await call()
        except MQError as exc:
            if (exc.reason not in (MQRC.UNKNOWN_OBJECT_NAME, MQRC.Q_DELETED)
                    or self.structure_lost is None or not await self.structure_lost(tag)):
                raise
        await self.usable(tag)
        return await call()

    # -- calling as this incarnation --

    def caller(self) -> int:
        """This queue manager's incarnation, for a call about to start (``_script`` checks the
        lease on every script call); raises ``FencedError`` while it has none (rejoining)."""
        incarnation = self.incarnation
        if incarnation is None:
            if self.private_incarnation is not None and self.tolerate_cf_loss():
                return self.private_incarnation  # private work goes on; shared calls answer 2345
            self._fenced("it is rejoining the group")
        return incarnation

    def _fenced(self, why: str) -> NoReturn:
        if self.on_fenced is not None:
            self.on_fenced(why)
        raise FencedError(f"queue manager {self.qmgr} lost its place in the group ({why}): "
                          f"the connection is broken")

    async def _script(self, call: ScriptArgs, tag: str, incarnation: int) -> Any:
        """Call a fenced script (``call.SCRIPT``) of structure ``tag`` as ``incarnation`` of this
        queue manager: the fence key follows its KEYS, the caller its fixed ARGV (then its
        variable part), as lua/_fence.lua describes."""
        if (incarnation != self.incarnation or not self.lease_valid()) \
                and not await self._lease_confirmed(tag, incarnation):
            incarnation = self._tolerated(tag, incarnation)
        script = getattr(self.scripts, call.SCRIPT)
        k = [*call.keys(), keys.structure_fence(tag)]
        argv, tail = [*call.argv(), self.qmgr, str(incarnation)], call.tail()
        started = perf_counter()
        reply = await self._deadlined(tag, call, lambda due: self._evalsha(
            tag, script, k, [*argv, str(due), *tail], call.changes_state()))
        if self.observe_call is not None:
            self.observe_call(call.SCRIPT, perf_counter() - started)
        if _is_fenced(reply):
            self._fenced("peer recovery fenced its incarnation")
        return reply

    async def _lease_confirmed(self, tag: str, incarnation: int) -> bool:
        """The lease is in doubt (the event loop was held a moment): True once a late renewal
        confirmed that it never lapsed (membership.confirm_lease). Not asked for a call begun by an
        older incarnation, nor for a private queue's call under CFCONLOS(TOLERATE), which goes on
        without the coupling facility (``_tolerated``)."""
        if incarnation != self.incarnation or self.confirm_lease is None:
            return False
        if keys.is_private(tag) and self.tolerate_cf_loss():
            return False
        return await self.confirm_lease() and incarnation == self.incarnation

    async def _deadlined(self, tag: str, call: ScriptArgs, send: Callable[[int], Awaitable[T]]) -> T:
        """Run ``send(due)`` (one script call carrying deadline ``due``) and make its answer true:
        a failure before the script was written is MQRC_CF_NOT_AVAILABLE (nothing ran); a reply
        ``LATE`` too (it ran after its deadline and changed nothing); no reply after it was
        written waits until the deadline is past (the script can no longer act), then is
        ``OutcomeUnknownError`` (MQRC_CONNECTION_BROKEN) for a call that changes state.

        A ``LATE`` reply that came back well within the budget means this QM's reading of the
        CF's clock is off (a group-clock measurement taken while the host was starved), not that
        Redis was slow: the clock is measured again (``clock_check``) and the call, which changed
        nothing, is sent once more with a new deadline."""
        private = keys.is_private(tag)
        for attempt in (1, 2):
            # A private queue's script runs in the page set: its deadline is on the page set's clock
            # (read each attempt: ``clock_check`` may have measured the clock again).
            now_ms = self.pageset_now_ms if private else self.cf_now_ms
            error_ms = self.pageset_clock_error_ms if private else self.clock_error_ms
            due = now_ms() + self.call_budget_ms
            sent = perf_counter()
            try:
                with _cf_access(tag):
                    reply = await send(due)
            except MQError as exc:
                if not isinstance(exc.__cause__, SentUnanswered) or not call.changes_state():
                    raise
                await deadline.wait_past(due + error_ms(), now_ms)
                log.warning("%s: no reply from the coupling facility (%s) to %s, which may have run: "
                            "answering MQRC_CONNECTION_BROKEN (%s)", self.qmgr, _what(tag), call.SCRIPT,
                            exc.__cause__)
                raise OutcomeUnknownError(
                    f"the coupling facility did not answer a call to {_what(tag)} that it may have run "
                    f"({exc.__cause__}): its outcome is unknown (it may have happened; a unit of work it "
                    f"belongs to is backed out)", tag) from exc
            if not _is_late(reply):
                return reply
            quick = (perf_counter() - sent) * 1000 < self.call_budget_ms / 2
            if attempt == 1 and quick and self.clock_check is not None and not private:
                log.warning("%s: %s ran 'after its deadline' though it answered at once: measuring the "
                            "coupling facility's clock again", self.qmgr, call.SCRIPT)
                await self.clock_check()
                continue
            break
        raise MQError(MQRC.CF_NOT_AVAILABLE, f"the coupling facility ran the call to {_what(tag)} after "
                                             f"its deadline: nothing was changed (retry)")

    def _tolerated(self, tag: str, incarnation: int) -> int:
        """A call while this QM has no valid lease: with CFCONLOS(TOLERATE) a private queue's goes
        on as the incarnation that opened the page set (no peer ever touches it), a shared queue's
        answers 2345 (nothing done); otherwise, or for a call begun by an older incarnation (e.g.
        a get that waited across a rejoin), the connection is broken."""
        if self.private_incarnation is not None and self.tolerate_cf_loss():
            if keys.is_private(tag):
                return self.private_incarnation
            if incarnation == self.private_incarnation and incarnation != self.incarnation:
                raise MQError(MQRC.CF_NOT_AVAILABLE, f"queue manager {self.qmgr} lost connectivity to the coupling "
                                                     f"facility (CFCONLOS(TOLERATE)): {_what(tag)} is not available")
        self._fenced("its heartbeat lease lapsed")

    async def _unfenced(self, tag: str, call: ScriptArgs) -> Any:
        """Call an unfenced script (``call.SCRIPT``; its keys in ``tag``'s slot) with the replica
        acknowledgement of ``_script`` when it changes state (commit intents, fences, structure
        state, restored messages: what peer recovery and RECOVER CFSTRUCT rely on)."""
        k, a = call.call()
        return await self._evalsha(tag, getattr(self.scripts, call.SCRIPT), k, a, call.changes_state())

    async def _evalsha(self, tag: str, script: Any, k: list[str], a: list[Any], changes_state: bool) -> Any:
        """One script call; followed by WAIT on the same connection when it changes state and
        replica acknowledgement is on (the coupling facility's: a page set has no replicas)."""
        scripts = self._scripts_for(tag)
        if self.replica_acks and changes_state and scripts is self.scripts:
            reply, acks = await self.scripts.evalsha_acked(script, k, a, self.replica_acks, self.replica_timeout_ms)
            self._replicated(tag, acks)
            return reply
        return await scripts.evalsha(script, k, a)

    def _replicated(self, tag: str, acks: int) -> None:
        """After a call's WAIT: fewer acknowledgements than asked (a replica down, lagging or
        being resynchronised, or none left after a failover) leave the call done - Redis cannot
        undo a write - and the call succeeds, as a z/OS structure goes on in simplex mode when
        its duplex copy is lost. The shortfall is counted, and logged once until replicas
        acknowledge again: until then, a failover of that master may lose acknowledged work."""
        if acks >= self.replica_acks:
            if tag in self._short_of_replicas:
                self._short_of_replicas.discard(tag)
                log.info("QSGE202I %s: writes to %s are acknowledged by %d replica(s) again", self.qmgr,
                         _what(tag), acks)
            return
        if self.on_replica_shortfall is not None:
            self.on_replica_shortfall(tag)
        if tag not in self._short_of_replicas:
            self._short_of_replicas.add(tag)
            log.warning("QSGE201W %s: a write to %s was acknowledged by %d replica(s) of the %d asked within "
                        "%d ms; it stands on the master, but a failover of that master before its replicas "
                        "catch up may lose it", self.qmgr, _what(tag), acks, self.replica_acks,
                        self.replica_timeout_ms)

    async def _logged(self, tag: str) -> None:
        """Return once the recovery log holds on disk every record written so far, the calling
        change's among them. A log the disk does not take (full, failing) leaves that change made
        in the coupling facility but not logged, so it would not come back from RECOVER CFSTRUCT:
        the caller is not told it succeeded but MQRC_CONNECTION_BROKEN, as for a call whose reply
        was lost (its unit of work backed out; a commit's outcome completed by the next MQCMIT).
        The records stay buffered and go to the log once the disk takes them again."""
        assert self.recovery_log is not None
        try:
            await self.recovery_log.force()
        except OSError as exc:
            log.error("%s: the recovery log cannot be written (%s): answering MQRC_CONNECTION_BROKEN",
                      self.qmgr, exc)
            raise OutcomeUnknownError(
                f"the recovery log cannot be written ({exc}): the change was made in the coupling "
                f"facility but is not logged, so RECOVER CFSTRUCT would not bring it back", tag) from exc

    def _logs(self, tag: str, persistent: bool) -> bool:
        return persistent and self.recovery_log is not None and self.recovery_log.wanted(tag)

    def channel(self, loc: QueueLocation) -> str:
        """The availability channel of the queue's structure (its scripts SPUBLISH the queue's
        name there)."""
        return keys.availability_channel(loc.tag)


def _what(tag: str) -> str:
    """How a log line names a tag: CF structure NAME, or the tag (group records, private queues)."""
    name = keys.structure_name(tag)
    return f"CF structure {name}" if name else tag

