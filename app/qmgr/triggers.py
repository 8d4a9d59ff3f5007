"""Triggering on one queue manager (docs/ibm-rules.md §3).

* Counts come from the coupling facility, atomically with the put or commit that changed them
  (messages of priority >= TRIGMPRI; committed ones on shared queues, committed and uncommitted
  ones on private queues). A private queue's owner evaluates from the MQPUT's reply; for a shared
  queue the counts are published and every QM evaluates for itself with its own trigger monitor,
  open counts and TRIGINT.
* A trigger caused by a put under syncpoint on a private queue is held with the connection and
  put when the unit of work ends: committed, or backed out for FIRST and DEPTH.
* Re-triggering (conditions 12 and 13): the last server closing the queue, MQSET/ALTER of the
  trigger attributes, the initiation queue's PUT or the application queue's GET becoming
  allowed, a trigger monitor opening the initiation queue.
"""

from __future__ import annotations

import logging
from typing import TYPE_CHECKING, Any

import orjson

from app.activity.schema import Verb
from app.cf.errors import MQ_OR_CF_FAILURES
from app.core.errors import MQError
from app.core.objects import ObjectDef
from app.core.triggers import (
    TriggerSnapshot,
    enough_waiting,
    failed_condition,
    mqtm,
    trigger_messages_for,
    trigint_elapsed,
    type_in_effect,
)
from app.qmgr.definitions import queue_location

if TYPE_CHECKING:
    from app.qmgr.connection import Connection
    from app.qmgr.ports import TriggersHost

log = logging.getLogger(__name__)
TRIGGER_MD = {"format": "MQTRIG", "expiry": -1, "persistence": "NOT_PERSISTENT"}


