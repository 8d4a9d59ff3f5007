"""Message rates for the console's charts, from counters the coupling facility already keeps.

Every MQPUT and MQGET updates, in the same script call, its queue manager's MsgEnqCount and
MsgDeqCount of the queue (DISPLAY QSTATUS, RESET QSTATS, the performance event statistics).
The console reads those per-QM counters once a second, with the depths it reads anyway, and
the difference between two readings over the time between them is the put and get rate per
queue and per queue manager of the whole group. Nothing is added to the put or get path.

A counter goes back to zero when it is reset (RESET QSTATS, or the QM issuing a performance
event message for the queue); its ``reset_ms`` then changes, and what it counts since the
reset is the change. Plain Python (no Redis here): ``RateHistory.add`` is given the readings.
"""

from __future__ import annotations

from collections import deque
from dataclasses import dataclass, field
from typing import Any

#: How many points the history keeps (one a second while a console watches: five minutes).
HISTORY_POINTS = 300
#: Readings closer together than this share one point (several consoles watching one QM).
MIN_INTERVAL_MS = 800


@dataclass(frozen=True)
class Counters:
    """One QM's counters of one queue: MsgEnqCount, MsgDeqCount and when they were last reset."""

    enq: int
    deq: int
    reset_ms: int = 0


@dataclass(frozen=True)
class QueueReading:
    """One queue as read now: its CURDEPTH and each QM's counters."""

    name: str
    depth: int
    counters: dict[str, Counters] = field(default_factory=dict)


def _delta(now: int, before: int, reset: bool) -> int:
    """How much a counter went up; after a reset (or a counter that went back), what it has
    counted since (the counts between the last reading and the reset are not known)."""
    return now if reset or now < before else now - before


class RateHistory:
    """The console's series of one queue manager: points of per-queue and per-QM put and get
    rates (messages a second) and per-queue depths, oldest first."""

    def __init__(self, points: int = HISTORY_POINTS, min_interval_ms: int = MIN_INTERVAL_MS) -> None:
        self.points: deque[dict[str, Any]] = deque(maxlen=points)
        self.min_interval_ms = min_interval_ms
        self._last_ms: int | None = None
        self._last: dict[str, dict[str, Counters]] = {}

    def due(self, now_ms: int) -> bool:
        """True when a new reading makes a new point (else the latest point stands)."""
        return self._last_ms is None or now_ms - self._last_ms >= self.min_interval_ms

    def add(self, now_ms: int, readings: list[QueueReading]) -> dict[str, Any] | None:
        """A new reading of every queue; returns the point it makes (None for the first reading,
        which has nothing to be compared with)."""
        elapsed_ms = None if self._last_ms is None else now_ms - self._last_ms
        previous, self._last_ms = self._last, now_ms
        self._last = {r.name: dict(r.counters) for r in readings}
        if elapsed_ms is None or elapsed_ms <= 0:
            return None
        seconds = elapsed_ms / 1000
        queues: dict[str, Any] = {}
        qmgrs: dict[str, dict[str, float]] = {}
        for reading in readings:
            # a queue not read before (just defined, or the console just started): its counts
            # so far are the baseline; a QM new to a known queue has counted from zero
            before = previous.get(reading.name)
            by_qm: dict[str, list[float]] = {}
            for qmgr, now in reading.counters.items():
                old = now if before is None else before.get(qmgr, Counters(0, 0, now.reset_ms))
                reset = now.reset_ms != old.reset_ms
                puts = _delta(now.enq, old.enq, reset) / seconds
                gets = _delta(now.deq, old.deq, reset) / seconds
                by_qm[qmgr] = [round(puts, 2), round(gets, 2)]
                total = qmgrs.setdefault(qmgr, {"put": 0.0, "get": 0.0})
                total["put"] = round(total["put"] + puts, 2)
                total["get"] = round(total["get"] + gets, 2)
            queues[reading.name] = {"depth": reading.depth,
                                    "put": round(sum(v[0] for v in by_qm.values()), 2),
                                    "get": round(sum(v[1] for v in by_qm.values()), 2),
                                    "by_qm": by_qm}
        point = {"t": now_ms, "ms": elapsed_ms, "queues": queues, "qmgrs": qmgrs}  # ms: the time it covers
        self.points.append(point)
        return point

    def latest(self) -> dict[str, Any] | None:
        return self.points[-1] if self.points else None

    def history(self) -> list[dict[str, Any]]:
        return list(self.points)
