"""Message expiry work of one queue manager (docs/ibm-rules.md §4).

* Reports: a get, browse or scan that discards an expired message queues the expiration report
  it asked for in the coupling facility, as a put (COA) and a destructive get (COD) or their
  commit queue confirm-on-arrival and confirm-on-delivery reports (app/core/reports.py);
  addressed to the message's ReplyToQMgr (for a private queue's message: its own QM); this QM
  sends the ones addressed to it (or to the QSG) to the ReplyToQ (at the ReplyToQMgr, through
  the group when that is another QM), outside any unit of work, or to its dead-letter queue
  (DEADQ) when they cannot be delivered.
* EXPRYINT: every EXPRYINT seconds this QM scans its own (private) queues that are worth it;
  shared queues are scanned by exactly one QM of the group, the holder of a lease in Redis
  (the first with EXPRYINT set to take it); when it ends, another takes over within the lease.
* REFRESH QMGR TYPE(EXPIRY) NAME(generic name): scan the named queues now.
"""

from __future__ import annotations

import asyncio
import base64
import contextlib
import logging
import time
from typing import TYPE_CHECKING, Any

import orjson

from app.activity.schema import Verb
from app.cf import keys
from app.cf.leases import scanner_lease
from app.core.errors import MQError
from app.core.expiry import expiration_report
from app.core.igq import expired_application_message
from app.core.names import matches
from app.core.reasons import MQFB, MQRC, OUTAGE_REASONS
from app.core.reports import report_data, report_md
from app.qmgr.definitions import queue_location
from app.qmgr.tasks import stop_task

if TYPE_CHECKING:
    from app.qmgr.ports import ExpiryHost

log = logging.getLogger(__name__)

#: The kind letter before a queued report's entry -> its feedback; none: an expiration report.
_REPORT_KINDS = {b"A"[0]: MQFB.COA, b"D"[0]: MQFB.COD}


def _report_entry(item: bytes) -> tuple[int, bytes, bytes]:
    """One queued report, ``[A|D]<length of MQMD JSON>:<MQMD JSON><data>`` (as the coupling
    facility's scripts queue it: "A" confirm on arrival, "D" confirm on delivery, no letter
    expiration): (feedback, MQMD JSON of the original message, the data the report carries)."""
    feedback = _REPORT_KINDS.get(item[0], MQFB.EXPIRATION) if item else MQFB.EXPIRATION
    if feedback != MQFB.EXPIRATION:
        item = item[1:]
    n, _, rest = item.partition(b":")
    return feedback, rest[:int(n)], rest[int(n):]


