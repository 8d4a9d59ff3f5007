"""Wake-ups of waiting getters: one availability subscription per process."""

from __future__ import annotations

import asyncio
import logging
from collections import Counter

from redis.asyncio import Redis

from app.cf.pubsub import Backoff, Subscriber

log = logging.getLogger(__name__)


class AvailabilityListener:
    """One pattern subscription per process that wakes local waiting getters.

    Waiters register an ``asyncio.Event`` for their queue's channel BEFORE trying their get, so
    a publish that lands between the failed try and the wait still sets the event. The
    subscription reconnects by itself (short backoff) after a Redis failure and then wakes every
    waiter, since publishes during the outage were lost.
    """

    def __init__(self, redis: Redis, pattern: str, *, poll_s: float = 1.0,
                 backoff_min_s: float = 0.05, backoff_max_s: float = 1.0) -> None:
        self._subscriber = Subscriber(redis, pattern, pattern=True, on_message=self._published,
                                      on_subscribed=self._resubscribed, name=f"availability {pattern}",
                                      poll_s=poll_s, backoff=Backoff(backoff_min_s, backoff_max_s))
        self._waiters: dict[str, set[asyncio.Event]] = {}
        self._parked: dict[str, int] = {}
        self._park_changed = asyncio.Event()
        #: Availability publishes received, per channel (observability and tests).
        self.received: Counter[str] = Counter()

    # -- waiter registry (called by the engine) --

    def watch(self, channel: str) -> asyncio.Event:
        """A new event set whenever ``channel`` is published (or all waiters are woken)."""
        event = asyncio.Event()
        self._waiters.setdefault(channel, set()).add(event)
        return event

    def unwatch(self, channel: str, event: asyncio.Event) -> None:
        events = self._waiters.get(channel)
        if events is not None:
            events.discard(event)
            if not events:
                del self._waiters[channel]

    def wake(self, channel: str) -> None:
        for event in self._waiters.get(channel, ()):
            event.set()

    def wake_all(self) -> None:
        for events in self._waiters.values():
            for event in events:
                event.set()

    def note_parked(self, channel: str, delta: int) -> None:
        """Book-keeping of getters blocked on ``channel`` (observability and tests)."""
        n = self._parked.get(channel, 0) + delta
        if n > 0:
            self._parked[channel] = n
        else:
            self._parked.pop(channel, None)
        changed, self._park_changed = self._park_changed, asyncio.Event()
        changed.set()

    def parked(self, channel: str) -> int:
        """Number of getters currently waiting on ``channel`` (after a failed try)."""
        return self._parked.get(channel, 0)

    async def wait_parked(self, channel: str, n: int = 1) -> None:
        """Return once at least ``n`` getters wait on ``channel``."""
        while self.parked(channel) < n:
            await self._park_changed.wait()

    # -- subscription --

    async def _published(self, channel: str, _data: bytes) -> None:
        self.received[channel] += 1
        self.wake(channel)

    async def _resubscribed(self, _count: int) -> None:
        # Anything published while we were not subscribed is lost: every waiter retries.
        self.wake_all()

    @property
    def subscriptions(self) -> int:
        """Number of times the subscription was (re)established."""
        return self._subscriber.subscriptions

    @property
    def subscribed(self) -> bool:
        return self._subscriber.subscribed

    async def wait_subscribed(self, *, after: int = 0) -> None:
        """Return once the subscription has been established more than ``after`` times."""
        await self._subscriber.wait_subscribed(after=after)

    async def start(self, *, ready_timeout_s: float = 2.0) -> bool:
        """Start the listener task; True when the subscription is up within the timeout (the
        task keeps trying in the background otherwise)."""
        return await self._subscriber.start(ready_timeout_s=ready_timeout_s)

    async def stop(self) -> None:
        await self._subscriber.stop()
        self.wake_all()
