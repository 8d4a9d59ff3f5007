"""``ActivityLog``: what a queue manager uses to record activity (one per QM process).

MQI calls are recorded by the ``recorded`` decorator (``app.activity.hooks``) on each verb of
``app.qmgr.mqi.Mqi``; happenings (events, triggers, expiry, peer recovery, ...) by ``emit``.
Both end in ``ActivityWriter.submit``, which never blocks and does no I/O.
"""

from __future__ import annotations

import logging
from collections.abc import Callable
from pathlib import Path
from typing import TYPE_CHECKING, Any

from app.activity.schema import SCHEMA_VERSION, Verb
from app.activity.store import open_store, safe_segment
from app.activity.writer import ActivityWriter, Spool
from app.core.clock import Clock, SystemClock

if TYPE_CHECKING:
    from app.settings import Settings

log = logging.getLogger(__name__)


class ActivityLog:
    """Builds records of this QM and hands them to the writer (none: recording is off)."""

    def __init__(self, qsg: str, qmgr: str, clock: Clock | None = None,
                 writer: ActivityWriter | None = None) -> None:
        self.qsg = qsg
        self.qmgr = qmgr
        self.clock = clock or SystemClock()
        self.writer = writer
        #: Sees every record as it is submitted, with how many calls it stands for (the queue
        #: manager's metrics, app/qmgr/metrics.py).
        self.observer: Callable[[dict[str, Any], int], None] | None = None

    @property
    def enabled(self) -> bool:
        """Whether records are made: for the log (a writer) or for an observer (metrics)."""
        return self.writer is not None or self.observer is not None

    @classmethod
    def from_settings(cls, settings: Settings, clock: Clock | None = None) -> ActivityLog:
        """The log a ``qsg serve`` process uses: spool under ``activity_dir``, closed files to
        ``activity_store`` (the same folder when not set)."""
        if not settings.activity_enabled:
            return cls(settings.qsg, settings.qmgr, clock)
        clock = clock or SystemClock()
        segment = f"{safe_segment(settings.qsg)}.{safe_segment(settings.qmgr)}"
        spool_dir = Path(settings.activity_dir) / ".spool" / segment
        store = open_store(settings.activity_store or settings.activity_dir)
        spool = Spool(spool_dir, store, qsg=settings.qsg, qmgr=settings.qmgr,
                      rotate_s=settings.activity_rotate_s,
                      rotate_bytes=int(settings.activity_rotate_mb * 1024 * 1024))
        writer = ActivityWriter(spool, max_records=settings.activity_buffer,
                                overflow=settings.activity_overflow, now_ms=clock.now_ms)
        return cls(settings.qsg, settings.qmgr, clock, writer)

    # -- life cycle --

    async def start(self) -> None:
        if self.writer is not None:
            await self.writer.start()

    async def stop(self) -> None:
        """Write and ship everything (clean shutdown)."""
        if self.writer is not None:
            await self.writer.stop()

    # -- records --

    def new_record(self, verb: str) -> dict[str, Any]:
        """The fields every record has; the caller adds the rest, then ``submit``s it."""
        return {"v": SCHEMA_VERSION, "ts": 0, "qsg": self.qsg, "qmgr": self.qmgr, "verb": verb}

    def submit(self, record: dict[str, Any]) -> None:
        if self.observer is not None:
            self.observer(record, 1)
        if self.writer is not None:
            self.writer.submit(record)

    def submit_batch(self, records: list[dict[str, Any]]) -> None:
        """The records of one batch call (a record per message). The observer sees each run of
        records with the same verb and reason once, with its length: a batch's messages share
        their latency, so counting them one by one would only cost the batch its speed."""
        if self.observer is not None:
            n, i = len(records), 0
            while i < n:
                first = records[i]
                j = i + 1
                while j < n and records[j]["rc"] == first["rc"] and records[j]["verb"] == first["verb"]:
                    j += 1
                self.observer(first, j - i)
                i = j
        if self.writer is not None:
            for record in records:
                self.writer.submit(record)

    @property
    def full(self) -> bool:
        return self.writer is not None and self.writer.full

    async def room(self) -> None:
        """Wait while the buffer is full (policy ``wait``)."""
        if self.writer is not None:
            await self.writer.room()

    def emit(self, verb: Verb | str, **fields: Any) -> None:
        """Record a happening now, e.g. ``emit(Verb.EXPIRY, object="APP.Q", qsgdisp="SHARED",
        count=3)`` or ``emit(Verb.EVENT, object="APP.Q", rc=2224)``. Fields that are None are
        left out. Never waits: happenings are not calls that could be slowed down."""
        if not self.enabled:
            return
        record = self.new_record(str(verb))
        record.update({k: v for k, v in fields.items() if v is not None})
        record.setdefault("cc", 0)
        record.setdefault("rc", 0)
        record["ts"] = fields.get("ts") or self.clock.now_ms()
        self.submit(record)
