"""Intra-group queuing (reference document 004): messages for another queue manager of the
group travel on the shared SYSTEM.QSG.TRANSMIT.QUEUE, and each queue manager's IGQ agent takes
the ones addressed to it (by CorrelId) and puts them to their destination queue.

* Exactly once: the agent's get from the transmission queue and its put to the destination are
  one unit of work (spanning two structures, with the commit recorded first so a peer or the
  restarted QM finishes it); a crash between them loses and duplicates nothing.
* The MQMD travels whole in the transmission header (MsgId, CorrelId, priority, persistence,
  context, reply-to, report options) and the remaining expiry goes on decreasing.
* Self recovery: an agent that ends abnormally is restarted (message CSQM067E in the log).
* Authority (IGQAUT, IGQUSER of this, the receiving, QM): with authentication on, the users
  IBM's table names for the setting need PUT on the destination queue; a message they may not
  put is dead-lettered with MQRC_NOT_AUTHORIZED, as any undeliverable one.
* Retry: when the agent cannot use SYSTEM.QSG.TRANSMIT.QUEUE (not defined, wrong attributes,
  get-inhibited) or peer recovery of its queue manager is still running, it retries with the
  short and long retry counts and intervals of the document (intervals are settings).
"""

from __future__ import annotations

import asyncio
import base64
import contextlib
import logging
from typing import TYPE_CHECKING, Any

import orjson
from redis.exceptions import RedisError

from app.activity.schema import Verb
from app.cf import keys
from app.core.errors import MQError
from app.core.expiry import remaining_tenths, report_kind
from app.core.reasons import MQRC
from app.qmgr.definitions import queue_location
from app.qmgr.tasks import stop_task

if TYPE_CHECKING:
    from app.qmgr.qmgr import QueueManager

log = logging.getLogger(__name__)

IGQ_XMITQ = "SYSTEM.QSG.TRANSMIT.QUEUE"
SHORT_RETRY_COUNT = 10
LONG_RETRY_COUNT = 999_999_999


def igq_correl_id(qmgr: str) -> str:
    """The CorrelId that addresses a transmission-queue message to a queue manager's agent."""
    return (b"CSQ IGQ " + qmgr.encode().ljust(4) + b"\0" * 12).hex()


def transmission_message(md: dict[str, Any], data: bytes, remote_q: str, remote_qmgr: str) -> tuple[dict, bytes]:
    """The message put on SYSTEM.QSG.TRANSMIT.QUEUE: an MQXQH (as JSON) with the application's
    whole MQMD and data, addressed to the destination QM, keeping priority, persistence and
    expiry so that it is ordered and expires as the application's message would."""
    header = {"StrucId": "XQH ", "Version": 1, "RemoteQName": remote_q, "RemoteQMgrName": remote_qmgr,
              "MsgDesc": md, "MsgData": base64.b64encode(data).decode()}
    xmit_md = {**md, "format": "MQXMIT", "correl_id": igq_correl_id(remote_qmgr)}
    return xmit_md, orjson.dumps(header)


