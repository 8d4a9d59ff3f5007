"""The bottom of the MQI: the connection table of one queue manager (connections and their
object handles live in this process, like a z/OS address space's thread state) and the checks
every verb makes on it (handles, quiescing, MAXHANDS, MAXUMSGS, calls in progress)."""

from __future__ import annotations

import asyncio
import contextlib
import time
from collections.abc import Iterator
from typing import TYPE_CHECKING

from app.cf.engine import OutcomeUnknownError
from app.core.errors import MQError
from app.core.mqmd import MsgIdGenerator
from app.core.objects import ObjectDef
from app.core.reasons import MQRC
from app.core.rights import current_principal
from app.core.userid import default_user_id
from app.qmgr.connection import Connection, ConnectionTable, Handle

if TYPE_CHECKING:
    from app.qmgr.ports import MqiHost


class MqiTable:
    """Connection and handle table of one queue manager, with the checks every verb makes."""

    def __init__(self, qm: MqiHost) -> None:
        self.qm = qm
        self.connections = ConnectionTable(qm.settings.max_conns_per_user)  # counted per user (2025)
        # Connections ended because this QM lost its place in the group: hconn -> (whether a unit
        # of work was in progress, when it ended). Their next MQCMIT answers MQRC_BACKED_OUT
        # (peer recovery backed the work out), every other call MQRC_CONNECTION_BROKEN.
        self.broken: dict[str, tuple[bool, float]] = {}
        self.msg_ids = MsgIdGenerator(qm.name)
        # UserIdentifier is never blank (IBM): with authentication off, the configured or OS user
        self.default_user = default_user_id(qm.settings.default_user)
        self._system = Connection(f"{qm.name}-SYSTEM", qm.name, self.default_user)  # not in the table: never reaped
        self._reaper: asyncio.Task[None] | None = None

    def connection(self, hconn: str) -> Connection:
        if hconn in self.broken:
            raise MQError(MQRC.CONNECTION_BROKEN, f"connection '{hconn}' ended: queue manager {self.qm.name} "
                                                  f"lost its place in the group")
        conn = self.connections.get(hconn)
        caller = current_principal.get()
        # A connection handle is its user's: another authenticated user may not borrow it
        # (and its rights) by knowing the handle - to that user it is no valid handle at all.
        if conn is None or (caller is not None and conn.principal is not None and caller.name != conn.principal.name):
            raise MQError(MQRC.HCONN_ERROR, f"connection handle '{hconn}' is not valid on {self.qm.name}")
        conn.last_used = time.monotonic()
        return conn

    def handle(self, conn: Connection, hobj: str) -> Handle:
        handle = conn.handles.get(hobj)
        if handle is None:
            if hobj in conn.qmgr_handles:
                raise MQError(MQRC.HOBJ_ERROR, f"object handle '{hobj}' is the queue manager object's: only "
                                               f"MQINQ and MQCLOSE apply to it")
            raise MQError(MQRC.HOBJ_ERROR, f"object handle '{hobj}' is not valid for this connection")
        if handle.deleted:
            raise MQError(MQRC.Q_DELETED, f"dynamic queue {handle.resolved.base.name} was deleted: close the handle")
        if handle.changed:
            raise MQError(MQRC.OBJECT_CHANGED, f"{handle.resolved.opened.name} was changed since it was opened")
        return handle

    def check_handle(self, hconn: str, hobj: str) -> None:
        """Raise what a call on ``hconn``/``hobj`` (a queue handle) would raise for the handles
        themselves (2018, 2019, ...): checked before a batch's body is even parsed, so that a
        made-up handle costs nothing however large the body."""
        self.handle(self.connection(hconn), hobj)

    @contextlib.contextmanager
    def _in_call(self, conn: Connection) -> Iterator[None]:
        """Mark a call in progress on ``conn`` (MQDISC and the idle timeout wait for it)."""
        conn.busy += 1
        try:
            yield
        except OutcomeUnknownError as exc:
            # Sent and never answered: what the call did is unknown, so its unit of work can
            # only be backed out (the structure it went to included).
            conn.uow_tags.add(exc.tag)
            conn.uow_broken = conn.uow_broken or "a call of it was not answered by the coupling facility"
            raise
        finally:
            conn.busy -= 1
            conn.last_used = time.monotonic()
            if conn.busy == 0:
                conn.calls_done.set()

    def _current(self, opened: ObjectDef) -> ObjectDef:
        """The opened object's definition now: attributes changed since MQOPEN (PUT/GET
        inhibit of an alias, DEFPRTY, DEFPSIST) apply to open handles at once, as on z/OS."""
        try:
            current = self.qm.cache.queue(opened.name)
        except MQError:
            return opened
        if current is None or (current.objtype, current.qsgdisp) != (opened.objtype, opened.qsgdisp):
            return opened
        return current

    def _check_running(self, fail_if_quiescing: bool = True) -> None:
        """New work is refused while the QM quiesces; a call that did not ask FAIL_IF_QUIESCING
        may still finish what its connection started (commit, close, non-quiescing puts)."""
        status = self.qm.status
        if status == "RUNNING" or (status == "REJOINING" and self.qm.tolerates_cf_loss()):
            return  # CFCONLOS(TOLERATE): private work goes on; shared queues answer 2345 meanwhile
        if status in ("QUIESCING", "STOPPING"):
            if fail_if_quiescing:
                raise MQError(MQRC.Q_MGR_QUIESCING, f"queue manager {self.qm.name} is quiescing")
            return
        raise MQError(MQRC.Q_MGR_NOT_AVAILABLE, f"queue manager {self.qm.name} is {status.lower()}")

    def _uow_room(self, conn: Connection, pending: int = 0) -> int:
        """MAXUMSGS (IBM MQ for z/OS, ALTER QMGR MAXUMSGS, default 10000): how many more messages
        the connection's unit of work may put or get (beyond ``pending`` about to be put);
        none: MQRC_SYNCPOINT_LIMIT_REACHED (2024). IBM counts the messages put with
        MQPMO_SYNCPOINT and got with MQGMO_SYNCPOINT since the unit of work began (each message
        of a put-batch or get-batch; SYNCPOINT_IF_PERSISTENT counts the persistent ones)."""
        limit = int(self.qm.attrs.get("MAXUMSGS", 10000))
        room = limit - conn.uow_messages - pending
        if room <= 0:
            raise MQError(MQRC.SYNCPOINT_LIMIT_REACHED,
                          f"the unit of work holds {conn.uow_messages + pending} uncommitted messages: MAXUMSGS is "
                          f"{limit} (MQCMIT or MQBACK, or ALTER QMGR MAXUMSGS)")
        return room

    def _check_handles(self, conn: Connection) -> None:
        """MAXHANDS: the handles one connection may have open at once (IBM MQ for z/OS, ALTER
        QMGR MAXHANDS, default 256). One more MQOPEN or MQPUT1 past it: MQRC_HANDLE_NOT_AVAILABLE
        (2017: "an MQOPEN, MQPUT1 or MQSUB call was issued, but the maximum number of open
        handles allowed for the current task has already been reached")."""
        limit = int(self.qm.attrs.get("MAXHANDS", 256))
        if conn.open_handles >= limit:
            raise MQError(MQRC.HANDLE_NOT_AVAILABLE,
                          f"the connection has {conn.open_handles} handles open: MAXHANDS is {limit}")

    async def _current_authority(self, conn: Connection) -> None:
        """IBM: a new MQOPEN, MQPUT1 or MQSUB is checked against the user's authority now, not as
        it was at MQCONN (handles already open keep their access). The connection's principal is
        resolved again from the security cache (emptied by every security change: no SQL per
        call); a user deleted since MQCONN gets MQRC_NOT_AUTHORIZED."""
        conn.principal = await self.qm.security.live(conn.principal)
