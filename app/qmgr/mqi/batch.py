"""put-batch and get-batch (docs/api.md §12): many MQPUTs or MQGETs on one handle in one
coupling-facility call, each message with its single verb's semantics."""

from __future__ import annotations

import logging
import time
from collections.abc import Sequence
from typing import Any

import orjson

from app.activity import Verb, record_batch, room_for_batch
from app.cf.engine import BatchMessage, GetResult
from app.cf.errors import TruncatedMessageError
from app.core import msggroups
from app.core.calls import MAX_BATCH, GetCall, GotMessage, PutCall, PutOutcome
from app.core.errors import BatchError, MQError
from app.core.expiry import expiry_at
from app.core.igq import transmission_message
from app.core.reasons import MQRC
from app.core.reports import report_code
from app.qmgr.mqi.batchmds import ParsedMDs, StoredMDs
from app.qmgr.mqi.get import Gets, _got_message

log = logging.getLogger(__name__)


class Batches(Gets):
    """put-batch and get-batch."""

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
        # refuses ends the batch there, after the messages before it are put. What is the
        # batch's (options, queue, put time, the stored MQMD of messages that differ only in
        # their MsgIds) is worked out once.
        messages: list[BatchMessage] = []
        refused: MQError | None = None
        uow_limit = int(self.qm.attrs.get("MAXUMSGS", 10000)) if pmo.syncpoint else 0
        now = self.qm.clock.now_ms()  # one put time: the one coupling-facility call stores them at one time
        remote = resolved.remote
        arrival = not remote
        stored_mds = StoredMDs()
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
                if call.pmo.logical_order or handle.put_msg_group is not None:
                    handle.put_msg_group = msggroups.logical_put(handle.put_msg_group, md, len(data),
                                                                 call.pmo.syncpoint, call.pmo.logical_order,
                                                                 self.msg_ids.next)
                self._fill_put_md(conn, resolved, opened, md, call.pmo, passed=passed, user_id=user_id, now=now)
                group = self._group_entry(resolved, md) if md.msg_flags or md.offset else ""
            except MQError as exc:
                refused = exc
                break
            if remote:
                # intra-group queuing, as MQPUT: a transmission header on SYSTEM.QSG.TRANSMIT.QUEUE
                stored_md, header = transmission_message(md.to_dict(compact=True), data, *remote)
                md_json, stored_data = orjson.dumps(stored_md), orjson.dumps(header)
                msg_id, correl_id = stored_md["msg_id"], stored_md["correl_id"]
            else:
                md_json, stored_data, msg_id, correl_id = stored_mds.encode(md), data, md.msg_id, md.correl_id
            messages.append(BatchMessage(
                min(md.priority, 9), md.persistent, msg_id, correl_id, md_json, stored_data,
                # a transmission message keeps all its data for an expiration report (as MQPUT's)
                expiry_at(md.expiry, now), report_code(md.report, arrival=arrival, xmit=bool(remote)),
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
        (a later one ends the batch before it). The data of the messages returned is at most
        QSG_GET_BATCH_MAX_BYTES together (the first message is returned whatever its length):
        the batch ends before a message that would cross it, which stays on the queue, so one
        answer never holds the queue manager's memory and event loop for long. One activity
        record per message."""
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
                    handle.resolved.location, max_messages=max_messages,
                    max_bytes=self.qm.settings.get_batch_max_bytes,
                    **self._cf_get_args(conn, handle, call, wait_ms, select))
            except TruncatedMessageError as exc:  # the first message is too big: as MQGET
                raise self._truncation_failed(exc, handle, call) from None
            except MQError as exc:
                raise self._ended_wait(exc, conn, wait_ms) from None
            if gmo.browse and results:
                handle.browse_cursor = results[-1].cursor
        now = self.qm.clock.now_ms()
        got: list[GotMessage] = []
        parsed = ParsedMDs()
        for result in results:
            message = _got_message(result, call, now, parsed)
            if gmo.syncpoint == "YES" or (gmo.syncpoint == "IF_PERSISTENT" and message.md.persistent):
                conn.uow_messages += 1  # MAXUMSGS
            if gmo.convert:
                message = self._converted(message, call)
            done.append((call, message, {"depth": result.depth}))
            got.append(message)
        if handle.options.save_all_context and got:  # the context of the last message, as MQGET's
            handle.saved_context = None if gmo.browse else got[-1].md
        return got
