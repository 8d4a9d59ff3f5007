"""Connections (hconn) and object handles (hobj) of one queue manager: this process's state of
an application's connection, like a z/OS address space's thread state. Everything a peer must
recover (units of work, open counts) is in the coupling facility, not here."""

from __future__ import annotations

import asyncio
import contextvars
import time
from dataclasses import dataclass, field
from typing import Any

from app.core.errors import MQError
from app.core.options import OpenOptions
from app.core.reasons import MQRC
from app.core.userid import mqmd_user_id
from app.qmgr.definitions import ResolvedQueue

#: Who owns the connections an MQCONN makes in this context: the session (``app.api.session``)
#: whose socket carries the call, or None for a plain HTTP call. A connection with an owner ends
#: the moment its owner goes away (``Mqi.end_owned``) instead of after the idle timeout.
connection_owner: contextvars.ContextVar[object | None] = contextvars.ContextVar("qsg_connection_owner",
                                                                                 default=None)


@dataclass
class Handle:
    """An object handle (hobj) of a connection."""

    hobj: str
    resolved: ResolvedQueue
    options: OpenOptions
    gen: int
    browse_cursor: str = ""
    changed: bool = False
    # This handle's MQOPEN created the (dynamic) queue: closing it deletes a TEMPDYN queue.
    creator: bool = False
    # The dynamic queue was deleted while this handle had it open: MQRC_Q_DELETED but for MQCLOSE.
    deleted: bool = False
    # Message groups in progress under LOGICAL_ORDER (app.core.msggroups): puts, gets, browse; and
    # whether the browse started with LOGICAL_ORDER (MQRC_INCONSISTENT_BROWSE when it changes).
    put_msg_group: Any = None
    get_msg_group: Any = None
    browse_msg_group: Any = None
    browse_logical: bool | None = None
    # MQOO_ALTERNATE_USER_AUTHORITY: the alternate user id, which z/OS puts in the UserIdentifier
    # of the handle's default-context puts ("" when the open named none).
    alternate_user_id: str = ""
    # MQOO_SAVE_ALL_CONTEXT: the MQMD of the message the last MQGET got (None before the first,
    # or after a browse), whose context a put with MQPMO_PASS_*_CONTEXT naming this handle passes.
    saved_context: Any = None


@dataclass
class QmgrHandle:
    """An object handle of the queue manager object (MQOPEN with ObjectType MQOT_Q_MGR), or of a
    namelist (MQOT_NAMELIST: ``namelist`` names it): for MQINQ only (IBM allows no other open
    option for them)."""

    hobj: str
    options: OpenOptions
    namelist: str = ""


@dataclass
class AsyncPutStatus:
    """What MQSTAT(MQSTAT_TYPE_ASYNC_ERROR) reports: the puts made with MQPMO_ASYNC_RESPONSE (or
    RESPONSE_AS_Q_DEF on a DEFPRESP(ASYNC) queue) since the last MQSTAT, and the first warning
    or failure among them (a later failure replaces a first warning, as IBM documents)."""

    success: int = 0
    warning: int = 0
    failure: int = 0
    comp: int = 0
    reason: int = 0
    object_name: str = ""
    object_qmgr: str = ""
    resolved_name: str = ""
    resolved_qmgr: str = ""


