"""One named type per coupling-facility script: its KEYS and ARGV, in the order of its header.

Each ``<Name>Args`` class (``put.lua`` -> ``PutArgs``, ``clear_opens.lua`` -> ``ClearOpensArgs``) is a
dataclass whose fields are the script's inputs in header order: first one field per
``KEYS[n]`` line (named in ``KEYS``), then one per ``ARGV[n]`` line (named in ``ARGV``), then, for
a script whose header ends with a variadic ``ARGV[n..]`` line, one sequence field named by
``TAIL``. ``keys()``, ``argv()`` and ``tail()`` give the lists the script is called with
(``call()`` both, for an unfenced script).

Fenced scripts (``FENCED = True``) are called through ``CFBase._script`` as this queue manager's
incarnation: their header's last ``KEYS`` line is the structure's fence key and their last two
``ARGV`` lines before the tail are the caller (queue manager name, incarnation). Those three are
not fields: ``_script`` appends them (lua/_fence.lua). ``tests/test_cf_scripts.py`` checks every
class against its script's header, so a script and its type cannot drift apart.

Values are passed as Redis takes them (``str`` or ``bytes``); the engine converts. The classes are
slotted dataclasses, not frozen ones: a frozen dataclass's ``__init__`` sets each field through
``object.__setattr__``, about 5 us for ``PutArgs`` on the MQPUT path; treat them as immutable
(``dataclasses.replace`` makes a changed copy).
"""

from __future__ import annotations

from collections.abc import Sequence
from dataclasses import dataclass
from typing import ClassVar

#: Every script's argument type, by script name (file ``lua/<name>.lua``).
SCRIPT_ARGS: dict[str, type[ScriptArgs]] = {}


class ScriptArgs:
    """What every script's argument type has (see the module's docstring)."""

    SCRIPT: ClassVar[str]
    KEYS: ClassVar[tuple[str, ...]]
    ARGV: ClassVar[tuple[str, ...]]
    TAIL: ClassVar[str | None] = None
    FENCED: ClassVar[bool] = False

    def keys(self) -> list[str]:
        raise NotImplementedError

    def argv(self) -> list[str | bytes]:
        """The fixed ARGV (the ``ARGV[n]`` lines), without the caller of a fenced script."""
        raise NotImplementedError

    def tail(self) -> list[str | bytes]:
        """The variadic ARGV (the ``ARGV[n..]`` line), after the caller of a fenced script."""
        return []

    def call(self) -> tuple[list[str], list[str | bytes]]:
        """KEYS and ARGV of an unfenced script."""
        return self.keys(), [*self.argv(), *self.tail()]


@dataclass(slots=True)
class PutArgs(ScriptArgs):
    """KEYS and ARGV of lua/put.lua."""

    SCRIPT: ClassVar[str] = "put"
    KEYS: ClassVar[tuple[str, ...]] = (
        "ctl",
        "uow",
        "uow_registry",
        "expiry_queues",
    )
    ARGV: ClassVar[tuple[str, ...]] = (
        "queue_prefix",
        "queue",
        "qmgr",
        "hconn",
        "gen",
        "syncpoint",
        "priority",
        "persistent",
        "msg_id",
        "correl_id",
        "md_json",
        "body",
        "now_ms",
        "channel",
        "offload",
        "expiry_at_ms",
        "report",
        "report_qmgr",
        "perf",
        "trigger_channel",
        "want_meta",
    )
    FENCED: ClassVar[bool] = True

    ctl: str
    uow: str
    uow_registry: str
    expiry_queues: str
    queue_prefix: str
    queue: str
    qmgr: str
    hconn: str
    gen: str
    syncpoint: str
    priority: str
    persistent: str
    msg_id: str
    correl_id: str
    md_json: str | bytes
    body: bytes
    now_ms: str
    channel: str
    offload: str
    expiry_at_ms: str
    report: str
    report_qmgr: str
    perf: str
    trigger_channel: str
    want_meta: str

    def keys(self) -> list[str]:
        return [self.ctl, self.uow, self.uow_registry, self.expiry_queues]

    def argv(self) -> list[str | bytes]:
        return [
            self.queue_prefix,
            self.queue,
            self.qmgr,
            self.hconn,
            self.gen,
            self.syncpoint,
            self.priority,
            self.persistent,
            self.msg_id,
            self.correl_id,
            self.md_json,
            self.body,
            self.now_ms,
            self.channel,
            self.offload,
            self.expiry_at_ms,
            self.report,
            self.report_qmgr,
            self.perf,
            self.trigger_channel,
            self.want_meta,
        ]