class TriggerService:
    """Trigger evaluation and trigger messages of one queue manager."""

    def __init__(self, qm: TriggersHost) -> None:
        self.qm = qm
        # queue -> time (group clock, ms) of the last trigger message written for it (TRIGINT,
        # condition 11); a queue absent here had none yet. Kept in memory: restarting the queue
        # manager resets the interval (docs/ibm-rules.md §3.5).
        self._last_written: dict[str, int] = {}

    async def start(self) -> None:
        """Receive the shared queues' trigger counts: the coupling facility subscribes the
        trigger channel of every structure the queue manager follows (``cf.follow``)."""
        self.qm.cf.on_trigger_counts(self._counts_published, self._resubscribed)

    async def stop(self) -> None:
        """Nothing to stop: the subscriptions are the coupling facility's (``cf.stop``)."""

    # ---- evaluation -----------------------------------------------------------------------

    async def snapshot(self, queue: ObjectDef) -> TriggerSnapshot:
        status = await self.qm.cf.queue_status(queue_location(self.qm.cache, queue))
        mine = status.opens.get(self.qm.name, {})
        others = sum(int(c.get("ipprocs", 0)) for q, c in status.opens.items() if q != self.qm.name)
        exclusive = any(int(c.get("excl", 0)) for c in status.opens.values())
        process_name = str(queue.attrs.get("PROCESS", "")).strip()
        process = self.qm.cache.process(process_name) if process_name else None
        initq_name = str(queue.attrs.get("INITQ", "")).strip()
        initq, initq_open = None, False
        if initq_name:
            found = self.qm.cache.queue(initq_name)
            if found is not None and found.objtype == "QLOCAL":
                initq = found.attrs
                istatus = await self.qm.cf.queue_status(queue_location(self.qm.cache, found))
                initq_open = int(istatus.opens.get(self.qm.name, {}).get("ipprocs", 0)) > 0
        return TriggerSnapshot(queue.name, queue.attrs, queue.qsgdisp == "SHARED", int(mine.get("ipprocs", 0)),
                               others, exclusive, process.attrs if process else None, initq, initq_open)

    async def counts_changed(self, queue: ObjectDef, before: int, after: int, added: int = 1,
                             conn: Connection | None = None, syncpoint: bool = False) -> None:
        """The count of messages that count went from ``before`` to ``after`` as ``added``
        messages arrived (conditions 3 and 11)."""
        s = await self.snapshot(queue)
        trigtype, trigmpri = type_in_effect(s)
        if trigmpri != int(queue.attrs.get("TRIGMPRI", 0)):
            # evaluating as priority 0 (condition 4 note a): every arrival counts
            now = await self.qm.cf.trigger_count(queue_location(self.qm.cache, queue), trigmpri)
            before, after = now - added, now
        if failed_condition(s, trigtype) is not None:
            return
        elapsed = trigint_elapsed(self._last_written.get(queue.name), self.qm.clock.now_ms(),
                                  int(self.qm.attrs.get("TRIGINT", 999999999)))
        n = trigger_messages_for(trigtype, before, after, int(queue.attrs.get("TRIGDPTH", 1)), trigint_elapsed=elapsed)
        for _ in range(n):
            await self._trigger(queue, s, trigtype, conn if syncpoint else None)

    async def retrigger(self, queue: ObjectDef, *, skip: frozenset[int] = frozenset(),
                        types: tuple[str, ...] = ("FIRST", "EVERY", "DEPTH")) -> bool:
        """Conditions 12/13: one trigger message when enough messages already wait."""
        if queue.objtype != "QLOCAL" or not queue.attrs.get("TRIGGER"):
            return False
        s = await self.snapshot(queue)
        trigtype, trigmpri = type_in_effect(s)
        if trigtype not in types or failed_condition(s, trigtype, skip) is not None:
            return False
        count = await self.qm.cf.trigger_count(queue_location(self.qm.cache, queue), trigmpri)
        if not enough_waiting(trigtype, count, int(queue.attrs.get("TRIGDPTH", 1))):
            return False
        await self._trigger(queue, s, trigtype, None)
        return True

    async def _trigger(self, queue: ObjectDef, s: TriggerSnapshot, trigtype: str, conn: Connection | None) -> None:
        message = mqtm(queue.name, queue.attrs, str(queue.attrs.get("PROCESS", "")).strip(), s.process)
        initq = str(queue.attrs["INITQ"]).strip()
        self._last_written[queue.name] = self.qm.clock.now_ms()
        if conn is not None:
            conn.pending_triggers.append((initq, message, trigtype))  # until the unit of work ends
        else:
            await self.put_trigger_message(initq, message)
        if trigtype == "DEPTH":
            # After a DEPTH trigger the queue manager sets the queue's TriggerControl off.
            await self.qm.workflow.apply_mqset(queue, [("NOTRIGGER", None)], retrigger=False)

    async def put_trigger_message(self, initq: str, message: dict[str, Any]) -> None:
        """Trigger messages are put outside any unit of work, with unlimited expiry. One the
        initiation queue cannot take goes to the dead-letter queue, as IBM MQ puts it there;
        only when that fails too is it discarded (trigger messages are non-persistent, and the
        re-trigger conditions make a new one when the initiation queue is usable again)."""
        body = orjson.dumps(message)
        try:
            await self.qm.mqi.put_system(initq, dict(TRIGGER_MD), body)
            self.qm.activity.emit(Verb.TRIGGER, object=message["QName"], detail=initq)
            return
        except MQError as exc:
            failure = exc
        try:
            await self.qm.expiry.dead_letter(dict(TRIGGER_MD), body, failure.reason, initq, self.qm.name)
            log.warning("%s: trigger message for %s could not be put on %s (%s): dead-lettered",
                        self.qm.name, message["QName"], initq, failure)
        except MQError as exc:
            log.warning("%s: trigger message for %s discarded: not put on %s (%s) nor on the dead-letter "
                        "queue (%s)", self.qm.name, message["QName"], initq, failure, exc)

    async def unit_of_work_ended(self, conn: Connection, committed: bool) -> None:
        """Release held trigger messages: all on commit, FIRST and DEPTH ones on backout."""
        held, conn.pending_triggers = conn.pending_triggers, []
        for initq, message, trigtype in held:
            if committed or trigtype in ("FIRST", "DEPTH"):
                await self.put_trigger_message(initq, message)

    # ---- re-trigger cases --------------------------------------------------------------------

    async def initq_opened(self, initq: ObjectDef) -> None:
        """13: a trigger monitor opened an initiation queue for input (no one else had it open):
        one trigger message per application queue naming it with enough messages waiting."""
        for q in self.qm.cache.all("QUEUE"):
            if q.objtype == "QLOCAL" and q.location != "@GROUP" and str(q.attrs.get("INITQ", "")).strip() == initq.name:
                await self.retrigger(q, skip=frozenset({8}))

    async def definition_changed(self, old: ObjectDef, new: ObjectDef) -> None:
        """13: MQSET or a command changed trigger attributes, an initiation queue's PUT or an
        application queue's GET became allowed."""
        a, b = old.attrs, new.attrs
        if new.objtype != "QLOCAL" or new.location == "@GROUP":
            return
        # TriggerDepth is relevant to a DEPTH queue only (condition 13: "TriggerDepth (if
        # relevant)"): changing it on a FIRST or EVERY queue re-triggers nothing.
        changed = {k for k in ("TRIGTYPE", "TRIGMPRI", "TRIGDPTH") if a.get(k) != b.get(k)}
        if b.get("TRIGTYPE", "FIRST") != "DEPTH":
            changed.discard("TRIGDPTH")
        trigger_on = b.get("TRIGGER") and (not a.get("TRIGGER") or changed)
        if trigger_on:
            await self.retrigger(new, skip=frozenset({8}))
        if a.get("GET") == "DISABLED" and b.get("GET") == "ENABLED":
            await self.retrigger(new, skip=frozenset({5}))
        if a.get("PUT") == "DISABLED" and b.get("PUT") == "ENABLED":
            for q in self.qm.cache.all("QUEUE"):
                initq = str(q.attrs.get("INITQ", "")).strip()
                if q.objtype == "QLOCAL" and q.location != "@GROUP" and initq == new.name:
                    await self.retrigger(q)

    # ---- shared queues: every QM evaluates -------------------------------------------------

    async def _counts_published(self, tag: str, data: bytes) -> None:
        queue, before, after, added = data.decode().rsplit("|", 3)
        await self._shared_counts(tag, queue, int(before), int(after), int(added))

    async def _resubscribed(self, tag: str, count: int) -> None:
        """A structure's trigger channel was subscribed again after its node failed or its slot
        moved: counts published meanwhile were lost, so each triggered shared queue of the
        structure is re-evaluated as conditions 12/13 do (one trigger message when enough
        messages wait). That may give one trigger message more than IBM would, never one less."""
        if count <= 1:
            return  # the first subscription: nothing was missed that the puts did not see
        for q in self.qm.cache.all("QUEUE"):
            if (q.objtype != "QLOCAL" or q.qsgdisp != "SHARED" or not q.attrs.get("TRIGGER")
                    or queue_location(self.qm.cache, q).tag != tag):
                continue
            try:
                await self.retrigger(q)
            except MQ_OR_CF_FAILURES as exc:
                log.warning("%s: re-evaluating the trigger of %s failed: %s", self.qm.name, q.name, exc)

    async def _shared_counts(self, tag: str, queue: str, before: int, after: int, added: int) -> None:
        found = [d for d in self.qm.cache.usable("QUEUE", queue) if d.qsgdisp == "SHARED"]
        if not found or queue_location(self.qm.cache, found[0]).tag != tag:
            return
        try:
            await self.counts_changed(found[0], before, after, added)
        except MQ_OR_CF_FAILURES as exc:
            log.warning("%s: trigger evaluation of %s failed: %s", self.qm.name, queue, exc)
