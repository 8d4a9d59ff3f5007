"""The group clock: the time of the coupling facility, as every queue manager of the group reads it.

Queue managers on several hosts must not depend on the hosts' clocks agreeing: a message's
expiry, its put date and time, service and trigger intervals, the recovery log's stamps and the
backup times RECOVER CFSTRUCT compares are all compared across queue managers. So each queue
manager measures how far its own wall clock is from the Redis ``TIME`` of the node that holds
the group's records (``{QSG}`` keys; on a single Redis, that Redis), at the midpoint of the round
trip, before it serves and again on every heartbeat, and tells the time as its wall clock plus
that offset. The error of one measurement is at most half its round trip.

``now_ms`` never goes backwards: a smaller offset (or the local clock being stepped back) holds
the group clock still until it catches up. A failed measurement keeps the last offset.
"""

from __future__ import annotations

import logging
import time
from collections.abc import Awaitable, Callable

log = logging.getLogger(__name__)

#: An offset larger than this is worth a warning: the host's clock is not kept in step.
WARN_OFFSET_MS = 1000
#: A later measurement whose round trip took longer is not used (its error could be half of it).
MAX_ROUND_TRIP_NS = 1_000_000_000


class GroupClock:
    """A ``Clock`` (app.core.clock) on the coupling facility's time.

    ``server_time_us``: the CF's time now, in microseconds since the epoch (Redis ``TIME``).
    ``wall_ns``: the local wall clock (``time.time_ns``; tests may give another).
    """

    def __init__(self, server_time_us: Callable[[], Awaitable[int]], *, name: str = "",
                 wall_ns: Callable[[], int] = time.time_ns) -> None:
        self._server_time_us = server_time_us
        self._wall_ns = wall_ns
        self.name = name
        self.offset_ns = 0
        self.round_trip_ns = 0
        self.synced = False
        self._last_ms = 0
        self._warned = False

    @property
    def offset_ms(self) -> int:
        """Group time minus local wall time, in milliseconds (as last measured)."""
        return round(self.offset_ns / 1_000_000)

    def now_ms(self) -> int:
        """Milliseconds since the epoch on the group clock, never less than a time returned before."""
        now = (self._wall_ns() + self.offset_ns) // 1_000_000
        if not self.synced:
            return now  # not measured yet: nothing to hold on to (the first offset may be large)
        if now < self._last_ms:
            return self._last_ms
        self._last_ms = now
        return now

    def cf_now_ms(self) -> int:
        """The coupling facility's time now as last measured (wall clock plus offset), without
        ``now_ms``'s hold: what script deadlines are set and checked on (app/cf/deadline.py)."""
        return (self._wall_ns() + self.offset_ns) // 1_000_000

    def error_ms(self) -> int:
        """How far ``cf_now_ms`` may be from the CF's clock: half the last measurement's round trip."""
        return self.round_trip_ns // 2_000_000

    async def _measure(self) -> tuple[int, int]:
        """(offset, round trip) in nanoseconds, the offset taken at the round trip's midpoint."""
        sent = self._wall_ns()
        server_us = await self._server_time_us()
        back = self._wall_ns()
        return server_us * 1000 - (sent + back) // 2, back - sent

    async def sync(self) -> int:
        """Measure the offset now (raises what the CF call raises); returns it in milliseconds.
        The first measurement is taken whatever its round trip; a later one only when the
        round trip was short enough to trust it."""
        offset, round_trip = await self._measure()
        if self.synced and round_trip > MAX_ROUND_TRIP_NS:
            log.info("%s: group clock not adjusted: the round trip to the coupling facility took %d ms",
                     self.name, round_trip // 1_000_000)
            return self.offset_ms
        first = not self.synced
        self.offset_ns, self.round_trip_ns, self.synced = offset, round_trip, True
        if first:
            log.info("%s: group clock is the coupling facility's: offset %d ms from the local clock "
                     "(round trip %.1f ms)", self.name, self.offset_ms, round_trip / 1e6)
        self._warn_if_far()
        return self.offset_ms

    async def refresh(self) -> bool:
        """Measure again (each heartbeat); on failure keep the last offset. True when measured."""
        try:
            await self.sync()
        except Exception as exc:  # noqa: BLE001 - any CF failure: the last offset stays in use
            log.debug("%s: group clock not refreshed (%s); keeping offset %d ms", self.name, exc, self.offset_ms)
            return False
        return True

    def _warn_if_far(self) -> None:
        far = abs(self.offset_ms) > WARN_OFFSET_MS
        if far and not self._warned:
            log.warning("%s: local clock differs from the group clock by %d ms; the group clock (the coupling "
                        "facility's) is used for expiry, put times, intervals and recovery", self.name,
                        self.offset_ms)
        elif not far and self._warned:
            log.info("%s: local clock is within %d ms of the group clock again", self.name, WARN_OFFSET_MS)
        self._warned = far