SCRIPT_ARGS["put"] = PutArgs


@dataclass(slots=True)
class GetArgs(ScriptArgs):
    """KEYS and ARGV of lua/get.lua."""

    SCRIPT: ClassVar[str] = "get"
    KEYS: ClassVar[tuple[str, ...]] = (
        "ctl",
        "uow",
        "uow_registry",
    )
    ARGV: ClassVar[tuple[str, ...]] = (
        "queue_prefix",
        "queue",
        "qmgr",
        "hconn",
        "gen",
        "mode",
        "syncpoint",
        "match_msg_id",
        "match_correl_id",
        "cursor",
        "buffer_length",
        "accept_truncated",
        "now_ms",
        "register_ms",
        "structure_prefix",
        "perf",
    )
    FENCED: ClassVar[bool] = True

    ctl: str
    uow: str
    uow_registry: str
    queue_prefix: str
    queue: str
    qmgr: str
    hconn: str
    gen: str
    mode: str
    syncpoint: str
    match_msg_id: str
    match_correl_id: str
    cursor: str
    buffer_length: str
    accept_truncated: str
    now_ms: str
    register_ms: str
    structure_prefix: str
    perf: str

    def keys(self) -> list[str]:
        return [self.ctl, self.uow, self.uow_registry]

    def argv(self) -> list[str | bytes]:
        return [
            self.queue_prefix,
            self.queue,
            self.qmgr,
            self.hconn,
            self.gen,
            self.mode,
            self.syncpoint,
            self.match_msg_id,
            self.match_correl_id,
            self.cursor,
            self.buffer_length,
            self.accept_truncated,
            self.now_ms,
            self.register_ms,
            self.structure_prefix,
            self.perf,
        ]


SCRIPT_ARGS["get"] = GetArgs


@dataclass(slots=True)
class ScanArgs(ScriptArgs):
    """KEYS and ARGV of lua/scan.lua."""

    SCRIPT: ClassVar[str] = "scan"
    KEYS: ClassVar[tuple[str, ...]] = (
        "ctl",
        "expiry_queues",
    )
    ARGV: ClassVar[tuple[str, ...]] = (
        "queue_prefix",
        "queue",
        "qmgr",
        "now_ms",
        "structure_prefix",
        "perf",
    )
    FENCED: ClassVar[bool] = True

    ctl: str
    expiry_queues: str
    queue_prefix: str
    queue: str
    qmgr: str
    now_ms: str
    structure_prefix: str
    perf: str

    def keys(self) -> list[str]:
        return [self.ctl, self.expiry_queues]

    def argv(self) -> list[str | bytes]:
        return [self.queue_prefix, self.queue, self.qmgr, self.now_ms, self.structure_prefix, self.perf]


SCRIPT_ARGS["scan"] = ScanArgs


@dataclass(slots=True)
class CommitArgs(ScriptArgs):
    """KEYS and ARGV of lua/commit.lua."""

    SCRIPT: ClassVar[str] = "commit"
    KEYS: ClassVar[tuple[str, ...]] = (
        "uow",
        "uow_registry",
    )
    ARGV: ClassVar[tuple[str, ...]] = (
        "structure_prefix",
        "member",
        "channel_prefix",
        "trigger_channel",
    )
    FENCED: ClassVar[bool] = True

    uow: str
    uow_registry: str
    structure_prefix: str
    member: str
    channel_prefix: str
    trigger_channel: str

    def keys(self) -> list[str]:
        return [self.uow, self.uow_registry]

    def argv(self) -> list[str | bytes]:
        return [self.structure_prefix, self.member, self.channel_prefix, self.trigger_channel]


SCRIPT_ARGS["commit"] = CommitArgs


