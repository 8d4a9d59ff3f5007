"""Asynchronous put responses (MQPMO_ASYNC_RESPONSE, DEFPRESP(ASYNC)) and MQSTAT, which reports
their outcomes."""

from __future__ import annotations

from collections.abc import Sequence
from typing import Any

from app.cf.engine import FencedError
from app.core.calls import PutCall, PutOutcome
from app.core.errors import MQError
from app.core.mqmd import MQMD
from app.core.options import PutOptions
from app.core.reasons import MQRC
from app.qmgr.connection import AsyncPutStatus, Connection
from app.qmgr.definitions import ResolvedQueue
from app.qmgr.mqi.put_core import PutCore


class AsyncPuts(PutCore):
    """Asynchronous puts and MQSTAT."""

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

    def _note_async_batch(self, hconn: str, hobj: str, calls: Sequence[PutCall], done: list[Any],
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
