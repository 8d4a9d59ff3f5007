"""One named type per coupling-facility script: its REPLY, as its header's ``Output`` documents it.

Each ``<Name>Reply`` class (``put.lua`` -> ``PutReply``, ``clear_opens.lua`` -> ``ClearOpensReply``)
has a ``parse(raw)`` classmethod that turns the raw RESP2 reply (lists of ``bytes`` / ``int``,
an ``int``, or a JSON string) into named fields, including every failure shape the header
documents: a failure leaves the fields it does not carry at their defaults, and ``code`` says
which shape it was. Turning a code into an ``MQError`` stays in ``app.cf.errors``.

What a class declares about its header (``tests/test_cf_scripts.py`` checks it):

* ``SHAPE``: the names of the elements of the *longest* list shape of the Output section (the
  success shape), in order; a literal element (``0``) may have any name, a named one has the
  header's name. ``None``: the reply is a scalar (an integer, or JSON: see ``JSON_KEYS``).
  ``@reply`` derives it from the class's fields (the header's names are the fields' names), as
  ``scriptargs.script`` derives KEYS and ARGV.
* ``REPEAT``: for a shape ending with ``...``, the names of the group that repeats after
  ``SHAPE`` (``backup.lua``).
* ``JSON_KEYS``: for a JSON reply, the keys of its objects, in the header's order.

Parsing is cheap on the MQPUT/MQGET path: slotted dataclasses, not frozen ones (a frozen
dataclass's ``__init__`` sets each field through ``object.__setattr__``), no validation; one
length test picks the shape. Treat them as immutable.
"""

from __future__ import annotations

import json
from collections.abc import Callable
from dataclasses import dataclass, field, fields
from typing import Any, ClassVar, TypeVar

from app.cf.codec import flat_to_dict
from app.cf.codec import text as _text
from app.cf.results import GetResult, PutResult, UowQueueResult
from app.core.reasons import MQRC

R = TypeVar("R", bound="ScriptReply")

#: Every script's reply type, by script name (file ``lua/<name>.lua``).
SCRIPT_REPLIES: dict[str, type[ScriptReply]] = {}


class ScriptReply:
    """What every script's reply type has (see the module's docstring)."""

    SCRIPT: ClassVar[str]
    SHAPE: ClassVar[tuple[str, ...] | None] = None
    REPEAT: ClassVar[tuple[str, ...]] = ()
    JSON_KEYS: ClassVar[tuple[str, ...]] = ()

    @classmethod
    def parse(cls, raw: Any) -> ScriptReply:
        raise NotImplementedError


def reply(script: str, *, shape: bool = True, extra: int = 0) -> Callable[[type[R]], type[R]]:
    """Register a dataclass as the reply type of ``lua/<script>.lua``. Its ``SHAPE`` is the names of
    its fields but the last ``extra`` (which a failure shape or the repeated groups fill), so each
    name is written once; ``shape=False``: a scalar or JSON reply (``SHAPE`` None). A class whose
    fields are named otherwise than the header's elements sets ``SHAPE`` itself."""
    def register(cls: type[R]) -> type[R]:
        cls.SCRIPT = script
        if "SHAPE" not in cls.__dict__:
            names = tuple(f.name for f in fields(cls))  # type: ignore[arg-type]
            cls.SHAPE = names[:len(names) - extra] if shape else None
        SCRIPT_REPLIES[script] = cls
        return cls
    return register


# ---- the hot path: put, get, open, close --------------------------------------------------


@reply("put", extra=1)
@dataclass(slots=True)
class PutReply(ScriptReply):
    """lua/put.lua: ``{code}``, ``{2053, full_event}`` or the success shape (``code`` 0)."""


    code: int
    depth_after: int = 0
    seq: int = 0
    depth_before: int = 0
    available_after: int = 0
    ipprocs: int = 0
    opprocs: int = 0
    visible: bool = False
    depth_event: int = 0
    service_event: int = 0
    trig_before: int = -1
    trig_after: int = -1
    meta: bytes = b""
    full_event: int = 0  # {2053, full_event}: 2053 when a Queue Full event fired

    def result(self) -> PutResult:
        """The put's ``PutResult`` (of a reply with code 0)."""
        depth_event, service_event = self.depth_event, self.service_event
        if depth_event or service_event:  # rare: most puts fire no event
            events: tuple[int, ...] = tuple(e for e in (depth_event, service_event) if e)
        else:
            events = ()
        return PutResult(
            self.seq, self.depth_after, self.depth_before, self.available_after, self.visible, self.ipprocs,
            self.opprocs, events, (self.trig_before, self.trig_after))

    @classmethod
    def parse(cls, raw: Any) -> PutReply:
        code = int(raw[0])
        if code:
            return cls(code, full_event=int(raw[1]) if len(raw) > 1 else 0)
        (_, depth, seq, before, available, ipprocs, opprocs, visible, depth_event, service_event,
         trig_before, trig_after, meta) = raw
        return cls(0, int(depth), int(seq), int(before), int(available), int(ipprocs), int(opprocs),
                   bool(visible), int(depth_event), int(service_event), int(trig_before), int(trig_after),
                   meta)