@dataclass(slots=True)
class BackoutArgs(ScriptArgs):
    """KEYS and ARGV of lua/backout.lua."""

    SCRIPT: ClassVar[str] = "backout"
    KEYS: ClassVar[tuple[str, ...]] = (
        "uow",
        "uow_registry",
    )
    ARGV: ClassVar[tuple[str, ...]] = (
        "structure_prefix",
        "member",
        "channel_prefix",
        "trigger_channel",
    )
    FENCED: ClassVar[bool] = True

    uow: str
    uow_registry: str
    structure_prefix: str
    member: str
    channel_prefix: str
    trigger_channel: str

    def keys(self) -> list[str]:
        return [self.uow, self.uow_registry]

    def argv(self) -> list[str | bytes]:
        return [self.structure_prefix, self.member, self.channel_prefix, self.trigger_channel]


SCRIPT_ARGS["backout"] = BackoutArgs


@dataclass(slots=True)
class OpenArgs(ScriptArgs):
    """KEYS and ARGV of lua/open.lua."""

    SCRIPT: ClassVar[str] = "open"
    KEYS: ClassVar[tuple[str, ...]] = (
        "ctl",
        "handles",
    )
    ARGV: ClassVar[tuple[str, ...]] = (
        "structure_prefix",
        "queue",
        "qmgr",
        "hobj",
        "flags",
        "gen_expected",
    )
    FENCED: ClassVar[bool] = True

    ctl: str
    handles: str
    structure_prefix: str
    queue: str
    qmgr: str
    hobj: str
    flags: str
    gen_expected: str

    def keys(self) -> list[str]:
        return [self.ctl, self.handles]

    def argv(self) -> list[str | bytes]:
        return [self.structure_prefix, self.queue, self.qmgr, self.hobj, self.flags, self.gen_expected]


SCRIPT_ARGS["open"] = OpenArgs


@dataclass(slots=True)
class CloseArgs(ScriptArgs):
    """KEYS and ARGV of lua/close.lua."""

    SCRIPT: ClassVar[str] = "close"
    KEYS: ClassVar[tuple[str, ...]] = ("handles",)
    ARGV: ClassVar[tuple[str, ...]] = (
        "structure_prefix",
        "qmgr",
        "hobj",
    )
    FENCED: ClassVar[bool] = True

    handles: str
    structure_prefix: str
    qmgr: str
    hobj: str

    def keys(self) -> list[str]:
        return [self.handles]

    def argv(self) -> list[str | bytes]:
        return [self.structure_prefix, self.qmgr, self.hobj]


SCRIPT_ARGS["close"] = CloseArgs


@dataclass(slots=True)
class ClearOpensArgs(ScriptArgs):
    """KEYS and ARGV of lua/clear_opens.lua."""

    SCRIPT: ClassVar[str] = "clear_opens"
    KEYS: ClassVar[tuple[str, ...]] = ("handles",)
    ARGV: ClassVar[tuple[str, ...]] = (
        "structure_prefix",
        "qmgr",
    )
    FENCED: ClassVar[bool] = True

    handles: str
    structure_prefix: str
    qmgr: str

    def keys(self) -> list[str]:
        return [self.handles]

    def argv(self) -> list[str | bytes]:
        return [self.structure_prefix, self.qmgr]


SCRIPT_ARGS["clear_opens"] = ClearOpensArgs


@dataclass(slots=True)
class DefineArgs(ScriptArgs):
    """KEYS and ARGV of lua/define.lua."""

    SCRIPT: ClassVar[str] = "define"
    KEYS: ClassVar[tuple[str, ...]] = (
        "ctl",
        "queues",
        "generations",
        "last_ids",
    )
    ARGV: ClassVar[tuple[str, ...]] = (
        "queue_prefix",
        "queue",
        "channel",
    )
    TAIL: ClassVar[str | None] = "attributes"
    FENCED: ClassVar[bool] = True

    ctl: str
    queues: str
    generations: str
    last_ids: str
    queue_prefix: str
    queue: str
    channel: str
    attributes: Sequence[str | bytes] = ()

    def keys(self) -> list[str]:
        return [self.ctl, self.queues, self.generations, self.last_ids]

    def argv(self) -> list[str | bytes]:
        return [self.queue_prefix, self.queue, self.channel]

    def tail(self) -> list[str | bytes]:
        return list(self.attributes)


