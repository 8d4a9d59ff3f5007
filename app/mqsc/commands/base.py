"""What every MQSC command family shares: the queue manager as the command processor sees it
(``MqscHost``), the checks of names, dispositions and CMDSCOPE, and repository look-ups."""

from __future__ import annotations

import re
from collections.abc import Awaitable, Callable, Mapping
from typing import TYPE_CHECKING, Any, Protocol, TypeVar

from app.core import attributes
from app.core.channels import check_channel_name
from app.core.errors import MQError, echo
from app.core.names import check_generic_name, check_object_name
from app.core.objects import OBJECT_CLASS, ObjectDef
from app.core.reasons import MQRC
from app.mqsc.parser import Command

if TYPE_CHECKING:
    from app.cf.engine import QueueStatistics, QueueStatus
    from app.cf.keys import QueueLocation
    from app.core.clock import Clock
    from app.qmgr.definitions import DefinitionCache
    from app.qmgr.pubsub import PubSub
    from app.qmgr.workflow import DefinitionWorkflow
    from app.repository.security import SecurityStore

T = TypeVar("T")

DEFINABLE = ("QLOCAL", "QALIAS", "QREMOTE", "QMODEL", "PROCESS", "CFSTRUCT", "TOPIC", "NAMELIST", "CHANNEL")
# Keywords of the commands themselves rather than of the object's attributes.
COMMAND_KEYWORDS = {"QSGDISP", "LIKE", "REPLACE", "NOREPLACE", "FORCE", "PURGE", "NOPURGE", "CMDSCOPE",
                    "ALL", "TYPE", "WHERE", "NAME", "EXCLINT", "ACTION"}
QSGDISP_FOR = {
    "QLOCAL": ("QMGR", "COPY", "GROUP", "SHARED"),
    "QALIAS": ("QMGR", "COPY", "GROUP"),
    "QREMOTE": ("QMGR", "COPY", "GROUP"),
    # A model queue is never SHARED itself (DEFINE QMODEL allows QMGR, COPY, GROUP on z/OS);
    # a SHAREDYN model makes shared dynamic queues.
    "QMODEL": ("QMGR", "COPY", "GROUP"),
    "PROCESS": ("QMGR", "COPY", "GROUP"),
    "TOPIC": ("QMGR", "COPY", "GROUP"),
    "NAMELIST": ("QMGR", "COPY", "GROUP"),
    # z/OS channels: QMGR, COPY, GROUP (a shared channel is a channel *instance*, CHLDISP(SHARED))
    "CHANNEL": ("QMGR", "COPY", "GROUP"),
}


class SecurityAdmin(Protocol):
    """The security service as the AUTHREC commands use it."""

    store: SecurityStore

    def check_qmgr(self, principal: Any, right: str) -> None: ...

    async def announce(self) -> None: ...


class StructureAdmin(Protocol):
    """CF structure administration (app.qmgr.cfstruct.StructureService)."""

    async def backup(self, name: str, exclint_s: int) -> list[str]: ...

    async def recover(self, names: list[str], *, purge: bool) -> list[str]: ...

    async def fail(self, name: str) -> list[str]: ...

    async def status(self, name: str, kind: str) -> dict[str, object]: ...

    async def connections(self, name: str) -> list[dict[str, object]]: ...


class QueueStates(Protocol):
    """The coupling facility as MQSC reads it (DISPLAY, RESET QSTATS, CLEAR QLOCAL): a port, so
    the command processor never holds the engine itself (the queue manager's ``queue_states``)."""

    failed: set[str]  # tags of structures failed or being recovered: their queues have no counts

    async def queue_status(self, loc: QueueLocation) -> QueueStatus: ...

    async def clear_queue(self, loc: QueueLocation) -> int: ...

    async def reset_stats(self, loc: QueueLocation, qmgr: str) -> QueueStatistics: ...

    async def structure_node(self, tag: str) -> str: ...


class ExpiryAdmin(Protocol):
    async def refresh(self, pattern: str) -> tuple[int, int]: ...


class IgqSwitch(Protocol):
    """The MQI layer as MQSC uses it: IGQ invalidation, and the connection table that DISPLAY
    CONN and DISPLAY QSTATUS TYPE(HANDLE) show (hconn -> app.qmgr.connection.Connection)."""

    @property
    def connections(self) -> Mapping[str, Any]: ...

    def invalidate_igq(self) -> None: ...