@dataclass
class Connection:
    """A connection handle (hconn) and its unit of work."""

    hconn: str
    appl_name: str
    user_id: str = ""  # the authenticated user (MQMD UserIdentifier); empty with QSG_AUTH=off
    principal: Any = None  # app.core.rights.Principal, checked at MQOPEN/MQPUT1
    owner: object | None = None  # the session that made it (``connection_owner``); None: plain HTTP
    handles: dict[str, Handle] = field(default_factory=dict)
    uow_tags: set[str] = field(default_factory=set)  # structures holding this UOW's operations
    lost_tags: set[str] = field(default_factory=set)  # of those, structures that failed meanwhile
    # Why the unit of work can only be backed out ("" when it can commit): a call of it was sent to
    # the coupling facility and never answered (MQRC_CONNECTION_BROKEN, app/cf/deadline.py). The
    # next MQCMIT backs it out and answers MQRC_BACKED_OUT; MQBACK and MQDISC back it out too.
    uow_broken: str = ""
    # An MQCMIT was sent and never answered: the next MQCMIT, MQBACK or MQDISC completes the
    # commit (roll forward; commit.lua is idempotent), as peer recovery would from its record.
    commit_in_doubt: bool = False
    # A multi-structure commit's record could not be removed after the commit: removed first thing
    # by the connection's next MQCMIT or MQBACK (so no peer may roll a later unit of work forward).
    stale_intent: bool = False
    last_used: float = field(default_factory=time.monotonic)
    busy: int = 0  # calls in progress (a waiting get keeps an idle client's connection alive)
    calls_done: asyncio.Event = field(default_factory=asyncio.Event)  # set when busy drops to 0
    next_hobj: int = 1
    # trigger messages held until the UOW ends: (initiation queue, MQTM, TRIGTYPE)
    pending_triggers: list[tuple[str, dict[str, Any], str]] = field(default_factory=list)
    marked: str | None = None  # structure of this UOW's get marked MQGMO_MARK_SKIP_BACKOUT
    qmgr_handles: dict[str, QmgrHandle] = field(default_factory=dict)  # MQOT_Q_MGR opens (MQINQ)
    # Messages put and got under syncpoint in the current unit of work (MAXUMSGS, MQRC 2024).
    uow_messages: int = 0
    async_status: AsyncPutStatus | None = None  # MQSTAT: made at the first asynchronous put
    # One of the queue manager's own agents (the IGQ agent): what it puts is the queue
    # manager's, PutApplType MQAT_QMGR, as the queue manager's own puts are.
    qmgr_agent: bool = False

    @property
    def open_handles(self) -> int:
        """Handles open now (MAXHANDS, MQRC 2017)."""
        return len(self.handles) + len(self.qmgr_handles)

    def __post_init__(self) -> None:
        # MQMD UserIdentifier is 12 characters: a longer authenticated name is truncated, as
        # IBM MQ truncates (app.core.userid); ``principal`` keeps the whole name for authority.
        self.user_id = mqmd_user_id(self.user_id)


class ConnectionTable(dict[str, Connection]):
    """The connections of a queue manager by hconn, counted per user as they come and go: a user
    may hold at most ``per_user`` of them (``admit``), so that one user cannot open connections
    until the queue manager has no memory left for anyone else's. Reads are the plain dict's;
    only adding and removing a connection (MQCONN, MQDISC, their ends) pay for the count."""

    def __init__(self, per_user: int) -> None:
        super().__init__()
        self.per_user = per_user
        self.per_user_open: dict[str, int] = {}

    def admit(self, user: str) -> None:
        """MQRC_MAX_CONNS_LIMIT_REACHED (2025, IBM's answer to an MQCONN past a connection limit)
        when ``user`` (an authenticated user; "" with authentication off, not limited) holds
        its most connections already."""
        if user and self.per_user_open.get(user, 0) >= self.per_user:
            raise MQError(MQRC.MAX_CONNS_LIMIT_REACHED, f"user '{user}' has {self.per_user} connections open on this "
                                                        "queue manager, the most one user may hold: disconnect some")

    def __setitem__(self, hconn: str, conn: Connection) -> None:
        old = self.get(hconn)
        if old is not None:
            self._count(old, -1)
        super().__setitem__(hconn, conn)
        self._count(conn, 1)

    def __delitem__(self, hconn: str) -> None:
        conn = self[hconn]
        super().__delitem__(hconn)
        self._count(conn, -1)

    def pop(self, hconn: str, *default: Any) -> Any:
        if hconn in self:
            conn = super().pop(hconn)
            self._count(conn, -1)
            return conn
        return super().pop(hconn, *default)

    def clear(self) -> None:
        super().clear()
        self.per_user_open.clear()

    def _count(self, conn: Connection, step: int) -> None:
        user = conn.principal.name if conn.principal is not None else ""
        left = self.per_user_open.get(user, 0) + step
        if left > 0:
            self.per_user_open[user] = left
        else:
            self.per_user_open.pop(user, None)
