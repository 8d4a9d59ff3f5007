"""Event-loop lag of a queue manager: how late a timer fires.

Everything a queue manager does runs on one event loop, its heartbeat included: a call that holds
the loop (a huge body parsed, a long script) delays every other call and, past the heartbeat
lease, takes the queue manager out of its group. A small task sleeps ``interval_s`` again and
again and measures how much later than asked it wakes: that is the lag, observed into the
``qsg_event_loop_lag_seconds`` histogram, kept as the maximum seen (``qsg_event_loop_lag_max_seconds``)
and logged as QSGE301W when it passes ``warn_s`` (docs/howto/security.md, Limits).
"""

from __future__ import annotations

import asyncio
import contextlib
import logging
import time
from collections.abc import Callable

from app.qmgr.tasks import stop_task

log = logging.getLogger(__name__)

#: How often the lag is sampled: often enough to see a stall of a tenth of a second, rarely
#: enough to cost nothing (one timer).
INTERVAL_S = 0.1
#: One QSGE301W at most this often (a loop that is slow for a minute logs a few lines, not hundreds).
WARN_EVERY_S = 10.0


class LoopLag:
    """Samples the lag of the running event loop; ``observe`` gets every sample (seconds)."""

    def __init__(self, qmgr: str, warn_s: float, observe: Callable[[float], None],
                 interval_s: float = INTERVAL_S) -> None:
        self.qmgr = qmgr
        self.warn_s = warn_s
        self.observe = observe
        self.interval_s = interval_s
        self.max_s = 0.0  # the largest lag seen since the queue manager started
        self.last_s = 0.0
        self.stalls = 0  # samples over warn_s
        self._last_warning = float("-inf")
        self._stopping = asyncio.Event()
        self._task: asyncio.Task[None] | None = None

    def start(self) -> None:
        if self._task is None:
            self._stopping = asyncio.Event()
            self._task = asyncio.create_task(self._sample(), name=f"loop-lag-{self.qmgr}")

    async def stop(self) -> None:
        await stop_task(self._task, self._stopping)
        self._task = None

    async def _sample(self) -> None:
        while not self._stopping.is_set():
            asked = time.monotonic()
            with contextlib.suppress(asyncio.TimeoutError):
                await asyncio.wait_for(self._stopping.wait(), timeout=self.interval_s)
            self.record(max(0.0, time.monotonic() - asked - self.interval_s))

    def record(self, lag_s: float) -> None:
        """One sample: into the metric, the maximum, and the log when it passes the bound."""
        self.last_s = lag_s
        self.max_s = max(self.max_s, lag_s)
        self.observe(lag_s)
        if lag_s > self.warn_s:
            self.stalls += 1
            now = time.monotonic()
            if now - self._last_warning >= WARN_EVERY_S:
                self._last_warning = now
                log.warning("QSGE301W %s: the event loop was held for %.3fs (bound %.3fs): calls and the "
                            "heartbeat waited meanwhile", self.qmgr, lag_s, self.warn_s)
