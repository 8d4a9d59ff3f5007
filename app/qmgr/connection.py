"""Connections (hconn) and object handles (hobj) of one queue manager: this process's state of
an application's connection, like a z/OS address space's thread state. Everything a peer must
recover (units of work, open counts) is in the coupling facility, not here."""

from __future__ import annotations

import asyncio
import contextvars
import time
from dataclasses import dataclass, field
from typing import Any

from app.core.options import OpenOptions
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


@dataclass
class Connection:
    """A connection handle (hconn) and its unit of work."""

    hconn: str
    appl_name: str
    user_id: str = ""  # the authenticated user (MQMD UserIdentifier); empty with QSG_AUTH=off
    principal: Any = None  # app.security.rights.Principal, checked at MQOPEN/MQPUT1
    owner: object | None = None  # the session that made it (``connection_owner``); None: plain HTTP
    handles: dict[str, Handle] = field(default_factory=dict)
    uow_tags: set[str] = field(default_factory=set)  # structures holding this UOW's operations
    lost_tags: set[str] = field(default_factory=set)  # of those, structures that failed meanwhile
    last_used: float = field(default_factory=time.monotonic)
    busy: int = 0  # calls in progress (a waiting get keeps an idle client's connection alive)
    calls_done: asyncio.Event = field(default_factory=asyncio.Event)  # set when busy drops to 0
    next_hobj: int = 1
    pending_triggers: list = field(default_factory=list)  # trigger messages held until the UOW ends

    def __post_init__(self) -> None:
        # MQMD UserIdentifier is 12 characters: a longer authenticated name is truncated, as
        # IBM MQ truncates (app.core.userid); ``principal`` keeps the whole name for authority.
        self.user_id = mqmd_user_id(self.user_id)
