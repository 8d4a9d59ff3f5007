"""The coupling facility's result and request types (what the engine's calls return or take)."""

from __future__ import annotations

from dataclasses import dataclass, field
from enum import StrEnum

from app.core.errors import MQError

#: Largest message data a z/OS CF structure holds without offload (63 KB).
OFFLOAD_THRESHOLD = 64512

#: ctl fields the engine owns: never settable through define_queue / alter_queue.
COUNTER_FIELDS = frozenset({"depth", "seq", "gen", "uncom", "ipprocs", "opprocs", "excl", "handles"})

#: Per-QM open count kinds in ``queue_status().opens``.
OPEN_KINDS = ("ipprocs", "opprocs", "excl", "browse", "inq", "set", "handles")


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


@dataclass(slots=True)
class PutResult:
    """Outcome of an MQPUT (for events and triggers, no second round trip).

    ``msg_seq``: the message's id in the queue; ``depth_before`` and ``depth``: CURDEPTH before
    and after the put (uncommitted puts count); ``available``: committed messages available to
    getters after the put; ``visible``: True when the message was committed now (not under
    syncpoint); ``ipprocs``, ``opprocs``: group-wide open-for-input / output counts;
    ``events``: the reasons of the performance events the put fired; ``trigger``: the trigger
    counts (before, after) the put changed, (-1, -1) when it does not count.

    ``PutResult`` and ``GetResult`` are built on every MQPUT / MQGET: slotted dataclasses, not
    frozen ones (a frozen dataclass's ``__init__`` sets each field through ``object.__setattr__``);
    treat them as immutable.
    """

    msg_seq: int
    depth: int
    depth_before: int
    available: int
    visible: bool
    ipprocs: int
    opprocs: int
    events: tuple[int, ...]
    trigger: tuple[int, int]


@dataclass(slots=True)
class GetResult:
    """Outcome of an MQGET or browse.

    ``md_json`` is the MQMD JSON as stored at put time: the caller patches ``backout_count``
    into it from ``backout_count``. ``cursor`` is the message's place (pass it back for
    BROWSE_NEXT / MSG_UNDER_CURSOR). ``truncated`` is MQRC_TRUNCATED_MSG_ACCEPTED (a warning).

    ``depth_before`` and ``depth``: CURDEPTH before and after the get; ``available``:
    committed available messages after; ``msg_seq``: the message's id; ``browse``: nothing was
    removed; ``syncpoint``: the get is in the unit of work; ``reason``: 0 or 2079.
    """

    md_json: bytes
    body: bytes
    data_length: int
    backout_count: int
    persistent: bool
    cursor: str
    depth: int
    truncated: bool
    depth_before: int
    available: int
    msg_seq: int
    browse: bool
    syncpoint: bool
    reason: int
    expiry_at_ms: int = 0  # when the message expires (0 = never): md.expiry on get is what remains


@dataclass(slots=True)
class BatchMessage:
    """One message of ``put`` or ``put_batch`` (the keyword arguments of ``put`` that are the
    message's; the queue manager, connection, handle generation and syncpoint are the call's). Made for
    every message of a batch: slotted, not frozen (see ``PutResult``); treat it as immutable."""

    priority: int
    persistent: bool
    msg_id: str | None
    correl_id: str | None
    md_json: str | bytes
    body: bytes
    expiry_at_ms: int = 0
    report: int = 0
    report_qmgr: str = ""
    group: str = ""  # group index entry (lua/_helpers.lua "grp"), "" in no group and no segment


@dataclass(frozen=True, slots=True)
class PutBatchResult:
    """Outcome of ``put_batch``: one ``PutResult`` per message put, in order, and the error that
    stopped the batch at the next message (None: every message was put)."""

    puts: list[PutResult]
    error: MQError | None = None


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
    reports: int = 0  # COA / COD reports the commit queued (app/core/reports.py)


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



@dataclass(frozen=True)
class StructureState:
    """A CF structure's state in Redis (see struct.lua)."""

    status: str
    alloc: str
    fail_ms: int
    outcome: str
    by: str
