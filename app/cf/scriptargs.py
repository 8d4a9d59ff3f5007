"""One named type per coupling-facility script: its KEYS and ARGV, in the order of its header.

Each ``<Name>Args`` class (``put.lua`` -> ``PutArgs``, ``clear_opens.lua`` -> ``ClearOpensArgs``) is a
slotted dataclass whose fields are the script's inputs in header order: first one field per
``KEYS[n]`` line, then one per ``ARGV[n]`` line, then, for a script whose header ends with a
variadic ``ARGV[n..]`` line, one sequence field. ``@script(name, keys=n, tail=..., fenced=...)``
registers the class and derives ``KEYS``, ``ARGV`` and ``TAIL`` (the field names) from its fields,
so each name is written once. ``keys()``, ``argv()`` and ``tail()`` give the lists the script is
called with (``call()`` both, for an unfenced script).

Fenced scripts (``FENCED = True``) are called through ``CFBase._script`` as this queue manager's
incarnation: their header's last ``KEYS`` line is the structure's fence key and their last three
``ARGV`` lines before the tail are the caller (queue manager name, incarnation, the call's deadline
on the CF's clock: app/cf/deadline.py). Those four are not fields: ``_script`` appends them
(lua/_fence.lua). ``tests/test_cf_scripts.py`` checks every class against its script's header,
so a script and its type cannot drift apart.

Values are passed as Redis takes them (``str`` or ``bytes``); the engine converts. The classes are
slotted dataclasses, not frozen ones: a frozen dataclass's ``__init__`` sets each field through
``object.__setattr__``, about 5 us for ``PutArgs`` on the MQPUT path; treat them as immutable
(``dataclasses.replace`` makes a changed copy). The lists are read with one precomputed
``operator.attrgetter`` per class (a C loop, as fast as a hand-written list).
"""

from __future__ import annotations

from collections.abc import Callable, Sequence
from dataclasses import dataclass, fields
from operator import attrgetter
from typing import Any, ClassVar, TypeVar

A = TypeVar("A", bound="ScriptArgs")

Reader = Callable[[Any], tuple[Any, ...]]

#: Every script's argument type, by script name (file ``lua/<name>.lua``).
SCRIPT_ARGS: dict[str, type[ScriptArgs]] = {}
#: Per argument type, the readers of its KEYS and of its fixed ARGV.
_READERS: dict[type[ScriptArgs], tuple[Reader, Reader]] = {}


class ScriptArgs:
    """What every script's argument type has (see the module's docstring)."""

    SCRIPT: ClassVar[str]
    KEYS: ClassVar[tuple[str, ...]]
    ARGV: ClassVar[tuple[str, ...]]
    TAIL: ClassVar[str | None] = None
    FENCED: ClassVar[bool] = False

    def keys(self) -> list[str]:
        return list(_READERS[type(self)][0](self))

    def argv(self) -> list[str | bytes]:
        """The fixed ARGV (the ``ARGV[n]`` lines), without the caller of a fenced script."""
        return list(_READERS[type(self)][1](self))

    def tail(self) -> list[str | bytes]:
        """The variadic ARGV (the ``ARGV[n..]`` line), after the caller of a fenced script."""
        return list(getattr(self, self.TAIL)) if self.TAIL else []

    def call(self) -> tuple[list[str], list[str | bytes]]:
        """KEYS and ARGV of an unfenced script."""
        return self.keys(), [*self.argv(), *self.tail()]

    def changes_state(self) -> bool:
        """Whether the call may change what the coupling facility holds (so a replica must
        acknowledge it when ``QSG_CF_REPLICA_ACKS`` asks for that); the read-only ones say no."""
        return True


def _reader(names: tuple[str, ...]) -> Reader:
    """A C-speed reader of ``names`` that always gives a tuple (attrgetter of one name does not)."""
    if not names:
        return lambda _obj: ()
    get = attrgetter(*names)
    return get if len(names) > 1 else lambda obj: (get(obj),)


