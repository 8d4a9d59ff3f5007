"""MQGET: destructive gets and browses, message groups and segments, marking and conversion."""

from __future__ import annotations

import dataclasses
import logging
from collections.abc import Awaitable, Callable
from typing import Any

import orjson

from app.activity import Verb, note, recorded
from app.cf.engine import GetResult
from app.cf.errors import TruncatedMessageError
from app.core import msggroups
from app.core.calls import GetCall, GotMessage, TruncatedMessageFailed, caller_gone
from app.core.convert import convert_message
from app.core.errors import MQError
from app.core.expiry import UNLIMITED, remaining_tenths
from app.core.igq import decrement_inner_expiry, waited_tenths
from app.core.mqmd import CCSID_Q_MGR, MQMD
from app.core.reasons import MQRC
from app.qmgr.connection import Connection, Handle
from app.qmgr.mqi.batchmds import ParsedMDs
from app.qmgr.mqi.put import Puts

log = logging.getLogger(__name__)


class Gets(Puts):
    """MQGET."""

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

    def _cf_get_args(self, conn: Connection, handle: Handle, call: GetCall, wait_ms: int,
                     select: str) -> dict[str, Any]:
        """The coupling facility's get arguments of an MQGET (and of a get-batch) on ``handle``."""
        gmo = call.gmo
        return {"qmgr": self.qm.name, "hconn": conn.hconn, "gen": handle.gen, "mode": gmo.mode,
                "syncpoint": gmo.syncpoint, "match_msg_id": call.match_msg_id,
                "match_correl_id": call.match_correl_id, "cursor": handle.browse_cursor,
                "buffer_length": call.buffer_length, "accept_truncated": gmo.accept_truncated,
                "wait_ms": wait_ms, "select": select,
                "should_stop": lambda: conn.hconn not in self.connections or self.qm.status != "RUNNING",
                "admit": self._waiting_admit() if wait_ms else None}

    def _waiting_admit(self) -> Callable[[], Awaitable[None]] | None:
        """What a get that waits checks before each try to take a message: the caller's
        credentials still hold (MQRC_NOT_AUTHORIZED), and the caller is still there - a message
        is not taken for an HTTP client that gave up and left (MQRC_CONNECTION_BROKEN)."""
        credentials, gone = self.qm.security.waiting_check(), caller_gone.get()
        if credentials is None and gone is None:
            return None

        async def admit() -> None:
            if credentials is not None:
                await credentials()
            if gone is not None and await gone():
                raise MQError(MQRC.CONNECTION_BROKEN, "the caller went away while the get waited")
        return admit

    def _ended_wait(self, exc: MQError, conn: Connection, wait_ms: int) -> MQError:
        """What a get that found no message answers: 2161 when the queue manager is quiescing
        (a waiting get ends with it), 2009 when its connection ended meanwhile, else ``exc``."""
        if exc.reason == MQRC.NO_MSG_AVAILABLE:
            if wait_ms and self.qm.status != "RUNNING":
                return MQError(MQRC.Q_MGR_QUIESCING, f"queue manager {self.qm.name} is quiescing")
            if conn.hconn not in self.connections:
                return MQError(MQRC.CONNECTION_BROKEN, f"connection {conn.hconn} ended while the get was in progress")
        return exc

    def _truncation_failed(self, exc: TruncatedMessageError, handle: Handle, call: GetCall) -> TruncatedMessageFailed:
        """MQRC_TRUNCATED_MSG_FAILED as IBM's MQGET answers it (a warning): the message stays on
        the queue, and the answer carries its MQMD, full DataLength and as much data as fits.
        A browse cursor stays where it was, but after BROWSE_FIRST it is logically before the
        first message (IBM's reason code 2080), so BROWSE_NEXT finds that message again."""
        if call.gmo.mode == "BROWSE_FIRST":
            handle.browse_cursor = ""
        got = _got_message(exc.result, call, self.qm.clock.now_ms())
        return TruncatedMessageFailed(got, exc.message)

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
                or handle.get_msg_group is not None or handle.browse_logical is not None):
            select = self._group_select(conn, handle, call)
        with self._in_call(conn):
            if not gmo.browse and gmo.syncpoint != "NO":
                # Enlisted before the call: if the script runs but its reply is lost (Redis
                # restarting), MQCMIT/MQBACK/MQDISC still resolve it. An empty one is a no-op.
                conn.uow_tags.add(handle.resolved.location.tag)
            try:
                result: GetResult = await self.qm.cf.get(
                    handle.resolved.location, **self._cf_get_args(conn, handle, call, wait_ms, select))
            except TruncatedMessageError as exc:
                raise self._truncation_failed(exc, handle, call) from None
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
        coupling facility (app.core.msggroups.select_args). IBM's rules: INDXTYPE(GROUPID) for
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
                handle.browse_msg_group, handle.browse_logical = None, gmo.logical_order
            elif handle.browse_logical is not None and handle.browse_logical != gmo.logical_order:
                raise MQError(MQRC.INCONSISTENT_BROWSE, "BROWSE_NEXT must use LOGICAL_ORDER as the browse began")
            if gmo.logical_order:
                state = handle.browse_msg_group
                logical = f"N:{state.group_id}:{state.seq}" if state else "F"
        elif not gmo.browse and gmo.mode == "GET":
            state = handle.get_msg_group
            if state is not None and not gmo.logical_order:
                raise MQError(MQRC.INCOMPLETE_GROUP, "a group got with LOGICAL_ORDER is in progress on this handle")
            if gmo.logical_order:
                if state is not None and state.syncpoint != gmo.syncpoint:
                    raise MQError(MQRC.INCONSISTENT_UOW, "every message of a group is got inside one unit of "
                                                         "work, or every one outside")
                logical = f"N:{state.group_id}:{state.seq}" if state else "F"
        return msggroups.select_args(call, logical, gmo.mark_skip_backout and gmo.mode == "GET")

    def _group_got(self, conn: Connection, handle: Handle, call: GetCall, result: GetResult, got: GotMessage) -> None:
        """After a get with a selection: the handle's group in progress, the marked get."""
        gmo = call.gmo
        if gmo.logical_order and gmo.mode in ("BROWSE_FIRST", "BROWSE_NEXT"):
            state = msggroups.next_state(got.md)
            previous = handle.browse_msg_group
            if state is not None:
                state.first_cursor = previous.first_cursor if previous else result.cursor
            elif previous is not None:
                # the group ended: a logical browse goes on after the group's first message
                handle.browse_cursor = previous.first_cursor
            handle.browse_msg_group = state
            if state is not None:
                handle.browse_cursor = state.first_cursor
        elif gmo.logical_order and gmo.mode == "GET":
            state = msggroups.next_state(got.md)
            if state is not None:
                state.syncpoint = gmo.syncpoint
            handle.get_msg_group = state
        if gmo.mark_skip_backout and result.syncpoint:
            conn.marked = handle.resolved.location.tag


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