SCRIPT_ARGS["define"] = DefineArgs


@dataclass(slots=True)
class AlterArgs(ScriptArgs):
    """KEYS and ARGV of lua/alter.lua."""

    SCRIPT: ClassVar[str] = "alter"
    KEYS: ClassVar[tuple[str, ...]] = ("ctl",)
    ARGV: ClassVar[tuple[str, ...]] = (
        "queue_prefix",
        "bump_gen",
        "channel",
    )
    TAIL: ClassVar[str | None] = "attributes"
    FENCED: ClassVar[bool] = True

    ctl: str
    queue_prefix: str
    bump_gen: str
    channel: str
    attributes: Sequence[str | bytes] = ()

    def keys(self) -> list[str]:
        return [self.ctl]

    def argv(self) -> list[str | bytes]:
        return [self.queue_prefix, self.bump_gen, self.channel]

    def tail(self) -> list[str | bytes]:
        return list(self.attributes)


SCRIPT_ARGS["alter"] = AlterArgs


@dataclass(slots=True)
class DeleteArgs(ScriptArgs):
    """KEYS and ARGV of lua/delete.lua."""

    SCRIPT: ClassVar[str] = "delete"
    KEYS: ClassVar[tuple[str, ...]] = (
        "ctl",
        "queues",
        "generations",
        "last_ids",
    )
    ARGV: ClassVar[tuple[str, ...]] = (
        "queue_prefix",
        "queue",
        "purge",
        "channel",
    )
    FENCED: ClassVar[bool] = True

    ctl: str
    queues: str
    generations: str
    last_ids: str
    queue_prefix: str
    queue: str
    purge: str
    channel: str

    def keys(self) -> list[str]:
        return [self.ctl, self.queues, self.generations, self.last_ids]

    def argv(self) -> list[str | bytes]:
        return [self.queue_prefix, self.queue, self.purge, self.channel]


SCRIPT_ARGS["delete"] = DeleteArgs


@dataclass(slots=True)
class ClearArgs(ScriptArgs):
    """KEYS and ARGV of lua/clear.lua."""

    SCRIPT: ClassVar[str] = "clear"
    KEYS: ClassVar[tuple[str, ...]] = ("ctl",)
    ARGV: ClassVar[tuple[str, ...]] = ("queue_prefix",)
    FENCED: ClassVar[bool] = True

    ctl: str
    queue_prefix: str

    def keys(self) -> list[str]:
        return [self.ctl]

    def argv(self) -> list[str | bytes]:
        return [self.queue_prefix]


SCRIPT_ARGS["clear"] = ClearArgs


@dataclass(slots=True)
class StatusArgs(ScriptArgs):
    """KEYS and ARGV of lua/status.lua."""

    SCRIPT: ClassVar[str] = "status"
    KEYS: ClassVar[tuple[str, ...]] = (
        "ctl",
        "opens",
        "stats",
    )
    ARGV: ClassVar[tuple[str, ...]] = ("queue_prefix",)

    ctl: str
    opens: str
    stats: str
    queue_prefix: str

    def keys(self) -> list[str]:
        return [self.ctl, self.opens, self.stats]

    def argv(self) -> list[str | bytes]:
        return [self.queue_prefix]


SCRIPT_ARGS["status"] = StatusArgs


@dataclass(slots=True)
class ResetStatsArgs(ScriptArgs):
    """KEYS and ARGV of lua/reset_stats.lua."""

    SCRIPT: ClassVar[str] = "reset_stats"
    KEYS: ClassVar[tuple[str, ...]] = (
        "ctl",
        "stats",
    )
    ARGV: ClassVar[tuple[str, ...]] = (
        "qmgr",
        "now_ms",
    )
    FENCED: ClassVar[bool] = True

    ctl: str
    stats: str
    qmgr: str
    now_ms: str

    def keys(self) -> list[str]:
        return [self.ctl, self.stats]

    def argv(self) -> list[str | bytes]:
        return [self.qmgr, self.now_ms]