def script(name: str, *, keys: int, tail: bool = False, fenced: bool = False) -> Callable[[type[A]], type[A]]:
    """Register a dataclass as the argument type of ``lua/<name>.lua``: its first ``keys`` fields
    are KEYS, the rest ARGV, the last one the variadic tail when ``tail``."""
    def register(cls: type[A]) -> type[A]:
        names = tuple(f.name for f in fields(cls))  # type: ignore[arg-type]
        cls.SCRIPT, cls.FENCED = name, fenced
        cls.KEYS = names[:keys]
        cls.ARGV = names[keys:-1] if tail else names[keys:]
        cls.TAIL = names[-1] if tail else None
        _READERS[cls] = (_reader(cls.KEYS), _reader(cls.ARGV))
        SCRIPT_ARGS[name] = cls
        return cls
    return register


@script("put", keys=4, fenced=True)
@dataclass(slots=True)
class PutArgs(ScriptArgs):
    """KEYS and ARGV of lua/put.lua."""

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
    group: str


@script("get", keys=4, fenced=True)
@dataclass(slots=True)
class GetArgs(ScriptArgs):
    """KEYS and ARGV of lua/get.lua."""

    ctl: str
    uow: str
    uow_registry: str
    held: str
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
    select: str
    token: str

    def changes_state(self) -> bool:
        """A browse only reads (it may drop expired messages, which a later look drops again)."""
        return not self.mode.startswith("BROWSE")


@script("put_batch", keys=4, tail=True, fenced=True)
@dataclass(slots=True)
class PutBatchArgs(ScriptArgs):
    """KEYS and ARGV of lua/put_batch.lua; ``messages`` holds 11 values per message."""

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
    now_ms: str
    channel: str
    offload: str
    perf: str
    trigger_channel: str
    messages: Sequence[str | bytes] = ()


@script("get_batch", keys=4, fenced=True)
@dataclass(slots=True)
class GetBatchArgs(GetArgs):
    """KEYS and ARGV of lua/get_batch.lua: get.lua's, then the most messages to return and the
    byte budget of their data."""

    max_messages: str
    max_bytes: str = "-1"
    budget_first: str = "0"


@script("scan", keys=2, fenced=True)
@dataclass(slots=True)
class ScanArgs(ScriptArgs):
    """KEYS and ARGV of lua/scan.lua."""

    ctl: str
    expiry_queues: str
    queue_prefix: str
    queue: str
    qmgr: str
    now_ms: str
    structure_prefix: str
    perf: str


@script("commit", keys=2, fenced=True)
@dataclass(slots=True)
class CommitArgs(ScriptArgs):
    """KEYS and ARGV of lua/commit.lua."""

    uow: str
    uow_registry: str
    structure_prefix: str
    member: str
    channel: str
    trigger_channel: str


@script("backout", keys=2, fenced=True)
@dataclass(slots=True)
class BackoutArgs(ScriptArgs):
    """KEYS and ARGV of lua/backout.lua."""

    uow: str
    uow_registry: str
    structure_prefix: str
    member: str
    channel: str
    trigger_channel: str
    keep_marked: str = "0"


@script("open", keys=2, fenced=True)
@dataclass(slots=True)
class OpenArgs(ScriptArgs):
    """KEYS and ARGV of lua/open.lua."""

    ctl: str
    handles: str
    structure_prefix: str
    queue: str
    qmgr: str
    hobj: str
    flags: str
    gen_expected: str


@script("close", keys=1, fenced=True)
@dataclass(slots=True)
class CloseArgs(ScriptArgs):
    """KEYS and ARGV of lua/close.lua."""

    handles: str
    structure_prefix: str
    qmgr: str
    hobj: str


@script("clear_opens", keys=1, fenced=True)
@dataclass(slots=True)
class ClearOpensArgs(ScriptArgs):
    """KEYS and ARGV of lua/clear_opens.lua."""

    handles: str
    structure_prefix: str
    qmgr: str


@script("define", keys=4, tail=True, fenced=True)
@dataclass(slots=True)
class DefineArgs(ScriptArgs):
    """KEYS and ARGV of lua/define.lua."""

    ctl: str
    queues: str
    generations: str
    last_ids: str
    queue_prefix: str
    queue: str
    channel: str
    attributes: Sequence[str | bytes] = ()


@script("alter", keys=1, tail=True, fenced=True)
@dataclass(slots=True)
class AlterArgs(ScriptArgs):
    """KEYS and ARGV of lua/alter.lua."""

    ctl: str
    queue_prefix: str
    queue: str
    bump_gen: str
    channel: str
    attributes: Sequence[str | bytes] = ()


