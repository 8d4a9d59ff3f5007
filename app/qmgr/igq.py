"""Intra-group queuing (docs/ibm-rules.md §5): messages for another queue manager of the
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
* A message on the transmission queue that is no valid transmission header (MQXQH) - any
  application may put there - goes to the dead-letter queue with MQDLH Reason
  MQFB_XMIT_Q_MSG_ERROR (271), as an MCA moves a malformed transmission-queue message; with no
  usable dead-letter queue it stays, and the agent goes into retry (never a hot loop).
* Undeliverable messages go to this QM's dead-letter queue (DEADQ), with the exception report
  they asked for sent to ReplyToQ at ReplyToQMgr (through the group when that is another QM),
  all in the agent's unit of work; MQRO_DISCARD_MSG discards instead. When there is no usable
  dead-letter queue the message is never dropped: the unit of work is backed out, so the message
  stays on SYSTEM.QSG.TRANSMIT.QUEUE, and the agent goes into retry, as a channel's MCA does
  (it stops with the message left on its transmission queue). The message stays first in line,
  so the ones behind it keep their order; it is delivered when the cause is gone.
* Retry: when the agent cannot use SYSTEM.QSG.TRANSMIT.QUEUE (not defined, wrong attributes,
  get-inhibited), peer recovery of its queue manager is still running, the coupling facility
  cannot be reached (MQRC_CF_NOT_AVAILABLE, a failed structure, Redis connection errors), its
  queue manager was fenced (MQRC_CONNECTION_BROKEN) or a message stays as above, it retries with
  the short and long retry counts and intervals of docs/ibm-rules.md §5.3 - IBM's fixed values,
  which cannot be changed - measured on the queue manager's clock (tests step it).
  Entering retry is logged once; it is not an abnormal end (CSQM067E is for unexpected failures
  only). Setting IGQ(DISABLED) stops the agent, also in the middle of a retry interval.
"""

from __future__ import annotations

import asyncio
import contextlib
import logging
from typing import TYPE_CHECKING, Any

import orjson

from app.activity.schema import Verb
from app.cf.errors import is_cf_failure
from app.cf.leases import recovery_lock
from app.core.errors import MQError
from app.core.expiry import remaining_tenths
from app.core.igq import IGQ_XMITQ, MalformedTransmissionMessage, igq_correl_id, read_transmission_message
from app.core.reasons import MQFB, MQRC, OUTAGE_REASONS
from app.core.reports import report_code, report_data, report_md
from app.qmgr.connection import Connection
from app.qmgr.definitions import queue_location
from app.qmgr.tasks import stop_task

if TYPE_CHECKING:
    from app.qmgr.ports import IgqHost

log = logging.getLogger(__name__)

# IBM's short and long retry counts and intervals of the IGQ agent, which cannot be changed
# (docs/ibm-rules.md §5.3).
SHORT_RETRY_COUNT = 10
SHORT_RETRY_INTERVAL_MS = 60_000  # 1 minute
LONG_RETRY_COUNT = 999_999_999
LONG_RETRY_INTERVAL_MS = 1_200_000  # 20 minutes
# How often a retry wait looks at the clock: the interval is measured on the queue manager's
# (injectable) clock, which a test steps instead of letting real minutes pass.
CLOCK_POLL_S = 0.1
# Pause before the agent starts again after an abnormal end: doubled at each one in a row (no
# message moved in between) up to the most, so a failure that recurs never spins the loop.
RESTART_PAUSE_S = 0.1
RESTART_PAUSE_MAX_S = 60.0
EXCEPTION_REPORTS = frozenset({"EXCEPTION", "EXCEPTION_WITH_DATA", "EXCEPTION_WITH_FULL_DATA"})

# Reasons that say nothing about the message or its destination but that the queue manager
# cannot work now: the coupling facility or repository cannot be reached, a structure failed,
# the QM was fenced or is ending. Such a failure is never a reason to dead-letter a message:
# the agent backs out and retries.
def is_outage(exc: BaseException) -> bool:
    """True for a failure of the queue manager's resources (retry later), not of the message."""
    if isinstance(exc, MQError):
        return exc.reason in OUTAGE_REASONS
    return is_cf_failure(exc)


class MessageStays(Exception):
    """A message can be neither delivered nor dead-lettered: it stays on the transmission queue
    (the agent backs out its unit of work) and the agent retries it later."""


