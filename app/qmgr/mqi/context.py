"""The MQMD of a put as the queue manager completes it: the queue's defaults, MsgId and CorrelId,
and the context fields the put options pass, set or generate."""

from __future__ import annotations

from typing import Any

from app.core.calls import PutCall
from app.core.errors import MQError
from app.core.mqmd import (
    APPL_TYPE_CLIENT,
    APPL_TYPE_QMGR,
    CCSID_Q_MGR,
    IDENTITY_FIELDS,
    MQMD,
    NO_ACCOUNTING_TOKEN,
    NO_ID,
    ORIGIN_FIELDS,
    format_put_time,
)
from app.core.options import PutOptions
from app.core.reasons import MQRC
from app.qmgr.connection import Connection, Handle
from app.qmgr.definitions import ResolvedQueue, recoverable
from app.qmgr.dynamic import deftype
from app.qmgr.mqi.connections import Connections


class PutContext(Connections):
    """The MQMD completion and context checks of every put."""

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
        saved: MQMD = source.saved_context
        return saved

    def _fill_put_md(self, conn: Connection, resolved: ResolvedQueue, opened: Any, md: MQMD,
                     pmo: PutOptions, *, passed: MQMD | None = None, user_id: str | None = None,
                     now: int | None = None) -> int:
        """The MQMD of a put as the queue manager completes it (MQPUT, MQPUT1, put-batch): the
        queue's defaults, MsgId/CorrelId, ReplyToQMgr and the context fields as the put options
        say (``passed``: the MQMD whose context PASS_*_CONTEXT passes; ``user_id``: the default
        UserIdentifier when not the connection's, i.e. an alternate user id); refuses a
        persistent message for a RECOVER(NO) structure. ``now``: the put time (ms), None = the
        clock's now (a batch gives all its messages one, as its one coupling-facility call
        stores them at one time). Returns the put time (ms) it used."""
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
        return self.complete_md(conn, md, pmo, passed=passed, user_id=user_id, now=now)

    def complete_md(self, conn: Connection, md: MQMD, pmo: PutOptions, *, passed: MQMD | None = None,
                    user_id: str | None = None, now: int | None = None) -> int:
        """What every put completes in its MQMD whatever its destination (a queue, or a topic's
        publication): MsgId and CorrelId as the put options ask, ReplyToQMgr, the context fields
        as the context option says, MQCCSI_Q_MGR. ``now``: the put time (ms), None = the
        clock's now. Returns the put time (ms) it used."""
        if pmo.new_msg_id or md.msg_id == NO_ID:
            md.msg_id = self.msg_ids.next()
        if pmo.new_correl_id:
            md.correl_id = self.msg_ids.next()
        if md.reply_to_q and not md.reply_to_qmgr:
            md.reply_to_qmgr = self.qm.name  # IBM fills a blank ReplyToQMgr with the local QM
        if now is None:
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


# MQPMO_ context option -> (reason, MQOO_ option) when the handle was not opened with it.
_NOT_OPEN_FOR = {
    "PASS_ALL": (MQRC.NOT_OPEN_FOR_PASS_ALL, "PASS_ALL_CONTEXT"),
    "PASS_IDENTITY": (MQRC.NOT_OPEN_FOR_PASS_IDENT, "PASS_IDENTITY_CONTEXT"),
    "SET_ALL": (MQRC.NOT_OPEN_FOR_SET_ALL, "SET_ALL_CONTEXT"),
    "SET_IDENTITY": (MQRC.NOT_OPEN_FOR_SET_IDENT, "SET_IDENTITY_CONTEXT"),
}
