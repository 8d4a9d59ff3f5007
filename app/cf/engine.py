"""The coupling-facility engine: shared (and private) queue state in Redis, one script per verb.

``CouplingFacility`` is the async API the queue manager calls for MQPUT, MQGET, MQCMIT, MQBACK,
MQOPEN/MQCLOSE counting and the queue administration that touches runtime state. Every call is
one Lua script (``app/cf/lua``), so every QM of the group sees each verb atomically; the scripts
return codes and ``mq_error`` is the one function that turns a code into an ``MQError``.
Redis connection failures become ``MQRC_CF_NOT_AVAILABLE`` in ``_cf_access`` (retry later;
``MQRC_CF_STRUC_FAILED`` is only for a structure that is FAILED); nothing is ever retried
automatically (a retried destructive MQGET could hand a message to nobody).

Fencing: every state-changing script is called as this queue manager's current incarnation
(``_script``) and refuses, in the same atomic step, an incarnation that peer recovery has
fenced (lua/_fence.lua). The engine also refuses to call at all once this process's own lease
has lapsed (``lease_valid``): a queue manager that could not renew its lease must not go on
committing in the hope that nobody recovered it. Either way the call ends with ``FencedError``
(MQRC_CONNECTION_BROKEN) and ``on_fenced`` tells the queue manager to rejoin.

Waiting getters do not poll: a get that finds nothing keeps the queue's ``waiters`` key alive
in Redis; puts and commits on a queue with that key PUBLISH its availability channel, and the
process's one ``AvailabilityListener`` (a pattern subscription) wakes the local waiters.

Time: message timestamps and statistics use the injected ``Clock`` (passed to the scripts);
wait intervals are measured on the event loop's monotonic clock.
"""

from __future__ import annotations

import asyncio
import json
import logging
import math
import re
from collections import Counter
from collections.abc import Awaitable, Callable, Iterator, Mapping, Sequence
from contextlib import contextmanager
from dataclasses import dataclass, field
from enum import StrEnum
from typing import Any, Protocol, TypeVar

import redis.exceptions as redis_errors
from redis.asyncio import Redis

from app.cf import keys
from app.cf.keys import QueueKeys, QueueLocation
from app.cf.scripts import ScriptRegistry
from app.core.clock import Clock
from app.core.errors import MQError
from app.core.reasons import MQRC, CompCode

log = logging.getLogger(__name__)
T = TypeVar("T")

#: Largest message data a z/OS CF structure holds without offload (63 KB).
OFFLOAD_THRESHOLD = 64512

#: ctl fields the engine owns: never settable through define_queue / alter_queue.
COUNTER_FIELDS = frozenset({"depth", "seq", "gen", "uncom", "ipprocs", "opprocs", "excl", "handles"})

#: Per-QM open count kinds in ``queue_status().opens``.
OPEN_KINDS = ("ipprocs", "opprocs", "excl", "browse", "inq", "set", "handles")

_HEX_ID = re.compile(r"[0-9A-Fa-f]{48}")
_ZERO_ID = "0" * 48

#: Bounded pipeline chunk for put_many.
_PUT_MANY_CHUNK = 1000


class GetMode(StrEnum):
    """What an MQGET does: destructive get, browse, or act on the browse cursor."""

    GET = "GET"
    BROWSE_FIRST = "BROWSE_FIRST"
    BROWSE_NEXT = "BROWSE_NEXT"
    MSG_UNDER_CURSOR = "MSG_UNDER_CURSOR"
    BROWSE_UNDER_CURSOR = "BROWSE_UNDER_CURSOR"


class Syncpoint(StrEnum):
    """Whether a destructive MQGET is inside the unit of work."""

    YES = "YES"
    NO = "NO"
    IF_PERSISTENT = "IF_PERSISTENT"


class InputMode(StrEnum):
    """MQOO_INPUT_SHARED / MQOO_INPUT_EXCLUSIVE (INPUT_AS_Q_DEF is resolved by the caller)."""

    SHARED = "SHARED"
    EXCLUSIVE = "EXCLUSIVE"


# ---- results ------------------------------------------------------------------------------


@dataclass(frozen=True)
class PutResult:
    """Outcome of an MQPUT.

    ``info`` (for events and triggers, no second round trip):
      ``depth_before``, ``depth_after``: CURDEPTH around the put (uncommitted puts count);
      ``available``: committed messages available to getters after the put;
      ``visible``: True when the message was committed now (not under syncpoint);
      ``first``: True when the queue went from empty (depth 0) to non-empty;
      ``ipprocs``, ``opprocs``: group-wide open-for-input / output counts;
      ``msg_seq``: the message's id in the queue.
    """

    msg_seq: int
    depth: int
    info: dict[str, Any]


@dataclass(frozen=True)
class GetResult:
    """Outcome of an MQGET or browse.

    ``md_json`` is the MQMD JSON as stored at put time: the caller patches ``backout_count``
    into it from ``backout_count``. ``cursor`` is the message's place (pass it back for
    BROWSE_NEXT / MSG_UNDER_CURSOR). ``truncated`` is MQRC_TRUNCATED_MSG_ACCEPTED (a warning).

    ``info``: ``depth_before``, ``depth_after``, ``available`` (committed available messages
    after), ``msg_seq``, ``browse`` (nothing removed), ``syncpoint`` (the get is in the unit of
    work), ``reason`` (0 or 2079).
    """

    md_json: bytes
    body: bytes
    data_length: int
    backout_count: int
    persistent: bool
    cursor: str
    depth: int
    truncated: bool
    info: dict[str, Any]
    expiry_at_ms: int = 0  # when the message expires (0 = never): md.expiry on get is what remains


@dataclass(frozen=True)
class PutRequest:
    """One message for ``put_many`` (same meaning as the keyword arguments of ``put``)."""

    qmgr: str
    hconn: str
    gen: int | None
    syncpoint: bool
    priority: int
    persistent: bool
    msg_id: str | None
    correl_id: str | None
    md_json: str | bytes
    body: bytes
    offload: bool | None = None
    expiry_at_ms: int = 0  # when the message expires (ms since the epoch); 0 = unlimited
    report: int = 0  # expiration report asked for: 0 none, 1, 2 (100 bytes of data), 3 (all data)
    report_qmgr: str = ""  # the queue manager an expiration report goes to ("" = the putter)


@dataclass(frozen=True)
class OpenResult:
    """Outcome of an open: the queue's definition generation and the group-wide counts after."""

    gen: int
    ipprocs: int
    opprocs: int
    reopened: bool


@dataclass(frozen=True)
class CloseResult:
    """Outcome of a close. ``closed`` False: the handle was not open (already closed)."""

    closed: bool
    queue: str | None = None
    ipprocs: int = 0
    opprocs: int = 0


@dataclass(frozen=True)
class UowQueueResult:
    """What a commit or backout did to one queue.

    commit: ``puts`` made visible, ``gets`` made final; backout: ``puts`` removed, ``gets``
    restored. ``depth`` and ``available`` are after the resolution.
    """

    queue: str
    puts: int
    gets: int
    depth: int
    available: int


