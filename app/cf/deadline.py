"""Deadlines of state-changing script calls (docs: DESIGN.md principle 7, lua/_fence.lua).

A script call whose reply does not come in time may still run later: Redis was stalled (SIGSTOP,
a long fork, a swapped-out host) and runs the command that sat in its socket buffer when it
resumes, after the queue manager gave up and answered. So every state-changing fenced script
carries a deadline on the coupling facility's clock and changes nothing when it runs after it
(it returns ``LATE``). The queue manager answers a call whose reply never came only once its
own reading of the CF's clock is past that deadline plus ``MARGIN_MS``: from then on, the
script either ran before (its reply was lost: the outcome is unknown, MQRC_CONNECTION_BROKEN) or
never will (a reply ``LATE`` says so for certain: MQRC_CF_NOT_AVAILABLE, nothing changed).

The CF's clock is read as the group clock reads it (app/cf/groupclock.py): the local wall clock
plus the offset measured against Redis ``TIME`` on the node of the group's records, within half
a round trip: a call without a reply also waits that (``CFBase.clock_error_ms``). On a Redis
Cluster each master keeps its own clock; the margin covers the skew between them (hosts kept in
step by NTP are milliseconds apart). A reading off the other way shows itself: a reply ``LATE``
that comes back at once makes the queue manager measure the clock again and send the call (it
changed nothing) once more (``CFBase._deadlined``).

No round trip is added: the deadline is one more argument of the one EVALSHA.
"""

from __future__ import annotations

import asyncio
import time
from collections.abc import Callable

#: A reading of the CF's clock in ms since the epoch.
NowMs = Callable[[], int]

#: How far the QM's reading of the CF's clock may be from the clock of the node that runs a
#: script (measurement error of the group clock plus skew between cluster masters), in ms.
MARGIN_MS = 250
#: A script's deadline is this long before the QM's socket timeout ends the wait for its reply
#: (twice the margin): a reply that times out finds the deadline already past, with no wait.
SLACK_MS = 2 * MARGIN_MS
#: The shortest budget a call gets, whatever the socket timeout.
MIN_BUDGET_MS = 100


def budget_ms(socket_timeout_s: float) -> int:
    """How long after it is sent a script may still run: the socket timeout less the slack."""
    return max(MIN_BUDGET_MS, int(socket_timeout_s * 1000) - SLACK_MS)


def wall_ms() -> int:
    """The local wall clock in ms (the CF's clock when nothing measured an offset)."""
    return time.time_ns() // 1_000_000


async def wait_past(deadline_ms: int, now_ms: NowMs) -> None:
    """Return once ``now_ms()`` (the CF's clock as this QM reads it) is past ``deadline_ms`` plus
    the margin: a script carrying that deadline can no longer act. Usually at once (a socket
    timeout is longer); after a connection reset, the rest of the budget."""
    for _ in range(1000):  # bounded: each round sleeps what remains (a clock stepped back: again)
        remaining = deadline_ms + MARGIN_MS - now_ms()
        if remaining < 0:
            return
        await asyncio.sleep(remaining / 1000 + 0.001)
