"""The MQI verbs of one queue manager: MQCONN, MQDISC, MQOPEN, MQCLOSE, MQPUT, MQPUT1, MQGET,
MQCMIT, MQBACK, MQINQ, MQSET.

Connections and object handles live in this process (like a z/OS address space's thread
state); everything a peer must recover (units of work, open counts) is in the coupling facility.
"""

from __future__ import annotations

import asyncio
import contextlib
import dataclasses
import logging
import secrets
import time
from collections.abc import Sequence
from typing import TYPE_CHECKING, Any

import orjson

from app.activity import Verb, note, record_batch, recorded, room_for_batch
from app.cf.engine import BatchMessage, FencedError, GetResult, OutcomeUnknownError
from app.cf.keys import is_private, structure_name
from app.core import attributes, groups, selectors
from app.core.calls import MAX_BATCH, GetCall, GotMessage, PutCall, PutOutcome
from app.core.convert import convert_message
from app.core.dynamic import parse_close_options
from app.core.errors import BatchError, MQError
from app.core.expiry import UNLIMITED, expiry_at, remaining_tenths
from app.core.igq import IGQ_XMITQ, decrement_inner_expiry, transmission_message, waited_tenths
from app.core.mqmd import (
    APPL_TYPE_CLIENT,
    APPL_TYPE_QMGR,
    CCSID_Q_MGR,
    IDENTITY_FIELDS,
    MQMD,
    NO_ACCOUNTING_TOKEN,
    NO_ID,
    ORIGIN_FIELDS,
    MsgIdGenerator,
    format_put_time,
    message_length,
    validate_put_md,
)
from app.core.names import check_object_name, is_object_name
from app.core.objects import ObjectDef
from app.core.options import (
    OpenOptions,
    PutOptions,
    open_context,
    parse_object_type,
    parse_open_options,
    parse_put_options,
    resolve_open_options,
)
from app.core.reasons import MQRC, CompCode
from app.core.reports import report_code
from app.core.userid import default_user_id
from app.qmgr import namelists
from app.qmgr.connection import AsyncPutStatus, Connection, ConnectionTable, Handle, QmgrHandle, connection_owner
from app.qmgr.definitions import ResolvedQueue, queue_location, recoverable
from app.qmgr.display import display_object, live_counts
from app.qmgr.dynamic import PREDEFINED, deftype
from app.security.rights import current_principal

if TYPE_CHECKING:
    from app.qmgr.ports import MqiHost

log = logging.getLogger(__name__)

#: How long a connection ended because its QM lost its place in the group still answers
#: 2003/2009 (then MQRC_HCONN_ERROR, as for any unknown handle): long enough for a client cut
#: off by the same partition to come back and learn what became of its unit of work.
BROKEN_KEPT_S = 3600.0