@reply("get")
@dataclass(slots=True)
class GetReply(ScriptReply):
    """lua/get.lua's three shapes: ``{code}`` (refused), ``{code, reports, depth_event,
    discarded}`` (no message, or -1: call again) and the message (``code`` 0, 2079 or 2080)."""


    code: int
    md: bytes = b""
    data: bytes = b""
    data_length: int = 0
    backout_count: int = 0
    persistent: bool = False
    cursor: str = ""
    depth_after: int = 0
    depth_before: int = 0
    available_after: int = 0
    id: int = 0
    syncpoint: bool = False
    expiry_ms: int = 0
    reports: int = 0
    depth_event: int = 0
    service_event: int = 0
    discarded: int = 0

    @classmethod
    def parse(cls, raw: Any) -> GetReply:
        n = len(raw)
        if n == 1:
            return cls(int(raw[0]))
        if n == 4:
            return cls(int(raw[0]), reports=int(raw[1]), depth_event=int(raw[2]), discarded=int(raw[3]))
        (code, md, data, length, bo, pers, cursor, depth, before, available, ident, sync, exp, reports,
         depth_event, service_event, discarded) = raw
        return cls(int(code), bytes(md), bytes(data), int(length), int(bo), bool(pers), _text(cursor),
                   int(depth), int(before), int(available), int(ident), bool(sync), int(exp), int(reports),
                   int(depth_event), int(service_event), int(discarded))




@reply("put_batch", extra=1)
@dataclass(slots=True)
class PutBatchReply(ScriptReply):
    """lua/put_batch.lua: ``{code, count, full_event}`` and one ``PutReply`` (code 0) per message
    put, in put order; ``code`` is 0 or the failure that stopped the batch after ``count``."""

    REPEAT: ClassVar[tuple[str, ...]] = PutReply.SHAPE[1:] if PutReply.SHAPE else ()

    code: int
    count: int = 0
    full_event: int = 0
    puts: list[PutReply] = field(default_factory=list)

    @classmethod
    def parse(cls, raw: Any) -> PutBatchReply:
        size = len(cls.REPEAT)
        reply = PutReply
        puts = [reply(0, int(depth), int(seq), int(before), int(available), int(ipprocs), int(opprocs),
                      bool(visible), int(depth_event), int(service_event), int(trig_before), int(trig_after), meta)
                for (depth, seq, before, available, ipprocs, opprocs, visible, depth_event, service_event,
                     trig_before, trig_after, meta) in (raw[i:i + size] for i in range(3, len(raw), size))]
        return cls(int(raw[0]), int(raw[1]), int(raw[2]), puts)




@reply("get_batch", extra=1)
@dataclass(slots=True)
class GetBatchReply(ScriptReply):
    """lua/get_batch.lua: ``{code, reports, depth_event, discarded}`` and one ``GetReply`` per
    message (its ``code`` is the group's reason: 0, 2079, or 2080 for a first message too big)."""

    REPEAT: ClassVar[tuple[str, ...]] = (
        "md", "data", "data_length", "backout_count", "persistent", "cursor", "depth_after", "depth_before",
        "available_after", "id", "syncpoint", "expiry_ms", "reason", "service_event")

    code: int
    reports: int = 0
    depth_event: int = 0
    discarded: int = 0
    messages: list[GetReply] = field(default_factory=list)

    @classmethod
    def parse(cls, raw: Any) -> GetBatchReply:
        messages = []
        for i in range(4, len(raw), 14):
            (md, data, length, bo, pers, cursor, depth, before, available, ident, sync, exp, reason,
             service_event) = raw[i:i + 14]
            messages.append(GetReply(int(reason), bytes(md), bytes(data), int(length), int(bo), bool(pers),
                                     _text(cursor), int(depth), int(before), int(available), int(ident),
                                     bool(sync), int(exp), service_event=int(service_event)))
        return cls(int(raw[0]), int(raw[1]), int(raw[2]), int(raw[3]), messages)