@dataclass(frozen=True)
class QueueStatistics:
    """One QM's statistics of one queue (IBM's performance event / RESET QSTATS names in docs).

    ``enq`` MsgEnqCount, ``deq`` MsgDeqCount, ``hiq`` HighQDepth, ``last_put_ms`` /
    ``last_get_ms`` LPUTDATE/LGETDATE, ``reset_ms`` start of the interval (0 = never reset).
    """

    enq: int = 0
    deq: int = 0
    hiq: int = 0
    last_put_ms: int = 0
    last_get_ms: int = 0
    reset_ms: int = 0


@dataclass(frozen=True)
class QueueStatus:
    """A consistent snapshot of a queue's runtime state (DISPLAY QSTATUS, MQINQ).

    ``attributes``: every runtime attribute stored by define/alter (not the counters).
    ``opens``: QM -> {ipprocs, opprocs, excl, browse, inq, set, handles}, only QMs with opens.
    ``stats``: QM -> statistics. ``ipprocs``/``opprocs``: group-wide totals.
    ``available``: committed messages available to getters.
    """

    depth: int
    uncommitted: int
    gen: int
    available: int
    ipprocs: int
    opprocs: int
    attributes: dict[str, str]
    opens: dict[str, dict[str, int]] = field(default_factory=dict)
    stats: dict[str, QueueStatistics] = field(default_factory=dict)


class TruncatedMessageError(MQError):
    """MQRC_TRUNCATED_MSG_FAILED: the message is longer than the buffer and stays on the queue.

    Carries what IBM returns with it: the MQMD and the full data length. As IBM documents it,
    the completion code is MQCC_WARNING (the call did not complete, nothing was removed).
    """

    def __init__(self, message: str, *, md_json: bytes, data_length: int, backout_count: int,
                 persistent: bool, cursor: str) -> None:
        super().__init__(MQRC.TRUNCATED_MSG_FAILED, message, comp=CompCode.WARNING)
        self.md_json = md_json
        self.data_length = data_length
        self.backout_count = backout_count
        self.persistent = persistent
        self.cursor = cursor


class FencedError(MQError):
    """MQRC_CONNECTION_BROKEN: this incarnation of the queue manager lost its place in the group
    (its lease lapsed, or peer recovery fenced it); the call changed nothing."""

    def __init__(self, message: str) -> None:
        super().__init__(MQRC.CONNECTION_BROKEN, message)


#: What a fenced script returns (lua/_fence.lua).
FENCED = MQRC.CONNECTION_BROKEN


def _is_fenced(reply: Any) -> bool:
    return isinstance(reply, list) and len(reply) == 1 and reply[0] == FENCED


# ---- the one code -> MQError function -----------------------------------------------------

_TEXTS: dict[int, str] = {
    MQRC.UNKNOWN_OBJECT_NAME: "queue '{q}' is not defined",
    MQRC.Q_DELETED: "queue '{q}' was deleted",
    MQRC.OBJECT_CHANGED: "queue '{q}' was changed since it was opened",
    MQRC.PUT_INHIBITED: "puts are inhibited for queue '{q}'",
    MQRC.GET_INHIBITED: "gets are inhibited for queue '{q}'",
    MQRC.MSG_TOO_BIG_FOR_Q: "message is too big for queue '{q}'",
    MQRC.Q_FULL: "queue '{q}' is full",
    MQRC.NO_MSG_AVAILABLE: "no message available on queue '{q}'",
    MQRC.NO_MSG_UNDER_CURSOR: "no message under the browse cursor of queue '{q}'",
    MQRC.OBJECT_IN_USE: "queue '{q}' is in use",
    MQRC.Q_NOT_EMPTY: "queue '{q}' holds messages or uncommitted work",
    MQRC.HOBJ_ERROR: "object handle already records a different open of '{q}'",
    MQRC.TRUNCATED_MSG_FAILED: "message of {n} bytes does not fit the buffer (queue '{q}')",
}


def mq_error(code: int, loc: QueueLocation | None, *, reply: Sequence[Any] | None = None) -> MQError:
    """The ``MQError`` for a script's return code (the one place codes become exceptions).

    ``reply`` is the full script reply, used for MQRC_TRUNCATED_MSG_FAILED, which carries the
    MQMD and data length.
    """
    q = loc.name if loc else "?"
    if code == MQRC.TRUNCATED_MSG_FAILED and reply is not None:
        n = int(reply[3])
        return TruncatedMessageError(
            _TEXTS[code].format(q=q, n=n), md_json=bytes(reply[1]), data_length=n,
            backout_count=int(reply[4]), persistent=bool(reply[5]), cursor=_text(reply[6]))
    text = _TEXTS.get(code, "coupling facility returned reason {c} for queue '{q}'")
    return MQError(code, text.format(q=q, c=code, n=0))


def _check(reply: Sequence[Any], loc: QueueLocation | None, ok: tuple[int, ...] = (0,)) -> None:
    code = int(reply[0])
    if code not in ok:
        raise mq_error(code, loc, reply=reply)


@contextmanager
def _cf_access(tag: str) -> Iterator[None]:
    """Turn Redis connection failures inside the block into MQRC_CF_NOT_AVAILABLE: the coupling
    facility cannot be reached now (retry); its structures have not failed."""
    try:
        yield
    except (redis_errors.ConnectionError, redis_errors.TimeoutError, OSError) as exc:
        raise MQError(MQRC.CF_NOT_AVAILABLE, f"the coupling facility cannot be reached "
                                             f"(structure {tag}): {exc}") from exc


class PersistentLog(Protocol):
    """Where the engine reports committed persistent changes to recoverable structures
    (``app.qmgr.mqlog.MessageLog``): what RECOVER CFSTRUCT replays after a structure is lost."""

    def wanted(self, tag: str) -> bool: ...
    def put(self, tag: str, qmgr: str, hconn: str, syncpoint: bool, queue: str, ident: int,
            meta: str, md: bytes, data: bytes) -> None: ...
    def got(self, tag: str, qmgr: str, hconn: str, syncpoint: bool, queue: str, ident: int) -> None: ...
    def removed_all(self, tag: str, queue: str, upto: int, *, deleted: bool) -> None: ...
    def committed(self, qmgr: str, hconn: str, tag: str) -> None: ...
    def backed_out(self, qmgr: str, hconn: str, tag: str) -> None: ...
    async def force(self) -> None: ...


# ---- small helpers ------------------------------------------------------------------------


def _text(v: bytes | str | int) -> str:
    if isinstance(v, bytes):
        return v.decode()
    return str(v)


def _hex_id(value: str | None) -> str:
    """A msg_id / correl_id as the scripts index it: upper-case hex, "" for none (all zeros)."""
    if not value or value == _ZERO_ID:
        return ""
    if not _HEX_ID.fullmatch(value):
        raise ValueError(f"not a 48-hex-digit identifier: {value!r}")
    upper = value.upper()
    return "" if upper == _ZERO_ID else upper