def _got_message(result: GetResult, call: GetCall, now_ms: int, parsed: ParsedMDs | None = None) -> GotMessage:
    """What MQGET returns for a message the coupling facility handed over: its MQMD as stored,
    with the backout count and the expiry that remains now. ``parsed``: a batch's parser of
    its messages' stored MQMDs (one parse for messages that differ only in their MsgIds)."""
    try:
        md = MQMD.from_dict(orjson.loads(result.md_json)) if parsed is None else parsed.parse(result.md_json)
    except orjson.JSONDecodeError:  # the message is taken already: deliver it with a default MQMD
        log.warning("message %s has a stored MQMD that is not JSON; delivered with defaults", result.msg_seq)
        md = MQMD.from_dict({})
    md.backout_count = result.backout_count
    left = remaining_tenths(result.expiry_at_ms, now_ms)
    put_expiry = md.expiry
    # Never more than was put: another QM's estimate of the group clock may run a little behind.
    md.expiry = left if md.expiry == UNLIMITED or left == UNLIMITED else min(md.expiry, left)
    body, length = result.body, result.data_length
    if md.format == "MQXMIT" and not result.truncated:  # the MQXQH's Expiry too (docs/ibm-rules.md §4.7)
        inner = decrement_inner_expiry(body, waited_tenths(put_expiry, md.expiry, md.put_date_time, now_ms))
        if inner is not None:
            body, length = inner, len(inner)
    return GotMessage(md, body, length, result.truncated, call.buffer_length, f"{result.msg_seq:032X}")