@reply("open")
@dataclass(slots=True)
class OpenReply(ScriptReply):
    """lua/open.lua: ``{code}`` or ``{0, gen, ipprocs, opprocs, reopened}``."""


    code: int
    gen: int = 0
    ipprocs: int = 0
    opprocs: int = 0
    reopened: bool = False

    @classmethod
    def parse(cls, raw: Any) -> OpenReply:
        if len(raw) == 1:
            return cls(int(raw[0]))
        return cls(int(raw[0]), int(raw[1]), int(raw[2]), int(raw[3]), bool(raw[4]))




@reply("close")
@dataclass(slots=True)
class CloseReply(ScriptReply):
    """lua/close.lua: ``{0}`` (not open) or ``{1, queue, flags, ipprocs, opprocs}`` (closed)."""


    closed: bool
    queue: str = ""
    flags: str = ""
    ipprocs: int = 0
    opprocs: int = 0

    @classmethod
    def parse(cls, raw: Any) -> CloseReply:
        if not int(raw[0]):
            return cls(False)
        return cls(True, _text(raw[1]), _text(raw[2]), int(raw[3]), int(raw[4]))




@reply("clear_opens", shape=False)
@dataclass(slots=True)
class ClearOpensReply(ScriptReply):
    """lua/clear_opens.lua: the number of handles cleared."""


    cleared: int

    @classmethod
    def parse(cls, raw: Any) -> ClearOpensReply:
        return cls(int(raw))




# ---- units of work, expiry ----------------------------------------------------------------


def _uow_queues(raw: Any) -> list[UowQueueResult]:
    return [UowQueueResult(queue=e["queue"], puts=int(e["puts"]), gets=int(e["gets"]),
                           depth=int(e["depth"]), available=int(e["available"]),
                           reports=int(e.get("reports", 0)))
            for e in json.loads(raw)]


_UOW_KEYS = ("queue", "puts", "gets", "depth", "available", "reports")


@reply("commit", shape=False)
@dataclass(slots=True)
class CommitReply(ScriptReply):
    """lua/commit.lua: a JSON array, one object per queue touched."""

    JSON_KEYS: ClassVar[tuple[str, ...]] = _UOW_KEYS

    queues: list[UowQueueResult]

    @classmethod
    def parse(cls, raw: Any) -> CommitReply:
        return cls(_uow_queues(raw))




@reply("backout", shape=False)
@dataclass(slots=True)
class BackoutReply(ScriptReply):
    """lua/backout.lua: a JSON array, one object per queue touched."""

    JSON_KEYS: ClassVar[tuple[str, ...]] = _UOW_KEYS

    queues: list[UowQueueResult]

    @classmethod
    def parse(cls, raw: Any) -> BackoutReply:
        return cls(_uow_queues(raw))




@reply("scan")
@dataclass(slots=True)
class ScanReply(ScriptReply):
    """lua/scan.lua: ``{discarded, reports, more, depth_event}``."""


    discarded: int
    reports: int
    more: bool
    depth_event: int

    @classmethod
    def parse(cls, raw: Any) -> ScanReply:
        return cls(int(raw[0]), int(raw[1]), bool(int(raw[2])), int(raw[3]))




@reply("held")
@dataclass(slots=True)
class HeldReply(ScriptReply):
    """lua/held.lua: messages released or restored, the COD reports a release queued, and the
    tokens named that were no longer held."""


    messages: int
    reports: int
    gone: frozenset[str]

    @classmethod
    def parse(cls, raw: Any) -> HeldReply:
        return cls(int(raw[0]), int(raw[1]), frozenset(_text(t) for t in raw[2]))




@reply("take_report")
@dataclass(slots=True)
class TakeReportReply(ScriptReply):
    """lua/take_report.lua: ``{2009}`` fenced, ``{0}`` nothing to send, ``{0, report}``."""


    code: int
    report: bytes | None = None

    @classmethod
    def parse(cls, raw: Any) -> TakeReportReply:
        return cls(int(raw[0]), bytes(raw[1]) if len(raw) > 1 else None)




