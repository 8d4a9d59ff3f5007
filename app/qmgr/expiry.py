"""Message expiry work of one queue manager (reference document 003).

* Expiration reports: a get, browse or scan that discards an expired message queues the report
  it asked for in the coupling facility, addressed to the message's ReplyToQMgr; this QM sends
  the ones addressed to it (or to the QSG) to the ReplyToQ, outside any unit of work, or to its
  dead-letter queue (DEADQ) when they cannot be delivered.
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
from redis.exceptions import RedisError

from app.activity.schema import Verb
from app.cf import keys
from app.core.errors import MQError
from app.core.expiry import expiration_report
from app.core.names import matches
from app.core.reasons import MQRC
from app.qmgr.definitions import queue_location
from app.qmgr.tasks import stop_task

if TYPE_CHECKING:
    from app.qmgr.qmgr import QueueManager

log = logging.getLogger(__name__)

_RENEW = """
if redis.call('GET', KEYS[1]) == ARGV[1] then redis.call('PEXPIRE', KEYS[1], ARGV[2]) return 1 end
return redis.call('SET', KEYS[1], ARGV[1], 'NX', 'PX', ARGV[2]) and 1 or 0
"""
_RELEASE = """
if redis.call('GET', KEYS[1]) == ARGV[1] then return redis.call('DEL', KEYS[1]) end
return 0
"""


def scanner_lease_key(qsg: str) -> str:
    """Who scans the group's shared queues for expired messages."""
    return f"{keys.group_prefix(qsg)}expiry-scanner"


class ExpiryService:
    """Expiration reports, the EXPRYINT scan and REFRESH QMGR TYPE(EXPIRY) for one QM."""

    def __init__(self, qm: QueueManager) -> None:
        self.qm = qm
        self._reports_due = asyncio.Event()
        self._stopping = asyncio.Event()
        self._tasks: list[asyncio.Task] = []
        self._last_scan = 0.0
        self._renew = qm.redis.register_script(_RENEW)
        self._release = qm.redis.register_script(_RELEASE)
        self.is_shared_scanner = False
        qm.cf.on_reports = lambda _tag: self._reports_due.set()
        # Expired messages a get or browse met on its way are discarded there: recorded too.
        qm.cf.on_expired = lambda loc, n: qm.activity.emit(Verb.EXPIRY, object=loc.name, count=n,
                                                           detail="discarded by a get or browse")

    def start(self) -> None:
        self._reports_due.set()  # reports left by a previous incarnation or a failed peer
        self._tasks = [asyncio.create_task(self._send_reports_loop(), name=f"expiry-reports-{self.qm.name}"),
                       asyncio.create_task(self._scan_loop(), name=f"expiry-scan-{self.qm.name}")]

    async def stop(self) -> None:
        self._reports_due.set()
        for task in self._tasks:
            await stop_task(task, self._stopping)
        if self.is_shared_scanner:
            with contextlib.suppress(RedisError):
                await self._release([scanner_lease_key(self.qm.qsg)], [self.qm.name])

    # ---- expiration reports -----------------------------------------------------------

    async def _send_reports_loop(self) -> None:
        while not self._stopping.is_set():
            with contextlib.suppress(asyncio.TimeoutError):
                await asyncio.wait_for(self._reports_due.wait(), timeout=5)
            self._reports_due.clear()
            try:
                await self.send_reports()
            except (MQError, RedisError, OSError) as exc:
                log.warning("%s: expiration reports not sent yet: %s", self.qm.name, exc)

    async def send_reports(self) -> int:
        """Send every queued expiration report addressed to this QM (or its QSG)."""
        sent = 0
        tags = [keys.private_tag(self.qm.qsg, self.qm.name), *self.qm.shared_tags()]
        for tag in tags:
            for addressee in (self.qm.name, self.qm.qsg):
                while batch := await self.qm.cf.take_reports(tag, addressee):
                    for md_json, data in batch:
                        await self._send_report(orjson.loads(md_json), data)
                        sent += 1
        return sent

    async def _send_report(self, original: dict[str, Any], data: bytes) -> None:
        md = expiration_report(original, self.qm.mqi.msg_ids.next())
        queue = original.get("reply_to_q", "")
        try:
            await self.qm.mqi.put_system(queue, md, data)
        except MQError as exc:
            await self.dead_letter(md, data, exc.reason, queue, original.get("reply_to_qmgr", ""))

    async def dead_letter(self, md: dict[str, Any], data: bytes, reason: int, dest_q: str, dest_qmgr: str,
                          *, conn: Any = None) -> None:
        """Put an undeliverable message on this QM's dead-letter queue (DEADQ), with a dead-letter
        header (MQDLH fields as JSON, the message data base64) as its body; logged when there
        is no usable DEADQ, as the z/OS queue manager reports it. ``conn``: put inside that
        connection's unit of work (an agent that got the message under syncpoint)."""
        deadq = str(self.qm.attrs.get("DEADQ", "")).strip()
        header = {"StrucId": "DLH ", "Version": 1, "Reason": reason, "DestQName": dest_q,
                  "DestQMgrName": dest_qmgr, "Format": md.get("format", ""), "PutApplName": self.qm.name,
                  "PutDateTime": int(time.time() * 1000), "MsgDesc": md,
                  "MsgData": base64.b64encode(data).decode()}
        dead_md = {**md, "format": "MQDEAD"}
        try:
            if not deadq:
                raise MQError(MQRC.UNKNOWN_OBJECT_NAME, "no DEADQ is set")
            await self.qm.mqi.put_system(deadq, dead_md, orjson.dumps(header), conn=conn)
        except MQError as exc:
            log.error("%s: message for %s(%s) (reason %d) lost: dead-letter queue unusable: %s",
                      self.qm.name, dest_q, dest_qmgr, reason, exc.message)

    # ---- scanning -----------------------------------------------------------------------

    async def _scan_loop(self) -> None:
        lease_ms = int(self.qm.settings.heartbeat_ttl_s * 1000)
        while not self._stopping.is_set():
            try:
                interval = int(self.qm.attrs.get("EXPRYINT", 0) or 0)
                if interval:
                    # The first QM with EXPRYINT set holds the shared-queue scan; it renews the
                    # lease every second, so another takes over soon after it ends.
                    self.is_shared_scanner = bool(await self._renew(
                        [scanner_lease_key(self.qm.qsg)], [self.qm.name, lease_ms]))
                    if time.monotonic() - self._last_scan >= interval:
                        self._last_scan = time.monotonic()
                        await self.scan(shared=self.is_shared_scanner)
                elif self.is_shared_scanner:
                    await self._release([scanner_lease_key(self.qm.qsg)], [self.qm.name])
                    self.is_shared_scanner = False
            except (MQError, RedisError, OSError) as exc:
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
            n = await self.qm.cf.scan_expired(queue_location(self.qm.qsg, d), self.qm.name)
            if n:
                self.qm.activity.emit(Verb.EXPIRY, object=d.name, qsgdisp=d.qsgdisp, count=n)
            discarded += n
        return len(queues), discarded
