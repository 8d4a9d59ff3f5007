"""MQPUT, MQGET (with waits), MQCMIT/MQBACK, MQOPEN/MQCLOSE counting and expiry: the verbs of the hot path."""

from __future__ import annotations

import asyncio
import logging
import math
from collections.abc import Awaitable, Callable, Sequence
from dataclasses import replace
from typing import Any, cast

from app.cf import keys
from app.cf.codec import cursor as _cursor
from app.cf.codec import hex_id as _hex_id
from app.cf.codec import open_flags as _open_flags
from app.cf.codec import text as _text
from app.cf.errors import FencedError, OutcomeUnknownError
from app.cf.errors import cf_access as _cf_access
from app.cf.errors import check as _check
from app.cf.errors import mq_error as _mq_error
from app.cf.held import RETRY_EVERY_S, RETRY_FOR_S, HeldMessages
from app.cf.keys import QueueKeys, QueueLocation
from app.cf.replies import (
    BackoutReply,
    ClearOpensReply,
    CloseReply,
    CommitReply,
    GetBatchReply,
    GetReply,
    OpenReply,
    PutBatchReply,
    PutReply,
    ScanReply,
    TakeReportReply,
    get_result,
)
from app.cf.results import (
    BatchMessage,
    CloseResult,
    GetMode,
    GetResult,
    InputMode,
    OpenResult,
    PutBatchResult,
    PutResult,
    Syncpoint,
    UowQueueResult,
)
from app.cf.scriptargs import (
    BackoutArgs,
    ClearOpensArgs,
    CloseArgs,
    CommitArgs,
    GetArgs,
    GetBatchArgs,
    OpenArgs,
    PutArgs,
    PutBatchArgs,
    ScanArgs,
    TakeReportArgs,
)
from app.core.errors import MQError
from app.core.reasons import MQRC

log = logging.getLogger(__name__)

#: Values per message in put_batch.lua's variadic ARGV.
_BATCH_FIELDS = 11
#: "0" to "9": a priority or a report code as the scripts take it, without a str() per message.
_DIGITS = tuple(str(i) for i in range(10))
#: A message's report code (app/core/reports.py report_code) at or above this asks for COA.
_COA_UNIT = 16


def _report_addressee(loc: QueueLocation, report_qmgr: str, qmgr: str) -> str:
    """Which queue manager sends the reports on a message (its ReplyToQMgr, blank = the putter):
    for a shared queue the ReplyToQMgr itself, which takes them from the shared structure; for
    a private queue its own queue manager, the only one that reads that structure, which sends
    them on through the group when the ReplyToQMgr is another queue manager."""
    if report_qmgr and ".CF." in loc.tag:
        return report_qmgr
    return qmgr