class Mqi:
    """Connection table and MQI verbs of one queue manager."""

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
        self._reaper: asyncio.Task | None = None

    def start(self) -> None:
        self._reaper = asyncio.create_task(self._reap_idle(), name=f"idle-reaper-{self.qm.name}")

    async def stop(self) -> None:
        if self._reaper:
            self._reaper.cancel()
            await asyncio.gather(self._reaper, return_exceptions=True)

    # ---- connections ----------------------------------------------------------------------

    @recorded(Verb.CONN)
    async def connect(self, appl_name: str | None) -> Connection:
        """MQCONN."""
        if appl_name is not None and (not isinstance(appl_name, str) or len(appl_name) > 28):
            raise MQError(MQRC.OPTIONS_ERROR, "appl_name must be a string of at most 28 characters")
        self._check_running()
        principal = current_principal.get()
        security = self.qm.security
        security.check_qmgr(principal, "CONNECT")
        self.connections.admit(principal.name if principal else "")
        appl = (appl_name or "").strip() or "REST CLIENT"
        if principal is not None and not security.may_set_context(principal):
            appl = principal.name[:28]  # PutApplName cannot be chosen without the context right
        hconn = f"{self.qm.name}-{secrets.token_hex(12)}"
        conn = Connection(hconn, appl, principal.name if principal else self.default_user, principal,
                          owner=connection_owner.get())
        self.connections[hconn] = conn
        return conn

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

    @recorded(Verb.DISC)
    async def disconnect(self, hconn: str, *, commit: bool = True) -> None:
        """MQDISC: close every handle and commit (or, for a broken connection, back out).

        Calls still in progress on the connection finish first, so that their work is part of
        what is committed or backed out (never left in a unit of work nobody owns); a get that
        waits is woken and ends with MQRC_CONNECTION_BROKEN.
        """
        conn = self.connection(hconn)
        del self.connections[hconn]
        for handle in conn.handles.values():
            self.qm.cf.listener.wake(handle.resolved.location)
        while conn.busy:
            conn.calls_done.clear()
            await conn.calls_done.wait()
        broken = conn.uow_broken
        try:
            if conn.commit_in_doubt or (commit and not broken):
                await self._commit(conn)  # (an MQCMIT without an answer is completed, never undone)
            else:
                await self._backout(conn)
                conn.uow_broken = ""
            await self.qm.pubsub.connection_ended(conn)  # before its handles: managed queues go with them
            for handle in list(conn.handles.values()):
                await self._close_handle(conn, handle)
            if commit and broken:
                raise MQError(MQRC.BACKED_OUT, f"the unit of work was backed out: {broken}")
        except MQError as exc:
            if isinstance(exc, FencedError):
                # This QM lost its place in the group: recovery resolves the connection's work,
                # and its client learns so from its next call (e.g. the idle timeout ended it).
                self.broken.setdefault(hconn, (bool(conn.uow_tags), time.monotonic()))
                raise
            if exc.reason == MQRC.BACKED_OUT or hconn in self.broken:
                raise
            # The coupling facility did not answer: keep the connection, so that its unit of work
            # and handles are never orphaned - the client's retry or the idle timeout ends it later
            # (each step is idempotent).
            conn.last_used = time.monotonic()
            self.connections[hconn] = conn
            raise

    @recorded(Verb.CMIT)
    async def commit(self, hconn: str) -> None:
        """MQCMIT."""
        had_work, _ = self.broken.get(hconn, (False, 0.0))
        if had_work:
            self.broken[hconn] = (False, time.monotonic())  # reported once; then 2009 as any call
            raise MQError(MQRC.BACKED_OUT, "the unit of work was backed out: the connection ended when queue "
                                           f"manager {self.qm.name} lost its place in the group")
        await self._commit(self.connection(hconn))

    @recorded(Verb.BACK)
    async def backout(self, hconn: str) -> None:
        """MQBACK (a get marked MQGMO_MARK_SKIP_BACKOUT stays got, in a new unit of work).

        After an MQCMIT that was never answered (MQRC_CONNECTION_BROKEN) the commit may have
        happened: it is completed instead, and MQBACK answers MQRC_CONNECTION_BROKEN again."""
        conn = self.connection(hconn)
        if conn.commit_in_doubt:
            await self._commit(conn)
            raise MQError(MQRC.CONNECTION_BROKEN, "the unit of work cannot be backed out: the MQCMIT whose "
                                                  "outcome was unknown has been completed (it is committed)")
        await self._backout(conn, keep_marked=True)
        conn.uow_broken = ""

    async def commit_unit_of_work(self, conn: Connection) -> None:
        """Commit the unit of work of a connection the queue manager's own agent owns (the IGQ
        agent): as MQCMIT, without the connection table."""
        await self._commit(conn)

    async def backout_unit_of_work(self, conn: Connection) -> None:
        """Back out the unit of work of an agent's own connection: as MQBACK."""
        await self._backout(conn)

    async def _commit(self, conn: Connection) -> None:
        await self._clear_stale_intent(conn)
        if conn.uow_broken and not conn.commit_in_doubt:
            # A call of the unit of work was never answered: it cannot commit (what it did is
            # unknown), so all of it is backed out once the coupling facility answers again
            # (until then this MQCMIT fails with MQRC_CF_NOT_AVAILABLE and changes nothing more).
            why = conn.uow_broken
            await self._backout(conn)
            conn.uow_broken = ""
            raise MQError(MQRC.BACKED_OUT, f"the unit of work was backed out: {why}")
        failed = conn.uow_tags & conn.lost_tags
        conn.lost_tags.clear()
        if failed:
            # Part of the unit of work was in a structure that failed: it cannot commit whole,
            # so none of it does (recovery brings back the persistent messages it got).
            await self._backout(conn)
            raise MQError(MQRC.BACKED_OUT, f"the unit of work was backed out: CF structure(s) "
                                           f"{', '.join(structure_name(t) for t in sorted(failed))} failed")
        # A unit of work spanning several structures commits each in turn; the order is
        # recorded first so that a peer can finish an interrupted commit (roll forward).
        tags = sorted(conn.uow_tags)
        intent = False
        try:
            if len(tags) > 1:
                await self.qm.cf.record_commit_intent(self.qm.name, conn.hconn, tags)
                intent = True
            for tag in tags:
                await self.qm.cf.commit(tag, self.qm.name, conn.hconn)
                conn.uow_tags.discard(tag)
        except OutcomeUnknownError:
            # The commit (or its record) was sent and not answered: it may have happened. It is
            # completed, never undone: by the next MQCMIT, MQBACK or MQDISC, or by peer recovery.
            conn.commit_in_doubt = True
            raise
        except FencedError:
            conn.uow_tags.clear()
            if intent:
                # The commit record was written before peer recovery fenced this incarnation, and
                # recovery reads the records only after fencing: it finishes this commit.
                log.warning("%s: commit of %s was interrupted when the queue manager lost its place in "
                            "the group; peer recovery completes it from the commit record", self.qm.name, conn.hconn)
                return
            raise MQError(MQRC.BACKED_OUT, "the unit of work was backed out: queue manager "
                                           f"{self.qm.name} lost its place in the group") from None
        except MQError as exc:
            if not intent:
                raise  # nothing was committed (one structure's commit.lua is all or nothing)
            # The commit record is written (and maybe some structures committed): the unit of
            # work is committing, whatever stopped this MQCMIT - an answer "nothing happened"
            # would be false. The next MQCMIT, MQBACK or MQDISC (or peer recovery) completes it.
            conn.commit_in_doubt = True
            raise MQError(MQRC.CONNECTION_BROKEN, f"the commit was interrupted ({exc.message}): it is "
                                                  "completed by the next MQCMIT") from exc
        conn.commit_in_doubt = False
        if len(tags) > 1:
            conn.stale_intent = True
            with contextlib.suppress(MQError):  # committed all the same: the record goes later
                await self._clear_stale_intent(conn)
        conn.marked = None
        conn.uow_messages = 0  # a new unit of work starts (MAXUMSGS)
        await self.qm.triggers.unit_of_work_ended(conn, committed=True)

    async def _clear_stale_intent(self, conn: Connection) -> None:
        """Remove the record of the connection's last multi-structure commit, done already."""
        if conn.stale_intent:
            await self.qm.cf.clear_commit_intent(self.qm.name, conn.hconn)
            conn.stale_intent = False

    async def _backout(self, conn: Connection, *, keep_marked: bool = False) -> None:
        await self._clear_stale_intent(conn)
        marked, conn.marked = conn.marked, None
        for tag in sorted(conn.uow_tags):
            if keep_marked and tag == marked:
                # z/OS MQGMO_MARK_SKIP_BACKOUT: the marked get is not backed out; it forms a new
                # unit of work of its own, which the application commits or backs out.
                await self.qm.cf.backout(tag, self.qm.name, conn.hconn, keep_marked=True)
                continue
            await self.qm.cf.backout(tag, self.qm.name, conn.hconn)
            conn.uow_tags.discard(tag)
        for handle in conn.handles.values():  # a backed-out group starts again from its first message
            handle.get_group = None
            handle.put_group = None
        conn.uow_messages = 0  # a new unit of work starts (MAXUMSGS)
        await self.qm.triggers.unit_of_work_ended(conn, committed=False)

    def structure_failed(self, tag: str) -> None:
        """A structure failed: units of work with operations in it can no longer commit."""
        for conn in self.connections.values():
            if tag in conn.uow_tags:
                conn.lost_tags.add(tag)

    async def _reap_idle(self) -> None:
        """End connections idle past the timeout; their unit of work is backed out."""
        timeout = self.qm.settings.idle_timeout_s
        while True:
            await asyncio.sleep(min(timeout / 4, 5.0))
            now = time.monotonic()
            for hconn, (_, ended) in list(self.broken.items()):
                if now - ended > max(timeout, BROKEN_KEPT_S):
                    del self.broken[hconn]  # a client that never came back: forget its handle
            for conn in list(self.connections.values()):
                # A connection owned by a session lives as long as its socket (which ends it at
                # once, ``end_owned``), as a client channel's does: idleness proves nothing there.
                if conn.busy == 0 and conn.owner is None and now - conn.last_used > timeout:
                    log.info("connection %s (%s) idle for %.0fs: ending it and backing out its unit of work",
                             conn.hconn, conn.appl_name, now - conn.last_used)
                    try:
                        await self.disconnect(conn.hconn, commit=False)
                    except MQError as exc:
                        log.warning("could not end idle connection %s yet: %s", conn.hconn, exc)
                    except Exception:  # the reaper must go on whatever one connection did
                        log.exception("ending idle connection %s failed", conn.hconn)

    @contextlib.contextmanager
    def _in_call(self, conn: Connection):
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

    def _current(self, opened):
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

    def break_shared_connections(self) -> list[Connection]:
        """CFCONLOS(TOLERATE) and the lease lost: the connections that touched shared queues (a
        unit of work or a handle in a CF structure) end now, as ``break_all_connections`` ends
        every one - peer recovery resolves their shared work; the caller backs out their private
        part. Connections that touched only private queues go on. Returns those ended."""
        now = time.monotonic()
        ended = [c for c in self.connections.values()
                 if any(not is_private(t) for t in c.uow_tags)
                 or any(not is_private(h.resolved.location.tag) for h in c.handles.values())]
        for conn in ended:
            self.broken[conn.hconn] = (bool(conn.uow_tags), now)
            del self.connections[conn.hconn]
            conn.pending_triggers.clear()
        self.qm.pubsub.connections_broken([conn.hconn for conn in ended])
        self._system.uow_tags.clear()
        self.qm.cf.wake_all_waiters()
        return ended

    async def end_private_part(self, conn: Connection) -> None:
        """The private part of a connection ended by ``break_shared_connections``: its unit of
        work in this QM's page set backed out, its handles on private queues closed."""
        for tag in [t for t in conn.uow_tags if is_private(t)]:
            await self.qm.cf.backout(tag, self.qm.name, conn.hconn)
        conn.uow_tags.clear()
        for handle in list(conn.handles.values()):
            if is_private(handle.resolved.location.tag):
                await self.qm.cf.close_queue(handle.resolved.location, self.qm.name, f"{conn.hconn}:{handle.hobj}")
        conn.handles.clear()

    def break_all_connections(self) -> int:
        """This QM lost its place in the group: every connection ends now, without a word to the
        coupling facility (peer recovery or the rejoin resolves their units of work). Waiting
        getters are woken so they end at once. Returns how many ended."""
        now = time.monotonic()
        ended = list(self.connections.values())
        for conn in ended:
            self.broken[conn.hconn] = (bool(conn.uow_tags), now)
            conn.uow_tags.clear()
            conn.pending_triggers.clear()  # the unit of work they wait for is backed out
        self.connections.clear()
        self.qm.pubsub.connections_broken([conn.hconn for conn in ended])
        self._system.uow_tags.clear()
        self.qm.cf.wake_all_waiters()
        return len(ended)

    async def end_owned(self, owner: object) -> int:
        """The client behind ``owner`` (a session whose socket closed) is gone: each connection it
        made ends now, as when a client channel ends abnormally - its unit of work is backed out
        and its handles are closed (an exclusive input open is released for the next client).
        Calls still in progress finish first (a waiting get is woken), as for MQDISC. Returns
        how many ended; one connection that cannot end yet (the coupling facility did not
        answer) stays for the idle timeout, without its owner, and does not stop the others."""
        ended = 0
        for conn in [c for c in self.connections.values() if c.owner is owner]:
            try:
                await self.disconnect(conn.hconn, commit=False)
                ended += 1
            except MQError as exc:
                if self.connections.get(conn.hconn) is conn:
                    conn.owner = None  # the idle reaper retries it
                log.warning("could not end connection %s of a closed session yet: %s", conn.hconn, exc)
        return ended

    async def end_all_connections(self) -> None:
        """Shutdown: every connection ends abnormally, so its unit of work is backed out and its
        handles closed - nothing is left for peer recovery."""
        for hconn in list(self.connections):
            try:
                await self.disconnect(hconn, commit=False)
            except MQError as exc:
                log.warning("could not end connection %s at shutdown: %s", hconn, exc)

    # ---- handles ------------------------------------------------------------------------

    async def resolve_target(self, object_name: Any, object_qmgr: Any) -> ResolvedQueue:
        """Name resolution: a local queue or alias, or (intra-group queuing) a queue of another
        QM of the group, reached through SYSTEM.QSG.TRANSMIT.QUEUE."""
        if not isinstance(object_name, str) or not object_name:
            raise MQError(MQRC.OBJECT_NAME_ERROR, "object_name is required")
        if not isinstance(object_qmgr, str):
            raise MQError(MQRC.Q_MGR_NAME_ERROR, "object_qmgr must be a string")
        check_object_name(object_name)
        target_qmgr = object_qmgr.strip()
        if target_qmgr and target_qmgr not in (self.qm.name, self.qm.qsg):
            # ObjectQMgrName is resolved first: it may name a queue-manager alias (a QREMOTE
            # with a blank RNAME) whose RQMNAME is the queue manager meant.
            alias = self.qm.cache.queue(target_qmgr) if is_object_name(target_qmgr) else None
            if alias is not None and alias.objtype == "QREMOTE" and not str(alias.attrs.get("RNAME", "")).strip():
                target_qmgr = str(alias.attrs.get("RQMNAME", "")).strip() or self.qm.name
            if target_qmgr not in (self.qm.name, self.qm.qsg):
                return await self._resolve_remote(object_name, target_qmgr)
        named = self.qm.cache.queue(object_name)
        if named is not None and named.objtype == "QREMOTE":
            return await self._resolve_remote_definition(named)
        if named is not None and named.objtype == "QALIAS" and named.attrs.get("TARGTYPE", "QUEUE") == "QUEUE":
            # An alias may name a remote queue definition too (IBM): the alias comes first in
            # the resolution path (its PUT and defaults apply), then the remote definition's.
            target = self.qm.cache.queue(str(named.attrs.get("TARGET", "")).strip())
            if target is not None and target.objtype == "QREMOTE":
                remote = await self._resolve_remote_definition(target)
                return ResolvedQueue(named, remote.base, remote.location, remote=remote.remote)
        return self.qm.cache.resolve_queue(object_name)

    async def _resolve_remote_definition(self, remote) -> ResolvedQueue:
        """A local definition of a remote queue: RNAME at RQMNAME, reached through the group
        (the only transmission this emulator has is intra-group queuing)."""
        rname = str(remote.attrs.get("RNAME", "")).strip()
        rqmname = str(remote.attrs.get("RQMNAME", "")).strip()
        xmitq = str(remote.attrs.get("XMITQ", "")).strip()
        if not rname:
            raise MQError(MQRC.UNKNOWN_OBJECT_NAME, f"{remote.name} is a queue-manager alias, not a queue")
        if not rqmname or rqmname == self.qm.name:
            raise MQError(MQRC.UNKNOWN_REMOTE_Q_MGR,
                          f"{remote.name}: RQMNAME is blank or this queue manager (IBM's MQRC_UNKNOWN_REMOTE_Q_MGR)")
        if xmitq and xmitq != IGQ_XMITQ:
            raise MQError(MQRC.UNKNOWN_REMOTE_Q_MGR,
                          f"{remote.name}: XMITQ({xmitq}) - only {IGQ_XMITQ} (intra-group queuing) is available")
        resolved = await self._resolve_remote(rname, rqmname)
        # the remote definition is the first in the resolution path: its PUT and defaults apply
        return ResolvedQueue(remote, resolved.base, resolved.location, remote=resolved.remote)

    async def _resolve_remote(self, queue: str, target_qmgr: str) -> ResolvedQueue:
        members = {m.name for m in await self.qm.membership.members()}
        if target_qmgr not in members:
            raise MQError(MQRC.UNKNOWN_OBJECT_Q_MGR, f"'{target_qmgr}' is not a queue manager of {self.qm.qsg}")
        if self.qm.attrs.get("IGQ") != "ENABLED":
            raise MQError(MQRC.UNKNOWN_OBJECT_Q_MGR,
                          f"{target_qmgr} is reached by intra-group queuing, which is DISABLED on {self.qm.name}")
        xmitq = self.qm.cache.queue(IGQ_XMITQ)
        if xmitq is None:
            raise MQError(MQRC.UNKNOWN_OBJECT_NAME, f"{IGQ_XMITQ} is not defined")
        if xmitq.qsgdisp != "SHARED" or xmitq.attrs.get("USAGE") != "XMITQ":
            raise MQError(MQRC.XMIT_Q_USAGE_ERROR, f"{IGQ_XMITQ} must be a shared queue with USAGE(XMITQ)")
        return ResolvedQueue(xmitq, xmitq, queue_location(self.qm.cache, xmitq), remote=(queue, target_qmgr))

    def invalidate_igq(self) -> None:
        """IGQ was switched: handles resolved through the group fail with MQRC_OBJECT_CHANGED."""
        for conn in self.connections.values():
            for handle in conn.handles.values():
                if handle.resolved.remote is not None:
                    handle.changed = True

    @recorded(Verb.OPEN)
    async def open(self, hconn: str, object_name: Any, object_qmgr: Any, options: Any,
                   dynamic_q_name: Any = "", alternate_user_id: str = "",
                   object_type: Any = "Q") -> Handle | QmgrHandle:
        """MQOPEN of a queue (local or alias), or of a model queue, which creates a dynamic
        queue named from ``dynamic_q_name`` (app/qmgr/dynamic.py); with ``object_type``
        Q_MGR (MQOT_Q_MGR) of the queue manager object itself, for MQINQ. ``alternate_user_id``
        is MQOD AlternateUserId, used with MQOO_ALTERNATE_USER_AUTHORITY."""
        conn = self.connection(hconn)
        kind = parse_object_type(object_type)
        self._check_handles(conn)
        # In progress from here (no await before): MQDISC, or the end of the connection's session,
        # waits for the open and then closes its handle too, so no open count is left to nobody.
        with self._in_call(conn):
            await self._current_authority(conn)
            if kind in ("Q_MGR", "NAMELIST"):
                return self._open_qmgr(conn, object_name, object_qmgr, options, kind == "NAMELIST")
            return await self._open(conn, object_name, object_qmgr, options, dynamic_q_name, alternate_user_id)

    async def _current_authority(self, conn: Connection) -> None:
        """IBM: a new MQOPEN, MQPUT1 or MQSUB is checked against the user's authority now, not as
        it was at MQCONN (handles already open keep their access). The connection's principal is
        resolved again from the security cache (emptied by every security change: no SQL per
        call); a user deleted since MQCONN gets MQRC_NOT_AUTHORIZED."""
        conn.principal = await self.qm.security.live(conn.principal)

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

    def _open_qmgr(self, conn: Connection, object_name: Any, object_qmgr: Any, options: Any,
                   namelist: bool = False) -> QmgrHandle:
        """MQOPEN of the queue manager object (MQOT_Q_MGR), or of a namelist (MQOT_NAMELIST,
        ``namelist``). IBM: ObjectName blank or the local queue manager's name (a namelist's
        name); only MQOO_INQUIRE (with FAIL_IF_QUIESCING) is valid for them, other options
        answer MQRC_OPTION_NOT_VALID_FOR_TYPE."""
        if not isinstance(options, list):
            raise MQError(MQRC.OPTIONS_ERROR, "options must be a list of MQOO_ names")
        chosen = parse_open_options(options)
        self._check_running("FAIL_IF_QUIESCING" in chosen)
        other = chosen - {"INQUIRE", "FAIL_IF_QUIESCING"}
        if other:
            raise MQError(MQRC.OPTION_NOT_VALID_FOR_TYPE,
                          f"{', '.join(sorted(other))} cannot open {'a namelist' if namelist else 'the queue manager object'}: "
                          "only INQUIRE")
        name = object_name.strip() if isinstance(object_name, str) else None
        qmgr = object_qmgr.strip() if isinstance(object_qmgr, str) else None
        if namelist:
            if qmgr not in ("", self.qm.name):
                raise MQError(MQRC.UNKNOWN_OBJECT_Q_MGR, f"object_qmgr must be blank or {self.qm.name}")
            found = namelists.find(self.qm.cache, object_name)
            self.qm.security.check(conn.principal, "INQ", "NAMELIST", found.name)
            handle = QmgrHandle(str(conn.next_hobj), OpenOptions(None, False, False, False, True, False,
                                                                 "FAIL_IF_QUIESCING" in chosen), found.name)
            conn.next_hobj += 1
            conn.qmgr_handles[handle.hobj] = handle
            return handle
        if name not in ("", self.qm.name):
            raise MQError(MQRC.UNKNOWN_OBJECT_NAME,
                          f"object_name must be blank or {self.qm.name} to open the queue manager object")
        if qmgr not in ("", self.qm.name):
            raise MQError(MQRC.UNKNOWN_OBJECT_Q_MGR, f"object_qmgr must be blank or {self.qm.name}")
        self.qm.security.check_qmgr(conn.principal, "INQ")
        hobj = str(conn.next_hobj)
        conn.next_hobj += 1
        handle = QmgrHandle(hobj, OpenOptions(None, False, False, False, True, False,
                                              "FAIL_IF_QUIESCING" in chosen))
        conn.qmgr_handles[hobj] = handle
        return handle

    def _model(self, object_name: Any, object_qmgr: Any) -> ObjectDef | None:
        """The model queue an MQOPEN names, if it names one of this queue manager."""
        if not isinstance(object_name, str) or not isinstance(object_qmgr, str) or not is_object_name(object_name):
            return None
        if object_qmgr.strip() not in ("", self.qm.name, self.qm.qsg):
            return None
        named = self.qm.cache.queue(object_name)
        return named if named is not None and named.objtype == "QMODEL" else None

    async def _open(self, conn: Connection, object_name: Any, object_qmgr: Any, options: Any,
                    dynamic_q_name: Any = "", alternate_user_id: str = "") -> Handle:
        if not isinstance(options, list):
            raise MQError(MQRC.OPTIONS_ERROR, "options must be a list of MQOO_ names")
        chosen = parse_open_options(options)
        self._check_running("FAIL_IF_QUIESCING" in chosen)
        # IBM ignores AlternateUserId unless MQOO_ALTERNATE_USER_AUTHORITY is given; with it the
        # open is checked for that user (after the caller's right to name it), and the context
        # options still for the caller ("AlternateUserId (MQCHAR12)").
        alternate = alternate_user_id.strip() if "ALTERNATE_USER_AUTHORITY" in chosen else ""
        checked = conn.principal
        if "ALTERNATE_USER_AUTHORITY" in chosen:
            checked = await self.qm.security.alternate_principal(conn.principal, alternate)
        model = self._model(object_name, object_qmgr)
        created: ObjectDef | None = None
        if model is not None:
            # the authority to open is checked against the model queue's name, before anything is made
            self._check_open(conn, checked, model.name, chosen)
            created = await self.qm.dynamic.create(model, dynamic_q_name)
            try:
                return await self._open_resolved(conn, self.qm.cache.resolve_queue(created.name), chosen,
                                                 creator=True, alternate_user_id=alternate)
            except BaseException:
                # the open failed after the queue was made: nobody holds it, so it goes again
                if created.attrs.get("DEFTYPE") == "TEMPDYN":
                    with contextlib.suppress(MQError):
                        await self.qm.dynamic.delete(created)
                raise
        resolved = await self.resolve_target(object_name, object_qmgr)
        self._check_open(conn, checked, str(object_name), chosen)
        return await self._open_resolved(conn, resolved, chosen, alternate_user_id=alternate)

    def _check_open(self, conn: Connection, checked: Any, name: str, chosen: frozenset[str]) -> None:
        """MQOPEN's authority checks: the access the options ask of ``checked`` (the caller, or
        the alternate user), then context security for the caller."""
        self.qm.security.check_open(checked, name, chosen)
        self.qm.security.check_context(conn.principal, name, open_context(chosen))

    async def _open_resolved(self, conn: Connection, resolved: ResolvedQueue, chosen: frozenset[str], *,
                             creator: bool = False, alternate_user_id: str = "") -> Handle:
        object_name = resolved.opened.name
        if resolved.remote and chosen & {"INPUT_AS_Q_DEF", "INPUT_SHARED", "INPUT_EXCLUSIVE", "BROWSE", "SET"}:
            raise MQError(MQRC.OPTION_NOT_VALID_FOR_TYPE,
                          f"{object_name} at {resolved.remote[1]} is a remote queue: open it for OUTPUT (or INQUIRE)")
        base = resolved.base.attrs
        opts = resolve_open_options(chosen, shareable=bool(base.get("SHARE", True)),
                                    defsopt=str(base.get("DEFSOPT", "EXCL")))
        hobj = str(conn.next_hobj)
        try:
            opened = await self.qm.cf.open_queue(
                resolved.location, self.qm.name, f"{conn.hconn}:{hobj}", input=opts.input, output=opts.output,
                browse=opts.browse, inquire=opts.inquire, set=opts.set)
        except OutcomeUnknownError:
            conn.next_hobj += 1  # the CF may count it until the engine takes it back: never reused
            raise
        conn.next_hobj += 1
        if resolved.opened.objtype == "QALIAS":
            await self.qm.cf.alias_opened(self.qm.name, resolved.opened.name, f"{conn.hconn}:{hobj}")
        handle = Handle(hobj, resolved, opts, opened.gen, creator=creator, alternate_user_id=alternate_user_id)
        if opts.input and int(opened.ipprocs) == 1:
            # condition 13: a trigger monitor opening an initiation queue nobody else reads
            await self.qm.triggers.initq_opened(resolved.base)
        conn.handles[hobj] = handle
        return handle

    def check_handle(self, hconn: str, hobj: str) -> None:
        """Raise what a call on ``hconn``/``hobj`` (a queue handle) would raise for the handles
        themselves (2018, 2019, ...): checked before a batch's body is even parsed, so that a
        made-up handle costs nothing however large the body."""
        self.handle(self.connection(hconn), hobj)

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

    @recorded(Verb.CLOSE)
    async def close(self, hconn: str, hobj: str, options: Any = None) -> None:
        """MQCLOSE, with the close options MQCO_DELETE / MQCO_DELETE_PURGE for a dynamic queue."""
        if options is not None and not isinstance(options, list):
            raise MQError(MQRC.OPTIONS_ERROR, "options must be a list of MQCO_ names")
        chosen = parse_close_options(options)
        conn = self.connection(hconn)
        if hobj in conn.qmgr_handles:
            if chosen:  # IBM: MQCO_DELETE/DELETE_PURGE are for dynamic queues only
                raise MQError(MQRC.OPTION_NOT_VALID_FOR_TYPE, "the queue manager object cannot be deleted")
            del conn.qmgr_handles[hobj]
            return
        handle = conn.handles.get(hobj)
        if handle is None and self.qm.pubsub.close_topic(conn, hobj):
            return  # a topic handle (app/qmgr/pubsub.py)
        if handle is None:
            raise MQError(MQRC.HOBJ_ERROR, f"object handle '{hobj}' is not valid for this connection")
        delete_now: ObjectDef | None = None
        if chosen and not handle.deleted:
            base = self._current(handle.resolved.base)
            kind = deftype(base)
            # IBM (MQCLOSE Options): DELETE/DELETE_PURGE delete a permanent dynamic queue, or the
            # temporary dynamic queue this handle's MQOPEN created; anything else is 2045.
            through_alias = handle.resolved.opened.objtype != "QLOCAL" or handle.resolved.remote is not None
            if through_alias or kind == PREDEFINED or (kind == "TEMPDYN" and not handle.creator):
                raise MQError(MQRC.OPTION_NOT_VALID_FOR_TYPE,
                              f"{handle.resolved.opened.name} is not a permanent dynamic queue (or a temporary "
                              f"one this handle created): it cannot be deleted by MQCLOSE")
            if kind != "TEMPDYN":
                if not handle.creator:
                    await self._check_delete_authority(conn, handle, base.name)
                await self.qm.dynamic.check_deletable(base, purge="DELETE_PURGE" in chosen)
                delete_now = base
        await self._close_handle(conn, handle)
        if delete_now is not None:
            await self._delete_dynamic(delete_now)

    async def _check_delete_authority(self, conn: Connection, handle: Handle, queue: str) -> None:
        """IBM (MQCLOSE usage notes): deleting a permanent dynamic queue through a handle other
        than the one whose MQOPEN created it needs the authority to delete the queue (DLT) of the
        user the MQOPEN was checked for (its alternate user, with ALTERNATE_USER_AUTHORITY),
        as that user's authority is now. MQRC_NOT_AUTHORIZED otherwise; the handle stays open."""
        principal = await self.qm.security.live(conn.principal)
        if handle.alternate_user_id:
            principal = await self.qm.security.alternate_principal(principal, handle.alternate_user_id)
        self.qm.security.check(principal, "DLT", "QUEUE", queue)

    async def _delete_dynamic(self, obj: ObjectDef) -> None:
        """Delete a dynamic queue; this QM's other handles on it answer MQRC_Q_DELETED from now."""
        for other in self.connections.values():
            for handle in other.handles.values():
                if handle.resolved.base.name == obj.name and handle.resolved.base.qsgdisp == obj.qsgdisp:
                    handle.deleted = True
        await self.qm.dynamic.delete(obj)

    async def _close_handle(self, conn: Connection, handle: Handle) -> None:
        conn.handles.pop(handle.hobj, None)
        key = f"{conn.hconn}:{handle.hobj}"
        await self.qm.cf.close_queue(handle.resolved.location, self.qm.name, key)
        if handle.resolved.opened.objtype == "QALIAS":
            await self.qm.cf.alias_closed(self.qm.name, handle.resolved.opened.name, key)
        base = handle.resolved.base
        if deftype(base) != PREDEFINED:
            try:
                if handle.creator and deftype(base) == "TEMPDYN":
                    # IBM: a temporary dynamic queue goes, with its messages, when the handle that
                    # created it is closed - by MQCLOSE, MQDISC, or the end of the application
                    await self._delete_dynamic(base)
                    return
                if handle.deleted or not self.qm.cache.usable("QUEUE", base.name):
                    # a logically deleted dynamic queue: the last handle's close removes it
                    await self.qm.dynamic.remove_state(handle.resolved.location)
                    return
            except MQError as exc:
                # the handle is closed all the same; what is left goes at the next start (TEMPDYN)
                log.warning("dynamic queue %s not deleted at close: %s", base.name, exc)
                return
        if handle.options.input:
            # condition 12: the last server of the queue on this QM closed it with messages left
            try:
                await self.qm.triggers.retrigger(self._current(handle.resolved.base), types=("FIRST", "DEPTH"),
                                                 skip=frozenset({5}))
            except MQError as exc:
                log.warning("close re-trigger of %s failed: %s", handle.resolved.base.name, exc)

    def invalidate(self, name: str) -> None:
        """After ALTER ... FORCE of ``name``: its handles fail with MQRC_OBJECT_CHANGED next time."""
        for conn in self.connections.values():
            for handle in conn.handles.values():
                if name in (handle.resolved.opened.name, handle.resolved.base.name):
                    handle.changed = True

    # ---- messages -----------------------------------------------------------------------

    @recorded(Verb.PUT)
    async def put(self, hconn: str, hobj: str, call: PutCall) -> PutOutcome:
        """MQPUT on an open handle (of a topic: a publication, app/qmgr/pubsub.py)."""
        conn = self.connection(hconn)
        if hobj not in conn.handles:
            topic = self.qm.pubsub.topic_handle(hconn, hobj)
            if topic is not None:
                with self._in_call(conn):
                    return await self.qm.pubsub.publish(conn, topic, call)
        handle = self.handle(conn, hobj)
        if not handle.options.output:
            raise MQError(MQRC.NOT_OPEN_FOR_OUTPUT, f"{handle.resolved.opened.name} is not open for output")
        if call.pmo.logical_order or handle.put_group is not None:
            handle.put_group = groups.logical_put(handle.put_group, call.md, len(call.data), call.pmo.syncpoint,
                                                  call.pmo.logical_order, self.msg_ids.next)
        put = self._async_put if _asynchronous(call.pmo, handle.resolved) else self._put
        if call.pmo.context == "DEFAULT" and not call.pmo.alternate_user:  # the common case
            return await put(conn, handle.resolved, call, gen=handle.gen, user_id=handle.alternate_user_id or None)
        if call.pmo.alternate_user:
            # IBM (MQPMO options): MQPMO_ALTERNATE_USER_AUTHORITY is valid on MQPUT1 only
            raise MQError(MQRC.OPTIONS_ERROR, "ALTERNATE_USER_AUTHORITY is a put option of MQPUT1 only: "
                                              "open the queue with ALTERNATE_USER_AUTHORITY instead")
        passed = self._put_context(conn, handle, call)
        return await put(conn, handle.resolved, call, gen=handle.gen, passed=passed,
                         user_id=handle.alternate_user_id or None)

    def _put_context(self, conn: Connection, handle: Handle | None, call: PutCall) -> MQMD | None:
        """The context checks of a put whose options pass or set context: the handle's open
        options allow it (MQPUT; MQPUT1 implies them), and for PASS_*_CONTEXT the MQMD whose
        context is passed - that of the message last got on the handle ``call.context`` names.
        IBM's reasons: 2093-2096 NOT_OPEN_FOR_PASS_ALL / PASS_IDENT / SET_ALL / SET_IDENT,
        2097 CONTEXT_HANDLE_ERROR (no such handle, or not opened with SAVE_ALL_CONTEXT), 2098
        CONTEXT_NOT_AVAILABLE (nothing got on it yet, or its last get was a browse)."""
        context = call.pmo.context
        if handle is not None and context in _NOT_OPEN_FOR and context not in handle.options.context:
            reason, option = _NOT_OPEN_FOR[context]
            raise MQError(reason, f"{handle.resolved.opened.name} was not opened with {option}")
        if not call.pmo.passes:
            return None
        source = conn.handles.get(call.context) if isinstance(call.context, str) else None
        if source is None or not source.options.save_all_context:
            raise MQError(MQRC.CONTEXT_HANDLE_ERROR, f"context handle {call.context!r} is not a handle of this "
                                                     "connection opened with SAVE_ALL_CONTEXT")
        if source.saved_context is None:
            raise MQError(MQRC.CONTEXT_NOT_AVAILABLE, f"no message has been got on handle {call.context} since it "
                                                      "was opened (or its last get was a browse): no context to pass")
        return source.saved_context

    async def put_system(self, queue: str, md: dict[str, Any], data: bytes, *, qmgr: str | None = None,
                         conn: Connection | None = None, keep_context: bool = False,
                         keep_identity: bool = False, arrival_reports: bool = True) -> PutOutcome:
        """A put by the queue manager itself (reports, events, trigger messages, dead letters):
        outside any unit of work with the queue manager's name as PutApplName, or inside the unit
        of work of ``conn`` (one of the queue manager's own agents, e.g. the IGQ agent). ``qmgr``
        names the queue's queue manager as an application's MQPUT1 would (through the group when
        it is another one); None: a queue of this queue manager. ``keep_context``: the context
        fields of ``md`` are kept (MQPMO_SET_ALL_CONTEXT), e.g. a dead letter's original context;
        ``keep_identity``: its identity fields only (MQPMO_SET_IDENTITY_CONTEXT), e.g. a report's.
        ``arrival_reports`` False: the queue is not the message's destination (a dead letter)."""
        context = ["SET_ALL_CONTEXT"] if keep_context else ["SET_IDENTITY_CONTEXT"] if keep_identity else []
        options = ["SYNCPOINT" if conn else "NO_SYNCPOINT", *context]
        pmo = parse_put_options(options)
        checked, warnings = validate_put_md(md, settable=pmo.settable)
        if keep_context:  # PutQMgr too: an output field no application sets
            checked.put_qmgr = str(md.get("put_qmgr") or "")
        call = PutCall(checked, data, pmo, warnings, arrival_reports=arrival_reports)
        resolved = self.qm.cache.resolve_queue(queue) if qmgr is None else await self.resolve_target(queue, qmgr)
        return await self._put(conn or self._system, resolved, call, gen=None)

    async def _evaluate_trigger(self, base, before: int, after: int, conn: Connection, syncpoint: bool) -> None:
        try:
            await self.qm.triggers.counts_changed(self._current(base), before, after, 1, conn, syncpoint)
        except MQError as exc:  # a trigger that cannot be made must not fail the put
            log.warning("trigger evaluation for %s failed: %s", base.name, exc)

    @recorded(Verb.PUT1)
    async def put1(self, hconn: str, object_name: str, object_qmgr: str, call: PutCall,
                   alternate_user_id: str = "") -> PutOutcome:
        """MQPUT1: open for output, put, close, as one call. ``alternate_user_id`` is MQOD
        AlternateUserId, used with MQPMO_ALTERNATE_USER_AUTHORITY (as MQOPEN's with MQOO_)."""
        conn = self.connection(hconn)
        self._check_handles(conn)  # MQPUT1 uses a handle while it runs (IBM: 2017 at MAXHANDS)
        await self._current_authority(conn)
        resolved = await self.resolve_target(object_name, object_qmgr)
        pmo = call.pmo
        put = self._async_put if _asynchronous(pmo, resolved) else self._put
        if pmo.context == "DEFAULT" and not pmo.alternate_user:  # the common case
            self.qm.security.check(conn.principal, "PUT", "QUEUE", object_name)
            return await put(conn, resolved, call, gen=None)
        checked, user_id = conn.principal, None
        if pmo.alternate_user:
            user_id = alternate_user_id.strip()
            checked = await self.qm.security.alternate_principal(conn.principal, user_id)
        self.qm.security.check(checked, "PUT", "QUEUE", object_name)
        # MQPUT1 opens with the MQOO_ context option its MQPMO_ option implies: context security
        # is checked as MQOPEN checks it, for the caller (z/OS "Profiles for context security")
        self.qm.security.check_context(conn.principal, object_name, frozenset({pmo.context}))
        passed = None if pmo.context == "DEFAULT" else self._put_context(conn, None, call)
        return await put(conn, resolved, call, gen=None, passed=passed, user_id=user_id or None)

    async def open_topic(self, hconn: str, object_name: Any, object_string: Any, options: Any):
        """MQOPEN of a topic (MQOD ObjectType MQOT_TOPIC) for publishing (app/qmgr/pubsub.py)."""
        conn = self.connection(hconn)
        await self._current_authority(conn)
        return self.qm.pubsub.open_topic(conn, object_name, object_string, options)

    @recorded(Verb.PUT1)
    async def put1_topic(self, hconn: str, object_name: str, object_string: str, call: PutCall) -> PutOutcome:
        """MQPUT1 of a topic: open it for output, publish, close."""
        conn = self.connection(hconn)
        await self._current_authority(conn)
        topic = self.qm.pubsub.open_topic(conn, object_name, object_string, ["OUTPUT"])
        try:
            with self._in_call(conn):
                return await self.qm.pubsub.publish(conn, topic, call)
        finally:
            self.qm.pubsub.close_topic(conn, topic.hobj)

    # ---- asynchronous put responses and MQSTAT ---------------------------------------------

    async def _async_put(self, conn: Connection, resolved: ResolvedQueue, call: PutCall, *,
                         gen: int | None, passed: MQMD | None = None, user_id: str | None = None) -> PutOutcome:
        """A put the application asked to be asynchronous (MQPMO_ASYNC_RESPONSE, or DEFPRESP(ASYNC)
        with RESPONSE_AS_Q_DEF). It is done synchronously all the same, and answered as IBM
        answers an asynchronous put: MQCC_OK, its outcome - success, warning or failure (put
        inhibited, queue full ...) - kept for MQSTAT(MQSTAT_TYPE_ASYNC_ERROR), "not generated at
        MQPUT time". (Handle and option errors, found before the put is sent, still fail at once.)"""
        try:
            outcome = await self._put(conn, resolved, call, gen=gen, passed=passed, user_id=user_id)
        except MQError as exc:
            if isinstance(exc, FencedError) or exc.reason in (MQRC.CONNECTION_BROKEN, MQRC.Q_MGR_NOT_AVAILABLE):
                raise  # the connection itself is gone: no later MQSTAT could report it
            _note_async(conn, resolved, self.qm, int(exc.comp), int(exc.reason))
            return PutOutcome(call.md, [])
        first = outcome.warnings[0][0] if outcome.warnings else 0
        _note_async(conn, resolved, self.qm, 1 if first else 0, int(first))
        return PutOutcome(outcome.md, [])

    def _note_async_batch(self, hconn: str, hobj: str, calls: Sequence[PutCall], done: list,
                          failed: MQError | None) -> None:
        """Count a put-batch's asynchronous puts for MQSTAT: each message put, and the one refused."""
        conn = self.connections.get(hconn)
        handle = conn.handles.get(hobj) if conn is not None else None
        if conn is None or handle is None or not calls or not _asynchronous(calls[0].pmo, handle.resolved):
            return
        for _, outcome, _ in done:
            first = outcome.warnings[0][0] if outcome.warnings else 0
            _note_async(conn, handle.resolved, self.qm, 1 if first else 0, int(first))
        if failed is not None:
            _note_async(conn, handle.resolved, self.qm, int(failed.comp), int(failed.reason))

    async def stat(self, hconn: str, stat_type: Any) -> dict[str, Any]:
        """MQSTAT: the MQSTS of ASYNC_ERROR (the asynchronous puts since the last MQSTAT, and the
        first warning or failure among them; reset by the call), RECONNECTION or
        RECONNECTION_ERROR (a connection here is never reconnecting: MQCC_OK, MQRC_NONE, counts
        zero). Any other type: MQRC_STAT_TYPE_ERROR (2430). IBM MQ reference: MQSTAT, MQSTS."""
        conn = self.connection(hconn)
        kind = _STAT_TYPES.get(str(stat_type).strip().upper() if isinstance(stat_type, (str, int))
                               and not isinstance(stat_type, bool) else "")
        if kind is None:
            raise MQError(MQRC.STAT_TYPE_ERROR, f"type {stat_type!r} is not valid: ASYNC_ERROR, RECONNECTION "
                                                f"or RECONNECTION_ERROR")
        status = AsyncPutStatus()
        if kind == "ASYNC_ERROR" and conn.async_status is not None:
            status, conn.async_status = conn.async_status, None  # a successful MQSTAT resets them
        return {"type": kind, "completion_code": status.comp, "reason": status.reason,
                "put_success_count": status.success, "put_warning_count": status.warning,
                "put_failure_count": status.failure, "object_type": 1,  # MQOT_Q, the initial value
                "object_name": status.object_name, "object_qmgr_name": status.object_qmgr,
                "resolved_object_name": status.resolved_name, "resolved_qmgr_name": status.resolved_qmgr}

    async def _put(self, conn: Connection, resolved: ResolvedQueue, call: PutCall, *,
                   gen: int | None, passed: MQMD | None = None, user_id: str | None = None) -> PutOutcome:
        pmo, md, data = call.pmo, call.md, call.data
        self._check_running(pmo.fail_if_quiescing)
        opened = self._current(resolved.opened)
        if opened.attrs.get("PUT") == "DISABLED":  # an alias inhibits on its own too
            raise MQError(MQRC.PUT_INHIBITED, f"puts are inhibited on {resolved.opened.name}")
        qm_maxmsgl = int(self.qm.attrs.get("MAXMSGL", 104857600))
        if len(data) > qm_maxmsgl:
            raise MQError(MQRC.MSG_TOO_BIG_FOR_Q_MGR,
                          f"{len(data)} bytes exceed the queue manager's MAXMSGL {qm_maxmsgl}")
        if md.properties:
            self._check_properties_fit(resolved, md, len(data), qm_maxmsgl)
        now = self._fill_put_md(conn, resolved, opened, md, pmo, passed=passed, user_id=user_id)
        group = self._group_entry(resolved, md) if md.msg_flags or md.offset else ""
        stored_md, stored_data = md.to_dict(compact=True), data
        if resolved.remote:
            # intra-group queuing: the message travels in a transmission header on the shared
            # SYSTEM.QSG.TRANSMIT.QUEUE, addressed (by CorrelId) to the destination QM's agent
            stored_md, header = transmission_message(stored_md, data, *resolved.remote)
            stored_data = orjson.dumps(header)
        loc = resolved.location
        if pmo.syncpoint:
            self._uow_room(conn)
        with self._in_call(conn):
            if pmo.syncpoint:
                conn.uow_tags.add(loc.tag)  # before the call: a lost reply must not orphan the put
            done = await self.qm.cf.put(
                loc, qmgr=self.qm.name, hconn=conn.hconn, gen=gen, syncpoint=pmo.syncpoint,
                # above 9: queued at 9, the MQMD keeps the application's value (MQRC 2049)
                priority=min(md.priority, 9), persistent=md.persistent,
                msg_id=stored_md["msg_id"], correl_id=stored_md["correl_id"], md_json=orjson.dumps(stored_md),
                body=stored_data,
                expiry_at_ms=expiry_at(md.expiry, now),
                report=report_code(md.report, arrival=call.arrival_reports and not resolved.remote,
                                   xmit=bool(resolved.remote)),
                report_qmgr=md.reply_to_qmgr, group=group)
            if pmo.syncpoint:
                conn.uow_messages += 1  # MAXUMSGS
            note(conn.hconn, resolved=resolved, depth=done.depth, size=len(data))  # activity record
            before, after = done.trigger
            if after >= 0 and resolved.base.qsgdisp != "SHARED":  # shared queues: every QM evaluates
                await self._evaluate_trigger(resolved.base, before, after, conn, pmo.syncpoint)
        return PutOutcome(md, call.warnings)

    def _group_entry(self, resolved: ResolvedQueue, md: MQMD) -> str:
        """The group index entry of a message in a group or a segment (app.core.groups); a
        message for another queue manager (intra-group queuing) travels unindexed."""
        if resolved.remote:
            return ""
        indxtype = str(self._current(resolved.base).attrs.get("INDXTYPE", "NONE"))
        return groups.group_entry(md, indxtype, self.msg_ids.next)

    def _check_properties_fit(self, resolved: ResolvedQueue, md: MQMD, data_length: int, qm_maxmsgl: int) -> None:
        """A message with properties: its length counting them (``message_length``) within the
        queue manager's MAXMSGL (2031) and the queue's (2030). The coupling facility checks the
        data alone against the queue's MAXMSGL in the put itself; the properties are counted
        here, against the definition the queue manager holds (for intra-group queuing, against
        the transmission queue's, as the data is)."""
        length = message_length(md, data_length)
        if length > qm_maxmsgl:
            raise MQError(MQRC.MSG_TOO_BIG_FOR_Q_MGR, f"{length} bytes (data and properties) exceed the queue "
                                                      f"manager's MAXMSGL {qm_maxmsgl}")
        q_maxmsgl = int(self._current(resolved.base).attrs.get("MAXMSGL", 4194304))
        if length > q_maxmsgl:
            raise MQError(MQRC.MSG_TOO_BIG_FOR_Q, f"{length} bytes (data and properties) exceed MAXMSGL {q_maxmsgl} "
                                                  f"of queue {resolved.base.name}")

    def _fill_put_md(self, conn: Connection, resolved: ResolvedQueue, opened: Any, md: MQMD,
                     pmo: PutOptions, *, passed: MQMD | None = None, user_id: str | None = None) -> int:
        """The MQMD of a put as the queue manager completes it (MQPUT, MQPUT1, put-batch): the
        queue's defaults, MsgId/CorrelId, ReplyToQMgr and the context fields as the put options
        say (``passed``: the MQMD whose context PASS_*_CONTEXT passes; ``user_id``: the default
        UserIdentifier when not the connection's, i.e. an alternate user id); refuses a
        persistent message for a RECOVER(NO) structure. Returns the put time (ms) it used."""
        # Defaults come from the first definition in the resolution path (the alias if opened
        # through one), as it is at the time of the put.
        defaults = opened.attrs
        if md.priority == -1:
            md.priority = int(defaults.get("DEFPRTY", 0))
        if md.persistence == "AS_Q_DEF":
            md.persistence = "PERSISTENT" if defaults.get("DEFPSIST") == "YES" else "NOT_PERSISTENT"
        if md.persistent and deftype(resolved.base) == "TEMPDYN":
            # IBM: a temporary dynamic queue holds non-persistent messages only
            raise MQError(MQRC.PERSISTENT_NOT_ALLOWED,
                          f"{resolved.base.name} is a temporary dynamic queue: it holds non-persistent messages only")
        if md.persistent and resolved.base.qsgdisp == "SHARED":
            cfstruct = self.qm.cache.cfstruct(str(resolved.base.attrs.get("CFSTRUCT", "")))
            if not recoverable(cfstruct):
                raise MQError(MQRC.PERSISTENT_NOT_ALLOWED,
                              f"{resolved.base.name} is in CF structure {resolved.base.attrs.get('CFSTRUCT')}, "
                              f"defined RECOVER(NO): it holds non-persistent messages only")
        return self.complete_md(conn, md, pmo, passed=passed, user_id=user_id)

    def complete_md(self, conn: Connection, md: MQMD, pmo: PutOptions, *, passed: MQMD | None = None,
                    user_id: str | None = None) -> int:
        """What every put completes in its MQMD whatever its destination (a queue, or a topic's
        publication): MsgId and CorrelId as the put options ask, ReplyToQMgr, the context fields
        as the context option says, MQCCSI_Q_MGR. Returns the put time (ms) it used."""
        if pmo.new_msg_id or md.msg_id == NO_ID:
            md.msg_id = self.msg_ids.next()
        if pmo.new_correl_id:
            md.correl_id = self.msg_ids.next()
        if md.reply_to_q and not md.reply_to_qmgr:
            md.reply_to_qmgr = self.qm.name  # IBM fills a blank ReplyToQMgr with the local QM
        now = self.qm.clock.now_ms()
        context = pmo.context
        md.backout_count = 0
        if context != "SET_ALL" or not md.put_qmgr:  # only the QM's own SET_ALL puts keep it (put_system)
            md.put_qmgr = self.qm.name
        if context == "DEFAULT":  # the common case first: the queue manager's context
            md.put_appl_name, md.put_date_time = conn.appl_name, format_put_time(now)
            md.user_identifier = conn.user_id if user_id is None else user_id
            md.put_appl_type = APPL_TYPE_QMGR if conn is self._system or conn.qmgr_agent else APPL_TYPE_CLIENT
        else:
            self._put_context_fields(conn, md, context, passed, now)
        if md.coded_char_set_id == CCSID_Q_MGR:
            md.coded_char_set_id = int(self.qm.attrs.get("CCSID", 500))
        return now

    def _put_context_fields(self, conn: Connection, md: MQMD, context: str, passed: MQMD | None, now: int) -> None:
        """The context fields of a put with a context option other than DEFAULT_CONTEXT (IBM
        "Controlling context information"): NO_CONTEXT blanks every field; SET_IDENTITY keeps
        the application's identity fields (``validate_put_md`` took them) and SET_ALL all of
        them; PASS_IDENTITY takes the identity and PASS_ALL every context field of ``passed``;
        where the origin is not set or passed the queue manager generates it."""
        if context == "NO":
            md.user_identifier, md.accounting_token, md.appl_identity_data = "", NO_ACCOUNTING_TOKEN, ""
            md.put_appl_type, md.put_appl_name, md.put_date_time, md.appl_origin_data = 0, "", "", ""
            return
        if passed is not None:
            for name in IDENTITY_FIELDS if context == "PASS_IDENTITY" else IDENTITY_FIELDS + ORIGIN_FIELDS:
                setattr(md, name, getattr(passed, name))
        if context in ("PASS_IDENTITY", "SET_IDENTITY"):  # origin context: the queue manager's
            md.put_appl_name, md.put_date_time = conn.appl_name, format_put_time(now)
            md.put_appl_type = APPL_TYPE_QMGR if conn is self._system or conn.qmgr_agent else APPL_TYPE_CLIENT
            md.appl_origin_data = ""

    def _gettable(self, handle: Handle, call: GetCall) -> int:
        """The checks of MQGET and get-batch before the coupling facility is asked: the handle's
        open options, the queue manager running, gets not inhibited; the wait in ms, bounded."""
        gmo = call.gmo
        if gmo.browse and not handle.options.browse:
            raise MQError(MQRC.NOT_OPEN_FOR_BROWSE, f"{handle.resolved.opened.name} is not open for browse")
        if not gmo.browse and not handle.options.any_input:
            raise MQError(MQRC.NOT_OPEN_FOR_INPUT, f"{handle.resolved.opened.name} is not open for input")
        limit = self.qm.settings.max_wait_ms
        self._check_running(gmo.fail_if_quiescing)
        if self._current(handle.resolved.opened).attrs.get("GET") == "DISABLED":
            raise MQError(MQRC.GET_INHIBITED, f"gets are inhibited on {handle.resolved.opened.name}")
        return limit if call.wait_ms == -1 else min(call.wait_ms, limit)

    def _converted(self, got: GotMessage, call: GetCall) -> GotMessage:
        return _converted_message(got, call, int(self.qm.attrs.get("CCSID", 500)))

    def _ended_wait(self, exc: MQError, conn: Connection, wait_ms: int) -> MQError:
        """What a get that found no message answers: 2161 when the queue manager is quiescing
        (a waiting get ends with it), 2009 when its connection ended meanwhile, else ``exc``."""
        if exc.reason == MQRC.NO_MSG_AVAILABLE:
            if wait_ms and self.qm.status != "RUNNING":
                return MQError(MQRC.Q_MGR_QUIESCING, f"queue manager {self.qm.name} is quiescing")
            if conn.hconn not in self.connections:
                return MQError(MQRC.CONNECTION_BROKEN, f"connection {conn.hconn} ended while the get was in progress")
        return exc

    @recorded(Verb.GET)  # a browse is recorded as BROWSE
    async def get(self, hconn: str, hobj: str, call: GetCall) -> GotMessage:
        """MQGET (destructive or browse) on an open handle."""
        conn = self.connection(hconn)
        handle = self.handle(conn, hobj)
        gmo = call.gmo
        # (a handle not open for input answers 2037 from _gettable before this)
        if gmo.mode == "MSG_UNDER_CURSOR" and handle.options.any_input and not handle.browse_cursor:
            raise MQError(MQRC.NO_MSG_UNDER_CURSOR, "no message has been browsed with this handle")
        wait_ms = self._gettable(handle, call)
        if gmo.syncpoint != "NO":  # (a browse is never under syncpoint)
            self._uow_room(conn)
        select = ""
        if (call.match_group_id is not None or call.match_msg_seq_number is not None or call.match_offset is not None
                or call.match_msg_token is not None or gmo.needs_group_index or gmo.mark_skip_backout
                or handle.get_group is not None or handle.browse_logical is not None):
            select = self._group_select(conn, handle, call)
        with self._in_call(conn):
            if not gmo.browse and gmo.syncpoint != "NO":
                # Enlisted before the call: if the script runs but its reply is lost (Redis
                # restarting), MQCMIT/MQBACK/MQDISC still resolve it. An empty one is a no-op.
                conn.uow_tags.add(handle.resolved.location.tag)
            try:
                result: GetResult = await self.qm.cf.get(
                    handle.resolved.location, qmgr=self.qm.name, hconn=conn.hconn, gen=handle.gen, mode=gmo.mode,
                    syncpoint=gmo.syncpoint, match_msg_id=call.match_msg_id, match_correl_id=call.match_correl_id,
                    cursor=handle.browse_cursor, buffer_length=call.buffer_length,
                    accept_truncated=gmo.accept_truncated, wait_ms=wait_ms,
                    should_stop=lambda: conn.hconn not in self.connections or self.qm.status != "RUNNING",
                    select=select, admit=self.qm.security.waiting_check() if wait_ms else None)
            except MQError as exc:
                raise self._ended_wait(exc, conn, wait_ms) from None
            if gmo.browse:
                handle.browse_cursor = result.cursor
        note(conn.hconn, depth=result.depth)  # activity record
        got = _got_message(result, call, self.qm.clock.now_ms())
        if select:
            self._group_got(conn, handle, call, result, got)
        if handle.options.save_all_context:  # MQOO_SAVE_ALL_CONTEXT: a browse leaves no context
            handle.saved_context = None if gmo.browse else got.md
        if gmo.syncpoint == "YES" or (gmo.syncpoint == "IF_PERSISTENT" and got.md.persistent):
            conn.uow_messages += 1  # MAXUMSGS
        return self._converted(got, call) if gmo.convert else got

    def _group_select(self, conn: Connection, handle: Handle, call: GetCall) -> str:
        """The checks of a get with group, token or marking options and its selection for the
        coupling facility (app.core.groups.select_args). IBM's rules: INDXTYPE(GROUPID) for
        LOGICAL_ORDER, ALL_MSGS_AVAILABLE, COMPLETE_MSG, ALL_SEGMENTS_AVAILABLE (2394, z/OS);
        one marked get per unit of work (2062, z/OS); a get without LOGICAL_ORDER while a
        logical-order group is in progress (2241); a group's gets all inside one unit of work or
        all outside (2245); a browse that changes LOGICAL_ORDER between BROWSE_FIRST and
        BROWSE_NEXT (2259)."""
        gmo = call.gmo
        if gmo.needs_group_index and \
                self._current(handle.resolved.base).attrs.get("INDXTYPE", "NONE") != "GROUPID":
            raise MQError(MQRC.Q_INDEX_TYPE_ERROR, f"{handle.resolved.base.name} is not INDXTYPE(GROUPID): "
                                                   "LOGICAL_ORDER, ALL_MSGS_AVAILABLE, COMPLETE_MSG and "
                                                   "ALL_SEGMENTS_AVAILABLE need it (z/OS)")
        if gmo.mark_skip_backout and conn.marked is not None:
            raise MQError(MQRC.SECOND_MARK_NOT_ALLOWED, "a message is already marked MARK_SKIP_BACKOUT "
                                                        "in this unit of work")
        logical = ""
        if gmo.mode in ("BROWSE_FIRST", "BROWSE_NEXT"):
            if gmo.mode == "BROWSE_FIRST":
                handle.browse_group, handle.browse_logical = None, gmo.logical_order
            elif handle.browse_logical is not None and handle.browse_logical != gmo.logical_order:
                raise MQError(MQRC.INCONSISTENT_BROWSE, "BROWSE_NEXT must use LOGICAL_ORDER as the browse began")
            if gmo.logical_order:
                state = handle.browse_group
                logical = f"N:{state.group_id}:{state.seq}" if state else "F"
        elif not gmo.browse and gmo.mode == "GET":
            state = handle.get_group
            if state is not None and not gmo.logical_order:
                raise MQError(MQRC.INCOMPLETE_GROUP, "a group got with LOGICAL_ORDER is in progress on this handle")
            if gmo.logical_order:
                if state is not None and state.syncpoint != gmo.syncpoint:
                    raise MQError(MQRC.INCONSISTENT_UOW, "every message of a group is got inside one unit of "
                                                         "work, or every one outside")
                logical = f"N:{state.group_id}:{state.seq}" if state else "F"
        return groups.select_args(call, logical, gmo.mark_skip_backout and gmo.mode == "GET")

    def _group_got(self, conn: Connection, handle: Handle, call: GetCall, result: GetResult, got: GotMessage) -> None:
        """After a get with a selection: the handle's group in progress, the marked get."""
        gmo = call.gmo
        if gmo.logical_order and gmo.mode in ("BROWSE_FIRST", "BROWSE_NEXT"):
            state = groups.next_state(got.md)
            previous = handle.browse_group
            if state is not None:
                state.first_cursor = previous.first_cursor if previous else result.cursor
            elif previous is not None:
                # the group ended: a logical browse goes on after the group's first message
                handle.browse_cursor = previous.first_cursor
            handle.browse_group = state
            if state is not None:
                handle.browse_cursor = state.first_cursor
        elif gmo.logical_order and gmo.mode == "GET":
            state = groups.next_state(got.md)
            if state is not None:
                state.syncpoint = gmo.syncpoint
            handle.get_group = state
        if gmo.mark_skip_backout and result.syncpoint:
            conn.marked = handle.resolved.location.tag

    # ---- batches: put-batch and get-batch (docs/api.md §12) ------------------------------

    async def put_batch(self, hconn: str, hobj: str, calls: Sequence[PutCall]) -> list[PutOutcome]:
        """put-batch: MQPUT of each message in order on an open handle, all in one coupling-
        facility call. Every message has MQPUT's semantics (MQMD defaults and context, MsgIds,
        persistence, MAXMSGL, MAXDEPTH, put inhibit, events, triggers, expiry, the recovery
        log); the batch stops at the first message refused and raises ``BatchError``: its
        reason, and ``count``, how many messages were put before it (they stay put: committed
        now, or in the unit of work under syncpoint). One activity record per message."""
        started = time.perf_counter_ns()
        await room_for_batch(self)
        done: list[tuple[Any, Any, dict[str, Any]]] = []
        failed: tuple[Any, MQError] | None = None
        try:
            outcomes = await self._put_batch(hconn, hobj, calls, done)
        except MQError as exc:
            failed = (calls[len(done)] if len(done) < len(calls) else None, exc)
            self._note_async_batch(hconn, hobj, calls, done, exc)
            raise BatchError.of(exc, len(done)) from None
        else:
            self._note_async_batch(hconn, hobj, calls, done, None)
            return outcomes
        finally:
            record_batch(self, Verb.PUT, (hconn, hobj), done, failed, started)

    async def _put_batch(self, hconn: str, hobj: str, calls: Sequence[PutCall],
                         done: list[tuple[Any, Any, dict[str, Any]]]) -> list[PutOutcome]:
        if not 1 <= len(calls) <= MAX_BATCH:
            raise MQError(MQRC.PMO_ERROR, f"a put-batch takes 1 to {MAX_BATCH} messages, not {len(calls)}")
        conn = self.connection(hconn)
        handle = self.handle(conn, hobj)
        if not handle.options.output:
            raise MQError(MQRC.NOT_OPEN_FOR_OUTPUT, f"{handle.resolved.opened.name} is not open for output")
        resolved = handle.resolved
        pmo = calls[0].pmo  # the batch's options, the same for every message
        if pmo.alternate_user:  # as MQPUT: an MQPUT1 option only
            raise MQError(MQRC.OPTIONS_ERROR, "ALTERNATE_USER_AUTHORITY is a put option of MQPUT1 only")
        passed = None if pmo.context == "DEFAULT" else self._put_context(conn, handle, calls[0])
        user_id = handle.alternate_user_id or None
        self._check_running(pmo.fail_if_quiescing)
        opened = self._current(resolved.opened)
        if opened.attrs.get("PUT") == "DISABLED":  # an alias inhibits on its own too
            raise MQError(MQRC.PUT_INHIBITED, f"puts are inhibited on {resolved.opened.name}")
        qm_maxmsgl = int(self.qm.attrs.get("MAXMSGL", 104857600))
        # Each message is completed as MQPUT completes it, in order; one the queue manager
        # refuses ends the batch there, after the messages before it are put.
        messages: list[BatchMessage] = []
        refused: MQError | None = None
        uow_limit = int(self.qm.attrs.get("MAXUMSGS", 10000)) if pmo.syncpoint else 0
        for call in calls:
            md, data = call.md, call.data
            try:
                if pmo.syncpoint and conn.uow_messages + len(messages) >= uow_limit:
                    self._uow_room(conn, len(messages))  # raises 2024: this message is past MAXUMSGS
                if len(data) > qm_maxmsgl:
                    raise MQError(MQRC.MSG_TOO_BIG_FOR_Q_MGR,
                                  f"{len(data)} bytes exceed the queue manager's MAXMSGL {qm_maxmsgl}")
                if md.properties:
                    self._check_properties_fit(resolved, md, len(data), qm_maxmsgl)
                if call.pmo.logical_order or handle.put_group is not None:
                    handle.put_group = groups.logical_put(handle.put_group, md, len(data), call.pmo.syncpoint,
                                                          call.pmo.logical_order, self.msg_ids.next)
                now = self._fill_put_md(conn, resolved, opened, md, call.pmo, passed=passed, user_id=user_id)
                group = self._group_entry(resolved, md) if md.msg_flags or md.offset else ""
            except MQError as exc:
                refused = exc
                break
            stored_md, stored_data = md.to_dict(compact=True), data
            if resolved.remote:
                # intra-group queuing, as MQPUT: a transmission header on SYSTEM.QSG.TRANSMIT.QUEUE
                stored_md, header = transmission_message(stored_md, data, *resolved.remote)
                stored_data = orjson.dumps(header)
            messages.append(BatchMessage(
                min(md.priority, 9), md.persistent, stored_md["msg_id"], stored_md["correl_id"],
                orjson.dumps(stored_md), stored_data, expiry_at(md.expiry, now),
                report_code(md.report, arrival=not resolved.remote),
                md.reply_to_qmgr, group))
        loc = resolved.location
        if messages:
            with self._in_call(conn):
                if pmo.syncpoint:
                    conn.uow_tags.add(loc.tag)  # before the call: a lost reply must not orphan the puts
                result = await self.qm.cf.put_batch(loc, qmgr=self.qm.name, hconn=conn.hconn, gen=handle.gen,
                                                    syncpoint=pmo.syncpoint, messages=messages)
                if pmo.syncpoint:
                    conn.uow_messages += len(result.puts)  # MAXUMSGS: each message counts
                counted: list[tuple[int, int]] = []
                for call, put in zip(calls, result.puts, strict=False):
                    done.append((call, PutOutcome(call.md, call.warnings),
                                 {"resolved": resolved, "depth": put.depth, "size": len(call.data)}))
                    if put.trigger[1] >= 0:
                        counted.append(put.trigger)
                if counted and resolved.base.qsgdisp != "SHARED":  # shared queues: every QM evaluates
                    # One evaluation for the batch's counting messages, from the count before the
                    # first to the count after the last: the trigger messages the same puts one by
                    # one would make (FIRST once, EVERY per message, DEPTH when TRIGDPTH is reached).
                    try:
                        await self.qm.triggers.counts_changed(self._current(resolved.base), counted[0][0],
                                                              counted[-1][1], len(counted), conn, pmo.syncpoint)
                    except MQError as exc:  # a trigger that cannot be made must not fail the puts
                        log.warning("trigger evaluation for %s failed: %s", resolved.base.name, exc)
            if result.error is not None:
                raise result.error
        if refused is not None:
            raise refused
        return [outcome for _, outcome, _ in done]

    async def get_batch(self, hconn: str, hobj: str, call: GetCall, max_messages: int) -> list[GotMessage]:
        """get-batch: MQGET (or browse) of up to ``max_messages`` messages available now on an
        open handle, in one coupling-facility call; each as MQGET gets it (match, buffer length
        and truncation per message, syncpoint as MQGET's). With WAIT only the first message is
        waited for. A browse starts as asked (BROWSE_FIRST or BROWSE_NEXT) and goes on as
        BROWSE_NEXT; the handle's cursor ends on the last message returned. No message: 2033;
        a first message too big for the buffer without ACCEPT_TRUNCATED_MSG: 2080, as MQGET
        (a later one ends the batch before it). One activity record per message."""
        started = time.perf_counter_ns()
        await room_for_batch(self)
        done: list[tuple[Any, Any, dict[str, Any]]] = []
        failed: tuple[Any, MQError] | None = None
        try:
            return await self._get_batch(hconn, hobj, call, max_messages, done)
        except MQError as exc:
            failed = (call, exc)
            raise
        finally:
            record_batch(self, Verb.GET, (hconn, hobj), done, failed, started)

    async def _get_batch(self, hconn: str, hobj: str, call: GetCall, max_messages: int,
                         done: list[tuple[Any, Any, dict[str, Any]]]) -> list[GotMessage]:
        if not 1 <= max_messages <= MAX_BATCH:
            raise MQError(MQRC.GMO_ERROR, f"max_messages must be 1 to {MAX_BATCH}, not {max_messages}")
        conn = self.connection(hconn)
        handle = self.handle(conn, hobj)
        gmo = call.gmo
        if gmo.mode in ("MSG_UNDER_CURSOR", "BROWSE_UNDER_CURSOR"):
            raise MQError(MQRC.OPTIONS_ERROR, "MSG_UNDER_CURSOR names one message: use MQGET, not get-batch")
        if gmo.logical_order or gmo.mark_skip_backout:
            raise MQError(MQRC.OPTIONS_ERROR, "LOGICAL_ORDER and MARK_SKIP_BACKOUT are for MQGET, not get-batch")
        wait_ms = self._gettable(handle, call)
        if gmo.syncpoint != "NO":
            # MAXUMSGS: no more messages than the unit of work still has room for (none: 2024)
            max_messages = min(max_messages, self._uow_room(conn))
        select = ""
        if (call.match_group_id is not None or call.match_msg_seq_number is not None or call.match_offset is not None
                or call.match_msg_token is not None or gmo.needs_group_index):
            select = self._group_select(conn, handle, call)
        with self._in_call(conn):
            if not gmo.browse and gmo.syncpoint != "NO":
                conn.uow_tags.add(handle.resolved.location.tag)  # before the call, as MQGET
            try:
                results: list[GetResult] = await self.qm.cf.get_batch(
                    handle.resolved.location, qmgr=self.qm.name, hconn=conn.hconn, gen=handle.gen,
                    max_messages=max_messages, mode=gmo.mode, syncpoint=gmo.syncpoint,
                    match_msg_id=call.match_msg_id, match_correl_id=call.match_correl_id,
                    cursor=handle.browse_cursor, buffer_length=call.buffer_length,
                    accept_truncated=gmo.accept_truncated, wait_ms=wait_ms,
                    should_stop=lambda: conn.hconn not in self.connections or self.qm.status != "RUNNING",
                    select=select, admit=self.qm.security.waiting_check() if wait_ms else None)
            except MQError as exc:
                raise self._ended_wait(exc, conn, wait_ms) from None
            if gmo.browse and results:
                handle.browse_cursor = results[-1].cursor
        now = self.qm.clock.now_ms()
        got: list[GotMessage] = []
        for result in results:
            message = _got_message(result, call, now)
            if gmo.syncpoint == "YES" or (gmo.syncpoint == "IF_PERSISTENT" and message.md.persistent):
                conn.uow_messages += 1  # MAXUMSGS
            if gmo.convert:
                message = self._converted(message, call)
            done.append((call, message, {"depth": result.depth}))
            got.append(message)
        if handle.options.save_all_context and got:  # the context of the last message, as MQGET's
            handle.saved_context = None if gmo.browse else got[-1].md
        return got

    # ---- attributes ---------------------------------------------------------------------

    @recorded(Verb.INQ)
    async def inquire(self, hconn: str, hobj: str, selected: Any = None) -> dict[str, Any]:
        """MQINQ: the opened object's attributes by MQSC name (a queue's with its live counts;
        the queue manager's for an MQOT_Q_MGR handle). ``selected``: the selectors asked (MQSC
        names, MQIA_/MQCA_ names or numbers; app/core/selectors.py), only those are returned;
        None: every attribute. A queue selector the queue's type lacks completes with the
        warning 2068 and MQIAV_NOT_APPLICABLE / asterisks, as IBM's MQINQ."""
        conn = self.connection(hconn)
        if hobj in conn.qmgr_handles:
            listed = conn.qmgr_handles[hobj].namelist
            objtype, out = ("NAMELIST", namelists.attributes_of(self.qm.cache, listed)) if listed \
                else ("QMGR", self.qmgr_attributes())
        else:
            handle = self.handle(conn, hobj)
            if not handle.options.inquire:
                raise MQError(MQRC.NOT_OPEN_FOR_INQUIRE, f"{handle.resolved.opened.name} is not open for inquire")
            tokens = None if selected is None else selectors.selector_list(selected)
            opened = self.qm.cache.queue(handle.resolved.opened.name) or handle.resolved.opened
            objtype, out = opened.objtype, display_object(opened)
            if tokens is not None:  # a selector that is not valid fails before the coupling facility is asked
                for token in tokens:
                    selectors.resolve(token, objtype)
            if opened.objtype == "QLOCAL" and (tokens is None or _needs_live(tokens, objtype)):
                status = await self.qm.cf.queue_status(handle.resolved.location)
                out.update(live_counts(status, self.qm.name))
        if selected is None:
            return selectors.inquirable(out) if objtype != "QMGR" else out
        picked, missing = selectors.select(out, selectors.selector_list(selected), objtype)
        if missing:
            picked.update(completion_code=int(CompCode.WARNING), reason=int(MQRC.SELECTOR_NOT_FOR_TYPE),
                          message=f"{', '.join(missing)} not applicable to a {objtype} (MQRC_SELECTOR_NOT_FOR_TYPE)")
        return picked

    def qmgr_attributes(self) -> dict[str, Any]:
        """The queue manager object's attributes by MQSC name, as DISPLAY QMGR shows them, with
        what MQINQ also answers of it (CMDLEVEL, SYNCPT)."""
        out: dict[str, Any] = {"QMNAME": self.qm.name, "QSGNAME": self.qm.qsg}
        for spec in attributes.specs("QMGR").values():
            out[spec.name] = attributes.display_value(spec, self.qm.attrs.get(spec.name, spec.default))
        # MQCMDL_LEVEL_930 (IBM MQ for z/OS 9.3, the level emulated) and MQSP_AVAILABLE: z/OS
        # queue managers always support units of work.
        out.update(CMDLEVEL=930, SYNCPT="AVAILABLE")
        return out

    @recorded(Verb.SET)
    async def set(self, hconn: str, hobj: str, changes: Any) -> dict[str, Any]:
        """MQSET of the attributes IBM lets an application change (needs MQOO_SET): keyed by MQSC
        name, MQIA_/MQCA_ selector name or number; values as MQSC words or IBM's constants.
        IBM's reasons: 2067 a selector that is not valid or cannot be set, 2065 too many, 2020
        a bad inhibit value, 2075-2078 bad trigger values, 2006 TRIGDATA too long."""
        conn = self.connection(hconn)
        if hobj in conn.qmgr_handles:
            raise MQError(MQRC.NOT_OPEN_FOR_SET, "the queue manager object is open for inquire only")
        handle = self.handle(conn, hobj)
        if not handle.options.set:
            raise MQError(MQRC.NOT_OPEN_FOR_SET, f"{handle.resolved.opened.name} is not open for set")
        if not isinstance(changes, dict) or not changes:
            raise MQError(MQRC.SELECTOR_ERROR, "give the attributes to set as an object, e.g. {\"PUT\": \"DISABLED\"}")
        if len(changes) > selectors.MAX_SELECTORS:
            raise MQError(MQRC.SELECTOR_COUNT_ERROR, f"at most {selectors.MAX_SELECTORS} selectors")
        objtype = handle.resolved.opened.objtype
        keywords: list[tuple[str, str | None]] = []
        for token, value in changes.items():
            name = selectors.settable(token, objtype)
            if name not in attributes.specs(objtype):  # e.g. TRIGGER of an alias queue
                raise MQError(MQRC.SELECTOR_ERROR, f"{name} is not an attribute of a {objtype}")
            keywords.append(selectors.set_keyword(name, value))
        try:
            updated = await self.qm.workflow.apply_mqset(handle.resolved.opened, keywords)
        except MQError as exc:
            if exc.reason == MQRC.MQRCCF_ATTR_VALUE_ERROR:
                raise MQError(_set_value_reason(exc.message, keywords), exc.message) from None
            raise
        return display_object(updated)