def _cursor(value: str | None) -> str:
    """A browse cursor as the scripts compare it: the 16-digit zero-padded score, "" for none."""
    if not value:
        return ""
    if not value.isdigit():
        raise ValueError(f"not a browse cursor: {value!r}")
    return f"{int(value):016d}"


def _pairs(values: Mapping[str, str | int], what: str) -> list[str]:
    """Attribute mapping as flat name/value strings for HSET; counters are not attributes."""
    out: list[str] = []
    for name, value in values.items():
        if name.lstrip("?") in COUNTER_FIELDS:
            raise ValueError(f"{what}: '{name}' is a counter owned by the coupling facility")
        if isinstance(value, bool):
            raise ValueError(f"{what}: '{name}' must be a string or an integer, not a bool")
        out += [name, str(value)]
    return out


def _flat_to_dict(flat: Sequence[bytes]) -> dict[str, str]:
    return {_text(flat[i]): _text(flat[i + 1]) for i in range(0, len(flat), 2)}


def _open_flags(input: str | None, output: bool, browse: bool, inquire: bool, set_: bool) -> str:
    flags = ""
    if input is not None:
        flags += "X" if InputMode(input) is InputMode.EXCLUSIVE else "I"
    if output:
        flags += "O"
    if browse:
        flags += "B"
    if inquire:
        flags += "Q"
    if set_:
        flags += "S"
    return flags


# ---- availability listener ----------------------------------------------------------------


class AvailabilityListener:
    """One pattern subscription per process that wakes local waiting getters.

    Waiters register an ``asyncio.Event`` for their queue's channel BEFORE trying their get, so
    a publish that lands between the failed try and the wait still sets the event. The
    subscription reconnects by itself (short backoff) after a Redis failure and then wakes every
    waiter, since publishes during the outage were lost.
    """

    def __init__(self, redis: Redis, pattern: str, *, poll_s: float = 1.0,
                 backoff_min_s: float = 0.05, backoff_max_s: float = 1.0) -> None:
        self._redis = redis
        self._pattern = pattern
        self._poll_s = poll_s  # bounded reads, well under the client's socket timeout
        self._backoff_min_s = backoff_min_s
        self._backoff_max_s = backoff_max_s
        self._waiters: dict[str, set[asyncio.Event]] = {}
        self._parked: dict[str, int] = {}
        self._park_changed = asyncio.Event()
        self._subscribed = asyncio.Event()
        self._subscription_changed = asyncio.Event()
        self._task: asyncio.Task[None] | None = None
        #: Number of times the subscription was (re)established.
        self.subscriptions = 0
        #: Availability publishes received, per channel (observability and tests).
        self.received: Counter[str] = Counter()

    # -- waiter registry (called by the engine) --

    def watch(self, channel: str) -> asyncio.Event:
        """A new event set whenever ``channel`` is published (or all waiters are woken)."""
        event = asyncio.Event()
        self._waiters.setdefault(channel, set()).add(event)
        return event

    def unwatch(self, channel: str, event: asyncio.Event) -> None:
        events = self._waiters.get(channel)
        if events is not None:
            events.discard(event)
            if not events:
                del self._waiters[channel]

    def wake(self, channel: str) -> None:
        for event in self._waiters.get(channel, ()):
            event.set()

    def wake_all(self) -> None:
        for events in self._waiters.values():
            for event in events:
                event.set()

    def note_parked(self, channel: str, delta: int) -> None:
        """Book-keeping of getters blocked on ``channel`` (observability and tests)."""
        n = self._parked.get(channel, 0) + delta
        if n > 0:
            self._parked[channel] = n
        else:
            self._parked.pop(channel, None)
        changed, self._park_changed = self._park_changed, asyncio.Event()
        changed.set()

    def parked(self, channel: str) -> int:
        """Number of getters currently waiting on ``channel`` (after a failed try)."""
        return self._parked.get(channel, 0)

    async def wait_parked(self, channel: str, n: int = 1) -> None:
        """Return once at least ``n`` getters wait on ``channel``."""
        while self.parked(channel) < n:
            await self._park_changed.wait()

    # -- subscription --

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
        """Start the listener task; True when the subscription is up within the timeout (the
        task keeps trying in the background otherwise)."""
        if self._task is None or self._task.done():
            self._task = asyncio.create_task(self._run(), name=f"cf-listener {self._pattern}")
        try:
            await asyncio.wait_for(self._subscribed.wait(), ready_timeout_s)
        except TimeoutError:
            return False
        return True

    async def stop(self) -> None:
        task, self._task = self._task, None
        if task is not None:
            task.cancel()
            try:
                await task
            except asyncio.CancelledError:
                pass
        self._subscribed.clear()
        self.wake_all()

    async def _run(self) -> None:
        backoff = self._backoff_min_s
        while True:
            pubsub = self._redis.pubsub()
            try:
                await pubsub.psubscribe(self._pattern)
                while True:
                    msg = await pubsub.get_message(timeout=self._poll_s)
                    if msg is None:
                        continue
                    kind = msg["type"]
                    if kind == "pmessage":
                        channel = _text(msg["channel"])
                        self.received[channel] += 1
                        self.wake(channel)
                    elif kind == "psubscribe":
                        backoff = self._backoff_min_s
                        self.subscriptions += 1
                        self._subscribed.set()
                        self._signal_subscription()
                        # Anything published while we were not subscribed is lost: retry all.
                        self.wake_all()
            except asyncio.CancelledError:
                raise
            except (redis_errors.ConnectionError, redis_errors.TimeoutError, OSError) as exc:
                if self._subscribed.is_set():
                    log.warning("availability subscription lost: %s", exc)
                self._subscribed.clear()
                self._signal_subscription()
            except Exception:  # never let the listener die: waiters would only recheck slowly
                log.exception("availability listener failed")
                self._subscribed.clear()
                self._signal_subscription()
            finally:
                try:
                    await pubsub.aclose()
                except Exception:  # the connection is already broken
                    pass
            await asyncio.sleep(backoff)
            backoff = min(backoff * 2, self._backoff_max_s)


# ---- the engine ---------------------------------------------------------------------------