class IgqAgent:
    """This queue manager's IGQ agent."""

    def __init__(self, qm: QueueManager) -> None:
        from app.qmgr.mqi import Connection

        self.qm = qm
        self.state = "STOPPED"  # STOPPED (IGQ disabled), RUNNING, RETRY
        self.retries = 0  # retries made in the current retry state
        self.restarts = 0  # abnormal ends recovered (CSQM067E)
        self.delivered = 0
        self.conn = Connection(f"{qm.name}-IGQAGENT", "CSQMIGQA")  # the agent's own unit of work
        self._stopping = asyncio.Event()
        self._task: asyncio.Task | None = None
        self.fail_next: Exception | None = None  # tests: make the next step end abnormally

    def start(self) -> None:
        self._task = asyncio.create_task(self._supervise(), name=f"igq-agent-{self.qm.name}")

    async def stop(self) -> None:
        await stop_task(self._task, self._stopping)
        with contextlib.suppress(MQError, RedisError):
            await self.qm.mqi._backout(self.conn)

    def info(self) -> dict[str, Any]:
        return {"IGQAGENT": self.state, "IGQRETRIES": self.retries, "IGQRESTARTS": self.restarts}

    async def _supervise(self) -> None:
        while not self._stopping.is_set():
            try:
                await self._run()
            except Exception as exc:  # self recovery: the agent is started again
                self.restarts += 1
                log.error("CSQM067E %s IGQ agent ended abnormally (%s: %s); restarting", self.qm.name,
                          type(exc).__name__, exc)
                with contextlib.suppress(Exception):
                    await self.qm.mqi._backout(self.conn)
                await self._pause(0.1)

    async def _pause(self, seconds: float) -> None:
        with contextlib.suppress(asyncio.TimeoutError):
            await asyncio.wait_for(self._stopping.wait(), timeout=seconds)

    def _unusable(self) -> str | None:
        """Why the agent cannot work now (None when it can)."""
        xmitq = self.qm.cache.queue(IGQ_XMITQ)
        if xmitq is None:
            return f"{IGQ_XMITQ} is not defined"
        if xmitq.qsgdisp != "SHARED" or xmitq.attrs.get("USAGE") != "XMITQ":
            return f"{IGQ_XMITQ} is not a shared queue with USAGE(XMITQ)"
        if xmitq.attrs.get("GET") == "DISABLED":
            return f"{IGQ_XMITQ} is get-inhibited"
        return None

    async def _recovery_running(self) -> bool:
        """Serialization: the agent may not take messages while peer recovery of its QM runs."""
        return bool(await self.qm.redis.exists(f"{keys.group_prefix(self.qm.qsg)}recovery:{self.qm.name}"))

    async def _run(self) -> None:
        settings = self.qm.settings
        while not self._stopping.is_set():
            if self.qm.attrs.get("IGQ") != "ENABLED":
                self.state, self.retries = "STOPPED", 0
                await self._pause(1.0)
                continue
            problem = self._unusable()
            if problem is None and await self._recovery_running():
                problem = f"peer recovery of {self.qm.name} is still in progress (serialization)"
            if problem is not None:
                if self.state != "RETRY":
                    log.warning("%s IGQ agent enters retry: %s", self.qm.name, problem)
                self.state = "RETRY"
                self.retries += 1
                short = self.retries <= SHORT_RETRY_COUNT
                await self._pause(settings.igq_short_retry_s if short else settings.igq_long_retry_s)
                continue
            if self.state == "RETRY":
                log.info("%s IGQ agent leaves retry after %d retries", self.qm.name, self.retries)
            self.state, self.retries = "RUNNING", 0
            await self._transfer_one(wait_ms=1000)

    async def _transfer_one(self, wait_ms: int) -> bool:
        """Move one message addressed to this QM from the transmission queue; False when none."""
        if self.fail_next is not None:
            exc, self.fail_next = self.fail_next, None
            raise exc
        xmitq = self.qm.cache.queue(IGQ_XMITQ)
        loc = queue_location(self.qm.qsg, xmitq)
        self.conn.uow_tags.add(loc.tag)  # before the call: a lost reply must not orphan the get
        try:
            got = await self.qm.cf.get(loc, qmgr=self.qm.name, hconn=self.conn.hconn, gen=None, syncpoint="YES",
                                       match_correl_id=igq_correl_id(self.qm.name), wait_ms=wait_ms,
                                       should_stop=self._stopping.is_set)
        except MQError as exc:
            if exc.reason == MQRC.NO_MSG_AVAILABLE:
                return False
            raise
        header = orjson.loads(got.body)
        md = dict(header["MsgDesc"])
        data = base64.b64decode(header["MsgData"])
        now = self.qm.clock.now_ms()
        md["expiry"] = remaining_tenths(got.expiry_at_ms, now)  # it goes on decreasing
        md["backout_count"] = 0
        try:
            await self._deliver(header["RemoteQName"], md, data, got.expiry_at_ms)
        except MQError as exc:
            await self._undeliverable(header, md, data, exc)
        await self.qm.mqi._commit(self.conn)  # get and put (or dead letter) together
        self.delivered += 1
        self.qm.activity.emit(Verb.IGQ, object=header["RemoteQName"], msg_id=md.get("msg_id"),
                              correl_id=md.get("correl_id"), size=len(data), detail=header.get("RemoteQMgrName"))
        return True

    async def _deliver(self, queue: str, md: dict[str, Any], data: bytes, expires: int) -> None:
        resolved = self.qm.cache.resolve_queue(queue)
        await self.qm.security.check_igq_put(queue, str(md.get("user_identifier") or ""))
        if resolved.opened.attrs.get("PUT") == "DISABLED":
            raise MQError(MQRC.PUT_INHIBITED, f"puts are inhibited on {queue}")
        self.conn.uow_tags.add(resolved.location.tag)
        done = await self.qm.cf.put(
            resolved.location, qmgr=self.qm.name, hconn=self.conn.hconn, gen=None, syncpoint=True,
            priority=min(int(md["priority"]), 9), persistent=md.get("persistence") == "PERSISTENT",
            msg_id=md["msg_id"], correl_id=md["correl_id"], md_json=orjson.dumps(md), body=data,
            expiry_at_ms=expires, report=report_kind(md.get("report", [])),
            report_qmgr=md.get("reply_to_qmgr", ""))
        before, after = done.info["trigger"]
        if after >= 0 and resolved.base.qsgdisp != "SHARED":
            await self.qm.triggers.counts_changed(resolved.base, before, after, 1, self.conn, True)

    async def _undeliverable(self, header: dict[str, Any], md: dict[str, Any], data: bytes, exc: MQError) -> None:
        """Dead-letter the message on this (the destination) QM, and send the exception report
        it asked for."""
        log.warning("%s IGQ agent: %s for %s cannot be delivered: %s", self.qm.name, md.get("msg_id"),
                    header["RemoteQName"], exc.message)
        # In the agent's unit of work, with the get: a crash before the commit leaves the
        # message on the transmission queue and no dead letter, never both.
        await self.qm.expiry.dead_letter(md, data, exc.reason, header["RemoteQName"], header["RemoteQMgrName"],
                                         conn=self.conn)
        if {"EXCEPTION", "EXCEPTION_WITH_DATA", "EXCEPTION_WITH_FULL_DATA"} & set(md.get("report", [])) \
                and md.get("reply_to_q"):
            report = {"msg_type": "REPORT", "feedback": int(exc.reason), "correl_id": md["msg_id"],
                      "priority": int(md.get("priority", 0)), "persistence": md.get("persistence", "NOT_PERSISTENT")}
            body = data if "EXCEPTION_WITH_FULL_DATA" in md["report"] else \
                data[:100] if "EXCEPTION_WITH_DATA" in md["report"] else b""
            with contextlib.suppress(MQError):
                await self.qm.mqi.put_system(md["reply_to_q"], report, body, conn=self.conn)

    async def transfer_now(self, wait_ms: int = 0) -> bool:
        """One transfer outside the loop (tests)."""
        return await self._transfer_one(wait_ms)