# MQPMO_ context option -> (reason, MQOO_ option) when the handle was not opened with it.
_NOT_OPEN_FOR = {
    "PASS_ALL": (MQRC.NOT_OPEN_FOR_PASS_ALL, "PASS_ALL_CONTEXT"),
    "PASS_IDENTITY": (MQRC.NOT_OPEN_FOR_PASS_IDENT, "PASS_IDENTITY_CONTEXT"),
    "SET_ALL": (MQRC.NOT_OPEN_FOR_SET_ALL, "SET_ALL_CONTEXT"),
    "SET_IDENTITY": (MQRC.NOT_OPEN_FOR_SET_IDENT, "SET_IDENTITY_CONTEXT"),
}


#: Attributes MQINQ reads from the coupling facility rather than the definition.
_LIVE = frozenset({"CURDEPTH", "IPPROCS", "OPPROCS", "QDPHIEV", "QDPLOEV", "QDPMAXEV", "QSVCIEV"})


def _needs_live(tokens: list[str], objtype: str) -> bool:
    return any(selectors.resolve(t, objtype)[0] in _LIVE for t in tokens)


def _set_value_reason(message: str, keywords: list[tuple[str, str | None]]) -> int:
    """IBM's MQSET reason for a value the catalogue refused: the reason of the attribute the
    message names (the first one's when none is named)."""
    for keyword, _ in keywords:
        name = "TRIGGER" if keyword == "NOTRIGGER" else keyword
        if name in message:
            return selectors.SETTABLE[name]
    first = keywords[0][0]
    return selectors.SETTABLE["TRIGGER" if first == "NOTRIGGER" else first]