# ---- administration -----------------------------------------------------------------------


@reply("define")
@dataclass(slots=True)
class DefineReply(ScriptReply):
    """lua/define.lua: ``{gen, created}``."""


    gen: int
    created: bool

    @classmethod
    def parse(cls, raw: Any) -> DefineReply:
        return cls(int(raw[0]), bool(int(raw[1])))




@reply("alter")
@dataclass(slots=True)
class AlterReply(ScriptReply):
    """lua/alter.lua: ``{2085}`` or ``{0, gen}``."""


    code: int
    gen: int = 0

    @classmethod
    def parse(cls, raw: Any) -> AlterReply:
        return cls(int(raw[0]), int(raw[1]) if len(raw) > 1 else 0)




@reply("delete")
@dataclass(slots=True)
class DeleteReply(ScriptReply):
    """lua/delete.lua: ``{code}`` or ``{0, purged, seq}``."""


    code: int
    purged: int = 0
    seq: int = 0

    @classmethod
    def parse(cls, raw: Any) -> DeleteReply:
        if len(raw) == 1:
            return cls(int(raw[0]))
        return cls(int(raw[0]), int(raw[1]), int(raw[2]))




@reply("purge")
@dataclass(slots=True)
class PurgeReply(ScriptReply):
    """lua/purge.lua: ``{code}`` or ``{0, discarded, cursor}``."""


    code: int
    discarded: int = 0
    cursor: str = "0"

    @classmethod
    def parse(cls, raw: Any) -> PurgeReply:
        if len(raw) == 1:
            return cls(int(raw[0]))
        return cls(int(raw[0]), int(raw[1]), _text(raw[2]))


@reply("clear")
@dataclass(slots=True)
class ClearReply(ScriptReply):
    """lua/clear.lua: ``{code}`` or ``{0, removed, seq}``."""


    code: int
    removed: int = 0
    seq: int = 0

    @classmethod
    def parse(cls, raw: Any) -> ClearReply:
        if len(raw) == 1:
            return cls(int(raw[0]))
        return cls(int(raw[0]), int(raw[1]), int(raw[2]))




@reply("status")
@dataclass(slots=True)
class StatusReply(ScriptReply):
    """lua/status.lua: ``{2085}`` or ``{0, ctl, opens, stats, available}`` (hashes as dicts)."""


    code: int
    ctl: dict[str, str] = field(default_factory=dict)
    opens: dict[str, str] = field(default_factory=dict)
    stats: dict[str, str] = field(default_factory=dict)
    available: int = 0

    @classmethod
    def parse(cls, raw: Any) -> StatusReply:
        if len(raw) == 1:
            return cls(int(raw[0]))
        return cls(int(raw[0]), flat_to_dict(raw[1]), flat_to_dict(raw[2]), flat_to_dict(raw[3]), int(raw[4]))




@reply("reset_stats")
@dataclass(slots=True)
class ResetStatsReply(ScriptReply):
    """lua/reset_stats.lua: ``{2085}`` or ``{0, enq, deq, hiq, reset_ms_before, depth}``."""


    code: int
    enq: int = 0
    deq: int = 0
    hiq: int = 0
    reset_ms_before: int = 0
    depth: int = 0

    @classmethod
    def parse(cls, raw: Any) -> ResetStatsReply:
        if len(raw) == 1:
            return cls(int(raw[0]))
        return cls(int(raw[0]), int(raw[1]), int(raw[2]), int(raw[3]), int(raw[4]), int(raw[5]))




# ---- recovery and structures --------------------------------------------------------------


@reply("intent")
@dataclass(slots=True)
class IntentReply(ScriptReply):
    """lua/intent.lua: ``{0}`` recorded or ``{2009}`` fenced."""


    code: int

    @classmethod
    def parse(cls, raw: Any) -> IntentReply:
        return cls(int(raw[0]))




@reply("fence", shape=False)
@dataclass(slots=True)
class FenceReply(ScriptReply):
    """lua/fence.lua: the lowest incarnation allowed after the call."""


    lowest: int

    @classmethod
    def parse(cls, raw: Any) -> FenceReply:
        return cls(int(raw))