class IgqAgent:
    """This queue manager's IGQ agent."""

    def __init__(self, qm: IgqHost) -> None:
        self.qm = qm
        self.state = "STOPPED"  # STOPPED (IGQ disabled), RUNNING, RETRY
        self.retries = 0  # retries made in the current retry state
        self.retry_reason = ""  # why the agent is in retry (shown while it is)
        self.restarts = 0  # abnormal ends recovered (CSQM067E)
        self.delivered = 0
        self.conn = Connection(f"{qm.name}-IGQAGENT", "CSQMIGQA", qmgr_agent=True)  # the agent's own unit of work
        self._committing = False  # the unit of work is being committed: finish it, never back it out
        self._stopping = asyncio.Event()
        self._task: asyncio.Task[Any] | None = None

    def start(self) -> None:
        self._stopping = asyncio.Event()  # started again after a rejoin
        self._task = asyncio.create_task(self._supervise(), name=f"igq-agent-{self.qm.name}")

    async def stop(self) -> None:
        await stop_task(self._task, self._stopping)
        try:
            await self._resolve_unit_of_work()
        except Exception as exc:  # the CF is away: peer recovery or the next start resolves it
            if not is_outage(exc):
                raise
            log.warning("%s IGQ agent: unit of work left for recovery at shutdown: %s", self.qm.name, exc)

    def info(self) -> dict[str, Any]:
        return {"IGQAGENT": self.state, "IGQRETRIES": self.retries, "IGQRESTARTS": self.restarts,
                "IGQRETRYREASON": self.retry_reason if self.state == "RETRY" else ""}

    async def _supervise(self) -> None:
        in_a_row, delivered = 0, self.delivered
        while not self._stopping.is_set():
            try:
                await self._run()
            except Exception as exc:  # self recovery: the agent is started again
                self.restarts += 1
                in_a_row = 1 if self.delivered != delivered else in_a_row + 1
                delivered = self.delivered
                log.error("CSQM067E %s IGQ agent ended abnormally (%s: %s); restarting", self.qm.name,
                          type(exc).__name__, exc)
                with contextlib.suppress(Exception):
                    await self._resolve_unit_of_work()  # else the next pass of _run does it
                await self._pause(min(RESTART_PAUSE_MAX_S, RESTART_PAUSE_S * 2 ** min(in_a_row - 1, 10)))

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
        return await self.qm.cf.leases.held(recovery_lock(self.qm.qsg, self.qm.name))

    async def _problem(self) -> str | None:
        """Why the agent must wait in retry before taking a message (None when it may go on)."""
        problem = self._unusable()
        if problem is None and await self._recovery_running():
            problem = f"peer recovery of {self.qm.name} is still in progress (serialization)"
        return problem

    async def _run(self) -> None:
        while not self._stopping.is_set():
            if self.qm.attrs.get("IGQ") != "ENABLED":
                self.state, self.retries = "STOPPED", 0
                await self._pause(1.0)
                continue
            try:
                # Work an outage interrupted is finished first, as it was meant to end.
                await self._resolve_unit_of_work()
                problem = await self._problem()
                if problem is None:
                    await self._transfer_one(wait_ms=1000)
            except MessageStays as stays:
                problem = str(stays)
                await self._back_out_quietly()
            except Exception as exc:
                if not is_outage(exc):
                    raise  # an abnormal end: CSQM067E and a restart
                problem = f"coupling facility or queue manager not available ({type(exc).__name__}: {exc})"
                await self._back_out_quietly()
            if problem is not None:
                await self._retry(problem)
            else:
                self._leave_retry()

    async def _retry(self, problem: str) -> None:
        """One wait of the retry state: the short interval for the first SHORT_RETRY_COUNT
        retries, then the long one. Entering retry is logged once, not at every retry."""
        if self.state != "RETRY":
            log.warning("%s IGQ agent enters retry: %s", self.qm.name, problem)
            self.state, self.retries = "RETRY", 0
        elif problem != self.retry_reason:
            log.info("%s IGQ agent still in retry: %s", self.qm.name, problem)
        self.retry_reason = problem
        self.retries += 1
        if self.retries > SHORT_RETRY_COUNT + LONG_RETRY_COUNT:
            self.retries = SHORT_RETRY_COUNT + 1  # in practice never reached: stay on the long interval
        short = self.retries <= SHORT_RETRY_COUNT
        await self._wait_on_clock(self.qm.clock.now_ms() + (SHORT_RETRY_INTERVAL_MS if short
                                                            else LONG_RETRY_INTERVAL_MS))

    async def _wait_on_clock(self, until_ms: int) -> None:
        """Wait until the queue manager's clock reaches ``until_ms``; the agent stopping, or IGQ
        being disabled (which stops the agent), ends the wait early."""
        while not self._stopping.is_set() and self.qm.attrs.get("IGQ") == "ENABLED":
            left_ms = until_ms - self.qm.clock.now_ms()
            if left_ms <= 0:
                return
            await self._pause(min(CLOCK_POLL_S, left_ms / 1000))

    def _leave_retry(self) -> None:
        if self.state == "RETRY":
            log.info("%s IGQ agent leaves retry after %d retries", self.qm.name, self.retries)
        self.state, self.retries, self.retry_reason = "RUNNING", 0, ""

    async def _resolve_unit_of_work(self) -> None:
        """Finish the agent's unit of work: commit it again if a commit was interrupted (a peer
        may already be rolling it forward: commit is idempotent), else back it out. Raises
        the outage that prevents it; the work stays recorded in the coupling facility."""
        if not self.conn.uow_tags and not self._committing:
            return
        if self._committing:
            await self.qm.mqi.commit_unit_of_work(self.conn)
        else:
            await self.qm.mqi.backout_unit_of_work(self.conn)
        self._committing = False

    def forget_unit_of_work(self) -> None:
        """The queue manager lost its place in the group: the agent's unit of work belonged to
        the old incarnation, which recovery resolves (commit record or backout)."""
        self.conn.uow_tags.clear()
        self._committing = False

    async def _back_out_quietly(self) -> None:
        """Back out after a failed transfer; when the CF does not answer, the next pass of the
        loop tries again (the unit of work's operations stay listed in ``conn.uow_tags``)."""
        try:
            await self._resolve_unit_of_work()
        except Exception as exc:
            if not is_outage(exc):
                raise

    async def _transfer_one(self, wait_ms: int) -> bool:
        """Move one message addressed to this QM from the transmission queue; False when none.
        Raises MessageStays (back out and retry) or the outage that stopped it."""
        xmitq = self.qm.cache.queue(IGQ_XMITQ)
        if xmitq is None:
            raise MQError(MQRC.UNKNOWN_OBJECT_NAME, f"{IGQ_XMITQ} is not defined")  # the agent retries
        loc = queue_location(self.qm.cache, xmitq)
        self.conn.uow_tags.add(loc.tag)  # before the call: a lost reply must not orphan the get
        try:
            got = await self.qm.cf.get(loc, qmgr=self.qm.name, hconn=self.conn.hconn, gen=None, syncpoint="YES",
                                       match_correl_id=igq_correl_id(self.qm.name), wait_ms=wait_ms,
                                       should_stop=self._stopping.is_set)
        except MQError as exc:
            if exc.reason == MQRC.NO_MSG_AVAILABLE:
                return False
            raise
        try:
            header, inner, data = read_transmission_message(got.body)
        except MalformedTransmissionMessage as bad:
            await self._malformed(got.md_json, got.body, str(bad))  # (or MessageStays: back out, retry)
            self._committing = True
            await self.qm.mqi.commit_unit_of_work(self.conn)  # the get and the dead letter together
            self._committing = False
            return True
        md = dict(inner)
        now = self.qm.clock.now_ms()
        md["expiry"] = remaining_tenths(got.expiry_at_ms, now)  # it goes on decreasing
        md["backout_count"] = 0
        try:
            await self._deliver(header["RemoteQName"], md, data, got.expiry_at_ms)
        except MQError as exc:
            if is_outage(exc):
                raise
            await self._undeliverable(header, md, data, exc)
        self._committing = True  # from here on the unit of work only ever goes forward
        await self.qm.mqi.commit_unit_of_work(self.conn)  # get and put (or dead letter) together
        self._committing = False
        self.delivered += 1
        # detail: the flow, from the putting QM to this one (the console's group view draws it)
        flow = {"from": md.get("put_qmgr") or "", "to": header.get("RemoteQMgrName") or self.qm.name}
        self.qm.activity.emit(Verb.IGQ, object=header["RemoteQName"], msg_id=md.get("msg_id"),
                              correl_id=md.get("correl_id"), size=len(data), detail=orjson.dumps(flow).decode())
        return True

    async def _malformed(self, md_json: bytes, body: bytes, why: str) -> None:
        """Dead-letter a message that is no valid transmission message, as it is (its MQMD as
        stored, its data whole), with MQDLH Reason MQFB_XMIT_Q_MSG_ERROR, in the agent's unit of
        work with the get. Raises MessageStays when there is no usable dead-letter queue: the
        message stays on the transmission queue and the agent retries at IBM's intervals."""
        try:
            md = orjson.loads(md_json)
        except orjson.JSONDecodeError:
            md = None
        md = md if isinstance(md, dict) else {}
        log.log(logging.INFO if self.state == "RETRY" else logging.WARNING,
                "%s IGQ agent: message %s on %s is no valid transmission message: %s", self.qm.name,
                md.get("msg_id"), IGQ_XMITQ, why)
        try:
            # its destination unknown, the MQDLH names the queue it was on
            await self.qm.expiry.dead_letter(md, body, MQFB.XMIT_Q_MSG_ERROR, IGQ_XMITQ, self.qm.name,
                                             conn=self.conn)
        except MQError as exc:
            if is_outage(exc):
                raise
            raise MessageStays(f"message {md.get('msg_id')} on {IGQ_XMITQ} is no valid transmission message "
                               f"({why}) and cannot be dead-lettered: {exc.message}; it stays on {IGQ_XMITQ}") from exc

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
            expiry_at_ms=expires, report=report_code(md.get("report", [])),  # COA: at the commit (app/core/reports.py)
            report_qmgr=md.get("reply_to_qmgr", ""))
        before, after = done.trigger
        if after >= 0 and resolved.base.qsgdisp != "SHARED":
            await self.qm.triggers.counts_changed(resolved.base, before, after, 1, self.conn, True)

    async def _undeliverable(self, header: dict[str, Any], md: dict[str, Any], data: bytes, exc: MQError) -> None:
        """Dead-letter the message on this (the destination) QM - or discard it when it asked
        for MQRO_DISCARD_MSG - and send the exception report it asked for; all in the agent's
        unit of work with the get, so a crash before the commit leaves the message on the
        transmission queue and no dead letter or report, never both. Raises MessageStays when
        that cannot be done: the message is never dropped for want of a dead-letter queue."""
        queue, qmgr = header["RemoteQName"], header["RemoteQMgrName"]
        # Once per message, not at every retry of one that stays.
        log.log(logging.INFO if self.state == "RETRY" else logging.WARNING,
                "%s IGQ agent: %s for %s cannot be delivered: %s", self.qm.name, md.get("msg_id"), queue, exc.message)
        try:
            await self._exception_report(md, data, exc.reason)
            if "DISCARD_MSG" in md.get("report", []):
                log.warning("%s IGQ agent: %s for %s discarded as its report options ask (MQRO_DISCARD_MSG)",
                            self.qm.name, md.get("msg_id"), queue)
                return
            await self.qm.expiry.dead_letter(md, data, exc.reason, queue, qmgr, conn=self.conn)
        except MQError as dlq_exc:
            if is_outage(dlq_exc):
                raise
            raise MessageStays(f"message {md.get('msg_id')} for {queue} cannot be delivered "
                               f"(reason {int(exc.reason)}) nor dead-lettered: {dlq_exc.message}; "
                               f"it stays on {IGQ_XMITQ}") from dlq_exc

    async def _exception_report(self, md: dict[str, Any], data: bytes, reason: int) -> None:
        """The exception report a message asked for, to its ReplyToQ at its ReplyToQMgr (which
        name resolution may send through the group), inside the agent's unit of work; to the
        dead-letter queue when the reply-to queue cannot take it. Raises MQError when neither can."""
        report = set(md.get("report", []))
        reply_q = str(md.get("reply_to_q") or "").strip()
        if not report & EXCEPTION_REPORTS or not reply_q:
            return
        reply_qmgr = str(md.get("reply_to_qmgr") or "").strip() or self.qm.name
        # IBM's report rules, as for the other reports (PASS_MSG_ID, PASS_CORREL_ID,
        # PASS_DISCARD_AND_EXPIRY), the feedback being the reason it could not be delivered
        reply_md = report_md(md, int(reason), self.qm.mqi.msg_ids.next(), self.qm.clock.now_ms())
        if "PASS_DISCARD_AND_EXPIRY" in report:
            reply_md["expiry"] = md["expiry"]  # what remains now, from the expiry time the CF kept
        body = report_data(md.get("report", []), int(reason), data)
        try:
            await self.qm.mqi.put_system(reply_q, reply_md, body, qmgr=reply_qmgr, conn=self.conn,
                                         keep_identity=True)
        except MQError as exc:
            if is_outage(exc):
                raise
            log.warning("%s IGQ agent: exception report for %s cannot go to %s at %s (%s): dead-lettered",
                        self.qm.name, md.get("msg_id"), reply_q, reply_qmgr, exc.message)
            await self.qm.expiry.dead_letter(reply_md, body, exc.reason, reply_q, reply_qmgr, conn=self.conn)
