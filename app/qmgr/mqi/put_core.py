"""The put every put verb makes of one message (MQPUT, MQPUT1, the queue manager's own puts):
its checks, the coupling facility put, and the trigger it may cause."""

from __future__ import annotations

import logging
from typing import Any

import orjson

from app.activity import note
from app.core import msggroups
from app.core.calls import PutCall, PutOutcome
from app.core.errors import MQError
from app.core.expiry import expiry_at
from app.core.igq import transmission_message
from app.core.mqmd import MQMD, message_length, validate_put_md
from app.core.objects import ObjectDef
from app.core.options import parse_put_options
from app.core.reasons import MQRC
from app.core.reports import report_code
from app.qmgr.connection import Connection
from app.qmgr.definitions import ResolvedQueue
from app.qmgr.mqi.context import PutContext

log = logging.getLogger(__name__)


class PutCore(PutContext):
    """One message put to a resolved queue."""

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

    async def _evaluate_trigger(self, base: ObjectDef, before: int, after: int, conn: Connection,
                                syncpoint: bool) -> None:
        try:
            await self.qm.triggers.counts_changed(self._current(base), before, after, 1, conn, syncpoint)
        except MQError as exc:  # a trigger that cannot be made must not fail the put
            log.warning("trigger evaluation for %s failed: %s", base.name, exc)

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
        """The group index entry of a message in a group or a segment (app.core.msggroups); a
        message for another queue manager (intra-group queuing) travels unindexed."""
        if resolved.remote:
            return ""
        indxtype = str(self._current(resolved.base).attrs.get("INDXTYPE", "NONE"))
        return msggroups.group_entry(md, indxtype, self.msg_ids.next)

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