class ExpiryService:
    """Expiration reports, the EXPRYINT scan and REFRESH QMGR TYPE(EXPIRY) for one QM."""

    def __init__(self, qm: ExpiryHost) -> None:
        self.qm = qm
        self._reports_due = asyncio.Event()
        self._stopping = asyncio.Event()
        self._tasks: list[asyncio.Task[Any]] = []
        self._last_scan = 0.0
        self._lease = scanner_lease(qm.qsg)
        self.is_shared_scanner = False

    def reports_queued(self, _tag: str) -> None:
        """A call queued expiration reports in a structure (the coupling facility's ``on_reports``)."""
        self._reports_due.set()

    def expired_on_get(self, loc: keys.QueueLocation, count: int) -> None:
        """Expired messages a get or browse met on its way are discarded there: recorded too
        (the coupling facility's ``on_expired``)."""
        self.qm.activity.emit(Verb.EXPIRY, object=loc.name, count=count, detail="discarded by a get or browse")

    def start(self) -> None:
        self._stopping = asyncio.Event()  # started again after a rejoin
        self._reports_due.set()  # reports left by a previous incarnation or a failed peer
        self._tasks = [asyncio.create_task(self._send_reports_loop(), name=f"expiry-reports-{self.qm.name}"),
                       asyncio.create_task(self._scan_loop(), name=f"expiry-scan-{self.qm.name}")]

    async def stop(self) -> None:
        self._reports_due.set()
        for task in self._tasks:
            await stop_task(task, self._stopping)
        if self.is_shared_scanner:
            with contextlib.suppress(MQError):
                await self.qm.cf.leases.release(self._lease, self.qm.name)

    # ---- expiration reports -----------------------------------------------------------

    async def _send_reports_loop(self) -> None:
        while not self._stopping.is_set():
            with contextlib.suppress(asyncio.TimeoutError):
                await asyncio.wait_for(self._reports_due.wait(), timeout=5)
            self._reports_due.clear()
            try:
                await self.send_reports()
            except (MQError, OSError) as exc:
                log.warning("%s: expiration reports not sent yet: %s", self.qm.name, exc)

    async def send_reports(self) -> int:
        """Send every queued expiration report addressed to this QM (or its QSG).

        Each report is first moved (atomically, so no other QM of the group sends it too) to
        this QM's in-flight list in the same structure, and leaves that list only after it was
        put (or dead-lettered, or discarded). One that a coupling-facility outage stops stays
        there and is the first sent at the next attempt - or by this QM when it restarts. A
        crash between the put and the removal sends it twice; it is never lost."""
        sent = 0
        tags = [keys.private_tag(self.qm.qsg, self.qm.name), *self.qm.shared_tags()]
        for tag in tags:
            for addressee in (self.qm.name, self.qm.qsg):
                sent += await self._send_queued(tag, addressee)
        return sent

    async def _send_queued(self, tag: str, addressee: str) -> int:
        sent = 0
        while (item := await self.qm.cf.take_report(tag, addressee)) is not None:
            feedback, md_json, data = _report_entry(item)
            await self._send_report(orjson.loads(md_json), data, feedback)
            await self.qm.cf.report_sent(tag, addressee, item)
            sent += 1
        return sent

    async def _send_report(self, original: dict[str, Any], data: bytes, feedback: int = MQFB.EXPIRATION) -> None:
        """Put one report (expiration, COA or COD) to the original message's ReplyToQ at its
        ReplyToQMgr - this QM, or (reports on a private queue's messages) another QM of the
        group, reached through the group - else to the dead-letter queue. A report whose options
        say MQRO_DISCARD_MSG (passed on by MQRO_PASS_DISCARD_AND_EXPIRY) is discarded instead; one
        that neither can take is discarded, as IBM MQ discards a report it can neither deliver
        nor dead-letter; a coupling-facility outage is raised instead (the caller keeps it)."""
        now = self.qm.clock.now_ms()
        if feedback == MQFB.EXPIRATION:
            original, data = expired_application_message(original, data)
            data = report_data(original.get("report", []), feedback, data)
            md = expiration_report(original, self.qm.mqi.msg_ids.next(), now)
        else:
            md = report_md(original, feedback, self.qm.mqi.msg_ids.next(), now)
        queue = original.get("reply_to_q", "")
        reply_qmgr = str(original.get("reply_to_qmgr") or "").strip()
        try:
            put = await self.qm.mqi.put_system(queue, md, data, qmgr=reply_qmgr or None, keep_identity=True)
            # the console's timeline links to the report by its MsgId (where it went: ``to``)
            self.qm.activity.emit(Verb.REPORT, object=queue, msg_id=put.md.msg_id, correl_id=put.md.correl_id,
                                  detail=orjson.dumps({"feedback": MQFB(feedback).name,
                                                       "to": reply_qmgr or self.qm.name}).decode())
        except MQError as exc:
            if exc.reason in OUTAGE_REASONS:
                raise
            if "DISCARD_MSG" in md["report"]:
                log.warning("%s: report (feedback %d) on %s discarded as its options ask: %s at %s cannot "
                            "take it (reason %d)", self.qm.name, feedback, original.get("msg_id"), queue,
                            reply_qmgr, exc.reason)
                return
            try:
                await self.dead_letter(md, data, exc.reason, queue, original.get("reply_to_qmgr", ""))
            except MQError as dlq_exc:
                if dlq_exc.reason in OUTAGE_REASONS:
                    raise
                log.error("%s: expiration report for %s discarded: %s at %s cannot take it (reason %d) and the "
                          "dead-letter queue is unusable: %s", self.qm.name, original.get("msg_id"), queue,
                          original.get("reply_to_qmgr", ""), exc.reason, dlq_exc.message)

    async def dead_letter(self, md: dict[str, Any], data: bytes, reason: int, dest_q: str, dest_qmgr: str,
                          *, conn: Any = None) -> None:
        """Put an undeliverable message on this QM's dead-letter queue (DEADQ), with a dead-letter
        header (MQDLH fields as JSON, the message data base64) as its body. ``conn``: put inside
        that connection's unit of work (an agent that got the message under syncpoint).

        The dead letter's MQMD is the original message's, context included (PutApplName,
        UserIdentifier, PutDateTime, PutQMgr), as IBM's queue manager and MCAs put a dead letter
        with all context passed from the original message (an application putting to the DLQ
        uses MQPMO_PASS_ALL_CONTEXT for the same reason): the MQDLH's own PutApplName /
        PutDateTime say who dead-lettered it and when. Only a message that carries no context
        (one the queue manager made itself, e.g. a trigger message) gets this QM's. The put
        therefore goes to the coupling facility directly, not through the MQI's put (which sets
        the context of the putter), as the IGQ agent's delivery does.

        Raises MQError when there is no usable DEADQ (MQRC_UNKNOWN_OBJECT_NAME when DEADQ is
        blank): the caller decides - keep the message where it is and retry (the IGQ agent), or
        discard it where IBM MQ does too (reports)."""
        deadq = str(self.qm.attrs.get("DEADQ", "")).strip()
        if not deadq:
            raise MQError(MQRC.UNKNOWN_OBJECT_NAME, f"{self.qm.name} has no dead-letter queue (DEADQ is blank)")
        now = self.qm.clock.now_ms()
        header = {"StrucId": "DLH ", "Version": 1, "Reason": reason, "DestQName": dest_q,
                  "DestQMgrName": dest_qmgr, "Format": md.get("format", ""), "PutApplName": self.qm.name,
                  "PutDateTime": now, "MsgDesc": md,
                  "MsgData": base64.b64encode(data).decode()}
        # IBM: the dead letter's MQMD is the original's (report options and context, PutQMgr
        # included: put with all context set, as IBM's dead-letter handling does), but for its
        # Format; the dead-letter queue is not the message's destination, so no COA or COD is
        # made there (one is, when a dead-letter handler forwards it to its destination).
        dead_md = {**md, "format": "MQDEAD"}
        await self.qm.mqi.put_system(deadq, dead_md, orjson.dumps(header), conn=conn, keep_context=True,
                                     arrival_reports=False)

    # ---- scanning -----------------------------------------------------------------------

    async def _scan_loop(self) -> None:
        lease_ms = int(self.qm.settings.heartbeat_ttl_s * 1000)
        while not self._stopping.is_set():
            try:
                interval = int(self.qm.attrs.get("EXPRYINT", 0) or 0)
                if interval:
                    # The first QM with EXPRYINT set holds the shared-queue scan; it renews the
                    # lease every second, so another takes over soon after it ends.
                    self.is_shared_scanner = await self.qm.cf.leases.hold(self._lease, self.qm.name, lease_ms)
                    if time.monotonic() - self._last_scan >= interval:
                        self._last_scan = time.monotonic()
                        await self.scan(shared=self.is_shared_scanner)
                elif self.is_shared_scanner:
                    await self.qm.cf.leases.release(self._lease, self.qm.name)
                    self.is_shared_scanner = False
            except (MQError, OSError) as exc:
                log.warning("%s: expiry scan: %s", self.qm.name, exc)
            with contextlib.suppress(asyncio.TimeoutError):
                await asyncio.wait_for(self._stopping.wait(), timeout=1)

    async def scan(self, *, shared: bool) -> int:
        """One EXPRYINT pass: the queues worth scanning (some message's expiry has passed)."""
        tags = [keys.private_tag(self.qm.qsg, self.qm.name)] + (self.qm.shared_tags() if shared else [])
        total = 0
        for tag in tags:
            for name in await self.qm.cf.expiry_candidates(tag):
                n = await self.qm.cf.scan_expired(keys.QueueLocation(tag, name), self.qm.name)
                if n:
                    self.qm.activity.emit(Verb.EXPIRY, object=name, count=n)
                total += n
        if total:
            log.info("%s: expiry scan discarded %d message(s)", self.qm.name, total)
        return total

    async def refresh(self, pattern: str) -> tuple[int, int]:
        """REFRESH QMGR TYPE(EXPIRY) NAME(pattern): scan the matching local queues now;
        returns (queues scanned, messages discarded)."""
        queues = [d for d in self.qm.cache.all("QUEUE")
                  if d.objtype == "QLOCAL" and d.location != "@GROUP" and matches(pattern, d.name)]
        discarded = 0
        for d in queues:
            n = await self.qm.cf.scan_expired(queue_location(self.qm.cache, d), self.qm.name)
            if n:
                self.qm.activity.emit(Verb.EXPIRY, object=d.name, qsgdisp=d.qsgdisp, count=n)
            discarded += n
        return len(queues), discarded