class Messaging(HeldMessages):
    """The messaging verbs of ``CouplingFacility``."""

    # -- MQPUT --

    def _put_call(self, loc: QueueLocation, qmgr: str, hconn: str, gen: int | None, syncpoint: bool,
                  offload: bool | None, m: BatchMessage) -> PutArgs:
        if not 0 <= m.priority <= 9 or isinstance(m.priority, bool):
            raise MQError(MQRC.PRIORITY_ERROR, f"priority {m.priority} is not 0-9")
        qk = QueueKeys(loc)
        return PutArgs(
            qk.ctl, keys.uow_key(loc.tag, qmgr, hconn), keys.uow_registry(loc.tag), keys.expiry_queues(loc.tag),
            qk.queue_prefix, loc.name, qmgr, hconn, "" if gen is None else str(gen),
            "1" if syncpoint else "0", str(m.priority), "1" if m.persistent else "0",
            _hex_id(m.msg_id), _hex_id(m.correl_id), m.md_json, m.body,
            str(self.clock.now_ms()), self.channel(loc), "" if offload is None else ("1" if offload else "0"),
            str(m.expiry_at_ms), str(m.report), _report_addressee(loc, m.report_qmgr, qmgr), self._perf(loc),
            keys.trigger_channel(loc.tag), "1" if self._logs(loc.tag, m.persistent) else "0", m.group)

    def _put_done(self, loc: QueueLocation, reply: PutReply, qmgr: str, hconn: str, syncpoint: bool,
                  md_json: str | bytes, body: bytes) -> PutResult:
        """A message put (by put or put_batch): its events fired, its record written to the
        recovery log when the script returned one (a logged persistent message), its result."""
        self._fired(loc, reply.depth_event, reply.service_event)
        if reply.meta and self.recovery_log is not None:
            md = md_json if isinstance(md_json, bytes) else md_json.encode()
            self.recovery_log.put(loc.tag, qmgr, hconn, syncpoint, loc.name, reply.seq, _text(reply.meta), md, body)
        return reply.result()

    async def put(self, loc: QueueLocation, *, qmgr: str, hconn: str, gen: int | None,
                  syncpoint: bool, priority: int, persistent: bool, msg_id: str | None,
                  correl_id: str | None, md_json: str | bytes, body: bytes,
                  offload: bool | None = None, expiry_at_ms: int = 0, report: int = 0,
                  report_qmgr: str = "", group: str = "") -> PutResult:
        """MQPUT one message (one script call).

        ``gen``: the definition generation the handle was opened with (MQRC_OBJECT_CHANGED if
        it changed, MQRC_Q_DELETED if the queue is gone); None for MQPUT1-style calls
        (MQRC_UNKNOWN_OBJECT_NAME if the queue is gone). ``priority``: 0-9, already resolved.
        ``msg_id``/``correl_id``: 48 hex digits (all zeros / None = none). ``offload``: None
        uses the queue's ``offload`` attribute; True/False overrides it. ``expiry_at_ms``: when
        the message expires (0 = never); ``report``/``report_qmgr``: the expiration report it
        asked for and the queue manager that report goes to. ``group``: the message's group
        index entry (``group_entry``), "" for a message in no group and no segment.
        Raises MQError 2085/2052/2041/2051/2030/2053/2050.
        """
        m = BatchMessage(priority, persistent, msg_id, correl_id, md_json, body, expiry_at_ms, report,
                         report_qmgr, group)
        args = self._put_call(loc, qmgr, hconn, gen, syncpoint, offload, m)
        incarnation = self.caller()
        await self.usable(loc.tag)

        async def call() -> PutResult:
            reply = PutReply.parse(await self._script(args, loc.tag, incarnation))
            if reply.code:
                if reply.full_event:
                    self._fired(loc, reply.full_event)  # a Queue Full event fires with the refusal
                raise _mq_error(reply.code, loc)
            return self._put_done(loc, reply, qmgr, hconn, syncpoint, md_json, body)
        done = await self._once_more_if_lost(loc.tag, call)
        if report >= _COA_UNIT and not syncpoint:
            self._reports_queued(loc.tag, 1)  # the put queued its COA report
        if self.recovery_log is not None and not syncpoint and self._logs(loc.tag, persistent):
            await self._logged(loc.tag)
        return done

    # -- MQGET --

    async def get(self, loc: QueueLocation, *, qmgr: str, hconn: str, gen: int | None,
                  mode: GetMode | str = GetMode.GET, syncpoint: Syncpoint | str = Syncpoint.NO,
                  match_msg_id: str | None = None, match_correl_id: str | None = None,
                  cursor: str = "", buffer_length: int = -1, accept_truncated: bool = False,
                  wait_ms: int = 0, should_stop: Callable[[], bool] | None = None,
                  select: str = "", admit: Callable[[], Awaitable[None]] | None = None) -> GetResult:
        """MQGET or browse one message, optionally waiting for one.

        ``select``: "" or the group and token selection (``select_args``; lua/_get.lua).

        ``cursor``: the ``cursor`` of the last browsed message (BROWSE_NEXT, *_UNDER_CURSOR;
        the *_UNDER_CURSOR modes never wait).
        ``buffer_length``: -1 = unlimited. ``wait_ms``: 0 no wait; > 0 wait that long; -1 wait
        until a message comes or ``should_stop()`` is true (checked on every wake-up and at
        least every ``recheck_s``). A stopped or expired wait raises MQRC_NO_MSG_AVAILABLE.
        ``admit``: awaited before each try of a waiting get; what it raises ends the wait (the
        caller's authority checked again after a security change, ``Security.waiting_check``).
        Raises MQError 2085/2052/2041/2016/2033/2034, ``TruncatedMessageError`` (2080, the
        message stays); a truncated message accepted is a result with ``truncated=True``.
        """
        incarnation = self.caller()
        await self.usable(loc.tag)
        result = await self._once_more_if_lost(loc.tag, lambda: self._get(
            loc, incarnation, qmgr=qmgr, hconn=hconn, gen=gen, mode=GetMode(mode), syncpoint=Syncpoint(syncpoint),
            match_msg_id=match_msg_id, match_correl_id=match_correl_id, cursor=cursor,
            buffer_length=buffer_length, accept_truncated=accept_truncated, wait_ms=wait_ms,
            should_stop=should_stop, select=select, admit=admit))
        if not result.browse and self._logs(loc.tag, result.persistent):
            assert self.recovery_log is not None
            self.recovery_log.got(loc.tag, qmgr, hconn, result.syncpoint, loc.name, result.msg_seq)
            if not result.syncpoint:
                await self._logged(loc.tag)
        return result

    async def _get(self, loc: QueueLocation, incarnation: int, *, qmgr: str, hconn: str, gen: int | None, mode: GetMode,
                   syncpoint: Syncpoint, match_msg_id: str | None, match_correl_id: str | None,
                   cursor: str, buffer_length: int, accept_truncated: bool, wait_ms: int,
                   should_stop: Callable[[], bool] | None, select: str = "",
                   admit: Callable[[], Awaitable[None]] | None = None, token: str | None = None) -> GetResult:
        """``get`` without the recovery log. ``token``: None makes the get's own call token, released
        before this returns; else the token to get under (``call_token``), which the caller
        settles itself (``_deliver`` or ``_restore_now``)."""
        settle = token is None
        qk = QueueKeys(loc)
        call = GetArgs(qk.ctl, keys.uow_key(loc.tag, qmgr, hconn), keys.uow_registry(loc.tag),
                       keys.held_key(loc.tag, qmgr), qk.queue_prefix, loc.name, qmgr, hconn,
                       "" if gen is None else str(gen), mode.value, syncpoint.value, _hex_id(match_msg_id),
                       _hex_id(match_correl_id), _cursor(cursor), str(buffer_length),
                       "1" if accept_truncated else "0", str(self.clock.now_ms()), "0",
                       keys.structure_prefix(loc.tag), self._perf(loc), select,
                       self.call_token(incarnation, mode.value, syncpoint.value) if token is None else token)
        if wait_ms == 0 or mode in (GetMode.MSG_UNDER_CURSOR, GetMode.BROWSE_UNDER_CURSOR):
            return await self._get_once(loc, call, incarnation, settle)

        loop = asyncio.get_running_loop()
        deadline = None if wait_ms < 0 else loop.time() + wait_ms / 1000
        # Registered before the first try: a publish after the try but before the wait is kept.
        woken = self.listener.watch(loc)
        try:
            while True:
                woken.clear()
                if deadline is None:
                    register_ms = int(self.recheck_s * 2000) + 1000
                else:
                    register_ms = max(0, math.ceil((deadline - loop.time()) * 1000))
                call = replace(call, now_ms=str(self.clock.now_ms()), register_ms=str(register_ms))
                if admit is not None:
                    await admit()
                try:
                    return await self._get_once(loc, call, incarnation, settle)
                except MQError as exc:
                    if exc.reason != MQRC.NO_MSG_AVAILABLE:
                        raise
                    no_message = exc
                if should_stop is not None and should_stop():
                    raise no_message
                timeout = self.recheck_s
                if deadline is not None:
                    remaining = deadline - loop.time()
                    if remaining <= 0:
                        raise no_message
                    timeout = min(timeout, remaining)
                self.listener.note_parked(loc, 1)
                try:
                    await asyncio.wait_for(woken.wait(), timeout)
                except TimeoutError:
                    pass
                finally:
                    self.listener.note_parked(loc, -1)
        finally:
            self.listener.unwatch(loc, woken)

    async def _get_once(self, loc: QueueLocation, call: GetArgs, incarnation: int, settle: bool = True) -> GetResult:
        while True:
            reply = GetReply.parse(await self._held_call(call, loc.tag, incarnation, settle=settle))
            code = reply.code
            if code in (-1, MQRC.NO_MSG_AVAILABLE, MQRC.NO_MSG_UNDER_CURSOR):
                self._reports_queued(loc.tag, reply.reports)
                self._fired(loc, reply.depth_event)
                self._discarded(loc, reply.discarded)
                if code == -1:
                    continue  # a batch of expired messages was discarded: look again
            elif code in (0, MQRC.TRUNCATED_MSG_ACCEPTED, MQRC.TRUNCATED_MSG_FAILED):
                self._reports_queued(loc.tag, reply.reports)
                self._fired(loc, reply.depth_event, reply.service_event)
                self._discarded(loc, reply.discarded)
            _check(code, loc, ok=(0, MQRC.TRUNCATED_MSG_ACCEPTED), reply=reply)
            break
        return get_result(reply, browse=call.mode not in (GetMode.GET.value, GetMode.MSG_UNDER_CURSOR.value))

    def _discarded(self, loc: QueueLocation, n: int) -> None:
        if n and self.on_expired is not None:
            self.on_expired(loc, n)

    def _reports_queued(self, tag: str, n: int) -> None:
        if n and self.on_reports is not None:
            self.on_reports(tag)

    # -- batches: the put-batch and get-batch verbs --

    async def put_batch(self, loc: QueueLocation, *, qmgr: str, hconn: str, gen: int | None, syncpoint: bool,
                        messages: Sequence[BatchMessage], offload: bool | None = None) -> PutBatchResult:
        """MQPUT of ``messages`` to one queue, in order, in one script call (lua/put_batch.lua):
        each with ``put``'s semantics, stopping at the first one refused. The messages before it
        stay put (committed now, or in the unit of work under ``syncpoint``); the refusal is the
        result's ``error``, not raised, so the caller learns both. ``gen``: as for ``put``.
        Raises (nothing was put) MQRC_PRIORITY_ERROR for a priority outside 0-9, and what
        ``put`` raises for a call that never reached the queue (fenced, CF not available,
        structure failed)."""
        flat: list[str | bytes] = []
        logged = False
        log_persistent = self._logs(loc.tag, True)  # the structure's persistent messages are logged
        addressees: dict[str, str] = {}  # report_qmgr -> addressee: the batch's messages share a few
        for m in messages:
            priority = m.priority
            if type(priority) is not int or not 0 <= priority <= 9:
                raise MQError(MQRC.PRIORITY_ERROR, f"priority {priority} is not 0-9")
            logs = log_persistent and m.persistent
            logged = logged or logs
            addressee = addressees.get(m.report_qmgr)
            if addressee is None:
                addressee = addressees[m.report_qmgr] = _report_addressee(loc, m.report_qmgr, qmgr)
            flat += (_DIGITS[priority], "1" if m.persistent else "0", _hex_id(m.msg_id), _hex_id(m.correl_id),
                     m.md_json, m.body, str(m.expiry_at_ms) if m.expiry_at_ms else "0",
                     _DIGITS[m.report] if 0 <= m.report <= 9 else str(m.report), addressee,
                     "1" if logs else "0", m.group)
        qk = QueueKeys(loc)
        args = PutBatchArgs(
            qk.ctl, keys.uow_key(loc.tag, qmgr, hconn), keys.uow_registry(loc.tag), keys.expiry_queues(loc.tag),
            qk.queue_prefix, loc.name, qmgr, hconn, "" if gen is None else str(gen), "1" if syncpoint else "0",
            str(self.clock.now_ms()), self.channel(loc), "" if offload is None else ("1" if offload else "0"),
            self._perf(loc), keys.trigger_channel(loc.tag), flat)
        incarnation = self.caller()
        await self.usable(loc.tag)

        async def call() -> PutBatchReply:
            reply = PutBatchReply.parse(await self._script(args, loc.tag, incarnation))
            if reply.code in (MQRC.UNKNOWN_OBJECT_NAME, MQRC.Q_DELETED) and not reply.count:
                raise _mq_error(reply.code, loc)  # nothing put: worth the one retry of a lost structure
            return reply
        reply = await self._once_more_if_lost(loc.tag, call)
        puts = [self._put_done(loc, put, qmgr, hconn, syncpoint, m.md_json, m.body) if put.meta or put.depth_event
                or put.service_event else put.result()  # the common case: nothing fired, nothing to log
                for put, m in zip(reply.puts, messages, strict=False)]
        if not syncpoint and any(m.report >= _COA_UNIT for m in messages[:len(puts)]):
            self._reports_queued(loc.tag, 1)  # COA reports queued by the puts
        error = None
        if reply.code:
            if reply.full_event:
                self._fired(loc, reply.full_event)  # a Queue Full event fires with the refusal
            error = _mq_error(reply.code, loc)
        if self.recovery_log is not None and not syncpoint and logged and puts:
            await self._logged(loc.tag)
        return PutBatchResult(puts, error)

    async def get_batch(self, loc: QueueLocation, *, qmgr: str, hconn: str, gen: int | None, max_messages: int,
                        mode: GetMode | str = GetMode.GET, syncpoint: Syncpoint | str = Syncpoint.NO,
                        match_msg_id: str | None = None, match_correl_id: str | None = None,
                        cursor: str = "", buffer_length: int = -1, accept_truncated: bool = False,
                        wait_ms: int = 0, should_stop: Callable[[], bool] | None = None,
                        select: str = "", admit: Callable[[], Awaitable[None]] | None = None,
                        max_bytes: int = -1) -> list[GetResult]:
        """MQGET or browse of up to ``max_messages`` messages available now, in delivery order,
        in one script call (lua/get_batch.lua); each with ``get``'s semantics (match, buffer
        length and truncation per message). ``mode``: GET, BROWSE_FIRST or BROWSE_NEXT (a
        browse goes on from each message it returns; the last result's ``cursor`` is the new
        browse cursor). With ``wait_ms`` only the first message is waited for (``get``'s wait);
        then what else is there is taken in one more call, without waiting.

        The batch stops before a message too long for the buffer (without
        ``accept_truncated``); when that is the first, ``TruncatedMessageError`` as from ``get``.
        ``max_bytes`` (>= 0) bounds the data the batch returns: it stops before a message whose
        data (after truncation) would take the total past it - that message is not taken, the
        script checks before it takes - except the first, which is returned whatever its length.
        Raises what ``get`` raises when no message at all was returned (2033 after the wait).
        """
        mode = GetMode(mode)
        if mode not in (GetMode.GET, GetMode.BROWSE_FIRST, GetMode.BROWSE_NEXT):
            raise MQError(MQRC.OPTIONS_ERROR, f"{mode.value} names one message: not for a batch")
        syncpoint = Syncpoint(syncpoint)
        incarnation = self.caller()
        await self.usable(loc.tag)
        qk = QueueKeys(loc)
        call = GetBatchArgs(qk.ctl, keys.uow_key(loc.tag, qmgr, hconn), keys.uow_registry(loc.tag),
                            keys.held_key(loc.tag, qmgr), qk.queue_prefix, loc.name, qmgr, hconn,
                            "" if gen is None else str(gen), mode.value, syncpoint.value, _hex_id(match_msg_id),
                            _hex_id(match_correl_id), _cursor(cursor), str(buffer_length),
                            "1" if accept_truncated else "0", str(self.clock.now_ms()), "0",
                            keys.structure_prefix(loc.tag), self._perf(loc), select,
                            self.call_token(incarnation, mode.value, syncpoint.value), str(max_messages),
                            str(max_bytes))
        try:
            results = await self._once_more_if_lost(loc.tag, lambda: self._get_batch_once(loc, call, incarnation))
        except MQError as exc:
            if exc.reason != MQRC.NO_MSG_AVAILABLE or wait_ms == 0:
                raise
            # Nothing now: wait for the first message as one MQGET does, then take what else is
            # there without waiting (a miss or a refusal then ends the batch, never loses the first).
            return await self._get_batch_waiting(loc, call, incarnation, qmgr, hconn, max_messages, max_bytes, (
                lambda token: self._get(
                    loc, incarnation, qmgr=qmgr, hconn=hconn, gen=gen, mode=mode, syncpoint=syncpoint,
                    match_msg_id=match_msg_id, match_correl_id=match_correl_id, cursor=cursor,
                    buffer_length=buffer_length, accept_truncated=accept_truncated, wait_ms=wait_ms,
                    should_stop=should_stop, select=select, admit=admit, token=token)))
        return await self._got_batch(loc, qmgr, hconn, results)

    async def _get_batch_waiting(self, loc: QueueLocation, call: GetBatchArgs, incarnation: int, qmgr: str,
                                 hconn: str, max_messages: int, max_bytes: int,
                                 wait_first: Callable[[str], Awaitable[GetResult]]) -> list[GetResult]:
        """A get-batch that found nothing: ``wait_first`` (a waiting get under the token it is
        given) takes the first message, one more call the rest without waiting. A message taken
        outside syncpoint by either call stays held (app/cf/held.py) until the whole answer is
        known, then is released with the rest - or restored when the answer is 2009: a
        non-persistent first message under SYNCPOINT_IF_PERSISTENT, outside the unit of work the
        2009 backs out, is otherwise gone without having been returned to anyone."""
        first_token = self.call_token(incarnation, call.mode, call.syncpoint)
        await self.usable(loc.tag)
        first = await self._once_more_if_lost(loc.tag, lambda: wait_first(first_token))
        results = [first]
        delivered = [] if first.syncpoint else [first_token]  # in the unit of work: nothing held
        try:
            if max_messages > 1:
                rest = replace(call, mode=GetMode.BROWSE_NEXT.value if first.browse else call.mode,
                               cursor=_cursor(first.cursor) if first.browse else call.cursor,
                               now_ms=str(self.clock.now_ms()), max_messages=str(max_messages - 1),
                               # the budget left after the first message binds the rest from its first
                               max_bytes=str(max(0, max_bytes - len(first.body)) if max_bytes >= 0 else -1),
                               budget_first="1")
                try:
                    results += await self._get_batch_once(loc, rest, incarnation, settle=False)
                    delivered.append(rest.token)
                except OutcomeUnknownError:
                    # Its reply was lost and it may have run (what it took outside syncpoint is
                    # restored: ``_held_call``): under syncpoint what it took is in the unit of
                    # work, which the caller's MQCMIT would make final though the answer never
                    # held it. The whole call's outcome is then unknown, as a first call's: 2009,
                    # the unit of work is backed out, the first message with it or - taken
                    # outside it (IF_PERSISTENT, non-persistent) - restored below. Wholly outside
                    # syncpoint the first message is simply returned.
                    if not first.browse and Syncpoint(call.syncpoint) is not Syncpoint.NO:
                        raise
                except MQError:
                    pass  # nothing taken: the batch ends with the first message
        except BaseException:
            self._restore_now(loc.tag, call.held, first_token)  # never returned to the caller
            raise
        await self._deliver(loc.tag, call.held, delivered)
        return await self._got_batch(loc, qmgr, hconn, results)

    async def _got_batch(self, loc: QueueLocation, qmgr: str, hconn: str, results: list[GetResult]) -> list[GetResult]:
        """Log the persistent messages of a batch's destructive gets as ``get`` does and return
        the results."""
        force = False
        for result in results:
            if not result.browse and self._logs(loc.tag, result.persistent):
                assert self.recovery_log is not None
                self.recovery_log.got(loc.tag, qmgr, hconn, result.syncpoint, loc.name, result.msg_seq)
                force = force or not result.syncpoint
        if force:
            await self._logged(loc.tag)
        return results

    async def _get_batch_once(self, loc: QueueLocation, call: GetBatchArgs, incarnation: int,
                              settle: bool = True) -> list[GetResult]:
        while True:
            reply = GetBatchReply.parse(await self._held_call(call, loc.tag, incarnation, settle=settle))
            self._reports_queued(loc.tag, reply.reports)
            self._fired(loc, reply.depth_event, *(m.service_event for m in reply.messages))
            self._discarded(loc, reply.discarded)
            if reply.code == -1:
                continue  # a batch of expired messages was discarded: look again
            if reply.code:
                raise _mq_error(reply.code, loc, reply=reply.messages[0] if reply.messages else None)
            browse = call.mode != GetMode.GET.value
            return [get_result(m, browse=browse) for m in reply.messages]

    # -- expiry --

    async def expiry_candidates(self, tag: str) -> list[str]:
        """Queues of a structure worth an expiry scan now: some message's expiry has passed."""
        with _cf_access(tag):
            found = await self._client_for(tag).zrangebyscore(keys.expiry_queues(tag), "-inf", self.clock.now_ms())
        names = cast(list[bytes], found)
        return [_text(n) for n in names]

    async def scan_expired(self, loc: QueueLocation, qmgr: str) -> int:
        """Discard a queue's expired messages (EXPRYINT scan, REFRESH QMGR TYPE(EXPIRY)); returns
        how many. Their expiration reports are queued for sending."""
        qk = QueueKeys(loc)
        total = 0
        incarnation = self.caller()
        while True:
            scan = ScanReply.parse(await self._script(
                ScanArgs(qk.ctl, keys.expiry_queues(loc.tag), qk.queue_prefix, loc.name, qmgr,
                         str(self.clock.now_ms()), keys.structure_prefix(loc.tag), self._perf(loc)),
                loc.tag, incarnation))
            total += scan.discarded
            self._reports_queued(loc.tag, scan.reports)
            self._fired(loc, scan.depth_event)
            if not scan.more:
                return total

    async def take_report(self, tag: str, addressee: str) -> bytes | None:
        """The next expiration report addressed to ``addressee`` (this QM or its QSG) that this QM
        is to send from structure ``tag`` (see lua/take_report.lua), or None; pass it to
        ``report_sent`` once it was put."""
        reply = TakeReportReply.parse(await self._script(
            TakeReportArgs(keys.expiration_reports(tag, addressee),
                           keys.expiration_reports_sending(tag, addressee, self.qmgr)), tag, self.caller()))
        return reply.report

    async def report_sent(self, tag: str, addressee: str, report: bytes) -> None:
        """The report ``take_report`` gave was put (or dead-lettered, or discarded)."""
        with _cf_access(tag):
            await self._client_for(tag).lrem(keys.expiration_reports_sending(tag, addressee, self.qmgr), 1,
                                             cast(Any, report))

    async def requeue_reports(self, tag: str, qmgr: str, addressees: Sequence[str]) -> int:
        """Peer recovery: the reports ``qmgr`` was sending from ``tag`` go back to the front of
        their queues, for whoever sends them next. Returns how many."""
        moved = 0
        with _cf_access(tag):
            client = self._client_for(tag)
            for addressee in addressees:
                sending = keys.expiration_reports_sending(tag, addressee, qmgr)
                while await client.lmove(sending, keys.expiration_reports(tag, addressee), "RIGHT", "LEFT"):
                    moved += 1
        return moved

    # -- units of work --

    async def _resolve(self, script: type[CommitArgs | BackoutArgs], tag: str, qmgr: str,
                       hconn: str, keep_marked: bool = False) -> list[UowQueueResult]:
        names = (keys.uow_key(tag, qmgr, hconn), keys.uow_registry(tag), keys.structure_prefix(tag),
                 f"{qmgr}:{hconn}", keys.availability_channel(tag),
                 keys.trigger_channel(tag))
        args = BackoutArgs(*names, "1" if keep_marked else "0") if script is BackoutArgs else script(*names)
        raw = await self._script(args, tag, self.caller())
        reply = CommitReply.parse(raw) if script is CommitArgs else BackoutReply.parse(raw)
        return reply.queues

    async def commit(self, tag: str, qmgr: str, hconn: str) -> list[UowQueueResult]:
        """MQCMIT of the connection's work in structure ``tag`` (atomic, idempotent)."""
        done = await self._resolve(CommitArgs, tag, qmgr, hconn)
        self._reports_queued(tag, sum(q.reports for q in done))  # COA / COD made by the commit
        if self.recovery_log is not None:
            self.recovery_log.committed(qmgr, hconn, tag)
            await self._logged(tag)
        return done

    async def backout(self, tag: str, qmgr: str, hconn: str, *, keep_marked: bool = False) -> list[UowQueueResult]:
        """MQBACK of the connection's work in structure ``tag`` (atomic, idempotent); a peer
        uses it for a failed QM's units of work listed by ``units_of_work``. ``keep_marked``:
        an application's MQBACK, which leaves a get marked MQGMO_MARK_SKIP_BACKOUT got, as
        the one operation of a new unit of work (z/OS)."""
        done = await self._resolve(BackoutArgs, tag, qmgr, hconn, keep_marked)
        if self.recovery_log is not None:
            self.recovery_log.backed_out(qmgr, hconn, tag)
        return done

    async def units_of_work(self, tag: str) -> list[tuple[str, str]]:
        """(qmgr, hconn) of every unit of work in progress in structure ``tag``."""
        with _cf_access(tag):
            members = await self._client_for(tag).smembers(keys.uow_registry(tag))
        out = []
        for m in members:
            qmgr, _, hconn = _text(m).partition(":")
            out.append((qmgr, hconn))
        return sorted(out)

    # -- opens --

    async def open_queue(self, loc: QueueLocation, qmgr: str, hobj: str, *,
                         input: InputMode | str | None = None, output: bool = False,
                         browse: bool = False, inquire: bool = False, set: bool = False,
                         gen_expected: int | None = None) -> OpenResult:
        """Count an MQOPEN in the structure, enforcing input exclusivity across the group.

        Raises MQRC_OBJECT_IN_USE (EXCLUSIVE while anyone has it open for input, SHARED while
        anyone has it EXCLUSIVE), MQRC_UNKNOWN_OBJECT_NAME (no state), MQRC_OBJECT_CHANGED
        (``gen_expected`` given and different: the caller's definition is stale),
        MQRC_HOBJ_ERROR (``hobj`` already records another open). Opening the same hobj again
        with the same options is a no-op (``reopened``).
        """
        flags = _open_flags(input, output, browse, inquire, set)
        incarnation = self.caller()
        await self.usable(loc.tag)

        async def call() -> OpenResult:
            reply = OpenReply.parse(await self._script(
                OpenArgs(QueueKeys(loc).ctl, keys.structure_handles(loc.tag, qmgr), keys.structure_prefix(loc.tag),
                         loc.name, qmgr, hobj, flags, "" if gen_expected is None else str(gen_expected)),
                loc.tag, incarnation))
            _check(reply.code, loc)
            return OpenResult(gen=reply.gen, ipprocs=reply.ipprocs, opprocs=reply.opprocs,
                              reopened=reply.reopened)
        try:
            return await self._once_more_if_lost(loc.tag, call)
        except OutcomeUnknownError:
            # It may have been counted (and can no longer be: its deadline passed). The caller
            # got no handle: take the count back once the CF answers, so IPPROCS/OPPROCS are right.
            self._closed_for_sure(loc, qmgr, hobj)
            raise

    async def close_queue(self, loc: QueueLocation, qmgr: str, hobj: str) -> CloseResult:
        """Undo an open's counts (idempotent: an unknown hobj is a no-op). When the outcome is
        unknown (2009), the close is sent again in the background until the CF answers."""
        try:
            return await self._close_once(loc, qmgr, hobj)
        except OutcomeUnknownError:
            self._closed_for_sure(loc, qmgr, hobj)
            raise

    async def _close_once(self, loc: QueueLocation, qmgr: str, hobj: str) -> CloseResult:
        reply = CloseReply.parse(await self._script(
            CloseArgs(keys.structure_handles(loc.tag, qmgr), keys.structure_prefix(loc.tag), qmgr, hobj),
            loc.tag, self.caller()))
        if not reply.closed:
            return CloseResult(closed=False)
        return CloseResult(closed=True, queue=reply.queue, ipprocs=reply.ipprocs, opprocs=reply.opprocs)

    def _closed_for_sure(self, loc: QueueLocation, qmgr: str, hobj: str) -> None:
        """Close ``hobj``'s open in the background, again while the CF cannot be reached (bounded;
        a fenced incarnation's opens are cleared by peer recovery instead)."""
        async def close() -> None:
            loop = asyncio.get_running_loop()
            give_up = loop.time() + RETRY_FOR_S
            while True:
                try:
                    await self._close_once(loc, qmgr, hobj)
                    return
                except FencedError:
                    return  # peer recovery (clear_opens) or the rejoin takes the counts back
                except MQError as exc:
                    if loop.time() > give_up or exc.reason not in (MQRC.CF_NOT_AVAILABLE, MQRC.CONNECTION_BROKEN):
                        log.warning("%s: the open counts of handle %s on %s were not taken back: %s", qmgr, hobj,
                                    loc.name, exc)
                        return
                await asyncio.sleep(RETRY_EVERY_S)
        self._in_background(close())

    async def clear_opens(self, tag: str, qmgr: str) -> int:
        """Peer recovery: drop every open handle of ``qmgr`` in structure ``tag``; returns how many."""
        call = ClearOpensArgs(keys.structure_handles(tag, qmgr), keys.structure_prefix(tag), qmgr)
        return ClearOpensReply.parse(await self._script(call, tag, self.caller())).cleared