@script("delete", keys=4, fenced=True)
@dataclass(slots=True)
class DeleteArgs(ScriptArgs):
    """KEYS and ARGV of lua/delete.lua."""

    ctl: str
    queues: str
    generations: str
    last_ids: str
    queue_prefix: str
    queue: str
    purge: str
    channel: str


@script("clear", keys=1, fenced=True)
@dataclass(slots=True)
class ClearArgs(ScriptArgs):
    """KEYS and ARGV of lua/clear.lua."""

    ctl: str
    queue_prefix: str


@script("purge", keys=2, fenced=True)
@dataclass(slots=True)
class PurgeArgs(ScriptArgs):
    """KEYS and ARGV of lua/purge.lua."""

    ctl: str
    expiry_queues: str
    queue_prefix: str
    queue: str
    cursor: str


@script("status", keys=2)
@dataclass(slots=True)
class StatusArgs(ScriptArgs):
    """KEYS and ARGV of lua/status.lua."""

    ctl: str
    opens: str
    queue_prefix: str

    def changes_state(self) -> bool:
        return False  # reads only


@script("reset_stats", keys=1, fenced=True)
@dataclass(slots=True)
class ResetStatsArgs(ScriptArgs):
    """KEYS and ARGV of lua/reset_stats.lua."""

    ctl: str
    qmgr: str
    now_ms: str


@script("struct", keys=1, tail=True)
@dataclass(slots=True)
class StructArgs(ScriptArgs):
    """KEYS and ARGV of lua/struct.lua."""

    state: str
    action: str
    operands: Sequence[str | bytes] = ()


@script("backup", keys=1)
@dataclass(slots=True)
class BackupArgs(ScriptArgs):
    """KEYS and ARGV of lua/backup.lua."""

    uow_registry: str
    queue_prefix: str
    queue: str
    structure_prefix: str
    cursor: str
    count: str
    before_ms: str

    def changes_state(self) -> bool:
        return False  # reads only


@script("restore", keys=2, tail=True)
@dataclass(slots=True)
class RestoreArgs(ScriptArgs):
    """KEYS and ARGV of lua/restore.lua."""

    ctl: str
    expiry_queues: str
    queue_prefix: str
    queue: str
    last_id: str
    messages: Sequence[str | bytes] = ()


@script("fence", keys=1)
@dataclass(slots=True)
class FenceArgs(ScriptArgs):
    """KEYS and ARGV of lua/fence.lua."""

    fence: str
    qmgr: str
    lowest: str


@script("intent", keys=2)
@dataclass(slots=True)
class IntentArgs(ScriptArgs):
    """KEYS and ARGV of lua/intent.lua."""

    record: str
    fence: str
    tags_json: str
    caller: str
    incarnation: str
    deadline: str


@script("take_report", keys=2, fenced=True)
@dataclass(slots=True)
class TakeReportArgs(ScriptArgs):
    """KEYS and ARGV of lua/take_report.lua."""

    reports: str
    sending: str


@script("claim", keys=2)
@dataclass(slots=True)
class ClaimArgs(ScriptArgs):
    """KEYS and ARGV of lua/claim.lua."""

    heartbeat: str
    incarnations: str
    qmgr: str
    instance: str
    lease_ms: str


@script("renew", keys=2)
@dataclass(slots=True)
class RenewArgs(ScriptArgs):
    """KEYS and ARGV of lua/renew.lua."""

    heartbeat: str
    incarnations: str
    instance: str
    lease_ms: str
    qmgr: str
    incarnation: str


@script("lease_take", keys=1)
@dataclass(slots=True)
class LeaseTakeArgs(ScriptArgs):
    """KEYS and ARGV of lua/lease_take.lua."""

    lease: str
    owner: str
    lease_ms: str


@script("lease_hold", keys=1)
@dataclass(slots=True)
class LeaseHoldArgs(ScriptArgs):
    """KEYS and ARGV of lua/lease_hold.lua."""

    lease: str
    owner: str
    lease_ms: str


@script("lease_release", keys=1)
@dataclass(slots=True)
class LeaseReleaseArgs(ScriptArgs):
    """KEYS and ARGV of lua/lease_release.lua."""

    lease: str
    owner: str


@script("held", keys=1, tail=True)
@dataclass(slots=True)
class HeldArgs(ScriptArgs):
    """KEYS and ARGV of lua/held.lua."""

    held: str
    structure_prefix: str
    action: str
    channel: str
    tokens: list[str]