class CouplingFacility:
    """Async API over the coupling-facility scripts for one queue-sharing group.

    ``redis`` must be made by ``app.cf.redisconn.make_redis`` (RESP2, no retry, bytes).
    ``listener_redis``: client for the availability subscription (default: ``redis``; the
    listener only reads with bounded timeouts shorter than the socket timeout).
    ``recheck_s``: a waiting getter retries at least this often even without a wake-up.
    """

    def __init__(self, redis: Redis, qsg: str, clock: Clock, *,
                 listener_redis: Redis | None = None, recheck_s: float = 5.0) -> None:
        self.redis = redis
        self.qsg = qsg
        self.clock = clock
        self.scripts = ScriptRegistry(redis)
        self.listener = AvailabilityListener(listener_redis or redis, keys.availability_pattern(qsg))
        self.recheck_s = recheck_s
        # Called with a structure's tag when a call queued expiration reports there.
        self.on_reports: Callable[[str], None] | None = None
        # Called when a put/get/scan fired a performance event (the queue, its reason code).
        self.on_event: Callable[[QueueLocation, int], None] | None = None
        # Called when a get or browse discarded expired messages (the queue, how many).
        self.on_expired: Callable[[QueueLocation, int], None] | None = None
        # Whether this QM has PERFMEV(ENABLED): its private queues switch event flags only then.
        self.perfmev_enabled: Callable[[], bool] = lambda: False
        # The log of persistent changes to RECOVER(YES) structures (None: nothing is logged).
        self.log: PersistentLog | None = None
        # Tags of structures that failed or are being recovered: their queues answer 2373.
        self.failed: set[str] = set()
        # Called when a queue's state is missing: True when that is because its structure was
        # lost (now handled: failed, reallocated, rebuilt), so the call is worth one retry.
        self.structure_lost: Callable[[str], Awaitable[bool]] | None = None
        # Who calls the scripts: this queue manager and its incarnation (0 before it joined;
        # None while it has no valid incarnation, e.g. rejoining after its lease lapsed).
        self.qmgr = ""
        self.incarnation: int | None = 0
        # False once this process's heartbeat lease may have lapsed (membership keeps it).
        self.lease_valid: Callable[[], bool] = lambda: True
        # Called when a call found this incarnation fenced or its lease lapsed.
        self.on_fenced: Callable[[str], None] | None = None

    async def start(self) -> bool:
        """Start the availability listener; True when it is subscribed."""
        return await self.listener.start()

    async def stop(self) -> None:
        await self.listener.stop()

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
            status = await self.redis.hget(keys.structure_state(tag), "status")
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
        """This queue manager's incarnation, for a call about to start; raises ``FencedError``
        when it has none or its lease may have lapsed (it must not go on optimistically)."""
        incarnation = self.incarnation
        if incarnation is None or not self.lease_valid():
            self._fenced("its heartbeat lease lapsed")
        return incarnation

    def _fenced(self, why: str) -> Any:
        if self.on_fenced is not None:
            self.on_fenced(why)
        raise FencedError(f"queue manager {self.qmgr} lost its place in the group ({why}): "
                          f"the connection is broken")

    async def _script(self, name: str, tag: str, k: list[str], a: list[Any], incarnation: int,
                      *, tail: Sequence[Any] = (), client: Any = None) -> Any:
        """Call script ``name`` of structure ``tag`` as ``incarnation`` of this queue manager:
        the fence key follows ``k``, the caller follows ``a`` (then ``tail``, a script's
        variable part), as lua/_fence.lua describes."""
        if incarnation != self.incarnation or not self.lease_valid():
            self._fenced("its heartbeat lease lapsed")  # e.g. a get that waited across a rejoin
        script = getattr(self.scripts, name)
        args = [*k, keys.structure_fence(tag)], [*a, self.qmgr, str(incarnation), *tail]
        if client is not None:
            return await script(*args, client=client)
        with _cf_access(tag):
            reply = await script(*args)
        if _is_fenced(reply):
            self._fenced("peer recovery fenced its incarnation")
        return reply

    def _logs(self, tag: str, persistent: bool) -> bool:
        return persistent and self.log is not None and self.log.wanted(tag)

    def channel(self, loc: QueueLocation) -> str:
        """The queue's availability channel."""
        return keys.availability_channel(self.qsg, loc.tag, loc.name)

    # -- MQPUT --

    def _put_call(self, loc: QueueLocation, r: PutRequest) -> tuple[list[str], list[Any]]:
        if not 0 <= r.priority <= 9 or isinstance(r.priority, bool):
            raise MQError(MQRC.PRIORITY_ERROR, f"priority {r.priority} is not 0-9")
        qk = QueueKeys(loc)
        offload = "" if r.offload is None else ("1" if r.offload else "0")
        return (
            [qk.ctl, keys.uow_key(loc.tag, r.qmgr, r.hconn), keys.uow_registry(loc.tag),
             keys.expiry_queues(loc.tag)],
            [qk.queue_prefix, loc.name, r.qmgr, r.hconn, "" if r.gen is None else str(r.gen),
             "1" if r.syncpoint else "0", str(r.priority), "1" if r.persistent else "0",
             _hex_id(r.msg_id), _hex_id(r.correl_id), r.md_json, r.body,
             str(self.clock.now_ms()), self.channel(loc), offload, str(r.expiry_at_ms), str(r.report),
             r.report_qmgr or r.qmgr, self._perf(loc), keys.trigger_channel(self.qsg, loc.tag),
             "1" if self._logs(loc.tag, r.persistent) else "0"],
        )

    def _put_result(self, reply: Sequence[Any], loc: QueueLocation, r: PutRequest) -> PutResult:
        if int(reply[0]) == MQRC.Q_FULL and len(reply) > 1:
            self._fired(loc, reply[1])  # a Queue Full event fires with the refusal
        _check(reply, loc)
        (_, depth, seq, before, available, ipprocs, opprocs, visible, depth_event, service_event,
         trig_before, trig_after, meta) = reply
        self._fired(loc, depth_event, service_event)
        if meta and self.log is not None:
            md = r.md_json if isinstance(r.md_json, bytes) else r.md_json.encode()
            self.log.put(loc.tag, r.qmgr, r.hconn, r.syncpoint, loc.name, int(seq), _text(meta), md, r.body)
        return PutResult(
            msg_seq=int(seq), depth=int(depth),
            info={"depth_before": int(before), "depth_after": int(depth),
                  "available": int(available), "visible": bool(visible),
                  "first": int(before) == 0, "ipprocs": int(ipprocs), "opprocs": int(opprocs),
                  "msg_seq": int(seq), "events": [int(e) for e in (depth_event, service_event) if int(e)],
                  "trigger": (int(trig_before), int(trig_after))})

    async def put(self, loc: QueueLocation, *, qmgr: str, hconn: str, gen: int | None,
                  syncpoint: bool, priority: int, persistent: bool, msg_id: str | None,
                  correl_id: str | None, md_json: str | bytes, body: bytes,
                  offload: bool | None = None, expiry_at_ms: int = 0, report: int = 0,
                  report_qmgr: str = "") -> PutResult:
        """MQPUT one message (one script call).

        ``gen``: the definition generation the handle was opened with (MQRC_OBJECT_CHANGED if
        it changed, MQRC_Q_DELETED if the queue is gone); None for MQPUT1-style calls
        (MQRC_UNKNOWN_OBJECT_NAME if the queue is gone). ``priority``: 0-9, already resolved.
        ``msg_id``/``correl_id``: 48 hex digits (all zeros / None = none). ``offload``: None
        uses the queue's ``offload`` attribute; True/False overrides it. ``expiry_at_ms``: when
        the message expires (0 = never); ``report``/``report_qmgr``: the expiration report it
        asked for and the queue manager that report goes to.
        Raises MQError 2085/2052/2041/2051/2030/2053/2050.
        """
        r = PutRequest(qmgr, hconn, gen, syncpoint, priority, persistent, msg_id, correl_id,
                       md_json, body, offload, expiry_at_ms, report, report_qmgr)
        k, a = self._put_call(loc, r)
        incarnation = self.caller()
        await self.usable(loc.tag)

        async def call() -> PutResult:
            reply = await self._script("put", loc.tag, k, a, incarnation)
            return self._put_result(reply, loc, r)
        done = await self._once_more_if_lost(loc.tag, call)
        if self.log is not None and not syncpoint and self._logs(loc.tag, persistent):
            await self.log.force()
        return done

    async def put_many(self, loc: QueueLocation,
                       requests: Sequence[PutRequest]) -> list[PutResult | MQError]:
        """Many independent MQPUTs pipelined (bulk loading, benchmarks): each is its own script
        call with its own outcome (a PutResult or the MQError), in order; a put refused by the
        CF does not stop the others. Invalid arguments raise before anything is sent; a
        connection failure raises (earlier chunks are applied, nothing is retried)."""
        out: list[PutResult | MQError] = []
        incarnation = self.caller()
        await self.usable(loc.tag)
        for start in range(0, len(requests), _PUT_MANY_CHUNK):
            pipe = self.redis.pipeline(transaction=False)
            chunk = requests[start:start + _PUT_MANY_CHUNK]
            for r in chunk:
                k, a = self._put_call(loc, r)
                await self._script("put", loc.tag, k, a, incarnation, client=pipe)
            with _cf_access(loc.tag):
                replies = await pipe.execute(raise_on_error=True)
            for reply, r in zip(replies, chunk):
                if _is_fenced(reply):
                    self._fenced("peer recovery fenced its incarnation")
                try:
                    out.append(self._put_result(reply, loc, r))
                except MQError as exc:
                    out.append(exc)
        if self.log is not None:
            await self.log.force()
        return out

    # -- MQGET --

    async def get(self, loc: QueueLocation, *, qmgr: str, hconn: str, gen: int | None,
                  mode: GetMode | str = GetMode.GET, syncpoint: Syncpoint | str = Syncpoint.NO,
                  match_msg_id: str | None = None, match_correl_id: str | None = None,
                  cursor: str = "", buffer_length: int = -1, accept_truncated: bool = False,
                  wait_ms: int = 0, should_stop: Callable[[], bool] | None = None) -> GetResult:
        """MQGET or browse one message, optionally waiting for one.

        ``cursor``: the ``cursor`` of the last browsed message (BROWSE_NEXT, *_UNDER_CURSOR;
        the *_UNDER_CURSOR modes never wait).
        ``buffer_length``: -1 = unlimited. ``wait_ms``: 0 no wait; > 0 wait that long; -1 wait
        until a message comes or ``should_stop()`` is true (checked on every wake-up and at
        least every ``recheck_s``). A stopped or expired wait raises MQRC_NO_MSG_AVAILABLE.
        Raises MQError 2085/2052/2041/2016/2033/2034, ``TruncatedMessageError`` (2080, the
        message stays); a truncated message accepted is a result with ``truncated=True``.
        """
        incarnation = self.caller()
        await self.usable(loc.tag)
        result = await self._once_more_if_lost(loc.tag, lambda: self._get(
            loc, incarnation, qmgr=qmgr, hconn=hconn, gen=gen, mode=GetMode(mode), syncpoint=Syncpoint(syncpoint),
            match_msg_id=match_msg_id, match_correl_id=match_correl_id, cursor=cursor,
            buffer_length=buffer_length, accept_truncated=accept_truncated, wait_ms=wait_ms,
            should_stop=should_stop))
        if not result.info["browse"] and self._logs(loc.tag, result.persistent):
            assert self.log is not None
            self.log.got(loc.tag, qmgr, hconn, result.info["syncpoint"], loc.name, result.info["msg_seq"])
            if not result.info["syncpoint"]:
                await self.log.force()
        return result

    async def _get(self, loc: QueueLocation, incarnation: int, *, qmgr: str, hconn: str, gen: int | None, mode: GetMode,
                   syncpoint: Syncpoint, match_msg_id: str | None, match_correl_id: str | None,
                   cursor: str, buffer_length: int, accept_truncated: bool, wait_ms: int,
                   should_stop: Callable[[], bool] | None) -> GetResult:
        sp = syncpoint
        qk = QueueKeys(loc)
        k = [qk.ctl, keys.uow_key(loc.tag, qmgr, hconn), keys.uow_registry(loc.tag)]
        a: list[Any] = [qk.queue_prefix, loc.name, qmgr, hconn, "" if gen is None else str(gen),
                        mode.value, sp.value, _hex_id(match_msg_id), _hex_id(match_correl_id),
                        _cursor(cursor), str(buffer_length), "1" if accept_truncated else "0",
                        str(self.clock.now_ms()), "0", keys.structure_prefix(loc.tag), self._perf(loc)]
        if wait_ms == 0 or mode in (GetMode.MSG_UNDER_CURSOR, GetMode.BROWSE_UNDER_CURSOR):
            return await self._get_once(loc, k, a, incarnation)

        loop = asyncio.get_running_loop()
        deadline = None if wait_ms < 0 else loop.time() + wait_ms / 1000
        channel = self.channel(loc)
        # Registered before the first try: a publish after the try but before the wait is kept.
        woken = self.listener.watch(channel)
        try:
            while True:
                woken.clear()
                if deadline is None:
                    register_ms = int(self.recheck_s * 2000) + 1000
                else:
                    register_ms = max(0, math.ceil((deadline - loop.time()) * 1000))
                a[12] = str(self.clock.now_ms())
                a[13] = str(register_ms)
                try:
                    return await self._get_once(loc, k, a, incarnation)
                except MQError as exc:
                    if exc.reason != MQRC.NO_MSG_AVAILABLE:
                        raise
                    no_message = exc
                if should_stop is not None and should_stop():
                    raise no_message
                timeout = self.recheck_s
                if deadline is not None:
                    remaining = deadline - loop.time()
                    if remaining <= 0:
                        raise no_message
                    timeout = min(timeout, remaining)
                self.listener.note_parked(channel, 1)
                try:
                    await asyncio.wait_for(woken.wait(), timeout)
                except TimeoutError:
                    pass
                finally:
                    self.listener.note_parked(channel, -1)
        finally:
            self.listener.unwatch(channel, woken)

    async def _get_once(self, loc: QueueLocation, k: list[str], a: list[Any], incarnation: int) -> GetResult:
        while True:
            reply = await self._script("get", loc.tag, k, a, incarnation)
            code = int(reply[0])
            if code in (-1, MQRC.NO_MSG_AVAILABLE, MQRC.NO_MSG_UNDER_CURSOR):
                self._reports_queued(loc.tag, int(reply[1]))
                self._fired(loc, reply[2])
                self._discarded(loc, int(reply[3]))
                if code == -1:
                    continue  # a batch of expired messages was discarded: look again
            elif code in (0, MQRC.TRUNCATED_MSG_ACCEPTED, MQRC.TRUNCATED_MSG_FAILED):
                self._reports_queued(loc.tag, int(reply[13]))
                self._fired(loc, reply[14], reply[15])
                self._discarded(loc, int(reply[16]))
            _check(reply, loc, ok=(0, MQRC.TRUNCATED_MSG_ACCEPTED))
            break
        code, md, data, length, bo, pers, cursor, depth, before, available, seq, sync, exp = reply[:13]
        browse = a[5] not in (GetMode.GET.value, GetMode.MSG_UNDER_CURSOR.value)
        return GetResult(
            md_json=bytes(md), body=bytes(data), data_length=int(length),
            backout_count=int(bo), persistent=bool(pers), cursor=_text(cursor), depth=int(depth),
            truncated=int(code) == MQRC.TRUNCATED_MSG_ACCEPTED, expiry_at_ms=int(exp),
            info={"depth_before": int(before), "depth_after": int(depth),
                  "available": int(available), "msg_seq": int(seq), "browse": browse,
                  "syncpoint": bool(sync), "reason": int(code)})

    def _discarded(self, loc: QueueLocation, n: int) -> None:
        if n and self.on_expired is not None:
            self.on_expired(loc, n)

    def _reports_queued(self, tag: str, n: int) -> None:
        if n and self.on_reports is not None:
            self.on_reports(tag)

    # -- expiry --

    async def expiry_candidates(self, tag: str) -> list[str]:
        """Queues of a structure worth an expiry scan now: some message's expiry has passed."""
        with _cf_access(tag):
            names = await self.redis.zrangebyscore(keys.expiry_queues(tag), "-inf", self.clock.now_ms())
        return [_text(n) for n in names]

    async def scan_expired(self, loc: QueueLocation, qmgr: str) -> int:
        """Discard a queue's expired messages (EXPRYINT scan, REFRESH QMGR TYPE(EXPIRY)); returns
        how many. Their expiration reports are queued for sending."""
        qk = QueueKeys(loc)
        total = 0
        incarnation = self.caller()
        while True:
            n, reports, more, depth_event = await self._script(
                "scan", loc.tag, [qk.ctl, keys.expiry_queues(loc.tag)],
                [qk.queue_prefix, loc.name, qmgr, str(self.clock.now_ms()), keys.structure_prefix(loc.tag),
                 self._perf(loc)], incarnation)
            total += int(n)
            self._reports_queued(loc.tag, int(reports))
            self._fired(loc, depth_event)
            if not int(more):
                return total

    async def take_report(self, tag: str, addressee: str) -> bytes | None:
        """The next expiration report addressed to ``addressee`` (this QM or its QSG) that this QM
        is to send from structure ``tag`` (see lua/take_report.lua), or None; pass it to
        ``report_sent`` once it was put."""
        reply = await self._script(
            "take_report", tag, [keys.expiration_reports(tag, addressee),
                                 keys.expiration_reports_sending(tag, addressee, self.qmgr)], [], self.caller())
        return bytes(reply[1]) if len(reply) > 1 else None

    async def report_sent(self, tag: str, addressee: str, report: bytes) -> None:
        """The report ``take_report`` gave was put (or dead-lettered, or discarded)."""
        with _cf_access(tag):
            await self.redis.lrem(keys.expiration_reports_sending(tag, addressee, self.qmgr), 1, report)

    async def requeue_reports(self, tag: str, qmgr: str, addressees: Sequence[str]) -> int:
        """Peer recovery: the reports ``qmgr`` was sending from ``tag`` go back to the front of
        their queues, for whoever sends them next. Returns how many."""
        moved = 0
        with _cf_access(tag):
            for addressee in addressees:
                sending = keys.expiration_reports_sending(tag, addressee, qmgr)
                while await self.redis.lmove(sending, keys.expiration_reports(tag, addressee), "RIGHT", "LEFT"):
                    moved += 1
        return moved

    # -- units of work --

    async def _resolve(self, script_name: str, tag: str, qmgr: str, hconn: str) -> list[UowQueueResult]:
        reply = await self._script(
            script_name, tag, [keys.uow_key(tag, qmgr, hconn), keys.uow_registry(tag)],
            [keys.structure_prefix(tag), f"{qmgr}:{hconn}",
             keys.availability_channel_prefix(self.qsg, tag), keys.trigger_channel(self.qsg, tag)],
            self.caller())
        return [UowQueueResult(queue=e["queue"], puts=int(e["puts"]), gets=int(e["gets"]),
                               depth=int(e["depth"]), available=int(e["available"]))
                for e in json.loads(reply)]

    async def commit(self, tag: str, qmgr: str, hconn: str) -> list[UowQueueResult]:
        """MQCMIT of the connection's work in structure ``tag`` (atomic, idempotent)."""
        done = await self._resolve("commit", tag, qmgr, hconn)
        if self.log is not None:
            self.log.committed(qmgr, hconn, tag)
            await self.log.force()
        return done

    async def backout(self, tag: str, qmgr: str, hconn: str) -> list[UowQueueResult]:
        """MQBACK of the connection's work in structure ``tag`` (atomic, idempotent); a peer
        uses it for a failed QM's units of work listed by ``units_of_work``."""
        done = await self._resolve("backout", tag, qmgr, hconn)
        if self.log is not None:
            self.log.backed_out(qmgr, hconn, tag)
        return done

    async def units_of_work(self, tag: str) -> list[tuple[str, str]]:
        """(qmgr, hconn) of every unit of work in progress in structure ``tag``."""
        with _cf_access(tag):
            members = await self.redis.smembers(keys.uow_registry(tag))
        out = []
        for m in members:
            qmgr, _, hconn = _text(m).partition(":")
            out.append((qmgr, hconn))
        return sorted(out)

    # -- opens --

    async def open_queue(self, loc: QueueLocation, qmgr: str, hobj: str, *,
                         input: InputMode | str | None = None, output: bool = False,
                         browse: bool = False, inquire: bool = False, set: bool = False,
                         gen_expected: int | None = None) -> OpenResult:
        """Count an MQOPEN in the structure, enforcing input exclusivity across the group.

        Raises MQRC_OBJECT_IN_USE (EXCLUSIVE while anyone has it open for input, SHARED while
        anyone has it EXCLUSIVE), MQRC_UNKNOWN_OBJECT_NAME (no state), MQRC_OBJECT_CHANGED
        (``gen_expected`` given and different: the caller's definition is stale),
        MQRC_HOBJ_ERROR (``hobj`` already records another open). Opening the same hobj again
        with the same options is a no-op (``reopened``).
        """
        flags = _open_flags(input, output, browse, inquire, set)
        incarnation = self.caller()
        await self.usable(loc.tag)

        async def call() -> OpenResult:
            reply = await self._script(
                "open", loc.tag, [QueueKeys(loc).ctl, keys.structure_handles(loc.tag, qmgr)],
                [keys.structure_prefix(loc.tag), loc.name, qmgr, hobj, flags,
                 "" if gen_expected is None else str(gen_expected)], incarnation)
            _check(reply, loc)
            return OpenResult(gen=int(reply[1]), ipprocs=int(reply[2]), opprocs=int(reply[3]),
                              reopened=bool(reply[4]))
        return await self._once_more_if_lost(loc.tag, call)

    async def close_queue(self, loc: QueueLocation, qmgr: str, hobj: str) -> CloseResult:
        """Undo an open's counts (idempotent: an unknown hobj is a no-op)."""
        reply = await self._script("close", loc.tag, [keys.structure_handles(loc.tag, qmgr)],
                                   [keys.structure_prefix(loc.tag), qmgr, hobj], self.caller())
        if not int(reply[0]):
            return CloseResult(closed=False)
        return CloseResult(closed=True, queue=_text(reply[1]), ipprocs=int(reply[3]),
                           opprocs=int(reply[4]))

    async def clear_opens(self, tag: str, qmgr: str) -> int:
        """Peer recovery: drop every open handle of ``qmgr`` in structure ``tag``; returns how many."""
        return int(await self._script("clear_opens", tag, [keys.structure_handles(tag, qmgr)],
                                      [keys.structure_prefix(tag), qmgr], self.caller()))

    # -- administration --

    async def define_queue(self, loc: QueueLocation, runtime: Mapping[str, str | int]) -> int:
        """Create or replace a queue's runtime attributes (PUT, GET, MAXDEPTH, MAXMSGL,
        MSGDLVSQ, DEFPRTY, USAGE, OFFLOAD, ... every field given is stored); counters and
        messages of an existing queue are kept. Returns the definition generation."""
        qk = QueueKeys(loc)
        reply = await self._script(
            "define", loc.tag, [qk.ctl, keys.structure_queues(loc.tag), keys.structure_generations(loc.tag),
                                keys.structure_last_ids(loc.tag)],
            [qk.queue_prefix, loc.name, self.channel(loc)], self.caller(), tail=_pairs(runtime, "define"))
        return int(reply[0])

    async def alter_queue(self, loc: QueueLocation, changes: Mapping[str, str | int], *,
                          bump_gen: bool = False) -> int:
        """Set runtime attributes; with ``bump_gen`` open handles become stale
        (MQRC_OBJECT_CHANGED). Returns the generation. MQRC_UNKNOWN_OBJECT_NAME if no state."""
        qk = QueueKeys(loc)
        reply = await self._script("alter", loc.tag, [qk.ctl],
                                   [qk.queue_prefix, "1" if bump_gen else "0", self.channel(loc)], self.caller(),
                                   tail=_pairs(changes, "alter"))
        _check(reply, loc)
        return int(reply[1])

    async def delete_queue(self, loc: QueueLocation, *, purge: bool = False) -> int:
        """Remove a queue's state. MQRC_OBJECT_IN_USE if open anywhere, MQRC_Q_NOT_EMPTY if
        it has messages (unless ``purge``) or uncommitted work. Returns messages purged."""
        qk = QueueKeys(loc)
        await self.usable(loc.tag)
        reply = await self._script(
            "delete", loc.tag, [qk.ctl, keys.structure_queues(loc.tag), keys.structure_generations(loc.tag),
                                keys.structure_last_ids(loc.tag)],
            [qk.queue_prefix, loc.name, "1" if purge else "0", self.channel(loc)], self.caller())
        _check(reply, loc)
        if self.log is not None and self.log.wanted(loc.tag):
            self.log.removed_all(loc.tag, loc.name, int(reply[2]), deleted=True)
            await self.log.force()
        return int(reply[1])

    async def clear_queue(self, loc: QueueLocation) -> int:
        """CLEAR QLOCAL. MQRC_OBJECT_IN_USE if open anywhere, MQRC_Q_NOT_EMPTY if uncommitted
        work exists. Returns the number of messages removed."""
        qk = QueueKeys(loc)
        await self.usable(loc.tag)
        reply = await self._script("clear", loc.tag, [qk.ctl], [qk.queue_prefix], self.caller())
        _check(reply, loc)
        if self.log is not None and self.log.wanted(loc.tag):
            self.log.removed_all(loc.tag, loc.name, int(reply[2]), deleted=False)
            await self.log.force()
        return int(reply[1])

    async def queue_status(self, loc: QueueLocation) -> QueueStatus:
        """Snapshot for DISPLAY QSTATUS / MQINQ. MQRC_UNKNOWN_OBJECT_NAME if no state."""
        await self.usable(loc.tag)
        qk = QueueKeys(loc)
        with _cf_access(loc.tag):
            reply = await self.scripts.status([qk.ctl, qk.opens, qk.stats], [qk.queue_prefix])
        _check(reply, loc)
        ctl = _flat_to_dict(reply[1])
        opens: dict[str, dict[str, int]] = {}
        for name, value in _flat_to_dict(reply[2]).items():
            qmgr, _, kind = name.partition(":")
            opens.setdefault(qmgr, dict.fromkeys(OPEN_KINDS, 0))[kind] = int(value)
        raw_stats: dict[str, dict[str, int]] = {}
        for name, value in _flat_to_dict(reply[3]).items():
            qmgr, _, stat = name.partition(":")
            raw_stats.setdefault(qmgr, {})[stat] = int(value)
        return QueueStatus(
            depth=int(ctl.get("depth", 0)), uncommitted=int(ctl.get("uncom", 0)),
            gen=int(ctl["gen"]), available=int(reply[4]), ipprocs=int(ctl.get("ipprocs", 0)),
            opprocs=int(ctl.get("opprocs", 0)),
            attributes={k: v for k, v in ctl.items() if k not in COUNTER_FIELDS},
            opens=opens,
            stats={qm: QueueStatistics(enq=s.get("enq", 0), deq=s.get("deq", 0),
                                       hiq=s.get("hiq", 0), last_put_ms=s.get("lastput", 0),
                                       last_get_ms=s.get("lastget", 0),
                                       reset_ms=s.get("reset", 0))
                   for qm, s in raw_stats.items()})

    async def trigger_count(self, loc: QueueLocation, trigmpri: int) -> int:
        """Messages that count for triggering now: priority >= ``trigmpri``; committed ones on a
        shared queue, committed and uncommitted ones on a private queue (docs/ibm-rules.md §3.1)."""
        qk = QueueKeys(loc)
        hi = f"({(10 - trigmpri) * 2 ** 49}"
        with _cf_access(loc.tag):
            n = int(await self.redis.zcount(qk.index, "-inf", hi))
            if ".CF." not in loc.tag:
                n += int(await self.redis.zcount(f"{qk.queue_prefix}pend", "-inf", hi))
        return n

    async def queue_depth(self, loc: QueueLocation) -> int:
        """CURDEPTH. MQRC_UNKNOWN_OBJECT_NAME if the queue has no state."""
        with _cf_access(loc.tag):
            depth = await self.redis.hget(QueueKeys(loc).ctl, "depth")
        if depth is None:
            raise mq_error(MQRC.UNKNOWN_OBJECT_NAME, loc)
        return int(depth)

    async def queue_names(self, tag: str) -> set[str]:
        """Names of the queues with state in structure ``tag``."""
        with _cf_access(tag):
            return {_text(m) for m in await self.redis.smembers(keys.structure_queues(tag))}

    # ---- group-wide bookkeeping outside the put/get path ----------------------------------

    async def record_commit_intent(self, qmgr: str, hconn: str, tags: Sequence[str]) -> None:
        """Before committing a unit of work that spans several structures, record them so a
        peer can finish (roll forward) a commit the QM did not complete."""
        incarnation = self.caller()
        with _cf_access(self.qsg):
            reply = await self.scripts.intent([keys.commit_intent_key(self.qsg, qmgr, hconn), keys.group_fence(self.qsg)],
                                              [json.dumps(list(tags)), self.qmgr, str(incarnation)])
        if _is_fenced(reply):
            self._fenced("peer recovery fenced its incarnation")

    async def fence(self, tag: str | None, qmgr: str, lowest: int) -> None:
        """Peer recovery: fence every incarnation of ``qmgr`` below ``lowest`` in structure
        ``tag`` (None: the group's own records), before resolving anything of it there."""
        fence_key = keys.group_fence(self.qsg) if tag is None else keys.structure_fence(tag)
        with _cf_access(tag or self.qsg):
            await self.scripts.fence([fence_key], [qmgr, str(lowest)])

    async def clear_commit_intent(self, qmgr: str, hconn: str) -> None:
        with _cf_access(keys.group_prefix(self.qsg)):
            await self.redis.delete(keys.commit_intent_key(self.qsg, qmgr, hconn))

    async def alias_opened(self, qmgr: str, alias: str, hobj: str) -> None:
        """Record a handle opened through an alias queue (aliases are never shared: the QM's tag)."""
        with _cf_access(keys.private_tag(self.qsg, qmgr)):
            await self.redis.sadd(keys.alias_handles_key(self.qsg, qmgr, alias), hobj)

    async def alias_closed(self, qmgr: str, alias: str, hobj: str) -> None:
        with _cf_access(keys.private_tag(self.qsg, qmgr)):
            await self.redis.srem(keys.alias_handles_key(self.qsg, qmgr, alias), hobj)

    async def alias_handle_count(self, qmgr: str, alias: str) -> int:
        """How many handles ``qmgr`` has open through ``alias``."""
        with _cf_access(keys.private_tag(self.qsg, qmgr)):
            return int(await self.redis.scard(keys.alias_handles_key(self.qsg, qmgr, alias)))

    async def reset_stats(self, loc: QueueLocation, qmgr: str) -> QueueStatistics:
        """RESET QSTATS for ``qmgr``: the statistics of the interval that ends now
        (``reset_ms`` = when it started, 0 if never reset); a new interval starts with
        MsgEnqCount/MsgDeqCount 0 and HighQDepth = current depth."""
        qk = QueueKeys(loc)
        reply = await self._script("reset_stats", loc.tag, [qk.ctl, qk.stats], [qmgr, str(self.clock.now_ms())],
                                   self.caller())
        _check(reply, loc)
        return QueueStatistics(enq=int(reply[1]), deq=int(reply[2]), hiq=int(reply[3]),
                               reset_ms=int(reply[4]))

    # -- structure state, backup and recovery (BACKUP / RECOVER / RESET CFSTRUCT) --

    async def structure_state(self, tag: str, action: str, *args: str) -> StructureState:
        """Read or change a structure's state (struct.lua: CHECK, FAIL, RECOVER, ACTIVE)."""
        with _cf_access(tag):
            reply = await self.scripts.struct([keys.structure_state(tag)], [action, *args])
        status, alloc, failtime, outcome, by = (_text(v) for v in reply)
        return StructureState(status=status, alloc=alloc, fail_ms=int(failtime or 0), outcome=outcome, by=by)

    async def empty_structure(self, tag: str) -> int:
        """Delete every key of a structure except its state (a failed structure's contents are
        gone; RESET CFSTRUCT ACTION(FAIL) and recovery start from nothing). Returns how many."""
        keep = keys.structure_state(tag).encode()
        removed = 0
        with _cf_access(tag):
            async for batch in _batched(self.redis.scan_iter(match=keys.structure_prefix(tag) + "*", count=1000)):
                doomed = [k for k in batch if k != keep]
                if doomed:
                    removed += await self.redis.unlink(*doomed)
        return removed

    async def backup_chunk(self, loc: QueueLocation, cursor: str, before_ms: int,
                           count: int = 500) -> tuple[str, list[tuple[int, str, bytes, bytes]]]:
        """One chunk of a queue's committed persistent messages put before ``before_ms``:
        (next cursor, "0" at the end; [(id, meta, MQMD JSON, data)])."""
        with _cf_access(loc.tag):
            reply = await self.scripts.backup(
                [keys.uow_registry(loc.tag)],
                [QueueKeys(loc).queue_prefix, loc.name, keys.structure_prefix(loc.tag), cursor,
                 str(count), str(before_ms)])
        items = reply[1:]
        return _text(reply[0]), [(int(items[i]), _text(items[i + 1]), bytes(items[i + 2]), bytes(items[i + 3]))
                                 for i in range(0, len(items), 4)]

    async def restore_messages(self, loc: QueueLocation, last_id: int,
                               messages: Sequence[tuple[int, str, bytes, bytes]]) -> int:
        """Put recovered messages (id, meta, MQMD JSON, data) back on a defined queue, committed;
        its message ids continue after ``last_id``. Returns how many were restored."""
        flat: list[Any] = []
        for ident, meta, md, data in messages:
            flat += [str(ident), meta, md, data]
        with _cf_access(loc.tag):
            reply = await self.scripts.restore([QueueKeys(loc).ctl, keys.expiry_queues(loc.tag)],
                                               [QueueKeys(loc).queue_prefix, loc.name, str(last_id), *flat])
        _check(reply, loc)
        return int(reply[1])

    async def remember_last_id(self, tag: str, queue: str, last_id: int) -> None:
        """A queue recovery saw in the logs that is not defined now: a later DEFINE continues
        its message ids after ``last_id``."""
        with _cf_access(tag):
            current = int(await self.redis.hget(keys.structure_last_ids(tag), queue) or 0)
            if last_id > current:
                await self.redis.hset(keys.structure_last_ids(tag), queue, last_id)


@dataclass(frozen=True)
class StructureState:
    """A CF structure's state in Redis (see struct.lua)."""

    status: str
    alloc: str
    fail_ms: int
    outcome: str
    by: str


async def _batched(it: Any, size: int = 500) -> Any:
    batch: list[bytes] = []
    async for item in it:
        batch.append(item)
        if len(batch) >= size:
            yield batch
            batch = []
    if batch:
        yield batch


__all__ = [
    "AvailabilityListener", "CloseResult", "CouplingFacility", "FencedError", "GetMode",
    "GetResult", "InputMode", "OFFLOAD_THRESHOLD", "OpenResult", "PutRequest", "PutResult",
    "QueueStatistics", "QueueStatus", "StructureState", "Syncpoint", "TruncatedMessageError", "UowQueueResult",
    "mq_error",
]