class MqscHost(Protocol):
    """What the MQSC command processor uses of its queue manager (the QueueManager wires it)."""

    @property
    def name(self) -> str: ...
    @property
    def qsg(self) -> str: ...
    attrs: dict[str, Any]  # replaced by ALTER QMGR
    @property
    def started_ms(self) -> int: ...
    @property
    def clock(self) -> Clock: ...
    @property
    def queue_states(self) -> QueueStates: ...
    @property
    def cache(self) -> DefinitionCache: ...
    @property
    def workflow(self) -> DefinitionWorkflow: ...
    @property
    def security(self) -> SecurityAdmin: ...
    @property
    def structures(self) -> StructureAdmin: ...
    @property
    def expiry(self) -> ExpiryAdmin: ...
    @property
    def mqi(self) -> IgqSwitch: ...
    @property
    def pubsub(self) -> PubSub: ...

    def db(self, fn: Callable[..., T], *args: Any) -> Awaitable[T]: ...

    def info(self) -> dict[str, Any]: ...
    def cf_connected(self) -> bool: ...

    async def group_info(self) -> list[dict[str, Any]]: ...


class CommandBase:
    """One MQSC command on one queue manager: state and helpers every command family uses."""

    def __init__(self, qm: MqscHost) -> None:
        self.qm = qm
        self.messages: list[str] = []

    def _name(self, cmd: Command, generic: bool = False) -> str:
        if not cmd.name:
            raise MQError(MQRC.MQRCCF_PARM_SYNTAX_ERROR,
                          f"{cmd.verb} {cmd.objtype} needs an object name in parentheses")
        if generic:
            return check_generic_name(cmd.name)
        if cmd.objtype == "CFSTRUCT":
            if not re.fullmatch(r"[A-Z][A-Z0-9]{0,11}", cmd.name):
                raise MQError(MQRC.OBJECT_NAME_ERROR,
                              f"'{echo(cmd.name)}' is not a CF structure name (1-12 of A-Z 0-9, first A-Z)")
            return cmd.name
        if cmd.objtype == "CHANNEL":
            return check_channel_name(cmd.name)
        return check_object_name(cmd.name)

    def _qsgdisp(self, cmd: Command, default: str, allowed: tuple[str, ...]) -> str:
        kw = cmd.get("QSGDISP")
        value = (kw.value or "").upper() if kw else default
        if value not in allowed:
            raise MQError(MQRC.MQRCCF_ATTR_VALUE_ERROR,
                          f"QSGDISP({echo(value)}) is not valid here; use one of {', '.join(allowed)}")
        return value

    def _attribute_keywords(self, cmd: Command) -> list[tuple[str, Any]]:
        # a list attribute (NAMES) gets its items split as MQSC splits them (quotes respected)
        return [(k.name, k.values() if k.name in attributes.LIST_KEYWORDS else k.value)
                for k in cmd.keywords if k.name not in COMMAND_KEYWORDS]

    def _check_cmdscope(self, cmd: Command) -> None:
        kw = cmd.get("CMDSCOPE")
        if kw and kw.value not in ("", " ", self.qm.name):
            raise MQError(MQRC.MQRCCF_ATTR_VALUE_ERROR,
                          f"CMDSCOPE({echo(kw.value)}) is not supported: issue the command to that queue manager's URL")

    async def _find(self, objtype: str, name: str, location: str) -> ObjectDef | None:
        return await self.qm.workflow.find(OBJECT_CLASS[objtype], name, location)


# Keywords of DISPLAY commands that filter rather than name an attribute to show.
_NOT_ATTRIBUTES = COMMAND_KEYWORDS | {"MATCH", "OBJTYPE", "PROFILE", "PRINCIPAL", "GROUP", "OPENTYPE"}
# Attributes IBM returns whatever was asked: the object's name (the row's first key) and these.
_ALWAYS_SHOWN = ("TYPE", "CHLTYPE", "QSGDISP", "QMNAME")


def select_attributes(cmd: Command, rows: list[dict[str, Any]]) -> list[dict[str, Any]]:
    """DISPLAY ... attr attr: IBM returns the object's name, its TYPE and QSGDISP where the object
    has them, and only the attributes asked for (plus the one WHERE tests, also when none is
    asked for); ALL, or neither attribute names nor WHERE, return every attribute. An attribute
    no row has is a syntax error, as in MQSC."""
    asked = [k.name for k in cmd.keywords if k.value is None and k.name not in _NOT_ATTRIBUTES]
    if (not asked and not cmd.has("WHERE")) or cmd.has("ALL") or not rows:
        return rows
    known = set().union(*(row.keys() for row in rows))
    unknown = [name for name in asked if name not in known]
    if unknown:
        raise MQError(MQRC.MQRCCF_PARM_SYNTAX_ERROR,
                      f"{echo(', '.join(unknown))} is not an attribute {cmd.verb} {cmd.objtype} returns")
    where = cmd.value("WHERE").split()
    wanted = set(asked) | set(_ALWAYS_SHOWN) | ({where[0].upper()} if where else set())
    out = []
    for row in rows:
        first = next(iter(row))
        out.append({k: v for k, v in row.items() if k == first or k in wanted})
    return out

