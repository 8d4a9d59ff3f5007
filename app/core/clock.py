"""The group's one clock (docs/design.md principle 5): the protocol; a running queue manager
uses the group clock of app/cf/groupclock.py (the coupling facility's time).

Every piece of code that needs the time asks a ``Clock``; scripts get the time as an argument.
Tests inject a ``ManualClock`` to step through intervals without sleeping.
"""

from __future__ import annotations

import time
from typing import Protocol


class Clock(Protocol):
    """Milliseconds since the epoch, UTC."""

    def now_ms(self) -> int: ...


class SystemClock:
    """Wall-clock time."""

    def now_ms(self) -> int:
        return time.time_ns() // 1_000_000


class ManualClock:
    """A clock that only moves when told to (tests)."""

    def __init__(self, start_ms: int = 1_700_000_000_000) -> None:
        self._now = start_ms

    def now_ms(self) -> int:
        return self._now

    def advance(self, ms: int) -> None:
        self._now += ms