@reply("struct")
@dataclass(slots=True)
class StructReply(ScriptReply):
    """lua/struct.lua: ``{status, alloc, failtime, outcome, by}``."""


    status: str
    alloc: str
    failtime: int
    outcome: str
    by: str

    @classmethod
    def parse(cls, raw: Any) -> StructReply:
        status, alloc, failtime, outcome, by = (_text(v) for v in raw)
        return cls(status, alloc, int(failtime or 0), outcome, by)




@reply("backup", extra=1)
@dataclass(slots=True)
class BackupReply(ScriptReply):
    """lua/backup.lua: ``{cursor, id, meta, md, data, ...}``: the next cursor ("0" at the end)
    and one (id, meta, MQMD JSON, data) per message."""

    REPEAT: ClassVar[tuple[str, ...]] = ("id", "meta", "md", "data")

    cursor: str
    messages: list[tuple[int, str, bytes, bytes]]

    @classmethod
    def parse(cls, raw: Any) -> BackupReply:
        items = raw[1:]
        return cls(_text(raw[0]), [(int(items[i]), _text(items[i + 1]), bytes(items[i + 2]), bytes(items[i + 3]))
                                   for i in range(0, len(items), 4)])




@reply("restore")
@dataclass(slots=True)
class RestoreReply(ScriptReply):
    """lua/restore.lua: ``{code}`` or ``{0, restored, depth}``."""


    code: int
    restored: int = 0
    depth: int = 0

    @classmethod
    def parse(cls, raw: Any) -> RestoreReply:
        if len(raw) == 1:
            return cls(int(raw[0]))
        return cls(int(raw[0]), int(raw[1]), int(raw[2]))




# ---- the group: heartbeats and leases -----------------------------------------------------


@reply("claim")
@dataclass(slots=True)
class ClaimReply(ScriptReply):
    """lua/claim.lua: ``{0, incarnation}`` claimed or ``{1, holder}`` (a live instance holds it)."""

    SHAPE: ClassVar[tuple[str, ...] | None] = ("code", "incarnation")

    claimed: bool
    incarnation: int = 0
    holder: str = ""

    @classmethod
    def parse(cls, raw: Any) -> ClaimReply:
        if int(raw[0]):
            return cls(False, holder=_text(raw[1]))
        return cls(True, incarnation=int(raw[1]))




@reply("renew", shape=False)
@dataclass(slots=True)
class RenewReply(ScriptReply):
    """lua/renew.lua: 1 renewed, 2 claimed back after Redis lost its data, 0 the lease is lost."""

    LOST: ClassVar[int] = 0
    RENEWED: ClassVar[int] = 1
    CLAIMED_BACK: ClassVar[int] = 2

    outcome: int

    @classmethod
    def parse(cls, raw: Any) -> RenewReply:
        return cls(int(raw))




@reply("lease_take", shape=False)
@dataclass(slots=True)
class LeaseTakeReply(ScriptReply):
    """lua/lease_take.lua: 1 taken, 0 held by someone."""


    taken: bool

    @classmethod
    def parse(cls, raw: Any) -> LeaseTakeReply:
        return cls(bool(int(raw)))




@reply("lease_hold", shape=False)
@dataclass(slots=True)
class LeaseHoldReply(ScriptReply):
    """lua/lease_hold.lua: 1 held by this owner now, 0 held by someone else."""


    held: bool

    @classmethod
    def parse(cls, raw: Any) -> LeaseHoldReply:
        return cls(bool(int(raw)))




@reply("lease_release", shape=False)
@dataclass(slots=True)
class LeaseReleaseReply(ScriptReply):
    """lua/lease_release.lua: 1 released, 0 not held by this owner."""


    released: bool

    @classmethod
    def parse(cls, raw: Any) -> LeaseReleaseReply:
        return cls(bool(int(raw)))


def get_result(reply: GetReply, *, browse: bool) -> GetResult:
    """The result of a message got or browsed (by get or get_batch) from the script's reply; for
    2080 (nothing removed: ``browse``) the message the buffer was too small for."""
    return GetResult(  # positional: md_json, body, ... in field order
        reply.md, reply.data, reply.data_length, reply.backout_count, reply.persistent, reply.cursor,
        reply.depth_after, reply.code == MQRC.TRUNCATED_MSG_ACCEPTED, reply.depth_before, reply.available_after,
        reply.id, browse, reply.syncpoint, reply.code, reply.expiry_ms)
