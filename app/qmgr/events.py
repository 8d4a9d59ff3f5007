"""Performance event messages of one queue manager (docs/ibm-rules.md §1 and §2).

The coupling facility switches a queue's event attributes atomically with the put or get that
fired the event and tells this QM (``CouplingFacility.on_event``). For a shared queue this QM
is then the coordinating queue manager: if it has PERFMEV(ENABLED) it issues its own event
message with a new CorrelId; in any case it broadcasts a request carrying that CorrelId; every other active
QM with PERFMEV(ENABLED) answers with its own event message (its statistics since its last
event message or RESET QSTATS; zeros when it did nothing: the null event). A private queue's
event is this QM's alone. Event messages go to the issuing QM's SYSTEM.ADMIN.PERFM.EVENT;
none is ever generated for that queue itself.
"""

from __future__ import annotations

import asyncio
import logging
from typing import TYPE_CHECKING, Any

import orjson

from app.activity.schema import Verb
from app.cf.keys import QueueLocation
from app.core import attributes
from app.core.errors import MQError
from app.core.mqmd import NO_ID
from app.core.objects import ObjectDef
from app.core.reasons import reason_name

if TYPE_CHECKING:
    from app.qmgr.ports import EventsHost

log = logging.getLogger(__name__)

EVENT_QUEUE = "SYSTEM.ADMIN.PERFM.EVENT"


class EventService:
    """Issues this QM's performance event messages and answers the coordinating QM's requests."""

    def __init__(self, qm: EventsHost) -> None:
        self.qm = qm
        self._pending: set[asyncio.Task[Any]] = set()

    def enabled(self) -> bool:
        """PERFMEV(ENABLED) on this queue manager (the coupling facility's ``perfmev_enabled``)."""
        return self.qm.attrs.get("PERFMEV") == "ENABLED"

    async def ensure_event_queue(self) -> None:
        """SYSTEM.ADMIN.PERFM.EVENT exists on every QM (one of its system objects)."""
        if any(d.qsgdisp in ("QMGR", "COPY") for d in self.qm.cache.usable("QUEUE", EVENT_QUEUE)):
            return
        attrs = {**attributes.defaults("QLOCAL"), "DESCR": "Performance events", "MAXDEPTH": 999999999}
        try:
            await self.qm.workflow.define_own(ObjectDef("QLOCAL", EVENT_QUEUE, "QMGR", self.qm.name, attrs))
        except MQError:
            pass  # defined meanwhile
        await self.qm.reload_definitions()

    def fired(self, loc: QueueLocation, reason: int) -> None:
        if loc.name == EVENT_QUEUE:
            return
        # Off the caller's path: the MQPUT/MQGET that fired the event returns at once.
        task = asyncio.get_running_loop().create_task(self._coordinate(loc, reason))
        self._pending.add(task)
        task.add_done_callback(self._pending.discard)

    async def _coordinate(self, loc: QueueLocation, reason: int) -> None:
        shared = ".CF." in loc.tag
        if not shared and not self.enabled():
            return  # a private queue's event is this QM's alone (its CF switch did not happen either)
        correl_id = self.qm.mqi.msg_ids.next() if shared else NO_ID
        try:
            # A coordinating QM with PERFMEV(DISABLED) issues no message of its own but still
            # broadcasts the request (docs/ibm-rules.md §2.3): the enabled others
            # issue theirs, so an event on a shared queue yields 1 to N messages, never none
            # while some active QM is enabled.
            if self.enabled():
                await self.issue(loc, reason, correl_id, coordinator=self.qm.name)
            if shared:
                await self.qm.broadcaster.publish({"kind": "perfm", "tag": loc.tag, "queue": loc.name,
                                                   "reason": reason, "correl_id": correl_id})
        except Exception:  # an event that cannot be issued must not disturb the application
            log.exception("%s: performance event %d for %s not issued", self.qm.name, reason, loc.name)

    async def answer(self, request: dict[str, Any]) -> None:
        """Another QM coordinates an event on a shared queue: issue this QM's event message."""
        if self.enabled():
            await self.issue(QueueLocation(request["tag"], request["queue"]), int(request["reason"]),
                             request["correl_id"], coordinator=str(request.get("origin") or ""))

    async def issue(self, loc: QueueLocation, reason: int, correl_id: str, *, coordinator: str = "") -> None:
        """Put this QM's event message: its statistics for the queue since its last event
        message or RESET QSTATS, which this resets. ``coordinator``: the QM whose put or get
        fired it (the console's group view shows it; the activity record's ``detail``)."""
        stats = await self.qm.cf.reset_stats(loc, self.qm.name)
        since = stats.reset_ms or self.qm.started_ms
        body = {"command": "PERFM_EVENT", "reason": reason, "reason_name": reason_name(reason),
                "parameters": {"QMgrName": self.qm.name, "QName": loc.name,
                               "TimeSinceReset": max(0, (self.qm.clock.now_ms() - since) // 1000),
                               "HighQDepth": stats.hiq, "MsgEnqCount": stats.enq, "MsgDeqCount": stats.deq}}
        md = {"format": "MQEVENT", "correl_id": correl_id, "expiry": -1, "persistence": "NOT_PERSISTENT"}
        await self.qm.mqi.put_system(EVENT_QUEUE, md, orjson.dumps(body))
        self.qm.activity.emit(Verb.EVENT, object=loc.name, rc=reason, correl_id=correl_id,
                              detail=orjson.dumps({"coordinator": coordinator}).decode() if coordinator else None)

    async def drain(self) -> None:
        """Wait for event messages being issued (tests, shutdown)."""
        while self._pending:
            await asyncio.gather(*list(self._pending), return_exceptions=True)