SCRIPT_ARGS["reset_stats"] = ResetStatsArgs


@dataclass(slots=True)
class StructArgs(ScriptArgs):
    """KEYS and ARGV of lua/struct.lua."""

    SCRIPT: ClassVar[str] = "struct"
    KEYS: ClassVar[tuple[str, ...]] = ("state",)
    ARGV: ClassVar[tuple[str, ...]] = ("action",)
    TAIL: ClassVar[str | None] = "operands"

    state: str
    action: str
    operands: Sequence[str | bytes] = ()

    def keys(self) -> list[str]:
        return [self.state]

    def argv(self) -> list[str | bytes]:
        return [self.action]

    def tail(self) -> list[str | bytes]:
        return list(self.operands)


SCRIPT_ARGS["struct"] = StructArgs


@dataclass(slots=True)
class BackupArgs(ScriptArgs):
    """KEYS and ARGV of lua/backup.lua."""

    SCRIPT: ClassVar[str] = "backup"
    KEYS: ClassVar[tuple[str, ...]] = ("uow_registry",)
    ARGV: ClassVar[tuple[str, ...]] = (
        "queue_prefix",
        "queue",
        "structure_prefix",
        "cursor",
        "count",
        "before_ms",
    )

    uow_registry: str
    queue_prefix: str
    queue: str
    structure_prefix: str
    cursor: str
    count: str
    before_ms: str

    def keys(self) -> list[str]:
        return [self.uow_registry]

    def argv(self) -> list[str | bytes]:
        return [self.queue_prefix, self.queue, self.structure_prefix, self.cursor, self.count, self.before_ms]


SCRIPT_ARGS["backup"] = BackupArgs


@dataclass(slots=True)
class RestoreArgs(ScriptArgs):
    """KEYS and ARGV of lua/restore.lua."""

    SCRIPT: ClassVar[str] = "restore"
    KEYS: ClassVar[tuple[str, ...]] = (
        "ctl",
        "expiry_queues",
    )
    ARGV: ClassVar[tuple[str, ...]] = (
        "queue_prefix",
        "queue",
        "last_id",
    )
    TAIL: ClassVar[str | None] = "messages"

    ctl: str
    expiry_queues: str
    queue_prefix: str
    queue: str
    last_id: str
    messages: Sequence[str | bytes] = ()

    def keys(self) -> list[str]:
        return [self.ctl, self.expiry_queues]

    def argv(self) -> list[str | bytes]:
        return [self.queue_prefix, self.queue, self.last_id]

    def tail(self) -> list[str | bytes]:
        return list(self.messages)


SCRIPT_ARGS["restore"] = RestoreArgs


@dataclass(slots=True)
class FenceArgs(ScriptArgs):
    """KEYS and ARGV of lua/fence.lua."""

    SCRIPT: ClassVar[str] = "fence"
    KEYS: ClassVar[tuple[str, ...]] = ("fence",)
    ARGV: ClassVar[tuple[str, ...]] = (
        "qmgr",
        "lowest",
    )

    fence: str
    qmgr: str
    lowest: str

    def keys(self) -> list[str]:
        return [self.fence]

    def argv(self) -> list[str | bytes]:
        return [self.qmgr, self.lowest]


SCRIPT_ARGS["fence"] = FenceArgs


@dataclass(slots=True)
class IntentArgs(ScriptArgs):
    """KEYS and ARGV of lua/intent.lua."""

    SCRIPT: ClassVar[str] = "intent"
    KEYS: ClassVar[tuple[str, ...]] = (
        "record",
        "fence",
    )
    ARGV: ClassVar[tuple[str, ...]] = (
        "tags_json",
        "caller",
        "incarnation",
    )

    record: str
    fence: str
    tags_json: str
    caller: str
    incarnation: str

    def keys(self) -> list[str]:
        return [self.record, self.fence]

    def argv(self) -> list[str | bytes]:
        return [self.tags_json, self.caller, self.incarnation]


SCRIPT_ARGS["intent"] = IntentArgs