def _converted_message(got: GotMessage, call: GetCall, qm_ccsid: int) -> GotMessage:
    """MQGMO_CONVERT of a got message (app/core/convert.py): the data in the CCSID the get's
    MsgDesc asks for (MQCCSI_Q_MGR: the queue manager's), the MsgDesc saying so; or, when it
    cannot be converted, unconverted with IBM's warning."""
    target = qm_ccsid if call.ccsid == CCSID_Q_MGR else call.ccsid
    md = got.md
    done = convert_message(md.format, got.data, md.coded_char_set_id, md.encoding, target, call.encoding,
                           buffer_length=call.buffer_length, truncated=got.truncated)
    md.coded_char_set_id, md.encoding = done.ccsid, done.encoding
    return dataclasses.replace(got, data=done.data, warning=done.warning)


def _got_message(result: GetResult, call: GetCall, now_ms: int) -> GotMessage:
    """What MQGET returns for a message the coupling facility handed over: its MQMD as stored,
    with the backout count and the expiry that remains now."""
    try:
        stored = orjson.loads(result.md_json)
    except orjson.JSONDecodeError:  # the message is taken already: deliver it with a default MQMD
        log.warning("message %s has a stored MQMD that is not JSON; delivered with defaults", result.msg_seq)
        stored = {}
    md = MQMD.from_dict(stored)
    md.backout_count = result.backout_count
    left = remaining_tenths(result.expiry_at_ms, now_ms)
    put_expiry = md.expiry
    # Never more than was put: another QM's estimate of the group clock may run a little behind.
    md.expiry = left if md.expiry == UNLIMITED or left == UNLIMITED else min(md.expiry, left)
    body, length = result.body, result.data_length
    if md.format == "MQXMIT" and not result.truncated:  # document 003 note 9: the MQXQH's Expiry too
        inner = decrement_inner_expiry(body, waited_tenths(put_expiry, md.expiry, md.put_date_time, now_ms))
        if inner is not None:
            body, length = inner, len(inner)
    return GotMessage(md, body, length, result.truncated, call.buffer_length, f"{result.msg_seq:032X}")