@dataclass(slots=True)
class TakeReportArgs(ScriptArgs):
    """KEYS and ARGV of lua/take_report.lua."""

    SCRIPT: ClassVar[str] = "take_report"
    KEYS: ClassVar[tuple[str, ...]] = (
        "reports",
        "sending",
    )
    ARGV: ClassVar[tuple[str, ...]] = ()
    FENCED: ClassVar[bool] = True

    reports: str
    sending: str

    def keys(self) -> list[str]:
        return [self.reports, self.sending]

    def argv(self) -> list[str | bytes]:
        return []


SCRIPT_ARGS["take_report"] = TakeReportArgs


@dataclass(slots=True)
class ClaimArgs(ScriptArgs):
    """KEYS and ARGV of lua/claim.lua."""

    SCRIPT: ClassVar[str] = "claim"
    KEYS: ClassVar[tuple[str, ...]] = (
        "heartbeat",
        "incarnations",
    )
    ARGV: ClassVar[tuple[str, ...]] = (
        "qmgr",
        "instance",
        "lease_ms",
    )

    heartbeat: str
    incarnations: str
    qmgr: str
    instance: str
    lease_ms: str

    def keys(self) -> list[str]:
        return [self.heartbeat, self.incarnations]

    def argv(self) -> list[str | bytes]:
        return [self.qmgr, self.instance, self.lease_ms]


SCRIPT_ARGS["claim"] = ClaimArgs


@dataclass(slots=True)
class RenewArgs(ScriptArgs):
    """KEYS and ARGV of lua/renew.lua."""

    SCRIPT: ClassVar[str] = "renew"
    KEYS: ClassVar[tuple[str, ...]] = ("heartbeat", "incarnations")
    ARGV: ClassVar[tuple[str, ...]] = (
        "instance",
        "lease_ms",
        "qmgr",
        "incarnation",
    )

    heartbeat: str
    incarnations: str
    instance: str
    lease_ms: str
    qmgr: str
    incarnation: str

    def keys(self) -> list[str]:
        return [self.heartbeat, self.incarnations]

    def argv(self) -> list[str | bytes]:
        return [self.instance, self.lease_ms, self.qmgr, self.incarnation]


SCRIPT_ARGS["renew"] = RenewArgs


@dataclass(slots=True)
class LeaseTakeArgs(ScriptArgs):
    """KEYS and ARGV of lua/lease_take.lua."""

    SCRIPT: ClassVar[str] = "lease_take"
    KEYS: ClassVar[tuple[str, ...]] = ("lease",)
    ARGV: ClassVar[tuple[str, ...]] = (
        "owner",
        "lease_ms",
    )

    lease: str
    owner: str
    lease_ms: str

    def keys(self) -> list[str]:
        return [self.lease]

    def argv(self) -> list[str | bytes]:
        return [self.owner, self.lease_ms]


SCRIPT_ARGS["lease_take"] = LeaseTakeArgs


@dataclass(slots=True)
class LeaseHoldArgs(ScriptArgs):
    """KEYS and ARGV of lua/lease_hold.lua."""

    SCRIPT: ClassVar[str] = "lease_hold"
    KEYS: ClassVar[tuple[str, ...]] = ("lease",)
    ARGV: ClassVar[tuple[str, ...]] = (
        "owner",
        "lease_ms",
    )

    lease: str
    owner: str
    lease_ms: str

    def keys(self) -> list[str]:
        return [self.lease]

    def argv(self) -> list[str | bytes]:
        return [self.owner, self.lease_ms]


SCRIPT_ARGS["lease_hold"] = LeaseHoldArgs


@dataclass(slots=True)
class LeaseReleaseArgs(ScriptArgs):
    """KEYS and ARGV of lua/lease_release.lua."""

    SCRIPT: ClassVar[str] = "lease_release"
    KEYS: ClassVar[tuple[str, ...]] = ("lease",)
    ARGV: ClassVar[tuple[str, ...]] = ("owner",)

    lease: str
    owner: str

    def keys(self) -> list[str]:
        return [self.lease]

    def argv(self) -> list[str | bytes]:
        return [self.owner]


SCRIPT_ARGS["lease_release"] = LeaseReleaseArgs