# MQSTAT_TYPE_ASYNC_ERROR 0, MQSTAT_TYPE_RECONNECTION 1, MQSTAT_TYPE_RECONNECTION_ERROR 2 (cmqc.h)
_STAT_TYPES = {name: name for name in ("ASYNC_ERROR", "RECONNECTION", "RECONNECTION_ERROR")}
_STAT_TYPES.update({f"MQSTAT_TYPE_{name}": name for name in list(_STAT_TYPES)})
_STAT_TYPES.update({"0": "ASYNC_ERROR", "1": "RECONNECTION", "2": "RECONNECTION_ERROR"})


def _asynchronous(pmo: PutOptions, resolved: ResolvedQueue) -> bool:
    """Whether a put is asynchronous: MQPMO_ASYNC_RESPONSE, or neither response option on a
    queue defined DEFPRESP(ASYNC) (MQPMO_RESPONSE_AS_Q_DEF; the first definition in the path)."""
    if pmo.async_response:
        return True
    return not pmo.sync_response and resolved.opened.attrs.get("DEFPRESP") == "ASYNC"


def _note_async(conn: Connection, resolved: ResolvedQueue, qm: Any, comp: int, reason: int) -> None:
    """Count one asynchronous put's outcome for MQSTAT; keep the first warning or failure (a
    failure replaces a first warning: IBM's MQSTAT usage notes)."""
    status = conn.async_status
    if status is None:
        status = conn.async_status = AsyncPutStatus()
    if comp == 0:
        status.success += 1
        return
    if comp == 1:
        status.warning += 1
    else:
        status.failure += 1
    if status.comp == 0 or (status.comp == 1 and comp == 2):
        status.comp, status.reason = comp, reason
        status.object_name = resolved.opened.name
        if resolved.remote:
            status.resolved_name, status.resolved_qmgr = resolved.remote
        else:
            status.resolved_name = resolved.base.name
            status.resolved_qmgr = qm.qsg if resolved.base.qsgdisp == "SHARED" else qm.name
